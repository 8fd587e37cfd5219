/* The program's process pool: runs a core job's tasks (qreplay/tasks.h) in up to `cores` child
 * processes at once, each task in its own process (a crash or leak in one cannot reach the
 * others), with a status line while waiting, a line per finished task, and SIGINT/SIGTERM
 * (cli_signal) passed on to the children. */
#ifndef QREPLAY_POOL_H
#define QREPLAY_POOL_H

#include "qreplay/tasks.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cli_pool {
    int cores;         /* tasks at once (>= 1) */
    const char *label; /* "whatif": the status line's prefix */
    cli_progress *progress;
} cli_pool;

/* qr_task_runner.run for a cli_pool (ctx): fork a child per task, at most pool->cores at once;
 * a child runs the task, sends its error message through a pipe and exits. The first failure
 * stops the others (SIGTERM); an interrupt (cli_signal) too, and then returns QR_ECANCELED. */
int cli_pool_run(void *ctx, size_t n, qr_task_fn task, void *task_ctx, const char *const *names,
                 char *errbuf);

/* A qr_task_runner that runs on pool. */
qr_task_runner cli_pool_runner(cli_pool *pool);

#ifdef __cplusplus
}
#endif
#endif
