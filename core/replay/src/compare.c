/* Runtime-vs-replay comparisons of the butterfly experiment and the isolated replay. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/compare.h"
#include "qreplay/metrics.h"

struct qr_arrival_index {
    qri_map map; /* (packet, queue) -> bytes + 1 */
};

int qr_arrival_index_create(qr_arrival_index **out)
{
    qr_arrival_index *x = calloc(1, sizeof *x);
    if (!x || qri_map_init(&x->map)) {
        free(x);
        return QR_ENOMEM;
    }
    *out = x;
    return QR_OK;
}

void qr_arrival_index_destroy(qr_arrival_index *x)
{
    if (!x)
        return;
    qri_map_free(&x->map);
    free(x);
}

int qr_arrival_index_put(qr_arrival_index *x, uint64_t packet, uint64_t queue_key,
                         uint64_t queue_bytes)
{
    void *v = (void *)(uintptr_t)(queue_bytes + 1);
    if (qri_map_get(&x->map, packet, queue_key))
        qri_map_remove(&x->map, packet, queue_key);
    return qri_map_put(&x->map, packet, queue_key, v);
}

int qr_arrival_index_get(const qr_arrival_index *x, uint64_t packet, uint64_t queue_key,
                         uint64_t *queue_bytes)
{
    void *v = qri_map_get(&x->map, packet, queue_key);
    if (!v)
        return QR_ENOTFOUND;
    *queue_bytes = (uint64_t)(uintptr_t)v - 1;
    return QR_OK;
}

size_t qr_arrival_index_size(const qr_arrival_index *x)
{
    return x->map.count;
}

void qr_divergence_init(qr_divergence *d)
{
    memset(d, 0, sizeof *d);
    d->first_ns = -1;
}

uint64_t qr_divergence_add(qr_divergence *d, int64_t time_ns, uint64_t run_bytes,
                           uint64_t rep_bytes)
{
    uint64_t diff = run_bytes > rep_bytes ? run_bytes - rep_bytes : rep_bytes - run_bytes;
    d->matched++;
    if (diff && d->first_ns < 0)
        d->first_ns = time_ns;
    if (d->first_ns >= 0) {
        d->after++;
        d->zero_after += diff == 0;
    }
    if (diff > d->max_diff_bytes)
        d->max_diff_bytes = diff;
    return diff;
}

double qr_divergence_zero_after(const qr_divergence *d)
{
    return d->after ? (double)d->zero_after / (double)d->after : 1.0;
}

uint32_t qr_short_flow(const qr_flow *flows, size_t n)
{
    uint32_t s = 0;
    for (uint32_t f = 1; f < n; f++)
        if (flows[f].bytes <= flows[s].bytes)
            s = f;
    return s;
}

int qr_fct_reproduced(int64_t runtime_fct_ns, int64_t replay_fct_ns)
{
    if (runtime_fct_ns < 0 || replay_fct_ns < 0)
        return 0;
    int64_t d = replay_fct_ns - runtime_fct_ns;
    if (d < 0)
        d = -d;
    return d <= runtime_fct_ns / 100;
}

static int cmp_drop(const void *a, const void *b)
{
    const qr_drop_key *x = a, *y = b;
    if (x->packet != y->packet)
        return x->packet < y->packet ? -1 : 1;
    return x->queue < y->queue ? -1 : x->queue > y->queue;
}

void qr_drop_keys_sort(qr_drop_key *keys, size_t n)
{
    if (n)
        qsort(keys, n, sizeof *keys, cmp_drop);
}

int qr_drop_sets_equal(const qr_drop_key *a, size_t na, const qr_drop_key *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].packet != b[i].packet || a[i].queue != b[i].queue)
            return 0;
    return 1;
}

struct typical_key {
    uint64_t first;
    uint32_t replay;
};

static int cmp_typical(const void *a, const void *b)
{
    const struct typical_key *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->replay < y->replay ? -1 : x->replay > y->replay;
}

uint32_t qr_typical_replay(const qr_row_butterfly_replay *rows, size_t n)
{
    struct typical_key *k = malloc(n * sizeof *k);
    if (!k)
        return rows[0].replay;
    for (size_t i = 0; i < n; i++)
        k[i] = (struct typical_key){
            rows[i].first_divergence_ns < 0 ? UINT64_MAX : (uint64_t)rows[i].first_divergence_ns,
            rows[i].replay};
    qsort(k, n, sizeof *k, cmp_typical);
    uint32_t r = k[n / 2].replay;
    free(k);
    return r;
}

void qr_butterfly_sigma_summary(const qr_row_butterfly_replay *rows, size_t n,
                                qr_row_butterfly_sigma *out)
{
    memset(out, 0, sizeof *out);
    out->sigma_ns = rows[0].sigma_ns;
    out->replays = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        out->short_reproduced_pct += rows[i].short_reproduced;
        out->run_reproduced_pct += rows[i].run_reproduced;
        out->zero_after_divergence_mean += rows[i].zero_after_divergence;
    }
    out->short_reproduced_pct *= 100.0 / (double)n;
    out->run_reproduced_pct *= 100.0 / (double)n;
    out->zero_after_divergence_mean /= (double)n;
    out->typical_replay = qr_typical_replay(rows, n);
}

static int same(const qr_tcp_sent *a, const qr_tcp_sent *b)
{
    return a->flags == b->flags && a->seq == b->seq && a->ack == b->ack && a->window == b->window &&
           a->len == b->len;
}

int qr_compare_sequences(const qr_tcp_sent *const want[2], const size_t n_want[2],
                         const qr_tcp_sent *const got[2], const size_t n_got[2], qr_seq_result *out)
{
    memset(out, 0, sizeof *out);
    out->identical = 1;
    out->first_mismatch = -1;
    size_t total = 0;
    for (int d = 0; d < 2; d++)
        total += n_want[d] < n_got[d] ? n_want[d] : n_got[d];
    int64_t *diffs = malloc((total ? total : 1) * sizeof *diffs);
    if (!diffs)
        return QR_ENOMEM;
    size_t k = 0;
    for (int d = 0; d < 2; d++) {
        size_t n = n_want[d] < n_got[d] ? n_want[d] : n_got[d];
        for (size_t i = 0; i < n; i++) {
            if (!same(&want[d][i], &got[d][i]) && out->identical) {
                out->identical = 0;
                out->first_mismatch = (int64_t)i;
            }
            int64_t x = got[d][i].time_ns - want[d][i].time_ns;
            diffs[k++] = x < 0 ? -x : x;
        }
        if (n_want[d] != n_got[d] && out->identical) {
            out->identical = 0;
            out->first_mismatch = (int64_t)n;
        }
    }
    if (k) {
        qsort(diffs, k, sizeof *diffs, qri_cmp_i64);
        out->max_send_diff_ns = diffs[k - 1];
        out->p99_send_diff_ns = qr_percentile_i64(diffs, k, 0.99);
    }
    free(diffs);
    return QR_OK;
}
