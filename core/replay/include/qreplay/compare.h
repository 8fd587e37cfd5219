/* qreplay: comparing a replay with its runtime beyond qdiff: what the butterfly experiment and the
 * isolated per-connection replay measure (docs/model.md).
 *
 *  - Queue divergence at one queue: for every packet arriving there in both runs, the difference
 *    of the queue's bytes at that arrival; when it first differs, the share of later arrivals at
 *    which it is 0 again, and the largest difference.
 *  - The short flow (fewest bytes; the latest on ties) and whether its completion time was
 *    reproduced (within 1% of the runtime's).
 *  - Drop-set equality: the same packets dropped at the same queues.
 *  - The typical replay of a set: the one with the median first divergence.
 *  - Packet sequences of an isolated replay against the runtime's: identical TCP headers, in
 *    order, and how far the send times moved. */
#ifndef QREPLAY_COMPARE_H
#define QREPLAY_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"
#include "qreplay/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runtime queue bytes at each (packet, queue) arrival, looked up by a replay's arrivals. */
typedef struct qr_arrival_index qr_arrival_index;

/* Caller owns *out (qr_arrival_index_destroy). Returns 0 or QR_ENOMEM. */
int qr_arrival_index_create(qr_arrival_index **out);
/* Release; NULL is allowed. */
void qr_arrival_index_destroy(qr_arrival_index *x);
/* Remember the bytes `packet` found at queue `queue_key` (a later put of the same pair replaces
 * it). Returns 0 or QR_ENOMEM. */
int qr_arrival_index_put(qr_arrival_index *x, uint64_t packet, uint64_t queue_key,
                         uint64_t queue_bytes);
/* Returns 0 or QR_ENOTFOUND. */
int qr_arrival_index_get(const qr_arrival_index *x, uint64_t packet, uint64_t queue_key,
                         uint64_t *queue_bytes);
/* Arrivals remembered. */
size_t qr_arrival_index_size(const qr_arrival_index *x);

/* Divergence of one queue's length between a runtime and a replay, arrival by arrival. */
typedef struct qr_divergence {
    uint64_t matched;        /* arrivals present in both runs */
    int64_t first_ns;        /* first arrival with a difference; -1: none yet */
    uint64_t after;          /* matched arrivals from the first difference on */
    uint64_t zero_after;     /* of those, with difference 0 */
    uint64_t max_diff_bytes; /* largest difference */
} qr_divergence;

/* Start a divergence record: nothing compared, no difference seen. */
void qr_divergence_init(qr_divergence *d);
/* One matched arrival at time_ns; returns |run - rep|. */
uint64_t qr_divergence_add(qr_divergence *d, int64_t time_ns, uint64_t run_bytes,
                           uint64_t rep_bytes);
/* Share of the arrivals from the first difference on with difference 0 (1.0 without one). */
double qr_divergence_zero_after(const qr_divergence *d);

/* The short flow of a schedule: the fewest bytes, the latest (highest index) on ties. n > 0. */
uint32_t qr_short_flow(const qr_flow *flows, size_t n);

/* A replay reproduced a completion time: both completed (>= 0) and within 1% of the runtime's. */
int qr_fct_reproduced(int64_t runtime_fct_ns, int64_t replay_fct_ns);

/* A drop: which packet, at which queue (qr_queue_key). */
typedef struct qr_drop_key {
    uint64_t packet;
    uint64_t queue;
} qr_drop_key;

/* Sort drops by packet, then queue. */
void qr_drop_keys_sort(qr_drop_key *keys, size_t n);
/* Two sorted drop sets are equal. */
int qr_drop_sets_equal(const qr_drop_key *a, size_t na, const qr_drop_key *b, size_t nb);

/* The typical replay of a set: order by first divergence (replays that never diverged last, ties
 * by replay number) and take the middle one (index n / 2). Returns its replay number; n > 0. */
uint32_t qr_typical_replay(const qr_row_butterfly_replay *rows, size_t n);

/* Summarize the replays of one sigma (typical_replay included). n > 0. */
void qr_butterfly_sigma_summary(const qr_row_butterfly_replay *rows, size_t n,
                                qr_row_butterfly_sigma *out);

/* A TCP packet as an isolated replay compares it: flags, sequence and acknowledgment numbers,
 * window and IP length must match; time_ns is its (true) send time. */
typedef struct qr_tcp_sent {
    uint8_t flags;
    uint32_t seq, ack;
    uint16_t window, len;
    int64_t time_ns;
} qr_tcp_sent;

/* Result of comparing a connection's two directions. */
typedef struct qr_seq_result {
    int identical;            /* every packet equal, in order, both directions, same counts */
    int64_t first_mismatch;   /* index in the direction that differs first; -1: none */
    int64_t max_send_diff_ns; /* largest |replay - runtime| send time over compared packets */
    int64_t p99_send_diff_ns; /* its 99th percentile (qr_percentile_i64) */
} qr_seq_result;

/* Compare want[d][0..n_want[d]) (the runtime's) with got[d][0..n_got[d]) for d = 0 (data), 1
 * (ACKs). Returns 0 or QR_ENOMEM. */
int qr_compare_sequences(const qr_tcp_sent *const want[2], const size_t n_want[2],
                         const qr_tcp_sent *const got[2], const size_t n_got[2],
                         qr_seq_result *out);

#ifdef __cplusplus
}
#endif
#endif
