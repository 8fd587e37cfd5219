/* The butterfly on real kernels (qreplay testbed --repeat): a testbed run's connections run again
 * on the same kernels with the run's drops re-applied, and each repeat compared with the run.
 *
 * A drop is re-applied by a packet corrector at the switch (kernel/corrector.c): it drops the
 * packet of a direction with a given sequence number, acknowledgement number and payload length,
 * each counted from the connection's own initial sequence numbers (the kernel picks them at
 * random, so the absolute numbers differ between runs), at its n-th occurrence among the
 * direction's packets with those three. These are the fates (qr_tb_fates), from the run's host
 * captures (the recording) and the switch's drops (the truth). A repeat is then compared with the
 * run connection by connection (qr_tb_repeat_compare): the same packets in the same order both
 * ways (relative sequence and acknowledgement numbers, payload length, flags; not the window or
 * the options, whose timestamps differ by nature) is an exact repeat. */
#ifndef QREPLAY_TB_REPEAT_H
#define QREPLAY_TB_REPEAT_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/flowtable.h"
#include "qreplay/recording.h"
#include "qreplay/truth.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One packet to drop, by its direction's ends and what it carries relative to the connection's
 * initial sequence numbers; occurrences: bit i set drops the i-th packet (from 0) of the
 * direction with these numbers. Addresses host order. */
typedef struct qr_tb_fate {
    uint32_t saddr, daddr;
    uint16_t sport, dport;
    uint32_t rel_seq, rel_ack; /* rel_ack 0 when the packet carries no ACK */
    uint32_t len;              /* TCP payload bytes */
    uint64_t occurrences;
} qr_tb_fate;

#define QR_TB_FATE_MAX_OCCURRENCE 64

typedef struct qr_tb_fates_report {
    size_t drops;     /* the run's drops of TCP packets of recorded connections */
    size_t expressed; /* of them, re-applied by the fates */
    size_t no_start;  /* not: their direction (or its reverse, for an ACK) has no SYN recorded */
    size_t too_many;  /* not: beyond the QR_TB_FATE_MAX_OCCURRENCE-th copy of the same packet */
} qr_tb_fates_report;

/* The fates of a run: every switch drop of the truth t whose packet the recording holds, as a
 * fate (one per distinct packet, occurrences or'ed), with the addresses the hosts had on the wire
 * (wire[h] for host h, host order: a recording holds its network's own addresses; NULL: those).
 * *out is allocated (free()); *n fates. Returns 0, QR_ENOMEM, or QR_EVALUE naming a drop of no
 * recorded packet. */
int qr_tb_fates(const qr_recording *rec, const qr_truth *t, const uint32_t *wire, qr_tb_fate **out,
                size_t *n, qr_tb_fates_report *rep, char *errbuf);

/* Repeat k's schedule: each of the n flows' start moved later by a draw in [0, jitter_ns) from
 * the run's seed, the repeat and the flow (the same for the same three); jitter_ns <= 0: none. */
void qr_tb_repeat_jitter(qr_flow *flows, size_t n, uint64_t seed, int k, int64_t jitter_ns);

/* One connection of a run against its repeat. */
typedef struct qr_tb_repeat_conn {
    uint32_t flow;              /* in the run's recording */
    int found;                  /* the repeat has the connection (its ends) */
    int exact;                  /* the same packets, in the same order, both ways */
    int data_same;              /* the data direction's segments the same (sequence numbers and
                                   lengths, in order; flags and acknowledgements aside) */
    uint64_t packets, repeated; /* the run's packets (both ways); the repeat's */
    uint64_t same_prefix;       /* packets equal before the first difference (both ways) */
} qr_tb_repeat_conn;

typedef struct qr_tb_repeat_summary {
    size_t connections, found, exact, data_same;
    uint64_t packets, same_prefix; /* over every connection */
} qr_tb_repeat_summary;

/* Compare the repeat b with the run a connection by connection (a's flows; b's matched by their
 * ends). conns: a's flow count entries (may be NULL). Returns 0 or QR_ENOMEM. */
int qr_tb_repeat_compare(const qr_recording *a, const qr_recording *b, qr_tb_repeat_conn *conns,
                         qr_tb_repeat_summary *sum, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
