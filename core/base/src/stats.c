/* Statistics (stats.h): the percentile rule, exact summaries, streaming histograms. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/stats.h"

int qri_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int qri_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int qri_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least ceil(p * n) values at or below it. */
uint64_t qr_percentile_rank(double p, uint64_t n)
{
    if (n == 0)
        return 0;
    uint64_t r = (uint64_t)ceil(p * (double)n);
    return r < 1 ? 1 : (r > n ? n : r);
}

#define rank_of qr_percentile_rank

int64_t qr_percentile_i64(const int64_t *sorted, size_t n, double p)
{
    return n ? sorted[qr_percentile_rank(p, n) - 1] : 0;
}

int qr_summary_exact(const uint64_t *values, size_t n, qr_summary *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return QR_OK;
    uint64_t *v = malloc(n * sizeof *v);
    if (!v)
        return QR_ENOMEM;
    memcpy(v, values, n * sizeof *v);
    qsort(v, n, sizeof *v, qri_cmp_u64);
    long double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        out->zeros += v[i] == 0;
    }
    out->count = n;
    out->mean = (double)(sum / n);
    out->p50 = (double)v[rank_of(0.50, n) - 1];
    out->p99 = (double)v[rank_of(0.99, n) - 1];
    out->max = (double)v[n - 1];
    free(v);
    return QR_OK;
}

/* Histogram: values below 256 have a bucket each; above, 128 buckets per octave. */
struct qr_hist {
    uint64_t *buckets;
    size_t n_buckets;
    uint64_t count;
    uint64_t max;
    unsigned __int128 sum; /* exact (an x87 long double add per value was a tenth of qreplay
                              metrics' time) */
};

static size_t bucket_of(uint64_t v)
{
    if (v < 256)
        return (size_t)v;
    int b = 63 - __builtin_clzll(v);
    return 256 + (size_t)(b - 8) * 128 + (size_t)((v >> (b - 7)) - 128);
}

static double bucket_value(size_t i)
{
    if (i < 256)
        return (double)i;
    size_t b = (i - 256) / 128 + 8;
    uint64_t sub = (i - 256) % 128;
    uint64_t lo = (128 + sub) << (b - 7);
    uint64_t width = 1ULL << (b - 7);
    return (double)lo + (double)(width - 1) / 2.0;
}

int qr_hist_create(qr_hist **out)
{
    qr_hist *h = calloc(1, sizeof *h);
    if (!h)
        return QR_ENOMEM;
    *out = h;
    return QR_OK;
}

void qr_hist_destroy(qr_hist *h)
{
    if (!h)
        return;
    free(h->buckets);
    free(h);
}

int qr_hist_add(qr_hist *h, uint64_t value)
{
    size_t i = bucket_of(value);
    if (i >= h->n_buckets) {
        size_t n = h->n_buckets ? h->n_buckets : 512;
        while (n <= i)
            n *= 2;
        uint64_t *b = realloc(h->buckets, n * sizeof *b);
        if (!b)
            return QR_ENOMEM;
        memset(b + h->n_buckets, 0, (n - h->n_buckets) * sizeof *b);
        h->buckets = b;
        h->n_buckets = n;
    }
    h->buckets[i]++;
    h->count++;
    h->sum += value;
    if (value > h->max)
        h->max = value;
    return QR_OK;
}

static double hist_quantile(const qr_hist *h, double p)
{
    uint64_t rank = rank_of(p, h->count);
    uint64_t cum = 0;
    for (size_t i = 0; i < h->n_buckets; i++) {
        cum += h->buckets[i];
        if (cum >= rank) {
            double v = bucket_value(i);
            return v > (double)h->max ? (double)h->max : v;
        }
    }
    return (double)h->max;
}

double qr_hist_quantile(const qr_hist *h, double p)
{
    return h && h->count ? hist_quantile(h, p) : 0;
}

void qr_hist_summary(const qr_hist *h, double scale, qr_summary *out)
{
    memset(out, 0, sizeof *out);
    if (!h || h->count == 0)
        return;
    out->count = h->count;
    out->zeros = h->buckets[0];
    out->mean = (double)((long double)h->sum / h->count) * scale;
    out->p50 = hist_quantile(h, 0.50) * scale;
    out->p99 = hist_quantile(h, 0.99) * scale;
    out->max = (double)h->max * scale;
}

uint32_t qri_argmax_u32(const uint32_t *counts, uint32_t n)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t h = 0; h < n; h++)
        if (counts[h] && (best == UINT32_MAX || counts[h] > counts[best]))
            best = h;
    return best;
}
