/* qreplay: faults of links and ports planted in the runtime ([faults] gray, blackhole, delay,
 * rate), the failures 007, Pingmesh and Everflow look for.
 *
 * Each key holds rules separated by ',', each rule `LINK VALUE`; LINK as qr_topology_link_parse
 * reads it ("s8>s16" one direction, "s8-s16" both, "s8:2" the direction leaving switch 8 by port 2,
 * "h3>s0" host 3's uplink):
 *
 *  - gray = LINK P: the link silently drops each packet crossing it with probability P ("1%",
 *    "0.1%"), drawn from a stream seeded by [run] seed, so a run repeats exactly;
 *  - blackhole = LINK S: the link drops every packet of the flow directions whose 5-tuple hash
 *    falls in a share S of the hash space ("25%"), as a bad ECMP entry would; `LINK S addresses`
 *    hashes the source and destination addresses alone, so every connection between a pair of
 *    hosts is dropped whatever its ports, as Pingmesh's black holes (a switch's corrupted
 *    entries for some address pairs) are;
 *  - delay = A-B D: the cable between A and B has D more propagation delay, both directions
 * ("50us");
 *  - rate = LINK R: the link transmits at R instead of [links] rate ("1Gbps").
 *
 * Drops of gray and blackhole rules are ground truth with reason QR_DROP_FAULT; hosts see them only
 * as losses; replays do not apply them. A drop on host h's uplink is taken at h's edge switch (the
 * first place the runtime sees the packet), with that switch's egress port in /drops. */
#ifndef QREPLAY_LINKFAULT_H
#define QREPLAY_LINKFAULT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/faults.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A link fault of [faults] gray, blackhole, delay or rate (linkfault.h), on one directed link, and
 * what it did in the runtime. */
typedef struct qr_row_link_fault {
    uint32_t fault; /* from 1 */
    char kind[12];
    char text[QR_FAULT_TEXT_MAX];
    uint32_t link;
    char name[24];
    uint32_t from_node, to_node; /* switch or host number, as from_kind/to_kind say */
    char from_kind[8], to_kind[8];
    double share;
    int64_t delay_ns;
    uint64_t rate_bps, crossed, dropped;
} qr_row_link_fault;

#define QR_LINK_FAULTS_MAX 64

typedef enum {
    QR_LINK_GRAY = 0,
    QR_LINK_BLACKHOLE = 1,
    QR_LINK_DELAY = 2,
    QR_LINK_RATE = 3,
} qr_link_fault_kind;

/* "gray", "blackhole", "delay", "rate" (the [faults] keys); "?" out of range. */
const char *qr_link_fault_kind_name(qr_link_fault_kind k);

/* One rule as written. */
typedef struct qr_link_fault {
    qr_link_fault_kind kind;
    char link[32];     /* LINK as written */
    double share;      /* gray: drop probability; blackhole: share of the hash space (0, 1] */
    int64_t delay_ns;  /* delay: extra propagation delay (> 0) */
    uint64_t rate_bps; /* rate: the degraded rate (> 0) */
    uint8_t by_addr;   /* blackhole: keyed on the addresses alone ("addresses") */
} qr_link_fault;

/* Parse the text of one [faults] key (kind) into rules[0..*n). Checks syntax only (the link's
 * nodes are checked against a topology by qr_link_faults_create). Returns 0 or QR_EVALUE with
 * "rule K ('TEXT'): reason" in errbuf. */
int qr_link_fault_rules_parse(qr_link_fault_kind kind, const char *text, qr_link_fault *rules,
                              size_t max, size_t *n, char *errbuf);

/* The texts of the four keys, by kind (NULL or "" for none). */
typedef struct qr_link_fault_texts {
    const char *text[4];
} qr_link_fault_texts;

typedef struct qr_link_faults qr_link_faults;

/* Resolve every rule against a topology: one fault per directed link (A-B gives two). Returns 0,
 * QR_EVALUE ("[faults] gray: rule 1 ('s40>s2 1%'): no switch s40 (the topology has switches
 * s0-s19)"; a delay not on a cable A-B; a rate above [links] rate is allowed) or QR_ENOMEM. *out
 * is NULL when no key has a rule. seed: [run] seed. Caller owns *out. */
int qr_link_faults_create(qr_link_faults **out, const qr_link_fault_texts *texts,
                          const qr_topology *t, uint64_t seed, char *errbuf);
void qr_link_faults_destroy(qr_link_faults *f);

/* Resolved faults, each on one directed link. */
size_t qr_link_faults_count(const qr_link_faults *f);
/* Fault i's rule and link (NULL if out of range). */
const qr_link_fault *qr_link_faults_get(const qr_link_faults *f, size_t i, uint32_t *link);

/* A packet of 5-tuple ft reaches switch sw to leave by port `port`: it crossed its source host's
 * uplink if that host hangs on sw, and is about to cross the link out of sw's port. Counts it on
 * every fault of those links; returns 1 if a gray or blackhole fault drops it (*fault gets its
 * index; may be NULL), else 0. f NULL: 0. */
int qr_link_faults_packet(qr_link_faults *f, uint32_t sw, uint32_t port, const qr_five_tuple *ft,
                          size_t *fault);

/* The directed link a fault drop happened on. The runtime takes a drop on host h's uplink at h's
 * edge switch, where /drops names that switch's egress port; so given the links that carry a gray
 * or blackhole fault (faulty[link] != 0) and the packet's source host: its uplink if sw is the
 * host's switch, the uplink is faulty and the egress link is not; else the egress link. */
uint32_t qr_fault_drop_link(const qr_topology *t, const uint8_t *faulty, uint32_t sw, uint32_t port,
                            uint32_t src_host);

/* Fault i as a /link_faults row of truth.h5. */
void qr_link_faults_row(const qr_link_faults *f, size_t i, qr_row_link_fault *row);

#ifdef __cplusplus
}
#endif
#endif
