#include "shared-buffer-queue-disc.h"

#include "five-tuple.h"
#include "qreplay-tag.h"
#include "timed-fifo-queue-disc.h"

#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/enum.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SharedBufferQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(SharedBuffer);
NS_OBJECT_ENSURE_REGISTERED(SharedBufferQueueDisc);

TypeId
SharedBuffer::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SharedBuffer")
            .SetParent<Object>()
            .SetGroupName("Qreplay")
            .AddConstructor<SharedBuffer>()
            .AddAttribute("Size",
                          "The buffer shared by the switch's egress queues (bytes)",
                          UintegerValue(2000000),
                          MakeUintegerAccessor(&SharedBuffer::m_sizeBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("Alpha",
                          "Dynamic-threshold alpha: every queue's threshold is Alpha times the "
                          "free buffer (dimensionless, > 0)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&SharedBuffer::m_alpha),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("Ports",
                          "Egress queues sharing the buffer (count)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&SharedBuffer::m_ports),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Policy",
                          "Dynamic: thresholds Alpha times the free shared buffer; Static: each "
                          "port limited to PortSize bytes of its own (the core's rule)",
                          EnumValue(QR_BUFFER_DYNAMIC),
                          MakeEnumAccessor(&SharedBuffer::m_policy),
                          MakeEnumChecker(QR_BUFFER_DYNAMIC, "Dynamic", QR_BUFFER_STATIC, "Static"))
            .AddAttribute("PortSize",
                          "Static policy: each port's limit (bytes; 0: Size / Ports)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&SharedBuffer::m_portBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("SwitchId",
                          "The switch's number in the topology, reported in arrivals and drops",
                          UintegerValue(0),
                          MakeUintegerAccessor(&SharedBuffer::m_switch),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Mode",
                          "Drop decision: Plain (the runtime's admission rule) or Tagged (the "
                          "replay's: untagged packets are always admitted, a tagged one is "
                          "dropped when its queue is within Margin of its threshold)",
                          EnumValue(QR_MODE_PLAIN),
                          MakeEnumAccessor(&SharedBuffer::m_mode),
                          MakeEnumChecker(QR_MODE_PLAIN, "Plain", QR_MODE_TAGGED, "Tagged"))
            .AddAttribute("Margin",
                          "Occupancy margin of the tagged drop decision (bytes)",
                          UintegerValue(5 * QR_MTU_BYTES),
                          MakeUintegerAccessor(&SharedBuffer::m_marginBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnThreshold",
                          "Mark CE on admitted packets joining a queue longer than this (bytes; "
                          "0: no marking)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&SharedBuffer::m_ecnThresholdBytes),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

SharedBuffer::SharedBuffer() = default;

SharedBuffer::~SharedBuffer()
{
    qr_buffer_destroy(m_buffer);
}

void
SharedBuffer::DoInitialize()
{
    qr_buffer_destroy(m_buffer);
    m_buffer = nullptr;
    qr_buffer_cfg cfg{m_sizeBytes, m_alpha, m_ports, m_policy, m_portBytes};
    if (qr_buffer_create(&m_buffer, &cfg) != 0)
        throw std::invalid_argument(
            "SharedBuffer: Size, Alpha and Ports must be positive (and a static port limit)");
    Object::DoInitialize();
}

void
SharedBuffer::DoDispose()
{
    qr_buffer_destroy(m_buffer);
    m_buffer = nullptr;
    Object::DoDispose();
}

qr_buffer*
SharedBuffer::Get()
{
    if (!IsInitialized())
        Initialize();
    return m_buffer;
}

uint32_t
SharedBuffer::GetSwitchId() const
{
    return m_switch;
}

qr_drop_mode
SharedBuffer::GetMode() const
{
    return m_mode;
}

uint64_t
SharedBuffer::GetMarginBytes() const
{
    return m_marginBytes;
}

uint64_t
SharedBuffer::GetEcnThresholdBytes() const
{
    return m_ecnThresholdBytes;
}

void
SharedBuffer::SetFaults(qr_faults* faults, qr_link_faults* linkFaults)
{
    m_faults = faults;
    m_linkFaults = linkFaults;
}

qr_link_faults*
SharedBuffer::GetLinkFaults() const
{
    return m_linkFaults;
}

qr_faults*
SharedBuffer::GetFaults() const
{
    return m_faults;
}

const char*
SharedBufferQueueDisc::DropReason(qr_decision d)
{
    switch (d)
    {
    case QR_DROP_THRESHOLD:
        return THRESHOLD_DROP;
    case QR_DROP_BUFFER_FULL:
        return BUFFER_FULL_DROP;
    case QR_DROP_TAGGED:
        return TAGGED_DROP;
    case QR_DROP_FAULT:
        return FAULT_DROP;
    case QR_ADMIT:
        break;
    }
    return nullptr;
}

TypeId
SharedBufferQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SharedBufferQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("Qreplay")
            .AddConstructor<SharedBufferQueueDisc>()
            .AddTraceSource(
                "Arrival",
                "Every packet arriving at this port: time (ns), switch, port, packet id, "
                "size (bytes), decision, queue and switch bytes before it joined, "
                "threshold (bytes), and the queue's bytes per flow",
                MakeTraceSourceAccessor(&SharedBufferQueueDisc::m_arrivalTrace),
                "ns3::SharedBufferQueueDisc::ArrivalCallback")
            .AddTraceSource("Departure",
                            "Every packet whose last bit left this port: time (ns), switch, port, "
                            "packet id, flow, size (bytes), queue and switch bytes after it left, "
                            "threshold (bytes)",
                            MakeTraceSourceAccessor(&SharedBufferQueueDisc::m_departureTrace),
                            "ns3::SharedBufferQueueDisc::DepartureCallback");
    return tid;
}

SharedBufferQueueDisc::SharedBufferQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
{
}

SharedBufferQueueDisc::~SharedBufferQueueDisc()
{
    qr_queue_flows_destroy(m_flows);
}

void
SharedBufferQueueDisc::Attach(Ptr<SharedBuffer> buffer, uint32_t port, Ptr<NetDevice> device)
{
    m_buffer = buffer;
    m_port = port;
    device->TraceConnectWithoutContext("PhyTxEnd",
                                       MakeCallback(&SharedBufferQueueDisc::TxEnd, this));
}

uint64_t
SharedBufferQueueDisc::GetHeldBytes() const
{
    return qr_buffer_queue(m_buffer->Get(), m_port);
}

bool
SharedBufferQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    qr_buffer* b = m_buffer->Get();
    QreplayTag tag;
    bool hasTag = item->GetPacket()->PeekPacketTag(tag);
    qr_port_packet pk{};
    pk.bytes = item->GetSize();
    pk.has_dir = hasTag;
    pk.dir = hasTag ? tag.flow : 0;
    pk.tagged = hasTag ? tag.dropTag : 0;
    pk.has_tcp = hasTag && TcpFlagsAndPayload(item->GetPacket(), pk.tcp_flags, pk.payload_bytes);
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    if (ip)
    {
        pk.has_tuple = 1;
        pk.ft = FiveTupleOf(ip->GetHeader(), item->GetPacket());
    }
    qr_arrival a{};
    ProbeTag probe;
    a.packet = hasTag                                    ? tag.packet
               : item->GetPacket()->PeekPacketTag(probe) ? probe.packet
                                                         : qr_packet_id(QR_DIR_NONE, 0);
    a.time_ns = Simulator::Now().GetNanoSeconds();
    a.sw = m_buffer->GetSwitchId();
    a.port = m_port;
    a.bytes = pk.bytes;
    a.tagged = pk.tagged;
    a.queue_bytes = qr_buffer_queue(b, m_port);
    a.total_bytes = qr_buffer_total(b);
    a.threshold = qr_buffer_threshold(b);
    a.n_flows = static_cast<uint16_t>(qr_queue_flows_snapshot(m_flows, &a.flows));
    qr_port port{b,
                 a.sw,
                 m_port,
                 m_buffer->GetMode(),
                 m_buffer->GetMarginBytes(),
                 m_buffer->GetEcnThresholdBytes(),
                 m_buffer->GetFaults(),
                 m_buffer->GetLinkFaults()};
    qr_decision d;
    int mark;
    qr_port_arrive(&port, &pk, &d, &mark);
    a.decision = static_cast<uint8_t>(d);
    m_arrivalTrace(a);
    if (d != QR_ADMIT)
    {
        DropBeforeEnqueue(item, DropReason(d));
        return false;
    }
    if (!GetInternalQueue(0)->Enqueue(item))
    {
        // cannot happen with the unbounded internal queue; undo the accounting if it does
        qr_buffer_release(b, m_port, pk.bytes);
        return false;
    }
    if (mark)
        Mark(item, ECN_MARK);
    uint32_t flow = qr_port_flow(&pk);
    qr_queue_flows_add(m_flows, flow, pk.bytes);
    m_held.push_back({a.packet, flow, pk.bytes});
    return true;
}

Ptr<QueueDiscItem>
SharedBufferQueueDisc::DoDequeue()
{
    return GetInternalQueue(0)->Dequeue();
}

void
SharedBufferQueueDisc::TxEnd(Ptr<const Packet>)
{
    NS_ASSERT_MSG(!m_held.empty(), "a packet left a switch port that it never entered");
    if (m_held.empty())
        return;
    Held h = m_held.front();
    m_held.pop_front();
    qr_buffer* b = m_buffer->Get();
    qr_buffer_release(b, m_port, h.bytes);
    qr_queue_flows_remove(m_flows, h.flow, h.bytes);
    if (!m_departureTrace.IsEmpty())
    {
        Departure d{Simulator::Now().GetNanoSeconds(),
                    m_buffer->GetSwitchId(),
                    m_port,
                    h.packet,
                    h.flow,
                    h.bytes,
                    qr_buffer_queue(b, m_port),
                    qr_buffer_total(b),
                    qr_buffer_threshold(b)};
        m_departureTrace(d);
    }
}

bool
SharedBufferQueueDisc::CheckConfig()
{
    if (!m_buffer || !m_buffer->Get())
    {
        NS_LOG_ERROR("SharedBufferQueueDisc: not attached to a SharedBuffer");
        return false;
    }
    return ConfigureUnboundedFifo(*this);
}

void
SharedBufferQueueDisc::InitializeParams()
{
}

void
SharedBufferQueueDisc::DoInitialize()
{
    if (!m_flows && qr_queue_flows_create(&m_flows) != 0)
        throw std::bad_alloc();
    QueueDisc::DoInitialize();
}

void
SharedBufferQueueDisc::DoDispose()
{
    m_buffer = nullptr;
    m_held.clear();
    qr_queue_flows_destroy(m_flows);
    m_flows = nullptr;
    QueueDisc::DoDispose();
}

} // namespace ns3
