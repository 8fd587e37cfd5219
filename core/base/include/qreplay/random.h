/* qreplay: seeds. Every random stream of a run derives from the scenario's master seed and the
 * stream's name (and an index, e.g. a host number), so streams are independent of each other and of
 * the order in which they are created. */
#ifndef QREPLAY_RANDOM_H
#define QREPLAY_RANDOM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A well-mixed, nonzero 64-bit seed for stream `name` number `index` of master seed `master`. */
uint64_t qr_seed_derive(uint64_t master, const char *name, uint64_t index);

#ifdef __cplusplus
}
#endif
#endif
