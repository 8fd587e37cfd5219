#include "host-queue-disc.h"

#include "five-tuple.h"
#include "qreplay-tag.h"

#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-queue-disc-item.h"
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
                            .SetParent<QueueDisc>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<HostQueueDisc>();
    return tid;
}

HostQueueDisc::HostQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
{
}

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
    if (!GetInternalQueue(0)->Enqueue(item))
        return false;
    m_ready.push_back(Simulator::Now() + NanoSeconds(m_procDelay ? m_procDelay() : 0));
    return true;
}

Ptr<const QueueDiscItem>
HostQueueDisc::DoPeek()
{
    Ptr<const QueueDiscItem> item = GetInternalQueue(0)->Peek();
    if (item && m_ready.front() > Simulator::Now())
        return nullptr;
    return item;
}

void
HostQueueDisc::Wake()
{
    Run();
}

Ptr<QueueDiscItem>
HostQueueDisc::DoDequeue()
{
    Ptr<const QueueDiscItem> head = GetInternalQueue(0)->Peek();
    if (!head)
        return nullptr;
    Time ready = m_ready.front();
    if (ready > Simulator::Now())
    {
        // still being processed: come back when the head is ready
        if (!m_wake.IsRunning())
            m_wake = Simulator::Schedule(ready - Simulator::Now(), &HostQueueDisc::Wake, this);
        return nullptr;
    }
    Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
    m_ready.pop_front();
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

bool
HostQueueDisc::CheckConfig()
{
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
        return false;
    if (GetNInternalQueues() == 0)
    {
        // the limit is enforced in DoEnqueue, with a reason
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize", QueueSizeValue(QueueSize("1000000p"))));
    }
    return GetNInternalQueues() == 1;
}

void
HostQueueDisc::InitializeParams()
{
}

void
HostQueueDisc::DoDispose()
{
    m_wake.Cancel();
    m_ready.clear();
    m_procDelay = nullptr;
    m_flows = nullptr;
    QueueDisc::DoDispose();
}

} // namespace ns3
