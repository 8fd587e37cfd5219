/* qreplay pingmesh: the probe matrices and the detection rule, from the agents' log
 * (pingmesh_analyze.h). Scoring against the planted faults is the scorer's (pingmesh_score.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/h5.h"
#include "qreplay/linkfault.h"
#include "qreplay/metrics.h"
#include "qreplay/pingmesh_analyze.h"
#include "qreplay/recording.h"
#include "qreplay/units.h"

enum { PL_SPINE, PL_POD, PL_RACK, PL_SERVER, PL_RACKS };
static const char *const place_kinds[] = {"spine", "pod", "rack", "server", "racks"};

#define MAX_MEMBERS 8
#define MIN_LOST 3 /* a place needs at least this many lost probes to be flagged */

typedef struct {
    uint8_t kind;
    uint32_t index;
} place_def;

typedef struct qr_pingmesh_ctx {
    qr_config cfg; /* the run's configuration (a copy) */
    const qr_config *c;
    qr_topology *t;
    qr_probe_pair *plan;
    size_t n_pairs;
    uint32_t racks, pods, hosts, half; /* half: k/2 (a FatTree), 0 on the star */
    place_def *pl;
    size_t n_places, first_rack, first_server, first_cell;
    uint32_t (*members)[MAX_MEMBERS];
    uint8_t *n_members;
    /* the rule's scratch */
    uint64_t *sum_n, *sum_l;
    uint8_t *active, *flagged;
    size_t n_candidates;
    uint32_t *stamp, stamp_now; /* suspect marking, by link */
    uint32_t *list;             /* the cables the last suspects() marked */
    size_t n_list;
    /* what the curve needs again (qr_pingmesh_curve_flags) */
    qr_pingmesh_opts opts;
    qr_row_probe_obs *pr; /* the scored probes, in send order */
    size_t n_scored;
    int64_t timeout;
    size_t *upto; /* per curve step: how many of pr it counts */
    uint64_t *pn, *pl_;
    struct flag_s *flags;
} qr_pingmesh_ctx;
typedef qr_pingmesh_ctx ctx;

/* One flagged place with its numbers when it was flagged. */
typedef struct flag_s {
    uint32_t place;
    uint64_t n, l;
    double rate, rest, llr;
} flag_t;

static double xlogy(double x, double y)
{
    return x > 0 ? x * log(y) : 0;
}

/* Bernoulli log-likelihood of l successes in n at their own rate. */
static double ll(double l, double n)
{
    return n > 0 ? xlogy(l, l / n) + xlogy(n - l, 1 - l / n) : 0;
}

static uint32_t cable(const qr_topology *t, uint32_t link)
{
    uint32_t r = qr_topology_link_reverse(t, link);
    return r < link ? r : link;
}

/* ---- places and their suspect cables ---- */

static void place_name(const ctx *x, const place_def *p, char *buf, size_t size)
{
    switch (p->kind) {
    case PL_SPINE: snprintf(buf, size, "spine"); break;
    case PL_POD: snprintf(buf, size, "pod %u", p->index); break;
    case PL_RACK: snprintf(buf, size, "rack s%u", p->index); break;
    case PL_SERVER: snprintf(buf, size, "h%u", p->index); break;
    default: snprintf(buf, size, "s%u>s%u", p->index / x->racks, p->index % x->racks);
    }
}

/* Mark cable of link (new ones into x->list). */
static void mark(ctx *x, uint32_t link)
{
    uint32_t cb = cable(x->t, link);
    if (x->stamp[cb] == x->stamp_now)
        return;
    x->stamp[cb] = x->stamp_now;
    x->list[x->n_list++] = cb;
}

/* The links from the aggregation switches of pod p to the core. */
static void mark_pod_up(ctx *x, uint32_t pod)
{
    uint32_t k = 2 * x->half;
    for (uint32_t a = 0; a < x->half; a++)
        for (uint32_t port = x->half; port < k; port++)
            mark(x, qr_topology_port_link(x->t, k * k / 2 + pod * x->half + a, port));
}

/* The links from edge switch r up to its aggregation switches. */
static void mark_rack_up(ctx *x, uint32_t r)
{
    for (uint32_t port = x->half; x->half && port < 2 * x->half; port++)
        mark(x, qr_topology_port_link(x->t, r, port));
}

static void mark_rack_down(ctx *x, uint32_t r)
{
    uint32_t down = x->half ? x->half : qr_topology_ports(x->t, r);
    for (uint32_t port = 0; port < down; port++)
        mark(x, qr_topology_port_link(x->t, r, port));
}

/* A place's suspect cables, into x->list (x->n_list of them). */
static void suspects(ctx *x, const place_def *p)
{
    x->n_list = 0;
    if (++x->stamp_now == 0) {
        memset(x->stamp, 0, qr_topology_links(x->t) * sizeof *x->stamp);
        x->stamp_now = 1;
    }
    switch (p->kind) {
    case PL_SPINE:
        for (uint32_t pod = 0; pod < x->pods; pod++)
            mark_pod_up(x, pod);
        break;
    case PL_POD: mark_pod_up(x, p->index); break;
    case PL_RACK:
        mark_rack_down(x, p->index);
        mark_rack_up(x, p->index);
        break;
    case PL_SERVER: mark(x, qr_topology_uplink(x->t, p->index)); break;
    default: {
        uint32_t a = p->index / x->racks, b = p->index % x->racks;
        if (a == b) {
            mark_rack_down(x, a);
            break;
        }
        mark_rack_up(x, a);
        mark_rack_up(x, b);
        uint32_t pa = qr_pingmesh_pod_of_rack(x->t, a), pb = qr_pingmesh_pod_of_rack(x->t, b);
        if (pa != pb) {
            mark_pod_up(x, pa);
            mark_pod_up(x, pb);
        }
    }
    }
}

static int build_places(ctx *x)
{
    int multi_pod = x->pods > 1;
    size_t np = (size_t)multi_pod + (multi_pod ? x->pods : 0);
    x->first_rack = np;
    x->first_server = np + x->racks;
    x->first_cell = x->first_server + x->hosts;
    x->n_places = x->first_cell + (size_t)x->racks * x->racks;
    x->pl = calloc(x->n_places, sizeof *x->pl);
    x->members = calloc(x->n_pairs ? x->n_pairs : 1, sizeof *x->members);
    x->n_members = calloc(x->n_pairs ? x->n_pairs : 1, 1);
    x->sum_n = calloc(x->n_places, sizeof *x->sum_n);
    x->sum_l = calloc(x->n_places, sizeof *x->sum_l);
    x->active = calloc(x->n_pairs ? x->n_pairs : 1, 1);
    x->flagged = calloc(x->n_places, 1);
    if (!x->pl || !x->members || !x->n_members || !x->sum_n || !x->sum_l || !x->active ||
        !x->flagged)
        return QR_ENOMEM;
    size_t i = 0;
    if (multi_pod) {
        x->pl[i++] = (place_def){PL_SPINE, 0};
        for (uint32_t p = 0; p < x->pods; p++)
            x->pl[i++] = (place_def){PL_POD, p};
    }
    for (uint32_t r = 0; r < x->racks; r++)
        x->pl[i++] = (place_def){PL_RACK, r};
    for (uint32_t h = 0; h < x->hosts; h++)
        x->pl[i++] = (place_def){PL_SERVER, h};
    for (uint32_t c = 0; c < x->racks * x->racks; c++)
        x->pl[i++] = (place_def){PL_RACKS, c};
    for (size_t q = 0; q < x->n_pairs; q++) {
        const qr_probe_pair *p = &x->plan[q];
        uint32_t *m = x->members[q];
        uint8_t n = 0;
        if (p->src_pod != p->dst_pod) {
            m[n++] = 0;
            m[n++] = 1 + p->src_pod;
            m[n++] = 1 + p->dst_pod;
        }
        if (p->src_rack != p->dst_rack) {
            m[n++] = (uint32_t)x->first_rack + p->src_rack;
            m[n++] = (uint32_t)x->first_rack + p->dst_rack;
        }
        m[n++] = (uint32_t)x->first_server + p->src;
        m[n++] = (uint32_t)x->first_server + p->dst;
        m[n++] = (uint32_t)x->first_cell + p->src_rack * x->racks + p->dst_rack;
        x->n_members[q] = n;
    }
    return QR_OK;
}

/* The detection rule on per-pair counts pn (scored probes) and pl (lost): flags into out (at most
 * n_places), their number into *n_out. first: every place's numbers in the first round (may be
 * NULL). */
static void rule(ctx *x, const qr_pingmesh_opts *o, const uint64_t *pn, const uint64_t *pl,
                 flag_t *out, size_t *n_out, flag_t *first)
{
    *n_out = 0;
    memset(x->flagged, 0, x->n_places);
    size_t candidates = 0;
    for (size_t q = 0; q < x->n_pairs; q++)
        x->active[q] = pn[q] > 0;
    for (int round = 0;; round++) {
        uint64_t N = 0, L = 0;
        memset(x->sum_n, 0, x->n_places * sizeof *x->sum_n);
        memset(x->sum_l, 0, x->n_places * sizeof *x->sum_l);
        for (size_t q = 0; q < x->n_pairs; q++) {
            if (!x->active[q])
                continue;
            N += pn[q];
            L += pl[q];
            for (uint8_t j = 0; j < x->n_members[q]; j++) {
                x->sum_n[x->members[q][j]] += pn[q];
                x->sum_l[x->members[q][j]] += pl[q];
            }
        }
        if (round == 0)
            for (size_t i = 0; i < x->n_places; i++)
                candidates += x->sum_n[i] > 0;
        double all = ll((double)L, (double)N), best_llr = 0;
        size_t best = (size_t)-1;
        flag_t best_f = {0};
        for (size_t i = 0; i < x->n_places; i++) {
            uint64_t n = x->sum_n[i], l = x->sum_l[i];
            if (x->flagged[i] || n == 0)
                continue;
            double rin = (double)l / (double)n;
            double rout = N > n ? (double)(L - l) / (double)(N - n) : NAN;
            double llr =
                N > n ? ll((double)l, (double)n) + ll((double)(L - l), (double)(N - n)) - all : 0;
            if (llr < 0)
                llr = 0;
            if (round == 0 && first)
                first[i] = (flag_t){(uint32_t)i, n, l, rin, rout, rin > rout ? llr : 0};
            if (N == n || l < MIN_LOST || !(rin > o->ratio * rout) || !(llr > best_llr))
                continue;
            best = i;
            best_llr = llr;
            best_f = (flag_t){(uint32_t)i, n, l, rin, rout, llr};
        }
        /* 2 * llr is chi-square with one degree of freedom: p = erfc(sqrt(llr)) */
        if (best == (size_t)-1 || !(erfc(sqrt(best_llr)) < o->alpha / (double)candidates))
            break;
        x->flagged[best] = 1;
        out[(*n_out)++] = best_f;
        for (size_t q = 0; q < x->n_pairs; q++)
            for (uint8_t j = 0; x->active[q] && j < x->n_members[q]; j++)
                if (x->members[q][j] == best)
                    x->active[q] = 0;
    }
}

/* (key, rtt) pairs sorted, for percentiles per pair and per cell. */
typedef struct {
    uint32_t key;
    int64_t rtt;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rtt > y->rtt) - (x->rtt < y->rtt);
}

/* p50 and p99 of each key's run of sorted values: fn(ctx, key, p50, p99). */
static void percentiles(keyed *v, size_t n, int64_t *sorted, int64_t *p50, int64_t *p99,
                        size_t n_keys)
{
    qsort(v, n, sizeof *v, cmp_keyed);
    for (size_t k = 0; k < n_keys; k++)
        p50[k] = p99[k] = -1;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].key == v[i].key) {
            sorted[j - i] = v[j].rtt;
            j++;
        }
        p50[v[i].key] = qr_percentile_i64(sorted, j - i, 0.5);
        p99[v[i].key] = qr_percentile_i64(sorted, j - i, 0.99);
        i = j;
    }
}

void qr_pingmesh_opts_default(qr_pingmesh_opts *o)
{
    memset(o, 0, sizeof *o);
    o->alpha = 0.001;
    o->ratio = 2;
    o->window_ns = 1000000;
    o->bh_pair = 0.25;
    o->bh_tor = 0.5;
    o->bh_pod = 0.5;
    o->syn_rto_ns = 1000000000;
}

int qr_pingmesh_opts_parse(qr_pingmesh_opts *o, const char *alpha, const char *ratio, char *errbuf)
{
    double a = o->alpha, r = o->ratio;
    if (alpha && qr_parse_share(alpha, &a, NULL))
        return qri_err(errbuf, QR_EVALUE, "--alpha: '%s' is not a share between 0 and 1", alpha);
    if (ratio) {
        char *end;
        r = strtod(ratio, &end);
        if (!*ratio || *end || !(r >= 1) || r > 1e6)
            return qri_err(errbuf, QR_EVALUE, "--ratio: '%s' is not a number from 1", ratio);
    }
    o->alpha = a;
    o->ratio = r;
    return QR_OK;
}

static int cmp_place(const void *a, const void *b)
{
    const qr_row_pm_place *x = a, *y = b;
    if ((x->flagged == 0) != (y->flagged == 0))
        return x->flagged ? -1 : 1;
    if (x->flagged)
        return x->flagged < y->flagged ? -1 : 1;
    return (x->llr < y->llr) - (x->llr > y->llr);
}

static void progress(const qr_pingmesh_opts *o, const char *line)
{
    if (o->progress)
        o->progress(o->progress_ctx, line);
}

static void ctx_free(ctx *x)
{
    if (!x)
        return;
    free(x->plan);
    free(x->pl);
    free(x->members);
    free(x->n_members);
    free(x->sum_n);
    free(x->sum_l);
    free(x->active);
    free(x->flagged);
    free(x->stamp);
    free(x->list);
    free(x->pr);
    free(x->upto);
    free(x->pn);
    free(x->pl_);
    free(x->flags);
    qr_topology_destroy(x->t);
    free(x);
}

/* The summary's probe accounting and the pairs' counts; the scored probes kept in x->pr. */
static int count_probes(ctx *x, const qr_probe_log *log, qr_pingmesh_result *out, keyed *kv,
                        size_t *nkv, char *errbuf)
{
    qr_row_pm_summary *s = &out->summary;
    uint64_t *host_bytes = calloc(x->hosts, sizeof *host_bytes);
    if (!host_bytes)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    *nkv = 0;
    for (size_t i = 0; i < log->n_probes; i++) {
        const qr_row_probe_obs *p = &log->probes[i];
        if (p->pair >= x->n_pairs || x->plan[p->pair].src != p->src ||
            x->plan[p->pair].dst != p->dst) {
            free(host_bytes);
            return qri_err(errbuf, QR_EFORMAT,
                           "%s: /probes row %zu: pair %u (hosts %u to %u) is not one of the %zu "
                           "pairs of the scenario's plan",
                           log->path, i + 1, p->pair, p->src, p->dst, x->n_pairs);
        }
        s->sent++;
        host_bytes[p->src] += s->size;
        if (p->echoed)
            host_bytes[p->dst] += s->size;
        if (p->sent_ns + x->timeout > log->sim_end_ns) {
            s->unresolved++;
            continue;
        }
        x->pr[x->n_scored++] = *p;
        s->scored++;
        int lost = !(p->rtt_ns >= 0 && p->rtt_ns <= x->timeout);
        qr_row_pm_pair *pp = &out->pairs[p->pair];
        pp->probes++;
        if (!lost) {
            s->answered++;
            kv[(*nkv)++] = (keyed){p->pair, p->rtt_ns};
            continue;
        }
        s->lost++;
        pp->lost++;
        s->late += p->rtt_ns > x->timeout;
    }
    s->drop_rate = s->scored ? (double)s->lost / (double)s->scored : NAN;
    for (size_t i = 0; i < x->hosts; i++)
        s->probe_bytes += host_bytes[i];
    s->traffic_bytes = log->traffic_bytes;
    s->probe_share = s->probe_bytes + s->traffic_bytes
                         ? (double)s->probe_bytes / (double)(s->probe_bytes + s->traffic_bytes)
                         : NAN;
    double span = (double)log->sim_end_ns;
    if (x->c->pingmesh.duration_ns > 0 && (double)x->c->pingmesh.duration_ns < span)
        span = (double)x->c->pingmesh.duration_ns;
    for (size_t h = 0; h < x->hosts && span > 0; h++) {
        double bps = (double)host_bytes[h] * 8e9 / span;
        if (bps > s->host_probe_bps_max)
            s->host_probe_bps_max = bps;
    }
    s->link_share_max = s->host_probe_bps_max / (double)x->c->links.rate_bps;
    free(host_bytes);
    return QR_OK;
}

/* The pairs' and the rack matrix's rows, with round-trip percentiles. */
static void matrices(ctx *x, qr_pingmesh_result *out, keyed *kv, size_t nkv, int64_t *sorted,
                     int64_t *p50, int64_t *p99)
{
    size_t cells = (size_t)x->racks * x->racks;
    percentiles(kv, nkv, sorted, p50, p99, x->n_pairs);
    for (size_t q = 0; q < x->n_pairs; q++) {
        qr_row_pm_pair *pp = &out->pairs[q];
        const qr_probe_pair *p = &x->plan[q];
        pp->pair = (uint32_t)q;
        pp->src = p->src;
        pp->dst = p->dst;
        pp->src_rack = p->src_rack;
        pp->dst_rack = p->dst_rack;
        pp->src_pod = p->src_pod;
        pp->dst_pod = p->dst_pod;
        pp->drop_rate = pp->probes ? (double)pp->lost / (double)pp->probes : NAN;
        pp->p50_ns = p50[q];
        pp->p99_ns = p99[q];
        qr_row_pm_rack *rk = &out->racks[p->src_rack * x->racks + p->dst_rack];
        rk->pairs++;
        rk->probes += pp->probes;
        rk->lost += pp->lost;
    }
    for (size_t i = 0; i < nkv; i++) {
        const qr_probe_pair *p = &x->plan[kv[i].key];
        kv[i].key = p->src_rack * x->racks + p->dst_rack;
    }
    percentiles(kv, nkv, sorted, p50, p99, cells);
    for (uint32_t a = 0; a < x->racks; a++)
        for (uint32_t b = 0; b < x->racks; b++) {
            qr_row_pm_rack *rk = &out->racks[a * x->racks + b];
            rk->src_rack = a;
            rk->dst_rack = b;
            rk->src_pod = qr_pingmesh_pod_of_rack(x->t, a);
            rk->dst_pod = qr_pingmesh_pod_of_rack(x->t, b);
            rk->drop_rate = rk->probes ? (double)rk->lost / (double)rk->probes : NAN;
            rk->p50_ns = p50[a * x->racks + b];
            rk->p99_ns = p99[a * x->racks + b];
        }
}

/* The rule on every scored probe: every candidate place's row, flagged ones first. */
/* Round trips on a log scale: RTT_BINS bins of 2^(1/8) from 1 us (the last takes the rest). */
#define RTT_BINS 200
static size_t rtt_bin(int64_t ns)
{
    if (ns <= 1000)
        return 0;
    size_t b = (size_t)(8 * log2((double)ns / 1000.0)) + 1;
    return b < RTT_BINS ? b : RTT_BINS - 1;
}
static int64_t rtt_of_bin(size_t b)
{
    return b ? (int64_t)(1000.0 * pow(2.0, (double)b / 8)) : 1000;
}
/* The 99th percentile of a histogram of n round trips (its bin's upper edge); -1 if empty. */
static int64_t hist_p99(const uint64_t *h, uint64_t n)
{
    if (!n)
        return -1;
    uint64_t want = (uint64_t)ceil(0.99 * (double)n), seen = 0;
    for (size_t b = 0; b < RTT_BINS; b++)
        if ((seen += h[b]) >= want)
            return rtt_of_bin(b);
    return rtt_of_bin(RTT_BINS - 1);
}

/* Each place's answered round trips against the others' (qr_row_pm_place latency). */
static int latency(ctx *x, qr_pingmesh_result *out)
{
    uint64_t *pair_h = calloc((x->n_pairs + 1) * RTT_BINS, sizeof *pair_h);
    uint64_t *all = calloc(RTT_BINS, sizeof *all), *in = calloc(RTT_BINS, sizeof *in),
             *rest = calloc(RTT_BINS, sizeof *rest);
    if (!pair_h || !all || !in || !rest) {
        free(pair_h);
        free(all);
        free(in);
        free(rest);
        return QR_ENOMEM;
    }
    uint64_t n_all = 0;
    for (size_t i = 0; i < x->n_scored; i++) {
        const qr_row_probe_obs *p = &x->pr[i];
        if (p->rtt_ns < 0 || p->rtt_ns > x->timeout || p->pair >= x->n_pairs)
            continue;
        size_t b = rtt_bin(p->rtt_ns);
        pair_h[p->pair * RTT_BINS + b]++;
        all[b]++;
        n_all++;
    }
    for (size_t i = 0; i < x->n_places; i++) {
        qr_row_pm_place *pl = &out->places[i];
        memset(in, 0, RTT_BINS * sizeof *in);
        uint64_t n_in = 0;
        for (size_t q = 0; q < x->n_pairs; q++)
            for (uint8_t j = 0; j < x->n_members[q]; j++)
                if (x->members[q][j] == i) {
                    for (size_t b = 0; b < RTT_BINS; b++) {
                        in[b] += pair_h[q * RTT_BINS + b];
                        n_in += pair_h[q * RTT_BINS + b];
                    }
                    break;
                }
        for (size_t b = 0; b < RTT_BINS; b++)
            rest[b] = all[b] - in[b];
        pl->rtt_p99_ns = hist_p99(in, n_in);
        pl->rest_rtt_p99_ns = hist_p99(rest, n_all - n_in);
        if (pl->rtt_p99_ns >= 0 && pl->rest_rtt_p99_ns >= 0)
            snprintf(pl->latency, sizeof pl->latency, "%s",
                     (double)pl->rtt_p99_ns >= x->opts.ratio * (double)pl->rest_rtt_p99_ns
                         ? "congestion"
                         : "silent");
    }
    free(pair_h);
    free(all);
    free(in);
    free(rest);
    return QR_OK;
}

static int places(ctx *x, qr_pingmesh_result *out, flag_t *first)
{
    qr_row_pm_summary *s = &out->summary;
    for (size_t q = 0; q < x->n_pairs; q++) {
        x->pn[q] = out->pairs[q].probes;
        x->pl_[q] = out->pairs[q].lost;
    }
    size_t nf = 0;
    rule(x, &x->opts, x->pn, x->pl_, x->flags, &nf, first);
    out->places = calloc(x->n_places, sizeof *out->places);
    if (!out->places)
        return QR_ENOMEM;
    double total = 0;
    for (size_t i = 0; i < x->n_places; i++) {
        const flag_t *f = &first[i];
        for (size_t j = 0; j < nf; j++)
            if (x->flags[j].place == i)
                f = &x->flags[j];
        qr_row_pm_place *p = &out->places[i];
        const place_def *d = &x->pl[i];
        snprintf(p->kind, sizeof p->kind, "%s", place_kinds[d->kind]);
        place_name(x, d, p->name, sizeof p->name);
        p->index = d->index;
        p->probes = f->n;
        p->lost = f->l;
        p->rate = f->n ? f->rate : NAN;
        p->rest_rate = f->rest;
        p->llr = f->llr;
        for (size_t j = 0; j < nf; j++)
            if (x->flags[j].place == i)
                p->flagged = (uint32_t)j + 1;
        suspects(x, d);
        p->suspects = (uint32_t)x->n_list;
    }
    if (latency(x, out))
        return QR_ENOMEM;
    for (size_t j = 0; j < nf; j++) {
        suspects(x, &x->pl[x->flags[j].place]);
        total += (double)x->n_list;
    }
    s->flagged = (uint32_t)nf;
    s->mean_suspects = nf ? total / (double)nf : NAN;
    /* no fault known here: of what was flagged nothing is known right (pingmesh_score.h) */
    s->precision = nf ? 0.0 : NAN;
    s->recall = NAN;
    /* only places that were probed are listed */
    size_t kept = 0;
    for (size_t i = 0; i < x->n_places; i++)
        if (out->places[i].probes)
            out->places[kept++] = out->places[i];
    out->n_places = kept;
    qsort(out->places, kept, sizeof *out->places, cmp_place);
    return QR_OK;
}

/* The rule on the first x->upto[step] scored probes (by send time): flags into x->flags. */
static size_t rule_at(ctx *x, size_t step)
{
    memset(x->pn, 0, x->n_pairs * sizeof *x->pn);
    memset(x->pl_, 0, x->n_pairs * sizeof *x->pl_);
    for (size_t i = 0; i < x->upto[step]; i++) {
        const qr_row_probe_obs *p = &x->pr[i];
        x->pn[p->pair]++;
        x->pl_[p->pair] += !(p->rtt_ns >= 0 && p->rtt_ns <= x->timeout);
    }
    size_t n;
    rule(x, &x->opts, x->pn, x->pl_, x->flags, &n, NULL);
    return n;
}

/* The curve: the rule on the first N scored probes, about 200 steps (probe numbers are in send
 * order). */
static int curve(ctx *x, qr_pingmesh_result *out)
{
    size_t steps = x->n_scored < 200 ? x->n_scored : 200;
    out->curve = calloc(steps ? steps : 1, sizeof *out->curve);
    x->upto = calloc(steps ? steps : 1, sizeof *x->upto);
    if (!out->curve || !x->upto)
        return QR_ENOMEM;
    for (size_t j = 1; j <= steps; j++)
        x->upto[j - 1] = (x->n_scored * j + steps - 1) / steps;
    for (size_t j = 0; j < steps; j++) {
        qr_row_pm_curve *cv = &out->curve[j];
        cv->probes = x->upto[j];
        cv->time_ns = x->pr[x->upto[j] - 1].sent_ns + x->timeout;
        cv->flagged = (uint32_t)rule_at(x, j);
    }
    out->n_curve = steps;
    out->summary.detect_after = 0;
    out->summary.detect_after_ns = -1;
    return QR_OK;
}

int qr_pingmesh_run(const qr_probe_log *log, const qr_pingmesh_opts *o, qr_pingmesh_result *out,
                    char *errbuf)
{
    memset(out, 0, sizeof *out);
    out->opts = *o;
    keyed *kv = NULL;
    int64_t *sorted = NULL, *p50 = NULL, *p99 = NULL;
    flag_t *first = NULL;
    size_t np = log->n_probes, nkv = 0;
    ctx *x = calloc(1, sizeof *x);
    if (!x)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    out->ctx = x;
    x->cfg = *qr_scenario_config(log->scenario);
    x->c = &x->cfg;
    x->opts = *o;
    int rc = qr_topology_of_config(&x->t, x->c);
    if (rc) {
        rc = qri_err(errbuf, QR_EFORMAT, "%s: its scenario's topology is not valid", log->path);
        goto done;
    }
    x->hosts = qr_topology_hosts(x->t);
    x->racks = qr_pingmesh_racks(x->t);
    x->pods = qr_pingmesh_pods(x->t);
    x->half = qr_topology_switches(x->t) > 1 ? qr_topology_ports(x->t, 0) / 2 : 0;
    x->timeout = x->c->pingmesh.timeout_ns;
    uint32_t links = qr_topology_links(x->t);
    x->stamp = calloc(links, sizeof *x->stamp);
    x->list = malloc(links * sizeof *x->list);
    x->pr = malloc((np ? np : 1) * sizeof *x->pr);
    if (!x->stamp || !x->list || !x->pr ||
        qr_pingmesh_plan(x->t, (uint32_t)x->c->pingmesh.servers, &x->plan, &x->n_pairs) ||
        build_places(x)) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    progress(o, "reading the probes");
    qr_row_pm_summary *s = &out->summary;
    s->interval_ns = x->c->pingmesh.interval_ns;
    s->timeout_ns = x->timeout;
    s->size = (uint32_t)x->c->pingmesh.size_bytes;
    s->pairs = (uint32_t)x->n_pairs;
    size_t cells = (size_t)x->racks * x->racks, nk = x->n_pairs > cells ? x->n_pairs : cells;
    x->pn = calloc(x->n_pairs ? x->n_pairs : 1, sizeof *x->pn);
    x->pl_ = calloc(x->n_pairs ? x->n_pairs : 1, sizeof *x->pl_);
    x->flags = malloc(x->n_places * sizeof *x->flags);
    kv = malloc((np ? np : 1) * sizeof *kv);
    sorted = malloc((np ? np : 1) * sizeof *sorted);
    out->pairs = calloc(x->n_pairs ? x->n_pairs : 1, sizeof *out->pairs);
    out->racks = calloc(cells ? cells : 1, sizeof *out->racks);
    p50 = malloc(nk * sizeof *p50);
    p99 = malloc(nk * sizeof *p99);
    first = calloc(x->n_places, sizeof *first);
    if (!x->pn || !x->pl_ || !x->flags || !kv || !sorted || !out->pairs || !out->racks || !p50 ||
        !p99 || !first) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    out->n_pairs = x->n_pairs;
    out->n_racks = x->racks;
    if ((rc = count_probes(x, log, out, kv, &nkv, errbuf)))
        goto done;
    matrices(x, out, kv, nkv, sorted, p50, p99);
    qr_pingmesh_connects(log, o->syn_rto_ns, &out->summary);
    progress(o, "running the detection rule");
    if (places(x, out, first)) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    progress(o, "the black-hole rule");
    if ((rc =
             qr_pingmesh_blackholes(out->pairs, out->n_pairs, x->t, o, &out->bholes, &out->n_bholes,
                                    &out->bh_symptom_pairs, &out->bh_tied, errbuf)))
        goto done;
    progress(o, "the detection curve");
    if (curve(x, out)) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    out->opts.window_ns = o->window_ns > 0 ? o->window_ns : 1000000;
    rc = qr_pingmesh_sla(log, x->t, out->opts.window_ns, o->sla_drop, o->sla_p99_ns, &out->sla,
                         &out->n_sla, errbuf);
done:
    if (rc)
        qr_pingmesh_free(out);
    free(kv);
    free(sorted);
    free(p50);
    free(p99);
    free(first);
    return rc;
}

void qr_pingmesh_free(qr_pingmesh_result *r)
{
    if (!r)
        return;
    free(r->pairs);
    free(r->racks);
    free(r->places);
    free(r->curve);
    free(r->sla);
    r->sla = NULL;
    r->n_sla = 0;
    free(r->bholes);
    r->bholes = NULL;
    r->n_bholes = 0;
    ctx_free(r->ctx);
    r->ctx = NULL;
    r->pairs = NULL;
    r->racks = NULL;
    r->places = NULL;
    r->curve = NULL;
    r->n_pairs = r->n_racks = r->n_places = r->n_curve = 0;
}

const qr_topology *qr_pingmesh_topology(const qr_pingmesh_result *r)
{
    return r->ctx ? r->ctx->t : NULL;
}

uint32_t qr_pingmesh_place_of(const qr_pingmesh_result *r, const qr_row_pm_place *row)
{
    const ctx *x = r->ctx;
    if (!x)
        return UINT32_MAX;
    for (uint32_t i = 0; i < x->n_places; i++)
        if (x->pl[i].index == row->index && !strcmp(place_kinds[x->pl[i].kind], row->kind))
            return i;
    return UINT32_MAX;
}

size_t qr_pingmesh_suspects(const qr_pingmesh_result *r, uint32_t place, const uint32_t **cables)
{
    ctx *x = r->ctx;
    if (!x || place >= x->n_places)
        return 0;
    suspects(x, &x->pl[place]);
    *cables = x->list;
    return x->n_list;
}

size_t qr_pingmesh_curve_flags(const qr_pingmesh_result *r, size_t step, uint32_t *places,
                               size_t max)
{
    ctx *x = r->ctx;
    if (!x || step >= r->n_curve)
        return 0;
    size_t n = rule_at(x, step);
    if (n > max)
        n = max;
    for (size_t i = 0; i < n; i++)
        places[i] = x->flags[i].place;
    return n;
}

int qr_pingmesh_write(const char *path, const qr_scenario *s, const char *recording_id,
                      const qr_pingmesh_result *r, char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay pingmesh", recording_id, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "alpha", r->opts.alpha, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "ratio", r->opts.ratio, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "racks", r->n_racks, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/pairs", &qr_schema_pm_pair, r->pairs, r->n_pairs, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/racks", &qr_schema_pm_rack, r->racks, r->n_racks * r->n_racks,
                             errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/places", &qr_schema_pm_place, r->places, r->n_places, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/curve", &qr_schema_pm_curve, r->curve, r->n_curve, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/summary", &qr_schema_pm_summary, &r->summary, 1, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/sla", &qr_schema_pm_sla, r->sla, r->n_sla, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "sla_window_ns", r->opts.window_ns, errbuf));
    QRI_TRY(
        qr_h5_write_rows(f, "/blackholes", &qr_schema_pm_bhole, r->bholes, r->n_bholes, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/blackholes", "bh_pair", r->opts.bh_pair, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/blackholes", "bh_tor", r->opts.bh_tor, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/blackholes", "bh_pod", r->opts.bh_pod, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/blackholes", "symptom_pairs", r->bh_symptom_pairs, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/blackholes", "tied", (uint64_t)r->bh_tied, errbuf));
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}
