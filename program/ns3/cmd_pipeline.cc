/* qreplay run, replay and metrics: the study's main job over a run folder. The replays are ns-3's
 * (helper/pipeline.h); the results are the core's (qreplay/results.h). */
#include "helper/pipeline.h"
#include "tables.h"

#include "cli.h"
#include "opt.h"
#include "program.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/units.h"
}

using namespace ns3;

namespace
{

const cli_opt kRunOpts[] = {
    CLI_OPT_ENGINE,
    CLI_OPT_SET,
    CLI_OPT_OUT("run folder (default: the scenario's [output] dir)"),
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

const cli_spec kRunSpec = {
    "run",
    "SCENARIO",
    "The whole study on one scenario: the recorded closed-loop runtime (DIR/recording),\n"
    "an open-loop replay for every mode of [replay] modes at every threshold of\n"
    "[sampling] th (DIR/replay/<mode>_th_<us>), the fidelity metrics of each against the\n"
    "runtime (DIR/results.h5: qdiff per arrival, drop error, summaries; the resolved\n"
    "scenario and code version as attributes) and the figures (DIR/figures, PNG and PDF).\n"
    "Prints a table: one row per variant, qdiff mean and p99 in MTU, drops in runtime and\n"
    "replay, false accepts, false drops, wrong locations, drop error.\n",
    kRunOpts,
    sizeof kRunOpts / sizeof kRunOpts[0],
    1,
    1,
    "expected one SCENARIO file",
    nullptr};

const cli_opt kReplayOpts[] = {
    {"th", 0, CLI_VALUE, "TIME", "sampling threshold (default: the scenario's first)"},
    {"mode", 0, CLI_VALUE, "M", "plain or tagged (default tagged)"},
    {"name",
     0,
     CLI_VALUE,
     "NAME",
     "the variant's folder name (default <mode>_th_<us>, + _reconciled)"},
    {"clock",
     0,
     CLI_VALUE,
     "C",
     "recorded (default: send times as the hosts' clocks recorded them) or reconcile\n"
     "                         (take out the offsets estimated from the recording: qreplay "
     "clocks)"},
    {"scenario", 0, CLI_VALUE, "FILE", "scenario to replay with instead of the recording's"},
    {"read",
     0,
     CLI_VALUE,
     "HOW",
     "stream (default with the native engine and recorded clocks: the captures are\n"
     "                         read and sampled as the replay goes, memory independent of the\n"
     "                         recording's length) or whole (read into memory first)"},
    CLI_OPT_ENGINE,
    CLI_OPT_SET,
    CLI_OPT_QUIET,
};

const cli_spec kReplaySpec = {
    "replay",
    "DIR",
    "Replay the recording in DIR/recording (from qreplay run or qreplay runtime -o\n"
    "DIR/recording) open loop: every host injects its recorded packets at send times\n"
    "inferred from sampling at TIME (0: exact), in mode plain (the runtime's admission)\n"
    "or tagged (packets the receivers saw lost carry a drop tag; switches drop a tagged\n"
    "packet only when its queue is within [replay] margin of its threshold). Writes\n"
    "DIR/replay/NAME: arrivals.qra and replay.h5. Then run 'qreplay metrics DIR'. The\n"
    "network comes from the recording's scenario, or from --scenario FILE (same topology);\n"
    "--set changes keys for a what-if (buffer.size, buffer.alpha, replay.margin, ...).\n",
    kReplayOpts,
    sizeof kReplayOpts / sizeof kReplayOpts[0],
    1,
    1,
    "expected one run folder DIR",
    nullptr};

const cli_opt kMetricsOpts[] = {
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

const cli_spec kMetricsSpec = {
    "metrics",
    "DIR",
    "Compare every replay in DIR/replay with the runtime in DIR/recording and write\n"
    "DIR/results.h5 (and the figures in DIR/figures); prints the summary table.\n",
    kMetricsOpts,
    sizeof kMetricsOpts / sizeof kMetricsOpts[0],
    1,
    1,
    "expected one run folder DIR",
    nullptr};

bool
IsDir(const std::string& p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/* Remove the replays a previous run left in DIR/replay (only the files qreplay writes). */
void
ClearReplays(const std::string& dir)
{
    std::string r = dir + "/replay";
    DIR* d = opendir(r.c_str());
    if (!d)
        return;
    std::vector<std::string> names;
    while (struct dirent* e = readdir(d))
        if (e->d_name[0] != '.')
            names.push_back(e->d_name);
    closedir(d);
    for (const std::string& n : names)
    {
        std::string v = r + "/" + n;
        unlink((v + "/replay.h5").c_str());
        unlink((v + "/arrivals.qra").c_str());
        rmdir(v.c_str());
    }
}

int
Status(void* ctx, const char* s)
{
    cli_progress_update(static_cast<cli_progress*>(ctx), "%s", s);
    return cli_signal != 0; // stop on SIGINT or SIGTERM
}

void
StatusLine(void* ctx, const char* s)
{
    Status(ctx, s);
}

struct Interrupted : std::exception
{
};

/* The files metrics reads and the one it writes. */
void
CheckMetricsOutputs(const char* cmd, const std::string& dir)
{
    cli_paths in{}, out{};
    cli_paths_add_recording(&in, (dir + "/recording").c_str());
    char** v = nullptr;
    size_t n = 0;
    if (qr_variants_list(dir.c_str(), &v, &n) == QR_OK)
    {
        for (size_t i = 0; i < n; i++)
            cli_paths_add_dir(&in, (dir + "/replay/" + v[i]).c_str());
        qr_variants_free(v, n);
    }
    cli_paths_add(&out, "%s/results.h5", dir.c_str());
    int bad = cli_check_outputs(cmd, &out, &in);
    if (bad)
        throw std::runtime_error("");
}

/* Compare the run folder's replays with its runtime: results.h5 and the table. */
void
Results(const std::string& dir, cli_progress* p, bool quiet)
{
    qr_variant_summary* rows = nullptr;
    size_t n = 0;
    char err[QR_ERRBUF_SIZE];
    int rc = qr_results_write(dir.c_str(), Status, p, &rows, &n, err);
    if (rc == QR_ECANCELED)
        throw Interrupted();
    if (rc)
        throw std::runtime_error(err);
    cli_progress_done(p);
    if (!quiet)
    {
        cli_print_results(stdout, rows, n);
        fflush(stdout);
    }
    qr_variant_summaries_free(rows);
}

using ScenarioPtr = std::unique_ptr<qr_scenario, void (*)(qr_scenario*)>;
using RecordingPtr = std::unique_ptr<qr_recording, void (*)(qr_recording*)>;

RecordingPtr
OpenRecording(const std::string& dir, const qr_scenario* check)
{
    qr_recording* r = nullptr;
    char err[QR_ERRBUF_SIZE];
    if (qr_recording_open(&r, dir.c_str(), check, err))
        throw std::runtime_error(err);
    return RecordingPtr(r, qr_recording_close);
}

} // namespace

int
QrReplaysAndMetrics(const char* command,
                    const std::string& dir,
                    const qr_scenario* sc,
                    const char* engine,
                    bool quiet)
{
    const qr_config* c = qr_scenario_config(sc);
    int rc = 0;
    unlink((dir + "/results.h5").c_str());
    ClearReplays(dir);
    cli_progress p;
    cli_progress_init(&p, quiet);
    try
    {
        RecordingPtr rec = OpenRecording(dir + "/recording", sc);
        std::vector<qr_variant_settings> plan(qr_variant_plan(c, nullptr, 0));
        qr_variant_plan(c, plan.data(), plan.size());
        for (qr_variant_settings& set : plan)
        {
            if (rc)
                break;
            set.engine_name = engine;
            set.cancel = &cli_signal;
            set.status = StatusLine;
            set.status_ctx = &p;
            char name[256], err[QR_ERRBUF_SIZE];
            qr_variant_settings_name(&set, name, sizeof name);
            if (!quiet)
            {
                cli_progress_done(&p);
                printf("== replay %s\n", name);
                fflush(stdout);
            }
            int vrc = qr_replay_variant(dir.c_str(),
                                        sc,
                                        rec.get(),
                                        &set,
                                        ReplayEngineByName(engine),
                                        nullptr,
                                        err);
            if (vrc == QR_ECANCELED)
            {
                cli_progress_done(&p);
                fprintf(stderr, "qreplay %s: interrupted; no results written\n", command);
                rc = cli_interrupted_status();
            }
            else if (vrc)
                throw std::runtime_error(err);
        }
        if (rc == 0)
        {
            if (!quiet)
            {
                cli_progress_done(&p);
                printf("== metrics -> %s/results.h5\n", dir.c_str());
                fflush(stdout);
            }
            Results(dir, &p, quiet);
        }
    }
    catch (const Interrupted&)
    {
        cli_progress_done(&p);
        fprintf(stderr, "qreplay %s: interrupted; no results written\n", command);
        rc = cli_interrupted_status();
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        rc = *e.what() ? cli_fail(command, "%s", e.what()) : 1;
    }
    return rc;
}

const char*
QrEngineOption(const char* command, const char* value)
{
    const char* name = value ? value : "native";
    if (ReplayEngineByName(name))
        return name;
    cli_usage_error(command, "--engine: unknown engine '%s' (native or ns3)", name);
    return nullptr;
}

extern "C" int
qr_cmd_metrics(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kMetricsSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    std::string dir = a.pos[0];
    bool quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    cli_args_free(&a);
    if (cli_lock_folder("metrics", dir.c_str()))
        return 1;
    cli_progress p;
    cli_progress_init(&p, quiet);
    cli_catch_signals();
    try
    {
        CheckMetricsOutputs("metrics", dir);
        Results(dir, &p, quiet);
        if (!quiet)
            printf("output             %s/results.h5\n", dir.c_str());
        fflush(stdout);
    }
    catch (const Interrupted&)
    {
        cli_progress_done(&p);
        fprintf(stderr, "qreplay metrics: interrupted; no results.h5 written\n");
        cli_restore_signals();
        return cli_interrupted_status();
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        cli_restore_signals();
        return *e.what() ? cli_fail("metrics", "%s", e.what()) : 1;
    }
    cli_restore_signals();
    return figures ? cli_figures("metrics",
                                 "plot_results.py",
                                 (dir + "/results.h5").c_str(),
                                 (dir + "/figures").c_str(),
                                 quiet)
                   : 0;
}

extern "C" int
qr_cmd_replay(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kReplaySpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    std::string dir = a.pos[0];
    if (cli_lock_folder("replay", dir.c_str()))
    {
        cli_args_free(&a);
        return 1;
    }
    bool quiet = cli_count(&a, "quiet") > 0;
    int nSets;
    const char** sets = cli_list(&a, "set", &nSets);
    const char *mode = cli_value(&a, "mode"), *th = cli_value(&a, "th"),
               *name = cli_value(&a, "name"), *scen = cli_value(&a, "scenario"),
               *clock = cli_value(&a, "clock"), *read = cli_value(&a, "read");
    const char* engine = QrEngineOption("replay", cli_value(&a, "engine"));
    qr_variant_settings set{};
    set.mode = QR_MODE_TAGGED;
    rc = engine ? -1 : 2;
    if (mode && !strcmp(mode, "plain"))
        set.mode = QR_MODE_PLAIN;
    else if (mode && !strcmp(mode, "tagged"))
        set.mode = QR_MODE_TAGGED;
    else if (rc < 0 && mode)
        rc = cli_usage_error("replay", "--mode: unknown replay mode '%s' (plain or tagged)", mode);
    if (rc < 0 && clock && !strcmp(clock, "reconcile"))
        set.reconcile = 1;
    else if (rc < 0 && clock && strcmp(clock, "recorded"))
        rc =
            cli_usage_error("replay", "--clock: unknown clock '%s' (recorded or reconcile)", clock);
    if (rc < 0 && read && strcmp(read, "stream") && strcmp(read, "whole"))
        rc = cli_usage_error("replay", "--read: '%s' is neither stream nor whole", read);
    if (rc < 0 && read && !strcmp(read, "stream") && (set.reconcile || strcmp(engine, "native")))
        rc = cli_usage_error("replay",
                             "--read stream: only the native engine with recorded clocks "
                             "streams (the ns-3 engine and --clock reconcile read whole)");
    if (rc < 0 && name &&
        (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/')))
        rc = cli_usage_error("replay",
                             "--name: '%s' is not a folder name (no '/', not . or ..)",
                             name);
    /* a name is never cut: two long names would share one folder */
    if (rc < 0 && name && strlen(name) > QR_VARIANT_NAME_MAX)
        rc = cli_usage_error("replay",
                             "--name: %zu characters, more than a variant's name may have (%d)",
                             strlen(name),
                             QR_VARIANT_NAME_MAX);
    if (rc < 0 && !IsDir(dir + "/recording"))
        rc = cli_fail("replay",
                      "%s/recording: no recording (run qreplay run or qreplay runtime -o "
                      "%s/recording)",
                      dir.c_str(),
                      dir.c_str());
    qr_scenario* sc = nullptr;
    if (rc < 0 && scen && cli_load_scenario("replay", scen, sets, nSets, &sc))
        rc = 1;
    if (rc >= 0)
    {
        cli_args_free(&a);
        return rc;
    }
    ScenarioPtr s(sc, qr_scenario_destroy);
    cli_progress p;
    cli_progress_init(&p, quiet);
    cli_catch_signals();
    char err[QR_ERRBUF_SIZE];
    try
    {
        if (!s)
        {
            // the recording's own scenario, with the overrides
            std::string h5 = dir + "/recording/recording.h5";
            int lrc =
                qr_scenario_from_h5(&sc, h5.c_str(), nullptr, (dir + "/recording").c_str(), err);
            s.reset(sc);
            for (int i = 0; !lrc && i < nSets; i++)
                lrc = qr_scenario_set(sc, sets[i], err);
            if (!lrc)
                lrc = qr_scenario_validate(sc, err);
            if (lrc)
                throw std::runtime_error(err);
        }
        const qr_config* c = qr_scenario_config(s.get());
        set.th_ns = c->sampling.th_ns[0];
        if (th && qr_parse_time_ns(th, &set.th_ns, err))
            throw std::runtime_error(std::string("--th: ") + err);
        if (set.th_ns < 0)
            throw std::runtime_error("--th: must not be negative");
        bool stream = read ? !strcmp(read, "stream") : !set.reconcile && !strcmp(engine, "native");
        RecordingPtr rec(nullptr, qr_recording_close);
        if (stream)
        {
            qr_recording* r = nullptr;
            if (qr_recording_open_stream(&r,
                                         (dir + "/recording").c_str(),
                                         s.get(),
                                         c->sampling.method,
                                         set.th_ns,
                                         err))
                throw std::runtime_error(err);
            rec.reset(r);
        }
        else
            rec = OpenRecording(dir + "/recording", s.get());
        set.name = name;
        set.engine_name = engine;
        set.cancel = &cli_signal;
        char vname[256];
        qr_variant_settings_name(&set, vname, sizeof vname);
        {
            cli_paths in{}, out{};
            cli_paths_add_recording(&in, (dir + "/recording").c_str());
            cli_paths_add_scenario(&in, scen, s.get());
            std::string vdir = dir + "/replay/" + vname;
            cli_paths_add(&out, "%s/replay.h5", vdir.c_str());
            cli_paths_add(&out, "%s/arrivals.qra", vdir.c_str());
            int bad = cli_check_outputs("replay", &out, &in);
            if (bad)
                throw std::runtime_error("");
        }
        set.status = StatusLine;
        set.status_ctx = &p;
        auto replay = [&]() {
            return qr_replay_variant(dir.c_str(),
                                     s.get(),
                                     rec.get(),
                                     &set,
                                     ReplayEngineByName(engine),
                                     nullptr,
                                     err);
        };
        int vrc = replay();
        if (vrc == QR_EORDER && qr_recording_stream_unordered(rec.get()) && !read)
        {
            // a capture going back in time across directions: the same replay, read whole
            cli_progress_done(&p);
            if (!quiet)
                fprintf(stderr, "qreplay replay: %s; reading the recording whole\n", err);
            rec.reset();
            rec = OpenRecording(dir + "/recording", s.get());
            vrc = replay();
        }
        cli_progress_done(&p);
        if (vrc && vrc != QR_ECANCELED)
            throw std::runtime_error(err);
        if (vrc == QR_ECANCELED)
        {
            fprintf(stderr, "qreplay replay: interrupted; nothing written\n");
            rc = cli_interrupted_status();
        }
        else
        {
            rc = 0;
            if (!quiet)
                printf("replay             %s/replay/%s (next: qreplay metrics %s)\n",
                       dir.c_str(),
                       vname,
                       dir.c_str());
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        rc = *e.what() ? cli_fail("replay", "%s", e.what()) : 1;
    }
    cli_restore_signals();
    cli_args_free(&a);
    return rc;
}

extern "C" int
qr_cmd_run(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kRunSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    int nSets;
    const char** sets = cli_list(&a, "set", &nSets);
    bool quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    std::string scenarioPath = a.pos[0];
    const char* out = cli_value(&a, "out");
    const char* engineName = QrEngineOption("run", cli_value(&a, "engine"));
    if (!engineName)
    {
        cli_args_free(&a);
        return 2;
    }
    std::string engine = engineName;
    qr_scenario* sc;
    rc = cli_load_scenario("run", scenarioPath.c_str(), sets, nSets, &sc);
    std::string dir = !rc ? (out ? out : qr_scenario_config(sc)->output.dir) : "";
    cli_args_free(&a);
    if (rc)
        return 1;
    ScenarioPtr s(sc, qr_scenario_destroy);
    cli_catch_signals();
    {
        cli_paths in{}, out{};
        cli_paths_add_scenario(&in, scenarioPath.c_str(), sc);
        for (const char* f : {"/results.h5",
                              "/recording/recording.h5",
                              "/recording/truth/truth.h5",
                              "/recording/truth/arrivals.qra"})
            cli_paths_add(&out, "%s%s", dir.c_str(), f);
        cli_paths_add_dir(&out, (dir + "/recording/pcap").c_str());
        int bad = cli_check_outputs("run", &out, &in);
        if (bad)
        {
            cli_restore_signals();
            return 1;
        }
    }
    unlink((dir + "/results.h5").c_str());
    ClearReplays(dir);
    if (!quiet)
        printf("== runtime -> %s/recording\n", dir.c_str());
    fflush(stdout);
    rc = QrRuntimeStep("run", sc, scenarioPath.c_str(), dir + "/recording", true, quiet);
    if (rc == 0)
        rc = QrReplaysAndMetrics("run", dir, sc, engine.c_str(), quiet);
    cli_restore_signals();
    if (rc == 0 && figures)
        rc = cli_figures("run",
                         "plot_results.py",
                         (dir + "/results.h5").c_str(),
                         (dir + "/figures").c_str(),
                         quiet);
    return rc;
}
