#include "corrector-queue-disc.h"

#include "qreplay-tag.h"

#include "ns3/drop-tail-queue.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CorrectorQueueDisc);

TypeId
CorrectorQueueDisc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CorrectorQueueDisc")
                            .SetParent<QueueDisc>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<CorrectorQueueDisc>();
    return tid;
}

CorrectorQueueDisc::CorrectorQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
{
}

CorrectorQueueDisc::~CorrectorQueueDisc() = default;

void
CorrectorQueueDisc::Setup(Fate fate, DataRate rate, Time delay)
{
    m_fate = std::move(fate);
    m_rate = rate;
    m_delay = delay;
}

bool
CorrectorQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    QreplayTag tag;
    bool lost = false;
    int64_t arrive = 0;
    Time now = Simulator::Now();
    Time release = now;
    if (!item->GetPacket()->PeekPacketTag(tag) ||
        !m_fate(tag.flow, static_cast<uint32_t>(tag.packet & 0xffffffffu), lost, arrive))
    {
        m_unknown++;
    }
    else if (lost)
    {
        m_dropped++;
        DropBeforeEnqueue(item, "recorded-loss");
        return false;
    }
    else
    {
        // the last bit arrives after the transmission (IP packet + 2 B of PPP) and the propagation
        Time tx = m_rate.CalculateBytesTxTime(item->GetSize() + 2);
        release = NanoSeconds(arrive) - tx - m_delay;
        if (release < now)
        {
            m_late++;
            m_maxLate = std::max(m_maxLate, (now - release).GetNanoSeconds());
            release = now;
        }
    }
    if (!m_release.empty() && release < m_release.back())
        release = m_release.back(); // FIFO: never before the packet ahead
    if (!GetInternalQueue(0)->Enqueue(item))
        return false;
    m_release.push_back(release);
    return true;
}

Ptr<const QueueDiscItem>
CorrectorQueueDisc::DoPeek()
{
    Ptr<const QueueDiscItem> item = GetInternalQueue(0)->Peek();
    if (item && m_release.front() > Simulator::Now())
        return nullptr;
    return item;
}

void
CorrectorQueueDisc::Wake()
{
    Run();
}

Ptr<QueueDiscItem>
CorrectorQueueDisc::DoDequeue()
{
    if (!GetInternalQueue(0)->Peek())
        return nullptr;
    Time ready = m_release.front();
    if (ready > Simulator::Now())
    {
        if (!m_wake.IsRunning())
            m_wake = Simulator::Schedule(ready - Simulator::Now(), &CorrectorQueueDisc::Wake, this);
        return nullptr;
    }
    m_release.pop_front();
    return GetInternalQueue(0)->Dequeue();
}

bool
CorrectorQueueDisc::CheckConfig()
{
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0 || !m_fate)
        return false;
    if (GetNInternalQueues() == 0)
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize", QueueSizeValue(QueueSize("1000000p"))));
    return GetNInternalQueues() == 1;
}

void
CorrectorQueueDisc::InitializeParams()
{
}

void
CorrectorQueueDisc::DoDispose()
{
    m_wake.Cancel();
    m_release.clear();
    m_fate = nullptr;
    QueueDisc::DoDispose();
}

} // namespace ns3
