/* qreplay: Everflow's hop traces (hoptrace.h) scored against the runtime's ground truth (truth.h).
 *
 * The faulty cables are those with a planted gray or blackhole fault (/link_faults, both
 * directions). A drop of the trace is silent when a planted fault made it (no switch counted it).
 * The trace is right when it has silent drops and every one is on a faulty cable; a debugger
 * reading the trace's drops in time order finds the cable once it shows its second silent drop:
 * how many drops that took, and when. */
#ifndef QREPLAY_HOPTRACE_SCORE_H
#define QREPLAY_HOPTRACE_SCORE_H

#include "qreplay/hoptrace.h"
#include "qreplay/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Score t (a qr_hoptrace_run result on a recording of scenario s) against truth.h5 at
 * truth_path: fills t->truth (has_truth 0 when the run planted no gray or blackhole fault).
 * Returns 0, QR_ENOMEM, QR_EFORMAT (a fault on a link the topology lacks, naming the file and
 * row) or the reader's error; t is unchanged on an error. */
int qr_hoptrace_score(qr_hoptrace *t, const qr_scenario *s, const char *truth_path, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
