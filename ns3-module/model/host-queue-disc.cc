#include "host-queue-disc.h"

#include "five-tuple.h"
#include "qreplay-tag.h"

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("HostQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(HostQueueDisc);

TypeId
HostQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::HostQueueDisc")
            .SetParent<TimedFifoQueueDisc>()
            .SetGroupName("Qreplay")
            .AddConstructor<HostQueueDisc>()
            .AddAttribute("Limit",
                          "Packets the NIC queue holds before it drops (packets)",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&HostQueueDisc::m_limit),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ProcessingDelay",
                          "Mean per-packet processing delay before the NIC (time)",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&HostQueueDisc::m_procDelay),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("ProcessingJitter",
                          "Standard deviation of the processing delay (time; normal, truncated "
                          "at 0, whole ns)",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&HostQueueDisc::m_procJitter),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("Seed",
                          "Master seed of the processing-delay random stream",
                          UintegerValue(1),
                          MakeUintegerAccessor(&HostQueueDisc::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("HostId",
                          "The host's number, part of its random stream",
                          UintegerValue(0),
                          MakeUintegerAccessor(&HostQueueDisc::m_host),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Stream",
                          "Random stream number (distinct closed-loop replays use distinct ones)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&HostQueueDisc::m_stream),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

HostQueueDisc::HostQueueDisc() = default;

HostQueueDisc::~HostQueueDisc()
{
    qr_proc_delay_destroy(m_delay);
    qr_dir_numbers_destroy(m_numbers);
}

void
HostQueueDisc::SetFlows(const FlowTable* flows)
{
    m_flows = flows;
    qr_dir_numbers_destroy(m_numbers);
    m_numbers = nullptr;
    if (flows && qr_dir_numbers_create(&m_numbers, flows->Directions()) != 0)
        throw std::bad_alloc();
}

void
HostQueueDisc::DoInitialize()
{
    qr_proc_delay_destroy(m_delay);
    m_delay = nullptr;
    if (qr_proc_delay_create(&m_delay,
                             m_seed,
                             m_host,
                             m_stream,
                             m_procDelay.GetNanoSeconds(),
                             m_procJitter.GetNanoSeconds()) != 0)
        throw std::invalid_argument("HostQueueDisc: ProcessingDelay and ProcessingJitter must not "
                                    "be negative");
    TimedFifoQueueDisc::DoInitialize();
}

bool
HostQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    if (GetInternalQueue(0)->GetNPackets() >= m_limit)
    {
        DropBeforeEnqueue(item, HOST_QUEUE_FULL_DROP);
        return false;
    }
    return EnqueueUntil(item, Simulator::Now() + NanoSeconds(qr_proc_delay_next(m_delay)));
}

Ptr<QueueDiscItem>
HostQueueDisc::Leave(Ptr<QueueDiscItem> item)
{
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    uint32_t dir;
    if (ProbeTag::IsTrace(item->GetPacket()))
        return item; // 007's probes keep their own IP ID (the TTL) and take no flow's numbers
    if (!ip || !m_flows || !m_flows->Resolve(FiveTupleOf(ip->GetHeader(), ip->GetPacket()), dir))
    {
        m_unknown++;
        return item;
    }
    uint64_t seq;
    uint16_t ipId;
    if (qr_dir_numbers_next(m_numbers, dir, &seq, &ipId) != 0)
    {
        m_unknown++;
        return item;
    }
    Ipv4Header h = ip->GetHeader();
    h.SetIdentification(ipId);
    if (qr_debug_dir(m_debugEvery, dir + 2 * m_debugFirstFlow))
        h.SetTos(static_cast<uint8_t>(QR_DEBUG_TOS | (h.GetTos() & 3)));
    Ptr<Packet> p = ip->GetPacket();
    QreplayTag tag;
    p->RemovePacketTag(tag);
    tag.Set(dir, seq);
    tag.dropTag = 0;
    p->AddPacketTag(tag);
    Ptr<Ipv4QueueDiscItem> out =
        Create<Ipv4QueueDiscItem>(p, ip->GetAddress(), ip->GetProtocol(), h);
    out->SetTimeStamp(item->GetTimeStamp());
    return out;
}

void
HostQueueDisc::SetDebugEvery(int every, uint32_t firstFlow)
{
    m_debugEvery = every;
    m_debugFirstFlow = firstFlow;
}

void
HostQueueDisc::DoDispose()
{
    m_flows = nullptr;
    qr_proc_delay_destroy(m_delay);
    m_delay = nullptr;
    qr_dir_numbers_destroy(m_numbers);
    m_numbers = nullptr;
    TimedFifoQueueDisc::DoDispose();
}

} // namespace ns3
