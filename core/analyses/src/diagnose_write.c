/* The diagnosis as an HDF5 result (diagnose.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_internal.h"
#include "qreplay/h5.h"

/* A flow's row. */
static void flow_row(const qr_diag_flow *x, qr_row_diag_flow *r)
{
    r->flow = x->flow;
    r->src = x->src;
    r->dst = x->dst;
    r->bytes = x->bytes;
    snprintf(r->size_class, sizeof r->size_class, "%s", qr_diag_class_name(x->size_class));
    r->completed = x->completed;
    r->tail = x->selected;
    r->start_ns = x->start_ns;
    r->fct_ns = x->fct_ns;
    r->ideal_ns = x->ideal_ns;
    r->slowdown = x->slowdown;
    int64_t *parts[QR_PARTS] = {&r->handshake_ns, &r->rto_ns,  &r->recovery_ns, &r->receiver_ns,
                                &r->delack_ns,    &r->app_ns,  &r->queueing_ns, &r->sending_ns,
                                &r->tlp_ns,       &r->loss_ns, &r->reply_ns};
    for (int p = 0; p < QR_PARTS; p++)
        *parts[p] = x->part_ns[p];
    snprintf(r->cause, sizeof r->cause, "%s", qr_diag_cause_name(x->cause));
    r->data_packets = x->data_packets;
    r->retransmissions = x->retransmissions;
    r->rtos = x->rtos;
    r->fast_retransmits = x->fast_retransmits;
    r->late_fast_retransmits = x->late_fast_retransmits;
    r->max_dupacks = x->max_dupacks;
    r->lost_data = x->lost_data;
    r->lost_acks = x->lost_acks;
    r->syn_sent = x->syn_sent;
    r->synack_sent = x->synack_sent;
    r->delayed_acks = x->delayed_acks;
    r->zero_windows = x->zero_windows;
    r->blackhole_losses = x->blackhole_losses;
    r->queue_mean_ns = x->queue_mean_ns;
    r->queue_max_ns = x->queue_max_ns;
    r->path_queue_ns = x->path_queue_ns;
    r->worst_switch = x->worst_sw;
    r->worst_port = x->worst_port;
    r->worst_queue_ns = x->worst_queue_ns;
    r->bytes_back = x->bytes_back;
    r->exchanges = x->exchanges;
    snprintf(r->end, sizeof r->end, "%s", qr_tc_end_name(x->end));
    snprintf(r->ideal_from, sizeof r->ideal_from, "%s",
             x->ideal_measured ? "measured" : "topology");
    r->min_rtt_ns = x->min_rtt_ns;
    r->path_rate_bps = x->path_rate_bps;
    r->tlps = x->tlps;
    r->racks = x->racks;
    r->undos = x->undos;
    r->unknown_retx = x->unknown_retx;
    r->not_seen = x->not_seen;
    r->reordered = x->reordered;
    r->spurious = x->spurious;
    r->dupacks = x->dupacks;
    r->dupack_run = x->dupack_run;
}

/* An exchange's row. */
static void exchange_row(const qr_diagnosis *d, const qr_diag_exchange *x, qr_row_diag_exchange *r)
{
    r->flow = x->flow;
    r->exchange = x->index;
    r->dir = x->dir;
    r->src = x->src;
    r->dst = x->dst;
    r->bytes = x->bytes;
    r->start_ns = x->start_ns;
    r->end_ns = x->end_ns;
    r->duration_ns = qr_diag_exchange_duration(d, x);
    r->idle_before_ns = x->idle_before_ns;
    r->ideal_ns = x->ideal_ns;
    r->slowdown = x->slowdown;
    snprintf(r->status, sizeof r->status, "%s", qr_tc_status_name(x->status));
    snprintf(r->vantage, sizeof r->vantage, "%s",
             x->vantage == QR_TC_AT_SENDER ? "sender" : "receiver");
    snprintf(r->cause, sizeof r->cause, "%s", qr_diag_cause_name(x->cause));
    int64_t *parts[QR_TC_PARTS] = {&r->transfer_ns, &r->queueing_ns, &r->rto_ns, &r->tlp_ns,
                                   &r->recovery_ns, &r->receiver_ns, &r->app_ns, &r->loss_ns,
                                   &r->delack_ns,   &r->reply_ns};
    for (int p = 0; p < QR_TC_PARTS; p++)
        *parts[p] = x->part_ns[p];
    r->packets = x->packets;
    r->retransmissions = x->retransmissions;
    r->rtos = x->trig[QR_TC_RTO];
    r->after_rto = x->trig[QR_TC_AFTER_RTO];
    r->tlps = x->trig[QR_TC_TLP];
    r->fast = x->trig[QR_TC_FAST];
    r->rack = x->trig[QR_TC_RACK];
    r->recovery = x->trig[QR_TC_RECOVERY];
    r->unknown_retx = x->trig[QR_TC_UNKNOWN_TRIGGER];
    r->lost = x->lost;
    r->not_seen = x->not_seen;
    r->reordered = x->reordered;
    r->spurious = x->spurious;
}

/* An event's row. */
static void event_row(const qr_diag_event *x, qr_row_diag_event *r)
{
    r->flow = x->flow;
    snprintf(r->kind, sizeof r->kind, "%s", qr_diag_event_name(x->kind));
    r->time_ns = x->time_ns;
    r->packet = x->packet;
    r->tcp_seq = x->tcp_seq;
    r->value = x->value;
    if (x->kind == QR_EV_RTO)
        snprintf(r->detail, sizeof r->detail, "%s", qr_diag_cause_name((qr_diag_cause)x->value));
    r->sw = x->sw;
    r->port = x->port;
}

/* The causes of each size class's tail, one row per (class, cause) seen; returns how many. */
static size_t cause_rows(const qr_diagnosis *d, qr_row_diag_cause *cr)
{
    size_t nc = 0;
    for (uint32_t k = 0; k < QR_DIAG_CLASSES; k++) {
        uint32_t tail = 0;
        for (int c = 0; c < QR_CAUSES; c++)
            tail += d->class_selected[k][c];
        for (int c = 0; c < QR_CAUSES; c++) {
            if (!d->class_selected[k][c])
                continue;
            qr_row_diag_cause *r = &cr[nc++];
            memset(r, 0, sizeof *r);
            snprintf(r->size_class, sizeof r->size_class, "%s", qr_diag_class_name(k));
            snprintf(r->cause, sizeof r->cause, "%s", qr_diag_cause_name((qr_diag_cause)c));
            r->flows = d->class_selected[k][c];
            r->tail_flows = tail;
            r->tail_slowdown = d->class_threshold[k];
        }
    }
    return nc;
}

int qr_diagnosis_write(const char *path, const qr_scenario *s, const char *recording_id,
                       const qr_diagnosis *d, char *errbuf)
{
    qr_row_diag_flow *fr = calloc(d->n_flows ? d->n_flows : 1, sizeof *fr);
    qr_row_diag_event *er = calloc(d->n_events ? d->n_events : 1, sizeof *er);
    qr_row_diag_exchange *xr = calloc(d->n_exchanges ? d->n_exchanges : 1, sizeof *xr);
    qr_row_diag_cause cr[QR_DIAG_CLASSES * QR_CAUSES];
    size_t nc = 0;
    qr_h5 *f = NULL;
    int rc = QR_OK;
    if (!fr || !er || !xr) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < d->n_flows; i++)
        flow_row(&d->flows[i], &fr[i]);
    for (size_t i = 0; i < d->n_exchanges; i++)
        exchange_row(d, &d->exchanges[i], &xr[i]);
    for (size_t i = 0; i < d->n_events; i++)
        event_row(&d->events[i], &er[i]);
    nc = cause_rows(d, cr);
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay diagnosis", recording_id, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "tail", d->opts.tail, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "dupthresh", d->opts.dupthresh, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "ack_clock_ns", d->opts.ack_clock_ns, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "delack_ns", d->opts.delack_ns, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "arrivals", d->opts.arrivals ? d->opts.arrivals : "", errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "blackhole_episodes", d->blackhole_episodes, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "incomplete", d->incomplete, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/flows", &qr_schema_diag_flow, fr, d->n_flows, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "imported", (uint64_t)d->imported, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "network_known", (uint64_t)d->network_known, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "rto_min_ns", d->opts.rto_min_ns, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "idle_ns", d->opts.idle_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "path_rate_bps", d->opts.path_rate_bps, errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/exchanges", &qr_schema_diag_exchange, xr, d->n_exchanges, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/evidence", &qr_schema_diag_event, er, d->n_events, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/causes", &qr_schema_diag_cause, cr, nc, errbuf));
    if (d->has_arrivals) {
        QRI_TRY(qr_h5_write_rows(f, "/blackholes", &qr_schema_diag_blackhole, d->blackholes,
                                 d->n_blackholes, errbuf));
        QRI_TRY(qr_h5_write_rows(f, "/blackhole_series", &qr_schema_diag_bh_point, d->series,
                                 d->n_series, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/blackhole_series", "queues", d->series_queues, errbuf));
        QRI_TRY(
            qr_h5_attr_i64(f, "/blackhole_series", "margin_ns", QR_DIAG_SERIES_MARGIN_NS, errbuf));
    }
    rc = qr_h5_commit(f, errbuf);
    f = NULL;
fail:
    if (f)
        qr_h5_abort(f);
    free(fr);
    free(er);
    free(xr);
    return rc;
}
