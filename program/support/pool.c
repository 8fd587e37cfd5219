/* The program's process pool (pool.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pool.h"
#include "qreplay/error.h"

enum { EXIT_CANCELLED = 3 };

static int fail(char *errbuf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char *errbuf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errbuf)
        vsnprintf(errbuf, QR_ERRBUF_SIZE, fmt, ap);
    va_end(ap);
    return QR_EIO;
}

struct child {
    pid_t pid;
    int fd; /* the read end of the child's error pipe */
    double started;
    int done;
};

static void run_child(int fd, qr_task_fn task, void *task_ctx, size_t i)
{
    char err[QR_ERRBUF_SIZE] = "";
    int rc = task(task_ctx, i, err);
    if (rc && rc != QR_ECANCELED) {
        if (!*err)
            snprintf(err, sizeof err, "%s", qr_strerror(rc));
        size_t len = strlen(err), off = 0;
        while (off < len) {
            ssize_t w = write(fd, err + off, len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    fflush(NULL);
    _exit(rc == QR_ECANCELED ? EXIT_CANCELLED : rc ? 1 : 0);
}

/* What a finished child said (its pipe is at EOF once it exited). */
static void read_message(int fd, char *msg, size_t size)
{
    size_t k = 0;
    while (k + 1 < size) {
        ssize_t r = read(fd, msg + k, size - 1 - k);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        k += (size_t)r;
    }
    msg[k] = 0;
}

static void stop_all(struct child *c, size_t started)
{
    for (size_t i = 0; i < started; i++)
        if (c[i].pid > 0 && !c[i].done)
            kill(c[i].pid, SIGTERM);
}

static int start(struct child *c, qr_task_fn task, void *task_ctx, size_t i, char *errbuf)
{
    int p[2];
    if (pipe(p))
        return fail(errbuf, "cannot make a pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return fail(errbuf, "cannot start a process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        run_child(p[1], task, task_ctx, i);
    }
    close(p[1]);
    c->pid = pid;
    c->fd = p[0];
    c->started = cli_now();
    return QR_OK;
}

int cli_pool_run(void *ctx, size_t n, qr_task_fn task, void *task_ctx, const char *const *names,
                 char *errbuf)
{
    cli_pool *pool = ctx;
    size_t cores = pool->cores > 0 ? (size_t)pool->cores : 1;
    struct child *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return QR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        c[i].fd = -1;
    size_t next = 0, running = 0, done = 0;
    int rc = QR_OK, cancelled = 0;
    double t0 = cli_now();
    while (done < n) {
        if (cli_signal && !cancelled) {
            cancelled = 1;
            stop_all(c, next);
        }
        while (!rc && !cancelled && running < cores && next < n) {
            rc = start(&c[next], task, task_ctx, next, errbuf);
            if (rc)
                break;
            next++;
            running++;
        }
        if (running == 0)
            break;
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid == 0 || (pid < 0 && errno == EINTR)) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (pool->progress)
                cli_progress_update(pool->progress, "%s: %zu/%zu runs done, %zu running | %.0f s",
                                    pool->label ? pool->label : "qreplay", done, n, running,
                                    cli_now() - t0);
            continue;
        }
        if (pid < 0) {
            if (!rc)
                rc = fail(errbuf, "waiting for a run: %s", strerror(errno));
            stop_all(c, next);
            break;
        }
        size_t i = 0;
        while (i < next && c[i].pid != pid)
            i++;
        if (i == next)
            continue; /* not one of ours */
        c[i].done = 1;
        running--;
        done++;
        char msg[QR_ERRBUF_SIZE];
        read_message(c[i].fd, msg, sizeof msg);
        close(c[i].fd);
        c[i].fd = -1;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        const char *name = names && names[i] ? names[i] : "a task";
        if (code == 0) {
            if (pool->progress && !pool->progress->quiet) {
                cli_progress_done(pool->progress);
                fprintf(stderr, "  %s: done in %.1f s\n", name, cli_now() - c[i].started);
            }
        } else if (!rc && !cancelled) {
            if (code == EXIT_CANCELLED || cli_signal)
                cancelled = 1;
            else if (WIFSIGNALED(st))
                rc = fail(errbuf, "%s failed: the process was killed by signal %d", name,
                          WTERMSIG(st));
            else
                rc = fail(errbuf, "%s failed: %s", name,
                          *msg ? msg : "the process ended abnormally");
            stop_all(c, next);
        }
    }
    for (size_t i = 0; i < next; i++)
        if (c[i].fd >= 0)
            close(c[i].fd);
    free(c);
    if (!rc && (cancelled || cli_signal))
        rc = QR_ECANCELED;
    return rc;
}

qr_task_runner cli_pool_runner(cli_pool *pool)
{
    qr_task_runner r = {cli_pool_run, pool};
    return r;
}
