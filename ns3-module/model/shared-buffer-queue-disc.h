/* qreplay ns-3 module: a switch's shared buffer and the queue disc of each of its egress ports.
 *
 * SharedBuffer owns the core's qr_buffer (buffer.h: B, alpha, bytes per port, the dynamic
 * threshold) and the drop decision mode. Its parameters are attributes: Size (bytes), Alpha,
 * Ports, SwitchId, Mode (plain = the runtime's admission, tagged = the replay's drop-tag rule),
 * Margin (bytes, tagged mode) and EcnThreshold (bytes; 0 = no marking). The core handle is
 * created in DoInitialize and released in DoDispose.
 *
 * SharedBufferQueueDisc asks it, for every arriving packet, the core's decision
 * (qr_buffer_admit): admitted packets wait in a FIFO; dropped ones leave through DropBeforeEnqueue
 * with a named reason that maps one to one onto the core's decision (THRESHOLD_DROP = "threshold",
 * BUFFER_FULL_DROP = "buffer-full", TAGGED_DROP = "tagged", FAULT_DROP = "fault": a planted fault
 * of the core's qr_faults, asked first when SharedBuffer::SetFaults gave one). Bytes stay counted
 * until the packet's last bit leaves the port's device (PhyTxEnd), so occupancy covers the queue
 * disc and the device. Every arrival is reported through the trace source "Arrival" with the
 * queue's contents per flow before the packet joined (qr_arrival); every departure through
 * "Departure". ns-3's own QueueDisc traces (Enqueue, Dequeue, Drop with its reason, Mark) work as
 * usual. With an ECN threshold, admitted packets joining a longer queue are marked CE (reason
 * ECN_MARK = "ecn"). */
#ifndef QREPLAY_NS3_SHARED_BUFFER_QUEUE_DISC_H
#define QREPLAY_NS3_SHARED_BUFFER_QUEUE_DISC_H

#include "ns3/net-device.h"
#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <deque>

extern "C"
{
#include "qreplay/buffer.h"
#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "qreplay/queuelog.h"
#include "qreplay/switchport.h"
#include "qreplay/units.h"
}

namespace ns3
{

class SharedBuffer : public Object
{
  public:
    static TypeId GetTypeId();
    SharedBuffer();
    ~SharedBuffer() override;

    /* The core state (initializes the object on first use). Throws std::invalid_argument if
     * Size, Alpha or Ports is not positive. */
    qr_buffer* Get();
    uint32_t GetSwitchId() const;
    qr_drop_mode GetMode() const;
    uint64_t GetMarginBytes() const;
    uint64_t GetEcnThresholdBytes() const;
    /* Planted faults every port of this switch asks before admission: per-packet drop rules and
     * link faults (both borrowed; NULL: none). */
    void SetFaults(qr_faults* faults, qr_link_faults* linkFaults = nullptr);
    qr_faults* GetFaults() const;
    qr_link_faults* GetLinkFaults() const;

  protected:
    void DoInitialize() override;
    void DoDispose() override;

  private:
    qr_buffer* m_buffer{nullptr};
    uint64_t m_sizeBytes{2000000};
    double m_alpha{1.0};
    uint32_t m_ports{1};
    qr_buffer_policy m_policy{QR_BUFFER_DYNAMIC};
    uint64_t m_portBytes{0};
    uint32_t m_switch{0};
    qr_drop_mode m_mode{QR_MODE_PLAIN};
    uint64_t m_marginBytes{5 * QR_MTU_BYTES};
    uint64_t m_ecnThresholdBytes{0};
    qr_faults* m_faults{nullptr};
    qr_link_faults* m_linkFaults{nullptr};
};

class SharedBufferQueueDisc : public QueueDisc
{
  public:
    /* Drop reasons, one per core decision (qr_decision_name), and the ECN mark's reason. */
    static constexpr const char* THRESHOLD_DROP = "threshold";
    static constexpr const char* BUFFER_FULL_DROP = "buffer-full";
    static constexpr const char* TAGGED_DROP = "tagged";
    static constexpr const char* FAULT_DROP = "fault";
    static constexpr const char* ECN_MARK = "ecn";
    /* The reason for a core decision (nullptr for QR_ADMIT). */
    static const char* DropReason(qr_decision d);

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
        uint64_t packet; // QreplayTag id (qr_packet_id), 0 if untagged
        uint32_t flow;
        uint32_t bytes;
        uint64_t queue_bytes, total_bytes;
        int64_t threshold;
    };

    typedef void (*DepartureCallback)(const Departure& departure);

  protected:
    void DoInitialize() override;
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
