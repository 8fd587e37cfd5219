/*
 * qreplay ns-3 module example: a FatTree with shared-buffer switches, driven by ns-3's own
 * applications.
 *
 * Builds a k-ary FatTree with the module's FatTreeHelper (per-flow ECMP routing, no global
 * routing), puts a SharedBufferQueueDisc on every switch port (one SharedBuffer per switch: Size
 * bytes shared by its ports, dynamic threshold Alpha), and starts ns-3's BulkSend applications:
 * `--senders` hosts each send `--bytes` to host 0 at the same moment (an incast), so host 0's
 * edge port overflows. Drops are counted through the queue discs' standard trace source
 * "DropBeforeEnqueue" (the reason names the shared buffer's decision: threshold, buffer-full),
 * and printed per queue.
 *
 *   ./fat-tree-shared-buffer --k=4 --senders=12 --bytes=300000 --bufferSize=200000 --alpha=1
 */
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include "helper/fat-tree-helper.h"

#include <cstdint>
#include <iostream>
#include <map>
#include <string>

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("FatTreeSharedBufferExample");

namespace
{

struct QueueDrops
{
    uint64_t threshold{0};
    uint64_t bufferFull{0};
    uint64_t other{0};
};

std::map<uint64_t, QueueDrops> g_drops; // qr_queue_key(switch, port) -> drops

void
OnDrop(uint64_t queue, Ptr<const QueueDiscItem>, const char* reason)
{
    QueueDrops& d = g_drops[queue];
    if (std::string(reason) == SharedBufferQueueDisc::THRESHOLD_DROP)
        d.threshold++;
    else if (std::string(reason) == SharedBufferQueueDisc::BUFFER_FULL_DROP)
        d.bufferFull++;
    else
        d.other++;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t k = 4;
    uint32_t senders = 12;
    uint64_t bytes = 300000;
    uint64_t bufferSize = 200000;
    double alpha = 1.0;
    std::string rate = "10Gbps";
    Time delay = MicroSeconds(1);
    Time duration = Seconds(5);

    CommandLine cmd(__FILE__);
    cmd.AddValue("k", "FatTree arity (even)", k);
    cmd.AddValue("senders", "hosts that send to host 0 at once", senders);
    cmd.AddValue("bytes", "bytes each sender sends", bytes);
    cmd.AddValue("bufferSize", "shared buffer per switch (bytes)", bufferSize);
    cmd.AddValue("alpha", "dynamic-threshold alpha", alpha);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay", "link propagation delay", delay);
    cmd.AddValue("duration", "simulated time", duration);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));

    FatTreeHelper fatTree(DataRate(rate), delay);
    fatTree.BuildFatTree(static_cast<int>(k));
    fatTree.InstallSharedBuffers(bufferSize, alpha);
    NodeContainer hosts = fatTree.GetHosts();
    if (senders >= hosts.GetN())
    {
        std::cerr << "--senders must be below the number of hosts, " << hosts.GetN() << std::endl;
        return 1;
    }

    uint16_t port = 9;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sink.Install(hosts.Get(0));
    sinkApp.Start(Seconds(0));
    for (uint32_t i = 1; i <= senders; i++)
    {
        BulkSendHelper source("ns3::TcpSocketFactory",
                              InetSocketAddress(fatTree.GetHostAddress(0), port));
        source.SetAttribute("MaxBytes", UintegerValue(bytes));
        ApplicationContainer app = source.Install(hosts.Get(hosts.GetN() - i));
        app.Start(MicroSeconds(10));
    }

    // per-queue drops through the standard QueueDisc trace source
    const qr_topology* topo = fatTree.GetTopology();
    for (uint32_t sw = 0; sw < qr_topology_switches(topo); sw++)
    {
        for (uint32_t p = 0; p < qr_topology_ports(topo, sw); p++)
        {
            fatTree.GetQueueDisc(sw, p)->TraceConnectWithoutContext(
                "DropBeforeEnqueue",
                MakeBoundCallback(&OnDrop, qr_queue_key(sw, p)));
        }
    }

    Simulator::Stop(duration);
    Simulator::Run();

    uint64_t total = 0;
    for (const auto& [queue, d] : g_drops)
    {
        std::cout << "queue switch " << qr_queue_key_switch(queue) << " port "
                  << qr_queue_key_port(queue) << ": " << d.threshold + d.bufferFull + d.other
                  << " drops (threshold " << d.threshold << ", buffer-full " << d.bufferFull
                  << ", other " << d.other << ")" << std::endl;
        total += d.threshold + d.bufferFull + d.other;
    }
    uint64_t received = DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx();
    std::cout << "total drops " << total << std::endl;
    std::cout << "received " << received << " of " << senders * bytes << " bytes" << std::endl;
    Simulator::Destroy();
    return 0;
}
