/* qreplay runtime: the recorded closed-loop ns-3 runtime of a scenario. */
#include "helper/qreplay-runtime.h"

#include <getopt.h>

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli.h"
#include "program.h"

extern "C" {
#include "qreplay/error.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
}

using namespace ns3;

volatile std::sig_atomic_t g_qr_cancel = 0;

static void
OnSignal(int)
{
    g_qr_cancel = 1;
}

static struct sigaction g_oldInt, g_oldTerm;

void
QrCatchSignals()
{
    g_qr_cancel = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnSignal;
    sigaction(SIGINT, &sa, &g_oldInt);
    sigaction(SIGTERM, &sa, &g_oldTerm);
}

void
QrRestoreSignals()
{
    sigaction(SIGINT, &g_oldInt, nullptr);
    sigaction(SIGTERM, &g_oldTerm, nullptr);
}

static void
Help()
{
    printf("usage: qreplay runtime SCENARIO [--set section.key=value ...] [-o DIR] [--no-arrivals]\n"
           "                               [--quiet]\n\n"
           "Run the scenario's closed-loop TCP simulation (ns-3) on its FatTree or star with\n"
           "shared-buffer switches, and record what a replay needs and what scoring needs:\n"
           "  DIR/pcap/hNNNN.pcap     each host's send trace (IPv4+TCP headers; time = first bit\n"
           "                          on the wire, on the host's offset clock; nanoseconds)\n"
           "  DIR/recording.h5        /flows (ports, start, completion time), /hosts,\n"
           "                          /drops_detected (IP ID gaps seen by receivers)\n"
           "  DIR/truth/truth.h5      ground truth: /drops (switch, port, reason), /directions\n"
           "                          (packets sent, delivered, dropped), /clock\n"
           "  DIR/truth/arrivals.qra  every switch-queue arrival with the bytes per flow queued\n"
           "The run ends when every flow has completed and the network is empty, or at\n"
           "[traffic] stop. Files get their final names only when the run succeeds; Ctrl-C stops\n"
           "cleanly and leaves nothing.\n\n"
           "options:\n"
           "  --set S.K=V    override a scenario key (repeatable)\n"
           "  -o DIR         output folder (default: the scenario's [output] dir)\n"
           "  --no-arrivals  do not write truth/arrivals.qra (large on big runs)\n"
           "  --quiet        no progress and no summary, only errors\n"
           "  --help         this text\n\n"
           "Progress (stderr): simulated time, wall time, events per second, flows done, and an\n"
           "upper bound of the time left (from the rate so far and [traffic] stop).\n");
}

std::string
FormatTime(int64_t ns)
{
    char buf[32];
    if (ns >= 1000000 || ns <= -1000000)
        snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
    else if (ns >= 1000 || ns <= -1000)
        snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
    else
        snprintf(buf, sizeof buf, "%ld ns", static_cast<long>(ns));
    return buf;
}

/* Completion times of the completed flows: "median X, p99 Y, max Z". */
static std::string
FctSummary(const QreplayRuntime& rt)
{
    std::vector<int64_t> fct;
    for (uint32_t f = 0; f < rt.GetFlows().Flows(); f++)
        if (rt.GetFlowRecords()[f].end_ns >= 0)
            fct.push_back(rt.GetFlowRecords()[f].end_ns - rt.GetFlows().Flow(f).start_ns);
    if (fct.empty())
        return "none completed";
    std::sort(fct.begin(), fct.end());
    auto q = [&fct](double p) { return fct[static_cast<size_t>(p * (fct.size() - 1) + 0.5)]; };
    return "median " + FormatTime(q(0.5)) + ", p99 " + FormatTime(q(0.99)) + ", max " +
           FormatTime(fct.back());
}

int
QrRuntimeStep(const char* command, const qr_scenario* s, const std::string& name,
              const std::string& dir, bool arrivals, bool quiet)
{
    const qr_config* cfg = qr_scenario_config(s);
    cli_progress progress;
    cli_progress_init(&progress, quiet);

    QreplayRuntime::Options opt;
    opt.outDir = dir;
    opt.scenarioName = name;
    opt.arrivals = arrivals != 0;
    opt.cancel = &g_qr_cancel;
    opt.progress = [&progress](const QreplayRuntime::Progress& p) {
        double simMs = p.now.GetSeconds() * 1e3;
        double rate = p.wallSeconds > 0 ? p.events / p.wallSeconds : 0;
        double left = p.now.IsPositive() && p.wallSeconds > 0
                          ? p.wallSeconds * ((p.stop - p.now).GetSeconds() / p.now.GetSeconds())
                          : 0;
        cli_progress_update(&progress,
                            "runtime: sim %.3f ms of at most %.3f ms | %.0fk events/s | flows "
                            "%" PRIu64 "/%" PRIu64 " done | %" PRIu64 " packets | left <= %.0f s",
                            simMs, p.stop.GetSeconds() * 1e3, rate / 1e3, p.flowsDone, p.flows,
                            p.packets, left);
    };
    int rc = 0;
    try
    {
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        cli_progress_done(&progress);
        if (rt.GetEndReason() == "cancelled")
        {
            fprintf(stderr, "qreplay %s: interrupted at %s simulated; nothing written\n", command,
                    FormatTime(rt.GetEnd().GetNanoSeconds()).c_str());
            rc = 130;
        }
        else
        {
            rt.Commit();
            if (!quiet)
            {
                const qr_topology* t = rt.GetNetwork().GetTopology();
                uint64_t sent = 0, drops = rt.GetDrops().size();
                for (const auto& d : rt.GetDirStats())
                    sent += d.sent;
                printf("network            %u hosts, %u switches\n", qr_topology_hosts(t),
                       qr_topology_switches(t));
                printf("flows              %zu, %" PRIu64 " completed\n", rt.GetFlows().Flows(),
                       rt.GetFlowsCompleted());
                printf("completion times   %s\n", FctSummary(rt).c_str());
                printf("packets sent       %" PRIu64 "\n", sent);
                printf("switch drops       %" PRIu64 " (receivers detected %zu)\n", drops,
                       rt.GetDetected().size());
                printf("simulated          %s (%s)\n",
                       FormatTime(rt.GetEnd().GetNanoSeconds()).c_str(),
                       rt.GetEndReason() == "completed" ? "all flows completed"
                                                        : "stopped at [traffic] stop");
                printf("events             %" PRIu64 " in %.2f s wall (%.0f events/s)\n",
                       rt.GetEvents(), rt.GetWallSeconds(),
                       rt.GetWallSeconds() > 0 ? rt.GetEvents() / rt.GetWallSeconds() : 0.0);
                printf("output             %s/recording.h5 (+ pcap/, truth/)\n", dir.c_str());
            }
            if (rt.GetEndReason() != "completed")
                fprintf(stderr,
                        "qreplay %s: warning: %" PRIu64 " of %zu flows did not complete "
                        "before [traffic] stop = %s\n",
                        command, rt.GetFlows().Flows() - rt.GetFlowsCompleted(), rt.GetFlows().Flows(),
                        FormatTime(cfg->traffic.stop_ns).c_str());
            if (rt.GetHostQueueDrops())
                fprintf(stderr,
                        "qreplay %s: warning: hosts dropped %" PRIu64 " of their own packets (NIC "
                        "queue full; raise [host] nic_queue): no recording shows them\n",
                        command, rt.GetHostQueueDrops());
            if (rt.GetOtherDrops() || rt.GetUnknownPackets())
                fprintf(stderr,
                        "qreplay %s: warning: %" PRIu64 " packets lost outside the shared "
                        "buffers, %" PRIu64 " packets of no flow\n",
                        command, rt.GetOtherDrops(), rt.GetUnknownPackets());
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&progress);
        rc = cli_fail(command, "%s", e.what());
    }
    return rc;
}

extern "C" int
qr_cmd_runtime(int argc, char** argv)
{
    static const struct option opts[] = {{"set", required_argument, nullptr, 's'},
                                         {"no-arrivals", no_argument, nullptr, 'n'},
                                         {"quiet", no_argument, nullptr, 'q'},
                                         {"help", no_argument, nullptr, 'h'},
                                         {nullptr, 0, nullptr, 0}};
    const char* sets[64];
    const char* outdir = nullptr;
    int nSets = 0, quiet = 0, arrivals = 1, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, nullptr)) != -1)
    {
        switch (c)
        {
        case 's':
            if (nSets == 64)
                return cli_usage_error("runtime", "too many --set options");
            sets[nSets++] = optarg;
            break;
        case 'o':
            outdir = optarg;
            break;
        case 'n':
            arrivals = 0;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            Help();
            return 0;
        case ':':
            return cli_usage_error("runtime", "%s needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("runtime", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("runtime", "expected one SCENARIO file");
    qr_scenario* s;
    if (cli_load_scenario("runtime", argv[optind], sets, nSets, &s))
        return 1;
    const qr_config* cfg = qr_scenario_config(s);
    std::string dir = outdir ? outdir : cfg->output.dir;
    QrCatchSignals();
    int rc = QrRuntimeStep("runtime", s, QrScenarioName(argv[optind]), dir, arrivals != 0, quiet != 0);
    QrRestoreSignals();
    qr_scenario_destroy(s);
    return rc;
}

std::string
QrScenarioName(const char* path)
{
    std::string n = path;
    size_t slash = n.rfind('/');
    if (slash != std::string::npos)
        n = n.substr(slash + 1);
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".ini") == 0)
        n = n.substr(0, n.size() - 4);
    return n;
}
