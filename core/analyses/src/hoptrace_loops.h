/* qreplay: Everflow's loop debugger (hoptrace.c): a packet whose mirrored copies outnumber the
 * switches of the longest path the fabric's routing can take was seen again at a switch it had
 * left; its copies from then on repeat a cycle of switches. Private to the analyses layer. */
#ifndef QREPLAY_HOPTRACE_LOOPS_H
#define QREPLAY_HOPTRACE_LOOPS_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema_hoptrace.h"
#include "qreplay/topology.h"

typedef struct qri_loops qri_loops;

/* An empty debugger for t (borrowed). Returns 0 or QR_ENOMEM. */
int qri_loops_create(qri_loops **out, const qr_topology *t);
void qri_loops_destroy(qri_loops *l);
/* A matched packet's hop-th copy (from 1) at switch sw at t_ns. Returns 0 or QR_ENOMEM. */
int qri_loops_copy(qri_loops *l, uint64_t packet, uint32_t hop, uint32_t sw, int64_t t_ns);
/* The loops found, one row per cycle of switches (its smallest switch first), the most packets
 * first; *looping the packets caught in one. Caller frees *rows. Returns 0 or QR_ENOMEM. */
int qri_loops_rows(qri_loops *l, qr_row_hop_loop **rows, size_t *n, uint64_t *looping);

#endif
