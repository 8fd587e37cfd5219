/* Clock model: constant offsets uniform in [0, max], seeded, independent of the host count. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/clock.h"
#include "qreplay/error.h"

Test(clock, offsets_in_range_and_uniform)
{
    const size_t n = 100000;
    int64_t *o = malloc(n * sizeof *o);
    cr_assert_eq(qr_clock_offsets(1, 5000, n, o), QR_OK);
    long double sum = 0;
    size_t low = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_geq(o[i], 0);
        cr_assert_leq(o[i], 5000);
        sum += o[i];
        low += o[i] < 2500;
    }
    cr_assert_leq(fabs((double)(sum / n) - 2500.0), 25.0, "mean %g", (double)(sum / n));
    cr_assert_leq(fabs((double)low / n - 0.5), 0.01);
    free(o);
}

Test(clock, deterministic_and_independent_of_host_count)
{
    int64_t a[64], b[16], c[64];
    cr_assert_eq(qr_clock_offsets(9, 5000, 64, a), QR_OK);
    cr_assert_eq(qr_clock_offsets(9, 5000, 16, b), QR_OK);
    cr_assert_eq(memcmp(a, b, sizeof b), 0);
    cr_assert_eq(qr_clock_offsets(10, 5000, 64, c), QR_OK);
    cr_assert_neq(memcmp(a, c, sizeof a), 0);
}

Test(clock, zero_max_and_bad_arguments)
{
    int64_t o[8];
    cr_assert_eq(qr_clock_offsets(1, 0, 8, o), QR_OK);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(o[i], 0);
    cr_assert_eq(qr_clock_offsets(1, -1, 8, o), QR_EINVAL);
    cr_assert_eq(qr_clock_offsets(1, 5, 8, NULL), QR_EINVAL);
    /* a huge bound still yields values in range */
    cr_assert_eq(qr_clock_offsets(1, 100000000000LL, 8, o), QR_OK);
    for (int i = 0; i < 8; i++)
        cr_assert(o[i] >= 0 && o[i] <= 100000000000LL);
}

Test(clock, processing_delay_statistics_and_streams)
{
    /* sd = 0 is exact; sd > 0 has the right mean and sd; truncated at 0; streams differ by replay
     * and host, and repeat for the same (seed, host, replay) */
    qr_proc_delay *a, *b, *c, *z;
    cr_assert_eq(qr_proc_delay_create(&z, 1, 0, 0, 10000, 0), QR_OK);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(qr_proc_delay_next(z), 10000);
    qr_proc_delay_destroy(z);
    cr_assert_eq(qr_proc_delay_create(&a, 1, 3, 7, 10000, 100), QR_OK);
    cr_assert_eq(qr_proc_delay_create(&b, 1, 3, 7, 10000, 100), QR_OK);
    cr_assert_eq(qr_proc_delay_create(&c, 1, 3, 8, 10000, 100), QR_OK);
    double sum = 0, sq = 0;
    int differ = 0;
    enum { N = 200000 };
    for (int i = 0; i < N; i++) {
        int64_t x = qr_proc_delay_next(a), y = qr_proc_delay_next(b), w = qr_proc_delay_next(c);
        cr_assert_eq(x, y, "same stream, same delays");
        differ += x != w;
        sum += (double)x;
        sq += (double)x * (double)x;
    }
    double mean = sum / N, sd = sqrt(sq / N - mean * mean);
    cr_assert(fabs(mean - 10000) < 1.0, "mean %f", mean);
    cr_assert(fabs(sd - 100) < 1.0, "sd %f", sd);
    cr_assert_gt(differ, N / 2, "another replay's stream");
    qr_proc_delay_destroy(a);
    qr_proc_delay_destroy(b);
    qr_proc_delay_destroy(c);
    cr_assert_eq(qr_proc_delay_create(&a, 1, 0, 0, 10, 1000), QR_OK);
    int zeros = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t x = qr_proc_delay_next(a);
        cr_assert_geq(x, 0);
        zeros += x == 0;
    }
    cr_assert_gt(zeros, 4000, "about half the draws of N(10, 1000) are truncated to 0");
    qr_proc_delay_destroy(a);
    cr_assert_eq(qr_proc_delay_create(&a, 1, 0, 0, 10, -1), QR_EINVAL);
}
