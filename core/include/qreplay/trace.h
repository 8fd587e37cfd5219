/* qreplay: per-host send traces as pcap files (libpcap), nanosecond timestamps, link type raw IPv4
 * (LINKTYPE_IPV4, 228). Each packet is stored as a real IPv4 header and its TCP header with
 * options (no payload captured); the original length is the IP total length. */
#ifndef QREPLAY_TRACE_H
#define QREPLAY_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes captured per packet: IPv4 header + TCP header without options (QR_TRACE_CAPLEN), and at
 * most (with 40 bytes of TCP options). */
#define QR_TRACE_CAPLEN 40
#define QR_TRACE_CAPLEN_MAX 80
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

typedef struct qr_trace_writer qr_trace_writer;
typedef struct qr_trace_reader qr_trace_reader;

/* Create (truncate) a pcap file. Returns 0 or QR_EIO / QR_ENOENT with the reason in errbuf.
 * Caller owns *out and must call qr_trace_writer_close. */
int qr_trace_writer_open(qr_trace_writer **out, const char *path, char *errbuf);

/* How qr_trace_writer_open_as writes: the link layer and the timestamp resolution. */
typedef enum qr_trace_link {
    QR_TRACE_LINK_IPV4 = 0, /* raw IPv4 (LINKTYPE_IPV4), our recordings' convention */
    QR_TRACE_LINK_ETHERNET  /* Ethernet II (LINKTYPE_ETHERNET), as tcpdump on a NIC writes */
} qr_trace_link;
typedef struct qr_trace_format {
    qr_trace_link link;
    int micro; /* 1: microsecond timestamps, truncated as a capture's are (tcpdump's default);
                  0: nanoseconds */
} qr_trace_format;

/* Like qr_trace_writer_open, in another format. Ethernet frames carry locally administered MAC
 * addresses made of the IPv4 addresses (02:00:a.b.c.d) and type 0x0800. */
int qr_trace_writer_open_as(qr_trace_writer **out, const char *path, const qr_trace_format *fmt,
                            char *errbuf);

/* The first time a pcap record cannot hold: its seconds field is a signed 32-bit number. */
#define QR_TRACE_TIME_END ((int64_t)2147483648 * 1000000000)

/* Append a packet. Returns 0, QR_EVALUE (ip_len < 40, negative time, time >= QR_TRACE_TIME_END),
 * QR_EORDER (time before the
 * previous packet's) with detail in errbuf, or QR_EIO. */
int qr_trace_write(qr_trace_writer *w, const qr_packet *p, char *errbuf);

/* Flush and close; frees w (NULL is allowed). Returns 0 or QR_EIO if the data could not be
 * written. */
int qr_trace_writer_close(qr_trace_writer *w, char *errbuf);

/* Open a pcap file written by qr_trace_writer (or any pcap of raw IPv4 or raw IP packets with
 * microsecond or nanosecond timestamps). Returns 0, QR_ENOENT, QR_EFORMAT (not a pcap, other link
 * type), QR_ETRUNC (empty or cut header), with "FILE: reason" in errbuf. Caller owns *out
 * (qr_trace_reader_close). */
int qr_trace_reader_open(qr_trace_reader **out, const char *path, char *errbuf);

/* Read the next packet into *p. Returns 0; QR_END at the end of the file, also when the file ends
 * inside its last record (a capture stopped mid-write: the whole packets before it are read, and
 * qr_trace_reader_warning says where the cut is); QR_EFORMAT for a packet that cannot be read as
 * IPv4 (+ TCP or UDP), saying why (IPv6, not IP, cut by the snap length, a non-first fragment, an
 * IP length below its headers or beyond the packet, a bad TCP header length) or a corrupt record;
 * QR_EVALUE for a timestamp outside [0, 2^62] ns; always "FILE: packet N: reason" in errbuf.
 * Timestamps may go backwards between packets: order matters within a flow direction only, and
 * the sampler checks it there. */
int qr_trace_read(qr_trace_reader *r, qr_packet *p, char *errbuf);

/* What the reader left out, e.g. a cut last record ("" if nothing); borrowed from r. */
const char *qr_trace_reader_warning(const qr_trace_reader *r);

/* Packets read so far. */
uint64_t qr_trace_reader_count(const qr_trace_reader *r);

/* Close and free; NULL is allowed. */
void qr_trace_reader_close(qr_trace_reader *r);

/* The flow direction a packet belongs to, as text: "10.0.0.1:5000>10.0.1.2:80/6". Writes at most
 * size bytes (QR_FLOW_NAME_MAX is always enough); returns buf. */
#define QR_FLOW_NAME_MAX 64
char *qr_packet_flow_name(const qr_packet *p, char *buf, size_t size);

/* Serialize a packet's IPv4 + TCP headers with the TCP options (network byte order, valid IP
 * checksum) into buf[QR_TRACE_CAPLEN_MAX]; returns the bytes written (40 + tcp_opt_len, options
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
int qr_packet_decode(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p);
int qr_packet_parse(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p, char *why,
                    size_t why_size);

#ifdef __cplusplus
}
#endif
#endif
