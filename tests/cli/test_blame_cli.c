/* qreplay blame (007) on planted faults (scenarios/faults/gray-k4.ini: a 2% gray cable under web
 * search and incast congestion; the same network with a hash-range blackhole instead): the planted
 * cable is ranked first at a clear margin and is the only cable the replay-filtered votes flag;
 * what blame.h5 holds is conserved against truth.h5 (every truth drop charged to one cable, fault
 * drops equal to what the faults report, every voter's votes summing to 1); the replay never drops
 * on the faulty cable; bad options and unknown fault targets are clear errors. */
#include <math.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"
#include "qreplay/schema_blame.h"

#include "harness.h"

TestSuite(blame_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

/* The planted run's blame.h5 tables; checks that hold for any run. */
static void check_conservation(const char *run, qr_row_blame_link **links_out, size_t *nl_out,
                               qr_row_blame_summary **sum_out, size_t *ns_out)
{
    char blame[512], truth[512];
    snprintf(blame, sizeof blame, "%s/blame.h5", run);
    snprintf(truth, sizeof truth, "%s/truth/truth.h5", run);
    size_t nl, nc, ns, nd, nf;
    qr_row_blame_link *l = rows_of(blame, "/links", &qr_schema_blame_link, &nl);
    qr_row_blame_conn *c = rows_of(blame, "/connections", &qr_schema_blame_conn, &nc);
    qr_row_blame_summary *s = rows_of(blame, "/summary", &qr_schema_blame_summary, &ns);
    qr_row_drop *d = rows_of(truth, "/drops", &qr_schema_drop, &nd);
    qr_row_link_fault *f = rows_of(truth, "/link_faults", &qr_schema_link_fault, &nf);
    cr_assert_eq(nl, 32 + 16, "a k=4 FatTree has 32 switch-switch and 16 host cables");
    cr_assert_eq(ns, 2, "007 and replay");
    uint64_t truth_fault = 0, planted = 0, charged_fault = 0, charged = 0;
    for (size_t i = 0; i < nd; i++)
        truth_fault += d[i].reason == QR_DROP_FAULT;
    for (size_t i = 0; i < nf; i++)
        planted += f[i].dropped;
    double votes = 0;
    uint64_t voters = 0, hops = 0;
    for (size_t i = 0; i < nl; i++) {
        charged_fault += l[i].fault_drops;
        charged += l[i].fault_drops + l[i].congestion_drops;
        votes += l[i].votes;
        voters += l[i].voters;
        if (l[i].faulty)
            cr_assert_eq(l[i].replay_drops, 0, "%s: the replay applies no fault", l[i].name);
    }
    cr_assert_gt(truth_fault, 0, "the fault dropped packets");
    cr_assert_eq(planted, truth_fault, "/link_faults counts every fault drop");
    cr_assert_eq(charged_fault, truth_fault, "every fault drop is charged to a cable");
    cr_assert_eq(charged, nd, "every truth drop is charged to one cable");
    for (size_t i = 0; i < nc; i++)
        hops += c[i].hops;
    cr_assert_eq(s[0].connections, nc);
    cr_assert(fabs(votes - (double)nc) < 1e-6, "each voter gives 1 vote: %g for %zu", votes, nc);
    cr_assert_eq(voters, hops, "each voter votes once per link of its path");
    qr_h5_rows_free(c);
    qr_h5_rows_free(d);
    qr_h5_rows_free(f);
    *links_out = l;
    *nl_out = nl;
    *sum_out = s;
    *ns_out = ns;
}

/* The planted cable: the only faulty one, first by 007 votes at margin x the second, and the only
 * cable the replay-filtered votes flag. */
static void finds_only(const qr_row_blame_link *l, size_t nl, const qr_row_blame_summary *s,
                       const char *name, double margin)
{
    const qr_row_blame_link *first = NULL, *second = NULL;
    for (size_t i = 0; i < nl; i++) {
        cr_assert_eq(l[i].faulty, strcmp(l[i].name, name) == 0, "%s", l[i].name);
        if (l[i].rank == 1)
            first = &l[i];
        if (l[i].rank == 2)
            second = &l[i];
        cr_assert_eq(l[i].replay_flagged, strcmp(l[i].name, name) == 0,
                     "%s: the replay's votes flag only the planted cable", l[i].name);
    }
    cr_assert(first && second);
    cr_assert_str_eq(first->name, name);
    cr_assert(first->flagged, "007 flags it");
    cr_assert_geq(first->votes, margin * second->votes, "%s %.2f votes, %s %.2f", first->name,
                  first->votes, second->name, second->votes);
    cr_assert_float_eq(s[0].recall, 1.0, 1e-12);
    cr_assert_float_eq(s[1].recall, 1.0, 1e-12);
    cr_assert_float_eq(s[1].precision, 1.0, 1e-12);
    cr_assert_gt(s[1].detect_after, 0);
}

Test(blame_cli, a_gray_cable_under_congestion)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini -o %s/g --quiet", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("blame %s/g", dir), 0, "%s", err);
    cr_assert(strstr(out, "s8-s16"), "%s", out);
    cr_assert(strstr(out, "FAULTY"), "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/g/figures/blame_topology.png", dir);
    cr_assert(exists(p), "%s", p);
    snprintf(p, sizeof p, "%s/g/figures/blame_curve.png", dir);
    cr_assert(exists(p), "%s", p);
    qr_row_blame_link *l;
    qr_row_blame_summary *s;
    size_t nl, ns;
    snprintf(p, sizeof p, "%s/g", dir);
    check_conservation(p, &l, &nl, &s, &ns);
    finds_only(l, nl, s, "s8-s16", 1.5);
    /* congestion drops exist elsewhere: the noise 007 has to see past */
    uint64_t congestion = 0;
    for (size_t i = 0; i < nl; i++)
        congestion += l[i].congestion_drops;
    cr_assert_gt(congestion, 0);
    qr_h5_rows_free(l);
    qr_h5_rows_free(s);
    /* 007 alone, stricter threshold: the same ranking, no replay table */
    cr_assert_eq(
        qreplay("blame %s/g --no-replay --threshold 5%% -o %s/b2.h5 --no-figures", dir, dir), 0,
        "%s", err);
    snprintf(p, sizeof p, "%s/b2.h5", dir);
    l = rows_of(p, "/links", &qr_schema_blame_link, &nl);
    s = rows_of(p, "/summary", &qr_schema_blame_summary, &ns);
    cr_assert_eq(ns, 1);
    for (size_t i = 0; i < nl; i++)
        if (l[i].rank == 1)
            cr_assert_str_eq(l[i].name, "s8-s16");
    qr_h5_rows_free(l);
    qr_h5_rows_free(s);
}

/* Nothing planted: blame says what it flagged and the congestion there, and no precision (there
 * is nothing to be precise about: unknown, not 0%). */
Test(blame_cli, no_fault_planted_no_precision)
{
    cr_assert_eq(
        qreplay(
            "runtime scenarios/faults/gray-k4.ini --set faults.gray= --set traffic.duration=3ms "
            "-o %s/n --quiet",
            dir),
        0, "%s", err);
    cr_assert_eq(qreplay("blame %s/n --no-replay --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "precision and recall do not apply"), "%s", out);
    cr_assert_null(strstr(out, "FAULTY"), "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/n/blame.h5", dir);
    size_t ns, nl;
    qr_row_blame_summary *s = rows_of(p, "/summary", &qr_schema_blame_summary, &ns);
    qr_row_blame_link *l = rows_of(p, "/links", &qr_schema_blame_link, &nl);
    cr_assert_eq(ns, 1);
    cr_assert_eq(s[0].faulty, 0);
    cr_assert(isnan(s[0].precision) && isnan(s[0].recall), "%g %g", s[0].precision, s[0].recall);
    uint64_t cong = 0, flagged = 0;
    for (size_t i = 0; i < nl; i++)
        if (l[i].flagged) {
            cong += l[i].congestion_drops;
            flagged++;
        }
    cr_assert_gt(flagged, 0, "the incasts' congestion drops made 007 flag something");
    char want[96];
    snprintf(want, sizeof want, "the truth counts %llu congestion drops", (unsigned long long)cong);
    cr_assert(strstr(out, want), "%s in %s", want, out);
    qr_h5_rows_free(s);
    qr_h5_rows_free(l);
}

Test(blame_cli, a_hash_range_blackhole)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set faults.gray= --set "
                         "'faults.blackhole=s1-s9 40%%' -o %s/b --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("blame %s/b --no-figures --quiet", dir), 0, "%s", err);
    char p[512];
    snprintf(p, sizeof p, "%s/b", dir);
    qr_row_blame_link *l;
    qr_row_blame_summary *s;
    size_t nl, ns;
    check_conservation(p, &l, &nl, &s, &ns);
    finds_only(l, nl, s, "s1-s9", 1.5);
    qr_h5_rows_free(l);
    qr_h5_rows_free(s);
}

Test(blame_cli, bad_input_is_a_clear_error)
{
    cr_assert_eq(qreplay("blame %s/none", dir), 1);
    cr_assert(strstr(err, "qreplay blame:"), "%s", err);
    cr_assert_eq(qreplay("blame %s --threshold 0%%", dir), 2);
    cr_assert(strstr(err, "--threshold"), "%s", err);
    cr_assert_eq(qreplay("blame %s --replay ../x", dir), 2);
    cr_assert_eq(qreplay("blame %s --no-replay --arrivals x.qra", dir), 2);
    /* captures of an unknown network: no path to vote along, refused; taken in the scenario's
     * network: its paths */
    char map[512];
    snprintf(map, sizeof map, "%s/web.csv", dir);
    FILE *m = fopen(map, "w");
    cr_assert_not_null(m);
    fprintf(m, "10.78.1.1,0,http-lossy-client.pcap\n10.78.2.1,1\n");
    fclose(m);
    cr_assert_eq(
        qreplay("import scenarios/single-switch.ini tests/data/captures/http-lossy-client.pcap "
                "--map %s -o %s/web --quiet",
                map, dir),
        0, "%s", err);
    cr_assert_eq(qreplay("blame %s/web --no-replay --no-figures", dir), 1);
    cr_assert(strstr(err, "the captures' network is unknown"), "%s", err);
    cr_assert_eq(
        qreplay("import scenarios/single-switch.ini tests/data/captures/http-lossy-client.pcap "
                "--map %s --network scenario -o %s/web2 --quiet",
                map, dir),
        0, "%s", err);
    cr_assert_eq(qreplay("blame %s/web2 --no-replay --no-figures", dir), 0, "%s", err);
    /* unknown fault targets: the key, the rule and why; nothing written */
    const char *bad[][2] = {
        {"faults.gray=s8>s99 1%", "[faults] gray: rule 1 ('s8>s99'): no switch s99"},
        {"faults.rate=s0>s1 1Gbps", "s0 and s1 are not linked"},
        {"faults.blackhole=h16>s7 5%", "no host h16"},
        {"faults.delay=s8>s16 5us", "write A-B"}};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_neq(qreplay("runtime scenarios/faults/gray-k4.ini --set '%s' -o %s/x%zu --quiet",
                              bad[i][0], dir, i),
                      0);
        cr_assert(strstr(err, bad[i][1]), "%s", err);
        char p[512];
        snprintf(p, sizeof p, "%s/x%zu/recording.h5", dir, i);
        cr_assert(!exists(p), "%s", p);
    }
}
