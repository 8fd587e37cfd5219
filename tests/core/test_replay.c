/* The native replay engine (replay.h) on a hand-made recording (hand_run.h: host 0 sends three
 * 1500-byte packets at 0, 1 and 2 us through a star's switch to host 1). Sampled at th = 0 every
 * packet is injected at its recorded time; the NIC sends its FIFO back to back (a packet of s
 * bytes takes t(s + 2) on a link), so the second packet waits for the first; each reaches the
 * switch one link delay after its first bit left, finds the port's queue empty (the previous
 * packet's last bit left as it arrived) and is admitted; all three reach host 1. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hand_run.h"
#include "qreplay/queuelog.h"
#include "qreplay/replay.h"

static struct hand_run h;

static void setup(void)
{
    hand_run_make(&h);
}

static void teardown(void)
{
    hand_run_free(&h);
}

TestSuite(replay, .init = setup, .fini = teardown);

static void progress(void *ctx, int64_t sim_ns, double wall_s, uint64_t events)
{
    (void)ctx;
    (void)sim_ns;
    (void)wall_s;
    (void)events;
}

Test(replay, native_times_and_fates_by_hand)
{
    char err[QR_ERRBUF_SIZE], log[128];
    const qr_config *c = qr_scenario_config(h.scen);
    qr_sampling_stats st;
    qr_plan *plan;
    qr_plan_cursor *cur;
    cr_assert_eq(qr_plan_sample(&plan, h.rec, NULL, c->sampling.method, 0, &st, NULL, NULL, err),
                 QR_OK, "%s", err);
    cr_assert_eq(st.max_error_ns, 0, "th = 0 keeps every recorded time");
    cr_assert_eq(qr_plan_cursor_create(&cur, h.rec, plan), QR_OK);
    snprintf(log, sizeof log, "%s/replay.qra", h.dir);
    qr_replay_opts o = {QR_MODE_TAGGED, c->replay.margin_bytes, log, progress, NULL, NULL};
    qr_replay_out out = {0};
    cr_assert_eq(qr_replay_native(NULL, h.scen, h.rec, qr_plan_cursor_source(cur), &o, &out, err),
                 QR_OK, "%s", err);
    qr_plan_cursor_free(cur);
    qr_plan_free(plan);
    cr_assert_eq(out.sent[0], 3);
    cr_assert_eq(out.sent_bytes[0], 4500);
    cr_assert_eq(out.delivered, 3, "the replay admits what the runtime dropped: no queue here");
    cr_assert_eq(out.n_drops, 0);
    cr_assert_eq(out.packet_hops, 3);
    int64_t tx = qr_link_tx_ns(1502, c->links.rate_bps), d = c->links.delay_ns;
    int64_t first_bit[3] = {0, tx, 2000 > 2 * tx ? 2000 : 2 * tx};
    int64_t late =
        first_bit[1] - 1000 > first_bit[2] - 2000 ? first_bit[1] - 1000 : first_bit[2] - 2000;
    cr_assert_gt(tx, 1000, "the hand run needs the link slower than a packet per us");
    cr_assert_eq(out.max_late_ns, late, "later packets waited for the earlier ones' last bits");
    qr_arrival_reader *r;
    qr_arrival a;
    cr_assert_eq(qr_arrival_reader_open(&r, log, err), QR_OK, "%s", err);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(qr_arrival_read(r, &a, err), QR_OK, "%s", err);
        cr_assert_eq(a.packet, qr_packet_id(0, i));
        cr_assert_eq(a.sw, 0);
        cr_assert_eq(a.port, h.port_to_h1);
        cr_assert_eq(a.time_ns, first_bit[i] + tx + d, "packet %u", i);
        cr_assert_eq(a.decision, QR_ADMIT);
        cr_assert_eq(a.queue_bytes, 0);
    }
    cr_assert_eq(qr_arrival_read(r, &a, err), QR_END);
    qr_arrival_reader_close(r);
    qr_replay_out_free(&out);
}

Test(replay, another_network_is_refused_before_running)
{
    char err[QR_ERRBUF_SIZE] = "";
    qr_scenario *other;
    cr_assert_eq(qr_scenario_create(&other), QR_OK);
    cr_assert_eq(qr_scenario_set(other, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(other, "topology.hosts=5", err), QR_OK, "%s", err);
    const qr_config *c = qr_scenario_config(h.scen);
    qr_plan *plan;
    qr_plan_cursor *cur;
    cr_assert_eq(qr_plan_sample(&plan, h.rec, NULL, c->sampling.method, 0, NULL, NULL, NULL, err),
                 QR_OK);
    cr_assert_eq(qr_plan_cursor_create(&cur, h.rec, plan), QR_OK);
    qr_replay_opts o = {QR_MODE_TAGGED, 0, NULL, progress, NULL, NULL};
    qr_replay_out out = {0};
    cr_assert_eq(qr_replay_native(NULL, other, h.rec, qr_plan_cursor_source(cur), &o, &out, err),
                 QR_EVALUE);
    qr_plan_cursor_free(cur);
    qr_plan_free(plan);
    cr_assert_neq(err[0], '\0');
    qr_replay_out_free(&out);
    qr_scenario_destroy(other);
}
