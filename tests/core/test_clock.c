/* Clock model: constant offsets uniform in [0, max], seeded, independent of the host count. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "qreplay/clock.h"
#include "qreplay/error.h"

Test(clock, offsets_in_range_and_uniform)
{
    const size_t n = 100000;
    int64_t *o = malloc(n * sizeof *o);
    cr_assert_eq(qr_clock_offsets(1, 5000, n, o), QR_OK);
    long double sum = 0;
    size_t low = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_geq(o[i], 0);
        cr_assert_leq(o[i], 5000);
        sum += o[i];
        low += o[i] < 2500;
    }
    cr_assert_leq(fabs((double)(sum / n) - 2500.0), 25.0, "mean %g", (double)(sum / n));
    cr_assert_leq(fabs((double)low / n - 0.5), 0.01);
    free(o);
}

Test(clock, deterministic_and_independent_of_host_count)
{
    int64_t a[64], b[16], c[64];
    cr_assert_eq(qr_clock_offsets(9, 5000, 64, a), QR_OK);
    cr_assert_eq(qr_clock_offsets(9, 5000, 16, b), QR_OK);
    cr_assert_eq(memcmp(a, b, sizeof b), 0);
    cr_assert_eq(qr_clock_offsets(10, 5000, 64, c), QR_OK);
    cr_assert_neq(memcmp(a, c, sizeof a), 0);
}

Test(clock, zero_max_and_bad_arguments)
{
    int64_t o[8];
    cr_assert_eq(qr_clock_offsets(1, 0, 8, o), QR_OK);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(o[i], 0);
    cr_assert_eq(qr_clock_offsets(1, -1, 8, o), QR_EINVAL);
    cr_assert_eq(qr_clock_offsets(1, 5, 8, NULL), QR_EINVAL);
    /* a huge bound still yields values in range */
    cr_assert_eq(qr_clock_offsets(1, 100000000000LL, 8, o), QR_OK);
    for (int i = 0; i < 8; i++)
        cr_assert(o[i] >= 0 && o[i] <= 100000000000LL);
}

Test(clock, processing_delay_statistics_and_streams)
{
    /* sd = 0 is exact; sd > 0 has the right mean and sd; truncated at 0; streams differ by replay
     * and host, and repeat for the same (seed, host, replay) */
    qr_proc_delay *a, *b, *c, *z;
    cr_assert_eq(qr_proc_delay_create(&z, 1, 0, 0, 10000, 0), QR_OK);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(qr_proc_delay_next(z), 10000);
    qr_proc_delay_destroy(z);
    cr_assert_eq(qr_proc_delay_create(&a, 1, 3, 7, 10000, 100), QR_OK);
    cr_assert_eq(qr_proc_delay_create(&b, 1, 3, 7, 10000, 100), QR_OK);
    cr_assert_eq(qr_proc_delay_create(&c, 1, 3, 8, 10000, 100), QR_OK);
    double sum = 0, sq = 0;
    int differ = 0;
    enum { N = 200000 };
    for (int i = 0; i < N; i++) {
        int64_t x = qr_proc_delay_next(a), y = qr_proc_delay_next(b), w = qr_proc_delay_next(c);
        cr_assert_eq(x, y, "same stream, same delays");
        differ += x != w;
        sum += (double)x;
        sq += (double)x * (double)x;
    }
    double mean = sum / N, sd = sqrt(sq / N - mean * mean);
    cr_assert(fabs(mean - 10000) < 1.0, "mean %f", mean);
    cr_assert(fabs(sd - 100) < 1.0, "sd %f", sd);
    cr_assert_gt(differ, N / 2, "another replay's stream");
    qr_proc_delay_destroy(a);
    qr_proc_delay_destroy(b);
    qr_proc_delay_destroy(c);
    cr_assert_eq(qr_proc_delay_create(&a, 1, 0, 0, 10, 1000), QR_OK);
    int zeros = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t x = qr_proc_delay_next(a);
        cr_assert_geq(x, 0);
        zeros += x == 0;
    }
    cr_assert_gt(zeros, 4000, "about half the draws of N(10, 1000) are truncated to 0");
    qr_proc_delay_destroy(a);
    cr_assert_eq(qr_proc_delay_create(&a, 1, 0, 0, 10, -1), QR_EINVAL);
}

/* Pairs measured from true offsets: the one-way delay a -> b seen on the clocks is the path delay
 * plus offset(b) - offset(a); asym is added to the a -> b direction only. */
static qr_owd_pair pair_of(uint32_t a, uint32_t b, const double *off, int64_t delay, int64_t asym)
{
    return (qr_owd_pair){a, b, delay + (int64_t)(off[b] - off[a]) + asym,
                         delay + (int64_t)(off[a] - off[b])};
}

Test(clock, reconcile_two_hosts_exactly)
{
    double off[2] = {0, 3000};
    qr_owd_pair p = pair_of(0, 1, off, 10000, 0);
    qr_clock_estimate e[2];
    cr_assert_eq(qr_clock_reconcile(2, &p, 1, 0, e), QR_OK);
    cr_assert_float_eq(e[0].offset_ns, 0.0, 1e-9);
    cr_assert_float_eq(e[1].offset_ns, 3000.0, 1e-6);
    cr_assert_eq(e[1].reference, 0);
    cr_assert_eq(e[1].pairs, 1);
    cr_assert_float_eq(e[1].residual_ns, 0.0, 1e-6);
    /* reference 1 instead: the same difference, seen from host 1 */
    cr_assert_eq(qr_clock_reconcile(2, &p, 1, 1, e), QR_OK);
    cr_assert_float_eq(e[0].offset_ns, -3000.0, 1e-6);
}

/* Property: on random connected graphs with symmetric path delays the offsets are recovered
 * exactly (relative to the reference); with an asymmetry of up to A ns per pair, every estimate
 * is off by at most A/2 times the graph's diameter, and the mean error stays below A/2. */
Test(clock, property_reconcile_random_graphs)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 21);
    for (int round = 0; round < 40; round++) {
        size_t n = 2 + gsl_rng_uniform_int(r, 60);
        double *off = malloc(n * sizeof *off);
        for (size_t h = 0; h < n; h++)
            off[h] = (double)gsl_rng_uniform_int(r, 5001); /* U[0, 5 us], as the paper */
        size_t np = 0, cap = 4 * n;
        qr_owd_pair *p = malloc(cap * sizeof *p), *q = malloc(cap * sizeof *q);
        for (size_t h = 1; h < n; h++) /* a random spanning tree keeps it connected */
            p[np++] = pair_of((uint32_t)gsl_rng_uniform_int(r, h), (uint32_t)h, off,
                              1000 + (int64_t)gsl_rng_uniform_int(r, 50000), 0);
        while (np < cap) {
            uint32_t a = (uint32_t)gsl_rng_uniform_int(r, n),
                     b = (uint32_t)gsl_rng_uniform_int(r, n);
            if (a != b)
                p[np++] = pair_of(a, b, off, 1000 + (int64_t)gsl_rng_uniform_int(r, 50000), 0);
        }
        uint32_t ref = (uint32_t)gsl_rng_uniform_int(r, n);
        qr_clock_estimate *e = malloc(n * sizeof *e);
        cr_assert_eq(qr_clock_reconcile(n, p, np, ref, e), QR_OK);
        for (size_t h = 0; h < n; h++) {
            cr_assert_eq(e[h].reference, ref);
            cr_assert_float_eq(e[h].offset_ns, off[h] - off[ref], 1e-3, "host %zu of %zu", h, n);
        }
        /* asymmetric delays: errors bounded */
        const int64_t A = 400;
        for (size_t i = 0; i < np; i++) {
            q[i] = p[i];
            q[i].min_ab_ns += (int64_t)gsl_rng_uniform_int(r, A + 1);
        }
        cr_assert_eq(qr_clock_reconcile(n, q, np, ref, e), QR_OK);
        double sum = 0;
        for (size_t h = 0; h < n; h++) {
            double err = fabs(e[h].offset_ns - (off[h] - off[ref]));
            cr_assert_leq(err, A / 2.0 * (double)n, "host %zu", h);
            sum += err;
        }
        cr_assert_leq(sum / (double)n, A / 2.0, "mean error %.1f ns", sum / (double)n);
        free(off), free(p), free(q), free(e);
    }
    gsl_rng_free(r);
}

Test(clock, reconcile_components_and_bad_pairs)
{
    double off[5] = {0, 100, 200, 300, 400};
    qr_owd_pair p[2] = {pair_of(0, 1, off, 5000, 0), pair_of(3, 2, off, 5000, 0)};
    qr_clock_estimate e[5];
    cr_assert_eq(qr_clock_reconcile(5, p, 2, 1, e), QR_OK);
    cr_assert_eq(e[0].reference, 1, "the given reference in its component");
    cr_assert_float_eq(e[0].offset_ns, -100.0, 1e-6);
    cr_assert_eq(e[3].reference, 2, "the smallest host in another component");
    cr_assert_float_eq(e[3].offset_ns, 100.0, 1e-6);
    cr_assert_eq(e[4].pairs, 0, "a host without pairs has no estimate");
    cr_assert_eq(e[4].reference, 4);
    qr_owd_pair self = {2, 2, 1, 1}, far = {0, 9, 1, 1};
    cr_assert_eq(qr_clock_reconcile(5, &self, 1, 0, e), QR_EINVAL);
    cr_assert_eq(qr_clock_reconcile(5, &far, 1, 0, e), QR_EINVAL);
    cr_assert_eq(qr_clock_reconcile(5, p, 2, 5, e), QR_EINVAL);
}

/* A pair that only ever saw queued packets one way (100 us of queueing, as behind an incast)
 * says so by its round-trip excess and hardly moves the estimate: the weighted fit keeps every
 * host within a few ns, where an unweighted one would be off by tens of us. */
Test(clock, reconcile_discounts_pairs_that_only_saw_queueing)
{
    double off[4] = {0, 1500, -2500, 4000};
    qr_owd_pair p[6];
    size_t np = 0;
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = a + 1; b < 4; b++)
            p[np++] = pair_of(a, b, off, 0, 0); /* delays beyond the unloaded latency */
    p[1].min_ab_ns += 100000;                   /* hosts 0 -> 2: every packet queued */
    qr_clock_estimate e[4];
    cr_assert_eq(qr_clock_reconcile(4, p, np, 0, e), QR_OK);
    for (uint32_t h = 0; h < 4; h++)
        cr_assert_leq(fabs(e[h].offset_ns - off[h]), 5.0, "host %u: %.1f vs %.1f", h,
                      (double)e[h].offset_ns, off[h]);
    cr_assert_gt(e[2].residual_ns, e[3].residual_ns, "the queued pair shows in its hosts' misfit");
}

/* Property: with one-way delays beyond the unloaded latency (queueing >= 0 each way), a pair's
 * difference is off by at most half its round-trip excess, so every host's true offset lies in
 * [path - bound, path + bound], the estimate too, and a correction that qr_clock_correction
 * takes out never leaves more than the raw offset (random sparse graphs, heavy-tailed queueing:
 * many pairs saw only queued packets, as at k = 16). */
Test(clock, property_certain_interval_and_never_worse_corrections)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    size_t corrected = 0, withheld = 0;
    for (int round = 0; round < 60; round++) {
        size_t n = 2 + gsl_rng_uniform_int(r, 80);
        double *off = malloc(n * sizeof *off);
        for (size_t h = 0; h < n; h++)
            off[h] = (double)gsl_rng_uniform_int(r, 5001);
        size_t np = 0, cap = n + gsl_rng_uniform_int(r, 2 * n + 1);
        qr_owd_pair *p = malloc(cap * sizeof *p);
        while (np < cap) {
            uint32_t a = (uint32_t)gsl_rng_uniform_int(r, n),
                     b = (uint32_t)gsl_rng_uniform_int(r, n);
            if (a == b)
                continue;
            /* queueing each way: often none, sometimes up to 300 us */
            int64_t qab = gsl_rng_uniform(r) < 0.5 ? 0 : (int64_t)gsl_rng_uniform_int(r, 300000);
            int64_t qba = gsl_rng_uniform(r) < 0.5 ? 0 : (int64_t)gsl_rng_uniform_int(r, 300000);
            p[np++] = (qr_owd_pair){a, b, (int64_t)(off[b] - off[a]) + qab,
                                    (int64_t)(off[a] - off[b]) + qba};
        }
        qr_clock_estimate *e = malloc(n * sizeof *e);
        cr_assert_eq(qr_clock_reconcile(n, p, np, 0, e), QR_OK);
        for (size_t h = 0; h < n; h++) {
            double truth = off[h] - off[e[h].reference];
            cr_assert_leq(fabs(e[h].path_ns - truth), e[h].bound_ns + 1e-6,
                          "host %zu: path %.1f, bound %.1f, true %.1f", h, (double)e[h].path_ns,
                          (double)e[h].bound_ns, truth);
            cr_assert(e[h].offset_ns >= e[h].path_ns - e[h].bound_ns - 1e-6 &&
                          e[h].offset_ns <= e[h].path_ns + e[h].bound_ns + 1e-6,
                      "host %zu: estimate outside its interval", h);
            int64_t c = qr_clock_correction(&e[h]);
            if (c != 0) {
                cr_assert_leq(fabs((double)c - truth), fabs(truth) + 0.5,
                              "host %zu: correction %lld leaves more than %.1f", h, (long long)c,
                              truth);
                corrected++;
            } else if (e[h].pairs) {
                withheld++;
            }
        }
        free(off), free(p), free(e);
    }
    gsl_rng_free(r);
    /* both outcomes occur: the property is not checked on an empty set */
    cr_assert_gt(corrected, 100);
    cr_assert_gt(withheld, 10);
}
