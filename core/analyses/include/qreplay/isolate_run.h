/* qreplay: the isolated replay as a job (qreplay isolate). Every chosen connection is replayed
 * alone (isolate.h's rules) at every timing jitter sigma, the replays summed per sigma; then an
 * exact replay (sigma 0) of each traced connection records its TCP execution (tcptrace.h). The
 * engine (the ns-3 module) runs each replay through callbacks; this job decides what runs and
 * writes isolated.h5 (schema.h) in one commit. */
#ifndef QREPLAY_ISOLATE_RUN_H
#define QREPLAY_ISOLATE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/common.h"
#include "qreplay/isolate.h"
#include "qreplay/recording.h"
#include "qreplay/tcptrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Replay connection `flow` alone with jitter sigma_ns (random stream 1) into *out. Returns 0,
 * QR_ECANCELED (interrupted) or another code with the reason in errbuf. */
typedef int (*qr_isolate_replay_fn)(void *ctx, uint32_t flow, int64_t sigma_ns,
                                    qr_row_isolated *out, char *errbuf);

/* Replay connection `flow` exactly (sigma 0) with its TCP execution traced into a new *out
 * (caller destroys it: qr_tcp_trace_destroy), receiver ACKs held delack_ns or more counting as
 * delayed. Returns 0, QR_ECANCELED or another code with the reason in errbuf. */
typedef int (*qr_isolate_trace_fn)(void *ctx, uint32_t flow, int64_t delack_ns, qr_tcp_trace **out,
                                   char *errbuf);

/* An isolated-replay job. The job borrows every pointer. */
typedef struct qr_isolate_job {
    const qr_recording *rec; /* its scenario and folder go into the result */
    const char *rec_dir;     /* written as the "recording" attribute */
    const char *out;         /* the isolated.h5 to write */
    const uint32_t *flows;   /* the connections replayed at every sigma, in order */
    size_t n_flows;
    const int64_t *sigmas_ns;
    size_t n_sigmas;
    const uint32_t *traced; /* the connections traced (may be none) */
    size_t n_traced;
    qr_isolate_replay_fn replay;
    qr_isolate_trace_fn trace;
    void *engine_ctx;
    /* Called with each finished trace (may be NULL): the program prints it. */
    void (*on_trace)(void *ctx, const qr_tcp_trace *t);
    qr_progress_fn progress; /* "isolate: sigma 1ns, connection 3/40"; non-zero cancels */
    void *progress_ctx;      /* given to on_trace and progress */
} qr_isolate_job;

/* Run the job and write job->out (nothing is left there on an error). sums (n_sigmas entries,
 * the caller's) receives each sigma's summary; *all_match whether every traced connection's
 * retransmissions were exactly the recorded ones (1 when none was traced). Returns 0,
 * QR_ECANCELED ("interrupted" in errbuf) or the engine's or the writer's code with the reason. */
int qr_isolate_run(const qr_isolate_job *job, qr_isolated_summary *sums, int *all_match,
                   char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
