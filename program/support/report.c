/* The program's terminal: error messages, progress lines and interrupts (report.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qreplay/fs.h"
#include "report.h"

/* The stage of the command's output folder and the folder's own name: every message names the
 * folder, never the stage it is built in (cli_alias_set). */
static char alias_from[4200], alias_to[4200];

void cli_alias_set(const char *from, const char *to)
{
    snprintf(alias_from, sizeof alias_from, "%s", from ? from : "");
    snprintf(alias_to, sizeof alias_to, "%s", to ? to : "");
}

/* Rewrite every occurrence of the stage's path in text (in place, at most size bytes). */
static void unalias(char *text, size_t size)
{
    size_t nf = strlen(alias_from), nt = strlen(alias_to);
    if (!nf)
        return;
    char *at = text;
    while ((at = strstr(at, alias_from))) {
        size_t tail = strlen(at + nf);
        if ((size_t)(at - text) + nt + tail + 1 > size)
            return;
        memmove(at + nt, at + nf, tail + 1);
        memcpy(at, alias_to, nt);
        at += nt;
    }
}

/* stdout through the alias: every printf of a command names the output folder, not its stage.
 * The stream is unbuffered, so one printf is one write here and a path is never cut in two. */
static FILE *real_stdout;

static ssize_t shown_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    char text[16384];
    size_t k = n < sizeof text - 1 ? n : sizeof text - 1;
    if (k < n || !alias_from[0]) {
        if (fwrite(buf, 1, n, real_stdout) != n)
            return -1;
    } else {
        memcpy(text, buf, k);
        text[k] = '\0';
        unalias(text, sizeof text);
        size_t m = strlen(text);
        if (fwrite(text, 1, m, real_stdout) != m)
            return -1;
    }
    if (memchr(buf, '\n', n) && fflush(real_stdout) != 0)
        return -1;
    return (ssize_t)n;
}

static int shown_close(void *cookie)
{
    (void)cookie;
    return fflush(real_stdout);
}

void cli_filter_stdout(void)
{
    if (real_stdout)
        return;
    cookie_io_functions_t io = {NULL, shown_write, NULL, shown_close};
    FILE *f = fopencookie(NULL, "w", io);
    if (!f)
        return;
    setvbuf(f, NULL, _IONBF, 0);
    real_stdout = stdout;
    stdout = f;
}

void cli_write_shown(FILE *to, const char *text)
{
    char buf[16384];
    snprintf(buf, sizeof buf, "%s", text);
    unalias(buf, sizeof buf);
    fputs(buf, to);
}

const char *cli_shown(const char *path)
{
    static char buf[8][4400];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "%s", path ? path : "");
    unalias(b, sizeof buf[0]);
    return b;
}

static void vreport(const char *command, const char *tail, const char *fmt, va_list ap)
{
    char msg[8192];
    vsnprintf(msg, sizeof msg, fmt, ap);
    unalias(msg, sizeof msg);
    fprintf(stderr, "qreplay %s: %s%s\n", command, msg, tail);
}

int cli_fail(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(command, "", fmt, ap);
    va_end(ap);
    return 1;
}

int cli_usage_error(const char *command, const char *fmt, ...)
{
    char tail[256];
    snprintf(tail, sizeof tail, " (try 'qreplay %s --help')", command);
    va_list ap;
    va_start(ap, fmt);
    vreport(command, tail, fmt, ap);
    va_end(ap);
    return 2;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, int quiet)
{
    p->quiet = quiet;
    p->tty = isatty(STDERR_FILENO);
    p->start = p->last = cli_now();
    p->printed = 0;
}

void cli_progress_update(cli_progress *p, const char *fmt, ...)
{
    if (p->quiet)
        return;
    double now = cli_now();
    if (now - p->last < (p->tty ? 0.2 : 2.0))
        return;
    p->last = now;
    va_list ap;
    va_start(ap, fmt);
    char line[4096];
    vsnprintf(line, sizeof line, fmt, ap);
    unalias(line, sizeof line);
    if (p->tty)
        fputs("\r\033[K", stderr);
    fputs(line, stderr);
    fprintf(stderr, " [%.1f s]", now - p->start);
    if (!p->tty)
        fputc('\n', stderr);
    va_end(ap);
    p->printed = 1;
}

void cli_progress_done(cli_progress *p)
{
    if (!p->quiet && p->tty && p->printed)
        fputs("\r\033[K", stderr);
    p->printed = 0;
}

volatile sig_atomic_t cli_signal = 0;

void cli_progress_line(void *progress, const char *line)
{
    cli_progress_update(progress, "%s", line);
}

int cli_progress_status(void *progress, const char *status)
{
    cli_progress_update(progress, "%s", status);
    return cli_signal != 0;
}
static struct sigaction old_int, old_term;

static void on_signal(int sig)
{
    cli_signal = sig;
}

void cli_catch_signals(void)
{
    /* a signal that came before is kept (cli_signal is not reset); SIGINT is caught even where it
     * was ignored at start (a background job of a script), so that `kill -INT` stops a command
     * there too */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
}

/* The watchdog: the bound on how long a command may take to stop after SIGINT or SIGTERM. */
static const char *watch_command;
static void (*watch_undo)(void);
static volatile sig_atomic_t watch_off;

static void *watchdog(void *arg)
{
    /* running: the starter may go on (a thread still starting when the program exits leaves
     * the sanitizers' start-up allocation behind, reported as a leak) */
    sem_post(arg);
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (;;) {
        while (!cli_signal)
            nanosleep(&tick, NULL);
        double t0 = cli_now();
        while (cli_now() - t0 < CLI_STOP_GRACE_S)
            nanosleep(&tick, NULL);
        if (watch_off)
            return NULL;
        /* the command did not stop by itself: stop it here, leaving nothing it was writing */
        qr_partial_discard_all();
        if (watch_undo)
            watch_undo();
        fprintf(stderr, "qreplay %s: interrupted; nothing written\n", watch_command);
        _exit(cli_interrupted_status());
    }
}

void cli_start_watchdog(const char *command, void (*undo)(void))
{
    watch_command = command;
    watch_undo = undo;
    static sem_t started;
    pthread_t t;
    pthread_attr_t a;
    sem_init(&started, 0, 0);
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    if (pthread_create(&t, &a, watchdog, &started) == 0) {
        while (sem_wait(&started) != 0) {
            /* EINTR: a signal came; wait on */
        }
    }
    /* else without it, a command stops when its own loops see the signal */
    pthread_attr_destroy(&a);
}

void cli_watchdog_off(void)
{
    watch_off = 1;
}

void cli_default_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

void cli_restore_signals(void)
{
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

int cli_interrupted_status(void)
{
    return cli_signal == SIGTERM ? 143 : 130;
}
