/* qreplay: the what-if's predictions graded: against the closed loop rerun at every point (the
 * runtime on the point's scenario, --validate) and against the recorded run's own queues (the
 * runtime's truth log), with relative errors and whether the rankings of the points agree. The
 * predictions themselves are the analysis's (whatif.h); this scorer adds its runs to the same
 * tasks and its tables (/errors, the truth and recorded rows) to the same whatif.h5. */
#ifndef QREPLAY_WHATIF_SCORE_H
#define QREPLAY_WHATIF_SCORE_H

#include <stddef.h>

#include "qreplay/scenario.h"
#include "qreplay/whatif.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (pred - truth) / truth; if truth is 0: pred > 0 gives +1 ("predicted where none"), both 0
 * give 0. */
double qr_whatif_rel(double pred, double truth);

/* Fill rows[0..n) with each point's prediction against its truth and *agree with whether the
 * rankings agree: Kendall's tau between the predicted and true orderings of the points by drops
 * and by p99 delay, and the best point of each. pred and truth: n results in point order (their
 * delay quantiles: the layer-3 rows). Returns 0 or QR_ENOMEM. */
int qr_whatif_errors(const qr_whatif_result *pred, const qr_whatif_result *truth, size_t n,
                     qr_whatif_error_row *rows, qr_whatif_agreement *agree);

/* Kendall's tau-b of two orderings of n values (ties handled); 0 for n < 2. */
double qr_kendall_tau(const double *a, const double *b, size_t n);

/* The closed-loop runtime of a scenario into dir (the recording and its truth arrival log),
 * supplied by the program that has a runtime (the ns-3 module). Returns 0, QR_ECANCELED, or an
 * error with its message in errbuf. */
typedef int (*qr_whatif_runtime_fn)(void *ctx, const qr_scenario *s, const char *dir, char *errbuf);

typedef struct qr_whatif_validation {
    int closed_loop;              /* rerun the runtime at every point (--validate) */
    qr_whatif_runtime_fn runtime; /* needed with closed_loop */
    void *runtime_ctx;
} qr_whatif_validation;

/* The job's predictions (qr_whatif_run), graded: with closed_loop, each point's truth (the
 * runtime rerun on its scenario, measured from its truth log) and /errors; and, where the
 * recording has its truth log, the recorded run measured (kind 2). All as tasks of job->runner,
 * the longest first. Returns 0, QR_EINVAL (closed_loop without a runtime), QR_EVALUE (closed_loop
 * on a recording without truth: an import has no closed loop to rerun), QR_ECANCELED or an error;
 * on an error nothing is left. */
int qr_whatif_validate(const qr_whatif_job *job, const qr_whatif_validation *v,
                       qr_whatif_outcome *out, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
