/* qreplay: per-host send traces as pcap files (libpcap), nanosecond timestamps, link type raw IPv4
 * (LINKTYPE_IPV4, 228). Each packet is stored as a real IPv4 header and its TCP header with
 * options (no payload captured); the original length is the IP total length. */
#ifndef QREPLAY_PCAP_FILE_H
#define QREPLAY_PCAP_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/packet.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_pcap_writer qr_pcap_writer;
typedef struct qr_pcap_reader qr_pcap_reader;

/* Create (truncate) a pcap file. Returns 0 or QR_EIO / QR_ENOENT with the reason in errbuf.
 * Caller owns *out and must call qr_pcap_writer_close. */
int qr_pcap_writer_open(qr_pcap_writer **out, const char *path, char *errbuf);

/* How qr_pcap_writer_open_as writes: the link layer and the timestamp resolution. */
typedef enum qr_pcap_link {
    QR_PCAP_LINK_IPV4 = 0, /* raw IPv4 (LINKTYPE_IPV4), our recordings' convention */
    QR_PCAP_LINK_ETHERNET  /* Ethernet II (LINKTYPE_ETHERNET), as tcpdump on a NIC writes */
} qr_pcap_link;
typedef struct qr_pcap_format {
    qr_pcap_link link;
    int micro; /* 1: microsecond timestamps, truncated as a capture's are (tcpdump's default);
                  0: nanoseconds */
} qr_pcap_format;

/* Like qr_pcap_writer_open, in another format. Ethernet frames carry locally administered MAC
 * addresses made of the IPv4 addresses (02:00:a.b.c.d) and type 0x0800. */
int qr_pcap_writer_open_as(qr_pcap_writer **out, const char *path, const qr_pcap_format *fmt,
                           char *errbuf);

/* The first time a pcap record cannot hold: its seconds field is a signed 32-bit number. */
#define QR_PCAP_TIME_END ((int64_t)2147483648 * 1000000000)

/* Append a packet. Returns 0, QR_EVALUE (ip_len < 40, negative time, time >= QR_PCAP_TIME_END),
 * QR_EORDER (time before the
 * previous packet's) with detail in errbuf, or QR_EIO. */
int qr_pcap_write(qr_pcap_writer *w, const qr_packet *p, char *errbuf);

/* Flush and close; frees w (NULL is allowed). Returns 0 or QR_EIO if the data could not be
 * written. */
int qr_pcap_writer_close(qr_pcap_writer *w, char *errbuf);

/* Open a pcap file written by qr_pcap_writer (or any pcap of raw IPv4 or raw IP packets with
 * microsecond or nanosecond timestamps). Returns 0, QR_ENOENT, QR_EFORMAT (not a pcap, other link
 * type), QR_ETRUNC (empty or cut header), with "FILE: reason" in errbuf. Caller owns *out
 * (qr_pcap_reader_close). */
int qr_pcap_reader_open(qr_pcap_reader **out, const char *path, char *errbuf);

/* Read the next packet into *p. Returns 0; QR_END at the end of the file, also when the file ends
 * inside its last record (a capture stopped mid-write: the whole packets before it are read, and
 * qr_pcap_reader_warning says where the cut is); QR_EFORMAT for a packet that cannot be read as
 * IPv4 (+ TCP or UDP), saying why (IPv6, not IP, cut by the snap length, a non-first fragment, an
 * IP length below its headers or beyond the packet, a bad TCP header length) or a corrupt record;
 * QR_EVALUE for a timestamp outside [0, 2^62] ns; always "FILE: packet N: reason" in errbuf.
 * Timestamps may go backwards between packets: order matters within a flow direction only, and
 * the sampler checks it there. */
int qr_pcap_read(qr_pcap_reader *r, qr_packet *p, char *errbuf);

/* What the reader left out, e.g. a cut last record ("" if nothing); borrowed from r. */
const char *qr_pcap_reader_warning(const qr_pcap_reader *r);

/* Packets read so far. */
uint64_t qr_pcap_reader_count(const qr_pcap_reader *r);

/* Close and free; NULL is allowed. */
void qr_pcap_reader_close(qr_pcap_reader *r);

#ifdef __cplusplus
}
#endif
#endif
