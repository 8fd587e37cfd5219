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
