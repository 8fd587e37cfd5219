/* Everflow's traces scored against planted faults (hoptrace_score.h), on a hand-made truth.h5: only
 * drops a planted fault made are silent; right needs at least one and every one on a faulty
 * cable (either direction); detection is the second silent drop on a faulty cable, counted over
 * all the trace's drops; a run without gray or blackhole faults is not scored. The trace never
 * names a fault: the scorer finds its drops in the truth's /drops. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/hoptrace_score.h"
#include "qreplay/topology.h"
#include "qreplay/truth.h"

static char dir[64], truth_path[96];
static qr_scenario *scen;
static qr_topology *topo;
static uint32_t gray, gray_back, other;

/* The drops the truth says a planted fault made (packet ids), for write_truth. */
static qr_row_drop planted[16];
static size_t n_planted;

/* A k=4 FatTree whose truth planted the listed faults on the cable of `gray`, with the drops
 * drop() marked as the faults'. */
static void write_truth(const char *kinds[], size_t n)
{
    char err[QR_ERRBUF_SIZE];
    qr_row_link_fault lf[4];
    memset(lf, 0, sizeof lf);
    for (size_t i = 0; i < n; i++) {
        lf[i].fault = (uint32_t)i + 1;
        snprintf(lf[i].kind, sizeof lf[i].kind, "%s", kinds[i]);
        lf[i].link = gray;
    }
    qr_truth_info info = {.sim_end_ns = 1000, .link_faults = lf, .n_link_faults = n};
    cr_assert_eq(qr_truth_write(truth_path, scen, &info, planted, n_planted, NULL, 0, err), QR_OK,
                 "%s", err);
}

static void setup(void)
{
    char err[QR_ERRBUF_SIZE];
    n_planted = 0;
    snprintf(dir, sizeof dir, "/tmp/qr-hopscore-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(truth_path, sizeof truth_path, "%s/truth.h5", dir);
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
    cr_assert_eq(qr_scenario_set(scen, "topology.kind=fattree", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(scen, "topology.k=4", err), QR_OK, "%s", err);
    cr_assert_eq(qr_topology_of_config(&topo, qr_scenario_config(scen)), QR_OK);
    uint32_t ids[2];
    size_t n;
    cr_assert_eq(qr_topology_link_parse(topo, "s8-s16", ids, &n, err), QR_OK, "%s", err);
    gray = ids[0];
    gray_back = ids[1];
    cr_assert_eq(qr_topology_link_parse(topo, "s9>s18", ids, &n, err), QR_OK, "%s", err);
    other = ids[0];
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    qr_topology_destroy(topo);
    qr_scenario_destroy(scen);
}

/* A drop the trace saw at time t (packet id t): the log's reason is the truth's (a fault's drop is
 * in the truth's /drops); the trace itself says silent for a fault's (no counter moved) and the
 * switch's reason for the others. */
static qr_row_hop_drop drop(int64_t t, uint8_t reason, uint32_t link)
{
    qr_row_hop_drop d;
    memset(&d, 0, sizeof d);
    d.packet = (uint64_t)t;
    d.time_ns = t;
    d.silent = reason == QR_DROP_FAULT;
    d.reason = d.silent ? QR_TRACE_SILENT : reason;
    if (reason == QR_DROP_FAULT) {
        cr_assert_lt(n_planted, 16);
        qr_row_drop *p = &planted[n_planted++];
        memset(p, 0, sizeof *p);
        p->packet = (uint64_t)t;
        p->time_ns = t;
        p->reason = QR_DROP_FAULT;
    }
    d.link = link;
    qr_topology_link_name(topo, link, d.link_name, sizeof d.link_name);
    return d;
}

Test(hoptrace_score, silent_drops_right_and_detection, .init = setup, .fini = teardown)
{
    const char *kinds[] = {"gray"};
    qr_row_hop_drop drops[] = {
        drop(10, QR_DROP_THRESHOLD, other), /* congestion: not silent */
        drop(20, QR_DROP_FAULT, gray_back), /* the cable's other direction counts */
        drop(30, QR_DROP_THRESHOLD, gray),  /* a counted drop on the cable is not silent */
        drop(40, QR_DROP_FAULT, gray),      /* second silent drop on the cable: found */
        drop(50, QR_DROP_FAULT, gray),      drop(60, QR_DROP_FAULT, gray)};
    write_truth(kinds, 1);
    drops[5].silent = 0; /* its port counted other drops in the interval: taken for counted */
    drops[5].reason = QR_TRACE_COUNTED;
    qr_hoptrace t = {.drops = drops, .n_drops = 6};
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_hoptrace_score(&t, scen, truth_path, err), QR_OK, "%s", err);
    cr_assert(t.truth.has_truth);
    cr_assert_eq(t.truth.silent, 3);
    cr_assert_eq(t.truth.silent_right, 3);
    cr_assert_eq(t.truth.fault_missed, 1);
    cr_assert(t.truth.right);
    cr_assert_eq(t.truth.detect_after_drops, 4, "the debugger read 4 drops");
    cr_assert_eq(t.truth.detect_after_ns, 40);
    cr_assert_str_eq(t.truth.silent_links, "s16>s8,s8>s16");
}

Test(hoptrace_score, a_silent_drop_elsewhere_is_wrong, .init = setup, .fini = teardown)
{
    const char *kinds[] = {"blackhole"};
    qr_row_hop_drop drops[] = {drop(5, QR_DROP_FAULT, gray), drop(6, QR_DROP_FAULT, other)};
    write_truth(kinds, 1);
    qr_hoptrace t = {.drops = drops, .n_drops = 2};
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_hoptrace_score(&t, scen, truth_path, err), QR_OK, "%s", err);
    cr_assert_not(t.truth.right);
    cr_assert_eq(t.truth.detect_after_drops, 0, "one silent drop on the cable is not two");
    cr_assert_eq(t.truth.detect_after_ns, -1);
}

Test(hoptrace_score, no_silent_drop_is_not_right, .init = setup, .fini = teardown)
{
    const char *kinds[] = {"gray"};
    qr_row_hop_drop drops[] = {drop(5, QR_DROP_THRESHOLD, gray)};
    write_truth(kinds, 1);
    qr_hoptrace t = {.drops = drops, .n_drops = 1};
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_hoptrace_score(&t, scen, truth_path, err), QR_OK, "%s", err);
    cr_assert(t.truth.has_truth);
    cr_assert_eq(t.truth.silent, 0);
    cr_assert_not(t.truth.right);
}

Test(hoptrace_score, faults_that_do_not_drop_are_not_scored, .init = setup, .fini = teardown)
{
    const char *kinds[] = {"delay", "rate"};
    write_truth(kinds, 2);
    qr_hoptrace t = {0};
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_hoptrace_score(&t, scen, truth_path, err), QR_OK, "%s", err);
    cr_assert_not(t.truth.has_truth);
}

Test(hoptrace_score, a_missing_truth_is_an_error_and_changes_nothing, .init = setup,
     .fini = teardown)
{
    qr_hoptrace t = {0};
    char err[QR_ERRBUF_SIZE] = "";
    int rc = qr_hoptrace_score(&t, scen, "/nonexistent/truth.h5", err);
    cr_assert_eq(rc, QR_ENOENT, "%d: %s", rc, err);
    cr_assert(strstr(err, "/nonexistent/truth.h5"), "%s", err);
    cr_assert_not(t.truth.has_truth);
}

/* A guided-probe row for link (its switch and port), lost of probes, inside of them lost inside
 * the switch, silent as given. */
static qr_row_guided_port guided_row(uint32_t link, uint64_t probes, uint64_t lost, uint64_t inside,
                                     int silent)
{
    qr_row_guided_port r;
    memset(&r, 0, sizeof r);
    qr_node from, to;
    cr_assert_eq(qr_topology_link_ends(topo, link, &from, &to, &r.port), QR_OK);
    r.sw = from.index;
    r.link = link;
    qr_topology_link_name(topo, link, r.link_name, sizeof r.link_name);
    r.probes = probes, r.lost = lost, r.inside = inside;
    r.counters_known = 1;
    r.silent = (uint8_t)silent;
    return r;
}

/* The guided probes' silent places against the planted direction s8>s16: a loss inside s8 (where
 * the faulty cable ends) is right, a loss on the link out of another port is not, nor is one
 * inside a switch no faulty cable ends at; the planted direction they crossed counts as probed,
 * and as found where it lost probes silently. */
Test(hoptrace_score, guided_probes_silent_places_scored, .init = setup, .fini = teardown)
{
    const char *kinds[] = {"gray"};
    write_truth(kinds, 1);
    qr_row_guided_port rows[4] = {guided_row(gray, 160, 2, 2, 1), guided_row(other, 80, 1, 0, 1),
                                  guided_row(gray_back, 50, 0, 0, 0)};
    memset(&rows[3], 0, sizeof rows[3]);
    rows[3].sw = 12;
    rows[3].port = QR_GUIDED_INSIDE;
    rows[3].link = UINT32_MAX;
    snprintf(rows[3].link_name, sizeof rows[3].link_name, "s12");
    rows[3].probes = rows[3].lost = rows[3].inside = 1;
    rows[3].counters_known = rows[3].silent = 1;
    qr_hoptrace t = {.has_guided = 1, .guided = {.ports = rows, .n_ports = 4}};
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_hoptrace_score(&t, scen, truth_path, err), QR_OK, "%s", err);
    cr_assert_eq(t.truth.guided_silent, 3);
    cr_assert_eq(t.truth.guided_silent_right, 1, "only the loss inside s8");
    cr_assert_eq(t.truth.guided_faulty_probed, 1, "the planted direction s8>s16");
    cr_assert_eq(t.truth.guided_faulty_found, 1);
    cr_assert_str_eq(t.truth.guided_links, "s8>s16,s9>s18,s12");
    /* the planted direction crossed without a loss: probed, not found */
    rows[0].lost = rows[0].inside = 0;
    rows[0].silent = 0;
    cr_assert_eq(qr_hoptrace_score(&t, scen, truth_path, err), QR_OK, "%s", err);
    cr_assert_eq(t.truth.guided_faulty_probed, 1);
    cr_assert_eq(t.truth.guided_faulty_found, 0);
    cr_assert_eq(t.truth.guided_silent_right, 0);
}
