/* The Pingmesh agents' log of a run (probelog.h). */
#include <stddef.h>
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

/* The bytes of a /directions row the hosts know: what they sent. */
typedef struct {
    uint64_t sent_bytes;
} sent_row;
static const qr_h5_field sent_fields[] = {
    {"sent_bytes", QR_H5_U64, offsetof(sent_row, sent_bytes), 0, NULL}};
static const qr_h5_schema sent_schema = {"direction", sent_fields, 1, sizeof(sent_row)};

int qr_probe_log_read(const char *path, qr_probe_log *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    if (qri_strlcpy(out->path, path, sizeof out->path))
        return qri_err(errbuf, QR_EINVAL, "%s: path too long", path);
    int rc = qr_scenario_from_h5(&out->scenario, path, NULL, NULL, errbuf);
    qr_h5_reader *r = NULL;
    sent_row *dirs = NULL;
    size_t nd = 0;
    double end = 0;
    if (!rc)
        rc = qr_h5_open(&r, path, errbuf);
    if (!rc && qr_h5_read_attr_f64(r, "/", "sim_end_ns", &end, errbuf))
        rc = qri_err(errbuf, QR_EFORMAT, "%s: no sim_end_ns attribute: not a runtime's truth.h5",
                     path);
    out->sim_end_ns = (int64_t)end;
    if (!rc) {
        rc = qr_h5_read_rows(r, "/probes", &qr_schema_probe_obs, (void **)&out->probes,
                             &out->n_probes, errbuf);
        if (rc == QR_ENOTFOUND)
            rc = qri_err(errbuf, QR_ENOTFOUND,
                         "%s has no /probes: the run did not probe (set [pingmesh] interval, or "
                         "give qreplay pingmesh the scenario)",
                         path);
    }
    if (!rc)
        rc = qr_h5_read_rows(r, "/directions", &sent_schema, (void **)&dirs, &nd, errbuf);
    for (size_t i = 0; !rc && i < nd; i++)
        out->traffic_bytes += dirs[i].sent_bytes;
    qr_h5_rows_free(dirs);
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
