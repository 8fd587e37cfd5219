#include "corrector-queue-disc.h"

#include "qreplay-tag.h"

#include "qreplay/topology.h"

#include "ns3/packet.h"
#include "ns3/queue.h"

#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CorrectorQueueDisc);

TypeId
CorrectorQueueDisc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CorrectorQueueDisc")
                            .SetParent<TimedFifoQueueDisc>()
                            .SetGroupName("Qreplay")
                            .AddConstructor<CorrectorQueueDisc>();
    return tid;
}

CorrectorQueueDisc::CorrectorQueueDisc() = default;

CorrectorQueueDisc::~CorrectorQueueDisc() = default;

void
CorrectorQueueDisc::Setup(Fate fate, DataRate rate, Time delay, Sent sent)
{
    m_fate = std::move(fate);
    m_sent = std::move(sent);
    m_rate = rate;
    m_delay = delay;
}

bool
CorrectorQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    QreplayTag tag;
    bool lost = false, ce = false;
    int64_t arrive = 0;
    uint32_t hold = 0;
    Time now = Simulator::Now();
    Time release = now;
    if (!item->GetPacket()->PeekPacketTag(tag) ||
        !m_fate(tag.flow, tag.Seq(), lost, arrive, ce, hold))
    {
        m_unknown++;
    }
    else if (lost)
    {
        m_dropped++;
        DropBeforeEnqueue(item, RECORDED_LOSS_DROP);
        return false;
    }
    else
    {
        int64_t late;
        release = NanoSeconds(qr_link_release_ns(arrive,
                                                 item->GetSize(),
                                                 m_rate.GetBitRate(),
                                                 m_delay.GetNanoSeconds(),
                                                 now.GetNanoSeconds(),
                                                 &late));
        if (late > 0)
        {
            m_late++;
            m_maxLate = std::max(m_maxLate, late);
        }
        if (ce && !item->Mark()) // the runtime's switch marked it: so does the corrector
            m_unmarkable++;
        if (hold && m_sent)
            return EnqueueHeld(item, hold);
    }
    return EnqueueUntil(item, release);
}

bool
CorrectorQueueDisc::Opened(uint64_t key) const
{
    return m_sent() >= key;
}

bool
CorrectorQueueDisc::SetupComplete() const
{
    return static_cast<bool>(m_fate);
}

void
CorrectorQueueDisc::DoDispose()
{
    m_fate = nullptr;
    TimedFifoQueueDisc::DoDispose();
}

} // namespace ns3
