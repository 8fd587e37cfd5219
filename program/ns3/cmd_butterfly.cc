/* qreplay butterfly: closed-loop replays with host timing jitter, against the runtime. */
#include "helper/butterfly.h"

#include "cli.h"
#include "opt.h"
#include "program.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/butterfly.h"
#include "qreplay/compare.h"
#include "qreplay/error.h"
#include "qreplay/queuelog.h"
#include "qreplay/schema.h"
#include "qreplay/units.h"
}

using namespace ns3;

namespace
{

const cli_opt kOpts[] = {
    {"sigma",
     0,
     CLI_VALUE,
     "LIST",
     "standard deviations, e.g. 0,1ns,10ns,100ns,1us (0 = the runtime's timing)"},
    {"replays", 0, CLI_VALUE, "N", "replays per sigma (1 to 100000), e.g. 100"},
    CLI_OPT_SET,
    CLI_OPT_OUT("output folder (default: the scenario's [output] dir)"),
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

const cli_spec kSpec = {
    "butterfly",
    "SCENARIO --sigma LIST --replays N",
    "Measure the butterfly effect: run the scenario's runtime once (DIR/runtime), then for\n"
    "every sigma of LIST, N closed-loop replays: the same flows and start times with live\n"
    "TCP, each host's processing delay drawn per packet from a normal distribution with the\n"
    "scenario's [host] proc_delay as mean and sigma as standard deviation (truncated at 0),\n"
    "a distinct random stream per replay. For each replay: did the short flow reproduce\n"
    "(completion time within 1% of the runtime's), did the whole run reproduce (the same\n"
    "dropped packets), and the per-packet queue-length difference against the runtime.\n"
    "Writes DIR/butterfly.h5 and the figures (DIR/figures: reproduction against sigma, the\n"
    "queue difference over time of a typical replay per sigma); prints a table.\n",
    kOpts,
    sizeof kOpts / sizeof kOpts[0],
    1,
    1,
    "expected one SCENARIO file",
    "The reference sweep (5 sigmas x 100 replays) takes about 15 min on 2 cores:\n"
    "  qreplay butterfly scenarios/butterfly.ini --sigma 0,1ns,10ns,100ns,1us --replays 100\n"};

/* The ns-3 engine of the core's butterfly job (qreplay/butterfly.h). */
int
EngineRuntime(void* ctx, const char* dir, qr_butterfly_runtime* out, char* errbuf)
{
    return QrEngineCall(errbuf, [&]() -> int {
        Butterfly* b = static_cast<Butterfly*>(ctx);
        if (!b->RunRuntime(dir, &cli_signal))
            return QR_ECANCELED;
        *out = {b->ShortFlow(),
                b->RuntimeShortFct(),
                b->RuntimeDrops(),
                b->BottleneckSwitch(),
                b->BottleneckPort(),
                b->RuntimeEnd()};
        return 0;
    });
}

int
EngineReplay(void* ctx,
             int64_t sigma,
             uint32_t replay,
             qr_row_butterfly_replay* out,
             qr_row_butterfly_series** series,
             size_t* nSeries,
             char* errbuf)
{
    return QrEngineCall(errbuf, [&]() -> int {
        std::vector<Butterfly::SeriesPoint> points;
        if (!static_cast<Butterfly*>(ctx)
                 ->Replay(sigma, replay, *out, series ? &points : nullptr, &cli_signal))
            return QR_ECANCELED;
        if (series)
        {
            *nSeries = points.size();
            *series = static_cast<qr_row_butterfly_series*>(
                malloc((points.size() ? points.size() : 1) * sizeof **series));
            if (!*series)
                throw std::bad_alloc();
            std::copy(points.begin(), points.end(), *series);
        }
        return 0;
    });
}

struct Printer
{
    cli_progress* progress;
    bool quiet;
};

int
OnProgress(void* ctx, const char* status)
{
    return cli_progress_status(static_cast<Printer*>(ctx)->progress, status);
}

void
OnRuntime(void* ctx, const qr_butterfly_runtime* rt)
{
    const Printer* p = static_cast<Printer*>(ctx);
    if (p->quiet)
        return;
    cli_progress_done(p->progress);
    printf("short flow         flow %u, completion %s; runtime drops %llu; bottleneck "
           "switch %u port %u\n",
           rt->short_flow,
           FormatTime(rt->short_fct_ns).c_str(),
           static_cast<unsigned long long>(rt->drops),
           rt->bottleneck_switch,
           rt->bottleneck_port);
    fflush(stdout);
}

} // namespace

/* Whether the butterfly may write its outputs in dir (none of them is an input). */
static bool
CheckOutputs(const std::string& scenarioFile,
             const qr_scenario* s,
             const std::string& dir,
             const std::string& h5path)
{
    cli_paths in{}, out{};
    cli_paths_add_scenario(&in, scenarioFile.c_str(), s);
    cli_paths_add(&out, "%s", h5path.c_str());
    for (const char* f :
         {"/recording.h5", "/truth/truth.h5", "/truth/arrivals.qra", "/" QR_MIRROR_COPIES})
        cli_paths_add(&out, "%s/runtime%s", dir.c_str(), f);
    cli_paths_add_dir(&out, (dir + "/runtime/pcap").c_str());
    return cli_check_outputs("butterfly", &out, &in) == 0;
}

/* A line per sigma: how often the short flow and the whole run were reproduced. */
static void
PrintSigmas(const qr_row_butterfly_sigma* rows, size_t nSigmas, const std::string& h5path)
{
    printf("%-10s %8s %16s %16s %22s\n",
           "sigma",
           "replays",
           "short flow same",
           "whole run same",
           "queue diff 0 after");
    for (size_t k = 0; k < nSigmas; k++)
    {
        const qr_row_butterfly_sigma& r = rows[k];
        printf("%-10s %8u %15.1f%% %15.1f%% %21.1f%%\n",
               FormatTime(r.sigma_ns).c_str(),
               r.replays,
               r.short_reproduced_pct,
               r.run_reproduced_pct,
               100 * r.zero_after_divergence_mean);
    }
    printf("output             %s\n", cli_shown(h5path.c_str()));
    fflush(stdout);
}

extern "C" int
qr_cmd_butterfly(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    int nSets;
    const char** sets = cli_list(&a, "set", &nSets);
    const char *sigmaText = cli_value(&a, "sigma"), *replaysText = cli_value(&a, "replays"),
               *out = cli_value(&a, "out");
    bool quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    int64_t sigmas[QR_LIST_MAX];
    size_t nSigmas = 0;
    int64_t replays = 0;
    char err[QR_ERRBUF_SIZE];
    rc = -1;
    if (!sigmaText)
        rc =
            cli_usage_error("butterfly", "--sigma is required (e.g. --sigma 0,1ns,10ns,100ns,1us)");
    else if (!replaysText)
        rc = cli_usage_error("butterfly", "--replays is required (e.g. --replays 100)");
    else if (qr_parse_time_list(sigmaText, sigmas, QR_LIST_MAX, &nSigmas, err))
        rc = cli_usage_error("butterfly", "--sigma: %s", err);
    else if (qr_parse_int(replaysText, 1, 100000, &replays, err))
        rc = cli_usage_error("butterfly",
                             "--replays: '%s' is not a whole number from 1 to 100000",
                             replaysText);
    qr_scenario* s = nullptr;
    if (rc < 0 && cli_load_scenario("butterfly", a.pos[0], sets, nSets, &s))
        rc = 1;
    std::string dir = rc < 0 ? (out ? out : qr_scenario_config(s)->output.dir) : "";
    std::string scenarioFile = a.pos[0];
    cli_args_free(&a);
    if (rc >= 0)
        return rc;
    cli_progress p;
    cli_progress_init(&p, quiet);
    cli_catch_signals();
    rc = 0;
    // DIR/runtime, butterfly.h5 and the figures are swapped in whole (main commits)
    std::string shownDir = dir;
    const char* work = cli_output_folder("butterfly", dir.c_str(), quiet);
    if (!work)
    {
        cli_restore_signals();
        qr_scenario_destroy(s);
        return 1;
    }
    dir = work;
    std::string h5path = dir + "/butterfly.h5";
    if (!CheckOutputs(scenarioFile, s, dir, h5path))
    {
        cli_restore_signals();
        qr_scenario_destroy(s);
        return 1;
    }
    unlink(h5path.c_str());
    if (!quiet)
    {
        printf("== runtime -> %s/runtime\n", shownDir.c_str());
        fflush(stdout);
    }
    qr_row_butterfly_sigma* rows = nullptr;
    try
    {
        Butterfly b(s);
        Printer printer{&p, quiet};
        qr_butterfly_job job{};
        job.scenario = s;
        job.dir = dir.c_str();
        job.sigmas_ns = sigmas;
        job.n_sigmas = nSigmas;
        job.replays = static_cast<uint32_t>(replays);
        job.runtime = EngineRuntime;
        job.replay = EngineReplay;
        job.engine_ctx = &b;
        job.on_runtime = OnRuntime;
        job.progress = OnProgress;
        job.progress_ctx = &printer;
        qr_butterfly_runtime rt;
        rc = qr_butterfly_run(&job, &rt, &rows, err);
        cli_progress_done(&p);
        if (rc == QR_ECANCELED)
        {
            fprintf(stderr, "qreplay butterfly: interrupted; no butterfly.h5 written\n");
            rc = cli_interrupted_status();
        }
        else if (rc)
            rc = cli_fail("butterfly", "%s", err);
        else if (!quiet)
            PrintSigmas(rows, nSigmas, h5path);
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        rc = cli_fail("butterfly", "%s", e.what());
    }
    free(rows);
    qr_scenario_destroy(s);
    if (rc == 0 && figures)
        rc = cli_figures("butterfly",
                         "plot_butterfly.py",
                         h5path.c_str(),
                         (dir + "/figures").c_str(),
                         quiet);
    cli_restore_signals();
    return rc;
}
