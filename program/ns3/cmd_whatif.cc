/* qreplay whatif: a grid of switch configurations replayed from one recording (qreplay/whatif.h,
 * where every step is); this file gives the job its engines: the replay engine by name and, for
 * --validate, the closed-loop ns-3 runtime. */
#include "helper/pipeline.h"
#include "tables.h"

#include "cli.h"
#include "opt.h"
#include "pool.h"
#include "program.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/units.h"
#include "qreplay/whatif.h"
#include "qreplay/whatif_score.h"
}

using namespace ns3;

namespace
{

const cli_opt kWhatifOpts[] = {
    {"vary",
     0,
     CLI_LIST,
     "KEY=V1,V2,...",
     "a key and its values (repeat for a grid: the cross product); keys: buffer.size,\n"
     "                         buffer.alpha, buffer.policy, buffer.port_size, "
     "buffer.ecn_threshold,\n"
     "                         links.rate, links.delay, replay.margin"},
    {"mode",
     0,
     CLI_VALUE,
     "M",
     "plain (default: every packet meets the point's admission rule) or tagged (only\n"
     "                         the packets the recording lost can drop: it never adds a drop, it\n"
     "                         shows which recorded drops a configuration would avoid)"},
    {"th", 0, CLI_VALUE, "TIME", "sampling threshold (default: the scenario's first)"},
    {"validate",
     0,
     CLI_FLAG,
     nullptr,
     "also run the closed-loop runtime of every point (the truth) and report the\n"
     "                         prediction errors"},
    {"cores", 0, CLI_VALUE, "N", "runs at once (default: the machine's cores)"},
    {"prune",
     0,
     CLI_FLAG,
     nullptr,
     "delete each point's arrival logs and runtime captures once measured"},
    CLI_OPT_ENGINE,
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

const cli_spec kWhatifSpec = {
    "whatif",
    "DIR",
    "What if the switches were configured otherwise? Replays the recording in DIR/recording\n"
    "open loop once per point of a grid of configurations (the cross product of every\n"
    "--vary, and the recorded configuration, the baseline), in parallel, and measures each\n"
    "with an operator's numbers: drops (per layer, per queue, the share of flows losing a\n"
    "packet), queue and switch occupancy (p50/p99/max per layer, the share of time above 50%\n"
    "and 90% of the threshold), ECN marks, queueing delay per packet and per flow, and\n"
    "shared-buffer blackhole episodes. An open-loop replay cannot show TCP reacting to drops\n"
    "the new configuration adds: the packets sent after such a drop on their flow are counted.\n"
    "With --validate, every point's closed-loop runtime (same flows, same seeds) is the truth\n"
    "its prediction is scored against. Writes DIR/whatif/whatif.h5 (and DIR/whatif/figures),\n"
    "prints a row per point.\n\n"
    "Example: qreplay whatif results/fattree-k4 --vary buffer.size=1MB,2MB,4MB "
    "--vary buffer.alpha=0.5,1,2\n",
    kWhatifOpts,
    sizeof kWhatifOpts / sizeof kWhatifOpts[0],
    1,
    1,
    "expected one run folder DIR",
    nullptr};

/* --validate's truth: the recorded ns-3 runtime of the point's scenario, quietly. */
int
RuntimeForWhatif(void*, const qr_scenario* s, const char* dir, char* errbuf)
{
    int rc = QrRuntimeStep("whatif", s, "whatif-point", dir, true, true);
    if (rc == 0)
        return QR_OK;
    if (cli_signal)
        return QR_ECANCELED;
    snprintf(errbuf, QR_ERRBUF_SIZE, "the runtime in %s failed (exit status %d)", dir, rc);
    return QR_EIO;
}

} // namespace

/* --mode, --prune and --cores into job and nCores. Returns -1, or the exit code of a usage
 * error. */
static int
WhatifOptions(const cli_args* a, qr_whatif_job& job, int& nCores)
{
    const char *mode = cli_value(a, "mode"), *cores = cli_value(a, "cores");
    job.mode = QR_MODE_PLAIN;
    job.prune = cli_count(a, "prune") > 0;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    nCores = nc > 0 ? (int)nc : 1;
    if (mode && !strcmp(mode, "tagged"))
        job.mode = QR_MODE_TAGGED;
    else if (mode && strcmp(mode, "plain"))
        return cli_usage_error("whatif",
                               "--mode: unknown replay mode '%s' (plain or tagged)",
                               mode);
    if (cores)
    {
        char* end;
        long v = strtol(cores, &end, 10);
        if (*end || v < 1 || v > 1024)
            return cli_usage_error("whatif",
                                   "--cores: '%s' is not a number of runs in 1..1024",
                                   cores);
        nCores = (int)v;
    }
    return -1;
}

/* The grid of --vary over the recording in dir, and --th (default: the baseline's first
 * threshold) into job. Returns -1, or the exit code after saying why not. */
static int
WhatifGrid(const cli_args* a, const std::string& dir, qr_whatif_job& job, qr_whatif_grid** grid)
{
    int nVary;
    const char** vary = cli_list(a, "vary", &nVary);
    const char* th = cli_value(a, "th");
    std::string recDir = dir + "/recording", recH5 = recDir + "/recording.h5";
    struct stat st;
    if (stat(recH5.c_str(), &st) != 0)
        return cli_fail("whatif",
                        "%s: no recording (run qreplay run or qreplay runtime -o %s/recording)",
                        recH5.c_str(),
                        dir.c_str());
    char err[QR_ERRBUF_SIZE];
    if (qr_whatif_grid_parse(grid,
                             vary,
                             (size_t)(nVary > 0 ? nVary : 0),
                             recH5.c_str(),
                             recDir.c_str(),
                             err))
        return cli_usage_error("whatif", "%s", err);
    qr_scenario* base = nullptr;
    if (qr_whatif_grid_scenario(*grid, qr_whatif_grid_baseline(*grid), &base, err))
        return cli_fail("whatif", "%s", err);
    job.th_ns = qr_scenario_config(base)->sampling.th_ns[0];
    qr_scenario_destroy(base);
    if (th && qr_parse_time_ns(th, &job.th_ns, err))
        return cli_usage_error("whatif", "--th: %s", err);
    if (job.th_ns < 0)
        return cli_usage_error("whatif", "--th: must not be negative");
    return -1;
}

extern "C" int
qr_cmd_whatif(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kWhatifSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    std::string dir = a.pos[0];
    bool quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    // DIR/whatif is swapped in with the run folder, whole (main commits)
    const char* work = cli_output_folder("whatif", dir.c_str(), quiet);
    if (!work)
    {
        cli_args_free(&a);
        return 1;
    }
    dir = work;
    const char* engine = QrEngineOption("whatif", cli_value(&a, "engine"));
    qr_whatif_job job{};
    qr_whatif_validation val{};
    val.closed_loop = cli_count(&a, "validate") > 0;
    int nCores = 1;
    qr_whatif_grid* grid = nullptr;
    rc = engine ? WhatifOptions(&a, job, nCores) : 2;
    if (rc < 0)
        rc = WhatifGrid(&a, dir, job, &grid);
    if (rc >= 0)
    {
        qr_whatif_grid_destroy(grid);
        cli_args_free(&a);
        return rc;
    }
    std::string recDir = dir + "/recording";
    char err[QR_ERRBUF_SIZE];
    struct stat st;
    job.run_dir = dir.c_str();
    job.grid = grid;
    job.engine = ReplayEngineByName(engine);
    job.engine_name = engine;
    val.runtime = RuntimeForWhatif;
    job.cancel = &cli_signal;
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    cli_pool pool{nCores, "whatif", &progress};
    job.runner = cli_pool_runner(&pool);
    if (!quiet)
    {
        size_t np = qr_whatif_grid_points(grid);
        printf("== whatif: %zu points%s, %d at once -> %s/whatif\n",
               np,
               val.closed_loop ? " (prediction and truth)" : "",
               pool.cores,
               dir.c_str());
        fflush(stdout);
    }
    cli_catch_signals();
    qr_whatif_outcome out{};
    // the predictions are the analysis's; a scorer grades them where a truth is there (the
    // recorded run's own queues) or asked for (--validate: the closed loop at every point)
    bool graded = val.closed_loop || stat((recDir + "/truth/arrivals.qra").c_str(), &st) == 0;
    int wrc = graded ? qr_whatif_validate(&job, &val, &out, err) : qr_whatif_run(&job, &out, err);
    cli_progress_done(&progress);
    cli_restore_signals();
    if (wrc == QR_ECANCELED)
    {
        fprintf(stderr, "qreplay whatif: interrupted; nothing written\n");
        rc = cli_interrupted_status();
    }
    else if (wrc)
        rc = cli_fail("whatif", "%s", err);
    else
    {
        rc = 0;
        if (!quiet)
        {
            cli_print_whatif(stdout, grid, &out);
            printf("whatif             %s/whatif/whatif.h5\n", cli_shown(dir.c_str()));
        }
        fflush(stdout);
        if (figures)
            rc = cli_figures("whatif",
                             "plot_whatif.py",
                             (dir + "/whatif/whatif.h5").c_str(),
                             (dir + "/whatif/figures").c_str(),
                             quiet);
    }
    qr_whatif_outcome_free(&out);
    qr_whatif_grid_destroy(grid);
    cli_args_free(&a);
    return rc;
}
