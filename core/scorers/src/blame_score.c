/* 007's blame scored against the ground truth (blame_score.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/blame_score.h"
#include "qreplay/buffer.h"
#include "qreplay/linkfault.h"
#include "qreplay/truth.h"

#define NONE UINT32_MAX
#define MAX_PATH 8

/* The cables of direction dir's true path (the one its 5-tuple took) and its uplink. */
static int true_path(const qr_blame *b, const qr_flow_table *flows, const qr_truth *tr,
                     uint32_t dir, uint32_t cables[MAX_PATH], uint32_t *hops, uint32_t *uplink)
{
    uint32_t links[MAX_PATH];
    size_t n = 0;
    if (tr->n_true_paths) { /* the truth's own paths (a testbed's kernels chose them) */
        for (size_t i = 0; i < tr->n_true_paths; i++) {
            const qr_row_path *r = &tr->true_paths[i];
            uint32_t ids[2];
            size_t k;
            char err[QR_ERRBUF_SIZE];
            if (r->dir != dir)
                continue;
            if (n == MAX_PATH || !r->link[0] ||
                qr_topology_link_parse(qr_blame_topology(b), r->link, ids, &k, err))
                return QR_ENOTFOUND;
            links[n++] = ids[0]; /* its direction does not matter: cables are both */
        }
        if (!n)
            return QR_ENOTFOUND;
        for (size_t h = 0; h < n; h++)
            cables[h] = qr_blame_cable_of(b, links[h]);
        *hops = (uint32_t)n;
        if (uplink)
            *uplink = links[0]; /* "hS-sE": the host's uplink first */
        return QR_OK;
    }
    if (qr_dir_links(flows, qr_blame_topology(b), dir, links, MAX_PATH, &n) || n > MAX_PATH)
        return QR_ENOTFOUND;
    for (size_t h = 0; h < n; h++)
        cables[h] = qr_blame_cable_of(b, links[h]);
    *hops = (uint32_t)n;
    if (uplink)
        *uplink = links[0];
    return QR_OK;
}

static double ratio(uint32_t a, uint32_t b)
{
    return b ? (double)a / b : NAN;
}

/* Truth per connection row: drops (all, and fault drops) at each position of its path. */
typedef struct conn_truth {
    uint32_t drops[MAX_PATH], fault[MAX_PATH];
} conn_truth;

/* The faulty cables and every drop charged to its cable and to the connection rows' paths. */
static int charge(const qr_blame *b, const qr_flow_table *flows, const qr_truth *tr,
                  const char *path, uint8_t *faulty, uint32_t *n_faulty, qr_row_blame_link *links,
                  conn_truth *ct, char *errbuf)
{
    const qr_topology *t = qr_blame_topology(b);
    uint32_t n_links = qr_topology_links(t);
    uint8_t *dirfaulty = calloc(n_links, 1);
    uint32_t *row_of = NULL; /* direction -> connection row + 1 (0: none) */
    uint32_t n_dirs = 0;
    for (size_t i = 0; i < b->n_conns; i++)
        if (b->conns[i].dir + 1 > n_dirs)
            n_dirs = b->conns[i].dir + 1;
    row_of = calloc(n_dirs ? n_dirs : 1, sizeof *row_of);
    if (!dirfaulty || !row_of) {
        free(dirfaulty);
        free(row_of);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < b->n_conns; i++)
        row_of[b->conns[i].dir] = (uint32_t)i + 1;
    int rc = qr_truth_drop_faults(tr, n_links, dirfaulty, path, errbuf) < 0 ? QR_EFORMAT : QR_OK;
    for (uint32_t l = 0; !rc && l < n_links; l++)
        if (dirfaulty[l]) {
            uint32_t cable = qr_blame_cable_of(b, l);
            *n_faulty += !faulty[cable];
            faulty[cable] = 1;
        }
    for (size_t i = 0; !rc && i < tr->n_drops; i++) {
        const qr_row_drop *x = &tr->drops[i];
        uint32_t cables[MAX_PATH];
        uint32_t hops = 0, uplink = 0;
        if (x->sw < qr_topology_switches(t) && x->port == UINT32_MAX &&
            x->reason != QR_DROP_FAULT && x->dir < qr_blame_directions(b))
            continue; /* a testbed's queue drop whose port no capture shows: no cable to charge */
        if (x->sw >= qr_topology_switches(t) || x->port >= qr_topology_ports(t, x->sw) ||
            x->dir >= qr_blame_directions(b)) {
            rc =
                qri_err(errbuf, QR_EFORMAT,
                        "%s: /drops row %zu: switch %u port %u direction %u is not the recording's",
                        path, i + 1, x->sw, x->port, x->dir);
            break;
        }
        int routed = true_path(b, flows, tr, x->dir, cables, &hops, &uplink) == QR_OK;
        uint32_t link = qr_topology_port_link(t, x->sw, x->port);
        int fault = x->reason == QR_DROP_FAULT;
        /* a fault drop on a host's uplink is taken at its edge switch (linkfault.h) */
        if (fault && routed) {
            qr_node host, edge;
            uint32_t port;
            qr_topology_link_ends(t, uplink, &host, &edge, &port);
            link = qr_fault_drop_link(t, dirfaulty, x->sw, x->port, host.index);
        }
        uint32_t cable = qr_blame_cable_of(b, link);
        if (fault)
            links[cable].fault_drops++;
        else
            links[cable].congestion_drops++;
        uint32_t row = x->dir < n_dirs ? row_of[x->dir] : 0;
        for (uint32_t h = 0; row && routed && h < hops; h++)
            if (cables[h] == cable) {
                ct[row - 1].drops[h]++;
                ct[row - 1].fault[h] += (uint32_t)fault;
                break;
            }
    }
    free(dirfaulty);
    free(row_of);
    return rc;
}

/* The detection curve of method m scored: each step's best rank of a faulty cable and faulty
 * cables flagged; detect@ and rank1@ of the method's summary. */
static int score_curve(qr_blame *b, int m, const uint8_t *faulty, uint32_t n_faulty, uint32_t *rank,
                       uint8_t *flagged)
{
    uint32_t detect = 0, rank1 = 0;
    const char *name = qr_blame_method_name(m);
    for (size_t i = 0; i < b->n_curve; i++) {
        qr_row_blame_curve *row = &b->curve[i];
        if (strcmp(row->method, name))
            continue;
        qr_blame_rule(b, m, row->connections, rank, flagged);
        uint32_t fault_rank = 0, true_flagged = 0;
        for (size_t c = 0; c < b->n_links; c++) {
            if (!faulty[c])
                continue;
            true_flagged += flagged[c];
            if (rank[c] && (!fault_rank || rank[c] < fault_rank))
                fault_rank = rank[c];
        }
        row->fault_rank = fault_rank;
        row->true_flagged = true_flagged;
        /* with no fault planted there is nothing to be precise about: unknown, not 0 */
        row->precision = n_faulty ? ratio(true_flagged, row->flagged) : NAN;
        row->recall = ratio(true_flagged, n_faulty);
        int all = n_faulty && true_flagged == n_faulty;
        if (all && !detect)
            detect = row->connections;
        else if (!all)
            detect = 0;
        if (fault_rank == 1 && !rank1)
            rank1 = row->connections;
        else if (fault_rank != 1)
            rank1 = 0;
    }
    qr_row_blame_summary *sm = &b->summary[m];
    uint32_t true_flagged = 0;
    for (size_t c = 0; c < b->n_links; c++)
        true_flagged += faulty[c] && (m ? b->links[c].replay_flagged : b->links[c].flagged);
    sm->true_flagged = true_flagged;
    sm->faulty = n_faulty;
    sm->precision = n_faulty ? ratio(true_flagged, sm->flagged) : NAN;
    sm->recall = ratio(true_flagged, n_faulty);
    sm->detect_after = detect;
    sm->rank1_after = rank1;
    return QR_OK;
}

int qr_blame_score(qr_blame *b, const qr_recording *rec, const char *truth_path, char *errbuf)
{
    if (!qr_blame_topology(b))
        return qri_err(errbuf, QR_EINVAL, "blame: nothing to score (no qr_blame_run result)");
    if (!qr_recording_network_known(rec))
        return qri_err(errbuf, QR_EINVAL,
                       "blame: the recording's network is unknown: its links are not the truth's");
    const qr_flow_table *flows = qr_recording_flows(rec);
    qr_truth tr;
    int rc = qr_truth_read(truth_path, &tr, errbuf);
    if (rc)
        return rc;
    size_t nc = b->n_links ? b->n_links : 1;
    uint8_t *faulty = calloc(nc, 1), *flagged = calloc(nc, 1);
    uint32_t *rank = calloc(nc, sizeof *rank), n_faulty = 0;
    qr_row_blame_link *links = malloc(nc * sizeof *links);
    conn_truth *ct = calloc(b->n_conns ? b->n_conns : 1, sizeof *ct);
    if (!faulty || !flagged || !rank || !links || !ct) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(links, b->links, b->n_links * sizeof *links);
    for (size_t c = 0; c < b->n_links; c++)
        links[c].fault_drops = links[c].congestion_drops = 0;
    if ((rc = charge(b, flows, &tr, truth_path, faulty, &n_faulty, links, ct, errbuf)))
        goto done;
    /* from here on nothing fails: b changes */
    for (size_t c = 0; c < b->n_links; c++) {
        links[c].faulty = faulty[c];
        b->links[c] = links[c];
    }
    for (size_t m = 0; m < b->n_summary; m++)
        score_curve(b, (int)m, faulty, n_faulty, rank, flagged);
    for (size_t m = 0; m < b->n_comparators; m++) {
        qr_row_blame_comparator *cm = &b->comparators[m];
        const uint8_t *blamed = qr_blame_comparator_blamed(b, (int)m);
        cm->true_flagged = 0;
        for (size_t c = 0; blamed && c < b->n_links; c++)
            cm->true_flagged += faulty[c] && blamed[c];
        cm->faulty = n_faulty;
        cm->precision = n_faulty ? ratio(cm->true_flagged, cm->flagged) : NAN;
        cm->recall = ratio(cm->true_flagged, n_faulty);
    }
    for (size_t i = 0; i < b->n_epochs; i++) {
        qr_row_blame_epoch *ep = &b->epochs[i];
        const uint8_t *fl = qr_blame_epoch_flagged(b, i);
        ep->true_flagged = 0;
        for (size_t c = 0; fl && c < b->n_links; c++)
            ep->true_flagged += faulty[c] && fl[c];
        ep->faulty = n_faulty;
        ep->precision = n_faulty ? ratio(ep->true_flagged, ep->flagged) : NAN;
        ep->recall = ratio(ep->true_flagged, n_faulty);
    }
    uint32_t right[2] = {0, 0}, scored = 0, comp_right[QR_COVER_METHODS] = {0};
    for (size_t i = 0; i < b->n_conns; i++) {
        qr_row_blame_conn *row = &b->conns[i];
        uint32_t cables[MAX_PATH];
        uint32_t hops = 0;
        row->correct = row->replay_correct = -1;
        row->true_link[0] = '\0';
        snprintf(row->true_cause, sizeof row->true_cause, "%s", "none");
        if (true_path(b, flows, &tr, row->dir, cables, &hops, NULL))
            continue;
        uint32_t h = qri_argmax_u32(ct[i].drops, hops);
        if (h == NONE)
            continue;
        uint32_t tc = cables[h];
        snprintf(row->true_link, sizeof row->true_link, "%s", b->links[tc].name);
        snprintf(row->true_cause, sizeof row->true_cause, "%s",
                 2 * ct[i].fault[h] > ct[i].drops[h] ? "fault" : "congestion");
        scored++;
        row->correct = qr_blame_culprit(b, i, QR_BLAME_007) == tc;
        right[0] += (uint32_t)row->correct;
        if (b->has_replay) {
            row->replay_correct = qr_blame_culprit(b, i, QR_BLAME_REPLAY) == tc;
            right[1] += (uint32_t)row->replay_correct;
        }
        for (size_t m = 0; m < b->n_comparators; m++)
            comp_right[m] += qr_blame_comparator_culprit(b, i, (int)m) == tc;
    }
    for (size_t m = 0; m < b->n_comparators; m++) {
        b->comparators[m].scored = scored;
        b->comparators[m].culprit_accuracy = ratio(comp_right[m], scored);
    }
    for (size_t m = 0; m < b->n_summary; m++) {
        b->summary[m].scored = scored;
        b->summary[m].culprit_accuracy = ratio(right[m], scored);
    }
    b->has_truth = 1;
    snprintf(b->truth, sizeof b->truth, "%s", truth_path);
done:
    free(faulty);
    free(flagged);
    free(rank);
    free(links);
    free(ct);
    qr_truth_free(&tr);
    return rc;
}
