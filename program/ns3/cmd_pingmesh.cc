/* qreplay pingmesh: Pingmesh's probe matrices of a run, and the places their pattern points at
 * (pingmesh.h). Given a scenario it first runs it with the probing agents. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "cli.h"
#include "opt.h"
#include "program.h"
#include "tables.h"

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/pingmesh.h"
#include "qreplay/pingmesh_score.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/units.h"
}

static const cli_opt kOpts[] = {
    {"interval",
     0,
     CLI_VALUE,
     "T",
     "SCENARIO: probe every T per pair (default: its [pingmesh] interval, or 100us)"},
    CLI_OPT_SET,
    {"alpha",
     0,
     CLI_VALUE,
     "P",
     "the rule's significance, before correcting for the number of places (0.1%)"},
    {"ratio", 0, CLI_VALUE, "R", "a flagged place's drop rate over the rest's, at least (2)"},
    {"window", 0, CLI_VALUE, "T", "the SLA's time window (1ms)"},
    {"sla-drop", 0, CLI_VALUE, "P", "the SLA's drop rate: a window above it breaches it"},
    {"sla-p99", 0, CLI_VALUE, "T", "the SLA's round-trip p99: a window above it breaches it"},
    {"bh-pair", 0, CLI_VALUE, "P", "black holes: a pair losing this share has the symptom (25%)"},
    {"bh-tor", 0, CLI_VALUE, "P", "a ToR with this share of symptomatic servers is eligible (50%)"},
    {"bh-pod", 0, CLI_VALUE, "P", "a podset with this share of symptomatic ToRs is eligible (50%)"},
    {"syn-rto", 0, CLI_VALUE, "T", "the kernel's first SYN timeout, doubling after (1s: Linux)"},
    CLI_OPT_OUT("SCENARIO: the run folder (default: the scenario's [output] dir)"),
    {"no-figures", 0, CLI_FLAG, nullptr, "do not draw the figures"},
    CLI_OPT_QUIET,
};

static const cli_spec kSpec = {
    "pingmesh",
    "SCENARIO|DIR",
    "Pingmesh (Guo et al., SIGCOMM 2015) over a run: probing agents on every host send small\n"
    "UDP probes, each answered by the probed host: every server probes every server of its\n"
    "rack, and the first [pingmesh] servers (2) of each rack probe the same-numbered servers\n"
    "of every other rack, each pair every [pingmesh] interval, each probe from a new source\n"
    "port so that probes spread over the ECMP paths. A probe not answered within [pingmesh]\n"
    "timeout (2 ms) is lost. Probes share the queues and the planted link faults with the\n"
    "traffic but are not recorded (truth.h5 /probes keeps the agents' log).\n\n"
    "Given a SCENARIO it runs it with the agents (qreplay runtime, into -o DIR), then\n"
    "analyses; given a run folder DIR made with [pingmesh] interval set, it analyses.\n\n"
    "Writes DIR/pingmesh.h5: /pairs and /racks (per probe pair and per rack pair: probes,\n"
    "losses, drop rate, round-trip p50/p99; /racks is the Pingmesh matrix, row-major), /places,\n"
    "/curve, /summary and /sla (per level, rack, pod or spine, and per --window: drop rate\n"
    "and round-trip p50/p99/p99.9, the windows above --sla-drop or --sla-p99 marked); prints\n"
    "the matrix, the flagged places, the SLA and the probes' own load, and\n"
    "draws heatmaps of drop rate and p99 latency ordered by pod and rack\n"
    "(analysis/plot_pingmesh.py).\n\n"
    "The detection rule: among the spine (all probes between pods), each pod (its racks'\n"
    "probes to other pods), each rack, each server and each rack pair, flag the place whose\n"
    "drop rate stands out most from the rest (Bernoulli scan likelihood ratio), if it is at\n"
    "least --ratio times the rest's and significant at --alpha over all places; set its\n"
    "probes aside and repeat. With planted gray or blackhole faults ([faults]) it is scored:\n"
    "a flagged place is right if one of the cables it points at is faulty; and the rule is\n"
    "rerun on the first N probes to find how many it needed.\n\n"
    "The black-hole rule (Pingmesh's section 5.1): a pair that lost at least --bh-pair of its\n"
    "probes (and 3) has the symptom, and so do its two servers; a ToR whose servers have it in\n"
    "at least --bh-tor, or a podset whose ToRs do in at least --bh-pod, is a candidate; the\n"
    "one touching the most symptom pairs is flagged and its pairs explained; repeat. A tie\n"
    "between two ToRs stops it (unknown). /blackholes holds every ToR and podset it tested.\n\n"
    "Drops from connect times (Pingmesh's own measure): on the testbed the probes are TCP\n"
    "connects; with [pingmesh] connect_wait (3500ms) the agents wait for them, and a connect\n"
    "whose SYN or SYN-ACK was lost takes the kernel's SYN timeout (--syn-rto, 1s on Linux, then\n"
    "doubling). The share of connects that took one is the drop rate, beside the direct count.\n",
    kOpts,
    sizeof kOpts / sizeof kOpts[0],
    1,
    1,
    "expected one scenario file or run folder",
    "examples:\n"
    "  qreplay pingmesh scenarios/faults/gray-k4.ini -o /tmp/pm\n"
    "  qreplay pingmesh /tmp/pm --ratio 3\n"};

static void
Status(void* ctx, const char* line)
{
    cli_progress_update(static_cast<cli_progress*>(ctx), "pingmesh: %s", line);
}

static bool
IsDir(const char* p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* qreplay pingmesh SCENARIO: the scenario run with the agents on (--interval, or its own
 * interval, or the default), into the recording of the output folder *dir. Returns 0, or the
 * exit status after the error. */
static int
PingmeshRun(const char* arg,
            const char* interval,
            const char** sets,
            int nSets,
            const char* outOpt,
            bool quiet,
            qr_scenario** s,
            std::string* dir)
{
    char err[QR_ERRBUF_SIZE];
    std::vector<const char*> all(sets, sets + nSets);
    std::string iv;
    bool userSet = false;
    for (int i = 0; i < nSets; i++)
        userSet |= strncmp(sets[i], "pingmesh.interval=", 18) == 0;
    if (interval && userSet)
        return cli_usage_error("pingmesh",
                               "--interval and --set pingmesh.interval say the same thing");
    if (interval)
    {
        int64_t ns;
        if (qr_parse_time_ns(interval, &ns, err) || ns <= 0)
            return cli_usage_error("pingmesh", "--interval: '%s' is not a time above 0", interval);
        iv = std::string("pingmesh.interval=") + interval;
        all.push_back(iv.c_str());
    }
    if (cli_load_scenario("pingmesh", arg, all.data(), static_cast<int>(all.size()), s))
        return 1;
    if (qr_scenario_config(*s)->pingmesh.interval_ns == 0)
    {
        qr_scenario_destroy(*s);
        *s = nullptr;
        all.push_back(QR_PINGMESH_DEFAULT_INTERVAL);
        if (cli_load_scenario("pingmesh", arg, all.data(), static_cast<int>(all.size()), s))
            return 1;
    }
    *dir = outOpt ? outOpt : qr_scenario_config(*s)->output.dir;
    cli_catch_signals();
    // the recording and pingmesh.h5 in one folder, swapped in whole (main commits)
    const char* work = cli_output_recording("pingmesh", dir->c_str(), quiet);
    if (!work)
    {
        cli_restore_signals();
        return 1;
    }
    *dir = work;
    int rc = QrRuntimeStep("pingmesh", *s, arg, *dir, true, quiet);
    cli_restore_signals();
    if (!rc && !quiet)
        printf("\n");
    return rc;
}

/* The analysis of the run in dir: the agents' probe log (scored against the truth where there
 * is one) into dir/pingmesh.h5, its summary and figures. Returns the exit status. */
static int
PingmeshAnalyse(const std::string& dir,
                qr_scenario** s,
                qr_pingmesh_opts* o,
                qr_pingmesh_result* r,
                bool quiet,
                bool figures)
{
    char err[QR_ERRBUF_SIZE], recDir[4096];
    cli_recording_dir(dir.c_str(), recDir, sizeof recDir);
    // the analysis reads the agents' log; the truth, where there is one, only scores it
    std::string log = std::string(recDir) + "/probes.h5";
    std::string truth = std::string(recDir) + "/truth/truth.h5";
    std::string h5 = dir + "/pingmesh.h5";
    bool scored = cli_exists(truth.c_str());
    if (!cli_exists(log.c_str()))
        return cli_fail("pingmesh",
                        "%s: no probe log (recording/probes.h5): the run's hosts did not probe "
                        "(give qreplay pingmesh a scenario; a run of an older qreplay kept the "
                        "log in its truth: run it again)",
                        dir.c_str());
    cli_paths ins{}, outs{};
    cli_paths_add_recording(&ins, recDir);
    cli_paths_add(&outs, "%s", h5.c_str());
    if (cli_check_outputs("pingmesh", &outs, &ins))
        return 1;
    cli_progress prog;
    cli_progress_init(&prog, quiet);
    o->progress = Status;
    o->progress_ctx = &prog;
    char recId[QR_ID_SIZE];
    int rc;
    if (qr_h5_recording_id((std::string(recDir) + "/recording.h5").c_str(), recId, err) ||
        qr_h5_check_recording(log.c_str(), recId, "run qreplay runtime again", err))
        rc = QR_ESTALE;
    else
        rc = qr_pingmesh_evaluate(log.c_str(), scored ? truth.c_str() : nullptr, o, r, err);
    cli_progress_done(&prog);
    if (!rc && !*s)
        rc = qr_scenario_from_h5(s, log.c_str(), nullptr, nullptr, err);
    if (!rc)
        rc = qr_pingmesh_write(h5.c_str(), *s, recId, r, err);
    if (rc)
        return cli_fail("pingmesh", "%s", err);
    if (!quiet)
    {
        printf("run                %s\noutput             %s\n\n",
               cli_shown(dir.c_str()),
               cli_shown(h5.c_str()));
        cli_print_pingmesh(r, stdout);
    }
    return figures ? cli_figures("pingmesh",
                                 "plot_pingmesh.py",
                                 h5.c_str(),
                                 (dir + "/figures").c_str(),
                                 quiet)
                   : 0;
}

/* --window, --sla-drop, --sla-p99 and the black-hole shares into o. Returns -1, or the exit code
 * of a usage error. */
static int
SlaOptions(const cli_args& a, qr_pingmesh_opts* o)
{
    char err[QR_ERRBUF_SIZE];

    struct
    {
        const char* name;
        double* to;
    } shares[] = {{"bh-pair", &o->bh_pair}, {"bh-tor", &o->bh_tor}, {"bh-pod", &o->bh_pod}};

    for (const auto& sh : shares)
    {
        const char* v = cli_value(&a, sh.name);
        if (v && (qr_parse_percent(v, sh.to, err) || !(*sh.to > 0 && *sh.to <= 1)))
            return cli_usage_error("pingmesh",
                                   "--%s: '%s' is not a percentage above 0, at most 100",
                                   sh.name,
                                   v);
    }
    const char* w = cli_value(&a, "window");
    const char* d = cli_value(&a, "sla-drop");
    const char* p = cli_value(&a, "sla-p99");
    if (w && (qr_parse_time_ns(w, &o->window_ns, err) || o->window_ns <= 0))
        return cli_usage_error("pingmesh", "--window: '%s' is not a duration above 0 (1ms)", w);
    if (d && (qr_parse_percent(d, &o->sla_drop, err) || !(o->sla_drop > 0 && o->sla_drop < 1)))
        return cli_usage_error("pingmesh",
                               "--sla-drop: '%s' is not a percentage between 0 and 100",
                               d);
    if (p && (qr_parse_time_ns(p, &o->sla_p99_ns, err) || o->sla_p99_ns <= 0))
        return cli_usage_error("pingmesh", "--sla-p99: '%s' is not a duration above 0 (500us)", p);
    const char* rto = cli_value(&a, "syn-rto");
    if (rto && (qr_parse_time_ns(rto, &o->syn_rto_ns, err) || o->syn_rto_ns <= 0))
        return cli_usage_error("pingmesh", "--syn-rto: '%s' is not a duration above 0 (1s)", rto);
    return -1;
}

extern "C" int
qr_cmd_pingmesh(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char* arg = a.pos[0];
    const char* interval = cli_value(&a, "interval");
    const char* outOpt = cli_value(&a, "out");
    bool quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    qr_pingmesh_opts o;
    qr_pingmesh_opts_default(&o);
    qr_pingmesh_result r{};
    qr_scenario* s = nullptr;
    std::string dir = arg;
    char err[QR_ERRBUF_SIZE];
    int nSets;
    const char** sets = cli_list(&a, "set", &nSets);
    if (qr_pingmesh_opts_parse(&o, cli_value(&a, "alpha"), cli_value(&a, "ratio"), err))
        rc = cli_usage_error("pingmesh", "%s", err);
    else if ((rc = SlaOptions(a, &o)) >= 0)
    {
        // a usage error of the SLA's options: rc is its exit code
    }
    else if (!cli_exists(arg))
        rc = cli_fail("pingmesh", "%s: no such scenario file or run folder", arg);
    else if (IsDir(arg) && (interval || nSets || outOpt))
        rc = cli_usage_error("pingmesh",
                             "--interval, --set and -o run a scenario; %s is a run folder",
                             arg);
    else if (!IsDir(arg))
        rc = PingmeshRun(arg, interval, sets, nSets, outOpt, quiet, &s, &dir);
    else
    {
        const char* work = cli_output_folder("pingmesh", dir.c_str(), quiet);
        rc = work ? 0 : 1;
        if (work)
            dir = work;
    }
    if (rc == 0)
        rc = PingmeshAnalyse(dir, &s, &o, &r, quiet, figures);
    qr_pingmesh_free(&r);
    qr_scenario_destroy(s);
    cli_args_free(&a);
    return rc;
}
