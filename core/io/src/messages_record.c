/* Messages from kernel records' socket calls (messages.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "messages_internal.h"
#include "qreplay/error.h"
#include "qreplay/krecord.h"
#include "qreplay/messages.h"

/* One connection of a record: its calls as segments of its two directions. */
static int conn_calls(struct qri_mbuild *b, const qr_krec *k, const qr_krec_conn *c,
                      qr_msgs_record_report *rep)
{
    size_t n;
    const qr_krec_event *ev = qr_krec_calls(k, c->id, &n);
    rep->calls += n;
    uint8_t la[16], ra[16];
    qr_krec_addr_mapped(c->ends.family, c->ends.laddr, la);
    qr_krec_addr_mapped(c->ends.family, c->ends.raddr, ra);
    uint32_t hl, hr;
    if (qri_mbuild_host(b, la, &hl) || qri_mbuild_host(b, ra, &hr) || hl == hr) {
        rep->unmapped_calls += n;
        return QR_OK;
    }
    if (c->mid) {
        rep->mid_connections++;
        return QR_OK;
    }
    uint32_t conn;
    uint8_t out_dir; /* the direction this host sends in */
    if (qri_mbuild_conn(b, la, c->ends.lport, ra, c->ends.rport, hl, hr, &conn, &out_dir))
        return QR_ENOMEM;
    uint8_t viewer = b->ci[conn].host[0] == hl ? 0 : 1;
    int64_t off[2] = {0, 0}; /* bytes sent, bytes read */
    for (size_t i = 0; i < n; i++) {
        int recv = ev[i].kind == 1;
        uint8_t dir = recv ? (uint8_t)(1 - out_dir) : out_dir;
        if (ev[i].bytes && qri_mbuild_seg(b, (struct qri_mseg){conn, dir, viewer, ev[i].t_ns,
                                                               off[recv], ev[i].bytes}))
            return QR_ENOMEM;
        off[recv] += ev[i].bytes;
    }
    return QR_OK;
}

int qr_msgs_from_records(const char *const *paths, size_t n, const qr_host_map_entry *map,
                         size_t n_map, const qr_msgs_capture_opts *o, qr_msg **out, size_t *n_out,
                         uint32_t *n_hosts, qr_msgs_record_report *rep, char *errbuf)
{
    if (o && o->ends)
        *o->ends = NULL;
    *out = NULL;
    *n_out = 0;
    *n_hosts = 0;
    memset(rep, 0, sizeof *rep);
    struct qri_mbuild b;
    if (qri_mbuild_init(&b, map, n_map)) {
        qri_mbuild_free(&b);
        return qri_err(errbuf, QR_ENOMEM, "records: out of memory");
    }
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        qr_krec *k;
        if ((rc = qr_krec_open(&k, paths[i], errbuf)))
            break;
        const qr_krec_conn *c;
        size_t nc = qr_krec_conns(k, &c);
        for (size_t j = 0; !rc && j < nc; j++)
            rc = conn_calls(&b, k, &c[j], rep);
        qr_krec_close(k);
        rep->records++;
        if (rc)
            qri_err(errbuf, rc, "%s: out of memory", paths[i]);
    }
    size_t cap = 0;
    struct qri_mcounts cnt = {0};
    if (!rc && qri_msgs_cut_all(b.segs, b.n_segs, b.ci, o ? o->idle_ns : 0, out, n_out, &cap, &cnt))
        rc = qri_err(errbuf, QR_ENOMEM, "records: out of memory");
    if (!rc && qri_mbuild_ends(&b, o))
        rc = qri_err(errbuf, QR_ENOMEM, "records: out of memory");
    rep->untraced_send = cnt.untraced_send;
    rep->untraced_recv = cnt.untraced_recv;
    rep->unfinished = cnt.unfinished;
    for (size_t i = 0; i < n_map; i++)
        *n_hosts = map[i].host + 1 > *n_hosts ? map[i].host + 1 : *n_hosts;
    rep->connections = b.n_conns;
    rep->messages = *n_out;
    qri_mbuild_free(&b);
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
