/* qreplay: jobs of independent tasks, and who runs them. A core job (what-if's grid) describes its
 * tasks; the program decides where they run (its process pool), so the library never forks. */
#ifndef QREPLAY_TASKS_H
#define QREPLAY_TASKS_H

#include <signal.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One task of a job: runs task number `task` (0..n-1) with the job's context. Returns 0,
 * QR_ECANCELED when stopped at the caller's request, or an error code with errbuf (QR_ERRBUF_SIZE
 * bytes) filled. A task may run in another process: it communicates through files and its return
 * value only. */
typedef int (*qr_task_fn)(void *ctx, size_t task, char *errbuf);

/* Who runs a job's tasks. run() runs tasks 0..n-1 in any order and at any parallelism, names[i]
 * describing task i for messages (the strings stay the caller's). It returns 0 when every task
 * returned 0; QR_ECANCELED when one was cancelled or the runner was interrupted; otherwise an
 * error with errbuf "NAME failed: message" for the first task that failed (the others are then
 * stopped). ctx is the runner's own. */
typedef struct qr_task_runner {
    int (*run)(void *ctx, size_t n, qr_task_fn task, void *task_ctx, const char *const *names,
               char *errbuf);
    void *ctx;
} qr_task_runner;

/* Run a job's n tasks with runner (NULL, or one whose run is NULL: one after the other in this
 * process, checking cancel, which may be NULL, before each). Returns what qr_task_runner.run
 * documents. */
int qr_tasks_run(const qr_task_runner *runner, size_t n, qr_task_fn task, void *task_ctx,
                 const char *const *names, const volatile sig_atomic_t *cancel, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
