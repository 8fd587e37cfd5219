/* qreplay: the tables of diagnosis.h5 (qreplay diagnose), as schema.h describes tables: a row
 * struct and its schema each. docs/FORMATS.md describes them for users. */
#ifndef QREPLAY_SCHEMA_DIAGNOSE_H
#define QREPLAY_SCHEMA_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    int64_t tlp_ns, loss_ns;
    uint64_t bytes_back;
    uint32_t exchanges;
    char end[24];
    char ideal_from[16];
    int64_t min_rtt_ns;
    uint64_t path_rate_bps;
    uint32_t tlps, racks, undos, unknown_retx, not_seen, reordered, spurious;
    uint32_t dupacks, dupack_run;
    int64_t reply_ns;
} qr_row_diag_flow;
extern const qr_h5_schema qr_schema_diag_flow;

/* One exchange of a connection (data one way between idle periods). */
typedef struct qr_row_diag_exchange {
    uint32_t flow, exchange, dir, src, dst;
    uint64_t bytes;
    int64_t start_ns, end_ns, duration_ns, idle_before_ns, ideal_ns;
    double slowdown;
    char status[28];
    char vantage[12];
    char cause[20];
    int64_t transfer_ns, queueing_ns, rto_ns, tlp_ns, recovery_ns, receiver_ns, app_ns, loss_ns,
        delack_ns;
    uint32_t packets, retransmissions, rtos, after_rto, tlps, fast, rack, recovery, unknown_retx,
        lost, not_seen, reordered, spurious;
    int64_t reply_ns;
} qr_row_diag_exchange;
extern const qr_h5_schema qr_schema_diag_exchange;

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

/* Tail flows of a size class with one cause. */
typedef struct qr_row_diag_cause {
    char size_class[12];
    char cause[20];
    uint32_t flows, tail_flows;
    double tail_slowdown;
} qr_row_diag_cause;
extern const qr_h5_schema qr_schema_diag_cause;

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

/* Every table of the file, NULL-terminated. */
extern const qr_h5_schema *const qr_schemas_diagnose[];

#ifdef __cplusplus
}
#endif
#endif
