/* qreplay ns-3 module: a host's NIC queue. An ordinary FIFO of Limit packets (a full queue drops,
 * reason HOST_QUEUE_FULL_DROP = "host-queue-full"), with a per-packet processing delay before a
 * packet may leave (the host's packet processing, modelled before its NIC): each packet's delay is
 * drawn by the core's qr_proc_delay (clock.h) with mean ProcessingDelay and standard deviation
 * ProcessingJitter, from the random stream (Seed, HostId, Stream); the core handle is created in
 * DoInitialize and released in DoDispose. As a packet leaves for the NIC it is numbered: its IP ID
 * becomes the next number of its flow direction (consecutive, wrapping at 16 bits) and it gets a
 * QreplayTag with its direction and id (qr_packet_id). Numbering at dequeue means only packets that
 * reach the wire are numbered, so a gap in the IP IDs a receiver sees is a drop in the network.
 * Packets of no known flow pass unchanged and are counted. */
#ifndef QREPLAY_NS3_HOST_QUEUE_DISC_H
#define QREPLAY_NS3_HOST_QUEUE_DISC_H

#include "flow-table.h"
#include "timed-fifo-queue-disc.h"

#include "ns3/nstime.h"

#include <new>

extern "C"
{
#include "qreplay/clock.h"
#include "qreplay/guided_plan.h"
}

namespace ns3
{

class HostQueueDisc : public TimedFifoQueueDisc
{
  public:
    static constexpr const char* HOST_QUEUE_FULL_DROP = "host-queue-full";

    static TypeId GetTypeId();
    HostQueueDisc();
    ~HostQueueDisc() override;

    /* The flows whose packets are numbered (borrowed; must outlive the queue disc). */
    void SetFlows(const FlowTable* flows);
    /* Everflow's debug bit ([everflow] debug_every): the directions the core names
     * (guided_plan.h qr_debug_dir) leave with DSCP QR_DEBUG_DSCP, their ECN bits kept. A replay
     * of one flow whose flow table numbers it 0 gives the flow's own number as firstFlow. */
    void SetDebugEvery(int every, uint32_t firstFlow = 0);

    uint64_t GetUnknownPackets() const { return m_unknown; }

  protected:
    void DoInitialize() override;
    void DoDispose() override;
    Ptr<QueueDiscItem> Leave(Ptr<QueueDiscItem> item) override;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;

    const FlowTable* m_flows{nullptr};
    int m_debugEvery{0};
    uint32_t m_debugFirstFlow{0};
    uint32_t m_limit{1000};
    Time m_procDelay;
    Time m_procJitter;
    uint64_t m_seed{1}, m_host{0}, m_stream{0};
    qr_proc_delay* m_delay{nullptr};
    qr_dir_numbers* m_numbers{nullptr}; // the core's per-direction numbering
    uint64_t m_unknown{0};
};

} // namespace ns3

#endif
