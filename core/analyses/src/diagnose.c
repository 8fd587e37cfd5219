/* qreplay: why each slow flow was slow, from what hosts recorded (diagnose.h). */
#include "qreplay/diagnose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/blackhole.h"
#include "qreplay/buffer.h"
#include "qreplay/h5.h"
#include "qreplay/metrics.h"
#include "qreplay/packet.h"
#include "qreplay/queuelog.h"
#include "qreplay/units.h"

static const char *const part_names[QR_PARTS] = {"handshake", "rto", "recovery", "receiver",
                                                 "delack",    "app", "queueing", "sending",
                                                 "tlp",       "loss"};
static const char *const cause_names[QR_CAUSES] = {"none",
                                                   "handshake-loss",
                                                   "rto",
                                                   "rto-few-dupacks",
                                                   "tail-drop",
                                                   "ack-drop",
                                                   "late-fr",
                                                   "fast-retransmit",
                                                   "congestion",
                                                   "receiver-limit",
                                                   "delack-stall",
                                                   "app-limited",
                                                   "lost-retransmit",
                                                   "tail-loss-probe",
                                                   "rack",
                                                   "loss",
                                                   "unknown"};
static const char *const event_names[QR_EV_KINDS] = {
    "lost",      "rto",         "fast-retransmit", "recovery",    "dupack",
    "syn-again", "delayed-ack", "zero-window",     "blackhole",   "tlp",
    "rack",      "reordered",   "spurious",        "unknown-retx"};
static const char *const class_names[QR_DIAG_CLASSES] = {"<100KB", "100KB-1MB", "1-10MB", ">10MB"};

const char *qr_diag_part_name(qr_diag_part p)
{
    return (unsigned)p < QR_PARTS ? part_names[p] : "?";
}

const char *qr_diag_cause_name(qr_diag_cause c)
{
    return (unsigned)c < QR_CAUSES ? cause_names[c] : "?";
}

const char *qr_diag_event_name(qr_diag_event_kind k)
{
    return (unsigned)k < QR_EV_KINDS ? event_names[k] : "?";
}

const char *qr_diag_class_name(uint32_t c)
{
    return c < QR_DIAG_CLASSES ? class_names[c] : "?";
}

uint32_t qr_diag_class_of(uint64_t bytes)
{
    if (bytes < 100000)
        return 0;
    if (bytes < 1000000)
        return 1;
    if (bytes <= 10000000)
        return 2;
    return 3;
}

void qr_diag_opts_default(qr_diag_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tail = 0.99;
    o->dupthresh = 3;
}

/* ---- per-direction packet lists ---- */

typedef struct {
    const qr_rec_packet *pk;
    int64_t tx; /* send time, on the reconciled clock (the hosts' estimated offsets out) */
    int64_t rx; /* arrival time at the other end, likewise; -1: no record */
} dpkt;

typedef struct {
    const qr_recording *rec;
    const qr_scenario *s;
    const qr_config *c;
    const qr_flow_table *ft;
    qr_topology *topo;
    uint32_t *dir_first, *dir_count; /* into idx */
    const qr_rec_packet **idx;       /* packets of every direction, in recorded order */
    dpkt *buf;                       /* scratch: a direction's packets */
    size_t buf_cap;
    int64_t delack_ns; /* a hold this long is the delayed-ACK timer's (0: unknown) */
    /* evidence being collected (NULL: not collecting) */
    qr_diag_event **events;
    size_t *n_events, *cap_events;
    /* replay arrivals */
    qri_map drops; /* packet id -> struct drop_at */
    int have_drops;
    const qr_blackhole *episodes;
    size_t n_episodes;
    /* per host, made when first needed: when its link was busy sending (merged intervals of
     * true time, with the busy time before each) */
    struct host_busy *busy;
    uint32_t hosts;
    int64_t *off; /* per host: its clock's offset, taken out of its times (the reconciled
                   * estimate; imports were reconciled when imported) */
    /* the connection model (tcpconn.h) */
    qr_tc_cfg tcfg;
    int imported;
    int64_t rec_end_ns; /* the last packet's time in the recording (sent or received) */
    qr_tc_pkt *tp[2];
    const qr_rec_packet **tp_rec[2];
    size_t tp_cap[2];
    qr_diagnosis *out;
    size_t cap_exchanges;
} ctx;

struct host_busy {
    int made;
    size_t n;
    int64_t *start, *end, *before; /* before[i]: busy ns in the intervals ahead of i */
};

static int busy_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Host h's sending intervals: each recorded packet occupies its link for its wire time. */
static int host_busy_make(ctx *x, uint32_t h)
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

struct drop_at {
    uint32_t sw, port;
    int64_t time_ns;
};

/* The packets of direction dir into x->buf (from off), with true times. */
static int load_dir(ctx *x, uint32_t dir, size_t off, size_t *n)
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

static int add_event(ctx *x, uint32_t flow, qr_diag_event_kind kind, int64_t t, uint64_t packet,
                     uint64_t tcp_seq, int64_t value, uint32_t sw, uint32_t port)
{
    if (!x->events)
        return QR_OK;
    if (qri_grow((void **)x->events, x->cap_events, *x->n_events, sizeof **x->events, 64))
        return QR_ENOMEM;
    (*x->events)[(*x->n_events)++] =
        (qr_diag_event){flow, kind, t, packet, tcp_seq, value, sw, port};
    return QR_OK;
}

/* ---- the connection model: exchanges both ways (tcpconn.h) ---- */

/* *a += b, held at INT64_MAX (a hostile capture's times reach 2^62; their sums may not fit). */
static void sat_add(int64_t *a, int64_t b)
{
    *a = b > 0 && *a > INT64_MAX - b ? INT64_MAX : *a + b;
}

/* The packets of flow f's direction k (0: data, 1: ACKs) as the connection model takes them:
 * what its receiver alone saw is its record (received packets, in arrival order). */
static int conn_dir(ctx *x, uint32_t dir, const dpkt *d, size_t n, int k, qr_tc_dir *out)
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

/* What slowed exchange e (of duration dur) most: the cause that cost it the most time, if that
 * was at least 5% of it. A timer's wait, and the go-back-N recovery after it, count to why the
 * timer fired; the rest of a recovery to what started it. Queueing counts only from one full
 * packet's time at the path's rate (path_bps; 0: unknown): less than that is no packet waiting
 * for another, but the hosts' and the capture's own jitter (a 70-byte request 2 us late is not
 * congestion). */
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

static int conn_events(ctx *x, uint32_t f, const qr_tc_conn *c, const qr_tc_dir *dirs)
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
                rc = add_event(x, f, QR_EV_LOST, t, id, seq, in->len, 0, 0);
            if (!rc && in->trigger != QR_TC_ORIGINAL)
                rc = add_event(x, f, of_trig[in->trigger], t, id, seq,
                               in->trigger == QR_TC_RTO ? (int64_t)why_cause(in->why) : in->dupacks,
                               0, 0);
            if (!rc && in->reordered)
                rc = add_event(x, f, QR_EV_REORDERED, t, id, seq, in->len, 0, 0);
            if (!rc && in->spurious)
                rc = add_event(x, f, QR_EV_SPURIOUS, t, id, seq, in->len, 0, 0);
            /* an acknowledgment its sender held for the delayed-ACK timer: when it left, what
             * it acknowledged, and how long it was held */
            if (!rc && x->delack_ns > 0 && in->hold_ns >= x->delack_ns &&
                (dirs[k].seen & QR_TC_AT_SENDER))
                rc = add_event(x, f, QR_EV_DELACK, p->tx_ns, id,
                               (uint64_t)(uint32_t)(p->pk->ack - dirs[k ^ 1].p[0].pk->seq +
                                                    (uint32_t)c->info[k ^ 1][0].seq),
                               in->hold_ns, 0, 0);
        }
    }
    return rc;
}

/* From the first of `bytes` leaving src to the last arriving at dst, alone on the empty network
 * (the scenario's topology and links): segments of mss payload and hdr header bytes back to back
 * at the link rate, the last one store-and-forward at every hop. */
static int64_t transfer_ideal(const ctx *x, uint32_t src, uint32_t dst, uint64_t bytes,
                              uint32_t mss, uint32_t hdr)
{
    const qr_config *c = x->c;
    if (!mss)
        mss = 1;
    uint64_t npk = bytes ? (bytes + mss - 1) / mss : 0;
    uint64_t last_payload = bytes - (npk ? (npk - 1) * mss : 0);
    return (int64_t)(npk ? npk - 1 : 0) *
               qri_wire_ns(mss + hdr + QR_LINK_OVERHEAD_BYTES, c->links.rate_bps) +
           qr_unloaded_latency_ns(x->topo, src, dst, (uint32_t)(hdr + last_payload),
                                  c->links.rate_bps, c->links.delay_ns);
}

/* The ideal of a flow on an empty network: the handshake (SYN out, SYN-ACK back, unloaded), then
 * its bytes in segments as large as its largest. */
static int64_t topology_ideal(const ctx *x, const qr_flow *fl, const qr_tc_dir *data)
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
           transfer_ideal(x, fl->src, fl->dst, fl->bytes, mss, hdr);
}

/* One-way queueing of the data packets that arrived: their delay beyond the unloaded one. */
static void data_queueing(const ctx *x, const qr_flow *fl, const qr_tc_dir *data, qr_diag_flow *o)
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
    ctx *x;
    uint32_t host[2];
} busy_ctx;

static int64_t conn_link_busy(void *p, uint32_t d, int64_t from, int64_t to)
{
    busy_ctx *b = p;
    ctx *x = b->x;
    uint32_t h = b->host[d & 1u]; /* made by analyse_conn */
    return host_busy_until(&x->busy[h], to) - host_busy_until(&x->busy[h], from);
}

static int64_t conn_path_ideal(void *p, uint32_t d, uint64_t bytes, uint32_t mss, uint32_t hdr)
{
    const busy_ctx *b = p;
    return transfer_ideal(b->x, b->host[d & 1u], b->host[(d & 1u) ^ 1u], bytes, mss, hdr);
}

/* Flow f's row, from the connection model (both directions, every exchange), and in the first
 * pass its exchanges into x->out->exchanges. */
static int analyse_conn(ctx *x, uint32_t f, qr_diag_flow *o, int first_pass)
{
    const qr_flow *fl = qr_flow_table_flow(x->ft, f);
    size_t nd, na;
    int rc = load_dir(x, qr_dir_data(f), 0, &nd);
    if (!rc)
        rc = load_dir(x, qr_dir_ack(f), nd, &na);
    if (rc)
        return rc;
    qr_tc_dir dirs[2];
    if ((rc = conn_dir(x, qr_dir_data(f), x->buf, nd, 0, &dirs[0])) ||
        (rc = conn_dir(x, qr_dir_ack(f), x->buf + nd, na, 1, &dirs[1])))
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
    }
    qr_tc_conn c;
    if ((rc = qr_tc_analyse(&c, dirs, &cfg, NULL))) {
        qr_tc_conn_free(&c);
        return rc;
    }
    uint32_t first_exchange = o->first_exchange;
    uint8_t sel = o->selected;
    memset(o, 0, sizeof *o);
    o->selected = sel;
    o->flow = f;
    o->src = fl->src;
    o->dst = fl->dst;
    o->bytes = c.dir[0].bytes;
    o->start_ns = c.first_ns;
    o->fct_ns = -1;
    o->bytes_back = c.dir[1].bytes;
    o->exchanges = (uint32_t)c.n_ex;
    o->end = c.end;
    o->min_rtt_ns = c.min_rtt_ns;
    o->path_rate_bps = c.rate_bps;
    o->ideal_measured = (uint8_t)x->imported;
    o->tlps = c.dir[0].trig[QR_TC_TLP] + c.dir[1].trig[QR_TC_TLP];
    o->racks = c.dir[0].trig[QR_TC_RACK] + c.dir[1].trig[QR_TC_RACK];
    o->unknown_retx = c.dir[0].trig[QR_TC_UNKNOWN_TRIGGER] + c.dir[1].trig[QR_TC_UNKNOWN_TRIGGER];
    o->undos = c.dir[0].undos + c.dir[1].undos;
    o->not_seen = c.dir[0].not_seen + c.dir[1].not_seen;
    o->reordered = c.dir[0].reordered + c.dir[1].reordered;
    o->spurious = c.dir[0].spurious + c.dir[1].spurious;
    qr_diagnosis *out = x->out;
    o->first_exchange = first_exchange;
    if (first_pass) {
        o->first_exchange = (uint32_t)out->n_exchanges;
        for (size_t i = 0; i < c.n_ex && !rc; i++) {
            if (qri_grow((void **)&out->exchanges, &x->cap_exchanges, out->n_exchanges,
                         sizeof *out->exchanges, 64)) {
                rc = QR_ENOMEM;
                break;
            }
            const qr_tc_exchange *e = &c.ex[i];
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
            int64_t dur = (e->end_ns >= 0 ? e->end_ns : c.last_ns) - e->start_ns;
            r->cause = exchange_cause(e, dur, c.rate_bps);
            r->packets = e->packets;
            r->retransmissions = e->retransmissions;
            r->lost = e->lost;
            r->not_seen = e->not_seen;
            r->reordered = e->reordered;
            r->spurious = e->spurious;
            memcpy(r->trig, e->trig, sizeof r->trig);
        }
    }
    if (rc) {
        qr_tc_conn_free(&c);
        return rc;
    }
    /* the connection: its handshake, then its exchanges; the idle between them is the
     * application's */
    const qr_diag_exchange *ex = c.n_ex ? out->exchanges + o->first_exchange : NULL;
    int done = c.n_ex > 0;
    int64_t last_end = -1, hs_end = -1;
    if (c.handshake_ns >= 0)
        hs_end = c.first_ns > INT64_MAX - c.handshake_ns ? INT64_MAX : c.first_ns + c.handshake_ns;
    double worst = 0;
    int64_t worst_len = -1;
    o->part_ns[QR_PART_HANDSHAKE] = c.handshake_ns > 0 ? c.handshake_ns : 0;
    for (size_t i = 0; i < c.n_ex; i++) {
        const qr_diag_exchange *e = &ex[i];
        done &= e->status == QR_TC_COMPLETE;
        if (e->idle_before_ns > 0)
            sat_add(&o->part_ns[QR_PART_APP], e->idle_before_ns);
        else if (i == 0 && hs_end >= 0 && e->start_ns > hs_end)
            sat_add(&o->part_ns[QR_PART_APP], e->start_ns - hs_end);
        static const int to_part[QR_TC_PARTS] = {
            [QR_TC_PART_TRANSFER] = QR_PART_SENDING,  [QR_TC_PART_QUEUEING] = QR_PART_QUEUEING,
            [QR_TC_PART_RTO] = QR_PART_RTO,           [QR_TC_PART_TLP] = QR_PART_TLP,
            [QR_TC_PART_RECOVERY] = QR_PART_RECOVERY, [QR_TC_PART_RWND] = QR_PART_RWND,
            [QR_TC_PART_APP] = QR_PART_APP,           [QR_TC_PART_LOSS] = QR_PART_LOSS,
            [QR_TC_PART_DELACK] = QR_PART_DELACK};
        for (int p = 0; p < QR_TC_PARTS; p++)
            sat_add(&o->part_ns[to_part[p]], e->part_ns[p]);
        if (e->end_ns > last_end)
            last_end = e->end_ns;
        sat_add(&o->ideal_ns, e->ideal_ns);
        /* the connection's cause: its slowest exchange's (the longest when none has a
         * slowdown) */
        int64_t len = (e->end_ns >= 0 ? e->end_ns : c.last_ns) - e->start_ns;
        if (e->slowdown > worst || (worst == 0 && len > worst_len)) {
            if (e->slowdown > worst)
                worst = e->slowdown;
            worst_len = len;
            o->cause = e->cause;
        }
    }
    o->completed = (uint8_t)done;
    if (done) {
        o->fct_ns = (int64_t)((__int128)last_end - c.first_ns > INT64_MAX ? INT64_MAX
                                                                          : last_end - c.first_ns);
        o->slowdown = worst;
    }
    o->size_class = qr_diag_class_of(c.dir[0].bytes + c.dir[1].bytes);
    for (int k = 0; k < 2; k++) {
        const qr_tc_dir_stats *st = &c.dir[k];
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
    for (size_t i = 0; i < dirs[0].n; i++)
        o->syn_sent += (dirs[0].p[i].pk->tcp_flags & QR_TCP_SYN) != 0;
    for (size_t i = 0; i < dirs[1].n; i++)
        o->synack_sent += (dirs[1].p[i].pk->tcp_flags & QR_TCP_SYN) != 0;
    if ((o->syn_sent > 1 || o->synack_sent > 1) && c.handshake_ns > worst_len / 2)
        o->cause = QR_CAUSE_HANDSHAKE;
    if (o->syn_sent > 0 && c.handshake_ns < 0 && c.n_ex == 0) {
        /* never established: every SYN went unanswered, or was refused; its whole time was
         * the handshake's (the SYNs sent and when, in syn_sent and the SYN events). One SYN
         * unanswered and not refused shows trouble only if the recording went on past the
         * time its timer would have sent it again; before that it is unknown */
        int waited = x->rec_end_ns - c.last_ns >= QR_DIAG_SYN_RTO_NS;
        o->cause = o->syn_sent > 1 || c.end == QR_TC_END_RESET || waited ? QR_CAUSE_HANDSHAKE
                                                                         : QR_CAUSE_UNKNOWN;
        o->part_ns[QR_PART_HANDSHAKE] = c.last_ns - c.first_ns;
    }
    if (!x->imported) {
        /* a simulated flow: it starts when its application opened it (its SYN may wait for the
         * host's link), its size is the workload's, its ideal the topology's on an empty
         * network, and its one-way queueing is measured against the unloaded delay */
        if (fl->start_ns < c.first_ns) {
            sat_add(&o->part_ns[QR_PART_HANDSHAKE], c.first_ns - fl->start_ns);
            if (done)
                sat_add(&o->fct_ns, c.first_ns - fl->start_ns);
            o->start_ns = fl->start_ns;
        }
        o->bytes = fl->bytes;
        o->size_class = qr_diag_class_of(fl->bytes);
        o->ideal_ns = topology_ideal(x, fl, &dirs[0]);
        if (done)
            o->slowdown = o->ideal_ns > 0 ? (double)o->fct_ns / (double)o->ideal_ns : 0;
        data_queueing(x, fl, &dirs[0], o);
    }
    if (x->events)
        rc = conn_events(x, f, &c, dirs);
    qr_tc_conn_free(&c);
    return rc;
}

/* ---- replay arrivals ---- */

typedef struct {
    uint32_t sw, port;
    int64_t sum_ns;
} hop_sum;

#define HOPS_MAX 8

typedef struct {
    hop_sum hop[HOPS_MAX];
    uint32_t n_hop;
    int64_t total_ns;
    uint64_t arrivals;
} flow_q;

static void free_drop(uint64_t k1, uint64_t k2, void *v, void *c)
{
    (void)k1;
    (void)k2;
    (void)c;
    free(v);
}

static int read_arrivals(ctx *x, qr_diagnosis *out, const int32_t *sel_of, flow_q *fq,
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

static void blackhole_row(const qr_blackhole *e, qr_row_diag_blackhole *r)
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

/* ---- figure 9: blackholed queues and their culprits, arrival by arrival ---- */

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
static int blackhole_series(qr_diagnosis *out, char *errbuf)
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

/* ---- the whole recording ---- */

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
static void resolve_opts(ctx *x, qr_diag_opts *o, qr_diagnosis *out)
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
    x->tcfg.end_at_arrival = !x->imported;
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
static int index_packets(ctx *x, size_t n_dirs)
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

int qr_diagnose(const qr_recording *rec, const qr_diag_opts *opts, qr_diagnosis *out, char *errbuf)
{
    if (!rec || !out)
        return qri_err(errbuf, QR_EINVAL, "no recording");
    memset(out, 0, sizeof *out);
    if (opts)
        out->opts = *opts;
    else
        qr_diag_opts_default(&out->opts);
    qr_diag_opts *o = &out->opts;
    if (!(o->tail > 0 && o->tail < 1))
        return qri_err(errbuf, QR_EVALUE, "--tail: %g is not a quantile in (0, 1)", o->tail);
    if (o->dupthresh == 0)
        o->dupthresh = 3;
    if (!qr_recording_has_received(rec))
        return qri_err(errbuf, QR_ESTATE,
                       "the recording has no /received (arrival times at the receivers): diagnosis "
                       "needs both ends of every connection");
    ctx x = {0};
    x.rec = rec;
    x.s = qr_recording_scenario(rec);
    x.c = qr_scenario_config(x.s);
    x.ft = qr_recording_flows(rec);
    resolve_opts(&x, o, out);
    size_t n_flows = qr_flow_table_flows(x.ft), n_dirs = qr_flow_table_directions(x.ft);
    for (size_t i = 0; i < o->n_flows; i++)
        if (o->flows[i] >= n_flows)
            return qri_err(errbuf, QR_EVALUE,
                           "--flows: flow %u does not exist (the recording has "
                           "%zu flows, 0..%zu)",
                           o->flows[i], n_flows, n_flows ? n_flows - 1 : 0);
    int rc = qr_topology_of_config(&x.topo, x.c);
    if (rc)
        return qri_err(errbuf, rc, "the recording's topology");
    qr_blackhole_detector *bh = NULL;
    int32_t *sel_of = NULL;
    flow_q *fq = NULL;
    double *sd = NULL;
    x.dir_first = calloc(n_dirs + 1, sizeof *x.dir_first);
    x.dir_count = calloc(n_dirs + 1, sizeof *x.dir_count);
    out->flows = calloc(n_flows ? n_flows : 1, sizeof *out->flows);
    out->n_flows = n_flows;
    uint32_t hosts = qr_recording_hosts(rec);
    x.hosts = hosts;
    x.busy = calloc(hosts ? hosts : 1, sizeof *x.busy);
    x.off = calloc(hosts ? hosts : 1, sizeof *x.off);
    if (!x.dir_first || !x.dir_count || !out->flows || !x.busy || !x.off) {
        rc = QR_ENOMEM;
        goto done;
    }
    if (!x.imported) {
        /* the hosts' clocks as a deployment knows them: reconciled from the recorded one-way
         * delays (qr_recording_estimate_clocks), never the runtime's true offsets. An import's
         * times were reconciled when it was made. */
        qr_clock_estimate *est = calloc(hosts ? hosts : 1, sizeof *est);
        if (!est) {
            rc = QR_ENOMEM;
            goto done;
        }
        rc = qr_recording_estimate_clocks(rec, 0, est, NULL, errbuf);
        for (uint32_t h = 0; !rc && h < hosts; h++)
            x.off[h] = est[h].offset_ns;
        free(est);
        if (rc)
            goto done;
    }
    if ((rc = index_packets(&x, n_dirs))) /* x.idx, x.dir_first, x.dir_count, x.rec_end_ns */
        goto done;
    /* pass 1: every flow */
    for (uint32_t f = 0; f < n_flows; f++) {
        if ((rc = analyse_conn(&x, f, &out->flows[f], 1)))
            goto done;
        if (o->progress && (f % 2000 == 1999)) {
            char line[96];
            snprintf(line, sizeof line, "diagnose: %u of %zu flows", f + 1, n_flows);
            o->progress(o->progress_ctx, line);
        }
    }
    /* the tail per size class */
    sd = malloc((n_flows ? n_flows : 1) * sizeof *sd);
    sel_of = malloc((n_flows ? n_flows : 1) * sizeof *sel_of);
    if (!sd || !sel_of) {
        rc = QR_ENOMEM;
        goto done;
    }
    select_tail(out, o, sd, sel_of);
    /* replay arrivals: drops, queueing per hop, blackholes */
    if (o->arrivals) {
        out->has_arrivals = 1;
        fq = calloc(out->selected ? out->selected : 1, sizeof *fq);
        if (!fq || qri_map_init(&x.drops)) {
            rc = QR_ENOMEM;
            goto done;
        }
        x.have_drops = 1;
        if ((rc = qr_blackhole_detector_create(&bh, NULL, errbuf)))
            goto done;
        if ((rc = read_arrivals(&x, out, sel_of, fq, bh, errbuf)))
            goto done;
        if ((rc = qr_blackhole_finish(bh, &x.episodes, &x.n_episodes))) {
            qri_err(errbuf, rc, "blackhole detection");
            goto done;
        }
        out->blackhole_episodes = x.n_episodes;
        out->blackholes = calloc(x.n_episodes ? x.n_episodes : 1, sizeof *out->blackholes);
        if (!out->blackholes) {
            rc = QR_ENOMEM;
            goto done;
        }
        out->n_blackholes = x.n_episodes;
        for (size_t b = 0; b < x.n_episodes; b++)
            blackhole_row(&x.episodes[b], &out->blackholes[b]);
    }
    /* pass 2: evidence of the selected flows */
    size_t cap = 0;
    x.events = &out->events;
    x.n_events = &out->n_events;
    x.cap_events = &cap;
    for (uint32_t f = 0; f < n_flows; f++) {
        qr_diag_flow *fl = &out->flows[f];
        if (!fl->selected)
            continue;
        uint32_t first = (uint32_t)out->n_events;
        if ((rc = analyse_conn(&x, f, fl, 0)))
            goto done;
        if (fq) {
            flow_q *q = &fq[sel_of[f]];
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
            /* losses in blackhole episodes */
            size_t n_ev = out->n_events;
            for (size_t e = first; e < n_ev; e++) {
                qr_diag_event *ev = &out->events[e];
                if (ev->kind != QR_EV_LOST)
                    continue;
                const struct drop_at *da = qri_map_get(&x.drops, ev->packet, 0);
                if (!da)
                    continue;
                for (size_t b = 0; b < x.n_episodes; b++) {
                    const qr_blackhole *ep = &x.episodes[b];
                    if (ep->sw != da->sw || ep->port != da->port || da->time_ns < ep->start_ns ||
                        da->time_ns > ep->end_ns)
                        continue;
                    fl->blackhole_losses++;
                    out->blackholes[b].selected_losses++;
                    if ((rc =
                             add_event(&x, f, QR_EV_BLACKHOLE, da->time_ns, ev->packet, ev->tcp_seq,
                                       ep->n_culprits ? (int64_t)ep->culprits[0].port : -1, ep->sw,
                                       ep->port)))
                        goto done;
                    break;
                }
            }
        }
        fl->first_event = first;
        fl->n_events = (uint32_t)(out->n_events - first);
        if (fl->n_events)
            qsort(out->events + first, fl->n_events, sizeof *out->events, event_cmp);
        if (fl->completed)
            out->class_selected[fl->size_class][fl->cause]++;
    }
    if (o->arrivals && (rc = blackhole_series(out, errbuf)))
        goto done;
done:
    if (x.have_drops) {
        qri_map_foreach(&x.drops, free_drop, NULL);
        qri_map_free(&x.drops);
    }
    qr_blackhole_detector_destroy(bh);
    qr_topology_destroy(x.topo);
    free(x.dir_first);
    free(x.dir_count);
    free(x.idx);
    free(x.buf);
    for (uint32_t h = 0; x.busy && h < x.hosts; h++) {
        free(x.busy[h].start);
        free(x.busy[h].end);
        free(x.busy[h].before);
    }
    free(x.busy);
    free(x.off);
    for (int k = 0; k < 2; k++) {
        free(x.tp[k]);
        free(x.tp_rec[k]);
    }
    free(sel_of);
    free(fq);
    free(sd);
    if (rc == QR_ENOMEM)
        qri_err(errbuf, rc, "out of memory");
    return rc;
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

/* ---- output ---- */

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
    for (size_t i = 0; i < d->n_flows; i++) {
        const qr_diag_flow *x = &d->flows[i];
        qr_row_diag_flow *r = &fr[i];
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
        int64_t *parts[QR_PARTS] = {&r->handshake_ns, &r->rto_ns, &r->recovery_ns, &r->receiver_ns,
                                    &r->delack_ns,    &r->app_ns, &r->queueing_ns, &r->sending_ns,
                                    &r->tlp_ns,       &r->loss_ns};
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
    for (size_t i = 0; i < d->n_exchanges; i++) {
        const qr_diag_exchange *x = &d->exchanges[i];
        qr_row_diag_exchange *r = &xr[i];
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
        int64_t *parts[QR_TC_PARTS] = {&r->transfer_ns, &r->queueing_ns, &r->rto_ns,
                                       &r->tlp_ns,      &r->recovery_ns, &r->receiver_ns,
                                       &r->app_ns,      &r->loss_ns,     &r->delack_ns};
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
    for (size_t i = 0; i < d->n_events; i++) {
        const qr_diag_event *x = &d->events[i];
        qr_row_diag_event *r = &er[i];
        r->flow = x->flow;
        snprintf(r->kind, sizeof r->kind, "%s", qr_diag_event_name(x->kind));
        r->time_ns = x->time_ns;
        r->packet = x->packet;
        r->tcp_seq = x->tcp_seq;
        r->value = x->value;
        if (x->kind == QR_EV_RTO)
            snprintf(r->detail, sizeof r->detail, "%s",
                     qr_diag_cause_name((qr_diag_cause)x->value));
        r->sw = x->sw;
        r->port = x->port;
    }
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
