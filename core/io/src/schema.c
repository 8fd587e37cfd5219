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

static const qr_h5_field pcap_fields[] = {
    {"host", QR_H5_U32, F(qr_row_pcap, host), 0, NULL},
    {"bytes", QR_H5_U64, F(qr_row_pcap, bytes), 0, "bytes (the file's size)"},
    {"sha256", QR_H5_STR, F(qr_row_pcap, sha256), 65, "hex (the whole file's)"}};
const qr_h5_schema qr_schema_pcap = SCHEMA("pcap", qr_row_pcap, pcap_fields);

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
    {"skip_duplicate", QR_H5_U64, IC(skip_duplicate), 0,
     "frames captured twice (equal headers within 5 frames; IP ID 0 and IPv6 within 1 ms with no "
     "answer between)"},
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
    {"clock_offset_ns", QR_H5_I64, IH(clock_offset_ns), 0, "ns, relative to clock_reference"},
    {"clock_residual_ns", QR_H5_I64, IH(clock_residual_ns), 0, "ns (RMS)"},
    {"clock_reference", QR_H5_U32, IH(clock_reference), 0, "host"},
    {"clock_pairs", QR_H5_U32, IH(clock_pairs), 0, "pairs"},
    {"clock_applied_ns", QR_H5_I64, IH(clock_applied_ns), 0,
     "ns, subtracted from its captured times"},
    {"ipid", QR_H5_U8, IH(ipid), 0,
     "0 unknown, 1 per connection, 2 one counter per host, 3 random, 4 zero, 5 constant, 6 mixed"},
    {"ipid_steps", QR_H5_U64, IH(ipid_steps), 0, "steps from one of its packets to the next"},
    {"ipid_rising", QR_H5_U64, IH(ipid_rising), 0, "steps"},
    {"capture", QR_H5_I32, IH(capture), 0, "row of /import/captures, -1 none"},
    {"vantage", QR_H5_U8, IH(vantage), 0, "0 none, 1 host map, 2 most packets, 3 timing"}};
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

static const qr_h5_field traceroute_fields[] = {
    {"trace", QR_H5_U32, F(qr_row_traceroute, trace), 0, "the run's trace number"},
    {"host", QR_H5_U32, F(qr_row_traceroute, host), 0, "the tracing host"},
    {"dir", QR_H5_U32, F(qr_row_traceroute, dir), 0, "flow direction traced"},
    {"ttl", QR_H5_U8, F(qr_row_traceroute, ttl), 0, NULL},
    {"ip_id", QR_H5_U16, F(qr_row_traceroute, ip_id), 0, "trace << 5 | ttl"},
    {"sent_ns", QR_H5_I64, F(qr_row_traceroute, sent_ns), 0, "ns"},
    {"replier", QR_H5_U32, F(qr_row_traceroute, replier), 0, "IPv4 address; 0: no answer"},
    {"rtt_ns", QR_H5_I64, F(qr_row_traceroute, rtt_ns), 0, "ns; -1: no answer"}};
const qr_h5_schema qr_schema_traceroute =
    SCHEMA("traceroute", qr_row_traceroute, traceroute_fields);

static const qr_h5_field icmp_fields[] = {
    {"sw", QR_H5_U32, F(qr_row_icmp, sw), 0, "switch"},
    {"epoch", QR_H5_I64, F(qr_row_icmp, epoch), 0, "[traceroute] epoch number (time / epoch)"},
    {"sent", QR_H5_U64, F(qr_row_icmp, sent), 0, "ICMP time-exceeded answers the switch sent"},
    {"refused", QR_H5_U64, F(qr_row_icmp, refused), 0, "answers its rate limits refused"}};
const qr_h5_schema qr_schema_icmp = SCHEMA("icmp", qr_row_icmp, icmp_fields);

static const qr_h5_field path_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_path, dir), 0, "flow direction traced"},
    {"trace", QR_H5_U32, F(qr_row_path, trace), 0, "rows of one trace share it"},
    {"hop", QR_H5_U32, F(qr_row_path, hop), 0, "position from the sender, from 0"},
    {"traced_ns", QR_H5_I64, F(qr_row_path, traced_ns), 0, "ns"},
    {"link", QR_H5_STR, F(qr_row_path, link), 48, "cable name; empty: unknown"}};
const qr_h5_schema qr_schema_path = SCHEMA("path", qr_row_path, path_fields);

static const qr_h5_field replay_host_fields[] = {
    {"host", QR_H5_U32, F(qr_row_replay_host, host), 0, NULL},
    {"packets", QR_H5_U64, F(qr_row_replay_host, packets), 0, "packets"},
    {"bytes", QR_H5_U64, F(qr_row_replay_host, bytes), 0, "bytes"}};
const qr_h5_schema qr_schema_replay_host =
    SCHEMA("replay_host", qr_row_replay_host, replay_host_fields);

static const qr_h5_field replay_clock_fields[] = {
    {"host", QR_H5_U32, F(qr_row_replay_clock, host), 0, NULL},
    {"correction_ns", QR_H5_I64, F(qr_row_replay_clock, correction_ns), 0, "ns"},
    {"residual_ns", QR_H5_I64, F(qr_row_replay_clock, residual_ns), 0, "ns"},
    {"reference", QR_H5_U32, F(qr_row_replay_clock, reference), 0, NULL},
    {"pairs", QR_H5_U32, F(qr_row_replay_clock, pairs), 0, NULL},
    {"estimate_ns", QR_H5_I64, F(qr_row_replay_clock, estimate_ns), 0, "ns"},
    {"bound_ns", QR_H5_I64, F(qr_row_replay_clock, bound_ns), 0, "ns"}};
const qr_h5_schema qr_schema_replay_clock =
    SCHEMA("replay_clock", qr_row_replay_clock, replay_clock_fields);

static const qr_h5_field sample_record_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_sample_record, dir), 0, NULL},
    {"index", QR_H5_U64, F(qr_row_sample_record, index), 0, "packet number in the direction"},
    {"time_ns", QR_H5_I64, F(qr_row_sample_record, time_ns), 0, "ns (recorded clock)"},
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
    {"estimate_ns", QR_H5_I64, CE(estimate_ns), 0, "ns"},
    {"residual_ns", QR_H5_I64, CE(residual_ns), 0, "ns"},
    {"true_ns", QR_H5_I64, CE(true_ns), 0, "ns"},
    {"error_ns", QR_H5_I64, CE(error_ns), 0, "ns"},
    {"path_ns", QR_H5_I64, CE(path_ns), 0, "ns"},
    {"bound_ns", QR_H5_I64, CE(bound_ns), 0, "ns"},
    {"correction_ns", QR_H5_I64, CE(correction_ns), 0, "ns"}};
const qr_h5_schema qr_schema_clock_estimate =
    SCHEMA("clock_estimate", qr_row_clock_estimate, clock_estimate_fields);

static const qr_h5_field named_record_fields[] = {
    {"flow", QR_H5_STR, F(qr_row_named_record, flow), QR_FLOW_NAME_MAX, NULL},
    {"index", QR_H5_U64, F(qr_row_named_record, index), 0, "packets"},
    {"time_ns", QR_H5_I64, F(qr_row_named_record, time_ns), 0, "ns"},
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

const qr_h5_schema *const qr_schemas_run[] = {&qr_schema_flow,
                                              &qr_schema_host,
                                              &qr_schema_pcap,
                                              &qr_schema_detected,
                                              &qr_schema_received,
                                              &qr_schema_import_capture,
                                              &qr_schema_import_host,
                                              &qr_schema_import_conn,
                                              &qr_schema_drop,
                                              &qr_schema_direction,
                                              &qr_schema_fault,
                                              &qr_schema_link_fault,
                                              &qr_schema_probe,
                                              &qr_schema_traceroute,
                                              &qr_schema_icmp,
                                              &qr_schema_path,
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
