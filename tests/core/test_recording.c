/* The recording reader: packets named by direction and number, drop tags from the detected drops,
 * sampling of every direction within th with injection order by time, and clear errors for
 * recordings that do not add up. Recordings are built by hand with the core's writers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/lossdet.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/trace.h"

static char dir[64];
static qr_scenario *scen;
static qr_topology *topo;

static void setup(void)
{
    char err[QR_ERRBUF_SIZE], p[128];
    snprintf(dir, sizeof dir, "/tmp/qr-rec-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/pcap", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
    cr_assert_eq(qr_scenario_set(scen, "topology.kind=star", err), QR_OK);
    cr_assert_eq(qr_topology_star(&topo, 3), QR_OK);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    qr_scenario_destroy(scen);
    qr_topology_destroy(topo);
}

TestSuite(recording, .init = setup, .fini = teardown);

/* Host h's pcap: packets of flow 0 (0 -> 1) in direction dir, IP IDs from first_id, at times. */
static void pcap(uint32_t h, int dir_ack, const int64_t *t, size_t n, uint16_t first_id,
                 int foreign_port)
{
    char p[128], err[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/pcap/h%04u.pcap", dir, h);
    qr_trace_writer *w;
    cr_assert_eq(qr_trace_writer_open(&w, p, err), QR_OK, "%s", err);
    for (size_t i = 0; i < n; i++) {
        qr_packet pk = {.time_ns = t[i],
                        .proto = 6,
                        .ttl = 64,
                        .ip_id = (uint16_t)(first_id + i),
                        .ip_len = dir_ack ? 52 : 1500,
                        .tcp_flags = QR_TCP_ACK};
        uint32_t a = qr_topology_host_addr(topo, 0), b = qr_topology_host_addr(topo, 1);
        pk.src_ip = dir_ack ? b : a;
        pk.dst_ip = dir_ack ? a : b;
        pk.src_port = dir_ack ? QR_SINK_PORT : (uint16_t)(foreign_port ? 12345 : 10000);
        pk.dst_port = dir_ack ? 10000 : QR_SINK_PORT;
        cr_assert_eq(qr_trace_write(w, &pk, err), QR_OK, "%s", err);
    }
    cr_assert_eq(qr_trace_writer_close(w, err), QR_OK, "%s", err);
}

static void recording(uint64_t packets0, uint64_t packets1)
{
    char p[128], err[QR_ERRBUF_SIZE];
    qr_row_flow f[] = {{0, 0, 1, 10000, 5001, 6000, 0, 90, 90, 0, 1, 1}};
    qr_row_host h[] = {{0, 0, 7, packets0, 0, "pcap/h0000.pcap"},
                       {1, 0, 0, packets1, 0, "pcap/h0001.pcap"},
                       {2, 0, 0, 0, 0, "pcap/h0002.pcap"}};
    qr_row_detected d[] = {qr_detected_row(1, 0, 2, 0)};
    qr_row_received r[] = {{0, 0, 40}, {0, 1, 50}, {1, 0, 60}};
    qr_recording_info info = {"hand", QR_END_COMPLETED, 100};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, scen, &info, f, 1, h, 3, d, 1, r, 3, err), QR_OK, "%s", err);
    pcap(2, 0, NULL, 0, 0, 0);
}

static const int64_t data_t[] = {0, 1200, 2400, 3600, 4800, 20000};
static const int64_t ack_t[] = {1500, 4000, 30000};

Test(recording, names_packets_and_tags_the_detected_drop)
{
    pcap(0, 0, data_t, 6, 0, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 3);
    qr_recording *r;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    cr_assert_eq(qr_recording_hosts(r), 3);
    cr_assert_eq(qr_recording_clock_offset(r, 0), 7);
    size_t n;
    const qr_rec_packet *pk = qr_recording_packets(r, 0, &n);
    cr_assert_eq(n, 6);
    for (size_t i = 0; i < n; i++) {
        cr_assert(pk[i].dir == 0 && pk[i].seq == i);
        cr_assert_eq(pk[i].drop_tag, i == 2, "packet %zu", i);
    }
    pk = qr_recording_packets(r, 1, &n);
    cr_assert(n == 3 && pk[2].dir == 1 && pk[2].seq == 2);
    int64_t t;
    cr_assert_eq(qr_recording_received(r, qr_packet_id(0, 1), &t), QR_OK);
    cr_assert_eq(t, 50);
    cr_assert_eq(qr_recording_received(r, qr_packet_id(0, 2), &t), QR_ENOTFOUND);
    cr_assert(qr_recording_has_received(r));
    /* th = 0: every injection time is the recorded one */
    qr_sampling_stats st;
    qr_row_sample_record *recs;
    size_t nr;
    cr_assert_eq(qr_recording_sample(r, QR_SAMPLING_RATE, 0, &st, &recs, &nr, err), QR_OK);
    cr_assert_eq(st.packets, 9);
    cr_assert_eq(st.max_error_ns, 0);
    cr_assert_eq(st.records, nr);
    for (size_t i = 0; i < nr; i++)
        cr_assert(recs[i].dir == 0 || recs[i].dir == 1);
    qr_h5_rows_free(recs);
    pk = qr_recording_packets(r, 0, &n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(pk[i].time_ns, data_t[i]);
    /* th = 5 us: within the bound, and the injection order follows the injection times */
    cr_assert_eq(qr_recording_sample(r, QR_SAMPLING_RATE, 5000, &st, NULL, NULL, err), QR_OK);
    cr_assert_leq(st.max_error_ns, 5000);
    cr_assert_lt(st.records, 9, "a steady rate needs fewer records than packets");
    const uint32_t *order = qr_recording_order(r, 0);
    for (size_t i = 0; i < n; i++) {
        cr_assert_leq(llabs(pk[i].time_ns - data_t[i]), 5000);
        if (i)
            cr_assert_leq(pk[order[i - 1]].time_ns, pk[order[i]].time_ns);
    }
    qr_recording_close(r);
}

Test(recording, ip_ids_out_of_sequence_are_named)
{
    pcap(0, 0, data_t, 6, 1, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 3);
    qr_recording *r = NULL;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_EFORMAT);
    cr_assert_null(r);
    cr_assert(strstr(err, "h0000.pcap") && strstr(err, "packet 1") && strstr(err, "IP ID 1"), "%s",
              err);
}

Test(recording, packets_of_no_flow_and_cut_pcaps_are_named)
{
    pcap(0, 0, data_t, 6, 0, 1);
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 3);
    qr_recording *r = NULL;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_EFORMAT);
    cr_assert(strstr(err, "belongs to no flow of host 0"), "%s", err);
    pcap(0, 0, data_t, 6, 0, 0);
    recording(7, 3);
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_ETRUNC);
    cr_assert(strstr(err, "h0000.pcap") && strstr(err, "6 packets") && strstr(err, "says 7"), "%s",
              err);
}

Test(recording, a_scenario_for_another_network_is_refused)
{
    pcap(0, 0, data_t, 6, 0, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 3);
    qr_scenario *other;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create(&other), QR_OK);
    cr_assert_eq(qr_scenario_set(other, "topology.kind=star", err), QR_OK);
    cr_assert_eq(qr_scenario_set(other, "topology.hosts=5", err), QR_OK);
    qr_recording *r = NULL;
    cr_assert_eq(qr_recording_open(&r, dir, other, err), QR_EVALUE);
    cr_assert(strstr(err, "[topology] hosts = 5, recorded 3"), "%s", err);
    qr_scenario_destroy(other);
    cr_assert_eq(qr_recording_open(&r, "/nonexistent/qr", NULL, err), QR_ENOENT);
    cr_assert(strstr(err, "not a complete recording"), "%s", err);
}

/* Found by fuzz_recording: a recording in which no host sent anything sorted a NULL array. */
Test(recording, a_recording_with_no_packets)
{
    pcap(0, 0, NULL, 0, 0, 0);
    pcap(1, 1, NULL, 0, 0, 0);
    recording(0, 0);
    qr_recording *r;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    qr_sampling_stats st;
    cr_assert_eq(qr_recording_sample(r, QR_SAMPLING_RATE, 5000, &st, NULL, NULL, err), QR_OK);
    cr_assert_eq(st.packets, 0);
    qr_recording_close(r);
}
