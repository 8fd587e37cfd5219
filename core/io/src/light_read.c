/* DETER's light record (light.h), read back. */
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
#include "qreplay/topology.h"
#include "qreplay/txn.h"
#include "recording_internal.h"

static const char *const part_names[] = {"header", "config",  "calls",    "loss",
                                         "timers", "samples", "received", "order"};

const char *qr_light_part_name(qr_light_part p)
{
    return (unsigned)p < QR_LIGHT_PARTS ? part_names[p] : "unknown";
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
    free(l->gate_seq);
    free(l->gate_sends);
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
        !header_value(text, "version", v, sizeof v) || (strcmp(v, "1") && strcmp(v, "2")) || !scen)
        return qri_err(err, QR_EFORMAT, "%s: the header is not a light record's (version 1 or 2)",
                       l->path);
    l->version = v[0] - '0';
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
    size_t flows_done, calls_done, loss_done, recv_dirs_done, timers_dirs_done;
    size_t gate_cap;
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
        /* version 2: whether the direction's receive times are kept (0: its packets arrive at
         * once; the same for both directions of a connection) */
        int kept = 1;
        if (l->version >= 2 && (d->seen & QR_TC_AT_RECEIVER)) {
            uint64_t k = get_uv(r);
            kept = k == 1;
            if (k > 1 || (o->recv_dirs_done % 2 && kept != !(d - 1)->at_once))
                r->bad = 1;
            d->at_once = !kept;
            l->st.at_once += d->at_once && o->recv_dirs_done % 2;
        }
        uint64_t n = d->n, need = kept && (d->seen & QR_TC_AT_RECEIVER) ? n - d->n_lost : 0;
        if (r->bad || need > (uint64_t)(r->end - r->p) || !o->loss_raw ||
            d->loss_off > o->loss_len) {
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
            if (!kept) {
                l->recv[d->at + j] = QR_ARRIVE_AT_ONCE;
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
        o->recv_dirs_done != l->n_dirs || (l->version >= 2 && o->timers_dirs_done != l->n_dirs))
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

/* The record's blocks read one by one (the current one in b), and whether its header was read. */
struct blocks {
    FILE *f;
    const char *path;
    struct qri_block b;
    int have_header;
};

/* The next block read and checked as a block of this flavour: its part and threshold. */
static int next_block(struct blocks *bs, qr_light *l, char *errbuf)
{
    struct qri_block *b = &bs->b;
    uint64_t at = b->offset;
    int rc = qri_light_block_read(bs->f, bs->path, b, errbuf);
    if (rc)
        return rc;
    unsigned part = b->part, th = b->th;
    if ((part >= QR_LIGHT_PARTS && part != PART_END) || (part == QR_LIGHT_HEADER && !b->rlen) ||
        ((part == QR_LIGHT_SAMPLES || part == QR_LIGHT_ORDER) && th >= l->st.n_th) ||
        (part != QR_LIGHT_SAMPLES && part != QR_LIGHT_ORDER && th) ||
        (part != QR_LIGHT_HEADER && !bs->have_header) ||
        (part == QR_LIGHT_HEADER && bs->have_header))
        return qri_err(errbuf, QR_EFORMAT,
                       "%s: block %" PRIu64 " (byte %" PRIu64 "): a bad block header (part %u, "
                       "threshold %u, %u bytes)",
                       bs->path, b->no, at, part, th, b->rlen);
    l->st.file_bytes += BLOCK_HDR + b->clen;
    if (part < QR_LIGHT_PARTS) {
        l->st.bytes[part] += BLOCK_HDR + b->clen;
        l->st.raw[part] += b->rlen;
        if (part == QR_LIGHT_SAMPLES || part == QR_LIGHT_ORDER)
            l->st.th_bytes[th] += BLOCK_HDR + b->clen;
    }
    return QR_OK;
}

/* The gates of every direction whose receive times are read (version 2: after them, per
 * direction of a connection whose receive times are left out, `uv n` and per gate the packet
 * from the previous one's + 1 and the sends; version 1: none). A gate past its direction's
 * packets, on a lost packet or needing more sends than its receiver made sets r->bad. Returns 0
 * or QR_ENOMEM. */
static int read_timers(struct opening *o, struct rd *r)
{
    qr_light *l = o->l;
    for (; l->version >= 2 && !r->bad && o->timers_dirs_done < o->recv_dirs_done;
         o->timers_dirs_done++) {
        struct ldir *d = &l->dirs[o->timers_dirs_done];
        d->gate_at = l->n_gate_all;
        if (!d->at_once)
            continue;
        uint64_t n = get_uv(r), next = 0;
        if (n > d->n || n > (uint64_t)(r->end - r->p)) {
            r->bad = 1;
            break;
        }
        if (l->n_gate_all + n > o->gate_cap) {
            size_t cap = (l->n_gate_all + n) * 2 + 16;
            uint32_t *a = realloc(l->gate_seq, cap * sizeof *a);
            if (a)
                l->gate_seq = a;
            uint32_t *b = a ? realloc(l->gate_sends, cap * sizeof *b) : NULL;
            if (!b)
                return qri_err(o->errbuf, QR_ENOMEM, "out of memory");
            l->gate_sends = b;
            o->gate_cap = cap;
        }
        uint32_t peer = l->dirs[o->timers_dirs_done ^ 1].n;
        for (uint64_t j = 0; j < n && !r->bad; j++) {
            uint64_t seq = next + get_uv(r), sends = get_uv(r);
            if (seq >= d->n || (l->flags[d->at + seq] & F_LOST) || sends < 1 || sends > peer) {
                r->bad = 1;
                break;
            }
            l->gate_seq[l->n_gate_all] = (uint32_t)seq;
            l->gate_sends[l->n_gate_all++] = (uint32_t)sends;
            next = seq + 1;
        }
        d->n_gates = (uint32_t)(l->n_gate_all - d->gate_at);
        l->st.gates += d->n_gates;
    }
    if (r->p != r->end || (l->version >= 2 && o->timers_dirs_done != o->recv_dirs_done))
        r->bad = 1;
    return QR_OK;
}

/* The current block taken into the record by its part's reader (the header block aside). */
static int read_part(struct opening *o, struct blocks *bs, char *errbuf)
{
    struct qri_block *b = &bs->b;
    struct rd r = {b->raw, b->raw + b->rlen, 0};
    const uint8_t *block_start = b->raw; /* raw may be handed on (the loss part keeps it) */
    const char *what = qr_light_part_name(b->part);
    int rc = QR_OK;
    switch (b->part) {
    case QR_LIGHT_CONFIG: rc = read_config(o, &r); break;
    case QR_LIGHT_CALLS: rc = read_calls(o, &r); break;
    case QR_LIGHT_LOSS: rc = read_loss(o, &r, &b->raw, b->rlen); break;
    case QR_LIGHT_RECEIVED: rc = read_received(o, &r); break;
    case QR_LIGHT_TIMERS: rc = read_timers(o, &r); break;
    case QR_LIGHT_SAMPLES: rc = read_samples(o, &r, b->th); break;
    case QR_LIGHT_ORDER: rc = read_order(o, &r, b->th); break;
    default: break;
    }
    if (!rc && r.bad)
        rc = qri_err(errbuf, QR_EFORMAT,
                     "%s: block %" PRIu64 " (%s, byte %" PRIu64
                     "): a value out of range or cut short, near byte %zu of its %u",
                     bs->path, b->no, what, b->offset - BLOCK_HDR - b->clen,
                     (size_t)(r.p - block_start), b->rlen);
    return rc;
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
    uint8_t magic[8];
    struct opening o = {.l = l, .errbuf = errbuf};
    struct blocks b = {.f = f, .path = path, .b = {.offset = 8}};
    int ended = 0;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, MAGIC, 8)) {
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not a light record (no %s magic)", path, "QRLIGHT1");
        goto out;
    }
    l->st.file_bytes = 8;
    while (!rc && !ended && (rc = next_block(&b, l, errbuf)) == QR_OK) {
        if (b.b.part == QR_LIGHT_HEADER) {
            b.have_header = 1;
            rc = read_header(l, (const char *)b.b.raw, b.b.rlen, dir, errbuf);
        } else if (b.b.part == PART_END) {
            struct rd r = {b.b.raw, b.b.raw + b.b.rlen, 0};
            rc = read_end(&o, &r, path);
            ended = 1;
        } else {
            rc = read_part(&o, &b, errbuf);
        }
    }
    if (!rc && fgetc(f) != EOF)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: bytes after the end block", path);
    if (!rc)
        rc = finish_open(l, path, errbuf);
out:
    qri_light_block_free(&b.b);
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

int qr_light_gated(const qr_light *l, uint32_t dir, uint32_t seq, uint32_t *sends)
{
    if (dir >= l->n_dirs)
        return 0;
    const struct ldir *d = &l->dirs[dir];
    for (uint32_t g = 0; g < d->n_gates; g++)
        if (l->gate_seq[d->gate_at + g] == seq) {
            *sends = l->gate_sends[d->gate_at + g];
            return 1;
        }
    return 0;
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
    *arrive_ns = *lost                              ? 0
                 : l->recv[at] == QR_ARRIVE_AT_ONCE ? QR_ARRIVE_AT_ONCE
                                                    : l->recv[at] - l->offsets[to];
    return 1;
}
