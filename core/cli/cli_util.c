#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

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
