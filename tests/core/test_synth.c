/* Synthetic traces: monotone times, determinism, bursts at several rates. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/synth.h"

Test(synth, monotone_deterministic_and_bursty)
{
    const size_t n = 100000;
    int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    qr_synth_cfg cfg = qr_synth_default(3);
    cr_assert_eq(qr_synth_flow(&cfg, 4, n, a), QR_OK);
    cr_assert_eq(qr_synth_flow(&cfg, 4, n, b), QR_OK);
    cr_assert_eq(memcmp(a, b, n * sizeof *a), 0);
    size_t by_rate[4] = {0}, idle = 0;
    for (size_t i = 1; i < n; i++) {
        int64_t g = a[i] - a[i - 1];
        cr_assert_geq(g, 0);
        if (g < 1300)
            by_rate[0]++;
        else if (g > 2200 && g < 2600)
            by_rate[1]++;
        else if (g > 4600 && g < 5000)
            by_rate[2]++;
        else if (g > 11800 && g < 12200)
            by_rate[3]++;
        else
            idle++;
    }
    for (int k = 0; k < 4; k++)
        cr_assert_gt(by_rate[k], n / 10, "rate %d used", k);
    cr_assert_gt(idle, n / 200, "idle gaps between bursts");
    cr_assert_eq(qr_synth_flow(&cfg, 5, n, b), QR_OK);
    cr_assert_neq(memcmp(a, b, n * sizeof *a), 0, "flows differ");
    cfg.jitter_ns = 600;
    cr_assert_eq(qr_synth_flow(&cfg, 4, n, a), QR_EINVAL);
    free(a);
    free(b);
}
