/* Private helpers shared by the sources of libqreplay (prefix qri_). Not installed. */
#ifndef QREPLAY_INTERNAL_H
#define QREPLAY_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "qreplay/error.h"

/* Format a detail message into errbuf (if not NULL) and return code. */
int qri_err(char *errbuf, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix the message already in errbuf with "prefix: " (if errbuf is not NULL). */
void qri_err_prefix(char *errbuf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy a string into a fixed buffer, always NUL-terminated; returns 0 or QR_EVALUE if cut. */
int qri_strlcpy(char *dst, const char *src, size_t size);

/* Parse an IPv4 packet (and its TCP or UDP header) as qr_packet_parse does; on QR_EFORMAT also
 * set *reason to the qr_skip code of the fault (trace.c). */
struct qr_packet;
int qri_ipv4_parse(const unsigned char *buf, size_t len, uint32_t wire_len, struct qr_packet *p,
                   int *reason, char *why, size_t why_size);

/* The next record of an offline libpcap handle (pcap_t *) as a time in ns: QR_OK; QR_END at the
 * end, also when the file ends inside its last record (then warning says where); QR_EFORMAT for
 * a corrupt record, QR_EVALUE for a timestamp outside [0, 2^62] ns, "PATH: packet N: ..." in
 * errbuf (count: packets read before). *offset: the byte offset of the next record, kept up to
 * date (start with qri_pcap_first_offset; 0 means not known, as in pcapng). trace.c. */
struct pcap;
struct pcap_pkthdr;
uint64_t qri_pcap_first_offset(struct pcap *pc);
/* Open a capture file for reading at nanosecond precision: QR_ENOENT, QR_EFORMAT (a folder, not a
 * readable FORMATS file), QR_ETRUNC (empty, cut header), "PATH: ..." in errbuf. kind names what the
 * file should be ("pcap file", "capture"). */
int qri_pcap_open(const char *path, const char *kind, const char *formats, struct pcap **out,
                  char *errbuf);
int qri_pcap_next(struct pcap *pc, const char *path, uint64_t count, uint64_t *offset,
                  struct pcap_pkthdr **h, const unsigned char **data, int64_t *time_ns,
                  char *warning, size_t warning_size, char *errbuf);

/* SHA-256 (sha256.c, OpenSSL). The digest and size of a file: 0, QR_ENOENT or QR_EIO. */
int qri_sha256_file(const char *path, char out[65], uint64_t *size);

/* A recording's truth/ folder written whole or not at all (truth_carry.c): stage makes
 * REC_DIR/truth.partial-PID (its path in tmp), commit replaces REC_DIR/truth with it, discard
 * removes a staged or old folder of arrivals.qra and truth.h5. */
int qri_truth_stage(const char *rec_dir, char *tmp, size_t size, char *errbuf);
int qri_truth_commit(const char *rec_dir, const char *tmp, char *errbuf);
void qri_truth_discard(const char *dir);

/* The time `bytes` take on a link of rate_bps, ns, rounded down (0 if the rate is 0); exact for
 * any size (units.c). */
int64_t qri_wire_ns(uint64_t bytes, uint64_t rate_bps);

/* The retransmission rule of one end of a TCP connection, shared by the TCP traces and the hop
 * traces: the ISN (its first SYN) and the highest relative sequence it has sent (SYN and FIN count
 * one). A SYN, FIN or payload that starts below it is a retransmission. */
typedef struct qri_seq_state {
    int have_isn;
    uint32_t isn;
    uint64_t high;
} qri_seq_state;
/* Step with one sent segment (len: payload bytes). Returns 1 for a retransmission, 0 otherwise;
 * *rel: its relative sequence number (tcptrace.c). */
int qri_seq_step(qri_seq_state *s, uint8_t flags, uint32_t seq, uint32_t len, uint64_t *rel);

/* Make room for one more element in a growable array of `size`-byte elements: if *n == *cap,
 * double *cap (first: `first`) and reallocate *array. Returns 0 or QR_ENOMEM (nothing changes).
 * units.c. */
int qri_grow(void **array, size_t *cap, size_t n, size_t size, size_t first);

/* Make room for `need` elements in all (growing as qri_grow does, as often as needed). Returns 0 or
 * QR_ENOMEM. units.c. */
int qri_reserve(void **array, size_t *cap, size_t need, size_t size, size_t first);

/* Remove a folder and everything in it (no symlinks followed); errors are ignored. import_run.c. */
void qri_remove_tree(const char *dir);

#endif
