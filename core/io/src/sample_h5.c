/* The file of qreplay sample (sample_h5.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/sample_h5.h"
#include "qreplay/schema.h"
#include "qreplay/version.h"

struct qr_sample_file {
    qr_h5 *h5;
    qr_h5_table *t_rec, *t_inf, *t_flow;
    qr_sampler *s;
    qr_sampler_cfg cfg;
    char *input;
    qr_sample_record *recs;
    int64_t *inferred;
    size_t cap;
    qr_sample_file_stats st;
};

void qr_sample_file_abort(qr_sample_file *f)
{
    if (!f)
        return;
    qr_h5_abort(f->h5); /* also releases the tables */
    qr_sampler_destroy(f->s);
    free(f->input);
    free(f->recs);
    free(f->inferred);
    free(f);
}

int qr_sample_file_create(qr_sample_file **out, const char *path, const char *input,
                          const qr_sampler_cfg *cfg, char *errbuf)
{
    *out = NULL;
    qr_sample_file *f = calloc(1, sizeof *f);
    if (!f || !(f->input = strdup(input ? input : ""))) {
        free(f);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    f->cfg = *cfg;
    int rc = qr_sampler_create(&f->s, cfg) ? qri_err(errbuf, QR_EINVAL, "sampling: bad threshold")
                                           : QR_OK;
    if (!rc)
        rc = qr_h5_create(&f->h5, path, errbuf);
    if (!rc)
        rc = qr_h5_table_open_schema(&f->t_rec, f->h5, "/sampling/records", &qr_schema_named_record,
                                     errbuf);
    if (!rc)
        rc = qr_h5_table_open_schema(&f->t_inf, f->h5, "/sampling/inferred",
                                     &qr_schema_named_inferred, errbuf);
    if (!rc)
        rc = qr_h5_table_open_schema(&f->t_flow, f->h5, "/sampling/flows", &qr_schema_named_flow,
                                     errbuf);
    if (rc) {
        qr_sample_file_abort(f);
        return rc;
    }
    *out = f;
    return QR_OK;
}

int qr_sample_file_flow(qr_sample_file *f, const char *name, const int64_t *times, size_t n,
                        int64_t *max_error_ns, char *errbuf)
{
    size_t len = strlen(name);
    if (len >= QR_FLOW_NAME_MAX)
        return qri_err(errbuf, QR_EVALUE, "flow name '%s' is longer than %d bytes", name,
                       QR_FLOW_NAME_MAX - 1);
    if (n > f->cap) {
        free(f->recs);
        free(f->inferred);
        f->cap = n;
        f->recs = malloc(n * sizeof *f->recs);
        f->inferred = malloc(n * sizeof *f->inferred);
        if (!f->recs || !f->inferred) {
            f->cap = 0;
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
        }
    }
    size_t nr = 0;
    int64_t err_ns = 0;
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_sample_series(f->s, times, n, f->recs, &nr, f->inferred, &err_ns, detail);
    if (rc)
        return qri_err(errbuf, rc, "flow %s: %s", name, detail);
    if ((rc = qr_sampling_bound_check(f->cfg.method, f->cfg.th_ns, err_ns, detail)) != QR_OK)
        return qri_err(errbuf, rc, "flow %s: %s", name, detail);
    for (size_t i = 0; i < n && !rc; i++) {
        qr_row_named_inferred row = {
            .index = i, .true_ns = times[i], .inferred_ns = f->inferred[i]};
        memcpy(row.flow, name, len);
        rc = qr_h5_table_append(f->t_inf, &row, 1, errbuf);
    }
    for (size_t i = 0; i < nr && !rc; i++) {
        qr_row_named_record row = {.index = f->recs[i].index,
                                   .time_ns = f->recs[i].time_ns,
                                   .gap_num = f->recs[i].gap_num,
                                   .gap_den = f->recs[i].gap_den};
        memcpy(row.flow, name, len);
        rc = qr_h5_table_append(f->t_rec, &row, 1, errbuf);
    }
    qr_row_named_flow fr = {.packets = n, .records = nr, .max_error_ns = err_ns};
    memcpy(fr.flow, name, len);
    if (!rc)
        rc = qr_h5_table_append(f->t_flow, &fr, 1, errbuf);
    if (rc)
        return rc;
    f->st.flows++;
    f->st.packets += n;
    f->st.records += nr;
    if (err_ns > f->st.max_error_ns)
        f->st.max_error_ns = err_ns;
    if (max_error_ns)
        *max_error_ns = err_ns;
    return QR_OK;
}

int qr_sample_file_commit(qr_sample_file *f, qr_sample_file_stats *st, char *errbuf)
{
    double ppr = f->st.records ? (double)f->st.packets / (double)f->st.records : 0.0;
    int rc = qr_h5_table_close(f->t_rec, errbuf);
    f->t_rec = NULL;
    int rc2 = qr_h5_table_close(f->t_inf, rc ? NULL : errbuf);
    f->t_inf = NULL;
    rc = rc ? rc : rc2;
    rc2 = qr_h5_table_close(f->t_flow, rc ? NULL : errbuf);
    f->t_flow = NULL;
    rc = rc ? rc : rc2;
    qr_h5 *h = f->h5;
    if (!rc)
        rc = qr_h5_attr_str(h, "/", "code_version", qr_version(), errbuf);
    if (!rc)
        rc = qr_h5_attr_str(h, "/", "command", "sample", errbuf);
    if (!rc)
        rc = qr_h5_attr_str(h, "/sampling", "input", f->input, errbuf);
    if (!rc)
        rc = qr_h5_attr_str(h, "/sampling", "method",
                            f->cfg.method == QR_SAMPLING_RATE ? "rate" : "gap", errbuf);
    if (!rc)
        rc = qr_h5_attr_i64(h, "/sampling", "th_ns", f->cfg.th_ns, errbuf);
    if (!rc)
        rc = qr_h5_attr_u64(h, "/sampling", "packets", f->st.packets, errbuf);
    if (!rc)
        rc = qr_h5_attr_u64(h, "/sampling", "flows", f->st.flows, errbuf);
    if (!rc)
        rc = qr_h5_attr_u64(h, "/sampling", "records", f->st.records, errbuf);
    if (!rc)
        rc = qr_h5_attr_f64(h, "/sampling", "packets_per_record", ppr, errbuf);
    if (!rc)
        rc = qr_h5_attr_i64(h, "/sampling", "max_error_ns", f->st.max_error_ns, errbuf);
    if (!rc) {
        f->h5 = NULL;
        rc = qr_h5_commit(h, errbuf);
    }
    if (!rc && st)
        *st = f->st;
    qr_sample_file_abort(f);
    return rc;
}
