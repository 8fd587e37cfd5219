/* The program's process pool (program/support/pool.h): every task runs once, each in a process of
 * its own, at most `cores` at once; the first failure is named with the child's own message and
 * stops the job; a child killed by a signal is reported as such; an interrupt cancels the job. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool.h"
#include "qreplay/error.h"

static char dir[64];

static void
setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-pool-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cli_signal = 0;
}

static void
teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(pool, .init = setup, .fini = teardown, .timeout = 60);

enum
{
    OK,
    FAIL,
    CRASH,
    CANCEL
};

struct job
{
    int what[8];
};

/* Each task leaves a file named after it holding its process id, then does what it is told. */
static int
task(void* ctx, size_t i, char* err)
{
    const struct job* j = ctx;
    char p[128];
    snprintf(p, sizeof p, "%s/task%zu", dir, i);
    FILE* f = fopen(p, "w");
    if (f)
    {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
    switch (j->what[i])
    {
    case FAIL:
        snprintf(err, QR_ERRBUF_SIZE, "the disk is full");
        return QR_EIO;
    case CRASH:
        signal(SIGKILL, SIG_DFL);
        raise(SIGKILL);
        return QR_OK;
    case CANCEL:
        return QR_ECANCELED;
    default:
        return QR_OK;
    }
}

static long
pid_of(size_t i)
{
    char p[128];
    snprintf(p, sizeof p, "%s/task%zu", dir, i);
    FILE* f = fopen(p, "r");
    if (!f)
        return -1;
    long pid = -1;
    cr_assert_eq(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    return pid;
}

static const char* const names[] = {"run 0", "run 1", "run 2", "run 3", "run 4", "run 5"};

Test(pool, every_task_runs_once_in_its_own_process)
{
    struct job j = {{OK, OK, OK, OK, OK, OK}};
    cli_pool pool = {2, "test", NULL};
    qr_task_runner r = cli_pool_runner(&pool);
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(&r, 6, task, &j, names, NULL, err), QR_OK, "%s", err);
    for (size_t i = 0; i < 6; i++)
    {
        long p = pid_of(i);
        cr_assert_gt(p, 0, "task %zu did not run", i);
        cr_assert_neq(p, (long)getpid(), "task %zu ran in the pool's own process", i);
        for (size_t k = 0; k < i; k++)
            cr_assert_neq(p, pid_of(k), "tasks %zu and %zu shared a process", k, i);
    }
}

Test(pool, a_failure_is_named_with_the_childs_message)
{
    struct job j = {{OK, FAIL, OK}};
    cli_pool pool = {1, "test", NULL};
    qr_task_runner r = cli_pool_runner(&pool);
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(&r, 3, task, &j, names, NULL, err), QR_EIO);
    cr_assert_str_eq(err, "run 1 failed: the disk is full");
    cr_assert_eq(pid_of(2), -1, "one at a time: run 2 must not start after run 1 failed");
}

Test(pool, a_killed_child_is_reported_with_its_signal)
{
    struct job j = {{CRASH}};
    cli_pool pool = {1, "test", NULL};
    qr_task_runner r = cli_pool_runner(&pool);
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(&r, 1, task, &j, names, NULL, err), QR_EIO);
    char want[128];
    snprintf(want, sizeof want, "run 0 failed: the process was killed by signal %d", SIGKILL);
    cr_assert_str_eq(err, want);
}

Test(pool, a_cancelled_task_cancels_the_job)
{
    struct job j = {{OK, CANCEL, OK}};
    cli_pool pool = {1, "test", NULL};
    qr_task_runner r = cli_pool_runner(&pool);
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(&r, 3, task, &j, names, NULL, err), QR_ECANCELED);
    cr_assert_eq(pid_of(2), -1);
}

Test(pool, after_an_interrupt_no_task_starts)
{
    struct job j = {{OK, OK}};
    cli_pool pool = {2, "test", NULL};
    qr_task_runner r = cli_pool_runner(&pool);
    char err[QR_ERRBUF_SIZE] = "";
    cli_signal = SIGINT; /* as the handler sets it */
    cr_assert_eq(qr_tasks_run(&r, 2, task, &j, names, NULL, err), QR_ECANCELED);
    cli_signal = 0;
    cr_assert_eq(pid_of(0), -1);
    cr_assert_eq(pid_of(1), -1);
}
