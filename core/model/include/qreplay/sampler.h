/* qreplay: send-time sampling of one flow direction, and inference of every packet's time.
 *
 * A flow direction's packets are indexed 0, 1, 2, ... in send order. A sampler consumes their send
 * times one by one and emits records (index, time, gap): "packet `index` was sent at `time`, and
 * the packets after it, up to the next record, follow at `gap` ns each". Inference gives packet i
 * the time  r.time_ns + (i - r.index) * r.gap_ns  of the last record r with r.index <= i.
 *
 * QR_SAMPLING_RATE (rate-based, docs/model.md): every inferred time is within th of the true
 * time, exactly: the feasible gaps are kept as exact fractions, a record's gap is an exact fraction
 * (the midpoint of the feasible gaps when it fits in 64 bits, else an end of them), and inference
 * rounds k * gap exactly in integers, so the bound holds for any times in [0, QR_TIME_MAX]
 * (Unix-epoch nanoseconds included). QR_SAMPLING_GAP (the strawman): a burst ends where the gap
 * between two packets exceeds th; a record keeps the burst's first time and its mean gap, so the
 * error inside a burst whose rate changes is unbounded. With th = 0 both methods record every
 * packet whose time is not exactly predicted, so inference is exact. */
#ifndef QREPLAY_SAMPLER_H
#define QREPLAY_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest send time (ns) and threshold the sampler takes is QR_TIME_MAX (common.h): 2^62 ns,
 * past the year 2116 in Unix-epoch nanoseconds. Every reader accepts times in [0, QR_TIME_MAX]. */

/* How send times are sampled (docs/model.md): rate-based (bounded error) or gap-based. */
typedef enum { QR_SAMPLING_RATE = 0, QR_SAMPLING_GAP = 1 } qr_sampling_method;

typedef struct qr_sample_record {
    uint64_t index;  /* index of the sampled packet in its flow direction */
    int64_t time_ns; /* its recorded send time */
    /* the per-packet gap for the packets that follow it, exactly: gap_num / gap_den ns,
     * gap_den > 0 */
    int64_t gap_num;
    int64_t gap_den;
} qr_sample_record;

typedef struct qr_sampler_cfg {
    qr_sampling_method method;
    int64_t th_ns; /* error bound (rate) or burst gap threshold (gap); >= 0 */
} qr_sampler_cfg;

typedef struct qr_sampler qr_sampler;

/* Create a sampler for one flow direction. Returns 0 or QR_EINVAL (th outside [0, QR_TIME_MAX],
 * unknown method),
 * QR_ENOMEM. Caller owns *out (qr_sampler_destroy). */
int qr_sampler_create(qr_sampler **out, const qr_sampler_cfg *cfg);

/* Release a sampler; NULL is allowed. */
void qr_sampler_destroy(qr_sampler *s);

/* Start a new flow direction with the same settings (index restarts at 0). */
void qr_sampler_reset(qr_sampler *s);

/* Feed the next packet's send time. If a record is complete, it is written to *rec and *emitted
 * is set to 1 (else 0). Returns 0, QR_EORDER if time_ns is earlier than the previous packet's
 * (the detail names the packet index), QR_EVALUE for a time outside [0, QR_TIME_MAX], or QR_ESTATE
 * after qr_sampler_finish. */
int qr_sampler_push(qr_sampler *s, int64_t time_ns, qr_sample_record *rec, int *emitted,
                    char *errbuf);

/* Close the flow direction: emits the open record, if any (*emitted = 1). Returns 0. */
int qr_sampler_finish(qr_sampler *s, qr_sample_record *rec, int *emitted);

/* The open segment, for a reader that streams (recording.h): its sampled packet's index and time,
 * and the record qr_sampler_finish would emit now (the record of the segment if no further packet
 * joins it). Returns 1, or 0 if no segment is open. */
int qr_sampler_peek(const qr_sampler *s, qr_sample_record *rec);

/* The latest send time at which the direction's next packet could still join the open segment:
 * once a reader knows every later packet of the direction is sent after *until, the segment's
 * record is final (qr_sampler_peek's). Returns 1, or 0 if there is no such time (no open segment,
 * or a rate segment of one packet, which any next packet joins). */
int qr_sampler_open_until(const qr_sampler *s, int64_t *until);

/* Make dst (any sampler) an independent copy of src at the same point, settings included. */
void qr_sampler_copy(qr_sampler *dst, const qr_sampler *src);

/* Number of packets pushed since the last reset. */
uint64_t qr_sampler_packets(const qr_sampler *s);

/* Infer the send time of packet `index` from a flow direction's records (sorted by index, as
 * emitted): r.time_ns + round(k * gap_num / gap_den), k = index - r.index, rounded half away from
 * zero in exact integer arithmetic. Returns 0, QR_ENOTFOUND if index precedes the first record,
 * QR_EINVAL for no records or a record with gap_den <= 0, QR_EVALUE if the time does not fit. */
int qr_sample_infer(const qr_sample_record *recs, size_t n, uint64_t index, int64_t *time_ns);

/* Streaming inference over records in order: call with indices in increasing order; the cursor
 * *pos (start at 0) advances through recs, so a whole flow costs O(packets + records). */
int qr_sample_infer_next(const qr_sample_record *recs, size_t n, size_t *pos, uint64_t index,
                         int64_t *time_ns);

/* Sample a whole flow direction and infer it back: the send times times[0..n) (in send order) go
 * through s (reset first), the records go to recs (room for n records: a direction never needs
 * more), their number to *n_recs; with inferred (room for n) every packet's inferred time; with
 * max_error_ns the largest |inferred - true|. Returns 0, QR_EINVAL or QR_EORDER (a time going
 * backwards; the detail names the packet index). Borrows every array. */
int qr_sample_series(qr_sampler *s, const int64_t *times, size_t n, qr_sample_record *recs,
                     size_t *n_recs, int64_t *inferred, int64_t *max_error_ns, char *errbuf);

/* The rate-based sampler's promise, checked where a whole sampling ends (a plan, a stream): every
 * inferred time within th_ns of the true one. Returns 0, or QR_ESTATE saying the bound is broken
 * (it cannot be: a defect to report) when method is rate and max_error_ns exceeds th_ns. */
int qr_sampling_bound_check(qr_sampling_method method, int64_t th_ns, int64_t max_error_ns,
                            char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
