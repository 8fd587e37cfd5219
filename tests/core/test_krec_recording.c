/* The recording made from hosts' kernel records (krec_recording.h), against generated traffic
 * whose truth the generator keeps: over many seeds, connections between three recorded hosts
 * (some seen by one end only), a loopback one, one to a host not recorded, segments lost and
 * resent (fast, by timer, or as a probe; two at once as one GSO packet with one event, or as two
 * packets with an event each; lost again and resent a timeout later), the receiver's holes. Every
 * flow's ends and opener, every direction's packets (size, sequence number, SYN/ACK), the loss tags
 * exactly the transmissions whose resend did not arrive as a duplicate where the receiver was
 * recorded (a probe's included, a resend of bytes that had arrived not), else those the sender
 * resent by fast retransmit or timer (a probe: none), the receiver's confirmations, the counts of
 * what was left out, and every planned send time equal to qr_sample_infer over the sender's samples
 * (two implementations that must agree). And the errors: an address in two records, other
 * thresholds, more records than hosts, no connection, a threshold the records do not hold. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krec_gen.h"
#include "qreplay/error.h"
#include "qreplay/krec_recording.h"

static char dir[64], err[QR_ERRBUF_SIZE];
static char paths[4][128];
static qr_scenario *scen;

static void setup(void)
{
    kg_scratch(dir, sizeof dir, "/tmp/qr-krecset-XXXXXX", paths, 4);
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
    cr_assert_eq(qr_scenario_set(scen, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(scen, "topology.hosts=3", err), QR_OK, "%s", err);
}

static void teardown(void)
{
    qr_scenario_destroy(scen);
    kg_scratch_remove(dir);
}

TestSuite(krec_recording, .init = setup, .fini = teardown);

#define T0 KG_T0
#define MAXC 12
#define MAXP 256
#define HDR KG_HDR

/* A generated connection: its hosts, whether the server's record has it, and per direction
 * (0 the client's) what was sent and which transmissions are lost by the sender's account. */
struct gconn {
    uint32_t client, server;
    int server_recorded;
    uint32_t n[2], size[2][MAXP], seq[2][MAXP];
    uint8_t flags[2][MAXP], tagged[2][MAXP], confirmed[2][MAXP];
    uint32_t arr_lo[MAXP], arr_hi[MAXP], n_arr; /* the client's data the server received */
};

/* The server received [lo, hi) of the client's data. */
static void got(struct gconn *g, uint32_t lo, uint32_t hi)
{
    cr_assert_lt(g->n_arr, MAXP);
    g->arr_lo[g->n_arr] = lo, g->arr_hi[g->n_arr++] = hi;
}

/* Whether every byte of [lo, hi) had reached the server. */
static int all_got(const struct gconn *g, uint32_t lo, uint32_t hi)
{
    while ((int32_t)(hi - lo) > 0) {
        uint32_t i = 0;
        while (i < g->n_arr &&
               !((int32_t)(lo - g->arr_lo[i]) >= 0 && (int32_t)(lo - g->arr_hi[i]) < 0))
            i++;
        if (i == g->n_arr)
            return 0;
        lo = g->arr_hi[i];
    }
    return 1;
}

static void sent(qr_krec_writer *w, struct gconn *g, int d, const qr_krec_ends *e, uint32_t seq,
                 uint32_t size, uint32_t hdr, uint8_t fl, int64_t t)
{
    cr_assert_eq(qr_krec_sent(w, e, seq, size, (uint16_t)hdr, 0, fl, t, err), QR_OK, "%s", err);
    uint32_t i = g->n[d]++;
    cr_assert_lt(i, MAXP);
    g->size[d][i] = size, g->seq[d][i] = seq, g->flags[d][i] = fl;
}

/* The latest transmission of direction d that holds seq. */
static uint32_t last_holding(const struct gconn *g, int d, uint32_t seq)
{
    for (uint32_t i = g->n[d]; i-- > 0;)
        if (g->seq[d][i] == seq)
            return i;
    cr_assert_fail("no transmission holds %u", seq);
    return 0;
}

/* Connection c from client to server: the handshake, data with losses, the resends, the
 * server's ACKs; w[h] is host h's writer (the server's NULL when it does not record it). */
static void gen_conn(qr_krec_writer **w, struct gconn *g, uint16_t port, uint64_t *s, int64_t t)
{
    qr_krec_ends ce = kg_ends(g->client, port, g->server, 5001);
    qr_krec_ends se = kg_ends(g->server, 5001, g->client, port);
    qr_krec_writer *cw = w[g->client], *sw = g->server_recorded ? w[g->server] : NULL;
    uint32_t cs = 1000 + (uint32_t)kg_rnd(s, 1u << 30), ss = 7000;
    sent(cw, g, 0, &ce, cs, 60, 60, 0x02, t);
    if (sw) {
        cr_assert_eq(qr_krec_arrived(sw, &se, cs, 60, 60, 0x02, 0, 65535, t + 5000, err), QR_OK);
        sent(sw, g, 1, &se, ss, 60, 60, 0x12, t + 6000);
    } else {
        g->n[1]++; /* the SYN-ACK that was sent, not recorded */
    }
    t += 20000;
    uint32_t seq = cs + 1, lost_seq = 0, lost_size = 0, hole_lo = 0, hole_hi = 0;
    int lost = 0, relost = 0, n_data = 10 + (int)kg_rnd(s, 40);
    for (int k = 0; k < n_data; k++, t += 1000 + (int64_t)kg_rnd(s, 30000)) {
        uint32_t pay = kg_rnd(s, 3) ? 1448 : 1 + (uint32_t)kg_rnd(s, 1448);
        sent(cw, g, 0, &ce, seq, HDR + pay, HDR, 0x10, t);
        int drop = !lost && kg_rnd(s, 5) == 0;
        if (drop)
            lost = 1, relost = 0, lost_seq = seq, lost_size = HDR + pay, hole_lo = seq,
            hole_hi = seq + pay;
        else if (sw) {
            cr_assert_eq(
                qr_krec_arrived(sw, &se, seq, HDR + pay, HDR, 0x10, 0, 65535, t + 5000, err),
                QR_OK);
            got(g, seq, seq + pay);
        }
        seq += pay;
        if (lost && !drop) { /* after the next segment arrived: the resend, and why */
            if (relost)      /* a resend lost again is resent a timeout later */
                t += 200000;
            qr_krec_resend why = (qr_krec_resend)kg_rnd(s, 3);
            uint32_t orig = last_holding(g, 0, lost_seq);
            /* now and then with the full segment after it, as one GSO packet: one resend event,
             * two segments, both tagged (the sender's conclusion; the second had arrived) */
            int two = lost_size == HDR + 1448 && orig + 1 < g->n[0] &&
                      g->seq[0][orig + 1] == lost_seq + 1448 &&
                      g->size[0][orig + 1] == HDR + 1448 && kg_rnd(s, 2);
            /* or as two packets, each its own event and reason */
            int apart = two && kg_rnd(s, 2);
            qr_krec_resend why_b = apart ? (qr_krec_resend)kg_rnd(s, 3) : why;
            cr_assert_eq(qr_krec_resent(cw, &ce, lost_seq, why, t + 100, err), QR_OK, "%s", err);
            if (apart) {
                sent(cw, g, 0, &ce, lost_seq, HDR + 1448, HDR, 0x10, t + 100);
                cr_assert_eq(qr_krec_resent(cw, &ce, lost_seq + 1448, why_b, t + 102, err), QR_OK);
                sent(cw, g, 0, &ce, lost_seq + 1448, HDR + 1448, HDR, 0x10, t + 102);
            } else if (two) {
                cr_assert_eq(
                    qr_krec_sent(cw, &ce, lost_seq, HDR + 2896, HDR, 1448, 0x10, t + 100, err),
                    QR_OK, "%s", err);
                for (int q = 0; q < 2; q++) {
                    uint32_t i = g->n[0]++;
                    g->size[0][i] = HDR + 1448, g->seq[0][i] = lost_seq + 1448u * (uint32_t)q;
                    g->flags[0][i] = 0x10;
                }
            } else {
                sent(cw, g, 0, &ce, lost_seq, lost_size, HDR, 0x10, t + 100);
            }
            /* lost again now and then: the resend is the transmission tagged next (of a GSO
             * resend, its first segment and all, or its second alone, the first arriving) */
            lost = relost = why != QR_KREC_PROBE && kg_rnd(s, 4) == 0;
            int second = lost && two && kg_rnd(s, 2);
            /* the tags: with the receiver recorded, each resent segment's original where the
             * resend did not arrive, or arrived with bytes missing until then (not a duplicate);
             * without it, where TCP resent it by fast retransmit or timer (a probe: none) */
            for (uint32_t q = 0; q < 1u + (uint32_t)two; q++) {
                uint32_t lo = lost_seq + 1448u * q, hi = lo + (two ? 1448u : lost_size - HDR);
                int arrives = !lost || (second && q == 0);
                qr_krec_resend wq = q ? why_b : why;
                int tag = sw ? !arrives || !all_got(g, lo, hi) : wq != QR_KREC_PROBE;
                if (tag) { /* confirmed where the receiver's hole (the first loss) covers it */
                    g->tagged[0][orig + q] = 1;
                    g->confirmed[0][orig + q] = sw &&
                                                (int32_t)(g->seq[0][orig + q] - hole_hi) < 0 &&
                                                (int32_t)(hole_lo - g->seq[0][orig + q]) <= 0;
                }
                if (sw && arrives) {
                    cr_assert_eq(qr_krec_arrived(sw, &se, lo, HDR + (hi - lo), HDR, 0x10, 0, 65535,
                                                 t + 5100, err),
                                 QR_OK);
                    got(g, lo, hi);
                }
            }
            if (second)
                lost_seq += 1448;
        }
        if (sw && k % 2)
            sent(sw, g, 1, &se, ss + 1, HDR, HDR, 0x10, t + 5200);
        else if (k % 2)
            g->n[1]++;
    }
}

struct gen {
    struct gconn c[MAXC];
    size_t n;
};

/* Three records: MAXC connections between the hosts, one over loopback, one to 10.0.0.9. */
static void generate(uint64_t seed, struct gen *G)
{
    qr_krec_header h = {"h0", 1, T0, QR_SAMPLING_RATE, 2, {20000, 200000}};
    qr_krec_writer *w[3];
    for (uint32_t i = 0; i < 3; i++) {
        char label[8];
        snprintf(label, sizeof label, "h%u", i);
        h.host = label;
        cr_assert_eq(qr_krec_writer_open(&w[i], paths[i], &h, err), QR_OK, "%s", err);
    }
    uint64_t s = seed;
    memset(G, 0, sizeof *G);
    int64_t t = T0 + 1000;
    for (size_t c = 0; c < MAXC; c++, t += 10000000) {
        struct gconn *g = &G->c[G->n++];
        g->client = (uint32_t)kg_rnd(&s, 3);
        g->server = (g->client + 1 + (uint32_t)kg_rnd(&s, 2)) % 3;
        g->server_recorded = kg_rnd(&s, 5) != 0;
        gen_conn(w, g, (uint16_t)(40000 + c), &s, t);
    }
    qr_krec_ends lo = kg_ends(0, 40999, 0, 5001);
    lo.laddr[0] = lo.raddr[0] = 127;
    qr_krec_ends far = kg_ends(1, 41000, 8, 5001);
    cr_assert_eq(qr_krec_sent(w[0], &lo, 1, 60, 60, 0, 0x02, t, err), QR_OK);
    cr_assert_eq(qr_krec_sent(w[1], &far, 1, 60, 60, 0, 0x02, t, err), QR_OK);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(qr_krec_writer_close(w[i], 0, 0, NULL, err), QR_OK, "%s", err);
}

static const char *const *path_list(void)
{
    static const char *p[4];
    for (int i = 0; i < 4; i++)
        p[i] = paths[i];
    return p;
}

static void check_flows(const qr_recording *r, const struct gen *G, const qr_krec_set_stats *st)
{
    const qr_flow_table *ft = qr_recording_flows(r);
    cr_assert_eq(qr_flow_table_flows(ft), G->n);
    uint64_t tagged = 0, confirmed = 0, both = 0;
    for (uint32_t f = 0; f < G->n; f++) {
        const struct gconn *g = &G->c[f];
        const qr_flow *fl = qr_flow_table_flow(ft, f);
        cr_assert(fl->src == g->client && fl->dst == g->server, "flow %u: %u->%u, made %u->%u", f,
                  fl->src, fl->dst, g->client, g->server);
        both += g->server_recorded;
        for (int d = 0; d < 2; d++) {
            uint32_t dir = 2 * f + (uint32_t)d;
            unsigned seen = qr_recording_seen(r, dir);
            cr_assert_eq(seen, d == 0 || g->server_recorded ? QR_TC_AT_SENDER : 0u);
            size_t n;
            const qr_rec_packet *p = qr_recording_packets(r, d ? g->server : g->client, &n);
            uint32_t got = 0;
            for (size_t i = 0; i < n; i++) {
                if (p[i].dir != dir)
                    continue;
                uint32_t j = p[i].seq;
                cr_assert_eq(j, got++, "flow %u dir %d: packets out of order", f, d);
                cr_assert(p[i].pk.ip_len == g->size[d][j] && p[i].pk.seq == g->seq[d][j],
                          "flow %u dir %d packet %u: %u bytes seq %u, sent %u seq %u", f, d, j,
                          p[i].pk.ip_len, p[i].pk.seq, g->size[d][j], g->seq[d][j]);
                uint8_t want = (uint8_t)(g->flags[d][j] | (d == 0 && j == 0 ? 0 : 0x10));
                cr_assert_eq(p[i].pk.tcp_flags, want, "flow %u dir %d packet %u: flags", f, d, j);
                cr_assert_eq(p[i].pk.tcp_opt_len, g->flags[d][j] & 0x02 ? 20 : 12);
                cr_assert_eq(p[i].drop_tag, g->tagged[d][j], "flow %u dir %d packet %u: tag", f, d,
                             j);
                cr_assert_eq(qr_recording_detected(r, qr_packet_id(dir, j)), g->tagged[d][j]);
                tagged += g->tagged[d][j];
                confirmed += g->confirmed[d][j];
            }
            cr_assert_eq(got, d == 0 || g->server_recorded ? g->n[d] : 0u,
                         "flow %u dir %d: %u packets, sent %u", f, d, got, g->n[d]);
        }
    }
    cr_assert_eq(st->flows, G->n);
    cr_assert(st->both_ends == both && st->one_end == G->n - both);
    cr_assert_eq(st->unrecorded_dirs, G->n - both);
    cr_assert_eq(st->lost, tagged);
    cr_assert_eq(st->lost_confirmed, confirmed);
    cr_assert_eq(st->loopback, 1);
    cr_assert_eq(st->no_host, 1);
    cr_assert_eq(st->unexplained, 0);
}

/* Every planned time: qr_sample_infer over the sender's samples, less the first opening. */
static void check_plan(const qr_krec_set *ks, const qr_recording *r, const struct gen *G)
{
    qr_krec *k[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(qr_krec_open(&k[i], paths[i], err), QR_OK, "%s", err);
    const qr_krec_header *h = qr_krec_set_header(ks);
    for (size_t ti = 0; ti < h->n_th; ti++) {
        qr_plan *p;
        qr_sampling_stats st;
        cr_assert_eq(qr_krec_set_plan(&p, ks, h->method, h->th_ns[ti], &st, NULL, NULL, err), QR_OK,
                     "%s", err);
        for (uint32_t host = 0; host < 3; host++) {
            size_t n;
            const qr_rec_packet *pk = qr_recording_packets(r, host, &n);
            const int64_t *tm = qr_plan_times(p, host, &n);
            for (size_t i = 0; i < n; i++) {
                const struct gconn *g = &G->c[pk[i].dir / 2];
                (void)g;
                const qr_krec_conn *cs;
                size_t nc = qr_krec_conns(k[host], &cs), c = 0;
                /* the sender's connection: the one on the flow's ports */
                uint16_t port = (uint16_t)(40000 + pk[i].dir / 2);
                while (c < nc && cs[c].ends.lport != port && cs[c].ends.rport != port)
                    c++;
                cr_assert_lt(c, nc);
                size_t nr;
                const qr_sample_record *sr = qr_krec_samples(k[host], cs[c].id, ti, &nr);
                int64_t want;
                cr_assert_eq(qr_sample_infer(sr, nr, pk[i].seq, &want), QR_OK);
                cr_assert_eq(tm[i], want - (T0 + 1000), "host %u packet %zu at threshold %zu", host,
                             i, ti);
                if (ti == 0)
                    cr_assert_eq(pk[i].pk.time_ns, tm[i]);
            }
        }
        qr_plan_free(p);
    }
    qr_plan *p;
    cr_assert_eq(qr_krec_set_plan(&p, ks, h->method, 12345, NULL, NULL, NULL, err), QR_EINVAL);
    cr_assert(strstr(err, "20000 ns, 200000 ns"), "%s", err);
    for (int i = 0; i < 3; i++)
        qr_krec_close(k[i]);
}

Test(krec_recording, flows_packets_tags_and_times_over_many_seeds)
{
    for (uint64_t seed = 1; seed <= 10; seed++) {
        static struct gen G;
        generate(seed, &G);
        qr_krec_set *ks;
        cr_assert_eq(qr_krec_set_open(&ks, scen, path_list(), 3, NULL, err), QR_OK, "%s", err);
        const qr_recording *r = qr_krec_set_recording(ks);
        qr_krec_set_stats st;
        qr_krec_set_stats_get(ks, &st);
        cr_assert_eq(st.connections, 2 * G.n - (G.n - st.both_ends) + 2);
        check_flows(r, &G, &st);
        check_plan(ks, r, &G);
        /* the same records, the same id; the id of no other records */
        qr_krec_set *again;
        cr_assert_eq(qr_krec_set_open(&again, scen, path_list(), 3, NULL, err), QR_OK);
        cr_assert_str_eq(qr_recording_id(qr_krec_set_recording(again)), qr_recording_id(r));
        qr_krec_set_close(again);
        const char *two[2] = {paths[0], paths[1]};
        if (qr_krec_set_open(&again, scen, two, 2, NULL, err) == QR_OK) {
            cr_assert_str_neq(qr_recording_id(qr_krec_set_recording(again)), qr_recording_id(r));
            qr_krec_set_close(again);
        }
        qr_krec_set_close(ks);
    }
}

static void one_record(const char *p, const char *label, uint32_t self, uint32_t peer, int64_t th)
{
    qr_krec_header h = {label, 1, T0, QR_SAMPLING_RATE, 1, {th}};
    qr_krec_writer *w;
    cr_assert_eq(qr_krec_writer_open(&w, p, &h, err), QR_OK, "%s", err);
    qr_krec_ends e = kg_ends(self, 40000, peer, 5001);
    cr_assert_eq(qr_krec_sent(w, &e, 1, 60, 60, 0, 0x02, T0 + 10, err), QR_OK);
    cr_assert_eq(qr_krec_writer_close(w, 0, 0, NULL, err), QR_OK, "%s", err);
}

Test(krec_recording, records_that_disagree_are_refused_naming_them)
{
    qr_krec_set *ks;
    one_record(paths[0], "a", 0, 1, 1000);
    one_record(paths[1], "b", 0, 2, 1000); /* 10.0.0.1 again */
    cr_assert_eq(qr_krec_set_open(&ks, scen, path_list(), 2, NULL, err), QR_EVALUE);
    cr_assert(strstr(err, paths[0]) && strstr(err, paths[1]) && strstr(err, "10.0.0.1"), "%s", err);
    one_record(paths[1], "b", 1, 0, 2000);
    cr_assert_eq(qr_krec_set_open(&ks, scen, path_list(), 2, NULL, err), QR_EVALUE);
    cr_assert(strstr(err, paths[1]) && strstr(err, "thresholds"), "%s", err);
    one_record(paths[1], "b", 1, 0, 1000);
    one_record(paths[2], "c", 2, 0, 1000);
    one_record(paths[3], "d", 3, 0, 1000);
    cr_assert_eq(qr_krec_set_open(&ks, scen, path_list(), 4, NULL, err), QR_EVALUE);
    cr_assert(strstr(err, "4 records") && strstr(err, "3 hosts"), "%s", err);
    /* a and b: each the client of its own connection to the other, seen at one end */
    cr_assert_eq(qr_krec_set_open(&ks, scen, path_list(), 2, NULL, err), QR_OK, "%s", err);
    qr_krec_set_stats st;
    qr_krec_set_stats_get(ks, &st);
    cr_assert(st.flows == 2 && st.one_end == 2 && st.both_ends == 0);
    cr_assert_eq(qr_flow_table_flow(qr_recording_flows(qr_krec_set_recording(ks)), 0)->src, 0);
    qr_krec_set_close(ks);
    /* only a: its peer 10.0.0.2 is no recorded host */
    cr_assert_eq(qr_krec_set_open(&ks, scen, path_list(), 1, NULL, err), QR_ENOTFOUND);
    cr_assert(strstr(err, "1 to a host not recorded"), "%s", err);
    /* not a record */
    FILE *f = fopen(paths[1], "w");
    fputs("not a record\n", f);
    fclose(f);
    cr_assert_neq(qr_krec_set_open(&ks, scen, path_list(), 2, NULL, err), QR_OK);
    cr_assert(strstr(err, paths[1]), "%s", err);
}
