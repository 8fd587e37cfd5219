/* qreplay import: the recording's HDF5 file (import.h). */
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

/* Connection i's /flows and /import/connections rows, on the reconciled clock (shift); returns
 * its last packet's time, 0 if none was seen. */
static int64_t flow_rows(const struct imp *m, size_t i, const int64_t *shift, qr_row_flow *flows,
                         qr_row_import_conn *conns)
{
    int64_t end = 0;
    if (m->flow_of_conn[i] < 0)
        return 0;
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
    return end;
}

/* Host h's /hosts and /import/hosts rows. */
static void host_rows(const struct imp *m, uint32_t h, qr_row_host *hosts, qr_row_import_host *ih)
{
    const qr_import_host_report *hr = &m->rep->hosts[h];
    hosts[h] = (qr_row_host){h, qr_topology_host_addr(m->topo, h), 0, hr->packets, hr->bytes, ""};
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

/* Capture c's /import/captures row. */
static void capture_row(const qr_import_report *rep, size_t c, qr_row_import_capture *caps)
{
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

/* The import's attributes on /import: how the clocks and paths were taken, what was counted. */
static int import_attrs(const struct imp *m, qr_h5 *f)
{
    const qr_import_report *rep = m->rep;
    int rc = QR_OK;
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
fail:
    return rc;
}

int qri_imp_write_h5(struct imp *m, const qr_scenario *sc, const int64_t *shift)
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
        int64_t e = flow_rows(m, i, shift, flows, conns);
        if (e > end)
            end = e;
    }
    for (uint32_t h = 0; h < m->n_hosts; h++)
        host_rows(m, h, hosts, ih);
    for (size_t c = 0; c < rep->n_captures; c++)
        capture_row(rep, c, caps);
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
    if (m->cfg->icmp)
        QRI_TRY(
            qr_h5_write_rows(f, "/icmp", &qr_schema_icmp, m->cfg->icmp, m->cfg->n_icmp, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/import/captures", &qr_schema_import_capture, caps,
                             rep->n_captures, m->errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/import/hosts", &qr_schema_import_host, ih, m->n_hosts, m->errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/import/connections", &qr_schema_import_conn, conns, m->n_flows,
                             m->errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/import/late", &qr_schema_received, m->late, m->n_late, m->errbuf));
    QRI_TRY(import_attrs(m, f));
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
