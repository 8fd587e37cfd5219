/* qreplay diagnose on cases whose cause is known by construction (scenarios/diagnose/: planted
 * per-packet drops of [faults] drop, a lossless incast) and on the shared-buffer blackhole case:
 * each names its cause with the evidence that shows it; every flow's time breakdown sums to its
 * FCT; the planted drops are in truth.h5 with reason "fault"; bad options and bad fault rules are
 * clear errors that write nothing. */
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"
#include "qreplay/schema_diagnose.h"

#include "harness.h"

TestSuite(diagnose_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

static qr_row_diag_flow *flows_of(const char *path, size_t *n)
{
    return rows_of(path, "/flows", &qr_schema_diag_flow, n);
}

static qr_row_diag_event *events_of(const char *path, size_t *n)
{
    return rows_of(path, "/evidence", &qr_schema_diag_event, n);
}

static qr_row_drop *truth_drops(const char *rec, size_t *n)
{
    char p[512];
    snprintf(p, sizeof p, "%s/truth/truth.h5", rec);
    return rows_of(p, "/drops", &qr_schema_drop, n);
}

/* Every flow's parts sum to its FCT (completed flows). */
static void parts_sum_to_fct(const qr_row_diag_flow *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!f[i].completed)
            continue;
        int64_t sum = f[i].handshake_ns + f[i].rto_ns + f[i].recovery_ns + f[i].receiver_ns +
                      f[i].delack_ns + f[i].app_ns + f[i].queueing_ns + f[i].sending_ns;
        cr_assert_eq(sum, f[i].fct_ns, "flow %u: parts %ld, fct %ld", f[i].flow, (long)sum,
                     (long)f[i].fct_ns);
        cr_assert_geq(f[i].fct_ns, f[i].ideal_ns / 2, "flow %u", f[i].flow);
    }
}

/* Run a planted case and diagnose it; returns its /flows (row 0 is the planted flow). */
static qr_row_diag_flow *planted(const char *name, size_t *n)
{
    cr_assert_eq(qreplay("runtime scenarios/diagnose/%s.ini -o %s/%s --quiet", name, dir, name), 0,
                 "%s", err);
    cr_assert_eq(qreplay("diagnose %s/%s --no-figures", dir, name), 0, "%s", err);
    char p[256];
    snprintf(p, sizeof p, "%s/%s/diagnosis.h5", dir, name);
    qr_row_diag_flow *f = flows_of(p, n);
    parts_sum_to_fct(f, *n);
    return f;
}

Test(diagnose_cli, a_loss_with_two_packets_after_it_is_an_rto_for_want_of_dupacks)
{
    size_t n, ne, nd;
    qr_row_diag_flow *f = planted("rto-few-dupacks", &n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(f[0].cause, "rto-few-dupacks");
    cr_assert_eq(f[0].tail, 1);
    cr_assert_eq(f[0].rtos, 1);
    cr_assert_eq(f[0].lost_data, 1);
    cr_assert_eq(f[0].fast_retransmits, 0);
    /* the 10 ms minimum RTO is most of its time */
    cr_assert_geq(f[0].rto_ns, 9000000);
    cr_assert(strstr(out, "rto-few-dupacks"), "%s", out);
    /* evidence: the 5th data packet (relative sequence 4 * 1448 + 1) lost, then resent by the
     * timer */
    char p[256];
    snprintf(p, sizeof p, "%s/rto-few-dupacks/diagnosis.h5", dir);
    qr_row_diag_event *e = events_of(p, &ne);
    int lost = 0, rto = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!strcmp(e[i].kind, "lost")) {
            cr_assert_eq(e[i].tcp_seq, 4 * 1448 + 1);
            lost++;
        }
        if (!strcmp(e[i].kind, "rto")) {
            cr_assert_eq(e[i].tcp_seq, 4 * 1448 + 1);
            cr_assert_str_eq(e[i].detail, "rto-few-dupacks");
            rto++;
        }
    }
    cr_assert_eq(lost, 1);
    cr_assert_eq(rto, 1);
    /* the ground truth: one drop, by the fault, of data packet 5 (SYN and ACK come first) */
    snprintf(p, sizeof p, "%s/rto-few-dupacks", dir);
    qr_row_drop *d = truth_drops(p, &nd);
    cr_assert_eq(nd, 1);
    cr_assert_eq(d[0].reason, QR_DROP_FAULT);
    cr_assert_eq(d[0].packet, 6);
    qr_h5_rows_free(d);
    qr_h5_rows_free(e);
    qr_h5_rows_free(f);
}

/* The planted loss, and then the timer's retransmission of it lost as well: the second timeout
 * (backed off to 20 ms) is the lost retransmission's, and it cost the most. */
Test(diagnose_cli, a_retransmission_lost_again_is_named_by_the_second_timeout)
{
    cr_assert_eq(qreplay("runtime scenarios/diagnose/rto-few-dupacks.ini --set 'faults.drop=flow 0 "
                         "data 5, flow 0 data 8' -o %s/lr --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("diagnose %s/lr --no-figures", dir), 0, "%s", err);
    char p[256];
    snprintf(p, sizeof p, "%s/lr/diagnosis.h5", dir);
    size_t n, ne;
    qr_row_diag_flow *f = flows_of(p, &n);
    qr_row_diag_event *e = events_of(p, &ne);
    cr_assert_str_eq(f[0].cause, "lost-retransmit", "%s", out);
    cr_assert_eq(f[0].rtos, 2);
    cr_assert_eq(f[0].lost_data, 2);
    const char *subs[2] = {NULL, NULL};
    int64_t at[2] = {0, 0};
    int k = 0;
    for (size_t i = 0; i < ne; i++)
        if (!strcmp(e[i].kind, "rto") && k < 2) {
            cr_assert_eq(e[i].tcp_seq, 4 * 1448 + 1);
            at[k] = e[i].time_ns;
            subs[k++] = e[i].detail;
        }
    cr_assert_eq(k, 2);
    cr_assert_str_eq(subs[0], "rto-few-dupacks");
    cr_assert_str_eq(subs[1], "lost-retransmit");
    cr_assert_eq(at[1] - at[0], 20000000, "the timer backed off from 10 to 20 ms");
    qr_h5_rows_free(e);
    qr_h5_rows_free(f);
}

Test(diagnose_cli, planted_tail_ack_and_syn_drops_are_named)
{
    static const struct {
        const char *name, *cause;
    } cases[] = {
        {"tail-drop", "tail-drop"}, {"ack-drop", "ack-drop"}, {"syn-drop", "handshake-loss"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n;
        qr_row_diag_flow *f = planted(cases[c].name, &n);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(f[0].cause, cases[c].cause, "%s: %s", cases[c].name, out);
        if (!strcmp(cases[c].name, "syn-drop")) {
            cr_assert_eq(f[0].syn_sent, 2);
            cr_assert_geq(f[0].handshake_ns, 1000000000); /* the 1 s SYN timeout */
        }
        if (!strcmp(cases[c].name, "ack-drop")) {
            cr_assert_eq(f[0].lost_data, 0);
            cr_assert_eq(f[0].lost_acks, 6);
        }
        qr_h5_rows_free(f);
    }
}

/* The butterfly's story, planted: the tail of a short flow is lost; the timer (16 ms) resends
 * its first segment, which arrives in order, and the receiver holds the ACK for its 40 ms
 * delayed-ACK timeout; the backed-off timer (32 ms) fires first. The second wait is the delayed
 * ACK's: cause delack-stall, an ACK held the whole 32 ms, and the flow takes 16 + 32 ms. */
Test(diagnose_cli, a_held_ack_that_outlasts_the_backed_off_timer_is_a_delack_stall)
{
    size_t n, ne;
    qr_row_diag_flow *f = planted("delack-stall", &n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(f[0].cause, "delack-stall", "%s", out);
    cr_assert_eq(f[0].rtos, 2);
    cr_assert_eq(f[0].lost_data, 4);
    cr_assert_eq(f[0].delayed_acks, 1);
    cr_assert_geq(f[0].rto_ns, 16000000);
    cr_assert_lt(f[0].rto_ns, 17000000);
    cr_assert_geq(f[0].delack_ns, 31000000);
    cr_assert_leq(f[0].delack_ns, 32000000);
    cr_assert_geq(f[0].fct_ns, 48000000);
    cr_assert_lt(f[0].fct_ns, 49000000);
    char p[256];
    snprintf(p, sizeof p, "%s/delack-stall/diagnosis.h5", dir);
    qr_row_diag_event *e = events_of(p, &ne);
    int held = 0;
    const char *subs[2] = {NULL, NULL};
    int rto = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!strcmp(e[i].kind, "delayed-ack")) {
            cr_assert_geq(e[i].value, 31000000);
            cr_assert_eq(e[i].tcp_seq, 4 * 1448 + 1, "it acknowledges the resent 4th segment");
            held++;
        }
        if (!strcmp(e[i].kind, "rto") && rto < 2) {
            cr_assert_eq(e[i].tcp_seq, 3 * 1448 + 1);
            subs[rto++] = e[i].detail;
        }
    }
    cr_assert_eq(held, 1);
    cr_assert_eq(rto, 2);
    cr_assert_str_eq(subs[0], "tail-drop");
    cr_assert_str_eq(subs[1], "delack-stall");
    qr_h5_rows_free(e);
    qr_h5_rows_free(f);
}

/* Eight connections from one host share its link: the wire often has nothing of a connection in
 * flight while its segments wait behind the others' in the host's interface queue, and the
 * receivers' delayed-ACK timers fire while the sender's link is busy. Neither is the application
 * (which wrote everything at once) nor a delayed-ACK stall: it is sharing the link. */
Test(diagnose_cli, connections_sharing_their_senders_link_are_congestion_not_app_or_delack)
{
    size_t n;
    qr_row_diag_flow *f = planted("shared-uplink", &n);
    cr_assert_eq(n, 8);
    int64_t last = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(f[i].completed, 1);
        cr_assert_str_eq(f[i].cause, "congestion", "flow %zu: %s", i, out);
        cr_assert_eq(f[i].lost_data, 0);
        cr_assert_leq((f[i].app_ns + f[i].delack_ns) * 50, f[i].fct_ns,
                      "flow %zu: app %ld delack %ld", i, (long)f[i].app_ns, (long)f[i].delack_ns);
        cr_assert_geq(f[i].queueing_ns * 2, f[i].fct_ns, "flow %zu", i);
        if (f[i].start_ns + f[i].fct_ns > last)
            last = f[i].start_ns + f[i].fct_ns;
    }
    /* 16 MB through one 10 Gbps link: the last one finishes no sooner than the link allows */
    cr_assert_geq(last, (int64_t)(8 * 2000000 * 8 / 10));
    qr_h5_rows_free(f);
}

Test(diagnose_cli, a_lossless_incast_is_congestion)
{
    size_t n, nd;
    qr_row_diag_flow *f = planted("congestion", &n);
    cr_assert_eq(n, 8);
    char p[256];
    snprintf(p, sizeof p, "%s/congestion", dir);
    qr_row_drop *d = truth_drops(p, &nd);
    cr_assert_eq(nd, 0);
    int tail = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(f[i].lost_data, 0);
        cr_assert_eq(f[i].retransmissions, 0);
        if (f[i].tail) {
            tail++;
            cr_assert_str_eq(f[i].cause, "congestion");
            cr_assert_gt(f[i].queueing_ns, f[i].sending_ns);
            cr_assert_gt(f[i].queue_mean_ns, 0);
            cr_assert_gt(f[i].path_queue_ns, 0);
        }
    }
    cr_assert_geq(tail, 1);
    qr_h5_rows_free(d);
    qr_h5_rows_free(f);
}

/* A receiving application that reads 1 MB at 200 Mbps through a 44-segment buffer: no loss, the
 * window closes again and again, and the flow takes about as long as the reading (physics: it
 * cannot finish before the application has read it all). */
Test(diagnose_cli, a_slow_reader_is_a_receiver_limit)
{
    size_t n, nd;
    qr_row_diag_flow *f = planted("slow-reader", &n);
    cr_assert_eq(n, 1);
    char p[256];
    snprintf(p, sizeof p, "%s/slow-reader", dir);
    qr_row_drop *d = truth_drops(p, &nd);
    cr_assert_eq(nd, 0);
    cr_assert(f[0].completed);
    cr_assert_str_eq(f[0].cause, "receiver-limit");
    cr_assert_gt(f[0].zero_windows, 5, "%u", f[0].zero_windows);
    cr_assert_gt(f[0].receiver_ns, f[0].fct_ns / 2);
    /* 1 MB less the buffer's 63712 B must be read before the last byte can enter the buffer */
    int64_t read_ns = (int64_t)((1000000.0 - 63712.0) * 8 / 200e6 * 1e9);
    cr_assert_geq(f[0].fct_ns, read_ns, "FCT %ld < %ld", (long)f[0].fct_ns, (long)read_ns);
    cr_assert_lt(f[0].fct_ns, 2 * read_ns, "FCT %ld", (long)f[0].fct_ns);
    qr_h5_rows_free(d);
    qr_h5_rows_free(f);
}

Test(diagnose_cli, losses_of_a_flows_to_a_fall_in_the_blackhole_of_its_queue)
{
    cr_assert_eq(
        qreplay("runtime scenarios/blackhole.ini --set traffic.stop=15ms -o %s/bh --quiet", dir), 0,
        "%s", err);
    cr_assert_eq(qreplay("diagnose %s/bh --flows all", dir), 0, "%s", err);
    cr_assert(strstr(out, "an exact tagged replay run now"), "%s", out);
    char p[256];
    snprintf(p, sizeof p, "%s/bh/diagnosis.h5", dir);
    size_t n, ne;
    qr_row_diag_flow *f = flows_of(p, &n);
    qr_row_diag_event *e = events_of(p, &ne);
    parts_sum_to_fct(f, n);
    /* the runtime's applications write everything at once: no flow is application-limited,
     * though B's and C's five flows each wait their turn on their host's link (that is sharing) */
    for (size_t i = 0; i < n; i++)
        if (f[i].completed)
            cr_assert_leq(f[i].app_ns * 100, f[i].fct_ns, "flow %u: app %ld of %ld ns", f[i].flow,
                          (long)f[i].app_ns, (long)f[i].fct_ns);
    int named = 0;
    for (size_t i = 0; i < n; i++) {
        if (!f[i].blackhole_losses)
            continue;
        /* only A's queue (host 0's port) is blackholed: the long flows B, C -> A */
        cr_assert_eq(f[i].dst, 0, "flow %u", f[i].flow);
        named++;
    }
    cr_assert_geq(named, 1, "%s", out);
    int culprit_b = 0;
    for (size_t i = 0; i < ne; i++)
        if (!strcmp(e[i].kind, "blackhole")) {
            cr_assert_eq(e[i].port, 0);
            culprit_b += e[i].value == 1; /* B's port grew */
        }
    cr_assert_gt(culprit_b, 0);
    cr_assert(strstr(out, "blackhole of switch 0 port 0 (burst toward port 1)"), "%s", out);

    /* figure 9: the episodes and the series of A's queue and B's, arrival by arrival */
    size_t nb, np;
    qr_row_diag_blackhole *b = rows_of(p, "/blackholes", &qr_schema_diag_blackhole, &nb);
    qr_row_diag_bh_point *s = rows_of(p, "/blackhole_series", &qr_schema_diag_bh_point, &np);
    cr_assert_geq(nb, 1);
    uint64_t in_eps = 0, by_flows = 0;
    for (size_t i = 0; i < nb; i++)
        in_eps += b[i].selected_losses;
    for (size_t i = 0; i < n; i++)
        by_flows += f[i].blackhole_losses;
    cr_assert_eq(in_eps, by_flows, "every loss in a blackhole is in exactly one episode");
    cr_assert_gt(np, 100);
    uint64_t drops[2] = {0, 0};
    int64_t t_prev = INT64_MIN;
    for (size_t i = 0; i < np; i++) {
        cr_assert_eq(s[i].series, 0, "one queue drawn: A's");
        cr_assert_eq(s[i].sw, 0);
        cr_assert_eq(s[i].port, s[i].culprit ? 1u : 0u, "the victim is port 0, the culprit B's");
        cr_assert_geq(s[i].time_ns, t_prev, "in time order");
        t_prev = s[i].time_ns;
        drops[s[i].port] += s[i].dropped;
        cr_assert_eq(s[i].drops, drops[s[i].port], "cumulative drops of its own queue");
    }
    int drawn = 0;
    for (size_t i = 0; i < nb; i++) {
        if (b[i].series != 0)
            continue;
        drawn++;
        cr_assert_eq(b[i].culprit_port, 1);
        cr_assert_geq(b[i].start_ns, s[0].time_ns);
        cr_assert_leq(b[i].end_ns, s[np - 1].time_ns);
        /* the series holds the arrival the detector saw at the first drop, exactly */
        int first = 0;
        uint64_t culprit_max = 0;
        for (size_t k = 0; k < np; k++) {
            if (!s[k].culprit && s[k].dropped && s[k].time_ns == b[i].start_ns) {
                cr_assert_eq(s[k].queue_bytes, b[i].queue_bytes);
                cr_assert_eq(s[k].threshold, b[i].threshold);
                first = 1;
            }
            /* the detector knows a queue's length after each arrival joined it */
            uint64_t after = s[k].queue_bytes + (s[k].dropped ? 0 : s[k].bytes);
            if (s[k].culprit && s[k].time_ns >= b[i].peak_ns && s[k].time_ns <= b[i].end_ns &&
                after > culprit_max)
                culprit_max = after;
        }
        cr_assert(first, "episode %zu's first drop is in the series", i);
        cr_assert_geq(culprit_max, b[i].culprit_growth_bytes,
                      "B's queue grew as the detector said");
        cr_assert_lt(b[i].threshold, b[i].peak_threshold, "the burst shrank A's threshold");
    }
    cr_assert_geq(drawn, 1);
    cr_assert(exists("%s/bh/figures/diagnosis_blackhole.png", dir), "%s", out);
    qr_h5_rows_free(b);
    qr_h5_rows_free(s);
    /* nothing left behind but diagnosis.h5 and its figures (the exact replay's log is removed) */
    cr_assert(!exists("%s/bh/replay", dir));
    qr_h5_rows_free(e);
    qr_h5_rows_free(f);
}

Test(diagnose_cli, bad_options_and_bad_fault_rules_are_clear_errors)
{
    cr_assert_eq(qreplay("runtime scenarios/diagnose/tail-drop.ini -o %s/t --quiet", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("diagnose %s/t --tail 150%%", dir), 2);
    cr_assert(strstr(err, "--tail"), "%s", err);
    cr_assert_eq(qreplay("diagnose %s/t --flows 1,x", dir), 2);
    cr_assert(strstr(err, "--flows"), "%s", err);
    cr_assert_neq(qreplay("diagnose %s/t --flows 4 --no-replay", dir), 0);
    cr_assert(strstr(err, "flow 4 does not exist"), "%s", err);
    cr_assert_eq(qreplay("diagnose %s/t --replay tagged_th_5", dir), 1);
    cr_assert(strstr(err, "no arrival log"), "%s", err);
    cr_assert_eq(qreplay("diagnose %s/t --replay x --no-replay", dir), 2);
    cr_assert_eq(qreplay("diagnose %s/nothing", dir), 1);
    cr_assert(!exists("%s/t/diagnosis.h5", dir));
    /* from kernel records: where there are none, or no network to read them on */
    cr_assert_eq(qreplay("diagnose %s/t --from nope", dir), 2);
    cr_assert(strstr(err, "--from") && strstr(err, "capture nor record"), "%s", err);
    cr_assert_eq(qreplay("diagnose %s/t --scenario x.ini", dir), 2);
    cr_assert(strstr(err, "only with --from record"), "%s", err);
    cr_assert_eq(qreplay("diagnose %s/t --from record --no-figures", dir), 1);
    cr_assert(strstr(err, "/record") && strstr(err, "qreplay record writes"), "%s", err);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/nr/record && : > %s/nr/record/h0.qrk", dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("diagnose %s/nr --from record --no-figures", dir), 1);
    cr_assert(strstr(err, "recording.h5") && strstr(err, "--scenario"), "%s", err);
    cr_assert_eq(qreplay("diagnose %s/nr --from record --no-figures "
                         "--scenario scenarios/testbed-apps.ini",
                         dir),
                 1);
    cr_assert(strstr(err, "h0.qrk"), "an empty record named: %s", err);
    cr_assert(!exists("%s/nr/diagnosis-record.h5", dir));
    cr_assert(!exists("%s/t/diagnosis-record.h5", dir));
    /* fault rules: syntax at load, flows and switches when the workload is known */
    cr_assert_eq(
        qreplay("runtime scenarios/diagnose/tail-drop.ini --set 'faults.drop=flow 0 dta 1' "
                "-o %s/f1 --quiet",
                dir),
        1);
    cr_assert(strstr(err, "faults") && strstr(err, "syn, synack, data or ack"), "%s", err);
    cr_assert_neq(qreplay("runtime scenarios/diagnose/tail-drop.ini --set 'faults.drop=flow 1 syn' "
                          "-o %s/f2 --quiet",
                          dir),
                  0);
    cr_assert(strstr(err, "flow 1 does not exist"), "%s", err);
    cr_assert_neq(qreplay("runtime scenarios/diagnose/tail-drop.ini "
                          "--set 'faults.drop=flow 0 syn at 3' -o %s/f3 --quiet",
                          dir),
                  0);
    cr_assert(strstr(err, "switch 3 is not on flow 0's data path"), "%s", err);
    cr_assert(!exists("%s/f2/recording.h5", dir));
    cr_assert(!exists("%s/f3/recording.h5", dir));
}
