/* Drop detection from IP ID gaps: hand examples and a seeded property test (random losses,
 * bursts, many wraps of the 16-bit ID): the detected set equals the true set. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "qreplay/error.h"
#include "qreplay/lossdet.h"
#include "qreplay/schema.h"

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
    cr_assert(seq == 131072 && first == 65537 && n == 65535,
              "65535 consecutive losses still unwrap");
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

Test(lossdet, tails_of_every_direction)
{
    qr_topology *t;
    qr_flow_table *ft;
    qr_flow flows[] = {{0, 0, 1, 1000, 0, 0}, {1, 1, 2, 1000, 0, 0}};
    cr_assert_eq(qr_topology_star(&t, 3), QR_OK);
    cr_assert_eq(qr_flow_table_for_topology(&ft, flows, 2, t, NULL), QR_OK);
    qr_lossdet *d;
    cr_assert_eq(qr_lossdet_create(&d, 4), QR_OK);
    uint64_t seq, first, n;
    for (uint16_t id = 0; id < 3; id++)
        qr_lossdet_observe(d, 0, id, &seq, &first, &n); /* dir 0 saw 0..2 */
    qr_lossdet_observe(d, 3, 0, &seq, &first, &n);      /* dir 3 saw 0 */
    uint64_t sent[4] = {5, 0, 0, 1};
    qr_row_detected *rows;
    size_t nr;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_lossdet_tails(d, ft, sent, 4, &rows, &nr, err), QR_OK);
    cr_assert_eq(nr, 2, "packets 3 and 4 of direction 0");
    for (size_t i = 0; i < nr; i++) {
        cr_assert(rows[i].dir == 0 && rows[i].seq == 3 + i && rows[i].tail == 1);
        cr_assert_eq(rows[i].receiver, 0, "a tail is named by its sender");
        cr_assert_eq(rows[i].packet, qr_packet_id(0, 3 + i));
        cr_assert_eq(rows[i].ip_id, 3 + i);
    }
    qr_h5_rows_free(rows);
    uint64_t none[4] = {3, 0, 0, 1}; /* everything sent was received: no tail */
    cr_assert_eq(qr_lossdet_tails(d, ft, none, 4, &rows, &nr, err), QR_OK);
    cr_assert_eq(nr, 0);
    qr_h5_rows_free(rows);
    qr_lossdet_destroy(d);
    qr_flow_table_destroy(ft);
    qr_topology_destroy(t);
}

Test(lossdet, max_transit_from_the_topology)
{
    qr_topology *ft4, *star;
    cr_assert_eq(qr_topology_fattree(&ft4, 4), QR_OK);
    cr_assert_eq(qr_topology_star(&star, 3), QR_OK);
    cr_assert_eq(qr_topology_max_hops(ft4), 5);
    cr_assert_eq(qr_topology_max_hops(star), 1);
    /* 10 Gbps, 1 us, 2 MB: 6 links of 1 us + 1.2 us, 5 buffers of 1.6 ms */
    cr_assert_eq(qr_max_transit_ns(ft4, 10000000000ULL, 1000, 2000000), 6 * 2200 + 5 * 1600000 + 1);
    cr_assert_eq(qr_max_transit_ns(star, 10000000000ULL, 1000, 2000000), 2 * 2200 + 1600000 + 1);
    cr_assert_eq(qr_tail_cutoff_ns(50000000, 8013201), 50000000 - 8013201);
    cr_assert_leq(qr_tail_cutoff_ns(1000, 8013201), 0);
    qr_topology_destroy(ft4);
    qr_topology_destroy(star);
}
