/* qreplay: Everflow's guided probes (Zhu et al., SIGCOMM 2015, section 5): crafted packets that
 * carry a debug mark every switch mirrors, sent along pinned paths to see where packets are lost
 * when no application packet says so, and to confirm (or not) a drop the drop debugger inferred.
 *
 * Where the probes go: guided_plan.h. The switches' hash pins each 5-tuple to one path; the
 * analyzer does not know the hash, it learns each 5-tuple's path from the mirrored copies.
 *
 * What the analyzer reads (REC_DIR/mirror, written by whatever mirrored them: the fat-tree
 * testbed from its switch-port captures):
 *   guided.csv    src,dst,sport,seq,switch,port,dir,time_ns: one mirrored copy per row (src, dst
 *                 IPv4 addresses; switch "sN"; dir "in" when it arrived by the port, "out" when
 *                 it left by it; time_ns on any clock, only the order within a probe counts)
 *   counters.csv  switch,port,drops: what each port's drop counter counted while the probes ran
 *                 (absent: not known)
 * Each probe's copies, in time order, are its trace. It was delivered if its last copy left
 * towards its destination host. Otherwise its trace stops headed out of a port: on the link out
 * of it, if its last copy left by it (it never arrived at the other end); or inside the switch, if
 * its last copy arrived there and none left, headed out of the port its 5-tuple leaves that switch
 * by (the pinned path, learned from the 5-tuple's other probes; a drop at the switch's ingress,
 * inside it, or at that port: the mirror cannot tell them apart). If no probe of its 5-tuple ever
 * left that switch, the loss is charged to the switch's inside (port QR_GUIDED_INSIDE). Losses
 * where the drop counter did not move (the port's; inside: any of the switch's ports') are
 * silent; where it moved, the switch may have dropped them (counted).
 */
#ifndef QREPLAY_GUIDED_H
#define QREPLAY_GUIDED_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/guided_plan.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QR_GUIDED_INSIDE UINT32_MAX /* a row's port: inside the switch */

/* One place probes crossed: the link out of a switch port, or a switch's inside (port
 * QR_GUIDED_INSIDE). */
typedef struct qr_row_guided_port {
    uint32_t sw, port, link; /* link: topology.h's id of the link out of the port (inside: none,
                                UINT32_MAX) */
    char link_name[24];      /* "s8>s16"; inside: "s8" */
    uint64_t probes;         /* probes that left by the port or were lost inside the switch headed
                                out of it / (inside) lost there with no known way out */
    uint64_t lost;           /* of them, those whose trace stops there */
    uint64_t inside;         /* of those, lost inside the switch (their last copy arrived) */
    uint64_t counter_drops;  /* the port's counter (inside: the switch's ports') while the probes
                                ran (0 if not known) */
    uint8_t counters_known;  /* counters.csv was there */
    uint8_t silent;          /* lost some, and the counter did not move */
} qr_row_guided_port;

typedef struct qr_guided {
    qr_row_guided_port *ports; /* every port a probe was headed out of, most lost first */
    size_t n_ports;
    uint64_t copies, probes, delivered, lost;
    uint64_t lost_link, lost_inside; /* where: on a link out of a port, inside a switch */
    uint64_t tuples, pinned;         /* 5-tuples probed; of them, those with a delivered probe */
    int counters_known;
    int64_t first_ns, last_ns; /* the probes' first and last copy */
} qr_guided;

/* Read REC_DIR/mirror (mirror_dir) and trace the guided probes on topology t. Returns 0,
 * QR_ENOENT (no guided.csv: the run sent no guided probes), QR_EFORMAT (a bad row: the message
 * names the file and line), QR_EVALUE (a switch, port or address the topology lacks: file and
 * line) or QR_ENOMEM. Caller frees out (qr_guided_free). */
int qr_guided_run(const char *mirror_dir, const qr_topology *t, qr_guided *out, char *errbuf);
void qr_guided_free(qr_guided *g);

/* The row of the link out of switch sw by port (QR_GUIDED_INSIDE: of its inside), NULL if no
 * probe crossed it. */
const qr_row_guided_port *qr_guided_port(const qr_guided *g, uint32_t sw, uint32_t port);

/* Everflow's link round trips (section 5.2; the probes: guided_plan.h qr_bounce_plan), from
 * REC_DIR/mirror/bounce.csv (guided.csv's columns; a probe's source and destination are S1's own
 * address on the cable, seq its round). Per probe, from its copies: left S1 by the port (t0),
 * arrived at S2 (t1), left S2 (t2), back in at S1 (t3). It returned if t3 was seen; else it was
 * lost in S1 (no copy at all: a drop at S1's egress comes before its port's capture), on the way
 * out (no t1), inside S2 (no t2) or on the way back. sent = returned + lost_* + unseen. The round
 * trip t3 - t0 needs one switch's clock only; the legs (t1 - t0, t3 - t2) need the two switches'
 * clocks to agree, as the testbed's do (one machine). A port whose median round trip is above ratio
 * x the median of every port's median, and at least QR_BOUNCE_MIN_EXCESS_NS above it, is slow (a
 * kernel's timing noise doubles a few microseconds' round trip; a link delay worth finding is tens
 * of microseconds); one that lost probes is lossy. A drop at S2's ingress (a faulty cable's, on the
 * testbed an nftables rule after the port's capture) shows as lost inside S2: the mirror cannot
 * tell them apart. */
#define QR_BOUNCE_MIN_EXCESS_NS 20000
typedef struct qr_row_bounce {
    uint32_t sw, port, peer, peer_port;
    uint32_t link;      /* the link out of the port (topology id) */
    char link_name[24]; /* "s8>s16": the probe's way out */
    uint64_t sent;      /* the rounds (every switch sends every round out of every port:
                           1 + the highest round any copy holds) */
    uint64_t returned;  /* of them, back in at S1 */
    uint64_t lost_in;   /* no copy at all: lost in S1 before its port's mirror saw it leave */
    uint64_t lost_out, lost_peer, lost_back; /* lost on the way out, inside S2, on the way back */
    uint64_t unseen; /* copies, but none leaving S1: the mirror missed it (no fate) */
    int64_t rtt_min_ns, rtt_p50_ns, rtt_max_ns;
    int64_t out_p50_ns, back_p50_ns, peer_p50_ns; /* the legs, and the time inside S2 */
    uint8_t slow, lossy;
} qr_row_bounce;

typedef struct qr_bounce {
    qr_row_bounce *rows; /* per switch port probed, by switch then port */
    size_t n_rows;
    uint64_t copies, probes, returned, unseen;
    int64_t median_rtt_ns; /* the median of the rows' medians */
    double ratio;
    size_t flagged; /* rows slow or lossy */
} qr_bounce;

/* Read mirror_dir/bounce.csv for topology t. Returns 0, QR_ENOENT (no bounce.csv), QR_EINVAL
 * (ratio not above 1), QR_EFORMAT (a bad row: file and line), QR_EVALUE (a switch, port or probe
 * the plan lacks) or QR_ENOMEM. Caller frees out (qr_bounce_free). */
int qr_bounce_run(const char *mirror_dir, const qr_topology *t, double ratio, qr_bounce *out,
                  char *errbuf);
void qr_bounce_free(qr_bounce *b);

#ifdef __cplusplus
}
#endif
#endif
