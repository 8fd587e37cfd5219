/* Every analysis on a run folder whose truth/ was removed (what a deployment has: observations
 * only). Each either works, the same as with its truth where it does not grade, or stops with a
 * clear error naming what it needs; none writes a partial result. The truth's own consumers
 * (metrics grades a replay, isolate and light replay a simulated run on true time) say they need
 * the truth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"
#include "qreplay/schema_hoptrace.h"
#include "qreplay/schema_pingmesh.h"

#include "harness.h"

TestSuite(no_truth, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 900);

Test(no_truth, every_analysis_works_or_names_what_it_needs)
{
    /* a fat tree with a planted gray cable, probing agents and path discovery */
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set pingmesh.interval=200us "
                         "--set traceroute.per_connection=2 -o %s/full/recording --quiet",
                         dir),
                 0, "%s", err);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r %s/full %s/obs && rm -rf %s/obs/recording/truth", dir, dir,
             dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert(!exists("%s/obs/recording/truth", dir));

    /* the analyses of observations: they work */
    static const char *const works[] = {
        "replay %s/obs --mode tagged -q",
        "replay %s/obs --mode plain --clock reconcile -q",
        "diagnose %s/obs -q --no-figures",
        "blame %s/obs -q --no-figures",
        "trace %s/obs --match dropped -q --no-figures",
        "pingmesh %s/obs -q --no-figures",
        "clocks %s/obs -q",
        "blackholes %s/obs --replay tagged_th_2 -q",
        "blackholes %s/obs -q",
    };
    for (size_t i = 0; i < sizeof works / sizeof works[0]; i++) {
        int rc = qreplay(works[i], dir);
        cr_assert_eq(rc, 0, "'%s' without truth: exit %d: %s", works[i], rc, err);
        cr_assert(!exists("%s/obs/recording/truth", dir), "'%s' made a truth", works[i]);
    }
    /* an analysis that does not grade gives the same answer with or without the truth */
    cr_assert_eq(qreplay("pingmesh %s/full -q --no-figures", dir), 0, "%s", err);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/full/pingmesh.h5", dir);
    snprintf(b, sizeof b, "%s/obs/pingmesh.h5", dir);
    size_t na, nb;
    qr_row_pm_place *pa = rows_of(a, "/places", &qr_schema_pm_place, &na);
    qr_row_pm_place *pb = rows_of(b, "/places", &qr_schema_pm_place, &nb);
    cr_assert_eq(na, nb);
    for (size_t i = 0; i < na; i++)
        cr_assert(!strcmp(pa[i].name, pb[i].name) && pa[i].flagged == pb[i].flagged &&
                      pa[i].probes == pb[i].probes && pa[i].lost == pb[i].lost && !pb[i].faulty,
                  "place %zu", i);
    qr_h5_rows_free(pa);
    qr_h5_rows_free(pb);
    /* Everflow's trace reads the switches' mirrored copies, not the truth: the same drops */
    cr_assert_eq(qreplay("trace %s/full --match dropped -q --no-figures", dir), 0, "%s", err);
    snprintf(a, sizeof a, "%s/full/trace.h5", dir);
    snprintf(b, sizeof b, "%s/obs/trace.h5", dir);
    qr_row_hop_drop *da = rows_of(a, "/drops", &qr_schema_hop_drop, &na);
    qr_row_hop_drop *db = rows_of(b, "/drops", &qr_schema_hop_drop, &nb);
    cr_assert_eq(na, nb);
    cr_assert_gt(na, 10u, "the gray cable dropped packets");
    for (size_t i = 0; i < na; i++)
        cr_assert(da[i].packet == db[i].packet && da[i].sw == db[i].sw &&
                      da[i].port == db[i].port && da[i].reason == db[i].reason,
                  "drop %zu", i);
    qr_h5_rows_free(da);
    qr_h5_rows_free(db);

    /* the truth's consumers: a clear error naming what is missing, nothing written */
    static const struct {
        const char *cmd, *says;
    } needs[] = {
        {"metrics %s/obs -q", "no truth: metrics grades"},
        {"isolate %s/obs --flows 0 -q", "truth"},
        {"light %s/obs -q", "truth"},
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
        int rc = qreplay(needs[i].cmd, dir);
        cr_assert(rc == 1 && strstr(err, needs[i].says), "'%s': exit %d, said: %s", needs[i].cmd,
                  rc, err);
        no_partials(b);
    }
    cr_assert(!exists("%s/obs/results.h5", dir));
    cr_assert(!exists("%s/obs/recording/light.qrl", dir));

    /* without the switches' mirror (as an import): blackholes names it; trace replays instead */
    snprintf(cmd, sizeof cmd, "rm -r %s/obs/recording/mirror", dir);
    cr_assert_eq(system(cmd), 0);
    int rc = qreplay("blackholes %s/obs -q", dir);
    cr_assert(rc == 1 && strstr(err, "mirror/copies.qra"), "exit %d, said: %s", rc, err);
    rc = qreplay("trace %s/obs --match dropped --no-figures", dir);
    cr_assert(rc == 0 && strstr(out, "a replay's"), "exit %d: %s%s", rc, out, err);
}
