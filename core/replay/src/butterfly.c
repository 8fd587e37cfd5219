/* The butterfly experiment's plan and its result file (butterfly.h). */
#include "qreplay/butterfly.h"

#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/units.h"

static int header(qr_h5 *f, const qr_butterfly_runtime *rt, char *errbuf)
{
    int rc;
    QRI_TRY(qr_h5_attr_i64(f, "/", "runtime_short_fct_ns", rt->short_fct_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "runtime_drops", rt->drops, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "runtime_end_ns", rt->end_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "short_flow", rt->short_flow, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "bottleneck_switch", rt->bottleneck_switch, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "bottleneck_port", rt->bottleneck_port, errbuf));
fail:
    return rc;
}

/* The typical replay of one sigma again, for its series: /typical/sigma_S. */
static int typical(qr_h5 *f, const qr_butterfly_job *job, int64_t sigma,
                   const qr_row_butterfly_sigma *row, char *errbuf)
{
    qr_row_butterfly_series *series = NULL;
    size_t n = 0;
    qr_row_butterfly_replay again;
    char g[64];
    int rc;
    QRI_TRY(job->replay(job->engine_ctx, sigma, row->typical_replay, &again, &series, &n, errbuf));
    snprintf(g, sizeof g, "/typical/sigma_%lld", (long long)sigma);
    QRI_TRY(qr_h5_write_rows(f, g, &qr_schema_butterfly_series, series, n, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, g, "sigma_ns", sigma, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, g, "replay", row->typical_replay, errbuf));
fail:
    free(series);
    return rc;
}

int qr_butterfly_run(const qr_butterfly_job *job, qr_butterfly_runtime *runtime,
                     qr_row_butterfly_sigma **rows, char *errbuf)
{
    char path[QR_PATH_MAX + 32], status[160], st[32];
    qr_h5 *f = NULL;
    qr_h5_table *tr = NULL;
    qr_row_butterfly_replay *results = NULL;
    qr_row_butterfly_sigma *out = NULL;
    int rc;
    *rows = NULL;
    if (job->n_sigmas == 0 || job->replays == 0)
        return qri_err(errbuf, QR_EVALUE, "butterfly: no sigma or no replay to run");
    if (snprintf(path, sizeof path, "%s/runtime", job->dir) >= (int)sizeof path)
        return qri_err(errbuf, QR_EVALUE, "%s: path too long", job->dir);
    if ((rc = job->runtime(job->engine_ctx, path, runtime, errbuf)) != QR_OK)
        return rc;
    if (job->on_runtime)
        job->on_runtime(job->progress_ctx, runtime);
    results = malloc(job->replays * sizeof *results);
    out = calloc(job->n_sigmas, sizeof *out);
    if (!results || !out) {
        rc = qri_err(errbuf, QR_ENOMEM, "butterfly: out of memory");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/butterfly.h5", job->dir);
    QRI_TRY(qr_h5_create_result(&f, path, job->scenario, "qreplay butterfly", NULL, errbuf));
    QRI_TRY(header(f, runtime, errbuf));
    QRI_TRY(qr_h5_table_open_schema(&tr, f, "/replays", &qr_schema_butterfly_replay, errbuf));
    for (size_t k = 0; k < job->n_sigmas; k++) {
        int64_t sigma = job->sigmas_ns[k];
        qr_format_time(sigma, st, sizeof st);
        for (uint32_t r = 1; r <= job->replays; r++) {
            QRI_TRY(job->replay(job->engine_ctx, sigma, r, &results[r - 1], NULL, NULL, errbuf));
            QRI_TRY(qr_h5_table_append(tr, &results[r - 1], 1, errbuf));
            snprintf(status, sizeof status, "butterfly: sigma %s, replay %u/%u", st, r,
                     job->replays);
            if (job->progress && job->progress(job->progress_ctx, status)) {
                rc = qri_err(errbuf, QR_ECANCELED, "interrupted");
                goto fail;
            }
        }
        qr_butterfly_sigma_summary(results, job->replays, &out[k]);
        QRI_TRY(typical(f, job, sigma, &out[k], errbuf));
    }
    rc = qr_h5_table_close(tr, errbuf);
    tr = NULL;
    if (rc)
        goto fail;
    QRI_TRY(qr_h5_write_rows(f, "/sigma", &qr_schema_butterfly_sigma, out, job->n_sigmas, errbuf));
    rc = qr_h5_commit(f, errbuf);
    f = NULL;
    if (rc)
        goto fail;
    *rows = out;
    out = NULL;
fail:
    if (tr)
        qr_h5_table_close(tr, NULL);
    qr_h5_abort(f);
    free(results);
    free(out);
    return rc;
}
