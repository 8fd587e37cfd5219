/* Shared buffer with dynamic thresholds or static per-port limits, and the replay drop
 * decision. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/buffer.h"

struct qr_buffer {
    qr_buffer_cfg cfg;
    uint64_t total;
    uint64_t *queue;
};

const char *qr_decision_name(qr_decision d)
{
    switch (d) {
    case QR_ADMIT: return "admit";
    case QR_DROP_THRESHOLD: return "threshold";
    case QR_DROP_BUFFER_FULL: return "buffer-full";
    case QR_DROP_TAGGED: return "tagged";
    case QR_DROP_FAULT: return "fault";
    }
    return "unknown";
}

int64_t qr_dt_threshold(uint64_t size_bytes, double alpha, uint64_t total_bytes)
{
    double free_bytes = (double)size_bytes - (double)total_bytes;
    return (int64_t)floor(alpha * free_bytes);
}

const char *qr_buffer_policy_name(qr_buffer_policy p)
{
    return p == QR_BUFFER_STATIC ? "static" : p == QR_BUFFER_DYNAMIC ? "dynamic" : "unknown";
}

int64_t qr_buffer_state_threshold(const qr_buffer_state *st)
{
    if (st->policy == QR_BUFFER_STATIC)
        return st->port_bytes > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)st->port_bytes;
    return qr_dt_threshold(st->size_bytes, st->alpha, st->total_bytes);
}

qr_decision qr_drop_decide(const qr_buffer_state *st, uint64_t bytes, qr_drop_mode mode, int tagged,
                           uint64_t margin_bytes)
{
    int64_t t = qr_buffer_state_threshold(st);
    if (mode == QR_MODE_TAGGED) {
        if (!tagged)
            return QR_ADMIT;
        return (int64_t)st->queue_bytes > t - (int64_t)margin_bytes ? QR_DROP_TAGGED : QR_ADMIT;
    }
    if ((int64_t)(st->queue_bytes + bytes) > t)
        return QR_DROP_THRESHOLD;
    if (st->policy == QR_BUFFER_DYNAMIC && st->total_bytes + bytes > st->size_bytes)
        return QR_DROP_BUFFER_FULL;
    return QR_ADMIT;
}

int qr_buffer_create(qr_buffer **out, const qr_buffer_cfg *cfg)
{
    if (!out || !cfg || cfg->size_bytes == 0 || !(cfg->alpha > 0) || cfg->n_queues == 0 ||
        (cfg->policy != QR_BUFFER_DYNAMIC && cfg->policy != QR_BUFFER_STATIC))
        return QR_EINVAL;
    uint64_t port = cfg->port_bytes ? cfg->port_bytes : cfg->size_bytes / cfg->n_queues;
    if (cfg->policy == QR_BUFFER_STATIC && port == 0)
        return QR_EINVAL;
    qr_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return QR_ENOMEM;
    b->queue = calloc(cfg->n_queues, sizeof *b->queue);
    if (!b->queue) {
        free(b);
        return QR_ENOMEM;
    }
    b->cfg = *cfg;
    b->cfg.port_bytes = port;
    *out = b;
    return QR_OK;
}

void qr_buffer_destroy(qr_buffer *b)
{
    if (!b)
        return;
    free(b->queue);
    free(b);
}

int qr_buffer_admit(qr_buffer *b, uint32_t queue, uint64_t bytes, qr_drop_mode mode, int tagged,
                    uint64_t margin_bytes, qr_decision *decision)
{
    if (!b || !decision || queue >= b->cfg.n_queues)
        return QR_EINVAL;
    qr_buffer_state st = {.size_bytes = b->cfg.size_bytes,
                          .alpha = b->cfg.alpha,
                          .total_bytes = b->total,
                          .queue_bytes = b->queue[queue],
                          .policy = b->cfg.policy,
                          .port_bytes = b->cfg.port_bytes};
    *decision = qr_drop_decide(&st, bytes, mode, tagged, margin_bytes);
    if (*decision == QR_ADMIT) {
        b->queue[queue] += bytes;
        b->total += bytes;
    }
    return QR_OK;
}

int qr_buffer_release(qr_buffer *b, uint32_t queue, uint64_t bytes)
{
    if (!b || queue >= b->cfg.n_queues)
        return QR_EINVAL;
    if (b->queue[queue] < bytes)
        return QR_ESTATE;
    b->queue[queue] -= bytes;
    b->total -= bytes;
    return QR_OK;
}

uint64_t qr_buffer_total(const qr_buffer *b)
{
    return b->total;
}

uint64_t qr_buffer_queue(const qr_buffer *b, uint32_t queue)
{
    return queue < b->cfg.n_queues ? b->queue[queue] : 0;
}

int64_t qr_buffer_threshold(const qr_buffer *b)
{
    qr_buffer_state st = {.size_bytes = b->cfg.size_bytes,
                          .alpha = b->cfg.alpha,
                          .total_bytes = b->total,
                          .policy = b->cfg.policy,
                          .port_bytes = b->cfg.port_bytes};
    return qr_buffer_state_threshold(&st);
}

uint32_t qr_buffer_queues(const qr_buffer *b)
{
    return b->cfg.n_queues;
}
