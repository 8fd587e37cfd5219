/* Messages from per-host captures (messages.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/capture.h"
#include "qreplay/error.h"
#include "qreplay/messages.h"

/* One payload segment as one host's capture saw it. */
struct seg {
    uint32_t conn;
    uint8_t dir;    /* 0: from the connection's lower end (address, port), 1: the other way */
    uint8_t viewer; /* whose capture saw it: 0 the lower end's host, 1 the other's */
    int64_t t;
    int64_t off; /* sequence number from the direction's first seen, unwrapped */
    uint32_t len;
};

struct conninfo {
    uint32_t host[2]; /* the lower end's host, the other's */
    uint32_t base[2]; /* each direction's first sequence number seen */
    int have_base[2];
};

struct build {
    const qr_host_map_entry *map;
    size_t n_map;
    qri_map conns; /* 36-byte key -> index + 1 */
    struct conninfo *ci;
    size_t n_conns, cap_conns;
    struct seg *segs;
    size_t n_segs, cap_segs;
    qr_msgs_capture_report *rep;
};

static int host_of(const struct build *b, const uint8_t addr[16], uint32_t *h)
{
    for (size_t i = 0; i < b->n_map; i++)
        if (!memcmp(b->map[i].addr, addr, 16)) {
            *h = b->map[i].host;
            return 0;
        }
    return -1;
}

/* The capture's own host: the map line naming it, else the address in most of its packets. */
static int owner_of(const struct build *b, const char *path, uint32_t *h, char *errbuf)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (size_t i = 0; i < b->n_map; i++) {
        const char *c = b->map[i].capture, *cb = strrchr(c, '/') ? strrchr(c, '/') + 1 : c;
        if (c[0] && !strcmp(cb, base)) {
            *h = b->map[i].host;
            return QR_OK;
        }
    }
    uint8_t addr[16];
    int rc = qr_capture_owner(path, addr, NULL, NULL, errbuf);
    if (rc)
        return rc;
    if (host_of(b, addr, h))
        return qri_err(errbuf, QR_EVALUE,
                       "%s: its own address (the one in most of its packets) is in no line of the "
                       "host map",
                       path);
    return QR_OK;
}

static int add_seg(struct build *b, const qr_capture_packet *p, uint32_t owner)
{
    uint32_t hs, hd;
    if (host_of(b, p->src, &hs) || host_of(b, p->dst, &hd)) {
        b->rep->unmapped_packets++;
        return QR_OK;
    }
    if ((owner != hs && owner != hd) || hs == hd) {
        b->rep->foreign_packets++;
        return QR_OK;
    }
    int lower_src = memcmp(p->src, p->dst, 16) < 0 ||
                    (!memcmp(p->src, p->dst, 16) && p->src_port < p->dst_port);
    uint8_t key[36];
    memcpy(key, lower_src ? p->src : p->dst, 16);
    memcpy(key + 16, lower_src ? p->dst : p->src, 16);
    uint16_t ports[2] = {lower_src ? p->src_port : p->dst_port,
                         lower_src ? p->dst_port : p->src_port};
    memcpy(key + 32, ports, 4);
    uint64_t k1, k2;
    qri_hash36(key, &k1, &k2);
    uintptr_t v = (uintptr_t)qri_map_get(&b->conns, k1, k2);
    if (!v) {
        if (qri_grow((void **)&b->ci, &b->cap_conns, b->n_conns, sizeof *b->ci, 64) ||
            qri_map_put(&b->conns, k1, k2, (void *)(uintptr_t)(b->n_conns + 1)))
            return QR_ENOMEM;
        b->ci[b->n_conns] = (struct conninfo){{lower_src ? hs : hd, lower_src ? hd : hs}, {0}, {0}};
        v = ++b->n_conns;
    }
    struct conninfo *c = &b->ci[v - 1];
    uint8_t dir = lower_src ? 0 : 1;
    if (!c->have_base[dir]) {
        c->base[dir] = p->seq;
        c->have_base[dir] = 1;
    }
    if (qri_grow((void **)&b->segs, &b->cap_segs, b->n_segs, sizeof *b->segs, 1024))
        return QR_ENOMEM;
    b->segs[b->n_segs++] = (struct seg){(uint32_t)(v - 1),
                                        dir,
                                        owner == c->host[0] ? 0 : 1,
                                        p->time_ns,
                                        (int64_t)(int32_t)(p->seq - c->base[dir]),
                                        p->payload};
    return QR_OK;
}

static int read_capture(struct build *b, const char *path, char *errbuf)
{
    uint32_t owner = 0;
    int rc = owner_of(b, path, &owner, errbuf);
    if (rc)
        return rc;
    qr_capture *c;
    if ((rc = qr_capture_open(&c, path, errbuf)))
        return rc;
    qr_capture_packet p;
    while (!(rc = qr_capture_next(c, &p, errbuf))) {
        b->rep->packets++;
        if (!p.payload)
            continue;
        b->rep->payload_packets++;
        if ((rc = add_seg(b, &p, owner))) {
            qri_err(errbuf, rc, "%s: out of memory", path);
            break;
        }
    }
    qr_capture_close(c);
    b->rep->captures++;
    return rc == QR_END ? QR_OK : rc;
}

static int by_conn_viewer_time(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const struct seg *x = a, *y = b;
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    if (x->viewer != y->viewer)
        return x->viewer < y->viewer ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Message starts of direction d on one connection, cut on the clock of the capture whose segments
 * are s[0 .. n) (one host's view of both directions, by time): a run of d ends where the other
 * direction sent new payload, or after a pause of idle_ns. */
static size_t cut(const struct seg *s, size_t n, int d, int64_t idle_ns, int64_t *starts,
                  size_t max)
{
    int64_t high[2] = {INT64_MIN, INT64_MIN}, last_t = 0;
    int other_spoke = 0, any = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int e = s[i].dir;
        int64_t end = s[i].off + s[i].len;
        if (high[e] != INT64_MIN && end <= high[e])
            continue; /* no new byte: a resend */
        int64_t from = high[e] == INT64_MIN || s[i].off > high[e] ? s[i].off : high[e];
        if (e != d) {
            other_spoke = 1;
        } else {
            if ((!any || other_spoke || (idle_ns > 0 && s[i].t - last_t >= idle_ns)) && k < max)
                starts[k++] = from;
            any = 1;
            other_spoke = 0;
            last_t = s[i].t;
        }
        high[e] = end;
    }
    return k;
}

/* The segments of one direction seen by one observer, by time: each new range of bytes [lo, hi)
 * at time t, for the send and receive times. */
static void send_times(const struct seg *s, size_t n, int d, qr_msg *m, const int64_t *start,
                       size_t k)
{
    int64_t high = INT64_MIN;
    size_t j = 0;
    for (size_t i = 0; i < n && j < k; i++) {
        if (s[i].dir != d)
            continue;
        int64_t lo = high == INT64_MIN || s[i].off > high ? s[i].off : high,
                hi = s[i].off + s[i].len;
        if (hi <= lo)
            continue;
        while (j < k && start[j] < hi) {
            if (start[j] >= lo)
                m[j].send_ns = s[i].t;
            j++;
        }
        high = hi;
    }
}

/* Receive times: when every byte up to a message's end had arrived, from its first byte on. */
static int recv_times(const struct seg *s, size_t n, int d, qr_msg *m, const int64_t *start,
                      const int64_t *end, size_t k)
{
    if (!k)
        return QR_OK;
    int64_t contig = start[0];
    struct {
        int64_t lo, hi;
    } *held = NULL;
    size_t n_held = 0, cap = 0, j = 0;
    for (size_t i = 0; i < n && j < k; i++) {
        if (s[i].dir != d)
            continue;
        int64_t lo = s[i].off, hi = s[i].off + s[i].len;
        if (lo > contig) {
            if (qri_grow((void **)&held, &cap, n_held, sizeof *held, 16)) {
                free(held);
                return QR_ENOMEM;
            }
            held[n_held].lo = lo;
            held[n_held++].hi = hi;
        } else if (hi > contig) {
            contig = hi;
        }
        for (int grew = 1; grew;) { /* held ranges the new point reaches */
            grew = 0;
            for (size_t h = 0; h < n_held; h++)
                if (held[h].lo <= contig) {
                    if (held[h].hi > contig) {
                        contig = held[h].hi;
                        grew = 1;
                    }
                    held[h--] = held[--n_held];
                }
        }
        while (j < k && end[j] <= contig)
            m[j++].recv_ns = s[i].t;
    }
    free(held);
    return QR_OK;
}

/* One connection's messages: v[e] the segments of viewer e (by time), n[e] of them. */
static int conn_messages(const struct conninfo *c, uint32_t conn, const struct seg *const v[2],
                         const size_t n[2], int64_t idle_ns, qr_msg **out, size_t *n_out,
                         size_t *cap, qr_msgs_capture_report *rep)
{
    size_t total = n[0] + n[1];
    int64_t *start = malloc((total + 1) * sizeof *start), *end = malloc((total + 1) * sizeof *end);
    int rc = start && end ? QR_OK : QR_ENOMEM;
    for (int d = 0; !rc && d < 2; d++) {
        int cutter = n[d] ? d : 1 - d; /* the sender's view, else the receiver's */
        size_t k = cut(v[cutter], n[cutter], d, idle_ns, start, total);
        if (!k)
            continue;
        /* a message ends where the next starts; the last at the highest byte either view saw */
        int64_t high = start[k - 1];
        for (int e = 0; e < 2; e++)
            for (size_t i = 0; i < n[e]; i++)
                if (v[e][i].dir == d && v[e][i].off + v[e][i].len > high)
                    high = v[e][i].off + v[e][i].len;
        for (size_t j = 0; j < k; j++)
            end[j] = j + 1 < k ? start[j + 1] : high;
        if (qri_reserve((void **)out, cap, *n_out + k, sizeof **out, 1024)) {
            rc = QR_ENOMEM;
            break;
        }
        qr_msg *m = *out + *n_out;
        for (size_t j = 0; j < k; j++)
            m[j] = (qr_msg){c->host[d],      c->host[1 - d],  conn,
                            QR_MSG_UNTRACED, QR_MSG_UNTRACED, (uint64_t)(end[j] - start[j])};
        send_times(v[d], n[d], d, m, start, k);
        rc = recv_times(v[1 - d], n[1 - d], d, m, start, end, k);
        for (size_t j = 0; j < k; j++) {
            rep->untraced_send += m[j].send_ns == QR_MSG_UNTRACED;
            rep->untraced_recv += m[j].recv_ns == QR_MSG_UNTRACED;
            rep->unfinished += n[1 - d] && m[j].recv_ns == QR_MSG_UNTRACED;
        }
        *n_out += k;
    }
    free(start);
    free(end);
    return rc;
}

int qr_msgs_from_captures(const char *const *paths, size_t n, const qr_host_map_entry *map,
                          size_t n_map, const qr_msgs_capture_opts *o, qr_msg **out, size_t *n_out,
                          uint32_t *n_hosts, qr_msgs_capture_report *rep, char *errbuf)
{
    *out = NULL;
    *n_out = 0;
    *n_hosts = 0;
    memset(rep, 0, sizeof *rep);
    struct build b = {map, n_map, {0}, NULL, 0, 0, NULL, 0, 0, rep};
    if (qri_map_init(&b.conns))
        return qri_err(errbuf, QR_ENOMEM, "captures: out of memory");
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < n; i++)
        rc = read_capture(&b, paths[i], errbuf);
    if (!rc && qri_sort(b.segs, b.n_segs, sizeof *b.segs, by_conn_viewer_time, NULL))
        rc = qri_err(errbuf, QR_ENOMEM, "captures: out of memory");
    size_t cap = 0;
    for (size_t a = 0, z; !rc && a < b.n_segs; a = z) {
        for (z = a; z < b.n_segs && b.segs[z].conn == b.segs[a].conn; z++)
            ;
        size_t mid = a;
        while (mid < z && b.segs[mid].viewer == 0)
            mid++;
        const struct seg *v[2] = {b.segs + a, b.segs + mid};
        size_t nv[2] = {mid - a, z - mid};
        rc = conn_messages(&b.ci[b.segs[a].conn], b.segs[a].conn, v, nv, o ? o->idle_ns : 0, out,
                           n_out, &cap, rep);
        if (rc)
            qri_err(errbuf, rc, "captures: out of memory");
    }
    for (size_t i = 0; i < n_map; i++)
        *n_hosts = map[i].host + 1 > *n_hosts ? map[i].host + 1 : *n_hosts;
    rep->connections = b.n_conns;
    rep->messages = *n_out;
    qri_map_free(&b.conns);
    free(b.ci);
    free(b.segs);
    if (rc) {
        free(*out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}
