/* Pingmesh's black-hole rule (pingmesh_analyze.h qr_pingmesh_blackholes) on synthetic probe logs
 * whose losses come from the runtime's own link faults (linkfault.h) on the exact ECMP path of each
 * probe and its answer: address black holes planted at every edge switch in turn flag that ToR,
 * at every pod's aggregation switch that podset; no flag is ever wrong; gray links and uniform loss
 * flag nothing; and every symptom pair is explained at most once. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/linkfault.h"
#include "qreplay/pingmesh.h"
#include "qreplay/pingmesh_score.h"
#include "qreplay/probelog.h"
#include "qreplay/scenario.h"
#include "qreplay/schema_pingmesh.h"
#include "qreplay/truth.h"

static char g_path[256], g_log[300];

static void setup(void)
{
    snprintf(g_path, sizeof g_path, "/tmp/qr-test-pm-bhole-%d.h5", (int)getpid());
    snprintf(g_log, sizeof g_log, "%s.log.h5", g_path);
}

static void teardown(void)
{
    unlink(g_path);
    unlink(g_log);
}

TestSuite(bhole, .init = setup, .fini = teardown);

static uint64_t rnd_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Does a packet of ft from host `from` survive its path (the runtime's own fault decision at each
 * switch it leaves, the sender's uplink included)? */
static int survives(const qr_topology *t, qr_link_faults *lf, uint32_t from,
                    const qr_five_tuple *ft)
{
    uint32_t links[8];
    size_t n;
    cr_assert_eq(qr_topology_path_links(t, from, ft, links, 8, &n), QR_OK);
    for (size_t h = 0; h < n; h++) {
        qr_node a, b;
        uint32_t port;
        qr_topology_link_ends(t, links[h], &a, &b, &port);
        if (a.kind == QR_NODE_HOST)
            continue; /* taken at the switch it reaches (qr_link_faults_packet) */
        if (qr_link_faults_packet(lf, a.index, port, ft, NULL))
            return 0;
    }
    return 1;
}

/* A k=4 run of `rounds` probes per pair under [faults] gray and blackhole texts, with background
 * loss `base`: the truth (its /link_faults) at g_path, the agents' log beside it. */
static void synthetic(const char *gray, const char *bhole, double base, int rounds, uint64_t seed)
{
    char text[1024], err[QR_ERRBUF_SIZE];
    snprintf(text, sizeof text,
             "[topology]\nk = 4\n[pingmesh]\ninterval = 10us\n[faults]\ngray = %s\nblackhole = "
             "%s\n",
             gray, bhole);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s, text, "test", ".", err), QR_OK, "%s", err);
    const qr_config *c = qr_scenario_config(s);
    qr_topology *t;
    cr_assert_eq(qr_topology_of_config(&t, c), QR_OK);
    qr_link_fault_texts lt = {{gray, bhole, NULL, NULL}};
    qr_link_faults *lf = NULL;
    cr_assert_eq(qr_link_faults_create(&lf, &lt, t, seed, err), QR_OK, "%s", err);
    qr_pingmesh *pm;
    cr_assert_eq(qr_pingmesh_create(&pm, c, t, err), QR_OK, "%s", err);
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
            if (!survives(t, lf, pr->src, &q)) {
                qr_pingmesh_dropped(pm, probe, 0, pr->src_rack, 0, QR_DROP_FAULT, now + 5);
                continue;
            }
            qr_pingmesh_echoed(pm, probe);
            if (!survives(t, lf, pr->dst, &a)) {
                qr_pingmesh_dropped(pm, probe, 1, pr->dst_rack, 0, QR_DROP_FAULT, now + 10);
                continue;
            }
            if ((double)(rnd_next(&st) >> 11) * 0x1.0p-53 < base) {
                qr_pingmesh_dropped(pm, probe, 0, pr->src_rack, 0, QR_DROP_THRESHOLD, now + 5);
                continue;
            }
            qr_pingmesh_answered(pm, probe, now + 20000 + (int64_t)(rnd_next(&st) % 5000));
        }
    size_t np = qr_pingmesh_probes(pm), nf = qr_link_faults_count(lf);
    qr_row_probe *rows = malloc(np * sizeof *rows);
    for (size_t i = 0; i < np; i++)
        qr_pingmesh_row(pm, i, &rows[i]);
    qr_row_link_fault *lfr = calloc(nf ? nf : 1, sizeof *lfr);
    for (size_t i = 0; i < nf; i++) {
        uint32_t link;
        const qr_link_fault *f = qr_link_faults_get(lf, i, &link);
        snprintf(lfr[i].kind, sizeof lfr[i].kind, "%s", qr_link_fault_kind_name(f->kind));
        lfr[i].link = link;
        lfr[i].share = f->share;
    }
    qr_truth_info ti = {0};
    ti.end = QR_END_COMPLETED;
    ti.sim_end_ns = (int64_t)rounds * (int64_t)qr_pingmesh_pairs(pm) * 100 + 10000000;
    ti.link_faults = lfr;
    ti.n_link_faults = nf;
    ti.probed = 1;
    ti.probes = rows;
    ti.n_probes = np;
    cr_assert_eq(qr_truth_write(g_path, s, &ti, NULL, 0, NULL, 0, err), QR_OK, "%s", err);
    cr_assert_eq(qr_probe_log_write(g_log, s, NULL, ti.sim_end_ns, NULL, 0, rows, np, err), QR_OK,
                 "%s", err);
    free(rows);
    free(lfr);
    qr_pingmesh_destroy(pm);
    qr_link_faults_destroy(lf);
    qr_topology_destroy(t);
    qr_scenario_destroy(s);
}

/* The rule on the run just made; the invariants every run keeps: a flagged row is eligible, the
 * flagged rows' pairs are disjoint (their sum is at most the symptom pairs), the analysis is the
 * same without the truth. Returns the number of wrong flags; *first the first flagged row's name
 * ("" none). */
static int run_rule(char *first, size_t size, int *tied)
{
    char err[QR_ERRBUF_SIZE];
    qr_pingmesh_opts o;
    qr_pingmesh_opts_default(&o);
    qr_pingmesh_result r, bare;
    cr_assert_eq(qr_pingmesh_evaluate(g_log, g_path, &o, &r, err), QR_OK, "%s", err);
    cr_assert_eq(qr_pingmesh_evaluate(g_log, NULL, &o, &bare, err), QR_OK, "%s", err);
    cr_assert_eq(bare.n_bholes, r.n_bholes);
    uint32_t explained = 0;
    int wrong = 0;
    snprintf(first, size, "%s", "");
    for (size_t i = 0; i < r.n_bholes; i++) {
        const qr_row_pm_bhole *b = &r.bholes[i];
        cr_assert_str_eq(bare.bholes[i].name, b->name);
        cr_assert_eq(bare.bholes[i].flagged, b->flagged);
        cr_assert_eq(bare.bholes[i].faulty, 0, "the analysis alone knows no fault");
        cr_assert_float_eq(b->score, (double)b->symptomatic / b->members, 1e-12);
        if (!b->flagged)
            continue;
        cr_assert_eq(b->flagged, i + 1, "flagged rows first, in order");
        cr_assert_geq(b->pairs, 2);
        cr_assert_geq(b->score, strcmp(b->kind, "tor") ? o.bh_pod : o.bh_tor);
        explained += b->pairs;
        wrong += !b->faulty;
        if (b->flagged == 1)
            snprintf(first, size, "%s", b->name);
    }
    cr_assert_leq(explained, r.bh_symptom_pairs, "a symptom pair explained twice");
    *tied = r.bh_tied;
    qr_pingmesh_free(&r);
    qr_pingmesh_free(&bare);
    return wrong;
}

/* Plant each of `n` black holes (bh[i]) in turn: none may flag a wrong place, the first flag is
 * want[i] or nothing at a tie; returns how many were found. */
static int plant_each(char bh[][256], char want[][32], int n, uint64_t seed)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        char first[32];
        int tied;
        synthetic("", bh[i], 0.001, 20, seed + (uint64_t)i);
        cr_assert_eq(run_rule(first, sizeof first, &tied), 0, "%s: a wrong flag", bh[i]);
        found += !strcmp(first, want[i]);
        cr_assert(!strcmp(first, want[i]) || (!*first && tied), "%s: first flag '%s'", bh[i],
                  first);
    }
    return found;
}

Test(bhole, every_tor_hole_flags_its_tor_and_nothing_wrong)
{
    char bh[8][256], want[8][32];
    /* each switch's ports down to its two servers: every pair of addresses in 40% of the hash
     * space is dropped there, whatever its ports */
    for (int sw = 0; sw < 8; sw++) {
        snprintf(bh[sw], sizeof bh[sw], "s%d:0 40%% addresses, s%d:1 40%% addresses", sw, sw);
        snprintf(want[sw], sizeof want[sw], "rack s%d", sw);
    }
    int found = plant_each(bh, want, 8, 100);
    cr_assert_geq(found, 7, "found %d of 8 ToR black holes", found);
}

Test(bhole, every_leaf_hole_flags_its_podset_and_nothing_wrong)
{
    char bh[4][256], want[4][32];
    for (int pod = 0; pod < 4; pod++) {
        int a = 8 + 2 * pod; /* the pod's first aggregation (Leaf) switch: every port */
        snprintf(bh[pod], sizeof bh[pod],
                 "s%d:0 50%% addresses, s%d:1 50%% addresses, s%d:2 50%% addresses, s%d:3 50%% "
                 "addresses",
                 a, a, a, a);
        snprintf(want[pod], sizeof want[pod], "pod %d", pod);
    }
    int found = plant_each(bh, want, 4, 200);
    cr_assert_geq(found, 3, "found %d of 4 Leaf black holes", found);
}

/* A gray cable drops a few probes of every pair crossing it, whatever their addresses: not the
 * black-hole symptom. Nor is uniform loss. A 5-tuple blackhole draws anew for each probe's new
 * port, so it drops a share of every pair's probes like a gray link; where that share is high
 * (here about 19% of each pair's probes at s0), pairs that happened to lose a quarter of their 20
 * probes show the symptom, and the ToR they point at is the right one. */
Test(bhole, gray_links_and_uniform_loss_are_not_black_holes)
{
    const char *gray[] = {"s8-s16 5%", "s0-s8 5%", "h3-s1 5%", "", ""};
    const char *ports[] = {"", "", "", "", "s0:0 10%, s0:1 10%"};
    for (int i = 0; i < 5; i++) {
        synthetic(gray[i], ports[i], i == 3 ? 0.01 : 0.001, 20, 300 + (uint64_t)i);
        char first[32];
        int tied;
        run_rule(first, sizeof first, &tied);
        if (*ports[i])
            cr_assert(!*first || !strcmp(first, "rack s0"), "%s: flagged %s", ports[i], first);
        else
            cr_assert_str_eq(first, "", "%s: flagged %s", gray[i], first);
    }
}

Test(bhole, address_rules_parse_and_others_are_refused)
{
    qr_link_fault r[4];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(
        qr_link_fault_rules_parse(QR_LINK_BLACKHOLE, "s0:1 30% addresses, s1>s9 5%", r, 4, &n, err),
        QR_OK, "%s", err);
    cr_assert_eq(n, 2);
    cr_assert_eq(r[0].by_addr, 1);
    cr_assert_eq(r[1].by_addr, 0);
    cr_assert_eq(qr_link_fault_rules_parse(QR_LINK_BLACKHOLE, "s0:1 30% ports", r, 4, &n, err),
                 QR_EVALUE);
    cr_assert(strstr(err, "'LINK VALUE addresses'"), "%s", err);
    cr_assert_eq(qr_link_fault_rules_parse(QR_LINK_GRAY, "s0:1 3% addresses", r, 4, &n, err),
                 QR_EVALUE);
}
