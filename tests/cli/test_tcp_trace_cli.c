/* qreplay isolate --trace: the TCP execution of a connection, traced through ns-3's trace sources
 * during an exact isolated replay, is the runtime's execution. Its retransmissions are exactly the
 * ones the runtime's hosts recorded (found here independently from the recording, in order, for
 * both ends), on a planted single loss and on the shared-buffer blackhole case with fast
 * retransmits and timeouts; the triggers agree with the physics (the planted loss is repaired by
 * the timer, a fast retransmit follows duplicate ACKs); bad --trace lists write nothing. */
#include "harness.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/h5.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/schema_tcptrace.h"

TestSuite(tcp_trace_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

static qr_row_tt_segment *segments_of(const char *h5, uint32_t flow, size_t *n)
{
    char e[QR_ERRBUF_SIZE], p[64];
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, h5, e), QR_OK, "%s", e);
    snprintf(p, sizeof p, "/tcp_trace/%u/segments", flow);
    qr_row_tt_segment *rows = NULL;
    cr_assert_eq(qr_h5_read_rows(r, p, &qr_schema_tt_segment, (void **)&rows, n, e), QR_OK, "%s",
                 e);
    qr_h5_close(r);
    return rows;
}

/* The recorded retransmissions of one end, by hand: a SYN, FIN or payload whose relative sequence
 * number is below the highest one that end had sent. */
static size_t recorded_retx(const qr_recording *rec, uint32_t flow, uint32_t end, uint64_t *seqs,
                            size_t max)
{
    const qr_flow *fl = qr_flow_table_flow(qr_recording_flows(rec), flow);
    size_t n, k = 0;
    const qr_rec_packet *pk = qr_recording_packets(rec, end ? fl->dst : fl->src, &n);
    uint32_t isn = 0;
    int have = 0;
    uint64_t high = 0;
    for (size_t i = 0; i < n; i++) {
        if (pk[i].dir != 2 * flow + end)
            continue;
        const qr_packet *p = &pk[i].pk;
        if (!have && (p->tcp_flags & QR_TCP_SYN)) {
            have = 1;
            isn = p->seq;
        }
        uint32_t len = p->ip_len - 40 - p->tcp_opt_len;
        uint32_t syn = (p->tcp_flags & QR_TCP_SYN) != 0, fin = (p->tcp_flags & QR_TCP_FIN) != 0;
        if (!have || (len == 0 && !syn && !fin))
            continue;
        uint64_t rel = (uint32_t)(p->seq - isn);
        if (rel < high) {
            cr_assert_lt(k, max);
            seqs[k++] = rel;
        }
        if (rel + len + syn + fin > high)
            high = rel + len + syn + fin;
    }
    return k;
}

/* Every traced flow's retransmissions (both ends, in order) are exactly the recorded ones.
 * Returns the number of retransmissions checked; counts fast retransmits and timer ones. */
static size_t check_flows(const char *run, uint32_t nflows, size_t *fast, size_t *rto)
{
    char e[QR_ERRBUF_SIZE], h5[256];
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, run, NULL, e), QR_OK, "%s", e);
    snprintf(h5, sizeof h5, "%s/isolated.h5", run);
    size_t total = 0;
    static uint64_t want[100000];
    for (uint32_t f = 0; f < nflows; f++) {
        size_t n;
        qr_row_tt_segment *s = segments_of(h5, f, &n);
        for (uint32_t end = 0; end < 2; end++) {
            size_t nw = recorded_retx(rec, f, end, want, 100000), k = 0;
            for (size_t i = 0; i < n; i++) {
                if (strcmp(s[i].dir, "tx") || strcmp(s[i].end, end ? "receiver" : "sender") ||
                    !s[i].retx[0])
                    continue;
                cr_assert_lt(k, nw, "flow %u end %u: more traced retransmissions than recorded", f,
                             end);
                cr_assert_eq(s[i].seq, want[k],
                             "flow %u end %u retransmission %zu: seq %lu, "
                             "recorded %lu",
                             f, end, k, (unsigned long)s[i].seq, (unsigned long)want[k]);
                k++;
                if (!strcmp(s[i].retx, "fast-retransmit")) {
                    (*fast)++;
                    cr_assert_geq(s[i].dupacks, 1, "flow %u: a fast retransmit with no dupACK", f);
                }
                *rto += !strcmp(s[i].retx, "rto");
            }
            cr_assert_eq(k, nw, "flow %u end %u: %zu traced, %zu recorded", f, end, k, nw);
            total += k;
        }
        free(s);
    }
    qr_recording_close(rec);
    return total;
}

Test(tcp_trace_cli, a_planted_loss_is_traced_as_the_timers_retransmission_of_the_lost_segment)
{
    cr_assert_eq(qreplay("runtime scenarios/diagnose/tail-drop.ini -o %s/r --quiet", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("isolate %s/r --sigma 0 --trace 0", dir), 0, "%s", err);
    cr_assert(strstr(out, "exactly the recording's 1"), "%s", out);
    size_t fast = 0, rto = 0;
    char run[128];
    snprintf(run, sizeof run, "%s/r", dir);
    cr_assert_eq(check_flows(run, 1, &fast, &rto), 1);
    cr_assert_eq(rto, 1);
    cr_assert_eq(fast, 0);
    size_t n;
    char h5[256];
    snprintf(h5, sizeof h5, "%s/isolated.h5", run);
    qr_row_tt_segment *s = segments_of(h5, 0, &n);
    uint64_t lost_seq = UINT64_MAX, retx_seq = 0;
    size_t lost = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(s[i].end, "sender") && !strcmp(s[i].dir, "tx") && s[i].lost) {
            lost++;
            lost_seq = s[i].seq;
        }
        if (s[i].retx[0])
            retx_seq = s[i].seq;
    }
    cr_assert_eq(lost, 1);
    cr_assert_eq(retx_seq, lost_seq, "the timer resent the lost segment");
    free(s);
    char fig[256];
    snprintf(fig, sizeof fig, "%s/figures/tcp_trace_0.png", run);
    cr_assert_eq(access(fig, F_OK), 0, "%s", out);
}

/* The planted delayed-ACK stall: the trace shows the timer's retransmission, the backed-off
 * timer's second copy 32 ms later, and between them the receiver holding its ACK: the one ACK it
 * sent after the second copy arrived is delayed, held from the first copy's arrival. */
Test(tcp_trace_cli, the_delayed_ack_stall_shows_a_held_ack_between_two_timer_retransmissions)
{
    cr_assert_eq(qreplay("runtime scenarios/diagnose/delack-stall.ini -o %s/r --quiet", dir), 0,
                 "%s", err);
    cr_assert_eq(qreplay("isolate %s/r --sigma 0 --trace 0 --no-figures", dir), 0, "%s", err);
    size_t fast = 0, rto = 0;
    char run[128], h5[256];
    snprintf(run, sizeof run, "%s/r", dir);
    cr_assert_eq(check_flows(run, 1, &fast, &rto), 5);
    cr_assert_eq(rto, 1);
    size_t n;
    snprintf(h5, sizeof h5, "%s/isolated.h5", run);
    qr_row_tt_segment *s = segments_of(h5, 0, &n);
    int64_t t_rto = -1, t_again = -1, t_delayed = -1, held = 0;
    size_t delayed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(s[i].retx, "rto"))
            t_rto = s[i].time_ns;
        if (!strcmp(s[i].retx, "after-rto") && t_again < 0) {
            t_again = s[i].time_ns;
            cr_assert_eq(s[i].seq, 3 * 1448 + 1, "the same segment again");
        }
        if (!strcmp(s[i].ack_kind, "delayed")) {
            delayed++;
            t_delayed = s[i].time_ns;
            held = s[i].held_ns;
        }
    }
    cr_assert_eq(delayed, 1);
    cr_assert_gt(t_rto, 0);
    cr_assert_eq(t_again - t_rto, 32000000, "the timer backed off from 16 to 32 ms");
    cr_assert_gt(t_delayed, t_again);
    cr_assert_lt(t_delayed - t_again, 100000, "the duplicate forced the held ACK out at once");
    cr_assert_gt(held, 31000000);
    cr_assert_leq(held, 32000000);
    free(s);
}

Test(tcp_trace_cli, the_blackhole_cases_retransmissions_are_exactly_the_recorded_ones)
{
    cr_assert_eq(qreplay("runtime scenarios/blackhole.ini -o %s/r --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("isolate %s/r --sigma 0 --trace all --no-figures", dir), 0, "%s%s", out,
                 err);
    char run[128];
    snprintf(run, sizeof run, "%s/r", dir);
    size_t fast = 0, rto = 0;
    size_t total = check_flows(run, 25, &fast, &rto);
    cr_assert_gt(total, 100, "%zu", total);
    cr_assert_gt(fast, 0);
    cr_assert_gt(rto, 0);
    cr_assert_null(strstr(out, "NOT"), "%s", out);
}

Test(tcp_trace_cli, bad_trace_lists_are_errors_that_write_nothing)
{
    cr_assert_eq(qreplay("runtime scenarios/diagnose/tail-drop.ini -o %s/r --quiet", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("isolate %s/r --trace 5", dir), 2);
    cr_assert(strstr(err, "--trace"), "%s", err);
    cr_assert_eq(qreplay("isolate %s/r --trace x", dir), 2);
    char p[256];
    snprintf(p, sizeof p, "%s/r/isolated.h5", dir);
    cr_assert_neq(access(p, F_OK), 0);
}
