/* qreplay: the latency profiler's links (hoptrace_links.h). Everflow measures a link from the
 * timestamps of a packet's mirrored copies at the switches on either end; the least of them over
 * many packets is the link's own delay and the near switch's serialization, free of queueing, so
 * a link slowed by a fault stands out from the others. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/stats.h"

#include "hoptrace_links.h"
#include "internal.h"

struct copy {
    int64_t t0, t1; /* near and far times */
    uint32_t bytes;
};

typedef struct lat {
    int64_t *v;
    size_t n, cap;
    struct copy *c; /* the copies in far-end order (for the link's service rate) */
    size_t m, mcap;
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
    for (uint32_t i = 0; i < l->n_links; i++) {
        free(l->links[i].v);
        free(l->links[i].c);
    }
    free(l->links);
    free(l);
}

int qri_link_lat_add(qri_link_lat *l, uint32_t sw, uint32_t port, uint32_t next, int64_t t0,
                     int64_t t1, uint32_t bytes)
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
    if (qri_grow((void **)&x->c, &x->mcap, x->m, sizeof *x->c, 64))
        return QR_ENOMEM;
    x->c[x->m++] = (struct copy){t0, t1, bytes};
    return QR_OK;
}

static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The link's service rate: over consecutive copies at the far end (in the order they came, which
 * is time order) where the later packet reached the near switch at least the link's least latency
 * before the earlier one reached the far one (unqueued it would have arrived first: it waited
 * behind it, the two left back to back), its bits over the time between the two far copies; the
 * median of those (NaN: no such pair), their number in *pairs. */
static double service_rate(const lat *x, int64_t least, uint64_t *pairs, double *scratch)
{
    size_t k = 0;
    for (size_t i = 1; i < x->m; i++) {
        const struct copy *a = &x->c[i - 1], *b = &x->c[i];
        int64_t gap = b->t1 - a->t1;
        if (b->t0 + least <= a->t1 && gap > 0)
            scratch[k++] = (double)b->bytes * 8e9 / (double)gap;
    }
    *pairs = k;
    if (!k)
        return NAN;
    qsort(scratch, k, sizeof *scratch, cmp_f64);
    return k % 2 ? scratch[k / 2] : (scratch[k / 2 - 1] + scratch[k / 2]) / 2;
}

static int cmp_slowest(const void *a, const void *b)
{
    const qr_row_hop_link *x = a, *y = b;
    if (x->min_ns != y->min_ns)
        return x->min_ns > y->min_ns ? -1 : 1;
    return x->link < y->link ? -1 : x->link > y->link;
}

int qri_link_lat_rows(qri_link_lat *l, double ratio, uint64_t nominal_bps, qr_row_hop_link **rows,
                      size_t *n, int64_t *median_ns, double *median_rate_bps)
{
    *rows = calloc(l->n_links ? l->n_links : 1, sizeof **rows);
    int64_t *mins = malloc((l->n_links ? l->n_links : 1) * sizeof *mins);
    double *rates = malloc((l->n_links ? l->n_links : 1) * sizeof *rates);
    size_t most = 1, n_rates = 0;
    for (uint32_t i = 0; i < l->n_links; i++)
        most = l->links[i].m > most ? l->links[i].m : most;
    double *scratch = malloc(most * sizeof *scratch);
    *n = 0;
    *median_ns = -1;
    if (!*rows || !mins || !rates || !scratch) {
        free(*rows);
        free(mins);
        free(rates);
        free(scratch);
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
        r->rate_bps = service_rate(x, r->min_ns, &r->rate_pairs, scratch);
        mins[*n - 1] = r->min_ns;
        if (r->rate_pairs >= QR_HOP_RATE_PAIRS)
            rates[n_rates++] = r->rate_bps;
    }
    double median_rate = NAN;
    if (n_rates) {
        qsort(rates, n_rates, sizeof *rates, cmp_f64);
        median_rate =
            n_rates % 2 ? rates[n_rates / 2] : (rates[n_rates / 2 - 1] + rates[n_rates / 2]) / 2;
    }
    if (*n) {
        qsort(mins, *n, sizeof *mins, qri_cmp_i64);
        *median_ns = qr_percentile_i64(mins, *n, 0.50);
        for (size_t i = 0; i < *n; i++) {
            qr_row_hop_link *r = &(*rows)[i];
            r->slow = *median_ns > 0 && (double)r->min_ns >= ratio * *median_ns;
            r->slow_rate = r->rate_pairs >= QR_HOP_RATE_PAIRS && nominal_bps > 0 &&
                           r->rate_bps * ratio <= (double)nominal_bps;
        }
        qsort(*rows, *n, sizeof **rows, cmp_slowest);
    }
    if (median_rate_bps)
        *median_rate_bps = median_rate;
    free(mins);
    free(rates);
    free(scratch);
    return QR_OK;
}
