/* Private helpers of the truth layer. */
#ifndef QREPLAY_TRUTH_INTERNAL_H
#define QREPLAY_TRUTH_INTERNAL_H

#include <stddef.h>

/* A recording's truth/ folder written whole or not at all (truth_carry.c): stage makes
 * REC_DIR/truth.partial-PID (its path in tmp), commit replaces REC_DIR/truth with it, discard
 * removes a staged or old folder of arrivals.qra and truth.h5. */
int qri_truth_stage(const char *rec_dir, char *tmp, size_t size, char *errbuf);
int qri_truth_commit(const char *rec_dir, const char *tmp, char *errbuf);
void qri_truth_discard(const char *dir);

#endif
