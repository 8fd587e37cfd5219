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

/* Order host h of p by injection time, ties in recorded order. */
int qri_plan_order_host(qr_plan *p, uint32_t h);

#endif
