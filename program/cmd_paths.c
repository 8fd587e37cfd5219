/* qreplay paths: WAP5's causal paths through a multi-tier application, from a message trace or
 * from a multi-tier service simulated by the core, scored against its truth (paths.h, tiers.h,
 * paths_score.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/messages.h"
#include "qreplay/paths.h"
#include "qreplay/paths_score.h"
#include "qreplay/textio.h"
#include "qreplay/tiers.h"
#include "qreplay/tiers_truth.h"
#include "qreplay/units.h"
#include "report.h"

static const cli_opt opts[] = {
    {"tiers", 0, CLI_VALUE, "FILE",
     "simulate the multi-tier service of FILE on the core's network and score against its truth"},
    {"messages", 0, CLI_VALUE, "FILE", "a message trace (docs/FORMATS.md, Message traces)"},
    {"truth", 0, CLI_VALUE, "FILE",
     "score against a service's truth (qreplay tiers, the testbed's services; docs/FORMATS.md, "
     "Service truth): its messages' ids and parents, its planted faults. Only the scorer reads "
     "it: give the clients with --outside"},
    {"capture", 0, CLI_LIST, "FILE",
     "a host's capture (tcpdump, Wireshark; repeatable, or give them as arguments): messages "
     "are runs of payload per direction"},
    {"record", 0, CLI_LIST, "FILE",
     "a host's kernel record (qreplay record; repeatable): messages from its socket calls"},
    {"map", 0, CLI_VALUE, "FILE",
     "with --capture or --record: address,host[,capture] per line (required)"},
    {"idle", 0, CLI_VALUE, "T",
     "with --capture or --record: a pause this long also ends a message (0: only the other side "
     "speaking)"},
    {"method", 0, CLI_VALUE, "M",
     "link (WAP5's message linking, the default), nest or conv (Project 5's nesting and "
     "convolution)"},
    {"outside", 0, CLI_VALUE, "HOSTS",
     "hosts outside the application, e.g. its clients: what they send starts a path "
     "(--tiers: its clients)"},
    {"cutoff", 0, CLI_VALUE, "T", "WAP5's x: a cause arrived at most this long before (10ms)"},
    {"y", 0, CLI_VALUE, "Y", "spontaneity weighs f(y d) (4)"},
    {"k", 0, CLI_VALUE, "K", "try-both decisions per path tree (6)"},
    {"rate", 0, CLI_VALUE, "R", "--tiers: client requests per second (the file's rate)"},
    {"duration", 0, CLI_VALUE, "T", "--tiers: how long clients send requests (1s)"},
    {"clock", 0, CLI_VALUE, "T", "--tiers: host clocks off by up to this, either way (0)"},
    {"seed", 0, CLI_VALUE, "N", "--tiers: the simulation's seed (1)"},
    {"top", 0, CLI_VALUE, "N", "patterns printed (10)"},
    {"write-messages", 0, CLI_VALUE, "FILE",
     "--tiers, --capture: also write the messages analysed, as a message trace"},
    CLI_OPT_OUT("write DIR/paths.h5 (patterns, hops, delays, suspects; docs/FORMATS.md) and "
                "DIR/figures/"),
    {"no-figures", 0, CLI_FLAG, NULL,
     "with -o: no figures (else WAP5's timelines and the delays' histograms in DIR/figures)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "paths",
    "[CAPTURE...]",
    "Find the causal paths of a black-box multi-tier application as WAP5 does, from messages\n"
    "alone: which message caused which (message linking: an exponential weight on the delay since\n"
    "each earlier arrival at the sender, spontaneity at f(y d)), the path patterns requests take\n"
    "(by expected count, with how many requests' best path has each shape), each hop's node\n"
    "delay (on one host's clock) and network delay (clock offsets estimated from the least\n"
    "one-way delays both ways), and the hosts and links whose delays stand out among their\n"
    "peers. --method nest runs Project 5's nesting (call-return pairs) instead, --method conv its\n"
    "convolution (the cross-correlation of the streams into and out of each host).\n\n"
    "The messages come from a trace (--messages), from the hosts' captures (--capture, with a\n"
    "host map: on each connection a message is a run of payload one way, ended by the other\n"
    "side speaking; its send time from the sender's capture, its receive time from the\n"
    "receiver's, unknown where a host has none), from the hosts' kernel records (--record: the\n"
    "same cut over each connection's send and receive calls, as WAP5 reads LibSockCap's), or\n"
    "from a multi-tier service the core\n"
    "simulates (--tiers: tiers of hosts, stages of calls, planted slow hosts and links; see\n"
    "scenarios/tiers/), which also has the truth: every message's true parent. The score\n"
    "(messages linked to their true parent, true patterns found, the planted faults named) is\n"
    "printed and stored; the analysis never reads the truth. --truth FILE scores the other\n"
    "sources against a service's own truth (qreplay tiers' DIR/truth/tiers.csv, the testbed's):\n"
    "its messages' ids and parents, named by connection and place, and its planted faults.\n",
    opts,
    sizeof opts / sizeof opts[0],
    0,
    -1,
    "",
    "examples:\n"
    "  qreplay paths --tiers scenarios/tiers/three-tier.tiers -o /tmp/paths\n"
    "  qreplay paths --tiers scenarios/tiers/three-tier.tiers --method nest --rate 3000\n"
    "  qreplay paths --messages trace.csv --outside 0,1,2\n"
    "  qreplay tiers scenarios/tiers/three-tier.tiers -o T && qreplay paths --messages "
    "T/messages.csv --truth T/truth/tiers.csv\n"
    "  qreplay paths --map hosts.csv h3.pcap h4.pcap h6.pcap\n"
    "  qreplay export RUN -o CAPS && qreplay paths --map CAPS/hosts.csv CAPS/h*.pcap\n"};

typedef struct run_in {
    qr_msg *m;
    size_t n;
    uint32_t hosts;
    qr_tiers_spec spec; /* --tiers, --truth */
    qr_msg_ends *ends;  /* captures, records with --truth: each connection's ends */
    int have_truth;
    uint64_t *truth;   /* per message: its true parent */
    int64_t *true_net; /* per message: its true network delay */
    char source[4400];
} run_in;

/* Parse the numeric options into o and the simulation's settings. Returns 0 or the exit status. */
static int parse_options(const cli_args *a, qr_paths_opts *o, qr_tiers_net *net, uint64_t *seed,
                         double *rate, size_t *top)
{
    char err[QR_ERRBUF_SIZE];
    const char *v;
    qr_paths_opts_default(o);
    qr_tiers_net_default(net);
    net->duration_ns = 1000000000;
    *seed = 1;
    *rate = 0;
    *top = 10;
    const struct {
        const char *name;
        int64_t *t;
    } times[] = {
        {"cutoff", &o->cutoff_ns}, {"duration", &net->duration_ns}, {"clock", &net->clock_ns}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if ((v = cli_value(a, times[i].name)) &&
            (qr_parse_time_ns(v, times[i].t, err) || *times[i].t < 0))
            return cli_usage_error("paths", "--%s: %s", times[i].name,
                                   *times[i].t < 0 ? "negative" : err);
    char *e;
    if ((v = cli_value(a, "y")) && (o->y = strtod(v, &e), *e || !(o->y > 0 && o->y < 1e6)))
        return cli_usage_error("paths", "--y: '%s' is not a positive number", v);
    unsigned long long u;
    if ((v = cli_value(a, "k")) && (u = strtoull(v, &e, 10), *e || *v == '-' || u > 20))
        return cli_usage_error("paths", "--k: '%s' is not a count in 0 .. 20", v);
    else if (v)
        o->k = (uint32_t)u;
    if ((v = cli_value(a, "seed")) && (*seed = strtoull(v, &e, 10), *e || *v == '-' || !*v))
        return cli_usage_error("paths", "--seed: '%s' is not a whole number", v);
    if ((v = cli_value(a, "top")) && (u = strtoull(v, &e, 10), *e || *v == '-' || !u))
        return cli_usage_error("paths", "--top: '%s' is not a count from 1", v);
    else if (v)
        *top = (size_t)u;
    if ((v = cli_value(a, "rate")) &&
        (*rate = strtod(v, &e), (*e && strcmp(e, "/s")) || !(*rate > 0 && *rate <= 1e8)))
        return cli_usage_error("paths", "--rate: '%s' is not requests per second in (0, 1e8]", v);
    return 0;
}

/* --outside HOSTS: flags for hosts 0 .. hosts - 1. Returns 0 or the exit status. */
static int parse_outside(const char *text, uint32_t hosts, uint8_t *flags)
{
    const char *p = text;
    while (*p) {
        char *e;
        unsigned long h = strtoul(p, &e, 10);
        if (e == p || (*e && *e != ','))
            return cli_usage_error("paths", "--outside: '%s' is not a list of hosts", text);
        if (h >= hosts)
            return cli_fail("paths", "--outside: host %lu is not in the trace (hosts 0 .. %u)", h,
                            hosts ? hosts - 1 : 0);
        flags[h] = 1;
        p = *e ? e + 1 : e;
    }
    return 0;
}

/* Simulate the --tiers service: its messages and their truth. Returns 0 or the exit status. */
static int simulate(const char *file, const qr_tiers_net *net, uint64_t seed, double rate,
                    run_in *in)
{
    char err[QR_ERRBUF_SIZE];
    char *text = cli_slurp("paths", file);
    if (!text)
        return 1;
    int rc = qr_tiers_parse(text, &in->spec, err);
    free(text);
    if (rc)
        return cli_fail("paths", "%s: %s", file, err);
    if (rate > 0)
        in->spec.rate_per_s = rate;
    qr_tiers_trace_msg *t;
    int64_t *off;
    if (qr_tiers_simulate(&in->spec, net, seed, &t, &in->n, &off, err))
        return cli_fail("paths", "%s: %s", file, err);
    in->hosts = qr_tiers_hosts(&in->spec);
    in->m = malloc((in->n ? in->n : 1) * sizeof *in->m);
    in->truth = malloc((in->n ? in->n : 1) * sizeof *in->truth);
    in->true_net = malloc((in->n ? in->n : 1) * sizeof *in->true_net);
    if (!in->m || !in->truth || !in->true_net) {
        free(t);
        free(off);
        return cli_fail("paths", "out of memory");
    }
    for (size_t i = 0; i < in->n; i++) {
        in->m[i] =
            (qr_msg){t[i].m.from, t[i].m.to, t[i].m.conn, t[i].send_ns, t[i].recv_ns, t[i].m.bytes};
        in->truth[i] = t[i].m.parent == QR_TIER_NO_PARENT ? QR_PATHS_ROOT : t[i].m.parent;
        in->true_net[i] = t[i].true_recv_ns - t[i].true_send_ns;
    }
    free(t);
    free(off);
    in->have_truth = 1;
    snprintf(in->source, sizeof in->source,
             "tiers %s, %.6g requests/s for %" PRId64 " ns, clocks within %" PRId64
             " ns, seed %" PRIu64,
             file, in->spec.rate_per_s, net->duration_ns, net->clock_ns, seed);
    return 0;
}

/* The hosts' own views (records: kernel records, else captures): their messages, with what was
 * left out said. Returns 0 or the exit status. */
static int from_hosts(const cli_args *a, const char **files, int n, int records, run_in *in)
{
    char err[QR_ERRBUF_SIZE];
    const char *mapf = cli_value(a, "map"), *idle = cli_value(a, "idle");
    qr_msgs_capture_opts o = {0};
    if (cli_value(a, "truth"))
        o.ends = &in->ends;
    if (idle && (qr_parse_time_ns(idle, &o.idle_ns, err) || o.idle_ns < 0))
        return cli_usage_error("paths", "--idle: %s", o.idle_ns < 0 ? "negative" : err);
    qr_host_map_entry *map;
    size_t n_map;
    if (qr_host_map_read(mapf, QR_MSG_HOSTS_MAX, &map, &n_map, err))
        return cli_fail("paths", "%s", err);
    qr_msgs_capture_report cr;
    qr_msgs_record_report rr;
    int rc = records ? qr_msgs_from_records(files, (size_t)n, map, n_map, &o, &in->m, &in->n,
                                            &in->hosts, &rr, err)
                     : qr_host_map_check_captures(map, n_map, mapf, files, (size_t)n, err);
    if (!rc && !records)
        rc = qr_msgs_from_captures(files, (size_t)n, map, n_map, &o, &in->m, &in->n, &in->hosts,
                                   &cr, err);
    qr_host_map_free(map);
    if (rc)
        return cli_fail("paths", "%s", err);
    int quiet = cli_count(a, "quiet") > 0;
    if (!quiet && records)
        printf("records: %" PRIu64 " of them, %" PRIu64 " socket calls; left out: %" PRIu64
               " calls of an end the map does not name, %" PRIu64
               " connections already open when recorded; %" PRIu64 " connections, %" PRIu64
               " messages (%" PRIu64 " sends and %" PRIu64 " receives without a record, %" PRIu64
               " never read whole)\n",
               rr.records, rr.calls, rr.unmapped_calls, rr.mid_connections, rr.connections,
               rr.messages, rr.untraced_send, rr.untraced_recv, rr.unfinished);
    else if (!quiet)
        printf("captures: %" PRIu64 " of them, %" PRIu64 " TCP packets, %" PRIu64
               " with payload; left out: %" PRIu64 " of an address the map does not name, %" PRIu64
               " of no host of their capture; %" PRIu64 " connections, %" PRIu64
               " messages (%" PRIu64 " sends and %" PRIu64 " receives without a capture, %" PRIu64
               " never whole at their receiver)\n",
               cr.captures, cr.packets, cr.payload_packets, cr.unmapped_packets, cr.foreign_packets,
               cr.connections, cr.messages, cr.untraced_send, cr.untraced_recv, cr.unfinished);
    snprintf(in->source, sizeof in->source, "%d %s (first %s), map %s", n,
             records ? "kernel records" : "captures", files[0], mapf);
    return 0;
}

static void print_patterns(const qr_paths *p, const qr_paths *truth, size_t top)
{
    size_t np;
    const qr_paths_pattern *pt = qr_paths_patterns(p, &np);
    printf("%-5s %8s %9s%s  %s\n", "rank", "count", "expected", truth ? " true" : "",
           "pattern (src>dst(children)), then each hop: node delay before it / network delay");
    for (size_t i = 0; i < np && i < top; i++) {
        const qr_paths_pattern *t = truth ? qr_paths_find(truth, pt[i].shape) : NULL;
        if (truth)
            printf("%-5zu %8" PRIu64 " %9.2f %4" PRIu64 "  %s\n", i + 1, pt[i].count,
                   pt[i].expected, t ? t->count : 0, pt[i].shape);
        else
            printf("%-5zu %8" PRIu64 " %9.2f  %s\n", i + 1, pt[i].count, pt[i].expected,
                   pt[i].shape);
        printf("%24s", "");
        for (uint32_t h = 0; h < pt[i].n_hops; h++)
            printf(" %u>%u %.0f/%.0fus", pt[i].hops[h].src, pt[i].hops[h].dst,
                   pt[i].hops[h].node_mean_ns / 1e3, pt[i].hops[h].net_mean_ns / 1e3);
        printf("\n");
    }
    if (np > top)
        printf("(%zu patterns in all; --top N for more)\n", np);
}

static void print_summary(const qr_paths *p, const char *method)
{
    const qr_paths_stats *st = qr_paths_get_stats(p);
    printf("%s: %" PRIu64 " messages, %" PRIu64 " path roots, %" PRIu64 " instances; %" PRIu64
           " sends and %" PRIu64 " receives untraced; %" PRIu64 " trees cut at the size limit; "
           "offsets from %" PRIu64 " host pairs\n",
           method, st->messages, st->roots, st->instances, st->untraced_send, st->untraced_recv,
           st->trees_cut, st->clock_pairs);
    size_t ns;
    const qr_paths_suspect *s = qr_paths_suspects(p, &ns);
    if (!ns)
        printf("slow: no host or link stands out\n");
    for (size_t i = 0; i < ns; i++)
        if (s[i].link)
            printf("slow link %u-%u: median network delay %.1f us against %.1f us over every "
                   "link (%" PRIu64 " messages)\n",
                   s[i].a, s[i].b, s[i].delay_ns / 1e3, s[i].baseline_ns / 1e3, s[i].n);
        else
            printf("slow host %u: mean node delay %.1f us against %.1f us of its peers (%" PRIu64
                   " delays)\n",
                   s[i].a, s[i].delay_ns / 1e3, s[i].baseline_ns / 1e3, s[i].n);
}

static void print_score(const qr_paths_score *sc)
{
    const char *named[] = {"not named", "named", "none planted"};
    printf("score: %" PRIu64 " of %" PRIu64 " messages linked to their true parent (%.1f%%); "
           "%" PRIu64 " of %" PRIu64 " true patterns found (%" PRIu64 " of %" PRIu64
           " rare ones), %" PRIu64 " found that no request took; node delays off by %.1f%%, "
           "network delays by %.1f us; slow host %s, slow link %s; %" PRIu64 " named wrongly\n",
           sc->right, sc->messages, 100 * sc->share, sc->found_patterns, sc->true_patterns,
           sc->rare_found, sc->rare_patterns, sc->false_patterns, 100 * sc->node_delay_error,
           sc->net_delay_error_ns / 1e3, named[sc->slow_node_named < 0 ? 2 : sc->slow_node_named],
           named[sc->slow_link_named < 0 ? 2 : sc->slow_link_named], sc->wrongly_named);
}

/* --truth: each message's true parent and network delay, and the service's faults. Returns 0 or
 * the exit status. */
static int load_truth(const char *file, int quiet, run_in *in)
{
    char err[QR_ERRBUF_SIZE];
    qr_tiers_truth *t;
    if (qr_tiers_truth_read(file, &t, err))
        return cli_fail("paths", "%s", err);
    in->spec = *qr_tiers_truth_spec(t);
    in->truth = malloc((in->n ? in->n : 1) * sizeof *in->truth);
    in->true_net = malloc((in->n ? in->n : 1) * sizeof *in->true_net);
    qr_tiers_truth_match_report r;
    size_t n_ends = 0;
    for (size_t i = 0; in->ends && i < in->n; i++)
        n_ends = in->m[i].conn + 1 > n_ends ? in->m[i].conn + 1 : n_ends;
    int rc =
        !in->truth || !in->true_net ? cli_fail("paths", "out of memory")
        : qr_tiers_truth_match(t, in->m, in->n, in->ends, n_ends, in->truth, in->true_net, &r, err)
            ? cli_fail("paths", "%s: %s", file, err)
            : 0;
    size_t rows;
    qr_tiers_truth_rows(t, &rows);
    qr_tiers_truth_destroy(t);
    if (rc)
        return rc;
    if (!quiet)
        printf("truth: %" PRIu64 " of %zu messages matched to the %zu of %s; not matched: %" PRIu64
               " (%" PRIu64 " at a place whose row names other hosts), %zu rows never observed; "
               "%" PRIu64 " true parents not observed\n",
               r.matched, in->n, rows, file, r.no_truth, r.wrong_hosts, (size_t)r.unobserved,
               r.parent_unseen);
    in->have_truth = 1;
    size_t used = strlen(in->source);
    snprintf(in->source + used, sizeof in->source - used, ", truth %s", file);
    return 0;
}

/* Analyse, score where the truth is known, print and write. */
static int analyse(const cli_args *a, run_in *in, const qr_paths_opts *o, size_t top)
{
    char err[QR_ERRBUF_SIZE];
    const char *method = cli_value(a, "method") ? cli_value(a, "method") : "link";
    const char *outp = cli_value(a, "out");
    int quiet = cli_count(a, "quiet") > 0;
    if (strcmp(method, "link") && strcmp(method, "nest") && strcmp(method, "conv"))
        return cli_usage_error("paths", "--method: '%s' is not link, nest or conv", method);
    qr_paths *p = NULL, *truth = NULL;
    double t0 = cli_now();
    int rc = !strcmp(method, "link")   ? qr_paths_link(&p, in->m, in->n, in->hosts, o, err)
             : !strcmp(method, "nest") ? qr_paths_nest(&p, in->m, in->n, in->hosts, o, err)
                                       : qr_paths_conv(&p, in->m, in->n, in->hosts, o, err);
    if (rc)
        return cli_fail("paths", "%s", err);
    double took = cli_now() - t0;
    qr_paths_score sc;
    const char *names[32];
    double values[32];
    size_t n_scores = 0;
    if (in->have_truth) {
        /* a message whose true parent is unknown starts its own true tree */
        uint64_t *given = malloc((in->n ? in->n : 1) * sizeof *given);
        for (size_t i = 0; given && i < in->n; i++)
            given[i] = in->truth[i] == QR_TRUTH_NO_PARENT ? QR_PATHS_ROOT : in->truth[i];
        if (!given || qr_paths_given(&truth, in->m, in->n, in->hosts, given, o, err)) {
            free(given);
            qr_paths_destroy(p);
            return cli_fail("paths", "the truth: %s", given ? err : "out of memory");
        }
        free(given);
        qr_paths_score_run(p, truth, in->truth, in->m, in->true_net, in->n, in->spec.faults,
                           in->spec.n_faults, 0.05, &sc);
        n_scores = qr_paths_score_fields(&sc, names, values, 32);
    }
    if (!quiet) {
        print_summary(p, method);
        print_patterns(p, truth, top);
        if (in->have_truth)
            print_score(&sc);
    }
    qr_paths_write_info info = {method, in->source, in->have_truth ? in->truth : NULL,
                                truth,  n_scores,   names,
                                values, took};
    /* DIR is the transaction: paths.h5 and the figures swap in together (main commits) */
    const char *work = outp ? cli_output_folder("paths", outp, quiet) : NULL;
    char h5[4200];
    if (outp && !work) {
        qr_paths_destroy(p);
        qr_paths_destroy(truth);
        return 1;
    }
    snprintf(h5, sizeof h5, "%s/paths.h5", work ? work : ".");
    rc = outp ? qr_paths_write(h5, p, &info, err) : 0;
    qr_paths_destroy(p);
    qr_paths_destroy(truth);
    if (rc)
        return cli_fail("paths", "%s", err);
    if (outp && !quiet)
        printf("wrote %s\n", cli_shown(h5));
    if (outp && !cli_count(a, "no-figures")) {
        char figdir[4200];
        snprintf(figdir, sizeof figdir, "%s/figures", work);
        return cli_figures("paths", "plot_paths.py", h5, figdir, quiet);
    }
    return 0;
}

/* The messages of a trace, captures or records, scored by --truth if given. Returns 0 or the
 * exit status. */
static int read_messages(const cli_args *a, const char **caps, int n_caps, const char **recs,
                         int n_recs, run_in *in)
{
    char err[QR_ERRBUF_SIZE];
    const char *msgs = cli_value(a, "messages"), *truthf = cli_value(a, "truth");
    int rc = 0;
    if (msgs) {
        if (qr_msgs_read(msgs, &in->m, &in->n, &in->hosts, err))
            rc = cli_fail("paths", "%s", err);
        snprintf(in->source, sizeof in->source, "messages %s", msgs);
    }
    if (!rc && (n_caps || n_recs))
        rc = n_caps ? from_hosts(a, caps, n_caps, 0, in) : from_hosts(a, recs, n_recs, 1, in);
    if (!rc && truthf)
        rc = load_truth(truthf, cli_count(a, "quiet") > 0, in);
    return rc;
}

int qr_cmd_paths(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *tiers = cli_value(&a, "tiers"), *msgs = cli_value(&a, "messages"),
               *truthf = cli_value(&a, "truth");
    int n_caps = 0, n_recs = 0;
    const char **listed = cli_list(&a, "capture", &n_caps),
               **recs = cli_list(&a, "record", &n_recs);
    /* captures: --capture FILE and the arguments (a shell's glob) alike */
    const char **caps = malloc(((size_t)n_caps + (size_t)a.n_pos + 1) * sizeof *caps);
    if (!caps) {
        cli_args_free(&a);
        return cli_fail("paths", "out of memory");
    }
    for (int i = 0; i < n_caps; i++)
        caps[i] = listed[i];
    for (int i = 0; i < a.n_pos; i++)
        caps[n_caps++] = a.pos[i];
    const char *outp = cli_value(&a, "out"), *wm = cli_value(&a, "write-messages");
    qr_paths_opts o;
    qr_tiers_net net;
    uint64_t seed = 1;
    double rate = 0;
    size_t top = 10;
    run_in in = {0};
    uint8_t *outside = NULL;
    char err[QR_ERRBUF_SIZE];
    if (!!tiers + !!msgs + (n_caps > 0) + (n_recs > 0) != 1)
        rc = cli_usage_error("paths", "give one of --tiers FILE, --messages FILE, captures "
                                      "(CAPTURE... or --capture FILE...) and --record FILE...");
    else if (!!cli_value(&a, "map") != (n_caps > 0 || n_recs > 0))
        rc = cli_usage_error("paths", "--map goes with --capture or --record, and they need it");
    else if (truthf && tiers)
        rc =
            cli_usage_error("paths", "--tiers has its own truth; --truth is for the other sources");
    else if (wm && msgs)
        rc = cli_usage_error("paths", "--write-messages writes what --tiers or --capture made");
    else
        rc = parse_options(&a, &o, &net, &seed, &rate, &top);
    if (!rc) {
        cli_paths outs = {0}, ins = {0};
        if (outp)
            cli_paths_add(&outs, "%s/paths.h5", outp);
        if (wm)
            cli_paths_add(&outs, "%s", wm);
        if (tiers || msgs)
            cli_paths_add(&ins, "%s", tiers ? tiers : msgs);
        for (int i = 0; i < n_caps; i++)
            cli_paths_add(&ins, "%s", caps[i]);
        for (int i = 0; i < n_recs; i++)
            cli_paths_add(&ins, "%s", recs[i]);
        if (n_caps || n_recs)
            cli_paths_add(&ins, "%s", cli_value(&a, "map"));
        if (truthf)
            cli_paths_add(&ins, "%s", truthf);
        rc = outp ? cli_check_outside("paths", outp, &ins) : 0;
        if (rc) {
            cli_paths_free(&outs);
            cli_paths_free(&ins);
        } else {
            rc = cli_check_outputs("paths", &outs, &ins);
        }
    }
    const char *slash = wm ? strrchr(wm, '/') : NULL;
    if (!rc && slash && slash != wm) { /* --write-messages' folder, made if missing */
        char parent[4200];
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - wm), wm);
        rc = cli_make_dir("paths", parent);
    }
    if (!rc && tiers)
        rc = simulate(tiers, &net, seed, rate, &in);
    else if (!rc)
        rc = read_messages(&a, caps, n_caps, recs, n_recs, &in);
    if (!rc && !(outside = calloc(in.hosts + 1, 1)))
        rc = cli_fail("paths", "out of memory");
    if (!rc && cli_value(&a, "outside"))
        rc = parse_outside(cli_value(&a, "outside"), in.hosts, outside);
    else if (!rc && tiers) /* the spec simulated is the input, not a truth */
        for (uint32_t i = 0; i < in.spec.n_clients && in.spec.clients[i] < in.hosts; i++)
            outside[in.spec.clients[i]] = 1;
    else if (!rc && !cli_count(&a, "quiet")) /* the truth's spec is never read for it */
        fprintf(stderr, "paths: no --outside: every host is taken as part of the application; "
                        "name its clients with --outside HOSTS\n");
    o.outside = outside;
    if (!rc && wm && qr_msgs_write(wm, in.m, in.n, in.source, err))
        rc = cli_fail("paths", "%s", err);
    if (!rc)
        rc = analyse(&a, &in, &o, top);
    free(outside);
    free(in.m);
    free(in.truth);
    free(in.true_net);
    free(in.ends);
    free(caps);
    cli_args_free(&a);
    return rc;
}
