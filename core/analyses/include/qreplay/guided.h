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

#ifdef __cplusplus
}
#endif
#endif
