/* qreplay whatif on a k=4 recording: a row per grid point, the baseline point's replay is the
 * plain replay of the recorded configuration (its arrival log byte for byte), a buffer large
 * enough for every queue drops nothing, a smaller one drops more; --validate writes the truth next
 * to the prediction and its baseline truth equals the recorded runtime; bad --vary values are
 * usage errors that leave nothing behind (and an earlier result untouched). */
#include "harness.h"

#include "qreplay/error.h"
#include "qreplay/whatif.h"

TestSuite(whatif, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

static void runtime(const char *name)
{
    cr_assert_eq(qreplay("runtime scenarios/fattree-k4-websearch.ini --set traffic.stop=20ms "
                         "-o %s/%s/recording --quiet",
                         dir, name),
                 0, "%s", err);
}

static qr_whatif_result *load(const char *run, size_t *n)
{
    char path[256], e[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/%s/whatif/whatif.h5", dir, run);
    qr_whatif_result *rs;
    cr_assert_eq(qr_whatif_read(path, &rs, n, e), QR_OK, "%s", e);
    return rs;
}

static const qr_whatif_result *find(const qr_whatif_result *rs, size_t n, uint32_t point,
                                    qr_whatif_kind kind)
{
    for (size_t i = 0; i < n; i++)
        if (rs[i].row.point == point && rs[i].row.kind == kind)
            return &rs[i];
    cr_assert_fail("no run of point %u kind %d", point, kind);
    return NULL;
}

static int same_file(const char *a, const char *b)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

Test(whatif, a_row_per_point_the_baseline_is_the_plain_replay)
{
    runtime("rt");
    cr_assert_eq(qreplay("whatif %s/rt --vary buffer.size=1MB,1GB --cores 2", dir), 0, "%s", err);
    /* the printed table: a row per point, the recorded configuration marked, the caveat */
    int rows = 0;
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
        rows += l[0] >= '0' && l[0] <= '9';
    cr_assert_eq(rows, 3, "3 points (2MB added as the baseline):\n%s", out);
    cr_assert(exists("%s/rt/whatif/figures/whatif_vs_buffer_size.png", dir));
    cr_assert(exists("%s/rt/whatif/figures/whatif_occupancy_cdf.pdf", dir));
    size_t n;
    qr_whatif_result *rs = load("rt", &n);
    cr_assert_eq(n, 4, "three predictions and the recorded runtime");
    const qr_whatif_result *base = find(rs, n, 0, QR_WHATIF_PREDICTION),
                           *small = find(rs, n, 1, QR_WHATIF_PREDICTION),
                           *huge = find(rs, n, 2, QR_WHATIF_PREDICTION);
    find(rs, n, 0, QR_WHATIF_RECORDED);
    /* a buffer larger than all traffic: nothing dropped, every queue's length below it */
    cr_assert_eq(huge->row.drops, 0);
    cr_assert_eq(huge->row.flows_lossy, 0);
    cr_assert_eq(huge->row.new_drops, 0);
    cr_assert_eq(huge->row.arrivals, huge->row.admitted);
    /* half the buffer drops more, and the model holds on every replay */
    cr_assert_gt(small->row.drops, base->row.drops);
    cr_assert_gt(small->row.new_drops, 0);
    cr_assert_gt(small->row.sent_after_new_drop, 0);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(rs[i].row.model_mismatches, 0);
    qr_whatif_results_free(rs, n);

    /* the baseline point is the plain replay of the recording at the scenario's first th */
    cr_assert_eq(qreplay("replay %s/rt --mode plain --quiet", dir), 0, "%s", err);
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/rt/whatif/points/p000/replay/prediction/arrivals.qra", dir);
    snprintf(b, sizeof b, "%s/rt/replay/plain_th_2/arrivals.qra", dir);
    cr_assert(exists("%s", b));
    /* the same arrivals, byte for byte but the last 32: each log names the replay that wrote it */
    size_t na, nb;
    unsigned char *x = slurp_bin(a, &na), *y = slurp_bin(b, &nb);
    cr_assert(na == nb && na > 32 && memcmp(x, y, na - 32) == 0,
              "the baseline's arrivals differ from the plain replay's");
    free(x);
    free(y);
}

Test(whatif, validate_puts_the_truth_next_to_the_prediction)
{
    runtime("rt");
    cr_assert_eq(qreplay("whatif %s/rt --vary buffer.size=1MB --validate --no-figures", dir), 0,
                 "%s", err);
    cr_assert(strstr(out, "validated: ranking by drops"), "%s", out);
    cr_assert(strstr(out, "note: open-loop prediction"), "%s", out);
    size_t n;
    qr_whatif_result *rs = load("rt", &n);
    cr_assert_eq(n, 5, "two predictions, two truths, the recorded runtime");
    const qr_whatif_result *truth = find(rs, n, 0, QR_WHATIF_TRUTH),
                           *rec = find(rs, n, 0, QR_WHATIF_RECORDED);
    /* the baseline's closed loop is the recorded runtime again, to the arrival */
    qr_whatif_row t = truth->row, r = rec->row;
    t.kind = r.kind = 0;
    cr_assert_eq(memcmp(&t, &r, sizeof t), 0, "baseline truth %lu drops, recorded %lu",
                 (unsigned long)t.drops, (unsigned long)r.drops);
    cr_assert_eq(truth->n_queues, rec->n_queues);
    cr_assert_eq(truth->n_blackholes, rec->n_blackholes);
    /* the runtime's device queues match the FIFO model too */
    cr_assert_eq(truth->row.model_mismatches, 0);
    /* the smaller buffer's truth drops more than the recorded one, and TCP backs off: the open
     * loop predicts at least as many drops as the closed loop */
    const qr_whatif_result *t1 = find(rs, n, 1, QR_WHATIF_TRUTH),
                           *p1 = find(rs, n, 1, QR_WHATIF_PREDICTION);
    cr_assert_gt(t1->row.drops, rec->row.drops);
    cr_assert_geq(p1->row.drops, t1->row.drops);
    cr_assert_eq(t1->row.new_drops, 0, "a truth has no new drops to count");
    qr_whatif_results_free(rs, n);
    cr_assert(exists("%s/rt/whatif/points/p001/runtime/truth/arrivals.qra", dir));
    cr_assert(exists("%s/rt/whatif/points/p001/truth.h5", dir));

    /* --prune keeps the numbers, drops the logs */
    cr_assert_eq(
        qreplay("whatif %s/rt --vary buffer.size=1MB --validate --prune --no-figures -q", dir), 0,
        "%s", err);
    cr_assert(!exists("%s/rt/whatif/points/p001/runtime/truth/arrivals.qra", dir));
    cr_assert(!exists("%s/rt/whatif/points/p001/replay/prediction/arrivals.qra", dir));
    cr_assert(exists("%s/rt/whatif/whatif.h5", dir));
}

Test(whatif, bad_values_are_usage_errors_that_leave_nothing)
{
    runtime("rt");
    struct {
        const char *args, *says;
    } cases[] = {
        {"--vary traffic.load=10%", "traffic.load: not a what-if key"},
        {"--vary buffer.size=4", "value '4'"},
        {"--vary buffer.size=", "no values"},
        {"--vary buffer.size=1MB,,2MB", "an empty value"},
        {"", "no --vary given"},
        {"--vary buffer.size=1MB --mode fast", "--mode: unknown replay mode 'fast'"},
        {"--vary buffer.size=1MB --cores 0", "--cores: '0'"},
        {"--vary buffer.size=1MB --th -1us", "--th"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(qreplay("whatif %s/rt %s", dir, cases[i].args), 2, "%s: %s", cases[i].args,
                     err);
        cr_assert(strstr(err, cases[i].says), "%s: %s", cases[i].args, err);
        cr_assert(!exists("%s/rt/whatif", dir), "%s left output", cases[i].args);
    }
    /* a good result stays as it was through a bad run */
    cr_assert_eq(qreplay("whatif %s/rt --vary buffer.alpha=2 --no-figures -q", dir), 0, "%s", err);
    char before[256], keep[256];
    snprintf(before, sizeof before, "%s/rt/whatif/whatif.h5", dir);
    snprintf(keep, sizeof keep, "%s/kept.h5", dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp %s %s", before, keep);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("whatif %s/rt --vary buffer.size=4", dir), 2);
    cr_assert(same_file(before, keep));
    /* no recording; --validate without the runtime's truth */
    cr_assert_eq(qreplay("whatif %s/nothing --vary buffer.size=1MB", dir), 1);
    cr_assert(strstr(err, "nothing/recording/recording.h5: no recording"), "%s", err);
    snprintf(cmd, sizeof cmd, "rm -r %s/rt/recording/truth", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("whatif %s/rt --vary buffer.size=1MB --validate", dir), 1);
    cr_assert(strstr(err, "no truth arrival log: --validate needs a recording made by"), "%s", err);
    cr_assert(same_file(before, keep), "a failed job replaced the earlier result");
    /* without --validate, a recording without truth still predicts */
    cr_assert_eq(qreplay("whatif %s/rt --vary buffer.size=1MB --no-figures -q", dir), 0, "%s", err);
}
