/* The study's summary table, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/results.h"
#include "qreplay/units.h"
#include "tables.h"

void cli_print_results(FILE *f, const qr_variant_summary *rows, size_t n)
{
    int w = 16; /* the variant column: as wide as its longest name */
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(rows[i].name) > w)
            w = (int)strlen(rows[i].name);
    fprintf(f, "%-*s %9s %9s %8s %8s %8s %8s %8s %9s\n", w, "variant", "qdiff", "qdiff", "drops",
            "drops", "false", "false", "wrong", "drop");
    fprintf(f, "%-*s %9s %9s %8s %8s %8s %8s %8s %9s\n", w, "", "mean MTU", "p99 MTU", "runtime",
            "replay", "accepts", "drops", "location", "error");
    for (size_t i = 0; i < n; i++) {
        const qr_variant_summary *r = &rows[i];
        fprintf(f,
                "%-*s %9.3f %9.3f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
                " %8.2f%%\n",
                w, r->name, r->qdiff.mean, r->qdiff.p99, r->drops.runtime_drops,
                r->drops.replay_drops, r->drops.false_accepts, r->drops.false_drops,
                r->drops.wrong_locations, 100 * r->drops.error);
    }
}
