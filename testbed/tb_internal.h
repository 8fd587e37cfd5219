/* qreplay testbed, internal: the state of a run (namespaces and processes) shared by its
 * modules: processes and namespaces (tb_proc.c), building the network and its captures
 * (tb_build.c), the agents and applications (tb_agents.c), and the run (testbed_net.c). */
#ifndef QR_TB_INTERNAL_H
#define QR_TB_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "report.h"
#include "testbed_net.h"

/* the star: per host a capture, two of its switch port and an agent; the fabric: a capture per
 * switch port (4 x 20) and host, one per fault log, an agent per host */
#define MAX_PROCS 320
#define MAX_NS                                                                                     \
    (QR_FABRIC_MAX_NODES > QR_TESTBED_MAX_HOSTS ? QR_FABRIC_MAX_NODES + 1                          \
                                                : QR_TESTBED_MAX_HOSTS + 1)

struct proc {
    pid_t pid;
    int in, out, err; /* -1 if none */
    char name[64];
    char errtext[2048];
    size_t errlen;
    char outbuf[4096];
    size_t outlen;
    int listening;
    int64_t start_ns;        /* when it was started (CLOCK_MONOTONIC) */
    int64_t cpu_ns, wall_ns; /* once reaped: its user and system CPU time, and how long it ran */
    int reaped;
};

struct tb {
    const char *cmd;
    char prefix[32];
    char ns[MAX_NS][48];
    int n_ns;
    struct proc p[MAX_PROCS];
    int n_p;
    uint32_t hosts;
    const qr_fabric *fab; /* the fat tree's plan; NULL: the star */
    int absent_sysctl;    /* an optional setting this kernel does not have */
};

/* What a fabric host's capture (its recording) leaves out: its agents' own probes, 007's (TCP
 * with no flag set, which no TCP connection sends) and Pingmesh's (connections to QR_PROBE_PORT),
 * as a deployment records its applications' traffic, not its monitors'. The ICMP answers are
 * not TCP: the import counts and passes them over. */
#define TB_HOST_FILTER "not (tcp port 8765 or (tcp and tcp[13] & 0x3f = 0))"
_Static_assert(QR_PROBE_PORT == 8765, "TB_HOST_FILTER names Pingmesh's port");

/* tb_proc.c: the clock, commands, sysctls, processes (their output read line by line) and
 * the namespaces torn down */
int64_t tbi_now_real(void);
void tbi_ip4_text(uint32_t a, char *buf, size_t size);
int tbi_run_argv(char *const argv[], char *out, size_t outsz);
int tbi_x(struct tb *t, const char *a0, ...);
int tbi_ns_sysctls(struct tb *t, const char *ns, const char *const kv[][2], int n,
                   const int *optional);
int tbi_ns_sysctl(struct tb *t, const char *ns, const char *path, const char *value, int optional);
struct proc *tbi_spawn(struct tb *t, const char *name, char *const argv[]);
void tbi_drain(struct proc *p, void (*on_line)(void *, const char *), void *ctx);
int tbi_exited(struct proc *p, int *status);
void tbi_wait_for(struct proc *p, double seconds);
void tbi_stop_proc(struct proc *p, int sig);
void tbi_teardown(struct tb *t);
/* tb_build.c: the network, its counters and captures */
uint64_t tbi_qdisc_drops(struct tb *t, const char *ns, const char *dev, int *ok);
uint64_t tbi_softnet_drops(void);
int tbi_build_star(struct tb *t, const tb_run *run);
int tbi_build_fabric(struct tb *t, const tb_run *run);
uint64_t tbi_nft_drops(struct tb *t, const char *ns, uint32_t fault, int *ok);
uint64_t tbi_own_count(struct tb *t, const char *ns, const char *chain, int *ok);
/* Namespace ns's ICMP counters (/proc/net/snmp): *sent its time-exceeded messages (OutTimeExcds),
 * *refused the messages its rate limits held back (OutRateLimitGlobal + OutRateLimitHost, 0 on
 * kernels without them). Returns 0, or 1 after printing. */
/* Namespace ns's TCP counters (/proc/net/netstat): *reorder grows by the reorderings its
 * connections detected (TCPSACKReorder + TCPTSReorder + TCPRenoReorder: each raises a socket's
 * reordering threshold), *fast_retrans is its fast retransmits. Returns 0 or 1 after printing. */
int tbi_ns_reorder(struct tb *t, const char *ns, uint64_t *reorder, uint64_t *fast_retrans);
int tbi_ns_icmp(struct tb *t, const char *ns, uint64_t *sent, uint64_t *refused, uint64_t *expired);
/* Wait until the fat tree's switches forward nothing more: their kernels' counts of forwarded and
 * expired packets unchanged over 100 ms, for at most 5 s. The hosts are quiet by then, but a
 * packet round a routing loop goes on until its TTL runs out, which in a loop that fills its own
 * queues takes seconds; the captures must hold it before they stop. */
void tbi_fabric_quiet(struct tb *t);
struct proc *tbi_capture(struct tb *t, const char *ns, const char *dev, const char *dir,
                         const char *file, const char *snap, const char *buf_kb,
                         const char *filter);
int tbi_await_captures(struct tb *t, int first, int last);
void tbi_on_ready(void *ctx, const char *line);
uint64_t tbi_capture_lost(const struct proc *p, int *have);
/* tb_agents.c: the agents and the applications, run to their end */
int tbi_await_ready(struct tb *t, int first, int last, const char *what);
int tbi_run_agents(struct tb *t, tb_run *run, cli_progress *prog, const char *self);
int tbi_run_apps(struct tb *t, tb_run *run, cli_progress *prog);
/* tb_tiers.c: a multi-tier service's slow links shaped on the star's switch, and its hosts run */
int tbi_tiers_shape(struct tb *t, const tb_run *run);
int tbi_run_tiers(struct tb *t, tb_run *run, cli_progress *prog);

#endif
