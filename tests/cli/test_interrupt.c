/* Every long command stops when interrupted (SIGINT: exit 130, SIGTERM: 143) within a second of
 * the signal, leaving no partial file. Each command is signalled once it has done some of its work:
 * once it and its children have used a given CPU time (an event of the command, not of the clock:
 * a loaded or slower machine reaches it later, at the same point of the work). One that finished
 * first cannot be judged and is said so (it is not counted as stopped). The bound is a property
 * of the command, not a speed: a command that looks at the signal only between long steps (or
 * never) takes seconds or runs to its end. */
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define STOP_BOUND_S 3.0 /* the sanitizers slow every step down several times */
#else
#define STOP_BOUND_S 1.0
#endif

static void setup(void)
{
    qr_test_setup();
    cr_assert_eq(qreplay("runtime scenarios/fattree-k4-sweep-ci.ini --set traffic.duration=15ms "
                         "--set traffic.load=50%% -o %s/r/recording --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("replay %s/r --th 5us --mode tagged --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("synth --quiet --packets 3000000 %s/big.pcap", dir), 0, "%s", err);
    cr_assert_eq(qreplay("export %s/r -o %s/caps --quiet", dir, dir), 0, "%s", err);
}

TestSuite(interrupt, .init = setup, .fini = qr_test_teardown, .timeout = 900);

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Process pid's state, parent and the CPU time it used (user + system, s), from /proc/PID/stat;
 * 0 if it is gone. */
static int proc_stat(long pid, char *state, long *ppid, double *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close = strrchr(buf, ')'); /* fields after the command's name */
    unsigned long utime, stime;
    if (!close || sscanf(close + 2, "%c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", state,
                         ppid, &utime, &stime) != 4)
        return 0;
    *cpu = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
    return 1;
}

/* The CPU time pid and all its descendants used so far (s): every process's parent and CPU time
 * from one pass over /proc, then the tree summed. */
static double tree_cpu_s(pid_t pid)
{
    enum { MAX = 4096 };
    static long ids[MAX], parents[MAX];
    static double cpus[MAX];
    static char in_tree[MAX];
    size_t n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    char state;
    while (d && n < MAX && (e = readdir(d)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
            proc_stat(atol(e->d_name), &state, &parents[n], &cpus[n]))
            ids[n++] = atol(e->d_name);
    if (d)
        closedir(d);
    double total = 0;
    for (size_t i = 0; i < n; i++)
        in_tree[i] = ids[i] == pid;
    /* a child is in the tree if its parent is: repeat until nothing joins (depth is small) */
    for (int joined = 1; joined;) {
        joined = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; !in_tree[i] && j < n; j++)
                if (in_tree[j] && parents[i] == ids[j])
                    in_tree[i] = 1, joined = 1;
    }
    for (size_t i = 0; i < n; i++)
        total += in_tree[i] ? cpus[i] : 0;
    return total;
}

/* Whether process pid has exited and waits to be reaped (state Z). */
static int exited_unreaped(pid_t pid)
{
    char state;
    long pp;
    double c;
    return !proc_stat(pid, &state, &pp, &c) || state == 'Z';
}

/* Run `qreplay ARGS` (D in args is the scratch folder), send sig once it (with its children) has
 * used cpu_s of CPU time, and check how it stopped. Returns 1 if it was judged, 0 if it finished
 * before the signal. */
static int interrupt(const char *args, double cpu_s, int sig)
{
    char expanded[2048] = "", cmd[2300], e[128];
    for (const char *p = args; *p; p++) {
        size_t n = strlen(expanded);
        if (*p == 'D' && (p[1] == '/' || p[1] == ' ' || !p[1]))
            snprintf(expanded + n, sizeof expanded - n, "%s", dir);
        else if (n + 1 < sizeof expanded)
            expanded[n] = *p, expanded[n + 1] = '\0';
    }
    snprintf(e, sizeof e, "%s/.stderr", dir);
    snprintf(cmd, sizeof cmd, "cd %s && exec %s %s >/dev/null 2>%s </dev/null", QR_SOURCE_DIR,
             QR_PROGRAM, expanded, e);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* a signal's default, whatever the test runner set */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (tree_cpu_s(pid) < cpu_s) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            slurp(e, err, sizeof err);
            cr_log_info("%s finished (exit %d) before the signal at %.2f s of CPU: not judged",
                        args, WIFEXITED(st) ? WEXITSTATUS(st) : -1, cpu_s);
            cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", args, err);
            return 0;
        }
        sleep_us(20000);
    }
    /* finished between the last look and now (kill succeeds on a process that has exited and
     * waits to be reaped): not judged either */
    if (exited_unreaped(pid)) {
        waitpid(pid, &st, 0);
        cr_log_info("%s finished (exit %d) just before the signal at %.2f s of CPU: not judged",
                    args, WIFEXITED(st) ? WEXITSTATUS(st) : -1, cpu_s);
        return 0;
    }
    cr_assert_eq(kill(pid, sig), 0);
    double ts = now_s(), waited = 0;
    for (;;) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        waited = now_s() - ts;
        if (waited > 30) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("%s: still running 30 s after signal %d", args, sig);
        }
        sleep_us(5000);
    }
    waited = now_s() - ts;
    slurp(e, err, sizeof err);
    int want = sig == SIGINT ? 130 : 143;
    /* killed by the signal itself: it came before main() set its handlers (the program was still
     * being loaded), which a shell reports as the same 130 or 143, with nothing written */
    int died = WIFSIGNALED(st) && WTERMSIG(st) == sig;
    cr_assert(died || (WIFEXITED(st) && WEXITSTATUS(st) == want),
              "%s: %s %d after signal %d (want %d): %s", args,
              WIFEXITED(st) ? "exit" : "killed by signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), sig, want, err);
    cr_assert_leq(waited, STOP_BOUND_S, "%s: stopped %.2f s after the signal (bound %.1f s)", args,
                  waited, STOP_BOUND_S);
    cr_assert(died || strstr(err, "interrupted"), "%s: %s", args, err);
    /* nothing partial anywhere in the scratch folder */
    snprintf(cmd, sizeof cmd, "find %s -name '*partial*' | grep -q .", dir);
    cr_assert_neq(system(cmd), 0, "%s left a partial file or folder", args);
    return 1;
}

Test(interrupt, simulations_stop_within_a_second)
{
    int judged = 0;
    judged += interrupt("runtime scenarios/fattree-k4-sweep-ci.ini --set traffic.duration=40ms "
                        "-o D/rt/recording",
                        1.0, SIGINT);
    judged += interrupt(
        "run scenarios/fattree-k4-sweep-ci.ini --set traffic.duration=40ms -o D/run", 1.0, SIGTERM);
    judged += interrupt("pingmesh scenarios/fattree-k4-sweep-ci.ini --set traffic.duration=40ms "
                        "-o D/pm",
                        1.0, SIGINT);
    judged += interrupt("butterfly scenarios/butterfly.ini --sigma 0,1us --replays 400 -o D/bf",
                        1.0, SIGTERM);
    judged += interrupt("whatif D/r --vary buffer.alpha=0.25,0.5,2,4,8", 0.8, SIGINT);
    judged += interrupt("isolate D/r", 0.8, SIGTERM);
    judged += interrupt("replay D/r --th 2us --mode plain --engine ns3", 0.5, SIGINT);
    judged += interrupt("synth --packets 100000000 D/huge.pcap", 0.5, SIGTERM);
    cr_assert_eq(judged, 8, "every long simulation was interrupted while running");
}

Test(interrupt, readers_and_analyses_stop_within_a_second)
{
    /* shorter commands: signalled early (they are judged when still running then) */
    int judged = 0;
    judged += interrupt("replay D/r --th 2us --mode plain", 0.1, SIGTERM);
    judged += interrupt("metrics D/r --no-figures", 0.1, SIGINT);
    judged += interrupt("diagnose D/r --no-figures", 0.1, SIGTERM);
    judged += interrupt("blame D/r --no-figures", 0.1, SIGINT);
    judged += interrupt("trace D/r --no-figures", 0.1, SIGTERM);
    judged += interrupt("clocks D/r -o D/clocks.h5", 0.1, SIGINT);
    judged += interrupt("export D/r -o D/exp", 0.1, SIGTERM);
    judged += interrupt("sample D/big.pcap D/s.h5", 0.1, SIGINT);
    judged += interrupt("import scenarios/fattree-k4-sweep-ci.ini D/caps/h00*.pcap -o D/imp", 0.1,
                        SIGTERM);
    judged += interrupt("blackholes D/r", 0.1, SIGINT);
    judged += interrupt("light D/r", 0.1, SIGTERM);
    /* at least most of them ran long enough to be judged on this machine */
    cr_assert_geq(judged, 7, "only %d of 11 commands were still running at their signal", judged);
}
