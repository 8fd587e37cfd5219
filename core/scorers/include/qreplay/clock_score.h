/* qreplay: the hosts' clock estimates (clock.h: qr_recording_estimate_clocks) as a table, graded
 * against the true offsets where the program passes them (a runtime's truth.h5 /clocks), and
 * clocks.h5 (qreplay clocks -o). */
#ifndef QREPLAY_CLOCK_SCORE_H
#define QREPLAY_CLOCK_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/clock.h"
#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the estimates came to, and against the truth (the *_abs, rms, left and raw fields: only
 * with truth_known). */
typedef struct qr_clock_summary {
    uint32_t hosts, estimated, unreached, applied, left_n, worst;
    uint64_t pairs; /* host pairs measured both ways */
    double residual_rms;
    double mean_abs, rms, max_abs; /* |estimate - true|, over the hosts estimated */
    double left_sum, raw_sum;      /* |correction - true| and |true| over the other hosts */
    int truth_known;
} qr_clock_summary;

/* The estimates est[0..n) (pairs: host pairs measured both ways) as rows (rows[0..n)) and their
 * summary; graded against true_off (each host's true offset, n of them; NULL: not graded, the true
 * and error columns 0). */
void qr_clock_score(const qr_clock_estimate *est, uint32_t n, uint64_t pairs,
                    const int64_t *true_off, qr_row_clock_estimate *rows, qr_clock_summary *s);

/* clocks.h5 at path (whole or not at all): the summary as attributes of "/", rec_dir and the
 * recording's id, /clocks the rows. Returns 0 or the writer's error naming the file. */
int qr_clock_score_write(const char *path, const char *rec_dir, const char *recording_id,
                         const qr_row_clock_estimate *rows, size_t n, const qr_clock_summary *s,
                         char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
