/* qreplay: the file of qreplay sample, written flow by flow: every flow direction's send times
 * sampled, the records a host would keep, every packet's time inferred back from them. */
#ifndef QREPLAY_SAMPLE_H5_H
#define QREPLAY_SAMPLE_H5_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_sample_file qr_sample_file;

/* What a sample file holds when complete. */
typedef struct qr_sample_file_stats {
    uint64_t flows, packets, records;
    int64_t max_error_ns; /* largest |inferred - true| */
} qr_sample_file_stats;

/* Start the file at path (under a temporary name until qr_sample_file_commit) sampling with cfg;
 * input names what was sampled (an attribute). Caller owns *out (commit or abort). Returns 0,
 * QR_EINVAL (a bad threshold) or the writer's error naming the file. */
int qr_sample_file_create(qr_sample_file **out, const char *path, const char *input,
                          const qr_sampler_cfg *cfg, char *errbuf);

/* Sample one flow direction, name (at most QR_FLOW_NAME_MAX - 1 bytes), its send times
 * times[0..n) in send order: its records to /sampling/records, every packet's true and inferred
 * time to /sampling/inferred, its counts to /sampling/flows; *max_error_ns (may be NULL) gets
 * its largest error. Returns 0, QR_EORDER (a time going back, naming the flow and packet),
 * QR_ESTATE (a rate-based inference off by more than th: a defect), QR_ENOMEM, or the writer's
 * error. */
int qr_sample_file_flow(qr_sample_file *f, const char *name, const int64_t *times, size_t n,
                        int64_t *max_error_ns, char *errbuf);

/* Finish: the attributes (the method, th, counts, packets per record, the code version) and the
 * file renamed to its path. *st (may be NULL) gets the counts. Releases f, also on an error.
 * Returns 0 or the writer's error. */
int qr_sample_file_commit(qr_sample_file *f, qr_sample_file_stats *st, char *errbuf);

/* Drop the file unfinished; NULL is allowed. */
void qr_sample_file_abort(qr_sample_file *f);

#ifdef __cplusplus
}
#endif
#endif
