#include "flow-ecmp-routing.h"

#include "qreplay-tag.h"

#include "ns3/simulator.h"

#include <algorithm>

#include "five-tuple.h"

#include "ns3/log.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/packet.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowEcmpRouting");
NS_OBJECT_ENSURE_REGISTERED(FlowEcmpRouting);

TypeId
FlowEcmpRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowEcmpRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<FlowEcmpRouting>();
    return tid;
}

FlowEcmpRouting::FlowEcmpRouting() = default;
FlowEcmpRouting::~FlowEcmpRouting() = default;

void
FlowEcmpRouting::Setup(const qr_topology* topo, uint32_t sw, std::vector<uint32_t> portToInterface)
{
    m_topo = topo;
    m_switch = sw;
    m_portToInterface = std::move(portToInterface);
    m_routes.clear();
    for (uint32_t iface : m_portToInterface)
    {
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetOutputDevice(m_ipv4->GetNetDevice(iface));
        r->SetSource(m_ipv4->GetAddress(iface, 0).GetLocal());
        r->SetGateway(Ipv4Address::GetAny()); // point-to-point: no next-hop resolution
        m_routes.push_back(r);
    }
}

uint64_t
FlowEcmpRouting::GetUnroutable() const
{
    return m_unroutable;
}

void
FlowEcmpRouting::SetIcmpLimiter(qr_icmp_limiter* limiter)
{
    m_icmp = limiter;
}

Ptr<Ipv4Route>
FlowEcmpRouting::RouteOutput(Ptr<Packet> p,
                             const Ipv4Header& header,
                             Ptr<NetDevice>,
                             Socket::SocketErrno& e)
{
    // a switch originates only the ICMP errors of expired TTLs, and only when the run traces
    e = Socket::ERROR_NOROUTETOHOST;
    if (!m_icmp || !p || header.GetProtocol() != 1 ||
        !qr_icmp_allow(m_icmp, header.GetDestination().Get(), Simulator::Now().GetNanoSeconds()))
        return nullptr;
    qr_five_tuple ft{0, header.GetDestination().Get(), 0, 0, 1};
    uint32_t port;
    if (qr_topology_route(m_topo, m_switch, &ft, &port) != 0 || port >= m_routes.size())
        return nullptr;
    Ptr<Ipv4Route> r = Create<Ipv4Route>();
    r->SetOutputDevice(m_routes[port]->GetOutputDevice());
    r->SetSource(m_routes[port]->GetSource());
    r->SetGateway(Ipv4Address::GetAny());
    r->SetDestination(header.GetDestination());
    ProbeTag::AttachId(p, qr_packet_id(QR_DIR_TRACE, 1)); // not the traffic's: not recorded
    e = Socket::ERROR_NOTERROR;
    return r;
}

bool
FlowEcmpRouting::RouteInput(Ptr<const Packet> p,
                            const Ipv4Header& header,
                            Ptr<const NetDevice> idev,
                            UnicastForwardCallback ucb,
                            MulticastForwardCallback,
                            LocalDeliverCallback lcb,
                            ErrorCallback ecb)
{
    if (MaybeLocal(header.GetDestination()) &&
        m_ipv4->IsDestinationAddress(header.GetDestination(), m_ipv4->GetInterfaceForDevice(idev)))
    {
        lcb(p, header, m_ipv4->GetInterfaceForDevice(idev));
        return true;
    }
    qr_five_tuple ft = FiveTupleOf(header, p);
    uint32_t port;
    if (qr_topology_route(m_topo, m_switch, &ft, &port) != 0 || port >= m_routes.size())
    {
        m_unroutable++;
        ecb(p, header, Socket::ERROR_NOROUTETOHOST);
        return false;
    }
    // Packets reaching this switch in the same nanosecond are forwarded together, in the order of
    // their packet ids, after every event already due now: the outcome (admission, queue
    // contents) then does not depend on the order in which ns-3 happened to schedule their
    // arrivals, which differs between a runtime and its replay.
    QreplayTag tag;
    bool tagged = p->PeekPacketTag(tag);
    uint64_t key = qr_same_time_key(tagged, tag.packet, &ft, header.GetIdentification());
    m_pending.push_back(Pending{key, m_arrivals++, port, p, header, ucb});
    if (!m_flush.IsRunning())
        m_flush = Simulator::ScheduleNow(&FlowEcmpRouting::Flush, this);
    return true;
}

bool
FlowEcmpRouting::MaybeLocal(Ipv4Address dst)
{
    uint32_t a = dst.Get();
    if (a >= 0xE0000000u) // multicast, reserved, limited broadcast
        return true;
    if (m_localDirty)
    {
        m_local.clear();
        for (uint32_t i = 0; i < m_ipv4->GetNInterfaces(); i++)
            for (uint32_t j = 0; j < m_ipv4->GetNAddresses(i); j++)
            {
                Ipv4InterfaceAddress ia = m_ipv4->GetAddress(i, j);
                m_local.push_back(ia.GetLocal().Get());
                m_local.push_back(ia.GetBroadcast().Get());
                m_local.push_back(ia.GetLocal().GetSubnetDirectedBroadcast(ia.GetMask()).Get());
            }
        std::sort(m_local.begin(), m_local.end());
        m_localDirty = false;
    }
    return std::binary_search(m_local.begin(), m_local.end(), a);
}

void
FlowEcmpRouting::Flush()
{
    // forwarding may route more packets at this instant (they go to a new batch): work on a
    // separate vector, and keep both vectors' capacity from one flush to the next
    m_flushing.swap(m_pending);
    if (m_flushing.size() > 1)
        std::sort(m_flushing.begin(), m_flushing.end(), [](const Pending& a, const Pending& b) {
            return a.key != b.key ? a.key < b.key : a.order < b.order;
        });
    for (Pending& x : m_flushing)
    {
        Ptr<Ipv4Route> r = m_routes[x.port];
        r->SetDestination(x.header.GetDestination());
        x.ucb(r, x.packet, x.header);
    }
    m_flushing.clear();
}

void
FlowEcmpRouting::NotifyInterfaceUp(uint32_t)
{
    m_localDirty = true;
}

void
FlowEcmpRouting::NotifyInterfaceDown(uint32_t)
{
    m_localDirty = true;
}

void
FlowEcmpRouting::NotifyAddAddress(uint32_t, Ipv4InterfaceAddress)
{
    m_localDirty = true;
}

void
FlowEcmpRouting::NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress)
{
    m_localDirty = true;
}

void
FlowEcmpRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    m_ipv4 = ipv4;
    m_localDirty = true;
}

void
FlowEcmpRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const
{
    *stream->GetStream() << "FlowEcmpRouting: switch " << m_switch << ", "
                         << m_portToInterface.size()
                         << " ports; down by address, up by 5-tuple hash" << std::endl;
}

void
FlowEcmpRouting::DoDispose()
{
    m_flush.Cancel();
    m_pending.clear();
    m_flushing.clear();
    m_routes.clear();
    m_ipv4 = nullptr;
    Ipv4RoutingProtocol::DoDispose();
}

} // namespace ns3
