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

Ptr<Ipv4Route>
FlowEcmpRouting::RouteOutput(Ptr<Packet>, const Ipv4Header&, Ptr<NetDevice>, Socket::SocketErrno& e)
{
    e = Socket::ERROR_NOROUTETOHOST; // switches originate no traffic
    return nullptr;
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
    if (m_ipv4->IsDestinationAddress(header.GetDestination(), m_ipv4->GetInterfaceForDevice(idev)))
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

void
FlowEcmpRouting::Flush()
{
    std::vector<Pending> now;
    now.swap(m_pending);
    std::sort(now.begin(), now.end(), [](const Pending& a, const Pending& b) {
        return a.key != b.key ? a.key < b.key : a.order < b.order;
    });
    for (Pending& x : now)
    {
        Ptr<Ipv4Route> r = m_routes[x.port];
        r->SetDestination(x.header.GetDestination());
        x.ucb(r, x.packet, x.header);
    }
}

void
FlowEcmpRouting::NotifyInterfaceUp(uint32_t)
{
}

void
FlowEcmpRouting::NotifyInterfaceDown(uint32_t)
{
}

void
FlowEcmpRouting::NotifyAddAddress(uint32_t, Ipv4InterfaceAddress)
{
}

void
FlowEcmpRouting::NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress)
{
}

void
FlowEcmpRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    m_ipv4 = ipv4;
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
    m_routes.clear();
    m_ipv4 = nullptr;
    Ipv4RoutingProtocol::DoDispose();
}

} // namespace ns3
