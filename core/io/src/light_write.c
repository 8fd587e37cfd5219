/* DETER's light record (light.h), written from a runtime's or an import's recording. */
#define _GNU_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "light_internal.h"
#include "qreplay/fs.h"
#include "qreplay/light.h"
#include "qreplay/tcpconn.h"
#include "qreplay/txn.h"
#include "recording_internal.h"

#define CHUNK 1024               /* connections per chunk */
#define CHUNK_PACKETS (1u << 20) /* ... or at this many packets */

static void put_sv(struct qri_lbuf *w, int64_t v)
{
    qri_lbuf_uv(w, qri_zigzag(v));
}

struct writer {
    FILE *f;
    const char *path;
    qr_light_stats *st;
    char *err;
};

/* One block: raw deflated at `level` (9; the end block 0, stored: its recording id, which
 * changes with the code's version, then costs the same bytes whatever its digits). */
static int block_at(struct writer *w, unsigned part, unsigned th, const struct qri_lbuf *raw,
                    int level)
{
    if (raw->oom)
        return qri_err(w->err, QR_ENOMEM, "light record: out of memory");
    if (raw->n > MAX_BLOCK)
        return qri_err(w->err, QR_EVALUE, "%s: its %s part of one chunk exceeds %u bytes", w->path,
                       part < QR_LIGHT_PARTS ? qr_light_part_name(part) : "end", MAX_BLOCK);
    size_t total;
    int rc = qri_light_block_write(w->f, w->path, part, th, raw->b, raw->n, level, &total, w->err);
    if (rc)
        return rc;
    if (part < QR_LIGHT_PARTS) {
        w->st->bytes[part] += total;
        w->st->raw[part] += raw->n;
        if ((part == QR_LIGHT_SAMPLES || part == QR_LIGHT_ORDER) && th < QR_LIGHT_MAX_TH)
            w->st->th_bytes[th] += total;
    }
    w->st->file_bytes += total;
    return QR_OK;
}

static int block(struct writer *w, unsigned part, unsigned th, const struct qri_lbuf *raw)
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
                      size_t *n_pat, size_t *cap_pat, struct qri_lbuf *calls, uint64_t *n_calls,
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
    qri_lbuf_uv(calls, n);
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
        qri_lbuf_uv(calls, k);
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

static void header_text(struct qri_lbuf *b, const qr_recording *rec, const int64_t *offsets,
                        qr_sampling_method method, const int64_t *th, size_t n_th, uint64_t at_once,
                        uint64_t gates, char *scen, size_t scen_len)
{
    char line[256];
    snprintf(line, sizeof line, "kind=qreplay light record\nversion=2\nrecording_kind=%s\n",
             qr_recording_imported(rec) ? "import" : "runtime");
    qri_lbuf_put(b, line, strlen(line));
    snprintf(
        line, sizeof line, "hosts=%u\nflows=%zu\nmethod=%s\nthresholds=", qr_recording_hosts(rec),
        qr_flow_table_flows(qr_recording_flows(rec)), method == QR_SAMPLING_GAP ? "gap" : "rate");
    qri_lbuf_put(b, line, strlen(line));
    for (size_t i = 0; i < n_th; i++) {
        snprintf(line, sizeof line, "%s%" PRId64, i ? "," : "", th[i]);
        qri_lbuf_put(b, line, strlen(line));
    }
    qri_lbuf_put(b, "\noffsets=", 9);
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
        snprintf(line, sizeof line, "%s%" PRId64, h ? "," : "", offsets ? offsets[h] : 0);
        qri_lbuf_put(b, line, strlen(line));
    }
    snprintf(line, sizeof line, "\nat_once=%" PRIu64 "\ngates=%" PRIu64, at_once, gates);
    qri_lbuf_put(b, line, strlen(line));
    qri_lbuf_put(b, "\nscenario=\n", 11);
    qri_lbuf_put(b, scen, scen_len);
}

/* One qr_light_write: what it reads, the buffers it fills, and the file it writes. */
struct lw {
    const qr_recording *rec;
    const qr_flow_table *ft;
    size_t n_flows;
    uint32_t n_hosts;
    int imported;
    qr_sampler_cfg cfg;
    const int64_t *th_ns;
    size_t n_th;
    const qr_light_timing *timing; /* per connection: how its timing is kept (or NULL) */
    uint64_t header_gates;         /* the gates of its connections, said in the header */
    qr_light_stats st;
    struct writer w;
    char tmp[4200];
    struct dirs d;
    struct qri_lbuf list; /* a loss list being written */
    struct qri_lbuf part[QR_LIGHT_PARTS];
    struct qri_lbuf *samp; /* per th */
    int64_t **inferred;    /* per th: per host packet (flat) */
    size_t *host_base;     /* per host: its first packet in inferred[th] */
    qr_sample_record *recs;
    int64_t *times;
    struct okey *keys, *keys2; /* the order part's sorts; keys2 also the sampler's scratch */
    qr_sampler *sm;
    int64_t prev_start; /* the connections' starts, delta-coded across chunks */
};

static int lw_check(const qr_recording *rec, const int64_t *th_ns, size_t n_th, const char *path,
                    char *errbuf)
{
    if (!rec || !path || !th_ns || n_th < 1 || n_th > QR_LIGHT_MAX_TH)
        return qri_err(errbuf, QR_EINVAL, "light record: 1 to %d thresholds", QR_LIGHT_MAX_TH);
    for (size_t i = 0; i < n_th; i++)
        if (th_ns[i] < 0 || th_ns[i] > QR_TIME_MAX || (i && th_ns[i] <= th_ns[i - 1]))
            return qri_err(errbuf, QR_EINVAL,
                           "light record: the thresholds must be increasing and not negative");
    if (!qr_recording_has_packets(rec))
        return qri_err(errbuf, QR_ESTATE, "light record: read the recording whole");
    if (!qr_recording_imported(rec) && !qr_recording_has_received(rec))
        return qri_err(errbuf, QR_ESTATE,
                       "light record: the recording has no /received table (the receive times "
                       "the isolated replay needs)");
    return QR_OK;
}

/* The per-direction index, and room for the largest host's packets at every threshold. */
static int lw_alloc(struct lw *s)
{
    s->samp = calloc(s->n_th, sizeof *s->samp);
    s->inferred = calloc(s->n_th, sizeof *s->inferred);
    s->host_base = calloc(s->n_hosts + 1, sizeof *s->host_base);
    if (!s->samp || !s->inferred || !s->host_base || dirs_of(s->rec, &s->d))
        return QR_ENOMEM;
    size_t total = 0, most = 1;
    for (uint32_t h = 0; h < s->n_hosts; h++) {
        size_t n;
        qr_recording_packets(s->rec, h, &n);
        s->host_base[h] = total;
        total += n;
        if (n > most)
            most = n;
    }
    s->host_base[s->n_hosts] = total;
    s->recs = malloc(most * sizeof *s->recs);
    s->times = malloc(most * sizeof *s->times);
    s->keys = malloc(most * sizeof *s->keys);
    s->keys2 = malloc(most * sizeof *s->keys2);
    for (size_t i = 0; i < s->n_th; i++)
        if (!(s->inferred[i] = malloc((total + 1) * sizeof **s->inferred)))
            return QR_ENOMEM;
    return !s->recs || !s->times || !s->keys || !s->keys2 ? QR_ENOMEM : QR_OK;
}

/* The file created under a temporary name, its magic and its header block. */
static int lw_begin(struct lw *s, const int64_t *offsets, qr_sampling_method method)
{
    char *errbuf = s->w.err, *scen = NULL;
    size_t scen_len = 0;
    FILE *ms = open_memstream(&scen, &scen_len);
    if (!ms || scenario_text(qr_recording_scenario(s->rec), ms) || fclose(ms)) {
        free(scen);
        return qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
    }
    int rc = QR_OK;
    s->w.f = fopen(s->tmp, "wb");
    if (!s->w.f)
        rc = qri_err(errbuf, QR_EIO, "%s: cannot create: %s", s->tmp, strerror(errno));
    else
        qr_partial_add(s->tmp);
    if (!rc && fwrite(MAGIC, 1, 8, s->w.f) != 8)
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write: %s", s->w.path, strerror(errno));
    if (!rc) {
        s->st.file_bytes = 8;
        header_text(&s->part[QR_LIGHT_HEADER], s->rec, offsets, method, s->th_ns, s->n_th,
                    s->st.at_once, s->header_gates, scen, scen_len);
        rc = block(&s->w, QR_LIGHT_HEADER, 0, &s->part[QR_LIGHT_HEADER]);
    }
    free(scen);
    return rc;
}

/* Direction dir's loss lists: packets sent; lost (no receive record), detected, CE:
 * delta-coded. */
static void lw_loss(struct lw *s, uint32_t dir, size_t n, unsigned seen)
{
    struct qri_lbuf *L = &s->part[QR_LIGHT_LOSS];
    s->st.unobserved += seen != (QR_TC_AT_SENDER | QR_TC_AT_RECEIVER);
    qri_lbuf_uv(L, seen);
    qri_lbuf_uv(L, n);
    for (int kind = 0; kind < 3; kind++) { /* its count, then its list */
        uint64_t cnt = 0, last = 0;
        s->list.n = 0;
        for (size_t j = 0; j < n; j++)
            if (in_list(s->rec, kind, seen, qr_packet_id(dir, (uint32_t)j))) {
                qri_lbuf_uv(&s->list, j - last);
                last = j;
                cnt++;
            }
        qri_lbuf_uv(L, cnt);
        qri_lbuf_put(L, s->list.b, s->list.n);
        if (s->list.oom)
            L->oom = 1;
        (kind == 0 ? &s->st.lost : kind == 1 ? &s->st.detected : &s->st.ce)[0] += cnt;
    }
}

/* Direction dir's sample records at threshold i, and every packet's inferred send time. */
static int lw_samples(struct lw *s, size_t i, uint32_t dir, const qr_flow *fl, unsigned seen)
{
    uint32_t host = qr_flow_table_dir_src(s->ft, dir);
    size_t nh, n = s->d.start[dir + 1] - s->d.start[dir], nr = 0;
    const qr_rec_packet *hp = qr_recording_packets(s->rec, host, &nh);
    const uint32_t *ix = s->d.idx + s->d.start[dir];
    int64_t *inf = s->inferred[i] + s->host_base[host];
    s->cfg.th_ns = s->th_ns[i];
    qr_sampler_destroy(s->sm);
    s->sm = NULL;
    if (qr_sampler_create(&s->sm, &s->cfg))
        return qri_err(s->w.err, QR_EINVAL, "light record: bad threshold");
    if (n && (seen & QR_TC_AT_SENDER)) {
        int64_t *tmpinf = (int64_t *)s->keys2; /* room for n */
        int rc = qr_sample_series(s->sm, s->times, n, s->recs, &nr, tmpinf, NULL, s->w.err);
        if (rc)
            return rc;
        for (size_t j = 0; j < n; j++)
            inf[ix[j]] = tmpinf[j];
    }
    if (!(seen & QR_TC_AT_SENDER)) /* its send times are not observations */
        for (size_t j = 0; j < n; j++)
            inf[ix[j]] = hp[ix[j]].pk.time_ns;
    struct qri_lbuf *b = &s->samp[i];
    qri_lbuf_uv(b, nr);
    uint64_t pidx = 0;
    int64_t pt = fl->start_ns;
    for (size_t j = 0; j < nr; j++) {
        qri_lbuf_uv(b, s->recs[j].index - pidx);
        put_sv(b, s->recs[j].time_ns - pt);
        put_sv(b, s->recs[j].gap_num);
        qri_lbuf_uv(b, (uint64_t)s->recs[j].gap_den);
        pidx = s->recs[j].index;
        pt = s->recs[j].time_ns;
    }
    s->st.th_records[i] += nr;
    s->st.sample_records += nr;
    return QR_OK;
}

/* One direction of connection fl: its loss lists, receive times and samples. */
static int lw_direction(struct lw *s, uint32_t dir, const qr_flow *fl)
{
    size_t nh;
    const qr_rec_packet *hp = qr_recording_packets(s->rec, qr_flow_table_dir_src(s->ft, dir), &nh);
    const uint32_t *ix = s->d.idx + s->d.start[dir];
    size_t n = s->d.start[dir + 1] - s->d.start[dir];
    s->st.directions++;
    s->st.packets += n;
    unsigned seen = qr_recording_seen(s->rec, dir);
    lw_loss(s, dir, n, seen);
    /* receive times, delta-coded from the flow's start, where kept (1) or left out (0) */
    int64_t prev = fl->start_ns;
    int keep = !(s->timing && s->timing[dir / 2].at_once);
    if (seen & QR_TC_AT_RECEIVER)
        qri_lbuf_uv(&s->part[QR_LIGHT_RECEIVED], (uint64_t)keep);
    for (size_t j = 0; keep && (seen & QR_TC_AT_RECEIVER) && j < n; j++) {
        int64_t t;
        if (qr_recording_received(s->rec, qr_packet_id(dir, (uint32_t)j), &t) != QR_OK)
            continue;
        put_sv(&s->part[QR_LIGHT_RECEIVED], t - prev);
        prev = t;
        s->st.received++;
    }
    for (size_t j = 0; j < n; j++)
        s->times[j] = hp[ix[j]].pk.time_ns;
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < s->n_th; i++)
        rc = lw_samples(s, i, dir, fl, seen);
    return rc;
}

/* Connection f's gates into the timers part, where its receive times are left out: per
 * direction `uv n`, then per gate the packet (`uv`, from the previous gate's + 1) and the sends
 * (`uv`). A gate out of order, past its direction's packets, on a lost packet or needing more
 * sends than its receiver made is refused (QR_EINVAL). */
static int lw_gates(struct lw *s, uint32_t f)
{
    if (!s->timing || !s->timing[f].at_once)
        return QR_OK;
    const qr_light_timing *t = &s->timing[f];
    struct qri_lbuf *b = &s->part[QR_LIGHT_TIMERS];
    size_t g = 0;
    for (uint32_t d = 0; d < 2; d++) {
        uint32_t dir = 2 * f + d;
        size_t n = s->d.start[dir + 1] - s->d.start[dir];
        size_t peer = s->d.start[(dir ^ 1) + 1] - s->d.start[dir ^ 1];
        size_t e = g;
        while (e < t->n_gates && t->gates[e].dir == d)
            e++;
        qri_lbuf_uv(b, e - g);
        uint64_t next = 0;
        for (; g < e; g++) {
            const qr_light_gate *x = &t->gates[g];
            int64_t at;
            if (x->seq < next || x->seq >= n || x->sends < 1 || x->sends > peer ||
                qr_recording_received(s->rec, qr_packet_id(dir, x->seq), &at) != QR_OK)
                return qri_err(s->w.err, QR_EINVAL,
                               "light record: flow %u: gate %zu (direction %u, packet %u, %u "
                               "sends) out of order, out of range or on a lost packet",
                               f, g, d, x->seq, x->sends);
            qri_lbuf_uv(b, x->seq - next);
            qri_lbuf_uv(b, x->sends);
            next = (uint64_t)x->seq + 1;
        }
    }
    if (g != t->n_gates)
        return qri_err(s->w.err, QR_EINVAL, "light record: flow %u: a gate names direction > 1", f);
    s->st.gates += t->n_gates;
    return QR_OK;
}

/* Connections [f0, f1): their parts, filled and written as one chunk's blocks. */
static int lw_chunk(struct lw *s, size_t f0, size_t f1)
{
    for (int p = 0; p < QR_LIGHT_PARTS; p++)
        s->part[p].n = 0;
    for (size_t i = 0; i < s->n_th; i++)
        s->samp[i].n = 0;
    /* the calls' pattern table of this chunk (conn_calls) */
    size_t n_pat = 0, cap_pat = 64;
    uint64_t *pat = malloc(cap_pat * 2 * sizeof *pat); /* (bytes, flags) */
    if (!pat)
        return qri_err(s->w.err, QR_ENOMEM, "light record: out of memory");
    struct qri_lbuf calls = {0};
    int rc = QR_OK;
    for (size_t f = f0; !rc && f < f1; f++) {
        const qr_flow *fl = qr_flow_table_flow(s->ft, (uint32_t)f);
        struct qri_lbuf *c = &s->part[QR_LIGHT_CONFIG];
        qri_lbuf_uv(c, fl->src);
        qri_lbuf_uv(c, fl->dst);
        put_sv(c, fl->start_ns - s->prev_start);
        qri_lbuf_uv(c, fl->incast);
        s->prev_start = fl->start_ns;
        rc = conn_calls(s->rec, (uint32_t)f, s->imported, &pat, &n_pat, &cap_pat, &calls,
                        &s->st.calls, s->w.err);
        for (uint32_t side = 0; !rc && side < 2; side++)
            rc = lw_direction(s, (uint32_t)(2 * f + side), fl);
        if (!rc)
            rc = lw_gates(s, (uint32_t)f);
    }
    struct qri_lbuf *c = &s->part[QR_LIGHT_CALLS];
    qri_lbuf_uv(c, n_pat);
    for (size_t k = 0; k < n_pat; k++) {
        qri_lbuf_uv(c, pat[2 * k]);
        qri_lbuf_uv(c, pat[2 * k + 1]);
    }
    qri_lbuf_put(c, calls.b, calls.n);
    if (calls.oom)
        c->oom = 1;
    free(calls.b);
    free(pat);
    for (int p = QR_LIGHT_CONFIG; !rc && p <= QR_LIGHT_RECEIVED; p++) {
        if (p == QR_LIGHT_SAMPLES) {
            for (size_t i = 0; !rc && i < s->n_th; i++)
                rc = block(&s->w, QR_LIGHT_SAMPLES, (unsigned)i, &s->samp[i]);
        } else if (p != QR_LIGHT_TIMERS) {
            rc = block(&s->w, (unsigned)p, 0, &s->part[p]);
        }
    }
    /* the timers after the receive times: a reader knows then whose they are */
    if (!rc)
        rc = block(&s->w, QR_LIGHT_TIMERS, 0, &s->part[QR_LIGHT_TIMERS]);
    return rc;
}

/* Host h's order among equal inferred times at threshold i: a replay sorts by (time, direction,
 * number); where the recording's order (its send order) differs, the group's permutation. */
static void lw_host_order(struct lw *s, size_t i, uint32_t h, struct qri_lbuf *o)
{
    size_t n;
    const qr_rec_packet *hp = qr_recording_packets(s->rec, h, &n);
    const int64_t *inf = s->inferred[i] + s->host_base[h];
    struct okey *keys = s->keys, *keys2 = s->keys2;
    for (size_t j = 0; j < n; j++)
        keys[j] = (struct okey){inf[j], hp[j].dir, hp[j].seq, (uint32_t)j};
    memcpy(keys2, keys, n * sizeof *keys);
    qsort(keys, n, sizeof *keys, cmp_light);
    qsort(keys2, n, sizeof *keys2, cmp_rec);
    uint64_t groups = 0;
    for (int pass = 0; pass < 2; pass++) { /* count the groups, then write them */
        if (pass)
            qri_lbuf_uv(o, groups);
        size_t last = 0;
        for (size_t j = 0; j < n;) {
            size_t e = j + 1;
            while (e < n && keys[e].t == keys[j].t)
                e++;
            int differs = 0;
            for (size_t q = j; q < e; q++)
                differs |= keys[q].rec != keys2[q].rec;
            if (differs && !pass)
                groups++;
            if (differs && pass) {
                qri_lbuf_uv(o, j - last);
                qri_lbuf_uv(o, e - j);
                for (size_t q = j; q < e; q++) {
                    size_t r = j;
                    while (keys[r].rec != keys2[q].rec)
                        r++;
                    qri_lbuf_uv(o, r - j);
                }
                last = j;
            }
            j = e;
        }
    }
}

/* The end block, the file flushed, closed and renamed into place. */
static int lw_end(struct lw *s)
{
    char *errbuf = s->w.err;
    struct qri_lbuf end = {0};
    qri_lbuf_uv(&end, s->st.connections);
    qri_lbuf_uv(&end, s->st.packets);
    const char *id = qr_recording_id(s->rec);
    qri_lbuf_put(&end, id, strlen(id)); /* the rest of the block */
    int rc = block_at(&s->w, PART_END, 0, &end, 0);
    free(end.b);
    if (!rc && (fflush(s->w.f) || fsync(fileno(s->w.f))))
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write: %s", s->w.path, strerror(errno));
    if (fclose(s->w.f) && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write: %s", s->w.path, strerror(errno));
    s->w.f = NULL;
    if (!rc)
        rc = qr_commit_path(s->tmp, s->w.path, errbuf);
    return rc;
}

static void lw_free(struct lw *s)
{
    if (s->w.f)
        fclose(s->w.f);
    unlink(s->tmp);
    qr_partial_done(s->tmp);
    free(s->list.b);
    for (int p = 0; p < QR_LIGHT_PARTS; p++)
        free(s->part[p].b);
    for (size_t i = 0; s->samp && i < s->n_th; i++)
        free(s->samp[i].b);
    for (size_t i = 0; s->inferred && i < s->n_th; i++)
        free(s->inferred[i]);
    free(s->samp);
    free(s->inferred);
    free(s->host_base);
    free(s->recs);
    free(s->times);
    free(s->keys);
    free(s->keys2);
    free(s->d.start);
    free(s->d.idx);
    qr_sampler_destroy(s->sm);
}

int qr_light_write(const qr_recording *rec, const int64_t *offsets, qr_sampling_method method,
                   const int64_t *th_ns, size_t n_th, const qr_light_timing *timing,
                   const char *path, qr_light_stats *stats, char *errbuf)
{
    int rc = lw_check(rec, th_ns, n_th, path, errbuf);
    if (rc)
        return rc;
    struct lw *s = calloc(1, sizeof *s);
    if (!s)
        return qri_err(errbuf, QR_ENOMEM, "light record: out of memory");
    s->rec = rec;
    s->ft = qr_recording_flows(rec);
    s->n_flows = qr_flow_table_flows(s->ft);
    s->n_hosts = qr_recording_hosts(rec);
    s->imported = qr_recording_imported(rec);
    s->cfg = (qr_sampler_cfg){method, th_ns[0]};
    s->th_ns = th_ns;
    s->n_th = n_th;
    s->st.n_th = n_th;
    memcpy(s->st.th_ns, th_ns, n_th * sizeof *th_ns);
    s->st.connections = s->n_flows;
    s->timing = timing;
    for (size_t f = 0; timing && f < s->n_flows; f++) {
        s->st.at_once += timing[f].at_once != 0;
        s->header_gates += timing[f].at_once ? timing[f].n_gates : 0;
    }
    s->w = (struct writer){NULL, path, &s->st, errbuf};
    snprintf(s->tmp, sizeof s->tmp, "%s.partial-%ld", path, (long)getpid());
    qr_leftovers_remove(path);
    rc = lw_alloc(s) ? qri_err(errbuf, QR_ENOMEM, "light record: out of memory")
                     : lw_begin(s, offsets, method);
    for (size_t f0 = 0, f1; !rc && f0 < s->n_flows; f0 = f1) {
        /* a chunk: CHUNK connections, fewer if they sent CHUNK_PACKETS packets */
        uint64_t in_chunk = 0;
        for (f1 = f0; f1 < s->n_flows && f1 - f0 < CHUNK && in_chunk < CHUNK_PACKETS; f1++)
            in_chunk += (uint64_t)(s->d.start[2 * f1 + 2] - s->d.start[2 * f1]);
        rc = lw_chunk(s, f0, f1);
    }
    for (size_t i = 0; !rc && i < n_th; i++) {
        struct qri_lbuf *o = &s->part[QR_LIGHT_ORDER];
        o->n = 0;
        for (uint32_t h = 0; h < s->n_hosts; h++)
            lw_host_order(s, i, h, o);
        rc = block(&s->w, QR_LIGHT_ORDER, (unsigned)i, o);
    }
    if (!rc)
        rc = lw_end(s);
    if (!rc && stats)
        *stats = s->st;
    lw_free(s);
    free(s);
    return rc;
}
