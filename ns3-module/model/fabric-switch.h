/* qreplay ns-3 module: a switch of a qreplay topology that forwards below IP. Glue only: the
 * egress port comes from the core's qr_topology_route (down by address, up by a hash of the
 * 5-tuple and the switch id), the order of packets reaching the switch in one nanosecond from the
 * core's qr_same_time_key, the ICMP budget from the core's limiter.
 *
 * A switch node has no Internet stack: this object takes IPv4 frames from its point-to-point
 * devices, does what ns-3's Ipv4L3Protocol + routing + Icmpv4L4Protocol would do for a router that
 * only forwards (TTL, time-exceeded answers, the IP identification counter of the packets it
 * originates) and hands each packet to the node's traffic-control layer for the port's queue
 * disc. Byte for byte and event for event what the Internet stack did, with less work per hop. */
#ifndef QREPLAY_NS3_FABRIC_SWITCH_H
#define QREPLAY_NS3_FABRIC_SWITCH_H

#include "ns3/event-id.h"
#include "ns3/ipv4-header.h"
#include "ns3/net-device.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <map>
#include <utility>
#include <vector>

extern "C"
{
#include "qreplay/fabric_truth.h"
#include "qreplay/guided_plan.h"
#include "qreplay/loopfault.h"
#include "qreplay/topology.h"
#include "qreplay/traceroute.h"
}

namespace ns3
{

class TrafficControlLayer;

class FabricSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    FabricSwitch();
    ~FabricSwitch() override;

    /* Forward as switch `sw` of topology `topo` (borrowed: it must outlive the simulation) on
     * `node`, whose port p is ports[p] with address addr[p] (/30). Registers the IPv4 handler of
     * every port, aggregates a traffic-control layer to the node if it has none, and aggregates
     * itself to the node. */
    void Setup(Ptr<Node> node,
               const qr_topology* topo,
               uint32_t sw,
               std::vector<Ptr<NetDevice>> ports,
               std::vector<uint32_t> addr);
    /**
     * Answer expired TTLs with ICMP time-exceeded toward the probe's source, under the core's
     * limiter (traceroute.h; borrowed). Without one (the default) the switch originates nothing.
     */
    void SetIcmpLimiter(qr_icmp_limiter* limiter);
    /* Planted routing loops ([faults] loop, loopfault.h; borrowed): the core's rules decide the
     * port of the packets they name. */
    void SetLoops(const qr_loop_rule* rules, size_t n);
    /* Packets a loop rule sent the wrong way. */
    uint64_t GetLooped() const;
    /* Everflow's link round trips (guided_plan.h qr_bounce_plan; pins borrowed): the switch
     * sends the probes back that its neighbours bounce off it, takes in its own, and logs a
     * mirrored copy of each pass into *copies (borrowed), as every switch of a fabric mirrors the
     * debug mark. */
    void SetBounce(const qr_bounce_pin* pins, size_t n, std::vector<qr_fabric_mirror_copy>* copies);
    /* One round: a probe out of each of this switch's ports that lead to a switch. */
    void SendBounce(uint32_t round);

    /* Packets this switch could not route (destination outside the topology). */
    uint64_t GetUnroutable() const;
    /* Packets addressed to the switch itself (its ports' addresses, broadcast, multicast): it has
     * no stack to deliver them to, so they are dropped and counted. */
    uint64_t GetForSwitch() const;

    /* The packet (IP header removed) of every packet the switch dropped itself: no route,
     * addressed to it, expired TTL, bad checksum, larger than the port's MTU. */
    typedef void (*DropCallback)(Ptr<const Packet>);

  protected:
    void DoDispose() override;

  private:
    struct Pending
    {
        uint64_t key;   // QreplayTag packet id (or a 5-tuple hash for untagged packets)
        uint64_t order; // arrival order, for untagged ties
        uint32_t port;
        Ptr<Packet> packet;
        Ipv4Header header;
    };

    void Receive(Ptr<NetDevice> dev,
                 Ptr<const Packet> p,
                 uint16_t protocol,
                 const Address& from,
                 const Address& to,
                 NetDevice::PacketType type);
    void Flush();
    void Forward(Pending& x);
    void TimeExceeded(const Ipv4Header& expired, Ptr<const Packet> payload);
    void Transmit(uint32_t port, Ptr<Packet> packet, const Ipv4Header& header);
    bool Bounce(Ptr<NetDevice> dev, Ptr<Packet> packet, Ipv4Header header);
    void LogCopy(const Ipv4Header& h, Ptr<const Packet> p, uint32_t port, bool out);
    bool ForSwitch(uint32_t dst) const;

    std::vector<Pending> m_pending;
    std::vector<Pending> m_flushing; // the batch being forwarded (kept for its capacity)
    uint64_t m_arrivals{0};
    EventId m_flush;
    Ptr<TrafficControlLayer> m_tc;
    const qr_topology* m_topo{nullptr};
    uint32_t m_switch{0};
    std::vector<Ptr<NetDevice>> m_ports;
    std::vector<uint32_t> m_addr;
    std::vector<uint32_t> m_own; // sorted: the ports' addresses and their /30 broadcasts
    std::map<std::pair<uint64_t, uint8_t>, uint16_t> m_identification; // as Ipv4L3Protocol's
    uint64_t m_unroutable{0};
    uint64_t m_forSwitch{0};
    qr_icmp_limiter* m_icmp{nullptr};
    const qr_loop_rule* m_loops{nullptr};
    size_t m_nLoops{0};
    uint64_t m_looped{0};
    const qr_bounce_pin* m_pins{nullptr};
    size_t m_nPins{0};
    std::vector<qr_fabric_mirror_copy>* m_copies{nullptr};
    TracedCallback<Ptr<const Packet>> m_dropTrace;
};

} // namespace ns3

#endif
