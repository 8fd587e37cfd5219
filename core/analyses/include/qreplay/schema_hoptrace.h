/* qreplay: the tables of trace.h5 (qreplay trace), as schema.h describes tables: a row struct and
 * its schema each. docs/FORMATS.md describes them for users. */
#ifndef QREPLAY_SCHEMA_HOPTRACE_H
#define QREPLAY_SCHEMA_HOPTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* trace.h5 (qreplay trace, hoptrace.h): a matched packet. */
typedef struct qr_row_hop_packet {
    uint64_t packet;
    uint32_t dir, flow, src, dst;
    uint16_t sport, dport;
    uint8_t flags; /* TCP flags */
    uint16_t ip_id;
    uint8_t retransmit, detected;
    uint8_t fate;      /* 0: left its last switch; else the qr_decision that dropped it */
    uint8_t in_flight; /* fate 0, but its trace stops after an admit near the log's end */
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
    uint8_t silent;    /* inferred: the port's drop counter did not move */
    uint64_t counter_drops; /* drops the port's counter counted in that interval */
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

/* The latency profiler's links: one directed switch-to-switch link, from the mirrored copies'
 * times at its two ends (a packet's copy at the far switch less its copy at the near one:
 * queueing and serialization at the near switch, and the link's delay). */
/* A link's service rate is measured on at least this many back-to-back pairs of copies. */
#define QR_HOP_RATE_PAIRS 5
typedef struct qr_row_hop_link {
    uint32_t link;
    char name[24];
    uint64_t packets;
    int64_t min_ns, p50_ns, p99_ns;
    uint8_t slow;        /* its least latency at least link_ratio times the links' median least */
    double rate_bps;     /* its service rate from back-to-back copies (NaN: none) */
    uint64_t rate_pairs; /* back-to-back pairs it was measured on */
    uint8_t slow_rate;   /* its rate link_ratio times below the ports' configured rate */
} qr_row_hop_link;
extern const qr_h5_schema qr_schema_hop_link;

/* Everflow's loop debugger: one cycle of switches that matched packets went round (seen again at
 * a switch they had left: more copies than the longest path has switches). */
typedef struct qr_row_hop_loop {
    char cycle[64];    /* "s8>s16>s8": its smallest switch first, back to it */
    uint32_t switches; /* in the cycle (0: the copies show none: "?") */
    uint64_t packets;  /* matched packets caught in it */
    uint64_t copies;   /* their copies past the longest path */
    uint64_t example;  /* the first packet caught */
    int64_t first_ns, last_ns;
    uint8_t planted; /* truth: every link of the cycle is a planted loop's (or its way back) */
} qr_row_hop_loop;
extern const qr_h5_schema qr_schema_hop_loop;

/* Everflow's ECMP profile: per member of each switch's group of up ports (the ports an edge or
 * aggregation switch's multipath route spreads over), what the matched packets it admitted put on
 * it. */
typedef struct qr_row_hop_ecmp {
    uint32_t sw, port, link;
    char link_name[24];
    uint64_t packets, bytes, flows; /* flows: distinct flows (both directions count as one) */
    double share;                   /* of the group's packets */
} qr_row_hop_ecmp;
extern const qr_h5_schema qr_schema_hop_ecmp;

/* What the trace read, matched and kept. */
typedef struct qr_row_hop_summary {
    uint64_t arrivals, packets, unknown_arrivals, matched, unseen, kept, hops_kept;
    uint64_t delivered, dropped, drops_threshold, drops_buffer_full, drops_tagged, drops_counted;
    uint64_t detected, resent, silent;
    double queue_mean_ns;
    int64_t queue_p99_ns, queue_max_ns;
    uint64_t buffer_bytes, rate_bps;
    /* the mirror (hoptrace.h): copies the rule sent, copies the sessions lost, delivered traces
     * with a hop missing, traces that stop after an admit within the longest stay in the network
     * of the log's end (in flight, neither delivered nor dropped) */
    uint64_t mirror_copies, mirror_lost, gaps, gap_copies, in_flight;
    uint32_t slow_links;         /* the latency profiler's links that stand out */
    int64_t link_median_min_ns;  /* the links' median least latency */
    uint32_t slow_rate_links;    /* links whose service rate stands out below the rest */
    double link_median_rate_bps; /* the links' median service rate (NaN: none measured) */
    uint64_t loops, looping;     /* the loop debugger: cycles found, packets caught in them */
} qr_row_hop_summary;
extern const qr_h5_schema qr_schema_hop_summary;

/* /guided: qr_row_guided_port (guided.h). */
extern const qr_h5_schema qr_schema_guided_port;
extern const qr_h5_schema qr_schema_bounce; /* /bounce: guided.h qr_row_bounce */

/* Every table of the file, NULL-terminated. */
extern const qr_h5_schema *const qr_schemas_hoptrace[];

#ifdef __cplusplus
}
#endif
#endif
