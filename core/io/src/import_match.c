/* qreplay import: each captured packet matched at its two ends, sender and receiver, into the
 * recording's packets, receive times and losses (import.h). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_internal.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/textio.h"
#include "qreplay/topology.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/version.h"
#include "recording_internal.h"

static void *ring_at(const ring *r, size_t i)
{
    return r->v + ((r->head + i) & (r->cap - 1)) * r->size;
}

static int ring_push(ring *r, const void *e)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        uint8_t *v = malloc(cap * r->size);
        if (!v)
            return QR_ENOMEM;
        for (size_t i = 0; i < r->n; i++)
            memcpy(v + i * r->size, ring_at(r, i), r->size);
        free(r->v);
        r->v = v;
        r->cap = cap;
        r->head = 0;
    }
    memcpy(ring_at(r, r->n), e, r->size);
    r->n++;
    return QR_OK;
}

static void ring_pop(ring *r, size_t k)
{
    r->head = (r->head + k) & (r->cap - 1);
    r->n -= k;
}

/* Remove entry i, keeping the order of the others. */
static void ring_remove(ring *r, size_t i)
{
    for (size_t j = i; j > 0; j--)
        memcpy(ring_at(r, j), ring_at(r, j - 1), r->size);
    ring_pop(r, 1);
}

static void dir_key(const uint8_t *src, uint16_t sp, const uint8_t *dst, uint16_t dp, uint64_t *k1,
                    uint64_t *k2)
{
    uint8_t key[36];
    memcpy(key, src, 16);
    memcpy(key + 16, dst, 16);
    key[32] = (uint8_t)(sp >> 8), key[33] = (uint8_t)sp;
    key[34] = (uint8_t)(dp >> 8), key[35] = (uint8_t)dp;
    qri_hash36(key, k1, k2);
}

/* The connection and side of a packet, or -1. */
int64_t qri_imp_find_dir(struct imp *m, const qr_capture_packet *p)
{
    uint64_t k1, k2;
    dir_key(p->src, p->src_port, p->dst, p->dst_port, &k1, &k2);
    for (;; k2++) {
        uintptr_t v = (uintptr_t)qri_map_get(&m->dir_index, k1, k2);
        if (!v)
            return -1;
        const qr_import_conn *c = &m->scan->conns[(v - 1) / 2];
        int side = (int)((v - 1) % 2);
        if (!memcmp(c->addr[side], p->src, 16) && c->port[side] == p->src_port &&
            !memcmp(c->addr[!side], p->dst, 16) && c->port[!side] == p->dst_port)
            return (int64_t)(v - 1);
    }
}

int qri_imp_index_dirs(struct imp *m)
{
    for (size_t i = 0; i < m->scan->n_conns; i++)
        for (int side = 0; side < 2; side++) {
            const qr_import_conn *c = &m->scan->conns[i];
            uint64_t k1, k2;
            dir_key(c->addr[side], c->port[side], c->addr[!side], c->port[!side], &k1, &k2);
            while (qri_map_get(&m->dir_index, k1, k2))
                k2++;
            if (qri_map_put(&m->dir_index, k1, k2, (void *)(uintptr_t)(2 * i + (size_t)side + 1)))
                return QR_ENOMEM;
        }
    return QR_OK;
}

/* The TCP timestamp value (option 8), or 0. */
static uint32_t tsval(const qr_capture_packet *p)
{
    size_t n, have;
    const uint8_t *v = qr_tcp_option(p->tcp_opts, p->tcp_opt_len, 8, &n, &have);
    if (!v || n != 8 || have < 4)
        return 0;
    return (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
}

/* What identifies one transmission of a segment at both ends. */
static uint64_t seg_key(const qr_capture_packet *p)
{
    uint64_t k = (uint64_t)p->seq << 32 | (uint64_t)(p->payload & 0xffff) << 16;
    if (p->family == 4)
        return k | p->ip_id;
    return k | (tsval(p) & 0xffff);
}

static int add_det(struct imp *m, uint32_t receiver, uint32_t dir, uint32_t seq)
{
    if (m->n_det == m->cap_det) {
        size_t cap = m->cap_det ? 2 * m->cap_det : 1024;
        qr_row_detected *v = realloc(m->det, cap * sizeof *v);
        if (!v)
            return QR_ENOMEM;
        m->det = v;
        m->cap_det = cap;
    }
    m->det[m->n_det++] = qr_detected_row(receiver, dir, seq, 0);
    m->dirs[dir].drops++;
    m->rep->drops[m->dirs[dir].evidence]++;
    return QR_OK;
}

/* Append r to the growing table *v (*n rows of *cap). */
static int push_row(qr_row_received **v, size_t *n, size_t *cap, qr_row_received r)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 4096;
        qr_row_received *g = realloc(*v, c * sizeof *g);
        if (!g)
            return QR_ENOMEM;
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = r;
    return QR_OK;
}

static int add_recv(struct imp *m, uint32_t dir, uint32_t seq, int64_t t)
{
    int rc = push_row(&m->recv, &m->n_recv, &m->cap_recv, (qr_row_received){dir, seq, t});
    if (!rc)
        m->rep->received++;
    return rc;
}

static void flow_time(struct imp *m, uint32_t dir, int64_t t, uint32_t clock_host)
{
    struct flow_times *f = &m->ftimes[qr_dir_flow(dir)];
    if (f->first == INT64_MAX || t < f->first)
        f->first = t, f->first_h = clock_host;
    if (f->last == INT64_MIN || t > f->last)
        f->last = t, f->last_h = clock_host;
}

/* Host `host`'s trace qri_imp_writer, opened on first use. */
int qri_imp_writer(struct imp *m, uint32_t host, qr_pcap_writer **out)
{
    if (!m->w[host]) {
        char path[sizeof m->tmp + 32];
        snprintf(path, sizeof path, "%s/pcap/h%04u.pcap", m->tmp, host);
        int rc = qr_pcap_writer_open(&m->w[host], path, m->errbuf);
        if (rc)
            return rc;
    }
    *out = m->w[host];
    return QR_OK;
}

/* Write segment s of direction dir as the next packet its sender put on the wire, at time t
 * (already serialized). Returns its number in the direction via *seq. */
static int emit(struct imp *m, uint32_t dir, const qr_capture_packet *s, int64_t t, uint32_t *seq)
{
    struct dir_state *d = &m->dirs[dir];
    uint32_t flow = qr_dir_flow(dir);
    qr_packet q;
    memset(&q, 0, sizeof q);
    q.time_ns = t;
    q.src_ip = qr_flow_table_host_addr(m->ft, d->src);
    q.dst_ip = qr_flow_table_host_addr(m->ft, d->dst);
    uint16_t sport = qr_flow_table_sender_port(m->ft, flow);
    q.src_port = qr_dir_is_ack(dir) ? QR_SINK_PORT : sport;
    q.dst_port = qr_dir_is_ack(dir) ? sport : QR_SINK_PORT;
    q.proto = 6;
    q.tos = s->tos;
    q.ttl = s->ttl;
    q.ip_id = (uint16_t)d->next_seq;
    /* the simulated network is IPv4 with 20-byte headers: an IPv6 packet keeps its TCP header
     * and payload, not its 40-byte header (its IP length was 40 + the payload length) */
    uint32_t ip_len = s->family == 6 ? 20u + s->tcp_hdr_len + s->payload : s->ip_len;
    q.ip_len = (uint16_t)(ip_len > 65535 ? 65535 : ip_len);
    q.seq = s->seq;
    q.ack = s->ack;
    q.tcp_flags = s->tcp_flags;
    q.window = s->window;
    q.tcp_opt_len = s->tcp_opt_len;
    memcpy(q.tcp_opts, s->tcp_opts, s->tcp_opt_len);
    if (t > QR_TIME_MAX)
        return qri_err(m->errbuf, QR_EVALUE,
                       "host %u: a packet sent at %" PRId64
                       " ns after the first one: beyond 2^62 ns",
                       d->src, t);
    qr_pcap_writer *w;
    int rc = qri_imp_writer(m, d->src, &w);
    if (!rc)
        rc = qr_pcap_write(w, &q, m->errbuf);
    if (rc)
        return rc;
    qr_import_host_report *h = &m->rep->hosts[d->src];
    h->packets++;
    h->bytes += q.ip_len;
    m->rep->packets++;
    m->nic_free[d->src] = t + wire_ns(m, q.ip_len);
    *seq = d->next_seq++;
    return QR_OK;
}

static int64_t *owd_slot(struct imp *m, uint32_t a, uint32_t b)
{
    int64_t *v = qri_map_get(&m->owd, a, b);
    if (v)
        return v;
    v = malloc(sizeof *v);
    if (!v || qri_map_put(&m->owd, a, b, v)) {
        free(v);
        return NULL;
    }
    *v = INT64_MAX;
    return v;
}

/* Both ends captured: match the direction's received segments to its sent ones. */
/* How long after a later segment's arrival a passed-over one may still arrive: the longest
 * transit of the scenario's network, and at least 1 s (captures from another network). */
static int64_t late_bound(const struct imp *m)
{
    int64_t t = qr_max_transit_ns(m->topo, m->conf->links.rate_bps, m->conf->links.delay_ns,
                                  m->conf->buffer.size_bytes);
    return t > 1000000000 ? t : 1000000000;
}

static int match(struct imp *m, uint32_t dir)
{
    struct dir_state *d = &m->dirs[dir];
    int rc;
    while (d->recv.n && (d->sent.n || d->late.n)) {
        const struct recv_ent *r = ring_at(&d->recv, 0);
        size_t i = 0;
        while (i < d->sent.n && ((struct sent_ent *)ring_at(&d->sent, i))->key != r->key)
            i++;
        if (i == d->sent.n) {
            /* sent before segments that arrived ahead of it: overtaken on the way, not lost */
            size_t k = 0;
            while (k < d->late.n && ((struct sent_ent *)ring_at(&d->late, k))->key != r->key)
                k++;
            if (k < d->late.n) {
                const struct sent_ent *s = ring_at(&d->late, k);
                if ((rc = add_recv(m, dir, s->seq, r->time)) != QR_OK)
                    return rc;
                m->rep->overtaken++;
                ring_remove(&d->late, k);
                ring_pop(&d->recv, 1);
                continue;
            }
            if (!d->sent.n)
                break; /* its sending is still to be read */
            const struct sent_ent *last = ring_at(&d->sent, d->sent.n - 1);
            int later = d->family == 4 ? (int16_t)(uint16_t)(r->ip_id - last->ip_id) > 0
                                       : d->sent.n <= 4096;
            if (later)
                break; /* its sending is still to be read */
            m->rep->unmatched_received++;
            ring_pop(&d->recv, 1);
            continue;
        }
        const struct sent_ent *s = ring_at(&d->sent, i);
        int64_t owd = clamp62((__int128)r->time - s->time);
        int64_t first = m->scan->first_ns[m->cap_of_host[d->dst]];
        __int128 recv_first = (__int128)first - m->rep->time_base_ns;
        for (size_t j = 0; j < i; j++) {
            const struct sent_ent *skipped = ring_at(&d->sent, j);
            if (first == INT64_MAX || (__int128)skipped->time + owd < recv_first)
                m->rep->unknown_tail++; /* before the receiver's capture started */
            else if ((rc = ring_push(&d->late, skipped)) != QR_OK)
                return rc; /* lost, unless it arrives later */
        }
        /* a passed-over segment whose first byte arrived again in this one was lost: the sender
         * had to resend it (the same segment, or a larger one covering it). Not a pure ACK: it
         * is never resent, and every ACK after the sender's last data has the same sequence
         * number (ACKs that swap places on the way are overtaken, not lost) */
        uint32_t r_seq = (uint32_t)(r->key >> 32), r_len = (uint32_t)(r->key >> 16) & 0xffffu;
        for (size_t k = 0; k < d->late.n;) {
            const struct sent_ent *e = ring_at(&d->late, k);
            uint32_t e_seq = (uint32_t)(e->key >> 32);
            int covered = e->seq_space && (e_seq == r_seq || (uint32_t)(e_seq - r_seq) < r_len);
            if (covered && e->seq != s->seq) {
                if ((rc = add_det(m, d->dst, dir, e->seq)) != QR_OK)
                    return rc;
                ring_remove(&d->late, k);
            } else {
                k++;
            }
        }
        /* what was passed over longer ago than any packet can travel was lost */
        while (d->late.n) {
            const struct sent_ent *e = ring_at(&d->late, 0);
            if ((__int128)e->time + owd + late_bound(m) >= r->time)
                break;
            if ((rc = add_det(m, d->dst, dir, e->seq)) != QR_OK)
                return rc;
            ring_pop(&d->late, 1);
        }
        if ((rc = add_recv(m, dir, s->seq, r->time)) != QR_OK)
            return rc;
        /* the one-way delay beyond the unloaded latency: offset difference + queueing */
        int64_t base = qr_unloaded_latency_ns(m->topo, d->src, d->dst, s->ip_len,
                                              m->conf->links.rate_bps, m->conf->links.delay_ns);
        int64_t *slot = owd_slot(m, d->src, d->dst);
        if (!slot)
            return QR_ENOMEM;
        if (clamp62((__int128)owd - base) < *slot)
            *slot = clamp62((__int128)owd - base);
        ring_pop(&d->sent, i + 1);
        ring_pop(&d->recv, 1);
    }
    return QR_OK;
}

static int grow_segs(struct imp *m, size_t n)
{
    if (n <= m->segs_cap)
        return QR_OK;
    qr_capture_packet *v = realloc(m->segs, n * sizeof *v);
    if (!v)
        return QR_ENOMEM;
    m->segs = v;
    m->segs_cap = n;
    return QR_OK;
}

static size_t segment(struct imp *m, const qr_capture_packet *p, int *rc)
{
    size_t n = qr_capture_segment(p, QR_MTU_BYTES, m->nic_bps, QR_LINK_OVERHEAD_BYTES, NULL, 0);
    if (n == 0) { /* headers alone exceed the MTU: keep it whole */
        *rc = grow_segs(m, 1);
        if (!*rc)
            m->segs[0] = *p;
        return *rc ? 0 : 1;
    }
    if ((*rc = grow_segs(m, n)) != QR_OK)
        return 0;
    qr_capture_segment(p, QR_MTU_BYTES, m->nic_bps, QR_LINK_OVERHEAD_BYTES, m->segs, n);
    if (n > 1)
        m->rep->tso_split++;
    return n;
}

static void receiver_acked(struct imp *m, struct dir_state *d, uint32_t ack);

/* A packet its capture's host sent. */
/* A captured IPv4 packet of direction dir, as its frame was (before any TSO/GRO split): the
 * sender's IP ID steps. */
static void note_ipid(struct imp *m, uint32_t dir, const qr_capture_packet *p)
{
    struct dir_state *d = &m->dirs[dir];
    if (d->family != 4 || (p->tcp_flags & (QR_TCP_SYN | QR_TCP_RST)))
        return;
    qr_ipid_stats *st = &m->rep->hosts[d->src].ipid;
    st->nonzero |= p->ip_id != 0;
    if (d->cls_have) {
        uint16_t step = (uint16_t)(p->ip_id - d->cls_id);
        uint32_t frame = d->cls_prev_pay > 536 ? (d->cls_prev_pay + 535) / 536 : 1;
        st->directions += d->cls_have == 1; /* its first step */
        d->cls_have = 2;
        st->steps++;
        if (!step)
            st->same++;
        else if (step <= frame)
            st->one++;
        else if (step <= QR_IPID_MAX_GAP)
            st->up++;
    } else {
        d->cls_have = 1;
    }
    d->cls_id = p->ip_id;
    d->cls_prev_pay = p->payload;
    int32_t *last = &m->host_last_id[d->src];
    if (*last >= 0) {
        uint16_t step = (uint16_t)(p->ip_id - (uint16_t)*last);
        st->host_steps++;
        st->host_up += step && step <= QR_IPID_MAX_GAP;
    }
    *last = p->ip_id;
}

int qri_imp_on_send(struct imp *m, uint32_t dir, qr_capture_packet *p)
{
    note_ipid(m, dir, p);
    struct dir_state *d = &m->dirs[dir];
    struct dir_state *rev = &m->dirs[dir ^ 1u];
    if ((rev->evidence == QR_EVIDENCE_IPID || rev->evidence == QR_EVIDENCE_NONE) &&
        (p->tcp_flags & QR_TCP_ACK))
        receiver_acked(m, rev, p->ack);
    int64_t t = p->time_ns - m->rep->time_base_ns;
    if (t < m->nic_free[d->src])
        t = m->nic_free[d->src];
    p->time_ns = t;
    int rc;
    size_t n = segment(m, p, &rc);
    if (rc)
        return rc;
    for (size_t k = 0; k < n; k++) {
        qr_capture_packet *s = &m->segs[k];
        int64_t ts = s->time_ns < m->nic_free[d->src] ? m->nic_free[d->src] : s->time_ns;
        uint32_t seq;
        if ((rc = emit(m, dir, s, ts, &seq)) != QR_OK)
            return rc;
        flow_time(m, dir, ts, d->src);
        if (d->evidence == QR_EVIDENCE_BOTH) {
            struct sent_ent e = {
                seg_key(s),          seq, s->ip_id,
                (uint16_t)s->ip_len, ts,  s->payload || (s->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN))};
            if ((rc = ring_push(&d->sent, &e)) != QR_OK || (rc = match(m, dir)) != QR_OK)
                return rc;
        } else if (d->evidence == QR_EVIDENCE_RETRANS) {
            uint32_t len = qr_tcp_seq_len(s->payload, s->tcp_flags);
            if (!len)
                continue;
            for (size_t i = d->rtx.n; i-- > 0;) {
                struct rtx_ent *e = ring_at(&d->rtx, i);
                if (e->start == s->seq) {
                    if (!e->lost && (rc = add_det(m, d->src, dir, e->seq)) != QR_OK)
                        return rc;
                    e->lost = 1;
                    break;
                }
            }
            struct rtx_ent e = {s->seq, s->seq + len, seq, 0};
            if ((rc = ring_push(&d->rtx, &e)) != QR_OK)
                return rc;
        }
    }
    return QR_OK;
}

/* ---- only the receiver captured: what its sequence numbers say ----
 *
 * A data segment that starts beyond the highest byte received opens a hole: the bytes between
 * were sent and have not arrived (yet). What closes the hole says what happened to them:
 *  - a segment filling it that was sent after the one that opened it (a newer IP ID from a
 *    sender whose IDs increase, or a newer TCP timestamp) is a resend: the original was lost.
 *    One packet is made up for it, carrying exactly the bytes it fills, just before the resend;
 *  - a segment filling it that was sent before (an older ID or timestamp) was reordered on the
 *    way: nothing was lost;
 *  - a filler whose IDs and timestamps cannot tell (IDs constant or random, no timestamps) leaves
 *    the fate unknown, counted;
 *  - the receiver acknowledging the hole's bytes without a filler captured means they arrived and
 *    the capture missed them (a busy capture, a snap of the traffic): not lost, counted;
 *  - a hole still open when the capture ends is unknown, counted.
 * IP ID gaps alone make up nothing: hosts that number all their connections with one counter
 * leave gaps of dozens between a connection's packets. */

/* The TCP timestamp's value of p, if it carries one (the packet codec's option walk). */
static int tsval_of(const qr_capture_packet *p, uint32_t *v)
{
    size_t n, have;
    const uint8_t *o = qr_tcp_option(p->tcp_opts, p->tcp_opt_len, 8, &n, &have);
    if (!o || n != 8 || have < 8)
        return 0;
    *v = (uint32_t)o[0] << 24 | (uint32_t)o[1] << 16 | (uint32_t)o[2] << 8 | o[3];
    return 1;
}

/* Was s sent after the segment that opened hole h? 1 yes, 0 no, -1 cannot tell. */
static int sent_after(const struct dir_state *d, const struct hole *h, const qr_capture_packet *s)
{
    uint32_t tv;
    if (h->has_ts && tsval_of(s, &tv) && tv != h->ts_after)
        return (int32_t)(tv - h->ts_after) > 0;
    if (d->ids_count_up && s->ip_id != h->id_after)
        return (int16_t)(uint16_t)(s->ip_id - h->id_after) > 0;
    return -1;
}

static void hole_remove(struct dir_state *d, size_t i)
{
    d->holes[i] = d->holes[--d->n_holes];
}

/* *late: s filled a hole and was sent before the segment that opened it. */
static int receiver_holes(struct imp *m, uint32_t dir, const qr_capture_packet *s, int64_t *ts,
                          int *late)
{
    *late = 0;
    struct dir_state *d = &m->dirs[dir];
    int syn = (s->tcp_flags & QR_TCP_SYN) != 0;
    uint32_t len = s->payload + (uint32_t)syn + ((s->tcp_flags & QR_TCP_FIN) != 0);
    if (syn) {
        d->hi = s->seq + 1u;
        d->have_hi = 1;
        return QR_OK;
    }
    if (!s->payload)
        return QR_OK;
    if (!d->have_hi) {
        d->hi = s->seq + len;
        d->have_hi = 1;
        return QR_OK;
    }
    uint32_t end = s->seq + len;
    if ((int32_t)(s->seq - d->hi) > 0) { /* a hole opens */
        if (d->n_holes == QR_IMPORT_HOLES_MAX) {
            m->rep->hole_unknown++; /* too many open at once: the oldest's fate stays unknown */
            hole_remove(d, 0);
        }
        struct hole *h = &d->holes[d->n_holes++];
        *h = (struct hole){d->hi, s->seq, s->ip_id, 0, 0};
        h->has_ts = (uint8_t)tsval_of(s, &h->ts_after);
    }
    /* what this segment fills of the open holes */
    for (size_t i = d->n_holes; i-- > 0;) {
        struct hole *h = &d->holes[i];
        if ((int32_t)(s->seq - h->hi) >= 0 || (int32_t)(end - h->lo) <= 0)
            continue;
        uint32_t lo = (int32_t)(s->seq - h->lo) > 0 ? s->seq : h->lo;
        uint32_t hi = (int32_t)(end - h->hi) < 0 ? end : h->hi;
        int after = sent_after(d, h, s);
        if (after == 1) {
            qr_capture_packet lost = *s;
            lost.seq = lo;
            lost.payload = hi - lo;
            lost.tcp_flags = (uint8_t)(s->tcp_flags & ~(QR_TCP_FIN | QR_TCP_RST));
            lost.ip_len = 20u + s->tcp_hdr_len + lost.payload;
            int64_t tg = *ts < m->nic_free[d->src] ? m->nic_free[d->src] : *ts;
            uint32_t seq;
            int rc = emit(m, dir, &lost, tg, &seq);
            if (!rc)
                rc = add_det(m, d->dst, dir, seq);
            if (rc)
                return rc;
            m->rep->hosts[d->src].reconstructed_packets++;
            flow_time(m, dir, tg, d->dst);
            if (*ts < m->nic_free[d->src])
                *ts = m->nic_free[d->src];
        } else if (after == 0) {
            m->rep->hole_reordered++;
            *late = 1;
        } else {
            m->rep->hole_unknown++;
        }
        /* what is left of the hole: below and above what was filled */
        struct hole rest = *h;
        int keep_lo = (int32_t)(lo - h->lo) > 0, keep_hi = (int32_t)(h->hi - hi) > 0;
        if (keep_lo)
            h->hi = lo;
        if (keep_hi) {
            if (!keep_lo) {
                h->lo = hi;
            } else if (d->n_holes < QR_IMPORT_HOLES_MAX) {
                rest.lo = hi;
                d->holes[d->n_holes++] = rest;
            } else {
                m->rep->hole_unknown++;
            }
        }
        if (!keep_lo && !keep_hi)
            hole_remove(d, i);
    }
    if ((int32_t)(end - d->hi) > 0)
        d->hi = end;
    return QR_OK;
}

/* The receiver (the captured host) acknowledged up to ack: holes below it arrived uncaptured. */
static void receiver_acked(struct imp *m, struct dir_state *d, uint32_t ack)
{
    for (size_t i = d->n_holes; i-- > 0;) {
        struct hole *h = &d->holes[i];
        if ((int32_t)(ack - h->hi) >= 0) {
            m->rep->hole_not_captured++;
            hole_remove(d, i);
        } else if ((int32_t)(ack - h->lo) > 0) {
            h->lo = ack;
        }
    }
}

/* A packet its capture's host received. */
int qri_imp_on_receive(struct imp *m, uint32_t dir, qr_capture_packet *p)
{
    note_ipid(m, dir, p);
    struct dir_state *d = &m->dirs[dir];
    struct dir_state *rev = &m->dirs[dir ^ 1u];
    int rc;
    /* its ACK frees the reverse direction's retransmission record */
    if (rev->evidence == QR_EVIDENCE_RETRANS && (p->tcp_flags & QR_TCP_ACK))
        while (rev->rtx.n &&
               (int32_t)(((struct rtx_ent *)ring_at(&rev->rtx, 0))->end - p->ack) <= 0)
            ring_pop(&rev->rtx, 1);
    int64_t t = p->time_ns - m->rep->time_base_ns;
    p->time_ns = 0;
    size_t n = segment(m, p, &rc);
    if (rc)
        return rc;
    /* merged segments arrived back to back, the last one ending at the capture time */
    int64_t end_last = m->segs[n - 1].time_ns + wire_ns(m, m->segs[n - 1].ip_len);
    for (size_t k = 0; k < n; k++) {
        qr_capture_packet *s = &m->segs[k];
        int64_t tr = clamp62((__int128)t - (end_last - (s->time_ns + wire_ns(m, s->ip_len))));
        if (d->evidence == QR_EVIDENCE_BOTH) {
            struct recv_ent e = {seg_key(s), s->ip_id, tr};
            if ((rc = ring_push(&d->recv, &e)) != QR_OK || (rc = match(m, dir)) != QR_OK)
                return rc;
            continue;
        }
        /* the sender was not captured: reconstruct its sending */
        int64_t ts = clamp62((__int128)tr - qr_unloaded_latency_ns(
                                                m->topo, d->src, d->dst, s->ip_len,
                                                m->conf->links.rate_bps, m->conf->links.delay_ns));
        if (ts < m->nic_free[d->src])
            ts = m->nic_free[d->src];
        qr_import_host_report *h = &m->rep->hosts[d->src];
        int late;
        if ((rc = receiver_holes(m, dir, s, &ts, &late)) != QR_OK)
            return rc;
        d->last_send = ts;
        uint32_t seq;
        if ((rc = emit(m, dir, s, ts, &seq)) != QR_OK || (rc = add_recv(m, dir, seq, tr)) != QR_OK)
            return rc;
        /* sent before what arrived ahead of it: the recording gives its sender's packets in
         * arrival order, so the late original is marked as such, not taken for a resend */
        if (late && (rc = push_row(&m->late, &m->n_late, &m->cap_late,
                                   (qr_row_received){dir, seq, tr})) != QR_OK)
            return rc;
        h->reconstructed_packets++;
        flow_time(m, dir, ts, d->dst);
    }
    return QR_OK;
}

/* After the last packet: what is still unmatched. */
int qri_imp_finish_dirs(struct imp *m)
{
    int64_t max_transit = qr_max_transit_ns(m->topo, m->conf->links.rate_bps,
                                            m->conf->links.delay_ns, m->conf->buffer.size_bytes);
    for (size_t dir = 0; dir < 2 * m->n_flows; dir++) {
        struct dir_state *d = &m->dirs[dir];
        m->rep->hole_unknown += d->n_holes; /* still open at the capture's end */
        d->n_holes = 0;
        if (d->evidence != QR_EVIDENCE_BOTH)
            continue;
        /* passed over and never arrived: lost if the receiver's capture went on long enough */
        const struct cap_state *rcap = &m->caps[m->cap_of_host[d->dst]];
        int64_t *lslot = qri_map_get(&m->owd, d->src, d->dst);
        int64_t lowd = lslot && *lslot != INT64_MAX ? *lslot : 0;
        for (size_t i = 0; i < d->late.n; i++) {
            const struct sent_ent *e = ring_at(&d->late, i);
            if (rcap->last_time != INT64_MIN &&
                (__int128)e->time + lowd + max_transit <
                    (__int128)rcap->last_time - m->rep->time_base_ns) {
                int rc = add_det(m, d->dst, (uint32_t)dir, e->seq);
                if (rc)
                    return rc;
            } else {
                m->rep->unknown_tail++;
            }
        }
        ring_pop(&d->late, d->late.n);
        m->rep->unmatched_received += d->recv.n;
        ring_pop(&d->recv, d->recv.n);
        if (!d->sent.n)
            continue;
        int64_t *slot = qri_map_get(&m->owd, d->src, d->dst);
        int64_t owd = slot && *slot != INT64_MAX ? *slot : 0;
        const struct cap_state *rc_ = &m->caps[m->cap_of_host[d->dst]];
        __int128 recv_end = (__int128)rc_->last_time - m->rep->time_base_ns;
        for (size_t i = 0; i < d->sent.n; i++) {
            const struct sent_ent *s = ring_at(&d->sent, i);
            if (rc_->last_time != INT64_MIN && (__int128)s->time + owd + max_transit < recv_end) {
                int rc = add_det(m, d->dst, (uint32_t)dir, s->seq);
                if (rc)
                    return rc;
            } else {
                m->rep->unknown_tail++;
            }
        }
        ring_pop(&d->sent, d->sent.n);
    }
    return QR_OK;
}
