/* qreplay diagnose: why each slow flow was slow (diagnose.h). */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/diagnose.h"
#include "qreplay/error.h"
#include "qreplay/krec_recording.h"
#include "qreplay/replay.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
#include "tables.h"

static const cli_opt opts[] = {
    {"flows", 0, CLI_VALUE, "SEL",
     "tail (default: flows at or above the --tail slowdown of their size class), all,\n"
     "                         or flow numbers (3,17,40)"},
    {"tail", 0, CLI_VALUE, "Q", "the tail quantile of slowdown per size class (99%)"},
    {"replay", 0, CLI_VALUE, "NAME",
     "take queueing and blackholes from this replay's arrivals (DIR/replay/NAME);\n"
     "                         default: the tagged replay of the smallest threshold, or an\n"
     "                         exact tagged replay run now (native engine) if DIR has none"},
    {"arrivals", 0, CLI_VALUE, "FILE", "an arrival log to take them from instead"},
    {"no-replay", 0, CLI_FLAG, NULL, "no arrivals: only what hosts recorded"},
    {"dupthresh", 0, CLI_VALUE, "N", "duplicate ACKs that start a fast retransmission (3)"},
    {"rto-min", 0, CLI_VALUE, "TIME",
     "imports: the hosts' minimum RTO (200ms, Linux's); a timer's resend sooner is a\n"
     "                         tail-loss probe or RACK's"},
    {"idle", 0, CLI_VALUE, "TIME",
     "imports: application idle that ends an exchange (1ms, and at least 2 smoothed RTTs)"},
    {"no-tlp", 0, CLI_FLAG, NULL,
     "imports: the captured senders send no tail-loss probe (ns-3's TCP, an export of\n"
     "                         a run; Linux with tcp_early_retrans=0): a timer's resend of the\n"
     "                         tail after rto-min is an RTO (default: Linux's first timer resend\n"
     "                         of the tail is its probe)"},
    {"path-rate", 0, CLI_VALUE, "RATE",
     "imports: the paths' bottleneck rate (default: the scenario's link rate if the\n"
     "                         captures come from its network, else measured per connection)"},
    {"from", 0, CLI_VALUE, "SRC",
     "capture (default): the hosts' captures (DIR/recording); record: their kernel\n"
     "                         records instead (DIR/record, qreplay record), no capture needed"},
    {"scenario", 0, CLI_VALUE, "FILE",
     "--from record: the hosts' network (default: DIR/recording's scenario)"},
    CLI_OPT_OUT_FILE("write diagnosis.h5 here (default: DIR/diagnosis.h5; --from record:\n"
                     "                         DIR/diagnosis-record.h5)"),
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "diagnose",
    "DIR",
    "Explain why the slow flows of a recording were slow, from the packets both ends recorded\n"
    "(runtime recordings and imported captures alike). Per flow: size, FCT, the ideal FCT alone\n"
    "on an empty network, the slowdown, a breakdown of its time (handshake, waiting on an RTO,\n"
    "loss recovery, receiver-limited, stalled on a delayed ACK, application-limited, queueing\n"
    "and sharing, sending at full window) and a root cause with its evidence: RTO (tail drop,\n"
    "not enough duplicate ACKs, ACK drops), late fast retransmission, handshake loss, congestion\n"
    "without loss, receiver limit, delayed-ACK stall. A replay's arrivals add the queueing per\n"
    "hop and name the shared-buffer blackhole episodes the flow's losses fell in.\n\n"
    "A connection is its exchanges both ways: data one way between idle periods (a request,\n"
    "its response, a bulk transfer). For imported captures each exchange is diagnosed from what\n"
    "its capture point could see: losses only from evidence (a receive record, retransmissions,\n"
    "SACKs, duplicate ACKs, cumulative ACKs); a packet without a record or an ACK is \"not "
    "seen\",\n"
    "never lost; reordering is not loss; Linux's tail-loss probes, RACK and SACK recovery are\n"
    "told from RTOs. The ideal comes from the connection's own path (its minimum RTT and the\n"
    "rate it sustained, or --path-rate) unless the captures come from the scenario's network\n"
    "(import --network scenario, the testbed); per-queue conclusions (a replay's queueing and\n"
    "blackholes) need that too.\n\n"
    "Writes DIR/diagnosis.h5 (/flows for every flow, /evidence for the selected ones, /causes;\n"
    "with arrivals /blackholes and /blackhole_series), prints a table of the selected flows and\n"
    "the causes per size class, and draws figures (analysis/plot_diagnosis.py): causes per size\n"
    "class, each selected flow's time, and with blackholes the queue the flows lost packets in:\n"
    "its length, threshold and cumulative drops, and the culprit queue (the paper's figure 9).\n\n"
    "--from record diagnoses the hosts' kernel records (qreplay record) instead: exchanges from\n"
    "the applications' socket calls, each ending when its receiver read its last byte; resends\n"
    "with the kernel's own reason (timer, fast, tail-loss probe); a loss where the receiver's\n"
    "record shows the resend was needed; zero windows; the application's idle. Without the\n"
    "receiver's record an exchange has no end; without the path's rate (the scenario's network\n"
    "or --path-rate) an exchange that shows nothing but sending is \"unknown\". A replay's\n"
    "arrivals are read only when --replay or --arrivals names them.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one run or recording folder",
    "examples:\n"
    "  qreplay run scenarios/fattree-k4-websearch.ini -o /tmp/k4 && qreplay diagnose /tmp/k4\n"
    "  qreplay diagnose /tmp/k4 --flows 3,17 --no-replay\n"
    "  qreplay diagnose /tmp/k4 --tail 95%\n"
    "  sudo qreplay testbed --record -o /tmp/tb && qreplay diagnose /tmp/tb --from record "
    "--flows all\n"};

/* The options that shape the diagnosis into o (*ids: the flows asked for, the caller frees them).
 * Returns -1, or the exit code of a usage error. */
static int parse_options(const cli_args *a, qr_diag_opts *o, uint32_t **ids)
{
    const char *sel = cli_value(a, "flows"), *tail = cli_value(a, "tail");
    const char *dup = cli_value(a, "dupthresh"), *rto_min = cli_value(a, "rto-min");
    const char *idle = cli_value(a, "idle"), *path_rate = cli_value(a, "path-rate");
    char err[QR_ERRBUF_SIZE];
    qr_diag_opts_default(o);
    o->no_tlp = cli_count(a, "no-tlp") > 0;
    if (tail) {
        if (qr_parse_percent(tail, &o->tail, err) || !(o->tail > 0 && o->tail < 1)) {
            return cli_usage_error("diagnose", "--tail: '%s' is not a percentage between 0 and 100",
                                   tail);
        }
    }
    if (dup) {
        char *end;
        unsigned long v = strtoul(dup, &end, 10);
        if (!*dup || *end || v < 1 || v > 1000) {
            return cli_usage_error("diagnose", "--dupthresh: '%s' is not a count from 1", dup);
        }
        o->dupthresh = (uint32_t)v;
    }
    if (rto_min && (qr_parse_time_ns(rto_min, &o->rto_min_ns, err) || o->rto_min_ns <= 0)) {
        return cli_usage_error("diagnose", "--rto-min: '%s' is not a time above 0", rto_min);
    }
    if (idle && (qr_parse_time_ns(idle, &o->idle_ns, err) || o->idle_ns <= 0)) {
        return cli_usage_error("diagnose", "--idle: '%s' is not a time above 0", idle);
    }
    if (path_rate && (qr_parse_rate_bps(path_rate, &o->path_rate_bps, err) || !o->path_rate_bps)) {
        return cli_usage_error("diagnose", "--path-rate: '%s' is not a rate above 0", path_rate);
    }
    if (sel && !strcmp(sel, "all")) {
        o->all = 1;
    } else if (sel && strcmp(sel, "tail") != 0) {
        size_t n = 1;
        for (const char *p = sel; *p; p++)
            n += *p == ',';
        *ids = calloc(n, sizeof **ids);
        if (!*ids) {
            return cli_fail("diagnose", "out of memory");
        }
        const char *p = sel;
        for (size_t i = 0; i < n; i++) {
            char *end;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p || (*end != ',' && *end) || v > UINT32_MAX || *p == '-' || *p == '+') {
                return cli_usage_error(
                    "diagnose", "--flows: '%s' is not tail, all or a list of flow numbers", sel);
            }
            (*ids)[i] = (uint32_t)v;
            p = end + 1;
        }
        o->flows = *ids;
        o->n_flows = n;
    }
    return -1;
}

/* What was read, and the diagnosis, on standard output. */
static void print_summary(const char *rec_dir, int no_path, const cli_analysis_in *in,
                          const char *out, const qr_diagnosis *dg)
{
    printf("recording          %s (%zu flows, %zu selected)\n", cli_shown(rec_dir), dg->n_flows,
           dg->selected);
    if (no_path)
        printf("arrivals           none: the captures' network is unknown (no per-queue "
               "conclusions; import --network scenario if they come from the scenario's)\n");
    else
        printf("arrivals           %s\n", cli_analysis_arrivals_text(in));
    printf("output             %s\n\n", cli_shown(out));
    cli_print_diagnosis(dg, stdout);
}

/* The network the records' hosts ran in: --scenario's, else the recording's in DIR (the
 * testbed's DIR/recording). NULL after an error. */
static qr_scenario *records_scenario(const cli_args *a, const char *dir)
{
    const char *file = cli_value(a, "scenario");
    qr_scenario *s = NULL;
    char err[QR_ERRBUF_SIZE], rec_dir[4200], h5[4300];
    if (file)
        return cli_load_scenario("diagnose", file, NULL, 0, &s) ? NULL : s;
    cli_recording_dir(dir, rec_dir, sizeof rec_dir);
    snprintf(h5, sizeof h5, "%s/recording.h5", rec_dir);
    if (!cli_exists(h5)) {
        cli_fail("diagnose",
                 "--from record: %s: none to take the hosts' network from (give --scenario FILE)",
                 h5);
        return NULL;
    }
    if (qr_scenario_from_h5(&s, h5, NULL, rec_dir, err)) {
        cli_fail("diagnose", "%s", err);
        return NULL;
    }
    return s;
}

/* qreplay diagnose DIR --from record: the kernel records in DIR/record. */
static int diagnose_records(const cli_args *a, const char *dir, const char *out, qr_diag_opts *o,
                            int quiet, int figures)
{
    char err[QR_ERRBUF_SIZE], arrivals[4400] = "";
    const char *replay = cli_value(a, "replay"), *arr = cli_value(a, "arrivals");
    qr_recording *like = NULL;
    qr_krec_set *ks = NULL;
    qr_diagnosis dg = {0};
    cli_paths in = {0}, outs = {0};
    char rdir[4200];
    snprintf(rdir, sizeof rdir, "%s/record", dir);
    if (!cli_exists(rdir))
        return cli_fail("diagnose",
                        "--from record: %s: no such folder (qreplay record writes one record per "
                        "host there; the testbed's --record too)",
                        rdir);
    qr_scenario *s = records_scenario(a, dir);
    int rc = s ? 0 : 1;
    if (!rc && (replay || arr))
        rc = cli_replay_arrivals("diagnose", dir, replay, arr, 0, arrivals, sizeof arrivals);
    if (!rc && (rc = cli_open_records(dir, "record", 0, s, &like, &ks, &in, err)))
        rc = cli_fail("diagnose", "--from record: %s", err);
    if (!rc) {
        if (arrivals[0])
            cli_paths_add(&in, "%s", arrivals);
        cli_paths_add(&outs, "%s", out);
        rc = cli_check_outputs("diagnose", &outs, &in);
        in = (cli_paths){0};
    }
    o->arrivals = arrivals[0] ? arrivals : NULL;
    if (!rc && (rc = qr_diagnose_records(ks, o, &dg, err)))
        rc = cli_fail("diagnose", "%s/record: %s", dir, err);
    if (!rc && qr_diagnosis_write(out, s, qr_recording_id(qr_krec_set_recording(ks)), &dg, err))
        rc = cli_fail("diagnose", "%s", err);
    if (!rc && !quiet) {
        qr_krec_set_stats st;
        qr_krec_set_stats_get(ks, &st);
        printf("records            %s/record: %zu hosts, %" PRIu64 " flows (%" PRIu64
               " seen at both ends), %zu selected\n",
               cli_shown(dir), st.records, st.flows, st.both_ends, dg.selected);
        printf("arrivals           %s\n", arrivals[0] ? arrivals : "none");
        printf("output             %s\n\n", cli_shown(out));
        cli_print_diagnosis(&dg, stdout);
    }
    if (!rc && figures && dg.selected) {
        char figdir[4300];
        snprintf(figdir, sizeof figdir, "%s/figures", dir);
        rc = cli_figures("diagnose", "plot_diagnosis.py", out, figdir, quiet);
    }
    cli_paths_free(&in);
    qr_diagnosis_free(&dg);
    qr_krec_set_close(ks);
    qr_recording_close(like);
    qr_scenario_destroy(s);
    return rc;
}

int qr_cmd_diagnose(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *dir = a.pos[0], *outp = cli_value(&a, "out");
    const char *replay = cli_value(&a, "replay"), *arrivals = cli_value(&a, "arrivals");
    int quiet = cli_count(&a, "quiet") > 0, no_replay = cli_count(&a, "no-replay") > 0;
    int figures = cli_count(&a, "no-figures") == 0;
    char err[QR_ERRBUF_SIZE], rec_dir[4096], out[4200];
    cli_analysis_in in = {0};
    qr_recording *rec = NULL;
    qr_diagnosis dg = {0};
    uint32_t *ids = NULL;
    qr_diag_opts o;
    cli_progress prog;
    cli_progress_init(&prog, quiet);
    if ((rc = parse_options(&a, &o, &ids)) >= 0)
        goto out;
    /* DIR/diagnosis.h5 and its figures: the run folder is the transaction (main commits) */
    if (!(dir = cli_analysis_folder("diagnose", dir, outp, quiet))) {
        rc = 1;
        goto out;
    }
    const char *from = cli_value(&a, "from");
    if (from && strcmp(from, "capture") && strcmp(from, "record")) {
        rc = cli_usage_error("diagnose", "--from: '%s' is neither capture nor record", from);
        goto out;
    }
    int records = from && !strcmp(from, "record");
    if (!records && cli_value(&a, "scenario")) {
        rc = cli_usage_error("diagnose", "--scenario: only with --from record");
        goto out;
    }
    if (outp)
        snprintf(out, sizeof out, "%s", outp);
    else
        snprintf(out, sizeof out, "%s/diagnosis%s.h5", dir, records ? "-record" : "");
    if (records) {
        rc = no_replay && (replay || arrivals)
                 ? cli_usage_error("diagnose", "--no-replay with --replay or --arrivals")
                 : diagnose_records(&a, dir, out, &o, quiet, figures);
        goto out;
    }
    cli_recording_dir(dir, rec_dir, sizeof rec_dir);
    rc = cli_replay_arrivals("diagnose", dir, replay, arrivals, no_replay, in.arrivals,
                             sizeof in.arrivals);
    if (rc)
        goto out;
    rc = cli_analysis_open("diagnose", rec_dir, NULL, out, 0, &prog, &in);
    if (rc)
        goto out;
    rec = in.rec;
    /* per-queue conclusions need the packets' paths: captures from an unknown network have none */
    int no_path = qr_recording_imported(rec) && !qr_recording_network_known(rec);
    if (no_path && (replay || arrivals)) {
        rc = cli_fail("diagnose",
                      "%s: the captures' network is unknown, so a replay through the scenario's "
                      "network says nothing of their queues (import them with --network scenario "
                      "if they were taken in it)",
                      rec_dir);
        goto out;
    }
    if (no_path)
        in.arrivals[0] = '\0';
    else if (!no_replay && (rc = cli_analysis_replay("diagnose", out, &prog, &in)))
        goto out;
    o.arrivals = in.arrivals[0] ? in.arrivals : NULL;
    o.progress = cli_progress_line;
    o.progress_ctx = &prog;
    rc = qr_diagnose(rec, &o, &dg, err);
    cli_analysis_replay_done(&in);
    cli_progress_done(&prog);
    if (rc) {
        rc = cli_fail("diagnose", "%s: %s", rec_dir, err);
        goto out;
    }
    if (qr_diagnosis_write(out, qr_recording_scenario(rec), qr_recording_id(rec), &dg, err)) {
        rc = cli_fail("diagnose", "%s", err);
        goto out;
    }
    rc = 0;
    if (!quiet)
        print_summary(rec_dir, no_path, &in, out, &dg);
    if (figures && dg.selected) {
        char figdir[4300];
        snprintf(figdir, sizeof figdir, "%s/figures", dir);
        rc = cli_figures("diagnose", "plot_diagnosis.py", out, figdir, quiet);
    }
out:
    qr_diagnosis_free(&dg);
    cli_analysis_close(&in);
    free(ids);
    cli_args_free(&a);
    return rc;
}
