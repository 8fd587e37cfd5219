// The core's link time (qr_link_tx_ns, what the native replay engine uses) equals ns-3's
// DataRate::CalculateBytesTxTime exactly: on seeded random sizes and rates, on every packet size
// at the rates of the shipped scenarios, and on the rates where the exact value is a half
// nanosecond (ns-3's 64.64 fixed point rounds those down, not up).
#include "ns3/data-rate.h"

// Criterion after ns-3: its TestSuite macro would clash with ns3::TestSuite.
#include <criterion/criterion.h>

extern "C"
{
#include "qreplay/replay.h"
}

using namespace ns3;

static void
Same(uint32_t bytes, uint64_t rate)
{
    int64_t ns3 = DataRate(rate).CalculateBytesTxTime(bytes).GetNanoSeconds();
    int64_t core = qr_link_tx_ns(bytes, rate);
    cr_assert_eq(core,
                 ns3,
                 "%u bytes at %lu bit/s: core %ld ns, ns-3 %ld ns",
                 bytes,
                 (unsigned long)rate,
                 (long)core,
                 (long)ns3);
}

Test(txtime, every_packet_size_at_the_scenarios_rates)
{
    for (uint64_t rate : {100000000ULL, 1000000000ULL, 10000000000ULL, 40000000000ULL})
        for (uint32_t b = 1; b <= 1502; b++)
            Same(b, rate);
}

Test(txtime, half_nanosecond_ties_round_as_ns3_does)
{
    // 16 Gbit/s: b bytes take b/2 ns exactly, a tie for every odd b
    for (uint32_t b = 1; b < 4000; b++)
        Same(b, 16000000000ULL);
    cr_assert_eq(qr_link_tx_ns(1, 16000000000ULL), 0);
    cr_assert_eq(qr_link_tx_ns(3, 16000000000ULL), 1);
}

Test(txtime, seeded_random_sizes_and_rates)
{
    uint64_t s = 42;
    for (int i = 0; i < 200000; i++)
    {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t bytes = 1 + static_cast<uint32_t>((s >> 33) % 65600);
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t rate = 1000 + (s >> 20) % 400000000000ULL;
        Same(bytes, rate);
    }
}
