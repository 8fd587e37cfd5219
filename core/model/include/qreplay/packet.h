/* qreplay: packets: the IPv4 and TCP header codecs, TCP options and payload, and the rule that
 * tells a TCP retransmission from new data. Used by traces, captures and every analysis that reads
 * packets; no file format here. */
#ifndef QREPLAY_PACKET_H
#define QREPLAY_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes captured per packet: IPv4 header + TCP header without options (QR_PCAP_CAPLEN), and at
 * most (with 40 bytes of TCP options). */
#define QR_PCAP_CAPLEN 40
#define QR_PCAP_CAPLEN_MAX 80
#define QR_TCP_OPTIONS_MAX 40

/* TCP flag bits. */
#define QR_TCP_FIN 0x01
#define QR_TCP_SYN 0x02
#define QR_TCP_RST 0x04
#define QR_TCP_PSH 0x08
#define QR_TCP_ACK 0x10
#define QR_TCP_ECE 0x40
#define QR_TCP_CWR 0x80

/* One sent packet. Addresses and ports in host byte order (ports of TCP and UDP; 0 for other
 * protocols). */
typedef struct qr_packet {
    int64_t time_ns; /* send time (first bit on the wire) as the host's clock saw it */
    uint32_t src_ip, dst_ip;
    uint16_t src_port, dst_port;
    uint8_t proto; /* 6 (TCP); other protocols are stored with zero ports */
    uint8_t tos;   /* DSCP and ECN bits */
    uint8_t ttl;
    uint16_t ip_id;  /* consecutive per flow direction, wrapping */
    uint16_t ip_len; /* IP total length: the packet's size on the wire above layer 2 */
    uint32_t seq, ack;
    uint8_t tcp_flags;
    uint16_t window;
    uint8_t tcp_opt_len; /* bytes of TCP options (a multiple of 4, at most 40) */
    uint8_t tcp_opts[QR_TCP_OPTIONS_MAX];
} qr_packet;

/* Why a frame was left out. */
typedef enum qr_skip {
    QR_SKIP_NOT_IP = 0, /* a frame that carries no IP packet (ARP, LLDP, STP, ...) */
    QR_SKIP_NOT_TCP,    /* an IP packet of another protocol (UDP, ICMP, ...) */
    QR_SKIP_FRAGMENT,   /* an IP fragment: no whole TCP header in this packet alone */
    QR_SKIP_SNAPLEN,    /* cut by the capture's snap length before the end of the TCP header */
    QR_SKIP_BAD_LINK,   /* a link-layer header cut short or malformed */
    QR_SKIP_BAD_IP,     /* an IP header that contradicts itself or the frame (lengths, version) */
    QR_SKIP_BAD_TCP,    /* a TCP header length below 20 bytes or beyond the IP packet */
    QR_SKIP_DUPLICATE,  /* the same TCP packet again, captured twice (a capture reader that
                           removes duplicates: qr_capture_dedup) */
    QR_SKIP_COUNT
} qr_skip;

/* A short name of a reason ("not IP", "not TCP", "IP fragment", ...); "?" out of range. */
const char *qr_skip_name(int reason);

/* The flow direction a packet belongs to, as text: "10.0.0.1:5000>10.0.1.2:80/6". Writes at most
 * size bytes (QR_FLOW_NAME_MAX is always enough); returns buf. */
#define QR_FLOW_NAME_MAX 64
char *qr_packet_flow_name(const qr_packet *p, char *buf, size_t size);

/* Serialize a packet's IPv4 + TCP headers with the TCP options (network byte order, valid IP
 * checksum) into buf[QR_PCAP_CAPLEN_MAX]; returns the bytes written (40 + tcp_opt_len, options
 * beyond 40 bytes or not a multiple of 4 are cut to fit). Decode reads them back (options only as
 * far as captured): returns 0 or QR_EFORMAT; qr_packet_parse does the same and writes why a packet
 * cannot be read into why[why_size] (may be NULL). wire_len is the packet's length on the wire
 * (0: unknown). */
size_t qr_packet_encode(const qr_packet *p, uint8_t *buf);

/* The TCP option `kind` in opts[0..len) (the options of a TCP header, perhaps cut short by the
 * capture): returns a pointer to its value (after kind and length), its declared value length in
 * *declared and the bytes of it present in opts in *present; NULL if an end-of-list, a malformed
 * length or the end comes first. */
const uint8_t *qr_tcp_option(const uint8_t *opts, size_t len, uint8_t kind, size_t *declared,
                             size_t *present);
/* A TCP packet's payload bytes: its IP length less a 20-byte IP header and its TCP header. */
uint32_t qr_tcp_payload(const qr_packet *p);
/* The sequence space a TCP segment takes: its payload bytes, and one each for SYN and FIN. The one
 * rule for every reader of sequence numbers. */
uint32_t qr_tcp_seq_len(uint32_t payload, uint8_t tcp_flags);
int qr_packet_decode(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p);
int qr_packet_parse(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p, char *why,
                    size_t why_size);

/* Parse an IPv4 packet (and its TCP or UDP header) as qr_packet_parse does; on QR_EFORMAT also
 * set *reason to the qr_skip code of the fault. */
int qr_ipv4_parse(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p, int *reason,
                  char *why, size_t why_size);

/* An IPv4 packet ip[0..len) that is an ICMP time-exceeded (type 11): *replier gets its source
 * address, *quoted the 5-tuple of the packet it quotes (ports from the quoted first 8 bytes of a
 * TCP or UDP header) and *quoted_id that packet's IP ID. Returns 1, or 0 for any other packet or
 * one too short to hold the quote (host byte order throughout). */
int qr_icmp_time_exceeded_parse(const uint8_t *ip, size_t len, uint32_t *replier,
                                qr_five_tuple *quoted, uint16_t *quoted_id);

/* The source and destination ports of a TCP or UDP header at l4[0..len) (both start with them):
 * 1 and the ports, or 0 (another protocol, or fewer than 4 bytes) with the ports left 0. */
int qr_l4_ports(uint8_t proto, const uint8_t *l4, size_t len, uint16_t *src_port,
                uint16_t *dst_port);

/* A TCP segment seg[0..captured) whose whole length is seg_len bytes: its flags and payload bytes
 * (seg_len less its header). Returns 1, or 0 if it is too short to hold a TCP header or its
 * header length is below 20 or beyond the segment (needs at least 14 captured bytes). */
int qr_tcp_segment(const uint8_t *seg, size_t captured, uint32_t seg_len, uint8_t *flags,
                   uint32_t *payload_bytes);

/* The retransmission rule of one end of a TCP connection, shared by the TCP traces and the hop
 * traces: the ISN (its first SYN) and the highest relative sequence it has sent (SYN and FIN count
 * one). A SYN, FIN or payload that starts below it is a retransmission. */
typedef struct qr_seq_state {
    int have_isn;
    uint32_t isn;
    uint64_t high;
} qr_seq_state;
/* Step with one sent segment (len: payload bytes). Returns 1 for a retransmission, 0 otherwise;
 * *rel: its relative sequence number. */
int qr_seq_step(qr_seq_state *s, uint8_t flags, uint32_t seq, uint32_t len, uint64_t *rel);

#ifdef __cplusplus
}
#endif
#endif
