/* qreplay: per-hop traces of chosen packets (qreplay trace), the way Everflow (Zhu et al., SIGCOMM
 * 2015) matches packets and mirrors them at every switch, with its drop debugger and latency
 * profiler.
 *
 * Everflow installs match rules in the switches; every switch a matched packet crosses mirrors it
 * to an analyzer, which strings the mirrored copies together into the packet's trace. An arrival
 * log (queuelog.h: the runtime's truth/arrivals.qra, or a replay's) already holds every switch
 * arrival of every packet, so here the match runs over the log and the recording that names its
 * packets:
 *  - a match expression (qr_match_parse, grammar below) selects packets by what they are (flow,
 *    5-tuple, hosts, ports, TCP flags, payload, retransmission, whether their receiver detected
 * them lost) and by what happened to them on the way (dropped and why, tagged, through a switch or
 *    queue, queued at least T at some hop, when they reached their first switch);
 *  - every hop of a matched packet: switch, egress port, arrival time, queueing delay, the queue's
 *    and the switch's bytes and the dynamic threshold when it arrived, and the decision taken;
 *  - the drop debugger: every drop of a matched packet, where (the queue, or for a planted fault
 * the link), why (the decision and the numbers behind it), whether its receiver detected it and
 * when its sender resent the data;
 *  - the latency profiler: the queueing delay of the matched packets per hop of the path and per
 *    queue (count, mean, p50, p99, max), and each hop's share of the path's queueing.
 *
 * The queueing delay at a hop is the wire time, at the port's configured rate ([links] rate: what
 * an operator knows), of the bytes the queue held when the packet arrived: what is ahead of it in
 * the FIFO. The head packet may be partly sent, so this is an upper bound by less than one
 * packet's wire time. A port degraded below its rate by a fault (the runtime's [faults] rate)
 * drains slower than that: the trace shows its queue's bytes, and its delays too short by the
 * rate's ratio; the planted fault is for the scorer, not for the trace.
 *
 * Grammar (words are case-sensitive; 'and', 'or', 'not' also as &&, ||, !; 'and' binds tighter
 * than 'or'; parentheses group):
 *   all                      every packet
 *   flow N | flow N-M        packets of flow N (both directions) or of flows N..M
 *   dir N                    packets of flow direction N (2f: data, 2f+1: ACKs of flow f)
 *   packet ID | packet D:S   one packet: its 64-bit id, or its direction and number
 *   src H | dst H | host H   from, to, or from or to host H: hN or its IPv4 address
 *   sport P | dport P | port P
 *   A>B                      one direction of a 5-tuple, A and B as H or H:P ("h3:10000>h9:5001",
 *                            spaces around > allowed)
 *   syn fin rst psh ack urg ece cwr    the TCP flag is set
 *   payload                  carries data
 *   retransmit               sends sequence space its direction already sent (data, SYN or FIN)
 *   detected                 its receiver detected it lost (the recording's /drops_detected)
 *   dropped                  its trace stops at a switch (it was dropped there or on the link out)
 *   drop R                   ... as R: threshold, buffer-full, tagged (the switch counted it so),
 *                            silent (the port's counter did not move: Everflow's silent drop),
 *                            counted (the counter moved, the reason unknown)
 *   tagged                   it carried a drop tag (tagged replays)
 *   via S | via S:P | via A>B   it reached switch sS, the egress queue of sS port P, or the queue
 * of the link A>B (A a switch) queued T                 it waited at least T ("10us") in some queue
 *   after T | before T       it reached its first switch at or after / before T ("2ms")
 */
#ifndef QREPLAY_HOPTRACE_H
#define QREPLAY_HOPTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/guided.h"
#include "qreplay/packet.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/schema_hoptrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed match expression. */
typedef struct qr_match qr_match;

/* Parse expr against the recording's network and flows. Returns 0, QR_EVALUE with the place and
 * reason in errbuf ("at 'x' (column 6): 'x' is not a flow number"; "flow 900: the recording has
 * flows 0-99"; "expected ')'"), or QR_ENOMEM. Caller owns *out (qr_match_free). */
int qr_match_parse(qr_match **out, const char *expr, const qr_recording *rec, char *errbuf);
void qr_match_free(qr_match *m);

/* What one packet is, for qr_match_eval: its direction and number, source and destination hosts,
 * the recorded packet (may be NULL for a packet of no recording: then every test of its header is
 * false), its retransmission and detection marks, when it reached its first switch, and the hop
 * tests that held at some hop (qr_match_hop's bits, OR-ed over its hops); first_ns is INT64_MIN
 * for a packet that reached no switch. */
typedef struct qr_match_packet {
    uint64_t packet;
    uint32_t dir, src, dst;
    const qr_packet *pk;
    uint8_t retransmit, detected;
    int64_t first_ns;
    uint64_t hops;
} qr_match_packet;

/* What a trace can say of where a packet's trace stops: the switch's own decision where it counts
 * a drop of that kind (threshold, buffer-full, tagged: qr_decision), or one of these. A planted
 * fault's drop (the log's QR_DROP_FAULT) is never told as such: it is silent, or counted (for
 * reasons the counter does not give) when its port counted other drops in that interval. */
#define QR_TRACE_SILENT 16  /* the trace stops at a port whose drop counter did not move */
#define QR_TRACE_COUNTED 17 /* the trace stops where the counter moved; the reason is unknown */
/* "admit", "threshold", "buffer-full", "tagged", "silent", "counted"; "?" otherwise. */
const char *qr_trace_decision_name(int d);

/* The hop tests that hold at one arrival, as a bit set (queue_ns: its queueing delay). Where the
 * trace stops (dropped) and the drop tests that need the counters (drop silent, drop counted) do
 * not hold here: qr_match_fate. */
uint64_t qr_match_hop(const qr_match *m, const qr_arrival *a, int64_t queue_ns);
/* The drop tests that hold for a packet whose trace stopped with the observed decision `fate`
 * (a queue's decision, QR_TRACE_SILENT or QR_TRACE_COUNTED; QR_ADMIT: it did not stop), as
 * qr_match_hop's bits. */
uint64_t qr_match_fate(const qr_match *m, int fate);
/* Whether packet p matches. */
int qr_match_eval(const qr_match *m, const qr_match_packet *p);

typedef struct qr_hoptrace_opts {
    const char *match;    /* the expression ("all" if NULL) */
    const char *arrivals; /* the arrival log */
    int runtime;          /* the log is the switches' mirrored copies (not a replay's) */
    /* when the mirror sessions stopped (the run's end: qr_recording_end_ns); a trace that ends
     * in an admitted copy less than a packet's longest stay in the network before then is in
     * flight, not lost. 0: the log's last arrival. */
    int64_t observed_until_ns;
    size_t limit; /* at most this many packets in /packets and /hops (first by first-hop
                     time; 0: all); drops and the profile cover every matched packet */
    int64_t counter_interval_ns; /* how often the switches' drop counters are read (1 ms) */
    /* What the switches mirror to the analyzer (Everflow's match rules), and what the mirror
     * sessions lose. QR_MIRROR_ALL: every packet at every switch (a lossless tap, the default);
     * QR_MIRROR_EVERFLOW: Everflow's rules, packets with SYN, FIN or RST set (the debug mark of
     * its guided probes marks no recorded packet). A switch sends each copy (the packet's first
     * QR_MIRROR_SNAP bytes in QR_MIRROR_ENCAP bytes of encapsulation) through one mirror session
     * of mirror_rate_bps over a FIFO of mirror_buffer_bytes; a copy that does not fit is lost,
     * so a busy switch loses copies. mirror_rate_bps 0: no session limit (nothing is lost). */
    int mirror;
    /* Everflow's IP-ID sampling: its rule also mirrors the packets whose IP ID's low
     * mirror_sample bits are 0 (1 in 2^n; every switch mirrors the same ones, so a sampled
     * packet's trace is whole). 0: none; at most 16. */
    uint32_t mirror_sample;
    /* the latency profiler's links: a link is slow where its least latency is at least this many
     * times the links' median least latency (2) */
    double link_ratio;
    uint64_t mirror_rate_bps, mirror_buffer_bytes;
    /* where the mirrored copies of Everflow's guided probes are (guided.h: REC_DIR/mirror); NULL
     * or a folder without them: no guided probes */
    const char *mirror_dir;
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
} qr_hoptrace_opts;

#define QR_MIRROR_ALL 0
#define QR_MIRROR_EVERFLOW 1
#define QR_MIRROR_SNAP 128
#define QR_MIRROR_ENCAP 38 /* Ethernet, outer IPv4 and GRE */
/* "all", "everflow"; NULL for another value. */
const char *qr_mirror_name(int mirror);
/* The mirror rule named name: 0 and *mirror, or QR_EVALUE. */
int qr_mirror_parse(const char *name, int *mirror);
/* Whether Everflow's match rules mirror packet k: SYN, FIN or RST, or (sample_bits 1-16) an IP ID
 * whose low sample_bits bits are 0. */
int qr_everflow_rule(const qr_packet *k, uint32_t sample_bits);

/* Fill *o with the defaults: match "all", keep at most 1000 packets in /packets, no progress
 * callback, every packet mirrored without loss, a 64 KB mirror FIFO when a rate is set. */
void qr_hoptrace_opts_default(qr_hoptrace_opts *o);

/* The trace graded against the planted faults, by a scorer (hoptrace_score.h): the analysis
 * leaves it zero. A "silent" drop is one the trace inferred: its mirrored trace stops at a switch
 * port whose drop counter did not move in that counter interval. */
typedef struct qr_hoptrace_truth {
    int has_truth;          /* scored against a truth.h5 that planted gray or blackhole faults */
    uint64_t silent;        /* the trace's silent drops */
    char silent_links[512]; /* the links they were on, by name, sorted, comma-separated */
    int right;              /* at least one, and every one on a cable with a planted fault */
    /* the drops a debugger reads in time order until a faulty cable showed its second silent
     * drop, and the time of that drop; 0 and -1 when it never did */
    uint64_t detect_after_drops;
    int64_t detect_after_ns;
    /* the inference against the log's own decisions: silent drops a planted fault made, fault
     * drops it took for counted ones (their port counted other drops in the interval) */
    uint64_t silent_right, fault_missed;
    /* the guided probes: the ports where they were lost silently, on how many planted faulty
     * cables, and the planted faulty links (directions) they crossed, how many showed a loss */
    uint64_t guided_silent, guided_silent_right, guided_faulty_probed, guided_faulty_found;
    char guided_links[512];
    /* the link round trips: ports flagged (slow or lossy), those on a planted faulty cable
     * (gray, blackhole, delay or rate, either way), and the faulty cables' ports probed and
     * flagged */
    uint64_t bounce_flagged, bounce_right, bounce_faulty_probed, bounce_faulty_found;
} qr_hoptrace_truth;

typedef struct qr_hoptrace {
    qr_hoptrace_opts opts;
    char match[512];            /* the expression as given */
    qr_row_hop_packet *packets; /* the kept matched packets, by first-hop time */
    size_t n_packets;
    qr_row_hop *hops; /* their hops, by packet then hop */
    size_t n_hops;
    qr_row_hop_drop *drops; /* every drop of a matched packet, by time */
    size_t n_drops;
    qr_row_hop_profile *profile; /* per hop and queue, by hop then packets */
    size_t n_profile;
    qr_row_hop_ecmp *ecmp; /* per up port of every switch that spreads over several, by switch */
    size_t n_ecmp;
    qr_row_hop_link *links; /* the latency profiler's links, slowest least latency first */
    size_t n_links;
    qr_row_hop_loop *loops; /* the loop debugger's cycles, the most packets first */
    size_t n_loops;
    qr_row_hop_summary summary;
    int has_guided;          /* opts.mirror_dir held guided probes' copies */
    qr_guided guided;        /* what they show (guided.h) */
    int has_bounce;          /* opts.mirror_dir held link round-trip probes' copies */
    qr_bounce bounce;        /* what they show (guided.h qr_bounce_run, at opts.link_ratio) */
    qr_hoptrace_truth truth; /* zero unless a scorer filled it */
} qr_hoptrace;

/* Trace the packets of recording rec that opts->match selects through opts->arrivals. Returns 0,
 * QR_EVALUE (a bad expression), QR_ENOENT / QR_EFORMAT / QR_ETRUNC (the log, naming it and the
 * record), QR_EVALUE (a log of another network: a switch or port the topology lacks) or QR_ENOMEM,
 * with the reason in errbuf. Caller frees out (qr_hoptrace_free). */
int qr_hoptrace_run(const qr_recording *rec, const qr_hoptrace_opts *opts, qr_hoptrace *out,
                    char *errbuf);
void qr_hoptrace_free(qr_hoptrace *t);

/* Write trace.h5 atomically (/packets, /hops, /drops, /profile, /summary, and /score's attributes
 * when t->truth.has_truth; the expression, the log and the scenario as attributes). Returns 0 or
 * QR_EIO. */
int qr_hoptrace_write(const char *path, const qr_scenario *s, const char *recording_id,
                      const qr_hoptrace *t, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
