/* Two arrival logs side by side: the busiest queue of one, and the runtime's and a replay's
 * arrivals matched by (packet, queue) for qdiff (results.h). */
#include <stdio.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/results.h"

int qr_arrival_log_busiest(const char *path, uint32_t *sw, uint32_t *port, char *errbuf)
{
    qr_arrival_reader *r = NULL;
    qr_queue_counter *c = NULL;
    int rc = qr_arrival_reader_open(&r, path, errbuf);
    if (rc)
        return rc;
    if ((rc = qr_queue_counter_create(&c)) != QR_OK) {
        qr_arrival_reader_close(r);
        return qri_err(errbuf, rc, "out of memory");
    }
    qr_arrival a;
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK)
        if ((rc = qr_queue_counter_add(c, a.sw, a.port)) != QR_OK) {
            qri_err(errbuf, rc, "out of memory");
            break;
        }
    if (rc == QR_END)
        rc = qr_queue_counter_busiest(c, sw, port, NULL);
    qr_queue_counter_destroy(c);
    qr_arrival_reader_close(r);
    return rc;
}

/* An arrival log read one arrival ahead. */
struct cursor {
    qr_arrival_reader *r;
    qr_arrival a;
    int done;
};

static int cursor_next(struct cursor *c, char *errbuf)
{
    int rc = qr_arrival_read(c->r, &c->a, errbuf);
    if (rc == QR_END) {
        c->done = 1;
        return QR_OK;
    }
    return rc;
}

int qr_compare_arrival_logs(const char *runtime_log, const char *replay_log, uint32_t series_sw,
                            uint32_t series_port, qr_qdiff_row_fn on_row, qr_series_fn on_series,
                            void *ctx, qr_qdiff_stream **stream, char *errbuf)
{
    struct cursor a = {0}, b = {0};
    qr_qdiff_stream *qs = NULL;
    int rc;
    *stream = NULL;
    QRI_TRY(qr_arrival_reader_open(&a.r, runtime_log, errbuf));
    QRI_TRY(qr_arrival_reader_open(&b.r, replay_log, errbuf));
    QRI_TRY(cursor_next(&a, errbuf));
    QRI_TRY(cursor_next(&b, errbuf));
    if ((rc = qr_qdiff_stream_create(&qs)) != QR_OK) {
        qri_err(errbuf, rc, "out of memory");
        goto fail;
    }
    while (!a.done || !b.done) {
        int from_run = b.done || (!a.done && a.a.time_ns <= b.a.time_ns);
        struct cursor *c = from_run ? &a : &b;
        const qr_arrival *x = &c->a;
        if (!from_run && on_series && x->sw == series_sw && x->port == series_port) {
            qr_row_queue_series pt = {x->time_ns, x->queue_bytes};
            QRI_TRY(on_series(ctx, &pt));
        }
        qr_snapshot snap = {x->packet, {x->sw, x->port}, x->time_ns, x->flows, x->n_flows};
        qr_qdiff_row row;
        int matched = 0;
        rc = qr_qdiff_stream_add(qs, from_run ? QR_RUN_RUNTIME : QR_RUN_REPLAY, &snap, &row,
                                 &matched);
        if (rc) {
            qri_err(errbuf, rc, "%s: qdiff: %s", replay_log, qr_strerror(rc));
            goto fail;
        }
        if (matched && on_row)
            QRI_TRY(on_row(ctx, &row));
        QRI_TRY(cursor_next(c, errbuf));
    }
    qr_arrival_reader_close(a.r);
    qr_arrival_reader_close(b.r);
    *stream = qs;
    return QR_OK;
fail:
    qr_arrival_reader_close(a.r);
    qr_arrival_reader_close(b.r);
    qr_qdiff_stream_destroy(qs);
    return rc;
}
