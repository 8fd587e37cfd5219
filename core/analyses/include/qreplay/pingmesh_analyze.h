/* qreplay: the Pingmesh analysis (qreplay pingmesh) of the agents' probe log (probelog.h). It reads
 * no truth: scoring against the planted faults is pingmesh_score.h's.
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
 * of the paths between the two racks. Each place's round trips tell what kind of loss it has, as
 * Pingmesh reads them: a congested place delays what it does not drop (its answered probes' p99
 * at least `ratio` times the others'), a silent drop does not. */
#ifndef QREPLAY_PINGMESH_ANALYZE_H
#define QREPLAY_PINGMESH_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/pingmesh.h"
#include "qreplay/probelog.h"
#include "qreplay/schema_pingmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_pingmesh_opts {
    double alpha;       /* significance of the rule, before the Bonferroni correction (0.001) */
    double ratio;       /* a flagged place's drop rate over the rest's, at least (2) */
    int64_t window_ns;  /* the SLA's window (1 ms) */
    double sla_drop;    /* a window above this drop rate breaches the SLA (0: none given) */
    int64_t sla_p99_ns; /* a window whose p99 is above this breaches it (0: none given) */
    double bh_pair;     /* black holes: a pair losing at least this share has the symptom (25%) */
    double bh_tor;      /* a ToR whose servers have the symptom in this share is eligible (50%) */
    double bh_pod;      /* a podset whose ToRs have it in this share is eligible (50%) */
    int64_t syn_rto_ns; /* the kernel's first SYN timeout, doubling after (Linux: 1 s) */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
} qr_pingmesh_opts;

/* Fill *o with the defaults: alpha 0.001, ratio 2, SLA windows of 1 ms and no SLA, black-hole
 * shares 25%, 50% and 50%, a SYN timeout of 1 s (Linux's), no progress callback. */
void qr_pingmesh_opts_default(qr_pingmesh_opts *o);

/* Set the rule's options from their text (either may be NULL: unchanged): alpha a share in (0, 1)
 * as "0.1%" or "0.001"; ratio a number from 1 to 10^6. Returns 0, or QR_EVALUE with "--alpha:
 * '...' is not a share between 0 and 1" or "--ratio: '...' is not a number from 1" in errbuf (o
 * unchanged). */
int qr_pingmesh_opts_parse(qr_pingmesh_opts *o, const char *alpha, const char *ratio, char *errbuf);

struct qr_pingmesh_ctx;

typedef struct qr_pingmesh_result {
    qr_pingmesh_opts opts;
    int has_truth;         /* scored against planted faults (pingmesh_score.h) */
    qr_row_pm_pair *pairs; /* every probe pair of the plan */
    size_t n_pairs;
    qr_row_pm_rack *racks;   /* racks x racks, row-major (the Pingmesh matrix) */
    size_t n_racks;          /* racks (the matrix has n_racks^2 rows) */
    qr_row_pm_place *places; /* every candidate place, flagged ones first in flag order */
    size_t n_places;
    qr_row_pm_curve *curve; /* the rule rerun on the first N probes */
    size_t n_curve;
    qr_row_pm_summary summary;
    qr_row_pm_sla *sla; /* per level and window, level by level in time order */
    size_t n_sla;
    qr_row_pm_bhole *bholes; /* the black-hole rule: flagged first, in flag order */
    size_t n_bholes;
    uint32_t bh_symptom_pairs;   /* pairs with the black-hole symptom */
    int bh_tied;                 /* the rule stopped at a tie it cannot break */
    struct qr_pingmesh_ctx *ctx; /* the analysis's state, for the calls below; private */
} qr_pingmesh_result;

/* Analyse a run's probe log. The truth columns of the rows stay empty (no loss attributed, no
 * place known faulty: precision 0 of what was flagged, recall and detection unknown). Caller owns
 * *out (qr_pingmesh_free, also after an error). Returns 0, QR_EFORMAT (a probe that is not the
 * scenario's: "/probes row 12: pair 9000 ... of the scenario's plan", or an invalid topology),
 * QR_ENOMEM; the message names the log's file. */
int qr_pingmesh_run(const qr_probe_log *log, const qr_pingmesh_opts *o, qr_pingmesh_result *out,
                    char *errbuf);
/* Release what *r holds (NULL allowed). */
void qr_pingmesh_free(qr_pingmesh_result *r);

/* What the analysis decided, for a scorer; borrowed from r until qr_pingmesh_free, and each call
 * reuses the analysis's scratch (one call at a time per r). Cables are named by their lower
 * directed link.
 * qr_pingmesh_topology: the topology of the run. qr_pingmesh_place_of: the place number of a
 * /places row (UINT32_MAX: none). qr_pingmesh_suspects: place's suspect cables into *cables;
 * returns how many. qr_pingmesh_curve_flags: the places the rule flagged at curve step `step`
 * (r->curve[step]) into places[0..max); returns how many it wrote. */
const qr_topology *qr_pingmesh_topology(const qr_pingmesh_result *r);
uint32_t qr_pingmesh_place_of(const qr_pingmesh_result *r, const qr_row_pm_place *row);
size_t qr_pingmesh_suspects(const qr_pingmesh_result *r, uint32_t place, const uint32_t **cables);
size_t qr_pingmesh_curve_flags(const qr_pingmesh_result *r, size_t step, uint32_t *places,
                               size_t max);

/* Pingmesh's SLA of a probe log (the resolved probes: answered within the timeout, or lost): per
 * level (qr_topology_hops between the servers: 1 rack, 3 pod, 5 spine) and window of window_ns by
 * send time, the drop rate and the round trips' p50, p99 and p99.9; a window breaches the SLA
 * when sla_drop (> 0) or sla_p99_ns (> 0) is exceeded. Caller frees *rows. Returns 0, QR_EINVAL
 * (window_ns <= 0) or QR_ENOMEM. */
int qr_pingmesh_sla(const qr_probe_log *log, const qr_topology *t, int64_t window_ns,
                    double sla_drop, int64_t sla_p99_ns, qr_row_pm_sla **rows, size_t *n,
                    char *errbuf);

/* Pingmesh's black-hole rule (its section 5.1, as we read it) on the pairs' counts. A black hole
 * drops every packet of some address pairs (a switch's corrupted entries), so a pair whose probes
 * it drops loses most of them, whatever their ports: a pair that lost at least BH_MIN_LOST (3) of
 * its probes and at least o->bh_pair of them has the symptom. A server has it when it is an end of
 * such a pair; a ToR (an edge switch) is a candidate when the share of its probed servers with
 * the symptom is at least o->bh_tor, a podset (the Leaf, aggregation, switches of a pod) when the
 * share of its ToRs with a symptomatic server on a pair between racks is at least o->bh_pod. The
 * candidate touching the most symptom pairs (at least 2; a ToR before its own podset) is flagged,
 * those pairs are explained, and the rule runs again on the rest; two ToRs (or two podsets)
 * touching as many stop it (*tied: the probes cannot tell them apart). Rows: every ToR and
 * podset that touched a symptom pair, flagged first in order, each with its numbers when it was
 * first tested (flagged: when it was flagged). Caller frees *rows. Returns 0 or QR_ENOMEM. */
int qr_pingmesh_blackholes(const qr_row_pm_pair *pairs, size_t n_pairs, const qr_topology *t,
                           const qr_pingmesh_opts *o, qr_row_pm_bhole **rows, size_t *n,
                           uint32_t *symptom_pairs, int *tied, char *errbuf);

/* Pingmesh's drop rate from connect times (its agents measure drops with nothing but TCP
 * connects: a lost SYN or SYN-ACK makes the connect wait for the kernel's SYN timeout rto, then
 * 2 rto, ...). The SYN timeouts a connect that took rtt shows: the most k with rtt >= rto (2^k - 1)
 * - rto / 4; one never completed (rtt < 0) within wait shows every timeout that fits in it, and
 * *failed is set. */
uint32_t qr_pingmesh_syn_timeouts(int64_t rtt_ns, int64_t wait_ns, int64_t rto_ns, int *failed);

/* The connects of log resolved within the wait ([pingmesh] connect_wait, at least the timeout;
 * sent at least a wait before the end) into s's connect_* fields, with rto: measured only when
 * the wait is longer than the timeout and at least rto (else the rates are NaN and the counts 0:
 * the agents gave up before any SYN timeout). */
void qr_pingmesh_connects(const qr_probe_log *log, int64_t rto_ns, qr_row_pm_summary *s);

/* pingmesh.h5: /pairs, /racks, /places, /curve, /summary, /sla, /blackholes and the scenario
 * (s). */
int qr_pingmesh_write(const char *path, const qr_scenario *s, const char *recording_id,
                      const qr_pingmesh_result *r, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
