/* qreplay: 007's path discovery in the runtime (Arzani et al., NSDI 2018, section 4): when a host's
 * TCP retransmits, its agent traces the connection's path with the connection's own 5-tuple, and
 * the switches answer as Linux does, under Linux's ICMP rate limits.
 *
 * The agent (qr_tracer): a data segment a host sends again (its end not beyond the highest byte
 * the direction already sent) starts a traceroute of that direction, at most [traceroute]
 * per_connection per direction and [traceroute] per_host per host in each [traceroute] epoch
 * (007's caps; an epoch of 0 makes the run one epoch). A traceroute is one TCP packet per TTL 1..n,
 * sent back to back, with the direction's 5-tuple, no flags, no payload, and the TTL kept in the IP
 * ID (the trace's number above it) so an answer can be matched by the packet it quotes; n is the
 * number of switches between the two hosts, which a data-center operator knows from the topology
 * (every shortest path of a Clos has it), so no probe reaches the receiving host. A probe that
 * reaches a switch with TTL 1 is answered by an ICMP time-exceeded from that switch, unless the
 * switch's limiter refuses (qr_icmp_limiter); the answer may also be lost on its way back. The
 * agent reads the answers from its own host's packets (qr_icmp_time_exceeded_parse) and keeps, per
 * probe, who answered (/traceroutes of recording.h5).
 *
 * The path a trace found (qr_tracer_paths, recording.h5 /paths) is its cables in order: the
 * host's own cable to its switch and the receiver's cable from its switch (single-homed hosts: the
 * operator knows both), and between them the cable joining each two consecutive answering
 * switches; a cable next to a switch that did not answer is unknown (an empty name). Cables are
 * named as blame names them: "h3-s0", "s8-s16" (qr_topology_cable_name).
 *
 * The switches' limiter is Linux's (net/ipv4/icmp.c): a global token bucket of
 * [traceroute] icmp_rate per second with a burst of icmp_burst (icmp_msgs_per_sec 1000,
 * icmp_msgs_burst 50), then a per-destination bucket that allows one answer per
 * icmp_interval (icmp_ratelimit, 1 s) with a burst of 6 (XRLIM_BURST_FACTOR). Probes and answers
 * share the queues and link faults with the traffic but, like Pingmesh's probes, are not recorded
 * as traffic: not in the pcaps, /drops or the arrival log (so a replay of a run that traced does
 * not hold them: it is not exact, and says so). */
#ifndef QREPLAY_TRACEROUTE_H
#define QREPLAY_TRACEROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/flowtable.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The direction packet ids of traceroute probes and their answers carry (flowtable.h): no flow
 * direction reaches it. */
#define QR_DIR_TRACE 0xfffffffdu
/* Probes carry this TTL at most; the IP ID holds it in its low bits. */
#define QR_TRACE_MAX_TTL 31u

/* recording.h5 /traceroutes: one probe as its agent logged it. */
typedef struct qr_row_traceroute {
    uint32_t trace; /* the run's trace number (from 0, in the order they started) */
    uint32_t host;  /* the tracing host */
    uint32_t dir;   /* the direction traced */
    uint8_t ttl;
    uint16_t ip_id;
    int64_t sent_ns;
    uint32_t replier; /* the answering interface's IPv4 address (host order); 0: no answer */
    int64_t rtt_ns;   /* -1: no answer before the run ended */
} qr_row_traceroute;

/* recording.h5 /paths: one cable of a traced path. The rows of one trace are consecutive, in hop
 * order. Imports fill it from the user's path file (qreplay import --paths). */
typedef struct qr_row_path {
    uint32_t dir;   /* the direction traced */
    uint32_t trace; /* the trace (rows of one trace share it) */
    uint32_t hop;   /* position on the path, from 0 */
    int64_t traced_ns;
    char link[48]; /* the cable's name; "" unknown */
} qr_row_path;

/* recording.h5 /icmp: a switch's ICMP counters over one epoch ([traceroute] epoch), as a switch's
 * own counters give them (Linux: Icmp OutTimeExcds, and the limiter's refusals). */
typedef struct qr_row_icmp {
    uint32_t sw;
    int64_t epoch; /* floor(time / epoch); 0 with an epoch of 0 */
    uint64_t sent, refused;
} qr_row_icmp;

typedef struct qr_tracer qr_tracer;

/* The agents of a run: *out is NULL when [traceroute] per_connection is 0. t and ft are borrowed
 * for tr's life. Returns 0, QR_EINVAL (a topology with more switches on a path than
 * QR_TRACE_MAX_TTL) or QR_ENOMEM. */
int qr_tracer_create(qr_tracer **out, const qr_config *c, const qr_topology *t,
                     const qr_flow_table *ft, char *errbuf);
void qr_tracer_destroy(qr_tracer *tr);

/* Host `host` sent a TCP segment of direction dir (seq, payload bytes len; syn/fin counted as the
 * stream counts them) at now_ns. Returns the number of probes to send now (0: none), TTL 1..n; the
 * i-th (TTL i) carries IP ID qr_tracer_ip_id(*trace, i). */
uint32_t qr_tracer_sent(qr_tracer *tr, uint32_t host, uint32_t dir, uint32_t seq, uint32_t len,
                        int64_t now_ns, uint32_t *trace);
uint16_t qr_tracer_ip_id(uint32_t trace, uint32_t ttl);
/* The epoch a time falls in: floor(t / epoch_ns), 0 for every time when epoch_ns is 0. */
int64_t qr_traceroute_epoch(int64_t epoch_ns, int64_t t_ns);
/* Host `host` got an ICMP time-exceeded from `replier` quoting a packet of direction dir with IP ID
 * quoted_id. Returns 1 if it answers one of the host's probes (first answer kept), else 0. */
int qr_tracer_answer(qr_tracer *tr, uint32_t host, uint32_t replier, uint32_t dir,
                     uint16_t quoted_id, int64_t now_ns);

/* The agents' log, in send order (borrowed until the next call). */
const qr_row_traceroute *qr_tracer_probes(const qr_tracer *tr, size_t *n);
/* The traced paths (caller frees *rows). Returns 0 or QR_ENOMEM. */
int qr_tracer_paths(const qr_tracer *tr, qr_row_path **rows, size_t *n);
/* The paths a probe log found (the rules above): probes of one trace share its number (rows in
 * any order; a trace's TTLs run 1..n), dir a direction of ft on topology t. Caller frees *rows.
 * Returns 0 or QR_ENOMEM. qr_tracer_paths is this on the agents' own log. */
int qr_traceroute_paths(const qr_topology *t, const qr_flow_table *ft,
                        const qr_row_traceroute *probes, size_t n_probes, qr_row_path **rows,
                        size_t *n);
/* Traces started, and their probes answered. */
uint64_t qr_tracer_traces(const qr_tracer *tr);

/* A switch's ICMP limiter. */
typedef struct qr_icmp_limiter qr_icmp_limiter;
/* One per switch of the run ([traceroute] icmp_rate, icmp_burst, icmp_interval). Returns 0 or
 * QR_ENOMEM. */
int qr_icmp_limiter_create(qr_icmp_limiter **out, const qr_config *c, char *errbuf);
void qr_icmp_limiter_destroy(qr_icmp_limiter *l);
/* Whether the switch may send an ICMP error to dst at now_ns (takes the tokens if so). */
int qr_icmp_allow(qr_icmp_limiter *l, uint32_t dst, int64_t now_ns);
/* Answers refused. */
uint64_t qr_icmp_refused(const qr_icmp_limiter *l);
/* A switch's ICMP counters over one epoch ([traceroute] epoch; 0: the run): the answers it sent
 * and those its limits refused. */
typedef struct qr_icmp_epoch {
    int64_t epoch; /* qr_traceroute_epoch of its answers' times */
    uint64_t sent, refused;
} qr_icmp_epoch;
/* The limiter's counters per epoch, in epoch order, epochs with no answer asked left out
 * (borrowed until its next call). */
const qr_icmp_epoch *qr_icmp_epochs(const qr_icmp_limiter *l, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
