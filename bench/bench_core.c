/* Benchmarks of the core's hot paths, reported as numbers and ratios (never asserted):
 *   - rate-based and gap-based sampling + inference, packets per second
 *   - streaming qdiff, matched arrivals per second, against the batch match
 *   - shared-buffer admission + release, packets per second
 *   - reading an operator's capture (Ethernet pcap, qr_capture), frames per second
 *   - qreplay import of both ends of that capture (qr_import_run), packets per second
 * Usage: bench_core [--packets N] [--seed S]   (./waf bench) */
#define _DEFAULT_SOURCE /* libpcap's BSD type names */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>
#include <unistd.h>

#include "qreplay/buffer.h"
#include "qreplay/capture.h"
#include "qreplay/error.h"
#include "qreplay/import.h"
#include "qreplay/metrics.h"
#include "qreplay/sampler.h"
#include "qreplay/scenario.h"
#include "qreplay/stats.h"
#include "qreplay/synth.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of `reps` runs of fn, in seconds. */
#define BEST_OF(reps, secs, ...)                                                                   \
    do {                                                                                           \
        secs = 1e30;                                                                               \
        for (int rep_ = 0; rep_ < (reps); rep_++) {                                                \
            double t0_ = now();                                                                    \
            __VA_ARGS__;                                                                           \
            double dt_ = now() - t0_;                                                              \
            if (dt_ < secs)                                                                        \
                secs = dt_;                                                                        \
        }                                                                                          \
    } while (0)

static volatile int64_t sink;

/* A capture of n Ethernet + IPv4 + TCP frames (128 bytes captured of 1514, nanosecond pcap) as
 * tcpdump -s 128 writes it, 64 connections interleaved. Returns 0 or -1. */
static int write_capture(const char *path, size_t n, int64_t delay_ns)
{
    pcap_t *pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 128, PCAP_TSTAMP_PRECISION_NANO);
    pcap_dumper_t *d = pd ? pcap_dump_open(pd, path) : NULL;
    if (!d)
        return -1;
    uint8_t f[128] = {0};
    f[12] = 0x08;                             /* IPv4 */
    f[14] = 0x45, f[16] = 0x05, f[17] = 0xdc; /* total length 1500 */
    f[20] = 0x40, f[22] = 64, f[23] = 6;
    f[26] = 10, f[29] = 1, f[30] = 10, f[33] = 2;
    f[46] = 0x80, f[47] = 0x10; /* TCP data offset 8 words (timestamps), ACK */
    struct pcap_pkthdr h = {.caplen = 128, .len = 1514};
    for (size_t i = 0; i < n; i++) {
        uint64_t t = 1700000000000000000ull + i * 1230 + (uint64_t)delay_ns;
        h.ts.tv_sec = (time_t)(t / 1000000000u);
        h.ts.tv_usec = (suseconds_t)(t % 1000000000u);
        f[34] = (uint8_t)(0x80 | (i & 63)); /* source port: 64 connections */
        f[38] = (uint8_t)(i >> 24), f[39] = (uint8_t)(i >> 16), f[40] = (uint8_t)(i >> 8);
        f[18] = (uint8_t)(i >> 8), f[19] = (uint8_t)i;
        pcap_dump((u_char *)d, &h, f);
    }
    pcap_dump_close(d);
    pcap_close(pd);
    return 0;
}

static size_t sample_flow(qr_sampler *s, const int64_t *t, size_t n, qr_sample_record *recs)
{
    size_t k = 0;
    qr_sample_series(s, t, n, recs, &k, NULL, NULL, NULL);
    return k;
}

int main(int argc, char **argv)
{
    size_t n = 4000000;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--packets") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_core [--packets N] [--seed S]\n");
            return 2;
        }
    }
    printf("qreplay core benchmark: %zu packets, seed %" PRIu64 " (best of 3 runs)\n\n", n, seed);
    int64_t *t = malloc(n * sizeof *t);
    qr_sample_record *recs = malloc((n + 1) * sizeof *recs);
    qr_synth_cfg sc = qr_synth_default(seed);
    qr_synth_flow(&sc, 0, n, t);

    printf("%-34s %14s %12s %12s\n", "sampling", "packets/s", "pkts/record", "ns/packet");
    const struct {
        qr_sampling_method m;
        int64_t th;
        const char *name;
    } cases[] = {{QR_SAMPLING_RATE, 2000, "rate th=2us"},
                 {QR_SAMPLING_RATE, 5000, "rate th=5us"},
                 {QR_SAMPLING_RATE, 10000, "rate th=10us"},
                 {QR_SAMPLING_GAP, 5000, "gap th=5us"}};
    for (size_t c = 0; c < 4; c++) {
        qr_sampler *s;
        qr_sampler_cfg cfg = {.method = cases[c].m, .th_ns = cases[c].th};
        qr_sampler_create(&s, &cfg);
        size_t nr = 0;
        double secs;
        BEST_OF(3, secs, nr = sample_flow(s, t, n, recs));
        printf("%-34s %14.3e %12.2f %12.2f\n", cases[c].name, n / secs, (double)n / nr,
               secs * 1e9 / n);
        double isecs;
        BEST_OF(3, isecs, {
            size_t pos = 0;
            int64_t x = 0;
            for (size_t i = 0; i < n; i++)
                qr_sample_infer_next(recs, nr, &pos, i, &x);
            sink = x;
        });
        printf("%-34s %14.3e %12s %12.2f\n", "  + inference (streaming)", n / isecs, "",
               isecs * 1e9 / n);
        qr_sampler_destroy(s);
    }

    /* qdiff: snapshots of 4 flows per queue, replay trailing the runtime by 32 arrivals */
    size_t nq = n / 4;
    qr_flow_bytes *fr = malloc(nq * 4 * sizeof *fr), *fp = malloc(nq * 4 * sizeof *fp);
    qr_snapshot *run = malloc(nq * sizeof *run), *rep = malloc(nq * sizeof *rep);
    for (size_t i = 0; i < nq; i++) {
        for (size_t j = 0; j < 4; j++) {
            fr[4 * i + j] = (qr_flow_bytes){10 * j + i % 7, 1500 * ((i + j) % 13)};
            fp[4 * i + j] = (qr_flow_bytes){10 * j + i % 7, 1500 * ((i + 2 * j) % 13)};
        }
        run[i] =
            (qr_snapshot){i, {(uint32_t)(i % 20), (uint32_t)(i % 4)}, (int64_t)i, fr + 4 * i, 4};
        rep[i] =
            (qr_snapshot){i, {(uint32_t)(i % 20), (uint32_t)(i % 4)}, (int64_t)i, fp + 4 * i, 4};
    }
    printf("\n%-34s %14s %12s\n", "qdiff", "arrivals/s", "ns/arrival");
    double s_stream, s_batch;
    BEST_OF(3, s_stream, {
        qr_qdiff_stream *m;
        qr_qdiff_stream_create(&m);
        qr_qdiff_row row;
        int matched;
        for (size_t i = 0; i < nq + 32; i++) {
            if (i < nq)
                qr_qdiff_stream_add(m, QR_RUN_RUNTIME, &run[i], &row, &matched);
            if (i >= 32)
                qr_qdiff_stream_add(m, QR_RUN_REPLAY, &rep[i - 32], &row, &matched);
        }
        qr_summary sum;
        qr_qdiff_stream_summary(m, &sum, NULL);
        sink = (int64_t)sum.count;
        qr_qdiff_stream_destroy(m);
    });
    BEST_OF(3, s_batch, {
        qr_qdiff_row *rows;
        size_t nrows;
        qr_qdiff_match(run, nq, rep, nq, &rows, &nrows);
        sink = (int64_t)nrows;
        free(rows);
    });
    printf("%-34s %14.3e %12.2f\n", "streaming (32 pending)", nq / s_stream, s_stream * 1e9 / nq);
    printf("%-34s %14.3e %12.2f\n", "batch (all runtime pending)", nq / s_batch,
           s_batch * 1e9 / nq);
    printf("%-34s %14.2f\n", "streaming / batch speed", s_batch / s_stream);

    /* shared buffer: 32 ports, random admit, FIFO release */
    printf("\n%-34s %14s %12s\n", "shared buffer", "packets/s", "ns/packet");
    double s_buf;
    BEST_OF(3, s_buf, {
        qr_buffer *b;
        qr_buffer_cfg cfg = {.size_bytes = 2000000, .alpha = 1.0, .n_queues = 32};
        qr_buffer_create(&b, &cfg);
        qr_decision d;
        uint64_t x = seed;
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t q = (uint32_t)(x >> 59);
            qr_buffer_admit(b, q, 1500, QR_MODE_PLAIN, 0, 0, &d);
            if (i % 2 && qr_buffer_queue(b, q) >= 1500)
                qr_buffer_release(b, q, 1500);
        }
        sink = (int64_t)qr_buffer_total(b);
        qr_buffer_destroy(b);
    });
    printf("%-34s %14.3e %12.2f\n", "admit + release (plain)", n / s_buf, s_buf * 1e9 / n);

    /* an operator's capture: 10^6 frames at least, read from the page cache */
    size_t nf = n < 1000000 ? 1000000 : n;
    char cpath[64];
    snprintf(cpath, sizeof cpath, "/tmp/qr-bench-%d.pcap", (int)getpid());
    if (write_capture(cpath, nf, 0) == 0) {
        printf("\n%-34s %14s %12s\n", "capture reading (Ethernet pcap)", "frames/s", "ns/frame");
        double s_cap;
        uint64_t kept = 0;
        BEST_OF(3, s_cap, {
            qr_capture *c;
            char err[QR_ERRBUF_SIZE];
            qr_capture_packet p;
            kept = 0;
            if (qr_capture_open(&c, cpath, err) == QR_OK) {
                while (qr_capture_next(c, &p, err) == QR_OK)
                    kept++;
                qr_capture_close(c);
            }
        });
        printf("%-34s %14.3e %12.2f\n", "qr_capture_next (TCP, 128 B)", nf / s_cap,
               s_cap * 1e9 / nf);
        if (kept != nf)
            printf("  (read %" PRIu64 " of %zu frames)\n", kept, nf);
        /* the same packets seen at the receiver, 5 us later: an import with both ends matched */
        char rpath[64], out[64], err[QR_ERRBUF_SIZE];
        snprintf(rpath, sizeof rpath, "/tmp/qr-bench-%d-b.pcap", (int)getpid());
        snprintf(out, sizeof out, "/tmp/qr-bench-%d-rec", (int)getpid());
        qr_scenario *sc = NULL;
        if (write_capture(rpath, nf, 5000) == 0 && qr_scenario_create(&sc) == QR_OK &&
            qr_scenario_load_string(sc, "[topology]\nkind = star\nhosts = 3\n", "bench", ".",
                                    err) == QR_OK) {
            qr_host_map_entry map[2];
            memset(map, 0, sizeof map);
            qr_addr_parse("10.0.0.1", map[0].addr);
            qr_addr_parse("10.0.0.2", map[1].addr);
            map[1].host = 1;
            snprintf(map[0].capture, sizeof map[0].capture, "%s", cpath);
            snprintf(map[1].capture, sizeof map[1].capture, "%s", rpath);
            const char *caps[2] = {cpath, rpath};
            qr_import_cfg ic = {caps, 2,    map,  2, QR_IMPORT_CLOCK_AUTO, NULL, NULL,
                                0,    NULL, NULL, 0};
            qr_import_report *r = NULL;
            double s_imp;
            int rc = 0;
            BEST_OF(2, s_imp, {
                qr_import_report_free(r);
                r = NULL;
                rc = qr_import_run(&ic, sc, out, &r, err);
            });
            printf("%-34s %14s %12s\n", "qreplay import (both ends)", "packets/s", "ns/packet");
            if (rc == QR_OK) {
                printf("%-34s %14.3e %12.2f\n", "qr_import_run (2 captures)", 2 * nf / s_imp,
                       s_imp * 1e9 / (2 * nf));
                printf("  %zu captured packets, %" PRIu64 " in the recording, %" PRIu64
                       " receive times, %" PRIu64 " drops\n",
                       2 * nf, r->packets, r->received, r->drops[QR_EVIDENCE_BOTH]);
            } else {
                printf("  import failed: %s\n", err);
            }
            qr_import_report_free(r);
            char cmd[128];
            snprintf(cmd, sizeof cmd, "rm -rf %s", out);
            if (system(cmd))
                printf("  (could not remove %s)\n", out);
        }
        qr_scenario_destroy(sc);
        unlink(rpath);
        unlink(cpath);
    }
    free(t);
    free(recs);
    free(fr);
    free(fp);
    free(run);
    free(rep);
    return 0;
}
