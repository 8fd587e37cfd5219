/* 007's path discovery in the core (traceroute.c): the agents trace a direction when it resends,
 * within their caps, with probes that carry the TTL in the IP ID and stop at the receiver's switch;
 * answers are matched by the quoted packet; a trace's path is the cables between answering
 * switches, unknown next to a silent one; the ICMP limiter is Linux's (a global bucket, then 6
 * answers per destination and one more per interval); and an ICMP time-exceeded is read back from
 * its bytes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/faults.h"
#include "qreplay/flowtable.h"
#include "qreplay/packet.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"
#include "qreplay/traceroute.h"

static qr_scenario *sc;
static qr_topology *topo;
static qr_flow_table *flows;

/* three flows from h0: to another pod (5 switches), its own pod (3), its own edge switch (1) */
static const uint32_t dsts[3] = {12, 2, 1};

static void setup_with(const char *per_connection, const char *per_host)
{
    char err[QR_ERRBUF_SIZE], kv[64];
    cr_assert_eq(qr_scenario_create(&sc), QR_OK);
    snprintf(kv, sizeof kv, "traceroute.per_connection=%s", per_connection);
    cr_assert_eq(qr_scenario_set(sc, kv, err), QR_OK, "%s", err);
    snprintf(kv, sizeof kv, "traceroute.per_host=%s", per_host);
    cr_assert_eq(qr_scenario_set(sc, kv, err), QR_OK, "%s", err);
    cr_assert_eq(qr_topology_fattree(&topo, 4), QR_OK);
    qr_flow f[3];
    for (uint32_t i = 0; i < 3; i++)
        f[i] = (qr_flow){i, 0, dsts[i], 10000, 0, 0};
    cr_assert_eq(qr_flow_table_for_topology(&flows, f, 3, topo, err), QR_OK, "%s", err);
}

static void setup(void)
{
    setup_with("1", "10");
}

static void teardown(void)
{
    qr_flow_table_destroy(flows);
    qr_topology_destroy(topo);
    qr_scenario_destroy(sc);
    flows = NULL;
    topo = NULL;
    sc = NULL;
}

TestSuite(traceroute, .init = setup, .fini = teardown);

/* The address of switch sw's interface toward port `port` (what an answer's source would be). */
static uint32_t switch_addr(uint32_t sw, uint32_t port)
{
    uint32_t n = qr_topology_links(topo);
    uint32_t *addr = malloc(n * sizeof *addr);
    qr_topology_addresses(topo, addr);
    uint32_t a = addr[qr_topology_port_link(topo, sw, port)];
    free(addr);
    return a;
}

/* The switch a link leaves from. */
static uint32_t from_switch(uint32_t link)
{
    qr_node a, b;
    uint32_t port;
    cr_assert_eq(qr_topology_link_ends(topo, link, &a, &b, &port), QR_OK);
    cr_assert_neq(a.kind, QR_NODE_HOST);
    return a.index;
}

Test(traceroute, none_without_per_connection)
{
    qr_tracer *tr = (qr_tracer *)1;
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(s), topo, flows, err), QR_OK);
    cr_assert_null(tr);
    uint32_t trace;
    cr_assert_eq(qr_tracer_sent(NULL, 0, 0, 1, 100, 0, &trace), 0);
    qr_scenario_destroy(s);
}

Test(traceroute, a_resend_starts_one_trace_per_direction_to_the_receivers_switch)
{
    char err[QR_ERRBUF_SIZE];
    qr_tracer *tr;
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(sc), topo, flows, err), QR_OK, "%s", err);
    uint32_t trace = 99, d = qr_dir_data(0);
    /* new bytes: no trace, also across the sequence space's wrap */
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 0xfffff000u, 1000, 10, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 0xfffff000u + 1000, 5000, 20, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 0, 0, 25, &trace), 0, "a pure ACK resends nothing");
    /* a resend of bytes already sent: 5 probes, TTL 1..5 (no probe reaches h12) */
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 0xfffff000u + 1000, 1000, 30, &trace), 5);
    cr_assert_eq(trace, 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 0xfffff000u, 1000, 40, &trace), 0,
                 "per_connection = 1: traced once");
    /* another direction to the same pod: 3 switches; to its own edge switch: 1 */
    uint32_t d1 = qr_dir_data(1), d2 = qr_dir_data(2);
    cr_assert_eq(qr_tracer_sent(tr, 0, d1, 1, 100, 50, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d1, 1, 100, 60, &trace), 3);
    cr_assert_eq(trace, 1);
    cr_assert_eq(qr_tracer_sent(tr, 0, d2, 1, 100, 70, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d2, 1, 100, 80, &trace), 1);
    size_t n;
    const qr_row_traceroute *p = qr_tracer_probes(tr, &n);
    cr_assert_eq(n, 9);
    cr_assert_eq(qr_tracer_traces(tr), 3);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(p[i].ip_id, qr_tracer_ip_id(p[i].trace, p[i].ttl));
        cr_assert_eq(p[i].ip_id & QR_TRACE_MAX_TTL, p[i].ttl, "the TTL is in the IP ID");
        cr_assert_eq(p[i].replier, 0);
        cr_assert_eq(p[i].rtt_ns, -1);
    }
    qr_tracer_destroy(tr);
}

Test(traceroute, per_host_caps_the_traces_of_a_host)
{
    teardown();
    setup_with("5", "2");
    char err[QR_ERRBUF_SIZE];
    qr_tracer *tr;
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(sc), topo, flows, err), QR_OK);
    uint32_t trace, d = qr_dir_data(0);
    qr_tracer_sent(tr, 0, d, 1, 100, 0, &trace);
    cr_assert_gt(qr_tracer_sent(tr, 0, d, 1, 100, 1, &trace), 0);
    cr_assert_gt(qr_tracer_sent(tr, 0, d, 1, 100, 2, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 1, 100, 3, &trace), 0, "per_host = 2");
    cr_assert_eq(qr_tracer_traces(tr), 2);
    qr_tracer_destroy(tr);
}

/* With an epoch, both caps count anew in each: the direction traced once per epoch, the host twice
 * per epoch; the epoch of a time is its floor. */
Test(traceroute, the_caps_count_anew_each_epoch)
{
    teardown();
    setup_with("1", "2");
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_set(sc, "traceroute.epoch=1ms", err), QR_OK, "%s", err);
    qr_tracer *tr;
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(sc), topo, flows, err), QR_OK);
    uint32_t trace, d = qr_dir_data(0), d1 = qr_dir_data(1), d2 = qr_dir_data(2);
    qr_tracer_sent(tr, 0, d, 1, 100, 0, &trace);
    qr_tracer_sent(tr, 0, d1, 1, 100, 0, &trace);
    qr_tracer_sent(tr, 0, d2, 1, 100, 0, &trace);
    cr_assert_gt(qr_tracer_sent(tr, 0, d, 1, 100, 10, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d, 1, 100, 999999, &trace), 0, "once per epoch");
    cr_assert_gt(qr_tracer_sent(tr, 0, d1, 1, 100, 20, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d2, 1, 100, 30, &trace), 0, "per_host = 2 per epoch");
    /* the next epoch: all three again, the host's third refused */
    cr_assert_gt(qr_tracer_sent(tr, 0, d, 1, 100, 1000000, &trace), 0);
    cr_assert_gt(qr_tracer_sent(tr, 0, d2, 1, 100, 1000001, &trace), 0);
    cr_assert_eq(qr_tracer_sent(tr, 0, d1, 1, 100, 1000002, &trace), 0);
    cr_assert_eq(qr_tracer_traces(tr), 4);
    qr_tracer_destroy(tr);
    cr_assert_eq(qr_traceroute_epoch(0, 123456789), 0);
    cr_assert_eq(qr_traceroute_epoch(1000, 999), 0);
    cr_assert_eq(qr_traceroute_epoch(1000, 1000), 1);
    cr_assert_eq(qr_traceroute_epoch(1000, -1), -1);
}

Test(traceroute, answers_make_the_true_path_and_a_silent_hop_leaves_its_cables_unknown)
{
    char err[QR_ERRBUF_SIZE];
    qr_tracer *tr;
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(sc), topo, flows, err), QR_OK);
    uint32_t d = qr_dir_data(0), trace;
    uint32_t links[8];
    size_t nl;
    cr_assert_eq(qr_dir_links(flows, topo, d, links, 8, &nl), QR_OK);
    cr_assert_eq(nl, 6);
    /* two traces of the same direction: the first fully answered, the second without hop 3 */
    qr_tracer_destroy(tr);
    qr_scenario_destroy(sc);
    char kv[] = "traceroute.per_connection=2";
    cr_assert_eq(qr_scenario_create(&sc), QR_OK);
    cr_assert_eq(qr_scenario_set(sc, kv, err), QR_OK, "%s", err);
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(sc), topo, flows, err), QR_OK);
    qr_tracer_sent(tr, 0, d, 1, 100, 0, &trace);
    for (uint32_t t = 0; t < 2; t++) {
        cr_assert_eq(qr_tracer_sent(tr, 0, d, 1, 100, 100 + t, &trace), 5);
        for (uint32_t ttl = 1; ttl <= 5; ttl++) {
            if (t == 1 && ttl == 3)
                continue;
            /* switch ttl is where link ttl leaves from; it answers from its port back */
            uint32_t sw = from_switch(links[ttl]);
            uint32_t a = switch_addr(sw, 0);
            cr_assert_eq(qr_tracer_answer(tr, 0, a, d, qr_tracer_ip_id(trace, ttl), 500 + ttl), 1);
            cr_assert_eq(qr_tracer_answer(tr, 0, a, d, qr_tracer_ip_id(trace, ttl), 600), 0,
                         "a second answer to one probe is not counted");
        }
    }
    /* answers that match no probe: another host, another direction, an unknown trace */
    cr_assert_eq(qr_tracer_answer(tr, 1, 1, d, qr_tracer_ip_id(0, 1), 700), 0);
    cr_assert_eq(qr_tracer_answer(tr, 0, 1, d + 1, qr_tracer_ip_id(0, 1), 700), 0);
    cr_assert_eq(qr_tracer_answer(tr, 0, 1, d, qr_tracer_ip_id(7, 1), 700), 0);
    size_t n;
    const qr_row_traceroute *p = qr_tracer_probes(tr, &n);
    cr_assert_eq(n, 10);
    cr_assert_eq(p[0].rtt_ns, 501 - 100);
    qr_row_path *rows;
    cr_assert_eq(qr_tracer_paths(tr, &rows, &n), QR_OK);
    cr_assert_eq(n, 12, "two traces of 6 cables");
    for (size_t i = 0; i < n; i++) {
        char want[48];
        qr_topology_cable_name(topo, links[rows[i].hop], want, sizeof want);
        cr_assert_eq(rows[i].dir, d);
        cr_assert_eq(rows[i].trace, i / 6);
        cr_assert_eq(rows[i].hop, i % 6);
        /* switch 3 silent: the cables on both sides of it are unknown */
        if (rows[i].trace == 1 && (rows[i].hop == 2 || rows[i].hop == 3))
            cr_assert_str_empty(rows[i].link, "hop %u", rows[i].hop);
        else
            cr_assert_str_eq(rows[i].link, want, "trace %u hop %u", rows[i].trace, rows[i].hop);
    }
    free(rows);
    qr_tracer_destroy(tr);
}

Test(traceroute, the_limiter_is_linuxs)
{
    char err[QR_ERRBUF_SIZE];
    /* per destination: a burst of 6, then one per interval (1 s) */
    qr_icmp_limiter *l;
    cr_assert_eq(qr_icmp_limiter_create(&l, qr_scenario_config(sc), err), QR_OK);
    for (int i = 0; i < 6; i++)
        cr_assert(qr_icmp_allow(l, 7, 1000 + i), "answer %d", i);
    cr_assert_not(qr_icmp_allow(l, 7, 2000));
    cr_assert(qr_icmp_allow(l, 8, 2000), "another destination has its own burst");
    cr_assert_not(qr_icmp_allow(l, 7, 1000 + 999999999));
    cr_assert(qr_icmp_allow(l, 7, 1000 + 1000000000 + 5), "one more a second later");
    cr_assert_eq(qr_icmp_refused(l), 2);
    /* the counters of the one epoch (no [traceroute] epoch): every answer asked for */
    size_t ne;
    const qr_icmp_epoch *e = qr_icmp_epochs(l, &ne);
    cr_assert_eq(ne, 1);
    cr_assert_eq(e[0].epoch, 0);
    cr_assert_eq(e[0].sent, 8);
    cr_assert_eq(e[0].refused, 2);
    qr_icmp_limiter_destroy(l);
    /* the global bucket: a burst of 50, then 1000 per second, over many destinations */
    cr_assert_eq(qr_icmp_limiter_create(&l, qr_scenario_config(sc), err), QR_OK);
    int allowed = 0;
    for (uint32_t i = 0; i < 100; i++)
        allowed += qr_icmp_allow(l, 100 + i, 0);
    cr_assert_eq(allowed, 50);
    allowed = 0;
    for (uint32_t i = 0; i < 100; i++) /* 10 ms later: 10 tokens */
        allowed += qr_icmp_allow(l, 300 + i, 10000000);
    cr_assert_eq(allowed, 10);
    qr_icmp_limiter_destroy(l);
}

Test(traceroute, a_time_exceeded_is_read_from_its_bytes)
{
    uint8_t b[56] = {0};
    /* outer IPv4: 20 bytes, ICMP, from 11.0.0.5 */
    b[0] = 0x45, b[9] = 1, b[12] = 11, b[15] = 5;
    /* ICMP type 11 code 0, 4 unused bytes */
    b[20] = 11;
    /* quoted IPv4 header of a TCP probe 10.0.0.2:10000 > 10.3.0.2:5001, IP ID 0x0123 */
    uint8_t *q = b + 28;
    q[0] = 0x45, q[4] = 0x01, q[5] = 0x23, q[8] = 1, q[9] = 6;
    q[12] = 10, q[15] = 2, q[16] = 10, q[17] = 3, q[19] = 2;
    q[20] = 10000 >> 8, q[21] = 10000 & 255, q[22] = 5001 >> 8, q[23] = 5001 & 255;
    uint32_t replier;
    qr_five_tuple ft;
    uint16_t id;
    cr_assert_eq(qr_icmp_time_exceeded_parse(b, sizeof b, &replier, &ft, &id), 1);
    cr_assert_eq(replier, 0x0b000005u);
    cr_assert_eq(ft.src_ip, 0x0a000002u);
    cr_assert_eq(ft.dst_ip, 0x0a030002u);
    cr_assert_eq(ft.src_port, 10000);
    cr_assert_eq(ft.dst_port, 5001);
    cr_assert_eq(ft.proto, 6);
    cr_assert_eq(id, 0x0123);
    /* cut short, or not a time-exceeded: no */
    for (size_t len = 0; len < sizeof b; len++)
        cr_assert_eq(qr_icmp_time_exceeded_parse(b, len, &replier, &ft, &id), 0, "len %zu", len);
    b[20] = 3;
    cr_assert_eq(qr_icmp_time_exceeded_parse(b, sizeof b, &replier, &ft, &id), 0);
    b[20] = 11, b[9] = 6;
    cr_assert_eq(qr_icmp_time_exceeded_parse(b, sizeof b, &replier, &ft, &id), 0);
}

/* The IP ID holds 11 bits of the trace number: past 2048 traces an answer still finds its own
 * trace (the newest whose number matches, of the right host and direction). */
Test(traceroute, answers_past_2048_traces)
{
    teardown();
    setup_with("3000", "3000");
    char err[QR_ERRBUF_SIZE];
    qr_tracer *tr;
    cr_assert_eq(qr_tracer_create(&tr, qr_scenario_config(sc), topo, flows, err), QR_OK);
    uint32_t d = qr_dir_data(2), trace; /* to h1, its own edge switch: one probe a trace */
    qr_tracer_sent(tr, 0, d, 1, 100, 0, &trace);
    for (uint32_t i = 0; i < 2600; i++)
        cr_assert_eq(qr_tracer_sent(tr, 0, d, 1, 100, 1 + i, &trace), 1);
    cr_assert_eq(qr_tracer_traces(tr), 2600);
    cr_assert_eq(qr_tracer_ip_id(2500, 1), qr_tracer_ip_id(452, 1), "the same IP ID");
    cr_assert_eq(qr_tracer_answer(tr, 0, 7, d, qr_tracer_ip_id(2500, 1), 9000), 1);
    cr_assert_eq(qr_tracer_answer(tr, 0, 7, d, qr_tracer_ip_id(452, 1), 9000), 0,
                 "trace 2500 has its answer; trace 452 is older with the same number");
    size_t n;
    const qr_row_traceroute *p = qr_tracer_probes(tr, &n);
    cr_assert_eq(n, 2600);
    cr_assert_eq(p[2500].replier, 7);
    cr_assert_eq(p[452].replier, 0);
    cr_assert_eq(qr_tracer_answer(tr, 0, 7, d, qr_tracer_ip_id(2599, 2), 9000), 0, "no TTL 2");
    qr_tracer_destroy(tr);
}
