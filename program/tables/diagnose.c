/* Diagnose's flows and causes, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/diagnose.h"
#include "qreplay/units.h"
#include "tables.h"

/* The two largest parts of an exchange's time, as "name N%, name N%". */
static void exchange_parts(const qr_diag_exchange *e, char *buf, size_t size)
{
    int best = 0, second = 1;
    if (e->part_ns[second] > e->part_ns[best]) {
        best = 1;
        second = 0;
    }
    for (int p = 2; p < QR_TC_PARTS; p++) {
        if (e->part_ns[p] > e->part_ns[best]) {
            second = best;
            best = p;
        } else if (e->part_ns[p] > e->part_ns[second]) {
            second = p;
        }
    }
    int64_t total = 0;
    for (int p = 0; p < QR_TC_PARTS; p++)
        total += e->part_ns[p];
    double t = total ? (double)total : 1;
    snprintf(buf, size, "%s %.0f%%, %s %.0f%%", qr_tc_part_name(best),
             100.0 * (double)e->part_ns[best] / t, qr_tc_part_name(second),
             100.0 * (double)e->part_ns[second] / t);
}

/* A selected connection of an import, exchange by exchange. */
static void print_connection(const qr_diagnosis *d, const qr_diag_flow *x, FILE *out)
{
    char rtt[32], rate[32], a[32], b[32];
    if (x->min_rtt_ns >= 0)
        qr_format_duration(x->min_rtt_ns, rtt, sizeof rtt);
    else
        snprintf(rtt, sizeof rtt, "unknown");
    if (x->path_rate_bps >= 1000000000)
        snprintf(rate, sizeof rate, "%.3g Gbps", (double)x->path_rate_bps / 1e9);
    else if (x->path_rate_bps)
        snprintf(rate, sizeof rate, "%.3g Mbps", (double)x->path_rate_bps / 1e6);
    else
        snprintf(rate, sizeof rate, "unknown");
    qr_format_bytes(x->bytes, a, sizeof a);
    qr_format_bytes(x->bytes_back, b, sizeof b);
    fprintf(out, "conn %-4u hosts %u<->%u, %s out, %s back, %u exchanges, %s; min RTT %s, path %s",
            x->flow, x->src, x->dst, a, b, x->exchanges, qr_tc_end_name(x->end), rtt, rate);
    fprintf(out, "%s\n", d->opts.path_rate_bps || d->network_known ? "" : " (measured)");
    if (x->retransmissions || x->not_seen || x->reordered || x->spurious)
        fprintf(out,
                "          retransmissions %u (rto %u, tlp %u, fast %u, rack %u, unknown %u), lost "
                "%u, not seen %u, reordered %u, spurious %u\n",
                x->retransmissions, x->rtos, x->tlps, x->fast_retransmits, x->racks,
                x->unknown_retx, x->lost_data, x->not_seen, x->reordered, x->spurious);
    for (uint32_t i = 0; i < x->exchanges; i++) {
        const qr_diag_exchange *e = &d->exchanges[x->first_exchange + i];
        char sz[32], dur[32], parts[96], sd[32];
        qr_format_bytes(e->bytes, sz, sizeof sz);
        qr_format_duration(qr_diag_exchange_duration(d, e), dur, sizeof dur);
        exchange_parts(e, parts, sizeof parts);
        if (e->slowdown > 0)
            snprintf(sd, sizeof sd, "%.2f", e->slowdown);
        else
            snprintf(sd, sizeof sd, "-");
        fprintf(out, "  #%-3u %s %10s %12s %8s  %-16s %s (%s view)%s%s\n", e->index,
                e->dir ? "<-" : "->", sz, dur, sd, qr_diag_cause_name(e->cause), parts,
                e->vantage == QR_TC_AT_SENDER ? "sender's" : "receiver's",
                e->status == QR_TC_COMPLETE ? "" : "; ",
                e->status == QR_TC_COMPLETE ? "" : qr_tc_status_name(e->status));
    }
}

void cli_print_diagnosis(const qr_diagnosis *d, FILE *out)
{
    if (d->imported) {
        fprintf(out, "connections: exchanges (-> from the side that opened it, <- back), their "
                     "size, time, slowdown, cause and largest parts\n");
        for (size_t i = 0; i < d->n_flows; i++)
            if (d->flows[i].selected)
                print_connection(d, &d->flows[i], out);
        fputc('\n', out);
    }
    fprintf(out, "%-6s %10s %12s %9s  %-16s %s\n", "flow", "size", "FCT", "slowdown", "cause",
            "largest parts of its time");
    for (size_t i = 0; i < d->n_flows; i++) {
        const qr_diag_flow *x = &d->flows[i];
        if (!x->selected)
            continue;
        char sz[32], fct[32], p1[32], p2[32];
        int best = -1, second = -1;
        for (int p = 0; p < QR_PARTS; p++) {
            if (best < 0 || x->part_ns[p] > x->part_ns[best]) {
                second = best;
                best = p;
            } else if (second < 0 || x->part_ns[p] > x->part_ns[second]) {
                second = p;
            }
        }
        int64_t total = 0;
        for (int p = 0; p < QR_PARTS; p++)
            total += x->part_ns[p];
        qr_format_bytes(x->bytes, sz, sizeof sz);
        if (x->completed)
            qr_format_duration(x->fct_ns, fct, sizeof fct);
        else
            snprintf(fct, sizeof fct, "incomplete");
        snprintf(p1, sizeof p1, "%s %.0f%%", qr_diag_part_name((qr_diag_part)best),
                 total ? 100.0 * (double)x->part_ns[best] / (double)total : 0.0);
        snprintf(p2, sizeof p2, "%s %.0f%%", qr_diag_part_name((qr_diag_part)second),
                 total ? 100.0 * (double)x->part_ns[second] / (double)total : 0.0);
        fprintf(out, "%-6u %10s %12s %9.2f  %-16s %s, %s", x->flow, sz, fct, x->slowdown,
                qr_diag_cause_name(x->cause), p1, p2);
        for (uint32_t e = x->first_event; e < x->first_event + x->n_events; e++) {
            const qr_diag_event *ev = &d->events[e];
            if (ev->kind != QR_EV_BLACKHOLE)
                continue;
            fprintf(out, "; %u losses in a blackhole of switch %u port %u", x->blackhole_losses,
                    ev->sw, ev->port);
            if (ev->value >= 0)
                fprintf(out, " (burst toward port %lld)", (long long)ev->value);
            break;
        }
        fputc('\n', out);
    }
    fprintf(out, "\nselected flows by cause (the tail: slowdown at or above the class's p%g):\n",
            d->opts.tail * 100);
    for (uint32_t k = 0; k < QR_DIAG_CLASSES; k++) {
        if (!d->class_flows[k])
            continue;
        uint32_t tail = 0;
        for (int c = 0; c < QR_CAUSES; c++)
            tail += d->class_selected[k][c];
        fprintf(out,
                "  %-10s %5u flows, %3u selected (tail slowdown >= %.2f):", qr_diag_class_name(k),
                d->class_flows[k], tail, d->class_threshold[k]);
        for (int c = 0; c < QR_CAUSES; c++)
            if (d->class_selected[k][c])
                fprintf(out, " %s %u", qr_diag_cause_name((qr_diag_cause)c),
                        d->class_selected[k][c]);
        fputc('\n', out);
    }
    if (d->has_arrivals) {
        fprintf(out, "replay arrivals    %llu read, %llu blackhole episodes\n",
                (unsigned long long)d->arrivals, (unsigned long long)d->blackhole_episodes);
        for (uint32_t k = 0; k < d->series_queues; k++) {
            const qr_row_diag_bh_point *p = NULL;
            for (size_t i = 0; i < d->n_series && !p; i++)
                if (d->series[i].series == k && !d->series[i].culprit)
                    p = &d->series[i];
            if (!p)
                continue;
            uint32_t eps = 0, lost = 0;
            for (size_t b = 0; b < d->n_blackholes; b++)
                if (d->blackholes[b].series == (int32_t)p->series) {
                    eps++;
                    lost += d->blackholes[b].selected_losses;
                }
            fprintf(out,
                    "blackhole series   switch %u port %u: %u episodes, %u losses of these flows "
                    "(/blackhole_series)\n",
                    p->sw, p->port, eps, lost);
        }
    }
    if (d->incomplete)
        fprintf(out, "%s %zu (no FCT; not in any tail)\n",
                d->imported ? "not complete       " : "incomplete flows  ", d->incomplete);
}
