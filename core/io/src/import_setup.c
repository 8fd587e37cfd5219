/* qreplay import: the state for the connections the first pass kept (import.h). */
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

/* A connection's place in the flows' order. */
struct conn_order {
    int64_t key;
    size_t index;
};

static int cmp_conn_order(const void *a, const void *b)
{
    const struct conn_order *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The report's and the state's per-host and per-capture arrays. */
static int setup_alloc(struct imp *m)
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
    if (!rep->captures || !rep->hosts || !m->w || !m->nic_free || !m->cap_of_host ||
        !m->host_last_id || !m->reconstructed || !m->flow_of_conn || !m->caps)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < m->n_hosts; h++) {
        m->cap_of_host[h] = -1;
        m->host_last_id[h] = -1;
        rep->hosts[h].host = h;
        rep->hosts[h].clock.reference = h;
        rep->hosts[h].capture = -1;
    }
    return QR_OK;
}

/* Which capture each host's packets come from: the first holding it in view, every capture's
 * owner first (its own capture), then the hosts a router's or mirror's capture holds by timing;
 * the captures' and hosts' report rows, and the time base. */
static int setup_views(struct imp *m)
{
    const qr_import_scan *s = m->scan;
    qr_import_report *rep = m->rep;
    for (size_t i = 0; i < 2 * s->n_views; i++) {
        size_t v = i % s->n_views;
        if ((i < s->n_views) == (s->view_how[v] == QR_VANTAGE_TIMING))
            continue;
        int64_t h = qr_import_scan_host(s, s->view_addr[v]);
        uint32_t c = s->view_capture[v];
        struct cap_state *cs = &m->caps[c];
        uint32_t *grown = realloc(cs->view, (cs->n_view + 1) * sizeof *grown);
        if (!grown)
            return QR_ENOMEM;
        cs->view = grown;
        cs->view[cs->n_view++] = (uint32_t)h;
        if (m->cap_of_host[h] < 0) {
            m->cap_of_host[h] = (int32_t)c;
            rep->hosts[h].captured = 1;
            rep->hosts[h].capture = (int32_t)c;
            rep->hosts[h].vantage = s->view_how[v];
        }
    }
    int64_t first = INT64_MAX;
    for (size_t c = 0; c < s->n_captures; c++) {
        qsort(m->caps[c].view, m->caps[c].n_view, sizeof *m->caps[c].view, qri_cmp_u32);
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
    return QR_OK;
}

/* An empty recording is no recording: what the captures held instead. */
static int no_flows(const struct imp *m)
{
    const qr_import_scan *s = m->scan;
    size_t same = 0, unplaced = 0;
    for (size_t i = 0; i < s->n_conns; i++) {
        int64_t a = qr_import_scan_host(s, s->conns[i].addr[0]),
                b = qr_import_scan_host(s, s->conns[i].addr[1]);
        same += a >= 0 && a == b;
        unplaced += a < 0 || b < 0;
    }
    return qri_err(m->errbuf, QR_ENOTFOUND,
                   "no usable TCP connection in the captures: %zu connection%s seen, %zu "
                   "between addresses of one host, %zu with an address that is no host",
                   s->n_conns, s->n_conns == 1 ? "" : "s", same, unplaced);
}

/* The flows: every connection between two distinct hosts, in the order their initiators opened
 * them, on each initiator's own clock where its capture saw it (else first appearance): a host's
 * flows, and so their sender ports and ECMP paths, come in the order it opened them, as in a
 * simulated run. */
static int setup_flows(struct imp *m)
{
    const qr_import_scan *s = m->scan;
    qr_flow *flows = malloc((s->n_conns + 1) * sizeof *flows);
    struct conn_order *order = malloc((s->n_conns ? s->n_conns : 1) * sizeof *order);
    if (!flows || !order) {
        free(flows);
        free(order);
        return QR_ENOMEM;
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
            m->n_flows, (uint32_t)a, (uint32_t)b, c->bytes[0], c->first_ns - m->rep->time_base_ns,
            0};
        m->n_flows++;
    }
    free(order);
    m->rep->connections = m->n_flows;
    char detail[QR_ERRBUF_SIZE];
    int rc = m->n_flows ? qr_flow_table_for_topology(&m->ft, flows, m->n_flows, m->topo, detail)
                        : no_flows(m);
    if (rc && m->n_flows)
        rc = qri_err(m->errbuf, rc, "the captured connections do not fit the topology: %s", detail);
    free(flows);
    return rc;
}

/* Each direction's state: its hosts, what orders its packets, and the evidence it has. */
static void setup_dir(struct imp *m, const qr_import_conn *c, int side, struct dir_state *d)
{
    const qr_import_scan *s = m->scan;
    d->src = (uint32_t)qr_import_scan_host(s, c->addr[side]);
    d->dst = (uint32_t)qr_import_scan_host(s, c->addr[!side]);
    d->family = c->family;
    /* IDs that rise along the direction (one counter per connection or per host, a packet
     * overtaken on the way a step back) order its packets, over the whole capture; constant or
     * random ones do not (a random step is within QR_IPID_MAX_GAP either way 1 time in 32) */
    uint64_t up = c->id_up[side], near = up + c->id_back[side];
    d->ids_count_up = c->family == 4 && up >= 3 && near >= 9 * (near + c->id_other[side]) / 10;
    d->sent.size = sizeof(struct sent_ent);
    d->late.size = sizeof(struct sent_ent);
    d->recv.size = sizeof(struct recv_ent);
    d->rtx.size = sizeof(struct rtx_ent);
    int sc = m->cap_of_host[d->src] >= 0, rcv = m->cap_of_host[d->dst] >= 0;
    d->evidence = sc && rcv        ? QR_EVIDENCE_BOTH
                  : sc             ? QR_EVIDENCE_RETRANS
                  : c->family == 4 ? QR_EVIDENCE_IPID
                                   : QR_EVIDENCE_NONE;
    m->rep->directions[d->evidence]++;
    if (!sc)
        m->reconstructed[d->src] = 1;
}

int qri_imp_setup(struct imp *m)
{
    const qr_import_scan *s = m->scan;
    int rc = setup_alloc(m);
    if (!rc)
        rc = setup_views(m);
    if (!rc)
        rc = setup_flows(m);
    if (rc)
        return rc;
    m->dirs = calloc(2 * m->n_flows + 1, sizeof *m->dirs);
    m->ftimes = malloc((m->n_flows + 1) * sizeof *m->ftimes);
    if (!m->dirs || !m->ftimes)
        return QR_ENOMEM;
    for (size_t f = 0; f < m->n_flows; f++)
        m->ftimes[f] = (struct flow_times){INT64_MAX, INT64_MIN, 0, 0};
    for (size_t i = 0; i < s->n_conns; i++)
        for (int side = 0; m->flow_of_conn[i] >= 0 && side < 2; side++)
            setup_dir(m, &s->conns[i], side,
                      &m->dirs[2 * (uint32_t)m->flow_of_conn[i] + (uint32_t)side]);
    for (uint32_t h = 0; h < m->n_hosts; h++)
        m->rep->hosts[h].reconstructed = m->reconstructed[h];
    return qri_imp_index_dirs(m);
}
