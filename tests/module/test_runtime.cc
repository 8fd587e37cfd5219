// The recorded closed-loop runtime, end to end: packets and bytes conserved per flow direction,
// receiver-detected drops equal to the ground truth packet for packet (data and ACKs), no queue
// over its dynamic threshold and no switch over B, one path per flow and balanced uplinks,
// byte-identical recordings for the same seed, pcaps that tshark reads with the expected counts,
// and the shipped k=4 scenario end to end.
#include "helper/qreplay-runtime.h"

#include "ns3/core-module.h"

// Criterion after ns-3: its TestSuite macro would clash with ns3::TestSuite.
#include <criterion/criterion.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/pcap_file.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
}

using namespace ns3;

namespace
{

qr_scenario*
Scenario(const std::string& ini)
{
    qr_scenario* s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create_in(&s, QR_SOURCE_DIR "/data"), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s, ini.c_str(), "test", QR_SOURCE_DIR "/scenarios", err),
                 QR_OK,
                 "%s",
                 err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
    return s;
}

qr_scenario*
ScenarioFile(const char* path)
{
    qr_scenario* s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create_in(&s, QR_SOURCE_DIR "/data"), QR_OK);
    cr_assert_eq(qr_scenario_load(s, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
    return s;
}

// Four hosts on one switch: hosts 1 and 2 send to host 0, host 0 sends to host 3, whose ACKs queue
// behind that data at host 0's port, and host 3 sends to host 0 later. The buffer holds 66 full
// packets and 50 bytes, and alpha is so large that only the buffer's size limits a queue: once 66
// data packets fill it, not even an ACK (52 B and more) fits, so ACKs are dropped as well as data.
// Every segment is ACKed at once: with delayed ACKs (40 ms) longer than the minimum RTO, a flow
// whose window collapsed to one segment sends one segment per RTO (a real TCP interaction, and
// slow to simulate).
const char* kStar = "[topology]\nkind = star\nhosts = 4\n"
                    "[buffer]\nsize = 99050B\nalpha = 1000000\n"
                    "[traffic]\nload = 0%\nstop = 5s\n"
                    "[tcp]\nmin_rto = 1ms\ndelack_count = 1\n";

std::vector<qr_flow>
StarFlows()
{
    return {{0, 1, 0, 3000000, 0, 0},
            {1, 2, 0, 3000000, 0, 0},
            {2, 0, 3, 1000000, 100000, 0},
            {3, 3, 0, 500000, 500000, 0}};
}

std::string
TmpDir(const char* name)
{
    std::string d = std::string(QR_BINARY_DIR) + "/test-output/runtime-" + name;
    std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + QR_BINARY_DIR + "/test-output'";
    cr_assert_eq(system(cmd.c_str()), 0);
    return d;
}

std::vector<uint64_t>
Sorted(std::vector<uint64_t> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

// The checks every completed run must pass.
void
CheckConservationAndDetection(const QreplayRuntime& rt)
{
    cr_assert_eq(rt.GetEndReason(),
                 QR_END_COMPLETED,
                 "run ended by %s",
                 qr_end_reason_name(rt.GetEndReason()));
    cr_assert_eq(rt.GetFlowsCompleted(), rt.GetFlows().Flows());
    cr_assert_eq(rt.GetOtherDrops(), 0u, "drops outside the shared buffers");
    cr_assert_eq(rt.GetUnknownPackets(), 0u, "packets of no flow");
    cr_assert_eq(rt.GetHostQueueDrops(), 0u);
    cr_assert_eq(rt.GetInFlight(), 0u);
    const auto& dirs = rt.GetDirStats();
    uint64_t dropped = 0;
    for (size_t d = 0; d < dirs.size(); d++)
    {
        cr_assert_eq(dirs[d].sent,
                     dirs[d].delivered + dirs[d].dropped,
                     "direction %zu: %lu sent, %lu delivered, %lu dropped",
                     d,
                     dirs[d].sent,
                     dirs[d].delivered,
                     dirs[d].dropped);
        cr_assert_eq(dirs[d].sent_bytes,
                     dirs[d].delivered_bytes + dirs[d].dropped_bytes,
                     "direction %zu: bytes",
                     d);
        cr_assert_gt(dirs[d].sent, 0u);
        dropped += dirs[d].dropped;
    }
    cr_assert_eq(rt.GetDrops().size(), dropped);
    std::vector<uint64_t> truth, seen;
    for (const auto& d : rt.GetDrops())
        truth.push_back(d.packet);
    for (const auto& d : rt.GetDetected())
    {
        seen.push_back(d.packet);
        cr_assert_eq(d.receiver,
                     d.tail ? rt.GetFlows().DirSrc(d.dir) : rt.GetFlows().DirDst(d.dir));
    }
    cr_assert(Sorted(truth) == Sorted(seen),
              "receivers detected %zu drops, switches dropped %zu, not the same packets",
              seen.size(),
              truth.size());
}

// Every host pcap: the core reads it back with the host's packet count, IP IDs consecutive per
// direction from 0, times non-decreasing and at least the host's clock offset.
void
CheckPcaps(const QreplayRuntime& rt, const std::string& dir, bool tshark)
{
    const auto& dirs = rt.GetDirStats();
    std::vector<uint64_t> perDir(dirs.size(), 0);
    uint32_t hosts = qr_topology_hosts(rt.GetNetwork().GetTopology());
    for (uint32_t h = 0; h < hosts; h++)
    {
        std::string path = dir + "/" + QreplayRuntime::PcapName(h);
        qr_pcap_reader* r;
        char err[QR_ERRBUF_SIZE];
        cr_assert_eq(qr_pcap_reader_open(&r, path.c_str(), err), QR_OK, "%s", err);
        qr_packet p;
        int rc;
        uint64_t n = 0;
        while ((rc = qr_pcap_read(r, &p, err)) == QR_OK)
        {
            n++;
            cr_assert_geq(p.time_ns, rt.GetClockOffsets()[h]);
            uint32_t d;
            qr_five_tuple ft{p.src_ip, p.dst_ip, p.src_port, p.dst_port, p.proto};
            cr_assert(rt.GetFlows().Resolve(ft, d), "%s: packet %lu of no flow", path.c_str(), n);
            cr_assert_eq(rt.GetFlows().DirSrc(d), h, "%s: a packet of another host", path.c_str());
            cr_assert_eq(p.ip_id,
                         static_cast<uint16_t>(perDir[d]),
                         "%s: direction %u: IP ID %u, expected %lu",
                         path.c_str(),
                         d,
                         p.ip_id,
                         perDir[d]);
            perDir[d]++;
        }
        cr_assert_eq(rc, QR_END, "%s", err);
        qr_pcap_reader_close(r);
        if (tshark && QR_TSHARK[0])
        {
            std::string cmd = std::string(QR_TSHARK) + " -r '" + path +
                              "' -T fields -e frame.number 2>/dev/null | wc -l";
            FILE* f = popen(cmd.c_str(), "r");
            unsigned long lines = 0;
            cr_assert_eq(fscanf(f, "%lu", &lines), 1);
            pclose(f);
            cr_assert_eq(lines,
                         n,
                         "tshark reads %lu packets in %s, the core %lu",
                         lines,
                         path.c_str(),
                         n);
        }
    }
    for (size_t d = 0; d < dirs.size(); d++)
        cr_assert_eq(perDir[d],
                     dirs[d].sent,
                     "direction %zu: %lu in pcaps, %lu sent",
                     d,
                     perDir[d],
                     dirs[d].sent);
}

std::string
ReadFile(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    cr_assert(f.good(), "cannot open %s", path.c_str());
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

} // namespace

TestSuite(runtime, .timeout = 600);

Test(runtime, star_conserves_packets_and_receivers_detect_every_drop)
{
    qr_scenario* s = Scenario(kStar);
    std::vector<qr_flow> flows = StarFlows();
    std::string dir = TmpDir("star");
    QreplayRuntime::Options opt;
    opt.outDir = dir;
    opt.flows = &flows;
    {
        QreplayRuntime rt(s, opt);
        rt.Build();
        // every packet delivered crossed the one switch: one departure each, bytes released
        uint64_t departures = 0, departedBytes = 0, lastTotal = 1;
        std::function<void(const SharedBufferQueueDisc::Departure&)> onDeparture =
            [&](const SharedBufferQueueDisc::Departure& d) {
                departures++;
                departedBytes += d.bytes;
                lastTotal = d.total_bytes;
                cr_assert_leq(d.queue_bytes, d.total_bytes);
                cr_assert_eq(d.flow, qr_packet_id_dir(d.packet));
            };
        for (uint32_t port = 0; port < 4; port++)
            rt.GetNetwork().GetQueueDisc(0, port)->TraceConnectWithoutContext(
                "Departure",
                MakeCallback(
                    &std::function<void(const SharedBufferQueueDisc::Departure&)>::operator(),
                    &onDeparture));
        rt.Run();
        rt.Commit();
        CheckConservationAndDetection(rt);
        uint64_t delivered = 0, deliveredBytes = 0;
        for (const auto& d : rt.GetDirStats())
        {
            delivered += d.delivered;
            deliveredBytes += d.delivered_bytes;
        }
        cr_assert_eq(departures, delivered);
        cr_assert_eq(departedBytes, deliveredBytes);
        cr_assert_eq(lastTotal, 0u, "the buffer is empty after the last departure");
        uint64_t dataDrops = 0, ackDrops = 0;
        for (const auto& d : rt.GetDrops())
            (d.dir % 2 ? ackDrops : dataDrops)++;
        cr_assert_gt(dataDrops, 0u, "the case must drop data packets");
        cr_assert_gt(ackDrops, 0u, "the case must drop ACKs");
        for (uint32_t f = 0; f < flows.size(); f++)
        {
            const QreplayRuntime::FlowRecord r = rt.GetFlowRecords()[f];
            cr_assert(r.end_ns > flows[f].start_ns && r.closed, "flow %u", f);
            // no flow can finish faster than its bytes at 10 Gbps
            cr_assert_geq(r.end_ns - flows[f].start_ns,
                          static_cast<int64_t>(flows[f].bytes * 8 / 10));
        }
        CheckPcaps(rt, dir, true);
        fprintf(stderr,
                "star: %zu drops (%lu data, %lu ACK), detected %zu, %lu events, end %.3f ms\n",
                rt.GetDrops().size(),
                dataDrops,
                ackDrops,
                rt.GetDetected().size(),
                rt.GetEvents(),
                rt.GetEnd().GetSeconds() * 1e3);
    }
    for (const char* f : {"recording.h5", "truth/truth.h5", "truth/arrivals.qra"})
        cr_assert(std::ifstream(dir + "/" + f).good(), "%s missing", f);
    qr_scenario_destroy(s);
}

Test(runtime, same_seed_gives_byte_identical_recordings)
{
    qr_scenario* s = Scenario(kStar);
    std::vector<qr_flow> flows = StarFlows();
    std::vector<QreplayRuntime::Drop> drops[2];
    std::vector<QreplayRuntime::Detected> detected[2];
    std::string dirs[2] = {TmpDir("det-a"), TmpDir("det-b")};
    for (int i = 0; i < 2; i++)
    {
        QreplayRuntime::Options opt;
        opt.outDir = dirs[i];
        opt.flows = &flows;
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        rt.Commit();
        drops[i] = rt.GetDrops();
        detected[i] = rt.GetDetected();
    }
    cr_assert_gt(drops[0].size(), 0u);
    cr_assert_eq(drops[0].size(), drops[1].size());
    for (size_t i = 0; i < drops[0].size(); i++)
        cr_assert(drops[0][i].packet == drops[1][i].packet &&
                      drops[0][i].time_ns == drops[1][i].time_ns &&
                      drops[0][i].sw == drops[1][i].sw && drops[0][i].port == drops[1][i].port,
                  "drop %zu differs",
                  i);
    cr_assert_eq(detected[0].size(), detected[1].size());
    for (size_t i = 0; i < detected[0].size(); i++)
        cr_assert_eq(detected[0][i].packet, detected[1][i].packet);
    for (uint32_t h = 0; h < 4; h++)
    {
        std::string name = QreplayRuntime::PcapName(h);
        cr_assert(ReadFile(dirs[0] + "/" + name) == ReadFile(dirs[1] + "/" + name),
                  "%s differs",
                  name.c_str());
    }
    cr_assert(ReadFile(dirs[0] + "/truth/arrivals.qra") ==
              ReadFile(dirs[1] + "/truth/arrivals.qra"));
    // another seed moves the clock offsets, so the pcaps differ
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_set(s, "run.seed=2", err), QR_OK);
    {
        QreplayRuntime::Options opt;
        opt.outDir = TmpDir("det-c");
        opt.flows = &flows;
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        rt.Commit();
        cr_assert(ReadFile(opt.outDir + "/pcap/h0001.pcap") !=
                  ReadFile(dirs[0] + "/pcap/h0001.pcap"));
    }
    qr_scenario_destroy(s);
}

Test(runtime, k4_scenario_conserves_and_respects_thresholds_and_paths)
{
    qr_scenario* s = ScenarioFile(QR_SOURCE_DIR "/scenarios/fattree-k4-websearch.ini");
    const qr_config* c = qr_scenario_config(s);
    std::string dir = TmpDir("k4");
    QreplayRuntime::Options opt;
    opt.outDir = dir;
    QreplayRuntime rt(s, opt);
    rt.Build();
    rt.Run();
    rt.Commit();
    CheckConservationAndDetection(rt);
    CheckPcaps(rt, dir, false);
    cr_assert_gt(rt.GetDrops().size(), 0u, "the scenario's incasts must overflow some buffer");

    const qr_topology* topo = rt.GetNetwork().GetTopology();
    const FlowTable& ft = rt.GetFlows();
    qr_arrival_reader* r;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_reader_open(&r, (dir + "/truth/arrivals.qra").c_str(), err),
                 QR_OK,
                 "%s",
                 err);
    qr_arrival a;
    int rc;
    uint64_t n = 0, admitted = 0, dropped = 0;
    std::vector<std::set<std::pair<uint32_t, uint32_t>>> hops(ft.Directions());
    while ((rc = qr_arrival_read(r, &a, err)) == QR_OK)
    {
        n++;
        uint32_t d = qr_packet_id_dir(a.packet);
        cr_assert_lt(d, ft.Directions());
        hops[d].insert({a.sw, a.port});
        if (a.decision == QR_ADMIT)
        {
            admitted++;
            cr_assert_leq(static_cast<int64_t>(a.queue_bytes + a.bytes),
                          a.threshold,
                          "arrival %lu: queue %lu + %u over the threshold %ld",
                          n,
                          a.queue_bytes,
                          a.bytes,
                          a.threshold);
            cr_assert_leq(a.total_bytes + a.bytes, c->buffer.size_bytes);
        }
        else
        {
            dropped++;
            cr_assert(static_cast<int64_t>(a.queue_bytes + a.bytes) > a.threshold ||
                          a.total_bytes + a.bytes > c->buffer.size_bytes,
                      "arrival %lu dropped within the rule",
                      n);
        }
    }
    cr_assert_eq(rc, QR_END, "%s", err);
    qr_arrival_reader_close(r);
    cr_assert_eq(dropped, rt.GetDrops().size());
    // one path per direction: as many distinct queues as the hops between its hosts
    for (uint32_t d = 0; d < ft.Directions(); d++)
    {
        uint32_t src = ft.DirSrc(d), dst = ft.DirDst(d), swS, swD, port;
        qr_topology_host_attach(topo, src, &swS, &port);
        qr_topology_host_attach(topo, dst, &swD, &port);
        size_t expect =
            swS == swD
                ? 1
                : ((ft.HostAddr(src) >> 16 & 0xff) == (ft.HostAddr(dst) >> 16 & 0xff) ? 3 : 5);
        cr_assert_eq(hops[d].size(),
                     expect,
                     "direction %u (host %u -> %u) used %zu queues, not %zu",
                     d,
                     src,
                     dst,
                     hops[d].size(),
                     expect);
    }
    fprintf(stderr,
            "k=4: %zu flows, %lu arrivals (%lu admitted, %lu dropped), %lu events in %.2f s, "
            "simulated %.3f ms\n",
            ft.Flows(),
            n,
            admitted,
            dropped,
            rt.GetEvents(),
            rt.GetWallSeconds(),
            rt.GetEnd().GetSeconds() * 1e3);
    qr_scenario_destroy(s);
}

Test(runtime, bad_flows_and_unwritable_output_are_errors_that_leave_nothing)
{
    qr_scenario* s = Scenario(kStar);
    std::vector<qr_flow> flows = {{0, 1, 9, 1000, 0, 0}};
    QreplayRuntime::Options opt;
    opt.outDir = TmpDir("bad");
    opt.flows = &flows;
    try
    {
        QreplayRuntime rt(s, opt);
        rt.Build();
        cr_assert_fail("a flow to host 9 of 4 was accepted");
    }
    catch (const std::runtime_error& e)
    {
        cr_assert(strstr(e.what(), "[traffic]") && strstr(e.what(), "9"), "%s", e.what());
    }
    // the output folder's place is taken by a file
    std::string blocked = TmpDir("blocked");
    std::ofstream(blocked) << "x";
    flows = StarFlows();
    opt.outDir = blocked + "/out";
    try
    {
        QreplayRuntime rt(s, opt);
        rt.Build();
        cr_assert_fail("wrote into a file");
    }
    catch (const std::runtime_error& e)
    {
        cr_assert(strstr(e.what(), "blocked"), "%s", e.what());
    }
    remove(blocked.c_str());
    qr_scenario_destroy(s);
}

// Many small flows between all host pairs of a k=4 FatTree: each switch's uplinks carry shares of
// its upward flow directions within 20% of an equal share (the hash spreads flows evenly), and
// every direction keeps one path.
Test(runtime, k4_ecmp_spreads_flows_evenly_over_uplinks)
{
    qr_scenario* s = Scenario("[topology]\nkind = fattree\nk = 4\n[traffic]\nload = 0%\nstop = 1s\n"
                              "[tcp]\ndelack_count = 1\n");
    std::vector<qr_flow> flows;
    for (uint32_t src = 0; src < 16; src++)
        for (uint32_t dst = 0; dst < 16; dst++)
            for (int i = 0; src != dst && i < 6; i++)
                flows.push_back({flows.size(), src, dst, 3000, 20000 * (int64_t)flows.size(), 0});
    QreplayRuntime::Options opt;
    opt.outDir = TmpDir("balance");
    opt.flows = &flows;
    QreplayRuntime rt(s, opt);
    rt.Build();
    rt.Run();
    rt.Commit();
    CheckConservationAndDetection(rt);
    const qr_topology* topo = rt.GetNetwork().GetTopology();
    qr_arrival_reader* r;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_reader_open(&r, (opt.outDir + "/truth/arrivals.qra").c_str(), err),
                 QR_OK,
                 "%s",
                 err);
    qr_arrival a;
    std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> upDirs; // (sw, uplink) -> dirs
    std::map<uint32_t, std::set<uint32_t>> dirSwitchPorts;
    while (qr_arrival_read(r, &a, err) == QR_OK)
    {
        uint32_t d = qr_packet_id_dir(a.packet);
        qr_node_kind kind;
        uint32_t peer, peerPort;
        qr_topology_link(topo, a.sw, a.port, &kind, &peer, &peerPort);
        if (kind != QR_NODE_HOST &&
            qr_topology_switch_kind(topo, peer) > qr_topology_switch_kind(topo, a.sw))
            upDirs[{a.sw, a.port}].insert(d);
    }
    qr_arrival_reader_close(r);
    // a direction that went up through two uplinks of one switch took two paths
    std::map<std::pair<uint32_t, uint32_t>, int> upsPerDirSwitch;
    for (const auto& [key, dirs] : upDirs)
        for (uint32_t d : dirs)
        {
            int n = ++upsPerDirSwitch[std::make_pair(d, key.first)];
            cr_assert_eq(n, 1, "direction %u left switch %u by two uplinks", d, key.first);
        }
    std::map<uint32_t, std::vector<size_t>> perSwitch;
    for (const auto& [key, dirs] : upDirs)
        perSwitch[key.first].push_back(dirs.size());
    size_t checked = 0;
    for (const auto& [sw, counts] : perSwitch)
    {
        size_t total = 0;
        for (size_t x : counts)
            total += x;
        cr_assert_eq(counts.size(), 2u, "switch %u: %zu uplinks used of 2", sw, counts.size());
        checked++;
        for (size_t x : counts)
        {
            double share = static_cast<double>(x) / total;
            cr_assert(share > 0.8 / counts.size() && share < 1.2 / counts.size(),
                      "switch %u: an uplink carries %.3f of %zu directions",
                      sw,
                      share,
                      total);
        }
        fprintf(stderr,
                "switch %u: uplinks carry %zu and %zu directions\n",
                sw,
                counts[0],
                counts[1]);
    }
    cr_assert_eq(checked, 16u, "8 edge and 8 aggregation switches send up");
    qr_scenario_destroy(s);
}

// A run cut by [traffic] stop: packets may still be in flight, so receivers (with the senders'
// counts) report exactly the drops of packets sent before the cutoff; the later ones are the only
// drops they miss, and packets are conserved counting those still in flight.
Test(runtime, stopped_run_detects_every_drop_before_the_cutoff)
{
    qr_scenario* s = Scenario(kStar);
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_set(s, "traffic.stop=3ms", err), QR_OK, "%s", err);
    std::vector<qr_flow> flows = StarFlows();
    QreplayRuntime::Options opt;
    opt.flows = &flows;
    QreplayRuntime rt(s, opt);
    rt.Build();
    rt.Run();
    cr_assert_eq(rt.GetEndReason(), QR_END_STOP);
    cr_assert_gt(rt.GetInFlight(), 0u, "the cut must catch packets in flight");
    uint64_t sent = 0, delivered = 0, dropped = 0;
    for (const auto& d : rt.GetDirStats())
    {
        sent += d.sent;
        delivered += d.delivered;
        dropped += d.dropped;
    }
    cr_assert_eq(sent, delivered + dropped + rt.GetInFlight());
    const auto& cut = rt.GetSentAtCutoff();
    cr_assert_eq(cut.size(), rt.GetDirStats().size(), "the cutoff snapshot was taken");
    std::set<uint64_t> seen;
    for (const auto& d : rt.GetDetected())
    {
        seen.insert(d.packet);
        cr_assert_lt(d.seq, std::max<uint64_t>(cut[d.dir], rt.GetDirStats()[d.dir].sent));
    }
    size_t missed = 0, tails = 0;
    std::set<uint64_t> truth;
    for (const auto& d : rt.GetDrops())
    {
        truth.insert(d.packet);
        uint64_t seq = qr_packet_id_seq(d.packet);
        if (!seen.count(d.packet))
        {
            missed++;
            cr_assert_geq(seq,
                          cut[d.dir],
                          "packet %lu of direction %u, sent before the cutoff, "
                          "was dropped but not detected",
                          seq,
                          d.dir);
        }
    }
    for (const auto& d : rt.GetDetected())
    {
        cr_assert(truth.count(d.packet),
                  "detected a drop that did not happen: direction %u packet %lu",
                  d.dir,
                  d.seq);
        tails += d.tail;
    }
    cr_assert_gt(tails, 0u, "the SYN lost at 0.1 ms is a tail only the sender's count shows");
    fprintf(stderr,
            "stopped at 3 ms: %zu drops, %zu detected (%zu tails), %zu after the cutoff, "
            "%lu in flight, cutoff %.3f ms before the end\n",
            truth.size(),
            seen.size(),
            tails,
            missed,
            rt.GetInFlight(),
            rt.GetMaxTransit().GetSeconds() * 1e3);
    qr_scenario_destroy(s);
}

// The TCP variants: Cubic and DCTCP run the same case with every invariant intact; DCTCP's switches
// mark CE above the ECN threshold and, reacting to the marks, it loses fewer packets than NewReno.
Test(runtime, cubic_and_dctcp_variants)
{
    std::vector<qr_flow> flows = StarFlows();
    size_t drops[3];
    uint64_t marks[3];
    const char* sets[3][2] = {{"tcp.variant=newreno", "buffer.ecn_threshold=0B"},
                              {"tcp.variant=cubic", "buffer.ecn_threshold=0B"},
                              {"tcp.variant=dctcp", "buffer.ecn_threshold=30KB"}};
    for (int v = 0; v < 3; v++)
    {
        qr_scenario* s = Scenario(kStar);
        char err[QR_ERRBUF_SIZE];
        for (const char* a : sets[v])
            cr_assert_eq(qr_scenario_set(s, a, err), QR_OK, "%s", err);
        cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
        QreplayRuntime::Options opt;
        opt.flows = &flows;
        QreplayRuntime rt(s, opt);
        rt.Build();
        marks[v] = 0;
        std::function<void(Ptr<const QueueDiscItem>, const char*)> onMark =
            [&](Ptr<const QueueDiscItem>, const char* why) {
                cr_assert_str_eq(why, "ecn");
                marks[v]++;
            };
        for (uint32_t port = 0; port < 4; port++)
            rt.GetNetwork().GetQueueDisc(0, port)->TraceConnectWithoutContext(
                "Mark",
                MakeCallback(
                    &std::function<void(Ptr<const QueueDiscItem>, const char*)>::operator(),
                    &onMark));
        rt.Run();
        CheckConservationAndDetection(rt);
        drops[v] = rt.GetDrops().size();
        fprintf(stderr,
                "%s: %zu drops, %lu CE marks, end %.3f ms\n",
                sets[v][0],
                drops[v],
                marks[v],
                rt.GetEnd().GetSeconds() * 1e3);
        qr_scenario_destroy(s);
    }
    cr_assert_eq(marks[0] + marks[1], 0u, "no ECN threshold, no marks");
    cr_assert_gt(marks[2], 0u);
    cr_assert_lt(drops[2], drops[0], "DCTCP %zu drops, NewReno %zu", drops[2], drops[0]);
}

// The host processing delay: a flow's SYN leaves its host exactly proc_delay after the flow starts
// (plus the host's clock offset in the pcap); with jitter, each stream of delays repeats exactly.
Test(runtime, processing_delay_and_jitter_at_the_host)
{
    std::vector<qr_flow> flows = {{0, 1, 0, 20000, 1000000, 0}};
    for (int64_t delay : {0, 10000})
    {
        qr_scenario* s = Scenario(kStar);
        char err[QR_ERRBUF_SIZE], set[64];
        snprintf(set, sizeof set, "host.proc_delay=%ldns", static_cast<long>(delay));
        cr_assert_eq(qr_scenario_set(s, set, err), QR_OK, "%s", err);
        QreplayRuntime::Options opt;
        opt.flows = &flows;
        opt.outDir = TmpDir(delay ? "proc10" : "proc0");
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        rt.Commit();
        CheckConservationAndDetection(rt);
        qr_pcap_reader* r;
        qr_packet p;
        cr_assert_eq(qr_pcap_reader_open(&r, (opt.outDir + "/pcap/h0001.pcap").c_str(), err),
                     QR_OK);
        cr_assert_eq(qr_pcap_read(r, &p, err), QR_OK);
        qr_pcap_reader_close(r);
        cr_assert_eq(p.tcp_flags & QR_TCP_SYN, QR_TCP_SYN);
        cr_assert_eq(p.time_ns,
                     1000000 + delay + rt.GetClockOffsets()[1],
                     "SYN at %ld ns with delay %ld",
                     static_cast<long>(p.time_ns),
                     static_cast<long>(delay));
        qr_scenario_destroy(s);
    }
    // jitter: every packet's delay is drawn anew; the same stream repeats, another one differs
    qr_scenario* s = Scenario(kStar);
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_set(s, "host.proc_delay=10us", err), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "host.proc_jitter=100ns", err), QR_OK);
    std::string pcaps[3];
    for (int i = 0; i < 3; i++)
    {
        QreplayRuntime::Options opt;
        opt.flows = &flows;
        opt.outDir = TmpDir(i == 0 ? "jit-a" : i == 1 ? "jit-b" : "jit-c");
        opt.jitterStream = i < 2 ? 1 : 2;
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        rt.Commit();
        CheckConservationAndDetection(rt);
        pcaps[i] = ReadFile(opt.outDir + "/pcap/h0001.pcap");
    }
    cr_assert(pcaps[0] == pcaps[1], "same jitter stream, same send times");
    cr_assert(pcaps[0] != pcaps[2], "another jitter stream moves send times");
    qr_scenario_destroy(s);
}
