/* Messages from per-host captures (messages.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "messages_internal.h"
#include "qreplay/capture.h"
#include "qreplay/error.h"
#include "qreplay/messages.h"

struct build {
    struct qri_mbuild g;
    qr_msgs_capture_report *rep;
};

/* The capture's own host: the map line naming it, else the address in most of its packets. */
static int owner_of(const struct build *b, const char *path, uint32_t *h, char *errbuf)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (size_t i = 0; i < b->g.n_map; i++) {
        const char *c = b->g.map[i].capture, *cb = strrchr(c, '/') ? strrchr(c, '/') + 1 : c;
        if (c[0] && !strcmp(cb, base)) {
            *h = b->g.map[i].host;
            return QR_OK;
        }
    }
    uint8_t addr[16];
    int rc = qr_capture_owner(path, addr, NULL, NULL, errbuf);
    if (rc)
        return rc;
    if (qri_mbuild_host(&b->g, addr, h))
        return qri_err(errbuf, QR_EVALUE,
                       "%s: its own address (the one in most of its packets) is in no line of the "
                       "host map",
                       path);
    return QR_OK;
}

static int add_seg(struct build *b, const qr_capture_packet *p, uint32_t owner)
{
    uint32_t hs, hd;
    if (qri_mbuild_host(&b->g, p->src, &hs) || qri_mbuild_host(&b->g, p->dst, &hd)) {
        b->rep->unmapped_packets++;
        return QR_OK;
    }
    if ((owner != hs && owner != hd) || hs == hd) {
        b->rep->foreign_packets++;
        return QR_OK;
    }
    uint32_t conn;
    uint8_t dir;
    if (qri_mbuild_conn(&b->g, p->src, p->src_port, p->dst, p->dst_port, hs, hd, &conn, &dir))
        return QR_ENOMEM;
    struct qri_mconn *c = &b->g.ci[conn];
    if (!c->have_base[dir]) {
        c->base[dir] = p->seq;
        c->have_base[dir] = 1;
    }
    return qri_mbuild_seg(&b->g,
                          (struct qri_mseg){conn, dir, owner == c->host[0] ? 0 : 1, p->time_ns,
                                            (int64_t)(int32_t)(p->seq - c->base[dir]), p->payload});
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

int qr_msgs_from_captures(const char *const *paths, size_t n, const qr_host_map_entry *map,
                          size_t n_map, const qr_msgs_capture_opts *o, qr_msg **out, size_t *n_out,
                          uint32_t *n_hosts, qr_msgs_capture_report *rep, char *errbuf)
{
    if (o && o->ends)
        *o->ends = NULL;
    *out = NULL;
    *n_out = 0;
    *n_hosts = 0;
    memset(rep, 0, sizeof *rep);
    struct build b = {{0}, rep};
    if (qri_mbuild_init(&b.g, map, n_map)) {
        qri_mbuild_free(&b.g);
        return qri_err(errbuf, QR_ENOMEM, "captures: out of memory");
    }
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < n; i++)
        rc = read_capture(&b, paths[i], errbuf);
    size_t cap = 0;
    struct qri_mcounts cnt = {0};
    if (!rc &&
        qri_msgs_cut_all(b.g.segs, b.g.n_segs, b.g.ci, o ? o->idle_ns : 0, out, n_out, &cap, &cnt))
        rc = qri_err(errbuf, QR_ENOMEM, "captures: out of memory");
    if (!rc && qri_mbuild_ends(&b.g, o))
        rc = qri_err(errbuf, QR_ENOMEM, "captures: out of memory");
    rep->untraced_send = cnt.untraced_send;
    rep->untraced_recv = cnt.untraced_recv;
    rep->unfinished = cnt.unfinished;
    for (size_t i = 0; i < n_map; i++)
        *n_hosts = map[i].host + 1 > *n_hosts ? map[i].host + 1 : *n_hosts;
    rep->connections = b.g.n_conns;
    rep->messages = *n_out;
    qri_mbuild_free(&b.g);
    if (rc) {
        free(*out);
        *out = NULL;
        *n_out = 0;
        if (o && o->ends) {
            free(*o->ends);
            *o->ends = NULL;
        }
    }
    return rc;
}
