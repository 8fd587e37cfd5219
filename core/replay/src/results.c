/* results.h5: the fidelity of every replay of a run folder against its runtime (results.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/results.h"

void qr_variant_summaries_free(qr_variant_summary *rows)
{
    free(rows);
}

/* Rows and series of one variant, streamed into results.h5. */
struct variant_out {
    qr_progress_fn progress;
    void *progress_ctx;
    const char *status;
    uint64_t rows;
    qr_h5_table *qdiff;
    qr_row_qdiff buf[4096];
    size_t n_buf;
    qr_row_queue_series *series;
    size_t n_series, cap_series;
    uint32_t bsw, bport; /* the runtime's busiest queue */
    qr_lag lag;          /* the send-time lag there, over its busy period */
    char *errbuf;
};

static int flush_rows(struct variant_out *v)
{
    int rc = v->n_buf ? qr_h5_table_append(v->qdiff, v->buf, v->n_buf, v->errbuf) : QR_OK;
    v->n_buf = 0;
    return rc;
}

static int on_qdiff_row(void *ctx, const qr_qdiff_row *r)
{
    struct variant_out *v = ctx;
    if (v->progress && (++v->rows & 0xffff) == 0 && v->progress(v->progress_ctx, v->status))
        return QR_ECANCELED;
    if (r->queue.sw == v->bsw && r->queue.port == v->bport &&
        qr_lag_add(&v->lag, r->time_run_ns, r->time_rep_ns))
        return QR_ENOMEM;
    v->buf[v->n_buf++] =
        (qr_row_qdiff){r->packet,      r->queue.sw,    r->queue.port,      r->time_run_ns,
                       r->time_rep_ns, r->qdiff_bytes, r->qdiff_sym_bytes, r->qlen_diff_bytes};
    return v->n_buf == sizeof v->buf / sizeof v->buf[0] ? flush_rows(v) : QR_OK;
}

static int push_series(qr_row_queue_series **s, size_t *n, size_t *cap,
                       const qr_row_queue_series *p)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        qr_row_queue_series *w = realloc(*s, c * sizeof *w);
        if (!w)
            return QR_ENOMEM;
        *s = w;
        *cap = c;
    }
    (*s)[(*n)++] = *p;
    return QR_OK;
}

static int on_series_point(void *ctx, const qr_row_queue_series *p)
{
    struct variant_out *v = ctx;
    return push_series(&v->series, &v->n_series, &v->cap_series, p);
}

/* The runtime's busiest queue over time, from its arrival log. */
static int runtime_series(const char *log, uint32_t sw, uint32_t port, qr_row_queue_series **s,
                          size_t *n, char *errbuf)
{
    qr_arrival_reader *r = NULL;
    size_t cap = 0;
    *s = NULL;
    *n = 0;
    int rc = qr_arrival_reader_open(&r, log, errbuf);
    if (rc)
        return rc;
    qr_arrival a;
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        if (a.sw != sw || a.port != port)
            continue;
        qr_row_queue_series p = {a.time_ns, a.queue_bytes};
        if ((rc = push_series(s, n, &cap, &p)) != QR_OK) {
            qri_err(errbuf, rc, "out of memory");
            break;
        }
    }
    qr_arrival_reader_close(r);
    return rc == QR_END ? QR_OK : rc;
}

static int read_num(qr_h5_reader *r, const char *name, double *v, char *errbuf)
{
    return qr_h5_read_attr_f64(r, "/", name, v, errbuf);
}

/* One variant: read its replay.h5, compare, write its group. */
/* The summary attributes of /replay/<variant> (FORMATS.md). */
static int variant_attrs(qr_h5 *o, const char *g, const qr_variant_summary *row, uint64_t margin,
                         int64_t lateness, char *errbuf)
{
    int rc;
    QRI_TRY(qr_h5_attr_str(o, g, "mode", row->mode, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, g, "th_ns", row->th_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "margin_bytes", margin, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, g, "max_lateness_ns", lateness, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "replay_packets", row->replay_packets, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "matched_arrivals", row->matched, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "runtime_only_arrivals", row->runtime_only, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "replay_only_arrivals", row->replay_only, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_mean_mtu", row->qdiff.mean, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_p50_mtu", row->qdiff.p50, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_p99_mtu", row->qdiff.p99, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_max_mtu", row->qdiff.max, errbuf));
    QRI_TRY(qr_h5_attr_f64(
        o, g, "qdiff_zero_fraction",
        row->qdiff.count ? (double)row->qdiff.zeros / (double)row->qdiff.count : 0.0, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_sym_mean_mtu", row->qdiff_sym.mean, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_sym_p50_mtu", row->qdiff_sym.p50, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_sym_p99_mtu", row->qdiff_sym.p99, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qdiff_sym_max_mtu", row->qdiff_sym.max, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "qlen_diff_mean_mtu", row->qlen.mean_mtu, errbuf));
    QRI_TRY(qr_h5_attr_f64(
        o, g, "qlen_longer_fraction",
        row->qlen.count ? (double)row->qlen.longer / (double)row->qlen.count : 0.0, errbuf));
    QRI_TRY(qr_h5_attr_f64(
        o, g, "qlen_shorter_fraction",
        row->qlen.count ? (double)row->qlen.shorter / (double)row->qlen.count : 0.0, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "runtime_drops", row->drops.runtime_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "replay_drops", row->drops.replay_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "dropped_in_either", row->drops.either, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "false_accepts", row->drops.false_accepts, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "false_drops", row->drops.false_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "wrong_locations", row->drops.wrong_locations, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "drop_error", row->drops.error, errbuf));
fail:
    return rc;
}

/* A replay's sampling (its records and counts) as /sampling/th_<us> of results.h5. */
static int copy_sampling(qr_h5 *o, qr_h5_reader *rep, int64_t th_ns, char *errbuf)
{
    char sg[64], rp[96];
    qr_row_sample_record *recs = NULL;
    size_t n_recs = 0;
    double packets, records, ratio, max_err;
    int rc;
    snprintf(sg, sizeof sg, "/sampling/th_%g", (double)th_ns / 1e3);
    snprintf(rp, sizeof rp, "%s/records", sg);
    QRI_TRY(qr_h5_read_rows(rep, "/sampling/records", &qr_schema_sample_record, (void **)&recs,
                            &n_recs, errbuf));
    QRI_TRY(qr_h5_write_rows(o, rp, &qr_schema_sample_record, recs, n_recs, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, sg, "th_ns", th_ns, errbuf));
    QRI_TRY(qr_h5_read_attr_f64(rep, "/sampling", "packets", &packets, errbuf));
    QRI_TRY(qr_h5_read_attr_f64(rep, "/sampling", "records", &records, errbuf));
    QRI_TRY(qr_h5_read_attr_f64(rep, "/sampling", "compression_ratio", &ratio, errbuf));
    QRI_TRY(qr_h5_read_attr_f64(rep, "/sampling", "max_error_ns", &max_err, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, sg, "packets", (uint64_t)packets, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, sg, "records", (uint64_t)records, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, sg, "compression_ratio", ratio, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, sg, "max_error_ns", (int64_t)max_err, errbuf));
fail:
    qr_h5_rows_free(recs);
    return rc;
}

/* The drop error of a replay's drops against the runtime's (0 or QR_ENOMEM). */
static int variant_droperr(const qr_row_drop *run_drops, size_t n_run_drops,
                           const qr_row_drop *drops, size_t n_drops, qr_variant_summary *row)
{
    qr_droperr *de = NULL;
    int rc = qr_droperr_create(&de);
    for (size_t i = 0; !rc && i < n_run_drops; i++)
        if (qr_droperr_add(de, QR_RUN_RUNTIME, run_drops[i].packet,
                           (qr_location){run_drops[i].sw, run_drops[i].port}) == QR_ENOMEM)
            rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < n_drops; i++)
        if (qr_droperr_add(de, QR_RUN_REPLAY, drops[i].packet,
                           (qr_location){drops[i].sw, drops[i].port}) == QR_ENOMEM)
            rc = QR_ENOMEM;
    if (!rc)
        qr_droperr_result(de, &row->drops);
    qr_droperr_destroy(de);
    return rc;
}

/* Group g's qdiff, busiest_queue and queues: both arrival logs in time order, matched by (packet,
 * queue); their summaries into row. */
static int write_qdiff(qr_h5 *o, const char *g, const char *run_log, const char *replay_log,
                       struct variant_out *out, qr_variant_summary *row)
{
    char path[512], *errbuf = out->errbuf;
    qr_qdiff_stream *qs = NULL;
    qr_row_queue_summary *queues = NULL;
    size_t n_queues = 0;
    int rc;
    snprintf(path, sizeof path, "%s/qdiff", g);
    QRI_TRY(qr_h5_table_open_schema(&out->qdiff, o, path, &qr_schema_qdiff, errbuf));
    qr_h5_table_rle(out->qdiff); /* the table whose compression bounded qreplay metrics */
    QRI_TRY(qr_compare_arrival_logs(run_log, replay_log, out->bsw, out->bport, on_qdiff_row,
                                    on_series_point, out, &qs, errbuf));
    QRI_TRY(flush_rows(out));
    rc = qr_h5_table_close(out->qdiff, errbuf);
    out->qdiff = NULL;
    if (rc)
        goto fail;
    snprintf(path, sizeof path, "%s/busiest_queue", g);
    QRI_TRY(qr_h5_write_rows(o, path, &qr_schema_queue_series, out->series, out->n_series, errbuf));
    qr_qdiff_stream_summary(qs, &row->qdiff, &row->qdiff_sym);
    qr_qdiff_stream_qlen(qs, &row->qlen);
    qr_qdiff_stream_pending(qs, &row->runtime_only, &row->replay_only);
    row->matched = row->qdiff.count;
    if ((rc = qr_qdiff_stream_queue_rows(qs, &queues, &n_queues)) != QR_OK) {
        rc = qri_err(errbuf, rc, "%s: out of memory", replay_log);
        goto fail;
    }
    snprintf(path, sizeof path, "%s/queues", g);
    QRI_TRY(qr_h5_write_rows(o, path, &qr_schema_queue_summary, queues, n_queues, errbuf));
fail:
    qr_h5_rows_free(queues);
    qr_qdiff_stream_destroy(qs);
    return rc;
}

/* Group g's lag medians, where there is one. */
static int write_lag(qr_h5 *o, const char *g, qr_lag *lag, char *errbuf)
{
    int64_t early, settled;
    int has_early, has_settled, rc = QR_OK;
    qr_lag_medians(lag, &early, &has_early, &settled, &has_settled);
    if (has_early)
        QRI_TRY(qr_h5_attr_i64(o, g, "lag_early_ns", early, errbuf));
    if (has_settled)
        QRI_TRY(qr_h5_attr_i64(o, g, "lag_settled_ns", settled, errbuf));
fail:
    return rc;
}

static int write_variant(qr_h5 *o, const char *run_dir, const char *v, const char *run_log,
                         const qr_row_drop *run_drops, size_t n_run_drops, uint32_t bsw,
                         uint32_t bport, const qr_busy_period *busy, uint64_t recorded,
                         qr_progress_fn progress, void *ctx, const char *status,
                         int64_t *sampling_th, size_t *n_sampling, qr_variant_summary *row,
                         char *errbuf)
{
    char vdir[3 * QR_PATH_MAX], path[4 * QR_PATH_MAX], g[256];
    snprintf(vdir, sizeof vdir, "%s/replay/%s", run_dir, v);
    snprintf(path, sizeof path, "%s/replay.h5", vdir);
    qr_h5_reader *rep = NULL;
    qr_row_drop *drops = NULL;
    qr_row_replay_host *hosts = NULL;
    struct variant_out *out = calloc(1, sizeof *out);
    char *mode = NULL;
    size_t n_drops = 0, n_hosts = 0;
    double th, margin, lateness;
    int rc;
    if (!out)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    out->errbuf = errbuf;
    out->progress = progress;
    out->progress_ctx = ctx;
    out->status = status;
    out->bsw = bsw;
    out->bport = bport;
    qr_lag_init(&out->lag, busy);
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", v);
    QRI_TRY(qr_h5_open(&rep, path, errbuf));
    QRI_TRY(qr_h5_read_attr_str(rep, "/", "mode", &mode, errbuf));
    snprintf(row->mode, sizeof row->mode, "%s", mode);
    QRI_TRY(read_num(rep, "th_ns", &th, errbuf));
    row->th_ns = (int64_t)th;
    QRI_TRY(read_num(rep, "margin_bytes", &margin, errbuf));
    QRI_TRY(read_num(rep, "max_lateness_ns", &lateness, errbuf));
    QRI_TRY(qr_h5_read_rows(rep, "/drops", &qr_schema_drop, (void **)&drops, &n_drops, errbuf));
    QRI_TRY(
        qr_h5_read_rows(rep, "/hosts", &qr_schema_replay_host, (void **)&hosts, &n_hosts, errbuf));
    for (size_t i = 0; i < n_hosts; i++)
        row->replay_packets += hosts[i].packets;
    row->recorded_packets = recorded;

    snprintf(g, sizeof g, "/replay/%s", v);
    QRI_TRY(qr_h5_group(o, g, errbuf));
    /* the sampling of this threshold, once */
    int seen = 0;
    for (size_t i = 0; i < *n_sampling; i++)
        seen |= sampling_th[i] == row->th_ns;
    if (!seen) {
        sampling_th[(*n_sampling)++] = row->th_ns;
        QRI_TRY(copy_sampling(o, rep, row->th_ns, errbuf));
    }
    qr_h5_close(rep);
    rep = NULL;
    snprintf(path, sizeof path, "%s/drops", g);
    QRI_TRY(qr_h5_write_rows(o, path, &qr_schema_drop, drops, n_drops, errbuf));

    if ((rc = variant_droperr(run_drops, n_run_drops, drops, n_drops, row)) != QR_OK) {
        rc = qri_err(errbuf, rc, "%s: out of memory", vdir);
        goto fail;
    }
    snprintf(path, sizeof path, "%s/arrivals.qra", vdir);
    QRI_TRY(write_qdiff(o, g, run_log, path, out, row));
    QRI_TRY(variant_attrs(o, g, row, (uint64_t)margin, (int64_t)lateness, errbuf));
    QRI_TRY(write_lag(o, g, &out->lag, errbuf));
fail:
    if (out->qdiff)
        qr_h5_table_close(out->qdiff, NULL);
    qr_h5_close(rep);
    free(mode);
    qr_h5_rows_free(drops);
    qr_h5_rows_free(hosts);
    free(out->series);
    qr_lag_free(&out->lag);
    free(out);
    return rc;
}

/* /runtime/busy_period: the busiest queue's longest busy period (qr_busy_period). */
static int write_busy_period(qr_h5 *o, const qr_busy_period *b, char *errbuf)
{
    const char *g = "/runtime/busy_period";
    int rc;
    QRI_TRY(qr_h5_group(o, g, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "arrivals", b->arrivals, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, g, "start_ns", b->start_ns, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, g, "end_ns", b->end_ns, errbuf));
    QRI_TRY(qr_h5_attr_f64(o, g, "share", b->share, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "min_queue_bytes", b->min_queue_bytes, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, g, "max_queue_bytes", b->max_queue_bytes, errbuf));
    QRI_TRY(qr_h5_attr_i64(o, g, "settled_min_queue_bytes", b->settled_min_queue_bytes, errbuf));
fail:
    return rc;
}

/* How much of the runtime's traffic, and of its drops, was incast: /runtime attributes
 * incast_bytes_share (of the flows' bytes) and incast_drops_share (of the dropped packets, by the
 * flow of their direction, truth /directions). */
static int write_incast_shares(qr_h5 *o, qr_h5_reader *truth, const qr_row_flow *flows,
                               size_t n_flows, const qr_row_drop *drops, size_t n_drops,
                               char *errbuf)
{
    qr_row_direction *dirs = NULL;
    uint64_t *keys = NULL, *ids = NULL;
    size_t n_dirs = 0;
    uint64_t all = 0, inc = 0, inc_drops = 0;
    int rc;
    QRI_TRY(qr_h5_read_rows(truth, "/directions", &qr_schema_direction, (void **)&dirs, &n_dirs,
                            errbuf));
    for (size_t i = 0; i < n_flows; i++) {
        all += flows[i].bytes;
        inc += flows[i].incast ? flows[i].bytes : 0;
    }
    /* each direction's flow incast or not, by direction number, then each drop looked up */
    if (!(keys = malloc((n_dirs ? n_dirs : 1) * sizeof *keys)) ||
        !(ids = malloc((n_flows ? n_flows : 1) * sizeof *ids))) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t f = 0; f < n_flows; f++)
        ids[f] = ((uint64_t)flows[f].id << 1) | (flows[f].incast != 0);
    qsort(ids, n_flows, sizeof *ids, qri_cmp_u64);
    for (size_t d = 0; d < n_dirs; d++) {
        uint64_t *hit = NULL;
        for (int bit = 0; bit < 2 && !hit; bit++) {
            uint64_t k = ((uint64_t)dirs[d].flow << 1) | (uint64_t)bit;
            hit = bsearch(&k, ids, n_flows, sizeof *ids, qri_cmp_u64);
        }
        keys[d] = ((uint64_t)dirs[d].dir << 1) | (hit ? (*hit & 1) : 0);
    }
    qsort(keys, n_dirs, sizeof *keys, qri_cmp_u64);
    for (size_t i = 0; i < n_drops; i++) {
        uint64_t k = ((uint64_t)drops[i].dir << 1) | 1;
        inc_drops += bsearch(&k, keys, n_dirs, sizeof *keys, qri_cmp_u64) != NULL;
    }
    QRI_TRY(qr_h5_attr_f64(o, "/runtime", "incast_bytes_share",
                           (double)inc / (all ? (double)all : 1.0), errbuf));
    QRI_TRY(qr_h5_attr_f64(o, "/runtime", "incast_drops_share",
                           (double)inc_drops / (n_drops ? (double)n_drops : 1.0), errbuf));
fail:
    qr_h5_rows_free(dirs);
    free(keys);
    free(ids);
    return rc;
}

/* Every input of this recording: the runtime's truth (truth_h5) and log, and each replay. */
static int check_inputs(const char *run_dir, const char *truth_h5, const char *run_log,
                        const char *rec_id, char *const *variants, size_t n_variants, char *errbuf)
{
    int rc;
    QRI_TRY(qr_h5_check_recording(truth_h5, rec_id, "its recording was replaced: the truth is lost",
                                  errbuf));
    QRI_TRY(qr_run_log_check(run_log, rec_id,
                             "put the recorded run's own log back, or run it again "
                             "(qreplay runtime)",
                             errbuf));
    for (size_t i = 0; i < n_variants; i++) {
        char vp[4 * QR_PATH_MAX], fix[3 * QR_PATH_MAX];
        snprintf(fix, sizeof fix, "replay again (qreplay replay %s) or remove %s/replay/%s",
                 run_dir, run_dir, variants[i]);
        snprintf(vp, sizeof vp, "%s/replay/%s/replay.h5", run_dir, variants[i]);
        QRI_TRY(qr_h5_check_recording(vp, rec_id, fix, errbuf));
        snprintf(vp, sizeof vp, "%s/replay/%s/arrivals.qra", run_dir, variants[i]);
        QRI_TRY(qr_run_log_check(vp, rec_id, fix, errbuf));
    }
fail:
    return rc;
}

/* /runtime: its drops, packets, busiest queue, that queue's series and busy period (into *busy). */
static int write_runtime(qr_h5 *o, const char *run_log, const qr_row_drop *run_drops,
                         size_t n_run_drops, uint64_t recorded, uint32_t bsw, uint32_t bport,
                         qr_busy_period *busy, char *errbuf)
{
    qr_row_queue_series *series = NULL;
    size_t n_series = 0;
    int rc;
    QRI_TRY(qr_h5_group(o, "/runtime", errbuf));
    QRI_TRY(qr_h5_write_rows(o, "/runtime/drops", &qr_schema_drop, run_drops, n_run_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, "/runtime", "drops", n_run_drops, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, "/runtime", "packets", recorded, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, "/runtime", "busiest_switch", bsw, errbuf));
    QRI_TRY(qr_h5_attr_u64(o, "/runtime", "busiest_port", bport, errbuf));
    QRI_TRY(runtime_series(run_log, bsw, bport, &series, &n_series, errbuf));
    QRI_TRY(qr_h5_write_rows(o, "/runtime/busiest_queue", &qr_schema_queue_series, series, n_series,
                             errbuf));
    qr_busy_period_find(series, n_series, busy);
    QRI_TRY(write_busy_period(o, busy, errbuf));
fail:
    free(series);
    return rc;
}

int qr_results_write(const char *run_dir, qr_progress_fn progress, void *ctx,
                     qr_variant_summary **rows, size_t *n_rows, char *errbuf)
{
    char rec_dir[2 * QR_PATH_MAX], path[3 * QR_PATH_MAX], run_log[3 * QR_PATH_MAX];
    snprintf(rec_dir, sizeof rec_dir, "%s/recording", run_dir);
    snprintf(run_log, sizeof run_log, "%s/truth/arrivals.qra", rec_dir);
    qr_h5_reader *rec = NULL, *truth = NULL;
    qr_scenario *s = NULL;
    qr_row_flow *flows = NULL;
    qr_row_drop *run_drops = NULL;
    qr_row_host *hosts = NULL;
    char **variants = NULL, *scenario_name = NULL;
    qr_variant_summary *out = NULL;
    int64_t *sampling_th = NULL;
    size_t n_flows = 0, n_run_drops = 0, n_hosts = 0, n_variants = 0, n_sampling = 0;
    qr_h5 *o = NULL;
    uint32_t bsw = 0, bport = 0;
    qr_busy_period busy;
    int rc;
    *rows = NULL;
    *n_rows = 0;
    snprintf(path, sizeof path, "%s/recording.h5", rec_dir);
    QRI_TRY(qr_h5_open(&rec, path, errbuf));
    QRI_TRY(qr_scenario_from_h5(&s, path, "recording", rec_dir, errbuf));
    QRI_TRY(qr_h5_read_attr_str(rec, "/", "scenario_name", &scenario_name, errbuf));
    char rec_id[QR_ID_SIZE];
    QRI_TRY(qr_h5_recording_id(path, rec_id, errbuf));
    QRI_TRY(qr_h5_read_rows(rec, "/flows", &qr_schema_flow, (void **)&flows, &n_flows, errbuf));
    QRI_TRY(qr_h5_read_rows(rec, "/hosts", &qr_schema_host, (void **)&hosts, &n_hosts, errbuf));
    snprintf(path, sizeof path, "%s/truth/truth.h5", rec_dir);
    if (access(path, F_OK) != 0) {
        rc = qri_err(errbuf, QR_ENOENT,
                     "%s: no truth: metrics grades replays against the runtime's ground truth, "
                     "which a run folder of observations alone does not have",
                     path);
        goto fail;
    }
    QRI_TRY(qr_h5_open(&truth, path, errbuf));
    QRI_TRY(qr_h5_read_rows(truth, "/drops", &qr_schema_drop, (void **)&run_drops, &n_run_drops,
                            errbuf));
    if ((rc = qr_variants_list(run_dir, &variants, &n_variants)) != QR_OK) {
        qri_err(errbuf, rc, "%s/replay: out of memory", run_dir);
        goto fail;
    }
    if (n_variants == 0) {
        rc = qri_err(errbuf, QR_ENOENT, "%s/replay: no complete replay (run qreplay replay)",
                     run_dir);
        goto fail;
    }
    QRI_TRY(check_inputs(run_dir, path, run_log, rec_id, variants, n_variants, errbuf));
    rc = qr_arrival_log_busiest(run_log, &bsw, &bport, errbuf);
    if (rc && rc != QR_ENOTFOUND)
        goto fail;
    uint64_t recorded = 0;
    for (size_t h = 0; h < n_hosts; h++)
        recorded += hosts[h].packets;

    snprintf(path, sizeof path, "%s/results.h5", run_dir);
    QRI_TRY(qr_h5_create_result(&o, path, s, "qreplay results", rec_id, errbuf));
    QRI_TRY(qr_h5_attr_str(o, "/", "scenario_name", scenario_name, errbuf));
    QRI_TRY(qr_h5_write_rows(o, "/flows", &qr_schema_flow, flows, n_flows, errbuf));
    QRI_TRY(write_runtime(o, run_log, run_drops, n_run_drops, recorded, bsw, bport, &busy, errbuf));
    QRI_TRY(write_incast_shares(o, truth, flows, n_flows, run_drops, n_run_drops, errbuf));

    out = calloc(n_variants, sizeof *out);
    sampling_th = calloc(n_variants, sizeof *sampling_th);
    if (!out || !sampling_th) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n_variants; i++) {
        char status[256];
        snprintf(status, sizeof status, "metrics: %s", variants[i]);
        if (progress && progress(ctx, status)) {
            rc = qri_err(errbuf, QR_ECANCELED, "interrupted");
            goto fail;
        }
        rc = write_variant(o, run_dir, variants[i], run_log, run_drops, n_run_drops, bsw, bport,
                           &busy, recorded, progress, ctx, status, sampling_th, &n_sampling,
                           &out[i], errbuf);
        if (rc == QR_ECANCELED)
            qri_err(errbuf, rc, "interrupted");
        if (rc)
            goto fail;
    }
    rc = qr_h5_commit(o, errbuf);
    o = NULL;
    if (rc)
        goto fail;
    *rows = out;
    *n_rows = n_variants;
    out = NULL;
fail:
    qr_h5_abort(o);
    qr_h5_close(rec);
    qr_h5_close(truth);
    qr_scenario_destroy(s);
    free(scenario_name);
    qr_h5_rows_free(flows);
    qr_h5_rows_free(run_drops);
    qr_h5_rows_free(hosts);
    free(sampling_th);
    qr_variants_free(variants, n_variants);
    free(out);
    return rc;
}
