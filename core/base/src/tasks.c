/* Jobs of independent tasks (tasks.h): the in-process runner. */
#include <stdio.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/tasks.h"

int qr_tasks_run(const qr_task_runner *runner, size_t n, qr_task_fn task, void *task_ctx,
                 const char *const *names, const volatile sig_atomic_t *cancel, char *errbuf)
{
    if (runner && runner->run)
        return runner->run(runner->ctx, n, task, task_ctx, names, errbuf);
    for (size_t i = 0; i < n; i++) {
        if (cancel && *cancel)
            return QR_ECANCELED;
        char err[QR_ERRBUF_SIZE] = "";
        int rc = task(task_ctx, i, err);
        if (rc == QR_ECANCELED)
            return rc;
        if (rc)
            return qri_err(errbuf, rc, "%s failed: %s", names && names[i] ? names[i] : "a task",
                           *err ? err : qr_strerror(rc));
    }
    return QR_OK;
}
