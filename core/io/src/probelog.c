/* The Pingmesh agents' log of a run (probelog.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/probelog.h"
#include "qreplay/scenario_h5.h"

#define F(m) offsetof(qr_row_probe_obs, m)
static const qr_h5_field probe_obs_fields[] = {
    {"probe", QR_H5_U32, F(probe), 0, NULL},   {"pair", QR_H5_U32, F(pair), 0, NULL},
    {"src", QR_H5_U32, F(src), 0, NULL},       {"dst", QR_H5_U32, F(dst), 0, NULL},
    {"sport", QR_H5_U16, F(sport), 0, NULL},   {"sent_ns", QR_H5_I64, F(sent_ns), 0, NULL},
    {"rtt_ns", QR_H5_I64, F(rtt_ns), 0, NULL}, {"echoed", QR_H5_U8, F(echoed), 0, NULL}};
const qr_h5_schema qr_schema_probe_obs = {"probe", probe_obs_fields,
                                          sizeof probe_obs_fields / sizeof probe_obs_fields[0],
                                          sizeof(qr_row_probe_obs)};

int qr_probe_log_write(const char *path, const qr_scenario *s, const char *recording_id,
                       int64_t end_ns, const qr_row_direction *dirs, size_t n_dirs,
                       const qr_row_probe *probes, size_t n, char *errbuf)
{
    uint64_t traffic = 0;
    for (size_t i = 0; i < n_dirs; i++)
        traffic += dirs[i].sent_bytes;
    qr_row_probe_obs *obs = calloc(n ? n : 1, sizeof *obs);
    if (!obs)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const qr_row_probe *p = &probes[i];
        obs[i] = (qr_row_probe_obs){p->probe, p->pair,    p->src,    p->dst,
                                    p->sport, p->sent_ns, p->rtt_ns, p->echoed};
    }
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay probe log", recording_id, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "sim_end_ns", end_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "traffic_bytes", traffic, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/probes", &qr_schema_probe_obs, obs, n, errbuf));
    free(obs);
    return qr_h5_commit(f, errbuf);
fail:
    free(obs);
    qr_h5_abort(f);
    return rc;
}

int qr_probe_log_read(const char *path, qr_probe_log *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    if (qri_strlcpy(out->path, path, sizeof out->path))
        return qri_err(errbuf, QR_EINVAL, "%s: path too long", path);
    int rc = qr_scenario_from_h5(&out->scenario, path, NULL, NULL, errbuf);
    qr_h5_reader *r = NULL;
    char *kind = NULL;
    double end = 0, traffic = 0;
    if (!rc)
        rc = qr_h5_open(&r, path, errbuf);
    if (!rc &&
        (qr_h5_read_attr_str(r, "/", "kind", &kind, NULL) || strcmp(kind, "qreplay probe log") ||
         qr_h5_read_attr_f64(r, "/", "sim_end_ns", &end, NULL) ||
         qr_h5_read_attr_f64(r, "/", "traffic_bytes", &traffic, NULL)))
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not a probe log (kind, sim_end_ns, traffic_bytes)",
                     path);
    qr_h5_str_free(kind);
    out->sim_end_ns = (int64_t)end;
    out->traffic_bytes = (uint64_t)traffic;
    if (!rc)
        rc = qr_h5_read_rows(r, "/probes", &qr_schema_probe_obs, (void **)&out->probes,
                             &out->n_probes, errbuf);
    qr_h5_close(r);
    if (rc)
        qr_probe_log_free(out);
    return rc;
}

void qr_probe_log_free(qr_probe_log *log)
{
    if (!log)
        return;
    qr_scenario_destroy(log->scenario);
    qr_h5_rows_free(log->probes);
    memset(log, 0, sizeof *log);
}
