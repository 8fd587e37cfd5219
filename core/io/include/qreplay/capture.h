/* qreplay: reading operators' captures (tcpdump, Wireshark, dumpcap) through libpcap: pcap with
 * microsecond or nanosecond timestamps in either byte order, and pcapng (libpcap converts every
 * interface's timestamp resolution to nanoseconds). Link types: Ethernet (with 802.1Q, 802.1ad
 * and QinQ tags), raw IP (RAW, IPV4, IPV6), Linux cooked (SLL and SLL2, what `tcpdump -i any`
 * writes), BSD loopback (NULL, LOOP), PPP (PPP, PPP_SERIAL: what ns-3's point-to-point devices
 * write) and Linux netfilter logs (NFLOG, what `tcpdump -i nflog:N` writes of the packets an
 * nftables `log group N` rule saw). TCP over IPv4 and IPv6 is read; every
 * other frame is counted under the reason it was left out, never dropped silently. */
#ifndef QREPLAY_CAPTURE_H
#define QREPLAY_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/packet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One TCP packet of a capture. Addresses are 16 bytes; IPv4 addresses are IPv4-mapped
 * (::ffff:a.b.c.d), so both families share one key space. */
typedef struct qr_capture_packet {
    int64_t time_ns; /* the capture's timestamp, ns since the Unix epoch */
    uint64_t frame;  /* frame number in the capture, from 1 */
    uint8_t family;  /* 4 or 6 */
    uint8_t src[16], dst[16];
    uint16_t src_port, dst_port;
    uint32_t seq, ack;
    uint8_t tcp_flags; /* QR_TCP_* of packet.h */
    uint16_t window;
    uint8_t tcp_hdr_len; /* bytes, 20..60 */
    uint32_t ip_len;     /* IPv4 total length; IPv6: 40 + payload length */
    uint32_t payload;    /* TCP payload bytes (from the IP length, not from what was captured) */
    uint16_t ip_id;      /* IPv4 identification (0 for IPv6) */
    uint8_t tos, ttl;    /* IPv4 TOS and TTL; IPv6 traffic class and hop limit */
    uint16_t vlan;       /* the outermost 802.1Q/802.1ad VLAN id, 0 if untagged */
    uint8_t tcp_opt_len; /* bytes of TCP options captured (a multiple of 4, at most 40) */
    uint8_t tcp_opts[40];
    uint8_t has_mac; /* an Ethernet frame (or a netfilter log record that kept its header) */
    uint8_t mac_src[6], mac_dst[6];
} qr_capture_packet;

/* What a reader has seen so far: every frame is either kept or skipped for one reason. */
typedef struct qr_capture_stats {
    uint64_t frames, kept;
    uint64_t skipped[QR_SKIP_COUNT];
} qr_capture_stats;

typedef struct qr_capture qr_capture;

/* Open a capture. Returns 0; QR_ENOENT (missing, unreadable); QR_EFORMAT (not a pcap or pcapng
 * file, a link type qreplay does not read: the message names the ones it does); QR_ETRUNC (empty
 * or cut in its header); with "FILE: reason" in errbuf. Caller owns *out (qr_capture_close). */
int qr_capture_open(qr_capture **out, const char *path, char *errbuf);

/* The next TCP packet into *p. Frames that are not TCP over IP are counted in the stats by reason
 * and passed over. Returns 0; QR_END at the end, also when the file ends inside its last record
 * (the whole packets before it are read and qr_capture_warning names the byte offset of the cut);
 * QR_EFORMAT for a corrupt record, QR_EVALUE for a timestamp outside [0, 2^62] ns, with
 * "FILE: frame N: reason" in errbuf. */
int qr_capture_next(qr_capture *c, qr_capture_packet *p, char *errbuf);

/* Called by qr_capture_next for every frame it passes over, with why and what of the frame was
 * decoded before it was left out: time_ns and frame always; has_mac and the MAC addresses of an
 * Ethernet frame; family, addresses, ip_len, ip_id, tos and ttl of an IPv4 packet of another
 * protocol (QR_SKIP_NOT_TCP); for the other reasons, the fields decoded before the fault (do not
 * rely on them). NULL fn: none (the default). */
typedef void (*qr_capture_skip_fn)(void *ctx, const qr_capture_packet *p, qr_skip why);
void qr_capture_on_skip(qr_capture *c, qr_capture_skip_fn fn, void *ctx);

/* Remove duplicated frames from now on, as editcap -D does: a TCP packet whose headers equal
 * one of the last `window` kept packets' (every field read: addresses, ports, sequence and
 * acknowledgment numbers, flags, window, IP ID and length, payload bytes, TOS, TTL, VLAN, TCP
 * options) is skipped as QR_SKIP_DUPLICATE, as a port mirror or a capture on two interfaces gives.
 * Where equal headers prove nothing, a stack may have sent the same bytes twice: an IPv4 packet
 * with IP ID 0 or an IPv6 packet (no per-packet identification; a TCP timestamp, where sent,
 * ticks only every millisecond or so). Such a packet is a duplicate only if it came less than
 * QR_CAPTURE_DEDUP_SAME_NS after its copy (sooner than any TCP timer resends) and no packet of its
 * connection's other direction was captured in between (a SYN sent again gets its SYN-ACK again,
 * byte for byte; an out-of-order segment gets its duplicate ACK). window 0 turns it off; at most
 * QR_CAPTURE_DEDUP_MAX. */
#define QR_CAPTURE_DEDUP_MAX 16
#define QR_CAPTURE_DEDUP_SAME_NS 1000000
void qr_capture_dedup(qr_capture *c, unsigned window);

/* The capture's link type name (e.g. "EN10MB", "LINUX_SLL2"); borrowed. */
const char *qr_capture_link(const qr_capture *c);
/* Counts so far. */
void qr_capture_stats_get(const qr_capture *c, qr_capture_stats *out);
/* What the reader left out besides skipped frames, e.g. a cut last record; "" if nothing. */
const char *qr_capture_warning(const qr_capture *c);
/* Close and free; NULL is allowed. */
void qr_capture_close(qr_capture *c);

/* Decode one frame of libpcap link type dlt (DLT_* value) captured with caplen of its wire_len
 * bytes. Returns 0 with *p filled (time_ns and frame left 0), 1 if the frame is not a TCP packet
 * (the reason in *why, *p as qr_capture_on_skip describes), QR_EINVAL for a link type qreplay does
 * not read. */
int qr_capture_decode(int dlt, const uint8_t *buf, size_t caplen, uint32_t wire_len,
                      qr_capture_packet *p, qr_skip *why);

/* A TSO/GSO super-segment (an IP packet above the MTU, as the sender's tcpdump sees it) as the NIC
 * sends it: segments of at most mtu IP bytes with the same headers, back to back at rate_bps (the
 * first at p's time, each next one after the previous one's wire time, (ip_len + overhead) * 8 /
 * rate_bps, ns rounded down from the exact running total), sequence numbers advancing by the
 * payload, IPv4 identification consecutive (wrapping), FIN and PSH on the last segment only, CWR
 * on the first only. A packet that fits the MTU is its own single segment. Writes min(count, max)
 * segments to out and returns count, the number of segments p makes; 0 if mtu cannot hold p's
 * headers and a byte of payload, or rate_bps is 0. */
size_t qr_capture_segment(const qr_capture_packet *p, uint32_t mtu, uint64_t rate_bps,
                          uint32_t overhead, qr_capture_packet *out, size_t max);

/* Whether qreplay reads link type dlt. */
int qr_capture_link_supported(int dlt);

/* An address as text: dotted IPv4 for IPv4-mapped addresses, RFC 5952 IPv6 otherwise. Writes at
 * most size bytes (QR_ADDR_TEXT_MAX is always enough); returns buf. */
#define QR_ADDR_TEXT_MAX 46
char *qr_addr_text(const uint8_t addr[16], char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
