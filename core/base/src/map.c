#include <stdlib.h>

#include "map.h"
#include "qreplay/error.h"

static uint64_t mix(uint64_t k1, uint64_t k2)
{
    uint64_t h = k1 * 0x9e3779b97f4a7c15ULL ^ (k2 + 0x632be59bd9b4e019ULL);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    return h;
}

int qri_map_init(qri_map *m)
{
    m->n_buckets = 64;
    m->count = 0;
    m->buckets = calloc(m->n_buckets, sizeof *m->buckets);
    return m->buckets ? QR_OK : QR_ENOMEM;
}

void qri_map_free(qri_map *m)
{
    if (!m->buckets)
        return;
    for (size_t i = 0; i < m->n_buckets; i++) {
        qri_map_node *n = m->buckets[i];
        while (n) {
            qri_map_node *next = n->next;
            free(n);
            n = next;
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->count = 0;
}

void **qri_map_slot(const qri_map *m, uint64_t k1, uint64_t k2)
{
    for (qri_map_node *n = m->buckets[mix(k1, k2) & (m->n_buckets - 1)]; n; n = n->next)
        if (n->k1 == k1 && n->k2 == k2)
            return &n->value;
    return NULL;
}

void *qri_map_get(const qri_map *m, uint64_t k1, uint64_t k2)
{
    void **v = qri_map_slot(m, k1, k2);
    return v ? *v : NULL;
}

static int grow(qri_map *m)
{
    size_t nb = m->n_buckets * 2;
    qri_map_node **b = calloc(nb, sizeof *b);
    if (!b)
        return QR_ENOMEM;
    for (size_t i = 0; i < m->n_buckets; i++) {
        qri_map_node *n = m->buckets[i];
        while (n) {
            qri_map_node *next = n->next;
            size_t j = mix(n->k1, n->k2) & (nb - 1);
            n->next = b[j];
            b[j] = n;
            n = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->n_buckets = nb;
    return QR_OK;
}

int qri_map_put(qri_map *m, uint64_t k1, uint64_t k2, void *value)
{
    if (m->count >= m->n_buckets && grow(m))
        return QR_ENOMEM;
    qri_map_node *n = malloc(sizeof *n);
    if (!n)
        return QR_ENOMEM;
    size_t i = mix(k1, k2) & (m->n_buckets - 1);
    n->k1 = k1;
    n->k2 = k2;
    n->value = value;
    n->next = m->buckets[i];
    m->buckets[i] = n;
    m->count++;
    return QR_OK;
}

void *qri_map_remove(qri_map *m, uint64_t k1, uint64_t k2)
{
    qri_map_node **pp = &m->buckets[mix(k1, k2) & (m->n_buckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        qri_map_node *n = *pp;
        if (n->k1 == k1 && n->k2 == k2) {
            void *v = n->value;
            *pp = n->next;
            free(n);
            m->count--;
            return v;
        }
    }
    return NULL;
}

void qri_map_foreach(const qri_map *m, void (*fn)(uint64_t, uint64_t, void *, void *), void *ctx)
{
    for (size_t i = 0; i < m->n_buckets; i++)
        for (qri_map_node *n = m->buckets[i]; n; n = n->next)
            fn(n->k1, n->k2, n->value, ctx);
}
