/* qreplay ns-3 module: the core's 5-tuple of an IPv4 packet (payload starting at the L4 header),
 * and the core's qr_packet of a packet on a point-to-point link. */
#ifndef QREPLAY_FIVE_TUPLE_H
#define QREPLAY_FIVE_TUPLE_H

#include "ns3/ipv4-header.h"
#include "ns3/packet.h"

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/topology.h"
#include "qreplay/trace.h"
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
    if ((ft.proto == 6 || ft.proto == 17) && payload->GetSize() >= 4)
    {
        uint8_t ports[4];
        payload->CopyData(ports, 4); // TCP and UDP both start with source and destination port
        ft.src_port = static_cast<uint16_t>(ports[0] << 8 | ports[1]);
        ft.dst_port = static_cast<uint16_t>(ports[2] << 8 | ports[3]);
    }
    return ft;
}

/* A TCP segment's flags and payload bytes (packet starting at its TCP header). False if it is too
 * short to hold one. */
inline bool
TcpFlagsAndPayload(Ptr<const Packet> segment, uint8_t& flags, uint32_t& payload)
{
    uint8_t h[14];
    if (segment->GetSize() < 20 || segment->CopyData(h, sizeof h) != sizeof h)
        return false;
    uint32_t header = (h[12] >> 4) * 4u;
    if (header < 20 || header > segment->GetSize())
        return false;
    flags = h[13];
    payload = segment->GetSize() - header;
    return true;
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
