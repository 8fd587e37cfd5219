/* The kernel record (krecord.h): written as the kernel's events come, read back whole. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "light_internal.h"
#include "map.h"
#include "qreplay/capture.h"
#include "qreplay/fs.h"
#include "qreplay/krecord.h"
#include "qreplay/txn.h"

#define KMAGIC "QRLIGHTK"
#define FLUSH_AT (64u << 10) /* a part's buffer is written as a block when it reaches this */
#define TCP_CLOSE 7
#define TCP_SYN 0x02
#define TCP_FIN 0x01
/* A closed connection's state is kept this long for what comes after its close (the last
 * ACKs of TIME_WAIT, the application reading what arrived before), then written out and freed. */
#define LINGER_NS 10000000000LL

enum { CONN_OPEN = 0, CONN_MID = 1, CONN_CLOSED = 2 };
enum {
    ARR_HOLE = QR_KREC_HOLE,
    ARR_CE = QR_KREC_CE,
    ARR_ZERO_WINDOW = QR_KREC_ZERO_WINDOW,
    ARR_DUPLICATE = QR_KREC_DUPLICATE
};
/* The holes a connection's receiver tracks at once, to tell a packet that fills one from a
 * duplicate; beyond them the highest absorbs the next (bytes that had arrived are then taken as
 * missing: a duplicate of them is not told, never a fill taken for a duplicate). */
#define RX_HOLES 16

static const char *const part_names[] = {"header",  "conns",  "calls",  "sent",
                                         "samples", "resent", "arrived"};

const char *qr_krec_part_name(qr_krec_part p)
{
    return (unsigned)p < QR_KREC_PARTS ? part_names[p] : "unknown";
}

/* A part's bytes, and the previous entry's time there: times are coded as differences. */
struct kbuf {
    struct qri_lbuf l;
    int64_t t;
};

static void put(struct kbuf *w, const void *p, size_t n)
{
    qri_lbuf_put(&w->l, p, n);
}

static void put_uv(struct kbuf *w, uint64_t v)
{
    qri_lbuf_uv(&w->l, v);
}

static void put_time(struct kbuf *w, int64_t t)
{
    put_uv(w, qri_zigzag(t - w->t));
    w->t = t;
}

/* A connection while it is open: its current run of sent packets, the sequence numbers it
 * expects next each way, its samplers. */
#define GROWTHS 64

struct kconn {
    uint32_t id;
    qr_krec_ends ends;
    uint32_t run_count, run_size, run_shape; /* shape: header bytes << 3 | SYN, FIN, RST */
    uint32_t next_seq, rx_next;
    int have_seq, have_rx;
    uint32_t hole_lo[RX_HOLES], hole_hi[RX_HOLES]; /* sequence ranges not arrived below rx_next */
    unsigned n_holes;
    int64_t last_sent; /* the previous segment's send time */
    /* IPv4's identification of its packets (Linux counts them per connection): the next one
     * expected, whether to check (not after a SYN: a new counter), how many the gaps told */
    uint32_t next_ipid;
    int have_ipid, ipid_jumps;
    int64_t ready_ns; /* when the bytes in order last grew (the latest a read's data arrived) */
    /* the bytes in order as they grew since the last read (their end's sequence number and
     * when), to tell when a read's last byte arrived; the receive calls' bytes so far */
    uint32_t grow_pt[GROWTHS];
    int64_t grow_t[GROWTHS];
    unsigned n_grow;
    uint32_t rx_isn;
    int have_isn;
    uint64_t read_bytes;
    uint64_t unseen;
    int closed;
    int64_t closed_at;
    struct kconn *next_closed; /* the closed connections, oldest first */
    qr_sampler *samp[QR_KREC_MAX_TH];
};

struct qr_krec_writer {
    FILE *f;
    char path[4096], tmp[4200];
    qr_krec_header h;
    char host[256];
    struct kbuf part[QR_KREC_PARTS];
    struct kbuf samples[QR_KREC_MAX_TH];
    qri_map conns;
    struct kconn *closed_head, *closed_tail;
    uint32_t next_id;
    qr_krec_stats st;
    char *err;
    uint16_t ignore[QR_KREC_MAX_IGNORE]; /* ports whose connections are left out */
    size_t n_ignore;
};

void qr_krec_writer_recorder_lost(qr_krec_writer *w, uint64_t lost)
{
    w->st.recorder_lost = lost;
}

int qr_krec_writer_ignore_ports(qr_krec_writer *w, const uint16_t *ports, size_t n, char *errbuf)
{
    if (n > QR_KREC_MAX_IGNORE)
        return qri_err(errbuf, QR_EINVAL, "%s: at most %d ports left out", w->path,
                       QR_KREC_MAX_IGNORE);
    memcpy(w->ignore, ports, n * sizeof *ports);
    w->n_ignore = n;
    return QR_OK;
}

/* Whether an event of e is left out (counted): a connection on an ignored port. */
static int left_out(qr_krec_writer *w, const qr_krec_ends *e)
{
    for (size_t i = 0; i < w->n_ignore; i++)
        if (e->lport == w->ignore[i] || e->rport == w->ignore[i]) {
            w->st.ignored_events++;
            return 1;
        }
    return 0;
}

/* A TCP packet with no flag at all: no TCP stack sends one (even a SYN or a RST has its flag),
 * so it came from a raw socket on the connection's addresses and ports (a probe: 007's, Everflow's
 * guided ones), not from the connection. Left out, counted. */
static int flagless(qr_krec_writer *w, uint8_t tcp_flags)
{
    if (tcp_flags & 0x3f)
        return 0;
    w->st.flagless++;
    return 1;
}

static int block(qr_krec_writer *w, unsigned part, unsigned th, struct kbuf *b)
{
    if (b->l.oom)
        return qri_err(w->err, QR_ENOMEM, "%s: out of memory", w->path);
    if (!b->l.n)
        return QR_OK;
    size_t stored;
    int rc = qri_light_block_write(w->f, w->tmp, part, th, b->l.b, b->l.n, 6, &stored, w->err);
    if (rc)
        return rc;
    if (part < QR_KREC_PARTS)
        w->st.part_bytes[part] += stored;
    w->st.file_bytes += stored;
    b->l.n = 0;
    return QR_OK;
}

/* Write the parts whose buffers are full. */
static int flush_full(qr_krec_writer *w)
{
    int rc = QR_OK;
    for (unsigned p = 0; !rc && p < QR_KREC_PARTS; p++)
        if (w->part[p].l.n >= FLUSH_AT || w->part[p].l.oom)
            rc = block(w, p, 0, &w->part[p]);
    for (unsigned i = 0; !rc && i < w->h.n_th; i++)
        if (w->samples[i].l.n >= FLUSH_AT || w->samples[i].l.oom)
            rc = block(w, QR_KREC_SAMPLES, i, &w->samples[i]);
    return rc;
}

static void ends_key(const qr_krec_ends *e, uint64_t *k1, uint64_t *k2)
{
    uint8_t key[36];
    memcpy(key, e->laddr, 16);
    memcpy(key + 16, e->raddr, 16);
    key[32] = (uint8_t)e->lport;
    key[33] = (uint8_t)(e->lport >> 8);
    key[34] = (uint8_t)e->rport;
    key[35] = (uint8_t)(e->rport >> 8);
    qri_hash36(key, k1, k2);
    *k2 ^= e->family;
}

static void put_ends(struct kbuf *b, const qr_krec_ends *e)
{
    size_t n = e->family == 6 ? 16 : 4;
    uint8_t fam = e->family;
    put(b, &fam, 1);
    put(b, e->laddr, n);
    put_uv(b, e->lport);
    put(b, e->raddr, n);
    put_uv(b, e->rport);
}

static int check_time(qr_krec_writer *w, int64_t t)
{
    if (t < w->h.start_ns)
        return qri_err(w->err, QR_EVALUE,
                       "%s: an event at %" PRId64 " ns, before the record's start (%" PRId64 ")",
                       w->path, t, w->h.start_ns);
    return QR_OK;
}

static void retire(qr_krec_writer *w, struct kconn *c);

/* The connection of e, made at its first event (mid: it was open before the record saw it). */
static struct kconn *conn_of(qr_krec_writer *w, const qr_krec_ends *e, int64_t t, int mid)
{
    uint64_t k1, k2;
    ends_key(e, &k1, &k2);
    struct kconn *c = qri_map_get(&w->conns, k1, k2);
    if (c && (!c->closed || mid))
        return c; /* an open one, or what comes after a close */
    if (c)        /* its ends again, a new connection (a SYN): the closed one is done */
        retire(w, c);
    c = calloc(1, sizeof *c);
    if (!c || qri_map_put(&w->conns, k1, k2, c)) {
        free(c);
        return NULL;
    }
    c->id = w->next_id++;
    c->ends = *e;
    for (size_t i = 0; i < w->h.n_th; i++) {
        qr_sampler_cfg cfg = {w->h.method, w->h.th_ns[i]};
        if (qr_sampler_create(&c->samp[i], &cfg)) {
            c->samp[i] = NULL; /* freed with the connection */
            return NULL;
        }
    }
    struct kbuf *b = &w->part[QR_KREC_CONNS];
    put_uv(b, c->id);
    put_uv(b, mid ? CONN_MID : CONN_OPEN);
    put_time(b, t);
    put_ends(b, e);
    w->st.connections++;
    return c;
}

static void put_sample(qr_krec_writer *w, struct kconn *c, size_t i, const qr_sample_record *r)
{
    struct kbuf *b = &w->samples[i];
    put_uv(b, c->id);
    put_uv(b, r->index);
    put_time(b, r->time_ns);
    put_uv(b, qri_zigzag(r->gap_num));
    put_uv(b, (uint64_t)r->gap_den);
    w->st.sample_records[i]++;
}

static void end_run(qr_krec_writer *w, struct kconn *c)
{
    if (!c->run_count)
        return;
    struct kbuf *b = &w->part[QR_KREC_SENT];
    put_uv(b, c->id);
    put_uv(b, c->run_count);
    put_uv(b, c->run_size);
    put_uv(b, c->run_shape);
    put_uv(b, 0); /* no jump: in sequence */
    c->run_count = 0;
}

static void free_conn(struct kconn *c)
{
    for (size_t i = 0; i < QR_KREC_MAX_TH; i++)
        qr_sampler_destroy(c->samp[i]);
    free(c);
}

/* The connection's open run and samples written, its state freed. */
static void finish_conn(qr_krec_writer *w, struct kconn *c)
{
    end_run(w, c);
    for (size_t i = 0; i < w->h.n_th; i++) {
        qr_sample_record r;
        int emitted = 0;
        qr_sampler_finish(c->samp[i], &r, &emitted);
        if (emitted)
            put_sample(w, c, i, &r);
    }
    uint64_t k1, k2;
    ends_key(&c->ends, &k1, &k2);
    qri_map_remove(&w->conns, k1, k2);
    free_conn(c);
}

/* A closed connection taken off the closed list and finished. */
static void retire(qr_krec_writer *w, struct kconn *c)
{
    struct kconn **p = &w->closed_head, *prev = NULL;
    while (*p && *p != c) {
        prev = *p;
        p = &(*p)->next_closed;
    }
    if (*p) {
        *p = c->next_closed;
        if (w->closed_tail == c)
            w->closed_tail = prev;
    }
    finish_conn(w, c);
}

/* The connection reached TCP_CLOSE at t: noted, and kept a while for what follows. */
static void close_conn(qr_krec_writer *w, struct kconn *c, int64_t t)
{
    if (c->closed)
        return;
    struct kbuf *b = &w->part[QR_KREC_CONNS];
    put_uv(b, c->id);
    put_uv(b, CONN_CLOSED);
    put_time(b, t);
    w->st.closed++;
    c->closed = 1;
    c->closed_at = t;
    if (w->closed_tail)
        w->closed_tail->next_closed = c;
    else
        w->closed_head = c;
    w->closed_tail = c;
}

/* The connections closed more than LINGER_NS before t, finished. */
static void retire_old(qr_krec_writer *w, int64_t t)
{
    while (w->closed_head && t - w->closed_head->closed_at > LINGER_NS) {
        struct kconn *c = w->closed_head;
        w->closed_head = c->next_closed;
        if (!w->closed_head)
            w->closed_tail = NULL;
        finish_conn(w, c);
    }
}

int qr_krec_writer_open(qr_krec_writer **out, const char *path, const qr_krec_header *h,
                        char *errbuf)
{
    *out = NULL;
    if (!h || h->n_th < 1 || h->n_th > QR_KREC_MAX_TH || h->start_ns < 0)
        return qri_err(errbuf, QR_EINVAL, "kernel record: 1 to %d thresholds", QR_KREC_MAX_TH);
    for (size_t i = 0; i < h->n_th; i++)
        if (h->th_ns[i] < 0 || (i && h->th_ns[i] <= h->th_ns[i - 1]))
            return qri_err(errbuf, QR_EINVAL, "kernel record: thresholds must increase from 0");
    qr_krec_writer *w = calloc(1, sizeof *w);
    if (!w || qri_map_init(&w->conns)) {
        free(w);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    w->h = *h;
    snprintf(w->host, sizeof w->host, "%s", h->host ? h->host : "");
    w->h.host = w->host;
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.partial-%ld", path, (long)getpid());
    for (unsigned p = 0; p < QR_KREC_PARTS; p++)
        w->part[p].t = h->start_ns;
    for (unsigned i = 0; i < QR_KREC_MAX_TH; i++)
        w->samples[i].t = h->start_ns;
    w->err = errbuf;
    qr_partial_add(w->tmp);
    w->f = fopen(w->tmp, "wb");
    if (!w->f || fwrite(KMAGIC, 1, 8, w->f) != 8) {
        int rc = qri_err(errbuf, QR_EIO, "%s: %s", w->tmp, strerror(errno));
        qr_krec_writer_abort(w);
        return rc;
    }
    w->st.file_bytes = 8;
    struct kbuf *hb = &w->part[QR_KREC_HEADER];
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "format=qreplay kernel record 5\nhost=%s\nnetns=%u\nstart_ns=%" PRId64
                     "\nmethod=%s\nth_ns=",
                     w->host, h->netns, h->start_ns, h->method == QR_SAMPLING_GAP ? "gap" : "rate");
    for (size_t i = 0; i < h->n_th && n < (int)sizeof text; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%" PRId64, i ? "," : "", h->th_ns[i]);
    if (n < (int)sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, "\n");
    put(hb, text, strlen(text));
    int rc = block(w, QR_KREC_HEADER, 0, hb);
    if (rc) {
        qr_krec_writer_abort(w);
        return rc;
    }
    *out = w;
    return QR_OK;
}

static int event_done(qr_krec_writer *w, struct kconn *c, int64_t t)
{
    if (!c)
        return qri_err(w->err, QR_ENOMEM, "%s: out of memory", w->path);
    retire_old(w, t);
    return flush_full(w);
}

int qr_krec_state(qr_krec_writer *w, const qr_krec_ends *e, int64_t t_ns, int old_state,
                  int new_state, char *errbuf)
{
    w->err = errbuf;
    int rc = check_time(w, t_ns);
    if (rc)
        return rc;
    /* a listener, or a socket whose port is not chosen yet (connect sets SYN_SENT first): no
     * connection */
    if (!e->lport || !e->rport || new_state == 10 || left_out(w, e))
        return QR_OK;
    /* a connection the record saw start: a SYN sent (SYN_SENT) or a listener's child
     * (SYN_RECV); anything else was open before */
    int mid = !(new_state == 2 || new_state == 3 || old_state == 7 || old_state == 10);
    struct kconn *c = conn_of(w, e, t_ns, mid);
    if (c && new_state == TCP_CLOSE) {
        close_conn(w, c, t_ns);
        return flush_full(w);
    }
    return event_done(w, c, t_ns);
}

/* When the last byte of a read of `bytes` (after those read before) arrived: the first growth of
 * the bytes in order to it; where that is unknown (no SYN seen, more growths than kept), the
 * last growth: at the latest. 0: nothing arrived. */
static int64_t read_ready(struct kconn *c, uint32_t bytes)
{
    c->read_bytes += bytes;
    if (!c->have_isn)
        return c->ready_ns;
    uint32_t target = c->rx_isn + 1u + (uint32_t)c->read_bytes;
    unsigned i = 0;
    while (i < c->n_grow && (int32_t)(c->grow_pt[i] - target) < 0)
        i++;
    if (i == c->n_grow)
        return c->ready_ns;
    int64_t t = c->grow_t[i];
    memmove(c->grow_pt, c->grow_pt + i, (c->n_grow - i) * sizeof *c->grow_pt);
    memmove(c->grow_t, c->grow_t + i, (c->n_grow - i) * sizeof *c->grow_t);
    c->n_grow -= i;
    return t;
}

int qr_krec_call(qr_krec_writer *w, const qr_krec_ends *e, int receive, uint32_t bytes,
                 int64_t t_ns, char *errbuf)
{
    w->err = errbuf;
    int rc = check_time(w, t_ns);
    if (rc || left_out(w, e))
        return rc;
    struct kconn *c = conn_of(w, e, t_ns, 1);
    if (c) {
        struct kbuf *b = &w->part[QR_KREC_CALLS];
        put_uv(b, c->id);
        put_uv(b, receive ? 1 : 0);
        put_time(b, t_ns);
        put_uv(b, bytes);
        if (receive) { /* when its data arrived: ns before the call, + 1 (0: unknown) */
            int64_t at = read_ready(c, bytes);
            put_uv(b, at && at <= t_ns ? (uint64_t)(t_ns - at) + 1 : 0);
        }
        w->st.calls[receive ? 1 : 0]++;
        w->st.call_bytes[receive ? 1 : 0] += bytes;
    }
    return event_done(w, c, t_ns);
}

/* The flags a run keeps (SYN, FIN, RST: they take sequence space or end it). */
#define RUN_FLAGS (TCP_SYN | TCP_FIN | 0x04)

/* One segment of `size` IP bytes, `hdr` of them headers, with flags fl, at seq. */
static int segment(qr_krec_writer *w, struct kconn *c, uint32_t seq, uint32_t size, uint16_t hdr,
                   uint8_t fl, int64_t t)
{
    uint32_t shape = (uint32_t)hdr << 3 | (fl & RUN_FLAGS);
    uint32_t span = size - hdr + (fl & TCP_SYN ? 1 : 0) + (fl & TCP_FIN ? 1 : 0);
    if (c->have_seq && seq == c->next_seq && c->run_count && size == c->run_size &&
        shape == c->run_shape) {
        c->run_count++;
    } else if (c->have_seq && seq == c->next_seq) {
        end_run(w, c);
        c->run_count = 1;
        c->run_size = size;
        c->run_shape = shape;
    } else { /* out of sequence (a resend, or the record's first): its number kept */
        end_run(w, c);
        struct kbuf *b = &w->part[QR_KREC_SENT];
        put_uv(b, c->id);
        put_uv(b, 1);
        put_uv(b, size);
        put_uv(b, shape);
        put_uv(b, 1);
        put_uv(b, seq);
    }
    uint32_t end = seq + span;
    if (!c->have_seq || (int32_t)(end - c->next_seq) > 0)
        c->next_seq = end;
    c->have_seq = 1;
    /* the ring buffer hands over events of several CPUs: a send time before the previous one's
     * (by their clocks' skew) is taken as the previous one's, and counted */
    if (t < c->last_sent) {
        t = c->last_sent;
        w->st.reordered++;
    }
    c->last_sent = t;
    for (size_t i = 0; i < w->h.n_th; i++) {
        qr_sample_record r;
        int emitted = 0;
        if (qr_sampler_push(c->samp[i], t, &r, &emitted, w->err))
            return qri_err(w->err, QR_EVALUE, "%s: a send time the sampler refuses", w->path);
        if (emitted)
            put_sample(w, c, i, &r);
    }
    w->st.packets++;
    w->st.bytes += size;
    return QR_OK;
}

int qr_krec_sent(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, uint32_t ip_len,
                 uint16_t hdr, uint32_t gso_size, uint8_t tcp_flags, int64_t t_ns, char *errbuf)
{
    w->err = errbuf;
    int rc = check_time(w, t_ns);
    if (rc)
        return rc;
    if (hdr < 40 || ip_len < hdr)
        return qri_err(errbuf, QR_EVALUE, "%s: a sent packet of %u bytes with %u of headers",
                       w->path, ip_len, hdr);
    if (left_out(w, e) || flagless(w, tcp_flags))
        return QR_OK;
    /* a connection first seen by its SYN was seen from its start */
    struct kconn *c = conn_of(w, e, t_ns, (tcp_flags & (TCP_SYN | 0x10)) != TCP_SYN);
    if (!c)
        return event_done(w, c, t_ns);
    w->st.payload_bytes += ip_len - hdr;
    uint32_t payload = ip_len - hdr;
    w->st.nic_packets++;
    if (gso_size == 0 || payload <= gso_size) {
        rc = segment(w, c, seq, ip_len, hdr, tcp_flags, t_ns);
    } else { /* the segments the NIC sends (a FIN on the last) */
        for (uint32_t off = 0; !rc && off < payload; off += gso_size) {
            uint32_t p = payload - off < gso_size ? payload - off : gso_size;
            rc = segment(w, c, seq + off, hdr + p, hdr,
                         off + p == payload ? tcp_flags : (uint8_t)(tcp_flags & ~TCP_FIN), t_ns);
        }
    }
    return rc ? rc : event_done(w, c, t_ns);
}

/* The IP identification of a packet of c (segs segments): a gap from the one expected is packets
 * sent that no event told; an identification below it (within the same small window) is one of
 * them told late (the ring buffer hands over CPUs' events in their own order). Where the
 * identifications are not counted per connection (jumps), the check stops. */
#define IPID_WINDOW 64
static void check_ipid(qr_krec_writer *w, struct kconn *c, uint32_t ipid, uint32_t segs,
                       uint8_t tcp_flags)
{
    if (c->ipid_jumps > 2)
        return;
    if (c->have_ipid && !(tcp_flags & TCP_SYN)) {
        uint32_t gap = (ipid - c->next_ipid) & 0xffffu;
        if (gap == 0) {
        } else if (gap < IPID_WINDOW) {
            c->unseen += gap;
            w->st.unseen += gap;
        } else if (gap > 0x10000u - IPID_WINDOW) {
            uint64_t late = segs < c->unseen ? segs : c->unseen;
            c->unseen -= late, w->st.unseen -= late;
            return; /* told late (counted unseen, or before its check began): the next expected
                       stays */
        } else {
            c->ipid_jumps++;
        }
    }
    c->have_ipid = !(tcp_flags & TCP_SYN);
    c->next_ipid = (ipid + segs) & 0xffffu;
}

int qr_krec_sent_ipid(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, uint32_t ip_len,
                      uint16_t hdr, uint32_t gso_size, uint8_t tcp_flags, int32_t ip_id,
                      int64_t t_ns, char *errbuf)
{
    uint64_t before = w->st.ignored_events + w->st.flagless;
    int rc = qr_krec_sent(w, e, seq, ip_len, hdr, gso_size, tcp_flags, t_ns, errbuf);
    if (rc || ip_id < 0 || e->family != 4 || w->st.ignored_events + w->st.flagless != before)
        return rc;
    uint64_t k1, k2;
    ends_key(e, &k1, &k2);
    struct kconn *c = qri_map_get(&w->conns, k1, k2);
    uint32_t payload = ip_len - hdr;
    uint32_t segs = gso_size && payload > gso_size ? (payload + gso_size - 1) / gso_size : 1;
    if (c)
        check_ipid(w, c, (uint32_t)ip_id, segs, tcp_flags);
    return QR_OK;
}

uint64_t qr_krec_writer_unseen(const qr_krec_writer *w)
{
    return w->st.unseen;
}

int qr_krec_resent(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, qr_krec_resend why,
                   int64_t t_ns, char *errbuf)
{
    w->err = errbuf;
    int rc = check_time(w, t_ns);
    if (rc)
        return rc;
    if ((unsigned)why > QR_KREC_RTO)
        return qri_err(errbuf, QR_EVALUE, "%s: resend reason %d", w->path, (int)why);
    if (left_out(w, e))
        return QR_OK;
    struct kconn *c = conn_of(w, e, t_ns, 1);
    if (c) {
        struct kbuf *b = &w->part[QR_KREC_RESENT];
        put_uv(b, c->id);
        put_uv(b, seq);
        put_uv(b, (uint64_t)why);
        put_time(b, t_ns);
        w->st.resends[why]++;
    }
    return event_done(w, c, t_ns);
}

/* The receiver's hole [lo, hi), above every hole tracked or split off one (when RX_HOLES are
 * tracked the highest absorbs it, and the bytes between them: tracked holes never overlap). */
static void add_hole(struct kconn *c, uint32_t lo, uint32_t hi)
{
    if (c->n_holes < RX_HOLES) {
        c->hole_lo[c->n_holes] = lo, c->hole_hi[c->n_holes++] = hi;
        return;
    }
    unsigned top = 0;
    for (unsigned i = 1; i < RX_HOLES; i++)
        if ((int32_t)(c->hole_hi[i] - c->hole_hi[top]) > 0)
            top = i;
    if ((int32_t)(hi - c->hole_hi[top]) > 0)
        c->hole_hi[top] = hi;
}

/* The bytes of [lo, hi) (below rx_next) that fill the receiver's holes, taken out of them. */
static uint32_t fill_holes(struct kconn *c, uint32_t lo, uint32_t hi)
{
    uint32_t filled = 0;
    for (unsigned i = 0; i < c->n_holes;) {
        uint32_t a = c->hole_lo[i], b = c->hole_hi[i];
        uint32_t s = (int32_t)(lo - a) > 0 ? lo : a, e = (int32_t)(hi - b) < 0 ? hi : b;
        if ((int32_t)(e - s) <= 0) {
            i++;
            continue;
        }
        filled += e - s;
        if (s == a && e == b) { /* filled whole */
            c->n_holes--;
            memmove(&c->hole_lo[i], &c->hole_lo[i + 1], (c->n_holes - i) * sizeof c->hole_lo[0]);
            memmove(&c->hole_hi[i], &c->hole_hi[i + 1], (c->n_holes - i) * sizeof c->hole_hi[0]);
            continue;
        }
        if (s == a)
            c->hole_lo[i] = e;
        else if (e == b)
            c->hole_hi[i] = s;
        else if (c->n_holes < RX_HOLES) { /* its middle: two holes */
            c->hole_hi[i] = s;
            add_hole(c, e, b);
        } /* else no room to split: the hole stays whole (its middle, filled, counts as missing:
           * a duplicate of it would be taken for a fill) */
        i++;
    }
    return filled;
}

static void put_arrival(qr_krec_writer *w, struct kconn *c, unsigned kind, int64_t t)
{
    struct kbuf *b = &w->part[QR_KREC_ARRIVED];
    put_uv(b, c->id);
    put_uv(b, kind);
    put_time(b, t);
}

/* The end of the bytes c has received in order: its lowest hole's start, else the highest
 * sequence number received. */
static uint32_t in_order(const struct kconn *c)
{
    uint32_t p = c->rx_next;
    for (unsigned i = 0; i < c->n_holes; i++)
        if ((int32_t)(c->hole_lo[i] - p) < 0)
            p = c->hole_lo[i];
    return p;
}

int qr_krec_arrived(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, uint32_t ip_len,
                    uint16_t hdr, uint8_t tcp_flags, int ce, uint32_t window, int64_t t_ns,
                    char *errbuf)
{
    w->err = errbuf;
    int rc = check_time(w, t_ns);
    if (rc)
        return rc;
    if (hdr < 40 || ip_len < hdr)
        return qri_err(errbuf, QR_EVALUE, "%s: a received packet of %u bytes with %u of headers",
                       w->path, ip_len, hdr);
    if (left_out(w, e) || flagless(w, tcp_flags))
        return QR_OK;
    struct kconn *c = conn_of(w, e, t_ns, (tcp_flags & (TCP_SYN | 0x10)) != TCP_SYN);
    if (!c)
        return event_done(w, c, t_ns);
    uint32_t span = ip_len - hdr + (tcp_flags & TCP_SYN ? 1 : 0) + (tcp_flags & TCP_FIN ? 1 : 0);
    uint32_t ready = c->have_rx ? in_order(c) : 0;
    int had_rx = c->have_rx;
    if (c->have_rx && (int32_t)(seq - c->rx_next) > 0) { /* a hole: bytes not (yet) arrived */
        put_arrival(w, c, ARR_HOLE, t_ns);
        struct kbuf *b = &w->part[QR_KREC_ARRIVED];
        put_uv(b, c->rx_next);
        put_uv(b, seq - c->rx_next);
        w->st.holes++;
        w->st.hole_bytes += seq - c->rx_next;
        add_hole(c, c->rx_next, seq);
    } else if (c->have_rx && span && (int32_t)(seq - c->rx_next) < 0) {
        uint32_t below = (int32_t)(seq + span - c->rx_next) > 0 ? c->rx_next - seq : span;
        uint32_t dup = below - fill_holes(c, seq, seq + below);
        if (dup) { /* bytes that had arrived before: a resend that was not needed */
            put_arrival(w, c, ARR_DUPLICATE, t_ns);
            struct kbuf *b = &w->part[QR_KREC_ARRIVED];
            put_uv(b, seq);
            put_uv(b, dup);
            w->st.duplicates++;
            w->st.duplicate_bytes += dup;
        }
    }
    if (!c->have_rx || (int32_t)(seq + span - c->rx_next) > 0)
        c->rx_next = seq + span;
    c->have_rx = 1;
    if ((tcp_flags & TCP_SYN) && !c->have_isn)
        c->rx_isn = seq, c->have_isn = 1;
    if (ip_len > hdr && (!had_rx || (int32_t)(in_order(c) - ready) > 0)) {
        c->ready_ns = t_ns;         /* data a read may return arrived */
        if (c->n_grow == GROWTHS) { /* the oldest forgotten: a read that needs it gets later */
            memmove(c->grow_pt, c->grow_pt + 1, (GROWTHS - 1) * sizeof *c->grow_pt);
            memmove(c->grow_t, c->grow_t + 1, (GROWTHS - 1) * sizeof *c->grow_t);
            c->n_grow--;
        }
        c->grow_pt[c->n_grow] = in_order(c), c->grow_t[c->n_grow++] = t_ns;
    }
    if (ce) {
        put_arrival(w, c, ARR_CE, t_ns);
        w->st.ce++;
    }
    if (window == 0 && !(tcp_flags & (TCP_SYN | 0x04))) {
        put_arrival(w, c, ARR_ZERO_WINDOW, t_ns);
        w->st.zero_windows++;
    }
    w->st.arrived++;
    return event_done(w, c, t_ns);
}

static void collect(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1;
    (void)k2;
    struct {
        struct kconn **v;
        size_t n;
    } *l = ctx;
    l->v[l->n++] = value;
}

static int cmp_conn_id(const void *a, const void *b)
{
    const struct kconn *x = *(struct kconn *const *)a, *y = *(struct kconn *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int qr_krec_writer_close(qr_krec_writer *w, uint64_t events, uint64_t lost_events,
                         qr_krec_stats *st, char *errbuf)
{
    w->err = errbuf;
    /* the connections still open, in the order they were made */
    struct {
        struct kconn **v;
        size_t n;
    } l = {malloc((w->conns.count + 1) * sizeof *l.v), 0};
    if (!l.v) {
        qr_krec_writer_abort(w);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    qri_map_foreach(&w->conns, collect, &l);
    qsort(l.v, l.n, sizeof *l.v, cmp_conn_id);
    for (size_t i = 0; i < l.n; i++)
        finish_conn(w, l.v[i]);
    free(l.v);
    int rc = QR_OK;
    for (unsigned p = 1; !rc && p < QR_KREC_PARTS; p++)
        if (p != QR_KREC_SAMPLES)
            rc = block(w, p, 0, &w->part[p]);
    for (unsigned i = 0; !rc && i < w->h.n_th; i++)
        rc = block(w, QR_KREC_SAMPLES, i, &w->samples[i]);
    lost_events += w->st.unseen; /* sent, and no event told: lost on the way as well */
    w->st.events = events;
    w->st.lost_events = lost_events;
    struct kbuf end = {0};
    put_uv(&end, events);
    put_uv(&end, lost_events);
    put_uv(&end, w->st.connections);
    put_uv(&end, w->st.closed);
    put_uv(&end, w->st.packets);
    put_uv(&end, w->st.calls[0] + w->st.calls[1]);
    put_uv(&end, w->st.reordered);
    put_uv(&end, w->st.nic_packets);
    put_uv(&end, w->st.payload_bytes);
    put_uv(&end, w->st.recorder_lost); /* format 5: the losses told apart */
    put_uv(&end, w->st.unseen);
    size_t stored = 0;
    if (!rc && end.l.oom)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    if (!rc)
        rc = qri_light_block_write(w->f, w->tmp, PART_END, 0, end.l.b, end.l.n, 0, &stored, errbuf);
    free(end.l.b);
    w->st.file_bytes += stored;
    if (!rc && (fflush(w->f) || ferror(w->f)))
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->tmp, strerror(errno));
    if (fclose(w->f) && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->tmp, strerror(errno));
    w->f = NULL;
    if (!rc)
        rc = qr_commit_path(w->tmp, w->path, errbuf);
    if (!rc && st)
        *st = w->st;
    if (rc)
        unlink(w->tmp);
    qr_partial_done(w->tmp);
    w->tmp[0] = '\0';
    qr_krec_writer_abort(w);
    return rc;
}

static void free_value(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1;
    (void)k2;
    (void)ctx;
    free_conn(value);
}

void qr_krec_writer_abort(qr_krec_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    if (w->tmp[0]) {
        unlink(w->tmp);
        qr_partial_done(w->tmp);
    }
    qri_map_foreach(&w->conns, free_value, NULL);
    qri_map_free(&w->conns);
    for (unsigned p = 0; p < QR_KREC_PARTS; p++)
        free(w->part[p].l.b);
    for (unsigned i = 0; i < QR_KREC_MAX_TH; i++)
        free(w->samples[i].l.b);
    free(w);
}

/* ---- reading ---- */

struct kin {
    const uint8_t *p, *end;
    int bad;
    int64_t t;
};

static uint64_t get_uv(struct kin *r)
{
    uint64_t v = 0;
    if (r->bad || qri_varint_get(&r->p, r->end, &v)) {
        r->bad = 1;
        return 0;
    }
    return v;
}

/* The next time: the last one plus a stored difference, within [-QR_TIME_MAX, QR_TIME_MAX] (else
 * the read is bad). */
static int64_t get_time(struct kin *r)
{
    int64_t v, d = qri_unzigzag(get_uv(r));
    if (r->bad || __builtin_add_overflow(r->t, d, &v) || v > QR_TIME_MAX || v < -QR_TIME_MAX) {
        r->bad = 1;
        return r->t;
    }
    r->t = v;
    return v;
}

static void get_bytes(struct kin *r, void *out, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return;
    }
    memcpy(out, r->p, n);
    r->p += n;
}

struct kpart {
    uint8_t *b;
    size_t n, cap;
};

/* A reader of part p's bytes, times from t (a part never written has no bytes, and no pointer). */
static struct kin kin_of(const struct kpart *p, int64_t t)
{
    struct kin r = {p->b, p->b ? p->b + p->n : NULL, 0, t};
    return r;
}

struct qr_krec {
    char path[4096], host[256];
    int format; /* 4 or 5 */
    qr_krec_header h;
    qr_krec_stats st;
    qr_krec_conn *conns;
    size_t n_conns;
    qr_krec_run **runs; /* per connection: its runs of sent segments, as stored */
    size_t *n_runs;
    qr_krec_event **ev[3]; /* per connection: [0] its resends, [1] its arrivals, [2] its calls,
                            * in time order */
    size_t *n_ev[3];
    qr_sample_record **recs[QR_KREC_MAX_TH];
    size_t *n_recs[QR_KREC_MAX_TH];
    struct kpart part[QR_KREC_PARTS], samples[QR_KREC_MAX_TH];
    uint8_t end[128];
    size_t end_n;
    int ended;
};

void qr_krec_close(qr_krec *k)
{
    if (!k)
        return;
    for (size_t c = 0; c < k->n_conns; c++) {
        if (k->runs)
            free(k->runs[c]);
        for (int e = 0; e < 3; e++)
            if (k->ev[e])
                free(k->ev[e][c]);
        for (size_t i = 0; i < QR_KREC_MAX_TH; i++)
            if (k->recs[i])
                free(k->recs[i][c]);
    }
    for (size_t i = 0; i < QR_KREC_MAX_TH; i++) {
        free(k->recs[i]);
        free(k->n_recs[i]);
        free(k->samples[i].b);
    }
    for (size_t p = 0; p < QR_KREC_PARTS; p++)
        free(k->part[p].b);
    free(k->runs);
    free(k->n_runs);
    for (int e = 0; e < 3; e++) {
        free(k->ev[e]);
        free(k->n_ev[e]);
    }
    free(k->conns);
    free(k);
}

static int bad(const qr_krec *k, const char *part, const char *what, char *errbuf)
{
    return qri_err(errbuf, QR_EFORMAT, "%s: its %s part: %s", k->path, part, what);
}

/* The header's text: host, namespace, start, method, thresholds. */
static int read_kheader(qr_krec *k, const char *text, char *errbuf)
{
    if (!strncmp(text, "format=qreplay kernel record 1\n", 31) ||
        !strncmp(text, "format=qreplay kernel record 2\n", 31) ||
        !strncmp(text, "format=qreplay kernel record 3\n", 31))
        return bad(k, "header",
                   "an older format, of a development build (format 1: its runs have no headers "
                   "and flags; format 2: its receivers did not tell duplicates; format 3: its "
                   "receive calls do not say when their data arrived): record again",
                   errbuf);
    const char *f = strstr(text, "format=qreplay kernel record 5\n");
    k->format = 5;
    if (f != text && (f = strstr(text, "format=qreplay kernel record 4\n")))
        k->format = 4; /* its losses not told apart */
    const char *h = strstr(text, "\nhost="), *ns = strstr(text, "\nnetns=");
    const char *st = strstr(text, "\nstart_ns="), *m = strstr(text, "\nmethod=");
    const char *th = strstr(text, "\nth_ns=");
    if (f != text || !h || !ns || !st || !m || !th)
        return bad(k, "header", "a field is missing (format, host, netns, start_ns, method, th_ns)",
                   errbuf);
    size_t hl = strcspn(h + 6, "\n");
    snprintf(k->host, sizeof k->host, "%.*s", (int)(hl < 255 ? hl : 255), h + 6);
    k->h.host = k->host;
    char *e;
    k->h.netns = (uint32_t)strtoul(ns + 7, &e, 10);
    k->h.start_ns = strtoll(st + 10, &e, 10);
    k->h.method = !strncmp(m + 8, "gap\n", 4) ? QR_SAMPLING_GAP : QR_SAMPLING_RATE;
    const char *p = th + 7;
    while (k->h.n_th < QR_KREC_MAX_TH && *p >= '0' && *p <= '9') {
        k->h.th_ns[k->h.n_th++] = strtoll(p, &e, 10);
        p = *e == ',' ? e + 1 : e;
    }
    if (!k->h.n_th || k->h.start_ns < 0 || k->h.start_ns > QR_TIME_MAX)
        return bad(k, "header", "no threshold, or a start before 1970 or out of range", errbuf);
    return QR_OK;
}

static int append(struct kpart *p, const uint8_t *b, size_t n)
{
    if (qri_reserve((void **)&p->b, &p->cap, p->n + n + 1, 1, 1 << 16))
        return QR_ENOMEM;
    memcpy(p->b + p->n, b, n);
    p->n += n;
    return QR_OK;
}

/* Every block into its part's bytes (the header read, the end kept). */
static int read_blocks(qr_krec *k, FILE *f, char *errbuf)
{
    struct qri_block b = {.offset = 8};
    int rc = QR_OK, have_header = 0;
    while (!rc && !k->ended && (rc = qri_light_block_read(f, k->path, &b, errbuf)) == QR_OK) {
        if (b.part == PART_END) {
            if (b.rlen > sizeof k->end)
                rc = bad(k, "end", "longer than its counts", errbuf);
            else
                memcpy(k->end, b.raw, k->end_n = b.rlen);
            k->ended = 1;
        } else if (b.part >= QR_KREC_PARTS || (b.part == QR_KREC_HEADER) == have_header ||
                   (b.th && b.part != QR_KREC_SAMPLES) || b.th >= QR_KREC_MAX_TH) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: block %" PRIu64 ": part %u, threshold %u: not a block of a kernel "
                         "record here",
                         k->path, b.no, b.part, b.th);
        } else if (b.part == QR_KREC_HEADER) {
            have_header = 1;
            rc = read_kheader(k, (const char *)b.raw, errbuf);
        } else {
            struct kpart *p = b.part == QR_KREC_SAMPLES ? &k->samples[b.th] : &k->part[b.part];
            if (b.part == QR_KREC_SAMPLES && b.th >= k->h.n_th)
                rc = bad(k, "samples", "a threshold the header does not have", errbuf);
            else if (append(p, b.raw, b.rlen))
                rc = qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
        }
        if (!rc && b.part < QR_KREC_PARTS)
            k->st.part_bytes[b.part] += BLOCK_HDR + b.clen;
    }
    k->st.file_bytes = b.offset;
    qri_light_block_free(&b);
    if (!rc && fgetc(f) != EOF)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: bytes after the end block", k->path);
    return rc;
}

static int read_conns(qr_krec *k, char *errbuf)
{
    struct kin r = kin_of(&k->part[QR_KREC_CONNS], k->h.start_ns);
    size_t cap = 0;
    while (!r.bad && r.p < r.end) {
        uint64_t id = get_uv(&r), kind = get_uv(&r);
        int64_t t = get_time(&r);
        if (r.bad || kind > CONN_CLOSED || id > k->n_conns ||
            (kind != CONN_CLOSED) != (id == k->n_conns))
            return bad(k, "conns", "a connection out of order, or an unknown entry", errbuf);
        if (kind == CONN_CLOSED) {
            if (k->conns[id].close_ns)
                return bad(k, "conns", "a connection closed twice", errbuf);
            k->conns[id].close_ns = t;
            k->st.closed++;
            continue;
        }
        if (qri_grow((void **)&k->conns, &cap, k->n_conns, sizeof *k->conns, 64))
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
        qr_krec_conn *c = &k->conns[k->n_conns++];
        memset(c, 0, sizeof *c);
        c->id = (uint32_t)id;
        c->open_ns = t;
        c->mid = kind == CONN_MID;
        get_bytes(&r, &c->ends.family, 1);
        size_t n = c->ends.family == 6 ? 16 : 4;
        if (c->ends.family != 4 && c->ends.family != 6)
            r.bad = 1;
        get_bytes(&r, c->ends.laddr, n);
        uint64_t lp = get_uv(&r);
        get_bytes(&r, c->ends.raddr, n);
        uint64_t rp = get_uv(&r);
        if (lp > 65535 || rp > 65535)
            r.bad = 1;
        c->ends.lport = (uint16_t)lp;
        c->ends.rport = (uint16_t)rp;
    }
    if (r.bad)
        return bad(k, "conns", "a value out of range or cut short", errbuf);
    k->st.connections = k->n_conns;
    return QR_OK;
}

static int read_sent(qr_krec *k, uint64_t max_packets, char *errbuf)
{
    struct kin r = kin_of(&k->part[QR_KREC_SENT], 0);
    size_t *cap = calloc(k->n_conns + 1, sizeof *cap);
    if (!cap)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
    int rc = QR_OK;
    while (!rc && !r.bad && r.p < r.end) {
        uint64_t id = get_uv(&r), count = get_uv(&r), size = get_uv(&r), shape = get_uv(&r);
        uint64_t jump = get_uv(&r), seq = jump ? get_uv(&r) : 0, hdr = shape >> 3;
        if (r.bad || id >= k->n_conns || !count || size < 40 || size > 65535 || jump > 1 ||
            seq > UINT32_MAX || count > max_packets - k->st.packets || hdr < 40 || hdr > size) {
            rc = bad(k, "sent",
                     "a run of no connection, of no packets, of a bad size or header, or "
                     "more packets than the end block counts",
                     errbuf);
            break;
        }
        if (qri_grow((void **)&k->runs[id], &cap[id], k->n_runs[id], sizeof **k->runs, 16)) {
            rc = qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
            break;
        }
        k->runs[id][k->n_runs[id]++] =
            (qr_krec_run){count,         (uint32_t)size, (uint8_t)jump,
                          (uint32_t)seq, (uint16_t)hdr,  (uint8_t)(shape & 7)};
        k->conns[id].packets += count;
        k->conns[id].bytes += count * size;
        k->st.packets += count;
        k->st.bytes += count * size;
    }
    free(cap);
    if (!rc && r.bad)
        rc = bad(k, "sent", "a value out of range or cut short", errbuf);
    return rc;
}

static int read_samples(qr_krec *k, size_t th, char *errbuf)
{
    struct kpart *p = &k->samples[th];
    struct kin r = kin_of(p, k->h.start_ns);
    size_t *cap = calloc(k->n_conns + 1, sizeof *cap);
    k->recs[th] = calloc(k->n_conns + 1, sizeof *k->recs[th]);
    k->n_recs[th] = calloc(k->n_conns + 1, sizeof *k->n_recs[th]);
    int rc = cap && k->recs[th] && k->n_recs[th]
                 ? QR_OK
                 : qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
    while (!rc && !r.bad && r.p < r.end) {
        qr_sample_record s;
        uint64_t id = get_uv(&r);
        s.index = get_uv(&r);
        s.time_ns = get_time(&r);
        s.gap_num = qri_unzigzag(get_uv(&r));
        s.gap_den = (int64_t)get_uv(&r);
        size_t n = id < k->n_conns ? k->n_recs[th][id] : 0;
        if (r.bad || id >= k->n_conns || s.gap_den <= 0 || s.index >= k->conns[id].packets ||
            (n && s.index <= k->recs[th][id][n - 1].index)) {
            rc = bad(k, "samples", "a record of no connection, of no packet, or out of order",
                     errbuf);
            break;
        }
        if (qri_grow((void **)&k->recs[th][id], &cap[id], n, sizeof s, 16)) {
            rc = qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
            break;
        }
        k->recs[th][id][k->n_recs[th][id]++] = s;
        k->st.sample_records[th]++;
    }
    free(cap);
    if (!rc && r.bad)
        rc = bad(k, "samples", "a value out of range or cut short", errbuf);
    return rc;
}

/* The calls, resends and arrivals: counted per connection. */
static int read_calls_and_events(qr_krec *k, size_t *cap[3], char *errbuf);

/* Event x of connection id kept in list e (0 resends, 1 arrivals, 2 calls); cap: the lists'
 * capacities. */
static int keep_event(qr_krec *k, int e, uint64_t id, size_t *cap, qr_krec_event x)
{
    if (qri_grow((void **)&k->ev[e][id], &cap[id], k->n_ev[e][id], sizeof x, 8))
        return QR_ENOMEM;
    k->ev[e][id][k->n_ev[e][id]++] = x;
    return QR_OK;
}

static int read_events(qr_krec *k, char *errbuf)
{
    size_t *cap[3];
    for (int e = 0; e < 3; e++) {
        k->ev[e] = calloc(k->n_conns + 1, sizeof *k->ev[e]);
        k->n_ev[e] = calloc(k->n_conns + 1, sizeof *k->n_ev[e]);
        cap[e] = calloc(k->n_conns + 1, sizeof *cap[e]);
    }
    int rc = read_calls_and_events(k, cap, errbuf);
    for (int e = 0; e < 3; e++)
        free(cap[e]);
    return rc;
}

static int read_calls_and_events(qr_krec *k, size_t *cap[3], char *errbuf)
{
    for (int e = 0; e < 3; e++)
        if (!k->ev[e] || !k->n_ev[e] || !cap[e])
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
    struct kpart *cp = &k->part[QR_KREC_CALLS], *rp = &k->part[QR_KREC_RESENT],
                 *ap = &k->part[QR_KREC_ARRIVED];
    struct kin r = kin_of(cp, k->h.start_ns);
    while (!r.bad && r.p < r.end) {
        uint64_t id = get_uv(&r), recv = get_uv(&r);
        int64_t t = get_time(&r);
        uint64_t bytes = get_uv(&r), ready = recv ? get_uv(&r) : 0;
        if (r.bad || id >= k->n_conns || recv > 1 || bytes > UINT32_MAX || t < k->h.start_ns ||
            ready > (uint64_t)(t - k->h.start_ns) + 1)
            return bad(k, "calls",
                       "a call of no connection, its data arriving before the record, "
                       "or cut short",
                       errbuf);
        qr_krec_event ev = {t, (uint32_t)recv, 0, (uint32_t)bytes,
                            ready ? t - (int64_t)(ready - 1) : -1};
        if (keep_event(k, 2, id, cap[2], ev))
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
        k->conns[id].calls[recv]++;
        k->conns[id].call_bytes[recv] += bytes;
        k->st.calls[recv]++;
        k->st.call_bytes[recv] += bytes;
    }
    r = kin_of(rp, k->h.start_ns);
    while (!r.bad && r.p < r.end) {
        uint64_t id = get_uv(&r), seq = get_uv(&r), why = get_uv(&r);
        int64_t t = get_time(&r);
        if (r.bad || id >= k->n_conns || why > QR_KREC_RTO || seq > UINT32_MAX)
            return bad(k, "resent", "a resend of no connection, of no reason, or cut short",
                       errbuf);
        if (keep_event(k, 0, id, cap[0], (qr_krec_event){t, (uint32_t)why, (uint32_t)seq, 0, -1}))
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
        k->conns[id].resends[why]++;
        k->st.resends[why]++;
    }
    r = kin_of(ap, k->h.start_ns);
    while (!r.bad && r.p < r.end) {
        uint64_t id = get_uv(&r), kind = get_uv(&r);
        int64_t t = get_time(&r);
        int ranged = kind == ARR_HOLE || kind == ARR_DUPLICATE;
        uint64_t from = ranged ? get_uv(&r) : 0, n = ranged ? get_uv(&r) : 0;
        if (r.bad || id >= k->n_conns || kind > ARR_DUPLICATE || from > UINT32_MAX ||
            n > UINT32_MAX)
            return bad(k, "arrived", "an arrival of no connection, of no kind, or cut short",
                       errbuf);
        if (keep_event(k, 1, id, cap[1],
                       (qr_krec_event){t, (uint32_t)kind, (uint32_t)from, (uint32_t)n, -1}))
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", k->path);
        if (kind == ARR_HOLE) {
            k->st.hole_bytes += n;
            k->conns[id].holes++;
            k->st.holes++;
        } else if (kind == ARR_DUPLICATE) {
            k->conns[id].duplicates++;
            k->st.duplicates++;
            k->st.duplicate_bytes += n;
        } else if (kind == ARR_CE) {
            k->conns[id].ce++;
            k->st.ce++;
        } else {
            k->conns[id].zero_windows++;
            k->st.zero_windows++;
        }
    }
    return r.bad ? bad(k, "arrived", "cut short", errbuf) : QR_OK;
}

int qr_krec_format(const qr_krec *k)
{
    return k->format;
}

int qr_krec_open(qr_krec **out, const char *path, char *errbuf)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return qri_err(errbuf, errno == ENOENT ? QR_ENOENT : QR_EIO, "%s: %s", path,
                       strerror(errno));
    qr_krec *k = calloc(1, sizeof *k);
    char magic[8];
    int rc = k ? QR_OK : qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    if (!rc) {
        snprintf(k->path, sizeof k->path, "%s", path);
        if (fread(magic, 1, 8, f) != 8 || memcmp(magic, KMAGIC, 8))
            rc = qri_err(errbuf, QR_EFORMAT, "%s: not a kernel record (no %s magic)", path, KMAGIC);
    }
    if (!rc)
        rc = read_blocks(k, f, errbuf);
    fclose(f);
    uint64_t end[11] = {0};
    struct kin e = {k ? k->end : NULL, k ? k->end + k->end_n : NULL, 0, 0};
    for (size_t i = 0; !rc && i < (k->format == 4 ? 9u : 11u); i++)
        end[i] = get_uv(&e);
    if (!rc && e.bad)
        rc = bad(k, "end", "cut short", errbuf);
    if (!rc)
        rc = read_conns(k, errbuf);
    if (!rc && (!(k->runs = calloc(k->n_conns + 1, sizeof *k->runs)) ||
                !(k->n_runs = calloc(k->n_conns + 1, sizeof *k->n_runs))))
        rc = qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    if (!rc)
        rc = read_sent(k, end[4], errbuf);
    for (size_t i = 0; !rc && i < k->h.n_th; i++)
        rc = read_samples(k, i, errbuf);
    if (!rc)
        rc = read_events(k, errbuf);
    if (!rc && (end[2] != k->st.connections || end[3] != k->st.closed || end[4] != k->st.packets ||
                end[5] != k->st.calls[0] + k->st.calls[1]))
        rc = qri_err(errbuf, QR_EFORMAT,
                     "%s: its end block counts %" PRIu64 " connections, %" PRIu64
                     " packets and %" PRIu64 " calls; its parts hold %" PRIu64 ", %" PRIu64
                     " and %" PRIu64 ": the record is damaged",
                     path, end[2], end[4], end[5], k->st.connections, k->st.packets,
                     k->st.calls[0] + k->st.calls[1]);
    if (rc) {
        qr_krec_close(k);
        return rc;
    }
    k->st.events = end[0];
    k->st.lost_events = end[1];
    k->st.reordered = end[6];
    k->st.nic_packets = end[7];
    k->st.payload_bytes = end[8];
    k->st.recorder_lost = end[9];
    k->st.unseen = end[10];
    *out = k;
    return QR_OK;
}

void qr_krec_stats_get(const qr_krec *k, qr_krec_stats *st)
{
    *st = k->st;
}

const char *qr_krec_host(const qr_krec *k)
{
    return k->host;
}

const qr_krec_header *qr_krec_header_of(const qr_krec *k)
{
    return &k->h;
}

size_t qr_krec_conns(const qr_krec *k, const qr_krec_conn **conns)
{
    *conns = k->conns;
    return k->n_conns;
}

const qr_krec_run *qr_krec_runs(const qr_krec *k, uint32_t c, size_t *n)
{
    *n = c < k->n_conns ? k->n_runs[c] : 0;
    return *n ? k->runs[c] : NULL;
}

void qr_krec_walk_start(qr_krec_walk *w, const qr_krec_run *runs, size_t n)
{
    *w = (qr_krec_walk){runs, n, 0, 0, 0, 0};
}

int qr_krec_walk_next(qr_krec_walk *w, qr_krec_segment *s)
{
    while (w->run < w->n && w->in_run == w->runs[w->run].count) {
        w->run++;
        w->in_run = 0;
    }
    if (w->run == w->n)
        return 0;
    const qr_krec_run *r = &w->runs[w->run];
    s->size = r->size;
    s->hdr = r->hdr;
    s->flags = r->flags;
    s->jump = r->jump;
    s->seq = r->jump ? r->seq : w->next_seq;
    s->span = r->size - r->hdr + (r->flags & TCP_SYN ? 1 : 0) + (r->flags & TCP_FIN ? 1 : 0);
    uint32_t end = s->seq + s->span;
    if (!w->have_seq || (int32_t)(end - w->next_seq) > 0)
        w->next_seq = end;
    w->have_seq = 1;
    w->in_run++;
    return 1;
}

const qr_krec_event *qr_krec_resends(const qr_krec *k, uint32_t c, size_t *n)
{
    *n = c < k->n_conns ? k->n_ev[0][c] : 0;
    return *n ? k->ev[0][c] : NULL;
}

const qr_krec_event *qr_krec_arrivals(const qr_krec *k, uint32_t c, size_t *n)
{
    *n = c < k->n_conns ? k->n_ev[1][c] : 0;
    return *n ? k->ev[1][c] : NULL;
}

const qr_krec_event *qr_krec_calls(const qr_krec *k, uint32_t c, size_t *n)
{
    *n = c < k->n_conns ? k->n_ev[2][c] : 0;
    return *n ? k->ev[2][c] : NULL;
}

const qr_sample_record *qr_krec_samples(const qr_krec *k, uint32_t c, size_t i, size_t *n)
{
    *n = c < k->n_conns && i < k->h.n_th ? k->n_recs[i][c] : 0;
    return *n ? k->recs[i][c] : NULL;
}

int qr_krec_check_capture(const char *record, const char *capture, qr_krec_capture_check *out,
                          char *errbuf)
{
    memset(out, 0, sizeof *out);
    qr_krec *k;
    int rc = qr_krec_open(&k, record, errbuf);
    if (rc)
        return rc;
    out->record_packets = k->st.nic_packets;
    out->record_payload = k->st.payload_bytes;
    qr_capture *c = NULL;
    rc = qr_capture_open(&c, capture, errbuf);
    qr_capture_packet p;
    while (!rc && (rc = qr_capture_next(c, &p, errbuf)) == QR_OK) {
        /* the capture's IPv4 addresses are IPv4-mapped (::ffff:a.b.c.d), the record's raw */
        const uint8_t *src = p.family == 6 ? p.src : p.src + 12;
        size_t n = p.family == 6 ? 16 : 4;
        for (size_t i = 0; i < k->n_conns; i++)
            if (k->conns[i].ends.family == p.family && !memcmp(k->conns[i].ends.laddr, src, n)) {
                out->capture_frames++;
                out->capture_payload += p.payload;
                break;
            }
    }
    if (rc == QR_END)
        rc = QR_OK;
    qr_capture_close(c);
    qr_krec_close(k);
    return rc;
}

void qr_krec_addr_mapped(uint8_t family, const uint8_t a[16], uint8_t out[16])
{
    if (family == 6) {
        memcpy(out, a, 16);
        return;
    }
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, a, 4);
}
