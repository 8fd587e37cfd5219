/* Jobs of tasks (tasks.h): the in-process runner runs every task in order, stops at the first
 * failure naming it, stops before the next task once cancelled, and hands the job to a runner
 * when one is given. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/tasks.h"

struct job {
    size_t ran[8];
    size_t n_ran;
    size_t fail_at; /* the task that fails, or SIZE_MAX */
    int fail_code;
    int silent; /* fail without a message */
    volatile sig_atomic_t *cancel_after_first;
};

static int task(void *ctx, size_t i, char *err)
{
    struct job *j = ctx;
    j->ran[j->n_ran++] = i;
    if (j->cancel_after_first)
        *j->cancel_after_first = 1;
    if (i == j->fail_at) {
        if (!j->silent && j->fail_code != QR_ECANCELED)
            snprintf(err, QR_ERRBUF_SIZE, "the disk is full");
        return j->fail_code;
    }
    return QR_OK;
}

static const char *const names[] = {"point 0", "point 1", "point 2", "point 3"};

Test(tasks, in_process_runs_every_task_in_order)
{
    struct job j = {.fail_at = SIZE_MAX};
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(NULL, 4, task, &j, names, NULL, err), QR_OK);
    cr_assert_eq(j.n_ran, 4);
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(j.ran[i], i);
    cr_assert_str_empty(err);
}

Test(tasks, first_failure_stops_the_job_and_is_named)
{
    struct job j = {.fail_at = 1, .fail_code = QR_EIO};
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(NULL, 4, task, &j, names, NULL, err), QR_EIO);
    cr_assert_eq(j.n_ran, 2, "task 2 must not run after task 1 failed");
    cr_assert_str_eq(err, "point 1 failed: the disk is full");
}

Test(tasks, a_cancelled_task_cancels_the_job)
{
    struct job j = {.fail_at = 0, .fail_code = QR_ECANCELED};
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(NULL, 4, task, &j, names, NULL, err), QR_ECANCELED);
    cr_assert_eq(j.n_ran, 1);
}

Test(tasks, a_failure_without_message_or_name_gets_the_codes_text)
{
    struct job j = {.fail_at = 2, .fail_code = QR_ENOMEM, .silent = 1};
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(NULL, 4, task, &j, NULL, NULL, err), QR_ENOMEM);
    char want[QR_ERRBUF_SIZE];
    snprintf(want, sizeof want, "a task failed: %s", qr_strerror(QR_ENOMEM));
    cr_assert_str_eq(err, want);
}

Test(tasks, cancel_stops_before_the_next_task)
{
    volatile sig_atomic_t cancel = 0;
    struct job j = {.fail_at = SIZE_MAX, .cancel_after_first = &cancel};
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(NULL, 4, task, &j, names, &cancel, err), QR_ECANCELED);
    cr_assert_eq(j.n_ran, 1);
}

struct runner {
    size_t n;
    const char *const *names;
    int calls;
};

static int run(void *ctx, size_t n, qr_task_fn t, void *task_ctx, const char *const *nm, char *err)
{
    struct runner *r = ctx;
    r->calls++;
    r->n = n;
    r->names = nm;
    for (size_t i = n; i-- > 0;) /* any order: backwards */
        if (t(task_ctx, i, err))
            return QR_EIO;
    return QR_OK;
}

Test(tasks, a_given_runner_runs_the_job)
{
    struct runner r = {0};
    qr_task_runner tr = {run, &r};
    struct job j = {.fail_at = SIZE_MAX};
    char err[QR_ERRBUF_SIZE] = "";
    cr_assert_eq(qr_tasks_run(&tr, 3, task, &j, names, NULL, err), QR_OK);
    cr_assert_eq(r.calls, 1);
    cr_assert_eq(r.n, 3);
    cr_assert_eq(r.names, names);
    cr_assert_eq(j.n_ran, 3);
    cr_assert_eq(j.ran[0], 2);
    cr_assert_eq(j.ran[2], 0);
}
