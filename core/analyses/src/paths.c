/* Causal paths: WAP5's message linking, given parents, and what every method shares (paths.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "paths_internal.h"
#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/paths.h"

void qr_paths_opts_default(qr_paths_opts *o)
{
    o->cutoff_ns = 10000000;
    o->y = 4;
    o->k = 6;
    o->p_lo = 0.1;
    o->p_hi = 0.9;
    o->near = 0.15;
    o->max_candidates = 64;
    o->max_tree = 1024;
    o->slow_link_ns = 100000;
    o->slow_node = 2;
    o->outside = NULL;
}

static int check_opts(const qr_paths_opts *o, char *errbuf)
{
    if (o->cutoff_ns <= 0)
        return qri_err(errbuf, QR_EINVAL, "paths: the cutoff must be positive");
    if (!(o->y > 0) || !(o->p_lo >= 0) || !(o->p_hi <= 1) || !(o->p_lo < o->p_hi) ||
        !(o->near >= 0 && o->near < 0.5))
        return qri_err(errbuf, QR_EINVAL,
                       "paths: y must be positive, 0 <= p_lo < p_hi <= 1, 0 <= near < 0.5");
    if (!o->max_candidates || o->max_tree < 2 || o->k > 20)
        return qri_err(errbuf, QR_EINVAL,
                       "paths: at least one candidate, trees of two messages, k at most 20");
    if (o->slow_link_ns < 0 || !(o->slow_node > 1))
        return qri_err(errbuf, QR_EINVAL,
                       "paths: the slow-link margin must not be negative, the slow-node factor "
                       "above 1");
    return QR_OK;
}

/* The hosts' offsets from the least one-way delays seen both ways (clock.h's reconciliation). */
static int estimate_offsets(qr_paths *p)
{
    qri_map mins;
    if (qri_map_init(&mins))
        return QR_ENOMEM;
    int rc = QR_OK;
    qr_owd_pair *pairs = NULL;
    size_t n_pairs = 0, cap = 0;
    for (size_t i = 0; !rc && i < p->n; i++) {
        const qr_msg *m = &p->m[i];
        if (m->send_ns == QR_MSG_UNTRACED || m->recv_ns == QR_MSG_UNTRACED || m->src == m->dst)
            continue;
        uint32_t a = m->src < m->dst ? m->src : m->dst, b = m->src ^ m->dst ^ a;
        qr_owd_pair **slot = (qr_owd_pair **)qri_map_slot(&mins, a, b);
        size_t at;
        if (!slot) {
            if (qri_grow((void **)&pairs, &cap, n_pairs, sizeof *pairs, 64) ||
                qri_map_put(&mins, a, b, (void *)(uintptr_t)(n_pairs + 1))) {
                rc = QR_ENOMEM;
                break;
            }
            pairs[n_pairs] = (qr_owd_pair){a, b, INT64_MAX, INT64_MAX};
            at = n_pairs++;
        } else {
            at = (size_t)(uintptr_t)*slot - 1;
        }
        int64_t d = m->recv_ns - m->send_ns,
                *best = m->src == a ? &pairs[at].min_ab_ns : &pairs[at].min_ba_ns;
        if (d < *best)
            *best = d;
    }
    size_t k = 0;
    for (size_t i = 0; !rc && i < n_pairs; i++)
        if (pairs[i].min_ab_ns != INT64_MAX && pairs[i].min_ba_ns != INT64_MAX)
            pairs[k++] = pairs[i];
    p->st.clock_pairs = k;
    qr_clock_estimate *est = rc ? NULL : calloc(p->n_hosts, sizeof *est);
    if (!rc && !est)
        rc = QR_ENOMEM;
    if (!rc && k)
        rc = qr_clock_reconcile(p->n_hosts, pairs, k, 0, est);
    for (uint32_t h = 0; !rc && h < p->n_hosts; h++)
        p->offset[h] = k ? est[h].offset_ns : 0;
    free(est);
    free(pairs);
    qri_map_free(&mins);
    return rc;
}

int qri_paths_new(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf)
{
    *out = NULL;
    qr_paths_opts d;
    if (!o) {
        qr_paths_opts_default(&d);
        o = &d;
    }
    if (check_opts(o, errbuf))
        return QR_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (m[i].src >= n_hosts || m[i].dst >= n_hosts || m[i].src == m[i].dst)
            return qri_err(errbuf, QR_EINVAL,
                           "paths: message %zu goes from host %u to host %u (hosts 0 .. %u; "
                           "not to itself)",
                           i, m[i].src, m[i].dst, n_hosts ? n_hosts - 1 : 0);
    qr_paths *p = calloc(1, sizeof *p);
    if (!p)
        return qri_err(errbuf, QR_ENOMEM, "paths: out of memory");
    p->o = *o;
    p->m = m;
    p->n = n;
    p->n_hosts = n_hosts;
    p->st.messages = n;
    p->cstart = calloc(n + 1, sizeof *p->cstart);
    p->spont = calloc(n ? n : 1, sizeof *p->spont);
    p->parent = malloc((n ? n : 1) * sizeof *p->parent);
    p->prob = calloc(n ? n : 1, sizeof *p->prob);
    p->offset = calloc(n_hosts ? n_hosts : 1, sizeof *p->offset);
    if (!p->cstart || !p->spont || !p->parent || !p->prob || !p->offset ||
        qri_map_init(&p->pat_index) || estimate_offsets(p)) {
        qr_paths_destroy(p);
        return qri_err(errbuf, QR_ENOMEM, "paths: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        p->st.untraced_send += m[i].send_ns == QR_MSG_UNTRACED;
        p->st.untraced_recv += m[i].recv_ns == QR_MSG_UNTRACED;
    }
    *out = p;
    return QR_OK;
}

void qr_paths_destroy(qr_paths *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_pats; i++) {
        for (uint32_t h = 0; h < p->pats[i].n_hops; h++) {
            free(p->pats[i].hops[h].node);
            free(p->pats[i].hops[h].net);
        }
        free(p->pats[i].hops);
        free(p->pats[i].shape);
    }
    free(p->pats);
    qri_map_free(&p->pat_index);
    free(p->cstart);
    free(p->cand);
    free(p->spont);
    free(p->kstart);
    free(p->kid);
    free(p->parent);
    free(p->prob);
    free(p->offset);
    free(p->out);
    free(p->out_hops);
    free(p->suspects);
    free(p);
}

int qri_paths_cmp_arrival(const void *a, const void *b, void *ctx)
{
    const qr_msg *m = ctx, *x = &m[*(const uint64_t *)a], *y = &m[*(const uint64_t *)b];
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->recv_ns != y->recv_ns)
        return x->recv_ns < y->recv_ns ? -1 : 1;
    return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

int qri_paths_arrivals(const qr_paths *p, size_t **start, uint64_t **idx)
{
    *start = calloc(p->n_hosts + 1, sizeof **start);
    *idx = malloc((p->n ? p->n : 1) * sizeof **idx);
    if (!*start || !*idx)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->m[i].recv_ns != QR_MSG_UNTRACED) {
            (*idx)[k++] = i;
            (*start)[p->m[i].dst + 1]++;
        }
    for (uint32_t h = 0; h < p->n_hosts; h++)
        (*start)[h + 1] += (*start)[h];
    return qri_sort(*idx, k, sizeof **idx, qri_paths_cmp_arrival, (void *)p->m);
}

/* The arrivals into m's sender within the cutoff before m left, latest first: idx[*lo .. *hi)
 * read backwards, at most max_candidates. */
static void window(const qr_paths *p, const qr_msg *m, const size_t *start, const uint64_t *idx,
                   size_t *lo, size_t *hi)
{
    size_t a = start[m->src], b = start[m->src + 1];
    while (a < b) { /* the first arrival after the send */
        size_t mid = a + (b - a) / 2;
        if (p->m[idx[mid]].recv_ns <= m->send_ns)
            a = mid + 1;
        else
            b = mid;
    }
    *hi = a;
    size_t l = a;
    while (l > start[m->src] && a - l < p->o.max_candidates &&
           m->send_ns - p->m[idx[l - 1]].recv_ns <= p->o.cutoff_ns)
        l--;
    *lo = l;
}

struct mean {
    double sum;
    uint64_t n;
};

static void free_mean(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k1;
    (void)k2;
    (void)ctx;
    free(v);
}

/* d(B->C) for every pair: the mean delay since the latest arrival into B within the cutoff. */
static int causal_delays(const qr_paths *p, const size_t *start, const uint64_t *idx, qri_map *d)
{
    for (size_t i = 0; i < p->n; i++) {
        const qr_msg *m = &p->m[i];
        if (m->send_ns == QR_MSG_UNTRACED)
            continue;
        size_t lo, hi;
        window(p, m, start, idx, &lo, &hi);
        if (lo == hi)
            continue;
        struct mean *x = qri_map_get(d, m->src, m->dst);
        if (!x) {
            x = calloc(1, sizeof *x);
            if (!x || qri_map_put(d, m->src, m->dst, x)) {
                free(x);
                return QR_ENOMEM;
            }
        }
        x->sum += (double)(m->send_ns - p->m[idx[hi - 1]].recv_ns);
        x->n++;
    }
    return QR_OK;
}

/* Each message's candidates and probabilities, and its most likely cause. */
static int weigh(qr_paths *p, const size_t *start, const uint64_t *idx, const qri_map *d)
{
    size_t cap = 0, k = 0;
    for (size_t i = 0; i < p->n; i++) {
        const qr_msg *m = &p->m[i];
        p->cstart[i] = k;
        p->parent[i] = QR_PATHS_ROOT;
        p->spont[i] = 1;
        p->prob[i] = 1;
        if (m->send_ns == QR_MSG_UNTRACED || (p->o.outside && p->o.outside[m->src]))
            continue;
        size_t lo, hi;
        window(p, m, start, idx, &lo, &hi);
        if (lo == hi)
            continue;
        const struct mean *x = qri_map_get(d, m->src, m->dst);
        /* the mean is positive unless every delay was 0: then any positive scale ranks alike */
        double mean = x && x->sum > 0 ? x->sum / (double)x->n : 1.0, lambda = 1.0 / mean;
        double ws = lambda * exp(-lambda * p->o.y * mean), total = ws;
        if (qri_reserve((void **)&p->cand, &cap, k + (hi - lo), sizeof *p->cand, 1024))
            return QR_ENOMEM;
        for (size_t j = hi; j > lo; j--) {
            double t = (double)(m->send_ns - p->m[idx[j - 1]].recv_ns);
            double w = lambda * exp(-lambda * t);
            p->cand[k++] = (struct pcand){idx[j - 1], w};
            total += w;
        }
        p->spont[i] = ws / total;
        p->prob[i] = p->spont[i];
        size_t kept = p->cstart[i];
        for (size_t c = p->cstart[i]; c < k; c++) {
            p->cand[c].p /= total;
            if (p->cand[c].p > p->prob[i]) {
                p->prob[i] = p->cand[c].p;
                p->parent[i] = p->cand[c].msg;
            }
            if (p->cand[c].p >= QR_PATHS_MIN_P) /* the rest can sway no decision */
                p->cand[kept++] = p->cand[c];
        }
        k = kept;
    }
    p->cstart[p->n] = k;
    return QR_OK;
}

/* The candidates turned into children, the instances built; p destroyed on failure. Returns 0
 * or an error. */
static int complete(qr_paths *p, char *errbuf)
{
    int rc = qri_paths_children(p);
    if (!rc)
        rc = qri_paths_build(p, errbuf);
    p->o.outside = NULL; /* borrowed for the analysis only */
    if (rc)
        qr_paths_destroy(p);
    return rc;
}

int qr_paths_link(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf)
{
    qr_paths *p;
    int rc = qri_paths_new(&p, m, n, n_hosts, o, errbuf);
    if (rc)
        return rc;
    size_t *start = NULL;
    uint64_t *idx = NULL;
    qri_map d;
    int have_d = !qri_map_init(&d);
    rc = have_d ? qri_paths_arrivals(p, &start, &idx) : QR_ENOMEM;
    if (!rc)
        rc = causal_delays(p, start, idx, &d);
    if (!rc)
        rc = weigh(p, start, idx, &d);
    free(start);
    free(idx);
    if (have_d) {
        qri_map_foreach(&d, free_mean, NULL);
        qri_map_free(&d);
    }
    if (!rc)
        rc = complete(p, errbuf);
    else
        qr_paths_destroy(p);
    if (rc)
        return rc == QR_ENOMEM ? qri_err(errbuf, rc, "paths: out of memory") : rc;
    *out = p;
    return QR_OK;
}

int qr_paths_given(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                   const uint64_t *parents, const qr_paths_opts *o, char *errbuf)
{
    for (size_t i = 0; i < n; i++)
        if (parents[i] != QR_PATHS_ROOT && (parents[i] >= n || parents[i] == i))
            return qri_err(errbuf, QR_EINVAL,
                           "paths: message %zu's parent %llu is no other message", i,
                           (unsigned long long)parents[i]);
    qr_paths *p;
    int rc = qri_paths_new(&p, m, n, n_hosts, o, errbuf);
    if (!rc)
        rc = qri_paths_finish(p, parents, errbuf);
    if (!rc)
        *out = p;
    return rc;
}

int qri_paths_finish(qr_paths *p, const uint64_t *parents, char *errbuf)
{
    size_t n = p->n, k = 0;
    p->cand = malloc((n ? n : 1) * sizeof *p->cand);
    for (size_t i = 0; p->cand && i < n; i++) {
        p->cstart[i] = k;
        p->parent[i] = parents[i];
        p->prob[i] = 1;
        p->spont[i] = parents[i] == QR_PATHS_ROOT;
        if (parents[i] != QR_PATHS_ROOT)
            p->cand[k++] = (struct pcand){parents[i], 1};
    }
    p->cstart[n] = k;
    int rc = p->cand ? complete(p, errbuf) : QR_ENOMEM;
    if (rc == QR_ENOMEM && !p->cand)
        qr_paths_destroy(p);
    return rc == QR_ENOMEM ? qri_err(errbuf, rc, "paths: out of memory") : rc;
}

int qri_paths_children(qr_paths *p)
{
    size_t total = p->cstart[p->n];
    p->kstart = calloc(p->n + 1, sizeof *p->kstart);
    p->kid = malloc((total ? total : 1) * sizeof *p->kid);
    size_t *fill = calloc(p->n + 1, sizeof *fill);
    if (!p->kstart || !p->kid || !fill) {
        free(fill);
        return QR_ENOMEM;
    }
    for (size_t c = 0; c < total; c++)
        p->kstart[p->cand[c].msg + 1]++;
    for (size_t j = 0; j < p->n; j++)
        p->kstart[j + 1] += p->kstart[j];
    /* children in order of message index: the candidates are walked by child */
    for (size_t i = 0; i < p->n; i++)
        for (size_t c = p->cstart[i]; c < p->cstart[i + 1]; c++) {
            uint64_t j = p->cand[c].msg;
            p->kid[p->kstart[j] + fill[j]++] = (struct pcand){i, p->cand[c].p};
        }
    free(fill);
    return QR_OK;
}

const uint64_t *qr_paths_parents(const qr_paths *p, const double **prob)
{
    if (prob)
        *prob = p->prob;
    return p->parent;
}

const qr_paths_pattern *qr_paths_patterns(const qr_paths *p, size_t *n)
{
    *n = p->n_pats;
    return p->out;
}

const qr_paths_suspect *qr_paths_suspects(const qr_paths *p, size_t *n)
{
    *n = p->n_suspects;
    return p->suspects;
}

const qr_paths_stats *qr_paths_get_stats(const qr_paths *p)
{
    return &p->st;
}

int64_t qr_paths_offset(const qr_paths *p, uint32_t h)
{
    return h < p->n_hosts ? p->offset[h] : 0;
}
