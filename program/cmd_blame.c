/* qreplay blame: 007's votes for the links behind the losses hosts detected, with a replay's view,
 * scored against the runtime's ground truth (blame.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/blame_score.h"
#include "qreplay/error.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/units.h"
#include "tables.h"

static const cli_opt opts[] = {
    {"threshold", 0, CLI_VALUE, "P",
     "007's flag rule: flag the top link while it holds at least P of all votes (1%)"},
    {"top", 0, CLI_VALUE, "N", "links to list in the table (15)"},
    {"replay", 0, CLI_VALUE, "NAME",
     "take the replay's drops from DIR/replay/NAME; default: the tagged replay of the\n"
     "                         smallest threshold, or an exact tagged replay run now"},
    {"arrivals", 0, CLI_VALUE, "FILE", "an arrival log to take them from instead"},
    {"no-replay", 0, CLI_FLAG, NULL, "007's votes only"},
    {"adjust", 0, CLI_VALUE, "HOW",
     "Algorithm 1's adjustment after a link is flagged: voters (take away the votes of\n"
     "                         the directions traced through it; default) or ecmp (the\n"
     "                         paper's: the votes ECMP would send through each link with it)"},
    {"epoch", 0, CLI_VALUE, "T",
     "tally the votes per epoch of T as well (by each direction's first loss); default:\n"
     "                         the scenario's [traceroute] epoch, 0 for none"},
    {"hit-ratio", 0, CLI_VALUE, "P",
     "Tomo: blame only links whose failed share of the directions through them is at\n"
     "                         least P (50%)"},
    {"solver-time", 0, CLI_VALUE, "T",
     "the binary and integer programs: stop after T (60s) with the best solution found,\n"
     "                         said not proven optimal (0: no limit)"},
    {"no-comparators", 0, CLI_FLAG, NULL,
     "skip 007's comparators (binary and integer programs, MAX COVERAGE, Tomo)"},
    {"truth", 0, CLI_VALUE, "FILE",
     "score against this truth.h5 (default: the recording's truth/truth.h5 if there)"},
    CLI_OPT_OUT_FILE("write blame.h5 here (default: DIR/blame.h5)"),
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "blame",
    "DIR",
    "Find the links behind the losses hosts detected, the way 007 does (NSDI 2018): every flow\n"
    "direction whose receiver detected a lost packet gives each of the h links of its path 1/h of\n"
    "a vote; links are ranked by votes, and 007's rule flags the top link while it holds at least\n"
    "1% of all votes, taking away the votes of the directions through it each time. Per\n"
    "connection, its culprit is the most voted link on its path.\n\n"
    "The paths are the ones the hosts traced: in the runtime, [traceroute] per_connection makes\n"
    "each host traceroute a connection when it retransmits (TCP probes with the connection's\n"
    "5-tuple, ICMP time-exceeded from the switches under Linux's rate limits: a hop that does\n"
    "not answer leaves its links unknown, and they get no vote); for captures, the paths of\n"
    "qreplay import --paths FILE. A direction whose path is unknown casts no vote (counted as\n"
    "untraced). Where the hosts share their only switch the path needs no trace.\n\n"
    "A tagged replay adds its own view: where it drops the lost packets (the congestion it can\n"
    "explain), and a second vote from only the losses it could not place anywhere. With the\n"
    "runtime's truth.h5 (planted faults: [faults] gray and blackhole) both are scored: precision\n"
    "and recall of the flagged links, per-connection culprit accuracy, and how many voting\n"
    "connections each needed before it flagged the faulty link for good.\n\n"
    "007's comparators (its paper's section 7) run on the same failed directions and paths:\n"
    "the binary program (the fewest links every failed direction crosses one of) and the\n"
    "integer program (drops per link explaining each direction's losses), solved exactly with\n"
    "GLPK, and the greedy MAX COVERAGE and Tomo; each is scored like 007.\n\n"
    "Writes DIR/blame.h5 (/links, /connections, /curve, /summary, /comparators, /blamed),\n"
    "prints the ranking and the\n"
    "scores, and draws figures (analysis/plot_blame.py): the votes on the topology and the\n"
    "detection curve.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one run or recording folder",
    "examples:\n"
    "  qreplay runtime scenarios/faults/gray-k4.ini -o /tmp/g && qreplay blame /tmp/g\n"
    "  qreplay blame /tmp/g --no-replay --threshold 2%\n"};

/* --threshold and --top into o and *top. Returns -1, or the exit code of a usage error. */
static int parse_options(const cli_args *a, qr_blame_opts *o, size_t *top)
{
    const char *thr = cli_value(a, "threshold"), *top_s = cli_value(a, "top");
    const char *hit = cli_value(a, "hit-ratio"), *tl = cli_value(a, "solver-time");
    char err[QR_ERRBUF_SIZE];
    qr_blame_opts_default(o);
    o->comparators = cli_count(a, "no-comparators") == 0;
    const char *adj = cli_value(a, "adjust");
    if (adj && strcmp(adj, "voters") && strcmp(adj, "ecmp"))
        return cli_usage_error("blame", "--adjust: '%s' is neither voters nor ecmp", adj);
    o->adjust = adj && !strcmp(adj, "ecmp") ? QR_BLAME_ADJUST_ECMP : QR_BLAME_ADJUST_VOTERS;
    if (hit && (qr_parse_percent(hit, &o->cover.hit_ratio, err) ||
                !(o->cover.hit_ratio > 0 && o->cover.hit_ratio <= 1)))
        return cli_usage_error("blame",
                               "--hit-ratio: '%s' is not a percentage above 0 and up to 100", hit);
    const char *ep = cli_value(a, "epoch");
    if (ep && (qr_parse_time_ns(ep, &o->epoch_ns, err) || o->epoch_ns < 0))
        return cli_usage_error("blame", "--epoch: '%s' is not a duration (30s, 1ms, 0)", ep);
    if (tl) {
        int64_t ns;
        if (qr_parse_time_ns(tl, &ns, err) || ns < 0)
            return cli_usage_error("blame", "--solver-time: '%s' is not a duration (60s, 0)", tl);
        o->cover.time_limit_s = (double)ns / 1e9;
    }
    if (thr &&
        (qr_parse_percent(thr, &o->threshold, err) || !(o->threshold > 0 && o->threshold < 1)))
        return cli_usage_error("blame", "--threshold: '%s' is not a percentage between 0 and 100",
                               thr);
    if (top_s) {
        char *end;
        unsigned long v = strtoul(top_s, &end, 10);
        if (!*top_s || *end || *top_s == '-' || v < 1 || v > 100000)
            return cli_usage_error("blame", "--top: '%s' is not a count from 1", top_s);
        *top = v;
    }
    return -1;
}

/* 007 votes along the paths traceroutes found: captures of an unknown network need the user's own
 * (import --paths); a replay and a truth (`needs`: the option asking for one, or NULL) need the
 * network the packets crossed. Returns -1, or the exit code of the refusal. */
static int check_network(const qr_recording *rec, const char *rec_dir, const char *needs)
{
    const qr_row_path *paths;
    size_t n_paths;
    int traced = qr_recording_paths(rec, &paths, &n_paths);
    if (qr_recording_network_known(rec))
        return -1;
    if (!traced)
        return cli_fail("blame",
                        "%s: the captures' network is unknown, and so is every connection's path: "
                        "007 votes along the paths its traceroutes find (give them with qreplay "
                        "import --paths FILE, or import with --network scenario if the captures "
                        "were taken in the scenario's network)",
                        rec_dir);
    if (needs)
        return cli_usage_error("blame",
                               "%s: --%s needs the network the packets crossed, and this "
                               "recording's is unknown",
                               rec_dir, needs);
    return -1;
}

int qr_cmd_blame(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *dir = a.pos[0];
    const char *replay = cli_value(&a, "replay"), *arrivals = cli_value(&a, "arrivals");
    const char *truth = cli_value(&a, "truth"), *outp = cli_value(&a, "out");
    int quiet = cli_count(&a, "quiet") > 0, no_replay = cli_count(&a, "no-replay") > 0;
    int figures = cli_count(&a, "no-figures") == 0;
    char err[QR_ERRBUF_SIZE], rec_dir[4096], out[4200];
    cli_analysis_in in = {0};
    char truth_path[4200] = "";
    qr_recording *rec = NULL;
    qr_blame b = {0};
    qr_blame_opts o;
    size_t top = 15;
    cli_progress prog;
    cli_progress_init(&prog, quiet);
    if ((rc = parse_options(&a, &o, &top)) >= 0)
        goto out;
    /* DIR/blame.h5 and its figures: the run folder is the transaction (main commits) */
    if (!(dir = cli_analysis_folder("blame", dir, outp, quiet))) {
        rc = 1;
        goto out;
    }
    cli_recording_dir(dir, rec_dir, sizeof rec_dir);
    snprintf(out, sizeof out, "%s", outp ? outp : "");
    if (!outp)
        snprintf(out, sizeof out, "%s/blame.h5", dir);
    rc = cli_replay_arrivals("blame", dir, replay, arrivals, no_replay, in.arrivals,
                             sizeof in.arrivals);
    if (rc)
        goto out;
    if (truth) {
        snprintf(truth_path, sizeof truth_path, "%s", truth);
        if (!cli_exists(truth_path)) {
            rc = cli_fail("blame", "--truth %s: no such file", truth);
            goto out;
        }
    } else { /* the scorer's, where the run folder has it */
        snprintf(truth_path, sizeof truth_path, "%s/truth/truth.h5", rec_dir);
        if (!cli_exists(truth_path))
            truth_path[0] = '\0';
    }
    rc = cli_analysis_open("blame", rec_dir, truth_path, out, 0, &prog, &in);
    if (rc)
        goto out;
    rec = in.rec;
    /* the truth graded against must be this recording's */
    if (truth_path[0] &&
        qr_h5_check_recording(truth_path, qr_recording_id(rec),
                              "name this recording's truth, or import the captures with --truth "
                              "RUN to carry a run's truth over (qreplay import)",
                              err)) {
        rc = cli_fail("blame", "%s", err);
        goto out;
    }
    if ((rc = check_network(rec, rec_dir,
                            replay                             ? "replay"
                            : arrivals                         ? "arrivals"
                            : truth                            ? "truth"
                            : o.adjust == QR_BLAME_ADJUST_ECMP ? "adjust ecmp"
                                                               : NULL)) >= 0)
        goto out;
    if (!qr_recording_network_known(rec)) {
        no_replay = 1;
        in.arrivals[0] = '\0';
        truth_path[0] = '\0';
    }
    if (!no_replay && (rc = cli_analysis_replay("blame", out, &prog, &in)))
        goto out;
    o.arrivals = in.arrivals[0] ? in.arrivals : NULL;
    o.progress = cli_progress_line;
    o.progress_ctx = &prog;
    rc = qr_blame_run(rec, &o, &b, err);
    cli_analysis_replay_done(&in);
    cli_progress_done(&prog);
    if (rc) {
        rc = cli_fail("blame", "%s: %s", rec_dir, err);
        goto out;
    }
    /* the analysis saw only what hosts observed; the scorer grades it against the truth */
    if (truth_path[0] && qr_blame_score(&b, rec, truth_path, err)) {
        rc = cli_fail("blame", "%s: %s", rec_dir, err);
        goto out;
    }
    /* the file names its inputs; a temporary replay's log is gone, say what it was */
    if (in.tmp[0])
        b.opts.arrivals = "an exact tagged replay run by qreplay blame (not kept)";
    if (qr_blame_write(out, qr_recording_scenario(rec), qr_recording_id(rec), &b, err)) {
        rc = cli_fail("blame", "%s", err);
        goto out;
    }
    rc = 0;
    if (!quiet) {
        printf("recording          %s\n", cli_shown(rec_dir));
        printf("replay             %s\n", cli_analysis_arrivals_text(&in));
        printf("truth              %s\n", truth_path[0] ? truth_path : "none (no scoring)");
        printf("output             %s\n\n", cli_shown(out));
        cli_print_blame(&b, top, stdout);
    }
    if (figures) {
        char figdir[4300];
        snprintf(figdir, sizeof figdir, "%s/figures", dir);
        rc = cli_figures("blame", "plot_blame.py", out, figdir, quiet);
    }
out:
    qr_blame_free(&b);
    cli_analysis_close(&in);
    cli_args_free(&a);
    return rc;
}
