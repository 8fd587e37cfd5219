/* Per-queue flow accounting and the binary arrival log. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/flowtable.h"
#include "qreplay/queuelog.h"
#include "qreplay/schema.h"

struct qr_queue_flows {
    qr_flow_bytes *v; /* sorted by flow, bytes > 0 */
    size_t n, cap;
    uint64_t total;
};

int qr_queue_flows_create(qr_queue_flows **out)
{
    qr_queue_flows *q = calloc(1, sizeof *q);
    if (!q)
        return QR_ENOMEM;
    *out = q;
    return QR_OK;
}

void qr_queue_flows_destroy(qr_queue_flows *q)
{
    if (!q)
        return;
    free(q->v);
    free(q);
}

/* Index of flow, or where it would be inserted. */
static size_t find(const qr_queue_flows *q, uint64_t flow)
{
    size_t lo = 0, hi = q->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->v[mid].flow < flow)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int qr_queue_flows_add(qr_queue_flows *q, uint64_t flow, uint64_t bytes)
{
    size_t i = find(q, flow);
    if (i < q->n && q->v[i].flow == flow) {
        q->v[i].bytes += bytes;
    } else {
        if (q->n == q->cap) {
            size_t cap = q->cap ? 2 * q->cap : 8;
            qr_flow_bytes *v = realloc(q->v, cap * sizeof *v);
            if (!v)
                return QR_ENOMEM;
            q->v = v;
            q->cap = cap;
        }
        memmove(q->v + i + 1, q->v + i, (q->n - i) * sizeof *q->v);
        q->v[i] = (qr_flow_bytes){flow, bytes};
        q->n++;
    }
    q->total += bytes;
    return QR_OK;
}

int qr_queue_flows_remove(qr_queue_flows *q, uint64_t flow, uint64_t bytes)
{
    size_t i = find(q, flow);
    if (i == q->n || q->v[i].flow != flow || q->v[i].bytes < bytes)
        return QR_ESTATE;
    q->v[i].bytes -= bytes;
    q->total -= bytes;
    if (q->v[i].bytes == 0) {
        memmove(q->v + i, q->v + i + 1, (q->n - i - 1) * sizeof *q->v);
        q->n--;
    }
    return QR_OK;
}

size_t qr_queue_flows_snapshot(const qr_queue_flows *q, const qr_flow_bytes **flows)
{
    *flows = q->v;
    return q->n;
}

uint64_t qr_queue_flows_total(const qr_queue_flows *q)
{
    return q->total;
}

static const char magic[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '1', '\n'};

/* The fixed head of a record on disk. */
struct head {
    uint64_t packet;
    int64_t time_ns;
    uint32_t sw, port;
    uint32_t bytes;
    uint8_t decision, tagged;
    uint16_t n_flows;
    uint64_t queue_bytes, total_bytes;
    int64_t threshold;
};
_Static_assert(sizeof(struct head) == 56, "arrival record head is 56 bytes");

struct qr_arrival_writer {
    FILE *fp;
    char path[1024];
};

struct qr_arrival_reader {
    FILE *fp;
    char path[1024];
    uint64_t count;
    qr_flow_bytes *flows;
    size_t cap;
};

int qr_arrival_writer_open(qr_arrival_writer **out, const char *path, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    qr_arrival_writer *w = calloc(1, sizeof *w);
    if (!w)
        return QR_ENOMEM;
    snprintf(w->path, sizeof w->path, "%s", path);
    w->fp = fopen(path, "wb");
    if (w->fp)
        setvbuf(w->fp, NULL, _IOFBF, 1 << 20); /* millions of small records */
    if (!w->fp || fwrite(magic, 1, sizeof magic, w->fp) != sizeof magic) {
        int rc = qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
        if (w->fp)
            fclose(w->fp);
        free(w);
        return rc;
    }
    *out = w;
    return QR_OK;
}

int qr_arrival_write(qr_arrival_writer *w, const qr_arrival *a, char *errbuf)
{
    if (!w || !a || (!a->flows && a->n_flows))
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    for (size_t i = 1; i < a->n_flows; i++)
        if (a->flows[i].flow <= a->flows[i - 1].flow)
            return qri_err(errbuf, QR_EORDER, "%s: packet %" PRIu64 ": flows not sorted", w->path,
                           a->packet);
    struct head h = {a->packet,      a->time_ns,     a->sw,       a->port,
                     a->bytes,       a->decision,    a->tagged,   a->n_flows,
                     a->queue_bytes, a->total_bytes, a->threshold};
    if (fwrite(&h, sizeof h, 1, w->fp) != 1 ||
        (a->n_flows && fwrite(a->flows, sizeof *a->flows, a->n_flows, w->fp) != a->n_flows))
        return qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    return QR_OK;
}

int qr_arrival_writer_close(qr_arrival_writer *w, char *errbuf)
{
    if (!w)
        return QR_OK;
    int rc = QR_OK;
    if (fclose(w->fp) != 0)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    free(w);
    return rc;
}

int qr_arrival_reader_open(qr_arrival_reader **out, const char *path, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return qri_err(errbuf, QR_ENOENT, "%s: %s", path, strerror(errno));
    char m[sizeof magic];
    if (fread(m, 1, sizeof m, fp) != sizeof m || memcmp(m, magic, sizeof m) != 0) {
        fclose(fp);
        return qri_err(errbuf, QR_EFORMAT, "%s: not a qreplay arrival log", path);
    }
    qr_arrival_reader *r = calloc(1, sizeof *r);
    if (!r) {
        fclose(fp);
        return QR_ENOMEM;
    }
    r->fp = fp;
    snprintf(r->path, sizeof r->path, "%s", path);
    *out = r;
    return QR_OK;
}

int qr_arrival_read(qr_arrival_reader *r, qr_arrival *a, char *errbuf)
{
    if (!r || !a)
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    struct head h;
    size_t got = fread(&h, 1, sizeof h, r->fp);
    if (got == 0 && feof(r->fp))
        return QR_END;
    if (got != sizeof h)
        return qri_err(errbuf, QR_ETRUNC, "%s: record %" PRIu64 ": file ends inside it", r->path,
                       r->count + 1);
    if (h.decision > QR_DROP_FAULT || h.tagged > 1)
        return qri_err(errbuf, QR_EFORMAT, "%s: record %" PRIu64 ": corrupt", r->path,
                       r->count + 1);
    if (h.n_flows > r->cap) {
        qr_flow_bytes *f = realloc(r->flows, h.n_flows * sizeof *f);
        if (!f)
            return QR_ENOMEM;
        r->flows = f;
        r->cap = h.n_flows;
    }
    if (h.n_flows && fread(r->flows, sizeof *r->flows, h.n_flows, r->fp) != h.n_flows)
        return qri_err(errbuf, QR_ETRUNC, "%s: record %" PRIu64 ": file ends inside it", r->path,
                       r->count + 1);
    *a = (qr_arrival){h.packet, h.time_ns, h.sw,          h.port,        h.bytes,     h.decision,
                      h.tagged, h.n_flows, h.queue_bytes, h.total_bytes, h.threshold, r->flows};
    r->count++;
    return QR_OK;
}

void qr_arrival_reader_close(qr_arrival_reader *r)
{
    if (!r)
        return;
    fclose(r->fp);
    free(r->flows);
    free(r);
}

void qr_drop_row_of(const qr_arrival *a, qr_row_drop *row)
{
    *row = (qr_row_drop){a->packet,      qr_packet_id_dir(a->packet),
                         a->time_ns,     a->sw,
                         a->port,        a->bytes,
                         a->decision,    a->tagged,
                         a->queue_bytes, a->threshold};
}
