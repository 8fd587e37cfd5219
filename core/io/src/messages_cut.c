/* Messages from what hosts saw of their connections: the cut (messages_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "messages_internal.h"
#include "qreplay/error.h"

static int by_conn_viewer_time(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const struct qri_mseg *x = a, *y = b;
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    if (x->viewer != y->viewer)
        return x->viewer < y->viewer ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Message starts of direction d on one connection, cut on the clock of the capture whose segments
 * are s[0 .. n) (one host's view of both directions, by time): a run of d ends where the other
 * direction sent new payload, or after a pause of idle_ns. */
static size_t cut(const struct qri_mseg *s, size_t n, int d, int64_t idle_ns, int64_t *starts,
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
static void send_times(const struct qri_mseg *s, size_t n, int d, qr_msg *m, const int64_t *start,
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
static int recv_times(const struct qri_mseg *s, size_t n, int d, qr_msg *m, const int64_t *start,
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
static int conn_messages(const struct qri_mconn *c, uint32_t conn,
                         const struct qri_mseg *const v[2], const size_t n[2], int64_t idle_ns,
                         qr_msg **out, size_t *n_out, size_t *cap, struct qri_mcounts *rep)
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

int qri_msgs_cut_all(struct qri_mseg *segs, size_t n_segs, const struct qri_mconn *ci,
                     int64_t idle_ns, qr_msg **out, size_t *n_out, size_t *cap,
                     struct qri_mcounts *cnt)
{
    if (qri_sort(segs, n_segs, sizeof *segs, by_conn_viewer_time, NULL))
        return QR_ENOMEM;
    int rc = QR_OK;
    for (size_t a = 0, z; !rc && a < n_segs; a = z) {
        for (z = a; z < n_segs && segs[z].conn == segs[a].conn; z++)
            ;
        size_t mid = a;
        while (mid < z && segs[mid].viewer == 0)
            mid++;
        const struct qri_mseg *v[2] = {segs + a, segs + mid};
        size_t nv[2] = {mid - a, z - mid};
        rc = conn_messages(&ci[segs[a].conn], segs[a].conn, v, nv, idle_ns, out, n_out, cap, cnt);
    }
    return rc;
}

int qri_mbuild_init(struct qri_mbuild *b, const qr_host_map_entry *map, size_t n_map)
{
    memset(b, 0, sizeof *b);
    b->map = map;
    b->n_map = n_map;
    if (qri_map_init(&b->conns) || qri_map_init(&b->hosts))
        return QR_ENOMEM;
    for (size_t i = 0; i < n_map; i++) /* a map names each address once (qr_host_map_read) */
        if (qri_map_put(&b->hosts, qri_addr_hi(map[i].addr), qri_addr_lo(map[i].addr),
                        (void *)(uintptr_t)(map[i].host + 1)))
            return QR_ENOMEM;
    return QR_OK;
}

void qri_mbuild_free(struct qri_mbuild *b)
{
    qri_map_free(&b->hosts);
    qri_map_free(&b->conns);
    free(b->ci);
    free(b->segs);
}

int qri_mbuild_host(const struct qri_mbuild *b, const uint8_t addr[16], uint32_t *h)
{
    uintptr_t v = (uintptr_t)qri_map_get(&b->hosts, qri_addr_hi(addr), qri_addr_lo(addr));
    if (!v)
        return -1;
    *h = (uint32_t)(v - 1);
    return 0;
}

int qri_mbuild_conn(struct qri_mbuild *b, const uint8_t src[16], uint16_t sp, const uint8_t dst[16],
                    uint16_t dp, uint32_t hs, uint32_t hd, uint32_t *conn, uint8_t *dir)
{
    int lower_src = memcmp(src, dst, 16) < 0 || (!memcmp(src, dst, 16) && sp < dp);
    uint8_t key[36];
    memcpy(key, lower_src ? src : dst, 16);
    memcpy(key + 16, lower_src ? dst : src, 16);
    uint16_t ports[2] = {lower_src ? sp : dp, lower_src ? dp : sp};
    memcpy(key + 32, ports, 4);
    uint64_t k1, k2;
    qri_hash36(key, &k1, &k2);
    uintptr_t v = (uintptr_t)qri_map_get(&b->conns, k1, k2);
    if (!v) {
        if (qri_grow((void **)&b->ci, &b->cap_conns, b->n_conns, sizeof *b->ci, 64) ||
            qri_map_put(&b->conns, k1, k2, (void *)(uintptr_t)(b->n_conns + 1)))
            return QR_ENOMEM;
        struct qri_mconn c = {{lower_src ? hs : hd, lower_src ? hd : hs}, {{{0}}, {0}}, {0}, {0}};
        memcpy(c.ends.addr[0], key, 16);
        memcpy(c.ends.addr[1], key + 16, 16);
        c.ends.port[0] = ports[0];
        c.ends.port[1] = ports[1];
        b->ci[b->n_conns] = c;
        v = ++b->n_conns;
    }
    *conn = (uint32_t)(v - 1);
    *dir = lower_src ? 0 : 1;
    return QR_OK;
}

int qri_mbuild_ends(const struct qri_mbuild *b, const qr_msgs_capture_opts *o)
{
    if (!o || !o->ends)
        return QR_OK;
    *o->ends = malloc((b->n_conns ? b->n_conns : 1) * sizeof **o->ends);
    if (!*o->ends)
        return QR_ENOMEM;
    for (size_t i = 0; i < b->n_conns; i++)
        (*o->ends)[i] = b->ci[i].ends;
    return QR_OK;
}

int qri_mbuild_seg(struct qri_mbuild *b, struct qri_mseg s)
{
    if (qri_grow((void **)&b->segs, &b->cap_segs, b->n_segs, sizeof *b->segs, 1024))
        return QR_ENOMEM;
    b->segs[b->n_segs++] = s;
    return QR_OK;
}
