/* The FatTree testbed's truth (fabric_truth.h) without root: a run made here as its captures
 * would hold it. Connections between random hosts of a k=4 fat tree, each direction on one
 * shortest path chosen at random (as ECMP pins a 5-tuple), every packet written to its sender's
 * and receiver's captures and to the capture of every switch port it crossed (arriving with the
 * previous hop's source MAC, leaving with the port's own), a few data packets dropped at a switch
 * on their way (no capture past it; the qdisc's counter says so) and sent again. The truth must
 * find exactly what was planted: every drop at its switch and port, every path, every port's
 * counts; a capture that lost a frame or a counter that disagrees is an error naming it. Some runs
 * send data packets round a routing loop instead, as a wrong static route does: back and forth
 * between a switch of their path and a neighbour until their TTL runs out, some dropped by a
 * queue on the way. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/fabric.h"
#include "qreplay/fabric_truth.h"
#include "qreplay/import.h"
#include "qreplay/packet.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"

#define K 4
#define MAX_FRAMES 20000
#define US 1000LL

static char dir[128];

/* One frame on one wire: whose capture holds it, when, and its bytes' fields. */
typedef struct {
    int64_t t;
    uint8_t mac[6];
    uint32_t src, dst; /* IPv4, host order */
    uint16_t sport, dport, ip_id, payload;
    uint32_t seq, ack;
    uint8_t flags, ttl;
    uint8_t proto; /* 0: TCP; else another protocol's (its header's bytes are not read) */
} frame;

/* A capture being made: its frames, sorted by time when written. */
typedef struct {
    frame *f;
    size_t n, cap;
} capture;

/* A direction's path: the switches and the ports it arrives and leaves by. */
typedef struct {
    uint32_t n, sw[5], in[5], out[5];
} path;

/* A direction as the hosts' captures name it, and the path it took. */
typedef struct {
    uint32_t src, dst;
    uint16_t sport, dport;
    path p;
} way;

typedef struct {
    qr_scenario *sc;
    qr_fabric *fab;
    const qr_topology *t;
    uint32_t hosts, switches;
    capture *host_cap, *port_cap; /* per host; per switch x K + port */
    uint64_t *qdisc;              /* per switch x K + port: the drops planted there */
    /* what the truth must find */
    uint64_t planted, packets, delivered, hops;
    uint64_t *in, *out; /* per switch x K + port: recorded packets that arrived by it, left it */
    way ways[64];
    size_t n_ways;
    unsigned seed;
    /* SYN-ACKs sent twice alike (IP ID 0, as a stack's timer and a resent SYN may), and the
     * repeats' sightings at switch ports */
    int repeat_synack;
    uint64_t repeats, repeat_frames;
    uint64_t repeat_drops, *qdisc_repeat; /* repeats a queue dropped: in all, per port */
    /* data packets sent round a loop instead of dropped (a run's choice); those whose TTL ran
     * out, per switch (what its kernel counts) and in all */
    int loops;
    uint64_t looped, expired_total, loop_drops;
    uint64_t *expired;
    /* per switch: the packets it sent itself, and those of them not TCP that came back to it
     * round a loop (its kernel drops them as martians; its nftables counter counts them) */
    uint64_t *own_sent, *returned;
    uint64_t returned_total;
    int sending_repeat; /* send_loop sends a repeat: counted as one, followed by no packet */
} run;

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static void add(capture *c, const frame *f)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->f = realloc(c->f, c->cap * sizeof *c->f);
        cr_assert(c->f);
    }
    c->f[c->n++] = *f;
}

static int by_time(const void *a, const void *b)
{
    const frame *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static void put16(uint8_t *b, unsigned v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
    put16(b, v >> 16);
    put16(b + 2, v & 0xffff);
}

/* An Ethernet pcap of c's frames, in time order. */
static void write_pcap(const char *path, capture *c)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    const uint32_t gh[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1};
    fwrite(gh, 4, 1, f);
    uint16_t ver[2] = {2, 4};
    fwrite(ver, 2, 2, f);
    fwrite(&gh[2], 4, 4, f);
    if (c->n) /* an empty capture has no frames to sort (and c->f is NULL) */
        qsort(c->f, c->n, sizeof *c->f, by_time);
    for (size_t i = 0; i < c->n; i++) {
        const frame *x = &c->f[i];
        uint8_t b[14 + 40];
        memset(b, 0, sizeof b);
        memset(b, 0x02, 6); /* the destination: nobody checks it */
        memcpy(b + 6, x->mac, 6);
        put16(b + 12, 0x0800);
        uint8_t *ip = b + 14;
        ip[0] = 0x45;
        put16(ip + 2, 40u + x->payload);
        put16(ip + 4, x->ip_id);
        put16(ip + 6, 0x4000);
        ip[8] = x->ttl;
        ip[9] = x->proto ? x->proto : 6;
        put32(ip + 12, x->src);
        put32(ip + 16, x->dst);
        uint32_t sum = 0;
        for (int j = 0; j < 20; j += 2)
            sum += (uint32_t)ip[j] << 8 | ip[j + 1];
        while (sum >> 16)
            sum = (sum & 0xffff) + (sum >> 16);
        put16(ip + 10, ~sum & 0xffff);
        uint8_t *tcp = ip + 20;
        put16(tcp, x->sport);
        put16(tcp + 2, x->dport);
        put32(tcp + 4, x->seq);
        put32(tcp + 8, x->ack);
        tcp[12] = 5 << 4;
        tcp[13] = x->flags;
        put16(tcp + 14, 65535);
        uint32_t rec[4] = {(uint32_t)(x->t / 1000000000), (uint32_t)(x->t % 1000000000 / 1000),
                           sizeof b, 14u + 40u + x->payload};
        fwrite(rec, 4, 4, f);
        fwrite(b, 1, sizeof b, f); /* the payload is not captured (snap length 54) */
    }
    cr_assert_eq(fclose(f), 0);
}

/* A shortest path from host a to host b, chosen at random among them. */
static path route(run *r, uint32_t a, uint32_t b)
{
    uint32_t sa, pa, sb, pb;
    qr_topology_host_attach(r->t, a, &sa, &pa);
    qr_topology_host_attach(r->t, b, &sb, &pb);
    int dist[64];
    for (uint32_t s = 0; s < r->switches; s++)
        dist[s] = -1;
    uint32_t queue[64], head = 0, tail = 0;
    dist[sb] = 0;
    queue[tail++] = sb;
    while (head < tail) {
        uint32_t s = queue[head++];
        for (uint32_t p = 0; p < qr_topology_ports(r->t, s); p++) {
            qr_node_kind k;
            uint32_t peer, pp;
            if (qr_topology_link(r->t, s, p, &k, &peer, &pp) || k == QR_NODE_HOST ||
                dist[peer] >= 0)
                continue;
            dist[peer] = dist[s] + 1;
            queue[tail++] = peer;
        }
    }
    path x = {0};
    uint32_t s = sa, in = pa;
    for (;;) {
        x.sw[x.n] = s;
        x.in[x.n] = in;
        if (s == sb) {
            x.out[x.n++] = pb;
            return x;
        }
        uint32_t next[K], next_in[K], m = 0;
        for (uint32_t p = 0; p < qr_topology_ports(r->t, s); p++) {
            qr_node_kind k;
            uint32_t peer, pp;
            if (!qr_topology_link(r->t, s, p, &k, &peer, &pp) && k != QR_NODE_HOST &&
                dist[peer] == dist[s] - 1) {
                next[m] = p;
                next_in[m++] = pp;
            }
        }
        cr_assert_gt(m, 0);
        uint32_t c = rnd(&r->seed) % m, peer, pp;
        qr_node_kind k;
        qr_topology_link(r->t, s, next[c], &k, &peer, &pp);
        x.out[x.n++] = next[c];
        s = peer;
        in = next_in[c];
    }
}

/* Packet f leaves its sender at f->t along p: its sighting at every port it crosses, and at its
 * receiver; dropped at hop `drop` (p.n: not dropped), after arriving there. */
static void send(run *r, frame f, const path *p, uint32_t from, uint32_t to, uint32_t drop)
{
    qr_fabric_mac((qr_node){QR_NODE_HOST, from}, 0, f.mac);
    f.ttl = 64;
    add(&r->host_cap[from], &f);
    r->packets++;
    for (uint32_t h = 0; h < p->n; h++) {
        f.t += 2 * US; /* the wire, and the capture's stamp */
        size_t in = (size_t)p->sw[h] * K + p->in[h], out = (size_t)p->sw[h] * K + p->out[h];
        add(&r->port_cap[in], &f);
        r->in[in]++;
        r->hops++;
        if (h == drop) {
            r->qdisc[out]++;
            r->planted++;
            return;
        }
        f.t += 3 * US;
        f.ttl--;
        qr_fabric_mac(qr_topology_switch_node(r->t, p->sw[h]), p->out[h], f.mac);
        add(&r->port_cap[out], &f);
        r->out[out]++;
    }
    f.t += 2 * US;
    add(&r->host_cap[to], &f);
    r->delivered++;
}

/* The port of switch sw that leads to switch peer (UINT32_MAX: none). */
static uint32_t port_to(run *r, uint32_t sw, uint32_t peer)
{
    for (uint32_t p = 0; p < K; p++) {
        qr_node_kind k;
        uint32_t x, pp;
        if (!qr_topology_link(r->t, sw, p, &k, &x, &pp) && k != QR_NODE_HOST && x == peer)
            return p;
    }
    return UINT32_MAX;
}

/* The switch at switch sw's lowest port that leads to one. */
static uint32_t first_neighbour(const run *r, uint32_t sw)
{
    for (uint32_t q = 0; q < K; q++) {
        qr_node_kind k;
        uint32_t x, pp;
        if (!qr_topology_link(r->t, sw, q, &k, &x, &pp) && k != QR_NODE_HOST)
            return x;
    }
    cr_assert_fail("s%u has no neighbour switch", sw);
    return UINT32_MAX;
}

/* Packet f sent along p up to its hop `at`, whose switch sends it to a neighbour switch that sends
 * it back, and so on until its TTL runs out (it arrives with 1: dropped there, before any queue),
 * or a queue drops it as it leaves for the `drop_lap`th time in the loop (0: none). */
static void send_loop(run *r, frame f, const path *p, uint32_t from, uint32_t at, uint32_t drop_lap)
{
    qr_fabric_mac((qr_node){QR_NODE_HOST, from}, 0, f.mac);
    f.ttl = 64;
    add(&r->host_cap[from], &f);
    /* another protocol's or a repeat: no recorded packet, only the kernel's count */
    int tcp = !f.proto && !r->sending_repeat;
    r->packets += tcp;
    r->looped += tcp;
    r->repeats += r->sending_repeat;
    uint32_t sw = p->sw[0], in = p->in[0];
    for (uint32_t h = 0, lap = 0;; h++) {
        f.t += 2 * US;
        size_t qi = (size_t)sw * K + in;
        add(&r->port_cap[qi], &f);
        r->repeat_frames += r->sending_repeat;
        r->in[qi] += tcp;
        r->hops += tcp;
        if (f.ttl <= 1) {
            r->expired[sw]++;
            r->expired_total += tcp;
            return;
        }
        uint32_t out, next, next_in;
        if (h < at) {
            out = p->out[h];
            next = p->sw[h + 1];
            next_in = p->in[h + 1];
        } else { /* the loop: from the hop's switch to its first neighbour switch and back */
            next = sw == p->sw[at] ? first_neighbour(r, p->sw[at]) : p->sw[at];
            out = port_to(r, sw, next);
            next_in = port_to(r, next, sw);
            cr_assert_neq(out, UINT32_MAX);
            if (++lap == drop_lap) {
                r->qdisc[(size_t)sw * K + out]++;
                r->planted++;
                r->loop_drops++;
                return;
            }
        }
        /* round the loop it waits in the loop's queues, which it fills: ~60 laps of 15 ms,
         * longer than any one queue holds, seen all along */
        f.t += h < at ? 3 * US : 15000 * US;
        f.ttl--;
        qr_fabric_mac(qr_topology_switch_node(r->t, sw), out, f.mac);
        add(&r->port_cap[(size_t)sw * K + out], &f);
        r->repeat_frames += r->sending_repeat;
        r->out[(size_t)sw * K + out] += tcp;
        sw = next;
        in = next_in;
    }
}

/* An ICMP answer switch a sends to host dst at t from its address towards its neighbour switch
 * nb, sent there by a wrong route and straight back: a comes back to a with a's own address as
 * its source, and a's kernel drops it as a martian. */
static void send_back(run *r, uint32_t a, uint32_t nb, uint32_t dst, int64_t t)
{
    uint32_t pa = port_to(r, a, nb), pn = port_to(r, nb, a);
    size_t n_cables;
    const qr_fabric_cable *cb = qr_fabric_cables(r->fab, &n_cables);
    frame f = {.t = t, .dst = qr_topology_host_addr(r->t, dst), .ttl = 64, .proto = 1};
    for (size_t i = 0; i < n_cables; i++)
        for (int j = 0; j < 2; j++) {
            const qr_fabric_end *e = j ? &cb[i].b : &cb[i].a;
            if (e->ns == qr_fabric_switch_ns(r->fab, a) && e->port == pa)
                f.src = e->addr;
        }
    cr_assert_neq(f.src, 0);
    r->own_sent[a]++;
    qr_fabric_mac(qr_topology_switch_node(r->t, a), pa, f.mac);
    add(&r->port_cap[(size_t)a * K + pa], &f); /* leaves a */
    f.t += 2 * US;
    add(&r->port_cap[(size_t)nb * K + pn], &f); /* reaches nb */
    f.t += 3 * US;
    f.ttl--;
    qr_fabric_mac(qr_topology_switch_node(r->t, nb), pn, f.mac);
    add(&r->port_cap[(size_t)nb * K + pn], &f); /* leaves nb */
    f.t += 2 * US;
    add(&r->port_cap[(size_t)a * K + pa], &f); /* back at a */
    r->returned[a]++;
    r->returned_total++;
}

/* Packet f sent again alike by its sender `at` after the first: seen at every port and at its
 * receiver, but the recording (the import's dedup) keeps one. */
static void send_repeat(run *r, frame f, int64_t at, const path *p, uint32_t from, uint32_t to,
                        uint32_t drop)
{
    qr_fabric_mac((qr_node){QR_NODE_HOST, from}, 0, f.mac);
    f.t += at;
    f.ttl = 64;
    add(&r->host_cap[from], &f);
    r->repeats++;
    for (uint32_t h = 0; h < p->n; h++) {
        f.t += 2 * US;
        add(&r->port_cap[(size_t)p->sw[h] * K + p->in[h]], &f);
        if (h == drop) { /* a queue dropped the repeat: its qdisc counts it */
            r->repeat_frames++;
            r->qdisc[(size_t)p->sw[h] * K + p->out[h]]++;
            r->qdisc_repeat[(size_t)p->sw[h] * K + p->out[h]]++;
            r->repeat_drops++;
            return;
        }
        f.t += 3 * US;
        f.ttl--;
        qr_fabric_mac(qr_topology_switch_node(r->t, p->sw[h]), p->out[h], f.mac);
        add(&r->port_cap[(size_t)p->sw[h] * K + p->out[h]], &f);
        r->repeat_frames += 2;
    }
    f.t += 2 * US;
    add(&r->host_cap[to], &f);
}

/* A wrong route on a switch of a's path to b sends every packet to b round a loop: the SYN f and
 * the two its sender's timer sends again (1 s, then 2 s later), a packet that is not TCP (followed
 * by no one, counted by the kernel where its TTL runs out), and the switch's answer to it, sent
 * back to it. */
static void syn_round_a_loop(run *r, frame f, const path *ab, uint32_t a, uint32_t b)
{
    uint32_t at = rnd(&r->seed) % ab->n;
    int64_t t = f.t;
    for (int k = 0; k < 3; k++) {
        f.t = t + (k ? (1000000LL << (k - 1)) * US : 0);
        f.ip_id = (uint16_t)(f.ip_id + (k > 0));
        send_loop(r, f, ab, a, at, rnd(&r->seed) % 3 == 0 ? 1 + rnd(&r->seed) % 40 : 0);
    }
    f.proto = 1;
    f.t = t + 10 * US;
    send_loop(r, f, ab, a, at, 0);
    send_back(r, ab->sw[at], first_neighbour(r, ab->sw[at]), b, t + 20 * US);
}

/* Connection i from host a to host b at t0: a handshake, `segs` data segments each ACKed, some
 * dropped on the way and sent again 1 ms later, then both FINs. */
static void connection(run *r, uint32_t i, uint32_t a, uint32_t b, int64_t t0, uint32_t segs)
{
    path ab = route(r, a, b), ba = route(r, b, a);
    uint32_t A = qr_topology_host_addr(r->t, a), B = qr_topology_host_addr(r->t, b);
    uint16_t pa = (uint16_t)(40000 + i), pb = 5001;
    cr_assert_lt(r->n_ways + 2, 64);
    r->ways[r->n_ways++] = (way){a, b, pa, pb, ab};
    r->ways[r->n_ways++] = (way){b, a, pb, pa, ba};
    uint16_t ida = (uint16_t)(rnd(&r->seed) * 2), idb = (uint16_t)(rnd(&r->seed) * 2);
    uint32_t isa = rnd(&r->seed) << 16, isb = rnd(&r->seed) << 8;
    int64_t t = t0;
    frame f = {0};
#define PKT(T, FROM_A, SEQ, ACK, FL, PAY)                                                          \
    (frame){.t = (T),                                                                              \
            .src = (FROM_A) ? A : B,                                                               \
            .dst = (FROM_A) ? B : A,                                                               \
            .sport = (FROM_A) ? pa : pb,                                                           \
            .dport = (FROM_A) ? pb : pa,                                                           \
            .ip_id = (FROM_A) ? ida++ : idb++,                                                     \
            .payload = (PAY),                                                                      \
            .seq = (SEQ),                                                                          \
            .ack = (ACK),                                                                          \
            .flags = (FL)}
    f = PKT(t, 1, isa, 0, QR_TCP_SYN, 0);
    if (r->loops && i % 3 == 1) {
        syn_round_a_loop(r, f, &ab, a, b);
        return;
    }
    send(r, f, &ab, a, b, ab.n);
    t += 100 * US;
    f = PKT(t, 0, isb, isa + 1, QR_TCP_SYN | QR_TCP_ACK, 0);
    if (r->repeat_synack)
        f.ip_id = 0;
    if (r->loops && r->repeat_synack && i % 3 == 2) {
        /* a wrong route sends what goes to a round a loop: the SYN-ACK and its repeat (sent
         * alike 4 us later, kept once by the import) go round until their TTLs run out */
        uint32_t at = rnd(&r->seed) % ba.n;
        send_loop(r, f, &ba, b, at, 0);
        r->sending_repeat = 1;
        f.t += 4 * US;
        send_loop(r, f, &ba, b, at, 0);
        r->sending_repeat = 0;
        return;
    }
    send(r, f, &ba, b, a, ba.n);
    if (r->repeat_synack)
        send_repeat(r, f, 4 * US, &ba, b, a, rnd(&r->seed) % 2 ? rnd(&r->seed) % ba.n : ba.n);
    t += 100 * US;
    f = PKT(t, 1, isa + 1, isb + 1, QR_TCP_ACK, 0);
    send(r, f, &ab, a, b, ab.n);
    uint32_t resend[64], n_resend = 0;
    for (uint32_t k = 0; k < segs; k++) {
        t += 100 * US;
        uint32_t seq = isa + 1 + 1000 * k;
        /* one in five data segments dropped somewhere on its path, never the first (so its
         * direction's port at every switch is known from another packet) */
        uint32_t drop = k > 0 && rnd(&r->seed) % 5 == 0 ? rnd(&r->seed) % ab.n : ab.n;
        f = PKT(t, 1, seq, isb + 1, QR_TCP_ACK, 1000);
        send(r, f, &ab, a, b, drop);
        if (drop < ab.n)
            resend[n_resend++] = seq;
        else {
            f = PKT(t + 50 * US, 0, isb + 1, seq + 1000, QR_TCP_ACK, 0);
            send(r, f, &ba, b, a, ba.n);
        }
    }
    for (uint32_t k = 0; k < n_resend; k++) {
        t += 1000 * US;
        f = PKT(t, 1, resend[k], isb + 1, QR_TCP_ACK, 1000);
        send(r, f, &ab, a, b, ab.n);
        f = PKT(t + 50 * US, 0, isb + 1, resend[k] + 1000, QR_TCP_ACK, 0);
        send(r, f, &ba, b, a, ba.n);
    }
    uint32_t end = isa + 1 + 1000 * segs;
    t += 100 * US;
    f = PKT(t, 1, end, isb + 1, QR_TCP_FIN | QR_TCP_ACK, 0);
    send(r, f, &ab, a, b, ab.n);
    t += 100 * US;
    f = PKT(t, 0, isb + 1, end + 1, QR_TCP_FIN | QR_TCP_ACK, 0);
    send(r, f, &ba, b, a, ba.n);
    t += 100 * US;
    f = PKT(t, 1, end + 1, isb + 2, QR_TCP_ACK, 0);
    send(r, f, &ab, a, b, ab.n);
#undef PKT
}

static void run_make_with(run *r, unsigned seed, uint32_t conns, int repeat_synack, int loops)
{
    memset(r, 0, sizeof *r);
    r->seed = seed;
    r->repeat_synack = repeat_synack;
    r->loops = loops;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create(&r->sc), QR_OK);
    cr_assert_eq(qr_scenario_load_string(r->sc,
                                         "[topology]\nkind = fattree\nk = 4\n[links]\nrate = "
                                         "20Mbps\ndelay = 1us\n",
                                         "test", ".", err),
                 QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(r->sc, err), QR_OK, "%s", err);
    cr_assert_eq(qr_fabric_plan(qr_scenario_config(r->sc), &r->fab, err), QR_OK, "%s", err);
    r->t = qr_fabric_topology(r->fab);
    r->hosts = qr_fabric_hosts(r->fab);
    r->switches = qr_fabric_switches(r->fab);
    r->host_cap = calloc(r->hosts, sizeof *r->host_cap);
    r->port_cap = calloc((size_t)r->switches * K, sizeof *r->port_cap);
    r->qdisc = calloc((size_t)r->switches * K, sizeof *r->qdisc);
    r->qdisc_repeat = calloc((size_t)r->switches * K, sizeof *r->qdisc_repeat);
    r->in = calloc((size_t)r->switches * K, sizeof *r->in);
    r->out = calloc((size_t)r->switches * K, sizeof *r->out);
    r->expired = calloc(r->switches, sizeof *r->expired);
    r->own_sent = calloc(r->switches, sizeof *r->own_sent);
    r->returned = calloc(r->switches, sizeof *r->returned);
    for (uint32_t i = 0; i < conns; i++) {
        uint32_t a = rnd(&r->seed) % r->hosts, b = rnd(&r->seed) % (r->hosts - 1);
        b += b >= a;
        connection(r, i, a, b, 1000000000LL + (int64_t)i * 37 * US, 3 + rnd(&r->seed) % 12);
    }
}

static void run_make(run *r, unsigned seed, uint32_t conns)
{
    run_make_with(r, seed, conns, 0, 0);
}

static void run_free(run *r)
{
    for (uint32_t h = 0; h < r->hosts; h++)
        free(r->host_cap[h].f);
    for (size_t q = 0; q < (size_t)r->switches * K; q++)
        free(r->port_cap[q].f);
    free(r->host_cap);
    free(r->port_cap);
    free(r->qdisc);
    free(r->qdisc_repeat);
    free(r->in);
    free(r->out);
    free(r->expired);
    free(r->own_sent);
    free(r->returned);
    qr_fabric_destroy(r->fab);
    qr_scenario_destroy(r->sc);
}

/* The captures written and the hosts' imported into dir/rec (as the testbed does). */
static void run_write(run *r)
{
    char path[300], cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/cap'", dir, dir);
    cr_assert_eq(system(cmd), 0);
    for (uint32_t sw = 0; sw < r->switches; sw++)
        for (uint32_t p = 0; p < K; p++) {
            snprintf(path, sizeof path, "%s/cap/s%u-p%u.pcap", dir, sw, p);
            write_pcap(path, &r->port_cap[sw * K + p]);
        }
    char(*caps)[300] = calloc(r->hosts, sizeof *caps);
    const char **capv = calloc(r->hosts, sizeof *capv);
    qr_host_map_entry *map = calloc(r->hosts, sizeof *map);
    for (uint32_t h = 0; h < r->hosts; h++) {
        snprintf(caps[h], sizeof caps[h], "%s/cap/h%u.pcap", dir, h);
        write_pcap(caps[h], &r->host_cap[h]);
        capv[h] = caps[h];
        uint32_t a = qr_topology_host_addr(r->t, h);
        char addr[32];
        snprintf(addr, sizeof addr, "%u.%u.%u.%u", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
        cr_assert_eq(qr_addr_parse(addr, map[h].addr), QR_OK);
        map[h].host = h;
        map[h].line = h + 1;
        snprintf(map[h].capture, sizeof map[h].capture, "h%u.pcap", h);
    }
    qr_import_cfg cfg = {0};
    cfg.captures = capv;
    cfg.n_captures = r->hosts;
    cfg.map = map;
    cfg.n_map = r->hosts;
    cfg.clock = QR_IMPORT_CLOCK_NONE;
    cfg.network_known = 1;
    qr_import_report *rep = NULL;
    char err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/rec", dir);
    cr_assert_eq(qr_import_run(&cfg, r->sc, path, &rep, err), QR_OK, "%s", err);
    cr_assert_eq(rep->packets, r->packets, "the import holds every packet sent");
    qr_import_report_free(rep);
    free(caps);
    free(capv);
    free(map);
}

static int truth(run *r, qr_fabric_truth_report *rep, char *err)
{
    char rec[300], cap[300];
    snprintf(rec, sizeof rec, "%s/rec", dir);
    snprintf(cap, sizeof cap, "%s/cap", dir);
    static const uint64_t none[64] = {0};
    qr_fabric_truth_in in = {.rec_dir = rec,
                             .capture_dir = cap,
                             .fab = r->fab,
                             .qdisc_drops = r->qdisc,
                             .fault_drops = none,
                             .own_sent = r->own_sent,
                             .own_taken = none,
                             .ttl_expired = r->expired,
                             .own_returned = r->returned};
    memset(rep, 0, sizeof *rep);
    return qr_fabric_truth(&in, rep, err);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-fabric-truth-%d", (int)getpid());
}

static void teardown(void)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(fabric_truth, .init = setup, .fini = teardown);

/* A run made, its captures written and its truth found, which must succeed. */
static void made(run *r, qr_fabric_truth_report *rep, unsigned seed, uint32_t conns, int repeat,
                 int loops)
{
    run_make_with(r, seed, conns, repeat, loops);
    run_write(r);
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(truth(r, rep, err), QR_OK, "seed %u: %s", seed, err);
}

/* What the truth found against what the run planted: every packet delivered, dropped by the queue
 * it was planted at or gone round a loop until its TTL ran out, every hop, every port's counts. */
static void check_counts(const run *r, const qr_fabric_truth_report *rep, unsigned seed)
{
    cr_assert_eq(rep->packets, r->packets, "seed %u", seed);
    cr_assert_eq(rep->delivered, r->delivered, "seed %u", seed);
    cr_assert_eq(rep->queue_drops, r->planted, "seed %u", seed);
    cr_assert_eq(rep->expired, r->expired_total, "seed %u", seed);
    cr_assert_eq(rep->fault_drops, 0);
    cr_assert_eq(rep->unknown_port_drops, 0);
    cr_assert_eq(rep->hops, r->hops, "seed %u", seed);
    cr_assert_eq(rep->packets, rep->delivered + rep->queue_drops + rep->expired,
                 "conservation, seed %u", seed);
    for (uint32_t q = 0; q < rep->n_ports; q++) {
        cr_assert_eq(rep->ports[q].queue_drops, r->qdisc[q] - r->qdisc_repeat[q],
                     "seed %u, s%u port %u", seed, q / K, q % K);
        cr_assert_eq(rep->ports[q].in, r->in[q], "seed %u, s%u port %u", seed, q / K, q % K);
        cr_assert_eq(rep->ports[q].out, r->out[q], "seed %u, s%u port %u", seed, q / K, q % K);
    }
}

Test(fabric_truth, finds_every_planted_drop_path_and_count_over_seeds)
{
    for (unsigned seed = 1; seed <= 6; seed++) {
        run r;
        qr_fabric_truth_report rep;
        made(&r, &rep, seed, 6 + seed, 0, 0);
        cr_assert_gt(r.planted, 0, "seed %u plants drops", seed);
        check_counts(&r, &rep, seed);
        /* every direction's path is the one its packets took */
        cr_assert_eq(rep.n_dirs, r.n_ways, "seed %u", seed);
        for (size_t d = 0; d < rep.n_dirs; d++) {
            const way *w = NULL;
            for (size_t j = 0; j < r.n_ways && !w; j++)
                if (r.ways[j].src == rep.dir_src[d] && r.ways[j].dst == rep.dir_dst[d] &&
                    r.ways[j].sport == rep.dir_sport[d] && r.ways[j].dport == rep.dir_dport[d])
                    w = &r.ways[j];
            cr_assert(w, "seed %u: direction %zu is one the captures hold", seed, d);
            cr_assert_eq(rep.dir_hops[d], w->p.n, "seed %u: direction %zu", seed, d);
            for (uint32_t h = 0; h < w->p.n; h++)
                cr_assert_eq(rep.dir_path[d][h], w->p.sw[h], "seed %u: direction %zu, hop %u", seed,
                             d, h);
        }
        qr_fabric_truth_report_free(&rep);
        run_free(&r);
    }
}

/* Linux sends a SYN-ACK with IP ID 0 from its timer and again for a resent SYN; within a
 * millisecond the two are the same bytes, which the import keeps once as it keeps a capture's
 * copies. The truth reads the hosts' captures the same way and counts the repeats' sightings
 * apart (the testbed once refused such runs: "the recording is not of this capture"), and a
 * repeat a queue dropped among the queue drops its qdisc counted. */
Test(fabric_truth, a_packet_sent_twice_alike_is_counted_apart_not_refused)
{
    uint64_t repeat_drops = 0;
    for (unsigned seed = 21; seed <= 23; seed++) {
        run r;
        qr_fabric_truth_report rep;
        made(&r, &rep, seed, 5, 1, 0);
        cr_assert_eq(r.repeats, 5);
        cr_assert_eq(rep.repeat_sends, r.repeats, "seed %u", seed);
        cr_assert_eq(rep.repeat_frames, r.repeat_frames, "seed %u", seed);
        cr_assert_eq(rep.repeat_queue_drops, r.repeat_drops, "seed %u", seed);
        repeat_drops += r.repeat_drops;
        check_counts(&r, &rep, seed);
        qr_fabric_truth_report_free(&rep);
        run_free(&r);
    }
    cr_assert_gt(repeat_drops, 0, "a queue drops some repeats: its qdisc counts them");
}

/* Packets sent round a routing loop: each lap's sightings are told apart by their TTL, the truth
 * follows every packet until its TTL runs out (lost outside the queues: expired, not a drop) or a
 * queue in the loop drops it, counts every lap at every port, and holds the switches' expiries
 * against their kernels' counters (what the testbed passes: Ip InHdrErrors). */
Test(fabric_truth, follows_packets_round_a_loop_until_their_ttl_runs_out)
{
    uint64_t loop_drops = 0;
    for (unsigned seed = 31; seed <= 36; seed++) {
        run r;
        qr_fabric_truth_report rep;
        char err[QR_ERRBUF_SIZE];
        made(&r, &rep, seed, 6 + seed % 4, seed % 2, 1);
        loop_drops += r.loop_drops;
        cr_assert_gt(r.expired_total, 0, "seed %u sends packets round a loop", seed);
        check_counts(&r, &rep, seed);
        cr_assert_eq(rep.returned, r.returned_total, "seed %u", seed);
        cr_assert_eq(rep.repeat_sends, r.repeats, "seed %u", seed);
        cr_assert_eq(rep.repeat_frames, r.repeat_frames, "seed %u", seed);
        cr_assert_gt(rep.other_expired, 0, "seed %u: not TCP, round the loop", seed);
        /* a kernel that counted one expiry more than the captures show: an error naming it */
        uint32_t sw = 0;
        while (!r.expired[sw])
            sw++;
        r.expired[sw]++;
        char want[64];
        snprintf(want, sizeof want, "s%u: its captures show %" PRIu64 " packets whose TTL", sw,
                 r.expired[sw] - 1);
        qr_fabric_truth_report_free(&rep);
        cr_assert_eq(truth(&r, &rep, err), QR_EVALUE, "seed %u", seed);
        cr_assert(strstr(err, want) && strstr(err, "InHdrErrors"), "%s", err);
        r.expired[sw]--;
        /* an nftables counter of packets back from their own switch that disagrees, the same */
        sw = 0;
        while (!r.returned[sw])
            sw++;
        r.returned[sw]++;
        snprintf(want, sizeof want, "s%u: its captures show %" PRIu64 " packets that are not", sw,
                 r.returned[sw] - 1);
        cr_assert_eq(truth(&r, &rep, err), QR_EVALUE, "seed %u", seed);
        cr_assert(strstr(err, want) && strstr(err, "coming back"), "%s", err);
        run_free(&r);
    }
    cr_assert_gt(loop_drops, 0, "some packets are dropped by a queue in the loop");
}

Test(fabric_truth, a_counter_that_disagrees_names_the_switch)
{
    run r;
    run_make(&r, 11, 8);
    run_write(&r);
    size_t q = 0;
    while (!r.qdisc[q])
        q++;
    r.qdisc[q]--; /* the qdisc counted one drop fewer than the captures show */
    qr_fabric_truth_report rep;
    char err[QR_ERRBUF_SIZE], want[64];
    cr_assert_eq(truth(&r, &rep, err), QR_EVALUE);
    snprintf(want, sizeof want, "s%zu: its captures show", q / K);
    cr_assert(strstr(err, want), "%s", err);
    char truth_dir[300];
    struct stat st;
    snprintf(truth_dir, sizeof truth_dir, "%s/rec/truth", dir);
    cr_assert_neq(stat(truth_dir, &st), 0, "no truth is written from inconsistent captures");
    run_free(&r);
}

Test(fabric_truth, a_capture_missing_a_frame_is_an_error_naming_it)
{
    run r;
    run_make(&r, 12, 8);
    /* a frame that arrived at a switch other than a host's edge switch, lost from its capture */
    size_t q = 0, victim = 0;
    for (; q < (size_t)r.switches * K; q++) {
        qr_node_kind k;
        uint32_t peer, pp;
        qr_topology_link(r.t, (uint32_t)(q / K), (uint32_t)(q % K), &k, &peer, &pp);
        capture *c = &r.port_cap[q];
        for (victim = 0; k != QR_NODE_HOST && victim < c->n; victim++) {
            qr_node owner;
            uint32_t op;
            if (qr_fabric_mac_owner(c->f[victim].mac, &owner, &op) &&
                !(owner.kind != QR_NODE_HOST && owner.index == q / K && op == q % K))
                break; /* arriving */
        }
        if (k != QR_NODE_HOST && victim < c->n)
            break;
    }
    cr_assert_lt(q, (size_t)r.switches * K);
    capture *c = &r.port_cap[q];
    memmove(&c->f[victim], &c->f[victim + 1], (c->n - victim - 1) * sizeof *c->f);
    c->n--;
    run_write(&r);
    qr_fabric_truth_report rep;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(truth(&r, &rep, err), QR_EVALUE);
    cr_assert(strstr(err, "never reached the switch it leads to: a capture is incomplete"), "%s",
              err);
    run_free(&r);
}
