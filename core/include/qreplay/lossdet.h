/* qreplay: drop detection at hosts from IP ID gaps.
 *
 * Every flow direction numbers its packets with consecutive 16-bit IP IDs (wrapping). The receiving
 * host feeds the IDs it sees, in arrival order, to a detector that unwraps them into 64-bit
 * sequence numbers (0, 1, 2, ... from the direction's first packet) and reports the numbers skipped
 * since the previous arrival: the packets the network dropped. Drops after a direction's last
 * received packet (tail drops) show no gap; the sending host knows how many packets it sent, and
 * qr_lossdet_tail gives the missing tail from that count.
 *
 * Assumptions (true for the runtime's per-flow ECMP and FIFO queues): packets of one direction are
 * not reordered and fewer than 65536 consecutive packets of a direction are lost. The first packet
 * of a direction has IP ID 0. Directions are dense numbers 0 .. n_dirs-1 chosen by the caller. */
#ifndef QREPLAY_LOSSDET_H
#define QREPLAY_LOSSDET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_lossdet qr_lossdet;

/* A detector for n_dirs directions. Returns 0, QR_EINVAL or QR_ENOMEM; caller owns *out. */
int qr_lossdet_create(qr_lossdet **out, size_t n_dirs);
/* Release; NULL is allowed. */
void qr_lossdet_destroy(qr_lossdet *d);

/* A packet of direction `dir` with IP ID `ip_id` arrived. *seq receives its sequence number;
 * the packets [*first_missing, *first_missing + *n_missing) of the direction were lost just
 * before it (*n_missing = 0 when there is no gap). Returns 0 or QR_EINVAL (dir out of range). */
int qr_lossdet_observe(qr_lossdet *d, uint32_t dir, uint16_t ip_id, uint64_t *seq,
                       uint64_t *first_missing, uint64_t *n_missing);

/* Packets of `dir` received so far, and the sequence number expected next (0 before any). */
uint64_t qr_lossdet_received(const qr_lossdet *d, uint32_t dir);
uint64_t qr_lossdet_next(const qr_lossdet *d, uint32_t dir);

/* The sender sent `sent` packets in `dir`: the lost tail is [*first_missing, + *n_missing).
 * Returns 0, QR_EINVAL (dir out of range) or QR_ESTATE (more packets seen than sent). */
int qr_lossdet_tail(const qr_lossdet *d, uint32_t dir, uint64_t sent, uint64_t *first_missing,
                    uint64_t *n_missing);

#ifdef __cplusplus
}
#endif
#endif
