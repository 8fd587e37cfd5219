/* Whatif's grid, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/units.h"
#include "qreplay/whatif.h"
#include "tables.h"

static void fmt_bytes(char *buf, size_t size, double b)
{
    if (b >= 1e6)
        snprintf(buf, size, "%.2fMB", b / 1e6);
    else if (b >= 1e3)
        snprintf(buf, size, "%.1fKB", b / 1e3);
    else
        snprintf(buf, size, "%.0fB", b);
}

void cli_print_whatif(FILE *out, const qr_whatif_grid *g, const qr_whatif_outcome *o)
{
    /* an ECN column when some point marks */
    int with_ecn = 0;
    for (size_t p = 0; p < o->n; p++) {
        qr_scenario *s;
        char err[QR_ERRBUF_SIZE];
        if (!qr_whatif_grid_scenario(g, p, &s, err)) {
            with_ecn |= qr_scenario_config(s)->buffer.ecn_threshold_bytes > 0;
            qr_scenario_destroy(s);
        }
    }
    size_t nk = qr_whatif_grid_keys(g);
    int w[QR_WHATIF_MAX_KEYS];
    for (size_t k = 0; k < nk; k++) {
        w[k] = (int)strlen(qr_whatif_grid_key(g, k));
        for (size_t p = 0; p < o->n; p++) {
            int l = (int)strlen(qr_whatif_grid_value(g, p, k));
            if (l > w[k])
                w[k] = l;
        }
    }
    fprintf(out, "%-5s", "point");
    for (size_t k = 0; k < nk; k++)
        fprintf(out, " %-*s", w[k], qr_whatif_grid_key(g, k));
    fprintf(out, " %8s", "drops");
    if (o->truth)
        fprintf(out, " %8s", "true");
    fprintf(out, " %7s %7s %7s %6s %9s %7s %9s %9s", "edge", "agg", "core", "lossy", "q_p99",
            "q>90%", "delay_p50", "delay_p99");
    if (o->truth)
        fprintf(out, " %9s", "true_p99");
    if (with_ecn)
        fprintf(out, " %8s", "ecn");
    fprintf(out, " %5s %9s %10s\n", "bhole", "new_drops", "sent_after");
    for (size_t p = 0; p < o->n; p++) {
        const qr_whatif_row *r = &o->pred[p].row;
        fprintf(out, "%-5zu", p);
        for (size_t k = 0; k < nk; k++)
            fprintf(out, " %-*s", w[k], qr_whatif_grid_value(g, p, k));
        fprintf(out, " %8" PRIu64, r->drops);
        if (o->truth)
            fprintf(out, " %8" PRIu64, o->truth[p].row.drops);
        char q[32];
        fmt_bytes(q, sizeof q, (double)r->q_p99_bytes[QR_WHATIF_LAYERS]);
        fprintf(out, " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %5.1f%% %9s %6.2f%% %7.1fus %7.1fus",
                r->layer_drops[0], r->layer_drops[1], r->layer_drops[2], 100 * r->lossy_share, q,
                100 * r->above90[QR_WHATIF_LAYERS], r->delay_p50_ns / 1e3, r->delay_p99_ns / 1e3);
        if (o->truth)
            fprintf(out, " %7.1fus", o->truth[p].row.delay_p99_ns / 1e3);
        if (with_ecn)
            fprintf(out, " %8" PRIu64, r->ecn_marks);
        fprintf(out, " %5" PRIu64 " %9" PRIu64 " %10" PRIu64 "%s\n", r->blackholes, r->new_drops,
                r->sent_after_new_drop, p == qr_whatif_grid_baseline(g) ? "  (recorded)" : "");
    }
    if (o->has_recorded)
        fprintf(out,
                "recorded runtime: %" PRIu64 " drops, delay p50 %.1f us, p99 %.1f us, %" PRIu64
                " blackhole episodes\n",
                o->recorded.row.drops, o->recorded.row.delay_p50_ns / 1e3,
                o->recorded.row.delay_p99_ns / 1e3, o->recorded.row.blackholes);
    fprintf(out, "note: %s\n", QR_WHATIF_CAVEAT);
    if (o->errors) {
        const qr_whatif_agreement *a = &o->agree;
        fprintf(out,
                "validated: ranking by drops %s (Kendall tau %.2f; fewest drops: predicted point "
                "%u, true point %u)\n",
                a->best_drops_same ? "keeps its best point" : "picks another best point",
                a->tau_drops, a->best_drops_pred, a->best_drops_true);
        fprintf(out,
                "           ranking by p99 delay %s (Kendall tau %.2f; lowest: predicted point "
                "%u, true point %u)\n",
                a->best_delay_same ? "keeps its best point" : "picks another best point",
                a->tau_delay_p99, a->best_delay_pred, a->best_delay_true);
    }
}
