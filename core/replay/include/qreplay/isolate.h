/* qreplay: the rules of an isolated replay (qreplay isolate): one recorded connection replayed
 * alone, its TCP closed loop, through packet correctors that give every packet the fate the
 * recording says it had (lost, or arrived at its recorded time). The ns-3 module runs it
 * (isolated-replay.cc); what it replays, each packet's fate and when it stops are decided here. */
#ifndef QREPLAY_ISOLATE_H
#define QREPLAY_ISOLATE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/compare.h"
#include "qreplay/light.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One recorded connection: its packets per direction (0 data, 1 ACKs: the runtime's directions
 * 2 flow and 2 flow + 1) with their true send times (the host's clock offset taken out), in
 * recorded order. */
typedef struct qr_isolated_conn {
    uint32_t flow;
    qr_tcp_sent *sent[2];
    size_t n_sent[2];
    int64_t last_ns;        /* the latest true send time (or the flow's start) */
    int64_t recv_offset[2]; /* the receiving host's clock offset of each direction */
} qr_isolated_conn;

/* The connection of flow `flow` in rec, each host's clock offset (offsets, one per host; NULL: 0,
 * the times already on one clock) taken out of its times. The offsets are an input the program
 * passes where it can be seen: a simulated run's true ones (qr_truth_clock_offsets) or an
 * estimate. Caller owns *out (qr_isolated_conn_free, also after an error). Returns 0, QR_EVALUE
 * ("flow 12: the recording has 10 flows") or QR_ENOMEM. */
int qr_isolated_conn_of(const qr_recording *rec, const int64_t *offsets, uint32_t flow,
                        qr_isolated_conn *out, char *errbuf);
void qr_isolated_conn_free(qr_isolated_conn *c);

/* The fate of packet seq of local direction dir: 1 with *lost (no receive record: the network
 * dropped it) or *arrive_ns (its last bit reached the receiver, true time) and *ce (it arrived
 * marked ECN CE: /received_ce); 0 for a packet the recording does not have (the replay sent more
 * than the runtime did). */
int qr_isolated_fate(const qr_isolated_conn *c, const qr_recording *rec, uint32_t dir, uint32_t seq,
                     int *lost, int64_t *arrive_ns, int *ce);

/* DETER's order of events for one connection whose isolated replay delivers its packets at once
 * (QR_ARRIVE_AT_ONCE), held by gates[0..*n) (qr_light_gate: sorted by (dir, seq), each once): got
 * what that replay sent (per local direction, in send order). Where it differs from the runtime,
 * the first differing packet (earliest recorded send time over both directions) was sent by an
 * end at a recorded time T; in the runtime that end had received the other direction's packets
 * up to T, and the next one arrived after its packet went: a timer fired between two arrivals.
 * The gate that keeps it: that next packet held until the end has sent the differing one (its
 * index + 1 packets), added to gates (or raised, for a packet already gated; cap: room in gates).
 * Returns 1 with the gate added (run the replay again), 0 when got equals the runtime (nothing to
 * add), -1 when no gate explains the difference: the replay sent a packet the runtime did not
 * (or too early), the end had received more, or the packet is already gated as far (keep the
 * connection's receive times instead). */
int qr_isolated_next_gate(const qr_isolated_conn *c, const qr_recording *rec,
                          const qr_tcp_sent *const got[2], const size_t n_got[2],
                          qr_light_gate *gates, size_t *n, size_t cap);

/* When the replay stops: long enough after the last recorded packet for a backed-off RTO or two
 * (4 min_rto + delack_timeout + 1 ms), but not past the runtime's own [traffic] stop, where the
 * recording of a connection still open ends. */
int64_t qr_isolated_stop_ns(const qr_config *c, int64_t last_ns);

/* The isolated replays of one timing jitter (sigma), summed: how many connections, how many
 * reproduced their recorded packets exactly, and the worst send-time differences and lateness. */
typedef struct qr_isolated_summary {
    uint64_t connections, identical;
    uint64_t late;                /* packets a corrector could not hold back to their time */
    int64_t max_send_diff_ns;     /* the largest send-time difference of any connection */
    int64_t max_p99_send_diff_ns; /* the largest per-connection p99 of them */
    int64_t max_late_ns;
} qr_isolated_summary;

/* Add one connection's replay (an isolated.h5 /connections row) to s (start from {0}). */
void qr_isolated_summary_add(qr_isolated_summary *s, const qr_row_isolated *r);

#ifdef __cplusplus
}
#endif
#endif
