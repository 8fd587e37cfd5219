#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* X relative to the program: PREFIX/share/qreplay/X, BUILD/share/qreplay/X, or BUILD/../X. */
static const char *find_dir(const char *x, char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    const char *forms[] = {"%s/../share/qreplay/%s", "%s/share/qreplay/%s", "%s/../%s"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, forms[i], exe, x);
        if (is_dir(cand) && realpath(cand, buf) && strlen(buf) < size)
            return buf;
    }
    return NULL;
}

const char *cli_data_dir(void)
{
    static char buf[PATH_MAX];
    return find_dir("data", buf, sizeof buf);
}

const char *cli_analysis_dir(void)
{
    static char buf[PATH_MAX];
    return find_dir("analysis", buf, sizeof buf);
}

int cli_figures(const char *command, const char *script, const char *h5, const char *figdir,
                int quiet)
{
    const char *dir = cli_analysis_dir();
    if (!dir)
        return cli_fail(command,
                        "cannot find the analysis folder next to the program; %s is "
                        "complete (draw later with analysis/%s)",
                        h5, script);
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, script);
    pid_t pid = fork();
    if (pid < 0)
        return cli_fail(command, "cannot start %s", py);
    if (pid == 0) {
        if (quiet)
            execlp(py, py, path, h5, "-o", figdir, "--quiet", (char *)NULL);
        else
            execlp(py, py, path, h5, "-o", figdir, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return cli_fail(command, "drawing the figures failed (%s %s %s -o %s); %s is complete", py,
                        path, h5, figdir, h5);
    return 0;
}
