/* Causal paths: the hosts and links the patterns' delays name slow (paths.h).
 *
 * A host is compared with the hosts in the same role. A hop's role is its chain of hops from the
 * root with hosts renamed in order of appearance (the app tier's call to the cache in a request
 * from any client through any front end looks alike, whatever the rest of the tree); a host's role
 * is the one where it has the most node delays. Hosts that appear together in most of the
 * requests of either do different jobs in one request (the cache and, in parallel, the audit log)
 * and are not compared. Among the
 * hosts of one role, a host whose mean node delay there is slow_node times the median of the
 * others' is named slow. A link (two hosts, both ways) is named slow when the
 * median of its network delays exceeds the median over every link by slow_link_ns and by half
 * again. Only links and hosts with at least QR_PATHS_MIN_DELAYS delays are judged. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "paths_internal.h"
#include "qreplay/error.h"

#define QR_PATHS_MIN_DELAYS 5

struct member {
    uint32_t host;
    double sum;
    uint64_t n;
};

struct group {
    struct member *m;
    size_t n, cap;
};

struct hostacc {
    const struct group *role; /* where it has the most delays */
    uint64_t role_n;
    double mean, base;
    uint64_t n;
};

struct samples {
    int64_t *v;
    size_t n, cap;
};

static void free_group(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k1;
    (void)k2;
    (void)ctx;
    struct group *g = v;
    free(g->m);
    free(g);
}

static void free_samples(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k1;
    (void)k2;
    (void)ctx;
    struct samples *s = v;
    free(s->v);
    free(s);
}

static int add_member(qri_map *groups, uint64_t k1, uint64_t k2, uint32_t host, const int64_t *d,
                      uint64_t n)
{
    struct group *g = qri_map_get(groups, k1, k2);
    if (!g) {
        g = calloc(1, sizeof *g);
        if (!g || qri_map_put(groups, k1, k2, g)) {
            free(g);
            return QR_ENOMEM;
        }
    }
    size_t i = 0;
    while (i < g->n && g->m[i].host != host)
        i++;
    if (i == g->n) {
        if (qri_grow((void **)&g->m, &g->cap, g->n, sizeof *g->m, 4))
            return QR_ENOMEM;
        g->m[g->n++] = (struct member){host, 0, 0};
    }
    for (uint64_t k = 0; k < n; k++)
        g->m[i].sum += (double)d[k];
    g->m[i].n += n;
    return QR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct judge {
    struct hostacc *acc;
    const qri_map *together; /* (a, b), a < b: the requests (best instances) with both */
    const uint64_t *seen;    /* per host: the requests with it */
    int failed;
};

static int together(const struct judge *j, uint32_t a, uint32_t b)
{
    uint64_t both = (uint64_t)(uintptr_t)qri_map_get(j->together, a < b ? a : b, a < b ? b : a);
    uint64_t fewer = j->seen[a] < j->seen[b] ? j->seen[a] : j->seen[b];
    return 2 * both >= fewer && both;
}

static void find_roles(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k1;
    (void)k2;
    const struct group *g = v;
    struct judge *j = ctx;
    for (size_t i = 0; i < g->n; i++) {
        struct hostacc *a = &j->acc[g->m[i].host];
        if (g->m[i].n > a->role_n) {
            a->role = g;
            a->role_n = g->m[i].n;
        }
    }
}

static void judge_group(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k1;
    (void)k2;
    const struct group *g = v;
    struct judge *j = ctx;
    if (g->n < 2 || j->failed)
        return;
    double *others = malloc(g->n * sizeof *others);
    if (!others) {
        j->failed = 1;
        return;
    }
    for (size_t i = 0; i < g->n; i++) {
        if (j->acc[g->m[i].host].role != g)
            continue;
        size_t k = 0;
        for (size_t o = 0; o < g->n; o++)
            if (o != i && j->acc[g->m[o].host].role == g &&
                !together(j, g->m[i].host, g->m[o].host))
                others[k++] = g->m[o].sum / (double)g->m[o].n;
        if (!k)
            continue;
        struct hostacc *a = &j->acc[g->m[i].host];
        a->base = median(others, k);
        a->mean = g->m[i].sum / (double)g->m[i].n;
        a->n = g->m[i].n;
    }
    free(others);
}

static int push_suspect(qr_paths *p, size_t *cap, qr_paths_suspect s)
{
    if (qri_grow((void **)&p->suspects, cap, p->n_suspects, sizeof s, 8))
        return QR_ENOMEM;
    p->suspects[p->n_suspects++] = s;
    return QR_OK;
}

/* Count pattern pt's requests for each host of it, and each pair of its hosts. */
static int count_together(const qr_paths_pattern *pt, qri_map *tog, uint64_t *seen)
{
    if (!pt->count)
        return QR_OK;
    for (uint32_t a = 0; a < pt->n_hops; a++) {
        uint32_t x = pt->hops[a].src, first = 1;
        for (uint32_t b = 0; b < a && first; b++)
            first = pt->hops[b].src != x;
        if (!first)
            continue; /* each host once per pattern */
        seen[x] += pt->count;
        for (uint32_t b = 0; b < a; b++) {
            uint32_t y = pt->hops[b].src, once = 1;
            for (uint32_t c = 0; c < b && once; c++)
                once = pt->hops[c].src != y;
            if (!once || y == x)
                continue;
            void **slot = qri_map_slot(tog, x < y ? x : y, x < y ? y : x);
            if (slot)
                *slot = (void *)((uintptr_t)*slot + pt->count);
            else if (qri_map_put(tog, x < y ? x : y, x < y ? y : x, (void *)(uintptr_t)pt->count))
                return QR_ENOMEM;
        }
    }
    return QR_OK;
}

/* Hop h's role: its chain from the root, hosts renamed in order of appearance, hashed. */
static void role_key(const qr_paths_pattern *pt, uint32_t h, uint64_t *k1, uint64_t *k2)
{
    uint32_t chain[64], n = 0, seen[130], n_seen = 0;
    for (int32_t q = (int32_t)h; q >= 0 && n < 64; q = pt->hops[q].parent)
        chain[n++] = (uint32_t)q;
    uint64_t a = 1469598103934665603ull, b = 5381;
    while (n--) {
        uint32_t ends[2] = {pt->hops[chain[n]].src, pt->hops[chain[n]].dst};
        for (int e = 0; e < 2; e++) {
            uint32_t i = 0;
            while (i < n_seen && seen[i] != ends[e])
                i++;
            if (i == n_seen)
                seen[n_seen++] = ends[e];
            a = (a ^ (i + 1)) * 1099511628211ull;
            b = b * 33 + i + 1;
        }
    }
    *k1 = a;
    *k2 = b;
}

static int slow_hosts(qr_paths *p, size_t *cap)
{
    qri_map groups;
    if (qri_map_init(&groups))
        return QR_ENOMEM;
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < p->n_pats; i++)
        for (uint32_t h = 0; !rc && h < p->out[i].n_hops; h++) {
            const qr_paths_hop *hop = &p->out[i].hops[h];
            uint64_t k1, k2;
            if (hop->node_n) {
                role_key(&p->out[i], h, &k1, &k2);
                rc = add_member(&groups, k1, k2, hop->src, hop->node_ns, hop->node_n);
            }
        }
    qri_map tog;
    int have_tog = !qri_map_init(&tog);
    if (!have_tog)
        rc = QR_ENOMEM;
    uint64_t *seen = calloc(p->n_hosts ? p->n_hosts : 1, sizeof *seen);
    if (!rc && !seen)
        rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < p->n_pats; i++)
        rc = count_together(&p->out[i], &tog, seen);
    struct judge j = {calloc(p->n_hosts ? p->n_hosts : 1, sizeof *j.acc), &tog, seen, 0};
    if (!rc && !j.acc)
        rc = QR_ENOMEM;
    if (!rc) {
        qri_map_foreach(&groups, find_roles, &j);
        qri_map_foreach(&groups, judge_group, &j);
    }
    if (!rc && j.failed)
        rc = QR_ENOMEM;
    for (uint32_t h = 0; !rc && h < p->n_hosts; h++) {
        const struct hostacc *a = &j.acc[h];
        if (a->n < QR_PATHS_MIN_DELAYS || !(a->mean >= p->o.slow_node * a->base))
            continue;
        rc = push_suspect(p, cap, (qr_paths_suspect){0, h, h, a->mean, a->base, a->n});
    }
    free(j.acc);
    free(seen);
    if (have_tog)
        qri_map_free(&tog);
    qri_map_foreach(&groups, free_group, NULL);
    qri_map_free(&groups);
    return rc;
}

struct linkjudge {
    qr_paths *p;
    double *medians;
    size_t n;
    int failed;
    int phase; /* 0: medians; 1: name */
    double global;
    size_t *cap;
};

static void judge_link(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    struct samples *s = v;
    struct linkjudge *j = ctx;
    if (s->n < QR_PATHS_MIN_DELAYS || j->failed)
        return;
    double *d = malloc(s->n * sizeof *d);
    if (!d) {
        j->failed = 1;
        return;
    }
    for (size_t i = 0; i < s->n; i++)
        d[i] = (double)s->v[i];
    double med = median(d, s->n);
    free(d);
    if (j->phase == 0) {
        j->medians[j->n++] = med;
        return;
    }
    if (med > j->global + (double)j->p->o.slow_link_ns && med > 1.5 * j->global &&
        push_suspect(j->p, j->cap,
                     (qr_paths_suspect){1, (uint32_t)k1, (uint32_t)k2, med, j->global, s->n}))
        j->failed = 1;
}

static int slow_links(qr_paths *p, size_t *cap)
{
    qri_map links;
    if (qri_map_init(&links))
        return QR_ENOMEM;
    int rc = QR_OK;
    size_t n_links = 0;
    for (size_t i = 0; !rc && i < p->n_pats; i++)
        for (uint32_t h = 0; !rc && h < p->out[i].n_hops; h++) {
            const qr_paths_hop *hop = &p->out[i].hops[h];
            uint32_t a = hop->src < hop->dst ? hop->src : hop->dst, b = hop->src ^ hop->dst ^ a;
            struct samples *s = qri_map_get(&links, a, b);
            if (!s) {
                s = calloc(1, sizeof *s);
                if (!s || qri_map_put(&links, a, b, s)) {
                    free(s);
                    rc = QR_ENOMEM;
                    break;
                }
                n_links++;
            }
            if (qri_reserve((void **)&s->v, &s->cap, s->n + hop->net_n, sizeof *s->v, 16))
                rc = QR_ENOMEM;
            else if (hop->net_n) {
                memcpy(s->v + s->n, hop->net_ns, hop->net_n * sizeof *s->v);
                s->n += hop->net_n;
            }
        }
    struct linkjudge j = {p, calloc(n_links ? n_links : 1, sizeof(double)), 0, 0, 0, 0, cap};
    if (!rc && !j.medians)
        rc = QR_ENOMEM;
    if (!rc)
        qri_map_foreach(&links, judge_link, &j);
    if (!rc && j.n >= 2 && !j.failed) {
        j.global = median(j.medians, j.n);
        j.phase = 1;
        qri_map_foreach(&links, judge_link, &j);
    }
    if (!rc && j.failed)
        rc = QR_ENOMEM;
    free(j.medians);
    qri_map_foreach(&links, free_samples, NULL);
    qri_map_free(&links);
    return rc;
}

static int by_excess(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const qr_paths_suspect *x = a, *y = b;
    double ex = x->delay_ns - x->baseline_ns, ey = y->delay_ns - y->baseline_ns;
    if (ex != ey)
        return ex > ey ? -1 : 1;
    if (x->link != y->link)
        return x->link < y->link ? -1 : 1;
    return x->a != y->a ? (x->a < y->a ? -1 : 1) : x->b < y->b ? -1 : x->b > y->b;
}

int qri_paths_suspects(qr_paths *p)
{
    size_t cap = 0;
    int rc = slow_hosts(p, &cap);
    if (!rc)
        rc = slow_links(p, &cap);
    if (!rc)
        rc = qri_sort(p->suspects, p->n_suspects, sizeof *p->suspects, by_excess, NULL);
    return rc;
}
