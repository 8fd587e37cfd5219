/* Per-queue flow accounting (property: equals a brute-force count) and the arrival log (round trip
 * of hand-made and of simulated queues, the second format still read, truncation, damage, foreign
 * files). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/queuelog.h"

Test(queuelog, flows_hand_example)
{
    qr_queue_flows *q;
    cr_assert_eq(qr_queue_flows_create(&q), QR_OK);
    qr_queue_flows_add(q, 7, 1500);
    qr_queue_flows_add(q, 3, 1500);
    qr_queue_flows_add(q, 7, 52);
    const qr_flow_bytes *f;
    cr_assert_eq(qr_queue_flows_snapshot(q, &f), 2);
    cr_assert_eq(f[0].flow, 3);
    cr_assert_eq(f[1].flow, 7);
    cr_assert_eq(f[1].bytes, 1552);
    cr_assert_eq(qr_queue_flows_total(q), 3052);
    cr_assert_eq(qr_queue_flows_remove(q, 3, 1501), QR_ESTATE);
    cr_assert_eq(qr_queue_flows_remove(q, 9, 1), QR_ESTATE);
    cr_assert_eq(qr_queue_flows_remove(q, 3, 1500), QR_OK);
    cr_assert_eq(qr_queue_flows_snapshot(q, &f), 1, "a flow with no bytes leaves the snapshot");
    cr_assert_eq(qr_queue_flows_total(q), 1552);
    qr_queue_flows_destroy(q);
}

Test(queuelog, property_flows_match_a_brute_force_count)
{
    enum { FLOWS = 40, FIFO = 1 << 16 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 21);
    qr_queue_flows *q;
    qr_queue_flows_create(&q);
    static uint64_t fifo_flow[FIFO], fifo_bytes[FIFO];
    size_t head = 0, len = 0;
    uint64_t ref[FLOWS] = {0};
    for (int step = 0; step < 300000; step++) {
        if (len < FIFO && (len == 0 || gsl_rng_uniform(r) < 0.5)) {
            uint64_t f = gsl_rng_uniform_int(r, FLOWS) * 1000003ULL,
                     b = 40 + gsl_rng_uniform_int(r, 1461);
            cr_assert_eq(qr_queue_flows_add(q, f, b), QR_OK);
            fifo_flow[(head + len) % FIFO] = f;
            fifo_bytes[(head + len++) % FIFO] = b;
            ref[f / 1000003ULL] += b;
        } else {
            uint64_t f = fifo_flow[head], b = fifo_bytes[head];
            head = (head + 1) % FIFO;
            len--;
            cr_assert_eq(qr_queue_flows_remove(q, f, b), QR_OK);
            ref[f / 1000003ULL] -= b;
        }
        if (step % 97 == 0) {
            const qr_flow_bytes *s;
            size_t n = qr_queue_flows_snapshot(q, &s), k = 0;
            uint64_t total = 0;
            for (int i = 0; i < FLOWS; i++) {
                if (!ref[i])
                    continue;
                cr_assert_lt(k, n);
                cr_assert_eq(s[k].flow, i * 1000003ULL);
                cr_assert_eq(s[k].bytes, ref[i]);
                total += ref[i];
                k++;
            }
            cr_assert_eq(k, n);
            cr_assert_eq(qr_queue_flows_total(q), total);
        }
    }
    qr_queue_flows_destroy(q);
    gsl_rng_free(r);
}

static char path[256];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/qr-test-arrivals-%d.bin", getpid());
}

static void teardown(void)
{
    unlink(path);
}

Test(queuelog, arrival_log_round_trip, .init = setup, .fini = teardown)
{
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
    qr_flow_bytes f[300];
    for (int i = 0; i < 300; i++)
        f[i] = (qr_flow_bytes){(uint64_t)i * 3, (uint64_t)i * 1500};
    for (uint32_t i = 0; i < 1000; i++) {
        qr_arrival a = {.packet = (uint64_t)i << 32 | 5,
                        .time_ns = 1000 * (int64_t)i,
                        .sw = i % 20,
                        .port = i % 4,
                        .bytes = 1500,
                        .decision = (uint8_t)(i % 4),
                        .tagged = (uint8_t)(i % 2),
                        .n_flows = (uint16_t)(i % 300),
                        .queue_bytes = i * 7,
                        .total_bytes = i * 11,
                        .threshold = -(int64_t)i,
                        .flows = f};
        cr_assert_eq(qr_arrival_write(w, &a, err), QR_OK, "%s", err);
    }
    qr_flow_bytes bad[] = {{2, 1}, {1, 1}};
    qr_arrival b = {.n_flows = 2, .flows = bad};
    cr_assert_eq(qr_arrival_write(w, &b, err), QR_EORDER);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK);
    qr_arrival_reader *r;
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    qr_arrival a;
    for (uint32_t i = 0; i < 1000; i++) {
        cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK, "%s", err);
        cr_assert_eq(a.packet, (uint64_t)i << 32 | 5);
        cr_assert_eq(a.time_ns, 1000 * (int64_t)i);
        cr_assert_eq(a.sw, i % 20);
        cr_assert_eq(a.port, i % 4);
        cr_assert_eq(a.decision, i % 4);
        cr_assert_eq(a.tagged, i % 2);
        cr_assert_eq(a.threshold, -(int64_t)i);
        cr_assert_eq(a.n_flows, i % 300);
        if (a.n_flows) /* no flows: a.flows may be NULL */
            cr_assert_eq(memcmp(a.flows, f, a.n_flows * sizeof *f), 0);
    }
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_END);
    qr_arrival_reader_close(r);
}

Test(queuelog, truncated_and_foreign_logs, .init = setup, .fini = teardown)
{
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    qr_flow_bytes f[] = {{1, 1500}, {2, 3000}};
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK);
    qr_arrival a = {.packet = 1, .n_flows = 2, .flows = f};
    qr_arrival_write(w, &a, err);
    qr_arrival_write(w, &a, err);
    qr_arrival_writer_close(w, err);
    /* cut anywhere, even at a block boundary, the trailer is gone: refused */
    qr_arrival_reader *r;
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    for (off_t cut = st.st_size - 1; cut >= 8; cut--) {
        cr_assert_eq(truncate(path, cut), 0);
        cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_ETRUNC, "cut at %lld",
                     (long long)cut);
        cr_assert(strstr(err, "trailer") && strstr(err, path), "%s", err);
    }
    /* the first format (no trailer) says so */
    FILE *fp = fopen(path, "w");
    fputs("QRARRV1\n", fp);
    fclose(fp);
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_EFORMAT);
    cr_assert(strstr(err, "older qreplay"), "%s", err);
    fp = fopen(path, "w");
    fputs("not an arrival log at all", fp);
    fclose(fp);
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_EFORMAT);
    cr_assert(strstr(err, path), "%s", err);
    unlink(path);
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_ENOENT);
    cr_assert_eq(qr_arrival_writer_open(&w, "/nonexistent/x.bin", err), QR_EIO);
}

/* The trailer counts the records: a log whose records and count disagree is damaged. */
Test(queuelog, the_trailer_count_must_match, .init = setup, .fini = teardown)
{
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK);
    qr_arrival a = {.packet = 1};
    qr_arrival_write(w, &a, err);
    qr_arrival_write(w, &a, err);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK);
    /* the count is the trailer's second field: 72 bytes before the end (80-byte trailer) */
    FILE *fp = fopen(path, "r+b");
    uint64_t three = 3;
    cr_assert_eq(fseek(fp, -72, SEEK_END), 0);
    cr_assert_eq(fwrite(&three, sizeof three, 1, fp), 1);
    fclose(fp);
    qr_arrival_reader *r;
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_arrival_reader_records(r), 3);
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK);
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK);
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_EFORMAT);
    cr_assert(strstr(err, "trailer says 3"), "%s", err);
    qr_arrival_reader_close(r);
}

/* A log knows its recording: the check refuses another recording's, accepts its own, and a
 * recording without an id (older qreplay) cannot tell. */
Test(queuelog, a_log_names_its_recording, .init = setup, .fini = teardown)
{
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    const char *id = "0123456789abcdef0123456789abcdef";
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK);
    cr_assert_eq(qr_arrival_writer_set_recording(w, id), QR_OK);
    cr_assert_eq(qr_arrival_writer_set_recording(w, "0123456789abcdef0123456789abcdef0"),
                 QR_EINVAL);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK);
    qr_arrival_reader *r;
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_str_eq(qr_arrival_reader_recording(r), id);
    qr_arrival a;
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_END, "an empty log ends at once");
    qr_arrival_reader_close(r);
    cr_assert_eq(qr_arrival_log_check(path, id, "fix", err), QR_OK);
    cr_assert_eq(qr_arrival_log_check(path, "", "fix", err), QR_OK);
    cr_assert_eq(qr_arrival_log_check(path, "ffffffffffffffffffffffffffffffff", "rerun it", err),
                 QR_ESTALE);
    cr_assert(strstr(err, path) && strstr(err, "another recording") && strstr(err, "rerun it"),
              "%s", err);
}

/* A simulated shared-buffer switch of 4 switches x 3 ports with FIFO queues: every arrival logged
 * with the queue's contents; the log reads back exactly, field for field and flow for flow, with
 * the extremes of each field mixed in (zero-byte flows, queue bytes that are not the sum, times
 * and thresholds at the ends of int64, packets whose size changes). */
Test(queuelog, property_simulated_queues_read_back_exactly, .init = setup, .fini = teardown)
{
    enum { QUEUES = 12, FIFO = 4096, N = 200000 };
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 39);
    static qr_arrival want[N];
    static qr_flow_bytes *snap[N];
    qr_queue_flows *q[QUEUES];
    static uint64_t ff[QUEUES][FIFO], fb[QUEUES][FIFO];
    size_t head[QUEUES] = {0}, len[QUEUES] = {0};
    uint64_t sw_total[4] = {0};
    for (int i = 0; i < QUEUES; i++)
        qr_queue_flows_create(&q[i]);
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
    int64_t t = -1000000;
    for (int k = 0; k < N; k++) {
        int qi = (int)gsl_rng_uniform_int(g, QUEUES), sw = qi / 3;
        /* departures first, then the arrival */
        while (len[qi] && gsl_rng_uniform(g) < 0.45) {
            qr_queue_flows_remove(q[qi], ff[qi][head[qi]], fb[qi][head[qi]]);
            sw_total[sw] -= fb[qi][head[qi]];
            head[qi] = (head[qi] + 1) % FIFO;
            len[qi]--;
        }
        uint64_t flow = gsl_rng_uniform_int(g, 300);
        uint32_t bytes =
            gsl_rng_uniform(g) < 0.7 ? 1500 : 40 + (uint32_t)gsl_rng_uniform_int(g, 1460);
        const qr_flow_bytes *f;
        size_t n = qr_queue_flows_snapshot(q[qi], &f);
        snap[k] = malloc((n + 1) * sizeof *f);
        if (n) /* an empty queue's snapshot may be NULL */
            memcpy(snap[k], f, n * sizeof *f);
        if (k % 1000 == 7 && n) /* a flow listed with no bytes */
            snap[k][0].bytes = 0;
        t += gsl_rng_uniform(g) < 0.01 ? -(int64_t)gsl_rng_uniform_int(g, 5000)
                                       : (int64_t)gsl_rng_uniform_int(g, 3000);
        uint64_t qb = qr_queue_flows_total(q[qi]);
        want[k] = (qr_arrival){
            .packet = (flow * 2 + (bytes < 100)) << 32 |
                      (k % 3 == 0 ? (uint64_t)gsl_rng_uniform_int(g, 1u << 31) : (uint64_t)k),
            .time_ns = k == N / 2       ? INT64_MIN
                       : k == N / 2 + 1 ? INT64_MAX
                                        : t,
            .sw = sw == 3 ? UINT32_MAX : (uint32_t)sw,
            .port = (uint32_t)(qi % 3) + (sw == 0 ? 300u : 0u), /* past the small-key table */
            .bytes = bytes,
            .decision = (uint8_t)(gsl_rng_uniform(g) < 0.9 ? 0 : gsl_rng_uniform_int(g, 5)),
            .tagged = (uint8_t)gsl_rng_uniform_int(g, 2),
            .n_flows = (uint16_t)n,
            .queue_bytes = k % 500 == 3 ? qb + 52 : qb,
            .total_bytes = sw_total[sw],
            .threshold = k % 777 == 5 ? INT64_MIN : 2000000 - (int64_t)sw_total[sw],
            .flows = snap[k]};
        cr_assert_eq(qr_arrival_write(w, &want[k], err), QR_OK, "%s", err);
        if (want[k].decision == QR_ADMIT && len[qi] < FIFO) {
            qr_queue_flows_add(q[qi], flow, bytes);
            sw_total[sw] += bytes;
            ff[qi][(head[qi] + len[qi]) % FIFO] = flow;
            fb[qi][(head[qi] + len[qi]++) % FIFO] = bytes;
        }
    }
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK, "%s", err);
    qr_arrival_reader *r;
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_arrival_reader_records(r), N);
    qr_arrival a;
    for (int k = 0; k < N; k++) {
        cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK, "record %d: %s", k + 1, err);
        cr_assert_eq(a.packet, want[k].packet, "record %d", k + 1);
        cr_assert_eq(a.time_ns, want[k].time_ns, "record %d", k + 1);
        cr_assert(a.sw == want[k].sw && a.port == want[k].port && a.bytes == want[k].bytes &&
                      a.decision == want[k].decision && a.tagged == want[k].tagged,
                  "record %d", k + 1);
        cr_assert(a.queue_bytes == want[k].queue_bytes && a.total_bytes == want[k].total_bytes &&
                      a.threshold == want[k].threshold,
                  "record %d", k + 1);
        cr_assert_eq(a.n_flows, want[k].n_flows, "record %d", k + 1);
        if (a.n_flows)
            cr_assert_eq(memcmp(a.flows, want[k].flows, a.n_flows * sizeof *a.flows), 0,
                         "record %d", k + 1);
        free(snap[k]);
    }
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_END, "%s", err);
    qr_arrival_reader_close(r);
    for (int i = 0; i < QUEUES; i++)
        qr_queue_flows_destroy(q[i]);
    gsl_rng_free(g);
}

/* One changed byte anywhere in a block's records is caught by its checksum, named by block and
 * records; a changed block head is refused too. Never read as a different log. */
Test(queuelog, damage_is_refused, .init = setup, .fini = teardown)
{
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK);
    qr_flow_bytes f[] = {{1, 1500}, {2, 3000}};
    for (int i = 0; i < 50; i++) {
        qr_arrival a = {.packet = (uint64_t)i,
                        .time_ns = i * 100,
                        .bytes = 1500,
                        .n_flows = (uint16_t)(i % 3),
                        .flows = f};
        cr_assert_eq(qr_arrival_write(w, &a, err), QR_OK);
    }
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    /* magic 8, block head 12, records, trailer 80 */
    for (off_t at = 8; at < st.st_size - 80; at++) {
        FILE *fp = fopen(path, "r+b");
        fseeko(fp, at, SEEK_SET);
        int c = fgetc(fp);
        fseeko(fp, at, SEEK_SET);
        fputc(c ^ 0x5a, fp);
        fclose(fp);
        qr_arrival_reader *r;
        cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK);
        qr_arrival a;
        int rc;
        while ((rc = qr_arrival_read(r, &a, err)) == QR_OK)
            ;
        cr_assert(rc == QR_EFORMAT || rc == QR_ETRUNC, "byte %lld: rc %d", (long long)at, rc);
        cr_assert(strstr(err, path) && strstr(err, "block"), "byte %lld: %s", (long long)at, err);
        if (at >= 20)
            cr_assert(strstr(err, "checksum"), "byte %lld: %s", (long long)at, err);
        qr_arrival_reader_close(r);
        fp = fopen(path, "r+b");
        fseeko(fp, at, SEEK_SET);
        fputc(c, fp);
        fclose(fp);
    }
}

/* Logs of the second format (fixed 56-byte records, "QRARRV2\n") are still read. */
Test(queuelog, second_format_still_read, .init = setup, .fini = teardown)
{
    FILE *fp = fopen(path, "wb");
    fputs("QRARRV2\n", fp);
    for (uint64_t i = 0; i < 3; i++) {
        struct {
            uint64_t packet;
            int64_t time_ns;
            uint32_t sw, port, bytes;
            uint8_t decision, tagged;
            uint16_t n_flows;
            uint64_t queue_bytes, total_bytes;
            int64_t threshold;
        } h = {i << 32 | 9, 100 * (int64_t)i, 2,        1, 1500, (uint8_t)(i == 2), 0,
               1,           1500 * i,         4500 * i, -7};
        qr_flow_bytes f = {i + 4, 1500 * i};
        fwrite(&h, 56, 1, fp);
        fwrite(&f, sizeof f, 1, fp);
    }
    char tail[48] = "QRAEND2\n";
    uint64_t three = 3;
    memcpy(tail + 8, &three, 8);
    memcpy(tail + 16, "00112233445566778899aabbccddeeff", 32);
    fwrite(tail, 48, 1, fp);
    fclose(fp);
    qr_arrival_reader *r;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_str_eq(qr_arrival_reader_recording(r), "00112233445566778899aabbccddeeff");
    qr_arrival a;
    for (uint64_t i = 0; i < 3; i++) {
        cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK, "%s", err);
        cr_assert(a.packet == (i << 32 | 9) && a.time_ns == 100 * (int64_t)i && a.sw == 2 &&
                  a.port == 1 && a.decision == (i == 2) && a.n_flows == 1 &&
                  a.flows[0].flow == i + 4 && a.flows[0].bytes == 1500 * i &&
                  a.total_bytes == 4500 * i && a.threshold == -7);
    }
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_END, "%s", err);
    qr_arrival_reader_close(r);
}

/* The switches' mirrored copies (qr_mirror_write_from) of random logs, over seeds: record for
 * record the same arrival, but with no queue contents and a planted fault's drop admitted (the
 * switch does not know of it); the same recording, the run "mirror" (and not "truth"); a cut log
 * leaves no copies file. */
Test(queuelog, property_mirror_copies_are_what_the_switch_knows, .init = setup, .fini = teardown)
{
    char err[QR_ERRBUF_SIZE], dir[256], mirror[300];
    snprintf(dir, sizeof dir, "/tmp/qr-test-mirror-%d", getpid());
    snprintf(mirror, sizeof mirror, "%s/mirror/copies.qra", dir);
    static const char id[] = "0123456789abcdef0123456789abcdef";
    for (unsigned seed = 1; seed <= 20; seed++) {
        gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(g, seed);
        enum { N = 3000 };
        static qr_arrival want[N];
        static qr_flow_bytes fl[N][3];
        qr_arrival_writer *w;
        cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
        cr_assert_eq(qr_arrival_writer_set_recording(w, id), QR_OK);
        cr_assert_eq(qr_arrival_writer_set_source(w, QR_ARRIVALS_TRUTH), QR_OK);
        size_t n = gsl_rng_uniform_int(g, N);
        for (size_t k = 0; k < n; k++) {
            uint16_t nf = (uint16_t)gsl_rng_uniform_int(g, 4);
            for (uint16_t j = 0; j < nf; j++)
                fl[k][j] = (qr_flow_bytes){j * 7 + 1, 1 + gsl_rng_uniform_int(g, 9000)};
            want[k] = (qr_arrival){.packet = gsl_rng_get(g),
                                   .time_ns = (int64_t)(k * 1000 + gsl_rng_uniform_int(g, 999)),
                                   .sw = (uint32_t)gsl_rng_uniform_int(g, 20),
                                   .port = (uint32_t)gsl_rng_uniform_int(g, 4),
                                   .bytes = 40 + (uint32_t)gsl_rng_uniform_int(g, 1460),
                                   .decision = (uint8_t)gsl_rng_uniform_int(g, 5),
                                   .tagged = (uint8_t)gsl_rng_uniform_int(g, 2),
                                   .n_flows = nf,
                                   .queue_bytes = gsl_rng_uniform_int(g, 100000),
                                   .total_bytes = gsl_rng_uniform_int(g, 1000000),
                                   .threshold = (int64_t)gsl_rng_uniform_int(g, 2000000),
                                   .flows = fl[k]};
            cr_assert_eq(qr_arrival_write(w, &want[k], err), QR_OK, "%s", err);
        }
        cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK, "%s", err);
        cr_assert_eq(qr_mirror_write_from(path, mirror, err), QR_OK, "seed %u: %s", seed, err);
        qr_arrival_reader *r;
        cr_assert_eq(qr_arrival_reader_open(&r, mirror, err), QR_OK, "%s", err);
        cr_assert_str_eq(qr_arrival_reader_recording(r), id);
        cr_assert_eq(qr_arrival_reader_records(r), n);
        qr_arrival a;
        for (size_t k = 0; k < n; k++) {
            cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK, "%s", err);
            const qr_arrival *x = &want[k];
            cr_assert(a.packet == x->packet && a.time_ns == x->time_ns && a.sw == x->sw &&
                          a.port == x->port && a.bytes == x->bytes && a.tagged == x->tagged &&
                          a.queue_bytes == x->queue_bytes && a.total_bytes == x->total_bytes &&
                          a.threshold == x->threshold,
                      "seed %u record %zu", seed, k);
            cr_assert_eq(a.decision, x->decision == QR_DROP_FAULT ? QR_ADMIT : x->decision,
                         "seed %u record %zu", seed, k);
            cr_assert_eq(a.n_flows, 0, "no queue contents in a copy");
        }
        cr_assert_eq(qr_arrival_read(r, &a, err), QR_END);
        qr_arrival_reader_close(r);
        cr_assert_eq(qr_arrival_log_check_source(mirror, id, QR_ARRIVALS_MIRROR, NULL, "x", err),
                     QR_OK, "%s", err);
        cr_assert_eq(qr_arrival_log_check_source(mirror, id, QR_ARRIVALS_TRUTH, NULL, "x", err),
                     QR_ESTALE);
        gsl_rng_free(g);
    }
    /* a cut log: refused, and the copies of the last good one stay as they were */
    struct stat before, after;
    cr_assert_eq(stat(mirror, &before), 0);
    cr_assert_eq(truncate(path, 100), 0);
    cr_assert_eq(qr_mirror_write_from(path, mirror, err), QR_ETRUNC, "%s", err);
    cr_assert_eq(stat(mirror, &after), 0);
    cr_assert(before.st_ino == after.st_ino && before.st_size == after.st_size);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/mirror | grep -q partial", dir);
    cr_assert_neq(system(cmd), 0, "a temporary file left behind");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A long log with one byte changed deep inside: every record before the damaged block comes back
 * as written, in order, then the error names the block and the first record it held; reading
 * again gives the error again. A reader closed after a few records is fine. */
Test(queuelog, a_long_log_stops_at_its_damage, .init = setup, .fini = teardown)
{
    enum { N = 150000 };
    char err[QR_ERRBUF_SIZE];
    qr_arrival_writer *w;
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
    qr_flow_bytes fl[2] = {{3, 1500}, {9, 40}};
    for (uint64_t k = 0; k < N; k++) {
        qr_arrival a = {.packet = k * 7,
                        .time_ns = (int64_t)(k * 100),
                        .sw = (uint32_t)(k % 5),
                        .port = (uint32_t)(k % 3),
                        .bytes = 40 + (uint32_t)(k % 1460),
                        .decision = (uint8_t)(k % 11 == 0),
                        .n_flows = (uint16_t)(k % 3),
                        .queue_bytes = k % 3 ? 1540 : 0,
                        .flows = fl};
        if (a.n_flows == 1)
            a.queue_bytes = 1500;
        cr_assert_eq(qr_arrival_write(w, &a, err), QR_OK, "%s", err);
    }
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK, "%s", err);
    /* a reader closed early */
    qr_arrival_reader *r;
    qr_arrival a;
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK, "%s", err);
    qr_arrival_reader_close(r);
    /* one byte changed at two thirds of the file */
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    long at = (long)st.st_size * 2 / 3;
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    uint64_t k = 0;
    int rc;
    while ((rc = qr_arrival_read(r, &a, err)) == QR_OK) {
        cr_assert(a.packet == k * 7 && a.time_ns == (int64_t)(k * 100) && a.n_flows == k % 3,
                  "record %llu", (unsigned long long)k);
        if (a.n_flows)
            cr_assert_eq(memcmp(a.flows, fl, a.n_flows * sizeof *fl), 0);
        k++;
    }
    cr_assert_eq(rc, QR_EFORMAT, "%s", err);
    cr_assert_gt(k, N / 3);
    cr_assert_lt(k, N);
    char want[64];
    snprintf(want, sizeof want, "(records %llu to", (unsigned long long)k + 1);
    cr_assert(strstr(err, want) && strstr(err, "checksum"), "after %llu records: %s",
              (unsigned long long)k, err);
    err[0] = '\0';
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_EFORMAT, "the error again");
    cr_assert(strstr(err, want), "%s", err);
    qr_arrival_reader_close(r);
}
