/* qreplay internal: the plan's layout, for the modules that make plans (plan.c, light_recording.c).
 */
#ifndef QREPLAY_PLAN_INTERNAL_H
#define QREPLAY_PLAN_INTERNAL_H

#include "qreplay/plan.h"

struct qr_plan {
    uint32_t n_hosts;
    size_t *n;        /* per host: its packets */
    int64_t **time;   /* per host: injection time by recorded index */
    uint32_t **order; /* per host: injection order (indices) */
};

/* A plan sized for rec's packets, every time 0 and every order the identity. Returns 0 or
 * QR_ENOMEM. */
int qri_plan_alloc(qr_plan **out, const qr_recording *rec);

/* A plan's end: on rc 0, p into *out, st into *stats and the sampler's records o (n_out of them)
 * into *records, *n_records (each out may be NULL: records only when o was made); otherwise p
 * and o freed, and rc returned (QR_ENOMEM said in errbuf; another code's message is there). */
int qri_plan_hand_over(int rc, qr_plan *p, qr_row_sample_record *o, size_t n_out,
                       const qr_sampling_stats *st, qr_plan **out, qr_sampling_stats *stats,
                       qr_row_sample_record **records, size_t *n_records, char *errbuf);

/* Order host h of p by injection time, ties in recorded order. */
int qri_plan_order_host(qr_plan *p, uint32_t h);

#endif
