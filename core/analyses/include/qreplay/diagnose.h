/* qreplay: why each slow flow was slow (qreplay diagnose).
 *
 * Only what hosts recorded is used: every packet each end sent (TCP headers and send times) and
 * when each reached the other end (/received), with the hosts' clock offsets taken out. A replay's
 * arrival log, when given, adds the queueing along the path and the shared-buffer blackhole
 * episodes (blackhole.h) the flow's losses fell in.
 *
 * Every connection, simulated, imported or from the testbed, goes through the one model of a TCP
 * connection (tcpconn.h): what happened to each packet, what sent each retransmission and why
 * each RTO fired, its exchanges and where their time went. A flow's row is its connection's:
 *  - FCT: from the flow's start to the end of its last exchange. A simulated flow ends when its
 *    receiver had every byte (the replay papers' FCT: the model's end_at_arrival), a captured one
 *    too where its receiver was captured, else when its last byte was acknowledged;
 *  - ideal FCT: a simulated flow's alone on an empty network (the handshake, SYN out and SYN-ACK
 *    back unloaded, the serialization of every data packet at the link rate and the unloaded
 *    latency of the last one); a captured one's from the measured path (the sum of its
 *    exchanges' ideals: minimum RTT and bottleneck rate); slowdown = FCT / ideal;
 *  - a time breakdown that partitions the FCT (qr_diag_part): the handshake, the application's
 *    idle time between exchanges, and each exchange's parts (tcpconn.h qr_tc_part): waiting on an
 *    RTO, a tail-loss probe, a recovery, the receiver's window, a delayed ACK (the receiver held
 *    the ACK the sender waited for, as long as the delayed-ACK timer or longer; also a timer's
 *    wait that such a hold caused), the application (nothing in flight, data left, and the
 *    sender's link idle: while the link carries the host's other packets the flow waits its
 *    turn, which is queueing), a hole at the receiver, queueing and sharing beyond the ideal, and
 *    sending;
 *  - a root cause (qr_diag_cause), its slowest exchange's, with its evidence: the packets and
 *    times that show it.
 *
 * A simulated sender (ns-3's TCP) detects loss by duplicate ACKs and its RTO only (the model's
 * `classic`); a captured one is Linux-like (RACK, tail-loss probes). Where both ends of both
 * directions were recorded, an RTO's sub-cause says why the timer fired: its lost packet had no
 * packet after it (tail drop) or fewer than dupthresh (not enough duplicate ACKs); it was a
 * retransmission lost again (lost retransmission: NewReno resends a lost retransmission only on
 * its timer); its data had arrived but the ACKs were lost (ACK drops) or held by the receiver
 * (delayed-ACK stall). An ACK's hold is its send time minus the arrival of the oldest data it
 * acknowledges for the first time; a hold of `delack_ns` or more is the delayed-ACK timer's
 * (simulated receivers: half the scenario's delack_timeout; captured ones only when given). */
#ifndef QREPLAY_DIAGNOSE_H
#define QREPLAY_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/recording.h"
#include "qreplay/schema_diagnose.h"
#include "qreplay/tcpconn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parts of a flow's time; they sum to its FCT. */
typedef enum {
    QR_PART_HANDSHAKE = 0,
    QR_PART_RTO,
    QR_PART_RECOVERY,
    QR_PART_RWND,
    QR_PART_DELACK,
    QR_PART_APP,
    QR_PART_QUEUEING,
    QR_PART_SENDING,
    QR_PART_TLP,   /* waiting for a tail-loss probe (imports: Linux's TCP) */
    QR_PART_LOSS,  /* seen only at the receiver: a hole waited for its resend (trigger unknown) */
    QR_PART_REPLY, /* an exchange's last ACK rode on the other side's reply: its application's
                    * time, never a cause (tcpconn.h QR_TC_PART_REPLY) */
    QR_PARTS
} qr_diag_part;

/* "handshake", "rto", "recovery", "receiver", "delack", "app", "queueing", "sending", "tlp",
 * "loss", "reply". */
const char *qr_diag_part_name(qr_diag_part p);

typedef enum {
    QR_CAUSE_NONE = 0,        /* nothing slowed it beyond sending at full window */
    QR_CAUSE_HANDSHAKE,       /* a SYN or SYN-ACK was lost: the connection timeout */
    QR_CAUSE_RTO,             /* a retransmission timeout, none of the sub-causes below */
    QR_CAUSE_RTO_FEW_DUPACKS, /* RTO: fewer than dupthresh packets after the loss */
    QR_CAUSE_TAIL_DROP,       /* RTO: the lost packets were the last sent */
    QR_CAUSE_ACK_DROP,        /* the data arrived, its ACKs were lost */
    QR_CAUSE_LATE_FR,         /* fast retransmission after more duplicate ACKs than dupthresh */
    QR_CAUSE_FAST_RETRANSMIT, /* loss repaired by a timely fast retransmission */
    QR_CAUSE_CONGESTION,      /* no loss: queueing and sharing the path */
    QR_CAUSE_RECEIVER,        /* the receiver's window limited it */
    QR_CAUSE_DELACK,          /* a delayed ACK held the sender back */
    QR_CAUSE_APP,             /* the application had nothing to send */
    QR_CAUSE_LOST_RETX,       /* RTO: the retransmission it resends was itself lost */
    QR_CAUSE_TLP,             /* a tail loss repaired by a tail-loss probe */
    QR_CAUSE_RACK,            /* a loss repaired by RACK (time-based detection) */
    QR_CAUSE_LOSS,            /* a loss seen only at the receiver: what resent it is unknown */
    QR_CAUSE_UNKNOWN,         /* the evidence cannot tell (no RTT measured, nothing observed) */
    QR_CAUSES
} qr_diag_cause;

/* "none", "handshake-loss", "rto", "rto-few-dupacks", "tail-drop", "ack-drop", "late-fr",
 * "fast-retransmit", "congestion", "receiver-limit", "delack-stall", "app-limited",
 * "lost-retransmit", "tail-loss-probe", "rack", "loss", "unknown". */
const char *qr_diag_cause_name(qr_diag_cause c);

/* A SYN's first retransmission timeout (RFC 6298's initial RTO, 1 s): a lone SYN unanswered for
 * this long, the recording going on, failed its handshake. */
#define QR_DIAG_SYN_RTO_NS 1000000000LL

/* Size classes: < 100 KB, 100 KB - 1 MB, 1 - 10 MB, > 10 MB (decimal units). */
#define QR_DIAG_CLASSES 4
/* The name of size class c ("<100KB", ...; "?" out of range; static storage), and the class of a
 * flow of `bytes`. */
const char *qr_diag_class_name(uint32_t c);
uint32_t qr_diag_class_of(uint64_t bytes);

typedef struct qr_diag_opts {
    double tail;           /* the quantile of slowdown per size class a tail flow is above */
    uint32_t dupthresh;    /* duplicate ACKs that start a fast retransmission (3) */
    int64_t ack_clock_ns;  /* a retransmission this soon after an ACK is ACK-clocked (0: from
                            * the scenario: min(min_rto / 2, 1 ms)) */
    int64_t delack_ns;     /* an ACK held this long is delayed (0: half the scenario's
                            * delayed-ACK timeout for a simulated recording; unknown for an
                            * import) */
    const char *arrivals;  /* a replay's arrival log (NULL: none) */
    const uint32_t *flows; /* select these flows instead of the tail (NULL: the tail) */
    size_t n_flows;
    int all; /* select every flow */
    /* the connection model (tcpconn.h): */
    int64_t rto_min_ns;     /* the hosts' minimum RTO (0: Linux's 200 ms) */
    int64_t idle_ns;        /* application idle that ends an exchange (0: 1 ms) */
    uint64_t path_rate_bps; /* the paths' bottleneck rate (0: the scenario's link rate where the
                             * captures come from its network, else estimated per connection) */
    int no_tlp; /* the captured senders send no tail-loss probes (ns-3's TCP, or Linux with
                 * tcp_early_retrans = 0); a runtime's never do */
    void (*progress)(void *ctx, const char *line); /* may be NULL */
    void *progress_ctx;
} qr_diag_opts;

/* Fill *o with the defaults: the flows above the 99th percentile of slowdown (tail 0.99), a
 * duplicate-ACK threshold of 3, no replay, no progress callback. */
void qr_diag_opts_default(qr_diag_opts *o);

/* One piece of evidence. */
typedef enum {
    QR_EV_LOST = 0,     /* a packet the other end never received */
    QR_EV_RTO,          /* a timer-triggered retransmission */
    QR_EV_FAST,         /* a fast retransmission */
    QR_EV_RECOVERY,     /* a retransmission within a recovery */
    QR_EV_DUPACK,       /* a duplicate ACK reached the sender */
    QR_EV_SYN,          /* a SYN or SYN-ACK sent again */
    QR_EV_DELACK,       /* an ACK the receiver held */
    QR_EV_ZERO_WINDOW,  /* the receiver advertised a zero window */
    QR_EV_BLACKHOLE,    /* a loss fell in a blackhole episode (replay arrivals) */
    QR_EV_TLP,          /* a tail-loss probe */
    QR_EV_RACK,         /* a retransmission by RACK */
    QR_EV_REORDERED,    /* a packet delivered after one sent later: reordered, not lost */
    QR_EV_SPURIOUS,     /* a retransmission of bytes that had arrived */
    QR_EV_UNKNOWN_RETX, /* a retransmission seen only at the receiver */
    QR_EV_KINDS
} qr_diag_event_kind;

/* The name of an evidence event kind ("rto", ...; "?" out of range); static storage. */
const char *qr_diag_event_name(qr_diag_event_kind k);

typedef struct qr_diag_event {
    uint32_t flow;
    qr_diag_event_kind kind;
    int64_t time_ns;   /* true time */
    uint64_t packet;   /* dir << 32 | seq */
    uint64_t tcp_seq;  /* relative sequence (data) or acknowledgment (ACKs) number */
    int64_t value;     /* kind-specific: duplicate ACKs before it, ns held, bytes, ... */
    uint32_t sw, port; /* blackhole: the queue; else 0 */
} qr_diag_event;

typedef struct qr_diag_flow {
    uint32_t flow, src, dst;
    uint64_t bytes;
    uint32_t size_class;
    uint8_t completed, selected;
    int64_t start_ns, fct_ns, ideal_ns;
    double slowdown;
    int64_t part_ns[QR_PARTS];
    qr_diag_cause cause;
    uint32_t data_packets, retransmissions, rtos, fast_retransmits, late_fast_retransmits;
    uint32_t max_dupacks, lost_data, lost_acks, syn_sent, synack_sent, delayed_acks;
    uint32_t zero_windows, blackhole_losses;
    int64_t queue_mean_ns, queue_max_ns; /* one-way delay of data packets above unloaded */
    int64_t path_queue_ns;               /* replay arrivals: mean queueing summed over hops */
    uint32_t worst_sw, worst_port;       /* the hop with the most queueing (replay arrivals) */
    int64_t worst_queue_ns;
    uint32_t first_event, n_events; /* its evidence in qr_diagnosis.events */
    /* the connection as exchanges both ways (tcpconn.h) */
    uint64_t bytes_back;                /* sent by the side that accepted it */
    uint32_t exchanges, first_exchange; /* its exchanges in qr_diagnosis.exchanges */
    uint8_t end;                        /* qr_tc_end */
    uint8_t ideal_measured;             /* 1: ideal from the measured path, 0: from the topology */
    int64_t min_rtt_ns;                 /* measured (-1: no sample) */
    uint64_t path_rate_bps;             /* the rate its ideals use (0: unknown) */
    uint32_t tlps, racks, undos, unknown_retx, not_seen, reordered, spurious;
    uint32_t dupacks, dupack_run; /* duplicate ACKs as captured, both ways (tcpconn.h): all, and
                                     the longest run; imports only (0 for a runtime's flows) */
} qr_diag_flow;

/* One exchange of a connection: data one way between idle periods (tcpconn.h). */
typedef struct qr_diag_exchange {
    uint32_t flow, index, dir; /* dir 0: from the side that opened the connection */
    uint32_t src, dst;         /* its sender's and receiver's hosts */
    uint64_t bytes;
    int64_t start_ns, end_ns, idle_before_ns, ideal_ns; /* end -1: not complete */
    double slowdown;                                    /* 0: unknown */
    uint8_t status, vantage;                            /* qr_tc_status, QR_TC_AT_* */
    int64_t part_ns[QR_TC_PARTS];
    qr_diag_cause cause;
    uint32_t packets, retransmissions, lost, not_seen, reordered, spurious;
    uint32_t trig[QR_TC_TRIGGERS];
} qr_diag_exchange;

#define QR_DIAG_SERIES_MAX 4
#define QR_DIAG_SERIES_MARGIN_NS 500000
#define QR_DIAG_SERIES_SPAN_NS 5000000

typedef struct qr_diagnosis {
    qr_diag_flow *flows; /* every flow of the recording, in order */
    size_t n_flows;
    qr_diag_event *events; /* evidence of selected flows, flow by flow, in time order */
    size_t n_events;
    qr_diag_exchange *exchanges; /* every connection's exchanges, flow by flow */
    size_t n_exchanges;
    int imported, network_known;             /* qr_recording_imported, qr_recording_network_known */
    double class_threshold[QR_DIAG_CLASSES]; /* slowdown at the tail quantile (0: no flows) */
    uint32_t class_flows[QR_DIAG_CLASSES];
    uint32_t class_selected[QR_DIAG_CLASSES][QR_CAUSES]; /* selected flows by cause */
    size_t selected, incomplete;
    int has_arrivals;
    uint64_t arrivals, blackhole_episodes;
    /* replay arrivals: every blackhole episode, and the queues drawn as figure 9 of the replay
     * paper: each queue that selected flows lost packets in a blackhole of (at most
     * QR_DIAG_SERIES_MAX; when none did, the queue of the episode with the most drops), with
     * every arrival at it and at the culprits of those episodes, from QR_DIAG_SERIES_MARGIN_NS
     * before the first such episode's peak to as long after the last one that starts within
     * QR_DIAG_SERIES_SPAN_NS of it */
    qr_row_diag_blackhole *blackholes;
    size_t n_blackholes;
    qr_row_diag_bh_point *series;
    size_t n_series;
    uint32_t series_queues;
    qr_diag_opts opts; /* as resolved */
} qr_diagnosis;

/* Diagnose the flows of rec. Returns 0, QR_ESTATE (the recording has no /received), QR_EVALUE
 * (a selected flow does not exist, a tail outside (0, 1)), an arrival log's error, QR_ENOMEM.
 * qr_diagnosis_free releases *out (also after an error). */
int qr_diagnose(const qr_recording *rec, const qr_diag_opts *opts, qr_diagnosis *out, char *errbuf);
void qr_diagnosis_free(qr_diagnosis *d);

typedef struct qr_krec_set qr_krec_set;
/* Diagnose the flows of hosts' kernel records (krec_recording.h: qreplay record) instead of
 * their captures. No packet's arrival is in a record, so each connection's model is made from
 * the records (diagnose_krec.c says how): exchanges from the applications' socket calls, each
 * ending when its receiver read its last byte; resends with the kernel's own reasons; losses
 * where the receiver's record shows a resend was needed (else the kernel's conclusion); the
 * receiver's zero windows; the application's idle. An exchange whose receiver was not recorded
 * has no end ("no ACKs observed"), one with nothing but sending and no ideal (the path's rate
 * unknown: --path-rate, or the scenario's network) the cause "unknown". Returns as qr_diagnose
 * (the records need no /received). */
int qr_diagnose_records(const qr_krec_set *ks, const qr_diag_opts *opts, qr_diagnosis *out,
                        char *errbuf);

/* An exchange's duration: start to end, or (open) the parts observed until the capture ended. */
int64_t qr_diag_exchange_duration(const qr_diagnosis *d, const qr_diag_exchange *e);

/* Write path (HDF5, staged and renamed): /flows, /evidence, /causes, with replay arrivals
 * /blackholes and /blackhole_series, the options as attributes, the scenario on /. */
int qr_diagnosis_write(const char *path, const qr_scenario *s, const char *recording_id,
                       const qr_diagnosis *d, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
