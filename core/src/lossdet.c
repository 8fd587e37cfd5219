/* Drop detection from per-direction IP ID gaps. */
#include <stdlib.h>

#include "internal.h"
#include "qreplay/lossdet.h"

struct dirstate {
    uint64_t next;     /* sequence number expected next */
    uint64_t received; /* packets seen */
};

struct qr_lossdet {
    size_t n;
    struct dirstate *dirs;
};

int qr_lossdet_create(qr_lossdet **out, size_t n_dirs)
{
    if (!out)
        return QR_EINVAL;
    qr_lossdet *d = calloc(1, sizeof *d);
    if (!d)
        return QR_ENOMEM;
    d->n = n_dirs;
    d->dirs = calloc(n_dirs ? n_dirs : 1, sizeof *d->dirs);
    if (!d->dirs) {
        free(d);
        return QR_ENOMEM;
    }
    *out = d;
    return QR_OK;
}

void qr_lossdet_destroy(qr_lossdet *d)
{
    if (!d)
        return;
    free(d->dirs);
    free(d);
}

int qr_lossdet_observe(qr_lossdet *d, uint32_t dir, uint16_t ip_id, uint64_t *seq,
                       uint64_t *first_missing, uint64_t *n_missing)
{
    if (!d || dir >= d->n)
        return QR_EINVAL;
    struct dirstate *s = &d->dirs[dir];
    /* the smallest sequence number >= next whose low 16 bits are ip_id */
    uint64_t gap = (uint16_t)(ip_id - (uint16_t)s->next);
    uint64_t q = s->next + gap;
    if (seq)
        *seq = q;
    if (first_missing)
        *first_missing = s->next;
    if (n_missing)
        *n_missing = gap;
    s->next = q + 1;
    s->received++;
    return QR_OK;
}

uint64_t qr_lossdet_received(const qr_lossdet *d, uint32_t dir)
{
    return d && dir < d->n ? d->dirs[dir].received : 0;
}

uint64_t qr_lossdet_next(const qr_lossdet *d, uint32_t dir)
{
    return d && dir < d->n ? d->dirs[dir].next : 0;
}

int qr_lossdet_tail(const qr_lossdet *d, uint32_t dir, uint64_t sent, uint64_t *first_missing,
                    uint64_t *n_missing)
{
    if (!d || dir >= d->n)
        return QR_EINVAL;
    const struct dirstate *s = &d->dirs[dir];
    if (sent < s->next)
        return QR_ESTATE;
    if (first_missing)
        *first_missing = s->next;
    if (n_missing)
        *n_missing = sent - s->next;
    return QR_OK;
}
