/* qdiff and drop error: hand-computed examples, exact vs streaming, bounded memory. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "qreplay/error.h"
#include "qreplay/metrics.h"
#include "qreplay/runstats.h"
#include "qreplay/stats.h"
#include "qreplay/units.h"

#define FB(f, b) ((qr_flow_bytes){(f), (b)})

Test(metrics, qdiff_hand_computed)
{
    /* runtime: flow 1 3000 B, flow 2 1500 B; replay: flow 1 1500 B, flow 3 4500 B.
     * qdiff = |3000-1500| + |1500-0| = 3000 B = 2 MTU; symmetric adds flow 3: 7500 B = 5 MTU. */
    qr_flow_bytes run[] = {FB(1, 3000), FB(2, 1500)};
    qr_flow_bytes rep[] = {FB(1, 1500), FB(3, 4500)};
    uint64_t d, sym;
    cr_assert_eq(qr_qdiff(run, 2, rep, 2, &d, &sym), QR_OK);
    cr_assert_eq(d, 3000);
    cr_assert_eq(sym, 7500);
    /* identical queues */
    cr_assert_eq(qr_qdiff(run, 2, run, 2, &d, &sym), QR_OK);
    cr_assert_eq(d, 0);
    cr_assert_eq(sym, 0);
    /* empty replay queue: everything in the runtime's counts */
    cr_assert_eq(qr_qdiff(run, 2, NULL, 0, &d, &sym), QR_OK);
    cr_assert_eq(d, 4500);
    cr_assert_eq(sym, 4500);
    /* empty runtime queue: qdiff 0, symmetric sees the replay's */
    cr_assert_eq(qr_qdiff(NULL, 0, rep, 2, &d, &sym), QR_OK);
    cr_assert_eq(d, 0);
    cr_assert_eq(sym, 6000);
    /* unsorted input is refused */
    qr_flow_bytes bad[] = {FB(2, 1), FB(1, 1)};
    cr_assert_eq(qr_qdiff(bad, 2, rep, 2, &d, &sym), QR_EORDER);
}

Test(metrics, exact_summary_nearest_rank)
{
    uint64_t v[] = {5, 1, 0, 3, 2, 4, 0, 9, 8, 7};
    qr_summary s;
    cr_assert_eq(qr_summary_exact(v, 10, &s), QR_OK);
    cr_assert_eq(s.count, 10);
    cr_assert_eq(s.zeros, 2);
    cr_assert_float_eq(s.mean, 3.9, 1e-12);
    cr_assert_float_eq(s.p50, 3.0, 0); /* sorted 0 0 1 2 3 4 5 7 8 9: rank 5 -> 3 */
    cr_assert_float_eq(s.p99, 9.0, 0);
    cr_assert_float_eq(s.max, 9.0, 0);
    cr_assert_eq(qr_summary_exact(v, 0, &s), QR_OK);
    cr_assert_eq(s.count, 0);
}

Test(metrics, histogram_matches_exact_summary_within_bound)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    for (int trial = 0; trial < 20; trial++) {
        size_t n = 1 + gsl_rng_uniform_int(r, 50000);
        uint64_t *v = malloc(n * sizeof *v);
        qr_hist *h;
        cr_assert_eq(qr_hist_create(&h), QR_OK);
        for (size_t i = 0; i < n; i++) {
            /* many zeros, small values and a heavy tail up to ~2 MB */
            double u = gsl_rng_uniform(r);
            v[i] = u < 0.3 ? 0 : (uint64_t)(pow(10, 6.3 * gsl_rng_uniform(r)));
            cr_assert_eq(qr_hist_add(h, v[i]), QR_OK);
        }
        qr_summary e, s;
        qr_summary_exact(v, n, &e);
        qr_hist_summary(h, 1.0, &s);
        cr_assert_eq(s.count, e.count);
        cr_assert_eq(s.zeros, e.zeros);
        cr_assert_float_eq(s.mean, e.mean, 1e-9 * (1 + e.mean));
        cr_assert_float_eq(s.max, e.max, 0);
        cr_assert_leq(fabs(s.p50 - e.p50), e.p50 * QR_HIST_REL_ERROR + (e.p50 < 256 ? 0 : 1),
                      "p50 %g vs %g", s.p50, e.p50);
        cr_assert_leq(fabs(s.p99 - e.p99), e.p99 * QR_HIST_REL_ERROR + (e.p99 < 256 ? 0 : 1),
                      "p99 %g vs %g", s.p99, e.p99);
        if (e.p50 < 256)
            cr_assert_float_eq(s.p50, e.p50, 0, "exact below 256");
        free(v);
        qr_hist_destroy(h);
    }
    gsl_rng_free(r);
}

static qr_snapshot snap(uint64_t pkt, uint32_t sw, uint32_t port, int64_t t, const qr_flow_bytes *f,
                        size_t n)
{
    return (qr_snapshot){
        .packet = pkt, .queue = {sw, port}, .time_ns = t, .flows = f, .n_flows = n};
}

Test(metrics, match_pairs_by_packet_and_queue)
{
    qr_flow_bytes a[] = {FB(1, 1500)}, b[] = {FB(1, 3000)}, c[] = {FB(2, 1500)};
    /* packet 7 crosses two queues; packet 8 only reaches queue (1,0) in the runtime */
    qr_snapshot run[] = {snap(7, 1, 0, 100, a, 1), snap(7, 2, 3, 200, b, 1),
                         snap(8, 1, 0, 150, c, 1)};
    qr_snapshot rep[] = {snap(7, 2, 3, 210, a, 1), snap(7, 1, 0, 101, a, 1)};
    qr_qdiff_row *rows;
    size_t n;
    cr_assert_eq(qr_qdiff_match(run, 3, rep, 2, &rows, &n), QR_OK);
    cr_assert_eq(n, 2);
    cr_assert_eq(rows[0].packet, 7);
    cr_assert_eq(rows[0].queue.sw, 2);
    cr_assert_eq(rows[0].queue.port, 3);
    cr_assert_eq(rows[0].qdiff_bytes, 1500);
    cr_assert_eq(rows[0].time_run_ns, 200);
    cr_assert_eq(rows[0].time_rep_ns, 210);
    cr_assert_eq(rows[1].queue.sw, 1);
    cr_assert_eq(rows[1].qdiff_bytes, 0);
    qr_qdiff_rows_free(rows);
    /* the same (packet, queue) twice from one run is an error */
    qr_snapshot dup[] = {snap(7, 1, 0, 100, a, 1), snap(7, 1, 0, 100, a, 1)};
    cr_assert_eq(qr_qdiff_match(dup, 2, rep, 0, &rows, &n), QR_EDUP);
}

Test(metrics, stream_summaries_per_queue_and_overall)
{
    qr_qdiff_stream *m;
    cr_assert_eq(qr_qdiff_stream_create(&m), QR_OK);
    qr_flow_bytes zero[] = {FB(1, 1500)}, two[] = {FB(1, 4500)};
    qr_qdiff_row row;
    int matched;
    /* queue (1,1): qdiffs 0, 2 MTU; queue (2,2): qdiff 2 MTU */
    qr_snapshot s1 = snap(1, 1, 1, 0, zero, 1), s2 = snap(2, 1, 1, 0, zero, 1),
                s3 = snap(3, 2, 2, 0, zero, 1);
    qr_snapshot r1 = snap(1, 1, 1, 0, zero, 1), r2 = snap(2, 1, 1, 0, two, 1),
                r3 = snap(3, 2, 2, 0, two, 1);
    cr_assert_eq(qr_qdiff_stream_add(m, QR_RUN_REPLAY, &r1, &row, &matched), QR_OK);
    cr_assert_eq(matched, 0);
    cr_assert_eq(qr_qdiff_stream_add(m, QR_RUN_RUNTIME, &s1, &row, &matched), QR_OK);
    cr_assert_eq(matched, 1);
    cr_assert_eq(row.qdiff_bytes, 0);
    qr_qdiff_stream_add(m, QR_RUN_RUNTIME, &s2, &row, &matched);
    qr_qdiff_stream_add(m, QR_RUN_RUNTIME, &s3, &row, &matched);
    qr_qdiff_stream_add(m, QR_RUN_REPLAY, &r2, &row, &matched);
    cr_assert_eq(row.qdiff_bytes, 3000);
    cr_assert_eq(row.qlen_diff_bytes, 3000);
    qr_qdiff_stream_add(m, QR_RUN_REPLAY, &r3, &row, &matched);
    qr_qlen_diff len;
    qr_qdiff_stream_qlen(m, &len);
    cr_assert_eq(len.count, 3);
    cr_assert_eq(len.longer, 2);
    cr_assert_eq(len.equal, 1);
    cr_assert_eq(len.shorter, 0);
    cr_assert_float_eq(len.mean_mtu, 4.0 / 3.0, 1e-12);
    qr_row_queue_summary *qrows;
    size_t nq;
    cr_assert_eq(qr_qdiff_stream_queue_rows(m, &qrows, &nq), QR_OK);
    cr_assert_eq(nq, 2);
    cr_assert_float_eq(qrows[0].len_diff_mean, 1.0, 1e-12);
    cr_assert_float_eq(qrows[0].len_longer, 0.5, 1e-12);
    cr_assert_float_eq(qrows[1].len_diff_mean, 2.0, 1e-12);
    cr_assert_float_eq(qrows[1].len_shorter, 0.0, 1e-12);
    free(qrows);
    qr_summary all, sym;
    qr_qdiff_stream_summary(m, &all, &sym);
    cr_assert_eq(all.count, 3);
    cr_assert_eq(all.zeros, 1);
    cr_assert_float_eq(all.mean, 4.0 / 3.0, 1e-12);
    cr_assert_float_eq(all.max, 2.0, 1e-12);
    cr_assert_eq(qr_qdiff_stream_queues(m), 2);
    qr_location q;
    qr_summary qs;
    cr_assert_eq(qr_qdiff_stream_queue(m, 0, &q, &qs, NULL), QR_OK);
    cr_assert_eq(q.sw, 1);
    cr_assert_eq(qs.count, 2);
    cr_assert_float_eq(qs.mean, 1.0, 1e-12);
    cr_assert_eq(qr_qdiff_stream_queue(m, 1, &q, &qs, NULL), QR_OK);
    cr_assert_eq(q.sw, 2);
    cr_assert_float_eq(qs.mean, 2.0, 1e-12);
    cr_assert_eq(qr_qdiff_stream_queue(m, 2, &q, &qs, NULL), QR_EINVAL);
    uint64_t po, pr;
    qr_qdiff_stream_pending(m, &po, &pr);
    cr_assert_eq(po + pr, 0);
    qr_qdiff_stream_destroy(m);
}

/* Property: random snapshots fed in a random interleaving give the same rows as the batch
 * computation, and memory (pending snapshots) stays bounded by the interleaving's lag, not the
 * number of arrivals. */
Test(metrics, property_stream_equals_batch_with_bounded_memory, .timeout = 120)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    const size_t n = 200000, lag = 64;
    qr_flow_bytes *fr = malloc(n * 4 * sizeof *fr), *fp = malloc(n * 4 * sizeof *fp);
    qr_snapshot *run = malloc(n * sizeof *run), *rep = malloc(n * sizeof *rep);
    for (size_t i = 0; i < n; i++) {
        size_t k = gsl_rng_uniform_int(r, 4);
        for (size_t j = 0; j < k; j++) {
            fr[4 * i + j] =
                FB(10 * j + gsl_rng_uniform_int(r, 10), 1500 * gsl_rng_uniform_int(r, 20));
            fp[4 * i + j] = FB(fr[4 * i + j].flow, 1500 * gsl_rng_uniform_int(r, 20));
        }
        run[i] = snap(i, (uint32_t)(i % 5), (uint32_t)(i % 3), (int64_t)i, fr + 4 * i, k);
        rep[i] = snap(i, (uint32_t)(i % 5), (uint32_t)(i % 3), (int64_t)i + 7, fp + 4 * i, k);
    }
    qr_qdiff_row *rows;
    size_t nrows;
    cr_assert_eq(qr_qdiff_match(run, n, rep, n, &rows, &nrows), QR_OK);
    cr_assert_eq(nrows, n);
    qr_qdiff_stream *m;
    qr_qdiff_stream_create(&m);
    uint64_t *vals = malloc(n * sizeof *vals);
    size_t got = 0, max_pending = 0;
    int64_t len_sum = 0;
    uint64_t longer = 0, shorter = 0;
    size_t i_run = 0, i_rep = 0;
    while (i_run < n || i_rep < n) {
        /* the replay trails the runtime by up to `lag` arrivals */
        int can_run = i_run < n && i_run - i_rep < lag;
        int can_rep = i_rep < i_run;
        int take_run = can_run && (!can_rep || gsl_rng_uniform(r) < 0.5);
        qr_qdiff_row row;
        int matched;
        if (take_run)
            cr_assert_eq(qr_qdiff_stream_add(m, QR_RUN_RUNTIME, &run[i_run++], &row, &matched),
                         QR_OK);
        else
            cr_assert_eq(qr_qdiff_stream_add(m, QR_RUN_REPLAY, &rep[i_rep++], &row, &matched),
                         QR_OK);
        if (matched) {
            cr_assert_eq(row.qdiff_bytes, rows[row.packet].qdiff_bytes);
            cr_assert_eq(row.qdiff_sym_bytes, rows[row.packet].qdiff_sym_bytes);
            /* the signed length difference is the replay's total minus the runtime's */
            int64_t d = 0;
            for (size_t j = 0; j < run[row.packet].n_flows; j++)
                d += (int64_t)rep[row.packet].flows[j].bytes -
                     (int64_t)run[row.packet].flows[j].bytes;
            cr_assert_eq(row.qlen_diff_bytes, d);
            cr_assert_eq(rows[row.packet].qlen_diff_bytes, d);
            len_sum += d;
            longer += d > 0;
            shorter += d < 0;
            vals[got++] = row.qdiff_bytes;
        }
        uint64_t po, pr;
        qr_qdiff_stream_pending(m, &po, &pr);
        if (po + pr > max_pending)
            max_pending = po + pr;
    }
    cr_assert_eq(got, n);
    cr_assert_leq(max_pending, lag, "pending snapshots %zu exceed the lag", max_pending);
    qr_summary e, s;
    qr_summary_exact(vals, n, &e);
    qr_qdiff_stream_summary(m, &s, NULL);
    cr_assert_float_eq(s.mean, e.mean / QR_MTU_BYTES, 1e-9);
    cr_assert_float_eq(s.max, e.max / QR_MTU_BYTES, 1e-12);
    cr_assert_leq(fabs(s.p99 - e.p99 / QR_MTU_BYTES),
                  e.p99 / QR_MTU_BYTES * QR_HIST_REL_ERROR + 1e-9);
    qr_qlen_diff len;
    qr_qdiff_stream_qlen(m, &len);
    cr_assert_eq(len.count, n);
    cr_assert_eq(len.longer, longer);
    cr_assert_eq(len.shorter, shorter);
    cr_assert_eq(len.equal, n - longer - shorter);
    cr_assert_float_eq(len.mean_mtu, (double)len_sum / (double)n / QR_MTU_BYTES, 1e-9);
    cr_log_info("streamed %zu pairs, at most %zu snapshots pending", n, max_pending);
    qr_qdiff_stream_destroy(m);
    free(vals);
    qr_qdiff_rows_free(rows);
    free(run);
    free(rep);
    free(fr);
    free(fp);
    gsl_rng_free(r);
}

Test(metrics, drop_error_hand_computed)
{
    qr_droperr *d;
    cr_assert_eq(qr_droperr_create(&d), QR_OK);
    qr_location a = {1, 2}, b = {3, 4};
    /* runtime drops 1@a 2@a 3@a 4@b; replay drops 1@a (match) 3@b (wrong place) 5@a (false drop);
     * 2 and 4 are false accepts. Either run: {1,2,3,4,5} = 5. Error = (2 + 1 + 1) / 5. */
    qr_droperr_add(d, QR_RUN_RUNTIME, 1, a);
    qr_droperr_add(d, QR_RUN_RUNTIME, 2, a);
    qr_droperr_add(d, QR_RUN_REPLAY, 3, b); /* order between runs does not matter */
    qr_droperr_add(d, QR_RUN_RUNTIME, 3, a);
    qr_droperr_add(d, QR_RUN_RUNTIME, 4, b);
    qr_droperr_add(d, QR_RUN_REPLAY, 1, a);
    qr_droperr_add(d, QR_RUN_REPLAY, 5, a);
    cr_assert_eq(qr_droperr_add(d, QR_RUN_REPLAY, 5, a), QR_EDUP);
    qr_drop_counts c;
    qr_droperr_result(d, &c);
    cr_assert_eq(c.runtime_drops, 4);
    cr_assert_eq(c.replay_drops, 3);
    cr_assert_eq(c.either, 5);
    cr_assert_eq(c.false_accepts, 2);
    cr_assert_eq(c.false_drops, 1);
    cr_assert_eq(c.wrong_locations, 1);
    cr_assert_float_eq(c.error, 4.0 / 5.0, 1e-12);
    qr_droperr_destroy(d);
    /* no drops at all: error 0 */
    qr_droperr_create(&d);
    qr_droperr_result(d, &c);
    cr_assert_eq(c.either, 0);
    cr_assert_float_eq(c.error, 0.0, 0);
    qr_droperr_destroy(d);
}

Test(metrics, drop_error_perfect_replay_is_zero)
{
    qr_droperr *d;
    qr_droperr_create(&d);
    for (uint64_t p = 0; p < 10000; p += 3) {
        qr_location l = {(uint32_t)(p % 7), (uint32_t)(p % 4)};
        qr_droperr_add(d, QR_RUN_RUNTIME, p, l);
        qr_droperr_add(d, QR_RUN_REPLAY, p, l);
    }
    qr_drop_counts c;
    qr_droperr_result(d, &c);
    cr_assert_eq(c.error, 0.0);
    cr_assert_eq(c.runtime_drops, c.replay_drops);
    qr_droperr_destroy(d);
}

/* The one percentile rule, by hand and against a brute-force definition. */
Test(metrics, percentile_rule)
{
    cr_assert_eq(qr_percentile_rank(0.5, 10), 5);
    cr_assert_eq(qr_percentile_rank(0.99, 100), 99);
    cr_assert_eq(qr_percentile_rank(0.99, 1000), 990);
    cr_assert_eq(qr_percentile_rank(0.99, 1), 1);
    cr_assert_eq(qr_percentile_rank(0.0, 7), 1);
    cr_assert_eq(qr_percentile_rank(1.0, 7), 7);
    cr_assert_eq(qr_percentile_rank(0.5, 0), 0);
    int64_t v[] = {10, 20, 30, 40};
    cr_assert_eq(qr_percentile_i64(v, 4, 0.5), 20);
    cr_assert_eq(qr_percentile_i64(v, 4, 0.99), 40);
    cr_assert_eq(qr_percentile_i64(NULL, 0, 0.5), 0);
    /* nearest rank: the smallest value with at least p*n values at or below it */
    for (uint64_t n = 1; n < 500; n++)
        for (int k = 1; k < 100; k++) {
            double p = k / 100.0;
            uint64_t r = qr_percentile_rank(p, n);
            cr_assert((double)r >= p * (double)n - 1e-9 && (double)(r - 1) < p * (double)n,
                      "n %llu p %.2f rank %llu", (unsigned long long)n, p, (unsigned long long)r);
        }
}

Test(metrics, busiest_queue_ties_to_the_smallest)
{
    qr_queue_counter *c;
    uint32_t sw, port;
    uint64_t n;
    cr_assert_eq(qr_queue_counter_create(&c), QR_OK);
    cr_assert_eq(qr_queue_counter_busiest(c, &sw, &port, &n), QR_ENOTFOUND);
    for (int i = 0; i < 3; i++) {
        qr_queue_counter_add(c, 5, 1);
        qr_queue_counter_add(c, 2, 7);
    }
    qr_queue_counter_add(c, 9, 0);
    cr_assert_eq(qr_queue_counter_busiest(c, &sw, &port, &n), QR_OK);
    cr_assert(sw == 2 && port == 7 && n == 3, "%u %u %llu", sw, port, (unsigned long long)n);
    qr_queue_counter_add(c, 5, 1);
    qr_queue_counter_busiest(c, &sw, &port, &n);
    cr_assert(sw == 5 && port == 1 && n == 4);
    qr_queue_counter_destroy(c);
}

Test(metrics, fct_summary_of_completed_flows)
{
    qr_row_flow f[5];
    memset(f, 0, sizeof f);
    int64_t fct[] = {300, -1, 100, 200, 400};
    for (int i = 0; i < 5; i++)
        f[i].fct_ns = fct[i];
    qr_fct_summary s;
    cr_assert_eq(qr_fct_summarize(f, 5, &s), QR_OK);
    cr_assert_eq(s.completed, 4);
    cr_assert_eq(s.median_ns, 200);
    cr_assert_eq(s.p99_ns, 400);
    cr_assert_eq(s.max_ns, 400);
    cr_assert_eq(qr_fct_summarize(f + 1, 1, &s), QR_OK);
    cr_assert_eq(s.completed, 0);
}

/* The busy period: the longest run of arrivals finding the queue non-empty, the earliest of equal
 * ones; what it held, and the least once 1 ms into it. */
Test(busy_period, longest_earliest_run_and_settled_minimum)
{
    qr_row_queue_series s[] = {{0, 0},         {10, 1500},      {20, 3000},     {30, 0},
                               {40, 1500},     {50, 1500},      {60, 0},        {1000000, 9000},
                               {1000040, 100}, {1000050, 4500}, {2000100, 200}, {2000200, 0}};
    qr_busy_period b;
    qr_busy_period_find(s, 12, &b);
    cr_assert_eq(b.arrivals, 4, "the run of 4 from 1 ms beats the two runs of 2");
    cr_assert_eq(b.start_ns, 1000000);
    cr_assert_eq(b.end_ns, 2000100);
    cr_assert_float_eq(b.share, 4.0 / 12, 1e-12);
    cr_assert_eq(b.min_queue_bytes, 100);
    cr_assert_eq(b.max_queue_bytes, 9000);
    cr_assert_eq(b.settled_min_queue_bytes, 200, "only arrivals 1 ms after its start count");
    qr_busy_period_find(s, 7, &b);
    cr_assert_eq(b.arrivals, 2, "equal runs: the earliest");
    cr_assert_eq(b.start_ns, 10);
    cr_assert_eq(b.settled_min_queue_bytes, -1, "it never lasted 1 ms");
    qr_row_queue_series idle[] = {{0, 0}, {5, 0}};
    qr_busy_period_find(idle, 2, &b);
    cr_assert_eq(b.arrivals, 0);
    qr_busy_period_find(NULL, 0, &b);
    cr_assert_eq(b.arrivals, 0);
}

/* The send-time lag: replay minus runtime time, its median early in the period and settled. */
Test(busy_period, lag_medians_by_part_of_the_period)
{
    qr_busy_period b = {.arrivals = 10, .start_ns = 1000, .end_ns = 3000000};
    qr_lag lag;
    qr_lag_init(&lag, &b);
    cr_assert_eq(qr_lag_add(&lag, 999, 99999), QR_OK);       /* before the period: not counted */
    cr_assert_eq(qr_lag_add(&lag, 1000, 1300), QR_OK);       /* early: 300 */
    cr_assert_eq(qr_lag_add(&lag, 2000, 2100), QR_OK);       /* early: 100 */
    cr_assert_eq(qr_lag_add(&lag, 3000, 3500), QR_OK);       /* early: 500 */
    cr_assert_eq(qr_lag_add(&lag, 600000, 700000), QR_OK);   /* neither part */
    cr_assert_eq(qr_lag_add(&lag, 1001000, 1001007), QR_OK); /* settled: 7 */
    cr_assert_eq(qr_lag_add(&lag, 3000000, 2999990), QR_OK); /* settled: -10 (ends inclusive) */
    cr_assert_eq(qr_lag_add(&lag, 3000001, 3000901), QR_OK); /* after it: not counted */
    int64_t early, settled;
    int has_early, has_settled;
    qr_lag_medians(&lag, &early, &has_early, &settled, &has_settled);
    cr_assert(has_early && has_settled);
    cr_assert_eq(early, 300);
    cr_assert_eq(settled, -10, "nearest rank of 2 values at p50 is the first");
    qr_lag_free(&lag);
    qr_busy_period none = {0};
    qr_lag_init(&lag, &none);
    cr_assert_eq(qr_lag_add(&lag, 5, 6), QR_OK);
    qr_lag_medians(&lag, &early, &has_early, &settled, &has_settled);
    cr_assert(!has_early && !has_settled, "no period: no lag");
    qr_lag_free(&lag);
}
