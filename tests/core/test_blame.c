/* 007's blame (blame.c) on a hand-made recording of a k=4 FatTree: every direction whose receiver
 * detected a loss casts one vote, split evenly over the positions of its traced path (/paths), a
 * position a hop did not answer for getting nothing; the flag rule flags the cable every voter
 * crosses and nothing else once its voters are set aside; each voter's culprit is that cable;
 * without truth nothing is scored; and a recording that traced nothing casts no vote. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/blame.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"
#include "qreplay/topology.h"

#define HOSTS 16
#define FLOWS 5
#define PACKETS 4

static char dir[64];
static qr_topology *topo;
static int with_paths = 1;
static uint32_t detected = FLOWS - 1; /* directions whose receiver detected their loss */
/* the hop of flow 3's traced path that did not answer */
#define SILENT_HOP 2

/* Flow f goes from h0 to host 4 + 2f (other pods and edges): every path starts on h0's cable. */
static uint32_t dst_of(uint32_t f)
{
    return 4 + 2 * f;
}

static void write_pcaps(void)
{
    char p[128], err[QR_ERRBUF_SIZE];
    for (uint32_t h = 0; h < HOSTS; h++) {
        snprintf(p, sizeof p, "%s/pcap/h%04u.pcap", dir, h);
        qr_pcap_writer *w;
        cr_assert_eq(qr_pcap_writer_open(&w, p, err), QR_OK, "%s", err);
        for (uint32_t i = 0; h == 0 && i < PACKETS; i++)
            for (uint32_t f = 0; f < FLOWS; f++) {
                qr_packet k = {.time_ns = (int64_t)(i * FLOWS + f) * 1000,
                               .proto = 6,
                               .ttl = 64,
                               .ip_id = (uint16_t)i,
                               .ip_len = 1500,
                               .tcp_flags = QR_TCP_ACK};
                k.src_ip = qr_topology_host_addr(topo, 0);
                k.dst_ip = qr_topology_host_addr(topo, dst_of(f));
                k.src_port = (uint16_t)(10000 + f);
                k.dst_port = QR_SINK_PORT;
                k.seq = 1 + i * 1460;
                cr_assert_eq(qr_pcap_write(w, &k, err), QR_OK, "%s", err);
            }
        cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK, "%s", err);
    }
}

static void setup(void)
{
    char err[QR_ERRBUF_SIZE], p[128];
    snprintf(dir, sizeof dir, "/tmp/qr-blame-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/pcap", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    cr_assert_eq(qr_topology_fattree(&topo, 4), QR_OK);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "topology.kind=fattree", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "topology.k=4", err), QR_OK, "%s", err);
    qr_row_flow f[FLOWS];
    qr_row_detected d[FLOWS];
    for (uint32_t i = 0; i < FLOWS; i++) {
        f[i] = (qr_row_flow){i, 0, dst_of(i), (uint16_t)(10000 + i), QR_SINK_PORT, 5840, 0, -1, -1,
                             0, 0, 0};
        /* flows 0..3 lose their second packet (the receiver sees the IP ID gap); flow 4 none */
        d[i] = qr_detected_row(dst_of(i), 2 * i, 1, 0);
    }
    qr_row_host h[HOSTS];
    for (uint32_t i = 0; i < HOSTS; i++) {
        h[i] = (qr_row_host){i,
                             qr_topology_host_addr(topo, i),
                             0,
                             i == 0 ? FLOWS * PACKETS : 0,
                             i == 0 ? FLOWS * PACKETS * 1500 : 0,
                             ""};
        snprintf(h[i].pcap, sizeof h[i].pcap, "pcap/h%04u.pcap", i);
    }
    /* the traces: each voter's true path (its 5-tuple's), flow 3's with one hop unanswered */
    qr_row_path paths[FLOWS * 8];
    size_t n_paths = 0;
    for (uint32_t i = 0; i + 1 < FLOWS; i++) {
        qr_five_tuple ft = {qr_topology_host_addr(topo, 0), qr_topology_host_addr(topo, dst_of(i)),
                            (uint16_t)(10000 + i), QR_SINK_PORT, 6};
        uint32_t links[8];
        size_t n;
        cr_assert_eq(qr_topology_path_links(topo, 0, &ft, links, 8, &n), QR_OK);
        for (size_t k = 0; k < n; k++) {
            qr_row_path *r = &paths[n_paths++];
            *r = (qr_row_path){2 * i, i, (uint32_t)k, 1000, ""};
            if (!(i == 3 && k == SILENT_HOP))
                qr_topology_cable_name(topo, links[k], r->link, sizeof r->link);
        }
    }
    qr_recording_info info = {NULL, "hand", QR_END_COMPLETED, 100000, with_paths, NULL,
                              0,    paths,  n_paths,          NULL,   0,          NULL,
                              0};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, s, &info, f, FLOWS, h, HOSTS, d, detected, NULL, 0, err),
                 QR_OK, "%s", err);
    qr_scenario_destroy(s);
    write_pcaps();
}

static void teardown(void)
{
    qr_topology_destroy(topo);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(blame, .init = setup, .fini = teardown);

Test(blame, one_vote_per_lossy_direction_and_the_shared_cable_is_flagged)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    qr_blame b;
    cr_assert_eq(qr_blame_run(rec, NULL, &b, err), QR_OK, "%s", err);
    cr_assert_eq(b.losses, FLOWS - 1);
    cr_assert_eq(b.n_conns, FLOWS - 1, "flow 4 lost nothing: it does not vote");
    cr_assert_eq(b.summary[0].connections, FLOWS - 1);
    /* conservation: every voter casts one vote split over its path's positions, less the share of
     * the position its trace did not learn */
    double total = 0;
    uint32_t h0_cable = qr_blame_cable_of(&b, qr_topology_uplink(qr_blame_topology(&b), 0));
    cr_assert_lt(h0_cable, b.n_links);
    for (size_t i = 0; i < b.n_links; i++)
        total += b.links[i].votes;
    cr_assert_float_eq(total, FLOWS - 1 - 1.0 / 6, 1e-9);
    cr_assert_float_eq(b.summary[0].votes, total, 1e-9);
    cr_assert_eq(b.summary[0].traced, FLOWS - 2);
    cr_assert_eq(b.summary[0].partial, 1);
    cr_assert_eq(b.summary[0].untraced, 0);
    for (size_t k = 0; k < b.n_conns; k++) {
        const uint32_t *cables;
        uint32_t hops, len;
        cr_assert_eq(qr_blame_path(&b, b.conns[k].dir, &cables, &hops, &len), QR_OK);
        cr_assert_eq(cables[0], h0_cable, "every path starts on h0's cable");
        cr_assert_eq(len, b.conns[k].hops);
        cr_assert_eq(len, 6, "h0 to another pod: 5 switches, 6 cables");
        cr_assert_eq(hops, b.conns[k].known);
        cr_assert_eq(hops, b.conns[k].dir == 6 ? 5u : 6u);
        cr_assert_str_eq(b.conns[k].culprit, b.links[h0_cable].name);
        cr_assert_eq(qr_blame_culprit(&b, k, QR_BLAME_007), h0_cable);
    }
    /* h0's cable holds a share of every vote, more than any other */
    cr_assert_eq(b.links[h0_cable].voters, FLOWS - 1);
    cr_assert_eq(b.links[h0_cable].rank, 1);
    for (size_t i = 0; i < b.n_links; i++)
        if (i != h0_cable)
            cr_assert_lt(b.links[i].votes, b.links[h0_cable].votes, "cable %s", b.links[i].name);
    /* the rule flags it, and once its voters are set aside nothing is left to flag */
    cr_assert_eq(b.summary[0].flagged, 1);
    cr_assert(b.links[h0_cable].flagged);
    uint8_t *flagged = calloc(b.n_links, 1);
    cr_assert_eq(qr_blame_rule(&b, QR_BLAME_007, 1, NULL, flagged), 1);
    cr_assert(flagged[h0_cable]);
    free(flagged);
    /* no truth: nothing is scored */
    cr_assert_eq(b.has_truth, 0);
    cr_assert(isnan(b.summary[0].recall));
    cr_assert_eq(b.conns[0].correct, -1);
    qr_blame_free(&b);
    qr_recording_close(rec);
}

/* Algorithm 1 with the paper's ECMP adjustment: the votes are the same, h0's cable (on every path
 * of every voter) is flagged first; each voter through it takes away one vote's worth spread over
 * its hosts' shortest paths, so what is left is the voters' own paths against ECMP's average. */
Test(blame, the_ecmp_adjustment_keeps_the_votes_and_flags_the_shared_cable)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    qr_blame a, e;
    qr_blame_opts o;
    qr_blame_opts_default(&o);
    cr_assert_eq(qr_blame_run(rec, &o, &a, err), QR_OK, "%s", err);
    o.adjust = QR_BLAME_ADJUST_ECMP;
    cr_assert_eq(qr_blame_run(rec, &o, &e, err), QR_OK, "%s", err);
    uint32_t h0_cable = qr_blame_cable_of(&e, qr_topology_uplink(qr_blame_topology(&e), 0));
    for (size_t i = 0; i < e.n_links; i++) {
        cr_assert_float_eq(e.links[i].votes, a.links[i].votes, 1e-12);
        cr_assert_eq(e.links[i].rank, a.links[i].rank);
    }
    cr_assert(e.links[h0_cable].flagged);
    cr_assert_geq(e.summary[0].flagged, 1);
    /* a voter's core cable holds 1/6 of a vote, where ECMP expects a quarter of that (one of
     * its 4 shortest paths), so cables of the voters' own paths keep more than 1% of the 3.83
     * votes and are flagged too, on no direction left: noise, every one of them */
    cr_assert_gt(e.summary[0].flagged, a.summary[0].flagged);
    cr_assert(!e.links[h0_cable].noise);
    cr_assert_eq(e.summary[0].noise, e.summary[0].flagged - 1);
    cr_assert_eq(a.summary[0].noise, 0);
    qr_blame_free(&a);
    qr_blame_free(&e);
    qr_recording_close(rec);
}

/* One direction lost one packet: the rule flags the top cable of its path on that one packet's
 * evidence, and says it is noise. */
Test(blame, a_cable_flagged_on_one_lost_packet_is_noise)
{
    teardown();
    detected = 1;
    setup();
    detected = FLOWS - 1;
    char err[QR_ERRBUF_SIZE];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    qr_blame b;
    cr_assert_eq(qr_blame_run(rec, NULL, &b, err), QR_OK, "%s", err);
    cr_assert_eq(b.losses, 1);
    cr_assert_eq(b.summary[0].flagged, 1);
    cr_assert_eq(b.summary[0].noise, 1);
    for (size_t i = 0; i < b.n_links; i++)
        cr_assert_eq(b.links[i].noise, b.links[i].flagged, "%s", b.links[i].name);
    qr_blame_free(&b);
    qr_recording_close(rec);
}

/* The same recording without /paths: no direction's path is known (the simulator's hash is not a
 * path a host observed), so nobody votes and nothing is flagged. */
static void setup_untraced(void)
{
    with_paths = 0;
    setup();
    with_paths = 1;
}

Test(blame, untraced_directions_cast_no_vote)
{
    teardown();
    setup_untraced();
    char err[QR_ERRBUF_SIZE];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    const qr_row_path *rows;
    size_t n;
    cr_assert_eq(qr_recording_paths(rec, &rows, &n), 0);
    qr_blame b;
    cr_assert_eq(qr_blame_run(rec, NULL, &b, err), QR_OK, "%s", err);
    cr_assert_eq(b.summary[0].connections, FLOWS - 1);
    cr_assert_eq(b.summary[0].untraced, FLOWS - 1);
    cr_assert_float_eq(b.summary[0].votes, 0, 1e-12);
    cr_assert_eq(b.summary[0].flagged, 0);
    for (size_t i = 0; i < b.n_links; i++)
        cr_assert_eq(b.links[i].voters, 0);
    for (size_t k = 0; k < b.n_conns; k++) {
        cr_assert_eq(b.conns[k].known, 0);
        cr_assert_str_empty(b.conns[k].culprit);
    }
    qr_blame_free(&b);
    qr_recording_close(rec);
}

Test(blame, a_threshold_outside_zero_one_is_refused)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    qr_blame_opts o;
    qr_blame_opts_default(&o);
    cr_assert_float_eq(o.threshold, 0.01, 1e-12);
    qr_blame b;
    o.threshold = 1;
    cr_assert_eq(qr_blame_run(rec, &o, &b, err), QR_EINVAL);
    qr_blame_free(&b);
    o.threshold = 0;
    cr_assert_eq(qr_blame_run(rec, &o, &b, err), QR_EINVAL);
    qr_blame_free(&b);
    qr_recording_close(rec);
}
