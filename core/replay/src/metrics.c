/* qdiff and drop error, exact and streaming. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/flowtable.h"
#include "qreplay/metrics.h"
#include "qreplay/units.h"

static int check_sorted(const qr_flow_bytes *f, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (f[i].flow <= f[i - 1].flow)
            return QR_EORDER;
    return QR_OK;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

int qr_qdiff(const qr_flow_bytes *run, size_t n_run, const qr_flow_bytes *rep, size_t n_rep,
             uint64_t *qdiff_bytes, uint64_t *qdiff_sym_bytes)
{
    if ((!run && n_run) || (!rep && n_rep))
        return QR_EINVAL;
    if (check_sorted(run, n_run) || check_sorted(rep, n_rep))
        return QR_EORDER;
    uint64_t d = 0, sym = 0;
    size_t i = 0, j = 0;
    while (i < n_run || j < n_rep) {
        if (j == n_rep || (i < n_run && run[i].flow < rep[j].flow)) {
            d += run[i].bytes; /* only in the runtime's queue */
            sym += run[i].bytes;
            i++;
        } else if (i == n_run || rep[j].flow < run[i].flow) {
            sym += rep[j].bytes; /* only in the replay's queue */
            j++;
        } else {
            uint64_t x = absdiff(run[i].bytes, rep[j].bytes);
            d += x;
            sym += x;
            i++;
            j++;
        }
    }
    if (qdiff_bytes)
        *qdiff_bytes = d;
    if (qdiff_sym_bytes)
        *qdiff_sym_bytes = sym;
    return QR_OK;
}

/* Streaming qdiff. */
struct pending {
    qr_run run;
    int64_t time_ns;
    size_t n;
    qr_flow_bytes flows[];
};

/* Running signed queue-length difference (qr_qlen_diff). */
struct qlen_acc {
    uint64_t count, longer, shorter;
    double sum_bytes;
};

static void qlen_add(struct qlen_acc *a, int64_t d)
{
    a->count++;
    a->longer += d > 0;
    a->shorter += d < 0;
    a->sum_bytes += (double)d;
}

static void qlen_get(const struct qlen_acc *a, qr_qlen_diff *out)
{
    *out = (qr_qlen_diff){a->count, a->longer, a->count - a->longer - a->shorter, a->shorter,
                          a->count ? a->sum_bytes / (double)a->count / QR_MTU_BYTES : 0.0};
}

/* Total bytes of a queue content (flow bytes are below 2^40 each, so the sum fits). */
static int64_t content_bytes(const qr_flow_bytes *f, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += f[i].bytes;
    return s > INT64_MAX ? INT64_MAX : (int64_t)s;
}

struct qstat {
    qr_location loc;
    qr_hist *h, *hs;
    struct qlen_acc len;
};

struct qr_qdiff_stream {
    qri_map pending; /* (packet, queue) -> struct pending */
    uint64_t pending_count[2];
    qri_map queue_index; /* (queue, 0) -> index + 1 into qs */
    struct qstat *qs;
    size_t n_qs, cap_qs;
    qr_hist *h, *hs;
    struct qlen_acc len;
};

static uint64_t queue_key(qr_location q)
{
    return qr_queue_key(q.sw, q.port);
}

int qr_qdiff_stream_create(qr_qdiff_stream **out)
{
    qr_qdiff_stream *m = calloc(1, sizeof *m);
    if (!m)
        return QR_ENOMEM;
    if (qri_map_init(&m->pending) || qri_map_init(&m->queue_index) || qr_hist_create(&m->h) ||
        qr_hist_create(&m->hs)) {
        qr_qdiff_stream_destroy(m);
        return QR_ENOMEM;
    }
    *out = m;
    return QR_OK;
}

static void free_value(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2, (void)ctx;
    free(value);
}

void qr_qdiff_stream_destroy(qr_qdiff_stream *m)
{
    if (!m)
        return;
    if (m->pending.buckets)
        qri_map_foreach(&m->pending, free_value, NULL);
    qri_map_free(&m->pending);
    qri_map_free(&m->queue_index);
    for (size_t i = 0; i < m->n_qs; i++) {
        qr_hist_destroy(m->qs[i].h);
        qr_hist_destroy(m->qs[i].hs);
    }
    free(m->qs);
    qr_hist_destroy(m->h);
    qr_hist_destroy(m->hs);
    free(m);
}

static struct qstat *queue_stat(qr_qdiff_stream *m, qr_location q)
{
    uintptr_t idx = (uintptr_t)qri_map_get(&m->queue_index, queue_key(q), 0);
    if (idx)
        return &m->qs[idx - 1];
    if (m->n_qs == m->cap_qs) {
        size_t cap = m->cap_qs ? 2 * m->cap_qs : 16;
        struct qstat *qs = realloc(m->qs, cap * sizeof *qs);
        if (!qs)
            return NULL;
        m->qs = qs;
        m->cap_qs = cap;
    }
    struct qstat *s = &m->qs[m->n_qs];
    *s = (struct qstat){.loc = q};
    if (qr_hist_create(&s->h) || qr_hist_create(&s->hs)) {
        qr_hist_destroy(s->h);
        return NULL;
    }
    if (qri_map_put(&m->queue_index, queue_key(q), 0, (void *)(uintptr_t)(m->n_qs + 1))) {
        qr_hist_destroy(s->h);
        qr_hist_destroy(s->hs);
        return NULL;
    }
    m->n_qs++;
    return s;
}

int qr_qdiff_stream_add(qr_qdiff_stream *m, qr_run run, const qr_snapshot *snap, qr_qdiff_row *row,
                        int *matched)
{
    if (!m || !snap || !row || !matched || (run != QR_RUN_RUNTIME && run != QR_RUN_REPLAY) ||
        (!snap->flows && snap->n_flows))
        return QR_EINVAL;
    *matched = 0;
    if (check_sorted(snap->flows, snap->n_flows))
        return QR_EORDER;
    uint64_t qk = queue_key(snap->queue);
    struct pending *p = qri_map_get(&m->pending, snap->packet, qk);
    if (p && p->run == run)
        return QR_EDUP;
    if (!p) {
        p = malloc(sizeof *p + snap->n_flows * sizeof p->flows[0]);
        if (!p)
            return QR_ENOMEM;
        p->run = run;
        p->time_ns = snap->time_ns;
        p->n = snap->n_flows;
        if (snap->n_flows)
            memcpy(p->flows, snap->flows, snap->n_flows * sizeof p->flows[0]);
        if (qri_map_put(&m->pending, snap->packet, qk, p)) {
            free(p);
            return QR_ENOMEM;
        }
        m->pending_count[run]++;
        return QR_OK;
    }
    struct qstat *qs = queue_stat(m, snap->queue);
    if (!qs)
        return QR_ENOMEM;
    const qr_flow_bytes *fr = run == QR_RUN_RUNTIME ? snap->flows : p->flows;
    size_t nr = run == QR_RUN_RUNTIME ? snap->n_flows : p->n;
    const qr_flow_bytes *fp = run == QR_RUN_RUNTIME ? p->flows : snap->flows;
    size_t np = run == QR_RUN_RUNTIME ? p->n : snap->n_flows;
    row->packet = snap->packet;
    row->queue = snap->queue;
    row->time_run_ns = run == QR_RUN_RUNTIME ? snap->time_ns : p->time_ns;
    row->time_rep_ns = run == QR_RUN_RUNTIME ? p->time_ns : snap->time_ns;
    qr_qdiff(fr, nr, fp, np, &row->qdiff_bytes, &row->qdiff_sym_bytes);
    row->qlen_diff_bytes = content_bytes(fp, np) - content_bytes(fr, nr);
    qlen_add(&m->len, row->qlen_diff_bytes);
    qlen_add(&qs->len, row->qlen_diff_bytes);
    if (qr_hist_add(m->h, row->qdiff_bytes) || qr_hist_add(m->hs, row->qdiff_sym_bytes) ||
        qr_hist_add(qs->h, row->qdiff_bytes) || qr_hist_add(qs->hs, row->qdiff_sym_bytes))
        return QR_ENOMEM;
    m->pending_count[p->run]--;
    free(qri_map_remove(&m->pending, snap->packet, qk));
    *matched = 1;
    return QR_OK;
}

void qr_qdiff_stream_pending(const qr_qdiff_stream *m, uint64_t *runtime_only,
                             uint64_t *replay_only)
{
    if (runtime_only)
        *runtime_only = m->pending_count[QR_RUN_RUNTIME];
    if (replay_only)
        *replay_only = m->pending_count[QR_RUN_REPLAY];
}

void qr_qdiff_stream_summary(const qr_qdiff_stream *m, qr_summary *qdiff, qr_summary *qdiff_sym)
{
    if (qdiff)
        qr_hist_summary(m->h, 1.0 / QR_MTU_BYTES, qdiff);
    if (qdiff_sym)
        qr_hist_summary(m->hs, 1.0 / QR_MTU_BYTES, qdiff_sym);
}

void qr_qdiff_stream_qlen(const qr_qdiff_stream *m, qr_qlen_diff *out)
{
    if (out)
        qlen_get(&m->len, out);
}

size_t qr_qdiff_stream_queues(const qr_qdiff_stream *m)
{
    return m->n_qs;
}

int qr_qdiff_stream_queue(const qr_qdiff_stream *m, size_t i, qr_location *queue, qr_summary *qdiff,
                          qr_summary *qdiff_sym)
{
    if (!m || i >= m->n_qs)
        return QR_EINVAL;
    if (queue)
        *queue = m->qs[i].loc;
    if (qdiff)
        qr_hist_summary(m->qs[i].h, 1.0 / QR_MTU_BYTES, qdiff);
    if (qdiff_sym)
        qr_hist_summary(m->qs[i].hs, 1.0 / QR_MTU_BYTES, qdiff_sym);
    return QR_OK;
}

int qr_qdiff_match(const qr_snapshot *run, size_t n_run, const qr_snapshot *rep, size_t n_rep,
                   qr_qdiff_row **rows, size_t *n_rows)
{
    if (!rows || !n_rows || (!run && n_run) || (!rep && n_rep))
        return QR_EINVAL;
    *rows = NULL;
    *n_rows = 0;
    qr_qdiff_stream *m;
    int rc = qr_qdiff_stream_create(&m);
    if (rc)
        return rc;
    qr_qdiff_row *out = malloc((n_rep ? n_rep : 1) * sizeof *out);
    size_t n = 0;
    if (!out)
        rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < n_run; i++) {
        int matched;
        rc = qr_qdiff_stream_add(m, QR_RUN_RUNTIME, &run[i], &out[0], &matched);
    }
    for (size_t i = 0; !rc && i < n_rep; i++) {
        int matched;
        rc = qr_qdiff_stream_add(m, QR_RUN_REPLAY, &rep[i], &out[n], &matched);
        n += matched;
    }
    qr_qdiff_stream_destroy(m);
    if (rc) {
        free(out);
        return rc;
    }
    *rows = out;
    *n_rows = n;
    return QR_OK;
}

static int cmp_queue_row(const void *a, const void *b)
{
    const qr_row_queue_summary *x = a, *y = b;
    if (x->sw != y->sw)
        return x->sw < y->sw ? -1 : 1;
    return x->port < y->port ? -1 : x->port > y->port;
}

int qr_qdiff_stream_queue_rows(const qr_qdiff_stream *m, qr_row_queue_summary **rows, size_t *n)
{
    qr_row_queue_summary *out = malloc((m->n_qs ? m->n_qs : 1) * sizeof *out);
    if (!out)
        return QR_ENOMEM;
    for (size_t i = 0; i < m->n_qs; i++) {
        qr_location q;
        qr_summary a, b;
        qr_qlen_diff l;
        qr_qdiff_stream_queue(m, i, &q, &a, &b);
        qlen_get(&m->qs[i].len, &l);
        out[i] = (qr_row_queue_summary){q.sw,
                                        q.port,
                                        a.count,
                                        a.mean,
                                        a.p50,
                                        a.p99,
                                        a.max,
                                        b.mean,
                                        b.p99,
                                        l.mean_mtu,
                                        l.count ? (double)l.longer / (double)l.count : 0.0,
                                        l.count ? (double)l.shorter / (double)l.count : 0.0};
    }
    qsort(out, m->n_qs, sizeof *out, cmp_queue_row);
    *rows = out;
    *n = m->n_qs;
    return QR_OK;
}

void qr_qdiff_rows_free(qr_qdiff_row *rows)
{
    free(rows);
}

struct dropent {
    uint8_t have[2];
    qr_location where[2];
};

struct qr_droperr {
    qri_map drops; /* packet -> struct dropent */
    qr_drop_counts c;
};

int qr_droperr_create(qr_droperr **out)
{
    qr_droperr *d = calloc(1, sizeof *d);
    if (!d || qri_map_init(&d->drops)) {
        free(d);
        return QR_ENOMEM;
    }
    *out = d;
    return QR_OK;
}

void qr_droperr_destroy(qr_droperr *d)
{
    if (!d)
        return;
    qri_map_foreach(&d->drops, free_value, NULL);
    qri_map_free(&d->drops);
    free(d);
}

static int same_location(qr_location a, qr_location b)
{
    return a.sw == b.sw && a.port == b.port;
}

int qr_droperr_add(qr_droperr *d, qr_run run, uint64_t packet, qr_location where)
{
    if (!d || (run != QR_RUN_RUNTIME && run != QR_RUN_REPLAY))
        return QR_EINVAL;
    struct dropent *e = qri_map_get(&d->drops, packet, 0);
    if (e && e->have[run])
        return QR_EDUP;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e || qri_map_put(&d->drops, packet, 0, e)) {
            free(e);
            return QR_ENOMEM;
        }
        d->c.either++;
        /* counted as a one-sided drop until the other run drops it too */
        if (run == QR_RUN_RUNTIME)
            d->c.false_accepts++;
        else
            d->c.false_drops++;
    } else {
        /* the other run dropped it already: no longer one-sided */
        if (run == QR_RUN_RUNTIME)
            d->c.false_drops--;
        else
            d->c.false_accepts--;
        if (!same_location(e->where[!run], where))
            d->c.wrong_locations++;
    }
    e->have[run] = 1;
    e->where[run] = where;
    if (run == QR_RUN_RUNTIME)
        d->c.runtime_drops++;
    else
        d->c.replay_drops++;
    return QR_OK;
}

void qr_droperr_result(const qr_droperr *d, qr_drop_counts *out)
{
    *out = d->c;
    uint64_t bad = out->false_accepts + out->false_drops + out->wrong_locations;
    out->error = out->either ? (double)bad / (double)out->either : 0.0;
}
