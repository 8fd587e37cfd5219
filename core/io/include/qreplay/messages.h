/* qreplay: message traces, what WAP5's causal paths read (paths.h): one application-level send
 * from one host to another, with its send time on the sender's clock and its receive time on the
 * receiver's, either unknown where a host has no trace.
 *
 * The text form (docs/FORMATS.md, "Message traces"): a first line "# qreplay messages 1", then a
 * header "src,dst,conn,send_ns,recv_ns,bytes" and one message per line; an unknown time is "-".
 * Lines starting with '#' after the first are comments. */
#ifndef QREPLAY_MESSAGES_H
#define QREPLAY_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/import.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A time not observed (the host has no trace). */
#define QR_MSG_UNTRACED INT64_MIN
/* The most hosts a trace may name. */
#define QR_MSG_HOSTS_MAX 65536

typedef struct qr_msg {
    uint32_t src, dst;
    uint32_t conn;   /* the connection it went over (nesting pairs calls and returns on one) */
    int64_t send_ns; /* on src's clock, or QR_MSG_UNTRACED */
    int64_t recv_ns; /* on dst's clock, or QR_MSG_UNTRACED */
    uint64_t bytes;
} qr_msg;

/* Read a message trace. *n_hosts: the largest host named plus one. Errors name the file and line:
 * a missing or foreign first line or header, a line without six fields, a field that is no number
 * (a time out of [-2^62, 2^62], a host beyond QR_MSG_HOSTS_MAX - 1, a connection or size beyond
 * 32 and 64 bits), a message from a host to itself. (A receive time before its send time is not
 * an error: the two are on different clocks.) Returns 0 or QR_ENOENT, QR_EFORMAT, QR_ESYNTAX,
 * QR_EVALUE, QR_ENOMEM. Caller frees *out. */
int qr_msgs_read(const char *path, qr_msg **out, size_t *n, uint32_t *n_hosts, char *errbuf);

/* Write a message trace whole or not at all (txn.h), with `comment` (may be NULL) as a '#' line
 * after the first saying what it was made from. Returns 0 or QR_EIO. */
int qr_msgs_write(const char *path, const qr_msg *m, size_t n, const char *comment, char *errbuf);

/* Messages from per-host captures (capture.h's formats), as WAP5 reconciles its traces: on each
 * TCP connection, a message is a run of payload in one direction that ends where the other
 * direction sends payload (or, with idle_ns > 0, after a pause that long in its own direction).
 * Runs are cut on the clock of one capture: the sender's, or the receiver's where the sender has
 * none. A message's send time is when its first byte was first sent (the sender's capture); its
 * receive time when its last byte had arrived with every byte before it (the receiver's
 * capture); either is QR_MSG_UNTRACED where that host has no capture. map gives each address its
 * host (and, where a line names one, the capture taken on it; else the capture's owner is the
 * address in most of its packets); hosts are numbered as the map says. */
/* A connection's two ends: addresses (IPv4-mapped for IPv4) and ports, the lower end (by address,
 * then port) first. */
typedef struct qr_msg_ends {
    uint8_t addr[2][16];
    uint16_t port[2];
} qr_msg_ends;

/* The ends as text, "A:P-B:Q" (IPv4 dotted, IPv6 as "[...]"), the lower end first: the key a
 * service's truth names its connections by (paths_truth.h). size >= QR_MSG_ENDS_TEXT. */
#define QR_MSG_ENDS_TEXT 112
void qr_msg_ends_text(const qr_msg_ends *e, char *buf, size_t size);
/* Parse "A:P-B:Q" (either end first) into ends in order. Returns 0 or QR_EVALUE. */
int qr_msg_ends_parse(const char *text, qr_msg_ends *out);

typedef struct qr_msgs_capture_opts {
    int64_t idle_ns;    /* 0: only the other direction speaking ends a message */
    qr_msg_ends **ends; /* if not NULL: set to each connection's ends, by qr_msg.conn (caller frees;
                           as many as the report's connections) */
} qr_msgs_capture_opts;

typedef struct qr_msgs_capture_report {
    uint64_t captures, packets;
    uint64_t payload_packets;  /* TCP packets with payload */
    uint64_t unmapped_packets; /* left out: an address the map does not name */
    uint64_t foreign_packets;  /* left out: neither end is the capture's own host */
    uint64_t connections, messages;
    uint64_t untraced_send, untraced_recv;
    uint64_t unfinished; /* messages whose receiver's capture never held all their bytes */
} qr_msgs_capture_report;

/* Read n captures into messages (in order of connection, then of sending). Errors name the
 * capture: unreadable, corrupt, whose owner no map line names. Returns 0 or a capture reader's
 * error, QR_EVALUE, QR_ENOMEM. Caller frees *out. */
int qr_msgs_from_captures(const char *const *paths, size_t n, const qr_host_map_entry *map,
                          size_t n_map, const qr_msgs_capture_opts *o, qr_msg **out, size_t *n_out,
                          uint32_t *n_hosts, qr_msgs_capture_report *rep, char *errbuf);

/* Messages from the hosts' kernel records (krecord.h: qreplay record), as WAP5 builds them from
 * LibSockCap's socket calls: the same cut over each connection's send and receive calls (a run of
 * sends one way ended by the other side's bytes), a message's send time its first send call's, its
 * receive time that of the receive call that read its last byte. A record is its host's: each
 * connection's local address names it in the map. Connections a record first saw already open
 * (their byte offsets unknown) are left out and counted. */
typedef struct qr_msgs_record_report {
    uint64_t records, calls;
    uint64_t unmapped_calls;  /* left out: an end the map does not name, or both ends one host */
    uint64_t mid_connections; /* left out: already open when their record began */
    uint64_t connections, messages;
    uint64_t untraced_send, untraced_recv;
    uint64_t unfinished; /* messages whose receiver's record never read all their bytes */
} qr_msgs_record_report;

/* Read n kernel records into messages. Returns 0, a record reader's error naming the file,
 * QR_ENOMEM. Caller frees *out. */
int qr_msgs_from_records(const char *const *paths, size_t n, const qr_host_map_entry *map,
                         size_t n_map, const qr_msgs_capture_opts *o, qr_msg **out, size_t *n_out,
                         uint32_t *n_hosts, qr_msgs_record_report *rep, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
