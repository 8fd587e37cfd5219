/* qreplay: replay-fidelity metrics (DESIGN.md section 3): qdiff and drop error, with summaries.
 *
 * A snapshot is what a switch queue held, per flow, at the moment a packet arrived at it. Snapshots
 * of the runtime and of the replay are matched by (packet, queue). For a matched pair:
 *   qdiff     = sum over flows f in the runtime's queue of |bytes_run(f) - bytes_rep(f)|
 *   qdiff_sym = the same sum over flows in either queue.
 * Both are computed in bytes and reported in MTU (QR_MTU_BYTES) by the writers.
 *
 * Drop error: a drop's location is (switch, port). False accept: dropped in the runtime, not in the
 * replay; false drop: dropped in the replay, not in the runtime; wrong location: dropped in both at
 * different places. drop error = (false accepts + false drops + wrong locations) / (packets dropped
 * in either run). */
#ifndef QREPLAY_METRICS_H
#define QREPLAY_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The project's one percentile rule, nearest rank: the p-quantile of n sorted values is the value
 * of 1-based rank max(1, ceil(p * n)) (p50 of 1..10 is 5, p99 of 1..100 is 99, p99 of 1..1000 is
 * 990). Every percentile qreplay reports (qdiff, completion times, send-time differences, the
 * streaming histograms) uses it. Returns the rank, in [1, n]; 0 for n = 0. */
uint64_t qr_percentile_rank(double p, uint64_t n);

/* The p-quantile of n values sorted in increasing order (0 for n = 0). */
int64_t qr_percentile_i64(const int64_t *sorted, size_t n, double p);

/* A switch egress queue: the drop location and the qdiff key. */
typedef struct qr_location {
    uint32_t sw;
    uint32_t port;
} qr_location;

/* Bytes of one flow held in a queue. */
typedef struct qr_flow_bytes {
    uint64_t flow;
    uint64_t bytes;
} qr_flow_bytes;

/* One arrival: packet `packet` reached `queue` at time_ns, which then held `flows` (sorted by
 * flow id, each flow once; flows with 0 bytes may be omitted). Borrowed by the calls below. */
typedef struct qr_snapshot {
    uint64_t packet;
    qr_location queue;
    int64_t time_ns;
    const qr_flow_bytes *flows;
    size_t n_flows;
} qr_snapshot;

/* qdiff of two queue contents (each sorted by flow id, unique). Returns 0, QR_EINVAL, or
 * QR_EORDER if a list is not sorted by strictly increasing flow id. Outputs in bytes. */
int qr_qdiff(const qr_flow_bytes *run, size_t n_run, const qr_flow_bytes *rep, size_t n_rep,
             uint64_t *qdiff_bytes, uint64_t *qdiff_sym_bytes);

/* Summary of a set of values: count, mean, p50 and p99 (qr_percentile_rank), max (in the values'
 * unit). zeros counts the values equal to 0. For count = 0 every field is 0. */
typedef struct qr_summary {
    uint64_t count;
    uint64_t zeros;
    double mean;
    double p50;
    double p99;
    double max;
} qr_summary;

/* Exact summary of n values (sorts a private copy). Returns 0, QR_ENOMEM. */
int qr_summary_exact(const uint64_t *values, size_t n, qr_summary *out);

/* A streaming histogram of non-negative integers: constant memory per octave of range. count,
 * zeros, mean and max are exact; p50 and p99 are exact below 256 and otherwise within 0.4% of the
 * exact nearest-rank value (bucket midpoint). */
typedef struct qr_hist qr_hist;

/* Create an empty histogram. Caller owns *out (qr_hist_destroy). Returns 0 or QR_ENOMEM. */
int qr_hist_create(qr_hist **out);
/* Release; NULL is allowed. */
void qr_hist_destroy(qr_hist *h);
/* Add a value. Returns 0 or QR_ENOMEM. */
int qr_hist_add(qr_hist *h, uint64_t value);
/* Summarize into *out; values scaled by `scale` (e.g. 1.0 / QR_MTU_BYTES). */
void qr_hist_summary(const qr_hist *h, double scale, qr_summary *out);
/* The p-quantile (nearest rank, p in [0, 1]; p = 0 is the smallest value) with the accuracy of
 * qr_hist_summary's p50 and p99; 0 for an empty histogram. */
double qr_hist_quantile(const qr_hist *h, double p);
/* The relative error bound of p50 and p99 for values >= 256. */
#define QR_HIST_REL_ERROR (1.0 / 256.0)

/* One matched arrival. */
typedef struct qr_qdiff_row {
    uint64_t packet;
    qr_location queue;
    int64_t time_run_ns;
    int64_t time_rep_ns;
    uint64_t qdiff_bytes;
    uint64_t qdiff_sym_bytes;
    int64_t qlen_diff_bytes; /* the replay's queue length minus the runtime's at this arrival */
} qr_qdiff_row;

/* Signed queue-length difference (replay minus runtime, over matched arrivals): its mean and how
 * often the replay's queue was longer, equal, shorter. A replay whose queue never empties keeps a
 * count error (an extra packet admitted, arrivals shifted by a send-time error) for as long as the
 * queue stays busy: this shows it where the unsigned qdiff cannot. */
typedef struct qr_qlen_diff {
    uint64_t count, longer, equal, shorter;
    double mean_mtu; /* signed */
} qr_qlen_diff;

/* Streaming qdiff: feed runtime and replay snapshots in any interleaving. An unmatched snapshot
 * is kept (a copy) until its counterpart arrives; matched pairs are summarized and released, so
 * memory is proportional to the snapshots still waiting, not to the number of arrivals. */
typedef struct qr_qdiff_stream qr_qdiff_stream;

/* Which run a snapshot or drop comes from. */
typedef enum { QR_RUN_RUNTIME = 0, QR_RUN_REPLAY = 1 } qr_run;

/* Create a stream. Caller owns *out (qr_qdiff_stream_destroy). Returns 0 or QR_ENOMEM. */
int qr_qdiff_stream_create(qr_qdiff_stream **out);
/* Release; NULL is allowed. */
void qr_qdiff_stream_destroy(qr_qdiff_stream *m);

/* Add a snapshot from run `run`. If it completes a pair, *row is filled and *matched = 1.
 * Returns 0, QR_EDUP (the same (packet, queue) twice from one run), QR_EORDER (flows not sorted),
 * QR_ENOMEM. */
int qr_qdiff_stream_add(qr_qdiff_stream *m, qr_run run, const qr_snapshot *snap, qr_qdiff_row *row,
                        int *matched);

/* Snapshots waiting for their counterpart, per run. */
void qr_qdiff_stream_pending(const qr_qdiff_stream *m, uint64_t *runtime_only,
                             uint64_t *replay_only);

/* Overall summaries of matched pairs, in MTU. */
void qr_qdiff_stream_summary(const qr_qdiff_stream *m, qr_summary *qdiff, qr_summary *qdiff_sym);
/* The signed queue-length difference over every matched arrival. */
void qr_qdiff_stream_qlen(const qr_qdiff_stream *m, qr_qlen_diff *out);

/* Per-queue summaries, in MTU, for i in [0, qr_qdiff_stream_queues(m)), queues in the order first
 * seen. Returns 0 or QR_EINVAL for i out of range. */
size_t qr_qdiff_stream_queues(const qr_qdiff_stream *m);
int qr_qdiff_stream_queue(const qr_qdiff_stream *m, size_t i, qr_location *queue, qr_summary *qdiff,
                          qr_summary *qdiff_sym);

/* The per-queue summaries as rows sorted by (switch, port). Caller owns *rows (qr_h5_rows_free).
 * Returns 0 or QR_ENOMEM. */
int qr_qdiff_stream_queue_rows(const qr_qdiff_stream *m, qr_row_queue_summary **rows, size_t *n);

/* Batch qdiff: match every runtime snapshot with the replay's; rows (allocated, caller frees with
 * qr_qdiff_rows_free) in the order the pairs complete when the replay's snapshots follow the
 * runtime's. Returns 0, QR_EDUP, QR_EORDER, QR_ENOMEM. */
int qr_qdiff_match(const qr_snapshot *run, size_t n_run, const qr_snapshot *rep, size_t n_rep,
                   qr_qdiff_row **rows, size_t *n_rows);
/* Release rows of qr_qdiff_match; NULL is allowed. */
void qr_qdiff_rows_free(qr_qdiff_row *rows);

/* Arrivals per switch queue, and the busiest queue: the one with the most arrivals (the runtime's
 * busiest queue of the results, the butterfly's bottleneck). */
typedef struct qr_queue_counter qr_queue_counter;

/* Caller owns *out (qr_queue_counter_destroy). Returns 0 or QR_ENOMEM. */
int qr_queue_counter_create(qr_queue_counter **out);
/* Release; NULL is allowed. */
void qr_queue_counter_destroy(qr_queue_counter *c);
/* One arrival at (sw, port). Returns 0 or QR_ENOMEM. */
int qr_queue_counter_add(qr_queue_counter *c, uint32_t sw, uint32_t port);
/* The queue with the most arrivals, ties to the smallest (switch, port). Returns 0, or
 * QR_ENOTFOUND if nothing was counted (then *sw = *port = 0). count may be NULL. */
int qr_queue_counter_busiest(const qr_queue_counter *c, uint32_t *sw, uint32_t *port,
                             uint64_t *count);

/* Completion times of the completed flows of a run (fct_ns >= 0): how many, and their median,
 * p99 and maximum (0 when none completed). */
typedef struct qr_fct_summary {
    uint64_t completed;
    int64_t median_ns, p99_ns, max_ns;
} qr_fct_summary;
/* Returns 0 or QR_ENOMEM. */
int qr_fct_summarize(const qr_row_flow *flows, size_t n, qr_fct_summary *out);

/* Drop error. */
typedef struct qr_drop_counts {
    uint64_t runtime_drops;
    uint64_t replay_drops;
    uint64_t either; /* packets dropped in either run */
    uint64_t false_accepts;
    uint64_t false_drops;
    uint64_t wrong_locations;
    double error; /* (false accepts + false drops + wrong locations) / either; 0 if either = 0 */
} qr_drop_counts;

typedef struct qr_droperr qr_droperr;

/* Create a drop-error accumulator. Caller owns *out (qr_droperr_destroy). */
int qr_droperr_create(qr_droperr **out);
/* Release; NULL is allowed. */
void qr_droperr_destroy(qr_droperr *d);
/* Record that `packet` was dropped at `where` in run `run`. Returns 0, QR_EDUP (the packet dropped
 * twice in one run), QR_ENOMEM. Memory is proportional to the number of drops. */
int qr_droperr_add(qr_droperr *d, qr_run run, uint64_t packet, qr_location where);
/* The counts so far. */
void qr_droperr_result(const qr_droperr *d, qr_drop_counts *out);

#ifdef __cplusplus
}
#endif
#endif
