/* The sweep workflow end to end (Snakemake): the tiny k=4 sweep expands into one run per load,
 * aggregates into summary.csv / summary.h5 with a row per run and variant and the figures, and a
 * second invocation finds nothing to redo (resume). Runs the normal build only (not under ASan). */
#include "harness.h"

TestSuite(workflow, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 900);

Test(workflow, tiny_sweep_runs_aggregates_and_resumes)
{
    char cmd[2048], log[256], text[1 << 16];
    snprintf(log, sizeof log, "%s/snake.log", dir);
    snprintf(cmd, sizeof cmd,
             "cd %s && snakemake -s analysis/Snakefile --cores 2 --config "
             "scenario=scenarios/fattree-k4-sweep-ci.ini "
             "out=%s/sw qreplay=%s > %s 2>&1",
             QR_SOURCE_DIR, dir, QR_PROGRAM, log);
    int st = system(cmd);
    slurp(log, text, sizeof text);
    cr_assert_eq(st, 0, "snakemake failed:\n%s", text);
    for (int i = 0; i < 2; i++)
        for (int seed = 1; seed <= 3; seed++)
            cr_assert(exists("%s/sw/load_%s_seed_%d/results.h5", dir, i ? "30" : "10", seed));
    char csv[4096];
    snprintf(cmd, sizeof cmd, "%s/sw/summary.csv", dir);
    slurp(cmd, csv, sizeof csv);
    int lines = 0;
    for (char *p = csv; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 1 + 2 * 3 * 2, "header + 2 loads x 3 seeds x 2 variants:\n%s", csv);
    cr_assert(strstr(csv, "load_pct,seed,variant") && strstr(csv, "tagged_th_5") &&
                  strstr(csv, "30.0,1,plain_th_5") && strstr(csv, "30.0,3,plain_th_5"),
              "%s", csv);
    /* the points over seeds: checked against the summary by the docs' own reader */
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/tests/tools/check_points.py %s/sw/summary.csv %s/sw/points.csv "
             "> %s 2>&1",
             QR_SOURCE_DIR, dir, dir, log);
    st = system(cmd);
    slurp(log, text, sizeof text);
    cr_assert_eq(st, 0, "points.csv does not follow from summary.csv:\n%s", text);
    cr_assert(exists("%s/sw/summary.h5", dir));
    const char *figs[] = {"sweep_qdiff", "sweep_drop_error", "sweep_error_kinds"};
    for (int i = 0; i < 3; i++)
        cr_assert(exists("%s/sw/figures/%s.png", dir, figs[i]) &&
                  exists("%s/sw/figures/%s.pdf", dir, figs[i]));
    /* resume: nothing left to do */
    snprintf(cmd, sizeof cmd,
             "cd %s && snakemake -s analysis/Snakefile --cores 2 --config "
             "scenario=scenarios/fattree-k4-sweep-ci.ini "
             "out=%s/sw qreplay=%s > %s 2>&1",
             QR_SOURCE_DIR, dir, QR_PROGRAM, log);
    cr_assert_eq(system(cmd), 0);
    slurp(log, text, sizeof text);
    cr_assert(strstr(text, "Nothing to be done"), "a finished sweep ran again:\n%s", text);
}
