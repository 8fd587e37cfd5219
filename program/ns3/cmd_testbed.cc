/* qreplay testbed: real Linux TCP through a real queue (testbed_net.h), imported from the hosts'
 * captures (qreplay/import.h), scored against the switch's own captures (qreplay/testbed.h) by the
 * same replays and metrics as qreplay run. */
#include "helper/pipeline.h"

#include "cli.h"
#include "opt.h"
#include "program.h"
#include "testbed_net.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/apps.h"
#include "qreplay/diagnose.h"
#include "qreplay/diagnose_score.h"
#include "qreplay/error.h"
#include "qreplay/fabric_truth.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/import.h"
#include "qreplay/krec_recording.h"
#include "qreplay/krecord.h"
#include "qreplay/pingmesh.h"
#include "qreplay/queuelog.h"
#include "qreplay/random.h"
#include "qreplay/recording.h"
#include "qreplay/tb_repeat.h"
#include "qreplay/testbed.h"
#include "qreplay/topology.h"
#include "qreplay/traceroute.h"
#include "qreplay/truth.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/workload.h"
}

namespace
{

const cli_opt kTestbedOpts[] = {
    CLI_OPT_ENGINE,
    CLI_OPT_SET,
    CLI_OPT_OUT("run folder (default: the scenario's [output] dir)"),
    {"record",
     0,
     CLI_FLAG,
     nullptr,
     "run the kernel recorder (qreplay record, eBPF) on every host beside tcpdump and check each "
     "host's record against its capture"},
    {"cleanup",
     0,
     CLI_FLAG,
     nullptr,
     "only remove the namespaces of testbeds whose process is gone (after a kill -9), then exit"},
    {"rate",
     0,
     CLI_VALUE,
     "R",
     "measured (default: replay at the rate the bottleneck port served while busy) or nominal\n"
     "                         (the scenario's [links] rate)"},
    {"repeat",
     0,
     CLI_VALUE,
     "N",
     "then run the same flows N more times with the run's drops re-applied (the packet\n"
     "                         corrector) and compare each repeat's packets with the run's"},
    {"jitter",
     0,
     CLI_VALUE,
     "TIME",
     "--repeat: move each flow's start by up to TIME at random in each repeat (default 0)"},
    CLI_OPT_NO_FIGURES,
    CLI_OPT_QUIET,
};

const cli_spec kTestbedSpec = {
    "testbed",
    "SCENARIO",
    "Run the scenario on real Linux TCP instead of ns-3 and score the replay against the real\n"
    "queue. Builds the star out of network namespaces (one per host, one for the switch, veth\n"
    "pairs), shapes every host and switch egress to [links] rate with a token bucket over a\n"
    "byte FIFO of the port's [buffer] size (policy = static), and runs the scenario's flows\n"
    "with the kernel's TCP ([tcp] variant, min_rto and init_cwnd per route, socket buffers).\n"
    "tcpdump captures every host (DIR/capture/hN.pcap: the recording, as an operator would\n"
    "have it) and both directions of every switch port (swN-in.pcap, swN-out.pcap: the ground\n"
    "truth). A capture that lost packets invalidates the run. Then the hosts' captures are\n"
    "imported (DIR/recording), the switch's give each packet's arrival and departure and the\n"
    "queue per flow at every arrival (DIR/recording/truth, drops checked against the qdisc's\n"
    "counter), every [replay] mode at every [sampling] th is replayed in ns-3 (at the rate the\n"
    "bottleneck port measurably served, unless --rate nominal) and scored\n"
    "(DIR/results.h5, the table and figures of qreplay run). DIR/testbed/flows.csv holds each\n"
    "flow's completion time and retransmissions, DIR/testbed/ports.csv each port's queue.\n"
    "With [traffic] pattern = apps the hosts run real applications instead of the flows\n"
    "(testbed/apps.py: an HTTP/1.1 keep-alive session, a request/response protocol with think\n"
    "time, a two-way bulk; [traffic] apps = 'NAME CLIENT>SERVER [at TIME], ...'); then every\n"
    "connection is diagnosed from the hosts' captures (DIR/diagnosis.h5) and each exchange's\n"
    "diagnosis is scored against what the switch's captures show (DIR/testbed/diagnosis.csv:\n"
    "its drops, the queue its packets met, right, wrong or unknown); DIR/testbed/apps.csv holds\n"
    "each session's outcome.\n"
    "With [topology] kind = fattree (k = 2 or 4) it builds a fat tree of host and switch\n"
    "namespaces routed by Linux's own multipath hash (a seed per switch), captures both\n"
    "directions of every switch port (DIR/capture/sS-pP.pcap), plants [faults] gray and\n"
    "blackhole with nftables rules (rate with the port's shaper; delay is refused), runs 007's\n"
    "traceroute agents ([traceroute]) and Pingmesh's probe agents ([pingmesh]) on every host,\n"
    "and follows every packet through the switches' captures (DIR/recording/truth: the true\n"
    "paths, every drop and whose, checked against the qdiscs' and rules' counters); then\n"
    "qreplay blame, pingmesh and trace analyse DIR. Its flows are not replayed.\n"
    "Needs root, iproute2, tcpdump and ethtool (and nft for faults). Keys the testbed cannot\n"
    "honour are refused. Everything it creates is removed when it ends, also on Ctrl-C or an\n"
    "error; after a kill -9, --cleanup removes what is left.\n"
    "With --repeat N (the star, flows) the same flows run N more times on the same kernels\n"
    "from the same ports, the switch's ports buffering everything, while a packet corrector\n"
    "(a tc BPF program on the switch's ports) drops exactly the packets the run's switch\n"
    "dropped (by their sequence and acknowledgement numbers relative to each connection's\n"
    "start, at the same copy); each repeat's host captures are imported (DIR/repeat/rK) and\n"
    "compared with the run's, connection by connection: the same packets in the same order\n"
    "both ways is an exact repeat (DIR/testbed/repeats.csv). --jitter moves the flows' starts\n"
    "at random: DETER's butterfly, measured on Linux.\n",
    kTestbedOpts,
    sizeof kTestbedOpts / sizeof kTestbedOpts[0],
    0,
    1,
    "expected one SCENARIO file",
    "examples:\n  sudo qreplay testbed scenarios/testbed-single-switch.ini -o results/testbed\n"
    "  sudo qreplay testbed scenarios/testbed-fattree.ini -o /tmp/ft && qreplay blame /tmp/ft\n"
    "  sudo qreplay testbed scenarios/testbed-single-switch.ini --repeat 5 --jitter 10us\n"};

struct Free
{
    void operator()(qr_flow* f) const { qr_flows_free(f); }
};

bool
RemoveFile(const std::string& p)
{
    return unlink(p.c_str()) == 0 || errno == ENOENT;
}

/* The files a capture folder gets per host. */
const char* const kCaptureFiles[] = {"h%u.pcap", "sw%u-in.pcap", "sw%u-out.pcap"};

std::string
CaptureFile(const std::string& capDir, const char* pattern, uint32_t h)
{
    char name[64];
    snprintf(name, sizeof name, pattern, h);
    return capDir + "/" + name;
}

/* Every file a run writes into its capture folder: per host (the star: and its switch port), or
 * on the fabric every switch port's capture, every fault's log and every switch's nft rules. */
std::vector<std::string>
CaptureFiles(const std::string& capDir, uint32_t hosts, const qr_fabric* fab)
{
    std::vector<std::string> v;
    for (uint32_t h = 0; h < hosts; h++)
        for (const char* f : kCaptureFiles)
            if (!fab || f == kCaptureFiles[0])
                v.push_back(CaptureFile(capDir, f, h));
    if (!fab)
        return v;
    const qr_topology* t = qr_fabric_topology(fab);
    char name[64];
    for (uint32_t sw = 0; sw < qr_fabric_switches(fab); sw++)
    {
        for (uint32_t p = 0; p < qr_topology_ports(t, sw); p++)
        {
            snprintf(name, sizeof name, "/s%u-p%u.pcap", sw, p);
            v.push_back(capDir + name);
        }
        snprintf(name, sizeof name, "/faults-s%u.nft", sw);
        v.push_back(capDir + name);
    }
    for (uint32_t h = 0; h < hosts; h++)
    {
        snprintf(name, sizeof name, "/pinglist-h%u.csv", h);
        v.push_back(capDir + name);
    }
    size_t nf;
    qr_fabric_faults(fab, &nf);
    for (size_t i = 0; i < QR_LINK_FAULTS_MAX && i < nf; i++)
    {
        snprintf(name, sizeof name, "/fault-%zu.pcap", i + 1);
        v.push_back(capDir + name);
    }
    return v;
}

/* The sender port of every flow of the schedule, numbered as the runtime numbers them (the flow
 * table's). Returns false with the reason in err. */
bool
SenderPorts(const qr_config* c,
            const qr_flow* fl,
            size_t nFlows,
            std::vector<uint16_t>& ports,
            char* err)
{
    qr_topology* topo = nullptr;
    qr_flow_table* ft = nullptr;
    if ((c->topology.kind == QR_TOPO_FATTREE ? qr_topology_fattree(&topo, c->topology.k)
                                             : qr_topology_star(&topo, c->topology.hosts)) ||
        qr_flow_table_for_topology(&ft, fl, nFlows, topo, err))
    {
        qr_topology_destroy(topo);
        return false;
    }
    ports.resize(nFlows);
    for (size_t i = 0; i < nFlows; i++)
        ports[i] = qr_flow_table_sender_port(ft, static_cast<uint32_t>(i));
    qr_flow_table_destroy(ft);
    qr_topology_destroy(topo);
    return true;
}

/* Refuse outputs that are inputs, make the folders and remove the outputs of an earlier run (a
 * stale file is never read as new), all in the run folder's stage (dir). Returns false after
 * printing why. */
bool
PrepareOutputs(const std::string& dir,
               const std::string& scenarioPath,
               const qr_scenario* sc,
               uint32_t hosts,
               const qr_fabric* fab)
{
    std::string capDir = dir + "/capture", tbDir = dir + "/testbed";
    std::vector<std::string> caps = CaptureFiles(capDir, hosts, fab);
    cli_paths in{}, out{};
    cli_paths_add_scenario(&in, scenarioPath.c_str(), sc);
    for (const char* f : {"/results.h5",
                          "/recording/recording.h5",
                          "/recording/truth/truth.h5",
                          "/recording/truth/arrivals.qra",
                          "/recording/" QR_MIRROR_COPIES,
                          "/testbed/flows.csv",
                          "/testbed/ports.csv",
                          "/testbed/processes.csv",
                          "/testbed/apps.csv",
                          "/testbed/diagnosis.csv",
                          "/testbed/diagnosis-record.csv",
                          "/testbed/record-times.csv",
                          "/testbed/fabric.csv",
                          "/testbed/paths.csv",
                          "/testbed/traceroutes.csv",
                          "/capture/paths.txt",
                          "/diagnosis.h5",
                          "/diagnosis-record.h5",
                          "/capture/schedule.csv"})
        cli_paths_add(&out, "%s%s", dir.c_str(), f);
    for (const std::string& f : caps)
        cli_paths_add(&out, "%s", f.c_str());
    if (cli_check_outputs("testbed", &out, &in) || cli_make_dir("testbed", capDir.c_str()) ||
        cli_make_dir("testbed", tbDir.c_str()))
        return false;
    for (const std::string& f : caps)
        RemoveFile(f);
    RemoveFile(dir + "/results.h5");
    for (const char* f : {"/flows.csv",
                          "/ports.csv",
                          "/processes.csv",
                          "/apps.csv",
                          "/diagnosis.csv",
                          "/diagnosis-record.csv",
                          "/record-times.csv",
                          "/fabric.csv",
                          "/paths.csv",
                          "/traceroutes.csv"})
        RemoveFile(tbDir + f);
    RemoveFile(capDir + "/paths.txt");
    RemoveFile(dir + "/diagnosis.h5");
    RemoveFile(dir + "/diagnosis-record.h5");
    /* an earlier run's kernel records: never replayed as this run's */
    for (const char* sub : {"/record", "/record-refused"})
    {
        std::string recDir = dir + sub;
        if (DIR* d = opendir(recDir.c_str()))
        {
            while (struct dirent* e = readdir(d))
                if (e->d_name[0] != '.')
                    RemoveFile(recDir + "/" + e->d_name);
            closedir(d);
            rmdir(recDir.c_str());
        }
    }
    return true;
}

/* A text written whole (ctx: the string). */
void
WriteText(FILE* f, const void* ctx)
{
    fputs(static_cast<const char*>(ctx), f);
}

/* DIR/testbed/recorder.log: what the kernel recorder said when it stopped (its losses told
 * apart, its programs' runs). Returns 0 or 1 after printing. */
int
WriteRecorderLog(const std::string& dir, const tb_run& run)
{
    char err[QR_ERRBUF_SIZE];
    if (qr_write_text_file((dir + "/testbed/recorder.log").c_str(),
                           WriteText,
                           run.recorder_said,
                           err))
        return cli_fail("testbed", "%s", err);
    return 0;
}

/* What the captures and the recorder cost (DIR/testbed/processes.csv): each process's user and
 * system CPU seconds and how long it ran. Returns 0, or 1 after the error. */
int
WriteProcesses(const std::string& dir, const tb_run& run)
{
    std::string path = dir + "/testbed/processes.csv", part = path + ".partial";
    FILE* f = fopen(part.c_str(), "w");
    if (!f)
        return cli_fail("testbed", "%s: %s", part.c_str(), strerror(errno));
    fprintf(f, "process,cpu_s,wall_s\n");
    for (size_t i = 0; i < run.n_procs; i++)
        fprintf(f, "%s,%.6f,%.6f\n", run.procs[i].name, run.procs[i].cpu_s, run.procs[i].wall_s);
    if (fclose(f) || rename(part.c_str(), path.c_str()))
    {
        unlink(part.c_str());
        return cli_fail("testbed", "%s: %s", path.c_str(), strerror(errno));
    }
    return 0;
}

/* The hosts' captures become the recording (dir/recording). Returns 0 or the exit status after
 * printing the error. */
int
ImportCaptures(const std::string& dir,
               const qr_scenario* sc,
               const qr_fabric* fab,
               const char* pathsFile,
               const std::vector<qr_row_icmp>* icmp,
               uint32_t hosts,
               size_t nFlows,
               const char* flowsWord,
               bool quiet)
{
    std::vector<std::string> caps(hosts);
    std::vector<const char*> capv(hosts);
    std::vector<qr_host_map_entry> map(hosts);
    for (uint32_t h = 0; h < hosts; h++)
    {
        caps[h] = CaptureFile(dir + "/capture", kCaptureFiles[0], h);
        capv[h] = caps[h].c_str();
        char addr[32];
        tb_host_addr(fab, h, addr, sizeof addr);
        memset(&map[h], 0, sizeof map[h]);
        qr_addr_parse(addr, map[h].addr);
        map[h].host = h;
        snprintf(map[h].capture, sizeof map[h].capture, "h%u.pcap", h);
        map[h].line = h + 1;
    }
    qr_import_cfg icfg{};
    icfg.captures = capv.data();
    icfg.n_captures = hosts;
    icfg.map = map.data();
    icfg.n_map = hosts;
    icfg.clock = QR_IMPORT_CLOCK_NONE;
    icfg.network_known = 1; /* the captures are of the testbed's own network */
    icfg.paths = pathsFile; /* 007's traceroutes, if any */
    if (icmp)               /* and the switches' ICMP counters, one epoch: the run */
    {
        icfg.icmp = icmp->data();
        icfg.n_icmp = icmp->size();
    }
    qr_import_report* irep = nullptr;
    char err[QR_ERRBUF_SIZE];
    if (qr_import_run(&icfg, sc, (dir + "/recording").c_str(), &irep, err))
        return cli_fail("testbed", "import: %s", err);
    if (cli_forget_old_results("testbed", (dir + "/recording").c_str(), quiet))
    {
        qr_import_report_free(irep);
        return 1;
    }
    if (!quiet)
        printf("import             %zu connections (the scenario has %zu %s), %" PRIu64
               " packets\n",
               irep->connections,
               nFlows,
               flowsWord,
               irep->packets);
    qr_import_report_free(irep);
    return 0;
}

/* 007's traceroutes: the agents' log (DIR/testbed/traceroutes.csv) and the paths they found as
 * the import's path file (DIR/capture/paths.txt). Returns 0 or 1 after printing. */
int
WriteTraces(const std::string& dir,
            const qr_fabric* fab,
            const qr_flow* fl,
            size_t nFlows,
            const std::vector<uint16_t>& ports,
            const tb_run& run)
{
    char err[QR_ERRBUF_SIZE];
    if (qr_testbed_traces_write((dir + "/testbed/traceroutes.csv").c_str(),
                                (dir + "/capture/paths.txt").c_str(),
                                qr_fabric_topology(fab),
                                fl,
                                nFlows,
                                ports.data(),
                                run.traces,
                                run.n_traces,
                                err))
        return cli_fail("testbed", "%s", err);
    return 0;
}

/* The one rule (qr_testbed_too_slow), said once: a machine that did not keep up. */
void
WarnIfTooSlow(int64_t hopP99Ns, uint64_t rateBps)
{
    if (qr_testbed_too_slow(hopP99Ns, rateBps))
        fprintf(stderr,
                "qreplay testbed: warning: 1%% of the packets took over %s from their host's "
                "capture to their switch's, more than a packet's time at %g Mbps (%s): this "
                "machine does not keep up with the rate, and the truth shows its delays; a "
                "lower [links] rate gives a faithful testbed\n",
                FormatTime(hopP99Ns).c_str(),
                static_cast<double>(rateBps) / 1e6,
                FormatTime(qr_testbed_packet_ns(rateBps)).c_str());
}

/* The fabric's faults and what the agents' probes met, printed. */
void
PrintFabricAgents(const std::string& rec,
                  const tb_run& run,
                  const qr_fabric* fab,
                  const qr_fabric_truth_report& r)
{
    const qr_topology* t = qr_fabric_topology(fab);
    size_t nf;
    const qr_fabric_fault* f = qr_fabric_faults(fab, &nf);
    for (size_t i = 0; i < nf; i++)
    {
        char name[24];
        qr_topology_link_name(t, f[i].link, name, sizeof name);
        if (f[i].kind == QR_LINK_RATE)
            printf("fault %-12u rate on %s: %.3g Mbps (its shaper)\n",
                   f[i].fault,
                   name,
                   static_cast<double>(f[i].rate_bps) / 1e6);
        else
            printf("fault %-12u %s on %s: %" PRIu64 " of %" PRIu64 " packets dropped (= its "
                   "rule's counter, its log)\n",
                   f[i].fault,
                   qr_link_fault_kind_name(f[i].kind),
                   name,
                   r.faults[i].dropped,
                   r.faults[i].crossed);
    }
    if (run.conf->traceroute.per_connection > 0)
    {
        uint64_t answered = 0, traces = 0;
        for (size_t i = 0; i < run.n_traces; i++)
        {
            answered += run.traces[i].replier != 0;
            traces = std::max<uint64_t>(traces, run.traces[i].trace + 1);
        }
        printf("007's agents       %" PRIu64 " traceroutes on retransmissions, %zu probes, %" PRIu64
               " answered by the switches (Linux's ICMP rate limits; they sent %" PRIu64
               " packets themselves); %" PRIu64 " probes seen at switch ports, %" PRIu64
               " dropped by faults\n",
               traces,
               run.n_traces,
               answered,
               r.own_sent,
               r.trace_probes,
               r.trace_fault_drops);
    }
    if (run.pingmesh)
        printf("Pingmesh's agents  %zu TCP connect probes, %" PRIu64 " lost: %" PRIu64
               " by faults, %" PRIu64 " by queues, %" PRIu64 " at their hosts, %" PRIu64
               " answered late\n",
               run.n_pings,
               r.pings_lost,
               r.pings_fault,
               r.pings_queue,
               r.pings_host,
               r.pings_late);
    if (run.sweep_drops)
        printf("Everflow's probes  %" PRIu64 " guided probes sent after the traffic (%d per pinned "
               "5-tuple), %zu copies mirrored at switch ports -> %s/mirror/\n",
               run.guided_sent,
               run.conf->everflow.guided,
               r.n_mirror,
               cli_shown(rec.c_str()));
}

/* The fabric's ground truth printed. */
void
PrintFabricTruth(const std::string& dir,
                 const tb_run& run,
                 const qr_fabric* fab,
                 const qr_fabric_truth_report& r)
{
    std::string rec = dir + "/recording";
    uint64_t qd = 0;
    for (uint32_t q = 0; q < r.n_ports; q++)
        qd += r.ports[q].qdisc_drops;
    printf("truth              %" PRIu64 " packets, %" PRIu64 " delivered over %" PRIu64
           " switch hops; %" PRIu64 " dropped by queues (with %" PRIu64 " probes' and %" PRIu64
           " not TCP: the qdiscs' %" PRIu64 "), %" PRIu64 " by faults (and %" PRIu64 " not TCP)\n",
           r.packets,
           r.delivered,
           r.hops,
           r.queue_drops,
           r.probe_queue_drops,
           r.other_queue_drops,
           qd,
           r.fault_drops,
           r.other_fault_drops);
    if (r.expired || r.other_expired || r.returned)
        printf("                   %" PRIu64 " went on until their TTL ran out (and %" PRIu64
               " more: probes, repeats, not TCP; the switches' kernels counted every one), %" PRIu64
               " switches' own answers came back to them (dropped as martians): lost outside the "
               "queues\n",
               r.expired,
               r.other_expired,
               r.returned);
    printf("                   host -> switch p50 %s, p99 %s (a packet's time: %s)\n",
           FormatTime(r.hop_p50_ns).c_str(),
           FormatTime(r.hop_p99_ns).c_str(),
           FormatTime(qr_testbed_packet_ns(run.conf->links.rate_bps)).c_str());
    if (r.unrecorded || r.skipped_frames)
        printf("                   not followed: %" PRIu64 " TCP frames of no recorded connection, "
               "%" PRIu64 " frames that are not TCP\n",
               r.unrecorded,
               r.skipped_frames);
    if (r.repeat_sends)
        printf("                   not followed: %" PRIu64 " packets a host sent twice alike "
               "(IP ID 0; the import keeps one), and their %" PRIu64 " repeated sightings (%" PRIu64
               " of the repeats dropped by a queue, counted with the qdiscs')\n",
               r.repeat_sends,
               r.repeat_frames,
               r.repeat_queue_drops);
    std::string spread;
    for (uint32_t c = 0; c < r.n_core; c++)
        spread += (c ? "/" : "") + std::to_string(r.core_dirs[c]);
    printf("paths              %" PRIu64 " directions delivered; data directions across pods per "
           "core switch: %s (Linux's ECMP)\n",
           r.directions,
           spread.c_str());
    PrintFabricAgents(rec, run, fab, r);
    if (r.unknown_port_drops)
        printf("note               %" PRIu64 " queue drops at a switch their direction never left: "
               "their port is unknown (%" PRIu64 " have no arrival in the log)\n",
               r.unknown_port_drops,
               r.unplaced_drops);
    if (run.same_hash_seed)
        printf("note               this kernel has no per-switch ECMP hash seed "
               "(fib_multipath_hash_seed, Linux 6.11): every switch hashes alike\n");
    printf("ground truth       %s/truth/ (truth.h5, arrivals.qra), %s/testbed/fabric.csv, "
           "paths.csv\n",
           cli_shown(rec.c_str()),
           cli_shown(dir.c_str()));
}

/* The fabric's ground truth from its switch ports' captures and the faults' logs (fabric_truth.h),
 * written and printed. Returns 0 or 1 after printing. */
int
FabricTruth(const std::string& dir, const tb_run& run, const qr_fabric* fab, bool quiet)
{
    std::string rec = dir + "/recording", cap = dir + "/capture";
    qr_fabric_truth_in in{rec.c_str(),
                          cap.c_str(),
                          fab,
                          run.qdisc_drops,
                          run.fault_drops,
                          run.own_sent,
                          run.own_taken,
                          run.pingmesh != nullptr,
                          run.pings,
                          run.n_pings,
                          run.agents_stop_ns,
                          run.ttl_expired,
                          run.own_back};
    qr_fabric_truth_report r{};
    char err[QR_ERRBUF_SIZE];
    if (qr_fabric_truth(&in, &r, err))
        return cli_fail("testbed", "truth: %s", err);
    std::unique_ptr<qr_fabric_truth_report, void (*)(qr_fabric_truth_report*)> own(
        &r,
        qr_fabric_truth_report_free);
    if (qr_fabric_truth_write((dir + "/testbed/fabric.csv").c_str(),
                              (dir + "/testbed/paths.csv").c_str(),
                              fab,
                              &r,
                              err))
        return cli_fail("testbed", "%s", err);
    if (qr_fabric_mirror_write((rec + "/mirror").c_str(), fab, &r, run.sweep_drops, r.base_ns, err))
        return cli_fail("testbed", "%s", err);
    if (run.sweep_drops && !r.n_mirror)
        return cli_fail("testbed",
                        "the agents sent %" PRIu64 " guided probes and no switch port's capture "
                        "holds one: the debug mark did not cross the fabric",
                        run.guided_sent);
    WarnIfTooSlow(r.hop_p99_ns, run.conf->links.rate_bps);
    if (!quiet)
        PrintFabricTruth(dir, run, fab, r);
    return 0;
}

void
PrintTruth(const qr_testbed_truth_report& trep, uint32_t hosts)
{
    printf("truth              %" PRIu64 " arrivals at the switch, %" PRIu64
           " drops (= the qdiscs' counters); host -> switch p50 %s, p99 %s\n",
           trep.arrivals,
           trep.drops,
           FormatTime(trep.hop_p50_ns).c_str(),
           FormatTime(trep.hop_p99_ns).c_str());
    printf("%-6s %10s %8s %12s %14s %16s\n",
           "port",
           "arrivals",
           "drops",
           "max queue",
           "drops w/ room",
           "rate when busy");
    for (uint32_t h = 0; h < hosts; h++)
    {
        const qr_testbed_port_report& r = trep.ports[h];
        printf("%-6u %10" PRIu64 " %8" PRIu64 " %8.1f MTU %14" PRIu64 " %11.2f Mbps\n",
               h,
               r.arrivals,
               r.drops,
               static_cast<double>(r.max_queue_bytes) / 1500.0,
               r.drops_with_room,
               r.busy_rate_bps / 1e6);
    }
    fflush(stdout);
}

/* The switch's captures are the truth (dir/recording/truth, dir/testbed/ports.csv); the
 * replay's rate follows the policy. Returns 0 or the exit status after printing the error. */
int
SwitchTruth(const std::string& dir,
            qr_scenario* sc,
            const tb_run& run,
            uint32_t hosts,
            uint64_t portLimit,
            bool measuredRate,
            bool quiet)
{
    const qr_config* c = qr_scenario_config(sc);
    uint64_t nominalRate = c->links.rate_bps;
    std::string capDir = dir + "/capture";
    std::vector<std::string> ins(hosts), outs(hosts);
    std::vector<qr_testbed_port> tports(hosts);
    for (uint32_t h = 0; h < hosts; h++)
    {
        ins[h] = CaptureFile(capDir, kCaptureFiles[1], h);
        outs[h] = CaptureFile(capDir, kCaptureFiles[2], h);
        tports[h] = {ins[h].c_str(), outs[h].c_str(), run.qdisc_drops[h]};
    }
    qr_testbed_truth_report trep{};
    char err[QR_ERRBUF_SIZE];
    if (qr_testbed_truth((dir + "/recording").c_str(), tports.data(), hosts, portLimit, &trep, err))
        return cli_fail("testbed", "ground truth: %s", err);
    std::unique_ptr<qr_testbed_truth_report, void (*)(qr_testbed_truth_report*)> own(
        &trep,
        qr_testbed_truth_report_free);
    if (qr_testbed_ports_write((dir + "/testbed/ports.csv").c_str(), &trep, portLimit, err))
        return cli_fail("testbed", "%s", err);
    if (!quiet)
        PrintTruth(trep, hosts);
    WarnIfTooSlow(trep.hop_p99_ns, c->links.rate_bps);
    if (!quiet && trep.reordered)
        printf("reordered          %" PRIu64
               " packets crossed another of their direction between host and switch\n",
               trep.reordered);
    char kv[64];
    if (qr_testbed_replay_rate(&trep, measuredRate, kv, sizeof kv))
    {
        double served = trep.ports[trep.bottleneck].busy_rate_bps;
        if (qr_scenario_replace(sc, kv, err) || qr_scenario_validate(sc, err))
            return cli_fail("testbed", "replay rate: %s", err);
        if (!quiet)
            printf("replay rate        %.2f Mbps: what the bottleneck's shaper served while busy "
                   "(nominal %g Mbps; --rate nominal replays at that)\n",
                   served / 1e6,
                   static_cast<double>(nominalRate) / 1e6);
    }
    return 0;
}

using RecordSetPtr = std::unique_ptr<qr_krec_set, void (*)(qr_krec_set*)>;

/* DIR/SUB's kernel records as one set named as rec's connections (checked against its packets
 * unless unchecked) into *out. Returns 0, or 1 after the error. */
int
OpenRunRecords(const std::string& dir,
               const char* sub,
               bool unchecked,
               const qr_recording* rec,
               RecordSetPtr* out)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording* again = nullptr;
    qr_krec_set* ks = nullptr;
    int rc = cli_open_records(dir.c_str(),
                              sub,
                              unchecked,
                              qr_recording_scenario(rec),
                              &again,
                              &ks,
                              nullptr,
                              err);
    qr_recording_close(again);
    if (rc)
        return cli_fail("testbed", "the kernel records: %s", err);
    out->reset(ks);
    return 0;
}

/* A diagnosis of the applications' connections (dg, of rec or of records named as rec) written
 * to dir/NAME.h5, each exchange scored against the switch's captures (dir/testbed/NAME.csv) and
 * printed. Returns 0 or the exit status after printing the error. */
int
ScoreAppsDiagnosis(const std::string& dir,
                   const char* name,
                   const char* from,
                   const qr_recording* rec,
                   const qr_diagnosis& dg,
                   const std::vector<qr_app>& apps,
                   const tb_run& run,
                   bool quiet)
{
    char err[QR_ERRBUF_SIZE];
    std::string recDir = dir + "/recording", h5 = dir + "/" + name + ".h5";
    if (qr_diagnosis_write(h5.c_str(), qr_recording_scenario(rec), qr_recording_id(rec), &dg, err))
        return cli_fail("testbed", "%s", err);
    std::vector<int32_t> session(dg.n_flows + 1);
    if (qr_testbed_app_sessions(recDir.c_str(), rec, apps.data(), apps.size(), session.data(), err))
        return cli_fail("testbed", "%s", err);
    std::vector<uint8_t> done(dg.n_flows + 1);
    for (size_t f = 0; f < dg.n_flows; f++)
        done[f] = session[f] >= 0 &&
                  qr_testbed_app_completed(&apps[session[f]], &run.app_res[session[f]]);
    qr_diag_score sc{};
    std::unique_ptr<qr_diag_score, void (*)(qr_diag_score*)> ownSc(&sc, qr_diag_score_free);
    if (qr_diagnose_score(&dg,
                          rec,
                          (recDir + "/truth/arrivals.qra").c_str(),
                          done.data(),
                          &sc,
                          err) ||
        qr_diag_score_write_csv((dir + "/testbed/" + name + ".csv").c_str(), &sc, err))
        return cli_fail("testbed", "diagnosis against the switch: %s", err);
    if (quiet)
        return 0;
    printf("== diagnosis of every connection from the hosts' %s (%s) against the switch's "
           "captures\n",
           from,
           cli_shown(h5.c_str()));
    printf("%-22s %4s %3s %10s %-20s %5s %8s %10s  %s\n",
           "session",
           "conn",
           "ex",
           "bytes",
           "cause",
           "lost",
           "dropped",
           "max queue",
           "verdict (max queue: its data or ACKs at the switch)");
    for (size_t i = 0; i < sc.n_rows; i++)
    {
        const qr_diag_score_row& r = sc.rows[i];
        char who[48];
        int32_t k = session[r.flow];
        if (k >= 0)
            snprintf(who,
                     sizeof who,
                     "%d %s %s",
                     k,
                     qr_app_name(apps[k].kind),
                     r.dir == 0 ? "->" : "<-");
        else
            snprintf(who, sizeof who, "(none) %s", r.dir == 0 ? "->" : "<-");
        printf("%-22s %4u %3u %10" PRIu64 " %-20s %5u %8u %6.1f MTU  %s%s%s\n",
               who,
               r.flow,
               r.index,
               r.bytes,
               qr_diag_cause_name(r.cause),
               r.lost,
               r.dropped,
               static_cast<double>(std::max(r.max_queue_bytes, r.max_ack_queue_bytes)) / 1500.0,
               qr_diag_verdict_name(r.verdict),
               r.why[0] ? ": " : "",
               r.why);
    }
    printf("right              %zu of %zu exchanges (%zu wrong, %zu unknown); %zu of %zu "
           "connections right in every exchange; %" PRIu64 " data packets dropped at the "
           "switch, %" PRIu64 " losses diagnosed\n",
           sc.right,
           sc.n_rows,
           sc.wrong,
           sc.unknown,
           sc.connections_right,
           sc.connections,
           sc.dropped,
           sc.lost);
    fflush(stdout);
    return 0;
}

/* Real applications: every connection diagnosed from the hosts' captures (dir/diagnosis.h5) and,
 * with kernel records kept (dir/record), from those too (dir/diagnosis-record.h5); each exchange
 * scored against the switch's captures (dir/testbed/diagnosis.csv, diagnosis-record.csv).
 * Returns 0 or the exit status after printing the error. */
int
DiagnoseApps(const std::string& dir,
             const qr_config* c,
             const std::vector<qr_app>& apps,
             const tb_run& run,
             bool records,
             bool quiet)
{
    char err[QR_ERRBUF_SIZE];
    std::string recDir = dir + "/recording";
    qr_recording* rec = nullptr;
    if (qr_recording_open(&rec, recDir.c_str(), nullptr, err))
        return cli_fail("testbed", "%s", err);
    std::unique_ptr<qr_recording, void (*)(qr_recording*)> ownRec(rec, qr_recording_close);
    qr_diag_opts o;
    qr_diag_opts_default(&o);
    o.all = 1;
    o.rto_min_ns = c->tcp.min_rto_ns; /* the hosts' routes carry the scenario's rto_min */
    qr_diagnosis dg{};
    std::unique_ptr<qr_diagnosis, void (*)(qr_diagnosis*)> ownDg(&dg, qr_diagnosis_free);
    if (qr_diagnose(rec, &o, &dg, err))
        return cli_fail("testbed", "diagnose: %s", err);
    int rc = ScoreAppsDiagnosis(dir, "diagnosis", "captures", rec, dg, apps, run, quiet);
    if (rc || !records)
        return rc;
    /* records set aside (a packet no event told) are diagnosed too, as what they hold: named as
     * the captures' connections, not checked packet by packet (their losses are then the
     * kernel's own conclusions: a record with events lost is not whole) */
    bool aside = !cli_exists((dir + "/record").c_str());
    if (aside && !cli_exists((dir + "/record-refused").c_str()))
        return 0;
    RecordSetPtr ownKs(nullptr, qr_krec_set_close);
    if (OpenRunRecords(dir, aside ? "record-refused" : "record", aside, rec, &ownKs))
        return 1;
    qr_krec_set* ks = ownKs.get();
    qr_diagnosis dr{};
    std::unique_ptr<qr_diagnosis, void (*)(qr_diagnosis*)> ownDr(&dr, qr_diagnosis_free);
    if (qr_diagnose_records(ks, &o, &dr, err))
        return cli_fail("testbed", "diagnose from the kernel records: %s", err);
    return ScoreAppsDiagnosis(dir,
                              "diagnosis-record",
                              aside ? "kernel records (set aside)" : "kernel records",
                              rec,
                              dr,
                              apps,
                              run,
                              quiet);
}

/* What the testbed cannot honour, and the replay's rate it sets after the run, checked before
 * anything is built; then root. Returns -1, or the exit status after the error. */
int
TestbedCheck(qr_scenario* sc, const std::string& scenarioPath)
{
    char err[QR_ERRBUF_SIZE], all[4096];
    const qr_config* c = qr_scenario_config(sc);
    if (qr_testbed_check_all(c, all, sizeof all))
        return cli_fail("testbed", "%s: %s", scenarioPath.c_str(), all);
    /* the same key at its nominal value must take */
    char kv[64];
    snprintf(kv, sizeof kv, "links.rate=%" PRIu64 "bps", c->links.rate_bps);
    if (qr_scenario_replace(sc, kv, err) || qr_scenario_validate(sc, err))
        return cli_fail("testbed", "%s: replay rate: %s", scenarioPath.c_str(), err);
    return tb_check_privileges("testbed") ? 1 : -1;
}

/* The run's first line: its size, rate, buffer, traffic and congestion control. */
void
TestbedBanner(const qr_config* c,
              uint32_t hosts,
              uint64_t portLimit,
              size_t items,
              bool apps,
              const std::string& capDir)
{
    printf("== testbed: %u hosts, %g Mbps links, %" PRIu64 " B per switch port, %zu %s, %s "
           "-> %s\n",
           hosts,
           static_cast<double>(c->links.rate_bps) / 1e6,
           portLimit,
           items,
           apps ? "application sessions" : "flows",
           qr_testbed_congestion(c->tcp.variant),
           cli_shown(capDir.c_str()));
    fflush(stdout);
}

/* qreplay testbed --cleanup: the namespaces an interrupted run left. */
int
TestbedCleanup()
{
    if (geteuid() != 0)
        return cli_fail("testbed", "--cleanup needs root (it deletes network namespaces)");
    int n = tb_cleanup_stale("testbed");
    printf("removed %d namespace%s\n", n, n == 1 ? "" : "s");
    return 0;
}

/* The scenario's application sessions into appv (*nApps of them) and the script that runs them.
 * Returns -1, or the exit status after the error. */
int
TestbedApps(const qr_config* c,
            uint32_t hosts,
            const std::string& scenarioPath,
            std::vector<qr_app>& appv,
            size_t* nApps,
            std::string* script)
{
    char err[QR_ERRBUF_SIZE];
    if (qr_apps_parse(c->traffic.apps, hosts, appv.data(), appv.size(), nApps, err))
        return cli_fail("testbed", "%s: [traffic] apps: %s", scenarioPath.c_str(), err);
    appv.resize(*nApps);
    const char* tdir = cli_testbed_dir();
    if (!tdir)
        return cli_fail("testbed", "cannot find the testbed folder (apps.py) next to the program");
    *script = std::string(tdir) + "/apps.py";
    if (access(script->c_str(), R_OK) != 0)
        return cli_fail("testbed", "%s: %s", script->c_str(), strerror(errno));
    if (access("/usr/bin/python3", X_OK) != 0)
        return cli_fail("testbed",
                        "/usr/bin/python3 not found: the applications are Python's (install "
                        "the Debian package python3, ./waf deps)");
    return -1;
}

/* The sessions' outcomes to DIR/testbed/apps.csv and, unless quiet, on stdout. Returns 0 or the
 * exit status after the error. */
int
TestbedAppsReport(const std::string& dir,
                  const std::string& shownDir,
                  const std::vector<qr_app>& appv,
                  const tb_run& run,
                  bool quiet)
{
    char err[QR_ERRBUF_SIZE];
    size_t nApps = appv.size(), appsDone = 0;
    if (qr_testbed_apps_write((dir + "/testbed/apps.csv").c_str(),
                              appv.data(),
                              run.app_res,
                              nApps,
                              &appsDone,
                              err))
        return cli_fail("testbed", "%s", err);
    if (quiet)
        return 0;
    printf("traffic            %.3f s, %zu of %zu application sessions completed (%s)\n",
           run.traffic_s,
           appsDone,
           nApps,
           run.kernel);
    for (size_t i = 0; i < nApps; i++)
        if (!qr_testbed_app_completed(&appv[i], &run.app_res[i]))
            printf("                   session %zu (%s %u>%u): %s\n",
                   i,
                   qr_app_name(appv[i].kind),
                   appv[i].client,
                   appv[i].server,
                   run.app_res[i].why[0] ? run.app_res[i].why : "incomplete");
    printf("== import -> %s/recording\n", shownDir.c_str());
    fflush(stdout);
    return 0;
}

/* DIR/testbed/tcp.csv: the hosts' kernels' own TCP counters over the run (tb_run). */
void
WriteTcpCounters(FILE* f, const void* ctx)
{
    const auto* run = static_cast<const tb_run*>(ctx);
    fprintf(f,
            "fast_retrans,reorder_events\n%" PRIu64 ",%" PRIu64 "\n",
            run->fast_retrans,
            run->reorder_events);
}

/* The flows' outcomes to DIR/testbed/flows.csv and, unless quiet, on stdout (a warning when
 * [traffic] stop cut some short). Returns 0 or 1 after the error. */
int
TestbedFlowsReport(const std::string& dir,
                   const std::string& shownDir,
                   const tb_run& run,
                   bool quiet)
{
    tb_flow_summary fs{};
    if (tb_write_flows("testbed", &run, (dir + "/testbed/flows.csv").c_str(), &fs))
        return 1;
    char err[QR_ERRBUF_SIZE];
    if (qr_write_text_file((dir + "/testbed/tcp.csv").c_str(), WriteTcpCounters, &run, err))
        return cli_fail("testbed", "%s", err);
    if (quiet)
        return 0;
    size_t nFlows = run.n_flows;
    printf("traffic            %.3f s, %zu of %zu flows completed, %" PRIu64
           " retransmissions (%s)\n",
           run.traffic_s,
           fs.completed,
           nFlows,
           fs.retransmissions,
           run.kernel);
    printf("                   the hosts' kernels: %" PRIu64 " fast retransmits, %" PRIu64
           " reorderings detected%s\n",
           run.fast_retrans,
           run.reorder_events,
           run.reorder_events ? " (each raised a socket's dupack threshold above 3)"
                              : ": every socket's dupack threshold stayed at 3, so no fast "
                                "retransmit came late");
    if (run.stopped)
        fprintf(stderr,
                "qreplay testbed: warning: %zu of %zu flows did not complete before "
                "[traffic] stop = %s: the agents reset them then\n",
                nFlows - fs.completed,
                nFlows,
                FormatTime(run.conf->traffic.stop_ns).c_str());
    if (fs.completed)
        printf("FCT                p50 %s, p99 %s\n",
               FormatTime(fs.fct_p50_ns).c_str(),
               FormatTime(fs.fct_p99_ns).c_str());
    printf("== import -> %s/recording\n", shownDir.c_str());
    fflush(stdout);
    return 0;
}

/* What the testbed's hosts run: the scenario's flows (with their senders' ports) or its
 * applications. */
struct TestbedWork
{
    bool apps = false;
    std::vector<qr_app> appv = std::vector<qr_app>(QR_APPS_MAX);
    size_t nApps = 0;
    std::string appsScript;
    std::unique_ptr<qr_flow, Free> flows;
    size_t nFlows = 0;
    std::vector<uint16_t> ports;
};

/* The scenario's workload into w. Returns -1, or the exit code after saying why not. */
int
TestbedWorkload(const qr_config* c, uint32_t hosts, const std::string& scenarioPath, TestbedWork& w)
{
    char err[QR_ERRBUF_SIZE];
    w.apps = c->traffic.pattern == QR_PATTERN_APPS;
    if (w.apps)
        return TestbedApps(c, hosts, scenarioPath, w.appv, &w.nApps, &w.appsScript);
    qr_flow* fl = nullptr;
    if (qr_workload_from_config(c, &fl, &w.nFlows, err))
        return cli_fail("testbed", "%s: %s", scenarioPath.c_str(), err);
    w.flows.reset(fl);
    if (w.nFlows == 0)
        return cli_fail("testbed", "%s: the scenario has no flows", scenarioPath.c_str());
    if (!SenderPorts(c, fl, w.nFlows, w.ports, err))
        return cli_fail("testbed", "%s: %s", scenarioPath.c_str(), err);
    return -1;
}

/* The kernel recorder's records against the hosts' captures: every host's packets handed to the
 * NIC and their payload are its capture's (core: qr_krec_check_capture), and no event was lost.
 * Records that differ are set aside (DIR/record-refused, never replayed) with a warning saying
 * which host and by how much: the run's captures and truth stand without them. Returns 0, or 1
 * after an error reading them. */
/* The records' send times at each of their thresholds against the hosts' captures, packet by
 * packet (DIR/testbed/record-times.csv). Returns 0, or 1 after an error. */
int
CompareRecordTimes(const std::string& dir, bool quiet)
{
    char err[QR_ERRBUF_SIZE];
    std::string recDir = dir + "/recording";
    qr_recording* like = nullptr;
    if (qr_recording_open(&like, recDir.c_str(), nullptr, err))
        return cli_fail("testbed", "%s", err);
    std::unique_ptr<qr_recording, void (*)(qr_recording*)> ownLike(like, qr_recording_close);
    RecordSetPtr ownKs(nullptr, qr_krec_set_close);
    if (OpenRunRecords(dir, "record", false, like, &ownKs))
        return 1;
    qr_krec_set* ks = ownKs.get();
    const qr_krec_header* h = qr_krec_set_header(ks);
    std::vector<qr_krec_time_cmp> rows(h->n_th);
    for (size_t i = 0; i < h->n_th; i++)
        if (qr_krec_set_compare_times(ks, like, h->th_ns[i], &rows[i], err))
            return cli_fail("testbed", "the records' send times: %s", err);
    std::string csv = dir + "/testbed/record-times.csv";

    struct Rows
    {
        const std::vector<qr_krec_time_cmp>* v;
    } r{&rows};

    auto write = [](FILE* f, const void* ctx) {
        const Rows* x = static_cast<const Rows*>(ctx);
        fprintf(f, "th_ns,packets,mean_ns,p50_ns,p99_ns,max_ns,bias_ns\n");
        for (const qr_krec_time_cmp& c : *x->v)
            fprintf(f,
                    "%" PRId64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                    ",%" PRId64 "\n",
                    c.th_ns,
                    c.packets,
                    c.mean_ns,
                    c.p50_ns,
                    c.p99_ns,
                    c.max_ns,
                    c.bias_ns);
    };
    if (qr_write_text_file(csv.c_str(), write, &r, err))
        return cli_fail("testbed", "%s", err);
    if (quiet)
        return 0;
    for (const qr_krec_time_cmp& c : rows)
    {
        char t[32], a[32], b[32], m[32];
        printf("record times       at %s: %" PRIu64 " packets, |record - capture| median %s, p99 "
               "%s, max %s\n",
               qr_format_time(c.th_ns, t, sizeof t),
               c.packets,
               qr_format_time(c.p50_ns, a, sizeof a),
               qr_format_time(c.p99_ns, b, sizeof b),
               qr_format_time(c.max_ns, m, sizeof m));
    }
    return 0;
}

/* One host's row of DIR/testbed/records.csv. */
struct RecordRow
{
    qr_krec_capture_check k;
    qr_krec_stats st;
};

void
WriteRecordRows(FILE* f, const void* ctx)
{
    const auto* rows = static_cast<const std::vector<RecordRow>*>(ctx);
    fprintf(f,
            "host,record_packets,record_payload,capture_frames,capture_payload,unseen,"
            "recorder_lost,lost_events,events,file_bytes\n");
    for (size_t h = 0; h < rows->size(); h++)
    {
        const RecordRow& r = (*rows)[h];
        fprintf(f,
                "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                h,
                r.k.record_packets,
                r.k.record_payload,
                r.k.capture_frames,
                r.k.capture_payload,
                r.st.unseen,
                r.st.recorder_lost,
                r.st.lost_events,
                r.st.events,
                r.st.file_bytes);
    }
}

int
CheckRecords(const std::string& dir, uint32_t hosts, bool quiet)
{
    uint64_t packets = 0, payload = 0, lost = 0, bytes = 0, own = 0, unseen = 0;
    std::string why;
    std::vector<RecordRow> rows(hosts);
    for (uint32_t h = 0; h < hosts; h++)
    {
        char rec[4400], cap[4400], err[QR_ERRBUF_SIZE];
        snprintf(rec, sizeof rec, "%s/record/h%u.qrk", dir.c_str(), h);
        snprintf(cap, sizeof cap, "%s/capture/h%u.pcap", dir.c_str(), h);
        qr_krec_capture_check k;
        if (qr_krec_check_capture(rec, cap, &k, err))
            return cli_fail("testbed", "%s", err);
        if ((k.record_packets != k.capture_frames || k.record_payload != k.capture_payload) &&
            why.empty())
        {
            char m[512];
            snprintf(m,
                     sizeof m,
                     "host %u: the kernel recorder saw %" PRIu64 " packets (%" PRIu64
                     " B of payload) handed to the NIC, its capture %" PRIu64 " frames (%" PRIu64
                     " B)",
                     h,
                     k.record_packets,
                     k.record_payload,
                     k.capture_frames,
                     k.capture_payload);
            why = m;
        }
        qr_krec* kr;
        if (qr_krec_open(&kr, rec, err))
            return cli_fail("testbed", "%s", err);
        qr_krec_stats st;
        qr_krec_stats_get(kr, &st);
        qr_krec_close(kr);
        rows[h] = RecordRow{k, st};
        lost = st.lost_events; /* the recorder's, the same in every record */
        own = st.recorder_lost;
        unseen += st.unseen;
        bytes += st.file_bytes;
        packets += k.record_packets;
        payload += k.record_payload;
    }
    char err[QR_ERRBUF_SIZE];
    if (qr_write_text_file((dir + "/testbed/records.csv").c_str(), WriteRecordRows, &rows, err))
        return cli_fail("testbed", "%s", err);
    if (lost)
        why = (why.empty() ? "" : why + "; ") + "the kernel recorder lost " + std::to_string(lost) +
              " events: " + std::to_string(own) +
              " its own (its ring buffer was full, or the kernel skipped a run of its programs), " +
              std::to_string(unseen) + " packets the hosts sent that no event told (IPv4 ID gaps)";
    if (!why.empty())
    {
        std::string from = dir + "/record", to = dir + "/record-refused";
        if (rename(from.c_str(), to.c_str()))
            return cli_fail("testbed", "%s: %s", from.c_str(), strerror(errno));
        fprintf(stderr,
                "qreplay testbed: warning: %s; the records are set aside in %s/record-refused, "
                "not replayed\n",
                why.c_str(),
                cli_shown(dir.c_str()));
        return 0;
    }
    if (!quiet)
        printf("kernel recorder    every host's record = its capture: %" PRIu64
               " packets to the NIC, %" PRIu64 " B of payload; no event lost; %" PRIu64
               " B of records in %s/record/\n",
               packets,
               payload,
               bytes,
               cli_shown(dir.c_str()));
    return CompareRecordTimes(dir, quiet);
}

/* After the run: its report, the traceroutes, the recording imported from the hosts' captures,
 * the ground truth from the switches' and the applications' diagnosis. Returns the exit code. */
int
TestbedRecord(const std::string& dir,
              const std::string& shownDir,
              qr_scenario* sc,
              const TestbedWork& w,
              const tb_run& run,
              bool measuredRate,
              bool quiet)
{
    const qr_config* c = qr_scenario_config(sc);
    const qr_fabric* fab = run.fabric;
    uint32_t hosts = fab ? qr_fabric_hosts(fab) : static_cast<uint32_t>(c->topology.hosts);
    bool traced = fab && c->traceroute.per_connection > 0;
    int rc = w.apps ? TestbedAppsReport(dir, shownDir, w.appv, run, quiet)
                    : TestbedFlowsReport(dir, shownDir, run, quiet);
    if (rc == 0 && traced)
        rc = WriteTraces(dir, fab, w.flows.get(), w.nFlows, w.ports, run);
    std::string pathsFile = dir + "/capture/paths.txt";
    // the switches' own ICMP counters over the run, for 007's bound (blame checks it)
    std::vector<qr_row_icmp> icmp;
    for (uint32_t sw = 0; traced && sw < qr_fabric_switches(fab); sw++)
        icmp.push_back(qr_row_icmp{sw, 0, run.icmp_sent[sw], run.icmp_refused[sw]});
    if (rc == 0)
        rc = ImportCaptures(dir,
                            sc,
                            fab,
                            traced ? pathsFile.c_str() : nullptr,
                            traced ? &icmp : nullptr,
                            hosts,
                            w.apps ? w.nApps : w.nFlows,
                            w.apps ? "application sessions" : "flows",
                            quiet);
    if (rc == 0 && fab)
        rc = FabricTruth(dir, run, fab, quiet);
    else if (rc == 0)
        rc = SwitchTruth(dir, sc, run, hosts, run.port_limit, measuredRate, quiet);
    if (rc == 0 && run.record)
        rc = CheckRecords(dir, hosts, quiet);
    if (rc == 0 && w.apps)
        rc = DiagnoseApps(dir, c, w.appv, run, run.record, quiet);
    return rc;
}

/* One repeat's row of DIR/testbed/repeats.csv. */
struct RepeatRow
{
    int repeat;
    int64_t jitterNs;
    qr_tb_repeat_summary sum;
    uint64_t listed, dropped, unknown, seen;
    std::vector<qr_tb_repeat_conn> conns;
};

/* What WriteConnections writes: the repeats and the run's drops per flow. */
struct RepeatTable
{
    const std::vector<RepeatRow>* rows;
    const std::vector<uint32_t>* flowDrops;
};

void
WriteConnections(FILE* f, const void* ctx)
{
    const auto* t = static_cast<const RepeatTable*>(ctx);
    fprintf(f, "repeat,flow,run_drops,packets,repeated,same_prefix,exact,data_same\n");
    for (const RepeatRow& r : *t->rows)
        for (const qr_tb_repeat_conn& c : r.conns)
            fprintf(f,
                    "%d,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,%d\n",
                    r.repeat,
                    c.flow,
                    c.flow < t->flowDrops->size() ? (*t->flowDrops)[c.flow] : 0u,
                    c.packets,
                    c.repeated,
                    c.same_prefix,
                    c.exact,
                    c.data_same);
}

void
WriteRepeats(FILE* f, const void* ctx)
{
    const auto* rows = static_cast<const std::vector<RepeatRow>*>(ctx);
    fprintf(f,
            "repeat,jitter_ns,connections,found,exact,data_same,packets,same_prefix,"
            "drops_listed,drops_applied,packets_seen,unknown_packets\n");
    for (const RepeatRow& r : *rows)
        fprintf(f,
                "%d,%" PRId64 ",%zu,%zu,%zu,%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%" PRIu64 "\n",
                r.repeat,
                r.jitterNs,
                r.sum.connections,
                r.sum.found,
                r.sum.exact,
                r.sum.data_same,
                r.sum.packets,
                r.sum.same_prefix,
                r.listed,
                r.dropped,
                r.seen,
                r.unknown);
}

/* The run's drops as the corrector's fates, from its recording and its switch's truth. */
int
RunFates(const std::string& dir,
         std::vector<qr_tb_fate>& fates,
         qr_tb_fates_report& rep,
         std::vector<uint32_t>& flowDrops)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording* r = nullptr;
    if (qr_recording_open(&r, (dir + "/recording").c_str(), nullptr, err))
        return cli_fail("testbed", "%s", err);
    qr_truth t{};
    int rc = qr_truth_read((dir + "/recording/truth/truth.h5").c_str(), &t, err);
    qr_tb_fate* f = nullptr;
    size_t n = 0;
    std::vector<uint32_t> wire(qr_recording_hosts(r));
    for (uint32_t h = 0; h < wire.size(); h++)
    {
        char a[32];
        uint8_t b[16];
        tb_host_addr(nullptr, h, a, sizeof a);
        qr_addr_parse(a, b);
        wire[h] = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
    }
    if (rc == 0)
        rc = qr_tb_fates(r, &t, wire.data(), &f, &n, &rep, err);
    flowDrops.assign(qr_flow_table_flows(qr_recording_flows(r)), 0);
    for (size_t i = 0; rc == 0 && i < t.n_drops; i++)
        if (qr_dir_flow(t.drops[i].dir) < flowDrops.size())
            flowDrops[qr_dir_flow(t.drops[i].dir)]++;
    qr_truth_free(&t);
    qr_recording_close(r);
    if (rc)
        return cli_fail("testbed", "%s", err);
    fates.assign(f, f + n);
    free(f);
    return 0;
}

/* Repeat k of the run: the same flows from the same ports (starts moved by up to jitterNs), the
 * run's drops re-applied, captured into DIR/repeat/rK and compared with the run. */
int
RunRepeat(const std::string& dir,
          qr_scenario* sc,
          const TestbedWork& w,
          const std::vector<qr_tb_fate>& fates,
          int k,
          int64_t jitterNs,
          RepeatRow& row)
{
    const qr_config* c = qr_scenario_config(sc);
    std::string rdir = dir + "/repeat/r" + std::to_string(k);
    char derr[QR_ERRBUF_SIZE];
    if (qr_make_dirs((rdir + "/capture").c_str(), derr))
        return cli_fail("testbed", "%s", derr);
    std::vector<qr_flow> flows(w.flows.get(), w.flows.get() + w.nFlows);
    qr_tb_repeat_jitter(flows.data(), flows.size(), c->run.seed, k, jitterNs);
    std::string capDir = rdir + "/capture";
    tb_run run{};
    run.conf = c;
    run.flows = flows.data();
    run.n_flows = flows.size();
    run.src_port = w.ports.data();
    run.port_limit = 64u << 20; /* everything buffered: the corrector alone drops */
    run.capture_dir = capDir.c_str();
    run.quiet = 1;
    run.fates = fates.data();
    run.n_fates = fates.size();
    int rc = tb_run_testbed("testbed", &run);
    row.dropped = run.corrected;
    row.unknown = run.corrected_unknown;
    row.seen = run.corrected_seen;
    tb_run_free(&run);
    uint32_t hosts = static_cast<uint32_t>(c->topology.hosts);
    if (rc == 0)
        rc = ImportCaptures(rdir, sc, nullptr, nullptr, nullptr, hosts, w.nFlows, "flows", true);
    char err[QR_ERRBUF_SIZE];
    qr_recording *a = nullptr, *b = nullptr;
    if (rc == 0 && (qr_recording_open(&a, (dir + "/recording").c_str(), nullptr, err) ||
                    qr_recording_open(&b, (rdir + "/recording").c_str(), nullptr, err)))
        rc = cli_fail("testbed", "%s", err);
    if (rc == 0)
        row.conns.resize(qr_flow_table_flows(qr_recording_flows(a)));
    if (rc == 0 && qr_tb_repeat_compare(a, b, row.conns.data(), &row.sum, err))
        rc = cli_fail("testbed", "%s", err);
    qr_recording_close(a);
    qr_recording_close(b);
    return rc;
}

/* --repeat: the run's flows again, repeats times, each compared with the run. */
int
TestbedRepeats(const std::string& dir,
               qr_scenario* sc,
               const TestbedWork& w,
               int repeats,
               int64_t jitterNs,
               bool quiet)
{
    std::vector<qr_tb_fate> fates;
    qr_tb_fates_report rep{};
    std::vector<uint32_t> flowDrops;
    if (RunFates(dir, fates, rep, flowDrops))
        return 1;
    if (!quiet)
        printf("repeats            %d, the run's %zu drops re-applied as %zu fates (%zu not: "
               "%zu of no connection start seen, %zu beyond the %d-th copy)%s\n",
               repeats,
               rep.expressed,
               fates.size(),
               rep.no_start + rep.too_many,
               rep.no_start,
               rep.too_many,
               QR_TB_FATE_MAX_OCCURRENCE,
               jitterNs > 0 ? ", starts jittered" : "");
    std::vector<RepeatRow> rows;
    cli_progress prog;
    cli_progress_init(&prog, quiet);
    for (int k = 1; k <= repeats && !cli_signal; k++)
    {
        cli_progress_update(&prog, "testbed: repeat %d of %d", k, repeats);
        RepeatRow row{k, jitterNs, {}, rep.expressed, 0, 0, 0, {}};
        if (RunRepeat(dir, sc, w, fates, k, jitterNs, row))
        {
            cli_progress_done(&prog);
            return cli_signal ? cli_interrupted_status() : 1;
        }
        rows.push_back(row);
    }
    cli_progress_done(&prog);
    if (cli_signal)
        return cli_interrupted_status();
    char err[QR_ERRBUF_SIZE];
    RepeatTable table{&rows, &flowDrops};
    if (qr_write_text_file((dir + "/testbed/repeats.csv").c_str(), WriteRepeats, &rows, err) ||
        qr_write_text_file((dir + "/testbed/repeat-connections.csv").c_str(),
                           WriteConnections,
                           &table,
                           err))
        return cli_fail("testbed", "%s", err);
    for (const RepeatRow& r : rows)
        if (!quiet)
            printf("repeat %-3d         %zu of %zu connections repeated their packets exactly, "
                   "%zu their data segments (%zu found); %" PRIu64 " of %" PRIu64
                   " packets the same before the first "
                   "difference; %" PRIu64 " of the %" PRIu64 " drops re-applied (of %" PRIu64
                   " packets, %" PRIu64 " of no start seen)\n",
                   r.repeat,
                   r.sum.exact,
                   r.sum.connections,
                   r.sum.data_same,
                   r.sum.found,
                   r.sum.same_prefix,
                   r.sum.packets,
                   r.dropped,
                   r.listed,
                   r.seen,
                   r.unknown);
    return 0;
}

} // namespace

extern "C" int
qr_cmd_testbed(int argc, char** argv)
{
    cli_watchdog_off(); /* it stops its processes and removes its namespaces itself */
    cli_args a;
    int rc = cli_parse(&kTestbedSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (cli_count(&a, "cleanup"))
    {
        cli_args_free(&a);
        return TestbedCleanup();
    }
    if (a.n_pos != 1)
    {
        cli_args_free(&a);
        return cli_usage_error("testbed", "expected one SCENARIO file");
    }
    int nSets;
    const char** sets = cli_list(&a, "set", &nSets);
    bool quiet = cli_count(&a, "quiet") > 0, figures = cli_count(&a, "no-figures") == 0;
    bool record = cli_count(&a, "record") > 0;
    const char* repeatOpt = cli_value(&a, "repeat");
    const char* jitterOpt = cli_value(&a, "jitter");
    long repeats = 0;
    int64_t jitterNs = 0;
    {
        char* end = nullptr;
        char jerr[QR_ERRBUF_SIZE];
        if (repeatOpt && ((repeats = strtol(repeatOpt, &end, 10)) < 1 || repeats > 1000 || *end))
        {
            cli_args_free(&a);
            return cli_usage_error("testbed",
                                   "--repeat: '%s' is not a count of 1 to 1000",
                                   repeatOpt);
        }
        if (jitterOpt &&
            (!repeatOpt || qr_parse_time_ns(jitterOpt, &jitterNs, jerr) || jitterNs < 0))
        {
            cli_args_free(&a);
            return cli_usage_error("testbed",
                                   repeatOpt ? "--jitter: '%s' is not a time"
                                             : "--jitter goes with --repeat ('%s')",
                                   jitterOpt);
        }
    }
    std::string scenarioPath = a.pos[0];
    const char* outOpt = cli_value(&a, "out");
    const char* rateOpt = cli_value(&a, "rate");
    bool measuredRate = !rateOpt || !strcmp(rateOpt, "measured");
    if (rateOpt && !measuredRate && strcmp(rateOpt, "nominal"))
    {
        cli_args_free(&a);
        return cli_usage_error("testbed", "--rate: '%s' is not measured or nominal", rateOpt);
    }
    const char* engineName = QrEngineOption("testbed", cli_value(&a, "engine"));
    if (!engineName)
    {
        cli_args_free(&a);
        return 2;
    }
    std::string engine = engineName;
    qr_scenario* sc = nullptr;
    rc = cli_load_scenario("testbed", scenarioPath.c_str(), sets, nSets, &sc);
    std::string dir = !rc ? (outOpt ? outOpt : qr_scenario_config(sc)->output.dir) : "";
    cli_args_free(&a);
    if (rc)
        return 1;
    std::unique_ptr<qr_scenario, void (*)(qr_scenario*)> s(sc, qr_scenario_destroy);
    const qr_config* c = qr_scenario_config(sc);
    char err[QR_ERRBUF_SIZE];
    if ((rc = TestbedCheck(sc, scenarioPath)) >= 0)
        return rc;
    qr_fabric* fabRaw = nullptr;
    if (c->topology.kind == QR_TOPO_FATTREE && qr_fabric_plan(c, &fabRaw, err))
        return cli_fail("testbed", "%s: %s", scenarioPath.c_str(), err);
    std::unique_ptr<qr_fabric, void (*)(qr_fabric*)> fab(fabRaw, qr_fabric_destroy);
    qr_pingmesh* pmRaw = nullptr;
    if (fabRaw && c->pingmesh.interval_ns > 0 &&
        qr_pingmesh_create(&pmRaw, c, qr_fabric_topology(fabRaw), err))
        return cli_fail("testbed", "%s: %s", scenarioPath.c_str(), err);
    std::unique_ptr<qr_pingmesh, void (*)(qr_pingmesh*)> pm(pmRaw, qr_pingmesh_destroy);
    uint32_t hosts = fabRaw ? qr_fabric_hosts(fabRaw) : static_cast<uint32_t>(c->topology.hosts);
    uint64_t portLimit = qr_testbed_port_limit(c);
    TestbedWork w;
    if ((rc = TestbedWorkload(c, hosts, scenarioPath, w)) >= 0)
        return rc;
    bool apps = w.apps;
    if (repeats > 0 && (apps || fabRaw))
        return cli_usage_error("testbed",
                               "--repeat runs a star's flows again ([traffic] pattern = apps and "
                               "the fat tree are not repeated)");
    // the run folder is the transaction: the run is built beside the old one (its captures
    // included) and swapped in whole when complete; a failure or an interrupt leaves the old
    // untouched and nothing of the new (main commits or aborts)
    std::string shownDir = dir;
    const char* work = cli_output_folder("testbed", dir.c_str(), quiet);
    if (!work)
        return 1;
    dir = work;
    if (!PrepareOutputs(dir, scenarioPath, sc, hosts, fabRaw))
        return 1;
    std::string capDir = dir + "/capture", recordDir = dir + "/record";
    cli_catch_signals();
    if (!quiet)
        TestbedBanner(c, hosts, portLimit, apps ? w.nApps : w.nFlows, apps, capDir);
    tb_run run{};
    run.conf = c;
    run.flows = w.flows.get();
    run.n_flows = w.nFlows;
    run.src_port = w.ports.data();
    run.apps = w.appv.data();
    run.n_apps = w.nApps;
    run.apps_script = w.appsScript.c_str();
    run.port_limit = portLimit;
    run.capture_dir = capDir.c_str();
    run.fabric = fabRaw;
    run.pingmesh = pmRaw;
    run.quiet = quiet;
    run.record = record;
    run.record_dir = recordDir.c_str();
    rc = tb_run_testbed("testbed", &run);
    if (rc == 0)
        rc = WriteProcesses(dir, run);
    if (rc == 0 && record)
        rc = WriteRecorderLog(dir, run);
    if (rc == 0)
        rc = TestbedRecord(dir, shownDir, sc, w, run, measuredRate, quiet);
    tb_run_free(&run);
    if (rc == 0 && repeats > 0)
        rc = TestbedRepeats(dir, sc, w, static_cast<int>(repeats), jitterNs, quiet);
    if (rc || fabRaw)
    {
        /* the fabric's replays would route by the simulator's hash, not the kernels' paths */
        cli_restore_signals();
        return rc;
    }
    rc = QrReplaysAndMetrics("testbed", dir, sc, engine.c_str(), quiet);
    cli_restore_signals();
    if (rc == 0 && figures)
        rc = cli_figures("testbed",
                         "plot_results.py",
                         (dir + "/results.h5").c_str(),
                         (dir + "/figures").c_str(),
                         quiet);
    return rc;
}
