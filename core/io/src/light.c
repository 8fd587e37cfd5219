/* DETER's light record (light.h): written from a runtime's recording, read back, and turned into
 * the recording a queue replay reads once the packets are regenerated. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "plan_internal.h"
#include "qreplay/fs.h"
#include "qreplay/light.h"
#include "qreplay/tcpconn.h"
#include "qreplay/txn.h"
#include "recording_internal.h"

#define MAGIC "QRLIGHT1"
#define BLOCK_HDR 16 /* part, th, reserved (u8 u8 u16), raw length, stored length, CRC-32 (u32) */
#define CHUNK 1024   /* connections per chunk */
#define MAX_BLOCK (1u << 26)     /* 64 MiB: a chunk's part (the writer ends a chunk sooner) */
#define CHUNK_PACKETS (1u << 20) /* ... or at this many packets */
#define PART_END 0xff

/* packet flags of a direction, in the reader */
#define F_LOST 1
#define F_DETECTED 2
#define F_CE 4
#define F_UNKNOWN 8 /* its receiver was not seen, and nothing says it was lost */

static const char *const part_names[] = {"header", "config",  "calls",    "loss",
                                         "timers", "samples", "received", "order"};

const char *qr_light_part_name(qr_light_part p)
{
    return (unsigned)p < QR_LIGHT_PARTS ? part_names[p] : "unknown";
}

/* ---- bytes and varints ---- */

struct buf {
    uint8_t *b;
    size_t n, cap;
    int oom;
};

static void put(struct buf *w, const void *p, size_t n)
{
    if (!n) /* an empty list: p may be NULL */
        return;
    if (w->oom || qri_reserve((void **)&w->b, &w->cap, w->n + n, 1, 4096)) {
        w->oom = 1;
        return;
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_uv(struct buf *w, uint64_t v)
{
    uint8_t t[10];
    put(w, t, (size_t)(qri_varint_put(t, v) - t));
}

static void put_sv(struct buf *w, int64_t v)
{
    put_uv(w, qri_zigzag(v));
}

struct rd {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t get_uv(struct rd *r)
{
    uint64_t v = 0;
    if (r->bad || qri_varint_get(&r->p, r->end, &v)) {
        r->bad = 1;
        return 0;
    }
    return v;
}

static int64_t get_sv(struct rd *r)
{
    return qri_unzigzag(get_uv(r));
}

/* t + d, a time in [-QR_TIME_MAX, QR_TIME_MAX] (else the read is bad) */
static int64_t add_time(struct rd *r, int64_t t, int64_t d)
{
    int64_t v;
    if (__builtin_add_overflow(t, d, &v) || v > QR_TIME_MAX || v < -QR_TIME_MAX) {
        r->bad = 1;
        return 0;
    }
    return v;
}

/* a count that must fit what is left of the block (each item takes a byte at least) */
static uint64_t get_count(struct rd *r, uint64_t max)
{
    uint64_t n = get_uv(r);
    if (n > max || n > (uint64_t)(r->end - r->p))
        r->bad = 1;
    return r->bad ? 0 : n;
}

static void le32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* ---- writing ---- */

struct writer {
    FILE *f;
    const char *path;
    qr_light_stats *st;
    char *err;
};

/* One block: raw deflated at `level` (9; the end block 0, stored: its recording id, which
 * changes with the code's version, then costs the same bytes whatever its digits). */
static int block_at(struct writer *w, unsigned part, unsigned th, const struct buf *raw, int level)
{
    if (raw->oom)
        return qri_err(w->err, QR_ENOMEM, "light record: out of memory");
    if (raw->n > MAX_BLOCK)
        return qri_err(w->err, QR_EVALUE, "%s: its %s part of one chunk exceeds %u bytes", w->path,
                       part < QR_LIGHT_PARTS ? part_names[part] : "end", MAX_BLOCK);
    uLongf clen = compressBound((uLong)raw->n);
    uint8_t *c = malloc(clen + BLOCK_HDR);
    if (!c)
        return qri_err(w->err, QR_ENOMEM, "light record: out of memory");
    if (raw->n && compress2(c + BLOCK_HDR, &clen, raw->b, (uLong)raw->n, level) != Z_OK) {
        free(c);
        return qri_err(w->err, QR_ENOMEM, "light record: deflate failed");
    }
    if (!raw->n)
        clen = 0;
    c[0] = (uint8_t)part;
    c[1] = (uint8_t)th;
    c[2] = c[3] = 0;
    le32(c + 4, (uint32_t)raw->n);
    le32(c + 8, (uint32_t)clen);
    le32(c + 12, (uint32_t)crc32(0L, raw->b, (uInt)raw->n));
    size_t total = BLOCK_HDR + clen;
    int ok = fwrite(c, 1, total, w->f) == total;
    free(c);
    if (!ok)
        return qri_err(w->err, QR_EIO, "%s: cannot write: %s", w->path, strerror(errno));
    if (part < QR_LIGHT_PARTS) {
        w->st->bytes[part] += total;
        w->st->raw[part] += raw->n;
        if ((part == QR_LIGHT_SAMPLES || part == QR_LIGHT_ORDER) && th < QR_LIGHT_MAX_TH)
            w->st->th_bytes[th] += total;
    }
    w->st->file_bytes += total;
    return QR_OK;
}

static int block(struct writer *w, unsigned part, unsigned th, const struct buf *raw)
{
    return block_at(w, part, th, raw, 9);
}

/* the index lists of every direction's packets in its sender's recorded order */
struct dirs {
    size_t n_dirs;
    uint32_t *start, *idx; /* direction d: idx[start[d] .. start[d + 1]) into its host's packets */
};

static int dirs_of(const qr_recording *rec, struct dirs *d)
{
    const qr_flow_table *ft = qr_recording_flows(rec);
    d->n_dirs = qr_flow_table_directions(ft);
    d->start = calloc(d->n_dirs + 2, sizeof *d->start);
    size_t total = 0;
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
        size_t n;
        qr_recording_packets(rec, h, &n);
        total += n;
    }
    d->idx = malloc((total + 1) * sizeof *d->idx);
    if (!d->start || !d->idx)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(rec, h, &n);
        for (size_t i = 0; i < n; i++)
            d->start[p[i].dir + 2]++;
    }
    for (size_t k = 2; k < d->n_dirs + 2; k++)
        d->start[k] += d->start[k - 1];
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(rec, h, &n);
        for (size_t i = 0; i < n; i++)
            d->idx[d->start[p[i].dir + 1]++] = (uint32_t)i;
    }
    return QR_OK;
}

struct okey {
    int64_t t;
    uint32_t dir, seq, rec; /* rec: the packet's place in its host's recorded order */
};

static int cmp_light(const void *a, const void *b)
{
    const struct okey *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->dir != y->dir)
        return x->dir < y->dir ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_rec(const void *a, const void *b)
{
    const struct okey *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* The scenario as INI text, every key at its value and nothing else (no comments, no origins):
 * input files by their names only, since the record is read on other machines and its replay reads
 * no workload file (the connections are in the record); not [output] dir. */
static int scenario_text(const qr_scenario *s, FILE *out)
{
    const char *last = "";
    for (size_t i = 0; i < qr_scenario_key_count(); i++) {
        const char *sec, *key, *val, *origin, *help;
        if (qr_scenario_key(s, i, &sec, &key, &val, &origin, &help))
            return QR_EINVAL;
        if (!strcmp(sec, "output") && !strcmp(key, "dir"))
            continue; /* where the runtime wrote, on its machine */
        if (strcmp(sec, last))
            fprintf(out, "%s[%s]\n", *last ? "\n" : "", sec);
        last = sec;
        if (!strcmp(sec, "traffic") && (!strcmp(key, "flows") || !strcmp(key, "size_cdf"))) {
            const char *base = strrchr(val, '/');
            val = base ? base + 1 : val;
        }
        fprintf(out, "%s = %s\n", key, val);
    }
    return ferror(out) ? QR_EIO : QR_OK;
}

/* Whether packet id is in the loss part's list `kind`: 0 lost (no receive record, where the
 * receiver was seen; else none is known lost), 1 detected lost by its receiver, 2 arrived marked
 * CE. */
static int in_list(const qr_recording *rec, int kind, unsigned seen, uint64_t id)
{
    int64_t t;
    return kind == 0   ? (seen & QR_TC_AT_RECEIVER) && qr_recording_received(rec, id, &t) != QR_OK
           : kind == 1 ? qr_recording_detected(rec, id) != 0
                       : qr_recording_ce(rec, id) != 0;
}

/* Connection f's socket calls into calls, their patterns (bytes, flags) in pat[0..*n_pat): a
 * runtime's application writes the flow's bytes at its start and closes (flags 1: close after);
 * an import's from its exchanges as the connection model reads them from the captures (tcpconn.h):
 * per exchange the bytes its side wrote and when it started (flags 2: the accepting side; 1: the
 * side's last, before its FIN). */
static int conn_calls(const qr_recording *rec, uint32_t f, int imported, uint64_t **pat,
                      size_t *n_pat, size_t *cap_pat, struct buf *calls, uint64_t *n_calls,
                      char *errbuf)
{
    const qr_flow_table *ft = qr_recording_flows(rec);
    const qr_flow *fl = qr_flow_table_flow(ft, f);
    uint64_t one[2];
    int64_t at0 = 0;
    uint64_t *want = one;
    int64_t *at = &at0;
    size_t n = 0;
    qr_tc_conn c;
    memset(&c, 0, sizeof c);
    qr_tc_pkt *tp[2] = {NULL, NULL};
    int rc = QR_OK;
    if (!imported) {
        one[0] = fl->bytes;
        one[1] = 1;
        n = 1;
    } else {
        qr_tc_dir dirs[2];
        for (uint32_t k = 0; k < 2 && !rc; k++) {
            uint32_t dir = 2 * f + k;
            size_t nh;
            const qr_rec_packet *hp =
                qr_recording_packets(rec, qr_flow_table_dir_src(ft, dir), &nh);
            unsigned seen = qr_recording_seen(rec, dir);
            tp[k] = malloc((nh ? nh : 1) * sizeof *tp[k]);
            if (!tp[k]) {
                rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
                break;
            }
            size_t m = 0;
            for (size_t i = 0; i < nh; i++) {
                if (hp[i].dir != dir)
                    continue;
                int64_t rx;
                if (qr_recording_received(rec, qr_packet_id(dir, hp[i].seq), &rx) != QR_OK)
                    rx = -1;
                if (!(seen & QR_TC_AT_SENDER) && rx < 0)
                    continue; /* made up from an IP ID gap, not observed */
                uint8_t before = !(seen & QR_TC_AT_SENDER) &&
                                 qr_recording_late(rec, qr_packet_id(dir, hp[i].seq));
                tp[k][m++] = (qr_tc_pkt){&hp[i].pk, hp[i].pk.time_ns, rx, before};
            }
            dirs[k] = (qr_tc_dir){tp[k], m, seen};
        }
        if (!rc && qr_tc_analyse(&c, dirs, NULL, errbuf))
            rc =
                qri_err(errbuf, QR_ENOMEM, "light record: flow %u: the connection model failed", f);
        if (!rc && c.n_ex) {
            want = malloc(2 * c.n_ex * sizeof *want);
            at = malloc(c.n_ex * sizeof *at);
            if (!want || !at) {
                free(want == one ? NULL : want);
                free(at == &at0 ? NULL : at);
                want = one;
                at = &at0;
                rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
            }
        }
        for (size_t e = 0; !rc && e < c.n_ex; e++) {
            const qr_tc_exchange *x = &c.ex[e];
            int last = 1;
            for (size_t g = e + 1; g < c.n_ex; g++)
                last &= c.ex[g].dir != x->dir;
            want[2 * n] = x->bytes;
            want[2 * n + 1] = (x->dir ? 2u : 0u) | (last && c.dir[x->dir].fin ? 1u : 0u);
            at[n++] = x->start_ns - fl->start_ns;
        }
    }
    put_uv(calls, n);
    for (size_t i = 0; !rc && i < n; i++) {
        size_t k = 0;
        while (k < *n_pat && ((*pat)[2 * k] != want[2 * i] || (*pat)[2 * k + 1] != want[2 * i + 1]))
            k++;
        if (k == *n_pat) {
            if (*n_pat == *cap_pat) {
                uint64_t *g = realloc(*pat, *cap_pat * 4 * sizeof *g);
                if (!g) {
                    rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
                    break;
                }
                *pat = g;
                *cap_pat *= 2;
            }
            (*pat)[2 * k] = want[2 * i];
            (*pat)[2 * k + 1] = want[2 * i + 1];
            (*n_pat)++;
        }
        put_uv(calls, k);
        put_sv(calls, at[i]);
    }
    *n_calls += n;
    if (want != one)
        free(want);
    if (at != &at0)
        free(at);
    qr_tc_conn_free(&c);
    free(tp[0]);
    free(tp[1]);
    return rc;
}

static void header_text(struct buf *b, const qr_recording *rec, const int64_t *offsets,
                        qr_sampling_method method, const int64_t *th, size_t n_th, char *scen,
                        size_t scen_len)
{
    char line[256];
    snprintf(line, sizeof line, "kind=qreplay light record\nversion=1\nrecording_kind=%s\n",
             qr_recording_imported(rec) ? "import" : "runtime");
    put(b, line, strlen(line));
    snprintf(
        line, sizeof line, "hosts=%u\nflows=%zu\nmethod=%s\nthresholds=", qr_recording_hosts(rec),
        qr_flow_table_flows(qr_recording_flows(rec)), method == QR_SAMPLING_GAP ? "gap" : "rate");
    put(b, line, strlen(line));
    for (size_t i = 0; i < n_th; i++) {
        snprintf(line, sizeof line, "%s%" PRId64, i ? "," : "", th[i]);
        put(b, line, strlen(line));
    }
    put(b, "\noffsets=", 9);
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
        snprintf(line, sizeof line, "%s%" PRId64, h ? "," : "", offsets ? offsets[h] : 0);
        put(b, line, strlen(line));
    }
    put(b, "\nscenario=\n", 11);
    put(b, scen, scen_len);
}

int qr_light_write(const qr_recording *rec, const int64_t *offsets, qr_sampling_method method,
                   const int64_t *th_ns, size_t n_th, const char *path, qr_light_stats *stats,
                   char *errbuf)
{
    qr_light_stats st;
    memset(&st, 0, sizeof st);
    if (!rec || !path || !th_ns || n_th < 1 || n_th > QR_LIGHT_MAX_TH)
        return qri_err(errbuf, QR_EINVAL, "light record: 1 to %d thresholds", QR_LIGHT_MAX_TH);
    for (size_t i = 0; i < n_th; i++)
        if (th_ns[i] < 0 || th_ns[i] > QR_TIME_MAX || (i && th_ns[i] <= th_ns[i - 1]))
            return qri_err(errbuf, QR_EINVAL,
                           "light record: the thresholds must be increasing and not negative");
    if (!qr_recording_has_packets(rec))
        return qri_err(errbuf, QR_ESTATE, "light record: read the recording whole");
    int imported = qr_recording_imported(rec);
    if (!imported && !qr_recording_has_received(rec))
        return qri_err(errbuf, QR_ESTATE,
                       "light record: the recording has no /received table (the receive times "
                       "the isolated replay needs)");
    const qr_flow_table *ft = qr_recording_flows(rec);
    size_t n_flows = qr_flow_table_flows(ft);
    uint32_t n_hosts = qr_recording_hosts(rec);
    st.n_th = n_th;
    memcpy(st.th_ns, th_ns, n_th * sizeof *th_ns);
    st.connections = n_flows;

    struct dirs d = {0};
    struct buf list = {0}; /* a loss list being written */
    struct buf part[QR_LIGHT_PARTS];
    memset(part, 0, sizeof part);
    struct buf *samp = calloc(n_th, sizeof *samp);
    int64_t **inferred = calloc(n_th, sizeof *inferred); /* per th: per host packet (flat) */
    size_t *host_base = calloc(n_hosts + 1, sizeof *host_base);
    qr_sample_record *recs = NULL;
    int64_t *times = NULL;
    struct okey *keys = NULL, *keys2 = NULL;
    qr_sampler *sm = NULL;
    char *scen = NULL;
    size_t scen_len = 0;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.partial-%ld", path, (long)getpid());
    qr_leftovers_remove(path);
    struct writer w = {NULL, path, &st, errbuf};
    int rc = QR_OK;
    if (!samp || !inferred || !host_base || dirs_of(rec, &d)) {
        rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
        goto done;
    }
    size_t total = 0, most = 1;
    for (uint32_t h = 0; h < n_hosts; h++) {
        size_t n;
        qr_recording_packets(rec, h, &n);
        host_base[h] = total;
        total += n;
        if (n > most)
            most = n;
    }
    host_base[n_hosts] = total;
    recs = malloc(most * sizeof *recs);
    times = malloc(most * sizeof *times);
    keys = malloc(most * sizeof *keys);
    keys2 = malloc(most * sizeof *keys2);
    for (size_t i = 0; i < n_th; i++)
        if (!(inferred[i] = malloc((total + 1) * sizeof **inferred)))
            rc = QR_ENOMEM;
    if (rc || !recs || !times || !keys || !keys2) {
        rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
        goto done;
    }
    FILE *ms = open_memstream(&scen, &scen_len);
    if (!ms || scenario_text(qr_recording_scenario(rec), ms) || fclose(ms)) {
        rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
        goto done;
    }
    w.f = fopen(tmp, "wb");
    if (!w.f) {
        rc = qri_err(errbuf, QR_EIO, "%s: cannot create: %s", tmp, strerror(errno));
        goto done;
    }
    qr_partial_add(tmp);
    if (fwrite(MAGIC, 1, 8, w.f) != 8) {
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write: %s", path, strerror(errno));
        goto done;
    }
    st.file_bytes = 8;
    header_text(&part[QR_LIGHT_HEADER], rec, offsets, method, th_ns, n_th, scen, scen_len);
    if ((rc = block(&w, QR_LIGHT_HEADER, 0, &part[QR_LIGHT_HEADER])))
        goto done;

    qr_sampler_cfg cfg = {method, th_ns[0]};
    int64_t prev_start = 0; /* the connections' starts, delta-coded across chunks */
    for (size_t f0 = 0, f1; !rc && f0 < n_flows; f0 = f1) {
        /* a chunk: CHUNK connections, fewer if they sent CHUNK_PACKETS packets */
        uint64_t in_chunk = 0;
        for (f1 = f0; f1 < n_flows && f1 - f0 < CHUNK && in_chunk < CHUNK_PACKETS; f1++)
            in_chunk += (uint64_t)(d.start[2 * f1 + 2] - d.start[2 * f1]);
        for (int p = 0; p < QR_LIGHT_PARTS; p++)
            part[p].n = 0;
        for (size_t i = 0; i < n_th; i++)
            samp[i].n = 0;
        /* the calls' pattern table of this chunk: the runtime's applications write a flow's
         * bytes at its start and close (flags 1: close after) */
        size_t n_pat = 0, cap_pat = 64;
        uint64_t *pat = malloc(cap_pat * 2 * sizeof *pat); /* (bytes, flags) */
        if (!pat) {
            rc = qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
            break;
        }
        struct buf calls = {0};
        for (size_t f = f0; f < f1; f++) {
            const qr_flow *fl = qr_flow_table_flow(ft, (uint32_t)f);
            put_uv(&part[QR_LIGHT_CONFIG], fl->src);
            put_uv(&part[QR_LIGHT_CONFIG], fl->dst);
            put_sv(&part[QR_LIGHT_CONFIG], fl->start_ns - prev_start);
            put_uv(&part[QR_LIGHT_CONFIG], fl->incast);
            prev_start = fl->start_ns;
            if ((rc = conn_calls(rec, (uint32_t)f, imported, &pat, &n_pat, &cap_pat, &calls,
                                 &st.calls, errbuf)))
                break;
            for (uint32_t side = 0; side < 2; side++) {
                uint32_t dir = (uint32_t)(2 * f + side);
                uint32_t host = qr_flow_table_dir_src(ft, dir);
                size_t nh;
                const qr_rec_packet *hp = qr_recording_packets(rec, host, &nh);
                const uint32_t *ix = d.idx + d.start[dir];
                size_t n = d.start[dir + 1] - d.start[dir];
                st.directions++;
                st.packets += n;
                /* loss: packets sent; lost (no receive record), detected, CE: delta-coded */
                struct buf *L = &part[QR_LIGHT_LOSS];
                unsigned seen = qr_recording_seen(rec, dir);
                st.unobserved += seen != (QR_TC_AT_SENDER | QR_TC_AT_RECEIVER);
                put_uv(L, seen);
                put_uv(L, n);
                for (int kind = 0; kind < 3; kind++) { /* its count, then its list */
                    uint64_t cnt = 0, last = 0;
                    list.n = 0;
                    for (size_t j = 0; j < n; j++)
                        if (in_list(rec, kind, seen, qr_packet_id(dir, (uint32_t)j))) {
                            put_uv(&list, j - last);
                            last = j;
                            cnt++;
                        }
                    put_uv(L, cnt);
                    put(L, list.b, list.n);
                    if (list.oom)
                        L->oom = 1;
                    (kind == 0 ? &st.lost : kind == 1 ? &st.detected : &st.ce)[0] += cnt;
                }
                /* receive times, delta-coded from the flow's start */
                int64_t prev = fl->start_ns;
                for (size_t j = 0; (seen & QR_TC_AT_RECEIVER) && j < n; j++) {
                    int64_t t;
                    if (qr_recording_received(rec, qr_packet_id(dir, (uint32_t)j), &t) != QR_OK)
                        continue;
                    put_sv(&part[QR_LIGHT_RECEIVED], t - prev);
                    prev = t;
                    st.received++;
                }
                /* samples at every threshold */
                for (size_t j = 0; j < n; j++)
                    times[j] = hp[ix[j]].pk.time_ns;
                for (size_t i = 0; !rc && i < n_th; i++) {
                    cfg.th_ns = th_ns[i];
                    qr_sampler_destroy(sm);
                    sm = NULL;
                    size_t nr = 0;
                    int64_t *inf = inferred[i] + host_base[host];
                    if (qr_sampler_create(&sm, &cfg)) {
                        rc = qri_err(errbuf, QR_EINVAL, "light record: bad threshold");
                        break;
                    }
                    if (n && (seen & QR_TC_AT_SENDER)) {
                        int64_t *tmpinf = (int64_t *)keys2; /* room for n */
                        if ((rc = qr_sample_series(sm, times, n, recs, &nr, tmpinf, NULL, errbuf)))
                            break;
                        for (size_t j = 0; j < n; j++)
                            inf[ix[j]] = tmpinf[j];
                    }
                    if (!(seen & QR_TC_AT_SENDER)) /* its send times are not observations */
                        for (size_t j = 0; j < n; j++)
                            inf[ix[j]] = hp[ix[j]].pk.time_ns;
                    put_uv(&samp[i], nr);
                    uint64_t pidx = 0;
                    int64_t pt = fl->start_ns;
                    for (size_t j = 0; j < nr; j++) {
                        put_uv(&samp[i], recs[j].index - pidx);
                        put_sv(&samp[i], recs[j].time_ns - pt);
                        put_sv(&samp[i], recs[j].gap_num);
                        put_uv(&samp[i], (uint64_t)recs[j].gap_den);
                        pidx = recs[j].index;
                        pt = recs[j].time_ns;
                    }
                    st.th_records[i] += nr;
                    st.sample_records += nr;
                }
            }
        }
        put_uv(&part[QR_LIGHT_CALLS], n_pat);
        for (size_t k = 0; k < n_pat; k++) {
            put_uv(&part[QR_LIGHT_CALLS], pat[2 * k]);
            put_uv(&part[QR_LIGHT_CALLS], pat[2 * k + 1]);
        }
        put(&part[QR_LIGHT_CALLS], calls.b, calls.n);
        if (calls.oom)
            part[QR_LIGHT_CALLS].oom = 1;
        free(calls.b);
        free(pat);
        for (int p = QR_LIGHT_CONFIG; !rc && p <= QR_LIGHT_RECEIVED; p++) {
            if (p == QR_LIGHT_SAMPLES) {
                for (size_t i = 0; !rc && i < n_th; i++)
                    rc = block(&w, QR_LIGHT_SAMPLES, (unsigned)i, &samp[i]);
            } else if (p != QR_LIGHT_TIMERS) {
                rc = block(&w, (unsigned)p, 0, &part[p]);
            }
        }
    }
    /* the order among equal inferred times, per threshold and host: a replay sorts by (time,
     * direction, number); where the recording's order (its send order) differs, the group's
     * permutation */
    for (size_t i = 0; !rc && i < n_th; i++) {
        struct buf *o = &part[QR_LIGHT_ORDER];
        o->n = 0;
        for (uint32_t h = 0; h < n_hosts; h++) {
            size_t n;
            const qr_rec_packet *hp = qr_recording_packets(rec, h, &n);
            const int64_t *inf = inferred[i] + host_base[h];
            for (size_t j = 0; j < n; j++)
                keys[j] = (struct okey){inf[j], hp[j].dir, hp[j].seq, (uint32_t)j};
            memcpy(keys2, keys, n * sizeof *keys);
            qsort(keys, n, sizeof *keys, cmp_light);
            qsort(keys2, n, sizeof *keys2, cmp_rec);
            uint64_t groups = 0;
            for (size_t j = 0; j < n;) {
                size_t e = j + 1;
                while (e < n && keys[e].t == keys[j].t)
                    e++;
                for (size_t q = j; q < e; q++)
                    if (keys[q].rec != keys2[q].rec) {
                        groups++;
                        break;
                    }
                j = e;
            }
            put_uv(o, groups);
            size_t last = 0;
            for (size_t j = 0; j < n;) {
                size_t e = j + 1;
                while (e < n && keys[e].t == keys[j].t)
                    e++;
                int differs = 0;
                for (size_t q = j; q < e; q++)
                    differs |= keys[q].rec != keys2[q].rec;
                if (differs) {
                    put_uv(o, j - last);
                    put_uv(o, e - j);
                    for (size_t q = j; q < e; q++) {
                        size_t r = j;
                        while (keys[r].rec != keys2[q].rec)
                            r++;
                        put_uv(o, r - j);
                    }
                    last = j;
                }
                j = e;
            }
        }
        rc = block(&w, QR_LIGHT_ORDER, (unsigned)i, o);
    }
    if (!rc) {
        struct buf end = {0};
        put_uv(&end, st.connections);
        put_uv(&end, st.packets);
        const char *id = qr_recording_id(rec);
        put(&end, id, strlen(id)); /* the rest of the block */
        rc = block_at(&w, PART_END, 0, &end, 0);
        free(end.b);
    }
    if (!rc && (fflush(w.f) || fsync(fileno(w.f))))
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write: %s", path, strerror(errno));
    if (w.f && fclose(w.f) && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write: %s", path, strerror(errno));
    w.f = NULL;
    if (!rc)
        rc = qr_commit_path(tmp, path, errbuf);
done:
    if (w.f)
        fclose(w.f);
    unlink(tmp);
    qr_partial_done(tmp);
    free(list.b);
    for (int p = 0; p < QR_LIGHT_PARTS; p++)
        free(part[p].b);
    for (size_t i = 0; samp && i < n_th; i++)
        free(samp[i].b);
    for (size_t i = 0; inferred && i < n_th; i++)
        free(inferred[i]);
    free(samp);
    free(inferred);
    free(host_base);
    free(recs);
    free(times);
    free(keys);
    free(keys2);
    free(d.start);
    free(d.idx);
    free(scen);
    qr_sampler_destroy(sm);
    if (!rc && stats)
        *stats = st;
    return rc;
}

/* ---- reading ---- */

struct ldir {
    uint32_t n, n_lost; /* packets sent, lost */
    unsigned seen;      /* QR_TC_AT_*: which ends a capture saw */
    size_t at;          /* its packets' place in the flat arrays */
    size_t loss_off;    /* its lists in its chunk's loss block (while reading) */
    int64_t last_send;  /* inferred at the smallest threshold */
};

struct lgroup {
    uint64_t pos; /* in the host's (time, direction, number) order */
    uint32_t m;
    uint32_t *rank; /* m */
};

struct lhost_order {
    struct lgroup *g;
    size_t n;
};

struct qr_light {
    char path[4096];
    char id[QR_ID_SIZE];
    qr_scenario *scenario;
    char *scenario_text;
    qr_flow *flows;
    size_t n_flows;
    qr_flow_table *ft;
    uint32_t n_hosts;
    int64_t *offsets;
    qr_sampling_method method;
    int imported;  /* recording_kind=import */
    char why[256]; /* why its packets cannot be regenerated ("" if they can) */
    qr_light_stats st;
    struct ldir *dirs;
    size_t n_dirs;
    uint8_t *flags; /* per packet: F_* */
    int64_t *recv;  /* per packet: receive time (receiver's clock); lost: 0 */
    qr_sample_record **recs[QR_LIGHT_MAX_TH]; /* per th, per direction */
    size_t *n_recs[QR_LIGHT_MAX_TH];
    struct lhost_order *order[QR_LIGHT_MAX_TH]; /* per th, per host */
};

void qr_light_close(qr_light *l)
{
    if (!l)
        return;
    qr_scenario_destroy(l->scenario);
    free(l->scenario_text);
    free(l->flows);
    qr_flow_table_destroy(l->ft);
    free(l->offsets);
    free(l->dirs);
    free(l->flags);
    free(l->recv);
    for (size_t i = 0; i < QR_LIGHT_MAX_TH; i++) {
        for (size_t d = 0; l->recs[i] && d < l->n_dirs; d++)
            free(l->recs[i][d]);
        free(l->recs[i]);
        free(l->n_recs[i]);
        for (uint32_t h = 0; l->order[i] && h < l->n_hosts; h++) {
            for (size_t g = 0; g < l->order[i][h].n; g++)
                free(l->order[i][h].g[g].rank);
            free(l->order[i][h].g);
        }
        free(l->order[i]);
    }
    free(l);
}

/* "key=value" of the header's line for key, into out (size bytes). */
static int header_value(const char *text, const char *key, char *out, size_t size)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t vl = len - kl - 1;
            if (vl >= size)
                return 0;
            memcpy(out, p + kl + 1, vl);
            out[vl] = 0;
            return 1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int parse_header(qr_light *l, const char *text, size_t len, const char *dir, char *err)
{
    char v[65536];
    const char *scen = NULL;
    for (size_t i = 0; i + 10 <= len; i++)
        if ((i == 0 || text[i - 1] == '\n') && !strncmp(text + i, "scenario=\n", 10)) {
            scen = text + i + 10;
            break;
        }
    char kind[64];
    if (!header_value(text, "kind", kind, sizeof kind) || strcmp(kind, "qreplay light record") ||
        !header_value(text, "version", v, sizeof v) || strcmp(v, "1") || !scen)
        return qri_err(err, QR_EFORMAT, "%s: the header is not a light record's (version 1)",
                       l->path);
    if (header_value(text, "recording_kind", v, sizeof v)) {
        if (strcmp(v, "runtime") && strcmp(v, "import"))
            return qri_err(err, QR_EFORMAT, "%s: header: recording_kind '%s'", l->path, v);
        l->imported = !strcmp(v, "import");
        if (l->imported)
            snprintf(l->why, sizeof l->why,
                     "it is of an import: its hosts ran a kernel's TCP, which the isolated replay "
                     "(ns-3's TCP) does not repeat");
    }
    char *end;
    if (!header_value(text, "hosts", v, sizeof v) ||
        (l->n_hosts = (uint32_t)strtoul(v, &end, 10), *end) || !l->n_hosts || l->n_hosts > 1u << 20)
        return qri_err(err, QR_EFORMAT, "%s: header: bad hosts", l->path);
    if (!header_value(text, "flows", v, sizeof v) || (l->n_flows = strtoull(v, &end, 10), *end) ||
        l->n_flows > 1u << 28)
        return qri_err(err, QR_EFORMAT, "%s: header: bad flows", l->path);
    if (!header_value(text, "method", v, sizeof v) || (strcmp(v, "rate") && strcmp(v, "gap")))
        return qri_err(err, QR_EFORMAT, "%s: header: bad method", l->path);
    l->method = !strcmp(v, "gap") ? QR_SAMPLING_GAP : QR_SAMPLING_RATE;
    if (!header_value(text, "thresholds", v, sizeof v))
        return qri_err(err, QR_EFORMAT, "%s: header: no thresholds", l->path);
    for (char *p = v; *p && l->st.n_th < QR_LIGHT_MAX_TH;) {
        long long t = strtoll(p, &end, 10);
        if (end == p || t < 0 || t > QR_TIME_MAX ||
            (l->st.n_th && t <= l->st.th_ns[l->st.n_th - 1]) || (*end && *end != ','))
            return qri_err(err, QR_EFORMAT, "%s: header: bad thresholds", l->path);
        l->st.th_ns[l->st.n_th++] = t;
        p = *end ? end + 1 : end;
    }
    if (!l->st.n_th)
        return qri_err(err, QR_EFORMAT, "%s: header: no thresholds", l->path);
    l->offsets = calloc(l->n_hosts, sizeof *l->offsets);
    if (!l->offsets)
        return qri_err(err, QR_ENOMEM, "out of memory");
    char *ov = malloc(len + 1);
    if (!ov)
        return qri_err(err, QR_ENOMEM, "out of memory");
    if (header_value(text, "offsets", ov, len + 1)) {
        char *p = ov;
        for (uint32_t h = 0; h < l->n_hosts; h++) {
            long long t = strtoll(p, &end, 10);
            if (end == p || (*end && *end != ',')) {
                free(ov);
                return qri_err(err, QR_EFORMAT, "%s: header: bad offsets", l->path);
            }
            l->offsets[h] = t;
            p = *end ? end + 1 : end;
        }
    }
    free(ov);
    l->scenario_text = strndup(scen, len - (size_t)(scen - text));
    char detail[QR_ERRBUF_SIZE];
    int rc = !l->scenario_text ? QR_ENOMEM : qr_scenario_create(&l->scenario);
    if (!rc)
        rc = qr_scenario_load_string(l->scenario, l->scenario_text, l->path, dir, detail);
    if (!rc)
        rc = qr_scenario_validate(l->scenario, detail);
    if (rc)
        return qri_err(err, QR_EFORMAT, "%s: its scenario does not load: %s", l->path,
                       rc == QR_ENOMEM ? "out of memory" : detail);
    if (qr_config_hosts(qr_scenario_config(l->scenario)) != l->n_hosts)
        return qri_err(err, QR_EFORMAT, "%s: header: %u hosts, its scenario has %u", l->path,
                       l->n_hosts, qr_config_hosts(qr_scenario_config(l->scenario)));
    return QR_OK;
}

/* The flows' directions' packets: room for n more. */
static int grow_packets(qr_light *l, size_t *cap, size_t need)
{
    if (need <= *cap)
        return QR_OK;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    uint8_t *f = realloc(l->flags, c);
    if (!f)
        return QR_ENOMEM;
    l->flags = f;
    int64_t *r = realloc(l->recv, c * sizeof *r);
    if (!r)
        return QR_ENOMEM;
    l->recv = r;
    *cap = c;
    return QR_OK;
}

/* What qr_light_open has read so far, across its blocks. */
struct opening {
    qr_light *l;
    char *errbuf;
    size_t flows_done, calls_done, loss_done, recv_dirs_done;
    size_t pk_n, pk_cap;
    uint8_t *loss_raw; /* the loss block, kept for the receive times */
    size_t loss_len;
    size_t dirs_done[QR_LIGHT_MAX_TH], order_done[QR_LIGHT_MAX_TH];
};

/* The connections: ends, start (delta-coded), incast group. A value out of range sets r->bad.
 * Returns 0 or QR_ENOMEM. */
static int read_config(struct opening *o, struct rd *r)
{
    qr_light *l = o->l;
    int64_t start = o->flows_done ? l->flows[o->flows_done - 1].start_ns : 0;
    while (r->p < r->end && !r->bad && o->flows_done < l->n_flows) {
        qr_flow *fl = &l->flows[o->flows_done];
        fl->id = o->flows_done;
        fl->src = (uint32_t)get_uv(r);
        fl->dst = (uint32_t)get_uv(r);
        start = add_time(r, start, get_sv(r));
        fl->start_ns = start;
        fl->incast = (uint32_t)get_uv(r);
        fl->bytes = 0;
        if (fl->src >= l->n_hosts || fl->dst >= l->n_hosts || fl->src == fl->dst)
            r->bad = 1;
        o->flows_done++;
    }
    if (r->p != r->end)
        r->bad = 1;
    return QR_OK;
}

/* The socket calls: the pattern table, then each connection's calls (its bytes; why the
 * isolated replay cannot run it, if so). A value out of range sets r->bad. Returns 0 or QR_ENOMEM.
 */
static int read_calls(struct opening *o, struct rd *r)
{
    qr_light *l = o->l;
    uint64_t n_pat = get_count(r, 1u << 20);
    uint64_t *pat = calloc(n_pat + 1, sizeof *pat);
    if (!pat)
        return qri_err(o->errbuf, QR_ENOMEM, "out of memory");
    uint8_t *pflags = calloc(n_pat + 1, 1);
    if (!pflags) {
        free(pat);
        return qri_err(o->errbuf, QR_ENOMEM, "out of memory");
    }
    for (uint64_t k = 0; k < n_pat && !r->bad; k++) {
        pat[k] = get_uv(r);
        uint64_t fl = get_uv(r); /* 1: close after; 2: by the accepting side */
        if (fl > 3)
            r->bad = 1;
        pflags[k] = (uint8_t)fl;
    }
    while (r->p < r->end && !r->bad && o->calls_done < o->flows_done) {
        uint64_t n_calls = get_count(r, UINT32_MAX);
        qr_flow *fl = &l->flows[o->calls_done++];
        for (uint64_t c = 0; c < n_calls && !r->bad; c++) {
            uint64_t k = get_uv(r);
            int64_t at = get_sv(r);
            if (k >= n_pat) {
                r->bad = 1;
                break;
            }
            if (!(pflags[k] & 2))
                fl->bytes += pat[k];
            /* the runtime's application: one write of the flow's bytes at its start,
             * then close; anything else the isolated replay cannot run */
            if ((n_calls != 1 || pflags[k] != 1 || at != 0) && !l->why[0])
                snprintf(l->why, sizeof l->why,
                         "connection %zu's application wrote %" PRIu64
                         " times or from both sides (the isolated replay's writes "
                         "once, from the opening side)",
                         o->calls_done - 1, n_calls);
        }
        l->st.calls += n_calls;
    }
    free(pflags);
    free(pat);
    if (r->p != r->end)
        r->bad = 1;
    return QR_OK;
}

/* Per direction: who captured it, its packets, and its lost, detected and CE-marked packets
 * (checked here; decoded with the receive times, the block kept in o->loss_raw: *raw taken). A
 * value out of range sets r->bad. Returns 0 or QR_ENOMEM. */
static int read_loss(struct opening *o, struct rd *r, uint8_t **raw, uint32_t rlen)
{
    qr_light *l = o->l;
    /* checked here, decoded with the chunk's receive times: no packet's memory before
     * its bytes are read (a lost packet takes one here, a received one there) */
    while (r->p < r->end && !r->bad && o->loss_done < 2 * o->flows_done) {
        struct ldir *d = &l->dirs[o->loss_done];
        uint64_t seen = get_uv(r), n = get_uv(r);
        if (n > UINT32_MAX || seen < 1 || seen > 3) {
            r->bad = 1;
            break;
        }
        d->seen = (unsigned)seen;
        if (seen != (QR_TC_AT_SENDER | QR_TC_AT_RECEIVER)) {
            l->st.unobserved++;
            if (!l->why[0])
                snprintf(l->why, sizeof l->why, "direction %zu was not captured at its %s",
                         o->loss_done, seen & QR_TC_AT_SENDER ? "receiver" : "sender");
        }
        d->n = (uint32_t)n;
        d->loss_off = (size_t)(r->p - *raw);
        for (int kind = 0; kind < 3 && !r->bad; kind++) {
            uint64_t cnt = get_count(r, n), s = 0;
            for (uint64_t j = 0; j < cnt && !r->bad; j++) {
                uint64_t delta = get_uv(r);
                if ((j && !delta) || delta >= n || s + delta >= n)
                    r->bad = 1;
                s += delta;
            }
            if (kind == 0)
                d->n_lost = (uint32_t)cnt;
            (kind == 0 ? &l->st.lost : kind == 1 ? &l->st.detected : &l->st.ce)[0] += cnt;
        }
        l->st.packets += n;
        l->st.directions++;
        o->loss_done++;
    }
    if (r->p != r->end)
        r->bad = 1;
    free(o->loss_raw);
    o->loss_raw = *raw; /* kept for the chunk's receive times */
    o->loss_len = rlen;
    *raw = NULL;
    return QR_OK;
}

/* The receive times of every direction the loss blocks gave, and each packet's flags. A value out
 * of range sets r->bad. Returns 0 or QR_ENOMEM. */
static int read_received(struct opening *o, struct rd *r)
{
    qr_light *l = o->l;
    int rc = QR_OK;
    while (!r->bad && !rc && o->recv_dirs_done < o->loss_done) {
        struct ldir *d = &l->dirs[o->recv_dirs_done];
        uint64_t n = d->n, need = d->seen & QR_TC_AT_RECEIVER ? n - d->n_lost : 0;
        if (need > (uint64_t)(r->end - r->p) || !o->loss_raw || d->loss_off > o->loss_len) {
            r->bad = 1;
            break;
        }
        if (n && grow_packets(l, &o->pk_cap, o->pk_n + n)) {
            rc = qri_err(o->errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        d->at = o->pk_n;
        if (n) {
            memset(l->flags + o->pk_n, 0, n);
            memset(l->recv + o->pk_n, 0, n * sizeof *l->recv);
        }
        o->pk_n += n;
        struct rd q = {o->loss_raw + d->loss_off, o->loss_raw + o->loss_len, 0};
        for (int kind = 0; kind < 3; kind++) {
            uint64_t cnt = get_uv(&q), s = 0;
            for (uint64_t j = 0; j < cnt && !q.bad; j++) {
                s += get_uv(&q);
                if (s < n)
                    l->flags[d->at + s] |= kind == 0 ? F_LOST : kind == 1 ? F_DETECTED : F_CE;
            }
        }
        int64_t t = l->flows[o->recv_dirs_done / 2].start_ns;
        for (uint32_t j = 0; j < d->n && !r->bad; j++) {
            if ((l->flags[d->at + j] & F_CE) && (l->flags[d->at + j] & F_LOST))
                r->bad = 1; /* a lost packet did not arrive marked */
            if (l->flags[d->at + j] & F_LOST)
                continue;
            if (!(d->seen & QR_TC_AT_RECEIVER)) {
                l->flags[d->at + j] |= F_UNKNOWN;
                continue;
            }
            t = add_time(r, t, get_sv(r));
            l->recv[d->at + j] = t;
            l->st.received++;
        }
        o->recv_dirs_done++;
    }
    if (!rc && (r->p != r->end || o->recv_dirs_done != o->loss_done))
        r->bad = 1;
    return rc;
}

/* Threshold th's send-time samples, per direction. A value out of range sets r->bad. Returns 0 or
 * QR_ENOMEM. */
static int read_samples(struct opening *o, struct rd *r, unsigned th)
{
    qr_light *l = o->l;
    int rc = QR_OK;
    size_t *done = &o->dirs_done[th];
    while (r->p < r->end && !r->bad && *done < o->loss_done) {
        const struct ldir *d = &l->dirs[*done];
        uint64_t nr = get_count(r, d->n);
        if (d->seen & QR_TC_AT_SENDER ? d->n && !nr : nr != 0)
            r->bad = 1; /* samples are of observed send times only */
        qr_sample_record *v = malloc((nr ? nr : 1) * sizeof *v);
        if (!v) {
            rc = qri_err(o->errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        l->recs[th][*done] = v;
        l->n_recs[th][*done] = nr;
        uint64_t idx = 0;
        int64_t t = l->flows[*done / 2].start_ns;
        for (uint64_t j = 0; j < nr && !r->bad; j++) {
            uint64_t di = get_uv(r);
            if ((j && !di) || (!j && di) || idx + di >= d->n)
                r->bad = 1;
            idx += di;
            t = add_time(r, t, get_sv(r));
            v[j].index = idx;
            v[j].time_ns = t;
            v[j].gap_num = get_sv(r);
            uint64_t den = get_uv(r);
            if (!den || den > INT64_MAX || t < 0 || t > QR_TIME_MAX)
                r->bad = 1;
            v[j].gap_den = (int64_t)den;
        }
        l->st.th_records[th] += nr;
        l->st.sample_records += nr;
        (*done)++;
    }
    if (!rc && r->p != r->end)
        r->bad = 1;
    return rc;
}

/* Threshold th's injection order, per host (one block per threshold). A value out of range sets
 * r->bad. Returns 0 or QR_ENOMEM. */
static int read_order(struct opening *o, struct rd *r, unsigned th)
{
    qr_light *l = o->l;
    int rc = QR_OK;
    if (o->order_done[th]) /* one per threshold */
        r->bad = 1;
    for (uint32_t h = 0; h < l->n_hosts && !r->bad && !rc; h++) {
        struct lhost_order *ho = &l->order[th][h];
        uint64_t n = get_count(r, (uint64_t)1 << 32);
        ho->g = calloc(n ? n : 1, sizeof *ho->g);
        if (!ho->g) {
            rc = qri_err(o->errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        ho->n = n;
        uint64_t pos = 0;
        for (uint64_t g = 0; g < n && !r->bad; g++) {
            uint64_t dp = get_uv(r), m = get_count(r, 1u << 24);
            if ((g && !dp) || m < 2)
                r->bad = 1;
            pos += dp;
            ho->g[g].pos = pos;
            ho->g[g].m = (uint32_t)m;
            ho->g[g].rank = calloc(m ? m : 1, sizeof *ho->g[g].rank);
            if (!ho->g[g].rank) {
                rc = qri_err(o->errbuf, QR_ENOMEM, "out of memory");
                break;
            }
            uint8_t *seen = calloc(m ? m : 1, 1);
            for (uint64_t q = 0; q < m && !r->bad && seen; q++) {
                uint64_t rk = get_uv(r);
                if (rk >= m || seen[rk])
                    r->bad = 1;
                else
                    seen[rk] = 1, ho->g[g].rank[q] = (uint32_t)rk;
            }
            if (!seen)
                rc = qri_err(o->errbuf, QR_ENOMEM, "out of memory");
            free(seen);
        }
    }
    o->order_done[th]++;
    if (!rc && r->p != r->end)
        r->bad = 1;
    return rc;
}

/* The header block (parse_header), and room for what the blocks after it hold. Returns 0, the
 * parser's error or QR_ENOMEM. */
static int read_header(qr_light *l, const char *raw, size_t rlen, const char *dir, char *errbuf)
{
    int rc = parse_header(l, raw, rlen, dir, errbuf);
    if (rc)
        return rc;
    l->flows = malloc((l->n_flows ? l->n_flows : 1) * sizeof *l->flows);
    l->n_dirs = 2 * l->n_flows;
    l->dirs = calloc(l->n_dirs + 1, sizeof *l->dirs);
    for (size_t i = 0; i < l->st.n_th; i++) {
        l->recs[i] = calloc(l->n_dirs + 1, sizeof *l->recs[i]);
        l->n_recs[i] = calloc(l->n_dirs + 1, sizeof *l->n_recs[i]);
        l->order[i] = calloc(l->n_hosts, sizeof *l->order[i]);
        if (!l->recs[i] || !l->n_recs[i] || !l->order[i])
            rc = QR_ENOMEM;
    }
    if (rc || !l->flows || !l->dirs)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    return QR_OK;
}

/* The end block: the counts of what came before, and the recording's id; every part complete.
 * Returns 0 or QR_EFORMAT naming what disagrees. */
static int read_end(struct opening *o, struct rd *r, const char *path)
{
    qr_light *l = o->l;
    uint64_t c = get_uv(r), p = get_uv(r);
    size_t id_len = r->bad ? 0 : (size_t)(r->end - r->p);
    if (id_len < sizeof l->id) { /* the recording's id: the rest of the block */
        memcpy(l->id, r->p, id_len);
        l->id[id_len] = 0;
        for (size_t k = 0; k < id_len; k++)
            if (!strchr("0123456789abcdef", l->id[k]) || !l->id[k])
                r->bad = 1;
        r->p = r->end;
    }
    if (r->bad || r->p != r->end || c != l->n_flows || o->flows_done != l->n_flows ||
        o->calls_done != l->n_flows || o->loss_done != l->n_dirs || p != l->st.packets ||
        o->recv_dirs_done != l->n_dirs)
        return qri_err(o->errbuf, QR_EFORMAT,
                       "%s: the end block counts %" PRIu64 " connections and %" PRIu64
                       " packets; the blocks before it hold %zu connections, %zu of their "
                       "calls, %zu directions and %" PRIu64 " packets",
                       path, c, p, o->flows_done, o->calls_done, o->loss_done, l->st.packets);
    for (size_t i = 0; i < l->st.n_th; i++)
        if (o->dirs_done[i] != l->n_dirs || o->order_done[i] != 1)
            return qri_err(o->errbuf, QR_EFORMAT,
                           "%s: threshold %" PRId64 " ns: samples of %zu of %zu directions, "
                           "%zu order blocks",
                           path, l->st.th_ns[i], o->dirs_done[i], l->n_dirs, o->order_done[i]);
    return QR_OK;
}

/* After the end block: the connections' flow table and every direction's last inferred send
 * time at the smallest threshold. Returns 0 or QR_EFORMAT. */
static int finish_open(qr_light *l, const char *path, char *errbuf)
{
    char detail[QR_ERRBUF_SIZE];
    qr_topology *topo = NULL;
    int rc = qr_topology_of_config(&topo, qr_scenario_config(l->scenario));
    if (!rc)
        rc = qr_flow_table_for_topology(&l->ft, l->flows, l->n_flows, topo, detail);
    else
        snprintf(detail, sizeof detail, "bad topology");
    qr_topology_destroy(topo);
    if (rc)
        return qri_err(errbuf, QR_EFORMAT, "%s: its connections: %s", path, detail);
    l->st.connections = l->n_flows;
    for (size_t d = 0; d < l->n_dirs; d++) {
        int64_t t = l->flows[d / 2].start_ns;
        if (l->dirs[d].n && l->n_recs[0][d] &&
            qr_sample_infer(l->recs[0][d], l->n_recs[0][d], l->dirs[d].n - 1, &t) != QR_OK)
            return qri_err(errbuf, QR_EFORMAT, "%s: direction %zu: its samples do not infer", path,
                           d);
        l->dirs[d].last_send = t;
    }
    return QR_OK;
}

int qr_light_open(qr_light **out, const char *path, char *errbuf)
{
    *out = NULL;
    qr_light *l = calloc(1, sizeof *l);
    if (!l)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    snprintf(l->path, sizeof l->path, "%s", path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        qr_light_close(l);
        return qri_err(errbuf, e == ENOENT ? QR_ENOENT : QR_EIO, "%s: %s", path, strerror(e));
    }
    int rc = QR_OK;
    uint8_t magic[8], hdr[BLOCK_HDR];
    uint8_t *cbuf = NULL, *raw = NULL;
    struct opening o = {.l = l, .errbuf = errbuf};
    uint64_t block_no = 0, offset = 8;
    int ended = 0, have_header = 0;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, MAGIC, 8)) {
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not a light record (no %s magic)", path, "QRLIGHT1");
        goto out;
    }
    l->st.file_bytes = 8;
    while (!rc && !ended) {
        size_t got = fread(hdr, 1, BLOCK_HDR, f);
        block_no++;
        if (got != BLOCK_HDR) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: cut at byte %" PRIu64 " (block %" PRIu64 "): no end block", path,
                         offset + got, block_no);
            break;
        }
        unsigned part = hdr[0], th = hdr[1];
        uint32_t rlen = rd32(hdr + 4), clen = rd32(hdr + 8), crc = rd32(hdr + 12);
        if ((part >= QR_LIGHT_PARTS && part != PART_END) || rlen > MAX_BLOCK || clen > MAX_BLOCK ||
            hdr[2] || hdr[3] || (part == QR_LIGHT_HEADER && !rlen) ||
            ((part == QR_LIGHT_SAMPLES || part == QR_LIGHT_ORDER) && th >= l->st.n_th) ||
            (part != QR_LIGHT_SAMPLES && part != QR_LIGHT_ORDER && th) ||
            (part != QR_LIGHT_HEADER && !have_header) || (part == QR_LIGHT_HEADER && have_header)) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: block %" PRIu64 " (byte %" PRIu64 "): a bad block header (part %u, "
                         "threshold %u, %u bytes)",
                         path, block_no, offset, part, th, rlen);
            break;
        }
        free(cbuf);
        free(raw);
        cbuf = malloc(clen + 1);
        raw = malloc(rlen + 1);
        if (!cbuf || !raw) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            break;
        }
        uLongf have = rlen;
        if (fread(cbuf, 1, clen, f) != clen ||
            (rlen && (uncompress(raw, &have, cbuf, clen) != Z_OK || have != rlen)) ||
            (uint32_t)crc32(0L, raw, rlen) != crc) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: block %" PRIu64 " (%s, byte %" PRIu64
                         "): cut short, not deflated data, or its CRC does not match",
                         path, block_no, part == PART_END ? "end" : qr_light_part_name(part),
                         offset);
            break;
        }
        raw[rlen] = 0; /* the header is read as text */
        offset += BLOCK_HDR + clen;
        l->st.file_bytes += BLOCK_HDR + clen;
        if (part < QR_LIGHT_PARTS) {
            l->st.bytes[part] += BLOCK_HDR + clen;
            l->st.raw[part] += rlen;
            if (part == QR_LIGHT_SAMPLES || part == QR_LIGHT_ORDER)
                l->st.th_bytes[th] += BLOCK_HDR + clen;
        }
        struct rd r = {raw, raw + rlen, 0};
        const uint8_t *block_start = raw; /* raw may be handed on (the loss part keeps it) */
        const char *what = "";
        if (part == QR_LIGHT_HEADER) {
            have_header = 1;
            rc = read_header(l, (const char *)raw, rlen, dir, errbuf);
            continue;
        } else if (part == QR_LIGHT_CONFIG) {
            what = "config";
            rc = read_config(&o, &r);
        } else if (part == QR_LIGHT_CALLS) {
            what = "calls";
            rc = read_calls(&o, &r);
        } else if (part == QR_LIGHT_LOSS) {
            what = "loss";
            rc = read_loss(&o, &r, &raw, rlen);
        } else if (part == QR_LIGHT_RECEIVED) {
            what = "received";
            rc = read_received(&o, &r);
        } else if (part == QR_LIGHT_SAMPLES) {
            what = "samples";
            rc = read_samples(&o, &r, th);
        } else if (part == QR_LIGHT_ORDER) {
            what = "order";
            rc = read_order(&o, &r, th);
        } else if (part == PART_END) {
            what = "end";
            rc = read_end(&o, &r, path);
            ended = 1;
            continue;
        }
        if (!rc && r.bad)
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: block %" PRIu64 " (%s, byte %" PRIu64
                         "): a value out of range or cut short, near byte %zu of its %u",
                         path, block_no, what, offset - BLOCK_HDR - clen,
                         (size_t)(r.p - block_start), rlen);
    }
    if (!rc && fgetc(f) != EOF)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: bytes after the end block", path);
    if (!rc)
        rc = finish_open(l, path, errbuf);
out:
    free(cbuf);
    free(raw);
    free(o.loss_raw);
    fclose(f);
    if (rc) {
        qr_light_close(l);
        return rc;
    }
    *out = l;
    return QR_OK;
}

const qr_scenario *qr_light_scenario(const qr_light *l)
{
    return l->scenario;
}
const qr_flow_table *qr_light_flows(const qr_light *l)
{
    return l->ft;
}
const char *qr_light_unregenerable(const qr_light *l)
{
    return l->why[0] ? l->why : NULL;
}
const char *qr_light_scenario_text(const qr_light *l)
{
    return l->scenario_text;
}
const char *qr_light_path(const qr_light *l)
{
    return l->path;
}
const int64_t *qr_light_clock_offsets(const qr_light *l)
{
    return l->offsets;
}

const char *qr_light_id(const qr_light *l)
{
    return l->id;
}
void qr_light_stats_get(const qr_light *l, qr_light_stats *out)
{
    *out = l->st;
}

uint32_t qr_light_sent(const qr_light *l, uint32_t dir)
{
    return dir < l->n_dirs ? l->dirs[dir].n : 0;
}

int64_t qr_light_last_ns(const qr_light *l, uint32_t flow)
{
    if (flow >= l->n_flows)
        return 0;
    int64_t t = l->flows[flow].start_ns;
    for (uint32_t k = 0; k < 2; k++) {
        const struct ldir *d = &l->dirs[2 * flow + k];
        /* the samples are on the sender's clock */
        uint32_t host = k ? l->flows[flow].dst : l->flows[flow].src;
        int64_t s = d->last_send - l->offsets[host];
        if (d->n && s > t)
            t = s;
    }
    return t;
}

int qr_light_fate(const qr_light *l, uint32_t dir, uint32_t seq, int *lost, int64_t *arrive_ns,
                  int *ce)
{
    if (dir >= l->n_dirs || seq >= l->dirs[dir].n)
        return 0;
    size_t at = l->dirs[dir].at + seq;
    if (l->flags[at] & F_UNKNOWN)
        return 0;
    *lost = (l->flags[at] & F_LOST) != 0;
    *ce = (l->flags[at] & F_CE) != 0;
    uint32_t to = dir % 2 ? l->flows[dir / 2].src : l->flows[dir / 2].dst;
    *arrive_ns = *lost ? 0 : l->recv[at] - l->offsets[to];
    return 1;
}

/* ---- the recording a replay reads ---- */

static int same_headers(const qr_packet *a, const qr_packet *b)
{
    return a->tcp_flags == b->tcp_flags && a->seq == b->seq && a->ack == b->ack &&
           a->window == b->window && a->ip_len == b->ip_len && a->ip_id == b->ip_id &&
           a->tos == b->tos && a->ttl == b->ttl && a->tcp_opt_len == b->tcp_opt_len &&
           a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->src_port == b->src_port &&
           a->dst_port == b->dst_port;
}

/* Every packet of check against the regenerated one of r (whose hosts hold their directions in
 * order, each from at[d]). */
static int check_packets(const qr_recording *r, const qr_recording *check, const size_t *at,
                         const size_t *n, size_t n_dirs, uint64_t *compared, char *errbuf)
{
    size_t *seen = calloc(n_dirs + 1, sizeof *seen);
    if (!seen)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = QR_OK;
    uint64_t count = 0;
    for (uint32_t h = 0; !rc && h < qr_recording_hosts(check); h++) {
        size_t m;
        const qr_rec_packet *p = qr_recording_packets(check, h, &m);
        for (size_t i = 0; !rc && i < m; i++) {
            uint32_t d = p[i].dir;
            if (d >= n_dirs || p[i].seq >= n[d]) {
                rc = qri_err(errbuf, QR_EVALUE,
                             "flow %u %s: the recording has packet %u, %zu were regenerated", d / 2,
                             d % 2 ? "ACKs" : "data", p[i].seq, d < n_dirs ? n[d] : 0);
                break;
            }
            const qr_packet *a = &p[i].pk, *b = &r->hosts[qr_flow_table_dir_src(r->flows, d)]
                                                     .pk[at[d] + p[i].seq]
                                                     .pk;
            if (!same_headers(a, b))
                rc = qri_err(errbuf, QR_EVALUE,
                             "flow %u %s packet %u: regenerated flags 0x%02x seq %u ack %u win %u "
                             "len %u id %u tos 0x%02x; the recording has flags 0x%02x seq %u ack "
                             "%u win %u len %u id %u tos 0x%02x",
                             d / 2, d % 2 ? "ACKs" : "data", p[i].seq, b->tcp_flags, b->seq, b->ack,
                             b->window, b->ip_len, b->ip_id, b->tos, a->tcp_flags, a->seq, a->ack,
                             a->window, a->ip_len, a->ip_id, a->tos);
            seen[d]++;
            count++;
        }
    }
    for (size_t d = 0; !rc && d < n_dirs; d++)
        if (seen[d] != n[d])
            rc = qri_err(errbuf, QR_EVALUE,
                         "flow %zu %s: %zu packets regenerated, the recording has %zu", d / 2,
                         d % 2 ? "ACKs" : "data", n[d], seen[d]);
    free(seen);
    if (!rc && compared)
        *compared = count;
    return rc;
}

int qr_recording_from_light(qr_recording **out, const qr_light *l, const qr_packet *const *packets,
                            const size_t *n, const qr_recording *check, uint64_t *compared,
                            char *errbuf)
{
    *out = NULL;
    if (l->why[0])
        return qri_err(errbuf, QR_ESTATE, "%s: its packets cannot be regenerated: %s", l->path,
                       l->why);
    for (size_t d = 0; d < l->n_dirs; d++)
        if (n[d] != l->dirs[d].n)
            return qri_err(errbuf, QR_EVALUE,
                           "direction %zu (flow %zu): %zu packets regenerated, the record has %u",
                           d, d / 2, n[d], l->dirs[d].n);
    qr_recording *r = calloc(1, sizeof *r);
    if (!r)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    char detail[QR_ERRBUF_SIZE];
    qr_topology *topo = NULL;
    int rc = qr_scenario_create(&r->scenario);
    if (!rc)
        rc = qr_scenario_load_string(r->scenario, l->scenario_text, l->path, ".", detail);
    if (!rc)
        rc = qr_topology_of_config(&topo, qr_scenario_config(r->scenario));
    if (!rc)
        rc = qr_flow_table_for_topology(&r->flows, l->flows, l->n_flows, topo, detail);
    qr_topology_destroy(topo);
    if (rc) {
        qr_recording_close(r);
        return qri_err(errbuf, rc, "%s: %s", l->path, detail);
    }
    snprintf(r->id, sizeof r->id, "%s", l->id);
    r->n_hosts = l->n_hosts;
    r->hosts = calloc(l->n_hosts, sizeof *r->hosts);
    r->dir = strdup(".");
    size_t n_det = 0;
    for (size_t i = 0; i < l->st.packets; i++)
        n_det += (l->flags[i] & F_DETECTED) != 0;
    r->detected = malloc((n_det ? n_det : 1) * sizeof *r->detected);
    r->received = malloc(sizeof *r->received);
    if (!r->hosts || !r->dir || !r->detected || !r->received) {
        qr_recording_close(r);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    r->network_known = 1;
    /* each host's packets: its directions in order, each in its order */
    for (size_t d = 0; d < l->n_dirs; d++)
        r->hosts[qr_flow_table_dir_src(r->flows, (uint32_t)d)].cap += n[d];
    for (uint32_t h = 0; h < l->n_hosts; h++) {
        struct host_pk *hp = &r->hosts[h];
        hp->pk = malloc((hp->cap ? hp->cap : 1) * sizeof *hp->pk);
        if (!hp->pk) {
            qr_recording_close(r);
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
        }
    }
    size_t *at = malloc((l->n_dirs + 1) * sizeof *at); /* each direction's first in its host */
    if (!at) {
        qr_recording_close(r);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (size_t d = 0; d < l->n_dirs; d++) {
        /* the runtime's addresses and ports (the replay ran on its own two hosts), the sender's
         * clock */
        const qr_flow *f = qr_flow_table_flow(r->flows, (uint32_t)(d / 2));
        uint32_t src = d % 2 ? f->dst : f->src, dst = d % 2 ? f->src : f->dst;
        uint16_t sender = qr_flow_table_sender_port(r->flows, (uint32_t)(d / 2));
        struct host_pk *hp = &r->hosts[src];
        at[d] = hp->n;
        for (size_t j = 0; j < n[d]; j++) {
            uint8_t fl = l->flags[l->dirs[d].at + j];
            qr_rec_packet *p = &hp->pk[hp->n];
            *p = (qr_rec_packet){packets[d][j], (uint32_t)d, (uint32_t)j,
                                 (uint8_t)((fl & F_DETECTED) != 0)};
            p->pk.time_ns += l->offsets[src];
            p->pk.src_ip = qr_flow_table_host_addr(r->flows, src);
            p->pk.dst_ip = qr_flow_table_host_addr(r->flows, dst);
            p->pk.src_port = d % 2 ? QR_SINK_PORT : sender;
            p->pk.dst_port = d % 2 ? sender : QR_SINK_PORT;
            hp->n++;
            if (fl & F_DETECTED)
                r->detected[r->n_detected++] = qr_packet_id((uint32_t)d, (uint32_t)j);
        }
    }
    qsort(r->detected, r->n_detected, sizeof *r->detected, qri_cmp_u64);
    int crc = check ? check_packets(r, check, at, n, l->n_dirs, compared, errbuf) : QR_OK;
    free(at);
    if (crc) {
        qr_recording_close(r);
        return crc;
    }
    *out = r;
    return QR_OK;
}

int qr_light_plan(qr_plan **out, const qr_light *l, const qr_recording *rec,
                  qr_sampling_method method, int64_t th_ns, qr_sampling_stats *stats,
                  qr_row_sample_record **records, size_t *n_records, char *errbuf)
{
    *out = NULL;
    size_t ti = 0;
    while (ti < l->st.n_th && l->st.th_ns[ti] != th_ns)
        ti++;
    if (ti == l->st.n_th || method != l->method) {
        char list[256] = "";
        for (size_t i = 0; i < l->st.n_th; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%" PRId64 " ns",
                     i ? ", " : "", l->st.th_ns[i]);
        return qri_err(errbuf, QR_EINVAL,
                       "%s holds send times sampled (%s) at %s; not at %" PRId64 " ns (%s)",
                       l->path, l->method == QR_SAMPLING_GAP ? "gap" : "rate", list, th_ns,
                       method == QR_SAMPLING_GAP ? "gap" : "rate");
    }
    if (qr_recording_hosts(rec) != l->n_hosts || strcmp(qr_recording_id(rec), l->id))
        return qri_err(errbuf, QR_EINVAL, "%s: the packets are not regenerated from this record",
                       l->path);
    qr_sampling_stats st = {0, 0, 0};
    size_t n_out = 0;
    qr_row_sample_record *o =
        records ? malloc((l->st.th_records[ti] ? l->st.th_records[ti] : 1) * sizeof *o) : NULL;
    qr_plan *p = NULL;
    uint32_t *group = NULL;
    size_t gcap = 0;
    int rc = records && !o ? QR_ENOMEM : qri_plan_alloc(&p, rec);
    for (uint32_t h = 0; !rc && h < l->n_hosts; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(rec, h, &n);
        /* the host's packets: its directions in order, each in its order */
        for (size_t i = 0; !rc && i < n;) {
            uint32_t d = pk[i].dir;
            const qr_sample_record *rv = l->recs[ti][d];
            size_t nr = l->n_recs[ti][d], pos = 0;
            size_t e = i;
            for (; e < n && pk[e].dir == d; e++)
                if (qr_sample_infer_next(rv, nr, &pos, pk[e].seq, &p->time[h][e]) != QR_OK) {
                    rc = qri_err(errbuf, QR_EVALUE, "%s: direction %u packet %u: no inference",
                                 l->path, d, pk[e].seq);
                    break;
                }
            st.packets += e - i;
            st.records += nr;
            for (size_t j = 0; !rc && o && j < nr; j++)
                o[n_out++] = (qr_row_sample_record){d, rv[j].index, rv[j].time_ns, rv[j].gap_num,
                                                    rv[j].gap_den};
            i = e;
        }
        if (rc || (rc = qri_plan_order_host(p, h)) != QR_OK)
            break;
        /* the groups of equal times whose send order the record keeps */
        const struct lhost_order *g = &l->order[ti][h];
        uint32_t *ord = p->order[h];
        for (size_t k = 0; k < g->n; k++) {
            const struct lgroup *x = &g->g[k];
            if (x->pos + x->m > n) {
                rc = qri_err(errbuf, QR_EFORMAT, "%s: host %u: an order group beyond its packets",
                             l->path, h);
                break;
            }
            if (x->m > gcap) {
                free(group);
                if (!(group = malloc((gcap = x->m) * sizeof *group))) {
                    rc = QR_ENOMEM;
                    break;
                }
            }
            for (uint32_t q = 0; q < x->m; q++)
                group[q] = ord[x->pos + x->rank[q]];
            memcpy(ord + x->pos, group, x->m * sizeof *group);
        }
    }
    free(group);
    if (rc) {
        free(o);
        qr_plan_free(p);
        return rc == QR_ENOMEM ? qri_err(errbuf, rc, "sampling: out of memory") : rc;
    }
    if (stats)
        *stats = st;
    if (records) {
        *records = o;
        *n_records = n_out;
    }
    *out = p;
    return QR_OK;
}
