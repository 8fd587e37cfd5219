/* Slow readers (reader.h): the [traffic] read_rate grammar and its errors, resolution against a
 * workload, and the pacing: over seeded random read times and amounts, what the application read
 * never exceeds its rate times the time plus one burst, keeps up with the rate when data is always
 * there, and comes in whole segments unless it is all that was left; the next read time is when
 * the credit for it has accrued, exactly. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/random.h"
#include "qreplay/reader.h"

Test(reader, rules_parse)
{
    qr_read_rule r[4];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_read_rules_parse(" flow 0 100Mbps, flow 3 1Gbps ", r, 4, &n, err), QR_OK, "%s",
                 err);
    cr_assert_eq(n, 2);
    cr_assert_eq(r[0].flow, 0);
    cr_assert_eq(r[0].rate_bps, 100000000u);
    cr_assert_eq(r[1].flow, 3);
    cr_assert_eq(r[1].rate_bps, 1000000000u);
    cr_assert_eq(qr_read_rules_parse("  ", r, 4, &n, err), QR_OK);
    cr_assert_eq(n, 0);
    const char *bad[] = {"flow 0",
                         "flow x 1Gbps",
                         "flw 0 1Gbps",
                         "flow 0 fast",
                         "flow 0 0bps",
                         "flow 0 1Gbps extra",
                         "flow 1 1Gbps, flow 1 2Gbps",
                         "flow 0 1Gbps,, flow 1 1Gbps",
                         "flow 0 1Gbps,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        cr_assert_eq(qr_read_rules_parse(bad[i], r, 4, &n, err), QR_EVALUE, "%s", bad[i]);
        cr_assert(strstr(err, "rule "), "%s: %s", bad[i], err);
    }
    cr_assert_eq(qr_read_rules_parse("flow 0 1Gbps, flow 1 1Gbps", r, 1, &n, err), QR_EVALUE);
}

Test(reader, rates_resolve_against_the_workload)
{
    uint64_t rates[3];
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_read_rates_resolve("flow 2 1Gbps", 3, rates, err), QR_OK);
    cr_assert_eq(rates[0], 0);
    cr_assert_eq(rates[2], 1000000000u);
    cr_assert_eq(qr_read_rates_resolve("flow 3 1Gbps", 3, rates, err), QR_EVALUE);
    cr_assert(strstr(err, "flow 3 does not exist") && strstr(err, "3 flows"), "%s", err);
}

/* splitmix64 over a seed from qr_seed_derive */
static uint64_t below(uint64_t *s, uint64_t n)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

Test(reader, pacing_keeps_to_the_rate_in_whole_segments)
{
    uint64_t rng = qr_seed_derive(42, "reader-test", 0);
    for (int round = 0; round < 50; round++) {
        uint64_t rate = 1000000 + below(&rng, 10000000000ull);
        const uint64_t mss = 1448;
        qr_reader r;
        int64_t t0 = (int64_t)below(&rng, 1000000), t = t0;
        qr_reader_init(&r, rate, t);
        uint64_t total = 0;
        for (int k = 0; k < 2000; k++) {
            t += (int64_t)below(&rng, 200000);
            uint64_t avail = mss * (1 + below(&rng, 40));
            uint64_t got = qr_reader_take(&r, t, avail, mss);
            cr_assert_leq(got, avail);
            cr_assert(got == avail || got % mss == 0, "read %lu of %lu", (unsigned long)got,
                      (unsigned long)avail);
            total += got;
            double allowed = (double)rate * (double)(t - t0) / 8e9 + QR_READ_BURST_BYTES;
            cr_assert_leq((double)total, allowed + 1e-6, "round %d step %d", round, k);
        }
        /* with data always there, it keeps up: behind by at most a burst and a segment */
        qr_reader_init(&r, rate, 0);
        total = 0;
        t = 0;
        for (int k = 0; k < 1000; k++) {
            int64_t next = qr_reader_next_ns(&r, t, mss);
            cr_assert_geq(next, t);
            if (next > t) { /* one ns before, it could not */
                qr_reader before = r;
                cr_assert_eq(qr_reader_take(&before, next - 1, 1u << 30, mss), 0);
            }
            uint64_t got = qr_reader_take(&r, next, 1u << 30, mss);
            cr_assert_geq(got, mss, "at the time next_ns gave, a segment can be read");
            total += got;
            t = next;
        }
        double due = (double)rate * (double)t / 8e9;
        cr_assert_geq((double)total + QR_READ_BURST_BYTES + mss, due);
    }
}

Test(reader, next_read_time_is_exactly_when_the_credit_accrues)
{
    qr_reader r;
    qr_reader_init(&r, 8000000000ull, 0); /* 1 byte per ns */
    cr_assert_eq(qr_reader_next_ns(&r, 0, 1448), 1448);
    cr_assert_eq(qr_reader_take(&r, 1447, 5000, 1448), 0);
    cr_assert_eq(qr_reader_take(&r, 1448, 5000, 1448), 1448);
    cr_assert_eq(qr_reader_next_ns(&r, 1448, 100000), 1448 + QR_READ_BURST_BYTES);
    cr_assert_eq(qr_reader_take(&r, 10000000, 1u << 30, 1), QR_READ_BURST_BYTES,
                 "credit is capped at one burst");
}
