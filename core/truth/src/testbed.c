/* The testbed in a box: what it can honour of a scenario, and the ground truth of a run from the
 * switch's own captures (testbed.h). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/capture.h"
#include "qreplay/common.h"
#include "qreplay/fabric.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/stats.h"
#include "qreplay/testbed.h"
#include "qreplay/traceroute.h"
#include "qreplay/truth.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "truth_internal.h"

const char *qr_testbed_congestion(qr_tcp_variant v)
{
    return v == QR_TCP_NEWRENO ? "reno" : v == QR_TCP_CUBIC ? "cubic" : NULL;
}

/* The lines of what a testbed cannot honour, into buf[0..size). */
struct lines {
    char *buf;
    size_t size, len;
    int n;
};

static void add_line(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(struct lines *l, const char *fmt, ...)
{
    l->n++;
    if (!l->buf || l->len >= l->size - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = snprintf(l->buf + l->len, l->size - l->len, "%s", l->n > 1 ? "\n  " : "");
    if (w > 0)
        l->len += (size_t)w;
    if (l->len < l->size - 1) {
        w = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
        if (w > 0)
            l->len += (size_t)w;
    }
    va_end(ap);
    if (l->len >= l->size)
        l->len = l->size - 1;
}

int qr_testbed_check(const qr_config *c, char *errbuf)
{
    return qr_testbed_check_all(c, errbuf, QR_ERRBUF_SIZE);
}

int qr_testbed_check_all(const qr_config *c, char *buf, size_t size)
{
    if (!c || (buf && size < QR_ERRBUF_SIZE))
        return qri_err(buf, QR_EINVAL, "testbed check: NULL config or a short buffer");
    struct lines L = {buf, size, 0, 0};
    if (buf)
        buf[0] = 0;
    int tree = c->topology.kind == QR_TOPO_FATTREE;
    if (tree && (c->topology.k < 2 || c->topology.k > QR_FABRIC_MAX_K || c->topology.k % 2))
        add_line(&L,
                 "[topology] k = %d: the testbed builds fat trees of k = 2 or 4 on this machine "
                 "(k=4: 16 hosts and 20 switches in namespaces)",
                 c->topology.k);
    else if (!tree && (c->topology.hosts < 2 || c->topology.hosts > QR_TESTBED_MAX_HOSTS))
        add_line(&L, "[topology] hosts = %d: the testbed runs 2 to %d hosts on this machine",
                 c->topology.hosts, QR_TESTBED_MAX_HOSTS);
    if (c->links.delay_ns > QR_TESTBED_MAX_DELAY_NS)
        add_line(&L,
                 "[links] delay = %" PRId64 " ns: a testbed link has the latency of a veth pair "
                 "(about 1 us); at most %d ns",
                 c->links.delay_ns, QR_TESTBED_MAX_DELAY_NS);
    if (c->buffer.policy != QR_BUFFER_STATIC)
        add_line(&L, "[buffer] policy = dynamic: Linux has no shared-buffer switch; set policy = "
                     "static (a byte limit per port)");
    if (c->buffer.ecn_threshold_bytes)
        add_line(&L,
                 "[buffer] ecn_threshold: the testbed's FIFO does not mark ECN; leave it unset");
    if (!qr_testbed_congestion(c->tcp.variant))
        add_line(&L, "[tcp] variant: only newreno (Linux reno) and cubic run on the testbed");
    if (c->tcp.delack_timeout_ns != QR_TESTBED_DELACK_NS)
        add_line(&L,
                 "[tcp] delack_timeout = %" PRId64 " ns: Linux's delayed-ACK timeout cannot be "
                 "set; give its value, 40ms",
                 c->tcp.delack_timeout_ns);
    if (c->tcp.delack_count != 2)
        add_line(&L, "[tcp] delack_count = %d: Linux acknowledges every second segment; give 2",
                 c->tcp.delack_count);
    if (c->tcp.syn_timeout_ns != QR_TESTBED_SYN_TIMEOUT_NS)
        add_line(&L, "[tcp] syn_timeout = %" PRId64 " ns: Linux's SYN timeout is fixed at 1s",
                 c->tcp.syn_timeout_ns);
    if (c->tcp.min_rto_ns < 1000000 || c->tcp.min_rto_ns % 1000000)
        add_line(&L,
                 "[tcp] min_rto = %" PRId64 " ns: a route's rto_min is whole milliseconds, at "
                 "least 1ms",
                 c->tcp.min_rto_ns);
    if (c->host.proc_delay_ns || c->host.proc_jitter_ns)
        add_line(&L,
                 "[host] proc_delay, proc_jitter: the testbed's hosts take the time their kernels "
                 "take; leave them 0");
    if (c->clock.max_offset_ns)
        add_line(&L, "[clock] max_offset = %" PRId64 " ns: the namespaces share one clock; give 0",
                 c->clock.max_offset_ns);
    if (!tree && c->traceroute.per_connection)
        add_line(&L,
                 "[traceroute] per_connection: the star has one switch to trace; 007's agents run "
                 "on a fat tree ([topology] kind = fattree)");
    if (!tree && c->everflow.guided)
        add_line(&L, "[everflow] guided: the star has one switch; guided probes run on a fat tree "
                     "([topology] kind = fattree)");
    if (!tree && c->pingmesh.interval_ns)
        add_line(&L, "[pingmesh] interval: Pingmesh's agents run on a fat tree ([topology] kind = "
                     "fattree)");
    if (tree && c->traffic.pattern == QR_PATTERN_APPS)
        add_line(&L,
                 "[traffic] pattern = apps: the fat tree runs the scenario's flows; applications "
                 "run on the star");
    if (c->faults.drop[0])
        add_line(&L,
                 "[faults] drop: a Linux switch drops by its queue, not by a rule on its queue's "
                 "state; plant link faults (gray, blackhole, rate) or leave it empty");
    if (!tree && (c->faults.link[0][0] || c->faults.link[1][0] || c->faults.link[2][0] ||
                  c->faults.link[3][0]))
        add_line(&L, "[faults] gray, blackhole, delay, rate: the star plants no link faults; plant "
                     "them on a fat tree ([topology] kind = fattree, k = 4)");
    if (tree && c->traceroute.icmp_interval_ns % 1000000)
        add_line(&L, "[traceroute] icmp_interval: the switches' kernels count it in whole "
                     "milliseconds (net.ipv4.icmp_ratelimit); give a multiple of 1ms");
    if (tree && c->traceroute.icmp_rate != (double)(int64_t)c->traceroute.icmp_rate)
        add_line(&L, "[traceroute] icmp_rate: the switches' kernels take a whole number per second "
                     "(net.ipv4.icmp_msgs_per_sec)");
    if (!tree && c->faults.loop[0])
        add_line(&L,
                 "[faults] loop: the star has one switch and no loop to plant; plant loops on a "
                 "fat tree ([topology] kind = fattree)");
    if (tree && c->faults.link[QR_LINK_DELAY][0])
        add_line(&L,
                 "[faults] delay: the testbed cannot delay a link (this kernel has no netem, and "
                 "nothing else here adds delay); plant delay faults in a simulation");
    if (L.n) {
        char head[96];
        snprintf(head, sizeof head, "the testbed cannot honour %d key%s of this scenario:\n  ", L.n,
                 L.n > 1 ? "s" : "");
        if (buf) {
            size_t h = strlen(head), len = L.len;
            if (len + h >= size)
                len = size - 1 - h;
            memmove(buf + h, buf, len + 1);
            memcpy(buf, head, h);
            buf[size - 1] = 0;
            if (len < L.len && size > 4) /* cut: say so */
                memcpy(buf + size - 4, "...", 4);
        }
        return QR_EVALUE;
    }
    return QR_OK;
}

/* ---- the ground truth ---- */

/* A packet at the switch. */
struct arr {
    int64_t t_in, t_out; /* INT64_MIN: not departed */
    uint64_t id;
    uint32_t dir, port, bytes;
    uint32_t seq, ack;
    uint16_t ip_id;
    uint8_t flags;
};

struct ev {
    int64_t t;
    uint32_t idx;
    uint8_t departure;
};

static int cmp_ev(const void *x, const void *y)
{
    const struct ev *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->departure != b->departure)
        return a->departure ? -1 : 1; /* the last bit leaves before the next packet joins */
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct tb {
    char *errbuf;
    const qr_recording *rec;
    const qr_flow_table *ft;
    qri_tb_conns conns;
    size_t n_dirs;
    /* the recording's packets per direction, in order */
    const qr_rec_packet **rp;
    uint8_t *rp_used;
    size_t *rp_start, *rp_next;
    /* the arrivals, and per direction their indices in order */
    struct arr *a;
    size_t n_a, cap_a;
    uint32_t *da;
    size_t *da_start, *da_n, *da_next;
    uint64_t rate; /* the links' */
    int64_t *hops;
};

static void tb_free(struct tb *t)
{
    qri_tb_conns_free(&t->conns);
    free(t->rp);
    free(t->rp_used);
    free(t->rp_start);
    free(t->rp_next);
    free(t->a);
    free(t->da);
    free(t->da_start);
    free(t->da_n);
    free(t->da_next);
    free(t->hops);
}

/* The recording's packets, grouped by direction in their order. */
static int index_recording(struct tb *t)
{
    uint32_t nh = qr_recording_hosts(t->rec);
    size_t nd = t->n_dirs, total = 0;
    t->rp_start = calloc(nd + 1, sizeof *t->rp_start);
    t->rp_next = calloc(nd + 1, sizeof *t->rp_next);
    if (!t->rp_start || !t->rp_next)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < nh; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(t->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (p[i].dir < nd)
                t->rp_start[p[i].dir + 1]++;
        total += n;
    }
    for (size_t d = 0; d < nd; d++)
        t->rp_start[d + 1] += t->rp_start[d];
    t->rp = calloc(total ? total : 1, sizeof *t->rp);
    t->rp_used = calloc(total ? total : 1, 1);
    if (!t->rp || !t->rp_used)
        return QR_ENOMEM;
    memcpy(t->rp_next, t->rp_start, nd * sizeof *t->rp_next);
    for (uint32_t h = 0; h < nh; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(t->rec, h, &n);
        for (size_t i = 0; i < n; i++)
            if (p[i].dir < nd)
                t->rp[t->rp_next[p[i].dir]++] = &p[i];
    }
    /* in their numbers' order within a direction */
    for (size_t d = 0; d < nd; d++)
        for (size_t i = t->rp_start[d]; i < t->rp_start[d + 1]; i++)
            if (t->rp[i]->seq != i - t->rp_start[d])
                return qri_err(t->errbuf, QR_EFORMAT,
                               "the recording's direction %zu is not numbered from 0 in order", d);
    memcpy(t->rp_next, t->rp_start, nd * sizeof *t->rp_next);
    return QR_OK;
}

static int push_arrival(struct tb *t, const struct arr *x)
{
    if (t->n_a == t->cap_a) {
        size_t c = t->cap_a ? 2 * t->cap_a : 4096;
        struct arr *g = realloc(t->a, c * sizeof *g);
        int64_t *hg = realloc(t->hops, c * sizeof *hg);
        if (hg)
            t->hops = hg;
        if (!g || !hg) {
            if (g)
                t->a = g;
            return QR_ENOMEM;
        }
        t->a = g;
        t->cap_a = c;
    }
    t->a[t->n_a++] = *x;
    return QR_OK;
}

static const char *dir_text(const struct tb *t, uint32_t d, char *buf, size_t size)
{
    snprintf(buf, size, "flow %u %s (host %u -> %u)", qr_dir_flow(d),
             qr_dir_is_ack(d) ? "ACKs" : "data", qr_flow_table_dir_src(t->ft, d),
             qr_flow_table_dir_dst(t->ft, d));
    return buf;
}

/* The next TCP packet of a switch capture and its direction: QR_OK, QR_END, a reader's error, or
 * QR_EVALUE for a packet of no imported connection. */
static int tap_next(struct tb *t, qr_capture *c, const char *path, qr_capture_packet *k,
                    uint32_t *d)
{
    int rc = qr_capture_next(c, k, t->errbuf);
    if (rc)
        return rc;
    *d = qri_tb_dir_of(&t->conns, k);
    if (*d != UINT32_MAX)
        return QR_OK;
    char a[QR_ADDR_TEXT_MAX], b[QR_ADDR_TEXT_MAX];
    return qri_err(t->errbuf, QR_EVALUE,
                   "%s: frame %" PRIu64 ": %s:%u -> %s:%u is of no connection the hosts' "
                   "captures hold",
                   path, k->frame, qr_addr_text(k->src, a, sizeof a), k->src_port,
                   qr_addr_text(k->dst, b, sizeof b), k->dst_port);
}

/* Close a switch capture, adding the frames it left out (not TCP) to *skipped. */
static void tap_close(qr_capture *c, uint64_t *skipped)
{
    if (c) {
        qr_capture_stats st;
        qr_capture_stats_get(c, &st);
        *skipped += st.frames - st.kept;
    }
    qr_capture_close(c);
}

/* Every TCP packet of a tap's capture at path, in capture order, to on(t, packet, its
 * direction, path, ctx), counted in *count; what the reader passed over in *skipped. Returns 0
 * or the first error (the reader's, or on's). */
typedef int (*tap_fn)(struct tb *t, const qr_capture_packet *k, uint32_t d, const char *path,
                      void *ctx);
static int read_tap(struct tb *t, const char *path, uint64_t *count, uint64_t *skipped, tap_fn on,
                    void *ctx)
{
    qr_capture *c = NULL;
    qr_capture_packet k;
    uint32_t d;
    int rc = qr_capture_open(&c, path, t->errbuf);
    while (!rc && (rc = tap_next(t, c, path, &k, &d)) == QR_OK) {
        ++*count;
        rc = on(t, &k, d, path, ctx);
    }
    tap_close(c, skipped);
    return rc == QR_END ? QR_OK : rc;
}

/* Port p's ingress capture: every packet host p sent, in its recorded order. */
struct ingress {
    uint32_t p;
    const qr_topology *topo;
    qr_testbed_truth_report *rep;
};

static int on_ingress(struct tb *t, const qr_capture_packet *kp, uint32_t d, const char *path,
                      void *ctx)
{
    const struct ingress *in = ctx;
    const qr_capture_packet k = *kp;
    uint32_t p = in->p;
    char d1[96];
    uint32_t src = qr_flow_table_dir_src(t->ft, d), dst = qr_flow_table_dir_dst(t->ft, d);
    if (src != p)
        return qri_err(t->errbuf, QR_EVALUE,
                       "%s: frame %" PRIu64 ": a packet of %s arrived on port %u, not %u", path,
                       k.frame, dir_text(t, d, d1, sizeof d1), p, src);
    /* the host's next packet of the direction, or one of the few after it: two packets
     * sent from different CPUs can cross on their way through the veth backlogs */
    size_t j = t->rp_next[d], end = t->rp_start[d + 1];
    size_t lim = end - j > QR_TESTBED_REORDER ? j + QR_TESTBED_REORDER : end;
    while (j < lim && (t->rp_used[j] || t->rp[j]->pk.seq != k.seq || t->rp[j]->pk.ack != k.ack ||
                       t->rp[j]->pk.tcp_flags != k.tcp_flags || t->rp[j]->pk.ip_len != k.ip_len))
        j++;
    if (j == lim) {
        if (t->rp_next[d] == end)
            return qri_err(t->errbuf, QR_EVALUE,
                           "%s: frame %" PRIu64 ": %s: the switch saw more packets than host "
                           "%u's capture holds (%zu)",
                           path, k.frame, dir_text(t, d, d1, sizeof d1), p, end - t->rp_start[d]);
        const qr_rec_packet *r = t->rp[t->rp_next[d]];
        return qri_err(t->errbuf, QR_EVALUE,
                       "%s: frame %" PRIu64 ": %s: the switch received a packet (seq %u, "
                       "ack %u, %u bytes) that is none of the next %d the host's capture "
                       "holds (from its packet %u: seq %u, ack %u, %u bytes): a packet was "
                       "lost between the host and the switch, or the host's capture is "
                       "incomplete",
                       path, k.frame, dir_text(t, d, d1, sizeof d1), k.seq, k.ack, k.ip_len,
                       QR_TESTBED_REORDER, r->seq, r->pk.seq, r->pk.ack, r->pk.ip_len);
    }
    if (j != t->rp_next[d])
        in->rep->reordered++;
    const qr_rec_packet *r = t->rp[j];
    t->rp_used[j] = 1;
    while (t->rp_next[d] < end && t->rp_used[t->rp_next[d]])
        t->rp_next[d]++;
    uint32_t sw, port;
    qr_topology_host_attach(in->topo, dst, &sw, &port);
    struct arr x = {.t_in = k.time_ns - t->conns.base + qri_wire_ns(k.ip_len, t->rate),
                    .t_out = INT64_MIN,
                    .id = qr_packet_id(d, r->seq),
                    .dir = d,
                    .port = port,
                    .bytes = k.ip_len,
                    .seq = k.seq,
                    .ack = k.ack,
                    .ip_id = k.ip_id,
                    .flags = k.tcp_flags};
    int rc = push_arrival(t, &x);
    if (rc == QR_OK)
        t->hops[t->n_a - 1] = k.time_ns - t->conns.base - r->pk.time_ns;
    return rc;
}

static int read_ingress(struct tb *t, uint32_t p, const char *path, const qr_topology *topo,
                        qr_testbed_port_report *pr, qr_testbed_truth_report *rep, uint64_t *skipped)
{
    struct ingress in = {p, topo, rep};
    return read_tap(t, path, &pr->ingress, skipped, on_ingress, &in);
}

/* The arrivals of each direction, in order. */
static int index_arrivals(struct tb *t)
{
    size_t nd = t->n_dirs;
    t->da_start = calloc(nd + 1, sizeof *t->da_start);
    t->da_n = calloc(nd + 1, sizeof *t->da_n);
    t->da_next = calloc(nd + 1, sizeof *t->da_next);
    t->da = calloc(t->n_a ? t->n_a : 1, sizeof *t->da);
    if (!t->da_start || !t->da_n || !t->da_next || !t->da)
        return QR_ENOMEM;
    for (size_t i = 0; i < t->n_a; i++)
        t->da_start[t->a[i].dir + 1]++;
    for (size_t d = 0; d < nd; d++)
        t->da_start[d + 1] += t->da_start[d];
    for (size_t i = 0; i < t->n_a; i++) {
        uint32_t d = t->a[i].dir;
        t->da[t->da_start[d] + t->da_n[d]++] = (uint32_t)i;
    }
    memcpy(t->da_next, t->da_start, nd * sizeof *t->da_next);
    return QR_OK;
}

/* Port q's egress capture: each packet departs; the arrivals it passes over were dropped. */
struct egress {
    uint32_t q, q_port;
};

static int on_egress(struct tb *t, const qr_capture_packet *kp, uint32_t d, const char *path,
                     void *ctx)
{
    const struct egress *eg = ctx;
    const qr_capture_packet k = *kp;
    char d1[96];
    /* the first arrival of the direction not yet departed with the same headers (the IP
     * ID tells retransmissions apart); those passed over were dropped, unless they leave
     * within the reordering window */
    size_t end = t->da_start[d + 1], i = t->da_next[d];
    while (i < end) {
        const struct arr *x = &t->a[t->da[i]];
        if (x->t_out == INT64_MIN && x->seq == k.seq && x->ack == k.ack && x->ip_id == k.ip_id &&
            x->flags == k.tcp_flags && x->bytes == k.ip_len)
            break;
        i++;
    }
    if (i == end)
        return qri_err(t->errbuf, QR_EVALUE,
                       "%s: frame %" PRIu64 ": %s: a packet (seq %u, IP ID %u) left port %u "
                       "that never arrived at the switch",
                       path, k.frame, dir_text(t, d, d1, sizeof d1), k.seq, k.ip_id, eg->q);
    struct arr *x = &t->a[t->da[i]];
    if (x->port != eg->q_port)
        return qri_err(t->errbuf, QR_EVALUE,
                       "%s: frame %" PRIu64 ": %s left on port %u, its route is another port", path,
                       k.frame, dir_text(t, d, d1, sizeof d1), eg->q);
    int64_t out = k.time_ns - t->conns.base + qri_wire_ns(k.ip_len, t->rate);
    if (out < x->t_in)
        return qri_err(t->errbuf, QR_EVALUE,
                       "%s: frame %" PRIu64 ": %s: packet %u left %" PRId64
                       " ns before it arrived (the captures' clocks disagree)",
                       path, k.frame, dir_text(t, d, d1, sizeof d1), qr_packet_id_seq(x->id),
                       x->t_in - out);
    x->t_out = out;
    size_t n = t->da_next[d];
    while (n < end && t->a[t->da[n]].t_out != INT64_MIN)
        n++;
    if (i > n + QR_TESTBED_REORDER)
        n = i - QR_TESTBED_REORDER; /* older ones are dropped for good */
    t->da_next[d] = n;
    return QR_OK;
}

static int read_egress(struct tb *t, uint32_t q, uint32_t q_port, const char *path,
                       qr_testbed_port_report *pr, uint64_t *skipped)
{
    struct egress eg = {q, q_port};
    return read_tap(t, path, &pr->egress, skipped, on_egress, &eg);
}

/* The sweep over arrivals and departures: the arrival log and the drop rows. */
/* The switch's queues as the sweep replays them: per port the flows held, their bytes and the
 * last departure; the whole buffer's bytes; the drops so far. */
struct sweep {
    struct tb *t;
    qr_testbed_truth_report *rep;
    qr_queue_flows **qf;
    uint64_t *qbytes;
    int64_t *last_dep;
    uint64_t total;
    qr_row_drop *drops;
    size_t nd, capd;
};

/* Packet x left its port at time t. */
static int sweep_departure(struct sweep *st, const struct arr *x, int64_t t)
{
    uint32_t p = x->port;
    /* the port's service while busy: this packet waited for the previous one */
    qr_testbed_port_report *pr = &st->rep->ports[p];
    if (st->last_dep[p] != INT64_MIN && x->t_in <= st->last_dep[p]) {
        pr->busy_bytes += x->bytes;
        pr->busy_ns += t - st->last_dep[p];
    }
    st->last_dep[p] = t;
    int rc = qr_queue_flows_remove(st->qf[p], x->dir, x->bytes);
    if (rc)
        rc = qri_err(st->t->errbuf, QR_ESTATE, "queue of port %u: a departure it did not hold", p);
    st->qbytes[p] -= x->bytes;
    st->total -= x->bytes;
    return rc;
}

/* Packet x reached its port of switch sw: its arrival record, and admitted or dropped. */
static int sweep_arrival(struct sweep *st, const struct arr *x, uint32_t sw, uint64_t limit,
                         qr_arrival_writer *w)
{
    uint32_t p = x->port;
    const qr_flow_bytes *fl;
    size_t nf = qr_queue_flows_snapshot(st->qf[p], &fl);
    int dropped = x->t_out == INT64_MIN;
    qr_arrival a = {.packet = x->id,
                    .time_ns = x->t_in,
                    .sw = sw,
                    .port = p,
                    .bytes = x->bytes,
                    .decision = dropped ? QR_DROP_THRESHOLD : QR_ADMIT,
                    .tagged = 0,
                    .n_flows = (uint16_t)(nf > 65535 ? 65535 : nf),
                    .queue_bytes = st->qbytes[p],
                    .total_bytes = st->total,
                    .threshold = (int64_t)limit,
                    .flows = fl};
    int rc = qr_arrival_write(w, &a, st->t->errbuf);
    qr_testbed_port_report *pr = &st->rep->ports[p];
    pr->arrivals++;
    if (st->qbytes[p] > pr->max_queue_bytes)
        pr->max_queue_bytes = st->qbytes[p];
    int fits = st->qbytes[p] + x->bytes <= limit;
    if (dropped) {
        pr->drops++;
        pr->drops_with_room += fits;
        if (qri_grow((void **)&st->drops, &st->capd, st->nd, sizeof *st->drops, 256))
            return QR_ENOMEM;
        qr_drop_row_of(&a, &st->drops[st->nd++]);
        return rc;
    }
    pr->admits_over_limit += !fits;
    if (!rc)
        rc = qr_queue_flows_add(st->qf[p], x->dir, x->bytes);
    st->qbytes[p] += x->bytes;
    st->total += x->bytes;
    return rc;
}

/* The median and largest sojourn of the packets that left. */
static int sweep_sojourns(const struct tb *t, qr_testbed_truth_report *rep)
{
    int64_t *soj = malloc((t->n_a + 1) * sizeof *soj);
    size_t ns = 0;
    if (!soj)
        return QR_ENOMEM;
    for (size_t i = 0; i < t->n_a; i++)
        if (t->a[i].t_out != INT64_MIN)
            soj[ns++] = t->a[i].t_out - t->a[i].t_in;
    if (ns) {
        qsort(soj, ns, sizeof *soj, qri_cmp_i64);
        rep->sojourn_p50_ns = qr_percentile_i64(soj, ns, 0.5);
        rep->sojourn_max_ns = soj[ns - 1];
    }
    free(soj);
    return QR_OK;
}

static int sweep(struct tb *t, const char *log_path, uint32_t sw, uint32_t n_ports, uint64_t limit,
                 qr_testbed_truth_report *rep, qr_row_drop **drops_out, size_t *n_drops,
                 int64_t *end_ns)
{
    size_t ne = 0, np = n_ports ? n_ports : 1;
    struct ev *ev = malloc((2 * t->n_a + 1) * sizeof *ev);
    struct sweep st = {.t = t,
                       .rep = rep,
                       .qf = calloc(np, sizeof *st.qf),
                       .qbytes = calloc(np, sizeof *st.qbytes),
                       .last_dep = malloc(np * sizeof *st.last_dep)};
    qr_arrival_writer *w = NULL;
    int rc = ev && st.qf && st.qbytes && st.last_dep ? QR_OK : QR_ENOMEM;
    for (uint32_t p = 0; !rc && p < n_ports; p++)
        st.last_dep[p] = INT64_MIN;
    for (uint32_t p = 0; !rc && p < n_ports; p++)
        rc = qr_queue_flows_create(&st.qf[p]);
    for (size_t i = 0; !rc && i < t->n_a; i++) {
        ev[ne++] = (struct ev){t->a[i].t_in, (uint32_t)i, 0};
        if (t->a[i].t_out != INT64_MIN)
            ev[ne++] = (struct ev){t->a[i].t_out, (uint32_t)i, 1};
    }
    if (!rc) {
        qsort(ev, ne, sizeof *ev, cmp_ev);
        rc = qr_arrival_writer_open(&w, log_path, t->errbuf);
        if (!rc)
            rc = qr_arrival_writer_set_recording(w, qr_recording_id(t->rec));
        if (!rc)
            rc = qr_arrival_writer_set_source(w, QR_ARRIVALS_TRUTH);
    }
    for (size_t e = 0; !rc && e < ne; e++) {
        const struct arr *x = &t->a[ev[e].idx];
        if (ev[e].departure) {
            rc = sweep_departure(&st, x, ev[e].t);
            continue;
        }
        rc = sweep_arrival(&st, x, sw, limit, w);
        *end_ns = x->t_in;
    }
    if (ne && ev[ne - 1].t > *end_ns)
        *end_ns = ev[ne - 1].t;
    int crc = qr_arrival_writer_close(w, t->errbuf);
    if (!rc)
        rc = crc;
    if (!rc)
        rc = sweep_sojourns(t, rep);
    for (uint32_t p = 0; st.qf && p < n_ports; p++)
        qr_queue_flows_destroy(st.qf[p]);
    free(st.qf);
    free(st.qbytes);
    free(st.last_dep);
    free(ev);
    if (rc) {
        free(st.drops);
        return rc;
    }
    *drops_out = st.drops;
    *n_drops = st.nd;
    return QR_OK;
}

void qr_testbed_truth_report_free(qr_testbed_truth_report *r)
{
    if (r) {
        free(r->ports);
        r->ports = NULL;
    }
}

/* Every packet a host sent reached the switch (its ingress capture). */
static int all_reached(const struct tb *t, const qr_testbed_port *ports, char *errbuf)
{
    for (size_t d = 0; d < t->n_dirs; d++) {
        if (t->rp_next[d] == t->rp_start[d + 1])
            continue;
        char d1[96];
        const qr_rec_packet *r = t->rp[t->rp_next[d]];
        return qri_err(errbuf, QR_EVALUE,
                       "%s: %s: host %u sent %zu packets the switch never saw, the first at "
                       "%" PRId64 " ns (seq %u)",
                       ports[qr_flow_table_dir_src(t->ft, (uint32_t)d)].ingress,
                       dir_text(t, (uint32_t)d, d1, sizeof d1),
                       qr_flow_table_dir_src(t->ft, (uint32_t)d),
                       t->rp_start[d + 1] - t->rp_next[d], r->pk.time_ns, r->pk.seq);
    }
    return QR_OK;
}

/* Port p's report made about the queue towards host p (the sweep counted by switch port), its
 * rate and totals, and its drops held against its qdisc's counter. */
static int port_totals(const qr_topology *topo, const qr_testbed_port *ports, uint32_t n_ports,
                       qr_testbed_truth_report *rep, char *errbuf)
{
    qr_testbed_port_report *byport = calloc(n_ports, sizeof *byport);
    if (!byport)
        return QR_ENOMEM;
    for (uint32_t q = 0; q < n_ports; q++) {
        uint32_t s2, port;
        qr_topology_host_attach(topo, q, &s2, &port);
        byport[q] = rep->ports[port];
        byport[q].ingress = rep->ports[q].ingress;
        byport[q].egress = rep->ports[q].egress;
    }
    memcpy(rep->ports, byport, n_ports * sizeof *byport);
    free(byport);
    for (uint32_t q = 0; q < n_ports; q++) {
        qr_testbed_port_report *pr = &rep->ports[q];
        pr->qdisc_drops = ports[q].qdisc_drops;
        pr->busy_rate_bps =
            pr->busy_ns > 0 ? (double)pr->busy_bytes * 8e9 / (double)pr->busy_ns : 0.0;
        if (pr->max_queue_bytes > rep->ports[rep->bottleneck].max_queue_bytes)
            rep->bottleneck = q;
        rep->arrivals += pr->arrivals;
        rep->drops += pr->drops;
        if (ports[q].qdisc_drops != UINT64_MAX && ports[q].qdisc_drops != pr->drops)
            return qri_err(errbuf, QR_EVALUE,
                           "port %u: the switch captures show %" PRIu64
                           " drops, its qdisc counted %" PRIu64
                           ": the captures do not hold the whole run (%s, %s)",
                           q, pr->drops, ports[q].qdisc_drops, ports[q].ingress, ports[q].egress);
    }
    return QR_OK;
}

/* The directions' counts: sent, delivered and dropped, in packets and bytes. */
static int direction_rows(const struct tb *t, qr_row_direction **out)
{
    qr_row_direction *dirs = calloc(t->n_dirs ? t->n_dirs : 1, sizeof *dirs);
    if (!dirs)
        return QR_ENOMEM;
    for (size_t d = 0; d < t->n_dirs; d++) {
        dirs[d] = (qr_row_direction){.dir = (uint32_t)d,
                                     .flow = qr_dir_flow((uint32_t)d),
                                     .src = qr_flow_table_dir_src(t->ft, (uint32_t)d),
                                     .dst = qr_flow_table_dir_dst(t->ft, (uint32_t)d)};
        for (size_t i = t->da_start[d]; i < t->da_start[d + 1]; i++) {
            const struct arr *x = &t->a[t->da[i]];
            dirs[d].sent++;
            dirs[d].sent_bytes += x->bytes;
            if (x->t_out == INT64_MIN) {
                dirs[d].dropped++;
                dirs[d].dropped_bytes += x->bytes;
            } else {
                dirs[d].delivered++;
                dirs[d].delivered_bytes += x->bytes;
            }
        }
    }
    *out = dirs;
    return QR_OK;
}

int qr_testbed_truth(const char *rec_dir, const qr_testbed_port *ports, uint32_t n_ports,
                     uint64_t port_limit, qr_testbed_truth_report *rep_out, char *errbuf)
{
    if (!rec_dir || !ports || !n_ports)
        return qri_err(errbuf, QR_EINVAL, "testbed truth: no recording or no ports");
    struct tb t;
    memset(&t, 0, sizeof t);
    t.errbuf = errbuf;
    qr_recording *rec = NULL;
    qr_topology *topo = NULL;
    qr_testbed_truth_report rep;
    memset(&rep, 0, sizeof rep);
    qr_row_drop *drops = NULL;
    qr_row_direction *dirs = NULL;
    size_t n_drops = 0;
    char tmp[4200], path[4300];
    int staged = 0;
    int rc = qr_recording_open(&rec, rec_dir, NULL, errbuf);
    if (!rc) {
        t.rec = rec;
        t.ft = qr_recording_flows(rec);
        t.n_dirs = qr_flow_table_directions(t.ft);
        t.rate = qr_scenario_config(qr_recording_scenario(rec))->links.rate_bps;
        if (qr_recording_hosts(rec) != n_ports)
            rc = qri_err(errbuf, QR_EVALUE, "%s: %u hosts, the testbed's switch has %u ports",
                         rec_dir, qr_recording_hosts(rec), n_ports);
    }
    if (!rc)
        rc = qr_topology_star(&topo, (int)n_ports);
    if (!rc && !(rep.ports = calloc(n_ports, sizeof *rep.ports)))
        rc = QR_ENOMEM;
    rep.n_ports = n_ports;
    if (!rc)
        rc = qri_tb_conns_load(rec_dir, t.ft, &t.conns, errbuf);
    if (!rc)
        rc = index_recording(&t);
    for (uint32_t p = 0; !rc && p < n_ports; p++)
        rc = read_ingress(&t, p, ports[p].ingress, topo, &rep.ports[p], &rep, &rep.skipped_frames);
    if (!rc)
        rc = all_reached(&t, ports, errbuf);
    if (!rc)
        rc = index_arrivals(&t);
    uint32_t sw = 0;
    for (uint32_t q = 0; !rc && q < n_ports; q++) {
        uint32_t port;
        qr_topology_host_attach(topo, q, &sw, &port);
        rc = read_egress(&t, q, port, ports[q].egress, &rep.ports[q], &rep.skipped_frames);
    }
    if (!rc && t.n_a) {
        qsort(t.hops, t.n_a, sizeof *t.hops, qri_cmp_i64);
        rep.hop_min_ns = t.hops[0];
        rep.hop_p50_ns = qr_percentile_i64(t.hops, t.n_a, 0.5);
        rep.hop_p99_ns = qr_percentile_i64(t.hops, t.n_a, 0.99);
        rep.hop_max_ns = t.hops[t.n_a - 1];
    }
    if (!rc)
        rc = qri_truth_stage(rec_dir, tmp, sizeof tmp, errbuf);
    staged = !rc;
    int64_t end_ns = 0;
    if (!rc) {
        snprintf(path, sizeof path, "%s/arrivals.qra", tmp);
        rc = sweep(&t, path, sw, n_ports, port_limit, &rep, &drops, &n_drops, &end_ns);
    }
    if (!rc)
        rc = port_totals(topo, ports, n_ports, &rep, errbuf);
    if (!rc)
        rc = direction_rows(&t, &dirs);
    if (!rc) {
        qr_truth_info info = {.recording_id = qr_recording_id(rec),
                              .end = QR_END_COMPLETED,
                              .sim_end_ns = end_ns,
                              .events = t.n_a};
        snprintf(path, sizeof path, "%s/truth.h5", tmp);
        rc = qr_truth_write(path, qr_recording_scenario(rec), &info, drops, n_drops, dirs, t.n_dirs,
                            errbuf);
    }
    if (!rc)
        rc = qri_truth_commit(rec_dir, tmp, errbuf);
    if (rc && staged)
        qri_truth_discard(tmp);
    free(drops);
    free(dirs);
    tb_free(&t);
    qr_topology_destroy(topo);
    qr_recording_close(rec);
    if (!rc && rep_out)
        *rep_out = rep;
    else
        qr_testbed_truth_report_free(&rep);
    return rc;
}

uint64_t qr_testbed_port_limit(const qr_config *c)
{
    uint32_t ports = c->topology.kind == QR_TOPO_FATTREE ? (uint32_t)c->topology.k
                     : c->topology.hosts > 0             ? (uint32_t)c->topology.hosts
                                                         : 1;
    if (!ports)
        ports = 1;
    return c->buffer.port_size_bytes ? c->buffer.port_size_bytes : c->buffer.size_bytes / ports;
}

/* Write a CSV through a temporary name: write(f, ctx) fills it; renamed when complete. */
struct ports_csv {
    const qr_testbed_truth_report *r;
    uint64_t limit;
};

static void write_ports(FILE *f, const void *ctx)
{
    const struct ports_csv *x = ctx;
    fprintf(f, "port,host,ingress_packets,egress_packets,arrivals,drops,qdisc_drops,"
               "max_queue_bytes,limit_bytes,drops_with_room,admits_over_limit,busy_rate_bps\n");
    for (uint32_t h = 0; h < x->r->n_ports; h++) {
        const qr_testbed_port_report *p = &x->r->ports[h];
        fprintf(f,
                "%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.0f\n",
                h, h, p->ingress, p->egress, p->arrivals, p->drops, p->qdisc_drops,
                p->max_queue_bytes, x->limit, p->drops_with_room, p->admits_over_limit,
                p->busy_rate_bps);
    }
}

int qr_testbed_ports_write(const char *path, const qr_testbed_truth_report *r, uint64_t port_limit,
                           char *errbuf)
{
    struct ports_csv x = {r, port_limit};
    return qr_write_text_file(path, write_ports, &x, errbuf);
}

int64_t qr_testbed_packet_ns(uint64_t rate_bps)
{
    return (int64_t)((double)QR_MTU_BYTES * 8e9 / (double)rate_bps);
}

int qr_testbed_too_slow(int64_t hop_p99_ns, uint64_t rate_bps)
{
    return hop_p99_ns > qr_testbed_packet_ns(rate_bps);
}

int qr_testbed_replay_rate(const qr_testbed_truth_report *r, int measured, char *buf, size_t size)
{
    double served = r->n_ports ? r->ports[r->bottleneck].busy_rate_bps : 0;
    if (!measured || !(served > 0))
        return 0;
    snprintf(buf, size, "links.rate=%.0fbps", served);
    return 1;
}

struct flows_csv {
    const qr_flow *schedule;
    const uint16_t *src_port;
    const qr_testbed_flow *flows;
    size_t n;
};

static int completed(const qr_testbed_flow *r, const qr_flow *fl)
{
    return r->sent && r->received && r->bytes_received == fl->bytes;
}

static void write_flows(FILE *f, const void *ctx)
{
    const struct flows_csv *x = ctx;
    fprintf(f, "flow,src,dst,src_port,bytes,start_ns,completed,fct_ns,bytes_received,"
               "retransmissions,error\n");
    for (size_t i = 0; i < x->n; i++) {
        const qr_testbed_flow *r = &x->flows[i];
        const qr_flow *fl = &x->schedule[i];
        int done = completed(r, fl);
        int64_t t = done ? r->last_ns - r->start_ns : -1;
        fprintf(f, "%zu,%u,%u,%u,%" PRIu64 ",%" PRId64 ",%d,%" PRId64 ",%" PRIu64 ",%u,%s\n", i,
                fl->src, fl->dst, x->src_port[i], fl->bytes, fl->start_ns, done, t,
                r->bytes_received, r->retransmissions, r->failed && r->why ? r->why : "");
    }
}

int qr_testbed_flows_write(const char *path, const qr_flow *schedule, const uint16_t *src_port,
                           const qr_testbed_flow *flows, size_t n, qr_testbed_flow_summary *out,
                           char *errbuf)
{
    qr_testbed_flow_summary sum = {0, 0, 0, -1, -1};
    int64_t *fct = malloc((n ? n : 1) * sizeof *fct);
    if (!fct)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        if (completed(&flows[i], &schedule[i]))
            fct[sum.completed++] = flows[i].last_ns - flows[i].start_ns;
        sum.failed += flows[i].failed != 0;
        sum.retransmissions += flows[i].retransmissions;
    }
    if (sum.completed) {
        qsort(fct, sum.completed, sizeof *fct, qri_cmp_i64);
        sum.fct_p50_ns = qr_percentile_i64(fct, sum.completed, 0.5);
        sum.fct_p99_ns = qr_percentile_i64(fct, sum.completed, 0.99);
    }
    free(fct);
    struct flows_csv x = {schedule, src_port, flows, n};
    int rc = qr_write_text_file(path, write_flows, &x, errbuf);
    if (!rc)
        *out = sum;
    return rc;
}

/* ---- 007's traceroutes on the testbed ---- */

struct traces_ctx {
    const qr_topology *t;
    const qr_flow *flows;
    const uint16_t *sport;
    const qr_row_traceroute *probes;
    size_t n;
    char (*links)[48]; /* merged paths: per direction QR_TRACE_MAX_TTL + 1 cables */
    uint8_t *hops;     /* per direction: 0 untraced */
    size_t n_dirs;
};

static void ip4(uint32_t a, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u.%u", a >> 24, a >> 16 & 255u, a >> 8 & 255u, a & 255u);
}

static void write_traces(FILE *f, const void *vctx)
{
    const struct traces_ctx *c = vctx;
    fprintf(f, "trace,host,flow,src,dst,sport,dport,ttl,ip_id,sent_ns,replier,rtt_ns\n");
    for (size_t i = 0; i < c->n; i++) {
        const qr_row_traceroute *x = &c->probes[i];
        uint32_t flow = qr_dir_flow(x->dir);
        char a[20] = "";
        if (x->replier)
            ip4(x->replier, a, sizeof a);
        fprintf(f, "%u,%u,%u,%u,%u,%u,%u,%u,%u,%" PRId64 ",%s,%" PRId64 "\n", x->trace, x->host,
                flow, c->flows[flow].src, c->flows[flow].dst, c->sport[flow], QR_SINK_PORT, x->ttl,
                x->ip_id, x->sent_ns, a, x->rtt_ns);
    }
}

static void write_path_file(FILE *f, const void *vctx)
{
    const struct traces_ctx *c = vctx;
    fprintf(f, "# 007's traceroutes on the testbed: SRC SPORT DST DPORT and the cables found\n");
    for (size_t d = 0; d < c->n_dirs; d++) {
        if (!c->hops[d])
            continue;
        uint32_t flow = qr_dir_flow((uint32_t)d);
        char sa[20], da[20];
        ip4(qr_topology_host_addr(c->t, c->flows[flow].src), sa, sizeof sa);
        ip4(qr_topology_host_addr(c->t, c->flows[flow].dst), da, sizeof da);
        fprintf(f, "%s %u %s %u", sa, c->sport[flow], da, QR_SINK_PORT);
        for (uint32_t h = 0; h < c->hops[d]; h++) {
            const char *l = c->links[d * (QR_TRACE_MAX_TTL + 1) + h];
            fprintf(f, " %s", l[0] ? l : "*");
        }
        fputc('\n', f);
    }
}

int qr_testbed_traces_write(const char *log_path, const char *paths_path, const qr_topology *t,
                            const qr_flow *flows, size_t n_flows, const uint16_t *sport,
                            const qr_row_traceroute *probes, size_t n, char *errbuf)
{
    qr_flow_table *ft = NULL;
    qr_row_path *rows = NULL;
    size_t nr = 0;
    struct traces_ctx c = {t, flows, sport, probes, n, NULL, NULL, 0};
    int rc = qr_flow_table_for_topology(&ft, flows, n_flows, t, errbuf);
    if (!rc && (rc = qr_traceroute_paths(t, ft, probes, n, &rows, &nr)))
        qri_err(errbuf, rc, "%s: out of memory", paths_path);
    if (!rc) {
        c.n_dirs = qr_flow_table_directions(ft);
        c.links = calloc((c.n_dirs + 1) * (QR_TRACE_MAX_TTL + 1), sizeof *c.links);
        c.hops = calloc(c.n_dirs + 1, 1);
        if (!c.links || !c.hops)
            rc = qri_err(errbuf, QR_ENOMEM, "%s: out of memory", paths_path);
    }
    /* per direction, hop by hop: the first known name of any of its traces */
    for (size_t i = 0; !rc && i < nr; i++) {
        const qr_row_path *r = &rows[i];
        if (r->dir >= c.n_dirs || r->hop > QR_TRACE_MAX_TTL)
            continue;
        char *l = c.links[r->dir * (QR_TRACE_MAX_TTL + 1) + r->hop];
        if (!l[0])
            snprintf(l, 48, "%s", r->link);
        if (c.hops[r->dir] < r->hop + 1)
            c.hops[r->dir] = (uint8_t)(r->hop + 1);
    }
    if (!rc)
        rc = qr_write_text_file(log_path, write_traces, &c, errbuf);
    if (!rc)
        rc = qr_write_text_file(paths_path, write_path_file, &c, errbuf);
    free(rows);
    free(c.links);
    free(c.hops);
    qr_flow_table_destroy(ft);
    return rc;
}

int qr_testbed_app_completed(const qr_app *app, const qr_testbed_app *r)
{
    uint64_t cb, sb;
    qr_app_bytes(app->kind, &cb, &sb);
    return r->client_ok && r->server_ok && r->client_received == sb && r->server_received == cb;
}

struct apps_csv {
    const qr_app *apps;
    const qr_testbed_app *res;
    size_t n;
};

static void write_apps(FILE *f, const void *ctx)
{
    const struct apps_csv *x = ctx;
    fprintf(f, "session,app,client,server,start_ns,completed,duration_ns,client_sent,"
               "client_received,server_sent,server_received,error\n");
    for (size_t i = 0; i < x->n; i++) {
        const qr_app *a = &x->apps[i];
        const qr_testbed_app *r = &x->res[i];
        int done = qr_testbed_app_completed(a, r);
        char why[sizeof r->why];
        snprintf(why, sizeof why, "%s", done ? "" : r->why[0] ? r->why : "incomplete");
        for (char *c = why; *c; c++)
            if (*c == ',' || *c == '\n' || *c == '"')
                *c = ';';
        fprintf(f,
                "%zu,%s,%u,%u,%" PRId64 ",%d,%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%s\n",
                i, qr_app_name(a->kind), a->client, a->server, a->start_ns, done,
                done && r->end_ns > r->start_ns ? r->end_ns - r->start_ns : -1, r->client_sent,
                r->client_received, r->server_sent, r->server_received, why);
    }
}

int qr_testbed_apps_write(const char *path, const qr_app *apps, const qr_testbed_app *res, size_t n,
                          size_t *completed, char *errbuf)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += qr_testbed_app_completed(&apps[i], &res[i]) != 0;
    struct apps_csv x = {apps, res, n};
    int rc = qr_write_text_file(path, write_apps, &x, errbuf);
    if (!rc)
        *completed = k;
    return rc;
}

int qr_testbed_app_sessions(const char *rec_dir, const qr_recording *rec, const qr_app *apps,
                            size_t n_apps, int32_t *session, char *errbuf)
{
    const qr_flow_table *ft = qr_recording_flows(rec);
    size_t n_flows = qr_flow_table_flows(ft);
    for (size_t f = 0; f < n_flows; f++)
        session[f] = -1;
    char path[QR_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/recording.h5", rec_dir);
    qr_h5_reader *r;
    int rc = qr_h5_open(&r, path, errbuf);
    if (rc)
        return rc;
    qr_row_import_conn *cv = NULL;
    size_t nc = 0;
    rc = qr_h5_read_rows(r, "/import/connections", &qr_schema_import_conn, (void **)&cv, &nc,
                         errbuf);
    qr_h5_close(r);
    if (rc)
        return rc;
    for (size_t i = 0; i < nc; i++) {
        if (cv[i].flow >= n_flows || cv[i].port1 < QR_APP_FIRST_PORT)
            continue;
        const qr_flow *fl = qr_flow_table_flow(ft, cv[i].flow);
        size_t k = (size_t)(cv[i].port1 - QR_APP_FIRST_PORT);
        if (k < n_apps && apps[k].client == fl->src && apps[k].server == fl->dst)
            session[cv[i].flow] = (int32_t)k;
    }
    qr_h5_rows_free(cv);
    return QR_OK;
}

/* A decimal number of at most `max` (or, with neg, at least -max - 1) at *p, followed by a space
 * or the end; *p moves past it and its space. */
static int agent_num(const char **p, int neg, uint64_t max, int64_t *s, uint64_t *u)
{
    const char *q = *p;
    int minus = neg && *q == '-';
    q += minus;
    if (*q < '0' || *q > '9')
        return -1;
    uint64_t v = 0;
    for (; *q >= '0' && *q <= '9'; q++) {
        if (v > (max - (uint64_t)(*q - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*q - '0');
    }
    if (*q != ' ' && *q != '\0' && *q != '\n')
        return -1;
    if (s)
        *s = minus ? -(int64_t)v : (int64_t)v;
    if (u)
        *u = v;
    *p = *q == ' ' ? q + 1 : q;
    return 0;
}

int qr_agent_report_parse(const char *line, uint32_t n_flows, qr_agent_report *out)
{
    memset(out, 0, sizeof *out);
    if (!line)
        return QR_ESYNTAX;
    const char *p = line + 5;
    uint64_t flow, v[4];
    if (!strncmp(line, "sent ", 5))
        out->kind = QR_AGENT_SENT;
    else if (!strncmp(line, "recv ", 5))
        out->kind = QR_AGENT_RECV;
    else if (!strncmp(line, "fail ", 5))
        out->kind = QR_AGENT_FAIL;
    else if (!strncmp(line, "ping ", 5))
        out->kind = QR_AGENT_PING;
    else if (!strncmp(line, "probe ", 6))
        out->kind = QR_AGENT_PROBE, p = line + 6;
    else if (!strncmp(line, "answer ", 7))
        out->kind = QR_AGENT_ANSWER, p = line + 7;
    else
        return QR_ESYNTAX;
    if (out->kind == QR_AGENT_ANSWER) {
        if (agent_num(&p, 0, UINT32_MAX, NULL, &v[0]) || agent_num(&p, 0, 255, NULL, &v[1]) ||
            agent_num(&p, 0, UINT32_MAX, NULL, &v[2]) ||
            agent_num(&p, 1, INT64_MAX, &out->a_ns, NULL) || (*p != '\0' && *p != '\n') ||
            v[1] < 1 || v[1] > QR_TRACE_MAX_TTL)
            return QR_ESYNTAX;
        out->trace = (uint32_t)v[0];
        out->ttl = (uint32_t)v[1];
        out->replier = (uint32_t)v[2];
        return QR_OK;
    }
    if (agent_num(&p, 0, UINT32_MAX, NULL, &flow) || flow >= n_flows)
        return QR_ESYNTAX;
    if (out->kind == QR_AGENT_PROBE) {
        out->flow = (uint32_t)flow;
        if (agent_num(&p, 0, UINT32_MAX, NULL, &v[0]) || agent_num(&p, 0, 255, NULL, &v[1]) ||
            agent_num(&p, 0, 65535, NULL, &v[2]) || agent_num(&p, 1, INT64_MAX, &out->a_ns, NULL) ||
            (*p != '\0' && *p != '\n') || v[1] < 1 || v[1] > QR_TRACE_MAX_TTL)
            return QR_ESYNTAX;
        out->trace = (uint32_t)v[0];
        out->ttl = (uint32_t)v[1];
        out->ip_id = (uint32_t)v[2];
        return QR_OK;
    }
    if (out->kind == QR_AGENT_PING) {
        out->flow = (uint32_t)flow;
        if (agent_num(&p, 0, 65535, NULL, &v[0]) || agent_num(&p, 1, INT64_MAX, &out->a_ns, NULL) ||
            agent_num(&p, 1, INT64_MAX, &out->b_ns, NULL) || (*p != '\0' && *p != '\n') ||
            out->b_ns < -1)
            return QR_ESYNTAX;
        out->sport = (uint16_t)v[0];
        return QR_OK;
    }
    out->flow = (uint32_t)flow;
    if (out->kind == QR_AGENT_FAIL) {
        size_t n = strcspn(p, "\n");
        if (n == 0)
            return QR_ESYNTAX;
        snprintf(out->why, sizeof out->why, "%.*s",
                 (int)(n < sizeof out->why ? n : sizeof out->why - 1), p);
        return QR_OK;
    }
    uint64_t rt = 0;
    if (agent_num(&p, 1, INT64_MAX, &out->a_ns, NULL) ||
        agent_num(&p, 1, INT64_MAX, &out->b_ns, NULL) ||
        agent_num(&p, 0, UINT64_MAX, NULL, &out->bytes) ||
        (out->kind == QR_AGENT_SENT && agent_num(&p, 0, UINT32_MAX, NULL, &rt)))
        return QR_ESYNTAX;
    out->retransmissions = (uint32_t)rt;
    if ((*p != '\0' && *p != '\n') || out->b_ns < out->a_ns)
        return QR_ESYNTAX;
    return QR_OK;
}
