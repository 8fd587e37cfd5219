#include "flow-apps.h"

#include "ns3/uinteger.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QreplayFlowApps");
NS_OBJECT_ENSURE_REGISTERED(FlowSenderApp);
NS_OBJECT_ENSURE_REGISTERED(FlowSinkApp);

/* Bytes handed to a socket per Send call: large writes, bounded so one call never allocates much.
 */
static const uint32_t kChunk = 64 * 1024;

TypeId
FlowSenderApp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowSenderApp")
                            .SetParent<Application>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<FlowSenderApp>();
    return tid;
}

FlowSenderApp::FlowSenderApp() = default;
FlowSenderApp::~FlowSenderApp() = default;

void
FlowSenderApp::Setup(const FlowTable* table,
                     std::vector<uint32_t> flows,
                     Callback<void, uint32_t> onClosed,
                     Callback<void, uint32_t> onError)
{
    m_table = table;
    m_flows = std::move(flows);
    m_onClosed = onClosed;
    m_onError = onError;
}

void
FlowSenderApp::SetSocketCallback(Callback<void, uint32_t, Ptr<Socket>> onSocket)
{
    m_onSocket = onSocket;
}

void
FlowSenderApp::StartApplication()
{
    for (uint32_t i = 0; i < m_flows.size(); i++)
    {
        Time at = NanoSeconds(m_table->Flow(m_flows[i]).start_ns) - Simulator::Now();
        m_starts.push_back(Simulator::Schedule(at, &FlowSenderApp::StartFlow, this, i));
    }
}

namespace
{

// ns-3's TCP doubles its zero-window probe interval at every probe and never resets it, so a
// connection whose receiver closes its window again and again (a slow reader) would wait ever
// longer. As Linux does, start over from the configured interval once the window has opened.
void
WindowReopened(Socket* s, Time base, uint32_t before, uint32_t now)
{
    if (before == 0 && now > 0)
        s->SetAttribute("PersistTimeout", TimeValue(base));
}

} // namespace

void
FlowSenderApp::StartFlow(uint32_t i)
{
    uint32_t f = m_flows[i];
    const qr_flow& fl = m_table->Flow(f);
    Ptr<Socket> s = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    if (s->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_table->SenderPort(f))) != 0)
    {
        NS_LOG_ERROR("flow " << f << ": cannot bind port " << m_table->SenderPort(f));
        m_onError(f);
        return;
    }
    m_conns[PeekPointer(s)] = Conn{f, fl.bytes, false};
    TimeValue persist;
    s->GetAttribute("PersistTimeout", persist);
    s->TraceConnectWithoutContext(
        "RWND",
        MakeBoundCallback(&WindowReopened, PeekPointer(s), persist.Get()));
    if (!m_onSocket.IsNull())
        m_onSocket(f, s);
    s->SetConnectCallback(MakeCallback(&FlowSenderApp::Connected, this),
                          MakeCallback(&FlowSenderApp::ConnectFailed, this));
    s->SetSendCallback(MakeCallback(&FlowSenderApp::SendMore, this));
    s->SetCloseCallbacks(MakeCallback(&FlowSenderApp::Closed, this),
                         MakeCallback(&FlowSenderApp::Failed, this));
    s->Connect(InetSocketAddress(Ipv4Address(m_table->HostAddr(fl.dst)), FlowTable::kSinkPort));
}

void
FlowSenderApp::Connected(Ptr<Socket> s)
{
    SendMore(s, s->GetTxAvailable());
}

void
FlowSenderApp::SendMore(Ptr<Socket> s, uint32_t)
{
    auto it = m_conns.find(PeekPointer(s));
    if (it == m_conns.end())
        return;
    Conn& c = it->second;
    while (c.left > 0 && s->GetTxAvailable() > 0)
    {
        uint32_t n = static_cast<uint32_t>(
            std::min<uint64_t>({c.left, kChunk, static_cast<uint64_t>(s->GetTxAvailable())}));
        int sent = s->Send(Create<Packet>(n));
        if (sent <= 0)
            break;
        c.left -= static_cast<uint64_t>(sent);
    }
    if (c.left == 0 && !c.closing)
    {
        c.closing = true;
        s->Close(); // FIN after the queued data
    }
}

void
FlowSenderApp::ConnectFailed(Ptr<Socket> s)
{
    Failed(s);
}

void
FlowSenderApp::Closed(Ptr<Socket> s)
{
    auto it = m_conns.find(PeekPointer(s));
    if (it == m_conns.end())
        return;
    uint32_t f = it->second.flow;
    m_conns.erase(it);
    if (!m_onClosed.IsNull())
        m_onClosed(f);
}

void
FlowSenderApp::Failed(Ptr<Socket> s)
{
    auto it = m_conns.find(PeekPointer(s));
    if (it == m_conns.end())
        return;
    uint32_t f = it->second.flow;
    m_conns.erase(it);
    if (!m_onError.IsNull())
        m_onError(f);
}

void
FlowSenderApp::StopApplication()
{
    for (EventId& e : m_starts)
        e.Cancel();
}

void
FlowSenderApp::DoDispose()
{
    m_conns.clear();
    m_starts.clear();
    m_onClosed = MakeNullCallback<void, uint32_t>();
    m_onError = MakeNullCallback<void, uint32_t>();
    Application::DoDispose();
}

TypeId
FlowSinkApp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowSinkApp")
                            .SetParent<Application>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<FlowSinkApp>();
    return tid;
}

FlowSinkApp::FlowSinkApp() = default;
FlowSinkApp::~FlowSinkApp() = default;

void
FlowSinkApp::Setup(const FlowTable* table, Callback<void, uint32_t, Time> onComplete)
{
    m_table = table;
    m_onComplete = onComplete;
}

void
FlowSinkApp::StartApplication()
{
    m_listen = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), FlowTable::kSinkPort));
    m_listen->Listen();
    m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&FlowSinkApp::Accept, this));
}

void
FlowSinkApp::Accept(Ptr<Socket> s, const Address& from)
{
    InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
    uint32_t f;
    if (!m_table->FlowOfSender(a.GetIpv4().Get(), a.GetPort(), f))
    {
        NS_LOG_WARN("connection from an unknown sender " << a.GetIpv4() << ":" << a.GetPort());
        s->Close();
        return;
    }
    Conn c{f, 0, false, false, false, qr_reader{}, EventId()};
    if (f < m_readBps.size() && m_readBps[f] > 0)
    {
        c.paced = true;
        qr_reader_init(&c.reader, m_readBps[f], Simulator::Now().GetNanoSeconds());
    }
    m_conns[PeekPointer(s)] = c;
    m_accepted.push_back(s);
    s->SetRecvCallback(MakeCallback(&FlowSinkApp::Read, this));
    s->SetCloseCallbacks(MakeCallback(&FlowSinkApp::PeerClosed, this),
                         MakeCallback(&FlowSinkApp::PeerClosed, this));
}

void
FlowSinkApp::SetReadRates(std::vector<uint64_t> bpsPerFlow)
{
    m_readBps = std::move(bpsPerFlow);
}

void
FlowSinkApp::Consume(Ptr<Socket>, Conn& c, Ptr<Packet> p)
{
    c.received += p->GetSize();
    if (!c.done && c.received >= m_table->Flow(c.flow).bytes)
    {
        c.done = true;
        if (!m_onComplete.IsNull())
            m_onComplete(c.flow, Simulator::Now());
    }
}

void
FlowSinkApp::Read(Ptr<Socket> s)
{
    auto it = m_conns.find(PeekPointer(s));
    Ptr<Packet> p;
    if (it == m_conns.end())
    {
        while ((p = s->Recv()))
            ;
        return;
    }
    Conn& c = it->second;
    if (!c.paced)
    {
        while ((p = s->Recv()))
            Consume(s, c, p);
        return;
    }
    // a slow reader: read what the core's pacing allows now, come back when more is allowed
    int64_t now = Simulator::Now().GetNanoSeconds();
    UintegerValue mss;
    s->GetAttribute("SegmentSize", mss);
    uint64_t n = qr_reader_take(&c.reader, now, s->GetRxAvailable(), mss.Get());
    if (n > 0 && (p = s->Recv(static_cast<uint32_t>(n), 0)))
        Consume(s, c, p);
    uint32_t left = s->GetRxAvailable();
    if (left == 0 && c.closeWhenRead)
    {
        c.closeWhenRead = false;
        s->Close();
    }
    if (left > 0 && !c.next.IsRunning())
    {
        int64_t at = qr_reader_next_ns(&c.reader, now, left);
        c.next = Simulator::Schedule(NanoSeconds(std::max<int64_t>(at - now, 1)),
                                     &FlowSinkApp::Read,
                                     this,
                                     s);
    }
}

void
FlowSinkApp::PeerClosed(Ptr<Socket> s)
{
    auto it = m_conns.find(PeekPointer(s));
    if (it != m_conns.end() && it->second.paced && s->GetRxAvailable() > 0)
    {
        it->second.closeWhenRead = true; // a slow reader closes once it has read everything
        return;
    }
    s->Close();
}

void
FlowSinkApp::StopApplication()
{
    if (m_listen)
        m_listen->Close();
}

void
FlowSinkApp::DoDispose()
{
    m_listen = nullptr;
    for (auto& [sock, c] : m_conns)
        c.next.Cancel();
    m_conns.clear();
    m_accepted.clear();
    m_onComplete = MakeNullCallback<void, uint32_t, Time>();
    Application::DoDispose();
}

} // namespace ns3
