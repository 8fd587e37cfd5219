/* Per-queue flow accounting (property: equals a brute-force count) and the arrival log (round trip,
 * truncation, foreign files). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    /* cut anywhere, even at a record boundary, the trailer is gone: refused */
    qr_arrival_reader *r;
    for (off_t cut = 8 + 88 + 56 + 8; cut >= 8 + 88; cut -= 8 + 56 + 8) {
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
    /* the count is the trailer's second field: 8 + 2 * 56 bytes of magic and records, 8 of its
     * own magic */
    FILE *fp = fopen(path, "r+b");
    uint64_t three = 3;
    cr_assert_eq(fseek(fp, 8 + 2 * 56 + 8, SEEK_SET), 0);
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
