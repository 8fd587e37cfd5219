/* The runtime's ground truth file, truth/truth.h5 (truth.h). */
#include "qreplay/truth.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/scenario_h5.h"

int qr_truth_write(const char *path, const qr_scenario *s, const qr_truth_info *info,
                   const qr_row_drop *drops, size_t n_drops, const qr_row_direction *dirs,
                   size_t n_dirs, char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay runtime ground truth", info->recording_id,
                                errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "end", qr_end_reason_name(info->end), errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "sim_end_ns", (uint64_t)info->sim_end_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "events", info->events, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "wall_s", info->wall_s, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "in_flight_at_end", info->in_flight_at_end, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "other_drops", info->other_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "host_queue_drops", info->host_queue_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "unknown_packets", info->unknown_packets, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "trace_fault_drops", info->trace_fault_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "trace_buffer_drops", info->trace_buffer_drops, errbuf));
    if (info->has_tap_delay) {
        QRI_TRY(qr_h5_attr_i64(f, "/", "tap_delay_p50_ns", info->tap_delay_p50_ns, errbuf));
        QRI_TRY(qr_h5_attr_i64(f, "/", "tap_delay_p99_ns", info->tap_delay_p99_ns, errbuf));
    }
    QRI_TRY(qr_h5_write_rows(f, "/drops", &qr_schema_drop, drops, n_drops, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/directions", &qr_schema_direction, dirs, n_dirs, errbuf));
    if (info->n_faults)
        QRI_TRY(
            qr_h5_write_rows(f, "/faults", &qr_schema_fault, info->faults, info->n_faults, errbuf));
    if (info->n_link_faults)
        QRI_TRY(qr_h5_write_rows(f, "/link_faults", &qr_schema_link_fault, info->link_faults,
                                 info->n_link_faults, errbuf));
    if (info->probed)
        QRI_TRY(
            qr_h5_write_rows(f, "/probes", &qr_schema_probe, info->probes, info->n_probes, errbuf));
    if (info->n_true_paths)
        QRI_TRY(qr_h5_write_rows(f, "/true_paths", &qr_schema_path, info->true_paths,
                                 info->n_true_paths, errbuf));
    if (info->n_clocks)
        QRI_TRY(
            qr_h5_write_rows(f, "/clocks", &qr_schema_clock, info->clocks, info->n_clocks, errbuf));
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}

int qr_truth_read(const char *path, qr_truth *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    qr_h5_reader *r = NULL;
    int rc = qr_h5_open(&r, path, errbuf);
    double end = 0;
    if (!rc && qr_h5_read_attr_f64(r, "/", "sim_end_ns", &end, errbuf))
        rc = qri_err(errbuf, QR_EFORMAT, "%s: no sim_end_ns attribute: not a runtime's truth.h5",
                     path);
    out->sim_end_ns = (int64_t)end;
    double td = 0;
    if (!rc && qr_h5_read_attr_f64(r, "/", "trace_fault_drops", &td, NULL) == QR_OK)
        out->trace_fault_drops = (uint64_t)td;
    td = 0;
    if (!rc && qr_h5_read_attr_f64(r, "/", "trace_buffer_drops", &td, NULL) == QR_OK)
        out->trace_buffer_drops = (uint64_t)td;
    if (!rc)
        rc = qr_h5_read_rows(r, "/drops", &qr_schema_drop, (void **)&out->drops, &out->n_drops,
                             errbuf);
    if (!rc) {
        rc = qr_h5_read_rows(r, "/link_faults", &qr_schema_link_fault, (void **)&out->link_faults,
                             &out->n_link_faults, errbuf);
        if (rc == QR_ENOTFOUND)
            rc = QR_OK;
    }
    if (!rc) {
        rc = qr_h5_read_rows(r, "/probes", &qr_schema_probe, (void **)&out->probes, &out->n_probes,
                             errbuf);
        out->probed = rc == QR_OK;
        if (rc == QR_ENOTFOUND)
            rc = QR_OK;
    }
    if (!rc) {
        rc = qr_h5_read_rows(r, "/true_paths", &qr_schema_path, (void **)&out->true_paths,
                             &out->n_true_paths, errbuf);
        if (rc == QR_ENOTFOUND)
            rc = QR_OK;
    }
    qr_h5_close(r);
    if (rc)
        qr_truth_free(out);
    return rc;
}

int qr_truth_clock_offsets(const char *rec_dir, uint32_t n_hosts, int64_t *out, char *errbuf)
{
    char path[QR_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/truth/truth.h5", rec_dir);
    if (access(path, F_OK) != 0)
        return qri_err(errbuf, QR_ENOENT,
                       "%s: no truth: the true clock offsets are known only for a runtime's "
                       "recording",
                       path);
    qr_h5_reader *r = NULL;
    qr_row_clock *rows = NULL;
    size_t n = 0;
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_h5_open(&r, path, errbuf);
    if (!rc) {
        rc = qr_h5_read_rows(r, "/clocks", &qr_schema_clock, (void **)&rows, &n, detail);
        if (rc == QR_ENOTFOUND)
            qri_err(errbuf, rc,
                    "%s has no /clocks (written before the truth held the clock offsets): run "
                    "qreplay runtime again",
                    path);
        else if (rc)
            qri_err(errbuf, rc, "%s", detail);
    }
    if (!rc && n != n_hosts)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: /clocks has %zu hosts, the recording %u", path, n,
                     n_hosts);
    for (size_t i = 0; !rc && i < n; i++) {
        if (rows[i].host >= n_hosts)
            rc = qri_err(errbuf, QR_EFORMAT, "%s: /clocks row %zu: host %u", path, i + 1,
                         rows[i].host);
        else
            out[rows[i].host] = rows[i].offset_ns;
    }
    qr_h5_rows_free(rows);
    qr_h5_close(r);
    return rc;
}

void qr_truth_free(qr_truth *t)
{
    if (!t)
        return;
    qr_h5_rows_free(t->drops);
    qr_h5_rows_free(t->link_faults);
    qr_h5_rows_free(t->probes);
    qr_h5_rows_free(t->true_paths);
    memset(t, 0, sizeof *t);
}

int64_t qr_truth_drop_faults(const qr_truth *t, uint32_t n_links, uint8_t *faulty, const char *path,
                             char *errbuf)
{
    int64_t n = 0;
    memset(faulty, 0, n_links);
    for (size_t i = 0; i < t->n_link_faults; i++) {
        const qr_row_link_fault *lf = &t->link_faults[i];
        if (strcmp(lf->kind, "gray") && strcmp(lf->kind, "blackhole"))
            continue;
        if (lf->link >= n_links) {
            qri_err(errbuf, QR_EFORMAT, "%s: /link_faults row %zu: link %u out of range", path,
                    i + 1, lf->link);
            return -1;
        }
        faulty[lf->link] = 1;
        n++;
    }
    return n;
}
