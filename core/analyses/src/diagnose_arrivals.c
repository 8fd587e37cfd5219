/* The diagnosis from a replay's arrival log: the selected flows' drops and queueing per hop,
 * blackhole episodes, and figure 9's series (diagnose.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_internal.h"
#include "qreplay/queuelog.h"
#include "qreplay/units.h"

int qri_diag_read_arrivals(qri_diag_ctx *x, qr_diagnosis *out, const int32_t *sel_of, flow_q *fq,
                           qr_blackhole_detector *bh, char *errbuf)
{
    qr_arrival_reader *r = NULL;
    int rc = qr_arrival_reader_open(&r, out->opts.arrivals, errbuf);
    if (rc)
        return rc;
    qr_arrival a;
    size_t n_flows = qr_flow_table_flows(x->ft);
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        out->arrivals++;
        if ((rc = qr_blackhole_observe(bh, &a, errbuf)))
            break;
        uint32_t dir = qr_packet_id_dir(a.packet);
        uint32_t f = qr_dir_flow(dir);
        if (f >= n_flows || sel_of[f] < 0)
            continue;
        if (a.decision != QR_ADMIT) {
            if (!qri_map_get(&x->drops, a.packet, 0)) {
                struct drop_at *da = malloc(sizeof *da);
                if (!da || qri_map_put(&x->drops, a.packet, 0, da)) {
                    free(da);
                    rc = QR_ENOMEM;
                    break;
                }
                *da = (struct drop_at){a.sw, a.port, a.time_ns};
            }
            continue;
        }
        if (qr_dir_is_ack(dir))
            continue;
        flow_q *q = &fq[sel_of[f]];
        int64_t ns = qri_wire_ns(a.queue_bytes, x->c->links.rate_bps);
        q->total_ns += ns;
        q->arrivals++;
        uint32_t h;
        for (h = 0; h < q->n_hop; h++)
            if (q->hop[h].sw == a.sw && q->hop[h].port == a.port)
                break;
        if (h == q->n_hop && q->n_hop < HOPS_MAX)
            q->hop[q->n_hop++] = (hop_sum){a.sw, a.port, 0};
        if (h < q->n_hop)
            q->hop[h].sum_ns += ns;
    }
    qr_arrival_reader_close(r);
    if (rc == QR_END)
        rc = QR_OK;
    if (rc)
        qri_err_prefix(errbuf, "%s", out->opts.arrivals);
    return rc;
}

void qri_diag_blackhole_row(const qr_blackhole *e, qr_row_diag_blackhole *r)
{
    memset(r, 0, sizeof *r);
    r->sw = e->sw;
    r->port = e->port;
    r->start_ns = e->start_ns;
    r->end_ns = e->end_ns;
    r->drops = e->drops;
    r->peak_ns = e->peak_ns;
    r->peak_bytes = e->peak_bytes;
    r->queue_bytes = e->queue_bytes;
    r->peak_threshold = e->peak_threshold;
    r->threshold = e->threshold;
    r->peak_total_bytes = e->peak_total_bytes;
    r->total_bytes = e->total_bytes;
    r->culprit_port = e->n_culprits ? (int32_t)e->culprits[0].port : -1;
    r->culprit_growth_bytes = e->n_culprits ? e->culprits[0].growth_bytes : 0;
    r->series = -1;
}

#define SERIES_PORTS 5 /* the queue and up to 4 culprits */

typedef struct {
    uint32_t sw, port;
    int64_t first_start, from, to;
    uint32_t ports[SERIES_PORTS], n_ports;
    uint64_t drops[SERIES_PORTS];
    size_t points;
} series_q;

static void series_add_port(series_q *q, uint32_t port)
{
    for (uint32_t i = 0; i < q->n_ports; i++)
        if (q->ports[i] == port)
            return;
    if (q->n_ports < SERIES_PORTS)
        q->ports[q->n_ports++] = port;
}

/* Which queues to draw (see qr_diagnosis.series_queues), then every arrival at them and their
 * culprits within their windows, from a second read of the arrival log. */
int qri_diag_blackhole_series(qr_diagnosis *out, char *errbuf)
{
    series_q sq[QR_DIAG_SERIES_MAX];
    uint32_t nq = 0;
    int any = 0;
    size_t most = 0;
    for (size_t b = 0; b < out->n_blackholes; b++) {
        any |= out->blackholes[b].selected_losses > 0;
        if (out->blackholes[b].drops > out->blackholes[most].drops)
            most = b;
    }
    for (size_t b = 0; b < out->n_blackholes; b++) {
        qr_row_diag_blackhole *e = &out->blackholes[b];
        if (any ? e->selected_losses == 0 : b != most)
            continue;
        uint32_t k;
        for (k = 0; k < nq; k++)
            if (sq[k].sw == e->sw && sq[k].port == e->port)
                break;
        if (k == nq) {
            if (nq == QR_DIAG_SERIES_MAX)
                continue;
            series_q *q = &sq[nq++];
            memset(q, 0, sizeof *q);
            q->sw = e->sw;
            q->port = e->port;
            q->first_start = e->start_ns;
            int64_t t0 = e->peak_ns < e->start_ns ? e->peak_ns : e->start_ns;
            q->from = t0 - QR_DIAG_SERIES_MARGIN_NS;
            q->to = e->end_ns + QR_DIAG_SERIES_MARGIN_NS;
            q->ports[q->n_ports++] = e->port;
        } else if (e->start_ns - sq[k].first_start > QR_DIAG_SERIES_SPAN_NS) {
            continue;
        } else if (e->end_ns + QR_DIAG_SERIES_MARGIN_NS > sq[k].to) {
            sq[k].to = e->end_ns + QR_DIAG_SERIES_MARGIN_NS;
        }
        if (e->culprit_port >= 0)
            series_add_port(&sq[k], (uint32_t)e->culprit_port);
    }
    out->series_queues = nq;
    if (!nq)
        return QR_OK;
    /* every episode of a drawn queue inside its window is drawn with it */
    for (size_t b = 0; b < out->n_blackholes; b++) {
        qr_row_diag_blackhole *e = &out->blackholes[b];
        for (uint32_t k = 0; k < nq; k++)
            if (sq[k].sw == e->sw && sq[k].port == e->port && e->start_ns >= sq[k].from &&
                e->end_ns <= sq[k].to)
                e->series = (int32_t)k;
    }
    qr_arrival_reader *r = NULL;
    int rc = qr_arrival_reader_open(&r, out->opts.arrivals, errbuf);
    if (rc)
        return rc;
    size_t cap = 0;
    qr_arrival a;
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        for (uint32_t k = 0; k < nq; k++) {
            series_q *q = &sq[k];
            if (a.sw != q->sw || a.time_ns < q->from || a.time_ns > q->to)
                continue;
            uint32_t i;
            for (i = 0; i < q->n_ports; i++)
                if (q->ports[i] == a.port)
                    break;
            if (i == q->n_ports)
                continue;
            int dropped = a.decision != QR_ADMIT;
            q->drops[i] += (uint64_t)dropped;
            if (qri_grow((void **)&out->series, &cap, out->n_series, sizeof *out->series, 1024)) {
                rc = QR_ENOMEM;
                break;
            }
            out->series[out->n_series++] = (qr_row_diag_bh_point){k,
                                                                  a.time_ns,
                                                                  a.sw,
                                                                  a.port,
                                                                  (uint8_t)(a.port != q->port),
                                                                  (uint8_t)dropped,
                                                                  a.bytes,
                                                                  a.queue_bytes,
                                                                  a.total_bytes,
                                                                  a.threshold,
                                                                  q->drops[i]};
        }
        if (rc)
            break;
    }
    qr_arrival_reader_close(r);
    if (rc == QR_END)
        rc = QR_OK;
    if (rc && rc != QR_ENOMEM)
        qri_err_prefix(errbuf, "%s (second read, for the blackhole series)", out->opts.arrivals);
    return rc;
}
