/* Busiest queues, completion times, busy periods and send-time lags (runstats.h). */
#include "qreplay/runstats.h"
#include "internal.h"
#include "map.h"
#include "qreplay/flowtable.h"
#include "qreplay/stats.h"
#include "qreplay/units.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void free_value(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2, (void)ctx;
    free(value);
}

struct qr_queue_counter {
    qri_map counts; /* (queue key, 0) -> count */
};

int qr_queue_counter_create(qr_queue_counter **out)
{
    qr_queue_counter *c = calloc(1, sizeof *c);
    if (!c || qri_map_init(&c->counts)) {
        free(c);
        return QR_ENOMEM;
    }
    *out = c;
    return QR_OK;
}

void qr_queue_counter_destroy(qr_queue_counter *c)
{
    if (!c)
        return;
    qri_map_foreach(&c->counts, free_value, NULL);
    qri_map_free(&c->counts);
    free(c);
}

int qr_queue_counter_add(qr_queue_counter *c, uint32_t sw, uint32_t port)
{
    uint64_t k = qr_queue_key(sw, port);
    uint64_t *n = qri_map_get(&c->counts, k, 0);
    if (!n) {
        n = calloc(1, sizeof *n);
        if (!n || qri_map_put(&c->counts, k, 0, n)) {
            free(n);
            return QR_ENOMEM;
        }
    }
    (*n)++;
    return QR_OK;
}

struct busiest {
    uint64_t key, count;
    int found;
};

static void visit_busiest(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k2;
    struct busiest *b = ctx;
    uint64_t n = *(const uint64_t *)value;
    if (!b->found || n > b->count || (n == b->count && k1 < b->key)) {
        b->found = 1;
        b->key = k1;
        b->count = n;
    }
}

int qr_queue_counter_busiest(const qr_queue_counter *c, uint32_t *sw, uint32_t *port,
                             uint64_t *count)
{
    struct busiest b = {0, 0, 0};
    qri_map_foreach(&c->counts, visit_busiest, &b);
    *sw = qr_queue_key_switch(b.key);
    *port = qr_queue_key_port(b.key);
    if (count)
        *count = b.count;
    return b.found ? QR_OK : QR_ENOTFOUND;
}

int qr_fct_summarize(const qr_row_flow *flows, size_t n, qr_fct_summary *out)
{
    memset(out, 0, sizeof *out);
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (flows[i].fct_ns >= 0)
            v[k++] = flows[i].fct_ns;
    if (k) {
        qsort(v, k, sizeof *v, qri_cmp_i64);
        out->completed = k;
        out->median_ns = qr_percentile_i64(v, k, 0.50);
        out->p99_ns = qr_percentile_i64(v, k, 0.99);
        out->max_ns = v[k - 1];
    }
    free(v);
    return QR_OK;
}

/* Drop error. */
void qr_busy_period_find(const qr_row_queue_series *s, size_t n, qr_busy_period *out)
{
    size_t best_a = 0, best_b = 0, start = 0;
    int open = 0, found = 0;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i].queue_bytes > 0) {
            if (!open)
                start = i;
            open = 1;
        } else if (open) {
            if (!found || i - start > best_b - best_a) {
                best_a = start;
                best_b = i;
                found = 1;
            }
            open = 0;
        }
    }
    if (!found)
        return;
    out->arrivals = best_b - best_a;
    out->start_ns = s[best_a].time_ns;
    out->end_ns = s[best_b - 1].time_ns;
    out->share = (double)out->arrivals / (double)n;
    out->min_queue_bytes = UINT64_MAX;
    out->settled_min_queue_bytes = -1;
    for (size_t i = best_a; i < best_b; i++) {
        uint64_t q = s[i].queue_bytes;
        out->min_queue_bytes = q < out->min_queue_bytes ? q : out->min_queue_bytes;
        out->max_queue_bytes = q > out->max_queue_bytes ? q : out->max_queue_bytes;
        if (s[i].time_ns >= out->start_ns + QR_BUSY_SETTLE_NS &&
            (out->settled_min_queue_bytes < 0 || (int64_t)q < out->settled_min_queue_bytes))
            out->settled_min_queue_bytes = (int64_t)q;
    }
}

void qr_lag_init(qr_lag *lag, const qr_busy_period *period)
{
    memset(lag, 0, sizeof *lag);
    lag->period = *period;
}

int qr_lag_add(qr_lag *lag, int64_t time_run_ns, int64_t time_rep_ns)
{
    const qr_busy_period *p = &lag->period;
    if (p->arrivals == 0)
        return QR_OK;
    int64_t d = time_rep_ns - time_run_ns;
    if (time_run_ns >= p->start_ns && time_run_ns < p->start_ns + QR_BUSY_EARLY_NS) {
        if (qri_grow((void **)&lag->early, &lag->cap_early, lag->n_early, sizeof *lag->early, 256))
            return QR_ENOMEM;
        lag->early[lag->n_early++] = d;
    }
    if (time_run_ns >= p->start_ns + QR_BUSY_SETTLE_NS && time_run_ns <= p->end_ns) {
        if (qri_grow((void **)&lag->settled, &lag->cap_settled, lag->n_settled,
                     sizeof *lag->settled, 256))
            return QR_ENOMEM;
        lag->settled[lag->n_settled++] = d;
    }
    return QR_OK;
}

static int64_t median_of(int64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, qri_cmp_i64);
    return qr_percentile_i64(v, n, 0.5);
}

void qr_lag_medians(qr_lag *lag, int64_t *early_ns, int *has_early, int64_t *settled_ns,
                    int *has_settled)
{
    *early_ns = median_of(lag->early, lag->n_early);
    *settled_ns = median_of(lag->settled, lag->n_settled);
    *has_early = lag->n_early > 0;
    *has_settled = lag->n_settled > 0;
}

void qr_lag_free(qr_lag *lag)
{
    free(lag->early);
    free(lag->settled);
    lag->early = lag->settled = NULL;
    lag->n_early = lag->n_settled = lag->cap_early = lag->cap_settled = 0;
}
