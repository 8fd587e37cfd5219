/* Per-queue flow accounting and the binary arrival log. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/queuelog.h"
#include "qreplay/random.h"
#include "qreplay/schema.h"
#include "qreplay/txn.h"

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

static const char magic[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '4', '\n'};
static const char magic_v3[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '3', '\n'};
static const char magic_v2[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '2', '\n'};
static const char magic_v1[8] = {'Q', 'R', 'A', 'R', 'R', 'V', '1', '\n'};
static const char end_magic[8] = {'Q', 'R', 'A', 'E', 'N', 'D', '4', '\n'};
static const char end_magic_v3[8] = {'Q', 'R', 'A', 'E', 'N', 'D', '3', '\n'};
static const char end_magic_v2[8] = {'Q', 'R', 'A', 'E', 'N', 'D', '2', '\n'};

/* The trailer that closes a log: how many records it holds, the recording they belong to and the
 * run that wrote them (the fourth format; the second and third end after the recording). */
struct trailer {
    char magic[8];
    uint64_t count;
    char recording[32]; /* hex digits, NUL-padded; all NUL: none given */
    char source[32];    /* "truth", or a replay's id; NUL-padded; all NUL: none given */
};
_Static_assert(sizeof(struct trailer) == 80, "arrival log trailer is 80 bytes");
#define TRAILER_V3 48 /* the trailer of the second and third formats: no source */

/* The fixed head of a record of the second format (read only). */
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

/* The third format (docs/FORMATS.md): blocks of records, each a flag byte and varints, most
 * fields as differences from the state both ends keep (the previous record, and per direction,
 * per queue and per switch the last values seen). */
enum {
    F_DECISION = 0x07,
    F_TAGGED = 0x08,
    F_BYTES_SAME = 0x10,        /* the packet's size is its direction's previous packet's */
    F_QUEUE_IS_SUM = 0x20,      /* queue_bytes is the sum of the flows' bytes */
    F_THRESHOLD_FOLLOWS = 0x40, /* threshold - previous = -(total - previous), per switch */
    F_FLOWS_SAME = 0x80,        /* the queue holds what it held at its previous arrival */
};
#define BLOCK_HEAD 12                 /* uint32 payload bytes, uint32 records, uint32 FNV-1a */
#define BLOCK_TARGET (64u << 10)      /* a block is written when it reaches this */
#define BLOCK_MAX (8u << 20)          /* larger blocks are refused as damaged */
#define RECORD_MAX (64 + 20 * 65536u) /* the most one record can take */

/* An index from a 64-bit key to a dense slot: small keys (below `direct_max`, where the caller
 * allows it) in a flat table, the others by open addressing (slots stored 1-based; 0: empty). */
struct index {
    uint64_t *keys;
    uint32_t *slots;
    size_t mask, n;
    uint32_t *direct;
    size_t direct_cap;
    uint64_t direct_max;
};

static size_t index_hash(uint64_t k, size_t mask)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 29;
    return (size_t)k & mask;
}

/* The slot of key (0-based), adding it as slot n (the caller grows its arrays) if absent: *added
 * says so. `small`: the key may go to the flat table (its key space is the flat table's). Returns 0
 * or QR_ENOMEM. */
static int index_find(struct index *x, uint64_t key, int small, uint32_t *slot, int *added)
{
    if (small && key < x->direct_max) {
        if (key >= x->direct_cap) {
            size_t old = x->direct_cap;
            if (qri_reserve((void **)&x->direct, &x->direct_cap, (size_t)key + 1, sizeof *x->direct,
                            256))
                return QR_ENOMEM;
            memset(x->direct + old, 0, (x->direct_cap - old) * sizeof *x->direct);
        }
        *added = !x->direct[key];
        if (*added)
            x->direct[key] = (uint32_t)++x->n;
        *slot = x->direct[key] - 1;
        return QR_OK;
    }
    if (2 * (x->n + 1) > x->mask + 1 || !x->keys) {
        size_t nm = x->keys ? 2 * (x->mask + 1) - 1 : 255;
        uint64_t *k = calloc(nm + 1, sizeof *k);
        uint32_t *v = calloc(nm + 1, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return QR_ENOMEM;
        }
        for (size_t i = 0; x->keys && i <= x->mask; i++)
            if (x->slots[i]) {
                size_t j = index_hash(x->keys[i], nm);
                while (v[j])
                    j = (j + 1) & nm;
                k[j] = x->keys[i];
                v[j] = x->slots[i];
            }
        free(x->keys);
        free(x->slots);
        x->keys = k;
        x->slots = v;
        x->mask = nm;
    }
    size_t j = index_hash(key, x->mask);
    while (x->slots[j]) {
        if (x->keys[j] == key) {
            *slot = x->slots[j] - 1;
            *added = 0;
            return QR_OK;
        }
        j = (j + 1) & x->mask;
    }
    x->keys[j] = key;
    x->slots[j] = (uint32_t)++x->n;
    *slot = x->slots[j] - 1;
    *added = 1;
    return QR_OK;
}

static void index_free(struct index *x)
{
    free(x->direct);
    free(x->keys);
    free(x->slots);
}

struct dir_state {
    uint32_t seq, bytes;
};
struct queue_state {
    qr_flow_bytes *v;
    size_t n, cap;
    uint64_t sum; /* the reader's: the flows' bytes, kept as they change */
};
struct switch_state {
    uint64_t total;
    uint64_t threshold; /* int64 as its two's complement: differences wrap exactly */
};

/* What writer and reader both keep. */
struct codec {
    uint64_t time; /* the previous record's, as uint64 (wrapping differences) */
    struct index dirs, queues, switches;
    struct dir_state *dir;
    struct queue_state *queue;
    struct switch_state *sw;
    size_t dir_cap, queue_cap, sw_cap;
    qr_flow_bytes *scratch;
    size_t scratch_cap;
};

static void codec_init(struct codec *c)
{
    c->dirs.direct_max = 1u << 22;
    c->queues.direct_max = 1u << 24;
    c->switches.direct_max = 1u << 16;
}

static void codec_free(struct codec *c)
{
    index_free(&c->dirs);
    index_free(&c->queues);
    index_free(&c->switches);
    for (size_t i = 0; i < c->queues.n; i++)
        free(c->queue[i].v);
    free(c->dir);
    free(c->queue);
    free(c->sw);
    free(c->scratch);
}

/* The state of key in x's dense array *array (*cap elements of `size` bytes), zeroed when the key
 * is first seen; NULL when out of memory. */
static void *state_of(struct index *x, uint64_t key, int small, void **array, size_t *cap,
                      size_t size)
{
    uint32_t i;
    int added;
    if (index_find(x, key, small, &i, &added))
        return NULL;
    if (added) {
        if (qri_grow(array, cap, i, size, 64))
            return NULL;
        memset((char *)*array + (size_t)i * size, 0, size);
    }
    return (char *)*array + (size_t)i * size;
}

/* The states of a record's direction, queue and switch (zeroed when first seen). */
static int codec_states(struct codec *c, uint32_t dir, uint32_t sw, uint32_t port,
                        struct dir_state **d, struct queue_state **q, struct switch_state **s)
{
    int small = sw < (1u << 16) && port < 256;
    *d = state_of(&c->dirs, dir, 1, (void **)&c->dir, &c->dir_cap, sizeof **d);
    *q = state_of(&c->queues, small ? (uint64_t)sw << 8 | port : qr_queue_key(sw, port), small,
                  (void **)&c->queue, &c->queue_cap, sizeof **q);
    *s = state_of(&c->switches, sw, 1, (void **)&c->sw, &c->sw_cap, sizeof **s);
    return *d && *q && *s ? QR_OK : QR_ENOMEM;
}

static uint64_t zz(uint64_t d)
{
    return qri_zigzag((int64_t)d);
}

static uint64_t unzz(uint64_t z)
{
    return (uint64_t)qri_unzigzag(z);
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    return qri_varint_put(p, v);
}

/* FNV-1a, 32 bits, of a block's payload. */
static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

struct qr_arrival_writer {
    FILE *fp;
    char path[1024];
    uint64_t count;
    char recording[32], source[32];
    struct codec c;
    uint8_t *block;  /* BLOCK_HEAD bytes of head, then the payload */
    size_t len, cap; /* payload bytes; the buffer's size */
    uint32_t block_records;
};

struct qr_arrival_reader {
    FILE *fp;
    char path[1024];
    int version; /* 2, 3 or 4 (3 and 4 code records alike) */
    uint64_t count;
    qr_flow_bytes *flows; /* the second format's */
    size_t cap;
    uint64_t pos, data_end; /* the offset read to, and where the trailer starts */
    struct trailer tail;
    char recording[QR_ID_SIZE], source[QR_ID_SIZE];
    struct codec c;
    uint8_t *block;
    size_t block_cap, at, len; /* the block read: its payload's size and the offset decoded to */
    uint32_t block_left;       /* records of the block not yet decoded */
    uint64_t block_no;
    int failed; /* the error that stopped the reading (every later read gives it again) */
    char failure[QR_ERRBUF_SIZE];
};

int qr_arrival_writer_open(qr_arrival_writer **out, const char *path, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    qr_arrival_writer *w = calloc(1, sizeof *w);
    if (!w)
        return QR_ENOMEM;
    w->cap = BLOCK_HEAD + BLOCK_TARGET + RECORD_MAX;
    w->block = malloc(w->cap);
    if (!w->block) {
        free(w);
        return QR_ENOMEM;
    }
    codec_init(&w->c);
    snprintf(w->path, sizeof w->path, "%s", path);
    w->fp = fopen(path, "wb");
    if (w->fp)
        setvbuf(w->fp, NULL, _IOFBF, 1 << 20);
    if (!w->fp || fwrite(magic, 1, sizeof magic, w->fp) != sizeof magic) {
        int rc = qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
        if (w->fp)
            fclose(w->fp);
        free(w->block);
        free(w);
        return rc;
    }
    *out = w;
    return QR_OK;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int flush_block(qr_arrival_writer *w, char *errbuf)
{
    if (!w->block_records)
        return QR_OK;
    put_u32(w->block, (uint32_t)w->len);
    put_u32(w->block + 4, w->block_records);
    put_u32(w->block + 8, fnv1a(w->block + BLOCK_HEAD, w->len));
    if (fwrite(w->block, 1, BLOCK_HEAD + w->len, w->fp) != BLOCK_HEAD + w->len)
        return qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    w->len = 0;
    w->block_records = 0;
    return QR_OK;
}

int qr_arrival_write(qr_arrival_writer *w, const qr_arrival *a, char *errbuf)
{
    if (!w || !a || (!a->flows && a->n_flows))
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    if (a->decision > QR_DROP_FAULT || a->tagged > 1)
        return qri_err(errbuf, QR_EINVAL, "%s: packet %" PRIu64 ": decision %u, tagged %u", w->path,
                       a->packet, a->decision, a->tagged);
    uint64_t sum = 0;
    for (size_t i = 0; i < a->n_flows; i++) {
        if (i && a->flows[i].flow <= a->flows[i - 1].flow)
            return qri_err(errbuf, QR_EORDER, "%s: packet %" PRIu64 ": flows not sorted", w->path,
                           a->packet);
        sum += a->flows[i].bytes;
    }
    struct codec *c = &w->c;
    uint32_t dir = qr_packet_id_dir(a->packet), seq = qr_packet_id_seq(a->packet);
    struct dir_state *d;
    struct queue_state *q;
    struct switch_state *s;
    if (codec_states(c, dir, a->sw, a->port, &d, &q, &s))
        return QR_ENOMEM;
    /* the queue's change: old and new merged, by flow */
    int same = q->n == a->n_flows &&
               (!a->n_flows || !memcmp(q->v, a->flows, a->n_flows * sizeof *a->flows));
    uint8_t flags = (uint8_t)(a->decision | (a->tagged ? F_TAGGED : 0));
    if (a->bytes == d->bytes)
        flags |= F_BYTES_SAME;
    if (a->queue_bytes == sum)
        flags |= F_QUEUE_IS_SUM;
    uint64_t dt = a->total_bytes - s->total, dthr = (uint64_t)a->threshold - s->threshold;
    if (dthr == (uint64_t)0 - dt)
        flags |= F_THRESHOLD_FOLLOWS;
    if (same)
        flags |= F_FLOWS_SAME;
    uint8_t *p = w->block + BLOCK_HEAD + w->len, *p0 = p;
    *p++ = flags;
    p = put_varint(p, zz((uint64_t)a->time_ns - c->time));
    p = put_varint(p, dir);
    p = put_varint(p, zz((uint64_t)seq - d->seq));
    p = put_varint(p, a->sw);
    p = put_varint(p, a->port);
    if (!(flags & F_BYTES_SAME))
        p = put_varint(p, a->bytes);
    p = put_varint(p, zz(dt));
    if (!(flags & F_THRESHOLD_FOLLOWS))
        p = put_varint(p, zz(dthr));
    if (!same) {
        /* count, then (gap to the previous changed flow, new bytes + 1 or 0: gone) */
        size_t i = 0, j = 0, m = 0;
        uint8_t *count_at = p;
        p += 3; /* room for the count's varint (m < 2^21) */
        uint64_t prev = 0;
        int first = 1;
        while (i < q->n || j < a->n_flows) {
            uint64_t flow, v;
            if (j == a->n_flows || (i < q->n && q->v[i].flow < a->flows[j].flow)) {
                flow = q->v[i++].flow, v = 0;
            } else if (i == q->n || a->flows[j].flow < q->v[i].flow) {
                flow = a->flows[j].flow, v = a->flows[j++].bytes + 1;
            } else {
                int changed = q->v[i].bytes != a->flows[j].bytes;
                flow = a->flows[j].flow, v = a->flows[j++].bytes + 1, i++;
                if (!changed)
                    continue;
            }
            p = put_varint(p, first ? flow : flow - prev - 1);
            p = put_varint(p, v);
            prev = flow;
            first = 0;
            m++;
        }
        /* the count goes first: move the list up to its varint's size (1 byte below 128) */
        uint8_t cv[3], *ce = put_varint(cv, m);
        size_t cl = (size_t)(ce - cv), list = (size_t)(p - count_at - 3);
        memmove(count_at + cl, count_at + 3, list);
        memcpy(count_at, cv, cl);
        p = count_at + cl + list;
        if (qri_reserve((void **)&q->v, &q->cap, a->n_flows, sizeof *q->v, 8))
            return QR_ENOMEM;
        if (a->n_flows)
            memcpy(q->v, a->flows, a->n_flows * sizeof *q->v);
        q->n = a->n_flows;
    }
    if (!(flags & F_QUEUE_IS_SUM))
        p = put_varint(p, zz(a->queue_bytes - sum));
    w->len += (size_t)(p - p0);
    w->block_records++;
    c->time = (uint64_t)a->time_ns;
    d->seq = seq;
    d->bytes = a->bytes;
    s->total = a->total_bytes;
    s->threshold = (uint64_t)a->threshold;
    w->count++;
    if (w->len >= BLOCK_TARGET)
        return flush_block(w, errbuf);
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

int qr_arrival_writer_set_source(qr_arrival_writer *w, const char *source)
{
    if (!w || !source || strlen(source) > sizeof w->source)
        return QR_EINVAL;
    memset(w->source, 0, sizeof w->source);
    memcpy(w->source, source, strlen(source));
    return QR_OK;
}

int qr_arrival_log_stamp_source(const char *path, const char *source, char *errbuf)
{
    struct trailer t;
    if (!source || strlen(source) > sizeof t.source)
        return qri_err(errbuf, QR_EINVAL, "arrivals: a source has at most 32 characters");
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    int rc = QR_OK;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)(sizeof magic + sizeof t) ||
        pread(fd, &t, sizeof t, st.st_size - (off_t)sizeof t) != (ssize_t)sizeof t ||
        memcmp(t.magic, end_magic, sizeof end_magic) != 0)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not a whole arrival log of the fourth format", path);
    if (!rc) {
        memset(t.source, 0, sizeof t.source);
        memcpy(t.source, source, strlen(source));
        if (pwrite(fd, &t, sizeof t, st.st_size - (off_t)sizeof t) != (ssize_t)sizeof t)
            rc = qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
    }
    if (close(fd) != 0 && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
    return rc;
}

int qr_arrival_writer_close(qr_arrival_writer *w, char *errbuf)
{
    if (!w)
        return QR_OK;
    int rc = flush_block(w, errbuf);
    struct trailer t;
    memset(&t, 0, sizeof t);
    memcpy(t.magic, end_magic, sizeof t.magic);
    t.count = w->count;
    memcpy(t.recording, w->recording, sizeof t.recording);
    memcpy(t.source, w->source, sizeof t.source);
    if (rc == QR_OK && fwrite(&t, sizeof t, 1, w->fp) != 1)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    if (fclose(w->fp) != 0 && rc == QR_OK)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    codec_free(&w->c);
    free(w->block);
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
    int version = got != sizeof m                  ? 0
                  : !memcmp(m, magic, sizeof m)    ? 4
                  : !memcmp(m, magic_v3, sizeof m) ? 3
                  : !memcmp(m, magic_v2, sizeof m) ? 2
                                                   : 0;
    if (!version) {
        fclose(fp);
        return qri_err(errbuf, QR_EFORMAT, "%s: not a qreplay arrival log", path);
    }
    qr_arrival_reader *r = calloc(1, sizeof *r);
    if (!r) {
        fclose(fp);
        return QR_ENOMEM;
    }
    r->fp = fp;
    r->version = version;
    codec_init(&r->c);
    setvbuf(fp, NULL, _IOFBF, 1 << 20);
    snprintf(r->path, sizeof r->path, "%s", path);
    /* the trailer: without it the log was cut (its writer did not close it) */
    off_t size = fseeko(fp, 0, SEEK_END) == 0 ? ftello(fp) : -1;
    size_t tail = version == 4 ? sizeof r->tail : TRAILER_V3;
    const char *end = version == 4 ? end_magic : version == 3 ? end_magic_v3 : end_magic_v2;
    if (size < (off_t)(sizeof magic + tail) || fseeko(fp, size - (off_t)tail, SEEK_SET) != 0 ||
        fread(&r->tail, tail, 1, fp) != 1 || memcmp(r->tail.magic, end, sizeof end_magic) != 0 ||
        fseeko(fp, (off_t)sizeof magic, SEEK_SET) != 0) {
        qr_arrival_reader_close(r);
        return qri_err(errbuf, QR_ETRUNC,
                       "%s: the log ends without its trailer: it was cut (its writer was "
                       "stopped, or the disk filled)",
                       path);
    }
    r->pos = sizeof magic;
    r->data_end = (uint64_t)size - tail;
    memcpy(r->recording, r->tail.recording, sizeof r->tail.recording);
    r->recording[sizeof r->tail.recording] = '\0';
    if (version == 4)
        memcpy(r->source, r->tail.source, sizeof r->tail.source);
    r->source[sizeof r->tail.source] = '\0';
    *out = r;
    return QR_OK;
}

static int read_v2(qr_arrival_reader *r, qr_arrival *a, char *errbuf)
{
    struct head h;
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

/* The next block into r->block. */
static int read_block(qr_arrival_reader *r, char *errbuf)
{
    uint8_t h[BLOCK_HEAD];
    r->block_no++;
    if (r->data_end - r->pos < BLOCK_HEAD || fread(h, 1, BLOCK_HEAD, r->fp) != BLOCK_HEAD)
        return qri_err(errbuf, QR_ETRUNC,
                       "%s: block %" PRIu64 " (after record %" PRIu64 "): the log ends inside it",
                       r->path, r->block_no, r->count);
    uint32_t len = get_u32(h), n = get_u32(h + 4), sum = get_u32(h + 8);
    if (len > BLOCK_MAX || n == 0 || n > len)
        return qri_err(errbuf, QR_EFORMAT,
                       "%s: block %" PRIu64 " (after record %" PRIu64 "): corrupt head (%" PRIu32
                       " bytes, %" PRIu32 " records)",
                       r->path, r->block_no, r->count, len, n);
    if (r->data_end - r->pos - BLOCK_HEAD < len)
        return qri_err(errbuf, QR_ETRUNC,
                       "%s: block %" PRIu64 " (after record %" PRIu64 "): the log ends inside it",
                       r->path, r->block_no, r->count);
    if (qri_reserve((void **)&r->block, &r->block_cap, len, 1, 1 << 16))
        return QR_ENOMEM;
    if (fread(r->block, 1, len, r->fp) != len)
        return qri_err(errbuf, QR_EIO, "%s: %s", r->path, strerror(errno));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION /* let the fuzzer past the checksum */
    if (fnv1a(r->block, len) != sum)
        return qri_err(errbuf, QR_EFORMAT,
                       "%s: block %" PRIu64 " (records %" PRIu64 " to %" PRIu64
                       "): its checksum does not match: the log is damaged",
                       r->path, r->block_no, r->count + 1, r->count + n);
#else
    (void)sum;
#endif
    r->pos += BLOCK_HEAD + (uint64_t)len;
    r->len = len;
    r->at = 0;
    r->block_left = n;
    return QR_OK;
}

/* A varint of the block at r->at; -1 past the block's end or beyond 64 bits. */
static inline int get_varint(qr_arrival_reader *r, uint64_t *v)
{
    const uint8_t *p = r->block + r->at;
    if (qri_varint_get(&p, r->block + r->len, v))
        return -1;
    r->at = (size_t)(p - r->block);
    return 0;
}

static int corrupt(qr_arrival_reader *r, char *errbuf, const char *what)
{
    return qri_err(errbuf, QR_EFORMAT, "%s: record %" PRIu64 " (block %" PRIu64 "): %s", r->path,
                   r->count + 1, r->block_no, what);
}

/* Apply a record's change list to its queue. */
static int read_flows(qr_arrival_reader *r, struct queue_state *q, char *errbuf)
{
    struct codec *c = &r->c;
    uint64_t m;
    if (get_varint(r, &m))
        return corrupt(r, errbuf, "cut inside");
    if (m > q->n + 65535)
        return corrupt(r, errbuf, "more flow changes than flows");
    if (qri_reserve((void **)&c->scratch, &c->scratch_cap, q->n + m, sizeof *c->scratch, 64))
        return QR_ENOMEM;
    size_t i = 0, n = 0;
    uint64_t prev = 0, sum = q->sum;
    for (uint64_t k = 0; k < m; k++) {
        uint64_t gap, v;
        if (get_varint(r, &gap) || get_varint(r, &v))
            return corrupt(r, errbuf, "cut inside");
        uint64_t flow = k ? prev + 1 + gap : gap;
        if (k && flow <= prev)
            return corrupt(r, errbuf, "flow ids out of order");
        prev = flow;
        while (i < q->n && q->v[i].flow < flow)
            c->scratch[n++] = q->v[i++];
        int present = i < q->n && q->v[i].flow == flow;
        if (present)
            sum -= q->v[i++].bytes;
        else if (v == 0)
            return corrupt(r, errbuf, "a flow leaves a queue it was not in");
        if (v) {
            c->scratch[n++] = (qr_flow_bytes){flow, v - 1};
            sum += v - 1;
        }
    }
    while (i < q->n)
        c->scratch[n++] = q->v[i++];
    if (n > 65535)
        return corrupt(r, errbuf, "more than 65535 flows in a queue");
    if (qri_reserve((void **)&q->v, &q->cap, n, sizeof *q->v, 8))
        return QR_ENOMEM;
    if (n)
        memcpy(q->v, c->scratch, n * sizeof *q->v);
    q->n = n;
    q->sum = sum;
    return QR_OK;
}

static int read_v3(qr_arrival_reader *r, qr_arrival *a, char *errbuf)
{
    if (!r->block_left) {
        int rc = read_block(r, errbuf);
        if (rc)
            return rc;
    }
    struct codec *c = &r->c;
    if (r->at >= r->len)
        return corrupt(r, errbuf, "its block ends before it");
    uint8_t flags = r->block[r->at++];
    uint64_t dtime, dir, dseq, sw, port, bytes = 0, dtotal, dthr = 0, dq = 0;
    if (get_varint(r, &dtime) || get_varint(r, &dir) || get_varint(r, &dseq) ||
        get_varint(r, &sw) || get_varint(r, &port) ||
        (!(flags & F_BYTES_SAME) && get_varint(r, &bytes)) || get_varint(r, &dtotal) ||
        (!(flags & F_THRESHOLD_FOLLOWS) && get_varint(r, &dthr)))
        return corrupt(r, errbuf, "cut inside");
    if ((flags & F_DECISION) > QR_DROP_FAULT || dir > UINT32_MAX || sw > UINT32_MAX ||
        port > UINT32_MAX || bytes > UINT32_MAX)
        return corrupt(r, errbuf, "a field out of range");
    struct dir_state *d;
    struct queue_state *q;
    struct switch_state *s;
    if (codec_states(c, (uint32_t)dir, (uint32_t)sw, (uint32_t)port, &d, &q, &s))
        return QR_ENOMEM;
    uint64_t seq = d->seq + unzz(dseq);
    if (seq > UINT32_MAX)
        return corrupt(r, errbuf, "a packet number out of range");
    if (!(flags & F_FLOWS_SAME)) {
        int rc = read_flows(r, q, errbuf);
        if (rc)
            return rc;
    }
    if (!(flags & F_QUEUE_IS_SUM) && get_varint(r, &dq))
        return corrupt(r, errbuf, "cut inside");
    uint64_t total = s->total + unzz(dtotal);
    uint64_t thr =
        flags & F_THRESHOLD_FOLLOWS ? s->threshold - unzz(dtotal) : s->threshold + unzz(dthr);
    c->time += unzz(dtime);
    d->seq = (uint32_t)seq;
    if (!(flags & F_BYTES_SAME))
        d->bytes = (uint32_t)bytes;
    s->total = total;
    s->threshold = thr;
    *a = (qr_arrival){qr_packet_id((uint32_t)dir, seq),
                      (int64_t)c->time,
                      (uint32_t)sw,
                      (uint32_t)port,
                      d->bytes,
                      (uint8_t)(flags & F_DECISION),
                      (uint8_t)(flags & F_TAGGED ? 1 : 0),
                      (uint16_t)q->n,
                      q->sum + unzz(dq),
                      total,
                      (int64_t)thr,
                      q->v};
    r->count++;
    if (--r->block_left == 0 && r->at != r->len)
        return corrupt(r, errbuf, "its block holds more bytes than its records");
    return QR_OK;
}

static int read_one(qr_arrival_reader *r, qr_arrival *a, char *errbuf);

int qr_arrival_read(qr_arrival_reader *r, qr_arrival *a, char *errbuf)
{
    if (!r || !a)
        return qri_err(errbuf, QR_EINVAL, "arrivals: NULL argument");
    if (r->failed) {
        if (errbuf)
            snprintf(errbuf, QR_ERRBUF_SIZE, "%s", r->failure);
        return r->failed;
    }
    int rc = read_one(r, a, r->failure);
    if (rc && rc != QR_END) {
        r->failed = rc;
        if (errbuf)
            snprintf(errbuf, QR_ERRBUF_SIZE, "%s", r->failure);
    }
    return rc;
}

static int read_one(qr_arrival_reader *r, qr_arrival *a, char *errbuf)
{
    if (r->pos == r->data_end && (r->version == 2 || !r->block_left)) {
        if (r->count != r->tail.count)
            return qri_err(errbuf, QR_EFORMAT,
                           "%s: %" PRIu64 " records, but its trailer says %" PRIu64
                           ": the log is damaged",
                           r->path, r->count, r->tail.count);
        return QR_END;
    }
    return r->version == 2 ? read_v2(r, a, errbuf) : read_v3(r, a, errbuf);
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
    codec_free(&r->c);
    free(r->block);
    free(r);
}

void qr_mirror_copy(const qr_arrival *a, qr_arrival *copy)
{
    *copy = *a;
    if (copy->decision == QR_DROP_FAULT)
        copy->decision = QR_ADMIT; /* the switch forwarded it; what lost it, it does not know */
    copy->n_flows = 0;
    copy->flows = NULL;
}

int qr_mirror_write_from(const char *log, const char *mirror_path, char *errbuf)
{
    char dir[QR_PATH_MAX], tmp[QR_PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", mirror_path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        int rc = qr_make_dirs(dir, errbuf);
        if (rc)
            return rc;
    }
    snprintf(tmp, sizeof tmp, "%s.partial-%ld", mirror_path, (long)getpid());
    qr_arrival_reader *r = NULL;
    qr_arrival_writer *w = NULL;
    int rc = qr_arrival_reader_open(&r, log, errbuf);
    if (!rc) {
        qr_partial_add(tmp);
        rc = qr_arrival_writer_open(&w, tmp, errbuf);
    }
    if (!rc)
        rc = qr_arrival_writer_set_recording(w, qr_arrival_reader_recording(r));
    if (!rc)
        rc = qr_arrival_writer_set_source(w, QR_ARRIVALS_MIRROR);
    qr_arrival a, copy;
    while (!rc && (rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        qr_mirror_copy(&a, &copy);
        rc = qr_arrival_write(w, &copy, errbuf);
    }
    if (rc == QR_END)
        rc = QR_OK;
    qr_arrival_reader_close(r);
    int crc = w ? qr_arrival_writer_close(w, rc ? NULL : errbuf) : QR_OK;
    if (!rc)
        rc = crc;
    if (!rc)
        rc = qr_commit_path(tmp, mirror_path, errbuf);
    if (rc)
        unlink(tmp);
    qr_partial_done(tmp);
    return rc;
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
    return qr_arrival_log_check_source(path, recording_id, NULL, NULL, fix, errbuf);
}

int qr_arrival_log_check_source(const char *path, const char *recording_id, const char *source,
                                const char *source_file, const char *fix, char *errbuf)
{
    qr_arrival_reader *r = NULL;
    int rc = qr_arrival_reader_open(&r, path, errbuf);
    if (rc == QR_OK && recording_id && recording_id[0] &&
        strcmp(qr_arrival_reader_recording(r), recording_id))
        rc = qri_err(errbuf, QR_ESTALE,
                     "%s holds the arrivals of %s, not of recording %s beside it: %s", path,
                     qr_arrival_reader_recording(r)[0] ? "another recording" : "an unnamed run",
                     recording_id, fix);
    /* a log of the third format or older, or one whose writer named no run: nothing to compare */
    if (rc == QR_OK && source && source[0] && r->source[0] && strcmp(r->source, source)) {
        const char *got = r->source;
        rc = !strcmp(source, QR_ARRIVALS_TRUTH)
                 ? qri_err(errbuf, QR_ESTALE,
                           "%s holds a replay's arrivals (%s), not the recorded run's: %s", path,
                           got[0] ? got : "no source named", fix)
             : !strcmp(got, QR_ARRIVALS_TRUTH)
                 ? qri_err(errbuf, QR_ESTALE,
                           "%s holds the recorded run's arrivals, not the replay %s describes: %s",
                           path, source_file ? source_file : source, fix)
                 : qri_err(errbuf, QR_ESTALE,
                           "%s holds the arrivals of another replay (%s) than the one %s "
                           "describes (%s): %s",
                           path, got, source_file ? source_file : "", source, fix);
    }
    qr_arrival_reader_close(r);
    return rc;
}
