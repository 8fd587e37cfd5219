/* The ground truth of a FatTree testbed run (fabric_truth.h). */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/capture.h"
#include "qreplay/common.h"
#include "qreplay/fabric_truth.h"
#include "qreplay/fs.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/stats.h"
#include "qreplay/truth.h"
#include "truth_internal.h"

#define MAX_OBS 12 /* in and out at each of 5 switches, and room to tell a loop */
#define NO_PORT 255
#define MANY_PORTS 254

/* One sighting of a packet at a switch port. */
struct obs {
    int64_t t;
    uint16_t sw;
    uint8_t port, out;
};

/* A recorded packet and where it was seen. */
struct fp {
    const qr_rec_packet *r;
    uint16_t ip_id;   /* the real one, from its host's capture (the import numbers them) */
    uint8_t have_id;
    struct obs o[MAX_OBS];
    uint8_t n_obs;
    uint8_t fate; /* 0 open, 1 delivered, 2 dropped */
    uint16_t fault;   /* the fault whose log holds it (from 1), 0 none */
    uint16_t drop_sw; /* dropped: where */
    uint8_t drop_port;
    int64_t drop_t;
};

struct ft_state {
    char *errbuf;
    const qr_fabric *fab;
    const qr_topology *topo;
    uint32_t k, switches;
    const qr_recording *rec;
    const qr_flow_table *ft;
    size_t n_dirs;
    qri_tb_conns conns;
    struct fp *p;
    size_t n;
    size_t *start;   /* the packets of direction d: p[start[d] .. start[d + 1]), in order */
    uint32_t *table; /* open addressing: packet index + 1 */
    size_t mask;
    uint8_t *dir_port; /* n_dirs x switches: the port a direction leaves a switch by */
    int64_t *first_hop; /* per packet: its host's capture to its edge switch's */
};

static uint64_t key_hash(uint32_t dir, uint16_t id, uint32_t seq, uint32_t ack, uint8_t fl,
                         uint32_t len)
{
    uint64_t h = (uint64_t)dir * 0x9e3779b97f4a7c15ull ^ ((uint64_t)id << 32 | seq);
    h ^= ((uint64_t)ack << 24 | (uint64_t)fl << 16 | len) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 32);
}

static int same(const struct fp *x, uint32_t dir, const qr_capture_packet *k)
{
    const qr_rec_packet *r = x->r;
    return r->dir == dir && x->ip_id == k->ip_id && r->pk.seq == k->seq && r->pk.ack == k->ack &&
           r->pk.tcp_flags == k->tcp_flags && r->pk.ip_len == k->ip_len;
}

static const char *dir_text(const struct ft_state *s, uint32_t d, char *buf, size_t size);

/* The recorded packets grouped by direction, in their numbers' order. */
static int index_packets(struct ft_state *s)
{
    uint32_t nh = qr_recording_hosts(s->rec);
    size_t nd = s->n_dirs;
    s->start = calloc(nd + 2, sizeof *s->start);
    if (!s->start)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < nh; h++) {
        size_t n;
        const qr_rec_packet *r = qr_recording_packets(s->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (r[i].dir < nd)
                s->start[r[i].dir + 1]++;
    }
    for (size_t d = 0; d < nd; d++)
        s->start[d + 1] += s->start[d];
    s->n = s->start[nd];
    size_t cap = 16;
    while (cap < 2 * s->n)
        cap *= 2;
    s->p = calloc(s->n ? s->n : 1, sizeof *s->p);
    s->table = calloc(cap, sizeof *s->table);
    s->dir_port = malloc((nd ? nd : 1) * s->switches);
    if (!s->p || !s->table || !s->dir_port)
        return QR_ENOMEM;
    memset(s->dir_port, NO_PORT, (nd ? nd : 1) * s->switches);
    s->mask = cap - 1;
    for (uint32_t h = 0; h < nh; h++) {
        size_t n;
        const qr_rec_packet *r = qr_recording_packets(s->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (r[i].dir < nd) {
                size_t at = s->start[r[i].dir] + r[i].seq;
                if (at >= s->start[r[i].dir + 1] || s->p[at].r)
                    return qri_err(s->errbuf, QR_EFORMAT,
                                   "the recording's direction %u is not numbered from 0", r[i].dir);
                s->p[at].r = &r[i];
            }
    }
    return QR_OK;
}

/* Host h's capture: the IP ID of each packet it sent (its recording numbers them instead), then
 * the table of every packet by its key. */
static int host_ids(struct ft_state *s, const char *dir, uint32_t h, size_t *next)
{
    char path[4300], d1[96];
    snprintf(path, sizeof path, "%s/h%u.pcap", dir, h);
    qr_capture *c = NULL;
    qr_capture_packet k;
    uint8_t mac[6];
    qr_fabric_mac((qr_node){QR_NODE_HOST, h}, 0, mac);
    int rc = qr_capture_open(&c, path, s->errbuf);
    while (!rc && (rc = qr_capture_next(c, &k, s->errbuf)) == QR_OK) {
        uint32_t d = qri_tb_dir_of(&s->conns, &k);
        if (!k.has_mac || memcmp(k.mac_src, mac, 6) || d == UINT32_MAX)
            continue; /* what it received, or no recorded connection's */
        size_t at = s->start[d] + next[d]++;
        struct fp *x = at < s->start[d + 1] ? &s->p[at] : NULL;
        if (!x || x->r->pk.seq != k.seq || x->r->pk.ack != k.ack ||
            x->r->pk.tcp_flags != k.tcp_flags || x->r->pk.ip_len != k.ip_len)
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": the recording's %s has %s packet %zu (seq %u, "
                         "%u bytes): the recording is not of this capture",
                         path, k.frame, dir_text(s, d, d1, sizeof d1), x ? "another" : "no",
                         next[d] - 1, k.seq, k.ip_len);
        else {
            x->ip_id = k.ip_id;
            x->have_id = 1;
        }
    }
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

static int hash_packets(struct ft_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct fp *x = &s->p[i];
        if (!x->have_id)
            return qri_err(s->errbuf, QR_EVALUE,
                           "the recording's packet %u of direction %u is in no host's capture",
                           x->r->seq, x->r->dir);
        size_t at = key_hash(x->r->dir, x->ip_id, x->r->pk.seq, x->r->pk.ack, x->r->pk.tcp_flags,
                             x->r->pk.ip_len) &
                    s->mask;
        while (s->table[at])
            at = (at + 1) & s->mask;
        s->table[at] = (uint32_t)(i + 1);
    }
    return QR_OK;
}

/* The recorded packet a sighting is of: among those with its key, the first not yet seen the
 * same way at that switch; NULL if none. */
static struct fp *lookup(struct ft_state *s, uint32_t dir, const qr_capture_packet *k, uint32_t sw,
                         int out)
{
    size_t at = key_hash(dir, k->ip_id, k->seq, k->ack, k->tcp_flags, k->ip_len) & s->mask;
    for (; s->table[at]; at = (at + 1) & s->mask) {
        struct fp *x = &s->p[s->table[at] - 1];
        if (!same(x, dir, k))
            continue;
        int seen = 0;
        for (int i = 0; i < x->n_obs && !seen; i++)
            seen = sw == UINT32_MAX ? x->fault != 0 : x->o[i].sw == sw && x->o[i].out == out;
        if (!seen)
            return x;
    }
    return NULL;
}

static const char *dir_text(const struct ft_state *s, uint32_t d, char *buf, size_t size)
{
    snprintf(buf, size, "flow %u %s (host %u -> %u)", qr_dir_flow(d),
             qr_dir_is_ack(d) ? "ACKs" : "data", qr_flow_table_dir_src(s->ft, d),
             qr_flow_table_dir_dst(s->ft, d));
    return buf;
}

/* Every frame of switch sw's port `port` capture. */
static int read_port(struct ft_state *s, const char *dir, uint32_t sw, uint32_t port,
                     qr_fabric_truth_report *rep)
{
    char path[4300], d1[96];
    snprintf(path, sizeof path, "%s/s%u-p%u.pcap", dir, sw, port);
    qr_capture *c = NULL;
    qr_capture_packet k;
    int rc = qr_capture_open(&c, path, s->errbuf);
    while (!rc && (rc = qr_capture_next(c, &k, s->errbuf)) == QR_OK) {
        qr_node owner;
        uint32_t op;
        if (!k.has_mac) {
            rc = qri_err(s->errbuf, QR_EFORMAT, "%s: frame %" PRIu64 ": not an Ethernet frame",
                         path, k.frame);
            break;
        }
        int out = qr_fabric_mac_owner(k.mac_src, &owner, &op) && owner.kind != QR_NODE_HOST &&
                  owner.index == sw && op == port;
        uint32_t d = qri_tb_dir_of(&s->conns, &k);
        if (d == UINT32_MAX) {
            rep->unrecorded++;
            continue;
        }
        struct fp *x = lookup(s, d, &k, sw, out);
        if (!x) {
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": a packet of %s (IP ID %u, seq %u, ack %u, %u "
                         "bytes) %s that no host's capture holds, or seen twice: a host's "
                         "capture is incomplete or the fabric loops",
                         path, k.frame, dir_text(s, d, d1, sizeof d1), k.ip_id, k.seq, k.ack,
                         k.ip_len, out ? "left" : "arrived");
            break;
        }
        if (x->n_obs == MAX_OBS) {
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": a packet of %s seen %d times: the fabric loops",
                         path, k.frame, dir_text(s, d, d1, sizeof d1), MAX_OBS);
            break;
        }
        x->o[x->n_obs++] =
            (struct obs){k.time_ns - s->conns.base, (uint16_t)sw, (uint8_t)port, (uint8_t)out};
    }
    qr_capture_stats st;
    if (c) {
        qr_capture_stats_get(c, &st);
        rep->skipped_frames += st.frames - st.kept;
    }
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

/* Fault f's log: the packets its rule dropped. */
static int read_fault(struct ft_state *s, const char *dir, const qr_fabric_fault *f,
                      qr_fabric_fault_report *fr)
{
    char path[4300], d1[96];
    snprintf(path, sizeof path, "%s/fault-%u.pcap", dir, f->fault);
    qr_capture *c = NULL;
    qr_capture_packet k;
    int rc = qr_capture_open(&c, path, s->errbuf);
    while (!rc && (rc = qr_capture_next(c, &k, s->errbuf)) == QR_OK) {
        uint32_t d = qri_tb_dir_of(&s->conns, &k);
        if (d == UINT32_MAX)
            continue;
        struct fp *x = lookup(s, d, &k, UINT32_MAX, 0);
        if (!x) {
            rc = qri_err(s->errbuf, QR_EVALUE,
                         "%s: frame %" PRIu64 ": fault %u dropped a packet of %s (IP ID %u, seq "
                         "%u) that no host's capture holds, or twice",
                         path, k.frame, f->fault, dir_text(s, d, d1, sizeof d1), k.ip_id, k.seq);
            break;
        }
        x->fault = (uint16_t)f->fault;
        fr->dropped++;
    }
    if (c) {
        qr_capture_stats st;
        qr_capture_stats_get(c, &st);
        fr->logged = st.frames;
    }
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

static const struct obs *find(const struct fp *x, uint32_t sw, int out, uint32_t port)
{
    for (int i = 0; i < x->n_obs; i++)
        if (x->o[i].sw == sw && x->o[i].out == out && (port == UINT32_MAX || x->o[i].port == port))
            return &x->o[i];
    return NULL;
}

/* Follow packet x from its host's edge switch: delivered, or dropped where it stopped. Its
 * switches into path[0..*hops). */
static int follow(struct ft_state *s, struct fp *x, uint32_t path[5], uint32_t *hops,
                  qr_fabric_truth_report *rep)
{
    char d1[96];
    uint32_t d = x->r->dir, src = qr_flow_table_dir_src(s->ft, d),
             dst = qr_flow_table_dir_dst(s->ft, d), sw, port;
    qr_topology_host_attach(s->topo, src, &sw, &port);
    *hops = 0;
    const struct obs *in = find(x, sw, 0, port);
    if (!in)
        return qri_err(s->errbuf, QR_EVALUE,
                       "%s: host %u's packet %u (IP ID %u, seq %u) never reached its switch s%u "
                       "(s%u-p%u.pcap): a capture is incomplete",
                       dir_text(s, d, d1, sizeof d1), src, x->r->seq, x->ip_id, x->r->pk.seq,
                       sw, sw, port);
    s->first_hop[x - s->p] = in->t - x->r->pk.time_ns;
    for (;;) {
        const struct obs *out = find(x, sw, 1, UINT32_MAX);
        if (*hops == 5)
            return qri_err(s->errbuf, QR_EVALUE, "%s: packet %u crossed more than 5 switches",
                           dir_text(s, d, d1, sizeof d1), x->r->seq);
        path[(*hops)++] = sw;
        rep->ports[sw * s->k + in->port].in++;
        if (!out) {
            x->fate = 2;
            x->drop_sw = (uint16_t)sw;
            x->drop_t = in->t;
            return QR_OK;
        }
        uint8_t *dp = &s->dir_port[(size_t)d * s->switches + sw];
        *dp = *dp == NO_PORT || *dp == out->port ? out->port : MANY_PORTS;
        qr_node_kind pk;
        uint32_t peer, pp;
        qr_topology_link(s->topo, sw, out->port, &pk, &peer, &pp);
        rep->ports[sw * s->k + out->port].out++;
        if (pk == QR_NODE_HOST) {
            if (peer != dst)
                return qri_err(s->errbuf, QR_EVALUE,
                               "%s: packet %u left s%u towards host %u, not its destination",
                               dir_text(s, d, d1, sizeof d1), x->r->seq, sw, peer);
            x->fate = 1;
            return QR_OK;
        }
        in = find(x, peer, 0, pp);
        if (!in)
            return qri_err(s->errbuf, QR_EVALUE,
                           "%s: packet %u (IP ID %u, seq %u) left s%u by port %u and never "
                           "reached s%u (s%u-p%u.pcap): a capture is incomplete",
                           dir_text(s, d, d1, sizeof d1), x->r->seq, x->ip_id, x->r->pk.seq,
                           sw, out->port, peer, peer, pp);
        sw = peer;
    }
}

void qr_fabric_truth_report_free(qr_fabric_truth_report *r)
{
    if (!r)
        return;
    free(r->ports);
    free(r->faults);
    free(r->core_dirs);
    free(r->dir_path);
    free(r->dir_hops);
    free(r->dir_src);
    free(r->dir_dst);
    memset(r, 0, sizeof *r);
}

/* Each port's FIFO: the bytes it held when each packet that left by it (or was dropped at it)
 * arrived; its largest into the report, a drop's into its row. */
struct qev {
    int64_t t;
    uint32_t bytes;
    int32_t drop; /* index into the drops, -1 */
    uint8_t dep;
};

static int cmp_qev(const void *a, const void *b)
{
    const struct qev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (int)y->dep - (int)x->dep; /* a departure before an arrival at one time */
}

static int queues(struct ft_state *s, qr_fabric_truth_report *rep, qr_row_drop *drops,
                  size_t n_drops)
{
    size_t n_ports = (size_t)s->switches * s->k;
    size_t *cnt = calloc(n_ports + 1, sizeof *cnt);
    if (!cnt)
        return QR_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        const struct fp *x = &s->p[i];
        for (int j = 0; j < x->n_obs; j++)
            if (x->o[j].out)
                cnt[x->o[j].sw * s->k + x->o[j].port] += 2;
    }
    for (size_t i = 0; i < n_drops; i++)
        if (drops[i].port != UINT32_MAX && drops[i].reason == QR_DROP_BUFFER_FULL)
            cnt[drops[i].sw * s->k + drops[i].port]++;
    size_t total = 0;
    for (size_t q = 0; q < n_ports; q++) {
        size_t c = cnt[q];
        cnt[q] = total;
        total += c;
    }
    cnt[n_ports] = total;
    struct qev *ev = malloc((total ? total : 1) * sizeof *ev);
    size_t *fill = calloc(n_ports + 1, sizeof *fill);
    if (!ev || !fill) {
        free(cnt);
        free(ev);
        free(fill);
        return QR_ENOMEM;
    }
    memcpy(fill, cnt, (n_ports + 1) * sizeof *fill);
    for (size_t i = 0; i < s->n; i++) {
        const struct fp *x = &s->p[i];
        for (int j = 0; j < x->n_obs; j++) {
            if (!x->o[j].out)
                continue;
            const struct obs *in = find(x, x->o[j].sw, 0, UINT32_MAX);
            size_t q = x->o[j].sw * s->k + x->o[j].port;
            ev[fill[q]++] = (struct qev){in ? in->t : x->o[j].t, x->r->pk.ip_len, -1, 0};
            ev[fill[q]++] = (struct qev){x->o[j].t, x->r->pk.ip_len, -1, 1};
        }
    }
    for (size_t i = 0; i < n_drops; i++)
        if (drops[i].port != UINT32_MAX && drops[i].reason == QR_DROP_BUFFER_FULL) {
            size_t q = drops[i].sw * s->k + drops[i].port;
            ev[fill[q]++] = (struct qev){drops[i].time_ns, drops[i].bytes, (int32_t)i, 0};
        }
    for (size_t q = 0; q < n_ports; q++) {
        qsort(ev + cnt[q], cnt[q + 1] - cnt[q], sizeof *ev, cmp_qev);
        int64_t held = 0;
        for (size_t i = cnt[q]; i < cnt[q + 1]; i++) {
            if (ev[i].dep) {
                held -= ev[i].bytes;
                continue;
            }
            uint64_t h = held > 0 ? (uint64_t)held : 0;
            if (h > rep->ports[q].max_queue_bytes)
                rep->ports[q].max_queue_bytes = h;
            if (ev[i].drop >= 0)
                drops[ev[i].drop].queue_bytes = h;
            else
                held += ev[i].bytes;
        }
    }
    free(cnt);
    free(ev);
    free(fill);
    return QR_OK;
}

int qr_fabric_truth(const qr_fabric_truth_in *in, qr_fabric_truth_report *rep_out, char *errbuf)
{
    if (!in || !in->rec_dir || !in->capture_dir || !in->fab || !in->qdisc_drops ||
        !in->fault_drops)
        return qri_err(errbuf, QR_EINVAL, "fabric truth: NULL argument");
    struct ft_state s;
    memset(&s, 0, sizeof s);
    s.errbuf = errbuf;
    s.fab = in->fab;
    s.topo = qr_fabric_topology(in->fab);
    s.switches = qr_fabric_switches(in->fab);
    s.k = qr_topology_ports(s.topo, 0);
    qr_fabric_truth_report rep;
    memset(&rep, 0, sizeof rep);
    rep.mismatch_sw = UINT32_MAX;
    qr_recording *rec = NULL;
    qr_row_drop *drops = NULL;
    qr_row_direction *dirs = NULL;
    qr_row_link_fault *lf = NULL;
    size_t n_drops = 0, n_faults;
    const qr_fabric_fault *faults = qr_fabric_faults(in->fab, &n_faults);
    char tmp[4200], path[4300], d1[96];
    int staged = 0;
    int rc = qr_recording_open(&rec, in->rec_dir, NULL, errbuf);
    if (!rc) {
        s.rec = rec;
        s.ft = qr_recording_flows(rec);
        s.n_dirs = qr_flow_table_directions(s.ft);
        if (qr_recording_hosts(rec) != qr_fabric_hosts(in->fab))
            rc = qri_err(errbuf, QR_EVALUE, "%s: %u hosts, the fabric has %u", in->rec_dir,
                         qr_recording_hosts(rec), qr_fabric_hosts(in->fab));
    }
    rep.n_ports = s.switches * s.k;
    rep.n_faults = n_faults;
    rep.n_core = 0;
    for (uint32_t sw = 0; sw < s.switches; sw++)
        rep.n_core += qr_topology_switch_kind(s.topo, sw) == QR_NODE_CORE;
    if (!rc) {
        rep.n_dirs = s.n_dirs;
        rep.ports = calloc(rep.n_ports, sizeof *rep.ports);
        rep.faults = calloc(n_faults + 1, sizeof *rep.faults);
        rep.core_dirs = calloc(rep.n_core + 1, sizeof *rep.core_dirs);
        rep.dir_path = calloc(s.n_dirs + 1, sizeof *rep.dir_path);
        rep.dir_hops = calloc(s.n_dirs + 1, 1);
        rep.dir_src = calloc(s.n_dirs + 1, sizeof *rep.dir_src);
        rep.dir_dst = calloc(s.n_dirs + 1, sizeof *rep.dir_dst);
        lf = calloc(n_faults + 1, sizeof *lf);
        if (!rep.ports || !rep.faults || !rep.core_dirs || !rep.dir_path || !rep.dir_hops ||
            !rep.dir_src || !rep.dir_dst || !lf)
            rc = QR_ENOMEM;
    }
    for (uint32_t q = 0; !rc && q < rep.n_ports; q++) {
        rep.ports[q].sw = q / s.k;
        rep.ports[q].port = q % s.k;
        rep.ports[q].qdisc_drops = in->qdisc_drops[q];
    }
    if (!rc)
        rc = qri_tb_conns_load(in->rec_dir, s.ft, &s.conns, errbuf);
    if (!rc)
        rc = index_packets(&s);
    size_t *next = rc ? NULL : calloc(s.n_dirs + 1, sizeof *next);
    if (!rc && !next)
        rc = QR_ENOMEM;
    for (uint32_t h = 0; !rc && h < qr_fabric_hosts(in->fab); h++)
        rc = host_ids(&s, in->capture_dir, h, next);
    free(next);
    if (!rc)
        rc = hash_packets(&s);
    rep.packets = s.n;
    for (uint32_t sw = 0; !rc && sw < s.switches; sw++)
        for (uint32_t p = 0; !rc && p < s.k; p++)
            rc = read_port(&s, in->capture_dir, sw, p, &rep);
    for (size_t i = 0; !rc && i < n_faults; i++) {
        rep.faults[i].counter = in->fault_drops[i];
        if (faults[i].kind == QR_LINK_GRAY || faults[i].kind == QR_LINK_BLACKHOLE)
            rc = read_fault(&s, in->capture_dir, &faults[i], &rep.faults[i]);
        if (!rc && rep.faults[i].logged != rep.faults[i].counter)
            rc = qri_err(errbuf, QR_EVALUE,
                         "%s/fault-%u.pcap: holds %" PRIu64 " packets, the rule's counter says "
                         "%" PRIu64 " were dropped: the log is incomplete",
                         in->capture_dir, faults[i].fault, rep.faults[i].logged,
                         rep.faults[i].counter);
    }
    /* every packet followed; its path, fate, and the port its direction takes at each switch */
    if (!rc && (!(drops = calloc(s.n + 1, sizeof *drops)) ||
                !(s.first_hop = calloc(s.n + 1, sizeof *s.first_hop))))
        rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < s.n; i++) {
        struct fp *x = &s.p[i];
        uint32_t path[5], hops;
        rc = follow(&s, x, path, &hops, &rep);
        if (rc)
            break;
        rep.hops += hops;
        uint32_t d = x->r->dir;
        if (x->fate == 1) {
            rep.delivered++;
            if (x->fault)
                rc = qri_err(errbuf, QR_EVALUE,
                             "%s: packet %u is in fault %u's log but reached host %u",
                             dir_text(&s, d, d1, sizeof d1), x->r->seq, x->fault,
                             qr_flow_table_dir_dst(s.ft, d));
            if (!rep.dir_hops[d]) {
                rep.dir_hops[d] = (uint8_t)hops;
                memcpy(rep.dir_path[d], path, hops * sizeof *path);
            }
        }
    }
    if (!rc && s.n) {
        qsort(s.first_hop, s.n, sizeof *s.first_hop, qri_cmp_i64);
        rep.hop_p50_ns = qr_percentile_i64(s.first_hop, s.n, 0.5);
        rep.hop_p99_ns = qr_percentile_i64(s.first_hop, s.n, 0.99);
    }
    /* the drops: by the fault whose log holds them, else by their port's queue */
    for (size_t i = 0; !rc && i < s.n; i++) {
        struct fp *x = &s.p[i];
        if (x->fate != 2)
            continue;
        uint32_t d = x->r->dir;
        uint8_t port = s.dir_port[(size_t)d * s.switches + x->drop_sw];
        qr_row_drop *r = &drops[n_drops++];
        *r = (qr_row_drop){.packet = qr_packet_id(d, x->r->seq),
                           .dir = d,
                           .time_ns = x->drop_t,
                           .sw = x->drop_sw,
                           .port = port < MANY_PORTS ? port : UINT32_MAX,
                           .bytes = x->r->pk.ip_len,
                           .reason = x->fault ? QR_DROP_FAULT : QR_DROP_BUFFER_FULL};
        if (x->fault) {
            const qr_fabric_fault *f = &faults[x->fault - 1];
            qr_node from, to;
            uint32_t fport;
            qr_topology_link_ends(s.topo, f->link, &from, &to, &fport);
            uint32_t at = from.kind == QR_NODE_HOST ? to.index : from.index;
            if (at != x->drop_sw)
                rc = qri_err(errbuf, QR_EVALUE,
                             "%s: packet %u is in fault %u's log (at s%u) but stopped at s%u",
                             dir_text(&s, d, d1, sizeof d1), x->r->seq, x->fault, at,
                             x->drop_sw);
            if (from.kind != QR_NODE_HOST)
                r->port = fport;
            rep.fault_drops++;
        } else {
            rep.queue_drops++;
            if (r->port == UINT32_MAX)
                rep.unknown_port_drops++;
            else
                rep.ports[r->sw * s.k + r->port].queue_drops++;
        }
    }
    /* the queues' drops against their counters, switch by switch */
    for (uint32_t sw = 0; !rc && sw < s.switches; sw++) {
        int64_t cap = 0, cnt = 0;
        for (uint32_t p = 0; p < s.k; p++) {
            cap += (int64_t)rep.ports[sw * s.k + p].queue_drops;
            cnt += (int64_t)rep.ports[sw * s.k + p].qdisc_drops;
        }
        for (size_t i = 0; i < n_drops; i++)
            cap += drops[i].sw == sw && drops[i].port == UINT32_MAX &&
                   drops[i].reason == QR_DROP_BUFFER_FULL;
        if (cap != cnt && rep.mismatch_sw == UINT32_MAX) {
            rep.mismatch_sw = sw;
            rep.mismatch_captured = cap;
            rep.mismatch_counted = cnt;
            if (!rep.unrecorded)
                rc = qri_err(errbuf, QR_EVALUE,
                             "s%u: its captures show %" PRId64 " queue drops, its qdiscs counted "
                             "%" PRId64 ": the captures do not hold the whole run",
                             sw, cap, cnt);
        }
    }
    if (!rc)
        rc = queues(&s, &rep, drops, n_drops);
    /* what crossed each faulty link: its sending end's departures (a host's: its switch's
     * arrivals from it) and its drops */
    for (size_t i = 0; !rc && i < n_faults; i++) {
        qr_node from, to;
        uint32_t fport, hsw = 0, hport = 0;
        qr_topology_link_ends(s.topo, faults[i].link, &from, &to, &fport);
        if (from.kind == QR_NODE_HOST)
            qr_topology_host_attach(s.topo, from.index, &hsw, &hport);
        rep.faults[i].crossed =
            from.kind == QR_NODE_HOST ? rep.ports[hsw * s.k + hport].in
                                      : rep.ports[from.index * s.k + fport].out;
        rep.faults[i].crossed += from.kind == QR_NODE_HOST ? 0 : rep.faults[i].dropped;
        qr_link_faults_row(qr_fabric_link_faults(in->fab), i, &lf[i]);
        lf[i].crossed = rep.faults[i].crossed;
        lf[i].dropped = rep.faults[i].dropped;
    }
    /* the data directions each core switch carried */
    for (size_t d = 0; !rc && d < s.n_dirs; d++) {
        rep.dir_src[d] = qr_flow_table_dir_src(s.ft, (uint32_t)d);
        rep.dir_dst[d] = qr_flow_table_dir_dst(s.ft, (uint32_t)d);
        if (!rep.dir_hops[d])
            continue;
        rep.directions++;
        if (rep.dir_hops[d] == 5 && !qr_dir_is_ack((uint32_t)d))
            for (uint32_t c = 0, sw = 0; sw < s.switches; sw++)
                if (qr_topology_switch_kind(s.topo, sw) == QR_NODE_CORE) {
                    rep.core_dirs[c] += rep.dir_path[d][2] == sw;
                    c++;
                }
    }
    if (!rc && !(dirs = calloc(s.n_dirs + 1, sizeof *dirs)))
        rc = QR_ENOMEM;
    int64_t end_ns = 0;
    for (size_t d = 0; !rc && d < s.n_dirs; d++)
        dirs[d] = (qr_row_direction){.dir = (uint32_t)d,
                                     .flow = qr_dir_flow((uint32_t)d),
                                     .src = rep.dir_src[d],
                                     .dst = rep.dir_dst[d]};
    for (size_t i = 0; !rc && i < s.n; i++) {
        const struct fp *x = &s.p[i];
        qr_row_direction *r = &dirs[x->r->dir];
        r->sent++;
        r->sent_bytes += x->r->pk.ip_len;
        if (x->fate == 1) {
            r->delivered++;
            r->delivered_bytes += x->r->pk.ip_len;
        } else {
            r->dropped++;
            r->dropped_bytes += x->r->pk.ip_len;
        }
        for (int j = 0; j < x->n_obs; j++)
            if (x->o[j].t > end_ns)
                end_ns = x->o[j].t;
    }
    if (!rc)
        rc = qri_truth_stage(in->rec_dir, tmp, sizeof tmp, errbuf);
    staged = !rc;
    if (!rc) {
        qr_truth_info info = {.recording_id = qr_recording_id(rec),
                              .end = QR_END_COMPLETED,
                              .sim_end_ns = end_ns,
                              .events = rep.hops,
                              .link_faults = lf,
                              .n_link_faults = n_faults};
        snprintf(path, sizeof path, "%s/truth.h5", tmp);
        rc = qr_truth_write(path, qr_recording_scenario(rec), &info, drops, n_drops, dirs,
                            s.n_dirs, errbuf);
    }
    if (!rc)
        rc = qri_truth_commit(in->rec_dir, tmp, errbuf);
    if (rc && staged)
        qri_truth_discard(tmp);
    free(drops);
    free(dirs);
    free(lf);
    free(s.p);
    free(s.start);
    free(s.table);
    free(s.dir_port);
    free(s.first_hop);
    qri_tb_conns_free(&s.conns);
    qr_recording_close(rec);
    if (!rc && rep_out)
        *rep_out = rep;
    else
        qr_fabric_truth_report_free(&rep);
    return rc;
}

/* ---- the CSV files ---- */

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
                p->sw, p->port, pk == QR_NODE_HOST ? "h" : "s", peer, p->in, p->out,
                p->queue_drops, p->qdisc_drops, p->max_queue_bytes);
    }
}

static void write_paths(FILE *f, const void *vctx)
{
    const qr_fabric_truth_report *r = ((const struct csv_ctx *)vctx)->r;
    fprintf(f, "dir,flow,src,dst,hops,path\n");
    for (size_t d = 0; d < r->n_dirs; d++) {
        fprintf(f, "%zu,%u,%u,%u,%u,", d, qr_dir_flow((uint32_t)d), r->dir_src[d], r->dir_dst[d],
                r->dir_hops[d]);
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
