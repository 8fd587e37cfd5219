#include "host-queue-disc.h"

#include "five-tuple.h"
#include "qreplay-tag.h"

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/queue.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("HostQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(HostQueueDisc);

TypeId
HostQueueDisc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::HostQueueDisc")
                            .SetParent<TimedFifoQueueDisc>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<HostQueueDisc>();
    return tid;
}

HostQueueDisc::HostQueueDisc() = default;

HostQueueDisc::~HostQueueDisc() = default;

void
HostQueueDisc::Setup(const FlowTable* flows, uint32_t limitPackets, std::function<int64_t()> procDelay)
{
    m_flows = flows;
    m_limit = limitPackets;
    m_procDelay = procDelay;
}

bool
HostQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    if (GetInternalQueue(0)->GetNPackets() >= m_limit)
    {
        DropBeforeEnqueue(item, "host-queue-full");
        return false;
    }
    return EnqueueUntil(item, Simulator::Now() + NanoSeconds(m_procDelay ? m_procDelay() : 0));
}

Ptr<QueueDiscItem>
HostQueueDisc::Leave(Ptr<QueueDiscItem> item)
{
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    uint32_t dir;
    if (!ip || !m_flows || !m_flows->Resolve(FiveTupleOf(ip->GetHeader(), ip->GetPacket()), dir))
    {
        m_unknown++;
        return item;
    }
    uint64_t seq = m_next[dir]++;
    Ipv4Header h = ip->GetHeader();
    h.SetIdentification(static_cast<uint16_t>(seq));
    Ptr<Packet> p = ip->GetPacket();
    QreplayTag tag;
    p->RemovePacketTag(tag);
    tag.flow = dir;
    tag.packet = static_cast<uint64_t>(dir) << 32 | (seq & 0xffffffffu);
    tag.dropTag = 0;
    p->AddPacketTag(tag);
    Ptr<Ipv4QueueDiscItem> out =
        Create<Ipv4QueueDiscItem>(p, ip->GetAddress(), ip->GetProtocol(), h);
    out->SetTimeStamp(item->GetTimeStamp());
    return out;
}

void
HostQueueDisc::DoDispose()
{
    m_procDelay = nullptr;
    m_flows = nullptr;
    TimedFifoQueueDisc::DoDispose();
}

} // namespace ns3
