/* qreplay: the Pingmesh analysis (qreplay pingmesh) of a run's probes (pingmesh.h), scored against
 * the runtime's ground truth.
 *
 * The analysis (qr_pingmesh_run): per probe pair and per rack pair (the Pingmesh matrix), probes,
 * losses, drop rate and round-trip p50/p99; and the detection rule, which names the place a pattern
 * of losses points at. Candidates are the spine (every probe between pods), each pod (the probes
 * between its racks and other pods), each rack, each server and each rack pair. The rule is a
 * scan: the candidate whose probes' drop rate stands out most from the rest (the Bernoulli
 * likelihood-ratio statistic, inside against outside) is flagged if its rate is at least `ratio`
 * times the rest's and the statistic is significant at `alpha` after a Bonferroni correction over
 * the candidates; its probes are then set aside and the rule runs again on the rest. A place holds
 * suspect cables: a server its host link, a rack its edge switch's links, a pod the links from its
 * aggregation switches to the core, the spine every aggregation-core link, a rack pair the links
 * of the paths between the two racks. Scored against the planted gray and blackhole faults: a
 * flagged place is right if one of its suspects is a faulty cable. */
#ifndef QREPLAY_PINGMESH_ANALYZE_H
#define QREPLAY_PINGMESH_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/pingmesh.h"
#include "qreplay/schema_pingmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_pingmesh_opts {
    double alpha; /* significance of the rule, before the Bonferroni correction (0.001) */
    double ratio; /* a flagged place's drop rate over the rest's, at least (2) */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
} qr_pingmesh_opts;

void qr_pingmesh_opts_default(qr_pingmesh_opts *o);

typedef struct qr_pingmesh_result {
    qr_pingmesh_opts opts;
    int has_truth;         /* faults planted: the rule is scored */
    qr_row_pm_pair *pairs; /* every probe pair of the plan */
    size_t n_pairs;
    qr_row_pm_rack *racks;   /* racks x racks, row-major (the Pingmesh matrix) */
    size_t n_racks;          /* racks (the matrix has n_racks^2 rows) */
    qr_row_pm_place *places; /* every candidate place, flagged ones first in flag order */
    size_t n_places;
    qr_row_pm_curve *curve; /* the rule rerun on the first N probes */
    size_t n_curve;
    qr_row_pm_summary summary;
} qr_pingmesh_result;

/* Analyse the probes of a run: truth.h5 at truth_path (its /probes, /link_faults and scenario).
 * Returns 0, QR_ENOTFOUND ("... has no /probes: the run did not probe ([pingmesh] interval)"),
 * QR_EFORMAT (a row that is not the scenario's: "/probes row 12: pair 9000 of 128") or the reader's
 * errors, naming the file. */
int qr_pingmesh_run(const char *truth_path, const qr_pingmesh_opts *o, qr_pingmesh_result *out,
                    char *errbuf);
void qr_pingmesh_free(qr_pingmesh_result *r);

/* pingmesh.h5: /pairs, /racks, /places, /curve, /summary and the scenario (s). */
int qr_pingmesh_write(const char *path, const qr_scenario *s, const qr_pingmesh_result *r,
                      char *errbuf);

/* The readable report: the matrix of drop rates, the places flagged, the scores and the probes'
 * load. */
void qr_pingmesh_print(const qr_pingmesh_result *r, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
