/* Everflow's guided probes traced from their mirrored copies (guided.h). */
#include "qreplay/guided.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/import.h"
#include "qreplay/stats.h"
#include "qreplay/textio.h"

typedef struct copy {
    uint32_t src, dst, seq;
    uint16_t sport;
    uint16_t sw;
    uint8_t port, out;
    int64_t t;
} copy;

static int cmp_copy(const void *pa, const void *pb)
{
    const copy *a = pa, *b = pb;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->sport != b->sport)
        return a->sport < b->sport ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (int)a->out - (int)b->out; /* in before out at one instant */
}

static int same_tuple(const copy *a, const copy *b)
{
    return a->src == b->src && a->dst == b->dst && a->sport == b->sport;
}

/* An IPv4 address (qr_addr_parse's text), host order. */
static int parse_addr(const char *s, uint32_t *out)
{
    uint8_t a[16];
    static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (qr_addr_parse(s, a) || memcmp(a, v4, 12))
        return -1;
    *out = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
    return 0;
}

/* Split line at commas (qr_list_next: items trimmed) into at most max fields; the number found,
 * max + 1 if there are more. */
static int fields(char *line, char **f, int max)
{
    int n = 0;
    char *cur = line, *item;
    while ((item = qr_list_next(&cur, ',')) && n <= max)
        if (n < max)
            f[n++] = item;
        else
            n++;
    return n;
}

static int parse_switch_port(const qr_topology *t, const char *sws, const char *ps, uint32_t *sw,
                             uint32_t *port)
{
    char *end;
    if (sws[0] != 's' || !sws[1])
        return -1;
    unsigned long a = strtoul(sws + 1, &end, 10);
    if (*end || a >= qr_topology_switches(t))
        return -1;
    unsigned long b = strtoul(ps, &end, 10);
    if (!*ps || *end || b >= qr_topology_ports(t, (uint32_t)a))
        return -1;
    *sw = (uint32_t)a;
    *port = (uint32_t)b;
    return 0;
}

/* path's copies; with hosts, each address must be a host's and becomes its index, else the
 * addresses are kept. */
static int read_copies(const char *path, const qr_topology *t, int hosts, copy **out, size_t *n,
                       char *errbuf)
{
    qr_lines *l;
    int rc = qr_lines_open(&l, path, errbuf);
    if (rc)
        return rc;
    char *line;
    size_t len, cap = 0;
    long no;
    copy *v = NULL;
    *n = 0;
    while ((rc = qr_lines_next(l, &line, &len, &no, errbuf)) == QR_OK) {
        if (no == 1) {
            if (strcmp(line, "src,dst,sport,seq,switch,port,dir,time_ns")) {
                rc = qri_err(errbuf, QR_EFORMAT,
                             "%s:1: expected the header src,dst,sport,seq,switch,port,dir,time_ns",
                             path);
                break;
            }
            continue;
        }
        char *f[9];
        copy c = {0};
        uint32_t sw, port;
        char *end;
        unsigned long sport, seq;
        long long tns;
        if (fields(line, f, 9) != 8 || parse_addr(f[0], &c.src) || parse_addr(f[1], &c.dst) ||
            (sport = strtoul(f[2], &end, 10), *end || !*f[2] || sport > 65535) ||
            (seq = strtoul(f[3], &end, 10), *end || !*f[3] || seq > UINT32_MAX) ||
            (strcmp(f[6], "in") && strcmp(f[6], "out")) ||
            (tns = strtoll(f[7], &end, 10), *end || !*f[7])) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s:%ld: not a copy (src,dst,sport,seq,switch,port,in|out,time_ns)", path,
                         no);
            break;
        }
        if (parse_switch_port(t, f[4], f[5], &sw, &port)) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: no switch port %s:%s in the topology", path,
                         no, f[4], f[5]);
            break;
        }
        uint32_t hs = c.src, hd = c.dst;
        if (hosts &&
            (qr_topology_host_of_addr(t, c.src, &hs) || qr_topology_host_of_addr(t, c.dst, &hd))) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: %s or %s is no host of the topology", path, no,
                         f[0], f[1]);
            break;
        }
        c.src = hs, c.dst = hd, c.sport = (uint16_t)sport, c.seq = (uint32_t)seq;
        c.sw = (uint16_t)sw, c.port = (uint8_t)port, c.out = f[6][0] == 'o', c.t = tns;
        if (qri_grow((void **)&v, &cap, *n, sizeof *v, 1024)) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        v[(*n)++] = c;
    }
    qr_lines_close(l);
    if (rc != QR_END) {
        free(v);
        *n = 0;
        return rc;
    }
    *out = v;
    return QR_OK;
}

/* counters.csv into drops[sw * maxp + port]; QR_ENOENT when there is none. */
static int read_counters(const char *path, const qr_topology *t, uint32_t maxp, uint64_t *drops,
                         char *errbuf)
{
    qr_lines *l;
    FILE *probe = fopen(path, "r");
    if (!probe)
        return QR_ENOENT;
    fclose(probe);
    int rc = qr_lines_open(&l, path, errbuf);
    if (rc)
        return rc;
    char *line;
    size_t len;
    long no;
    while ((rc = qr_lines_next(l, &line, &len, &no, errbuf)) == QR_OK) {
        if (no == 1) {
            if (strcmp(line, "switch,port,drops"))
                rc = qri_err(errbuf, QR_EFORMAT, "%s:1: expected the header switch,port,drops",
                             path);
            if (rc)
                break;
            continue;
        }
        char *f[4], *end;
        uint32_t sw, port;
        unsigned long long d;
        if (fields(line, f, 4) != 3 || (d = strtoull(f[2], &end, 10), *end || !*f[2])) {
            rc = qri_err(errbuf, QR_EFORMAT, "%s:%ld: not switch,port,drops", path, no);
            break;
        }
        if (parse_switch_port(t, f[0], f[1], &sw, &port)) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: no switch port %s:%s in the topology", path,
                         no, f[0], f[1]);
            break;
        }
        drops[sw * maxp + port] = d;
    }
    qr_lines_close(l);
    return rc == QR_END ? QR_OK : rc;
}

static int cmp_port(const void *pa, const void *pb)
{
    const qr_row_guided_port *a = pa, *b = pb;
    if (a->lost != b->lost)
        return a->lost > b->lost ? -1 : 1;
    if (a->sw != b->sw)
        return a->sw < b->sw ? -1 : 1;
    return a->port < b->port ? -1 : a->port > b->port;
}

void qr_guided_free(qr_guided *g)
{
    free(g->ports);
    memset(g, 0, sizeof *g);
}

const qr_row_guided_port *qr_guided_port(const qr_guided *g, uint32_t sw, uint32_t port)
{
    for (size_t i = 0; i < g->n_ports; i++)
        if (g->ports[i].sw == sw && g->ports[i].port == port)
            return &g->ports[i];
    return NULL;
}

/* Per port (sw * maxp + port) and per switch, what the mirrored copies show. */
struct tally {
    uint32_t sws, maxp;
    uint64_t *probes, *lost, *drops, *headed; /* per port */
    uint64_t *arrived, *inside;               /* per switch */
};

/* One 5-tuple's probes, v[a, b) sorted by probe then time: each probe delivered, lost on a link
 * (its last copy left a port) or lost inside a switch (its last copy arrived there: charged to
 * the port its 5-tuple leaves by when another probe showed it). Returns whether any probe was
 * delivered (the hash pinned its path). */
static int tally_tuple(const qr_topology *t, const copy *v, size_t a, size_t b, struct tally *y,
                       qr_guided *out)
{
    /* its way out of each switch, from every copy that left one (the hash pins it) */
    uint16_t way_sw[8];
    uint8_t way[8];
    size_t n_way = 0;
    for (size_t i = a; i < b; i++) {
        size_t j = 0;
        while (v[i].out && j < n_way && way_sw[j] != v[i].sw)
            j++;
        if (v[i].out && j == n_way && n_way < 8) {
            way_sw[n_way] = v[i].sw;
            way[n_way++] = v[i].port;
        }
    }
    uint32_t dsw, dport, maxp = y->maxp;
    qr_topology_host_attach(t, v[a].dst, &dsw, &dport);
    int pinned = 0;
    for (size_t p = a; p < b;) {
        /* one probe: v[p, q) in time order */
        size_t q = p;
        while (q < b && v[q].seq == v[p].seq)
            q++;
        out->probes++;
        for (size_t i = p; i < q; i++) {
            if (v[i].t < out->first_ns)
                out->first_ns = v[i].t;
            if (v[i].t > out->last_ns)
                out->last_ns = v[i].t;
            if (v[i].out)
                y->probes[(size_t)v[i].sw * maxp + v[i].port]++;
            else
                y->arrived[v[i].sw]++;
        }
        const copy *last = &v[q - 1];
        p = q;
        if (last->out && last->sw == dsw && last->port == dport) {
            out->delivered++;
            pinned = 1;
            continue;
        }
        out->lost++;
        if (last->out) {
            out->lost_link++;
            y->lost[(size_t)last->sw * maxp + last->port]++;
            continue;
        }
        out->lost_inside++;
        size_t j = 0;
        while (j < n_way && way_sw[j] != last->sw)
            j++;
        if (j < n_way) { /* headed out of the port its 5-tuple leaves by */
            size_t at = (size_t)last->sw * maxp + way[j];
            y->lost[at]++;
            y->headed[at]++;
            y->probes[at]++;
        } else {
            y->inside[last->sw]++;
        }
    }
    return pinned;
}

/* One row per port that probes left by, and per switch that lost probes inside with their way
 * out unknown, each against the switch's drop counters. */
static int port_rows(const qr_topology *t, const struct tally *y, qr_guided *out)
{
    size_t np = 0;
    for (size_t i = 0; i < (size_t)y->sws * y->maxp; i++)
        np += y->probes[i] > 0;
    for (uint32_t s = 0; s < y->sws; s++)
        np += y->inside[s] > 0;
    out->ports = calloc(np ? np : 1, sizeof *out->ports);
    if (!out->ports)
        return QR_ENOMEM;
    for (uint32_t s = 0; s < y->sws; s++) {
        uint64_t sw_drops = 0;
        for (uint32_t p = 0; p < qr_topology_ports(t, s); p++)
            sw_drops += y->drops[(size_t)s * y->maxp + p];
        if (y->inside[s]) { /* lost inside, their way out unknown */
            qr_row_guided_port *r = &out->ports[out->n_ports++];
            r->sw = s;
            r->port = QR_GUIDED_INSIDE;
            r->link = UINT32_MAX;
            snprintf(r->link_name, sizeof r->link_name, "s%u", s);
            r->probes = y->arrived[s];
            r->lost = y->inside[s];
            r->counters_known = (uint8_t)out->counters_known;
            r->counter_drops = sw_drops;
            r->silent = r->lost && out->counters_known && !sw_drops;
        }
        for (uint32_t p = 0; p < qr_topology_ports(t, s); p++) {
            size_t at = (size_t)s * y->maxp + p;
            if (!y->probes[at])
                continue;
            qr_row_guided_port *r = &out->ports[out->n_ports++];
            r->sw = s;
            r->port = p;
            r->link = qr_topology_port_link(t, s, p);
            qr_topology_link_name(t, r->link, r->link_name, sizeof r->link_name);
            r->probes = y->probes[at];
            r->lost = y->lost[at];
            r->inside = y->headed[at];
            r->counters_known = (uint8_t)out->counters_known;
            r->counter_drops = y->drops[at];
            r->silent = r->lost && out->counters_known && !y->drops[at];
        }
    }
    if (out->n_ports)
        qsort(out->ports, out->n_ports, sizeof *out->ports, cmp_port);
    return QR_OK;
}

/* mirror_dir/name into path, and whether it is there (QR_ENOENT: "no `what` were mirrored"). */
static int mirror_file(char *path, size_t size, const char *mirror_dir, const char *name,
                       const char *what, char *errbuf)
{
    snprintf(path, size, "%s/%s", mirror_dir, name);
    FILE *probe = fopen(path, "r");
    if (!probe)
        return qri_err(errbuf, QR_ENOENT, "%s: no %s were mirrored", path, what);
    fclose(probe);
    return QR_OK;
}

int qr_guided_run(const char *mirror_dir, const qr_topology *t, qr_guided *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    char path[4200];
    if (mirror_file(path, sizeof path, mirror_dir, "guided.csv", "guided probes", errbuf))
        return QR_ENOENT;
    copy *v = NULL;
    size_t n = 0;
    int rc = read_copies(path, t, 1, &v, &n, errbuf);
    if (rc)
        return rc;
    struct tally y = {.sws = qr_topology_switches(t)};
    for (uint32_t s = 0; s < y.sws; s++)
        if (qr_topology_ports(t, s) > y.maxp)
            y.maxp = qr_topology_ports(t, s);
    size_t slots = (size_t)y.sws * y.maxp;
    y.probes = calloc(slots + 1, sizeof *y.probes);
    y.lost = calloc(slots + 1, sizeof *y.lost);
    y.drops = calloc(slots + 1, sizeof *y.drops);
    y.headed = calloc(slots + 1, sizeof *y.headed);
    y.arrived = calloc(y.sws + 1, sizeof *y.arrived);
    y.inside = calloc(y.sws + 1, sizeof *y.inside);
    if (!y.probes || !y.lost || !y.drops || !y.arrived || !y.inside || !y.headed)
        rc = QR_ENOMEM;
    if (!rc) {
        snprintf(path, sizeof path, "%s/counters.csv", mirror_dir);
        rc = read_counters(path, t, y.maxp, y.drops, errbuf);
        out->counters_known = rc == QR_OK;
        if (rc == QR_ENOENT)
            rc = QR_OK;
    }
    if (!rc) {
        if (n)
            qsort(v, n, sizeof *v, cmp_copy);
        out->copies = n;
        out->first_ns = n ? INT64_MAX : 0;
        out->last_ns = n ? INT64_MIN : 0;
        for (size_t a = 0, b; a < n; a = b) { /* one 5-tuple: v[a, b) */
            for (b = a; b < n && same_tuple(&v[a], &v[b]); b++)
                ;
            out->tuples++;
            out->pinned += tally_tuple(t, v, a, b, &y, out);
        }
        rc = port_rows(t, &y, out);
    }
    if (rc == QR_ENOMEM)
        qri_err(errbuf, rc, "out of memory");
    free(v);
    free(y.probes);
    free(y.lost);
    free(y.drops);
    free(y.arrived);
    free(y.inside);
    free(y.headed);
    if (rc)
        qr_guided_free(out);
    return rc;
}

/* ---- the link round trips: S1 -> S2 -> S1 ---- */

void qr_bounce_free(qr_bounce *b)
{
    free(b->rows);
    memset(b, 0, sizeof *b);
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static int64_t median_of(int64_t *v, size_t n)
{
    if (n)
        qsort(v, n, sizeof *v, cmp_i64);
    return qr_percentile_i64(v, n, 0.5);
}

/* Per pin, its probes' times: the round trip, each leg, the time inside the neighbour. */
struct legs {
    int64_t *rtt, *out, *back, *peer;
    size_t n_rtt, n_out, n_back, n_peer;
};

/* One probe's copies v[a, b) (time order) of pin x: its fate and times into row r and g. */
static void one_bounce(const qr_bounce_pin *x, const copy *v, size_t a, size_t b, qr_row_bounce *r,
                       struct legs *g)
{
    int64_t t0 = INT64_MIN, t1 = INT64_MIN, t2 = INT64_MIN, t3 = INT64_MIN;
    for (size_t i = a; i < b; i++) {
        const copy *c = &v[i];
        if (c->sw == x->sw && c->port == x->port && c->out && t0 == INT64_MIN)
            t0 = c->t;
        else if (c->sw == x->peer && c->port == x->peer_port && !c->out && t1 == INT64_MIN)
            t1 = c->t;
        else if (c->sw == x->peer && c->port == x->peer_port && c->out && t2 == INT64_MIN)
            t2 = c->t;
        else if (c->sw == x->sw && c->port == x->port && !c->out && t0 != INT64_MIN &&
                 t3 == INT64_MIN)
            t3 = c->t;
    }
    if (t0 == INT64_MIN) { /* seen further on, but its copy leaving S1 is missing */
        r->unseen++;
        return;
    }
    if (t1 != INT64_MIN)
        g->out[g->n_out++] = t1 - t0;
    if (t1 != INT64_MIN && t2 != INT64_MIN)
        g->peer[g->n_peer++] = t2 - t1;
    if (t2 != INT64_MIN && t3 != INT64_MIN)
        g->back[g->n_back++] = t3 - t2;
    if (t3 != INT64_MIN) {
        r->returned++;
        g->rtt[g->n_rtt++] = t3 - t0;
    } else if (t1 == INT64_MIN)
        r->lost_out++;
    else if (t2 == INT64_MIN)
        r->lost_peer++;
    else
        r->lost_back++;
}

/* The rows' flags: slow against the median of the rows' median round trips, lossy. */
static int flag_rows(qr_bounce *out)
{
    int64_t *m = malloc((out->n_rows ? out->n_rows : 1) * sizeof *m);
    if (!m)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < out->n_rows; i++)
        if (out->rows[i].returned)
            m[k++] = out->rows[i].rtt_p50_ns;
    out->median_rtt_ns = median_of(m, k);
    free(m);
    for (size_t i = 0; i < out->n_rows; i++) {
        qr_row_bounce *r = &out->rows[i];
        r->slow = r->returned && out->median_rtt_ns > 0 &&
                  (double)r->rtt_p50_ns > out->ratio * (double)out->median_rtt_ns &&
                  r->rtt_p50_ns - out->median_rtt_ns >= QR_BOUNCE_MIN_EXCESS_NS;
        r->lossy = r->lost_in + r->lost_out + r->lost_peer + r->lost_back > 0;
        out->flagged += r->slow || r->lossy;
    }
    return QR_OK;
}

int qr_bounce_run(const char *mirror_dir, const qr_topology *t, double ratio, qr_bounce *out,
                  char *errbuf)
{
    memset(out, 0, sizeof *out);
    out->ratio = ratio;
    char path[4200];
    if (mirror_file(path, sizeof path, mirror_dir, "bounce.csv", "link round-trip probes", errbuf))
        return QR_ENOENT;
    if (!(ratio > 1))
        return qri_err(errbuf, QR_EINVAL, "the link ratio must be above 1 (it is %g)", ratio);
    copy *v = NULL;
    size_t n = 0;
    qr_bounce_pin *pins = NULL;
    size_t n_pins = 0;
    int rc = read_copies(path, t, 0, &v, &n, errbuf);
    if (!rc && qr_bounce_plan(t, &pins, &n_pins))
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        if (v[i].src != v[i].dst || v[i].sport != QR_BOUNCE_SPORT ||
            !qr_bounce_pin_of(pins, n_pins, v[i].src))
            rc =
                qri_err(errbuf, QR_EVALUE,
                        "%s: copy %zu (of s%u:%u) is of a probe from %u.%u.%u.%u:%u to "
                        "%u.%u.%u.%u: a round-trip probe goes from port %u of a switch's address "
                        "on a cable to itself",
                        path, i + 1, v[i].sw, v[i].port, v[i].src >> 24, v[i].src >> 16 & 255,
                        v[i].src >> 8 & 255, v[i].src & 255, v[i].sport, v[i].dst >> 24,
                        v[i].dst >> 16 & 255, v[i].dst >> 8 & 255, v[i].dst & 255, QR_BOUNCE_SPORT);
    struct legs g = {0};
    if (!rc) {
        out->rows = calloc(n_pins ? n_pins : 1, sizeof *out->rows);
        g.rtt = malloc((n ? n : 1) * sizeof *g.rtt);
        g.out = malloc((n ? n : 1) * sizeof *g.out);
        g.back = malloc((n ? n : 1) * sizeof *g.back);
        g.peer = malloc((n ? n : 1) * sizeof *g.peer);
        if (!out->rows || !g.rtt || !g.out || !g.back || !g.peer)
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    if (!rc && n)
        qsort(v, n, sizeof *v, cmp_copy); /* by source (the pin), round, time */
    out->copies = n;
    /* every switch sends the same rounds 0 .. R-1 out of every port (the plan): a round of a
     * port with no copy at all was lost before its port's mirror saw it leave */
    uint64_t rounds = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (v[i].seq >= rounds)
            rounds = (uint64_t)v[i].seq + 1;
    size_t *first = rc ? NULL : calloc(2 * n_pins + 1, sizeof *first);
    if (!rc && !first)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t a = 0, b; !rc && a < n; a = b) { /* one pin's copies: v[a, b) */
        for (b = a; b < n && v[b].src == v[a].src; b++)
            ;
        size_t j = (size_t)(qr_bounce_pin_of(pins, n_pins, v[a].src) - pins);
        first[2 * j] = a + 1;
        first[2 * j + 1] = b;
    }
    for (size_t j = 0; !rc && rounds && j < n_pins; j++) {
        const qr_bounce_pin *x = &pins[j];
        qr_row_bounce *r = &out->rows[out->n_rows++];
        r->sw = x->sw, r->port = x->port, r->peer = x->peer, r->peer_port = x->peer_port;
        r->link = qr_topology_port_link(t, x->sw, x->port);
        qr_topology_link_name(t, r->link, r->link_name, sizeof r->link_name);
        g.n_rtt = g.n_out = g.n_back = g.n_peer = 0;
        size_t a = first[2 * j] ? first[2 * j] - 1 : 0, b = first[2 * j] ? first[2 * j + 1] : 0;
        uint64_t seen = 0;
        for (size_t p = a, q; p < b; p = q) { /* one probe: its round */
            for (q = p; q < b && v[q].seq == v[p].seq; q++)
                ;
            one_bounce(x, v, p, q, r, &g);
            seen++;
        }
        r->sent = rounds;
        r->lost_in = rounds - seen;
        r->rtt_p50_ns = median_of(g.rtt, g.n_rtt);
        r->rtt_min_ns = g.n_rtt ? g.rtt[0] : 0;
        r->rtt_max_ns = g.n_rtt ? g.rtt[g.n_rtt - 1] : 0;
        r->out_p50_ns = median_of(g.out, g.n_out);
        r->back_p50_ns = median_of(g.back, g.n_back);
        r->peer_p50_ns = median_of(g.peer, g.n_peer);
        out->probes += r->sent;
        out->returned += r->returned;
        out->unseen += r->unseen;
    }
    free(first);
    if (!rc)
        rc = flag_rows(out) ? qri_err(errbuf, QR_ENOMEM, "out of memory") : QR_OK;
    free(g.rtt);
    free(g.out);
    free(g.back);
    free(g.peer);
    free(pins);
    free(v);
    if (rc)
        qr_bounce_free(out);
    return rc;
}
