/* qreplay: Pingmesh's SLA per level and time window (pingmesh_analyze.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/pingmesh_analyze.h"
#include "qreplay/stats.h"
#include "qreplay/topology.h"
#include "qreplay/traceroute.h"

#include "internal.h"

/* A resolved probe: its level (switches apart), window and round trip (-1: lost). */
typedef struct sla_key {
    uint32_t hops;
    int64_t window;
    int64_t rtt;
} sla_key;

static int cmp_key(const void *a, const void *b)
{
    const sla_key *x = a, *y = b;
    if (x->hops != y->hops)
        return x->hops < y->hops ? -1 : 1;
    if (x->window != y->window)
        return x->window < y->window ? -1 : 1;
    return x->rtt < y->rtt ? -1 : x->rtt > y->rtt;
}

static void level_name(uint32_t hops, char *buf, size_t size)
{
    if (hops == 1)
        snprintf(buf, size, "rack");
    else if (hops == 3)
        snprintf(buf, size, "pod");
    else if (hops == 5)
        snprintf(buf, size, "spine");
    else
        snprintf(buf, size, "%u sw", hops);
}

int qr_pingmesh_sla(const qr_probe_log *log, const qr_topology *t, int64_t window_ns,
                    double sla_drop, int64_t sla_p99_ns, qr_row_pm_sla **rows, size_t *n,
                    char *errbuf)
{
    *rows = NULL;
    *n = 0;
    if (window_ns <= 0)
        return qri_err(errbuf, QR_EINVAL, "the SLA's window must be longer than 0");
    int64_t timeout = qr_scenario_config(log->scenario)->pingmesh.timeout_ns;
    sla_key *k = malloc((log->n_probes ? log->n_probes : 1) * sizeof *k);
    int64_t *rtt = malloc((log->n_probes ? log->n_probes : 1) * sizeof *rtt);
    if (!k || !rtt) {
        free(k);
        free(rtt);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    size_t m = 0;
    uint32_t hosts = qr_topology_hosts(t);
    for (size_t i = 0; i < log->n_probes; i++) {
        const qr_row_probe_obs *p = &log->probes[i];
        if (p->src >= hosts || p->dst >= hosts || p->sent_ns + timeout > log->sim_end_ns)
            continue; /* not the topology's (the analysis refuses it), or not resolved yet */
        int answered = p->rtt_ns >= 0 && p->rtt_ns <= timeout;
        k[m++] = (sla_key){qr_topology_hops(t, p->src, p->dst),
                           qr_traceroute_epoch(window_ns, p->sent_ns), answered ? p->rtt_ns : -1};
    }
    qsort(k, m, sizeof *k, cmp_key);
    size_t cap = 0;
    int rc = QR_OK;
    for (size_t i = 0; i < m && !rc;) {
        size_t j = i, got = 0;
        while (j < m && k[j].hops == k[i].hops && k[j].window == k[i].window)
            j++;
        for (size_t q = i; q < j; q++)
            if (k[q].rtt >= 0)
                rtt[got++] = k[q].rtt; /* sorted: the lost (-1) come first */
        if (qri_grow((void **)rows, &cap, *n, sizeof **rows, 64)) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        qr_row_pm_sla *r = &(*rows)[(*n)++];
        memset(r, 0, sizeof *r);
        level_name(k[i].hops, r->level, sizeof r->level);
        r->window = k[i].window;
        r->start_ns = k[i].window * window_ns;
        r->probes = j - i;
        r->lost = r->probes - got;
        r->drop_rate = (double)r->lost / (double)r->probes;
        r->p50_ns = got ? qr_percentile_i64(rtt, got, 0.50) : -1;
        r->p99_ns = got ? qr_percentile_i64(rtt, got, 0.99) : -1;
        r->p999_ns = got ? qr_percentile_i64(rtt, got, 0.999) : -1;
        r->breach =
            (sla_drop > 0 && r->drop_rate > sla_drop) || (sla_p99_ns > 0 && r->p99_ns > sla_p99_ns);
        i = j;
    }
    free(k);
    free(rtt);
    if (rc) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}
