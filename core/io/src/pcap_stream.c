/* A recording's pcaps streamed for one replay (pcap_stream.h).
 *
 * Per host: one pcap reader, the packets read and not yet taken (a pool), and three heaps:
 *  - ready: packets whose injection time is known, by (time, recorded index);
 *  - until: per open segment, the last send time at which the direction's next packet could
 *    still join it (qr_sampler_open_until); once the capture has passed it, the segment's record
 *    is final and its packets get their times;
 *  - floor: per open segment with packets still waiting for their record, the least time any of
 *    them can be given (rate: the segment's first time less th; gap: its first time).
 * A ready packet is released when its time is below the floor of everything unread (the latest
 * time read less th for rate, that time for gap: a capture in time order) and of every open
 * segment. Heap entries carry the segment's (or the packet's) version and are dropped when stale.
 * Every release is checked against the previous one, so a capture going back in time by more than
 * those bounds assume is caught, never replayed out of order. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"
#include "qreplay/pcap_stream.h"

#define NIL UINT32_MAX

typedef struct spkt {
    qr_rec_packet rp;
    int64_t time;   /* its injection time, once known */
    uint32_t index; /* its place in the host's capture */
    uint32_t next;  /* the direction's waiting list; the free list */
} spkt;

typedef struct skey {
    int64_t key;
    uint32_t a, b;
} skey;

typedef struct sheap {
    skey *v;
    size_t n, cap;
} sheap;

typedef struct sdir {
    qr_sampler *smp;
    uint32_t head, tail; /* packets of the open segment past its first, waiting for its record */
    uint32_t seg;        /* changes with the open segment (a new one, a closed one) */
    uint32_t ver;        /* changes with every packet the segment takes */
    uint8_t closed;      /* the open segment's record is final */
    int64_t s_time;      /* the open segment's first time */
} sdir;

typedef struct shost {
    qr_pcap_reader *tr;
    int opened, eof;
    uint64_t expected;
    uint32_t n_read;
    int64_t last; /* the latest recorded time read */
    spkt *pool;
    uint32_t cap, free;
    sheap ready, until, floor;
    uint32_t *dirs; /* the directions it sent */
    size_t n_dirs, cap_dirs;
    uint32_t cur; /* the packet the source's next gave, NIL */
    int released;
    int64_t rel_time;
    uint32_t rel_index;
} shost;

struct qr_pcap_stream {
    qr_source src;     /* first: the source is the stream */
    qr_recording *rec; /* recording.h5's tables (qr_recording_open_tables) */
    const qr_flow_table *flows;
    uint32_t n_hosts;
    qr_sampler_cfg cfg;
    int64_t slack; /* unread packets are inferred at or after their time less this */
    sdir *dirs;
    uint32_t *next_seq;
    size_t n_dirs;
    shost *hosts;
    FILE *records;
    qr_sampling_stats st;
    int unordered;
};

static int key_less(const skey *x, const skey *y)
{
    return x->key != y->key ? x->key < y->key : x->b < y->b;
}

static int heap_push(sheap *h, skey k)
{
    if (qri_grow((void **)&h->v, &h->cap, h->n, sizeof *h->v, 64))
        return QR_ENOMEM;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!key_less(&k, &h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = k;
    return QR_OK;
}

static skey heap_pop(sheap *h)
{
    skey top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && key_less(&h->v[c + 1], &h->v[c]))
            c++;
        if (!key_less(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

void qr_pcap_stream_close(qr_pcap_stream *st)
{
    if (!st)
        return;
    uint32_t n_hosts = st->n_hosts;
    for (size_t d = 0; st->dirs && d < st->n_dirs; d++)
        qr_sampler_destroy(st->dirs[d].smp);
    free(st->dirs);
    free(st->next_seq);
    if (st->hosts) {
        for (uint32_t h = 0; h < n_hosts; h++) {
            shost *hs = &st->hosts[h];
            qr_pcap_reader_close(hs->tr);
            free(hs->pool);
            free(hs->ready.v);
            free(hs->until.v);
            free(hs->floor.v);
            free(hs->dirs);
        }
    }
    free(st->hosts);
    if (st->records)
        fclose(st->records);
    qr_recording_close(st->rec);
    free(st);
}

static uint32_t slot_new(shost *hs)
{
    if (hs->free == NIL) {
        uint32_t cap = hs->cap ? 2 * hs->cap : 256;
        spkt *v = realloc(hs->pool, (size_t)cap * sizeof *v);
        if (!v)
            return NIL;
        for (uint32_t i = hs->cap; i < cap; i++)
            v[i].next = i + 1 < cap ? i + 1 : NIL;
        hs->pool = v;
        hs->free = hs->cap;
        hs->cap = cap;
    }
    uint32_t i = hs->free;
    hs->free = hs->pool[i].next;
    hs->pool[i].next = NIL;
    return i;
}

static int emit(qr_pcap_stream *st, uint32_t d, const qr_sample_record *rec, char *errbuf)
{
    qr_row_sample_record row = {d, rec->index, rec->time_ns, rec->gap_num, rec->gap_den};
    if (fwrite(&row, sizeof row, 1, st->records) != 1)
        return qri_err(errbuf, QR_EIO, "sampling: cannot write the records' temporary file");
    st->st.records++;
    return QR_OK;
}

static int make_ready(qr_pcap_stream *st, shost *hs, uint32_t slot, int64_t t)
{
    spkt *p = &hs->pool[slot];
    int64_t e = t > p->rp.pk.time_ns ? t - p->rp.pk.time_ns : p->rp.pk.time_ns - t;
    if (e > st->st.max_error_ns)
        st->st.max_error_ns = e;
    p->time = t;
    return heap_push(&hs->ready, (skey){t, slot, p->index});
}

/* The segment's record is known: its waiting packets get their times. */
static int resolve(qr_pcap_stream *st, shost *hs, sdir *sd, const qr_sample_record *rec)
{
    for (uint32_t i = sd->head; i != NIL;) {
        uint32_t nx = hs->pool[i].next;
        int64_t t;
        if (qr_sample_infer(rec, 1, hs->pool[i].rp.seq, &t) != QR_OK)
            return QR_EVALUE;
        hs->pool[i].next = NIL;
        int rc = make_ready(st, hs, i, t);
        if (rc)
            return rc;
        i = nx;
    }
    sd->head = sd->tail = NIL;
    return QR_OK;
}

/* host h's capture's path in buf (3 * QR_PATH_MAX), for an error: not made per packet */
static const char *hpath(const qr_pcap_stream *st, uint32_t h, char *buf)
{
    qr_recording_pcap_path(st->rec, h, buf, 3 * QR_PATH_MAX);
    return buf;
}

static int fail_unordered(qr_pcap_stream *st, const char *path, const char *what, char *errbuf)
{
    st->unordered = 1;
    return qri_err(errbuf, QR_EORDER,
                   "%s: %s: the capture's times go back across flow directions by more than a "
                   "streamed read holds (read it whole)",
                   path, what);
}

/* The capture ended: every direction's last record, every packet's time. */
static int host_end(qr_pcap_stream *st, shost *hs, const char *path, char *errbuf)
{
    char cut[1300];
    snprintf(cut, sizeof cut, "%s", qr_pcap_reader_warning(hs->tr));
    if (hs->n_read != hs->expected)
        return qri_err(errbuf, QR_ETRUNC,
                       "%s: %" PRIu32 " packets, the recording says %" PRIu64 " (%s)", path,
                       hs->n_read, hs->expected, cut[0] ? cut : "truncated?");
    for (size_t k = 0; k < hs->n_dirs; k++) {
        sdir *sd = &st->dirs[hs->dirs[k]];
        qr_sample_record rec;
        int em, rc = QR_OK;
        qr_sampler_finish(sd->smp, &rec, &em);
        if (em && ((rc = emit(st, hs->dirs[k], &rec, errbuf)) != QR_OK ||
                   (rc = resolve(st, hs, sd, &rec)) != QR_OK))
            return rc == QR_EIO ? rc : qri_err(errbuf, rc, "%s: sampling failed", path);
        qr_sampler_destroy(sd->smp);
        sd->smp = NULL;
    }
    qr_pcap_reader_close(hs->tr);
    hs->tr = NULL;
    hs->eof = 1;
    return QR_OK;
}

/* Read host h's next packet, sample it, and settle what it settles. */
static int read_one(qr_pcap_stream *st, uint32_t h, char *errbuf)
{
    shost *hs = &st->hosts[h];
    char path[3 * QR_PATH_MAX]; /* made only where it is needed: not per packet */
    int rc;
    if (!hs->opened) {
        hs->opened = 1;
        if ((rc = qr_pcap_reader_open(&hs->tr, hpath(st, h, path), errbuf)) != QR_OK)
            return rc;
    }
    qr_packet pk;
    rc = qr_pcap_read(hs->tr, &pk, errbuf);
    if (rc == QR_END)
        return host_end(st, hs, hpath(st, h, path), errbuf);
    if (rc)
        return rc;
    uint64_t n = qr_pcap_reader_count(hs->tr);
    qr_five_tuple ft = {pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
    uint32_t d;
    if (qr_flow_table_resolve(st->flows, &ft, &d) != QR_OK ||
        qr_flow_table_dir_src(st->flows, d) != h)
        return qri_err(errbuf, QR_EFORMAT, "%s: packet %" PRIu64 ": belongs to no flow of host %u",
                       hpath(st, h, path), n, h);
    if (pk.ip_id != (uint16_t)st->next_seq[d])
        return qri_err(errbuf, QR_EFORMAT,
                       "%s: packet %" PRIu64
                       ": IP ID %u, expected %u (IDs must be consecutive per flow direction)",
                       hpath(st, h, path), n, pk.ip_id, (unsigned)(uint16_t)st->next_seq[d]);
    uint32_t seq = st->next_seq[d]++;
    uint32_t slot = slot_new(hs);
    if (slot == NIL)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", hpath(st, h, path));
    spkt *p = &hs->pool[slot];
    p->rp = (qr_rec_packet){.pk = pk, .dir = d, .seq = seq};
    p->rp.drop_tag = (uint8_t)qr_recording_detected(st->rec, qr_packet_id(d, seq));
    p->index = hs->n_read++;
    if (pk.time_ns > hs->last)
        hs->last = pk.time_ns;
    st->st.packets++;

    sdir *sd = &st->dirs[d];
    if (!sd->smp) {
        if (qri_grow((void **)&hs->dirs, &hs->cap_dirs, hs->n_dirs, sizeof *hs->dirs, 16) ||
            qr_sampler_create(&sd->smp, &st->cfg))
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", hpath(st, h, path));
        hs->dirs[hs->n_dirs++] = d;
        sd->head = sd->tail = NIL;
    }
    qr_sample_record rec;
    int em;
    char detail[QR_ERRBUF_SIZE];
    if ((rc = qr_sampler_push(sd->smp, pk.time_ns, &rec, &em, detail)) != QR_OK)
        return qri_err(errbuf, rc, "%s: packet %" PRIu64 ": sampling direction %u: %s",
                       hpath(st, h, path), n, d, detail);
    if (em) {
        if ((rc = emit(st, d, &rec, errbuf)) != QR_OK)
            return rc;
        if ((rc = resolve(st, hs, sd, &rec)) != QR_OK)
            return qri_err(errbuf, rc, "%s: packet %" PRIu64 ": sampling failed",
                           hpath(st, h, path), n);
        sd->closed = 0;
        sd->seg++;
    } else if (sd->closed) {
        char what[160];
        snprintf(what, sizeof what,
                 "packet %" PRIu64 " (direction %u, at %" PRId64
                 " ns) joins a send-time segment the capture had passed",
                 n, d, pk.time_ns);
        return fail_unordered(st, hpath(st, h, path), what, errbuf);
    }
    int waiting_before = sd->head != NIL;
    /* a direction's first packet, and the one that closed a segment, start one: their time is
     * their own */
    if (em || qr_sampler_packets(sd->smp) == 1) {
        sd->s_time = pk.time_ns;
        if ((rc = make_ready(st, hs, slot, pk.time_ns)) != QR_OK)
            return qri_err(errbuf, rc, "out of memory");
        if (st->cfg.method == QR_SAMPLING_GAP &&
            heap_push(&hs->floor, (skey){sd->s_time, d, sd->seg}))
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
    } else {
        if (sd->tail == NIL)
            sd->head = slot;
        else
            hs->pool[sd->tail].next = slot;
        sd->tail = slot;
        if (!waiting_before && st->cfg.method == QR_SAMPLING_RATE &&
            heap_push(&hs->floor, (skey){sd->s_time - st->cfg.th_ns, d, sd->seg}))
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    sd->ver++;
    int64_t until;
    if (qr_sampler_open_until(sd->smp, &until) && heap_push(&hs->until, (skey){until, d, sd->ver}))
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    /* segments the capture has passed are final */
    while (hs->until.n && hs->until.v[0].key < hs->last) {
        skey k = heap_pop(&hs->until);
        sdir *o = &st->dirs[k.a];
        if (k.b != o->ver || o->closed || !o->smp || !qr_sampler_peek(o->smp, &rec))
            continue;
        if ((rc = resolve(st, hs, o, &rec)) != QR_OK)
            return qri_err(errbuf, rc, "%s: packet %" PRIu64 ": sampling failed",
                           hpath(st, h, path), n);
        o->closed = 1;
        o->seg++;
    }
    return QR_OK;
}

/* The least time a packet not yet ready can be given. */
static int64_t host_floor(qr_pcap_stream *st, shost *hs)
{
    if (hs->eof)
        return INT64_MAX;
    int64_t f = hs->opened ? hs->last - st->slack : INT64_MIN;
    while (hs->floor.n) {
        skey k = hs->floor.v[0];
        const sdir *sd = &st->dirs[k.a];
        int live = k.b == sd->seg && sd->smp &&
                   (st->cfg.method == QR_SAMPLING_RATE ? sd->head != NIL : !sd->closed);
        if (live)
            return k.key < f ? k.key : f;
        heap_pop(&hs->floor);
    }
    return f;
}

static int stream_next(qr_source *self, uint32_t h, qr_injection *out, char *errbuf)
{
    qr_pcap_stream *st = (qr_pcap_stream *)self;
    shost *hs = &st->hosts[h];
    *out = (qr_injection){NULL, 0};
    if (st->unordered)
        return qri_err(errbuf, QR_EORDER, "the stream stopped at a capture going back in time");
    while (hs->cur == NIL) {
        if (hs->ready.n && (hs->eof || hs->ready.v[0].key < host_floor(st, hs))) {
            skey k = heap_pop(&hs->ready);
            if (hs->released &&
                (k.key < hs->rel_time || (k.key == hs->rel_time && k.b < hs->rel_index))) {
                char what[200], path[3 * QR_PATH_MAX];
                hpath(st, h, path);
                snprintf(what, sizeof what,
                         "packet %u would be injected at %" PRId64
                         " ns, before one already injected at %" PRId64 " ns",
                         k.b + 1, k.key, hs->rel_time);
                return fail_unordered(st, path, what, errbuf);
            }
            hs->released = 1;
            hs->rel_time = k.key;
            hs->rel_index = k.b;
            hs->cur = k.a;
            break;
        }
        if (hs->eof)
            return QR_OK;
        int rc = read_one(st, h, errbuf);
        if (rc)
            return rc;
    }
    *out = (qr_injection){&hs->pool[hs->cur].rp, hs->pool[hs->cur].time};
    return QR_OK;
}

static void stream_take(qr_source *self, uint32_t h)
{
    shost *hs = &((qr_pcap_stream *)self)->hosts[h];
    if (hs->cur == NIL)
        return;
    hs->pool[hs->cur].next = hs->free;
    hs->free = hs->cur;
    hs->cur = NIL;
}

/* Room for a reader per host: raise the soft limit on open files if it is below that. */
static int file_limit(uint32_t hosts, char *errbuf)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)hosts + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return QR_OK;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        return qri_err(errbuf, QR_ESTATE,
                       "streaming %u hosts' captures needs %lu open files; the limit is %lu "
                       "(read the recording whole, or raise ulimit -n)",
                       hosts, (unsigned long)need, (unsigned long)rl.rlim_max);
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return qri_err(errbuf, QR_ESTATE, "cannot raise the open-file limit to %lu",
                       (unsigned long)need);
    return QR_OK;
}

int qr_pcap_stream_open(qr_pcap_stream **out, const char *dir, const qr_scenario *check,
                        qr_sampling_method method, int64_t th_ns, char *errbuf)
{
    *out = NULL;
    qr_sampler *probe = NULL;
    qr_sampler_cfg cfg = {method, th_ns};
    if (qr_sampler_create(&probe, &cfg))
        return qri_err(errbuf, QR_EINVAL, "sampling: bad threshold or method");
    qr_sampler_destroy(probe);
    qr_pcap_stream *st = calloc(1, sizeof *st);
    if (!st)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = qr_recording_open_tables(&st->rec, dir, check, errbuf);
    if (!rc) {
        st->src = (qr_source){stream_next, stream_take};
        st->flows = qr_recording_flows(st->rec);
        st->n_hosts = qr_recording_hosts(st->rec);
        st->cfg = cfg;
        st->slack = method == QR_SAMPLING_RATE ? th_ns : 0;
        st->n_dirs = qr_flow_table_directions(st->flows) + 1;
        st->dirs = calloc(st->n_dirs, sizeof *st->dirs);
        st->next_seq = calloc(st->n_dirs, sizeof *st->next_seq);
        st->hosts = calloc((size_t)st->n_hosts + 1, sizeof *st->hosts);
        if (!st->dirs || !st->next_seq || !st->hosts)
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    if (!rc) {
        for (uint32_t h = 0; h < st->n_hosts; h++)
            st->hosts[h] =
                (shost){.expected = qr_recording_pcap_packets(st->rec, h), .free = NIL, .cur = NIL};
        if (!(st->records = tmpfile()))
            rc = qri_err(errbuf, QR_EIO, "sampling: cannot create a temporary file for records");
    }
    if (!rc)
        rc = file_limit(st->n_hosts, errbuf);
    if (rc) {
        qr_pcap_stream_close(st);
        return rc;
    }
    *out = st;
    return QR_OK;
}

const qr_recording *qr_pcap_stream_recording(const qr_pcap_stream *st)
{
    return st->rec;
}

qr_source *qr_pcap_stream_source(qr_pcap_stream *st)
{
    return &st->src;
}

void qr_pcap_stream_sampling(const qr_pcap_stream *st, qr_sampling_method *method, int64_t *th_ns)
{
    *method = st->cfg.method;
    *th_ns = st->cfg.th_ns;
}

int qr_pcap_stream_unordered(const qr_pcap_stream *st)
{
    return st->unordered;
}

int qr_pcap_stream_end(qr_pcap_stream *st, qr_sampling_stats *stats, FILE **records, char *errbuf)
{
    for (uint32_t h = 0; h < st->n_hosts; h++)
        if (!st->hosts[h].eof || st->hosts[h].ready.n || st->hosts[h].cur != NIL)
            return qri_err(errbuf, QR_ESTATE, "host %u's packets are not all taken", h);
    int rc = qr_sampling_bound_check(st->cfg.method, st->cfg.th_ns, st->st.max_error_ns, errbuf);
    if (rc)
        return rc;
    if (fflush(st->records) != 0 || fseek(st->records, 0, SEEK_SET) != 0)
        return qri_err(errbuf, QR_EIO, "sampling: the records' temporary file cannot be read");
    *stats = st->st;
    *records = st->records;
    return QR_OK;
}
