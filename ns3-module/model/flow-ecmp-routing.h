/* qreplay ns-3 module: per-flow ECMP routing for a switch of a qreplay topology. Glue only: the
 * egress port comes from the core's qr_topology_route (down by address, up by a hash of the
 * 5-tuple and the switch id), so every packet of a flow takes one path, in every run. O(1) per
 * packet; no routing table. */
#ifndef QREPLAY_NS3_FLOW_ECMP_ROUTING_H
#define QREPLAY_NS3_FLOW_ECMP_ROUTING_H

#include "ns3/event-id.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"

#include <vector>

extern "C"
{
#include "qreplay/flowtable.h"
#include "qreplay/topology.h"
#include "qreplay/traceroute.h"
}

namespace ns3
{

class FlowEcmpRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId();
    FlowEcmpRouting();
    ~FlowEcmpRouting() override;

    /* Route as switch `sw` of topology `topo` (borrowed: it must outlive the simulation);
     * portToInterface[p] is the Ipv4 interface index of port p. */
    void Setup(const qr_topology* topo, uint32_t sw, std::vector<uint32_t> portToInterface);
    /**
     * Answer expired TTLs with ICMP time-exceeded toward the probe's source, under the core's
     * limiter (traceroute.h; borrowed). Without one (the default) the switch originates nothing,
     * as before: ns-3 drops the ICMP it builds.
     */
    void SetIcmpLimiter(qr_icmp_limiter* limiter);

    /* Packets this switch could not route (destination outside the topology). */
    uint64_t GetUnroutable() const;

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb,
                    LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t interface) override;
    void NotifyInterfaceDown(uint32_t interface) override;
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void SetIpv4(Ptr<Ipv4> ipv4) override;
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream,
                           Time::Unit unit = Time::S) const override;

  protected:
    void DoDispose() override;

  private:
    /* A packet routed at this instant, waiting for the others of the same nanosecond. */
    struct Pending
    {
        uint64_t key;   // QreplayTag packet id (or a 5-tuple hash for untagged packets)
        uint64_t order; // arrival order, for untagged ties
        uint32_t port;
        Ptr<const Packet> packet;
        Ipv4Header header;
        UnicastForwardCallback ucb;
    };

    void Flush();
    /* Whether ns-3 could take dst as one of this switch's own: a local or subnet broadcast address
     * of an interface, or multicast/broadcast. Only then is the (linear) IsDestinationAddress
     * asked. */
    bool MaybeLocal(Ipv4Address dst);

    std::vector<Pending> m_pending;
    std::vector<Pending> m_flushing; // the batch being forwarded (kept for its capacity)
    std::vector<uint32_t> m_local;   // sorted; rebuilt when m_localDirty
    bool m_localDirty{true};
    uint64_t m_arrivals{0};
    EventId m_flush;
    Ptr<Ipv4> m_ipv4;
    const qr_topology* m_topo{nullptr};
    uint32_t m_switch{0};
    std::vector<uint32_t> m_portToInterface;
    std::vector<Ptr<Ipv4Route>> m_routes; // one prepared route per port
    uint64_t m_unroutable{0};
    qr_icmp_limiter* m_icmp{nullptr};
};

} // namespace ns3

#endif
