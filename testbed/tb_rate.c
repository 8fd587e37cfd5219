/* qreplay record --rate-test: the packet rates this machine's kernel recorder keeps whole. Two
 * namespaces joined by a veth pair; for the idle step and then each rate, the recorder (qreplay
 * record --netns, both namespaces) is started, a sender writes small messages with TCP_NODELAY
 * at the rate for a while (each write a segment) to a receiver that reads everything, the
 * recorder is stopped with SIGINT, and its records are read back (krec_rate.h sums them). */
#define _GNU_SOURCE
#include "tb_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "qreplay/error.h"
#include "qreplay/krecord.h"

#define RATE_PORT 5201
#define RATE_SRC "10.201.0.1"
#define RATE_DST "10.201.0.2"

/* What a child reports on its pipe when it ends. */
struct child_report {
    uint64_t writes, bytes; /* the sender's writes and bytes, or the receiver's bytes read */
    double secs;            /* the sender: from its first write to its last */
    char why[160];          /* empty, or what went wrong */
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void enter_ns(const char *ns, struct child_report *r)
{
    char p[300];
    snprintf(p, sizeof p, "/run/netns/%s", ns);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET))
        snprintf(r->why, sizeof r->why, "cannot enter namespace %s: %s", ns, strerror(errno));
    if (fd >= 0)
        close(fd);
}

static void report_and_exit(int fd, const struct child_report *r)
{
    ssize_t w = write(fd, r, sizeof *r);
    _exit(w == (ssize_t)sizeof *r && !r->why[0] ? 0 : 1);
}

static void fail_errno(struct child_report *r, const char *what)
{
    if (!r->why[0])
        snprintf(r->why, sizeof r->why, "%s: %s", what, strerror(errno));
}

/* Wait (at most ms) until fd is readable; 0 when it is. */
static int wait_readable(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int n;
    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return n == 1 ? 0 : -1;
}

/* The receiver: listens, says "r" on ready_fd, reads one connection to its end (bounded: nothing
 * for 10 s ends it), closes, reports the bytes read on fd. */
static void receiver(const char *ns, int ready_fd, int fd)
{
    struct child_report r = {0};
    enter_ns(ns, &r);
    int l = r.why[0] ? -1 : socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, s = -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(RATE_PORT)};
    inet_pton(AF_INET, RATE_DST, &a.sin_addr);
    if (!r.why[0] && (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
                      bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1)))
        fail_errno(&r, "the receiver's socket");
    if (write(ready_fd, r.why[0] ? "x" : "r", 1) != 1)
        _exit(1);
    if (!r.why[0] && (wait_readable(l, 10000) || (s = accept(l, NULL, NULL)) < 0))
        fail_errno(&r, "the receiver's accept (no connection within 10 s)");
    static char buf[1 << 18];
    for (ssize_t n = 1; !r.why[0] && n > 0;) {
        if (wait_readable(s, 10000)) {
            snprintf(r.why, sizeof r.why, "the receiver read nothing for 10 s");
            break;
        }
        n = read(s, buf, sizeof buf);
        if (n < 0 && errno != EINTR)
            fail_errno(&r, "the receiver's read");
        r.bytes += n > 0 ? (uint64_t)n : 0;
    }
    if (s >= 0)
        close(s);
    report_and_exit(fd, &r);
}

/* The sender: connects, then writes msg-byte messages (TCP_NODELAY: each its own segment) at pps
 * for secs, paced against the clock from the first write, shuts its side, waits for the
 * receiver's close (at most 10 s) and reports its writes on fd. */
static void sender(const char *ns, double pps, double secs, uint32_t msg, int fd)
{
    struct child_report r = {0};
    enter_ns(ns, &r);
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake-ups on time: the pace is the measure */
    int s = r.why[0] ? -1 : socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(RATE_PORT)};
    inet_pton(AF_INET, RATE_DST, &a.sin_addr);
    if (!r.why[0] && (s < 0 || setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
                      connect(s, (struct sockaddr *)&a, sizeof a)))
        fail_errno(&r, "the sender's connect");
    static char buf[65536];
    memset(buf, 'q', sizeof buf);
    uint64_t total = (uint64_t)(pps * secs + 0.5);
    double t0 = mono_s();
    while (!r.why[0] && r.writes < total) {
        double now = mono_s();
        uint64_t due = (uint64_t)((now - t0) * pps) + 1;
        if (due > total)
            due = total;
        if (now - t0 > secs + 1.0)
            break; /* it cannot keep up: what it wrote is the measure */
        while (r.writes < due) {
            ssize_t w = write(s, buf, msg);
            if (w != (ssize_t)msg) {
                if (w < 0 && errno == EINTR)
                    continue;
                fail_errno(&r, "the sender's write");
                break;
            }
            r.writes++;
            r.bytes += msg;
        }
        double next = t0 + (double)(r.writes + 1) / pps, wait = next - mono_s();
        if (wait > 20e-6) {
            struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    r.secs = mono_s() - t0;
    if (!r.why[0] && shutdown(s, SHUT_WR))
        fail_errno(&r, "the sender's shutdown");
    char tail[256];
    while (!r.why[0] && !wait_readable(s, 10000) && read(s, tail, sizeof tail) > 0)
        ;
    if (s >= 0)
        close(s);
    report_and_exit(fd, &r);
}

/* Fork a child in its own process group running fn; its report pipe's read end into *rfd. */
static pid_t fork_child(int *rfd, int *ready_rfd, void (*run)(int ready_fd, int fd, void *),
                        void *ctx)
{
    int p[2], q[2] = {-1, -1};
    if (pipe2(p, O_CLOEXEC) || (ready_rfd && pipe2(q, O_CLOEXEC)))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        run(q[1], p[1], ctx);
        _exit(1);
    }
    close(p[1]);
    if (q[1] >= 0)
        close(q[1]);
    *rfd = p[0];
    if (ready_rfd)
        *ready_rfd = q[0];
    return pid;
}

struct child_args {
    const char *ns;
    double pps, secs;
    uint32_t msg;
};

static void run_receiver(int ready_fd, int fd, void *ctx)
{
    receiver(((struct child_args *)ctx)->ns, ready_fd, fd);
}

static void run_sender(int ready_fd, int fd, void *ctx)
{
    (void)ready_fd;
    const struct child_args *c = ctx;
    sender(c->ns, c->pps, c->secs, c->msg, fd);
}

/* A child's report (waiting at most ms), then the child reaped (killed if it has not ended). */
static int collect(pid_t pid, int fd, int ms, struct child_report *r)
{
    memset(r, 0, sizeof *r);
    int got = !wait_readable(fd, ms) && read(fd, r, sizeof *r) == (ssize_t)sizeof *r;
    if (!got)
        snprintf(r->why, sizeof r->why, "it did not report within %d s", ms / 1000);
    close(fd);
    if (pid > 0) {
        if (!got)
            kill(-pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    return got && !r->why[0] ? 0 : -1;
}

/* The sender and receiver of one step. Returns 0, or 1 after printing. */
static int run_traffic(struct tb *t, const tb_rate_opts *o, double pps, qr_krec_rate_step *s)
{
    struct child_args ra = {t->ns[1], 0, 0, 0}, sa = {t->ns[0], pps, o->step_s, o->msg_bytes};
    int rfd = -1, ready = -1, sfd = -1;
    pid_t rp = fork_child(&rfd, &ready, run_receiver, &ra), sp = -1;
    if (rp < 0)
        return cli_fail(t->cmd, "cannot start the receiver: %s", strerror(errno));
    char c = 0;
    int ok = !wait_readable(ready, 10000) && read(ready, &c, 1) == 1 && c == 'r';
    close(ready);
    if (ok && (sp = fork_child(&sfd, NULL, run_sender, &sa)) < 0)
        ok = 0;
    struct child_report sr = {0}, rr = {0};
    int bound = (int)(o->step_s * 1000) + 25000;
    int sbad = sp > 0 ? collect(sp, sfd, bound, &sr) : -1;
    int rbad = collect(rp, rfd, sp > 0 ? 12000 : 100, &rr);
    if (cli_signal)
        return 1;
    if (sbad || rbad)
        return cli_fail(t->cmd, "the %s failed: %s", sbad ? "sender" : "receiver",
                        sbad ? (sr.why[0] ? sr.why : "it did not start") : rr.why);
    s->writes = sr.writes;
    s->traffic_s = sr.secs;
    s->read_bytes = rr.bytes;
    return 0;
}

/* The recorder of one step into dir (a folder of NS.qrk), up and listening. */
static int start_recorder(struct tb *t, const char *self, const tb_rate_opts *o, const char *dir,
                          int *idx)
{
    char list[120];
    snprintf(list, sizeof list, "%s,%s", t->ns[0], t->ns[1]);
    char *argv[] = {(char *)self,  "record", "--netns",   list, "--th",
                    (char *)o->th, "-o",     (char *)dir, NULL};
    *idx = t->n_p;
    if (!tbi_spawn(t, "the kernel recorder", argv))
        return cli_fail(t->cmd, "cannot start the kernel recorder");
    return tbi_await_captures(t, *idx, *idx + 1);
}

/* Stop the recorder (SIGINT: complete records), read its records and costs into s. */
static int stop_recorder(struct tb *t, int idx, const char *dir, qr_krec_rate_step *s)
{
    struct proc *p = &t->p[idx];
    if (p->pid > 0)
        kill(p->pid, SIGINT);
    int st = -1, exited = 0;
    for (int i = 0; i < 1500 && !(exited = tbi_exited(p, &st)); i++) {
        tbi_drain(p, NULL, NULL);
        usleep(20000);
    }
    tbi_drain(p, NULL, NULL);
    if (!exited || st != 0 || !strstr(p->errtext, "the record is complete"))
        return cli_fail(t->cmd,
                        "the kernel recorder did not end with complete records (status %d): %s", st,
                        p->errtext);
    s->cpu_s = (double)p->cpu_ns / 1e9;
    s->wall_s = (double)p->wall_ns / 1e9;
    const char *b = strstr(p->errtext, "its BPF programs ran ");
    unsigned long long runs = 0;
    if (b && sscanf(b, "its BPF programs ran %llu times, %lf s", &runs, &s->bpf_s) == 2)
        s->bpf_runs = runs;
    qr_krec_stats kst[2];
    for (int i = 0; i < 2; i++) {
        char path[4400], err[QR_ERRBUF_SIZE];
        snprintf(path, sizeof path, "%s/%s.qrk", dir, t->ns[i]);
        qr_krec *k;
        if (qr_krec_open(&k, path, err))
            return cli_fail(t->cmd, "%s", err);
        qr_krec_stats_get(k, &kst[i]);
        qr_krec_close(k);
    }
    qr_krec_rate_add_records(s, kst, 2);
    return 0;
}

/* Two namespaces joined by a veth pair, addressed, offloads off (a write is a segment). */
static int build(struct tb *t)
{
    for (int i = 0; i < 2; i++) {
        snprintf(t->ns[i], sizeof t->ns[i], "%s-rate%c", t->prefix, 'a' + i);
        if (tbi_x(t, "ip", "netns", "add", t->ns[i], NULL))
            return 1;
        t->n_ns = i + 1;
        if (tbi_x(t, "ip", "-n", t->ns[i], "link", "set", "lo", "up", NULL))
            return 1;
    }
    if (tbi_x(t, "ip", "link", "add", "eth0", "netns", t->ns[0], "type", "veth", "peer", "name",
              "eth0", "netns", t->ns[1], NULL) ||
        tbi_x(t, "ip", "-n", t->ns[0], "addr", "add", RATE_SRC "/24", "dev", "eth0", NULL) ||
        tbi_x(t, "ip", "-n", t->ns[1], "addr", "add", RATE_DST "/24", "dev", "eth0", NULL))
        return 1;
    for (int i = 0; i < 2; i++)
        if (tbi_x(t, "ip", "netns", "exec", t->ns[i], "ethtool", "-K", "eth0", "tso", "off", "gso",
                  "off", "gro", "off", NULL) ||
            tbi_x(t, "ip", "-n", t->ns[i], "link", "set", "eth0", "up", NULL) ||
            tbi_ns_sysctl(t, t->ns[i], "net/ipv4/tcp_autocorking", "0", 1))
            return 1;
    return 0;
}

/* One step (pps 0: idle; bare: no recorder) into s, its records in work/step-K. */
static int run_step(struct tb *t, const char *self, const tb_rate_opts *o, size_t k, double pps,
                    int bare, qr_krec_rate_step *s)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/step-%zu", o->work, k);
    memset(s, 0, sizeof *s);
    s->target_pps = pps;
    s->msg_bytes = pps > 0 ? o->msg_bytes : 0;
    s->unrecorded = bare;
    if (bare)
        return run_traffic(t, o, pps, s);
    int idx = -1, rc = start_recorder(t, self, o, dir, &idx);
    if (!rc && pps > 0) {
        rc = run_traffic(t, o, pps, s);
    } else if (!rc) {
        double end = mono_s() + o->step_s;
        while (!cli_signal && mono_s() < end)
            usleep(20000);
        s->traffic_s = o->step_s;
    }
    if (idx >= 0 && (rc || cli_signal)) {
        tbi_stop_proc(&t->p[idx], SIGINT);
        return 1;
    }
    return rc ? rc : stop_recorder(t, idx, dir, s);
}

int tb_record_rate(const char *command, const tb_rate_opts *o, qr_krec_rate_step *steps,
                   size_t *n_steps)
{
    static struct tb t;
    memset(&t, 0, sizeof t);
    t.cmd = command;
    signal(SIGPIPE, SIG_IGN);
    snprintf(t.prefix, sizeof t.prefix, "qrtb%ld", (long)getpid());
    *n_steps = 0;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return cli_fail(command, "cannot find its own program (/proc/self/exe)");
    self[sl] = 0;
    cli_progress prog;
    cli_progress_init(&prog, o->quiet);
    cli_progress_update(&prog, "record --rate-test: two namespaces and a veth pair");
    int rc = build(&t);
    for (size_t k = 0; !rc && !cli_signal && k <= o->n_rates; k++) {
        double pps = k ? o->rates[k - 1] : 0;
        if (k)
            cli_progress_update(&prog,
                                "record --rate-test: step %zu of %zu, %.0f writes/s for %g s", k,
                                o->n_rates, pps, o->step_s);
        else
            cli_progress_update(&prog, "record --rate-test: the idle step (%g s, no traffic)",
                                o->step_s);
        rc = run_step(&t, self, o, k, pps, 0, &steps[k]);
        if (!rc)
            *n_steps = k + 1;
        if (!rc && k && qr_krec_rate_short(&steps[k]))
            break; /* the machine's limit: higher aims only measure it again */
    }
    size_t last = *n_steps - 1;
    if (!rc && !cli_signal && *n_steps > 1 && qr_krec_rate_short(&steps[last])) {
        /* the same aim unrecorded: how much of the limit is the recorder's */
        cli_progress_update(&prog, "record --rate-test: %.0f writes/s again, not recorded",
                            steps[last].target_pps);
        rc = run_step(&t, self, o, last + 1, steps[last].target_pps, 1, &steps[last + 1]);
        if (!rc)
            *n_steps = last + 2;
    }
    cli_progress_done(&prog);
    tbi_teardown(&t);
    if (cli_signal) {
        fprintf(stderr, "qreplay %s: interrupted; the namespaces are removed\n", command);
        return cli_interrupted_status();
    }
    return rc;
}
