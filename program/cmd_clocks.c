/* qreplay clocks: the hosts' clock offsets estimated from a recording's own send and receive
 * times, and, on a simulated recording, their error against the true offsets. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"

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

struct summary {
    uint32_t hosts, estimated, unreached, applied, left_n;
    double left_sum, raw_sum;
    uint64_t pairs;
    double mean_abs, rms, max_abs, residual_rms;
    uint32_t worst;
};

static int write_h5(const char *path, const char *rec_dir, const char *recording_id,
                    const qr_row_clock_estimate *rows, size_t n, const struct summary *s, int truth,
                    char *err)
{
    qr_h5 *f = NULL;
    int rc;
    if ((rc = qr_h5_create_result(&f, path, NULL, "qreplay clocks", recording_id, err)) != QR_OK) {
        qr_h5_abort(f);
        return rc;
    }
    if ((rc = qr_h5_attr_str(f, "/", "recording", rec_dir, err)) ||
        (rc = qr_h5_attr_u64(f, "/", "truth_known", (uint64_t)truth, err)) ||
        (rc = qr_h5_attr_u64(f, "/", "hosts", s->hosts, err)) ||
        (rc = qr_h5_attr_u64(f, "/", "estimated", s->estimated, err)) ||
        (rc = qr_h5_attr_u64(f, "/", "pairs", s->pairs, err)) ||
        (rc = qr_h5_attr_f64(f, "/", "error_mean_abs_ns", s->mean_abs, err)) ||
        (rc = qr_h5_attr_f64(f, "/", "error_rms_ns", s->rms, err)) ||
        (rc = qr_h5_attr_f64(f, "/", "error_max_abs_ns", s->max_abs, err)) ||
        (rc = qr_h5_attr_f64(f, "/", "residual_rms_ns", s->residual_rms, err)) ||
        (rc = qr_h5_attr_u64(f, "/", "corrected", s->applied, err)) ||
        (rc = qr_h5_attr_f64(f, "/", "raw_mean_abs_ns", s->left_n ? s->raw_sum / s->left_n : 0.0,
                             err)) ||
        (rc = qr_h5_attr_f64(f, "/", "left_mean_abs_ns", s->left_n ? s->left_sum / s->left_n : 0.0,
                             err)) ||
        (rc = qr_h5_write_rows(f, "/clocks", &qr_schema_clock_estimate, rows, n, err))) {
        qr_h5_abort(f);
        return rc;
    }
    return qr_h5_commit(f, err);
}

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
    if (!est || !rows) {
        rc = cli_fail("clocks", "out of memory");
        goto done;
    }
    if (qr_recording_estimate_clocks(r, ref, est, &pairs, err)) {
        rc = cli_fail("clocks", "%s: %s", rec_dir, err);
        goto done;
    }
    /* the runtime keeps its ground truth next to the recording; an import has none */
    snprintf(probe, sizeof probe, "%s/truth/truth.h5", rec_dir);
    int truth = cli_exists(probe);
    struct summary s = {0};
    s.hosts = n;
    s.pairs = pairs;
    double sum_abs = 0, sum_sq = 0, sum_res = 0;
    for (uint32_t h = 0; h < n; h++) {
        const qr_clock_estimate *e = &est[h];
        int64_t true_rel =
            qr_recording_clock_offset(r, h) - qr_recording_clock_offset(r, e->reference);
        rows[h] = (qr_row_clock_estimate){h,
                                          e->reference,
                                          e->pairs,
                                          e->offset_ns,
                                          e->residual_ns,
                                          truth ? true_rel : 0,
                                          truth && e->pairs ? e->offset_ns - true_rel : 0,
                                          e->path_ns,
                                          e->bound_ns,
                                          qr_clock_correction(e)};
        s.applied += rows[h].correction_ns != 0;
        if (truth && h != e->reference) {
            /* what a reconciled replay leaves of the offset: the correction's error, or the raw
             * offset where no correction is taken out */
            s.left_sum += fabs((double)rows[h].correction_ns - (double)true_rel);
            s.raw_sum += fabs((double)true_rel);
            s.left_n++;
        }
        s.unreached += e->pairs == 0;
        if (!e->pairs || h == e->reference)
            continue;
        s.estimated++;
        sum_res += (double)e->residual_ns * (double)e->residual_ns;
        double ab = fabs((double)rows[h].error_ns);
        sum_abs += ab;
        sum_sq += ab * ab;
        if (ab > s.max_abs) {
            s.max_abs = ab;
            s.worst = h;
        }
    }
    if (s.estimated) {
        s.mean_abs = sum_abs / s.estimated;
        s.rms = sqrt(sum_sq / s.estimated);
        s.residual_rms = sqrt(sum_res / s.estimated);
    }
    if (out && write_h5(out, rec_dir, qr_recording_id(r), rows, n, &s, truth, err)) {
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
    qr_recording_close(r);
    cli_args_free(&a);
    return rc;
}
