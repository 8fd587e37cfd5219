/* What-if analysis: the measurement of one run from its arrival log (whatif.h). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/metrics.h"
#include "qreplay/queuelog.h"
#include "qreplay/switchport.h"
#include "qreplay/topology.h"
#include "qreplay/whatif.h"

struct pend {
    int64_t end_ns;
    uint32_t bytes;
};

struct wq {
    int used;
    uint8_t layer, to_host;
    uint32_t sw, port;
    int64_t free_ns, last_ns, thr;
    uint64_t qbytes;
    struct pend *ring;
    size_t head, n, cap;
    int64_t t50, t90;
    uint64_t arrivals, drops, marks, qmax;
    qr_hist *h;
};

struct flowacc {
    uint8_t seen, lossy;
    int64_t first_new_drop; /* -1: none */
    long double delay_sum;
    uint64_t delivered;
};

struct measure {
    const qr_config *c;
    qr_topology *topo;
    uint32_t n_sw, max_ports;
    struct wq *qs;
    struct flowacc *flows;
    size_t n_flows, cap_flows;
    qri_map inflight; /* packet -> hop delays so far */
    qr_hist *hq[QR_WHATIF_LAYERS + 1], *hsw[QR_WHATIF_LAYERS + 1], *hhop[QR_WHATIF_LAYERS + 1];
    qr_hist *hdelay, *hflow;
    int64_t first_ns, last_ns, last_end_ns; /* first and last arrival, last departure */
    uint64_t mismatches;
};

static int layer_of(qr_node_kind k)
{
    return k == QR_NODE_AGG ? 1 : k == QR_NODE_CORE ? 2 : 0;
}

static void integrate(struct wq *q, int64_t to)
{
    if (to <= q->last_ns)
        return;
    int64_t dt = to - q->last_ns;
    if (q->thr > 0 && q->qbytes > 0) {
        if ((double)q->qbytes >= 0.5 * (double)q->thr)
            q->t50 += dt;
        if ((double)q->qbytes >= 0.9 * (double)q->thr)
            q->t90 += dt;
    }
    q->last_ns = to;
}

/* Departures up to and including t. */
static void advance(struct wq *q, int64_t t)
{
    while (q->n && q->ring[q->head].end_ns <= t) {
        struct pend *p = &q->ring[q->head];
        integrate(q, p->end_ns);
        q->qbytes -= p->bytes;
        q->head = (q->head + 1) % q->cap;
        q->n--;
    }
    integrate(q, t);
}

static int push(struct wq *q, int64_t end, uint32_t bytes)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        struct pend *r = malloc(cap * sizeof *r);
        if (!r)
            return QR_ENOMEM;
        for (size_t i = 0; i < q->n; i++)
            r[i] = q->ring[(q->head + i) % q->cap];
        free(q->ring);
        q->ring = r;
        q->head = 0;
        q->cap = cap;
    }
    q->ring[(q->head + q->n) % q->cap] = (struct pend){end, bytes};
    q->n++;
    q->qbytes += bytes;
    return QR_OK;
}

static struct flowacc *flow_of(struct measure *m, uint64_t packet)
{
    size_t f = qr_dir_flow(qr_packet_id_dir(packet));
    if (f >= m->n_flows) {
        size_t cap = m->cap_flows ? m->cap_flows : 1024;
        while (cap <= f)
            cap *= 2;
        if (cap != m->cap_flows) {
            struct flowacc *n = realloc(m->flows, cap * sizeof *n);
            if (!n)
                return NULL;
            m->flows = n;
            m->cap_flows = cap;
        }
        for (size_t i = m->n_flows; i <= f; i++)
            m->flows[i] = (struct flowacc){0, 0, -1, 0, 0};
        m->n_flows = f + 1;
    }
    return &m->flows[f];
}

static void measure_free(struct measure *m)
{
    if (m->qs)
        for (size_t i = 0; i < (size_t)m->n_sw * m->max_ports; i++) {
            free(m->qs[i].ring);
            qr_hist_destroy(m->qs[i].h);
        }
    free(m->qs);
    free(m->flows);
    qri_map_free(&m->inflight);
    for (int l = 0; l <= QR_WHATIF_LAYERS; l++) {
        qr_hist_destroy(m->hq[l]);
        qr_hist_destroy(m->hsw[l]);
        qr_hist_destroy(m->hhop[l]);
    }
    qr_hist_destroy(m->hdelay);
    qr_hist_destroy(m->hflow);
    qr_topology_destroy(m->topo);
}

static int hist_add2(qr_hist *a, qr_hist *b, uint64_t v)
{
    return qr_hist_add(a, v) || qr_hist_add(b, v) ? QR_ENOMEM : QR_OK;
}

static int on_arrival(struct measure *m, const qr_arrival *a, qr_whatif_row *row,
                      const qr_recording *rec)
{
    struct wq *q = &m->qs[(size_t)a->sw * m->max_ports + a->port];
    if (!q->used) {
        q->used = 1;
        if (qr_hist_create(&q->h))
            return QR_ENOMEM;
        q->last_ns = a->time_ns;
    }
    advance(q, a->time_ns);
    q->thr = a->threshold;
    if (q->qbytes != a->queue_bytes)
        m->mismatches++;
    int L = q->layer;
    row->arrivals++;
    q->arrivals++;
    if (a->queue_bytes > q->qmax)
        q->qmax = a->queue_bytes;
    if (qr_hist_add(q->h, a->queue_bytes) || hist_add2(m->hq[L], m->hq[3], a->queue_bytes) ||
        hist_add2(m->hsw[L], m->hsw[3], a->total_bytes))
        return QR_ENOMEM;
    struct flowacc *fa = flow_of(m, a->packet);
    if (!fa)
        return QR_ENOMEM;
    fa->seen = 1;
    if (a->decision != QR_ADMIT) {
        row->drops++;
        row->drop_bytes += a->bytes;
        row->layer_drops[L]++;
        row->tagged_drops += a->decision == QR_DROP_TAGGED;
        q->drops++;
        fa->lossy = 1;
        qri_map_remove(&m->inflight, a->packet, 0);
        if (rec && !qr_recording_detected(rec, a->packet)) {
            row->new_drops++;
            if (fa->first_new_drop < 0 || a->time_ns < fa->first_new_drop)
                fa->first_new_drop = a->time_ns;
        }
        return QR_OK;
    }
    row->admitted++;
    if (qr_ecn_mark(a->queue_bytes, a->bytes, m->c->buffer.ecn_threshold_bytes)) {
        row->ecn_marks++;
        row->layer_ecn_marks[L]++;
        q->marks++;
    }
    int64_t start = a->time_ns > q->free_ns ? a->time_ns : q->free_ns;
    int64_t hop = start - a->time_ns;
    int64_t end =
        start + qr_link_tx_ns((uint64_t)a->bytes + QR_LINK_OVERHEAD_BYTES, m->c->links.rate_bps);
    q->free_ns = end;
    if (end > m->last_end_ns)
        m->last_end_ns = end;
    if (push(q, end, a->bytes) || hist_add2(m->hhop[L], m->hhop[3], (uint64_t)hop))
        return QR_ENOMEM;
    /* the packet's queueing delay over its earlier hops, + 1 (0: none yet) */
    void **slot = qri_map_slot(&m->inflight, a->packet, 0);
    uintptr_t sofar = slot ? (uintptr_t)*slot : 0;
    if (q->to_host) {
        if (slot)
            qri_map_remove(&m->inflight, a->packet, 0);
        int64_t total = (int64_t)(sofar ? sofar - 1 : 0) + hop;
        row->delivered++;
        fa->delay_sum += total;
        fa->delivered++;
        if (qr_hist_add(m->hdelay, (uint64_t)total))
            return QR_ENOMEM;
    } else if (slot) {
        *slot = (void *)(sofar + (uintptr_t)hop);
    } else if (qri_map_put(&m->inflight, a->packet, 0, (void *)(uintptr_t)(hop + 1))) {
        return QR_ENOMEM;
    }
    return QR_OK;
}

static uint64_t hist_max(const qr_hist *h)
{
    qr_summary s;
    qr_hist_summary(h, 1.0, &s);
    return (uint64_t)s.max;
}

static int finish(struct measure *m, const qr_recording *rec, const qr_plan *plan, uint32_t point,
                  qr_whatif_kind kind, qr_whatif_result *out)
{
    qr_whatif_row *row = &out->row;
    int64_t last = m->last_end_ns > m->last_ns ? m->last_end_ns : m->last_ns;
    int64_t span = last > m->first_ns ? last - m->first_ns : 0;
    row->span_ns = span;
    int64_t t50[QR_WHATIF_LAYERS + 1] = {0}, t90[QR_WHATIF_LAYERS + 1] = {0};
    uint64_t ports[QR_WHATIF_LAYERS + 1] = {0};
    size_t nq = 0;
    for (size_t i = 0; i < (size_t)m->n_sw * m->max_ports; i++) {
        struct wq *q = &m->qs[i];
        if (q->port == UINT32_MAX)
            continue;
        ports[q->layer]++;
        ports[3]++;
        nq += q->used;
        if (!q->used)
            continue;
        advance(q, INT64_MAX - 1);
        t50[q->layer] += q->t50;
        t90[q->layer] += q->t90;
        t50[3] += q->t50;
        t90[3] += q->t90;
    }
    for (int l = 0; l <= QR_WHATIF_LAYERS; l++) {
        double denom = (double)ports[l] * (double)span;
        row->above50[l] = denom > 0 ? (double)t50[l] / denom : 0;
        row->above90[l] = denom > 0 ? (double)t90[l] / denom : 0;
        row->q_p50_bytes[l] = (uint64_t)llround(qr_hist_quantile(m->hq[l], 0.5));
        row->q_p99_bytes[l] = (uint64_t)llround(qr_hist_quantile(m->hq[l], 0.99));
        row->q_max_bytes[l] = hist_max(m->hq[l]);
        row->sw_p50_bytes[l] = (uint64_t)llround(qr_hist_quantile(m->hsw[l], 0.5));
        row->sw_p99_bytes[l] = (uint64_t)llround(qr_hist_quantile(m->hsw[l], 0.99));
        row->sw_max_bytes[l] = hist_max(m->hsw[l]);
        row->hop_delay_p99_ns[l] = llround(qr_hist_quantile(m->hhop[l], 0.99));
    }
    row->delay_p50_ns = llround(qr_hist_quantile(m->hdelay, 0.5));
    row->delay_p99_ns = llround(qr_hist_quantile(m->hdelay, 0.99));
    row->delay_max_ns = (int64_t)hist_max(m->hdelay);
    for (size_t f = 0; f < m->n_flows; f++) {
        struct flowacc *fa = &m->flows[f];
        row->flows += fa->seen;
        row->flows_lossy += fa->lossy;
        row->flows_new_drop += fa->first_new_drop >= 0;
        if (fa->delivered &&
            qr_hist_add(m->hflow, (uint64_t)llroundl(fa->delay_sum / fa->delivered)))
            return QR_ENOMEM;
    }
    row->lossy_share = row->flows ? (double)row->flows_lossy / (double)row->flows : 0;
    row->flow_delay_p50_ns = llround(qr_hist_quantile(m->hflow, 0.5));
    row->flow_delay_p99_ns = llround(qr_hist_quantile(m->hflow, 0.99));
    if (rec && plan && row->flows_new_drop)
        for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
            size_t n;
            const qr_rec_packet *pk = qr_recording_packets(rec, h, &n);
            const int64_t *inject = qr_plan_times(plan, h, &n);
            for (size_t i = 0; i < n; i++) {
                size_t f = qr_dir_flow(pk[i].dir);
                if (f < m->n_flows && m->flows[f].first_new_drop >= 0 &&
                    inject[i] > m->flows[f].first_new_drop)
                    row->sent_after_new_drop++;
            }
        }
    out->queues = calloc(nq ? nq : 1, sizeof *out->queues);
    out->quantiles = calloc(QR_WHATIF_QUANTILES * (QR_WHATIF_LAYERS + 1), sizeof *out->quantiles);
    if (!out->queues || !out->quantiles)
        return QR_ENOMEM;
    for (size_t i = 0; i < (size_t)m->n_sw * m->max_ports; i++) {
        struct wq *q = &m->qs[i];
        if (!q->used)
            continue;
        qr_whatif_queue_row *r = &out->queues[out->n_queues++];
        r->point = point;
        r->kind = (uint8_t)kind;
        r->sw = q->sw;
        r->port = q->port;
        r->layer = q->layer;
        r->arrivals = q->arrivals;
        r->drops = q->drops;
        r->ecn_marks = q->marks;
        r->q_p99_bytes = (uint64_t)llround(qr_hist_quantile(q->h, 0.99));
        r->q_max_bytes = q->qmax;
        r->above50 = span > 0 ? (double)q->t50 / (double)span : 0;
        r->above90 = span > 0 ? (double)q->t90 / (double)span : 0;
    }
    for (int l = 0; l <= QR_WHATIF_LAYERS; l++)
        for (int i = 0; i < QR_WHATIF_QUANTILES; i++) {
            qr_whatif_quantile_row *r = &out->quantiles[out->n_quantiles++];
            double p = (double)i / (QR_WHATIF_QUANTILES - 1);
            r->point = point;
            r->kind = (uint8_t)kind;
            r->layer = (uint8_t)l;
            r->p = p;
            r->queue_bytes = (uint64_t)llround(qr_hist_quantile(m->hq[l], p));
            r->switch_bytes = (uint64_t)llround(qr_hist_quantile(m->hsw[l], p));
            r->delay_ns = llround(qr_hist_quantile(m->hdelay, p));
        }
    return QR_OK;
}

int qr_whatif_measure(const char *arrivals, const qr_scenario *s, const qr_recording *rec,
                      const qr_plan *plan, uint32_t point, qr_whatif_kind kind,
                      qr_whatif_result *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    out->row.point = point;
    out->row.kind = (uint8_t)kind;
    struct measure m;
    memset(&m, 0, sizeof m);
    m.c = qr_scenario_config(s);
    int rc = qr_topology_of_config(&m.topo, m.c);
    if (rc)
        return qri_err(errbuf, rc, "%s: the scenario's topology is not valid", arrivals);
    m.n_sw = qr_topology_switches(m.topo);
    for (uint32_t sw = 0; sw < m.n_sw; sw++)
        if (qr_topology_ports(m.topo, sw) > m.max_ports)
            m.max_ports = qr_topology_ports(m.topo, sw);
    m.qs = calloc((size_t)m.n_sw * m.max_ports, sizeof *m.qs);
    rc = m.qs && !qri_map_init(&m.inflight) && !qr_hist_create(&m.hdelay) &&
                 !qr_hist_create(&m.hflow)
             ? QR_OK
             : QR_ENOMEM;
    for (int l = 0; !rc && l <= QR_WHATIF_LAYERS; l++)
        if (qr_hist_create(&m.hq[l]) || qr_hist_create(&m.hsw[l]) || qr_hist_create(&m.hhop[l]))
            rc = QR_ENOMEM;
    for (uint32_t sw = 0; !rc && sw < m.n_sw; sw++)
        for (uint32_t p = 0; p < m.max_ports; p++) {
            struct wq *q = &m.qs[(size_t)sw * m.max_ports + p];
            q->sw = sw;
            q->port = p < qr_topology_ports(m.topo, sw) ? p : UINT32_MAX;
            q->layer = (uint8_t)layer_of(qr_topology_switch_kind(m.topo, sw));
            qr_node_kind pk;
            uint32_t peer, pp;
            q->to_host = q->port != UINT32_MAX &&
                         !qr_topology_link(m.topo, sw, p, &pk, &peer, &pp) && pk == QR_NODE_HOST;
        }
    qr_blackhole_detector *bh = NULL;
    qr_arrival_reader *r = NULL;
    if (!rc)
        rc = qr_blackhole_detector_create(&bh, NULL, errbuf);
    if (!rc)
        rc = qr_arrival_reader_open(&r, arrivals, errbuf);
    qr_arrival a;
    uint64_t n = 0;
    int64_t prev = INT64_MIN;
    while (!rc && (rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        n++;
        if (a.sw >= m.n_sw || a.port >= qr_topology_ports(m.topo, a.sw)) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: arrival %" PRIu64 ": switch %u port %u is not in the scenario's "
                         "network",
                         arrivals, n, a.sw, a.port);
            break;
        }
        if (a.time_ns < prev) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: arrival %" PRIu64 ": time %" PRId64 " ns is before the previous "
                         "arrival's",
                         arrivals, n, a.time_ns);
            break;
        }
        if (n == 1)
            m.first_ns = a.time_ns;
        prev = m.last_ns = a.time_ns;
        rc = on_arrival(&m, &a, &out->row, rec);
        if (!rc)
            rc = qr_blackhole_observe(bh, &a, errbuf);
    }
    if (rc == QR_END)
        rc = QR_OK;
    qr_arrival_reader_close(r);
    if (!rc)
        rc = finish(&m, rec, plan, point, kind, out);
    const qr_blackhole *eps = NULL;
    size_t n_eps = 0;
    if (!rc)
        rc = qr_blackhole_finish(bh, &eps, &n_eps);
    if (!rc && n_eps) {
        out->blackholes = calloc(n_eps, sizeof *out->blackholes);
        if (!out->blackholes)
            rc = QR_ENOMEM;
        for (size_t i = 0; !rc && i < n_eps; i++) {
            out->blackholes[i].point = point;
            out->blackholes[i].kind = (uint8_t)kind;
            out->blackholes[i].ep = eps[i];
            out->row.blackhole_drops += eps[i].drops;
        }
        out->n_blackholes = rc ? 0 : n_eps;
        out->row.blackholes = out->n_blackholes;
    }
    out->row.model_mismatches = m.mismatches;
    qr_blackhole_detector_destroy(bh);
    measure_free(&m);
    if (rc) {
        if (rc == QR_ENOMEM)
            qri_err(errbuf, rc, "%s: out of memory", arrivals);
        qr_whatif_result_free(out);
    }
    return rc;
}

void qr_whatif_result_free(qr_whatif_result *r)
{
    if (!r)
        return;
    free(r->queues);
    free(r->quantiles);
    free(r->blackholes);
    memset(r, 0, sizeof *r);
}

/* ---- result tables ---- */
