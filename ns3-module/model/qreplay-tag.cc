#include "qreplay-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(QreplayTag);

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

} // namespace ns3
