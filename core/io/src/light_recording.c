/* A light record and its regenerated packets turned into the recording a queue replay reads
 * (light.h). */
#define _GNU_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "light_internal.h"
#include "plan_internal.h"
#include "qreplay/fs.h"
#include "qreplay/light.h"
#include "qreplay/tcpconn.h"
#include "qreplay/txn.h"
#include "recording_internal.h"

static int same_headers(const qr_packet *a, const qr_packet *b)
{
    return a->tcp_flags == b->tcp_flags && a->seq == b->seq && a->ack == b->ack &&
           a->window == b->window && a->ip_len == b->ip_len && a->ip_id == b->ip_id &&
           a->tos == b->tos && a->ttl == b->ttl && a->tcp_opt_len == b->tcp_opt_len &&
           a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->src_port == b->src_port &&
           a->dst_port == b->dst_port;
}

/* Every packet of check against the regenerated one of r (whose hosts hold their directions in
 * order, each from at[d]). */
static int check_packets(const qr_recording *r, const qr_recording *check, const size_t *at,
                         const size_t *n, size_t n_dirs, uint64_t *compared, char *errbuf)
{
    size_t *seen = calloc(n_dirs + 1, sizeof *seen);
    if (!seen)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = QR_OK;
    uint64_t count = 0;
    for (uint32_t h = 0; !rc && h < qr_recording_hosts(check); h++) {
        size_t m;
        const qr_rec_packet *p = qr_recording_packets(check, h, &m);
        for (size_t i = 0; !rc && i < m; i++) {
            uint32_t d = p[i].dir;
            if (d >= n_dirs || p[i].seq >= n[d]) {
                rc = qri_err(errbuf, QR_EVALUE,
                             "flow %u %s: the recording has packet %u, %zu were regenerated", d / 2,
                             d % 2 ? "ACKs" : "data", p[i].seq, d < n_dirs ? n[d] : 0);
                break;
            }
            const qr_packet *a = &p[i].pk, *b = &r->hosts[qr_flow_table_dir_src(r->flows, d)]
                                                     .pk[at[d] + p[i].seq]
                                                     .pk;
            if (!same_headers(a, b))
                rc = qri_err(errbuf, QR_EVALUE,
                             "flow %u %s packet %u: regenerated flags 0x%02x seq %u ack %u win %u "
                             "len %u id %u tos 0x%02x; the recording has flags 0x%02x seq %u ack "
                             "%u win %u len %u id %u tos 0x%02x",
                             d / 2, d % 2 ? "ACKs" : "data", p[i].seq, b->tcp_flags, b->seq, b->ack,
                             b->window, b->ip_len, b->ip_id, b->tos, a->tcp_flags, a->seq, a->ack,
                             a->window, a->ip_len, a->ip_id, a->tos);
            seen[d]++;
            count++;
        }
    }
    for (size_t d = 0; !rc && d < n_dirs; d++)
        if (seen[d] != n[d])
            rc = qri_err(errbuf, QR_EVALUE,
                         "flow %zu %s: %zu packets regenerated, the recording has %zu", d / 2,
                         d % 2 ? "ACKs" : "data", n[d], seen[d]);
    free(seen);
    if (!rc && compared)
        *compared = count;
    return rc;
}

int qr_recording_from_light(qr_recording **out, const qr_light *l, const qr_packet *const *packets,
                            const size_t *n, const qr_recording *check, uint64_t *compared,
                            char *errbuf)
{
    *out = NULL;
    if (l->why[0])
        return qri_err(errbuf, QR_ESTATE, "%s: its packets cannot be regenerated: %s", l->path,
                       l->why);
    for (size_t d = 0; d < l->n_dirs; d++)
        if (n[d] != l->dirs[d].n)
            return qri_err(errbuf, QR_EVALUE,
                           "direction %zu (flow %zu): %zu packets regenerated, the record has %u",
                           d, d / 2, n[d], l->dirs[d].n);
    qr_recording *r = calloc(1, sizeof *r);
    if (!r)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    char detail[QR_ERRBUF_SIZE];
    qr_topology *topo = NULL;
    int rc = qr_scenario_create(&r->scenario);
    if (!rc)
        rc = qr_scenario_load_string(r->scenario, l->scenario_text, l->path, ".", detail);
    if (!rc)
        rc = qr_topology_of_config(&topo, qr_scenario_config(r->scenario));
    if (!rc)
        rc = qr_flow_table_for_topology(&r->flows, l->flows, l->n_flows, topo, detail);
    qr_topology_destroy(topo);
    if (rc) {
        qr_recording_close(r);
        return qri_err(errbuf, rc, "%s: %s", l->path, detail);
    }
    snprintf(r->id, sizeof r->id, "%s", l->id);
    r->n_hosts = l->n_hosts;
    r->hosts = calloc(l->n_hosts, sizeof *r->hosts);
    r->dir = strdup(".");
    size_t n_det = 0;
    for (size_t i = 0; i < l->st.packets; i++)
        n_det += (l->flags[i] & F_DETECTED) != 0;
    r->detected = malloc((n_det ? n_det : 1) * sizeof *r->detected);
    r->received = malloc(sizeof *r->received);
    if (!r->hosts || !r->dir || !r->detected || !r->received) {
        qr_recording_close(r);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    r->network_known = 1;
    /* each host's packets: its directions in order, each in its order */
    for (size_t d = 0; d < l->n_dirs; d++)
        r->hosts[qr_flow_table_dir_src(r->flows, (uint32_t)d)].cap += n[d];
    for (uint32_t h = 0; h < l->n_hosts; h++) {
        struct host_pk *hp = &r->hosts[h];
        hp->pk = malloc((hp->cap ? hp->cap : 1) * sizeof *hp->pk);
        if (!hp->pk) {
            qr_recording_close(r);
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
        }
    }
    size_t *at = malloc((l->n_dirs + 1) * sizeof *at); /* each direction's first in its host */
    if (!at) {
        qr_recording_close(r);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (size_t d = 0; d < l->n_dirs; d++) {
        /* the runtime's addresses and ports (the replay ran on its own two hosts), the sender's
         * clock */
        const qr_flow *f = qr_flow_table_flow(r->flows, (uint32_t)(d / 2));
        uint32_t src = d % 2 ? f->dst : f->src, dst = d % 2 ? f->src : f->dst;
        uint16_t sender = qr_flow_table_sender_port(r->flows, (uint32_t)(d / 2));
        struct host_pk *hp = &r->hosts[src];
        at[d] = hp->n;
        for (size_t j = 0; j < n[d]; j++) {
            uint8_t fl = l->flags[l->dirs[d].at + j];
            qr_rec_packet *p = &hp->pk[hp->n];
            *p = (qr_rec_packet){packets[d][j], (uint32_t)d, (uint32_t)j,
                                 (uint8_t)((fl & F_DETECTED) != 0)};
            p->pk.time_ns += l->offsets[src];
            p->pk.src_ip = qr_flow_table_host_addr(r->flows, src);
            p->pk.dst_ip = qr_flow_table_host_addr(r->flows, dst);
            p->pk.src_port = d % 2 ? QR_SINK_PORT : sender;
            p->pk.dst_port = d % 2 ? sender : QR_SINK_PORT;
            hp->n++;
            if (fl & F_DETECTED)
                r->detected[r->n_detected++] = qr_packet_id((uint32_t)d, (uint32_t)j);
        }
    }
    qsort(r->detected, r->n_detected, sizeof *r->detected, qri_cmp_u64);
    int crc = check ? check_packets(r, check, at, n, l->n_dirs, compared, errbuf) : QR_OK;
    free(at);
    if (crc) {
        qr_recording_close(r);
        return crc;
    }
    *out = r;
    return QR_OK;
}

int qr_light_plan(qr_plan **out, const qr_light *l, const qr_recording *rec,
                  qr_sampling_method method, int64_t th_ns, qr_sampling_stats *stats,
                  qr_row_sample_record **records, size_t *n_records, char *errbuf)
{
    *out = NULL;
    size_t ti = 0;
    while (ti < l->st.n_th && l->st.th_ns[ti] != th_ns)
        ti++;
    if (ti == l->st.n_th || method != l->method) {
        char list[256] = "";
        for (size_t i = 0; i < l->st.n_th; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%" PRId64 " ns",
                     i ? ", " : "", l->st.th_ns[i]);
        return qri_err(errbuf, QR_EINVAL,
                       "%s holds send times sampled (%s) at %s; not at %" PRId64 " ns (%s)",
                       l->path, l->method == QR_SAMPLING_GAP ? "gap" : "rate", list, th_ns,
                       method == QR_SAMPLING_GAP ? "gap" : "rate");
    }
    if (qr_recording_hosts(rec) != l->n_hosts || strcmp(qr_recording_id(rec), l->id))
        return qri_err(errbuf, QR_EINVAL, "%s: the packets are not regenerated from this record",
                       l->path);
    qr_sampling_stats st = {0, 0, 0};
    size_t n_out = 0;
    qr_row_sample_record *o =
        records ? malloc((l->st.th_records[ti] ? l->st.th_records[ti] : 1) * sizeof *o) : NULL;
    qr_plan *p = NULL;
    uint32_t *group = NULL;
    size_t gcap = 0;
    int rc = records && !o ? QR_ENOMEM : qri_plan_alloc(&p, rec);
    for (uint32_t h = 0; !rc && h < l->n_hosts; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(rec, h, &n);
        /* the host's packets: its directions in order, each in its order */
        for (size_t i = 0; !rc && i < n;) {
            uint32_t d = pk[i].dir;
            const qr_sample_record *rv = l->recs[ti][d];
            size_t nr = l->n_recs[ti][d], pos = 0;
            size_t e = i;
            for (; e < n && pk[e].dir == d; e++)
                if (qr_sample_infer_next(rv, nr, &pos, pk[e].seq, &p->time[h][e]) != QR_OK) {
                    rc = qri_err(errbuf, QR_EVALUE, "%s: direction %u packet %u: no inference",
                                 l->path, d, pk[e].seq);
                    break;
                }
            st.packets += e - i;
            st.records += nr;
            for (size_t j = 0; !rc && o && j < nr; j++)
                o[n_out++] = (qr_row_sample_record){d, rv[j].index, rv[j].time_ns, rv[j].gap_num,
                                                    rv[j].gap_den};
            i = e;
        }
        if (rc || (rc = qri_plan_order_host(p, h)) != QR_OK)
            break;
        /* the groups of equal times whose send order the record keeps */
        const struct lhost_order *g = &l->order[ti][h];
        uint32_t *ord = p->order[h];
        for (size_t k = 0; k < g->n; k++) {
            const struct lgroup *x = &g->g[k];
            if (x->pos + x->m > n) {
                rc = qri_err(errbuf, QR_EFORMAT, "%s: host %u: an order group beyond its packets",
                             l->path, h);
                break;
            }
            if (x->m > gcap) {
                free(group);
                if (!(group = malloc((gcap = x->m) * sizeof *group))) {
                    rc = QR_ENOMEM;
                    break;
                }
            }
            for (uint32_t q = 0; q < x->m; q++)
                group[q] = ord[x->pos + x->rank[q]];
            memcpy(ord + x->pos, group, x->m * sizeof *group);
        }
    }
    free(group);
    return qri_plan_hand_over(rc, p, o, n_out, &st, out, stats, records, n_records, errbuf);
}
