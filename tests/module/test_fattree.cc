// The FatTree helper and its switches (FabricSwitch: per-flow ECMP below IP) inside ns-3: every
// host reaches every other host, packets are conserved, each flow keeps one path of the expected
// length, no switch drops a packet for want of a route, and a switch answers an expired TTL as an
// ns-3 router would (ICMP time-exceeded from its port toward the sender, IP IDs counted per
// source, destination and protocol) and keeps what is addressed to itself.
#include "helper/fat-tree-helper.h"
#include "model/fabric-switch.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

// Criterion after ns-3: its TestSuite macro would clash with ns3::TestSuite.
#include <criterion/criterion.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

extern "C"
{
#include "qreplay/packet.h"
#include "qreplay/scenario.h"
#include "qreplay/traceroute.h"
}

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
        cr_assert_null(ft.GetSwitches().Get(sw)->GetObject<Ipv4>().operator->(),
                       "switch %u has an IP stack: switches forward below IP",
                       sw);
        cr_assert(ft.GetSwitches().Get(sw)->GetObject<FabricSwitch>() == ft.GetSwitch(sw),
                  "switch %u's FabricSwitch is not aggregated to its node",
                  sw);
        cr_assert_eq(ft.GetSwitch(sw)->GetUnroutable(), 0);
        cr_assert_eq(ft.GetSwitch(sw)->GetForSwitch(), 0);
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

namespace
{
struct Answer
{
    uint32_t replier;
    qr_five_tuple quoted;
    uint16_t quotedId, id;
    uint8_t ttl;
};

void
HostRx(std::vector<Answer>* answers, Ptr<const Packet> pkt)
{
    uint8_t buf[2 + 20 + 8 + 20 + 8];
    uint32_t n = pkt->CopyData(buf, sizeof buf);
    Answer a{};
    if (n > 2 && qr_icmp_time_exceeded_parse(buf + 2, n - 2, &a.replier, &a.quoted, &a.quotedId))
    {
        a.id = static_cast<uint16_t>(buf[2 + 4] << 8 | buf[2 + 5]);
        a.ttl = buf[2 + 8];
        answers->push_back(a);
    }
}
} // namespace

Test(fattree, switch_answers_expired_ttl_and_keeps_its_own_packets)
{
    FatTreeHelper ft(DataRate("1Gbps"), MicroSeconds(2));
    ft.BuildStar(3);
    const qr_topology* topo = ft.GetTopology();
    qr_config c{};
    c.traceroute.icmp_rate = 1000;
    c.traceroute.icmp_burst = 50;
    c.traceroute.icmp_interval_ns = 0;
    char err[QR_ERRBUF_SIZE];
    qr_icmp_limiter* limiter;
    cr_assert_eq(qr_icmp_limiter_create(&limiter, &c, err), 0, "%s", err);
    ft.GetSwitch(0)->SetIcmpLimiter(limiter);
    std::vector<uint32_t> addr(qr_topology_links(topo));
    qr_topology_addresses(topo, addr.data());
    uint32_t port0 = addr[qr_topology_port_link(topo, 0, 0)]; // the switch's side of host 0's cable
    uint32_t port1 = addr[qr_topology_port_link(topo, 0, 1)];

    std::vector<Answer> answers;
    ft.GetHostDevice(0)->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&HostRx, &answers));
    uint64_t delivered = 0;
    Ptr<Socket> rx = Socket::CreateSocket(ft.GetHosts().Get(1), UdpSocketFactory::GetTypeId());
    rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
    rx->SetRecvCallback(MakeBoundCallback(
        +[](uint64_t* n, Ptr<Socket> s) {
            while (s->Recv())
                (*n)++;
        },
        &delivered));
    Ptr<Socket> tx = Socket::CreateSocket(ft.GetHosts().Get(0), UdpSocketFactory::GetTypeId());
    tx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 4444));
    tx->SetIpTtl(1); // expires at the switch
    tx->Connect(InetSocketAddress(ft.GetHostAddress(1), 9));
    for (int i = 0; i < 3; i++)
        Simulator::Schedule(MicroSeconds(100 + 50 * i), [tx]() { tx->Send(Create<Packet>(100)); });
    Ptr<Socket> own = Socket::CreateSocket(ft.GetHosts().Get(2), UdpSocketFactory::GetTypeId());
    own->Connect(InetSocketAddress(Ipv4Address(port1), 9)); // the switch's own address
    Simulator::Schedule(MicroSeconds(120), [own]() { own->Send(Create<Packet>(100)); });
    Simulator::Run();

    cr_assert_eq(delivered, 0, "a packet whose TTL expired was delivered");
    cr_assert_eq(answers.size(),
                 3,
                 "%zu time-exceeded answers for 3 expired packets",
                 answers.size());
    for (size_t i = 0; i < answers.size(); i++)
    {
        const Answer& a = answers[i];
        cr_assert_eq(a.replier,
                     port0,
                     "answer %zu from %08x, not the port toward the sender",
                     i,
                     a.replier);
        cr_assert_eq(a.quoted.src_ip, qr_topology_host_addr(topo, 0));
        cr_assert_eq(a.quoted.dst_ip, qr_topology_host_addr(topo, 1));
        cr_assert_eq(a.quoted.src_port, 4444);
        cr_assert_eq(a.quoted.dst_port, 9);
        cr_assert_eq(a.quoted.proto, 17);
        cr_assert_eq(a.id,
                     i,
                     "answer %zu has IP ID %u: ns-3 counts per (source, destination)",
                     i,
                     a.id);
        cr_assert_eq(a.ttl, 64);
        if (i > 0)
            cr_assert_eq(a.quotedId, answers[i - 1].quotedId + 1);
    }
    cr_assert_eq(ft.GetSwitch(0)->GetForSwitch(), 1);
    cr_assert_eq(ft.GetSwitch(0)->GetUnroutable(), 0);
    Simulator::Destroy();
    qr_icmp_limiter_destroy(limiter);
}

Test(fattree, bad_sizes_are_refused)
{
    FatTreeHelper a(DataRate("10Gbps"), MicroSeconds(1));
    cr_assert_throw(a.BuildFatTree(5), std::invalid_argument);
    FatTreeHelper b(DataRate("10Gbps"), MicroSeconds(1));
    cr_assert_throw(b.BuildStar(64), std::invalid_argument);
}
