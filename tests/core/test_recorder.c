/* The runtime's recorder (recorder.h) driven by hand: its books conserve packets per direction,
 * its end rule waits for every flow and every packet, tails are detected only for packets sent
 * before the cutoff, captures carry the hosts' clocks, and the run folder appears whole at commit
 * or not at all. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/recorder.h"
#include "qreplay/recording.h"
#include "qreplay/topology.h"
#include "qreplay/truth.h"

static char dir[64];
static qr_topology *topo;
static qr_flow_table *ft;
static qr_scenario *scen;
static const int64_t offsets[3] = {100, -50, 7};

static void setup(void)
{
    char err[QR_ERRBUF_SIZE];
    snprintf(dir, sizeof dir, "/tmp/qr-recorder-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(qr_topology_star(&topo, 3), QR_OK);
    qr_flow flows[] = {{0, 0, 1, 3000, 0, 0}};
    cr_assert_eq(qr_flow_table_for_topology(&ft, flows, 1, topo, err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
    cr_assert_eq(qr_scenario_set(scen, "topology.kind=star", err), QR_OK, "%s", err);
}

static void teardown(void)
{
    qr_flow_table_destroy(ft);
    qr_topology_destroy(topo);
    qr_scenario_destroy(scen);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(recorder, .init = setup, .fini = teardown);

static qr_packet data(uint16_t ip_id)
{
    qr_packet k = {.proto = 6, .ttl = 64, .ip_id = ip_id, .ip_len = 1500, .tcp_flags = QR_TCP_ACK};
    k.src_ip = qr_flow_table_host_addr(ft, 0);
    k.dst_ip = qr_flow_table_host_addr(ft, 1);
    k.src_port = qr_flow_table_sender_port(ft, 0);
    k.dst_port = QR_SINK_PORT;
    return k;
}

static int exists(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return access(p, F_OK) == 0;
}

static size_t files_in(const char *sub)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A %s/%s 2>/dev/null | wc -l", dir, sub);
    FILE *f = popen(cmd, "r");
    size_t n = 0;
    cr_assert_eq(fscanf(f, "%zu", &n), 1);
    pclose(f);
    return n;
}

Test(recorder, books_conserve_packets_and_the_run_ends_when_all_is_done)
{
    char err[QR_ERRBUF_SIZE];
    qr_recorder *r;
    qr_recorder_opts o = {dir, "hand", 1};
    cr_assert_eq(qr_recorder_create(&r, scen, ft, offsets, &o, err), QR_OK, "%s", err);
    /* three data packets; the second is dropped at the switch */
    for (uint16_t i = 0; i < 3; i++) {
        qr_packet k = data(i);
        cr_assert_eq(qr_recorder_sent(r, 0, 0, &k, 1000 * i, err), QR_OK, "%s", err);
        cr_assert_eq(k.time_ns, 1000 * i + offsets[0], "the capture carries host 0's clock");
    }
    qr_recorder_unknown(r); /* a packet the runtime could not decode */
    qr_arrival drop = {.packet = qr_packet_id(0, 1),
                       .time_ns = 1500,
                       .bytes = 1500,
                       .decision = QR_DROP_THRESHOLD};
    qr_arrival pass = {.packet = qr_packet_id(0, 0), .time_ns = 500, .bytes = 1500};
    cr_assert_eq(qr_recorder_arrival(r, &pass, err), QR_OK);
    cr_assert_eq(qr_recorder_arrival(r, &drop, err), QR_OK);
    qr_recorder_delivered(r, 1, 0, 0, 1500, 900, 0);
    cr_assert_eq(qr_recorder_observed(r, 1, 0, 0), QR_OK);
    qr_recorder_completed(r, 0, 2900);
    qr_recorder_closed(r, 0);
    cr_assert_not(qr_recorder_all_done(r), "packet 2 is still in flight");
    qr_recorder_delivered(r, 1, 0, 2, 1500, 3000, 0);
    cr_assert_eq(qr_recorder_observed(r, 1, 0, 2), QR_OK);
    cr_assert(qr_recorder_all_done(r));
    size_t n;
    const qr_row_direction *d = qr_recorder_directions(r, &n);
    cr_assert_eq(n, 2);
    cr_assert(d[0].sent == 3 && d[0].delivered == 2 && d[0].dropped == 1);
    cr_assert_eq(d[0].sent_bytes, d[0].delivered_bytes + d[0].dropped_bytes);
    qr_recorder_counts c = qr_recorder_counters(r);
    cr_assert(c.packets == 3 && c.unknown == 1 && c.in_flight == 0 && c.flows_done == 1);
    /* the receiver saw IP IDs 0 and 2: packet 1 is a detected drop */
    const qr_row_detected *det = qr_recorder_detected(r, &n);
    cr_assert(n == 1 && det[0].dir == 0 && det[0].seq == 1);
    const qr_row_received *rx = qr_recorder_received(r, &n);
    cr_assert(n == 2 && rx[1].time_ns == 3000 + offsets[1], "receive times on host 1's clock");
    cr_assert_eq(qr_recorder_drops(r, &n)[0].packet, drop.packet);
    /* nothing under its final name before the commit */
    cr_assert_not(exists("recording.h5"));
    cr_assert_not(exists("pcap/h0000.pcap"));
    qr_recorder_end e = {
        .reason = QR_END_COMPLETED, .sim_end_ns = 3000, .events = 10, .wall_s = 0.1};
    cr_assert_eq(qr_recorder_commit(r, &e, err), QR_OK, "%s", err);
    cr_assert_eq(qr_recorder_commit(r, &e, err), QR_ESTATE);
    qr_recorder_destroy(r);
    cr_assert(exists("recording.h5") && exists("truth/truth.h5") && exists("truth/arrivals.qra"));
    cr_assert_eq(files_in("pcap"), 3, "one capture per host, no temporary left");
    cr_assert_eq(files_in("truth"), 2);
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    /* the hosts' clock offsets are the truth's alone: the recording does not hold them */
    int64_t got[3] = {-1, -1, -1};
    cr_assert_eq(qr_truth_clock_offsets(dir, qr_recording_hosts(rec), got, err), QR_OK, "%s", err);
    for (uint32_t h = 0; h < 3; h++)
        cr_assert_eq(got[h], offsets[h], "host %u", h);
    cr_assert_eq(qr_truth_clock_offsets(dir, 2, got, err), QR_EFORMAT);
    char h5[4200];
    snprintf(h5, sizeof h5, "%s/recording.h5", dir);
    qr_h5_reader *in;
    qr_row_host *hosts;
    size_t nh;
    cr_assert_eq(qr_h5_open(&in, h5, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_read_rows(in, "/hosts", &qr_schema_host, (void **)&hosts, &nh, err), QR_OK);
    for (size_t h = 0; h < nh; h++)
        cr_assert_eq(hosts[h].clock_offset_ns, 0, "host %zu: /hosts holds no true offset", h);
    qr_h5_rows_free(hosts);
    qr_h5_close(in);
    cr_assert_eq(qr_truth_clock_offsets("/nonexistent", 3, got, err), QR_ENOENT);
    qr_recording_close(rec);
}

Test(recorder, tails_count_only_packets_sent_before_the_cutoff)
{
    char err[QR_ERRBUF_SIZE];
    qr_recorder *r;
    cr_assert_eq(qr_recorder_create(&r, scen, ft, offsets, NULL, err), QR_OK, "%s", err);
    for (uint16_t i = 0; i < 4; i++) {
        qr_packet k = data(i);
        cr_assert_eq(qr_recorder_sent(r, 0, 0, &k, 1000 * i, err), QR_OK);
        if (i == 1)
            qr_recorder_cutoff(r); /* two packets sent by the cutoff */
    }
    qr_recorder_delivered(r, 1, 0, 0, 1500, 500, 0);
    cr_assert_eq(qr_recorder_observed(r, 1, 0, 0), QR_OK);
    cr_assert_eq(qr_recorder_end_run(r, QR_END_STOP, err), QR_OK, "%s", err);
    size_t n, nc;
    const qr_row_detected *det = qr_recorder_detected(r, &n);
    const uint64_t *cut = qr_recorder_sent_at_cutoff(r, &nc);
    cr_assert(nc == 2 && cut[0] == 2);
    cr_assert_eq(n, 1, "only packet 1 was sent before the cutoff and never seen");
    cr_assert_eq(det[0].seq, 1);
    cr_assert_eq(qr_recorder_end_run(r, QR_END_STOP, err), QR_ESTATE);
    qr_recorder_destroy(r);
    cr_assert_eq(files_in(""), 0, "without a folder nothing is written");
}

Test(recorder, destroyed_before_commit_leaves_nothing_and_removes_an_old_recording)
{
    char err[QR_ERRBUF_SIZE], p[128];
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fclose(f);
    qr_recorder *r;
    qr_recorder_opts o = {dir, NULL, 1};
    cr_assert_eq(qr_recorder_create(&r, scen, ft, offsets, &o, err), QR_OK, "%s", err);
    cr_assert_not(exists("recording.h5"), "an old recording must not pass for the new one");
    qr_packet k = data(0);
    cr_assert_eq(qr_recorder_sent(r, 0, 0, &k, 0, err), QR_OK);
    cr_assert_gt(files_in("pcap"), 0);
    qr_recorder_destroy(r);
    cr_assert_eq(files_in("pcap"), 0);
    cr_assert_eq(files_in("truth"), 0);
}
