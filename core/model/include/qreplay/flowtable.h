/* qreplay: how packets, flow directions and switch queues are named across runs.
 *
 * Flow f of a schedule (the core's order, qr_flow.id = f) goes from host src, port
 * qr_flow_table_sender_port(f), to host dst, port QR_SINK_PORT. Its data direction is 2f and its
 * ACK direction 2f + 1. A packet is named by its direction and its number within the direction
 * (seq, from 0): packet id = dir << 32 | seq. The low 16 bits of seq are the packet's IP ID. A
 * flow table built from the same schedule gives the same names in the runtime, every replay, and
 * an imported capture.
 *
 * A switch egress queue is named by one 64-bit key, switch << 32 | port, everywhere (drop
 * locations, qdiff per queue, the busiest queue, the butterfly's bottleneck). */
#ifndef QREPLAY_FLOWTABLE_H
#define QREPLAY_FLOWTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A flow of the schedule: `bytes` from host src to host dst, starting at start_ns. */
typedef struct qr_flow {
    uint64_t id;       /* 0, 1, 2, ... in start order */
    uint32_t src, dst; /* host indices, src != dst */
    uint64_t bytes;
    int64_t start_ns;
    uint32_t incast; /* 0 for a background flow, else the incast event's number (1, 2, ...) */
} qr_flow;

/* Every flow's receiver listens on this port; senders use 10000, 10001, ... per source host. */
#define QR_SINK_PORT 5001
#define QR_FIRST_SENDER_PORT 10000

/* The direction of packets that belong to no flow and are no probe (pingmesh.h's QR_DIR_PROBE is
 * the one below it): no flow table reaches it. */
#define QR_DIR_NONE 0xffffffffu

/* Packet ids. */
static inline uint64_t qr_packet_id(uint32_t dir, uint64_t seq)
{
    return (uint64_t)dir << 32 | (seq & 0xffffffffu);
}
static inline uint32_t qr_packet_id_dir(uint64_t id)
{
    return (uint32_t)(id >> 32);
}
static inline uint32_t qr_packet_id_seq(uint64_t id)
{
    return (uint32_t)(id & 0xffffffffu);
}

/* Directions of a flow, and the flow of a direction. */
static inline uint32_t qr_dir_data(uint32_t flow)
{
    return 2 * flow;
}
static inline uint32_t qr_dir_ack(uint32_t flow)
{
    return 2 * flow + 1;
}
static inline uint32_t qr_dir_flow(uint32_t dir)
{
    return dir / 2;
}
static inline int qr_dir_is_ack(uint32_t dir)
{
    return (int)(dir % 2);
}

/* Queue keys. */
static inline uint64_t qr_queue_key(uint32_t sw, uint32_t port)
{
    return (uint64_t)sw << 32 | port;
}
static inline uint32_t qr_queue_key_switch(uint64_t key)
{
    return (uint32_t)(key >> 32);
}
static inline uint32_t qr_queue_key_port(uint64_t key)
{
    return (uint32_t)(key & 0xffffffffu);
}

/* The canonical order of packets reaching a switch in the same nanosecond (runtime and replay must
 * not depend on the order a simulator scheduled them): by packet id; a packet of no flow (has_id
 * 0) by a hash of its 5-tuple and its IP ID. Equal keys keep their arrival order. */
uint64_t qr_same_time_key(int has_id, uint64_t packet_id, const qr_five_tuple *ft, uint16_t ip_id);

typedef struct qr_flow_table qr_flow_table;

/* Number the flows' sender ports per source host (10000, 10001, ...) and index them. host_addr[h]
 * is host h's address (host byte order), for h < n_hosts; flows are copied. Returns 0, QR_EVALUE
 * (a flow's host out of range or src = dst, a host starting more flows than it has ports; the
 * detail names the flow or host) or QR_ENOMEM. Caller owns *out (qr_flow_table_destroy). */
int qr_flow_table_create(qr_flow_table **out, const qr_flow *flows, size_t n_flows,
                         const uint32_t *host_addr, uint32_t n_hosts, char *errbuf);

/* The table of a topology's hosts (addresses from qr_topology_host_addr). */
int qr_flow_table_for_topology(qr_flow_table **out, const qr_flow *flows, size_t n_flows,
                               const qr_topology *topo, char *errbuf);

/* Release; NULL is allowed. */
void qr_flow_table_destroy(qr_flow_table *t);

/* Flows in the table. */
size_t qr_flow_table_flows(const qr_flow_table *t);
/* 2 * flows. */
size_t qr_flow_table_directions(const qr_flow_table *t);
uint32_t qr_flow_table_hosts(const qr_flow_table *t);
/* Flow f (f < flows), borrowed from t. */
const qr_flow *qr_flow_table_flow(const qr_flow_table *t, uint32_t f);
uint16_t qr_flow_table_sender_port(const qr_flow_table *t, uint32_t f);
uint32_t qr_flow_table_host_addr(const qr_flow_table *t, uint32_t host);

/* A flow's completion time: from its start to its end (its last byte acknowledged, as the runtime
 * records it); -1 if it did not complete (end_ns < 0). */
int64_t qr_fct_ns(int64_t start_ns, int64_t end_ns);

/* Per-direction packet numbering, as a sending host applies it: every packet of direction dir gets
 * the next number (0, 1, 2, ...), and its IP ID is the number's low 16 bits (the receiver finds
 * drops from gaps in them, lossdet.h). */
typedef struct qr_dir_numbers qr_dir_numbers;
/* Numbers for directions 0..n_dirs-1. Caller owns *out (qr_dir_numbers_destroy). Returns 0 or
 * QR_ENOMEM. */
int qr_dir_numbers_create(qr_dir_numbers **out, size_t n_dirs);
/* Release; NULL is allowed. */
void qr_dir_numbers_destroy(qr_dir_numbers *n);
/* The next number of direction dir into *seq and its IP ID into *ip_id. Returns 0 or QR_EINVAL
 * (dir out of range; nothing is numbered). */
int qr_dir_numbers_next(qr_dir_numbers *n, uint32_t dir, uint64_t *seq, uint16_t *ip_id);

/* The direction a packet with this 5-tuple belongs to. Returns 0 or QR_ENOTFOUND (no flow's, or
 * not TCP). */
int qr_flow_table_resolve(const qr_flow_table *t, const qr_five_tuple *ft, uint32_t *dir);

/* The flow whose sender is (addr, port). Returns 0 or QR_ENOTFOUND. */
int qr_flow_table_flow_of_sender(const qr_flow_table *t, uint32_t addr, uint16_t port,
                                 uint32_t *flow);

/* A direction's sending and receiving hosts (dir < directions). */
uint32_t qr_flow_table_dir_src(const qr_flow_table *t, uint32_t dir);
uint32_t qr_flow_table_dir_dst(const qr_flow_table *t, uint32_t dir);

#ifdef __cplusplus
}
#endif
#endif
