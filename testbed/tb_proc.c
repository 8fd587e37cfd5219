/* qreplay testbed: the processes it starts and the namespaces it makes and removes. */
#define _GNU_SOURCE
#include "tb_internal.h"

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
#include <sys/resource.h>
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

int64_t tbi_now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tbi_ip4_text(uint32_t a, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u.%u", a >> 24, a >> 16 & 255u, a >> 8 & 255u, a & 255u);
}

void tb_host_addr(const qr_fabric *fab, uint32_t h, char *buf, size_t size)
{
    if (fab)
        tbi_ip4_text(qr_topology_host_addr(qr_fabric_topology(fab), h), buf, size);
    else
        snprintf(buf, size, "10.0.%u.2", h);
}

/* Run a tool to its end; its output (stdout and stderr) into out. Returns its exit status, 127 if
 * it could not be started. */
int tbi_run_argv(char *const argv[], char *out, size_t outsz)
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
int tbi_x(struct tb *t, const char *a0, ...)
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
    int rc = tbi_run_argv(argv, out, sizeof out);
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
int tbi_ns_sysctls(struct tb *t, const char *ns, const char *const kv[][2], int n,
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
int tbi_ns_sysctl(struct tb *t, const char *ns, const char *path, const char *value, int optional)
{
    const char *const kv[1][2] = {{path, value}};
    return tbi_ns_sysctls(t, ns, kv, 1, &optional);
}

/* Start a process in the background: stdin, stdout and stderr on pipes. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* p reaped by wait4: its CPU time (user and system, its children's included) and run time. */
static void reaped(struct proc *p, const struct rusage *ru)
{
    p->cpu_ns = ((int64_t)ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000 +
                ((int64_t)ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000;
    p->wall_ns = mono_ns() - p->start_ns;
    p->reaped = 1;
    p->pid = -1;
}

struct proc *tbi_spawn(struct tb *t, const char *name, char *const argv[])
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
    p->start_ns = mono_ns();
    return p;
}

/* Read what a process wrote to stderr (kept, last 2 KB) and stdout (lines handed to on_line). */
void tbi_drain(struct proc *p, void (*on_line)(void *, const char *), void *ctx)
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

int tbi_exited(struct proc *p, int *status)
{
    if (p->pid <= 0)
        return 1;
    int st = 0;
    struct rusage ru;
    pid_t r = wait4(p->pid, &st, WNOHANG, &ru);
    if (r == p->pid) {
        reaped(p, &ru);
        if (status)
            *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return 1;
    }
    return 0;
}

void tbi_wait_for(struct proc *p, double seconds)
{
    for (int i = 0; i < (int)(seconds * 50) && !tbi_exited(p, NULL); i++) {
        tbi_drain(p, NULL, NULL);
        usleep(20000);
    }
}

void tbi_stop_proc(struct proc *p, int sig)
{
    if (p->pid > 0) {
        kill(p->pid, sig);
        tbi_wait_for(p, 2.0);
        if (p->pid > 0) {
            kill(p->pid, SIGKILL);
            int st = 0;
            struct rusage ru;
            if (wait4(p->pid, &st, 0, &ru) == p->pid)
                reaped(p, &ru);
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
 * stat), and wait until none is left (a killed process keeps its namespace until it has
 * tbi_exited); at most 2 s. The number it killed. */
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
    tbi_run_argv(del, out, sizeof out);
    if (have)
        kill_in_ns(&st);
}

void tbi_teardown(struct tb *t)
{
    for (int i = 0; i < t->n_p; i++) {
        tbi_stop_proc(&t->p[i], SIGTERM);
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
    if (tbi_run_argv(list, out, sizeof out))
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
