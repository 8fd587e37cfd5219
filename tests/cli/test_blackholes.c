/* qreplay blackholes on the shipped shared-buffer case (scenarios/blackhole.ini, docs/model.md
 * section 4): the burst toward B blackholes A's queue, named with B's port as the culprit; the
 * same flows on a static buffer (no sharing) give none; a replay that repeats the runtime finds
 * the same episodes; bad options, a missing replay and a truncated log are clear errors. */
#include "harness.h"

TestSuite(blackholes, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 300);

/* The episode rows of the last output ("switch port ..." lines after the header). */
static int rows(char lines[][256], int max)
{
    int n = 0, header = 0;
    for (char *l = strtok(out, "\n"); l && n < max; l = strtok(NULL, "\n")) {
        if (!strncmp(l, "switch", 6)) {
            header = 1;
            continue;
        }
        if (header)
            snprintf(lines[n++], 256, "%s", l);
    }
    return n;
}

Test(blackholes, the_burst_toward_b_blackholes_a_and_static_buffers_do_not)
{
    cr_assert_eq(qreplay("runtime scenarios/blackhole.ini --set traffic.stop=12ms "
                         "--set clock.max_offset=0 -o %s/sh/recording --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("blackholes %s/sh", dir), 0, "%s", err);
    char r[16][256];
    int n = rows(r, 16);
    cr_assert_geq(n, 1, "no episode in the shared-buffer case:\n%s", out);
    for (int i = 0; i < n; i++) {
        unsigned sw, port, drops, culprit;
        double start, end;
        unsigned long peak, queue;
        long thr_peak, thr_drop;
        cr_assert_eq(sscanf(r[i], "%u %u %lf %lf %u %lu %lu %ld %ld %u", &sw, &port, &start, &end,
                            &drops, &peak, &queue, &thr_peak, &thr_drop, &culprit),
                     10, "row: %s", r[i]);
        /* A's queue (host 0's port), after the burst starts at 5 ms, falling and squeezed, B's
         * port (host 1's) to blame */
        cr_assert_eq(port, 0, "row: %s", r[i]);
        cr_assert_geq(start, 5.0, "row: %s", r[i]);
        cr_assert_leq(start, end);
        cr_assert_gt(drops, 0);
        cr_assert_lt(queue, peak);
        cr_assert_lt(thr_drop, thr_peak);
        cr_assert_eq(culprit, 1, "row: %s", r[i]);
    }
    /* a tagged replay at th = 0 with exact clocks repeats the runtime: the same episodes */
    cr_assert_eq(qreplay("replay %s/sh --th 0 --mode tagged --quiet", dir), 0, "%s", err);
    char runtime_out[sizeof out];
    cr_assert_eq(qreplay("blackholes %s/sh", dir), 0);
    memcpy(runtime_out, out, sizeof out);
    cr_assert_eq(qreplay("blackholes %s/sh --replay tagged_th_0", dir), 0, "%s", err);
    cr_assert_str_eq(strchr(out, '\n'), strchr(runtime_out, '\n'));

    /* no sharing: each port its own quarter of the buffer */
    cr_assert_eq(qreplay("runtime scenarios/blackhole.ini --set traffic.stop=12ms "
                         "--set buffer.policy=static -o %s/st/recording --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("blackholes %s/st", dir), 0, "%s", err);
    cr_assert(strstr(out, "episodes           0\n"), "%s", out);
    cr_assert_eq(qreplay("blackholes %s/st/recording/truth/arrivals.qra --quiet", dir), 0);
    cr_assert_str_eq(out, "");
}

Test(blackholes, errors_name_what_is_wrong)
{
    cr_assert_eq(qreplay("runtime scenarios/blackhole.ini --set traffic.stop=6ms -o %s/r/recording "
                         "--quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("blackholes %s/r --replay tagged_th_5", dir), 1);
    cr_assert(strstr(err, "replay/tagged_th_5/arrivals.qra: no arrival log"), "%s", err);
    cr_assert_eq(qreplay("blackholes %s/r --replay ../x", dir), 2);
    cr_assert_eq(qreplay("blackholes %s/r --gap 3", dir), 2);
    cr_assert(strstr(err, "--gap"), "%s", err);
    cr_assert_eq(qreplay("blackholes %s/r --window -1us", dir), 2);
    cr_assert_eq(qreplay("blackholes %s/r --min-shrink lots", dir), 2);
    cr_assert_eq(qreplay("blackholes %s/none", dir), 1);
    cr_assert_eq(qreplay("blackholes"), 2);
    /* a truncated log (its trailer gone): named as cut, nothing printed on stdout */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "head -c 100 %s/r/recording/truth/arrivals.qra > %s/t.qra", dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("blackholes %s/t.qra", dir), 1);
    cr_assert(strstr(err, "t.qra: the log ends without its trailer"), "%s", err);
    cr_assert_str_eq(out, "");
}
