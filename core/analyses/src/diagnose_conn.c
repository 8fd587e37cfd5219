/* The diagnosis of one connection: its row and exchanges from the connection model (tcpconn.h),
 * with the ideal on an empty network and the one-way queueing of its data (diagnose.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_internal.h"
#include "qreplay/buffer.h"
#include "qreplay/metrics.h"
#include "qreplay/packet.h"
#include "qreplay/units.h"

static int busy_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Host h's sending intervals: each recorded packet occupies its link for its wire time. */
static int host_busy_make(qri_diag_ctx *x, uint32_t h)
{
    struct host_busy *b = &x->busy[h];
    size_t n;
    const qr_rec_packet *pk = qr_recording_packets(x->rec, h, &n);
    int64_t off = x->off[h];
    int64_t *iv = malloc((n ? n : 1) * 2 * sizeof *iv);
    b->start = malloc((n ? n : 1) * sizeof *b->start);
    b->end = malloc((n ? n : 1) * sizeof *b->end);
    b->before = malloc((n ? n : 1) * sizeof *b->before);
    if (!iv || !b->start || !b->end || !b->before) {
        free(iv);
        return QR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        iv[2 * i] = pk[i].pk.time_ns - off;
        iv[2 * i + 1] =
            iv[2 * i] + qri_wire_ns(pk[i].pk.ip_len + QR_LINK_OVERHEAD_BYTES, x->c->links.rate_bps);
    }
    qsort(iv, n, 2 * sizeof *iv, busy_cmp);
    size_t k = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && iv[2 * i] <= b->end[k - 1]) {
            if (iv[2 * i + 1] > b->end[k - 1]) {
                sum += iv[2 * i + 1] - b->end[k - 1];
                b->end[k - 1] = iv[2 * i + 1];
            }
            continue;
        }
        b->start[k] = iv[2 * i];
        b->end[k] = iv[2 * i + 1];
        b->before[k] = sum;
        sum += b->end[k] - b->start[k];
        k++;
    }
    free(iv);
    b->n = k;
    b->made = 1;
    return QR_OK;
}

/* Busy ns of host h's link from the start of time to t. */
static int64_t host_busy_until(const struct host_busy *b, int64_t t)
{
    size_t lo = 0, hi = b->n; /* first interval starting at or after t */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->start[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    size_t i = lo - 1;
    return b->before[i] + (t < b->end[i] ? t : b->end[i]) - b->start[i];
}

/* The packets of direction dir into x->buf (from off), with true times. */
static int load_dir(qri_diag_ctx *x, uint32_t dir, size_t off, size_t *n)
{
    uint32_t cnt = x->dir_count[dir];
    if (qri_reserve((void **)&x->buf, &x->buf_cap, off + cnt + 1, sizeof *x->buf, 256))
        return QR_ENOMEM;
    uint32_t src = qr_flow_table_dir_src(x->ft, dir), dst = qr_flow_table_dir_dst(x->ft, dir);
    int64_t off_src = x->off[src];
    int64_t off_dst = x->off[dst];
    for (uint32_t i = 0; i < cnt; i++) {
        dpkt *d = &x->buf[off + i];
        d->pk = x->idx[x->dir_first[dir] + i];
        d->tx = d->pk->pk.time_ns - off_src;
        int64_t t;
        d->rx = qr_recording_received(x->rec, qr_packet_id(dir, d->pk->seq), &t) == 0 ? t - off_dst
                                                                                      : -1;
    }
    *n = cnt;
    return QR_OK;
}

int qri_diag_add_event(qri_diag_ctx *x, uint32_t flow, qr_diag_event_kind kind, int64_t t,
                       uint64_t packet, uint64_t tcp_seq, int64_t value, uint32_t sw, uint32_t port)
{
    if (!x->events)
        return QR_OK;
    if (qri_grow((void **)x->events, x->cap_events, *x->n_events, sizeof **x->events, 64))
        return QR_ENOMEM;
    (*x->events)[(*x->n_events)++] =
        (qr_diag_event){flow, kind, t, packet, tcp_seq, value, sw, port};
    return QR_OK;
}

/* *a += b, held at INT64_MAX (a hostile capture's times reach 2^62; their sums may not fit). */
static void sat_add(int64_t *a, int64_t b)
{
    *a = b > 0 && *a > INT64_MAX - b ? INT64_MAX : *a + b;
}

/* The packets of flow f's direction k (0: data, 1: ACKs) as the connection model takes them:
 * what its receiver alone saw is its record (received packets, in arrival order). */
static int conn_dir(qri_diag_ctx *x, uint32_t dir, const dpkt *d, size_t n, int k, qr_tc_dir *out)
{
    if (qri_reserve((void **)&x->tp[k], &x->tp_cap[k], n ? n : 1, sizeof *x->tp[k], 64))
        return QR_ENOMEM;
    const qr_rec_packet **v = realloc(x->tp_rec[k], x->tp_cap[k] * sizeof *v);
    if (!v)
        return QR_ENOMEM;
    x->tp_rec[k] = v;
    unsigned seen = qr_recording_seen(x->rec, dir);
    int receiver_only = !(seen & QR_TC_AT_SENDER);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (receiver_only && d[i].rx < 0)
            continue; /* made up from an IP ID gap, not observed */
        uint8_t before =
            receiver_only && qr_recording_late(x->rec, qr_packet_id(d[i].pk->dir, d[i].pk->seq));
        x->tp[k][m] = (qr_tc_pkt){&d[i].pk->pk, d[i].tx, d[i].rx, before};
        x->tp_rec[k][m] = d[i].pk;
        m++;
    }
    *out = (qr_tc_dir){x->tp[k], m, seen};
    return QR_OK;
}

/* The cause a timer's wait is named by, from why it fired. */
static qr_diag_cause why_cause(int why)
{
    switch (why) {
    case QR_TC_WHY_TAIL: return QR_CAUSE_TAIL_DROP;
    case QR_TC_WHY_FEW_DUPACKS: return QR_CAUSE_RTO_FEW_DUPACKS;
    case QR_TC_WHY_ACK_LOST: return QR_CAUSE_ACK_DROP;
    case QR_TC_WHY_ACK_HELD: return QR_CAUSE_DELACK;
    case QR_TC_WHY_RETX_LOST: return QR_CAUSE_LOST_RETX;
    default: return QR_CAUSE_RTO;
    }
}

/* What slowed exchange e (of duration dur, its reply part left out) most: the cause that cost it
 * the most time, if that was at least 5% of it. A timer's wait, and the go-back-N recovery after
 * it, count to why the timer fired; the rest of a recovery to what started it. Queueing counts only
 * from one full packet's time at the path's rate (path_bps; 0: unknown): less than that is no
 * packet waiting for another, but the hosts' and the capture's own jitter (a 70-byte request 2 us
 * late is not congestion). */
static qr_diag_cause exchange_cause(const qr_tc_exchange *e, int64_t dur, uint64_t path_bps)
{
    /* what took it beyond its ideal: nothing, if it stayed within 5% of it */
    if (e->ideal_ns > 0 && e->end_ns >= 0 && dur - e->ideal_ns < dur / 20)
        return QR_CAUSE_NONE;
    const int64_t *part = e->part_ns;
    int64_t cause_ns[QR_CAUSES] = {0};
    int64_t after_rto = 0, rto_known = 0;
    for (int w = 0; w < QR_TC_WHYS; w++) {
        after_rto += e->after_rto_ns[w];
        if (w != QR_TC_WHY_UNKNOWN)
            rto_known += e->why_ns[w];
        if (w != QR_TC_WHY_ACK_HELD) /* its wait is in the delack part */
            cause_ns[why_cause(w)] += e->why_ns[w];
        cause_ns[why_cause(w)] += e->after_rto_ns[w];
    }
    qr_diag_cause recovery = e->late_fast > 0                            ? QR_CAUSE_LATE_FR
                             : e->trig[QR_TC_RACK] > e->trig[QR_TC_FAST] ? QR_CAUSE_RACK
                                                                         : QR_CAUSE_FAST_RETRANSMIT;
    cause_ns[recovery] += part[QR_TC_PART_RECOVERY] - after_rto;
    cause_ns[QR_CAUSE_CONGESTION] += part[QR_TC_PART_QUEUEING];
    cause_ns[QR_CAUSE_TLP] += part[QR_TC_PART_TLP];
    cause_ns[QR_CAUSE_RECEIVER] += part[QR_TC_PART_RWND];
    cause_ns[QR_CAUSE_APP] += part[QR_TC_PART_APP];
    cause_ns[QR_CAUSE_LOSS] += part[QR_TC_PART_LOSS];
    cause_ns[QR_CAUSE_DELACK] += part[QR_TC_PART_DELACK];
    if (e->lost == 0 && e->spurious > 0 && rto_known == 0) {
        /* every resend was spurious (the data had arrived) and nothing shows why: the sender
         * waited for late ACKs, not for a loss to be repaired */
        static const qr_diag_cause repair[] = {QR_CAUSE_RTO,     QR_CAUSE_TLP,
                                               QR_CAUSE_RACK,    QR_CAUSE_FAST_RETRANSMIT,
                                               QR_CAUSE_LATE_FR, QR_CAUSE_LOSS};
        for (size_t i = 0; i < sizeof repair / sizeof repair[0]; i++) {
            cause_ns[QR_CAUSE_CONGESTION] += cause_ns[repair[i]];
            cause_ns[repair[i]] = 0;
        }
    }
    int64_t queue_floor = path_bps ? qri_wire_ns(QR_MTU_BYTES, path_bps) : 0;
    int best = -1;
    for (int k = 0; k < QR_CAUSES; k++)
        if (cause_ns[k] > dur / 20 && (best < 0 || cause_ns[k] > cause_ns[best]) &&
            (k != QR_CAUSE_CONGESTION || cause_ns[k] >= queue_floor))
            best = k;
    if (best < 0)
        return e->ideal_ns > 0 ? QR_CAUSE_NONE : QR_CAUSE_UNKNOWN;
    return (qr_diag_cause)best;
}

static int conn_events(qri_diag_ctx *x, uint32_t f, const qr_tc_conn *c, const qr_tc_dir *dirs)
{
    static const qr_diag_event_kind of_trig[QR_TC_TRIGGERS] = {
        [QR_TC_RTO] = QR_EV_RTO,   [QR_TC_AFTER_RTO] = QR_EV_RECOVERY,
        [QR_TC_TLP] = QR_EV_TLP,   [QR_TC_FAST] = QR_EV_FAST,
        [QR_TC_RACK] = QR_EV_RACK, [QR_TC_RECOVERY] = QR_EV_RECOVERY,
        [QR_TC_SYN] = QR_EV_SYN,   [QR_TC_UNKNOWN_TRIGGER] = QR_EV_UNKNOWN_RETX};
    int rc = QR_OK;
    for (int k = 0; k < 2 && !rc; k++) {
        uint32_t dir = k ? qr_dir_ack(f) : qr_dir_data(f);
        int at_sender = (dirs[k].seen & QR_TC_AT_SENDER) != 0;
        for (size_t i = 0; i < dirs[k].n && !rc; i++) {
            const qr_tc_pkt_info *in = &c->info[k][i];
            const qr_tc_pkt *p = &dirs[k].p[i];
            uint64_t id = qr_packet_id(dir, x->tp_rec[k][i]->seq);
            int64_t t = at_sender ? p->tx_ns : p->rx_ns;
            uint64_t seq = (uint64_t)in->seq;
            if (in->fate == QR_TC_LOST && in->len)
                rc = qri_diag_add_event(x, f, QR_EV_LOST, t, id, seq, in->len, 0, 0);
            if (!rc && in->trigger != QR_TC_ORIGINAL)
                rc = qri_diag_add_event(
                    x, f, of_trig[in->trigger], t, id, seq,
                    in->trigger == QR_TC_RTO ? (int64_t)why_cause(in->why) : in->dupacks, 0, 0);
            if (!rc && in->reordered)
                rc = qri_diag_add_event(x, f, QR_EV_REORDERED, t, id, seq, in->len, 0, 0);
            if (!rc && in->spurious)
                rc = qri_diag_add_event(x, f, QR_EV_SPURIOUS, t, id, seq, in->len, 0, 0);
            /* an acknowledgment its sender held for the delayed-ACK timer: when it left, what
             * it acknowledged, and how long it was held */
            if (!rc && x->delack_ns > 0 && in->hold_ns >= x->delack_ns &&
                (dirs[k].seen & QR_TC_AT_SENDER))
                rc = qri_diag_add_event(x, f, QR_EV_DELACK, p->tx_ns, id,
                                        (uint64_t)(uint32_t)(p->pk->ack - dirs[k ^ 1].p[0].pk->seq +
                                                             (uint32_t)c->info[k ^ 1][0].seq),
                                        in->hold_ns, 0, 0);
        }
    }
    return rc;
}

/* The ideal of a flow on an empty network: the handshake (SYN out, SYN-ACK back, unloaded), then
 * its bytes in segments as large as its largest. */
static int64_t topology_ideal(const qri_diag_ctx *x, const qr_flow *fl, const qr_tc_dir *data)
{
    const qr_config *c = x->c;
    uint32_t mss = 1, hdr = 52;
    for (size_t i = 0; i < data->n; i++) {
        uint32_t pay = qr_tcp_payload(data->p[i].pk);
        if (pay > mss) {
            mss = pay;
            hdr = data->p[i].pk->ip_len - pay;
        }
    }
    return qr_unloaded_latency_ns(x->topo, fl->src, fl->dst, 60, c->links.rate_bps,
                                  c->links.delay_ns) +
           qr_unloaded_latency_ns(x->topo, fl->dst, fl->src, 60, c->links.rate_bps,
                                  c->links.delay_ns) +
           qri_diag_transfer_ideal(x, fl->src, fl->dst, fl->bytes, mss, hdr);
}

/* One-way queueing of the data packets that arrived: their delay beyond the unloaded one. */
static void data_queueing(const qri_diag_ctx *x, const qr_flow *fl, const qr_tc_dir *data,
                          qr_diag_flow *o)
{
    int64_t qsum = 0;
    uint64_t qn = 0;
    for (size_t i = 0; i < data->n; i++) {
        const qr_tc_pkt *p = &data->p[i];
        if (p->rx_ns < 0 || !qr_tcp_payload(p->pk))
            continue;
        int64_t q = p->rx_ns - p->tx_ns -
                    qr_unloaded_latency_ns(x->topo, fl->src, fl->dst, p->pk->ip_len,
                                           x->c->links.rate_bps, x->c->links.delay_ns);
        if (q < 0)
            q = 0;
        qsum += q;
        qn++;
        if (q > o->queue_max_ns)
            o->queue_max_ns = q;
    }
    o->queue_mean_ns = qn ? qsum / (int64_t)qn : 0;
}

/* The time in [from, to) that the link of direction d's sender spent sending (any of its
 * packets, this connection's in flight included: a gap with nothing of it in flight is
 * another's). */
typedef struct {
    qri_diag_ctx *x;
    uint32_t host[2];
} busy_ctx;

static int64_t conn_link_busy(void *p, uint32_t d, int64_t from, int64_t to)
{
    busy_ctx *b = p;
    qri_diag_ctx *x = b->x;
    uint32_t h = b->host[d & 1u]; /* made by analyse_conn */
    return host_busy_until(&x->busy[h], to) - host_busy_until(&x->busy[h], from);
}

static int64_t conn_path_ideal(void *p, uint32_t d, uint64_t bytes, uint32_t mss, uint32_t hdr)
{
    const busy_ctx *b = p;
    return qri_diag_transfer_ideal(b->x, b->host[d & 1u], b->host[(d & 1u) ^ 1u], bytes, mss, hdr);
}

/* Flow f's packets both ways through the connection model: dirs and c (free c with
 * qr_tc_conn_free, also on error). */
static int conn_model(qri_diag_ctx *x, uint32_t f, qr_tc_dir dirs[2], qr_tc_conn *c)
{
    const qr_flow *fl = qr_flow_table_flow(x->ft, f);
    size_t nd, na;
    memset(c, 0, sizeof *c);
    int rc = load_dir(x, qr_dir_data(f), 0, &nd);
    if (!rc)
        rc = load_dir(x, qr_dir_ack(f), nd, &na);
    if (!rc)
        rc = conn_dir(x, qr_dir_data(f), x->buf, nd, 0, &dirs[0]);
    if (!rc)
        rc = conn_dir(x, qr_dir_ack(f), x->buf + nd, na, 1, &dirs[1]);
    if (rc)
        return rc;
    busy_ctx bc = {x, {fl->src, fl->dst}};
    qr_tc_cfg cfg = x->tcfg;
    if (!x->imported) {
        /* a simulated host's link runs at exactly the scenario's rate (a captured host's
         * interface may be faster than the network's bottleneck: a testbed's veth), and the
         * ideal is the topology's */
        for (int k = 0; k < 2; k++)
            if (!x->busy[bc.host[k]].made && (rc = host_busy_make(x, bc.host[k])))
                return rc;
        cfg.link_busy = conn_link_busy;
        cfg.link_ctx = &bc;
        cfg.path_ideal = conn_path_ideal;
        cfg.path_ctx = &bc;
    } else if (x->out->network_known && x->topo) {
        /* captures taken in the scenario's network (import --network scenario): the ideal is
         * its path's, every hop's serialization included, as a simulated flow's is */
        cfg.path_ideal = conn_path_ideal;
        cfg.path_ctx = &bc;
    }
    return qr_tc_analyse(c, dirs, &cfg, NULL);
}

/* The row's fields that the connection model gives directly. */
static void conn_row(qr_diag_flow *o, uint32_t f, const qr_flow *fl, const qr_tc_conn *c,
                     int imported)
{
    uint32_t first_exchange = o->first_exchange;
    uint8_t sel = o->selected;
    memset(o, 0, sizeof *o);
    o->selected = sel;
    o->first_exchange = first_exchange;
    o->flow = f;
    o->src = fl->src;
    o->dst = fl->dst;
    o->bytes = c->dir[0].bytes;
    o->start_ns = c->first_ns;
    o->fct_ns = -1;
    o->bytes_back = c->dir[1].bytes;
    o->exchanges = (uint32_t)c->n_ex;
    o->end = c->end;
    o->min_rtt_ns = c->min_rtt_ns;
    o->path_rate_bps = c->rate_bps;
    o->ideal_measured = (uint8_t)imported;
    o->size_class = qr_diag_class_of(c->dir[0].bytes + c->dir[1].bytes);
    for (int k = 0; k < 2; k++) {
        const qr_tc_dir_stats *st = &c->dir[k];
        o->tlps += st->trig[QR_TC_TLP];
        o->racks += st->trig[QR_TC_RACK];
        o->unknown_retx += st->trig[QR_TC_UNKNOWN_TRIGGER];
        o->undos += st->undos;
        o->not_seen += st->not_seen;
        o->reordered += st->reordered;
        o->spurious += st->spurious;
        o->data_packets += st->data_packets;
        o->retransmissions += st->retransmissions - st->trig[QR_TC_SYN];
        o->rtos += st->trig[QR_TC_RTO];
        o->fast_retransmits += st->trig[QR_TC_FAST];
        o->late_fast_retransmits += st->late_fast;
        o->lost_data += st->lost;
        o->lost_acks += st->lost_acks;
        o->delayed_acks += st->held_acks;
        if (st->max_dupacks > o->max_dupacks)
            o->max_dupacks = st->max_dupacks;
        o->dupacks += st->dupacks;
        if (st->dupack_run > o->dupack_run)
            o->dupack_run = st->dupack_run;
        o->zero_windows += st->zero_window_episodes;
    }
}

/* Flow f's exchanges appended to x->out->exchanges (the first pass). */
static int conn_exchanges(qri_diag_ctx *x, uint32_t f, const qr_flow *fl, const qr_tc_conn *c)
{
    qr_diagnosis *out = x->out;
    for (size_t i = 0; i < c->n_ex; i++) {
        if (qri_grow((void **)&out->exchanges, &x->cap_exchanges, out->n_exchanges,
                     sizeof *out->exchanges, 64))
            return QR_ENOMEM;
        const qr_tc_exchange *e = &c->ex[i];
        qr_diag_exchange *r = &out->exchanges[out->n_exchanges++];
        memset(r, 0, sizeof *r);
        r->flow = f;
        r->index = (uint32_t)i;
        r->dir = e->dir;
        r->src = e->dir ? fl->dst : fl->src;
        r->dst = e->dir ? fl->src : fl->dst;
        r->bytes = e->bytes;
        r->start_ns = e->start_ns;
        r->end_ns = e->end_ns;
        r->idle_before_ns = e->idle_before_ns;
        r->ideal_ns = e->ideal_ns;
        r->slowdown = e->slowdown;
        r->status = e->status;
        r->vantage = e->vantage;
        memcpy(r->part_ns, e->part_ns, sizeof r->part_ns);
        /* the wait for the other side's reply is never a cause (tcpconn.h QR_TC_PART_REPLY) */
        int64_t dur =
            (e->end_ns >= 0 ? e->end_ns : c->last_ns) - e->start_ns - e->part_ns[QR_TC_PART_REPLY];
        r->cause = exchange_cause(e, dur, c->rate_bps);
        r->packets = e->packets;
        r->retransmissions = e->retransmissions;
        r->lost = e->lost;
        r->not_seen = e->not_seen;
        r->reordered = e->reordered;
        r->spurious = e->spurious;
        memcpy(r->trig, e->trig, sizeof r->trig);
    }
    return QR_OK;
}

/* The connection's time: its handshake, then its exchanges (ex[0..c->n_ex)); the idle between
 * them is the application's. Its cause is its slowest exchange's (the longest when none has a
 * slowdown); returns that exchange's length. */
static int64_t conn_parts(qr_diag_flow *o, const qr_tc_conn *c, const qr_diag_exchange *ex)
{
    static const int to_part[QR_TC_PARTS] = {
        [QR_TC_PART_TRANSFER] = QR_PART_SENDING,  [QR_TC_PART_QUEUEING] = QR_PART_QUEUEING,
        [QR_TC_PART_RTO] = QR_PART_RTO,           [QR_TC_PART_TLP] = QR_PART_TLP,
        [QR_TC_PART_RECOVERY] = QR_PART_RECOVERY, [QR_TC_PART_RWND] = QR_PART_RWND,
        [QR_TC_PART_APP] = QR_PART_APP,           [QR_TC_PART_LOSS] = QR_PART_LOSS,
        [QR_TC_PART_DELACK] = QR_PART_DELACK,     [QR_TC_PART_REPLY] = QR_PART_REPLY};
    int done = c->n_ex > 0;
    int64_t last_end = -1, hs_end = -1;
    if (c->handshake_ns >= 0)
        hs_end =
            c->first_ns > INT64_MAX - c->handshake_ns ? INT64_MAX : c->first_ns + c->handshake_ns;
    double worst = 0;
    int64_t worst_len = -1;
    o->part_ns[QR_PART_HANDSHAKE] = c->handshake_ns > 0 ? c->handshake_ns : 0;
    for (size_t i = 0; i < c->n_ex; i++) {
        const qr_diag_exchange *e = &ex[i];
        done &= e->status == QR_TC_COMPLETE;
        if (e->idle_before_ns > 0)
            sat_add(&o->part_ns[QR_PART_APP], e->idle_before_ns);
        else if (i == 0 && hs_end >= 0 && e->start_ns > hs_end)
            sat_add(&o->part_ns[QR_PART_APP], e->start_ns - hs_end);
        for (int p = 0; p < QR_TC_PARTS; p++)
            sat_add(&o->part_ns[to_part[p]], e->part_ns[p]);
        if (e->end_ns > last_end)
            last_end = e->end_ns;
        sat_add(&o->ideal_ns, e->ideal_ns);
        int64_t len = (e->end_ns >= 0 ? e->end_ns : c->last_ns) - e->start_ns;
        if (e->slowdown > worst || (worst == 0 && len > worst_len)) {
            if (e->slowdown > worst)
                worst = e->slowdown;
            worst_len = len;
            o->cause = e->cause;
        }
    }
    o->completed = (uint8_t)done;
    if (done) {
        o->fct_ns =
            (int64_t)((__int128)last_end - c->first_ns > INT64_MAX ? INT64_MAX
                                                                   : last_end - c->first_ns);
        o->slowdown = worst;
    }
    return worst_len;
}

/* The SYNs each side sent; a handshake that took most of the time, or never completed, is the
 * cause. */
static void conn_handshake(const qri_diag_ctx *x, qr_diag_flow *o, const qr_tc_conn *c,
                           const qr_tc_dir dirs[2], int64_t worst_len)
{
    for (size_t i = 0; i < dirs[0].n; i++)
        o->syn_sent += (dirs[0].p[i].pk->tcp_flags & QR_TCP_SYN) != 0;
    for (size_t i = 0; i < dirs[1].n; i++)
        o->synack_sent += (dirs[1].p[i].pk->tcp_flags & QR_TCP_SYN) != 0;
    if ((o->syn_sent > 1 || o->synack_sent > 1) && c->handshake_ns > worst_len / 2)
        o->cause = QR_CAUSE_HANDSHAKE;
    if (o->syn_sent > 0 && c->handshake_ns < 0 && c->n_ex == 0) {
        /* never established: every SYN went unanswered, or was refused; its whole time was
         * the handshake's (the SYNs sent and when, in syn_sent and the SYN events). One SYN
         * unanswered and not refused shows trouble only if the recording went on past the
         * time its timer would have sent it again; before that it is unknown */
        int waited = x->rec_end_ns - c->last_ns >= QR_DIAG_SYN_RTO_NS;
        o->cause = o->syn_sent > 1 || c->end == QR_TC_END_RESET || waited ? QR_CAUSE_HANDSHAKE
                                                                          : QR_CAUSE_UNKNOWN;
        o->part_ns[QR_PART_HANDSHAKE] = c->last_ns - c->first_ns;
    }
}

/* A simulated flow: it starts when its application opened it (its SYN may wait for the host's
 * link), its size is the workload's, its ideal the topology's on an empty network, and its
 * one-way queueing is measured against the unloaded delay. */
static void simulated_flow(const qri_diag_ctx *x, qr_diag_flow *o, const qr_flow *fl,
                           const qr_tc_conn *c, const qr_tc_dir *data)
{
    if (fl->start_ns < c->first_ns) {
        sat_add(&o->part_ns[QR_PART_HANDSHAKE], c->first_ns - fl->start_ns);
        if (o->completed)
            sat_add(&o->fct_ns, c->first_ns - fl->start_ns);
        o->start_ns = fl->start_ns;
    }
    o->bytes = fl->bytes;
    o->size_class = qr_diag_class_of(fl->bytes);
    o->ideal_ns = topology_ideal(x, fl, data);
    if (o->completed)
        o->slowdown = o->ideal_ns > 0 ? (double)o->fct_ns / (double)o->ideal_ns : 0;
    data_queueing(x, fl, data, o);
}

int qri_diag_analyse_conn(qri_diag_ctx *x, uint32_t f, qr_diag_flow *o, int first_pass)
{
    const qr_flow *fl = qr_flow_table_flow(x->ft, f);
    qr_tc_dir dirs[2];
    qr_tc_conn c;
    int rc = x->krec ? qri_diag_krec_conn(x, f, dirs, &c) : conn_model(x, f, dirs, &c);
    if (!rc) {
        conn_row(o, f, fl, &c, x->imported);
        if (first_pass) {
            o->first_exchange = (uint32_t)x->out->n_exchanges;
            rc = conn_exchanges(x, f, fl, &c);
        }
    }
    if (!rc) {
        const qr_diag_exchange *ex = c.n_ex ? x->out->exchanges + o->first_exchange : NULL;
        conn_handshake(x, o, &c, dirs, conn_parts(o, &c, ex));
        if (!x->imported)
            simulated_flow(x, o, fl, &c, &dirs[0]);
        if (x->events)
            rc = conn_events(x, f, &c, dirs);
    }
    qr_tc_conn_free(&c);
    return rc;
}
