/* The what-if graded (whatif_score.h: qr_whatif_validate): the analysis's predictions, the closed
 * loop rerun at every point and the recorded run measured from its truth log, as tasks of one
 * runner, then /errors. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/tasks.h"
#include "qreplay/whatif.h"
#include "qreplay/whatif_score.h"

enum { RUN_PRED, RUN_TRUTH, RUN_RECORDED };
static const char *const run_names[] = {"prediction", "truth", "recorded"};

struct run {
    int what;
    size_t point;
};

/* What a runtime's folder holds that the measurement no longer needs. */
static void prune_runtime(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/truth/arrivals.qra", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/" QR_MIRROR_COPIES, dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/pcap", dir);
    qri_remove_tree(p);
}

/* Point p's truth: the runtime on its scenario, measured from its truth log. */
static int truth_run(const qr_whatif_work *w, const qr_whatif_validation *v, size_t p, char *err)
{
    char pd[4096], rd[4200], arr[4300], path[4300];
    qr_scenario *s = NULL;
    qr_whatif_result res;
    memset(&res, 0, sizeof res);
    int rc = qr_whatif_point_dir(w, p, pd, sizeof pd, err);
    if (!rc)
        rc = qr_whatif_grid_scenario(w->job->grid, p, &s, err);
    if (rc)
        return rc;
    snprintf(rd, sizeof rd, "%s/runtime", pd);
    rc = v->runtime(v->runtime_ctx, s, rd, err);
    snprintf(arr, sizeof arr, "%s/truth/arrivals.qra", rd);
    if (!rc)
        rc = qr_whatif_measure(arr, s, NULL, NULL, (uint32_t)p, QR_WHATIF_TRUTH, &res, err);
    if (!rc && w->job->prune)
        prune_runtime(rd);
    qr_whatif_result_path(w, "truth", p, path, sizeof path);
    if (!rc)
        rc = qr_whatif_result_save(path, &res, err);
    qr_whatif_result_free(&res);
    qr_scenario_destroy(s);
    return rc;
}

/* The recorded run, measured from the truth's arrival log. */
static int recorded_run(const qr_whatif_work *w, char *err)
{
    char arr[4300], path[4300];
    qr_whatif_result res;
    memset(&res, 0, sizeof res);
    snprintf(arr, sizeof arr, "%s/truth/arrivals.qra", w->rec_dir);
    int rc = qr_whatif_measure(arr, qr_recording_scenario(w->rec), NULL, NULL,
                               (uint32_t)qr_whatif_grid_baseline(w->job->grid), QR_WHATIF_RECORDED,
                               &res, err);
    qr_whatif_result_path(w, "recorded", 0, path, sizeof path);
    if (!rc)
        rc = qr_whatif_result_save(path, &res, err);
    qr_whatif_result_free(&res);
    return rc;
}

struct runs_ctx {
    const qr_whatif_work *w;
    const qr_whatif_validation *v;
    const struct run *runs;
};

static int run_task(void *ctx, size_t i, char *err)
{
    const struct runs_ctx *c = ctx;
    const struct run *r = &c->runs[i];
    switch (r->what) {
    case RUN_PRED: return qr_whatif_predict(c->w, r->point, err);
    case RUN_TRUTH: return truth_run(c->w, c->v, r->point, err);
    default: return recorded_run(c->w, err);
    }
}

static int run_all(const qr_whatif_work *w, const qr_whatif_validation *v, const struct run *runs,
                   size_t n, char *errbuf)
{
    enum { NAME_SIZE = 512 };
    char *text = calloc(n ? n : 1, NAME_SIZE);
    const char **names = calloc(n ? n : 1, sizeof *names);
    int rc = QR_OK;
    if (!text || !names)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        qr_whatif_describe(w->job, runs[i].point, run_names[runs[i].what], text + i * NAME_SIZE,
                           NAME_SIZE);
        names[i] = text + i * NAME_SIZE;
    }
    struct runs_ctx c = {w, v, runs};
    if (!rc)
        rc = qr_tasks_run(&w->job->runner, n, run_task, &c, names, w->job->cancel, errbuf);
    if (!rc && w->job->cancel && *w->job->cancel)
        rc = QR_ECANCELED;
    free(names);
    free(text);
    return rc;
}

/* The truths and the recorded run's result into out, and the errors. */
static int collect(const qr_whatif_work *w, int closed_loop, int has_truth, qr_whatif_outcome *out,
                   char *errbuf)
{
    size_t np = out->n;
    char path[4300];
    if (closed_loop) {
        out->truth = calloc(np ? np : 1, sizeof *out->truth);
        if (!out->truth)
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
        for (size_t p = 0; p < np; p++) {
            qr_whatif_result_path(w, "truth", p, path, sizeof path);
            int rc = qr_whatif_result_load(path, &out->truth[p], errbuf);
            if (rc)
                return rc;
        }
    }
    if (has_truth) {
        qr_whatif_result_path(w, "recorded", 0, path, sizeof path);
        int rc = qr_whatif_result_load(path, &out->recorded, errbuf);
        if (rc)
            return rc;
        out->has_recorded = 1;
    }
    if (closed_loop) {
        out->errors = calloc(np ? np : 1, sizeof *out->errors);
        if (!out->errors ||
            qr_whatif_errors(out->pred, out->truth, np, out->errors, &out->agree) != QR_OK)
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    return QR_OK;
}

int qr_whatif_validate(const qr_whatif_job *job, const qr_whatif_validation *v,
                       qr_whatif_outcome *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    char truth_log[4200];
    snprintf(truth_log, sizeof truth_log, "%s/recording/truth/arrivals.qra", job->run_dir);
    struct stat st;
    int has_truth = stat(truth_log, &st) == 0, closed_loop = v && v->closed_loop;
    if (closed_loop && !v->runtime)
        return qri_err(errbuf, QR_EINVAL, "--validate needs a program with a runtime");
    if (closed_loop && !has_truth)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: no truth arrival log: --validate needs a recording made by qreplay's "
                       "runtime (an imported capture has no closed loop to rerun)",
                       truth_log);
    qr_whatif_work w;
    int rc = qr_whatif_begin(job, &w, errbuf);
    if (rc)
        return rc;
    size_t np = qr_whatif_grid_points(job->grid);
    size_t n_runs = np * (closed_loop ? 2 : 1) + (size_t)has_truth, k = 0;
    struct run *runs = calloc(n_runs, sizeof *runs);
    if (!runs)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    /* the longest first: the runtimes, then the replays */
    for (size_t p = 0; !rc && closed_loop && p < np; p++)
        runs[k++] = (struct run){RUN_TRUTH, p};
    for (size_t p = 0; !rc && p < np; p++)
        runs[k++] = (struct run){RUN_PRED, p};
    if (!rc && has_truth)
        runs[k++] = (struct run){RUN_RECORDED, qr_whatif_grid_baseline(job->grid)};
    if (!rc)
        rc = run_all(&w, v, runs, n_runs, errbuf);
    free(runs);
    if (!rc)
        rc = qr_whatif_collect(&w, out, errbuf);
    if (!rc)
        rc = collect(&w, closed_loop, has_truth, out, errbuf);
    return qr_whatif_finish(&w, rc, out, errbuf);
}
