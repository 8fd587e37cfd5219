/* qreplay: causal paths (paths.h) scored against the truth of a multi-tier service (tiers.h):
 * every message's true parent and the planted faults. The only place that sees both. */
#ifndef QREPLAY_PATHS_SCORE_H
#define QREPLAY_PATHS_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/paths.h"
#include "qreplay/tiers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_paths_score {
    uint64_t messages, right; /* messages, and those whose most likely parent is the true one */
    uint64_t unscored;        /* messages whose true parent is not known (QR_TRUTH_NO_PARENT) */
    double share;             /* right / messages */
    uint64_t true_patterns;   /* shapes of the true request trees */
    uint64_t found_patterns;  /* of those, shapes the method found (a best instance) */
    uint64_t rare_patterns;   /* true shapes of at most rare_share of the requests */
    uint64_t rare_found;
    uint64_t false_patterns;   /* shapes found that no request had */
    double node_delay_error;   /* over the hops of shapes both have: |found - true| / true of the
                                  mean node delay, weighted by the true delays; 0 if none */
    double net_delay_error_ns; /* mean over messages with both times of |network delay with the
                                  estimated offsets taken out - the true one|, ns; 0 if none */
    int slow_node_named;       /* every planted slow host named: 1; some not: 0; none planted: -1 */
    int slow_link_named;       /* the same for slow links */
    uint64_t wrongly_named;    /* hosts and links named slow that are no planted fault */
} qr_paths_score;

/* Score `found` against the truth: true_parent per message (QR_PATHS_ROOT for a request,
 * QR_TRUTH_NO_PARENT where not known: left out and counted), truth its patterns (qr_paths_given
 * over the same messages), m the messages as observed and true_net_ns their true network delays
 * (NULL: not scored; QR_TRUTH_NO_TIME where not known), the faults the spec planted. */
void qr_paths_score_run(const qr_paths *found, const qr_paths *truth, const uint64_t *true_parent,
                        const qr_msg *m, const int64_t *true_net_ns, size_t n,
                        const qr_tier_fault *faults, size_t n_faults, double rare_share,
                        qr_paths_score *out);

/* The score's numbers by name (for paths.h5's attributes and tables): fills up to max names and
 * values, returns how many there are. */
size_t qr_paths_score_fields(const qr_paths_score *s, const char **names, double *values,
                             size_t max);

#ifdef __cplusplus
}
#endif
#endif
