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

#include "qreplay/flowtable.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A drop a host can know: a gap in a receiver's IP IDs, or the tail its sender's count shows. */
typedef struct qr_row_detected {
    uint32_t receiver; /* the host that saw the gap (for tails: the sender) */
    uint32_t dir;
    uint64_t seq;
    uint64_t packet;
    uint16_t ip_id;
    uint8_t tail; /* 1: from the sender's count after the last received packet */
} qr_row_detected;

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

/* The row naming a detected drop: packet `seq` of `dir`, seen missing by host `receiver` (for a
 * tail: the sender). */
qr_row_detected qr_detected_row(uint32_t receiver, uint32_t dir, uint64_t seq, int tail);

/* Every lost tail: for each direction dir < n_dirs that sent sent[dir] packets (those that count,
 * see qr_tail_cutoff_ns), the packets after the last one its receiver saw. Rows are named by
 * qr_detected_row with the direction's sending host (from ft). Caller owns *rows
 * (qr_h5_rows_free). Returns 0, QR_ESTATE (a receiver saw more packets than were sent; the detail
 * names the direction) or QR_ENOMEM. */
int qr_lossdet_tails(const qr_lossdet *d, const qr_flow_table *ft, const uint64_t *sent,
                     size_t n_dirs, qr_row_detected **rows, size_t *n_rows, char *errbuf);

/* The longest time a packet can spend between leaving its host and arriving or being dropped, in
 * ns: on each of the (hops + 1) links of the longest path its propagation delay and an MTU's
 * transmission, at each of the hops switches a full buffer ahead of it (rounded down, plus 1). */
int64_t qr_max_transit_ns(const qr_topology *t, uint64_t rate_bps, int64_t delay_ns,
                          uint64_t buffer_bytes);

/* The tail-loss rule of a run cut by its stop time: only packets sent before stop - max_transit
 * can be known lost. Returns that cutoff; a cutoff <= 0 means no tail can be known. (A run that
 * completed counts every packet sent.) */
int64_t qr_tail_cutoff_ns(int64_t stop_ns, int64_t max_transit_ns);

#ifdef __cplusplus
}
#endif
#endif
