/* qreplay butterfly: closed-loop replays with host timing jitter, against the runtime. */
#include "helper/butterfly.h"

#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.h"
#include "program.h"

extern "C" {
#include "qreplay/error.h"
#include "qreplay/h5.h"
}

using namespace ns3;

#ifndef QR_ANALYSIS_DIR
#define QR_ANALYSIS_DIR "analysis"
#endif

namespace
{

void
Help()
{
    printf("usage: qreplay butterfly SCENARIO --sigma LIST --replays N [--set section.key=value ...]\n"
           "                          [-o DIR] [--no-figures] [--quiet]\n\n"
           "Measure the butterfly effect: run the scenario's runtime once (DIR/runtime), then for\n"
           "every sigma of LIST, N closed-loop replays: the same flows and start times with live\n"
           "TCP, each host's processing delay drawn per packet from a normal distribution with the\n"
           "scenario's [host] proc_delay as mean and sigma as standard deviation (truncated at 0),\n"
           "a distinct random stream per replay. For each replay: did the short flow reproduce\n"
           "(completion time within 1%% of the runtime's), did the whole run reproduce (the same\n"
           "dropped packets), and the per-packet queue-length difference against the runtime.\n"
           "Writes DIR/butterfly.h5 and the figures (DIR/figures: reproduction against sigma, the\n"
           "queue difference over time of a typical replay per sigma); prints a table.\n\n"
           "options:\n"
           "  --sigma LIST   standard deviations, e.g. 0,1ns,10ns,100ns,1us (0 = the runtime's timing)\n"
           "  --replays N    replays per sigma (1 to 100000), e.g. 100\n"
           "  --set S.K=V    override a scenario key (repeatable)\n"
           "  -o DIR         output folder (default: the scenario's [output] dir)\n"
           "  --no-figures   skip the figures\n"
           "  --quiet        only errors\n\n"
           "The reference sweep (5 sigmas x 100 replays) takes about 15 min on 2 cores:\n"
           "  qreplay butterfly scenarios/butterfly.ini --sigma 0,1ns,10ns,100ns,1us --replays 100\n");
}

struct SigmaRow
{
    int64_t sigma_ns;
    uint32_t replays;
    double short_reproduced_pct, run_reproduced_pct;
    double zero_after_divergence_mean;
    uint32_t typical_replay;
};

#define F(T, m) offsetof(T, m)
const qr_h5_field kReplayFields[] = {
    {"sigma_ns", QR_H5_I64, F(Butterfly::ReplayResult, sigma_ns), 0, "ns"},
    {"replay", QR_H5_U32, F(Butterfly::ReplayResult, replay), 0, "random stream"},
    {"short_fct_ns", QR_H5_I64, F(Butterfly::ReplayResult, short_fct_ns), 0, "ns (-1: not completed)"},
    {"short_reproduced", QR_H5_U8, F(Butterfly::ReplayResult, short_reproduced), 0, "FCT within 1%"},
    {"run_reproduced", QR_H5_U8, F(Butterfly::ReplayResult, run_reproduced), 0, "same dropped packets"},
    {"drops", QR_H5_U64, F(Butterfly::ReplayResult, drops), 0, "packets"},
    {"matched", QR_H5_U64, F(Butterfly::ReplayResult, matched), 0, "arrivals in both runs"},
    {"first_divergence_ns", QR_H5_I64, F(Butterfly::ReplayResult, first_divergence_ns), 0, "ns (-1: never)"},
    {"zero_after_divergence", QR_H5_F64, F(Butterfly::ReplayResult, zero_after_divergence), 0, "fraction"},
    {"max_diff_bytes", QR_H5_U64, F(Butterfly::ReplayResult, max_diff_bytes), 0, "bytes"},
    {"wall_s", QR_H5_F64, F(Butterfly::ReplayResult, wall_s), 0, "s"}};
const qr_h5_field kSigmaFields[] = {
    {"sigma_ns", QR_H5_I64, F(SigmaRow, sigma_ns), 0, "ns"},
    {"replays", QR_H5_U32, F(SigmaRow, replays), 0, NULL},
    {"short_reproduced_pct", QR_H5_F64, F(SigmaRow, short_reproduced_pct), 0, "%"},
    {"run_reproduced_pct", QR_H5_F64, F(SigmaRow, run_reproduced_pct), 0, "%"},
    {"zero_after_divergence_mean", QR_H5_F64, F(SigmaRow, zero_after_divergence_mean), 0, "fraction"},
    {"typical_replay", QR_H5_U32, F(SigmaRow, typical_replay), 0, "replay whose series is kept"}};
const qr_h5_field kSeriesFields[] = {
    {"time_ns", QR_H5_I64, F(Butterfly::SeriesPoint, time_ns), 0, "ns"},
    {"diff_bytes", QR_H5_U64, F(Butterfly::SeriesPoint, diff_bytes), 0, "bytes (1 MTU = 1500)"}};
#undef F

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
    static const struct option opts[] = {{"set", required_argument, nullptr, 's'},
                                         {"sigma", required_argument, nullptr, 'g'},
                                         {"replays", required_argument, nullptr, 'r'},
                                         {"no-figures", no_argument, nullptr, 'F'},
                                         {"quiet", no_argument, nullptr, 'q'},
                                         {"help", no_argument, nullptr, 'h'},
                                         {nullptr, 0, nullptr, 0}};
    std::vector<const char*> sets;
    const char *out = nullptr, *sigmaText = nullptr, *replaysText = nullptr;
    bool quiet = false, figures = true;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, nullptr)) != -1)
    {
        switch (c)
        {
        case 's': sets.push_back(optarg); break;
        case 'g': sigmaText = optarg; break;
        case 'r': replaysText = optarg; break;
        case 'o': out = optarg; break;
        case 'F': figures = false; break;
        case 'q': quiet = true; break;
        case 'h': Help(); return 0;
        case ':': return cli_usage_error("butterfly", "%s needs a value", argv[optind - 1]);
        default: return cli_usage_error("butterfly", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("butterfly", "expected one SCENARIO file");
    if (!sigmaText)
        return cli_usage_error("butterfly", "--sigma is required (e.g. --sigma 0,1ns,10ns,100ns,1us)");
    if (!replaysText)
        return cli_usage_error("butterfly", "--replays is required (e.g. --replays 100)");
    std::vector<int64_t> sigmas;
    std::string perr = ParseSigmas(sigmaText, sigmas);
    if (!perr.empty())
        return cli_usage_error("butterfly", "%s", perr.c_str());
    char* end = nullptr;
    long replays = strtol(replaysText, &end, 10);
    if (!*replaysText || *end || replays < 1 || replays > 100000)
        return cli_usage_error("butterfly", "--replays: '%s' is not a whole number from 1 to 100000",
                               replaysText);
    qr_scenario* s;
    if (cli_load_scenario("butterfly", argv[optind], sets.data(), static_cast<int>(sets.size()), &s))
        return 1;
    const qr_config* cfg = qr_scenario_config(s);
    std::string dir = out ? out : cfg->output.dir;
    cli_progress p;
    cli_progress_init(&p, quiet);
    QrCatchSignals();
    int rc = 0;
    std::string h5path = dir + "/butterfly.h5";
    unlink(h5path.c_str());
    qr_h5* f = nullptr;
    try
    {
        Butterfly b(s);
        if (!quiet)
            printf("== runtime -> %s/runtime\n", dir.c_str());
        fflush(stdout);
        b.RunRuntime(dir + "/runtime", &g_qr_cancel);
        if (!quiet)
            printf("short flow         flow %u, completion %s; runtime drops %" PRIu64
                   "; bottleneck switch %u port %u\n",
                   b.ShortFlow(), FormatTime(b.RuntimeShortFct()).c_str(), b.RuntimeDrops(),
                   b.Bottleneck() >> 16, b.Bottleneck() & 0xffff);
        char err[QR_ERRBUF_SIZE];
        Check(qr_h5_create(&f, h5path.c_str(), err), err);
        Check(qr_scenario_write_h5(s, f, "/", err), err);
        Check(qr_h5_attr_str(f, "/", "kind", "qreplay butterfly", err), err);
        Check(qr_h5_attr_i64(f, "/", "runtime_short_fct_ns", b.RuntimeShortFct(), err), err);
        Check(qr_h5_attr_u64(f, "/", "runtime_drops", b.RuntimeDrops(), err), err);
        Check(qr_h5_attr_i64(f, "/", "runtime_end_ns", b.RuntimeEnd(), err), err);
        Check(qr_h5_attr_u64(f, "/", "short_flow", b.ShortFlow(), err), err);
        Check(qr_h5_attr_u64(f, "/", "bottleneck_switch", b.Bottleneck() >> 16, err), err);
        Check(qr_h5_attr_u64(f, "/", "bottleneck_port", b.Bottleneck() & 0xffff, err), err);
        qr_h5_table* tr = nullptr;
        Check(qr_h5_table_create(&tr, f, "/replays", kReplayFields, sizeof kReplayFields / sizeof kReplayFields[0],
                                 sizeof(Butterfly::ReplayResult), 0, err),
              err);
        std::vector<SigmaRow> rows;
        for (int64_t sigma : sigmas)
        {
            std::vector<Butterfly::ReplayResult> results;
            for (long r = 1; r <= replays; r++)
            {
                Butterfly::ReplayResult res;
                if (!b.Replay(sigma, static_cast<uint32_t>(r), res, nullptr, &g_qr_cancel))
                    throw std::runtime_error("interrupted");
                results.push_back(res);
                Check(qr_h5_table_append(tr, &res, 1, err), err);
                cli_progress_update(&p, "butterfly: sigma %s, replay %ld/%ld", FormatTime(sigma).c_str(), r,
                                    replays);
            }
            SigmaRow row{sigma, static_cast<uint32_t>(replays), 0, 0, 0, 1};
            for (const auto& x : results)
            {
                row.short_reproduced_pct += x.short_reproduced;
                row.run_reproduced_pct += x.run_reproduced;
                row.zero_after_divergence_mean += x.zero_after_divergence;
            }
            row.short_reproduced_pct *= 100.0 / replays;
            row.run_reproduced_pct *= 100.0 / replays;
            row.zero_after_divergence_mean /= replays;
            // the typical replay: median first divergence (never-diverging ones last)
            std::vector<Butterfly::ReplayResult> sorted = results;
            std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
                uint64_t a = x.first_divergence_ns < 0 ? UINT64_MAX : static_cast<uint64_t>(x.first_divergence_ns);
                uint64_t c2 = y.first_divergence_ns < 0 ? UINT64_MAX : static_cast<uint64_t>(y.first_divergence_ns);
                return a != c2 ? a < c2 : x.replay < y.replay;
            });
            row.typical_replay = sorted[sorted.size() / 2].replay;
            std::vector<Butterfly::SeriesPoint> series;
            Butterfly::ReplayResult again;
            if (!b.Replay(sigma, row.typical_replay, again, &series, &g_qr_cancel))
                throw std::runtime_error("interrupted");
            char g[64];
            snprintf(g, sizeof g, "/typical/sigma_%ld", static_cast<long>(sigma));
            qr_h5_table* ts = nullptr;
            Check(qr_h5_table_create(&ts, f, g, kSeriesFields, 2, sizeof(Butterfly::SeriesPoint), 0, err), err);
            Check(qr_h5_table_append(ts, series.data(), series.size(), err), err);
            Check(qr_h5_table_close(ts, err), err);
            Check(qr_h5_attr_i64(f, g, "sigma_ns", sigma, err), err);
            Check(qr_h5_attr_u64(f, g, "replay", row.typical_replay, err), err);
            rows.push_back(row);
        }
        Check(qr_h5_table_close(tr, err), err);
        qr_h5_table* tsg = nullptr;
        Check(qr_h5_table_create(&tsg, f, "/sigma", kSigmaFields, sizeof kSigmaFields / sizeof kSigmaFields[0],
                                 sizeof(SigmaRow), 0, err),
              err);
        Check(qr_h5_table_append(tsg, rows.data(), rows.size(), err), err);
        Check(qr_h5_table_close(tsg, err), err);
        qr_h5* done = f;
        f = nullptr;
        Check(qr_h5_commit(done, err), err);
        cli_progress_done(&p);
        if (!quiet)
        {
            printf("%-10s %8s %16s %16s %22s\n", "sigma", "replays", "short flow same", "whole run same",
                   "queue diff 0 after");
            for (const SigmaRow& r : rows)
                printf("%-10s %8u %15.1f%% %15.1f%% %21.1f%%\n", FormatTime(r.sigma_ns).c_str(), r.replays,
                       r.short_reproduced_pct, r.run_reproduced_pct, 100 * r.zero_after_divergence_mean);
            printf("output             %s\n", h5path.c_str());
            fflush(stdout);
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        qr_h5_abort(f);
        rc = strcmp(e.what(), "interrupted") == 0
                 ? (fprintf(stderr, "qreplay butterfly: interrupted; no butterfly.h5 written\n"), 130)
                 : cli_fail("butterfly", "%s", e.what());
    }
    QrRestoreSignals();
    qr_scenario_destroy(s);
    if (rc == 0 && figures)
    {
        std::string py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
        std::string cmd = py + " '" + QR_ANALYSIS_DIR + "/plot_butterfly.py' '" + h5path + "' -o '" + dir +
                          "/figures'" + (quiet ? " --quiet" : "");
        if (system(cmd.c_str()) != 0)
            rc = cli_fail("butterfly", "drawing the figures failed (%s); butterfly.h5 is complete", cmd.c_str());
    }
    return rc;
}
