/* The ground truth of a FatTree testbed run (fabric_truth.h). */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/capture.h"
#include "qreplay/common.h"
#include "qreplay/fabric_truth.h"
#include "qreplay/fs.h"
#include "qreplay/guided_plan.h"
#include "qreplay/import.h"
#include "qreplay/pingmesh.h"
#include "qreplay/probelog.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/stats.h"
#include "qreplay/truth.h"
#include "qreplay/txn.h"
#include "truth_internal.h"

#define MAX_OBS 12 /* kept in place: in and out at each of the 5 switches of a path, and 2 more */
/* A packet's TTL (at most 255, less one per switch) bounds the switches it crosses: round a
 * routing loop until it runs out, each lap's sightings told apart by the TTL they carry. */
#define MAX_HOPS 255
#define MAX_SIGHTINGS (2 * MAX_HOPS)
/* Copies of one packet with the same headers (a SYN-ACK resent: IP ID 0) leave a second or more
 * apart (Linux's first SYN and SYN-ACK timeout is 1 s); a sighting belongs to a copy whose
 * sightings so far (and its sending) it is less than this from. One switch's queue holds far less;
 * a packet round a loop is seen every lap, however long it goes round (a congested loop: seconds),
 * and its copies' laps are told apart by their TTLs. */
#define COPY_WINDOW_NS 500000000LL
#define NO_PORT 255
#define MANY_PORTS 254

/* One sighting of a packet at a switch port. */
struct obs {
    int64_t t;
    uint16_t sw;
    uint8_t port, out;
    uint8_t ttl; /* as captured */
    uint32_t q;  /* an arrival: the bytes its egress port's FIFO held (queues()) */
};

/* Where one packet was seen: in place, or on the heap past MAX_OBS (a packet going round a loop).
 */
struct sights {
    struct obs in[MAX_OBS];
    struct obs *more; /* all of them once there are more than MAX_OBS */
    uint16_t n, cap;
    int64_t first, last; /* the earliest and latest of them (n > 0) */
};

/* Whether a sighting at t can be of the packet seen at g (sent at sent, INT64_MIN: unknown): less
 * than COPY_WINDOW_NS outside the time between its sending and sightings so far. */
static int near_in_time(const struct sights *g, int64_t sent, int64_t t)
{
    int64_t lo = g->n ? g->first : sent, hi = g->n ? g->last : sent;
    if (sent != INT64_MIN) {
        lo = lo < sent ? lo : sent;
        hi = hi > sent ? hi : sent;
    }
    return t > lo - COPY_WINDOW_NS && t < hi + COPY_WINDOW_NS;
}

static struct obs *obs_of(const struct sights *g)
{
    return g->more ? g->more : (struct obs *)g->in;
}

/* One more sighting: QR_OK, QR_ENOMEM, or QR_EVALUE when a packet would have more sightings than
 * any TTL allows (the same frame captured twice). */
static int obs_add(struct sights *g, struct obs o)
{
    if (g->n >= MAX_SIGHTINGS)
        return QR_EVALUE;
    if (g->n == MAX_OBS && !g->more) {
        struct obs *m = malloc(4 * MAX_OBS * sizeof *m);
        if (!m)
            return QR_ENOMEM;
        memcpy(m, g->in, sizeof g->in);
        g->more = m;
        g->cap = 4 * MAX_OBS;
    } else if (g->more && g->n == g->cap) {
        struct obs *m = realloc(g->more, 2u * g->cap * sizeof *m);
        if (!m)
            return QR_ENOMEM;
        g->more = m;
        g->cap = (uint16_t)(2 * g->cap);
    }
    if (!g->n || o.t < g->first)
        g->first = o.t;
    if (!g->n || o.t > g->last)
        g->last = o.t;
    obs_of(g)[g->n++] = o;
    return QR_OK;
}

/* Whether the packet was seen at switch sw, arriving or leaving, with this TTL: a copy seen again
 * so is a second packet (each lap of a loop has its own TTLs). */
static int seen_at(const struct sights *g, uint32_t sw, int out, uint8_t ttl)
{
    const struct obs *o = obs_of(g);
    for (int i = 0; i < g->n; i++)
        if (o[i].sw == sw && o[i].out == out && o[i].ttl == ttl)
            return 1;
    return 0;
}

/* A recorded packet and where it was seen. */
struct fp {
    const qr_rec_packet *r;
    uint16_t ip_id; /* the real one, from its host's capture (the import numbers them) */
    uint8_t have_id;
    int64_t host_t; /* when its host's capture saw it (the recording's time is the import's:
                       spaced at least a wire time apart, as a NIC sends) */
    struct sights sg;
    uint8_t repeats;   /* identical sendings its host's capture shows after it (IP ID 0, kept once
                          by the import's qr_capture_dedup, as a capture's copies are) */
    uint8_t fate;      /* 0 open, 1 delivered, 2 dropped, 3 its TTL ran out (drop_sw) */
    uint16_t fault;    /* the fault whose log holds it (from 1), 0 none */
    uint16_t drop_sw;  /* dropped: where */
    uint8_t drop_port; /* round a loop: the port it left drop_sw by on its earlier lap; else
                          NO_PORT (its direction's port there) */
    int64_t drop_t;
};

struct ft_state {
    char *errbuf;
    const qr_fabric *fab;
    const qr_topology *topo;
    uint32_t k, switches;
    const qr_recording *rec;
    const qr_flow_table *ft;
    size_t n_dirs;
    qri_tb_conns conns;
    struct fp *p;
    size_t n;
    size_t *start;   /* the packets of direction d: p[start[d] .. start[d + 1]), in order */
    uint32_t *table; /* open addressing: packet index + 1 */
    size_t mask;
    uint8_t *dir_port;  /* n_dirs x switches: the port a direction leaves a switch by */
    int64_t *first_hop; /* per packet: its host's capture to its edge switch's */
    /* every packet of no recorded connection (the agents' probes), by its headers */
    struct opk *op;
    size_t n_op, cap_op;
    uint32_t *op_table;
    size_t op_mask;
    /* per switch: the IPv4 frames not TCP its ports' captures show arriving and leaving, and
     * those a fault's rule on it dropped (its log: the switches' ICMP answers cross the faulty
     * link too) */
    uint64_t *other_in, *other_out, *other_fault;
    /* per switch, the packets whose TTL ran out there (they arrived with 1 or less, towards a
     * host): TCP ones followed (recorded or not), and those not TCP */
    uint64_t *expired, *other_expired;
    /* per switch, the packets not TCP that came back to it from a neighbour with one of its own
     * addresses as their source (its own ICMP answer sent round a loop): the kernel drops them
     * on arrival (a martian source); and its addresses, per switch x k + port */
    uint64_t *returned;
    uint32_t *own_addr;
    /* per switch x 3, a host's repeats (followed by no packet): their arrivals with TTL left,
     * departures and drops by a fault's rule; the rest a queue dropped */
    uint64_t *repeat_at;
    uint64_t repeat_sends; /* host_repeat's */
};

/* A packet of no recorded connection, as the switch ports saw it. */
struct opk {
    uint32_t src, dst, seq, ack;
    uint16_t sport, dport, ip_id, len;
    uint8_t flags, fate;
    uint16_t fault, drop_sw;
    struct sights sg;
};

static uint32_t v4(const uint8_t a[16])
{
    return (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
}

static uint64_t opk_hash(const struct opk *x)
{
    uint64_t h = ((uint64_t)x->src << 32 | x->dst) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)x->sport << 48 | (uint64_t)x->dport << 32 | x->seq) * 0xbf58476d1ce4e5b9ull;
    h ^= ((uint64_t)x->ack << 32 | (uint64_t)x->ip_id << 16 | (uint64_t)x->len << 8 | x->flags) *
         0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static int opk_same(const struct opk *a, const struct opk *b)
{
    return a->src == b->src && a->dst == b->dst && a->sport == b->sport && a->dport == b->dport &&
           a->seq == b->seq && a->ack == b->ack && a->ip_id == b->ip_id && a->len == b->len &&
           a->flags == b->flags;
}

static int op_rehash(struct ft_state *s, size_t mask)
{
    uint32_t *t = calloc(mask + 1, sizeof *t);
    if (!t)
        return QR_ENOMEM;
    for (size_t i = 0; i < s->n_op; i++) {
        size_t b = (size_t)opk_hash(&s->op[i]) & mask;
        while (t[b])
            b = (b + 1) & mask;
        t[b] = (uint32_t)(i + 1);
    }
    free(s->op_table);
    s->op_table = t;
    s->op_mask = mask;
    return QR_OK;
}

/* The packet of no recorded connection a sighting (at switch sw, out or in) is of: among those
 * with its headers, the first not yet seen so at sw, else a new one. sw UINT32_MAX (a fault's
 * log): the first that stopped at switch `at` with no fault yet, else any with none; never a new
 * one. NULL: none, or out of memory. */
static struct opk *op_of(struct ft_state *s, const qr_capture_packet *k, uint32_t sw, int out,
                         uint32_t at)
{
    if (k->family != 4)
        return NULL;
    struct opk key = {.src = v4(k->src),
                      .dst = v4(k->dst),
                      .seq = k->seq,
                      .ack = k->ack,
                      .sport = k->src_port,
                      .dport = k->dst_port,
                      .ip_id = k->ip_id,
                      .len = (uint16_t)k->ip_len,
                      .flags = k->tcp_flags};
    if (!s->op_table && op_rehash(s, 4095))
        return NULL;
    size_t slot = (size_t)opk_hash(&key) & s->op_mask;
    struct opk *any = NULL;
    int64_t t = k->time_ns - s->conns.base;
    for (; s->op_table[slot]; slot = (slot + 1) & s->op_mask) {
        struct opk *x = &s->op[s->op_table[slot] - 1];
        if (!opk_same(x, &key))
            continue;
        if (sw != UINT32_MAX && x->sg.n && !near_in_time(&x->sg, INT64_MIN, t))
            continue; /* another copy of these headers, a second or more apart */
        if (sw == UINT32_MAX) {
            if (x->fault)
                continue;
            if (x->fate == 2 && x->drop_sw == at)
                return x;
            if (!any)
                any = x;
            continue;
        }
        if (!seen_at(&x->sg, sw, out, k->ttl))
            return x;
    }
    if (sw == UINT32_MAX)
        return any;
    if (2 * (s->n_op + 1) > s->op_mask) {
        if (op_rehash(s, 2 * s->op_mask + 1))
            return NULL;
        return op_of(s, k, sw, out, at);
    }
    if (s->n_op == s->cap_op) {
        size_t c = s->cap_op ? 2 * s->cap_op : 4096;
        struct opk *g = realloc(s->op, c * sizeof *g);
        if (!g)
            return NULL;
        s->op = g;
        s->cap_op = c;
    }
    s->op[s->n_op] = key;
    s->op_table[slot] = (uint32_t)++s->n_op;
    return &s->op[s->n_op - 1];
}

static uint64_t key_hash(uint32_t dir, uint16_t id, uint32_t seq, uint32_t ack, uint8_t fl,
                         uint32_t len)
{
    uint64_t h = (uint64_t)dir * 0x9e3779b97f4a7c15ull ^ ((uint64_t)id << 32 | seq);
    h ^= ((uint64_t)ack << 24 | (uint64_t)fl << 16 | len) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 32);
}

static int same(const struct fp *x, uint32_t dir, const qr_capture_packet *k)
{
    const qr_rec_packet *r = x->r;
    return r->dir == dir && x->ip_id == k->ip_id && r->pk.seq == k->seq && r->pk.ack == k->ack &&
           r->pk.tcp_flags == k->tcp_flags && r->pk.ip_len == k->ip_len;
}

static const char *dir_text(const struct ft_state *s, uint32_t d, char *buf, size_t size);

/* The recorded packets grouped by direction, in their numbers' order. */
static int index_packets(struct ft_state *s)
{
    uint32_t nh = qr_recording_hosts(s->rec);
    size_t nd = s->n_dirs;
    s->start = calloc(nd + 2, sizeof *s->start);
    if (!s->start)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < nh; h++) {
        size_t n;
        const qr_rec_packet *r = qr_recording_packets(s->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (r[i].dir < nd)
                s->start[r[i].dir + 1]++;
    }
    for (size_t d = 0; d < nd; d++)
        s->start[d + 1] += s->start[d];
    s->n = s->start[nd];
    size_t cap = 16;
    while (cap < 2 * s->n)
        cap *= 2;
    s->p = calloc(s->n ? s->n : 1, sizeof *s->p);
    s->table = calloc(cap, sizeof *s->table);
    s->dir_port = malloc((nd ? nd : 1) * s->switches);
    if (!s->p || !s->table || !s->dir_port)
        return QR_ENOMEM;
    memset(s->dir_port, NO_PORT, (nd ? nd : 1) * s->switches);
    s->mask = cap - 1;
    for (uint32_t h = 0; h < nh; h++) {
        size_t n;
        const qr_rec_packet *r = qr_recording_packets(s->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (r[i].dir < nd) {
                size_t at = s->start[r[i].dir] + r[i].seq;
                if (at >= s->start[r[i].dir + 1] || s->p[at].r)
                    return qri_err(s->errbuf, QR_EFORMAT,
                                   "the recording's direction %u is not numbered from 0", r[i].dir);
                s->p[at].r = &r[i];
            }
    }
    return QR_OK;
}

/* A frame of host h's capture that the import's dedup leaves out (qr_capture_dedup): a copy of
 * a packet the host sent a moment earlier. A stack may send the same bytes twice (a SYN-ACK with
 * IP ID 0 from its timer and for a resent SYN within the same millisecond), so it is a repeat of
 * the recorded packet with its key among the last ones of its direction, counted on that packet. */
struct host_ctx {
    struct ft_state *s;
    const uint8_t *mac;
    const size_t *next;
};

static void host_repeat(void *ctx, const qr_capture_packet *k, qr_skip why)
{
    struct host_ctx *c = ctx;
    struct ft_state *s = c->s;
    uint32_t d = why == QR_SKIP_DUPLICATE ? qri_tb_dir_of(&s->conns, k) : UINT32_MAX;
    if (d == UINT32_MAX || !k->has_mac || memcmp(k->mac_src, c->mac, 6))
        return;
    size_t end = s->start[d] + c->next[d], lo = s->start[d];
    for (size_t i = end, n = 0; i > lo && n < QR_IMPORT_DEDUP_WINDOW; i--, n++) {
        struct fp *x = &s->p[i - 1];
        if (x->have_id && same(x, d, k)) {
            if (x->repeats < UINT8_MAX)
                x->repeats++;
            s->repeat_sends++;
            return;
        }
    }
}

/* Host h's capture, read as the import reads it (the same dedup): the IP ID of each packet it
 * sent (its recording numbers them instead), and the repeats left out. */
static int host_ids(struct ft_state *s, const char *dir, uint32_t h, size_t *next)
{
    char path[4300], d1[96];
    snprintf(path, sizeof path, "%s/h%u.pcap", dir, h);
    qr_capture *c = NULL;
    qr_capture_packet k;
    uint8_t mac[6];
    qr_fabric_mac((qr_node){QR_NODE_HOST, h}, 0, mac);
    struct host_ctx hc = {s, mac, next};
    int rc = qr_capture_open(&c, path, s->errbuf);
    qr_capture_dedup(c, QR_IMPORT_DEDUP_WINDOW);
    qr_capture_on_skip(c, host_repeat, &hc);
    while (!rc && (rc = qr_capture_next(c, &k, s->errbuf)) == QR_OK) {
        uint32_t d = qri_tb_dir_of(&s->conns, &k);
        if (!k.has_mac || memcmp(k.mac_src, mac, 6) || d == UINT32_MAX)
            continue; /* what it received, or no recorded connection's */
        size_t at = s->start[d] + next[d]++;
        struct fp *x = at < s->start[d + 1] ? &s->p[at] : NULL;
        if (!x || x->r->pk.seq != k.seq || x->r->pk.ack != k.ack ||
            x->r->pk.tcp_flags != k.tcp_flags || x->r->pk.ip_len != k.ip_len)
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": the recording's %s has %s packet %zu (seq %u, "
                         "%u bytes): the recording is not of this capture",
                         path, k.frame, dir_text(s, d, d1, sizeof d1), x ? "another" : "no",
                         next[d] - 1, k.seq, k.ip_len);
        else {
            x->ip_id = k.ip_id;
            x->have_id = 1;
            x->host_t = k.time_ns - s->conns.base;
        }
    }
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

/* Whether a sighting with no recorded packet left to take it is a repeat's: a packet with its key
 * that its host sent again (host_repeat). */
static int is_repeat(struct ft_state *s, uint32_t dir, const qr_capture_packet *k)
{
    size_t at = key_hash(dir, k->ip_id, k->seq, k->ack, k->tcp_flags, k->ip_len) & s->mask;
    int64_t t = k->time_ns - s->conns.base;
    for (; s->table[at]; at = (at + 1) & s->mask) {
        const struct fp *x = &s->p[s->table[at] - 1];
        if (x->repeats && same(x, dir, k) && near_in_time(&x->sg, x->r->pk.time_ns, t))
            return 1; /* near the packet it repeats, which may go round a loop as long */
    }
    return 0;
}

static int hash_packets(struct ft_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct fp *x = &s->p[i];
        if (!x->have_id)
            return qri_err(s->errbuf, QR_EVALUE,
                           "the recording's packet %u of direction %u is in no host's capture",
                           x->r->seq, x->r->dir);
        size_t at = key_hash(x->r->dir, x->ip_id, x->r->pk.seq, x->r->pk.ack, x->r->pk.tcp_flags,
                             x->r->pk.ip_len) &
                    s->mask;
        while (s->table[at])
            at = (at + 1) & s->mask;
        s->table[at] = (uint32_t)(i + 1);
    }
    return QR_OK;
}

/* The recorded packet a sighting is of: among those with its key, the first not yet seen the
 * same way at that switch with that TTL; NULL if none. */
static struct fp *lookup(struct ft_state *s, uint32_t dir, const qr_capture_packet *k, uint32_t sw,
                         int out)
{
    size_t at = key_hash(dir, k->ip_id, k->seq, k->ack, k->tcp_flags, k->ip_len) & s->mask;
    int64_t t = k->time_ns - s->conns.base;
    for (; s->table[at]; at = (at + 1) & s->mask) {
        struct fp *x = &s->p[s->table[at] - 1];
        if (!same(x, dir, k) || !near_in_time(&x->sg, x->r->pk.time_ns, t))
            continue;
        if (!seen_at(&x->sg, sw, out, k->ttl))
            return x;
    }
    return NULL;
}

static const char *dir_text(const struct ft_state *s, uint32_t d, char *buf, size_t size)
{
    snprintf(buf, size, "flow %u %s (host %u -> %u)", qr_dir_flow(d),
             qr_dir_is_ack(d) ? "ACKs" : "data", qr_flow_table_dir_src(s->ft, d),
             qr_flow_table_dir_dst(s->ft, d));
    return buf;
}

struct port_ctx {
    struct ft_state *s;
    uint32_t sw, port;
};

/* Whether addr is one of switch sw's own interface addresses. */
static int own_addr(const struct ft_state *s, uint32_t sw, uint32_t addr)
{
    for (uint32_t p = 0; p < s->k; p++)
        if (s->own_addr[sw * s->k + p] == addr)
            return 1;
    return 0;
}

/* A frame of a switch port's capture that is not TCP: an IPv4 packet of another protocol is
 * counted as arriving or leaving by its source MAC; one arriving from its own address came back
 * (the kernel drops it as a martian), else one arriving with TTL 1 or less towards a host is one
 * whose TTL ran out there (the kernel forwards none such). */
static void other_frame(void *ctx, const qr_capture_packet *k, qr_skip why)
{
    const struct port_ctx *c = ctx;
    qr_node owner;
    uint32_t op, h;
    if (why != QR_SKIP_NOT_TCP || k->family != 4 || !k->has_mac)
        return;
    int out = qr_fabric_mac_owner(k->mac_src, &owner, &op) && owner.kind != QR_NODE_HOST &&
              owner.index == c->sw && op == c->port;
    (out ? c->s->other_out : c->s->other_in)[c->sw]++;
    if (!out && own_addr(c->s, c->sw, v4(k->src)))
        c->s->returned[c->sw]++;
    else if (!out && k->ttl <= 1 && qr_topology_host_of_addr(c->s->topo, v4(k->dst), &h) == QR_OK)
        c->s->other_expired[c->sw]++;
}

/* Every frame of switch sw's port `port` capture. */
static int read_port(struct ft_state *s, const char *dir, uint32_t sw, uint32_t port,
                     qr_fabric_truth_report *rep)
{
    char path[4300], d1[96];
    snprintf(path, sizeof path, "%s/s%u-p%u.pcap", dir, sw, port);
    qr_capture *c = NULL;
    qr_capture_packet k;
    struct port_ctx pc = {s, sw, port};
    int rc = qr_capture_open(&c, path, s->errbuf);
    qr_capture_on_skip(c, other_frame, &pc);
    while (!rc && (rc = qr_capture_next(c, &k, s->errbuf)) == QR_OK) {
        qr_node owner;
        uint32_t op;
        if (!k.has_mac) {
            rc = qri_err(s->errbuf, QR_EFORMAT, "%s: frame %" PRIu64 ": not an Ethernet frame",
                         path, k.frame);
            break;
        }
        int out = qr_fabric_mac_owner(k.mac_src, &owner, &op) && owner.kind != QR_NODE_HOST &&
                  owner.index == sw && op == port;
        uint32_t d = qri_tb_dir_of(&s->conns, &k);
        if (d == UINT32_MAX || !(k.tcp_flags & 0x3f)) {
            rep->unrecorded++;
            if (k.family == 4 && k.tos == QR_GUIDED_TOS && k.dst_port == QR_PROBE_PORT &&
                !(k.tcp_flags & 0x3f)) {
                if (qri_grow((void **)&rep->mirror, &rep->cap_mirror, rep->n_mirror,
                             sizeof *rep->mirror, 1024)) {
                    rc = QR_ENOMEM;
                    break;
                }
                rep->mirror[rep->n_mirror++] =
                    (qr_fabric_mirror_copy){(uint32_t)k.src[12] << 24 | (uint32_t)k.src[13] << 16 |
                                                (uint32_t)k.src[14] << 8 | k.src[15],
                                            (uint32_t)k.dst[12] << 24 | (uint32_t)k.dst[13] << 16 |
                                                (uint32_t)k.dst[14] << 8 | k.dst[15],
                                            k.seq,
                                            k.src_port,
                                            (uint16_t)sw,
                                            (uint8_t)port,
                                            (uint8_t)out,
                                            k.time_ns};
            }
            rep->trace_probes += d != UINT32_MAX; /* 007's: a recorded 5-tuple, no flags */
            struct opk *x = op_of(s, &k, sw, out, 0);
            if (!x) {
                rc = k.family == 4 ? QR_ENOMEM : QR_OK;
                continue;
            }
            if (obs_add(&x->sg, (struct obs){k.time_ns - s->conns.base, (uint16_t)sw, (uint8_t)port,
                                             (uint8_t)out, k.ttl, 0}) == QR_ENOMEM)
                rc = QR_ENOMEM; /* one seen more often than a TTL allows: its first sightings */
            continue;
        }
        struct fp *x = lookup(s, d, &k, sw, out);
        if (!x && is_repeat(s, d, &k)) {
            rep->repeat_frames++;
            if (!out && k.ttl <= 1) { /* its TTL ran out here: the kernel counts it */
                s->expired[sw]++;
                rep->other_expired++;
            } else
                s->repeat_at[3 * sw + (out ? 1 : 0)]++;
            continue;
        }
        if (!x) {
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": a packet of %s (IP ID %u, seq %u, ack %u, %u "
                         "bytes) %s with TTL %u that no host's capture holds, or seen twice so: "
                         "a host's capture is incomplete or this one holds a frame twice",
                         path, k.frame, dir_text(s, d, d1, sizeof d1), k.ip_id, k.seq, k.ack,
                         k.ip_len, out ? "left" : "arrived", k.ttl);
            break;
        }
        rc = obs_add(&x->sg, (struct obs){k.time_ns - s->conns.base, (uint16_t)sw, (uint8_t)port,
                                          (uint8_t)out, k.ttl, 0});
        if (rc == QR_EVALUE)
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": a packet of %s seen %d times, more than its TTL "
                         "allows",
                         path, k.frame, dir_text(s, d, d1, sizeof d1), MAX_SIGHTINGS);
    }
    qr_capture_stats st;
    if (c) {
        qr_capture_stats_get(c, &st);
        rep->skipped_frames += st.frames - st.kept;
    }
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

/* The recorded packet a fault's log entry is: among those with its key (a SYN-ACK's copies share
 * IP ID 0), one that stopped at the fault's switch and has no fault yet, else any without one
 * unless its host sent it again (then the repeat was dropped: NULL, is_repeat). */
static struct fp *lookup_dropped(struct ft_state *s, uint32_t dir, const qr_capture_packet *k,
                                 uint32_t sw)
{
    size_t at = key_hash(dir, k->ip_id, k->seq, k->ack, k->tcp_flags, k->ip_len) & s->mask;
    struct fp *any = NULL;
    for (; s->table[at]; at = (at + 1) & s->mask) {
        struct fp *x = &s->p[s->table[at] - 1];
        if (!same(x, dir, k) || x->fault || x->fate == 3)
            continue;
        if (x->fate == 2 && x->drop_sw == sw)
            return x;
        if (!any)
            any = x;
    }
    return any && !any->repeats ? any : NULL;
}

/* Fault f's log: the packets its rule dropped (after every packet was followed). */
/* A frame of a fault's log that is not TCP: an IPv4 packet the rule on switch *at dropped. */
struct fault_ctx {
    struct ft_state *s;
    uint32_t sw;
};

static void fault_other(void *ctx, const qr_capture_packet *k, qr_skip why)
{
    const struct fault_ctx *c = ctx;
    if (why == QR_SKIP_NOT_TCP && k->family == 4)
        c->s->other_fault[c->sw]++;
}

static int read_fault(struct ft_state *s, const char *dir, const qr_fabric_fault *f,
                      qr_fabric_fault_report *fr, qr_fabric_truth_report *rep)
{
    char path[4300], d1[96];
    snprintf(path, sizeof path, "%s/fault-%u.pcap", dir, f->fault);
    qr_node from, to;
    uint32_t fport;
    qr_topology_link_ends(s->topo, f->link, &from, &to, &fport);
    uint32_t at = from.kind == QR_NODE_HOST ? to.index : from.index; /* the rule's switch */
    qr_capture *c = NULL;
    qr_capture_packet k;
    int rc = qr_capture_open(&c, path, s->errbuf);
    struct fault_ctx fc = {s, at};
    qr_capture_on_skip(c, fault_other, &fc);
    while (!rc && (rc = qr_capture_next(c, &k, s->errbuf)) == QR_OK) {
        uint32_t d = qri_tb_dir_of(&s->conns, &k);
        if (d == UINT32_MAX || !(k.tcp_flags & 0x3f)) {
            rep->trace_fault_drops += d != UINT32_MAX;
            struct opk *x = op_of(s, &k, UINT32_MAX, 0, at);
            if (x)
                x->fault = (uint16_t)f->fault;
            continue;
        }
        struct fp *x = lookup_dropped(s, d, &k, at);
        if (!x && is_repeat(s, d, &k)) {
            rep->repeat_frames++;
            s->repeat_at[3 * at + 2]++;
            continue;
        }
        if (!x) {
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": fault %u dropped a packet of %s (IP ID %u, seq "
                         "%u) that no host's capture holds, or twice",
                         path, k.frame, f->fault, dir_text(s, d, d1, sizeof d1), k.ip_id, k.seq);
            break;
        }
        x->fault = (uint16_t)f->fault;
        fr->dropped++;
    }
    if (c) {
        qr_capture_stats st;
        qr_capture_stats_get(c, &st);
        fr->logged = st.frames;
    }
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

/* The sighting at switch sw (out or in), by port (UINT32_MAX: any) with TTL ttl (-1: any). */
static const struct obs *find(const struct sights *g, uint32_t sw, int out, uint32_t port, int ttl)
{
    const struct obs *o = obs_of(g);
    for (int i = 0; i < g->n; i++)
        if (o[i].sw == sw && o[i].out == out && (port == UINT32_MAX || o[i].port == port) &&
            (ttl < 0 || o[i].ttl == ttl))
            return &o[i];
    return NULL;
}

/* One switch a packet crossed: where it arrived and, unless it stopped there, left. */
struct hop {
    uint32_t sw;
    const struct obs *in, *out;
};

enum walk_end { W_DELIVERED = 1, W_STOPPED, W_NOT_SENT, W_NO_NEXT, W_TOO_LONG, W_WRONG_HOST };

/* Follow the sightings g of one packet from host src's edge switch towards host dst, each switch
 * sending it on with its TTL one less (a routing loop's laps apart): the switches it crossed into
 * h[0..*hops); how it ended (W_DELIVERED, W_STOPPED at the last hop: dropped there, or its TTL
 * ran out when it arrived with 1 or less; or a damaged capture: W_NOT_SENT never at its first
 * switch, W_NO_NEXT left the last hop by its out port and never reached the next, W_TOO_LONG,
 * W_WRONG_HOST delivered elsewhere). */
static enum walk_end walk(const struct ft_state *s, const struct sights *g, uint32_t src,
                          uint32_t dst, struct hop h[MAX_HOPS], uint32_t *hops)
{
    uint32_t sw, port;
    qr_topology_host_attach(s->topo, src, &sw, &port);
    *hops = 0;
    const struct obs *in = find(g, sw, 0, port, -1);
    if (!in)
        return W_NOT_SENT;
    for (;;) {
        if (*hops == MAX_HOPS)
            return W_TOO_LONG;
        struct hop *x = &h[(*hops)++];
        x->sw = sw;
        x->in = in;
        x->out = find(g, sw, 1, UINT32_MAX, (int)in->ttl - 1);
        if (!x->out)
            return W_STOPPED;
        qr_node_kind pk;
        uint32_t peer, pp;
        qr_topology_link(s->topo, sw, x->out->port, &pk, &peer, &pp);
        if (pk == QR_NODE_HOST)
            return peer == dst ? W_DELIVERED : W_WRONG_HOST;
        in = find(g, peer, 0, pp, x->out->ttl);
        if (!in)
            return W_NO_NEXT;
        sw = peer;
    }
}

/* Follow recorded packet x: delivered, or dropped where it stopped; its switches into path. */
static int follow(struct ft_state *s, struct fp *x, uint32_t path[MAX_HOPS], uint32_t *hops,
                  qr_fabric_truth_report *rep)
{
    char d1[96];
    uint32_t d = x->r->dir, src = qr_flow_table_dir_src(s->ft, d),
             dst = qr_flow_table_dir_dst(s->ft, d), sw0, port0;
    struct hop h[MAX_HOPS];
    enum walk_end e = walk(s, &x->sg, src, dst, h, hops);
    qr_topology_host_attach(s->topo, src, &sw0, &port0);
    const struct hop *last = *hops ? &h[*hops - 1] : NULL;
    switch (e) {
    case W_NOT_SENT:
        return qri_err(s->errbuf, QR_EVALUE,
                       "%s: host %u's packet %u (IP ID %u, seq %u) never reached its switch s%u "
                       "(s%u-p%u.pcap): a capture is incomplete",
                       dir_text(s, d, d1, sizeof d1), src, x->r->seq, x->ip_id, x->r->pk.seq, sw0,
                       sw0, port0);
    case W_TOO_LONG:
        return qri_err(s->errbuf, QR_EVALUE, "%s: packet %u crossed more than %d switches",
                       dir_text(s, d, d1, sizeof d1), x->r->seq, MAX_HOPS);
    case W_WRONG_HOST:
        return qri_err(s->errbuf, QR_EVALUE,
                       "%s: packet %u left s%u towards a host that is not its destination",
                       dir_text(s, d, d1, sizeof d1), x->r->seq, last->sw);
    case W_NO_NEXT:
        return qri_err(s->errbuf, QR_EVALUE,
                       "%s: packet %u (IP ID %u, seq %u) left s%u by port %u and never reached "
                       "the switch it leads to: a capture is incomplete",
                       dir_text(s, d, d1, sizeof d1), x->r->seq, x->ip_id, x->r->pk.seq, last->sw,
                       last->out->port);
    default: break;
    }
    s->first_hop[x - s->p] = h[0].in->t - x->host_t;
    for (uint32_t i = 0; i < *hops; i++) {
        path[i] = h[i].sw;
        rep->ports[h[i].sw * s->k + h[i].in->port].in++;
        if (!h[i].out)
            continue;
        rep->ports[h[i].sw * s->k + h[i].out->port].out++;
        uint8_t *dp = &s->dir_port[(size_t)d * s->switches + h[i].sw];
        *dp = *dp == NO_PORT || *dp == h[i].out->port ? h[i].out->port : MANY_PORTS;
    }
    x->fate = e == W_DELIVERED ? 1 : 2;
    if (e == W_STOPPED) {
        x->drop_sw = (uint16_t)last->sw;
        x->drop_t = last->in->t;
        x->drop_port = NO_PORT;
        for (uint32_t i = 0; i + 1 < *hops; i++) /* the same route takes it by the same port */
            if (h[i].sw == last->sw)
                x->drop_port = (uint8_t)h[i].out->port;
        if (last->in->ttl <= 1) { /* the kernel drops it before any queue, and answers */
            x->fate = 3;
            rep->expired++;
            s->expired[last->sw]++;
        }
    }
    return QR_OK;
}

void qr_fabric_truth_report_free(qr_fabric_truth_report *r)
{
    if (!r)
        return;
    free(r->ports);
    free(r->faults);
    free(r->core_dirs);
    free(r->dir_path);
    free(r->dir_hops);
    free(r->dir_src);
    free(r->dir_dst);
    free(r->dir_sport);
    free(r->dir_dport);
    free(r->mirror);
    memset(r, 0, sizeof *r);
}

/* Each port's FIFO: the bytes it held when each packet that left by it (or was dropped at it)
 * arrived; its largest into the report, a drop's into its row. */
struct qev {
    int64_t t;
    uint32_t bytes;
    int32_t drop;   /* index into the drops, -1 */
    struct obs *in; /* the arrival's sighting (gets the bytes held), NULL */
    uint8_t dep;
};

static int cmp_arrival(const void *a, const void *b)
{
    const qr_arrival *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->packet < y->packet ? -1 : x->packet > y->packet;
}

static int cmp_qev(const void *a, const void *b)
{
    const struct qev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (int)y->dep - (int)x->dep; /* a departure before an arrival at one time */
}

/* The departures (out sightings) of one packet's sightings g into the port's events, each with its
 * arrival at that switch (the sighting with its TTL one more); count only (ev NULL) or fill. */
static void port_events(struct ft_state *s, struct sights *g, uint32_t bytes, size_t *fill,
                        struct qev *ev)
{
    struct obs *o = obs_of(g);
    for (int j = 0; j < g->n; j++) {
        if (!o[j].out)
            continue;
        size_t q = o[j].sw * s->k + o[j].port;
        if (!ev) {
            fill[q] += 2;
            continue;
        }
        struct obs *in = (struct obs *)find(g, o[j].sw, 0, UINT32_MAX, o[j].ttl + 1);
        ev[fill[q]++] = (struct qev){in ? in->t : o[j].t, bytes, -1, in, 0};
        ev[fill[q]++] = (struct qev){o[j].t, bytes, -1, NULL, 1};
    }
}

/* Each port's FIFO, from every packet that left by it (the probes' too) and the queue drops charged
 * to it: the bytes it held when each arrived; its largest into the report, an arrival's into its
 * sighting, a drop's into its row. */
static int queues(struct ft_state *s, qr_fabric_truth_report *rep, qr_row_drop *drops,
                  size_t n_drops)
{
    size_t n_ports = (size_t)s->switches * s->k;
    size_t *cnt = calloc(n_ports + 1, sizeof *cnt);
    if (!cnt)
        return QR_ENOMEM;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < s->n; i++)
            port_events(s, &s->p[i].sg, 0, cnt, NULL);
        for (size_t i = 0; i < s->n_op; i++)
            port_events(s, &s->op[i].sg, 0, cnt, NULL);
        if (pass)
            break;
        for (size_t i = 0; i < n_drops; i++)
            if (drops[i].port != UINT32_MAX && drops[i].reason == QR_DROP_BUFFER_FULL)
                cnt[drops[i].sw * s->k + drops[i].port]++;
        size_t total = 0;
        for (size_t q = 0; q < n_ports; q++) {
            size_t c = cnt[q];
            cnt[q] = total;
            total += c;
        }
        cnt[n_ports] = total;
        break;
    }
    size_t total = cnt[n_ports];
    struct qev *ev = malloc((total ? total : 1) * sizeof *ev);
    size_t *fill = calloc(n_ports + 1, sizeof *fill);
    if (!ev || !fill) {
        free(cnt);
        free(ev);
        free(fill);
        return QR_ENOMEM;
    }
    memcpy(fill, cnt, (n_ports + 1) * sizeof *fill);
    for (size_t i = 0; i < s->n; i++)
        port_events(s, &s->p[i].sg, s->p[i].r->pk.ip_len, fill, ev);
    for (size_t i = 0; i < s->n_op; i++)
        port_events(s, &s->op[i].sg, s->op[i].len, fill, ev);
    for (size_t i = 0; i < n_drops; i++)
        if (drops[i].port != UINT32_MAX && drops[i].reason == QR_DROP_BUFFER_FULL) {
            size_t q = drops[i].sw * s->k + drops[i].port;
            ev[fill[q]++] = (struct qev){drops[i].time_ns, drops[i].bytes, (int32_t)i, NULL, 0};
        }
    for (size_t q = 0; q < n_ports; q++) {
        qsort(ev + cnt[q], cnt[q + 1] - cnt[q], sizeof *ev, cmp_qev);
        int64_t held = 0;
        for (size_t i = cnt[q]; i < cnt[q + 1]; i++) {
            if (ev[i].dep) {
                held -= ev[i].bytes;
                continue;
            }
            uint64_t h = held > 0 ? (uint64_t)held : 0;
            if (h > rep->ports[q].max_queue_bytes)
                rep->ports[q].max_queue_bytes = h;
            if (ev[i].drop >= 0) {
                drops[ev[i].drop].queue_bytes = h;
                continue;
            }
            if (ev[i].in)
                ev[i].in->q = (uint32_t)h;
            held += ev[i].bytes;
        }
    }
    free(cnt);
    free(ev);
    free(fill);
    return QR_OK;
}

/* The arrival log of the recorded packets (path, queuelog.h): at every switch each reached, its
 * arrival (its ingress capture's time), the port it left by and the bytes that port's FIFO held,
 * admitted; where it stopped, the drop's row (fault or buffer-full; a queue drop whose port no
 * capture shows has no arrival there: *unplaced counts them; nor has a drop by a fault on its
 * host's uplink, which happened before the switch). In time order. */
static int arrival_log(struct ft_state *s, const char *path, const qr_row_drop *drops,
                       size_t n_drops, const qr_fabric_fault *faults, uint64_t *unplaced,
                       char *errbuf)
{
    size_t n = 0, cap = 0;
    qr_arrival *a = NULL;
    const qr_row_drop *d = drops;
    for (size_t i = 0; i < s->n; i++) {
        struct fp *x = &s->p[i];
        uint32_t dir = x->r->dir, hops;
        struct hop h[MAX_HOPS];
        walk(s, &x->sg, qr_flow_table_dir_src(s->ft, dir), qr_flow_table_dir_dst(s->ft, dir), h,
             &hops);
        for (uint32_t j = 0; j < hops; j++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 65536;
                qr_arrival *g = realloc(a, cap * sizeof *g);
                if (!g) {
                    free(a);
                    return QR_ENOMEM;
                }
                a = g;
            }
            qr_arrival *y = &a[n];
            memset(y, 0, sizeof *y);
            y->packet = qr_packet_id(dir, x->r->seq);
            y->time_ns = h[j].in->t;
            y->sw = h[j].sw;
            y->bytes = x->r->pk.ip_len;
            if (h[j].out) {
                y->port = h[j].out->port;
                y->queue_bytes = h[j].in->q;
                n++;
                continue;
            }
            /* where it stopped: its drop row (drops are in the packets' order); a fault on its
             * host's uplink dropped it on the wire, before the switch: no mirror saw it there
             * (the testbed's switch captures it first only because nft's ingress hook comes after
             * the capture's tap) */
            if (x->fault && faults[x->fault - 1].hook == QR_FABRIC_HOOK_INGRESS)
                continue;
            if (x->fate == 3) /* its TTL ran out: the kernel dropped it before any queue, as a
                                 simulated switch's IP layer does; no mirror sees it there */
                continue;
            while (d < drops + n_drops && d->packet != y->packet)
                d++;
            if (d == drops + n_drops || d->port == UINT32_MAX) {
                ++*unplaced;
                d = d == drops + n_drops ? drops : d;
                continue;
            }
            y->port = d->port;
            y->decision = d->reason;
            y->queue_bytes = d->queue_bytes;
            n++;
        }
    }
    if (n)
        qsort(a, n, sizeof *a, cmp_arrival);
    qr_arrival_writer *w = NULL;
    int rc = qr_arrival_writer_open(&w, path, errbuf);
    if (!rc)
        rc = qr_arrival_writer_set_recording(w, qr_recording_id(s->rec));
    if (!rc)
        rc = qr_arrival_writer_set_source(w, QR_ARRIVALS_TRUTH);
    for (size_t i = 0; !rc && i < n; i++)
        rc = qr_arrival_write(w, &a[i], errbuf);
    int crc = qr_arrival_writer_close(w, errbuf);
    free(a);
    return rc ? rc : crc;
}

/* Follow every packet of no recorded connection from its sender's switch: delivered, or stopped
 * (a queue drop at its switch unless a fault's log holds it; the logs are read after this). */
static void follow_others(struct ft_state *s, qr_fabric_truth_report *rep)
{
    for (size_t i = 0; i < s->n_op; i++) {
        struct opk *x = &s->op[i];
        uint32_t src, dst;
        if (qr_topology_host_of_addr(s->topo, x->src, &src) ||
            qr_topology_host_of_addr(s->topo, x->dst, &dst))
            continue;
        struct hop h[MAX_HOPS];
        uint32_t hops;
        enum walk_end e = walk(s, &x->sg, src, dst, h, &hops);
        x->fate = e == W_DELIVERED ? 1 : e == W_STOPPED ? 2 : 0;
        if (e == W_STOPPED)
            x->drop_sw = (uint16_t)h[hops - 1].sw;
        if (e == W_STOPPED && h[hops - 1].in->ttl <= 1) {
            x->fate = 3; /* its TTL ran out there (007's probes do; a loop's): answered */
            s->expired[x->drop_sw]++;
            rep->other_expired++;
        }
    }
}

static int64_t first_seen(const struct opk *x)
{
    int64_t t = INT64_MAX;
    const struct obs *o = obs_of(&x->sg);
    for (int i = 0; i < x->sg.n; i++)
        if (o[i].t < t)
            t = o[i].t;
    return t;
}

/* A probe's request (its SYN from addr:port to peer's QR_PROBE_PORT) or answer (the SYN-ACK
 * back), sent at sent_ns: its first copy seen within COPY_WINDOW_NS of then (a SYN-ACK resent a
 * second later has the same headers; the kernel reuses a port for other probes). */
static const struct opk *probe_packet(const struct ft_state *s, uint32_t addr, uint16_t port,
                                      uint32_t peer, int64_t sent_ns, int answer)
{
    const struct opk *best = NULL;
    for (size_t i = 0; i < s->n_op; i++) {
        const struct opk *x = &s->op[i];
        int syn = (x->flags & QR_TCP_SYN) != 0, ack = (x->flags & QR_TCP_ACK) != 0;
        if (!syn || ack != answer)
            continue;
        int mine =
            answer
                ? x->dst == addr && x->dport == port && x->src == peer && x->sport == QR_PROBE_PORT
                : x->src == addr && x->sport == port && x->dst == peer && x->dport == QR_PROBE_PORT;
        int64_t t = first_seen(x);
        if (mine && t > sent_ns - COPY_WINDOW_NS && t < sent_ns + COPY_WINDOW_NS &&
            (!best || t < first_seen(best)))
            best = x;
    }
    return best;
}

/* Where a lost probe died, from its request's and answer's sightings: at its sender (it never
 * reached its switch), at the switch where its request or answer stopped (a fault's log holds it,
 * its TTL ran out round a planted loop: a fault too, or the queue), or nowhere (answered after
 * the agent's timeout). */
static void ping_truth(struct ft_state *s, qr_row_probe *r, const qr_fabric_fault *faults,
                       qr_fabric_truth_report *rep)
{
    uint32_t src = qr_topology_host_addr(s->topo, r->src);
    rep->pings_lost++;
    r->drop_port = UINT32_MAX;
    for (int answer = 0; answer < 2; answer++) {
        const struct opk *x = probe_packet(s, src, r->sport, qr_topology_host_addr(s->topo, r->dst),
                                           r->sent_ns, answer);
        struct hop h[MAX_HOPS];
        uint32_t hops = 0;
        enum walk_end e =
            x ? walk(s, &x->sg, answer ? r->dst : r->src, answer ? r->src : r->dst, h, &hops)
              : W_NOT_SENT;
        if (e == W_DELIVERED)
            continue; /* the request reached the probed host; the answer's turn */
        r->lost_in = (uint8_t)(1 + answer);
        if (e != W_STOPPED) { /* never at its switch: its host's queue (or no answer sent) */
            r->drop_sw = QR_PROBE_AT_HOST;
            r->drop_ns = r->sent_ns;
            rep->pings_host++;
            return;
        }
        r->drop_sw = h[hops - 1].sw;
        r->drop_ns = h[hops - 1].in->t;
        if (x->fault) {
            const qr_fabric_fault *f = &faults[x->fault - 1];
            qr_node from, to;
            uint32_t port;
            qr_topology_link_ends(s->topo, f->link, &from, &to, &port);
            r->drop_reason = QR_DROP_FAULT;
            r->drop_port = from.kind == QR_NODE_HOST ? UINT32_MAX : port;
            rep->pings_fault++;
        } else if (x->fate == 3) {
            r->drop_reason = QR_DROP_FAULT;
            rep->pings_fault++;
        } else {
            r->drop_reason = QR_DROP_BUFFER_FULL;
            rep->pings_queue++;
        }
        return;
    }
    rep->pings_late++; /* both ways delivered: answered, after the timeout */
}

/* What qr_fabric_truth builds, stage by stage, before it writes the truth. */
struct ft_out {
    qr_fabric_truth_report rep;
    qr_recording *rec;
    qr_row_drop *drops;
    size_t n_drops;
    qr_row_direction *dirs;
    qr_row_link_fault *lf;
    qr_row_path *tp;
    size_t n_tp;
    qr_row_probe *pings;
    int64_t end_ns;
};

/* The recording, the counters' arrays and the report's, one row per port. */
static int ft_open(struct ft_state *s, struct ft_out *o, const qr_fabric_truth_in *in)
{
    char *errbuf = s->errbuf;
    qr_fabric_truth_report *rep = &o->rep;
    size_t n_faults;
    qr_fabric_faults(in->fab, &n_faults);
    s->other_in = calloc(s->switches + 1, sizeof *s->other_in);
    s->other_out = calloc(s->switches + 1, sizeof *s->other_out);
    s->other_fault = calloc(s->switches + 1, sizeof *s->other_fault);
    s->expired = calloc(s->switches + 1, sizeof *s->expired);
    s->other_expired = calloc(s->switches + 1, sizeof *s->other_expired);
    s->returned = calloc(s->switches + 1, sizeof *s->returned);
    s->repeat_at = calloc(3 * (size_t)s->switches + 1, sizeof *s->repeat_at);
    s->own_addr = calloc((size_t)s->switches * s->k + 1, sizeof *s->own_addr);
    size_t n_cables;
    const qr_fabric_cable *cb = qr_fabric_cables(in->fab, &n_cables);
    uint32_t hosts = qr_fabric_hosts(in->fab);
    for (size_t i = 0; s->own_addr && i < n_cables; i++)
        for (int j = 0; j < 2; j++) {
            const qr_fabric_end *e = j ? &cb[i].b : &cb[i].a;
            if (e->ns >= hosts && e->port < s->k)
                s->own_addr[(e->ns - hosts) * s->k + e->port] = e->addr;
        }
    int rc = !s->other_in || !s->other_out || !s->other_fault || !s->expired || !s->other_expired ||
                     !s->returned || !s->own_addr || !s->repeat_at
                 ? qri_err(errbuf, QR_ENOMEM, "truth: out of memory")
                 : qr_recording_open(&o->rec, in->rec_dir, NULL, errbuf);
    if (!rc) {
        s->rec = o->rec;
        s->ft = qr_recording_flows(o->rec);
        s->n_dirs = qr_flow_table_directions(s->ft);
        if (qr_recording_hosts(o->rec) != qr_fabric_hosts(in->fab))
            rc = qri_err(errbuf, QR_EVALUE, "%s: %u hosts, the fabric has %u", in->rec_dir,
                         qr_recording_hosts(o->rec), qr_fabric_hosts(in->fab));
    }
    rep->n_ports = s->switches * s->k;
    rep->n_faults = n_faults;
    rep->n_core = 0;
    for (uint32_t sw = 0; sw < s->switches; sw++)
        rep->n_core += qr_topology_switch_kind(s->topo, sw) == QR_NODE_CORE;
    if (!rc) {
        rep->n_dirs = s->n_dirs;
        rep->ports = calloc(rep->n_ports, sizeof *rep->ports);
        rep->faults = calloc(n_faults + 1, sizeof *rep->faults);
        rep->core_dirs = calloc(rep->n_core + 1, sizeof *rep->core_dirs);
        rep->dir_path = calloc(s->n_dirs + 1, sizeof *rep->dir_path);
        rep->dir_hops = calloc(s->n_dirs + 1, 1);
        rep->dir_src = calloc(s->n_dirs + 1, sizeof *rep->dir_src);
        rep->dir_dst = calloc(s->n_dirs + 1, sizeof *rep->dir_dst);
        rep->dir_sport = calloc(s->n_dirs + 1, sizeof *rep->dir_sport);
        rep->dir_dport = calloc(s->n_dirs + 1, sizeof *rep->dir_dport);
        o->lf = calloc(n_faults + 1, sizeof *o->lf);
        if (!rep->ports || !rep->faults || !rep->core_dirs || !rep->dir_path || !rep->dir_hops ||
            !rep->dir_src || !rep->dir_dst || !rep->dir_sport || !rep->dir_dport || !o->lf)
            rc = QR_ENOMEM;
    }
    for (uint32_t q = 0; !rc && q < rep->n_ports; q++) {
        rep->ports[q].sw = q / s->k;
        rep->ports[q].port = q % s->k;
        rep->ports[q].qdisc_drops = in->qdisc_drops[q];
    }
    return rc;
}

/* The recorded packets, their hosts' IP IDs, and every sighting at a switch port. */
static int ft_read(struct ft_state *s, struct ft_out *o, const qr_fabric_truth_in *in)
{
    int rc = qri_tb_conns_load(in->rec_dir, s->ft, &s->conns, s->errbuf);
    if (!rc)
        rc = index_packets(s);
    size_t *next = rc ? NULL : calloc(s->n_dirs + 1, sizeof *next);
    if (!rc && !next)
        rc = QR_ENOMEM;
    for (uint32_t h = 0; !rc && h < qr_fabric_hosts(in->fab); h++)
        rc = host_ids(s, in->capture_dir, h, next);
    free(next);
    if (!rc)
        rc = hash_packets(s);
    o->rep.packets = s->n;
    o->rep.repeat_sends = s->repeat_sends;
    for (uint32_t sw = 0; !rc && sw < s->switches; sw++)
        for (uint32_t p = 0; !rc && p < s->k; p++)
            rc = read_port(s, in->capture_dir, sw, p, &o->rep);
    return rc;
}

/* Every packet followed; its path, fate, and the port its direction takes at each switch. */
static int ft_follow(struct ft_state *s, struct ft_out *o)
{
    qr_fabric_truth_report *rep = &o->rep;
    if (!(o->drops = calloc(s->n + 1, sizeof *o->drops)) ||
        !(s->first_hop = calloc(s->n + 1, sizeof *s->first_hop)))
        return QR_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        struct fp *x = &s->p[i];
        uint32_t path[MAX_HOPS], hops;
        int rc = follow(s, x, path, &hops, rep);
        if (rc)
            return rc;
        rep->hops += hops;
        uint32_t d = x->r->dir;
        if (x->fate == 1 && hops <= 5) { /* a delivered packet of a fat tree: up and down */
            rep->delivered++;
            if (!rep->dir_hops[d]) {
                rep->dir_hops[d] = (uint8_t)hops;
                memcpy(rep->dir_path[d], path, hops * sizeof *path);
            }
        }
    }
    follow_others(s, rep);
    return QR_OK;
}

/* The faults' logs read and held against their rules' counters; no packet of a log delivered. */
static int ft_check_faults(struct ft_state *s, struct ft_out *o, const qr_fabric_truth_in *in)
{
    qr_fabric_truth_report *rep = &o->rep;
    size_t n_faults;
    const qr_fabric_fault *faults = qr_fabric_faults(in->fab, &n_faults);
    char d1[96];
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < n_faults; i++) {
        rep->faults[i].counter = in->fault_drops[i];
        if (faults[i].kind == QR_LINK_GRAY || faults[i].kind == QR_LINK_BLACKHOLE)
            rc = read_fault(s, in->capture_dir, &faults[i], &rep->faults[i], rep);
        if (!rc && rep->faults[i].logged != rep->faults[i].counter)
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s/fault-%u.pcap: holds %" PRIu64 " packets, the rule's counter says "
                         "%" PRIu64 " were dropped: the log is incomplete",
                         in->capture_dir, faults[i].fault, rep->faults[i].logged,
                         rep->faults[i].counter);
    }
    for (size_t i = 0; !rc && i < s->n; i++)
        if (s->p[i].fate == 1 && s->p[i].fault)
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: packet %u is in fault %u's log but reached host %u",
                         dir_text(s, s->p[i].r->dir, d1, sizeof d1), s->p[i].r->seq, s->p[i].fault,
                         qr_flow_table_dir_dst(s->ft, s->p[i].r->dir));
    if (!rc && s->n) {
        qsort(s->first_hop, s->n, sizeof *s->first_hop, qri_cmp_i64);
        rep->base_ns = s->conns.base;
        rep->hop_p50_ns = qr_percentile_i64(s->first_hop, s->n, 0.5);
        rep->hop_p99_ns = qr_percentile_i64(s->first_hop, s->n, 0.99);
    }
    return rc;
}

/* The drops: by the fault whose log holds them, else by their port's queue. */
static int ft_drops(struct ft_state *s, struct ft_out *o)
{
    qr_fabric_truth_report *rep = &o->rep;
    const qr_fabric_fault *faults = qr_fabric_faults(s->fab, NULL);
    char d1[96];
    for (size_t i = 0; i < s->n; i++) {
        struct fp *x = &s->p[i];
        if (x->fate != 2)
            continue;
        uint32_t d = x->r->dir;
        uint8_t port = x->drop_port != NO_PORT ? x->drop_port
                                               : s->dir_port[(size_t)d * s->switches + x->drop_sw];
        qr_row_drop *r = &o->drops[o->n_drops++];
        *r = (qr_row_drop){.packet = qr_packet_id(d, x->r->seq),
                           .dir = d,
                           .time_ns = x->drop_t,
                           .sw = x->drop_sw,
                           .port = port < MANY_PORTS ? port : UINT32_MAX,
                           .bytes = x->r->pk.ip_len,
                           .reason = x->fault ? QR_DROP_FAULT : QR_DROP_BUFFER_FULL};
        if (!x->fault) {
            rep->queue_drops++;
            if (r->port == UINT32_MAX)
                rep->unknown_port_drops++;
            else
                rep->ports[r->sw * s->k + r->port].queue_drops++;
            continue;
        }
        const qr_fabric_fault *f = &faults[x->fault - 1];
        qr_node from, to;
        uint32_t fport;
        qr_topology_link_ends(s->topo, f->link, &from, &to, &fport);
        uint32_t at = from.kind == QR_NODE_HOST ? to.index : from.index;
        if (from.kind != QR_NODE_HOST)
            r->port = fport;
        rep->fault_drops++;
        if (at != x->drop_sw)
            return qri_err(s->errbuf, QR_EVALUE,
                           "%s: packet %u is in fault %u's log (at s%u) but stopped at s%u",
                           dir_text(s, d, d1, sizeof d1), x->r->seq, x->fault, at, x->drop_sw);
    }
    return QR_OK;
}

/* One switch's queue drops, as its captures show them, against its qdiscs' counters. */
static int ft_check_switch(struct ft_state *s, struct ft_out *o, const qr_fabric_truth_in *in,
                           uint32_t sw)
{
    qr_fabric_truth_report *rep = &o->rep;
    int64_t cap = 0, cnt = 0;
    for (uint32_t p = 0; p < s->k; p++) {
        cap += (int64_t)rep->ports[sw * s->k + p].queue_drops;
        cnt += (int64_t)rep->ports[sw * s->k + p].qdisc_drops;
    }
    for (size_t i = 0; i < o->n_drops; i++)
        cap += o->drops[i].sw == sw && o->drops[i].port == UINT32_MAX &&
               o->drops[i].reason == QR_DROP_BUFFER_FULL;
    int64_t probes = 0;
    for (size_t i = 0; i < s->n_op; i++) /* the probes' */
        probes += s->op[i].fate == 2 && s->op[i].drop_sw == sw && !s->op[i].fault;
    rep->probe_queue_drops += (uint64_t)probes;
    /* a host's repeats: what arrived less what left and what a fault's rule dropped */
    const uint64_t *ra = &s->repeat_at[3 * sw];
    int64_t repeats = (int64_t)ra[0] - (int64_t)(ra[1] + ra[2]);
    if (repeats < 0)
        return qri_err(s->errbuf, QR_EVALUE,
                       "s%u: its captures show %" PRIu64 " repeats of a host's packets leaving it "
                       "and its faults' logs %" PRIu64 " dropped, more than the %" PRIu64
                       " that arrived: a capture is incomplete",
                       sw, ra[1], ra[2], ra[0]);
    rep->repeat_queue_drops += (uint64_t)repeats;
    probes += repeats; /* followed by no packet either */
    /* what is not TCP: what arrived and what it sent itself, less what it took itself,
     * what left and what a fault's rule on it dropped (its log) */
    int64_t others = (int64_t)(s->other_in[sw] + in->own_sent[sw]) -
                     (int64_t)(in->own_taken[sw] + s->other_out[sw] + s->other_fault[sw] +
                               s->other_expired[sw] + s->returned[sw]);
    rep->other_fault_drops += s->other_fault[sw];
    rep->own_sent += in->own_sent[sw];
    if (others < 0)
        return qri_err(s->errbuf, QR_EVALUE,
                       "s%u: its captures show %" PRIu64 " packets that are not TCP leaving it, "
                       "more than the %" PRIu64 " that arrived and the %" PRIu64
                       " it sent itself (less %" PRIu64 " it took, %" PRIu64
                       " its faults dropped, %" PRIu64 " whose TTL ran out and %" PRIu64
                       " that came back to it): the counters missed some",
                       sw, s->other_out[sw], s->other_in[sw], in->own_sent[sw], in->own_taken[sw],
                       s->other_fault[sw], s->other_expired[sw], s->returned[sw]);
    rep->other_expired += s->other_expired[sw];
    if (in->ttl_expired && in->ttl_expired[sw] != s->expired[sw] + s->other_expired[sw])
        return qri_err(
            s->errbuf, QR_EVALUE,
            "s%u: its captures show %" PRIu64 " packets whose TTL ran out there (%" PRIu64
            " of them not TCP), its kernel counted %" PRIu64 " (Ip InHdrErrors): the "
            "captures do not hold the whole run",
            sw, s->expired[sw] + s->other_expired[sw], s->other_expired[sw], in->ttl_expired[sw]);
    rep->returned += s->returned[sw];
    if (in->own_returned && in->own_returned[sw] != s->returned[sw])
        return qri_err(s->errbuf, QR_EVALUE,
                       "s%u: its captures show %" PRIu64 " packets that are not TCP coming back "
                       "to it from its own address, its nftables counter %" PRIu64
                       ": the captures do not hold the whole run",
                       sw, s->returned[sw], in->own_returned[sw]);
    if (cap + probes + others != cnt)
        return qri_err(s->errbuf, QR_EVALUE,
                       "s%u: its captures show %" PRId64 " queue drops (%" PRId64 " of them "
                       "probes' or repeats', %" PRId64 " of packets that are not TCP), its "
                       "qdiscs counted %" PRId64 ": the captures do not hold the whole run",
                       sw, cap + probes + others, probes, others, cnt);
    rep->other_queue_drops += (uint64_t)others;
    return QR_OK;
}

/* What crossed each faulty link: its sending end's departures (a host's: its switch's arrivals
 * from it) and its drops. */
static void ft_faults_crossed(struct ft_state *s, struct ft_out *o)
{
    qr_fabric_truth_report *rep = &o->rep;
    size_t n_faults;
    const qr_fabric_fault *faults = qr_fabric_faults(s->fab, &n_faults);
    for (size_t i = 0; i < n_faults; i++) {
        qr_node from, to;
        uint32_t fport, hsw = 0, hport = 0;
        qr_topology_link_ends(s->topo, faults[i].link, &from, &to, &fport);
        if (from.kind == QR_NODE_HOST)
            qr_topology_host_attach(s->topo, from.index, &hsw, &hport);
        rep->faults[i].crossed = from.kind == QR_NODE_HOST
                                     ? rep->ports[hsw * s->k + hport].in
                                     : rep->ports[from.index * s->k + fport].out;
        rep->faults[i].crossed += from.kind == QR_NODE_HOST ? 0 : rep->faults[i].dropped;
        qr_link_faults_row(qr_fabric_link_faults(s->fab), i, &o->lf[i]);
        o->lf[i].crossed = rep->faults[i].crossed;
        o->lf[i].dropped = rep->faults[i].dropped;
    }
}

/* Each direction's ends and counts, the data directions each core switch carried, and the
 * last sighting of any packet. */
static int ft_directions(struct ft_state *s, struct ft_out *o)
{
    qr_fabric_truth_report *rep = &o->rep;
    for (size_t d = 0; d < s->n_dirs; d++) {
        rep->dir_src[d] = qr_flow_table_dir_src(s->ft, (uint32_t)d);
        rep->dir_dst[d] = qr_flow_table_dir_dst(s->ft, (uint32_t)d);
        uint16_t p0, p1;
        qri_tb_conns_ports(&s->conns, qr_dir_flow((uint32_t)d), &p0, &p1);
        rep->dir_sport[d] = qr_dir_is_ack((uint32_t)d) ? p1 : p0;
        rep->dir_dport[d] = qr_dir_is_ack((uint32_t)d) ? p0 : p1;
        if (!rep->dir_hops[d])
            continue;
        rep->directions++;
        if (rep->dir_hops[d] == 5 && !qr_dir_is_ack((uint32_t)d))
            for (uint32_t c = 0, sw = 0; sw < s->switches; sw++)
                if (qr_topology_switch_kind(s->topo, sw) == QR_NODE_CORE) {
                    rep->core_dirs[c] += rep->dir_path[d][2] == sw;
                    c++;
                }
    }
    if (!(o->dirs = calloc(s->n_dirs + 1, sizeof *o->dirs)))
        return QR_ENOMEM;
    for (size_t d = 0; d < s->n_dirs; d++)
        o->dirs[d] = (qr_row_direction){.dir = (uint32_t)d,
                                        .flow = qr_dir_flow((uint32_t)d),
                                        .src = rep->dir_src[d],
                                        .dst = rep->dir_dst[d]};
    for (size_t i = 0; i < s->n; i++) {
        const struct fp *x = &s->p[i];
        qr_row_direction *r = &o->dirs[x->r->dir];
        r->sent++;
        r->sent_bytes += x->r->pk.ip_len;
        if (x->fate == 1) {
            r->delivered++;
            r->delivered_bytes += x->r->pk.ip_len;
        } else if (x->fate == 2) { /* a drop row's; one whose TTL ran out is neither (the
                                      runtime's other drops) */
            r->dropped++;
            r->dropped_bytes += x->r->pk.ip_len;
        }
        const struct obs *ob = obs_of(&x->sg);
        for (int j = 0; j < x->sg.n; j++)
            if (ob[j].t > o->end_ns)
                o->end_ns = ob[j].t;
    }
    return QR_OK;
}

/* The paths the kernels chose, as cables (a delivered packet's of each direction). */
static int ft_true_paths(struct ft_state *s, struct ft_out *o)
{
    const qr_fabric_truth_report *rep = &o->rep;
    if (!(o->tp = calloc(6 * (s->n_dirs + 1), sizeof *o->tp)))
        return QR_ENOMEM;
    for (size_t d = 0; d < s->n_dirs; d++) {
        uint32_t hops = rep->dir_hops[d];
        for (uint32_t h = 0; hops && h <= hops; h++) {
            qr_node a = h == 0 ? (qr_node){QR_NODE_HOST, rep->dir_src[d]}
                               : qr_topology_switch_node(s->topo, rep->dir_path[d][h - 1]);
            qr_node b = h == hops ? (qr_node){QR_NODE_HOST, rep->dir_dst[d]}
                                  : qr_topology_switch_node(s->topo, rep->dir_path[d][h]);
            uint32_t id;
            qr_row_path *r = &o->tp[o->n_tp++];
            r->dir = (uint32_t)d;
            r->hop = h;
            if (qr_topology_link_between(s->topo, a, b, &id) == QR_OK)
                qr_topology_cable_name(s->topo, id, r->link, sizeof r->link);
        }
    }
    return QR_OK;
}

/* The agents' probes on the run's clock; why each unanswered one went unanswered. */
static int ft_pings(struct ft_state *s, struct ft_out *o, const qr_fabric_truth_in *in)
{
    const qr_fabric_fault *faults = qr_fabric_faults(s->fab, NULL);
    int64_t timeout = qr_scenario_config(qr_recording_scenario(o->rec))->pingmesh.timeout_ns;
    for (size_t i = 0; i < in->n_pings; i++) /* the run lasts as long as its agents probed */
        if (in->pings[i].sent_ns - s->conns.base > o->end_ns)
            o->end_ns = in->pings[i].sent_ns - s->conns.base;
    if (in->n_pings && in->agents_stop_ns - s->conns.base > o->end_ns) /* and waited */
        o->end_ns = in->agents_stop_ns - s->conns.base;
    if (in->n_pings && !(o->pings = malloc(in->n_pings * sizeof *o->pings)))
        return QR_ENOMEM;
    for (size_t i = 0; i < in->n_pings; i++) {
        o->pings[i] = in->pings[i];
        o->pings[i].sent_ns -= s->conns.base;
        /* unanswered (later ones were in flight), or answered after the timeout: a connect that
         * took a SYN timeout ([pingmesh] connect_wait) lost its first SYN or SYN-ACK */
        int64_t rtt = o->pings[i].rtt_ns;
        if ((rtt < 0 && o->pings[i].sent_ns + timeout <= o->end_ns) || rtt > timeout)
            ping_truth(s, &o->pings[i], faults, &o->rep);
    }
    return QR_OK;
}

/* The truth's files staged together and committed at once; the agents' probe log beside them. */
static int ft_write(struct ft_state *s, struct ft_out *o, const qr_fabric_truth_in *in)
{
    char *errbuf = s->errbuf;
    const qr_fabric_fault *faults = qr_fabric_faults(s->fab, NULL);
    char tmp[4200], path[4300];
    int rc = qri_truth_stage(in->rec_dir, tmp, sizeof tmp, errbuf);
    if (rc)
        return rc;
    snprintf(path, sizeof path, "%s/arrivals.qra", tmp);
    rc = arrival_log(s, path, o->drops, o->n_drops, faults, &o->rep.unplaced_drops, errbuf);
    if (!rc) {
        qr_truth_info info = {.recording_id = qr_recording_id(o->rec),
                              .end = QR_END_COMPLETED,
                              .sim_end_ns = o->end_ns,
                              .events = o->rep.hops,
                              .other_drops = o->rep.expired,
                              .link_faults = o->lf,
                              .n_link_faults = o->rep.n_faults,
                              .probed = in->probed,
                              .probes = o->pings,
                              .n_probes = in->n_pings,
                              .trace_fault_drops = o->rep.trace_fault_drops,
                              .true_paths = o->tp,
                              .n_true_paths = o->n_tp,
                              .has_tap_delay = 1,
                              .tap_delay_p50_ns = o->rep.hop_p50_ns,
                              .tap_delay_p99_ns = o->rep.hop_p99_ns};
        snprintf(path, sizeof path, "%s/truth.h5", tmp);
        rc = qr_truth_write(path, qr_recording_scenario(o->rec), &info, o->drops, o->n_drops,
                            o->dirs, s->n_dirs, errbuf);
    }
    if (!rc && in->probed) { /* the agents' log: an observation, beside the captures' import */
        snprintf(path, sizeof path, "%s/probes.h5", in->rec_dir);
        rc = qr_probe_log_write(path, qr_recording_scenario(o->rec), qr_recording_id(o->rec),
                                o->end_ns, o->dirs, s->n_dirs, o->pings, in->n_pings, errbuf);
    }
    if (!rc)
        rc = qri_truth_commit(in->rec_dir, tmp, errbuf);
    if (rc)
        qri_truth_discard(tmp);
    return rc;
}

static void ft_free(struct ft_state *s, struct ft_out *o)
{
    free(o->drops);
    free(o->dirs);
    free(o->lf);
    free(o->pings);
    free(o->tp);
    free(s->other_in);
    free(s->other_out);
    free(s->other_fault);
    free(s->expired);
    free(s->other_expired);
    free(s->returned);
    free(s->repeat_at);
    free(s->own_addr);
    for (size_t i = 0; s->p && i < s->n; i++)
        free(s->p[i].sg.more);
    for (size_t i = 0; i < s->n_op; i++)
        free(s->op[i].sg.more);
    free(s->op);
    free(s->op_table);
    free(s->p);
    free(s->start);
    free(s->table);
    free(s->dir_port);
    free(s->first_hop);
    qri_tb_conns_free(&s->conns);
    qr_recording_close(o->rec);
}

int qr_fabric_truth(const qr_fabric_truth_in *in, qr_fabric_truth_report *rep_out, char *errbuf)
{
    if (!in || !in->rec_dir || !in->capture_dir || !in->fab || !in->qdisc_drops ||
        !in->fault_drops || !in->own_sent || !in->own_taken)
        return qri_err(errbuf, QR_EINVAL, "fabric truth: NULL argument");
    struct ft_state s;
    memset(&s, 0, sizeof s);
    s.errbuf = errbuf;
    s.fab = in->fab;
    s.topo = qr_fabric_topology(in->fab);
    s.switches = qr_fabric_switches(in->fab);
    s.k = qr_topology_ports(s.topo, 0);
    struct ft_out o;
    memset(&o, 0, sizeof o);
    int rc = ft_open(&s, &o, in);
    if (!rc)
        rc = ft_read(&s, &o, in);
    if (!rc)
        rc = ft_follow(&s, &o);
    if (!rc)
        rc = ft_check_faults(&s, &o, in);
    if (!rc)
        rc = ft_drops(&s, &o);
    for (uint32_t sw = 0; !rc && sw < s.switches; sw++)
        rc = ft_check_switch(&s, &o, in, sw);
    if (!rc)
        rc = queues(&s, &o.rep, o.drops, o.n_drops);
    if (!rc)
        ft_faults_crossed(&s, &o);
    if (!rc)
        rc = ft_directions(&s, &o);
    if (!rc)
        rc = ft_true_paths(&s, &o);
    if (!rc)
        rc = ft_pings(&s, &o, in);
    if (!rc)
        rc = ft_write(&s, &o, in);
    ft_free(&s, &o);
    if (!rc && rep_out)
        *rep_out = o.rep;
    else
        qr_fabric_truth_report_free(&o.rep);
    return rc;
}
