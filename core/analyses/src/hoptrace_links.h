/* qreplay: the latency profiler's links (hoptrace.c): per directed switch-to-switch link, the
 * times from a packet's mirrored copy at its near switch to its copy at the far one. Private to
 * the analyses layer. */
#ifndef QREPLAY_HOPTRACE_LINKS_H
#define QREPLAY_HOPTRACE_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema_hoptrace.h"
#include "qreplay/topology.h"

typedef struct qri_link_lat qri_link_lat;

/* An empty profile of t's links (t borrowed). Returns 0 or QR_ENOMEM. */
int qri_link_lat_create(qri_link_lat **out, const qr_topology *t);
void qri_link_lat_destroy(qri_link_lat *l);
/* A packet of `bytes` with copies at switch sw (leaving by port) at t0 and at switch next at t1:
 * counted for the link sw:port when it leads to switch next (else ignored: a copy between was
 * lost). Copies come in the order of t1. Returns 0 or QR_ENOMEM. */
int qri_link_lat_add(qri_link_lat *l, uint32_t sw, uint32_t port, uint32_t next, int64_t t0,
                     int64_t t1, uint32_t bytes);
/* The rows, slowest least latency first: every link with a packet; slow where its least latency
 * is at least ratio times the median of the links' least latencies (*median_ns; -1 none); its
 * service rate (the median over pairs of copies that left back to back of the later one's bits
 * over the time between their copies at the far end), slow_rate where measured on
 * QR_HOP_RATE_PAIRS pairs or more and at least ratio times below the links' nominal rate
 * nominal_bps (the ports' configured speed, known to an operator); *median_rate_bps (may be NULL)
 * the median of the rates measured on that many pairs (NaN none). Caller frees *rows. Returns 0
 * or QR_ENOMEM. */
int qri_link_lat_rows(qri_link_lat *l, double ratio, uint64_t nominal_bps, qr_row_hop_link **rows,
                      size_t *n, int64_t *median_ns, double *median_rate_bps);

#endif
