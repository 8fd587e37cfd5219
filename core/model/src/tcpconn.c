/* A TCP connection from its captures (tcpconn.h). */
#include "qreplay/tcpconn.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/error.h"
#include "qreplay/topology.h"

#define MSG(errbuf, code, ...) qri_err(errbuf, code, __VA_ARGS__)

const char *qr_tc_fate_name(int f)
{
    static const char *const n[] = {"-", "delivered", "lost", "not-seen"};
    return f >= 0 && f < QR_TC_FATES ? n[f] : "?";
}

const char *qr_tc_trigger_name(int t)
{
    static const char *const n[] = {"original", "rto",      "after-rto", "tlp",    "fast",
                                    "rack",     "recovery", "syn",       "unknown"};
    return t >= 0 && t < QR_TC_TRIGGERS ? n[t] : "?";
}

const char *qr_tc_why_name(int w)
{
    static const char *const n[] = {"unknown",  "rto",      "tail-drop",          "few-dupacks",
                                    "ack-lost", "ack-held", "retransmission-lost"};
    return w >= 0 && w < QR_TC_WHYS ? n[w] : "?";
}

const char *qr_tc_part_name(int p)
{
    static const char *const n[] = {"transfer", "queueing", "rto",  "tlp",    "recovery",
                                    "receiver", "app",      "loss", "delack", "reply"};
    return p >= 0 && p < QR_TC_PARTS ? n[p] : "?";
}

const char *qr_tc_status_name(int s)
{
    static const char *const n[] = {"complete", "open at capture end", "reset",
                                    "unknown (no ACKs observed)"};
    return s >= 0 && s <= QR_TC_NO_ACKS ? n[s] : "?";
}

const char *qr_tc_end_name(int e)
{
    static const char *const n[] = {"closed", "reset", "open at capture end"};
    return e >= 0 && e <= QR_TC_END_OPEN ? n[e] : "?";
}

void qr_tc_cfg_default(qr_tc_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->dupthresh = 3;
    c->ack_clock_ns = 1000000;
    c->rto_min_ns = 200000000;
    c->idle_ns = 1000000;
    c->tlp = 1;
}

int qr_tcp_timestamps(const qr_packet *p, uint32_t *val, uint32_t *ecr)
{
    size_t n, have;
    const uint8_t *v = qr_tcp_option(p->tcp_opts, p->tcp_opt_len, 8, &n, &have);
    if (!v || n != 8 || have < 8)
        return 0;
    *val = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
    *ecr = (uint32_t)v[4] << 24 | (uint32_t)v[5] << 16 | (uint32_t)v[6] << 8 | v[7];
    return 1;
}

size_t qr_tcp_sack_blocks(const qr_packet *p, uint32_t left[4], uint32_t right[4])
{
    size_t n, have;
    const uint8_t *v = qr_tcp_option(p->tcp_opts, p->tcp_opt_len, 5, &n, &have);
    if (!v || n % 8 || have < n)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i + 8 <= n && k < 4; i += 8, k++) {
        left[k] =
            (uint32_t)v[i] << 24 | (uint32_t)v[i + 1] << 16 | (uint32_t)v[i + 2] << 8 | v[i + 3];
        right[k] = (uint32_t)v[i + 4] << 24 | (uint32_t)v[i + 5] << 16 | (uint32_t)v[i + 6] << 8 |
                   v[i + 7];
    }
    return k;
}

int qr_tcp_wscale(const qr_packet *p)
{
    size_t n, have;
    const uint8_t *v = qr_tcp_option(p->tcp_opts, p->tcp_opt_len, 3, &n, &have);
    if (!v || n != 1 || have < 1)
        return -1;
    return v[0] > 14 ? 14 : v[0];
}

/* ---- working state ---- */

typedef struct {
    int64_t t;
    uint32_t i;  /* packet index in its direction */
    uint8_t ack; /* 1: a packet of the other direction (an ACK reaching the sender) */
} tev;

static int tev_cmp(const void *a, const void *b)
{
    const tev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->ack != y->ack)
        return x->ack ? -1 : 1; /* an ACK before what it triggers */
    return x->i < y->i ? -1 : x->i > y->i;
}

typedef struct {
    int64_t s, e;
} range;

typedef struct {
    const qr_tc_dir *in[2];
    qr_tc_conn *out;
    qr_tc_cfg cfg;
    uint32_t isn[2];
    int64_t *ack[2];    /* per packet of direction d: its ACK number in the other's sequence
                         * space (-1: no ACK flag) */
    uint32_t mss[2];    /* largest payload */
    uint32_t hdr[2];    /* the IP and TCP headers of the segment that carried it */
    int64_t fin_end[2]; /* the sequence after direction d's (last) FIN; 0: none */
    int ws[2];          /* shift of the windows direction d's packets advertise */
    int64_t min_rtt;
    uint32_t rtt_n;
    int64_t srtt;     /* smoothed RTT of the samples (0: none) */
    int64_t cover[2]; /* highest cumulative ACK of direction d's bytes its sender got */
    range *sacked[2]; /* every SACKed range of d ever observed (merged) */
    size_t n_sacked[2], cap_sacked[2];
    int32_t *prev_copy[2]; /* per packet: the earlier copy it resends (-1: none known) */
    /* the send time of direction d's first packet that arrived after one sent later (INT64_MAX:
     * none): a fast retransmission after more than dupthresh duplicate ACKs is late (the
     * sender's threshold grew) only after such evidence of reordering (late_fast) */
    int64_t reorder_from[2];
    uint8_t *ka[2]; /* per packet: a keep-alive (keepalives) */
    int rst;
    char *errbuf;
} tc;

/* relative sequence number of v, near the high-water mark *ref (advanced) */
static int64_t unwrap(uint32_t isn, int64_t *ref, uint32_t v)
{
    int64_t r = *ref + (int32_t)(v - (uint32_t)(isn + (uint32_t)*ref));
    if (r > *ref)
        *ref = r;
    return r;
}

static int64_t unwrap_near(uint32_t isn, int64_t ref, uint32_t v)
{
    return ref + (int32_t)(v - (uint32_t)(isn + (uint32_t)ref));
}

static uint32_t seg_len(const qr_packet *p)
{
    return qr_tcp_seq_len(qr_tcp_payload(p), p->tcp_flags);
}

static void rtt_sample(tc *x, int64_t v)
{
    if (v <= 0)
        return;
    if (x->min_rtt < 0 || v < x->min_rtt)
        x->min_rtt = v;
    /* smoothed as RFC 6298 smooths it: srtt += (sample - srtt) / 8 */
    x->srtt = x->rtt_n ? x->srtt + (v - x->srtt) / 8 : v;
    x->rtt_n++;
}

/* Add [s, e) to a merged, sorted range list. */
static int ranges_add(range **v, size_t *n, size_t *cap, int64_t s, int64_t e)
{
    if (e <= s)
        return QR_OK;
    size_t i = 0;
    while (i < *n && (*v)[i].e < s)
        i++;
    if (i < *n && (*v)[i].s <= e) {
        if (s < (*v)[i].s)
            (*v)[i].s = s;
        if (e > (*v)[i].e)
            (*v)[i].e = e;
        /* swallow the ones it now reaches */
        size_t j = i + 1;
        while (j < *n && (*v)[j].s <= (*v)[i].e) {
            if ((*v)[j].e > (*v)[i].e)
                (*v)[i].e = (*v)[j].e;
            j++;
        }
        memmove(*v + i + 1, *v + j, (*n - j) * sizeof **v);
        *n -= j - i - 1;
        return QR_OK;
    }
    if (qri_grow((void **)v, cap, *n, sizeof **v, 8))
        return QR_ENOMEM;
    memmove(*v + i + 1, *v + i, (*n - i) * sizeof **v);
    (*v)[i] = (range){s, e};
    (*n)++;
    return QR_OK;
}

static int64_t ranges_bytes_above(const range *v, size_t n, int64_t s)
{
    int64_t b = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].e > s)
            b += v[i].e - (v[i].s > s ? v[i].s : s);
    return b;
}

static int ranges_cover(const range *v, size_t n, int64_t s, int64_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m].e < e)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && v[lo].s <= s && v[lo].e >= e;
}

static void ranges_prune(range *v, size_t *n, int64_t una)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (v[i].e > una) {
            v[k] = v[i];
            if (v[k].s < una)
                v[k].s = una;
            k++;
        }
    *n = k;
}

/* Bytes [s, e) arriving at a receiver whose bytes are contiguous up to *cont: the prefix grows
 * by them and by every range held above it that they join; the rest wait in v (merged). */
static int prefix_add(range **v, size_t *n, size_t *cap, int64_t *cont, int64_t s, int64_t e)
{
    if (s <= *cont) {
        if (e > *cont)
            *cont = e;
    } else if (ranges_add(v, n, cap, s, e)) {
        return QR_ENOMEM;
    }
    while (*n && (*v)[0].s <= *cont) {
        if ((*v)[0].e > *cont)
            *cont = (*v)[0].e;
        memmove(*v, *v + 1, (*n - 1) * sizeof **v);
        (*n)--;
    }
    return QR_OK;
}

/* ---- pass 1: sequence numbers, copies ---- */

static int keepalives(const qr_tc_dir *D, uint8_t **out);

/* Direction d sent a FIN and the other side acknowledged it (as the captures show: a FIN whose
 * ACK was lost, or came after the capture ended, leaves the connection open at capture end). */
static int fin_acked(const tc *x, uint32_t d)
{
    if (!x->fin_end[d] || !x->ack[d ^ 1u])
        return 0;
    for (size_t j = 0; j < x->in[d ^ 1u]->n; j++)
        if (x->ack[d ^ 1u][j] >= x->fin_end[d])
            return 1;
    return 0;
}

static int prepare_dir(tc *x, uint32_t d)
{
    const qr_tc_dir *in = x->in[d];
    qr_tc_dir_stats *st = &x->out->dir[d];
    st->seen = in->seen;
    x->isn[d] = in->n ? in->p[0].pk->seq - 1 : 0;
    for (size_t i = 0; i < in->n; i++)
        if (in->p[i].pk->tcp_flags & QR_TCP_SYN) {
            x->isn[d] = in->p[i].pk->seq;
            st->isn_known = 1;
            break;
        }
    x->out->info[d] = calloc(in->n ? in->n : 1, sizeof *x->out->info[d]);
    x->prev_copy[d] = malloc((in->n ? in->n : 1) * sizeof *x->prev_copy[d]);
    if (!x->out->info[d] || !x->prev_copy[d])
        return QR_ENOMEM;
    int64_t ref = 0, hi = 0;
    if (keepalives(in, &x->ka[d]))
        return QR_ENOMEM;
    const uint8_t *ka = x->ka[d]; /* keep-alives: their byte (if any) was sent long ago; not a
                                   * resend */
    if (!st->isn_known) {
        /* no SYN (a capture that starts mid-connection): the stream starts at the lowest data
         * byte captured, which a later packet may hold (a resend of what came before the
         * capture); pure ACKs before it say nothing of the bytes, as tshark counts */
        int64_t r = 0, lo = INT64_MAX;
        for (size_t i = 0; i < in->n; i++)
            if (!ka[i] && qr_tcp_payload(in->p[i].pk)) {
                int64_t v = unwrap(x->isn[d], &r, in->p[i].pk->seq);
                if (v < lo)
                    lo = v;
            }
        if (lo != INT64_MAX && lo > INT32_MIN && lo < INT32_MAX)
            x->isn[d] += (uint32_t)(int32_t)(lo - 1);
    }
    qri_map last; /* sequence start -> latest copy + 1 */
    if (qri_map_init(&last))
        return QR_ENOMEM;
    int rc = QR_OK;
    x->ws[d] = -1;
    for (size_t i = 0; i < in->n; i++) {
        const qr_packet *p = in->p[i].pk;
        qr_tc_pkt_info *f = &x->out->info[d][i];
        f->seq = unwrap(x->isn[d], &ref, p->seq);
        f->len = ka[i] ? 0 : seg_len(p);
        f->exchange = -1;
        f->hold_ns = -1;
        x->prev_copy[d][i] = -1;
        uint32_t pay = qr_tcp_payload(p);
        st->packets++;
        if (pay > x->mss[d]) {
            x->mss[d] = pay;
            x->hdr[d] = p->ip_len > pay ? p->ip_len - pay : 0;
        }
        if (p->tcp_flags & QR_TCP_SYN) {
            st->syn = 1;
            if (x->ws[d] < 0)
                x->ws[d] = qr_tcp_wscale(p);
        }
        if (p->tcp_flags & QR_TCP_FIN) {
            st->fin = 1;
            if (f->seq + pay + 1 > x->fin_end[d])
                x->fin_end[d] = f->seq + pay + 1;
        }
        if (p->tcp_flags & QR_TCP_RST) {
            st->rst = 1;
            x->rst = 1;
        }
        if (!f->len)
            continue;
        st->data_packets += pay > 0;
        void **slot = qri_map_slot(&last, (uint64_t)f->seq, 0);
        if (slot) {
            x->prev_copy[d][i] = (int32_t)((uintptr_t)*slot - 1);
            *slot = (void *)(uintptr_t)(i + 1);
        } else if ((rc = qri_map_put(&last, (uint64_t)f->seq, 0, (void *)(uintptr_t)(i + 1)))) {
            break;
        }
        /* a FIN carries no byte, and a SYN only the ISN's: one far beyond the data (a
         * middlebox's, or another connection's on the same ports, a second SYN-ACK with another
         * ISN) must not make up a stream */
        int syn = (p->tcp_flags & QR_TCP_SYN) != 0;
        int64_t end = f->seq + pay + syn; /* as the exchanges count it: a SYN takes one */
        if ((pay || (syn && f->seq == 0)) && end > hi)
            hi = end;
    }
    qri_map_free(&last);
    st->bytes = hi > 1 ? (uint64_t)(hi - 1) : 0;
    return rc;
}

/* The ACK numbers of direction d's packets in the other direction's sequence space. */
static int prepare_acks(tc *x, uint32_t d)
{
    const qr_tc_dir *in = x->in[d];
    x->ack[d] = malloc((in->n ? in->n : 1) * sizeof *x->ack[d]);
    if (!x->ack[d])
        return QR_ENOMEM;
    int64_t ref = 0;
    for (size_t i = 0; i < in->n; i++) {
        const qr_packet *p = in->p[i].pk;
        x->ack[d][i] = (p->tcp_flags & QR_TCP_ACK) ? unwrap(x->isn[d ^ 1u], &ref, p->ack) : -1;
    }
    return QR_OK;
}

/* ---- pass 2: the sender's timeline (direction d seen at its sender) ---- */

typedef struct {
    int64_t e, tx;
    uint32_t i;
} pend;

static int build_events(tc *x, uint32_t d, int sender_view, tev **out, size_t *n)
{
    const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
    tev *ev = malloc((D->n + A->n + 1) * sizeof *ev);
    if (!ev)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < D->n; i++) {
        int64_t t = sender_view ? D->p[i].tx_ns : D->p[i].rx_ns;
        if (t >= 0 || sender_view)
            ev[k++] = (tev){t, (uint32_t)i, 0};
    }
    for (size_t j = 0; j < A->n; j++) {
        int64_t t = sender_view ? A->p[j].rx_ns : A->p[j].tx_ns;
        if (sender_view ? t >= 0 : (A->seen & QR_TC_AT_SENDER) != 0)
            ev[k++] = (tev){t, (uint32_t)j, 1};
    }
    qsort(ev, k, sizeof *ev, tev_cmp);
    *out = ev;
    *n = k;
    return QR_OK;
}

/* A D-SACK reports one copy of [s, e) that arrived twice: the latest retransmission sent before t
 * that overlaps it and no earlier D-SACK named (dsacked: per packet of d), as each copy that
 * arrived again draws its own (RFC 2883). */
static void mark_dsack(tc *x, uint32_t d, int64_t s, int64_t e, int64_t t, uint8_t *dsacked)
{
    const qr_tc_dir *D = x->in[d];
    qr_tc_pkt_info *info = x->out->info[d];
    for (size_t i = D->n; i-- > 0;) {
        if (D->p[i].tx_ns > t || info[i].trigger == QR_TC_ORIGINAL || !info[i].len || dsacked[i])
            continue;
        if (info[i].seq < e && info[i].seq + info[i].len > s) {
            dsacked[i] = 1;
            if (!info[i].spurious) {
                info[i].spurious = 1;
                x->out->dir[d].dsacks++;
            }
            return;
        }
        if (D->p[i].tx_ns + 60000000000LL < t)
            break;
    }
}

/* The sender's state as sender_walk replays its timeline. */
struct walk {
    uint32_t d;
    const qr_tc_dir *D, *A;
    qr_tc_pkt_info *info;
    qr_tc_dir_stats *st;
    int acks_seen, uses_ts, ws;
    uint32_t mss;
    range *sb; /* the scoreboard above una */
    size_t nsb, capsb;
    pend *orig, *retx; /* originals awaiting an RTT sample; retransmissions awaiting their
                          covering ACK (Eifel) */
    size_t no, cap_o, ho, nr, cap_r;
    uint8_t *resent, *dsacked;
    int64_t una, snd_max, rec_point, last_ack_t, last_send_t;
    int64_t before_una_t; /* the latest ACK arrival before the one that moved una last */
    int64_t last_win, cover;
    int in_rec, rec_rto, tlp_out, after_rto_sends;
    uint32_t dupacks;
    int64_t syn_tx;
    uint32_t syns;
};

/* An ACK's SACK blocks into the scoreboard (a D-SACK marks the copy it reports); *sack_new: one
 * told the sender something new. */
static int walk_sack(tc *x, struct walk *w, const qr_packet *ap, int64_t a, int64_t t,
                     int *sack_new)
{
    uint32_t d = w->d, L[4], R[4];
    size_t nb = qr_tcp_sack_blocks(ap, L, R);
    *sack_new = 0;
    for (size_t b = 0; b < nb; b++) {
        int64_t s = unwrap_near(x->isn[d], a, L[b]), e = unwrap_near(x->isn[d], a, R[b]);
        if (e <= s)
            continue;
        int dsack = b == 0 && (s < a || (nb > 1 && s >= unwrap_near(x->isn[d], a, L[1]) &&
                                         e <= unwrap_near(x->isn[d], a, R[1])));
        if (dsack) {
            mark_dsack(x, d, s, e, t, w->dsacked);
            continue;
        }
        if (!ranges_cover(w->sb, w->nsb, s, e))
            *sack_new = 1;
        int rc = ranges_add(&w->sb, &w->nsb, &w->capsb, s, e);
        if (!rc)
            rc = ranges_add(&x->sacked[d], &x->n_sacked[d], &x->cap_sacked[d], s, e);
        if (rc)
            return rc;
    }
    return QR_OK;
}

/* An ACK (packet ai of the other direction) arriving at the sender at t. */
static int walk_ack(tc *x, struct walk *w, uint32_t ai, int64_t t)
{
    const qr_packet *ap = w->A->p[ai].pk;
    int64_t a = x->ack[w->d ^ 1u][ai];
    if (a < 0)
        return QR_OK;
    if ((ap->tcp_flags & QR_TCP_SYN) && w->syn_tx >= 0 && w->syns == 1)
        rtt_sample(x, t - w->syn_tx); /* SYN out, SYN-ACK in */
    int sack_new;
    int rc = walk_sack(x, w, ap, a, t, &sack_new);
    if (rc)
        return rc;
    int64_t win = (int64_t)ap->window << w->ws;
    if (a == w->una && qr_tcp_payload(ap) == 0 && !(ap->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN)) &&
        w->una < w->snd_max && (win == w->last_win || sack_new)) {
        w->dupacks++;
        if (w->dupacks > w->st->max_dupacks)
            w->st->max_dupacks = w->dupacks;
    }
    if (a > w->una) {
        w->una = a;
        w->before_una_t = w->last_ack_t;
        w->dupacks = 0;
        w->tlp_out = 0;
        ranges_prune(w->sb, &w->nsb, w->una);
        if (w->in_rec && w->una >= w->rec_point)
            w->in_rec = 0;
    }
    if (a > w->cover)
        w->cover = a;
    /* RTT of originals it covers (Karn: none that was sent again). With timestamps the echoes
     * give the samples (ts_samples): a capture's send time of a segment split from a TSO/GSO
     * burst is the split's, and can be later than the ACK's cause */
    for (; w->ho < w->no && w->orig[w->ho].e <= a; w->ho++)
        if (!w->resent[w->orig[w->ho].i] && !w->uses_ts)
            rtt_sample(x, t - w->orig[w->ho].tx);
    /* Eifel: an ACK covering a retransmission that echoes an older timestamp than the
     * retransmission's was sent for the original */
    uint32_t tv, te;
    int have_ts = qr_tcp_timestamps(ap, &tv, &te);
    size_t k = 0;
    for (size_t r = 0; r < w->nr; r++) {
        if (w->retx[r].e > a) {
            w->retx[k++] = w->retx[r];
            continue;
        }
        uint32_t rv, re_;
        if (have_ts && qr_tcp_timestamps(w->D->p[w->retx[r].i].pk, &rv, &re_) &&
            (int32_t)(te - rv) < 0 && !w->info[w->retx[r].i].spurious)
            w->info[w->retx[r].i].spurious = 1;
    }
    w->nr = k;
    w->last_win = win;
    w->last_ack_t = t;
    return QR_OK;
}

/* What sent bytes [s, e) again at t, from what the sender had seen. */
static qr_tc_trigger walk_trigger(const tc *x, const struct walk *w, int64_t s, int64_t e,
                                  int64_t t)
{
    const qr_tc_cfg *c = &x->cfg;
    /* an ACK that already covered these bytes did not send them again: the two crossed in the
     * host (the resend was on its way), so what sent it is judged from before that ACK */
    int64_t ack_t = e <= w->una ? w->before_una_t : w->last_ack_t;
    int64_t last = ack_t > w->last_send_t ? ack_t : w->last_send_t;
    int64_t silence = last < 0 ? INT64_MAX : t - last;
    int timer = silence > c->ack_clock_ns;
    int64_t above = ranges_bytes_above(w->sb, w->nsb, e);
    if (!w->acks_seen)
        return QR_TC_UNKNOWN_TRIGGER;
    if (!timer) {
        if (w->in_rec)
            return w->rec_rto ? QR_TC_AFTER_RTO : QR_TC_RECOVERY;
        if (w->dupacks >= c->dupthresh || above >= (int64_t)c->dupthresh * w->mss || c->classic)
            return QR_TC_FAST; /* a classic sender resends outside its timer only so */
        return above > 0 || w->dupacks > 0 ? QR_TC_RACK : QR_TC_RECOVERY;
    }
    if (c->classic)
        return QR_TC_RTO;
    if (above > 0 && silence < c->rto_min_ns)
        return QR_TC_RACK;
    if (e >= w->snd_max && !w->tlp_out &&
        (c->tlp ? !w->in_rec : (s > w->una || silence < c->rto_min_ns)))
        return QR_TC_TLP;
    return QR_TC_RTO;
}

/* Packet i, bytes [s, e) below snd_max, sent again at t. */
static int walk_resend(tc *x, struct walk *w, uint32_t i, int64_t s, int64_t e, int64_t t)
{
    qr_tc_pkt_info *f = &w->info[i];
    qr_tc_trigger tr = walk_trigger(x, w, s, e, t);
    f->trigger = (uint8_t)tr;
    if (e <= w->una)
        f->spurious = 1; /* an ACK had already covered its bytes: they had arrived */
    w->st->retransmissions++;
    w->st->trig[tr]++;
    if (tr == QR_TC_TLP)
        w->tlp_out = 1;
    if (tr == QR_TC_RTO ||
        ((tr == QR_TC_FAST || tr == QR_TC_RACK || tr == QR_TC_RECOVERY) && !w->in_rec)) {
        w->in_rec = 1;
        w->rec_rto = tr == QR_TC_RTO;
        w->rec_point = w->snd_max;
        w->after_rto_sends = tr == QR_TC_RTO ? 0 : -1;
    } else if (w->after_rto_sends >= 0) {
        w->after_rto_sends = -1; /* it went on resending: no F-RTO */
    }
    /* Karn: the original of these bytes gives no RTT sample */
    size_t lo = w->ho, hi = w->no;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (w->orig[m].e <= s)
            lo = m + 1;
        else
            hi = m;
    }
    for (size_t m = lo; m < w->no && w->info[w->orig[m].i].seq < e; m++)
        w->resent[w->orig[m].i] = 1;
    if (qri_grow((void **)&w->retx, &w->cap_r, w->nr, sizeof *w->retx, 16))
        return QR_ENOMEM;
    w->retx[w->nr++] = (pend){e, t, i};
    return QR_OK;
}

/* Packet i of direction d leaving the sender at t. */
static int walk_send(tc *x, struct walk *w, uint32_t i, int64_t t)
{
    const qr_packet *p = w->D->p[i].pk;
    qr_tc_pkt_info *f = &w->info[i];
    if (p->tcp_flags & QR_TCP_SYN) {
        w->syns++;
        if (w->syn_tx >= 0) {
            f->trigger = QR_TC_SYN;
            w->st->retransmissions++;
            w->st->trig[QR_TC_SYN]++;
        }
        w->syn_tx = t;
        if (f->seq + 1 > w->snd_max)
            w->snd_max = f->seq + 1;
        return QR_OK;
    }
    if (!f->len)
        return QR_OK;
    int64_t s = f->seq, e = f->seq + f->len;
    f->dupacks = w->dupacks;
    if (s < w->snd_max) {
        int rc = walk_resend(x, w, i, s, e, t);
        if (rc)
            return rc;
    } else {
        if (w->after_rto_sends == 0) {
            w->st->frto++; /* new data right after an RTO: F-RTO probing */
            w->after_rto_sends = -1;
        }
        if (qri_grow((void **)&w->orig, &w->cap_o, w->no, sizeof *w->orig, 64))
            return QR_ENOMEM;
        w->orig[w->no++] = (pend){e, t, i};
    }
    if (e > w->snd_max)
        w->snd_max = e;
    w->last_send_t = t;
    return QR_OK;
}

/* Direction d's timeline at its sender: its sends and the ACKs it got, in time order; each
 * resend's trigger, dupacks, RTT samples, the scoreboard and the highest byte ACKed. */
static int sender_walk(tc *x, uint32_t d)
{
    struct walk w = {.d = d,
                     .D = x->in[d],
                     .A = x->in[d ^ 1u],
                     .info = x->out->info[d],
                     .st = &x->out->dir[d],
                     .last_ack_t = -1,
                     .last_send_t = -1,
                     .before_una_t = -1,
                     .last_win = -1,
                     .after_rto_sends = -1,
                     .syn_tx = -1};
    w.acks_seen = (w.A->seen & QR_TC_AT_RECEIVER) != 0;
    w.ws = x->ws[d] >= 0 && x->ws[d ^ 1u] >= 0 ? x->ws[d ^ 1u] : 0;
    w.mss = x->mss[d] ? x->mss[d] : 1;
    uint32_t tv0, te0;
    for (size_t i = 0; i < w.D->n && !w.uses_ts; i++)
        w.uses_ts = qr_tcp_timestamps(w.D->p[i].pk, &tv0, &te0);
    tev *ev = NULL;
    size_t ne = 0;
    int rc = build_events(x, d, 1, &ev, &ne);
    if (rc)
        return rc;
    w.resent = calloc(w.D->n ? w.D->n : 1, 1);
    w.dsacked = calloc(w.D->n ? w.D->n : 1, 1);
    if (!w.resent || !w.dsacked)
        rc = QR_ENOMEM;
    for (size_t q = 0; q < ne && !rc; q++)
        rc = ev[q].ack ? walk_ack(x, &w, ev[q].i, ev[q].t) : walk_send(x, &w, ev[q].i, ev[q].t);
    x->cover[d] = w.cover;
    free(w.sb);
    free(w.orig);
    free(w.retx);
    free(w.resent);
    free(w.dsacked);
    free(ev);
    return rc;
}

/* Retransmissions and reordering seen only at the receiver, in arrival order. */
static int receiver_walk(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d];
    qr_tc_pkt_info *info = x->out->info[d];
    qr_tc_dir_stats *st = &x->out->dir[d];
    int64_t high = 0;
    range *got = NULL; /* the bytes that have arrived, merged */
    size_t n_got = 0, cap_got = 0;
    int rc = QR_OK;
    uint32_t max_tsv = 0;
    int have_tsv = 0;
    for (size_t i = 0; i < D->n; i++) {
        if (D->p[i].rx_ns < 0 || !info[i].len)
            continue;
        const qr_packet *p = D->p[i].pk;
        qr_tc_pkt_info *f = &info[i];
        int64_t s = f->seq, e = f->seq + f->len;
        uint32_t tv, te;
        int ts = qr_tcp_timestamps(p, &tv, &te);
        if (p->tcp_flags & QR_TCP_SYN) {
            if (high > 0) {
                f->trigger = QR_TC_SYN;
                st->retransmissions++;
                st->trig[QR_TC_SYN]++;
            }
        } else if (s < high) {
            if ((ts && have_tsv && (int32_t)(tv - max_tsv) < 0) || D->p[i].sent_before) {
                f->reordered = 1; /* sent before what arrived ahead of it */
            } else {
                f->trigger = QR_TC_UNKNOWN_TRIGGER;
                st->retransmissions++;
                st->trig[QR_TC_UNKNOWN_TRIGGER]++;
                if (ranges_cover(got, n_got, s, e))
                    f->spurious = 1; /* everything in it had arrived, above a hole or not */
                else
                    st->lost++; /* it filled a hole: an earlier copy was lost */
            }
        }
        if (ts && (!have_tsv || (int32_t)(tv - max_tsv) > 0)) {
            max_tsv = tv;
            have_tsv = 1;
        }
        if ((rc = ranges_add(&got, &n_got, &cap_got, s, e)) != QR_OK)
            break;
        if (e > high)
            high = e;
    }
    free(got);
    return rc;
}

/* ---- fates ---- */

static void fates(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d];
    qr_tc_pkt_info *info = x->out->info[d];
    qr_tc_dir_stats *st = &x->out->dir[d];
    if (D->seen & QR_TC_AT_RECEIVER) {
        /* the receiver's record is complete: no record is a loss */
        int64_t later_min = INT64_MAX; /* earliest arrival of a packet sent after i */
        for (size_t i = D->n; i-- > 0;) {
            qr_tc_pkt_info *f = &info[i];
            int64_t rx = D->p[i].rx_ns;
            f->fate = rx >= 0 ? QR_TC_DELIVERED : QR_TC_LOST;
            if ((D->seen & QR_TC_AT_SENDER) && rx >= 0 && f->len && later_min < rx)
                f->reordered = 1;
            if (rx >= 0 && f->len && rx < later_min)
                later_min = rx;
            if (!f->len) {
                st->lost_acks += rx < 0;
                continue;
            }
            int32_t pc = x->prev_copy[d][i];
            if ((D->seen & QR_TC_AT_SENDER) && pc >= 0 && D->p[pc].rx_ns >= 0 && rx >= 0 &&
                f->trigger != QR_TC_ORIGINAL)
                f->spurious = 1;
        }
    } else if (D->seen & QR_TC_AT_SENDER) {
        /* only the sender: a copy sent again (and not needlessly) was lost; bytes an ACK or a SACK
         * covers arrived; anything else is unknown */
        uint8_t *needless = calloc(D->n ? D->n : 1, 1);
        for (size_t i = 0; i < D->n; i++) {
            int32_t pc = x->prev_copy[d][i];
            if (pc >= 0 && info[i].trigger != QR_TC_ORIGINAL && info[i].spurious && needless)
                needless[pc] = 1;
        }
        for (size_t i = 0; i < D->n; i++) {
            qr_tc_pkt_info *f = &info[i];
            if (!f->len) {
                f->fate = QR_TC_FATE_NONE;
                continue;
            }
            f->fate = QR_TC_NOT_SEEN;
            if (f->seq + f->len <= x->cover[d] ||
                ranges_cover(x->sacked[d], x->n_sacked[d], f->seq, f->seq + f->len))
                f->fate = QR_TC_DELIVERED;
        }
        for (size_t i = 0; i < D->n; i++) {
            int32_t pc = x->prev_copy[d][i];
            if (pc < 0 || info[i].trigger == QR_TC_ORIGINAL)
                continue;
            if (needless && needless[pc]) {
                info[pc].fate = QR_TC_DELIVERED;
                uint8_t tr = info[i].trigger;
                if (tr == QR_TC_FAST || tr == QR_TC_RACK || tr == QR_TC_RECOVERY)
                    info[pc].reordered = 1;
            } else {
                info[pc].fate = QR_TC_LOST;
            }
        }
        free(needless);
    } else {
        for (size_t i = 0; i < D->n; i++)
            info[i].fate = !info[i].len         ? QR_TC_FATE_NONE
                           : D->p[i].rx_ns >= 0 ? QR_TC_DELIVERED
                                                : QR_TC_NOT_SEEN;
    }
    for (size_t i = 0; i < D->n; i++) {
        const qr_tc_pkt_info *f = &info[i];
        if (!f->len)
            continue;
        if (D->seen & QR_TC_AT_SENDER) /* else receiver_walk counted the holes */
            st->lost += f->fate == QR_TC_LOST && !(D->p[i].pk->tcp_flags & QR_TCP_SYN);
        st->not_seen += f->fate == QR_TC_NOT_SEEN;
        st->reordered += f->reordered;
        st->spurious += f->spurious;
        if (f->spurious && f->trigger == QR_TC_RTO)
            st->undos++;
    }
}

/* ---- both ends: how long receivers held their ACKs, and why each RTO fired ---- */

/* Data of a segment for its receiver: payload or a FIN (a SYN's byte is the handshake's). */
static int carries_data(const qr_packet *p)
{
    return qr_tcp_payload(p) > 0 || (p->tcp_flags & QR_TCP_FIN);
}

/* The holds of the acknowledgments of direction d's data, where d's receiver was seen and its
 * ACKs were seen leaving it (one host's record): each one's send time less the arrival of the
 * oldest data it was first to acknowledge (the first to arrive after that receiver's previous
 * ACK). An ACK the delayed-ACK timer would have sent, but a later segment forced out early (a
 * duplicate, say), is still held from the first. */
static int ack_holds(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
    if (!(D->seen & QR_TC_AT_RECEIVER) || !(A->seen & QR_TC_AT_SENDER))
        return QR_OK;
    qr_tc_pkt_info *ai = x->out->info[d ^ 1u];
    int64_t *rx = malloc((D->n ? D->n : 1) * sizeof *rx);
    if (!rx)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < D->n; i++)
        if (D->p[i].rx_ns >= 0 && x->out->info[d][i].len && carries_data(D->p[i].pk))
            rx[k++] = D->p[i].rx_ns;
    qsort(rx, k, sizeof *rx, qri_cmp_i64);
    size_t p = 0;
    int64_t acked = 0, first_rx = -1;
    for (size_t j = 0; j < A->n; j++) {
        for (; p < k && rx[p] <= A->p[j].tx_ns; p++)
            if (first_rx < 0)
                first_rx = rx[p];
        const qr_packet *ap = A->p[j].pk;
        int64_t an = x->ack[d ^ 1u][j];
        int syn = (ap->tcp_flags & QR_TCP_SYN) != 0;
        if (!syn && first_rx >= 0 && an > acked) {
            ai[j].hold_ns = A->p[j].tx_ns - first_rx;
            x->out->dir[d ^ 1u].held_acks +=
                x->cfg.delack_ns > 0 && ai[j].hold_ns >= x->cfg.delack_ns;
        }
        if (!syn && an > acked)
            acked = an;
        if (ap->tcp_flags & QR_TCP_ACK)
            first_rx = -1;
    }
    free(rx);
    return QR_OK;
}

/* The other direction's packets by send time, with how many of them, up to each, were lost or
 * held delack_ns or longer: the ACKs a receiver sent in a window, counted in O(log n). */
typedef struct {
    int64_t *tx;
    uint32_t *lost, *held; /* prefix counts: [k] over the first k */
    size_t n;
} ack_index;

typedef struct {
    int64_t tx;
    uint8_t lost, held;
} ack_ent;

static int ack_ent_cmp(const void *a, const void *b)
{
    const ack_ent *x = a, *y = b;
    return x->tx < y->tx ? -1 : x->tx > y->tx;
}

static int ack_index_make(ack_index *ix, const qr_tc_dir *A, const qr_tc_pkt_info *ai,
                          int64_t delack)
{
    size_t n = A->n;
    ack_ent *e = malloc((n ? n : 1) * sizeof *e);
    ix->tx = malloc((n ? n : 1) * sizeof *ix->tx);
    ix->lost = calloc(n + 1, sizeof *ix->lost);
    ix->held = calloc(n + 1, sizeof *ix->held);
    ix->n = n;
    if (!e || !ix->tx || !ix->lost || !ix->held) {
        free(e);
        return QR_ENOMEM;
    }
    for (size_t j = 0; j < n; j++)
        e[j] = (ack_ent){A->p[j].tx_ns, A->p[j].rx_ns<0, delack> 0 && ai[j].hold_ns >= delack};
    qsort(e, n, sizeof *e, ack_ent_cmp);
    for (size_t j = 0; j < n; j++) {
        ix->tx[j] = e[j].tx;
        ix->lost[j + 1] = ix->lost[j] + e[j].lost;
        ix->held[j + 1] = ix->held[j] + e[j].held;
    }
    free(e);
    return QR_OK;
}

/* The first index whose send time is at least t (strictly more with after). */
static size_t ack_index_find(const ack_index *ix, int64_t t, int after)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (ix->tx[m] < t || (after && ix->tx[m] == t))
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static void ack_index_free(ack_index *ix)
{
    free(ix->tx);
    free(ix->lost);
    free(ix->held);
}

/* How far back an RTO's resend is looked for among other segments, and how far after it what
 * arrived is counted (a hostile capture must not make this quadratic). */
#define QR_TC_WHY_SCAN 4096

/* Why the timer fired for each RTO of direction d, where both ends of both directions were seen:
 * from the fate of the copy it resent (the latest before it), what arrived after that copy, and
 * what became of the ACKs the receiver sent before the timer fired. */
static int rto_reasons(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
    const unsigned both = QR_TC_AT_SENDER | QR_TC_AT_RECEIVER;
    if ((D->seen & both) != both || (A->seen & both) != both)
        return QR_OK;
    qr_tc_pkt_info *info = x->out->info[d];
    ack_index ix;
    int rc = ack_index_make(&ix, A, x->out->info[d ^ 1u], x->cfg.delack_ns);
    for (size_t r = 0; r < D->n && !rc; r++) {
        if (info[r].trigger != QR_TC_RTO)
            continue;
        int64_t t = D->p[r].tx_ns, s0 = info[r].seq;
        /* the copy it resent: the latest one before it holding its first byte */
        size_t k = D->n;
        if (x->prev_copy[d][r] >= 0) {
            k = (size_t)x->prev_copy[d][r];
        } else {
            for (size_t i = r, scanned = 0; i-- > 0 && scanned < QR_TC_WHY_SCAN; scanned++)
                if (info[i].len && info[i].seq <= s0 && s0 < info[i].seq + info[i].len) {
                    k = i;
                    break;
                }
        }
        qr_tc_why w = QR_TC_WHY_PLAIN;
        if (k == D->n) {
            info[r].why = (uint8_t)w;
            continue;
        }
        int64_t rxk = D->p[k].rx_ns;
        if (rxk < 0 && info[k].trigger != QR_TC_ORIGINAL) {
            w = QR_TC_WHY_RETX_LOST; /* only the timer resends a lost retransmission */
        } else if (rxk >= 0) {
            /* its data arrived: the ACKs the receiver sent from then to the timer did not come
             * back (one lost), or it held them (or sent none) */
            size_t lo = ack_index_find(&ix, rxk, 0), hi = ack_index_find(&ix, t, 1);
            int any = hi > lo;
            int lost = any && ix.lost[hi] > ix.lost[lo];
            int held = any && ix.held[hi] > ix.held[lo];
            w = lost ? QR_TC_WHY_ACK_LOST : held || !any ? QR_TC_WHY_ACK_HELD : QR_TC_WHY_PLAIN;
        } else {
            /* lost: what arrived after it could each have brought a duplicate ACK */
            uint32_t after = 0;
            for (size_t i = k + 1; i < r && i <= k + QR_TC_WHY_SCAN && after < x->cfg.dupthresh;
                 i++)
                after += carries_data(D->p[i].pk) && D->p[i].rx_ns >= 0;
            if (after == 0) {
                w = QR_TC_WHY_TAIL;
            } else if (after < x->cfg.dupthresh) {
                w = QR_TC_WHY_FEW_DUPACKS;
            } else {
                size_t lo = ack_index_find(&ix, D->p[k].tx_ns, 0), hi = ack_index_find(&ix, t, 1);
                if (hi > lo && ix.lost[hi] > ix.lost[lo])
                    w = QR_TC_WHY_ACK_LOST;
            }
        }
        info[r].why = (uint8_t)w;
    }
    ack_index_free(&ix);
    return rc;
}

/* ---- pass 3: exchanges ---- */

typedef struct {
    int64_t t;
    uint32_t d, i;
    uint8_t data; /* 1: new data of d; 0: an ACK of d's bytes */
} xev;

static int xev_cmp(const void *a, const void *b)
{
    const xev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->data != y->data) /* data before an ACK at the same time: an ACK cannot precede what it
                             * acknowledges, and data sent as an ACK arrives continues */
        return x->data ? -1 : 1;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static unsigned vantage_of(const qr_tc_dir *d)
{
    return (d->seen & QR_TC_AT_SENDER)     ? QR_TC_AT_SENDER
           : (d->seen & QR_TC_AT_RECEIVER) ? QR_TC_AT_RECEIVER
                                           : 0;
}

/* When direction d's packet i is seen at d's vantage, and when the other direction's packet j
 * (an ACK of d's bytes) is: -1 if not observed there. */
static int64_t data_time(const tc *x, uint32_t d, size_t i)
{
    const qr_tc_dir *D = x->in[d];
    return vantage_of(D) == QR_TC_AT_SENDER ? D->p[i].tx_ns : D->p[i].rx_ns;
}

static int64_t ack_time(const tc *x, uint32_t d, size_t j)
{
    const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
    if (vantage_of(D) == QR_TC_AT_SENDER)
        return (A->seen & QR_TC_AT_RECEIVER) ? A->p[j].rx_ns : -1;
    return (A->seen & QR_TC_AT_SENDER) ? A->p[j].tx_ns : -1;
}

typedef struct {
    int64_t t, s, e;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* cfg.end_at_arrival: each exchange of a direction whose receiver was seen ends when the
 * receiver had every byte up to its last (-1: it never did). */
static int arrival_ends(tc *x)
{
    qr_tc_conn *o = x->out;
    for (uint32_t d = 0; d < 2; d++) {
        const qr_tc_dir *D = x->in[d];
        if (!(D->seen & QR_TC_AT_RECEIVER))
            continue;
        size_t first = o->n_ex;
        for (size_t i = 0; i < o->n_ex && first == o->n_ex; i++)
            if (o->ex[i].dir == d)
                first = i;
        if (first == o->n_ex)
            continue;
        span *v = malloc((D->n ? D->n : 1) * sizeof *v);
        if (!v)
            return QR_ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < D->n; i++) {
            uint32_t pay = qr_tcp_payload(D->p[i].pk);
            if (pay && D->p[i].rx_ns >= 0) {
                int64_t s = x->out->info[d][i].seq + ((D->p[i].pk->tcp_flags & QR_TCP_SYN) != 0);
                v[k++] = (span){D->p[i].rx_ns, s, s + pay};
            }
        }
        qsort(v, k, sizeof *v, span_cmp);
        range *got = NULL;
        size_t ng = 0, cap = 0, next = first;
        int64_t cont = o->ex[first].seq_lo;
        for (size_t i = first; i < o->n_ex; i++)
            if (o->ex[i].dir == d) {
                o->ex[i].end_ns = -1;
                o->ex[i].answered = 0; /* it ends at an arrival, not at an ACK */
            }
        int rc = QR_OK;
        for (size_t i = 0; i < k && next < o->n_ex && !rc; i++) {
            if ((rc = prefix_add(&got, &ng, &cap, &cont, v[i].s, v[i].e)))
                break;
            for (; next < o->n_ex; next++) {
                qr_tc_exchange *ex = &o->ex[next];
                if (ex->dir != d)
                    continue;
                if (cont < ex->seq_hi)
                    break;
                ex->end_ns = v[i].t > ex->start_ns ? v[i].t : ex->start_ns;
            }
        }
        free(got);
        free(v);
        if (rc)
            return rc;
    }
    return QR_OK;
}

static int find_exchanges(tc *x)
{
    /* the application was idle only beyond a few round trips: at the receiver, the next window
     * comes a round trip after its ACK left, and that is TCP, not the application */
    int64_t idle = x->cfg.idle_ns;
    if (x->srtt > 0 && x->srtt <= INT64_MAX / QR_TC_IDLE_RTTS && QR_TC_IDLE_RTTS * x->srtt > idle)
        idle = QR_TC_IDLE_RTTS * x->srtt;
    qr_tc_conn *o = x->out;
    size_t n = x->in[0]->n + x->in[1]->n;
    xev *ev = malloc((n ? 2 * n : 1) * sizeof *ev); /* a packet: data of one, ACK of the other */
    if (!ev)
        return QR_ENOMEM;
    size_t k = 0;
    for (uint32_t d = 0; d < 2; d++) {
        if (!vantage_of(x->in[d]))
            continue;
        const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
        for (size_t i = 0; i < D->n; i++)
            if (qr_tcp_payload(D->p[i].pk) > 0 && data_time(x, d, i) >= 0)
                ev[k++] = (xev){data_time(x, d, i), d, (uint32_t)i, 1};
        for (size_t j = 0; j < A->n; j++)
            if (x->ack[d ^ 1u][j] >= 0 && ack_time(x, d, j) >= 0)
                ev[k++] = (xev){ack_time(x, d, j), d, (uint32_t)j, 0};
    }
    qsort(ev, k, sizeof *ev, xev_cmp);
    int64_t hi[2] = {0, 0}, una[2] = {0, 0}, acked_t[2] = {-1, -1};
    int32_t cur[2] = {-1, -1};
    int other[2] = {0, 0};
    size_t cap = 0;
    int rc = QR_OK;
    for (size_t q = 0; q < k; q++) {
        uint32_t d = ev[q].d;
        int64_t t = ev[q].t;
        if (!ev[q].data) {
            int64_t a = x->ack[d ^ 1u][ev[q].i];
            if (a <= una[d])
                continue;
            una[d] = a;
            if (cur[d] >= 0 && o->ex[cur[d]].end_ns < 0 && a >= o->ex[cur[d]].seq_hi) {
                o->ex[cur[d]].end_ns = t;
                o->ex[cur[d]].answered = qr_tcp_payload(x->in[d ^ 1u]->p[ev[q].i].pk) > 0;
            }
            if (a >= hi[d])
                acked_t[d] = t;
            continue;
        }
        const qr_tc_pkt_info *f = &o->info[d][ev[q].i];
        uint32_t pay = qr_tcp_payload(x->in[d]->p[ev[q].i].pk);
        int syn = (x->in[d]->p[ev[q].i].pk->tcp_flags & QR_TCP_SYN) != 0;
        if (!pay && !(syn && f->seq == 0))
            continue; /* moves the stream no further: the same rule as the stream's bytes */
        int64_t s = f->seq, e = f->seq + pay;
        if (syn)
            s++, e++;
        if (e <= hi[d])
            continue; /* nothing new */
        if (s < hi[d])
            s = hi[d];
        if (s < 1)
            s = 1; /* byte 0 is the SYN's: data there (no SYN seen) or before it is not the stream's
                    */
        if (e <= s)
            continue;
        /* a new exchange after application idle, or when the other side answered in between
         * (its data all acknowledged: a request after its response; in two-way bulk the other
         * side's data is still in flight, and this side's stream goes on) */
        int fresh =
            cur[d] < 0 || (una[d] >= hi[d] && acked_t[d] >= 0 &&
                           (t - acked_t[d] > idle || (other[d] && una[d ^ 1u] >= hi[d ^ 1u])));
        if (fresh) {
            if (qri_grow((void **)&o->ex, &cap, o->n_ex, sizeof *o->ex, 8)) {
                rc = QR_ENOMEM;
                break;
            }
            qr_tc_exchange *ex = &o->ex[o->n_ex];
            memset(ex, 0, sizeof *ex);
            ex->dir = d;
            ex->seq_lo = s;
            ex->start_ns = t;
            ex->end_ns = -1;
            ex->vantage = (uint8_t)vantage_of(x->in[d]);
            cur[d] = (int32_t)o->n_ex++;
            o->dir[d].exchanges++;
        }
        o->ex[cur[d]].seq_hi = e;
        /* done when its new last byte is; an ACK that came first (the import put the data's send
         * behind it: a NIC that serializes at the link rate what the host's shaper let out in a
         * burst) completes it at once */
        o->ex[cur[d]].end_ns = una[d] >= e ? t : -1;
        o->ex[cur[d]].answered = 0;
        hi[d] = e;
        other[d] = 0;
        other[d ^ 1u] = 1;
    }
    free(ev);
    if (!rc && x->cfg.end_at_arrival)
        rc = arrival_ends(x);
    int64_t last_end = -1; /* the latest end of the exchanges before */
    for (size_t i = 0; i < o->n_ex; i++) {
        qr_tc_exchange *ex = &o->ex[i];
        ex->idle_before_ns = i == 0                                     ? -1
                             : ex->start_ns > last_end && last_end >= 0 ? ex->start_ns - last_end
                                                                        : 0;
        if (ex->end_ns > last_end)
            last_end = ex->end_ns;
        ex->bytes = (uint64_t)(ex->seq_hi - ex->seq_lo);
        ex->status = ex->end_ns >= 0 ? QR_TC_COMPLETE
                     : !(x->in[ex->dir ^ 1u]->seen &
                         (ex->vantage == QR_TC_AT_SENDER ? QR_TC_AT_RECEIVER : QR_TC_AT_SENDER))
                         ? QR_TC_NO_ACKS
                     : x->rst ? QR_TC_RESET
                              : QR_TC_OPEN;
    }
    return rc;
}

/* The exchange of direction d holding relative sequence s (-1: none). */
static int32_t exchange_of(const qr_tc_conn *o, uint32_t d, int64_t s)
{
    for (size_t i = o->n_ex; i-- > 0;)
        if (o->ex[i].dir == d && o->ex[i].seq_lo <= s)
            return s < o->ex[i].seq_hi ? (int32_t)i : -1;
    return -1;
}

/* Whether resend f (sent at t) of direction d is a late fast retransmission: fast, after more
 * than dupthresh duplicate ACKs, and after the direction showed reordering (a sender's threshold
 * grows only on reordering it detected; without it, a resend held back by the sender's own queue
 * is not late by the threshold, and is not called so). */
static int is_late(const tc *x, uint32_t d, const qr_tc_pkt_info *f, int64_t t)
{
    return f->trigger == QR_TC_FAST && f->dupacks > x->cfg.dupthresh && t > x->reorder_from[d];
}

/* After fates: where direction d's reordering starts, and its late fast retransmissions. */
static void late_fast(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d];
    const qr_tc_pkt_info *info = x->out->info[d];
    x->reorder_from[d] = INT64_MAX;
    for (size_t i = 0; i < D->n; i++)
        if (info[i].reordered && D->p[i].tx_ns < x->reorder_from[d])
            x->reorder_from[d] = D->p[i].tx_ns;
    for (size_t i = 0; i < D->n; i++)
        x->out->dir[d].late_fast += is_late(x, d, &info[i], D->p[i].tx_ns);
}

static void assign_packets(tc *x)
{
    qr_tc_conn *o = x->out;
    for (uint32_t d = 0; d < 2; d++) {
        const qr_tc_dir *D = x->in[d];
        int32_t last = -1;
        int64_t last_lo = INT64_MAX, last_hi = INT64_MIN;
        for (size_t i = 0; i < D->n; i++) {
            qr_tc_pkt_info *f = &o->info[d][i];
            uint32_t pay = qr_tcp_payload(D->p[i].pk);
            if (!pay)
                continue;
            int64_t s = f->seq + ((D->p[i].pk->tcp_flags & QR_TCP_SYN) != 0);
            int32_t k = s >= last_lo && s < last_hi ? last : exchange_of(o, d, s);
            f->exchange = k;
            if (k < 0)
                continue;
            last = k;
            last_lo = o->ex[k].seq_lo;
            last_hi = o->ex[k].seq_hi;
            qr_tc_exchange *ex = &o->ex[k];
            ex->packets++;
            ex->not_seen += f->fate == QR_TC_NOT_SEEN;
            ex->reordered += f->reordered;
            ex->spurious += f->spurious;
            if (f->dupacks > ex->max_dupacks)
                ex->max_dupacks = f->dupacks;
            if (f->trigger != QR_TC_ORIGINAL) {
                ex->retransmissions++;
                ex->trig[f->trigger]++;
                ex->late_fast += is_late(x, d, f, D->p[i].tx_ns);
            }
            if (D->seen & QR_TC_AT_SENDER)
                ex->lost += f->fate == QR_TC_LOST;
            else if (f->trigger == QR_TC_UNKNOWN_TRIGGER && !f->spurious)
                ex->lost++; /* it filled a hole */
        }
    }
}

/* ---- pass 4: where each exchange's time went ---- */

/* Adds the part of [a, b) inside the exchange to its part; returns how much that was. */
static int64_t add_gap(qr_tc_exchange *ex, int64_t end, int64_t a, int64_t b, int part)
{
    if (a < ex->start_ns)
        a = ex->start_ns;
    if (b > end)
        b = end;
    if (b <= a)
        return 0;
    ex->part_ns[part] += b - a;
    return b - a;
}

static int64_t exchange_end(const tc *x, const qr_tc_exchange *ex)
{
    return ex->end_ns >= 0 ? ex->end_ns : x->out->last_ns;
}

/* The exchanges of one direction a gap [t_prev, t) may fall in: those that started before t and
 * had not ended by t_prev (exchanges are in start order; a direction's do not overlap unless a
 * capture is odd, and then each gets the gap too, so every one's parts sum to its time). */
typedef struct {
    size_t next, n, cap;
    size_t *v;
} active;

static int active_update(active *a, const tc *x, uint32_t d, int64_t t_prev, int64_t t)
{
    const qr_tc_conn *o = x->out;
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        if (exchange_end(x, &o->ex[a->v[i]]) > t_prev)
            a->v[k++] = a->v[i];
    a->n = k;
    for (; a->next < o->n_ex && o->ex[a->next].start_ns < t; a->next++) {
        if (o->ex[a->next].dir != d || exchange_end(x, &o->ex[a->next]) <= t_prev)
            continue;
        if (qri_grow((void **)&a->v, &a->cap, a->n, sizeof *a->v, 4))
            return QR_ENOMEM;
        a->v[a->n++] = a->next;
    }
    return QR_OK;
}

/* The time in [a, b) direction d's sender's link spent on other connections (0: unknown). */
static int64_t link_busy(const tc *x, uint32_t d, int64_t a, int64_t b)
{
    if (!x->cfg.link_busy || b <= a)
        return 0;
    int64_t v = x->cfg.link_busy(x->cfg.link_ctx, d, a, b);
    return v < 0 ? 0 : v > b - a ? b - a : v;
}

static int sender_parts(tc *x, uint32_t d)
{
    const qr_tc_dir *A = x->in[d ^ 1u];
    const qr_tc_pkt_info *held = x->out->info[d ^ 1u];
    int64_t delack = x->cfg.delack_ns;
    qr_tc_conn *o = x->out;
    tev *ev;
    size_t ne;
    int rc = build_events(x, d, 1, &ev, &ne);
    if (rc)
        return rc;
    int64_t una = 0, snd_max = 0, rec_point = 0, rwnd = -1, t_prev = INT64_MIN, last_data_t = -1;
    int in_rec = 0, prev_ack = 0, rec_why = -1; /* rec_why: the recovery's RTO's (-1: none) */
    int ws = x->ws[d] >= 0 && x->ws[d ^ 1u] >= 0 ? x->ws[d ^ 1u] : 0;
    int64_t mss = x->mss[d] ? x->mss[d] : 1;
    active act = {0};
    for (size_t q = 0; q < ne; q++) {
        int64_t t = ev[q].t;
        if (t_prev != INT64_MIN && t > t_prev && (rc = active_update(&act, x, d, t_prev, t)))
            break;
        for (size_t ai = 0; t_prev != INT64_MIN && t > t_prev && ai < act.n; ai++) {
            qr_tc_exchange *ex = &o->ex[act.v[ai]];
            int part = QR_TC_PART_TRANSFER;
            uint8_t tr = ev[q].ack ? QR_TC_ORIGINAL : o->info[d][ev[q].i].trigger;
            uint8_t why = ev[q].ack ? QR_TC_WHY_UNKNOWN : o->info[d][ev[q].i].why;
            if (tr == QR_TC_RTO)
                part = why == QR_TC_WHY_ACK_HELD ? QR_TC_PART_DELACK : QR_TC_PART_RTO;
            else if (tr == QR_TC_TLP)
                part = QR_TC_PART_TLP;
            else if (in_rec || tr == QR_TC_RACK)
                part = QR_TC_PART_RECOVERY;
            else if (snd_max < ex->seq_hi && rwnd >= 0 && snd_max - una + mss > rwnd)
                part = QR_TC_PART_RWND;
            else if (una >= snd_max && snd_max < ex->seq_hi && snd_max >= ex->seq_lo)
                part = QR_TC_PART_APP;
            /* the ACK that completes it rides on the other side's data: beyond one minimum RTT
             * after the last data left, the receiver held its ACK for its reply */
            int64_t split = t, from = t_prev > ex->start_ns ? t_prev : ex->start_ns;
            int64_t hold = -1;
            if (ev[q].ack && t == ex->end_ns && qr_tcp_payload(A->p[ev[q].i].pk) > 0 &&
                x->min_rtt > 0 && last_data_t >= 0)
                hold = t - (last_data_t + x->min_rtt);
            /* between two ACKs, the second one the receiver held for its delayed-ACK timer: the
             * sender's wait for it was that stall (less the time its link was busy) */
            if (ev[q].ack && prev_ack && part == QR_TC_PART_TRANSFER && delack > 0 &&
                held[ev[q].i].hold_ns >= delack) {
                int64_t h = held[ev[q].i].hold_ns, room = t - from - link_busy(x, d, from, t);
                if (h > room)
                    h = room;
                if (h > hold)
                    hold = h;
            }
            if (hold > t - from)
                hold = t - from;
            if (hold > 0)
                split = t - hold;
            int64_t end = exchange_end(x, ex);
            if (part == QR_TC_PART_APP) {
                /* nothing of it in flight while the link sent others' packets: its turn */
                int64_t a = from, b = split < end ? split : end;
                int64_t busy = link_busy(x, d, a, b);
                if (busy > 0) {
                    ex->part_ns[QR_TC_PART_QUEUEING] += busy;
                    ex->part_ns[QR_TC_PART_APP] += b - a - busy;
                    a = b;
                }
                add_gap(ex, end, a, b, part);
            } else {
                int64_t added = add_gap(ex, end, t_prev, split, part);
                if (tr == QR_TC_RTO)
                    ex->why_ns[why] += added;
                else if (part == QR_TC_PART_RECOVERY && rec_why >= 0)
                    ex->after_rto_ns[rec_why] += added;
            }
            /* the ACK that completed it came with the receiver's reply: its application's */
            int held = ev[q].ack && t == ex->end_ns && ex->answered && tr != QR_TC_RTO
                           ? QR_TC_PART_REPLY
                           : QR_TC_PART_DELACK;
            int64_t added = add_gap(ex, end, split, t, held);
            if (tr == QR_TC_RTO)
                ex->why_ns[why] += added;
        }
        t_prev = t;
        prev_ack = ev[q].ack;
        if (ev[q].ack) {
            const qr_packet *ap = A->p[ev[q].i].pk;
            int64_t a = x->ack[d ^ 1u][ev[q].i];
            if (a < 0)
                continue;
            if (a > una)
                una = a;
            if (in_rec && una >= rec_point)
                in_rec = 0;
            rwnd = (int64_t)ap->window << ws;
            continue;
        }
        const qr_tc_pkt_info *f = &o->info[d][ev[q].i];
        if (!f->len)
            continue;
        uint8_t tr = f->trigger;
        if (tr == QR_TC_RTO ||
            ((tr == QR_TC_FAST || tr == QR_TC_RACK || tr == QR_TC_TLP) && !in_rec)) {
            in_rec = 1;
            rec_point = snd_max;
            rec_why = tr == QR_TC_RTO ? f->why : -1;
        }
        if (f->seq + f->len > snd_max)
            snd_max = f->seq + f->len;
        last_data_t = t;
    }
    free(act.v);
    free(ev);
    return rc;
}

static int receiver_parts(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d];
    qr_tc_conn *o = x->out;
    tev *ev;
    size_t ne;
    int rc = build_events(x, d, 0, &ev, &ne);
    if (rc)
        return rc;
    range *got = NULL;
    size_t ng = 0, capg = 0;
    int64_t nxt = 1, t_prev = INT64_MIN;
    active act = {0};
    for (size_t q = 0; q < ne && !rc; q++) {
        int64_t t = ev[q].t;
        if (t_prev != INT64_MIN && t > t_prev && (rc = active_update(&act, x, d, t_prev, t)))
            break;
        for (size_t ai = 0; t_prev != INT64_MIN && t > t_prev && ai < act.n; ai++) {
            qr_tc_exchange *ex = &o->ex[act.v[ai]];
            int part = ng > 0             ? QR_TC_PART_LOSS
                       : nxt < ex->seq_hi ? QR_TC_PART_TRANSFER
                       : ex->answered     ? QR_TC_PART_REPLY /* its ACK rode on the reply */
                                          : QR_TC_PART_DELACK;
            add_gap(ex, exchange_end(x, ex), t_prev, t, part);
        }
        t_prev = t;
        if (ev[q].ack)
            continue;
        const qr_tc_pkt_info *f = &o->info[d][ev[q].i];
        if (!f->len || D->p[ev[q].i].rx_ns < 0)
            continue;
        if ((rc = prefix_add(&got, &ng, &capg, &nxt, f->seq, f->seq + f->len)))
            break;
    }
    free(act.v);
    free(got);
    free(ev);
    return rc;
}

/* Direction d's deliveries as its vantage saw them, in time order: (time, bytes delivered so
 * far). At the sender: ACK arrivals, a duplicate ACK counting one segment delivered (as Linux's
 * delivered count does) and a cumulative ACK the rest; at the receiver: every new byte arriving.
 * *m gets their number; the caller frees the array (NULL: none or no memory). */
static int64_t (*deliveries(const tc *x, uint32_t d, size_t *m))[2]
{
    *m = 0;
    unsigned v = vantage_of(x->in[d]);
    const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
    size_t n = v == QR_TC_AT_SENDER ? A->n : v == QR_TC_AT_RECEIVER ? D->n : 0;
    if (!n)
        return NULL;
    int64_t(*pt)[2] = malloc(n * sizeof *pt);
    if (!pt)
        return NULL;
    int64_t una = 0, credit = 0, delivered = 0, high = 0;
    int64_t mss = x->mss[d] ? x->mss[d] : 1;
    for (size_t j = 0; j < n; j++) {
        int64_t t, before = delivered;
        if (v == QR_TC_AT_SENDER) {
            t = A->p[j].rx_ns;
            int64_t a = x->ack[d ^ 1u][j];
            if (t < 0 || a < 0)
                continue;
            if (a > una) {
                int64_t adv = a - una;
                delivered += adv > credit ? adv - credit : 0;
                credit = adv > credit ? 0 : credit - adv;
                una = a;
            } else if (a == una && una > 0 && !qr_tcp_payload(A->p[j].pk) &&
                       !(A->p[j].pk->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN))) {
                delivered += mss; /* a duplicate ACK: one more segment arrived */
                credit += mss;
            }
        } else {
            t = D->p[j].rx_ns;
            const qr_tc_pkt_info *f = &x->out->info[d][j];
            int64_t e = f->seq + f->len;
            if (t < 0 || e <= high)
                continue;
            delivered += e - (f->seq > high ? f->seq : high);
            high = e;
        }
        if (delivered > before) {
            pt[*m][0] = t;
            pt[*m][1] = delivered;
            (*m)++;
        }
    }
    return pt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The path's bottleneck rate as the data shows it, bit/s (0: not enough data). Packet-pair
 * dispersion: the median over consecutive deliveries of the bytes each brought over the time since
 * the one before (a bottleneck spaces back-to-back packets, and their ACKs, by its serialization
 * time). With fewer than 3 such pairs: the highest rate delivered over a window of at least one
 * minimum RTT. */
static uint64_t delivery_rate(const tc *x)
{
    double *r = NULL, best = 0;
    size_t nr = 0, cap = 0;
    for (uint32_t d = 0; d < 2; d++) {
        size_t m;
        int64_t(*pt)[2] = deliveries(x, d, &m);
        for (size_t j = 1; j < m; j++) {
            int64_t dt = pt[j][0] - pt[j - 1][0];
            if (dt <= 0)
                continue;
            if (qri_grow((void **)&r, &cap, nr, sizeof *r, 64))
                break;
            r[nr++] = (double)(pt[j][1] - pt[j - 1][1]) * 8e9 / (double)dt;
        }
        size_t lo = 0;
        for (size_t j = 0; x->min_rtt > 0 && j < m; j++) {
            while (lo + 1 < j && pt[j][0] - pt[lo + 1][0] >= x->min_rtt)
                lo++;
            int64_t dt = pt[j][0] - pt[lo][0];
            if (dt >= x->min_rtt && dt > 0) {
                double v = (double)(pt[j][1] - pt[lo][1]) * 8e9 / (double)dt;
                if (v > best)
                    best = v;
            }
        }
        free(pt);
    }
    if (nr >= 3) {
        qsort(r, nr, sizeof *r, cmp_double);
        best = nr % 2 ? r[nr / 2] : (r[nr / 2 - 1] + r[nr / 2]) / 2;
    }
    free(r);
    return (uint64_t)best;
}

static void handshake(tc *x)
{
    const qr_tc_dir *D0 = x->in[0], *D1 = x->in[1];
    qr_tc_conn *o = x->out;
    o->handshake_ns = -1;
    int64_t syn = -1, synack = -1, synack_tx = -1, est = -1;
    uint32_t synacks = 0;
    for (size_t i = 0; i < D1->n; i++)
        if (D1->p[i].pk->tcp_flags & QR_TCP_SYN) {
            synacks++;
            if (synack < 0)
                synack = D1->p[i].rx_ns;
            synack_tx = D1->p[i].tx_ns;
        }
    if ((D0->seen & QR_TC_AT_SENDER) && (D1->seen & QR_TC_AT_RECEIVER)) {
        for (size_t i = 0; i < D0->n && syn < 0; i++)
            if (D0->p[i].pk->tcp_flags & QR_TCP_SYN)
                syn = D0->p[i].tx_ns;
        if (syn >= 0 && synack >= 0)
            o->handshake_ns = synack - syn;
    } else if ((D0->seen & QR_TC_AT_RECEIVER) && (D1->seen & QR_TC_AT_SENDER)) {
        for (size_t i = 0; i < D0->n; i++) {
            const qr_packet *p = D0->p[i].pk;
            if ((p->tcp_flags & QR_TCP_SYN) && syn < 0)
                syn = D0->p[i].rx_ns;
            else if (syn >= 0 && !(p->tcp_flags & QR_TCP_SYN) && (p->tcp_flags & QR_TCP_ACK) &&
                     D0->p[i].rx_ns >= 0) {
                est = D0->p[i].rx_ns;
                break;
            }
        }
        if (syn >= 0 && est >= 0) {
            o->handshake_ns = est - syn;
            if (synacks == 1 && synack_tx >= 0)
                rtt_sample(x, est - synack_tx); /* SYN-ACK out, its ACK in */
        }
    }
}

/* RTT samples from echoed timestamps at the end that sends d (seen there, with its arrivals);
 * both ends seen, the two one-way delays only (see ts_samples). */
static void ts_samples(tc *x, uint32_t d)
{
    const qr_tc_dir *D = x->in[d], *A = x->in[d ^ 1u];
    if (!(D->seen & QR_TC_AT_SENDER) || !(A->seen & QR_TC_AT_RECEIVER))
        return;
    uint32_t(*tv)[2] = malloc((D->n ? D->n : 1) * sizeof *tv); /* value, index of first send */
    if (!tv)
        return;
    size_t m = 0;
    uint32_t v0 = 0;
    for (size_t i = 0; i < D->n; i++) {
        uint32_t v, e;
        if (!qr_tcp_timestamps(D->p[i].pk, &v, &e))
            continue;
        if (!m)
            v0 = v;
        if (m && (uint32_t)(v - v0) <= tv[m - 1][0])
            continue;
        tv[m][0] = v - v0;
        tv[m][1] = (uint32_t)i;
        m++;
    }
    for (size_t j = 0; j < A->n && m; j++) {
        uint32_t v, e;
        if (A->p[j].rx_ns < 0 || !qr_tcp_timestamps(A->p[j].pk, &v, &e) || !e)
            continue;
        uint32_t key = e - v0;
        size_t lo = 0, hi = m;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (tv[mid][0] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < m && tv[lo][0] == key) {
            const qr_tc_pkt *dp = &D->p[tv[lo][1]], *ap = &A->p[j];
            /* both ends seen: the network's round trip, without the time the echo waited at the
             * other end (a delayed ACK, a reply's application) - except for data that echoes a
             * pure ACK, whose wait was the sender's own (its window, its host's queue) */
            int both = (D->seen & QR_TC_AT_RECEIVER) && (A->seen & QR_TC_AT_SENDER) &&
                       dp->rx_ns >= 0 && ap->tx_ns >= 0 && ap->tx_ns >= dp->rx_ns &&
                       (qr_tcp_payload(dp->pk) > 0 || qr_tcp_payload(ap->pk) == 0);
            rtt_sample(x, both ? (dp->rx_ns - dp->tx_ns) + (ap->rx_ns - ap->tx_ns)
                               : ap->rx_ns - dp->tx_ns);
        }
    }
    free(tv);
}

/* An exchange's time its vantage's walk did not reach: one that ends when its last byte arrived
 * (end_at_arrival) after the last packet its sender's capture holds, or whose ACKs no capture
 * saw. Its data was on its way: transfer (beyond the ideal it becomes queueing). */
static void fill_parts(tc *x)
{
    qr_tc_conn *o = x->out;
    for (size_t i = 0; i < o->n_ex; i++) {
        qr_tc_exchange *ex = &o->ex[i];
        if (ex->end_ns < 0)
            continue;
        int64_t sum = 0;
        for (int k = 0; k < QR_TC_PARTS; k++)
            sum += ex->part_ns[k];
        if (ex->end_ns - ex->start_ns > sum)
            ex->part_ns[QR_TC_PART_TRANSFER] += ex->end_ns - ex->start_ns - sum;
    }
}

static void finish_exchanges(tc *x)
{
    qr_tc_conn *o = x->out;
    /* a measured rate is at least what an exchange achieved while it was sending (its bytes
     * after the first segment over its transfer time less one RTT: not its timers, recoveries,
     * holes, window or application stalls): windows that span idle periods understate it */
    for (size_t i = 0; o->rate_measured && i < o->n_ex; i++) {
        const qr_tc_exchange *ex = &o->ex[i];
        uint64_t first =
            x->mss[ex->dir] && ex->bytes > x->mss[ex->dir] ? x->mss[ex->dir] : ex->bytes;
        int64_t t = ex->part_ns[QR_TC_PART_TRANSFER] -
                    (ex->vantage == QR_TC_AT_SENDER && o->min_rtt_ns > 0 ? o->min_rtt_ns : 0);
        if (ex->end_ns < 0 || t <= 0 || ex->bytes <= first)
            continue;
        double r = (double)(ex->bytes - first) * 8e9 / (double)t;
        if (r > (double)o->rate_bps)
            o->rate_bps = (uint64_t)r;
    }
    for (size_t i = 0; i < o->n_ex; i++) {
        qr_tc_exchange *ex = &o->ex[i];
        uint64_t first =
            x->mss[ex->dir] && ex->bytes > x->mss[ex->dir] ? x->mss[ex->dir] : ex->bytes;
        /* the rest at the path's rate: a measured rate is of payload (deliveries); a link rate
         * the caller gives carries every segment's headers and framing too. The first
         * segment's payload crosses the path once more than the round trip's header-only
         * packets did: a 1 KB response takes its own serialization beyond half a round trip,
         * and that is not queueing */
        uint64_t wire = ex->bytes - first;
        int64_t first_ser = o->rate_bps ? qri_wire_ns(first, o->rate_bps) : 0;
        if (!o->rate_measured && x->mss[ex->dir])
            wire += (wire + x->mss[ex->dir] - 1) / x->mss[ex->dir] *
                    (x->hdr[ex->dir] + QR_LINK_OVERHEAD_BYTES);
        int64_t ser = o->rate_bps ? qri_wire_ns(wire, o->rate_bps) + first_ser : 0;
        int64_t rtt = o->min_rtt_ns;
        int to_arrival = x->cfg.end_at_arrival && (x->in[ex->dir]->seen & QR_TC_AT_RECEIVER);
        /* from the first byte sent to the last acknowledged is a round trip; to the last
         * arrived (end_at_arrival), half of one */
        if (rtt > 0 && to_arrival)
            rtt /= 2;
        int64_t known = to_arrival && x->cfg.path_ideal
                            ? x->cfg.path_ideal(x->cfg.path_ctx, ex->dir, ex->bytes,
                                                x->mss[ex->dir], x->hdr[ex->dir])
                            : 0;
        if (known > 0)
            ex->ideal_ns = known;
        else if (ex->vantage == QR_TC_AT_SENDER)
            ex->ideal_ns = rtt > 0 ? rtt + ser : 0;
        else
            ex->ideal_ns = ser;
        int64_t tr = ex->part_ns[QR_TC_PART_TRANSFER];
        if (ex->ideal_ns > 0 && tr > ex->ideal_ns) {
            ex->part_ns[QR_TC_PART_QUEUEING] += tr - ex->ideal_ns;
            ex->part_ns[QR_TC_PART_TRANSFER] = ex->ideal_ns;
        }
        /* the wait for the other side's reply is its application's, not the exchange's */
        int64_t dur = exchange_end(x, ex) - ex->start_ns - ex->part_ns[QR_TC_PART_REPLY];
        ex->slowdown = ex->ideal_ns > 0 && ex->end_ns >= 0 ? (double)dur / (double)ex->ideal_ns : 0;
    }
}

/* When a packet of a direction was observed: sent, where its sender was captured, else arrived. */
static int64_t observed_ns(const qr_tc_dir *D, size_t i)
{
    return (D->seen & QR_TC_AT_SENDER) ? D->p[i].tx_ns : D->p[i].rx_ns;
}

/* Per packet of D (observed order): whether it is a keep-alive, one byte (or none) below the
 * direction's next sequence number, as Linux and Windows send them. *out is caller-owned. */
static int keepalives(const qr_tc_dir *D, uint8_t **out)
{
    *out = calloc(D->n ? D->n : 1, 1);
    if (!*out)
        return QR_ENOMEM;
    uint32_t next = 0;
    int have = 0;
    for (size_t i = 0; i < D->n; i++) {
        const qr_packet *p = D->p[i].pk;
        uint32_t pay = qr_tcp_payload(p);
        int ctl = (p->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST)) != 0;
        if (have && !ctl && pay <= 1 && p->seq == next - 1u)
            (*out)[i] = 1;
        uint32_t end = p->seq + seg_len(p);
        if (!have || (int32_t)(end - next) > 0)
            next = end;
        have = 1;
    }
    return QR_OK;
}

/* Duplicate-ACK runs and zero-window episodes as the direction's packets show them, in the order
 * they were observed (qr_tc_dir_stats). An ACK answering the other direction's keep-alive (the
 * other side's latest packet before it) is a keep-alive ACK, not a duplicate, as tshark has it. */
static void ack_runs(const tc *x, uint32_t d, qr_tc_dir_stats *st)
{
    const qr_tc_dir *D = x->in[d], *O = x->in[d ^ 1u];
    const uint8_t *ka = x->ka[d ^ 1u];
    uint32_t next = 0, last_ack = 0, run = 0;
    uint16_t last_win = 0;
    int have = 0, zero = 0;
    size_t o = 0; /* O's packets observed up to now */
    for (size_t i = 0; i < D->n; i++) {
        const qr_packet *p = D->p[i].pk;
        uint32_t pay = qr_tcp_payload(p);
        int ctl = (p->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST)) != 0;
        int64_t t = observed_ns(D, i);
        while (o < O->n && (observed_ns(O, o) < 0 || observed_ns(O, o) <= t))
            o++;
        int answers_keepalive = o > 0 && ka[o - 1];
        if (have && (p->tcp_flags & QR_TCP_ACK) && !pay && !ctl && p->window &&
            p->window == last_win && p->seq == next && p->ack == last_ack && !answers_keepalive) {
            st->dupacks++;
            if (++run > st->dupack_run)
                st->dupack_run = run;
        } else if (!have || p->ack != last_ack) {
            run = 0;
        }
        if (!ctl && p->window == 0 && !zero)
            st->zero_window_episodes++;
        if (!ctl)
            zero = p->window == 0;
        uint32_t end = p->seq + seg_len(p);
        if (!have || (int32_t)(end - next) > 0)
            next = end;
        if (p->tcp_flags & QR_TCP_ACK)
            last_ack = p->ack;
        last_win = p->window;
        have = 1;
    }
}

int qr_tc_analyse(qr_tc_conn *out, const qr_tc_dir dirs[2], const qr_tc_cfg *cfg, char *errbuf)
{
    if (!out)
        return MSG(errbuf, QR_EINVAL, "no output");
    memset(out, 0, sizeof *out);
    if (!dirs)
        return MSG(errbuf, QR_EINVAL, "no directions");
    for (uint32_t d = 0; d < 2; d++)
        for (size_t i = 0; i < dirs[d].n; i++)
            if (!dirs[d].p || !dirs[d].p[i].pk)
                return MSG(errbuf, QR_EINVAL, "direction %u packet %zu has no headers", d, i);
    tc x = {0};
    x.in[0] = &dirs[0];
    x.in[1] = &dirs[1];
    x.out = out;
    x.min_rtt = -1;
    x.errbuf = errbuf;
    if (cfg)
        x.cfg = *cfg;
    else
        qr_tc_cfg_default(&x.cfg);
    if (!x.cfg.dupthresh)
        x.cfg.dupthresh = 3;
    int rc = QR_OK;
    for (uint32_t d = 0; d < 2 && !rc; d++)
        rc = prepare_dir(&x, d);
    for (uint32_t d = 0; d < 2 && !rc; d++)
        rc = prepare_acks(&x, d);
    out->first_ns = INT64_MAX;
    out->last_ns = INT64_MIN;
    for (uint32_t d = 0; d < 2 && !rc; d++)
        for (size_t i = 0; i < dirs[d].n; i++) {
            int64_t ts[2] = {(dirs[d].seen & QR_TC_AT_SENDER) ? dirs[d].p[i].tx_ns : -1,
                             dirs[d].p[i].rx_ns};
            for (int k = 0; k < 2; k++)
                if (ts[k] >= 0) {
                    if (ts[k] < out->first_ns)
                        out->first_ns = ts[k];
                    if (ts[k] > out->last_ns)
                        out->last_ns = ts[k];
                }
        }
    if (out->first_ns == INT64_MAX)
        out->first_ns = out->last_ns = 0;
    for (uint32_t d = 0; d < 2 && !rc; d++)
        ack_runs(&x, d, &out->dir[d]);
    for (uint32_t d = 0; d < 2 && !rc; d++) {
        if (dirs[d].seen & QR_TC_AT_SENDER)
            rc = sender_walk(&x, d);
        else if (dirs[d].seen & QR_TC_AT_RECEIVER)
            rc = receiver_walk(&x, d);
    }
    if (!rc) {
        for (uint32_t d = 0; d < 2; d++) {
            fates(&x, d);
            ts_samples(&x, d);
            late_fast(&x, d);
        }
        for (uint32_t d = 0; d < 2 && !rc; d++)
            rc = ack_holds(&x, d);
        for (uint32_t d = 0; d < 2 && !rc; d++)
            rc = rto_reasons(&x, d);
        handshake(&x);
        if (!rc)
            rc = find_exchanges(&x);
    }
    if (!rc) {
        assign_packets(&x);
        out->min_rtt_ns = x.min_rtt;
        out->rtt_samples = x.rtt_n;
        if (x.cfg.rate_bps) {
            out->rate_bps = x.cfg.rate_bps;
        } else {
            out->rate_bps = delivery_rate(&x);
            out->rate_measured = out->rate_bps > 0;
        }
        for (uint32_t d = 0; d < 2 && !rc; d++) {
            unsigned v = vantage_of(&dirs[d]);
            if (v == QR_TC_AT_SENDER && (dirs[d ^ 1u].seen & QR_TC_AT_RECEIVER))
                rc = sender_parts(&x, d);
            else if (v == QR_TC_AT_RECEIVER)
                rc = receiver_parts(&x, d);
        }
        fill_parts(&x);
        finish_exchanges(&x);
        out->end = x.rst                                  ? QR_TC_END_RESET
                   : fin_acked(&x, 0) && fin_acked(&x, 1) ? QR_TC_END_CLOSED
                                                          : QR_TC_END_OPEN;
    }
    for (uint32_t d = 0; d < 2; d++) {
        free(x.ack[d]);
        free(x.sacked[d]);
        free(x.prev_copy[d]);
        free(x.ka[d]);
    }
    if (rc == QR_ENOMEM)
        MSG(errbuf, rc, "out of memory");
    return rc;
}

void qr_tc_conn_free(qr_tc_conn *c)
{
    if (!c)
        return;
    free(c->info[0]);
    free(c->info[1]);
    free(c->ex);
    memset(c, 0, sizeof *c);
}
