/* Pingmesh (pingmesh.h): the probe plan (every pair of a rack, same-numbered servers between
 * racks), the agents' schedule, source ports and packet ids, and the analysis on synthetic probe
 * logs whose losses come from faults on the exact ECMP paths of each probe and its answer: the
 * detection rule flags the place a planted fault points at (a cable to the core: its pod; a rack's
 * uplink: the rack; a host's link: the server; a whole core switch: the spine), flags nothing on
 * uniform background loss, and the matrices conserve every probe. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/metrics.h"
#include "qreplay/pingmesh.h"
#include "qreplay/pingmesh_score.h"
#include "qreplay/probelog.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"
#include "qreplay/schema_pingmesh.h"
#include "qreplay/stats.h"
#include "qreplay/truth.h"

/* splitmix64, and a uniform double in [0, 1) from it */
static uint64_t rnd_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rnd_uniform(uint64_t *x)
{
    return (double)(rnd_next(x) >> 11) / 9007199254740992.0;
}

Test(plan, pairs_follow_pingmesh_pinglists)
{
    for (int k = 2; k <= 8; k += 2)
        for (uint32_t servers = 1; servers <= 5; servers++) {
            qr_topology *t;
            cr_assert_eq(qr_topology_fattree(&t, k), QR_OK);
            uint32_t racks = qr_pingmesh_racks(t), per = qr_topology_hosts(t) / racks;
            uint32_t s = servers < per ? servers : per;
            qr_probe_pair *p;
            size_t n;
            cr_assert_eq(qr_pingmesh_plan(t, servers, &p, &n), QR_OK);
            cr_assert_eq(n, (size_t)racks * per * (per - 1) + (size_t)racks * (racks - 1) * s,
                         "k=%d servers=%u", k, servers);
            uint8_t *seen = calloc((size_t)qr_topology_hosts(t) * qr_topology_hosts(t), 1);
            for (size_t i = 0; i < n; i++) {
                uint32_t sa, sb, port;
                qr_topology_host_attach(t, p[i].src, &sa, &port);
                qr_topology_host_attach(t, p[i].dst, &sb, &port);
                cr_assert_neq(p[i].src, p[i].dst);
                cr_assert_eq(p[i].src_rack, sa);
                cr_assert_eq(p[i].dst_rack, sb);
                cr_assert_eq(p[i].src_pod, sa / (uint32_t)(k / 2));
                cr_assert_eq(p[i].dst_pod, sb / (uint32_t)(k / 2));
                if (sa != sb) {
                    /* the same-numbered server of each rack, one of the first `servers` */
                    cr_assert_eq(p[i].src % per, p[i].dst % per);
                    cr_assert_lt(p[i].src % per, s);
                }
                size_t key = (size_t)p[i].src * qr_topology_hosts(t) + p[i].dst;
                cr_assert(!seen[key], "pair %u>%u twice", p[i].src, p[i].dst);
                seen[key] = 1;
            }
            free(seen);
            free(p);
            qr_topology_destroy(t);
        }
    qr_topology *star;
    cr_assert_eq(qr_topology_star(&star, 5), QR_OK);
    qr_probe_pair *p;
    size_t n;
    cr_assert_eq(qr_pingmesh_plan(star, 2, &p, &n), QR_OK);
    cr_assert_eq(n, 20, "a star is one rack: every ordered pair");
    free(p);
    qr_topology_destroy(star);
}

static qr_scenario *scenario(const char *extra)
{
    qr_scenario *s;
    char err[QR_ERRBUF_SIZE], text[1024];
    snprintf(text, sizeof text, "[topology]\nk = 4\n[pingmesh]\ninterval = 10us\n%s", extra);
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s, text, "test", ".", err), QR_OK, "%s", err);
    return s;
}

Test(agents, schedule_ports_and_ids)
{
    qr_scenario *s = scenario("duration = 95us\n");
    const qr_config *c = qr_scenario_config(s);
    qr_topology *t;
    cr_assert_eq(qr_topology_of_config(&t, c), QR_OK);
    qr_pingmesh *pm;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pingmesh_create(&pm, c, t, err), QR_OK, "%s", err);
    cr_assert_not_null(pm);
    for (size_t i = 0; i < qr_pingmesh_pairs(pm); i++) {
        int64_t t0 = qr_pingmesh_send_time(pm, i, 0);
        cr_assert(t0 >= 0 && t0 < 10000, "phase %lld", (long long)t0);
        uint64_t j = 0;
        while (qr_pingmesh_send_time(pm, i, j) >= 0) {
            cr_assert_eq(qr_pingmesh_send_time(pm, i, j), t0 + (int64_t)j * 10000);
            j++;
        }
        cr_assert_geq(t0 + (int64_t)j * 10000, 95000, "probing ends at the duration");
        cr_assert_lt(t0 + (int64_t)(j - 1) * 10000, 95000);
    }
    /* a host's source ports go round the ephemeral range in turn */
    uint16_t first = 0, port;
    uint32_t probe;
    for (uint32_t i = 0; i < QR_PROBE_PORTS + 3; i++) {
        cr_assert_eq(qr_pingmesh_sent(pm, 0, i, &probe, &port), QR_OK);
        cr_assert_eq(probe, i);
        cr_assert(port >= QR_PROBE_FIRST_PORT && port < QR_PROBE_FIRST_PORT + QR_PROBE_PORTS);
        if (i == 0)
            first = port;
        else
            cr_assert_eq(port,
                         QR_PROBE_FIRST_PORT + (first - QR_PROBE_FIRST_PORT + i) % QR_PROBE_PORTS);
    }
    qr_pingmesh_dropped(pm, 5, 1, 3, 2, QR_DROP_FAULT, 77);
    qr_pingmesh_dropped(pm, 5, 0, 4, 1, QR_DROP_THRESHOLD, 78); /* the first drop counts */
    qr_pingmesh_answered(pm, 6, 500);
    qr_pingmesh_answered(pm, 6, 900);
    qr_row_probe r;
    qr_pingmesh_row(pm, 5, &r);
    cr_assert_eq(r.lost_in, 2);
    cr_assert_eq(r.drop_sw, 3);
    cr_assert_eq(r.drop_reason, QR_DROP_FAULT);
    cr_assert_eq(r.rtt_ns, -1);
    qr_pingmesh_row(pm, 6, &r);
    cr_assert_eq(r.rtt_ns, 494, "the first answer counts: sent at 6, answered at 500");
    qr_pingmesh_destroy(pm);
    /* packet ids: round trip, and no flow direction's id is a probe's */
    uint64_t st = 7;
    for (int i = 0; i < 10000; i++) {
        uint32_t id = (uint32_t)(rnd_next(&st) % 0x7fffffffu), got;
        int answer = i % 2, a;
        cr_assert(qr_probe_of_packet(qr_probe_packet_id(id, answer), &got, &a));
        cr_assert_eq(got, id);
        cr_assert_eq(a, answer);
        uint32_t dir = (uint32_t)(rnd_next(&st) % 0x80000000u);
        cr_assert(!qr_probe_of_packet(qr_packet_id(dir, id), &got, &a));
    }
    qr_five_tuple ft = {1, 2, 40000, QR_PROBE_PORT, QR_PROBE_PROTO};
    cr_assert(qr_probe_five_tuple(&ft));
    ft.proto = 6;
    cr_assert(!qr_probe_five_tuple(&ft), "a TCP flow to port 8765 is no probe");
    /* off by default */
    qr_scenario *off;
    cr_assert_eq(qr_scenario_create(&off), QR_OK);
    cr_assert_eq(qr_pingmesh_create(&pm, qr_scenario_config(off), t, err), QR_OK);
    cr_assert_null(pm);
    qr_scenario_destroy(off);
    qr_topology_destroy(t);
    qr_scenario_destroy(s);
}

/* A synthetic probe log of scenario s: `rounds` probes per pair, each request and answer crossing
 * its exact ECMP path; every crossing of a faulty link loses it with probability p, and every
 * probe is lost with probability base besides. Faults: directed link ids. Writes truth.h5 to
 * path. */
/* 1: a probe whose path crosses a faulty link and survives waits ten times longer (a congested
 * queue delays what it does not drop); 0: it does not (a silent drop delays nothing). */
static int g_congested;

static void synthetic(const char *path, qr_scenario *s, const uint32_t *faulty, size_t nf, double p,
                      double base, int rounds, uint64_t seed)
{
    const qr_config *c = qr_scenario_config(s);
    qr_topology *t;
    cr_assert_eq(qr_topology_of_config(&t, c), QR_OK);
    qr_pingmesh *pm;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pingmesh_create(&pm, c, t, err), QR_OK, "%s", err);
    uint8_t *bad = calloc(qr_topology_links(t), 1);
    for (size_t i = 0; i < nf; i++)
        bad[faulty[i]] = 1;
    uint64_t st = seed;
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < qr_pingmesh_pairs(pm); i++) {
            const qr_probe_pair *pr = qr_pingmesh_pair(pm, i);
            int64_t now = (int64_t)(r * qr_pingmesh_pairs(pm) + i) * 100;
            uint32_t probe;
            uint16_t sport;
            cr_assert_eq(qr_pingmesh_sent(pm, i, now, &probe, &sport), QR_OK);
            qr_five_tuple q = {qr_topology_host_addr(t, pr->src), qr_topology_host_addr(t, pr->dst),
                               sport, QR_PROBE_PORT, QR_PROBE_PROTO};
            qr_five_tuple a = {q.dst_ip, q.src_ip, QR_PROBE_PORT, sport, QR_PROBE_PROTO};
            int lost = 0, slow = 0;
            for (int leg = 0; leg < 2 && !lost; leg++) {
                uint32_t links[8];
                size_t n;
                cr_assert_eq(
                    qr_topology_path_links(t, leg ? pr->dst : pr->src, leg ? &a : &q, links, 8, &n),
                    QR_OK);
                for (size_t h = 0; h < n && !lost; h++) {
                    if (!bad[links[h]])
                        continue;
                    slow = 1;
                    if (rnd_uniform(&st) < p) {
                        lost = 1;
                        qr_node from, to;
                        uint32_t port;
                        qr_topology_link_ends(t, links[h], &from, &to, &port);
                        uint32_t sw = from.kind == QR_NODE_HOST ? to.index : from.index;
                        qr_pingmesh_dropped(pm, probe, leg, sw, port, QR_DROP_FAULT, now + 10);
                    }
                }
                if (leg == 0 && !lost)
                    qr_pingmesh_echoed(pm, probe);
            }
            if (!lost && rnd_uniform(&st) < base) {
                lost = 1;
                qr_pingmesh_dropped(pm, probe, 0, pr->src_rack, 0, QR_DROP_THRESHOLD, now + 5);
            }
            if (!lost)
                qr_pingmesh_answered(pm, probe,
                                     now + (slow && g_congested ? 10 : 1) *
                                               (20000 + (int64_t)(rnd_next(&st) % 5000)));
        }
    size_t np = qr_pingmesh_probes(pm);
    qr_row_probe *rows = malloc(np * sizeof *rows);
    for (size_t i = 0; i < np; i++)
        qr_pingmesh_row(pm, i, &rows[i]);
    qr_row_link_fault *lf = calloc(nf ? nf : 1, sizeof *lf);
    for (size_t i = 0; i < nf; i++) {
        snprintf(lf[i].kind, sizeof lf[i].kind, "gray");
        lf[i].link = faulty[i];
        lf[i].share = p;
    }
    qr_truth_info ti = {0};
    ti.end = QR_END_COMPLETED;
    ti.sim_end_ns = (int64_t)rounds * (int64_t)qr_pingmesh_pairs(pm) * 100 + 10000000;
    ti.link_faults = lf;
    ti.n_link_faults = nf;
    ti.probed = 1;
    ti.probes = rows;
    ti.n_probes = np;
    cr_assert_eq(qr_truth_write(path, s, &ti, NULL, 0, NULL, 0, err), QR_OK, "%s", err);
    /* the agents' log, the analysis's only input, beside it */
    char log[300];
    snprintf(log, sizeof log, "%s.log.h5", path);
    cr_assert_eq(qr_probe_log_write(log, s, NULL, ti.sim_end_ns, NULL, 0, rows, np, err), QR_OK,
                 "%s", err);
    free(rows);
    free(lf);
    free(bad);
    qr_pingmesh_destroy(pm);
    qr_topology_destroy(t);
}

static char g_path[256], g_log[300];

static void setup(void)
{
    snprintf(g_path, sizeof g_path, "/tmp/qr-test-pingmesh-%d.h5", (int)getpid());
    snprintf(g_log, sizeof g_log, "%s.log.h5", g_path);
}

static void teardown(void)
{
    unlink(g_path);
    unlink(g_log);
}

/* The rule on a planted fault: the first flagged place is `want` and every flagged place but
 * noise is right; returns the summary. */
static qr_row_pm_summary flags_first(qr_scenario *s, const char *links, const char *want, double p,
                                     double base, uint64_t seed)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_of_config(&t, qr_scenario_config(s)), QR_OK);
    uint32_t ids[64];
    size_t nf = 0;
    char buf[512], err[QR_ERRBUF_SIZE];
    snprintf(buf, sizeof buf, "%s", links);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        size_t m;
        cr_assert_eq(qr_topology_link_parse(t, tok, ids + nf, &m, err), QR_OK, "%s", err);
        nf += m;
    }
    synthetic(g_path, s, ids, nf, p, base, 60, seed);
    qr_pingmesh_opts o;
    qr_pingmesh_opts_default(&o);
    qr_pingmesh_result r;
    cr_assert_eq(qr_pingmesh_evaluate(g_log, g_path, &o, &r, err), QR_OK, "%s", err);
    cr_assert_geq(r.n_places, 1);
    /* the analysis is the same without the truth: only the scoring columns are missing */
    qr_pingmesh_result bare;
    cr_assert_eq(qr_pingmesh_evaluate(g_log, NULL, &o, &bare, err), QR_OK, "%s", err);
    cr_assert_eq(bare.n_places, r.n_places);
    for (size_t i = 0; i < r.n_places; i++)
        cr_assert(bare.places[i].flagged == r.places[i].flagged &&
                      !strcmp(bare.places[i].name, r.places[i].name) && !bare.places[i].faulty,
                  "place %zu", i);
    cr_assert_not(bare.has_truth);
    qr_pingmesh_free(&bare);
    cr_assert_eq(r.places[0].flagged, 1, "%s: nothing flagged", links);
    cr_assert_str_eq(r.places[0].name, want, "%s", links);
    cr_assert(r.places[0].faulty);
    /* its round trips say which kind of loss it is */
    cr_assert_str_eq(r.places[0].latency, g_congested ? "congestion" : "silent",
                     "%s: p99 %lld, "
                     "rest %lld",
                     links, (long long)r.places[0].rtt_p99_ns,
                     (long long)r.places[0].rest_rtt_p99_ns);
    cr_assert_float_eq(r.summary.recall, 1.0, 1e-12, "%s", links);
    cr_assert_gt(r.summary.detect_after, 0);
    cr_assert_leq(r.summary.detect_after, r.summary.scored);
    qr_row_pm_summary sum = r.summary;
    qr_pingmesh_free(&r);
    qr_topology_destroy(t);
    return sum;
}

TestSuite(rule, .init = setup, .fini = teardown);

Test(rule, flags_the_place_a_fault_points_at)
{
    qr_scenario *s = scenario("");
    /* k=4: edges s0-s7, aggregation s8-s15, core s16-s19; hosts h0-h15 */
    qr_row_pm_summary a = flags_first(s, "s8-s16", "pod 0", 0.05, 0, 1);
    cr_assert_float_eq(a.precision, 1.0, 1e-12, "no noise: only right places");
    flags_first(s, "s13-s19", "pod 2", 0.05, 0, 2);
    flags_first(s, "s2-s10", "rack s2", 0.05, 0, 3);
    flags_first(s, "h5-s2", "h5", 0.05, 0, 4);
    /* every link of core switch s16: all pods' traffic through it, the spine */
    flags_first(s, "s16-s8,s16-s10,s16-s12,s16-s14", "spine", 0.05, 0, 5);
    /* under background loss the fault still comes first */
    flags_first(s, "s8-s16", "pod 0", 0.05, 0.002, 6);
    qr_scenario_destroy(s);
}

Test(rule, a_congested_place_delays_what_it_does_not_drop)
{
    qr_scenario *s = scenario("");
    g_congested = 1;
    flags_first(s, "s8-s16", "pod 0", 0.02, 0.0005, 7);
    g_congested = 0;
    qr_scenario_destroy(s);
}

Test(rule, flags_nothing_on_uniform_loss_and_conserves_probes)
{
    qr_scenario *s = scenario("timeout = 22us\n");
    char err[QR_ERRBUF_SIZE];
    synthetic(g_path, s, NULL, 0, 0, 0.003, 60, 11);
    qr_pingmesh_opts o;
    qr_pingmesh_opts_default(&o);
    qr_pingmesh_result r;
    cr_assert_eq(qr_pingmesh_evaluate(g_log, g_path, &o, &r, err), QR_OK, "%s", err);
    cr_assert_eq(r.summary.flagged, 0, "uniform loss points nowhere");
    cr_assert(isnan(r.summary.recall), "no faults: nothing to recall");
    /* conservation: pairs sum to the scored probes, cells to their pairs */
    uint64_t n = 0, l = 0, cn = 0, cl = 0;
    for (size_t i = 0; i < r.n_pairs; i++) {
        n += r.pairs[i].probes;
        l += r.pairs[i].lost;
    }
    for (size_t i = 0; i < r.n_racks * r.n_racks; i++) {
        cn += r.racks[i].probes;
        cl += r.racks[i].lost;
    }
    cr_assert_eq(n, r.summary.scored);
    cr_assert_eq(l, r.summary.lost);
    cr_assert_eq(cn, n);
    cr_assert_eq(cl, l);
    cr_assert_eq(r.summary.scored + r.summary.unresolved, r.summary.sent);
    cr_assert_eq(r.summary.answered + r.summary.lost, r.summary.scored);
    /* answers later than the timeout (22 us; they take 20-25 us) are losses, and late */
    cr_assert_gt(r.summary.late, 0);
    cr_assert_eq(r.summary.lost, r.summary.late + r.summary.congestion_lost);
    /* percentiles of pair 0 against a direct count */
    size_t nr;
    qr_h5_reader *h;
    qr_row_probe *rows;
    cr_assert_eq(qr_h5_open(&h, g_path, err), QR_OK);
    cr_assert_eq(qr_h5_read_rows(h, "/probes", &qr_schema_probe, (void **)&rows, &nr, err), QR_OK);
    qr_h5_close(h);
    int64_t v[1000];
    size_t m = 0;
    for (size_t i = 0; i < nr; i++)
        if (rows[i].pair == 0 && rows[i].rtt_ns >= 0 && rows[i].rtt_ns <= 22000)
            v[m++] = rows[i].rtt_ns;
    for (size_t i = 1; i < m; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    cr_assert_eq(r.pairs[0].p50_ns, qr_percentile_i64(v, m, 0.5));
    cr_assert_eq(r.pairs[0].p99_ns, qr_percentile_i64(v, m, 0.99));
    qr_h5_rows_free(rows);
    /* the SLA: its windows hold every scored probe and loss once, level by level in time order,
     * and a window breaches a given SLA exactly when above it */
    uint64_t sn = 0, sl = 0;
    for (size_t i = 0; i < r.n_sla; i++) {
        const qr_row_pm_sla *w = &r.sla[i];
        sn += w->probes;
        sl += w->lost;
        cr_assert_float_eq(w->drop_rate, (double)w->lost / (double)w->probes, 1e-12);
        cr_assert(w->p50_ns <= w->p99_ns && w->p99_ns <= w->p999_ns);
        cr_assert_eq(w->breach, 0, "no SLA given");
        if (i && !strcmp(w->level, r.sla[i - 1].level))
            cr_assert_gt(w->window, r.sla[i - 1].window);
    }
    cr_assert_eq(sn, r.summary.scored);
    cr_assert_eq(sl, r.summary.lost);
    qr_pingmesh_free(&r);
    o.sla_drop = 0.002;
    o.sla_p99_ns = 24000;
    cr_assert_eq(qr_pingmesh_evaluate(g_log, NULL, &o, &r, err), QR_OK, "%s", err);
    cr_assert_gt(r.n_sla, 0);
    for (size_t i = 0; i < r.n_sla; i++)
        cr_assert_eq(r.sla[i].breach, r.sla[i].drop_rate > 0.002 || r.sla[i].p99_ns > 24000);
    qr_pingmesh_free(&r);
    qr_scenario_destroy(s);
}

Test(rule, a_log_that_is_not_the_scenarios_is_an_error)
{
    qr_scenario *s = scenario("");
    synthetic(g_path, s, NULL, 0, 0, 0, 2, 1);
    qr_scenario_destroy(s);
    /* the same log under a scenario with a smaller plan: pairs out of range */
    qr_scenario *small = scenario("servers = 1\n");
    qr_h5_reader *h;
    qr_row_probe *rows;
    size_t nr;
    char err[QR_ERRBUF_SIZE], other[300];
    cr_assert_eq(qr_h5_open(&h, g_path, err), QR_OK);
    cr_assert_eq(qr_h5_read_rows(h, "/probes", &qr_schema_probe, (void **)&rows, &nr, err), QR_OK);
    qr_h5_close(h);
    snprintf(other, sizeof other, "%s.other.h5", g_path);
    qr_truth_info ti = {0};
    ti.sim_end_ns = 1000000000;
    ti.probed = 1;
    ti.probes = rows;
    ti.n_probes = nr;
    cr_assert_eq(qr_truth_write(other, small, &ti, NULL, 0, NULL, 0, err), QR_OK, "%s", err);
    char other_log[320];
    snprintf(other_log, sizeof other_log, "%s.log.h5", other);
    cr_assert_eq(qr_probe_log_write(other_log, small, NULL, ti.sim_end_ns, NULL, 0, rows, nr, err),
                 QR_OK, "%s", err);
    qr_pingmesh_opts o;
    qr_pingmesh_opts_default(&o);
    qr_pingmesh_result r;
    cr_assert_eq(qr_pingmesh_evaluate(other_log, other, &o, &r, err), QR_EFORMAT);
    cr_assert(strstr(err, "/probes row") && strstr(err, "plan"), "%s", err);
    /* a truth.h5 is not a probe log: the analysis refuses to read it */
    cr_assert_eq(qr_pingmesh_evaluate(other, NULL, &o, &r, err), QR_EFORMAT);
    cr_assert(strstr(err, "not a probe log"), "%s", err);
    unlink(other);
    unlink(other_log);
    qr_h5_rows_free(rows);
    qr_scenario_destroy(small);
}

Test(pingmesh, rule_options_parse_or_say_which_is_wrong)
{
    qr_pingmesh_opts o;
    qr_pingmesh_opts_default(&o);
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pingmesh_opts_parse(&o, "0.5%", "3", err), QR_OK, "%s", err);
    cr_assert_float_eq(o.alpha, 0.005, 1e-15);
    cr_assert_float_eq(o.ratio, 3.0, 0);
    cr_assert_eq(qr_pingmesh_opts_parse(&o, NULL, NULL, err), QR_OK);
    cr_assert_float_eq(o.alpha, 0.005, 1e-15, "NULL leaves an option alone");
    cr_assert_eq(qr_pingmesh_opts_parse(&o, "2", NULL, err), QR_EVALUE);
    cr_assert(strstr(err, "--alpha: '2' is not a share"), "%s", err);
    cr_assert_eq(qr_pingmesh_opts_parse(&o, NULL, "0.5", err), QR_EVALUE);
    cr_assert(strstr(err, "--ratio: '0.5' is not a number from 1"), "%s", err);
    cr_assert_eq(qr_pingmesh_opts_parse(&o, "0.1", "2e7", err), QR_EVALUE);
    cr_assert_float_eq(o.alpha, 0.005, 1e-15, "a refused pair changes nothing");
}

/* Pingmesh's drop rate from connect times: a connect after k lost handshakes waits rto (2^k - 1)
 * more than its round trip, for every k and every round trip up to rto / 8; one that never
 * completes shows the timeouts that fit in the wait. */
Test(pingmesh, connect_times_count_syn_timeouts)
{
    const int64_t rto = 1000000000;
    int failed;
    for (uint32_t k = 0; k < 6; k++)
        for (int64_t base = 0; base < rto / 8; base += rto / 997) {
            int64_t rtt = rto * ((INT64_C(1) << k) - 1) + base;
            cr_assert_eq(qr_pingmesh_syn_timeouts(rtt, 100 * rto, rto, &failed), k, "rtt %lld",
                         (long long)rtt);
            cr_assert_not(failed);
        }
    cr_assert_eq(qr_pingmesh_syn_timeouts(-1, 3500000000, rto, &failed), 2);
    cr_assert(failed);
    cr_assert_eq(qr_pingmesh_syn_timeouts(-1, 900000000, rto, &failed), 0, "no timeout fits");
    /* Windows' 3 s: Pingmesh's 3 s and 9 s connects */
    cr_assert_eq(qr_pingmesh_syn_timeouts(3000200000, 20 * rto, 3 * rto, &failed), 1);
    cr_assert_eq(qr_pingmesh_syn_timeouts(9000200000, 20 * rto, 3 * rto, &failed), 2);

    /* a log: 10 connects resolved within a 3.5 s wait (4 fast, 3 after one SYN timeout, 1 after
     * two, 2 never), 1 sent too late to tell */
    qr_scenario *s = scenario("timeout = 2ms\nconnect_wait = 3500ms\n");
    qr_row_probe_obs pr[11];
    int64_t rtts[11] = {300000,     400000,     500000, 600000, 1000300000, 1000400000,
                        1200000000, 3000500000, -1,     -1,     300000};
    for (int i = 0; i < 11; i++)
        pr[i] = (qr_row_probe_obs){(uint32_t)i, 0, 0, 1, 0, i < 10 ? i * 1000000 : 9000000000,
                                   rtts[i],     1};
    qr_probe_log log = {.scenario = s, .sim_end_ns = 10000000000, .probes = pr, .n_probes = 11};
    qr_row_pm_summary sum;
    memset(&sum, 0, sizeof sum);
    qr_pingmesh_connects(&log, rto, &sum);
    cr_assert_eq(sum.connect_wait_ns, 3500000000);
    cr_assert_eq(sum.connect_scored, 10);
    cr_assert_eq(sum.connect_failed, 2);
    cr_assert_eq(sum.connect_slow, 6);
    cr_assert_eq(sum.syn_timeouts, 3 + 2 + 2 * 2);
    cr_assert_float_eq(sum.connect_drop_rate, 0.6, 1e-12);
    cr_assert_float_eq(sum.syn_drop_rate, 9.0 / (9 + 8), 1e-12);
    qr_scenario_destroy(s);
    /* the agents gave up at the timeout: nothing to tell from connect times */
    s = scenario("timeout = 2ms\n");
    log.scenario = s;
    qr_pingmesh_connects(&log, rto, &sum);
    cr_assert(isnan(sum.connect_drop_rate));
    cr_assert_eq(sum.connect_scored, 0);
    qr_scenario_destroy(s);
}
