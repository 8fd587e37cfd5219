/* The flow table: sender ports, directions, lookup by 5-tuple. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/flowtable.h"

struct qr_flow_table {
    qr_flow *flows;
    uint16_t *ports;
    size_t n_flows;
    uint32_t *host_addr;
    uint32_t n_hosts;
    qri_map by_sender; /* (addr, port) -> flow + 1 */
};

void qr_flow_table_destroy(qr_flow_table *t)
{
    if (!t)
        return;
    qri_map_free(&t->by_sender);
    free(t->flows);
    free(t->ports);
    free(t->host_addr);
    free(t);
}

int qr_flow_table_create(qr_flow_table **out, const qr_flow *flows, size_t n_flows,
                         const uint32_t *host_addr, uint32_t n_hosts, char *errbuf)
{
    if (!out || (!flows && n_flows) || (!host_addr && n_hosts))
        return qri_err(errbuf, QR_EINVAL, "flow table: missing argument");
    *out = NULL;
    qr_flow_table *t = calloc(1, sizeof *t);
    uint32_t *used = calloc(n_hosts ? n_hosts : 1, sizeof *used);
    int rc = QR_ENOMEM;
    if (!t || !used)
        goto fail;
    t->flows = malloc((n_flows ? n_flows : 1) * sizeof *t->flows);
    t->ports = malloc((n_flows ? n_flows : 1) * sizeof *t->ports);
    t->host_addr = malloc((n_hosts ? n_hosts : 1) * sizeof *t->host_addr);
    if (!t->flows || !t->ports || !t->host_addr || qri_map_init(&t->by_sender))
        goto fail;
    if (n_flows)
        memcpy(t->flows, flows, n_flows * sizeof *flows);
    if (n_hosts)
        memcpy(t->host_addr, host_addr, n_hosts * sizeof *host_addr);
    t->n_flows = n_flows;
    t->n_hosts = n_hosts;
    for (size_t f = 0; f < n_flows; f++) {
        const qr_flow *fl = &flows[f];
        if (fl->src >= n_hosts || fl->dst >= n_hosts || fl->src == fl->dst) {
            rc = qri_err(errbuf, QR_EVALUE, "flow %zu: hosts %u -> %u not in the topology", f,
                         fl->src, fl->dst);
            goto fail;
        }
        uint32_t n = used[fl->src]++;
        if (n > 65535u - QR_FIRST_SENDER_PORT) {
            rc = qri_err(errbuf, QR_EVALUE,
                         "host %u starts more than %u flows: sender ports would repeat", fl->src,
                         65536u - QR_FIRST_SENDER_PORT);
            goto fail;
        }
        t->ports[f] = (uint16_t)(QR_FIRST_SENDER_PORT + n);
        if (qri_map_put(&t->by_sender, host_addr[fl->src], t->ports[f], (void *)(uintptr_t)(f + 1)))
            goto fail;
    }
    free(used);
    *out = t;
    return QR_OK;
fail:
    free(used);
    qr_flow_table_destroy(t);
    if (rc == QR_ENOMEM)
        qri_err(errbuf, QR_ENOMEM, "flow table: out of memory");
    return rc;
}

int qr_flow_table_for_topology(qr_flow_table **out, const qr_flow *flows, size_t n_flows,
                               const qr_topology *topo, char *errbuf)
{
    if (!topo)
        return qri_err(errbuf, QR_EINVAL, "flow table: no topology");
    uint32_t n = qr_topology_hosts(topo);
    uint32_t *addr = malloc((n ? n : 1) * sizeof *addr);
    if (!addr)
        return qri_err(errbuf, QR_ENOMEM, "flow table: out of memory");
    for (uint32_t h = 0; h < n; h++)
        addr[h] = qr_topology_host_addr(topo, h);
    int rc = qr_flow_table_create(out, flows, n_flows, addr, n, errbuf);
    free(addr);
    return rc;
}

size_t qr_flow_table_flows(const qr_flow_table *t)
{
    return t->n_flows;
}

size_t qr_flow_table_directions(const qr_flow_table *t)
{
    return 2 * t->n_flows;
}

uint32_t qr_flow_table_hosts(const qr_flow_table *t)
{
    return t->n_hosts;
}

const qr_flow *qr_flow_table_flow(const qr_flow_table *t, uint32_t f)
{
    return &t->flows[f];
}

uint16_t qr_flow_table_sender_port(const qr_flow_table *t, uint32_t f)
{
    return t->ports[f];
}

uint32_t qr_flow_table_host_addr(const qr_flow_table *t, uint32_t host)
{
    return t->host_addr[host];
}

int qr_flow_table_flow_of_sender(const qr_flow_table *t, uint32_t addr, uint16_t port,
                                 uint32_t *flow)
{
    void *v = qri_map_get(&t->by_sender, addr, port);
    if (!v)
        return QR_ENOTFOUND;
    *flow = (uint32_t)((uintptr_t)v - 1);
    return QR_OK;
}

int qr_flow_table_resolve(const qr_flow_table *t, const qr_five_tuple *ft, uint32_t *dir)
{
    uint32_t f;
    if (ft->proto != 6)
        return QR_ENOTFOUND;
    if (ft->dst_port == QR_SINK_PORT &&
        qr_flow_table_flow_of_sender(t, ft->src_ip, ft->src_port, &f) == QR_OK &&
        t->host_addr[t->flows[f].dst] == ft->dst_ip) {
        *dir = qr_dir_data(f);
        return QR_OK;
    }
    if (ft->src_port == QR_SINK_PORT &&
        qr_flow_table_flow_of_sender(t, ft->dst_ip, ft->dst_port, &f) == QR_OK &&
        t->host_addr[t->flows[f].dst] == ft->src_ip) {
        *dir = qr_dir_ack(f);
        return QR_OK;
    }
    return QR_ENOTFOUND;
}

uint32_t qr_flow_table_dir_src(const qr_flow_table *t, uint32_t dir)
{
    const qr_flow *f = &t->flows[qr_dir_flow(dir)];
    return qr_dir_is_ack(dir) ? f->dst : f->src;
}

uint32_t qr_flow_table_dir_dst(const qr_flow_table *t, uint32_t dir)
{
    const qr_flow *f = &t->flows[qr_dir_flow(dir)];
    return qr_dir_is_ack(dir) ? f->src : f->dst;
}

uint64_t qr_same_time_key(int has_id, uint64_t packet_id, const qr_five_tuple *ft, uint16_t ip_id)
{
    return has_id ? packet_id : (qr_flow_hash(ft, 0) << 16 | ip_id);
}

struct qr_dir_numbers {
    size_t n;
    uint64_t next[];
};

int qr_dir_numbers_create(qr_dir_numbers **out, size_t n_dirs)
{
    *out = calloc(1, sizeof **out + n_dirs * sizeof(uint64_t));
    if (!*out)
        return QR_ENOMEM;
    (*out)->n = n_dirs;
    return QR_OK;
}

void qr_dir_numbers_destroy(qr_dir_numbers *n)
{
    free(n);
}

int qr_dir_numbers_next(qr_dir_numbers *n, uint32_t dir, uint64_t *seq, uint16_t *ip_id)
{
    if (dir >= n->n)
        return QR_EINVAL;
    *seq = n->next[dir]++;
    *ip_id = (uint16_t)(*seq & 0xffffu);
    return QR_OK;
}

int64_t qr_fct_ns(int64_t start_ns, int64_t end_ns)
{
    return end_ns < 0 ? -1 : end_ns - start_ns;
}
