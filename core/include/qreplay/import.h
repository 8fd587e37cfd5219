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

/* The address that sends most of a capture's TCP packets (ties: the smallest address), read
 * through the whole capture: what a capture without a host map is taken to belong to. *sent gets
 * its packet count, *stats the capture's counts (may be NULL). Returns 0, a qr_capture_open or
 * qr_capture_next error, or QR_ENOTFOUND for a capture without a TCP packet ("FILE: no TCP
 * packet in N frames: ..." with the skip counts). */
int qr_capture_owner(const char *path, uint8_t addr[16], uint64_t *sent, qr_capture_stats *stats,
                     char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
