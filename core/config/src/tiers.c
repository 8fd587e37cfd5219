/* Multi-tier services: the machine and the core's own network (tiers.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "internal.h"
#include "map.h"
#include "qreplay/error.h"
#include "qreplay/random.h"
#include "qreplay/tiers.h"

enum { CALL_QUEUED = 0, CALL_COMPUTING, CALL_WAITING, CALL_DONE };
enum { EV_CLIENT = 0, EV_COMPUTED };

struct call {
    uint64_t parent_call, root, trigger; /* trigger: the message that started what it does now */
    uint32_t caller, callee, tier, conn, stage, pending;
    int state;
};

struct timer {
    int64_t at;
    uint64_t seq, call;
    int kind;
};

struct theap {
    struct timer *a;
    size_t n, cap;
    uint64_t seq;
};

struct hostq {
    uint32_t busy;
    uint64_t *fifo;
    size_t head, n, cap;
};

struct pool {
    uint32_t *free;
    size_t n, cap;
};

struct qr_tiers {
    qr_tiers_spec s;
    gsl_rng *rng;
    struct call *calls;
    size_t n_calls, cap_calls;
    qr_tier_msg *msgs;
    size_t n_msgs, cap_msgs, taken;
    uint8_t *arrived;
    size_t cap_arrived;
    struct theap timers;
    struct hostq *hosts;
    uint32_t n_hosts, n_conns;
    double *slowness;
    qri_map pools; /* (caller, callee) -> struct pool */
    int64_t end_ns;
    uint64_t requests, answered;
};

/* The heap: earliest event (then the first pushed) on top. */
static int timer_less(const struct timer *a, const struct timer *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static int heap_push(struct theap *h, int64_t at, int kind, uint64_t id)
{
    if (qri_grow((void **)&h->a, &h->cap, h->n, sizeof *h->a, 64))
        return QR_ENOMEM;
    size_t i = h->n++;
    struct timer x = {at, h->seq++, id, kind};
    while (i && timer_less(&x, &h->a[(i - 1) / 2])) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = x;
    return QR_OK;
}

static struct timer heap_pop(struct theap *h)
{
    struct timer top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && timer_less(&h->a[c + 1], &h->a[c]))
            c++;
        if (!timer_less(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

static int push_timer(qr_tiers *t, int64_t at, int kind, uint64_t call)
{
    return heap_push(&t->timers, at, kind, call);
}

int qr_tiers_create(qr_tiers **out, const qr_tiers_spec *s, uint64_t seed)
{
    *out = NULL;
    if (!s->n_tiers || !s->n_clients || !(s->rate_per_s > 0))
        return QR_EVALUE;
    qr_tiers *t = calloc(1, sizeof *t);
    if (!t)
        return QR_ENOMEM;
    t->s = *s;
    t->n_hosts = qr_tiers_hosts(s);
    t->rng = gsl_rng_alloc(gsl_rng_mt19937);
    t->hosts = calloc(t->n_hosts, sizeof *t->hosts);
    t->slowness = malloc(t->n_hosts * sizeof *t->slowness);
    if (!t->rng || !t->hosts || !t->slowness || qri_map_init(&t->pools)) {
        qr_tiers_destroy(t);
        return QR_ENOMEM;
    }
    gsl_rng_set(t->rng, (unsigned long)qr_seed_derive(seed, "tiers", 0));
    for (uint32_t h = 0; h < t->n_hosts; h++)
        t->slowness[h] = 1;
    for (uint32_t f = 0; f < s->n_faults; f++)
        if (s->faults[f].kind == QR_TIER_SLOW_NODE)
            t->slowness[s->faults[f].a] *= s->faults[f].factor;
    *out = t;
    return QR_OK;
}

static void free_pool(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k1;
    (void)k2;
    (void)ctx;
    struct pool *p = v;
    free(p->free);
    free(p);
}

void qr_tiers_destroy(qr_tiers *t)
{
    if (!t)
        return;
    if (t->rng)
        gsl_rng_free(t->rng);
    for (uint32_t h = 0; t->hosts && h < t->n_hosts; h++)
        free(t->hosts[h].fifo);
    free(t->hosts);
    free(t->slowness);
    free(t->calls);
    free(t->msgs);
    free(t->arrived);
    free(t->timers.a);
    qri_map_foreach(&t->pools, free_pool, NULL);
    qri_map_free(&t->pools);
    free(t);
}

int qr_tiers_start(qr_tiers *t, int64_t end_ns)
{
    t->end_ns = end_ns;
    double gap = gsl_ran_exponential(t->rng, 1e9 / t->s.rate_per_s);
    return gap < (double)end_ns ? push_timer(t, (int64_t)gap, EV_CLIENT, 0) : QR_OK;
}

int64_t qr_tiers_next(const qr_tiers *t)
{
    return t->timers.n ? t->timers.a[0].at : INT64_MAX;
}

/* A connection of caller's pool towards callee: a free one, or a new one. */
static int take_conn(qr_tiers *t, uint32_t caller, uint32_t callee, uint32_t *conn)
{
    struct pool *p = qri_map_get(&t->pools, caller, callee);
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p || qri_map_put(&t->pools, caller, callee, p)) {
            free(p);
            return QR_ENOMEM;
        }
    }
    *conn = p->n ? p->free[--p->n] : t->n_conns++;
    return QR_OK;
}

static int give_conn(qr_tiers *t, uint32_t caller, uint32_t callee, uint32_t conn)
{
    struct pool *p = qri_map_get(&t->pools, caller, callee);
    if (!p || qri_grow((void **)&p->free, &p->cap, p->n, sizeof *p->free, 4))
        return QR_ENOMEM;
    p->free[p->n++] = conn;
    return QR_OK;
}

static int send_msg(qr_tiers *t, uint64_t call, uint64_t parent, int reply, int64_t now)
{
    if (qri_grow((void **)&t->msgs, &t->cap_msgs, t->n_msgs, sizeof *t->msgs, 256) ||
        qri_reserve((void **)&t->arrived, &t->cap_arrived, t->n_msgs + 1, 1, 256))
        return QR_ENOMEM;
    const struct call *c = &t->calls[call];
    const qr_tier *tier = &t->s.tiers[c->tier];
    qr_tier_msg m = {t->n_msgs,
                     call,
                     parent,
                     c->root,
                     reply ? c->callee : c->caller,
                     reply ? c->caller : c->callee,
                     c->conn,
                     reply ? tier->reply_bytes : tier->request_bytes,
                     reply,
                     now};
    t->arrived[t->n_msgs] = 0;
    t->msgs[t->n_msgs++] = m;
    return QR_OK;
}

/* A new call from caller (for parent_call, or a client's request) to a host of tier. */
static int new_call(qr_tiers *t, uint64_t parent_call, uint32_t caller, uint32_t tier,
                    uint64_t trigger, int64_t now)
{
    if (qri_grow((void **)&t->calls, &t->cap_calls, t->n_calls, sizeof *t->calls, 256))
        return QR_ENOMEM;
    const qr_tier *T = &t->s.tiers[tier];
    uint32_t callee = T->hosts[gsl_rng_uniform_int(t->rng, T->n_hosts)];
    uint64_t id = t->n_calls++;
    struct call c = {
        parent_call, parent_call == QR_TIER_NO_PARENT ? id : t->calls[parent_call].root,
        0,           caller,
        callee,      tier,
        0,           0,
        0,           CALL_QUEUED};
    t->calls[id] = c;
    if (take_conn(t, caller, callee, &t->calls[id].conn))
        return QR_ENOMEM;
    return send_msg(t, id, trigger, 0, now);
}

static int compute(qr_tiers *t, uint64_t call, int64_t now)
{
    struct call *c = &t->calls[call];
    const qr_tier *T = &t->s.tiers[c->tier];
    c->state = CALL_COMPUTING;
    double mean = (double)T->service_ns / (T->n_stages + 1) * t->slowness[c->callee];
    double d = mean > 0 ? gsl_ran_exponential(t->rng, mean) : 0;
    return push_timer(t, now + (int64_t)llround(d), EV_COMPUTED, call);
}

static int start_queued(qr_tiers *t, uint32_t h, int64_t now)
{
    struct hostq *q = &t->hosts[h];
    int rc = QR_OK;
    while (!rc && q->head < q->n) {
        uint64_t call = q->fifo[q->head];
        if (q->busy >= t->s.tiers[t->calls[call].tier].workers)
            break;
        q->head++;
        q->busy++;
        rc = compute(t, call, now);
    }
    if (q->head == q->n)
        q->head = q->n = 0;
    return rc;
}

static int computed(qr_tiers *t, uint64_t call, int64_t now)
{
    struct call *c = &t->calls[call];
    const qr_tier *T = &t->s.tiers[c->tier];
    while (c->stage < T->n_stages) {
        const qr_tier_stage *g = &T->stages[c->stage++];
        uint32_t made = 0;
        for (uint32_t i = 0; i < g->n_calls; i++) {
            if (g->calls[i].probability < 1 && gsl_rng_uniform(t->rng) >= g->calls[i].probability)
                continue;
            uint32_t callee_caller = c->callee;
            uint64_t trigger = c->trigger;
            if (new_call(t, call, callee_caller, g->calls[i].tier, trigger, now))
                return QR_ENOMEM;
            c = &t->calls[call]; /* the calls may have moved */
            made++;
        }
        if (made) {
            c->pending = made;
            c->state = CALL_WAITING;
            return QR_OK;
        }
        /* no call made in this stage: compute for the next one */
        return compute(t, call, now);
    }
    c->state = CALL_DONE;
    if (send_msg(t, call, c->trigger, 1, now))
        return QR_ENOMEM;
    t->hosts[t->calls[call].callee].busy--;
    return start_queued(t, t->calls[call].callee, now);
}

static int client_request(qr_tiers *t, int64_t now)
{
    uint32_t client = t->s.clients[gsl_rng_uniform_int(t->rng, t->s.n_clients)];
    t->requests++;
    if (new_call(t, QR_TIER_NO_PARENT, client, t->s.first, QR_TIER_NO_PARENT, now))
        return QR_ENOMEM;
    double gap = gsl_ran_exponential(t->rng, 1e9 / t->s.rate_per_s);
    int64_t next = now + 1 + (int64_t)gap;
    return next < t->end_ns ? push_timer(t, next, EV_CLIENT, 0) : QR_OK;
}

int qr_tiers_advance(qr_tiers *t, int64_t now_ns)
{
    while (t->timers.n && t->timers.a[0].at <= now_ns) {
        struct timer x = heap_pop(&t->timers);
        int rc = x.kind == EV_CLIENT ? client_request(t, x.at) : computed(t, x.call, x.at);
        if (rc)
            return rc;
    }
    return QR_OK;
}

int qr_tiers_arrive(qr_tiers *t, uint64_t id, int64_t now_ns)
{
    if (id >= t->n_msgs || t->arrived[id])
        return QR_EINVAL;
    t->arrived[id] = 1;
    const qr_tier_msg *m = &t->msgs[id];
    uint64_t call = m->call;
    struct call *c = &t->calls[call];
    if (!m->reply) {
        c->trigger = id;
        struct hostq *q = &t->hosts[c->callee];
        if (qri_grow((void **)&q->fifo, &q->cap, q->n, sizeof *q->fifo, 16))
            return QR_ENOMEM;
        q->fifo[q->n++] = call;
        return start_queued(t, c->callee, now_ns);
    }
    if (give_conn(t, c->caller, c->callee, c->conn))
        return QR_ENOMEM;
    if (c->parent_call == QR_TIER_NO_PARENT) {
        t->answered++;
        return QR_OK;
    }
    struct call *p = &t->calls[c->parent_call];
    p->trigger = id;
    return --p->pending ? QR_OK : compute(t, c->parent_call, now_ns);
}

const qr_tier_msg *qr_tiers_messages(const qr_tiers *t, size_t *n)
{
    *n = t->n_msgs;
    return t->msgs;
}

const qr_tier_msg *qr_tiers_take(qr_tiers *t, size_t *n)
{
    *n = t->n_msgs - t->taken;
    const qr_tier_msg *m = t->msgs + t->taken;
    t->taken = t->n_msgs;
    return m;
}

void qr_tiers_counts(const qr_tiers *t, uint64_t *requests, uint64_t *answered)
{
    *requests = t->requests;
    *answered = t->answered;
}

void qr_tiers_net_default(qr_tiers_net *n)
{
    n->base_ns = 10000;
    n->jitter_ns = 5000;
    n->clock_ns = 0;
    n->rate_bps = 10000000000ull;
    n->duration_ns = 100000000;
}

static int64_t link_extra(const qr_tiers_spec *s, uint32_t a, uint32_t b)
{
    int64_t d = 0;
    for (uint32_t f = 0; f < s->n_faults; f++)
        if (s->faults[f].kind == QR_TIER_SLOW_LINK &&
            ((s->faults[f].a == a && s->faults[f].b == b) ||
             (s->faults[f].a == b && s->faults[f].b == a)))
            d += s->faults[f].delay_ns;
    return d;
}

/* Put the machine's new messages on the network. */
static int transmit(qr_tiers *t, const qr_tiers_spec *s, const qr_tiers_net *net, gsl_rng *r,
                    struct theap *h, qr_tiers_trace_msg **out, size_t *cap)
{
    size_t k;
    const qr_tier_msg *m = qr_tiers_take(t, &k);
    for (size_t i = 0; i < k; i++) {
        double jit = net->jitter_ns > 0 ? gsl_ran_exponential(r, (double)net->jitter_ns) : 0;
        int64_t d = net->base_ns + (int64_t)((double)m[i].bytes * 8e9 / (double)net->rate_bps) +
                    (int64_t)llround(jit) + link_extra(s, m[i].from, m[i].to);
        if (qri_reserve((void **)out, cap, m[i].id + 1, sizeof **out, 1024) ||
            heap_push(h, m[i].at_ns + d, 0, m[i].id))
            return QR_ENOMEM;
        (*out)[m[i].id].m = m[i];
        (*out)[m[i].id].true_send_ns = m[i].at_ns;
        (*out)[m[i].id].true_recv_ns = m[i].at_ns + d;
    }
    return QR_OK;
}

int qr_tiers_simulate(const qr_tiers_spec *s, const qr_tiers_net *net, uint64_t seed,
                      qr_tiers_trace_msg **msgs, size_t *n, int64_t **offsets, char *errbuf)
{
    *msgs = NULL;
    *n = 0;
    *offsets = NULL;
    if (net->base_ns < 0 || net->jitter_ns < 0 || net->clock_ns < 0 || !net->rate_bps ||
        net->duration_ns <= 0)
        return qri_err(errbuf, QR_EVALUE,
                       "tiers: the network's delays, clock error and duration must not be "
                       "negative, nor its rate 0");
    qr_tiers *t = NULL;
    int rc = qr_tiers_create(&t, s, seed);
    if (rc)
        return qri_err(errbuf, rc, "tiers: %s", rc == QR_ENOMEM ? "out of memory" : "empty spec");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    uint32_t nh = qr_tiers_hosts(s);
    int64_t *off = calloc(nh, sizeof *off);
    struct theap h = {0};
    size_t cap = 0;
    qr_tiers_trace_msg *out = NULL;
    rc = r && off ? qr_tiers_start(t, net->duration_ns) : QR_ENOMEM;
    if (!rc) {
        gsl_rng_set(r, (unsigned long)qr_seed_derive(seed, "tiers.clock", 0));
        for (uint32_t i = 0; i < nh; i++)
            off[i] = net->clock_ns
                         ? (int64_t)gsl_rng_uniform_int(r, 2 * (unsigned long)net->clock_ns + 1) -
                               net->clock_ns
                         : 0;
        gsl_rng_set(r, (unsigned long)qr_seed_derive(seed, "tiers.net", 0));
    }
    while (!rc && (h.n || qr_tiers_next(t) != INT64_MAX)) {
        int64_t tm = qr_tiers_next(t);
        if (h.n && h.a[0].at < tm) {
            struct timer a = heap_pop(&h);
            rc = qr_tiers_arrive(t, a.call, a.at);
        } else {
            rc = qr_tiers_advance(t, tm);
        }
        if (!rc)
            rc = transmit(t, s, net, r, &h, &out, &cap);
    }
    size_t nm = 0;
    qr_tiers_messages(t, &nm);
    for (size_t i = 0; !rc && i < nm; i++) {
        out[i].send_ns = out[i].true_send_ns + off[out[i].m.from];
        out[i].recv_ns = out[i].true_recv_ns + off[out[i].m.to];
    }
    qr_tiers_destroy(t);
    if (r)
        gsl_rng_free(r);
    free(h.a);
    if (rc) {
        free(out);
        free(off);
        return qri_err(errbuf, rc, "tiers: out of memory");
    }
    *msgs = out;
    *n = nm;
    *offsets = off;
    return QR_OK;
}
