/* qreplay ns-3 module: a FIFO queue disc whose packets each carry a release time: the head leaves
 * no earlier than its release time (and never before the packet ahead of it); when it is not yet
 * due, the queue disc wakes itself up then. The base of the host NIC queue (processing delay) and
 * of the packet corrector (recorded arrival times). Subclasses decide admission and release time in
 * DoEnqueue (calling EnqueueUntil) and may rewrite a packet as it leaves (Leave). */
#ifndef QREPLAY_NS3_TIMED_FIFO_QUEUE_DISC_H
#define QREPLAY_NS3_TIMED_FIFO_QUEUE_DISC_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/queue-disc.h"

#include <deque>

namespace ns3
{

/* The configuration both of the module's queue discs take: no classes, no filters, and one
 * internal FIFO that never refuses (admission is theirs), added here if missing. True if qd is
 * configured so. */
bool ConfigureUnboundedFifo(QueueDisc& qd);

class TimedFifoQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    TimedFifoQueueDisc();
    ~TimedFifoQueueDisc() override;

  protected:
    /* Queue item to leave at `release` (or right after the packet ahead). False if refused. */
    bool EnqueueUntil(Ptr<QueueDiscItem> item, Time release);
    /* Queue item to leave once Opened(key) (and not before the packet ahead). */
    bool EnqueueHeld(Ptr<QueueDiscItem> item, uint64_t key);
    /* Whether a packet held with key may leave now (default: yes). */
    virtual bool Opened(uint64_t key) const;
    /* Something a held packet waits for happened: try the head again (at once, as an event). */
    void Poke();
    /* The packet leaving now; returns what goes to the device (default: the same). */
    virtual Ptr<QueueDiscItem> Leave(Ptr<QueueDiscItem> item);
    /* Extra configuration check of a subclass. */
    virtual bool SetupComplete() const;
    void DoDispose() override;

  private:
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void Wake();

    std::deque<Time> m_release;  // per queued packet, in queue order
    std::deque<uint64_t> m_held; // per queued packet: its key if held (EnqueueHeld), else 0
    EventId m_wake;
};

} // namespace ns3

#endif
