/* A TCP connection from its captures (tcpconn.h): hand-built connections, each with a known truth,
 * seen from one end, the other or both. Every case checks exact counts: exchanges, directions,
 * bytes, completion, losses apart from reordering, and what triggered each retransmission. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/tcpconn.h"

#define MS 1000000LL
#define US 1000LL
#define MAXP 256

/* A connection under construction: direction 0 from the client (10.0.0.1:40000) to the server
 * (10.0.0.2:80). Sequence numbers are relative to ISNs far from 0, so unwrapping is exercised. */
typedef struct {
    qr_packet pk[2][MAXP];
    qr_tc_pkt p[2][MAXP];
    size_t n[2];
    uint32_t isn[2];
    uint32_t ts; /* timestamp clock: 1 per ms of send time */
    int use_ts, use_sack;
} conn;

static void conn_init(conn *c)
{
    memset(c, 0, sizeof *c);
    c->isn[0] = 0xfffff000u; /* wraps after 4 KB */
    c->isn[1] = 123456789u;
    c->use_ts = 1;
    c->use_sack = 1;
}

/* Add a packet of direction d: relative seq, payload bytes, flags, relative ack of the other
 * direction, sent at tx and received at rx (-1: lost); SACK blocks (relative), the echo. */
static qr_packet *add(conn *c, int d, int64_t seq, uint32_t pay, uint8_t flags, int64_t ack,
                      int64_t tx, int64_t rx, const int64_t *sack, int nsack, uint32_t ecr)
{
    cr_assert_lt(c->n[d], MAXP);
    qr_packet *p = &c->pk[d][c->n[d]];
    memset(p, 0, sizeof *p);
    p->src_ip = d ? 0x0a000002 : 0x0a000001;
    p->dst_ip = d ? 0x0a000001 : 0x0a000002;
    p->src_port = d ? 80 : 40000;
    p->dst_port = d ? 40000 : 80;
    p->proto = 6;
    p->seq = c->isn[d] + (uint32_t)seq;
    p->ack = ack >= 0 ? c->isn[!d] + (uint32_t)ack : 0;
    p->tcp_flags = flags | (ack >= 0 ? QR_TCP_ACK : 0);
    p->window = 65535;
    size_t o = 0;
    if (c->use_ts) {
        uint8_t *b = p->tcp_opts + o;
        uint32_t v = (uint32_t)(tx / MS) + 1000;
        b[0] = 1;
        b[1] = 1;
        b[2] = 8;
        b[3] = 10;
        for (int k = 0; k < 4; k++) {
            b[4 + k] = (uint8_t)(v >> (24 - 8 * k));
            b[8 + k] = (uint8_t)(ecr >> (24 - 8 * k));
        }
        o += 12;
    }
    if (c->use_sack && nsack) {
        uint8_t *b = p->tcp_opts + o;
        b[0] = 1;
        b[1] = 1;
        b[2] = 5;
        b[3] = (uint8_t)(2 + 8 * nsack);
        for (int s = 0; s < 2 * nsack; s++) {
            uint32_t v = c->isn[!d] + (uint32_t)sack[s];
            for (int k = 0; k < 4; k++)
                b[4 + 4 * s + k] = (uint8_t)(v >> (24 - 8 * k));
        }
        o += 4 + 8 * (size_t)nsack;
    }
    p->tcp_opt_len = (uint8_t)o;
    p->ip_len = (uint16_t)(20 + 20 + o + pay);
    c->p[d][c->n[d]] = (qr_tc_pkt){p, tx, rx, 0};
    c->n[d]++;
    return p;
}

static uint32_t tsv(int64_t t)
{
    return (uint32_t)(t / MS) + 1000;
}

/* A handshake at t0 with the RTT rtt (one-way rtt/2). */
static void handshake(conn *c, int64_t t0, int64_t rtt)
{
    add(c, 0, 0, 0, QR_TCP_SYN, -1, t0, t0 + rtt / 2, NULL, 0, 0);
    add(c, 1, 0, 0, QR_TCP_SYN, 1, t0 + rtt / 2, t0 + rtt, NULL, 0, tsv(t0));
    add(c, 0, 1, 0, 0, 1, t0 + rtt, t0 + rtt + rtt / 2, NULL, 0, tsv(t0 + rtt / 2));
}

static void analyse(conn *c, unsigned seen0, unsigned seen1, qr_tc_conn *out, qr_tc_cfg *cfg)
{
    qr_tc_dir dirs[2] = {{c->p[0], c->n[0], seen0}, {c->p[1], c->n[1], seen1}};
    /* what an end did not see is not in its record */
    for (int d = 0; d < 2; d++) {
        unsigned seen = d ? seen1 : seen0;
        if (!(seen & QR_TC_AT_SENDER) && (seen & QR_TC_AT_RECEIVER)) {
            size_t k = 0;
            for (size_t i = 0; i < c->n[d]; i++)
                if (c->p[d][i].rx_ns >= 0)
                    c->p[d][k++] = c->p[d][i];
            c->n[d] = k;
            dirs[d].n = k;
            /* a receiver's record is in arrival order */
            for (size_t a = 1; a < k; a++)
                for (size_t b = a; b > 0 && c->p[d][b].rx_ns < c->p[d][b - 1].rx_ns; b--) {
                    qr_tc_pkt tmp = c->p[d][b];
                    c->p[d][b] = c->p[d][b - 1];
                    c->p[d][b - 1] = tmp;
                }
        }
        if (!(seen & QR_TC_AT_RECEIVER))
            for (size_t i = 0; i < c->n[d]; i++)
                c->p[d][i].rx_ns = -1;
    }
    /* a capture of the client: direction 0 at its sender, direction 1 at its receiver */
    cr_assert_eq(qr_tc_analyse(out, dirs, cfg, NULL), QR_OK);
}

#define CLIENT QR_TC_AT_SENDER, QR_TC_AT_RECEIVER
#define SERVER QR_TC_AT_RECEIVER, QR_TC_AT_SENDER
#define BOTH (QR_TC_AT_SENDER | QR_TC_AT_RECEIVER), (QR_TC_AT_SENDER | QR_TC_AT_RECEIVER)

/* Keep-alive HTTP: two requests, each answered by a response of several segments; 50 ms of
 * think time between them. Seen at the client, at the server, and at both. */
static void keepalive(conn *c)
{
    const int64_t rtt = 10 * MS, owd = rtt / 2;
    conn_init(c);
    handshake(c, 0, rtt);
    int64_t t = rtt;
    int64_t cseq = 1, sseq = 1;
    for (int r = 0; r < 2; r++) {
        uint32_t req = 120, resp = r ? 3000 : 5000;
        add(c, 0, cseq, req, QR_TCP_PSH, sseq, t, t + owd, NULL, 0, 0);
        cseq += req;
        int64_t ts = t + owd + 100 * US; /* the server answers after 100 us */
        for (uint32_t off = 0; off < resp; off += 1000) {
            add(c, 1, sseq, 1000, 0, cseq, ts, ts + owd, NULL, 0, tsv(t));
            sseq += 1000;
            ts += 10 * US;
        }
        /* the client acknowledges the whole response at once */
        add(c, 0, cseq, 0, 0, sseq, ts - 10 * US + owd, ts - 10 * US + 2 * owd, NULL, 0, 0);
        t = ts + owd + 50 * MS;
    }
    add(c, 0, cseq, 0, QR_TCP_FIN, sseq, t, t + owd, NULL, 0, 0);
    add(c, 1, sseq, 0, QR_TCP_FIN, cseq + 1, t + owd, t + 2 * owd, NULL, 0, 0);
    add(c, 0, cseq + 1, 0, 0, sseq + 1, t + 2 * owd, t + 3 * owd, NULL, 0, 0);
}

static void check_keepalive(const qr_tc_conn *o, int client)
{
    cr_assert_eq(o->n_ex, 4, "request, response, request, response: %zu exchanges", o->n_ex);
    uint64_t want[4] = {120, 5000, 120, 3000};
    for (int i = 0; i < 4; i++) {
        const qr_tc_exchange *ex = &o->ex[i];
        cr_assert_eq(ex->dir, (uint32_t)(i % 2));
        cr_assert_eq(ex->bytes, want[i], "exchange %d: %llu bytes", i,
                     (unsigned long long)ex->bytes);
        cr_assert_eq(ex->status, QR_TC_COMPLETE, "exchange %d %s", i,
                     qr_tc_status_name(ex->status));
        cr_assert_eq(ex->retransmissions + ex->lost + ex->not_seen + ex->reordered, 0);
        int64_t sum = 0;
        for (int k = 0; k < QR_TC_PARTS; k++)
            sum += ex->part_ns[k];
        cr_assert_eq(sum, ex->end_ns - ex->start_ns, "exchange %d: the parts sum to its time", i);
        cr_assert_eq(ex->part_ns[QR_TC_PART_RTO] + ex->part_ns[QR_TC_PART_TLP] +
                         ex->part_ns[QR_TC_PART_RECOVERY],
                     0);
    }
    cr_assert_eq(o->ex[0].idle_before_ns, -1);
    /* the think time is the application's: between exchanges, never in one */
    cr_assert_geq(o->ex[2].idle_before_ns, client ? 50 * MS : 44 * MS, "%lld",
                  (long long)o->ex[2].idle_before_ns);
    cr_assert_eq(o->end, QR_TC_END_CLOSED);
    cr_assert_eq(o->min_rtt_ns, 10 * MS, "min RTT %lld", (long long)o->min_rtt_ns);
    cr_assert_eq(o->handshake_ns, 10 * MS);
    if (client) {
        cr_assert_eq(o->ex[0].vantage, QR_TC_AT_SENDER);
        cr_assert_eq(o->ex[1].vantage, QR_TC_AT_RECEIVER);
    }
    for (int d = 0; d < 2; d++)
        cr_assert_eq(o->dir[d].lost + o->dir[d].not_seen + o->dir[d].retransmissions, 0);
    cr_assert_eq(o->dir[1].bytes, 8000);
    cr_assert_eq(o->dir[0].bytes, 240);
}

Test(tcpconn, keepalive_seen_at_the_client)
{
    conn c;
    keepalive(&c);
    qr_tc_conn o;
    analyse(&c, CLIENT, &o, NULL);
    check_keepalive(&o, 1);
    qr_tc_conn_free(&o);
}

/* An RPC on a persistent connection: a 200-byte request, answered after think ms by a 1000-byte
 * response that carries the request's ACK (the server's TCP held it for the reply), or, with
 * pure_ack_ms > 0, acknowledged alone that long after it arrived (a delayed-ACK timer) before
 * the response. RTT 100 us. */
static void rpc(conn *c, int64_t think, int64_t pure_ack)
{
    const int64_t rtt = 100 * US, owd = rtt / 2;
    conn_init(c);
    handshake(c, 0, rtt);
    int64_t t = rtt;
    add(c, 0, 1, 200, QR_TCP_PSH, 1, t, t + owd, NULL, 0, 0);
    if (pure_ack > 0)
        add(c, 1, 1, 0, 0, 201, t + owd + pure_ack, t + rtt + pure_ack, NULL, 0, tsv(t));
    add(c, 1, 1, 1000, QR_TCP_PSH, 201, t + owd + think, t + rtt + think, NULL, 0, tsv(t));
    add(c, 0, 201, 0, 0, 1001, t + rtt + think, t + rtt + owd + think, NULL, 0, 0);
}

/* The request's ACK rode on its response: the wait was the server's application, not a
 * delayed ACK and not the request's (its slowdown leaves it out), seen from either end or both,
 * whatever the server's think time; an ACK sent alone after a hold is the receiver's delayed
 * ACK instead. The parts always sum to the exchange's time. */
Test(tcpconn, an_ack_that_rides_on_the_reply_is_the_replys_time)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    const int64_t thinks[] = {300 * US, 2 * MS, 20 * MS, 45 * MS};
    for (int v = 0; v < 3; v++)
        for (size_t k = 0; k < sizeof thinks / sizeof thinks[0]; k++) {
            conn c;
            rpc(&c, thinks[k], 0);
            qr_tc_conn o;
            analyse(&c, seen[v][0], seen[v][1], &o, NULL);
            cr_assert_eq(o.n_ex, 2, "request and response");
            const qr_tc_exchange *q = &o.ex[0];
            cr_assert_eq(q->status, QR_TC_COMPLETE);
            cr_assert(q->answered, "vantage %d", v);
            int64_t sum = 0;
            for (int p = 0; p < QR_TC_PARTS; p++)
                sum += q->part_ns[p];
            cr_assert_eq(sum, q->end_ns - q->start_ns);
            cr_assert_eq(q->part_ns[QR_TC_PART_DELACK], 0, "vantage %d think %lld", v,
                         (long long)thinks[k]);
            cr_assert_eq(q->part_ns[QR_TC_PART_REPLY], thinks[k], "vantage %d: %lld", v,
                         (long long)q->part_ns[QR_TC_PART_REPLY]);
            cr_assert_lt(q->slowdown, 1.2, "vantage %d: slowdown %.2f", v, q->slowdown);
            qr_tc_conn_free(&o);
        }
    /* at the server: 30 ms from the request's arrival to an ACK sent alone is a held ACK */
    conn c;
    rpc(&c, 45 * MS, 30 * MS);
    qr_tc_conn o;
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.ex[0].answered, 0);
    cr_assert_eq(o.ex[0].part_ns[QR_TC_PART_REPLY], 0);
    cr_assert_eq(o.ex[0].part_ns[QR_TC_PART_DELACK], 30 * MS);
    qr_tc_conn_free(&o);
}

/* Three RPCs 20 ms apart, each answered after 3 ms; the client acknowledges each response alone
 * 12 ms after it arrived (Linux's delayed ACK in interactive mode). The holds are the receivers',
 * not the path's: seen from both ends the round trip stays 100 us, a 20 ms pause is idle, and
 * every request and response is its own exchange; so too at the client, whose requests carry
 * the responses' ACKs. (The server alone cannot tell the client's holds from the path: its
 * round trips are 12 ms, and 20 ms is within two of them.) */
Test(tcpconn, held_acks_do_not_stretch_the_round_trip_that_bounds_idle)
{
    const unsigned seen[2][2] = {{CLIENT}, {BOTH}};
    for (int v = 0; v < 2; v++) {
        conn c;
        const int64_t rtt = 100 * US, owd = rtt / 2;
        conn_init(&c);
        handshake(&c, 0, rtt);
        int64_t t = rtt, cseq = 1, sseq = 1, last_resp = 0;
        for (int r = 0; r < 3; r++) {
            add(&c, 0, cseq, 200, QR_TCP_PSH, sseq, t, t + owd, NULL, 0, r ? tsv(last_resp) : 0);
            cseq += 200;
            int64_t ts = t + owd + 3 * MS;
            add(&c, 1, sseq, 1000, QR_TCP_PSH, cseq, ts, ts + owd, NULL, 0, tsv(t));
            sseq += 1000;
            last_resp = ts;
            add(&c, 0, cseq, 0, 0, sseq, ts + owd + 12 * MS, ts + rtt + 12 * MS, NULL, 0, tsv(ts));
            t += 20 * MS;
        }
        qr_tc_conn o;
        analyse(&c, seen[v][0], seen[v][1], &o, NULL);
        cr_assert_eq(o.n_ex, 6, "vantage %d: %zu exchanges", v, o.n_ex);
        for (size_t i = 0; i < o.n_ex; i++) {
            cr_assert_eq(o.ex[i].dir, i % 2);
            cr_assert_eq(o.ex[i].bytes, i % 2 ? 1000u : 200u);
        }
        qr_tc_conn_free(&o);
    }
}

Test(tcpconn, keepalive_seen_at_the_server)
{
    conn c;
    keepalive(&c);
    qr_tc_conn o;
    analyse(&c, SERVER, &o, NULL);
    check_keepalive(&o, 0);
    cr_assert_eq(o.ex[1].vantage, QR_TC_AT_SENDER, "the server sent the response");
    qr_tc_conn_free(&o);
}

Test(tcpconn, keepalive_seen_at_both_ends)
{
    conn c;
    keepalive(&c);
    qr_tc_conn o;
    analyse(&c, BOTH, &o, NULL);
    check_keepalive(&o, 0);
    qr_tc_conn_free(&o);
}

/* A download from the server: segments of 1000 bytes, one RTT of 2 ms; segment `lose` (0-based)
 * is handled as `mode` says; the client acknowledges every segment with SACK. M_LATE_FAST: lost
 * and resent only after the sixth duplicate ACK; M_LATE_FAST_REORDERED: the same, after segment 0
 * was overtaken by segment 1 (reordering, which grows a sender's threshold). */
enum {
    M_NONE,
    M_LOST_FAST,
    M_REORDER_ONE,
    M_REORDER_FAST,
    M_TAIL_TLP,
    M_TAIL_RTO,
    M_TAIL_TLP_RTO,
    M_LATE_FAST,
    M_LATE_FAST_REORDERED
};

static void download(conn *c, int nseg, int lose, int mode)
{
    const int64_t rtt = 2 * MS, owd = rtt / 2, gap = 12 * US;
    conn_init(c);
    handshake(c, 0, rtt);
    add(c, 0, 1, 100, QR_TCP_PSH, 1, rtt, rtt + owd, NULL, 0, 0);
    int64_t t0 = rtt + owd + 50 * US;
    int64_t rx[64];
    for (int i = 0; i < nseg; i++) {
        int64_t tx = t0 + i * gap;
        rx[i] = tx + owd;
        if (i == lose && (mode == M_LOST_FAST || mode == M_TAIL_TLP || mode == M_TAIL_RTO ||
                          mode == M_TAIL_TLP_RTO || mode >= M_LATE_FAST))
            rx[i] = -1;
        if (i == 0 && mode == M_LATE_FAST_REORDERED)
            rx[i] = tx + owd + gap + gap / 2;
        if (i == lose && (mode == M_REORDER_ONE || mode == M_REORDER_FAST))
            rx[i] = tx + owd + (mode == M_REORDER_ONE ? 1 : 5) * gap + gap / 2;
        add(c, 1, 1 + 1000 * i, 1000, 0, 101, tx, rx[i], NULL, 0, tsv(rtt));
    }
    /* the client: an ACK per arrival, in arrival order, with SACK above a hole */
    int order[64], n = 0;
    for (int i = 0; i < nseg; i++)
        if (rx[i] >= 0)
            order[n++] = i;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (rx[order[b]] < rx[order[a]]) {
                int tmp = order[a];
                order[a] = order[b];
                order[b] = tmp;
            }
    uint8_t got[64] = {0};
    int64_t last_rx = 0;
    for (int a = 0; a < n; a++) {
        int i = order[a];
        int was_dup = got[i];
        got[i] = 1;
        int64_t cum = 1;
        while (cum < 1 + 1000LL * nseg && got[(cum - 1) / 1000])
            cum += 1000;
        int64_t sack[2];
        int ns = 0;
        if (cum < 1 + 1000 * i) {
            sack[0] = cum + 1000;
            int64_t e = sack[0];
            while (e < 1 + 1000LL * nseg && got[(e - 1) / 1000])
                e += 1000;
            sack[1] = e;
            ns = 1;
        }
        (void)was_dup;
        add(c, 0, 101, 0, 0, cum, rx[i] + 5 * US, rx[i] + 5 * US + owd, sack, ns, tsv(rx[i] - owd));
        last_rx = rx[i] + 5 * US + owd; /* the ACK reaches the server */
    }
    if (mode == M_LOST_FAST || mode == M_REORDER_FAST || mode >= M_LATE_FAST) {
        /* the third duplicate ACK has reached the server: it resends the segment at once */
        int64_t third = -1;
        int dups = 0;
        for (size_t j = 0; j < c->n[0]; j++) {
            uint32_t ack = c->pk[0][j].ack - c->isn[1];
            if (ack == (uint32_t)(1 + 1000 * lose) && c->p[0][j].tx_ns > t0 &&
                ++dups == (mode >= M_LATE_FAST ? 7 : 4)) {
                third = c->p[0][j].rx_ns;
                break;
            }
        }
        cr_assert_geq(third, 0, "three duplicate ACKs");
        int64_t rrx = third + 20 * US + owd;
        add(c, 1, 1 + 1000 * lose, 1000, 0, 101, third + 20 * US, rrx, NULL, 0, tsv(rtt));
        got[lose] = 1;
        int64_t dsack[2] = {1 + 1000 * lose, 1 + 1000 * (lose + 1)};
        /* the client acknowledges everything; a duplicate arrival carries a DSACK */
        add(c, 0, 101, 0, 0, 1 + 1000LL * nseg, rrx + 5 * US, rrx + 5 * US + owd, dsack,
            mode == M_REORDER_FAST, tsv(third + 20 * US));
    }
    if (mode == M_TAIL_TLP_RTO) {
        /* the tail was lost, and so was the probe Linux sent for it 250 ms later */
        add(c, 1, 1 + 1000 * lose, 1000, 0, 101, last_rx + 250 * MS, -1, NULL, 0,
            tsv(last_rx + 250 * MS));
        last_rx += 250 * MS;
    }
    if (mode == M_TAIL_TLP || mode == M_TAIL_RTO || mode == M_TAIL_TLP_RTO) {
        /* the tail was lost: after a silence the sender resends the last segment */
        int64_t wait = mode == M_TAIL_TLP ? 2 * rtt + 2 * MS : 250 * MS;
        int64_t tx = last_rx + wait;
        int64_t rrx = tx + owd;
        add(c, 1, 1 + 1000 * lose, 1000, 0, 101, tx, rrx, NULL, 0, tsv(tx));
        add(c, 0, 101, 0, 0, 1 + 1000LL * nseg, rrx + 5 * US, rrx + 5 * US + owd, NULL, 0, tsv(tx));
    }
}

Test(tcpconn, download_is_the_servers_exchange)
{
    conn c;
    download(&c, 20, -1, M_NONE);
    qr_tc_conn o;
    analyse(&c, CLIENT, &o, NULL);
    cr_assert_eq(o.n_ex, 2);
    cr_assert_eq(o.ex[1].dir, 1, "the bulk is sent by the side that accepted");
    cr_assert_eq(o.ex[1].bytes, 20000);
    cr_assert_eq(o.ex[1].status, QR_TC_COMPLETE);
    cr_assert_eq(o.dir[1].lost + o.dir[1].retransmissions + o.dir[1].reordered, 0);
    cr_assert_eq(o.end, QR_TC_END_OPEN, "no FIN: open at capture end");
    cr_assert_gt(o.rate_bps, 0);
    qr_tc_conn_free(&o);
}

Test(tcpconn, one_loss_repaired_by_fast_retransmit)
{
    conn c;
    download(&c, 10, 2, M_LOST_FAST);
    qr_tc_conn o;
    analyse(&c, SERVER, &o, NULL);
    const qr_tc_dir_stats *st = &o.dir[1];
    cr_assert_eq(st->retransmissions, 1);
    cr_assert_eq(st->trig[QR_TC_FAST], 1, "fast %u rack %u rto %u tlp %u", st->trig[QR_TC_FAST],
                 st->trig[QR_TC_RACK], st->trig[QR_TC_RTO], st->trig[QR_TC_TLP]);
    cr_assert_eq(st->lost, 1);
    cr_assert_eq(st->reordered + st->spurious + st->not_seen, 0);
    cr_assert_eq(o.info[1][3].fate, QR_TC_LOST, "the original of segment 2: %s",
                 qr_tc_fate_name(o.info[1][3].fate));
    cr_assert_eq(o.ex[1].status, QR_TC_COMPLETE);
    cr_assert_gt(o.ex[1].part_ns[QR_TC_PART_RECOVERY], 0);
    qr_tc_conn_free(&o);
    /* the same, seen at the client: the hole filled by a resend is the loss */
    download(&c, 10, 2, M_LOST_FAST);
    analyse(&c, CLIENT, &o, NULL);
    cr_assert_eq(o.dir[1].retransmissions, 1);
    cr_assert_eq(o.dir[1].trig[QR_TC_UNKNOWN_TRIGGER], 1);
    cr_assert_eq(o.dir[1].lost, 1);
    cr_assert_eq(o.dir[1].reordered, 0);
    cr_assert_gt(o.ex[1].part_ns[QR_TC_PART_LOSS], 0);
    qr_tc_conn_free(&o);
}

Test(tcpconn, reordering_is_not_loss)
{
    conn c;
    qr_tc_conn o;
    /* overtaken by one segment: one duplicate ACK, nothing resent */
    download(&c, 10, 2, M_REORDER_ONE);
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.dir[1].retransmissions + o.dir[1].lost + o.dir[1].not_seen, 0);
    cr_assert_eq(o.info[1][3].fate, QR_TC_DELIVERED);
    qr_tc_conn_free(&o);
    download(&c, 10, 2, M_REORDER_ONE);
    analyse(&c, BOTH, &o, NULL);
    cr_assert_eq(o.dir[1].reordered, 1, "both ends seen: it arrived after a later one");
    cr_assert_eq(o.dir[1].lost, 0);
    qr_tc_conn_free(&o);
    /* overtaken by four: resent, but the DSACK shows the original had arrived */
    download(&c, 10, 2, M_REORDER_FAST);
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.dir[1].retransmissions, 1);
    cr_assert_eq(o.dir[1].spurious, 1, "the DSACK marks the resend a duplicate");
    cr_assert_eq(o.dir[1].lost, 0);
    cr_assert_eq(o.dir[1].reordered, 1);
    cr_assert_eq(o.info[1][3].fate, QR_TC_DELIVERED);
    qr_tc_conn_free(&o);
    /* at the client: the late original carries an older timestamp than what came before it */
    download(&c, 10, 2, M_REORDER_ONE);
    c.pk[1][1 + 2].tcp_opts[7] -= 1; /* segment 2 sent a tick before the others */
    analyse(&c, CLIENT, &o, NULL);
    cr_assert_eq(o.dir[1].retransmissions, 0);
    cr_assert_eq(o.dir[1].reordered, 1);
    cr_assert_eq(o.dir[1].lost, 0);
    qr_tc_conn_free(&o);
}

/* A fast retransmission after more duplicate ACKs than the threshold is late only where the
 * connection showed reordering first: a sender's threshold grows on reordering it detected, and
 * without it the resend was held back some other way (on real kernels, its own queue), which the
 * diagnosis must not call a late fast retransmission. */
Test(tcpconn, a_late_fast_retransmit_needs_reordering_before_it)
{
    conn c;
    qr_tc_conn o;
    for (int v = 0; v < 2; v++) {
        download(&c, 12, 4, M_LATE_FAST);
        if (v)
            analyse(&c, BOTH, &o, NULL);
        else
            analyse(&c, SERVER, &o, NULL);
        cr_assert_eq(o.dir[1].trig[QR_TC_FAST], 1, "vantage %d", v);
        cr_assert_eq(o.dir[1].reordered, 0, "vantage %d", v);
        cr_assert_eq(o.dir[1].late_fast, 0, "vantage %d: no reordering, not late", v);
        cr_assert_eq(o.ex[1].late_fast, 0, "vantage %d", v);
        qr_tc_conn_free(&o);
    }
    download(&c, 12, 4, M_LATE_FAST_REORDERED);
    analyse(&c, BOTH, &o, NULL);
    cr_assert_eq(o.dir[1].trig[QR_TC_FAST], 1);
    cr_assert_eq(o.dir[1].reordered, 1, "segment 0 arrived after segment 1");
    cr_assert_eq(o.dir[1].late_fast, 1, "after reordering, six duplicate ACKs make it late");
    cr_assert_eq(o.ex[1].late_fast, 1);
    qr_tc_conn_free(&o);
}

Test(tcpconn, tail_loss_probe_is_not_an_rto)
{
    conn c;
    qr_tc_conn o;
    download(&c, 10, 9, M_TAIL_TLP);
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.dir[1].trig[QR_TC_TLP], 1);
    cr_assert_eq(o.dir[1].trig[QR_TC_RTO], 0);
    cr_assert_eq(o.dir[1].lost, 1);
    cr_assert_gt(o.ex[1].part_ns[QR_TC_PART_TLP], 0);
    cr_assert_eq(o.ex[1].part_ns[QR_TC_PART_RTO], 0);
    qr_tc_conn_free(&o);
    /* one resend of the tail after 250 ms: Linux's probe (with one segment out it waits 2 RTT +
     * 200 ms, capped at the RTO); a sender without probes (ns-3) fired its RTO */
    download(&c, 10, 9, M_TAIL_RTO);
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.dir[1].trig[QR_TC_TLP], 1, "Linux probes the tail before its first RTO");
    cr_assert_eq(o.dir[1].trig[QR_TC_RTO], 0);
    qr_tc_conn_free(&o);
    qr_tc_cfg cfg;
    qr_tc_cfg_default(&cfg);
    cfg.tlp = 0;
    analyse(&c, SERVER, &o, &cfg);
    cr_assert_eq(o.dir[1].trig[QR_TC_RTO], 1, "250 ms of silence, no probes: the timer fired");
    cr_assert_eq(o.dir[1].trig[QR_TC_TLP], 0);
    cr_assert_geq(o.ex[1].part_ns[QR_TC_PART_RTO], 240 * MS);
    qr_tc_conn_free(&o);
    /* the probe lost too: the RTO fires next */
    download(&c, 10, 9, M_TAIL_TLP_RTO);
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.dir[1].trig[QR_TC_TLP], 1);
    cr_assert_eq(o.dir[1].trig[QR_TC_RTO], 1);
    cr_assert_eq(o.dir[1].retransmissions, 2);
    cr_assert_geq(o.ex[1].part_ns[QR_TC_PART_RTO], 240 * MS);
    qr_tc_conn_free(&o);
}

Test(tcpconn, not_seen_is_not_lost)
{
    conn c;
    qr_tc_conn o;
    download(&c, 10, -1, M_NONE);
    /* the capture at the server ends before the last two ACKs arrive */
    c.n[0] -= 2;
    analyse(&c, SERVER, &o, NULL);
    cr_assert_eq(o.dir[1].lost, 0);
    cr_assert_eq(o.dir[1].not_seen, 2, "no ACK, no record: unknown");
    cr_assert_eq(o.ex[1].status, QR_TC_OPEN);
    cr_assert_eq(o.ex[1].slowdown, 0, "no slowdown for an exchange that did not end");
    qr_tc_conn_free(&o);
}

Test(tcpconn, bad_input)
{
    qr_tc_conn o;
    cr_assert_eq(qr_tc_analyse(&o, NULL, NULL, NULL), QR_EINVAL);
    qr_tc_pkt p = {NULL, 0, 0, 0};
    qr_tc_dir d[2] = {{&p, 1, QR_TC_AT_SENDER}, {NULL, 0, 0}};
    char err[256] = "";
    cr_assert_eq(qr_tc_analyse(&o, d, NULL, err), QR_EINVAL);
    cr_assert(strstr(err, "packet 0"), "%s", err);
    qr_tc_conn_free(&o);
    /* nothing at all: no exchange, no RTT */
    d[0].n = 0;
    cr_assert_eq(qr_tc_analyse(&o, d, NULL, NULL), QR_OK);
    cr_assert_eq(o.n_ex, 0);
    cr_assert_eq(o.min_rtt_ns, -1);
    qr_tc_conn_free(&o);
}

/* ---- property: random connections whose truth the generator knows ----
 *
 * A download of n segments from the server: each original is dropped with probability p_drop
 * (then resent 3 RTTs later, and the resend arrives), or delayed by up to 4 segment times with
 * probability p_late; the client acknowledges every arrival (cumulative ACK, SACK of the first
 * block above it). Timestamps tick every microsecond here, so "sent before" is always visible.
 * Seen at both ends, a packet is lost exactly when it was dropped and reordered exactly when a
 * packet sent after it arrived first; seen only at the sender, exactly the dropped originals are
 * lost (none delivered is taken for lost, none lost for delivered); seen only at the receiver,
 * the holes resends filled are the drops it could see (a lost tail leaves none) and the late
 * originals that higher data passed are reordered. */

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

typedef struct {
    int64_t tx, rx; /* rx -1: dropped */
    int64_t seq;    /* relative, 1-based */
    int resend;     /* 1: a resend of a dropped one */
} gpkt;

static int gpkt_rx(const void *a, const void *b)
{
    const gpkt *x = *(const gpkt *const *)a, *y = *(const gpkt *const *)b;
    return x->rx < y->rx ? -1 : x->rx > y->rx;
}

static void random_download(conn *c, uint32_t seed, int *drops, int *overtaken, int *visible,
                            int *passed)
{
    enum { N = 60 };
    const int64_t owd = 50 * US, gap = 12 * US;
    uint32_t s = seed;
    conn_init(c);
    handshake(c, 0, 2 * owd);
    /* the server's timestamps tick every microsecond from its first packet on */
    uint32_t v0 = (uint32_t)(c->p[1][0].tx_ns / US);
    for (int k = 0; k < 4; k++)
        c->pk[1][0].tcp_opts[4 + k] = (uint8_t)(v0 >> (24 - 8 * k));
    add(c, 0, 1, 100, QR_TCP_PSH, 1, 2 * owd, 3 * owd, NULL, 0, 0);
    gpkt g[2 * N];
    int n = 0;
    *drops = 0;
    int64_t t0 = 4 * owd;
    for (int i = 0; i < N; i++) {
        gpkt *p = &g[n++];
        p->tx = t0 + i * gap;
        p->seq = 1 + 1000LL * i;
        p->resend = 0;
        uint32_t r = lcg(&s) % 100;
        if (r < 8) {
            p->rx = -1;
            (*drops)++;
            gpkt *q = &g[n++];
            q->tx = p->tx + 6 * owd;
            q->seq = p->seq;
            q->resend = 1;
            q->rx = q->tx + owd;
        } else {
            p->rx = p->tx + owd + (r < 20 ? (int64_t)(lcg(&s) % 4 + 1) * gap + gap / 3 : 0);
        }
    }
    /* send order */
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && g[b].tx < g[b - 1].tx; b--) {
            gpkt tmp = g[b];
            g[b] = g[b - 1];
            g[b - 1] = tmp;
        }
    /* a drop the receiver can see: something above it arrived before its resend did (a lost
     * tail leaves no hole) */
    *visible = 0;
    for (int a = 0; a < n; a++) {
        if (!g[a].resend)
            continue;
        int seen = 0;
        for (int b = 0; b < n; b++)
            seen |= g[b].rx >= 0 && g[b].seq > g[a].seq && g[b].rx < g[a].rx;
        *visible += seen;
    }
    /* overtaken: a packet sent after it arrived first; passed: one with higher sequence numbers
     * did (what a receiver can see: overtaken by a resend of lower data looks in order) */
    *overtaken = *passed = 0;
    for (int a = 0; a < n; a++) {
        if (g[a].rx < 0)
            continue;
        int o = 0, p = 0;
        for (int b = a + 1; b < n; b++)
            if (g[b].rx >= 0 && g[b].rx < g[a].rx) {
                o = 1;
                p |= g[b].seq > g[a].seq;
            }
        *overtaken += o;
        *passed += p;
    }
    for (int a = 0; a < n; a++) {
        qr_packet *p = add(c, 1, g[a].seq, 1000, 0, 101, g[a].tx, g[a].rx, NULL, 0, 0);
        /* the timestamp ticks every microsecond */
        uint32_t v = (uint32_t)(g[a].tx / US);
        for (int k = 0; k < 4; k++)
            p->tcp_opts[4 + k] = (uint8_t)(v >> (24 - 8 * k));
    }
    /* the client's ACKs, in arrival order */
    const gpkt *arr[2 * N];
    int m = 0;
    for (int a = 0; a < n; a++)
        if (g[a].rx >= 0)
            arr[m++] = &g[a];
    qsort(arr, (size_t)m, sizeof arr[0], gpkt_rx);
    uint8_t got[N] = {0};
    for (int a = 0; a < m; a++) {
        got[(arr[a]->seq - 1) / 1000] = 1;
        int64_t cum = 1;
        while (cum < 1 + 1000LL * N && got[(cum - 1) / 1000])
            cum += 1000;
        int64_t sack[2];
        int ns = 0;
        for (int k = (int)((cum - 1) / 1000) + 1; k < N && !ns; k++)
            if (got[k]) {
                int e = k;
                while (e < N && got[e])
                    e++;
                sack[0] = 1 + 1000LL * k;
                sack[1] = 1 + 1000LL * e;
                ns = 1;
            }
        add(c, 0, 101, 0, 0, cum, arr[a]->rx + 2 * US, arr[a]->rx + 2 * US + owd, sack, ns,
            (uint32_t)(arr[a]->tx / US));
    }
}

Test(tcpconn, property_fates_against_the_generators_truth)
{
    for (uint32_t seed = 1; seed <= 150; seed++) {
        int drops, overtaken, visible, passed;
        conn c;
        qr_tc_conn o;
        random_download(&c, seed, &drops, &overtaken, &visible, &passed);
        analyse(&c, BOTH, &o, NULL);
        cr_assert_eq(o.dir[1].lost, (uint32_t)drops, "seed %u: both ends: %u lost, %d dropped",
                     seed, o.dir[1].lost, drops);
        cr_assert_eq(o.dir[1].reordered, (uint32_t)overtaken, "seed %u: %u reordered, truth %d",
                     seed, o.dir[1].reordered, overtaken);
        cr_assert_eq(o.dir[1].retransmissions, (uint32_t)drops);
        qr_tc_conn_free(&o);

        random_download(&c, seed, &drops, &overtaken, &visible, &passed);
        analyse(&c, SERVER, &o, NULL);
        cr_assert_eq(o.dir[1].lost, (uint32_t)drops, "seed %u: sender: %u lost, %d dropped", seed,
                     o.dir[1].lost, drops);
        cr_assert_eq(o.dir[1].not_seen, 0, "seed %u: every byte was acknowledged", seed);
        qr_tc_conn_free(&o);

        random_download(&c, seed, &drops, &overtaken, &visible, &passed);
        analyse(&c, CLIENT, &o, NULL);
        cr_assert_eq(o.dir[1].lost, (uint32_t)visible, "seed %u: receiver: %u holes, %d seen", seed,
                     o.dir[1].lost, visible);
        cr_assert_eq(o.dir[1].reordered, (uint32_t)passed, "seed %u: receiver: %u, truth %d", seed,
                     o.dir[1].reordered, passed);
        cr_assert_eq(o.dir[1].trig[QR_TC_UNKNOWN_TRIGGER], (uint32_t)visible);
        qr_tc_conn_free(&o);
    }
}

/* A response whose last segment the record puts after the ACK of it (an import serializes at the
 * link rate a burst the host's shaper let out at once, so the data's send time moves behind the
 * ACK's arrival): the exchange is complete, at the segment's time, not open until the capture's
 * end. */
Test(tcpconn, an_ack_recorded_before_its_data_completes_the_exchange)
{
    conn c;
    conn_init(&c);
    int64_t rtt = 50 * US, t = 0;
    handshake(&c, t, rtt);
    t += rtt + 10 * US;
    add(&c, 0, 1, 100, QR_TCP_PSH, 1, t, t + rtt / 2, NULL, 0, tsv(t)); /* the request */
    int64_t r = t + rtt / 2 + 20 * US;
    /* three segments of the reply, the last recorded 200 us late */
    add(&c, 1, 1, 1448, 0, 101, r, r + rtt / 2, NULL, 0, tsv(t));
    add(&c, 1, 1449, 1448, 0, 101, r + 1 * US, r + 1 * US + rtt / 2, NULL, 0, tsv(t));
    int64_t late = r + 200 * US;
    add(&c, 1, 2897, 104, QR_TCP_PSH, 101, late, r + 2 * US + rtt / 2, NULL, 0, tsv(t));
    /* the client's ACK of all of it, reaching the server before the late send time */
    int64_t a = r + 2 * US + rtt / 2 + 5 * US;
    add(&c, 0, 101, 0, 0, 3001, a, a + rtt / 2, NULL, 0, tsv(r));
    cr_assert_lt(a + rtt / 2, late);
    qr_tc_conn o;
    analyse(&c, BOTH, &o, NULL);
    cr_assert_eq(o.n_ex, 2);
    cr_assert_eq(o.ex[1].dir, 1);
    cr_assert_eq(o.ex[1].bytes, 3000);
    cr_assert_eq(o.ex[1].status, QR_TC_COMPLETE, "%s", qr_tc_status_name(o.ex[1].status));
    cr_assert_eq(o.ex[1].end_ns, late);
    qr_tc_conn_free(&o);
}

/* Duplicate ACKs and zero windows as the capture shows them (tshark's definitions), from every
 * vantage: the server sends 5 segments, the second lost; the client ACKs 1001, then three
 * duplicates, a window update with the same number (not a duplicate; the run goes on), one more
 * duplicate; then its window closes twice (a zero window, again zero, 100, zero again). */
Test(tcpconn, duplicate_ack_runs_and_zero_window_episodes_as_captured)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    for (int v = 0; v < 3; v++) {
        conn c;
        conn_init(&c);
        handshake(&c, 0, MS);
        int64_t t = 2 * MS;
        for (int i = 0; i < 5; i++)
            add(&c, 1, 1 + 1000 * i, 1000, 0, 1, t + i * US, i == 1 ? -1 : t + i * US + MS, NULL, 0,
                0);
        const uint16_t win[] = {65535, 65535, 65535, 65535, 30000, 30000, 0, 0, 100, 0};
        const int64_t ack[] = {1001, 1001, 1001, 1001, 1001, 1001, 5001, 5001, 5001, 5001};
        for (int k = 0; k < 10; k++) {
            qr_packet *p =
                add(&c, 0, 1, 0, 0, ack[k], t + 2 * MS + k * US, t + 3 * MS + k * US, NULL, 0, 0);
            p->window = win[k];
        }
        qr_tc_conn o;
        analyse(&c, seen[v][0], seen[v][1], &o, NULL);
        cr_assert_eq(o.dir[0].dupacks, 4, "vantage %d", v);
        cr_assert_eq(o.dir[0].dupack_run, 4, "vantage %d", v);
        cr_assert_eq(o.dir[0].zero_window_episodes, 2, "vantage %d", v);
        cr_assert_eq(o.dir[1].dupacks + o.dir[1].zero_window_episodes, 0, "data carries none");
        qr_tc_conn_free(&o);
    }
}

/* A download over a 100 ms path, seen at the client: the server sends a window, waits a round
 * trip for its ACKs, sends the next. At the client each window comes 100 ms after its ACK left:
 * that is TCP, not the application, so it stays one exchange (with a 1 ms idle rule alone it was
 * one exchange per round trip). A pause of 10 round trips is the application's: two exchanges. */
Test(tcpconn, idle_is_measured_in_round_trips)
{
    for (int pause = 0; pause < 2; pause++) {
        conn c;
        conn_init(&c);
        const int64_t rtt = 100 * MS;
        handshake(&c, 0, rtt);
        int64_t t = rtt, seq = 1;
        for (int w = 0; w < 5; w++) {
            int64_t send = t + (w == 3 && pause ? 10 * rtt : 0);
            for (int k = 0; k < 2; k++, seq += 1000)
                add(&c, 1, seq, 1000, 0, 1, send + k * US, send + rtt / 2 + k * US, NULL, 0,
                    tsv(t));
            add(&c, 0, 1, 0, 0, seq, send + rtt / 2 + 2 * US, send + rtt + 2 * US, NULL, 0,
                tsv(send));
            t = send + rtt + 3 * US;
        }
        qr_tc_conn o;
        analyse(&c, CLIENT, &o, NULL);
        cr_assert_eq(o.dir[1].exchanges, pause ? 2u : 1u, "pause %d: %u exchanges", pause,
                     o.dir[1].exchanges);
        qr_tc_conn_free(&o);
    }
}

/* Stream bytes count the data (and the ISN's SYN), never a FIN or a second SYN-ACK whose sequence
 * number lies far beyond it (seen in public captures: a middlebox's FIN 1.9 GB ahead, a second
 * SYN-ACK with another ISN). tshark counts the same. */
Test(tcpconn, bytes_are_the_data_not_a_far_fin_or_syn)
{
    for (int odd = 0; odd < 3; odd++) {
        conn c;
        conn_init(&c);
        handshake(&c, 0, MS);
        if (odd == 2) /* a second SYN-ACK, another ISN 100 MB on */
            add(&c, 1, 100000000, 0, QR_TCP_SYN, 1, 2 * MS, 3 * MS, NULL, 0, 0);
        add(&c, 1, 1, 3000, 0, 1, 4 * MS, 5 * MS, NULL, 0, 0);
        add(&c, 0, 1, 0, 0, 3001, 6 * MS, 7 * MS, NULL, 0, 0);
        if (odd == 1) /* a FIN 1.9 GB beyond the data */
            add(&c, 1, 1900000000, 0, QR_TCP_FIN, 1, 8 * MS, 9 * MS, NULL, 0, 0);
        qr_tc_conn o;
        analyse(&c, CLIENT, &o, NULL);
        cr_assert_eq(o.dir[1].bytes, 3000, "case %d: %llu", odd,
                     (unsigned long long)o.dir[1].bytes);
        qr_tc_conn_free(&o);
    }
}

/* Seen at the receiver: segments 1 to 4 of 1000 bytes, the second lost; then a resend of the
 * third (its bytes were already captured, above the hole: spurious, not a loss) and of the second
 * (it fills the hole: the original was lost). */
Test(tcpconn, a_resend_of_bytes_already_captured_above_a_hole_is_spurious)
{
    conn c;
    conn_init(&c);
    c.use_ts = 0; /* no timestamps: the order of arrival alone */
    handshake(&c, 0, MS);
    int64_t t = 2 * MS;
    for (int i = 0; i < 4; i++)
        add(&c, 1, 1 + 1000 * i, 1000, 0, 1, t + i * US, i == 1 ? -1 : t + MS + i * US, NULL, 0, 0);
    add(&c, 1, 2001, 1000, 0, 1, t + 3 * MS, t + 4 * MS, NULL, 0, 0);
    add(&c, 1, 1001, 1000, 0, 1, t + 5 * MS, t + 6 * MS, NULL, 0, 0);
    add(&c, 0, 1, 0, 0, 4001, t + 6 * MS + US, t + 7 * MS, NULL, 0, 0);
    qr_tc_conn o;
    analyse(&c, CLIENT, &o, NULL);
    cr_assert_eq(o.dir[1].retransmissions, 2);
    cr_assert_eq(o.dir[1].spurious, 1, "the third again: it had arrived");
    cr_assert_eq(o.dir[1].lost, 1, "the second: its hole filled by the resend");
    qr_tc_conn_free(&o);
}

/* TCP keep-alives (a byte below the sender's next sequence number, every 75 s) and the peer's
 * answers: each answer repeats the peer's last ACK, window and sequence number, yet it is a
 * keep-alive ACK, not a duplicate ACK (tshark's reading), from either end. */
Test(tcpconn, keepalive_acks_are_not_duplicate_acks)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    for (int v = 0; v < 3; v++) {
        conn c;
        conn_init(&c);
        handshake(&c, 0, MS);
        add(&c, 0, 1, 100, 0, 1, 2 * MS, 3 * MS, NULL, 0, 0);
        add(&c, 1, 1, 0, 0, 101, 3 * MS, 4 * MS, NULL, 0, 0);
        /* Linux probes with no byte; Windows with the last byte again, which the peer answers
         * with a D-SACK of it: neither is a resend, spurious or not */
        const int64_t dsack[2] = {100, 101};
        for (int k = 1; k <= 4; k++) {
            int64_t t = k * 75000LL * MS;
            uint32_t byte = (uint32_t)(k & 1);
            add(&c, 0, 100, byte, 0, 1, t, t + MS, NULL, 0, 0);
            add(&c, 1, 1, 0, 0, 101, t + MS, t + 2 * MS, dsack, (int)byte, 0);
        }
        qr_tc_conn o;
        analyse(&c, seen[v][0], seen[v][1], &o, NULL);
        cr_assert_eq(o.dir[1].dupacks, 0, "vantage %d: %u", v, o.dir[1].dupacks);
        cr_assert_eq(o.dir[0].dupacks, 0, "the probes are not duplicates either");
        cr_assert_eq(o.dir[0].retransmissions, 0, "vantage %d: a keep-alive is no resend", v);
        cr_assert_eq(o.dir[0].spurious, 0, "vantage %d: nor a spurious one", v);
        cr_assert_eq(o.dir[0].lost, 0, "vantage %d", v);
        qr_tc_conn_free(&o);
    }
}

/* Seen at the receiver only, without timestamps: a segment arriving below what arrived before is
 * a resend, unless what was captured there shows it was sent before (an import's late original,
 * told by its rising IP ID): then it was reordered on the way, and nothing was resent or lost. */
Test(tcpconn, a_late_original_at_the_receiver_is_reordered)
{
    for (int before = 0; before < 2; before++) {
        conn c;
        conn_init(&c);
        c.use_ts = 0;
        handshake(&c, 0, MS);
        int64_t t = 2 * MS;
        add(&c, 0, 1, 1000, 0, 1, t, t + MS, NULL, 0, 0);
        add(&c, 0, 1001, 1000, 0, 1, t + 10 * US, t + 3 * MS, NULL, 0, 0);
        c.p[0][c.n[0] - 1].sent_before = (uint8_t)before;
        add(&c, 0, 2001, 1000, 0, 1, t + 20 * US, t + 2 * MS, NULL, 0, 0);
        add(&c, 1, 1, 0, 0, 3001, t + 3 * MS + US, t + 4 * MS, NULL, 0, 0);
        qr_tc_conn o;
        analyse(&c, SERVER, &o, NULL);
        cr_assert_eq(o.dir[0].retransmissions, before ? 0u : 1u, "marked %d", before);
        cr_assert_eq(o.dir[0].reordered, before ? 1u : 0u, "marked %d", before);
        cr_assert_eq(o.dir[0].lost, before ? 0u : 1u, "unmarked: it filled a hole, so lost");
        qr_tc_conn_free(&o);
    }
}

/* Each copy that arrives again draws its own D-SACK (RFC 2883): three resends of a segment whose
 * original had arrived (its ACK lost), each acknowledged with a D-SACK, the three ACKs coming
 * after the last resend, are three spurious resends, whatever else marked one of them before. */
Test(tcpconn, each_dsack_names_its_own_resend)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    for (int v = 0; v < 3; v++) {
        for (int use_ts = 0; use_ts < 2; use_ts++) {
            conn c;
            conn_init(&c);
            c.use_ts = use_ts;
            handshake(&c, 0, MS);
            add(&c, 0, 1, 100, 0, 1, 2 * MS, 3 * MS, NULL, 0, 0);
            add(&c, 1, 1, 0, 0, 101, 3 * MS, -1, NULL, 0, 0); /* its ACK lost */
            const int64_t dsack[2] = {1, 101};
            const int64_t resend[3] = {250 * MS, 750 * MS, 1750 * MS};
            for (int k = 0; k < 3; k++)
                add(&c, 0, 1, 100, 0, 1, resend[k], resend[k] + MS, NULL, 0, 0);
            for (int k = 0; k < 3; k++)
                add(&c, 1, 1, 0, 0, 101, 1800 * MS + k * US, 1801 * MS + k * US, dsack, 1, 0);
            qr_tc_conn o;
            analyse(&c, seen[v][0], seen[v][1], &o, NULL);
            cr_assert_eq(o.dir[0].retransmissions, 3, "vantage %d", v);
            cr_assert_eq(o.dir[0].spurious, 3, "vantage %d, timestamps %d: %u", v, use_ts,
                         o.dir[0].spurious);
            cr_assert_eq(o.dir[0].lost, 0, "vantage %d", v);
            qr_tc_conn_free(&o);
        }
    }
}

/* Conservation over random segments, at every vantage: the exchanges of a direction never hold
 * more bytes than its stream. The segments are hostile on purpose (data at the SYN's own sequence
 * number or before it, SYNs and FINs anywhere, with or without data, any order), as a capture of
 * a middlebox or a scan gives; the fuzzer found two such cases, this checks the rule on many. */
Test(tcpconn, property_exchanges_hold_no_more_than_the_stream)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    uint32_t r = 12345;
    for (int run = 0; run < 600; run++) {
        conn c;
        conn_init(&c);
        c.use_ts = run & 1;
        if (run % 3)
            handshake(&c, 0, MS);
        int np = 2 + (int)((r = r * 1103515245u + 12345u) >> 16) % 20;
        for (int i = 0; i < np; i++) {
            r = r * 1103515245u + 12345u;
            int d = (r >> 8) & 1;
            int64_t seq = (int64_t)((r >> 10) % 6000) - 3;
            uint32_t pay = (r >> 20) & 1 ? (r >> 21) % 1500 : 0;
            uint8_t fl = ((r >> 3) & 7) == 0 ? QR_TCP_SYN : ((r >> 3) & 7) == 1 ? QR_TCP_FIN : 0;
            int64_t t = (int64_t)(i + 1) * MS + (r & 0xff) * US;
            add(&c, d, seq, pay, fl, (r >> 6) & 1 ? (int64_t)((r >> 12) % 6000) : -1, t,
                (r >> 4) & 1 ? t + MS / 2 : -1, NULL, 0, 0);
        }
        int v = run % 3;
        qr_tc_conn o;
        analyse(&c, seen[v][0], seen[v][1], &o, NULL);
        uint64_t held[2] = {0, 0};
        for (size_t i = 0; i < o.n_ex; i++)
            held[o.ex[i].dir] += o.ex[i].bytes;
        for (int d = 0; d < 2; d++)
            cr_assert_leq(held[d], o.dir[d].bytes, "run %d dir %d: exchanges hold %llu of %llu",
                          run, d, (unsigned long long)held[d], (unsigned long long)o.dir[d].bytes);
        qr_tc_conn_free(&o);
    }
}

/* A connection is closed when both FINs were acknowledged, at every vantage: a last ACK lost (or
 * after the capture ended) leaves it open at capture end, as does a second FIN beyond the first
 * that nobody acknowledged. */
Test(tcpconn, closed_means_both_fins_acknowledged)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    for (int v = 0; v < 3; v++)
        for (int variant = 0; variant < 3; variant++) {
            conn c;
            conn_init(&c);
            handshake(&c, 0, MS);
            add(&c, 0, 1, 100, 0, 1, 2 * MS, 3 * MS, NULL, 0, 0);
            add(&c, 1, 1, 0, QR_TCP_FIN, 101, 4 * MS, 5 * MS, NULL, 0, 0);
            add(&c, 0, 101, 0, QR_TCP_FIN, 2, 6 * MS, 7 * MS, NULL, 0, 0);
            if (variant == 2) /* a second FIN one further on: never acknowledged */
                add(&c, 1, 2, 0, QR_TCP_FIN, 102, 8 * MS, 9 * MS, NULL, 0, 0);
            if (variant != 1) /* variant 1: the last ACK never came */
                add(&c, 1, 2 + (variant == 2), 0, 0, 102, 10 * MS, 11 * MS, NULL, 0, 0);
            qr_tc_conn o;
            analyse(&c, seen[v][0], seen[v][1], &o, NULL);
            cr_assert_eq(o.end, variant == 0 ? QR_TC_END_CLOSED : QR_TC_END_OPEN,
                         "vantage %d, variant %d: %d", v, variant, o.end);
            qr_tc_conn_free(&o);
        }
}

/* A capture that starts mid-connection (no SYN): the stream starts at the lowest byte captured,
 * even when a later packet holds it (a resend of what was sent before the capture began), as
 * tshark counts; at every vantage. */
Test(tcpconn, mid_connection_bytes_start_at_the_lowest_byte_captured)
{
    const unsigned seen[3][2] = {{CLIENT}, {SERVER}, {BOTH}};
    for (int v = 0; v < 3; v++) {
        conn c;
        conn_init(&c);
        add(&c, 1, 5001, 1000, 0, 1, 1 * MS, 2 * MS, NULL, 0, 0);
        add(&c, 1, 6001, 1000, 0, 1, 1 * MS + US, 2 * MS + US, NULL, 0, 0);
        add(&c, 1, 3001, 2000, 0, 1, 3 * MS, 4 * MS, NULL, 0, 0); /* below the first */
        add(&c, 0, 1, 0, 0, 7001, 5 * MS, 6 * MS, NULL, 0, 0);
        qr_tc_conn o;
        analyse(&c, seen[v][0], seen[v][1], &o, NULL);
        cr_assert_eq(o.dir[1].bytes, 4000, "vantage %d: %llu", v,
                     (unsigned long long)o.dir[1].bytes);
        qr_tc_conn_free(&o);
    }
}

/* Both ends of both directions seen: why each RTO fired, from what became of the copy it resent,
 * of what came after it and of the receiver's ACKs. A classic sender (ns-3's: no probe, no RACK)
 * fires its RTO 250 ms into the silence. */
static void why_of_the_rto(conn *c, int nseg, int lose, qr_tc_why want, int64_t delack)
{
    qr_tc_cfg cfg;
    qr_tc_cfg_default(&cfg);
    cfg.classic = 1;
    cfg.delack_ns = delack;
    qr_tc_conn o;
    analyse(c, BOTH, &o, &cfg);
    cr_assert_eq(o.dir[1].trig[QR_TC_RTO], 1, "lose %d", lose);
    cr_assert_eq(o.dir[1].trig[QR_TC_TLP] + o.dir[1].trig[QR_TC_RACK], 0);
    size_t r = c->n[1];
    for (size_t i = 0; i < c->n[1]; i++)
        if (o.info[1][i].trigger == QR_TC_RTO)
            r = i;
    cr_assert_lt(r, c->n[1]);
    cr_assert_eq(o.info[1][r].why, want, "lose %d of %d: %s, want %s", lose, nseg,
                 qr_tc_why_name(o.info[1][r].why), qr_tc_why_name(want));
    const qr_tc_exchange *ex = &o.ex[1];
    /* its wait counts to its reason: the timer's (or, held, the delayed ACK's) */
    int part = want == QR_TC_WHY_ACK_HELD ? QR_TC_PART_DELACK : QR_TC_PART_RTO;
    cr_assert_geq(ex->part_ns[part], 240 * MS, "%s part %lld", qr_tc_part_name(part),
                  (long long)ex->part_ns[part]);
    cr_assert_geq(ex->why_ns[want], 240 * MS);
    int64_t sum = 0;
    for (int k = 0; k < QR_TC_PARTS; k++)
        sum += ex->part_ns[k];
    cr_assert_eq(sum, ex->end_ns - ex->start_ns);
    qr_tc_conn_free(&o);
    /* one end only: the evidence is missing, and the answer says so */
    analyse(c, SERVER, &o, &cfg);
    for (size_t i = 0; i < c->n[1]; i++)
        cr_assert_eq(o.info[1][i].why, QR_TC_WHY_UNKNOWN);
    qr_tc_conn_free(&o);
}

Test(tcpconn, why_the_timer_fired_from_both_ends)
{
    conn c;
    /* the last segment lost: nothing after it could bring a duplicate ACK */
    download(&c, 10, 9, M_TAIL_RTO);
    why_of_the_rto(&c, 10, 9, QR_TC_WHY_TAIL, 0);
    /* the 8th of 10 lost: two segments after it, two duplicate ACKs, one short */
    download(&c, 10, 7, M_TAIL_RTO);
    why_of_the_rto(&c, 10, 7, QR_TC_WHY_FEW_DUPACKS, 0);
    /* nothing lost, the receiver's last ACK lost on its way back */
    download(&c, 10, -1, M_NONE);
    size_t last = c.n[0] - 1;
    int64_t t = c.p[0][last].rx_ns + 250 * MS;
    c.p[0][last].rx_ns = -1;
    add(&c, 1, 1 + 1000 * 9, 1000, 0, 101, t, t + MS, NULL, 0, tsv(t));
    add(&c, 0, 101, 0, 0, 1 + 1000 * 10, t + MS + 5 * US, t + 2 * MS, NULL, 0, tsv(t));
    why_of_the_rto(&c, 10, -1, QR_TC_WHY_ACK_LOST, 0);
    /* nothing lost, the receiver held its last ACK 300 ms (past the sender's timer) */
    download(&c, 10, -1, M_NONE);
    last = c.n[0] - 1;
    t = c.p[0][last].rx_ns + 250 * MS;
    c.p[0][last].tx_ns += 300 * MS;
    c.p[0][last].rx_ns += 300 * MS;
    add(&c, 1, 1 + 1000 * 9, 1000, 0, 101, t, t + MS, NULL, 0, tsv(t));
    why_of_the_rto(&c, 10, -1, QR_TC_WHY_ACK_HELD, 40 * MS);
}

/* The receiver's ACK holds, and an exchange that ends when its receiver had every byte
 * (end_at_arrival: a flow completion time) rather than at its ACK. */
Test(tcpconn, holds_and_the_end_at_arrival)
{
    conn c;
    download(&c, 10, -1, M_NONE);
    size_t last = c.n[0] - 1;
    int64_t last_rx = -1;
    for (size_t i = 0; i < c.n[1]; i++)
        if (c.p[1][i].rx_ns > last_rx)
            last_rx = c.p[1][i].rx_ns;
    c.p[0][last].tx_ns += 30 * MS; /* held 30 ms */
    c.p[0][last].rx_ns += 30 * MS;
    qr_tc_cfg cfg;
    qr_tc_cfg_default(&cfg);
    cfg.delack_ns = 20 * MS;
    qr_tc_conn o;
    analyse(&c, BOTH, &o, &cfg);
    cr_assert_eq(o.info[0][last].hold_ns, 30 * MS + 5 * US);
    cr_assert_eq(o.dir[0].held_acks, 1);
    cr_assert_eq(o.ex[1].end_ns, c.p[0][last].rx_ns, "ends at its ACK by default");
    cr_assert_geq(o.ex[1].part_ns[QR_TC_PART_DELACK], 30 * MS, "the sender waited on the hold");
    qr_tc_conn_free(&o);
    cfg.end_at_arrival = 1;
    analyse(&c, BOTH, &o, &cfg);
    cr_assert_eq(o.ex[1].end_ns, last_rx, "ends when the last byte arrived");
    cr_assert_eq(o.ex[1].status, QR_TC_COMPLETE);
    int64_t sum = 0;
    for (int k = 0; k < QR_TC_PARTS; k++)
        sum += o.ex[1].part_ns[k];
    cr_assert_eq(sum, o.ex[1].end_ns - o.ex[1].start_ns);
    cr_assert_eq(o.ex[1].part_ns[QR_TC_PART_DELACK], 0, "the hold came after the last byte");
    qr_tc_conn_free(&o);
    /* without a delayed-ACK bound, a hold is measured but not called the timer's */
    cfg.delack_ns = 0;
    analyse(&c, BOTH, &o, &cfg);
    cr_assert_eq(o.dir[0].held_acks, 0);
    cr_assert_eq(o.info[0][last].hold_ns, 30 * MS + 5 * US);
    qr_tc_conn_free(&o);
}

/* A resend that crosses in the sender's host with the ACK already covering it (captured 10 us
 * after that ACK, 300 ms after the one before): the ACK did not send it, the timer did; it was
 * spurious and its original was not reordered (tshark: a spurious retransmission, not out of
 * order; zeek-tls13draft16 in the corpus). */
Test(tcpconn, a_resend_crossing_the_ack_that_covers_it_is_the_timers)
{
    conn c;
    download(&c, 10, -1, M_NONE);
    size_t last = c.n[0] - 1;
    c.p[0][last].tx_ns += 300 * MS;
    c.p[0][last].rx_ns += 300 * MS;
    int64_t t = c.p[0][last].rx_ns + 10 * US;
    add(&c, 1, 1 + 1000 * 9, 1000, 0, 101, t, t + MS, NULL, 0, tsv(t));
    qr_tc_conn o;
    analyse(&c, SERVER, &o, NULL);
    size_t r = c.n[1] - 1;
    cr_assert(o.info[1][r].trigger == QR_TC_TLP || o.info[1][r].trigger == QR_TC_RTO, "%s",
              qr_tc_trigger_name(o.info[1][r].trigger));
    cr_assert_eq(o.info[1][r].spurious, 1);
    cr_assert_eq(o.dir[1].reordered, 0);
    qr_tc_conn_free(&o);
}
