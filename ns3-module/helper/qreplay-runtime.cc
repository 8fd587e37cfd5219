#include "qreplay-runtime.h"

#include "model/five-tuple.h"
#include "model/pingmesh-app.h"
#include "model/qreplay-tag.h"

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
    snprintf(buf, sizeof buf, "pcap/h%04u.pcap", host);
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
    if (!m_committed)
        RemoveTemps();
    qr_lossdet_destroy(m_lossdet);
    Simulator::Destroy();
    qr_faults_destroy(m_faults);
    qr_link_faults_destroy(m_linkFaults);
    qr_pingmesh_destroy(m_pingmesh);
}

std::string
QreplayRuntime::Temp(const std::string& rel) const
{
    return m_opt.outDir + "/" + rel + ".partial-" + std::to_string(getpid());
}

void
QreplayRuntime::RemoveTemps()
{
    char err[QR_ERRBUF_SIZE];
    for (qr_trace_writer*& w : m_pcaps)
    {
        qr_trace_writer_close(w, err);
        w = nullptr;
    }
    qr_arrival_writer_close(m_arrivals, err);
    m_arrivals = nullptr;
    for (const std::string& rel : m_temps)
        unlink(Temp(rel).c_str());
    m_temps.clear();
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

    Simulator::Destroy(); // a fresh simulation: node numbers, time and events start over
    RngSeedManager::SetSeed(
        static_cast<uint32_t>(qr_seed_derive(c->run.seed, "ns3", 0) % 4294967295u) + 1);
    RngSeedManager::SetRun(1);
    ConfigureTcp(c);

    m_net = std::make_unique<FatTreeHelper>(DataRate(c->links.rate_bps),
                                            NanoSeconds(c->links.delay_ns),
                                            static_cast<uint32_t>(c->host.nic_queue));
    if (c->topology.kind == QR_TOPO_FATTREE)
        m_net->BuildFatTree(c->topology.k);
    else
        m_net->BuildStar(c->topology.hosts);
    try
    {
        m_table = std::make_unique<FlowTable>(flows, m_net->GetTopology());
    }
    catch (const std::invalid_argument& e)
    {
        throw std::runtime_error(std::string("[traffic] ") + e.what());
    }
    m_net->InstallSharedBuffers(
        c->buffer.size_bytes,
        c->buffer.alpha,
        {{"EcnThreshold", Create<UintegerValue>(c->buffer.ecn_threshold_bytes)},
         {"Policy", Create<EnumValue>(static_cast<qr_buffer_policy>(c->buffer.policy))},
         {"PortSize", Create<UintegerValue>(c->buffer.port_size_bytes)}});
    if (qr_faults_create(&m_faults, c->faults.drop, m_table->Get(), m_net->GetTopology(), err))
        throw std::runtime_error(err);
    qr_link_fault_texts lft{
        {c->faults.link[0], c->faults.link[1], c->faults.link[2], c->faults.link[3]}};
    if (qr_link_faults_create(&m_linkFaults, &lft, m_net->GetTopology(), c->run.seed, err))
        throw std::runtime_error(err);
    for (uint32_t sw = 0; sw < qr_topology_switches(m_net->GetTopology()); sw++)
        m_net->GetSharedBuffer(sw)->SetFaults(m_faults, m_linkFaults);
    m_net->ApplyLinkFaults(m_linkFaults);
    m_net->InstallHostQueueDiscs(m_table.get(),
                                 NanoSeconds(c->host.proc_delay_ns),
                                 NanoSeconds(c->host.proc_jitter_ns),
                                 c->run.seed,
                                 m_opt.jitterStream);

    m_offsets.assign(hosts, 0);
    if (qr_clock_offsets(c->run.seed, c->clock.max_offset_ns, hosts, m_offsets.data()))
        throw std::runtime_error("[clock] max_offset: invalid");
    m_dirs.assign(m_table->Directions(), DirStats{});
    m_flowRecs.assign(m_table->Flows(), FlowRecord{});
    m_hostPackets.assign(hosts, 0);
    m_hostBytes.assign(hosts, 0);
    if (qr_lossdet_create(&m_lossdet, m_table->Directions()))
        throw std::bad_alloc();

    // applications: a sink on every host, a sender on every host that starts flows
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

    // Pingmesh agents, when [pingmesh] interval asks for them
    if (qr_pingmesh_create(&m_pingmesh, c, m_net->GetTopology(), err))
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

    // recording and ground truth
    if (!m_opt.outDir.empty())
    {
        for (const char* sub : {"/pcap", "/truth"})
            if (qr_make_dirs((m_opt.outDir + sub).c_str(), err))
                throw std::runtime_error(err);
        unlink((m_opt.outDir + "/recording.h5").c_str()); // the "complete" marker goes first
        m_pcaps.assign(hosts, nullptr);
        for (uint32_t h = 0; h < hosts; h++)
        {
            m_temps.push_back(PcapName(h));
            if (qr_trace_writer_open(&m_pcaps[h], Temp(PcapName(h)).c_str(), err))
                throw std::runtime_error(err);
        }
        if (m_opt.arrivals)
        {
            m_temps.push_back("truth/arrivals.qra");
            if (qr_arrival_writer_open(&m_arrivals, Temp("truth/arrivals.qra").c_str(), err))
                throw std::runtime_error(err);
        }
    }
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
        m_net->GetSwitches().Get(sw)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Drop",
            MakeCallback(&QreplayRuntime::OnL3Drop, this));
    }
}

void
QreplayRuntime::HostTx(QreplayRuntime* rt, uint32_t host, Ptr<const Packet> p)
{
    qr_packet pk;
    if (!DecodeWire(p, pk))
    {
        rt->m_unknown++;
        return;
    }
    qr_five_tuple ft{pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
    if (rt->m_pingmesh && qr_probe_five_tuple(&ft))
    {
        rt->m_probePackets++; // the agents' own traffic: not recorded
        return;
    }
    QreplayTag tag;
    if (p->PeekPacketTag(tag) && tag.flow < rt->m_dirs.size())
    {
        DirStats& d = rt->m_dirs[tag.flow];
        d.sent++;
        d.sentBytes += pk.ip_len;
        rt->m_inFlight++;
    }
    else
        rt->m_unknown++;
    rt->m_hostPackets[host]++;
    rt->m_hostBytes[host] += pk.ip_len;
    rt->m_packets++;
    if (!rt->m_pcaps.empty())
    {
        pk.time_ns = Simulator::Now().GetNanoSeconds() + rt->m_offsets[host];
        char err[QR_ERRBUF_SIZE];
        if (qr_trace_write(rt->m_pcaps[host], &pk, err))
            rt->Fail(err);
    }
    if (++rt->m_tick >= 4096)
    {
        rt->m_tick = 0;
        rt->Tick();
    }
}

void
QreplayRuntime::HostRx(QreplayRuntime* rt, uint32_t host, Ptr<const Packet> p)
{
    QreplayTag tag;
    if (p->PeekPacketTag(tag) && tag.flow < rt->m_dirs.size())
    {
        DirStats& d = rt->m_dirs[tag.flow];
        d.delivered++;
        d.deliveredBytes += p->GetSize() - 2;
        rt->m_inFlight--;
        // on the receiving host's clock, as its own capture would show it
        rt->m_received.push_back(
            Received{tag.flow, tag.Seq(), Simulator::Now().GetNanoSeconds() + rt->m_offsets[host]});
    }
    // what the receiving host can see: the 5-tuple and the IP ID
    qr_packet pk;
    uint32_t dir;
    if (DecodeWire(p, pk))
    {
        qr_five_tuple ft{pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
        if (rt->m_table->Resolve(ft, dir))
        {
            uint64_t seq, first, n;
            qr_lossdet_observe(rt->m_lossdet, dir, pk.ip_id, &seq, &first, &n);
            for (uint64_t s = first; s < first + n; s++)
                rt->m_detected.push_back(qr_detected_row(host, dir, s, 0));
        }
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
    if (qr_packet_id_dir(a.packet) == QR_DIR_NONE)
    {
        m_unknown++;
        if (a.decision != QR_ADMIT)
            m_otherDrops++;
        return;
    }
    if (m_opt.arrivalHook)
        m_opt.arrivalHook(a);
    if (m_arrivals)
    {
        char err[QR_ERRBUF_SIZE];
        if (qr_arrival_write(m_arrivals, &a, err))
            Fail(err);
    }
    if (a.decision == QR_ADMIT)
        return;
    uint32_t dir = qr_packet_id_dir(a.packet);
    Drop row;
    qr_drop_row_of(&a, &row);
    m_drops.push_back(row);
    if (dir < m_dirs.size())
    {
        m_dirs[dir].dropped++;
        m_dirs[dir].droppedBytes += a.bytes;
        m_inFlight--;
    }
    MaybeFinish();
}

void
QreplayRuntime::OnHostQueueDrop(Ptr<const QueueDiscItem> item, const char*)
{
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
    m_hostQueueDrops++;
}

void
QreplayRuntime::OnL3Drop(const Ipv4Header&,
                         Ptr<const Packet> p,
                         Ipv4L3Protocol::DropReason,
                         Ptr<Ipv4>,
                         uint32_t)
{
    OnDeviceDrop(p);
}

void
QreplayRuntime::OnDeviceDrop(Ptr<const Packet> p)
{
    m_otherDrops++;
    QreplayTag tag;
    if (p->PeekPacketTag(tag) && tag.flow < m_dirs.size())
        m_inFlight--; // it was sent and will never arrive; counted apart from the buffer's drops
    MaybeFinish();
}

void
QreplayRuntime::OnComplete(uint32_t flow, Time t)
{
    if (m_flowRecs[flow].end_ns < 0)
    {
        m_flowRecs[flow].end_ns = t.GetNanoSeconds();
        m_flowsDone++;
    }
}

void
QreplayRuntime::OnClosed(uint32_t flow)
{
    if (!m_flowRecs[flow].closed && !m_flowRecs[flow].failed)
        m_flowsClosed++;
    m_flowRecs[flow].closed = true;
    MaybeFinish();
}

void
QreplayRuntime::OnError(uint32_t flow)
{
    if (!m_flowRecs[flow].closed && !m_flowRecs[flow].failed)
        m_flowsClosed++;
    m_flowRecs[flow].failed = true;
    MaybeFinish();
}

void
QreplayRuntime::MaybeFinish()
{
    size_t n = m_table->Flows();
    if (m_stopping || m_flowsDone < n || m_flowsClosed < n || m_inFlight != 0)
        return;
    if (m_pingmesh && Simulator::Now().GetNanoSeconds() < qr_pingmesh_end(m_pingmesh))
        return; // [pingmesh] duration holds the run open
    for (uint32_t h = 0; h < m_hostPackets.size(); h++)
    {
        if (m_net->GetHostQueueDisc(h)->GetNPackets() > 0 ||
            m_net->GetHostDevice(h)->GetObject<PointToPointNetDevice>()->GetQueue()->GetNPackets() >
                0)
            return;
    }
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
        m_opt.progress(Progress{Simulator::Now(),
                                NanoSeconds(m_cfg->traffic.stop_ns),
                                now - m_wallStart,
                                Simulator::GetEventCount(),
                                m_flowsDone,
                                m_table->Flows(),
                                m_packets});
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
    m_sentAtCutoff.resize(m_dirs.size());
    for (uint32_t dir = 0; dir < m_dirs.size(); dir++)
        m_sentAtCutoff[dir] = m_dirs[dir].sent;
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
    if (m_opt.progress)
        m_opt.progress(Progress{m_end,
                                NanoSeconds(m_cfg->traffic.stop_ns),
                                m_wall,
                                m_events,
                                m_flowsDone,
                                m_table->Flows(),
                                m_packets});
    if (!m_error.empty())
        throw std::runtime_error(m_error);
    DetectTails();
}

void
QreplayRuntime::DetectTails()
{
    // A direction's sender knows how many packets it sent; those its receiver never saw after its
    // last packet were lost. In a run cut by [traffic] stop only the packets sent before the
    // core's cutoff count.
    std::vector<uint64_t> sent(m_dirs.size());
    if (m_endReason == QR_END_COMPLETED)
    {
        for (uint32_t dir = 0; dir < m_dirs.size(); dir++)
            sent[dir] = m_dirs[dir].sent;
    }
    else if (!m_sentAtCutoff.empty())
        sent = m_sentAtCutoff;
    else
        return;
    qr_row_detected* rows = nullptr;
    size_t n = 0;
    char err[QR_ERRBUF_SIZE];
    if (qr_lossdet_tails(m_lossdet, m_table->Get(), sent.data(), sent.size(), &rows, &n, err))
        throw std::runtime_error(err);
    m_detected.insert(m_detected.end(), rows, rows + n);
    qr_h5_rows_free(rows);
}

void
QreplayRuntime::WriteRecording()
{
    const uint32_t hosts = static_cast<uint32_t>(m_hostPackets.size());
    std::vector<qr_row_flow> flows;
    for (uint32_t f = 0; f < m_table->Flows(); f++)
    {
        const qr_flow& fl = m_table->Flow(f);
        const FlowRecord& r = m_flowRecs[f];
        flows.push_back(qr_row_flow{f,
                                    fl.src,
                                    fl.dst,
                                    m_table->SenderPort(f),
                                    FlowTable::kSinkPort,
                                    fl.bytes,
                                    fl.start_ns,
                                    r.end_ns,
                                    qr_fct_ns(fl.start_ns, r.end_ns),
                                    fl.incast,
                                    static_cast<uint8_t>(r.end_ns >= 0),
                                    static_cast<uint8_t>(r.closed)});
    }
    std::vector<qr_row_host> hostRows;
    for (uint32_t h = 0; h < hosts; h++)
    {
        qr_row_host r{h, m_table->HostAddr(h), m_offsets[h], m_hostPackets[h], m_hostBytes[h], {}};
        snprintf(r.pcap, sizeof r.pcap, "%s", PcapName(h).c_str());
        hostRows.push_back(r);
    }
    qr_recording_info info{m_opt.scenarioName.c_str(), m_endReason, m_end.GetNanoSeconds()};
    char err[QR_ERRBUF_SIZE];
    if (qr_recording_write((m_opt.outDir + "/recording.h5").c_str(),
                           m_scenario,
                           &info,
                           flows.data(),
                           flows.size(),
                           hostRows.data(),
                           hostRows.size(),
                           m_detected.data(),
                           m_detected.size(),
                           m_received.data(),
                           m_received.size(),
                           err))
        throw std::runtime_error(err);
}

void
QreplayRuntime::WriteTruth()
{
    std::vector<qr_row_direction> dirs;
    for (uint32_t d = 0; d < m_dirs.size(); d++)
    {
        const DirStats& s = m_dirs[d];
        dirs.push_back(qr_row_direction{d,
                                        qr_dir_flow(d),
                                        m_table->DirSrc(d),
                                        m_table->DirDst(d),
                                        s.sent,
                                        s.sentBytes,
                                        s.delivered,
                                        s.deliveredBytes,
                                        s.dropped,
                                        s.droppedBytes});
    }
    std::vector<qr_row_fault> faults(qr_faults_rules(m_faults));
    for (size_t i = 0; i < faults.size(); i++)
        qr_faults_row(m_faults, i, &faults[i]);
    std::vector<qr_row_link_fault> linkFaults(qr_link_faults_count(m_linkFaults));
    for (size_t i = 0; i < linkFaults.size(); i++)
        qr_link_faults_row(m_linkFaults, i, &linkFaults[i]);
    std::vector<qr_row_probe> probes(qr_pingmesh_probes(m_pingmesh));
    for (size_t i = 0; i < probes.size(); i++)
        qr_pingmesh_row(m_pingmesh, i, &probes[i]);
    qr_truth_info info{m_endReason,
                       m_end.GetNanoSeconds(),
                       m_events,
                       m_wall,
                       m_inFlight,
                       m_otherDrops,
                       m_hostQueueDrops,
                       m_unknown,
                       faults.data(),
                       faults.size(),
                       linkFaults.data(),
                       linkFaults.size(),
                       m_pingmesh != nullptr,
                       probes.data(),
                       probes.size()};
    char err[QR_ERRBUF_SIZE];
    if (qr_truth_write((m_opt.outDir + "/truth/truth.h5").c_str(),
                       m_scenario,
                       &info,
                       m_drops.data(),
                       m_drops.size(),
                       dirs.data(),
                       dirs.size(),
                       err))
        throw std::runtime_error(err);
}

void
QreplayRuntime::Commit()
{
    if (m_opt.outDir.empty() || m_committed)
        return;
    char err[QR_ERRBUF_SIZE];
    for (qr_trace_writer*& w : m_pcaps)
    {
        int rc = qr_trace_writer_close(w, err);
        w = nullptr;
        if (rc)
            throw std::runtime_error(err);
    }
    if (m_arrivals)
    {
        int rc = qr_arrival_writer_close(m_arrivals, err);
        m_arrivals = nullptr;
        if (rc)
            throw std::runtime_error(err);
    }
    for (const std::string& rel : m_temps)
    {
        std::string final = m_opt.outDir + "/" + rel;
        if (rename(Temp(rel).c_str(), final.c_str()) != 0)
            throw std::runtime_error(final + ": cannot rename: " + strerror(errno));
    }
    m_temps.clear();
    WriteTruth();
    WriteRecording(); // last: its presence marks a complete recording
    m_committed = true;
}

} // namespace ns3
