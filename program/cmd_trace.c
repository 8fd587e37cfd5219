/* qreplay trace: Everflow-style per-hop traces of the packets a match expression selects, with the
 * drop debugger and the latency profiler (hoptrace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/hoptrace.h"
#include "qreplay/hoptrace_score.h"
#include "qreplay/queuelog.h"
#include "qreplay/units.h"
#include "tables.h"

static const cli_opt opts[] = {
    {"match", 'm', CLI_VALUE, "EXPR", "the packets to trace (all); grammar below"},
    {"limit", 0, CLI_VALUE, "N",
     "keep the first N matched packets' hops in trace.h5 (1000; 0: all); drops and the\n"
     "                         profile always cover every matched packet"},
    {"show", 0, CLI_VALUE, "N", "print the traces of the first N (5)"},
    {"drops", 0, CLI_VALUE, "N", "print the first N drops (20)"},
    {"counter-interval", 0, CLI_VALUE, "TIME",
     "how often the switches' drop counters are read (1ms): a drop whose trace stops at a\n"
     "                         port whose counter did not move in its interval is silent"},
    {"mirror", 0, CLI_VALUE, "RULE",
     "what the switches mirror: all (every packet, the default) or everflow (Everflow's\n"
     "                         rules: packets with SYN, FIN or RST)"},
    {"mirror-sample", 0, CLI_VALUE, "N",
     "with --mirror everflow: also mirror 1 in 2^N packets, those whose IP ID's low N bits\n"
     "                         are 0 (Everflow's sampling: every switch takes the same ones)"},
    {"link-ratio", 0, CLI_VALUE, "R",
     "the latency profiler: a link is slow where its least latency is R times the links'\n"
     "                         median least latency (2)"},
    {"mirror-rate", 0, CLI_VALUE, "RATE",
     "each switch's mirror session sends copies (the first 128 B + 38 B of GRE) at RATE\n"
     "                         (\"10Mbps\"); copies beyond its FIFO are lost (default: no limit)"},
    {"mirror-buffer", 0, CLI_VALUE, "BYTES", "the mirror session's FIFO (64KB)"},
    {"replay", 0, CLI_VALUE, "NAME",
     "trace through the replay DIR/replay/NAME instead of the switches' mirrored copies"},
    {"arrivals", 0, CLI_VALUE, "FILE", "trace through this arrival log (a replay's)"},
    CLI_OPT_OUT_FILE("write trace.h5 here (default: DIR/trace.h5)"),
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "trace",
    "DIR",
    "Trace chosen packets hop by hop, the way Everflow (SIGCOMM 2015) matches packets and mirrors\n"
    "them at every switch: for each packet the expression matches, every switch it reached, the\n"
    "egress port, when, how long it queued (the queue's bytes ahead of it at the port's rate),\n"
    "the queue's and the switch's bytes and the dynamic threshold then, and the decision. On top:\n"
    "the drop debugger (every drop of a matched packet: where, why in numbers, whether its\n"
    "receiver detected it and when its sender resent it) and the latency profiler (queueing per\n"
    "hop and queue: mean, p50, p99, max, share of the path's).\n\n"
    "The hops come from what the run's switches mirrored (DIR/recording/mirror/copies.qra: each\n"
    "copy with the switch's own decision and buffer stamps, written by the runtime and the\n"
    "testbeds) by default, or from a replay's arrival log (--replay, --arrivals); a recording\n"
    "without mirrored copies (an imported capture) uses its tagged replay, or an exact tagged\n"
    "replay run now.\n\n"
    "The analyzer sees only the copies the switches mirror (--mirror) and their sessions did not\n"
    "lose (--mirror-rate, --mirror-buffer): a trace ends at its last copy. It was delivered if\n"
    "that copy was admitted towards its destination host; otherwise it stopped there (a queue\n"
    "drop, a silent drop, or a lost copy: the analyzer cannot tell the last two apart).\n\n"
    "A fat-tree testbed run with [everflow] guided also holds Everflow's guided probes, debug-\n"
    "marked packets sent along pinned paths after the traffic (DIR/recording/mirror): each is\n"
    "traced from its mirrored copies, the places that lost them while no drop counter moved are\n"
    "silent losses, and each port the drop debugger found silent drops at is confirmed by them\n"
    "or not (/guided in trace.h5). Its switches also bounced probes off each neighbour\n"
    "(S1 -> S2 -> S1): each switch port's round trip, its legs and where probes were lost;\n"
    "a port that lost probes is lossy, one whose median round trip is --link-ratio times the\n"
    "ports' median (and 20 us above it) is slow (/bounce in trace.h5).\n\n"
    "Match expressions (and, or, not, also &&, ||, !; parentheses):\n"
    "  all                      every packet\n"
    "  flow N | flow N-M        a flow (both directions) or a range of flows\n"
    "  dir N | packet D:S       a flow direction (2f data, 2f+1 ACKs); one packet\n"
    "  src H | dst H | host H   a host: hN or its IPv4 address\n"
    "  sport P | dport P | port P\n"
    "  A>B                      one direction of a 5-tuple: h3:10000>h9:5001, h3>h9\n"
    "  syn fin rst psh ack urg ece cwr    a TCP flag is set\n"
    "  payload | retransmit     carries data | resends sequence space already sent\n"
    "  debug | dscp N           carries Everflow's debug bit ([everflow] debug_every) | DSCP N\n"
    "  detected                 its receiver detected it lost\n"
    "  dropped | drop R         its trace stops at a switch | as R: threshold, buffer-full,\n"
    "                           tagged (counted so), silent (no counter moved), counted\n"
    "  tagged                   carried a drop tag (tagged replays)\n"
    "  via sN | via sN:P | via A>B    reached a switch, an egress queue, a link's queue\n"
    "  queued T                 queued at least T (\"20us\") at some hop\n"
    "  after T | before T       reached its first switch at or after / before T (\"2ms\")\n\n"
    "Writes DIR/trace.h5 (/packets, /hops, /drops, /profile, /summary), prints the summary, the\n"
    "first traces, the drops and the profile, and draws figures (analysis/plot_trace.py): the\n"
    "per-hop queueing profile and the kept packets' queueing per hop over time.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one run or recording folder",
    "examples:\n"
    "  qreplay runtime scenarios/faults/gray-k4.ini -o /tmp/g\n"
    "  qreplay trace /tmp/g --match 'drop silent'         # drops no switch counted\n"
    "  qreplay trace /tmp/g --match 'syn and not ack'     # every connection's first SYN\n"
    "  qreplay trace /tmp/g --match 'src h0 and dst h15 and payload'   # profile a host pair\n"
    "  qreplay trace /tmp/g --match 'flow 12 and (dropped or queued 50us)'\n"
    "  qreplay trace /tmp/g --mirror everflow --mirror-rate 20Mbps --match dropped\n"};

static int count_arg(const char *name, const char *s, size_t min, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || v < min || v > 100000000ull)
        return cli_usage_error("trace", "--%s: '%s' is not a count from %zu", name, s, min);
    *out = (size_t)v;
    return 0;
}

/* The options that shape the trace into o, and how much of it to print. Returns -1, or the exit
 * code of a usage error. */
static int parse_options(const cli_args *a, qr_hoptrace_opts *o, size_t *show, size_t *drops)
{
    const char *limit_s = cli_value(a, "limit"), *show_s = cli_value(a, "show");
    const char *drops_s = cli_value(a, "drops"), *ci = cli_value(a, "counter-interval");
    const char *mirror = cli_value(a, "mirror"), *mrate = cli_value(a, "mirror-rate");
    const char *mbuf = cli_value(a, "mirror-buffer");
    char err[QR_ERRBUF_SIZE];
    qr_hoptrace_opts_default(o);
    if ((limit_s && count_arg("limit", limit_s, 0, &o->limit)) ||
        (show_s && count_arg("show", show_s, 0, show)) ||
        (drops_s && count_arg("drops", drops_s, 0, drops)))
        return 2;
    if (ci && (qr_parse_time_ns(ci, &o->counter_interval_ns, err) || o->counter_interval_ns <= 0))
        return cli_usage_error("trace", "--counter-interval: '%s' is not a time above 0", ci);
    if (mirror && qr_mirror_parse(mirror, &o->mirror))
        return cli_usage_error("trace", "--mirror: '%s' is not a rule (all, everflow)", mirror);
    const char *lr = cli_value(a, "link-ratio");
    if (lr && qr_parse_double(lr, 1, 1e6, &o->link_ratio, err))
        return cli_usage_error("trace", "--link-ratio: '%s' is not a number from 1", lr);
    const char *sample = cli_value(a, "mirror-sample");
    if (sample) {
        int64_t n;
        if (qr_parse_int(sample, 1, 16, &n, err))
            return cli_usage_error("trace",
                                   "--mirror-sample: '%s' is not a number of bits from 1 "
                                   "to 16",
                                   sample);
        if (o->mirror != QR_MIRROR_EVERFLOW)
            return cli_usage_error("trace", "--mirror-sample samples for Everflow's rules: give "
                                            "--mirror everflow");
        o->mirror_sample = (uint32_t)n;
    }
    if (mrate && (qr_parse_rate_bps(mrate, &o->mirror_rate_bps, err) || !o->mirror_rate_bps))
        return cli_usage_error("trace", "--mirror-rate: '%s' is not a rate above 0 (\"10Mbps\")",
                               mrate);
    if (mbuf && (qr_parse_bytes(mbuf, &o->mirror_buffer_bytes, err) ||
                 o->mirror_buffer_bytes < QR_MIRROR_SNAP + QR_MIRROR_ENCAP))
        return cli_usage_error("trace",
                               "--mirror-buffer: '%s' is not a size of at least one copy (%d B)",
                               mbuf, QR_MIRROR_SNAP + QR_MIRROR_ENCAP);
    if (mbuf && !mrate)
        return cli_usage_error("trace", "--mirror-buffer needs --mirror-rate (without a rate the "
                                        "mirror loses nothing)");
    return -1;
}

int qr_cmd_trace(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *dir = a.pos[0], *match = cli_value(&a, "match"), *outp = cli_value(&a, "out");
    const char *replay = cli_value(&a, "replay"), *arrivals = cli_value(&a, "arrivals");
    int quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    char err[QR_ERRBUF_SIZE], rec_dir[4096], out[4200];
    cli_analysis_in in = {0};
    char *arr = in.arrivals;
    qr_recording *rec = NULL;
    qr_match *m = NULL;
    qr_hoptrace t = {0};
    qr_hoptrace_opts o;
    size_t show = 5, drops = 20;
    int runtime = 0;
    cli_progress prog;
    cli_progress_init(&prog, quiet);
    if ((rc = parse_options(&a, &o, &show, &drops)) >= 0)
        goto out;
    /* DIR/trace.h5 and its figures: the run folder is the transaction (main commits) */
    if (!(dir = cli_analysis_folder("trace", dir, outp, quiet))) {
        rc = 1;
        goto out;
    }
    cli_recording_dir(dir, rec_dir, sizeof rec_dir);
    snprintf(out, sizeof out, "%s", outp ? outp : "");
    if (!outp)
        snprintf(out, sizeof out, "%s/trace.h5", dir);
    if (replay || arrivals) {
        rc = cli_replay_arrivals("trace", dir, replay, arrivals, 0, arr, sizeof in.arrivals);
        if (rc)
            goto out;
    } else {
        snprintf(arr, sizeof in.arrivals, "%s/" QR_MIRROR_COPIES, rec_dir);
        runtime = 1;
        if (!cli_exists(arr)) {
            runtime = 0;
            rc = cli_replay_arrivals("trace", dir, NULL, NULL, 0, arr, sizeof in.arrivals);
            if (rc)
                goto out;
        }
    }
    rc = cli_analysis_open("trace", rec_dir, NULL, out, 0, &prog, &in);
    if (rc)
        goto out;
    rec = in.rec;
    /* a bad expression is a usage error, before any replay runs */
    if (qr_match_parse(&m, match ? match : "all", rec, err)) {
        rc = cli_usage_error("trace", "--match: %s", err);
        goto out;
    }
    rc = cli_analysis_replay("trace", out, &prog, &in);
    if (rc)
        goto out;
    o.match = match ? match : "all";
    o.arrivals = in.arrivals;
    char mirror_dir[4200];
    snprintf(mirror_dir, sizeof mirror_dir, "%s/mirror", rec_dir);
    o.mirror_dir = mirror_dir;
    o.runtime = runtime;
    o.observed_until_ns = runtime ? qr_recording_end_ns(rec) : 0;
    o.progress = cli_progress_line;
    o.progress_ctx = &prog;
    rc = qr_hoptrace_run(rec, &o, &t, err);
    cli_analysis_replay_done(&in);
    cli_progress_done(&prog);
    if (rc) {
        rc = cli_fail("trace", "%s: %s", rec_dir, err);
        goto out;
    }
    /* the analysis is done; a scorer grades it against the planted faults when the truth is there
     */
    char truth_path[4200];
    snprintf(truth_path, sizeof truth_path, "%s/truth/truth.h5", rec_dir);
    if (cli_exists(truth_path) &&
        qr_hoptrace_score(&t, qr_recording_scenario(rec), truth_path, err)) {
        rc = cli_fail("trace", "%s: %s", rec_dir, err);
        goto out;
    }
    if (in.tmp[0])
        t.opts.arrivals = "an exact tagged replay run by qreplay trace (not kept)";
    if (qr_hoptrace_write(out, qr_recording_scenario(rec), qr_recording_id(rec), &t, err)) {
        rc = cli_fail("trace", "%s", err);
        goto out;
    }
    rc = 0;
    if (!quiet) {
        printf("recording          %s\n", cli_shown(rec_dir));
        printf("output             %s\n", cli_shown(out));
        cli_print_hoptrace(&t, show, drops, stdout);
    }
    if (figures && t.summary.matched > t.summary.unseen) {
        char figdir[4300];
        snprintf(figdir, sizeof figdir, "%s/figures", dir);
        rc = cli_figures("trace", "plot_trace.py", out, figdir, quiet);
    }
out:
    qr_hoptrace_free(&t);
    qr_match_free(m);
    cli_analysis_close(&in);
    cli_args_free(&a);
    return rc;
}
