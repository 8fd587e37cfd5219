/* Sampling: rate-based keeps every inferred time within th (property, 10^6+ packets with bursts and
 * rate changes); gap-based breaks that bound when the rate changes inside a burst. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/sampler.h"
#include "qreplay/synth.h"

/* Sample times[0..n) with qr_sample_series and return the records (malloc'd) and their count;
 * the series' own max error must equal the one computed record by record. */
static int64_t max_error(const qr_sample_record *recs, size_t nr, const int64_t *times, size_t n);

static qr_sample_record *sample(qr_sampling_method m, int64_t th, const int64_t *times, size_t n,
                                size_t *n_recs)
{
    qr_sampler *s;
    qr_sampler_cfg cfg = {.method = m, .th_ns = th};
    cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
    qr_sample_record *recs = malloc((n + 1) * sizeof *recs);
    int64_t *inferred = malloc((n + 1) * sizeof *inferred);
    int64_t worst = -1;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_sample_series(s, times, n, recs, n_recs, inferred, &worst, err), QR_OK, "%s",
                 err);
    cr_assert_leq(*n_recs, n, "a direction never needs more records than packets");
    cr_assert_eq(qr_sampler_packets(s), n);
    if (n) {
        cr_assert_eq(worst, max_error(recs, *n_recs, times, n));
        for (size_t i = 0; i < n; i++) {
            int64_t t;
            qr_sample_infer(recs, *n_recs, i, &t);
            cr_assert_eq(inferred[i], t, "packet %zu", i);
        }
    } else {
        cr_assert_eq(worst, 0);
    }
    free(inferred);
    qr_sampler_destroy(s);
    return recs;
}

/* Largest |inferred - true| over the flow, checking both inference functions agree. */
static int64_t max_error(const qr_sample_record *recs, size_t nr, const int64_t *times, size_t n)
{
    int64_t worst = 0;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t a, b;
        cr_assert_eq(qr_sample_infer(recs, nr, i, &a), QR_OK);
        cr_assert_eq(qr_sample_infer_next(recs, nr, &pos, i, &b), QR_OK);
        cr_assert_eq(a, b, "packet %zu: %lld vs %lld", i, (long long)a, (long long)b);
        int64_t e = llabs(a - times[i]);
        if (e > worst)
            worst = e;
    }
    return worst;
}

Test(sampler, constant_rate_needs_one_record)
{
    int64_t t[100];
    for (int i = 0; i < 100; i++)
        t[i] = 1000 + 1200 * i;
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_RATE, 0, t, 100, &nr);
    cr_assert_eq(nr, 1);
    cr_assert_eq(r[0].index, 0);
    cr_assert_eq(r[0].time_ns, 1000);
    cr_assert_eq(r[0].gap_num, 1200 * r[0].gap_den);
    cr_assert_eq(max_error(r, nr, t, 100), 0);
    free(r);
}

Test(sampler, hand_computed_segments)
{
    /* th = 10: packets 0..2 fit gap 100 +- 5; packet 3 at 500 cannot (needs gap >= 163.3). */
    int64_t t[] = {0, 100, 200, 500, 600};
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_RATE, 10, t, 5, &nr);
    cr_assert_eq(nr, 2);
    cr_assert_eq(r[0].index, 0);
    cr_assert_eq(r[0].time_ns, 0);
    /* G = [90,110] ∩ [95,105] = [95,105] -> midpoint 100 */
    cr_assert_eq(r[0].gap_num, 100 * r[0].gap_den);
    cr_assert_eq(r[1].index, 3);
    cr_assert_eq(r[1].time_ns, 500);
    cr_assert_eq(r[1].gap_num, 100 * r[1].gap_den); /* [90,110] */
    cr_assert(r[0].gap_num == 100 && r[0].gap_den == 1);
    free(r);
}

/* A fractional gap is kept exactly: th = 1, packets at 0, 3, 5 give G = [2, 4] ∩ [2, 3] = [2, 3]
 * and the midpoint 5/2; packet 1 infers to round(2.5) = 3 (half away from zero). */
Test(sampler, fractional_gap_is_exact)
{
    int64_t t[] = {0, 3, 5};
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_RATE, 1, t, 3, &nr);
    cr_assert_eq(nr, 1);
    cr_assert(r[0].gap_num == 5 && r[0].gap_den == 2, "%lld/%lld", (long long)r[0].gap_num,
              (long long)r[0].gap_den);
    int64_t x;
    cr_assert_eq(qr_sample_infer(r, nr, 1, &x), QR_OK);
    cr_assert_eq(x, 3);
    free(r);
}

/* Regression: on Unix-epoch nanosecond timestamps double arithmetic lost up to 256 ns
 * (th = 0 gave 224 ns, th = 5 us gave 5168 ns). Property: flows placed anywhere in [0, 2^62],
 * with steady, jittered and huge gaps, keep every inferred time within th exactly. */
Test(sampler, bound_holds_on_absolute_timestamps_over_the_whole_range)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 2026);
    enum { N = 20000 };
    static int64_t t[N];
    const int64_t ths[] = {0, 1, 2000, 5000, 10000, (int64_t)1 << 40};
    for (int flow = 0; flow < 60; flow++) {
        int kind = flow % 3;
        uint64_t span_max = kind == 2 ? (uint64_t)1 << 58 : (uint64_t)1 << 40;
        int64_t base;
        if (flow % 4 == 0)
            base = QR_TIME_MAX - (int64_t)span_max; /* right at the top */
        else if (flow % 4 == 1)
            base = 1700000000000000000LL + (int64_t)gsl_rng_uniform_int(g, 1000000000);
        else
            base = (int64_t)(gsl_rng_uniform(g) * (double)(QR_TIME_MAX - (int64_t)span_max));
        int64_t x = base;
        for (int i = 0; i < N; i++) {
            t[i] = x;
            uint64_t step = kind == 0   ? 1200 + gsl_rng_uniform_int(g, 700)
                            : kind == 1 ? (gsl_rng_uniform(g) < 0.01 ? 1000000000 : 1231)
                                        : ((uint64_t)1 << 38) + gsl_rng_uniform_int(g, 1 << 20);
            x += (int64_t)step;
        }
        cr_assert_leq(t[N - 1], QR_TIME_MAX);
        for (size_t j = 0; j < sizeof ths / sizeof ths[0]; j++) {
            size_t nr;
            qr_sample_record *r = sample(QR_SAMPLING_RATE, ths[j], t, N, &nr);
            int64_t e = max_error(r, nr, t, N);
            cr_assert_leq(e, ths[j], "flow %d (base %lld): th %lld, max error %lld", flow,
                          (long long)base, (long long)ths[j], (long long)e);
            free(r);
        }
    }
    gsl_rng_free(g);
}

Test(sampler, times_outside_the_accepted_range_are_refused)
{
    qr_sampler *s;
    qr_sampler_cfg cfg = {.method = QR_SAMPLING_RATE, .th_ns = 5000};
    qr_sample_record r;
    int e;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
    cr_assert_eq(qr_sampler_push(s, -1, &r, &e, err), QR_EVALUE);
    cr_assert(strstr(err, "packet 0"), "%s", err);
    cr_assert_eq(qr_sampler_push(s, QR_TIME_MAX, &r, &e, err), QR_OK);
    cr_assert_eq(qr_sampler_push(s, QR_TIME_MAX + 1, &r, &e, err), QR_EVALUE);
    cr_assert(strstr(err, "packet 1"), "%s", err);
    qr_sampler_destroy(s);
    qr_sampler_cfg big = {.method = QR_SAMPLING_RATE, .th_ns = QR_TIME_MAX + 1};
    cr_assert_eq(qr_sampler_create(&s, &big), QR_EINVAL);
}

Test(sampler, single_packet_and_empty_flows)
{
    int64_t t[] = {777};
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_RATE, 5000, t, 1, &nr);
    cr_assert_eq(nr, 1);
    cr_assert_eq(r[0].time_ns, 777);
    cr_assert_eq(r[0].gap_num, 0);
    free(r);
    r = sample(QR_SAMPLING_RATE, 5000, t, 0, &nr);
    cr_assert_eq(nr, 0);
    free(r);
    int64_t out;
    cr_assert_eq(qr_sample_infer(NULL, 0, 0, &out), QR_EINVAL);
}

Test(sampler, rejects_time_going_backwards)
{
    qr_sampler *s;
    qr_sampler_cfg cfg = {.method = QR_SAMPLING_RATE, .th_ns = 5000};
    cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
    qr_sample_record r;
    int e;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_sampler_push(s, 100, &r, &e, err), QR_OK);
    cr_assert_eq(qr_sampler_push(s, 200, &r, &e, err), QR_OK);
    cr_assert_eq(qr_sampler_push(s, 150, &r, &e, err), QR_EORDER);
    cr_assert(strstr(err, "packet 2"), "%s", err);
    qr_sampler_finish(s, &r, &e);
    cr_assert_eq(qr_sampler_push(s, 300, &r, &e, err), QR_ESTATE);
    qr_sampler_destroy(s);
    qr_sampler_cfg bad = {.method = QR_SAMPLING_RATE, .th_ns = -1};
    cr_assert_eq(qr_sampler_create(&s, &bad), QR_EINVAL);
}

/* The property: over seeded random traces of 10^6+ packets with bursts and rate changes, every
 * inferred time is within th. Also reports the compression at 2, 5 and 10 us. */
Test(sampler, property_rate_based_error_is_bounded, .timeout = 300)
{
    const size_t flows = 16, per_flow = 65536; /* 1,048,576 packets */
    int64_t *t = malloc(per_flow * sizeof *t);
    const int64_t ths[] = {0, 2000, 5000, 10000};
    for (size_t k = 0; k < 4; k++) {
        uint64_t packets = 0, records = 0;
        int64_t worst = 0;
        for (uint64_t f = 0; f < flows; f++) {
            qr_synth_cfg cfg = qr_synth_default(1000 + f);
            cfg.jitter_ns = 50 + (int64_t)(f * 30);
            cr_assert_eq(qr_synth_flow(&cfg, f, per_flow, t), QR_OK);
            size_t nr;
            qr_sample_record *r = sample(QR_SAMPLING_RATE, ths[k], t, per_flow, &nr);
            int64_t e = max_error(r, nr, t, per_flow);
            cr_assert_leq(e, ths[k], "th %lld ns, flow %llu: error %lld ns", (long long)ths[k],
                          (unsigned long long)f, (long long)e);
            worst = e > worst ? e : worst;
            packets += per_flow;
            records += nr;
            free(r);
        }
        cr_log_info("rate-based th=%lldns: %llu packets, %llu records, %.2f packets/record, "
                    "max error %lld ns",
                    (long long)ths[k], (unsigned long long)packets, (unsigned long long)records,
                    (double)packets / (double)records, (long long)worst);
        if (ths[k] > 0)
            cr_assert_gt(packets, 10 * records, "sampling at th %lld compresses",
                         (long long)ths[k]);
    }
    free(t);
}

Test(sampler, gap_based_breaks_the_bound_when_rate_changes_in_a_burst)
{
    /* One burst: 50 packets at 1.2 us, then 50 at 12 us, every gap below the 20 us threshold. */
    int64_t t[100];
    t[0] = 0;
    for (int i = 1; i < 100; i++)
        t[i] = t[i - 1] + (i < 50 ? 1200 : 12000);
    const int64_t th = 20000;
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_GAP, th, t, 100, &nr);
    cr_assert_eq(nr, 1, "one burst, one record");
    int64_t e = max_error(r, nr, t, 100);
    cr_log_info("gap-based on a rate change: max error %lld ns for th %lld ns", (long long)e,
                (long long)th);
    cr_assert_gt(e, th, "gap-based error %lld should exceed th %lld", (long long)e, (long long)th);
    free(r);
    /* rate-based on the same trace honours th */
    r = sample(QR_SAMPLING_RATE, th, t, 100, &nr);
    cr_assert_leq(max_error(r, nr, t, 100), th);
    free(r);
}

Test(sampler, gap_based_is_exact_on_uniform_bursts)
{
    int64_t t[20];
    for (int i = 0; i < 10; i++)
        t[i] = 1000 * i;
    for (int i = 10; i < 20; i++)
        t[i] = 1000000 + 500 * (i - 10);
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_GAP, 5000, t, 20, &nr);
    cr_assert_eq(nr, 2);
    cr_assert_eq(r[1].index, 10);
    cr_assert_eq(max_error(r, nr, t, 20), 0);
    free(r);
}

Test(sampler, exact_times_at_th_zero_on_synthetic_traces)
{
    int64_t t[20000];
    qr_synth_cfg cfg = qr_synth_default(7);
    cr_assert_eq(qr_synth_flow(&cfg, 0, 20000, t), QR_OK);
    size_t nr;
    qr_sample_record *r = sample(QR_SAMPLING_RATE, 0, t, 20000, &nr);
    cr_assert_eq(max_error(r, nr, t, 20000), 0);
    free(r);
}

Test(sampler, reset_starts_a_new_flow)
{
    qr_sampler *s;
    qr_sampler_cfg cfg = {.method = QR_SAMPLING_RATE, .th_ns = 0};
    qr_sampler_create(&s, &cfg);
    qr_sample_record r;
    int e;
    qr_sampler_push(s, 5000, &r, &e, NULL);
    qr_sampler_reset(s);
    cr_assert_eq(qr_sampler_push(s, 100, &r, &e, NULL), QR_OK); /* earlier time, new flow */
    cr_assert_eq(qr_sampler_packets(s), 1);
    qr_sampler_finish(s, &r, &e);
    cr_assert_eq(e, 1);
    cr_assert_eq(r.index, 0);
    cr_assert_eq(r.time_ns, 100);
    qr_sampler_destroy(s);
}

/* The whole-series function emits exactly what pushing packet by packet emits. */
Test(sampler, series_equals_push_by_push)
{
    int64_t t[4000];
    qr_synth_cfg sc = qr_synth_default(42);
    qr_synth_flow(&sc, 0, 4000, t);
    size_t nr;
    qr_sample_record *a = sample(QR_SAMPLING_RATE, 5000, t, 4000, &nr);
    qr_sampler *s;
    qr_sampler_cfg cfg = {.method = QR_SAMPLING_RATE, .th_ns = 5000};
    cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
    size_t k = 0;
    for (size_t i = 0; i <= 4000; i++) {
        qr_sample_record r;
        int e;
        if (i < 4000)
            qr_sampler_push(s, t[i], &r, &e, NULL);
        else
            qr_sampler_finish(s, &r, &e);
        if (e) {
            cr_assert_lt(k, nr);
            cr_assert(a[k].index == r.index && a[k].time_ns == r.time_ns &&
                          a[k].gap_num == r.gap_num && a[k].gap_den == r.gap_den,
                      "record %zu differs", k);
            k++;
        }
    }
    cr_assert_eq(k, nr);
    qr_sampler_destroy(s);
    free(a);
}

Test(sampler, series_rejects_time_going_back_naming_the_packet)
{
    int64_t t[] = {0, 100, 50};
    qr_sample_record r[3];
    size_t nr;
    qr_sampler *s;
    qr_sampler_cfg cfg = {.method = QR_SAMPLING_RATE, .th_ns = 0};
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
    cr_assert_eq(qr_sample_series(s, t, 3, r, &nr, NULL, NULL, err), QR_EORDER);
    cr_assert(strstr(err, "packet 2"), "%s", err);
    qr_sampler_destroy(s);
}

/* What a streamed reader asks of an open segment (qr_sampler_peek, qr_sampler_open_until): on
 * seeded random series, at every step the peeked record is the one finish would emit, a next
 * packet at exactly the open-until time joins the segment and one a nanosecond later closes it,
 * with the peeked record. */
static void open_until_case(qr_sampling_method m, int64_t th, uint64_t seed)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, seed);
    qr_sampler_cfg cfg = {.method = m, .th_ns = th};
    qr_sampler *s;
    cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
    int64_t t = 1000;
    size_t joins = 0, closes = 0;
    qr_sample_record r, peek;
    int e;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_sampler_peek(s, &peek), 0, "nothing is open before a packet");
    for (int i = 0; i < 3000; i++) {
        cr_assert_eq(qr_sampler_push(s, t, &r, &e, err), QR_OK, "%s", err);
        cr_assert_eq(qr_sampler_peek(s, &peek), 1);
        int64_t until;
        if (qr_sampler_open_until(s, &until)) {
            cr_assert_geq(until, t, "the segment closes before its own last packet");
            /* try both sides on copies of the sampler's state */
            for (int side = 0; side < 2; side++) {
                qr_sampler *c;
                cr_assert_eq(qr_sampler_create(&c, &cfg), QR_OK);
                qr_sampler_copy(c, s);
                cr_assert_eq(qr_sampler_push(c, until + side, &r, &e, err), QR_OK, "%s", err);
                cr_assert_eq(e, side, "a packet at open-until%s %s", side ? " + 1 ns" : "",
                             side ? "joined" : "closed the segment");
                if (side)
                    cr_assert(r.index == peek.index && r.time_ns == peek.time_ns &&
                                  r.gap_num == peek.gap_num && r.gap_den == peek.gap_den,
                              "the closed record is not the peeked one");
                qr_sampler_destroy(c);
            }
            joins++;
        } else {
            cr_assert_eq(m, QR_SAMPLING_RATE, "a gap segment always has a last joining time");
            cr_assert_eq(peek.index, qr_sampler_packets(s) - 1,
                         "only a one-packet rate segment "
                         "takes any next packet");
        }
        closes += (size_t)e;
        /* steady runs, jitter and pauses */
        double u = gsl_rng_uniform(g);
        t += u < 0.7    ? 1200 + (int64_t)gsl_rng_uniform_int(g, 2 * (unsigned long)th + 1)
             : u < 0.95 ? (int64_t)gsl_rng_uniform_int(g, 3 * (unsigned long)th + 1)
                        : 100000 + (int64_t)gsl_rng_uniform_int(g, 100000);
    }
    cr_assert_gt(joins, 100u);
    cr_assert_gt(closes, 10u);
    qr_sample_record fin;
    cr_assert_eq(qr_sampler_peek(s, &peek), 1);
    cr_assert_eq(qr_sampler_finish(s, &fin, &e), QR_OK);
    cr_assert(e && fin.index == peek.index && fin.gap_num == peek.gap_num &&
              fin.gap_den == peek.gap_den);
    qr_sampler_destroy(s);
    gsl_rng_free(g);
}

Test(sampler, the_open_segment_is_final_past_its_last_joining_time)
{
    open_until_case(QR_SAMPLING_RATE, 5000, 1);
    open_until_case(QR_SAMPLING_RATE, 2000, 2);
    open_until_case(QR_SAMPLING_RATE, 0, 3);
    open_until_case(QR_SAMPLING_GAP, 5000, 4);
}

/* The bound every whole sampling is checked against: a rate sampling off by more than th is a
 * defect said loudly; exactly th, or the gap strawman (no bound), is not. */
Test(sampler, the_bound_check_fires_only_past_th_for_rate)
{
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_sampling_bound_check(QR_SAMPLING_RATE, 5000, 5000, err), QR_OK);
    cr_assert_eq(qr_sampling_bound_check(QR_SAMPLING_RATE, 5000, 5001, err), QR_ESTATE);
    cr_assert(strstr(err, "5001 ns off") && strstr(err, "bound is broken"), "%s", err);
    cr_assert_eq(qr_sampling_bound_check(QR_SAMPLING_GAP, 5000, 900000, err), QR_OK);
}
