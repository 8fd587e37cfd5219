/* qreplay runtime: the recorded closed-loop ns-3 runtime of a scenario. */
#include "helper/qreplay-runtime.h"

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli.h"
#include "opt.h"
#include "program.h"
#include "tables.h"

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/runstats.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
}

using namespace ns3;

static const cli_opt kOpts[] = {
    CLI_OPT_SET,
    CLI_OPT_OUT("output folder (default: the scenario's [output] dir)"),
    {"no-arrivals",
     0,
     CLI_FLAG,
     nullptr,
     "do not write truth/arrivals.qra nor mirror/copies.qra (large on big runs)"},
    {"light",
     0,
     CLI_FLAG,
     nullptr,
     "also write DIR/light.qrl, DETER's light record (qreplay light; reads the recording\n"
     "                         back whole after the run)"},
    CLI_OPT_QUIET,
};

static const cli_spec kSpec = {
    "runtime",
    "SCENARIO",
    "Run the scenario's closed-loop TCP simulation (ns-3) on its FatTree or star with\n"
    "shared-buffer switches, and record what a replay needs and what scoring needs:\n"
    "  DIR/pcap/hNNNN.pcap     each host's send trace (IPv4+TCP headers; time = first bit\n"
    "                          on the wire, on the host's offset clock; nanoseconds)\n"
    "  DIR/recording.h5        /flows (ports, start, completion time), /hosts,\n"
    "                          /drops_detected (IP ID gaps seen by receivers), /received\n"
    "  DIR/truth/truth.h5      ground truth: /drops (switch, port, reason), /directions\n"
    "                          (packets sent, delivered, dropped)\n"
    "  DIR/truth/arrivals.qra  every switch-queue arrival with the bytes per flow queued\n"
    "  DIR/mirror/copies.qra   what the switches mirror of those arrivals to Everflow's\n"
    "                          analyzer (their own decisions and buffer stamps; qreplay trace)\n"
    "The run ends when every flow has completed and the network is empty, or at\n"
    "[traffic] stop. Files get their final names only when the run succeeds; Ctrl-C stops\n"
    "cleanly and leaves nothing. docs/FORMATS.md describes every file.\n",
    kOpts,
    sizeof kOpts / sizeof kOpts[0],
    1,
    1,
    "expected one SCENARIO file",
    "Progress (stderr): simulated time, wall time, events per second, flows done, and an\n"
    "upper bound of the time left (from the rate so far and [traffic] stop).\n"};

std::string
FormatTime(int64_t ns)
{
    char buf[48];
    return qr_format_duration(ns, buf, sizeof buf);
}

/* Completion times of the completed flows: "median X, p99 Y, max Z". */
static std::string
FctSummary(const QreplayRuntime& rt)
{
    std::vector<qr_row_flow> rows;
    for (uint32_t f = 0; f < rt.GetFlows().Flows(); f++)
    {
        int64_t end = rt.GetFlowRecords()[f].end_ns;
        qr_row_flow r{};
        r.fct_ns = qr_fct_ns(rt.GetFlows().Flow(f).start_ns, end);
        rows.push_back(r);
    }
    qr_fct_summary fs;
    if (qr_fct_summarize(rows.data(), rows.size(), &fs) || fs.completed == 0)
        return "none completed";
    return "median " + FormatTime(fs.median_ns) + ", p99 " + FormatTime(fs.p99_ns) + ", max " +
           FormatTime(fs.max_ns);
}

/* Whether the runtime may write its outputs in dir (none of them is an input). */
static bool
CheckRuntimeOutputs(const char* command,
                    const qr_scenario* s,
                    const char* scenarioFile,
                    const std::string& dir)
{
    cli_paths in{}, out{};
    cli_paths_add_scenario(&in, scenarioFile, s);
    for (const char* f :
         {"/recording.h5", "/truth/truth.h5", "/truth/arrivals.qra", "/" QR_MIRROR_COPIES})
        cli_paths_add(&out, "%s%s", dir.c_str(), f);
    for (uint32_t h = 0; h < qr_config_hosts(qr_scenario_config(s)); h++)
        cli_paths_add(&out, "%s/%s", dir.c_str(), QreplayRuntime::PcapName(h).c_str());
    return cli_check_outputs(command, &out, &in) == 0;
}

/* What the runtime did, on standard output. */
static void
PrintRuntimeSummary(const QreplayRuntime& rt, const std::string& dir)
{
    const qr_topology* t = rt.GetNetwork().GetTopology();
    uint64_t sent = 0, drops = rt.GetDrops().size();
    for (const auto& d : rt.GetDirStats())
        sent += d.sent;
    printf("network            %u hosts, %u switches\n",
           qr_topology_hosts(t),
           qr_topology_switches(t));
    printf("flows              %zu, %" PRIu64 " completed\n",
           rt.GetFlows().Flows(),
           rt.GetFlowsCompleted());
    printf("completion times   %s\n", FctSummary(rt).c_str());
    printf("packets sent       %" PRIu64 "\n", sent);
    printf("switch drops       %" PRIu64 " (receivers detected %zu)\n",
           drops,
           rt.GetDetected().size());
    printf("simulated          %s (%s)\n",
           FormatTime(rt.GetEnd().GetNanoSeconds()).c_str(),
           rt.GetEndReason() == QR_END_COMPLETED ? "all flows completed"
                                                 : "stopped at [traffic] stop");
    printf("events             %" PRIu64 " in %.2f s wall (%.0f events/s)\n",
           rt.GetEvents(),
           rt.GetWallSeconds(),
           rt.GetWallSeconds() > 0 ? rt.GetEvents() / rt.GetWallSeconds() : 0.0);
    printf("output             %s/recording.h5 (+ pcap/, truth/)\n", cli_shown(dir.c_str()));
    cli_print_faults(rt.GetFaults(), stdout);
    cli_print_link_faults(rt.GetLinkFaults(), stdout);
    for (const qr_loop_rule& l : rt.GetLoops())
        printf("fault loop %s: s%u sent %" PRIu64 " packets to h%u by its port to s%u\n",
               l.text,
               l.sw,
               rt.GetLooped(l.sw),
               l.host,
               l.next);
    if (const qr_pingmesh* pm = rt.GetPingmesh())
        printf("pingmesh           %zu probes by %zu pairs, %" PRIu64
               " probe packets (not recorded; truth/truth.h5 /probes)\n",
               qr_pingmesh_probes(pm),
               qr_pingmesh_pairs(pm),
               rt.GetProbePackets());
}

/* What the recording lacks: flows cut by the stop, packets lost where no recording sees them. */
static void
WarnRuntime(const char* command, const QreplayRuntime& rt, const qr_config* cfg)
{
    if (rt.GetEndReason() != QR_END_COMPLETED)
        fprintf(stderr,
                "qreplay %s: warning: %" PRIu64 " of %zu flows did not complete "
                "before [traffic] stop = %s\n",
                command,
                rt.GetFlows().Flows() - rt.GetFlowsCompleted(),
                rt.GetFlows().Flows(),
                FormatTime(cfg->traffic.stop_ns).c_str());
    if (rt.GetHostQueueDrops())
        fprintf(stderr,
                "qreplay %s: warning: hosts dropped %" PRIu64 " of their own packets (NIC "
                "queue full; raise [host] nic_queue): no recording shows them\n",
                command,
                rt.GetHostQueueDrops());
    if (rt.GetOtherDrops() || rt.GetUnknownPackets())
        fprintf(stderr,
                "qreplay %s: warning: %" PRIu64 " packets lost outside the shared "
                "buffers, %" PRIu64 " packets of no flow\n",
                command,
                rt.GetOtherDrops(),
                rt.GetUnknownPackets());
}

int
QrRuntimeStep(const char* command,
              const qr_scenario* s,
              const char* scenarioFile,
              const std::string& dir,
              bool arrivals,
              bool quiet)
{
    const qr_config* cfg = qr_scenario_config(s);
    if (cfg->everflow.guided > 0 && cfg->topology.kind != QR_TOPO_FATTREE)
        return cli_fail(command,
                        "%s: [everflow] guided = %d: Everflow's link round trips bounce off "
                        "switches of a fat tree ([topology] kind = fattree)",
                        scenarioFile ? scenarioFile : "the scenario",
                        cfg->everflow.guided);
    cli_progress progress;
    cli_progress_init(&progress, quiet);

    QreplayRuntime::Options opt;
    opt.outDir = dir;
    opt.scenarioName = QrScenarioName(scenarioFile);
    opt.arrivals = arrivals != 0;
    opt.cancel = &cli_signal;
    opt.progress = [&progress](const QreplayRuntime::Progress& p) {
        double simMs = p.now.GetSeconds() * 1e3;
        double rate = p.wallSeconds > 0 ? p.events / p.wallSeconds : 0;
        double left = p.now.IsPositive() && p.wallSeconds > 0
                          ? p.wallSeconds * ((p.stop - p.now).GetSeconds() / p.now.GetSeconds())
                          : 0;
        cli_progress_update(&progress,
                            "runtime: sim %.3f ms of at most %.3f ms | %.0fk events/s | flows "
                            "%" PRIu64 "/%" PRIu64 " done | %" PRIu64 " packets | left <= %.0f s",
                            simMs,
                            p.stop.GetSeconds() * 1e3,
                            rate / 1e3,
                            p.flowsDone,
                            p.flows,
                            p.packets,
                            left);
    };
    if (!CheckRuntimeOutputs(command, s, scenarioFile, dir))
        return 1;
    int rc = 0;
    try
    {
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        cli_progress_done(&progress);
        if (rt.GetEndReason() == QR_END_CANCELLED)
        {
            fprintf(stderr,
                    "qreplay %s: interrupted at %s simulated; nothing written\n",
                    command,
                    FormatTime(rt.GetEnd().GetNanoSeconds()).c_str());
            rc = cli_interrupted_status();
        }
        else
        {
            rt.Commit();
            if (!dir.empty() && cli_forget_old_results(command, dir.c_str(), quiet))
                rc = 1;
            if (!quiet)
                PrintRuntimeSummary(rt, dir);
            WarnRuntime(command, rt, cfg);
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
    cli_args a;
    int rc = cli_parse(&kSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    int nSets;
    const char** sets = cli_list(&a, "set", &nSets);
    qr_scenario* s;
    if (cli_load_scenario("runtime", a.pos[0], sets, nSets, &s))
    {
        cli_args_free(&a);
        return 1;
    }
    const qr_config* cfg = qr_scenario_config(s);
    const char* out = cli_value(&a, "out");
    std::string dir = out ? out : cfg->output.dir;
    bool quiet = cli_count(&a, "quiet") > 0;
    cli_catch_signals();
    cli_txn txn;
    char work[sizeof txn.work + 16];
    rc = cli_txn_begin_recording("runtime", dir.c_str(), quiet, &txn, work, sizeof work);
    if (rc == 0)
        rc = QrRuntimeStep("runtime", s, a.pos[0], work, cli_count(&a, "no-arrivals") == 0, quiet);
    if (rc == 0 && cli_count(&a, "light") > 0)
        rc = QrLightStep("runtime", work, std::string(work) + "/light.qrl", nullptr, 0, quiet);
    if (rc == 0)
        rc = cli_txn_commit("runtime", &txn);
    else
        cli_txn_abort(&txn);
    cli_restore_signals();
    qr_scenario_destroy(s);
    cli_args_free(&a);
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
