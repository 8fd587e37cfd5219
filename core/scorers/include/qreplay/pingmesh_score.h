/* qreplay: the Pingmesh analysis (pingmesh_analyze.h) scored against the runtime's ground truth
 * (truth.h).
 *
 * The faulty cables are those with a planted gray or blackhole fault. A flagged place is right if
 * one of its suspect cables is faulty; precision is the share of flagged places that are right,
 * recall the share of faulty cables some flagged place suspects; a curve step detected the faults
 * when its flags cover every faulty cable, and detect@ is the first step from which every later
 * step does. Every lost probe is attributed to where the truth says it died: the sender's NIC
 * queue (host), a planted fault, or congestion. */
#ifndef QREPLAY_PINGMESH_SCORE_H
#define QREPLAY_PINGMESH_SCORE_H

#include "qreplay/pingmesh_analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Score r (a qr_pingmesh_run result) against truth.h5 at truth_path: fills the truth columns,
 * has_truth (faults were planted) and the detection point. Returns 0, QR_ENOMEM, QR_EFORMAT (a
 * probe or fault the run's topology or plan does not have, naming the file and row) or the
 * reader's error. r is unchanged on an error. */
int qr_pingmesh_score(qr_pingmesh_result *r, const char *truth_path, char *errbuf);

/* The whole evaluation of a run: its probe log (probes.h5 at log_path: probelog.h) read, analysed
 * with o, and scored against truth.h5 at truth_path (NULL: not scored, the truth columns stay
 * unknown). Caller owns *out (qr_pingmesh_free, also after an error). Returns 0 or the first
 * error of the three steps. */
int qr_pingmesh_evaluate(const char *log_path, const char *truth_path, const qr_pingmesh_opts *o,
                         qr_pingmesh_result *out, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
