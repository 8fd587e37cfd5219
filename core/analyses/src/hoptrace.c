/* qreplay: per-hop traces, the drop debugger and the latency profiler of qreplay trace
 * (hoptrace.h). Two passes over the arrival log: the first gathers each recorded packet's hop tests
 * and fate so the expression can be evaluated per packet; the second keeps the matched packets'
 * hops, drops and queueing. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/hoptrace.h"
#include "qreplay/metrics.h"
#include "qreplay/pcap_file.h"
#include "qreplay/topology.h"

#include "hoptrace_links.h"
#include "hoptrace_loops.h"
#include "internal.h"
#include "map.h"

#define NOT_KEPT UINT32_MAX

typedef struct pstate {
    const qr_rec_packet *rp; /* NULL: no such recorded packet */
    uint64_t atoms;
    int64_t first_ns, last_ns, queue_ns, last_q; /* last_q: the queueing at the last copy */
    int64_t drop_ns;
    uint32_t hops, hop2, rank, drop_sw, drop_port; /* hops: the mirrored ones */
    uint8_t fate; /* after pass 1: what the trace can say (QR_TRACE_SILENT, ...), see observed */
    uint8_t last; /* the decision at the last mirrored hop (drop_sw, drop_port at drop_ns) */
    uint8_t retransmit, detected, matched, in_flight;
    uint32_t prev_sw, prev_port; /* pass 2: its last copy (prev_ns INT64_MIN: none yet) */
    int64_t prev_ns;
} pstate;

typedef struct group {
    uint32_t hop, sw, port;
    int64_t *v;
    size_t n, cap;
    double sum;
} group;

typedef struct ctx {
    const qr_recording *rec;
    const qr_flow_table *ft;
    const qr_config *c;
    qr_topology *topo;
    qr_match *m;
    size_t n_dirs;
    size_t *off;      /* n_dirs + 1: the first slot of each direction */
    pstate *st;       /* one per slot */
    qri_map counters; /* (queue key, counter period) -> the drops its switch counted in it */
    int64_t counter_ns;
    qri_map groups;
    group *g;
    size_t n_g, cap_g;
    size_t cap_hops, cap_drops;
    /* the mirror: per switch, when its session's FIFO empties; a bit per log record whose copy
     * the analyzer never got (not mirrored, or lost) */
    int64_t *mirror_free;
    uint8_t *unseen;
    size_t cap_unseen;
    int64_t log_end;
    /* the ECMP profile: per switch port (sw x maxp + port), the admitted matched packets, bytes
     * and distinct flows (ecmp_seen: queue key, flow) */
    uint32_t maxp;
    uint8_t *up; /* per switch port: an up port (towards a higher tier) */
    uint64_t *ecmp_pk, *ecmp_bytes, *ecmp_flows;
    qri_map ecmp_seen;
    qri_link_lat *lat; /* the latency profiler's links */
    qri_loops *loops;  /* the loop debugger */
} ctx;

void qr_hoptrace_opts_default(qr_hoptrace_opts *o)
{
    memset(o, 0, sizeof *o);
    o->match = "all";
    o->limit = 1000;
    o->counter_interval_ns = 1000000;
    o->mirror = QR_MIRROR_ALL;
    o->mirror_buffer_bytes = 65536;
    o->link_ratio = 2;
}

int qr_everflow_rule(const qr_packet *k, uint32_t sample_bits)
{
    if (k->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST))
        return 1;
    return sample_bits > 0 && sample_bits <= 16 && (k->ip_id & ((1u << sample_bits) - 1)) == 0;
}

const char *qr_mirror_name(int mirror)
{
    return mirror == QR_MIRROR_ALL ? "all" : mirror == QR_MIRROR_EVERFLOW ? "everflow" : NULL;
}

int qr_mirror_parse(const char *name, int *mirror)
{
    for (int m = QR_MIRROR_ALL; m <= QR_MIRROR_EVERFLOW; m++)
        if (name && strcmp(name, qr_mirror_name(m)) == 0) {
            *mirror = m;
            return QR_OK;
        }
    return QR_EVALUE;
}

void qr_hoptrace_free(qr_hoptrace *t)
{
    free(t->packets);
    free(t->hops);
    free(t->drops);
    free(t->profile);
    free(t->links);
    free(t->loops);
    free(t->ecmp);
    qr_guided_free(&t->guided);
    qr_bounce_free(&t->bounce);
    memset(t, 0, sizeof *t);
}

static void say(const qr_hoptrace_opts *o, int pass, uint64_t done, uint64_t of)
{
    if (!o->progress)
        return;
    char line[160];
    if (of)
        snprintf(line, sizeof line, "pass %d: %" PRIu64 " of %" PRIu64 " arrivals", pass, done, of);
    else
        snprintf(line, sizeof line, "pass %d: %" PRIu64 " arrivals", pass, done);
    o->progress(o->progress_ctx, line);
}

/* Slots for every recorded packet, by direction then number; each packet's retransmission mark. */
static int index_packets(ctx *x, char *errbuf)
{
    x->n_dirs = qr_flow_table_directions(x->ft);
    x->off = calloc(x->n_dirs + 1, sizeof *x->off);
    qr_seq_state *seq = calloc(x->n_dirs ? x->n_dirs : 1, sizeof *seq);
    if (!x->off || !seq) {
        free(seq);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    uint32_t hosts = qr_recording_hosts(x->rec);
    for (uint32_t h = 0; h < hosts; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(x->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (pk[i].dir < x->n_dirs && pk[i].seq + (size_t)1 > x->off[pk[i].dir + 1])
                x->off[pk[i].dir + 1] = pk[i].seq + (size_t)1;
    }
    for (size_t d = 0; d < x->n_dirs; d++)
        x->off[d + 1] += x->off[d];
    x->st = calloc(x->off[x->n_dirs] ? x->off[x->n_dirs] : 1, sizeof *x->st);
    if (!x->st) {
        free(seq);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (uint32_t h = 0; h < hosts; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(x->rec, h, &n);
        for (size_t i = 0; i < n; i++) {
            if (pk[i].dir >= x->n_dirs)
                continue;
            pstate *s = &x->st[x->off[pk[i].dir] + pk[i].seq];
            uint64_t rel;
            s->rp = &pk[i];
            s->retransmit = (uint8_t)qr_seq_step(&seq[pk[i].dir], pk[i].pk.tcp_flags, pk[i].pk.seq,
                                                 qr_tcp_payload(&pk[i].pk), &rel);
            s->rank = NOT_KEPT;
            s->first_ns = INT64_MIN;
        }
    }
    free(seq);
    return QR_OK;
}

static pstate *state_of(ctx *x, uint64_t packet)
{
    uint32_t dir = qr_packet_id_dir(packet), seq = qr_packet_id_seq(packet);
    if (dir >= x->n_dirs || x->off[dir] + seq >= x->off[dir + 1])
        return NULL;
    pstate *s = &x->st[x->off[dir] + seq];
    return s->rp ? s : NULL;
}

static int check_place(ctx *x, const qr_arrival *a, uint64_t record, const char *path, char *errbuf)
{
    if (a->sw < qr_topology_switches(x->topo) && a->port < qr_topology_ports(x->topo, a->sw))
        return QR_OK;
    return qri_err(errbuf, QR_EVALUE,
                   "%s: record %" PRIu64 ": switch %u port %u is not in the recording's topology "
                   "(a log of another network?)",
                   path, record, a->sw, a->port);
}

/* The queueing delay at a hop: what is ahead in the FIFO, at the port's configured rate (what an
 * operator knows; a port degraded below it by a fault nobody knows of drains slower). */
static int64_t queue_ns_of(const ctx *x, const qr_arrival *a)
{
    return qri_wire_ns(a->queue_bytes, x->c->links.rate_bps);
}

/* The drops the switch's counter for port (sw, port) counted in the interval holding t. */
static uint64_t counted(const ctx *x, uint32_t sw, uint32_t port, int64_t t)
{
    return (uint64_t)(uintptr_t)qri_map_get(&x->counters, qr_queue_key(sw, port),
                                            (uint64_t)(t / x->counter_ns));
}

/* What a trace that stops at (sw, port) at time t can say of the log's decision: the switch's
 * own reason where it counts one, silent where the port's counter did not move, counted (reason
 * unknown) where it moved for other drops. A planted fault is never named. */
static int observed(const ctx *x, int decision, uint32_t sw, uint32_t port, int64_t t)
{
    if (decision == QR_ADMIT)
        return QR_ADMIT;
    if (decision != QR_DROP_FAULT)
        return decision;
    return counted(x, sw, port, t) ? QR_TRACE_COUNTED : QR_TRACE_SILENT;
}

/* Whether the analyzer gets the copy switch a.sw makes of packet s at this arrival: the rule
 * matches it, and its session's FIFO has room (the copies drain at the session's rate). */
static int mirrored(ctx *x, const qr_hoptrace_opts *o, const pstate *s, const qr_arrival *a,
                    qr_row_hop_summary *sum)
{
    if (o->mirror == QR_MIRROR_EVERFLOW && !qr_everflow_rule(&s->rp->pk, o->mirror_sample))
        return 0;
    sum->mirror_copies++;
    if (!o->mirror_rate_bps)
        return 1;
    uint64_t size = (a->bytes < QR_MIRROR_SNAP ? a->bytes : QR_MIRROR_SNAP) + QR_MIRROR_ENCAP;
    int64_t *free_at = &x->mirror_free[a->sw];
    uint64_t held = 0;
    if (*free_at > a->time_ns)
        held = (uint64_t)((__int128)(*free_at - a->time_ns) * (__int128)o->mirror_rate_bps /
                          8000000000);
    if (held + size > o->mirror_buffer_bytes) {
        sum->mirror_lost++;
        return 0;
    }
    *free_at =
        (*free_at > a->time_ns ? *free_at : a->time_ns) + qr_link_tx_ns(size, o->mirror_rate_bps);
    return 1;
}

static int mark_unseen(ctx *x, uint64_t record)
{
    size_t byte = (size_t)(record / 8);
    if (byte >= x->cap_unseen) {
        size_t cap = x->cap_unseen ? x->cap_unseen : 4096;
        while (cap <= byte)
            cap *= 2;
        uint8_t *v = realloc(x->unseen, cap);
        if (!v)
            return QR_ENOMEM;
        memset(v + x->cap_unseen, 0, cap - x->cap_unseen);
        x->unseen = v;
        x->cap_unseen = cap;
    }
    x->unseen[byte] |= (uint8_t)(1u << (record % 8));
    return QR_OK;
}

static int is_unseen(const ctx *x, uint64_t record)
{
    size_t byte = (size_t)(record / 8);
    return byte < x->cap_unseen && (x->unseen[byte] >> (record % 8) & 1);
}

static int pass1(ctx *x, const qr_hoptrace_opts *o, qr_row_hop_summary *sum, char *errbuf)
{
    qr_arrival_reader *r;
    int rc = qr_arrival_reader_open(&r, o->arrivals, errbuf);
    if (rc)
        return rc;
    qr_arrival a;
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        sum->arrivals++;
        if ((rc = check_place(x, &a, sum->arrivals, o->arrivals, errbuf)))
            break;
        if (sum->arrivals % 1000000 == 0)
            say(o, 1, sum->arrivals, 0);
        /* the switches' drop counters: every drop a switch decided (a fault on a link or in a
         * switch's fabric counts nowhere), read once per counter interval */
        if (a.decision != QR_ADMIT && a.decision != QR_DROP_FAULT) {
            void **slot = qri_map_slot(&x->counters, qr_queue_key(a.sw, a.port),
                                       (uint64_t)(a.time_ns / x->counter_ns));
            if (slot)
                *slot = (void *)((uintptr_t)*slot + 1);
            else if (qri_map_put(&x->counters, qr_queue_key(a.sw, a.port),
                                 (uint64_t)(a.time_ns / x->counter_ns), (void *)(uintptr_t)1)) {
                rc = QR_ENOMEM;
                break;
            }
        }
        if (a.time_ns > x->log_end)
            x->log_end = a.time_ns;
        pstate *s = state_of(x, a.packet);
        if (!s) {
            sum->unknown_arrivals++;
            continue;
        }
        if (!mirrored(x, o, s, &a, sum)) {
            if (mark_unseen(x, sum->arrivals - 1)) {
                rc = QR_ENOMEM;
                break;
            }
            continue;
        }
        int64_t q = queue_ns_of(x, &a);
        if (!s->hops++)
            s->first_ns = a.time_ns;
        s->last_ns = a.time_ns;
        s->atoms |= qr_match_hop(x->m, &a, q);
        if (a.decision == QR_ADMIT)
            s->queue_ns += q;
        s->last_q = q;
        s->last = (uint8_t)a.decision;
        s->drop_sw = a.sw;
        s->drop_port = a.port;
        s->drop_ns = a.time_ns;
    }
    qr_arrival_reader_close(r);
    if (rc != QR_END)
        return rc;
    /* the counters are complete: where each trace stops and what it can say there, and the drop
     * tests on it. A trace whose last copy is a drop stops at that queue; one whose last copy
     * was admitted towards its destination host was delivered (unless, in the switches' copies,
     * that host's receive record says it was lost: then on the last link); one that stops after an
     * admit anywhere else lost its packet after that copy (a drop no switch's queue decided, or a
     * copy the mirror lost: the analyzer cannot tell), unless the observation ends (the mirror
     * sessions stopped, or the log's last arrival) before its next copy was due: the longest
     * stay at one hop (the switch's whole buffer ahead of it at the link rate, then the link) */
    int64_t end = o->observed_until_ns > x->log_end ? o->observed_until_ns : x->log_end;
    int64_t longest =
        qr_link_tx_ns(x->c->buffer.size_bytes, x->c->links.rate_bps) + x->c->links.delay_ns;
    for (size_t i = 0; i < x->off[x->n_dirs]; i++) {
        pstate *s = &x->st[i];
        if (!s->rp || !s->hops)
            continue;
        int stop = s->last;
        if (stop == QR_ADMIT) {
            uint32_t dst = qr_flow_table_dir_dst(x->ft, s->rp->dir), sw, port;
            qr_topology_host_attach(x->topo, dst, &sw, &port);
            /* left towards its host: delivered, unless (a real network's copies) the host saw
             * it lost: its receive record says it was lost on the last link, where no copy
             * follows. A replay's log is its whole network: what it delivered, it delivered. */
            if (s->drop_sw == sw && s->drop_port == port &&
                !(o->runtime &&
                  qr_recording_detected(x->rec, qr_packet_id(s->rp->dir, s->rp->seq))))
                continue;
            if (end - s->drop_ns < longest) {
                s->in_flight = 1;
                continue;
            }
            stop = QR_DROP_FAULT;     /* the counters tell what they can */
            s->queue_ns -= s->last_q; /* the hop it stopped at is its drop's, as a queue drop's */
        }
        s->fate = (uint8_t)observed(x, stop, s->drop_sw, s->drop_port, s->drop_ns);
        s->atoms |= qr_match_fate(x->m, s->fate);
    }
    return QR_OK;
}

static int cmp_first(const void *pa, const void *pb)
{
    const pstate *a = *(pstate *const *)pa, *b = *(pstate *const *)pb;
    if (a->first_ns != b->first_ns)
        return a->first_ns < b->first_ns ? -1 : 1;
    uint64_t ia = qr_packet_id(a->rp->dir, a->rp->seq), ib = qr_packet_id(b->rp->dir, b->rp->seq);
    return ia < ib ? -1 : ia > ib;
}

/* A delivered trace of `hops` copies on a path of `want` switches: a copy missing from a trace
 * that goes on is a lost copy, not a drop (Everflow: seen at a later switch, missing at an
 * earlier one). */
static void delivered(qr_row_hop_summary *sum, uint32_t hops, uint32_t want)
{
    sum->delivered++;
    sum->gaps += hops < want;
    sum->gap_copies += hops < want ? want - hops : 0;
}

/* Evaluate every recorded packet; keep the first `limit` matched ones that reached a switch. */
static int select_packets(ctx *x, const qr_hoptrace_opts *o, qr_hoptrace *out, char *errbuf)
{
    size_t slots = x->off[x->n_dirs], n = 0, cap = 0;
    pstate **seen = NULL;
    qr_row_hop_summary *sum = &out->summary;
    for (size_t i = 0; i < slots; i++) {
        pstate *s = &x->st[i];
        if (!s->rp)
            continue;
        sum->packets++;
        uint64_t id = qr_packet_id(s->rp->dir, s->rp->seq);
        s->detected = (uint8_t)qr_recording_detected(x->rec, id);
        qr_match_packet mp = {id,
                              s->rp->dir,
                              qr_flow_table_dir_src(x->ft, s->rp->dir),
                              qr_flow_table_dir_dst(x->ft, s->rp->dir),
                              &s->rp->pk,
                              s->retransmit,
                              s->detected,
                              s->first_ns,
                              s->atoms};
        if (!qr_match_eval(x->m, &mp))
            continue;
        s->matched = 1;
        sum->matched++;
        if (!s->hops) {
            sum->unseen++;
            continue;
        }
        if (s->fate) {
            sum->dropped++;
        } else if (s->in_flight) {
            sum->in_flight++;
        } else {
            delivered(sum, s->hops, qr_topology_hops(x->topo, mp.src, mp.dst));
        }
        if (qri_grow((void **)&seen, &cap, n, sizeof *seen, 256)) {
            free(seen);
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
        }
        seen[n++] = s;
    }
    if (n)
        qsort(seen, n, sizeof *seen, cmp_first);
    size_t keep = o->limit && o->limit < n ? o->limit : n;
    out->packets = calloc(keep ? keep : 1, sizeof *out->packets);
    int64_t *path = malloc((sum->delivered ? sum->delivered : 1) * sizeof *path);
    if (!out->packets || !path) {
        free(seen);
        free(path);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    size_t n_path = 0;
    double path_sum = 0;
    for (size_t i = 0; i < n; i++) {
        pstate *s = seen[i];
        if (!s->fate && !s->in_flight) { /* the delivered ones (the in-flight have no path yet) */
            path[n_path++] = s->queue_ns;
            path_sum += (double)s->queue_ns;
        }
        if (i >= keep)
            continue;
        s->rank = (uint32_t)i;
        const qr_packet *k = &s->rp->pk;
        qr_row_hop_packet *r = &out->packets[i];
        r->packet = qr_packet_id(s->rp->dir, s->rp->seq);
        r->dir = s->rp->dir;
        r->flow = qr_dir_flow(r->dir);
        r->src = qr_flow_table_dir_src(x->ft, r->dir);
        r->dst = qr_flow_table_dir_dst(x->ft, r->dir);
        r->sport = k->src_port;
        r->dport = k->dst_port;
        r->flags = k->tcp_flags;
        r->ip_id = k->ip_id;
        r->retransmit = s->retransmit;
        r->detected = s->detected;
        r->fate = s->fate;
        r->in_flight = s->in_flight;
        r->seq = k->seq;
        r->payload = qr_tcp_payload(k);
        r->bytes = k->ip_len;
        r->sent_ns = k->time_ns;
        r->first_ns = s->first_ns;
        r->last_ns = s->last_ns;
        r->hops = s->hops;
        r->queue_ns = s->queue_ns;
        r->drop_switch = s->fate ? s->drop_sw : 0;
        r->drop_port = s->fate ? s->drop_port : 0;
    }
    out->n_packets = keep;
    sum->kept = keep;
    qsort(path, n_path, sizeof *path, qri_cmp_i64);
    sum->queue_mean_ns = n_path ? path_sum / (double)n_path : 0;
    sum->queue_p99_ns = qr_percentile_i64(path, n_path, 0.99);
    sum->queue_max_ns = n_path ? path[n_path - 1] : 0;
    free(path);
    free(seen);
    return QR_OK;
}

static int profile_add(ctx *x, uint32_t hop, const qr_arrival *a, int64_t q)
{
    uint64_t key = qr_queue_key(a->sw, a->port);
    void **slot = qri_map_slot(&x->groups, hop, key);
    size_t gi;
    if (slot) {
        gi = (size_t)(uintptr_t)*slot - 1;
    } else {
        if (qri_grow((void **)&x->g, &x->cap_g, x->n_g, sizeof *x->g, 16))
            return QR_ENOMEM;
        gi = x->n_g++;
        x->g[gi] = (group){hop, a->sw, a->port, NULL, 0, 0, 0};
        if (qri_map_put(&x->groups, hop, key, (void *)(uintptr_t)(gi + 1)))
            return QR_ENOMEM;
    }
    group *g = &x->g[gi];
    if (qri_grow((void **)&g->v, &g->cap, g->n, sizeof *g->v, 64))
        return QR_ENOMEM;
    g->v[g->n++] = q;
    g->sum += (double)q;
    return QR_OK;
}

/* Whether port is one of sw's up ports (x->up, filled once by qr_hoptrace_run). */
static int up_port(const ctx *x, uint32_t sw, uint32_t port)
{
    return x->up[(size_t)sw * x->maxp + port];
}

static int ecmp_add(ctx *x, const pstate *s, const qr_arrival *a)
{
    if (!up_port(x, a->sw, a->port))
        return QR_OK;
    size_t at = (size_t)a->sw * x->maxp + a->port;
    x->ecmp_pk[at]++;
    x->ecmp_bytes[at] += a->bytes;
    uint64_t key = qr_queue_key(a->sw, a->port), flow = qr_dir_flow(s->rp->dir);
    if (qri_map_get(&x->ecmp_seen, key, flow))
        return QR_OK;
    x->ecmp_flows[at]++;
    return qri_map_put(&x->ecmp_seen, key, flow, (void *)(uintptr_t)1);
}

/* The ECMP profile's rows: every switch with more than one up port the matched packets used. */
static int ecmp_rows(ctx *x, qr_hoptrace *out)
{
    uint32_t sws = qr_topology_switches(x->topo);
    size_t n = 0;
    for (uint32_t s = 0; s < sws; s++)
        for (uint32_t p = 0; p < qr_topology_ports(x->topo, s); p++)
            n += up_port(x, s, p);
    out->ecmp = calloc(n ? n : 1, sizeof *out->ecmp);
    if (!out->ecmp)
        return QR_ENOMEM;
    for (uint32_t s = 0; s < sws; s++) {
        uint64_t group = 0;
        uint32_t members = 0;
        for (uint32_t p = 0; p < qr_topology_ports(x->topo, s); p++)
            if (up_port(x, s, p)) {
                group += x->ecmp_pk[(size_t)s * x->maxp + p];
                members++;
            }
        if (members < 2 || !group)
            continue;
        for (uint32_t p = 0; p < qr_topology_ports(x->topo, s); p++) {
            if (!up_port(x, s, p))
                continue;
            size_t at = (size_t)s * x->maxp + p;
            qr_row_hop_ecmp *r = &out->ecmp[out->n_ecmp++];
            r->sw = s;
            r->port = p;
            r->link = qr_topology_port_link(x->topo, s, p);
            qr_topology_link_name(x->topo, r->link, r->link_name, sizeof r->link_name);
            r->packets = x->ecmp_pk[at];
            r->bytes = x->ecmp_bytes[at];
            r->flows = x->ecmp_flows[at];
            r->share = (double)r->packets / (double)group;
        }
    }
    return QR_OK;
}

static int add_drop(ctx *x, qr_hoptrace *out, const pstate *s, const qr_arrival *a, uint32_t hop)
{
    if (qri_grow((void **)&out->drops, &x->cap_drops, out->n_drops, sizeof *out->drops, 64))
        return QR_ENOMEM;
    qr_row_hop_drop *d = &out->drops[out->n_drops++];
    memset(d, 0, sizeof *d);
    d->packet = a->packet;
    d->dir = s->rp->dir;
    d->flow = qr_dir_flow(d->dir);
    d->src = qr_flow_table_dir_src(x->ft, d->dir);
    d->dst = qr_flow_table_dir_dst(x->ft, d->dir);
    d->hop = hop;
    d->time_ns = a->time_ns;
    d->sw = a->sw;
    d->port = a->port;
    d->bytes = a->bytes;
    d->reason = s->fate; /* what the trace can say (observed) */
    d->tagged = a->tagged;
    d->detected = s->detected;
    d->retransmit = s->retransmit;
    d->payload = qr_tcp_payload(&s->rp->pk);
    d->queue_bytes = a->queue_bytes;
    d->total_bytes = a->total_bytes;
    d->threshold = a->threshold;
    /* Everflow's drop debugger: the packet's mirrored trace stops at this switch, headed out of
     * this port. If the port's drop counter moved in that counter interval the switch dropped it
     * (counted); if not, it was lost silently on the link out of the port (or in the switch) */
    d->counter_drops = counted(x, a->sw, a->port, a->time_ns);
    d->silent = d->counter_drops == 0;
    d->link = qr_topology_port_link(x->topo, a->sw, a->port);
    qr_topology_link_name(x->topo, d->link, d->link_name, sizeof d->link_name);
    d->resent_ns = d->payload || (s->rp->pk.tcp_flags & (QR_TCP_SYN | QR_TCP_FIN)) ? -1 : -2;
    return QR_OK;
}

static int pass2(ctx *x, const qr_hoptrace_opts *o, qr_hoptrace *out, char *errbuf)
{
    qr_arrival_reader *r;
    int rc = qr_arrival_reader_open(&r, o->arrivals, errbuf);
    if (rc)
        return rc;
    qr_arrival a;
    uint64_t record = 0;
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        if (++record % 1000000 == 0)
            say(o, 2, record, out->summary.arrivals);
        pstate *s = state_of(x, a.packet);
        if (!s || !s->matched || is_unseen(x, record - 1))
            continue;
        /* the latency profiler's links: from its previous copy to this one */
        if (s->hop2 && qri_link_lat_add(x->lat, s->prev_sw, s->prev_port, a.sw, s->prev_ns,
                                        a.time_ns, a.bytes)) {
            rc = QR_ENOMEM;
            break;
        }
        s->prev_sw = a.sw;
        s->prev_port = a.port;
        s->prev_ns = a.time_ns;
        uint32_t hop = ++s->hop2;
        if (qri_loops_copy(x->loops, a.packet, hop, a.sw, a.time_ns)) {
            rc = QR_ENOMEM;
            break;
        }
        int64_t q = queue_ns_of(x, &a);
        int stops = hop == s->hops && s->fate;     /* the trace stops here, not delivered */
        uint8_t seen = stops ? s->fate : QR_ADMIT; /* observed */
        if (s->rank != NOT_KEPT) {
            if (qri_grow((void **)&out->hops, &x->cap_hops, out->n_hops, sizeof *out->hops, 256)) {
                rc = QR_ENOMEM;
                break;
            }
            out->hops[out->n_hops++] = (qr_row_hop){
                a.packet, s->rp->dir, hop, a.time_ns,     a.sw,          a.port,     a.bytes,
                seen,     a.tagged,   q,   a.queue_bytes, a.total_bytes, a.threshold};
        }
        rc = stops ? add_drop(x, out, s, &a, hop) : profile_add(x, hop, &a, q);
        if (!rc && !stops)
            rc = ecmp_add(x, s, &a);
        if (rc)
            break;
    }
    qr_arrival_reader_close(r);
    if (rc == QR_ENOMEM)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    return rc == QR_END ? QR_OK : rc;
}

/* Each drop's detection and the sender's next send of the same sequence. */
static int resends(ctx *x, qr_hoptrace *out, char *errbuf)
{
    qri_map by_seq;
    size_t *next = malloc((out->n_drops ? out->n_drops : 1) * sizeof *next);
    if (!next || qri_map_init(&by_seq)) {
        free(next);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    int rc = QR_OK;
    for (size_t i = 0; i < out->n_drops && !rc; i++) {
        const pstate *s = state_of(x, out->drops[i].packet);
        if (!out->drops[i].payload && !(s->rp->pk.tcp_flags & (QR_TCP_SYN | QR_TCP_FIN)))
            continue; /* a pure ACK: nothing to resend */
        void **slot = qri_map_slot(&by_seq, s->rp->dir, s->rp->pk.seq);
        next[i] = slot ? (size_t)(uintptr_t)*slot : 0;
        if (slot)
            *slot = (void *)(uintptr_t)(i + 1);
        else if (qri_map_put(&by_seq, s->rp->dir, s->rp->pk.seq, (void *)(uintptr_t)(i + 1)))
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    uint32_t hosts = qr_recording_hosts(x->rec);
    for (uint32_t h = 0; h < hosts && !rc && out->n_drops; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(x->rec, h, &n);
        for (size_t i = 0; i < n; i++) {
            const qr_packet *k = &pk[i].pk;
            if (!qr_tcp_payload(k) && !(k->tcp_flags & (QR_TCP_SYN | QR_TCP_FIN)))
                continue;
            void *v = qri_map_get(&by_seq, pk[i].dir, k->seq);
            for (size_t d = (size_t)(uintptr_t)v; d; d = next[d - 1]) {
                qr_row_hop_drop *x2 = &out->drops[d - 1];
                if (x2->resent_ns < 0 && qr_packet_id_seq(x2->packet) < pk[i].seq)
                    x2->resent_ns = k->time_ns;
            }
        }
    }
    for (size_t i = 0; i < out->n_drops; i++) {
        const qr_row_hop_drop *d = &out->drops[i];
        qr_row_hop_summary *s = &out->summary;
        s->detected += d->detected;
        s->resent += d->resent_ns >= 0;
        s->drops_threshold += d->reason == QR_DROP_THRESHOLD;
        s->drops_buffer_full += d->reason == QR_DROP_BUFFER_FULL;
        s->drops_tagged += d->reason == QR_DROP_TAGGED;
        s->drops_counted += d->reason == QR_TRACE_COUNTED;
        s->silent += d->silent;
    }
    qri_map_free(&by_seq);
    free(next);
    return rc;
}

static int cmp_profile(const void *pa, const void *pb)
{
    const qr_row_hop_profile *a = pa, *b = pb;
    if (a->hop != b->hop)
        return a->hop < b->hop ? -1 : 1;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    if (a->packets != b->packets)
        return a->packets > b->packets ? -1 : 1;
    uint64_t ka = qr_queue_key(a->sw, a->port), kb = qr_queue_key(b->sw, b->port);
    return ka < kb ? -1 : ka > kb;
}

static int cmp_drop(const void *pa, const void *pb)
{
    const qr_row_hop_drop *a = pa, *b = pb;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    return a->packet < b->packet ? -1 : a->packet > b->packet;
}

static int profile(ctx *x, qr_hoptrace *out, char *errbuf)
{
    out->profile = calloc(x->n_g ? x->n_g : 1, sizeof *out->profile);
    if (!out->profile)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    double total = 0;
    for (size_t i = 0; i < x->n_g; i++)
        total += x->g[i].sum;
    for (size_t i = 0; i < x->n_g; i++) {
        group *g = &x->g[i];
        qsort(g->v, g->n, sizeof *g->v, qri_cmp_i64);
        out->profile[i] = (qr_row_hop_profile){g->hop,
                                               g->sw,
                                               g->port,
                                               g->n,
                                               g->n ? g->sum / (double)g->n : 0,
                                               qr_percentile_i64(g->v, g->n, 0.5),
                                               qr_percentile_i64(g->v, g->n, 0.99),
                                               g->n ? g->v[g->n - 1] : 0,
                                               total > 0 ? g->sum / total : 0};
    }
    out->n_profile = x->n_g;
    qsort(out->profile, out->n_profile, sizeof *out->profile, cmp_profile);
    return QR_OK;
}

/* Which switch ports lead up a tier (the members of its ECMP group). */
static void mark_up_ports(ctx *x)
{
    for (uint32_t s = 0; s < qr_topology_switches(x->topo); s++)
        for (uint32_t p = 0; p < qr_topology_ports(x->topo, s); p++) {
            qr_node_kind k;
            uint32_t peer, pp;
            x->up[(size_t)s * x->maxp + p] =
                qr_topology_link(x->topo, s, p, &k, &peer, &pp) == QR_OK &&
                k > qr_topology_switch_kind(x->topo, s);
        }
}

/* The latency profiler's links and how many stand out. */
static int link_rows(ctx *x, qr_hoptrace *out, char *errbuf)
{
    if (qri_link_lat_rows(x->lat, out->opts.link_ratio > 0 ? out->opts.link_ratio : 2,
                          out->summary.rate_bps, &out->links, &out->n_links,
                          &out->summary.link_median_min_ns, &out->summary.link_median_rate_bps))
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    if (qri_loops_rows(x->loops, &out->loops, &out->n_loops, &out->summary.looping))
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    out->summary.loops = out->n_loops;
    for (size_t i = 0; i < out->n_links; i++) {
        out->summary.slow_links += out->links[i].slow;
        out->summary.slow_rate_links += out->links[i].slow_rate;
    }
    return QR_OK;
}

static void ctx_free(ctx *x)
{
    for (size_t i = 0; i < x->n_g; i++)
        free(x->g[i].v);
    free(x->g);
    qri_map_free(&x->groups);
    free(x->off);
    free(x->st);
    qri_map_free(&x->counters);
    qr_topology_destroy(x->topo);
    qr_match_free(x->m);
    free(x->mirror_free);
    free(x->unseen);
    free(x->ecmp_pk);
    free(x->ecmp_bytes);
    free(x->ecmp_flows);
    free(x->up);
    qri_map_free(&x->ecmp_seen);
    qri_link_lat_destroy(x->lat);
    qri_loops_destroy(x->loops);
}

/* What the mirror holds of Everflow's guided probes and link round trips (guided.h), if any. */
static int guided_probes(qr_hoptrace *out, const qr_topology *topo, char *errbuf)
{
    int rc = qr_guided_run(out->opts.mirror_dir, topo, &out->guided, errbuf);
    out->has_guided = rc == QR_OK;
    if (rc == QR_ENOENT)
        rc = QR_OK;
    if (!rc) {
        rc = qr_bounce_run(out->opts.mirror_dir, topo, out->opts.link_ratio, &out->bounce, errbuf);
        out->has_bounce = rc == QR_OK;
        if (rc == QR_ENOENT)
            rc = QR_OK;
    }
    return rc;
}

int qr_hoptrace_run(const qr_recording *rec, const qr_hoptrace_opts *opts, qr_hoptrace *out,
                    char *errbuf)
{
    memset(out, 0, sizeof *out);
    out->opts = *opts;
    if (!opts->match)
        out->opts.match = "all";
    snprintf(out->match, sizeof out->match, "%s", out->opts.match);
    if (!opts->arrivals)
        return qri_err(errbuf, QR_EINVAL, "no arrival log to trace");
    ctx x = {.rec = rec, .ft = qr_recording_flows(rec)};
    x.c = qr_scenario_config(qr_recording_scenario(rec));
    x.counter_ns = out->opts.counter_interval_ns > 0 ? out->opts.counter_interval_ns : 1000000;
    out->opts.counter_interval_ns = x.counter_ns;
    if (qri_map_init(&x.groups) || qri_map_init(&x.counters) || qri_map_init(&x.ecmp_seen)) {
        ctx_free(&x);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    int rc;
    rc = qr_match_parse(&x.m, out->opts.match, rec, errbuf);
    if (!rc && (rc = qr_topology_of_config(&x.topo, x.c)))
        qri_err(errbuf, rc, "cannot build the recording's topology");
    if (!rc && !qr_mirror_name(out->opts.mirror))
        rc = qri_err(errbuf, QR_EINVAL, "mirror rule %d is not one of all, everflow",
                     out->opts.mirror);
    if (!rc && out->opts.mirror_rate_bps &&
        out->opts.mirror_buffer_bytes < QR_MIRROR_SNAP + QR_MIRROR_ENCAP)
        rc = qri_err(errbuf, QR_EINVAL,
                     "a mirror FIFO of %" PRIu64 " B holds no copy (%d B): it would lose them all",
                     out->opts.mirror_buffer_bytes, QR_MIRROR_SNAP + QR_MIRROR_ENCAP);
    if (!rc && !(x.mirror_free = calloc(qr_topology_switches(x.topo) + 1, sizeof *x.mirror_free)))
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (uint32_t s = 0; !rc && s < qr_topology_switches(x.topo); s++)
        if (qr_topology_ports(x.topo, s) > x.maxp)
            x.maxp = qr_topology_ports(x.topo, s);
    size_t ports = (size_t)(x.topo ? qr_topology_switches(x.topo) : 0) * x.maxp + 1;
    if (!rc && (!(x.ecmp_pk = calloc(ports, sizeof *x.ecmp_pk)) ||
                !(x.ecmp_bytes = calloc(ports, sizeof *x.ecmp_bytes)) ||
                !(x.ecmp_flows = calloc(ports, sizeof *x.ecmp_flows)) ||
                !(x.up = calloc(ports, sizeof *x.up))))
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    if (!rc)
        mark_up_ports(&x);
    if (!rc)
        rc = qri_link_lat_create(&x.lat, x.topo) || qri_loops_create(&x.loops, x.topo)
                 ? qri_err(errbuf, QR_ENOMEM, "out of memory")
                 : index_packets(&x, errbuf);
    out->summary.buffer_bytes = x.c->buffer.size_bytes;
    out->summary.rate_bps = x.c->links.rate_bps;
    if (!rc)
        rc = pass1(&x, &out->opts, &out->summary, errbuf);
    if (!rc)
        rc = select_packets(&x, &out->opts, out, errbuf);
    if (!rc && out->summary.matched > out->summary.unseen)
        rc = pass2(&x, &out->opts, out, errbuf);
    if (!rc)
        rc = resends(&x, out, errbuf);
    if (!rc)
        rc = profile(&x, out, errbuf);
    if (!rc)
        rc = ecmp_rows(&x, out) ? qri_err(errbuf, QR_ENOMEM, "out of memory")
                                : link_rows(&x, out, errbuf);
    if (!rc && out->opts.mirror_dir)
        rc = guided_probes(out, x.topo, errbuf);
    if (!rc) {
        /* hops come in log order; order them by packet (its rank) then hop */
        qr_row_hop *sorted = malloc((out->n_hops ? out->n_hops : 1) * sizeof *sorted);
        size_t *at = calloc(out->n_packets + 1, sizeof *at);
        if (!sorted || !at) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < out->n_hops; i++)
                at[state_of(&x, out->hops[i].packet)->rank + 1]++;
            for (size_t i = 0; i < out->n_packets; i++)
                at[i + 1] += at[i];
            for (size_t i = 0; i < out->n_hops; i++)
                sorted[at[state_of(&x, out->hops[i].packet)->rank]++] = out->hops[i];
            free(out->hops);
            out->hops = sorted;
            sorted = NULL;
        }
        free(sorted);
        free(at);
        out->summary.hops_kept = out->n_hops;
        if (out->n_drops)
            qsort(out->drops, out->n_drops, sizeof *out->drops, cmp_drop);
    }
    ctx_free(&x);
    if (rc)
        qr_hoptrace_free(out);
    return rc;
}

int qr_hoptrace_write(const char *path, const qr_scenario *s, const char *recording_id,
                      const qr_hoptrace *t, char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay trace", recording_id, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "match", t->match, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "arrivals", t->opts.arrivals ? t->opts.arrivals : "", errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "runtime", (uint64_t)t->opts.runtime, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "counter_interval_ns", t->opts.counter_interval_ns, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "limit", t->opts.limit, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "mirror", qr_mirror_name(t->opts.mirror), errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "mirror_sample", t->opts.mirror_sample, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "mirror_rate_bps", t->opts.mirror_rate_bps, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "mirror_buffer_bytes", t->opts.mirror_buffer_bytes, errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/packets", &qr_schema_hop_packet, t->packets, t->n_packets, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/hops", &qr_schema_hop, t->hops, t->n_hops, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/drops", &qr_schema_hop_drop, t->drops, t->n_drops, errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/profile", &qr_schema_hop_profile, t->profile, t->n_profile, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/links", &qr_schema_hop_link, t->links, t->n_links, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/loops", &qr_schema_hop_loop, t->loops, t->n_loops, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "link_ratio", t->opts.link_ratio, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/summary", &qr_schema_hop_summary, &t->summary, 1, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/ecmp", &qr_schema_hop_ecmp, t->ecmp, t->n_ecmp, errbuf));
    if (t->has_guided) {
        const qr_guided *g = &t->guided;
        QRI_TRY(
            qr_h5_write_rows(f, "/guided", &qr_schema_guided_port, g->ports, g->n_ports, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "probes", g->probes, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "copies", g->copies, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "delivered", g->delivered, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "lost", g->lost, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "lost_link", g->lost_link, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "lost_inside", g->lost_inside, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "tuples", g->tuples, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/guided", "pinned", g->pinned, errbuf));
        QRI_TRY(
            qr_h5_attr_u64(f, "/guided", "counters_known", (uint64_t)g->counters_known, errbuf));
    }
    if (t->has_bounce) {
        const qr_bounce *b = &t->bounce;
        QRI_TRY(qr_h5_write_rows(f, "/bounce", &qr_schema_bounce, b->rows, b->n_rows, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/bounce", "probes", b->probes, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/bounce", "returned", b->returned, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/bounce", "copies", b->copies, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/bounce", "unseen", b->unseen, errbuf));
        QRI_TRY(qr_h5_attr_i64(f, "/bounce", "median_rtt_ns", b->median_rtt_ns, errbuf));
    }
    if (t->truth.has_truth) {
        const qr_hoptrace_truth *x = &t->truth;
        QRI_TRY(qr_h5_group(f, "/score", errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/score", "silent", x->silent, errbuf));
        QRI_TRY(qr_h5_attr_str(f, "/score", "silent_links", x->silent_links, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/score", "right", (uint64_t)x->right, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/score", "detect_after_drops", x->detect_after_drops, errbuf));
        QRI_TRY(qr_h5_attr_i64(f, "/score", "detect_after_ns", x->detect_after_ns, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/score", "silent_right", x->silent_right, errbuf));
        QRI_TRY(qr_h5_attr_u64(f, "/score", "fault_missed", x->fault_missed, errbuf));
        if (t->has_guided) {
            QRI_TRY(qr_h5_attr_u64(f, "/score", "guided_silent", x->guided_silent, errbuf));
            QRI_TRY(
                qr_h5_attr_u64(f, "/score", "guided_silent_right", x->guided_silent_right, errbuf));
            QRI_TRY(qr_h5_attr_u64(f, "/score", "guided_faulty_probed", x->guided_faulty_probed,
                                   errbuf));
            QRI_TRY(
                qr_h5_attr_u64(f, "/score", "guided_faulty_found", x->guided_faulty_found, errbuf));
            QRI_TRY(qr_h5_attr_str(f, "/score", "guided_links", x->guided_links, errbuf));
        }
        if (t->has_bounce) {
            QRI_TRY(qr_h5_attr_u64(f, "/score", "bounce_flagged", x->bounce_flagged, errbuf));
            QRI_TRY(qr_h5_attr_u64(f, "/score", "bounce_right", x->bounce_right, errbuf));
            QRI_TRY(qr_h5_attr_u64(f, "/score", "bounce_faulty_probed", x->bounce_faulty_probed,
                                   errbuf));
            QRI_TRY(
                qr_h5_attr_u64(f, "/score", "bounce_faulty_found", x->bounce_faulty_found, errbuf));
        }
    }
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}
