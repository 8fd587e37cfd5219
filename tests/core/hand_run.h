/* A hand-made run for the unit tests of what reads a recording: a star of 3 hosts (clock offsets
 * 0, 250 and -100 ns), one flow of 3 data packets of 1500 bytes from host 0 to host 1 sent at 0,
 * 1 and 2 us, through switch 0; packet 1 is dropped at the switch's queue (threshold), packets 0
 * and 2 arrive at host 1 at 20 and 22 us. Written by the runtime's recorder (recorder.h), with
 * its ground truth (truth/truth.h5, truth/arrivals.qra). */
#ifndef QR_TEST_HAND_RUN_H
#define QR_TEST_HAND_RUN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/recorder.h"
#include "qreplay/recording.h"
#include "qreplay/topology.h"

struct hand_run {
    char dir[64];
    qr_topology *topo;
    qr_flow_table *ft;
    qr_scenario *scen;
    qr_recording *rec;
    uint32_t port_to_h1;
};

static const int64_t hand_offsets[3] = {0, 250, -100};

static inline qr_packet hand_data(const struct hand_run *h, uint16_t i)
{
    qr_packet k = {.proto = 6, .ttl = 64, .ip_id = i, .ip_len = 1500, .tcp_flags = QR_TCP_ACK};
    k.src_ip = qr_flow_table_host_addr(h->ft, 0);
    k.dst_ip = qr_flow_table_host_addr(h->ft, 1);
    k.src_port = qr_flow_table_sender_port(h->ft, 0);
    k.dst_port = QR_SINK_PORT;
    k.seq = 1 + 1460u * i;
    return k;
}

/* Record the hand run's packets into dir (a recording folder, made) with scenario scen. */
static inline void hand_run_record(const struct hand_run *h, const char *dir,
                                   const qr_scenario *scen)
{
    char err[QR_ERRBUF_SIZE];
    qr_recorder *r;
    qr_recorder_opts o = {dir, "hand", 1};
    cr_assert_eq(qr_recorder_create(&r, scen, h->ft, hand_offsets, &o, err), QR_OK, "%s", err);
    for (uint16_t i = 0; i < 3; i++) {
        qr_packet k = hand_data(h, i);
        cr_assert_eq(qr_recorder_sent(r, 0, 0, &k, 1000 * i, err), QR_OK, "%s", err);
        qr_arrival a = {.packet = qr_packet_id(0, i),
                        .time_ns = 2000 + 1000 * i,
                        .sw = 0,
                        .port = h->port_to_h1,
                        .bytes = 1500,
                        .decision = i == 1 ? QR_DROP_THRESHOLD : QR_ADMIT,
                        .queue_bytes = 3000 * (uint64_t)i};
        cr_assert_eq(qr_recorder_arrival(r, &a, err), QR_OK, "%s", err);
        if (i != 1) {
            qr_recorder_delivered(r, 1, 0, i, 1500, 20000 + 1000 * i, 0);
            cr_assert_eq(qr_recorder_observed(r, 1, 0, i), QR_OK);
        }
    }
    qr_recorder_completed(r, 0, 30000);
    qr_recorder_closed(r, 0);
    qr_recorder_end e = {
        .reason = QR_END_COMPLETED, .sim_end_ns = 40000, .events = 10, .wall_s = 0.1};
    cr_assert_eq(qr_recorder_commit(r, &e, err), QR_OK, "%s", err);
    qr_recorder_destroy(r);
}

static inline void hand_run_make(struct hand_run *h)
{
    char err[QR_ERRBUF_SIZE];
    snprintf(h->dir, sizeof h->dir, "/tmp/qr-handrun-XXXXXX");
    cr_assert_not_null(mkdtemp(h->dir));
    cr_assert_eq(qr_topology_star(&h->topo, 3), QR_OK);
    qr_flow flows[] = {{0, 0, 1, 4500, 0, 0}};
    cr_assert_eq(qr_flow_table_for_topology(&h->ft, flows, 1, h->topo, err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_create(&h->scen), QR_OK);
    cr_assert_eq(qr_scenario_set(h->scen, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(h->scen, "topology.hosts=3", err), QR_OK, "%s", err);
    qr_five_tuple t = {.dst_ip = qr_flow_table_host_addr(h->ft, 1)};
    cr_assert_eq(qr_topology_route(h->topo, 0, &t, &h->port_to_h1), QR_OK);
    hand_run_record(h, h->dir, h->scen);
    cr_assert_eq(qr_recording_open(&h->rec, h->dir, NULL, err), QR_OK, "%s", err);
}

static inline void hand_run_free(struct hand_run *h)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", h->dir);
    cr_assert_eq(system(cmd), 0);
    qr_recording_close(h->rec);
    qr_flow_table_destroy(h->ft);
    qr_topology_destroy(h->topo);
    qr_scenario_destroy(h->scen);
}

/* A suite on the hand run: h and err, the run made before each test and removed after it. */
#define HAND_RUN_SUITE(name)                                                                       \
    static struct hand_run h;                                                                      \
    static char err[QR_ERRBUF_SIZE];                                                               \
    static void name##_setup(void)                                                                 \
    {                                                                                              \
        hand_run_make(&h);                                                                         \
    }                                                                                              \
    static void name##_teardown(void)                                                              \
    {                                                                                              \
        hand_run_free(&h);                                                                         \
    }                                                                                              \
    TestSuite(name, .init = name##_setup, .fini = name##_teardown)

#endif
