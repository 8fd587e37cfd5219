#include "pingmesh-app.h"

#include "qreplay-tag.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QreplayPingmeshApp");
NS_OBJECT_ENSURE_REGISTERED(PingmeshApp);

TypeId
PingmeshApp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PingmeshApp")
                            .SetParent<Application>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<PingmeshApp>();
    return tid;
}

PingmeshApp::PingmeshApp() = default;
PingmeshApp::~PingmeshApp() = default;

void
PingmeshApp::Setup(qr_pingmesh* pm, uint32_t host, std::vector<Ipv4Address> addrs)
{
    m_pm = pm;
    m_host = host;
    m_addrs = std::move(addrs);
}

void
PingmeshApp::StartApplication()
{
    m_responder = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    if (m_responder->Bind(InetSocketAddress(Ipv4Address::GetAny(), QR_PROBE_PORT)) != 0)
        NS_FATAL_ERROR("pingmesh: cannot bind the probe port " << QR_PROBE_PORT);
    m_responder->SetRecvCallback(MakeCallback(&PingmeshApp::Answer, this));
    for (size_t i = 0; i < qr_pingmesh_pairs(m_pm); i++)
        if (qr_pingmesh_pair(m_pm, i)->src == m_host)
            Schedule(i, 0);
}

void
PingmeshApp::StopApplication()
{
    for (auto& e : m_next)
        e.second.Cancel();
}

void
PingmeshApp::Schedule(size_t pair, uint64_t j)
{
    int64_t t = qr_pingmesh_send_time(m_pm, pair, j);
    if (t < 0)
        return;
    m_next[pair] = Simulator::Schedule(NanoSeconds(t) - Simulator::Now(),
                                       &PingmeshApp::SendProbe,
                                       this,
                                       pair,
                                       j);
}

void
PingmeshApp::SendProbe(size_t pair, uint64_t j)
{
    Schedule(pair, j + 1);
    uint32_t probe;
    uint16_t sport;
    if (qr_pingmesh_sent(m_pm, pair, Simulator::Now().GetNanoSeconds(), &probe, &sport) != 0)
        NS_FATAL_ERROR("pingmesh: cannot log another probe");
    // one socket per source port (at most QR_PROBE_PORTS per host), made when the port is first
    // used and reused by every later probe from it: an answer is matched by the probe number it
    // carries, not by its socket
    Ptr<Socket>& s = m_sockets[sport];
    if (!s)
    {
        s = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        if (s->Bind(InetSocketAddress(Ipv4Address::GetAny(), sport)) != 0)
            NS_FATAL_ERROR("pingmesh: cannot bind source port " << sport);
        s->SetRecvCallback(MakeCallback(&PingmeshApp::Answered, this));
    }
    Ptr<Packet> p = Create<Packet>(qr_pingmesh_size(m_pm) - QR_PROBE_MIN_BYTES);
    ProbeTag::Attach(p, probe, 0);
    const qr_probe_pair* pr = qr_pingmesh_pair(m_pm, pair);
    s->SendTo(p, 0, InetSocketAddress(m_addrs[pr->dst], QR_PROBE_PORT));
}

void
PingmeshApp::Answer(Ptr<Socket> s)
{
    Address from;
    while (Ptr<Packet> p = s->RecvFrom(from))
    {
        uint32_t probe;
        int answer;
        if (!ProbeTag::Of(p, probe, answer) || answer)
            continue;
        qr_pingmesh_echoed(m_pm, probe);
        Ptr<Packet> a = Create<Packet>(p->GetSize());
        ProbeTag::Attach(a, probe, 1);
        s->SendTo(a, 0, from);
    }
}

void
PingmeshApp::Answered(Ptr<Socket> s)
{
    Address from;
    while (Ptr<Packet> p = s->RecvFrom(from))
    {
        uint32_t probe;
        int answer;
        if (ProbeTag::Of(p, probe, answer) && answer)
            qr_pingmesh_answered(m_pm, probe, Simulator::Now().GetNanoSeconds());
    }
}

void
PingmeshApp::DoDispose()
{
    for (auto& e : m_next)
        e.second.Cancel();
    m_next.clear();
    for (auto& e : m_sockets)
        e.second->Close();
    m_sockets.clear();
    m_responder = nullptr;
    m_pm = nullptr;
    Application::DoDispose();
}

} // namespace ns3
