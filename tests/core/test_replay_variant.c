/* Replay variants (replay.h): the study's plan of variants for a scenario and their names. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/replay.h"
#include "qreplay/scenario.h"

Test(replay_variant, the_plan_is_every_threshold_then_plain_before_tagged)
{
    qr_scenario *s;
    char err[QR_ERRBUF_SIZE], name[64];
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "sampling.th=2us,5us,10us", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "replay.modes=tagged,plain", err), QR_OK, "%s", err);
    const qr_config *c = qr_scenario_config(s);
    qr_variant_settings v[8];
    cr_assert_eq(qr_variant_plan(c, v, 8), 6);
    static const char *const want[] = {"plain_th_2",  "tagged_th_2", "plain_th_5",
                                       "tagged_th_5", "plain_th_10", "tagged_th_10"};
    for (size_t i = 0; i < 6; i++) {
        cr_assert_str_eq(qr_variant_settings_name(&v[i], name, sizeof name), want[i]);
        cr_assert_null(v[i].engine_name, "only mode and threshold are planned");
    }
    /* room for fewer: only those written, the count is the plan's */
    memset(v, 0xff, sizeof v);
    cr_assert_eq(qr_variant_plan(c, v, 2), 6);
    cr_assert_str_eq(qr_variant_settings_name(&v[1], name, sizeof name), "tagged_th_2");
    cr_assert_eq(qr_variant_plan(c, NULL, 0), 6);
    qr_scenario_destroy(s);
    /* one mode */
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "sampling.th=0", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "replay.modes=tagged", err), QR_OK, "%s", err);
    cr_assert_eq(qr_variant_plan(qr_scenario_config(s), v, 8), 1);
    cr_assert_str_eq(qr_variant_settings_name(&v[0], name, sizeof name), "tagged_th_0");
    qr_scenario_destroy(s);
}
