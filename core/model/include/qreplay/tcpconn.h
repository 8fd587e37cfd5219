/* qreplay: a TCP connection as its captures show it: exchanges both ways, what happened to each
 * packet as far as it can be known, and what made each retransmission.
 *
 * Input: the two directions of one connection (0: from the side that opened it, 1: back), each
 * the packets its sender sent, with when they left the sender and when they reached the
 * receiver, as far as each end was observed. A direction is seen at its sender (every packet it
 * sent is there, with its send time, and every packet of the other direction that reached it has
 * its arrival time) and/or at its receiver (every packet that arrived is there, with its arrival
 * time). One capture on host A sees A's direction at its sender and the other at its receiver;
 * the runtime sees both ends of both. Times of both directions must be on one clock (reconciled
 * or the same host's).
 *
 * What it finds, from observations only:
 *  - per packet, its fate: delivered (it has a receive record, or an ACK or SACK proves its bytes
 *    arrived and no later copy was needed), lost (the receiver's record is complete and it is not
 *    there; or, seen only at the sender, its bytes were sent again and that copy was not a
 *    duplicate), or not seen (no record and no evidence either way: the answer is "unknown");
 *  - reordering apart from loss: a packet that arrived after one sent later (both ends seen), or
 *    whose resend turned out a duplicate (a DSACK, or the covering ACK echoing the original's
 *    timestamp), or, seen only at the receiver, that fills a hole carrying an older timestamp than
 *    what arrived before it;
 *  - what sent each retransmission, from the sender's timeline (sends, ACK and SACK arrivals):
 *    ACK-clocked ones (within ack_clock_ns of an ACK): a fast retransmission (dupthresh duplicate
 *    ACKs or that many segments SACKed above it), a RACK one (fewer: time-based loss detection),
 *    or part of a recovery; timer-driven ones: a RACK reorder timer (SACKed data above it, sooner
 *    than the minimum RTO), a tail-loss probe (the highest segment sent again, with more below it
 *    outstanding or sooner than the minimum RTO), or an RTO (the timer fired: the first unacked
 *    segment after at least the minimum RTO of silence). Spurious retransmissions are counted,
 *    an RTO whose original arrived is an undo (F-RTO, DSACK or timestamps), and new data sent
 *    right after an RTO is F-RTO at work; where both ends of both directions were seen, why
 *    each RTO fired (a tail drop, too few duplicate ACKs, a lost or held ACK, a lost
 *    retransmission) and how long the receiver held each ACK;
 *  - exchanges: a direction's data split where the application was idle (everything it sent was
 *    acknowledged and it sent nothing for idle_ns, or the other side sent data in between: a
 *    request and its response). Each has its bytes, start (first byte sent, or where only the
 *    receiver was seen, first byte arrived), end (the last byte cumulatively acknowledged: the
 *    ACK reaching the sender, or leaving the receiver), status, and its time split into parts;
 *  - the path as measured: the minimum RTT (the handshake, echoed timestamps, or without them data
 *    and its ACK, never a resent segment's) and the bottleneck rate by packet-pair dispersion (the
 *    median rate of consecutive deliveries: ACK arrivals at the sender, a duplicate ACK counting
 *    one segment, or data arrivals at the receiver; with fewer than 3 pairs the highest rate over
 *    a window of one minimum RTT), never below what an exchange achieved while sending; or a
 *    rate the caller gives. The ideal time of an exchange follows from them.
 */
#ifndef QREPLAY_TCPCONN_H
#define QREPLAY_TCPCONN_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/packet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which ends of a direction were observed (bits). */
#define QR_TC_AT_SENDER 1u
#define QR_TC_AT_RECEIVER 2u

/* One packet of a direction. */
typedef struct qr_tc_pkt {
    const qr_packet *pk; /* its headers (borrowed) */
    int64_t tx_ns;       /* when it left its sender (used when seen at the sender) */
    int64_t rx_ns;       /* when it reached its receiver; -1: no record */
    uint8_t sent_before; /* seen at the receiver only: what was captured there (its IP ID) shows it
                            was sent before segments that arrived ahead of it (a late original,
                            not a resend) */
} qr_tc_pkt;

typedef struct qr_tc_dir {
    const qr_tc_pkt *p; /* in the order the sender sent them (seen at the sender), else in the
                         * order they arrived; borrowed */
    size_t n;
    unsigned seen; /* QR_TC_AT_* */
} qr_tc_dir;

typedef struct qr_tc_cfg {
    uint32_t dupthresh;   /* duplicate ACKs (or SACKed segments) of a fast retransmission (3) */
    int64_t ack_clock_ns; /* a retransmission this soon after an ACK arrived is ACK-clocked (1 ms)*/
    int64_t rto_min_ns;   /* the sender's minimum RTO (Linux: 200 ms) */
    int64_t idle_ns;      /* idle that ends an exchange: at least this (1 ms) and at least
                             QR_TC_IDLE_RTTS smoothed RTTs of the connection's samples */
    uint64_t rate_bps;    /* the path's bottleneck rate if known (0: estimate from the data) */
    /* with end_at_arrival, an exchange's ideal if the path is known: the time from the first
     * of `bytes` (in segments of `mss` payload and `hdr` header bytes) leaving direction d's
     * sender to the last arriving, alone on the empty path (NULL or 0: from the measured
     * minimum RTT and rate) */
    int64_t (*path_ideal)(void *ctx, uint32_t d, uint64_t bytes, uint32_t mss, uint32_t hdr);
    void *path_ctx;
    int tlp;            /* the senders probe the tail before their first RTO, as Linux does
                           (tcp_early_retrans, the default since 3.10): the first timer resend
                           of the highest segment outside recovery is that probe, however long
                           it waited (with one segment out Linux waits 2 RTT + 200 ms, capped at
                           the RTO). 0: only a resend sooner than rto_min, or with more out
                           below it, is a probe (1) */
    int classic;        /* the senders detect loss by duplicate ACKs and their RTO only, as
                           ns-3's TCP does: no RACK, no tail-loss probe (overrides tlp); an
                           ACK-clocked resend outside a recovery is a fast retransmission
                           (late with more than dupthresh duplicates), every timer resend an
                           RTO (0) */
    int64_t delack_ns;  /* a receiver that held an ACK this long or longer held it for its
                           delayed-ACK timer (0: unknown; then only a receiver that sent no
                           ACK at all before the sender's timer fired held one) */
    int end_at_arrival; /* where a direction's receiver was seen, its exchanges end when the
                           receiver had every byte of them (a flow completion time), not when
                           the last byte was acknowledged (0) */
    /* the time in [from, to) that the link of direction d's sender was busy sending other
     * connections' packets (NULL: unknown): nothing of this connection in flight then is the
     * connection waiting its turn on the link (queueing), not the application */
    int64_t (*link_busy)(void *ctx, uint32_t d, int64_t from, int64_t to);
    void *link_ctx;
} qr_tc_cfg;

/* How many smoothed round trips of silence, at least, end an exchange. */
#define QR_TC_IDLE_RTTS 2

/* Fill *c with the defaults above. */
void qr_tc_cfg_default(qr_tc_cfg *c);

typedef enum {
    QR_TC_FATE_NONE = 0, /* carried no data (a pure ACK) and its receiver was not seen */
    QR_TC_DELIVERED,
    QR_TC_LOST,
    QR_TC_NOT_SEEN, /* no record, no evidence: unknown */
    QR_TC_FATES
} qr_tc_fate;

/* "-", "delivered", "lost", "not-seen"; "?" out of range. */
const char *qr_tc_fate_name(int f);

typedef enum {
    QR_TC_ORIGINAL = 0,   /* not a retransmission */
    QR_TC_RTO,            /* the retransmission timer fired */
    QR_TC_AFTER_RTO,      /* resent after an RTO, before everything sent before it was acked */
    QR_TC_TLP,            /* a tail-loss probe */
    QR_TC_FAST,           /* fast retransmission: dupthresh duplicate ACKs or SACKed segments */
    QR_TC_RACK,           /* RACK: fewer, or the reorder timer */
    QR_TC_RECOVERY,       /* later in a recovery, or ACK-clocked without other evidence */
    QR_TC_SYN,            /* a SYN or SYN-ACK sent again (its timer) */
    QR_TC_UNKNOWN_TRIGGER /* a retransmission seen only at the receiver */
} qr_tc_trigger;
#define QR_TC_TRIGGERS 9

/* "original", "rto", "after-rto", "tlp", "fast", "rack", "recovery", "syn", "unknown"; "?". */
const char *qr_tc_trigger_name(int t);

/* Why the retransmission timer fired, where both ends of both directions were seen (the record
 * of the receiver and of the sender, with every ACK's send and arrival): */
typedef enum {
    QR_TC_WHY_UNKNOWN = 0, /* one end only: the evidence is missing */
    QR_TC_WHY_PLAIN,       /* its data was lost and enough came after it to be duplicate ACKs;
                            * none of the reasons below */
    QR_TC_WHY_TAIL,        /* its data was lost and nothing sent after it arrived: no duplicate
                            * ACK could come (a tail drop) */
    QR_TC_WHY_FEW_DUPACKS, /* its data was lost and fewer than dupthresh segments after it
                            * arrived */
    QR_TC_WHY_ACK_LOST,    /* its data arrived; an ACK of it was lost on the way back */
    QR_TC_WHY_ACK_HELD,    /* its data arrived; the receiver held its ACK (delack_ns or longer)
                            * or sent none before the timer fired */
    QR_TC_WHY_RETX_LOST,   /* it resent a retransmission that was lost as well */
    QR_TC_WHYS
} qr_tc_why;

/* "unknown", "rto", "tail-drop", "few-dupacks", "ack-lost", "ack-held", "retransmission-lost";
 * "?". */
const char *qr_tc_why_name(int w);

typedef struct qr_tc_pkt_info {
    int64_t seq;       /* relative sequence number (the SYN is 0, the first data byte 1) */
    uint32_t len;      /* payload, +1 for SYN, +1 for FIN */
    uint8_t fate;      /* qr_tc_fate */
    uint8_t trigger;   /* qr_tc_trigger */
    uint8_t reordered; /* delivered after a packet sent later, or its resend was not needed */
    uint8_t spurious;  /* a retransmission of bytes that had arrived */
    uint8_t why;       /* qr_tc_why, for an RTO's retransmission */
    uint32_t dupacks;  /* duplicate ACKs the sender had when it went out */
    int32_t exchange;  /* index into qr_tc_conn.ex; -1: none (no data) */
    int64_t hold_ns;   /* an acknowledgment of the other direction's data: how long its sender
                        * (that data's receiver) held it, from the arrival of the oldest data it
                        * was first to acknowledge; -1: acknowledged nothing new, or unknown */
} qr_tc_pkt_info;

/* The parts of an exchange's time (they sum to its duration). */
typedef enum {
    QR_TC_PART_TRANSFER = 0, /* sending, up to the ideal */
    QR_TC_PART_QUEUEING,     /* sending beyond the ideal: queueing and sharing the path */
    QR_TC_PART_RTO,          /* waiting on the retransmission timer */
    QR_TC_PART_TLP,          /* waiting for a tail-loss probe */
    QR_TC_PART_RECOVERY,     /* in a fast, SACK or RACK recovery (or after an RTO) */
    QR_TC_PART_RWND,         /* the receiver's window was full */
    QR_TC_PART_APP,          /* nothing in flight with more of the exchange still to send */
    QR_TC_PART_LOSS,         /* seen at the receiver: a hole waited for its resend */
    QR_TC_PART_DELACK,       /* the receiver held its ACK: seen at the receiver, from the last
                              * byte's arrival to its ACK; seen at the sender, an ACK that rode
                              * on the other side's data, beyond one minimum RTT; both ends
                              * seen, the sender waiting on an ACK held delack_ns or longer
                              * (also when its timer fired first: an RTO of why ack-held) */
    QR_TC_PART_REPLY,        /* the receiver answered before it acknowledged: the ACK that
                              * completed the exchange rode on the other side's data (its
                              * reply), beyond one minimum RTT after the last data left (seen at
                              * the sender) or after the last byte arrived (at the receiver).
                              * The other side's application's time, not the exchange's: its
                              * slowdown leaves it out */
    QR_TC_PARTS
} qr_tc_part;

/* "transfer", "queueing", "rto", "tlp", "recovery", "receiver", "app", "loss", "delack",
 * "reply"; "?". */
const char *qr_tc_part_name(int p);

typedef enum {
    QR_TC_COMPLETE = 0, /* its last byte was acknowledged */
    QR_TC_OPEN,         /* the capture ended first */
    QR_TC_RESET,        /* a RST ended the connection first */
    QR_TC_NO_ACKS       /* no ACK of it could be observed (the other end's arrivals were not
                         * captured): unknown */
} qr_tc_status;

/* "complete", "open at capture end", "reset", "unknown (no ACKs observed)"; "?". */
const char *qr_tc_status_name(int s);

typedef struct qr_tc_exchange {
    uint32_t dir;
    int64_t seq_lo, seq_hi; /* its data: relative sequence [seq_lo, seq_hi) */
    uint64_t bytes;
    int64_t start_ns, end_ns; /* end -1: not complete */
    int64_t idle_before_ns;   /* since the connection's previous exchange ended (-1: first) */
    uint8_t status;           /* qr_tc_status */
    uint8_t vantage;          /* QR_TC_AT_SENDER or QR_TC_AT_RECEIVER: where its times are from */
    uint8_t answered;         /* the ACK that completed it carried the other side's data */
    uint32_t packets, retransmissions, lost, not_seen, reordered, spurious, max_dupacks;
    uint32_t trig[QR_TC_TRIGGERS]; /* retransmissions by trigger */
    uint32_t late_fast;            /* fast retransmissions sent after more than dupthresh
                                    * duplicate ACKs, once the direction showed reordering */
    int64_t part_ns[QR_TC_PARTS];
    int64_t why_ns[QR_TC_WHYS];       /* its RTO part and the delack part of held ACKs' RTOs,
                                       * by why the timer fired */
    int64_t after_rto_ns[QR_TC_WHYS]; /* its recovery part after an RTO (what the timer's
                                       * go-back-N resent), by why that timer fired */
    int64_t ideal_ns;                 /* 0: unknown (no RTT measured) */
    double slowdown;                  /* (duration - reply part) / ideal; 0: unknown */
} qr_tc_exchange;

typedef struct qr_tc_dir_stats {
    unsigned seen;
    uint8_t syn, fin, rst, isn_known; /* isn_known: its SYN was captured */
    uint64_t bytes;                   /* stream bytes (highest sequence reached, SYN/FIN aside) */
    uint32_t packets, data_packets, retransmissions, lost, not_seen, reordered, spurious;
    uint32_t trig[QR_TC_TRIGGERS];
    uint32_t dsacks, undos, frto, max_dupacks, lost_acks, late_fast;
    uint32_t held_acks; /* its acknowledgments held delack_ns or longer (cfg.delack_ns > 0) */
    uint32_t exchanges;
    /* what this direction's packets show as captured (tshark's definitions): a duplicate ACK
     * carries no payload, SYN, FIN or RST, a nonzero window equal to the direction's previous
     * one, the direction's next sequence number and its previous acknowledgment number, and does
     * not answer the other side's keep-alive (its latest packet one byte or none below its next
     * sequence number: a keep-alive ACK); a run
     * ends at another acknowledgment number. A zero-window episode starts where the direction
     * advertises a zero window (no SYN, FIN or RST) after a nonzero one, or first. */
    uint32_t dupacks, dupack_run, zero_window_episodes;
} qr_tc_dir_stats;

typedef enum {
    QR_TC_END_CLOSED = 0, /* both FINs acknowledged */
    QR_TC_END_RESET,      /* a RST */
    QR_TC_END_OPEN        /* open at the capture's end */
} qr_tc_end;

/* "closed", "reset", "open at capture end"; "?". */
const char *qr_tc_end_name(int e);

typedef struct qr_tc_conn {
    qr_tc_pkt_info *info[2]; /* per direction, parallel to its packets */
    qr_tc_exchange *ex;      /* in start order */
    size_t n_ex;
    qr_tc_dir_stats dir[2];
    int64_t handshake_ns; /* SYN to the handshake's end at the observed end; -1: not captured */
    int64_t min_rtt_ns;   /* -1: no sample */
    uint32_t rtt_samples;
    uint64_t rate_bps;     /* the rate ideals use; 0: unknown */
    uint8_t rate_measured; /* 1: estimated from the data, 0: the caller's */
    uint8_t end;           /* qr_tc_end */
    int64_t first_ns, last_ns;
} qr_tc_conn;

/* Analyse one connection. cfg may be NULL (defaults). Returns 0, QR_EINVAL (no directions, a
 * packet without headers) or QR_ENOMEM (with a message in errbuf, which may be NULL).
 * qr_tc_conn_free releases *out (also after an error). */
int qr_tc_analyse(qr_tc_conn *out, const qr_tc_dir dirs[2], const qr_tc_cfg *cfg, char *errbuf);
void qr_tc_conn_free(qr_tc_conn *c);

/* The window scale a SYN or SYN-ACK offers (option 3, capped at 14 as RFC 7323 says), or -1 if
 * it offers none. */
int qr_tcp_wscale(const qr_packet *p);
/* The TCP timestamp option of p: 1 with its value and echo, or 0. */
int qr_tcp_timestamps(const qr_packet *p, uint32_t *val, uint32_t *ecr);
/* The SACK blocks of p (at most 4, as [left, right) sequence numbers): their number. */
size_t qr_tcp_sack_blocks(const qr_packet *p, uint32_t left[4], uint32_t right[4]);

#ifdef __cplusplus
}
#endif
#endif
