/* qreplay blame (007) on planted faults (scenarios/faults/gray-k4.ini: a 2% gray cable under web
 * search and incast congestion; the same network with a hash-range blackhole instead): the planted
 * cable is ranked first at a clear margin and is the only cable the replay-filtered votes flag;
 * what blame.h5 holds is conserved against truth.h5 (every truth drop charged to one cable, fault
 * drops equal to what the faults report with the traceroutes' own, every voter's votes summing to
 * the share of its path it traced, whose paths are the ones its 5-tuple took); 007's comparators
 * explain every voter they can and are scored as /links says; the replay never
 * drops on the faulty cable; bad options and unknown fault targets are clear errors. */
#include <math.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/faults.h"
#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/schema_blame.h"
#include "qreplay/topology.h"
#include "qreplay/traceroute.h"

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
    uint64_t trace_fault = (uint64_t)attr_of(truth, "/", "trace_fault_drops");
    cr_assert_eq(planted, truth_fault + trace_fault,
                 "/link_faults counts every fault drop (traffic %llu, traceroutes %llu)",
                 (unsigned long long)truth_fault, (unsigned long long)trace_fault);
    cr_assert_eq(charged_fault, truth_fault, "every fault drop is charged to a cable");
    cr_assert_eq(charged, nd, "every truth drop is charged to one cable");
    double cast = 0;
    for (size_t i = 0; i < nc; i++) {
        hops += c[i].known;
        cast += c[i].hops ? (double)c[i].known / c[i].hops : 0;
    }
    cr_assert_eq(s[0].connections, nc);
    cr_assert_eq(s[0].traced + s[0].partial + s[0].untraced, nc);
    cr_assert_gt(s[0].traced + s[0].partial, 0, "voters' paths were traced");
    cr_assert(fabs(votes - cast) < 1e-6, "each voter gives its traced share: %g for %g", votes,
              cast);
    cr_assert(fabs(s[0].votes - cast) < 1e-6);
    cr_assert_eq(voters, hops, "each voter votes once per known link of its path");
    qr_h5_rows_free(c);
    qr_h5_rows_free(d);
    qr_h5_rows_free(f);
    *links_out = l;
    *nl_out = nl;
    *sum_out = s;
    *ns_out = ns;
}

/* The planted cable: the only faulty one, first by 007 votes at margin x the second, and flagged
 * by the replay-filtered votes; any other cable those flag is owed to a voter whose trace is
 * partial (a hop that did not answer hides the faulty cable from its votes), at most one each. */
static void finds_only(const qr_row_blame_link *l, size_t nl, const qr_row_blame_summary *s,
                       const char *name, double margin)
{
    const qr_row_blame_link *first = NULL, *second = NULL;
    uint32_t extra = 0;
    for (size_t i = 0; i < nl; i++) {
        cr_assert_eq(l[i].faulty, strcmp(l[i].name, name) == 0, "%s", l[i].name);
        if (l[i].rank == 1)
            first = &l[i];
        if (l[i].rank == 2)
            second = &l[i];
        if (strcmp(l[i].name, name) == 0)
            cr_assert(l[i].replay_flagged, "%s: the replay's votes flag the planted cable", name);
        else
            extra += l[i].replay_flagged;
    }
    cr_assert_leq(extra, s[1].partial, "%u other cables flagged, %u partial traces", extra,
                  s[1].partial);
    cr_assert(first && second);
    cr_assert_str_eq(first->name, name);
    cr_assert(first->flagged, "007 flags it");
    cr_assert_geq(first->votes, margin * second->votes, "%s %.2f votes, %s %.2f", first->name,
                  first->votes, second->name, second->votes);
    cr_assert_float_eq(s[0].recall, 1.0, 1e-12);
    cr_assert_float_eq(s[1].recall, 1.0, 1e-12);
    cr_assert_float_eq(s[1].precision, 1.0 / (1 + extra), 1e-12);
    cr_assert_gt(s[1].detect_after, 0);
}

/* Every cable a trace names is the one the direction's 5-tuple really took at that hop (ns-3's
 * forwarding and the core's routing agree), and most probes were answered. */
static void traces_are_true(const char *run)
{
    char e[QR_ERRBUF_SIZE];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, run, NULL, e), QR_OK, "%s", e);
    const qr_row_path *rows;
    size_t n, named = 0;
    cr_assert_eq(qr_recording_paths(rec, &rows, &n), 1, "the run traced");
    cr_assert_gt(n, 0);
    qr_topology *t;
    cr_assert_eq(qr_topology_of_config(&t, qr_scenario_config(qr_recording_scenario(rec))), QR_OK);
    for (size_t i = 0; i < n; i++) {
        uint32_t links[8];
        size_t nl;
        cr_assert_eq(qr_dir_links(qr_recording_flows(rec), t, rows[i].dir, links, 8, &nl), QR_OK);
        cr_assert_lt(rows[i].hop, nl);
        if (!rows[i].link[0])
            continue;
        char want[48];
        qr_topology_cable_name(t, links[rows[i].hop], want, sizeof want);
        cr_assert_str_eq(rows[i].link, want, "direction %u hop %u", rows[i].dir, rows[i].hop);
        named++;
    }
    cr_assert_gt(named, n * 3 / 4, "%zu of %zu cables known", named, n);
    qr_topology_destroy(t);
    qr_recording_close(rec);
}

/* 007's comparators on the same voters: four rows, the exact programs proven optimal, every
 * voter with a known link explained by each, the binary program's cover no larger than MAX
 * COVERAGE's, the integer program's drops at least the most losses of one voter, and the scores
 * the scorer gave agreeing with the cables /links calls faulty. */
static void comparators_agree(const char *run)
{
    char blame[512];
    snprintf(blame, sizeof blame, "%s/blame.h5", run);
    size_t nk, nb, nl, nc;
    qr_row_blame_comparator *k = rows_of(blame, "/comparators", &qr_schema_blame_comparator, &nk);
    qr_row_blame_blamed *b = rows_of(blame, "/blamed", &qr_schema_blame_blamed, &nb);
    qr_row_blame_link *l = rows_of(blame, "/links", &qr_schema_blame_link, &nl);
    qr_row_blame_conn *c = rows_of(blame, "/connections", &qr_schema_blame_conn, &nc);
    cr_assert_eq(nk, 4);
    const char *names[] = {"binary", "integer", "maxcov", "tomo"};
    uint32_t most = 0, known = 0;
    for (size_t i = 0; i < nc; i++) {
        most = c[i].losses > most ? c[i].losses : most;
        known += c[i].known > 0;
    }
    for (size_t m = 0; m < nk; m++) {
        cr_assert_str_eq(k[m].method, names[m]);
        cr_assert_eq(k[m].connections, nc);
        cr_assert_eq(k[m].unexplainable, nc - known);
        if (m < 2)
            cr_assert(k[m].optimal, "%s: %s", k[m].method, k[m].status);
        if (m < 3)
            cr_assert_eq(k[m].explained, known, "%s explains every voter with a known link",
                         k[m].method);
        uint32_t blamed = 0, faulty = 0;
        double sum = 0;
        for (size_t i = 0; i < nb; i++) {
            if (strcmp(b[i].method, k[m].method))
                continue;
            blamed++;
            sum += b[i].value;
            for (size_t j = 0; j < nl; j++)
                if (!strcmp(l[j].name, b[i].name))
                    faulty += l[j].faulty;
        }
        cr_assert_eq(blamed, k[m].flagged);
        cr_assert_eq(faulty, k[m].true_flagged, "%s", k[m].method);
        if (m == 1)
            cr_assert(sum == k[m].objective && sum >= most, "%g drops, %u most losses", sum, most);
    }
    cr_assert_leq(k[0].objective, k[2].objective, "the optimum is no larger than the greedy");
    qr_h5_rows_free(k);
    qr_h5_rows_free(b);
    qr_h5_rows_free(l);
    qr_h5_rows_free(c);
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
    traces_are_true(p);
    comparators_agree(p);
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

/* 007's epochs: the caps count per epoch and the votes are tallied per epoch; every voter falls in
 * exactly one epoch, each epoch's votes are its cables' votes, and the switches' own ICMP counters
 * agree with the agents' log (answers received no more than sent; sent and refused no more than
 * the probes) and stay within 007's bound. */
Test(blame_cli, epochs_tally_the_votes_and_the_icmp_bound_holds)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set traceroute.epoch=1ms --set "
                         "traceroute.per_host=3 -o %s/e --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("blame %s/e --no-figures --no-replay", dir), 0, "%s", err);
    cr_assert(strstr(out, "per epoch of 1ms"), "%s", out);
    cr_assert(strstr(out, "the bound held for every switch and epoch"), "%s", out);
    char p[512], rec[512];
    snprintf(p, sizeof p, "%s/e/blame.h5", dir);
    snprintf(rec, sizeof rec, "%s/e/recording.h5", dir);
    size_t ne, nl, ns, ni, nt;
    qr_row_blame_epoch *e = rows_of(p, "/epochs", &qr_schema_blame_epoch, &ne);
    qr_row_blame_epoch_link *l = rows_of(p, "/epoch_links", &qr_schema_blame_epoch_link, &nl);
    qr_row_blame_summary *s = rows_of(p, "/summary", &qr_schema_blame_summary, &ns);
    qr_row_icmp *ic = rows_of(rec, "/icmp", &qr_schema_icmp, &ni);
    qr_row_traceroute *tr = rows_of(rec, "/traceroutes", &qr_schema_traceroute, &nt);
    cr_assert_gt(ne, 1, "the run spans several epochs");
    uint32_t voters = 0;
    for (size_t i = 0; i < ne; i++) {
        voters += e[i].voters;
        double votes = 0;
        uint32_t flagged = 0;
        for (size_t k = 0; k < nl; k++)
            if (l[k].epoch == e[i].epoch && !strcmp(l[k].method, e[i].method)) {
                votes += l[k].votes;
                flagged += l[k].flagged;
            }
        cr_assert(fabs(votes - e[i].votes) < 1e-9, "epoch %lld", (long long)e[i].epoch);
        cr_assert_eq(flagged, e[i].flagged);
        if (i)
            cr_assert_gt(e[i].epoch, e[i - 1].epoch, "epochs in order");
    }
    cr_assert_eq(voters, s[0].connections, "every voter in one epoch");
    /* the caps per host and epoch: no host traced more than 3 times in one epoch */
    uint64_t sent = 0, refused = 0, answered = 0, max_sent = 0;
    for (size_t i = 0; i < ni; i++) {
        sent += ic[i].sent;
        refused += ic[i].refused;
        max_sent = ic[i].sent > max_sent ? ic[i].sent : max_sent;
    }
    uint32_t traces = 0;
    for (size_t i = 0; i < nt; i++) {
        answered += tr[i].replier != 0;
        traces = tr[i].trace + 1 > traces ? tr[i].trace + 1 : traces;
    }
    cr_assert_gt(answered, 0);
    cr_assert_leq(answered, sent, "an answer received was sent");
    cr_assert_leq(sent + refused, nt, "a switch answers or refuses a probe at most once");
    cr_assert_eq((uint64_t)attr_of(p, "/", "icmp_max_sent"), max_sent);
    cr_assert_eq((uint64_t)attr_of(p, "/", "icmp_over"), 0);
    cr_assert_eq((uint64_t)attr_of(p, "/", "icmp_per_host"), 3);
    qr_h5_rows_free(e);
    qr_h5_rows_free(l);
    qr_h5_rows_free(s);
    qr_h5_rows_free(ic);
    qr_h5_rows_free(tr);
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

/* A hash-range blackhole drops every packet of its directions, 007's probes too (they carry the
 * direction's 5-tuple): a blackholed direction's trace never gets past it, so at least its last
 * probe (the one that expires at the receiver's switch) is never answered. (SYNs resend after
 * 10 ms here, so the blackholed connections retransmit, and trace, within the run.) */
Test(blame_cli, a_hash_range_blackhole_hides_from_its_own_traces)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set faults.gray= --set "
                         "'faults.blackhole=s1-s9 40%%' --set tcp.syn_timeout=10ms -o %s/b --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("blame %s/b --no-figures --quiet", dir), 0, "%s", err);
    char p[512], rec[512], truth[512];
    snprintf(p, sizeof p, "%s/b", dir);
    qr_row_blame_link *l;
    qr_row_blame_summary *s;
    size_t nl, ns, np, nd;
    check_conservation(p, &l, &nl, &s, &ns);
    snprintf(rec, sizeof rec, "%s/b/recording.h5", dir);
    snprintf(truth, sizeof truth, "%s/b/truth/truth.h5", dir);
    qr_row_traceroute *t = rows_of(rec, "/traceroutes", &qr_schema_traceroute, &np);
    qr_row_drop *d = rows_of(truth, "/drops", &qr_schema_drop, &nd);
    uint32_t blackholed_traced = 0;
    for (size_t i = 0; i < np; i++) {
        int dropped = 0;
        for (size_t k = 0; k < nd && !dropped; k++)
            dropped = d[k].reason == QR_DROP_FAULT && d[k].dir == t[i].dir;
        int last = i + 1 == np || t[i + 1].trace != t[i].trace;
        if (!dropped || !last)
            continue;
        blackholed_traced++;
        cr_assert_eq(t[i].replier, 0,
                     "trace %u of blackholed direction %u: its last probe got "
                     "past the blackhole",
                     t[i].trace, t[i].dir);
    }
    cr_assert_gt(blackholed_traced, 0, "blackholed directions retransmitted and traced");
    cr_assert_gt(s[0].partial, 0, "their traces stop at the blackhole");
    qr_h5_rows_free(t);
    qr_h5_rows_free(d);
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
    cr_assert_eq(qreplay("blame %s --adjust most", dir), 2);
    cr_assert(strstr(err, "--adjust: 'most' is neither voters nor ecmp"), "%s", err);
    cr_assert_eq(qreplay("blame %s --hit-ratio 0%%", dir), 2);
    cr_assert(strstr(err, "--hit-ratio"), "%s", err);
    cr_assert_eq(qreplay("blame %s --solver-time soon", dir), 2);
    cr_assert(strstr(err, "--solver-time"), "%s", err);
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
    /* hosts share their only switch there: the one path needs no trace */
    cr_assert(strstr(out, "paths: 1 traced whole"), "%s", out);
    /* an unknown network with the user's own paths: 007 votes along them, in their names; a line
     * naming no captured connection is counted, not silently dropped */
    char paths[512];
    snprintf(paths, sizeof paths, "%s/paths.txt", dir);
    FILE *pf = fopen(paths, "w");
    cr_assert_not_null(pf);
    fprintf(pf, "# from my traceroutes\n"
                "10.78.2.1 8080 10.78.1.1 39430  tor-b agg-2 * agg-1 tor-a  # core silent\n"
                "10.78.1.1 39430 10.78.2.1 8080  tor-a agg-1 core-9 agg-2 tor-b\n"
                "10.9.9.9 1 10.9.9.8 2 x-y\n");
    fclose(pf);
    cr_assert_eq(
        qreplay("import scenarios/single-switch.ini tests/data/captures/http-lossy-client.pcap "
                "--map %s --paths %s -o %s/web3",
                map, paths, dir),
        0, "%s", err);
    cr_assert(strstr(out, "3 lines, 1 naming no captured connection"), "%s", out);
    cr_assert_eq(qreplay("blame %s/web3 --no-figures --adjust ecmp", dir), 2);
    cr_assert(strstr(err, "--adjust ecmp needs the network the packets crossed"), "%s", err);
    cr_assert_eq(qreplay("blame %s/web3 --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "0 traced whole, 1 in part"), "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/web3/blame.h5", dir);
    size_t nl, nc;
    qr_row_blame_link *l = rows_of(p, "/links", &qr_schema_blame_link, &nl);
    qr_row_blame_conn *c = rows_of(p, "/connections", &qr_schema_blame_conn, &nc);
    cr_assert_eq(nl, 5, "the path file's names, and only them: no scenario cable");
    cr_assert_eq(nc, 1, "the server's direction lost packets");
    cr_assert_eq(c[0].hops, 5);
    cr_assert_eq(c[0].known, 4);
    double votes = 0;
    for (size_t i = 0; i < nl; i++) {
        cr_assert_str_eq(l[i].layer, "traced");
        cr_assert_eq(l[i].link, UINT32_MAX);
        votes += l[i].votes;
        if (!strcmp(l[i].name, "core-9"))
            cr_assert_eq(l[i].voters, 0, "the other direction's path does not vote");
    }
    cr_assert_float_eq(votes, 4.0 / 5, 1e-9);
    qr_h5_rows_free(l);
    qr_h5_rows_free(c);
    /* a bad path file: the file, line and field */
    const char *badp[][2] = {
        {"10.78.1.1 39430 10.78.2.1\n", "paths.txt:1: expected SRC SPORT"},
        {"\n10.78.1.1 0 10.78.2.1 8080 a\n", "paths.txt:2: field 2, source port"},
        {"10.78.1.x 1 10.78.2.1 8080 a\n", "field 1, source address"}};
    for (size_t i = 0; i < sizeof badp / sizeof badp[0]; i++) {
        pf = fopen(paths, "w");
        fputs(badp[i][0], pf);
        fclose(pf);
        cr_assert_eq(
            qreplay("import scenarios/single-switch.ini tests/data/captures/http-lossy-client.pcap "
                    "--map %s --paths %s -o %s/web4 --quiet",
                    map, paths, dir),
            1, "%s", badp[i][0]);
        cr_assert(strstr(err, badp[i][1]), "%s: %s", badp[i][1], err);
        snprintf(p, sizeof p, "%s/web4", dir);
        cr_assert_not(exists(p), "nothing written");
    }
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
