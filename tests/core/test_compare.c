/* The butterfly and isolated-replay comparisons: divergence, short flow, FCT within 1%, drop
 * sets, the typical replay, sigma summaries, packet sequences, the arrival index. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "qreplay/compare.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"

Test(compare, divergence_hand_computed)
{
    qr_divergence d;
    qr_divergence_init(&d);
    cr_assert_eq(qr_divergence_zero_after(&d), 1.0);
    cr_assert_eq(qr_divergence_add(&d, 10, 1500, 1500), 0);
    cr_assert_eq(d.first_ns, -1);
    cr_assert_eq(qr_divergence_add(&d, 20, 1500, 4500), 3000);
    cr_assert_eq(qr_divergence_add(&d, 30, 3000, 3000), 0);
    cr_assert_eq(qr_divergence_add(&d, 40, 9000, 0), 9000);
    cr_assert_eq(d.matched, 4);
    cr_assert_eq(d.first_ns, 20);
    cr_assert_eq(d.after, 3);
    cr_assert_eq(d.zero_after, 1);
    cr_assert_eq(d.max_diff_bytes, 9000);
    cr_assert_float_eq(qr_divergence_zero_after(&d), 1.0 / 3, 1e-15);
}

Test(compare, short_flow_and_fct)
{
    qr_flow f[] = {
        {0, 0, 1, 500, 0, 0}, {1, 0, 1, 100, 0, 0}, {2, 1, 0, 100, 0, 0}, {3, 1, 0, 900, 0, 0}};
    cr_assert_eq(qr_short_flow(f, 4), 2, "fewest bytes, the latest on ties");
    cr_assert_eq(qr_short_flow(f, 1), 0);
    cr_assert(qr_fct_reproduced(1000000, 1010000));
    cr_assert(qr_fct_reproduced(1000000, 990000));
    cr_assert_not(qr_fct_reproduced(1000000, 1010001));
    cr_assert_not(qr_fct_reproduced(1000000, -1));
    cr_assert_not(qr_fct_reproduced(-1, -1));
    cr_assert(qr_fct_reproduced(0, 0));
}

Test(compare, drop_sets)
{
    qr_drop_key a[] = {{5, qr_queue_key(1, 2)}, {3, qr_queue_key(0, 1)}, {5, qr_queue_key(0, 9)}};
    qr_drop_key b[] = {{5, qr_queue_key(0, 9)}, {5, qr_queue_key(1, 2)}, {3, qr_queue_key(0, 1)}};
    qr_drop_keys_sort(a, 3);
    qr_drop_keys_sort(b, 3);
    cr_assert_eq(a[0].packet, 3);
    cr_assert(a[1].packet == 5 && a[1].queue == qr_queue_key(0, 9));
    cr_assert(qr_drop_sets_equal(a, 3, b, 3));
    cr_assert_not(qr_drop_sets_equal(a, 3, b, 2));
    b[2].queue = qr_queue_key(1, 3); /* the same packet at another place */
    cr_assert_not(qr_drop_sets_equal(a, 3, b, 3));
    cr_assert(qr_drop_sets_equal(NULL, 0, NULL, 0));
}

static qr_row_butterfly_replay R(uint32_t replay, int64_t first, uint8_t same_short,
                                 uint8_t same_run, double zero)
{
    qr_row_butterfly_replay r = {0};
    r.sigma_ns = 10;
    r.replay = replay;
    r.first_divergence_ns = first;
    r.short_reproduced = same_short;
    r.run_reproduced = same_run;
    r.zero_after_divergence = zero;
    return r;
}

Test(compare, typical_replay_and_sigma_summary)
{
    qr_row_butterfly_replay rows[] = {R(1, 500, 1, 0, 0.5), R(2, -1, 1, 1, 1.0),
                                      R(3, 100, 0, 0, 0.0), R(4, 300, 0, 0, 0.25),
                                      R(5, 300, 1, 0, 0.25)};
    /* by first divergence: 3 (100), 4 and 5 (300, by number), 1 (500), 2 (never): middle is 5 */
    cr_assert_eq(qr_typical_replay(rows, 5), 5);
    cr_assert_eq(qr_typical_replay(rows, 2), 2, "of two, index 1: the one that never diverged");
    qr_row_butterfly_sigma s;
    qr_butterfly_sigma_summary(rows, 5, &s);
    cr_assert_eq(s.sigma_ns, 10);
    cr_assert_eq(s.replays, 5);
    cr_assert_float_eq(s.short_reproduced_pct, 60.0, 1e-12);
    cr_assert_float_eq(s.run_reproduced_pct, 20.0, 1e-12);
    cr_assert_float_eq(s.zero_after_divergence_mean, 0.4, 1e-12);
    cr_assert_eq(s.typical_replay, 5);
}

static qr_tcp_sent P(uint32_t seq, int64_t t)
{
    qr_tcp_sent p = {0x10, seq, 1, 100, 1500, t};
    return p;
}

Test(compare, sequences)
{
    qr_tcp_sent want0[] = {P(1, 0), P(2, 10), P(3, 20)}, want1[] = {P(9, 5)};
    qr_tcp_sent got0[] = {P(1, 3), P(2, 10), P(3, 27)}, got1[] = {P(9, 4)};
    const qr_tcp_sent *const w[2] = {want0, want1}, *const g[2] = {got0, got1};
    size_t nw[2] = {3, 1}, ng[2] = {3, 1};
    qr_seq_result r;
    cr_assert_eq(qr_compare_sequences(w, nw, g, ng, &r), QR_OK);
    cr_assert(r.identical);
    cr_assert_eq(r.first_mismatch, -1);
    cr_assert_eq(r.max_send_diff_ns, 7);
    cr_assert_eq(r.p99_send_diff_ns, 7, "p99 of {0,1,3,7} by nearest rank is the 4th");
    got0[1].window = 99; /* a header differs */
    cr_assert_eq(qr_compare_sequences(w, nw, g, ng, &r), QR_OK);
    cr_assert_not(r.identical);
    cr_assert_eq(r.first_mismatch, 1);
    got0[1].window = 100;
    ng[0] = 2; /* the replay sent fewer packets */
    cr_assert_eq(qr_compare_sequences(w, nw, g, ng, &r), QR_OK);
    cr_assert_not(r.identical);
    cr_assert_eq(r.first_mismatch, 2);
}

/* Property: the index returns the last bytes put for every (packet, queue). */
Test(compare, arrival_index_property)
{
    qr_arrival_index *x;
    cr_assert_eq(qr_arrival_index_create(&x), QR_OK);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    enum { N = 20000 };
    static uint64_t bytes[N];
    for (int i = 0; i < 3 * N; i++) {
        uint64_t p = gsl_rng_uniform_int(r, N), b = gsl_rng_get(r);
        cr_assert_eq(qr_arrival_index_put(x, p, qr_queue_key((uint32_t)p % 7, 1), b), QR_OK);
        bytes[p] = b + 1;
    }
    size_t present = 0;
    for (uint64_t p = 0; p < N; p++) {
        uint64_t b;
        int rc = qr_arrival_index_get(x, p, qr_queue_key((uint32_t)p % 7, 1), &b);
        if (bytes[p]) {
            present++;
            cr_assert_eq(rc, QR_OK);
            cr_assert_eq(b, bytes[p] - 1);
        } else {
            cr_assert_eq(rc, QR_ENOTFOUND);
        }
        cr_assert_eq(qr_arrival_index_get(x, p, qr_queue_key((uint32_t)p % 7, 2), &b), QR_ENOTFOUND,
                     "another queue is another key");
    }
    cr_assert_eq(qr_arrival_index_size(x), present);
    gsl_rng_free(r);
    qr_arrival_index_destroy(x);
}
