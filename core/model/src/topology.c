/* FatTree and star structure, addressing, and per-flow ECMP routing. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/topology.h"
#include "qreplay/units.h"

#include "internal.h"

struct qr_topology {
    int star;
    uint32_t k, half; /* FatTree arity and k/2; for the star k = hosts */
    uint32_t hosts, edges, aggs, cores;
};

int qr_topology_fattree(qr_topology **out, int k)
{
    if (!out || k < 2 || k > 64 || k % 2)
        return QR_EINVAL;
    qr_topology *t = calloc(1, sizeof *t);
    if (!t)
        return QR_ENOMEM;
    t->k = (uint32_t)k;
    t->half = (uint32_t)k / 2;
    t->hosts = t->k * t->k * t->k / 4;
    t->edges = t->aggs = t->k * t->half;
    t->cores = t->half * t->half;
    *out = t;
    return QR_OK;
}

int qr_topology_star(qr_topology **out, int hosts)
{
    if (!out || hosts < 2 || hosts > 63)
        return QR_EINVAL;
    qr_topology *t = calloc(1, sizeof *t);
    if (!t)
        return QR_ENOMEM;
    t->star = 1;
    t->k = (uint32_t)hosts;
    t->hosts = (uint32_t)hosts;
    t->edges = 1;
    *out = t;
    return QR_OK;
}

void qr_topology_destroy(qr_topology *t)
{
    free(t);
}

uint32_t qr_topology_hosts(const qr_topology *t)
{
    return t->hosts;
}

uint32_t qr_topology_switches(const qr_topology *t)
{
    return t->edges + t->aggs + t->cores;
}

uint32_t qr_topology_ports(const qr_topology *t, uint32_t sw)
{
    return sw < qr_topology_switches(t) ? t->k : 0;
}

qr_node_kind qr_topology_switch_kind(const qr_topology *t, uint32_t sw)
{
    if (sw < t->edges)
        return QR_NODE_EDGE;
    return sw < t->edges + t->aggs ? QR_NODE_AGG : QR_NODE_CORE;
}

/* pod, edge and index of a host */
static void host_pos(const qr_topology *t, uint32_t h, uint32_t *pod, uint32_t *edge, uint32_t *i)
{
    if (t->star) {
        *pod = 0;
        *edge = 0;
        *i = h;
        return;
    }
    *i = h % t->half;
    *edge = (h / t->half) % t->half;
    *pod = h / (t->half * t->half);
}

uint32_t qr_topology_host_addr(const qr_topology *t, uint32_t host)
{
    uint32_t pod, edge, i;
    host_pos(t, host, &pod, &edge, &i);
    return 10u << 24 | pod << 16 | edge << 8 | (4 * i + 2);
}

int qr_topology_host_of_addr(const qr_topology *t, uint32_t addr, uint32_t *host)
{
    uint32_t pod = (addr >> 16) & 255, edge = (addr >> 8) & 255, last = addr & 255;
    uint32_t per_edge = t->star ? t->hosts : t->half;
    uint32_t edges = t->star ? 1 : t->half, pods = t->star ? 1 : t->k;
    if (addr >> 24 != 10 || last % 4 != 2 || pod >= pods || edge >= edges || last / 4 >= per_edge)
        return QR_ENOTFOUND;
    *host = t->star ? last / 4 : (pod * t->half + edge) * t->half + last / 4;
    return QR_OK;
}

void qr_topology_host_attach(const qr_topology *t, uint32_t host, uint32_t *sw, uint32_t *port)
{
    uint32_t pod, edge, i;
    host_pos(t, host, &pod, &edge, &i);
    *sw = t->star ? 0 : pod * t->half + edge;
    *port = i;
}

int qr_topology_link(const qr_topology *t, uint32_t sw, uint32_t port, qr_node_kind *peer_kind,
                     uint32_t *peer, uint32_t *peer_port)
{
    if (sw >= qr_topology_switches(t) || port >= t->k)
        return QR_EINVAL;
    if (t->star) {
        *peer_kind = QR_NODE_HOST;
        *peer = port;
        *peer_port = 0;
        return QR_OK;
    }
    uint32_t h = t->half;
    switch (qr_topology_switch_kind(t, sw)) {
    case QR_NODE_EDGE: {
        uint32_t pod = sw / h, e = sw % h;
        if (port < h) {
            *peer_kind = QR_NODE_HOST;
            *peer = (pod * h + e) * h + port;
            *peer_port = 0;
        } else {
            *peer_kind = QR_NODE_AGG;
            *peer = t->edges + pod * h + (port - h);
            *peer_port = e;
        }
        return QR_OK;
    }
    case QR_NODE_AGG: {
        uint32_t local = sw - t->edges, pod = local / h, a = local % h;
        if (port < h) {
            *peer_kind = QR_NODE_EDGE;
            *peer = pod * h + port;
            *peer_port = h + a;
        } else {
            *peer_kind = QR_NODE_CORE;
            *peer = t->edges + t->aggs + a * h + (port - h);
            *peer_port = pod;
        }
        return QR_OK;
    }
    default: {
        uint32_t c = sw - t->edges - t->aggs;
        *peer_kind = QR_NODE_AGG;
        *peer = t->edges + port * h + c / h;
        *peer_port = h + c % h;
        return QR_OK;
    }
    }
}

uint64_t qr_flow_hash(const qr_five_tuple *ft, uint32_t sw)
{
    uint64_t x = (uint64_t)ft->src_ip << 32 | ft->dst_ip;
    uint64_t y = (uint64_t)ft->src_port << 32 | (uint64_t)ft->dst_port << 16 | ft->proto;
    uint64_t h = x * 0x9e3779b97f4a7c15ULL ^ (y + 0x632be59bd9b4e019ULL) ^
                 ((uint64_t)sw * 0xd6e8feb86659fd93ULL);
    h ^= h >> 32;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 32;
    return h;
}

int qr_topology_route(const qr_topology *t, uint32_t sw, const qr_five_tuple *ft, uint32_t *port)
{
    uint32_t dst;
    if (sw >= qr_topology_switches(t) || qr_topology_host_of_addr(t, ft->dst_ip, &dst))
        return QR_ENOTFOUND;
    uint32_t pod, edge, i;
    host_pos(t, dst, &pod, &edge, &i);
    if (t->star) {
        *port = i;
        return QR_OK;
    }
    uint32_t h = t->half;
    uint32_t up = h + (uint32_t)(qr_flow_hash(ft, sw) % h);
    switch (qr_topology_switch_kind(t, sw)) {
    case QR_NODE_EDGE: *port = (sw / h == pod && sw % h == edge) ? i : up; return QR_OK;
    case QR_NODE_AGG: *port = ((sw - t->edges) / h == pod) ? edge : up; return QR_OK;
    default: *port = pod; return QR_OK;
    }
}

uint32_t qr_topology_max_hops(const qr_topology *t)
{
    return t->star ? 1 : 5;
}

uint32_t qr_topology_hops(const qr_topology *t, uint32_t a, uint32_t b)
{
    if (a == b)
        return 0;
    if (t->star)
        return 1;
    uint32_t pa, ea, ia, pb, eb, ib;
    host_pos(t, a, &pa, &ea, &ia);
    host_pos(t, b, &pb, &eb, &ib);
    if (pa != pb)
        return 5;
    return ea == eb ? 1 : 3;
}

int64_t qr_unloaded_latency_ns(const qr_topology *t, uint32_t a, uint32_t b, uint32_t ip_len,
                               uint64_t rate_bps, int64_t delay_ns)
{
    if (a == b || rate_bps == 0)
        return 0;
    uint64_t links = qr_topology_hops(t, a, b) + 1;
    unsigned __int128 bits = (unsigned __int128)(ip_len + QR_LINK_OVERHEAD_BYTES) * 8u;
    int64_t tx = (int64_t)(bits * 1000000000u / rate_bps);
    return (int64_t)links * (tx + delay_ns);
}

uint32_t qr_topology_links(const qr_topology *t)
{
    return qr_topology_switches(t) * t->k + t->hosts;
}

uint32_t qr_topology_port_link(const qr_topology *t, uint32_t sw, uint32_t port)
{
    return sw * t->k + port;
}

uint32_t qr_topology_uplink(const qr_topology *t, uint32_t host)
{
    return qr_topology_switches(t) * t->k + host;
}

static qr_node switch_node(const qr_topology *t, uint32_t sw)
{
    return (qr_node){qr_topology_switch_kind(t, sw), sw};
}

int qr_topology_link_ends(const qr_topology *t, uint32_t id, qr_node *from, qr_node *to,
                          uint32_t *port)
{
    uint32_t ports = qr_topology_switches(t) * t->k;
    if (id >= qr_topology_links(t))
        return QR_EINVAL;
    if (id >= ports) {
        uint32_t h = id - ports, sw, p;
        qr_topology_host_attach(t, h, &sw, &p);
        *from = (qr_node){QR_NODE_HOST, h};
        *to = switch_node(t, sw);
        *port = 0;
        return QR_OK;
    }
    uint32_t sw = id / t->k, peer, peer_port;
    qr_node_kind kind;
    *port = id % t->k;
    qr_topology_link(t, sw, *port, &kind, &peer, &peer_port);
    *from = switch_node(t, sw);
    *to = (qr_node){kind, peer};
    return QR_OK;
}

uint32_t qr_topology_link_reverse(const qr_topology *t, uint32_t id)
{
    qr_node from, to;
    uint32_t port;
    if (qr_topology_link_ends(t, id, &from, &to, &port))
        return id;
    if (from.kind == QR_NODE_HOST) {
        uint32_t sw, p;
        qr_topology_host_attach(t, from.index, &sw, &p);
        return qr_topology_port_link(t, sw, p);
    }
    if (to.kind == QR_NODE_HOST)
        return qr_topology_uplink(t, to.index);
    qr_node_kind kind;
    uint32_t peer, peer_port;
    qr_topology_link(t, from.index, port, &kind, &peer, &peer_port);
    return qr_topology_port_link(t, peer, peer_port);
}

const char *qr_topology_node_name(qr_node n, char *buf, size_t size)
{
    snprintf(buf, size, "%c%u", n.kind == QR_NODE_HOST ? 'h' : 's', n.index);
    return buf;
}

const char *qr_topology_link_name(const qr_topology *t, uint32_t id, char *buf, size_t size)
{
    qr_node from, to;
    uint32_t port;
    char a[16], b[16];
    if (qr_topology_link_ends(t, id, &from, &to, &port))
        snprintf(buf, size, "?");
    else
        snprintf(buf, size, "%s>%s", qr_topology_node_name(from, a, sizeof a),
                 qr_topology_node_name(to, b, sizeof b));
    return buf;
}

const char *qr_topology_cable_name(const qr_topology *t, uint32_t id, char *buf, size_t size)
{
    qr_node a, b;
    uint32_t port;
    char an[16], bn[16];
    if (qr_topology_link_ends(t, id, &a, &b, &port)) {
        snprintf(buf, size, "?");
        return buf;
    }
    if (a.kind > b.kind || (a.kind == b.kind && a.index > b.index)) { /* lower end first */
        qr_node x = a;
        a = b;
        b = x;
    }
    snprintf(buf, size, "%s-%s", qr_topology_node_name(a, an, sizeof an),
             qr_topology_node_name(b, bn, sizeof bn));
    return buf;
}

qr_node qr_topology_switch_node(const qr_topology *t, uint32_t sw)
{
    return switch_node(t, sw);
}

/* "sN" or "hN" of this topology into *n; text ends at `end`. */
static int parse_node(const qr_topology *t, const char *text, const char *end, qr_node *n,
                      char *errbuf)
{
    size_t len = (size_t)(end - text);
    char word[32];
    snprintf(word, sizeof word, "%.*s", (int)(len < 31 ? len : 31), text);
    uint64_t v = 0;
    int ok = len >= 2 && len < 12 && (text[0] == 's' || text[0] == 'h');
    for (size_t i = 1; ok && i < len; i++) {
        ok = isdigit((unsigned char)text[i]);
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    if (!ok)
        return qri_err(errbuf, QR_EVALUE, "'%s' is not a node (sN for switch N, hN for host N)",
                       word);
    if (text[0] == 's') {
        if (v >= qr_topology_switches(t))
            return qri_err(errbuf, QR_EVALUE, "no switch %s (the topology has switches s0-s%u)",
                           word, qr_topology_switches(t) - 1);
        *n = switch_node(t, (uint32_t)v);
    } else {
        if (v >= t->hosts)
            return qri_err(errbuf, QR_EVALUE, "no host %s (the topology has hosts h0-h%u)", word,
                           t->hosts - 1);
        *n = (qr_node){QR_NODE_HOST, (uint32_t)v};
    }
    return QR_OK;
}

/* The link from a to b, if they are linked. */
int qr_topology_link_between(const qr_topology *t, qr_node a, qr_node b, uint32_t *id)
{
    if (a.kind == QR_NODE_HOST) {
        uint32_t sw, p;
        qr_topology_host_attach(t, a.index, &sw, &p);
        if (b.kind == QR_NODE_HOST || b.index != sw)
            return QR_ENOTFOUND;
        *id = qr_topology_uplink(t, a.index);
        return QR_OK;
    }
    for (uint32_t p = 0; p < t->k; p++) {
        qr_node_kind kind;
        uint32_t peer, peer_port;
        qr_topology_link(t, a.index, p, &kind, &peer, &peer_port);
        if ((kind == QR_NODE_HOST) == (b.kind == QR_NODE_HOST) && peer == b.index) {
            *id = qr_topology_port_link(t, a.index, p);
            return QR_OK;
        }
    }
    return QR_ENOTFOUND;
}

int qr_topology_link_parse(const qr_topology *t, const char *text, uint32_t ids[2], size_t *n,
                           char *errbuf)
{
    const char *sep = text + strcspn(text, ">-:");
    if (!*sep)
        return qri_err(errbuf, QR_EVALUE,
                       "'%s' is not a link (A>B, A-B for both directions, or sS:P)", text);
    qr_node a, b;
    int rc = parse_node(t, text, sep, &a, errbuf);
    if (rc)
        return rc;
    if (*sep == ':') {
        int64_t port;
        if (a.kind == QR_NODE_HOST)
            return qri_err(errbuf, QR_EVALUE, "'%s': a host has no ports (use hN>sM)", text);
        if (qr_parse_int(sep + 1, 0, (int64_t)t->k - 1, &port, NULL))
            return qri_err(errbuf, QR_EVALUE, "'%s': switch s%u has ports 0-%u", text, a.index,
                           t->k - 1);
        ids[0] = qr_topology_port_link(t, a.index, (uint32_t)port);
        *n = 1;
        return QR_OK;
    }
    rc = parse_node(t, sep + 1, sep + 1 + strlen(sep + 1), &b, errbuf);
    if (rc)
        return rc;
    char an[16], bn[16];
    if (qr_topology_link_between(t, a, b, &ids[0]))
        return qri_err(errbuf, QR_EVALUE, "%s and %s are not linked",
                       qr_topology_node_name(a, an, sizeof an),
                       qr_topology_node_name(b, bn, sizeof bn));
    *n = 1;
    if (*sep == '-') {
        ids[1] = qr_topology_link_reverse(t, ids[0]);
        *n = 2;
    }
    return QR_OK;
}

int qr_topology_path_links(const qr_topology *t, uint32_t src, const qr_five_tuple *ft,
                           uint32_t *links, size_t max, size_t *n)
{
    uint32_t dst, at, port;
    *n = 0;
    if (src >= t->hosts || qr_topology_host_of_addr(t, ft->dst_ip, &dst))
        return QR_EVALUE;
    if (max > 0)
        links[0] = qr_topology_uplink(t, src);
    *n = 1;
    qr_topology_host_attach(t, src, &at, &port);
    for (uint32_t hop = 0; hop <= qr_topology_max_hops(t); hop++) {
        qr_node_kind kind;
        uint32_t peer, peer_port;
        if (qr_topology_route(t, at, ft, &port) ||
            qr_topology_link(t, at, port, &kind, &peer, &peer_port))
            return QR_EVALUE;
        if (*n < max)
            links[*n] = qr_topology_port_link(t, at, port);
        (*n)++;
        if (kind == QR_NODE_HOST)
            return peer == dst ? QR_OK : QR_EVALUE;
        at = peer;
    }
    return QR_EVALUE;
}

void qr_topology_addresses(const qr_topology *t, uint32_t *addr)
{
    uint32_t next = 11u << 24;
    for (uint32_t sw = 0; sw < qr_topology_switches(t); sw++)
        for (uint32_t port = 0; port < qr_topology_ports(t, sw); port++) {
            qr_node_kind kind;
            uint32_t peer, peer_port;
            if (qr_topology_link(t, sw, port, &kind, &peer, &peer_port))
                continue;
            uint32_t l = qr_topology_port_link(t, sw, port);
            if (kind == QR_NODE_HOST) {
                uint32_t h = qr_topology_host_addr(t, peer);
                addr[l] = h - 1;
                addr[qr_topology_uplink(t, peer)] = h;
            } else if (peer > sw) {
                addr[l] = next + 1;
                addr[qr_topology_port_link(t, peer, peer_port)] = next + 2;
                next += 4;
            }
        }
}

int64_t qr_link_tx_ns(uint64_t bytes, uint64_t rate_bps)
{
    if (!rate_bps)
        return 0;
    /* int64x64_t(bits) / rate: the quotient to 64 fraction bits, truncated */
    unsigned __int128 q = ((unsigned __int128)(bytes * 8u) << 64) / rate_bps;
    /* seconds to ns: times 1e9 (exact), then Round(): + 1/2, the integer part */
    unsigned __int128 v = q * 1000000000u + ((unsigned __int128)1 << 63);
    return (int64_t)(v >> 64);
}

int64_t qr_link_release_ns(int64_t arrive_ns, uint64_t ip_bytes, uint64_t rate_bps,
                           int64_t delay_ns, int64_t now_ns, int64_t *late_ns)
{
    if (arrive_ns == QR_ARRIVE_AT_ONCE) {
        *late_ns = 0;
        return now_ns;
    }
    int64_t release =
        arrive_ns - qr_link_tx_ns(ip_bytes + QR_LINK_OVERHEAD_BYTES, rate_bps) - delay_ns;
    *late_ns = release < now_ns ? now_ns - release : 0;
    return release < now_ns ? now_ns : release;
}
