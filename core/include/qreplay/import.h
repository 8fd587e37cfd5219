/* qreplay: turning operators' captures into recordings (qreplay import): which host each capture
 * and each address belongs to. */
#ifndef QREPLAY_IMPORT_H
#define QREPLAY_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/capture.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One line of a host map. */
typedef struct qr_host_map_entry {
    uint8_t addr[16];   /* IPv4-mapped for IPv4 (capture.h) */
    uint32_t host;      /* host of the scenario's topology */
    char capture[1024]; /* "" or the capture file the line names (as written) */
    long line;          /* where it was given */
} qr_host_map_entry;

/* Read a host map: a CSV with one address per line, `address,host[,capture]` (IPv4 or IPv6
 * address, host number in [0, n_hosts), optionally the capture file taken on that host); an
 * optional header line whose first field is `address`; blank lines and lines starting with '#'
 * are ignored. Returns 0 with *out (caller owns it: qr_host_map_free) and *n, or QR_ENOENT,
 * QR_ESYNTAX / QR_EVALUE / QR_EDUP with "FILE:LINE: ..." naming the field (a bad address, a host
 * that is not a number or not in the topology, an address given twice, a missing or extra field).
 */
int qr_host_map_read(const char *path, uint32_t n_hosts, qr_host_map_entry **out, size_t *n,
                     char *errbuf);
/* Release; NULL is allowed. */
void qr_host_map_free(qr_host_map_entry *map);

/* Parse an IPv4 (into its IPv4-mapped form) or IPv6 address. Returns 0 or QR_EVALUE. */
int qr_addr_parse(const char *text, uint8_t out[16]);

/* Whose capture it is, when no host map says: the address taking part in the most of its TCP
 * packets (a host's capture holds only its own connections, so its address is in every packet,
 * whoever sends more), ties broken by the packets it sent. When two addresses take part in
 * equally many packets (a capture of one peer only, or a mirror), the capture cannot tell: that is
 * an error asking for a host map. *sent gets the owner's packets sent, *stats the capture's counts
 * (both may be NULL). Returns 0, a qr_capture_open or qr_capture_next error, QR_ENOTFOUND for a
 * capture without a TCP packet ("FILE: no TCP packet in N frames: ..." with the skip counts), or
 * QR_EVALUE for an ambiguous one ("FILE: cannot tell whose capture it is: ..."). */
int qr_capture_owner(const char *path, uint8_t addr[16], uint64_t *sent, qr_capture_stats *stats,
                     char *errbuf);

/* A TCP connection found in the captures. Side 0 is the initiator (the sender of its SYN, or, when
 * the capture starts mid-connection, of the first packet seen); side 1 the responder. */
typedef struct qr_import_conn {
    uint8_t addr[2][16];
    uint16_t port[2];
    uint8_t family;      /* 4 or 6 */
    uint8_t syn;         /* the initiator's SYN was captured */
    uint8_t fin[2];      /* a FIN from that side was captured */
    int64_t first_ns;    /* its first packet, on the clock of the first capture that saw it */
    uint32_t capture;    /* that capture's index */
    uint64_t packets[2]; /* captured packets sent by each side, as captured (no TSO split) */
    uint64_t bytes[2];   /* stream bytes each side sent: its sequence range, SYN and FIN excluded */
    /* private: sequence tracking */
    uint32_t seq0[2], seq_end[2];
    uint8_t seq_known[2];
} qr_import_conn;

/* What a first pass over the captures found: each capture's host, every connection, the host of
 * every address. */
typedef struct qr_import_scan {
    size_t n_captures;
    uint8_t (*owner)[16];    /* per capture: the address it belongs to */
    uint32_t *owner_host;    /* per capture: its host */
    qr_capture_stats *stats; /* per capture */
    qr_import_conn *conns;   /* by first appearance */
    size_t n_conns;
    uint8_t (*addr)[16]; /* every address of a connection, with its host */
    uint32_t *addr_host;
    size_t n_addrs;
} qr_import_scan;

/* The first pass: read every capture, find the connections, and give every address a host of the
 * topology (n_hosts): the map's (map may be NULL), else capture owners first, in capture order,
 * then the other addresses of the connections in address order, each the smallest host not yet
 * taken. A capture belongs to the host the map names for its file (the last path component or the
 * whole path as given), else to its owner address (qr_capture_owner). Returns 0 with *out (caller
 * owns it: qr_import_scan_free), or a capture reader's error, QR_ENOTFOUND (a capture without
 * TCP), QR_EVALUE ("N addresses for M hosts: ADDR is the first that does not fit"; a capture
 * whose host the map gives twice), QR_ENOMEM; with the file named in errbuf. */
int qr_import_scan_run(const char *const *captures, size_t n_captures, const qr_host_map_entry *map,
                       size_t n_map, uint32_t n_hosts, qr_import_scan **out, char *errbuf);
/* Release; NULL is allowed. */
void qr_import_scan_free(qr_import_scan *s);
/* The host of an address, or -1. */
int64_t qr_import_scan_host(const qr_import_scan *s, const uint8_t addr[16]);

#ifdef __cplusplus
}
#endif
#endif
