/* qreplay clocks: the hosts' clock offsets estimated from a recording's own send and receive
 * times, and, on a simulated recording, their error against the true offsets. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/clock_score.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"

static const cli_opt opts[] = {
    {"reference", 0, CLI_VALUE, "HOST", "the host whose clock the estimates are relative to (0)"},
    {"out", 'o', CLI_VALUE, "FILE",
     "write the estimates to this HDF5 file (/clocks; attributes: the summary)"},
    {"hosts", 0, CLI_FLAG, NULL, "print every host (default: only when there are at most 64)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "clocks",
    "DIR",
    "Estimate every host's clock offset from the recording in DIR/recording (or DIR itself\n"
    "when it holds recording.h5), the way qreplay import and 'qreplay replay --clock\n"
    "reconcile' do: per pair of hosts, the smallest one-way delay beyond the unloaded path\n"
    "latency in each direction (recorded send time on the sender's clock, /received on the\n"
    "receiver's); offset(b) - offset(a) = (min_ab - min_ba) / 2; all pairs combined by least\n"
    "squares, one reference host at 0. A host no pair reaches has no estimate.\n\n"
    "A pair's difference is off by at most half its round-trip excess (min_ab + min_ba), so\n"
    "each host's true offset lies within bound_ns of the chain of pairs to the reference\n"
    "with the smallest sum of those bounds; the estimate is kept inside, and a reconciled\n"
    "replay corrects a host only where that is certain to help (|path| > 3 bound_ns; the\n"
    "correction_ns column).\n\n"
    "On a simulated recording (qreplay runtime: the true offsets are in /hosts) it also\n"
    "prints each estimate's error against the truth: estimate - (true offset - the\n"
    "reference's true offset). An imported recording was reconciled already; its estimates\n"
    "show what is left.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one run folder DIR",
    "examples:\n"
    "  qreplay clocks results/fattree-k4-websearch\n"
    "  qreplay clocks runs/k8 -o runs/k8/clocks.h5\n"
    "  qreplay replay results/fattree-k4-websearch --th 5us --clock reconcile\n"};

int qr_cmd_clocks(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *dir = a.pos[0], *out = cli_value(&a, "out"), *ref_s = cli_value(&a, "reference");
    int quiet = cli_count(&a, "quiet") > 0, all = cli_count(&a, "hosts") > 0;
    char rec_dir[4096], probe[4200], err[QR_ERRBUF_SIZE];
    cli_recording_dir(dir, rec_dir, sizeof rec_dir);
    uint32_t ref = 0;
    if (ref_s) {
        char *end;
        unsigned long v = strtoul(ref_s, &end, 10);
        if (!*ref_s || *end || v > UINT32_MAX) {
            rc = cli_usage_error("clocks", "--reference: '%s' is not a host number", ref_s);
            cli_args_free(&a);
            return rc;
        }
        ref = (uint32_t)v;
    }
    if (out) {
        cli_paths ins = {0}, outs = {0};
        cli_paths_add_recording(&ins, rec_dir);
        cli_paths_add(&outs, "%s", out);
        if (cli_check_outputs("clocks", &outs, &ins)) {
            cli_args_free(&a);
            return 1;
        }
    }
    qr_recording *r = NULL;
    if (qr_recording_open(&r, rec_dir, NULL, err)) {
        cli_args_free(&a);
        return cli_fail("clocks", "%s", err);
    }
    uint32_t n = qr_recording_hosts(r);
    qr_clock_estimate *est = calloc(n, sizeof *est);
    qr_row_clock_estimate *rows = calloc(n, sizeof *rows);
    size_t pairs = 0;
    int64_t *true_off = NULL; /* the truth's offsets (a runtime's recording) */
    if (!est || !rows) {
        rc = cli_fail("clocks", "out of memory");
        goto done;
    }
    if (qr_recording_estimate_clocks(r, ref, est, &pairs, err)) {
        rc = cli_fail("clocks", "%s: %s", rec_dir, err);
        goto done;
    }
    /* the runtime keeps its ground truth next to the recording; an import has none. The true
     * offsets come from it, for the scoring columns only */
    snprintf(probe, sizeof probe, "%s/truth/truth.h5", rec_dir);
    int truth = cli_exists(probe);
    true_off = truth ? calloc(n ? n : 1, sizeof *true_off) : NULL;
    if (truth && (!true_off || qr_truth_clock_offsets(rec_dir, n, true_off, err))) {
        rc = true_off ? cli_fail("clocks", "%s", err) : cli_fail("clocks", "out of memory");
        goto done;
    }
    qr_clock_summary s;
    qr_clock_score(est, n, pairs, truth ? true_off : NULL, rows, &s);
    if (out && qr_clock_score_write(out, rec_dir, qr_recording_id(r), rows, n, &s, err)) {
        rc = cli_fail("clocks", "%s", err);
        goto done;
    }
    rc = 0;
    if (quiet)
        goto done;
    if (all || n <= 64) {
        printf("%6s %9s %6s %14s %12s %10s %13s", "host", "reference", "pairs", "estimate_ns",
               "residual_ns", "bound_ns", "correction_ns");
        if (truth)
            printf(" %14s %10s", "true_ns", "error_ns");
        printf("\n");
        for (uint32_t h = 0; h < n; h++) {
            printf("%6u %9u %6u %14" PRId64 " %12" PRId64 " %10" PRId64 " %13" PRId64, h,
                   rows[h].reference, rows[h].pairs, rows[h].estimate_ns, rows[h].residual_ns,
                   rows[h].bound_ns, rows[h].correction_ns);
            if (truth && rows[h].pairs)
                printf(" %14" PRId64 " %10" PRId64, rows[h].true_ns, rows[h].error_ns);
            else if (truth)
                printf(" %14" PRId64 " %10s", rows[h].true_ns, "-");
            printf("\n");
        }
    }
    printf("hosts              %u, %u estimated against a reference (%zu host pairs measured both "
           "ways)\n",
           n, s.estimated, pairs);
    printf("residual           %.1f ns RMS\n", s.residual_rms);
    printf("corrected          %u hosts (the others' estimates are not certain to help: |path| <= "
           "3 bounds)\n",
           s.applied);
    if (truth && s.estimated)
        printf("error vs truth     mean |e| %.1f ns, RMS %.1f ns, max %.1f ns (host %u)\n",
               s.mean_abs, s.rms, s.max_abs, s.worst);
    if (truth && s.left_n)
        printf("offset left        mean |offset| %.1f ns raw, %.1f ns after the corrections\n",
               s.raw_sum / s.left_n, s.left_sum / s.left_n);
    if (!truth)
        printf("error vs truth     unknown (no ground truth: not a simulated recording)\n");
    if (s.unreached)
        printf("not estimated      %u hosts (no pair measured both ways reaches them: offset 0)\n",
               s.unreached);
done:
    free(est);
    free(rows);
    free(true_off);
    qr_recording_close(r);
    cli_args_free(&a);
    return rc;
}
