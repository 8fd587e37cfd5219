#include "qreplay-replay.h"

#include "model/qreplay-tag.h"

#include "ns3/enum.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <stdexcept>
#include <unistd.h>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/topology.h"
}

#include "qreplay/common.h"

namespace ns3
{

/* Hosts of a replay receive and forget: no stack sees the packet, so nothing answers it. */
static bool
Swallow(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&)
{
    return true;
}

QreplayReplay::QreplayReplay(const qr_scenario* scenario,
                             const qr_recording* rec,
                             qr_source* src,
                             Options options)
    : m_scenario(scenario),
      m_cfg(qr_scenario_config(scenario)),
      m_rec(rec),
      m_src(src),
      m_opt(std::move(options))
{
}

QreplayReplay::~QreplayReplay()
{
    char err[QR_ERRBUF_SIZE];
    qr_arrival_writer_close(m_arrivals, err);
    Simulator::Destroy();
}

void
QreplayReplay::Build()
{
    const qr_config* c = m_cfg;
    FatTreeHelper::FreshSimulation();
    m_net = std::make_unique<FatTreeHelper>(DataRate(c->links.rate_bps),
                                            NanoSeconds(c->links.delay_ns));
    if (c->topology.kind == QR_TOPO_FATTREE)
        m_net->BuildFatTree(c->topology.k);
    else
        m_net->BuildStar(c->topology.hosts);
    uint32_t hosts = qr_topology_hosts(m_net->GetTopology());
    if (hosts != qr_recording_hosts(m_rec))
        throw std::runtime_error("the scenario's network has " + std::to_string(hosts) +
                                 " hosts, the recording " +
                                 std::to_string(qr_recording_hosts(m_rec)));
    m_net->InstallSharedBuffers(
        c->buffer.size_bytes,
        c->buffer.alpha,
        {{"Mode", Create<EnumValue>(m_opt.mode)},
         {"Margin", Create<UintegerValue>(m_opt.marginBytes)},
         {"Policy", Create<EnumValue>(static_cast<qr_buffer_policy>(c->buffer.policy))},
         {"PortSize", Create<UintegerValue>(c->buffer.port_size_bytes)}});
    const qr_topology* topo = m_net->GetTopology();
    for (uint32_t sw = 0; sw < qr_topology_switches(topo); sw++)
    {
        // IP drops at a switch (no route, TTL expired) are losses too
        m_net->GetSwitch(sw)->TraceConnectWithoutContext(
            "Drop",
            MakeCallback(&QreplayReplay::OnOtherDrop, this));
        for (uint32_t port = 0; port < qr_topology_ports(topo, sw); port++)
        {
            m_net->GetQueueDisc(sw, port)->TraceConnectWithoutContext(
                "Arrival",
                MakeCallback(&QreplayReplay::OnArrival, this));
            Ptr<NetDevice> dev = m_net->GetSwitchDevice(sw, port);
            dev->TraceConnectWithoutContext("MacTxDrop",
                                            MakeCallback(&QreplayReplay::OnOtherDrop, this));
            dev->TraceConnectWithoutContext("PhyTxDrop",
                                            MakeCallback(&QreplayReplay::OnOtherDrop, this));
        }
    }
    m_due.assign(hosts, {});
    m_dueHead.assign(hosts, 0);
    m_sent.assign(hosts, 0);
    m_sentBytes.assign(hosts, 0);
    for (uint32_t h = 0; h < hosts; h++)
    {
        Ptr<PointToPointNetDevice> dev =
            m_net->GetHostDevice(h)->GetObject<PointToPointNetDevice>();
        // the NIC holds whatever is due and not yet sent: a replay host never drops
        dev->GetQueue()->SetMaxSize(QueueSize("100000000p"));
        dev->SetReceiveCallback(MakeCallback(&Swallow));
        dev->TraceConnectWithoutContext("PhyTxBegin",
                                        MakeBoundCallback(&QreplayReplay::HostTx, this, h));
        dev->TraceConnectWithoutContext("MacRx",
                                        MakeBoundCallback(&QreplayReplay::HostRx, this, h));
        qr_injection first;
        char err[QR_ERRBUF_SIZE];
        if (m_src->next(m_src, h, &first, err))
            throw std::runtime_error(err);
        if (first.p)
            Simulator::Schedule(NanoSeconds(qr_injection_due(&first)),
                                &QreplayReplay::SendNext,
                                this,
                                h);
    }
    if (!m_opt.arrivalsPath.empty())
    {
        char err[QR_ERRBUF_SIZE];
        if (qr_arrival_writer_open(&m_arrivals, m_opt.arrivalsPath.c_str(), err))
            throw std::runtime_error(err);
        qr_arrival_writer_set_recording(m_arrivals, qr_recording_id(m_rec));
    }
}

void
QreplayReplay::SendNext(uint32_t h)
{
    int64_t now = Simulator::Now().GetNanoSeconds();
    Ptr<NetDevice> dev = m_net->GetHostDevice(h);
    qr_injection in;
    char err[QR_ERRBUF_SIZE];
    // everything due now (several packets may share an injection time after sampling)
    for (;;)
    {
        if (m_src->next(m_src, h, &in, err))
            throw std::runtime_error(err);
        if (!in.p || qr_injection_due(&in) > now)
            break;
        const qr_rec_packet& rp = *in.p;
        uint8_t buf[QR_PCAP_CAPLEN_MAX];
        size_t hdr = qr_packet_encode(&rp.pk, buf);
        std::vector<uint8_t> bytes(std::max<size_t>(rp.pk.ip_len, hdr), 0);
        std::copy(buf, buf + hdr, bytes.begin());
        Ptr<Packet> p = Create<Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
        QreplayTag tag;
        tag.Set(rp.dir, rp.seq);
        tag.dropTag = m_opt.mode == QR_MODE_TAGGED ? rp.drop_tag : 0;
        p->AddPacketTag(tag);
        m_due[h].push_back(qr_injection_due(&in));
        m_src->take(m_src, h);
        dev->Send(p, dev->GetBroadcast(), Ipv4L3Protocol::PROT_NUMBER);
    }
    if (in.p)
        Simulator::Schedule(NanoSeconds(qr_injection_due(&in) - now),
                            &QreplayReplay::SendNext,
                            this,
                            h);
}

void
QreplayReplay::HostTx(QreplayReplay* r, uint32_t host, Ptr<const Packet> p)
{
    r->m_sent[host]++;
    r->m_sentBytes[host] += p->GetSize() - 2; // without the PPP header: the IP length
    std::vector<int64_t>& due = r->m_due[host];
    size_t& head = r->m_dueHead[host];
    if (head < due.size())
    {
        int64_t late = Simulator::Now().GetNanoSeconds() - due[head++];
        r->m_maxLate = std::max(r->m_maxLate, late);
        if (head > 4096 && head * 2 > due.size())
        {
            due.erase(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(head));
            head = 0;
        }
    }
    if (++r->m_tick % 4096 == 0)
    {
        double now = qr_wall_now();
        if (r->m_opt.cancel && *r->m_opt.cancel)
        {
            r->m_cancelled = true;
            Simulator::Stop();
        }
        if (r->m_opt.progress && now - r->m_lastProgress >= 0.5)
        {
            r->m_lastProgress = now;
            r->m_opt.progress(Simulator::Now().GetNanoSeconds(),
                              now - r->m_wallStart,
                              Simulator::GetEventCount());
        }
    }
}

void
QreplayReplay::HostRx(QreplayReplay* r, uint32_t, Ptr<const Packet>)
{
    r->m_delivered++;
}

void
QreplayReplay::OnArrival(const qr_arrival& a)
{
    m_nArrivals++;
    if (m_arrivals)
    {
        char err[QR_ERRBUF_SIZE];
        if (qr_arrival_write(m_arrivals, &a, err))
            throw std::runtime_error(err);
    }
    if (a.decision != QR_ADMIT)
    {
        Drop row;
        qr_drop_row_of(&a, &row);
        m_drops.push_back(row);
    }
}

void
QreplayReplay::OnOtherDrop(Ptr<const Packet>)
{
    m_otherDrops++;
}

void
QreplayReplay::Run()
{
    m_wallStart = m_lastProgress = qr_wall_now();
    Simulator::Run(); // ends when the last packet has arrived or been dropped
    m_end = Simulator::Now();
    m_events = Simulator::GetEventCount();
    m_wall = qr_wall_now() - m_wallStart;
}

void
QreplayReplay::Finish()
{
    if (!m_arrivals)
        return;
    char err[QR_ERRBUF_SIZE];
    int rc = qr_arrival_writer_close(m_arrivals, err);
    m_arrivals = nullptr;
    if (rc)
        throw std::runtime_error(err);
}

} // namespace ns3
