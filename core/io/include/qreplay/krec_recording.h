/* qreplay: the recording a replay reads, made from hosts' kernel records (krecord.h: qreplay
 * record) instead of their captures.
 *
 * Each record is one host of the scenario's topology. A connection becomes a flow when both its
 * ends are hosts (one end's record is enough: the other end is the host whose record has its
 * address); seen at both ends, the two are one flow. Its packets are what the sender's record
 * says it handed to its NIC, segment by segment (a direction whose sender was not recorded has
 * none: counted); its send times are inferred from the record's sampled times at a threshold the
 * record holds (no other time is known). Where the receiver's record is whole (the kernel
 * handed over every event), a transmission is tagged lost when its resend did not arrive there
 * as a duplicate (bytes that had all arrived before): a probe that repaired a tail loss tags its
 * loss, a spurious timeout tags nothing (the hosts' clocks taken as one, within the finest
 * threshold: one machine's namespaces). Else it is tagged lost when its sender resent its bytes
 * by fast retransmit or by the retransmission timer (the kernel's own conclusion, from its
 * congestion state); a probe (a tail loss probe) tags nothing. The tags the receiver's sequence
 * holes confirm are counted.
 *
 * With `like` (the import of the same run's captures, as the testbed makes both), the flows are
 * named as that recording's (by the addresses and ports of its /import/connections, its time
 * base its /import time_base_ns: microseconds' precision, as the testbed's truth reads it) and
 * every direction's segments are checked against its packets, size by size: records of another run
 * are refused. Its id is then the like recording's, so that a replay from the records is graded
 * against the same ground truth. Without it the recording's id is made from the records' SHA-256
 * digests. */
#ifndef QREPLAY_KREC_RECORDING_H
#define QREPLAY_KREC_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/krecord.h"
#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_krec_set qr_krec_set;

/* What the records gave and what was left out, by reason. */
typedef struct qr_krec_set_stats {
    size_t records;
    uint64_t connections;        /* connection ends in the records */
    uint64_t flows;              /* the recording's flows */
    uint64_t both_ends, one_end; /* flows seen at both ends, at one */
    uint64_t loopback,
        same_host;            /* connection ends left out: a loopback address; both ends one host */
    uint64_t no_host;         /* left out: the peer's address is no recorded host */
    uint64_t not_in_like;     /* left out (like): no connection of the like recording */
    uint64_t unrecorded_dirs; /* flow directions whose sender was not recorded: no packets */
    uint64_t packets;
    uint64_t lost;           /* segments tagged lost */
    uint64_t lost_confirmed; /* of them, in a hole the receiver's record saw */
    uint64_t probes;         /* resends that were probes */
    uint64_t spurious;       /* fast or timer resends that arrived as duplicates: no loss */
    uint64_t probe_repairs;  /* probes that did not: the loss they repaired */
    uint64_t unexplained;    /* resent segments with no resend event (it was not handed
                                over): no reason known, no loss concluded */
    uint64_t lost_events;    /* events the kernel could not hand over, over the records */
} qr_krec_set_stats;

typedef struct qr_krec_set_opts {
    const qr_recording *like; /* NULL, or the recording of the same run (see above) */
    int64_t time_base_ns;     /* the Unix-epoch ns of the recording's time 0 (0: like's, else
                                 the earliest connection's opening) */
    int network_known;        /* the hosts ran in the scenario's network (the testbed) */
    int unchecked; /* with like: records known to differ from its packets (some packet no event
                      told): named as its flows, not checked against its packets. Their packets'
                      ids are then not its ids: a diagnosis, not a replay, may read them */
} qr_krec_set_opts;

/* Read the records at paths[0..n) (host i: the i-th) into a recording on s's network. Returns 0,
 * or a reader's error naming the file; QR_EVALUE: records that disagree (their thresholds or
 * sampling method, an address local to two records, more records than hosts, a mismatch with
 * like naming the flow and packet); QR_ENOTFOUND: no connection between two hosts. */
int qr_krec_set_open(qr_krec_set **out, const qr_scenario *s, const char *const *paths, size_t n,
                     const qr_krec_set_opts *o, char *errbuf);
void qr_krec_set_close(qr_krec_set *ks);
/* The recording (borrowed from ks). */
const qr_recording *qr_krec_set_recording(const qr_krec_set *ks);
void qr_krec_set_stats_get(const qr_krec_set *ks, qr_krec_set_stats *st);
/* The thresholds every record holds (borrowed header of the first record). */
const qr_krec_header *qr_krec_set_header(const qr_krec_set *ks);

/* The injection plan of the set's recording at threshold th_ns (one the records hold, with their
 * method): every segment's send time inferred from its sender's sampled times. *stats, *records
 * and *n_records (may be NULL) as qr_plan_sample gives them. Returns 0, QR_EINVAL naming the
 * thresholds the records hold, or QR_ENOMEM. */
int qr_krec_set_plan(qr_plan **out, const qr_krec_set *ks, qr_sampling_method method, int64_t th_ns,
                     qr_sampling_stats *stats, qr_row_sample_record **records, size_t *n_records,
                     char *errbuf);

/* The records' send times against the captures' (like's), packet by packet. */
typedef struct qr_krec_time_cmp {
    int64_t th_ns;                           /* the threshold the records' times are inferred at */
    uint64_t packets;                        /* compared */
    int64_t mean_ns, p50_ns, p99_ns, max_ns; /* |record's - capture's| */
    int64_t bias_ns;                         /* the mean of record's - capture's */
} qr_krec_time_cmp;

/* Every packet's send time as the records infer it at th_ns (one the records hold, with their
 * method) against its time in like, the recording the set was opened with and checked against
 * (the same run's captures, on the same time base). Returns 0, QR_EINVAL (like is not the set's,
 * or was not checked; a threshold the records do not hold) or QR_ENOMEM. */
int qr_krec_set_compare_times(const qr_krec_set *ks, const qr_recording *like, int64_t th_ns,
                              qr_krec_time_cmp *out, char *errbuf);

/* What a segment of a direction was, from its sender's record. */
#define QR_KREC_UNEXPLAINED 3 /* a resend with no resend event (not handed over): why unknown */
typedef struct qr_krec_seg {
    int8_t resend;     /* -1: sent for the first time; else why it was resent: a qr_krec_resend
                          or QR_KREC_UNEXPLAINED */
    uint8_t duplicate; /* a resend that arrived at the receiver as a duplicate (its bytes had all
                          arrived before), known where the receiver's record is whole */
    uint32_t orig;     /* a resend: the segment it repeats (the latest before it that held its
                          first byte); else its own index */
} qr_krec_seg;

/* Direction d's packets in the set's recording (in send order, borrowed; their times the
 * inference at the finest threshold, relative to the time base) with what each segment was in
 * *segs; *n how many. NULL and 0: its sender was not recorded. */
const qr_rec_packet *qr_krec_set_direction(const qr_krec_set *ks, uint32_t d,
                                           const qr_krec_seg **segs, size_t *n);
/* The end that sent direction d: its record and its connection there. Returns 0, or
 * QR_ENOTFOUND (not recorded: *k NULL). */
int qr_krec_set_end(const qr_krec_set *ks, uint32_t d, const qr_krec **k, uint32_t *conn);
/* The Unix-epoch ns of the recording's time 0 (subtract it from a record's times). */
int64_t qr_krec_set_time_base(const qr_krec_set *ks);

#ifdef __cplusplus
}
#endif
#endif
