/* Messages from what hosts saw of their connections (captures, kernel records): the cut that both
 * share (messages.h). */
#ifndef QR_MESSAGES_INTERNAL_H
#define QR_MESSAGES_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "qreplay/messages.h"

/* One run of bytes of a connection as one host saw it: a payload segment sent or received, or a
 * socket call. */
struct qri_mseg {
    uint32_t conn;
    uint8_t dir;    /* 0: from the connection's lower end (address, port), 1: the other way */
    uint8_t viewer; /* whose view: 0 the lower end's host, 1 the other's */
    int64_t t;
    int64_t off; /* the direction's byte offset, from its first seen */
    uint32_t len;
};

struct qri_mconn {
    uint32_t host[2]; /* the lower end's host, the other's */
    qr_msg_ends ends; /* the lower end's address and port, the other's */
    uint32_t base[2]; /* each direction's first sequence number seen (captures) */
    int have_base[2];
};

/* Segments being gathered, and the connections they belong to. */
struct qri_mbuild {
    const qr_host_map_entry *map;
    size_t n_map;
    qri_map hosts; /* an address (qri_addr_hi, qri_addr_lo) -> its map line's host + 1 */
    qri_map conns; /* the connection's ends (36 bytes, lower end first) -> index + 1 */
    struct qri_mconn *ci;
    size_t n_conns, cap_conns;
    struct qri_mseg *segs;
    size_t n_segs, cap_segs;
};

/* Start and end gathering (map borrowed). Returns 0 or QR_ENOMEM (then free it too). */
int qri_mbuild_init(struct qri_mbuild *b, const qr_host_map_entry *map, size_t n_map);
void qri_mbuild_free(struct qri_mbuild *b);
/* The map's host of an address (IPv4-mapped for IPv4). Returns 0, or -1 for none. */
int qri_mbuild_host(const struct qri_mbuild *b, const uint8_t addr[16], uint32_t *h);
/* The connection between (src, sp) on host hs and (dst, dp) on host hd, made if new, and the
 * direction from src to dst (0: src is the lower end). Returns 0 or QR_ENOMEM. */
int qri_mbuild_conn(struct qri_mbuild *b, const uint8_t src[16], uint16_t sp, const uint8_t dst[16],
                    uint16_t dp, uint32_t hs, uint32_t hd, uint32_t *conn, uint8_t *dir);
/* Each connection's ends into *o->ends, if asked (o may be NULL). Returns 0 or QR_ENOMEM. */
int qri_mbuild_ends(const struct qri_mbuild *b, const qr_msgs_capture_opts *o);
/* Keep a segment. Returns 0 or QR_ENOMEM. */
int qri_mbuild_seg(struct qri_mbuild *b, struct qri_mseg s);

/* What the cut leaves unknown. */
struct qri_mcounts {
    uint64_t untraced_send, untraced_recv, unfinished;
};

/* Every connection's messages from its segments (sorted here by connection, viewer, time): runs
 * one way ended by the other way's new bytes (or a pause of idle_ns > 0), cut on the sender's
 * view (else the receiver's); send times from the sender's view, receive times (every byte up to
 * the end arrived) from the receiver's. Appends to *out (capacity *cap). Returns 0 or
 * QR_ENOMEM. */
int qri_msgs_cut_all(struct qri_mseg *segs, size_t n_segs, const struct qri_mconn *ci,
                     int64_t idle_ns, qr_msg **out, size_t *n_out, size_t *cap,
                     struct qri_mcounts *cnt);

#endif
