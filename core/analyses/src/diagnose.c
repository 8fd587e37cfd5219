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
    int64_t tx;       /* true send time */
    int64_t rx;       /* true arrival time at the other end, -1: lost */
    uint32_t payload; /* TCP payload bytes */
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
    int64_t ack_clock_ns, delack_ns;
    uint32_t dupthresh;
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

/* The window-scale shift of a SYN's options (-1: none). */
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
        d->payload = qr_tcp_payload(&d->pk->pk);
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

/* A sender-side event: a data-direction packet sent, or an ACK-direction packet arriving. */
typedef struct {
    int64_t t;
    uint32_t i;  /* index into the direction's list */
    uint8_t ack; /* 1: ACK arrival */
} sev;

static int sev_cmp(const void *a, const void *b)
{
    const sev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->ack != y->ack)
        return x->ack ? -1 : 1; /* an ACK before what it triggers */
    return x->i < y->i ? -1 : x->i > y->i;
}

typedef struct {
    int64_t s, e, t;
} span;

static int span_t_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* When the receiver had every data byte (1 .. 1 + bytes of relative sequence): -1 if never. */
static int64_t completion_time(const dpkt *d, size_t n, uint32_t isn, uint64_t bytes)
{
    span *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -2;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i].payload > 0 && d[i].rx >= 0) {
            int64_t s = (int64_t)(uint32_t)(d[i].pk->pk.seq - isn);
            v[k++] = (span){s, s + d[i].payload, d[i].rx};
        }
    qsort(v, k, sizeof *v, span_t_cmp);
    int64_t cont = 1, end = -1;
    size_t pend = 0; /* v[0..pend) hold spans not yet joined, reused in place */
    for (size_t i = 0; i < k && end < 0; i++) {
        v[pend++] = v[i];
        int grew = 1;
        while (grew) {
            grew = 0;
            for (size_t j = 0; j < pend; j++) {
                if (v[j].s <= cont) {
                    if (v[j].e > cont)
                        cont = v[j].e;
                    v[j] = v[--pend];
                    grew = 1;
                    j--;
                }
            }
        }
        if (cont >= 1 + (int64_t)bytes)
            end = v[i].t;
    }
    free(v);
    return bytes == 0 ? -1 : end;
}

/* RTO sub-cause, for a timer retransmission at time t of relative sequence s0. */
static qr_diag_cause rto_cause(const ctx *x, const dpkt *d, size_t nd, const dpkt *a, size_t na,
                               const int64_t *hold, uint32_t isn, int64_t s0, int64_t t)
{
    /* the latest transmission of s0 before t, and how many there were */
    size_t k = nd, copies = 0;
    for (size_t i = 0; i < nd; i++) {
        if (d[i].tx >= t)
            break;
        int64_t s = (int64_t)(uint32_t)(d[i].pk->pk.seq - isn);
        uint32_t len = d[i].payload + ((d[i].pk->pk.tcp_flags & QR_TCP_FIN) ? 1u : 0u);
        if (len && s <= s0 && s0 < s + (int64_t)len) {
            k = i;
            copies++;
        }
    }
    if (k == nd)
        return QR_CAUSE_RTO;
    /* it was itself a retransmission and was lost again: only the timer resends that */
    if (d[k].rx < 0 && copies > 1)
        return QR_CAUSE_LOST_RETX;
    /* packets after it that reached the receiver: each could have brought a duplicate ACK */
    int64_t n_after = 0;
    for (size_t i = k + 1; i < nd && d[i].tx < t; i++)
        n_after += (d[i].payload > 0 || (d[i].pk->pk.tcp_flags & QR_TCP_FIN)) && d[i].rx >= 0;
    if (d[k].rx >= 0) {
        /* its data arrived: the ACKs did not come back in time */
        int lost_ack = 0, held = 0;
        for (size_t j = 0; j < na; j++) {
            if (a[j].tx < d[k].rx || a[j].tx > t)
                continue;
            lost_ack |= a[j].rx < 0;
            held |= hold[j] >= x->delack_ns;
        }
        if (lost_ack)
            return QR_CAUSE_ACK_DROP;
        /* no ACK left the receiver before the timer, or the first one was held */
        int any = 0;
        for (size_t j = 0; j < na; j++)
            any |= a[j].tx >= d[k].rx && a[j].tx <= t;
        if (held || !any)
            return QR_CAUSE_DELACK;
        return QR_CAUSE_RTO;
    }
    if (n_after == 0)
        return QR_CAUSE_TAIL_DROP;
    if (n_after < (int64_t)x->dupthresh)
        return QR_CAUSE_RTO_FEW_DUPACKS;
    for (size_t j = 0; j < na; j++)
        if (a[j].tx >= d[k].tx && a[j].tx <= t && a[j].rx < 0)
            return QR_CAUSE_ACK_DROP;
    return QR_CAUSE_RTO;
}

/* Analyse flow f into *o; with evidence if x->events. */
static int analyse(ctx *x, uint32_t f, qr_diag_flow *o)
{
    const qr_flow *fl = qr_flow_table_flow(x->ft, f);
    uint32_t D = qr_dir_data(f), A = qr_dir_ack(f);
    memset(o, 0, sizeof *o);
    o->flow = f;
    o->src = fl->src;
    o->dst = fl->dst;
    o->bytes = fl->bytes;
    o->size_class = qr_diag_class_of(fl->bytes);
    o->start_ns = fl->start_ns;
    o->fct_ns = -1;
    o->min_rtt_ns = -1;
    size_t nd, na;
    int rc = load_dir(x, D, 0, &nd);
    if (!rc)
        rc = load_dir(x, A, nd, &na);
    if (rc)
        return rc;
    dpkt *d = x->buf, *a = x->buf + nd;
    if (nd == 0)
        return QR_OK;
    if (!x->busy[fl->src].made && (rc = host_busy_make(x, fl->src)))
        return rc;
    uint32_t isn = d[0].pk->pk.seq;
    for (size_t i = 0; i < nd; i++)
        if (d[i].pk->pk.tcp_flags & QR_TCP_SYN) {
            isn = d[i].pk->pk.seq;
            break;
        }
    if (!(d[0].pk->pk.tcp_flags & QR_TCP_SYN))
        isn = d[0].pk->pk.seq - 1; /* a capture that starts mid-connection */
    int ws_syn = -1, ws_synack = -1;
    uint32_t mss = 1, hdr = 52, last_len = 52;
    int64_t data_end = 0;
    for (size_t i = 0; i < nd; i++) {
        const qr_packet *p = &d[i].pk->pk;
        if (p->tcp_flags & QR_TCP_SYN) {
            o->syn_sent++;
            if (ws_syn < 0)
                ws_syn = qr_tcp_wscale(p);
        }
        if (d[i].payload > mss) {
            mss = d[i].payload;
            hdr = p->ip_len - d[i].payload;
        }
        int64_t s = (int64_t)(uint32_t)(p->seq - isn);
        int64_t e = s + d[i].payload + ((p->tcp_flags & QR_TCP_FIN) ? 1 : 0);
        if (d[i].payload || (p->tcp_flags & QR_TCP_FIN)) {
            o->data_packets++;
            if (e > data_end)
                data_end = e;
            if (d[i].rx < 0)
                o->lost_data++;
        }
    }
    for (size_t j = 0; j < na; j++) {
        const qr_packet *p = &a[j].pk->pk;
        if (p->tcp_flags & QR_TCP_SYN) {
            o->synack_sent++;
            if (ws_synack < 0)
                ws_synack = qr_tcp_wscale(p);
        }
        if (a[j].rx < 0)
            o->lost_acks++;
    }
    int ws = ws_syn >= 0 && ws_synack >= 0 ? ws_synack : 0;

    /* completion and the ideal */
    int64_t end = completion_time(d, nd, isn, fl->bytes);
    if (end == -2)
        return QR_ENOMEM;
    o->completed = end >= 0;
    const qr_config *c = x->c;
    uint64_t npk = fl->bytes ? (fl->bytes + mss - 1) / mss : 0;
    uint64_t last_payload = fl->bytes - (npk ? (npk - 1) * mss : 0);
    last_len = (uint32_t)(hdr + last_payload);
    int64_t lat_syn =
        qr_unloaded_latency_ns(x->topo, fl->src, fl->dst, 60, c->links.rate_bps, c->links.delay_ns);
    int64_t lat_synack =
        qr_unloaded_latency_ns(x->topo, fl->dst, fl->src, 60, c->links.rate_bps, c->links.delay_ns);
    int64_t transfer = (int64_t)(npk ? npk - 1 : 0) *
                           qri_wire_ns(mss + hdr + QR_LINK_OVERHEAD_BYTES, c->links.rate_bps) +
                       qr_unloaded_latency_ns(x->topo, fl->src, fl->dst, last_len,
                                              c->links.rate_bps, c->links.delay_ns);
    o->ideal_ns = lat_syn + lat_synack + transfer;
    if (o->completed) {
        o->fct_ns = end - o->start_ns;
        o->slowdown = o->ideal_ns > 0 ? (double)o->fct_ns / (double)o->ideal_ns : 0;
    }
    int64_t stop = o->completed ? end : o->start_ns;
    for (size_t i = 0; i < nd; i++)
        if (!o->completed && d[i].tx > stop)
            stop = d[i].tx;

    /* one-way queueing of data packets */
    int64_t qsum = 0;
    uint64_t qn = 0;
    for (size_t i = 0; i < nd; i++) {
        if (d[i].rx < 0 || !d[i].payload)
            continue;
        int64_t q = d[i].rx - d[i].tx -
                    qr_unloaded_latency_ns(x->topo, fl->src, fl->dst, d[i].pk->pk.ip_len,
                                           c->links.rate_bps, c->links.delay_ns);
        if (q < 0)
            q = 0;
        qsum += q;
        qn++;
        if (q > o->queue_max_ns)
            o->queue_max_ns = q;
    }
    o->queue_mean_ns = qn ? qsum / (int64_t)qn : 0;

    /* the receiver's ACK holds: an ACK's send time minus the arrival of the oldest data it
     * acknowledges for the first time (the first to arrive after the receiver's previous ACK).
     * An ACK the delayed-ACK timer would have sent but a later segment forced out early (a
     * duplicate, say) is still held from the first. */
    int64_t *hold = calloc(na ? na : 1, sizeof *hold);
    sev *ev = malloc((nd + na + 1) * sizeof *ev);
    if (!hold || !ev) {
        free(hold);
        free(ev);
        return QR_ENOMEM;
    }
    {
        /* data arrivals at the receiver in time order */
        size_t k = 0;
        for (size_t i = 0; i < nd; i++)
            if (d[i].rx >= 0 && (d[i].payload || (d[i].pk->pk.tcp_flags & QR_TCP_FIN)))
                ev[k++] = (sev){d[i].rx, (uint32_t)i, 0};
        qsort(ev, k, sizeof *ev, sev_cmp);
        size_t p = 0;
        uint32_t acked = 0;
        int64_t first_rx = -1;
        for (size_t j = 0; j < na; j++) {
            for (; p < k && ev[p].t <= a[j].tx; p++)
                if (first_rx < 0)
                    first_rx = ev[p].t;
            const qr_packet *ap = &a[j].pk->pk;
            uint32_t an = ap->ack - isn;
            hold[j] = -1;
            if (!(ap->tcp_flags & QR_TCP_SYN) && first_rx >= 0 && an > acked) {
                hold[j] = a[j].tx - first_rx;
                if (hold[j] >= x->delack_ns && x->delack_ns > 0) {
                    o->delayed_acks++;
                    if ((rc = add_event(x, f, QR_EV_DELACK, a[j].tx, qr_packet_id(A, a[j].pk->seq),
                                        an, hold[j], 0, 0)))
                        goto out;
                }
            }
            if (an > acked && !(ap->tcp_flags & QR_TCP_SYN))
                acked = an;
            if (ap->tcp_flags & QR_TCP_ACK)
                first_rx = -1;
        }
    }

    /* the sender's timeline */
    size_t ne = 0;
    for (size_t i = 0; i < nd; i++)
        ev[ne++] = (sev){d[i].tx, (uint32_t)i, 0};
    for (size_t j = 0; j < na; j++)
        if (a[j].rx >= 0)
            ev[ne++] = (sev){a[j].rx, (uint32_t)j, 1};
    qsort(ev, ne, sizeof *ev, sev_cmp);

    int64_t snd_max = 0, una = 0, rwnd = INT64_MAX, last_ack_rx = -1, rec_point = 0;
    int64_t last_send = -1;
    int in_rec = 0, synack_in = 0;
    qr_diag_cause rec_cause = QR_CAUSE_FAST_RETRANSMIT; /* what the current recovery counts to */
    uint32_t dupacks = 0;
    int64_t dup_thresh_t = -1;
    int zero_open = 0;
    int64_t t_prev = o->start_ns;
    int64_t cause_ns[QR_CAUSES] = {0};
    int cur_part = QR_PART_HANDSHAKE;
    int64_t held_for_next = -1; /* the hold of the ACK ending the current gap */
    for (size_t q = 0; q <= ne; q++) {
        int64_t t = q < ne ? ev[q].t : stop;
        if (t > stop)
            t = stop;
        /* classify the gap [t_prev, t) by the state after the previous event */
        int part = cur_part;
        int timer = 0;
        qr_diag_cause timer_sub = QR_CAUSE_RTO; /* the sub-cause of a timer's retransmission */
        if (q < ne && !ev[q].ack) {
            const dpkt *p = &d[ev[q].i];
            int64_t s = (int64_t)(uint32_t)(p->pk->pk.seq - isn);
            int isdata = p->payload || (p->pk->pk.tcp_flags & QR_TCP_FIN);
            if (isdata && s < snd_max && synack_in) {
                /* a timer's retransmission comes after silence: no ACK and no send just before */
                int64_t last = last_ack_rx > last_send ? last_ack_rx : last_send;
                timer = last < 0 || ev[q].t - last > x->ack_clock_ns;
                if (timer)
                    timer_sub = rto_cause(x, d, nd, a, na, hold, isn, s, ev[q].t);
            }
        }
        if (part != QR_PART_HANDSHAKE) {
            if (timer)
                part = timer_sub == QR_CAUSE_DELACK ? QR_PART_DELACK : QR_PART_RTO;
            else if (in_rec)
                part = QR_PART_RECOVERY;
            else if (snd_max < data_end && rwnd < snd_max - una + (int64_t)mss)
                part = QR_PART_RWND; /* also nothing in flight before a closed window */
            else if (snd_max < data_end && una >= snd_max)
                part = QR_PART_APP;
            else
                part = QR_PART_SENDING;
        }
        if (t > t_prev) {
            int64_t gap = t - t_prev;
            /* the time the host's link spent sending its other packets: the flow waited its
             * turn on it (sharing, not the application, not a held ACK) */
            const struct host_busy *hb = &x->busy[fl->src];
            int64_t shared = 0;
            if (part == QR_PART_APP || part == QR_PART_SENDING)
                shared = host_busy_until(hb, t) - host_busy_until(hb, t_prev);
            if (part == QR_PART_SENDING && held_for_next >= x->delack_ns && x->delack_ns > 0 &&
                q < ne && ev[q].ack) {
                /* the ACK ending the gap was held by the delayed-ACK timer: the sender's idle
                 * time waiting on it is the stall */
                int64_t h = held_for_next < gap - shared ? held_for_next : gap - shared;
                o->part_ns[QR_PART_DELACK] += h;
                cause_ns[QR_CAUSE_DELACK] += h;
                gap -= h;
            }
            if (part == QR_PART_APP) {
                o->part_ns[QR_PART_QUEUEING] += shared;
                cause_ns[QR_CAUSE_CONGESTION] += shared;
                gap -= shared;
            }
            o->part_ns[part] += gap;
            if (part == QR_PART_RECOVERY)
                cause_ns[rec_cause] += gap;
            else if (part == QR_PART_RWND)
                cause_ns[QR_CAUSE_RECEIVER] += gap;
            else if (part == QR_PART_APP)
                cause_ns[QR_CAUSE_APP] += gap;
            else if (part == QR_PART_HANDSHAKE && (o->syn_sent > 1 || o->synack_sent > 1))
                cause_ns[QR_CAUSE_HANDSHAKE] += gap;
            if (timer)
                cause_ns[timer_sub] += gap;
        }
        if (t >= stop || q == ne)
            break;
        t_prev = t;
        held_for_next = -1;
        /* apply event q */
        if (ev[q].ack) {
            const dpkt *p = &a[ev[q].i];
            const qr_packet *ap = &p->pk->pk;
            if (ap->tcp_flags & QR_TCP_SYN) {
                if (!synack_in) {
                    synack_in = 1;
                    cur_part = QR_PART_SENDING;
                }
                last_ack_rx = ev[q].t;
                continue;
            }
            int64_t an = (int64_t)(uint32_t)(ap->ack - isn);
            int64_t win = (int64_t)ap->window << ws;
            if (an > una) {
                una = an;
                dupacks = 0;
                dup_thresh_t = -1;
                if (in_rec && una >= rec_point)
                    in_rec = 0;
            } else if (an == una && p->payload == 0 && win == rwnd && una < snd_max &&
                       !(ap->tcp_flags & QR_TCP_FIN)) {
                dupacks++;
                if (dupacks > o->max_dupacks)
                    o->max_dupacks = dupacks;
                if (dupacks == x->dupthresh) {
                    dup_thresh_t = ev[q].t;
                    if ((rc = add_event(x, f, QR_EV_DUPACK, ev[q].t, qr_packet_id(A, p->pk->seq),
                                        (uint64_t)an, dupacks, 0, 0)))
                        goto out;
                }
            }
            if (win == 0 && !zero_open) {
                o->zero_windows++;
                if ((rc = add_event(x, f, QR_EV_ZERO_WINDOW, ev[q].t, qr_packet_id(A, p->pk->seq),
                                    (uint64_t)an, 0, 0, 0)))
                    goto out;
            }
            zero_open = win == 0;
            rwnd = win;
            last_ack_rx = ev[q].t;
            /* the next gap, if it ends at an ACK, may be that ACK's hold */
            if (q + 1 < ne && ev[q + 1].ack)
                held_for_next = hold[ev[q + 1].i];
        } else {
            const dpkt *p = &d[ev[q].i];
            const qr_packet *dp = &p->pk->pk;
            uint64_t id = qr_packet_id(D, p->pk->seq);
            if (dp->tcp_flags & QR_TCP_SYN) {
                if (o->syn_sent > 1 && p != &d[0] &&
                    (rc = add_event(x, f, QR_EV_SYN, ev[q].t, id, 0, o->syn_sent, 0, 0)))
                    goto out;
                continue;
            }
            int64_t s = (int64_t)(uint32_t)(dp->seq - isn);
            int64_t len = p->payload + ((dp->tcp_flags & QR_TCP_FIN) ? 1 : 0);
            if (!len)
                continue;
            if (p->rx < 0 &&
                (rc = add_event(x, f, QR_EV_LOST, ev[q].t, id, (uint64_t)s, len, 0, 0)))
                goto out;
            if (s < snd_max) {
                o->retransmissions++;
                if (timer) {
                    o->rtos++;
                    qr_diag_cause sub = timer_sub;
                    /* what it resends until everything sent before is acknowledged (go-back-N
                     * in slow start) is the RTO's recovery */
                    in_rec = 1;
                    rec_point = snd_max;
                    rec_cause = sub;
                    if ((rc = add_event(x, f, QR_EV_RTO, ev[q].t, id, (uint64_t)s, (int64_t)sub, 0,
                                        0)))
                        goto out;
                } else if (!in_rec) {
                    o->fast_retransmits++;
                    int rec_late = dupacks > x->dupthresh;
                    o->late_fast_retransmits += (uint32_t)rec_late;
                    rec_cause = rec_late ? QR_CAUSE_LATE_FR : QR_CAUSE_FAST_RETRANSMIT;
                    in_rec = 1;
                    rec_point = snd_max;
                    if (rec_late && dup_thresh_t >= 0)
                        cause_ns[QR_CAUSE_LATE_FR] += ev[q].t - dup_thresh_t;
                    if ((rc = add_event(x, f, QR_EV_FAST, ev[q].t, id, (uint64_t)s, dupacks, 0, 0)))
                        goto out;
                } else if ((rc = add_event(x, f, QR_EV_RECOVERY, ev[q].t, id, (uint64_t)s, dupacks,
                                           0, 0))) {
                    goto out;
                }
            }
            if (s + len > snd_max)
                snd_max = s + len;
            last_send = ev[q].t;
        }
    }
    /* what the handshake would have taken on an empty network stays "handshake"; sending time
     * beyond the ideal transfer is queueing and sharing */
    if (o->part_ns[QR_PART_SENDING] > transfer) {
        int64_t qpart = o->part_ns[QR_PART_SENDING] - transfer;
        o->part_ns[QR_PART_QUEUEING] += qpart;
        o->part_ns[QR_PART_SENDING] -= qpart;
        cause_ns[QR_CAUSE_CONGESTION] += qpart;
    }
    /* the cause: the one that cost the most time, if it cost at least 5% of the flow's time */
    o->cause = QR_CAUSE_NONE;
    int64_t best = (stop - o->start_ns) / 20;
    for (int k = 1; k < QR_CAUSES; k++)
        if (cause_ns[k] > best) {
            best = cause_ns[k];
            o->cause = (qr_diag_cause)k;
        }
out:
    free(hold);
    free(ev);
    return rc;
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
        x->tp[k][m] = (qr_tc_pkt){&d[i].pk->pk, d[i].tx, d[i].rx};
        x->tp_rec[k][m] = d[i].pk;
        m++;
    }
    *out = (qr_tc_dir){x->tp[k], m, seen};
    return QR_OK;
}

/* What slowed exchange e (of duration dur) most. Queueing counts only from one full packet's
 * time at the path's rate (path_bps; 0: unknown): less than that is no packet waiting for
 * another, but the hosts' and the capture's own jitter (a 70-byte request 2 us late is not
 * congestion). */
static qr_diag_cause exchange_cause(const qr_tc_exchange *e, int64_t dur, uint64_t path_bps)
{
    static const qr_diag_cause of_part[QR_TC_PARTS] = {[QR_TC_PART_TRANSFER] = QR_CAUSE_NONE,
                                                       [QR_TC_PART_QUEUEING] = QR_CAUSE_CONGESTION,
                                                       [QR_TC_PART_RTO] = QR_CAUSE_RTO,
                                                       [QR_TC_PART_TLP] = QR_CAUSE_TLP,
                                                       [QR_TC_PART_RECOVERY] =
                                                           QR_CAUSE_FAST_RETRANSMIT,
                                                       [QR_TC_PART_RWND] = QR_CAUSE_RECEIVER,
                                                       [QR_TC_PART_APP] = QR_CAUSE_APP,
                                                       [QR_TC_PART_LOSS] = QR_CAUSE_LOSS,
                                                       [QR_TC_PART_DELACK] = QR_CAUSE_DELACK};
    /* what took it beyond its ideal: nothing, if it stayed within 5% of it */
    if (e->ideal_ns > 0 && e->end_ns >= 0 && dur - e->ideal_ns < dur / 20)
        return QR_CAUSE_NONE;
    int64_t queue_floor = path_bps ? qri_wire_ns(QR_MTU_BYTES, path_bps) : 0;
    int64_t part[QR_TC_PARTS];
    memcpy(part, e->part_ns, sizeof part);
    if (e->lost == 0 && e->spurious > 0) {
        /* every resend was spurious (the data had arrived): the sender waited for late ACKs,
         * not for a loss to be repaired */
        static const int repair[] = {QR_TC_PART_RTO, QR_TC_PART_TLP, QR_TC_PART_RECOVERY,
                                     QR_TC_PART_LOSS};
        for (size_t i = 0; i < sizeof repair / sizeof repair[0]; i++) {
            part[QR_TC_PART_QUEUEING] += part[repair[i]];
            part[repair[i]] = 0;
        }
    }
    int best = -1;
    for (int p = QR_TC_PART_QUEUEING; p < QR_TC_PARTS; p++)
        if (part[p] > dur / 20 && (best < 0 || part[p] > part[best]) &&
            (p != QR_TC_PART_QUEUEING || part[p] >= queue_floor))
            best = p;
    if (best < 0)
        return e->ideal_ns > 0 ? QR_CAUSE_NONE : QR_CAUSE_UNKNOWN;
    if (best == QR_TC_PART_RECOVERY && e->trig[QR_TC_RACK] > e->trig[QR_TC_FAST])
        return QR_CAUSE_RACK;
    return of_part[best];
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
                rc =
                    add_event(x, f, of_trig[in->trigger], t, id, seq,
                              in->trigger == QR_TC_RTO ? (int64_t)QR_CAUSE_RTO : in->dupacks, 0, 0);
            if (!rc && in->reordered)
                rc = add_event(x, f, QR_EV_REORDERED, t, id, seq, in->len, 0, 0);
            if (!rc && in->spurious)
                rc = add_event(x, f, QR_EV_SPURIOUS, t, id, seq, in->len, 0, 0);
        }
    }
    return rc;
}

/* The exchanges of flow f into o (and, in the first pass, x->out->exchanges). For an import, the
 * flow's row is the connection's: both directions, every exchange. */
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
    qr_tc_conn c;
    if ((rc = qr_tc_analyse(&c, dirs, &x->tcfg, NULL))) {
        qr_tc_conn_free(&c);
        return rc;
    }
    uint32_t first_exchange = o->first_exchange;
    if (x->imported) {
        uint8_t sel = o->selected;
        memset(o, 0, sizeof *o);
        o->selected = sel;
        o->flow = f;
        o->src = fl->src;
        o->dst = fl->dst;
        o->bytes = c.dir[0].bytes;
        o->start_ns = c.first_ns;
        o->fct_ns = -1;
    }
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
    if (!rc && x->imported) {
        /* the connection: its handshake, then its exchanges; the idle between them is the
         * application's */
        const qr_diag_exchange *ex = c.n_ex ? out->exchanges + o->first_exchange : NULL;
        int done = c.n_ex > 0;
        int64_t last_end = -1, hs_end = -1;
        if (c.handshake_ns >= 0)
            hs_end =
                c.first_ns > INT64_MAX - c.handshake_ns ? INT64_MAX : c.first_ns + c.handshake_ns;
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
            o->fct_ns =
                (int64_t)((__int128)last_end - c.first_ns > INT64_MAX ? INT64_MAX
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
            o->lost_data += st->lost;
            o->lost_acks += st->lost_acks;
            if (st->max_dupacks > o->max_dupacks)
                o->max_dupacks = st->max_dupacks;
            o->dupacks += st->dupacks;
            if (st->dupack_run > o->dupack_run)
                o->dupack_run = st->dupack_run;
            o->zero_windows += st->zero_window_episodes;
        }
        o->syn_sent = 0;
        o->synack_sent = 0;
        for (size_t i = 0; i < dirs[0].n; i++)
            o->syn_sent += (dirs[0].p[i].pk->tcp_flags & QR_TCP_SYN) != 0;
        for (size_t i = 0; i < dirs[1].n; i++)
            o->synack_sent += (dirs[1].p[i].pk->tcp_flags & QR_TCP_SYN) != 0;
        if ((o->syn_sent > 1 || o->synack_sent > 1) && c.handshake_ns > worst_len / 2)
            o->cause = QR_CAUSE_HANDSHAKE;
        if (o->syn_sent > 0 && c.handshake_ns < 0 && c.n_ex == 0) {
            /* never established: every SYN went unanswered, or was refused; its whole time was
             * the handshake's (the SYNs sent and when, in syn_sent and the SYN events) */
            o->cause = QR_CAUSE_HANDSHAKE;
            o->part_ns[QR_PART_HANDSHAKE] = c.last_ns - c.first_ns;
        }
        if (x->events)
            rc = conn_events(x, f, &c, dirs);
    }
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
    if (o->ack_clock_ns <= 0) {
        o->ack_clock_ns = x.c->tcp.min_rto_ns / 2;
        if (o->ack_clock_ns > 1000000 || o->ack_clock_ns <= 0)
            o->ack_clock_ns = 1000000;
    }
    if (o->delack_ns <= 0)
        o->delack_ns = x.c->tcp.delack_timeout_ns / 2;
    x.ack_clock_ns = o->ack_clock_ns;
    x.delack_ns = o->delack_ns;
    x.dupthresh = o->dupthresh;
    x.out = out;
    x.imported = qr_recording_imported(rec);
    out->imported = x.imported;
    out->network_known = qr_recording_network_known(rec);
    if (o->idle_ns <= 0)
        o->idle_ns = 1000000;
    if (o->rto_min_ns <= 0)
        o->rto_min_ns = x.imported ? 200000000 : x.c->tcp.min_rto_ns;
    qr_tc_cfg_default(&x.tcfg);
    x.tcfg.dupthresh = o->dupthresh;
    x.tcfg.ack_clock_ns = o->ack_clock_ns;
    x.tcfg.idle_ns = o->idle_ns;
    x.tcfg.rto_min_ns = o->rto_min_ns;
    x.tcfg.tlp = x.imported && !o->no_tlp; /* ns-3's TCP has no tail-loss probe */
    x.tcfg.rate_bps = o->path_rate_bps     ? o->path_rate_bps
                      : out->network_known ? x.c->links.rate_bps
                                           : 0;
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
    size_t total = 0;
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
    for (uint32_t h = 0; h < hosts; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (p[i].dir < n_dirs)
                x.dir_count[p[i].dir]++;
        total += n;
    }
    x.idx = malloc((total ? total : 1) * sizeof *x.idx);
    if (!x.idx) {
        rc = QR_ENOMEM;
        goto done;
    }
    for (size_t d = 0, acc = 0; d < n_dirs; d++) {
        x.dir_first[d] = (uint32_t)acc;
        acc += x.dir_count[d];
        x.dir_count[d] = 0;
    }
    for (uint32_t h = 0; h < hosts; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (p[i].dir < n_dirs)
                x.idx[x.dir_first[p[i].dir] + x.dir_count[p[i].dir]++] = &p[i];
    }
    /* pass 1: every flow */
    for (uint32_t f = 0; f < n_flows; f++) {
        if ((!x.imported && (rc = analyse(&x, f, &out->flows[f]))) ||
            (rc = analyse_conn(&x, f, &out->flows[f], 1)))
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
    for (uint32_t k = 0; k < QR_DIAG_CLASSES; k++) {
        size_t m = 0;
        for (size_t f = 0; f < n_flows; f++)
            if (out->flows[f].completed && out->flows[f].size_class == k)
                sd[m++] = out->flows[f].slowdown;
        out->class_flows[k] = (uint32_t)m;
        if (!m)
            continue;
        qsort(sd, m, sizeof *sd, cmp_double);
        out->class_threshold[k] = sd[qr_percentile_rank(o->tail, m) - 1];
    }
    for (size_t f = 0; f < n_flows; f++) {
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
        uint8_t sel = fl->selected;
        uint32_t fx = fl->first_exchange;
        if (!x.imported && (rc = analyse(&x, f, fl)))
            goto done;
        fl->selected = sel;
        fl->first_exchange = fx;
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
