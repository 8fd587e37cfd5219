// The FatTree helper and per-flow ECMP routing inside ns-3: every host reaches every other host,
// packets are conserved, each flow keeps one path of the expected length, and no switch drops a
// packet for want of a route.
#include "helper/fat-tree-helper.h"
#include "model/flow-ecmp-routing.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

// Criterion after ns-3: its TestSuite macro would clash with ns3::TestSuite.
#include <criterion/criterion.h>

#include <map>
#include <set>
#include <tuple>

using namespace ns3;

namespace
{
struct Run
{
    uint64_t sent{0}, received{0}, bytesSent{0}, bytesReceived{0};
    // (src host, src port, dst host) -> switches the flow's packets crossed, per packet count
    std::map<std::tuple<uint32_t, uint16_t, uint32_t>, std::multiset<uint32_t>> crossed;
    std::map<std::tuple<uint32_t, uint16_t, uint32_t>, uint64_t> packets;
};

Run* g_run;

void
Receive(Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        g_run->received++;
        g_run->bytesReceived += p->GetSize();
    }
}

void
SwitchTx(uint32_t sw, const qr_topology* topo, Ptr<const Packet> pkt)
{
    Ptr<Packet> p = pkt->Copy();
    PppHeader ppp;
    p->RemoveHeader(ppp);
    Ipv4Header ip;
    p->RemoveHeader(ip);
    UdpHeader udp;
    p->PeekHeader(udp);
    uint32_t src, dst;
    qr_topology_host_of_addr(topo, ip.GetSource().Get(), &src);
    qr_topology_host_of_addr(topo, ip.GetDestination().Get(), &dst);
    g_run->crossed[{src, udp.GetSourcePort(), dst}].insert(sw);
}

void
RunPairs(int k)
{
    Run run;
    g_run = &run;
    FatTreeHelper ft(DataRate("10Gbps"), MicroSeconds(1));
    ft.BuildFatTree(k);
    const qr_topology* topo = ft.GetTopology();
    uint32_t n = qr_topology_hosts(topo);
    for (uint32_t sw = 0; sw < qr_topology_switches(topo); sw++)
        for (uint32_t p = 0; p < qr_topology_ports(topo, sw); p++)
            ft.GetSwitchDevice(sw, p)->TraceConnectWithoutContext(
                "PhyTxBegin",
                MakeBoundCallback(&SwitchTx, sw, topo));
    for (uint32_t h = 0; h < n; h++)
    {
        Ptr<Socket> rx = Socket::CreateSocket(ft.GetHosts().Get(h), UdpSocketFactory::GetTypeId());
        rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
        rx->SetRecvCallback(MakeCallback(&Receive));
    }
    // every ordered pair: 3 flows (source ports) of 4 packets, spread in time so no queue builds
    double t = 0.001;
    for (uint32_t s = 0; s < n; s++)
    {
        for (uint32_t d = 0; d < n; d++)
        {
            if (s == d)
                continue;
            for (uint16_t f = 0; f < 3; f++)
            {
                Ptr<Socket> tx =
                    Socket::CreateSocket(ft.GetHosts().Get(s), UdpSocketFactory::GetTypeId());
                uint16_t sport = static_cast<uint16_t>(20000 + d * 3 + f);
                tx->Bind(InetSocketAddress(Ipv4Address::GetAny(), sport));
                tx->Connect(InetSocketAddress(ft.GetHostAddress(d), 9));
                for (int i = 0; i < 4; i++)
                {
                    Simulator::Schedule(Seconds(t), [tx]() { tx->Send(Create<Packet>(1000)); });
                    t += 2e-6;
                    run.sent++;
                    run.bytesSent += 1000;
                }
                run.packets[{s, sport, d}] = 4;
            }
        }
    }
    Simulator::Stop(Seconds(t + 0.01));
    Simulator::Run();
    cr_assert_eq(run.received,
                 run.sent,
                 "k=%d: %lu of %lu packets delivered",
                 k,
                 (unsigned long)run.received,
                 (unsigned long)run.sent);
    cr_assert_eq(run.bytesReceived, run.bytesSent);
    for (uint32_t sw = 0; sw < qr_topology_switches(topo); sw++)
    {
        Ptr<FlowEcmpRouting> r = DynamicCast<FlowEcmpRouting>(
            ft.GetSwitches().Get(sw)->GetObject<Ipv4>()->GetRoutingProtocol());
        cr_assert_not_null(r.operator->());
        cr_assert_eq(r->GetUnroutable(), 0);
    }
    uint32_t half = static_cast<uint32_t>(k / 2);
    for (auto& [key, sws] : run.crossed)
    {
        auto [s, sport, d] = key;
        std::set<uint32_t> distinct(sws.begin(), sws.end());
        size_t hops = s / half == d / half ? 1 : (s / (half * half) == d / (half * half) ? 3 : 5);
        cr_assert_eq(distinct.size(),
                     hops,
                     "flow %u:%u -> %u crossed %zu switches, expected %zu",
                     s,
                     sport,
                     d,
                     distinct.size(),
                     hops);
        for (uint32_t sw : distinct)
            cr_assert_eq(sws.count(sw), 4, "every packet of the flow crosses switch %u", sw);
    }
    cr_assert_eq(run.crossed.size(), run.packets.size());
    Simulator::Destroy();
}
} // namespace

Test(fattree, k4_all_pairs_delivered_on_one_path_per_flow)
{
    RunPairs(4);
}

Test(fattree, star_delivers_and_routes_by_address)
{
    Run run;
    g_run = &run;
    FatTreeHelper ft(DataRate("1Gbps"), MicroSeconds(2));
    ft.BuildStar(5);
    for (uint32_t h = 0; h < 5; h++)
    {
        Ptr<Socket> rx = Socket::CreateSocket(ft.GetHosts().Get(h), UdpSocketFactory::GetTypeId());
        rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
        rx->SetRecvCallback(MakeCallback(&Receive));
        Ptr<Socket> tx = Socket::CreateSocket(ft.GetHosts().Get(h), UdpSocketFactory::GetTypeId());
        tx->Connect(InetSocketAddress(ft.GetHostAddress((h + 1) % 5), 9));
        Simulator::Schedule(MicroSeconds(100 + 50 * h), [tx]() { tx->Send(Create<Packet>(500)); });
    }
    Simulator::Run();
    cr_assert_eq(run.received, 5);
    Simulator::Destroy();
}

Test(fattree, bad_sizes_are_refused)
{
    FatTreeHelper a(DataRate("10Gbps"), MicroSeconds(1));
    cr_assert_throw(a.BuildFatTree(5), std::invalid_argument);
    FatTreeHelper b(DataRate("10Gbps"), MicroSeconds(1));
    cr_assert_throw(b.BuildStar(64), std::invalid_argument);
}
