/* qreplay ns-3 module: a switch's shared buffer and the queue disc of each of its egress ports.
 *
 * SharedBuffer owns the core's qr_buffer (B, alpha, bytes per port) and the replay decision mode.
 * SharedBufferQueueDisc asks it, for every arriving packet, the core's decision (qr_buffer_admit):
 * admitted packets wait in a FIFO; dropped ones leave through DropBeforeEnqueue with the decision's
 * name as reason ("threshold", "buffer-full", "tagged"). Bytes stay counted until the packet's last
 * bit leaves the port's device (PhyTxEnd), so occupancy covers the queue disc and the device. Every
 * arrival is reported through the trace source "Arrival" with the queue's contents per flow before
 * the packet joined (qr_arrival); every departure through "Departure". ns-3's own QueueDisc
 * traces (Enqueue, Dequeue, Drop with its reason) work as usual. With an ECN threshold set, admitted
 * packets joining a longer queue are marked CE (reason "ecn"). */
#ifndef QREPLAY_SHARED_BUFFER_QUEUE_DISC_H
#define QREPLAY_SHARED_BUFFER_QUEUE_DISC_H

#include "ns3/net-device.h"
#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <deque>

extern "C" {
#include "qreplay/buffer.h"
#include "qreplay/queuelog.h"
}

namespace ns3
{

class SharedBuffer : public Object
{
  public:
    static TypeId GetTypeId();
    SharedBuffer();
    ~SharedBuffer() override;

    /* (Re)create the core state: sizeBytes shared by `ports` queues. Throws std::invalid_argument. */
    void Setup(uint32_t switchId, uint64_t sizeBytes, double alpha, uint32_t ports);
    qr_buffer* Get() const;
    uint32_t GetSwitchId() const;

    qr_drop_mode m_mode{QR_MODE_PLAIN}; // plain is the runtime's rule
    uint64_t m_marginBytes{5 * 1500};
    uint64_t m_ecnThresholdBytes{0}; // mark CE on admitted packets joining a longer queue; 0: off

  private:
    qr_buffer* m_buffer{nullptr};
    uint32_t m_switch{0};
};

class SharedBufferQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    SharedBufferQueueDisc();
    ~SharedBufferQueueDisc() override;

    /* Attach to port `port` of `buffer`; bytes are released when `device` finishes sending. */
    void Attach(Ptr<SharedBuffer> buffer, uint32_t port, Ptr<NetDevice> device);

    /* Bytes of this port counted in the shared buffer (queue disc + device). */
    uint64_t GetHeldBytes() const;

    typedef void (*ArrivalCallback)(const qr_arrival& arrival);

    /* A packet's last bit left the port: the buffer state after its bytes were released. */
    struct Departure
    {
        int64_t time_ns;
        uint32_t sw, port;
        uint64_t packet; // QreplayTag id (flow direction << 32 | sequence), 0 if untagged
        uint32_t flow;
        uint32_t bytes;
        uint64_t queue_bytes, total_bytes;
        int64_t threshold;
    };
    typedef void (*DepartureCallback)(const Departure& departure);

  protected:
    void DoDispose() override;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void TxEnd(Ptr<const Packet> p);

    Ptr<SharedBuffer> m_buffer;
    uint32_t m_port{0};
    qr_queue_flows* m_flows{nullptr};
    struct Held
    {
        uint64_t packet;
        uint32_t flow;
        uint32_t bytes;
    };
    std::deque<Held> m_held; // admitted, in sending order, until their last bit leaves
    TracedCallback<const qr_arrival&> m_arrivalTrace;
    TracedCallback<const Departure&> m_departureTrace;
};

} // namespace ns3

#endif
