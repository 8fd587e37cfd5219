/* A hash map from a 128-bit key (two uint64) to a pointer, with deletion: the private index that
 * the metrics use to match packets across runs. Chained, grows at load factor 1. */
#ifndef QREPLAY_MAP_H
#define QREPLAY_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct qri_map_node {
    struct qri_map_node *next;
    uint64_t k1, k2;
    void *value;
} qri_map_node;

typedef struct qri_map {
    qri_map_node **buckets;
    size_t n_buckets; /* a power of two */
    size_t count;
} qri_map;

int qri_map_init(qri_map *m);
/* Frees the nodes; values are the caller's (free them first with qri_map_foreach if needed). */
void qri_map_free(qri_map *m);
void *qri_map_get(const qri_map *m, uint64_t k1, uint64_t k2);
/* Where a key's value is kept (to change it in place), or NULL if the key is absent; valid until
 * the next put or remove. */
void **qri_map_slot(const qri_map *m, uint64_t k1, uint64_t k2);
/* Insert a new key (the caller checked it is absent). Returns 0 or QR_ENOMEM. */
int qri_map_put(qri_map *m, uint64_t k1, uint64_t k2, void *value);
/* Remove a key; returns its value or NULL. */
void *qri_map_remove(qri_map *m, uint64_t k1, uint64_t k2);
void qri_map_foreach(const qri_map *m, void (*fn)(uint64_t k1, uint64_t k2, void *value, void *ctx),
                     void *ctx);

/* Two independent 64-bit hashes of a 36-byte key (two 16-byte addresses and two ports): the
 * 128-bit map key of a connection or direction. Word-wise, for the per-packet lookups of the
 * capture import. */
static inline uint64_t qri_mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

/* A 16-byte address as a map's two keys (its first and last 8 bytes, big-endian). */
static inline uint64_t qri_addr_hi(const uint8_t a[16])
{
    uint64_t k = 0;
    for (int i = 0; i < 8; i++)
        k = k << 8 | a[i];
    return k;
}

static inline uint64_t qri_addr_lo(const uint8_t a[16])
{
    uint64_t k = 0;
    for (int i = 8; i < 16; i++)
        k = k << 8 | a[i];
    return k;
}

static inline void qri_hash36(const uint8_t key[36], uint64_t *k1, uint64_t *k2)
{
    uint64_t w[4];
    uint32_t tail;
    memcpy(w, key, 32);
    memcpy(&tail, key + 32, 4);
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full;
    for (int i = 0; i < 4; i++) {
        a = qri_mix64(a ^ w[i]);
        b = qri_mix64(b + w[i] * 0x165667b19e3779f9ull);
    }
    *k1 = qri_mix64(a ^ tail);
    *k2 = qri_mix64(b ^ ((uint64_t)tail << 29));
}

#endif
