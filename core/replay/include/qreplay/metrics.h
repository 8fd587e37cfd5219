/* qreplay: replay-fidelity metrics (docs/model.md): qdiff and drop error, with summaries.
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

#include "qreplay/queue.h"
#include "qreplay/schema.h"
#include "qreplay/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* qdiff of two queue contents (each sorted by flow id, unique). Returns 0, QR_EINVAL, or
 * QR_EORDER if a list is not sorted by strictly increasing flow id. Outputs in bytes. */
int qr_qdiff(const qr_flow_bytes *run, size_t n_run, const qr_flow_bytes *rep, size_t n_rep,
             uint64_t *qdiff_bytes, uint64_t *qdiff_sym_bytes);

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
