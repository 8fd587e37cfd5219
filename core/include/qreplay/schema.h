/* qreplay: the one declaration of every HDF5 table the project writes or reads.
 *
 * Each table is a row struct (qr_row_*) and a schema (qr_schema_*: the fields with their names,
 * types and units, and the row size). Writers and readers, in C and in the ns-3 module alike, use
 * these and nothing else: qr_h5_write_rows / qr_h5_table_open_schema to write, qr_h5_read_rows to
 * read (fields are matched by name, so a reader may use a schema whose struct has fewer fields
 * than the file). docs/FORMATS.md describes every table for users; the two are kept in step by a
 * test that compares the field names.
 *
 * Where tables live:
 *   recording.h5   /flows (flow), /hosts (host), /drops_detected (detected), /received (received);
 *                  imported: /import/captures (import_capture), /import/hosts (import_host),
 *                  /import/connections (import_conn)
 *   truth/truth.h5 /drops (drop), /directions (direction)
 *   replay.h5      /drops (drop), /hosts (replay_host), /sampling/records (sample_record)
 *   results.h5     /flows (flow), /runtime/drops and /replay/V/drops (drop),
 *                  /sampling/th_T/records (sample_record), /replay/V/qdiff (qdiff),
 *                  /replay/V/queues (queue_summary), /runtime/busiest_queue and
 *                  /replay/V/busiest_queue (queue_series)
 *   butterfly.h5   /replays (butterfly_replay), /sigma (butterfly_sigma),
 *                  /typical/sigma_S (butterfly_series)
 *   isolated.h5    /connections (isolated)
 *   workload.h5    /flows (workload_flow), /clock (clock)
 *   sample output  /sampling/records (named_record), /sampling/inferred (named_inferred),
 *                  /sampling/flows (named_flow) */
#ifndef QREPLAY_SCHEMA_H
#define QREPLAY_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/h5.h"
#include "qreplay/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A table's description: its fields and the size of its row struct. */
typedef struct qr_h5_schema {
    const char *name; /* the row kind, e.g. "flow" */
    const qr_h5_field *fields;
    size_t n_fields;
    size_t row_size;
} qr_h5_schema;

/* A flow of a run: what it was asked to send and when it completed. */
typedef struct qr_row_flow {
    uint32_t id, src, dst;
    uint16_t src_port, dst_port;
    uint64_t bytes;
    int64_t start_ns, end_ns, fct_ns; /* end and fct -1: not completed */
    uint32_t incast;                  /* 0: background, else the incast event */
    uint8_t completed, closed;
} qr_row_flow;
extern const qr_h5_schema qr_schema_flow;

/* A host of a recording. */
typedef struct qr_row_host {
    uint32_t host, addr;
    int64_t clock_offset_ns;
    uint64_t packets, bytes;
    char pcap[32]; /* relative to the recording folder */
} qr_row_host;
extern const qr_h5_schema qr_schema_host;

/* A drop a host can know: a gap in a receiver's IP IDs, or the tail its sender's count shows. */
typedef struct qr_row_detected {
    uint32_t receiver; /* the host that saw the gap (for tails: the sender) */
    uint32_t dir;
    uint64_t seq;
    uint64_t packet;
    uint16_t ip_id;
    uint8_t tail; /* 1: from the sender's count after the last received packet */
} qr_row_detected;
extern const qr_h5_schema qr_schema_detected;

/* When a packet's last bit reached its destination host. */
typedef struct qr_row_received {
    uint32_t dir, seq;
    int64_t time_ns;
} qr_row_received;
extern const qr_h5_schema qr_schema_received;

/* An imported capture: where it came from and what was read of it. */
typedef struct qr_row_import_capture {
    uint32_t capture;
    char path[256];
    uint32_t host;
    char owner[48]; /* the address it belongs to */
    char link[32];  /* libpcap's link type name */
    uint64_t size_bytes;
    char sha256[65];
    uint64_t frames, tcp, sent, received;
    uint64_t skip_not_ip, skip_not_tcp, skip_fragment, skip_snaplen, skip_bad_link, skip_bad_ip,
        skip_bad_tcp;
    uint64_t left_same_host, left_not_owner, left_duplicate;
    uint64_t clamped; /* sent packets whose timestamp went back */
    char warning[256];
} qr_row_import_capture;
extern const qr_h5_schema qr_schema_import_capture;

/* A host of an imported recording. */
typedef struct qr_row_import_host {
    uint32_t host;
    uint8_t captured, reconstructed;
    char addr[48];
    uint64_t packets, reconstructed_packets;
    double clock_offset_ns, clock_residual_ns; /* the reconciliation's estimate */
    uint32_t clock_reference, clock_pairs;
    int64_t clock_applied_ns; /* subtracted from its captured times (0: none) */
} qr_row_import_host;
extern const qr_h5_schema qr_schema_import_host;

/* A connection of an imported recording: flow `flow`, side 0 its initiator. */
typedef struct qr_row_import_conn {
    uint32_t flow;
    char addr0[48], addr1[48];
    uint16_t port0, port1;
    uint8_t family, syn, fin0, fin1;
    uint64_t bytes0, bytes1, packets0, packets1;
    uint8_t evidence0, evidence1; /* qr_import_evidence of each direction */
    uint64_t drops0, drops1;
} qr_row_import_conn;
extern const qr_h5_schema qr_schema_import_conn;

/* A drop at a switch (ground truth of a runtime, or a replay's). */
typedef struct qr_row_drop {
    uint64_t packet;
    uint32_t dir;
    int64_t time_ns;
    uint32_t sw, port, bytes;
    uint8_t reason; /* qr_decision */
    uint8_t tagged;
    uint64_t queue_bytes; /* before the packet */
    int64_t threshold;
} qr_row_drop;
extern const qr_h5_schema qr_schema_drop;

/* Ground-truth counts of a flow direction. */
typedef struct qr_row_direction {
    uint32_t dir, flow, src, dst;
    uint64_t sent, sent_bytes, delivered, delivered_bytes, dropped, dropped_bytes;
} qr_row_direction;
extern const qr_h5_schema qr_schema_direction;

/* A planted-drop rule of [faults] drop (faults.h) and what it did in the runtime. */
#define QR_FAULT_TEXT_MAX 64
typedef struct qr_row_fault {
    uint32_t rule; /* from 1, as in the scenario */
    char text[QR_FAULT_TEXT_MAX];
    uint32_t flow, dir;
    char kind[8];
    uint32_t first, last, sw;
    uint64_t counted, dropped;
} qr_row_fault;
extern const qr_h5_schema qr_schema_fault;

/* A link fault of [faults] gray, blackhole, delay or rate (linkfault.h), on one directed link, and
 * what it did in the runtime. */
typedef struct qr_row_link_fault {
    uint32_t fault; /* from 1 */
    char kind[12];
    char text[QR_FAULT_TEXT_MAX];
    uint32_t link;
    char name[24];
    uint32_t from_node, to_node; /* switch or host number, as from_kind/to_kind say */
    char from_kind[8], to_kind[8];
    double share;
    int64_t delay_ns;
    uint64_t rate_bps, crossed, dropped;
} qr_row_link_fault;
extern const qr_h5_schema qr_schema_link_fault;

/* blame.h5 (qreplay blame, blame.h): one cable, its votes under both methods and the truth. */
#define QR_LINK_NAME_MAX 24
typedef struct qr_row_blame_link {
    uint32_t link; /* the cable's lower directed link id (topology.h) */
    char name[QR_LINK_NAME_MAX];
    char layer[12]; /* host-edge, edge-agg, agg-core */
    uint32_t a, b;  /* its ends: a host or switch number (a is the lower end), b a switch */
    double votes;
    uint32_t voters, rank;
    uint8_t flagged;
    double replay_votes;
    uint32_t replay_voters, replay_rank;
    uint8_t replay_flagged;
    uint64_t replay_drops;
    uint8_t faulty;
    uint64_t fault_drops, congestion_drops;
} qr_row_blame_link;
extern const qr_h5_schema qr_schema_blame_link;

/* blame.h5: one flow direction that voted. */
typedef struct qr_row_blame_conn {
    uint32_t dir, flow, src, dst;
    int64_t first_loss_ns;
    uint32_t losses, unexplained, hops;
    char culprit[QR_LINK_NAME_MAX], replay_culprit[QR_LINK_NAME_MAX];
    char true_link[QR_LINK_NAME_MAX];
    char true_cause[12];
    int32_t correct, replay_correct; /* 1 right, 0 wrong, -1 no truth */
} qr_row_blame_conn;
extern const qr_h5_schema qr_schema_blame_conn;

/* blame.h5: the flag rule on the first N voting connections. */
typedef struct qr_row_blame_curve {
    char method[8];
    uint32_t connections, fault_rank, flagged, true_flagged;
    double precision, recall;
} qr_row_blame_curve;
extern const qr_h5_schema qr_schema_blame_curve;

/* blame.h5: one method's result. */
typedef struct qr_row_blame_summary {
    char method[8];
    uint32_t connections;
    double votes;
    uint32_t flagged, true_flagged, faulty;
    double precision, recall, culprit_accuracy;
    uint32_t scored, detect_after, rank1_after;
} qr_row_blame_summary;
extern const qr_h5_schema qr_schema_blame_summary;

/* truth.h5 /probes (pingmesh.h): one probe of the runtime's Pingmesh agents: what its agent logged
 * (send time, round-trip time) and, as truth, where it was lost. */
typedef struct qr_row_probe {
    uint32_t probe, pair, src, dst;
    uint16_t sport;
    int64_t sent_ns;
    int64_t rtt_ns;   /* -1: no answer before the run ended */
    uint8_t echoed;   /* the probed host sent an answer */
    uint8_t lost_in;  /* 0 not dropped, 1 the request, 2 the answer */
    uint32_t drop_sw; /* QR_PROBE_AT_HOST: the sender's NIC queue */
    uint32_t drop_port;
    uint8_t drop_reason; /* a qr_decision */
    int64_t drop_ns;
} qr_row_probe;
extern const qr_h5_schema qr_schema_probe;

/* pingmesh.h5 (qreplay pingmesh, pingmesh.h): one probe pair. */
typedef struct qr_row_pm_pair {
    uint32_t pair, src, dst, src_rack, dst_rack, src_pod, dst_pod;
    uint64_t probes, lost;
    double drop_rate;
    int64_t p50_ns, p99_ns; /* round-trip times of the answered probes; -1 none */
    uint64_t fault_lost, congestion_lost;
} qr_row_pm_pair;
extern const qr_h5_schema qr_schema_pm_pair;

/* pingmesh.h5: one cell of the rack matrix. */
typedef struct qr_row_pm_rack {
    uint32_t src_rack, dst_rack, src_pod, dst_pod, pairs;
    uint64_t probes, lost;
    double drop_rate;
    int64_t p50_ns, p99_ns;
} qr_row_pm_rack;
extern const qr_h5_schema qr_schema_pm_rack;

/* pingmesh.h5: one candidate place of the detection rule. */
typedef struct qr_row_pm_place {
    char kind[8]; /* spine, pod, rack, server, racks */
    char name[24];
    uint32_t index;
    uint64_t probes, lost;
    double rate, rest_rate, llr;
    uint32_t flagged; /* order flagged, from 1; 0 not flagged */
    uint32_t suspects;
    uint8_t faulty; /* truth: a suspect cable is faulty */
} qr_row_pm_place;
extern const qr_h5_schema qr_schema_pm_place;

/* pingmesh.h5: the rule rerun on the first N probes sent. */
typedef struct qr_row_pm_curve {
    uint64_t probes;
    int64_t time_ns; /* when the N-th probe's outcome was known (its send time + timeout) */
    uint32_t flagged, right;
    uint8_t detected; /* every faulty cable is a suspect of a flagged place */
} qr_row_pm_curve;
extern const qr_h5_schema qr_schema_pm_curve;

/* pingmesh.h5: the run's probing and the rule's score. */
typedef struct qr_row_pm_summary {
    int64_t interval_ns, timeout_ns;
    uint32_t size, pairs;
    uint64_t sent, scored, unresolved, answered, lost, late, fault_lost, congestion_lost, host_lost;
    double drop_rate;
    uint32_t flagged, right, faulty, covered;
    double precision, recall, mean_suspects;
    uint64_t detect_after;
    int64_t detect_after_ns;
    uint64_t probe_bytes, traffic_bytes;
    double probe_share, host_probe_bps_max, link_share_max;
} qr_row_pm_summary;
extern const qr_h5_schema qr_schema_pm_summary;

/* trace.h5 (qreplay trace, hoptrace.h): a matched packet. */
typedef struct qr_row_hop_packet {
    uint64_t packet;
    uint32_t dir, flow, src, dst;
    uint16_t sport, dport;
    uint8_t flags; /* TCP flags */
    uint8_t retransmit, detected;
    uint8_t fate; /* 0: left its last switch; else the qr_decision that dropped it */
    uint32_t seq, payload, bytes;
    int64_t sent_ns;           /* recorded send time, on the sender's clock */
    int64_t first_ns, last_ns; /* arrival at its first and last switch */
    uint32_t hops;
    int64_t queue_ns; /* queueing summed over the hops that admitted it */
    uint32_t drop_switch, drop_port;
} qr_row_hop_packet;
extern const qr_h5_schema qr_schema_hop_packet;

/* One hop of a matched packet. */
typedef struct qr_row_hop {
    uint64_t packet;
    uint32_t dir, hop; /* from 1 */
    int64_t time_ns;
    uint32_t sw, port, bytes;
    uint8_t decision, tagged;
    int64_t queue_ns;
    uint64_t queue_bytes, total_bytes;
    int64_t threshold;
} qr_row_hop;
extern const qr_h5_schema qr_schema_hop;

/* The drop debugger: one drop of a matched packet. */
typedef struct qr_row_hop_drop {
    uint64_t packet;
    uint32_t dir, flow, src, dst, hop;
    int64_t time_ns;
    uint32_t sw, port, bytes;
    uint8_t reason, tagged, detected, retransmit;
    uint32_t payload;
    uint64_t queue_bytes, total_bytes;
    int64_t threshold;
    uint32_t link; /* the directed link it was lost on */
    char link_name[24];
    int64_t resent_ns; /* the sender's next send of the same sequence (recorded time); -1: none,
                          -2: nothing to resend (no data, SYN or FIN) */
} qr_row_hop_drop;
extern const qr_h5_schema qr_schema_hop_drop;

/* The latency profiler: one queue at one hop of the matched packets' paths. */
typedef struct qr_row_hop_profile {
    uint32_t hop, sw, port;
    uint64_t packets;
    double mean_ns;
    int64_t p50_ns, p99_ns, max_ns;
    double share; /* of all the matched packets' queueing */
} qr_row_hop_profile;
extern const qr_h5_schema qr_schema_hop_profile;

/* What the trace read, matched and kept. */
typedef struct qr_row_hop_summary {
    uint64_t arrivals, packets, unknown_arrivals, matched, unseen, kept, hops_kept;
    uint64_t delivered, dropped, drops_threshold, drops_buffer_full, drops_tagged, drops_fault;
    uint64_t detected, resent;
    double queue_mean_ns;
    int64_t queue_p99_ns, queue_max_ns;
    uint64_t buffer_bytes, rate_bps;
} qr_row_hop_summary;
extern const qr_h5_schema qr_schema_hop_summary;

/* diagnosis.h5 (qreplay diagnose, diagnose.h): one flow. */
typedef struct qr_row_diag_flow {
    uint32_t flow, src, dst;
    uint64_t bytes;
    char size_class[12];
    uint8_t completed, tail;
    int64_t start_ns, fct_ns, ideal_ns;
    double slowdown;
    int64_t handshake_ns, rto_ns, recovery_ns, receiver_ns, delack_ns, app_ns, queueing_ns,
        sending_ns;
    char cause[20];
    uint32_t data_packets, retransmissions, rtos, fast_retransmits, late_fast_retransmits,
        max_dupacks, lost_data, lost_acks, syn_sent, synack_sent, delayed_acks, zero_windows,
        blackhole_losses;
    int64_t queue_mean_ns, queue_max_ns, path_queue_ns;
    uint32_t worst_switch, worst_port;
    int64_t worst_queue_ns;
} qr_row_diag_flow;
extern const qr_h5_schema qr_schema_diag_flow;

/* One piece of a flow's evidence. */
typedef struct qr_row_diag_event {
    uint32_t flow;
    char kind[16];
    int64_t time_ns;
    uint64_t packet, tcp_seq;
    int64_t value;
    char detail[20];
    uint32_t sw, port;
} qr_row_diag_event;
extern const qr_h5_schema qr_schema_diag_event;

/* A shared-buffer blackhole episode of the replay arrivals (blackhole.h) and the losses of
 * diagnosed flows that fell in it. */
typedef struct qr_row_diag_blackhole {
    uint32_t sw, port;
    int64_t start_ns, end_ns;
    uint64_t drops;
    int64_t peak_ns;
    uint64_t peak_bytes, queue_bytes;
    int64_t peak_threshold, threshold;
    uint64_t peak_total_bytes, total_bytes;
    int32_t culprit_port; /* -1: none */
    uint64_t culprit_growth_bytes;
    uint32_t selected_losses;
    int32_t series; /* its queue's series in /blackhole_series, -1: not drawn */
} qr_row_diag_blackhole;
extern const qr_h5_schema qr_schema_diag_blackhole;

/* One arrival at a blackhole's queue or at a culprit of it, around the episodes (figure 9). */
typedef struct qr_row_diag_bh_point {
    uint32_t series;
    int64_t time_ns;
    uint32_t sw, port;
    uint8_t culprit, dropped;
    uint32_t bytes;
    uint64_t queue_bytes, total_bytes;
    int64_t threshold;
    uint64_t drops;
} qr_row_diag_bh_point;
extern const qr_h5_schema qr_schema_diag_bh_point;

/* Tail flows of a size class with one cause. */
typedef struct qr_row_diag_cause {
    char size_class[12];
    char cause[20];
    uint32_t flows, tail_flows;
    double tail_slowdown;
} qr_row_diag_cause;
extern const qr_h5_schema qr_schema_diag_cause;

/* One segment of a traced connection (/tcp_trace/<flow>/segments; tcptrace.h). */
typedef struct qr_row_tt_segment {
    int64_t time_ns;
    char end[9], dir[3];
    uint8_t flags;
    uint64_t seq, ack;
    uint32_t len, window;
    char retx[16];
    uint8_t lost;
    char ack_kind[10];
    uint32_t dupacks;
    int64_t held_ns;
    uint64_t packet;
} qr_row_tt_segment;
extern const qr_h5_schema qr_schema_tt_segment;

/* One change of a traced TCP variable (/tcp_trace/<flow>/vars). */
typedef struct qr_row_tt_var {
    int64_t time_ns;
    char var[12];
    int64_t value;
} qr_row_tt_var;
extern const qr_h5_schema qr_schema_tt_var;

/* What a replay host sent. */
typedef struct qr_row_replay_host {
    uint32_t host;
    uint64_t packets, bytes;
} qr_row_replay_host;
extern const qr_h5_schema qr_schema_replay_host;

/* A host's clock correction in a replay with reconciled clocks (qr_recording_estimate_clocks). */
typedef struct qr_row_replay_clock {
    uint32_t host;
    int64_t correction_ns; /* taken out of its recorded send times (qr_clock_correction) */
    double residual_ns;
    uint32_t reference, pairs;
    double estimate_ns, bound_ns; /* the estimate, and how far the truth can be from it */
} qr_row_replay_clock;
extern const qr_h5_schema qr_schema_replay_clock;

/* A sampling record of flow direction `dir` (qr_sample_record). */
typedef struct qr_row_sample_record {
    uint32_t dir;
    uint64_t index;
    int64_t time_ns;
    double gap_ns;
    int64_t gap_num, gap_den; /* the gap exactly: gap_num / gap_den ns */
} qr_row_sample_record;
extern const qr_h5_schema qr_schema_sample_record;

/* One matched arrival (qr_qdiff_row). */
typedef struct qr_row_qdiff {
    uint64_t packet;
    uint32_t sw, port;
    int64_t time_run_ns, time_rep_ns;
    uint64_t qdiff_bytes, qdiff_sym_bytes;
    int64_t qlen_diff_bytes;
} qr_row_qdiff;
extern const qr_h5_schema qr_schema_qdiff;

/* qdiff summary of one queue, in MTU. */
typedef struct qr_row_queue_summary {
    uint32_t sw, port;
    uint64_t count;
    double mean, p50, p99, max, sym_mean, sym_p99;
    double len_diff_mean, len_longer, len_shorter; /* qr_qlen_diff: MTU, fractions */
} qr_row_queue_summary;
extern const qr_h5_schema qr_schema_queue_summary;

/* A queue's length at each arrival. */
typedef struct qr_row_queue_series {
    int64_t time_ns;
    uint64_t queue_bytes;
} qr_row_queue_series;
extern const qr_h5_schema qr_schema_queue_series;

/* One closed-loop replay of the butterfly experiment against its runtime. */
typedef struct qr_row_butterfly_replay {
    int64_t sigma_ns;
    uint32_t replay;
    int64_t short_fct_ns; /* -1: the short flow did not complete */
    uint8_t short_reproduced, run_reproduced;
    uint64_t drops;
    uint64_t matched;            /* bottleneck arrivals present in both runs */
    int64_t first_divergence_ns; /* -1: never */
    double zero_after_divergence;
    uint64_t max_diff_bytes;
    double wall_s;
} qr_row_butterfly_replay;
extern const qr_h5_schema qr_schema_butterfly_replay;

/* The replays of one sigma, summarized. */
typedef struct qr_row_butterfly_sigma {
    int64_t sigma_ns;
    uint32_t replays;
    double short_reproduced_pct, run_reproduced_pct;
    double zero_after_divergence_mean;
    uint32_t typical_replay;
} qr_row_butterfly_sigma;
extern const qr_h5_schema qr_schema_butterfly_sigma;

/* The bottleneck queue-length difference at a matched arrival. */
typedef struct qr_row_butterfly_series {
    int64_t time_ns;
    uint64_t diff_bytes;
} qr_row_butterfly_series;
extern const qr_h5_schema qr_schema_butterfly_series;

/* One isolated per-connection replay. */
typedef struct qr_row_isolated {
    uint32_t flow;
    int64_t sigma_ns;
    uint32_t stream;
    uint64_t recorded, replayed;
    uint8_t identical;
    int64_t first_mismatch;
    int64_t max_send_diff_ns, p99_send_diff_ns;
    uint64_t late;
    int64_t max_late_ns;
    uint64_t unknown;
} qr_row_isolated;
extern const qr_h5_schema qr_schema_isolated;

/* A scheduled flow (qreplay workload). */
typedef struct qr_row_workload_flow {
    uint64_t id;
    uint32_t src, dst;
    uint64_t bytes;
    int64_t start_ns;
    uint32_t incast;
} qr_row_workload_flow;
extern const qr_h5_schema qr_schema_workload_flow;

/* A host's clock offset. */
typedef struct qr_row_clock {
    uint32_t host;
    int64_t offset_ns;
} qr_row_clock;
extern const qr_h5_schema qr_schema_clock;

/* qreplay clocks: a host's estimated clock offset and, on a simulated recording, its error. */
typedef struct qr_row_clock_estimate {
    uint32_t host, reference, pairs;
    double estimate_ns, residual_ns;
    int64_t true_ns;          /* its true offset minus the reference's (0 when unknown) */
    double error_ns;          /* estimate_ns - true_ns (0 when unknown or not estimated) */
    double path_ns, bound_ns; /* the true offset lies in [path - bound, path + bound] */
    int64_t correction_ns;    /* what a reconciled replay takes out (qr_clock_correction) */
} qr_row_clock_estimate;
extern const qr_h5_schema qr_schema_clock_estimate;

/* qreplay sample's tables: flows named by text. */
typedef struct qr_row_named_record {
    char flow[QR_FLOW_NAME_MAX];
    uint64_t index;
    int64_t time_ns;
    double gap_ns;
    int64_t gap_num, gap_den;
} qr_row_named_record;
extern const qr_h5_schema qr_schema_named_record;

typedef struct qr_row_named_inferred {
    char flow[QR_FLOW_NAME_MAX];
    uint64_t index;
    int64_t true_ns, inferred_ns;
} qr_row_named_inferred;
extern const qr_h5_schema qr_schema_named_inferred;

typedef struct qr_row_named_flow {
    char flow[QR_FLOW_NAME_MAX];
    uint64_t packets, records;
    int64_t max_error_ns;
} qr_row_named_flow;
extern const qr_h5_schema qr_schema_named_flow;

/* Every schema above, for documentation checks; NULL-terminated. */
extern const qr_h5_schema *const qr_schemas[];

/* Create an empty table of schema s at path. Caller owns *out (qr_h5_table_close). */
int qr_h5_table_open_schema(qr_h5_table **out, qr_h5 *f, const char *path, const qr_h5_schema *s,
                            char *errbuf);

/* Write a whole table: n rows (structs of s) at path. Returns 0 or the writer's error. */
int qr_h5_write_rows(qr_h5 *f, const char *path, const qr_h5_schema *s, const void *rows, size_t n,
                     char *errbuf);

/* Read a whole table into an allocated array of s's row structs. Caller owns *rows
 * (qr_h5_rows_free). Returns 0, QR_ENOTFOUND, QR_EFORMAT or QR_ENOMEM, naming the file and table.
 */
int qr_h5_read_rows(qr_h5_reader *r, const char *path, const qr_h5_schema *s, void **rows,
                    size_t *n_rows, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
