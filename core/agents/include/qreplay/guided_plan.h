/* qreplay: where Everflow's guided probes go (analysis: guided.h). Every host of a fat tree
 * probes the host with its index in the next pod (h + hosts per pod, modulo the hosts) from
 * `paths` source ports, so the probes of a pod cross all of its uplinks and all of the next pod's
 * downlinks (with enough ports: the switches' hash, not this plan, picks each 5-tuple's path).
 * Each round, each host sends one probe per 5-tuple: a TCP packet to QR_PROBE_PORT with no flags,
 * the round in its sequence number, marked with DSCP QR_GUIDED_DSCP, which every switch mirrors. */
#ifndef QREPLAY_GUIDED_PLAN_H
#define QREPLAY_GUIDED_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/flowtable.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QR_GUIDED_DSCP 1 /* the debug mark: DSCP 1, the IPv4 TOS byte 0x04 */
#define QR_GUIDED_TOS (QR_GUIDED_DSCP << 2)
#define QR_GUIDED_MAX_PATHS 64

/* Everflow's debug bit for application traffic: the packets of a marked flow carry DSCP 16 (CS2,
 * the IPv4 TOS byte 0x40: no priority of its own in Linux's or ns-3's TOS map), which every switch
 * mirrors. */
#define QR_DEBUG_DSCP 16
#define QR_DEBUG_TOS (QR_DEBUG_DSCP << 2)

/* Whether the packets of direction dir carry the debug bit ([everflow] debug_every = every: the
 * data directions of flows 0, every, 2 every, ...; 0: none). A host sets it as they leave. */
int qr_debug_dir(int every, uint32_t dir);

/* One pinned 5-tuple: src probes dst from sport (to QR_PROBE_PORT). */
typedef struct qr_guided_pin {
    uint32_t src, dst;
    uint16_t sport;
} qr_guided_pin;

/* The 5-tuples (above): `paths` per host, by host, source ports distinct per host in
 * 40000-59999 from a sequence seeded by seed. Returns 0, QR_EINVAL (not a fat tree, or paths not
 * in 1..QR_GUIDED_MAX_PATHS) or QR_ENOMEM. Caller frees *out. */
int qr_guided_plan(const qr_topology *t, uint32_t paths, uint64_t seed, qr_guided_pin **out,
                   size_t *n);

/* Everflow's link round trip (section 5.2): a probe sent out of switch S1's port to its
 * neighbour S2 that S2 sends straight back, S1 -> S2 -> S1, each pass mirrored. On the testbed a
 * probe leaves S1's port as a frame addressed to S2's interface whose IP source and destination
 * are S1's own address on that cable: S2 forwards it back (the address is on its connected /30),
 * and S1 takes it in. One pin per switch port that leads to a switch. */
#define QR_BOUNCE_SPORT 8766 /* a round-trip probe's source port (QR_PROBE_PORT + 1) */

typedef struct qr_bounce_pin {
    uint32_t sw, port;        /* S1 and the port the probe leaves by */
    uint32_t peer, peer_port; /* S2, and its port on the cable */
    uint32_t addr;            /* S1's address on the cable (host order): source and destination */
    uint8_t mac[6], peer_mac[6];
} qr_bounce_pin;

/* Every switch-to-switch port of t's fabric, by switch then port. Returns 0 or QR_ENOMEM.
 * Caller frees *out. */
int qr_bounce_plan(const qr_topology *t, qr_bounce_pin **out, size_t *n);

/* The pin whose address is addr (the probe's source), NULL if none. */
const qr_bounce_pin *qr_bounce_pin_of(const qr_bounce_pin *pins, size_t n, uint32_t addr);

/* What switch sw does with a packet from src to dst that may be a round-trip probe (a simulated
 * switch asks; a Linux switch does the same by its connected routes): QR_BOUNCE_BACK, send it
 * back out of *port (S2: dst is its neighbour's address on that cable); QR_BOUNCE_HOME, take it
 * in (S1: its own address); QR_BOUNCE_NONE, not a probe of the plan (src != dst, or no pin). */
enum { QR_BOUNCE_NONE = 0, QR_BOUNCE_BACK = 1, QR_BOUNCE_HOME = 2 };
int qr_bounce_at(const qr_bounce_pin *pins, size_t n, uint32_t sw, uint32_t src, uint32_t dst,
                 uint32_t *port);

#ifdef __cplusplus
}
#endif
#endif
