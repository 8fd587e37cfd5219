/* Causal paths: Project 5's convolution, the other comparator of message linking (paths.h).
 *
 * At each host B, every stream of messages into B from one sender X and every stream out of B to
 * one receiver C are signals of impulses (arrival times at B, send times at B: one clock). Their
 * cross-correlation over lags in [0, cutoff], in bins of QR_PATHS_CONV_BIN_NS, counts the pairs
 * (in, out) whose delay falls in each bin. Where X's messages cause B's to C, the count stands out
 * at the causal delay: a bin whose count exceeds what independent streams give (n_in n_out bin / T
 * over the trace's span T) by QR_PATHS_CONV_Z standard deviations (Poisson) is a causal edge
 * X->B->C, the highest such bin its peak, and its extent the bins around the peak above the
 * independent count (gaps of up to QR_PATHS_CONV_GAP bins). Per message: a message B->C takes as
 * its parent the message into B, over every edge into B->C, whose delay to it lies within the
 * edge's extent and nearest its peak; none: spontaneous. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "paths_internal.h"
#include "qreplay/error.h"

#define QR_PATHS_CONV_BIN_NS 10000
#define QR_PATHS_CONV_Z 4.0
#define QR_PATHS_CONV_GAP 2

struct edge {
    uint32_t x, c;  /* from sender x into host b, out of b to receiver c */
    int64_t peak;   /* the delay at the peak bin's middle */
    int64_t lo, hi; /* the delays of the bins around the peak that stand out at all */
};

/* Add one to the count at (k1, k2). Returns 0 or QR_ENOMEM. */
static int bump(qri_map *m, uint64_t k1, uint64_t k2)
{
    void **s = qri_map_slot(m, k1, k2);
    if (s) {
        *s = (void *)((uintptr_t)*s + 1);
        return QR_OK;
    }
    return qri_map_put(m, k1, k2, (void *)1) ? QR_ENOMEM : QR_OK;
}

/* x into the list v of distinct values. Returns 0 or QR_ENOMEM. */
static int distinct_add(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    for (size_t k = 0; k < *n; k++)
        if ((*v)[k] == x)
            return QR_OK;
    if (qri_grow((void **)v, cap, *n, sizeof **v, 8))
        return QR_ENOMEM;
    (*v)[(*n)++] = x;
    return QR_OK;
}

/* The bins around the peak at that stand out at all (above expect), gaps of up to
 * QR_PATHS_CONV_GAP bins allowed: ext[0] .. ext[1]. */
static void extent(const qri_map *counts, uint64_t key, int64_t at, int64_t bins, double expect,
                   int64_t ext[2])
{
    ext[0] = ext[1] = at;
    for (int side = 0; side < 2; side++)
        for (int64_t bin = at, gap = 0; gap <= QR_PATHS_CONV_GAP;) {
            bin += side ? 1 : -1;
            if (bin < 0 || bin >= bins)
                break;
            if ((double)(uintptr_t)qri_map_get(counts, key, (uint64_t)bin) > expect) {
                ext[side] = bin;
                gap = 0;
            } else {
                gap++;
            }
        }
}

/* The edges of one host: its arrivals in[0 .. n_in) by time against its sends out[0 .. n_out) by
 * time, over the span of its own clock they cover. */
static int edges_of(const qr_paths *p, const uint64_t *in, size_t n_in, const uint64_t *out,
                    size_t n_out, struct edge **e, size_t *n_e, size_t *cap)
{
    if (!n_in || !n_out)
        return QR_OK;
    int64_t first = p->m[in[0]].recv_ns, last = p->m[in[n_in - 1]].recv_ns;
    first = p->m[out[0]].send_ns < first ? p->m[out[0]].send_ns : first;
    last = p->m[out[n_out - 1]].send_ns > last ? p->m[out[n_out - 1]].send_ns : last;
    double span = (double)(last - first);
    int64_t bins = p->o.cutoff_ns / QR_PATHS_CONV_BIN_NS + 1;
    /* counts per (sender, receiver, bin): a map from (x << 32 | c, bin) to the count */
    qri_map counts, totals_in, totals_out;
    int rc = qri_map_init(&counts) | qri_map_init(&totals_in) | qri_map_init(&totals_out)
                 ? QR_ENOMEM
                 : QR_OK;
    for (size_t i = 0; !rc && i < n_in; i++)
        rc = bump(&totals_in, p->m[in[i]].src, 0);
    for (size_t j = 0; !rc && j < n_out; j++) {
        const qr_msg *o = &p->m[out[j]];
        rc = bump(&totals_out, o->dst, 0);
        /* the arrivals within the cutoff before it (in is by time) */
        size_t lo = 0, hi = n_in;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->m[in[mid]].recv_ns <= o->send_ns)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; !rc && i-- > 0;) {
            int64_t d = o->send_ns - p->m[in[i]].recv_ns;
            if (d > p->o.cutoff_ns)
                break;
            rc = bump(&counts, (uint64_t)p->m[in[i]].src << 32 | o->dst,
                      (uint64_t)(d / QR_PATHS_CONV_BIN_NS));
        }
    }
    /* each (sender, receiver) pair: its best bin that stands out */
    uint32_t *xs = NULL, *cs = NULL;
    size_t nx = 0, nc = 0, capx = 0, capc = 0;
    for (size_t i = 0; !rc && i < n_in; i++)
        rc = distinct_add(&xs, &nx, &capx, p->m[in[i]].src);
    for (size_t j = 0; !rc && j < n_out; j++)
        rc = distinct_add(&cs, &nc, &capc, p->m[out[j]].dst);
    for (size_t a = 0; !rc && a < nx; a++)
        for (size_t z = 0; !rc && z < nc; z++) {
            double ni = (double)(uintptr_t)qri_map_get(&totals_in, xs[a], 0),
                   no = (double)(uintptr_t)qri_map_get(&totals_out, cs[z], 0);
            double expect = ni * no * QR_PATHS_CONV_BIN_NS / (span > 0 ? span : 1);
            double best = 0;
            int64_t at = -1;
            for (int64_t bin = 0; bin < bins; bin++) {
                double n = (double)(uintptr_t)qri_map_get(&counts, (uint64_t)xs[a] << 32 | cs[z],
                                                          (uint64_t)bin);
                if (n > expect + QR_PATHS_CONV_Z * sqrt(expect > 1 ? expect : 1) && n > best) {
                    best = n;
                    at = bin;
                }
            }
            if (at < 0)
                continue;
            int64_t ext[2];
            extent(&counts, (uint64_t)xs[a] << 32 | cs[z], at, bins, expect, ext);
            if (qri_grow((void **)e, cap, *n_e, sizeof **e, 8))
                rc = QR_ENOMEM;
            else
                (*e)[(*n_e)++] = (struct edge){
                    xs[a], cs[z], at * QR_PATHS_CONV_BIN_NS + QR_PATHS_CONV_BIN_NS / 2,
                    ext[0] * QR_PATHS_CONV_BIN_NS, (ext[1] + 1) * QR_PATHS_CONV_BIN_NS};
        }
    free(xs);
    free(cs);
    qri_map_free(&counts);
    qri_map_free(&totals_in);
    qri_map_free(&totals_out);
    return rc;
}

static int cmp_send(const void *a, const void *b, void *ctx)
{
    const qr_msg *m = ctx, *x = &m[*(const uint64_t *)a], *y = &m[*(const uint64_t *)b];
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->send_ns != y->send_ns)
        return x->send_ns < y->send_ns ? -1 : 1;
    return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

/* The parents of host b's sends out[0 .. n_out) from its edges and its arrivals in[0 .. n_in). */
static void assign(const qr_paths *p, const uint64_t *in, size_t n_in, const uint64_t *out,
                   size_t n_out, const struct edge *e, size_t n_e, uint64_t *parent)
{
    for (size_t j = 0; j < n_out; j++) {
        const qr_msg *o = &p->m[out[j]];
        int64_t best_err = INT64_MAX;
        for (size_t k = 0; k < n_e; k++) {
            if (e[k].c != o->dst)
                continue;
            int64_t want = o->send_ns - e[k].peak; /* where the cause should have arrived */
            int64_t first = o->send_ns - e[k].hi, last = o->send_ns - e[k].lo;
            size_t lo = 0, hi = n_in; /* the first arrival after last */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (p->m[in[mid]].recv_ns <= last)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t i = lo; i-- > 0;) {
                const qr_msg *x = &p->m[in[i]];
                if (x->recv_ns < first)
                    break;
                if (x->src != e[k].x || x->recv_ns > o->send_ns)
                    continue;
                int64_t err = llabs(x->recv_ns - want);
                if (err < best_err) {
                    best_err = err;
                    parent[out[j]] = in[i];
                }
            }
        }
    }
}

int qr_paths_conv(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf)
{
    qr_paths *p;
    int rc = qri_paths_new(&p, m, n, n_hosts, o, errbuf);
    if (rc)
        return rc;
    size_t *start = NULL, *ostart = calloc(n_hosts + 1, sizeof *ostart), n_e = 0, cap = 0, k = 0;
    uint64_t *in = NULL, *sends = malloc((n ? n : 1) * sizeof *sends),
             *parent = malloc((n ? n : 1) * sizeof *parent);
    struct edge *e = NULL;
    rc = ostart && sends && parent ? qri_paths_arrivals(p, &start, &in) : QR_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        parent[i] = QR_PATHS_ROOT;
        if (m[i].send_ns == QR_MSG_UNTRACED || (p->o.outside && p->o.outside[m[i].src]))
            continue;
        sends[k++] = i;
        ostart[m[i].src + 1]++;
    }
    for (uint32_t h = 0; !rc && h < n_hosts; h++)
        ostart[h + 1] += ostart[h];
    if (!rc)
        rc = qri_sort(sends, k, sizeof *sends, cmp_send, (void *)m);
    for (uint32_t h = 0; !rc && h < n_hosts; h++) {
        n_e = 0;
        const uint64_t *hin = in + start[h], *hout = sends + ostart[h];
        size_t ni = start[h + 1] - start[h], no = ostart[h + 1] - ostart[h];
        rc = edges_of(p, hin, ni, hout, no, &e, &n_e, &cap);
        if (!rc)
            assign(p, hin, ni, hout, no, e, n_e, parent);
    }
    free(start);
    free(in);
    free(ostart);
    free(sends);
    free(e);
    if (!rc)
        rc = qri_paths_finish(p, parent, errbuf); /* destroys p on failure */
    else
        qr_paths_destroy(p);
    free(parent);
    if (rc == QR_ENOMEM)
        return qri_err(errbuf, rc, "paths: out of memory");
    if (!rc)
        *out = p;
    return rc;
}
