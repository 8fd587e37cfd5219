/* qreplay: what a run's queues and flows did, beyond the fidelity metrics (metrics.h): the
 * busiest queue, completion times, a queue's longest busy period and a replay's send-time lag
 * in it. */
#ifndef QREPLAY_RUNSTATS_H
#define QREPLAY_RUNSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arrivals per switch queue, and the busiest queue: the one with the most arrivals (the runtime's
 * busiest queue of the results, the butterfly's bottleneck). */
typedef struct qr_queue_counter qr_queue_counter;

/* Caller owns *out (qr_queue_counter_destroy). Returns 0 or QR_ENOMEM. */
int qr_queue_counter_create(qr_queue_counter **out);
/* Release; NULL is allowed. */
void qr_queue_counter_destroy(qr_queue_counter *c);
/* One arrival at (sw, port). Returns 0 or QR_ENOMEM. */
int qr_queue_counter_add(qr_queue_counter *c, uint32_t sw, uint32_t port);
/* The queue with the most arrivals, ties to the smallest (switch, port). Returns 0, or
 * QR_ENOTFOUND if nothing was counted (then *sw = *port = 0). count may be NULL. */
int qr_queue_counter_busiest(const qr_queue_counter *c, uint32_t *sw, uint32_t *port,
                             uint64_t *count);

/* Completion times of the completed flows of a run (fct_ns >= 0): how many, and their median,
 * p99 and maximum (0 when none completed). */
typedef struct qr_fct_summary {
    uint64_t completed;
    int64_t median_ns, p99_ns, max_ns;
} qr_fct_summary;
/* Returns 0 or QR_ENOMEM. */
int qr_fct_summarize(const qr_row_flow *flows, size_t n, qr_fct_summary *out);

/* The longest busy period of a queue: the longest run of consecutive arrivals that found it
 * non-empty (the earliest of equally long runs), with what it held then. The queue "settles"
 * QR_BUSY_SETTLE_NS after the period starts; settled_min_queue_bytes is the least it held from
 * then to the end of the period (-1 when the period ended sooner). */
#define QR_BUSY_SETTLE_NS 1000000
/* The start of a busy period whose send-time lag is "early": its first 500 us. */
#define QR_BUSY_EARLY_NS 500000
typedef struct qr_busy_period {
    uint64_t arrivals;        /* 0: the queue was never found non-empty (the rest is 0) */
    int64_t start_ns, end_ns; /* the first and last arrival of the period */
    double share;             /* arrivals / all arrivals of the series */
    uint64_t min_queue_bytes, max_queue_bytes;
    int64_t settled_min_queue_bytes;
} qr_busy_period;

/* The busy period of a queue's series (in time order, n may be 0) into *out. */
void qr_busy_period_find(const qr_row_queue_series *s, size_t n, qr_busy_period *out);

/* The send-time lag of a replay at one queue: replay minus runtime arrival time of the matched
 * arrivals, collected for the runtime's busy period there; the medians (qr_percentile_i64 at 0.5)
 * early in the period and once it settled. */
typedef struct qr_lag {
    qr_busy_period period;
    int64_t *early, *settled; /* the lags, ns */
    size_t n_early, n_settled, cap_early, cap_settled;
} qr_lag;

/* Start collecting for a period (lag's arrays start empty). */
void qr_lag_init(qr_lag *lag, const qr_busy_period *period);
/* Add one matched arrival at the queue. Returns 0 or QR_ENOMEM. */
int qr_lag_add(qr_lag *lag, int64_t time_run_ns, int64_t time_rep_ns);
/* The medians, ns, with whether any arrival fell in each part of the period (the median is 0
 * where none did). Sorts the arrays. */
void qr_lag_medians(qr_lag *lag, int64_t *early_ns, int *has_early, int64_t *settled_ns,
                    int *has_settled);
/* Release the arrays (lag may be reused after qr_lag_init). */
void qr_lag_free(qr_lag *lag);

#ifdef __cplusplus
}
#endif
#endif
