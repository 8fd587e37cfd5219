/* Seeds (random.h): every stream derives from the master seed, its name and its index; streams are
 * distinct and never 0. */
#include <criterion/criterion.h>

#include "qreplay/random.h"

Test(random, derived_seeds_are_deterministic_distinct_and_nonzero)
{
    cr_assert_eq(qr_seed_derive(1, "workload.background", 0),
                 qr_seed_derive(1, "workload.background", 0));
    static const char *const names[] = {"workload.background", "workload.incast", "clock", "proc"};
    uint64_t seen[4 * 3 * 64];
    size_t n = 0;
    for (uint64_t master = 0; master < 3; master++)
        for (size_t k = 0; k < 4; k++)
            for (uint64_t i = 0; i < 64; i++) {
                uint64_t s = qr_seed_derive(master, names[k], i);
                cr_assert_neq(s, 0);
                for (size_t j = 0; j < n; j++)
                    cr_assert_neq(s, seen[j], "two streams share a seed");
                seen[n++] = s;
            }
}

Test(random, seeds_mix_well)
{
    /* neighbouring indices differ in about half their bits */
    unsigned total = 0;
    for (uint64_t i = 0; i < 1000; i++)
        total += (unsigned)__builtin_popcountll(qr_seed_derive(7, "x", i) ^
                                                qr_seed_derive(7, "x", i + 1));
    cr_assert(total > 1000 * 28 && total < 1000 * 36, "mean flipped bits %.1f", total / 1000.0);
}
