/* The butterfly job (butterfly.h) with a scripted engine: the runtime runs once into DIR/runtime,
 * every sigma gets N replays with streams 1..N in order, the typical replay of each sigma runs
 * again for its series, butterfly.h5 holds exactly that, and an engine error or a cancel leaves
 * no butterfly.h5. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/butterfly.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"

static char dir[64];
static qr_scenario *scen;

struct engine {
    char runtime_dir[128];
    int runtimes;
    struct {
        int64_t sigma;
        uint32_t replay;
        int series;
    } calls[64];
    int n_calls;
    int fail_at;   /* the call that fails (-1: none) */
    int cancel_at; /* the progress step that cancels (-1: none) */
    int steps;
    int runtime_seen;
};

static int runtime(void *ctx, const char *d, qr_butterfly_runtime *out, char *err)
{
    struct engine *e = ctx;
    (void)err;
    e->runtimes++;
    snprintf(e->runtime_dir, sizeof e->runtime_dir, "%s", d);
    *out = (qr_butterfly_runtime){.short_flow = 3,
                                  .short_fct_ns = 1000000,
                                  .drops = 7,
                                  .bottleneck_switch = 2,
                                  .bottleneck_port = 1,
                                  .end_ns = 9000000};
    return QR_OK;
}

/* Replay r of sigma s: the short flow reproduced for odd r; first divergence 1000 * r ns. */
static int replay(void *ctx, int64_t sigma, uint32_t r, qr_row_butterfly_replay *out,
                  qr_row_butterfly_series **series, size_t *n, char *err)
{
    struct engine *e = ctx;
    int i = e->n_calls++;
    e->calls[i].sigma = sigma;
    e->calls[i].replay = r;
    e->calls[i].series = series != NULL;
    if (i == e->fail_at) {
        snprintf(err, QR_ERRBUF_SIZE, "the simulator broke");
        return QR_EIO;
    }
    memset(out, 0, sizeof *out);
    out->sigma_ns = sigma;
    out->replay = r;
    out->short_reproduced = r % 2;
    out->first_divergence_ns = 1000 * (int64_t)r;
    if (series) {
        *n = r;
        *series = malloc(r * sizeof **series);
        for (uint32_t k = 0; k < r; k++)
            (*series)[k] = (qr_row_butterfly_series){(int64_t)k * 10, 1500 * (uint64_t)r};
    }
    return QR_OK;
}

static int progress(void *ctx, const char *status)
{
    struct engine *e = ctx;
    (void)status;
    return e->steps++ == e->cancel_at;
}

static void on_runtime(void *ctx, const qr_butterfly_runtime *rt)
{
    struct engine *e = ctx;
    e->runtime_seen = rt->drops == 7;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-butterfly-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    qr_scenario_destroy(scen);
}

static const int64_t sigmas[] = {0, 100};

static qr_butterfly_job job_for(struct engine *e)
{
    return (qr_butterfly_job){.scenario = scen,
                              .dir = dir,
                              .sigmas_ns = sigmas,
                              .n_sigmas = 2,
                              .replays = 3,
                              .runtime = runtime,
                              .replay = replay,
                              .engine_ctx = e,
                              .on_runtime = on_runtime,
                              .progress = progress,
                              .progress_ctx = e};
}

static int exists(const char *name)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

Test(butterfly_job, plan_and_result_file, .init = setup, .fini = teardown)
{
    struct engine e = {.fail_at = -1, .cancel_at = -1};
    qr_butterfly_job job = job_for(&e);
    qr_butterfly_runtime rt;
    qr_row_butterfly_sigma *rows = NULL;
    char err[QR_ERRBUF_SIZE] = "", want[128];
    cr_assert_eq(qr_butterfly_run(&job, &rt, &rows, err), QR_OK, "%s", err);
    snprintf(want, sizeof want, "%s/runtime", dir);
    cr_assert_eq(e.runtimes, 1);
    cr_assert_str_eq(e.runtime_dir, want);
    cr_assert(e.runtime_seen);
    /* per sigma: replays 1, 2, 3, then the typical one again with its series */
    cr_assert_eq(e.n_calls, 8);
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < 3; r++) {
            cr_assert_eq(e.calls[4 * k + r].sigma, sigmas[k]);
            cr_assert_eq(e.calls[4 * k + r].replay, (uint32_t)r + 1);
            cr_assert_not(e.calls[4 * k + r].series);
        }
        /* the median first divergence of 1, 2, 3 us: replay 2 */
        cr_assert_eq(e.calls[4 * k + 3].replay, 2);
        cr_assert(e.calls[4 * k + 3].series);
        cr_assert_eq(rows[k].typical_replay, 2);
        cr_assert_eq(rows[k].replays, 3);
        cr_assert_float_eq(rows[k].short_reproduced_pct, 200.0 / 3, 1e-9);
    }
    free(rows);

    qr_h5_reader *r = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/butterfly.h5", dir);
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    qr_row_butterfly_replay *reps = NULL;
    qr_row_butterfly_sigma *sig = NULL;
    qr_row_butterfly_series *ser = NULL;
    size_t n_reps, n_sig, n_ser;
    double v;
    cr_assert_eq(
        qr_h5_read_rows(r, "/replays", &qr_schema_butterfly_replay, (void **)&reps, &n_reps, err),
        QR_OK, "%s", err);
    cr_assert_eq(n_reps, 6, "the typical replays' second runs are not rows of /replays");
    cr_assert_eq(
        qr_h5_read_rows(r, "/sigma", &qr_schema_butterfly_sigma, (void **)&sig, &n_sig, err), QR_OK,
        "%s", err);
    cr_assert_eq(n_sig, 2);
    cr_assert_eq(sig[1].sigma_ns, 100);
    cr_assert_eq(qr_h5_read_rows(r, "/typical/sigma_100", &qr_schema_butterfly_series,
                                 (void **)&ser, &n_ser, err),
                 QR_OK, "%s", err);
    cr_assert_eq(n_ser, 2);
    cr_assert_eq(ser[1].diff_bytes, 3000);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", "runtime_drops", &v, err), QR_OK);
    cr_assert_eq(v, 7);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", "short_flow", &v, err), QR_OK);
    cr_assert_eq(v, 3);
    qr_h5_rows_free(reps);
    qr_h5_rows_free(sig);
    qr_h5_rows_free(ser);
    qr_h5_close(r);
}

Test(butterfly_job, an_engine_error_leaves_no_result, .init = setup, .fini = teardown)
{
    struct engine e = {.fail_at = 5, .cancel_at = -1};
    qr_butterfly_job job = job_for(&e);
    qr_butterfly_runtime rt;
    qr_row_butterfly_sigma *rows = NULL;
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_butterfly_run(&job, &rt, &rows, err), QR_EIO);
    cr_assert_str_eq(err, "the simulator broke");
    cr_assert_null(rows);
    cr_assert_not(exists("butterfly.h5"));
    cr_assert_eq(e.n_calls, 6, "nothing runs after the failed replay");
}

Test(butterfly_job, a_cancel_stops_and_leaves_no_result, .init = setup, .fini = teardown)
{
    struct engine e = {.fail_at = -1, .cancel_at = 1};
    qr_butterfly_job job = job_for(&e);
    qr_butterfly_runtime rt;
    qr_row_butterfly_sigma *rows = NULL;
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_butterfly_run(&job, &rt, &rows, err), QR_ECANCELED);
    cr_assert_str_eq(err, "interrupted");
    cr_assert_eq(e.n_calls, 2);
    cr_assert_not(exists("butterfly.h5"));
}

Test(butterfly_job, nothing_to_run_is_refused, .init = setup, .fini = teardown)
{
    struct engine e = {.fail_at = -1, .cancel_at = -1};
    qr_butterfly_job job = job_for(&e);
    job.replays = 0;
    qr_butterfly_runtime rt;
    qr_row_butterfly_sigma *rows = NULL;
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_butterfly_run(&job, &rt, &rows, err), QR_EVALUE);
    cr_assert_eq(e.runtimes, 0, "the runtime must not run for nothing");
}
