/* The run folder's files and the results: variant names and order, the arrival-log merge, the
 * busiest queue, mkdir -p, and a whole results.h5 computed from a hand-built run folder. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-results-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(results, .init = setup, .fini = teardown);

Test(results, variant_names)
{
    char b[64];
    cr_assert_str_eq(qr_variant_name(QR_MODE_TAGGED, 5000, b, sizeof b), "tagged_th_5");
    cr_assert_str_eq(qr_variant_name(QR_MODE_PLAIN, 0, b, sizeof b), "plain_th_0");
    cr_assert_str_eq(qr_variant_name(QR_MODE_TAGGED, 2500, b, sizeof b), "tagged_th_2.5");
    cr_assert_str_eq(qr_end_reason_name(QR_END_COMPLETED), "completed");
    cr_assert_str_eq(qr_end_reason_name(QR_END_STOP), "stop");
    cr_assert_str_eq(qr_end_reason_name(QR_END_CANCELLED), "cancelled");
}

static void touch(const char *fmt, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, fmt, dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fclose(f);
}

Test(results, make_dirs_and_variant_order)
{
    char p[256], err[QR_ERRBUF_SIZE];
    const char *names[] = {"tagged_th_10", "tagged_th_2", "plain_th_5", "custom", "unfinished"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/replay/%s", dir, names[i]);
        cr_assert_eq(qr_make_dirs(p, err), QR_OK, "%s", err);
        if (i < 4)
            touch("%s/replay/%s/replay.h5", names[i]);
    }
    char **v;
    size_t n;
    cr_assert_eq(qr_variants_list(dir, &v, &n), QR_OK);
    cr_assert_eq(n, 4, "a folder without replay.h5 is no complete replay");
    cr_assert_str_eq(v[0], "custom");
    cr_assert_str_eq(v[1], "plain_th_5");
    cr_assert_str_eq(v[2], "tagged_th_2");
    cr_assert_str_eq(v[3], "tagged_th_10", "thresholds in numeric order");
    qr_variants_free(v, n);
    cr_assert_eq(qr_variants_list("/nonexistent/qr", &v, &n), QR_OK);
    cr_assert_eq(n, 0);
    /* a file in the way */
    touch("%s/%s", "file");
    snprintf(p, sizeof p, "%s/file/sub", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_EIO);
    cr_assert(strstr(err, "file/sub"), "%s", err);
}

/* Write an arrival log: n arrivals of (packet, time, sw, port, decision, flows...). */
typedef struct {
    uint64_t packet;
    int64_t time;
    uint32_t sw, port;
    uint8_t decision;
    uint64_t flow_bytes; /* bytes of flow 1 queued (0: empty queue) */
} arr;

static void write_log(const char *path, const arr *a, size_t n)
{
    qr_arrival_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
    for (size_t i = 0; i < n; i++) {
        qr_flow_bytes fb = {1, a[i].flow_bytes};
        qr_arrival x = {.packet = a[i].packet,
                        .time_ns = a[i].time,
                        .sw = a[i].sw,
                        .port = a[i].port,
                        .bytes = 1500,
                        .decision = a[i].decision,
                        .n_flows = a[i].flow_bytes ? 1 : 0,
                        .queue_bytes = a[i].flow_bytes,
                        .flows = &fb};
        cr_assert_eq(qr_arrival_write(w, &x, err), QR_OK, "%s", err);
    }
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK, "%s", err);
}

static const arr run_log[] = {{1, 100, 0, 1, QR_ADMIT, 0},
                              {2, 200, 0, 1, QR_ADMIT, 1500},
                              {3, 200, 0, 2, QR_ADMIT, 0},
                              {4, 300, 0, 1, QR_DROP_THRESHOLD, 3000}};
static const arr rep_log[] = {{1, 100, 0, 1, QR_ADMIT, 0},
                              {2, 200, 0, 1, QR_ADMIT, 3000},
                              {4, 350, 0, 2, QR_DROP_TAGGED, 0},
                              {9, 400, 0, 1, QR_ADMIT, 0}};

struct seen {
    qr_qdiff_row rows[16];
    size_t n_rows;
    qr_row_queue_series series[16];
    size_t n_series;
};

static int on_row(void *ctx, const qr_qdiff_row *r)
{
    struct seen *s = ctx;
    s->rows[s->n_rows++] = *r;
    return 0;
}

static int on_series(void *ctx, const qr_row_queue_series *p)
{
    struct seen *s = ctx;
    s->series[s->n_series++] = *p;
    return 0;
}

static int stop_at_second(void *ctx, const qr_qdiff_row *r)
{
    (void)r;
    struct seen *s = ctx;
    return ++s->n_rows == 2 ? QR_EIO : 0;
}

Test(results, arrival_logs_merge_and_busiest)
{
    char a[128], b[128], err[QR_ERRBUF_SIZE];
    snprintf(a, sizeof a, "%s/run.qra", dir);
    snprintf(b, sizeof b, "%s/rep.qra", dir);
    write_log(a, run_log, 4);
    write_log(b, rep_log, 4);
    uint32_t sw, port;
    cr_assert_eq(qr_arrival_log_busiest(a, &sw, &port, err), QR_OK, "%s", err);
    cr_assert(sw == 0 && port == 1, "(0,1) has 3 arrivals");
    struct seen s = {0};
    qr_qdiff_stream *qs;
    cr_assert_eq(qr_compare_arrival_logs(a, b, 0, 1, on_row, on_series, &s, &qs, err), QR_OK, "%s",
                 err);
    cr_assert_eq(s.n_rows, 2, "packets 1 and 2 reached the same queue in both runs");
    cr_assert(s.rows[0].packet == 1 && s.rows[0].qdiff_bytes == 0);
    cr_assert(s.rows[1].packet == 2 && s.rows[1].qdiff_bytes == 1500 &&
              s.rows[1].time_run_ns == 200 && s.rows[1].time_rep_ns == 200);
    cr_assert_eq(s.n_series, 3, "replay arrivals at (0,1)");
    cr_assert(s.series[1].time_ns == 200 && s.series[1].queue_bytes == 3000);
    uint64_t ro, po;
    qr_qdiff_stream_pending(qs, &ro, &po);
    cr_assert(ro == 2 && po == 2, "runtime-only: 3@(0,2), 4@(0,1); replay-only: 4@(0,2), 9");
    qr_row_queue_summary *q;
    size_t nq;
    cr_assert_eq(qr_qdiff_stream_queue_rows(qs, &q, &nq), QR_OK);
    cr_assert(nq == 1 && q[0].sw == 0 && q[0].port == 1 && q[0].count == 2);
    cr_assert_float_eq(q[0].mean, 0.5, 1e-12);
    qr_h5_rows_free(q);
    qr_qdiff_stream_destroy(qs);
    /* a callback stops the comparison with its code */
    memset(&s, 0, sizeof s);
    cr_assert_eq(qr_compare_arrival_logs(a, b, 0, 1, stop_at_second, NULL, &s, &qs, err), QR_EIO);
    cr_assert_null(qs);
    /* a missing log is named */
    cr_assert_neq(qr_compare_arrival_logs(a, "/nonexistent.qra", 0, 1, NULL, NULL, NULL, &qs, err),
                  QR_OK);
    cr_assert(strstr(err, "nonexistent.qra"), "%s", err);
}

/* A whole run folder by hand: results.h5's summary equals what the definitions give. */
Test(results, results_of_a_hand_built_run_folder)
{
    char p[256], err[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/recording/truth", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    snprintf(p, sizeof p, "%s/replay/tagged_th_5", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "topology.kind=star", err), QR_OK, "%s", err);
    qr_row_flow flows[] = {{0, 0, 1, 10000, 5001, 3000, 0, 500, 500, 0, 1, 1}};
    qr_row_host hosts[] = {{0, 1, 0, 3, 4500, "pcap/h0000.pcap"},
                           {1, 2, 0, 1, 40, "pcap/h0001.pcap"},
                           {2, 3, 0, 0, 0, "pcap/h0002.pcap"}};
    qr_recording_info ri = {NULL, "hand", QR_END_COMPLETED, 1000, 0, NULL, 0, NULL, 0, NULL, 0,
                            NULL, 0};
    snprintf(p, sizeof p, "%s/recording/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, s, &ri, flows, 1, hosts, 3, NULL, 0, NULL, 0, err), QR_OK,
                 "%s", err);
    qr_row_drop rdrop[] = {{4, 0, 300, 0, 1, 1500, QR_DROP_THRESHOLD, 0, 3000, 2000}};
    qr_truth_info ti = {.recording_id = NULL,
                        .end = QR_END_COMPLETED,
                        .sim_end_ns = 1000,
                        .events = 10,
                        .wall_s = 0.1};
    snprintf(p, sizeof p, "%s/recording/truth/truth.h5", dir);
    cr_assert_eq(qr_truth_write(p, s, &ti, rdrop, 1, NULL, 0, err), QR_OK, "%s", err);
    snprintf(p, sizeof p, "%s/recording/truth/arrivals.qra", dir);
    write_log(p, run_log, 4);
    snprintf(p, sizeof p, "%s/replay/tagged_th_5/arrivals.qra", dir);
    write_log(p, rep_log, 4);
    /* the replay dropped packet 4 elsewhere, and packet 9 that the runtime delivered */
    qr_row_drop pdrop[] = {{4, 0, 350, 0, 2, 1500, QR_DROP_TAGGED, 1, 0, 0},
                           {9, 0, 400, 0, 1, 1500, QR_DROP_TAGGED, 1, 0, 0}};
    qr_row_replay_host rh[] = {{0, 3, 4500}, {1, 1, 40}, {2, 0, 0}};
    qr_replay_info pi = {NULL, "tagged_th_5", QR_MODE_TAGGED, 5000, 7500, 10,       0.1, 1000, 0, 0,
                         2,    {4, 2, 0},     "recorded",     NULL, 0,    "native", NULL};
    snprintf(p, sizeof p, "%s/replay/tagged_th_5/replay.h5", dir);
    cr_assert_eq(qr_replay_write(p, s, &pi, pdrop, 2, rh, 3, NULL, 0, NULL, err), QR_OK, "%s", err);
    qr_variant_summary *rows;
    size_t n;
    cr_assert_eq(qr_results_write(dir, NULL, NULL, &rows, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(rows[0].name, "tagged_th_5");
    cr_assert_str_eq(rows[0].mode, "tagged");
    cr_assert_eq(rows[0].th_ns, 5000);
    cr_assert_eq(rows[0].drops.runtime_drops, 1);
    cr_assert_eq(rows[0].drops.replay_drops, 2);
    cr_assert_eq(rows[0].drops.either, 2);
    cr_assert_eq(rows[0].drops.false_accepts, 0);
    cr_assert_eq(rows[0].drops.false_drops, 1);
    cr_assert_eq(rows[0].drops.wrong_locations, 1);
    cr_assert_float_eq(rows[0].drops.error, 1.0, 1e-12);
    cr_assert_eq(rows[0].matched, 2);
    cr_assert_float_eq(rows[0].qdiff.mean, 0.5, 1e-12);
    cr_assert_eq(rows[0].recorded_packets, 4);
    cr_assert_eq(rows[0].replay_packets, 4);
    /* the file says the same */
    qr_h5_reader *r;
    double v;
    snprintf(p, sizeof p, "%s/results.h5", dir);
    cr_assert_eq(qr_h5_open(&r, p, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/replay/tagged_th_5", "drop_error", &v, err), QR_OK);
    cr_assert_float_eq(v, 1.0, 1e-12);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/replay/tagged_th_5", "qdiff_mean_mtu", &v, err), QR_OK);
    cr_assert_float_eq(v, 0.5, 1e-12);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/runtime", "busiest_port", &v, err), QR_OK);
    cr_assert_eq(v, 1);
    qr_h5_close(r);
    qr_variant_summaries_free(rows);
    /* without replays: a clear error, no results.h5 */
    snprintf(p, sizeof p, "rm -rf %s/replay %s/results.h5", dir, dir);
    cr_assert_eq(system(p), 0);
    cr_assert_eq(qr_results_write(dir, NULL, NULL, &rows, &n, err), QR_ENOENT);
    cr_assert(strstr(err, "no complete replay"), "%s", err);
    snprintf(p, sizeof p, "%s/results.h5", dir);
    cr_assert_neq(access(p, F_OK), 0);
    qr_scenario_destroy(s);
}

static int stop_now(void *ctx, const char *status)
{
    (void)status;
    return ++*(int *)ctx >= 2; /* the first call goes on, the second stops */
}

/* Interrupted results (the metrics of a run folder): QR_ECANCELED, no results.h5, no partial. */
Test(results, a_progress_callback_stops_results_leaving_nothing)
{
    char p[256], err[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/recording/truth", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    qr_row_flow flows[] = {{0, 0, 1, 10000, 5001, 3000, 0, 500, 500, 0, 1, 1}};
    qr_row_host hosts[] = {{0, 1, 0, 3, 4500, "pcap/h0000.pcap"}};
    qr_recording_info ri = {NULL, "hand", QR_END_COMPLETED, 1000, 0, NULL, 0, NULL, 0, NULL, 0,
                            NULL, 0};
    snprintf(p, sizeof p, "%s/recording/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, s, &ri, flows, 1, hosts, 1, NULL, 0, NULL, 0, err), QR_OK);
    qr_truth_info ti = {.recording_id = NULL,
                        .end = QR_END_COMPLETED,
                        .sim_end_ns = 1000,
                        .events = 10,
                        .wall_s = 0.1};
    snprintf(p, sizeof p, "%s/recording/truth/truth.h5", dir);
    cr_assert_eq(qr_truth_write(p, s, &ti, NULL, 0, NULL, 0, err), QR_OK);
    snprintf(p, sizeof p, "%s/recording/truth/arrivals.qra", dir);
    write_log(p, run_log, 4);
    qr_replay_info pi = {NULL, "a", QR_MODE_TAGGED, 0,    7500, 10, 0.1,  1000, 0,
                         0,    2,   {4, 2, 0},      NULL, NULL, 0,  NULL, NULL};
    for (int v = 0; v < 2; v++) {
        snprintf(p, sizeof p, "%s/replay/v%d", dir, v);
        cr_assert_eq(qr_make_dirs(p, err), QR_OK);
        snprintf(p, sizeof p, "%s/replay/v%d/arrivals.qra", dir, v);
        write_log(p, rep_log, 4);
        snprintf(p, sizeof p, "%s/replay/v%d/replay.h5", dir, v);
        cr_assert_eq(qr_replay_write(p, s, &pi, NULL, 0, NULL, 0, NULL, 0, NULL, err), QR_OK, "%s",
                     err);
    }
    qr_variant_summary *rows = NULL;
    size_t n = 0;
    int calls = 0;
    cr_assert_eq(qr_results_write(dir, stop_now, &calls, &rows, &n, err), QR_ECANCELED);
    cr_assert_eq(calls, 2);
    cr_assert_null(rows);
    snprintf(p, sizeof p, "find %s -name '*.partial-*' -o -name results.h5 | grep -q .", dir);
    cr_assert_neq(system(p), 0, "nothing of results.h5 is left");
    calls = -100; /* never stops */
    cr_assert_eq(qr_results_write(dir, stop_now, &calls, &rows, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 2);
    qr_variant_summaries_free(rows);
    qr_scenario_destroy(s);
}
