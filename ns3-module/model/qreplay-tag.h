/* qreplay ns-3 module: the packet tag that names a packet across runs: its flow direction, its id
 * (flow direction << 32 | sequence within the direction) and, in replays, its drop tag. Simulation
 * metadata only: switches read it for scoring and for the replay's drop decision. */
#ifndef QREPLAY_NS3_TAG_H
#define QREPLAY_NS3_TAG_H

#include "ns3/packet.h"
#include "ns3/tag.h"

extern "C"
{
#include "qreplay/flowtable.h"
#include "qreplay/pingmesh.h"
}

namespace ns3
{

class QreplayTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    /* Name packet seq of direction dir (qr_packet_id). */
    void Set(uint32_t dir, uint64_t seq)
    {
        flow = dir;
        packet = qr_packet_id(dir, seq);
    }

    uint32_t Seq() const { return qr_packet_id_seq(packet); }

    uint64_t packet{0}; // id, equal in runtime and replay (qr_packet_id)
    uint32_t flow{0};   // flow direction
    uint8_t dropTag{0}; // 1: the runtime's receiver saw this packet lost
};

/* The tag of a Pingmesh probe or answer (pingmesh.h: its packet id, qr_probe_packet_id) or of a
 * traceroute probe or its ICMP answer (traceroute.h: direction QR_DIR_TRACE). Probes carry no
 * QreplayTag: they belong to no flow. */
class ProbeTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    /* Tag p as probe `probe`'s request (answer 0) or answer (1). */
    static void Attach(Ptr<Packet> p, uint32_t probe, int answer);
    /* Whether p carries a probe's tag; its probe number and whether it is the answer. */
    static bool Of(Ptr<const Packet> p, uint32_t& probe, int& answer);
    /* Tag p with packet id `id` (a traceroute probe's or answer's), replacing any probe tag. */
    static void AttachId(Ptr<Packet> p, uint64_t id);
    /* Whether p is a traceroute probe or answer. */
    static bool IsTrace(Ptr<const Packet> p);

    uint64_t packet{0};
};

} // namespace ns3

#endif
