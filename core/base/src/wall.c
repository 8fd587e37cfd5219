/* The wall clock of progress lines and timings (common.h). */
#include <time.h>

#include "qreplay/common.h"

double qr_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
