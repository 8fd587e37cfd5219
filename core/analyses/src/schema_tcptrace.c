/* The tables of isolated.h5 /tcp_trace (qreplay isolate --trace) (schema_tcptrace.h). */
#include <stddef.h>

#include "qreplay/schema_tcptrace.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

static const qr_h5_field tt_segment_fields[] = {
    {"time_ns", QR_H5_I64, F(qr_row_tt_segment, time_ns), 0,
     "ns: the sender's TCP sent or got it; the receiver's interface sent or got it"},
    {"end", QR_H5_STR, F(qr_row_tt_segment, end), 9, "sender or receiver"},
    {"dir", QR_H5_STR, F(qr_row_tt_segment, dir), 3, "tx or rx"},
    {"flags", QR_H5_U8, F(qr_row_tt_segment, flags), 0, "TCP flags"},
    {"seq", QR_H5_U64, F(qr_row_tt_segment, seq), 0, "relative to its sender's ISN"},
    {"ack", QR_H5_U64, F(qr_row_tt_segment, ack), 0, "relative to the other end's ISN"},
    {"len", QR_H5_U32, F(qr_row_tt_segment, len), 0, "payload bytes"},
    {"window", QR_H5_U32, F(qr_row_tt_segment, window), 0, "window field, unscaled"},
    {"retx", QR_H5_STR, F(qr_row_tt_segment, retx), 16,
     "retransmission trigger (qr_tt_trigger_name); empty: not a retransmission"},
    {"lost", QR_H5_U8, F(qr_row_tt_segment, lost), 0, "1: the network lost it (sent segments)"},
    {"ack_kind", QR_H5_STR, F(qr_row_tt_segment, ack_kind), 10,
     "receiver's pure ACKs: immediate or delayed"},
    {"dupacks", QR_H5_U32, F(qr_row_tt_segment, dupacks), 0,
     "sender: duplicate-ACK count after this ACK, or when this was sent"},
    {"held_ns", QR_H5_I64, F(qr_row_tt_segment, held_ns), 0,
     "receiver's pure ACKs: ns since its last received segment"},
    {"packet", QR_H5_U64, F(qr_row_tt_segment, packet), 0,
     "sent segments: recording packet id (dir << 32 | number)"}};
const qr_h5_schema qr_schema_tt_segment =
    SCHEMA("tt_segment", qr_row_tt_segment, tt_segment_fields);

static const qr_h5_field tt_var_fields[] = {
    {"time_ns", QR_H5_I64, F(qr_row_tt_var, time_ns), 0, "ns"},
    {"var", QR_H5_STR, F(qr_row_tt_var, var), 12, "qr_tt_var_name"},
    {"value", QR_H5_I64, F(qr_row_tt_var, value), 0,
     "bytes (cwnd, ssthresh, in_flight, rwnd, adv_wnd), ns (rto, rtt), qr_tt_cong_state"}};
const qr_h5_schema qr_schema_tt_var = SCHEMA("tt_var", qr_row_tt_var, tt_var_fields);

const qr_h5_schema *const qr_schemas_tcptrace[] = {&qr_schema_tt_segment, &qr_schema_tt_var, NULL};
