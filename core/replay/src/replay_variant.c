/* One replay variant of a run folder (replay.h): sampling, the clocks, an engine, replay.h5. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/replay.h"
#include "qreplay/results.h"
#include "qreplay/txn.h"

const char *qr_variant_settings_name(const qr_variant_settings *v, char *buf, size_t size)
{
    if (v->name && *v->name) {
        qri_strlcpy(buf, v->name, size);
        return buf;
    }
    char n[128];
    qr_variant_name(v->mode, v->th_ns, n, sizeof n);
    snprintf(buf, size, "%s%s", n, v->reconcile ? "_reconciled" : "");
    return buf;
}

typedef struct status_ctx {
    const qr_variant_settings *v;
    const char *name;
} status_ctx;

static void on_progress(void *ctx, int64_t sim_ns, double wall_s, uint64_t events)
{
    status_ctx *s = ctx;
    char line[256];
    snprintf(line, sizeof line, "replay %s (%s): sim %.3f ms | %.0fk events/s", s->name,
             s->v->engine_name ? s->v->engine_name : "native", (double)sim_ns / 1e6,
             wall_s > 0 ? (double)events / wall_s / 1e3 : 0.0);
    s->v->status(s->v->status_ctx, line);
}

/* Stage 1, the clocks: the hosts' clock offsets estimated from rec's own send and receive times
 * (host 0 the reference): *corr gets the correction to take out of each host's send times and
 * *clocks a row per host for replay.h5. */
static int estimate_clocks(const qr_recording *rec, int64_t **corr, qr_row_replay_clock **clocks,
                           size_t *n_clocks, char *err)
{
    uint32_t n = qr_recording_hosts(rec);
    qr_clock_estimate *est = calloc(n ? n : 1, sizeof *est);
    *corr = calloc(n ? n : 1, sizeof **corr);
    *clocks = calloc(n ? n : 1, sizeof **clocks);
    int rc = !est || !*corr || !*clocks ? qri_err(err, QR_ENOMEM, "out of memory") : 0;
    if (!rc)
        rc = qr_recording_estimate_clocks(rec, 0, est, NULL, err);
    for (uint32_t h = 0; !rc && h < n; h++) {
        (*corr)[h] = qr_clock_correction(&est[h]);
        (*clocks)[h] = (qr_row_replay_clock){h,
                                             (*corr)[h],
                                             est[h].residual_ns,
                                             est[h].reference,
                                             est[h].pairs,
                                             est[h].offset_ns,
                                             est[h].bound_ns};
    }
    *n_clocks = rc ? 0 : n;
    free(est);
    return rc;
}

/* What the stages before the engine made, released together. */
typedef struct variant_plan {
    int64_t *corr;
    qr_row_replay_clock *clocks;
    size_t n_clocks;
    qr_plan *plan;
    qr_plan_cursor *cursor;
    qr_sampling_stats sst;
    qr_row_sample_record *recs;
    size_t n_recs;
} variant_plan;

static void variant_plan_free(variant_plan *vp)
{
    free(vp->corr);
    free(vp->clocks);
    qr_plan_cursor_free(vp->cursor);
    qr_plan_free(vp->plan);
    qr_h5_rows_free(vp->recs);
    memset(vp, 0, sizeof *vp);
}

/* Stages 1-3: the input's packets as a source, with what made it. */
static int plan_source(const qr_replay_input *in, const qr_config *c, const qr_variant_settings *v,
                       variant_plan *vp, qr_source **src, char *err)
{
    if (in->stream) {
        qr_sampling_method m;
        int64_t th;
        qr_pcap_stream_sampling(in->stream, &m, &th);
        if (in->rec || in->light || in->krec || v->reconcile || m != c->sampling.method ||
            th != v->th_ns)
            return qri_err(err, QR_EINVAL,
                           "replay: a streamed recording is sampled at the variant's threshold, "
                           "with the clocks as recorded");
        *src = qr_pcap_stream_source(in->stream);
        return QR_OK;
    }
    if (!in->rec || !qr_recording_has_packets(in->rec) ||
        ((in->light || in->krec) && v->reconcile) ||
        (in->krec && in->rec != qr_krec_set_recording(in->krec)))
        return qri_err(err, QR_EINVAL,
                       "replay: no recording, one whose packets were not read, or a light or "
                       "kernel record's times with the clocks reconciled");
    int rc;
    if (v->reconcile &&
        (rc = estimate_clocks(in->rec, &vp->corr, &vp->clocks, &vp->n_clocks, err)) != QR_OK)
        return rc;
    rc = in->light  ? qr_light_plan(&vp->plan, in->light, in->rec, c->sampling.method, v->th_ns,
                                    &vp->sst, &vp->recs, &vp->n_recs, err)
         : in->krec ? qr_krec_set_plan(&vp->plan, in->krec, c->sampling.method, v->th_ns, &vp->sst,
                                       &vp->recs, &vp->n_recs, err)
                    : qr_plan_sample(&vp->plan, in->rec, vp->corr, c->sampling.method, v->th_ns,
                                     &vp->sst, &vp->recs, &vp->n_recs, err);
    if (rc) {
        qri_err_prefix(err, "sampling");
        return rc;
    }
    if (qr_plan_cursor_create(&vp->cursor, in->rec, vp->plan))
        return qri_err(err, QR_ENOMEM, "out of memory");
    *src = qr_plan_cursor_source(vp->cursor);
    return QR_OK;
}

int qr_replay_variant(const char *run_dir, const qr_scenario *s, const qr_replay_input *in,
                      const qr_variant_settings *v, qr_replay_engine engine, void *engine_ctx,
                      char *err)
{
    if (!run_dir || !s || !in || !v || !engine)
        return qri_err(err, QR_EINVAL, "replay: missing argument");
    const qr_recording *rec = in->stream ? qr_pcap_stream_recording(in->stream) : in->rec;
    if (!rec)
        return qri_err(err, QR_EINVAL, "replay: missing argument");
    const qr_config *c = qr_scenario_config(s);
    char name[256], dir[4096], log[4200], partial[4300], h5[4200];
    if (v->name && strlen(v->name) > QR_VARIANT_NAME_MAX)
        return qri_err(err, QR_EVALUE, "replay: a variant's name has at most %d characters",
                       QR_VARIANT_NAME_MAX);
    qr_variant_settings_name(v, name, sizeof name);
    snprintf(dir, sizeof dir, "%s/replay/%s", run_dir, name);
    snprintf(log, sizeof log, "%s/arrivals.qra", dir);
    snprintf(partial, sizeof partial, "%s.partial-%ld", log, (long)getpid());
    snprintf(h5, sizeof h5, "%s/replay.h5", dir);
    struct stat st;
    int existed = stat(dir, &st) == 0;
    int rc = qr_make_dirs(dir, err);
    if (rc)
        return rc;
    qr_partial_add(partial);
    unlink(h5); /* its presence marks a complete replay */

    variant_plan vp = {0};
    qr_replay_out out = {0};
    FILE *more_recs = NULL;
    qr_source *src = NULL;
    rc = plan_source(in, c, v, &vp, &src, err);
    if (!rc) {
        status_ctx sc = {v, name};
        qr_replay_opts o = {v->mode, c->replay.margin_bytes,
                            partial, v->status ? on_progress : NULL,
                            &sc,     v->cancel};
        rc = engine(engine_ctx, s, rec, src, &o, &out, err);
        if (!rc && out.cancelled)
            rc = QR_ECANCELED;
        if (!rc && in->stream)
            rc = qr_pcap_stream_end(in->stream, &vp.sst, &more_recs, err);
    }
    /* this replay's own id: its log and its replay.h5 name it, so that neither is read with
     * another's */
    char id_text[512], digest[65], arrivals_id[33];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(id_text, sizeof id_text, "%s|%s|%d|%lld|%llu|%s|%d|%ld|%lld.%09ld",
             qr_recording_id(rec), name, (int)v->mode, (long long)v->th_ns,
             (unsigned long long)c->replay.margin_bytes, v->engine_name ? v->engine_name : "",
             v->reconcile, (long)getpid(), (long long)now.tv_sec, now.tv_nsec);
    if (!rc && qri_sha256_buf(id_text, strlen(id_text), digest))
        rc = qri_err(err, QR_ENOMEM, "out of memory");
    snprintf(arrivals_id, sizeof arrivals_id, "%.32s", digest);
    if (!rc)
        rc = qr_arrival_log_stamp_source(partial, arrivals_id, err);
    if (!rc)
        rc = qr_commit_path(partial, log, err);
    if (!rc) {
        qr_row_replay_host *hosts = calloc(out.n_hosts ? out.n_hosts : 1, sizeof *hosts);
        if (!hosts)
            rc = qri_err(err, QR_ENOMEM, "out of memory");
        for (uint32_t h = 0; !rc && h < out.n_hosts; h++)
            hosts[h] = (qr_row_replay_host){h, out.sent[h], out.sent_bytes[h]};
        qr_replay_info info = {qr_recording_id(rec),
                               name,
                               v->mode,
                               v->th_ns,
                               c->replay.margin_bytes,
                               out.events,
                               out.wall_s,
                               out.end_ns,
                               out.max_late_ns,
                               out.other_drops,
                               out.delivered,
                               vp.sst,
                               v->reconcile ? "reconciled" : "recorded",
                               vp.clocks,
                               vp.n_clocks,
                               v->engine_name ? v->engine_name : "native",
                               arrivals_id};
        if (!rc)
            rc = qr_replay_write(h5, s, &info, out.drops, out.n_drops, hosts, out.n_hosts, vp.recs,
                                 vp.n_recs, more_recs, err);
        free(hosts);
    }
    qr_replay_out_free(&out);
    if (v->plan_out) {
        *v->plan_out = rc ? NULL : vp.plan;
        if (!rc)
            vp.plan = NULL;
    }
    variant_plan_free(&vp);
    unlink(partial);
    if (rc) {
        unlink(log);
        unlink(h5);
        if (!existed)
            rmdir(dir);
    }
    return rc;
}

size_t qr_variant_plan(const qr_config *c, qr_variant_settings *out, size_t max)
{
    static const qr_drop_mode order[] = {QR_MODE_PLAIN, QR_MODE_TAGGED};
    size_t n = 0;
    for (size_t i = 0; i < c->sampling.n_th; i++)
        for (size_t m = 0; m < sizeof order / sizeof order[0]; m++) {
            if (!(c->replay.modes & (1u << order[m])))
                continue;
            if (n < max) {
                memset(&out[n], 0, sizeof out[n]);
                out[n].mode = order[m];
                out[n].th_ns = c->sampling.th_ns[i];
            }
            n++;
        }
    return n;
}

int qr_replay_read_streams(qr_read_mode read, const qr_variant_settings *v, int *stream,
                           char *errbuf)
{
    int can = !v->reconcile && (!v->engine_name || !strcmp(v->engine_name, "native"));
    *stream = read == QR_READ_WHOLE ? 0 : can;
    if (read == QR_READ_STREAM && !can)
        return qri_err(errbuf, QR_EINVAL,
                       "--read stream: only the native engine with recorded clocks streams (the "
                       "ns-3 engine and --clock reconcile read whole)");
    return QR_OK;
}

int qr_replay_recording(const char *run_dir, const char *rec_dir, const qr_scenario *s,
                        qr_read_mode read, const qr_variant_settings *v, qr_replay_engine engine,
                        void *engine_ctx, char *note, size_t note_size, char *errbuf)
{
    if (note && note_size)
        note[0] = '\0';
    int stream;
    int rc = qr_replay_read_streams(read, v, &stream, errbuf);
    if (rc)
        return rc;
    if (stream) {
        const qr_config *c = qr_scenario_config(s);
        qr_pcap_stream *st = NULL;
        rc = qr_pcap_stream_open(&st, rec_dir, s, c->sampling.method, v->th_ns, errbuf);
        if (rc)
            return rc;
        qr_replay_input in = {NULL, NULL, st, NULL};
        rc = qr_replay_variant(run_dir, s, &in, v, engine, engine_ctx, errbuf);
        int unordered = qr_pcap_stream_unordered(st);
        qr_pcap_stream_close(st);
        if (!(rc == QR_EORDER && unordered && read == QR_READ_AUTO))
            return rc;
        /* a capture going back in time across directions: the same replay, read whole */
        if (note && note_size)
            snprintf(note, note_size, "%s; reading the recording whole", errbuf);
    }
    qr_recording *rec = NULL;
    rc = qr_recording_open(&rec, rec_dir, s, errbuf);
    if (rc)
        return rc;
    qr_replay_input in = {rec, NULL, NULL, NULL};
    rc = qr_replay_variant(run_dir, s, &in, v, engine, engine_ctx, errbuf);
    qr_recording_close(rec);
    return rc;
}
