#include "isolated-replay.h"

#include "fat-tree-helper.h"
#include "qreplay-runtime.h"

#include "model/corrector-queue-disc.h"
#include "model/five-tuple.h"
#include "model/flow-apps.h"
#include "model/qreplay-tag.h"

#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

extern "C"
{
#include "qreplay/compare.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/isolate.h"
#include "qreplay/topology.h"
}

namespace ns3
{

namespace
{

struct Ctx
{
    std::vector<qr_tcp_sent> sent[2];      // per local direction (0 data, 1 ACKs), in send order
    std::vector<qr_packet>* keep{nullptr}; // regenerating: the whole packets, per direction
    qr_tcp_trace* trace{nullptr};          // tracing: the connection's TCP execution
    bool tracing{false};
    int64_t delackNs{0};
    uint32_t flow{0};
    Ptr<CorrectorQueueDisc> q[2]; // the corrector in front of each host (gates wait on its sends)
};

int64_t
NowNs()
{
    return Simulator::Now().GetNanoSeconds();
}

// A segment the receiver sent or got, at its interface.
void
TraceAtReceiver(Ctx* c, uint32_t dir, const qr_packet& pk)
{
    qr_tcp_trace_segment(c->trace,
                         NowNs(),
                         QR_TT_RECEIVER,
                         dir,
                         pk.tcp_flags,
                         pk.seq,
                         pk.ack,
                         pk.window,
                         qr_tcp_payload(&pk));
}

void
Tx(Ctx* c, uint32_t host, Ptr<const Packet> p)
{
    QreplayTag tag;
    if (!p->PeekPacketTag(tag) || tag.flow > 1)
        return;
    qr_packet pk;
    if (!DecodeWire(p, pk))
        return;
    c->sent[tag.flow].push_back(
        qr_tcp_sent{pk.tcp_flags, pk.seq, pk.ack, pk.window, pk.ip_len, NowNs()});
    if (c->q[host])
        c->q[host]->HostSent();
    if (c->keep)
    {
        pk.time_ns = NowNs();
        c->keep[tag.flow].push_back(pk);
    }
    if (c->trace && host == 1) // the receiver's segments, at its interface
        TraceAtReceiver(c, QR_TT_TX, pk);
}

void
RxAtReceiver(Ctx* c, Ptr<const Packet> p)
{
    qr_packet pk;
    if (c->trace && DecodeWire(p, pk))
        TraceAtReceiver(c, QR_TT_RX, pk);
}

// The sender socket's trace sources, forwarded to the core's trace as they fire.
void
SegmentAtSender(Ctx* c,
                uint32_t dir,
                Ptr<const Packet> p,
                const TcpHeader& h,
                Ptr<const TcpSocketBase>)
{
    qr_tcp_trace_segment(c->trace,
                         NowNs(),
                         QR_TT_SENDER,
                         dir,
                         h.GetFlags(),
                         h.GetSequenceNumber().GetValue(),
                         h.GetAckNumber().GetValue(),
                         h.GetWindowSize(),
                         p->GetSize());
}

void
VarU32(Ctx* c, qr_tt_var v, uint32_t, uint32_t now)
{
    qr_tcp_trace_var(c->trace, NowNs(), v, now);
}

void
VarTime(Ctx* c, qr_tt_var v, Time, Time now)
{
    qr_tcp_trace_var(c->trace, NowNs(), v, now.GetNanoSeconds());
}

void
CongState(Ctx* c, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    qr_tcp_trace_var(c->trace, NowNs(), QR_TT_CONG_STATE, static_cast<int64_t>(now));
}

void
SenderSocket(Ctx* c, uint32_t, Ptr<Socket> s)
{
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(s);
    if (!c->tracing || !tcp || c->trace)
        return;
    UintegerValue thr;
    tcp->GetAttribute("ReTxThreshold", thr);
    if (qr_tcp_trace_create(&c->trace, c->flow, static_cast<uint32_t>(thr.Get()), c->delackNs))
        throw std::bad_alloc();
    tcp->TraceConnectWithoutContext("Tx",
                                    MakeBoundCallback(&SegmentAtSender, c, uint32_t{QR_TT_TX}));
    tcp->TraceConnectWithoutContext("Rx",
                                    MakeBoundCallback(&SegmentAtSender, c, uint32_t{QR_TT_RX}));
    const std::pair<const char*, qr_tt_var> u32[] = {{"CongestionWindow", QR_TT_CWND},
                                                     {"SlowStartThreshold", QR_TT_SSTHRESH},
                                                     {"BytesInFlight", QR_TT_IN_FLIGHT},
                                                     {"RWND", QR_TT_RWND},
                                                     {"AdvWND", QR_TT_ADV_WND}};
    for (const auto& [name, var] : u32)
        tcp->TraceConnectWithoutContext(name, MakeBoundCallback(&VarU32, c, var));
    tcp->TraceConnectWithoutContext("RTO", MakeBoundCallback(&VarTime, c, QR_TT_RTO));
    tcp->TraceConnectWithoutContext("RTT", MakeBoundCallback(&VarTime, c, QR_TT_RTT));
    tcp->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, c));
}

} // namespace

IsolatedReplay::IsolatedReplay(const qr_scenario* scenario,
                               const qr_recording* rec,
                               const int64_t* offsets)
    : m_scenario(scenario),
      m_rec(rec),
      m_offsets(offsets)
{
    if (!qr_recording_has_received(rec))
        throw std::runtime_error("the recording has no /received table (record it again with this "
                                 "version of qreplay runtime)");
}

IsolatedReplay::IsolatedReplay(const qr_light* light, const qr_recording* regenerated)
    : m_scenario(qr_light_scenario(light)),
      m_rec(regenerated),
      m_offsets(qr_light_clock_offsets(light)),
      m_light(light)
{
}

void
IsolatedReplay::Simulate(const qr_flow& fl,
                         int64_t lastNs,
                         int64_t sigma_ns,
                         uint32_t stream,
                         const CorrectorQueueDisc::Fate& fate,
                         void* state,
                         uint64_t corr[4])
{
    Ctx* ctx = static_cast<Ctx*>(state);
    const qr_config* c = qr_scenario_config(m_scenario);
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
    for (uint32_t h = 0; c->everflow.debug_every > 0 && h < 2; h++) // as the runtime's hosts
        net.GetHostQueueDisc(h)->SetDebugEvery(c->everflow.debug_every, ctx->flow);
    // the correctors: local direction d of the replay is direction 2 flow + d of the runtime
    Ptr<CorrectorQueueDisc> q[2];
    for (uint32_t port = 0; port < 2; port++)
    {
        q[port] = CreateObject<CorrectorQueueDisc>();
        // host `port` sends local direction `port`: the packets a gate in front of it waits for
        q[port]->Setup(fate,
                       DataRate(c->links.rate_bps),
                       NanoSeconds(c->links.delay_ns),
                       [ctx, port]() -> uint64_t { return ctx->sent[port].size(); });
        ctx->q[port] = q[port];
        net.GetSwitches().Get(0)->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(
            net.GetSwitchDevice(0, port),
            q[port]);
    }
    Ptr<FlowSinkApp> sink = CreateObject<FlowSinkApp>();
    sink->Setup(&table, MakeNullCallback<void, uint32_t, Time>());
    size_t nFlows =
        qr_flow_table_flows(m_rec ? qr_recording_flows(m_rec) : qr_light_flows(m_light));
    std::vector<uint64_t> readBps(nFlows);
    char err[QR_ERRBUF_SIZE];
    if (qr_read_rates_resolve(c->traffic.read_rate, readBps.size(), readBps.data(), err))
        throw std::runtime_error(err);
    sink->SetReadRates({readBps[fl.id]}); // the replay's flow 0 is the runtime's `flow`
    net.GetHosts().Get(1)->AddApplication(sink);
    Ptr<FlowSenderApp> snd = CreateObject<FlowSenderApp>();
    snd->Setup(&table, {0}, MakeNullCallback<void, uint32_t>(), MakeNullCallback<void, uint32_t>());
    if (ctx->tracing)
        snd->SetSocketCallback(MakeBoundCallback(&SenderSocket, ctx));
    net.GetHosts().Get(0)->AddApplication(snd);
    for (uint32_t h = 0; h < 2; h++)
        net.GetHostDevice(h)->TraceConnectWithoutContext("PhyTxBegin",
                                                         MakeBoundCallback(&Tx, ctx, h));
    if (ctx->tracing)
        net.GetHostDevice(1)->TraceConnectWithoutContext("PhyRxEnd",
                                                         MakeBoundCallback(&RxAtReceiver, ctx));
    Simulator::Stop(NanoSeconds(qr_isolated_stop_ns(c, lastNs)));
    Simulator::Run();
    corr[0] = q[0]->GetLate() + q[1]->GetLate();
    corr[1] = static_cast<uint64_t>(std::max(q[0]->GetMaxLateNs(), q[1]->GetMaxLateNs()));
    corr[2] = q[0]->GetUnknown() + q[1]->GetUnknown();
    corr[3] = q[0]->GetUnmarkable() + q[1]->GetUnmarkable();
    ctx->q[0] = ctx->q[1] = nullptr;
    Simulator::Destroy();
}

IsolatedReplay::Result
IsolatedReplay::Run(uint32_t flow,
                    int64_t sigma_ns,
                    uint32_t stream,
                    qr_tcp_trace** trace,
                    int64_t delack_ns)
{
    if (!m_rec)
        throw std::runtime_error("an isolated replay from a light record compares with its "
                                 "regenerated packets: regenerate them first");
    const qr_flow_table* ft = qr_recording_flows(m_rec);
    // the runtime's packets of the connection, per direction, with true send times (the core's)
    char cerr[QR_ERRBUF_SIZE];
    qr_isolated_conn conn;
    if (qr_isolated_conn_of(m_rec, m_offsets, flow, &conn, cerr))
    {
        qr_isolated_conn_free(&conn);
        throw std::runtime_error(cerr);
    }
    std::unique_ptr<qr_isolated_conn, void (*)(qr_isolated_conn*)> connOwned(&conn,
                                                                             qr_isolated_conn_free);
    const qr_flow& fl = *qr_flow_table_flow(ft, flow);
    const qr_recording* rec = m_rec;
    const qr_isolated_conn* cn = &conn;
    const qr_light* light = m_light;
    bool atOnce = m_atOnce;
    const std::vector<qr_light_gate>* gates = &m_gates;
    CorrectorQueueDisc::Fate fate = [rec, cn, light, flow, atOnce, gates](uint32_t dir,
                                                                          uint32_t seq,
                                                                          bool& lost,
                                                                          int64_t& arrive,
                                                                          bool& ce,
                                                                          uint32_t& hold) {
        int l = 0, m = 0;
        if (light ? !qr_light_fate(light, 2 * flow + dir, seq, &l, &arrive, &m)
                  : !qr_isolated_fate(cn, rec, dir, seq, &l, &arrive, &m))
            return false;
        lost = l != 0;
        ce = m != 0;
        hold = 0;
        if (light)
            qr_light_gated(light, 2 * flow + dir, seq, &hold);
        else if (atOnce)
            for (const qr_light_gate& g : *gates)
                if (g.dir == dir && g.seq == seq)
                    hold = g.sends;
        if (atOnce && !lost)
            arrive = QR_ARRIVE_AT_ONCE;
        return true;
    };
    Ctx ctx;
    ctx.tracing = trace != nullptr;
    ctx.delackNs = delack_ns;
    ctx.flow = flow;
    std::unique_ptr<qr_tcp_trace, void (*)(qr_tcp_trace*)> owned(nullptr, qr_tcp_trace_destroy);
    uint64_t corr[4];
    Simulate(fl, conn.last_ns, sigma_ns, stream, fate, &ctx, corr);
    owned.reset(ctx.trace);
    m_lastSent[0] = ctx.sent[0];
    m_lastSent[1] = ctx.sent[1];

    const qr_tcp_sent* const w[2] = {conn.sent[0], conn.sent[1]};
    const qr_tcp_sent* const g[2] = {ctx.sent[0].data(), ctx.sent[1].data()};
    const size_t nw[2] = {conn.n_sent[0], conn.n_sent[1]};
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
             corr[0],
             static_cast<int64_t>(corr[1]),
             corr[2]};
    if (trace)
    {
        if (!owned)
            throw std::runtime_error("flow " + std::to_string(flow) +
                                     ": the traced connection never opened a socket");
        char err[QR_ERRBUF_SIZE];
        if (qr_tcp_trace_finish(owned.get(), m_rec, err))
            throw std::runtime_error(err);
        *trace = owned.release();
    }
    return r;
}

IsolatedReplay::Regenerated
IsolatedReplay::Regenerate(uint32_t flow, std::vector<qr_packet> out[2])
{
    if (!m_light)
        throw std::runtime_error("regenerating packets needs a light record");
    const qr_flow_table* ft = qr_light_flows(m_light);
    if (flow >= qr_flow_table_flows(ft))
        throw std::runtime_error("flow " + std::to_string(flow) + ": the record has " +
                                 std::to_string(qr_flow_table_flows(ft)) + " connections");
    const qr_light* l = m_light;
    CorrectorQueueDisc::Fate fate =
        [l,
         flow](uint32_t dir, uint32_t seq, bool& lost, int64_t& arrive, bool& ce, uint32_t& hold) {
            int x = 0, m = 0;
            if (!qr_light_fate(l, 2 * flow + dir, seq, &x, &arrive, &m))
                return false;
            lost = x != 0;
            ce = m != 0;
            hold = 0;
            qr_light_gated(l, 2 * flow + dir, seq, &hold);
            return true;
        };
    Ctx ctx;
    ctx.flow = flow;
    ctx.keep = out;
    out[0].clear();
    out[1].clear();
    uint64_t corr[4];
    Simulate(*qr_flow_table_flow(ft, flow), qr_light_last_ns(l, flow), 0, 1, fate, &ctx, corr);
    return Regenerated{corr[0], static_cast<int64_t>(corr[1]), corr[2], corr[3]};
}

} // namespace ns3
