/* qreplay ns-3 module: the core's 5-tuple of an IPv4 packet (payload starting at the L4 header),
 * and the core's qr_packet of a packet on a point-to-point link. */
#ifndef QREPLAY_NS3_FIVE_TUPLE_H
#define QREPLAY_NS3_FIVE_TUPLE_H

#include "ns3/ipv4-header.h"
#include "ns3/packet.h"

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/packet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/topology.h"
}

namespace ns3
{

inline qr_five_tuple
FiveTupleOf(const Ipv4Header& h, Ptr<const Packet> payload)
{
    qr_five_tuple ft{};
    ft.src_ip = h.GetSource().Get();
    ft.dst_ip = h.GetDestination().Get();
    ft.proto = h.GetProtocol();
    uint8_t l4[4];
    uint32_t n = payload->CopyData(l4, sizeof l4);
    qr_l4_ports(ft.proto, l4, n, &ft.src_port, &ft.dst_port);
    return ft;
}

/* A TCP segment's flags and payload bytes (packet starting at its TCP header). False if it is too
 * short to hold one. */
inline bool
TcpFlagsAndPayload(Ptr<const Packet> segment, uint8_t& flags, uint32_t& payload)
{
    uint8_t h[14];
    uint32_t n = segment->CopyData(h, sizeof h);
    return qr_tcp_segment(h, n, segment->GetSize(), &flags, &payload);
}

/* The IPv4 + TCP headers of a packet as it is on a point-to-point link (2-byte PPP header first),
 * as the core's qr_packet. False if it is not IPv4 (or too short). */
inline bool
DecodeWire(Ptr<const Packet> p, qr_packet& pk)
{
    uint8_t buf[2 + 60 + 20];
    uint32_t n = p->CopyData(buf, sizeof buf);
    if (n < 2 + 20)
        return false;
    return qr_packet_decode(buf + 2, n - 2, p->GetSize() - 2, &pk) == QR_OK;
}

} // namespace ns3

#endif
