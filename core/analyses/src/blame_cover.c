/* qreplay: 007's comparators on blame's voters (blame_ctx.h, cover.h): the same failed directions
 * and traced paths 007 votes with, given to the binary and integer programs, MAX COVERAGE and
 * Tomo. Tomo's good directions (no loss detected) are not traced: each counts on a cable by the
 * share of its hosts' shortest paths crossing it, ECMP spreading flows evenly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/scenario.h"
#include "qreplay/traceroute.h"

#include "blame_ctx.h"
#include "internal.h"

/* The network as nodes (hosts, then switches) and the directed links out of each. */
typedef struct graph {
    uint32_t n_nodes;
    uint32_t *first;           /* n_nodes + 1 offsets into out */
    uint32_t *out;             /* directed link ids */
    uint32_t *to;              /* per directed link: the node it leads to */
    uint32_t *from;            /* per directed link: the node it leaves */
    uint32_t *dist_s, *dist_t; /* scratch: hops from the source, to the destination */
    double *n_s, *n_t;         /* scratch: shortest paths from the source, to the destination */
    uint32_t *queue;
} graph;

static uint32_t node_id(const qr_topology *t, qr_node n)
{
    return n.kind == QR_NODE_HOST ? n.index : qr_topology_hosts(t) + n.index;
}

static void graph_free(graph *g)
{
    free(g->first);
    free(g->out);
    free(g->to);
    free(g->from);
    free(g->dist_s);
    free(g->dist_t);
    free(g->n_s);
    free(g->n_t);
    free(g->queue);
}

static int graph_make(graph *g, const qr_topology *t)
{
    memset(g, 0, sizeof *g);
    uint32_t nl = qr_topology_links(t);
    g->n_nodes = qr_topology_hosts(t) + qr_topology_switches(t);
    size_t nn = g->n_nodes + 1;
    g->first = calloc(nn + 1, sizeof *g->first);
    g->out = malloc((nl ? nl : 1) * sizeof *g->out);
    g->to = malloc((nl ? nl : 1) * sizeof *g->to);
    g->from = malloc((nl ? nl : 1) * sizeof *g->from);
    g->dist_s = malloc(nn * sizeof *g->dist_s);
    g->dist_t = malloc(nn * sizeof *g->dist_t);
    g->n_s = malloc(nn * sizeof *g->n_s);
    g->n_t = malloc(nn * sizeof *g->n_t);
    g->queue = malloc(nn * sizeof *g->queue);
    if (!g->first || !g->out || !g->to || !g->from || !g->dist_s || !g->dist_t || !g->n_s ||
        !g->n_t || !g->queue)
        return QR_ENOMEM;
    for (uint32_t l = 0; l < nl; l++) {
        qr_node a, b;
        uint32_t port;
        qr_topology_link_ends(t, l, &a, &b, &port);
        g->from[l] = node_id(t, a);
        g->to[l] = node_id(t, b);
        g->first[g->from[l] + 1]++;
    }
    for (uint32_t v = 0; v < g->n_nodes; v++)
        g->first[v + 1] += g->first[v];
    uint32_t *fill = calloc(nn, sizeof *fill);
    if (!fill)
        return QR_ENOMEM;
    for (uint32_t l = 0; l < nl; l++)
        g->out[g->first[g->from[l]] + fill[g->from[l]]++] = l;
    free(fill);
    return QR_OK;
}

/* Hops and shortest-path counts from node s. Every link has its reverse, so they are also the hops
 * and paths to s. */
static void bfs(graph *g, uint32_t s, uint32_t *dist, double *count)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        dist[v] = UINT32_MAX;
        count[v] = 0;
    }
    dist[s] = 0;
    count[s] = 1;
    uint32_t head = 0, tail = 0;
    g->queue[tail++] = s;
    while (head < tail) {
        uint32_t u = g->queue[head++];
        for (uint32_t i = g->first[u]; i < g->first[u + 1]; i++) {
            uint32_t v = g->to[g->out[i]];
            if (dist[v] == UINT32_MAX) {
                dist[v] = dist[u] + 1;
                g->queue[tail++] = v;
            }
            if (dist[v] == dist[u] + 1)
                count[v] += count[u];
        }
    }
}

/* Add w times the share of host src's shortest paths to host dst crossing each cable to acc. */
static void ecmp_share(graph *g, const ctx *c, uint32_t src, uint32_t dst, double w, double *acc)
{
    if (src == dst)
        return;
    bfs(g, src, g->dist_s, g->n_s);
    bfs(g, dst, g->dist_t, g->n_t);
    uint32_t d = g->dist_s[dst];
    if (d == UINT32_MAX || g->n_s[dst] <= 0)
        return;
    uint32_t nl = qr_topology_links(c->topo);
    for (uint32_t l = 0; l < nl; l++) {
        uint32_t u = g->from[l], v = g->to[l];
        if (g->dist_s[u] == UINT32_MAX || g->dist_t[v] == UINT32_MAX ||
            g->dist_s[u] + 1 + g->dist_t[v] != d)
            continue;
        acc[c->cable_of[l]] += w * g->n_s[u] * g->n_t[v] / g->n_s[dst];
    }
}

/* Enumerate the shortest paths from node u to the destination (g->dist_t set) into c->ecmp:
 * links whose far end is one hop nearer. at: the path so far. Returns 0, or -1 past the cap. */
static int walk(graph *g, ctx *c, uint32_t u, ecmp_path *at, size_t cap, size_t first)
{
    if (g->dist_t[u] == 0) {
        if (c->n_ecmp - first >= QRI_ECMP_MAX || c->n_ecmp >= cap)
            return -1;
        c->ecmp[c->n_ecmp++] = *at;
        return 0;
    }
    for (uint32_t i = g->first[u]; i < g->first[u + 1]; i++) {
        uint32_t l = g->out[i], v = g->to[l];
        if (g->dist_t[v] == UINT32_MAX || g->dist_t[v] + 1 != g->dist_t[u] || at->n >= MAX_PATH)
            continue;
        at->cables[at->n++] = c->cable_of[l];
        int rc = walk(g, c, v, at, cap, first);
        at->n--;
        if (rc)
            return rc;
    }
    return 0;
}

int qri_blame_ecmp_paths(qr_blame_ctx *c, const qr_recording *rec)
{
    if (!c->topo_known)
        return QR_OK;
    size_t voters = 0;
    for (size_t d = 0; d < c->n_dirs; d++)
        voters += c->dirs[d].losses > 0;
    size_t cap = voters * QRI_ECMP_MAX;
    c->ecmp = malloc((cap ? cap : 1) * sizeof *c->ecmp);
    graph g;
    int rc = c->ecmp ? graph_make(&g, c->topo) : QR_ENOMEM;
    if (rc) {
        if (c->ecmp)
            graph_free(&g);
        return QR_ENOMEM;
    }
    const qr_flow_table *flows = qr_recording_flows(rec);
    uint32_t hosts = qr_topology_hosts(c->topo);
    for (size_t d = 0; d < c->n_dirs; d++) {
        dir_info *x = &c->dirs[d];
        uint32_t src = qr_flow_table_dir_src(flows, (uint32_t)d),
                 dst = qr_flow_table_dir_dst(flows, (uint32_t)d);
        if (!x->losses || src >= hosts || dst >= hosts || src == dst)
            continue;
        bfs(&g, dst, g.dist_t, g.n_t);
        size_t first = c->n_ecmp;
        ecmp_path at = {{0}, 0};
        if (walk(&g, c, src, &at, cap, first)) {
            c->n_ecmp = first; /* too many paths to keep: adjusted by its own trace */
            continue;
        }
        x->ecmp_first = (uint32_t)first;
        x->ecmp_n = (uint32_t)(c->n_ecmp - first);
    }
    graph_free(&g);
    return QR_OK;
}

int qri_blame_icmp_check(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out)
{
    const qr_row_icmp *rows;
    size_t n;
    memset(&out->icmp, 0, sizeof out->icmp);
    if (!c->topo_known || !qr_recording_icmp(rec, &rows, &n))
        return QR_OK;
    const qr_config *cf = qr_scenario_config(qr_recording_scenario(rec));
    qr_blame_icmp *x = &out->icmp;
    x->known = 1;
    x->epoch_ns = cf->traceroute.epoch_ns;
    x->per_host = (uint32_t)cf->traceroute.per_host;
    /* H(s): the hosts with a shortest path to another host through switch s */
    graph g;
    if (graph_make(&g, c->topo)) {
        graph_free(&g);
        return QR_ENOMEM;
    }
    uint32_t hosts = qr_topology_hosts(c->topo), sws = qr_topology_switches(c->topo);
    uint32_t *dist = malloc((size_t)(hosts + sws) * (hosts + sws) * sizeof *dist);
    uint64_t *bound = calloc(sws ? sws : 1, sizeof *bound);
    if (!dist || !bound) {
        free(dist);
        free(bound);
        graph_free(&g);
        return QR_ENOMEM;
    }
    uint32_t nn = hosts + sws;
    for (uint32_t v = 0; v < nn; v++) {
        bfs(&g, v, g.dist_s, g.n_s);
        memcpy(dist + (size_t)v * nn, g.dist_s, nn * sizeof *dist);
    }
    for (uint32_t s = 0; s < sws; s++) {
        uint32_t sv = hosts + s, reach = 0;
        for (uint32_t h = 0; h < hosts; h++) {
            int through = 0;
            for (uint32_t d = 0; d < hosts && !through; d++) {
                uint32_t hd = dist[(size_t)h * nn + d], hs = dist[(size_t)h * nn + sv],
                         sd = dist[(size_t)sv * nn + d];
                through = d != h && hd != UINT32_MAX && hs != UINT32_MAX && sd != UINT32_MAX &&
                          hs + sd == hd;
            }
            reach += (uint32_t)through;
        }
        bound[s] = (uint64_t)x->per_host * reach;
        if (!s || bound[s] < x->min_bound)
            x->min_bound = bound[s];
    }
    for (size_t i = 0; i < n; i++) {
        const qr_row_icmp *r = &rows[i];
        x->refused += r->refused;
        uint64_t b = r->sw < sws ? bound[r->sw] : 0;
        x->over += (uint32_t)(r->sent > b);
        if (r->sent > x->max_sent || i == 0) {
            x->max_sent = r->sent;
            x->max_switch = r->sw;
            x->max_epoch = r->epoch;
            x->max_bound = b;
        }
    }
    /* distinct epochs (rows are per switch, each switch's in epoch order) */
    int64_t *eps = malloc((n ? n : 1) * sizeof *eps);
    if (eps) {
        for (size_t i = 0; i < n; i++)
            eps[i] = rows[i].epoch;
        qsort(eps, n, sizeof *eps, qri_cmp_i64);
        for (size_t i = 0; i < n; i++)
            x->epochs += (uint32_t)(i == 0 || eps[i] != eps[i - 1]);
    }
    free(eps);
    free(dist);
    free(bound);
    graph_free(&g);
    return eps || !n ? QR_OK : QR_ENOMEM;
}

/* Tomo's good directions: every direction with no detected loss, by its hosts' ECMP shares. */
static int good_shares(const ctx *c, const qr_recording *rec, double *good)
{
    if (!c->topo_known)
        return QR_OK;
    graph g;
    int rc = graph_make(&g, c->topo);
    const qr_flow_table *flows = qr_recording_flows(rec);
    for (size_t d = 0; !rc && d < c->n_dirs; d++)
        if (!c->dirs[d].losses)
            ecmp_share(&g, c, qr_flow_table_dir_src(flows, (uint32_t)d),
                       qr_flow_table_dir_dst(flows, (uint32_t)d), 1.0, good);
    graph_free(&g);
    return rc;
}

/* Per connection row: the blamed cable on its path with the highest value (greedy: the earliest
 * taken; first on the path on ties). */
static void comparator_culprits(ctx *c, const qr_blame *out, const qr_cover_result *r, int m)
{
    for (size_t k = 0; k < out->n_conns; k++) {
        const dir_info *x = &c->dirs[out->conns[k].dir];
        uint32_t best = NONE;
        for (uint32_t h = 0; h < x->hops; h++) {
            uint32_t cb = x->cables[h];
            if (!r->blamed[cb])
                continue;
            int better = best == NONE || (m >= QR_COVER_MAXCOV ? r->value[cb] < r->value[best]
                                                               : r->value[cb] > r->value[best]);
            if (better)
                best = cb;
        }
        c->comp_culprit[m][k] = best;
    }
}

/* Comparator m's rows: its summary, the cables it blamed. */
static int comparator_rows(ctx *c, qr_blame *out, const qr_cover_result *r, int m, size_t *cap)
{
    qr_row_blame_comparator *row = &out->comparators[m];
    memset(row, 0, sizeof *row);
    snprintf(row->method, sizeof row->method, "%s", qr_cover_method_name(m));
    snprintf(row->status, sizeof row->status, "%s", r->status);
    row->optimal = (uint8_t)r->optimal;
    row->objective = r->objective;
    row->connections = (uint32_t)c->n_voting[0];
    row->unexplainable = (uint32_t)r->unexplainable;
    row->explained = (uint32_t)r->explained;
    row->flagged = r->n_blamed;
    /* unscored until a truth is given: nothing blamed is known right */
    row->precision = row->recall = row->culprit_accuracy = NAN;
    memcpy(c->comp_blamed[m], r->blamed, c->n_cables);
    for (uint32_t cb = 0; cb < c->n_cables; cb++) {
        if (!r->blamed[cb])
            continue;
        if (qri_grow((void **)&out->blamed, cap, out->n_blamed, sizeof *out->blamed, 16))
            return QR_ENOMEM;
        qr_row_blame_blamed *b = &out->blamed[out->n_blamed++];
        memset(b, 0, sizeof *b);
        snprintf(b->method, sizeof b->method, "%s", row->method);
        snprintf(b->name, sizeof b->name, "%s", out->links[cb].name);
        b->value = r->value[cb];
    }
    comparator_culprits(c, out, r, m);
    return QR_OK;
}

int qri_blame_comparators(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out, char *errbuf)
{
    size_t n = c->n_voting[0], total = 0;
    for (size_t k = 0; k < n; k++)
        total += c->dirs[c->voting[0][k]].hops;
    size_t *start = malloc((n + 1) * sizeof *start);
    uint32_t *links = malloc((total ? total : 1) * sizeof *links);
    uint32_t *count = malloc((n ? n : 1) * sizeof *count);
    double *good = calloc(c->n_cables ? c->n_cables : 1, sizeof *good);
    int rc = !start || !links || !count || !good ? QR_ENOMEM : QR_OK;
    for (int m = 0; !rc && m < QR_COVER_METHODS; m++) {
        c->comp_blamed[m] = calloc(c->n_cables ? c->n_cables : 1, 1);
        c->comp_culprit[m] = malloc((out->n_conns ? out->n_conns : 1) * sizeof *c->comp_culprit[m]);
        if (!c->comp_blamed[m] || !c->comp_culprit[m])
            rc = QR_ENOMEM;
    }
    if (!rc)
        rc = good_shares(c, rec, good);
    if (rc) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    start[0] = 0;
    for (size_t k = 0; k < n; k++) {
        const dir_info *x = &c->dirs[c->voting[0][k]];
        memcpy(links + start[k], x->cables, x->hops * sizeof *links);
        start[k + 1] = start[k] + x->hops;
        count[k] = x->losses;
    }
    qr_cover p = {c->n_cables, n, start, links, count, good};
    size_t cap = 0;
    for (int m = 0; !rc && m < QR_COVER_METHODS; m++) {
        qr_cover_result r;
        rc = qr_cover_solve(&p, m, &out->opts.cover, &r, errbuf);
        if (!rc && comparator_rows(c, out, &r, m, &cap))
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        qr_cover_result_free(&r);
    }
    if (!rc)
        out->n_comparators = QR_COVER_METHODS;
done:
    free(start);
    free(links);
    free(count);
    free(good);
    return rc;
}
