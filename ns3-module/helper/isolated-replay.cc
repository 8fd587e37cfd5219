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

extern "C"
{
#include "qreplay/compare.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
}

namespace ns3
{

namespace
{

struct Ctx
{
    std::vector<qr_tcp_sent> sent[2]; // per local direction (0 data, 1 ACKs), in send order
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
    c->sent[tag.flow].push_back(qr_tcp_sent{pk.tcp_flags,
                                            pk.seq,
                                            pk.ack,
                                            pk.window,
                                            pk.ip_len,
                                            Simulator::Now().GetNanoSeconds()});
}

} // namespace

IsolatedReplay::IsolatedReplay(const qr_scenario* scenario, const qr_recording* rec)
    : m_scenario(scenario),
      m_rec(rec)
{
    if (!qr_recording_has_received(rec))
        throw std::runtime_error("the recording has no /received table (record it again with this "
                                 "version of qreplay runtime)");
}

IsolatedReplay::Result
IsolatedReplay::Run(uint32_t flow, int64_t sigma_ns, uint32_t stream)
{
    const qr_config* c = qr_scenario_config(m_scenario);
    const qr_flow_table* ft = qr_recording_flows(m_rec);
    if (flow >= qr_flow_table_flows(ft))
        throw std::runtime_error("flow " + std::to_string(flow) + ": the recording has " +
                                 std::to_string(qr_flow_table_flows(ft)) + " flows");
    const qr_flow& fl = *qr_flow_table_flow(ft, flow);
    // the runtime's packets of the connection, per direction, with true send times
    std::vector<qr_tcp_sent> want[2];
    int64_t last = fl.start_ns;
    for (uint32_t d = 0; d < 2; d++)
    {
        uint32_t host = d == 0 ? fl.src : fl.dst;
        size_t n;
        const qr_rec_packet* pk = qr_recording_packets(m_rec, host, &n);
        for (size_t i = 0; i < n; i++)
            if (pk[i].dir == 2 * flow + d)
            {
                const qr_packet& p = pk[i].pk;
                int64_t t = p.time_ns - qr_recording_clock_offset(m_rec, host);
                want[d].push_back(qr_tcp_sent{p.tcp_flags, p.seq, p.ack, p.window, p.ip_len, t});
                last = std::max(last, t);
            }
    }

    Simulator::Destroy();
    QreplayRuntime::ConfigureTcp(c);
    FatTreeHelper net(DataRate(c->links.rate_bps),
                      NanoSeconds(c->links.delay_ns),
                      static_cast<uint32_t>(c->host.nic_queue));
    net.BuildStar(2);
    std::vector<qr_flow> one = {qr_flow{0, 0, 1, fl.bytes, fl.start_ns, 0}};
    FlowTable table(one, net.GetTopology());
    net.InstallHostQueueDiscs(&table,
                              NanoSeconds(c->host.proc_delay_ns),
                              NanoSeconds(sigma_ns),
                              c->run.seed,
                              stream);
    // the correctors: local direction d of the replay is direction 2 flow + d of the runtime
    const qr_recording* rec = m_rec;
    const int64_t recvOffset[2] = {qr_recording_clock_offset(rec, fl.dst),
                                   qr_recording_clock_offset(rec, fl.src)};
    CorrectorQueueDisc::Fate fate =
        [rec, &want, flow, &recvOffset](uint32_t dir, uint32_t seq, bool& lost, int64_t& arrive) {
            if (dir > 1 || seq >= want[dir].size())
                return false;
            lost = qr_recording_received(rec, qr_packet_id(2 * flow + dir, seq), &arrive) != QR_OK;
            // /received is on the receiving host's clock: back to true time
            arrive = lost ? 0 : arrive - recvOffset[dir];
            return true;
        };
    Ptr<CorrectorQueueDisc> corr[2];
    for (uint32_t port = 0; port < 2; port++)
    {
        corr[port] = CreateObject<CorrectorQueueDisc>();
        corr[port]->Setup(fate, DataRate(c->links.rate_bps), NanoSeconds(c->links.delay_ns));
        net.GetSwitches().Get(0)->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(
            net.GetSwitchDevice(0, port),
            corr[port]);
    }
    Ptr<FlowSinkApp> sink = CreateObject<FlowSinkApp>();
    sink->Setup(&table, MakeNullCallback<void, uint32_t, Time>());
    net.GetHosts().Get(1)->AddApplication(sink);
    Ptr<FlowSenderApp> snd = CreateObject<FlowSenderApp>();
    snd->Setup(&table, {0}, MakeNullCallback<void, uint32_t>(), MakeNullCallback<void, uint32_t>());
    net.GetHosts().Get(0)->AddApplication(snd);
    Ctx ctx;
    for (uint32_t h = 0; h < 2; h++)
        net.GetHostDevice(h)->TraceConnectWithoutContext("PhyTxBegin",
                                                         MakeBoundCallback(&Tx, &ctx, h));
    // long enough for every packet the runtime sent, plus a backed-off RTO or two
    Simulator::Stop(NanoSeconds(last) +
                    NanoSeconds(4 * c->tcp.min_rto_ns + c->tcp.delack_timeout_ns) +
                    MilliSeconds(1));
    Simulator::Run();

    const qr_tcp_sent* const w[2] = {want[0].data(), want[1].data()};
    const qr_tcp_sent* const g[2] = {ctx.sent[0].data(), ctx.sent[1].data()};
    const size_t nw[2] = {want[0].size(), want[1].size()};
    const size_t ng[2] = {ctx.sent[0].size(), ctx.sent[1].size()};
    qr_seq_result cmp;
    if (qr_compare_sequences(w, nw, g, ng, &cmp))
        throw std::bad_alloc();
    Result r{flow,
             sigma_ns,
             stream,
             nw[0] + nw[1],
             ng[0] + ng[1],
             static_cast<uint8_t>(cmp.identical),
             cmp.first_mismatch,
             cmp.max_send_diff_ns,
             cmp.p99_send_diff_ns,
             corr[0]->GetLate() + corr[1]->GetLate(),
             std::max(corr[0]->GetMaxLateNs(), corr[1]->GetMaxLateNs()),
             corr[0]->GetUnknown() + corr[1]->GetUnknown()};
    Simulator::Destroy();
    return r;
}

} // namespace ns3
