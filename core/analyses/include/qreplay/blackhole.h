/* qreplay: shared-buffer blackhole episodes, found in an arrival log (a runtime's or a replay's).
 *
 * In a shared buffer every queue's dynamic threshold is alpha times the free buffer, so a burst
 * toward one port raises the switch's occupancy and lowers the threshold of every other queue. A
 * queue whose threshold falls below its length drops every arrival while its own length is
 * falling: a blackhole, though the queue itself is not congested (docs/model.md's shared-
 * buffer case).
 *
 * A blackhole drop is an arrival at queue Q dropped because Q is above its threshold
 * (QR_DROP_THRESHOLD, or QR_DROP_TAGGED in a tagged replay) while
 *   - Q holds at least min_fall_bytes less than at its peak within the last window_ns (its length
 *     is falling), and
 *   - the threshold is at least min_shrink_bytes lower, and the switch's occupancy higher, than at
 *     that peak (a queue that sits at its own threshold while another port adds a packet or two
 *     is not a blackhole).
 * Blackhole drops at one queue less than gap_ns apart form an episode. An episode names the other
 * queues of the switch that grew between Q's peak and its drops (the culprits), largest growth
 * first. Lengths are those the arrivals report (before the packet joins), so a queue's length is
 * known at its arrivals only.
 *
 * Arrivals must come in time order (as every arrival log holds them). */
#ifndef QREPLAY_BLACKHOLE_H
#define QREPLAY_BLACKHOLE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/queuelog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QR_BLACKHOLE_CULPRITS 4

typedef struct qr_blackhole_opts {
    int64_t window_ns;         /* how long a queue's peak is remembered (default 500 us) */
    int64_t gap_ns;            /* drops further apart start a new episode (default 100 us) */
    uint64_t min_fall_bytes;   /* how far below its peak a queue must be (default QR_MTU_BYTES) */
    uint64_t min_shrink_bytes; /* how far the threshold must have fallen (default 15000) */
} qr_blackhole_opts;

/* The defaults above. */
void qr_blackhole_opts_default(qr_blackhole_opts *o);

typedef struct qr_blackhole_culprit {
    uint32_t port;
    uint64_t growth_bytes; /* its length at the episode's drops minus at Q's peak (the largest) */
} qr_blackhole_culprit;

typedef struct qr_blackhole {
    uint32_t sw, port;         /* the queue */
    int64_t start_ns, end_ns;  /* its first and last blackhole drop */
    uint64_t drops;            /* blackhole drops in the episode */
    uint64_t drop_bytes;       /* their bytes */
    int64_t peak_ns;           /* when the queue peaked before the episode */
    uint64_t peak_bytes;       /* its length then */
    uint64_t queue_bytes;      /* its length at the first drop */
    int64_t peak_threshold;    /* the threshold at the peak */
    int64_t threshold;         /* the threshold at the first drop */
    uint64_t peak_total_bytes; /* the switch's occupancy at the peak */
    uint64_t total_bytes;      /* and at the first drop */
    uint32_t n_culprits;       /* up to QR_BLACKHOLE_CULPRITS */
    qr_blackhole_culprit culprits[QR_BLACKHOLE_CULPRITS];
} qr_blackhole;

typedef struct qr_blackhole_detector qr_blackhole_detector;

/* o NULL: the defaults. Caller owns *out (qr_blackhole_detector_destroy). Returns 0, QR_EINVAL
 * (a negative window or gap; errbuf says which) or QR_ENOMEM. */
int qr_blackhole_detector_create(qr_blackhole_detector **out, const qr_blackhole_opts *o,
                                 char *errbuf);
/* Release; NULL is allowed. */
void qr_blackhole_detector_destroy(qr_blackhole_detector *d);
/* The next arrival. Returns 0, QR_EINVAL (earlier than the previous one; errbuf names both times)
 * or QR_ENOMEM. */
int qr_blackhole_observe(qr_blackhole_detector *d, const qr_arrival *a, char *errbuf);
/* Close the open episodes and give them all, sorted by start, switch and port; borrowed until
 * the detector is destroyed. Observing after finishing is QR_ESTATE. Returns 0 or QR_ENOMEM. */
int qr_blackhole_finish(qr_blackhole_detector *d, const qr_blackhole **episodes, size_t *n);
/* Arrivals observed, and drops among them (every reason) and blackhole drops. */
void qr_blackhole_counts(const qr_blackhole_detector *d, uint64_t *arrivals, uint64_t *drops,
                         uint64_t *blackhole_drops);

/* Every episode of an arrival log file. Caller frees *episodes (free()). Returns 0, or the
 * reader's error (naming the file and record) or QR_EINVAL (out of time order, naming the
 * record). */
int qr_blackhole_scan(const char *arrival_log, const qr_blackhole_opts *o, qr_blackhole **episodes,
                      size_t *n, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif
