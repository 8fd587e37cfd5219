/* The what-if job (whatif.h: qr_whatif_run, the analysis) and its scorer (whatif_score.h:
 * qr_whatif_validate) on the hand-made run: the analysis reads no truth (the same predictions with
 * truth/ removed); the scorer's predictions are the analysis's, byte for byte; its recorded row is
 * the truth log measured; with the closed loop, each point's truth is its runtime's log measured
 * and /errors is qr_whatif_errors of the two; the refusals and what they leave. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hand_run.h"
#include "qreplay/error.h"
#include "qreplay/replay.h"
#include "qreplay/whatif.h"
#include "qreplay/whatif_score.h"

static struct hand_run h;
static char run_dir[64], rec_dir[96];
static qr_whatif_grid *grid;
static int runtimes; /* closed-loop runs the scorer asked for */

static void setup(void)
{
    char err[QR_ERRBUF_SIZE], h5[160], cmd[256];
    hand_run_make(&h);
    snprintf(run_dir, sizeof run_dir, "/tmp/qr-whatif-job-XXXXXX");
    cr_assert_not_null(mkdtemp(run_dir));
    snprintf(rec_dir, sizeof rec_dir, "%s/recording", run_dir);
    snprintf(cmd, sizeof cmd, "cp -r %s %s", h.dir, rec_dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(h5, sizeof h5, "%s/recording.h5", rec_dir);
    const char *vary[] = {"buffer.size=1500B"}; /* the baseline (point 0) and one packet's room */
    cr_assert_eq(qr_whatif_grid_parse(&grid, vary, 1, h5, rec_dir, err), QR_OK, "%s", err);
    runtimes = 0;
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", run_dir);
    cr_assert_eq(system(cmd), 0);
    qr_whatif_grid_destroy(grid);
    hand_run_free(&h);
}

TestSuite(whatif_job, .init = setup, .fini = teardown);

static qr_whatif_job job_of(void)
{
    qr_whatif_job j;
    memset(&j, 0, sizeof j);
    j.run_dir = run_dir;
    j.grid = grid;
    j.mode = QR_MODE_PLAIN;
    j.th_ns = 0;
    j.engine = qr_replay_native;
    j.engine_name = "native";
    return j;
}

/* The closed loop of the hand run: its recorder run again into dir (the same packets at every
 * point: a network whose answer the buffer does not change). */
static int hand_runtime(void *ctx, const qr_scenario *s, const char *dir, char *errbuf)
{
    (void)ctx;
    (void)errbuf;
    hand_run_record(&h, dir, s);
    runtimes++;
    return QR_OK;
}

static int exists(const char *fmt, const char *a)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, fmt, a);
    return stat(p, &st) == 0;
}

static void same_row(const qr_whatif_row *a, const qr_whatif_row *b, const char *what)
{
    cr_assert_eq(memcmp(a, b, sizeof *a), 0, "%s: the rows differ", what);
}

Test(whatif_job, the_analysis_reads_no_truth)
{
    char err[QR_ERRBUF_SIZE], cmd[256];
    qr_whatif_job j = job_of();
    qr_whatif_outcome a, b;
    cr_assert_eq(qr_whatif_run(&j, &a, err), QR_OK, "%s", err);
    cr_assert_eq(a.n, 2, "the baseline and 1500 B");
    cr_assert_null(a.truth);
    cr_assert_eq(a.has_recorded, 0);
    cr_assert_null(a.errors);
    cr_assert(exists("%s/whatif/whatif.h5", run_dir));
    cr_assert(!exists("%s/whatif.partial-*", run_dir));
    /* the hand run's 3 packets of 1500 B, 1 us apart, out of a 10 Gbit/s port: none waits for
     * another's whole time, so even room for one packet drops none */
    for (size_t p = 0; p < 2; p++) {
        cr_assert_eq(a.pred[p].row.arrivals, 3);
        cr_assert_eq(a.pred[p].row.drops, 0);
    }
    snprintf(cmd, sizeof cmd, "rm -r %s/truth %s/mirror", rec_dir, rec_dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qr_whatif_run(&j, &b, err), QR_OK, "%s", err);
    for (size_t p = 0; p < 2; p++)
        same_row(&a.pred[p].row, &b.pred[p].row, "with and without truth/");
    qr_whatif_outcome_free(&a);
    qr_whatif_outcome_free(&b);
}

Test(whatif_job, the_scorer_adds_the_recorded_run_and_keeps_the_predictions)
{
    char err[QR_ERRBUF_SIZE], log[160];
    qr_whatif_job j = job_of();
    qr_whatif_validation v = {0, hand_runtime, NULL};
    qr_whatif_outcome a, b;
    cr_assert_eq(qr_whatif_run(&j, &a, err), QR_OK, "%s", err);
    cr_assert_eq(qr_whatif_validate(&j, &v, &b, err), QR_OK, "%s", err);
    cr_assert_eq(runtimes, 0, "no closed loop asked for");
    cr_assert_null(b.truth);
    cr_assert_null(b.errors);
    for (size_t p = 0; p < 2; p++)
        same_row(&a.pred[p].row, &b.pred[p].row, "the analysis's and the scorer's predictions");
    cr_assert_eq(b.has_recorded, 1);
    /* the recorded row: the truth log measured, at the baseline */
    qr_whatif_result want;
    snprintf(log, sizeof log, "%s/truth/arrivals.qra", rec_dir);
    cr_assert_eq(qr_whatif_measure(log, qr_recording_scenario(h.rec), NULL, NULL,
                                   (uint32_t)qr_whatif_grid_baseline(grid), QR_WHATIF_RECORDED,
                                   &want, err),
                 QR_OK, "%s", err);
    same_row(&want.row, &b.recorded.row, "the recorded run");
    cr_assert_eq(b.recorded.row.drops, 1, "the hand run dropped packet 1");
    qr_whatif_result_free(&want);
    /* whatif.h5 holds the prediction rows and the recorded one */
    qr_whatif_result *rs;
    size_t n;
    char h5[160];
    snprintf(h5, sizeof h5, "%s/whatif/whatif.h5", run_dir);
    cr_assert_eq(qr_whatif_read(h5, &rs, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(rs[2].row.kind, QR_WHATIF_RECORDED);
    qr_whatif_results_free(rs, n);
    qr_whatif_outcome_free(&a);
    qr_whatif_outcome_free(&b);
}

Test(whatif_job, the_closed_loop_grades_every_point)
{
    char err[QR_ERRBUF_SIZE];
    qr_whatif_job j = job_of();
    qr_whatif_validation v = {1, hand_runtime, NULL};
    qr_whatif_outcome o;
    cr_assert_eq(qr_whatif_validate(&j, &v, &o, err), QR_OK, "%s", err);
    cr_assert_eq(runtimes, 2, "one closed loop per point");
    cr_assert_not_null(o.truth);
    cr_assert_not_null(o.errors);
    qr_whatif_error_row want[2];
    qr_whatif_agreement ag;
    cr_assert_eq(qr_whatif_errors(o.pred, o.truth, 2, want, &ag), QR_OK);
    for (size_t p = 0; p < 2; p++) {
        cr_assert_eq(o.truth[p].row.kind, QR_WHATIF_TRUTH);
        cr_assert_eq(o.truth[p].row.drops, 1, "the hand run's closed loop drops packet 1");
        cr_assert_eq(o.errors[p].drops_pred, (int64_t)o.pred[p].row.drops);
        cr_assert_eq(o.errors[p].drops_true, (int64_t)o.truth[p].row.drops);
        cr_assert_eq(memcmp(&o.errors[p], &want[p], sizeof want[p]), 0, "point %zu", p);
    }
    /* point 0 predicted no drop where its truth has one: -100% */
    cr_assert_float_eq(o.errors[0].drops_rel, -1.0, 1e-12);
    qr_whatif_outcome_free(&o);
}

Test(whatif_job, refusals_leave_nothing)
{
    char err[QR_ERRBUF_SIZE], cmd[256];
    qr_whatif_job j = job_of();
    qr_whatif_outcome o;
    qr_whatif_validation none = {1, NULL, NULL};
    cr_assert_eq(qr_whatif_validate(&j, &none, &o, err), QR_EINVAL);
    cr_assert(strstr(err, "runtime"), "%s", err);
    snprintf(cmd, sizeof cmd, "rm -r %s/truth", rec_dir);
    cr_assert_eq(system(cmd), 0);
    qr_whatif_validation v = {1, hand_runtime, NULL};
    cr_assert_eq(qr_whatif_validate(&j, &v, &o, err), QR_EVALUE);
    cr_assert(strstr(err, "no truth arrival log"), "%s", err);
    cr_assert_eq(runtimes, 0);
    cr_assert(!exists("%s/whatif", run_dir));
    snprintf(cmd, sizeof cmd, "ls %s | grep -q partial", run_dir);
    cr_assert_neq(system(cmd), 0, "a work folder was left");
    /* without the closed loop and without truth: the predictions alone, ungraded */
    v.closed_loop = 0;
    cr_assert_eq(qr_whatif_validate(&j, &v, &o, err), QR_OK, "%s", err);
    cr_assert_eq(o.has_recorded, 0);
    qr_whatif_outcome_free(&o);
}
