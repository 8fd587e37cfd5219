/* qreplay: synthetic send-time traces with bursts and rate changes: the inputs of the sampler's
 * property tests, its benchmark and the core demo, standing in for recorded traffic where no
 * recording exists yet.
 *
 * A flow direction alternates bursts and idle periods. A burst has a geometric number of packets
 * (mean burst_mean) sent back to back at one of the rates 1, 2.5, 5 or 10 Gbit/s for 1500-byte
 * packets (gaps 12000, 4800, 2400, 1200 ns); with probability 1/3 the rate changes once inside the
 * burst. Every gap gets a uniform jitter of +-jitter_ns. Idle periods are exponential with mean
 * idle_mean_ns. Times start at start_ns and never decrease. */
#ifndef QREPLAY_SYNTH_H
#define QREPLAY_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_synth_cfg {
    uint64_t seed;        /* master seed; flow f uses stream "synth" number f */
    double burst_mean;    /* mean packets per burst, >= 1 */
    int64_t idle_mean_ns; /* mean idle time between bursts, >= 0 */
    int64_t jitter_ns;    /* per-gap jitter bound, >= 0 and below 600 */
    int64_t start_ns;     /* first packet's time */
} qr_synth_cfg;

/* Default settings: burst_mean 64, idle 50 us, jitter 20 ns, start 0. */
qr_synth_cfg qr_synth_default(uint64_t seed);

/* Fill times[0..n) with the send times of flow direction `flow`. Returns 0, QR_EINVAL, QR_ENOMEM.
 */
int qr_synth_flow(const qr_synth_cfg *cfg, uint64_t flow, size_t n, int64_t *times);

#ifdef __cplusplus
}
#endif
#endif
