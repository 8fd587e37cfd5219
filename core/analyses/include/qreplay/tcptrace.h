/* qreplay: TCP execution traces of isolated replays (qreplay isolate --trace).
 *
 * While an isolated replay repeats one connection of the runtime, the simulator's TCP reports what
 * its sender did: every segment it sent and received, and every change of its congestion window,
 * slow-start threshold, congestion state, retransmission timeout, RTT sample, bytes in flight and
 * windows. The receiver's segments are taken at its network interface. The glue hands these raw
 * events to a qr_tcp_trace; qr_tcp_trace_finish turns them into what a reader wants to see:
 *
 *  - which segments were retransmissions (a SYN, FIN or payload starting below the highest sequence
 *    the end had sent) and what triggered each, from the congestion state when it went out: the
 *    first one after the state became Loss is the retransmission timer's (`rto`), later ones in
 *    Loss are `after-rto`; the first one after the state became Recovery is a `fast-retransmit`,
 *    later ones `recovery`; a SYN sent again, and anything the receiver (which sends no data)
 *    sends again (its SYN-ACK, its FIN), is its timer's (`rto`); anything else `other`;
 *  - the duplicate-ACK count at the sender: an ACK without payload, SYN or FIN, acknowledging
 *    the same number as the highest ACK so far while data is outstanding, adds one; a higher ACK
 *    resets it. Each retransmission carries the count when it went out, so a fast retransmission
 *    with more duplicate ACKs than the threshold is visibly late;
 *  - which of the receiver's pure ACKs were delayed and how long each was held: the time since the
 *    oldest segment it acknowledges for the first time arrived (the first segment with payload,
 *    SYN or FIN the receiver got after it last sent an ACK); held at least delack_ns is delayed.
 *    An ACK the delayed-ACK timer would have sent but that a later segment forced out early (a
 *    duplicate, say) still counts as held from the first one;
 *  - which sent packets the network lost, by the recording (the i-th packet an end sent is packet
 *    i of its direction, as the corrector numbers it).
 *
 * It also finds the retransmissions in the recording itself (the same rule on what the runtime's
 * hosts sent) and says whether the traced ones are exactly those: same count, same relative
 * sequence numbers, same order, for each end. The result goes to HDF5 as /tcp_trace/<flow>/segments
 * and /tcp_trace/<flow>/vars (FORMATS.md). */
#ifndef QREPLAY_TCPTRACE_H
#define QREPLAY_TCPTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/schema_tcptrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The traced variables of the sender. */
typedef enum {
    QR_TT_CWND = 0,       /* congestion window, bytes */
    QR_TT_SSTHRESH = 1,   /* slow-start threshold, bytes */
    QR_TT_CONG_STATE = 2, /* qr_tt_cong_state */
    QR_TT_RTO = 3,        /* retransmission timeout, ns */
    QR_TT_RTT = 4,        /* the last RTT sample, ns */
    QR_TT_IN_FLIGHT = 5,  /* bytes in flight */
    QR_TT_RWND = 6,       /* the receiver's window as the sender last heard it, bytes */
    QR_TT_ADV_WND = 7,    /* the window the sender advertises, bytes */
    QR_TT_N_VARS = 8
} qr_tt_var;

/* "cwnd", "ssthresh", "cong_state", "rto", "rtt", "in_flight", "rwnd", "adv_wnd"; "?". */
const char *qr_tt_var_name(int v);

/* Congestion states, numbered as the simulator's (ns-3 TcpSocketState::TcpCongState_t). */
typedef enum {
    QR_TT_OPEN = 0,
    QR_TT_DISORDER = 1,
    QR_TT_CWR = 2,
    QR_TT_RECOVERY = 3,
    QR_TT_LOSS = 4
} qr_tt_cong_state;

/* What triggered a retransmission. */
typedef enum {
    QR_TT_NOT_RETX = 0,
    QR_TT_TRIG_RTO = 1,
    QR_TT_TRIG_AFTER_RTO = 2,
    QR_TT_TRIG_FAST = 3,
    QR_TT_TRIG_RECOVERY = 4,
    QR_TT_TRIG_OTHER = 5,
    QR_TT_N_TRIGGERS = 6
} qr_tt_trigger;

/* "", "rto", "after-rto", "fast-retransmit", "recovery", "other"; "?". */
const char *qr_tt_trigger_name(int t);

/* Ends and directions of traced segments. */
enum { QR_TT_SENDER = 0, QR_TT_RECEIVER = 1 };
enum { QR_TT_TX = 0, QR_TT_RX = 1 };

/* Delayed-ACK decisions of the receiver's pure ACKs. */
enum { QR_TT_ACK_NA = 0, QR_TT_ACK_IMMEDIATE = 1, QR_TT_ACK_DELAYED = 2 };

/* One traced segment, after qr_tcp_trace_finish. Sequence and ACK numbers are relative to the
 * ISN of the end that chose them (the sender's SYN, the receiver's SYN-ACK). */
typedef struct qr_tt_segment {
    int64_t time_ns;
    uint8_t end, dir, flags;
    uint8_t retx;    /* qr_tt_trigger; 0: not a retransmission */
    uint8_t lost;    /* 1: the network lost it (sent segments only) */
    uint8_t delack;  /* receiver's pure ACKs: QR_TT_ACK_IMMEDIATE or QR_TT_ACK_DELAYED */
    uint32_t window; /* the window field as sent (unscaled) */
    uint32_t len;    /* payload bytes */
    uint64_t seq, ack;
    uint32_t dupacks; /* sender: the duplicate-ACK count after this ACK / when this went out */
    int64_t held_ns;  /* receiver's pure ACKs: since the oldest segment it first acknowledges */
    uint64_t packet;  /* sent segments: the packet id (dir << 32 | number) in the recording */
} qr_tt_segment;

typedef struct qr_tt_var_change {
    int64_t time_ns;
    uint32_t var; /* qr_tt_var */
    int64_t value;
} qr_tt_var_change;

/* Summary of one traced connection. */
typedef struct qr_tt_summary {
    uint32_t flow;
    uint32_t dupack_threshold;
    uint64_t segments, var_changes;
    uint64_t retransmissions; /* traced, both ends */
    uint64_t by_trigger[QR_TT_N_TRIGGERS];
    uint64_t late_fast_retransmits; /* fast retransmissions after more dupACKs than the threshold */
    uint64_t recorded_retransmissions; /* in the recording, by the same rule, both ends */
    int matches_recording;             /* 1: traced retransmissions are exactly the recorded ones */
    uint64_t lost;                     /* sent segments the network lost */
    uint64_t delayed_acks, immediate_acks;
    int64_t max_held_ns;
    int64_t max_cwnd, min_ssthresh; /* -1: never traced */
} qr_tt_summary;

typedef struct qr_tcp_trace qr_tcp_trace;

/* A trace of `flow` for a sender whose fast-retransmit threshold is dupack_threshold; receiver
 * ACKs held at least delack_ns count as delayed. Returns 0 or QR_ENOMEM. */
int qr_tcp_trace_create(qr_tcp_trace **out, uint32_t flow, uint32_t dupack_threshold,
                        int64_t delack_ns);

/* Raw events, in time order per end (as the simulator reports them). Out of memory is kept and
 * reported by qr_tcp_trace_finish. seq and ack are the absolute numbers of the header. */
void qr_tcp_trace_segment(qr_tcp_trace *t, int64_t time_ns, uint32_t end, uint32_t dir,
                          uint8_t flags, uint32_t seq, uint32_t ack, uint32_t window, uint32_t len);
void qr_tcp_trace_var(qr_tcp_trace *t, int64_t time_ns, qr_tt_var var, int64_t value);

/* Derive retransmissions, triggers, duplicate-ACK counts, delayed ACKs and losses, and compare the
 * retransmissions with those in the recording `rec` (which must hold the flow; NULL: no loss
 * flags and no comparison, matches_recording 0). Returns 0,
 * QR_ENOMEM, or QR_EVALUE when the sender sent no SYN (nothing to make sequences relative to). */
int qr_tcp_trace_finish(qr_tcp_trace *t, const qr_recording *rec, char *errbuf);

/* A finished trace's segments (*n of them), variable changes (*n) and summary; borrowed from t
 * until qr_tcp_trace_destroy. */
const qr_tt_segment *qr_tcp_trace_segments(const qr_tcp_trace *t, size_t *n);
const qr_tt_var_change *qr_tcp_trace_vars(const qr_tcp_trace *t, size_t *n);
const qr_tt_summary *qr_tcp_trace_summary(const qr_tcp_trace *t);

/* The retransmissions among the packets one end of `flow` sent in the recording: their relative
 * sequence numbers, in send order, into *seqs (caller frees). end: QR_TT_SENDER or QR_TT_RECEIVER.
 * Returns 0 or QR_ENOMEM. */
int qr_recorded_retransmissions(const qr_recording *rec, uint32_t flow, uint32_t end,
                                uint64_t **seqs, size_t *n);

/* Write /tcp_trace/<flow>/segments and /vars with the summary as attributes of /tcp_trace/<flow>
 * (creating /tcp_trace if needed). Returns 0 or the h5 error. */
int qr_tcp_trace_write(const qr_tcp_trace *t, qr_h5 *f, char *errbuf);

/* Release a trace; NULL is allowed. */
void qr_tcp_trace_destroy(qr_tcp_trace *t);

#ifdef __cplusplus
}
#endif

#endif
