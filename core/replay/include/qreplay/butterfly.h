/* qreplay: the butterfly experiment as a job (qreplay butterfly). The runtime runs once; then for
 * every timing jitter sigma, N closed-loop replays, each compared with the runtime by the rules of
 * compare.h; the typical replay of each sigma runs again for its queue-difference series. The
 * engine (the ns-3 module today) runs the simulations through two callbacks; this job decides
 * what runs, in which order, and writes butterfly.h5 (schema.h) in one commit. */
#ifndef QREPLAY_BUTTERFLY_H
#define QREPLAY_BUTTERFLY_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/common.h"
#include "qreplay/compare.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the runtime was, as the replays are compared with it. */
typedef struct qr_butterfly_runtime {
    uint32_t short_flow;        /* qr_short_flow of the schedule */
    int64_t short_fct_ns;       /* its completion time; -1: it did not complete */
    uint64_t drops;             /* packets the runtime dropped */
    uint32_t bottleneck_switch; /* the runtime's busiest queue */
    uint32_t bottleneck_port;
    int64_t end_ns; /* when the runtime's simulation ended */
} qr_butterfly_runtime;

/* Run the runtime once, recorded into dir, and describe it in *out. Returns 0, QR_ECANCELED
 * (interrupted) or another code with the reason in errbuf. */
typedef int (*qr_butterfly_runtime_fn)(void *ctx, const char *dir, qr_butterfly_runtime *out,
                                       char *errbuf);

/* One closed-loop replay at timing jitter sigma_ns with random stream `replay` (>= 1), compared
 * with the runtime into *out. With series not NULL, also the queue difference at every arrival
 * matched at the bottleneck: *series (malloc'd; the job frees it) of *n_series points. Returns
 * 0, QR_ECANCELED or another code with the reason in errbuf. */
typedef int (*qr_butterfly_replay_fn)(void *ctx, int64_t sigma_ns, uint32_t replay,
                                      qr_row_butterfly_replay *out,
                                      qr_row_butterfly_series **series, size_t *n_series,
                                      char *errbuf);

/* A butterfly experiment. The job borrows every pointer. */
typedef struct qr_butterfly_job {
    const qr_scenario *scenario; /* written into butterfly.h5 */
    const char *dir;          /* the runtime goes to dir/runtime, the result to dir/butterfly.h5 */
    const int64_t *sigmas_ns; /* the standard deviations, in the order they run */
    size_t n_sigmas;
    uint32_t replays; /* per sigma, >= 1 */
    qr_butterfly_runtime_fn runtime;
    qr_butterfly_replay_fn replay;
    void *engine_ctx; /* given to runtime and replay */
    /* Called once the runtime ran (may be NULL): the program prints it. */
    void (*on_runtime)(void *ctx, const qr_butterfly_runtime *rt);
    qr_progress_fn progress; /* "butterfly: sigma 1ns, replay 3/100"; non-zero cancels */
    void *progress_ctx;      /* given to on_runtime and progress */
} qr_butterfly_job;

/* Run the experiment and write dir/butterfly.h5 (nothing is left there on an error). On success
 * *rows holds one summary per sigma (malloc'd; caller frees) and *runtime what the runtime was.
 * Returns 0, QR_EVALUE (no sigma, no replay), QR_ECANCELED (interrupted: errbuf says so) or the
 * engine's or the writer's code with the reason in errbuf. */
int qr_butterfly_run(const qr_butterfly_job *job, qr_butterfly_runtime *runtime,
                     qr_row_butterfly_sigma **rows, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
