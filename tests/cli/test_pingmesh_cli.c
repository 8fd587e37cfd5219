/* qreplay pingmesh on the planted gray cable (scenarios/faults/gray-k4.ini: s8-s16 drops 2% under
 * web search and incast congestion): the agents' probes cross the same faults and queues as the
 * traffic but stay out of the recording; every probe is answered, lost where truth says, or left
 * out at the end; the probes' fault drops and the flows' add up to what the fault reports; the
 * rule flags the planted cable's pod first; a run repeats exactly; bad input is a clear error. */
#include <math.h>
#include <sys/stat.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/pingmesh.h"
#include "qreplay/pingmesh_analyze.h"
#include "qreplay/probelog.h"
#include "qreplay/schema.h"
#include "qreplay/schema_pingmesh.h"

#include "harness.h"

TestSuite(pingmesh_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

static void check_run(const char *run)
{
    char truth[512], pm[512], rec[512];
    snprintf(truth, sizeof truth, "%s/truth/truth.h5", run);
    snprintf(pm, sizeof pm, "%s/pingmesh.h5", run);
    snprintf(rec, sizeof rec, "%s/recording.h5", run);
    size_t np, nd, nf, ndir, nh, ns, npl;
    qr_row_probe *p = rows_of(truth, "/probes", &qr_schema_probe, &np);
    qr_row_drop *d = rows_of(truth, "/drops", &qr_schema_drop, &nd);
    qr_row_link_fault *f = rows_of(truth, "/link_faults", &qr_schema_link_fault, &nf);
    qr_row_direction *dir = rows_of(truth, "/directions", &qr_schema_direction, &ndir);
    qr_row_host *h = rows_of(rec, "/hosts", &qr_schema_host, &nh);
    qr_row_pm_summary *s = rows_of(pm, "/summary", &qr_schema_pm_summary, &ns);
    qr_row_pm_place *pl = rows_of(pm, "/places", &qr_schema_pm_place, &npl);
    cr_assert_eq(ns, 1);
    cr_assert_eq(s->sent, np);
    cr_assert_gt(np, 10000);
    /* probes are not recorded: the hosts' packets are exactly the flows' */
    uint64_t host_packets = 0, dir_sent = 0, planted = 0, flow_faults = 0, probe_faults = 0;
    for (size_t i = 0; i < nh; i++)
        host_packets += h[i].packets;
    for (size_t i = 0; i < ndir; i++)
        dir_sent += dir[i].sent;
    cr_assert_eq(host_packets, dir_sent, "no probe in the recording");
    for (size_t i = 0; i < nd; i++) {
        cr_assert_lt(d[i].dir, ndir, "no probe in /drops");
        flow_faults += d[i].reason == QR_DROP_FAULT;
    }
    for (size_t i = 0; i < nf; i++)
        planted += f[i].dropped;
    /* every probe: answered, or lost where truth says, or still on its way at the end */
    uint64_t answered = 0, lost = 0, open = 0;
    for (size_t i = 0; i < np; i++) {
        cr_assert_eq(p[i].probe, i);
        if (i)
            cr_assert_geq(p[i].sent_ns, p[i - 1].sent_ns, "probe numbers are in send order");
        if (p[i].rtt_ns >= 0) {
            answered++;
            cr_assert_eq(p[i].lost_in, 0, "probe %zu answered and lost", i);
            cr_assert(p[i].echoed);
        } else if (p[i].lost_in) {
            lost++;
            cr_assert_eq(p[i].echoed, p[i].lost_in == 2, "probe %zu", i);
            probe_faults += p[i].drop_reason == QR_DROP_FAULT;
        } else
            open++;
    }
    cr_assert_eq(answered + lost + open, np);
    cr_assert_gt(probe_faults, 0, "the gray cable drops probes too");
    uint64_t trace_faults = (uint64_t)attr_of(truth, "/", "trace_fault_drops");
    cr_assert_eq(flow_faults + probe_faults + trace_faults, planted,
                 "the fault's drops: %llu of flows + %llu of probes + %llu of traceroutes",
                 (unsigned long long)flow_faults, (unsigned long long)probe_faults,
                 (unsigned long long)trace_faults);
    cr_assert_eq(s->fault_lost + s->congestion_lost + s->host_lost + s->late, s->lost);
    cr_assert_eq(s->answered + s->lost, s->scored);
    /* the rule: the planted cable's pod first */
    cr_assert_str_eq(pl[0].name, "pod 0");
    cr_assert_eq(pl[0].flagged, 1);
    cr_assert(pl[0].faulty);
    cr_assert_float_eq(s->recall, 1.0, 1e-12);
    cr_assert_gt(s->detect_after, 0);
    cr_assert_gt(s->probe_bytes, 0);
    /* the agents' log beside the captures holds the agents' columns of every probe, no more */
    char log[512];
    snprintf(log, sizeof log, "%s/probes.h5", run);
    size_t no;
    qr_row_probe_obs *o = rows_of(log, "/probes", &qr_schema_probe_obs, &no);
    cr_assert_eq(no, np);
    for (size_t i = 0; i < np; i++)
        cr_assert(o[i].probe == p[i].probe && o[i].pair == p[i].pair && o[i].src == p[i].src &&
                      o[i].dst == p[i].dst && o[i].sport == p[i].sport &&
                      o[i].sent_ns == p[i].sent_ns && o[i].rtt_ns == p[i].rtt_ns &&
                      o[i].echoed == p[i].echoed,
                  "probe %zu", i);
    qr_h5_rows_free(o);
    qr_h5_rows_free(p);
    qr_h5_rows_free(d);
    qr_h5_rows_free(f);
    qr_h5_rows_free(dir);
    qr_h5_rows_free(h);
    qr_h5_rows_free(s);
    qr_h5_rows_free(pl);
}

Test(pingmesh_cli, the_planted_gray_cable)
{
    cr_assert_eq(qreplay("pingmesh scenarios/faults/gray-k4.ini -o %s/g", dir), 0, "%s", err);
    cr_assert(strstr(out, "pod 0") && strstr(out, "FAULTY"), "%s", out);
    cr_assert(strstr(out, "drop rate by rack pair"), "%s", out);
    /* a gray cable drops a few probes of every pair: not Pingmesh's black-hole symptom */
    const char *bh = strstr(out, "black holes (Pingmesh's");
    cr_assert(bh, "%s", out);
    cr_assert_null(strstr(bh, "\n   1  tor"), "%s", bh);
    cr_assert_null(strstr(bh, "\n   1  podset"), "%s", bh);
    cr_assert(exists("%s/g/figures/pingmesh_heatmap.png", dir));
    cr_assert(exists("%s/g/figures/pingmesh_curve.png", dir));
    char run[512];
    snprintf(run, sizeof run, "%s/g", dir);
    check_run(run);
    /* the same run again, analysed from its folder: the same probes */
    cr_assert_eq(qreplay("pingmesh scenarios/faults/gray-k4.ini -o %s/g2 -q --no-figures", dir), 0,
                 "%s", err);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/g/truth/truth.h5", dir);
    snprintf(b, sizeof b, "%s/g2/truth/truth.h5", dir);
    size_t na, nb;
    qr_row_probe *pa = rows_of(a, "/probes", &qr_schema_probe, &na);
    qr_row_probe *pb = rows_of(b, "/probes", &qr_schema_probe, &nb);
    cr_assert_eq(na, nb);
    cr_assert(memcmp(pa, pb, na * sizeof *pa) == 0, "a seeded run repeats exactly");
    qr_h5_rows_free(pa);
    qr_h5_rows_free(pb);
    cr_assert_eq(qreplay("pingmesh %s/g2 --ratio 3 --alpha 0.01%% --no-figures", dir), 0, "%s",
                 err);
    cr_assert(strstr(out, "3 x the rest") && strstr(out, "0.0001"), "%s", out);
    /* without its truth the analysis is the same, only not graded */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp -r %s/g %s/bare && rm -rf %s/bare/truth %s/bare/pingmesh.h5", dir,
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("pingmesh %s/bare --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "pod 0") && !strstr(out, "FAULTY"), "%s", out);
}

/* A ToR that drops every packet between some address pairs (scenarios/faults/blackhole-tor-k4.ini,
 * its traffic shortened): Pingmesh's black-hole rule flags that ToR, right, first. */
Test(pingmesh_cli, a_tor_black_hole)
{
    cr_assert_eq(qreplay("pingmesh scenarios/faults/blackhole-tor-k4.ini -o %s/bh --no-figures "
                         "--set traffic.stop=15ms",
                         dir),
                 0, "%s", err);
    cr_assert(strstr(out, "\n   1  tor    rack s2"), "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/bh/pingmesh.h5", dir);
    size_t n;
    qr_row_pm_bhole *b = rows_of(p, "/blackholes", &qr_schema_pm_bhole, &n);
    cr_assert_geq(n, 1);
    cr_assert_str_eq(b[0].name, "rack s2");
    cr_assert_eq(b[0].flagged, 1);
    cr_assert_eq(b[0].faulty, 1);
    for (size_t i = 1; i < n; i++)
        cr_assert(!b[i].flagged || b[i].faulty, "%s flagged, not faulty", b[i].name);
    qr_h5_rows_free(b);
    cr_assert_eq(qreplay("pingmesh %s/bh --bh-tor 0 --no-figures", dir), 2);
    cr_assert(strstr(err, "--bh-tor"), "%s", err);
}

Test(pingmesh_cli, bad_input_is_a_clear_error)
{
    cr_assert_eq(qreplay("pingmesh %s/none", dir), 1);
    cr_assert(strstr(err, "no such scenario file or run folder"), "%s", err);
    /* a run without probes: says so, writes nothing */
    cr_assert_eq(qreplay("runtime scenarios/single-switch.ini -o %s/plain --quiet", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("pingmesh %s/plain", dir), 1);
    cr_assert(strstr(err, "no probe log") && strstr(err, "did not probe"), "%s", err);
    cr_assert(!exists("%s/plain/pingmesh.h5", dir));
    cr_assert_eq(qreplay("pingmesh %s/plain --interval 10us", dir), 2);
    cr_assert(strstr(err, "run a scenario"), "%s", err);
    cr_assert_eq(qreplay("pingmesh scenarios/single-switch.ini --interval 0 -o %s/x", dir), 2);
    cr_assert(strstr(err, "--interval"), "%s", err);
    cr_assert_eq(qreplay("pingmesh %s/plain --alpha 2", dir), 2);
    cr_assert_eq(qreplay("pingmesh %s/plain --ratio 0.5", dir), 2);
    cr_assert_eq(qreplay("pingmesh %s/plain --window 0", dir), 2);
    cr_assert(strstr(err, "--window"), "%s", err);
    cr_assert_eq(qreplay("pingmesh %s/plain --sla-drop 120%%", dir), 2);
    cr_assert(strstr(err, "--sla-drop"), "%s", err);
    cr_assert_eq(qreplay("pingmesh %s/plain --sla-p99 fast", dir), 2);
    cr_assert(strstr(err, "--sla-p99"), "%s", err);
    cr_assert_eq(qreplay("pingmesh %s/plain --syn-rto 0", dir), 2);
    cr_assert(strstr(err, "--syn-rto"), "%s", err);
    /* the runtime's probes are UDP: no kernel resends them, no connect to wait for */
    cr_assert_eq(qreplay("pingmesh scenarios/faults/gray-k4.ini --set pingmesh.connect_wait=3500ms "
                         "-o %s/cw --no-figures",
                         dir),
                 1);
    cr_assert(strstr(err, "connect_wait") && strstr(err, "testbed"), "%s", err);
    cr_assert_eq(
        qreplay("pingmesh scenarios/single-switch.ini --set pingmesh.size=20B -o %s/y", dir), 1);
    cr_assert(strstr(err, "pingmesh.size") && strstr(err, "28B"), "%s", err);
    cr_assert(!exists("%s/y/recording.h5", dir));
    /* a probe storm (it ran forever, past SIGINT): refused before anything runs, with the
     * shortest interval that fits */
    cr_assert_eq(qreplay("pingmesh scenarios/faults/gray-k4.ini --interval 1ns -o %s/z", dir), 1);
    cr_assert(strstr(err, "interval 1ns") && strstr(err, "an interval of at least"), "%s", err);
    cr_assert(!exists("%s/z", dir), "nothing made");
}
