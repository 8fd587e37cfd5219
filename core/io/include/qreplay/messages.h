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

#ifdef __cplusplus
}
#endif
#endif
