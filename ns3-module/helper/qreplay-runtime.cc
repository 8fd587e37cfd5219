#include "qreplay-runtime.h"

#include "model/fabric-switch.h"
#include "model/five-tuple.h"
#include "model/pingmesh-app.h"
#include "model/qreplay-tag.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/uinteger.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

extern "C"
{
#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/random.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"
#include "qreplay/units.h"
#include "qreplay/workload.h"
}

#include "qreplay/common.h"

namespace ns3
{

std::string
QreplayRuntime::PcapName(uint32_t host)
{
    char buf[32];
    qr_recorder_pcap_name(host, buf, sizeof buf);
    return buf;
}

QreplayRuntime::QreplayRuntime(const qr_scenario* scenario, Options options)
    : m_scenario(scenario),
      m_cfg(qr_scenario_config(scenario)),
      m_opt(std::move(options))
{
}

QreplayRuntime::~QreplayRuntime()
{
    qr_recorder_destroy(m_rec); // removes an uncommitted recording
    Simulator::Destroy();
    qr_faults_destroy(m_faults);
    qr_link_faults_destroy(m_linkFaults);
    qr_pingmesh_destroy(m_pingmesh);
    qr_tracer_destroy(m_tracer);
    for (qr_icmp_limiter* l : m_icmp)
        qr_icmp_limiter_destroy(l);
    free(m_pins);
}

void
QreplayRuntime::Fail(const std::string& what)
{
    if (m_error.empty())
        m_error = what;
    Simulator::Stop();
}

void
QreplayRuntime::ConfigureTcp(const qr_config* cfg)
{
    const char* variant = "ns3::TcpNewReno";
    if (cfg->tcp.variant == QR_TCP_DCTCP)
        variant = "ns3::TcpDctcp";
    else if (cfg->tcp.variant == QR_TCP_CUBIC)
        variant = "ns3::TcpCubic";
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(variant));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(cfg->tcp.init_cwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(cfg->tcp.delack_count));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(NanoSeconds(cfg->tcp.delack_timeout_ns)));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(cfg->tcp.rcvbuf_bytes));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(cfg->tcp.sndbuf_bytes));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout",
                       TimeValue(NanoSeconds(cfg->tcp.syn_timeout_ns)));
    Config::SetDefault("ns3::TcpSocket::PersistTimeout",
                       TimeValue(NanoSeconds(cfg->tcp.persist_timeout_ns)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(cfg->tcp.min_rto_ns)));
    // timestamps on: 1448 B of payload + 32 B TCP + 20 B IP = the 1500 B MTU
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    bool ecn = cfg->buffer.ecn_threshold_bytes > 0;
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(ecn ? TcpSocketState::On : TcpSocketState::Off));
}

void
QreplayRuntime::Build()
{
    if (m_built)
        throw std::logic_error("QreplayRuntime::Build called twice");
    m_built = true;
    char err[QR_ERRBUF_SIZE];
    const qr_config* c = m_cfg;
    uint32_t hosts = qr_config_hosts(c);

    std::vector<qr_flow> flows;
    if (m_opt.flows)
        flows = *m_opt.flows;
    else
    {
        qr_flow* f = nullptr;
        size_t n = 0;
        if (qr_workload_from_config(c, &f, &n, err))
            throw std::runtime_error(err);
        flows.assign(f, f + n);
        qr_flows_free(f);
    }
    BuildNetwork(flows);
    m_offsets.assign(hosts, 0);
    if (qr_clock_offsets(c->run.seed, c->clock.max_offset_ns, hosts, m_offsets.data()))
        throw std::runtime_error("[clock] max_offset: invalid");

    InstallApps();
    InstallAgents();
    InstallRecorder();
}

/* The simulation started over, TCP configured, the network built with its shared buffers, faults
 * and host queues, and the flows' table. */
void
QreplayRuntime::BuildNetwork(const std::vector<qr_flow>& flows)
{
    char err[QR_ERRBUF_SIZE];
    const qr_config* c = m_cfg;
    FatTreeHelper::FreshSimulation(); // node numbers, time and events start over
    RngSeedManager::SetSeed(
        static_cast<uint32_t>(qr_seed_derive(c->run.seed, "ns3", 0) % 4294967295u) + 1);
    RngSeedManager::SetRun(1);
    ConfigureTcp(c);

    m_net = FatTreeHelper::FromConfig(c);
    try
    {
        m_table = std::make_unique<FlowTable>(flows, m_net->GetTopology());
    }
    catch (const std::invalid_argument& e)
    {
        throw std::runtime_error(std::string("[traffic] ") + e.what());
    }
    if (qr_faults_create(&m_faults, c->faults.drop, m_table->Get(), m_net->GetTopology(), err))
        throw std::runtime_error(err);
    m_linkFaults = m_net->InstallFaults(c, m_faults);
    size_t nLoops = 0; // [faults] loop: the switches route by the core's rules
    m_loops.resize(QR_LOOP_RULES_MAX);
    if (qr_loop_rules_parse(c->faults.loop,
                            m_net->GetTopology(),
                            m_loops.data(),
                            m_loops.size(),
                            &nLoops,
                            err))
        throw std::runtime_error(std::string("[faults] loop: ") + err);
    m_loops.resize(nLoops);
    for (uint32_t sw = 0; nLoops && sw < qr_topology_switches(m_net->GetTopology()); sw++)
        m_net->GetSwitch(sw)->SetLoops(m_loops.data(), m_loops.size());
    // [everflow] guided: Everflow's link round trips once the traffic is over (guided_plan.h)
    if (c->everflow.guided > 0 && qr_bounce_plan(m_net->GetTopology(), &m_pins, &m_nPins))
        throw std::runtime_error("out of memory");
    for (uint32_t sw = 0; m_nPins && sw < qr_topology_switches(m_net->GetTopology()); sw++)
        m_net->GetSwitch(sw)->SetBounce(m_pins, m_nPins, &m_bounceCopies);
    m_net->InstallHostQueueDiscs(m_table.get(),
                                 NanoSeconds(c->host.proc_delay_ns),
                                 NanoSeconds(c->host.proc_jitter_ns),
                                 c->run.seed,
                                 m_opt.jitterStream);
    for (uint32_t h = 0; c->everflow.debug_every > 0 && h < qr_config_hosts(c); h++)
        m_net->GetHostQueueDisc(h)->SetDebugEvery(c->everflow.debug_every);
}

/* A sink on every host, a sender on every host that starts flows. */
void
QreplayRuntime::InstallApps()
{
    char err[QR_ERRBUF_SIZE];
    const qr_config* c = m_cfg;
    uint32_t hosts = qr_config_hosts(c);
    std::vector<uint64_t> readBps(m_table->Flows());
    if (qr_read_rates_resolve(c->traffic.read_rate, readBps.size(), readBps.data(), err))
        throw std::runtime_error(err);
    std::vector<std::vector<uint32_t>> byHost(hosts);
    for (uint32_t f = 0; f < m_table->Flows(); f++)
        byHost[m_table->Flow(f).src].push_back(f);
    for (uint32_t h = 0; h < hosts; h++)
    {
        Ptr<Node> node = m_net->GetHosts().Get(h);
        Ptr<FlowSinkApp> sink = CreateObject<FlowSinkApp>();
        sink->Setup(m_table.get(), MakeCallback(&QreplayRuntime::OnComplete, this));
        sink->SetReadRates(readBps);
        node->AddApplication(sink);
        sink->SetStartTime(Seconds(0));
        if (!byHost[h].empty())
        {
            Ptr<FlowSenderApp> snd = CreateObject<FlowSenderApp>();
            snd->Setup(m_table.get(),
                       byHost[h],
                       MakeCallback(&QreplayRuntime::OnClosed, this),
                       MakeCallback(&QreplayRuntime::OnError, this));
            node->AddApplication(snd);
            snd->SetStartTime(Seconds(0));
        }
    }
}

/* Pingmesh's agents and 007's, when the scenario asks for them. */
void
QreplayRuntime::InstallAgents()
{
    char err[QR_ERRBUF_SIZE];
    const qr_config* c = m_cfg;
    uint32_t hosts = qr_config_hosts(c);
    // Pingmesh agents, when [pingmesh] interval asks for them
    if (qr_pingmesh_check_udp(c, err) ||
        qr_pingmesh_create(&m_pingmesh, c, m_net->GetTopology(), err))
        throw std::runtime_error(err);
    if (m_pingmesh)
    {
        std::vector<Ipv4Address> addrs;
        for (uint32_t h = 0; h < hosts; h++)
            addrs.emplace_back(m_table->HostAddr(h));
        for (uint32_t h = 0; h < hosts; h++)
        {
            Ptr<PingmeshApp> app = CreateObject<PingmeshApp>();
            app->Setup(m_pingmesh, h, addrs);
            m_net->GetHosts().Get(h)->AddApplication(app);
            app->SetStartTime(Seconds(0));
        }
        if (qr_pingmesh_end(m_pingmesh) >= 0) // the run lasts until probing ends
            Simulator::Schedule(NanoSeconds(qr_pingmesh_end(m_pingmesh)),
                                &QreplayRuntime::MaybeFinish,
                                this);
    }

    // 007's agents, when [traceroute] per_connection asks for them; the switches then answer
    // expired TTLs under Linux's ICMP limits
    if (qr_tracer_create(&m_tracer, c, m_net->GetTopology(), m_table->Get(), err))
        throw std::runtime_error(err);
    if (m_tracer)
    {
        for (uint32_t sw = 0; sw < qr_topology_switches(m_net->GetTopology()); sw++)
        {
            qr_icmp_limiter* l;
            if (qr_icmp_limiter_create(&l, c, err))
                throw std::runtime_error(err);
            m_icmp.push_back(l);
            m_net->GetSwitch(sw)->SetIcmpLimiter(l);
        }
    }
}

/* The core's recorder, which keeps the books and writes the files, fed by the hosts' devices and
 * every switch port's queue and device. */
void
QreplayRuntime::InstallRecorder()
{
    char err[QR_ERRBUF_SIZE];
    uint32_t hosts = qr_config_hosts(m_cfg);
    qr_recorder_opts ro{m_opt.outDir.c_str(), m_opt.scenarioName.c_str(), m_opt.arrivals ? 1 : 0};
    if (qr_recorder_create(&m_rec, m_scenario, m_table->Get(), m_offsets.data(), &ro, err))
        throw std::runtime_error(err);
    for (uint32_t h = 0; h < hosts; h++)
    {
        Ptr<NetDevice> dev = m_net->GetHostDevice(h);
        dev->TraceConnectWithoutContext("PhyTxBegin",
                                        MakeBoundCallback(&QreplayRuntime::HostTx, this, h));
        dev->TraceConnectWithoutContext("MacRx",
                                        MakeBoundCallback(&QreplayRuntime::HostRx, this, h));
        m_net->GetHostQueueDisc(h)->TraceConnectWithoutContext(
            "DropBeforeEnqueue",
            MakeCallback(&QreplayRuntime::OnHostQueueDrop, this));
    }
    const qr_topology* topo = m_net->GetTopology();
    for (uint32_t sw = 0; sw < qr_topology_switches(topo); sw++)
    {
        for (uint32_t port = 0; port < qr_topology_ports(topo, sw); port++)
        {
            m_net->GetQueueDisc(sw, port)->TraceConnectWithoutContext(
                "Arrival",
                MakeCallback(&QreplayRuntime::OnArrival, this));
            Ptr<NetDevice> dev = m_net->GetSwitchDevice(sw, port);
            dev->TraceConnectWithoutContext("MacTxDrop",
                                            MakeCallback(&QreplayRuntime::OnDeviceDrop, this));
            dev->TraceConnectWithoutContext("PhyTxDrop",
                                            MakeCallback(&QreplayRuntime::OnDeviceDrop, this));
        }
        m_net->GetSwitch(sw)->TraceConnectWithoutContext(
            "Drop",
            MakeCallback(&QreplayRuntime::OnDeviceDrop, this));
    }
}

void
QreplayRuntime::HostTx(QreplayRuntime* rt, uint32_t host, Ptr<const Packet> p)
{
    if (ProbeTag::IsTrace(p))
    {
        rt->m_tracePackets++; // the agents' own traffic: not recorded
        return;
    }
    qr_packet pk;
    if (!DecodeWire(p, pk))
    {
        qr_recorder_unknown(rt->m_rec);
        return;
    }
    qr_five_tuple ft{pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
    if (rt->m_pingmesh && qr_probe_five_tuple(&ft))
    {
        rt->m_probePackets++; // the agents' own traffic: not recorded
        return;
    }
    QreplayTag tag;
    uint32_t dir = p->PeekPacketTag(tag) ? tag.flow : QR_DIR_NONE;
    char err[QR_ERRBUF_SIZE];
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (qr_recorder_sent(rt->m_rec, host, dir, &pk, now, err))
        rt->Fail(err);
    uint32_t trace, n;
    if (rt->m_tracer && dir != QR_DIR_NONE && pk.proto == 6 &&
        (n = qr_tracer_sent(rt->m_tracer,
                            host,
                            dir,
                            pk.seq,
                            qr_tcp_seq_len(qr_tcp_payload(&pk), pk.tcp_flags),
                            now,
                            &trace)))
        Simulator::ScheduleNow(&QreplayRuntime::SendTrace, rt, host, ft, pk.seq, trace, n);
    if (++rt->m_tick >= 4096)
    {
        rt->m_tick = 0;
        rt->Tick();
    }
}

void
QreplayRuntime::SendTrace(uint32_t host, qr_five_tuple ft, uint32_t seq, uint32_t trace, uint32_t n)
{
    // 007's probes: the connection's 5-tuple, no flags, no payload, TTL 1..n, the TTL in the IP ID
    Ptr<Ipv4> ipv4 = m_net->GetHosts().Get(host)->GetObject<Ipv4>();
    for (uint32_t ttl = 1; ttl <= n; ttl++)
    {
        Ptr<Packet> p = Create<Packet>();
        TcpHeader th;
        th.SetSourcePort(ft.src_port);
        th.SetDestinationPort(ft.dst_port);
        th.SetSequenceNumber(SequenceNumber32(seq));
        th.SetFlags(0);
        p->AddHeader(th);
        ProbeTag::AttachId(p, qr_packet_id(QR_DIR_TRACE, 2 + uint64_t{trace} * 32 + ttl));
        Ipv4Header h;
        h.SetSource(Ipv4Address(ft.src_ip));
        h.SetDestination(Ipv4Address(ft.dst_ip));
        h.SetProtocol(6);
        h.SetTtl(static_cast<uint8_t>(ttl));
        h.SetIdentification(qr_tracer_ip_id(trace, ttl));
        h.SetPayloadSize(p->GetSize());
        Socket::SocketErrno e;
        Ptr<Ipv4Route> route = ipv4->GetRoutingProtocol()->RouteOutput(p, h, nullptr, e);
        if (route)
            ipv4->SendWithHeader(p, h, route);
    }
}

bool
QreplayRuntime::TraceAnswer(uint32_t host, Ptr<const Packet> p)
{
    // what the agent reads from its host's packets: an ICMP time-exceeded quoting its probe
    uint8_t buf[2 + 60 + 8 + 60 + 8];
    uint32_t n = p->CopyData(buf, sizeof buf);
    uint32_t replier, dir;
    qr_five_tuple q;
    uint16_t id;
    if (n < 2 || !qr_icmp_time_exceeded_parse(buf + 2, n - 2, &replier, &q, &id))
        return false;
    if (m_table->Resolve(q, dir))
        qr_tracer_answer(m_tracer, host, replier, dir, id, Simulator::Now().GetNanoSeconds());
    return true;
}

void
QreplayRuntime::HostRx(QreplayRuntime* rt, uint32_t host, Ptr<const Packet> p)
{
    if (ProbeTag::IsTrace(p))
    {
        rt->m_tracePackets++;
        if (rt->m_tracer)
            rt->TraceAnswer(host, p);
        return;
    }
    QreplayTag tag;
    // what the receiving host can see: the 5-tuple, the IP ID and the ECN field
    qr_packet pk;
    bool decoded = DecodeWire(p, pk);
    if (p->PeekPacketTag(tag))
        qr_recorder_delivered(rt->m_rec,
                              host,
                              tag.flow,
                              tag.Seq(),
                              p->GetSize() - 2, // less the point-to-point header
                              Simulator::Now().GetNanoSeconds(),
                              decoded && (pk.tos & 3) == 3);
    uint32_t dir;
    if (decoded)
    {
        qr_five_tuple ft{pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
        if (rt->m_table->Resolve(ft, dir) && qr_recorder_observed(rt->m_rec, host, dir, pk.ip_id))
            rt->Fail("out of memory");
    }
    rt->MaybeFinish();
}

void
QreplayRuntime::OnArrival(const qr_arrival& a)
{
    uint32_t probe;
    int answer;
    if (qr_probe_of_packet(a.packet, &probe, &answer))
    {
        if (m_pingmesh && a.decision != QR_ADMIT)
            qr_pingmesh_dropped(m_pingmesh, probe, answer, a.sw, a.port, a.decision, a.time_ns);
        return; // probes are not recorded: no arrival log, no /drops
    }
    if (qr_packet_id_dir(a.packet) == QR_DIR_TRACE)
    {
        // nor are traceroutes; the truth counts what the switches dropped of them
        if (a.decision == QR_DROP_FAULT)
            m_traceFaultDrops++;
        else if (a.decision != QR_ADMIT)
            m_traceBufferDrops++;
        return;
    }
    if (m_opt.arrivalHook && qr_packet_id_dir(a.packet) != QR_DIR_NONE)
        m_opt.arrivalHook(a);
    char err[QR_ERRBUF_SIZE];
    if (qr_recorder_arrival(m_rec, &a, err))
        Fail(err);
    if (a.decision != QR_ADMIT)
        MaybeFinish();
}

void
QreplayRuntime::OnHostQueueDrop(Ptr<const QueueDiscItem> item, const char*)
{
    if (ProbeTag::IsTrace(item->GetPacket()))
        return;
    uint32_t probe;
    int answer;
    if (m_pingmesh && ProbeTag::Of(item->GetPacket(), probe, answer))
    {
        qr_pingmesh_dropped(m_pingmesh,
                            probe,
                            answer,
                            QR_PROBE_AT_HOST,
                            0,
                            QR_DROP_BUFFER_FULL,
                            Simulator::Now().GetNanoSeconds());
        return;
    }
    qr_recorder_host_queue_drop(m_rec);
}

void
QreplayRuntime::OnDeviceDrop(Ptr<const Packet> p)
{
    if (ProbeTag::IsTrace(p))
        return; // a traceroute probe whose TTL expired, or one lost on a link
    QreplayTag tag;
    qr_recorder_other_drop(m_rec, p->PeekPacketTag(tag) && tag.flow < m_table->Directions());
    MaybeFinish();
}

void
QreplayRuntime::OnComplete(uint32_t flow, Time t)
{
    qr_recorder_completed(m_rec, flow, t.GetNanoSeconds());
}

void
QreplayRuntime::OnClosed(uint32_t flow)
{
    qr_recorder_closed(m_rec, flow);
    MaybeFinish();
}

void
QreplayRuntime::OnError(uint32_t flow)
{
    qr_recorder_failed(m_rec, flow);
    MaybeFinish();
}

void
QreplayRuntime::MaybeFinish()
{
    if (m_stopping || !qr_recorder_all_done(m_rec))
        return;
    if (m_pingmesh && Simulator::Now().GetNanoSeconds() < qr_pingmesh_end(m_pingmesh))
        return; // [pingmesh] duration holds the run open
    for (uint32_t h = 0; h < m_offsets.size(); h++)
    {
        if (m_net->GetHostQueueDisc(h)->GetNPackets() > 0 ||
            m_net->GetHostDevice(h)->GetObject<PointToPointNetDevice>()->GetQueue()->GetNPackets() >
                0)
            return;
    }
    if (m_nPins && !m_bouncing)
    {
        // the link round trips go now, 1 ms apart; the run ends when the last is back
        m_bouncing = true;
        for (int r = 0; r < m_cfg->everflow.guided; r++)
            Simulator::Schedule(MilliSeconds(r), &QreplayRuntime::BounceRound, this, r);
        Simulator::Schedule(MilliSeconds(m_cfg->everflow.guided) + GetMaxTransit(),
                            &QreplayRuntime::BounceDone,
                            this);
        return;
    }
    if (m_bouncing)
        return; // BounceDone stops the run
    m_stopping = true;
    m_endReason = QR_END_COMPLETED;
    Simulator::Stop();
}

void
QreplayRuntime::BounceRound(uint32_t round)
{
    for (uint32_t sw = 0; sw < qr_topology_switches(m_net->GetTopology()); sw++)
        m_net->GetSwitch(sw)->SendBounce(round);
}

void
QreplayRuntime::BounceDone()
{
    if (m_stopping)
        return;
    m_stopping = true;
    m_endReason = QR_END_COMPLETED;
    Simulator::Stop();
}

void
QreplayRuntime::Tick()
{
    double now = qr_wall_now();
    if (m_opt.cancel && *m_opt.cancel && !m_stopping)
    {
        m_stopping = true;
        m_endReason = QR_END_CANCELLED;
        Simulator::Stop();
    }
    if (m_opt.progress && now - m_lastProgress >= m_opt.progressSeconds)
    {
        m_lastProgress = now;
        qr_recorder_counts c = qr_recorder_counters(m_rec);
        m_opt.progress(Progress{Simulator::Now(),
                                NanoSeconds(m_cfg->traffic.stop_ns),
                                now - m_wallStart,
                                Simulator::GetEventCount(),
                                c.flows_done,
                                m_table->Flows(),
                                c.packets});
    }
}

Time
QreplayRuntime::GetMaxTransit() const
{
    return NanoSeconds(qr_max_transit_ns(m_net->GetTopology(),
                                         m_cfg->links.rate_bps,
                                         m_cfg->links.delay_ns,
                                         m_cfg->buffer.size_bytes));
}

void
QreplayRuntime::SnapshotSent()
{
    qr_recorder_cutoff(m_rec);
}

void
QreplayRuntime::Run()
{
    if (!m_built)
        throw std::logic_error("QreplayRuntime::Run before Build");
    m_wallStart = m_lastProgress = qr_wall_now();
    m_endReason = QR_END_STOP;
    Simulator::Stop(NanoSeconds(m_cfg->traffic.stop_ns));
    int64_t cutoff = qr_tail_cutoff_ns(m_cfg->traffic.stop_ns, GetMaxTransit().GetNanoSeconds());
    if (cutoff > 0)
        Simulator::Schedule(NanoSeconds(cutoff), &QreplayRuntime::SnapshotSent, this);
    if (m_table->Flows() == 0)
        m_endReason = QR_END_COMPLETED;
    else
        Simulator::Run();
    m_end = Simulator::Now();
    m_events = Simulator::GetEventCount();
    m_wall = qr_wall_now() - m_wallStart;
    qr_recorder_counts c = qr_recorder_counters(m_rec);
    if (m_opt.progress)
        m_opt.progress(Progress{m_end,
                                NanoSeconds(m_cfg->traffic.stop_ns),
                                m_wall,
                                m_events,
                                c.flows_done,
                                m_table->Flows(),
                                c.packets});
    if (!m_error.empty())
        throw std::runtime_error(m_error);
    char err[QR_ERRBUF_SIZE];
    if (qr_recorder_end_run(m_rec, m_endReason, err))
        throw std::runtime_error(err);
}

void
QreplayRuntime::Commit()
{
    if (m_committed)
        return;
    std::vector<qr_row_probe> probes(qr_pingmesh_probes(m_pingmesh));
    for (size_t i = 0; i < probes.size(); i++)
        qr_pingmesh_row(m_pingmesh, i, &probes[i]);
    size_t nTr;
    const qr_row_traceroute* tr = qr_tracer_probes(m_tracer, &nTr);
    qr_row_path* paths = nullptr;
    size_t nPaths = 0;
    if (qr_tracer_paths(m_tracer, &paths, &nPaths))
        throw std::runtime_error("out of memory");
    std::unique_ptr<qr_row_path, decltype(&free)> pathsOwner(paths, &free);
    // each switch's own ICMP counters, per epoch
    std::vector<qr_row_icmp> icmp;
    for (uint32_t sw = 0; sw < m_icmp.size(); sw++)
    {
        size_t n;
        const qr_icmp_epoch* e = qr_icmp_epochs(m_icmp[sw], &n);
        for (size_t i = 0; i < n; i++)
            icmp.push_back(qr_row_icmp{sw, e[i].epoch, e[i].sent, e[i].refused});
    }
    qr_recorder_end end{m_endReason,
                        m_end.GetNanoSeconds(),
                        m_events,
                        m_wall,
                        m_faults,
                        m_linkFaults,
                        m_pingmesh != nullptr,
                        probes.data(),
                        probes.size(),
                        m_tracer != nullptr,
                        tr,
                        nTr,
                        paths,
                        nPaths,
                        icmp.data(),
                        icmp.size(),
                        m_traceFaultDrops,
                        m_traceBufferDrops};
    char err[QR_ERRBUF_SIZE];
    if (qr_recorder_commit(m_rec, &end, err))
        throw std::runtime_error(err);
    if (!m_bounceCopies.empty() && qr_bounce_copies_write((m_opt.outDir + "/mirror").c_str(),
                                                          m_bounceCopies.data(),
                                                          m_bounceCopies.size(),
                                                          err))
        throw std::runtime_error(err);
    m_committed = true;
}

std::vector<QreplayRuntime::DirStats>
QreplayRuntime::GetDirStats() const
{
    size_t n;
    const qr_row_direction* d = qr_recorder_directions(m_rec, &n);
    return std::vector<DirStats>(d, d + n);
}

std::vector<QreplayRuntime::Drop>
QreplayRuntime::GetDrops() const
{
    size_t n;
    const qr_row_drop* d = qr_recorder_drops(m_rec, &n);
    return std::vector<Drop>(d, d + n);
}

std::vector<QreplayRuntime::Detected>
QreplayRuntime::GetDetected() const
{
    size_t n;
    const qr_row_detected* d = qr_recorder_detected(m_rec, &n);
    return std::vector<Detected>(d, d + n);
}

std::vector<QreplayRuntime::FlowRecord>
QreplayRuntime::GetFlowRecords() const
{
    size_t n;
    const qr_recorder_flow* f = qr_recorder_flows(m_rec, &n);
    return std::vector<FlowRecord>(f, f + n);
}

std::vector<QreplayRuntime::Received>
QreplayRuntime::GetReceived() const
{
    size_t n;
    const qr_row_received* r = qr_recorder_received(m_rec, &n);
    return std::vector<Received>(r, r + n);
}

std::vector<uint64_t>
QreplayRuntime::GetSentAtCutoff() const
{
    size_t n;
    const uint64_t* s = qr_recorder_sent_at_cutoff(m_rec, &n);
    return std::vector<uint64_t>(s, s + n);
}

uint64_t
QreplayRuntime::GetFlowsCompleted() const
{
    return qr_recorder_counters(m_rec).flows_done;
}

uint64_t
QreplayRuntime::GetOtherDrops() const
{
    return qr_recorder_counters(m_rec).other_drops;
}

uint64_t
QreplayRuntime::GetHostQueueDrops() const
{
    return qr_recorder_counters(m_rec).host_queue_drops;
}

uint64_t
QreplayRuntime::GetUnknownPackets() const
{
    return qr_recorder_counters(m_rec).unknown;
}

uint64_t
QreplayRuntime::GetInFlight() const
{
    return qr_recorder_counters(m_rec).in_flight;
}

} // namespace ns3
