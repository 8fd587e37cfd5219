/* A multi-tier service over ns-3's TCP (tiers-run.h): the core's machine wired to sockets. */
#include "tiers-run.h"

#include "qreplay-runtime.h"

#include "ns3/inet-socket-address.h"
#include "ns3/net-device.h"
#include "ns3/packet.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/trace-helper.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

extern "C"
{
#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/random.h"
}

namespace ns3
{

TiersRun::TiersRun(const qr_config* c,
                   const qr_tiers_spec* spec,
                   uint64_t seed,
                   int64_t duration_ns)
    : m_cfg(c),
      m_spec(*spec)
{
    uint32_t hosts = qr_config_hosts(c);
    if (qr_tiers_hosts(spec) > hosts)
        throw std::runtime_error(
            "the service names host " + std::to_string(qr_tiers_hosts(spec) - 1) +
            "; the network has hosts 0 to " + std::to_string(hosts - 1) + " ([topology])");
    FatTreeHelper::FreshSimulation();
    RngSeedManager::SetSeed(static_cast<uint32_t>(qr_seed_derive(seed, "ns3", 0) % 4294967295u) +
                            1);
    RngSeedManager::SetRun(1);
    QreplayRuntime::ConfigureTcp(c);
    m_net = FatTreeHelper::FromConfig(c);
    m_linkFaults = m_net->InstallFaults(c, nullptr);
    m_offsets.assign(hosts, 0);
    if (qr_clock_offsets(c->run.seed, c->clock.max_offset_ns, hosts, m_offsets.data()))
        throw std::runtime_error("[clock]: out of memory");
    int rc = qr_tiers_create(&m_machine, spec, seed);
    if (!rc)
        rc = qr_tiers_start(m_machine, duration_ns);
    if (rc)
        throw std::runtime_error(rc == QR_EVALUE ? "the service has no tier" : "out of memory");
    for (uint32_t h = 0; h < hosts; h++)
    {
        if (qr_tiers_tier_of(spec, h) < 0)
            continue;
        Ptr<Socket> s =
            Socket::CreateSocket(m_net->GetHosts().Get(h), TcpSocketFactory::GetTypeId());
        s->Bind(InetSocketAddress(Ipv4Address::GetAny(), kServicePort));
        s->Listen();
        s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&TiersRun::Accept, this));
        m_listen.push_back(s);
    }
}

/* A frame a host's NIC sent or received, written at the host's clock's time. */
static void
SniffAt(Ptr<PcapFileWrapper> file, Time shift, Ptr<const Packet> p)
{
    file->Write(Simulator::Now() + shift, p);
}

void
TiersRun::EnablePcaps(const std::string& dir)
{
    int64_t lift = m_cfg->clock.max_offset_ns > 0 ? m_cfg->clock.max_offset_ns : 0;
    for (uint32_t h = 0; h < qr_tiers_hosts(&m_spec); h++)
    {
        std::string path = dir + "/h" + std::to_string(h) + ".pcap";
        Ptr<PcapFileWrapper> f = CreateObject<PcapFileWrapper>();
        f->Open(path, std::ios::out);
        if (f->Fail())
            throw std::runtime_error(path + ": cannot be written");
        f->Init(PcapHelper::DLT_PPP);
        Ptr<NetDevice> dev = m_net->GetHostDevice(h);
        dev->TraceConnectWithoutContext(
            "PromiscSniffer",
            MakeBoundCallback(&SniffAt, f, NanoSeconds(m_offsets[h] + lift)));
        m_pcaps.push_back(f);
    }
}

void
TiersRun::ClosePcaps()
{
    for (auto& f : m_pcaps)
        f->Close();
}

std::string
TiersRun::HostAddress(uint32_t h) const
{
    std::ostringstream s;
    m_net->GetHostAddress(h).Print(s);
    return s.str();
}

TiersRun::~TiersRun()
{
    m_conns.clear();
    m_sockSide.clear();
    m_listen.clear();
    Simulator::Destroy();
    qr_tiers_destroy(m_machine);
    qr_link_faults_destroy(m_linkFaults);
}

void
TiersRun::Counts(uint64_t* requests, uint64_t* answered) const
{
    qr_tiers_counts(m_machine, requests, answered);
}

bool
TiersRun::Run(Time stop,
              const volatile std::sig_atomic_t* cancel,
              std::function<void(const Progress&)> progress)
{
    m_cancel = cancel;
    m_progress = std::move(progress);
    Simulator::ScheduleNow(&TiersRun::Step, this);
    Simulator::Schedule(MilliSeconds(1), &TiersRun::Tick, this);
    Simulator::Stop(stop);
    Simulator::Run();
    m_end = Simulator::Now();
    return !m_cancelled;
}

void
TiersRun::Tick()
{
    if (m_cancel && *m_cancel)
    {
        m_cancelled = true;
        Simulator::Stop();
        return;
    }
    if (m_progress)
    {
        Progress p{Simulator::Now(), 0, 0, m_obs.size()};
        qr_tiers_counts(m_machine, &p.requests, &p.answered);
        m_progress(p);
    }
    Simulator::Schedule(MilliSeconds(1), &TiersRun::Tick, this);
}

/* The machine's own events up to now, what it sends, and when it next needs a turn; the run ends
 * when the clients are done and every request answered. */
void
TiersRun::Step()
{
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (m_nextAt <= now)
        m_nextAt = INT64_MAX;
    if (qr_tiers_advance(m_machine, now))
        throw std::runtime_error("out of memory");
    Flush();
    Reschedule();
    uint64_t req, ans;
    qr_tiers_counts(m_machine, &req, &ans);
    if (qr_tiers_next(m_machine) == INT64_MAX && req == ans)
        Simulator::Stop();
}

void
TiersRun::Reschedule()
{
    int64_t t = qr_tiers_next(m_machine);
    if (t == INT64_MAX || t >= m_nextAt)
        return;
    m_next.Cancel();
    m_nextAt = t;
    int64_t now = Simulator::Now().GetNanoSeconds();
    m_next = Simulator::Schedule(NanoSeconds(std::max<int64_t>(t - now, 0)), &TiersRun::Step, this);
}

/* The messages the machine sent: logged (the sender's clock) and handed to their connections,
 * a slow link's delay later. */
void
TiersRun::Flush()
{
    size_t n;
    const qr_tier_msg* ms = qr_tiers_take(m_machine, &n);
    int64_t now = Simulator::Now().GetNanoSeconds();
    for (size_t i = 0; i < n; i++)
    {
        const qr_tier_msg& m = ms[i];
        if (m.id != m_msgs.size())
            throw std::logic_error("the machine's messages out of order");
        m_msgs.push_back(m);
        Conn& c = m_conns[m.conn];
        if (c.sent[0] == 0)
        {
            c.client = m.from;
            c.server = m.to;
        }
        m_obs.push_back(
            qr_msg{m.from, m.to, m.conn, now + m_offsets[m.from], QR_MSG_UNTRACED, m.bytes});
        qr_tiers_truth_row r{};
        snprintf(r.conn, sizeof r.conn, "%u", m.conn);
        r.index = c.sent[m.reply ? 1 : 0]++;
        r.id = m.id;
        r.parent = m.parent;
        r.src = m.from;
        r.dst = m.to;
        r.true_send_ns = now;
        r.true_recv_ns = QR_TRUTH_NO_TIME;
        m_truth.push_back(r);
        int64_t delay = 0;
        for (uint32_t f = 0; f < m_spec.n_faults; f++)
        {
            const qr_tier_fault& x = m_spec.faults[f];
            if (x.kind == QR_TIER_SLOW_LINK &&
                ((x.a == m.from && x.b == m.to) || (x.a == m.to && x.b == m.from)))
                delay += x.delay_ns;
        }
        if (delay > 0)
            Simulator::Schedule(NanoSeconds(delay), &TiersRun::Hand, this, m.id);
        else
            Hand(m.id);
    }
}

/* The caller's socket of a new connection, towards the callee's service port. */
TiersRun::Conn&
TiersRun::Open(const qr_tier_msg& m)
{
    Conn& c = m_conns[m.conn];
    if (c.side[0].sock)
        return c;
    Ptr<Socket> s =
        Socket::CreateSocket(m_net->GetHosts().Get(m.from), TcpSocketFactory::GetTypeId());
    s->Bind();
    Address a;
    s->GetSockName(a);
    uint16_t port = InetSocketAddress::ConvertFrom(a).GetPort();
    m_byPort[{m_net->GetHostAddress(m.from).Get(), port}] = m.conn;
    m_sockSide[PeekPointer(s)] = {m.conn, 0};
    s->SetRecvCallback(MakeCallback(&TiersRun::Receive, this));
    s->SetSendCallback(MakeCallback(&TiersRun::Space, this));
    s->Connect(InetSocketAddress(m_net->GetHostAddress(m.to), kServicePort));
    c.side[0].sock = s;
    return c;
}

void
TiersRun::Hand(uint64_t id)
{
    const qr_tier_msg& m = m_msgs[id];
    Conn& c = Open(m);
    int s = m.reply ? 1 : 0;
    c.expect[1 - s].push_back({m.id, m.bytes});
    c.side[s].pending += m.bytes;
    Push(m.conn, s);
}

/* As much of a side's bytes as its socket takes. */
void
TiersRun::Push(uint32_t conn, int side)
{
    Side& sd = m_conns[conn].side[side];
    while (sd.sock && sd.pending > 0)
    {
        uint32_t room = sd.sock->GetTxAvailable();
        uint32_t k = static_cast<uint32_t>(std::min<uint64_t>(sd.pending, room));
        if (k == 0)
            return;
        int sent = sd.sock->Send(Create<Packet>(k));
        if (sent <= 0)
            return;
        sd.pending -= static_cast<uint64_t>(sent);
    }
}

void
TiersRun::Space(Ptr<Socket> s, uint32_t)
{
    auto it = m_sockSide.find(PeekPointer(s));
    if (it != m_sockSide.end())
        Push(it->second.first, it->second.second);
}

void
TiersRun::Accept(Ptr<Socket> s, const Address& from)
{
    InetSocketAddress f = InetSocketAddress::ConvertFrom(from);
    auto it = m_byPort.find({f.GetIpv4().Get(), f.GetPort()});
    if (it == m_byPort.end())
        throw std::logic_error("a connection from no caller's socket");
    m_sockSide[PeekPointer(s)] = {it->second, 1};
    m_conns[it->second].side[1].sock = s;
    s->SetRecvCallback(MakeCallback(&TiersRun::Receive, this));
    s->SetSendCallback(MakeCallback(&TiersRun::Space, this));
    Push(it->second, 1);
}

/* Bytes read: each message whose last byte is read has arrived (the receiver's clock). */
void
TiersRun::Receive(Ptr<Socket> s)
{
    auto it = m_sockSide.find(PeekPointer(s));
    if (it == m_sockSide.end())
        return;
    Conn& c = m_conns[it->second.first];
    int side = it->second.second;
    int64_t now = Simulator::Now().GetNanoSeconds();
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        uint64_t b = p->GetSize();
        auto& q = c.expect[side];
        while (b > 0)
        {
            if (c.head[side] >= q.size())
                throw std::logic_error("bytes beyond every message sent on a connection");
            auto& e = q[c.head[side]];
            uint64_t take = std::min(b, e.second);
            e.second -= take;
            b -= take;
            if (e.second > 0)
                continue;
            const qr_tier_msg& m = m_msgs[e.first];
            m_obs[m.id].recv_ns = now + m_offsets[m.to];
            m_truth[m.id].true_recv_ns = now;
            if (qr_tiers_arrive(m_machine, m.id, now))
                throw std::runtime_error("the service's machine refused an arrival");
            c.head[side]++;
        }
    }
    Step();
}

} // namespace ns3
