#include "fabric-switch.h"

#include "five-tuple.h"
#include "qreplay-tag.h"

#include "ns3/icmpv4.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"
#include "ns3/traffic-control-layer.h"

#include <algorithm>
#include <stdexcept>

extern "C"
{
#include "qreplay/flowtable.h"
#include "qreplay/pingmesh.h"
}

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FabricSwitch);

namespace
{
constexpr uint16_t IPV4 = 0x0800;
constexpr uint8_t ICMP = 1;
constexpr uint8_t TCP = 6;
constexpr uint8_t DEFAULT_TTL = 64; // Ipv4L3Protocol's DefaultTtl
} // namespace

TypeId
FabricSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricSwitch")
            .SetParent<Object>()
            .SetGroupName("Qreplay")
            .AddConstructor<FabricSwitch>()
            .AddTraceSource("Drop",
                            "A packet the switch dropped itself (no route, addressed to the "
                            "switch, expired TTL, bad checksum, larger than the MTU); IP header "
                            "removed",
                            MakeTraceSourceAccessor(&FabricSwitch::m_dropTrace),
                            "ns3::FabricSwitch::DropCallback");
    return tid;
}

FabricSwitch::FabricSwitch() = default;
FabricSwitch::~FabricSwitch() = default;

void
FabricSwitch::Setup(Ptr<Node> node,
                    const qr_topology* topo,
                    uint32_t sw,
                    std::vector<Ptr<NetDevice>> ports,
                    std::vector<uint32_t> addr)
{
    if (ports.size() != addr.size())
        throw std::invalid_argument("FabricSwitch: one address per port");
    m_topo = topo;
    m_switch = sw;
    m_ports = std::move(ports);
    m_addr = std::move(addr);
    m_own.clear();
    for (uint32_t a : m_addr)
    {
        m_own.push_back(a);
        m_own.push_back(a | 3u); // the /30's broadcast
    }
    std::sort(m_own.begin(), m_own.end());
    m_tc = node->GetObject<TrafficControlLayer>();
    if (!m_tc)
    {
        m_tc = CreateObject<TrafficControlLayer>();
        node->AggregateObject(m_tc);
    }
    for (const Ptr<NetDevice>& dev : m_ports)
        node->RegisterProtocolHandler(MakeCallback(&FabricSwitch::Receive, this), IPV4, dev);
    // the node's handlers and the flush event point at this object: it lives and is disposed
    // with the node (node->GetObject<FabricSwitch>() finds it)
    if (!node->GetObject<FabricSwitch>())
        node->AggregateObject(Ptr<FabricSwitch>(this));
}

void
FabricSwitch::SetIcmpLimiter(qr_icmp_limiter* limiter)
{
    m_icmp = limiter;
}

uint64_t
FabricSwitch::GetUnroutable() const
{
    return m_unroutable;
}

uint64_t
FabricSwitch::GetForSwitch() const
{
    return m_forSwitch;
}

void
FabricSwitch::SetLoops(const qr_loop_rule* rules, size_t n)
{
    m_loops = rules;
    m_nLoops = n;
}

uint64_t
FabricSwitch::GetLooped() const
{
    return m_looped;
}

bool
FabricSwitch::ForSwitch(uint32_t dst) const
{
    return dst >= 0xE0000000u || std::binary_search(m_own.begin(), m_own.end(), dst);
}

void
FabricSwitch::Receive(Ptr<NetDevice> dev,
                      Ptr<const Packet> p,
                      uint16_t,
                      const Address&,
                      const Address&,
                      NetDevice::PacketType)
{
    // what Ipv4L3Protocol::Receive does before routing
    Ptr<Packet> packet = p->Copy();
    Ipv4Header header;
    if (Node::ChecksumEnabled())
        header.EnableChecksum();
    packet->RemoveHeader(header);
    if (header.GetPayloadSize() < packet->GetSize())
        packet->RemoveAtEnd(packet->GetSize() - header.GetPayloadSize());
    if (!header.IsChecksumOk())
    {
        m_dropTrace(packet);
        return;
    }
    if (m_nPins && header.GetTos() == QR_GUIDED_TOS && header.GetProtocol() == TCP &&
        Bounce(dev, packet, header))
        return;
    if (ForSwitch(header.GetDestination().Get()))
    {
        m_forSwitch++;
        m_dropTrace(packet);
        return;
    }
    qr_five_tuple ft = FiveTupleOf(header, packet);
    uint32_t port, dst;
    if (qr_topology_route(m_topo, m_switch, &ft, &port) != 0 || port >= m_ports.size())
    {
        m_unroutable++;
        m_dropTrace(packet);
        return;
    }
    if (m_nLoops && qr_topology_host_of_addr(m_topo, ft.dst_ip, &dst) == 0 &&
        qr_loop_route(m_loops, m_nLoops, m_switch, dst, &port))
        m_looped++;
    // Packets reaching this switch in the same nanosecond are forwarded together, in the order of
    // their packet ids, after every event already due now: the outcome (admission, queue
    // contents) then does not depend on the order in which ns-3 happened to schedule their
    // arrivals, which differs between a runtime and its replay.
    QreplayTag tag;
    bool tagged = packet->PeekPacketTag(tag);
    uint64_t key = qr_same_time_key(tagged, tag.packet, &ft, header.GetIdentification());
    m_pending.push_back(Pending{key, m_arrivals++, port, packet, header});
    if (!m_flush.IsRunning())
        m_flush = Simulator::ScheduleNow(&FabricSwitch::Flush, this);
}

void
FabricSwitch::Flush()
{
    // forwarding may receive more packets at this instant (they go to a new batch): work on a
    // separate vector, and keep both vectors' capacity from one flush to the next
    m_flushing.swap(m_pending);
    if (m_flushing.size() > 1)
        std::sort(m_flushing.begin(), m_flushing.end(), [](const Pending& a, const Pending& b) {
            return a.key != b.key ? a.key < b.key : a.order < b.order;
        });
    for (Pending& x : m_flushing)
        Forward(x);
    m_flushing.clear();
}

void
FabricSwitch::Forward(Pending& x)
{
    // what Ipv4L3Protocol::IpForward does
    Ipv4Header header = x.header;
    header.SetTtl(header.GetTtl() - 1);
    if (header.GetTtl() == 0)
    {
        TimeExceeded(header, x.packet);
        m_dropTrace(x.packet);
        return;
    }
    SocketPriorityTag priorityTag;
    x.packet->RemovePacketTag(priorityTag);
    uint8_t priority = Socket::IpTos2Priority(header.GetTos());
    if (priority)
    {
        priorityTag.SetPriority(priority);
        x.packet->AddPacketTag(priorityTag);
    }
    Transmit(x.port, x.packet, header);
}

void
FabricSwitch::TimeExceeded(const Ipv4Header& expired, Ptr<const Packet> payload)
{
    // what Icmpv4L4Protocol::SendTimeExceededTtl and Ipv4L3Protocol::Send do for a router whose
    // route toward the probe's source is this switch's port: the answer's source is that port's
    // address, its identification the next of (source, destination, ICMP)
    uint32_t dst = expired.GetSource().Get();
    if (!m_icmp || !qr_icmp_allow(m_icmp, dst, Simulator::Now().GetNanoSeconds()))
        return;
    qr_five_tuple ft{0, dst, 0, 0, ICMP};
    uint32_t port;
    if (qr_topology_route(m_topo, m_switch, &ft, &port) != 0 || port >= m_ports.size())
        return;
    Ptr<Packet> p = Create<Packet>();
    Icmpv4TimeExceeded te;
    te.SetHeader(expired);
    te.SetData(payload);
    p->AddHeader(te);
    ProbeTag::AttachId(p, qr_packet_id(QR_DIR_TRACE, 1)); // not the traffic's: not recorded
    Icmpv4Header icmp;
    icmp.SetType(Icmpv4Header::ICMPV4_TIME_EXCEEDED);
    icmp.SetCode(Icmpv4TimeExceeded::ICMPV4_TIME_TO_LIVE);
    if (Node::ChecksumEnabled())
        icmp.EnableChecksum();
    p->AddHeader(icmp);
    Ipv4Header h;
    h.SetSource(Ipv4Address(m_addr[port]));
    h.SetDestination(Ipv4Address(dst));
    h.SetProtocol(ICMP);
    h.SetPayloadSize(p->GetSize());
    h.SetTtl(DEFAULT_TTL);
    h.SetTos(0);
    h.SetMayFragment();
    uint64_t srcDst = static_cast<uint64_t>(dst) | (static_cast<uint64_t>(m_addr[port]) << 32);
    h.SetIdentification(m_identification[std::make_pair(srcDst, ICMP)]++);
    if (Node::ChecksumEnabled())
        h.EnableChecksum();
    Transmit(port, p, h);
}

void
FabricSwitch::Transmit(uint32_t port, Ptr<Packet> packet, const Ipv4Header& header)
{
    // what Ipv4L3Protocol::SendRealOut and Ipv4Interface::Send do on a point-to-point port
    Ptr<NetDevice> dev = m_ports[port];
    if (packet->GetSize() + header.GetSerializedSize() > dev->GetMtu())
    {
        m_dropTrace(packet); // a switch of this fabric does not fragment
        return;
    }
    m_tc->Send(dev, Create<Ipv4QueueDiscItem>(packet, dev->GetBroadcast(), IPV4, header));
}

void
FabricSwitch::SetBounce(const qr_bounce_pin* pins,
                        size_t n,
                        std::vector<qr_fabric_mirror_copy>* copies)
{
    m_pins = pins;
    m_nPins = n;
    m_copies = copies;
}

void
FabricSwitch::LogCopy(const Ipv4Header& h, Ptr<const Packet> p, uint32_t port, bool out)
{
    TcpHeader tcp;
    p->PeekHeader(tcp);
    m_copies->push_back(qr_fabric_mirror_copy{h.GetSource().Get(),
                                              h.GetDestination().Get(),
                                              tcp.GetSequenceNumber().GetValue(),
                                              tcp.GetSourcePort(),
                                              static_cast<uint16_t>(m_switch),
                                              static_cast<uint8_t>(port),
                                              static_cast<uint8_t>(out),
                                              Simulator::Now().GetNanoSeconds()});
}

bool
FabricSwitch::Bounce(Ptr<NetDevice> dev, Ptr<Packet> packet, Ipv4Header header)
{
    uint32_t port = 0, in = 0;
    int what = qr_bounce_at(m_pins,
                            m_nPins,
                            m_switch,
                            header.GetSource().Get(),
                            header.GetDestination().Get(),
                            &port);
    while (in < m_ports.size() && m_ports[in] != dev)
        in++;
    if (what == QR_BOUNCE_NONE || in == m_ports.size())
        return false;
    LogCopy(header, packet, in, false);
    if (what == QR_BOUNCE_HOME)
        return true; // taken in: the round trip is over
    header.SetTtl(header.GetTtl() - 1);
    LogCopy(header, packet, port, true);
    Transmit(port, packet, header);
    return true;
}

void
FabricSwitch::SendBounce(uint32_t round)
{
    for (size_t i = 0; i < m_nPins; i++)
    {
        const qr_bounce_pin& x = m_pins[i];
        if (x.sw != m_switch || x.port >= m_ports.size())
            continue;
        Ptr<Packet> p = Create<Packet>();
        TcpHeader tcp;
        tcp.SetSourcePort(QR_BOUNCE_SPORT);
        tcp.SetDestinationPort(QR_PROBE_PORT);
        tcp.SetSequenceNumber(SequenceNumber32(round));
        tcp.SetFlags(0);
        p->AddHeader(tcp);
        // a monitor's packet, as traceroute's: it loads the queues, no host records it
        ProbeTag::AttachId(p, qr_packet_id(QR_DIR_TRACE, 0));
        Ipv4Header h;
        h.SetSource(Ipv4Address(x.addr));
        h.SetDestination(Ipv4Address(x.addr));
        h.SetProtocol(TCP);
        h.SetPayloadSize(p->GetSize());
        h.SetTtl(DEFAULT_TTL);
        h.SetTos(QR_GUIDED_TOS);
        h.SetIdentification(static_cast<uint16_t>(round));
        if (Node::ChecksumEnabled())
            h.EnableChecksum();
        LogCopy(h, p, x.port, true);
        Transmit(x.port, p, h);
    }
}

void
FabricSwitch::DoDispose()
{
    m_flush.Cancel();
    m_pending.clear();
    m_flushing.clear();
    m_ports.clear();
    m_tc = nullptr;
    Object::DoDispose();
}

} // namespace ns3
