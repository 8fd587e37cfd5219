/* qreplay: Pingmesh-style probing (Guo et al., SIGCOMM 2015) in the runtime: the probe plan and
 * the agents' log.
 *
 * The probe plan, as Pingmesh builds its pinglists: every server probes every other server of its
 * rack (the hosts under one edge switch); between racks, the first `servers` servers of each rack
 * probe the same-numbered servers of every other rack ([pingmesh] servers, 2). Each pair probes
 * every `interval`, from a phase drawn from [run] seed; each probe is a small UDP request
 * ([pingmesh] size bytes of IP packet) to QR_PROBE_PORT from a new source port (as Pingmesh opens
 * a new TCP connection per probe, so probes spread over the ECMP paths), answered by an echo of the
 * same size. A probe is lost when no answer arrived within [pingmesh] timeout.
 *
 * In the runtime probes share every queue and link fault with the traffic, but they are not
 * recorded: not in the pcaps, /drops or the arrival log. truth.h5 /probes keeps the agents' log
 * (send time, round-trip time: what Pingmesh's agents upload) and where each lost probe died.
 * The analysis is pingmesh_analyze.h. */
#ifndef QREPLAY_PINGMESH_H
#define QREPLAY_PINGMESH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/flowtable.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* truth.h5 /probes (pingmesh.h): one probe of the runtime's Pingmesh agents: what its agent logged
 * (send time, round-trip time) and, as truth, where it was lost. */
typedef struct qr_row_probe {
    uint32_t probe, pair, src, dst;
    uint16_t sport;
    int64_t sent_ns;
    int64_t rtt_ns;   /* -1: no answer before the run ended */
    uint8_t echoed;   /* the probed host sent an answer */
    uint8_t lost_in;  /* 0 not dropped, 1 the request, 2 the answer */
    uint32_t drop_sw; /* QR_PROBE_AT_HOST: the sender's NIC queue */
    uint32_t drop_port;
    uint8_t drop_reason; /* a qr_decision */
    int64_t drop_ns;
} qr_row_probe;

/* Probes are UDP to this port; answers come back from it. */
#define QR_PROBE_PORT 8765
#define QR_PROBE_PROTO 17
/* The smallest probe: IP and UDP headers. */
#define QR_PROBE_MIN_BYTES 28
/* Source ports: Linux's ephemeral range 32768-60999, in turn per host from a seeded start. */
#define QR_PROBE_FIRST_PORT 32768
#define QR_PROBE_PORTS 28232

/* The direction packet ids of probes carry (flowtable.h): probe i's request is seq 2i, its answer
 * 2i + 1. No flow direction reaches it. */
#define QR_DIR_PROBE 0xfffffffeu

static inline uint64_t qr_probe_packet_id(uint32_t probe, int answer)
{
    return qr_packet_id(QR_DIR_PROBE, (uint64_t)probe * 2 + (answer ? 1 : 0));
}
/* Whether a packet id is a probe's; its probe number and whether it is the answer. */
static inline int qr_probe_of_packet(uint64_t packet, uint32_t *probe, int *answer)
{
    if (qr_packet_id_dir(packet) != QR_DIR_PROBE)
        return 0;
    *probe = qr_packet_id_seq(packet) / 2;
    *answer = (int)(qr_packet_id_seq(packet) % 2);
    return 1;
}
/* Whether a 5-tuple is a probe's or an answer's. */
int qr_probe_five_tuple(const qr_five_tuple *ft);

/* One probe pair of the plan. */
typedef struct qr_probe_pair {
    uint32_t src, dst;           /* hosts */
    uint32_t src_rack, dst_rack; /* their edge switches */
    uint32_t src_pod, dst_pod;
} qr_probe_pair;

/* The racks and pods of a topology: a FatTree's edge switches and pods; the star is one rack. */
uint32_t qr_pingmesh_racks(const qr_topology *t);
uint32_t qr_pingmesh_pods(const qr_topology *t);
uint32_t qr_pingmesh_pod_of_rack(const qr_topology *t, uint32_t rack);

/* The plan: intra-rack pairs first (by rack, then source, then destination), then inter-rack pairs
 * (by source rack, destination rack, server). servers: inter-rack probers per rack (>= 1; more
 * than a rack has means all). Caller frees *pairs. Returns 0 or QR_ENOMEM. */
int qr_pingmesh_plan(const qr_topology *t, uint32_t servers, qr_probe_pair **pairs, size_t *n);

/* The probe interval `qreplay pingmesh SCENARIO` runs with when the scenario sets none
 * ([pingmesh] interval 0), as a --set assignment. */
#define QR_PINGMESH_DEFAULT_INTERVAL "pingmesh.interval=100us"

/* The probing agents of one run. */
typedef struct qr_pingmesh qr_pingmesh;

/* The agents of a run of c on t ([pingmesh] interval, servers, size, timeout, duration; [run]
 * seed). *out is NULL when [pingmesh] interval is 0 (no probing). Returns 0, QR_EVALUE (a size the
 * links cannot carry, or an interval so short the probes would take more than
 * QR_PINGMESH_MAX_SHARE of a host's link: the message gives the shortest that fits) or
 * QR_ENOMEM. */
int qr_pingmesh_create(qr_pingmesh **out, const qr_config *c, const qr_topology *t, char *errbuf);

/* The share of a host's link its probes and answers may take (qr_pingmesh_create refuses a
 * shorter interval). */
#define QR_PINGMESH_MAX_SHARE 0.10
void qr_pingmesh_destroy(qr_pingmesh *pm);

/* The plan's probe pairs (how many; pair i, borrowed from pm) and each probe's IP size (bytes). */
size_t qr_pingmesh_pairs(const qr_pingmesh *pm);
const qr_probe_pair *qr_pingmesh_pair(const qr_pingmesh *pm, size_t i);
uint32_t qr_pingmesh_size(const qr_pingmesh *pm);
/* How long the testbed's agents wait for a probe's TCP connect before they give it up: [pingmesh]
 * connect_wait, at least the timeout (after which an unanswered probe is lost) (an answer after the
 * timeout is lost all the same, and its time tells how many SYN timeouts it took:
 * pingmesh_analyze.h). */
int64_t qr_pingmesh_wait(const qr_pingmesh *pm);
/* The runtime's probes are UDP packets that nothing resends: [pingmesh] connect_wait is refused
 * there. Returns 0 or QR_EVALUE with the reason. */
int qr_pingmesh_check_udp(const qr_config *c, char *errbuf);
/* When probing ends (duration; -1: while the traffic runs). */
int64_t qr_pingmesh_end(const qr_pingmesh *pm);

/* When pair i sends its probe j (from 0): the pair's seeded phase in [0, interval) plus j
 * intervals; -1 at or after the end of probing. */
int64_t qr_pingmesh_send_time(const qr_pingmesh *pm, size_t pair, uint64_t j);

/* Pair i sends a probe at now_ns: its number (in send order, from 0) and its source port. Returns
 * 0, QR_ENOMEM or QR_EVALUE (2^31 probes). */
int qr_pingmesh_sent(qr_pingmesh *pm, size_t pair, int64_t now_ns, uint32_t *probe,
                     uint16_t *sport);
/* The probed host answered a probe (its answer left). */
void qr_pingmesh_echoed(qr_pingmesh *pm, uint32_t probe);
/* The answer to a probe reached its sender at now_ns (the first answer counts). */
void qr_pingmesh_answered(qr_pingmesh *pm, uint32_t probe, int64_t now_ns);
/* A probe's request (answer 0) or answer (1) was dropped at now_ns: at switch sw before its egress
 * port `port` for reason (a qr_decision), or in its sender's NIC queue (sw QR_PROBE_AT_HOST). */
#define QR_PROBE_AT_HOST 0xffffffffu
void qr_pingmesh_dropped(qr_pingmesh *pm, uint32_t probe, int answer, uint32_t sw, uint32_t port,
                         uint8_t reason, int64_t now_ns);

/* Probes sent, and probe i as a truth.h5 /probes row. */
size_t qr_pingmesh_probes(const qr_pingmesh *pm);
void qr_pingmesh_row(const qr_pingmesh *pm, size_t i, qr_row_probe *row);

#ifdef __cplusplus
}
#endif
#endif
