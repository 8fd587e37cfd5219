/* The rules of an isolated replay (isolate.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/isolate.h"

int qr_isolated_conn_of(const qr_recording *rec, const int64_t *offsets, uint32_t flow,
                        qr_isolated_conn *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    const qr_flow_table *ft = qr_recording_flows(rec);
    if (flow >= qr_flow_table_flows(ft))
        return qri_err(errbuf, QR_EVALUE, "flow %u: the recording has %zu flows", flow,
                       qr_flow_table_flows(ft));
    const qr_flow *fl = qr_flow_table_flow(ft, flow);
    out->flow = flow;
    out->last_ns = fl->start_ns;
    out->recv_offset[0] = offsets ? offsets[fl->dst] : 0;
    out->recv_offset[1] = offsets ? offsets[fl->src] : 0;
    for (uint32_t d = 0; d < 2; d++) {
        uint32_t host = d == 0 ? fl->src : fl->dst;
        int64_t offset = offsets ? offsets[host] : 0;
        size_t n, cap = 0;
        const qr_rec_packet *pk = qr_recording_packets(rec, host, &n);
        for (size_t i = 0; i < n; i++) {
            if (pk[i].dir != 2 * flow + d)
                continue;
            if (qri_grow((void **)&out->sent[d], &cap, out->n_sent[d], sizeof *out->sent[d], 64)) {
                qr_isolated_conn_free(out);
                return qri_err(errbuf, QR_ENOMEM, "out of memory");
            }
            const qr_packet *p = &pk[i].pk;
            int64_t t = p->time_ns - offset;
            out->sent[d][out->n_sent[d]++] =
                (qr_tcp_sent){p->tcp_flags, p->seq, p->ack, p->window, p->ip_len, t};
            if (t > out->last_ns)
                out->last_ns = t;
        }
    }
    return QR_OK;
}

void qr_isolated_conn_free(qr_isolated_conn *c)
{
    if (!c)
        return;
    free(c->sent[0]);
    free(c->sent[1]);
    memset(c, 0, sizeof *c);
}

int qr_isolated_fate(const qr_isolated_conn *c, const qr_recording *rec, uint32_t dir, uint32_t seq,
                     int *lost, int64_t *arrive_ns, int *ce)
{
    if (dir > 1 || seq >= c->n_sent[dir])
        return 0;
    int64_t t;
    uint64_t id = qr_packet_id(2 * c->flow + dir, seq);
    *lost = qr_recording_received(rec, id, &t) != QR_OK;
    *ce = !*lost && qr_recording_ce(rec, id);
    /* /received is on the receiving host's clock: back to true time */
    *arrive_ns = *lost ? 0 : t - c->recv_offset[dir];
    return 1;
}

static int sent_equal(const qr_tcp_sent *a, const qr_tcp_sent *b)
{
    return a->flags == b->flags && a->seq == b->seq && a->ack == b->ack && a->window == b->window &&
           a->len == b->len;
}

int qr_isolated_next_gate(const qr_isolated_conn *c, const qr_recording *rec,
                          const qr_tcp_sent *const got[2], const size_t n_got[2],
                          qr_light_gate *gates, size_t *n, size_t cap)
{
    /* per direction, the first packet that differs (or is missing from one side) */
    size_t first[2];
    int differs[2];
    for (uint32_t d = 0; d < 2; d++) {
        size_t i = 0, m = c->n_sent[d] < n_got[d] ? c->n_sent[d] : n_got[d];
        while (i < m && sent_equal(&c->sent[d][i], &got[d][i]))
            i++;
        first[d] = i;
        differs[d] = i < m || c->n_sent[d] != n_got[d];
    }
    if (!differs[0] && !differs[1])
        return 0;
    /* the earliest in the runtime; a packet the runtime never sent cannot be kept by a gate */
    int d = -1;
    for (uint32_t k = 0; k < 2; k++)
        if (differs[k] && first[k] < c->n_sent[k] &&
            (d < 0 || c->sent[k][first[k]].time_ns < c->sent[d][first[d]].time_ns))
            d = (int)k;
    if (d < 0)
        return -1;
    size_t j = first[d];
    int64_t t = c->sent[d][j].time_ns;
    /* the other direction's packets the end had received by t; the next one, gated */
    uint32_t in = (uint32_t)d ^ 1u, next = UINT32_MAX;
    for (uint32_t s = 0; s < c->n_sent[in]; s++) {
        int lost, ce;
        int64_t at;
        if (!qr_isolated_fate(c, rec, in, s, &lost, &at, &ce) || lost)
            continue;
        if (at > t) {
            next = s;
            break;
        }
    }
    if (next == UINT32_MAX)
        return -1;
    uint32_t sends = (uint32_t)j + 1;
    size_t at = 0;
    while (at < *n && (gates[at].dir < in || (gates[at].dir == in && gates[at].seq < next)))
        at++;
    if (at < *n && gates[at].dir == in && gates[at].seq == next) {
        if (gates[at].sends >= sends)
            return -1;
        gates[at].sends = sends;
        return 1;
    }
    if (*n >= cap)
        return -1;
    memmove(gates + at + 1, gates + at, (*n - at) * sizeof *gates);
    gates[at] = (qr_light_gate){in, next, sends};
    (*n)++;
    return 1;
}

int64_t qr_isolated_stop_ns(const qr_config *c, int64_t last_ns)
{
    int64_t stop = last_ns + 4 * c->tcp.min_rto_ns + c->tcp.delack_timeout_ns + 1000000;
    if (c->traffic.stop_ns > last_ns && c->traffic.stop_ns < stop)
        stop = c->traffic.stop_ns;
    return stop;
}

void qr_isolated_summary_add(qr_isolated_summary *s, const qr_row_isolated *r)
{
    s->connections++;
    s->identical += r->identical;
    s->late += r->late;
    if (r->max_late_ns > s->max_late_ns)
        s->max_late_ns = r->max_late_ns;
    if (r->max_send_diff_ns > s->max_send_diff_ns)
        s->max_send_diff_ns = r->max_send_diff_ns;
    if (r->p99_send_diff_ns > s->max_p99_send_diff_ns)
        s->max_p99_send_diff_ns = r->p99_send_diff_ns;
}
