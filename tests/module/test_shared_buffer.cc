// Shared-buffer switches inside ns-3: under an incast-like overload the runtime rule holds at every
// arrival (queue within its threshold, switch within B), drops carry the core's decision names,
// packets and bytes are conserved, the buffer drains to zero, and the same run twice is identical.
#include "helper/fat-tree-helper.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

// Criterion after ns-3: its TestSuite macro would clash with ns3::TestSuite.
#include <criterion/criterion.h>

#include <map>
#include <string>

using namespace ns3;

namespace
{
struct Outcome
{
    uint64_t sent{0}, received{0}, arrivals{0}, admitted{0}, dropped{0}, hostDrops{0};
    uint64_t violations{0}, flowSumMismatch{0};
    std::map<std::string, uint64_t> reasons;
    uint64_t signature{1469598103934665603ULL}; // FNV over every arrival's decision and time
    uint64_t bufferBytes{0};
};

Outcome* g;
uint64_t g_size;

void
Arrival(const qr_arrival& a)
{
    g->arrivals++;
    uint64_t sum = 0;
    for (uint16_t i = 0; i < a.n_flows; i++)
        sum += a.flows[i].bytes;
    g->flowSumMismatch += sum != a.queue_bytes;
    if (a.decision == QR_ADMIT)
    {
        g->admitted++;
        if (static_cast<int64_t>(a.queue_bytes + a.bytes) > a.threshold ||
            a.total_bytes + a.bytes > g_size)
            g->violations++;
    }
    g->signature = (g->signature ^ (uint64_t(a.time_ns) * 4 + a.decision)) * 1099511628211ULL;
}

void
Dropped(Ptr<const QueueDiscItem>, const char* reason)
{
    g->dropped++;
    g->reasons[reason]++;
}

void
Received(Ptr<Socket> s)
{
    while (s->Recv())
        g->received++;
}

void
HostDrop(Ptr<const Packet>)
{
    g->hostDrops++;
}

Outcome
Overload(uint64_t bufferBytes, double alpha)
{
    Outcome out;
    g = &out;
    g_size = bufferBytes;
    FatTreeHelper net(DataRate("10Gbps"), MicroSeconds(1));
    net.BuildStar(3);
    net.InstallSharedBuffers(bufferBytes, alpha);
    for (uint32_t p = 0; p < 3; p++)
    {
        net.GetQueueDisc(0, p)->TraceConnectWithoutContext("Arrival", MakeCallback(&Arrival));
        net.GetQueueDisc(0, p)->TraceConnectWithoutContext("DropBeforeEnqueue",
                                                           MakeCallback(&Dropped));
    }
    Ptr<Socket> rx = Socket::CreateSocket(net.GetHosts().Get(2), UdpSocketFactory::GetTypeId());
    rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
    rx->SetRecvCallback(MakeCallback(&Received));
    // hosts 0 and 1 each send 3000 packets of 1500 B at their line rate to host 2 (2:1 overload),
    // in 3 flows each
    for (uint32_t h = 0; h < 2; h++)
    {
        net.GetHostDevice(h)->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&HostDrop));
        for (uint16_t f = 0; f < 3; f++)
        {
            Ptr<Socket> tx =
                Socket::CreateSocket(net.GetHosts().Get(h), UdpSocketFactory::GetTypeId());
            tx->Bind(InetSocketAddress(Ipv4Address::GetAny(), static_cast<uint16_t>(7000 + f)));
            tx->Connect(InetSocketAddress(net.GetHostAddress(2), 9));
            for (int i = 0; i < 1000; i++)
            {
                Simulator::Schedule(NanoSeconds(1000 + (3 * i + f) * 1200 + h * 300),
                                    [tx]() { tx->Send(Create<Packet>(1472)); });
                out.sent++;
            }
        }
    }
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    out.bufferBytes = qr_buffer_total(net.GetSharedBuffer(0)->Get());
    Simulator::Destroy();
    return out;
}
} // namespace

Test(shared_buffer, runtime_rule_holds_and_packets_are_conserved)
{
    Outcome o = Overload(100000, 1.0);
    cr_assert_gt(o.dropped, 100, "the overload must cause drops (%lu)", (unsigned long)o.dropped);
    cr_assert_eq(o.violations,
                 0,
                 "%lu admitted packets broke the threshold or B",
                 (unsigned long)o.violations);
    cr_assert_eq(o.flowSumMismatch, 0, "per-flow bytes must add up to the queue's bytes");
    cr_assert_eq(o.hostDrops, 0);
    cr_assert_eq(o.received + o.dropped,
                 o.sent,
                 "sent %lu = received %lu + dropped %lu",
                 (unsigned long)o.sent,
                 (unsigned long)o.received,
                 (unsigned long)o.dropped);
    cr_assert_eq(o.admitted + o.dropped, o.arrivals);
    cr_assert_eq(o.bufferBytes, 0, "the buffer drains to zero");
    for (auto& [reason, n] : o.reasons)
        cr_assert(reason == "threshold" || reason == "buffer-full", "reason %s", reason.c_str());
    cr_assert_gt(o.reasons["threshold"], 0);
}

Test(shared_buffer, a_larger_buffer_drops_less_and_runs_are_deterministic)
{
    Outcome small = Overload(100000, 1.0);
    Outcome large = Overload(393000, 4.0);
    cr_assert_lt(large.dropped, small.dropped);
    cr_assert_eq(large.violations, 0);
    Outcome again = Overload(100000, 1.0);
    cr_assert_eq(again.signature, small.signature, "same inputs, same arrivals and decisions");
    cr_assert_eq(again.dropped, small.dropped);
}

// Drop reasons name the core's decisions one to one.
Test(shared_buffer, drop_reasons_map_one_to_one_onto_core_decisions)
{
    const qr_decision drops[] = {QR_DROP_THRESHOLD, QR_DROP_BUFFER_FULL, QR_DROP_TAGGED};
    cr_assert_null(SharedBufferQueueDisc::DropReason(QR_ADMIT));
    for (qr_decision d : drops)
    {
        const char* r = SharedBufferQueueDisc::DropReason(d);
        cr_assert_not_null(r);
        cr_assert_str_eq(r, qr_decision_name(d));
        for (qr_decision e : drops)
            if (e != d)
                cr_assert_str_neq(r, SharedBufferQueueDisc::DropReason(e));
    }
    cr_assert_str_eq(SharedBufferQueueDisc::THRESHOLD_DROP, qr_decision_name(QR_DROP_THRESHOLD));
    cr_assert_str_eq(SharedBufferQueueDisc::BUFFER_FULL_DROP,
                     qr_decision_name(QR_DROP_BUFFER_FULL));
    cr_assert_str_eq(SharedBufferQueueDisc::TAGGED_DROP, qr_decision_name(QR_DROP_TAGGED));
}

// The model's parameters are ns-3 attributes; the core handle follows them.
Test(shared_buffer, parameters_are_attributes)
{
    Ptr<SharedBuffer> b = CreateObjectWithAttributes<SharedBuffer>("Size",
                                                                   UintegerValue(300000),
                                                                   "Alpha",
                                                                   DoubleValue(0.5),
                                                                   "Ports",
                                                                   UintegerValue(4),
                                                                   "Mode",
                                                                   StringValue("Tagged"),
                                                                   "Margin",
                                                                   UintegerValue(3000));
    qr_buffer* core = b->Get();
    cr_assert_not_null(core);
    cr_assert_eq(qr_buffer_queues(core), 4u);
    cr_assert_eq(qr_buffer_threshold(core), 150000, "alpha * (B - 0)");
    cr_assert_eq(b->GetMode(), QR_MODE_TAGGED);
    cr_assert_eq(b->GetMarginBytes(), 3000u);
    UintegerValue v;
    b->GetAttribute("EcnThreshold", v);
    cr_assert_eq(v.Get(), 0u);
    Ptr<SharedBuffer> bad = CreateObjectWithAttributes<SharedBuffer>("Alpha", DoubleValue(0.0));
    bool threw = false;
    try
    {
        bad->Get();
    }
    catch (const std::invalid_argument&)
    {
        threw = true;
    }
    cr_assert(threw, "alpha 0 is refused when the core state is made");
    b->Dispose();
    Ptr<HostQueueDisc> h = CreateObjectWithAttributes<HostQueueDisc>("Limit",
                                                                     UintegerValue(7),
                                                                     "ProcessingDelay",
                                                                     TimeValue(MicroSeconds(10)));
    TimeValue t;
    h->GetAttribute("ProcessingDelay", t);
    cr_assert_eq(t.Get(), MicroSeconds(10));
    h->GetAttribute("Limit", v);
    cr_assert_eq(v.Get(), 7u);
}
