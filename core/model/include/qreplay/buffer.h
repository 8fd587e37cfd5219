/* qreplay: a switch's shared buffer with dynamic thresholds (Choudhury-Hahne), the static
 * per-port alternative, and the replay drop decision (docs/model.md).
 *
 * One qr_buffer per switch holds B (bytes), alpha, the bytes held by each egress queue q_i and the
 * total Q. Its policy sets every queue's threshold T:
 *  - QR_BUFFER_DYNAMIC: T = alpha * (B - Q), in bytes, rounded down (negative when an overflowing
 *    replay holds more than B);
 *  - QR_BUFFER_STATIC: T = L, each port's own limit (a byte-limited FIFO per port, what a Linux
 *    switch of bfifo qdiscs has); the ports share nothing, so Q never limits.
 *
 * Decisions for a packet of s bytes joining queue i:
 *  - QR_MODE_PLAIN (also the runtime's rule): admit iff q_i + s <= T and (dynamic) Q + s <= B.
 *  - QR_MODE_TAGGED: an untagged packet is always admitted (the buffer may overflow); a tagged
 * packet is dropped iff q_i > T - margin, else admitted. */
#ifndef QREPLAY_BUFFER_H
#define QREPLAY_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Replay drop-decision modes; a bit set of (1 << mode) in qr_config.replay.modes. */
typedef enum { QR_MODE_PLAIN = 0, QR_MODE_TAGGED = 1 } qr_drop_mode;

/* Outcome of an admission decision. Values are stable: they name drop reasons in traces. */
typedef enum {
    QR_ADMIT = 0,
    QR_DROP_THRESHOLD = 1,   /* q_i + s > T: the queue is at its dynamic threshold */
    QR_DROP_BUFFER_FULL = 2, /* Q + s > B: the shared buffer is full */
    QR_DROP_TAGGED = 3,      /* tagged packet and q_i > T - margin */
    QR_DROP_FAULT = 4,       /* a planted fault ([faults], faults.h) dropped it; runtime only */
} qr_decision;

/* Short name of a decision ("admit", "threshold", "buffer-full", "tagged", "fault"); never NULL. */
const char *qr_decision_name(qr_decision d);

typedef enum { QR_BUFFER_DYNAMIC = 0, QR_BUFFER_STATIC = 1 } qr_buffer_policy;

/* "dynamic" or "static"; never NULL. */
const char *qr_buffer_policy_name(qr_buffer_policy p);

typedef struct qr_buffer_cfg {
    uint64_t size_bytes; /* B */
    double alpha;
    uint32_t n_queues; /* egress queues sharing the buffer */
    qr_buffer_policy policy;
    uint64_t port_bytes; /* static: each port's limit L (0: B / n_queues, rounded down) */
} qr_buffer_cfg;

/* A read-only view of a buffer's state, for the pure decision function. */
typedef struct qr_buffer_state {
    uint64_t size_bytes;
    double alpha;
    uint64_t total_bytes; /* Q */
    uint64_t queue_bytes; /* q_i of the queue in question */
    qr_buffer_policy policy;
    uint64_t port_bytes; /* static: L */
} qr_buffer_state;

/* The threshold T of a queue in state st (the policy's rule above). */
int64_t qr_buffer_state_threshold(const qr_buffer_state *st);

/* The pure decision: what happens to a packet of `bytes` joining a queue in state st.
 * tagged is ignored in QR_MODE_PLAIN. margin_bytes is used in QR_MODE_TAGGED only. */
qr_decision qr_drop_decide(const qr_buffer_state *st, uint64_t bytes, qr_drop_mode mode, int tagged,
                           uint64_t margin_bytes);

/* The dynamic threshold alpha * (B - Q) in bytes, rounded toward minus infinity. */
int64_t qr_dt_threshold(uint64_t size_bytes, double alpha, uint64_t total_bytes);

typedef struct qr_buffer qr_buffer;

/* Create a buffer. Returns 0, QR_EINVAL (size 0, alpha <= 0, no queues, an unknown policy, a
 * static limit of 0 bytes) or QR_ENOMEM.
 * Caller owns *out (qr_buffer_destroy). */
int qr_buffer_create(qr_buffer **out, const qr_buffer_cfg *cfg);

/* Release a buffer; NULL is allowed. */
void qr_buffer_destroy(qr_buffer *b);

/* Decide for a packet joining queue `queue` and, if admitted, account its bytes. *decision gets
 * the outcome. Returns 0 or QR_EINVAL (queue out of range). */
int qr_buffer_admit(qr_buffer *b, uint32_t queue, uint64_t bytes, qr_drop_mode mode, int tagged,
                    uint64_t margin_bytes, qr_decision *decision);

/* Release bytes of a packet leaving queue `queue` (when its last bit leaves the switch).
 * Returns 0, QR_EINVAL, or QR_ESTATE if the queue holds fewer bytes than that. */
int qr_buffer_release(qr_buffer *b, uint32_t queue, uint64_t bytes);

/* Current values. */
uint64_t qr_buffer_total(const qr_buffer *b);
uint64_t qr_buffer_queue(const qr_buffer *b, uint32_t queue);
int64_t qr_buffer_threshold(const qr_buffer *b); /* every queue's T (the same for all) */
uint32_t qr_buffer_queues(const qr_buffer *b);

#ifdef __cplusplus
}
#endif
#endif
