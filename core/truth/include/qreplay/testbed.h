/* qreplay: the testbed in a box (qreplay testbed). Real Linux TCP in network namespaces through a
 * real queue: one namespace per host of a star, one for the switch, veth pairs between them, each
 * port shaped to the link rate by a token bucket holding a byte-limited FIFO (the static buffer
 * policy, buffer.h). The hosts' tcpdump captures are the recording; the switch's own captures,
 * ingress and egress on every port, are the ground truth this file computes.
 *
 * What a testbed can and cannot be told (qr_testbed_check), and the ground truth of a run
 * (qr_testbed_truth): each packet's arrival at the switch (its ingress capture) and departure (its
 * egress capture), the queue's bytes per flow direction at every arrival, and every drop, checked
 * against the recording packet by packet and against the qdisc's own drop counters. */
#ifndef QREPLAY_TESTBED_H
#define QREPLAY_TESTBED_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/apps.h"
#include "qreplay/flowtable.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
#include "qreplay/traceroute.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Linux's delayed-ACK timeout (its minimum ATO, HZ/25) and the SYN timeout (TCP_TIMEOUT_INIT):
 * the values a scenario run on the testbed must give [tcp] delack_timeout and syn_timeout. */
#define QR_TESTBED_DELACK_NS 40000000LL
#define QR_TESTBED_SYN_TIMEOUT_NS 1000000000LL
/* The largest [links] delay a testbed has: what the veth pair and the forwarding take (measured:
 * about 1 us); a longer one would need an emulator the testbed does not put in the path. */
#define QR_TESTBED_MAX_DELAY_NS 20000
#define QR_TESTBED_MAX_HOSTS 32
/* How far two packets of one direction may cross between two taps (veth pairs hand packets to
 * per-CPU backlogs, so packets sent from two CPUs can swap); beyond it a packet is lost. */
#define QR_TESTBED_REORDER 256

/* Check that the testbed can honour every key of c as a simulation would, or say which cannot: a
 * star of 2..QR_TESTBED_MAX_HOSTS hosts or a fat tree of k = 2 or 4 (fabric.h; its link faults
 * but delay), the static buffer policy, no ECN marking, newreno (Linux
 * reno) or cubic, delack_timeout and syn_timeout at Linux's values, delack_count 2, no host
 * processing delay and no clock offsets (the namespaces share one clock). Every key it cannot
 * honour is named in errbuf (one line each; what does not fit in QR_ERRBUF_SIZE ends in "...").
 * Returns 0 or QR_EVALUE. */
int qr_testbed_check(const qr_config *c, char *errbuf);
/* The same into buf[0..size) (size at least QR_ERRBUF_SIZE): room for every line. */
int qr_testbed_check_all(const qr_config *c, char *buf, size_t size);
/* Linux's name of the scenario's congestion control ("reno", "cubic"); NULL if it has none. */
const char *qr_testbed_congestion(qr_tcp_variant v);

/* One switch port's captures. Port p of the testbed's switch faces host p. */
typedef struct qr_testbed_port {
    const char *ingress;  /* what arrived from host p (tcpdump -Q in on the switch's port) */
    const char *egress;   /* what left towards host p (tcpdump -Q out) */
    uint64_t qdisc_drops; /* the port qdisc's drop counter over the run; UINT64_MAX: unknown */
} qr_testbed_port;

/* What the ground truth found, per port and in all. */
typedef struct qr_testbed_port_report {
    uint64_t ingress, egress;   /* TCP packets captured */
    uint64_t arrivals, drops;   /* at the queue towards this port's host */
    uint64_t qdisc_drops;       /* as given */
    uint64_t max_queue_bytes;   /* the most the queue held at an arrival */
    uint64_t drops_with_room;   /* dropped although queue + packet fit the limit */
    uint64_t admits_over_limit; /* admitted although queue + packet exceed the limit */
    /* the service while busy: bytes of packets that waited for the one before, and the time
     * between those departures (bytes x 8 / time: the rate the shaper achieved) */
    uint64_t busy_bytes;
    int64_t busy_ns;
    double busy_rate_bps; /* busy_bytes x 8 / busy_ns; 0 if the queue never was busy */
} qr_testbed_port_report;

typedef struct qr_testbed_truth_report {
    uint32_t n_ports;
    qr_testbed_port_report *ports; /* n_ports; caller frees with qr_testbed_truth_report_free */
    uint32_t bottleneck;           /* the port whose queue grew largest (the lowest on ties) */
    uint64_t arrivals, drops;
    /* the hop from a host's capture to the switch's ingress capture, over every packet
     * (percentiles: qr_percentile_i64) */
    int64_t hop_min_ns, hop_p50_ns, hop_p99_ns, hop_max_ns;
    /* the queueing of admitted packets (departure - arrival) */
    int64_t sojourn_p50_ns, sojourn_max_ns;
    uint64_t skipped_frames; /* frames of the switch captures that are not TCP (ARP, ...) */
    uint64_t reordered;      /* packets that reached the switch before one their host sent
                                earlier in the same direction */
} qr_testbed_truth_report;

/* Release a report's ports; NULL is allowed. */
void qr_testbed_truth_report_free(qr_testbed_truth_report *r);

/* The ground truth of a testbed run, written to rec_dir/truth/ (arrivals.qra and truth.h5, as
 * qreplay runtime writes them), whole or not at all. rec_dir is the recording imported from the
 * hosts' captures with --clock none (the namespaces share one clock), so the switch's times move
 * onto it by the import's time base. n_ports: the star's hosts; port_limit: each port's bytes.
 *
 * Every TCP packet of port p's ingress capture must be, within its flow direction, one of the next
 * QR_TESTBED_REORDER packets host p's recording holds for that direction not yet seen (same
 * sequence and acknowledgement numbers, flags and length; the first such), and every recorded
 * packet must reach the switch: otherwise the capture is damaged (QR_EVALUE naming the port,
 * frame and packet). A packet of the egress capture is matched to the first not yet departed
 * arrival of its direction with the same IP ID, sequence and acknowledgement numbers, flags and
 * length; arrivals that never leave were dropped (the queue is a FIFO; the run drained before
 * the captures stopped). A veth pair hands a packet over whole the moment its token
 * bucket releases it, which is when a real link would start sending it; the simulation's
 * arrival and departure are its last bit. So the truth's times are the captures' plus the
 * packet's time on the link at the recording's [links] rate (IP bytes x 8 / rate), on both taps. An
 * egress packet that never arrived, one leaving before it arrived, or drops that differ from the
 * qdisc's counter are QR_EVALUE too. A packet's size is its IP length (the qdisc counts the same
 * with stab overhead -14). Returns 0 with *rep (may be NULL), or a reader's error. */
int qr_testbed_truth(const char *rec_dir, const qr_testbed_port *ports, uint32_t n_ports,
                     uint64_t port_limit, qr_testbed_truth_report *rep, char *errbuf);

/* Each switch port's byte limit on the testbed: [buffer] port_size, or else the buffer's size
 * shared evenly by a switch's ports (the star's hosts, a fat tree's k; the static policy's
 * rule). */
uint64_t qr_testbed_port_limit(const qr_config *c);

/* DIR/testbed/ports.csv: one row per switch port of the truth's report (port, host,
 * ingress_packets, egress_packets, arrivals, drops, qdisc_drops, max_queue_bytes, limit_bytes,
 * drops_with_room, admits_over_limit, busy_rate_bps), written whole or not at all. Returns 0 or
 * QR_EIO naming the file. */
int qr_testbed_ports_write(const char *path, const qr_testbed_truth_report *r, uint64_t port_limit,
                           char *errbuf);

/* A packet's time (QR_MTU_BYTES) at rate_bps, in nanoseconds. */
int64_t qr_testbed_packet_ns(uint64_t rate_bps);
/* Whether the machine kept up with the rate: 1 if the 99th percentile of the hop from a host's
 * capture to the switch's (hop_p99_ns: the star's truth report, or the fabric's) took longer than
 * a packet's time at rate_bps, else 0. A slow machine's truth shows its own delays. The one rule
 * of both testbeds. */
int qr_testbed_too_slow(int64_t hop_p99_ns, uint64_t rate_bps);

/* The rate the replays run at: with `measured`, what the bottleneck port's shaper served while
 * busy (a token bucket falls short of its rate when its timer wakes late, and a replay at the
 * nominal rate drains faster). Writes the --set assignment "links.rate=...bps" into buf and
 * returns 1, or returns 0 (replay at the scenario's rate: nominal asked, or nothing was busy). */
int qr_testbed_replay_rate(const qr_testbed_truth_report *r, int measured, char *buf, size_t size);

/* One flow's outcome on the testbed, as its agents saw it. */
typedef struct qr_testbed_flow {
    int sent, received, failed; /* the sender saw the receiver close; the receiver read EOF */
    int64_t start_ns;           /* the sender's connect */
    int64_t last_ns;            /* the receiver's last byte read */
    uint64_t bytes_received;
    uint32_t retransmissions; /* the sender's tcpi_total_retrans */
    const char *why;          /* failed: the reason (may be NULL) */
} qr_testbed_flow;

/* 007's traceroutes of a testbed run (the agents' probes, traceroute.h rows, numbered by trace;
 * dir the data direction of flows[flow] on topology t, sent from sport[flow]): their log at
 * log_path (CSV: trace,host,flow,src,dst,sport,dport,ttl,ip_id,sent_ns,replier,rtt_ns; replier as
 * an address, empty and -1 without an answer) and the paths they found at paths_path as an
 * import's path file (qr_import_paths_read: per traced direction its cables hop by hop, the first
 * known name of any of its traces, "*" unknown), each written whole or not at all. Returns 0, or
 * the flow table's or writer's error naming the file. */
int qr_testbed_traces_write(const char *log_path, const char *paths_path, const qr_topology *t,
                            const qr_flow *flows, size_t n_flows, const uint16_t *sport,
                            const qr_row_traceroute *probes, size_t n, char *errbuf);

/* One line an agent reports on its stdout (testbed_agent.c writes them, the testbed reads them):
 *   "sent FLOW START_NS END_NS BYTES RETRANS"  the sender's connect, its close, bytes, retransmits
 *   "recv FLOW FIRST_NS LAST_NS BYTES"         the receiver's first and last read, bytes read
 *   "fail FLOW REASON"                          the flow failed at this end (REASON: rest of line)
 *   "probe FLOW TRACE TTL IPID SENT_NS"         007's agent sent a traceroute probe of the flow's
 *                                               data direction (its own trace number, TTL, IP ID)
 *   "answer TRACE TTL REPLIER RECV_NS"          an ICMP time-exceeded quoting that probe came from
 *                                               REPLIER (an IPv4 address as a number)
 *   "ping PAIR SPORT SENT_NS RTT_NS"            Pingmesh's agent probed pair PAIR from port SPORT;
 *                                               RTT_NS the connect's time, -1: no answer in time
 * Times are CLOCK_REALTIME ns. */
typedef enum {
    QR_AGENT_SENT = 1,
    QR_AGENT_RECV,
    QR_AGENT_FAIL,
    QR_AGENT_PROBE,
    QR_AGENT_ANSWER,
    QR_AGENT_PING
} qr_agent_kind;
typedef struct qr_agent_report {
    qr_agent_kind kind;
    uint32_t flow;      /* sent, recv, fail, probe: the flow; ping: the pair */
    int64_t a_ns, b_ns; /* sent: connect and close; recv: first and last read; probe: sent;
                           answer: received; ping: sent and the round trip (-1: none) */
    uint64_t bytes;
    uint32_t retransmissions;
    uint32_t trace, ttl, ip_id; /* probe, answer */
    uint32_t replier;           /* answer */
    uint16_t sport;             /* ping */
    char why[96];               /* fail: the reason, cut to fit */
} qr_agent_report;

/* Parse one agent line of a run with n_flows flows (a ping's pair, too, must be below n_flows:
 * give the plan's pairs when parsing pings). Returns 0, or QR_ESYNTAX for a line that is not a
 * report (unknown word, missing or extra fields, a number out of range, a flow not below n_flows,
 * END before START, a TTL above QR_TRACE_MAX_TTL). Never reads past the line's NUL. */
int qr_agent_report_parse(const char *line, uint32_t n_flows, qr_agent_report *out);

/* What the flows of a run did, over all of them. */
typedef struct qr_testbed_flow_summary {
    size_t completed, failed;       /* completed: sent and all its bytes received */
    uint64_t retransmissions;       /* the senders' tcpi_total_retrans */
    int64_t fct_p50_ns, fct_p99_ns; /* completion time (last byte read - connect) of the completed
                                       ones (qr_percentile_i64); -1 if none */
} qr_testbed_flow_summary;

/* DIR/testbed/flows.csv: each flow's schedule and outcome (flow, src, dst, src_port, bytes,
 * start_ns, completed, fct_ns, bytes_received, retransmissions, error), written whole or not at
 * all, and the summary into *out. flows[i] is outcome i of schedule[i], sent from src_port[i].
 * Returns 0, QR_ENOMEM or QR_EIO naming the file. */
int qr_testbed_flows_write(const char *path, const qr_flow *schedule, const uint16_t *src_port,
                           const qr_testbed_flow *flows, size_t n, qr_testbed_flow_summary *out,
                           char *errbuf);

/* One application session's outcome on the testbed ([traffic] pattern = apps): what each side
 * (testbed/apps.py) said it sent and received, in application bytes. */
typedef struct qr_testbed_app {
    int client_ok, server_ok; /* the side exited 0 after saying "done SENT RECEIVED" */
    int64_t start_ns, end_ns; /* the client's start and exit (CLOCK_REALTIME; end 0: never) */
    uint64_t client_sent, client_received, server_sent, server_received;
    char why[160]; /* not completed: the first side's reason ("" if none) */
} qr_testbed_app;

/* Whether session r of `app` completed: both sides exited well, and each received what the other
 * side sends (qr_app_bytes). */
int qr_testbed_app_completed(const qr_app *app, const qr_testbed_app *r);

/* DIR/testbed/apps.csv: each session's schedule and outcome (session, app, client, server,
 * start_ns, completed, duration_ns (the client's run, interpreter start included; -1 if not
 * completed), client_sent, client_received, server_sent, server_received, error), written whole
 * or not at all; *completed gets how many completed. Returns 0 or QR_EIO naming the file. */
int qr_testbed_apps_write(const char *path, const qr_app *apps, const qr_testbed_app *res, size_t n,
                          size_t *completed, char *errbuf);

/* The session each connection of a testbed recording belongs to (session[f] for flow f of rec,
 * read from rec_dir/recording.h5's /import/connections): the session whose server port
 * (QR_APP_FIRST_PORT + i) the connection was opened to, with the session's client and server as
 * its hosts; -1 for a connection of no session. Returns 0 or the reader's error naming the file. */
int qr_testbed_app_sessions(const char *rec_dir, const qr_recording *rec, const qr_app *apps,
                            size_t n_apps, int32_t *session, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
