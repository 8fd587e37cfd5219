/* The tables of every file qreplay writes (schema.h). */
#include <stdlib.h>

#include "internal.h"
#include "qreplay/schema.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

static const qr_h5_field flow_fields[] = {
    {"id", QR_H5_U32, F(qr_row_flow, id), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_flow, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_flow, dst), 0, "host"},
    {"src_port", QR_H5_U16, F(qr_row_flow, src_port), 0, NULL},
    {"dst_port", QR_H5_U16, F(qr_row_flow, dst_port), 0, NULL},
    {"bytes", QR_H5_U64, F(qr_row_flow, bytes), 0, "bytes"},
    {"start_ns", QR_H5_I64, F(qr_row_flow, start_ns), 0, "ns"},
    {"end_ns", QR_H5_I64, F(qr_row_flow, end_ns), 0, "ns (-1: not completed)"},
    {"fct_ns", QR_H5_I64, F(qr_row_flow, fct_ns), 0, "ns (-1: not completed)"},
    {"incast", QR_H5_U32, F(qr_row_flow, incast), 0, "event (0: background)"},
    {"completed", QR_H5_U8, F(qr_row_flow, completed), 0, NULL},
    {"closed", QR_H5_U8, F(qr_row_flow, closed), 0, NULL}};
const qr_h5_schema qr_schema_flow = SCHEMA("flow", qr_row_flow, flow_fields);

static const qr_h5_field host_fields[] = {
    {"host", QR_H5_U32, F(qr_row_host, host), 0, NULL},
    {"addr", QR_H5_U32, F(qr_row_host, addr), 0, "IPv4 address"},
    {"clock_offset_ns", QR_H5_I64, F(qr_row_host, clock_offset_ns), 0, "ns"},
    {"packets", QR_H5_U64, F(qr_row_host, packets), 0, "packets"},
    {"bytes", QR_H5_U64, F(qr_row_host, bytes), 0, "bytes"},
    {"pcap", QR_H5_STR, F(qr_row_host, pcap), 32, NULL}};
const qr_h5_schema qr_schema_host = SCHEMA("host", qr_row_host, host_fields);

static const qr_h5_field detected_fields[] = {
    {"receiver", QR_H5_U32, F(qr_row_detected, receiver), 0, "host"},
    {"dir", QR_H5_U32, F(qr_row_detected, dir), 0, "flow direction (2 flow + 1 for ACKs)"},
    {"seq", QR_H5_U64, F(qr_row_detected, seq), 0, "packet number in the direction"},
    {"packet", QR_H5_U64, F(qr_row_detected, packet), 0, "dir << 32 | seq"},
    {"ip_id", QR_H5_U16, F(qr_row_detected, ip_id), 0, NULL},
    {"tail", QR_H5_U8, F(qr_row_detected, tail), 0, "1: from the sender's count"}};
const qr_h5_schema qr_schema_detected = SCHEMA("detected", qr_row_detected, detected_fields);

static const qr_h5_field received_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_received, dir), 0, "flow direction"},
    {"seq", QR_H5_U32, F(qr_row_received, seq), 0, "packet number in the direction"},
    {"time_ns", QR_H5_I64, F(qr_row_received, time_ns), 0, "ns, on the receiving host's clock"}};
const qr_h5_schema qr_schema_received = SCHEMA("received", qr_row_received, received_fields);

#define IC(m) F(qr_row_import_capture, m)
static const qr_h5_field import_capture_fields[] = {
    {"capture", QR_H5_U32, IC(capture), 0, "index in the command line"},
    {"path", QR_H5_STR, IC(path), 256, NULL},
    {"host", QR_H5_U32, IC(host), 0, "host"},
    {"owner", QR_H5_STR, IC(owner), 48, "address"},
    {"link", QR_H5_STR, IC(link), 32, "libpcap link type"},
    {"size_bytes", QR_H5_U64, IC(size_bytes), 0, "bytes"},
    {"sha256", QR_H5_STR, IC(sha256), 65, "hex"},
    {"frames", QR_H5_U64, IC(frames), 0, "frames"},
    {"tcp", QR_H5_U64, IC(tcp), 0, "TCP packets read"},
    {"sent", QR_H5_U64, IC(sent), 0, "packets its host sent"},
    {"received", QR_H5_U64, IC(received), 0, "packets its host received"},
    {"skip_not_ip", QR_H5_U64, IC(skip_not_ip), 0, "frames"},
    {"skip_not_tcp", QR_H5_U64, IC(skip_not_tcp), 0, "frames"},
    {"skip_fragment", QR_H5_U64, IC(skip_fragment), 0, "frames"},
    {"skip_snaplen", QR_H5_U64, IC(skip_snaplen), 0, "frames"},
    {"skip_bad_link", QR_H5_U64, IC(skip_bad_link), 0, "frames"},
    {"skip_bad_ip", QR_H5_U64, IC(skip_bad_ip), 0, "frames"},
    {"skip_bad_tcp", QR_H5_U64, IC(skip_bad_tcp), 0, "frames"},
    {"left_same_host", QR_H5_U64, IC(left_same_host), 0, "packets"},
    {"left_not_owner", QR_H5_U64, IC(left_not_owner), 0, "packets"},
    {"left_duplicate", QR_H5_U64, IC(left_duplicate), 0, "packets"},
    {"clamped", QR_H5_U64, IC(clamped), 0, "packets"},
    {"warning", QR_H5_STR, IC(warning), 256, NULL}};
const qr_h5_schema qr_schema_import_capture =
    SCHEMA("import_capture", qr_row_import_capture, import_capture_fields);

#define IH(m) F(qr_row_import_host, m)
static const qr_h5_field import_host_fields[] = {
    {"host", QR_H5_U32, IH(host), 0, NULL},
    {"captured", QR_H5_U8, IH(captured), 0, NULL},
    {"reconstructed", QR_H5_U8, IH(reconstructed), 0, NULL},
    {"addr", QR_H5_STR, IH(addr), 48, "address in the captures"},
    {"packets", QR_H5_U64, IH(packets), 0, "packets"},
    {"reconstructed_packets", QR_H5_U64, IH(reconstructed_packets), 0, "packets"},
    {"clock_offset_ns", QR_H5_F64, IH(clock_offset_ns), 0, "ns, relative to clock_reference"},
    {"clock_residual_ns", QR_H5_F64, IH(clock_residual_ns), 0, "ns (RMS)"},
    {"clock_reference", QR_H5_U32, IH(clock_reference), 0, "host"},
    {"clock_pairs", QR_H5_U32, IH(clock_pairs), 0, "pairs"},
    {"clock_applied_ns", QR_H5_I64, IH(clock_applied_ns), 0,
     "ns, subtracted from its captured times"}};
const qr_h5_schema qr_schema_import_host =
    SCHEMA("import_host", qr_row_import_host, import_host_fields);

#define ICN(m) F(qr_row_import_conn, m)
static const qr_h5_field import_conn_fields[] = {
    {"flow", QR_H5_U32, ICN(flow), 0, NULL},
    {"addr0", QR_H5_STR, ICN(addr0), 48, "address"},
    {"addr1", QR_H5_STR, ICN(addr1), 48, "address"},
    {"port0", QR_H5_U16, ICN(port0), 0, NULL},
    {"port1", QR_H5_U16, ICN(port1), 0, NULL},
    {"family", QR_H5_U8, ICN(family), 0, "4 or 6"},
    {"syn", QR_H5_U8, ICN(syn), 0, NULL},
    {"fin0", QR_H5_U8, ICN(fin0), 0, NULL},
    {"fin1", QR_H5_U8, ICN(fin1), 0, NULL},
    {"bytes0", QR_H5_U64, ICN(bytes0), 0, "bytes"},
    {"bytes1", QR_H5_U64, ICN(bytes1), 0, "bytes"},
    {"packets0", QR_H5_U64, ICN(packets0), 0, "packets"},
    {"packets1", QR_H5_U64, ICN(packets1), 0, "packets"},
    {"evidence0", QR_H5_U8, ICN(evidence0), 0, "0 both, 1 retrans, 2 ipid, 3 none"},
    {"evidence1", QR_H5_U8, ICN(evidence1), 0, "0 both, 1 retrans, 2 ipid, 3 none"},
    {"drops0", QR_H5_U64, ICN(drops0), 0, "packets"},
    {"drops1", QR_H5_U64, ICN(drops1), 0, "packets"}};
const qr_h5_schema qr_schema_import_conn =
    SCHEMA("import_conn", qr_row_import_conn, import_conn_fields);

static const qr_h5_field drop_fields[] = {
    {"packet", QR_H5_U64, F(qr_row_drop, packet), 0, "dir << 32 | seq"},
    {"dir", QR_H5_U32, F(qr_row_drop, dir), 0, NULL},
    {"time_ns", QR_H5_I64, F(qr_row_drop, time_ns), 0, "ns"},
    {"switch", QR_H5_U32, F(qr_row_drop, sw), 0, NULL},
    {"port", QR_H5_U32, F(qr_row_drop, port), 0, NULL},
    {"bytes", QR_H5_U32, F(qr_row_drop, bytes), 0, "bytes"},
    {"reason", QR_H5_U8, F(qr_row_drop, reason), 0,
     "qr_decision: 1 threshold, 2 buffer-full, 3 tagged, 4 fault"},
    {"tagged", QR_H5_U8, F(qr_row_drop, tagged), 0, "1: carried a drop tag"},
    {"queue_bytes", QR_H5_U64, F(qr_row_drop, queue_bytes), 0, "bytes"},
    {"threshold", QR_H5_I64, F(qr_row_drop, threshold), 0, "bytes"}};
const qr_h5_schema qr_schema_drop = SCHEMA("drop", qr_row_drop, drop_fields);

static const qr_h5_field direction_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_direction, dir), 0, NULL},
    {"flow", QR_H5_U32, F(qr_row_direction, flow), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_direction, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_direction, dst), 0, "host"},
    {"sent", QR_H5_U64, F(qr_row_direction, sent), 0, "packets"},
    {"sent_bytes", QR_H5_U64, F(qr_row_direction, sent_bytes), 0, "bytes"},
    {"delivered", QR_H5_U64, F(qr_row_direction, delivered), 0, "packets"},
    {"delivered_bytes", QR_H5_U64, F(qr_row_direction, delivered_bytes), 0, "bytes"},
    {"dropped", QR_H5_U64, F(qr_row_direction, dropped), 0, "packets"},
    {"dropped_bytes", QR_H5_U64, F(qr_row_direction, dropped_bytes), 0, "bytes"}};
const qr_h5_schema qr_schema_direction = SCHEMA("direction", qr_row_direction, direction_fields);

static const qr_h5_field fault_fields[] = {
    {"rule", QR_H5_U32, F(qr_row_fault, rule), 0, "from 1, in the order of [faults] drop"},
    {"text", QR_H5_STR, F(qr_row_fault, text), QR_FAULT_TEXT_MAX, "the rule, resolved"},
    {"flow", QR_H5_U32, F(qr_row_fault, flow), 0, NULL},
    {"dir", QR_H5_U32, F(qr_row_fault, dir), 0, "the direction it counts"},
    {"kind", QR_H5_STR, F(qr_row_fault, kind), 8, "syn, synack, data or ack"},
    {"first", QR_H5_U32, F(qr_row_fault, first), 0, "counted packet, from 1"},
    {"last", QR_H5_U32, F(qr_row_fault, last), 0, "counted packet, from 1"},
    {"switch", QR_H5_U32, F(qr_row_fault, sw), 0, NULL},
    {"counted", QR_H5_U64, F(qr_row_fault, counted), 0,
     "packets of its kind that reached the switch"},
    {"dropped", QR_H5_U64, F(qr_row_fault, dropped), 0, "packets"}};
const qr_h5_schema qr_schema_fault = SCHEMA("fault", qr_row_fault, fault_fields);

static const qr_h5_field link_fault_fields[] = {
    {"fault", QR_H5_U32, F(qr_row_link_fault, fault), 0, "from 1"},
    {"kind", QR_H5_STR, F(qr_row_link_fault, kind), 12, "gray, blackhole, delay or rate"},
    {"text", QR_H5_STR, F(qr_row_link_fault, text), QR_FAULT_TEXT_MAX, "the rule as written"},
    {"link", QR_H5_U32, F(qr_row_link_fault, link), 0, "directed link id (topology.h)"},
    {"name", QR_H5_STR, F(qr_row_link_fault, name), 24, "the link, as s8>s16 or h3>s0"},
    {"from_node", QR_H5_U32, F(qr_row_link_fault, from_node), 0, "switch or host number"},
    {"to_node", QR_H5_U32, F(qr_row_link_fault, to_node), 0, "switch or host number"},
    {"from_kind", QR_H5_STR, F(qr_row_link_fault, from_kind), 8, "host, edge, agg or core"},
    {"to_kind", QR_H5_STR, F(qr_row_link_fault, to_kind), 8, "host, edge, agg or core"},
    {"share", QR_H5_F64, F(qr_row_link_fault, share), 0,
     "gray: drop probability; blackhole: share of flow directions"},
    {"delay_ns", QR_H5_I64, F(qr_row_link_fault, delay_ns), 0, "ns (delay: extra)"},
    {"rate_bps", QR_H5_U64, F(qr_row_link_fault, rate_bps), 0, "bit/s (rate: degraded)"},
    {"crossed", QR_H5_U64, F(qr_row_link_fault, crossed), 0, "packets that reached the link"},
    {"dropped", QR_H5_U64, F(qr_row_link_fault, dropped), 0, "packets"}};
const qr_h5_schema qr_schema_link_fault =
    SCHEMA("link_fault", qr_row_link_fault, link_fault_fields);

static const qr_h5_field blame_link_fields[] = {
    {"link", QR_H5_U32, F(qr_row_blame_link, link), 0, "the cable's lower directed link id"},
    {"name", QR_H5_STR, F(qr_row_blame_link, name), QR_LINK_NAME_MAX, "as s8-s16 or h3-s1"},
    {"layer", QR_H5_STR, F(qr_row_blame_link, layer), 12, "host-edge, edge-agg or agg-core"},
    {"a", QR_H5_U32, F(qr_row_blame_link, a), 0, "lower end: host (layer host-edge) or switch"},
    {"b", QR_H5_U32, F(qr_row_blame_link, b), 0, "upper end: switch"},
    {"votes", QR_H5_F64, F(qr_row_blame_link, votes), 0, "007: sum of 1/h over voting directions"},
    {"voters", QR_H5_U32, F(qr_row_blame_link, voters), 0, "directions"},
    {"rank", QR_H5_U32, F(qr_row_blame_link, rank), 0, "by votes, from 1 (0: no vote)"},
    {"flagged", QR_H5_U8, F(qr_row_blame_link, flagged), 0, "1: flagged by 007's rule"},
    {"replay_votes", QR_H5_F64, F(qr_row_blame_link, replay_votes), 0,
     "votes of the losses the replay did not drop"},
    {"replay_voters", QR_H5_U32, F(qr_row_blame_link, replay_voters), 0, "directions"},
    {"replay_rank", QR_H5_U32, F(qr_row_blame_link, replay_rank), 0, "from 1 (0: no vote)"},
    {"replay_flagged", QR_H5_U8, F(qr_row_blame_link, replay_flagged), 0, "1: flagged"},
    {"replay_drops", QR_H5_U64, F(qr_row_blame_link, replay_drops), 0,
     "packets the tagged replay dropped here"},
    {"faulty", QR_H5_U8, F(qr_row_blame_link, faulty), 0, "1: a planted gray or blackhole fault"},
    {"fault_drops", QR_H5_U64, F(qr_row_blame_link, fault_drops), 0, "truth: packets"},
    {"congestion_drops", QR_H5_U64, F(qr_row_blame_link, congestion_drops), 0, "truth: packets"}};
const qr_h5_schema qr_schema_blame_link =
    SCHEMA("blame_link", qr_row_blame_link, blame_link_fields);

static const qr_h5_field blame_conn_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_blame_conn, dir), 0, "flow direction"},
    {"flow", QR_H5_U32, F(qr_row_blame_conn, flow), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_blame_conn, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_blame_conn, dst), 0, "host"},
    {"first_loss_ns", QR_H5_I64, F(qr_row_blame_conn, first_loss_ns), 0,
     "ns, sender's clock: when the first lost packet was sent"},
    {"losses", QR_H5_U32, F(qr_row_blame_conn, losses), 0, "packets the receiver detected lost"},
    {"unexplained", QR_H5_U32, F(qr_row_blame_conn, unexplained), 0,
     "of them, packets the replay did not drop"},
    {"hops", QR_H5_U32, F(qr_row_blame_conn, hops), 0, "links on the path"},
    {"culprit", QR_H5_STR, F(qr_row_blame_conn, culprit), QR_LINK_NAME_MAX,
     "007: the link on its path with the most votes"},
    {"replay_culprit", QR_H5_STR, F(qr_row_blame_conn, replay_culprit), QR_LINK_NAME_MAX,
     "the same by replay votes (\"\" without)"},
    {"true_link", QR_H5_STR, F(qr_row_blame_conn, true_link), QR_LINK_NAME_MAX,
     "truth: where most of its packets were dropped"},
    {"true_cause", QR_H5_STR, F(qr_row_blame_conn, true_cause), 12,
     "fault, congestion or none (truth)"},
    {"correct", QR_H5_I32, F(qr_row_blame_conn, correct), 0,
     "1 culprit = true_link, 0 not, -1 nothing dropped in truth"},
    {"replay_correct", QR_H5_I32, F(qr_row_blame_conn, replay_correct), 0, "the same, replay"}};
const qr_h5_schema qr_schema_blame_conn =
    SCHEMA("blame_conn", qr_row_blame_conn, blame_conn_fields);

static const qr_h5_field blame_curve_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_curve, method), 8, "007 or replay"},
    {"connections", QR_H5_U32, F(qr_row_blame_curve, connections), 0,
     "the first N voting directions"},
    {"fault_rank", QR_H5_U32, F(qr_row_blame_curve, fault_rank), 0,
     "best rank of a faulty link (0: none has a vote)"},
    {"flagged", QR_H5_U32, F(qr_row_blame_curve, flagged), 0, "links"},
    {"true_flagged", QR_H5_U32, F(qr_row_blame_curve, true_flagged), 0, "faulty links flagged"},
    {"precision", QR_H5_F64, F(qr_row_blame_curve, precision), 0, "NaN: none flagged"},
    {"recall", QR_H5_F64, F(qr_row_blame_curve, recall), 0, "NaN: no faulty link"}};
const qr_h5_schema qr_schema_blame_curve =
    SCHEMA("blame_curve", qr_row_blame_curve, blame_curve_fields);

static const qr_h5_field blame_summary_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_summary, method), 8, "007 or replay"},
    {"connections", QR_H5_U32, F(qr_row_blame_summary, connections), 0, "voting directions"},
    {"votes", QR_H5_F64, F(qr_row_blame_summary, votes), 0, "all votes cast"},
    {"flagged", QR_H5_U32, F(qr_row_blame_summary, flagged), 0, "links"},
    {"true_flagged", QR_H5_U32, F(qr_row_blame_summary, true_flagged), 0, "faulty links flagged"},
    {"faulty", QR_H5_U32, F(qr_row_blame_summary, faulty), 0, "links with a planted drop fault"},
    {"precision", QR_H5_F64, F(qr_row_blame_summary, precision), 0, "NaN: none flagged"},
    {"recall", QR_H5_F64, F(qr_row_blame_summary, recall), 0, "NaN: no faulty link"},
    {"culprit_accuracy", QR_H5_F64, F(qr_row_blame_summary, culprit_accuracy), 0,
     "share of scored connections whose culprit is right"},
    {"scored", QR_H5_U32, F(qr_row_blame_summary, scored), 0,
     "voting directions with a packet dropped in truth"},
    {"detect_after", QR_H5_U32, F(qr_row_blame_summary, detect_after), 0,
     "connections after which every faulty link stays flagged (0: never)"},
    {"rank1_after", QR_H5_U32, F(qr_row_blame_summary, rank1_after), 0,
     "connections after which a faulty link stays ranked first (0: never)"}};
const qr_h5_schema qr_schema_blame_summary =
    SCHEMA("blame_summary", qr_row_blame_summary, blame_summary_fields);

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
     "recoveries after more duplicate ACKs than the threshold"},
    {"max_dupacks", QR_H5_U32, DF(max_dupacks), 0, "duplicate ACKs in a row, at most"},
    {"lost_data", QR_H5_U32, DF(lost_data), 0, "data packets never received"},
    {"lost_acks", QR_H5_U32, DF(lost_acks), 0, "ACK-direction packets never received"},
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
    {"worst_queue_ns", QR_H5_I64, DF(worst_queue_ns), 0, "ns, mean per packet at that hop"}};
#undef DF
const qr_h5_schema qr_schema_diag_flow = SCHEMA("diag_flow", qr_row_diag_flow, diag_flow_fields);

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

static const qr_h5_field diag_cause_fields[] = {
    {"size_class", QR_H5_STR, F(qr_row_diag_cause, size_class), 12, NULL},
    {"cause", QR_H5_STR, F(qr_row_diag_cause, cause), 20, NULL},
    {"flows", QR_H5_U32, F(qr_row_diag_cause, flows), 0, "tail flows of the class with this cause"},
    {"tail_flows", QR_H5_U32, F(qr_row_diag_cause, tail_flows), 0, "tail flows of the class"},
    {"tail_slowdown", QR_H5_F64, F(qr_row_diag_cause, tail_slowdown), 0,
     "the class's slowdown at the tail quantile"}};
const qr_h5_schema qr_schema_diag_cause =
    SCHEMA("diag_cause", qr_row_diag_cause, diag_cause_fields);

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

static const qr_h5_field replay_host_fields[] = {
    {"host", QR_H5_U32, F(qr_row_replay_host, host), 0, NULL},
    {"packets", QR_H5_U64, F(qr_row_replay_host, packets), 0, "packets"},
    {"bytes", QR_H5_U64, F(qr_row_replay_host, bytes), 0, "bytes"}};
const qr_h5_schema qr_schema_replay_host =
    SCHEMA("replay_host", qr_row_replay_host, replay_host_fields);

static const qr_h5_field replay_clock_fields[] = {
    {"host", QR_H5_U32, F(qr_row_replay_clock, host), 0, NULL},
    {"correction_ns", QR_H5_I64, F(qr_row_replay_clock, correction_ns), 0, "ns"},
    {"residual_ns", QR_H5_F64, F(qr_row_replay_clock, residual_ns), 0, "ns"},
    {"reference", QR_H5_U32, F(qr_row_replay_clock, reference), 0, NULL},
    {"pairs", QR_H5_U32, F(qr_row_replay_clock, pairs), 0, NULL},
    {"estimate_ns", QR_H5_F64, F(qr_row_replay_clock, estimate_ns), 0, "ns"},
    {"bound_ns", QR_H5_F64, F(qr_row_replay_clock, bound_ns), 0, "ns"}};
const qr_h5_schema qr_schema_replay_clock =
    SCHEMA("replay_clock", qr_row_replay_clock, replay_clock_fields);

static const qr_h5_field sample_record_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_sample_record, dir), 0, NULL},
    {"index", QR_H5_U64, F(qr_row_sample_record, index), 0, "packet number in the direction"},
    {"time_ns", QR_H5_I64, F(qr_row_sample_record, time_ns), 0, "ns (recorded clock)"},
    {"gap_ns", QR_H5_F64, F(qr_row_sample_record, gap_ns), 0, "ns"},
    {"gap_num", QR_H5_I64, F(qr_row_sample_record, gap_num), 0,
     "ns (the gap is gap_num / gap_den)"},
    {"gap_den", QR_H5_I64, F(qr_row_sample_record, gap_den), 0, "1"}};
const qr_h5_schema qr_schema_sample_record =
    SCHEMA("sample_record", qr_row_sample_record, sample_record_fields);

static const qr_h5_field qdiff_fields[] = {
    {"packet", QR_H5_U64, F(qr_row_qdiff, packet), 0, "dir << 32 | seq"},
    {"switch", QR_H5_U32, F(qr_row_qdiff, sw), 0, NULL},
    {"port", QR_H5_U32, F(qr_row_qdiff, port), 0, NULL},
    {"time_run_ns", QR_H5_I64, F(qr_row_qdiff, time_run_ns), 0, "ns"},
    {"time_rep_ns", QR_H5_I64, F(qr_row_qdiff, time_rep_ns), 0, "ns"},
    {"qdiff_bytes", QR_H5_U64, F(qr_row_qdiff, qdiff_bytes), 0, "bytes (1 MTU = 1500)"},
    {"qdiff_sym_bytes", QR_H5_U64, F(qr_row_qdiff, qdiff_sym_bytes), 0, "bytes (1 MTU = 1500)"},
    {"qlen_diff_bytes", QR_H5_I64, F(qr_row_qdiff, qlen_diff_bytes), 0,
     "bytes, the replay's queue length minus the runtime's"}};
const qr_h5_schema qr_schema_qdiff = SCHEMA("qdiff", qr_row_qdiff, qdiff_fields);

static const qr_h5_field queue_summary_fields[] = {
    {"switch", QR_H5_U32, F(qr_row_queue_summary, sw), 0, NULL},
    {"port", QR_H5_U32, F(qr_row_queue_summary, port), 0, NULL},
    {"count", QR_H5_U64, F(qr_row_queue_summary, count), 0, "arrivals in both runs"},
    {"mean", QR_H5_F64, F(qr_row_queue_summary, mean), 0, "MTU"},
    {"p50", QR_H5_F64, F(qr_row_queue_summary, p50), 0, "MTU"},
    {"p99", QR_H5_F64, F(qr_row_queue_summary, p99), 0, "MTU"},
    {"max", QR_H5_F64, F(qr_row_queue_summary, max), 0, "MTU"},
    {"sym_mean", QR_H5_F64, F(qr_row_queue_summary, sym_mean), 0, "MTU"},
    {"sym_p99", QR_H5_F64, F(qr_row_queue_summary, sym_p99), 0, "MTU"},
    {"len_diff_mean", QR_H5_F64, F(qr_row_queue_summary, len_diff_mean), 0,
     "MTU, mean of the replay's queue length minus the runtime's (signed)"},
    {"len_longer", QR_H5_F64, F(qr_row_queue_summary, len_longer), 0,
     "fraction of arrivals where the replay's queue was longer"},
    {"len_shorter", QR_H5_F64, F(qr_row_queue_summary, len_shorter), 0,
     "fraction of arrivals where the replay's queue was shorter"}};
const qr_h5_schema qr_schema_queue_summary =
    SCHEMA("queue_summary", qr_row_queue_summary, queue_summary_fields);

static const qr_h5_field queue_series_fields[] = {
    {"time_ns", QR_H5_I64, F(qr_row_queue_series, time_ns), 0, "ns"},
    {"queue_bytes", QR_H5_U64, F(qr_row_queue_series, queue_bytes), 0,
     "bytes queued when a packet arrived"}};
const qr_h5_schema qr_schema_queue_series =
    SCHEMA("queue_series", qr_row_queue_series, queue_series_fields);

static const qr_h5_field butterfly_replay_fields[] = {
    {"sigma_ns", QR_H5_I64, F(qr_row_butterfly_replay, sigma_ns), 0, "ns"},
    {"replay", QR_H5_U32, F(qr_row_butterfly_replay, replay), 0, "random stream"},
    {"short_fct_ns", QR_H5_I64, F(qr_row_butterfly_replay, short_fct_ns), 0,
     "ns (-1: not completed)"},
    {"short_reproduced", QR_H5_U8, F(qr_row_butterfly_replay, short_reproduced), 0,
     "FCT within 1%"},
    {"run_reproduced", QR_H5_U8, F(qr_row_butterfly_replay, run_reproduced), 0,
     "same dropped packets"},
    {"drops", QR_H5_U64, F(qr_row_butterfly_replay, drops), 0, "packets"},
    {"matched", QR_H5_U64, F(qr_row_butterfly_replay, matched), 0, "arrivals in both runs"},
    {"first_divergence_ns", QR_H5_I64, F(qr_row_butterfly_replay, first_divergence_ns), 0,
     "ns (-1: never)"},
    {"zero_after_divergence", QR_H5_F64, F(qr_row_butterfly_replay, zero_after_divergence), 0,
     "fraction"},
    {"max_diff_bytes", QR_H5_U64, F(qr_row_butterfly_replay, max_diff_bytes), 0, "bytes"},
    {"wall_s", QR_H5_F64, F(qr_row_butterfly_replay, wall_s), 0, "s"}};
const qr_h5_schema qr_schema_butterfly_replay =
    SCHEMA("butterfly_replay", qr_row_butterfly_replay, butterfly_replay_fields);

static const qr_h5_field butterfly_sigma_fields[] = {
    {"sigma_ns", QR_H5_I64, F(qr_row_butterfly_sigma, sigma_ns), 0, "ns"},
    {"replays", QR_H5_U32, F(qr_row_butterfly_sigma, replays), 0, NULL},
    {"short_reproduced_pct", QR_H5_F64, F(qr_row_butterfly_sigma, short_reproduced_pct), 0, "%"},
    {"run_reproduced_pct", QR_H5_F64, F(qr_row_butterfly_sigma, run_reproduced_pct), 0, "%"},
    {"zero_after_divergence_mean", QR_H5_F64, F(qr_row_butterfly_sigma, zero_after_divergence_mean),
     0, "fraction"},
    {"typical_replay", QR_H5_U32, F(qr_row_butterfly_sigma, typical_replay), 0,
     "replay whose series is kept"}};
const qr_h5_schema qr_schema_butterfly_sigma =
    SCHEMA("butterfly_sigma", qr_row_butterfly_sigma, butterfly_sigma_fields);

static const qr_h5_field butterfly_series_fields[] = {
    {"time_ns", QR_H5_I64, F(qr_row_butterfly_series, time_ns), 0, "ns"},
    {"diff_bytes", QR_H5_U64, F(qr_row_butterfly_series, diff_bytes), 0, "bytes (1 MTU = 1500)"}};
const qr_h5_schema qr_schema_butterfly_series =
    SCHEMA("butterfly_series", qr_row_butterfly_series, butterfly_series_fields);

static const qr_h5_field isolated_fields[] = {
    {"flow", QR_H5_U32, F(qr_row_isolated, flow), 0, NULL},
    {"sigma_ns", QR_H5_I64, F(qr_row_isolated, sigma_ns), 0, "ns"},
    {"stream", QR_H5_U32, F(qr_row_isolated, stream), 0, NULL},
    {"recorded", QR_H5_U64, F(qr_row_isolated, recorded), 0, "packets"},
    {"replayed", QR_H5_U64, F(qr_row_isolated, replayed), 0, "packets"},
    {"identical", QR_H5_U8, F(qr_row_isolated, identical), 0, "same TCP headers in order"},
    {"first_mismatch", QR_H5_I64, F(qr_row_isolated, first_mismatch), 0, "packet index (-1: none)"},
    {"max_send_diff_ns", QR_H5_I64, F(qr_row_isolated, max_send_diff_ns), 0, "ns"},
    {"p99_send_diff_ns", QR_H5_I64, F(qr_row_isolated, p99_send_diff_ns), 0, "ns"},
    {"late", QR_H5_U64, F(qr_row_isolated, late), 0, "packets"},
    {"max_late_ns", QR_H5_I64, F(qr_row_isolated, max_late_ns), 0, "ns"},
    {"unknown", QR_H5_U64, F(qr_row_isolated, unknown), 0, "packets"}};
const qr_h5_schema qr_schema_isolated = SCHEMA("isolated", qr_row_isolated, isolated_fields);

static const qr_h5_field workload_flow_fields[] = {
    {"id", QR_H5_U64, F(qr_row_workload_flow, id), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_workload_flow, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_workload_flow, dst), 0, "host"},
    {"bytes", QR_H5_U64, F(qr_row_workload_flow, bytes), 0, "bytes"},
    {"start_ns", QR_H5_I64, F(qr_row_workload_flow, start_ns), 0, "ns"},
    {"incast", QR_H5_U32, F(qr_row_workload_flow, incast), 0, "event (0: background)"}};
const qr_h5_schema qr_schema_workload_flow =
    SCHEMA("workload_flow", qr_row_workload_flow, workload_flow_fields);

static const qr_h5_field clock_fields[] = {
    {"host", QR_H5_U32, F(qr_row_clock, host), 0, NULL},
    {"offset_ns", QR_H5_I64, F(qr_row_clock, offset_ns), 0, "ns"}};
const qr_h5_schema qr_schema_clock = SCHEMA("clock", qr_row_clock, clock_fields);

#define CE(m) F(qr_row_clock_estimate, m)
static const qr_h5_field clock_estimate_fields[] = {
    {"host", QR_H5_U32, CE(host), 0, NULL},
    {"reference", QR_H5_U32, CE(reference), 0, "host"},
    {"pairs", QR_H5_U32, CE(pairs), 0, NULL},
    {"estimate_ns", QR_H5_F64, CE(estimate_ns), 0, "ns"},
    {"residual_ns", QR_H5_F64, CE(residual_ns), 0, "ns"},
    {"true_ns", QR_H5_I64, CE(true_ns), 0, "ns"},
    {"error_ns", QR_H5_F64, CE(error_ns), 0, "ns"},
    {"path_ns", QR_H5_F64, CE(path_ns), 0, "ns"},
    {"bound_ns", QR_H5_F64, CE(bound_ns), 0, "ns"},
    {"correction_ns", QR_H5_I64, CE(correction_ns), 0, "ns"}};
const qr_h5_schema qr_schema_clock_estimate =
    SCHEMA("clock_estimate", qr_row_clock_estimate, clock_estimate_fields);

static const qr_h5_field named_record_fields[] = {
    {"flow", QR_H5_STR, F(qr_row_named_record, flow), QR_FLOW_NAME_MAX, NULL},
    {"index", QR_H5_U64, F(qr_row_named_record, index), 0, "packets"},
    {"time_ns", QR_H5_I64, F(qr_row_named_record, time_ns), 0, "ns"},
    {"gap_ns", QR_H5_F64, F(qr_row_named_record, gap_ns), 0, "ns"},
    {"gap_num", QR_H5_I64, F(qr_row_named_record, gap_num), 0, "ns (the gap is gap_num / gap_den)"},
    {"gap_den", QR_H5_I64, F(qr_row_named_record, gap_den), 0, "1"}};
const qr_h5_schema qr_schema_named_record =
    SCHEMA("named_record", qr_row_named_record, named_record_fields);

static const qr_h5_field named_inferred_fields[] = {
    {"flow", QR_H5_STR, F(qr_row_named_inferred, flow), QR_FLOW_NAME_MAX, NULL},
    {"index", QR_H5_U64, F(qr_row_named_inferred, index), 0, "packets"},
    {"true_ns", QR_H5_I64, F(qr_row_named_inferred, true_ns), 0, "ns"},
    {"inferred_ns", QR_H5_I64, F(qr_row_named_inferred, inferred_ns), 0, "ns"}};
const qr_h5_schema qr_schema_named_inferred =
    SCHEMA("named_inferred", qr_row_named_inferred, named_inferred_fields);

static const qr_h5_field named_flow_fields[] = {
    {"flow", QR_H5_STR, F(qr_row_named_flow, flow), QR_FLOW_NAME_MAX, NULL},
    {"packets", QR_H5_U64, F(qr_row_named_flow, packets), 0, "packets"},
    {"records", QR_H5_U64, F(qr_row_named_flow, records), 0, "records"},
    {"max_error_ns", QR_H5_I64, F(qr_row_named_flow, max_error_ns), 0, "ns"}};
const qr_h5_schema qr_schema_named_flow =
    SCHEMA("named_flow", qr_row_named_flow, named_flow_fields);

static const qr_h5_field probe_fields[] = {
    {"probe", QR_H5_U32, F(qr_row_probe, probe), 0, "from 0, in send order"},
    {"pair", QR_H5_U32, F(qr_row_probe, pair), 0, "the probe pair (pingmesh.h5 /pairs)"},
    {"src", QR_H5_U32, F(qr_row_probe, src), 0, "the probing host"},
    {"dst", QR_H5_U32, F(qr_row_probe, dst), 0, "the probed host"},
    {"sport", QR_H5_U16, F(qr_row_probe, sport), 0, "UDP source port (to port 8765)"},
    {"sent_ns", QR_H5_I64, F(qr_row_probe, sent_ns), 0, "simulated time"},
    {"rtt_ns", QR_H5_I64, F(qr_row_probe, rtt_ns), 0, "until the answer arrived; -1 none"},
    {"echoed", QR_H5_U8, F(qr_row_probe, echoed), 0, "1: the probed host sent an answer"},
    {"lost_in", QR_H5_U8, F(qr_row_probe, lost_in), 0, "truth: 0 not dropped, 1 request, 2 answer"},
    {"drop_sw", QR_H5_U32, F(qr_row_probe, drop_sw), 0,
     "truth: switch (4294967295: the sender's NIC queue)"},
    {"drop_port", QR_H5_U32, F(qr_row_probe, drop_port), 0, "truth: its egress port"},
    {"drop_reason", QR_H5_U8, F(qr_row_probe, drop_reason), 0, "truth: as /drops reason"},
    {"drop_ns", QR_H5_I64, F(qr_row_probe, drop_ns), 0, "truth: when"}};
const qr_h5_schema qr_schema_probe = SCHEMA("probe", qr_row_probe, probe_fields);

static const qr_h5_field pm_pair_fields[] = {
    {"pair", QR_H5_U32, F(qr_row_pm_pair, pair), 0, "from 0, the plan's order"},
    {"src", QR_H5_U32, F(qr_row_pm_pair, src), 0, "probing host"},
    {"dst", QR_H5_U32, F(qr_row_pm_pair, dst), 0, "probed host"},
    {"src_rack", QR_H5_U32, F(qr_row_pm_pair, src_rack), 0, "edge switch of src"},
    {"dst_rack", QR_H5_U32, F(qr_row_pm_pair, dst_rack), 0, "edge switch of dst"},
    {"src_pod", QR_H5_U32, F(qr_row_pm_pair, src_pod), 0, "pod of src"},
    {"dst_pod", QR_H5_U32, F(qr_row_pm_pair, dst_pod), 0, "pod of dst"},
    {"probes", QR_H5_U64, F(qr_row_pm_pair, probes), 0, "scored (sent a timeout before the end)"},
    {"lost", QR_H5_U64, F(qr_row_pm_pair, lost), 0, "no answer within the timeout"},
    {"drop_rate", QR_H5_F64, F(qr_row_pm_pair, drop_rate), 0, "lost / probes (NaN: no probes)"},
    {"p50_ns", QR_H5_I64, F(qr_row_pm_pair, p50_ns), 0, "round-trip median; -1 none answered"},
    {"p99_ns", QR_H5_I64, F(qr_row_pm_pair, p99_ns), 0, "round-trip 99th percentile"},
    {"fault_lost", QR_H5_U64, F(qr_row_pm_pair, fault_lost), 0, "truth: lost to a fault"},
    {"congestion_lost", QR_H5_U64, F(qr_row_pm_pair, congestion_lost), 0,
     "truth: lost to a full buffer or NIC queue"}};
const qr_h5_schema qr_schema_pm_pair = SCHEMA("pm_pair", qr_row_pm_pair, pm_pair_fields);

static const qr_h5_field pm_rack_fields[] = {
    {"src_rack", QR_H5_U32, F(qr_row_pm_rack, src_rack), 0, "edge switch (row)"},
    {"dst_rack", QR_H5_U32, F(qr_row_pm_rack, dst_rack), 0, "edge switch (column)"},
    {"src_pod", QR_H5_U32, F(qr_row_pm_rack, src_pod), 0, "pod of src_rack"},
    {"dst_pod", QR_H5_U32, F(qr_row_pm_rack, dst_pod), 0, "pod of dst_rack"},
    {"pairs", QR_H5_U32, F(qr_row_pm_rack, pairs), 0, "probe pairs in the cell (0: not probed)"},
    {"probes", QR_H5_U64, F(qr_row_pm_rack, probes), 0, "scored"},
    {"lost", QR_H5_U64, F(qr_row_pm_rack, lost), 0, "no answer within the timeout"},
    {"drop_rate", QR_H5_F64, F(qr_row_pm_rack, drop_rate), 0, "lost / probes (NaN: none)"},
    {"p50_ns", QR_H5_I64, F(qr_row_pm_rack, p50_ns), 0, "round-trip median; -1 none"},
    {"p99_ns", QR_H5_I64, F(qr_row_pm_rack, p99_ns), 0, "round-trip 99th percentile"}};
const qr_h5_schema qr_schema_pm_rack = SCHEMA("pm_rack", qr_row_pm_rack, pm_rack_fields);

static const qr_h5_field pm_place_fields[] = {
    {"kind", QR_H5_STR, F(qr_row_pm_place, kind), 8, "spine, pod, rack, server or racks"},
    {"name", QR_H5_STR, F(qr_row_pm_place, name), 24, "spine, pod 1, rack s3, h5, s0>s2"},
    {"index", QR_H5_U32, F(qr_row_pm_place, index), 0, "pod, edge switch, host or matrix cell"},
    {"probes", QR_H5_U64, F(qr_row_pm_place, probes), 0, "scored probes of the place"},
    {"lost", QR_H5_U64, F(qr_row_pm_place, lost), 0, "of them lost"},
    {"rate", QR_H5_F64, F(qr_row_pm_place, rate), 0, "lost / probes"},
    {"rest_rate", QR_H5_F64, F(qr_row_pm_place, rest_rate), 0,
     "the drop rate of the other probes when it was tested"},
    {"llr", QR_H5_F64, F(qr_row_pm_place, llr), 0, "Bernoulli scan log-likelihood ratio"},
    {"flagged", QR_H5_U32, F(qr_row_pm_place, flagged), 0, "order flagged, from 1; 0 not"},
    {"suspects", QR_H5_U32, F(qr_row_pm_place, suspects), 0, "cables it points at"},
    {"faulty", QR_H5_U8, F(qr_row_pm_place, faulty), 0, "truth: 1 if a suspect is faulty"}};
const qr_h5_schema qr_schema_pm_place = SCHEMA("pm_place", qr_row_pm_place, pm_place_fields);

static const qr_h5_field pm_curve_fields[] = {
    {"probes", QR_H5_U64, F(qr_row_pm_curve, probes), 0, "the first N scored probes, by send time"},
    {"time_ns", QR_H5_I64, F(qr_row_pm_curve, time_ns), 0,
     "when the N-th was known (send + timeout)"},
    {"flagged", QR_H5_U32, F(qr_row_pm_curve, flagged), 0, "places flagged"},
    {"right", QR_H5_U32, F(qr_row_pm_curve, right), 0, "of them with a faulty suspect"},
    {"detected", QR_H5_U8, F(qr_row_pm_curve, detected), 0,
     "1: every faulty cable is a flagged place's suspect"}};
const qr_h5_schema qr_schema_pm_curve = SCHEMA("pm_curve", qr_row_pm_curve, pm_curve_fields);

static const qr_h5_field pm_summary_fields[] = {
    {"interval_ns", QR_H5_I64, F(qr_row_pm_summary, interval_ns), 0, "[pingmesh] interval"},
    {"timeout_ns", QR_H5_I64, F(qr_row_pm_summary, timeout_ns), 0, "[pingmesh] timeout"},
    {"size", QR_H5_U32, F(qr_row_pm_summary, size), 0, "probe IP packet bytes"},
    {"pairs", QR_H5_U32, F(qr_row_pm_summary, pairs), 0, "probe pairs of the plan"},
    {"sent", QR_H5_U64, F(qr_row_pm_summary, sent), 0, "probes sent"},
    {"scored", QR_H5_U64, F(qr_row_pm_summary, scored), 0, "sent a timeout before the run ended"},
    {"unresolved", QR_H5_U64, F(qr_row_pm_summary, unresolved), 0,
     "sent later, unanswered (left out)"},
    {"answered", QR_H5_U64, F(qr_row_pm_summary, answered), 0, "scored, answered in time"},
    {"lost", QR_H5_U64, F(qr_row_pm_summary, lost), 0, "scored, not answered in time"},
    {"late", QR_H5_U64, F(qr_row_pm_summary, late), 0, "of them answered after the timeout"},
    {"fault_lost", QR_H5_U64, F(qr_row_pm_summary, fault_lost), 0, "truth: lost to a fault"},
    {"congestion_lost", QR_H5_U64, F(qr_row_pm_summary, congestion_lost), 0,
     "truth: lost to a full buffer"},
    {"host_lost", QR_H5_U64, F(qr_row_pm_summary, host_lost), 0, "truth: lost in a NIC queue"},
    {"drop_rate", QR_H5_F64, F(qr_row_pm_summary, drop_rate), 0, "lost / scored"},
    {"flagged", QR_H5_U32, F(qr_row_pm_summary, flagged), 0, "places the rule flagged"},
    {"right", QR_H5_U32, F(qr_row_pm_summary, right), 0, "of them with a faulty suspect"},
    {"faulty", QR_H5_U32, F(qr_row_pm_summary, faulty), 0, "planted gray/blackhole cables"},
    {"covered", QR_H5_U32, F(qr_row_pm_summary, covered), 0, "of them a flagged place's suspect"},
    {"precision", QR_H5_F64, F(qr_row_pm_summary, precision), 0, "right / flagged (NaN: none)"},
    {"recall", QR_H5_F64, F(qr_row_pm_summary, recall), 0, "covered / faulty (NaN: none)"},
    {"mean_suspects", QR_H5_F64, F(qr_row_pm_summary, mean_suspects), 0,
     "cables per flagged place (what is left to search)"},
    {"detect_after", QR_H5_U64, F(qr_row_pm_summary, detect_after), 0,
     "probes after which the faults stay detected (0: never)"},
    {"detect_after_ns", QR_H5_I64, F(qr_row_pm_summary, detect_after_ns), 0,
     "that many probes' time (-1: never)"},
    {"probe_bytes", QR_H5_U64, F(qr_row_pm_summary, probe_bytes), 0,
     "IP bytes of requests and answers sent"},
    {"traffic_bytes", QR_H5_U64, F(qr_row_pm_summary, traffic_bytes), 0,
     "IP bytes the flows' packets sent"},
    {"probe_share", QR_H5_F64, F(qr_row_pm_summary, probe_share), 0,
     "probe_bytes / (probe_bytes + traffic_bytes)"},
    {"host_probe_bps_max", QR_H5_F64, F(qr_row_pm_summary, host_probe_bps_max), 0,
     "the busiest host's probe bits/s (requests and answers it sends)"},
    {"link_share_max", QR_H5_F64, F(qr_row_pm_summary, link_share_max), 0,
     "that over [links] rate"}};
const qr_h5_schema qr_schema_pm_summary =
    SCHEMA("pm_summary", qr_row_pm_summary, pm_summary_fields);

static const qr_h5_field hop_packet_fields[] = {
    {"packet", QR_H5_U64, F(qr_row_hop_packet, packet), 0, "direction << 32, number"},
    {"dir", QR_H5_U32, F(qr_row_hop_packet, dir), 0, NULL},
    {"flow", QR_H5_U32, F(qr_row_hop_packet, flow), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_hop_packet, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_hop_packet, dst), 0, "host"},
    {"sport", QR_H5_U16, F(qr_row_hop_packet, sport), 0, NULL},
    {"dport", QR_H5_U16, F(qr_row_hop_packet, dport), 0, NULL},
    {"flags", QR_H5_U8, F(qr_row_hop_packet, flags), 0, "TCP flags"},
    {"retransmit", QR_H5_U8, F(qr_row_hop_packet, retransmit), 0,
     "sends sequence space its direction already sent"},
    {"detected", QR_H5_U8, F(qr_row_hop_packet, detected), 0, "its receiver detected it lost"},
    {"fate", QR_H5_U8, F(qr_row_hop_packet, fate), 0,
     "0: left its last switch; else the decision that dropped it"},
    {"seq", QR_H5_U32, F(qr_row_hop_packet, seq), 0, "TCP sequence number"},
    {"payload", QR_H5_U32, F(qr_row_hop_packet, payload), 0, "bytes of data"},
    {"bytes", QR_H5_U32, F(qr_row_hop_packet, bytes), 0, "IP length"},
    {"sent_ns", QR_H5_I64, F(qr_row_hop_packet, sent_ns), 0, "recorded send time (sender's clock)"},
    {"first_ns", QR_H5_I64, F(qr_row_hop_packet, first_ns), 0, "arrival at its first switch"},
    {"last_ns", QR_H5_I64, F(qr_row_hop_packet, last_ns), 0, "arrival at its last switch"},
    {"hops", QR_H5_U32, F(qr_row_hop_packet, hops), 0, "switches reached"},
    {"queue_ns", QR_H5_I64, F(qr_row_hop_packet, queue_ns), 0,
     "queueing summed over the hops that admitted it"},
    {"drop_switch", QR_H5_U32, F(qr_row_hop_packet, drop_switch), 0,
     "where it was dropped (fate != 0)"},
    {"drop_port", QR_H5_U32, F(qr_row_hop_packet, drop_port), 0, NULL}};
const qr_h5_schema qr_schema_hop_packet =
    SCHEMA("hop_packet", qr_row_hop_packet, hop_packet_fields);

static const qr_h5_field hop_fields[] = {
    {"packet", QR_H5_U64, F(qr_row_hop, packet), 0, NULL},
    {"dir", QR_H5_U32, F(qr_row_hop, dir), 0, NULL},
    {"hop", QR_H5_U32, F(qr_row_hop, hop), 0, "from 1"},
    {"time_ns", QR_H5_I64, F(qr_row_hop, time_ns), 0, "arrival at the switch's egress queue"},
    {"sw", QR_H5_U32, F(qr_row_hop, sw), 0, "switch"},
    {"port", QR_H5_U32, F(qr_row_hop, port), 0, "egress port"},
    {"bytes", QR_H5_U32, F(qr_row_hop, bytes), 0, "the packet's size"},
    {"decision", QR_H5_U8, F(qr_row_hop, decision), 0, "qr_decision (0: admitted)"},
    {"tagged", QR_H5_U8, F(qr_row_hop, tagged), 0, "carried a drop tag"},
    {"queue_ns", QR_H5_I64, F(qr_row_hop, queue_ns), 0,
     "queueing delay: the queue's bytes at the port's rate"},
    {"queue_bytes", QR_H5_U64, F(qr_row_hop, queue_bytes), 0, "the queue's, before it joined"},
    {"total_bytes", QR_H5_U64, F(qr_row_hop, total_bytes), 0, "the switch's, before it joined"},
    {"threshold", QR_H5_I64, F(qr_row_hop, threshold), 0, "the dynamic threshold (bytes)"}};
const qr_h5_schema qr_schema_hop = SCHEMA("hop", qr_row_hop, hop_fields);

static const qr_h5_field hop_drop_fields[] = {
    {"packet", QR_H5_U64, F(qr_row_hop_drop, packet), 0, NULL},
    {"dir", QR_H5_U32, F(qr_row_hop_drop, dir), 0, NULL},
    {"flow", QR_H5_U32, F(qr_row_hop_drop, flow), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_hop_drop, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_hop_drop, dst), 0, "host"},
    {"hop", QR_H5_U32, F(qr_row_hop_drop, hop), 0, "from 1"},
    {"time_ns", QR_H5_I64, F(qr_row_hop_drop, time_ns), 0, NULL},
    {"sw", QR_H5_U32, F(qr_row_hop_drop, sw), 0, "switch"},
    {"port", QR_H5_U32, F(qr_row_hop_drop, port), 0, "egress port"},
    {"bytes", QR_H5_U32, F(qr_row_hop_drop, bytes), 0, NULL},
    {"reason", QR_H5_U8, F(qr_row_hop_drop, reason), 0, "qr_decision"},
    {"tagged", QR_H5_U8, F(qr_row_hop_drop, tagged), 0, NULL},
    {"detected", QR_H5_U8, F(qr_row_hop_drop, detected), 0, "its receiver detected it lost"},
    {"retransmit", QR_H5_U8, F(qr_row_hop_drop, retransmit), 0, "it was itself a resend"},
    {"payload", QR_H5_U32, F(qr_row_hop_drop, payload), 0, "bytes of data"},
    {"queue_bytes", QR_H5_U64, F(qr_row_hop_drop, queue_bytes), 0, NULL},
    {"total_bytes", QR_H5_U64, F(qr_row_hop_drop, total_bytes), 0, NULL},
    {"threshold", QR_H5_I64, F(qr_row_hop_drop, threshold), 0, NULL},
    {"link", QR_H5_U32, F(qr_row_hop_drop, link), 0, "the directed link it was lost on"},
    {"link_name", QR_H5_STR, F(qr_row_hop_drop, link_name), 24, "\"s8>s16\""},
    {"resent_ns", QR_H5_I64, F(qr_row_hop_drop, resent_ns), 0,
     "the sender's next send of the same sequence; -1: none, -2: nothing to resend"}};
const qr_h5_schema qr_schema_hop_drop = SCHEMA("hop_drop", qr_row_hop_drop, hop_drop_fields);

static const qr_h5_field hop_profile_fields[] = {
    {"hop", QR_H5_U32, F(qr_row_hop_profile, hop), 0, "from 1"},
    {"sw", QR_H5_U32, F(qr_row_hop_profile, sw), 0, NULL},
    {"port", QR_H5_U32, F(qr_row_hop_profile, port), 0, NULL},
    {"packets", QR_H5_U64, F(qr_row_hop_profile, packets), 0, "matched packets it admitted"},
    {"mean_ns", QR_H5_F64, F(qr_row_hop_profile, mean_ns), 0, "queueing delay"},
    {"p50_ns", QR_H5_I64, F(qr_row_hop_profile, p50_ns), 0, NULL},
    {"p99_ns", QR_H5_I64, F(qr_row_hop_profile, p99_ns), 0, NULL},
    {"max_ns", QR_H5_I64, F(qr_row_hop_profile, max_ns), 0, NULL},
    {"share", QR_H5_F64, F(qr_row_hop_profile, share), 0, "of the matched packets' queueing"}};
const qr_h5_schema qr_schema_hop_profile =
    SCHEMA("hop_profile", qr_row_hop_profile, hop_profile_fields);

static const qr_h5_field hop_summary_fields[] = {
    {"arrivals", QR_H5_U64, F(qr_row_hop_summary, arrivals), 0, "records read from the log"},
    {"packets", QR_H5_U64, F(qr_row_hop_summary, packets), 0, "recorded packets"},
    {"unknown_arrivals", QR_H5_U64, F(qr_row_hop_summary, unknown_arrivals), 0,
     "arrivals of packets the recording lacks (left out)"},
    {"matched", QR_H5_U64, F(qr_row_hop_summary, matched), 0, NULL},
    {"unseen", QR_H5_U64, F(qr_row_hop_summary, unseen), 0,
     "matched packets that reached no switch in the log"},
    {"kept", QR_H5_U64, F(qr_row_hop_summary, kept), 0, "in /packets (the limit)"},
    {"hops_kept", QR_H5_U64, F(qr_row_hop_summary, hops_kept), 0, NULL},
    {"delivered", QR_H5_U64, F(qr_row_hop_summary, delivered), 0,
     "matched, left their last switch"},
    {"dropped", QR_H5_U64, F(qr_row_hop_summary, dropped), 0, "matched, dropped"},
    {"drops_threshold", QR_H5_U64, F(qr_row_hop_summary, drops_threshold), 0, NULL},
    {"drops_buffer_full", QR_H5_U64, F(qr_row_hop_summary, drops_buffer_full), 0, NULL},
    {"drops_tagged", QR_H5_U64, F(qr_row_hop_summary, drops_tagged), 0, NULL},
    {"drops_fault", QR_H5_U64, F(qr_row_hop_summary, drops_fault), 0, NULL},
    {"detected", QR_H5_U64, F(qr_row_hop_summary, detected), 0, "drops their receiver detected"},
    {"resent", QR_H5_U64, F(qr_row_hop_summary, resent), 0, "drops their sender resent"},
    {"queue_mean_ns", QR_H5_F64, F(qr_row_hop_summary, queue_mean_ns), 0,
     "path queueing of the delivered matched packets"},
    {"queue_p99_ns", QR_H5_I64, F(qr_row_hop_summary, queue_p99_ns), 0, NULL},
    {"queue_max_ns", QR_H5_I64, F(qr_row_hop_summary, queue_max_ns), 0, NULL},
    {"buffer_bytes", QR_H5_U64, F(qr_row_hop_summary, buffer_bytes), 0, "[buffer] size"},
    {"rate_bps", QR_H5_U64, F(qr_row_hop_summary, rate_bps), 0, "[links] rate"}};
const qr_h5_schema qr_schema_hop_summary =
    SCHEMA("hop_summary", qr_row_hop_summary, hop_summary_fields);

const qr_h5_schema *const qr_schemas[] = {&qr_schema_flow,
                                          &qr_schema_host,
                                          &qr_schema_detected,
                                          &qr_schema_received,
                                          &qr_schema_import_capture,
                                          &qr_schema_import_host,
                                          &qr_schema_import_conn,
                                          &qr_schema_drop,
                                          &qr_schema_direction,
                                          &qr_schema_fault,
                                          &qr_schema_link_fault,
                                          &qr_schema_blame_link,
                                          &qr_schema_blame_conn,
                                          &qr_schema_blame_curve,
                                          &qr_schema_blame_summary,
                                          &qr_schema_probe,
                                          &qr_schema_pm_pair,
                                          &qr_schema_pm_rack,
                                          &qr_schema_pm_place,
                                          &qr_schema_pm_curve,
                                          &qr_schema_pm_summary,
                                          &qr_schema_hop_packet,
                                          &qr_schema_hop,
                                          &qr_schema_hop_drop,
                                          &qr_schema_hop_profile,
                                          &qr_schema_hop_summary,
                                          &qr_schema_diag_flow,
                                          &qr_schema_diag_event,
                                          &qr_schema_diag_cause,
                                          &qr_schema_diag_blackhole,
                                          &qr_schema_diag_bh_point,
                                          &qr_schema_tt_segment,
                                          &qr_schema_tt_var,
                                          &qr_schema_replay_host,
                                          &qr_schema_replay_clock,
                                          &qr_schema_sample_record,
                                          &qr_schema_qdiff,
                                          &qr_schema_queue_summary,
                                          &qr_schema_queue_series,
                                          &qr_schema_butterfly_replay,
                                          &qr_schema_butterfly_sigma,
                                          &qr_schema_butterfly_series,
                                          &qr_schema_isolated,
                                          &qr_schema_workload_flow,
                                          &qr_schema_clock,
                                          &qr_schema_clock_estimate,
                                          &qr_schema_named_record,
                                          &qr_schema_named_inferred,
                                          &qr_schema_named_flow,
                                          NULL};

int qr_h5_table_open_schema(qr_h5_table **out, qr_h5 *f, const char *path, const qr_h5_schema *s,
                            char *errbuf)
{
    return qr_h5_table_create(out, f, path, s->fields, s->n_fields, s->row_size, 0, errbuf);
}

int qr_h5_write_rows(qr_h5 *f, const char *path, const qr_h5_schema *s, const void *rows, size_t n,
                     char *errbuf)
{
    qr_h5_table *t = NULL;
    int rc = qr_h5_table_open_schema(&t, f, path, s, errbuf);
    if (!rc && n)
        rc = qr_h5_table_append(t, rows, n, errbuf);
    int rc2 = t ? qr_h5_table_close(t, rc ? NULL : errbuf) : QR_OK;
    return rc ? rc : rc2;
}

int qr_h5_read_rows(qr_h5_reader *r, const char *path, const qr_h5_schema *s, void **rows,
                    size_t *n_rows, char *errbuf)
{
    return qr_h5_read_table(r, path, s->fields, s->n_fields, s->row_size, rows, n_rows, errbuf);
}
