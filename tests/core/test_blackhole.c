/* Shared-buffer blackhole episodes (blackhole.h): a switch simulated on the core's shared buffer
 * (docs/model.md's case: a burst toward one port shrinks another queue's threshold below its
 * length), the same switch without the burst, a hand-made stream, properties on seeded random
 * streams (switches are independent, counts add up, episodes at one queue are more than a gap
 * apart, a threshold that never falls gives none) and the file scan's errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "qreplay/blackhole.h"
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/queuelog.h"

#define MAXA 200000

typedef struct {
    qr_arrival a[MAXA];
    size_t n;
} stream;

/* One switch of `ports` ports on a shared buffer of `size` bytes (alpha 1), every port draining
 * 1500-byte packets at 10 Gbps, simulated in 300 ns steps for `steps` steps. Port 0 gets a packet
 * every 600 ns (twice its rate: it fills to its threshold and tail-drops); with `burst`, port 1
 * gets `burst` packets per step from step 3000 for 300 steps. */
static void simulate(stream *s, uint32_t sw, uint32_t ports, uint64_t size, int burst, int steps)
{
    qr_buffer_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.size_bytes = size;
    cfg.alpha = 1.0;
    cfg.n_queues = ports;
    qr_buffer *b;
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_OK);
    uint64_t credit[8] = {0}, held[8] = {0};
    for (int t = 0; t < steps; t++) {
        for (uint32_t p = 0; p < ports; p++) { /* 375 bytes of service per 300 ns */
            credit[p] += 375;
            while (held[p] > 0 && credit[p] >= 1500) {
                cr_assert_eq(qr_buffer_release(b, p, 1500), QR_OK);
                held[p]--;
                credit[p] -= 1500;
            }
            if (held[p] == 0)
                credit[p] = 0;
        }
        int n1 = burst && t >= 3000 && t < 3300 ? burst : 0;
        for (int k = 0; k < (t % 2 == 0) + n1; k++) {
            uint32_t port = k < (t % 2 == 0) ? 0 : 1;
            cr_assert_lt(s->n, MAXA);
            qr_arrival *a = &s->a[s->n++];
            memset(a, 0, sizeof *a);
            a->packet = s->n;
            a->time_ns = (int64_t)t * 300;
            a->sw = sw;
            a->port = port;
            a->bytes = 1500;
            a->queue_bytes = qr_buffer_queue(b, port);
            a->total_bytes = qr_buffer_total(b);
            a->threshold = qr_buffer_threshold(b);
            qr_decision d;
            cr_assert_eq(qr_buffer_admit(b, port, 1500, QR_MODE_PLAIN, 0, 0, &d), QR_OK);
            a->decision = (uint8_t)d;
            held[port] += d == QR_ADMIT;
        }
    }
    qr_buffer_destroy(b);
}

static size_t detect(const stream *s, const qr_blackhole_opts *o, const qr_blackhole **eps,
                     qr_blackhole_detector **det)
{
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_blackhole_detector_create(det, o, err), QR_OK, "%s", err);
    for (size_t i = 0; i < s->n; i++)
        cr_assert_eq(qr_blackhole_observe(*det, &s->a[i], err), QR_OK, "%s", err);
    size_t n;
    cr_assert_eq(qr_blackhole_finish(*det, eps, &n), QR_OK);
    return n;
}

static stream S1, S2;

Test(blackhole, a_burst_toward_another_port_blackholes_the_falling_queue)
{
    S1.n = 0;
    simulate(&S1, 0, 4, 300000, 4, 6000);
    qr_blackhole_detector *d;
    const qr_blackhole *e;
    size_t n = detect(&S1, NULL, &e, &d);
    cr_assert_eq(n, 1, "episodes: %zu", n);
    cr_assert_eq(e[0].sw, 0);
    cr_assert_eq(e[0].port, 0);
    /* it starts once the burst has begun, and the queue is below its peak, its threshold lower */
    cr_assert_geq(e[0].start_ns, 3000 * 300);
    cr_assert_lt(e[0].queue_bytes + 1500, e[0].peak_bytes + 1);
    cr_assert_lt(e[0].threshold, e[0].peak_threshold);
    cr_assert_gt(e[0].total_bytes, e[0].peak_total_bytes);
    cr_assert_gt(e[0].drops, 10);
    cr_assert_eq(e[0].drop_bytes, e[0].drops * 1500);
    /* the burst's port is the culprit, and the only one that grew */
    cr_assert_eq(e[0].n_culprits, 1);
    cr_assert_eq(e[0].culprits[0].port, 1);
    cr_assert_gt(e[0].culprits[0].growth_bytes, 20 * 1500);
    /* every blackhole drop is in the episode; port 0 also tail-dropped at its peak before */
    uint64_t arrivals, drops, bh;
    qr_blackhole_counts(d, &arrivals, &drops, &bh);
    cr_assert_eq(arrivals, S1.n);
    cr_assert_eq(bh, e[0].drops);
    uint64_t tail_before = 0;
    for (size_t i = 0; i < S1.n; i++)
        tail_before +=
            S1.a[i].port == 0 && S1.a[i].decision != QR_ADMIT && S1.a[i].time_ns < 3000 * 300;
    cr_assert_gt(tail_before, 0, "the queue should tail-drop at its own threshold first");
    qr_blackhole_detector_destroy(d);
}

/* A FatTree's switch numbers run to k * k + k * k / 4 and its ports to k: a switch numbered 70
 * with a packet at port 31 first gives the same episodes as switch 0 (a k = 8 run once overflowed
 * the detector's tables here). */
Test(blackhole, high_switch_and_port_numbers_give_the_same_episodes)
{
    S1.n = 0;
    simulate(&S1, 0, 4, 300000, 4, 6000);
    S2.n = 0;
    memset(&S2.a[0], 0, sizeof S2.a[0]);
    S2.a[0].sw = 70;
    S2.a[0].port = 31;
    S2.a[0].bytes = 1500;
    S2.n = 1;
    simulate(&S2, 70, 4, 300000, 4, 6000);
    qr_blackhole_detector *d1, *d2;
    const qr_blackhole *e1, *e2;
    size_t n1 = detect(&S1, NULL, &e1, &d1), n2 = detect(&S2, NULL, &e2, &d2);
    cr_assert_eq(n1, 1);
    cr_assert_eq(n2, n1);
    cr_assert_eq(e2[0].sw, 70);
    cr_assert_eq(e2[0].port, e1[0].port);
    cr_assert_eq(e2[0].start_ns, e1[0].start_ns);
    cr_assert_eq(e2[0].drops, e1[0].drops);
    cr_assert_eq(e2[0].culprits[0].port, e1[0].culprits[0].port);
    cr_assert_eq(e2[0].culprits[0].growth_bytes, e1[0].culprits[0].growth_bytes);
    qr_blackhole_detector_destroy(d1);
    qr_blackhole_detector_destroy(d2);
}

Test(blackhole, without_the_burst_the_same_queue_only_tail_drops)
{
    S1.n = 0;
    simulate(&S1, 0, 4, 300000, 0, 6000);
    qr_blackhole_detector *d;
    const qr_blackhole *e;
    cr_assert_eq(detect(&S1, NULL, &e, &d), 0);
    uint64_t drops, bh;
    qr_blackhole_counts(d, NULL, &drops, &bh);
    cr_assert_gt(drops, 100);
    cr_assert_eq(bh, 0);
    qr_blackhole_detector_destroy(d);
}

Test(blackhole, hand_example_and_gap)
{
    /* queue (2, 0) peaks at 30 KB under threshold 60 KB, port 3 grows to 50 KB, the threshold
     * falls to 20 KB; two drops 50 us apart, a third 500 us later (past the gap: a new episode
     * would need a new fall, and the peak was forgotten after the window: none) */
    qr_arrival a[] = {
        {.packet = 1,
         .time_ns = 1000,
         .sw = 2,
         .port = 0,
         .bytes = 1500,
         .queue_bytes = 30000,
         .total_bytes = 30000,
         .threshold = 60000},
        {.packet = 2,
         .time_ns = 2000,
         .sw = 2,
         .port = 3,
         .bytes = 1500,
         .queue_bytes = 48500,
         .total_bytes = 78500,
         .threshold = 30000},
        {.packet = 3,
         .time_ns = 3000,
         .sw = 2,
         .port = 0,
         .bytes = 1500,
         .queue_bytes = 27000,
         .total_bytes = 77000,
         .threshold = 20000,
         .decision = QR_DROP_THRESHOLD},
        {.packet = 4,
         .time_ns = 53000,
         .sw = 2,
         .port = 0,
         .bytes = 1500,
         .queue_bytes = 25000,
         .total_bytes = 75000,
         .threshold = 20000,
         .decision = QR_DROP_THRESHOLD},
        {.packet = 5,
         .time_ns = 553000,
         .sw = 2,
         .port = 0,
         .bytes = 1500,
         .queue_bytes = 24000,
         .total_bytes = 74000,
         .threshold = 21000,
         .decision = QR_DROP_THRESHOLD},
    };
    stream *s = &S2;
    s->n = sizeof a / sizeof a[0];
    memcpy(s->a, a, sizeof a);
    qr_blackhole_detector *d;
    const qr_blackhole *e;
    cr_assert_eq(detect(s, NULL, &e, &d), 1);
    cr_assert_eq(e[0].sw, 2);
    cr_assert_eq(e[0].start_ns, 3000);
    cr_assert_eq(e[0].end_ns, 53000);
    cr_assert_eq(e[0].drops, 2);
    cr_assert_eq(e[0].peak_bytes, 30000);
    cr_assert_eq(e[0].peak_ns, 1000);
    cr_assert_eq(e[0].queue_bytes, 27000);
    cr_assert_eq(e[0].peak_threshold, 60000);
    cr_assert_eq(e[0].threshold, 20000);
    cr_assert_eq(e[0].n_culprits, 1);
    cr_assert_eq(e[0].culprits[0].port, 3);
    cr_assert_eq(e[0].culprits[0].growth_bytes, 50000);
    qr_blackhole_detector_destroy(d);
}

Test(blackhole, out_of_order_arrivals_and_bad_options_are_errors)
{
    char err[QR_ERRBUF_SIZE];
    qr_blackhole_opts o;
    qr_blackhole_opts_default(&o);
    o.gap_ns = -1;
    qr_blackhole_detector *d;
    cr_assert_eq(qr_blackhole_detector_create(&d, &o, err), QR_EINVAL);
    cr_assert(strstr(err, "gap"));
    cr_assert_eq(qr_blackhole_detector_create(&d, NULL, err), QR_OK);
    qr_arrival a = {.packet = 9, .time_ns = 5000, .bytes = 100};
    cr_assert_eq(qr_blackhole_observe(d, &a, err), QR_OK);
    a.time_ns = 4999;
    cr_assert_eq(qr_blackhole_observe(d, &a, err), QR_EINVAL);
    cr_assert(strstr(err, "packet 9") && strstr(err, "4999"), "%s", err);
    const qr_blackhole *e;
    size_t n;
    cr_assert_eq(qr_blackhole_finish(d, &e, &n), QR_OK);
    a.time_ns = 6000;
    cr_assert_eq(qr_blackhole_observe(d, &a, err), QR_ESTATE);
    qr_blackhole_detector_destroy(d);
}

/* A random stream over `sws` switches of 4 ports; with fixed_threshold the threshold and the
 * occupancy never change. */
static void random_stream(stream *s, gsl_rng *r, uint32_t sws, size_t n, int fixed_threshold)
{
    s->n = 0;
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        qr_arrival *a = &s->a[s->n++];
        memset(a, 0, sizeof *a);
        t += (int64_t)gsl_rng_uniform_int(r, 3000);
        a->packet = i + 1;
        a->time_ns = t;
        a->sw = (uint32_t)gsl_rng_uniform_int(r, sws);
        a->port = (uint32_t)gsl_rng_uniform_int(r, 4);
        a->bytes = 1500;
        a->queue_bytes = 1500 * gsl_rng_uniform_int(r, 60);
        a->total_bytes =
            fixed_threshold ? 200000 : a->queue_bytes + 1500 * gsl_rng_uniform_int(r, 150);
        a->threshold = fixed_threshold ? 100000 : 300000 - (int64_t)a->total_bytes;
        a->decision = gsl_rng_uniform(r) < 0.3 ? QR_DROP_THRESHOLD : QR_ADMIT;
    }
}

Test(blackhole, properties_on_random_streams)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    qr_blackhole_opts o;
    qr_blackhole_opts_default(&o);
    for (unsigned seed = 1; seed <= 20; seed++) {
        gsl_rng_set(r, seed);
        random_stream(&S1, r, 3, 20000, 0);
        qr_blackhole_detector *d;
        const qr_blackhole *all;
        size_t n_all = detect(&S1, &o, &all, &d);
        uint64_t bh, sum = 0;
        qr_blackhole_counts(d, NULL, NULL, &bh);
        for (size_t i = 0; i < n_all; i++) {
            sum += all[i].drops;
            cr_assert_leq(all[i].start_ns, all[i].end_ns);
            cr_assert_geq(all[i].peak_bytes, all[i].queue_bytes + o.min_fall_bytes);
            cr_assert_geq(all[i].peak_threshold - all[i].threshold, (int64_t)o.min_shrink_bytes);
            if (i > 0)
                cr_assert_leq(all[i - 1].start_ns, all[i].start_ns);
            for (size_t j = 0; j < i; j++) /* one queue's episodes: more than a gap apart */
                if (all[j].sw == all[i].sw && all[j].port == all[i].port)
                    cr_assert(all[i].start_ns - all[j].end_ns > o.gap_ns ||
                                  all[j].start_ns - all[i].end_ns > o.gap_ns,
                              "seed %u: episodes %zu and %zu of one queue overlap", seed, j, i);
        }
        cr_assert_eq(sum, bh, "seed %u", seed);
        cr_assert_gt(n_all, 0, "seed %u: random streams should hold some episodes", seed);
        /* each switch alone gives the same episodes as in the mixed stream */
        for (uint32_t sw = 0; sw < 3; sw++) {
            S2.n = 0;
            for (size_t i = 0; i < S1.n; i++)
                if (S1.a[i].sw == sw)
                    S2.a[S2.n++] = S1.a[i];
            qr_blackhole_detector *d1;
            const qr_blackhole *one;
            size_t n1 = detect(&S2, &o, &one, &d1);
            size_t k = 0;
            for (size_t i = 0; i < n_all; i++)
                if (all[i].sw == sw) {
                    cr_assert_lt(k, n1);
                    cr_assert_eq(memcmp(&all[i], &one[k], sizeof one[k]), 0,
                                 "seed %u switch %u episode %zu differs alone", seed, sw, k);
                    k++;
                }
            cr_assert_eq(k, n1, "seed %u switch %u", seed, sw);
            qr_blackhole_detector_destroy(d1);
        }
        qr_blackhole_detector_destroy(d);
        /* a threshold that never falls: no blackhole, whatever drops */
        random_stream(&S1, r, 3, 20000, 1);
        cr_assert_eq(detect(&S1, &o, &all, &d), 0, "seed %u", seed);
        qr_blackhole_detector_destroy(d);
    }
    gsl_rng_free(r);
}

Test(blackhole, scan_reads_a_log_and_names_the_bad_record)
{
    S1.n = 0;
    simulate(&S1, 5, 4, 300000, 4, 6000);
    char path[] = "/tmp/qr-test-blackhole-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char err[QR_ERRBUF_SIZE];
    qr_arrival_writer *w;
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
    for (size_t i = 0; i < S1.n; i++)
        cr_assert_eq(qr_arrival_write(w, &S1.a[i], err), QR_OK, "%s", err);
    /* one record out of time order at the end */
    qr_arrival late = S1.a[0];
    cr_assert_eq(qr_arrival_write(w, &late, err), QR_OK);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK);
    qr_blackhole *e;
    size_t n;
    cr_assert_eq(qr_blackhole_scan(path, NULL, &e, &n, err), QR_EINVAL);
    cr_assert_eq(n, 0);
    cr_assert(strstr(err, path) && strstr(err, "record"), "%s", err);
    /* without it: the same episode as the detector fed directly */
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK);
    for (size_t i = 0; i < S1.n; i++)
        cr_assert_eq(qr_arrival_write(w, &S1.a[i], err), QR_OK);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK);
    cr_assert_eq(qr_blackhole_scan(path, NULL, &e, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 1);
    cr_assert_eq(e[0].sw, 5);
    free(e);
    unlink(path);
    int rc = qr_blackhole_scan(path, NULL, &e, &n, err);
    cr_assert_eq(rc, QR_ENOENT, "%d: %s", rc, err); /* the log is gone */
}
