/* qreplay: 007's blame (blame.h) scored against the runtime's ground truth (truth.h).
 *
 * The faulty links are the cables with a planted gray or blackhole fault (/link_faults); every
 * drop of /drops is charged to its cable (a fault drop on a host's uplink to the uplink, as
 * linkfault.h takes it) as a fault or a congestion drop. Scores: precision and recall of the
 * flagged links (NaN where no fault was planted: nothing to score them against); the detection
 * curve's rank of the best-ranked faulty cable and the faulty cables flagged at each step; the
 * first step after which every faulty link stays flagged (detect@) and after which a faulty link
 * stays ranked first (rank1@); per connection, the cable where the network really dropped most of
 * its packets on its true path (the one its 5-tuple took, which the analysis had to trace: the
 * truth's /true_paths where it has them, as a testbed's kernels chose them, else the topology's
 * hash; its true cause: fault or congestion) and whether each method's culprit is that cable. */
#ifndef QREPLAY_BLAME_SCORE_H
#define QREPLAY_BLAME_SCORE_H

#include "qreplay/blame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A queue drop whose port the truth does not know (a testbed's, of a direction that never left
 * that switch) is charged to no cable. Score b (a qr_blame_run result of recording rec) against
 * truth.h5 at truth_path: fills the truth columns of its rows, has_truth and truth. Returns 0,
 * QR_ENOMEM, QR_EINVAL (a recording of an unknown network: its links are not the truth's),
 * QR_EFORMAT (a drop or fault the recording's topology or flows do not have, naming the file and
 * row) or the reader's error. b is unchanged on an error. */
int qr_blame_score(qr_blame *b, const qr_recording *rec, const char *truth_path, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
