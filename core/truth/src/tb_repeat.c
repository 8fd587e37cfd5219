/* The butterfly on real kernels: a run's drops as fates for the packet corrector, and a repeat
 * compared with its run, connection by connection. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/flowtable.h"
#include "qreplay/packet.h"
#include "qreplay/random.h"
#include "qreplay/tb_repeat.h"

/* A recording's packets per direction, in their order (seq within the direction). */
struct dirs {
    size_t n_dirs;
    const qr_packet **pk; /* per direction: its packets (first[d] .. first[d + 1]) */
    size_t *first;
    uint32_t *isn; /* per direction: its SYN's sequence number */
    uint8_t *have_isn;
};

static void dirs_free(struct dirs *d)
{
    free(d->pk);
    free(d->first);
    free(d->isn);
    free(d->have_isn);
}

static int dirs_of(const qr_recording *r, struct dirs *d)
{
    memset(d, 0, sizeof *d);
    d->n_dirs = qr_flow_table_directions(qr_recording_flows(r));
    uint32_t hosts = qr_recording_hosts(r);
    size_t total = 0;
    d->first = calloc(d->n_dirs + 1, sizeof *d->first);
    d->isn = calloc(d->n_dirs + 1, sizeof *d->isn);
    d->have_isn = calloc(d->n_dirs + 1, 1);
    if (!d->first || !d->isn || !d->have_isn)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < hosts; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(r, h, &n);
        for (size_t i = 0; i < n; i++)
            if (p[i].dir < d->n_dirs)
                d->first[p[i].dir + 1]++, total++;
    }
    for (size_t i = 0; i < d->n_dirs; i++)
        d->first[i + 1] += d->first[i];
    d->pk = calloc(total + 1, sizeof *d->pk);
    if (!d->pk)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < hosts; h++) {
        size_t n;
        const qr_rec_packet *p = qr_recording_packets(r, h, &n);
        for (size_t i = 0; i < n; i++) {
            uint32_t dir = p[i].dir;
            if (dir >= d->n_dirs || d->first[dir] + p[i].seq >= d->first[dir + 1])
                continue;
            d->pk[d->first[dir] + p[i].seq] = &p[i].pk;
            if ((p[i].pk.tcp_flags & QR_TCP_SYN) && !d->have_isn[dir])
                d->isn[dir] = p[i].pk.seq, d->have_isn[dir] = 1;
        }
    }
    return QR_OK;
}

static uint32_t reverse(uint32_t dir)
{
    uint32_t f = qr_dir_flow(dir);
    return qr_dir_is_ack(dir) ? qr_dir_data(f) : qr_dir_ack(f);
}

/* What a packet carries, relative to its connection's initial sequence numbers. */
struct sig {
    uint32_t rel_seq, rel_ack, len;
    uint8_t flags;
};

/* Packet i of direction dir; 0, or -1 when the numbers are not relative to a known start. */
static int sig_of(const struct dirs *d, uint32_t dir, size_t i, struct sig *s)
{
    const qr_packet *p = d->pk[d->first[dir] + i];
    uint32_t rev = reverse(dir);
    if (!p || !d->have_isn[dir])
        return -1;
    int ack = (p->tcp_flags & QR_TCP_ACK) != 0;
    if (ack && (rev >= d->n_dirs || !d->have_isn[rev]))
        return -1;
    uint32_t hdr = 40u + p->tcp_opt_len;
    s->rel_seq = p->seq - d->isn[dir];
    s->rel_ack = ack ? p->ack - d->isn[rev] : 0;
    s->len = p->ip_len > hdr ? p->ip_len - hdr : 0;
    s->flags = p->tcp_flags;
    return 0;
}

static int same_numbers(const struct sig *a, const struct sig *b)
{
    return a->rel_seq == b->rel_seq && a->rel_ack == b->rel_ack && a->len == b->len;
}

/* The address host-address a had on the wire. */
static uint32_t on_wire(const qr_recording *rec, const uint32_t *wire, uint32_t a)
{
    const qr_flow_table *ft = qr_recording_flows(rec);
    for (uint32_t h = 0; wire && h < qr_recording_hosts(rec); h++)
        if (qr_flow_table_host_addr(ft, h) == a)
            return wire[h];
    return a;
}

int qr_tb_fates(const qr_recording *rec, const qr_truth *t, const uint32_t *wire, qr_tb_fate **out,
                size_t *n, qr_tb_fates_report *rep, char *errbuf)
{
    *out = NULL;
    *n = 0;
    memset(rep, 0, sizeof *rep);
    struct dirs d;
    qr_tb_fate *f = calloc(t->n_drops + 1, sizeof *f);
    if (!f || dirs_of(rec, &d)) {
        free(f);
        dirs_free(&d);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    size_t nf = 0;
    for (size_t k = 0; k < t->n_drops; k++) {
        uint32_t dir = qr_packet_id_dir(t->drops[k].packet);
        uint64_t seq = qr_packet_id_seq(t->drops[k].packet);
        if (dir != t->drops[k].dir || dir >= d.n_dirs || seq >= d.first[dir + 1] - d.first[dir]) {
            free(f);
            dirs_free(&d);
            return qri_err(errbuf, QR_EVALUE,
                           "the truth's drop %zu (direction %u, packet %llu) is of no recorded "
                           "packet",
                           k, dir, (unsigned long long)seq);
        }
        rep->drops++;
        struct sig s, o;
        if (sig_of(&d, dir, (size_t)seq, &s)) {
            rep->no_start++;
            continue;
        }
        unsigned occ = 0; /* earlier packets of the direction with the same numbers */
        for (size_t i = 0; i < seq; i++)
            occ += !sig_of(&d, dir, i, &o) && same_numbers(&s, &o);
        if (occ >= QR_TB_FATE_MAX_OCCURRENCE) {
            rep->too_many++;
            continue;
        }
        const qr_packet *p = d.pk[d.first[dir] + seq];
        uint32_t sa = on_wire(rec, wire, p->src_ip), da = on_wire(rec, wire, p->dst_ip);
        size_t j = 0;
        while (j < nf && !(f[j].saddr == sa && f[j].daddr == da && f[j].sport == p->src_port &&
                           f[j].dport == p->dst_port && f[j].rel_seq == s.rel_seq &&
                           f[j].rel_ack == s.rel_ack && f[j].len == s.len))
            j++;
        if (j == nf)
            f[nf++] =
                (qr_tb_fate){sa, da, p->src_port, p->dst_port, s.rel_seq, s.rel_ack, s.len, 0};
        f[j].occurrences |= 1ull << occ;
        rep->expressed++;
    }
    dirs_free(&d);
    *out = f;
    *n = nf;
    return QR_OK;
}

/* The flow of b whose data direction has the ends of a's flow fa; -1 if none. */
static long match_flow(const struct dirs *a, const struct dirs *b, uint32_t fa)
{
    uint32_t da = qr_dir_data(fa);
    if (a->first[da] == a->first[da + 1] || !a->pk[a->first[da]])
        return -1;
    const qr_packet *x = a->pk[a->first[da]];
    for (uint32_t fb = 0; qr_dir_data(fb) < b->n_dirs; fb++) {
        uint32_t db = qr_dir_data(fb);
        if (b->first[db] == b->first[db + 1] || !b->pk[b->first[db]])
            continue;
        const qr_packet *y = b->pk[b->first[db]];
        if (x->src_ip == y->src_ip && x->dst_ip == y->dst_ip && x->src_port == y->src_port &&
            x->dst_port == y->dst_port)
            return fb;
    }
    return -1;
}

/* The data direction da of a against db of b: the same segments (sequence numbers and lengths)
 * in the same order. */
static int same_segments(const struct dirs *a, uint32_t da, const struct dirs *b, uint32_t db)
{
    size_t na = a->first[da + 1] - a->first[da], nb = b->first[db + 1] - b->first[db], i = 0;
    struct sig x, y;
    while (i < na && i < nb && !sig_of(a, da, i, &x) && !sig_of(b, db, i, &y) &&
           x.rel_seq == y.rel_seq && x.len == y.len)
        i++;
    return i == na && na == nb;
}

/* Direction da of a against db of b: packets equal before the first difference; 1 if all. */
static int compare_dir(const struct dirs *a, uint32_t da, const struct dirs *b, uint32_t db,
                       uint64_t *prefix)
{
    size_t na = a->first[da + 1] - a->first[da], nb = b->first[db + 1] - b->first[db], i = 0;
    struct sig x, y;
    while (i < na && i < nb && !sig_of(a, da, i, &x) && !sig_of(b, db, i, &y) &&
           same_numbers(&x, &y) && x.flags == y.flags)
        i++;
    *prefix += i;
    return i == na && na == nb;
}

int qr_tb_repeat_compare(const qr_recording *a, const qr_recording *b, qr_tb_repeat_conn *conns,
                         qr_tb_repeat_summary *sum, char *errbuf)
{
    memset(sum, 0, sizeof *sum);
    struct dirs da, db;
    int rc = dirs_of(a, &da);
    if (!rc)
        rc = dirs_of(b, &db);
    else
        memset(&db, 0, sizeof db);
    size_t flows = qr_flow_table_flows(qr_recording_flows(a));
    for (uint32_t f = 0; !rc && f < flows; f++) {
        qr_tb_repeat_conn c = {f, 0, 0, 0, 0, 0, 0};
        uint32_t d[2] = {qr_dir_data(f), qr_dir_ack(f)};
        for (int k = 0; k < 2; k++)
            c.packets += da.first[d[k] + 1] - da.first[d[k]];
        long g = match_flow(&da, &db, f);
        if (g >= 0) {
            uint32_t e[2] = {qr_dir_data((uint32_t)g), qr_dir_ack((uint32_t)g)};
            c.found = 1;
            c.exact = 1;
            for (int k = 0; k < 2; k++) {
                c.repeated += db.first[e[k] + 1] - db.first[e[k]];
                c.exact &= compare_dir(&da, d[k], &db, e[k], &c.same_prefix);
            }
            c.data_same = same_segments(&da, d[0], &db, e[0]);
        }
        sum->connections++;
        sum->found += (size_t)c.found;
        sum->exact += (size_t)c.exact;
        sum->data_same += (size_t)c.data_same;
        sum->packets += c.packets;
        sum->same_prefix += c.same_prefix;
        if (conns)
            conns[f] = c;
    }
    dirs_free(&da);
    dirs_free(&db);
    return rc ? qri_err(errbuf, QR_ENOMEM, "out of memory") : QR_OK;
}

void qr_tb_repeat_jitter(qr_flow *flows, size_t n, uint64_t seed, int k, int64_t jitter_ns)
{
    for (size_t f = 0; jitter_ns > 0 && f < n; f++)
        flows[f].start_ns +=
            (int64_t)(qr_seed_derive(seed, "repeat-jitter", (uint64_t)k * 1000003u + f) %
                      (uint64_t)jitter_ns);
}
