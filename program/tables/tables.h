/* The program's tables: what each command prints of a core result (the result files hold the
 * same numbers; the core never prints). Each writes to out and returns nothing: a short write is
 * the terminal's business. */
#ifndef QREPLAY_TABLES_H
#define QREPLAY_TABLES_H

#include <stddef.h>
#include <stdio.h>

#include "qreplay/blame.h"
#include "qreplay/diagnose.h"
#include "qreplay/faults.h"
#include "qreplay/hoptrace.h"
#include "qreplay/linkfault.h"
#include "qreplay/pingmesh_analyze.h"
#include "qreplay/results.h"
#include "qreplay/tcptrace.h"
#include "qreplay/whatif.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The readable report: the top links by votes with the truth beside them, the flagged links, and
 * the scores. top: how many links to list. */
void cli_print_blame(const qr_blame *b, size_t top, FILE *out);

/* The table of selected flows (flow, size, FCT, slowdown, cause, the two largest parts). */
void cli_print_diagnosis(const qr_diagnosis *d, FILE *out);

/* The readable report: the summary, the traces of the first `traces` kept packets hop by hop, the
 * drop debugger (the first `drops` drops, then counts by reason and by queue) and the latency
 * profile. */
void cli_print_hoptrace(const qr_hoptrace *t, size_t traces, size_t drops, FILE *out);

/* The readable report: the matrix of drop rates, the places flagged, the scores and the probes'
 * load. */
void cli_print_pingmesh(const qr_pingmesh_result *r, FILE *out);

/* The table of a job: a row per point (its values, drops per layer, the share of flows losing a
 * packet, occupancy p99, time above 90% of the threshold, delays, ECN marks, blackholes, the new
 * drops and the packets after them; with truth, true drops and delay next to the predicted),
 * then the caveat and, validated, whether the rankings agree. An ECN column when a point marks. */
void cli_print_whatif(FILE *out, const qr_whatif_grid *g, const qr_whatif_outcome *o);

/* The summary table (a row per variant: qdiff mean and p99 in MTU, drops in runtime and replay,
 * false accepts, false drops, wrong locations, drop error) onto out. */
void cli_print_results(FILE *out, const qr_variant_summary *rows, size_t n);

/* One line: "flow F: N segments, R retransmissions (rto 1, fast-retransmit 0, ...) = recorded". */
void cli_print_tcp_trace(const qr_tcp_trace *t, FILE *out);

/* Print what every rule did, one line each, to out: "fault 1 (flow 0 data 5 at 2): dropped 1 of
 * 1"; a rule that dropped fewer packets than it names says why ("the flow's data packets that
 * reached switch 2: 4"). Returns the number of rules that fell short. */
size_t cli_print_faults(const qr_faults *f, FILE *out);

/* One line per fault to out: "fault gray s8>s16 1%: dropped 12 of 1180 packets crossing". */
void cli_print_link_faults(const qr_link_faults *f, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
