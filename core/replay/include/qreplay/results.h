/* qreplay: the files of a run folder and the fidelity results.
 *
 *   DIR/recording/recording.h5      what hosts know (qr_recording_write, recording.h)
 *   DIR/recording/truth/truth.h5    ground truth (qr_truth_write, truth.h)
 *   DIR/recording/truth/arrivals.qra, DIR/replay/V/arrivals.qra   arrival logs (queuelog.h)
 *   DIR/replay/V/replay.h5          one replay (qr_replay_write)
 *   DIR/results.h5                  every replay against the runtime (qr_results_write)
 *
 * A replay variant is a drop mode at a sampling threshold, named "<mode>_th_<th in us>"
 * (tagged_th_5, plain_th_2.5), or any name given. Every file is written under a temporary name and
 * renamed when complete (h5.h). The layout of every table is in schema.h and docs/FORMATS.md. */
#ifndef QREPLAY_RESULTS_H
#define QREPLAY_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/common.h"
#include "qreplay/fs.h"
#include "qreplay/metrics.h"
#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/runstats.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variant name of a mode at a threshold: "tagged_th_5". Returns buf. */
char *qr_variant_name(qr_drop_mode mode, int64_t th_ns, char *buf, size_t size);

/* replay.h5: one replay. */
typedef struct qr_replay_info {
    const char *recording_id; /* of the recording replayed (qr_recording_id) */
    const char *variant;
    qr_drop_mode mode;
    int64_t th_ns;
    uint64_t margin_bytes;
    uint64_t events;
    double wall_s;
    int64_t sim_end_ns, max_lateness_ns;
    uint64_t other_drops, delivered;
    qr_sampling_stats sampling;
    const char *clock;                 /* "recorded" or "reconciled" (NULL: recorded) */
    const qr_row_replay_clock *clocks; /* reconciled: the correction of each host */
    size_t n_clocks;
    const char *engine;      /* the engine that ran it: "native" or "ns3" (NULL: not stored) */
    const char *arrivals_id; /* this replay's own id, also its arrival log's source (NULL: none) */
} qr_replay_info;

/* Write replay.h5 at path (under a temporary name, renamed when complete): the scenario, info and
 * the tables /drops, /hosts, /sampling/records: the n_records records, then (more_records not
 * NULL) the qr_row_sample_record rows of that file to its end, read a block at a time. Returns 0
 * or the writer's error naming the file. */
int qr_replay_write(const char *path, const qr_scenario *s, const qr_replay_info *info,
                    const qr_row_drop *drops, size_t n_drops, const qr_row_replay_host *hosts,
                    size_t n_hosts, const qr_row_sample_record *records, size_t n_records,
                    FILE *more_records, char *errbuf);

/* The complete replays in run_dir/replay (folders holding replay.h5), by mode, then threshold in
 * numeric order, then name. Caller owns *names (qr_variants_free). Returns 0 or QR_ENOMEM (an
 * absent folder gives none). */
int qr_variants_list(const char *run_dir, char ***names, size_t *n);
void qr_variants_free(char **names, size_t n);

/* After a new recording replaced the one in run_dir/recording (import, runtime or testbed over a
 * folder): remove what qreplay derived from another recording, so that it is never read as the new
 * one's: each replay variant (replay/NAME/) whose replay.h5 carries another recording id or none,
 * results.h5, diagnosis.h5, blame.h5, trace.h5, isolated.h5 and clocks.h5 of another recording,
 * whatif/ whose whatif.h5 is of another, and the figures drawn from what was removed. Only files
 * qreplay wrote are touched (a result file is known by its checksum block: a file that is not one,
 * or is damaged, stays, and every reader refuses it). *removed gets how many results went.
 * Returns 0 or QR_EIO naming what could not be removed. */
int qr_run_folder_forget(const char *run_dir, const char *recording_id, size_t *removed,
                         char *errbuf);

/* Whether arrival log `log` may be read with the recording recording_id: of that recording
 * (qr_arrival_log_check) and of the run its folder names: beside a replay.h5, the replay whose
 * arrivals_id it holds; in a folder named truth, the recorded run (QR_ARRIVALS_TRUTH); in one
 * named mirror, the switches' mirrored copies of it (QR_ARRIVALS_MIRROR); elsewhere
 * (a log named directly) the recording only. Returns 0, QR_ESTALE naming both files and fix, or
 * the reader's error. */
int qr_run_log_check(const char *log, const char *recording_id, const char *fix, char *errbuf);

/* The runtime's busiest queue (most arrivals; ties to the smallest switch, port) in an arrival
 * log. Returns 0, QR_ENOTFOUND (no arrivals) or the reader's error. */
int qr_arrival_log_busiest(const char *path, uint32_t *sw, uint32_t *port, char *errbuf);

/* Compare two arrival logs: both read in time order, merged (runtime first on equal times) into
 * the streaming qdiff (metrics.h). For every matched arrival on_row(ctx, row) is called; for every
 * replay arrival at (series_sw, series_port) on_series(ctx, point). Either callback may be NULL;
 * a callback that returns non-zero stops the comparison with that code. *stream receives the
 * stream (caller owns it: qr_qdiff_stream_destroy) for the summaries. Returns 0, a callback's
 * code, or QR_EDUP / QR_EORDER / a reader error naming the log. */
typedef int (*qr_qdiff_row_fn)(void *ctx, const qr_qdiff_row *row);
typedef int (*qr_series_fn)(void *ctx, const qr_row_queue_series *point);
int qr_compare_arrival_logs(const char *runtime_log, const char *replay_log, uint32_t series_sw,
                            uint32_t series_port, qr_qdiff_row_fn on_row, qr_series_fn on_series,
                            void *ctx, qr_qdiff_stream **stream, char *errbuf);

/* One replay against the runtime: a row of the summary table. */
typedef struct qr_variant_summary {
    char name[128];
    char mode[16];
    int64_t th_ns;
    qr_summary qdiff, qdiff_sym; /* in MTU */
    qr_qlen_diff qlen;           /* replay minus runtime queue length */
    uint64_t matched, runtime_only, replay_only;
    qr_drop_counts drops;
    uint64_t replay_packets, recorded_packets;
} qr_variant_summary;

/* Compare every replay under run_dir/replay with the runtime and write run_dir/results.h5
 * (docs/FORMATS.md). progress (may be NULL) is called at every variant and every 2^16
 * arrivals; when it asks to stop, nothing is written and QR_ECANCELED returned. *rows gets one
 * summary per variant, in qr_variants_list order (caller owns it: free with
 * qr_variant_summaries_free). Returns 0 or an error naming the file. */
int qr_results_write(const char *run_dir, qr_progress_fn progress, void *ctx,
                     qr_variant_summary **rows, size_t *n_rows, char *errbuf);
void qr_variant_summaries_free(qr_variant_summary *rows);

#ifdef __cplusplus
}
#endif
#endif
