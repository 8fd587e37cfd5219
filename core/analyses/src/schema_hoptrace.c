/* The tables of trace.h5 (qreplay trace) (schema_hoptrace.h). */
#include <stddef.h>

#include "qreplay/guided.h"
#include "qreplay/schema_hoptrace.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

static const qr_h5_field hop_packet_fields[] = {
    {"packet", QR_H5_U64, F(qr_row_hop_packet, packet), 0, "direction << 32, number"},
    {"dir", QR_H5_U32, F(qr_row_hop_packet, dir), 0, NULL},
    {"flow", QR_H5_U32, F(qr_row_hop_packet, flow), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_hop_packet, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_hop_packet, dst), 0, "host"},
    {"sport", QR_H5_U16, F(qr_row_hop_packet, sport), 0, NULL},
    {"dport", QR_H5_U16, F(qr_row_hop_packet, dport), 0, NULL},
    {"flags", QR_H5_U8, F(qr_row_hop_packet, flags), 0, "TCP flags"},
    {"ip_id", QR_H5_U16, F(qr_row_hop_packet, ip_id), 0,
     "IPv4 identification (what --mirror-sample samples)"},
    {"retransmit", QR_H5_U8, F(qr_row_hop_packet, retransmit), 0,
     "sends sequence space its direction already sent"},
    {"detected", QR_H5_U8, F(qr_row_hop_packet, detected), 0, "its receiver detected it lost"},
    {"fate", QR_H5_U8, F(qr_row_hop_packet, fate), 0,
     "0: left its last switch (or in flight); else where its trace stops as the trace can tell: 1 "
     "threshold, 2 "
     "buffer-full, 3 tagged (counted by the switch so), 16 silent (the port counted no drop), 17 "
     "counted (the port counted other drops: reason unknown)"},
    {"in_flight", QR_H5_U8, F(qr_row_hop_packet, in_flight), 0,
     "fate 0 but its trace stops after an admit short of its destination, within the longest "
     "stay in the network of the log's end"},
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
    {"decision", QR_H5_U8, F(qr_row_hop, decision), 0, "0 admitted, else as /packets fate"},
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
    {"reason", QR_H5_U8, F(qr_row_hop_drop, reason), 0,
     "as /packets fate: what the trace can tell, never a planted fault"},
    {"tagged", QR_H5_U8, F(qr_row_hop_drop, tagged), 0, NULL},
    {"detected", QR_H5_U8, F(qr_row_hop_drop, detected), 0, "its receiver detected it lost"},
    {"retransmit", QR_H5_U8, F(qr_row_hop_drop, retransmit), 0, "it was itself a resend"},
    {"payload", QR_H5_U32, F(qr_row_hop_drop, payload), 0, "bytes of data"},
    {"queue_bytes", QR_H5_U64, F(qr_row_hop_drop, queue_bytes), 0, NULL},
    {"total_bytes", QR_H5_U64, F(qr_row_hop_drop, total_bytes), 0, NULL},
    {"threshold", QR_H5_I64, F(qr_row_hop_drop, threshold), 0, NULL},
    {"link", QR_H5_U32, F(qr_row_hop_drop, link), 0,
     "the directed link out of the port where its trace stops"},
    {"link_name", QR_H5_STR, F(qr_row_hop_drop, link_name), 24, "\"s8>s16\""},
    {"resent_ns", QR_H5_I64, F(qr_row_hop_drop, resent_ns), 0,
     "the sender's next send of the same sequence; -1: none, -2: nothing to resend"},
    {"silent", QR_H5_U8, F(qr_row_hop_drop, silent), 0,
     "inferred: 1 if the port's drop counter did not move in that counter interval"},
    {"counter_drops", QR_H5_U64, F(qr_row_hop_drop, counter_drops), 0,
     "drops the port's counter counted in that interval"}};
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
    {"drops_counted", QR_H5_U64, F(qr_row_hop_summary, drops_counted), 0,
     "stopped traces where the port's counter moved for other drops: reason unknown"},
    {"detected", QR_H5_U64, F(qr_row_hop_summary, detected), 0, "drops their receiver detected"},
    {"resent", QR_H5_U64, F(qr_row_hop_summary, resent), 0, "drops their sender resent"},
    {"silent", QR_H5_U64, F(qr_row_hop_summary, silent), 0,
     "drops inferred silent (no counter moved)"},
    {"queue_mean_ns", QR_H5_F64, F(qr_row_hop_summary, queue_mean_ns), 0,
     "path queueing of the delivered matched packets"},
    {"queue_p99_ns", QR_H5_I64, F(qr_row_hop_summary, queue_p99_ns), 0, NULL},
    {"queue_max_ns", QR_H5_I64, F(qr_row_hop_summary, queue_max_ns), 0, NULL},
    {"buffer_bytes", QR_H5_U64, F(qr_row_hop_summary, buffer_bytes), 0, "[buffer] size"},
    {"rate_bps", QR_H5_U64, F(qr_row_hop_summary, rate_bps), 0, "[links] rate"},
    {"mirror_copies", QR_H5_U64, F(qr_row_hop_summary, mirror_copies), 0,
     "copies the switches' mirror rule sent"},
    {"mirror_lost", QR_H5_U64, F(qr_row_hop_summary, mirror_lost), 0,
     "copies the mirror sessions lost (their FIFO was full)"},
    {"gaps", QR_H5_U64, F(qr_row_hop_summary, gaps), 0,
     "delivered matched packets whose trace misses a hop"},
    {"gap_copies", QR_H5_U64, F(qr_row_hop_summary, gap_copies), 0,
     "copies inferred lost: missing from delivered traces (seen further on, so not a drop)"},
    {"in_flight", QR_H5_U64, F(qr_row_hop_summary, in_flight), 0,
     "matched packets whose trace stops after an admit near the log's end"},
    {"slow_links", QR_H5_U32, F(qr_row_hop_summary, slow_links), 0,
     "the latency profiler's links whose least latency stands out"},
    {"link_median_min_ns", QR_H5_I64, F(qr_row_hop_summary, link_median_min_ns), 0,
     "ns: the links' median least latency (-1: no link profiled)"},
    {"slow_rate_links", QR_H5_U32, F(qr_row_hop_summary, slow_rate_links), 0,
     "links whose service rate is --link-ratio times below [links] rate"},
    {"link_median_rate_bps", QR_H5_F64, F(qr_row_hop_summary, link_median_rate_bps), 0,
     "bit/s: the links' median service rate (NaN: none measured)"},
    {"loops", QR_H5_U64, F(qr_row_hop_summary, loops), 0, "the loop debugger's cycles"},
    {"looping", QR_H5_U64, F(qr_row_hop_summary, looping), 0, "matched packets caught in a loop"}};
const qr_h5_schema qr_schema_hop_summary =
    SCHEMA("hop_summary", qr_row_hop_summary, hop_summary_fields);

static const qr_h5_field hop_ecmp_fields[] = {
    {"sw", QR_H5_U32, F(qr_row_hop_ecmp, sw), 0, "an edge or aggregation switch"},
    {"port", QR_H5_U32, F(qr_row_hop_ecmp, port), 0, "one of its up ports (a member of its group)"},
    {"link", QR_H5_U32, F(qr_row_hop_ecmp, link), 0, "the link out of it (topology id)"},
    {"link_name", QR_H5_STR, F(qr_row_hop_ecmp, link_name), 24, "\"s0>s8\""},
    {"packets", QR_H5_U64, F(qr_row_hop_ecmp, packets), 0, "matched packets it admitted"},
    {"bytes", QR_H5_U64, F(qr_row_hop_ecmp, bytes), 0, "their IP bytes"},
    {"flows", QR_H5_U64, F(qr_row_hop_ecmp, flows), 0, "distinct flows among them"},
    {"share", QR_H5_F64, F(qr_row_hop_ecmp, share), 0, "of the group's packets"}};
const qr_h5_schema qr_schema_hop_ecmp = SCHEMA("hop_ecmp", qr_row_hop_ecmp, hop_ecmp_fields);

static const qr_h5_field guided_port_fields[] = {
    {"sw", QR_H5_U32, F(qr_row_guided_port, sw), 0, "switch"},
    {"port", QR_H5_U32, F(qr_row_guided_port, port), 0, "the port the probes were headed out of"},
    {"link", QR_H5_U32, F(qr_row_guided_port, link), 0, "the link out of it (topology id)"},
    {"link_name", QR_H5_STR, F(qr_row_guided_port, link_name), 24, "\"s8>s16\""},
    {"probes", QR_H5_U64, F(qr_row_guided_port, probes), 0,
     "guided probes whose trace reached the switch headed out of the port"},
    {"lost", QR_H5_U64, F(qr_row_guided_port, lost), 0, "of them, those whose trace stops there"},
    {"inside", QR_H5_U64, F(qr_row_guided_port, inside), 0,
     "of those, lost inside the switch (their last copy arrived there)"},
    {"counter_drops", QR_H5_U64, F(qr_row_guided_port, counter_drops), 0,
     "the port's drop counter while the probes ran"},
    {"counters_known", QR_H5_U8, F(qr_row_guided_port, counters_known), 0,
     "the counters were read (REC_DIR/mirror/counters.csv)"},
    {"silent", QR_H5_U8, F(qr_row_guided_port, silent), 0,
     "lost probes while its counter did not move"}};
const qr_h5_schema qr_schema_guided_port =
    SCHEMA("guided_port", qr_row_guided_port, guided_port_fields);

static const qr_h5_field bounce_fields[] = {
    {"sw", QR_H5_U32, F(qr_row_bounce, sw), 0, "S1: the switch that sent the probes"},
    {"port", QR_H5_U32, F(qr_row_bounce, port), 0, "the port they left by"},
    {"peer", QR_H5_U32, F(qr_row_bounce, peer), 0, "S2: the switch that sent them back"},
    {"peer_port", QR_H5_U32, F(qr_row_bounce, peer_port), 0, "S2's port on the cable"},
    {"link", QR_H5_U32, F(qr_row_bounce, link), 0, "the link out of the port (topology id)"},
    {"link_name", QR_H5_STR, F(qr_row_bounce, link_name), 24, "\"s8>s16\""},
    {"sent", QR_H5_U64, F(qr_row_bounce, sent), 0,
     "rounds: every switch sends each out of every port"},
    {"returned", QR_H5_U64, F(qr_row_bounce, returned), 0, "of them, back in at S1"},
    {"lost_in", QR_H5_U64, F(qr_row_bounce, lost_in), 0,
     "no copy at all: lost in S1 before its port's mirror"},
    {"lost_out", QR_H5_U64, F(qr_row_bounce, lost_out), 0, "lost on the way to S2"},
    {"lost_peer", QR_H5_U64, F(qr_row_bounce, lost_peer), 0, "lost inside S2"},
    {"lost_back", QR_H5_U64, F(qr_row_bounce, lost_back), 0, "lost on the way back"},
    {"unseen", QR_H5_U64, F(qr_row_bounce, unseen), 0,
     "rounds with copies but none leaving S1 (the mirror missed it)"},
    {"rtt_min_ns", QR_H5_I64, F(qr_row_bounce, rtt_min_ns), 0, "ns: S1 out to S1 in, least"},
    {"rtt_p50_ns", QR_H5_I64, F(qr_row_bounce, rtt_p50_ns), 0, "ns: median"},
    {"rtt_max_ns", QR_H5_I64, F(qr_row_bounce, rtt_max_ns), 0, "ns: most"},
    {"out_p50_ns", QR_H5_I64, F(qr_row_bounce, out_p50_ns), 0,
     "ns: S1 out to S2 in, median (two switches' clocks)"},
    {"back_p50_ns", QR_H5_I64, F(qr_row_bounce, back_p50_ns), 0,
     "ns: S2 out to S1 in, median (two switches' clocks)"},
    {"peer_p50_ns", QR_H5_I64, F(qr_row_bounce, peer_p50_ns), 0, "ns: inside S2, median"},
    {"slow", QR_H5_U8, F(qr_row_bounce, slow), 0,
     "1: rtt_p50_ns above link_ratio x the median of the ports' medians"},
    {"lossy", QR_H5_U8, F(qr_row_bounce, lossy), 0, "1: lost probes"}};
const qr_h5_schema qr_schema_bounce = SCHEMA("bounce", qr_row_bounce, bounce_fields);

static const qr_h5_field hop_link_fields[] = {
    {"link", QR_H5_U32, F(qr_row_hop_link, link), 0, "directed link id"},
    {"name", QR_H5_STR, F(qr_row_hop_link, name), 24, "as s8>s16"},
    {"packets", QR_H5_U64, F(qr_row_hop_link, packets), 0,
     "matched packets with a copy at both its ends"},
    {"min_ns", QR_H5_I64, F(qr_row_hop_link, min_ns), 0,
     "ns: the least time from the near switch's copy to the far one's"},
    {"p50_ns", QR_H5_I64, F(qr_row_hop_link, p50_ns), 0, "ns"},
    {"p99_ns", QR_H5_I64, F(qr_row_hop_link, p99_ns), 0, "ns"},
    {"slow", QR_H5_U8, F(qr_row_hop_link, slow), 0,
     "1: min_ns at least --link-ratio times the links' median min_ns"},
    {"rate_bps", QR_H5_F64, F(qr_row_hop_link, rate_bps), 0,
     "bit/s: its service rate, the median over back-to-back pairs (NaN: none)"},
    {"rate_pairs", QR_H5_U64, F(qr_row_hop_link, rate_pairs), 0,
     "pairs of copies that left back to back"},
    {"slow_rate", QR_H5_U8, F(qr_row_hop_link, slow_rate), 0,
     "1: rate_bps --link-ratio times below [links] rate (5 pairs or more)"}};
const qr_h5_schema qr_schema_hop_link = SCHEMA("hop_link", qr_row_hop_link, hop_link_fields);

static const qr_h5_field hop_loop_fields[] = {
    {"cycle", QR_H5_STR, F(qr_row_hop_loop, cycle), 64, "s8>s16>s8: smallest switch first"},
    {"switches", QR_H5_U32, F(qr_row_hop_loop, switches), 0, "in the cycle (0: none shows)"},
    {"packets", QR_H5_U64, F(qr_row_hop_loop, packets), 0, "matched packets caught in it"},
    {"copies", QR_H5_U64, F(qr_row_hop_loop, copies), 0,
     "their copies past the longest loop-free path"},
    {"example", QR_H5_U64, F(qr_row_hop_loop, example), 0, "the first packet caught"},
    {"first_ns", QR_H5_I64, F(qr_row_hop_loop, first_ns), 0, "ns: its first copy past it"},
    {"last_ns", QR_H5_I64, F(qr_row_hop_loop, last_ns), 0, "ns: the last such copy"},
    {"planted", QR_H5_U8, F(qr_row_hop_loop, planted), 0,
     "truth: its links are a planted loop's ([faults] loop)"}};
const qr_h5_schema qr_schema_hop_loop = SCHEMA("hop_loop", qr_row_hop_loop, hop_loop_fields);

const qr_h5_schema *const qr_schemas_hoptrace[] = {&qr_schema_hop_packet,
                                                   &qr_schema_hop,
                                                   &qr_schema_hop_drop,
                                                   &qr_schema_hop_profile,
                                                   &qr_schema_hop_summary,
                                                   &qr_schema_guided_port,
                                                   &qr_schema_hop_ecmp,
                                                   &qr_schema_hop_link,
                                                   &qr_schema_hop_loop,
                                                   &qr_schema_bounce,
                                                   NULL};
