/* The testbed's rules in the core (testbed.h): what it can honour, each port's limit, the
 * machine-too-slow rule, the replay rate, and the flows.csv and ports.csv it writes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/scenario.h"
#include "qreplay/testbed.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(testbed_rules, port_limit_is_the_port_size_or_the_buffer_shared_by_the_ports)
{
    qr_scenario *s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "topology.hosts=3", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "buffer.size=393KB", err), QR_OK, "%s", err);
    cr_assert_eq(qr_testbed_port_limit(qr_scenario_config(s)), 131000);
    cr_assert_eq(qr_scenario_set(s, "buffer.port_size=100KB", err), QR_OK, "%s", err);
    cr_assert_eq(qr_testbed_port_limit(qr_scenario_config(s)), 100000);
    qr_scenario_destroy(s);
}

/* Every key a testbed cannot honour is named: all of them with room for them, and a list cut to
 * the error buffer's size says so ("..."). */
Test(testbed_rules, every_key_refused_is_named_and_a_cut_list_says_so)
{
    qr_scenario *s;
    char err[QR_ERRBUF_SIZE], all[4096];
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    const char *keys[] = {"topology.kind=star",          "topology.hosts=3",
                          "traceroute.per_connection=1", "pingmesh.interval=100us",
                          "faults.gray=s0-h1 1%",        "everflow.guided=5",
                          "faults.loop=s0>s1 h1",        "clock.max_offset=1ms"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_eq(qr_scenario_replace(s, keys[i], err), QR_OK, "%s: %s", keys[i], err);
    const qr_config *c = qr_scenario_config(s);
    cr_assert_eq(qr_testbed_check_all(c, all, sizeof all), QR_EVALUE);
    /* a fresh scenario's shared buffer and 1 ms delayed ACK are refused too */
    const char *names[] = {"[buffer] policy",    "[tcp] delack_timeout",
                           "[clock] max_offset", "[traceroute] per_connection",
                           "[everflow] guided",  "[pingmesh] interval",
                           "[faults] gray",      "[faults] loop: the star"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_assert(strstr(all, names[i]), "%s missing: %s", names[i], all);
    cr_assert(strstr(all, "cannot honour 8 keys"), "%s", all);
    cr_assert_gt(strlen(all), QR_ERRBUF_SIZE, "the list is longer than an error buffer");
    cr_assert_eq(qr_testbed_check(c, err), QR_EVALUE);
    cr_assert_eq(strlen(err), QR_ERRBUF_SIZE - 1);
    cr_assert_str_eq(err + QR_ERRBUF_SIZE - 4, "...");
    cr_assert_eq(strncmp(err, all, QR_ERRBUF_SIZE - 4), 0);
    qr_scenario_destroy(s);
}

Test(testbed_rules, too_slow_and_replay_rate)
{
    qr_testbed_port_report ports[2] = {{0}, {0}};
    ports[1].busy_rate_bps = 97.5e6;
    qr_testbed_truth_report r = {0};
    r.n_ports = 2;
    r.ports = ports;
    r.bottleneck = 1;
    r.hop_p99_ns = 120000; /* a packet at 100 Mbit/s takes 120 us */
    cr_assert_eq(qr_testbed_packet_ns(100000000), 120000);
    cr_assert_eq(qr_testbed_too_slow(r.hop_p99_ns, 100000000), 0,
                 "exactly a packet's time is fine");
    r.hop_p99_ns = 120001;
    cr_assert_eq(qr_testbed_too_slow(r.hop_p99_ns, 100000000), 1);
    char kv[64];
    cr_assert_eq(qr_testbed_replay_rate(&r, 1, kv, sizeof kv), 1);
    cr_assert_str_eq(kv, "links.rate=97500000bps");
    cr_assert_eq(qr_testbed_replay_rate(&r, 0, kv, sizeof kv), 0, "nominal asked");
    ports[1].busy_rate_bps = 0;
    cr_assert_eq(qr_testbed_replay_rate(&r, 1, kv, sizeof kv), 0, "nothing was busy");
}

Test(testbed_rules, flows_csv_and_its_summary)
{
    char path[] = "/tmp/qr-tb-flows-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    qr_flow sched[4] = {{0, 0, 2, 1000, 0, 0},
                        {1, 1, 2, 2000, 10, 0},
                        {2, 0, 1, 3000, 20, 0},
                        {3, 2, 0, 4000, 30, 0}};
    uint16_t ports[4] = {10000, 10000, 10001, 10000};
    qr_testbed_flow out[4] = {
        {1, 1, 0, 100, 1100, 1000, 0, NULL},  /* done in 1000 ns */
        {1, 1, 0, 200, 3200, 2000, 2, NULL},  /* done in 3000 ns, 2 retransmissions */
        {1, 0, 1, 300, 0, 1500, 1, "reset"},  /* failed */
        {1, 1, 0, 400, 2400, 3999, 0, NULL}}; /* a byte short: not completed */
    qr_testbed_flow_summary sum;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_testbed_flows_write(path, sched, ports, out, 4, &sum, err), QR_OK, "%s", err);
    cr_assert_eq(sum.completed, 2);
    cr_assert_eq(sum.failed, 1);
    cr_assert_eq(sum.retransmissions, 3);
    cr_assert_eq(sum.fct_p50_ns, 1000);
    cr_assert_eq(sum.fct_p99_ns, 3000);
    const char *csv = slurp(path);
    cr_assert(strstr(csv, "flow,src,dst,src_port,bytes,start_ns,completed,fct_ns,bytes_received,"
                          "retransmissions,error\n0,0,2,10000,1000,0,1,1000,1000,0,\n"),
              "%s", csv);
    cr_assert(strstr(csv, "\n2,0,1,10001,3000,20,0,-1,1500,1,reset\n"), "%s", csv);
    cr_assert(strstr(csv, "\n3,2,0,10000,4000,30,0,-1,3999,0,\n"), "%s", csv);
    /* a folder that does not exist: an error naming the file, nothing written */
    cr_assert_eq(qr_testbed_flows_write("/nonexistent/flows.csv", sched, ports, out, 4, &sum, err),
                 QR_EIO);
    cr_assert(strstr(err, "/nonexistent/flows.csv"), "%s", err);
    unlink(path);
}

Test(testbed_rules, ports_csv)
{
    char path[] = "/tmp/qr-tb-ports-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    qr_testbed_port_report ports[2] = {{0}, {0}};
    ports[0] = (qr_testbed_port_report){10, 9, 10, 1, 1, 30000, 0, 0, 0, 0, 0.0};
    ports[1] = (qr_testbed_port_report){5, 5, 5, 0, 0, 4500, 0, 0, 0, 0, 98000000.4};
    qr_testbed_truth_report r = {0};
    r.n_ports = 2;
    r.ports = ports;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_testbed_ports_write(path, &r, 131000, err), QR_OK, "%s", err);
    const char *csv = slurp(path);
    cr_assert_str_eq(csv, "port,host,ingress_packets,egress_packets,arrivals,drops,qdisc_drops,"
                          "max_queue_bytes,limit_bytes,drops_with_room,admits_over_limit,"
                          "busy_rate_bps\n"
                          "0,0,10,9,10,1,1,30000,131000,0,0,0\n"
                          "1,1,5,5,5,0,0,4500,131000,0,0,98000000\n");
    unlink(path);
}

/* The agents' lines: the flows' and 007's and Pingmesh's, and what is not a line of theirs. */
Test(testbed_rules, agent_lines_of_flows_traceroutes_and_pings)
{
    qr_agent_report r;
    cr_assert_eq(qr_agent_report_parse("sent 3 100 250 5000 2", 4, &r), QR_OK);
    cr_assert_eq(r.kind, QR_AGENT_SENT);
    cr_assert_eq(r.retransmissions, 2);
    cr_assert_eq(qr_agent_report_parse("probe 3 7 2 226 123456789", 4, &r), QR_OK);
    cr_assert_eq(r.kind, QR_AGENT_PROBE);
    cr_assert_eq(r.flow, 3);
    cr_assert_eq(r.trace, 7);
    cr_assert_eq(r.ttl, 2);
    cr_assert_eq(r.ip_id, 226);
    cr_assert_eq(r.a_ns, 123456789);
    cr_assert_eq(qr_agent_report_parse("answer 7 2 184549381 123456999", 4, &r), QR_OK);
    cr_assert_eq(r.kind, QR_AGENT_ANSWER);
    cr_assert_eq(r.replier, 184549381u);
    cr_assert_eq(r.a_ns, 123456999);
    cr_assert_eq(qr_agent_report_parse("ping 9 40000 1000 -1", 10, &r), QR_OK);
    cr_assert_eq(r.kind, QR_AGENT_PING);
    cr_assert_eq(r.flow, 9);
    cr_assert_eq(r.sport, 40000);
    cr_assert_eq(r.b_ns, -1);
    cr_assert_eq(qr_agent_report_parse("ping 9 40000 1000 2500", 10, &r), QR_OK);
    cr_assert_eq(r.b_ns, 2500);
    cr_assert_eq(qr_agent_report_parse("probe 4 7 2 226 1", 4, &r), QR_ESYNTAX, "flow 4 of 4");
    const char *bad[] = {"probe 3 7 0 226 1",        /* TTL 0 */
                         "probe 3 7 32 226 1",       /* TTL above QR_TRACE_MAX_TTL */
                         "probe 3 7 2 65536 1",      /* IP ID out of range */
                         "probe 3 7 2 226",          /* missing the time */
                         "answer 7 2 184549381",     /* missing the time */
                         "answer 7 2 184549381 1 x", /* extra field */
                         "ping 10 40000 1000 5",     /* pair out of range */
                         "ping 9 70000 1000 5",      /* port out of range */
                         "ping 9 40000 1000 -2",     /* a negative round trip but -1 */
                         "pong 9 40000 1000 5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(qr_agent_report_parse(bad[i], 10, &r), QR_ESYNTAX, "%s", bad[i]);
}
