/* The isolated replay's plan and its result file (isolate_run.h). */
#include "qreplay/isolate_run.h"

#include <stdio.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/units.h"

static int step(const qr_isolate_job *job, const char *status, char *errbuf)
{
    if (job->progress && job->progress(job->progress_ctx, status))
        return qri_err(errbuf, QR_ECANCELED, "interrupted");
    return QR_OK;
}

/* The replays of every sigma: /connections. */
static int replays(const qr_isolate_job *job, qr_h5 *f, qr_isolated_summary *sums, char *errbuf)
{
    qr_h5_table *t = NULL;
    char status[160], st[48];
    int rc;
    QRI_TRY(qr_h5_table_open_schema(&t, f, "/connections", &qr_schema_isolated, errbuf));
    for (size_t k = 0; k < job->n_sigmas; k++) {
        qr_isolated_summary sum = {0};
        qr_format_duration(job->sigmas_ns[k], st, sizeof st);
        for (size_t i = 0; i < job->n_flows; i++) {
            qr_row_isolated r;
            QRI_TRY(job->replay(job->engine_ctx, job->flows[i], job->sigmas_ns[k], &r, errbuf));
            QRI_TRY(qr_h5_table_append(t, &r, 1, errbuf));
            qr_isolated_summary_add(&sum, &r);
            snprintf(status, sizeof status, "isolate: sigma %s, connection %zu/%zu", st, i + 1,
                     job->n_flows);
            QRI_TRY(step(job, status, errbuf));
        }
        sums[k] = sum;
    }
    rc = qr_h5_table_close(t, errbuf);
    t = NULL;
fail:
    if (t)
        qr_h5_table_close(t, NULL);
    return rc;
}

/* The TCP execution traces: /tcp_trace. */
static int traces(const qr_isolate_job *job, qr_h5 *f, int *all_match, char *errbuf)
{
    int64_t delack = qr_scenario_config(qr_recording_scenario(job->rec))->tcp.delack_timeout_ns;
    char status[160];
    int rc = QR_OK;
    for (size_t i = 0; i < job->n_traced; i++) {
        qr_tcp_trace *tr = NULL;
        rc = job->trace(job->engine_ctx, job->traced[i], delack / 2, &tr, errbuf);
        if (rc == QR_OK)
            rc = qr_tcp_trace_write(tr, f, errbuf);
        if (rc == QR_OK) {
            *all_match = *all_match && qr_tcp_trace_summary(tr)->matches_recording;
            if (job->on_trace)
                job->on_trace(job->progress_ctx, tr);
        }
        qr_tcp_trace_destroy(tr);
        if (rc)
            return rc;
        snprintf(status, sizeof status, "isolate: tracing connection %zu/%zu", i + 1,
                 job->n_traced);
        if ((rc = step(job, status, errbuf)) != QR_OK)
            return rc;
    }
    if (job->n_traced)
        rc = qr_h5_attr_u64(f, "/tcp_trace", "matches_recording", *all_match ? 1 : 0, errbuf);
    return rc;
}

int qr_isolate_run(const qr_isolate_job *job, qr_isolated_summary *sums, int *all_match,
                   char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    *all_match = 1;
    QRI_TRY(qr_h5_create_result(&f, job->out, qr_recording_scenario(job->rec),
                                "qreplay isolated replay", qr_recording_id(job->rec), errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "recording", job->rec_dir, errbuf));
    QRI_TRY(replays(job, f, sums, errbuf));
    QRI_TRY(traces(job, f, all_match, errbuf));
    rc = qr_h5_commit(f, errbuf);
    f = NULL;
fail:
    qr_h5_abort(f);
    return rc;
}
