/* Isolate's TCP trace line, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/tcptrace.h"
#include "qreplay/units.h"
#include "tables.h"

void cli_print_tcp_trace(const qr_tcp_trace *t, FILE *out)
{
    const qr_tt_summary *s = qr_tcp_trace_summary(t);
    fprintf(out,
            "flow %" PRIu32 ": %" PRIu64 " segments, %" PRIu64 " lost, %" PRIu64
            " retransmissions (",
            s->flow, s->segments, s->lost, s->retransmissions);
    const char *sep = "";
    for (int k = 1; k < QR_TT_N_TRIGGERS; k++)
        if (s->by_trigger[k]) {
            fprintf(out, "%s%s %" PRIu64, sep, qr_tt_trigger_name(k), s->by_trigger[k]);
            sep = ", ";
        }
    fprintf(out,
            "%s), %s the recording's %" PRIu64 "; %" PRIu64 " late fast retransmits; %" PRIu64
            " delayed ACKs",
            *sep ? "" : "none", s->matches_recording ? "exactly" : "NOT",
            s->recorded_retransmissions, s->late_fast_retransmits, s->delayed_acks);
    if (s->max_cwnd >= 0)
        fprintf(out, "; max cwnd %" PRId64 " B", s->max_cwnd);
    fputc('\n', out);
}
