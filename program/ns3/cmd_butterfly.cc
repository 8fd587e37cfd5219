/* qreplay butterfly: closed-loop replays with host timing jitter, against the runtime. */
#include "helper/butterfly.h"

#include "cli.h"
#include "opt.h"
#include "program.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/compare.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/scenario_h5.h"
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

struct Interrupted : std::exception
{
};

void
Check(int rc, const char* err)
{
    if (rc)
        throw std::runtime_error(err);
}

} // namespace

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
    std::string h5path = dir + "/butterfly.h5";
    {
        cli_paths in{}, out{};
        cli_paths_add_scenario(&in, scenarioFile.c_str(), s);
        cli_paths_add(&out, "%s", h5path.c_str());
        for (const char* f : {"/recording.h5", "/truth/truth.h5", "/truth/arrivals.qra"})
            cli_paths_add(&out, "%s/runtime%s", dir.c_str(), f);
        cli_paths_add_dir(&out, (dir + "/runtime/pcap").c_str());
        int bad = cli_check_outputs("butterfly", &out, &in);
        if (bad)
        {
            cli_restore_signals();
            qr_scenario_destroy(s);
            return 1;
        }
    }
    unlink(h5path.c_str());
    qr_h5* f = nullptr;
    qr_h5_table* tr = nullptr;
    try
    {
        Butterfly b(s);
        if (!quiet)
            printf("== runtime -> %s/runtime\n", dir.c_str());
        fflush(stdout);
        if (!b.RunRuntime(dir + "/runtime", &cli_signal))
            throw Interrupted();
        if (!quiet)
            printf("short flow         flow %u, completion %s; runtime drops %llu; bottleneck "
                   "switch %u port %u\n",
                   b.ShortFlow(),
                   FormatTime(b.RuntimeShortFct()).c_str(),
                   static_cast<unsigned long long>(b.RuntimeDrops()),
                   b.BottleneckSwitch(),
                   b.BottleneckPort());
        Check(qr_h5_create(&f, h5path.c_str(), err), err);
        Check(qr_scenario_write_h5(s, f, "/", err), err);
        Check(qr_h5_attr_str(f, "/", "kind", "qreplay butterfly", err), err);
        Check(qr_h5_attr_i64(f, "/", "runtime_short_fct_ns", b.RuntimeShortFct(), err), err);
        Check(qr_h5_attr_u64(f, "/", "runtime_drops", b.RuntimeDrops(), err), err);
        Check(qr_h5_attr_i64(f, "/", "runtime_end_ns", b.RuntimeEnd(), err), err);
        Check(qr_h5_attr_u64(f, "/", "short_flow", b.ShortFlow(), err), err);
        Check(qr_h5_attr_u64(f, "/", "bottleneck_switch", b.BottleneckSwitch(), err), err);
        Check(qr_h5_attr_u64(f, "/", "bottleneck_port", b.BottleneckPort(), err), err);
        Check(qr_h5_table_open_schema(&tr, f, "/replays", &qr_schema_butterfly_replay, err), err);
        std::vector<qr_row_butterfly_sigma> rows;
        for (size_t k = 0; k < nSigmas; k++)
        {
            int64_t sigma = sigmas[k];
            std::vector<Butterfly::ReplayResult> results;
            for (int64_t r = 1; r <= replays; r++)
            {
                Butterfly::ReplayResult res;
                if (!b.Replay(sigma, static_cast<uint32_t>(r), res, nullptr, &cli_signal))
                    throw Interrupted();
                results.push_back(res);
                Check(qr_h5_table_append(tr, &res, 1, err), err);
                cli_progress_update(&p,
                                    "butterfly: sigma %s, replay %lld/%lld",
                                    FormatTime(sigma).c_str(),
                                    static_cast<long long>(r),
                                    static_cast<long long>(replays));
            }
            qr_row_butterfly_sigma row;
            qr_butterfly_sigma_summary(results.data(), results.size(), &row);
            std::vector<Butterfly::SeriesPoint> series;
            Butterfly::ReplayResult again;
            if (!b.Replay(sigma, row.typical_replay, again, &series, &cli_signal))
                throw Interrupted();
            char g[64];
            snprintf(g, sizeof g, "/typical/sigma_%lld", static_cast<long long>(sigma));
            Check(qr_h5_write_rows(f,
                                   g,
                                   &qr_schema_butterfly_series,
                                   series.data(),
                                   series.size(),
                                   err),
                  err);
            Check(qr_h5_attr_i64(f, g, "sigma_ns", sigma, err), err);
            Check(qr_h5_attr_u64(f, g, "replay", row.typical_replay, err), err);
            rows.push_back(row);
        }
        qr_h5_table* done = tr;
        tr = nullptr;
        Check(qr_h5_table_close(done, err), err);
        Check(qr_h5_write_rows(f,
                               "/sigma",
                               &qr_schema_butterfly_sigma,
                               rows.data(),
                               rows.size(),
                               err),
              err);
        qr_h5* file = f;
        f = nullptr;
        Check(qr_h5_commit(file, err), err);
        cli_progress_done(&p);
        if (!quiet)
        {
            printf("%-10s %8s %16s %16s %22s\n",
                   "sigma",
                   "replays",
                   "short flow same",
                   "whole run same",
                   "queue diff 0 after");
            for (const qr_row_butterfly_sigma& r : rows)
                printf("%-10s %8u %15.1f%% %15.1f%% %21.1f%%\n",
                       FormatTime(r.sigma_ns).c_str(),
                       r.replays,
                       r.short_reproduced_pct,
                       r.run_reproduced_pct,
                       100 * r.zero_after_divergence_mean);
            printf("output             %s\n", h5path.c_str());
            fflush(stdout);
        }
    }
    catch (const Interrupted&)
    {
        cli_progress_done(&p);
        qr_h5_abort(f);
        fprintf(stderr, "qreplay butterfly: interrupted; no butterfly.h5 written\n");
        rc = cli_interrupted_status();
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        qr_h5_abort(f);
        rc = cli_fail("butterfly", "%s", e.what());
    }
    cli_restore_signals();
    qr_scenario_destroy(s);
    if (rc == 0 && figures)
        rc = cli_figures("butterfly",
                         "plot_butterfly.py",
                         h5path.c_str(),
                         (dir + "/figures").c_str(),
                         quiet);
    return rc;
}
