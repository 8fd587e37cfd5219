/* qreplay: seeds. Every random stream of a run derives from the scenario's master seed and the
 * stream's name (and an index, e.g. a host number), so streams are independent of each other and of
 * the order in which they are created. */
#ifndef QREPLAY_RANDOM_H
#define QREPLAY_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A well-mixed, nonzero 64-bit seed for stream `name` number `index` of master seed `master`. */
uint64_t qr_seed_derive(uint64_t master, const char *name, uint64_t index);

/* The length of an id's text: 32 hex digits and the NUL. */
#define QR_ID_SIZE 33

/* The identifier of some content: the first 128 bits of the SHA-256 of data[0..n), as 32
 * lowercase hex digits (equal content, equal id). Returns 0 or QR_ENOMEM. */
int qr_id_of(const void *data, size_t n, char out[QR_ID_SIZE]);

#ifdef __cplusplus
}
#endif
#endif
