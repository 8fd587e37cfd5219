/* qreplay import, second pass: a recording from operators' captures (import.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "map.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/lossdet.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/textio.h"
#include "qreplay/topology.h"
#include "qreplay/trace.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/version.h"
#include "recording_internal.h"

/* A connection's place in the flows' order. */
struct conn_order {
    int64_t key;
    size_t index;
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_conn_order(const void *a, const void *b)
{
    const struct conn_order *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

const char *qr_import_evidence_name(int e)
{
    static const char *const n[] = {"both", "retrans", "ipid", "none"};
    return e >= 0 && e < QR_EVIDENCE_COUNT ? n[e] : "?";
}

const char *qr_ipid_kind_name(int k)
{
    static const char *const n[] = {
        "unknown", "per connection", "one counter per host", "random", "zero", "constant", "mixed"};
    return k >= 0 && k < QR_IPID_KINDS ? n[k] : "?";
}

qr_ipid_kind qr_ipid_classify(const qr_ipid_stats *s)
{
    if (s->steps < 3)
        return QR_IPID_UNKNOWN;
    if (s->same == s->steps)
        return s->nonzero ? QR_IPID_CONSTANT : QR_IPID_ZERO;
    uint64_t rise = s->one + s->up;
    if (10 * rise >= 9 * s->steps) {
        if (s->directions >= 2 && s->host_steps >= 3)
            return 10 * s->host_up >= 9 * s->host_steps ? QR_IPID_PER_HOST : QR_IPID_PER_CONN;
        return 10 * s->one >= 9 * s->steps ? QR_IPID_PER_CONN : QR_IPID_PER_HOST;
    }
    return 2 * rise < s->steps ? QR_IPID_RANDOM : QR_IPID_MIXED;
}

const char *qr_import_left_name(int r)
{
    static const char *const n[] = {"same host at both ends", "not to or from the capture's host",
                                    "second capture of a host"};
    return r >= 0 && r < QR_IMPORT_LEFT_COUNT ? n[r] : "?";
}

void qr_import_report_free(qr_import_report *r)
{
    if (!r)
        return;
    free(r->captures);
    free(r->hosts);
    free(r);
}

/* ---- the user's path file (import --paths) ---- */

int qr_import_paths_read(const char *path, qr_import_path **out, size_t *n, char *errbuf)
{
    *out = NULL;
    *n = 0;
    qr_lines *lines;
    int rc = qr_lines_open(&lines, path, errbuf);
    if (rc)
        return rc;
    size_t cap = 0;
    char *line;
    size_t len;
    long no;
    while ((rc = qr_lines_next(lines, &line, &len, &no, errbuf)) == QR_OK) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *tok[4 + QR_IMPORT_PATH_MAX + 1];
        size_t nt = 0;
        for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
            if (nt == sizeof tok / sizeof tok[0]) {
                rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: more than %d links", path, no,
                             QR_IMPORT_PATH_MAX);
                goto done;
            }
            tok[nt++] = t;
        }
        if (nt == 0)
            continue;
        if (nt < 5) {
            rc = qri_err(errbuf, QR_ESYNTAX,
                         "%s:%ld: expected SRC SPORT DST DPORT and at least one link, got %zu "
                         "field%s",
                         path, no, nt, nt == 1 ? "" : "s");
            goto done;
        }
        if (qri_grow((void **)out, &cap, *n, sizeof **out, 64)) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            goto done;
        }
        qr_import_path *p = &(*out)[*n];
        memset(p, 0, sizeof *p);
        p->line = no;
        const char *what[4] = {"source address", "source port", "destination address",
                               "destination port"};
        for (int k = 0; k < 4; k++) {
            int bad;
            if (k % 2 == 0) {
                bad = qr_addr_parse(tok[k], k ? p->dst : p->src) != QR_OK;
            } else {
                char *end;
                unsigned long v = strtoul(tok[k], &end, 10);
                bad = !*tok[k] || *end || *tok[k] == '-' || v < 1 || v > 65535;
                *(k == 1 ? &p->sport : &p->dport) = (uint16_t)v;
            }
            if (bad) {
                rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: field %d, %s: '%s' is not one", path, no,
                             k + 1, what[k], tok[k]);
                goto done;
            }
        }
        for (size_t k = 4; k < nt; k++) {
            if (strlen(tok[k]) >= sizeof p->links[0]) {
                rc =
                    qri_err(errbuf, QR_EVALUE, "%s:%ld: field %zu: link name longer than %zu bytes",
                            path, no, k + 1, sizeof p->links[0] - 1);
                goto done;
            }
            if (strcmp(tok[k], "*"))
                snprintf(p->links[p->n_links], sizeof p->links[0], "%s", tok[k]);
            p->n_links++;
        }
        (*n)++;
    }
    if (rc == QR_END)
        rc = QR_OK;
done:
    qr_lines_close(lines);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- a ring buffer of fixed-size entries ---- */

typedef struct ring {
    uint8_t *v;
    size_t head, n, cap, size;
} ring;

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

/* ---- state ---- */

struct sent_ent {
    uint64_t key;
    uint32_t seq;
    uint16_t ip_id, ip_len;
    int64_t time;      /* first bit, sender's clock (rebased) */
    uint8_t seq_space; /* it carries sequence space (payload, SYN or FIN): a sender resends it */
};

struct recv_ent {
    uint64_t key;
    uint16_t ip_id;
    int64_t time; /* last bit, receiver's clock (rebased) */
};

struct rtx_ent {
    uint32_t start, end; /* TCP sequence range (SYN and FIN count one) */
    uint32_t seq;        /* the packet's number */
    uint8_t lost;
};

/* Bytes a receiver-only direction is missing: [lo, hi), opened by a segment with these IP ID and
 * TCP timestamp. */
struct hole {
    uint32_t lo, hi;
    uint16_t id_after;
    uint32_t ts_after;
    uint8_t has_ts;
};
#define QR_IMPORT_HOLES_MAX 16

struct dir_state {
    uint32_t src, dst; /* hosts */
    uint8_t evidence, family;
    uint32_t next_seq;
    ring sent, recv, rtx;
    ring late; /* sent, passed over by a later segment's arrival: overtaken or lost */
    uint8_t have_hi;
    uint8_t cls_have; /* the sender's IP IDs, every captured packet (qr_ipid_stats) */
    uint16_t cls_id;
    uint32_t cls_prev_pay; /* the previous packet's payload */
    uint32_t hi;           /* receiver only: the highest sequence received */
    uint8_t ids_count_up;  /* its sender numbers IP IDs up (a counter per connection or per host):
                              they order its packets */
    struct hole holes[QR_IMPORT_HOLES_MAX];
    size_t n_holes;
    int64_t last_send;
    uint64_t drops;
};

struct flow_times {
    int64_t first, last; /* rebased, on the clock of first_host / last_host */
    uint32_t first_h, last_h;
};

struct cap_state {
    qr_capture *c;
    qr_capture_packet next;
    int has_next;
    uint32_t *view; /* the hosts it holds in view, sorted */
    size_t n_view;
    int64_t last_time;
};

struct imp {
    const qr_import_cfg *cfg;
    const qr_config *conf;
    uint64_t nic_bps; /* the rate a host's NIC serializes what its capture shows (below) */
    qr_topology *topo;
    qr_import_scan *scan;
    qr_flow_table *ft;
    int64_t *flow_of_conn; /* -1: left out */
    size_t n_flows;
    struct dir_state *dirs;
    struct flow_times *ftimes;
    uint32_t n_hosts;
    qr_trace_writer **w;
    int64_t *nic_free;
    int32_t *host_last_id; /* the last IPv4 ID a host sent, in capture time order; -1 none */
    int32_t *cap_of_host;  /* the capture a host's packets come from, -1 none */
    uint8_t *reconstructed;
    qri_map dir_index; /* directional 5-tuple -> conn * 2 + side + 1 */
    qri_map owd;       /* (sender host, receiver host) -> min one-way delay + 1 (stored as ptr) */
    struct cap_state *caps;
    qr_capture_packet *segs;
    size_t segs_cap;
    qr_row_detected *det;
    size_t n_det, cap_det;
    qr_row_received *recv;
    size_t n_recv, cap_recv;
    qr_row_received *late; /* /import/late: late originals at a receiver-only direction */
    size_t n_late, cap_late;
    qr_import_report *rep;
    char tmp[QR_PATH_MAX + 64];
    uint64_t packets_seen;
    char *errbuf;
};

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
static int64_t find_dir(struct imp *m, const qr_capture_packet *p)
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

static int index_dirs(struct imp *m)
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

/* Time arithmetic on captured timestamps ([0, 2^62] ns, rebased) and values derived from them:
 * computed in 128 bits and kept within +-2^62, so no sum or difference of two of them overflows. */
static int64_t clamp62(__int128 v)
{
    const __int128 lim = (__int128)1 << 62;
    return (int64_t)(v > lim ? lim : v < -lim ? -lim : v);
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

static int64_t wire_ns(const struct imp *m, uint32_t ip_len)
{
    return qri_wire_ns((uint64_t)ip_len + QR_LINK_OVERHEAD_BYTES, m->nic_bps);
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

/* Host `host`'s trace writer, opened on first use. */
static int writer(struct imp *m, uint32_t host, qr_trace_writer **out)
{
    if (!m->w[host]) {
        char path[sizeof m->tmp + 32];
        snprintf(path, sizeof path, "%s/pcap/h%04u.pcap", m->tmp, host);
        int rc = qr_trace_writer_open(&m->w[host], path, m->errbuf);
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
    qr_trace_writer *w;
    int rc = writer(m, d->src, &w);
    if (!rc)
        rc = qr_trace_write(w, &q, m->errbuf);
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

static int on_send(struct imp *m, uint32_t dir, qr_capture_packet *p)
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
static int on_receive(struct imp *m, uint32_t dir, qr_capture_packet *p)
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
static int finish_dirs(struct imp *m)
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

/* ---- set-up ---- */

static int setup(struct imp *m)
{
    const qr_import_scan *s = m->scan;
    qr_import_report *rep = m->rep;
    m->n_hosts = qr_topology_hosts(m->topo);
    rep->n_hosts = m->n_hosts;
    rep->n_captures = s->n_captures;
    rep->captures = calloc(s->n_captures, sizeof *rep->captures);
    rep->hosts = calloc(m->n_hosts, sizeof *rep->hosts);
    m->w = calloc(m->n_hosts, sizeof *m->w);
    m->nic_free = calloc(m->n_hosts, sizeof *m->nic_free);
    m->cap_of_host = malloc(m->n_hosts * sizeof *m->cap_of_host);
    m->host_last_id = malloc(m->n_hosts * sizeof *m->host_last_id);
    m->reconstructed = calloc(m->n_hosts, 1);
    m->flow_of_conn = malloc((s->n_conns + 1) * sizeof *m->flow_of_conn);
    m->caps = calloc(s->n_captures, sizeof *m->caps);
    qr_flow *flows = malloc((s->n_conns + 1) * sizeof *flows);
    int rc = QR_ENOMEM;
    if (!rep->captures || !rep->hosts || !m->w || !m->nic_free || !m->cap_of_host ||
        !m->host_last_id || !m->reconstructed || !m->flow_of_conn || !m->caps || !flows)
        goto done;
    for (uint32_t h = 0; h < m->n_hosts; h++) {
        m->cap_of_host[h] = -1;
        m->host_last_id[h] = -1;
        rep->hosts[h].host = h;
        rep->hosts[h].clock.reference = h;
    }
    int64_t first = INT64_MAX;
    for (uint32_t h = 0; h < m->n_hosts; h++)
        rep->hosts[h].capture = -1;
    /* each host's packets come from the first capture holding it in view: every capture's owner
     * first (its own capture), then the hosts a router's or mirror's capture holds by timing */
    for (size_t i = 0; i < 2 * s->n_views; i++) {
        size_t v = i % s->n_views;
        if ((i < s->n_views) == (s->view_how[v] == QR_VANTAGE_TIMING))
            continue;
        int64_t h = qr_import_scan_host(s, s->view_addr[v]);
        uint32_t c = s->view_capture[v];
        struct cap_state *cs = &m->caps[c];
        uint32_t *grown = realloc(cs->view, (cs->n_view + 1) * sizeof *grown);
        if (!grown)
            goto done;
        cs->view = grown;
        cs->view[cs->n_view++] = (uint32_t)h;
        if (m->cap_of_host[h] < 0) {
            m->cap_of_host[h] = (int32_t)c;
            rep->hosts[h].captured = 1;
            rep->hosts[h].capture = (int32_t)c;
            rep->hosts[h].vantage = s->view_how[v];
        }
    }
    for (size_t c = 0; c < s->n_captures; c++)
        qsort(m->caps[c].view, m->caps[c].n_view, sizeof *m->caps[c].view, cmp_u32);
    for (size_t c = 0; c < s->n_captures; c++) {
        uint32_t h = s->owner_host[c];
        if (s->first_ns[c] < first)
            first = s->first_ns[c];
        qr_import_capture_report *cr = &rep->captures[c];
        qri_strlcpy(cr->path, m->cfg->captures[c], sizeof cr->path);
        cr->host = h;
        qr_addr_text(s->owner[c], cr->owner, sizeof cr->owner);
    }
    for (size_t i = 0; i < s->n_addrs; i++) {
        qr_import_host_report *h = &rep->hosts[s->addr_host[i]];
        if (!h->addr[0])
            qr_addr_text(s->addr[i], h->addr, sizeof h->addr);
    }
    /* the time base: 1 ms before the first packet (or 0), so reconstructed send times stay >= 0 */
    rep->time_base_ns = first == INT64_MAX || first < 1000000 ? 0 : first - 1000000;
    /* flows: every connection between two distinct hosts, in the order their initiators opened
     * them, on each initiator's own clock where its capture saw it (else first appearance): a
     * host's flows, and so their sender ports and ECMP paths, come in the order it opened them,
     * as in a simulated run */
    struct conn_order *order = malloc((s->n_conns ? s->n_conns : 1) * sizeof *order);
    if (!order) {
        rc = QR_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < s->n_conns; i++) {
        const qr_import_conn *c = &s->conns[i];
        order[i].key = c->own_first_ns != INT64_MAX ? c->own_first_ns : c->first_ns;
        order[i].index = i;
    }
    qsort(order, s->n_conns, sizeof *order, cmp_conn_order);
    m->n_flows = 0;
    for (size_t o = 0; o < s->n_conns; o++) {
        size_t i = order[o].index;
        const qr_import_conn *c = &s->conns[i];
        int64_t a = qr_import_scan_host(s, c->addr[0]), b = qr_import_scan_host(s, c->addr[1]);
        if (a < 0 || b < 0 || a == b) {
            m->flow_of_conn[i] = -1;
            continue;
        }
        m->flow_of_conn[i] = (int64_t)m->n_flows;
        flows[m->n_flows] = (qr_flow){
            m->n_flows, (uint32_t)a, (uint32_t)b, c->bytes[0], c->first_ns - rep->time_base_ns, 0};
        m->n_flows++;
    }
    free(order);
    rep->connections = m->n_flows;
    if (m->n_flows == 0) {
        /* an empty recording is no recording: say what the captures held instead */
        size_t same = 0, unplaced = 0;
        for (size_t i = 0; i < s->n_conns; i++) {
            int64_t a = qr_import_scan_host(s, s->conns[i].addr[0]),
                    b = qr_import_scan_host(s, s->conns[i].addr[1]);
            same += a >= 0 && a == b;
            unplaced += a < 0 || b < 0;
        }
        rc = qri_err(m->errbuf, QR_ENOTFOUND,
                     "no usable TCP connection in the captures: %zu connection%s seen, %zu "
                     "between addresses of one host, %zu with an address that is no host",
                     s->n_conns, s->n_conns == 1 ? "" : "s", same, unplaced);
        goto done;
    }
    char detail[QR_ERRBUF_SIZE];
    if ((rc = qr_flow_table_for_topology(&m->ft, flows, m->n_flows, m->topo, detail)) != QR_OK) {
        rc = qri_err(m->errbuf, rc, "the captured connections do not fit the topology: %s", detail);
        goto done;
    }
    m->dirs = calloc(2 * m->n_flows + 1, sizeof *m->dirs);
    m->ftimes = malloc((m->n_flows + 1) * sizeof *m->ftimes);
    if (!m->dirs || !m->ftimes) {
        rc = QR_ENOMEM;
        goto done;
    }
    for (size_t f = 0; f < m->n_flows; f++)
        m->ftimes[f] = (struct flow_times){INT64_MAX, INT64_MIN, 0, 0};
    for (size_t i = 0; i < s->n_conns; i++) {
        if (m->flow_of_conn[i] < 0)
            continue;
        const qr_import_conn *c = &s->conns[i];
        for (int side = 0; side < 2; side++) {
            uint32_t dir = 2 * (uint32_t)m->flow_of_conn[i] + (uint32_t)side;
            struct dir_state *d = &m->dirs[dir];
            d->src = (uint32_t)qr_import_scan_host(s, c->addr[side]);
            d->dst = (uint32_t)qr_import_scan_host(s, c->addr[!side]);
            d->family = c->family;
            /* IDs that rise along the direction (one counter per connection or per host, a
             * packet overtaken on the way a step back) order its packets, over the whole capture;
             * constant or random ones do not (a random step is within QR_IPID_MAX_GAP either way
             * 1 time in 32) */
            uint64_t up = c->id_up[side], near = up + c->id_back[side];
            d->ids_count_up =
                c->family == 4 && up >= 3 && near >= 9 * (near + c->id_other[side]) / 10;
            d->sent.size = sizeof(struct sent_ent);
            d->late.size = sizeof(struct sent_ent);
            d->recv.size = sizeof(struct recv_ent);
            d->rtx.size = sizeof(struct rtx_ent);
            int sc = m->cap_of_host[d->src] >= 0, rcv = m->cap_of_host[d->dst] >= 0;
            d->evidence = sc && rcv        ? QR_EVIDENCE_BOTH
                          : sc             ? QR_EVIDENCE_RETRANS
                          : c->family == 4 ? QR_EVIDENCE_IPID
                                           : QR_EVIDENCE_NONE;
            rep->directions[d->evidence]++;
            if (!sc)
                m->reconstructed[d->src] = 1;
        }
    }
    for (uint32_t h = 0; h < m->n_hosts; h++)
        rep->hosts[h].reconstructed = m->reconstructed[h];
    rc = index_dirs(m);
done:
    free(flows);
    return rc;
}

/* ---- the clock: reconcile, then shift every time onto one clock ---- */

struct pair_acc {
    struct imp *m;
    qr_owd_pair *v;
    size_t n, cap;
    int oom;
};

static void collect_pair(uint64_t a, uint64_t b, void *value, void *ctx)
{
    struct pair_acc *acc = ctx;
    if (a >= b || acc->oom)
        return; /* each unordered pair once, from its smaller host */
    int64_t *back = qri_map_get(&acc->m->owd, b, a);
    if (!back || *back == INT64_MAX || *(int64_t *)value == INT64_MAX)
        return;
    if (acc->n == acc->cap) {
        size_t cap = acc->cap ? 2 * acc->cap : 16;
        qr_owd_pair *v = realloc(acc->v, cap * sizeof *v);
        if (!v) {
            acc->oom = 1;
            return;
        }
        acc->v = v;
        acc->cap = cap;
    }
    acc->v[acc->n++] = (qr_owd_pair){(uint32_t)a, (uint32_t)b, *(int64_t *)value, *back};
}

static void free_owd(uint64_t a, uint64_t b, void *value, void *ctx)
{
    (void)a, (void)b, (void)ctx;
    free(value);
}

/* Shift every host's pcap by the correction of the clock its times were taken on (its own, or for
 * a reconstructed host, each packet's receiver's), keeping the NIC order. */
static int shift_pcaps(struct imp *m, const int64_t *shift)
{
    char in[sizeof m->tmp + 32], out[sizeof m->tmp + 48];
    for (uint32_t h = 0; h < m->n_hosts; h++) {
        if (!m->rep->hosts[h].packets)
            continue;
        snprintf(in, sizeof in, "%s/pcap/h%04u.pcap", m->tmp, h);
        snprintf(out, sizeof out, "%s/pcap/h%04u.shifted", m->tmp, h);
        qr_trace_reader *r = NULL;
        qr_trace_writer *w = NULL;
        int rc = qr_trace_reader_open(&r, in, m->errbuf);
        if (!rc)
            rc = qr_trace_writer_open(&w, out, m->errbuf);
        qr_packet p;
        int64_t nic = 0;
        while (!rc && (rc = qr_trace_read(r, &p, m->errbuf)) == QR_OK) {
            uint32_t clock = h;
            if (m->reconstructed[h] && qr_topology_host_of_addr(m->topo, p.dst_ip, &clock))
                clock = h;
            __int128 t = (__int128)p.time_ns + shift[clock];
            if (t > QR_TIME_MAX) {
                rc = qri_err(m->errbuf, QR_EVALUE,
                             "host %u: the clock correction puts a packet beyond 2^62 ns", h);
                break;
            }
            p.time_ns = t < nic ? nic : (int64_t)t;
            nic = p.time_ns + wire_ns(m, p.ip_len);
            rc = qr_trace_write(w, &p, m->errbuf);
        }
        if (rc == QR_END)
            rc = QR_OK;
        qr_trace_reader_close(r);
        int wc = qr_trace_writer_close(w, m->errbuf);
        if (!rc)
            rc = wc;
        if (!rc && rename(out, in))
            rc = qri_err(m->errbuf, QR_EIO, "%s: %s", in, strerror(errno));
        if (rc)
            return rc;
    }
    return QR_OK;
}

/* An estimated offset in whole ns (qr_clock_reconcile keeps it within +-2^61). */
static int64_t offset_ns(const qr_clock_estimate *e)
{
    return e->offset_ns;
}

static int reconcile(struct imp *m, int64_t *shift)
{
    qr_import_report *rep = m->rep;
    struct pair_acc acc = {m, NULL, 0, 0, 0};
    qri_map_foreach(&m->owd, collect_pair, &acc);
    if (acc.oom) {
        free(acc.v);
        return QR_ENOMEM;
    }
    rep->clock_pairs = acc.n;
    for (uint32_t h = 0; h < m->n_hosts; h++)
        shift[h] = 0;
    int rc = QR_OK;
    if (m->cfg->clock == QR_IMPORT_CLOCK_RECONCILE && acc.n == 0) {
        rc = qri_err(m->errbuf, QR_EVALUE,
                     "--clock reconcile: no two hosts were captured at both ends of a connection "
                     "with packets matched both ways (use --clock none)");
    } else if (acc.n) {
        qr_clock_estimate *est = malloc(m->n_hosts * sizeof *est);
        if (!est) {
            free(acc.v);
            return QR_ENOMEM;
        }
        uint32_t ref = m->scan->owner_host[0];
        if ((rc = qr_clock_reconcile(m->n_hosts, acc.v, acc.n, ref, est)) == QR_OK) {
            /* the hosts a router's or mirror's capture holds in view share its one clock */
            for (uint32_t h = 0; h < m->n_hosts; h++) {
                int32_t c = m->cap_of_host[h];
                if (c >= 0 && m->scan->owner_host[c] != h) {
                    est[h] = est[m->scan->owner_host[c]];
                }
            }
            for (uint32_t h = 0; h < m->n_hosts; h++)
                rep->hosts[h].clock = est[h];
            if (m->cfg->clock != QR_IMPORT_CLOCK_NONE) {
                /* onto the reference host's clock, rebased on the earliest corrected capture
                 * start (less 1 ms, as before): the result does not depend on which host's
                 * clock was off */
                rep->clock_applied = 1;
                int64_t base = INT64_MAX;
                for (size_t c = 0; c < m->scan->n_captures; c++) {
                    int64_t e = offset_ns(&est[m->scan->owner_host[c]]);
                    if (m->scan->first_ns[c] != INT64_MAX && m->scan->first_ns[c] - e < base)
                        base = m->scan->first_ns[c] - e;
                }
                base -= 1000000;
                for (uint32_t h = 0; h < m->n_hosts; h++) {
                    int64_t e = offset_ns(&est[h]);
                    shift[h] = clamp62((__int128)rep->time_base_ns - base - e);
                    rep->hosts[h].clock_applied_ns = e;
                }
                rep->time_base_ns = base;
            }
        }
        free(est);
    }
    free(acc.v);
    return rc;
}

/* ---- output ---- */

/* An imported recording's id (qr_recording_id_of) from the captures (their SHA-256, in order,
 * with the hosts they belong to) and whether clocks were applied: importing the same captures
 * again gives the same recording. */
static int import_id(const qr_scenario *sc, const qr_import_report *rep, char out[QR_ID_SIZE])
{
    size_t size = rep->n_captures * 80 + 32;
    char *extra = malloc(size), *at = extra;
    if (!extra)
        return QR_ENOMEM;
    for (size_t c = 0; c < rep->n_captures; c++)
        at += snprintf(at, size - (size_t)(at - extra), "%s %u\n", rep->captures[c].sha256,
                       rep->captures[c].host);
    snprintf(at, size - (size_t)(at - extra), "%s\n",
             rep->clock_applied ? "clock applied" : "clock as captured");
    int rc = qr_recording_id_of("import", sc, extra, out);
    free(extra);
    return rc;
}

/* The recording's /paths from the path file: each line's direction by its captured endpoints
 * (lines naming no captured connection are counted). */
static int paths_rows(struct imp *m, qr_row_path **rows, size_t *n_rows)
{
    qr_import_path *p = NULL;
    size_t n = 0, total = 0;
    *rows = NULL;
    *n_rows = 0;
    int rc = qr_import_paths_read(m->cfg->paths, &p, &n, m->errbuf);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        total += p[i].n_links;
    *rows = calloc(total + 1, sizeof **rows);
    if (!*rows) {
        free(p);
        return qri_err(m->errbuf, QR_ENOMEM, "out of memory");
    }
    m->rep->paths = n;
    for (size_t i = 0; i < n; i++) {
        uint32_t dir = UINT32_MAX;
        for (size_t c = 0; c < m->scan->n_conns && dir == UINT32_MAX; c++) {
            const qr_import_conn *k = &m->scan->conns[c];
            if (m->flow_of_conn[c] < 0)
                continue;
            for (int side = 0; side < 2; side++)
                if (!memcmp(k->addr[side], p[i].src, 16) && k->port[side] == p[i].sport &&
                    !memcmp(k->addr[!side], p[i].dst, 16) && k->port[!side] == p[i].dport)
                    dir = side ? qr_dir_ack((uint32_t)m->flow_of_conn[c])
                               : qr_dir_data((uint32_t)m->flow_of_conn[c]);
        }
        if (dir == UINT32_MAX) {
            m->rep->paths_unmatched++;
            continue;
        }
        for (uint32_t h = 0; h < p[i].n_links; h++) {
            qr_row_path *r = &(*rows)[(*n_rows)++];
            r->dir = dir;
            r->trace = (uint32_t)i;
            r->hop = h;
            r->traced_ns = 0;
            snprintf(r->link, sizeof r->link, "%s", p[i].links[h]);
        }
    }
    free(p);
    return QR_OK;
}

static int write_h5(struct imp *m, const qr_scenario *sc, const int64_t *shift)
{
    qr_import_report *rep = m->rep;
    char path[sizeof m->tmp + 32];
    snprintf(path, sizeof path, "%s/recording.h5", m->tmp);
    qr_row_flow *flows = calloc(m->n_flows + 1, sizeof *flows);
    qr_row_host *hosts = calloc(m->n_hosts, sizeof *hosts);
    qr_row_import_capture *caps = calloc(rep->n_captures, sizeof *caps);
    qr_row_import_host *ih = calloc(m->n_hosts, sizeof *ih);
    qr_row_import_conn *conns = calloc(m->n_flows + 1, sizeof *conns);
    qr_h5 *f = NULL;
    qr_row_path *paths = NULL;
    size_t n_paths = 0;
    int rc = QR_ENOMEM;
    if (!flows || !hosts || !caps || !ih || !conns)
        goto fail;
    if (m->cfg->paths && (rc = paths_rows(m, &paths, &n_paths)) != QR_OK)
        goto fail;
    int64_t end = 0;
    for (size_t i = 0; i < m->scan->n_conns; i++) {
        if (m->flow_of_conn[i] < 0)
            continue;
        size_t fl = (size_t)m->flow_of_conn[i];
        const qr_import_conn *c = &m->scan->conns[i];
        const struct flow_times *t = &m->ftimes[fl];
        qr_row_flow *r = &flows[fl];
        r->id = (uint32_t)fl;
        r->src = m->dirs[2 * fl].src;
        r->dst = m->dirs[2 * fl].dst;
        r->src_port = qr_flow_table_sender_port(m->ft, (uint32_t)fl);
        r->dst_port = QR_SINK_PORT;
        r->bytes = c->bytes[0];
        int seen = t->first != INT64_MAX;
        r->start_ns = seen ? t->first + shift[t->first_h] : 0;
        int done = c->fin[0] && c->fin[1];
        r->end_ns = done && seen ? t->last + shift[t->last_h] : -1;
        r->fct_ns = done && seen ? r->end_ns - r->start_ns : -1;
        r->completed = r->closed = (uint8_t)done;
        if (seen && t->last + shift[t->last_h] > end)
            end = t->last + shift[t->last_h];
        qr_row_import_conn *k = &conns[fl];
        k->flow = (uint32_t)fl;
        qr_addr_text(c->addr[0], k->addr0, sizeof k->addr0);
        qr_addr_text(c->addr[1], k->addr1, sizeof k->addr1);
        k->port0 = c->port[0];
        k->port1 = c->port[1];
        k->family = c->family;
        k->syn = c->syn;
        k->fin0 = c->fin[0];
        k->fin1 = c->fin[1];
        k->bytes0 = c->bytes[0];
        k->bytes1 = c->bytes[1];
        k->packets0 = m->dirs[2 * fl].next_seq;
        k->packets1 = m->dirs[2 * fl + 1].next_seq;
        k->evidence0 = m->dirs[2 * fl].evidence;
        k->evidence1 = m->dirs[2 * fl + 1].evidence;
        k->drops0 = m->dirs[2 * fl].drops;
        k->drops1 = m->dirs[2 * fl + 1].drops;
    }
    for (uint32_t h = 0; h < m->n_hosts; h++) {
        const qr_import_host_report *hr = &rep->hosts[h];
        hosts[h] =
            (qr_row_host){h, qr_topology_host_addr(m->topo, h), 0, hr->packets, hr->bytes, ""};
        snprintf(hosts[h].pcap, sizeof hosts[h].pcap, "pcap/h%04u.pcap", h);
        qr_row_import_host *x = &ih[h];
        x->host = h;
        x->captured = hr->captured;
        x->reconstructed = hr->reconstructed;
        qri_strlcpy(x->addr, hr->addr, sizeof x->addr);
        x->packets = hr->packets;
        x->reconstructed_packets = hr->reconstructed_packets;
        x->clock_offset_ns = hr->clock.offset_ns;
        x->clock_residual_ns = hr->clock.residual_ns;
        x->clock_reference = hr->clock.reference;
        x->clock_pairs = hr->clock.pairs;
        x->clock_applied_ns = hr->clock_applied_ns;
        x->ipid = hr->ipid_kind;
        x->ipid_steps = hr->ipid.steps;
        x->ipid_rising = hr->ipid.one + hr->ipid.up;
        x->capture = hr->capture;
        x->vantage = hr->vantage;
    }
    for (size_t c = 0; c < rep->n_captures; c++) {
        const qr_import_capture_report *cr = &rep->captures[c];
        qr_row_import_capture *x = &caps[c];
        x->capture = (uint32_t)c;
        qri_strlcpy(x->path, cr->path, sizeof x->path);
        x->host = cr->host;
        qri_strlcpy(x->owner, cr->owner, sizeof x->owner);
        qri_strlcpy(x->link, cr->link, sizeof x->link);
        x->size_bytes = cr->size_bytes;
        memcpy(x->sha256, cr->sha256, sizeof x->sha256);
        x->frames = cr->stats.frames;
        x->tcp = cr->stats.kept;
        x->sent = cr->sent;
        x->received = cr->received;
        x->skip_not_ip = cr->stats.skipped[QR_SKIP_NOT_IP];
        x->skip_not_tcp = cr->stats.skipped[QR_SKIP_NOT_TCP];
        x->skip_fragment = cr->stats.skipped[QR_SKIP_FRAGMENT];
        x->skip_snaplen = cr->stats.skipped[QR_SKIP_SNAPLEN];
        x->skip_bad_link = cr->stats.skipped[QR_SKIP_BAD_LINK];
        x->skip_bad_ip = cr->stats.skipped[QR_SKIP_BAD_IP];
        x->skip_bad_tcp = cr->stats.skipped[QR_SKIP_BAD_TCP];
        x->skip_duplicate = cr->stats.skipped[QR_SKIP_DUPLICATE];
        x->left_same_host = cr->left[QR_IMPORT_LEFT_SAME_HOST];
        x->left_not_owner = cr->left[QR_IMPORT_LEFT_NOT_OWNER];
        x->left_duplicate = cr->left[QR_IMPORT_LEFT_DUPLICATE];
        x->clamped = cr->clamped;
        qri_strlcpy(x->warning, cr->warning, sizeof x->warning);
    }
    for (size_t i = 0; i < m->n_recv; i++)
        m->recv[i].time_ns += shift[m->dirs[m->recv[i].dir].dst];
    for (size_t i = 0; i < m->n_late; i++)
        m->late[i].time_ns += shift[m->dirs[m->late[i].dir].dst];
    char id[QR_ID_SIZE];
    if ((rc = import_id(sc, rep, id)) != QR_OK) {
        qri_err(m->errbuf, rc, "out of memory");
        goto fail;
    }
    QRI_TRY(qr_h5_create_result(&f, path, sc, "qreplay recording", id, m->errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "scenario_name", "import", m->errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "end", qr_end_reason_name(QR_END_COMPLETED), m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "sim_end_ns", (uint64_t)end, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/flows", &qr_schema_flow, flows, m->n_flows, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/hosts", &qr_schema_host, hosts, m->n_hosts, m->errbuf));
    QRI_TRY(qri_recording_write_pcaps(f, m->tmp, m->n_hosts, m->errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/drops_detected", &qr_schema_detected, m->det, m->n_det, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/received", &qr_schema_received, m->recv, m->n_recv, m->errbuf));
    if (m->cfg->paths)
        QRI_TRY(qr_h5_write_rows(f, "/paths", &qr_schema_path, paths, n_paths, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/import/captures", &qr_schema_import_capture, caps,
                             rep->n_captures, m->errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/import/hosts", &qr_schema_import_host, ih, m->n_hosts, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/import/connections", &qr_schema_import_conn, conns, m->n_flows,
                             m->errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/import/late", &qr_schema_received, m->late, m->n_late, m->errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/import", "time_base_ns", rep->time_base_ns, m->errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/import", "clock",
                           m->cfg->clock == QR_IMPORT_CLOCK_NONE        ? "none"
                           : m->cfg->clock == QR_IMPORT_CLOCK_RECONCILE ? "reconcile"
                                                                        : "auto",
                           m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "clock_applied", (uint64_t)rep->clock_applied, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "network_known", (uint64_t)(m->cfg->network_known != 0),
                           m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "clock_pairs", rep->clock_pairs, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "tso_split", rep->tso_split, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "unmatched_received", rep->unmatched_received, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "unknown_fate", rep->unknown_tail, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "hole_reordered", rep->hole_reordered, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "hole_not_captured", rep->hole_not_captured, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "hole_unknown", rep->hole_unknown, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "overtaken", rep->overtaken, m->errbuf));
    QRI_TRY(
        qr_h5_attr_str(f, "/import", "paths_file", m->cfg->paths ? m->cfg->paths : "", m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "paths", rep->paths, m->errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/import", "paths_unmatched", rep->paths_unmatched, m->errbuf));
    for (int e = 0; e < QR_EVIDENCE_COUNT; e++) {
        char name[64];
        snprintf(name, sizeof name, "directions_%s", qr_import_evidence_name(e));
        QRI_TRY(qr_h5_attr_u64(f, "/import", name, rep->directions[e], m->errbuf));
        snprintf(name, sizeof name, "drops_%s", qr_import_evidence_name(e));
        QRI_TRY(qr_h5_attr_u64(f, "/import", name, rep->drops[e], m->errbuf));
    }
    rc = qr_h5_commit(f, m->errbuf);
    f = NULL;
fail:
    qr_h5_abort(f);
    free(flows);
    free(hosts);
    free(caps);
    free(ih);
    free(conns);
    free(paths);
    if (rc == QR_ENOMEM)
        qri_err(m->errbuf, rc, "import: out of memory");
    return rc;
}

/* ---- every capture's SHA-256, on a second thread while the passes read ---- */

struct hash_job {
    const char *const *paths;
    size_t n;
    char (*sha)[65];
    uint64_t *size;
    size_t failed; /* the first capture that could not be read, + 1 */
    pthread_t thread;
    int started;
};

static void *hash_all(void *arg)
{
    struct hash_job *j = arg;
    for (size_t c = 0; c < j->n && !j->failed; c++)
        if (qri_sha256_file(j->paths[c], j->sha[c], &j->size[c]) != QR_OK)
            j->failed = c + 1;
    return NULL;
}

static int hash_start(struct hash_job *j, const qr_import_cfg *cfg)
{
    memset(j, 0, sizeof *j);
    j->paths = cfg->captures;
    j->n = cfg->n_captures;
    j->sha = calloc(j->n, sizeof *j->sha);
    j->size = calloc(j->n, sizeof *j->size);
    if (!j->sha || !j->size)
        return QR_ENOMEM;
    if (pthread_create(&j->thread, NULL, hash_all, j) == 0)
        j->started = 1;
    else
        hash_all(j); /* no thread to be had: in line */
    return QR_OK;
}

static void hash_join(struct hash_job *j)
{
    if (j->started)
        pthread_join(j->thread, NULL);
    j->started = 0;
}

static void hash_free(struct hash_job *j)
{
    hash_join(j);
    free(j->sha);
    free(j->size);
}

/* ---- the pass ---- */

static int read_next(struct imp *m, size_t c)
{
    struct cap_state *cs = &m->caps[c];
    int rc = qr_capture_next(cs->c, &cs->next, m->errbuf);
    cs->has_next = rc == QR_OK;
    return rc == QR_END ? QR_OK : rc;
}

/* Whether capture cs holds host h in view. */
static int in_view(const struct cap_state *cs, uint32_t h)
{
    return cs->n_view && bsearch(&h, cs->view, cs->n_view, sizeof h, cmp_u32) != NULL;
}

static int pass(struct imp *m)
{
    const qr_import_scan *s = m->scan;
    int rc;
    for (size_t c = 0; c < s->n_captures; c++) {
        m->caps[c].last_time = INT64_MIN;
        if ((rc = qr_capture_open(&m->caps[c].c, m->cfg->captures[c], m->errbuf)) != QR_OK)
            return rc;
        qr_capture_dedup(m->caps[c].c, QR_IMPORT_DEDUP_WINDOW);
        if ((rc = read_next(m, c)) != QR_OK)
            return rc;
        qri_strlcpy(m->rep->captures[c].link, qr_capture_link(m->caps[c].c),
                    sizeof m->rep->captures[c].link);
    }
    for (;;) {
        /* the capture whose next packet is earliest */
        size_t c = SIZE_MAX;
        for (size_t i = 0; i < s->n_captures; i++)
            if (m->caps[i].has_next &&
                (c == SIZE_MAX || m->caps[i].next.time_ns < m->caps[c].next.time_ns))
                c = i;
        if (c == SIZE_MAX)
            break;
        struct cap_state *cs = &m->caps[c];
        qr_import_capture_report *cr = &m->rep->captures[c];
        qr_capture_packet p = cs->next;
        if ((rc = read_next(m, c)) != QR_OK)
            return rc;
        if (++m->packets_seen % 65536 == 0 && m->cfg->progress) {
            char status[160];
            snprintf(status, sizeof status,
                     "import: %" PRIu64 " packets read, %" PRIu64 " in the recording",
                     m->packets_seen, m->rep->packets);
            if (m->cfg->progress(m->cfg->progress_ctx, status))
                return qri_err(m->errbuf, QR_ECANCELED, "import: interrupted");
        }
        int64_t v = find_dir(m, &p);
        if (v < 0 || m->flow_of_conn[v / 2] < 0) {
            cr->left[QR_IMPORT_LEFT_SAME_HOST]++;
            continue;
        }
        uint32_t dir = 2 * (uint32_t)m->flow_of_conn[v / 2] + (uint32_t)(v % 2);
        const struct dir_state *d = &m->dirs[dir];
        int back = p.time_ns < cs->last_time;
        if (!back)
            cs->last_time = p.time_ns;
        /* sent by a host whose packets this capture gives, received by one, or both (two hosts
         * a router's or mirror's capture holds in view): one capture, one clock */
        int as_sent = m->cap_of_host[d->src] == (int32_t)c,
            as_recv = m->cap_of_host[d->dst] == (int32_t)c;
        if (as_sent) {
            qr_capture_packet q = p;
            cr->sent++;
            cr->clamped += (uint64_t)back;
            if ((rc = on_send(m, dir, &q)) != QR_OK)
                return rc;
        }
        if (as_recv) {
            cr->received++;
            if ((rc = on_receive(m, dir, &p)) != QR_OK)
                return rc;
        }
        if (!as_sent && !as_recv)
            cr->left[in_view(cs, d->src) || in_view(cs, d->dst) ? QR_IMPORT_LEFT_DUPLICATE
                                                                : QR_IMPORT_LEFT_NOT_OWNER]++;
    }
    for (size_t c = 0; c < s->n_captures; c++) {
        qr_capture_stats_get(m->caps[c].c, &m->rep->captures[c].stats);
        qri_strlcpy(m->rep->captures[c].warning, qr_capture_warning(m->caps[c].c),
                    sizeof m->rep->captures[c].warning);
        if (s->warning[c][0]) {
            char *w = m->rep->captures[c].warning;
            size_t used = strlen(w);
            snprintf(w + used, sizeof m->rep->captures[c].warning - used, "%s%s", used ? "; " : "",
                     s->warning[c]);
        }
    }
    for (uint32_t h = 0; h < m->n_hosts; h++)
        m->rep->hosts[h].ipid_kind = (uint8_t)qr_ipid_classify(&m->rep->hosts[h].ipid);
    return finish_dirs(m);
}

/* Whether name is one qreplay writes in a recording's sub-folder sub ("" for the folder itself). */
static int ours(const char *sub, const char *name)
{
    unsigned h;
    char tail;
    if (strstr(name, ".partial-") || strstr(name, ".old-"))
        return 1; /* a temporary of an interrupted run */
    if (!sub[0])
        return !strcmp(name, "recording.h5") || !strcmp(name, "pcap") || !strcmp(name, "truth") ||
               !strcmp(name, "mirror") || !strcmp(name, "probes.h5") ||
               !strcmp(name, "light.qrl") || !strcmp(name, ".qreplay-export");
    if (!strcmp(sub, "pcap"))
        return sscanf(name, "h%4u.pcap%c", &h, &tail) == 1 && strlen(name) == 10;
    if (!strcmp(sub, "mirror")) /* the switches' copies (queuelog.h); the guided probes' */
        return !strcmp(name, "copies.qra") || !strcmp(name, "guided.csv") ||
               !strcmp(name, "counters.csv");
    return !strcmp(name, "truth.h5") || !strcmp(name, "arrivals.qra");
}

/* The recording folder is replaced whole: refuse if it holds anything qreplay did not write there,
 * which would go with it. */
static int check_replaceable(const char *rec_dir, char *errbuf)
{
    static const char *const subs[] = {"", "pcap", "truth", "mirror"};
    for (size_t i = 0; i < 4; i++) {
        char d[QR_PATH_MAX + 16];
        snprintf(d, sizeof d, "%s%s%s", rec_dir, subs[i][0] ? "/" : "", subs[i]);
        DIR *dir = opendir(d);
        if (!dir)
            continue;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            if (!ours(subs[i], e->d_name)) {
                int rc = qri_err(errbuf, QR_ESAMEFILE,
                                 "%s/%s was not written by qreplay and would be lost when the "
                                 "recording in %s is replaced: move it out first",
                                 d, e->d_name, rec_dir);
                closedir(dir);
                return rc;
            }
        }
        closedir(dir);
    }
    return QR_OK;
}

int qr_import_run(const qr_import_cfg *cfg, const qr_scenario *sc, const char *rec_dir,
                  qr_import_report **report, char *errbuf)
{
    if (!cfg || !sc || !rec_dir || !cfg->captures || !cfg->n_captures)
        return qri_err(errbuf, QR_EINVAL, "import: no capture");
    if (report)
        *report = NULL;
    int crc = check_replaceable(rec_dir, errbuf);
    if (crc)
        return crc;
    struct imp m;
    memset(&m, 0, sizeof m);
    m.cfg = cfg;
    m.conf = qr_scenario_config(sc);
    /* In the scenario's network a host's NIC sends at its link rate. In a network qreplay does not
     * know, the captures' times are the only clock: a GSO burst of a fast virtual or 100G NIC
     * must not be spread at the scenario's rate (at 10 Gbps a 400 KB burst would drift 0.3 ms
     * behind its own ACKs); its segments go at 400 Gbps, or the scenario's rate if faster. */
    m.nic_bps = cfg->network_known || m.conf->links.rate_bps >= QR_IMPORT_UNKNOWN_NIC_BPS
                    ? m.conf->links.rate_bps
                    : QR_IMPORT_UNKNOWN_NIC_BPS;
    m.errbuf = errbuf;
    m.rep = calloc(1, sizeof *m.rep);
    int64_t *shift = NULL;
    int made_tmp = 0;
    struct hash_job hash;
    memset(&hash, 0, sizeof hash);
    int rc = QR_ENOMEM;
    if (!m.rep || qri_map_init(&m.dir_index) || qri_map_init(&m.owd))
        goto out;
    rc = qr_topology_of_config(&m.topo, m.conf);
    if (rc) {
        rc = qri_err(errbuf, QR_EVALUE, "import: the scenario's topology is not valid");
        goto out;
    }
    if ((rc = hash_start(&hash, cfg)) != QR_OK)
        goto out;
    if ((rc = qr_import_scan_run(cfg->captures, cfg->n_captures, cfg->map, cfg->n_map,
                                 qr_topology_hosts(m.topo), &m.scan, errbuf)) != QR_OK ||
        (rc = setup(&m)) != QR_OK)
        goto out;
    if (snprintf(m.tmp, sizeof m.tmp, "%s.partial-%ld", rec_dir, (long)getpid()) >=
        (int)sizeof m.tmp) {
        rc = qri_err(errbuf, QR_EVALUE, "%s: path too long", rec_dir);
        goto out;
    }
    qri_remove_tree(m.tmp);
    char pcapdir[sizeof m.tmp + 8];
    snprintf(pcapdir, sizeof pcapdir, "%s/pcap", m.tmp);
    if ((rc = qr_make_dirs(pcapdir, errbuf)) != QR_OK)
        goto out;
    made_tmp = 1;
    qr_partial_add(m.tmp);
    if ((rc = pass(&m)) != QR_OK)
        goto out;
    /* every host of the topology has its pcap, empty if it sent nothing */
    for (uint32_t h = 0; h < m.n_hosts; h++) {
        qr_trace_writer *w;
        if ((rc = writer(&m, h, &w)) != QR_OK)
            goto out;
        rc = qr_trace_writer_close(w, errbuf);
        m.w[h] = NULL;
        if (rc)
            goto out;
    }
    shift = calloc(m.n_hosts, sizeof *shift);
    if (!shift) {
        rc = QR_ENOMEM;
        goto out;
    }
    if ((rc = reconcile(&m, shift)) != QR_OK)
        goto out;
    if (m.rep->clock_applied && (rc = shift_pcaps(&m, shift)) != QR_OK)
        goto out;
    hash_join(&hash);
    if (hash.failed) {
        rc = qri_err(errbuf, QR_EIO, "%s: cannot read it again", cfg->captures[hash.failed - 1]);
        goto out;
    }
    for (size_t c = 0; c < cfg->n_captures; c++) {
        memcpy(m.rep->captures[c].sha256, hash.sha[c], 65);
        m.rep->captures[c].size_bytes = hash.size[c];
    }
    if ((rc = write_h5(&m, sc, shift)) != QR_OK)
        goto out;
    if (cfg->progress && cfg->progress(cfg->progress_ctx, "import: done")) {
        rc = qri_err(errbuf, QR_ECANCELED, "import: interrupted");
        goto out;
    }
    /* in place of any earlier recording, at once (an exchange, then the old one goes) */
    if ((rc = qr_commit_path(m.tmp, rec_dir, errbuf)) != QR_OK)
        goto out;
    qr_partial_done(m.tmp);
    made_tmp = 0;
out:
    hash_free(&hash);
    if (m.w)
        for (uint32_t h = 0; h < m.n_hosts; h++)
            qr_trace_writer_close(m.w[h], NULL);
    if (made_tmp)
        qri_remove_tree(m.tmp);
    if (m.caps)
        for (size_t c = 0; m.scan && c < m.scan->n_captures; c++) {
            qr_capture_close(m.caps[c].c);
            free(m.caps[c].view);
        }
    if (m.dirs)
        for (size_t d = 0; d < 2 * m.n_flows; d++) {
            free(m.dirs[d].sent.v);
            free(m.dirs[d].late.v);
            free(m.dirs[d].recv.v);
            free(m.dirs[d].rtx.v);
        }
    qri_map_foreach(&m.owd, free_owd, NULL);
    qri_map_free(&m.owd);
    qri_map_free(&m.dir_index);
    free(shift);
    free(m.dirs);
    free(m.ftimes);
    free(m.w);
    free(m.nic_free);
    free(m.host_last_id);
    free(m.cap_of_host);
    free(m.reconstructed);
    free(m.flow_of_conn);
    free(m.caps);
    free(m.segs);
    free(m.det);
    free(m.recv);
    free(m.late);
    qr_flow_table_destroy(m.ft);
    qr_topology_destroy(m.topo);
    qr_import_scan_free(m.scan);
    if (rc == QR_ENOMEM)
        qri_err(errbuf, rc, "import: out of memory");
    if (rc || !report)
        qr_import_report_free(m.rep);
    else
        *report = m.rep;
    return rc;
}
