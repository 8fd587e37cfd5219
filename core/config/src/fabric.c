/* The FatTree testbed's plan: namespaces, cables, addresses, routes, faults (fabric.h). */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/common.h"
#include "qreplay/fabric.h"
#include "qreplay/loopfault.h"

#define MAX_ROUTES (QR_FABRIC_MAX_NODES * 8)
#define MAX_CABLES 64

struct qr_fabric {
    qr_topology *topo;
    uint32_t hosts, switches, k;
    uint64_t rate_bps;
    uint64_t seed;
    qr_fabric_cable cables[MAX_CABLES];
    size_t n_cables;
    qr_fabric_route routes[MAX_ROUTES];
    size_t n_routes;
    qr_link_faults *lf;
    qr_fabric_fault faults[QR_LINK_FAULTS_MAX];
    size_t n_faults;
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void qr_fabric_mac(qr_node n, uint32_t port, uint8_t mac[6])
{
    mac[0] = 0x02;
    mac[1] = n.kind == QR_NODE_HOST ? 0 : 1;
    mac[2] = 0;
    mac[3] = (uint8_t)(n.index >> 8);
    mac[4] = (uint8_t)n.index;
    mac[5] = n.kind == QR_NODE_HOST ? 0 : (uint8_t)port;
}

int qr_fabric_mac_owner(const uint8_t mac[6], qr_node *n, uint32_t *port)
{
    if (mac[0] != 0x02 || mac[1] > 1 || mac[2] != 0)
        return 0;
    uint32_t idx = (uint32_t)mac[3] << 8 | mac[4];
    if (mac[1] == 0) {
        if (mac[5])
            return 0;
        *n = (qr_node){QR_NODE_HOST, idx};
        *port = 0;
    } else {
        *n = (qr_node){QR_NODE_EDGE, idx}; /* a switch; its kind is the topology's */
        *port = mac[5];
    }
    return 1;
}

uint32_t qr_fabric_switch_ns(const qr_fabric *f, uint32_t sw)
{
    return f->hosts + sw;
}

static uint32_t node_ns(const qr_fabric *f, qr_node n)
{
    return n.kind == QR_NODE_HOST ? n.index : f->hosts + n.index;
}

static void set_end(const qr_fabric *f, qr_fabric_end *e, qr_node n, uint32_t port,
                    const uint32_t *addr)
{
    e->node = n;
    e->ns = node_ns(f, n);
    e->port = n.kind == QR_NODE_HOST ? 0 : port;
    if (n.kind == QR_NODE_HOST)
        snprintf(e->ifname, sizeof e->ifname, "eth0");
    else
        snprintf(e->ifname, sizeof e->ifname, "p%u", port);
    qr_fabric_mac(n, e->port, e->mac);
    e->addr = n.kind == QR_NODE_HOST ? addr[qr_topology_uplink(f->topo, n.index)]
                                     : addr[qr_topology_port_link(f->topo, n.index, port)];
}

/* The address of the interface at the far end of switch sw's port. */
static uint32_t peer_addr(const qr_fabric *f, uint32_t sw, uint32_t port, const uint32_t *addr)
{
    qr_node_kind pk;
    uint32_t peer, pp;
    qr_topology_link(f->topo, sw, port, &pk, &peer, &pp);
    return pk == QR_NODE_HOST ? addr[qr_topology_uplink(f->topo, peer)]
                              : addr[qr_topology_port_link(f->topo, peer, pp)];
}

/* A host below switch sw (following port 0 down to an edge switch's first host). */
static uint32_t a_host_below(const qr_fabric *f, uint32_t sw)
{
    for (;;) {
        qr_node_kind pk;
        uint32_t peer, pp;
        qr_topology_link(f->topo, sw, 0, &pk, &peer, &pp);
        if (pk == QR_NODE_HOST)
            return peer;
        sw = peer;
    }
}

static int add_route(qr_fabric *f, uint32_t ns, uint32_t prefix, uint8_t plen)
{
    if (f->n_routes >= MAX_ROUTES)
        return -1;
    qr_fabric_route *r = &f->routes[f->n_routes++];
    memset(r, 0, sizeof *r);
    r->ns = ns;
    r->prefix = prefix;
    r->plen = plen;
    return (int)(f->n_routes - 1);
}

static void add_via(qr_fabric *f, int r, uint32_t via, uint32_t port)
{
    qr_fabric_route *x = &f->routes[r];
    if (x->n_via >= QR_FABRIC_MAX_VIA)
        return;
    x->via[x->n_via] = via;
    snprintf(x->dev[x->n_via], QR_FABRIC_IFNAME, "p%u", port);
    x->n_via++;
}

static int plan_routes(qr_fabric *f, const uint32_t *addr)
{
    uint32_t half = f->k / 2;
    for (uint32_t h = 0; h < f->hosts; h++) {
        uint32_t sw, port;
        qr_topology_host_attach(f->topo, h, &sw, &port);
        int r = add_route(f, h, 0, 0);
        if (r < 0)
            return QR_ENOMEM;
        f->routes[r].n_via = 1;
        f->routes[r].via[0] = addr[qr_topology_port_link(f->topo, sw, port)];
        snprintf(f->routes[r].dev[0], QR_FABRIC_IFNAME, "eth0");
    }
    for (uint32_t sw = 0; sw < f->switches; sw++) {
        uint32_t ns = qr_fabric_switch_ns(f, sw);
        qr_node_kind kind = qr_topology_switch_kind(f->topo, sw);
        if (kind == QR_NODE_AGG)
            for (uint32_t p = 0; p < half; p++) { /* each rack of the pod by its /24 */
                qr_node_kind pk;
                uint32_t edge, pp;
                qr_topology_link(f->topo, sw, p, &pk, &edge, &pp);
                uint32_t a = qr_topology_host_addr(f->topo, a_host_below(f, edge));
                int r = add_route(f, ns, a & 0xffffff00u, 24);
                if (r < 0)
                    return QR_ENOMEM;
                add_via(f, r, peer_addr(f, sw, p, addr), p);
            }
        if (kind == QR_NODE_CORE)
            for (uint32_t p = 0; p < f->k; p++) { /* pod p by its /16 */
                qr_node_kind pk;
                uint32_t agg, pp;
                qr_topology_link(f->topo, sw, p, &pk, &agg, &pp);
                uint32_t a = qr_topology_host_addr(f->topo, a_host_below(f, agg));
                int r = add_route(f, ns, a & 0xffff0000u, 16);
                if (r < 0)
                    return QR_ENOMEM;
                add_via(f, r, peer_addr(f, sw, p, addr), p);
            }
        if (kind == QR_NODE_EDGE || kind == QR_NODE_AGG) { /* up, by the kernel's hash */
            int r = add_route(f, ns, 0, 0);
            if (r < 0)
                return QR_ENOMEM;
            for (uint32_t p = half; p < f->k; p++)
                add_via(f, r, peer_addr(f, sw, p, addr), p);
        }
    }
    return 0;
}

/* [faults] loop: each rule a host route (/32) on switch S to its neighbour N, more specific than
 * the fabric's own, as a wrong static route is. */
static int plan_loops(qr_fabric *f, const qr_config *c, const uint32_t *addr, char *errbuf)
{
    qr_loop_rule rules[QR_LOOP_RULES_MAX];
    size_t n = 0;
    char why[QR_ERRBUF_SIZE];
    int rc = qr_loop_rules_parse(c->faults.loop, f->topo, rules, QR_LOOP_RULES_MAX, &n, why);
    if (rc)
        return qri_err(errbuf, rc, "[faults] loop: %s", why);
    for (size_t i = 0; i < n; i++) {
        int r = add_route(f, qr_fabric_switch_ns(f, rules[i].sw),
                          qr_topology_host_addr(f->topo, rules[i].host), 32);
        if (r < 0)
            return QR_ENOMEM;
        add_via(f, r, peer_addr(f, rules[i].sw, rules[i].port, addr), rules[i].port);
    }
    return QR_OK;
}

static int plan_faults(qr_fabric *f, const qr_config *c, char *errbuf)
{
    qr_link_fault_texts texts;
    for (int i = 0; i < 4; i++)
        texts.text[i] = c->faults.link[i];
    int rc = qr_link_faults_create(&f->lf, &texts, f->topo, c->run.seed, errbuf);
    if (rc)
        return rc;
    size_t n = qr_link_faults_count(f->lf);
    uint32_t group = 0;
    for (size_t i = 0; i < n && i < QR_LINK_FAULTS_MAX; i++) {
        uint32_t link;
        const qr_link_fault *lf = qr_link_faults_get(f->lf, i, &link);
        qr_node from, to;
        uint32_t port;
        qr_topology_link_ends(f->topo, link, &from, &to, &port);
        qr_fabric_fault *x = &f->faults[f->n_faults++];
        memset(x, 0, sizeof *x);
        x->fault = (uint32_t)i + 1;
        x->kind = lf->kind;
        x->link = link;
        if (lf->kind == QR_LINK_DELAY)
            return qri_err(errbuf, QR_EVALUE,
                           "[faults] delay: rule '%s': the testbed cannot delay a link (this "
                           "kernel has no netem, and nothing else here adds delay); plant delay "
                           "faults in a simulation (qreplay runtime)",
                           lf->link);
        if (lf->kind == QR_LINK_RATE) {
            x->ns = node_ns(f, from);
            snprintf(x->dev, sizeof x->dev, from.kind == QR_NODE_HOST ? "eth0" : "p%u", port);
            x->rate_bps = lf->rate_bps;
            continue;
        }
        if (from.kind == QR_NODE_HOST) { /* on the ingress of the switch port it reaches */
            uint32_t sw, sp;
            qr_topology_host_attach(f->topo, from.index, &sw, &sp);
            x->ns = qr_fabric_switch_ns(f, sw);
            snprintf(x->dev, sizeof x->dev, "p%u", sp);
            x->hook = QR_FABRIC_HOOK_INGRESS;
        } else {
            x->ns = node_ns(f, from);
            snprintf(x->dev, sizeof x->dev, "p%u", port);
            x->hook = QR_FABRIC_HOOK_EGRESS;
        }
        x->group = ++group;
        double t = lf->share * 1e6 + 0.5;
        x->threshold = t < 1 ? 1 : t > 1e6 ? 1000000u : (uint32_t)t;
        x->hash_seed = (uint32_t)mix64(c->run.seed * 977 + i);
        x->by_addr = lf->by_addr;
    }
    return 0;
}

int qr_fabric_plan(const qr_config *c, qr_fabric **out, char *errbuf)
{
    if (!c || !out)
        return qri_err(errbuf, QR_EINVAL, "fabric plan: NULL argument");
    *out = NULL;
    if (c->topology.kind != QR_TOPO_FATTREE)
        return qri_err(errbuf, QR_EVALUE, "[topology] kind: the testbed's fabric is a fat tree");
    if (c->topology.k < 2 || c->topology.k > QR_FABRIC_MAX_K || c->topology.k % 2)
        return qri_err(errbuf, QR_EVALUE,
                       "[topology] k = %d: the testbed builds fat trees of k = 2 or 4 on this "
                       "machine (k=4: 16 hosts, 20 switches)",
                       c->topology.k);
    qr_fabric *f = calloc(1, sizeof *f);
    if (!f)
        return QR_ENOMEM;
    int rc = qr_topology_fattree(&f->topo, c->topology.k);
    uint32_t *addr = NULL;
    if (!rc) {
        f->k = (uint32_t)c->topology.k;
        f->hosts = qr_topology_hosts(f->topo);
        f->switches = qr_topology_switches(f->topo);
        f->rate_bps = c->links.rate_bps;
        f->seed = c->run.seed;
        addr = calloc(qr_topology_links(f->topo), sizeof *addr);
        if (!addr)
            rc = QR_ENOMEM;
    }
    if (!rc) {
        qr_topology_addresses(f->topo, addr);
        for (uint32_t sw = 0; sw < f->switches; sw++)
            for (uint32_t p = 0; p < f->k; p++) {
                qr_node_kind pk;
                uint32_t peer, pp;
                qr_topology_link(f->topo, sw, p, &pk, &peer, &pp);
                if (pk != QR_NODE_HOST && peer < sw)
                    continue; /* taken from the lower switch */
                qr_fabric_cable *cb = &f->cables[f->n_cables++];
                qr_node me = qr_topology_switch_node(f->topo, sw);
                if (pk == QR_NODE_HOST) {
                    set_end(f, &cb->a, (qr_node){QR_NODE_HOST, peer}, 0, addr);
                    set_end(f, &cb->b, me, p, addr);
                    cb->link_ab = qr_topology_uplink(f->topo, peer);
                    cb->link_ba = qr_topology_port_link(f->topo, sw, p);
                } else {
                    set_end(f, &cb->a, me, p, addr);
                    set_end(f, &cb->b, qr_topology_switch_node(f->topo, peer), pp, addr);
                    cb->link_ab = qr_topology_port_link(f->topo, sw, p);
                    cb->link_ba = qr_topology_port_link(f->topo, peer, pp);
                }
            }
        rc = plan_routes(f, addr);
    }
    if (!rc)
        rc = plan_loops(f, c, addr, errbuf);
    if (!rc)
        rc = plan_faults(f, c, errbuf);
    free(addr);
    if (rc) {
        qr_fabric_destroy(f);
        return rc;
    }
    *out = f;
    return 0;
}

void qr_fabric_destroy(qr_fabric *f)
{
    if (!f)
        return;
    qr_link_faults_destroy(f->lf);
    qr_topology_destroy(f->topo);
    free(f);
}

const qr_topology *qr_fabric_topology(const qr_fabric *f)
{
    return f->topo;
}
uint32_t qr_fabric_hosts(const qr_fabric *f)
{
    return f->hosts;
}
uint32_t qr_fabric_switches(const qr_fabric *f)
{
    return f->switches;
}
uint32_t qr_fabric_namespaces(const qr_fabric *f)
{
    return f->hosts + f->switches;
}

const char *qr_fabric_ns_name(const qr_fabric *f, uint32_t ns, char *buf, size_t size)
{
    if (ns < f->hosts)
        snprintf(buf, size, "h%u", ns);
    else
        snprintf(buf, size, "s%u", ns - f->hosts);
    return buf;
}

const qr_fabric_cable *qr_fabric_cables(const qr_fabric *f, size_t *n)
{
    *n = f->n_cables;
    return f->cables;
}
const qr_fabric_route *qr_fabric_routes(const qr_fabric *f, size_t *n)
{
    *n = f->n_routes;
    return f->routes;
}
const qr_fabric_fault *qr_fabric_faults(const qr_fabric *f, size_t *n)
{
    if (n)
        *n = f->n_faults;
    return f->faults;
}
const qr_link_faults *qr_fabric_link_faults(const qr_fabric *f)
{
    return f->lf;
}

uint32_t qr_fabric_hash_seed(const qr_fabric *f, uint32_t sw)
{
    return (uint32_t)mix64(f->seed * 1000003u + sw + 1);
}

int qr_fabric_nft_ruleset(const qr_fabric *f, uint32_t ns, char *buf, size_t size)
{
    size_t len = 0;
    int any = 0;
    buf[0] = 0;
    for (size_t i = 0; i < f->n_faults; i++) {
        const qr_fabric_fault *x = &f->faults[i];
        if (x->ns != ns || (x->kind != QR_LINK_GRAY && x->kind != QR_LINK_BLACKHOLE))
            continue;
        char draw[160];
        if (x->kind == QR_LINK_GRAY)
            snprintf(draw, sizeof draw, "meta protocol ip numgen random mod 1000000");
        else if (x->by_addr) /* every packet between the pair, TCP or not */
            snprintf(draw, sizeof draw,
                     "meta protocol ip jhash ip saddr . ip daddr mod 1000000 seed 0x%08x",
                     x->hash_seed);
        else
            snprintf(draw, sizeof draw,
                     "meta protocol ip jhash ip saddr . ip daddr . tcp sport . tcp dport mod "
                     "1000000 seed 0x%08x",
                     x->hash_seed);
        int w = snprintf(buf + len, size - len,
                         "%s  chain fault%u {\n"
                         "    type filter hook %s device \"%s\" priority 0; policy accept;\n"
                         "    %s < %u counter log group %u snaplen 128 queue-threshold 1 drop\n"
                         "  }\n",
                         any ? "" : "table netdev qreplay {\n", x->fault,
                         x->hook == QR_FABRIC_HOOK_EGRESS ? "egress" : "ingress", x->dev, draw,
                         x->threshold, x->group);
        if (w < 0 || (size_t)w >= size - len)
            return QR_EINVAL;
        len += (size_t)w;
        any = 1;
    }
    if (any) {
        int w = snprintf(buf + len, size - len, "}\n");
        if (w < 0 || (size_t)w >= size - len)
            return QR_EINVAL;
        len += (size_t)w;
    }
    return (int)len;
}

uint64_t qr_fabric_rate(const qr_fabric *f, uint32_t ns, const char *dev)
{
    for (size_t i = 0; i < f->n_faults; i++)
        if (f->faults[i].kind == QR_LINK_RATE && f->faults[i].ns == ns &&
            !strcmp(f->faults[i].dev, dev))
            return f->faults[i].rate_bps;
    return f->rate_bps;
}

/* ---- the routing oracle ---- */

static int in_prefix(uint32_t a, uint32_t prefix, uint8_t plen)
{
    uint32_t mask = plen ? 0xffffffffu << (32 - plen) : 0;
    return (a & mask) == (prefix & mask);
}

/* The cable end of namespace ns whose interface is dev, and the other end. */
static const qr_fabric_cable *cable_of(const qr_fabric *f, uint32_t ns, const char *dev,
                                       const qr_fabric_end **me, const qr_fabric_end **peer)
{
    for (size_t i = 0; i < f->n_cables; i++) {
        const qr_fabric_cable *c = &f->cables[i];
        if (c->a.ns == ns && !strcmp(c->a.ifname, dev)) {
            *me = &c->a;
            *peer = &c->b;
            return c;
        }
        if (c->b.ns == ns && !strcmp(c->b.ifname, dev)) {
            *me = &c->b;
            *peer = &c->a;
            return c;
        }
    }
    return NULL;
}

/* Every way from namespace ns towards dst; hops taken so far. */
static int walk(const qr_fabric *f, uint32_t ns, uint32_t dst_host, uint32_t dst, uint32_t hops,
                uint32_t src_host, char *errbuf)
{
    char nb[16];
    uint32_t max = qr_topology_max_hops(f->topo);
    if (ns < f->hosts) {
        if (ns == dst_host)
            return 0;
        return qri_err(errbuf, QR_EVALUE, "h%u -> h%u: delivered to h%u", src_host, dst_host, ns);
    }
    if (hops >= max)
        return qri_err(errbuf, QR_EVALUE, "h%u -> h%u: more than %u switches (at %s)", src_host,
                       dst_host, max, qr_fabric_ns_name(f, ns, nb, sizeof nb));
    /* connected /30s first (the kernel's local and link routes are the most specific) */
    for (size_t i = 0; i < f->n_cables; i++) {
        const qr_fabric_cable *c = &f->cables[i];
        const qr_fabric_end *me = c->a.ns == ns ? &c->a : c->b.ns == ns ? &c->b : NULL;
        const qr_fabric_end *peer = me == &c->a ? &c->b : &c->a;
        if (me && in_prefix(dst, me->addr, 30))
            return walk(f, peer->ns, dst_host, dst, hops + 1, src_host, errbuf);
    }
    const qr_fabric_route *best = NULL;
    for (size_t i = 0; i < f->n_routes; i++) {
        const qr_fabric_route *r = &f->routes[i];
        if (r->ns == ns && in_prefix(dst, r->prefix, r->plen) && (!best || r->plen > best->plen))
            best = r;
    }
    if (!best)
        return qri_err(errbuf, QR_EVALUE, "h%u -> h%u: %s has no route", src_host, dst_host,
                       qr_fabric_ns_name(f, ns, nb, sizeof nb));
    for (uint32_t v = 0; v < best->n_via; v++) {
        const qr_fabric_end *me, *peer;
        if (!cable_of(f, ns, best->dev[v], &me, &peer) || peer->addr != best->via[v])
            return qri_err(errbuf, QR_EVALUE, "h%u -> h%u: %s's next hop %s is not on %s", src_host,
                           dst_host, qr_fabric_ns_name(f, ns, nb, sizeof nb), best->dev[v],
                           best->dev[v]);
        int rc = walk(f, peer->ns, dst_host, dst, hops + 1, src_host, errbuf);
        if (rc)
            return rc;
    }
    return 0;
}

int qr_fabric_check_routes(const qr_fabric *f, char *errbuf)
{
    for (uint32_t a = 0; a < f->hosts; a++)
        for (uint32_t b = 0; b < f->hosts; b++) {
            if (a == b)
                continue;
            uint32_t dst = qr_topology_host_addr(f->topo, b);
            const qr_fabric_route *r = NULL;
            for (size_t i = 0; i < f->n_routes; i++)
                if (f->routes[i].ns == a)
                    r = &f->routes[i];
            const qr_fabric_end *me, *peer;
            if (!r || !cable_of(f, a, r->dev[0], &me, &peer) || peer->addr != r->via[0])
                return qri_err(errbuf, QR_EVALUE, "h%u has no default route to its switch", a);
            int rc = walk(f, peer->ns, b, dst, 0, a, errbuf);
            if (rc)
                return rc;
        }
    return 0;
}
