/* qreplay testbed: the network namespaces, qdiscs, captures and agents of one testbed run
 * (testbed_net.c, tb_proc.c, tb_build.c, tb_agents.c). The algorithms (what a run can honour, its
 * ground truth) are the core's (qreplay/testbed.h); this is the plumbing around the kernel's tools.
 */
#ifndef QREPLAY_TESTBED_NET_H
#define QREPLAY_TESTBED_NET_H

#include "qreplay/apps.h"
#include "qreplay/fabric.h"
#include "qreplay/krec_rate.h"
#include "qreplay/pingmesh.h"
#include "qreplay/tb_repeat.h"
#include "qreplay/testbed.h"
#include "qreplay/traceroute.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct qr_config;
struct qr_flow;
struct qr_tiers_spec;

/* One flow's outcome on the testbed. */
typedef struct tb_flow_result {
    int sent, received, failed; /* the sender saw the receiver close; the receiver read EOF */
    int64_t start_ns, end_ns;   /* sender: connect, receiver's close seen */
    int64_t first_ns, last_ns;  /* receiver: first and last byte read */
    uint64_t bytes_sent, bytes_received;
    uint32_t retrans; /* tcpi_total_retrans */
    char why[96];     /* failed: the reason */
} tb_flow_result;

/* One application session's outcome on the testbed: qr_testbed_app (testbed.h). */
typedef qr_testbed_app tb_app_result;

/* A process of the run: what it cost, from the kernel's accounting when it was reaped. */
typedef struct tb_proc_cpu {
    char name[64]; /* "tcpdump of h0.pcap", "the kernel recorder", ... */
    double cpu_s;  /* user and system CPU seconds (a BPF program's time in the kernel is
                      charged to whatever it interrupted, not to its loader) */
    double wall_s; /* from start to exit */
} tb_proc_cpu;

typedef struct tb_run {
    /* in: the scenario's flows, run by the agents, or its application sessions (n_apps > 0) */
    const struct qr_config *conf;
    const struct qr_flow *flows;
    size_t n_flows;
    const uint16_t *src_port; /* per flow */
    const qr_app *apps;
    size_t n_apps;
    const char *apps_script; /* testbed/apps.py */
    /* or a multi-tier service (qreplay tiers --testbed; tiers.h): tiers_script (testbed/tiers.py)
     * run on every host of the spec with its plan, each host's truth log to tiers_log_dir/hN.log */
    const struct qr_tiers_spec *tiers;
    const char *tiers_script, *tiers_plan, *tiers_log_dir;
    int64_t tiers_duration_ns;   /* how long its clients send requests */
    uint64_t port_limit;         /* bytes of each switch port's FIFO */
    const char *capture_dir;     /* where the pcaps go (exists) */
    const qr_fabric *fabric;     /* a fat tree's plan (fabric.h); NULL: the star */
    const qr_pingmesh *pingmesh; /* Pingmesh's plan ([pingmesh] interval); NULL: no probing */
    int record; /* run the kernel recorder (qreplay record) on every host beside tcpdump: one
                 * process, record_dir/hN.qrk */
    const char *record_dir; /* with record: where the records go (qreplay replay --from record
                               reads the run folder's record/) */
    /* the star: the packet corrector (kernel/corrector.h) on the switch's ports, dropping the
     * n_fates packets of fates (a repeat of a run: qreplay testbed --repeat); NULL: none */
    const qr_tb_fate *fates;
    size_t n_fates;
    int quiet;
    /* out */
    tb_proc_cpu *procs; /* the captures' and the recorder's CPU (allocated by tb_run_testbed) */
    size_t n_procs;
    tb_flow_result *res;    /* n_flows, allocated by tb_run_testbed */
    tb_app_result *app_res; /* n_apps, allocated by tb_run_testbed */
    uint64_t *qdisc_drops;  /* per switch port (the fabric: switch x k + port) */
    uint64_t *fault_drops;  /* the fabric: per fault of qr_fabric_faults, its rule's counter */
    /* the fabric, per switch: the IPv4 packets it sent itself (before its queues) and those not
     * TCP it took for itself, by its nftables counters */
    uint64_t *own_sent, *own_taken;
    /* the fabric, per switch: the packets not TCP that arrived with one of its own addresses as
     * their source (its own answers back round a loop), by its nftables counter */
    uint64_t *own_back;
    /* the fabric, per switch: its ICMP counters over the run (/proc/net/snmp in its namespace,
     * fresh with it): time-exceeded answers sent, answers its rate limits refused */
    uint64_t *icmp_sent, *icmp_refused;
    /* the fabric, per switch: the packets it did not forward because their TTL ran out (its
     * Ip InHdrErrors over the run) */
    uint64_t *ttl_expired;
    /* the fabric with [everflow] guided: what each switch port's qdisc counted from just before
     * the agents stopped (and sent the guided probes) to the end (per switch x k + port; NULL:
     * no guided probes), how many the agents sent, and how many link round-trip probes the
     * switches sent (guided_plan.h qr_bounce_plan) */
    uint64_t *sweep_drops;
    uint64_t guided_sent, bounce_sent;
    /* the hosts' kernels' own TCP counters over the run (each host namespace's are fresh): the
     * reorderings their connections detected (each raises that socket's fast-retransmit
     * threshold above 3 dupacks: the only way to a late fast retransmit) and their fast
     * retransmits */
    uint64_t reorder_events, fast_retrans;
    /* 007's agents ([traceroute] per_connection): every probe, numbered by trace in the order
     * the traces started, its answer (replier, rtt_ns) if one came; times CLOCK_REALTIME */
    qr_row_traceroute *traces;
    size_t n_traces;
    /* Pingmesh's agents: every probe in send order (probe, pair, src, dst, sport, sent_ns,
     * rtt_ns; the truth's columns empty); times CLOCK_REALTIME */
    qr_row_probe *pings;
    size_t n_pings;
    int same_hash_seed; /* the fabric: this kernel has no per-switch hash seed */
    uint64_t host_qdisc_drops;
    int64_t t0_ns;    /* the common start, CLOCK_REALTIME */
    double traffic_s; /* from the start to the last flow's end */
    int stopped;      /* [traffic] stop came before every flow ended: the agents reset the rest */
    int64_t agents_stop_ns;   /* when the agents were told to stop, CLOCK_REALTIME */
    char recorder_said[2048]; /* with record: what the recorder wrote to stderr (its last 2 KB) */
    /* the corrector: TCP packets it looked at, dropped, and of connections whose SYN it did not
     * see */
    uint64_t corrected_seen, corrected, corrected_unknown;
    char kernel[128];
} tb_run;

/* The token buckets' depth: one packet (1500 IP bytes) plus the bytes of TB_TIMER_SLACK_NS at the
 * rate. A bucket of one packet loses every late wake-up of its timer for good (measured on a
 * 2-core VM at 100 Mbps: the busy port served 87 Mbps); the slack lets the next packet catch up,
 * at the price of letting that much leave early when a busy period starts. Measured at 100 Mbps,
 * 5 runs each of scenarios/testbed-single-switch.ini: 40 us of slack served 99.1-99.4 Mbps
 * (tagged exact replay qdiff mean 0.9-3.5 MTU, drop error 2.6-5.1%), 120 us 99.5-100.1 Mbps
 * (1.3-1.9 MTU, 0% in every run). */
#define TB_TIMER_SLACK_NS 120000
uint64_t tb_burst_bytes(uint64_t rate_bps);

/* The address of host h in the testbed (text, IPv4): the star's 10.0.h.2, or the fabric's plan
 * (fab not NULL: topology.h's addresses). */
void tb_host_addr(const qr_fabric *fab, uint32_t h, char *buf, size_t size);
/* Whether this process may build a testbed; 0, or 1 after printing why not. */
int tb_check_privileges(const char *command);
/* Build the testbed, run the flows (or the sessions), capture, tear down. Captures:
 * capture_dir/hN.pcap (host N, both directions), and on the star swN-in.pcap and swN-out.pcap
 * (the switch port facing host N); on the fabric sS-pP.pcap (port P of switch S, both
 * directions: a frame's source MAC address tells which, qr_fabric_mac) and fault-F.pcap (the
 * packets fault F's rule dropped, its netfilter log). Returns 0, 1 after printing an error (a tool
 * that failed, a capture that lost packets, an agent that died), or 130/143 when interrupted.
 * Everything it created is gone when it returns. */
int tb_run_testbed(const char *command, tb_run *run);
void tb_run_free(tb_run *run);

/* What the flows of a run did (testbed.h). */
typedef qr_testbed_flow_summary tb_flow_summary;
/* Write each flow's outcome to path (CSV: flow,src,dst,src_port,bytes,start_ns,completed,fct_ns,
 * bytes_received,retransmissions,error) and summarise them. Returns 0, or 1 after printing. */
int tb_write_flows(const char *command, const tb_run *run, const char *path, tb_flow_summary *out);
/* Remove the namespaces left by testbeds whose process is gone (a kill -9); prints what it did.
 * Returns the number removed. */
int tb_cleanup_stale(const char *command);

/* qreplay record --rate-test: the packet rates this machine's kernel recorder keeps whole. */
typedef struct tb_rate_opts {
    const double *rates; /* the sender's aims, writes per second, increasing */
    size_t n_rates;
    double step_s;      /* each step's traffic */
    uint32_t msg_bytes; /* one write */
    const char *th;     /* the recorder's --th */
    const char *work;   /* a folder (exists) for the steps' records: step-K/ */
    int quiet;
} tb_rate_opts;
/* Two namespaces joined by a veth pair (offloads off); the idle step (the recorder alone), then
 * each rate: the recorder started on both namespaces, a sender writing msg_bytes messages with
 * TCP_NODELAY at the rate for step_s to a receiver that reads them all, the recorder stopped
 * (SIGINT) and its records read. steps: n_rates + 1 (the idle step first); it stops rising after
 * a step whose sender fell short of its aim (the machine's limit). Returns 0, 1 after printing, or
 * 130/143 when interrupted; the namespaces are gone when it returns. */
int tb_record_rate(const char *command, const tb_rate_opts *o, qr_krec_rate_step *steps,
                   size_t *n_steps);

/* qreplay testbed-agent HOST SCHEDULE ...: the agent inside a host namespace (testbed_agent.c), run
 * by tb_run_testbed, never by a user. Its protocol on stdout: "ready", then "sent", "recv" and
 * "fail" lines per flow. Returns the exit status. */
int qr_cmd_testbed_agent(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
