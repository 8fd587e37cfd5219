/* What the runtime's planted faults did, as `qreplay runtime` prints it (tables.h). */
#include <stdint.h>
#include <stdio.h>

#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "tables.h"

size_t cli_print_faults(const qr_faults *f, FILE *out)
{
    size_t short_rules = 0;
    for (size_t i = 0; i < qr_faults_rules(f); i++) {
        qr_row_fault r;
        qr_faults_row(f, i, &r);
        uint64_t want = (uint64_t)r.last - r.first + 1;
        fprintf(out, "fault %zu (%s): dropped %llu of %llu", i + 1, r.text,
                (unsigned long long)r.dropped, (unsigned long long)want);
        if (r.dropped < want) {
            short_rules++;
            fprintf(out, " (only %llu %s packets of flow %u reached switch %u)",
                    (unsigned long long)r.counted, r.kind, r.flow, r.sw);
        }
        fputc('\n', out);
    }
    return short_rules;
}

void cli_print_link_faults(const qr_link_faults *f, FILE *out)
{
    for (size_t i = 0; i < qr_link_faults_count(f); i++) {
        qr_row_link_fault row;
        qr_link_faults_row(f, i, &row);
        uint32_t link;
        const qr_link_fault *rule = qr_link_faults_get(f, i, &link);
        fprintf(out, "fault %s %s (%s)", row.kind, row.text, row.name);
        if (rule && rule->kind <= QR_LINK_BLACKHOLE)
            fprintf(out, ": dropped %llu of %llu packets crossing\n",
                    (unsigned long long)row.dropped, (unsigned long long)row.crossed);
        else
            fprintf(out, ": %llu packets crossed\n", (unsigned long long)row.crossed);
    }
}
