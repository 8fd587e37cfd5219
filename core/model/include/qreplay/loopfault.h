/* qreplay: routing loops planted in the runtime ([faults] loop), the failure Everflow's loop
 * debugger looks for.
 *
 * The key holds rules separated by ',', each `S>N H`: switch S (sN) sends the packets headed to
 * host H (hN) to its neighbour switch N instead of along their route, as a wrong static route
 * does. Where N's own route to H leads back through S (an aggregation switch sent up to a core
 * switch, which has one way down into the pod), the packets go round S and N until their TTL runs
 * out; the switch where it runs out drops them (an IP drop outside the queues, counted as another
 * drop in the truth) and answers with ICMP time-exceeded. Every lap crosses the queues, so the
 * switches' mirrored copies show each such packet at S again and again. The replays do not apply
 * the rules (they replay the hosts' packets along their routes). */
#ifndef QREPLAY_LOOPFAULT_H
#define QREPLAY_LOOPFAULT_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QR_LOOP_RULES_MAX 16

/* One rule, resolved against a topology (the syntax check alone leaves the numbers 0). */
typedef struct qr_loop_rule {
    char text[48]; /* as written */
    uint32_t sw, next, host;
    uint32_t port; /* sw's port towards next */
} qr_loop_rule;

/* Parse the key's text into rules[0..*n). With t NULL only the syntax is checked; with a topology
 * the nodes are resolved and checked: S and N linked switches, H a host. Returns 0 or QR_EVALUE
 * with "rule K ('TEXT'): reason" in errbuf. */
int qr_loop_rules_parse(const char *text, const qr_topology *t, qr_loop_rule *rules, size_t max,
                        size_t *n, char *errbuf);

/* The port switch sw sends a packet headed to host dst by, under the rules: 1 and *port when a
 * rule of sw names dst, 0 (port untouched) when none does. */
int qr_loop_route(const qr_loop_rule *rules, size_t n, uint32_t sw, uint32_t dst, uint32_t *port);

#ifdef __cplusplus
}
#endif
#endif
