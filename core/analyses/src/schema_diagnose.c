/* The tables of diagnosis.h5 (qreplay diagnose) (schema_diagnose.h). */
#include <stddef.h>

#include "qreplay/schema_diagnose.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

#define DF(m) F(qr_row_diag_flow, m)
static const qr_h5_field diag_flow_fields[] = {
    {"flow", QR_H5_U32, DF(flow), 0, NULL},
    {"src", QR_H5_U32, DF(src), 0, "host"},
    {"dst", QR_H5_U32, DF(dst), 0, "host"},
    {"bytes", QR_H5_U64, DF(bytes), 0, "bytes"},
    {"size_class", QR_H5_STR, DF(size_class), 12, "<100KB, 100KB-1MB, 1-10MB, >10MB"},
    {"completed", QR_H5_U8, DF(completed), 0, "1: the receiver got every byte"},
    {"tail", QR_H5_U8, DF(tail), 0, "1: selected (the tail of its class, or --flows)"},
    {"start_ns", QR_H5_I64, DF(start_ns), 0, "ns"},
    {"fct_ns", QR_H5_I64, DF(fct_ns), 0, "ns (-1: not completed)"},
    {"ideal_ns", QR_H5_I64, DF(ideal_ns), 0, "ns, alone on an empty network"},
    {"slowdown", QR_H5_F64, DF(slowdown), 0, "fct / ideal"},
    {"handshake_ns", QR_H5_I64, DF(handshake_ns), 0, "ns"},
    {"rto_ns", QR_H5_I64, DF(rto_ns), 0, "ns waiting on a retransmission timeout"},
    {"recovery_ns", QR_H5_I64, DF(recovery_ns), 0, "ns in fast recovery"},
    {"receiver_ns", QR_H5_I64, DF(receiver_ns), 0, "ns limited by the advertised window"},
    {"delack_ns", QR_H5_I64, DF(delack_ns), 0, "ns stalled on a delayed ACK"},
    {"app_ns", QR_H5_I64, DF(app_ns), 0, "ns application-limited"},
    {"queueing_ns", QR_H5_I64, DF(queueing_ns), 0, "ns sending beyond the ideal transfer"},
    {"sending_ns", QR_H5_I64, DF(sending_ns), 0, "ns sending at full window"},
    {"cause", QR_H5_STR, DF(cause), 20, "root cause (qr_diag_cause_name)"},
    {"data_packets", QR_H5_U32, DF(data_packets), 0, "packets"},
    {"retransmissions", QR_H5_U32, DF(retransmissions), 0, "packets"},
    {"rtos", QR_H5_U32, DF(rtos), 0, "timer retransmissions"},
    {"fast_retransmits", QR_H5_U32, DF(fast_retransmits), 0, "recoveries"},
    {"late_fast_retransmits", QR_H5_U32, DF(late_fast_retransmits), 0,
     "recoveries after more duplicate ACKs than the threshold, once the flow showed reordering"},
    {"max_dupacks", QR_H5_U32, DF(max_dupacks), 0, "duplicate ACKs in a row, at most"},
    {"lost_data", QR_H5_U32, DF(lost_data), 0, "data packets never received"},
    {"lost_acks", QR_H5_U32, DF(lost_acks), 0, "packets without data never received"},
    {"syn_sent", QR_H5_U32, DF(syn_sent), 0, "packets"},
    {"synack_sent", QR_H5_U32, DF(synack_sent), 0, "packets"},
    {"delayed_acks", QR_H5_U32, DF(delayed_acks), 0, "ACKs held at least the delack bound"},
    {"zero_windows", QR_H5_U32, DF(zero_windows), 0, "times the window closed"},
    {"blackhole_losses", QR_H5_U32, DF(blackhole_losses), 0,
     "losses in a blackhole episode (replay arrivals)"},
    {"queue_mean_ns", QR_H5_I64, DF(queue_mean_ns), 0, "ns, one-way delay above unloaded"},
    {"queue_max_ns", QR_H5_I64, DF(queue_max_ns), 0, "ns"},
    {"path_queue_ns", QR_H5_I64, DF(path_queue_ns), 0,
     "ns, replay arrivals: queueing summed over hops, mean per packet (0: no arrivals)"},
    {"worst_switch", QR_H5_U32, DF(worst_switch), 0, "the hop with the most queueing"},
    {"worst_port", QR_H5_U32, DF(worst_port), 0, NULL},
    {"worst_queue_ns", QR_H5_I64, DF(worst_queue_ns), 0, "ns, mean per packet at that hop"},
    {"tlp_ns", QR_H5_I64, DF(tlp_ns), 0, "ns waiting for a tail-loss probe"},
    {"loss_ns", QR_H5_I64, DF(loss_ns), 0,
     "ns a hole waited for its resend, seen only at the receiver (trigger unknown)"},
    {"bytes_back", QR_H5_U64, DF(bytes_back), 0, "bytes sent by the side that accepted"},
    {"exchanges", QR_H5_U32, DF(exchanges), 0, "its exchanges in /exchanges"},
    {"end", QR_H5_STR, DF(end), 24, "closed, reset, open at capture end"},
    {"ideal_from", QR_H5_STR, DF(ideal_from), 16,
     "topology (the scenario's network) or measured (the connection's own path)"},
    {"min_rtt_ns", QR_H5_I64, DF(min_rtt_ns), 0, "ns, measured (-1: no sample)"},
    {"path_rate_bps", QR_H5_U64, DF(path_rate_bps), 0,
     "bit/s the ideals use (0: unknown; measured: packet-pair dispersion, tcpconn.h)"},
    {"tlps", QR_H5_U32, DF(tlps), 0, "tail-loss probes"},
    {"racks", QR_H5_U32, DF(racks), 0, "retransmissions by RACK"},
    {"undos", QR_H5_U32, DF(undos), 0, "RTOs whose original had arrived (spurious)"},
    {"unknown_retx", QR_H5_U32, DF(unknown_retx), 0,
     "retransmissions seen only at the receiver (trigger unknown)"},
    {"not_seen", QR_H5_U32, DF(not_seen), 0,
     "data packets with no receive record and no ACK: fate unknown"},
    {"reordered", QR_H5_U32, DF(reordered), 0, "delivered after a packet sent later"},
    {"spurious", QR_H5_U32, DF(spurious), 0, "retransmissions of bytes that had arrived"},
    {"dupacks", QR_H5_U32, DF(dupacks), 0,
     "duplicate ACKs as captured, both ways (imports; tshark's definition)"},
    {"dupack_run", QR_H5_U32, DF(dupack_run), 0, "the longest run of them"},
    {"reply_ns", QR_H5_I64, DF(reply_ns), 0,
     "ns an exchange's last ACK waited for the other side's reply (its application's time)"}};
#undef DF
const qr_h5_schema qr_schema_diag_flow = SCHEMA("diag_flow", qr_row_diag_flow, diag_flow_fields);

#define XF(m) F(qr_row_diag_exchange, m)
static const qr_h5_field diag_exchange_fields[] = {
    {"flow", QR_H5_U32, XF(flow), 0, NULL},
    {"exchange", QR_H5_U32, XF(exchange), 0, "its number in the connection, in start order"},
    {"dir", QR_H5_U32, XF(dir), 0, "0: from the side that opened the connection, 1: back"},
    {"src", QR_H5_U32, XF(src), 0, "host sending it"},
    {"dst", QR_H5_U32, XF(dst), 0, "host"},
    {"bytes", QR_H5_U64, XF(bytes), 0, "bytes"},
    {"start_ns", QR_H5_I64, XF(start_ns), 0, "ns: its first byte sent (vantage sender) or arrived"},
    {"end_ns", QR_H5_I64, XF(end_ns), 0,
     "ns: its last byte cumulatively acknowledged; a runtime's flow: its last byte arrived (-1: "
     "not complete)"},
    {"duration_ns", QR_H5_I64, XF(duration_ns), 0, "ns (to the capture's end if not complete)"},
    {"idle_before_ns", QR_H5_I64, XF(idle_before_ns), 0,
     "ns the application was idle since the previous exchange ended (-1: first)"},
    {"ideal_ns", QR_H5_I64, XF(ideal_ns), 0,
     "ns: one minimum RTT and its bytes after the first segment at the path rate (sender "
     "vantage), those bytes at the path rate (receiver vantage); a runtime's flow: its bytes "
     "alone on the scenario's empty network; 0: unknown"},
    {"slowdown", QR_H5_F64, XF(slowdown), 0, "duration / ideal (0: unknown or not complete)"},
    {"status", QR_H5_STR, XF(status), 28, "complete, open at capture end, reset, unknown"},
    {"vantage", QR_H5_STR, XF(vantage), 12, "sender or receiver: where its times were observed"},
    {"cause", QR_H5_STR, XF(cause), 20, "what cost it the most time (qr_diag_cause_name)"},
    {"transfer_ns", QR_H5_I64, XF(transfer_ns), 0, "ns sending, up to the ideal"},
    {"queueing_ns", QR_H5_I64, XF(queueing_ns), 0, "ns sending beyond the ideal"},
    {"rto_ns", QR_H5_I64, XF(rto_ns), 0, "ns waiting on the retransmission timer"},
    {"tlp_ns", QR_H5_I64, XF(tlp_ns), 0, "ns waiting for a tail-loss probe"},
    {"recovery_ns", QR_H5_I64, XF(recovery_ns), 0, "ns in fast, SACK or RACK recovery"},
    {"receiver_ns", QR_H5_I64, XF(receiver_ns), 0, "ns the receiver's window was full"},
    {"app_ns", QR_H5_I64, XF(app_ns), 0, "ns with nothing in flight and more to send"},
    {"loss_ns", QR_H5_I64, XF(loss_ns), 0, "ns a hole waited for its resend (receiver vantage)"},
    {"delack_ns", QR_H5_I64, XF(delack_ns), 0,
     "ns its last byte waited for the receiver's ACK (receiver vantage)"},
    {"packets", QR_H5_U32, XF(packets), 0, "data packets"},
    {"retransmissions", QR_H5_U32, XF(retransmissions), 0, "packets"},
    {"rtos", QR_H5_U32, XF(rtos), 0, "the retransmission timer fired"},
    {"after_rto", QR_H5_U32, XF(after_rto), 0, "resent after an RTO"},
    {"tlps", QR_H5_U32, XF(tlps), 0, "tail-loss probes"},
    {"fast", QR_H5_U32, XF(fast), 0, "fast retransmissions"},
    {"rack", QR_H5_U32, XF(rack), 0, "RACK retransmissions"},
    {"recovery", QR_H5_U32, XF(recovery), 0, "later in a recovery"},
    {"unknown_retx", QR_H5_U32, XF(unknown_retx), 0, "seen only at the receiver"},
    {"lost", QR_H5_U32, XF(lost), 0, "packets lost (by the evidence of its vantage)"},
    {"not_seen", QR_H5_U32, XF(not_seen), 0, "fate unknown"},
    {"reordered", QR_H5_U32, XF(reordered), 0, "delivered late, not lost"},
    {"spurious", QR_H5_U32, XF(spurious), 0, "retransmissions of bytes that had arrived"},
    {"reply_ns", QR_H5_I64, XF(reply_ns), 0,
     "ns its last ACK waited for the other side's reply (its application's time; not in the "
     "slowdown)"}};
#undef XF
const qr_h5_schema qr_schema_diag_exchange =
    SCHEMA("diag_exchange", qr_row_diag_exchange, diag_exchange_fields);

static const qr_h5_field diag_event_fields[] = {
    {"flow", QR_H5_U32, F(qr_row_diag_event, flow), 0, NULL},
    {"kind", QR_H5_STR, F(qr_row_diag_event, kind), 16, "qr_diag_event_name"},
    {"time_ns", QR_H5_I64, F(qr_row_diag_event, time_ns), 0, "ns"},
    {"packet", QR_H5_U64, F(qr_row_diag_event, packet), 0, "dir << 32 | seq"},
    {"tcp_seq", QR_H5_U64, F(qr_row_diag_event, tcp_seq), 0, "relative sequence or ACK number"},
    {"value", QR_H5_I64, F(qr_row_diag_event, value), 0,
     "duplicate ACKs before it (fast-retransmit, recovery, dupack), ns held (delayed-ack), "
     "bytes (lost), SYNs sent (syn-again), culprit port (blackhole)"},
    {"detail", QR_H5_STR, F(qr_row_diag_event, detail), 20, "rto: its sub-cause"},
    {"switch", QR_H5_U32, F(qr_row_diag_event, sw), 0, "blackhole: the queue"},
    {"port", QR_H5_U32, F(qr_row_diag_event, port), 0, NULL}};
const qr_h5_schema qr_schema_diag_event =
    SCHEMA("diag_event", qr_row_diag_event, diag_event_fields);

static const qr_h5_field diag_cause_fields[] = {
    {"size_class", QR_H5_STR, F(qr_row_diag_cause, size_class), 12, NULL},
    {"cause", QR_H5_STR, F(qr_row_diag_cause, cause), 20, NULL},
    {"flows", QR_H5_U32, F(qr_row_diag_cause, flows), 0, "tail flows of the class with this cause"},
    {"tail_flows", QR_H5_U32, F(qr_row_diag_cause, tail_flows), 0, "tail flows of the class"},
    {"tail_slowdown", QR_H5_F64, F(qr_row_diag_cause, tail_slowdown), 0,
     "the class's slowdown at the tail quantile"}};
const qr_h5_schema qr_schema_diag_cause =
    SCHEMA("diag_cause", qr_row_diag_cause, diag_cause_fields);

#define BF(x) F(qr_row_diag_blackhole, x)
static const qr_h5_field diag_blackhole_fields[] = {
    {"switch", QR_H5_U32, BF(sw), 0, "the queue whose threshold fell below it"},
    {"port", QR_H5_U32, BF(port), 0, NULL},
    {"start_ns", QR_H5_I64, BF(start_ns), 0, "ns: its first blackhole drop"},
    {"end_ns", QR_H5_I64, BF(end_ns), 0, "ns: its last"},
    {"drops", QR_H5_U64, BF(drops), 0, "blackhole drops"},
    {"peak_ns", QR_H5_I64, BF(peak_ns), 0, "ns: the queue's peak before the episode"},
    {"peak_bytes", QR_H5_U64, BF(peak_bytes), 0, "bytes: its length then"},
    {"queue_bytes", QR_H5_U64, BF(queue_bytes), 0, "bytes: its length at the first drop"},
    {"peak_threshold", QR_H5_I64, BF(peak_threshold), 0, "bytes: its threshold at the peak"},
    {"threshold", QR_H5_I64, BF(threshold), 0, "bytes: at the first drop"},
    {"peak_total_bytes", QR_H5_U64, BF(peak_total_bytes), 0,
     "bytes: the switch's occupancy at the peak"},
    {"total_bytes", QR_H5_U64, BF(total_bytes), 0, "bytes: at the first drop"},
    {"culprit_port", QR_H5_I32, BF(culprit_port), 0,
     "the port that grew most since the peak (-1: none)"},
    {"culprit_growth_bytes", QR_H5_U64, BF(culprit_growth_bytes), 0, "bytes"},
    {"selected_losses", QR_H5_U32, BF(selected_losses), 0,
     "losses of the diagnosed flows in the episode"},
    {"series", QR_H5_I32, BF(series), 0, "its queue's series in /blackhole_series (-1: none)"}};
#undef BF
const qr_h5_schema qr_schema_diag_blackhole =
    SCHEMA("diag_blackhole", qr_row_diag_blackhole, diag_blackhole_fields);

#define PF(x) F(qr_row_diag_bh_point, x)
static const qr_h5_field diag_bh_point_fields[] = {
    {"series", QR_H5_U32, PF(series), 0, "one per blackholed queue drawn"},
    {"time_ns", QR_H5_I64, PF(time_ns), 0, "ns: a packet's arrival"},
    {"switch", QR_H5_U32, PF(sw), 0, NULL},
    {"port", QR_H5_U32, PF(port), 0, NULL},
    {"culprit", QR_H5_U8, PF(culprit), 0, "0: the blackholed queue, 1: a culprit"},
    {"dropped", QR_H5_U8, PF(dropped), 0, "1: this arrival was dropped"},
    {"bytes", QR_H5_U32, PF(bytes), 0, "the packet's size"},
    {"queue_bytes", QR_H5_U64, PF(queue_bytes), 0, "bytes: the queue before the packet joined"},
    {"total_bytes", QR_H5_U64, PF(total_bytes), 0, "bytes: the switch's occupancy"},
    {"threshold", QR_H5_I64, PF(threshold), 0, "bytes: the queue's dynamic threshold"},
    {"drops", QR_H5_U64, PF(drops), 0,
     "the queue's drops from the series' start through this arrival"}};
#undef PF
const qr_h5_schema qr_schema_diag_bh_point =
    SCHEMA("diag_bh_point", qr_row_diag_bh_point, diag_bh_point_fields);

const qr_h5_schema *const qr_schemas_diagnose[] = {&qr_schema_diag_flow,
                                                   &qr_schema_diag_exchange,
                                                   &qr_schema_diag_event,
                                                   &qr_schema_diag_cause,
                                                   &qr_schema_diag_blackhole,
                                                   &qr_schema_diag_bh_point,
                                                   NULL};
