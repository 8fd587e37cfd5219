/* qreplay run, replay and metrics: the study's main job over a run folder (helper/pipeline.h). */
#include "helper/pipeline.h"
#include "helper/recording.h"

#include <dirent.h>
#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "program.h"

extern "C" {
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/units.h"
}

using namespace ns3;

#ifndef QR_ANALYSIS_DIR
#define QR_ANALYSIS_DIR "analysis"
#endif

namespace
{

struct Args
{
    std::vector<const char*> sets;
    const char* out{nullptr};
    const char* scenario{nullptr};
    const char* th{nullptr};
    const char* mode{nullptr};
    const char* name{nullptr};
    bool quiet{false}, figures{true};
    std::vector<const char*> positional;
};

/* Parse the options the three commands share; returns -1 to go on, else an exit status. */
int
Parse(const char* cmd, int argc, char** argv, Args& a, void (*help)())
{
    static const struct option opts[] = {{"set", required_argument, nullptr, 's'},
                                         {"scenario", required_argument, nullptr, 'S'},
                                         {"th", required_argument, nullptr, 't'},
                                         {"mode", required_argument, nullptr, 'm'},
                                         {"name", required_argument, nullptr, 'n'},
                                         {"no-figures", no_argument, nullptr, 'F'},
                                         {"quiet", no_argument, nullptr, 'q'},
                                         {"help", no_argument, nullptr, 'h'},
                                         {nullptr, 0, nullptr, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", opts, nullptr)) != -1)
    {
        switch (c)
        {
        case 's': a.sets.push_back(optarg); break;
        case 'S': a.scenario = optarg; break;
        case 't': a.th = optarg; break;
        case 'm': a.mode = optarg; break;
        case 'n': a.name = optarg; break;
        case 'F': a.figures = false; break;
        case 'o': a.out = optarg; break;
        case 'q': a.quiet = true; break;
        case 'h': help(); return 0;
        case ':': return cli_usage_error(cmd, "%s needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    for (int i = optind; i < argc; i++)
        a.positional.push_back(argv[i]);
    return -1;
}

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

/* Draw the figures of results.h5 with analysis/plot_results.py (Debian's python3). */
int
Figures(const char* cmd, const std::string& dir, bool quiet)
{
    std::string py = "/usr/bin/python3";
    if (access(py.c_str(), X_OK) != 0)
        py = "python3";
    std::string c = py + " '" + QR_ANALYSIS_DIR + "/plot_results.py' '" + dir + "/results.h5' -o '" +
                    dir + "/figures'" + (quiet ? " --quiet" : "");
    int st = system(c.c_str());
    if (st != 0)
        return cli_fail(cmd, "drawing the figures failed (%s); results.h5 is complete", c.c_str());
    return 0;
}

int
ParseMode(const char* cmd, const char* m, qr_drop_mode& mode)
{
    if (!strcmp(m, "plain"))
        mode = QR_MODE_PLAIN;
    else if (!strcmp(m, "tagged"))
        mode = QR_MODE_TAGGED;
    else
        return cli_usage_error(cmd, "--mode: unknown replay mode '%s' (plain or tagged)", m);
    return -1;
}

void
Status(cli_progress* p, const std::string& s)
{
    cli_progress_update(p, "%s", s.c_str());
}

void
HelpRun()
{
    printf("usage: qreplay run SCENARIO [--set section.key=value ...] [-o DIR] [--no-figures]\n"
           "                           [--quiet]\n\n"
           "The whole study on one scenario: the recorded closed-loop runtime (DIR/recording),\n"
           "an open-loop replay for every mode of [replay] modes at every threshold of\n"
           "[sampling] th (DIR/replay/<mode>_th_<us>), the fidelity metrics of each against the\n"
           "runtime (DIR/results.h5: qdiff per arrival, drop error, summaries; the resolved\n"
           "scenario and code version as attributes) and the figures (DIR/figures, PNG and PDF).\n"
           "Prints a table: one row per variant, qdiff mean and p99 in MTU, drops in runtime and\n"
           "replay, false accepts, false drops, wrong locations, drop error.\n\n"
           "options:\n"
           "  --set S.K=V    override a scenario key (repeatable)\n"
           "  -o DIR         run folder (default: the scenario's [output] dir)\n"
           "  --no-figures   skip the figures\n"
           "  --quiet        only errors\n"
           "  --help         this text\n");
}

void
HelpReplay()
{
    printf("usage: qreplay replay DIR [--th TIME] [--mode plain|tagged] [--name NAME]\n"
           "                         [--scenario FILE] [--set section.key=value ...] [--quiet]\n\n"
           "Replay the recording in DIR/recording (from qreplay run or qreplay runtime -o\n"
           "DIR/recording) open loop: every host injects its recorded packets at send times\n"
           "inferred from sampling at TIME (0: exact), in mode plain (the runtime's admission)\n"
           "or tagged (packets the receivers saw lost carry a drop tag; switches drop a tagged\n"
           "packet only when its queue is within [replay] margin of its threshold). Writes\n"
           "DIR/replay/NAME (default <mode>_th_<us>): arrivals.qra and replay.h5. Then run\n"
           "'qreplay metrics DIR'. The network comes from the recording's scenario, or from\n"
           "--scenario FILE (same topology); --set changes keys for a what-if (buffer.size,\n"
           "buffer.alpha, replay.margin, ...).\n\n"
           "options:\n"
           "  --th TIME      sampling threshold (default: the scenario's first)\n"
           "  --mode M       plain or tagged (default tagged)\n"
           "  --name NAME    the variant's folder name\n"
           "  --scenario F   scenario to replay with instead of the recording's\n"
           "  --set S.K=V    override a key (repeatable)\n"
           "  --quiet        only errors\n");
}

void
HelpMetrics()
{
    printf("usage: qreplay metrics DIR [--no-figures] [--quiet]\n\n"
           "Compare every replay in DIR/replay with the runtime in DIR/recording and write\n"
           "DIR/results.h5 (and the figures in DIR/figures); prints the summary table.\n");
}

} // namespace

extern "C" int
qr_cmd_metrics(int argc, char** argv)
{
    Args a;
    int rc = Parse("metrics", argc, argv, a, HelpMetrics);
    if (rc >= 0)
        return rc;
    if (a.positional.size() != 1)
        return cli_usage_error("metrics", "expected one run folder DIR");
    std::string dir = a.positional[0];
    cli_progress p;
    cli_progress_init(&p, a.quiet);
    try
    {
        auto rows = WriteResults(dir, [&p](const std::string& s) { Status(&p, s); });
        cli_progress_done(&p);
        if (!a.quiet)
        {
            PrintSummary(stdout, rows);
            printf("output             %s/results.h5\n", dir.c_str());
            fflush(stdout);
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        return cli_fail("metrics", "%s", e.what());
    }
    return a.figures ? Figures("metrics", dir, a.quiet) : 0;
}

extern "C" int
qr_cmd_replay(int argc, char** argv)
{
    Args a;
    int rc = Parse("replay", argc, argv, a, HelpReplay);
    if (rc >= 0)
        return rc;
    if (a.positional.size() != 1)
        return cli_usage_error("replay", "expected one run folder DIR");
    std::string dir = a.positional[0];
    ReplaySettings set;
    if (a.mode && (rc = ParseMode("replay", a.mode, set.mode)) >= 0)
        return rc;
    char err[QR_ERRBUF_SIZE];
    if (!IsDir(dir + "/recording"))
        return cli_fail("replay", "%s/recording: no recording (run qreplay run or qreplay runtime -o %s/recording)",
                        dir.c_str(), dir.c_str());
    qr_scenario* s = nullptr;
    if (a.scenario)
    {
        if (cli_load_scenario("replay", a.scenario, a.sets.data(), static_cast<int>(a.sets.size()), &s))
            return 1;
    }
    cli_progress p;
    cli_progress_init(&p, a.quiet);
    QrCatchSignals();
    try
    {
        std::unique_ptr<Recording> rec;
        if (!s)
        {
            // the recording's own scenario, with the overrides
            std::string h5 = dir + "/recording/recording.h5";
            qr_h5_reader* r = nullptr;
            char* text = nullptr;
            if (qr_h5_open(&r, h5.c_str(), err) || qr_h5_read_attr_str(r, "/", "scenario", &text, err))
            {
                qr_h5_close(r);
                throw std::runtime_error(err);
            }
            qr_h5_close(r);
            int lrc = qr_scenario_create(&s);
            if (!lrc)
                lrc = qr_scenario_load_string(s, text, h5.c_str(), (dir + "/recording").c_str(), err);
            free(text);
            for (size_t i = 0; !lrc && i < a.sets.size(); i++)
                lrc = qr_scenario_set(s, a.sets[i], err);
            if (!lrc)
                lrc = qr_scenario_validate(s, err);
            if (lrc)
                throw std::runtime_error(err);
        }
        rec = std::make_unique<Recording>(dir + "/recording", s);
        const qr_config* c = qr_scenario_config(s);
        set.th_ns = c->sampling.th_ns[0];
        if (a.th && qr_parse_time_ns(a.th, &set.th_ns, err))
            throw std::runtime_error(std::string("--th: ") + err);
        if (set.th_ns < 0)
            throw std::runtime_error("--th: must not be negative");
        set.name = a.name ? a.name : "";
        set.cancel = &g_qr_cancel;
        set.progress = [&p](const std::string& x) { Status(&p, x); };
        bool done = RunReplayVariant(dir, s, *rec, set);
        cli_progress_done(&p);
        if (!done)
        {
            fprintf(stderr, "qreplay replay: interrupted; nothing written\n");
            rc = 130;
        }
        else
        {
            rc = 0;
            if (!a.quiet)
                printf("replay             %s/replay/%s (next: qreplay metrics %s)\n", dir.c_str(),
                       (set.name.empty() ? VariantName(set.mode, set.th_ns) : set.name).c_str(),
                       dir.c_str());
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        rc = cli_fail("replay", "%s", e.what());
    }
    QrRestoreSignals();
    qr_scenario_destroy(s);
    return rc;
}

extern "C" int
qr_cmd_run(int argc, char** argv)
{
    Args a;
    int rc = Parse("run", argc, argv, a, HelpRun);
    if (rc >= 0)
        return rc;
    if (a.positional.size() != 1)
        return cli_usage_error("run", "expected one SCENARIO file");
    qr_scenario* s;
    if (cli_load_scenario("run", a.positional[0], a.sets.data(), static_cast<int>(a.sets.size()), &s))
        return 1;
    const qr_config* c = qr_scenario_config(s);
    std::string dir = a.out ? a.out : c->output.dir;
    QrCatchSignals();
    unlink((dir + "/results.h5").c_str());
    ClearReplays(dir);
    if (!a.quiet)
        printf("== runtime -> %s/recording\n", dir.c_str());
    fflush(stdout);
    rc = QrRuntimeStep("run", s, QrScenarioName(a.positional[0]), dir + "/recording", true, a.quiet);
    cli_progress p;
    cli_progress_init(&p, a.quiet);
    try
    {
        if (rc == 0)
        {
            Recording rec(dir + "/recording", s);
            for (size_t i = 0; i < c->sampling.n_th && rc == 0; i++)
            {
                for (qr_drop_mode m : {QR_MODE_PLAIN, QR_MODE_TAGGED})
                {
                    if (!(c->replay.modes & (1u << m)) || rc)
                        continue;
                    ReplaySettings set;
                    set.mode = m;
                    set.th_ns = c->sampling.th_ns[i];
                    set.cancel = &g_qr_cancel;
                    set.progress = [&p](const std::string& x) { Status(&p, x); };
                    if (!a.quiet)
                    {
                        cli_progress_done(&p);
                        printf("== replay %s\n", VariantName(m, set.th_ns).c_str());
                        fflush(stdout);
                    }
                    if (!RunReplayVariant(dir, s, rec, set))
                    {
                        cli_progress_done(&p);
                        fprintf(stderr, "qreplay run: interrupted; no results written\n");
                        rc = 130;
                    }
                }
            }
        }
        if (rc == 0)
        {
            if (!a.quiet)
            {
                cli_progress_done(&p);
                printf("== metrics -> %s/results.h5\n", dir.c_str());
                fflush(stdout);
            }
            auto rows = WriteResults(dir, [&p](const std::string& x) { Status(&p, x); });
            cli_progress_done(&p);
            if (!a.quiet)
            {
                PrintSummary(stdout, rows);
                fflush(stdout);
            }
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        rc = cli_fail("run", "%s", e.what());
    }
    QrRestoreSignals();
    qr_scenario_destroy(s);
    if (rc == 0 && a.figures)
        rc = Figures("run", dir, a.quiet);
    return rc;
}
