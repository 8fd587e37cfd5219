/* The diagnosis from hosts' kernel records (qr_diagnose_records) against generated
 * request/response connections whose truth the generator keeps: over many seeds, two recorded
 * hosts, each connection a handshake then rounds of a request and its response (send calls,
 * segments of at most 1448 bytes, the receiver's arrivals and its read call once it had every
 * byte), segments lost and resent (fast or by timer), resends of segments that had arrived
 * (spurious: the receiver sees them as duplicates). Checked: one exchange per request and per
 * response with its bytes and direction, ending when the receiver read its last byte; its losses
 * exactly the planted ones and its spurious resends too (without the receiver's record, every
 * fast or timer resend: the kernel's conclusion); its parts summing to its duration; a
 * loss cause only where something was resent; no end and the cause unknown where the receiver was
 * not recorded. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krec_gen.h"
#include "qreplay/diagnose.h"
#include "qreplay/error.h"
#include "qreplay/krec_recording.h"

static char dir[64], err[QR_ERRBUF_SIZE];
static char paths[2][128];
static qr_scenario *scen;

static void setup(void)
{
    kg_scratch(dir, sizeof dir, "/tmp/qr-diagrec-XXXXXX", paths, 2);
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
    cr_assert_eq(qr_scenario_set(scen, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(scen, "topology.hosts=2", err), QR_OK, "%s", err);
}

static void teardown(void)
{
    qr_scenario_destroy(scen);
    kg_scratch_remove(dir);
}

TestSuite(diagnose_records, .init = setup, .fini = teardown);

#define T0 KG_T0
#define HDR KG_HDR
#define MAXX 16

/* What the generator planted in each exchange of a connection. */
struct gex {
    uint32_t dir, lost, spurious, resent;
    uint64_t bytes;
    int64_t read_ns; /* when the data of the receiver's read of its last byte arrived */
};

struct gconn {
    struct gex ex[MAXX];
    uint32_t n;
};

/* One direction's message of `bytes` from writer w (ends e) to writer r (ends re), from seq at
 * time *t: each segment sent, lost (resent after the next one, fast or by timer) or arrived (now
 * and then resent by timer all the same: a spurious resend). Then the receiver's read. */
static void message(qr_krec_writer *w, const qr_krec_ends *e, qr_krec_writer *r,
                    const qr_krec_ends *re, uint32_t *seq, uint64_t bytes, int64_t *t, uint64_t *s,
                    struct gex *x)
{
    cr_assert_eq(qr_krec_call(w, e, 0, (uint32_t)bytes, *t, err), QR_OK, "%s", err);
    int64_t last_arrival = *t, ready = -1; /* ready: the last arrival of bytes not had before */
    for (uint64_t off = 0; off < bytes; off += 1448) {
        uint32_t pay = (uint32_t)(bytes - off < 1448 ? bytes - off : 1448);
        *t += 2000 + (int64_t)kg_rnd(s, 20000);
        cr_assert_eq(qr_krec_sent(w, e, *seq, HDR + pay, HDR, 0, 0x18, *t, err), QR_OK, "%s", err);
        int lost = kg_rnd(s, 6) == 0, spurious = !lost && kg_rnd(s, 10) == 0;
        if (!lost && r) {
            cr_assert_eq(
                qr_krec_arrived(r, re, *seq, HDR + pay, HDR, 0x18, 0, 65535, *t + 30000, err),
                QR_OK, "%s", err);
            last_arrival = ready = *t + 30000;
        }
        if (lost || spurious) {
            *t += lost ? 300000 + (int64_t)kg_rnd(s, 300000) : 250000000;
            qr_krec_resend why = lost && kg_rnd(s, 2) ? QR_KREC_FAST : QR_KREC_RTO;
            cr_assert_eq(qr_krec_resent(w, e, *seq, why, *t + 1, err), QR_OK, "%s", err);
            cr_assert_eq(qr_krec_sent(w, e, *seq, HDR + pay, HDR, 0, 0x18, *t, err), QR_OK);
            if (r)
                cr_assert_eq(
                    qr_krec_arrived(r, re, *seq, HDR + pay, HDR, 0x18, 0, 65535, *t + 30000, err),
                    QR_OK, "%s", err);
            last_arrival = *t + 30000;
            if (lost)
                ready = last_arrival;
            x->lost += (uint32_t)lost;
            x->spurious += (uint32_t)(spurious && r);
            x->resent++;
        }
        *seq += pay;
    }
    *t = last_arrival + 10000;
    x->read_ns = ready; /* when the read's data was there: its exchange's end */
    x->bytes = bytes;
    if (r)
        cr_assert_eq(qr_krec_call(r, re, 1, (uint32_t)bytes, *t, err), QR_OK, "%s", err);
    *t += 2000000; /* the next message after an idle time */
}

/* A connection from h0 (port) to h1, rounds of a request and its response; the server's record
 * holds it when server_recorded. */
static void gen_conn(qr_krec_writer *w[2], uint16_t port, uint64_t *s, int64_t *t,
                     int server_recorded, struct gconn *g)
{
    qr_krec_ends ce = kg_ends(0, port, 1, 80), se = kg_ends(1, 80, 0, port);
    qr_krec_writer *sw = server_recorded ? w[1] : NULL;
    uint32_t cs = 1000 + (uint32_t)kg_rnd(s, 1u << 30), ss = 5000;
    cr_assert_eq(qr_krec_sent(w[0], &ce, cs, 60, 60, 0, 0x02, *t, err), QR_OK, "%s", err);
    if (sw) {
        cr_assert_eq(qr_krec_arrived(sw, &se, cs, 60, 60, 0x02, 0, 65535, *t + 30000, err), QR_OK);
        cr_assert_eq(qr_krec_sent(sw, &se, ss, 60, 60, 0, 0x12, *t + 31000, err), QR_OK);
    }
    cr_assert_eq(qr_krec_sent(w[0], &ce, cs + 1, HDR, HDR, 0, 0x10, *t + 62000, err), QR_OK);
    *t += 100000;
    uint32_t cseq = cs + 1, sseq = ss + 1;
    uint32_t rounds = 1 + (uint32_t)kg_rnd(s, 4);
    memset(g, 0, sizeof *g);
    for (uint32_t k = 0; k < rounds; k++) {
        struct gex *q = &g->ex[g->n++];
        q->dir = 0;
        message(w[0], &ce, sw, &se, &cseq, 1 + kg_rnd(s, 4000), t, s, q);
        if (!sw)
            continue; /* no server recorded: no response to generate from it */
        struct gex *a = &g->ex[g->n++];
        a->dir = 1;
        message(sw, &se, w[0], &ce, &sseq, 1 + kg_rnd(s, 20000), t, s, a);
    }
}

static void check_conn(const qr_diagnosis *d, uint32_t f, const struct gconn *g, int64_t base,
                       int server_recorded)
{
    const qr_diag_flow *fl = &d->flows[f];
    cr_assert_eq(fl->exchanges, g->n, "flow %u: %u exchanges, planted %u", f, fl->exchanges, g->n);
    for (uint32_t i = 0; i < g->n; i++) {
        const qr_diag_exchange *e = &d->exchanges[fl->first_exchange + i];
        const struct gex *x = &g->ex[i];
        cr_assert_eq(e->dir, x->dir, "flow %u exchange %u", f, i);
        cr_assert_eq(e->bytes, x->bytes, "flow %u exchange %u", f, i);
        cr_assert_eq(e->spurious, x->spurious, "flow %u exchange %u", f, i);
        int64_t dur = qr_diag_exchange_duration(d, e), sum = 0;
        for (int p = 0; p < QR_TC_PARTS; p++) {
            cr_assert_geq(e->part_ns[p], 0);
            sum += e->part_ns[p];
        }
        if (!server_recorded) { /* the receiver's record is missing: no end, nothing concluded */
            cr_assert_eq(e->end_ns, -1);
            cr_assert_eq(e->status, QR_TC_NO_ACKS);
            cr_assert_eq(e->lost,
                         x->resent); /* the kernel's conclusion: every fast or timer resend */
            continue;
        }
        cr_assert_eq(e->lost, x->lost, "flow %u exchange %u: %u lost, planted %u", f, i, e->lost,
                     x->lost);
        cr_assert_eq(e->status, QR_TC_COMPLETE);
        cr_assert_eq(e->end_ns, x->read_ns - base, "flow %u exchange %u", f, i);
        cr_assert_eq(sum, dur, "flow %u exchange %u: parts %ld, duration %ld", f, i, (long)sum,
                     (long)dur);
        int loss_cause = e->cause == QR_CAUSE_RTO || e->cause == QR_CAUSE_TAIL_DROP ||
                         e->cause == QR_CAUSE_RTO_FEW_DUPACKS || e->cause == QR_CAUSE_LOST_RETX ||
                         e->cause == QR_CAUSE_FAST_RETRANSMIT || e->cause == QR_CAUSE_TLP ||
                         e->cause == QR_CAUSE_LOSS || e->cause == QR_CAUSE_ACK_DROP;
        cr_assert(!loss_cause || x->resent, "flow %u exchange %u: %s with nothing resent", f, i,
                  qr_diag_cause_name(e->cause));
        if (x->lost)
            cr_assert_gt(e->part_ns[QR_TC_PART_RTO] + e->part_ns[QR_TC_PART_RECOVERY], 0);
    }
}

Test(diagnose_records, exchanges_losses_and_parts_agree_with_the_planted_truth_over_many_seeds)
{
    uint32_t planted_lost = 0, planted_spurious = 0, unrecorded = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        qr_krec_header h = {"h0", 1, T0, QR_SAMPLING_RATE, 1, {1000}};
        qr_krec_writer *w[2];
        for (int i = 0; i < 2; i++) {
            h.host = i ? "h1" : "h0";
            cr_assert_eq(qr_krec_writer_open(&w[i], paths[i], &h, err), QR_OK, "%s", err);
        }
        uint64_t s = seed;
        struct gconn g[3];
        int recorded[3];
        uint32_t n = 1 + (uint32_t)kg_rnd(&s, 3);
        int64_t t = T0 + 1000;
        for (uint32_t c = 0; c < n; c++) {
            recorded[c] = c == 0 || kg_rnd(&s, 3) != 0; /* the first: h1's address known */
            unrecorded += !recorded[c];
            gen_conn(w, (uint16_t)(40000 + c), &s, &t, recorded[c], &g[c]);
            t += 50000000;
        }
        for (int i = 0; i < 2; i++)
            cr_assert_eq(qr_krec_writer_close(w[i], 0, 0, NULL, err), QR_OK, "%s", err);
        const char *p[2] = {paths[0], paths[1]};
        qr_krec_set *ks;
        cr_assert_eq(qr_krec_set_open(&ks, scen, p, 2, NULL, err), QR_OK, "%s", err);
        qr_diag_opts o;
        qr_diag_opts_default(&o);
        o.all = 1;
        o.path_rate_bps = 100000000;
        qr_diagnosis d;
        cr_assert_eq(qr_diagnose_records(ks, &o, &d, err), QR_OK, "seed %lu: %s",
                     (unsigned long)seed, err);
        cr_assert_eq(d.n_flows, n);
        for (uint32_t c = 0; c < n; c++) {
            check_conn(&d, c, &g[c], qr_krec_set_time_base(ks), recorded[c]);
            for (uint32_t i = 0; i < g[c].n; i++)
                planted_lost += g[c].ex[i].lost, planted_spurious += g[c].ex[i].spurious;
        }
        qr_diagnosis_free(&d);
        qr_krec_set_close(ks);
    }
    /* the generator made every kind of case */
    cr_assert_gt(planted_lost, 10);
    cr_assert_gt(planted_spurious, 3);
    cr_assert_gt(unrecorded, 3);
}
