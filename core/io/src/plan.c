/* The injection plan (plan.h): a recording's send times sampled, and a cursor over them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "plan_internal.h"
#include "qreplay/flowtable.h"

void qr_plan_free(qr_plan *p)
{
    if (!p)
        return;
    for (uint32_t h = 0; h < p->n_hosts; h++) {
        free(p->time[h]);
        free(p->order[h]);
    }
    free(p->n);
    free(p->time);
    free(p->order);
    free(p);
}

int qri_plan_alloc(qr_plan **out, const qr_recording *rec)
{
    *out = NULL;
    uint32_t nh = qr_recording_hosts(rec);
    qr_plan *p = calloc(1, sizeof *p);
    if (!p)
        return QR_ENOMEM;
    p->n_hosts = nh;
    p->n = calloc(nh ? nh : 1, sizeof *p->n);
    p->time = calloc(nh ? nh : 1, sizeof *p->time);
    p->order = calloc(nh ? nh : 1, sizeof *p->order);
    int rc = p->n && p->time && p->order ? QR_OK : QR_ENOMEM;
    for (uint32_t h = 0; !rc && h < nh; h++) {
        size_t n;
        qr_recording_packets(rec, h, &n);
        p->n[h] = n;
        p->time[h] = calloc(n ? n : 1, sizeof **p->time);
        p->order[h] = malloc((n ? n : 1) * sizeof **p->order);
        if (!p->time[h] || !p->order[h]) {
            rc = QR_ENOMEM;
            break;
        }
        for (size_t i = 0; i < n; i++)
            p->order[h][i] = (uint32_t)i;
    }
    if (rc) {
        qr_plan_free(p);
        return rc;
    }
    *out = p;
    return QR_OK;
}

const int64_t *qr_plan_times(const qr_plan *p, uint32_t h, size_t *n)
{
    *n = h < p->n_hosts ? p->n[h] : 0;
    return h < p->n_hosts ? p->time[h] : NULL;
}

const uint32_t *qr_plan_order(const qr_plan *p, uint32_t h)
{
    return h < p->n_hosts ? p->order[h] : NULL;
}

/* Injection order: by injection time, ties in recorded order. */
struct order_key {
    int64_t time_ns;
    uint32_t index;
};

static int cmp_order(const void *a, const void *b)
{
    const struct order_key *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sort a host's injection keys. They come in recorded order and their times are within th of
 * recorded times that rise, so they are nearly sorted: insertion sort, O(n + inversions), with a
 * budget of moves past which the rest is left to qsort. (time, index) is a total order: either
 * way the same result. */
static void sort_order(struct order_key *k, size_t n)
{
    size_t moves = 0, budget = 8 * n + 64;
    for (size_t i = 1; i < n; i++) {
        struct order_key x = k[i];
        size_t j = i;
        while (j > 0 && cmp_order(&x, &k[j - 1]) < 0) {
            k[j] = k[j - 1];
            j--;
            if (++moves > budget) {
                k[j] = x; /* still a permutation of the keys */
                qsort(k, n, sizeof *k, cmp_order);
                return;
            }
        }
        k[j] = x;
    }
}

int qri_plan_hand_over(int rc, qr_plan *p, qr_row_sample_record *o, size_t n_out,
                       const qr_sampling_stats *st, qr_plan **out, qr_sampling_stats *stats,
                       qr_row_sample_record **records, size_t *n_records, char *errbuf)
{
    if (rc) {
        free(o);
        qr_plan_free(p);
        return rc == QR_ENOMEM ? qri_err(errbuf, rc, "sampling: out of memory") : rc;
    }
    if (stats)
        *stats = *st;
    if (records) {
        *records = o;
        *n_records = n_out;
    }
    *out = p;
    return QR_OK;
}

int qri_plan_order_host(qr_plan *p, uint32_t h)
{
    size_t n = p->n[h];
    struct order_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return QR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        k[i] = (struct order_key){p->time[h][i], (uint32_t)i};
    sort_order(k, n);
    for (size_t i = 0; i < n; i++)
        p->order[h][i] = k[i].index;
    free(k);
    return QR_OK;
}

/* The per-host work arrays of qr_plan_sample, sized for the largest host. */
struct scratch {
    int64_t *times, *inferred;
    uint32_t *idx, *dirs, *count, *start;
    qr_sample_record *recs;
};

static void scratch_free(struct scratch *w)
{
    free(w->times);
    free(w->inferred);
    free(w->idx);
    free(w->dirs);
    free(w->count);
    free(w->start);
    free(w->recs);
    memset(w, 0, sizeof *w);
}

static int scratch_grow(struct scratch *w, size_t n)
{
    scratch_free(w);
    w->times = malloc(n * sizeof *w->times);
    w->inferred = malloc(n * sizeof *w->inferred);
    w->idx = malloc(n * sizeof *w->idx);
    w->dirs = malloc(n * sizeof *w->dirs);
    w->count = malloc((n + 1) * sizeof *w->count);
    w->start = malloc((n + 1) * sizeof *w->start);
    w->recs = malloc(n * sizeof *w->recs);
    return w->times && w->inferred && w->idx && w->dirs && w->count && w->start && w->recs
               ? QR_OK
               : QR_ENOMEM;
}

/* The records of qr_plan_sample, as rows. */
struct rows {
    qr_row_sample_record *v;
    size_t n, cap;
};

static int rows_add(struct rows *o, uint32_t dir, const qr_sample_record *r, size_t nr)
{
    if (o->n + nr > o->cap) {
        size_t c2 = o->cap ? 2 * o->cap : 1024;
        while (c2 < o->n + nr)
            c2 *= 2;
        qr_row_sample_record *v = realloc(o->v, c2 * sizeof *v);
        if (!v)
            return QR_ENOMEM;
        o->v = v;
        o->cap = c2;
    }
    for (size_t j = 0; j < nr; j++)
        o->v[o->n++] =
            (qr_row_sample_record){dir, r[j].index, r[j].time_ns, r[j].gap_num, r[j].gap_den};
    return QR_OK;
}

/* Group host packets pk[0..n) by direction, in order of first appearance: w->dirs[0..*nd) the
 * directions, w->idx + w->start[k] their packets' indices (w->count[k] of them) in send order.
 * slot has a cell per direction. */
static void group_by_direction(const qr_rec_packet *pk, size_t n, uint32_t *slot, struct scratch *w,
                               size_t *nd_out)
{
    size_t nd = 0;
    for (size_t i = 0; i < n; i++)
        slot[pk[i].dir] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t d = pk[i].dir;
        if (slot[d] == UINT32_MAX) {
            slot[d] = (uint32_t)nd;
            w->dirs[nd] = d;
            w->count[nd++] = 0;
        }
        w->count[slot[d]]++;
    }
    size_t acc = 0;
    for (size_t k = 0; k < nd; k++) {
        w->start[k] = (uint32_t)acc;
        acc += w->count[k];
        w->count[k] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t k = slot[pk[i].dir];
        w->idx[w->start[k] + w->count[k]++] = (uint32_t)i;
    }
    *nd_out = nd;
}

int qr_plan_sample(qr_plan **out, const qr_recording *rec, const int64_t *correction,
                   qr_sampling_method method, int64_t th_ns, qr_sampling_stats *stats,
                   qr_row_sample_record **records, size_t *n_records, char *errbuf)
{
    *out = NULL;
    qr_sampler_cfg cfg = {method, th_ns};
    qr_sampler *s = NULL;
    if (qr_sampler_create(&s, &cfg))
        return qri_err(errbuf, QR_EINVAL, "sampling: bad threshold");
    qr_sampling_stats st = {0, 0, 0};
    size_t n_dirs = qr_flow_table_directions(qr_recording_flows(rec));
    /* per direction: its place among the host's directions */
    uint32_t *slot = malloc((n_dirs + 1) * sizeof *slot);
    size_t cap = 0;
    struct scratch w = {0};
    struct rows o = {0};
    qr_plan *p = NULL;
    int rc = !slot ? QR_ENOMEM : qri_plan_alloc(&p, rec);
    for (uint32_t h = 0; !rc && h < p->n_hosts; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(rec, h, &n);
        int64_t corr = correction ? correction[h] : 0;
        if (n > cap && (rc = scratch_grow(&w, cap = n)) != QR_OK)
            break;
        size_t nd;
        group_by_direction(pk, n, slot, &w, &nd);
        for (size_t k = 0; !rc && k < nd; k++) {
            const uint32_t *ix = w.idx + w.start[k];
            for (size_t j = 0; j < w.count[k]; j++)
                w.times[j] = pk[ix[j]].pk.time_ns - corr;
            size_t nr = 0;
            int64_t worst = 0;
            if ((rc = qr_sample_series(s, w.times, w.count[k], w.recs, &nr, w.inferred, &worst,
                                       errbuf)))
                break;
            for (size_t j = 0; j < w.count[k]; j++)
                p->time[h][ix[j]] = w.inferred[j];
            if (worst > st.max_error_ns)
                st.max_error_ns = worst;
            st.packets += w.count[k];
            st.records += nr;
            if (records)
                rc = rows_add(&o, w.dirs[k], w.recs, nr);
        }
        if (!rc)
            rc = qri_plan_order_host(p, h);
    }
    qr_sampler_destroy(s);
    free(slot);
    scratch_free(&w);
    if (!rc)
        rc = qr_sampling_bound_check(method, th_ns, st.max_error_ns, errbuf);
    if (rc) {
        free(o.v);
        qr_plan_free(p);
        return rc == QR_ENOMEM ? qri_err(errbuf, rc, "sampling: out of memory") : rc;
    }
    if (stats)
        *stats = st;
    if (records) {
        *records = o.v;
        *n_records = o.n;
    }
    *out = p;
    return QR_OK;
}

struct qr_plan_cursor {
    qr_source src; /* first: the source is the cursor */
    const qr_recording *rec;
    const qr_plan *plan;
    size_t *at; /* per host: the next position in its injection order */
};

static int cursor_next(qr_source *self, uint32_t h, qr_injection *out, char *errbuf)
{
    (void)errbuf;
    qr_plan_cursor *c = (qr_plan_cursor *)self;
    size_t n, i = c->at[h];
    const qr_rec_packet *pk = qr_recording_packets(c->rec, h, &n);
    if (i >= c->plan->n[h]) {
        *out = (qr_injection){NULL, 0};
        return QR_OK;
    }
    uint32_t k = c->plan->order[h][i];
    *out = (qr_injection){&pk[k], c->plan->time[h][k]};
    return QR_OK;
}

static void cursor_take(qr_source *self, uint32_t h)
{
    qr_plan_cursor *c = (qr_plan_cursor *)self;
    if (c->at[h] < c->plan->n[h])
        c->at[h]++;
}

int qr_plan_cursor_create(qr_plan_cursor **out, const qr_recording *rec, const qr_plan *p)
{
    *out = NULL;
    qr_plan_cursor *c = calloc(1, sizeof *c);
    if (!c || !(c->at = calloc(p->n_hosts ? p->n_hosts : 1, sizeof *c->at))) {
        free(c);
        return QR_ENOMEM;
    }
    c->src = (qr_source){cursor_next, cursor_take};
    c->rec = rec;
    c->plan = p;
    *out = c;
    return QR_OK;
}

qr_source *qr_plan_cursor_source(qr_plan_cursor *c)
{
    return &c->src;
}

void qr_plan_cursor_free(qr_plan_cursor *c)
{
    if (!c)
        return;
    free(c->at);
    free(c);
}
