/* qreplay: the host clock-error model. Each host's clock is off by a constant, drawn uniformly from
 * the whole nanoseconds in [0, max_offset]; a recorded send time is the true time plus the offset. */
#ifndef QREPLAY_CLOCK_H
#define QREPLAY_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill out[0..n_hosts) with the offsets of n_hosts hosts, in ns, from `seed` (the master seed: the
 * stream "clock" is derived from it). Host h's offset does not depend on n_hosts.
 * Returns 0, QR_EINVAL (max_offset_ns < 0, out NULL) or QR_ENOMEM. */
int qr_clock_offsets(uint64_t seed, int64_t max_offset_ns, size_t n_hosts, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
