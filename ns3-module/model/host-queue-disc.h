/* qreplay ns-3 module: a host's NIC queue. An ordinary FIFO of `limit` packets (a full queue drops,
 * reason "host-queue-full"), with an optional per-packet processing delay before a packet may leave
 * (the host's packet processing, modelled before its NIC; the delay may differ per packet). As a packet leaves for the NIC it is
 * numbered: its IP ID becomes the next number of its flow direction (consecutive, wrapping at
 * 16 bits) and it gets a QreplayTag with its direction and id (direction << 32 | sequence number).
 * Numbering at dequeue means only packets that reach the wire are numbered, so a gap in the IP IDs
 * a receiver sees is a drop in the network. Packets of no known flow pass unchanged and are
 * counted. */
#ifndef QREPLAY_HOST_QUEUE_DISC_H
#define QREPLAY_HOST_QUEUE_DISC_H

#include "flow-table.h"

#include "timed-fifo-queue-disc.h"

#include <functional>
#include <unordered_map>

namespace ns3
{

class HostQueueDisc : public TimedFifoQueueDisc
{
  public:
    static TypeId GetTypeId();
    HostQueueDisc();
    ~HostQueueDisc() override;

    /* The flows (borrowed; must outlive the queue disc), the FIFO's limit in packets, and the
     * processing delay of each packet in ns (called once per packet as it arrives; empty: none).
     * Packets leave in FIFO order, each no earlier than its arrival plus its delay. */
    void Setup(const FlowTable* flows, uint32_t limitPackets, std::function<int64_t()> procDelay);

    uint64_t GetUnknownPackets() const { return m_unknown; }

  protected:
    void DoDispose() override;

    Ptr<QueueDiscItem> Leave(Ptr<QueueDiscItem> item) override;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;

    const FlowTable* m_flows{nullptr};
    uint32_t m_limit{1000};
    std::function<int64_t()> m_procDelay;
    std::unordered_map<uint32_t, uint64_t> m_next; // direction -> next sequence number
    uint64_t m_unknown{0};
};

} // namespace ns3

#endif
