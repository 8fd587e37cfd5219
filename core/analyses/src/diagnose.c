/* qreplay: why each slow flow was slow, from what hosts recorded (diagnose.h). */
#include "qreplay/diagnose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_internal.h"
#include "qreplay/blackhole.h"
#include "qreplay/buffer.h"
#include "qreplay/h5.h"
#include "qreplay/metrics.h"
#include "qreplay/packet.h"
#include "qreplay/queuelog.h"
#include "qreplay/units.h"

static void free_drop(uint64_t k1, uint64_t k2, void *v, void *c)
{
    (void)k1;
    (void)k2;
    (void)c;
    free(v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int event_cmp(const void *a, const void *b)
{
    const qr_diag_event *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

/* The options' defaults from the scenario and what the recording is (a simulated run or an
 * import), into o and the connection model's settings x->tcfg. */
static void resolve_opts(qri_diag_ctx *x, qr_diag_opts *o, qr_diagnosis *out)
{
    if (o->ack_clock_ns <= 0) {
        o->ack_clock_ns = x->c->tcp.min_rto_ns / 2;
        if (o->ack_clock_ns > 1000000 || o->ack_clock_ns <= 0)
            o->ack_clock_ns = 1000000;
    }
    int64_t delack_given = o->delack_ns > 0 ? o->delack_ns : 0;
    if (o->delack_ns <= 0)
        o->delack_ns = x->c->tcp.delack_timeout_ns / 2;
    x->out = out;
    x->imported = qr_recording_imported(x->rec);
    out->imported = x->imported;
    out->network_known = qr_recording_network_known(x->rec);
    if (o->idle_ns <= 0)
        o->idle_ns = 1000000;
    if (o->rto_min_ns <= 0)
        o->rto_min_ns = x->imported ? 200000000 : x->c->tcp.min_rto_ns;
    qr_tc_cfg_default(&x->tcfg);
    x->tcfg.dupthresh = o->dupthresh;
    x->tcfg.ack_clock_ns = o->ack_clock_ns;
    x->tcfg.idle_ns = o->idle_ns;
    x->tcfg.rto_min_ns = o->rto_min_ns;
    x->tcfg.tlp = x->imported && !o->no_tlp;
    /* ns-3's TCP (the runtime's) has neither RACK nor a tail-loss probe; its flows complete
     * when their receiver has every byte (the papers' FCT) */
    x->tcfg.classic = !x->imported;
    x->tcfg.end_at_arrival = 1;
    /* a simulated receiver's delayed-ACK timer is the scenario's; a captured one's is known
     * only when given */
    x->tcfg.delack_ns = x->imported ? delack_given : o->delack_ns;
    x->delack_ns = x->tcfg.delack_ns;
    x->tcfg.rate_bps = o->path_rate_bps     ? o->path_rate_bps
                       : out->network_known ? x->c->links.rate_bps
                                            : 0;
}

/* Every direction's recorded packets in order (x->idx from x->dir_first, x->dir_count of each),
 * and the recording's end on the reconciled clocks (x->rec_end_ns). Returns 0 or QR_ENOMEM. */
static int index_packets(qri_diag_ctx *x, size_t n_dirs)
{
    size_t total = 0;
    x->rec_end_ns = INT64_MIN;
    for (uint32_t h = 0; h < x->hosts; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(x->rec, h, &n);
        for (size_t i = 0; i < n; i++) {
            if (p[i].dir < n_dirs)
                x->dir_count[p[i].dir]++;
            int64_t t;
            if (p[i].pk.time_ns - x->off[h] > x->rec_end_ns)
                x->rec_end_ns = p[i].pk.time_ns - x->off[h];
            if (p[i].dir < n_dirs &&
                qr_recording_received(x->rec, qr_packet_id(p[i].dir, p[i].seq), &t) == 0) {
                uint32_t dst = qr_flow_table_dir_dst(x->ft, p[i].dir);
                if (dst < x->hosts && t - x->off[dst] > x->rec_end_ns)
                    x->rec_end_ns = t - x->off[dst];
            }
        }
        total += n;
    }
    x->idx = malloc((total ? total : 1) * sizeof *x->idx);
    if (!x->idx)
        return QR_ENOMEM;
    for (size_t d = 0, acc = 0; d < n_dirs; d++) {
        x->dir_first[d] = (uint32_t)acc;
        acc += x->dir_count[d];
        x->dir_count[d] = 0;
    }
    for (uint32_t h = 0; h < x->hosts; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(x->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (p[i].dir < n_dirs)
                x->idx[x->dir_first[p[i].dir] + x->dir_count[p[i].dir]++] = &p[i];
    }
    return QR_OK;
}

/* Each size class's tail threshold and the flows selected (the tail, --flows or --all): their
 * index among the selected in sel_of, -1 for the others. sd: room for every flow's slowdown. */
static void select_tail(qr_diagnosis *out, const qr_diag_opts *o, double *sd, int32_t *sel_of)
{
    for (uint32_t k = 0; k < QR_DIAG_CLASSES; k++) {
        size_t m = 0;
        for (size_t f = 0; f < out->n_flows; f++)
            if (out->flows[f].completed && out->flows[f].size_class == k)
                sd[m++] = out->flows[f].slowdown;
        out->class_flows[k] = (uint32_t)m;
        if (!m)
            continue;
        qsort(sd, m, sizeof *sd, cmp_double);
        out->class_threshold[k] = sd[qr_percentile_rank(o->tail, m) - 1];
    }
    for (size_t f = 0; f < out->n_flows; f++) {
        qr_diag_flow *fl = &out->flows[f];
        out->incomplete += !fl->completed;
        if (o->all)
            fl->selected = 1;
        else if (o->flows) {
            for (size_t i = 0; i < o->n_flows; i++)
                fl->selected |= o->flows[i] == f;
        } else {
            /* above the tail quantile: strictly above, or the largest when all are equal */
            double th = out->class_threshold[fl->size_class];
            fl->selected = fl->completed && fl->slowdown >= th && out->class_flows[fl->size_class];
        }
        sel_of[f] = -1;
        if (fl->selected)
            sel_of[f] = (int32_t)out->selected++;
    }
}

/* The options checked and resolved, the context's arrays, the hosts' clocks as a deployment knows
 * them, and every direction's packets indexed. */
static int diag_setup(qri_diag_ctx *x, const qr_recording *rec, qr_diagnosis *out, char *errbuf)
{
    qr_diag_opts *o = &out->opts;
    if (!(o->tail > 0 && o->tail < 1))
        return qri_err(errbuf, QR_EVALUE, "--tail: %g is not a quantile in (0, 1)", o->tail);
    if (o->dupthresh == 0)
        o->dupthresh = 3;
    if (!x->krec && !qr_recording_has_received(rec))
        return qri_err(errbuf, QR_ESTATE,
                       "the recording has no /received (arrival times at the receivers): diagnosis "
                       "needs both ends of every connection");
    x->rec = rec;
    x->s = qr_recording_scenario(rec);
    x->c = qr_scenario_config(x->s);
    x->ft = qr_recording_flows(rec);
    resolve_opts(x, o, out);
    size_t n_flows = qr_flow_table_flows(x->ft), n_dirs = qr_flow_table_directions(x->ft);
    for (size_t i = 0; i < o->n_flows; i++)
        if (o->flows[i] >= n_flows)
            return qri_err(errbuf, QR_EVALUE,
                           "--flows: flow %u does not exist (the recording has "
                           "%zu flows, 0..%zu)",
                           o->flows[i], n_flows, n_flows ? n_flows - 1 : 0);
    int rc = qr_topology_of_config(&x->topo, x->c);
    if (rc)
        return qri_err(errbuf, rc, "the recording's topology");
    x->dir_first = calloc(n_dirs + 1, sizeof *x->dir_first);
    x->dir_count = calloc(n_dirs + 1, sizeof *x->dir_count);
    out->flows = calloc(n_flows ? n_flows : 1, sizeof *out->flows);
    out->n_flows = n_flows;
    x->hosts = qr_recording_hosts(rec);
    x->busy = calloc(x->hosts ? x->hosts : 1, sizeof *x->busy);
    x->off = calloc(x->hosts ? x->hosts : 1, sizeof *x->off);
    if (!x->dir_first || !x->dir_count || !out->flows || !x->busy || !x->off)
        return QR_ENOMEM;
    if (!x->imported) {
        /* the hosts' clocks as a deployment knows them: reconciled from the recorded one-way
         * delays (qr_recording_estimate_clocks), never the runtime's true offsets. An import's
         * times were reconciled when it was made. */
        qr_clock_estimate *est = calloc(x->hosts ? x->hosts : 1, sizeof *est);
        if (!est)
            return QR_ENOMEM;
        rc = qr_recording_estimate_clocks(rec, 0, est, NULL, errbuf);
        for (uint32_t h = 0; !rc && h < x->hosts; h++)
            x->off[h] = est[h].offset_ns;
        free(est);
        if (rc)
            return rc;
    }
    return index_packets(x, n_dirs); /* x->idx, x->dir_first, x->dir_count, x->rec_end_ns */
}

/* Replay arrivals: drops, queueing per hop of the selected flows (into *fq), blackholes. */
static int diag_arrivals(qri_diag_ctx *x, qr_diagnosis *out, const int32_t *sel_of, flow_q **fq,
                         char *errbuf)
{
    qr_blackhole_detector *bh = NULL;
    out->has_arrivals = 1;
    *fq = calloc(out->selected ? out->selected : 1, sizeof **fq);
    if (!*fq || qri_map_init(&x->drops))
        return QR_ENOMEM;
    x->have_drops = 1;
    int rc = qr_blackhole_detector_create(&bh, NULL, errbuf);
    if (!rc)
        rc = qri_diag_read_arrivals(x, out, sel_of, *fq, bh, errbuf);
    if (!rc && (rc = qr_blackhole_finish(bh, &x->episodes, &x->n_episodes)))
        qri_err(errbuf, rc, "blackhole detection");
    if (!rc) {
        out->blackhole_episodes = x->n_episodes;
        out->blackholes = calloc(x->n_episodes ? x->n_episodes : 1, sizeof *out->blackholes);
        if (!out->blackholes)
            rc = QR_ENOMEM;
    }
    if (!rc) {
        out->n_blackholes = x->n_episodes;
        for (size_t b = 0; b < x->n_episodes; b++)
            qri_diag_blackhole_row(&x->episodes[b], &out->blackholes[b]);
    }
    /* the episodes (x->episodes) belong to the detector: it lives as long as the context */
    x->bh = bh;
    return rc;
}

/* A selected flow's queueing per hop (q: its data's arrivals), and which of its losses (events
 * from first) fell in a blackhole episode. */
static int diag_replayed(qri_diag_ctx *x, uint32_t f, qr_diag_flow *fl, const flow_q *q,
                         size_t first)
{
    qr_diagnosis *out = x->out;
    uint64_t pk = fl->data_packets - fl->lost_data;
    fl->path_queue_ns = pk ? q->total_ns / (int64_t)pk : 0;
    for (uint32_t h = 0; h < q->n_hop; h++) {
        int64_t m = pk ? q->hop[h].sum_ns / (int64_t)pk : 0;
        if (m > fl->worst_queue_ns || h == 0) {
            fl->worst_queue_ns = m;
            fl->worst_sw = q->hop[h].sw;
            fl->worst_port = q->hop[h].port;
        }
    }
    size_t n_ev = out->n_events;
    for (size_t e = first; e < n_ev; e++) {
        const qr_diag_event *ev = &out->events[e];
        if (ev->kind != QR_EV_LOST)
            continue;
        const struct drop_at *da = qri_map_get(&x->drops, ev->packet, 0);
        for (size_t b = 0; da && b < x->n_episodes; b++) {
            const qr_blackhole *ep = &x->episodes[b];
            if (ep->sw != da->sw || ep->port != da->port || da->time_ns < ep->start_ns ||
                da->time_ns > ep->end_ns)
                continue;
            fl->blackhole_losses++;
            out->blackholes[b].selected_losses++;
            int rc = qri_diag_add_event(x, f, QR_EV_BLACKHOLE, da->time_ns, ev->packet, ev->tcp_seq,
                                        ep->n_culprits ? (int64_t)ep->culprits[0].port : -1, ep->sw,
                                        ep->port);
            if (rc)
                return rc;
            break;
        }
    }
    return QR_OK;
}

/* Pass 2: the evidence of the selected flows, sorted by time, and the causes of the tail. */
static int diag_evidence(qri_diag_ctx *x, qr_diagnosis *out, const int32_t *sel_of,
                         const flow_q *fq)
{
    size_t cap = 0;
    x->events = &out->events;
    x->n_events = &out->n_events;
    x->cap_events = &cap;
    for (uint32_t f = 0; f < out->n_flows; f++) {
        qr_diag_flow *fl = &out->flows[f];
        if (!fl->selected)
            continue;
        uint32_t first = (uint32_t)out->n_events;
        int rc = qri_diag_analyse_conn(x, f, fl, 0);
        if (!rc && fq)
            rc = diag_replayed(x, f, fl, &fq[sel_of[f]], first);
        if (rc)
            return rc;
        fl->first_event = first;
        fl->n_events = (uint32_t)(out->n_events - first);
        if (fl->n_events)
            qsort(out->events + first, fl->n_events, sizeof *out->events, event_cmp);
        if (fl->completed)
            out->class_selected[fl->size_class][fl->cause]++;
    }
    return QR_OK;
}

static void ctx_free(qri_diag_ctx *x)
{
    if (x->have_drops) {
        qri_map_foreach(&x->drops, free_drop, NULL);
        qri_map_free(&x->drops);
    }
    qr_blackhole_detector_destroy(x->bh);
    qr_topology_destroy(x->topo);
    free(x->dir_first);
    free(x->dir_count);
    free(x->idx);
    free(x->buf);
    for (uint32_t h = 0; x->busy && h < x->hosts; h++) {
        free(x->busy[h].start);
        free(x->busy[h].end);
        free(x->busy[h].before);
    }
    free(x->busy);
    free(x->off);
    for (int k = 0; k < 2; k++) {
        free(x->tp[k]);
        free(x->tp_rec[k]);
    }
}

/* The diagnosis of rec, or (ks) of the kernel records it is made from. */
static int diagnose(const qr_recording *rec, const qr_krec_set *ks, const qr_diag_opts *opts,
                    qr_diagnosis *out, char *errbuf)
{
    if (!rec || !out)
        return qri_err(errbuf, QR_EINVAL, "no recording");
    memset(out, 0, sizeof *out);
    if (opts)
        out->opts = *opts;
    else
        qr_diag_opts_default(&out->opts);
    qri_diag_ctx x = {0};
    x.krec = ks;
    int32_t *sel_of = NULL;
    flow_q *fq = NULL;
    double *sd = NULL;
    int rc = diag_setup(&x, rec, out, errbuf);
    size_t n_flows = out->n_flows;
    /* pass 1: every flow */
    for (uint32_t f = 0; !rc && f < n_flows; f++) {
        rc = qri_diag_analyse_conn(&x, f, &out->flows[f], 1);
        if (!rc && out->opts.progress && (f % 2000 == 1999)) {
            char line[96];
            snprintf(line, sizeof line, "diagnose: %u of %zu flows", f + 1, n_flows);
            out->opts.progress(out->opts.progress_ctx, line);
        }
    }
    /* the tail per size class */
    if (!rc) {
        sd = malloc((n_flows ? n_flows : 1) * sizeof *sd);
        sel_of = malloc((n_flows ? n_flows : 1) * sizeof *sel_of);
        if (!sd || !sel_of)
            rc = QR_ENOMEM;
    }
    if (!rc)
        select_tail(out, &out->opts, sd, sel_of);
    if (!rc && out->opts.arrivals)
        rc = diag_arrivals(&x, out, sel_of, &fq, errbuf);
    if (!rc)
        rc = diag_evidence(&x, out, sel_of, fq);
    if (!rc && out->opts.arrivals)
        rc = qri_diag_blackhole_series(out, errbuf);
    ctx_free(&x);
    free(sel_of);
    free(fq);
    free(sd);
    if (rc == QR_ENOMEM)
        qri_err(errbuf, rc, "out of memory");
    return rc;
}

int qr_diagnose(const qr_recording *rec, const qr_diag_opts *opts, qr_diagnosis *out, char *errbuf)
{
    return diagnose(rec, NULL, opts, out, errbuf);
}

int qr_diagnose_records(const qr_krec_set *ks, const qr_diag_opts *opts, qr_diagnosis *out,
                        char *errbuf)
{
    if (!ks)
        return qri_err(errbuf, QR_EINVAL, "no records");
    return diagnose(qr_krec_set_recording(ks), ks, opts, out, errbuf);
}

int64_t qr_diag_exchange_duration(const qr_diagnosis *d, const qr_diag_exchange *e)
{
    (void)d;
    int64_t p = 0;
    for (int k = 0; k < QR_TC_PARTS; k++)
        p += e->part_ns[k];
    return e->end_ns >= 0 ? e->end_ns - e->start_ns : p;
}

void qr_diagnosis_free(qr_diagnosis *d)
{
    if (!d)
        return;
    free(d->flows);
    free(d->events);
    free(d->exchanges);
    free(d->blackholes);
    free(d->series);
    memset(d, 0, sizeof *d);
}
