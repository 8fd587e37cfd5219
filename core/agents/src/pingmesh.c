/* Pingmesh probing in the runtime: the plan, the probes' schedule and source ports, and the
 * agents' log (pingmesh.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/pingmesh.h"
#include "qreplay/random.h"
#include "qreplay/units.h"

int qr_probe_five_tuple(const qr_five_tuple *ft)
{
    return ft->proto == QR_PROBE_PROTO &&
           (ft->dst_port == QR_PROBE_PORT || ft->src_port == QR_PROBE_PORT);
}

/* A FatTree has more than one switch; the star is one rack of one pod. */
static int is_star(const qr_topology *t)
{
    return qr_topology_switches(t) == 1;
}

uint32_t qr_pingmesh_racks(const qr_topology *t)
{
    uint32_t k = qr_topology_ports(t, 0);
    return is_star(t) ? 1 : k * k / 2;
}

uint32_t qr_pingmesh_pods(const qr_topology *t)
{
    return is_star(t) ? 1 : qr_topology_ports(t, 0);
}

uint32_t qr_pingmesh_pod_of_rack(const qr_topology *t, uint32_t rack)
{
    return is_star(t) ? 0 : rack / (qr_topology_ports(t, 0) / 2);
}

int qr_pingmesh_plan(const qr_topology *t, uint32_t servers, qr_probe_pair **pairs, size_t *n)
{
    uint32_t hosts = qr_topology_hosts(t), racks = qr_pingmesh_racks(t);
    uint32_t per = hosts / racks; /* hosts are numbered rack by rack (topology.h) */
    if (servers > per)
        servers = per;
    if (servers < 1)
        servers = 1;
    size_t total = (size_t)racks * per * (per - 1) + (size_t)racks * (racks - 1) * servers;
    qr_probe_pair *p = malloc((total ? total : 1) * sizeof *p);
    if (!p)
        return QR_ENOMEM;
    size_t m = 0;
    for (uint32_t r = 0; r < racks; r++)
        for (uint32_t a = 0; a < per; a++)
            for (uint32_t b = 0; b < per; b++)
                if (a != b) {
                    uint32_t pod = qr_pingmesh_pod_of_rack(t, r);
                    p[m++] = (qr_probe_pair){r * per + a, r * per + b, r, r, pod, pod};
                }
    for (uint32_t r = 0; r < racks; r++)
        for (uint32_t s = 0; s < racks; s++)
            for (uint32_t i = 0; r != s && i < servers; i++)
                p[m++] = (qr_probe_pair){r * per + i,
                                         s * per + i,
                                         r,
                                         s,
                                         qr_pingmesh_pod_of_rack(t, r),
                                         qr_pingmesh_pod_of_rack(t, s)};
    *pairs = p;
    *n = m;
    return QR_OK;
}

struct probe {
    uint32_t pair;
    uint16_t sport;
    uint8_t lost_in, reason, echoed;
    int64_t sent_ns, answered_ns, drop_ns;
    uint32_t sw, port;
};

struct qr_pingmesh {
    qr_probe_pair *pairs;
    size_t n_pairs;
    int64_t *phase;
    int64_t interval, timeout, wait, end;
    uint32_t size;
    uint32_t *next_port; /* per host */
    struct probe *p;
    size_t n, cap;
};

/* Pingmesh probes lightly: the probes a host sends and answers every interval must fit in
 * QR_PINGMESH_MAX_SHARE of its link, or the run's events grow without bound (an interval of 1 ns
 * is a probe storm no network carries). Returns 0 or QR_EVALUE with the smallest interval that
 * fits. */
static int probe_load_check(const qr_pingmesh *pm, const qr_config *c, uint32_t hosts, char *errbuf)
{
    uint64_t *per = calloc(hosts ? hosts : 1, sizeof *per), worst = 0;
    uint32_t at = 0;
    if (!per)
        return qri_err(errbuf, QR_EVALUE, "out of memory");
    for (size_t i = 0; i < pm->n_pairs; i++) {
        per[pm->pairs[i].src]++; /* its probe */
        per[pm->pairs[i].dst]++; /* the answer */
    }
    for (uint32_t h = 0; h < hosts; h++)
        if (per[h] > worst) {
            worst = per[h];
            at = h;
        }
    free(per);
    double bits = (double)worst * (double)c->pingmesh.size_bytes * 8.0;
    double min_ns = bits * 1e9 / ((double)c->links.rate_bps * QR_PINGMESH_MAX_SHARE);
    if ((double)c->pingmesh.interval_ns >= min_ns)
        return QR_OK;
    char have[32], need[32];
    qr_format_time(c->pingmesh.interval_ns, have, sizeof have);
    qr_format_time((int64_t)ceil(min_ns), need, sizeof need);
    return qri_err(errbuf, QR_EVALUE,
                   "[pingmesh] interval %s: host %u would send and answer %llu probes of %llu B "
                   "every interval, more than %.0f%% of its link: Pingmesh probes lightly (an "
                   "interval of at least %s)",
                   have, at, (unsigned long long)worst, (unsigned long long)c->pingmesh.size_bytes,
                   100.0 * QR_PINGMESH_MAX_SHARE, need);
}

int qr_pingmesh_create(qr_pingmesh **out, const qr_config *c, const qr_topology *t, char *errbuf)
{
    *out = NULL;
    if (c->pingmesh.interval_ns <= 0)
        return QR_OK;
    if (c->pingmesh.size_bytes < QR_PROBE_MIN_BYTES || c->pingmesh.size_bytes > QR_MTU_BYTES)
        return qri_err(errbuf, QR_EVALUE,
                       "[pingmesh] size: %llu B is not a probe size (28 B of headers to 1500 B)",
                       (unsigned long long)c->pingmesh.size_bytes);
    qr_pingmesh *pm = calloc(1, sizeof *pm);
    if (!pm)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    uint32_t hosts = qr_topology_hosts(t);
    if (qr_pingmesh_plan(t, (uint32_t)c->pingmesh.servers, &pm->pairs, &pm->n_pairs) ||
        !(pm->phase = malloc((pm->n_pairs ? pm->n_pairs : 1) * sizeof *pm->phase)) ||
        !(pm->next_port = malloc(hosts * sizeof *pm->next_port))) {
        qr_pingmesh_destroy(pm);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    if (probe_load_check(pm, c, hosts, errbuf)) {
        qr_pingmesh_destroy(pm);
        return QR_EVALUE;
    }
    pm->interval = c->pingmesh.interval_ns;
    pm->timeout = c->pingmesh.timeout_ns;
    pm->wait = c->pingmesh.connect_wait_ns;
    pm->end = c->pingmesh.duration_ns > 0 ? c->pingmesh.duration_ns : -1;
    pm->size = (uint32_t)c->pingmesh.size_bytes;
    for (size_t i = 0; i < pm->n_pairs; i++)
        pm->phase[i] =
            (int64_t)(qr_seed_derive(c->run.seed, "pingmesh-phase", i) % (uint64_t)pm->interval);
    for (uint32_t h = 0; h < hosts; h++)
        pm->next_port[h] =
            (uint32_t)(qr_seed_derive(c->run.seed, "pingmesh-port", h) % QR_PROBE_PORTS);
    *out = pm;
    return QR_OK;
}

void qr_pingmesh_destroy(qr_pingmesh *pm)
{
    if (!pm)
        return;
    free(pm->pairs);
    free(pm->phase);
    free(pm->next_port);
    free(pm->p);
    free(pm);
}

size_t qr_pingmesh_pairs(const qr_pingmesh *pm)
{
    return pm->n_pairs;
}

const qr_probe_pair *qr_pingmesh_pair(const qr_pingmesh *pm, size_t i)
{
    return i < pm->n_pairs ? &pm->pairs[i] : NULL;
}

uint32_t qr_pingmesh_size(const qr_pingmesh *pm)
{
    return pm->size;
}

int64_t qr_pingmesh_wait(const qr_pingmesh *pm)
{
    return pm->wait > pm->timeout ? pm->wait : pm->timeout;
}

int qr_pingmesh_check_udp(const qr_config *c, char *errbuf)
{
    if (c->pingmesh.interval_ns > 0 && c->pingmesh.connect_wait_ns > 0)
        return qri_err(errbuf, QR_EVALUE,
                       "[pingmesh] connect_wait: the runtime's probes are UDP packets that "
                       "nothing resends; waiting for TCP connects (and Pingmesh's drop rate from "
                       "their times) is the testbed's (qreplay testbed)");
    return QR_OK;
}

int64_t qr_pingmesh_end(const qr_pingmesh *pm)
{
    return pm->end;
}

int64_t qr_pingmesh_send_time(const qr_pingmesh *pm, size_t pair, uint64_t j)
{
    if (pair >= pm->n_pairs || j > (uint64_t)(INT64_MAX / 2) / (uint64_t)pm->interval)
        return -1;
    int64_t t = pm->phase[pair] + (int64_t)j * pm->interval;
    return pm->end >= 0 && t >= pm->end ? -1 : t;
}

int qr_pingmesh_sent(qr_pingmesh *pm, size_t pair, int64_t now_ns, uint32_t *probe, uint16_t *sport)
{
    if (pair >= pm->n_pairs)
        return QR_EINVAL;
    if (pm->n >= 0x7fffffffu)
        return QR_EVALUE;
    if (qri_grow((void **)&pm->p, &pm->cap, pm->n, sizeof *pm->p, 4096))
        return QR_ENOMEM;
    uint32_t src = pm->pairs[pair].src;
    uint16_t port = (uint16_t)(QR_PROBE_FIRST_PORT + pm->next_port[src]);
    pm->next_port[src] = (pm->next_port[src] + 1) % QR_PROBE_PORTS;
    pm->p[pm->n] = (struct probe){(uint32_t)pair, port, 0, 0, 0, now_ns, -1, -1, 0, 0};
    *probe = (uint32_t)pm->n++;
    *sport = port;
    return QR_OK;
}

void qr_pingmesh_echoed(qr_pingmesh *pm, uint32_t probe)
{
    if (probe < pm->n)
        pm->p[probe].echoed = 1;
}

void qr_pingmesh_answered(qr_pingmesh *pm, uint32_t probe, int64_t now_ns)
{
    if (probe < pm->n && pm->p[probe].answered_ns < 0)
        pm->p[probe].answered_ns = now_ns;
}

void qr_pingmesh_dropped(qr_pingmesh *pm, uint32_t probe, int answer, uint32_t sw, uint32_t port,
                         uint8_t reason, int64_t now_ns)
{
    if (probe >= pm->n || pm->p[probe].lost_in)
        return;
    struct probe *x = &pm->p[probe];
    x->lost_in = answer ? 2 : 1;
    x->sw = sw;
    x->port = port;
    x->reason = reason;
    x->drop_ns = now_ns;
}

size_t qr_pingmesh_probes(const qr_pingmesh *pm)
{
    return pm ? pm->n : 0;
}

void qr_pingmesh_row(const qr_pingmesh *pm, size_t i, qr_row_probe *row)
{
    memset(row, 0, sizeof *row);
    if (i >= pm->n)
        return;
    const struct probe *x = &pm->p[i];
    const qr_probe_pair *pr = &pm->pairs[x->pair];
    row->probe = (uint32_t)i;
    row->pair = x->pair;
    row->src = pr->src;
    row->dst = pr->dst;
    row->sport = x->sport;
    row->sent_ns = x->sent_ns;
    row->rtt_ns = x->answered_ns >= 0 ? x->answered_ns - x->sent_ns : -1;
    row->echoed = x->echoed;
    row->lost_in = x->lost_in;
    row->drop_sw = x->lost_in ? x->sw : 0;
    row->drop_port = x->lost_in ? x->port : 0;
    row->drop_reason = x->reason;
    row->drop_ns = x->lost_in ? x->drop_ns : -1;
}
