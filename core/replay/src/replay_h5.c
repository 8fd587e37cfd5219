/* replay.h5: one replay's own result file (results.h). */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/results.h"

static const char *mode_name(qr_drop_mode m)
{
    return m == QR_MODE_TAGGED ? "tagged" : "plain";
}

static int write_sampling_attrs(qr_h5 *f, const char *g, const qr_sampling_stats *st, char *errbuf)
{
    int rc;
    QRI_TRY(qr_h5_attr_u64(f, g, "packets", st->packets, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, g, "records", st->records, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, g, "compression_ratio",
                           st->records ? (double)st->packets / (double)st->records : 0.0, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, g, "max_error_ns", st->max_error_ns, errbuf));
fail:
    return rc;
}

int qr_replay_write(const char *path, const qr_scenario *s, const qr_replay_info *info,
                    const qr_row_drop *drops, size_t n_drops, const qr_row_replay_host *hosts,
                    size_t n_hosts, const qr_row_sample_record *records, size_t n_records,
                    FILE *more_records, char *errbuf)
{
    qr_h5 *f = NULL;
    qr_h5_table *t = NULL;
    qr_row_sample_record *block = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay replay", info->recording_id, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "variant", info->variant, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "mode", mode_name(info->mode), errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "th_ns", info->th_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "margin_bytes", info->margin_bytes, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "events", info->events, errbuf));
    if (info->engine)
        QRI_TRY(qr_h5_attr_str(f, "/", "engine", info->engine, errbuf));
    if (info->arrivals_id)
        QRI_TRY(qr_h5_attr_str(f, "/", "arrivals_id", info->arrivals_id, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "wall_s", info->wall_s, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "sim_end_ns", info->sim_end_ns, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "max_lateness_ns", info->max_lateness_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "other_drops", info->other_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "delivered", info->delivered, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/drops", &qr_schema_drop, drops, n_drops, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/hosts", &qr_schema_replay_host, hosts, n_hosts, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "clock", info->clock ? info->clock : "recorded", errbuf));
    if (info->n_clocks)
        QRI_TRY(qr_h5_write_rows(f, "/clocks", &qr_schema_replay_clock, info->clocks,
                                 info->n_clocks, errbuf));
    QRI_TRY(qr_h5_group(f, "/sampling", errbuf));
    QRI_TRY(write_sampling_attrs(f, "/sampling", &info->sampling, errbuf));
    QRI_TRY(qr_h5_table_open_schema(&t, f, "/sampling/records", &qr_schema_sample_record, errbuf));
    QRI_TRY(qr_h5_table_append(t, records, n_records, errbuf));
    if (more_records) {
        enum { BLOCK = 65536 };
        if (!(block = malloc(BLOCK * sizeof *block))) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            goto fail;
        }
        size_t got;
        while ((got = fread(block, sizeof *block, BLOCK, more_records)) > 0)
            QRI_TRY(qr_h5_table_append(t, block, got, errbuf));
        if (ferror(more_records)) {
            rc = qri_err(errbuf, QR_EIO, "%s: the sampling records cannot be read back", path);
            goto fail;
        }
    }
    rc = qr_h5_table_close(t, errbuf);
    t = NULL;
    free(block);
    block = NULL;
    if (rc)
        goto fail;
    return qr_h5_commit(f, errbuf);
fail:
    free(block);
    qr_h5_abort(f); /* and t, if still open */
    return rc;
}

/* Variants: by mode, then threshold in numeric order, then name. */
