/* qreplay testbed: namespaces, veth pairs, qdiscs, tcpdump and the agents (testbed_net.h).
 *
 * The star: namespace qrtbPID-hN per host (eth0, 10.0.N.2, default route via the switch) and
 * qrtbPID-sw (port pN facing host N, 10.0.N.1, forwarding). Fixed MAC addresses with permanent
 * neighbour entries (no ARP during a run), IPv6 off (no neighbour discovery), segmentation and
 * receive offloads off (one packet is one packet at every tap). Every egress, hosts' and switch
 * ports', is a token bucket at the link rate (burst of one packet) over a byte FIFO; the qdiscs
 * count IP bytes (stab overhead -14), as the simulation does. Names carry the process id: two
 * testbeds on one machine never share a name. */
#define _GNU_SOURCE
#include "testbed_net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/guided_plan.h"
#include "qreplay/metrics.h"
#include "qreplay/scenario.h"
#include "qreplay/stats.h"
#include "qreplay/workload.h"
#include "report.h"

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

static int64_t now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void ip4_text(uint32_t a, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u.%u", a >> 24, a >> 16 & 255u, a >> 8 & 255u, a & 255u);
}

void tb_host_addr(const qr_fabric *fab, uint32_t h, char *buf, size_t size)
{
    if (fab)
        ip4_text(qr_topology_host_addr(qr_fabric_topology(fab), h), buf, size);
    else
        snprintf(buf, size, "10.0.%u.2", h);
}

/* Run a tool to its end; its output (stdout and stderr) into out. Returns its exit status, 127 if
 * it could not be started. */
static int run_argv(char *const argv[], char *out, size_t outsz)
{
    int fd[2];
    if (pipe(fd))
        return 127;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 127;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        signal(SIGPIPE, SIG_DFL); /* the testbed ignores it; its programs do not */
        execvp(argv[0], argv);
        fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t r;
    char junk[1024];
    while ((r = read(fd[0], len + 1 < outsz ? out + len : junk,
                     len + 1 < outsz ? outsz - 1 - len : sizeof junk)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (len + 1 < outsz)
            len += (size_t)r;
    }
    if (outsz)
        out[len < outsz ? len : outsz - 1] = 0;
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Run `tool args...` (NULL-terminated); on failure print the command and its output. */
static int x(struct tb *t, const char *a0, ...)
{
    char *argv[48];
    int n = 0;
    argv[n++] = (char *)a0;
    va_list ap;
    va_start(ap, a0);
    const char *s;
    while ((s = va_arg(ap, const char *)) && n < 47)
        argv[n++] = (char *)s;
    va_end(ap);
    argv[n] = NULL;
    char out[2048];
    int rc = run_argv(argv, out, sizeof out);
    if (rc) {
        char line[1024];
        size_t l = 0;
        for (int i = 0; i < n && l < sizeof line - 2; i++)
            l += (size_t)snprintf(line + l, sizeof line - l, "%s%s", i ? " " : "", argv[i]);
        size_t ol = strlen(out);
        while (ol && (out[ol - 1] == '\n' || out[ol - 1] == ' '))
            out[--ol] = 0;
        fprintf(stderr, "qreplay %s: '%s' failed (exit %d)%s%s\n", t->cmd, line, rc,
                *out ? ": " : "", out);
        return 1;
    }
    return 0;
}

/* Write each of n values into /proc/sys/PATH inside namespace ns, in one child (setns once);
 * optional ones may be absent (then t->absent_sysctl is set). Returns 0 or 1 after printing. */
static int ns_sysctls(struct tb *t, const char *ns, const char *const kv[][2], int n,
                      const int *optional)
{
    pid_t pid = fork();
    if (pid < 0)
        return cli_fail(t->cmd, "fork: %s", strerror(errno));
    if (pid == 0) {
        char p[256];
        snprintf(p, sizeof p, "/run/netns/%s", ns);
        int fd = open(p, O_RDONLY);
        if (fd < 0 || setns(fd, CLONE_NEWNET))
            _exit(2);
        int absent = 0;
        for (int i = 0; i < n; i++) {
            snprintf(p, sizeof p, "/proc/sys/%s", kv[i][0]);
            int f = open(p, O_WRONLY);
            if (f < 0 && errno == ENOENT && optional[i]) {
                absent = 1;
                continue;
            }
            ssize_t w = f < 0 ? -1 : write(f, kv[i][1], strlen(kv[i][1]));
            if (f >= 0)
                close(f);
            if (w != (ssize_t)strlen(kv[i][1]))
                _exit(10 + i);
        }
        _exit(absent);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 5;
    if (rc == 1)
        t->absent_sysctl = 1;
    if (rc <= 1)
        return 0;
    if (rc >= 10 && rc - 10 < n)
        return cli_fail(t->cmd, "namespace %s: cannot set /proc/sys/%s to %s", ns, kv[rc - 10][0],
                        kv[rc - 10][1]);
    return cli_fail(t->cmd, "cannot enter namespace %s", ns);
}

/* Write value into /proc/sys/PATH inside namespace ns (absent files are fine when optional). */
static int ns_sysctl(struct tb *t, const char *ns, const char *path, const char *value,
                     int optional)
{
    const char *const kv[1][2] = {{path, value}};
    return ns_sysctls(t, ns, kv, 1, &optional);
}

/* Start a process in the background: stdin, stdout and stderr on pipes. */
static struct proc *spawn(struct tb *t, const char *name, char *const argv[])
{
    if (t->n_p == MAX_PROCS)
        return NULL;
    int in[2], out[2], err[2];
    if (pipe(in) || pipe(out) || pipe(err))
        return NULL;
    pid_t pid = fork();
    if (pid < 0)
        return NULL;
    if (pid == 0) {
        setpgid(0, 0); /* a Ctrl-C reaches qreplay, which stops everything in order */
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        signal(SIGPIPE, SIG_DFL); /* the testbed ignores it; its programs do not */
        execvp(argv[0], argv);
        fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    fcntl(err[0], F_SETFD, FD_CLOEXEC);
    struct proc *p = &t->p[t->n_p++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->in = in[1];
    p->out = out[0];
    p->err = err[0];
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

/* Read what a process wrote to stderr (kept, last 2 KB) and stdout (lines handed to on_line). */
static void drain(struct proc *p, void (*on_line)(void *, const char *), void *ctx)
{
    char buf[4096];
    ssize_t r;
    while (p->err >= 0 && (r = read(p->err, buf, sizeof buf)) > 0) {
        if (p->errlen + (size_t)r >= sizeof p->errtext) {
            size_t keep = sizeof p->errtext / 2;
            memmove(p->errtext, p->errtext + p->errlen - keep, keep);
            p->errlen = keep;
        }
        size_t n = (size_t)r < sizeof p->errtext - 1 - p->errlen
                       ? (size_t)r
                       : sizeof p->errtext - 1 - p->errlen;
        memcpy(p->errtext + p->errlen, buf, n);
        p->errlen += n;
        p->errtext[p->errlen] = 0;
        if (strstr(p->errtext, "listening on"))
            p->listening = 1;
    }
    while (p->out >= 0 &&
           (r = read(p->out, p->outbuf + p->outlen, sizeof p->outbuf - 1 - p->outlen)) > 0) {
        p->outlen += (size_t)r;
        p->outbuf[p->outlen] = 0;
        char *nl;
        while ((nl = strchr(p->outbuf, '\n'))) {
            *nl = 0;
            if (on_line)
                on_line(ctx, p->outbuf);
            size_t used = (size_t)(nl + 1 - p->outbuf);
            memmove(p->outbuf, nl + 1, p->outlen - used + 1);
            p->outlen -= used;
        }
        if (p->outlen == sizeof p->outbuf - 1)
            p->outlen = 0;
    }
}

static int exited(struct proc *p, int *status)
{
    if (p->pid <= 0)
        return 1;
    int st = 0;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == p->pid) {
        p->pid = -1;
        if (status)
            *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return 1;
    }
    return 0;
}

static void wait_for(struct proc *p, double seconds)
{
    for (int i = 0; i < (int)(seconds * 50) && !exited(p, NULL); i++) {
        drain(p, NULL, NULL);
        usleep(20000);
    }
}

static void stop_proc(struct proc *p, int sig)
{
    if (p->pid > 0) {
        kill(p->pid, sig);
        wait_for(p, 2.0);
        if (p->pid > 0) {
            kill(p->pid, SIGKILL);
            int st = 0;
            waitpid(p->pid, &st, 0);
            p->pid = -1;
        }
    }
}

static void close_proc(struct proc *p)
{
    if (p->in >= 0)
        close(p->in);
    if (p->out >= 0)
        close(p->out);
    if (p->err >= 0)
        close(p->err);
    p->in = p->out = p->err = -1;
}

/* Kill every process whose network namespace is the one `ns` names (st: its /run/netns file's
 * stat), and wait until none is left (a killed process keeps its namespace until it has exited);
 * at most 2 s. The number it killed. */
static size_t kill_in_ns(const struct stat *st)
{
    size_t killed = 0;
    for (int round = 0; round < 100; round++) {
        DIR *d = opendir("/proc");
        size_t found = 0;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char *end, path[64];
            long pid = strtol(e->d_name, &end, 10);
            struct stat ps;
            if (*end || pid <= 1 || pid == (long)getpid())
                continue;
            snprintf(path, sizeof path, "/proc/%ld/ns/net", pid);
            if (stat(path, &ps) || ps.st_ino != st->st_ino || ps.st_dev != st->st_dev)
                continue;
            kill((pid_t)pid, SIGKILL);
            found++;
        }
        if (d)
            closedir(d);
        if (!found)
            break;
        killed += round == 0 ? found : 0;
        usleep(20000);
    }
    return killed;
}

/* Kill whatever runs in a namespace and delete it; then kill again what had entered it just
 * before (a process being started into it when its testbed was killed: it holds the namespace
 * though its name is gone). */
static void remove_ns(const char *ns)
{
    char out[4096], path[300];
    struct stat st;
    snprintf(path, sizeof path, "/run/netns/%s", ns);
    int have = stat(path, &st) == 0;
    if (have)
        kill_in_ns(&st);
    char *del[] = {"ip", "netns", "del", (char *)ns, NULL};
    run_argv(del, out, sizeof out);
    if (have)
        kill_in_ns(&st);
}

static void teardown(struct tb *t)
{
    for (int i = 0; i < t->n_p; i++) {
        stop_proc(&t->p[i], SIGTERM);
        close_proc(&t->p[i]);
    }
    t->n_p = 0;
    for (int i = t->n_ns - 1; i >= 0; i--)
        remove_ns(t->ns[i]);
    t->n_ns = 0;
}

int tb_cleanup_stale(const char *command)
{
    char out[16384];
    char *list[] = {"ip", "netns", "list", NULL};
    if (run_argv(list, out, sizeof out))
        return 0;
    char names[256][64];
    long pids[256];
    int n = 0, removed = 0;
    for (char *s = strtok(out, "\n"); s && n < 256; s = strtok(NULL, "\n"))
        if (sscanf(s, "%63s", names[n]) == 1 && sscanf(names[n], "qrtb%ld-", &pids[n]) == 1)
            n++;
    for (int i = 0; i < n; i++) {
        if (pids[i] > 0 && (kill((pid_t)pids[i], 0) == 0 || errno != ESRCH))
            continue; /* its testbed still runs */
        printf("qreplay %s: removing namespace %s (its testbed, process %ld, is gone)\n", command,
               names[i], pids[i]);
        remove_ns(names[i]);
        removed++;
    }
    return removed;
}

static const char *find_tool(const char *name)
{
    static char buf[256];
    const char *dirs[] = {"/usr/sbin", "/usr/bin",        "/sbin",
                          "/bin",      "/usr/local/sbin", "/usr/local/bin"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(buf, sizeof buf, "%s/%s", dirs[i], name);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return NULL;
}

int tb_check_privileges(const char *command)
{
    if (geteuid() != 0)
        return cli_fail(command, "needs root: it creates network namespaces, veth pairs and qdiscs "
                                 "(CAP_SYS_ADMIN, CAP_NET_ADMIN); run it as root or with sudo");
    const char *tools[][2] = {
        {"ip", "iproute2"}, {"tc", "iproute2"}, {"tcpdump", "tcpdump"}, {"ethtool", "ethtool"}};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (!find_tool(tools[i][0]))
            return cli_fail(command, "%s not found: install the Debian package %s (./waf deps)",
                            tools[i][0], tools[i][1]);
    return 0;
}

/* ---- the run ---- */

struct agent_ctx {
    tb_run *run;
    size_t done;   /* flows finished at both ends or failed */
    uint8_t *fin;  /* per flow: bit 1 sender done, bit 2 receiver done */
    uint32_t host; /* of the agent whose lines are read */
    size_t cap_traces, cap_pings;
    int oom;
};

/* Room for one more of *n rows of `size` bytes in *rows (capacity *cap, doubled from `first`).
 * Returns 0, or 1 (out of memory: *rows unchanged). */
static int grow(void **rows, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    void *g = realloc(*rows, c * size);
    if (!g)
        return 1;
    *rows = g;
    *cap = c;
    return 0;
}

/* 007's and Pingmesh's lines: probes logged (a trace's number is the agent's own until the run
 * ends: qr_row_traceroute.host tells the agents apart), answers matched to their probe. */
static void on_probe_line(struct agent_ctx *c, const qr_agent_report *rep)
{
    tb_run *run = c->run;
    if (rep->kind == QR_AGENT_ANSWER) {
        for (size_t i = run->n_traces; i-- > 0;) {
            qr_row_traceroute *x = &run->traces[i];
            if (x->host == c->host && x->trace == rep->trace && x->ttl == rep->ttl) {
                if (!x->replier) {
                    x->replier = rep->replier;
                    x->rtt_ns = rep->a_ns - x->sent_ns;
                }
                return;
            }
        }
        return; /* an answer to no probe of this agent: not counted */
    }
    if (rep->kind == QR_AGENT_PROBE) {
        if (grow((void **)&run->traces, &c->cap_traces, run->n_traces, sizeof *run->traces, 256)) {
            c->oom = 1;
            return;
        }
        run->traces[run->n_traces++] = (qr_row_traceroute){.trace = rep->trace,
                                                           .host = c->host,
                                                           .dir = qr_dir_data(rep->flow),
                                                           .ttl = (uint8_t)rep->ttl,
                                                           .ip_id = (uint16_t)rep->ip_id,
                                                           .sent_ns = rep->a_ns,
                                                           .rtt_ns = -1};
        return;
    }
    if (grow((void **)&run->pings, &c->cap_pings, run->n_pings, sizeof *run->pings, 1024)) {
        c->oom = 1;
        return;
    }
    const qr_probe_pair *pp = qr_pingmesh_pair(run->pingmesh, rep->flow);
    run->pings[run->n_pings] = (qr_row_probe){.probe = (uint32_t)run->n_pings,
                                              .pair = rep->flow,
                                              .src = pp->src,
                                              .dst = pp->dst,
                                              .sport = rep->sport,
                                              .sent_ns = rep->a_ns,
                                              .rtt_ns = rep->b_ns,
                                              .echoed = rep->b_ns >= 0};
    run->n_pings++;
}

static void on_agent_line(void *vctx, const char *line)
{
    struct agent_ctx *c = vctx;
    qr_agent_report rep;
    unsigned long long guided;
    if (sscanf(line, "guided %llu", &guided) == 1) {
        c->run->guided_sent += guided;
        return;
    }
    if (!strncmp(line, "ping ", 5)) {
        size_t pairs = c->run->pingmesh ? qr_pingmesh_pairs(c->run->pingmesh) : 0;
        if (qr_agent_report_parse(line, (uint32_t)pairs, &rep) == QR_OK)
            on_probe_line(c, &rep);
        return;
    }
    if (qr_agent_report_parse(line, (uint32_t)c->run->n_flows, &rep) != QR_OK)
        return; /* not a report: the agent's other output */
    if (rep.kind == QR_AGENT_PROBE || rep.kind == QR_AGENT_ANSWER) {
        on_probe_line(c, &rep);
        return;
    }
    unsigned id = rep.flow;
    tb_flow_result *r = &c->run->res[id];
    uint8_t before = c->fin[id];
    if (rep.kind == QR_AGENT_SENT) {
        r->sent = 1;
        r->start_ns = rep.a_ns;
        r->end_ns = rep.b_ns;
        r->bytes_sent = rep.bytes;
        r->retrans = rep.retransmissions;
        c->fin[id] |= 1;
    } else if (rep.kind == QR_AGENT_RECV) {
        r->received = 1;
        r->first_ns = rep.a_ns;
        r->last_ns = rep.b_ns;
        r->bytes_received = rep.bytes;
        c->fin[id] |= 2;
    } else {
        r->failed = 1;
        snprintf(r->why, sizeof r->why, "%s", rep.why);
        c->fin[id] |= 3;
    }
    if (before != 3 && c->fin[id] == 3)
        c->done++;
}

static uint64_t qdisc_drops(struct tb *t, const char *ns, const char *dev, int *ok)
{
    char out[4096];
    char *argv[] = {"tc", "-n", (char *)ns, "-s", "qdisc", "show", "dev", (char *)dev, NULL};
    *ok = run_argv(argv, out, sizeof out) == 0;
    const char *d = *ok ? strstr(out, "dropped ") : NULL;
    if (!d) {
        *ok = 0;
        fprintf(stderr, "qreplay %s: cannot read the drop counter of %s in %s\n", t->cmd, dev, ns);
        return 0;
    }
    return strtoull(d + 8, NULL, 10);
}

static uint64_t softnet_drops(void)
{
    FILE *f = fopen("/proc/net/softnet_stat", "r");
    uint64_t sum = 0;
    unsigned a, b;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%x %x", &a, &b) == 2)
            sum += b;
    if (f)
        fclose(f);
    return sum;
}

uint64_t tb_burst_bytes(uint64_t rate_bps)
{
    return 1500 + rate_bps / 8 * TB_TIMER_SLACK_NS / 1000000000;
}

static int build(struct tb *t, const tb_run *run)
{
    const qr_config *c = run->conf;
    char rate[64], burst[32], hlimit[32], plimit[32], rto[32], icw[16];
    snprintf(rate, sizeof rate, "%" PRIu64 "bit", c->links.rate_bps);
    snprintf(burst, sizeof burst, "%" PRIu64, tb_burst_bytes(c->links.rate_bps));
    snprintf(hlimit, sizeof hlimit, "%" PRIu64, (uint64_t)c->host.nic_queue * 1514u);
    snprintf(plimit, sizeof plimit, "%" PRIu64, run->port_limit);
    snprintf(rto, sizeof rto, "%" PRId64 "ms", c->tcp.min_rto_ns / 1000000);
    snprintf(icw, sizeof icw, "%d", c->tcp.init_cwnd);
    const char *sw = t->ns[t->hosts];
    for (uint32_t i = 0; i <= t->hosts; i++) {
        if (x(t, "ip", "netns", "add", t->ns[i], NULL))
            return 1;
        t->n_ns = (int)i + 1;
        /* no IPv6 (no neighbour discovery or MLD on the wire) before any link exists */
        if (ns_sysctl(t, t->ns[i], "net/ipv6/conf/all/disable_ipv6", "1", 1) ||
            ns_sysctl(t, t->ns[i], "net/ipv6/conf/default/disable_ipv6", "1", 1) ||
            x(t, "ip", "-n", t->ns[i], "link", "set", "lo", "up", NULL))
            return 1;
    }
    if (ns_sysctl(t, sw, "net/ipv4/ip_forward", "1", 0))
        return 1;
    for (uint32_t i = 0; i < t->hosts; i++) {
        const char *h = t->ns[i];
        char port[16], hmac[32], smac[32], haddr[32], saddr[32], hip[32], sip[32];
        snprintf(port, sizeof port, "p%u", i);
        snprintf(hmac, sizeof hmac, "02:00:0a:00:%02x:02", i);
        snprintf(smac, sizeof smac, "02:00:0a:00:%02x:01", i);
        snprintf(hip, sizeof hip, "10.0.%u.2", i);
        snprintf(sip, sizeof sip, "10.0.%u.1", i);
        snprintf(haddr, sizeof haddr, "%s/24", hip);
        snprintf(saddr, sizeof saddr, "%s/24", sip);
        if (x(t, "ip", "link", "add", "eth0", "address", hmac, "netns", h, "type", "veth", "peer",
              "name", port, "address", smac, "netns", sw, NULL) ||
            x(t, "ip", "-n", h, "addr", "add", haddr, "dev", "eth0", NULL) ||
            x(t, "ip", "-n", sw, "addr", "add", saddr, "dev", port, NULL) ||
            x(t, "ip", "netns", "exec", h, "ethtool", "-K", "eth0", "tso", "off", "gso", "off",
              "gro", "off", NULL) ||
            x(t, "ip", "netns", "exec", sw, "ethtool", "-K", port, "tso", "off", "gso", "off",
              "gro", "off", NULL) ||
            x(t, "ip", "-n", h, "link", "set", "eth0", "up", NULL) ||
            x(t, "ip", "-n", sw, "link", "set", port, "up", NULL) ||
            x(t, "ip", "-n", h, "neigh", "replace", sip, "lladdr", smac, "dev", "eth0", "nud",
              "permanent", NULL) ||
            x(t, "ip", "-n", sw, "neigh", "replace", hip, "lladdr", hmac, "dev", port, "nud",
              "permanent", NULL) ||
            x(t, "ip", "-n", h, "route", "add", "10.0.0.0/16", "via", sip, "dev", "eth0", "rto_min",
              rto, "initcwnd", icw, "congctl", qr_testbed_congestion(c->tcp.variant), NULL) ||
            x(t, "tc", "-n", h, "qdisc", "add", "dev", "eth0", "root", "stab", "overhead", "-14",
              "tbf", "rate", rate, "burst", burst, "limit", hlimit, NULL) ||
            x(t, "tc", "-n", sw, "qdisc", "add", "dev", port, "root", "stab", "overhead", "-14",
              "tbf", "rate", rate, "burst", burst, "limit", plimit, NULL))
            return 1;
    }
    return 0;
}

/* A switch's own traffic, counted where no capture can see it all (nftables, table ip
 * qreplay_own): chain out, every IPv4 packet the switch itself sends (ICMP answers to 007's
 * probes and traceroutes) before its egress queue, which may drop it; chain in, every one it
 * takes for itself that is not TCP. Appended to rules[0..len); the new length, or -1 if size is
 * too small. */
static int add_own_counters(char *rules, size_t len, size_t size)
{
    int w = snprintf(rules + len, size - len,
                     "table ip qreplay_own {\n"
                     "  chain out {\n"
                     "    type filter hook output priority 0; policy accept;\n"
                     "    counter\n"
                     "  }\n"
                     "  chain in {\n"
                     "    type filter hook input priority 0; policy accept;\n"
                     "    meta l4proto != tcp counter\n"
                     "  }\n"
                     "}\n");
    return w < 0 || (size_t)w >= size - len ? -1 : (int)(len + (size_t)w);
}

/* Namespace ns's setup script (DIR/.nsN-PID.sh, removed after): its ip and tc commands as
 * batches, the offloads off, and its nftables rules; errors into DIR/.nsN-PID.err. */
static int fabric_script(struct tb *t, const tb_run *run, uint32_t ns, char *script, size_t size)
{
    const qr_fabric *f = t->fab;
    const qr_config *c = run->conf;
    const char *dir = run->capture_dir;
    char burst[32], rto[32], icw[16], base[4200];
    snprintf(burst, sizeof burst, "%" PRIu64, tb_burst_bytes(c->links.rate_bps));
    snprintf(rto, sizeof rto, "%" PRId64 "ms", c->tcp.min_rto_ns / 1000000);
    snprintf(icw, sizeof icw, "%d", c->tcp.init_cwnd);
    snprintf(base, sizeof base, "%s/.ns%u-%ld", dir, ns, (long)getpid());
    char ipf[4300], tcf[4300];
    snprintf(ipf, sizeof ipf, "%s.ip", base);
    snprintf(tcf, sizeof tcf, "%s.tc", base);
    snprintf(script, size, "%s.sh", base);
    FILE *ip = fopen(ipf, "w"), *tc = fopen(tcf, "w"), *sh = fopen(script, "w");
    if (!ip || !tc || !sh) {
        if (ip)
            fclose(ip);
        if (tc)
            fclose(tc);
        if (sh)
            fclose(sh);
        return cli_fail(t->cmd, "%s: %s", base, strerror(errno));
    }
    fprintf(sh, "set -e\nip -batch '%s'\ntc -batch '%s'\n", ipf, tcf);
    fprintf(ip, "link set lo up\n");
    size_t n_cables, n_routes;
    const qr_fabric_cable *cb = qr_fabric_cables(f, &n_cables);
    const qr_fabric_route *r = qr_fabric_routes(f, &n_routes);
    for (size_t i = 0; i < n_cables; i++)
        for (int j = 0; j < 2; j++) {
            const qr_fabric_end *e = j ? &cb[i].b : &cb[i].a, *o = j ? &cb[i].a : &cb[i].b;
            if (e->ns != ns)
                continue;
            char a[20], peer[20];
            ip4_text(e->addr, a, sizeof a);
            ip4_text(o->addr, peer, sizeof peer);
            fprintf(ip, "addr add %s/30 dev %s\nlink set %s up\n", a, e->ifname, e->ifname);
            fprintf(
                ip, "neigh replace %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent\n",
                peer, o->mac[0], o->mac[1], o->mac[2], o->mac[3], o->mac[4], o->mac[5], e->ifname);
            fprintf(tc,
                    "qdisc add dev %s root stab overhead -14 tbf rate %" PRIu64
                    "bit burst %s limit %" PRIu64 "\n",
                    e->ifname, qr_fabric_rate(f, ns, e->ifname), burst,
                    e->node.kind == QR_NODE_HOST ? (uint64_t)c->host.nic_queue * 1514u
                                                 : run->port_limit);
            fprintf(sh, "ethtool -K %s tso off gso off gro off\n", e->ifname);
        }
    for (size_t i = 0; i < n_routes; i++) {
        if (r[i].ns != ns)
            continue;
        char p[20];
        ip4_text(r[i].prefix, p, sizeof p);
        if (r[i].plen)
            fprintf(ip, "route add %s/%u", p, r[i].plen);
        else
            fprintf(ip, "route add default");
        for (uint32_t v = 0; v < r[i].n_via; v++) {
            ip4_text(r[i].via[v], p, sizeof p);
            fprintf(ip, "%s via %s dev %s", r[i].n_via > 1 ? " nexthop" : "", p, r[i].dev[v]);
        }
        if (ns < qr_fabric_hosts(f)) /* the hosts' TCP settings ride on their route */
            fprintf(ip, " rto_min %s initcwnd %s congctl %s", rto, icw,
                    qr_testbed_congestion(c->tcp.variant));
        fputc('\n', ip);
    }
    char rules[8192];
    int len = qr_fabric_nft_ruleset(f, ns, rules, sizeof rules);
    if (len >= 0 && ns >= qr_fabric_hosts(f)) /* a switch: what it sends and takes itself */
        len = add_own_counters(rules, (size_t)len, sizeof rules);
    if (len > 0) {
        char file[4200], name[16];
        snprintf(file, sizeof file, "%s/faults-%s.nft", dir,
                 qr_fabric_ns_name(f, ns, name, sizeof name));
        FILE *o = fopen(file, "w");
        if (!o || fputs(rules, o) < 0 || fclose(o)) {
            fclose(ip);
            fclose(tc);
            fclose(sh);
            return cli_fail(t->cmd, "%s: %s", file, strerror(errno));
        }
        fprintf(sh, "nft -f '%s'\n", file);
    }
    fprintf(sh, "rm -f '%s' '%s'\n", ipf, tcf);
    int bad = fclose(ip) | fclose(tc) | fclose(sh);
    return bad ? cli_fail(t->cmd, "%s: %s", base, strerror(errno)) : 0;
}

/* The fat tree of run->fabric (fabric.h): a namespace per host and switch, a veth pair per cable,
 * the plan's addresses, permanent neighbours, routes and kernel settings, a shaper over a byte
 * FIFO on every interface, and the faults' nftables rules (their text kept in capture_dir). The
 * namespaces are made in one batch, their cables in another; each namespace is then set up by its
 * own script, a few at a time. */
static int build_fabric(struct tb *t, const tb_run *run)
{
    const qr_fabric *f = t->fab;
    const char *dir = run->capture_dir;
    uint32_t hosts = qr_fabric_hosts(f), nn = qr_fabric_namespaces(f);
    char path[4200];
    snprintf(path, sizeof path, "%s/.fabric-%ld.batch", dir, (long)getpid());
    FILE *b = fopen(path, "w");
    if (!b)
        return cli_fail(t->cmd, "%s: %s", path, strerror(errno));
    for (uint32_t i = 0; i < nn; i++)
        fprintf(b, "netns add %s\n", t->ns[i]);
    t->n_ns = (int)nn; /* the teardown removes what exists of them */
    int rc = fclose(b) ? cli_fail(t->cmd, "%s: %s", path, strerror(errno))
                       : x(t, "ip", "-batch", path, NULL);
    for (uint32_t i = 0; !rc && i < nn; i++) {
        const char *const base[][2] = {{"net/ipv6/conf/all/disable_ipv6", "1"},
                                       {"net/ipv6/conf/default/disable_ipv6", "1"},
                                       {"net/ipv4/conf/all/rp_filter", "0"},
                                       {"net/ipv4/conf/default/rp_filter", "0"}};
        const int opt[] = {1, 1, 0, 0, 0, 0, 0, 0, 1};
        char seed[16];
        snprintf(seed, sizeof seed, "%u", i < hosts ? 0 : qr_fabric_hash_seed(f, i - hosts));
        const char *const sw[][2] = {{"net/ipv6/conf/all/disable_ipv6", "1"},
                                     {"net/ipv6/conf/default/disable_ipv6", "1"},
                                     {"net/ipv4/conf/all/rp_filter", "0"},
                                     {"net/ipv4/conf/default/rp_filter", "0"},
                                     {"net/ipv4/ip_forward", "1"},
                                     {"net/ipv4/fib_multipath_hash_policy", "3"},
                                     {"net/ipv4/fib_multipath_hash_fields", "0x0037"},
                                     {"net/ipv4/icmp_errors_use_inbound_ifaddr", "1"},
                                     {"net/ipv4/fib_multipath_hash_seed", seed}};
        int absent = t->absent_sysctl;
        t->absent_sysctl = 0;
        rc =
            i < hosts ? ns_sysctls(t, t->ns[i], base, 4, opt) : ns_sysctls(t, t->ns[i], sw, 9, opt);
        t->absent_sysctl = i >= hosts && t->absent_sysctl ? 2 /* the seed */ : absent;
    }
    size_t n_cables;
    const qr_fabric_cable *cb = qr_fabric_cables(f, &n_cables);
    if (!rc && !(b = fopen(path, "w")))
        rc = cli_fail(t->cmd, "%s: %s", path, strerror(errno));
    for (size_t i = 0; !rc && i < n_cables; i++) {
        const uint8_t *m0 = cb[i].a.mac, *m1 = cb[i].b.mac;
        fprintf(b,
                "link add %s address %02x:%02x:%02x:%02x:%02x:%02x netns %s type veth peer name "
                "%s address %02x:%02x:%02x:%02x:%02x:%02x netns %s\n",
                cb[i].a.ifname, m0[0], m0[1], m0[2], m0[3], m0[4], m0[5], t->ns[cb[i].a.ns],
                cb[i].b.ifname, m1[0], m1[1], m1[2], m1[3], m1[4], m1[5], t->ns[cb[i].b.ns]);
    }
    if (!rc)
        rc = fclose(b) ? cli_fail(t->cmd, "%s: %s", path, strerror(errno))
                       : x(t, "ip", "-batch", path, NULL);
    unlink(path);
    /* each namespace's script, at most 4 at once */
    char scripts[QR_FABRIC_MAX_NODES][4300];
    pid_t pids[QR_FABRIC_MAX_NODES];
    int running = 0;
    uint32_t next = 0, done = 0;
    for (uint32_t i = 0; !rc && i < nn; i++)
        rc = fabric_script(t, run, i, scripts[i], sizeof scripts[i]);
    while (!rc && done < nn) {
        while (running < 4 && next < nn) {
            char *argv[] = {"ip", "netns", "exec", t->ns[next], "sh", scripts[next], NULL};
            char err[4400];
            snprintf(err, sizeof err, "%.4290s.err", scripts[next]);
            pid_t pid = fork();
            if (pid == 0) {
                setpgid(0, 0);
                int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) {
                    dup2(fd, 1);
                    dup2(fd, 2);
                }
                signal(SIGPIPE, SIG_DFL); /* the testbed ignores it; its programs do not */
                execvp(argv[0], argv);
                _exit(127);
            }
            if (pid < 0) {
                rc = cli_fail(t->cmd, "fork: %s", strerror(errno));
                break;
            }
            pids[next++] = pid;
            running++;
        }
        int st = 0;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        for (uint32_t i = 0; i < next; i++) {
            if (pids[i] != pid)
                continue;
            running--;
            done++;
            char err[4400], text[1024] = "";
            snprintf(err, sizeof err, "%.4290s.err", scripts[i]);
            FILE *e = fopen(err, "r");
            size_t l = e ? fread(text, 1, sizeof text - 1, e) : 0;
            text[l] = 0;
            if (e)
                fclose(e);
            while (l && text[l - 1] == '\n')
                text[--l] = 0;
            if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !rc)
                rc = cli_fail(t->cmd, "setting up namespace %s failed: %s", t->ns[i], text);
            unlink(err);
            unlink(scripts[i]);
        }
    }
    while (running > 0) { /* after an error: let the others end */
        int st;
        if (waitpid(-1, &st, 0) < 0 && errno != EINTR)
            break;
        running--;
    }
    return rc;
}

/* What fault rule `fault` of namespace ns dropped: its counter. */
static uint64_t nft_drops(struct tb *t, const char *ns, uint32_t fault, int *ok)
{
    char out[4096], chain[32];
    snprintf(chain, sizeof chain, "fault%u", fault);
    char *argv[] = {"ip",    "netns",  "exec",    (char *)ns, "nft", "list",
                    "chain", "netdev", "qreplay", chain,      NULL};
    *ok = run_argv(argv, out, sizeof out) == 0;
    const char *d = *ok ? strstr(out, "counter packets ") : NULL;
    if (!d) {
        *ok = 0;
        fprintf(stderr, "qreplay %s: cannot read the counter of fault %u in %s\n", t->cmd, fault,
                ns);
        return 0;
    }
    return strtoull(d + 16, NULL, 10);
}

/* A switch's own counter (own_counters): chain "out" or "in" of table ip qreplay_own. */
static uint64_t own_count(struct tb *t, const char *ns, const char *chain, int *ok)
{
    char out[4096];
    char *argv[] = {"ip",    "netns", "exec",        (char *)ns,    "nft", "list",
                    "chain", "ip",    "qreplay_own", (char *)chain, NULL};
    *ok = run_argv(argv, out, sizeof out) == 0;
    const char *d = *ok ? strstr(out, "counter packets ") : NULL;
    if (!d) {
        *ok = 0;
        fprintf(stderr, "qreplay %s: cannot read the counter of its own packets (%s) in %s\n",
                t->cmd, chain, ns);
        return 0;
    }
    return strtoull(d + 16, NULL, 10);
}

/* What a fabric host's capture (its recording) leaves out: its agents' own probes, 007's (TCP
 * with no flag set, which no TCP connection sends) and Pingmesh's (connections to QR_PROBE_PORT),
 * as a deployment records its applications' traffic, not its monitors'. The ICMP answers are
 * not TCP: the import counts and passes them over. */
#define TB_HOST_FILTER "not (tcp port 8765 or (tcp and tcp[13] & 0x3f = 0))"
_Static_assert(QR_PROBE_PORT == 8765, "TB_HOST_FILTER names Pingmesh's port");

/* tcpdump of dev in ns into file: one direction (dir "in" or "out") or both (NULL); snap bytes of
 * each frame, a kernel buffer of buf_kb; filter: a tcpdump expression, NULL for every frame. */
static struct proc *capture(struct tb *t, const char *ns, const char *dev, const char *dir,
                            const char *file, const char *snap, const char *buf_kb,
                            const char *filter)
{
    char name[64];
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    snprintf(name, sizeof name, "tcpdump of %s", base);
    char *argv[24];
    int n = 0;
    const char *fixed[] = {"ip",
                           "netns",
                           "exec",
                           ns,
                           "tcpdump",
                           "-i",
                           dev,
                           "-n",
                           "-s",
                           snap,
                           "-B",
                           buf_kb,
                           "--time-stamp-precision=nano",
                           "-Z",
                           "root",
                           "-w",
                           file};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strncmp(dev, "nflog:", 6) || strncmp(fixed[i], "--time-stamp", 12))
            argv[n++] = (char *)fixed[i]; /* a netfilter log has microsecond stamps only */
    if (dir) {
        argv[n++] = "-Q";
        argv[n++] = (char *)dir;
    }
    if (filter)
        argv[n++] = (char *)filter;
    argv[n] = NULL;
    return spawn(t, name, argv);
}

/* Wait until every capture listens (tcpdump says so on stderr). */
static int await_captures(struct tb *t, int first, int last)
{
    for (int w = 0; w < 500; w++) {
        int all = 1;
        for (int i = first; i < last; i++) {
            drain(&t->p[i], NULL, NULL);
            int st = 0;
            if (!t->p[i].listening && exited(&t->p[i], &st)) {
                drain(&t->p[i], NULL, NULL);
                fprintf(stderr, "qreplay %s: %s exited (status %d): %s\n", t->cmd, t->p[i].name, st,
                        t->p[i].errtext);
                return 1;
            }
            all &= t->p[i].listening;
        }
        if (all)
            return 0;
        if (cli_signal)
            return 1;
        usleep(20000);
    }
    fprintf(stderr, "qreplay %s: the captures did not start within 10 s\n", t->cmd);
    return 1;
}

static void on_ready(void *ctx, const char *line)
{
    if (!strcmp(line, "ready"))
        ((struct proc *)ctx)->listening = 1;
}

/* "N packets dropped by kernel" (and by interface) in a stopped tcpdump's report. */
static uint64_t capture_lost(const struct proc *p, int *have)
{
    uint64_t lost = 0, v;
    const char *s = p->errtext;
    *have = 0;
    while ((s = strstr(s, "packets dropped by "))) {
        const char *b = s;
        while (b > p->errtext && b[-1] != '\n')
            b--;
        if (sscanf(b, "%" SCNu64, &v) == 1) {
            lost += v;
            *have = 1;
        }
        s += 19;
    }
    return lost;
}

/* The schedule the agents read (capture_dir/schedule.csv). Returns 0 or 1 after printing. */
static int write_schedule(const char *command, const tb_run *run, const char *sched)
{
    FILE *f = fopen(sched, "w");
    if (!f)
        return cli_fail(command, "%s: %s", sched, strerror(errno));
    fprintf(f, "flow,src,dst,bytes,start_ns,src_addr,src_port,dst_addr,hops\n");
    for (size_t i = 0; i < run->n_flows; i++) {
        char sa[32], da[32];
        tb_host_addr(run->fabric, run->flows[i].src, sa, sizeof sa);
        tb_host_addr(run->fabric, run->flows[i].dst, da, sizeof da);
        uint32_t hops = run->fabric ? qr_topology_hops(qr_fabric_topology(run->fabric),
                                                       run->flows[i].src, run->flows[i].dst)
                                    : 1;
        fprintf(f, "%zu,%u,%u,%" PRIu64 ",%" PRId64 ",%s,%u,%s,%u\n", i, run->flows[i].src,
                run->flows[i].dst, run->flows[i].bytes, run->flows[i].start_ns, sa,
                run->src_port[i], da, hops);
    }
    if (fclose(f))
        return cli_fail(command, "%s: %s", sched, strerror(errno));
    return 0;
}

/* Host h's pinglist (capture_dir/pinglist-hH.csv): its pairs of Pingmesh's plan, the probed
 * host's address and the pair's phase. Returns 0 or 1 after printing. */
static int write_pinglist(const char *command, const tb_run *run, uint32_t h, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_fail(command, "%s: %s", path, strerror(errno));
    fprintf(f, "pair,dst_addr,phase_ns\n");
    for (size_t i = 0; i < qr_pingmesh_pairs(run->pingmesh); i++) {
        const qr_probe_pair *p = qr_pingmesh_pair(run->pingmesh, i);
        if (p->src != h)
            continue;
        char da[32];
        tb_host_addr(run->fabric, p->dst, da, sizeof da);
        fprintf(f, "%zu,%s,%" PRId64 "\n", i, da, qr_pingmesh_send_time(run->pingmesh, i, 0));
    }
    if (fclose(f))
        return cli_fail(command, "%s: %s", path, strerror(errno));
    return 0;
}

/* Host h's pinned 5-tuples for Everflow's guided probes (guided_plan.h): src,dst,sport lines. */
static int write_guided(const char *command, const tb_run *run, uint32_t h, const char *path)
{
    qr_guided_pin *pin;
    size_t n;
    if (qr_guided_plan(qr_fabric_topology(run->fabric), (uint32_t)run->conf->everflow.paths,
                       run->conf->run.seed, &pin, &n))
        return cli_fail(command, "cannot plan the guided probes (a fat tree, 1-64 paths)");
    FILE *f = fopen(path, "w");
    if (!f) {
        free(pin);
        return cli_fail(command, "%s: %s", path, strerror(errno));
    }
    for (size_t i = 0; i < n; i++) {
        if (pin[i].src != h)
            continue;
        char sa[32], da[32];
        tb_host_addr(run->fabric, pin[i].src, sa, sizeof sa);
        tb_host_addr(run->fabric, pin[i].dst, da, sizeof da);
        fprintf(f, "%s,%s,%u\n", sa, da, pin[i].sport);
    }
    free(pin);
    if (fclose(f))
        return cli_fail(command, "%s: %s", path, strerror(errno));
    return 0;
}

/* The traces get the run's numbers: in the order they started (each agent numbered its own). */
static int cmp_trace_start(const void *x, const void *y)
{
    const qr_row_traceroute *a = x, *b = y;
    if (a->sent_ns != b->sent_ns)
        return a->sent_ns < b->sent_ns ? -1 : 1;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    return (int)a->ttl - (int)b->ttl;
}

static void number_traces(tb_run *run)
{
    if (!run->n_traces)
        return;
    qsort(run->traces, run->n_traces, sizeof *run->traces, cmp_trace_start);
    /* the first probe of each (host, trace) in start order gets the next number */
    size_t n = run->n_traces;
    uint32_t *map_host = malloc((n ? n : 1) * sizeof *map_host);
    uint32_t *map_local = malloc((n ? n : 1) * sizeof *map_local);
    size_t m = 0;
    for (size_t i = 0; map_host && map_local && i < n; i++) {
        qr_row_traceroute *x = &run->traces[i];
        size_t j = 0;
        while (j < m && !(map_host[j] == x->host && map_local[j] == x->trace))
            j++;
        if (j == m) {
            map_host[m] = x->host;
            map_local[m++] = x->trace;
        }
        x->trace = (uint32_t)j;
    }
    free(map_host);
    free(map_local);
}

/* Wait until the processes first..last-1 said "ready" (10 s at most). Returns 0 or 1 after
 * printing; `what` names them in the error. */
static int await_ready(struct tb *t, int first, int last, const char *what)
{
    for (int w = 0;; w++) {
        int ready = 0;
        for (int i = first; i < last; i++) {
            drain(&t->p[i], on_ready, &t->p[i]);
            ready += t->p[i].listening;
            int st = 0;
            if (!t->p[i].listening && exited(&t->p[i], &st)) {
                drain(&t->p[i], NULL, NULL);
                return cli_fail(t->cmd, "the %s exited (status %d): %s", t->p[i].name, st,
                                t->p[i].errtext);
            }
        }
        if (ready == last - first)
            return 0;
        if (cli_signal)
            return 1;
        if (w > 500)
            return cli_fail(t->cmd, "the %s did not start within 10 s", what);
        usleep(20000);
    }
}

/* The agents run the scenario's flows; returns when every flow ended at both ends, or at the
 * scenario's stop (plus 2 s), after the queues drained. Returns 0 or 1 after printing. */
static int run_agents(struct tb *t, tb_run *run, cli_progress *prog, const char *self)
{
    const char *command = t->cmd;
    char sched[4200];
    snprintf(sched, sizeof sched, "%s/schedule.csv", run->capture_dir);
    struct agent_ctx ac = {.run = run, .fin = calloc(run->n_flows ? run->n_flows : 1, 1)};
    if (!ac.fin)
        return cli_fail(command, "out of memory");
    int rc = write_schedule(command, run, sched);
    int ag_first = t->n_p;
    char sndbuf[32], rcvbuf[32], hs[16];
    snprintf(sndbuf, sizeof sndbuf, "%" PRIu64, run->conf->tcp.sndbuf_bytes);
    snprintf(rcvbuf, sizeof rcvbuf, "%" PRIu64, run->conf->tcp.rcvbuf_bytes);
    const char *cc = qr_testbed_congestion(run->conf->tcp.variant);
    char pc[16], ph[16], pi[24], pt[24], pe[24];
    snprintf(pc, sizeof pc, "%d", run->conf->traceroute.per_connection);
    snprintf(ph, sizeof ph, "%d", run->conf->traceroute.per_host);
    if (run->pingmesh) {
        snprintf(pi, sizeof pi, "%" PRId64, run->conf->pingmesh.interval_ns);
        snprintf(pt, sizeof pt, "%" PRId64, qr_pingmesh_timeout(run->pingmesh));
        snprintf(pe, sizeof pe, "%" PRId64, qr_pingmesh_end(run->pingmesh));
    }
    for (uint32_t i = 0; !rc && i < t->hosts; i++) {
        snprintf(hs, sizeof hs, "%u", i);
        char name[32], plist[4200];
        snprintf(name, sizeof name, "agent of host %u", i);
        snprintf(plist, sizeof plist, "%s/pinglist-h%u.csv", run->capture_dir, i);
        char gfile[4200], gcount[16];
        snprintf(gfile, sizeof gfile, "%s/guided-h%u.csv", run->capture_dir, i);
        snprintf(gcount, sizeof gcount, "%d", run->conf->everflow.guided);
        char *argv[28] = {"ip",       "netns", "exec", t->ns[i],   (char *)self, "testbed-agent",
                          hs,         sched,   "--cc", (char *)cc, "--sndbuf",   sndbuf,
                          "--rcvbuf", rcvbuf,  NULL};
        int k = 14;
        if (run->conf->traceroute.per_connection > 0) {
            argv[k++] = "--trace";
            argv[k++] = pc;
            argv[k++] = ph;
        }
        if (run->pingmesh) {
            rc = write_pinglist(command, run, i, plist);
            argv[k++] = "--pinglist";
            argv[k++] = plist;
            argv[k++] = "--ping";
            argv[k++] = pi;
            argv[k++] = pt;
            argv[k++] = pe;
        }
        if (!rc && run->sweep_drops) {
            rc = write_guided(command, run, i, gfile);
            argv[k++] = "--guided";
            argv[k++] = gfile;
            argv[k++] = gcount;
        }
        argv[k] = NULL;
        if (!rc && !spawn(t, name, argv))
            rc = cli_fail(command, "cannot start the agent of host %u", i);
    }
    int ag_last = t->n_p;
    /* every agent listens before any flow starts */
    if (!rc)
        rc = await_ready(t, ag_first, ag_last, "agents");
    int64_t t0 = now_real() + 200000000;
    run->t0_ns = t0;
    for (int i = ag_first; !rc && !cli_signal && i < ag_last; i++) {
        char go[64];
        int l = snprintf(go, sizeof go, "go %" PRId64 "\n", t0);
        if (write(t->p[i].in, go, (size_t)l) != l)
            rc = cli_fail(command, "the %s does not listen", t->p[i].name);
    }
    /* run until every flow ended at both ends, or the scenario's stop: [traffic] stop ends the
     * traffic here as it ends the runtime's simulation */
    int64_t deadline = t0 + run->conf->traffic.stop_ns;
    int64_t last_end = t0;
    while (!rc && !cli_signal && ac.done < run->n_flows && now_real() < deadline) {
        struct pollfd pf[MAX_PROCS];
        int np = 0;
        for (int i = 0; i < t->n_p; i++)
            pf[np++] =
                (struct pollfd){.fd = i >= ag_first ? t->p[i].out : t->p[i].err, .events = POLLIN};
        poll(pf, (nfds_t)np, 100);
        for (int i = 0; i < t->n_p; i++) {
            ac.host = (uint32_t)(i - ag_first);
            drain(&t->p[i], i >= ag_first ? on_agent_line : NULL, &ac);
        }
        for (int i = 0; i < t->n_p; i++) {
            int st = 0;
            if (exited(&t->p[i], &st)) {
                ac.host = (uint32_t)(i - ag_first);
                drain(&t->p[i], i >= ag_first ? on_agent_line : NULL, &ac);
                rc = cli_fail(command, "the %s stopped during the run (status %d): %s",
                              t->p[i].name, st, t->p[i].errtext);
                break;
            }
        }
        double el = (double)(now_real() - t0) / 1e9;
        cli_progress_update(prog, "testbed: %zu of %zu flows done, %.1f s", ac.done, run->n_flows,
                            el < 0 ? 0 : el);
    }
    for (size_t i = 0; i < run->n_flows; i++) {
        tb_flow_result *r = &run->res[i];
        if (r->received && r->last_ns > last_end)
            last_end = r->last_ns;
        if (r->sent && r->end_ns > last_end)
            last_end = r->end_ns;
    }
    run->traffic_s = (double)(last_end - t0) / 1e9;
    if (!rc && !cli_signal && ac.done < run->n_flows) {
        /* stopped at [traffic] stop: the agents reset what is still open, now */
        run->stopped = 1;
        for (int i = ag_first; i < ag_last; i++)
            if (t->p[i].in >= 0 && write(t->p[i].in, "stop\n", 5) < 0) {
                /* it is gone already; the teardown reaps it */
            }
    }
    /* let the queues drain and the captures' buffers reach their files */
    for (int w = 0; !rc && !cli_signal && w < 75; w++) {
        for (int i = 0; i < t->n_p; i++) {
            ac.host = (uint32_t)(i - ag_first);
            drain(&t->p[i], i >= ag_first ? on_agent_line : NULL, &ac);
        }
        usleep(20000);
    }
    /* the guided probes go when the agents stop: the counters before them */
    for (uint32_t sw = 0, at = 0;
         !rc && !cli_signal && run->sweep_drops && sw < qr_fabric_switches(run->fabric); sw++)
        for (uint32_t p = 0; !rc && p < qr_topology_ports(qr_fabric_topology(run->fabric), sw);
             p++, at++) {
            char port[16];
            int ok;
            snprintf(port, sizeof port, "p%u", p);
            run->sweep_drops[at] =
                qdisc_drops(t, t->ns[qr_fabric_switch_ns(run->fabric, sw)], port, &ok);
            if (!ok)
                rc = 1;
        }
    for (int i = ag_first; i < ag_last && !run->stopped; i++)
        if (t->p[i].in >= 0 && write(t->p[i].in, "stop\n", 5) < 0) {
            /* it is gone already; the teardown reaps it */
        }
    for (int i = ag_first; i < ag_last; i++) { /* their last lines: the pings still open at
                                                   the stop, the guided probes they sent */
        ac.host = (uint32_t)(i - ag_first);
        for (int w = 0; w < 100 && !exited(&t->p[i], NULL); w++) {
            drain(&t->p[i], on_agent_line, &ac);
            usleep(20000);
        }
        drain(&t->p[i], on_agent_line, &ac);
    }
    free(ac.fin);
    if (!rc && ac.oom)
        rc = cli_fail(command, "out of memory for the agents' probes");
    number_traces(run);
    return rc;
}

/* "done SENT RECEIVED" from an application side (apps.py). */
static void on_app_line(void *ctx, const char *line)
{
    uint64_t *v = ctx;
    unsigned long long s, r;
    char extra;
    if (sscanf(line, "done %llu %llu %c", &s, &r, &extra) == 2) {
        v[0] = s;
        v[1] = r;
        v[2] = 1;
    }
}

/* One side of a session ended (status st): its outcome into *res. */
static void app_side_ended(struct proc *p, int st, const uint64_t said[3], int server,
                           tb_app_result *res)
{
    if (st == 0 && said[2]) {
        if (server) {
            res->server_ok = 1;
            res->server_sent = said[0];
            res->server_received = said[1];
        } else {
            res->client_ok = 1;
            res->client_sent = said[0];
            res->client_received = said[1];
        }
        return;
    }
    if (res->why[0])
        return;
    /* the last line it wrote on stderr */
    size_t len = strlen(p->errtext);
    while (len && p->errtext[len - 1] == '\n')
        p->errtext[--len] = '\0';
    const char *last = strrchr(p->errtext, '\n');
    snprintf(res->why, sizeof res->why, "%s exited (status %d)%s%s", server ? "server" : "client",
             st, len ? ": " : "", last ? last + 1 : p->errtext);
}

/* Start side `server` (1) or client (0) of session i in its host's namespace. Returns 0 or 1
 * after printing. */
static int spawn_app(struct tb *t, const tb_run *run, size_t i, int server, const char *py)
{
    const qr_app *a = &run->apps[i];
    char addr[32], port[16], name[64];
    tb_host_addr(run->fabric, a->server, addr, sizeof addr);
    snprintf(port, sizeof port, "%u", QR_APP_FIRST_PORT + (unsigned)i);
    snprintf(name, sizeof name, "%s %s of session %zu", qr_app_name(a->kind),
             server ? "server" : "client", i);
    char *argv[] = {"ip",
                    "netns",
                    "exec",
                    t->ns[server ? a->server : a->client],
                    (char *)py,
                    (char *)run->apps_script,
                    server ? "server" : "client",
                    (char *)qr_app_name(a->kind),
                    addr,
                    port,
                    NULL};
    return spawn(t, name, argv) ? 0 : cli_fail(t->cmd, "cannot start the %s", name);
}

/* The scenario's application sessions ([traffic] apps, apps.h): each server started in its host's
 * namespace and listening before the run starts, each client started at its time; returns when
 * every side exited, or at the scenario's stop (plus 2 s: then what still runs is stopped and
 * its session failed), after the queues drained. Returns 0 or 1 after printing. */
static int run_apps(struct tb *t, tb_run *run, cli_progress *prog)
{
    const char *command = t->cmd;
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    size_t n = run->n_apps;
    uint64_t(*said)[3] = calloc(2 * n + 1, sizeof *said);
    int *srv = calloc(n + 1, sizeof *srv), *cli = calloc(n + 1, sizeof *cli);
    if (!said || !srv || !cli) {
        free(said);
        free(srv);
        free(cli);
        return cli_fail(command, "out of memory");
    }
    int rc = 0, app_first = t->n_p;
    for (size_t i = 0; !rc && i < n; i++) {
        srv[i] = t->n_p;
        rc = spawn_app(t, run, i, 1, py);
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = await_ready(t, srv[i], srv[i] + 1, "application servers");
    int64_t t0 = now_real() + 200000000;
    run->t0_ns = t0;
    int64_t deadline = t0 + run->conf->traffic.stop_ns; /* [traffic] stop */
    size_t started = 0, ended = 0;
    uint8_t *gone = calloc(2 * n + 1, 1);
    if (!gone)
        rc = cli_fail(command, "out of memory");
    while (!rc && !cli_signal && ended < 2 * n) {
        int64_t now = now_real();
        if (now >= deadline)
            break;
        for (size_t i = 0; !rc && i < n; i++) {
            const qr_app *a = &run->apps[i];
            if (cli[i] || t0 + a->start_ns > now)
                continue;
            run->app_res[i].start_ns = now;
            cli[i] = t->n_p;
            rc = spawn_app(t, run, i, 0, py);
            started++;
        }
        struct pollfd pf[MAX_PROCS];
        int np = 0;
        for (int i = 0; i < t->n_p; i++)
            pf[np++] = (struct pollfd){.fd = t->p[i].out, .events = POLLIN};
        poll(pf, (nfds_t)np, 20);
        for (size_t i = 0; i < n; i++)
            for (int side = 0; side < 2; side++) {
                int k = side ? srv[i] : cli[i];
                if (!k || gone[2 * i + side])
                    continue;
                struct proc *p = &t->p[k];
                drain(p, on_app_line, said[2 * i + side]);
                int st = 0;
                if (!exited(p, &st))
                    continue;
                drain(p, on_app_line, said[2 * i + side]);
                gone[2 * i + side] = 1;
                ended++;
                app_side_ended(p, st, said[2 * i + side], side, &run->app_res[i]);
                if (!side)
                    run->app_res[i].end_ns = now_real();
            }
        for (int i = 0; i < app_first; i++)
            drain(&t->p[i], NULL, NULL); /* the captures' stderr */
        double el = (double)(now_real() - t0) / 1e9;
        cli_progress_update(prog,
                            "testbed: %zu of %zu sessions started, %zu of %zu sides done, "
                            "%.1f s",
                            started, n, ended, 2 * n, el < 0 ? 0 : el);
    }
    /* what still runs at the deadline: stopped, its session failed */
    for (size_t i = 0; !rc && i < n; i++)
        for (int side = 0; side < 2; side++) {
            int k = side ? srv[i] : cli[i];
            if (gone[2 * i + side])
                continue;
            tb_app_result *r = &run->app_res[i];
            if (!r->why[0])
                snprintf(r->why, sizeof r->why, "%s still running at [traffic] stop",
                         !k     ? "client never started,"
                         : side ? "server"
                                : "client");
            if (k)
                stop_proc(&t->p[k], SIGTERM);
        }
    int64_t last_end = t0;
    for (size_t i = 0; i < n; i++)
        if (run->app_res[i].end_ns > last_end)
            last_end = run->app_res[i].end_ns;
    run->traffic_s = (double)(last_end - t0) / 1e9;
    /* let the queues drain and the captures' buffers reach their files */
    for (int w = 0; !rc && !cli_signal && w < 75; w++) {
        for (int i = 0; i < app_first; i++)
            drain(&t->p[i], NULL, NULL);
        usleep(20000);
    }
    free(gone);
    free(said);
    free(srv);
    free(cli);
    return rc;
}

/* Packets in the fabric's queues, summed over every namespace's qdiscs ("backlog Nb Mp");
 * -1 if tc cannot say. */
static long fabric_backlog(struct tb *t)
{
    long sum = 0;
    for (int i = 0; i < t->n_ns; i++) {
        char out[16384];
        char *argv[] = {"tc", "-n", t->ns[i], "-s", "qdisc", "show", NULL};
        if (run_argv(argv, out, sizeof out) != 0)
            return -1;
        for (const char *b = strstr(out, "backlog "); b; b = strstr(b + 8, "backlog ")) {
            const char *pk = strchr(b + 8, ' ');
            sum += pk ? strtol(pk + 1, NULL, 10) : 0;
        }
    }
    return sum;
}

/* The end of a run: nothing in flight when the counters are read and the captures stop. Every
 * host stops sending (a direct-action classic BPF program on its port's egress hook returns
 * TC_ACT_SHOT, before its qdisc and its capture: what the kernel still sends once the agents are
 * gone, a SYN-ACK or a reset sent again, is never sent), the queues drain, and libpcap's packet
 * buffer timeout (1 s) passes so that every capture's last block reaches its file; a block
 * tcpdump holds when it is stopped is lost without being counted. Without it a packet captured
 * entering a switch in the last microseconds, and not leaving, counts as a queue drop the qdisc
 * never made. Returns 0 or 1 after printing. */
static int quiesce(struct tb *t)
{
    for (uint32_t h = 0; h < t->hosts; h++) {
        char *add[] = {"tc", "-n", t->ns[h], "qdisc", "add", "dev", "eth0", "clsact", NULL};
        char *drop[] = {"tc",     "-n",  t->ns[h], "filter",   "add",        "dev", "eth0",
                        "egress", "bpf", "da",     "bytecode", "1,6 0 0 2,", NULL};
        char out[1024];
        if (run_argv(add, out, sizeof out) != 0 || run_argv(drop, out, sizeof out) != 0)
            return cli_fail(t->cmd, "cannot stop host %u's traffic at the end (tc clsact, bpf): %s",
                            h, out);
    }
    long q = 0;
    for (int w = 0; w < 150 && !cli_signal && (q = fabric_backlog(t)) > 0; w++)
        usleep(20000);
    if (q < 0)
        return cli_fail(t->cmd, "cannot read the qdiscs' backlogs (tc -s qdisc show)");
    if (q > 0)
        fprintf(stderr,
                "qreplay %s: warning: %ld packets still queued 3 s after the hosts went "
                "quiet\n",
                t->cmd, q);
    for (int w = 0; w < 55 && !cli_signal; w++)
        usleep(20000);
    return 0;
}

int tb_run_testbed(const char *command, tb_run *run)
{
    static struct tb t; /* large; one run at a time per process */
    memset(&t, 0, sizeof t);
    t.cmd = command;
    /* a write to a program that is gone (an agent that stopped) fails with EPIPE, said or
     * ignored where it happens, never death by SIGPIPE in the middle of a run */
    signal(SIGPIPE, SIG_IGN);
    t.fab = run->fabric;
    t.hosts = t.fab ? qr_fabric_hosts(t.fab) : (uint32_t)run->conf->topology.hosts;
    snprintf(t.prefix, sizeof t.prefix, "qrtb%ld", (long)getpid());
    uint32_t n_ports = t.hosts; /* switch ports */
    size_t n_faults = 0;
    const qr_fabric_fault *faults = NULL;
    if (t.fab) {
        for (uint32_t i = 0; i < qr_fabric_namespaces(t.fab); i++) {
            char name[16];
            snprintf(t.ns[i], sizeof t.ns[i], "%s-%s", t.prefix,
                     qr_fabric_ns_name(t.fab, i, name, sizeof name));
        }
        n_ports = 0;
        for (uint32_t sw = 0; sw < qr_fabric_switches(t.fab); sw++)
            n_ports += qr_topology_ports(qr_fabric_topology(t.fab), sw);
        faults = qr_fabric_faults(t.fab, &n_faults);
    } else {
        for (uint32_t i = 0; i < t.hosts; i++)
            snprintf(t.ns[i], sizeof t.ns[i], "%s-h%u", t.prefix, i);
        snprintf(t.ns[t.hosts], sizeof t.ns[t.hosts], "%s-sw", t.prefix);
    }
    struct utsname u;
    if (!uname(&u))
        snprintf(run->kernel, sizeof run->kernel, "%s %s", u.sysname, u.release);
    run->res = calloc(run->n_flows ? run->n_flows : 1, sizeof *run->res);
    run->app_res = calloc(run->n_apps ? run->n_apps : 1, sizeof *run->app_res);
    run->qdisc_drops = calloc(n_ports, sizeof *run->qdisc_drops);
    run->fault_drops = calloc(n_faults + 1, sizeof *run->fault_drops);
    uint32_t n_sw = t.fab ? qr_fabric_switches(t.fab) : 1;
    run->own_sent = calloc(n_sw, sizeof *run->own_sent);
    run->own_taken = calloc(n_sw, sizeof *run->own_taken);
    if (run->fabric && run->conf->everflow.guided > 0)
        run->sweep_drops = calloc(n_ports, sizeof *run->sweep_drops);
    if (!run->res || !run->app_res || !run->qdisc_drops || !run->fault_drops || !run->own_sent ||
        !run->own_taken || (run->fabric && run->conf->everflow.guided > 0 && !run->sweep_drops))
        return cli_fail(command, "out of memory");
    int rc = 0;
    cli_progress prog;
    cli_progress_init(&prog, run->quiet);
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        rc = cli_fail(command, "cannot find its own program (/proc/self/exe)");
    else
        self[sl] = 0;
    if (!rc && t.fab) {
        cli_progress_update(&prog, "testbed: building a fat tree of %u hosts and %u switches",
                            t.hosts, qr_fabric_switches(t.fab));
        rc = build_fabric(&t, run);
        run->same_hash_seed = t.absent_sysctl == 2;
    } else if (!rc) {
        cli_progress_update(&prog, "testbed: building %u host namespaces and a switch", t.hosts);
        rc = build(&t, run);
    }
    /* captures: the hosts' (the recording) and the switch's ports both ways (the truth) */
    int cap_first = t.n_p;
    for (uint32_t i = 0; !rc && i < t.hosts; i++) {
        char file[4200], port[16];
        snprintf(port, sizeof port, "p%u", i);
        snprintf(file, sizeof file, "%s/h%u.pcap", run->capture_dir, i);
        if (!capture(&t, t.ns[i], "eth0", NULL, file, "200", t.fab ? "8192" : "32768",
                     t.fab ? TB_HOST_FILTER : NULL))
            rc = cli_fail(command, "cannot start tcpdump");
        if (t.fab)
            continue;
        snprintf(file, sizeof file, "%s/sw%u-in.pcap", run->capture_dir, i);
        if (!rc && !capture(&t, t.ns[t.hosts], port, "in", file, "200", "32768", NULL))
            rc = cli_fail(command, "cannot start tcpdump");
        snprintf(file, sizeof file, "%s/sw%u-out.pcap", run->capture_dir, i);
        if (!rc && !capture(&t, t.ns[t.hosts], port, "out", file, "200", "32768", NULL))
            rc = cli_fail(command, "cannot start tcpdump");
    }
    /* the fabric: every switch port both ways (the truth), every fault's log */
    for (uint32_t sw = 0; !rc && t.fab && sw < qr_fabric_switches(t.fab); sw++)
        for (uint32_t p = 0; !rc && p < qr_topology_ports(qr_fabric_topology(t.fab), sw); p++) {
            char file[4200], port[16];
            snprintf(port, sizeof port, "p%u", p);
            snprintf(file, sizeof file, "%s/s%u-p%u.pcap", run->capture_dir, sw, p);
            if (!capture(&t, t.ns[qr_fabric_switch_ns(t.fab, sw)], port, NULL, file, "96", "4096",
                         NULL))
                rc = cli_fail(command, "cannot start tcpdump");
        }
    for (size_t i = 0; !rc && i < n_faults; i++) {
        if (faults[i].kind != QR_LINK_GRAY && faults[i].kind != QR_LINK_BLACKHOLE)
            continue;
        char file[4200], dev[24];
        snprintf(dev, sizeof dev, "nflog:%u", faults[i].group);
        snprintf(file, sizeof file, "%s/fault-%u.pcap", run->capture_dir, faults[i].fault);
        if (!capture(&t, t.ns[faults[i].ns], dev, NULL, file, "65535", "4096", NULL))
            rc = cli_fail(command, "cannot start tcpdump");
    }
    int cap_last = t.n_p;
    if (!rc) {
        cli_progress_update(&prog, "testbed: starting %d captures", cap_last - cap_first);
        rc = await_captures(&t, cap_first, cap_last);
    }
    uint64_t softnet0 = softnet_drops();
    if (!rc)
        rc = run->n_apps ? run_apps(&t, run, &prog) : run_agents(&t, run, &prog, self);
    if (!rc && !cli_signal) {
        cli_progress_update(&prog, "testbed: the hosts go quiet, the queues drain");
        rc = quiesce(&t);
    }
    cli_progress_done(&prog);
    uint64_t softnet1 = softnet_drops();
    for (uint32_t i = 0; !rc && !cli_signal && i < t.hosts; i++) {
        int ok = 1;
        if (!t.fab) {
            char port[16];
            snprintf(port, sizeof port, "p%u", i);
            run->qdisc_drops[i] = qdisc_drops(&t, t.ns[t.hosts], port, &ok);
        }
        if (ok)
            run->host_qdisc_drops += qdisc_drops(&t, t.ns[i], "eth0", &ok);
        if (!ok)
            rc = 1;
    }
    for (uint32_t sw = 0, at = 0; !rc && !cli_signal && t.fab && sw < qr_fabric_switches(t.fab);
         sw++)
        for (uint32_t p = 0; !rc && p < qr_topology_ports(qr_fabric_topology(t.fab), sw); p++) {
            char port[16];
            int ok;
            snprintf(port, sizeof port, "p%u", p);
            run->qdisc_drops[at] = qdisc_drops(&t, t.ns[qr_fabric_switch_ns(t.fab, sw)], port, &ok);
            if (run->sweep_drops) /* the counter's growth while the guided probes went */
                run->sweep_drops[at] = run->qdisc_drops[at] - run->sweep_drops[at];
            at++;
            if (!ok)
                rc = 1;
        }
    for (uint32_t sw = 0; !rc && !cli_signal && t.fab && sw < qr_fabric_switches(t.fab); sw++) {
        const char *ns = t.ns[qr_fabric_switch_ns(t.fab, sw)];
        int ok;
        run->own_sent[sw] = own_count(&t, ns, "out", &ok);
        if (ok)
            run->own_taken[sw] = own_count(&t, ns, "in", &ok);
        if (!ok)
            rc = 1;
    }
    for (size_t i = 0; !rc && !cli_signal && i < n_faults; i++) {
        int ok = 1;
        if (faults[i].kind == QR_LINK_GRAY || faults[i].kind == QR_LINK_BLACKHOLE)
            run->fault_drops[i] = nft_drops(&t, t.ns[faults[i].ns], faults[i].fault, &ok);
        if (!ok)
            rc = 1;
    }
    /* stop the captures: tcpdump reports what the kernel dropped */
    for (int i = cap_first; i < cap_last; i++)
        if (t.p[i].pid > 0)
            kill(t.p[i].pid, SIGINT);
    for (int i = cap_first; i < cap_last; i++)
        wait_for(&t.p[i], 5.0);
    for (int i = cap_first; !rc && !cli_signal && i < cap_last; i++) {
        drain(&t.p[i], NULL, NULL);
        int have;
        uint64_t lost = capture_lost(&t.p[i], &have);
        if (!have)
            rc = cli_fail(command, "%s did not report its statistics: %s", t.p[i].name,
                          t.p[i].errtext);
        else if (lost)
            rc = cli_fail(command,
                          "%s lost %" PRIu64 " packets (dropped by the kernel): the run is not "
                          "scored; lower [links] rate (this machine's capture limit) or the "
                          "load",
                          t.p[i].name, lost);
    }
    if (!rc && !cli_signal && softnet1 != softnet0)
        rc = cli_fail(command,
                      "the kernel dropped %" PRIu64 " packets in its receive backlog "
                      "(/proc/net/softnet_stat) during the run: not the switch's queue, so the "
                      "run is not scored; lower [links] rate",
                      softnet1 - softnet0);
    if (!rc && !cli_signal && run->host_qdisc_drops)
        rc = cli_fail(command,
                      "the hosts' own qdiscs dropped %" PRIu64 " packets: raise [host] nic_queue",
                      run->host_qdisc_drops);
    teardown(&t);
    if (cli_signal) {
        fprintf(stderr, "qreplay %s: interrupted; the testbed is removed\n", command);
        return cli_interrupted_status();
    }
    return rc;
}

void tb_run_free(tb_run *run)
{
    free(run->res);
    free(run->app_res);
    free(run->qdisc_drops);
    free(run->fault_drops);
    free(run->own_sent);
    free(run->own_taken);
    run->own_sent = run->own_taken = NULL;
    free(run->sweep_drops);
    run->sweep_drops = NULL;
    free(run->traces);
    free(run->pings);
    run->traces = NULL;
    run->pings = NULL;
    run->res = NULL;
    run->app_res = NULL;
    run->qdisc_drops = NULL;
    run->fault_drops = NULL;
}

int tb_write_flows(const char *command, const tb_run *run, const char *path, tb_flow_summary *out)
{
    qr_testbed_flow *fl = calloc(run->n_flows ? run->n_flows : 1, sizeof *fl);
    if (!fl)
        return cli_fail(command, "%s: out of memory", path);
    for (size_t i = 0; i < run->n_flows; i++) {
        const tb_flow_result *r = &run->res[i];
        fl[i] =
            (qr_testbed_flow){r->sent,    r->received,       r->failed,  r->start_ns,
                              r->last_ns, r->bytes_received, r->retrans, r->failed ? r->why : NULL};
    }
    char err[QR_ERRBUF_SIZE];
    int rc = qr_testbed_flows_write(path, run->flows, run->src_port, fl, run->n_flows, out, err);
    free(fl);
    return rc ? cli_fail(command, "%s", err) : 0;
}
