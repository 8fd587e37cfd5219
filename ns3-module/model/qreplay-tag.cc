#include "qreplay-tag.h"

#include "qreplay/traceroute.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(QreplayTag);
NS_OBJECT_ENSURE_REGISTERED(ProbeTag);

TypeId
QreplayTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QreplayTag")
                            .SetParent<Tag>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<QreplayTag>();
    return tid;
}

TypeId
QreplayTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
QreplayTag::GetSerializedSize() const
{
    return 8 + 4 + 1;
}

void
QreplayTag::Serialize(TagBuffer i) const
{
    i.WriteU64(packet);
    i.WriteU32(flow);
    i.WriteU8(dropTag);
}

void
QreplayTag::Deserialize(TagBuffer i)
{
    packet = i.ReadU64();
    flow = i.ReadU32();
    dropTag = i.ReadU8();
}

void
QreplayTag::Print(std::ostream& os) const
{
    os << "packet=" << packet << " flow=" << flow << " dropTag=" << unsigned(dropTag);
}

TypeId
ProbeTag::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ProbeTag").SetParent<Tag>().SetGroupName("Qreplay").AddConstructor<ProbeTag>();
    return tid;
}

TypeId
ProbeTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
ProbeTag::GetSerializedSize() const
{
    return 8;
}

void
ProbeTag::Serialize(TagBuffer i) const
{
    i.WriteU64(packet);
}

void
ProbeTag::Deserialize(TagBuffer i)
{
    packet = i.ReadU64();
}

void
ProbeTag::Print(std::ostream& os) const
{
    os << "probe packet=" << packet;
}

void
ProbeTag::Attach(Ptr<Packet> p, uint32_t probe, int answer)
{
    ProbeTag tag;
    tag.packet = qr_probe_packet_id(probe, answer);
    p->AddPacketTag(tag);
}

void
ProbeTag::AttachId(Ptr<Packet> p, uint64_t id)
{
    ProbeTag tag;
    p->RemovePacketTag(tag);
    tag.packet = id;
    p->AddPacketTag(tag);
}

bool
ProbeTag::IsTrace(Ptr<const Packet> p)
{
    ProbeTag tag;
    return p->PeekPacketTag(tag) && qr_packet_id_dir(tag.packet) == QR_DIR_TRACE;
}

bool
ProbeTag::Of(Ptr<const Packet> p, uint32_t& probe, int& answer)
{
    ProbeTag tag;
    return p->PeekPacketTag(tag) && qr_probe_of_packet(tag.packet, &probe, &answer);
}

} // namespace ns3
