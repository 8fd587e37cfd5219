/* Causal paths (paths.h) over multi-tier services simulated by the core (tiers.h): the services'
 * own invariants (every request answered, parents before children, a child leaves the host its
 * parent reached), the truth's patterns, WAP5's linking and Project 5's nesting against the truth
 * over many seeds and loads, clock errors, the planted slow host and link, and bad input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/paths.h"
#include "qreplay/tiers.h"

#define BASE                                                                                       \
    "tier front hosts=3 service=50us workers=16 calls=app\n"                                       \
    "tier app hosts=4,5 service=200us workers=8 calls=cache+audit@0.05,store@0.3\n"                \
    "tier cache hosts=6 service=40us\n"                                                            \
    "tier store hosts=7 service=500us reply=8000B\n"                                               \
    "tier audit hosts=8 service=100us\n"

typedef struct {
    qr_tiers_spec spec;
    qr_tiers_trace_msg *t;
    size_t n;
    int64_t *off;
    qr_msg *m;
    uint64_t *truth;
    uint32_t hosts;
} run;

static void simulate(run *r, const char *spec, double rate, int64_t clock_ns, uint64_t seed)
{
    char text[2048], err[QR_ERRBUF_SIZE];
    snprintf(text, sizeof text, "%sclients hosts=0,1,2 rate=%g/s", spec, rate);
    cr_assert_eq(qr_tiers_parse(text, &r->spec, err), QR_OK, "%s", err);
    qr_tiers_net net;
    qr_tiers_net_default(&net);
    net.clock_ns = clock_ns;
    net.duration_ns = 200000000;
    cr_assert_eq(qr_tiers_simulate(&r->spec, &net, seed, &r->t, &r->n, &r->off, err), QR_OK, "%s",
                 err);
    r->hosts = qr_tiers_hosts(&r->spec);
    r->m = calloc(r->n, sizeof *r->m);
    r->truth = calloc(r->n, sizeof *r->truth);
    for (size_t i = 0; i < r->n; i++) {
        const qr_tiers_trace_msg *x = &r->t[i];
        r->m[i] = (qr_msg){x->m.from, x->m.to, x->m.conn, x->send_ns, x->recv_ns, x->m.bytes};
        r->truth[i] = x->m.parent == QR_TIER_NO_PARENT ? QR_PATHS_ROOT : x->m.parent;
    }
}

static void release(run *r)
{
    free(r->t);
    free(r->off);
    free(r->m);
    free(r->truth);
}

static double accuracy(const run *r, const qr_paths *p)
{
    const uint64_t *par = qr_paths_parents(p, NULL);
    size_t ok = 0;
    for (size_t i = 0; i < r->n; i++)
        ok += par[i] == r->truth[i];
    return (double)ok / (double)r->n;
}

Test(tiers, every_request_answered_and_parents_precede_children)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        run r;
        simulate(&r, BASE, 2000, 0, seed);
        cr_assert_gt(r.n, 1000);
        size_t roots = 0, replies = 0;
        for (size_t i = 0; i < r.n; i++) {
            const qr_tier_msg *m = &r.t[i].m;
            cr_assert_eq(m->id, i);
            cr_assert_gt(r.t[i].true_recv_ns, r.t[i].true_send_ns);
            replies += m->reply;
            if (m->parent == QR_TIER_NO_PARENT) {
                roots++;
                cr_assert(!m->reply);
                continue;
            }
            const qr_tiers_trace_msg *up = &r.t[m->parent];
            cr_assert_eq(up->m.to, m->from, "message %zu leaves a host its parent never reached",
                         i);
            cr_assert_geq(m->at_ns, up->true_recv_ns);
            cr_assert_eq(up->m.root, m->root);
        }
        /* every call has its request and its reply */
        cr_assert_eq(replies * 2, r.n);
        /* the machine driven by hand over a fixed delay (arrivals in order of sending) answers
         * every request too */
        qr_tiers *t;
        cr_assert_eq(qr_tiers_create(&t, &r.spec, seed), QR_OK);
        cr_assert_eq(qr_tiers_start(t, 50000000), QR_OK);
        uint64_t *fly = NULL;
        int64_t *when = NULL;
        size_t head = 0, tail = 0, cap = 0;
        for (;;) {
            size_t k;
            const qr_tier_msg *m = qr_tiers_take(t, &k);
            if (tail + k > cap) {
                cap = 2 * (tail + k);
                fly = realloc(fly, cap * sizeof *fly);
                when = realloc(when, cap * sizeof *when);
            }
            for (size_t i = 0; i < k; i++) {
                fly[tail] = m[i].id;
                when[tail++] = m[i].at_ns + 20000;
            }
            int64_t next = qr_tiers_next(t);
            if (head < tail && when[head] <= next) {
                cr_assert_eq(qr_tiers_arrive(t, fly[head], when[head]), QR_OK);
                head++;
            } else if (next != INT64_MAX)
                cr_assert_eq(qr_tiers_advance(t, next), QR_OK);
            else
                break;
        }
        uint64_t asked, answered;
        qr_tiers_counts(t, &asked, &answered);
        cr_assert_gt(asked, 10);
        cr_assert_eq(asked, answered);
        cr_assert_eq(qr_tiers_arrive(t, fly[0], when[tail - 1]), QR_EINVAL, "arrived twice");
        free(fly);
        free(when);
        qr_tiers_destroy(t);
        release(&r);
    }
}

Test(paths, truth_patterns_count_every_request)
{
    run r;
    simulate(&r, BASE, 2000, 0, 7);
    char err[QR_ERRBUF_SIZE];
    qr_paths *p;
    cr_assert_eq(qr_paths_given(&p, r.m, r.n, r.hosts, r.truth, NULL, err), QR_OK, "%s", err);
    size_t np, roots = 0, total = 0;
    for (size_t i = 0; i < r.n; i++)
        roots += r.truth[i] == QR_PATHS_ROOT;
    const qr_paths_pattern *pt = qr_paths_patterns(p, &np);
    for (size_t i = 0; i < np; i++) {
        cr_assert_eq((double)pt[i].count, pt[i].expected);
        total += pt[i].count * pt[i].n_hops;
        cr_assert_eq(pt[i].hops[0].parent, -1);
        for (uint32_t h = 1; h < pt[i].n_hops; h++) {
            cr_assert_lt(pt[i].hops[h].parent, (int32_t)h);
            cr_assert_eq(pt[i].hops[pt[i].hops[h].parent].dst, pt[i].hops[h].src);
        }
        if (i)
            cr_assert_geq(pt[i - 1].expected, pt[i].expected);
    }
    cr_assert_eq(qr_paths_get_stats(p)->roots, roots);
    /* every message is in its request's tree */
    cr_assert_eq(total, r.n);
    qr_paths_destroy(p);
    release(&r);
}

static qr_paths_opts clients_outside(uint8_t out[16])
{
    qr_paths_opts o;
    qr_paths_opts_default(&o);
    memset(out, 0, 16);
    out[0] = out[1] = out[2] = 1;
    o.outside = out;
    return o;
}

/* The mean accuracy of linking, nesting and convolution over seeds 1..n at one rate. */
static void accuracies(double rate, int seeds, int64_t clock_ns, double *al, double *an, double *ac)
{
    *al = *an = *ac = 0;
    for (int seed = 1; seed <= seeds; seed++) {
        run r;
        simulate(&r, BASE, rate, clock_ns, (uint64_t)seed);
        char err[QR_ERRBUF_SIZE];
        uint8_t out[16];
        qr_paths_opts o = clients_outside(out);
        qr_paths *l, *n, *c;
        cr_assert_eq(qr_paths_link(&l, r.m, r.n, r.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_nest(&n, r.m, r.n, r.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_conv(&c, r.m, r.n, r.hosts, &o, err), QR_OK, "%s", err);
        *al += accuracy(&r, l) / seeds;
        *an += accuracy(&r, n) / seeds;
        *ac += accuracy(&r, c) / seeds;
        qr_paths_destroy(l);
        qr_paths_destroy(n);
        qr_paths_destroy(c);
        release(&r);
    }
}

/* WAP5's claim at low parallelism, and the fall with load that the study measures. */
Test(paths, linking_and_nesting_fall_with_parallelism)
{
    double rates[] = {300, 3000, 10000}, al[3], an[3], ac[3];
    for (int k = 0; k < 3; k++) {
        accuracies(rates[k], 4, 0, &al[k], &an[k], &ac[k]);
        cr_log_info("rate %g/s: linking %.4f, nesting %.4f, convolution %.4f", rates[k], al[k],
                    an[k], ac[k]);
    }
    /* convolution needs many messages to stand out, and falls once requests overlap */
    cr_expect_gt(ac[1], 0.5);
    cr_expect_lt(ac[2], ac[1]);
    cr_expect_geq(al[0], 0.95, "linking at 300/s: %.4f", al[0]);
    cr_expect_geq(an[0], 0.95, "nesting at 300/s: %.4f", an[0]);
    for (int k = 1; k < 3; k++) {
        cr_expect_lt(al[k], al[k - 1]);
        cr_expect_lt(an[k], an[k - 1]);
    }
}

/* The three methods compare times of one host only: clock offsets change no parent. */
Test(paths, clock_errors_change_no_parent)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run a, b;
        simulate(&a, BASE, 2000, 0, seed);
        simulate(&b, BASE, 2000, 5000000, seed);
        cr_assert_eq(a.n, b.n);
        char err[QR_ERRBUF_SIZE];
        uint8_t out[16];
        qr_paths_opts o = clients_outside(out);
        qr_paths *la, *lb, *na, *nb, *ca, *cb;
        cr_assert_eq(qr_paths_link(&la, a.m, a.n, a.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_link(&lb, b.m, b.n, b.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_nest(&na, a.m, a.n, a.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_nest(&nb, b.m, b.n, b.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_conv(&ca, a.m, a.n, a.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_conv(&cb, b.m, b.n, b.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_arr_eq(qr_paths_parents(ca, NULL), qr_paths_parents(cb, NULL),
                         a.n * sizeof(uint64_t));
        cr_assert_arr_eq(qr_paths_parents(la, NULL), qr_paths_parents(lb, NULL),
                         a.n * sizeof(uint64_t));
        cr_assert_arr_eq(qr_paths_parents(na, NULL), qr_paths_parents(nb, NULL),
                         a.n * sizeof(uint64_t));
        /* the network delays with the estimated offsets taken out are the true ones, on
         * average, within the jitter */
        size_t np;
        const qr_paths_pattern *pa = qr_paths_patterns(la, &np), *pb = qr_paths_patterns(lb, &np);
        cr_assert_str_eq(pa[0].shape, pb[0].shape);
        /* the offsets estimated: each host's against host 0's, within the jitter */
        for (uint32_t h = 1; h < b.hosts; h++)
            cr_expect_lt(llabs(qr_paths_offset(lb, h) - (b.off[h] - b.off[0])), 5000,
                         "host %u: %lld estimated, %lld true", h, (long long)qr_paths_offset(lb, h),
                         (long long)(b.off[h] - b.off[0]));
        for (uint32_t h = 0; h < pa[0].n_hops; h++) {
            cr_assert_eq(pa[0].hops[h].node_mean_ns, pb[0].hops[h].node_mean_ns);
            cr_assert_lt(fabs(pa[0].hops[h].net_mean_ns - pb[0].hops[h].net_mean_ns), 5000.0,
                         "hop %u: %.0f ns without clock error, %.0f with", h,
                         pa[0].hops[h].net_mean_ns, pb[0].hops[h].net_mean_ns);
        }
        qr_paths_destroy(la);
        qr_paths_destroy(lb);
        qr_paths_destroy(na);
        qr_paths_destroy(nb);
        qr_paths_destroy(ca);
        qr_paths_destroy(cb);
        release(&a);
        release(&b);
    }
}

static int named(const qr_paths *p, int link, uint32_t a, uint32_t b)
{
    size_t n;
    const qr_paths_suspect *s = qr_paths_suspects(p, &n);
    for (size_t i = 0; i < n; i++)
        if (s[i].link == link && s[i].a == a && s[i].b == b)
            return 1;
    return 0;
}

/* The planted slow host and slow link are named, wherever they are planted; without them nothing
 * is. */
Test(paths, slow_host_and_link_named)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        run a, b;
        uint32_t slow = 4 + seed % 2, la_ = seed % 4 < 2 ? 3 : 4 + (uint32_t)(seed / 4) % 2,
                 lb_ = la_ == 3 ? 4 + (uint32_t)(seed / 2) % 2 : 6 + (uint32_t)(seed / 2) % 2;
        char spec[1024];
        snprintf(spec, sizeof spec, BASE "fault slow-node %u x5\nfault slow-link %u %u +300us\n",
                 slow, la_, lb_);
        simulate(&a, spec, 500, 0, seed);
        simulate(&b, BASE, 500, 0, seed);
        char err[QR_ERRBUF_SIZE];
        uint8_t out[16];
        qr_paths_opts o = clients_outside(out);
        qr_paths *la, *lb;
        cr_assert_eq(qr_paths_link(&la, a.m, a.n, a.hosts, &o, err), QR_OK, "%s", err);
        cr_assert_eq(qr_paths_link(&lb, b.m, b.n, b.hosts, &o, err), QR_OK, "%s", err);
        size_t ns;
        const qr_paths_suspect *s = qr_paths_suspects(la, &ns);
        for (size_t i = 0; i < ns; i++)
            cr_log_info("seed %llu: %s %u-%u %.0f ns against %.0f", (unsigned long long)seed,
                        s[i].link ? "link" : "host", s[i].a, s[i].b, s[i].delay_ns,
                        s[i].baseline_ns);
        cr_expect(named(la, 0, slow, slow), "seed %llu: host %u not named",
                  (unsigned long long)seed, slow);
        cr_expect(named(la, 1, la_, lb_), "seed %llu: link %u-%u not named",
                  (unsigned long long)seed, la_, lb_);
        cr_expect_eq(ns, 2, "seed %llu: %zu named", (unsigned long long)seed, ns);
        qr_paths_suspects(lb, &ns);
        cr_expect_eq(ns, 0, "seed %llu: %zu named without a fault", (unsigned long long)seed, ns);
        qr_paths_destroy(la);
        qr_paths_destroy(lb);
        release(&a);
        release(&b);
    }
}

Test(tiers, spec_errors_name_the_item)
{
    const struct {
        const char *text, *says;
    } bad[] = {
        {"tier a hosts=1 calls=b\nclients hosts=0 rate=10/s", "unknown tier 'b'"},
        {"tier a hosts=1\ntier b hosts=2 calls=a\nclients hosts=0 rate=10/s", "not below it"},
        {"tier a hosts=1 service=-3us\nclients hosts=0 rate=10/s", "item 1: service"},
        {"tier a hosts=1\nclients hosts=1 rate=10/s", "host 1 is named twice"},
        {"tier a hosts=1\nclients hosts=0 rate=10", "item 2: rate=10"},
        {"tier a hosts=1 calls=a@1.5\nclients hosts=0 rate=10/s", "not a probability"},
        {"tier a hosts=1\nclients hosts=0 rate=10/s\nfault slow-node 1 x0.5", "item 3"},
        {"tier a hosts=1\nclients hosts=0 rate=10/s\nfault slow-link 1 9 +1us", "fault 1"},
        {"tier a hosts=1 colour=red\nclients hosts=0 rate=10/s", "unknown key 'colour'"},
        {"tier a hosts=1", "needs a tier and a clients item"},
        {"frobnicate", "item 1: 'frobnicate'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qr_tiers_spec s;
        char err[QR_ERRBUF_SIZE] = "";
        cr_expect_neq(qr_tiers_parse(bad[i].text, &s, err), QR_OK, "%s", bad[i].text);
        cr_expect(strstr(err, bad[i].says) != NULL, "'%s' says '%s'", bad[i].text, err);
    }
    qr_tiers_spec s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_tiers_parse(BASE "clients hosts=0,1,2 rate=500/s first=front", &s, err), QR_OK,
                 "%s", err);
    cr_assert_eq(s.n_tiers, 5);
    cr_assert_eq(s.tiers[1].n_stages, 2);
    cr_assert_eq(s.tiers[1].stages[0].n_calls, 2);
    cr_assert_float_eq(s.tiers[1].stages[0].calls[1].probability, 0.05, 1e-12);
    cr_assert_eq(s.tiers[1].stages[1].calls[0].tier, 3);
    cr_assert_eq(qr_tiers_tier_of(&s, 7), 3);
    cr_assert_eq(qr_tiers_tier_of(&s, 0), -1);
    /* a comment runs to the end of its line, a ';' in it included; after an item too */
    cr_assert_eq(qr_tiers_parse("# a service; of one tier\ntier a hosts=1 # ; tier b hosts=9\n"
                                "clients hosts=0 rate=10/s",
                                &s, err),
                 QR_OK, "%s", err);
    cr_assert_eq(s.n_tiers, 1);
    cr_assert_eq(qr_tiers_hosts(&s), 2);
}

Test(paths, bad_messages_and_options_are_refused)
{
    qr_msg m[2] = {{0, 1, 0, 10, 20, 100}, {1, 5, 0, 30, 40, 100}};
    qr_paths *p = NULL;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_paths_link(&p, m, 2, 3, NULL, err), QR_EINVAL);
    cr_assert(strstr(err, "message 1 goes from host 1 to host 5"), "%s", err);
    cr_assert_null(p);
    qr_paths_opts o;
    qr_paths_opts_default(&o);
    o.p_lo = 0.95;
    cr_assert_eq(qr_paths_link(&p, m, 2, 6, &o, err), QR_EINVAL);
    uint64_t parents[2] = {1, 1};
    cr_assert_eq(qr_paths_given(&p, m, 2, 6, parents, NULL, err), QR_EINVAL);
    cr_assert(strstr(err, "message 1's parent"), "%s", err);
    /* nothing at all is no error: no pattern */
    cr_assert_eq(qr_paths_link(&p, m, 0, 6, NULL, err), QR_OK, "%s", err);
    size_t n;
    qr_paths_patterns(p, &n);
    cr_assert_eq(n, 0);
    qr_paths_destroy(p);
}

/* A host without a trace: its times are unknown; its messages start paths or end them, and are
 * counted. */
Test(paths, untraced_host_is_counted)
{
    run r;
    simulate(&r, BASE, 500, 0, 3);
    size_t unknown = 0;
    for (size_t i = 0; i < r.n; i++) {
        if (r.m[i].src == 7) {
            r.m[i].send_ns = QR_MSG_UNTRACED;
            unknown++;
        }
        if (r.m[i].dst == 7)
            r.m[i].recv_ns = QR_MSG_UNTRACED;
    }
    char err[QR_ERRBUF_SIZE];
    qr_paths *p;
    cr_assert_eq(qr_paths_link(&p, r.m, r.n, r.hosts, NULL, err), QR_OK, "%s", err);
    cr_assert_eq(qr_paths_get_stats(p)->untraced_send, unknown);
    const uint64_t *par = qr_paths_parents(p, NULL);
    for (size_t i = 0; i < r.n; i++)
        if (r.m[i].src == 7)
            cr_assert_eq(par[i], QR_PATHS_ROOT);
        else if (par[i] != QR_PATHS_ROOT)
            cr_assert_neq(r.m[par[i]].dst, 7, "a parent whose arrival is unknown");
    qr_paths_destroy(p);
    release(&r);
}
