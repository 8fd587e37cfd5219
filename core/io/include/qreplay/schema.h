/* qreplay: how HDF5 tables are declared, read and written, and the tables of a run's files.
 *
 * The analyses' files have their tables in their own headers (schema_blame.h, schema_diagnose.h,
 * schema_hoptrace.h, schema_pingmesh.h, schema_tcptrace.h), declared the same way.
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

#include "qreplay/faults.h"
#include "qreplay/h5.h"
#include "qreplay/linkfault.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/pingmesh.h"
#include "qreplay/traceroute.h"

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

/* A host's pcap as the recording wrote it (recording.h5 /pcaps): a reader refuses a pcap of
 * another size or digest, which another run put there. */
typedef struct qr_row_pcap {
    uint32_t host;
    uint64_t bytes;
    char sha256[65];
} qr_row_pcap;
extern const qr_h5_schema qr_schema_pcap;

/* qr_row_detected: the row struct is in lossdet.h. */
extern const qr_h5_schema qr_schema_detected;

/* When a packet's last bit reached its destination host. */
typedef struct qr_row_received {
    uint32_t dir, seq;
    int64_t time_ns;
} qr_row_received;
extern const qr_h5_schema qr_schema_received;
/* recording.h5 /traceroutes and /paths (traceroute.h). */
extern const qr_h5_schema qr_schema_traceroute;
extern const qr_h5_schema qr_schema_icmp;
extern const qr_h5_schema qr_schema_path;

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
        skip_bad_tcp, skip_duplicate;
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
    int64_t clock_offset_ns, clock_residual_ns; /* the reconciliation's estimate */
    uint32_t clock_reference, clock_pairs;
    int64_t clock_applied_ns; /* subtracted from its captured times (0: none) */
    uint8_t ipid;             /* how it numbers IPv4 IDs (qr_ipid_kind, import.h) */
    uint64_t ipid_steps, ipid_rising;
    int32_t capture; /* the capture (row of /import/captures) its packets come from, -1: none */
    uint8_t vantage; /* why that one (qr_import_vantage, import.h) */
} qr_row_import_host;
extern const qr_h5_schema qr_schema_import_host;

/* A connection of an imported recording: flow `flow`, side 0 its initiator. */
/* How each direction of an imported connection was captured, and so how its drops were known
 * (import.h): both ends, only the sender (retransmissions), only the receiver (IP ID gaps; IPv6:
 * none). */
typedef enum {
    QR_EVIDENCE_BOTH = 0,
    QR_EVIDENCE_RETRANS,
    QR_EVIDENCE_IPID,
    QR_EVIDENCE_NONE,
    QR_EVIDENCE_COUNT
} qr_import_evidence;
/* "both", "retrans", "ipid", "none". */
const char *qr_import_evidence_name(int e);

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

/* qr_row_fault: the row struct is in faults.h. */
extern const qr_h5_schema qr_schema_fault;

/* qr_row_link_fault: the row struct is in linkfault.h. */
extern const qr_h5_schema qr_schema_link_fault;

/* qr_row_probe: the row struct is in pingmesh.h. */
extern const qr_h5_schema qr_schema_probe;

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
    int64_t residual_ns;
    uint32_t reference, pairs;
    int64_t estimate_ns, bound_ns; /* the estimate, and how far the truth can be from it */
} qr_row_replay_clock;
extern const qr_h5_schema qr_schema_replay_clock;

/* A sampling record of flow direction `dir` (qr_sample_record). */
typedef struct qr_row_sample_record {
    uint32_t dir;
    uint64_t index;
    int64_t time_ns;
    int64_t gap_num, gap_den; /* the per-packet gap after it, exactly: gap_num / gap_den ns */
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
    int64_t estimate_ns, residual_ns;
    int64_t true_ns;           /* its true offset minus the reference's (0 when unknown) */
    int64_t error_ns;          /* estimate_ns - true_ns (0 when unknown or not estimated) */
    int64_t path_ns, bound_ns; /* the true offset lies in [path - bound, path + bound] */
    int64_t correction_ns;     /* what a reconciled replay takes out (qr_clock_correction) */
} qr_row_clock_estimate;
extern const qr_h5_schema qr_schema_clock_estimate;

/* qreplay sample's tables: flows named by text. */
typedef struct qr_row_named_record {
    char flow[QR_FLOW_NAME_MAX];
    uint64_t index;
    int64_t time_ns;
    int64_t gap_num, gap_den; /* the gap exactly: gap_num / gap_den ns */
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

/* Every table of the files above, NULL-terminated (the analyses' tables are in their own
 * schema_*.h). */
extern const qr_h5_schema *const qr_schemas_run[];

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
