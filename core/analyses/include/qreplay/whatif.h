/* qreplay: pre-deployment what-if analysis. One recording is replayed open-loop under a grid of
 * switch configurations (buffer size, alpha, policy, ECN threshold, link rate and delay, the
 * replay margin); every point is measured with the operator's numbers (drops per layer and per
 * queue, occupancy, time near the threshold, ECN marks, queueing delay per packet and per flow,
 * blackhole episodes), and optionally validated against the closed-loop runtime under the same
 * configuration with the same flows and seeds.
 *
 * The measurement reads one arrival log (a replay's prediction or a runtime's truth) and follows
 * each egress port as the FIFO it is: a packet admitted at t starts when the port is free,
 * max(t, free), and holds its bytes until its last bit has left (qr_link_tx_ns of its size plus
 * the link overhead). Its queueing delay at the hop is start - t; its queueing delay end to end is
 * the sum over its hops (delivered packets only: a packet's last hop is a port leading to a host).
 * Occupancy percentiles are taken over arrivals (what arriving packets see); the time above a
 * share of the threshold is time-weighted, the threshold held at its value at the port's latest
 * arrival. */
#ifndef QREPLAY_WHATIF_H
#define QREPLAY_WHATIF_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/blackhole.h"
#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/replay.h"
#include "qreplay/scenario.h"
#include "qreplay/tasks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the grid ---- */

#define QR_WHATIF_MAX_KEYS 6
#define QR_WHATIF_MAX_POINTS 512
#define QR_WHATIF_VALUE_SIZE 32

typedef struct qr_whatif_grid qr_whatif_grid;

/* The keys --vary accepts (NULL-terminated): buffer.size, buffer.alpha, ... */
extern const char *const qr_whatif_keys[];

/* Parse --vary arguments ("section.key=V1,V2,..."), each value checked by applying it to the
 * recording's scenario (rec_h5: its recording.h5, base_dir: the recording folder) and validating
 * every point. The grid is the cross product in argument order (the last key varies fastest);
 * the baseline (every key at the recording's value) is point 0: added in front unless the cross
 * product holds it, where it keeps its place and is marked. Returns 0 or QR_EVALUE / QR_EKEY /
 * QR_EUNIT with "--vary KEY: ..." in errbuf. Caller owns *out (qr_whatif_grid_destroy). */
int qr_whatif_grid_parse(qr_whatif_grid **out, const char *const *vary, size_t n_vary,
                         const char *rec_h5, const char *base_dir, char *errbuf);
void qr_whatif_grid_destroy(qr_whatif_grid *g);
size_t qr_whatif_grid_keys(const qr_whatif_grid *g);
const char *qr_whatif_grid_key(const qr_whatif_grid *g, size_t k);
size_t qr_whatif_grid_points(const qr_whatif_grid *g);
/* The point that is the recorded configuration. */
size_t qr_whatif_grid_baseline(const qr_whatif_grid *g);
/* Point i's value of key k, canonical text ("4000000B", "0.5", ...). */
const char *qr_whatif_grid_value(const qr_whatif_grid *g, size_t point, size_t k);
/* Point i's resolved scenario (the recording's with its values). Caller owns *out. */
int qr_whatif_grid_scenario(const qr_whatif_grid *g, size_t point, qr_scenario **out, char *errbuf);

/* ---- measuring one run ---- */

/* Layers of switches: 0 edge (and the star's switch), 1 aggregation, 2 core; 3 is all. */
#define QR_WHATIF_LAYERS 3
extern const char *const qr_whatif_layer_names[QR_WHATIF_LAYERS + 1];

/* Kinds of a measured run. */
typedef enum {
    QR_WHATIF_PREDICTION = 0, /* the open-loop replay under the point's configuration */
    QR_WHATIF_TRUTH = 1,      /* the closed-loop runtime under it (--validate) */
    QR_WHATIF_RECORDED = 2,   /* the recorded runtime */
} qr_whatif_kind;

/* One run's numbers: a row of whatif.h5's /summary. Bytes, ns, shares in [0, 1]. */
typedef struct qr_whatif_row {
    uint32_t point;
    uint8_t kind;
    uint64_t arrivals, admitted, drops, drop_bytes, tagged_drops, ecn_marks;
    uint64_t layer_drops[QR_WHATIF_LAYERS];
    uint64_t layer_ecn_marks[QR_WHATIF_LAYERS];
    uint64_t flows, flows_lossy; /* flows with a switch arrival; those with a drop */
    double lossy_share;
    /* drops of packets the recording's hosts did not see lost, the flows they hit, and the
     * recorded packets of those flows sent after the first such drop (0 for the truth) */
    uint64_t new_drops, flows_new_drop, sent_after_new_drop;
    /* the queue's and the switch's bytes that arriving packets saw, per layer and all */
    uint64_t q_p50_bytes[QR_WHATIF_LAYERS + 1], q_p99_bytes[QR_WHATIF_LAYERS + 1],
        q_max_bytes[QR_WHATIF_LAYERS + 1];
    uint64_t sw_p50_bytes[QR_WHATIF_LAYERS + 1], sw_p99_bytes[QR_WHATIF_LAYERS + 1],
        sw_max_bytes[QR_WHATIF_LAYERS + 1];
    double above50[QR_WHATIF_LAYERS + 1], above90[QR_WHATIF_LAYERS + 1];
    uint64_t delivered; /* packets that reached their last hop's port */
    int64_t delay_p50_ns, delay_p99_ns, delay_max_ns; /* per delivered packet, end to end */
    int64_t flow_delay_p50_ns, flow_delay_p99_ns;     /* per flow: mean over its packets */
    int64_t hop_delay_p99_ns[QR_WHATIF_LAYERS + 1];   /* per hop */
    uint64_t blackholes, blackhole_drops;
    int64_t span_ns; /* first arrival to the last arrival or departure */
    /* arrivals whose logged queue length differs from the FIFO model's (0 for a native
     * replay; a runtime's device queue may differ) */
    uint64_t model_mismatches;
} qr_whatif_row;

/* One queue of one run (/queues): every port that saw an arrival. */
typedef struct qr_whatif_queue_row {
    uint32_t point;
    uint8_t kind;
    uint32_t sw, port;
    uint8_t layer;
    uint64_t arrivals, drops, ecn_marks, q_p99_bytes, q_max_bytes;
    double above50, above90;
} qr_whatif_queue_row;

/* Quantiles of one run (/quantiles): for p in qr_whatif_quantile_p, per layer (and all), the
 * queue and switch bytes arriving packets saw; per packet the end-to-end queueing delay (the
 * same for every layer row; layer 3 holds it). */
#define QR_WHATIF_QUANTILES 201
typedef struct qr_whatif_quantile_row {
    uint32_t point;
    uint8_t kind;
    uint8_t layer;
    double p;
    uint64_t queue_bytes, switch_bytes;
    int64_t delay_ns;
} qr_whatif_quantile_row;

/* One blackhole episode (/blackholes). */
typedef struct qr_whatif_blackhole_row {
    uint32_t point;
    uint8_t kind;
    qr_blackhole ep;
} qr_whatif_blackhole_row;

typedef struct qr_whatif_result {
    qr_whatif_row row;
    qr_whatif_queue_row *queues;
    size_t n_queues;
    qr_whatif_quantile_row *quantiles;
    size_t n_quantiles;
    qr_whatif_blackhole_row *blackholes;
    size_t n_blackholes;
} qr_whatif_result;

/* Measure the run whose arrival log is `arrivals` on s's network. rec (may be NULL) names the
 * packets its hosts saw lost, plan (with rec) their injection times (for the new-drop counts).
 * Returns 0 or an error naming the file and record. out is filled (free it with
 * qr_whatif_result_free). */
int qr_whatif_measure(const char *arrivals, const qr_scenario *s, const qr_recording *rec,
                      const qr_plan *plan, uint32_t point, qr_whatif_kind kind,
                      qr_whatif_result *out, char *errbuf);
void qr_whatif_result_free(qr_whatif_result *r);

/* Results into one set of tables at the root of f (/summary, /queues, /quantiles, /blackholes;
 * rows in the order given), as whatif.h5 and each point's own file hold them. */
int qr_whatif_results_write(qr_h5 *f, const qr_whatif_result *rs, size_t n, char *errbuf);

/* The fields of whatif.h5's tables 0 summary, 1 queues, 2 quantiles, 3 blackholes (*name gets the
 * table's name); NULL for another number. For documentation checks and readers. */
const qr_h5_field *qr_whatif_table_fields(int table, const char **name, size_t *n);

/* Every run of a file written by qr_whatif_results_write (whatif.h5, a point's own file), in the
 * order of its /summary rows, each with its own queue, quantile and blackhole rows. Caller frees
 * with qr_whatif_results_free. Returns 0 or the reader's error naming the file. */
int qr_whatif_read(const char *path, qr_whatif_result **out, size_t *n, char *errbuf);
void qr_whatif_results_free(qr_whatif_result *rs, size_t n);

/* ---- prediction errors (--validate) ---- */

/* One point's prediction against its truth (/errors). Relative errors are (pred - true) / true
 * (0 when both are 0; +-1 when only truth is 0... see qr_whatif_rel). */
typedef struct qr_whatif_error_row {
    uint32_t point;
    int64_t drops_pred, drops_true;
    double drops_rel;
    double layer_drops_rel[QR_WHATIF_LAYERS];
    double q_p99_rel[QR_WHATIF_LAYERS + 1];
    double delay_p50_rel, delay_p99_rel;
    int64_t delay_w1_ns; /* Wasserstein-1 distance of the per-packet delay distributions */
    double delay_ks;     /* largest gap between the two delay CDFs (on the quantile grid) */
} qr_whatif_error_row;

/* Whether the conclusions survive (a scorer fills it: whatif_score.h): Kendall's tau between the
 * predicted and true orderings of the points by drops and by p99 delay, and the best point (fewest
 * drops; lowest p99 delay) of each. */
typedef struct qr_whatif_agreement {
    double tau_drops, tau_delay_p99;
    int best_drops_same, best_delay_same;
    uint32_t best_drops_pred, best_drops_true, best_delay_pred, best_delay_true;
} qr_whatif_agreement;

/* ---- the whole job ---- */

/* Said in the output of every what-if. */
#define QR_WHATIF_CAVEAT                                                                           \
    "open-loop prediction: replayed hosts send exactly what they sent in the recording, so TCP's " \
    "reaction to drops this configuration adds (retransmissions, smaller windows, later packets) " \
    "is not in it; sent_after_new_drop counts the recorded packets sent after such a drop on "     \
    "their flow, the part of the prediction least to be trusted"

/* Everything a job measured: per point its prediction (and truth), the recorded runtime. */
typedef struct qr_whatif_outcome {
    size_t n;                  /* grid points */
    qr_whatif_result *pred;    /* n */
    qr_whatif_result *truth;   /* n, or NULL without validate */
    qr_whatif_result recorded; /* if has_recorded */
    int has_recorded;
    qr_whatif_error_row *errors; /* n, or NULL */
    qr_whatif_agreement agree;
} qr_whatif_outcome;
/* Release what *o holds (NULL allowed); *o is zeroed. */
void qr_whatif_outcome_free(qr_whatif_outcome *o);

typedef struct qr_whatif_job {
    const char *run_dir; /* holds recording/ ; the output goes to run_dir/whatif/ */
    const qr_whatif_grid *grid;
    qr_drop_mode mode;
    int64_t th_ns;
    int prune; /* delete each point's arrival logs (and runtime captures) once measured */
    qr_replay_engine engine;
    void *engine_ctx;
    const char *engine_name;
    const volatile sig_atomic_t *cancel;
    /* Who runs the runs (each one task: a point's prediction, or a scorer's run); zeroed: one
     * after the other in this process. */
    qr_task_runner runner;
} qr_whatif_job;

/* Predict every point as a task of job->runner, measure it, and write run_dir/whatif/whatif.h5:
 * /grid, /summary, /queues, /quantiles, /blackholes (kind 0, prediction), each point's resolved
 * scenario as attributes of /scenarios/pNNN. A folder whatif/ left by an earlier job is replaced;
 * on an error or cancel nothing is left. Reads the recording's observations only; grading the
 * predictions against the closed loop is a scorer's (whatif_score.h: qr_whatif_validate).
 * Returns 0, QR_ECANCELED or an error (errbuf names the point). */
int qr_whatif_run(const qr_whatif_job *job, qr_whatif_outcome *out, char *errbuf);

/* The parts of a job, for a scorer that adds runs of its own to the same tasks: the work folder
 * (run_dir/whatif.partial-PID) with the recording open. */
typedef struct qr_whatif_work {
    const qr_whatif_job *job;
    qr_recording *rec;
    char rec_dir[4096], tmp[4200], rec_id[QR_ID_SIZE];
} qr_whatif_work;
/* Open the recording and make the work folder. Returns 0 or an error (nothing left). */
int qr_whatif_begin(const qr_whatif_job *job, qr_whatif_work *w, char *errbuf);
/* The file of one run's result in the work folder: run "prediction" or "truth" of point p
 * (points/pNNN/RUN.h5), or "recorded" (recorded.h5; p unused). */
void qr_whatif_result_path(const qr_whatif_work *w, const char *run, size_t p, char *buf,
                           size_t size);
/* Point p's folder in the work folder (made if missing). Returns 0 or QR_EIO. */
int qr_whatif_point_dir(const qr_whatif_work *w, size_t p, char *buf, size_t size, char *errbuf);
/* What a task is, for progress lines: "point 3 (buffer.size=2MB) prediction". */
void qr_whatif_describe(const qr_whatif_job *job, size_t p, const char *run, char *buf,
                        size_t size);
/* Point p's prediction (a task): the replay of the recording on the point's scenario, measured
 * into its result file. */
int qr_whatif_predict(const qr_whatif_work *w, size_t p, char *errbuf);
/* One run's result file: write res; read back the one run it holds. */
int qr_whatif_result_save(const char *path, const qr_whatif_result *res, char *errbuf);
int qr_whatif_result_load(const char *path, qr_whatif_result *out, char *errbuf);
/* Read every point's prediction into out (out->n, out->pred). */
int qr_whatif_collect(const qr_whatif_work *w, qr_whatif_outcome *out, char *errbuf);
/* End the work: with rc 0, write whatif.h5 from o (its truths, recorded run and errors where o
 * has them) and put the folder in place of run_dir/whatif; with an error (rc, or the writer's),
 * leave nothing and free o. The recording is closed, the work folder gone, either way. Returns rc
 * or the writer's error. */
int qr_whatif_finish(qr_whatif_work *w, int rc, qr_whatif_outcome *o, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
