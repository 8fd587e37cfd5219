/* The program's terminal: error messages, progress lines and interrupts (report.h). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

int cli_fail(const char *command, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "qreplay %s: ", command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "qreplay %s: ", command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try 'qreplay %s --help')\n", command);
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
    if (p->tty)
        fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
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
    cli_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
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
