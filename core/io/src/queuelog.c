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
#include "qreplay/random.h"
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

static const char magic[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '2', '\n'};
static const char magic_v1[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '1', '\n'};
static const char end_magic[8] = {'Q', 'R', 'A', 'E', 'N', 'D', '2', '\n'};

/* The trailer that closes a log: how many records it holds and the recording they belong to. */
struct trailer {
    char magic[8];
    uint64_t count;
    char recording[32]; /* hex digits, NUL-padded; all NUL: none given */
};
_Static_assert(sizeof(struct trailer) == 48, "arrival log trailer is 48 bytes");

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
    uint64_t count;
    char recording[32];
};

struct qr_arrival_reader {
    FILE *fp;
    char path[1024];
    uint64_t count;
    qr_flow_bytes *flows;
    size_t cap;
    uint64_t pos, data_end; /* the offset read to, and where the trailer starts */
    struct trailer tail;
    char recording[QR_ID_SIZE];
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
    w->count++;
    return QR_OK;
}

int qr_arrival_writer_set_recording(qr_arrival_writer *w, const char *recording_id)
{
    if (!w || !recording_id || strlen(recording_id) > sizeof w->recording)
        return QR_EINVAL;
    memset(w->recording, 0, sizeof w->recording);
    memcpy(w->recording, recording_id, strlen(recording_id));
    return QR_OK;
}

int qr_arrival_writer_close(qr_arrival_writer *w, char *errbuf)
{
    if (!w)
        return QR_OK;
    int rc = QR_OK;
    struct trailer t;
    memset(&t, 0, sizeof t);
    memcpy(t.magic, end_magic, sizeof t.magic);
    t.count = w->count;
    memcpy(t.recording, w->recording, sizeof t.recording);
    if (fwrite(&t, sizeof t, 1, w->fp) != 1)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    if (fclose(w->fp) != 0 && rc == QR_OK)
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
    size_t got = fread(m, 1, sizeof m, fp);
    if (got == sizeof m && memcmp(m, magic_v1, sizeof m) == 0) {
        fclose(fp);
        return qri_err(errbuf, QR_EFORMAT,
                       "%s: an arrival log of an older qreplay (no record count, no recording "
                       "id): run the command that made it again",
                       path);
    }
    if (got != sizeof m || memcmp(m, magic, sizeof m) != 0) {
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
    /* the trailer: without it the log was cut (its writer did not close it) */
    off_t size = fseeko(fp, 0, SEEK_END) == 0 ? ftello(fp) : -1;
    if (size < (off_t)(sizeof magic + sizeof r->tail) ||
        fseeko(fp, size - (off_t)sizeof r->tail, SEEK_SET) != 0 ||
        fread(&r->tail, sizeof r->tail, 1, fp) != 1 ||
        memcmp(r->tail.magic, end_magic, sizeof end_magic) != 0 ||
        fseeko(fp, (off_t)sizeof magic, SEEK_SET) != 0) {
        qr_arrival_reader_close(r);
        return qri_err(errbuf, QR_ETRUNC,
                       "%s: the log ends without its trailer: it was cut (its writer was "
                       "stopped, or the disk filled)",
                       path);
    }
    r->pos = sizeof magic;
    r->data_end = (uint64_t)size - sizeof r->tail;
    memcpy(r->recording, r->tail.recording, sizeof r->tail.recording);
    r->recording[sizeof r->tail.recording] = '\0';
    *out = r;
    return QR_OK;
}

int qr_arrival_read(qr_arrival_reader *r, qr_arrival *a, char *errbuf)
{
    if (!r || !a)
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    struct head h;
    if (r->pos == r->data_end) {
        if (r->count != r->tail.count)
            return qri_err(errbuf, QR_EFORMAT,
                           "%s: %" PRIu64 " records, but its trailer says %" PRIu64
                           ": the log is damaged",
                           r->path, r->count, r->tail.count);
        return QR_END;
    }
    size_t got = r->data_end - r->pos >= sizeof h ? fread(&h, 1, sizeof h, r->fp) : 0;
    if (got != sizeof h)
        return qri_err(errbuf, QR_ETRUNC, "%s: record %" PRIu64 ": the log ends inside it", r->path,
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
    uint64_t need = sizeof h + (uint64_t)h.n_flows * sizeof *r->flows;
    if (r->data_end - r->pos < need ||
        (h.n_flows && fread(r->flows, sizeof *r->flows, h.n_flows, r->fp) != h.n_flows))
        return qri_err(errbuf, QR_ETRUNC, "%s: record %" PRIu64 ": the log ends inside it", r->path,
                       r->count + 1);
    r->pos += need;
    *a = (qr_arrival){h.packet, h.time_ns, h.sw,          h.port,        h.bytes,     h.decision,
                      h.tagged, h.n_flows, h.queue_bytes, h.total_bytes, h.threshold, r->flows};
    r->count++;
    return QR_OK;
}

const char *qr_arrival_reader_recording(const qr_arrival_reader *r)
{
    return r->recording;
}

uint64_t qr_arrival_reader_records(const qr_arrival_reader *r)
{
    return r->tail.count;
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

int qr_arrival_log_check(const char *path, const char *recording_id, const char *fix, char *errbuf)
{
    qr_arrival_reader *r = NULL;
    int rc = qr_arrival_reader_open(&r, path, errbuf);
    if (rc == QR_OK && recording_id && recording_id[0] &&
        strcmp(qr_arrival_reader_recording(r), recording_id))
        rc = qri_err(errbuf, QR_ESTALE,
                     "%s holds the arrivals of %s, not of recording %s beside it: %s", path,
                     qr_arrival_reader_recording(r)[0] ? "another recording" : "an unnamed run",
                     recording_id, fix);
    qr_arrival_reader_close(r);
    return rc;
}
