/* Shared buffer with dynamic thresholds and the replay drop decision (docs/model.md). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/units.h"

static qr_buffer_state st(uint64_t B, double alpha, uint64_t Q, uint64_t q)
{
    return (qr_buffer_state){.size_bytes = B, .alpha = alpha, .total_bytes = Q, .queue_bytes = q};
}

Test(buffer, threshold_is_alpha_times_free_space)
{
    cr_assert_eq(qr_dt_threshold(2000000, 1.0, 0), 2000000);
    cr_assert_eq(qr_dt_threshold(2000000, 1.0, 500000), 1500000);
    cr_assert_eq(qr_dt_threshold(393000, 4.0, 100000), 1172000);
    cr_assert_eq(qr_dt_threshold(1000, 0.5, 1), 499);     /* 499.5 rounds down */
    cr_assert_eq(qr_dt_threshold(1000, 1.0, 1500), -500); /* overflowing replay */
}

Test(buffer, plain_rule_queue_threshold)
{
    /* B = 10000, alpha = 1, Q = 4000 -> T = 6000. q = 4000: 4000 + 1500 <= 6000 admit. */
    qr_buffer_state s = st(10000, 1.0, 4000, 4000);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_PLAIN, 0, 0), QR_ADMIT);
    /* q + s = 6000 exactly at T: admitted (<=) */
    s = st(10000, 1.0, 4000, 4000);
    cr_assert_eq(qr_drop_decide(&s, 2000, QR_MODE_PLAIN, 0, 0), QR_ADMIT);
    cr_assert_eq(qr_drop_decide(&s, 2001, QR_MODE_PLAIN, 0, 0), QR_DROP_THRESHOLD);
}

Test(buffer, plain_rule_buffer_full)
{
    /* alpha large: the threshold is not binding, the buffer is. B = 10000, Q = 9000. */
    qr_buffer_state s = st(10000, 100.0, 9000, 0);
    cr_assert_eq(qr_drop_decide(&s, 1000, QR_MODE_PLAIN, 0, 0), QR_ADMIT);
    cr_assert_eq(qr_drop_decide(&s, 1001, QR_MODE_PLAIN, 0, 0), QR_DROP_BUFFER_FULL);
}

Test(buffer, plain_ignores_tags)
{
    qr_buffer_state s = st(10000, 1.0, 0, 0);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_PLAIN, 1, 7500), QR_ADMIT);
}

Test(buffer, tagged_rule)
{
    const uint64_t margin = 5 * QR_MTU_BYTES;
    /* untagged packets are always admitted, even over a full buffer */
    qr_buffer_state s = st(10000, 1.0, 20000, 20000);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 0, margin), QR_ADMIT);
    /* B = 100000, Q = 50000 -> T = 50000; T - margin = 42500 */
    s = st(100000, 1.0, 50000, 42500);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 1, margin), QR_ADMIT); /* q = T - m */
    s = st(100000, 1.0, 50000, 42501);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 1, margin), QR_DROP_TAGGED);
    /* a tagged packet far below the threshold is admitted: that is a false accept */
    s = st(100000, 1.0, 1000, 0);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 1, margin), QR_ADMIT);
    /* margin 0: dropped only beyond the threshold itself */
    s = st(100000, 1.0, 50000, 50000);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 1, 0), QR_ADMIT);
}

Test(buffer, admit_and_release_account_bytes)
{
    qr_buffer *b;
    qr_buffer_cfg cfg = {.size_bytes = 10000, .alpha = 1.0, .n_queues = 3};
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_OK);
    qr_decision d;
    cr_assert_eq(qr_buffer_admit(b, 0, 1500, QR_MODE_PLAIN, 0, 0, &d), QR_OK);
    cr_assert_eq(d, QR_ADMIT);
    cr_assert_eq(qr_buffer_queue(b, 0), 1500);
    cr_assert_eq(qr_buffer_total(b), 1500);
    cr_assert_eq(qr_buffer_threshold(b), 8500);
    cr_assert_eq(qr_buffer_admit(b, 3, 1500, QR_MODE_PLAIN, 0, 0, &d), QR_EINVAL);
    cr_assert_eq(qr_buffer_release(b, 1, 1), QR_ESTATE);
    cr_assert_eq(qr_buffer_release(b, 0, 1500), QR_OK);
    cr_assert_eq(qr_buffer_total(b), 0);
    /* a dropped packet changes nothing */
    for (int i = 0; i < 3; i++)
        qr_buffer_admit(b, 0, 1500, QR_MODE_PLAIN, 0, 0, &d);
    uint64_t before = qr_buffer_total(b);
    cr_assert_eq(qr_buffer_admit(b, 0, 5000, QR_MODE_PLAIN, 0, 0, &d), QR_OK);
    cr_assert_neq(d, QR_ADMIT);
    cr_assert_eq(qr_buffer_total(b), before);
    qr_buffer_destroy(b);
    qr_buffer_cfg bad = {.size_bytes = 0, .alpha = 1.0, .n_queues = 1};
    cr_assert_eq(qr_buffer_create(&b, &bad), QR_EINVAL);
    bad = (qr_buffer_cfg){.size_bytes = 10, .alpha = 0, .n_queues = 1};
    cr_assert_eq(qr_buffer_create(&b, &bad), QR_EINVAL);
    qr_buffer_destroy(NULL);
}

/* Property: in runtime (plain) mode, over a long random arrival/departure sequence, no queue ever
 * holds more than its threshold at admission time allows, the total never exceeds B, and bytes are
 * conserved (admitted = released + held). */
Test(buffer, property_runtime_never_exceeds_threshold_or_buffer, .timeout = 120)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    const double alphas[] = {0.25, 1.0, 4.0};
    for (int a = 0; a < 3; a++) {
        gsl_rng_set(r, 42 + a);
        enum { NQ = 8, CAP = 4096 };
        qr_buffer *b;
        qr_buffer_cfg cfg = {.size_bytes = 200000, .alpha = alphas[a], .n_queues = NQ};
        cr_assert_eq(qr_buffer_create(&b, &cfg), QR_OK);
        /* FIFO of packet sizes per queue */
        static uint64_t fifo[NQ][CAP];
        size_t head[NQ] = {0}, len[NQ] = {0};
        uint64_t admitted = 0, released = 0, drops = 0;
        for (long step = 0; step < 1000000; step++) {
            uint32_t q = (uint32_t)gsl_rng_uniform_int(r, NQ);
            /* arrivals outpace departures on hot queues, so thresholds bind */
            if (gsl_rng_uniform(r) < (q < 3 ? 0.7 : 0.45)) {
                uint64_t size = 64 + gsl_rng_uniform_int(r, 1437);
                int64_t t = qr_buffer_threshold(b);
                uint64_t qb = qr_buffer_queue(b, q), tot = qr_buffer_total(b);
                qr_decision d;
                cr_assert_eq(qr_buffer_admit(b, q, size, QR_MODE_PLAIN, 0, 0, &d), QR_OK);
                if (d == QR_ADMIT) {
                    cr_assert_leq((int64_t)(qb + size), t, "queue over its threshold");
                    cr_assert_leq(tot + size, cfg.size_bytes, "buffer over B");
                    cr_assert_lt(len[q], CAP);
                    fifo[q][(head[q] + len[q]++) % CAP] = size;
                    admitted += size;
                } else {
                    drops++;
                    cr_assert((int64_t)(qb + size) > t || tot + size > cfg.size_bytes,
                              "dropped a packet that fits");
                }
            } else if (len[q] > 0) {
                uint64_t size = fifo[q][head[q]];
                head[q] = (head[q] + 1) % CAP;
                len[q]--;
                cr_assert_eq(qr_buffer_release(b, q, size), QR_OK);
                released += size;
            }
            cr_assert_leq(qr_buffer_total(b), cfg.size_bytes);
            uint64_t sum = 0;
            for (int i = 0; i < NQ; i++)
                sum += qr_buffer_queue(b, i);
            cr_assert_eq(sum, qr_buffer_total(b));
        }
        cr_assert_eq(admitted, released + qr_buffer_total(b), "bytes conserved");
        cr_assert_gt(drops, 1000, "alpha %g: the thresholds were exercised", alphas[a]);
        cr_log_info("alpha %g: %llu drops, %llu bytes admitted", alphas[a],
                    (unsigned long long)drops, (unsigned long long)admitted);
        qr_buffer_destroy(b);
    }
    gsl_rng_free(r);
}

Test(buffer, decision_names)
{
    cr_assert_str_eq(qr_decision_name(QR_ADMIT), "admit");
    cr_assert_str_eq(qr_decision_name(QR_DROP_THRESHOLD), "threshold");
    cr_assert_str_eq(qr_decision_name(QR_DROP_BUFFER_FULL), "buffer-full");
    cr_assert_str_eq(qr_decision_name(QR_DROP_TAGGED), "tagged");
}

/* The static policy: every port holds at most its own L bytes, whatever the others
 * hold; the tagged rule uses L as the threshold. */
Test(buffer, static_rule_is_a_per_port_limit)
{
    qr_buffer_state s = {.size_bytes = 30000,
                         .alpha = 1.0,
                         .total_bytes = 25000,
                         .queue_bytes = 8000,
                         .policy = QR_BUFFER_STATIC,
                         .port_bytes = 10000};
    cr_assert_eq(qr_buffer_state_threshold(&s), 10000);
    cr_assert_eq(qr_drop_decide(&s, 2000, QR_MODE_PLAIN, 0, 0), QR_ADMIT); /* exactly L */
    cr_assert_eq(qr_drop_decide(&s, 2001, QR_MODE_PLAIN, 0, 0), QR_DROP_THRESHOLD);
    /* the others' bytes do not matter: a total beyond B still admits into a short queue */
    s.total_bytes = 90000;
    s.queue_bytes = 0;
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_PLAIN, 0, 0), QR_ADMIT);
    /* tagged: dropped iff q > L - margin */
    s.queue_bytes = 2500;
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 1, 7500), QR_ADMIT);
    s.queue_bytes = 2501;
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 1, 7500), QR_DROP_TAGGED);
    cr_assert_eq(qr_drop_decide(&s, 1500, QR_MODE_TAGGED, 0, 7500), QR_ADMIT);
    cr_assert_str_eq(qr_buffer_policy_name(QR_BUFFER_STATIC), "static");
    cr_assert_str_eq(qr_buffer_policy_name(QR_BUFFER_DYNAMIC), "dynamic");
}

Test(buffer, static_limit_defaults_to_an_equal_share_and_is_validated)
{
    qr_buffer *b;
    qr_buffer_cfg cfg = {
        .size_bytes = 30001, .alpha = 1.0, .n_queues = 3, .policy = QR_BUFFER_STATIC};
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_OK);
    cr_assert_eq(qr_buffer_threshold(b), 10000, "B / ports, rounded down");
    qr_buffer_destroy(b);
    cfg.port_bytes = 4000;
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_OK);
    cr_assert_eq(qr_buffer_threshold(b), 4000);
    qr_buffer_destroy(b);
    cfg = (qr_buffer_cfg){.size_bytes = 2, .alpha = 1.0, .n_queues = 3, .policy = QR_BUFFER_STATIC};
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_EINVAL, "a limit of 0 bytes");
    cfg.policy = (qr_buffer_policy)7;
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_EINVAL, "an unknown policy");
}

/* Property: under random arrivals and departures a static buffer never lets a queue exceed L,
 * never drops a packet that fits its port, and conserves bytes; hot ports fill without touching
 * the cold ones' room. */
Test(buffer, property_static_ports_are_independent)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 314);
    enum { NQ = 6, CAP = 4096 };
    qr_buffer *b;
    qr_buffer_cfg cfg = {.size_bytes = 120000,
                         .alpha = 1.0,
                         .n_queues = NQ,
                         .policy = QR_BUFFER_STATIC,
                         .port_bytes = 20000};
    cr_assert_eq(qr_buffer_create(&b, &cfg), QR_OK);
    static uint64_t fifo[NQ][CAP];
    size_t head[NQ] = {0}, len[NQ] = {0};
    uint64_t admitted = 0, released = 0, drops = 0, cold_drops = 0;
    for (long step = 0; step < 400000; step++) {
        uint32_t q = (uint32_t)gsl_rng_uniform_int(r, NQ);
        if (gsl_rng_uniform(r) < (q < 2 ? 0.8 : 0.3)) {
            uint64_t size = 64 + gsl_rng_uniform_int(r, 1437), qb = qr_buffer_queue(b, q);
            qr_decision d;
            cr_assert_eq(qr_buffer_admit(b, q, size, QR_MODE_PLAIN, 0, 0, &d), QR_OK);
            if (d == QR_ADMIT) {
                cr_assert_leq(qb + size, cfg.port_bytes);
                cr_assert_lt(len[q], CAP);
                fifo[q][(head[q] + len[q]++) % CAP] = size;
                admitted += size;
            } else {
                cr_assert_eq(d, QR_DROP_THRESHOLD);
                cr_assert_gt(qb + size, cfg.port_bytes, "dropped a packet that fits its port");
                drops++;
                cold_drops += q >= 2;
            }
        } else if (len[q] > 0) {
            uint64_t size = fifo[q][head[q]];
            head[q] = (head[q] + 1) % CAP;
            len[q]--;
            cr_assert_eq(qr_buffer_release(b, q, size), QR_OK);
            released += size;
        }
    }
    cr_assert_eq(admitted, released + qr_buffer_total(b), "bytes conserved");
    cr_assert_gt(drops, 1000, "the hot ports hit their limit");
    cr_assert_eq(cold_drops, 0, "the cold ports never fill");
    qr_buffer_destroy(b);
    gsl_rng_free(r);
}
