/* qreplay: 007 blame of cables for the losses hosts detected, with the replay's view (blame.h).
 * Scoring against the ground truth is the scorer's (scorers/blame_score.c), through qr_blame_rule,
 * qr_blame_path and qr_blame_culprit. */
#include "qreplay/blame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/faults.h"
#include "qreplay/flowtable.h"
#include "qreplay/h5.h"
#include "qreplay/linkfault.h"
#include "qreplay/queuelog.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"

#include "blame_ctx.h"
#include "internal.h"

void qr_blame_opts_default(qr_blame_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = 0.01;
    o->epoch_ns = -1;
    o->comparators = 1;
    qr_cover_opts_default(&o->cover);
}

static double ratio(uint32_t a, uint32_t b)
{
    return b ? (double)a / b : NAN;
}

/* Voting directions by their first loss (method 0) or first unexplained loss (1); ties by id. */
typedef struct by_loss {
    const dir_info *dirs;
    int method;
} by_loss;
static int cmp_first_loss(const void *a, const void *b, void *ctx_)
{
    const by_loss *k = ctx_;
    const dir_info *x = &k->dirs[*(const uint32_t *)a], *y = &k->dirs[*(const uint32_t *)b];
    int64_t tx = k->method ? x->first_unexplained : x->first_loss;
    int64_t ty = k->method ? y->first_unexplained : y->first_loss;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The packets a tagged replay dropped, sorted; drops per directed link and per direction's path
 * position. */
static int read_replay(const char *path, ctx *c, uint64_t **ids, size_t *n, uint64_t *link_drops,
                       char *errbuf)
{
    qr_arrival_reader *r = NULL;
    int rc = qr_arrival_reader_open(&r, path, errbuf);
    size_t cap = 0;
    *ids = NULL;
    *n = 0;
    qr_arrival a;
    while (!rc && (rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        if (a.decision == QR_ADMIT)
            continue;
        const qr_topology *t = c->topo;
        if (a.sw >= qr_topology_switches(t) || a.port >= qr_topology_ports(t, a.sw)) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: an arrival at switch %u port %u, which the recording's topology does "
                         "not have",
                         path, a.sw, a.port);
            break;
        }
        uint32_t link = qr_topology_port_link(t, a.sw, a.port), dir = qr_packet_id_dir(a.packet);
        link_drops[link]++;
        dir_info *d = dir < c->n_dirs ? &c->dirs[dir] : NULL;
        for (uint32_t h = 0; d && h < d->hops; h++)
            if (d->cables[h] == c->cable_of[link]) {
                d->replay_drops[h]++;
                break;
            }
        if (qri_grow((void **)ids, &cap, *n, sizeof **ids, 1024)) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        (*ids)[(*n)++] = a.packet;
    }
    qr_arrival_reader_close(r);
    if (rc == QR_END)
        rc = QR_OK;
    if (!rc && *n)
        qsort(*ids, *n, sizeof **ids, qri_cmp_u64);
    return rc;
}

static int contains(const uint64_t *ids, size_t n, uint64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id;
}

static const char *layer_of(qr_node a, qr_node b)
{
    if (a.kind == QR_NODE_HOST || b.kind == QR_NODE_HOST)
        return "host-edge";
    if (a.kind == QR_NODE_CORE || b.kind == QR_NODE_CORE)
        return "agg-core";
    return "edge-agg";
}

/* The culprit of direction d: the cable on its path with the most votes (first on ties). */
static uint32_t culprit_of(const dir_info *d, const double *votes)
{
    uint32_t best = NONE;
    for (uint32_t h = 0; h < d->hops; h++)
        if (votes[d->cables[h]] > 0 && (best == NONE || votes[d->cables[h]] > votes[best]))
            best = d->cables[h];
    return best;
}

static void ctx_free(qr_blame_ctx *c)
{
    if (!c)
        return;
    qr_topology_destroy(c->topo);
    free(c->by_name);
    free(c->cable_of);
    free(c->cable_link);
    free(c->dirs);
    free(c->votes);
    free(c->left);
    free(c->voters);
    free(c->rank);
    free(c->flagged);
    free(c->noise);
    free(c->ecmp);
    free(c->epoch_flagged);
    free(c->removed);
    free(c->order);
    free(c->sort_tmp);
    for (int m = 0; m < QR_BLAME_METHODS; m++) {
        free(c->voting[m]);
        free(c->culprit[m]);
    }
    for (int m = 0; m < QR_COVER_METHODS; m++) {
        free(c->comp_blamed[m]);
        free(c->comp_culprit[m]);
    }
    free(c);
}

/* The cable table (each pair of directed links, numbered by the lower id) and its rows. */
static void make_cables(qr_blame_ctx *c, qr_blame *out)
{
    const qr_topology *t = c->topo;
    uint32_t n_links = qr_topology_links(t), nc = 0;
    for (uint32_t l = 0; l < n_links; l++) {
        uint32_t rev = qr_topology_link_reverse(t, l);
        if (rev < l)
            continue;
        c->cable_of[l] = c->cable_of[rev] = nc;
        c->cable_link[nc] = l;
        qr_row_blame_link *row = &out->links[nc];
        qr_node a, b;
        uint32_t port;
        qr_topology_link_ends(t, l, &a, &b, &port);
        if (a.kind > b.kind || (a.kind == b.kind && a.index > b.index)) { /* lower end first */
            qr_node x = a;
            a = b;
            b = x;
        }
        row->link = l;
        qr_topology_cable_name(t, l, row->name, sizeof row->name);
        snprintf(row->layer, sizeof row->layer, "%s", layer_of(a, b));
        row->a = a.index;
        row->b = b.index;
        nc++;
    }
    out->n_links = nc;
}

/* Cable indices by name. */
static int cmp_by_name(const void *a, const void *b, void *links_)
{
    const qr_row_blame_link *links = links_;
    return strcmp(links[*(const uint32_t *)a].name, links[*(const uint32_t *)b].name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The cable named `name`, or NONE. */
static uint32_t cable_named(const qr_blame_ctx *c, const qr_blame *out, const char *name)
{
    size_t lo = 0, hi = out->n_links;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strcmp(out->links[c->by_name[mid]].name, name);
        if (d == 0)
            return c->by_name[mid];
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NONE;
}

static int index_names(qr_blame_ctx *c, qr_blame *out)
{
    free(c->by_name);
    c->by_name = malloc((out->n_links ? out->n_links : 1) * sizeof *c->by_name);
    if (!c->by_name)
        return QR_ENOMEM;
    for (uint32_t i = 0; i < out->n_links; i++)
        c->by_name[i] = i;
    return qri_sort(c->by_name, out->n_links, sizeof *c->by_name, cmp_by_name, out->links)
               ? QR_ENOMEM
               : QR_OK;
}

/* The cable table: the topology's cables when it is the network the packets crossed, then every
 * other name the traced paths hold (an import's path file names links its own way). */
static int make_links(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out)
{
    const qr_row_path *paths;
    size_t n_paths;
    qr_recording_paths(rec, &paths, &n_paths);
    uint32_t n_topo = c->topo_known ? qr_topology_links(c->topo) / 2 : 0;
    out->links = calloc(n_topo + n_paths + 1, sizeof *out->links);
    const char **names = malloc((n_paths ? n_paths : 1) * sizeof *names);
    int rc = QR_ENOMEM;
    if (!out->links || !names)
        goto done;
    if (c->topo_known)
        make_cables(c, out);
    c->n_topo = (uint32_t)out->n_links;
    if ((rc = index_names(c, out)))
        goto done;
    size_t n = 0;
    for (size_t i = 0; i < n_paths; i++)
        if (paths[i].link[0] && cable_named(c, out, paths[i].link) == NONE)
            names[n++] = paths[i].link;
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (i && !strcmp(names[i], names[i - 1]))
            continue;
        qr_row_blame_link *row = &out->links[out->n_links++];
        row->link = row->a = row->b = NONE;
        snprintf(row->name, sizeof row->name, "%s", names[i]);
        snprintf(row->layer, sizeof row->layer, "traced");
    }
    rc = index_names(c, out);
done:
    free(names);
    return rc;
}

/* Each direction's path: the trace of it with the most known links (the first on ties); with no
 * trace, in a known network where the two hosts share their only switch, the one path there is. */
static void dir_paths(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out)
{
    const qr_row_path *paths;
    size_t n_paths;
    qr_recording_paths(rec, &paths, &n_paths);
    for (size_t i = 0; i < n_paths;) {
        size_t j = i;
        while (j < n_paths && paths[j].dir == paths[i].dir && paths[j].trace == paths[i].trace)
            j++;
        dir_info *x = &c->dirs[paths[i].dir]; /* checked when read */
        uint32_t cables[MAX_PATH], known = 0, len = (uint32_t)(j - i);
        for (size_t k = i; k < j && len <= MAX_PATH; k++) {
            uint32_t cb = paths[k].link[0] ? cable_named(c, out, paths[k].link) : NONE;
            if (cb != NONE)
                cables[known++] = cb;
        }
        if (len <= MAX_PATH && known > x->hops) {
            memcpy(x->cables, cables, known * sizeof *cables);
            x->hops = known;
            x->len = len;
            x->routed = 1;
        }
        i = j;
    }
    if (!c->topo_known)
        return;
    const qr_flow_table *flows = qr_recording_flows(rec);
    for (size_t d = 0; d < c->n_dirs; d++) {
        dir_info *x = &c->dirs[d];
        uint32_t links[MAX_PATH];
        size_t n;
        if (x->routed ||
            qr_topology_hops(c->topo, qr_flow_table_dir_src(flows, (uint32_t)d),
                             qr_flow_table_dir_dst(flows, (uint32_t)d)) != 1 ||
            qr_dir_links(flows, c->topo, (uint32_t)d, links, MAX_PATH, &n) || n > MAX_PATH)
            continue;
        x->routed = 1;
        x->hops = x->len = (uint32_t)n;
        for (size_t h = 0; h < n; h++)
            x->cables[h] = c->cable_of[links[h]];
    }
}

/* The losses hosts detected, per direction (and those the replay did not drop). */
static void count_losses(qr_blame_ctx *c, const qr_recording *rec, const uint64_t *replay_ids,
                         size_t n_replay, qr_blame *out)
{
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(rec, h, &n);
        for (size_t i = 0; i < n; i++) {
            if (!p[i].drop_tag || p[i].dir >= c->n_dirs)
                continue;
            dir_info *x = &c->dirs[p[i].dir];
            if (!x->losses || p[i].pk.time_ns < x->first_loss)
                x->first_loss = p[i].pk.time_ns;
            x->losses++;
            out->losses++;
            if (out->has_replay &&
                !contains(replay_ids, n_replay, qr_packet_id(p[i].dir, p[i].seq))) {
                if (!x->unexplained || p[i].pk.time_ns < x->first_unexplained)
                    x->first_unexplained = p[i].pk.time_ns;
                x->unexplained++;
                out->unexplained++;
            }
        }
    }
}

/* The detection curve of method m (the rule on the first k voters, every k up to 400, then about
 * 200 steps) and the rule on all of them. Scores are left to the scorer: with no truth, a flagged
 * link is not known to be right (precision 0 of what was flagged, recall and the detection points
 * unknown). */
static int rule_curve(qr_blame_ctx *c, int m, qr_blame *out, size_t *cap)
{
    size_t total = c->n_voting[m];
    for (size_t k = 1; k <= total;) {
        qri_rule_out r = qri_blame_rule_of(c, c->voting[m], k);
        if (qri_grow((void **)&out->curve, cap, out->n_curve, sizeof *out->curve, 256))
            return QR_ENOMEM;
        qr_row_blame_curve *row = &out->curve[out->n_curve++];
        memset(row, 0, sizeof *row);
        snprintf(row->method, sizeof row->method, "%s", qr_blame_method_name(m));
        row->connections = (uint32_t)k;
        row->flagged = r.flagged;
        row->precision = ratio(0, r.flagged);
        row->recall = ratio(0, 0);
        size_t step = k < 400 ? 1 : total / 200 + 1;
        k = k < total && k + step > total ? total : k + step;
    }
    qri_rule_out r = qri_blame_rule_of(c, c->voting[m], total);
    qr_row_blame_summary *sm = &out->summary[m];
    snprintf(sm->method, sizeof sm->method, "%s", qr_blame_method_name(m));
    sm->connections = (uint32_t)total;
    sm->votes = r.total;
    sm->flagged = r.flagged;
    sm->noise = r.noise;
    sm->precision = ratio(0, r.flagged);
    sm->recall = ratio(0, 0);
    sm->culprit_accuracy = ratio(0, 0);
    for (uint32_t i = 0; i < out->n_links; i++) {
        qr_row_blame_link *row = &out->links[i];
        if (m == 0) {
            row->votes = c->votes[i];
            row->voters = c->voters[i];
            row->rank = c->rank[i];
            row->flagged = c->flagged[i];
            row->noise = c->noise[i];
        } else {
            row->replay_votes = c->votes[i];
            row->replay_voters = c->voters[i];
            row->replay_rank = c->rank[i];
            row->replay_flagged = c->flagged[i];
            row->replay_noise = c->noise[i];
        }
    }
    return QR_OK;
}

/* Per connection: every direction that voted by 007. Its 007 culprit is the most voted cable on
 * its path; from the replay, the cable where the replay dropped most of its lost packets, else
 * (losses congestion does not explain) the most voted by the replay's votes. */
static int culprits(qr_blame_ctx *c, const qr_flow_table *flows, qr_blame *out)
{
    size_t n = c->n_voting[0] ? c->n_voting[0] : 1;
    uint32_t nc = (uint32_t)out->n_links;
    out->conns = calloc(n, sizeof *out->conns);
    c->culprit[0] = malloc(n * sizeof *c->culprit[0]);
    c->culprit[1] = malloc(n * sizeof *c->culprit[1]);
    double *votes[2] = {calloc(nc ? nc : 1, sizeof(double)), calloc(nc ? nc : 1, sizeof(double))};
    int rc = QR_OK;
    if (!out->conns || !c->culprit[0] || !c->culprit[1] || !votes[0] || !votes[1]) {
        rc = QR_ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < nc; i++) {
        votes[0][i] = out->links[i].votes;
        votes[1][i] = out->links[i].replay_votes;
    }
    for (size_t k = 0; k < c->n_voting[0]; k++) {
        uint32_t d = c->voting[0][k];
        const dir_info *x = &c->dirs[d];
        qr_row_blame_conn *row = &out->conns[out->n_conns];
        row->dir = d;
        row->flow = qr_dir_flow(d);
        row->src = qr_flow_table_dir_src(flows, d);
        row->dst = qr_flow_table_dir_dst(flows, d);
        row->first_loss_ns = x->first_loss;
        row->losses = x->losses;
        row->unexplained = x->unexplained;
        row->hops = x->len;
        row->known = x->hops;
        uint32_t cul[2] = {culprit_of(x, votes[0]), NONE};
        if (out->has_replay) {
            uint32_t h = qri_argmax_u32(x->replay_drops, x->hops);
            cul[1] = h != NONE ? x->cables[h] : culprit_of(x, votes[1]);
        }
        if (cul[0] != NONE)
            snprintf(row->culprit, sizeof row->culprit, "%s", out->links[cul[0]].name);
        if (cul[1] != NONE)
            snprintf(row->replay_culprit, sizeof row->replay_culprit, "%s",
                     out->links[cul[1]].name);
        row->correct = row->replay_correct = -1;
        c->culprit[0][out->n_conns] = cul[0];
        c->culprit[1][out->n_conns] = cul[1];
        out->n_conns++;
    }
done:
    free(votes[0]);
    free(votes[1]);
    return rc;
}

/* What follows the votes: the culprits, the tally per epoch, the ICMP check, the comparators. */
static int after_votes(ctx *c, const qr_recording *rec, const qr_flow_table *flows, qr_blame *out,
                       char *errbuf)
{
    if (culprits(c, flows, out) || qri_blame_epochs(c, rec, out) ||
        qri_blame_icmp_check(c, rec, out))
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    if (!out->opts.comparators)
        return QR_OK;
    if (out->opts.progress)
        out->opts.progress(out->opts.progress_ctx, "blame: 007's comparators (binary and integer "
                                                   "programs, MAX COVERAGE, Tomo)");
    return qri_blame_comparators(c, rec, out, errbuf);
}

int qr_blame_run(const qr_recording *rec, const qr_blame_opts *o, qr_blame *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    qr_blame_opts_default(&out->opts);
    if (o)
        out->opts = *o;
    if (!(out->opts.threshold > 0 && out->opts.threshold < 1))
        return qri_err(errbuf, QR_EINVAL, "the flag threshold must lie between 0 and 1");
    const qr_scenario *s = qr_recording_scenario(rec);
    const qr_flow_table *flows = qr_recording_flows(rec);
    uint64_t *link_drops = NULL, *replay_ids = NULL;
    size_t n_replay = 0;
    qr_blame_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    out->ctx = c;
    int rc = qr_topology_of_config(&c->topo, qr_scenario_config(s));
    if (rc) {
        qr_blame_free(out);
        return qri_err(errbuf, rc, "the recording's topology is not valid");
    }
    const qr_topology *t = c->topo;
    c->threshold = out->opts.threshold;
    c->adjust_ecmp = out->opts.adjust == QR_BLAME_ADJUST_ECMP;
    c->topo_known = qr_recording_network_known(rec);
    uint32_t n_links = qr_topology_links(t);
    c->n_dirs = qr_flow_table_directions(flows);
    size_t nd = c->n_dirs ? c->n_dirs : 1;
    c->cable_of = malloc(n_links * sizeof *c->cable_of);
    c->cable_link = malloc(n_links * sizeof *c->cable_link);
    c->dirs = calloc(nd, sizeof *c->dirs);
    link_drops = calloc(n_links, sizeof *link_drops);
    if (!c->cable_of || !c->cable_link || !c->dirs || !link_drops ||
        make_links(c, rec, out) != QR_OK) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    c->n_cables = (uint32_t)out->n_links;
    size_t ncab = c->n_cables ? c->n_cables : 1;
    c->votes = calloc(ncab, sizeof *c->votes);
    c->left = calloc(ncab, sizeof *c->left);
    c->voters = calloc(ncab, sizeof *c->voters);
    c->rank = calloc(ncab, sizeof *c->rank);
    c->flagged = calloc(ncab, 1);
    c->noise = calloc(ncab, 1);
    c->removed = calloc(nd, 1);
    c->order = calloc(ncab, sizeof *c->order);
    c->sort_tmp = calloc(ncab, sizeof *c->sort_tmp);
    if (!c->votes || !c->left || !c->voters || !c->rank || !c->flagged || !c->noise ||
        !c->removed || !c->order || !c->sort_tmp) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    dir_paths(c, rec, out);
    if (out->opts.arrivals && !c->topo_known) {
        rc = qri_err(errbuf, QR_EINVAL,
                     "a replay needs the network the packets crossed, and this recording's is "
                     "unknown");
        goto done;
    }
    if (out->opts.arrivals) {
        if (out->opts.progress)
            out->opts.progress(out->opts.progress_ctx, "blame: reading the replay's drops");
        rc = read_replay(out->opts.arrivals, c, &replay_ids, &n_replay, link_drops, errbuf);
        if (rc)
            goto done;
        out->has_replay = 1;
        for (uint32_t i = 0; i < c->n_topo; i++)
            out->links[i].replay_drops = link_drops[c->cable_link[i]] +
                                         link_drops[qr_topology_link_reverse(t, c->cable_link[i])];
    }
    count_losses(c, rec, replay_ids, n_replay, out);
    if (c->adjust_ecmp && qri_blame_ecmp_paths(c, rec)) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    /* the voters of each method, in the order of their first loss */
    out->n_summary = out->has_replay ? 2 : 1;
    size_t cap = 0;
    for (size_t m = 0; m < out->n_summary; m++) {
        c->voting[m] = malloc(nd * sizeof *c->voting[m]);
        if (!c->voting[m]) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t d = 0; d < c->n_dirs; d++)
            if (m ? c->dirs[d].unexplained : c->dirs[d].losses)
                c->voting[m][c->n_voting[m]++] = (uint32_t)d;
        qr_row_blame_summary *sm = &out->summary[m];
        for (size_t k = 0; k < c->n_voting[m]; k++) {
            const dir_info *x = &c->dirs[c->voting[m][k]];
            sm->untraced += x->hops == 0;
            sm->partial += x->hops > 0 && x->hops < x->len;
            sm->traced += x->hops > 0 && x->hops == x->len;
        }
        by_loss key = {c->dirs, (int)m};
        if (qri_sort(c->voting[m], c->n_voting[m], sizeof *c->voting[m], cmp_first_loss, &key) ||
            rule_curve(c, (int)m, out, &cap)) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            goto done;
        }
    }
    rc = after_votes(c, rec, flows, out, errbuf);
done:
    free(link_drops);
    free(replay_ids);
    if (rc)
        qr_blame_free(out);
    return rc;
}

void qr_blame_free(qr_blame *b)
{
    if (!b)
        return;
    free(b->links);
    free(b->conns);
    free(b->curve);
    free(b->blamed);
    free(b->epochs);
    free(b->epoch_links);
    ctx_free(b->ctx);
    memset(b, 0, sizeof *b);
}

const qr_topology *qr_blame_topology(const qr_blame *b)
{
    return b->ctx ? b->ctx->topo : NULL;
}

size_t qr_blame_directions(const qr_blame *b)
{
    return b->ctx ? b->ctx->n_dirs : 0;
}

uint32_t qr_blame_cable_of(const qr_blame *b, uint32_t link)
{
    return b->ctx && b->ctx->topo_known && link < qr_topology_links(b->ctx->topo)
               ? b->ctx->cable_of[link]
               : NONE;
}

int qr_blame_path(const qr_blame *b, uint32_t dir, const uint32_t **cables, uint32_t *hops,
                  uint32_t *len)
{
    if (!b->ctx || dir >= b->ctx->n_dirs || !b->ctx->dirs[dir].routed)
        return QR_ENOTFOUND;
    const dir_info *d = &b->ctx->dirs[dir];
    *cables = d->cables;
    *hops = d->hops;
    if (len)
        *len = d->len;
    return QR_OK;
}

uint32_t qr_blame_culprit(const qr_blame *b, size_t conn, int method)
{
    if (!b->ctx || conn >= b->n_conns || method < 0 || (size_t)method >= b->n_summary)
        return NONE;
    return b->ctx->culprit[method][conn];
}

const uint8_t *qr_blame_comparator_blamed(const qr_blame *b, int m)
{
    return b->ctx && m >= 0 && m < QR_COVER_METHODS ? b->ctx->comp_blamed[m] : NULL;
}

const uint8_t *qr_blame_epoch_flagged(const qr_blame *b, size_t i)
{
    if (!b->ctx || i >= b->n_epochs || !b->ctx->epoch_flagged)
        return NULL;
    return b->ctx->epoch_flagged + i * b->ctx->n_cables;
}

uint32_t qr_blame_comparator_culprit(const qr_blame *b, size_t conn, int m)
{
    if (!b->ctx || m < 0 || m >= QR_COVER_METHODS || !b->ctx->comp_culprit[m] || conn >= b->n_conns)
        return NONE;
    return b->ctx->comp_culprit[m][conn];
}

uint32_t qr_blame_rule(const qr_blame *b, int method, size_t k, uint32_t *rank, uint8_t *flagged)
{
    qr_blame_ctx *c = b->ctx;
    if (!c || method < 0 || (size_t)method >= b->n_summary)
        return 0;
    if (k > c->n_voting[method])
        k = c->n_voting[method];
    qri_rule_out r = qri_blame_rule_of(c, c->voting[method], k);
    if (rank)
        memcpy(rank, c->rank, c->n_cables * sizeof *rank);
    if (flagged)
        memcpy(flagged, c->flagged, c->n_cables);
    return r.flagged;
}

/* The ICMP check's root attributes (icmp_known 0: no counters recorded, nothing else). */
static int write_icmp(qr_h5 *f, const qr_blame_icmp *x, char *errbuf)
{
    int rc;
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_known", (uint64_t)x->known, errbuf));
    if (!x->known)
        return QR_OK;
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_per_host", x->per_host, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "icmp_epoch_ns", x->epoch_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_epochs", x->epochs, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_max_sent", x->max_sent, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_max_switch", x->max_switch, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "icmp_max_epoch", x->max_epoch, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_max_bound", x->max_bound, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_min_bound", x->min_bound, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_over", x->over, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "icmp_refused", x->refused, errbuf));
    return QR_OK;
fail:
    return rc;
}

int qr_blame_write(const char *path, const qr_scenario *s, const char *recording_id,
                   const qr_blame *b, char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay blame", recording_id, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "threshold", b->opts.threshold, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "arrivals", b->opts.arrivals ? b->opts.arrivals : "", errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "truth", b->truth, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "losses", b->losses, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "unexplained", b->unexplained, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/links", &qr_schema_blame_link, b->links, b->n_links, errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/connections", &qr_schema_blame_conn, b->conns, b->n_conns, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/curve", &qr_schema_blame_curve, b->curve, b->n_curve, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/summary", &qr_schema_blame_summary, b->summary, b->n_summary,
                             errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/comparators", &qr_schema_blame_comparator, b->comparators,
                             b->n_comparators, errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/blamed", &qr_schema_blame_blamed, b->blamed, b->n_blamed, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/epochs", &qr_schema_blame_epoch, b->epochs, b->n_epochs, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/epoch_links", &qr_schema_blame_epoch_link, b->epoch_links,
                             b->n_epoch_links, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "epoch_ns", b->epoch_ns, errbuf));
    QRI_TRY(write_icmp(f, &b->icmp, errbuf));
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}
