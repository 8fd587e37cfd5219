/* TCP execution traces (tcptrace.h): from a hand-made connection whose every event is known,
 * qr_tcp_trace_finish must find exactly the retransmissions, name each trigger from the congestion
 * state (the first after Recovery starts is the fast retransmit, later ones recovery; the first
 * after Loss is the timer's, later ones after-rto; a SYN again is its timer's), count duplicate
 * ACKs as the sender saw them, tell delayed ACKs from immediate ones by the threshold, and make
 * sequence numbers relative to each end's ISN. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/tcptrace.h"

#define SYN 0x02
#define ACK 0x10
#define FIN 0x01

enum { S = QR_TT_SENDER, R = QR_TT_RECEIVER, TX = QR_TT_TX, RX = QR_TT_RX };
static const uint32_t ISN = 4000000000u; /* wraps: relative numbers must not care */
static const uint32_t RISN = 7000;

/* Sender segment: data of 100 bytes at relative seq rel. */
static void data(qr_tcp_trace *t, int64_t at, uint32_t dir, uint32_t rel)
{
    qr_tcp_trace_segment(t, at, S, dir, ACK, ISN + 1 + rel, RISN + 1, 100, 100);
}

/* An ACK from the receiver acknowledging relative rel, sent at `at` and received 10 us later. */
static void ack(qr_tcp_trace *t, int64_t at, uint32_t rel)
{
    qr_tcp_trace_segment(t, at, R, TX, ACK, RISN + 1, ISN + 1 + rel, 500, 0);
    qr_tcp_trace_segment(t, at + 10000, S, RX, ACK, RISN + 1, ISN + 1 + rel, 500, 0);
}

Test(tcptrace, triggers_dupacks_delayed_acks_and_relative_numbers)
{
    qr_tcp_trace *t;
    cr_assert_eq(qr_tcp_trace_create(&t, 7, 3, 1000000), QR_OK);
    /* handshake, the SYN sent twice */
    qr_tcp_trace_segment(t, 0, S, TX, SYN, ISN, 0, 100, 0);
    qr_tcp_trace_var(t, 0, QR_TT_CWND, 1000);
    qr_tcp_trace_segment(t, 1000000000, S, TX, SYN, ISN, 0, 100, 0);
    qr_tcp_trace_segment(t, 1000010000, R, RX, SYN, ISN, 0, 100, 0);
    qr_tcp_trace_segment(t, 1000011000, R, TX, SYN | ACK, RISN, ISN + 1, 500, 0);
    qr_tcp_trace_segment(t, 1000021000, S, RX, SYN | ACK, RISN, ISN + 1, 500, 0);
    int64_t t0 = 1000022000;
    /* five segments; the 2nd is lost, the receiver acks 100 four times (one new, three dups) */
    for (uint32_t i = 0; i < 5; i++)
        data(t, t0 + i * 1000, TX, 100 * i);
    qr_tcp_trace_segment(t, t0 + 10000, R, RX, ACK, ISN + 1, RISN + 1, 100, 100);
    ack(t, t0 + 11000, 100); /* immediate */
    for (int k = 0; k < 3; k++) {
        qr_tcp_trace_segment(t, t0 + 12000 + k * 1000, R, RX, ACK, ISN + 201 + k * 100, RISN + 1,
                             100, 100);
        ack(t, t0 + 12500 + k * 1000, 100);
    }
    int64_t t1 = t0 + 30000;
    qr_tcp_trace_var(t, t1, QR_TT_CONG_STATE, QR_TT_RECOVERY);
    qr_tcp_trace_var(t, t1, QR_TT_SSTHRESH, 600);
    data(t, t1, TX, 100);        /* fast retransmit after 3 dupacks */
    data(t, t1 + 1000, TX, 200); /* another one in recovery */
    qr_tcp_trace_var(t, t1 + 50000, QR_TT_CONG_STATE, QR_TT_LOSS);
    data(t, t1 + 50000, TX, 100); /* the timer's */
    data(t, t1 + 51000, TX, 300); /* after it */
    data(t, t1 + 52000, TX, 500); /* new data: not a retransmission */
    qr_tcp_trace_segment(t, t1 + 60000, R, RX, ACK, ISN + 501, RISN + 1, 100, 100);
    ack(t, t1 + 60000 + 2000000, 600); /* held 2 ms: delayed */
    cr_assert_eq(qr_tcp_trace_finish(t, NULL, NULL), QR_OK);

    const qr_tt_summary *s = qr_tcp_trace_summary(t);
    cr_assert_eq(s->retransmissions, 5);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_RTO], 2); /* the SYN and the timer's */
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_FAST], 1);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_RECOVERY], 1);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_AFTER_RTO], 1);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_OTHER], 0);
    cr_assert_eq(s->late_fast_retransmits, 0);
    cr_assert_eq(s->delayed_acks, 1);
    cr_assert_eq(s->immediate_acks, 4);
    cr_assert_eq(s->max_held_ns, 2000000);
    cr_assert_eq(s->max_cwnd, 1000);
    cr_assert_eq(s->min_ssthresh, 600);
    cr_assert_eq(s->matches_recording, 0); /* nothing to compare with */

    size_t n;
    const qr_tt_segment *g = qr_tcp_trace_segments(t, &n);
    int seen_fast = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i].end == S && g[i].dir == RX && g[i].len == 0 && !(g[i].flags & SYN))
            cr_assert_leq(g[i].dupacks, 3);
        if (g[i].retx == QR_TT_TRIG_FAST) {
            seen_fast = 1;
            cr_assert_eq(g[i].seq, 101, "relative to the ISN (the SYN is 0), across the wrap");
            cr_assert_eq(g[i].dupacks, 3);
            cr_assert_eq(g[i].ack, 1);
        }
        if (g[i].retx == QR_TT_TRIG_AFTER_RTO)
            cr_assert_eq(g[i].seq, 301);
        if (g[i].end == S && g[i].dir == TX && g[i].seq == 501)
            cr_assert_eq(g[i].retx, QR_TT_NOT_RETX);
        if (g[i].end == R && g[i].dir == TX && g[i].delack == QR_TT_ACK_DELAYED)
            cr_assert_eq(g[i].ack, 601);
        if (g[i].flags == (SYN | ACK))
            cr_assert_eq(g[i].seq, 0);
    }
    cr_assert(seen_fast);
    size_t nv;
    qr_tcp_trace_vars(t, &nv);
    cr_assert_eq(nv, 4);
    qr_tcp_trace_destroy(t);
}

/* The butterfly's delayed-ACK stall: the timer's retransmission arrives in order and the receiver
 * holds its ACK; the backed-off timer sends it again and that duplicate forces the ACK out at
 * once. The ACK was held from the first copy's arrival, so it is a delayed ACK, held 32 ms. */
Test(tcptrace, an_ack_forced_out_by_a_duplicate_is_held_from_the_first_copy)
{
    qr_tcp_trace *t;
    cr_assert_eq(qr_tcp_trace_create(&t, 1, 3, 20000000), QR_OK);
    qr_tcp_trace_segment(t, 0, S, TX, SYN, ISN, 0, 100, 0);
    qr_tcp_trace_segment(t, 10000, R, RX, SYN, ISN, 0, 100, 0);
    qr_tcp_trace_segment(t, 10000, R, TX, SYN | ACK, RISN, ISN + 1, 500, 0);
    qr_tcp_trace_segment(t, 20000, S, RX, SYN | ACK, RISN, ISN + 1, 500, 0);
    data(t, 20000, TX, 0);
    data(t, 21000, TX, 100); /* lost */
    qr_tcp_trace_segment(t, 30000, R, RX, ACK, ISN + 1, RISN + 1, 100, 100);
    ack(t, 30000, 100); /* answered at once: immediate, held 0 */
    qr_tcp_trace_var(t, 16020000, QR_TT_CONG_STATE, QR_TT_LOSS);
    data(t, 16020000, TX, 100); /* the timer's */
    qr_tcp_trace_segment(t, 16030000, R, RX, ACK, ISN + 101, RISN + 1, 100, 100);
    data(t, 48020000, TX, 100); /* the backed-off timer's: after-rto */
    qr_tcp_trace_segment(t, 48030000, R, RX, ACK, ISN + 101, RISN + 1, 100, 100);
    ack(t, 48030000, 200); /* forced out by the duplicate */
    ack(t, 48040000, 200); /* nothing new received since: held 0 */
    cr_assert_eq(qr_tcp_trace_finish(t, NULL, NULL), QR_OK);
    const qr_tt_summary *s = qr_tcp_trace_summary(t);
    cr_assert_eq(s->delayed_acks, 1);
    cr_assert_eq(s->immediate_acks, 2);
    cr_assert_eq(s->max_held_ns, 32000000);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_RTO], 1);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_AFTER_RTO], 1);
    size_t n;
    const qr_tt_segment *g = qr_tcp_trace_segments(t, &n);
    int delayed = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i].end == R && g[i].dir == TX && g[i].delack == QR_TT_ACK_DELAYED) {
            delayed++;
            cr_assert_eq(g[i].time_ns, 48030000);
            cr_assert_eq(g[i].held_ns, 32000000);
            cr_assert_eq(g[i].ack, 201);
        }
    cr_assert_eq(delayed, 1);
    qr_tcp_trace_destroy(t);
}

Test(tcptrace, a_fast_retransmit_after_more_dupacks_than_the_threshold_is_late)
{
    qr_tcp_trace *t;
    cr_assert_eq(qr_tcp_trace_create(&t, 0, 3, 1000000), QR_OK);
    qr_tcp_trace_segment(t, 0, S, TX, SYN, ISN, 0, 100, 0);
    qr_tcp_trace_segment(t, 10, S, RX, SYN | ACK, RISN, ISN + 1, 500, 0);
    for (uint32_t i = 0; i < 8; i++)
        data(t, 100 + i, TX, 100 * i);
    for (int k = 0; k < 6; k++) /* one new ACK, five duplicates */
        ack(t, 1000 + k, 100);
    qr_tcp_trace_var(t, 20000, QR_TT_CONG_STATE, QR_TT_RECOVERY);
    data(t, 20000, TX, 100);
    cr_assert_eq(qr_tcp_trace_finish(t, NULL, NULL), QR_OK);
    const qr_tt_summary *s = qr_tcp_trace_summary(t);
    cr_assert_eq(s->by_trigger[QR_TT_TRIG_FAST], 1);
    cr_assert_eq(s->late_fast_retransmits, 1);
    qr_tcp_trace_destroy(t);
}

Test(tcptrace, a_trace_without_a_syn_is_an_error)
{
    qr_tcp_trace *t;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_tcp_trace_create(&t, 3, 3, 1000000), QR_OK);
    data(t, 0, TX, 0);
    cr_assert_eq(qr_tcp_trace_finish(t, NULL, err), QR_EVALUE);
    cr_assert(strstr(err, "flow 3") && strstr(err, "no SYN"), "%s", err);
    qr_tcp_trace_destroy(t);
}
