/* qreplay: limits and callback types every layer shares. */
#ifndef QREPLAY_COMMON_H
#define QREPLAY_COMMON_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest path a scenario or a command names, with its NUL. */
#define QR_PATH_MAX 1024
/* The most values of a scenario's list key (thresholds, loads). */
#define QR_LIST_MAX 16

/* A time after every time of a run (2^62 ns, about 146 years), ns. */
#define QR_TIME_MAX ((int64_t)1 << 62)

/* A progress callback: a one-line status. Returns 0 to go on, non-zero to stop (the caller then
 * returns QR_ECANCELED and writes nothing). */
typedef int (*qr_progress_fn)(void *ctx, const char *status);

/* Seconds on a monotonic wall clock (CLOCK_MONOTONIC), for progress lines and timings; only
 * differences mean anything. */
double qr_wall_now(void);

#ifdef __cplusplus
}
#endif
#endif
