/* Benchmark: the qreplay runtime against a plain ns-3 setup of the same FatTree and the same TCP
 * flows (Ipv4GlobalRoutingHelper, DropTail FIFO queue discs, BulkSend/PacketSink), run side by side
 * for the same simulated time. Reports setup time, events, wall time, events per wall second, and
 * events per packet-hop (a packet arriving at a switch's egress queue disc, admitted or dropped:
 * the same count in both setups for the same traffic, so the ratio shows the events each one
 * spends per unit of work).
 *
 *   bench_runtime [--k 4,8] [--duration 5ms] [--load 30%] [SCENARIO]
 *
 * The flows come from SCENARIO (default scenarios/fattree-k4-websearch.ini) with [topology] k and
 * [traffic] duration/load overridden. The qreplay runtime runs twice: recording to disk (pcaps,
 * arrival log, HDF5) and not recording, so the cost of recording shows apart. */
#include "helper/qreplay-runtime.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"
#include "qreplay/workload.h"
}

using namespace ns3;

namespace
{

double
Now()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

struct Result
{
    double setup{0}, wall{0};
    uint64_t events{0};
    uint64_t hops{0}; /* packets that reached a switch's egress queue disc */
    double simMs{0};
};

/* The packets the root queue discs of the devices of `switches` received (admitted or dropped
 * on arrival): the run's packet-hops. */
uint64_t
Hops(const NodeContainer& switches)
{
    uint64_t hops = 0;
    for (uint32_t i = 0; i < switches.GetN(); i++)
    {
        Ptr<Node> n = switches.Get(i);
        Ptr<TrafficControlLayer> tc = n->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; tc && d < n->GetNDevices(); d++)
        {
            Ptr<QueueDisc> q = tc->GetRootQueueDiscOnDevice(n->GetDevice(d));
            if (q)
                hops += q->GetStats().nTotalReceivedPackets;
        }
    }
    return hops;
}

/* The same network with ns-3's stock parts: global routing, DropTail FIFOs of 100 packets. */
Result
RunPlain(const qr_config* c, const std::vector<qr_flow>& flows, Time simEnd)
{
    Result r;
    double t0 = Now();
    Simulator::Destroy();
    QreplayRuntime::ConfigureTcp(c);
    qr_topology* t;
    qr_topology_fattree(&t, c->topology.k);
    uint32_t nh = qr_topology_hosts(t), ns = qr_topology_switches(t);
    NodeContainer hosts, switches;
    hosts.Create(nh);
    switches.Create(ns);
    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(switches);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(c->links.rate_bps)));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(c->links.delay_ns)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100p"));
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    std::vector<Ipv4Address> hostAddr(nh);
    for (uint32_t sw = 0; sw < ns; sw++)
    {
        for (uint32_t port = 0; port < qr_topology_ports(t, sw); port++)
        {
            qr_node_kind kind;
            uint32_t peer, peerPort;
            qr_topology_link(t, sw, port, &kind, &peer, &peerPort);
            if (kind != QR_NODE_HOST && peer < sw)
                continue;
            Ptr<Node> b = kind == QR_NODE_HOST ? hosts.Get(peer) : switches.Get(peer);
            NetDeviceContainer d = p2p.Install(switches.Get(sw), b);
            tch.Install(d);
            Ipv4InterfaceContainer ifc = addr.Assign(d);
            addr.NewNetwork();
            if (kind == QR_NODE_HOST)
                hostAddr[peer] = ifc.GetAddress(1);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 5001));
    sink.Install(hosts).Start(Seconds(0));
    for (const qr_flow& f : flows)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[f.dst], 5001));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.bytes));
        bulk.SetAttribute("SendSize", UintegerValue(1448));
        bulk.Install(hosts.Get(f.src)).Start(NanoSeconds(f.start_ns));
    }
    qr_topology_destroy(t);
    r.setup = Now() - t0;
    double t1 = Now();
    Simulator::Stop(simEnd);
    Simulator::Run();
    r.wall = Now() - t1;
    r.events = Simulator::GetEventCount();
    r.hops = Hops(switches);
    r.simMs = Simulator::Now().GetSeconds() * 1e3;
    Simulator::Destroy();
    return r;
}

Result
RunQreplay(const qr_scenario* s, std::vector<qr_flow>& flows, const std::string& outDir, Time* end)
{
    Result r;
    QreplayRuntime::Options opt;
    opt.outDir = outDir;
    opt.flows = &flows;
    double t0 = Now();
    QreplayRuntime rt(s, opt);
    rt.Build();
    r.setup = Now() - t0;
    rt.Run();
    rt.Commit();
    r.wall = rt.GetWallSeconds();
    r.events = rt.GetEvents();
    r.hops = Hops(rt.GetNetwork().GetSwitches());
    r.simMs = rt.GetEnd().GetSeconds() * 1e3;
    if (end)
        *end = rt.GetEnd();
    return r;
}

void
Row(int k, const char* what, const Result& r, const Result& base)
{
    printf("%-3d %-26s %8.2f %9.3f %11lu %10lu %8.2f %8.2f %12.0f %8.2fx\n",
           k,
           what,
           r.setup,
           r.simMs,
           static_cast<unsigned long>(r.events),
           static_cast<unsigned long>(r.hops),
           r.hops ? static_cast<double>(r.events) / static_cast<double>(r.hops) : 0.0,
           r.wall,
           r.wall > 0 ? r.events / r.wall : 0.0,
           r.wall > 0 && base.wall > 0 ? base.wall / r.wall : 0.0);
}

} // namespace

int
main(int argc, char** argv)
{
    std::string ks = "4,8", duration = "5ms", load = "30%";
    std::string scen = std::string(QR_SOURCE_DIR) + "/scenarios/fattree-k4-websearch.ini";
    for (int i = 1; i < argc; i++)
    {
        if (!strcmp(argv[i], "--k") && i + 1 < argc)
            ks = argv[++i];
        else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
            duration = argv[++i];
        else if (!strcmp(argv[i], "--load") && i + 1 < argc)
            load = argv[++i];
        else if (!strcmp(argv[i], "--help"))
        {
            printf("usage: bench_runtime [--k 4,8] [--duration 5ms] [--load 30%%] [SCENARIO]\n");
            return 0;
        }
        else if (argv[i][0] != '-')
            scen = argv[i];
        else
        {
            fprintf(stderr, "bench_runtime: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    printf("qreplay runtime vs plain ns-3 (global routing, DropTail FIFO 100p), same flows and "
           "simulated time\nscenario %s, duration %s, load %s\n\n",
           scen.c_str(),
           duration.c_str(),
           load.c_str());
    printf("%-3s %-26s %8s %9s %11s %10s %8s %8s %12s %9s\n",
           "k",
           "setup",
           "setup_s",
           "sim_ms",
           "events",
           "pkt_hops",
           "ev/hop",
           "wall_s",
           "events/s",
           "speedup");
    size_t pos = 0;
    while (pos < ks.size())
    {
        size_t comma = ks.find(',', pos);
        std::string kv =
            ks.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? ks.size() : comma + 1;
        char err[QR_ERRBUF_SIZE];
        qr_scenario* s;
        qr_scenario_create_in(&s, QR_SOURCE_DIR "/data"); /* websearch.cdf and the flow lists */
        std::string sets[] = {"topology.kind=fattree",
                              "topology.k=" + kv,
                              "traffic.duration=" + duration,
                              "traffic.load=" + load};
        int rc = qr_scenario_load(s, scen.c_str(), err);
        for (const std::string& a : sets)
            rc = rc ? rc : qr_scenario_set(s, a.c_str(), err);
        rc = rc ? rc : qr_scenario_validate(s, err);
        if (rc)
        {
            fprintf(stderr, "bench_runtime: %s\n", err);
            qr_scenario_destroy(s);
            return 1;
        }
        const qr_config* c = qr_scenario_config(s);
        qr_flow* f;
        size_t n;
        if (qr_workload_from_config(c, &f, &n, err))
        {
            fprintf(stderr, "bench_runtime: %s\n", err);
            return 1;
        }
        std::vector<qr_flow> flows(f, f + n);
        free(f);
        std::string out = std::string(QR_BINARY_DIR) + "/bench-output/k" + kv;
        Time end;
        Result rec = RunQreplay(s, flows, out, &end);
        Result norec = RunQreplay(s, flows, "", nullptr);
        Result plain = RunPlain(c, flows, end);
        int k = c->topology.k;
        Row(k, "plain ns-3 (global, FIFO)", plain, plain);
        Row(k, "qreplay, no recording", norec, plain);
        Row(k, "qreplay, recording", rec, plain);
        printf("    %zu flows; plain ns-3 is run for the qreplay run's simulated time\n",
               flows.size());
        qr_scenario_destroy(s);
    }
    return 0;
}
