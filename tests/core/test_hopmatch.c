/* The match expressions of qreplay trace (hopmatch.c): precedence of not/and/or, the packet tests
 * on hand-made packets, the hop tests on hand-made arrivals, and an error that names the place
 * and the reason for every kind of bad expression. The recording is built by hand: a star, three
 * hosts, flow 0 from h0 to h1. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/hoptrace.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"

static char dir[64];
static qr_recording *rec;

static void empty_pcap(uint32_t h)
{
    char p[128], err[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/pcap/h%04u.pcap", dir, h);
    qr_pcap_writer *w;
    cr_assert_eq(qr_pcap_writer_open(&w, p, err), QR_OK, "%s", err);
    cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK, "%s", err);
}

static void setup(void)
{
    char err[QR_ERRBUF_SIZE], p[128];
    snprintf(dir, sizeof dir, "/tmp/qr-match-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/pcap", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "topology.kind=star", err), QR_OK, "%s", err);
    qr_row_flow f[] = {{0, 0, 1, 10000, QR_SINK_PORT, 6000, 0, 90, 90, 0, 1, 1}};
    qr_row_host h[] = {{0, 0, 0, 0, 0, "pcap/h0000.pcap"},
                       {1, 0, 0, 0, 0, "pcap/h0001.pcap"},
                       {2, 0, 0, 0, 0, "pcap/h0002.pcap"}};
    qr_recording_info info = {NULL, "hand", QR_END_COMPLETED, 100, 0, NULL, 0, NULL, 0, NULL, 0,
                              NULL, 0};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, s, &info, f, 1, h, 3, NULL, 0, NULL, 0, err), QR_OK, "%s",
                 err);
    qr_scenario_destroy(s);
    for (uint32_t i = 0; i < 3; i++)
        empty_pcap(i);
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
}

static void teardown(void)
{
    qr_recording_close(rec);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(hopmatch, .init = setup, .fini = teardown);

static qr_match *parse(const char *expr)
{
    qr_match *m = NULL;
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_match_parse(&m, expr, rec, err), QR_OK, "'%s': %s", expr, err);
    return m;
}

/* A data segment of flow 0 (h0 -> h1) or its ACK, with flags and payload. */
static qr_packet segment(int ack, uint8_t flags, uint32_t payload)
{
    qr_packet k = {.proto = 6, .ttl = 64, .tcp_flags = flags, .ip_len = 40 + payload};
    k.src_port = ack ? QR_SINK_PORT : 10000;
    k.dst_port = ack ? 10000 : QR_SINK_PORT;
    return k;
}

static qr_match_packet packet_of(const qr_packet *k, int ack, uint64_t number)
{
    qr_match_packet p = {.dir = ack ? 1u : 0u, .src = ack ? 1u : 0u, .dst = ack ? 0u : 1u};
    p.packet = qr_packet_id(p.dir, number);
    p.pk = k;
    p.first_ns = INT64_MIN;
    return p;
}

Test(hopmatch, and_binds_tighter_than_or_and_not_tighter_than_and)
{
    qr_packet syn = segment(0, QR_TCP_SYN, 0), data = segment(0, QR_TCP_ACK, 1460),
              ack = segment(1, QR_TCP_ACK, 0);
    qr_match_packet psyn = packet_of(&syn, 0, 0), pdata = packet_of(&data, 0, 1),
                    pack = packet_of(&ack, 1, 0);
    /* (syn and dir 1) or payload: the SYN is in dir 0, so only the data matches */
    qr_match *m = parse("syn and dir 1 or payload");
    cr_assert(!qr_match_eval(m, &psyn));
    cr_assert(qr_match_eval(m, &pdata));
    cr_assert(!qr_match_eval(m, &pack));
    qr_match_free(m);
    /* syn and (dir 1 or payload): nothing */
    m = parse("syn && (dir 1 || payload)");
    cr_assert(!qr_match_eval(m, &psyn) && !qr_match_eval(m, &pdata) && !qr_match_eval(m, &pack));
    qr_match_free(m);
    /* (not syn) and ack: the data and the ACK */
    m = parse("not syn and ack");
    cr_assert(!qr_match_eval(m, &psyn) && qr_match_eval(m, &pdata) && qr_match_eval(m, &pack));
    qr_match_free(m);
    m = parse("! (syn or ack)");
    cr_assert(!qr_match_eval(m, &psyn) && !qr_match_eval(m, &pdata) && !qr_match_eval(m, &pack));
    qr_match_free(m);
}

Test(hopmatch, packet_tests_read_the_headers_and_the_marks)
{
    qr_packet data = segment(0, QR_TCP_ACK, 1460), ack = segment(1, QR_TCP_ACK, 0);
    qr_match_packet pdata = packet_of(&data, 0, 7), pack = packet_of(&ack, 1, 3);
    struct {
        const char *expr;
        int data, ack;
    } cases[] = {
        {"flow 0", 1, 1},       {"flow 0-0", 1, 1},    {"dir 0", 1, 0},     {"packet 0:7", 1, 0},
        {"packet 1:3", 0, 1},   {"src h0", 1, 0},      {"dst h0", 0, 1},    {"host h1", 1, 1},
        {"sport 10000", 1, 0},  {"dport 10000", 0, 1}, {"port 5001", 1, 1}, {"h0:10000>h1", 1, 0},
        {"h0 > h1:5001", 1, 0}, {"h1>h0", 0, 1},       {"h0:9>h1", 0, 0},   {"payload", 1, 0},
        {"retransmit", 0, 0},   {"detected", 0, 0},    {"after 0ns", 0, 0}, {"before 1s", 0, 0},
        {"all", 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qr_match *m = parse(cases[i].expr);
        cr_assert_eq(qr_match_eval(m, &pdata), cases[i].data, "'%s' on the data", cases[i].expr);
        cr_assert_eq(qr_match_eval(m, &pack), cases[i].ack, "'%s' on the ACK", cases[i].expr);
        qr_match_free(m);
    }
    /* the marks and the first switch's time */
    pdata.retransmit = 1;
    pdata.first_ns = 2000000;
    qr_match *m = parse("retransmit and after 2ms and not before 2ms");
    cr_assert(qr_match_eval(m, &pdata));
    qr_match_free(m);
    /* a packet of no recording: every header test is false, the others still hold */
    qr_match_packet bare = packet_of(NULL, 0, 0);
    m = parse("syn or payload or port 5001");
    cr_assert(!qr_match_eval(m, &bare));
    qr_match_free(m);
    m = parse("flow 0 and src h0");
    cr_assert(qr_match_eval(m, &bare));
    qr_match_free(m);
}

Test(hopmatch, hosts_by_address)
{
    const qr_flow_table *ft = qr_recording_flows(rec);
    uint32_t a = qr_flow_table_host_addr(ft, 1);
    char expr[64];
    snprintf(expr, sizeof expr, "dst %u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
             a & 255);
    qr_packet data = segment(0, QR_TCP_ACK, 100);
    qr_match_packet p = packet_of(&data, 0, 0);
    qr_match *m = parse(expr);
    cr_assert(qr_match_eval(m, &p));
    qr_match_free(m);
}

Test(hopmatch, hop_tests_hold_per_arrival_and_count_once)
{
    qr_match *m = parse("drop threshold and via s0:1 or queued 10us");
    qr_arrival dropped = {.sw = 0, .port = 1, .decision = QR_DROP_THRESHOLD};
    qr_arrival elsewhere = {.sw = 0, .port = 2, .decision = QR_DROP_THRESHOLD};
    qr_arrival admitted = {.sw = 0, .port = 1, .decision = QR_ADMIT};
    uint64_t b_drop = qr_match_hop(m, &dropped, 0), b_else = qr_match_hop(m, &elsewhere, 0);
    uint64_t b_short = qr_match_hop(m, &admitted, 9999), b_long = qr_match_hop(m, &admitted, 10000);
    qr_match_packet p = packet_of(NULL, 0, 0);
    /* dropped at s0:1: both tests of the 'and' held at that hop */
    p.hops = b_drop;
    cr_assert(qr_match_eval(m, &p));
    /* dropped at another queue: the queue test failed */
    p.hops = b_else;
    cr_assert(!qr_match_eval(m, &p));
    /* through s0:1 and dropped elsewhere: the tests hold at some hop each (OR over the hops) */
    p.hops = b_else | b_short;
    cr_assert(qr_match_eval(m, &p));
    /* admitted and queued 9999 ns: no; 10 us: yes (a dropped packet never counts as queued) */
    p.hops = b_short;
    cr_assert(!qr_match_eval(m, &p));
    p.hops = b_long;
    cr_assert(qr_match_eval(m, &p));
    qr_arrival queued2 = {.sw = 0, .port = 2, .decision = QR_ADMIT};
    uint64_t queued_bit = qr_match_hop(m, &queued2, 10000);
    cr_assert_neq(queued_bit, 0);
    cr_assert_eq(qr_match_hop(m, &elsewhere, 1000000) & queued_bit, 0);
    qr_match_free(m);
    /* the same test twice is one test; 'dropped' is where the trace stops, not a hop's decision
     * (a lost mirror copy can end a trace at an admit) */
    m = parse("dropped or dropped");
    cr_assert_eq(qr_match_hop(m, &dropped, 0), 0);
    cr_assert_eq(qr_match_fate(m, QR_DROP_THRESHOLD), 1);
    cr_assert_eq(qr_match_fate(m, QR_TRACE_SILENT), 1);
    cr_assert_eq(qr_match_fate(m, QR_ADMIT), 0);
    qr_match_free(m);
}

Test(hopmatch, bad_expressions_say_where_and_why)
{
    struct {
        const char *expr, *says;
    } cases[] = {
        {"", "an empty expression"},
        {"flow 3", "the recording has flows 0-0"},
        {"flow 1-0", "the range ends before it starts"},
        {"flow x", "'x' is not a flow number or range N-M"},
        {"dir 2", "the recording has directions 0-1"},
        {"src h3", "no host h3 (the recording has hosts h0-h2)"},
        {"src 1.2.3.4", "no host of the recording has address 1.2.3.4"},
        {"(syn", "expected ')'"},
        {"syn)", "a ')' without its '('"},
        {"syn payload", "expected 'and' or 'or' before it"},
        {"drop cosmic", "'cosmic' is not a drop reason"},
        {"via s9", "no switch s9 (the topology has switches s0-s0)"},
        {"via x9", "is not a switch (sN), a queue (sN:P) or a link (A>B)"},
        {"queued soon", "'soon' is not a time"},
        {"sport 70000", "'70000' is not a port"},
        {"h0:0>h1", "'0' is not a port (1-65535)"},
        {"frobnicate", "'frobnicate' is not a test"},
        {"flow", "flow"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qr_match *m = (qr_match *)1;
        char err[QR_ERRBUF_SIZE] = "";
        cr_assert_eq(qr_match_parse(&m, cases[i].expr, rec, err), QR_EVALUE, "'%s'", cases[i].expr);
        cr_assert_null(m, "'%s' left a match", cases[i].expr);
        cr_assert(strstr(err, cases[i].says), "'%s': %s", cases[i].expr, err);
    }
    /* the column of the offending word */
    qr_match *m;
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_match_parse(&m, "syn and flow 9", rec, err), QR_EVALUE);
    cr_assert(strstr(err, "column 14"), "%s", err);
}
