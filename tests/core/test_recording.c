/* The recording reader: packets named by direction and number, drop tags from the detected drops,
 * sampling of every direction within th with injection order by time, and clear errors for
 * recordings that do not add up. Recordings are built by hand with the core's writers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/isolate.h"
#include "qreplay/light.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/schema.h"
#include "qreplay/topology.h"

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
    qr_pcap_writer *w;
    cr_assert_eq(qr_pcap_writer_open(&w, p, err), QR_OK, "%s", err);
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
        cr_assert_eq(qr_pcap_write(w, &pk, err), QR_OK, "%s", err);
    }
    cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK, "%s", err);
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
    qr_recording_info info = {NULL, "hand", QR_END_COMPLETED, 100, 0, NULL, 0, NULL, 0, NULL, 0,
                              NULL, 0};
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
    qr_plan *plan;
    cr_assert_eq(qr_plan_sample(&plan, r, NULL, QR_SAMPLING_RATE, 0, &st, &recs, &nr, err), QR_OK);
    cr_assert_eq(st.packets, 9);
    cr_assert_eq(st.max_error_ns, 0);
    cr_assert_eq(st.records, nr);
    for (size_t i = 0; i < nr; i++)
        cr_assert(recs[i].dir == 0 || recs[i].dir == 1);
    qr_h5_rows_free(recs);
    pk = qr_recording_packets(r, 0, &n);
    size_t nt;
    const int64_t *t0 = qr_plan_times(plan, 0, &nt);
    cr_assert_eq(nt, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(t0[i], data_t[i]);
    qr_plan_free(plan);
    /* th = 5 us: within the bound, and the injection order follows the injection times; the
     * recording is unchanged */
    cr_assert_eq(qr_plan_sample(&plan, r, NULL, QR_SAMPLING_RATE, 5000, &st, NULL, NULL, err),
                 QR_OK);
    cr_assert_leq(st.max_error_ns, 5000);
    cr_assert_lt(st.records, 9, "a steady rate needs fewer records than packets");
    const uint32_t *order = qr_plan_order(plan, 0);
    t0 = qr_plan_times(plan, 0, &nt);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(pk[i].pk.time_ns, data_t[i]);
        cr_assert_leq(llabs(t0[i] - data_t[i]), 5000);
        if (i)
            cr_assert_leq(t0[order[i - 1]], t0[order[i]]);
    }
    qr_plan_free(plan);
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

Test(recording, of_two_damaged_pcaps_the_first_host_is_named)
{
    /* the pcaps are read by several threads side by side: the error must still be the one that
     * reading the hosts in turn would give, every time */
    pcap(0, 0, data_t, 6, 1, 0); /* IP IDs from 1 */
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 4); /* host 1: one packet short */
    for (int i = 0; i < 50; i++) {
        qr_recording *r = NULL;
        char err[QR_ERRBUF_SIZE];
        cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_EFORMAT, "try %d: %s", i, err);
        cr_assert_null(r);
        cr_assert(strstr(err, "h0000.pcap") && strstr(err, "IP ID 1"), "try %d: %s", i, err);
    }
    pcap(0, 0, data_t, 6, 0, 0); /* host 0 repaired: now host 1's is the error */
    recording(6, 4);             /* of these pcaps (/pcaps: their sizes and digests) */
    qr_recording *r = NULL;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_ETRUNC, "%s", err);
    cr_assert(strstr(err, "h0001.pcap") && strstr(err, "3 packets") && strstr(err, "says 4"), "%s",
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
    qr_plan *plan;
    cr_assert_eq(qr_plan_sample(&plan, r, NULL, QR_SAMPLING_RATE, 5000, &st, NULL, NULL, err),
                 QR_OK);
    cr_assert_eq(st.packets, 0);
    qr_plan_free(plan);
    qr_recording_close(r);
}

/* Clock reconciliation on a recording: three hosts with random clock offsets, flows
 * 0->1, 1->2 and 0->2, every packet received after the unloaded latency plus a random queueing
 * delay, on the receiver's clock. With one unqueued packet per direction the estimate is exact
 * (offset(h) - offset(0)); with queueing everywhere it is off by at most half the smallest delay.
 * A correction shifts send times by exactly its amount and NULL restores them. */
static int cmp_packet_time(const void *a, const void *b)
{
    const qr_packet *x = a, *y = b;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static void clock_case(uint64_t seed, int unqueued)
{
    char p[128], err[QR_ERRBUF_SIZE];
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
#define RND(n) ((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (n)
    int64_t off[3];
    for (int h = 0; h < 3; h++)
        off[h] = (int64_t)RND(20000); /* recorded times cannot be negative */
    qr_flow fl[3] = {{0, 0, 1, 15000, 0, 0}, {1, 1, 2, 15000, 0, 0}, {2, 0, 2, 15000, 0, 0}};
    qr_flow_table *ft;
    cr_assert_eq(qr_flow_table_for_topology(&ft, fl, 3, topo, err), QR_OK, "%s", err);
    qr_pcap_writer *w[3];
    for (uint32_t h = 0; h < 3; h++) {
        snprintf(p, sizeof p, "%s/pcap/h%04u.pcap", dir, h);
        cr_assert_eq(qr_pcap_writer_open(&w[h], p, err), QR_OK, "%s", err);
    }
    qr_row_received recv[60];
    qr_packet out[3][40];
    size_t n_recv = 0;
    uint64_t count[3] = {0, 0, 0};
    int64_t min_q[6];
    for (uint32_t dir = 0; dir < 6; dir++) {
        const qr_flow *f = &fl[dir / 2];
        uint32_t from = dir % 2 ? f->dst : f->src, to = dir % 2 ? f->src : f->dst;
        int64_t t = 1000 * (int64_t)dir;
        min_q[dir] = INT64_MAX;
        for (uint32_t seq = 0; seq < 10; seq++) {
            t += 3000 + (int64_t)RND(2000);
            uint32_t len = dir % 2 ? 52 : 1500;
            int64_t q = unqueued && seq == 7 ? 0 : 1 + (int64_t)RND(4000);
            min_q[dir] = q < min_q[dir] ? q : min_q[dir];
            qr_packet pk = {.time_ns = t + off[from],
                            .proto = 6,
                            .ttl = 64,
                            .ip_id = (uint16_t)seq,
                            .ip_len = (uint16_t)len,
                            .tcp_flags = QR_TCP_ACK};
            uint16_t sp = qr_flow_table_sender_port(ft, dir / 2);
            pk.src_ip = qr_topology_host_addr(topo, from);
            pk.dst_ip = qr_topology_host_addr(topo, to);
            pk.src_port = dir % 2 ? QR_SINK_PORT : sp;
            pk.dst_port = dir % 2 ? sp : QR_SINK_PORT;
            out[from][count[from]++] = pk;
            const qr_config *c = qr_scenario_config(scen);
            int64_t lat =
                qr_unloaded_latency_ns(topo, from, to, len, c->links.rate_bps, c->links.delay_ns);
            recv[n_recv++] = (qr_row_received){dir, seq, t + lat + q + off[to]};
        }
    }
    for (uint32_t h = 0; h < 3; h++) {
        /* a pcap is in time order: the host's directions interleaved */
        qsort(out[h], count[h], sizeof out[h][0], cmp_packet_time);
        for (uint64_t i = 0; i < count[h]; i++)
            cr_assert_eq(qr_pcap_write(w[h], &out[h][i], err), QR_OK, "%s", err);
        cr_assert_eq(qr_pcap_writer_close(w[h], err), QR_OK, "%s", err);
    }
    qr_row_flow rf[3];
    for (uint32_t f = 0; f < 3; f++)
        rf[f] = (qr_row_flow){f,
                              fl[f].src,
                              fl[f].dst,
                              qr_flow_table_sender_port(ft, f),
                              QR_SINK_PORT,
                              15000,
                              0,
                              -1,
                              -1,
                              0,
                              0,
                              0};
    qr_row_host hr[3];
    for (uint32_t h = 0; h < 3; h++) {
        hr[h] = (qr_row_host){h, qr_topology_host_addr(topo, h), off[h], count[h], 0, ""};
        snprintf(hr[h].pcap, sizeof hr[h].pcap, "pcap/h%04u.pcap", h);
    }
    qr_flow_table_destroy(ft);
    qr_recording_info info = {
        NULL, "clocks", QR_END_COMPLETED, 100000, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, scen, &info, rf, 3, hr, 3, NULL, 0, recv, n_recv, err),
                 QR_OK, "%s", err);
    qr_recording *r;
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    qr_clock_estimate est[3];
    size_t pairs;
    cr_assert_eq(qr_recording_estimate_clocks(r, 0, est, &pairs, err), QR_OK, "%s", err);
    cr_assert_eq(pairs, 3);
    for (uint32_t h = 0; h < 3; h++) {
        double truth = (double)(off[h] - off[0]);
        cr_assert_eq(est[h].reference, 0);
        cr_assert_eq(est[h].pairs, 2);
        if (unqueued)
            cr_assert_float_eq(est[h].offset_ns, truth, 1e-6, "seed %llu host %u: %g vs %g",
                               (unsigned long long)seed, h, (double)est[h].offset_ns, truth);
        else {
            /* each pair's difference is off by (q_ab - q_ba) / 2; the fit averages them */
            int64_t worst = 0;
            for (int d = 0; d < 6; d++)
                worst = min_q[d] > worst ? min_q[d] : worst;
            cr_assert_leq(fabs(est[h].offset_ns - truth), (double)worst, "seed %llu host %u",
                          (unsigned long long)seed, h);
        }
    }
    /* a correction moves every injection time by exactly its amount (th = 0), and neither the
     * recording nor the estimate moves */
    int64_t corr[3] = {5, -700, 1234}; /* send times stay positive (the sampler refuses less) */
    qr_plan *plan;
    cr_assert_eq(qr_plan_sample(&plan, r, corr, QR_SAMPLING_RATE, 0, NULL, NULL, NULL, err), QR_OK,
                 "%s", err);
    for (uint32_t h = 0; h < 3; h++) {
        size_t n, nt;
        const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
        const int64_t *t = qr_plan_times(plan, h, &nt);
        cr_assert_eq(nt, n);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(t[i], pk[i].pk.time_ns - corr[h], "host %u packet %zu", h, i);
    }
    qr_plan_free(plan);
    qr_clock_estimate again[3];
    cr_assert_eq(qr_recording_estimate_clocks(r, 0, again, NULL, err), QR_OK, "%s", err);
    for (uint32_t h = 0; h < 3; h++)
        cr_assert_float_eq(again[h].offset_ns, est[h].offset_ns, 1e-6);
    cr_assert_eq(qr_recording_estimate_clocks(r, 3, est, NULL, err), QR_EINVAL);
    qr_recording_close(r);
#undef RND
}

Test(recording, clock_offsets_are_estimated_from_send_and_receive_times)
{
    for (uint64_t seed = 1; seed <= 20; seed++)
        clock_case(seed, 1);
}

Test(recording, queueing_everywhere_bounds_the_clock_estimate_error)
{
    for (uint64_t seed = 1; seed <= 20; seed++)
        clock_case(seed, 0);
}

/* The flow and hosts of the hand-made recordings below (6 data packets, 3 ACKs). */
static const qr_row_flow hand_flows[] = {{0, 0, 1, 10000, 5001, 6000, 0, 90, 90, 0, 1, 1}};
static const qr_row_host hand_hosts[] = {{0, 0, 7, 6, 0, "pcap/h0000.pcap"},
                                         {1, 0, 0, 3, 0, "pcap/h0001.pcap"},
                                         {2, 0, 0, 0, 0, "pcap/h0002.pcap"}};

Test(recording, a_recording_without_receive_times_has_no_clock_estimate)
{
    pcap(0, 0, data_t, 6, 0, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    char p[128], err[QR_ERRBUF_SIZE];
    const qr_row_flow *f = hand_flows;
    const qr_row_host *h = hand_hosts;
    qr_recording_info info = {NULL, "hand", QR_END_COMPLETED, 100, 0, NULL, 0, NULL, 0, NULL, 0,
                              NULL, 0};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    /* an empty /received: nothing arrived, so no pair has a one-way delay */
    cr_assert_eq(qr_recording_write(p, scen, &info, f, 1, h, 3, NULL, 0, NULL, 0, err), QR_OK);
    pcap(2, 0, NULL, 0, 0, 0);
    qr_recording *r;
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    qr_clock_estimate est[3];
    size_t pairs = 99;
    cr_assert_eq(qr_recording_estimate_clocks(r, 0, est, &pairs, err), QR_OK, "%s", err);
    cr_assert_eq(pairs, 0, "no packet received: no pair");
    for (int i = 0; i < 3; i++)
        cr_assert(est[i].pairs == 0 && est[i].offset_ns == 0);
    qr_recording_close(r);
}

Test(recording, an_isolated_replay_takes_its_connection_fates_and_stop_from_the_recording)
{
    pcap(0, 0, data_t, 6, 0, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 3);
    qr_recording *r;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    qr_isolated_conn c;
    const int64_t offsets[3] = {7, 0, 0}; /* what the program passes: the hosts' clock offsets */
    cr_assert_eq(qr_isolated_conn_of(r, offsets, 1, &c, err), QR_EVALUE);
    cr_assert(strstr(err, "flow 1: the recording has 1 flows"), "%s", err);
    cr_assert_eq(qr_isolated_conn_of(r, offsets, 0, &c, err), QR_OK, "%s", err);
    cr_assert_eq(c.n_sent[0], 6);
    cr_assert_eq(c.n_sent[1], 3);
    /* host 0's clock is 7 ns ahead: its send times come back by 7 ns; host 1's are true */
    for (size_t i = 0; i < 6; i++)
        cr_assert_eq(c.sent[0][i].time_ns, data_t[i] - 7);
    cr_assert_eq(c.sent[1][2].time_ns, 30000);
    cr_assert_eq(c.last_ns, 30000);
    int lost, ce;
    int64_t at;
    cr_assert_eq(qr_isolated_fate(&c, r, 0, 1, &lost, &at, &ce), 1);
    cr_assert(!lost && at == 50, "received at 50 on host 1's true clock");
    cr_assert_eq(qr_isolated_fate(&c, r, 0, 2, &lost, &at, &ce), 1);
    cr_assert(lost, "no receive record: lost");
    cr_assert_eq(qr_isolated_fate(&c, r, 1, 0, &lost, &at, &ce), 1);
    cr_assert(!lost && at == 60 - 7, "an ACK received on host 0's clock, back to true time");
    cr_assert_eq(qr_isolated_fate(&c, r, 0, 6, &lost, &at, &ce), 0, "more than the runtime sent");
    cr_assert_eq(qr_isolated_fate(&c, r, 2, 0, &lost, &at, &ce), 0);
    const qr_config *cfg = qr_scenario_config(scen);
    int64_t want = 30000 + 4 * cfg->tcp.min_rto_ns + cfg->tcp.delack_timeout_ns + 1000000;
    cr_assert_eq(qr_isolated_stop_ns(cfg, 30000),
                 cfg->traffic.stop_ns > 30000 && cfg->traffic.stop_ns < want ? cfg->traffic.stop_ns
                                                                             : want);
    cr_assert_eq(qr_scenario_set(scen, "traffic.stop=40us", err), QR_OK, "%s", err);
    cr_assert_eq(qr_isolated_stop_ns(qr_scenario_config(scen), 30000), 40000,
                 "not past the runtime's own stop");
    cr_assert_eq(qr_isolated_stop_ns(qr_scenario_config(scen), 50000),
                 50000 + 4 * cfg->tcp.min_rto_ns + cfg->tcp.delack_timeout_ns + 1000000,
                 "a stop before the last packet does not cut it");
    qr_isolated_conn_free(&c);
    qr_recording_close(r);
}

Test(recording, isolated_replays_of_one_sigma_are_summed)
{
    qr_isolated_summary s = {0};
    qr_row_isolated a = {0}, b = {0};
    a.identical = 1;
    a.max_send_diff_ns = 0;
    a.p99_send_diff_ns = 0;
    b.identical = 0;
    b.late = 3;
    b.max_late_ns = 700;
    b.max_send_diff_ns = 5000;
    b.p99_send_diff_ns = 1200;
    qr_isolated_summary_add(&s, &a);
    qr_isolated_summary_add(&s, &b);
    qr_isolated_summary_add(&s, &a);
    cr_assert_eq(s.connections, 3);
    cr_assert_eq(s.identical, 2);
    cr_assert_eq(s.late, 3);
    cr_assert_eq(s.max_late_ns, 700);
    cr_assert_eq(s.max_send_diff_ns, 5000);
    cr_assert_eq(s.max_p99_send_diff_ns, 1200);
}

/* A /received table that is there but unreadable is damage, said as such; only a missing one is
 * "no receive records". */
Test(recording, a_damaged_received_table_is_not_a_missing_one)
{
    pcap(0, 0, data_t, 6, 0, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    char p[128], err[QR_ERRBUF_SIZE];
    qr_row_detected d[] = {qr_detected_row(1, 0, 2, 0)};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    qr_h5 *o = NULL;
    cr_assert_eq(qr_h5_create_result(&o, p, scen, "qreplay recording", NULL, err), QR_OK, "%s",
                 err);
    cr_assert_eq(qr_h5_attr_str(o, "/", "scenario_name", "hand", err), QR_OK);
    cr_assert_eq(qr_h5_write_rows(o, "/flows", &qr_schema_flow, hand_flows, 1, err), QR_OK);
    cr_assert_eq(qr_h5_write_rows(o, "/hosts", &qr_schema_host, hand_hosts, 3, err), QR_OK);
    cr_assert_eq(qr_h5_write_rows(o, "/drops_detected", &qr_schema_detected, d, 1, err), QR_OK);
    /* /received with another table's fields */
    cr_assert_eq(qr_h5_write_rows(o, "/received", &qr_schema_detected, d, 1, err), QR_OK);
    cr_assert_eq(qr_h5_commit(o, err), QR_OK, "%s", err);
    qr_recording *r = NULL;
    int rc = qr_recording_open(&r, dir, NULL, err);
    cr_assert_eq(rc, QR_EFORMAT, "%d: %s", rc, err);
    cr_assert(strstr(err, "/received is damaged") && strstr(err, "recording.h5"), "%s", err);
    qr_recording_close(r);
}

/* The light record of a hand recording (light.h) read back: every packet's fate (lost, or its
 * receive time less the receiver's offset) equals the isolated replay's from the recording, the
 * detected loss is its drop tag, the samples infer each packet's recorded send time exactly at
 * th 0 and within th at 5 us, the connection's last send time is the recording's; the recording
 * made from it refuses another packet count and a threshold the record lacks. */
Test(recording, a_light_record_keeps_every_fate_and_send_time)
{
    pcap(0, 0, data_t, 6, 0, 0);
    pcap(1, 1, ack_t, 3, 0, 0);
    recording(6, 3);
    qr_recording *r;
    char err[QR_ERRBUF_SIZE], path[128];
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    snprintf(path, sizeof path, "%s/light.qrl", dir);
    const int64_t th[] = {0, 5000};
    qr_light_stats st;
    const int64_t offsets[3] = {7, 0, 0};
    cr_assert_eq(qr_light_write(r, offsets, QR_SAMPLING_RATE, th, 2, NULL, path, &st, err), QR_OK,
                 "%s", err);
    cr_assert_eq(st.packets, 9);
    cr_assert_eq(st.received, 3);
    cr_assert_eq(st.lost, 6, "data 2..5 and ACKs 1..2 have no receive record");
    cr_assert_eq(st.detected, 1);
    cr_assert_eq(st.calls, 1);
    cr_assert_eq(qr_light_write(r, offsets, QR_SAMPLING_RATE, (int64_t[]){5000, 2000}, 2, NULL,
                                path, &st, err),
                 QR_EINVAL, "thresholds must increase");
    qr_light *l;
    cr_assert_eq(qr_light_open(&l, path, err), QR_OK, "%s", err);
    cr_assert_str_eq(qr_light_id(l), qr_recording_id(r));
    cr_assert_null(qr_light_unregenerable(l));
    cr_assert_eq(qr_light_sent(l, 0), 6);
    cr_assert_eq(qr_light_sent(l, 1), 3);
    for (uint32_t h = 0; h < 3; h++)
        cr_assert_eq(qr_light_clock_offsets(l)[h], offsets[h], "the record keeps the offsets");
    qr_isolated_conn c;
    cr_assert_eq(qr_isolated_conn_of(r, offsets, 0, &c, err), QR_OK, "%s", err);
    for (uint32_t d = 0; d < 2; d++)
        for (uint32_t s = 0; s <= c.n_sent[d]; s++) {
            int lost = -1, ce = -1, lost2 = -2, ce2 = -2;
            int64_t at = -1, at2 = -2;
            int k = qr_light_fate(l, d, s, &lost, &at, &ce),
                k2 = qr_isolated_fate(&c, r, d, s, &lost2, &at2, &ce2);
            cr_assert_eq(k, k2, "dir %u packet %u: known", d, s);
            if (k)
                cr_assert(lost == lost2 && (lost || at == at2) && ce == ce2,
                          "dir %u packet %u: lost %d/%d at %lld/%lld", d, s, lost, lost2,
                          (long long)at, (long long)at2);
        }
    cr_assert_eq(qr_light_last_ns(l, 0), c.last_ns);
    /* the same record without the connection's receive times: the same fates, every delivered
     * packet at once, the record smaller by exactly the receive times' part */
    char path2[160];
    snprintf(path2, sizeof path2, "%s/light-at-once.qrl", dir);
    qr_light_stats st2;
    cr_assert_eq(qr_light_write(r, offsets, QR_SAMPLING_RATE, th, 2,
                                (const qr_light_timing[]){{1, NULL, 0}}, path2, &st2, err),
                 QR_OK, "%s", err);
    cr_assert(st2.at_once == 1 && st2.received == 0 && st2.lost == st.lost);
    cr_assert_lt(st2.raw[QR_LIGHT_RECEIVED], st.raw[QR_LIGHT_RECEIVED]);
    qr_light *l2;
    cr_assert_eq(qr_light_open(&l2, path2, err), QR_OK, "%s", err);
    qr_light_stats rs2;
    qr_light_stats_get(l2, &rs2);
    cr_assert_eq(rs2.at_once, 1);
    for (uint32_t d = 0; d < 2; d++)
        for (uint32_t s = 0; s <= c.n_sent[d]; s++) {
            int lost = -1, ce = -1, lost2 = -2, ce2 = -2;
            int64_t at = -1, at2 = -2;
            int k = qr_light_fate(l2, d, s, &lost, &at, &ce),
                k2 = qr_isolated_fate(&c, r, d, s, &lost2, &at2, &ce2);
            cr_assert_eq(k, k2, "dir %u packet %u: known", d, s);
            if (k)
                cr_assert(lost == lost2 && ce == ce2 && (lost || at == QR_ARRIVE_AT_ONCE),
                          "dir %u packet %u: lost %d/%d at %lld", d, s, lost, lost2, (long long)at);
        }
    qr_light_close(l2);
    /* gates kept and read back; one on a lost packet, or out of order, refused */
    const qr_light_gate gates[] = {{0, 1, 1}, {1, 0, 2}};
    cr_assert_eq(qr_light_write(r, offsets, QR_SAMPLING_RATE, th, 2,
                                (const qr_light_timing[]){{1, gates, 2}}, path2, &st2, err),
                 QR_OK, "%s", err);
    cr_assert_eq(st2.gates, 2);
    cr_assert_eq(qr_light_open(&l2, path2, err), QR_OK, "%s", err);
    qr_light_stats_get(l2, &rs2);
    cr_assert_eq(rs2.gates, 2);
    uint32_t sends = 0;
    cr_assert(qr_light_gated(l2, 0, 1, &sends) && sends == 1);
    cr_assert(qr_light_gated(l2, 1, 0, &sends) && sends == 2);
    cr_assert_not(qr_light_gated(l2, 0, 0, &sends));
    cr_assert_not(qr_light_gated(l2, 1, 1, &sends));
    qr_light_close(l2);
    const qr_light_gate on_lost[] = {{0, 2, 1}}, unordered[] = {{0, 1, 1}, {0, 0, 1}},
                        too_many[] = {{0, 1, 4}};
    const qr_light_gate *bad[] = {on_lost, unordered, too_many};
    const size_t n_bad[] = {1, 2, 1};
    for (int b = 0; b < 3; b++)
        cr_assert_eq(qr_light_write(r, offsets, QR_SAMPLING_RATE, th, 2,
                                    (const qr_light_timing[]){{1, bad[b], n_bad[b]}}, path2, &st2,
                                    err),
                     QR_EINVAL, "bad gates %d: %s", b, err);
    /* the next gate of a replay whose sender's first data packet differs (as if a timer had
     * sent the runtime's before an ACK arrived): the ACK that arrived next after it went, held
     * until the sender has sent it; the same replay again: no gate explains it further; the
     * runtime's own packets: nothing to add */
    const qr_tcp_sent *const want[2] = {c.sent[0], c.sent[1]};
    qr_light_gate found[4];
    size_t n_found = 0;
    cr_assert_eq(qr_isolated_next_gate(&c, r, want, c.n_sent, found, &n_found, 4), 0);
    cr_assert_eq(n_found, 0);
    qr_tcp_sent other[16];
    memcpy(other, c.sent[0], c.n_sent[0] * sizeof *other);
    other[0].window ^= 1; /* the sender's first packet is not the runtime's */
    const qr_tcp_sent *const missed[2] = {other, c.sent[1]};
    const size_t *n_missed = c.n_sent;
    int64_t data0 = c.sent[0][0].time_ns;
    int next_after = -1;
    for (uint32_t s = 0; s < c.n_sent[1] && next_after < 0; s++) {
        int lost, ce;
        int64_t at;
        if (qr_isolated_fate(&c, r, 1, s, &lost, &at, &ce) && !lost && at > data0)
            next_after = (int)s;
    }
    cr_assert_geq(next_after, 0, "an ACK arrived after the first data packet went");
    cr_assert_eq(qr_isolated_next_gate(&c, r, missed, n_missed, found, &n_found, 4), 1);
    cr_assert(n_found == 1 && found[0].dir == 1 && found[0].seq == (uint32_t)next_after &&
                  found[0].sends == 1,
              "gate %u %u %u", found[0].dir, found[0].seq, found[0].sends);
    cr_assert_eq(qr_isolated_next_gate(&c, r, missed, n_missed, found, &n_found, 4), -1);
    /* a replay that sent a packet the runtime never did: no gate keeps it */
    qr_tcp_sent extra[16];
    memcpy(extra, c.sent[1], c.n_sent[1] * sizeof *extra);
    extra[c.n_sent[1]] = extra[c.n_sent[1] - 1];
    const qr_tcp_sent *const more[2] = {c.sent[0], extra};
    const size_t n_more[2] = {c.n_sent[0], c.n_sent[1] + 1};
    n_found = 0;
    cr_assert_eq(qr_isolated_next_gate(&c, r, more, n_more, found, &n_found, 4), -1);
    /* the recording made of the record's packets (here the recorded ones) */
    size_t nh0, nh1;
    const qr_rec_packet *p0 = qr_recording_packets(r, 0, &nh0),
                        *p1 = qr_recording_packets(r, 1, &nh1);
    qr_packet dpk[6], apk[3];
    for (size_t i = 0; i < 6; i++)
        dpk[i] = p0[i].pk;
    for (size_t i = 0; i < 3; i++)
        apk[i] = p1[i].pk;
    const qr_packet *pk[2] = {dpk, apk};
    size_t n[2] = {6, 2};
    qr_recording *lr;
    cr_assert_eq(qr_recording_from_light(&lr, l, pk, n, NULL, NULL, err), QR_EVALUE);
    cr_assert(strstr(err, "direction 1") && strstr(err, "2 packets"), "%s", err);
    n[1] = 3;
    /* the recorded packets, named and checked against the recording: every one equal */
    uint64_t compared = 0;
    cr_assert_eq(qr_recording_from_light(&lr, l, pk, n, r, &compared, err), QR_OK, "%s", err);
    cr_assert_eq(compared, 9);
    qr_recording_close(lr);
    /* one packet changed: named */
    dpk[4].window ^= 1;
    cr_assert_eq(qr_recording_from_light(&lr, l, pk, n, r, &compared, err), QR_EVALUE);
    cr_assert(strstr(err, "flow 0 data packet 4"), "%s", err);
    dpk[4].window ^= 1;
    cr_assert_eq(qr_recording_from_light(&lr, l, pk, n, NULL, NULL, err), QR_OK, "%s", err);
    qr_sampling_stats ss;
    qr_plan *plan;
    cr_assert_eq(qr_light_plan(&plan, l, lr, QR_SAMPLING_RATE, 7777, &ss, NULL, NULL, err),
                 QR_EINVAL);
    cr_assert(strstr(err, "5000 ns") && strstr(err, "not at 7777 ns"), "%s", err);
    for (int t = 0; t < 2; t++) {
        cr_assert_eq(qr_light_plan(&plan, l, lr, QR_SAMPLING_RATE, th[t], &ss, NULL, NULL, err),
                     QR_OK, "%s", err);
        cr_assert_eq(ss.packets, 9);
        for (uint32_t h = 0; h < 2; h++) {
            size_t nl, nt;
            const qr_rec_packet *lp = qr_recording_packets(lr, h, &nl);
            const int64_t *lt = qr_plan_times(plan, h, &nt);
            cr_assert_eq(nl, h ? 3u : 6u);
            cr_assert_eq(nt, nl);
            for (size_t i = 0; i < nl; i++) {
                int64_t want = (h ? ack_t : data_t)[i], got = lt[i];
                cr_assert(got >= want - th[t] && got <= want + th[t],
                          "th %lld host %u packet %zu: inferred %lld, sent %lld", (long long)th[t],
                          h, i, (long long)got, (long long)want);
                cr_assert_eq(lp[i].drop_tag, h == 0 && i == 2, "the receiver's detected loss");
            }
        }
        qr_plan_free(plan);
    }
    qr_recording_close(lr);
    qr_light_close(l);
    qr_isolated_conn_free(&c);
    qr_recording_close(r);
}
