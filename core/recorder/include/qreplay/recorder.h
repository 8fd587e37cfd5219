/* qreplay: the closed-loop runtime's recorder. A runtime (the ns-3 module) reports what happens to
 * packets and flows; the recorder keeps the books and writes the run folder:
 *
 *   DIR/pcap/hNNNN.pcap     what each host sent, stamped with the host's (offset) clock
 *   DIR/recording.h5        what hosts know: flows and their completion, hosts, the drops
 *                           receivers detected (IP ID gaps, and tails a sender's count shows),
 *                           when each packet reached its destination (on the receiver's clock)
 *   DIR/truth/truth.h5      ground truth: switch drops, per-direction conservation, faults, probes
 *   DIR/truth/arrivals.qra  every switch-queue arrival
 *
 * The books: per flow direction, packets and bytes sent, delivered and dropped (sent = delivered +
 * dropped + in flight, and in flight is 0 at a completed run's end); per host, packets and bytes
 * sent; per flow, its completion (last byte received) and whether it closed or failed. The run is
 * over (qr_recorder_all_done) when every flow has completed and closed and nothing is in flight.
 * In a run cut by [traffic] stop, only the packets sent before the tail cutoff (qr_tail_cutoff_ns)
 * can be known lost: the runtime calls qr_recorder_cutoff then.
 *
 * Every file is written under a temporary name (NAME.partial-PID) and renamed by
 * qr_recorder_commit; recording.h5, written last, marks a complete recording (it is removed when
 * the recorder is created). A recorder destroyed before its commit removes what it wrote. */
#ifndef QREPLAY_RECORDER_H
#define QREPLAY_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/faults.h"
#include "qreplay/flowtable.h"
#include "qreplay/linkfault.h"
#include "qreplay/packet.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_recorder qr_recorder;

typedef struct qr_recorder_opts {
    const char *out_dir;       /* the run folder; NULL or "": keep the books, write nothing */
    const char *scenario_name; /* shown in figures (NULL: "scenario") */
    int arrivals;              /* write truth/arrivals.qra */
} qr_recorder_opts;

/* One flow's end as the recorder saw it. */
typedef struct qr_recorder_flow {
    int64_t end_ns; /* its last byte received, ns; -1 if never */
    uint8_t closed, failed;
} qr_recorder_flow;

/* A recorder for flows ft (borrowed until destroy) between hosts whose clocks read offsets[h] ns
 * ahead of true time (copied; ft's host count of them). With an output folder it makes pcap/ and
 * truth/, removes an old recording.h5 and opens every host's pcap (and the arrival log) under
 * temporary names. Caller owns *out (qr_recorder_destroy). Returns 0, QR_ENOMEM, or the writers'
 * errors naming the file. */
int qr_recorder_create(qr_recorder **out, const qr_scenario *s, const qr_flow_table *ft,
                       const int64_t *offsets, const qr_recorder_opts *o, char *errbuf);
/* Close and free; without a commit, remove what the recorder wrote. NULL is allowed. */
void qr_recorder_destroy(qr_recorder *r);

/* Host `host` put packet pk on the wire at true time now_ns; dir is its flow direction, or
 * QR_DIR_NONE when it is none of the flows' (counted as unknown, still captured). The capture
 * stamps it with the host's clock (pk->time_ns is set). Returns 0 or the pcap writer's error. */
int qr_recorder_sent(qr_recorder *r, uint32_t host, uint32_t dir, qr_packet *pk, int64_t now_ns,
                     char *errbuf);
/* A packet the runtime could not decode left a host: counted as unknown. */
void qr_recorder_unknown(qr_recorder *r);

/* Packet `seq` of direction dir (payload and headers `bytes`) reached host `host` at true time
 * now_ns: delivered, and its receive time on the host's clock for /received; ce: it arrived
 * marked ECN CE (also in /received_ce, written when the scenario marks). */
void qr_recorder_delivered(qr_recorder *r, uint32_t host, uint32_t dir, uint64_t seq,
                           uint64_t bytes, int64_t now_ns, int ce);
/* What host `host` saw of an arriving packet: its direction (resolved from the 5-tuple) and IP
 * ID; a gap in the IP IDs is a detected drop (/drops_detected). */
int qr_recorder_observed(qr_recorder *r, uint32_t host, uint32_t dir, uint16_t ip_id);

/* A switch-queue arrival (of a recorded direction, or of none: then counted as unknown and, if
 * not admitted, as another drop). Logged; a drop is a /drops row and leaves the flight. Returns 0
 * or the log writer's error. */
int qr_recorder_arrival(qr_recorder *r, const qr_arrival *a, char *errbuf);
/* A packet lost outside the switch queues (a device or IP drop): counted as another drop; a
 * packet of a recorded direction (known) also leaves the flight. */
void qr_recorder_other_drop(qr_recorder *r, int known);
/* A packet dropped by a host's own NIC queue. */
void qr_recorder_host_queue_drop(qr_recorder *r);

/* Flow f received its last byte at now_ns (the first report counts), closed, or failed. */
void qr_recorder_completed(qr_recorder *r, uint32_t f, int64_t now_ns);
void qr_recorder_closed(qr_recorder *r, uint32_t f);
void qr_recorder_failed(qr_recorder *r, uint32_t f);
/* Every flow completed and closed (or failed), and no recorded packet in flight. */
int qr_recorder_all_done(const qr_recorder *r);
/* The tail cutoff: remember how many packets each direction had sent. */
void qr_recorder_cutoff(qr_recorder *r);

/* The run's end and what the runtime knows of it for truth.h5. */
typedef struct qr_recorder_end {
    qr_end_reason reason;
    int64_t sim_end_ns;
    uint64_t events;
    double wall_s;
    const qr_faults *faults;           /* NULL: none */
    const qr_link_faults *link_faults; /* NULL: none */
    int probed;                        /* the run probed: /probes is written */
    const qr_row_probe *probes;
    size_t n_probes;
    int traced; /* the hosts ran path discovery (traceroute.h): recording.h5 gets its log */
    const qr_row_traceroute *traceroutes;
    size_t n_traceroutes;
    const qr_row_path *paths;
    size_t n_paths;
    const qr_row_icmp *icmp; /* the switches' ICMP counters per epoch */
    size_t n_icmp;
    uint64_t trace_fault_drops, trace_buffer_drops; /* traceroute packets dropped (truth) */
} qr_recorder_end;

/* The run ended (reason): detect the lost tails, once (every packet of a completed run, or those
 * sent before the cutoff; none in a run cut before it). Returns 0, QR_ESTATE (a receiver saw more
 * packets than were sent, or called twice) or QR_ENOMEM. */
int qr_recorder_end_run(qr_recorder *r, qr_end_reason reason, char *errbuf);

/* Write the run folder: end the run if qr_recorder_end_run was not called, then, with an output
 * folder, close the captures and the log, give them their names, write truth/truth.h5 and
 * recording.h5 (last). Returns 0, QR_ESTATE (committed twice), or the errors of
 * qr_recorder_end_run and of the writers, naming the file. */
int qr_recorder_commit(qr_recorder *r, const qr_recorder_end *end, char *errbuf);

/* The books (borrowed from r until its next call or destroy). */
const qr_row_direction *qr_recorder_directions(const qr_recorder *r, size_t *n);
const qr_recorder_flow *qr_recorder_flows(const qr_recorder *r, size_t *n);
const qr_row_drop *qr_recorder_drops(const qr_recorder *r, size_t *n);
const qr_row_detected *qr_recorder_detected(const qr_recorder *r, size_t *n);
const qr_row_received *qr_recorder_received(const qr_recorder *r, size_t *n);
/* Per direction, packets sent by the cutoff; NULL if the cutoff never came (*n directions). */
const uint64_t *qr_recorder_sent_at_cutoff(const qr_recorder *r, size_t *n);

/* The counters: packets hosts sent (recorded or not), flows completed, recorded packets in flight,
 * drops outside the switch queues, drops in hosts' NIC queues, packets of no recorded direction. */
typedef struct qr_recorder_counts {
    uint64_t packets, flows_done, in_flight, other_drops, host_queue_drops, unknown;
} qr_recorder_counts;
/* The counters now (a copy). */
qr_recorder_counts qr_recorder_counters(const qr_recorder *r);

/* The pcap of host h relative to the run folder ("pcap/h0007.pcap") into buf. */
void qr_recorder_pcap_name(uint32_t host, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
