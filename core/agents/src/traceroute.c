/* qreplay: 007's path discovery in the runtime: the hosts' agents and the switches' ICMP limiter
 * (traceroute.h). */
#include "qreplay/traceroute.h"

#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"

#include "internal.h"

/* Per direction: the highest byte sent (relative to the first segment seen) and traces run. */
typedef struct dir_state {
    uint32_t first_seq;
    uint32_t high; /* bytes sent past first_seq, the highest end so far */
    uint8_t seen;
    uint32_t traces; /* in epoch `epoch` */
    int64_t epoch;
} dir_state;

/* An address of a switch interface and its switch. */
typedef struct addr_sw {
    uint32_t addr, sw;
} addr_sw;

struct qr_tracer {
    const qr_topology *topo;
    const qr_flow_table *flows;
    uint32_t per_connection, per_host;
    int64_t epoch_ns; /* 0: the run is one epoch */
    dir_state *dirs;
    size_t n_dirs;
    uint32_t *host_traces; /* in the host's epoch host_epoch */
    int64_t *host_epoch;
    qr_row_traceroute *probes;
    size_t n_probes, cap;
    uint32_t n_traces;
    size_t *trace_first; /* trace -> index of its first probe */
    size_t trace_cap;
    addr_sw *addrs; /* every switch interface address, sorted */
    size_t n_addrs;
};

static int cmp_addr(const void *a, const void *b)
{
    uint32_t x = ((const addr_sw *)a)->addr, y = ((const addr_sw *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Every switch interface's address and its switch, sorted by address. */
static int switch_addrs(const qr_topology *t, addr_sw **out, size_t *n)
{
    uint32_t n_links = qr_topology_links(t);
    uint32_t *addr = malloc(n_links * sizeof *addr);
    *out = malloc(n_links * sizeof **out);
    *n = 0;
    if (!addr || !*out) {
        free(addr);
        free(*out);
        *out = NULL;
        return QR_ENOMEM;
    }
    qr_topology_addresses(t, addr);
    for (uint32_t l = 0; l < n_links; l++) {
        qr_node from, to;
        uint32_t port;
        if (qr_topology_link_ends(t, l, &from, &to, &port) == QR_OK && from.kind != QR_NODE_HOST)
            (*out)[(*n)++] = (addr_sw){addr[l], from.index};
    }
    free(addr);
    qsort(*out, *n, sizeof **out, cmp_addr);
    return QR_OK;
}

int qr_tracer_create(qr_tracer **out, const qr_config *c, const qr_topology *t,
                     const qr_flow_table *ft, char *errbuf)
{
    *out = NULL;
    if (c->traceroute.per_connection <= 0)
        return QR_OK;
    if (qr_topology_max_hops(t) > QR_TRACE_MAX_TTL)
        return qri_err(errbuf, QR_EINVAL, "traceroute: paths of %u switches exceed TTL %u",
                       qr_topology_max_hops(t), QR_TRACE_MAX_TTL);
    qr_tracer *tr = calloc(1, sizeof *tr);
    if (!tr)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    tr->topo = t;
    tr->flows = ft;
    tr->per_connection = (uint32_t)c->traceroute.per_connection;
    tr->per_host = (uint32_t)c->traceroute.per_host;
    tr->epoch_ns = c->traceroute.epoch_ns;
    tr->n_dirs = qr_flow_table_directions(ft);
    tr->dirs = calloc(tr->n_dirs ? tr->n_dirs : 1, sizeof *tr->dirs);
    tr->host_traces = calloc(qr_topology_hosts(t), sizeof *tr->host_traces);
    tr->host_epoch = calloc(qr_topology_hosts(t), sizeof *tr->host_epoch);
    if (!tr->dirs || !tr->host_traces || !tr->host_epoch ||
        switch_addrs(t, &tr->addrs, &tr->n_addrs)) {
        qr_tracer_destroy(tr);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    *out = tr;
    return QR_OK;
}

void qr_tracer_destroy(qr_tracer *tr)
{
    if (!tr)
        return;
    free(tr->dirs);
    free(tr->host_traces);
    free(tr->host_epoch);
    free(tr->probes);
    free(tr->trace_first);
    free(tr->addrs);
    free(tr);
}

int64_t qr_traceroute_epoch(int64_t epoch_ns, int64_t t_ns)
{
    if (epoch_ns <= 0)
        return 0;
    return t_ns >= 0 ? t_ns / epoch_ns : -((-t_ns - 1) / epoch_ns) - 1;
}

uint16_t qr_tracer_ip_id(uint32_t trace, uint32_t ttl)
{
    return (uint16_t)((trace << 5) | (ttl & QR_TRACE_MAX_TTL));
}

uint32_t qr_tracer_sent(qr_tracer *tr, uint32_t host, uint32_t dir, uint32_t seq, uint32_t len,
                        int64_t now_ns, uint32_t *trace)
{
    if (!tr || dir >= tr->n_dirs || len == 0 || host >= qr_topology_hosts(tr->topo))
        return 0;
    dir_state *d = &tr->dirs[dir];
    if (!d->seen) {
        d->seen = 1;
        d->first_seq = seq;
        d->high = len;
        return 0;
    }
    uint32_t end = seq - d->first_seq + len;
    if ((int32_t)(end - d->high) > 0) { /* new bytes */
        d->high = end;
        return 0;
    }
    /* a resend: trace, within the caps of the epoch (they count anew in each) */
    int64_t e = qr_traceroute_epoch(tr->epoch_ns, now_ns);
    if (d->epoch != e) {
        d->epoch = e;
        d->traces = 0;
    }
    if (tr->host_epoch[host] != e) {
        tr->host_epoch[host] = e;
        tr->host_traces[host] = 0;
    }
    if (d->traces >= tr->per_connection || tr->host_traces[host] >= tr->per_host)
        return 0;
    uint32_t src = qr_flow_table_dir_src(tr->flows, dir),
             dst = qr_flow_table_dir_dst(tr->flows, dir);
    uint32_t n = qr_topology_hops(tr->topo, src, dst);
    if (n == 0 || n > QR_TRACE_MAX_TTL)
        return 0;
    if (qri_reserve((void **)&tr->probes, &tr->cap, tr->n_probes + n, sizeof *tr->probes, 256) ||
        qri_grow((void **)&tr->trace_first, &tr->trace_cap, tr->n_traces, sizeof *tr->trace_first,
                 256))
        return 0; /* out of memory: this host does not trace now */
    d->traces++;
    tr->host_traces[host]++;
    *trace = tr->n_traces;
    tr->trace_first[tr->n_traces++] = tr->n_probes;
    for (uint32_t ttl = 1; ttl <= n; ttl++)
        tr->probes[tr->n_probes++] = (qr_row_traceroute){
            *trace, host, dir, (uint8_t)ttl, qr_tracer_ip_id(*trace, ttl), now_ns, 0, -1};
    return n;
}

int qr_tracer_answer(qr_tracer *tr, uint32_t host, uint32_t replier, uint32_t dir,
                     uint16_t quoted_id, int64_t now_ns)
{
    if (!tr || replier == 0)
        return 0;
    uint32_t ttl = quoted_id & QR_TRACE_MAX_TTL, low = quoted_id >> 5;
    /* the trace numbers whose low 11 bits match, newest first */
    if (ttl == 0 || low >= tr->n_traces)
        return 0;
    int64_t top = (int64_t)low + (int64_t)((tr->n_traces - 1 - low) & ~0x7ffu);
    for (int64_t k = top; k >= 0; k -= 0x800) {
        size_t i = tr->trace_first[k] + ttl - 1;
        if (i >= tr->n_probes)
            continue;
        qr_row_traceroute *p = &tr->probes[i];
        if (p->trace != (uint32_t)k || p->ttl != ttl || p->host != host || p->dir != dir)
            continue;
        if (p->replier)
            return 0;
        p->replier = replier;
        p->rtt_ns = now_ns - p->sent_ns;
        return 1;
    }
    return 0;
}

const qr_row_traceroute *qr_tracer_probes(const qr_tracer *tr, size_t *n)
{
    *n = tr ? tr->n_probes : 0;
    return tr ? tr->probes : NULL;
}

uint64_t qr_tracer_traces(const qr_tracer *tr)
{
    return tr ? tr->n_traces : 0;
}

/* The switch an answering address belongs to, or UINT32_MAX. */
static uint32_t switch_of(const addr_sw *addrs, size_t n, uint32_t addr)
{
    addr_sw key = {addr, 0};
    const addr_sw *x = bsearch(&key, addrs, n, sizeof key, cmp_addr);
    return x ? x->sw : UINT32_MAX;
}

/* The cable from a to b, named, or "" if they are not linked (or either is unknown). */
static void cable(const qr_topology *t, int known_a, qr_node a, int known_b, qr_node b, char *name,
                  size_t size)
{
    uint32_t id;
    name[0] = '\0';
    if (known_a && known_b && qr_topology_link_between(t, a, b, &id) == QR_OK)
        qr_topology_cable_name(t, id, name, size);
}

static int cmp_probe(const void *x, const void *y)
{
    const qr_row_traceroute *a = x, *b = y;
    if (a->trace != b->trace)
        return a->trace < b->trace ? -1 : 1;
    return (int)a->ttl - (int)b->ttl;
}

int qr_traceroute_paths(const qr_topology *t, const qr_flow_table *ft,
                        const qr_row_traceroute *probes, size_t n_probes, qr_row_path **rows,
                        size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!n_probes)
        return QR_OK;
    addr_sw *addrs = NULL;
    size_t n_addrs = 0;
    qr_row_traceroute *p = malloc(n_probes * sizeof *p);
    qr_row_path *out = calloc(2 * n_probes, sizeof *out); /* hops + 1 per trace */
    if (!p || !out || switch_addrs(t, &addrs, &n_addrs)) {
        free(p);
        free(out);
        return QR_ENOMEM;
    }
    memcpy(p, probes, n_probes * sizeof *p);
    qsort(p, n_probes, sizeof *p, cmp_probe);
    for (size_t first = 0, end; first < n_probes; first = end) {
        for (end = first + 1; end < n_probes && p[end].trace == p[first].trace; end++)
            ;
        uint32_t hops = (uint32_t)(end - first);
        if (hops > QR_TRACE_MAX_TTL || p[first].dir >= qr_flow_table_directions(ft))
            continue; /* no trace of this network's */
        uint32_t src = qr_flow_table_dir_src(ft, p[first].dir);
        uint32_t dst = qr_flow_table_dir_dst(ft, p[first].dir);
        /* the switches: each answer's; the first and last are the hosts' own (single-homed) */
        qr_node sw[QR_TRACE_MAX_TTL + 1];
        int known[QR_TRACE_MAX_TTL + 1];
        for (uint32_t h = 0; h < hops; h++) {
            uint32_t s =
                p[first + h].replier ? switch_of(addrs, n_addrs, p[first + h].replier) : UINT32_MAX;
            known[h] = s != UINT32_MAX;
            if (known[h])
                sw[h] = qr_topology_switch_node(t, s);
        }
        uint32_t s0, sl, port;
        qr_topology_host_attach(t, src, &s0, &port);
        qr_topology_host_attach(t, dst, &sl, &port);
        if (!known[0] || sw[0].index != s0)
            known[0] = 1, sw[0] = qr_topology_switch_node(t, s0);
        if (!known[hops - 1] || sw[hops - 1].index != sl)
            known[hops - 1] = 1, sw[hops - 1] = qr_topology_switch_node(t, sl);
        qr_node hs = {QR_NODE_HOST, src}, hd = {QR_NODE_HOST, dst};
        for (uint32_t h = 0; h <= hops; h++) {
            qr_row_path *r = &out[(*n)++];
            r->dir = p[first].dir;
            r->trace = p[first].trace;
            r->hop = h;
            r->traced_ns = p[first].sent_ns;
            if (h == 0)
                cable(t, 1, hs, 1, sw[0], r->link, sizeof r->link);
            else if (h == hops)
                cable(t, 1, sw[hops - 1], 1, hd, r->link, sizeof r->link);
            else
                cable(t, known[h - 1], sw[h - 1], known[h], sw[h], r->link, sizeof r->link);
        }
    }
    free(p);
    free(addrs);
    *rows = out;
    return QR_OK;
}

int qr_tracer_paths(const qr_tracer *tr, qr_row_path **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!tr || !tr->n_traces)
        return QR_OK;
    return qr_traceroute_paths(tr->topo, tr->flows, tr->probes, tr->n_probes, rows, n);
}

/* Linux's limits: a global bucket, then one per destination (inet_peer_xrlim_allow). */
#define PEER_BURST 6
typedef struct peer {
    uint32_t addr;
    int64_t tokens_ns; /* credit, in time; capped at PEER_BURST intervals */
    int64_t last_ns;
} peer;

struct qr_icmp_limiter {
    double rate, burst, tokens;
    int64_t last_ns;
    int64_t interval_ns;
    peer *peers;
    size_t n_peers, cap;
    uint64_t refused;
    int64_t epoch_ns;
    qr_icmp_epoch *epochs; /* answers sent and refused per epoch, in epoch order */
    size_t n_epochs, epochs_cap;
};

/* The counters of the epoch at now_ns (NULL: out of memory). */
static qr_icmp_epoch *epoch_at(qr_icmp_limiter *l, int64_t now_ns)
{
    int64_t e = qr_traceroute_epoch(l->epoch_ns, now_ns);
    if (l->n_epochs && l->epochs[l->n_epochs - 1].epoch == e)
        return &l->epochs[l->n_epochs - 1];
    if (qri_grow((void **)&l->epochs, &l->epochs_cap, l->n_epochs, sizeof *l->epochs, 8))
        return NULL;
    l->epochs[l->n_epochs] = (qr_icmp_epoch){e, 0, 0};
    return &l->epochs[l->n_epochs++];
}

const qr_icmp_epoch *qr_icmp_epochs(const qr_icmp_limiter *l, size_t *n)
{
    *n = l ? l->n_epochs : 0;
    return l ? l->epochs : NULL;
}

int qr_icmp_limiter_create(qr_icmp_limiter **out, const qr_config *c, char *errbuf)
{
    qr_icmp_limiter *l = calloc(1, sizeof *l);
    if (!l)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    l->rate = c->traceroute.icmp_rate;
    l->burst = l->tokens = c->traceroute.icmp_burst;
    l->interval_ns = c->traceroute.icmp_interval_ns;
    l->epoch_ns = c->traceroute.epoch_ns;
    *out = l;
    return QR_OK;
}

void qr_icmp_limiter_destroy(qr_icmp_limiter *l)
{
    if (!l)
        return;
    free(l->peers);
    free(l->epochs);
    free(l);
}

uint64_t qr_icmp_refused(const qr_icmp_limiter *l)
{
    return l ? l->refused : 0;
}

/* Linux's two buckets: whether an answer to dst may go at now_ns (tokens taken if so). */
static int allow(qr_icmp_limiter *l, uint32_t dst, int64_t now_ns)
{
    if (now_ns > l->last_ns) {
        l->tokens += (double)(now_ns - l->last_ns) * 1e-9 * l->rate;
        if (l->tokens > l->burst)
            l->tokens = l->burst;
        l->last_ns = now_ns;
    }
    if (l->tokens < 1.0) {
        l->refused++;
        return 0;
    }
    if (l->interval_ns > 0) {
        peer *p = NULL;
        for (size_t i = 0; i < l->n_peers && !p; i++)
            if (l->peers[i].addr == dst)
                p = &l->peers[i];
        if (!p) {
            if (qri_grow((void **)&l->peers, &l->cap, l->n_peers, sizeof *l->peers, 16)) {
                l->refused++;
                return 0;
            }
            p = &l->peers[l->n_peers++];
            *p = (peer){dst, PEER_BURST * l->interval_ns, now_ns};
        }
        int64_t credit = p->tokens_ns + (now_ns - p->last_ns);
        if (credit > PEER_BURST * l->interval_ns)
            credit = PEER_BURST * l->interval_ns;
        p->last_ns = now_ns;
        if (credit < l->interval_ns) {
            p->tokens_ns = credit;
            l->refused++;
            return 0;
        }
        p->tokens_ns = credit - l->interval_ns;
    }
    l->tokens -= 1.0;
    return 1;
}

int qr_icmp_allow(qr_icmp_limiter *l, uint32_t dst, int64_t now_ns)
{
    int ok = allow(l, dst, now_ns);
    qr_icmp_epoch *e = epoch_at(l, now_ns);
    if (e) {
        e->sent += (uint64_t)ok;
        e->refused += (uint64_t)!ok;
    }
    return ok;
}
