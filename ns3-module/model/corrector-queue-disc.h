/* qreplay ns-3 module: the packet corrector of an isolated per-connection replay. It sits on the
 * ports of a switch between the connection's two hosts and applies what the runtime recorded for
 * each packet of the connection, by its direction and number: a packet the runtime lost is dropped
 * (reason "recorded-loss"); any other is held and sent so that its last bit reaches the next host
 * when it reached it in the runtime (or at once, if it came too late for that: counted), or at
 * once where the record keeps no receive time, held (a gate: a timer that fired before it in the
 * runtime) until the next host has sent as many packets as the record says. Packets the
 * recording does not know (the replay diverged) are forwarded at once and counted. */
#ifndef QREPLAY_NS3_CORRECTOR_QUEUE_DISC_H
#define QREPLAY_NS3_CORRECTOR_QUEUE_DISC_H

#include "timed-fifo-queue-disc.h"

#include "ns3/data-rate.h"

#include <functional>

namespace ns3
{

class CorrectorQueueDisc : public TimedFifoQueueDisc
{
  public:
    static constexpr const char* RECORDED_LOSS_DROP = "recorded-loss";

    /* The runtime's fate of packet seq of direction dir: false if unknown; else lost, or the time
     * its last bit reached the destination host (QR_ARRIVE_AT_ONCE: at once), whether it arrived
     * marked ECN CE, and hold: 0, or the packets the destination host must have sent before it
     * leaves. */
    using Fate = std::function<
        bool(uint32_t dir, uint32_t seq, bool& lost, int64_t& arrive_ns, bool& ce, uint32_t& hold)>;
    /* How many packets the destination host has sent (for held packets). */
    using Sent = std::function<uint64_t()>;

    static TypeId GetTypeId();
    CorrectorQueueDisc();
    ~CorrectorQueueDisc() override;

    /* fate, and the outgoing link (rate, delay) that separates sending from arrival; sent: the
     * destination host's count (needed only by a fate that holds). */
    void Setup(Fate fate, DataRate rate, Time delay, Sent sent = nullptr);

    /* The destination host sent a packet: a held packet may go. */
    void HostSent() { Poke(); }

    uint64_t GetUnknown() const { return m_unknown; }

    uint64_t GetLate() const { return m_late; }

    // packets the recording says arrived marked CE that were not ECN-capable here
    uint64_t GetUnmarkable() const { return m_unmarkable; }

    int64_t GetMaxLateNs() const { return m_maxLate; }

    uint64_t GetDropped() const { return m_dropped; }

  protected:
    void DoDispose() override;
    bool SetupComplete() const override;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    bool Opened(uint64_t key) const override;

    Fate m_fate;
    Sent m_sent;
    DataRate m_rate;
    Time m_delay;
    uint64_t m_unknown{0}, m_late{0}, m_dropped{0};
    uint64_t m_unmarkable{0}; // packets to mark CE that were not ECN-capable
    int64_t m_maxLate{0};
};

} // namespace ns3

#endif
