/* qreplay: the injection plan, what a replay injects and when, as a value.
 *
 * A plan is made once from the observations and never changes: per host, every recorded packet's
 * injection time (its send time as sampled at a threshold and inferred back; th = 0: as recorded)
 * and the injection order (by that time; ties keep the recorded order). It is made either by
 * sampling a recording's send times (qr_plan_sample, here), after taking out the clock
 * corrections the caller passes, or from the samples a light record holds (light.h:
 * qr_light_plan). A cursor over a plan is a source (source.h) that engines read. */
#ifndef QREPLAY_PLAN_H
#define QREPLAY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a sampling of every direction gave. */
typedef struct qr_sampling_stats {
    uint64_t packets, records;
    int64_t max_error_ns; /* largest |inferred - recorded| */
} qr_sampling_stats;

typedef struct qr_plan qr_plan;

/* Sample every direction of rec at th_ns with `method` and infer every packet's injection time;
 * correction (NULL: none) has a value per host taken out of that host's recorded send times
 * first (an estimated clock offset). With records, *records gets every record (direction by
 * direction, hosts in order; caller owns it: qr_h5_rows_free) and *n_records their number.
 * Returns 0, QR_EINVAL (a bad threshold), QR_ENOMEM, or QR_ESTATE if a rate-based inference
 * missed th (it cannot: say so loudly). Caller owns *out (qr_plan_free). */
int qr_plan_sample(qr_plan **out, const qr_recording *rec, const int64_t *correction,
                   qr_sampling_method method, int64_t th_ns, qr_sampling_stats *stats,
                   qr_row_sample_record **records, size_t *n_records, char *errbuf);

/* Release; NULL is allowed. */
void qr_plan_free(qr_plan *p);

/* Host h's injection times, one per recorded packet (qr_recording_packets' order), and its
 * injection order (indices into them); *n gets the number. Borrowed from p. */
const int64_t *qr_plan_times(const qr_plan *p, uint32_t h, size_t *n);
const uint32_t *qr_plan_order(const qr_plan *p, uint32_t h);

typedef struct qr_plan_cursor qr_plan_cursor;
/* A cursor over rec's packets in p's order, each host from its first packet. rec and p are
 * borrowed until qr_plan_cursor_free. Returns 0 or QR_ENOMEM. */
int qr_plan_cursor_create(qr_plan_cursor **out, const qr_recording *rec, const qr_plan *p);
/* The cursor as a source (source.h; borrowed from c). */
qr_source *qr_plan_cursor_source(qr_plan_cursor *c);
/* Release; NULL is allowed. */
void qr_plan_cursor_free(qr_plan_cursor *c);

#ifdef __cplusplus
}
#endif
#endif
