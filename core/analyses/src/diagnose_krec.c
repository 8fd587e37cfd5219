/* The connection model of one flow from its hosts' kernel records (qr_diagnose_records): no
 * packet's arrival is known, so the model is made from what the records hold instead of from
 * packets both ways (tcpconn.h):
 *  - exchanges from the applications' socket calls: a direction's sends split where everything
 *    sent had arrived and the other side sent in between (a request and its response), or where
 *    everything sent had arrived idle_ns before the next send. An exchange starts at its first send
 * call (or its first segment, if earlier: a call's time is its return) and ends when the data of
 * the receive call that brought the bytes read to its last byte arrived (the receiver's record;
 *    without it the end is unknown);
 *  - each segment the sender handed to its NIC, its send time inferred from the record's samples,
 *    its resends with the kernel's reason (RTO, fast, probe) and whether each arrived as a
 *    duplicate at the receiver (then it was not needed); a transmission is lost where the set
 *    tagged it (krec_recording.h);
 *  - the parts of an exchange's time: waiting on the timer (by why it fired, where both ends were
 *    recorded: its loss was the last data, fewer than dupthresh segments after it arrived, it
 *    resent a lost resend, or its data had arrived and been read before the timer fired: the
 *    ACKs were lost), on a tail-loss probe, in a fast recovery, on an unexplained resend, on the
 *    receiver's zero window, on the application (everything sent had been read and the next send
 *    had not come); the rest is sending, up to the ideal, and beyond it queueing and sharing.
 * The ideal is the one-way path's (the topology's on the scenario's network, else half the
 * handshake's round trip at --path-rate); unknown otherwise, and so is the cause of an exchange
 * that shows nothing else. */
#include <stdlib.h>
#include <string.h>

#include "diagnose_internal.h"
#include "qreplay/krec_recording.h"
#include "qreplay/krecord.h"
#include "qreplay/packet.h"
#include "qreplay/units.h"

#define SYN 0x02
#define FIN 0x01
#define RST 0x04

/* One end of the connection (k NULL: not recorded). */
typedef struct {
    const qr_krec *k;
    uint32_t c;
    int whole; /* its record lost no event */
} kend;

/* An end's socket calls of one kind with data: their times (the recording's clock) and the bytes
 * through each (cumulative). A receive call's time is when its data arrived (the record's
 * `ready`; the call's own where unknown): what the network delivered, not when the application
 * read it. */
typedef struct {
    int64_t *t;
    int64_t *cum;
    size_t n;
} calls_t;

static void calls_free(calls_t *c)
{
    free(c->t);
    free(c->cum);
    memset(c, 0, sizeof *c);
}

static int calls_load(const kend *e, uint32_t kind, int64_t base, calls_t *o)
{
    size_t n = 0;
    const qr_krec_event *ev = e->k ? qr_krec_calls(e->k, e->c, &n) : NULL;
    memset(o, 0, sizeof *o);
    o->t = malloc((n ? n : 1) * sizeof *o->t);
    o->cum = malloc((n ? n : 1) * sizeof *o->cum);
    if (!o->t || !o->cum)
        return QR_ENOMEM;
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == kind && ev[i].bytes > 0) {
            int64_t t = (kind == 1 && ev[i].ready_ns >= 0 ? ev[i].ready_ns : ev[i].t_ns) - base;
            if (o->n && t < o->t[o->n - 1])
                t = o->t[o->n - 1];
            acc += ev[i].bytes;
            o->t[o->n] = t;
            o->cum[o->n++] = acc;
        }
    return QR_OK;
}

/* The first of v[0..n) (increasing) at or above x (n: none). */
static size_t first_at_least(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first call through which the bytes reached b (c->n: none). */
static size_t calls_index(const calls_t *c, uint64_t b)
{
    return first_at_least(c->cum, c->n, b > INT64_MAX ? INT64_MAX : (int64_t)b);
}

/* When the bytes through the calls first reached b (-1: never). */
static int64_t calls_reached(const calls_t *c, uint64_t b)
{
    size_t i = calls_index(c, b);
    return i < c->n ? c->t[i] : -1;
}

/* How many calls came at or before t. */
static size_t calls_by(const calls_t *c, int64_t t)
{
    return t == INT64_MAX ? c->n : first_at_least(c->t, c->n, t + 1);
}

static uint64_t calls_bytes_by(const calls_t *c, int64_t t)
{
    size_t i = calls_by(c, t);
    return i ? (uint64_t)c->cum[i - 1] : 0;
}

/* The labels of an exchange's waits, the first the most telling where they overlap: the timer by
 * why it fired (in rank order), a probe, a fast recovery, an unexplained resend, the receiver's
 * window, the application. */
static const uint8_t why_rank[] = {QR_TC_WHY_RETX_LOST, QR_TC_WHY_TAIL,     QR_TC_WHY_FEW_DUPACKS,
                                   QR_TC_WHY_ACK_LOST,  QR_TC_WHY_ACK_HELD, QR_TC_WHY_PLAIN,
                                   QR_TC_WHY_UNKNOWN};
enum { L_RTO = 0, L_TLP = QR_TC_WHYS, L_RECOVERY, L_LOSS, L_RWND, L_APP, L_N };

typedef struct {
    int64_t t;
    int label, step;
} wait_ev;

typedef struct {
    wait_ev *v;
    size_t n, cap;
    int64_t lo, hi; /* the exchange's span: waits are clipped to it */
} waits;

static int waits_add(waits *w, int64_t a, int64_t b, int label)
{
    if (a < w->lo)
        a = w->lo;
    if (b > w->hi)
        b = w->hi;
    if (b <= a)
        return QR_OK;
    if (qri_reserve((void **)&w->v, &w->cap, w->n + 2, sizeof *w->v, 16))
        return QR_ENOMEM;
    w->v[w->n++] = (wait_ev){a, label, 1};
    w->v[w->n++] = (wait_ev){b, label, -1};
    return QR_OK;
}

static int wait_cmp(const void *a, const void *b)
{
    const wait_ev *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Each label's time where it is the first of those waiting. */
static void waits_sum(waits *w, int64_t out[L_N])
{
    int active[L_N] = {0};
    memset(out, 0, L_N * sizeof *out);
    if (w->n)
        qsort(w->v, w->n, sizeof *w->v, wait_cmp);
    for (size_t i = 0; i < w->n; i++) {
        if (i > 0 && w->v[i].t > w->v[i - 1].t)
            for (int l = 0; l < L_N; l++)
                if (active[l]) {
                    out[l] += w->v[i].t - w->v[i - 1].t;
                    break;
                }
        active[w->v[i].label] += w->v[i].step;
    }
}

/* What the diagnosis of one connection reads. */
typedef struct {
    qri_diag_ctx *x;
    kend end[2]; /* end[k]: the sender of direction k */
    const qr_rec_packet *pk[2];
    const qr_krec_seg *seg[2];
    size_t n[2];
    int64_t isn[2]; /* -1: its SYN was not recorded */
    calls_t sends[2], reads[2];
    uint32_t host[2]; /* host[k]: direction k's sender */
    uint32_t mss[2], hdr[2];
    int64_t rtt_ns; /* the handshake's round trip at the opener (-1: unknown) */
} kconn;

static int64_t rel_seq(const kconn *m, int k, uint32_t seq)
{
    return (int64_t)(uint32_t)(seq - (uint32_t)m->isn[k]);
}

/* Why the timer fired for resend j of direction k (of original o). */
static int rto_why(const kconn *m, int k, size_t j, size_t o)
{
    const kend *rcv = &m->end[k ^ 1];
    if (!rcv->whole)
        return QR_TC_WHY_UNKNOWN;
    if (m->seg[k][j].duplicate) {
        /* its data had arrived: read before the timer fired, the ACKs were lost */
        int64_t t = calls_reached(&m->reads[k], (uint64_t)(rel_seq(m, k, m->pk[k][o].pk.seq) - 1 +
                                                           qr_tcp_payload(&m->pk[k][o].pk)));
        return t >= 0 && t <= m->pk[k][j].pk.time_ns ? QR_TC_WHY_ACK_LOST : QR_TC_WHY_UNKNOWN;
    }
    if (m->seg[k][o].resend >= 0)
        return QR_TC_WHY_RETX_LOST;
    uint32_t after = 0;
    for (size_t i = o + 1; i < j; i++)
        after +=
            m->seg[k][i].resend < 0 && !m->pk[k][i].drop_tag && qr_tcp_payload(&m->pk[k][i].pk) > 0;
    return after == 0                     ? QR_TC_WHY_TAIL
           : after < m->x->tcfg.dupthresh ? QR_TC_WHY_FEW_DUPACKS
                                          : QR_TC_WHY_PLAIN;
}

/* Resend j of direction k: its counts in e, its wait in w, its packet's info in in. */
static int one_resend(const kconn *m, int k, size_t j, qr_tc_exchange *e, waits *w,
                      qr_tc_pkt_info *in)
{
    static const uint8_t trig[] = {QR_TC_TLP, QR_TC_FAST, QR_TC_RTO, QR_TC_UNKNOWN_TRIGGER};
    const qr_krec_seg *s = &m->seg[k][j];
    size_t o = s->orig;
    int whole = m->end[k ^ 1].whole;
    e->retransmissions++;
    e->trig[trig[s->resend]]++;
    e->spurious += s->duplicate;
    in->trigger = trig[s->resend];
    in->spurious = s->duplicate;
    int64_t a = m->pk[k][o].pk.time_ns, b = m->pk[k][j].pk.time_ns;
    if (s->resend == QR_KREC_RTO) {
        int why = rto_why(m, k, j, o);
        in->why = (uint8_t)why;
        int rank = 0;
        while (why_rank[rank] != why)
            rank++;
        return waits_add(w, a, b, L_RTO + rank);
    }
    if (s->duplicate || (!whole && s->resend != QR_KREC_FAST))
        return QR_OK; /* not needed, or (no receiver's evidence) a resend that concludes nothing */
    return waits_add(w, a, b,
                     s->resend == QR_KREC_PROBE  ? L_TLP
                     : s->resend == QR_KREC_FAST ? L_RECOVERY
                                                 : L_LOSS);
}

/* A direction's exchange while it is made: the send calls it holds. */
typedef struct {
    qr_tc_exchange e;
    size_t call_lo, call_hi; /* its send calls [call_lo, call_hi) */
    int shared_read;         /* the read of its last byte read the next exchange's too: its end is
                                when that read's last byte arrived, later than its own */
} kex;

/* Direction k's exchanges from its sender's send calls (see the top). */
static int dir_exchanges(const kconn *m, int k, kex **out, size_t *n_out)
{
    const calls_t *s = &m->sends[k], *r = &m->reads[k], *opp = &m->sends[k ^ 1];
    int have_rcv = m->end[k ^ 1].k != NULL;
    int64_t idle = m->x->tcfg.idle_ns;
    size_t n = 0, cap = 0;
    kex *v = NULL;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t before = i ? (uint64_t)s->cum[i - 1] : 0;
        int fresh = i == 0;
        if (!fresh) {
            /* a turn (a request's response, the next request) once everything sent had arrived;
             * or idle: everything had arrived idle_ns before (a two-way bulk's sides send at
             * once: neither splits the other) */
            int turn = calls_by(opp, s->t[i]) > calls_by(opp, s->t[i - 1]);
            if (have_rcv)
                fresh = (turn && calls_bytes_by(r, s->t[i]) >= before) ||
                        calls_bytes_by(r, s->t[i] - idle) >= before;
            else
                fresh = turn || s->t[i] - s->t[i - 1] >= idle;
        }
        if (fresh) {
            if (qri_grow((void **)&v, &cap, n, sizeof *v, 8))
                return free(v), QR_ENOMEM;
            memset(&v[n], 0, sizeof v[n]);
            v[n].e.dir = (uint32_t)k;
            v[n].e.seq_lo = (int64_t)before + 1;
            v[n].e.start_ns = s->t[i];
            v[n].call_lo = i;
            n++;
        }
        v[n - 1].e.seq_hi = (int64_t)s->cum[i] + 1;
        v[n - 1].call_hi = i + 1;
    }
    for (size_t q = 0; q < n; q++) {
        qr_tc_exchange *e = &v[q].e;
        e->bytes = (uint64_t)(e->seq_hi - e->seq_lo);
        e->end_ns = have_rcv ? calls_reached(r, (uint64_t)e->seq_hi - 1) : -1;
        if (e->end_ns >= 0)
            v[q].shared_read = r->cum[calls_index(r, (uint64_t)e->seq_hi - 1)] > e->seq_hi - 1;
        if (e->end_ns >= 0 && e->end_ns < e->start_ns)
            e->end_ns = e->start_ns; /* read as it was sent: the hosts' clocks within a sample */
        e->status = e->end_ns >= 0 ? QR_TC_COMPLETE : have_rcv ? QR_TC_OPEN : QR_TC_NO_ACKS;
        e->vantage = (uint8_t)(QR_TC_AT_SENDER | (have_rcv ? QR_TC_AT_RECEIVER : 0));
    }
    *out = v;
    *n_out = n;
    return QR_OK;
}

/* The exchange of direction k (of ex[0..n), in sequence order) that holds relative sequence
 * number rel; -1: none. */
static long exchange_of(const kex *ex, size_t n, int64_t rel)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ex[mid].e.seq_lo <= rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && rel < ex[lo - 1].e.seq_hi ? (long)lo - 1 : -1;
}

/* The first of direction k's segments sent at or after t (n[k]: none). */
static size_t segment_after(const kconn *m, int k, int64_t t)
{
    size_t lo = 0, hi = m->n[k];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->pk[k][mid].pk.time_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The ideal of exchange e: the first of its bytes leaving its sender to the last arriving, alone
 * on the path (0: unknown). */
static int64_t exchange_ideal(const kconn *m, const qr_tc_exchange *e, uint64_t rate_bps)
{
    qri_diag_ctx *x = m->x;
    int k = (int)e->dir;
    if (x->out->network_known && x->topo)
        return qri_diag_transfer_ideal(x, m->host[k], m->host[k ^ 1], e->bytes, m->mss[k],
                                       m->hdr[k]);
    if (!rate_bps || m->rtt_ns < 0)
        return 0;
    uint32_t mss = m->mss[k] ? m->mss[k] : 1;
    uint64_t npk = (e->bytes + mss - 1) / mss;
    return m->rtt_ns / 2 +
           (int64_t)npk * qri_wire_ns(mss + m->hdr[k] + QR_LINK_OVERHEAD_BYTES, rate_bps);
}

/* Exchange x of direction k: its segments seg[0..ns) (indices of the direction's), their info,
 * its waits and parts, its ideal. */
static int exchange_parts(const kconn *m, int k, kex *xe, const size_t *seg, size_t ns,
                          qr_tc_pkt_info *info, waits *w, int64_t last_ns, uint64_t rate_bps)
{
    qr_tc_exchange *e = &xe->e;
    int64_t stop = e->end_ns >= 0 ? e->end_ns : last_ns;
    int whole = m->end[k ^ 1].whole;
    w->n = 0;
    w->lo = e->start_ns;
    w->hi = stop > e->start_ns ? stop : e->start_ns;
    int rc = QR_OK;
    for (size_t i = 0; i < ns && !rc; i++) {
        size_t j = seg[i];
        qr_tc_pkt_info *in = &info[j];
        e->packets++;
        e->lost += m->pk[k][j].drop_tag;
        in->fate = m->pk[k][j].drop_tag ? QR_TC_LOST : whole ? QR_TC_DELIVERED : QR_TC_NOT_SEEN;
        e->not_seen += in->fate == QR_TC_NOT_SEEN;
        if (m->seg[k][j].resend >= 0)
            rc = one_resend(m, k, j, e, w, in);
    }
    /* the receiver's zero windows, seen at the sender: until it sent again */
    size_t n_arr = 0;
    const qr_krec_event *arr = qr_krec_arrivals(m->end[k].k, m->end[k].c, &n_arr);
    int64_t base = qr_krec_set_time_base(m->x->krec);
    for (size_t i = 0; i < n_arr && !rc; i++) {
        int64_t t = arr[i].t_ns - base;
        if (arr[i].kind != QR_KREC_ZERO_WINDOW || t < w->lo || t >= w->hi)
            continue;
        size_t a = segment_after(m, k, t);
        rc = waits_add(w, t, a < m->n[k] ? m->pk[k][a].pk.time_ns : w->hi, L_RWND);
    }
    /* the application: everything it had sent was read, and the next send's data had not left
     * (its call returned, or its first segment went out) */
    const calls_t *s = &m->sends[k];
    size_t p = 0;
    for (size_t i = xe->call_lo + 1; i < xe->call_hi && !rc; i++) {
        int64_t t = calls_reached(&m->reads[k], (uint64_t)s->cum[i - 1]), next = s->t[i];
        while (p < ns &&
               (m->seg[k][seg[p]].resend >= 0 ||
                info[seg[p]].seq + (int64_t)info[seg[p]].len <= (int64_t)s->cum[i - 1] + 1))
            p++;
        if (p < ns && m->pk[k][seg[p]].pk.time_ns < next)
            next = m->pk[k][seg[p]].pk.time_ns;
        if (t >= 0 && t < next)
            rc = waits_add(w, t, next, L_APP);
    }
    if (rc)
        return rc;
    int64_t lab[L_N], waited = 0;
    waits_sum(w, lab);
    for (size_t r = 0; r < sizeof why_rank; r++) {
        e->why_ns[why_rank[r]] = lab[L_RTO + r];
        e->part_ns[QR_TC_PART_RTO] += lab[L_RTO + r];
    }
    e->part_ns[QR_TC_PART_TLP] = lab[L_TLP];
    e->part_ns[QR_TC_PART_RECOVERY] = lab[L_RECOVERY];
    e->part_ns[QR_TC_PART_LOSS] = lab[L_LOSS];
    e->part_ns[QR_TC_PART_RWND] = lab[L_RWND];
    e->part_ns[QR_TC_PART_APP] = lab[L_APP];
    for (int l = 0; l < L_N; l++)
        waited += lab[l];
    int64_t rest = w->hi - w->lo - waited;
    /* the ideal needs the exchange's end (not one shared with the next exchange's bytes: then
     * the time beyond its waits is unknown) and its segments' sequence numbers */
    e->ideal_ns =
        e->end_ns >= 0 && !xe->shared_read && m->isn[k] >= 0 ? exchange_ideal(m, e, rate_bps) : 0;
    e->part_ns[QR_TC_PART_TRANSFER] = rest;
    if (e->ideal_ns > 0 && rest > e->ideal_ns) {
        e->part_ns[QR_TC_PART_QUEUEING] = rest - e->ideal_ns;
        e->part_ns[QR_TC_PART_TRANSFER] = e->ideal_ns;
    }
    e->slowdown = e->ideal_ns > 0 && e->end_ns >= 0
                      ? (double)(e->end_ns - e->start_ns) / (double)e->ideal_ns
                      : 0;
    return QR_OK;
}

/* Direction k's packets as the connection model's (x->tp[k], x->tp_rec[k]), their info, its
 * statistics. */
static int dir_packets(kconn *m, int k, qr_tc_conn *c, qr_tc_dir *dir)
{
    qri_diag_ctx *x = m->x;
    size_t n = m->n[k];
    if (qri_reserve((void **)&x->tp[k], &x->tp_cap[k], n ? n : 1, sizeof *x->tp[k], 64))
        return QR_ENOMEM;
    const qr_rec_packet **v = realloc(x->tp_rec[k], x->tp_cap[k] * sizeof *v);
    c->info[k] = calloc(n ? n : 1, sizeof *c->info[k]);
    if (!v || !c->info[k])
        return free(v == x->tp_rec[k] ? NULL : v), QR_ENOMEM;
    x->tp_rec[k] = v;
    qr_tc_dir_stats *st = &c->dir[k];
    st->seen = (m->end[k].k ? QR_TC_AT_SENDER : 0u) | (m->end[k ^ 1].k ? QR_TC_AT_RECEIVER : 0u);
    st->isn_known = m->isn[k] >= 0;
    for (size_t i = 0; i < n; i++) {
        const qr_rec_packet *p = &m->pk[k][i];
        x->tp[k][i] = (qr_tc_pkt){&p->pk, p->pk.time_ns, -1, 0};
        x->tp_rec[k][i] = p;
        uint32_t pay = qr_tcp_payload(&p->pk);
        uint8_t fl = p->pk.tcp_flags;
        qr_tc_pkt_info *in = &c->info[k][i];
        in->seq = m->isn[k] >= 0 ? rel_seq(m, k, p->pk.seq) : -1;
        in->len = pay + !!(fl & SYN) + !!(fl & FIN);
        in->exchange = -1;
        in->hold_ns = -1;
        st->syn |= !!(fl & SYN), st->fin |= !!(fl & FIN), st->rst |= !!(fl & RST);
        st->packets++;
        if (pay && m->isn[k] >= 0 && (uint64_t)(in->seq - 1 + pay) > st->bytes)
            st->bytes = (uint64_t)(in->seq - 1 + pay);
        if ((fl & SYN) && m->seg[k][i].resend >= 0) {
            st->trig[QR_TC_SYN]++, st->retransmissions++;
            in->trigger = QR_TC_SYN;
        }
    }
    *dir = (qr_tc_dir){x->tp[k], n, st->seen};
    return QR_OK;
}

static int order_cmp(const void *a, const void *b, void *ctx)
{
    const long *ex = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (ex[i] != ex[j])
        return ex[i] < ex[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* Direction k's exchanges (*ex, *n_ex) with their segments, parts and ideals. */
static int dir_model(kconn *m, int k, qr_tc_conn *c, kex **ex, size_t *n_ex, waits *w)
{
    int rc = dir_exchanges(m, k, ex, n_ex);
    size_t n = m->n[k], ns = 0;
    long *of = malloc((n ? n : 1) * sizeof *of);
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (rc || !of || !ord) {
        free(of);
        free(ord);
        return rc ? rc : QR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t pay = qr_tcp_payload(&m->pk[k][i].pk);
        of[i] = pay && m->isn[k] >= 0 ? exchange_of(*ex, *n_ex, c->info[k][i].seq) : -1;
        if (of[i] < 0)
            continue;
        ord[ns++] = i;
    }
    /* an exchange starts when its first byte left for the NIC: a send call's time is when it
     * returned (a blocking one after most of its data left), and between a call and its data
     * leaving the data waited in the host (the handshake, its own queue), not the network */
    for (size_t a = n; a-- > 0;)
        if (of[a] >= 0 && m->seg[k][a].resend < 0)
            (*ex)[of[a]].e.start_ns = m->pk[k][a].pk.time_ns;
    /* no data leaves before the handshake's end (the opener's ACK of the SYN-ACK): a send call
     * before it waited for the connection, not the network (an exchange none of whose segments
     * the record holds) */
    int64_t hs_end =
        c->handshake_ns >= 0 && m->n[0] ? m->pk[0][0].pk.time_ns + c->handshake_ns : INT64_MIN;
    for (size_t q = 0; q < *n_ex; q++)
        if ((*ex)[q].e.start_ns < hs_end)
            (*ex)[q].e.start_ns = hs_end;
    if (qri_sort(ord, ns, sizeof *ord, order_cmp, of))
        rc = QR_ENOMEM;
    for (size_t a = 0; a < ns && !rc;) {
        size_t b = a;
        while (b < ns && of[ord[b]] == of[ord[a]])
            b++;
        kex *xe = &(*ex)[of[ord[a]]];
        rc = exchange_parts(m, k, xe, ord + a, b - a, c->info[k], w, c->last_ns, c->rate_bps);
        a = b;
    }
    /* exchanges without a recorded segment: their time is all sending, their ideal unknown */
    for (size_t q = 0; q < *n_ex && !rc; q++)
        if (!(*ex)[q].e.packets)
            rc = exchange_parts(m, k, &(*ex)[q], NULL, 0, c->info[k], w, c->last_ns, 0);
    for (size_t i = 0; i < n && !rc; i++) {
        const qr_tc_pkt_info *in = &c->info[k][i];
        qr_tc_dir_stats *st = &c->dir[k];
        st->exchanges = (uint32_t)*n_ex;
        if (!qr_tcp_payload(&m->pk[k][i].pk))
            continue;
        st->data_packets += m->seg[k][i].resend < 0;
        st->lost += in->fate == QR_TC_LOST;
        st->not_seen += in->fate == QR_TC_NOT_SEEN;
        st->spurious += in->spurious;
        if (in->trigger != QR_TC_ORIGINAL) {
            st->retransmissions++;
            st->trig[in->trigger]++;
        }
    }
    for (size_t i = 0; i < n; i++)
        c->info[k][i].exchange = (int32_t)of[i]; /* dir-local: made global by the caller */
    free(of);
    free(ord);
    return rc;
}

static int kex_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const qr_tc_exchange *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->dir > y->dir) - (x->dir < y->dir);
}

/* Both directions' exchanges into c->ex in start order, each with the idle before it, and the
 * packets' exchanges made global. */
static int merge_exchanges(qr_tc_conn *c, kex *ex[2], const size_t n_ex[2], const size_t n[2])
{
    size_t total = n_ex[0] + n_ex[1];
    c->ex = calloc(total ? total : 1, sizeof *c->ex);
    if (!c->ex)
        return QR_ENOMEM;
    for (int k = 0; k < 2; k++)
        for (size_t q = 0; q < n_ex[k]; q++) {
            ex[k][q].e.seq_lo = (int64_t)q; /* its index, while sorting (seq_lo restored below) */
            c->ex[c->n_ex++] = ex[k][q].e;
        }
    if (qri_sort(c->ex, total, sizeof *c->ex, kex_cmp, NULL))
        return QR_ENOMEM;
    int64_t last_end = -1;
    for (size_t i = 0; i < total; i++) {
        qr_tc_exchange *e = &c->ex[i];
        kex *own = &ex[e->dir][e->seq_lo];
        e->seq_lo = e->seq_hi - (int64_t)e->bytes;
        own->call_lo = i; /* its global index */
        e->idle_before_ns = i == 0                                    ? -1
                            : last_end >= 0 && e->start_ns > last_end ? e->start_ns - last_end
                                                                      : 0;
        if (e->end_ns > last_end)
            last_end = e->end_ns;
    }
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n[k]; i++)
            if (c->info[k][i].exchange >= 0)
                c->info[k][i].exchange = (int32_t)ex[k][c->info[k][i].exchange].call_lo;
    return QR_OK;
}

/* The connection's own fields: when it started and was last seen, its handshake at the opener,
 * how it ended, the path's rate. */
static void conn_fields(kconn *m, qr_tc_conn *c)
{
    c->first_ns = INT64_MAX;
    c->last_ns = INT64_MIN;
    for (int k = 0; k < 2; k++) {
        if (m->n[k]) {
            if (m->pk[k][0].pk.time_ns < c->first_ns)
                c->first_ns = m->pk[k][0].pk.time_ns;
            if (m->pk[k][m->n[k] - 1].pk.time_ns > c->last_ns)
                c->last_ns = m->pk[k][m->n[k] - 1].pk.time_ns;
        }
        const calls_t *cl[2] = {&m->sends[k], &m->reads[k]};
        for (int j = 0; j < 2; j++)
            if (cl[j]->n) {
                if (cl[j]->t[0] < c->first_ns)
                    c->first_ns = cl[j]->t[0];
                if (cl[j]->t[cl[j]->n - 1] > c->last_ns)
                    c->last_ns = cl[j]->t[cl[j]->n - 1];
            }
    }
    if (c->first_ns == INT64_MAX)
        c->first_ns = c->last_ns = 0;
    /* the opener's handshake: its first SYN to its first segment without one (the ACK of the
     * SYN-ACK, sent as it arrived); a round trip if it sent one SYN */
    c->handshake_ns = m->rtt_ns = c->min_rtt_ns = -1;
    uint32_t syns = 0;
    for (size_t i = 0; i < m->n[0]; i++) {
        if (m->pk[0][i].pk.tcp_flags & SYN) {
            syns++;
            continue;
        }
        if (syns)
            c->handshake_ns = m->pk[0][i].pk.time_ns - m->pk[0][0].pk.time_ns;
        break;
    }
    if (syns == 1 && c->handshake_ns >= 0) {
        m->rtt_ns = c->min_rtt_ns = c->handshake_ns;
        c->rtt_samples = 1;
    }
    c->end = c->dir[0].rst || c->dir[1].rst   ? QR_TC_END_RESET
             : c->dir[0].fin && c->dir[1].fin ? QR_TC_END_CLOSED
                                              : QR_TC_END_OPEN;
    c->rate_bps = m->x->out->network_known ? m->x->c->links.rate_bps : m->x->tcfg.rate_bps;
}

static void kconn_free(kconn *m)
{
    for (int k = 0; k < 2; k++) {
        calls_free(&m->sends[k]);
        calls_free(&m->reads[k]);
    }
}

/* Direction k's ends, segments and calls into m. */
static int kconn_dir(kconn *m, uint32_t f, int k)
{
    const qr_krec_set *ks = m->x->krec;
    uint32_t d = 2 * f + (uint32_t)k;
    const qr_flow *fl = qr_flow_table_flow(m->x->ft, f);
    m->host[k] = k ? fl->dst : fl->src;
    kend *e = &m->end[k];
    if (qr_krec_set_end(ks, d, &e->k, &e->c) == QR_OK) {
        qr_krec_stats st;
        qr_krec_stats_get(e->k, &st);
        e->whole = st.lost_events == 0;
    }
    m->pk[k] = qr_krec_set_direction(ks, d, &m->seg[k], &m->n[k]);
    m->isn[k] = -1;
    for (size_t i = 0; i < m->n[k]; i++) {
        uint32_t pay = qr_tcp_payload(&m->pk[k][i].pk);
        if ((m->pk[k][i].pk.tcp_flags & SYN) && m->isn[k] < 0)
            m->isn[k] = m->pk[k][i].pk.seq;
        if (pay > m->mss[k]) {
            m->mss[k] = pay;
            m->hdr[k] = m->pk[k][i].pk.ip_len - pay;
        }
    }
    return QR_OK;
}

int qri_diag_krec_conn(qri_diag_ctx *x, uint32_t f, qr_tc_dir dirs[2], qr_tc_conn *c)
{
    kconn m;
    memset(&m, 0, sizeof m);
    memset(c, 0, sizeof *c);
    m.x = x;
    int64_t base = qr_krec_set_time_base(x->krec);
    int rc = QR_OK;
    for (int k = 0; k < 2 && !rc; k++)
        rc = kconn_dir(&m, f, k);
    /* sends[k]: direction k's sender's; reads[k]: its receiver's */
    for (int k = 0; k < 2 && !rc; k++) {
        rc = calls_load(&m.end[k], 0, base, &m.sends[k]);
        if (!rc)
            rc = calls_load(&m.end[k ^ 1], 1, base, &m.reads[k]);
    }
    for (int k = 0; k < 2 && !rc; k++)
        rc = dir_packets(&m, k, c, &dirs[k]);
    if (!rc)
        conn_fields(&m, c);
    kex *ex[2] = {NULL, NULL};
    size_t n_ex[2] = {0, 0};
    waits w = {0};
    for (int k = 0; k < 2 && !rc; k++)
        rc = dir_model(&m, k, c, &ex[k], &n_ex[k], &w);
    if (!rc)
        rc = merge_exchanges(c, ex, n_ex, m.n);
    free(ex[0]);
    free(ex[1]);
    free(w.v);
    kconn_free(&m);
    return rc;
}
