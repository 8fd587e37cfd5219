#include "timed-fifo-queue-disc.h"

#include "ns3/drop-tail-queue.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TimedFifoQueueDisc);

TypeId
TimedFifoQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TimedFifoQueueDisc").SetParent<QueueDisc>().SetGroupName("Qreplay");
    return tid;
}

TimedFifoQueueDisc::TimedFifoQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
{
}

TimedFifoQueueDisc::~TimedFifoQueueDisc() = default;

bool
TimedFifoQueueDisc::EnqueueUntil(Ptr<QueueDiscItem> item, Time release)
{
    if (!m_release.empty() && release < m_release.back())
        release = m_release.back(); // FIFO: never before the packet ahead
    if (!GetInternalQueue(0)->Enqueue(item))
        return false;
    m_release.push_back(release);
    m_held.push_back(0);
    return true;
}

bool
TimedFifoQueueDisc::EnqueueHeld(Ptr<QueueDiscItem> item, uint64_t key)
{
    if (!EnqueueUntil(item, Simulator::Now()))
        return false;
    m_held.back() = key;
    return true;
}

bool
TimedFifoQueueDisc::Opened(uint64_t) const
{
    return true;
}

void
TimedFifoQueueDisc::Poke()
{
    if (!m_held.empty() && m_held.front())
        Simulator::ScheduleNow(&TimedFifoQueueDisc::Wake, this);
}

Ptr<QueueDiscItem>
TimedFifoQueueDisc::Leave(Ptr<QueueDiscItem> item)
{
    return item;
}

bool
TimedFifoQueueDisc::SetupComplete() const
{
    return true;
}

Ptr<const QueueDiscItem>
TimedFifoQueueDisc::DoPeek()
{
    Ptr<const QueueDiscItem> item = GetInternalQueue(0)->Peek();
    if (item &&
        (m_release.front() > Simulator::Now() || (m_held.front() && !Opened(m_held.front()))))
        return nullptr;
    return item;
}

void
TimedFifoQueueDisc::Wake()
{
    Run();
}

Ptr<QueueDiscItem>
TimedFifoQueueDisc::DoDequeue()
{
    if (!GetInternalQueue(0)->Peek())
        return nullptr;
    if (m_held.front() && !Opened(m_held.front()))
        return nullptr; // Poke brings it back
    Time ready = m_release.front();
    if (ready > Simulator::Now())
    {
        // not due yet: come back when the head is
        if (!m_wake.IsRunning())
            m_wake = Simulator::Schedule(ready - Simulator::Now(), &TimedFifoQueueDisc::Wake, this);
        return nullptr;
    }
    m_release.pop_front();
    m_held.pop_front();
    return Leave(GetInternalQueue(0)->Dequeue());
}

bool
TimedFifoQueueDisc::CheckConfig()
{
    return SetupComplete() && ConfigureUnboundedFifo(*this);
}

bool
ConfigureUnboundedFifo(QueueDisc& qd)
{
    if (qd.GetNQueueDiscClasses() > 0 || qd.GetNPacketFilters() > 0)
        return false;
    if (qd.GetNInternalQueues() == 0)
    {
        qd.AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize",
            QueueSizeValue(QueueSize("1000000p"))));
    }
    return qd.GetNInternalQueues() == 1;
}

void
TimedFifoQueueDisc::InitializeParams()
{
}

void
TimedFifoQueueDisc::DoDispose()
{
    m_wake.Cancel();
    m_release.clear();
    m_held.clear();
    QueueDisc::DoDispose();
}

} // namespace ns3
