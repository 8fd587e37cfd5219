/* Drop detection from IP ID gaps: hand examples and a seeded property test (random losses,
 * bursts, many wraps of the 16-bit ID): the detected set equals the true set. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "qreplay/error.h"
#include "qreplay/lossdet.h"

Test(lossdet, hand_example)
{
    qr_lossdet *d;
    cr_assert_eq(qr_lossdet_create(&d, 2), QR_OK);
    uint64_t seq, first, n;
    cr_assert_eq(qr_lossdet_observe(d, 0, 0, &seq, &first, &n), QR_OK);
    cr_assert(seq == 0 && n == 0);
    cr_assert_eq(qr_lossdet_observe(d, 0, 3, &seq, &first, &n), QR_OK);
    cr_assert(seq == 3 && first == 1 && n == 2, "IDs 1 and 2 lost");
    cr_assert_eq(qr_lossdet_observe(d, 1, 1, &seq, &first, &n), QR_OK);
    cr_assert(seq == 1 && first == 0 && n == 1, "the other direction's first packet was lost");
    cr_assert_eq(qr_lossdet_received(d, 0), 2);
    cr_assert_eq(qr_lossdet_tail(d, 0, 6, &first, &n), QR_OK);
    cr_assert(first == 4 && n == 2, "the sender sent 6: packets 4 and 5 lost at the tail");
    cr_assert_eq(qr_lossdet_tail(d, 0, 3, &first, &n), QR_ESTATE, "saw more than were sent");
    cr_assert_eq(qr_lossdet_observe(d, 2, 0, &seq, &first, &n), QR_EINVAL);
    cr_assert_eq(qr_lossdet_tail(d, 2, 0, &first, &n), QR_EINVAL);
    qr_lossdet_destroy(d);
}

Test(lossdet, wraps_the_16_bit_id)
{
    qr_lossdet *d;
    cr_assert_eq(qr_lossdet_create(&d, 1), QR_OK);
    uint64_t seq, first, n;
    for (uint64_t i = 0; i < 65534; i++)
        qr_lossdet_observe(d, 0, (uint16_t)i, &seq, &first, &n);
    /* 65534 and 65535 lost, then ID 0 again is packet 65536; then lose 65537..65537+65534 */
    cr_assert_eq(qr_lossdet_observe(d, 0, 0, &seq, &first, &n), QR_OK);
    cr_assert(seq == 65536 && first == 65534 && n == 2);
    cr_assert_eq(qr_lossdet_observe(d, 0, (uint16_t)(65536 + 65536), &seq, &first, &n), QR_OK);
    cr_assert(seq == 131072 && first == 65537 && n == 65535, "65535 consecutive losses still unwrap");
    qr_lossdet_destroy(d);
}

Test(lossdet, property_detected_equals_true_losses)
{
    enum { DIRS = 8, PACKETS = 400000 };
    for (unsigned long seed = 1; seed <= 4; seed++) {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, seed);
        qr_lossdet *d;
        cr_assert_eq(qr_lossdet_create(&d, DIRS), QR_OK);
        uint64_t sent[DIRS] = {0}, lost[DIRS] = {0}, found[DIRS] = {0};
        uint64_t lost_sum[DIRS] = {0}, found_sum[DIRS] = {0};
        for (int i = 0; i < PACKETS; i++) {
            uint32_t dir = (uint32_t)gsl_rng_uniform_int(r, DIRS);
            uint64_t s = sent[dir]++;
            /* losses: independent 2%, plus rare bursts of up to 65535 consecutive packets (the
             * detector's limit), which wrap the 16-bit ID */
            int drop = gsl_rng_uniform(r) < 0.02;
            if (!drop && gsl_rng_uniform(r) < 1e-4) {
                uint64_t burst = 1 + gsl_rng_uniform_int(r, 65535);
                lost[dir] += burst;
                lost_sum[dir] += burst * s + burst * (burst - 1) / 2;
                sent[dir] = s + burst;
                s = sent[dir]++;
            }
            if (drop) {
                lost[dir]++;
                lost_sum[dir] += s;
                continue;
            }
            uint64_t seq, first, n;
            cr_assert_eq(qr_lossdet_observe(d, dir, (uint16_t)s, &seq, &first, &n), QR_OK);
            cr_assert_eq(seq, s, "seed %lu: packet %lu of direction %u unwrapped to %lu", seed,
                         (unsigned long)s, dir, (unsigned long)seq);
            found[dir] += n;
            found_sum[dir] += n * first + n * (n - 1) / 2;
        }
        for (uint32_t dir = 0; dir < DIRS; dir++) {
            uint64_t first, n;
            cr_assert_eq(qr_lossdet_tail(d, dir, sent[dir], &first, &n), QR_OK);
            found[dir] += n;
            found_sum[dir] += n * first + n * (n - 1) / 2;
            cr_assert_eq(found[dir], lost[dir], "seed %lu dir %u: %lu detected, %lu lost", seed,
                         dir, (unsigned long)found[dir], (unsigned long)lost[dir]);
            cr_assert_eq(found_sum[dir], lost_sum[dir], "the same sequence numbers");
            cr_assert_eq(qr_lossdet_received(d, dir) + lost[dir], sent[dir]);
        }
        qr_lossdet_destroy(d);
        gsl_rng_free(r);
    }
}
