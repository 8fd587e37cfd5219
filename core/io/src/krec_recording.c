/* A recording made from hosts' kernel records (krec_recording.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "plan_internal.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/krec_recording.h"
#include "qreplay/stats.h"
#include "qreplay/topology.h"
#include "recording_internal.h"

#define TCP_ACK 0x10
#define TCP_SYN 0x02

/* One end of a connection: its record and its connection there (rec -1: not recorded). */
struct end_ref {
    int32_t rec;
    uint32_t conn;
};

/* A connection between two hosts: its ends (side 0 the lower address and port, or, with like,
 * the like flow's source), the hosts, which side opened it. */
struct cand {
    struct end_ref e[2];
    uint32_t host[2];
    int opener;
    int64_t open_ns;
    int32_t next; /* the next connection on the same addresses and ports (a port reused) */
};

struct qr_krec_set {
    qr_krec **k;
    char (*sha)[65];
    size_t n;
    qr_recording *rec;
    struct end_ref *dir_end; /* per direction: the sender's end */
    size_t *dir_at;          /* per direction: its first packet in its sender host's list */
    qr_krec_seg **dir_seg;   /* per direction: what each of its segments was */
    size_t *dir_n;           /* per direction: its segments */
    size_t n_dirs;
    int64_t base_ns;
    char checked_id[96]; /* the id of the like its packets were checked against ("": none) */
    qr_krec_set_stats st;
    /* while building */
    struct cand *c;
    size_t n_c, cap_c;
    qri_map key;  /* addresses and ports (standalone) or the like's directions -> cand or dir + 1 */
    qri_map addr; /* standalone: a local address -> its host + 1 */
    char *err;
};

static int is_loopback(const qr_krec_ends *e)
{
    static const uint8_t v6lo[16] = {[15] = 1};
    return e->family == 4 ? e->laddr[0] == 127 || e->raddr[0] == 127
                          : !memcmp(e->laddr, v6lo, 16) || !memcmp(e->raddr, v6lo, 16);
}

static void addr_key(uint8_t family, const uint8_t a[16], uint64_t *k1, uint64_t *k2)
{
    uint8_t b[36] = {0};
    b[0] = family;
    memcpy(b + 4, a, family == 4 ? 4 : 16);
    qri_hash36(b, k1, k2);
}

/* The 36-byte key of addresses and ports: (a, pa) then (b, pb). */
static void tuple_key(const uint8_t a[16], uint16_t pa, const uint8_t b[16], uint16_t pb,
                      uint64_t *k1, uint64_t *k2)
{
    uint8_t key[36];
    memcpy(key, a, 16);
    memcpy(key + 16, b, 16);
    memcpy(key + 32, &pa, 2);
    memcpy(key + 34, &pb, 2);
    qri_hash36(key, k1, k2);
}

static void addr_text(uint8_t family, const uint8_t a[16], char *out, size_t size)
{
    if (family == 4)
        snprintf(out, size, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
    else
        snprintf(out, size, "an IPv6 address ending :%02x%02x", a[14], a[15]);
}

/* Standalone: every record's local addresses are its host's (loopback aside). */
static int map_addresses(qr_krec_set *ks, const char *const *paths)
{
    for (size_t i = 0; i < ks->n; i++) {
        const qr_krec_conn *c;
        size_t nc = qr_krec_conns(ks->k[i], &c);
        for (size_t j = 0; j < nc; j++) {
            if (is_loopback(&c[j].ends))
                continue;
            uint64_t k1, k2;
            addr_key(c[j].ends.family, c[j].ends.laddr, &k1, &k2);
            uintptr_t h = (uintptr_t)qri_map_get(&ks->addr, k1, k2);
            if (h && h - 1 != i) {
                char a[64];
                addr_text(c[j].ends.family, c[j].ends.laddr, a, sizeof a);
                return qri_err(ks->err, QR_EVALUE,
                               "%s and %s: %s is an address of both (one record per host)",
                               paths[h - 1], paths[i], a);
            }
            if (!h && qri_map_put(&ks->addr, k1, k2, (void *)(uintptr_t)(i + 1)))
                return qri_err(ks->err, QR_ENOMEM, "out of memory");
        }
    }
    return QR_OK;
}

static struct cand *new_cand(qr_krec_set *ks)
{
    if (qri_grow((void **)&ks->c, &ks->cap_c, ks->n_c, sizeof *ks->c, 64))
        return NULL;
    struct cand *x = &ks->c[ks->n_c++];
    *x = (struct cand){{{-1, 0}, {-1, 0}}, {0, 0}, 0, 0, -1};
    return x;
}

/* Standalone: connection end (rec i, conn j) into the connection of its addresses and ports. */
static int place_end(qr_krec_set *ks, size_t i, uint32_t j, const qr_krec_ends *e)
{
    uint64_t k1, k2;
    addr_key(e->family, e->raddr, &k1, &k2);
    uintptr_t peer = (uintptr_t)qri_map_get(&ks->addr, k1, k2);
    if (!peer) {
        ks->st.no_host++;
        return QR_OK;
    }
    if (peer - 1 == i) {
        ks->st.same_host++;
        return QR_OK;
    }
    int lo = memcmp(e->laddr, e->raddr, 16) < 0 ||
             (!memcmp(e->laddr, e->raddr, 16) && e->lport < e->rport);
    int side = lo ? 0 : 1;
    if (lo)
        tuple_key(e->laddr, e->lport, e->raddr, e->rport, &k1, &k2);
    else
        tuple_key(e->raddr, e->rport, e->laddr, e->lport, &k1, &k2);
    void **slot = qri_map_slot(&ks->key, k1, k2);
    int32_t at = slot ? (int32_t)((uintptr_t)*slot - 1) : -1, last = -1;
    while (at >= 0 && ks->c[at].e[side].rec >= 0) /* the first on these ends without this side */
        last = at, at = ks->c[at].next;
    if (at < 0) {
        struct cand *x = new_cand(ks);
        if (!x)
            return QR_ENOMEM;
        at = (int32_t)(ks->n_c - 1);
        if (last >= 0)
            ks->c[last].next = at;
        else if (qri_map_put(&ks->key, k1, k2, (void *)(uintptr_t)(at + 1)))
            return QR_ENOMEM;
    }
    struct cand *x = &ks->c[at];
    x->e[side] = (struct end_ref){(int32_t)i, j};
    x->host[side] = (uint32_t)i;
    x->host[!side] = (uint32_t)(peer - 1);
    return QR_OK;
}

/* Standalone: which end opened each connection (both seen: the earlier to open, ties and one end
 * seen: the end on the higher port, as a client's ephemeral port is), and when. */
static void orient(qr_krec_set *ks)
{
    for (size_t i = 0; i < ks->n_c; i++) {
        struct cand *x = &ks->c[i];
        const qr_krec_conn *cc[2] = {NULL, NULL};
        for (int s = 0; s < 2; s++)
            if (x->e[s].rec >= 0) {
                const qr_krec_conn *all;
                qr_krec_conns(ks->k[x->e[s].rec], &all);
                cc[s] = &all[x->e[s].conn];
            }
        const qr_krec_conn *any = cc[0] ? cc[0] : cc[1];
        /* the port of side 0's end */
        uint16_t p0 = cc[0] ? cc[0]->ends.lport : cc[1]->ends.rport;
        uint16_t p1 = cc[0] ? cc[0]->ends.rport : cc[1]->ends.lport;
        if (cc[0] && cc[1] && cc[0]->open_ns != cc[1]->open_ns)
            x->opener = cc[0]->open_ns < cc[1]->open_ns ? 0 : 1;
        else
            x->opener = p0 > p1 ? 0 : 1;
        x->open_ns = cc[x->opener] ? cc[x->opener]->open_ns : any->open_ns;
    }
}

/* Standalone: every connection end of the records placed, then oriented. */
static int collect_ends(qr_krec_set *ks)
{
    for (size_t i = 0; i < ks->n; i++) {
        const qr_krec_conn *c;
        size_t nc = qr_krec_conns(ks->k[i], &c);
        ks->st.connections += nc;
        for (size_t j = 0; j < nc; j++) {
            if (is_loopback(&c[j].ends)) {
                ks->st.loopback++;
                continue;
            }
            if (place_end(ks, i, (uint32_t)j, &c[j].ends))
                return qri_err(ks->err, QR_ENOMEM, "out of memory");
        }
    }
    orient(ks);
    return QR_OK;
}

/* With like: its connections by their addresses and ports as captured (recording.h5
 * /import/connections: end 0 its flow's source) and its time base, and the records' connection
 * ends placed on them. */
static int collect_like(qr_krec_set *ks, const qr_recording *like)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/recording.h5", like->dir);
    qr_h5_reader *h = NULL;
    qr_row_import_conn *rows = NULL;
    size_t n = 0, nf = qr_flow_table_flows(like->flows);
    double base = 0;
    int rc = qr_h5_open(&h, path, ks->err);
    if (!rc && (qr_h5_read_rows(h, "/import/connections", &qr_schema_import_conn, (void **)&rows,
                                &n, ks->err) ||
                qr_h5_read_attr_f64(h, "/import", "time_base_ns", &base, ks->err)))
        rc = qri_err(ks->err, QR_EFORMAT,
                     "%s: not an import of captures (no /import): nothing to name the records' "
                     "connections by",
                     path);
    qr_h5_close(h);
    for (size_t f = 0; !rc && f < nf; f++)
        if (!new_cand(ks))
            rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        uint8_t a[16], b[16];
        uint64_t k1, k2;
        if (rows[i].flow >= nf || qr_addr_parse(rows[i].addr0, a) ||
            qr_addr_parse(rows[i].addr1, b)) {
            rc = qri_err(ks->err, QR_EFORMAT, "%s: /import/connections row %zu is malformed", path,
                         i);
            break;
        }
        /* direction 2f: from end 0; 2f + 1: from end 1 */
        tuple_key(a, rows[i].port0, b, rows[i].port1, &k1, &k2);
        if (qri_map_put(&ks->key, k1, k2, (void *)(uintptr_t)(2 * rows[i].flow + 1)))
            rc = QR_ENOMEM;
        tuple_key(b, rows[i].port1, a, rows[i].port0, &k1, &k2);
        if (!rc && qri_map_put(&ks->key, k1, k2, (void *)(uintptr_t)(2 * rows[i].flow + 2)))
            rc = QR_ENOMEM;
    }
    qr_h5_rows_free(rows);
    if (rc)
        return rc;
    if (!ks->base_ns)
        ks->base_ns = (int64_t)base;
    for (size_t i = 0; i < ks->n; i++) {
        const qr_krec_conn *c;
        size_t nc = qr_krec_conns(ks->k[i], &c);
        ks->st.connections += nc;
        for (size_t j = 0; j < nc; j++) {
            const qr_krec_ends *e = &c[j].ends;
            uint8_t la[16], ra[16];
            uint64_t k1, k2;
            qr_krec_addr_mapped(e->family, e->laddr, la);
            qr_krec_addr_mapped(e->family, e->raddr, ra);
            tuple_key(la, e->lport, ra, e->rport, &k1, &k2);
            uintptr_t d = (uintptr_t)qri_map_get(&ks->key, k1, k2);
            struct cand *x = d ? &ks->c[(d - 1) / 2] : NULL;
            if (!x || x->e[(d - 1) % 2].rec >= 0) {
                ks->st.not_in_like++;
                continue;
            }
            x->e[(d - 1) % 2] = (struct end_ref){(int32_t)i, (uint32_t)j};
        }
    }
    for (size_t f = 0; f < nf; f++) {
        const qr_flow *fl = qr_flow_table_flow(like->flows, (uint32_t)f);
        ks->c[f].host[0] = fl->src, ks->c[f].host[1] = fl->dst;
        ks->c[f].opener = 0;
    }
    return QR_OK;
}

static int cmp_open(const void *a, const void *b, void *ctx)
{
    const struct cand *c = ctx;
    const struct cand *x = &c[*(const uint32_t *)a], *y = &c[*(const uint32_t *)b];
    return (x->open_ns > y->open_ns) - (x->open_ns < y->open_ns);
}

/* The flows in the order their openers opened them (with like: its flows), each direction's
 * sender end into ks->dir_end; the table for s's topology into *ft. */
static int make_flows(qr_krec_set *ks, const qr_scenario *s, const qr_recording *like,
                      qr_flow_table **ft)
{
    size_t n = ks->n_c;
    uint32_t *ord = malloc((n ? n : 1) * sizeof *ord);
    qr_flow *flows = malloc((n ? n : 1) * sizeof *flows);
    ks->dir_end = malloc((2 * n + 1) * sizeof *ks->dir_end);
    if (!ord || !flows || !ks->dir_end) {
        free(ord);
        free(flows);
        return qri_err(ks->err, QR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = (uint32_t)i;
    if (!like && qri_sort(ord, n, sizeof *ord, cmp_open, ks->c)) {
        free(ord);
        free(flows);
        return qri_err(ks->err, QR_ENOMEM, "out of memory");
    }
    int64_t base = INT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (ks->c[i].open_ns < base)
            base = ks->c[i].open_ns;
    ks->base_ns = ks->base_ns ? ks->base_ns : base;
    for (size_t f = 0; f < n; f++) {
        const struct cand *x = &ks->c[ord[f]];
        int o = x->opener;
        const struct end_ref *op = &x->e[o];
        const qr_krec_conn *oc = NULL;
        if (op->rec >= 0) {
            const qr_krec_conn *all;
            qr_krec_conns(ks->k[op->rec], &all);
            oc = &all[op->conn];
        }
        flows[f] = like ? *qr_flow_table_flow(qr_recording_flows(like), (uint32_t)f)
                        : (qr_flow){f,
                                    x->host[o],
                                    x->host[!o],
                                    oc ? oc->call_bytes[0] : 0,
                                    x->open_ns - ks->base_ns,
                                    0};
        ks->dir_end[2 * f] = x->e[o];
        ks->dir_end[2 * f + 1] = x->e[!o];
        ks->st.both_ends += x->e[0].rec >= 0 && x->e[1].rec >= 0;
        ks->st.one_end += (x->e[0].rec >= 0) != (x->e[1].rec >= 0);
    }
    ks->n_dirs = 2 * n;
    ks->st.flows = n;
    free(ord);
    qr_topology *topo = NULL;
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_topology_of_config(&topo, qr_scenario_config(s));
    if (!rc)
        rc = qr_flow_table_for_topology(ft, flows, n, topo, detail);
    if (rc)
        qri_err(ks->err, rc, "the recorded connections do not fit the topology: %s", detail);
    qr_topology_destroy(topo);
    free(flows);
    return rc;
}

/* The end's connection (NULL: not recorded). */
static const qr_krec_conn *end_conn(const qr_krec_set *ks, const struct end_ref *e)
{
    if (e->rec < 0)
        return NULL;
    const qr_krec_conn *all;
    qr_krec_conns(ks->k[e->rec], &all);
    return &all[e->conn];
}

/* Whether [seq, seq + span) overlaps a hole the receiver's connection saw. */
static int in_hole(const qr_krec_event *a, size_t n, uint32_t seq, uint32_t span)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].kind == QR_KREC_HOLE && (int32_t)(seq - (a[i].seq + a[i].bytes)) < 0 &&
            (int32_t)(a[i].seq - (seq + (span ? span : 1))) < 0)
            return 1;
    return 0;
}

/* A direction's segments while its packets are made: each one's sequence space, to find the
 * transmission a resend repeats. */
struct seg_span {
    uint32_t seq, span;
};

/* The latest segment before j whose sequence space holds seq (-1: none, the resend of bytes this
 * record never saw sent). */
static int64_t covering(const struct seg_span *sp, size_t j, uint32_t seq)
{
    for (size_t i = j; i-- > 0;)
        if ((int32_t)(seq - sp[i].seq) >= 0 && (int32_t)(seq - (sp[i].seq + sp[i].span)) < 0)
            return (int64_t)i;
    return -1;
}

/* How long after a resent packet is handed to the NIC its resend event may come, beyond the
 * inference error of its send time (the finest threshold): the kernel traces a resend right
 * after it transmits it. */
#define RESEND_SLACK_NS 20000

/* The resend event that segment s (sent at t_s, inferred within tol) repeats. A resent packet
 * of several segments (GSO) has one event, at its first segment: s continuing the previous
 * resent segment is of its packet unless the next event is at s's sequence number and its time
 * (then s was a packet of its own). Else the next event at s's sequence number, a few ahead at
 * most (an event the kernel could not hand over is skipped). Returns the kind, or -1 (no event:
 * no reason known). */
static int resend_kind(const qr_krec_event *ev, size_t n, size_t *at, const qr_krec_segment *s,
                       int64_t t_s, int64_t tol, uint32_t prev_end, int prev_kind)
{
    int64_t d = *at < n ? ev[*at].t_ns - t_s : 0;
    int own = *at < n && ev[*at].seq == s->seq && d <= tol + RESEND_SLACK_NS && d >= -tol;
    if (prev_kind >= 0 && s->seq == prev_end && !own)
        return prev_kind;
    for (size_t i = *at; i < n && i < *at + 16; i++)
        if (ev[i].seq == s->seq) {
            *at = i + 1;
            return (int)ev[i].kind;
        }
    return -1;
}

/* A resend of a direction: its segment, the transmission it repeats, why, when. */
struct resend {
    size_t j, orig;
    int kind;
    int64_t t;
};

/* Whether the receiver's record shows the bytes of resend x arriving as a duplicate (they had
 * all arrived before: the resend was not needed), between its sending and the next transmission
 * of its first byte (x's time and the next's inferred within tol; the hosts' clocks one). */
static int arrived_twice(const struct resend *x, const struct resend *next, size_t n_next,
                         const struct seg_span *sp, const qr_krec_event *arr, size_t n_arr,
                         int64_t tol)
{
    uint32_t lo = sp[x->j].seq, hi = lo + (sp[x->j].span ? sp[x->j].span : 1);
    int64_t until = INT64_MAX;
    for (size_t i = 0; i < n_next && i < 64; i++)
        if ((int32_t)(lo - sp[next[i].j].seq) >= 0 &&
            (int32_t)(lo - (sp[next[i].j].seq + sp[next[i].j].span)) < 0) {
            until = next[i].t - tol;
            break;
        }
    for (size_t i = 0; i < n_arr; i++)
        if (arr[i].kind == QR_KREC_DUPLICATE && arr[i].t_ns >= x->t - tol && arr[i].t_ns < until &&
            (int32_t)(arr[i].seq - hi) < 0 && (int32_t)(lo - (arr[i].seq + arr[i].bytes)) < 0)
            return 1;
    return 0;
}

/* The loss tags of direction d's resends rs[0..n) on its packets pk (the first of the
 * direction's): with the receiver's record whole (no event lost), a transmission was lost
 * where its resend did not arrive as a duplicate, whatever TCP's reason (a probe that repaired
 * a tail loss included, a spurious timeout not); else where TCP resent it by fast retransmit or
 * its timer (its own conclusion; a probe concludes nothing). */
static void tag_losses(qr_krec_set *ks, qr_rec_packet *pk, qr_krec_seg *seg,
                       const struct resend *rs, size_t n, const struct seg_span *sp,
                       const qr_krec *rk, uint32_t rconn, int64_t tol)
{
    size_t n_arr = 0;
    const qr_krec_event *arr = rk ? qr_krec_arrivals(rk, rconn, &n_arr) : NULL;
    qr_krec_stats rst = {0};
    if (rk)
        qr_krec_stats_get(rk, &rst);
    int whole = rk && !rst.lost_events;
    for (size_t i = 0; i < n; i++) {
        const struct resend *x = &rs[i];
        if (x->kind < 0)
            ks->st.unexplained++;
        else if (x->kind == QR_KREC_PROBE)
            ks->st.probes++;
        int lost;
        if (whole) {
            lost = !arrived_twice(x, rs + i + 1, n - i - 1, sp, arr, n_arr, tol);
            ks->st.spurious += !lost && x->kind > QR_KREC_PROBE;
            ks->st.probe_repairs += lost && x->kind == QR_KREC_PROBE;
            seg[x->j].duplicate = (uint8_t)!lost;
        } else {
            lost = x->kind > QR_KREC_PROBE;
        }
        qr_rec_packet *o = &pk[x->orig];
        if (lost && !o->drop_tag) {
            o->drop_tag = 1;
            ks->st.lost++;
            ks->st.lost_confirmed += in_hole(arr, n_arr, sp[x->orig].seq, sp[x->orig].span);
        }
    }
}

/* Direction d's packets from its sender's record into host h's list, its loss tags from the
 * sender's resends and the receiver's arrivals (tag_losses). */
static int make_dir(qr_krec_set *ks, qr_recording *r, uint32_t d)
{
    const struct end_ref *se = &ks->dir_end[d], *re = &ks->dir_end[d ^ 1u];
    const qr_krec_conn *sc = end_conn(ks, se);
    if (!sc) {
        ks->st.unrecorded_dirs++;
        return QR_OK;
    }
    const qr_flow *f = qr_flow_table_flow(r->flows, d / 2);
    uint32_t src = d % 2 ? f->dst : f->src, dst = d % 2 ? f->src : f->dst;
    uint16_t sender = qr_flow_table_sender_port(r->flows, d / 2);
    struct host_pk *hp = &r->hosts[src];
    size_t n_runs, n_ev;
    const qr_krec_run *runs = qr_krec_runs(ks->k[se->rec], se->conn, &n_runs);
    const qr_krec_event *ev = qr_krec_resends(ks->k[se->rec], se->conn, &n_ev);
    struct seg_span *sp = malloc((sc->packets ? sc->packets : 1) * sizeof *sp);
    qr_krec_seg *seg = ks->dir_seg[d] = calloc(sc->packets ? sc->packets : 1, sizeof *seg);
    struct resend *rs = NULL;
    size_t n_rs = 0, cap_rs = 0, first = hp->n;
    if (!sp || !seg ||
        qri_reserve((void **)&hp->pk, &hp->cap, hp->n + sc->packets, sizeof *hp->pk, 64))
        return free(sp), QR_ENOMEM;
    qr_krec_walk w;
    qr_krec_segment s;
    qr_krec_walk_start(&w, runs, n_runs);
    size_t at = 0, n_smp, pos = 0;
    uint32_t prev_end = 0;
    int prev_kind = -1;
    /* each segment's send time, inferred at the finest threshold (its error within it) */
    const qr_sample_record *smp = qr_krec_samples(ks->k[se->rec], se->conn, 0, &n_smp);
    int64_t tol = qr_krec_header_of(ks->k[se->rec])->th_ns[0];
    for (uint32_t j = 0; j < sc->packets && qr_krec_walk_next(&w, &s); j++) {
        if (s.size > UINT16_MAX || s.hdr < 40 || s.hdr > s.size) {
            free(sp);
            free(rs);
            return qri_err(ks->err, QR_EFORMAT,
                           "%s: connection %u segment %u: %u bytes with %u of headers",
                           qr_krec_host(ks->k[se->rec]), sc->id, j, s.size, s.hdr);
        }
        sp[j] = (struct seg_span){s.seq, s.span};
        seg[j] = (qr_krec_seg){-1, 0, j};
        ks->dir_n[d] = j + 1;
        qr_rec_packet *p = &hp->pk[hp->n++];
        memset(p, 0, sizeof *p);
        p->dir = d, p->seq = j;
        p->pk.src_ip = qr_flow_table_host_addr(r->flows, src);
        p->pk.dst_ip = qr_flow_table_host_addr(r->flows, dst);
        p->pk.src_port = d % 2 ? QR_SINK_PORT : sender;
        p->pk.dst_port = d % 2 ? sender : QR_SINK_PORT;
        p->pk.proto = 6, p->pk.ttl = 64, p->pk.ip_id = (uint16_t)j, p->pk.ip_len = (uint16_t)s.size;
        p->pk.seq = s.seq;
        p->pk.tcp_flags = (uint8_t)(s.flags | (d % 2 == 0 && (s.flags & TCP_SYN) ? 0 : TCP_ACK));
        /* options of the recorded length (IPv4 and TCP headers are 40 bytes; IPv6's 20 more),
         * their content unknown: no-operations */
        unsigned opt = s.hdr - 40u - (sc->ends.family == 6 ? 20u : 0u);
        p->pk.tcp_opt_len = (uint8_t)((opt > QR_TCP_OPTIONS_MAX ? QR_TCP_OPTIONS_MAX : opt) & ~3u);
        memset(p->pk.tcp_opts, 1, p->pk.tcp_opt_len);
        int64_t orig = s.jump ? covering(sp, j, s.seq) : -1;
        if (orig < 0) {
            prev_kind = -1;
            continue;
        }
        int64_t t_s = 0;
        if (qr_sample_infer_next(smp, n_smp, &pos, j, &t_s) != QR_OK)
            t_s = INT64_MIN / 2; /* no time: never its own event by time */
        int kind = resend_kind(ev, n_ev, &at, &s, t_s, tol, prev_end, prev_kind);
        prev_end = s.seq + s.span, prev_kind = kind;
        seg[j].resend = (int8_t)(kind < 0 ? QR_KREC_UNEXPLAINED : kind);
        seg[j].orig = (uint32_t)orig;
        if (qri_grow((void **)&rs, &cap_rs, n_rs, sizeof *rs, 16))
            return free(sp), free(rs), QR_ENOMEM;
        rs[n_rs++] = (struct resend){j, (size_t)orig, kind, t_s};
    }
    tag_losses(ks, &hp->pk[first], seg, rs, n_rs, sp, re->rec >= 0 ? ks->k[re->rec] : NULL,
               re->conn, tol);
    free(sp);
    free(rs);
    ks->st.packets += sc->packets;
    return QR_OK;
}

/* With like: every direction's packets against its, size by size. */
static int check_like(const qr_krec_set *ks, const qr_recording *r, const qr_recording *like)
{
    for (uint32_t h = 0; h < qr_recording_hosts(like); h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(like, h, &n);
        for (size_t i = 0; i < n; i++) {
            uint32_t d = p[i].dir;
            const struct end_ref *se = &ks->dir_end[d];
            if (se->rec < 0)
                continue;
            const char *who = qr_krec_host(ks->k[se->rec]);
            const char *what = d % 2 ? "ACKs" : "data";
            if (p[i].seq >= end_conn(ks, se)->packets)
                return qri_err(ks->err, QR_EVALUE,
                               "flow %u %s packet %u: captured (%u bytes), beyond the %" PRIu64
                               " %s's record holds: records of another run?",
                               d / 2, what, p[i].seq, p[i].pk.ip_len, end_conn(ks, se)->packets,
                               who);
            const qr_rec_packet *q = &r->hosts[h].pk[ks->dir_at[d] + p[i].seq];
            if (q->pk.ip_len != p[i].pk.ip_len)
                return qri_err(ks->err, QR_EVALUE,
                               "flow %u %s packet %u: %u bytes in %s's record, captured %u: "
                               "records of another run?",
                               d / 2, what, p[i].seq, q->pk.ip_len, who, p[i].pk.ip_len);
        }
    }
    return QR_OK;
}

/* The plan of th index ti over r's packets: each direction's times inferred from its sender's
 * samples (relative to the set's time 0). records: NULL, or room for every sample record. */
static int plan_times(const qr_krec_set *ks, const qr_recording *r, size_t ti, qr_plan *p,
                      qr_sampling_stats *st, qr_row_sample_record *o, size_t *n_out, char *errbuf)
{
    for (uint32_t h = 0; h < r->n_hosts; h++) {
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
        for (size_t i = 0; i < n;) {
            uint32_t d = pk[i].dir;
            const struct end_ref *se = &ks->dir_end[d];
            size_t nr, pos = 0, e = i;
            const qr_sample_record *rv = qr_krec_samples(ks->k[se->rec], se->conn, ti, &nr);
            for (; e < n && pk[e].dir == d; e++) {
                if (qr_sample_infer_next(rv, nr, &pos, pk[e].seq, &p->time[h][e]) != QR_OK)
                    return qri_err(errbuf, QR_EVALUE, "%s: connection %u packet %u: no send time",
                                   qr_krec_host(ks->k[se->rec]), se->conn, pk[e].seq);
                p->time[h][e] -= ks->base_ns;
            }
            st->packets += e - i;
            st->records += nr;
            for (size_t j = 0; o && j < nr; j++)
                o[(*n_out)++] = (qr_row_sample_record){d, rv[j].index, rv[j].time_ns - ks->base_ns,
                                                       rv[j].gap_num, rv[j].gap_den};
            i = e;
        }
        int rc = qri_plan_order_host(p, h);
        if (rc)
            return rc;
    }
    return QR_OK;
}

int qr_krec_set_plan(qr_plan **out, const qr_krec_set *ks, qr_sampling_method method, int64_t th_ns,
                     qr_sampling_stats *stats, qr_row_sample_record **records, size_t *n_records,
                     char *errbuf)
{
    *out = NULL;
    const qr_krec_header *h = qr_krec_header_of(ks->k[0]);
    size_t ti = 0;
    while (ti < h->n_th && h->th_ns[ti] != th_ns)
        ti++;
    if (ti == h->n_th || method != h->method) {
        char list[256] = "";
        for (size_t i = 0; i < h->n_th; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%" PRId64 " ns",
                     i ? ", " : "", h->th_ns[i]);
        return qri_err(errbuf, QR_EINVAL,
                       "the records hold send times sampled (%s) at %s; not at %" PRId64 " ns (%s)",
                       h->method == QR_SAMPLING_GAP ? "gap" : "rate", list, th_ns,
                       method == QR_SAMPLING_GAP ? "gap" : "rate");
    }
    size_t n_rec = 0;
    for (size_t d = 0; records && d < ks->n_dirs; d++)
        if (ks->dir_end[d].rec >= 0) {
            size_t nr;
            qr_krec_samples(ks->k[ks->dir_end[d].rec], ks->dir_end[d].conn, ti, &nr);
            n_rec += nr;
        }
    qr_sampling_stats st = {0, 0, 0};
    size_t n_out = 0;
    qr_row_sample_record *o = records ? malloc((n_rec ? n_rec : 1) * sizeof *o) : NULL;
    qr_plan *p = NULL;
    int rc = records && !o ? QR_ENOMEM : qri_plan_alloc(&p, ks->rec);
    if (!rc)
        rc = plan_times(ks, ks->rec, ti, p, &st, o, &n_out, errbuf);
    return qri_plan_hand_over(rc, p, o, n_out, &st, out, stats, records, n_records, errbuf);
}

/* The records' method and thresholds, the same in each. */
static int check_headers(qr_krec_set *ks, const char *const *paths)
{
    const qr_krec_header *a = qr_krec_header_of(ks->k[0]);
    for (size_t i = 1; i < ks->n; i++) {
        const qr_krec_header *b = qr_krec_header_of(ks->k[i]);
        if (b->method != a->method || b->n_th != a->n_th ||
            memcmp(b->th_ns, a->th_ns, a->n_th * sizeof *a->th_ns))
            return qri_err(ks->err, QR_EVALUE,
                           "%s and %s sampled send times with other methods or thresholds: "
                           "record the hosts with the same --threshold",
                           paths[0], paths[i]);
    }
    return QR_OK;
}

/* The recording's id: the like's, or one from the records' digests and hosts. */
static int make_id(qr_krec_set *ks, qr_recording *r, const qr_recording *like)
{
    if (like) {
        snprintf(r->id, sizeof r->id, "%s", qr_recording_id(like));
        return QR_OK;
    }
    char *extra = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&extra, &size);
    if (!m)
        return QR_ENOMEM;
    for (size_t i = 0; i < ks->n; i++)
        fprintf(m, "%s %s\n", ks->sha[i], qr_krec_host(ks->k[i]));
    int rc = fclose(m) ? QR_ENOMEM : qr_recording_id_of("krecord", r->scenario, extra, r->id);
    free(extra);
    return rc;
}

/* r's scenario: a copy of s. */
static int copy_scenario(qr_recording *r, const qr_scenario *s, char *errbuf)
{
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (!m)
        return QR_ENOMEM;
    int rc = qr_scenario_print(s, m);
    if (fclose(m) && !rc)
        rc = QR_ENOMEM;
    if (!rc)
        rc = qr_scenario_create(&r->scenario);
    if (!rc)
        rc = qr_scenario_load_string(r->scenario, text, "the scenario", ".", errbuf);
    free(text);
    return rc;
}

/* The packets of every direction, their tags, whose observations they are; their times the
 * inference at the finest threshold. */
static int make_packets(qr_krec_set *ks, qr_recording *r)
{
    r->n_hosts = qr_flow_table_hosts(r->flows);
    r->hosts = calloc(r->n_hosts ? r->n_hosts : 1, sizeof *r->hosts);
    r->seen = calloc(ks->n_dirs + 1, 1);
    r->n_seen = ks->n_dirs;
    ks->dir_at = calloc(ks->n_dirs + 1, sizeof *ks->dir_at);
    ks->dir_seg = calloc(ks->n_dirs + 1, sizeof *ks->dir_seg);
    ks->dir_n = calloc(ks->n_dirs + 1, sizeof *ks->dir_n);
    r->received = malloc(sizeof *r->received);
    r->dir = strdup(".");
    if (!r->hosts || !r->seen || !ks->dir_at || !ks->dir_seg || !ks->dir_n || !r->received ||
        !r->dir)
        return QR_ENOMEM;
    for (uint32_t d = 0; d < ks->n_dirs; d++) {
        const qr_flow *f = qr_flow_table_flow(r->flows, d / 2);
        ks->dir_at[d] = r->hosts[d % 2 ? f->dst : f->src].n;
        r->seen[d] = ks->dir_end[d].rec >= 0 ? QR_TC_AT_SENDER : 0;
        int rc = make_dir(ks, r, d);
        if (rc)
            return rc;
    }
    r->detected = malloc((ks->st.lost ? ks->st.lost : 1) * sizeof *r->detected);
    if (!r->detected)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < r->n_hosts; h++)
        for (size_t i = 0; i < r->hosts[h].n; i++)
            if (r->hosts[h].pk[i].drop_tag)
                r->detected[r->n_detected++] =
                    qr_packet_id(r->hosts[h].pk[i].dir, r->hosts[h].pk[i].seq);
    qsort(r->detected, r->n_detected, sizeof *r->detected, qri_cmp_u64);
    qr_plan *p = NULL;
    qr_sampling_stats st = {0, 0, 0};
    int rc = qri_plan_alloc(&p, r);
    if (!rc)
        rc = plan_times(ks, r, 0, p, &st, NULL, NULL, ks->err);
    for (uint32_t h = 0; !rc && h < r->n_hosts; h++)
        for (size_t i = 0; i < r->hosts[h].n; i++)
            r->hosts[h].pk[i].pk.time_ns = p->time[h][i];
    qr_plan_free(p);
    return rc;
}

static int open_records(qr_krec_set *ks, const char *const *paths)
{
    ks->k = calloc(ks->n, sizeof *ks->k);
    ks->sha = calloc(ks->n, sizeof *ks->sha);
    if (!ks->k || !ks->sha)
        return qri_err(ks->err, QR_ENOMEM, "out of memory");
    for (size_t i = 0; i < ks->n; i++) {
        int rc = qr_krec_open(&ks->k[i], paths[i], ks->err);
        if (!rc && qri_sha256_file(paths[i], ks->sha[i], NULL))
            rc = qri_err(ks->err, QR_EIO, "%s: cannot be read again", paths[i]);
        if (rc)
            return rc;
        qr_krec_stats kst;
        qr_krec_stats_get(ks->k[i], &kst);
        ks->st.lost_events += kst.lost_events;
    }
    return check_headers(ks, paths);
}

static int build(qr_krec_set *ks, const qr_scenario *s, const char *const *paths,
                 const qr_krec_set_opts *o)
{
    uint32_t hosts = qr_config_hosts(qr_scenario_config(s));
    if (ks->n == 0 || ks->n > hosts)
        return qri_err(ks->err, QR_EVALUE, "%zu records for the scenario's %u hosts", ks->n, hosts);
    int rc = open_records(ks, paths);
    if (rc)
        return rc;
    ks->base_ns = o->time_base_ns;
    if (qri_map_init(&ks->key) || qri_map_init(&ks->addr))
        return qri_err(ks->err, QR_ENOMEM, "out of memory");
    if (o->like)
        rc = collect_like(ks, o->like);
    else if (!(rc = map_addresses(ks, paths)))
        rc = collect_ends(ks);
    if (rc)
        return rc == QR_ENOMEM ? qri_err(ks->err, rc, "out of memory") : rc;
    if (ks->n_c == 0)
        return qri_err(ks->err, QR_ENOTFOUND,
                       "the records hold no connection between two of their hosts (%" PRIu64
                       " connection ends: %" PRIu64 " on a loopback address, %" PRIu64
                       " within one host, %" PRIu64 " to a host not recorded)",
                       ks->st.connections, ks->st.loopback, ks->st.same_host, ks->st.no_host);
    qr_recording *r = ks->rec = calloc(1, sizeof *r);
    if (!r)
        return qri_err(ks->err, QR_ENOMEM, "out of memory");
    rc = copy_scenario(r, s, ks->err);
    if (!rc)
        rc = make_flows(ks, s, o->like, &r->flows);
    if (!rc)
        rc = make_packets(ks, r);
    if (!rc && o->like && !o->unchecked)
        rc = check_like(ks, r, o->like);
    if (!rc && o->like && !o->unchecked)
        snprintf(ks->checked_id, sizeof ks->checked_id, "%s", qr_recording_id(o->like));
    if (!rc)
        rc = make_id(ks, r, o->like);
    r->network_known = o->network_known;
    if (rc == QR_ENOMEM)
        return qri_err(ks->err, rc, "out of memory");
    return rc;
}

int qr_krec_set_open(qr_krec_set **out, const qr_scenario *s, const char *const *paths, size_t n,
                     const qr_krec_set_opts *o, char *errbuf)
{
    *out = NULL;
    qr_krec_set_opts none = {NULL, 0, 0, 0};
    qr_krec_set *ks = calloc(1, sizeof *ks);
    if (!ks)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    ks->n = n;
    ks->err = errbuf;
    ks->st.records = n;
    int rc = build(ks, s, paths, o ? o : &none);
    qri_map_free(&ks->key);
    qri_map_free(&ks->addr);
    free(ks->c);
    ks->c = NULL;
    ks->err = NULL;
    if (rc) {
        qr_krec_set_close(ks);
        return rc;
    }
    *out = ks;
    return QR_OK;
}

void qr_krec_set_close(qr_krec_set *ks)
{
    if (!ks)
        return;
    for (size_t i = 0; ks->k && i < ks->n; i++)
        qr_krec_close(ks->k[i]);
    free(ks->k);
    free(ks->sha);
    qr_recording_close(ks->rec);
    free(ks->dir_end);
    free(ks->dir_at);
    for (size_t d = 0; ks->dir_seg && d < ks->n_dirs; d++)
        free(ks->dir_seg[d]);
    free(ks->dir_seg);
    free(ks->dir_n);
    free(ks);
}

const qr_recording *qr_krec_set_recording(const qr_krec_set *ks)
{
    return ks->rec;
}

void qr_krec_set_stats_get(const qr_krec_set *ks, qr_krec_set_stats *st)
{
    *st = ks->st;
}

const qr_krec_header *qr_krec_set_header(const qr_krec_set *ks)
{
    return qr_krec_header_of(ks->k[0]);
}

const qr_rec_packet *qr_krec_set_direction(const qr_krec_set *ks, uint32_t d,
                                           const qr_krec_seg **segs, size_t *n)
{
    *segs = NULL;
    *n = 0;
    if (d >= ks->n_dirs || !ks->dir_seg[d])
        return NULL;
    const qr_flow *f = qr_flow_table_flow(ks->rec->flows, d / 2);
    *segs = ks->dir_seg[d];
    *n = ks->dir_n[d];
    return &ks->rec->hosts[d % 2 ? f->dst : f->src].pk[ks->dir_at[d]];
}

int qr_krec_set_end(const qr_krec_set *ks, uint32_t d, const qr_krec **k, uint32_t *conn)
{
    *k = NULL;
    *conn = 0;
    if (d >= ks->n_dirs || ks->dir_end[d].rec < 0)
        return QR_ENOTFOUND;
    *k = ks->k[ks->dir_end[d].rec];
    *conn = ks->dir_end[d].conn;
    return QR_OK;
}

int64_t qr_krec_set_time_base(const qr_krec_set *ks)
{
    return ks->base_ns;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int qr_krec_set_compare_times(const qr_krec_set *ks, const qr_recording *like, int64_t th_ns,
                              qr_krec_time_cmp *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    out->th_ns = th_ns;
    if (!ks->checked_id[0] || strcmp(ks->checked_id, qr_recording_id(like)))
        return qri_err(errbuf, QR_EINVAL,
                       "the records were not checked against this recording: their packets are "
                       "not its packets");
    qr_plan *p = NULL;
    int rc =
        qr_krec_set_plan(&p, ks, qr_krec_set_header(ks)->method, th_ns, NULL, NULL, NULL, errbuf);
    if (rc)
        return rc;
    size_t total = 0;
    for (uint32_t h = 0; h < qr_recording_hosts(like); h++) {
        size_t n;
        qr_recording_packets(like, h, &n);
        total += n;
    }
    int64_t *d = malloc((total ? total : 1) * sizeof *d);
    if (!d) {
        qr_plan_free(p);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    size_t m = 0;
    __int128 sum = 0, sum_abs = 0;
    for (uint32_t h = 0; h < qr_recording_hosts(like); h++) {
        size_t n;
        const qr_rec_packet *lp = qr_recording_packets(like, h, &n);
        for (size_t i = 0; i < n; i++) {
            uint32_t dir = lp[i].dir;
            if (dir >= ks->n_dirs || ks->dir_end[dir].rec < 0)
                continue; /* a direction whose sender was not recorded */
            const qr_flow *f = qr_flow_table_flow(ks->rec->flows, dir / 2);
            uint32_t sh = dir % 2 ? f->dst : f->src;
            size_t nt;
            const int64_t *t = qr_plan_times(p, sh, &nt);
            size_t at = ks->dir_at[dir] + lp[i].seq;
            if (at >= nt)
                continue;
            int64_t diff = t[at] - lp[i].pk.time_ns;
            sum += diff;
            d[m] = diff < 0 ? -diff : diff;
            sum_abs += d[m++];
        }
    }
    qr_plan_free(p);
    out->packets = m;
    if (m) {
        qsort(d, m, sizeof *d, cmp_i64);
        out->mean_ns = (int64_t)(sum_abs / (__int128)m);
        out->bias_ns = (int64_t)(sum / (__int128)m);
        out->p50_ns = d[qr_percentile_rank(0.5, m) - 1];
        out->p99_ns = d[qr_percentile_rank(0.99, m) - 1];
        out->max_ns = d[m - 1];
    }
    free(d);
    return QR_OK;
}
