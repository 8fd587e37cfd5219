/* The fabric truth's tables for people: its ports and paths as CSV, and Everflow's mirror of the
 * guided probes (fabric_truth.h). */
#include <inttypes.h>
#include <stdio.h>

#include "qreplay/error.h"
#include "qreplay/fabric_truth.h"
#include "qreplay/fs.h"
#include "qreplay/topology.h"
#include "qreplay/txn.h"

struct csv_ctx {
    const qr_fabric *fab;
    const qr_fabric_truth_report *r;
};

static void write_ports(FILE *f, const void *vctx)
{
    const struct csv_ctx *c = vctx;
    const qr_topology *t = qr_fabric_topology(c->fab);
    fprintf(f, "switch,port,peer,in,out,queue_drops,qdisc_drops,max_queue_bytes\n");
    for (uint32_t q = 0; q < c->r->n_ports; q++) {
        const qr_fabric_port_report *p = &c->r->ports[q];
        qr_node_kind pk;
        uint32_t peer, pp;
        qr_topology_link(t, p->sw, p->port, &pk, &peer, &pp);
        fprintf(f, "s%u,%u,%s%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                p->sw, p->port, pk == QR_NODE_HOST ? "h" : "s", peer, p->in, p->out, p->queue_drops,
                p->qdisc_drops, p->max_queue_bytes);
    }
}

static void write_paths(FILE *f, const void *vctx)
{
    const qr_fabric_truth_report *r = ((const struct csv_ctx *)vctx)->r;
    fprintf(f, "dir,flow,src,dst,sport,dport,hops,path\n");
    for (size_t d = 0; d < r->n_dirs; d++) {
        fprintf(f, "%zu,%u,%u,%u,%u,%u,%u,", d, qr_dir_flow((uint32_t)d), r->dir_src[d],
                r->dir_dst[d], r->dir_sport[d], r->dir_dport[d], r->dir_hops[d]);
        for (uint32_t h = 0; h < r->dir_hops[d]; h++)
            fprintf(f, "%ss%u", h ? " " : "", r->dir_path[d][h]);
        fputc('\n', f);
    }
}

int qr_fabric_truth_write(const char *fabric_csv, const char *paths_csv, const qr_fabric *fab,
                          const qr_fabric_truth_report *r, char *errbuf)
{
    struct csv_ctx c = {fab, r};
    int rc = qr_write_text_file(fabric_csv, write_ports, &c, errbuf);
    if (!rc)
        rc = qr_write_text_file(paths_csv, write_paths, &c, errbuf);
    return rc;
}

/* ---- Everflow's mirror of the guided probes ---- */

struct mirror_ctx {
    const qr_fabric *fab;
    const qr_fabric_truth_report *r;
    const uint64_t *drops;
    int64_t base;
    int bounce; /* the switches' link round-trip probes (their source is no host), else the
                   agents' guided probes */
};

#define COPIES_HEADER "src,dst,sport,seq,switch,port,dir,time_ns\n"

static void put_copy(FILE *f, const qr_fabric_mirror_copy *x, int64_t base)
{
    fprintf(f, "%u.%u.%u.%u,%u.%u.%u.%u,%u,%u,s%u,%u,%s,%" PRId64 "\n", x->src >> 24,
            x->src >> 16 & 255, x->src >> 8 & 255, x->src & 255, x->dst >> 24, x->dst >> 16 & 255,
            x->dst >> 8 & 255, x->dst & 255, x->sport, x->seq, x->sw, x->port,
            x->out ? "out" : "in", x->t - base);
}

static void write_copies(FILE *f, const void *vctx)
{
    const struct mirror_ctx *c = vctx;
    fprintf(f, COPIES_HEADER);
    const qr_topology *t = qr_fabric_topology(c->fab);
    for (size_t i = 0; i < c->r->n_mirror; i++) {
        const qr_fabric_mirror_copy *x = &c->r->mirror[i];
        uint32_t h;
        if ((qr_topology_host_of_addr(t, x->src, &h) != 0) != c->bounce)
            continue;
        put_copy(f, x, c->base);
    }
}

struct bounce_ctx {
    const qr_fabric_mirror_copy *c;
    size_t n;
};

static void write_bounce(FILE *f, const void *vctx)
{
    const struct bounce_ctx *b = vctx;
    fprintf(f, COPIES_HEADER);
    for (size_t i = 0; i < b->n; i++)
        put_copy(f, &b->c[i], 0);
}

int qr_bounce_copies_write(const char *mirror_dir, const qr_fabric_mirror_copy *copies, size_t n,
                           char *errbuf)
{
    struct bounce_ctx b = {copies, n};
    char path[4200];
    int rc = qr_make_dirs(mirror_dir, errbuf);
    snprintf(path, sizeof path, "%s/bounce.csv", mirror_dir);
    return rc ? rc : qr_write_text_file(path, write_bounce, &b, errbuf);
}

static void write_counters(FILE *f, const void *vctx)
{
    const struct mirror_ctx *c = vctx;
    const qr_topology *t = qr_fabric_topology(c->fab);
    uint32_t k = qr_topology_ports(t, 0);
    fprintf(f, "switch,port,drops\n");
    for (uint32_t sw = 0; sw < qr_topology_switches(t); sw++)
        for (uint32_t p = 0; p < qr_topology_ports(t, sw); p++)
            fprintf(f, "s%u,%u,%" PRIu64 "\n", sw, p, c->drops[sw * k + p]);
}

int qr_fabric_mirror_write(const char *mirror_dir, const qr_fabric *fab,
                           const qr_fabric_truth_report *r, const uint64_t *sweep_drops,
                           int64_t base_ns, char *errbuf)
{
    if (!r->n_mirror)
        return QR_OK;
    struct mirror_ctx c = {fab, r, sweep_drops, base_ns, 0};
    char path[4200];
    int rc = qr_make_dirs(mirror_dir, errbuf);
    snprintf(path, sizeof path, "%s/guided.csv", mirror_dir);
    if (!rc)
        rc = qr_write_text_file(path, write_copies, &c, errbuf);
    c.bounce = 1;
    snprintf(path, sizeof path, "%s/bounce.csv", mirror_dir);
    if (!rc)
        rc = qr_write_text_file(path, write_copies, &c, errbuf);
    snprintf(path, sizeof path, "%s/counters.csv", mirror_dir);
    if (!rc && sweep_drops)
        rc = qr_write_text_file(path, write_counters, &c, errbuf);
    return rc;
}
