/* qreplay: statistics: the one percentile rule, exact and streaming summaries.
 *
 * Every percentile qreplay reports uses qr_percentile_rank (nearest rank). */
#ifndef QREPLAY_STATS_H
#define QREPLAY_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The project's one percentile rule, nearest rank: the p-quantile of n sorted values is the value
 * of 1-based rank max(1, ceil(p * n)) (p50 of 1..10 is 5, p99 of 1..100 is 99, p99 of 1..1000 is
 * 990). Every percentile qreplay reports (qdiff, completion times, send-time differences, the
 * streaming histograms) uses it. Returns the rank, in [1, n]; 0 for n = 0. */
uint64_t qr_percentile_rank(double p, uint64_t n);

/* The p-quantile of n values sorted in increasing order (0 for n = 0). */
int64_t qr_percentile_i64(const int64_t *sorted, size_t n, double p);

/* Summary of a set of values: count, mean, p50 and p99 (qr_percentile_rank), max (in the values'
 * unit). zeros counts the values equal to 0. For count = 0 every field is 0. */
typedef struct qr_summary {
    uint64_t count;
    uint64_t zeros;
    double mean;
    double p50;
    double p99;
    double max;
} qr_summary;

/* Exact summary of n values (sorts a private copy). Returns 0, QR_ENOMEM. */
int qr_summary_exact(const uint64_t *values, size_t n, qr_summary *out);

/* A streaming histogram of non-negative integers: constant memory per octave of range. count,
 * zeros, mean and max are exact; p50 and p99 are exact below 256 and otherwise within 0.4% of the
 * exact nearest-rank value (bucket midpoint). */
typedef struct qr_hist qr_hist;

/* Create an empty histogram. Caller owns *out (qr_hist_destroy). Returns 0 or QR_ENOMEM. */
int qr_hist_create(qr_hist **out);
/* Release; NULL is allowed. */
void qr_hist_destroy(qr_hist *h);
/* Add a value. Returns 0 or QR_ENOMEM. */
int qr_hist_add(qr_hist *h, uint64_t value);
/* Summarize into *out; values scaled by `scale` (e.g. 1.0 / QR_MTU_BYTES). */
void qr_hist_summary(const qr_hist *h, double scale, qr_summary *out);
/* The p-quantile (nearest rank, p in [0, 1]; p = 0 is the smallest value) with the accuracy of
 * qr_hist_summary's p50 and p99; 0 for an empty histogram. */
double qr_hist_quantile(const qr_hist *h, double p);
/* The relative error bound of p50 and p99 for values >= 256. */
#define QR_HIST_REL_ERROR (1.0 / 256.0)

#ifdef __cplusplus
}
#endif
#endif
