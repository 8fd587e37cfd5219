/* Drop detection from per-direction IP ID gaps. */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/lossdet.h"
#include "qreplay/units.h"

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

qr_row_detected qr_detected_row(uint32_t receiver, uint32_t dir, uint64_t seq, int tail)
{
    qr_row_detected r = {receiver,        dir, seq, qr_packet_id(dir, seq), (uint16_t)seq,
                         (uint8_t) !!tail};
    return r;
}

int qr_lossdet_tails(const qr_lossdet *d, const qr_flow_table *ft, const uint64_t *sent,
                     size_t n_dirs, qr_row_detected **rows, size_t *n_rows, char *errbuf)
{
    size_t n = 0, cap = 0;
    qr_row_detected *out = NULL;
    for (size_t dir = 0; dir < n_dirs; dir++) {
        uint64_t first, k;
        if (qr_lossdet_next(d, (uint32_t)dir) >= sent[dir])
            continue;
        if (qr_lossdet_tail(d, (uint32_t)dir, sent[dir], &first, &k) != QR_OK) {
            free(out);
            return qri_err(errbuf, QR_ESTATE,
                           "direction %zu: the receiver saw more packets than were sent", dir);
        }
        if (n + k > cap) {
            size_t c2 = cap ? 2 * cap : 64;
            while (c2 < n + k)
                c2 *= 2;
            qr_row_detected *v = realloc(out, c2 * sizeof *v);
            if (!v) {
                free(out);
                return qri_err(errbuf, QR_ENOMEM, "out of memory");
            }
            out = v;
            cap = c2;
        }
        uint32_t src = qr_flow_table_dir_src(ft, (uint32_t)dir);
        for (uint64_t s = first; s < first + k; s++)
            out[n++] = qr_detected_row(src, (uint32_t)dir, s, 1);
    }
    *rows = out;
    *n_rows = n;
    return QR_OK;
}

int64_t qr_max_transit_ns(const qr_topology *t, uint64_t rate_bps, int64_t delay_ns,
                          uint64_t buffer_bytes)
{
    double switches = (double)qr_topology_max_hops(t);
    double bit_ns = 1e9 / (double)rate_bps;
    double ns = (switches + 1) * ((double)delay_ns + QR_MTU_BYTES * 8 * bit_ns) +
                switches * ((double)buffer_bytes * 8 * bit_ns);
    return (int64_t)ns + 1;
}

int64_t qr_tail_cutoff_ns(int64_t stop_ns, int64_t max_transit_ns)
{
    return stop_ns - max_transit_ns;
}
