/* qreplay: planted faults in the runtime ([faults] keys).
 *
 * A fault is part of the simulated network, not of the traffic: the runtime applies it and records
 * its drops in the ground truth with reason QR_DROP_FAULT; hosts see them only as losses, and
 * replays do not apply them (a replay knows only what hosts recorded).
 *
 * [faults] drop: deterministic per-packet drops, for cases whose cause is known by construction.
 * Its value is a list of rules separated by ',' (not ';', which starts an INI comment):
 *
 *     flow F KIND [N[-M]] [at S]
 *
 *  - F: the flow (its row in /flows, from 0);
 *  - KIND: which of the flow's packets are counted: `syn` (the client's SYNs), `synack` (the
 *    server's SYN-ACKs), `data` (data-direction packets that carry payload) or `ack` (ACK-direction
 *    packets without payload or SYN: pure ACKs, also the server's FIN);
 *  - N or N-M: which of the counted packets to drop, from 1, counting every transmission
 *    (retransmissions too) as it reaches switch S (default 1: the first);
 *  - S: the switch (as numbered in truth.h5 and arrival logs); it must lie on the path of the
 *    counted direction. Default: the first switch of that path (the sender's edge switch).
 *
 * Example: `flow 0 data 5, flow 3 ack 2-4 at 17, flow 5 syn`. */
#ifndef QREPLAY_FAULTS_H
#define QREPLAY_FAULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/flowtable.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A planted-drop rule of [faults] drop (faults.h) and what it did in the runtime. */
#define QR_FAULT_TEXT_MAX 64
typedef struct qr_row_fault {
    uint32_t rule; /* from 1, as in the scenario */
    char text[QR_FAULT_TEXT_MAX];
    uint32_t flow, dir;
    char kind[8];
    uint32_t first, last, sw;
    uint64_t counted, dropped;
} qr_row_fault;

/* At most this many rules in [faults] drop. */
#define QR_FAULT_RULES_MAX 64

typedef enum {
    QR_FAULT_SYN = 0,
    QR_FAULT_SYNACK = 1,
    QR_FAULT_DATA = 2,
    QR_FAULT_ACK = 3,
} qr_fault_kind;

/* "syn", "synack", "data", "ack"; "?" out of range. */
const char *qr_fault_kind_name(qr_fault_kind k);

/* One rule of [faults] drop. */
typedef struct qr_fault_rule {
    uint32_t flow;
    qr_fault_kind kind;
    uint32_t first, last; /* counted packets first..last (from 1) are dropped */
    int64_t sw;           /* -1: the first switch of the direction's path */
} qr_fault_rule;

/* Parse the text of [faults] drop ("" or blanks: no rule) into rules[0..*n). Returns 0, or
 * QR_EVALUE with "rule K ('TEXT'): reason" in errbuf (an unknown word, a missing number, a range
 * that runs backwards, a 0 count, more than max rules). Checks syntax only; qr_faults_create
 * checks the rules against a workload and topology. */
int qr_fault_rules_parse(const char *text, qr_fault_rule *rules, size_t max, size_t *n,
                         char *errbuf);

/* The rule as text in canonical form ("flow 0 data 5-5 at 2"); buf of at least 64 bytes. */
const char *qr_fault_rule_format(const qr_fault_rule *r, char *buf, size_t size);

/* Which kind a packet of direction dir is: SYN without ACK in a data direction, SYN-ACK in an ACK
 * direction, payload in a data direction, no payload and no SYN in an ACK direction. Returns 0 and
 * sets *kind, or QR_ENOTFOUND for packets no rule counts (the client's pure ACKs, a payload in an
 * ACK direction). */
int qr_fault_classify(uint32_t dir, uint8_t tcp_flags, uint32_t payload_bytes, qr_fault_kind *kind);

typedef struct qr_faults qr_faults;

/* The rules of `text` for a workload on a topology: each rule's flow must exist, its switch
 * (resolved here when not given) must lie on the path of the counted direction. Returns 0,
 * QR_EVALUE ("[faults] drop: rule K ('TEXT'): flow 12 does not exist (the workload has 10
 * flows)", "... switch 7 is not on flow 3's data path (switches 0, 8, 16)") or QR_ENOMEM. *out is
 * NULL when there is no rule. Caller owns *out (qr_faults_destroy). */
int qr_faults_create(qr_faults **out, const char *text, const qr_flow_table *flows,
                     const qr_topology *topo, char *errbuf);
void qr_faults_destroy(qr_faults *f);

/* A packet of direction dir arrives at switch sw: count it against every rule that counts it
 * there. Returns 1 if a rule drops it (*rule gets the rule's index, may be NULL), else 0. f NULL:
 * 0. */
int qr_faults_arrive(qr_faults *f, uint32_t sw, uint32_t dir, uint8_t tcp_flags,
                     uint32_t payload_bytes, size_t *rule);

/* How many rules f has (0 for NULL). */
size_t qr_faults_rules(const qr_faults *f);
/* Rule i (resolved: sw is never -1), how many packets it counted and how many it dropped. */
const qr_fault_rule *qr_faults_rule(const qr_faults *f, size_t i);
uint64_t qr_faults_counted(const qr_faults *f, size_t i);
uint64_t qr_faults_dropped(const qr_faults *f, size_t i);

/* Rule i as a /faults row of truth.h5 (i < qr_faults_rules). */
void qr_faults_row(const qr_faults *f, size_t i, qr_row_fault *row);

/* The switches a packet of direction dir of this flow table crosses, in order (at most `max`,
 * *n gets their number). Returns 0, QR_EINVAL (dir out of range) or QR_EVALUE (no route). */
int qr_dir_path(const qr_flow_table *flows, const qr_topology *topo, uint32_t dir, uint32_t *sw,
                size_t max, size_t *n);

/* The directed links (topology.h) a packet of direction dir crosses, in order: the source host's
 * uplink, then one per switch. Returns as qr_dir_path. */
int qr_dir_links(const qr_flow_table *flows, const qr_topology *topo, uint32_t dir, uint32_t *links,
                 size_t max, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
