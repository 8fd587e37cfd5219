/* qreplay: the host clock-error model. Each host's clock is off by a constant, drawn uniformly from
 * the whole nanoseconds in [0, max_offset]; a recorded send time is the true time plus the offset.
 */
#ifndef QREPLAY_CLOCK_H
#define QREPLAY_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill out[0..n_hosts) with the offsets of n_hosts hosts, in ns, from `seed` (the master seed: the
 * stream "clock" is derived from it). Host h's offset does not depend on n_hosts.
 * Returns 0, QR_EINVAL (max_offset_ns < 0, out NULL) or QR_ENOMEM. */
int qr_clock_offsets(uint64_t seed, int64_t max_offset_ns, size_t n_hosts, int64_t *out);

/* Host packet processing delay: every packet waits a delay drawn from a normal distribution of
 * mean `mean_ns` and standard deviation `sd_ns`, truncated at 0 and rounded to whole ns (sd = 0:
 * exactly the mean). One stream per (seed, host, replay): streams of distinct replays differ. */
typedef struct qr_proc_delay qr_proc_delay;

/* Returns 0, QR_EINVAL (negative mean or sd) or QR_ENOMEM. Caller owns *out. */
int qr_proc_delay_create(qr_proc_delay **out, uint64_t seed, uint64_t host, uint64_t replay,
                         int64_t mean_ns, int64_t sd_ns);
/* Release; NULL is allowed. */
void qr_proc_delay_destroy(qr_proc_delay *d);
/* The next packet's delay in ns (>= 0). */
int64_t qr_proc_delay_next(qr_proc_delay *d);

/* Clock reconciliation (the idea of WAP5 and of NTP): when the traffic between hosts a and b was
 * captured at both ends, the smallest one-way delay seen from a to b (the receive time on b's clock
 * minus the send time on a's) and from b to a give the pair's offset difference, assuming the
 * unloaded path delay is the same both ways: offset(b) - offset(a) = (min_ab - min_ba) / 2. */
typedef struct qr_owd_pair {
    uint32_t a, b;
    int64_t min_ab_ns, min_ba_ns;
} qr_owd_pair;

/* One host's estimate, in whole ns (the least squares and the interval are solved in floating
 * point and rounded once, here). */
typedef struct qr_clock_estimate {
    int64_t offset_ns;   /* its clock minus its reference's, ns (rounded to the nearest) */
    int64_t residual_ns; /* RMS over its pairs of (fitted - measured) offset difference, ns
                            (rounded), with the pairs' weights */
    uint32_t reference;  /* the host its offset is relative to */
    uint32_t pairs;      /* pairs it belongs to; 0: nothing known (offset 0, its own reference) */
    /* Where the true offset must lie: a pair's difference is off by at most half its round-trip
     * excess, so along the chain of pairs to the reference with the smallest sum of those bounds,
     * the true offset is within that sum of the chain's sum of differences. path_ns is that sum
     * of differences rounded to the nearest ns, bound_ns the bound rounded up after widening it
     * by the half ns path_ns may have moved: the true offset lies in [path_ns - bound_ns,
     * path_ns + bound_ns]. offset_ns is kept inside the exact interval. The reference: 0, 0. */
    int64_t path_ns, bound_ns;
    /* 1 when the exact interval makes the correction certain to help (qr_clock_correction). */
    int certain;
} qr_clock_estimate;

/* The correction to take out of a host's times (ns), or 0 when it might make the host's clock
 * worse: only when |path| > 3 bound (exactly, before rounding: e->certain) is the estimate certain
 * to be closer to the truth than no correction is (the true offset d and the estimate both lie in
 * the interval, so the error is at most 2 bound, while |d| >= |path| - bound). */
int64_t qr_clock_correction(const qr_clock_estimate *e);

/* Combine every pair into one offset per host: weighted least squares over the graph of measured
 * pairs, solved per connected component with one host fixed at 0: `reference` in its component,
 * the smallest host id in every other component. The delays should be those beyond the unloaded
 * path latency: then min_ab + min_ba is the pair's round-trip queueing, and its offset difference
 * is off by at most half of that, b = |min_ab + min_ba| / 2. A pair weighs 1 / (b + floor)^2
 * (floor QR_CLOCK_FLOOR_NS), so pairs that only ever saw queued packets hardly count. out has
 * n_hosts entries. Returns 0 or QR_EINVAL (a pair of a host with itself or beyond n_hosts,
 * reference >= n_hosts) or QR_ENOMEM. */
#define QR_CLOCK_FLOOR_NS 100.0
int qr_clock_reconcile(size_t n_hosts, const qr_owd_pair *pairs, size_t n_pairs, uint32_t reference,
                       qr_clock_estimate *out);

#ifdef __cplusplus
}
#endif
#endif
