#include "isolated-replay.h"

#include "fat-tree-helper.h"
#include "qreplay-runtime.h"

#include "model/corrector-queue-disc.h"
#include "model/five-tuple.h"
#include "model/flow-apps.h"
#include "model/qreplay-tag.h"

#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C" {
#include "qreplay/clock.h"
#include "qreplay/error.h"
}

namespace ns3
{

namespace
{

/* The fields of a packet that must match: flags, seq, ack, window, IP length. */
struct Hdr
{
    uint8_t flags;
    uint32_t seq, ack;
    uint16_t window, len;
    int64_t time_ns; // true send time
    bool operator==(const Hdr& o) const
    {
        return flags == o.flags && seq == o.seq && ack == o.ack && window == o.window && len == o.len;
    }
};

struct Ctx
{
    std::vector<Hdr> sent[2]; // per local direction (0 data, 1 ACKs), in send order
};

void
Tx(Ctx* c, uint32_t, Ptr<const Packet> p)
{
    QreplayTag tag;
    if (!p->PeekPacketTag(tag) || tag.flow > 1)
        return;
    qr_packet pk;
    if (!DecodeWire(p, pk))
        return;
    c->sent[tag.flow].push_back(
        Hdr{pk.tcp_flags, pk.seq, pk.ack, pk.window, pk.ip_len, Simulator::Now().GetNanoSeconds()});
}

} // namespace

IsolatedReplay::IsolatedReplay(const qr_scenario* scenario, const Recording& rec)
    : m_scenario(scenario),
      m_rec(rec)
{
    if (rec.Received().empty())
        throw std::runtime_error("the recording has no /received table (record it again with this "
                                 "version of qreplay runtime)");
}

IsolatedReplay::Result
IsolatedReplay::Run(uint32_t flow, int64_t sigma_ns, uint32_t stream)
{
    const qr_config* c = qr_scenario_config(m_scenario);
    const FlowTable& ft = m_rec.GetFlows();
    if (flow >= ft.Flows())
        throw std::runtime_error("flow " + std::to_string(flow) + ": the recording has " +
                                 std::to_string(ft.Flows()) + " flows");
    const qr_flow& fl = ft.Flow(flow);
    // the runtime's packets of the connection, per direction, with true send times
    std::vector<Hdr> want[2];
    int64_t last = fl.start_ns;
    for (int d = 0; d < 2; d++)
    {
        uint32_t host = d == 0 ? fl.src : fl.dst;
        for (const Recording::Packet& p : m_rec.HostPackets(host))
            if (p.dir == 2 * flow + d)
            {
                int64_t t = p.pk.time_ns - m_rec.ClockOffset(host);
                want[d].push_back(Hdr{p.pk.tcp_flags, p.pk.seq, p.pk.ack, p.pk.window, p.pk.ip_len, t});
                last = std::max(last, t);
            }
    }

    Simulator::Destroy();
    QreplayRuntime::ConfigureTcp(c);
    FatTreeHelper net(DataRate(c->links.rate_bps), NanoSeconds(c->links.delay_ns),
                      static_cast<uint32_t>(c->host.nic_queue));
    net.BuildStar(2);
    std::vector<qr_flow> one = {qr_flow{0, 0, 1, fl.bytes, fl.start_ns, 0}};
    std::vector<uint32_t> addrs = {qr_topology_host_addr(net.GetTopology(), 0),
                                   qr_topology_host_addr(net.GetTopology(), 1)};
    FlowTable table(one, addrs);
    qr_proc_delay* pd[2] = {nullptr, nullptr};
    for (uint32_t h = 0; h < 2; h++)
        if (qr_proc_delay_create(&pd[h], c->run.seed, h, stream, c->host.proc_delay_ns, sigma_ns))
            throw std::runtime_error("[host] proc_delay: must not be negative");
    net.InstallHostQueueDiscs(&table, [&pd](uint32_t h) { return qr_proc_delay_next(pd[h]); });
    // the correctors: local direction d of the replay is direction 2 flow + d of the runtime
    const auto& received = m_rec.Received();
    CorrectorQueueDisc::Fate fate = [&received, &want, flow](uint32_t dir, uint32_t seq, bool& lost,
                                                            int64_t& arrive) {
        if (dir > 1 || seq >= want[dir].size())
            return false;
        auto it = received.find(static_cast<uint64_t>(2 * flow + dir) << 32 | seq);
        lost = it == received.end();
        arrive = lost ? 0 : it->second;
        return true;
    };
    Ptr<CorrectorQueueDisc> corr[2];
    for (uint32_t port = 0; port < 2; port++)
    {
        corr[port] = CreateObject<CorrectorQueueDisc>();
        corr[port]->Setup(fate, DataRate(c->links.rate_bps), NanoSeconds(c->links.delay_ns));
        net.GetSwitches().Get(0)->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(
            net.GetSwitchDevice(0, port), corr[port]);
    }
    Ptr<FlowSinkApp> sink = CreateObject<FlowSinkApp>();
    sink->Setup(&table, MakeNullCallback<void, uint32_t, Time>());
    net.GetHosts().Get(1)->AddApplication(sink);
    Ptr<FlowSenderApp> snd = CreateObject<FlowSenderApp>();
    snd->Setup(&table, {0}, MakeNullCallback<void, uint32_t>(), MakeNullCallback<void, uint32_t>());
    net.GetHosts().Get(0)->AddApplication(snd);
    Ctx ctx;
    for (uint32_t h = 0; h < 2; h++)
        net.GetHostDevice(h)->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&Tx, &ctx, h));
    // long enough for every packet the runtime sent, plus a backed-off RTO or two
    Simulator::Stop(NanoSeconds(last) + NanoSeconds(4 * c->tcp.min_rto_ns + c->tcp.delack_timeout_ns) +
                    MilliSeconds(1));
    Simulator::Run();

    Result r{flow, sigma_ns, stream, want[0].size() + want[1].size(),
             ctx.sent[0].size() + ctx.sent[1].size(), 1, -1, 0, 0,
             corr[0]->GetLate() + corr[1]->GetLate(),
             std::max(corr[0]->GetMaxLateNs(), corr[1]->GetMaxLateNs()),
             corr[0]->GetUnknown() + corr[1]->GetUnknown()};
    std::vector<int64_t> diffs;
    for (int d = 0; d < 2; d++)
    {
        size_t n = std::min(want[d].size(), ctx.sent[d].size());
        for (size_t i = 0; i < n; i++)
        {
            if (!(want[d][i] == ctx.sent[d][i]) && r.identical)
            {
                r.identical = 0;
                r.first_mismatch = static_cast<int64_t>(i);
            }
            diffs.push_back(std::llabs(ctx.sent[d][i].time_ns - want[d][i].time_ns));
        }
        if (want[d].size() != ctx.sent[d].size() && r.identical)
        {
            r.identical = 0;
            r.first_mismatch = static_cast<int64_t>(n);
        }
    }
    std::sort(diffs.begin(), diffs.end());
    if (!diffs.empty())
    {
        r.max_send_diff_ns = diffs.back();
        r.p99_send_diff_ns = diffs[std::min(diffs.size() - 1, static_cast<size_t>(0.99 * diffs.size()))];
    }
    Simulator::Destroy();
    for (qr_proc_delay* p : pd)
        qr_proc_delay_destroy(p);
    return r;
}

} // namespace ns3
