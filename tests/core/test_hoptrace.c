/* Everflow's hop traces (hoptrace.h) on a hand-made run (hand_run.h: one flow of 3 packets through
 * a star's switch, the second dropped at its queue). The trace
 * follows every matched packet to its fate, the queueing of each hop is the queue's bytes at the
 * port's rate, the expression selects, the limit keeps the first packets but every drop. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hand_run.h"
#include "qreplay/hoptrace.h"

static struct hand_run h;
static char log_path[96];

static void setup(void)
{
    hand_run_make(&h);
    snprintf(log_path, sizeof log_path, "%s/truth/arrivals.qra", h.dir);
}

static void teardown(void)
{
    hand_run_free(&h);
}

TestSuite(hoptrace, .init = setup, .fini = teardown);

static void trace(const char *match, size_t limit, qr_hoptrace *t)
{
    char err[QR_ERRBUF_SIZE];
    qr_hoptrace_opts o;
    qr_hoptrace_opts_default(&o);
    o.match = match;
    o.arrivals = log_path;
    o.limit = limit;
    cr_assert_eq(qr_hoptrace_run(h.rec, &o, t, err), QR_OK, "%s", err);
}

Test(hoptrace, every_packet_to_its_fate)
{
    qr_hoptrace t = {0};
    trace("all", 0, &t);
    cr_assert_eq(t.summary.arrivals, 3);
    cr_assert_eq(t.summary.matched, 3);
    cr_assert_eq(t.summary.delivered, 2);
    cr_assert_eq(t.summary.dropped, 1);
    cr_assert_eq(t.summary.drops_threshold, 1);
    cr_assert_eq(t.n_packets, 3);
    cr_assert_eq(t.n_hops, 3, "one hop each: the star's switch");
    cr_assert_eq(t.n_drops, 1);
    const qr_row_hop_drop *d = &t.drops[0];
    cr_assert_eq(d->packet, qr_packet_id(0, 1));
    cr_assert_eq(d->reason, QR_DROP_THRESHOLD);
    cr_assert_eq(d->sw, 0);
    cr_assert_eq(d->port, h.port_to_h1);
    cr_assert_eq(d->time_ns, 3000);
    cr_assert_eq(d->link, qr_topology_port_link(h.topo, 0, h.port_to_h1));
    cr_assert_str_eq(d->link_name, "s0>h1");
    /* packets in first-hop order; the dropped one's fate is its decision, the others left */
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(t.packets[i].packet, qr_packet_id(0, (uint32_t)i));
        cr_assert_eq(t.packets[i].fate, i == 1 ? QR_DROP_THRESHOLD : 0);
        cr_assert_eq(t.packets[i].hops, 1);
    }
    /* queueing: the queue's bytes ahead at the port's rate */
    uint64_t rate = qr_scenario_config(h.scen)->links.rate_bps;
    cr_assert_eq(t.hops[2].queue_ns, (int64_t)(6000ull * 8 * 1000000000ull / rate));
    cr_assert_eq(t.hops[0].queue_ns, 0);
    qr_hoptrace_free(&t);
}

Test(hoptrace, the_expression_selects)
{
    qr_hoptrace t = {0};
    trace("dropped", 0, &t);
    cr_assert_eq(t.summary.matched, 1);
    cr_assert_eq(t.n_packets, 1);
    cr_assert_eq(t.packets[0].packet, qr_packet_id(0, 1));
    qr_hoptrace_free(&t);
    trace("flow 0 and not dropped", 0, &t);
    cr_assert_eq(t.summary.matched, 2);
    cr_assert_eq(t.n_drops, 0);
    qr_hoptrace_free(&t);
}

Test(hoptrace, the_limit_keeps_the_first_packets_and_every_drop)
{
    qr_hoptrace t = {0};
    trace("all", 1, &t);
    cr_assert_eq(t.n_packets, 1);
    cr_assert_eq(t.packets[0].packet, qr_packet_id(0, 0));
    cr_assert_eq(t.n_drops, 1, "drops cover every matched packet");
    cr_assert_eq(t.summary.matched, 3);
    qr_hoptrace_free(&t);
}

Test(hoptrace, a_bad_expression_is_refused_with_its_reason)
{
    qr_hoptrace t = {0};
    char err[QR_ERRBUF_SIZE] = "";
    qr_hoptrace_opts o;
    qr_hoptrace_opts_default(&o);
    o.match = "flow";
    o.arrivals = log_path;
    cr_assert_eq(qr_hoptrace_run(h.rec, &o, &t, err), QR_EVALUE);
    cr_assert_neq(err[0], '\0');
    qr_hoptrace_free(&t);
}
