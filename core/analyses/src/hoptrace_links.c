/* qreplay: the latency profiler's links (hoptrace_links.h). Everflow measures a link from the
 * timestamps of a packet's mirrored copies at the switches on either end; the least of them over
 * many packets is the link's own delay and the near switch's serialization, free of queueing, so
 * a link slowed by a fault stands out from the others. */
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/stats.h"

#include "hoptrace_links.h"
#include "internal.h"

typedef struct lat {
    int64_t *v;
    size_t n, cap;
} lat;

struct qri_link_lat {
    const qr_topology *t;
    lat *links; /* per directed link */
    uint32_t n_links;
};

int qri_link_lat_create(qri_link_lat **out, const qr_topology *t)
{
    qri_link_lat *l = calloc(1, sizeof *l);
    if (!l)
        return QR_ENOMEM;
    l->t = t;
    l->n_links = qr_topology_links(t);
    l->links = calloc(l->n_links ? l->n_links : 1, sizeof *l->links);
    if (!l->links) {
        free(l);
        return QR_ENOMEM;
    }
    *out = l;
    return QR_OK;
}

void qri_link_lat_destroy(qri_link_lat *l)
{
    if (!l)
        return;
    for (uint32_t i = 0; i < l->n_links; i++)
        free(l->links[i].v);
    free(l->links);
    free(l);
}

int qri_link_lat_add(qri_link_lat *l, uint32_t sw, uint32_t port, uint32_t next, int64_t t0,
                     int64_t t1)
{
    qr_node_kind kind;
    uint32_t peer, peer_port;
    if (qr_topology_link(l->t, sw, port, &kind, &peer, &peer_port) != QR_OK ||
        kind == QR_NODE_HOST || peer != next || t1 < t0)
        return QR_OK;
    lat *x = &l->links[qr_topology_port_link(l->t, sw, port)];
    if (qri_grow((void **)&x->v, &x->cap, x->n, sizeof *x->v, 64))
        return QR_ENOMEM;
    x->v[x->n++] = t1 - t0;
    return QR_OK;
}

static int cmp_slowest(const void *a, const void *b)
{
    const qr_row_hop_link *x = a, *y = b;
    if (x->min_ns != y->min_ns)
        return x->min_ns > y->min_ns ? -1 : 1;
    return x->link < y->link ? -1 : x->link > y->link;
}

int qri_link_lat_rows(qri_link_lat *l, double ratio, qr_row_hop_link **rows, size_t *n,
                      int64_t *median_ns)
{
    *rows = calloc(l->n_links ? l->n_links : 1, sizeof **rows);
    int64_t *mins = malloc((l->n_links ? l->n_links : 1) * sizeof *mins);
    *n = 0;
    *median_ns = -1;
    if (!*rows || !mins) {
        free(*rows);
        free(mins);
        *rows = NULL;
        return QR_ENOMEM;
    }
    for (uint32_t i = 0; i < l->n_links; i++) {
        lat *x = &l->links[i];
        if (!x->n)
            continue;
        qsort(x->v, x->n, sizeof *x->v, qri_cmp_i64);
        qr_row_hop_link *r = &(*rows)[(*n)++];
        r->link = i;
        qr_topology_link_name(l->t, i, r->name, sizeof r->name);
        r->packets = x->n;
        r->min_ns = x->v[0];
        r->p50_ns = qr_percentile_i64(x->v, x->n, 0.50);
        r->p99_ns = qr_percentile_i64(x->v, x->n, 0.99);
        mins[*n - 1] = r->min_ns;
    }
    if (*n) {
        qsort(mins, *n, sizeof *mins, qri_cmp_i64);
        *median_ns = qr_percentile_i64(mins, *n, 0.50);
        for (size_t i = 0; i < *n; i++)
            (*rows)[i].slow = *median_ns > 0 && (double)(*rows)[i].min_ns >= ratio * *median_ns;
        qsort(*rows, *n, sizeof **rows, cmp_slowest);
    }
    free(mins);
    return QR_OK;
}
