/* The what-if job (whatif.h): every run of the grid as a task of the caller's runner, then
 * whatif.h5. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/random.h"
#include "qreplay/results.h"
#include "qreplay/tasks.h"
#include "qreplay/whatif.h"

void qr_whatif_result_path(const qr_whatif_work *w, const char *run, size_t p, char *buf,
                           size_t size)
{
    if (!strcmp(run, "recorded"))
        snprintf(buf, size, "%s/recorded.h5", w->tmp);
    else
        snprintf(buf, size, "%s/points/p%03zu/%s.h5", w->tmp, p, run);
}

int qr_whatif_point_dir(const qr_whatif_work *w, size_t p, char *buf, size_t size, char *errbuf)
{
    snprintf(buf, size, "%s/points/p%03zu", w->tmp, p);
    return qr_make_dirs(buf, errbuf);
}

int qr_whatif_result_save(const char *path, const qr_whatif_result *res, char *err)
{
    qr_h5 *f;
    int rc = qr_h5_create(&f, path, err);
    if (rc)
        return rc;
    rc = qr_whatif_results_write(f, res, 1, err);
    if (rc) {
        qr_h5_abort(f);
        return rc;
    }
    return qr_h5_commit(f, err);
}

int qr_whatif_result_load(const char *path, qr_whatif_result *out, char *err)
{
    qr_whatif_result *rs;
    size_t n;
    int rc = qr_whatif_read(path, &rs, &n, err);
    if (rc)
        return rc;
    if (n != 1) {
        qr_whatif_results_free(rs, n);
        return qri_err(err, QR_EFORMAT, "%s: expected one run, found %zu", path, n);
    }
    *out = rs[0];
    free(rs);
    return QR_OK;
}

int qr_whatif_predict(const qr_whatif_work *w, size_t p, char *err)
{
    const qr_whatif_job *job = w->job;
    char pd[4096], path[4300], arr[4300];
    qr_scenario *s = NULL;
    qr_whatif_result res;
    memset(&res, 0, sizeof res);
    qr_whatif_result_path(w, "prediction", p, path, sizeof path);
    int rc = qr_whatif_point_dir(w, p, pd, sizeof pd, err);
    if (!rc)
        rc = qr_whatif_grid_scenario(job->grid, p, &s, err);
    if (rc)
        return rc;
    qr_variant_settings v;
    memset(&v, 0, sizeof v);
    v.mode = job->mode;
    v.th_ns = job->th_ns;
    v.name = "prediction";
    v.engine_name = job->engine_name;
    v.cancel = job->cancel;
    /* the replay's injection times: the plan the variant made, handed back */
    qr_plan *plan = NULL;
    v.plan_out = &plan;
    qr_replay_input in = {w->rec, NULL, NULL, NULL};
    rc = qr_replay_variant(pd, s, &in, &v, job->engine, job->engine_ctx, err);
    snprintf(arr, sizeof arr, "%s/replay/prediction/arrivals.qra", pd);
    if (!rc)
        rc = qr_whatif_measure(arr, s, w->rec, plan, (uint32_t)p, QR_WHATIF_PREDICTION, &res, err);
    qr_plan_free(plan);
    if (!rc && job->prune)
        unlink(arr);
    if (!rc)
        rc = qr_whatif_result_save(path, &res, err);
    qr_whatif_result_free(&res);
    qr_scenario_destroy(s);
    return rc;
}

void qr_whatif_describe(const qr_whatif_job *job, size_t p, const char *run, char *buf, size_t size)
{
    if (!strcmp(run, "recorded")) {
        snprintf(buf, size, "the recorded runtime");
        return;
    }
    size_t n = (size_t)snprintf(buf, size, "point %zu (", p);
    for (size_t k = 0; k < qr_whatif_grid_keys(job->grid) && n < size; k++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", k ? " " : "",
                              qr_whatif_grid_key(job->grid, k),
                              qr_whatif_grid_value(job->grid, p, k));
    if (n < size)
        snprintf(buf + n, size - n, ") %s", run);
}

struct grid_row {
    uint32_t point;
    uint8_t baseline;
    char v[QR_WHATIF_MAX_KEYS][QR_WHATIF_VALUE_SIZE];
};

#define EF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_error_row, member), 0, unit                                 \
    }
static const qr_h5_field error_fields[] = {
    EF("point", QR_H5_U32, point, NULL),
    EF("drops_pred", QR_H5_I64, drops_pred, "packets"),
    EF("drops_true", QR_H5_I64, drops_true, "packets"),
    EF("drops_rel", QR_H5_F64, drops_rel, "1"),
    EF("edge_drops_rel", QR_H5_F64, layer_drops_rel[0], "1"),
    EF("agg_drops_rel", QR_H5_F64, layer_drops_rel[1], "1"),
    EF("core_drops_rel", QR_H5_F64, layer_drops_rel[2], "1"),
    EF("edge_q_p99_rel", QR_H5_F64, q_p99_rel[0], "1"),
    EF("agg_q_p99_rel", QR_H5_F64, q_p99_rel[1], "1"),
    EF("core_q_p99_rel", QR_H5_F64, q_p99_rel[2], "1"),
    EF("all_q_p99_rel", QR_H5_F64, q_p99_rel[3], "1"),
    EF("delay_p50_rel", QR_H5_F64, delay_p50_rel, "1"),
    EF("delay_p99_rel", QR_H5_F64, delay_p99_rel, "1"),
    EF("delay_w1", QR_H5_I64, delay_w1_ns, "ns"),
    EF("delay_ks", QR_H5_F64, delay_ks, "1"),
};

/* /grid: a row per point (its values of the keys, and which is the baseline). */
static int write_grid(qr_h5 *f, const qr_whatif_grid *g, char *err)
{
    size_t nk = qr_whatif_grid_keys(g), np = qr_whatif_grid_points(g);
    qr_h5_field fields[2 + QR_WHATIF_MAX_KEYS];
    fields[0] = (qr_h5_field){"point", QR_H5_U32, offsetof(struct grid_row, point), 0, NULL};
    fields[1] = (qr_h5_field){"baseline", QR_H5_U8, offsetof(struct grid_row, baseline), 0, NULL};
    for (size_t k = 0; k < nk; k++)
        fields[2 + k] = (qr_h5_field){qr_whatif_grid_key(g, k), QR_H5_STR,
                                      offsetof(struct grid_row, v) + k * QR_WHATIF_VALUE_SIZE,
                                      QR_WHATIF_VALUE_SIZE, NULL};
    struct grid_row *gr = calloc(np, sizeof *gr);
    if (!gr)
        return QR_ENOMEM;
    for (size_t p = 0; p < np; p++) {
        gr[p].point = (uint32_t)p;
        gr[p].baseline = p == qr_whatif_grid_baseline(g);
        for (size_t k = 0; k < nk; k++)
            qri_strlcpy(gr[p].v[k], qr_whatif_grid_value(g, p, k), QR_WHATIF_VALUE_SIZE);
    }
    qr_h5_table *t = NULL;
    int rc = qr_h5_table_create(&t, f, "/grid", fields, 2 + nk, sizeof *gr, 0, err);
    if (!rc)
        rc = qr_h5_table_append(t, gr, np, err);
    if (t) {
        int rc2 = qr_h5_table_close(t, err);
        rc = rc ? rc : rc2;
    }
    free(gr);
    char keys[512] = "";
    for (size_t k = 0; k < nk; k++)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", k ? "," : "",
                 qr_whatif_grid_key(g, k));
    if (!rc)
        rc = qr_h5_attr_str(f, "/grid", "keys", keys, err);
    return rc;
}

/* Every run's tables: predictions, then truths, then the recorded runtime. */
static int write_runs(qr_h5 *f, const qr_whatif_outcome *o, char *err)
{
    size_t n_all = o->n * (1 + (o->truth != NULL)) + (o->has_recorded != 0);
    qr_whatif_result *all = calloc(n_all ? n_all : 1, sizeof *all);
    if (!all)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < o->n; i++)
        all[k++] = o->pred[i];
    for (size_t i = 0; o->truth && i < o->n; i++)
        all[k++] = o->truth[i];
    if (o->has_recorded)
        all[k++] = o->recorded;
    int rc = qr_whatif_results_write(f, all, k, err);
    free(all);
    return rc;
}

/* /errors: the predictions' errors against the closed loop, and how well they rank the points. */
static int write_errors(qr_h5 *f, const qr_whatif_outcome *o, char *err)
{
    qr_h5_table *t = NULL;
    int rc =
        qr_h5_table_create(&t, f, "/errors", error_fields,
                           sizeof error_fields / sizeof error_fields[0], sizeof *o->errors, 0, err);
    if (!rc) {
        rc = qr_h5_table_append(t, o->errors, o->n, err);
        int rc2 = qr_h5_table_close(t, err);
        rc = rc ? rc : rc2;
    }
    const qr_whatif_agreement *a = &o->agree;
    if (!rc)
        rc = qr_h5_attr_f64(f, "/errors", "tau_drops", a->tau_drops, err);
    if (!rc)
        rc = qr_h5_attr_f64(f, "/errors", "tau_delay_p99", a->tau_delay_p99, err);
    if (!rc)
        rc = qr_h5_attr_u64(f, "/errors", "best_drops_pred", a->best_drops_pred, err);
    if (!rc)
        rc = qr_h5_attr_u64(f, "/errors", "best_drops_true", a->best_drops_true, err);
    if (!rc)
        rc = qr_h5_attr_u64(f, "/errors", "best_delay_pred", a->best_delay_pred, err);
    if (!rc)
        rc = qr_h5_attr_u64(f, "/errors", "best_delay_true", a->best_delay_true, err);
    return rc;
}

/* /scenarios/pNNN: every point's whole scenario. */
static int write_scenarios(qr_h5 *f, const qr_whatif_grid *g, char *err)
{
    int rc = QR_OK;
    for (size_t p = 0; !rc && p < qr_whatif_grid_points(g); p++) {
        char obj[64];
        snprintf(obj, sizeof obj, "/scenarios/p%03zu", p);
        qr_scenario *s;
        rc = qr_h5_group(f, obj, err);
        if (!rc)
            rc = qr_whatif_grid_scenario(g, p, &s, err);
        if (!rc) {
            rc = qr_scenario_write_h5(s, f, obj, err);
            qr_scenario_destroy(s);
        }
    }
    return rc;
}

static int write_h5(const qr_whatif_job *job, const char *tmp, const qr_whatif_outcome *o,
                    const char *recording_id, char *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/whatif.h5", tmp);
    qr_h5 *f;
    int rc = qr_h5_create(&f, path, err);
    if (rc)
        return rc;
    /* the recording it was replayed from, as every derived file has it */
    rc = qr_h5_attr_str(f, "/", "recording_id", recording_id, err);
    const qr_whatif_grid *g = job->grid;
    if (!rc)
        rc = write_grid(f, g, err);
    char vname[128];
    qr_variant_name(job->mode, job->th_ns, vname, sizeof vname);
    if (!rc)
        rc = qr_h5_attr_u64(f, "/", "baseline", qr_whatif_grid_baseline(g), err);
    if (!rc)
        rc = qr_h5_attr_str(f, "/", "replay", vname, err);
    if (!rc)
        rc = qr_h5_attr_str(f, "/", "engine", job->engine_name ? job->engine_name : "native", err);
    if (!rc)
        rc = qr_h5_attr_u64(f, "/", "validated", (uint64_t)(o->truth != NULL), err);
    if (!rc)
        rc = qr_h5_attr_str(f, "/", "caveat", QR_WHATIF_CAVEAT, err);
    if (!rc)
        rc = write_runs(f, o, err);
    if (!rc && o->errors)
        rc = write_errors(f, o, err);
    if (!rc)
        rc = write_scenarios(f, g, err);
    if (rc) {
        qr_h5_abort(f);
        return rc;
    }
    return qr_h5_commit(f, err);
}

void qr_whatif_outcome_free(qr_whatif_outcome *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        if (o->pred)
            qr_whatif_result_free(&o->pred[i]);
        if (o->truth)
            qr_whatif_result_free(&o->truth[i]);
    }
    qr_whatif_result_free(&o->recorded);
    free(o->pred);
    free(o->truth);
    free(o->errors);
    memset(o, 0, sizeof *o);
}

/* Give the work up: nothing left. */
static void abandon(qr_whatif_work *w)
{
    qr_recording_close(w->rec);
    w->rec = NULL;
    qri_remove_tree(w->tmp);
    qr_partial_done(w->tmp);
}

int qr_whatif_begin(const qr_whatif_job *job, qr_whatif_work *w, char *errbuf)
{
    memset(w, 0, sizeof *w);
    w->job = job;
    snprintf(w->rec_dir, sizeof w->rec_dir, "%s/recording", job->run_dir);
    snprintf(w->tmp, sizeof w->tmp, "%s/whatif.partial-%ld", job->run_dir, (long)getpid());
    int rc = qr_recording_open(&w->rec, w->rec_dir, NULL, errbuf);
    if (rc)
        return rc;
    snprintf(w->rec_id, sizeof w->rec_id, "%s", qr_recording_id(w->rec));
    qri_remove_tree(w->tmp);
    rc = qr_make_dirs(w->tmp, errbuf);
    qr_partial_add(w->tmp);
    if (rc)
        abandon(w);
    return rc;
}

int qr_whatif_collect(const qr_whatif_work *w, qr_whatif_outcome *out, char *errbuf)
{
    size_t np = qr_whatif_grid_points(w->job->grid);
    out->n = np;
    out->pred = calloc(np ? np : 1, sizeof *out->pred);
    if (!out->pred)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t p = 0; p < np; p++) {
        char path[4300];
        qr_whatif_result_path(w, "prediction", p, path, sizeof path);
        int rc = qr_whatif_result_load(path, &out->pred[p], errbuf);
        if (rc)
            return rc;
    }
    return QR_OK;
}

int qr_whatif_finish(qr_whatif_work *w, int rc, qr_whatif_outcome *o, char *errbuf)
{
    char final_dir[4096];
    snprintf(final_dir, sizeof final_dir, "%s/whatif", w->job->run_dir);
    qr_recording_close(w->rec);
    w->rec = NULL;
    if (!rc)
        rc = write_h5(w->job, w->tmp, o, w->rec_id, errbuf);
    if (!rc) {
        char p[4300];
        snprintf(p, sizeof p, "%s/recorded.h5", w->tmp);
        unlink(p);
        qri_remove_tree(final_dir);
        if (rename(w->tmp, final_dir))
            rc = qri_err(errbuf, QR_EIO, "%s: cannot rename to %s: %s", w->tmp, final_dir,
                         strerror(errno));
        else
            qr_partial_done(w->tmp);
    }
    if (rc) {
        abandon(w);
        qr_whatif_outcome_free(o);
    }
    return rc;
}

/* The job's predictions, one task per point. */
struct predict_ctx {
    const qr_whatif_work *w;
};

static int predict_task(void *ctx, size_t i, char *err)
{
    return qr_whatif_predict(((const struct predict_ctx *)ctx)->w, i, err);
}

int qr_whatif_run(const qr_whatif_job *job, qr_whatif_outcome *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    qr_whatif_work w;
    int rc = qr_whatif_begin(job, &w, errbuf);
    if (rc)
        return rc;
    enum { NAME_SIZE = 512 };
    size_t np = qr_whatif_grid_points(job->grid);
    char *text = calloc(np ? np : 1, NAME_SIZE);
    const char **names = calloc(np ? np : 1, sizeof *names);
    if (!text || !names)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t p = 0; !rc && p < np; p++) {
        qr_whatif_describe(job, p, "prediction", text + p * NAME_SIZE, NAME_SIZE);
        names[p] = text + p * NAME_SIZE;
    }
    struct predict_ctx c = {&w};
    if (!rc)
        rc = qr_tasks_run(&job->runner, np, predict_task, &c, names, job->cancel, errbuf);
    if (!rc && job->cancel && *job->cancel)
        rc = QR_ECANCELED;
    free(names);
    free(text);
    if (!rc)
        rc = qr_whatif_collect(&w, out, errbuf);
    return qr_whatif_finish(&w, rc, out, errbuf);
}
