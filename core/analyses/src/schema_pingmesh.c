/* The tables of pingmesh.h5 (qreplay pingmesh) (schema_pingmesh.h). */
#include <stddef.h>

#include "qreplay/schema_pingmesh.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

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
    {"faulty", QR_H5_U8, F(qr_row_pm_place, faulty), 0, "truth: 1 if a suspect is faulty"},
    {"rtt_p99_ns", QR_H5_I64, F(qr_row_pm_place, rtt_p99_ns), 0,
     "its answered probes' round-trip p99; -1 none"},
    {"rest_rtt_p99_ns", QR_H5_I64, F(qr_row_pm_place, rest_rtt_p99_ns), 0,
     "the other probes' round-trip p99; -1 none"},
    {"latency", QR_H5_STR, F(qr_row_pm_place, latency), 12,
     "congestion (p99 >= ratio x the rest's), silent, or empty"}};
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
     "that over [links] rate"},
    {"connect_wait_ns", QR_H5_I64, F(qr_row_pm_summary, connect_wait_ns), 0,
     "ns the agents waited for a connect ([pingmesh] connect_wait; 0: the timeout)"},
    {"syn_rto_ns", QR_H5_I64, F(qr_row_pm_summary, syn_rto_ns), 0,
     "ns: the kernel's first SYN timeout assumed (--syn-rto)"},
    {"connect_scored", QR_H5_U64, F(qr_row_pm_summary, connect_scored), 0,
     "connects sent a wait before the end"},
    {"connect_slow", QR_H5_U64, F(qr_row_pm_summary, connect_slow), 0,
     "of them that took at least one SYN timeout, or never completed"},
    {"connect_failed", QR_H5_U64, F(qr_row_pm_summary, connect_failed), 0,
     "of them not completed within the wait"},
    {"syn_timeouts", QR_H5_U64, F(qr_row_pm_summary, syn_timeouts), 0,
     "SYN timeouts their times show (a failed one: those within the wait)"},
    {"connect_drop_rate", QR_H5_F64, F(qr_row_pm_summary, connect_drop_rate), 0,
     "Pingmesh's: connect_slow / connect_scored (NaN: not measured)"},
    {"syn_drop_rate", QR_H5_F64, F(qr_row_pm_summary, syn_drop_rate), 0,
     "lost handshakes per attempt: syn_timeouts / (syn_timeouts + completed)"},
    {"connect_right", QR_H5_U64, F(qr_row_pm_summary, connect_right), 0,
     "truth: slow connects whose first SYN or SYN-ACK was dropped"},
    {"connect_missed", QR_H5_U64, F(qr_row_pm_summary, connect_missed), 0,
     "truth: connects whose first SYN or SYN-ACK was dropped, not slow"},
    {"connect_false", QR_H5_U64, F(qr_row_pm_summary, connect_false), 0,
     "truth: slow connects whose first SYN and SYN-ACK arrived"}};
const qr_h5_schema qr_schema_pm_summary =
    SCHEMA("pm_summary", qr_row_pm_summary, pm_summary_fields);

static const qr_h5_field pm_sla_fields[] = {
    {"level", QR_H5_STR, F(qr_row_pm_sla, level), 8,
     "rack, pod or spine: the servers' distance (\"N sw\": N switches apart)"},
    {"window", QR_H5_I64, F(qr_row_pm_sla, window), 0, "floor(sent / window)"},
    {"start_ns", QR_H5_I64, F(qr_row_pm_sla, start_ns), 0, "ns: the window's start"},
    {"probes", QR_H5_U64, F(qr_row_pm_sla, probes), 0, "probes sent in it and resolved"},
    {"lost", QR_H5_U64, F(qr_row_pm_sla, lost), 0, "not answered within the timeout"},
    {"drop_rate", QR_H5_F64, F(qr_row_pm_sla, drop_rate), 0, "lost / probes"},
    {"p50_ns", QR_H5_I64, F(qr_row_pm_sla, p50_ns), 0, "ns; -1: none answered"},
    {"p99_ns", QR_H5_I64, F(qr_row_pm_sla, p99_ns), 0, "ns; -1: none answered"},
    {"p999_ns", QR_H5_I64, F(qr_row_pm_sla, p999_ns), 0, "ns; -1: none answered"},
    {"breach", QR_H5_U8, F(qr_row_pm_sla, breach), 0,
     "1: its drop rate or p99 above the SLA given (--sla-drop, --sla-p99)"}};
const qr_h5_schema qr_schema_pm_sla = SCHEMA("pm_sla", qr_row_pm_sla, pm_sla_fields);

static const qr_h5_field pm_bhole_fields[] = {
    {"kind", QR_H5_STR, F(qr_row_pm_bhole, kind), 8, "tor or podset"},
    {"name", QR_H5_STR, F(qr_row_pm_bhole, name), 24, "rack s3, pod 1"},
    {"index", QR_H5_U32, F(qr_row_pm_bhole, index), 0, "edge switch (tor) or pod (podset)"},
    {"members", QR_H5_U32, F(qr_row_pm_bhole, members), 0, "tor: servers; podset: ToRs"},
    {"symptomatic", QR_H5_U32, F(qr_row_pm_bhole, symptomatic), 0,
     "of them with the black-hole symptom"},
    {"score", QR_H5_F64, F(qr_row_pm_bhole, score), 0, "symptomatic / members"},
    {"pairs", QR_H5_U32, F(qr_row_pm_bhole, pairs), 0,
     "symptom pairs it touched when tested (flagged: explained)"},
    {"flagged", QR_H5_U32, F(qr_row_pm_bhole, flagged), 0, "order flagged, from 1; 0 not"},
    {"faulty", QR_H5_U8, F(qr_row_pm_bhole, faulty), 0, "truth: one of its links is faulty"}};
const qr_h5_schema qr_schema_pm_bhole = SCHEMA("pm_bhole", qr_row_pm_bhole, pm_bhole_fields);

const qr_h5_schema *const qr_schemas_pingmesh[] = {
    &qr_schema_pm_pair,    &qr_schema_pm_rack, &qr_schema_pm_place, &qr_schema_pm_curve,
    &qr_schema_pm_summary, &qr_schema_pm_sla,  &qr_schema_pm_bhole, NULL};
