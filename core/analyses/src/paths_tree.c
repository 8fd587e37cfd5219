/* Causal paths: path instances from each root, their patterns and delays (paths.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "paths_internal.h"
#include "qreplay/error.h"

struct link {
    uint32_t parent_pos;
    uint64_t child;
    double p;
};

struct walker {
    qr_paths *p;
    uint64_t *msgs; /* the instance: messages, parents before children */
    int32_t *ppos;  /* each one's parent's position */
    size_t n, cap, cap_pp;
    struct link *links; /* links from the instance's messages, to decide in order */
    size_t nl, capl;
    uint32_t *in_tree;
    int cut;
    uint64_t *best_msgs;
    size_t best_n, best_cap, best_pat;
    double best_score;
    /* the canonical form's scratch */
    char **str;
    uint32_t *order;
};

enum { LINK_FALSE = 0, LINK_TRUE, LINK_BOTH };

static int decide(const struct walker *w, const struct link *l, uint32_t budget)
{
    int best = w->p->parent[l->child] == w->msgs[l->parent_pos];
    if (l->p >= w->p->o.p_hi)
        return LINK_TRUE;
    if (l->p <= w->p->o.p_lo)
        return LINK_FALSE;
    if (budget && (fabs(l->p - 0.5) <= w->p->o.near || best))
        return LINK_BOTH;
    return best ? LINK_TRUE : LINK_FALSE;
}

/* Add link l's child to the instance, with the links from it. */
static int add(struct walker *w, const struct link *l)
{
    if (w->n >= w->p->o.max_tree) {
        w->cut = 1;
        return QR_OK;
    }
    if (qri_grow((void **)&w->msgs, &w->cap, w->n, sizeof *w->msgs, 32) ||
        qri_reserve((void **)&w->ppos, &w->cap_pp, w->n + 1, sizeof *w->ppos, 32))
        return QR_ENOMEM;
    uint64_t c = l->child;
    uint32_t pos = (uint32_t)w->n;
    w->msgs[w->n] = c;
    w->ppos[w->n++] = (int32_t)l->parent_pos;
    w->in_tree[c]++;
    const qr_paths *p = w->p;
    for (size_t k = p->kstart[c]; k < p->kstart[c + 1]; k++) {
        if (qri_grow((void **)&w->links, &w->capl, w->nl, sizeof *w->links, 64))
            return QR_ENOMEM;
        w->links[w->nl++] = (struct link){pos, p->kid[k].msg, p->kid[k].p};
    }
    return QR_OK;
}

static void undo(struct walker *w, size_t n, size_t nl)
{
    while (w->n > n)
        w->in_tree[w->msgs[--w->n]]--;
    w->nl = nl;
}

/* A host in a shape: its number, or "c" for every host outside the application (its clients are
 * one node, as WAP5 draws them). */
static int host_label(const qr_paths *p, uint32_t h, char *s, size_t len)
{
    return p->o.outside && p->o.outside[h] ? snprintf(s, len, "c") : snprintf(s, len, "%u", h);
}

static int cmp_str(const void *a, const void *b, void *ctx)
{
    char **s = ctx;
    return strcmp(s[*(const uint32_t *)a], s[*(const uint32_t *)b]);
}

/* The canonical shape of the instance (malloc'd) and, in order, the canonical position of
 * each instance position's hop (w->order: canonical index -> instance position). */
static char *canonical(struct walker *w)
{
    size_t n = w->n;
    uint32_t *nk = calloc(n + 1, sizeof *nk), *kids = malloc(n * sizeof *kids);
    uint32_t *fill = calloc(n + 1, sizeof *fill), *stack = malloc(n * sizeof *stack);
    w->str = calloc(n, sizeof *w->str);
    w->order = malloc(n * sizeof *w->order);
    char *out = NULL;
    if (!nk || !kids || !fill || !stack || !w->str || !w->order)
        goto done;
    for (size_t q = 1; q < n; q++)
        nk[w->ppos[q] + 1]++;
    for (size_t q = 0; q < n; q++)
        nk[q + 1] += nk[q];
    for (size_t q = 1; q < n; q++)
        kids[nk[w->ppos[q]] + fill[w->ppos[q]]++] = (uint32_t)q;
    for (size_t q = n; q-- > 0;) { /* children come after their parents */
        const qr_msg *m = &w->p->m[w->msgs[q]];
        uint32_t *k = kids + nk[q], nkq = nk[q + 1] - nk[q];
        qri_sort_buf(k, nkq, sizeof *k, cmp_str, w->str, stack);
        size_t len = 24;
        for (uint32_t i = 0; i < nkq; i++)
            len += strlen(w->str[k[i]]) + 1;
        char *s = malloc(len);
        if (!s)
            goto done;
        int at = host_label(w->p, m->src, s, len);
        at += snprintf(s + at, len - (size_t)at, ">");
        at += host_label(w->p, m->dst, s + at, len - (size_t)at);
        for (uint32_t i = 0; i < nkq; i++)
            at += snprintf(s + at, len - (size_t)at, "%s%s", i ? "," : "(", w->str[k[i]]);
        if (nkq)
            snprintf(s + at, len - (size_t)at, ")");
        w->str[q] = s;
    }
    /* the canonical preorder */
    size_t sp = 0, o = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t q = stack[--sp];
        w->order[o++] = q;
        for (uint32_t i = nk[q + 1] - nk[q]; i-- > 0;)
            stack[sp++] = kids[nk[q] + i];
    }
    out = w->str[0];
    w->str[0] = NULL;
done:
    for (size_t q = 0; w->str && q < n; q++)
        free(w->str[q]);
    free(w->str);
    w->str = NULL;
    free(nk);
    free(kids);
    free(fill);
    free(stack);
    return out;
}

static void shape_hash(const char *s, uint64_t *k1, uint64_t *k2)
{
    uint64_t a = 1469598103934665603ull, b = 5381;
    for (; *s; s++) {
        a = (a ^ (uint8_t)*s) * 1099511628211ull;
        b = b * 33 + (uint8_t)*s;
    }
    *k1 = a;
    *k2 = b;
}

/* The pattern of shape s (taken over; freed if it exists), created from the instance in
 * canonical order if new. */
static int pattern_of(struct walker *w, char *s, size_t *at)
{
    qr_paths *p = w->p;
    uint64_t k1, k2;
    shape_hash(s, &k1, &k2);
    void *v = qri_map_get(&p->pat_index, k1, k2);
    if (v) {
        *at = (size_t)(uintptr_t)v - 1;
        free(s);
        return QR_OK;
    }
    if (qri_grow((void **)&p->pats, &p->cap_pats, p->n_pats, sizeof *p->pats, 16)) {
        free(s);
        return QR_ENOMEM;
    }
    struct ppat *pt = &p->pats[p->n_pats];
    memset(pt, 0, sizeof *pt);
    pt->shape = s;
    pt->n_hops = (uint32_t)w->n;
    pt->hops = calloc(w->n, sizeof *pt->hops);
    int32_t *canon_of = malloc(w->n * sizeof *canon_of);
    if (!pt->hops || !canon_of ||
        qri_map_put(&p->pat_index, k1, k2, (void *)(uintptr_t)(p->n_pats + 1))) {
        free(pt->hops);
        free(canon_of);
        free(s);
        return QR_ENOMEM;
    }
    for (size_t c = 0; c < w->n; c++)
        canon_of[w->order[c]] = (int32_t)c;
    for (size_t c = 0; c < w->n; c++) {
        uint32_t q = w->order[c];
        const qr_msg *m = &p->m[w->msgs[q]];
        pt->hops[c].h.src = m->src;
        pt->hops[c].h.dst = m->dst;
        pt->hops[c].h.parent = w->ppos[q] < 0 ? -1 : canon_of[w->ppos[q]];
    }
    free(canon_of);
    *at = p->n_pats++;
    return QR_OK;
}

static int emit(struct walker *w, double score)
{
    char *s = canonical(w);
    if (!s)
        return QR_ENOMEM;
    size_t at;
    if (pattern_of(w, s, &at))
        return QR_ENOMEM;
    w->p->pats[at].expected += score;
    w->p->st.instances++;
    if (score > w->best_score) {
        if (qri_reserve((void **)&w->best_msgs, &w->best_cap, w->n, sizeof *w->best_msgs, 32))
            return QR_ENOMEM;
        /* kept in canonical order */
        for (size_t c = 0; c < w->n; c++)
            w->best_msgs[c] = w->msgs[w->order[c]];
        w->best_n = w->n;
        w->best_pat = at;
        w->best_score = score;
    }
    free(w->order);
    w->order = NULL;
    return QR_OK;
}

/* Decide the links from li on; every way a try-both link can go is walked. */
static int walk(struct walker *w, size_t li, uint32_t budget, double score, int *spent)
{
    while (li < w->nl) {
        struct link l = w->links[li++];
        if (w->in_tree[l.child])
            continue;
        int d = decide(w, &l, budget);
        if (d == LINK_BOTH) {
            size_t n = w->n, nl = w->nl;
            if (budget == 1)
                *spent = 1;
            int rc = add(w, &l);
            if (!rc)
                rc = walk(w, li, budget - 1, score * l.p, spent);
            if (rc)
                return rc;
            undo(w, n, nl);
            score *= 1 - l.p;
            budget--;
        } else if (d == LINK_TRUE) {
            if (add(w, &l))
                return QR_ENOMEM;
            score *= l.p;
        } else {
            score *= 1 - l.p;
        }
    }
    return emit(w, score);
}

static int push(int64_t **a, size_t *cap, uint64_t *n, int64_t v)
{
    if (qri_grow((void **)a, cap, *n, sizeof **a, 16))
        return QR_ENOMEM;
    (*a)[(*n)++] = v;
    return QR_OK;
}

/* The delays of the root's best instance into its pattern. */
static int keep_best(struct walker *w)
{
    qr_paths *p = w->p;
    struct ppat *pt = &p->pats[w->best_pat];
    pt->count++;
    for (size_t c = 0; c < w->best_n; c++) {
        const qr_msg *m = &p->m[w->best_msgs[c]];
        struct phop *h = &pt->hops[c];
        if (h->h.parent >= 0) {
            const qr_msg *up = &p->m[w->best_msgs[h->h.parent]];
            if (m->send_ns != QR_MSG_UNTRACED && up->recv_ns != QR_MSG_UNTRACED &&
                push(&h->node, &h->cap_node, &h->h.node_n, m->send_ns - up->recv_ns))
                return QR_ENOMEM;
        }
        if (m->send_ns != QR_MSG_UNTRACED && m->recv_ns != QR_MSG_UNTRACED &&
            push(&h->net, &h->cap_net, &h->h.net_n,
                 m->recv_ns - m->send_ns - (p->offset[m->dst] - p->offset[m->src])))
            return QR_ENOMEM;
    }
    return QR_OK;
}

static int from_root(struct walker *w, uint64_t r)
{
    w->n = w->nl = 0;
    w->cut = 0;
    w->best_score = -1;
    int spent = 0;
    struct link first = {0, r, 1};
    int rc = add(w, &first);
    w->ppos[0] = -1;
    if (!rc)
        rc = walk(w, 0, w->p->o.k, 1.0, &spent);
    undo(w, 0, 0);
    w->p->st.trees_cut += w->cut;
    w->p->st.budget_spent += spent;
    return rc ? rc : keep_best(w);
}

static int by_expected(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const struct ppat *x = a, *y = b;
    if (x->expected != y->expected)
        return x->expected > y->expected ? -1 : 1;
    return strcmp(x->shape, y->shape);
}

/* The public view: patterns by expected count, hops with their means. */
static int publish(qr_paths *p)
{
    if (qri_sort(p->pats, p->n_pats, sizeof *p->pats, by_expected, NULL))
        return QR_ENOMEM;
    for (size_t i = 0; i < p->n_pats; i++) { /* the index follows the sort */
        uint64_t k1, k2;
        shape_hash(p->pats[i].shape, &k1, &k2);
        *qri_map_slot(&p->pat_index, k1, k2) = (void *)(uintptr_t)(i + 1);
    }
    size_t hops = 0;
    for (size_t i = 0; i < p->n_pats; i++)
        hops += p->pats[i].n_hops;
    p->out = calloc(p->n_pats ? p->n_pats : 1, sizeof *p->out);
    p->out_hops = calloc(hops ? hops : 1, sizeof *p->out_hops);
    if (!p->out || !p->out_hops)
        return QR_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < p->n_pats; i++) {
        struct ppat *pt = &p->pats[i];
        p->out[i] =
            (qr_paths_pattern){pt->shape, pt->n_hops, p->out_hops + at, pt->count, pt->expected};
        for (uint32_t h = 0; h < pt->n_hops; h++) {
            qr_paths_hop *o = &p->out_hops[at++];
            *o = pt->hops[h].h;
            o->node_ns = pt->hops[h].node;
            o->net_ns = pt->hops[h].net;
            double sn = 0, st = 0;
            for (uint64_t k = 0; k < o->node_n; k++)
                sn += (double)o->node_ns[k];
            for (uint64_t k = 0; k < o->net_n; k++)
                st += (double)o->net_ns[k];
            o->node_mean_ns = o->node_n ? sn / (double)o->node_n : 0;
            o->net_mean_ns = o->net_n ? st / (double)o->net_n : 0;
        }
    }
    return QR_OK;
}

int qri_paths_build(qr_paths *p, char *errbuf)
{
    (void)errbuf;
    struct walker w = {0};
    w.p = p;
    w.in_tree = calloc(p->n ? p->n : 1, sizeof *w.in_tree);
    int rc = w.in_tree ? QR_OK : QR_ENOMEM;
    for (size_t i = 0; i < p->n; i++)
        p->st.spontaneous += p->parent[i] == QR_PATHS_ROOT;
    for (size_t i = 0; !rc && i < p->n; i++)
        if (p->parent[i] == QR_PATHS_ROOT) {
            p->st.roots++;
            rc = from_root(&w, i);
        }
    free(w.msgs);
    free(w.ppos);
    free(w.links);
    free(w.in_tree);
    free(w.best_msgs);
    free(w.order);
    if (!rc)
        rc = publish(p);
    if (!rc)
        rc = qri_paths_suspects(p);
    return rc;
}

const qr_paths_pattern *qr_paths_find(const qr_paths *p, const char *shape)
{
    uint64_t k1, k2;
    shape_hash(shape, &k1, &k2);
    void *v = qri_map_get(&p->pat_index, k1, k2);
    return v && p->out ? &p->out[(uintptr_t)v - 1] : NULL;
}
