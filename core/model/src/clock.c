#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/random.h"

int qr_clock_offsets(uint64_t seed, int64_t max_offset_ns, size_t n_hosts, int64_t *out)
{
    if (max_offset_ns < 0 || (!out && n_hosts))
        return QR_EINVAL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return QR_ENOMEM;
    for (size_t h = 0; h < n_hosts; h++) {
        /* one stream per host, so a host's offset does not depend on how many hosts there are */
        gsl_rng_set(r, (unsigned long)qr_seed_derive(seed, "clock", h));
        if ((uint64_t)max_offset_ns < gsl_rng_max(r))
            out[h] = (int64_t)gsl_rng_uniform_int(r, (unsigned long)max_offset_ns + 1);
        else
            out[h] = (int64_t)floor(gsl_rng_uniform(r) * ((double)max_offset_ns + 1.0));
    }
    gsl_rng_free(r);
    return QR_OK;
}

struct qr_proc_delay {
    gsl_rng *rng;
    int64_t mean_ns, sd_ns;
};

int qr_proc_delay_create(qr_proc_delay **out, uint64_t seed, uint64_t host, uint64_t replay,
                         int64_t mean_ns, int64_t sd_ns)
{
    if (!out || mean_ns < 0 || sd_ns < 0)
        return QR_EINVAL;
    qr_proc_delay *d = calloc(1, sizeof *d);
    if (!d)
        return QR_ENOMEM;
    d->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!d->rng) {
        free(d);
        return QR_ENOMEM;
    }
    gsl_rng_set(d->rng, (unsigned long)qr_seed_derive(seed ^ (replay * 0x9e3779b97f4a7c15ULL),
                                                      "host.proc_delay", host));
    d->mean_ns = mean_ns;
    d->sd_ns = sd_ns;
    *out = d;
    return QR_OK;
}

void qr_proc_delay_destroy(qr_proc_delay *d)
{
    if (!d)
        return;
    gsl_rng_free(d->rng);
    free(d);
}

int64_t qr_proc_delay_next(qr_proc_delay *d)
{
    if (d->sd_ns == 0)
        return d->mean_ns;
    double x = (double)d->mean_ns + gsl_ran_gaussian(d->rng, (double)d->sd_ns);
    return x <= 0 ? 0 : (int64_t)llround(x);
}

/* Weighted least squares x_b - x_a ~= d for every pair, per connected component, one host fixed
 * at 0: the normal equations L x = r (L the weighted graph Laplacian) by conjugate gradients with
 * the diagonal as preconditioner. */
struct reconcile {
    size_t n;
    const qr_owd_pair *pairs;
    const double *w;   /* per pair */
    size_t *deg, *adj; /* CSR: the pairs of host h are adj[deg[h] .. deg[h + 1]) */
    uint32_t *comp, *ref;
};

static int pinned(const struct reconcile *g, size_t h)
{
    return g->ref[g->comp[h]] == h;
}

/* out = L v over the free hosts (pinned rows and columns are 0) */
static void laplace(const struct reconcile *g, const double *v, double *out)
{
    for (size_t h = 0; h < g->n; h++) {
        double s = 0;
        if (!pinned(g, h))
            for (size_t k = g->deg[h]; k < g->deg[h + 1]; k++) {
                const qr_owd_pair *e = &g->pairs[g->adj[k]];
                uint32_t o = e->a == h ? e->b : e->a;
                s += g->w[g->adj[k]] * (v[h] - (pinned(g, o) ? 0.0 : v[o]));
            }
        out[h] = s;
    }
}

/* Components by depth-first search from the smallest host; each one's reference. */
static void components(struct reconcile *g, uint32_t reference, uint32_t *stack)
{
    for (size_t h = 0; h < g->n; h++)
        g->comp[h] = UINT32_MAX;
    uint32_t n_comp = 0;
    for (size_t s = 0; s < g->n; s++) {
        if (g->comp[s] != UINT32_MAX)
            continue;
        size_t top = 0;
        stack[top++] = (uint32_t)s;
        g->comp[s] = n_comp;
        g->ref[n_comp] = (uint32_t)s;
        while (top) {
            uint32_t h = stack[--top];
            if (h == reference)
                g->ref[n_comp] = reference;
            for (size_t k = g->deg[h]; k < g->deg[h + 1]; k++) {
                const qr_owd_pair *e = &g->pairs[g->adj[k]];
                uint32_t o = e->a == h ? e->b : e->a;
                if (g->comp[o] == UINT32_MAX) {
                    g->comp[o] = n_comp;
                    stack[top++] = o;
                }
            }
        }
        n_comp++;
    }
}

/* A heap entry of the certain-interval search: ordered by bound, then host (the order a scan for
 * the smallest bound, lowest host first, would take). */
struct heap_ent {
    double bound;
    uint32_t host;
};

static int heap_less(const struct heap_ent *x, const struct heap_ent *y)
{
    return x->bound < y->bound || (x->bound == y->bound && x->host < y->host);
}

static void heap_push(struct heap_ent *h, size_t *n, struct heap_ent e)
{
    size_t i = (*n)++;
    while (i > 0 && heap_less(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static struct heap_ent heap_pop(struct heap_ent *h, size_t *n)
{
    struct heap_ent top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap_less(&h[c + 1], &h[c]))
            c++;
        if (!heap_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

/* A time in whole ns: rounded to the nearest, NaN as 0, within +-2^61 (beyond that no clock is
 * believable). */
static int64_t round_ns(double v)
{
    const double lim = 2305843009213693952.0; /* 2^61 */
    if (v != v)
        return 0;
    return llround(v > lim ? lim : v < -lim ? -lim : v);
}

/* Each host's certain interval (qr_clock_estimate path_ns, bound_ns) from its component's
 * reference, and its estimate x[h] kept inside, rounded into out. d[i]: pair i's measured
 * difference. */
static int certain_intervals(const struct reconcile *g, const qr_owd_pair *pairs, size_t n_pairs,
                             const double *d, double *x, qr_clock_estimate *out)
{
    size_t n = g->n, cap = n + 2 * n_pairs, top = 0;
    double *bound = malloc((n ? n : 1) * sizeof *bound), *path = malloc((n ? n : 1) * sizeof *path);
    uint8_t *done = calloc(n ? n : 1, 1);
    struct heap_ent *heap = malloc((cap ? cap : 1) * sizeof *heap);
    if (!bound || !path || !done || !heap) {
        free(bound), free(path), free(done), free(heap);
        return QR_ENOMEM;
    }
    for (size_t h = 0; h < n; h++) {
        bound[h] = pinned(g, h) ? 0.0 : INFINITY;
        path[h] = 0.0;
        if (pinned(g, h))
            heap_push(heap, &top, (struct heap_ent){0.0, (uint32_t)h});
    }
    while (top) {
        uint32_t u = heap_pop(heap, &top).host;
        if (done[u])
            continue; /* a stale entry: u was reached more cheaply */
        done[u] = 1;
        for (size_t k = g->deg[u]; k < g->deg[u + 1]; k++) {
            size_t i = g->adj[k];
            const qr_owd_pair *e = &pairs[i];
            uint32_t o = e->a == u ? e->b : e->a;
            double b = fabs((double)e->min_ab_ns + (double)e->min_ba_ns) / 2.0;
            if (!done[o] && bound[u] + b < bound[o]) {
                bound[o] = bound[u] + b;
                path[o] = path[u] + (e->b == o ? d[i] : -d[i]);
                heap_push(heap, &top, (struct heap_ent){bound[o], o});
            }
        }
    }
    for (size_t h = 0; h < n; h++) {
        if (isfinite(bound[h])) {
            if (x[h] < path[h] - bound[h])
                x[h] = path[h] - bound[h];
            if (x[h] > path[h] + bound[h])
                x[h] = path[h] + bound[h];
            out[h].path_ns = round_ns(path[h]);
            out[h].bound_ns = round_ns(ceil(bound[h] + fabs((double)out[h].path_ns - path[h])));
            out[h].certain = out[h].pairs && fabs(path[h]) > 3.0 * bound[h];
        }
        out[h].offset_ns = round_ns(x[h]);
    }
    free(bound), free(path), free(done), free(heap);
    return QR_OK;
}

int64_t qr_clock_correction(const qr_clock_estimate *e)
{
    if (!e || !e->pairs || !e->certain)
        return 0;
    return e->offset_ns;
}

int qr_clock_reconcile(size_t n_hosts, const qr_owd_pair *pairs, size_t n_pairs, uint32_t reference,
                       qr_clock_estimate *out)
{
    if (!out || (!pairs && n_pairs) || (n_hosts && reference >= n_hosts) || n_hosts >= UINT32_MAX)
        return QR_EINVAL;
    for (size_t i = 0; i < n_pairs; i++)
        if (pairs[i].a >= n_hosts || pairs[i].b >= n_hosts || pairs[i].a == pairs[i].b)
            return QR_EINVAL;
    size_t n = n_hosts, m = n ? n : 1;
    double *w = malloc((n_pairs ? n_pairs : 1) * sizeof *w);
    struct reconcile g = {n,
                          pairs,
                          w,
                          calloc(n + 1, sizeof(size_t)),
                          malloc((2 * n_pairs + 1) * sizeof(size_t)),
                          malloc(m * sizeof(uint32_t)),
                          malloc(m * sizeof(uint32_t))};
    uint32_t *stack = malloc(m * sizeof *stack);
    size_t *fill = calloc(m, sizeof *fill);
    double *d = malloc((n_pairs ? n_pairs : 1) * sizeof *d), *x = calloc(m, sizeof *x);
    double *r = calloc(m, sizeof *r), *p = calloc(m, sizeof *p), *q = calloc(m, sizeof *q);
    double *z = calloc(m, sizeof *z), *diag = calloc(m, sizeof *diag);
    int rc = QR_ENOMEM;
    if (!w || !g.deg || !g.adj || !g.comp || !g.ref || !stack || !fill || !d || !x || !r || !p ||
        !q || !z || !diag)
        goto done;
    for (size_t i = 0; i < n_pairs; i++) {
        g.deg[pairs[i].a + 1]++;
        g.deg[pairs[i].b + 1]++;
        d[i] = ((double)pairs[i].min_ab_ns - (double)pairs[i].min_ba_ns) / 2.0;
        /* the pair's difference is off by (q_ab - q_ba) / 2, at most half its round-trip excess */
        double bound = fabs((double)pairs[i].min_ab_ns + (double)pairs[i].min_ba_ns) / 2.0;
        w[i] = 1.0 / ((bound + QR_CLOCK_FLOOR_NS) * (bound + QR_CLOCK_FLOOR_NS));
        diag[pairs[i].a] += w[i];
        diag[pairs[i].b] += w[i];
    }
    for (size_t h = 0; h < n; h++)
        g.deg[h + 1] += g.deg[h];
    for (size_t i = 0; i < n_pairs; i++) {
        g.adj[g.deg[pairs[i].a] + fill[pairs[i].a]++] = i;
        g.adj[g.deg[pairs[i].b] + fill[pairs[i].b]++] = i;
    }
    components(&g, reference, stack);
    /* right-hand side, 0 at the pinned hosts */
    for (size_t i = 0; i < n_pairs; i++) {
        r[pairs[i].b] += w[i] * d[i];
        r[pairs[i].a] -= w[i] * d[i];
    }
    double rz = 0, rr0 = 0;
    for (size_t h = 0; h < n; h++) {
        if (pinned(&g, h) || diag[h] <= 0)
            r[h] = 0;
        z[h] = diag[h] > 0 ? r[h] / diag[h] : 0;
        p[h] = z[h];
        rz += r[h] * z[h];
        rr0 += r[h] * r[h];
    }
    double stop = 1e-26 * (rz > 0 ? rz : 1);
    for (size_t it = 0; it < 10 * n + 10 && rz > stop && rr0 > 0; it++) {
        laplace(&g, p, q);
        double pq = 0;
        for (size_t h = 0; h < n; h++)
            pq += p[h] * q[h];
        if (pq <= 0)
            break;
        double alpha = rz / pq, rz2 = 0;
        for (size_t h = 0; h < n; h++) {
            x[h] += alpha * p[h];
            r[h] -= alpha * q[h];
            z[h] = diag[h] > 0 ? r[h] / diag[h] : 0;
            rz2 += r[h] * z[h];
        }
        for (size_t h = 0; h < n; h++)
            p[h] = z[h] + rz2 / rz * p[h];
        rz = rz2;
    }
    for (size_t h = 0; h < n; h++) {
        double sq = 0, sw = 0;
        for (size_t k = g.deg[h]; k < g.deg[h + 1]; k++) {
            const qr_owd_pair *e = &pairs[g.adj[k]];
            double f = x[e->b] - x[e->a] - d[g.adj[k]];
            sq += w[g.adj[k]] * f * f;
            sw += w[g.adj[k]];
        }
        size_t deg = g.deg[h + 1] - g.deg[h];
        out[h] = (qr_clock_estimate){
            0, deg ? round_ns(sqrt(sq / sw)) : 0, g.ref[g.comp[h]], (uint32_t)deg, 0, 0, 0};
    }
    /* the certain interval: the chain of pairs from each component's reference with the smallest
     * sum of bounds (Dijkstra over a binary heap: fat trees reach 65536 hosts) */
    if ((rc = certain_intervals(&g, pairs, n_pairs, d, x, out)) != QR_OK)
        goto done;
    rc = QR_OK;
done:
    free(g.deg), free(g.adj), free(g.comp), free(g.ref), free(stack), free(fill);
    free(d), free(x), free(r), free(p), free(q), free(z), free(diag), free(w);
    return rc;
}
