/* Pingmesh's matrix and flagged places, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/pingmesh_analyze.h"
#include "qreplay/units.h"
#include "tables.h"

static void rate_cell(FILE *out, double v)
{
    if (isnan(v))
        fprintf(out, " %6s", "-");
    else
        fprintf(out, " %5.2f%%", 100 * v);
}

static void print_matrix(const qr_pingmesh_result *r, FILE *out)
{
    size_t R = r->n_racks;
    if (R <= 16) {
        fprintf(out, "drop rate by rack pair (rows: probing rack, columns: probed rack)\n%8s", "");
        for (size_t b = 0; b < R; b++) {
            char name[16];
            snprintf(name, sizeof name, "s%zu", b);
            fprintf(out, " %6s", name);
        }
        fputc('\n', out);
        for (size_t a = 0; a < R; a++) {
            fprintf(out, "s%-3zu p%-2u", a, r->racks[a * R].src_pod);
            for (size_t b = 0; b < R; b++)
                rate_cell(out, r->racks[a * R + b].drop_rate);
            fputc('\n', out);
        }
        return;
    }
    /* large networks: pods by pods */
    uint32_t pods = r->racks[(R - 1) * R + R - 1].src_pod + 1;
    fprintf(out, "drop rate by pod pair (rows: probing pod, columns: probed pod)\n%5s", "");
    for (uint32_t b = 0; b < pods; b++)
        fprintf(out, " %5s%u", "p", b);
    fputc('\n', out);
    for (uint32_t a = 0; a < pods; a++) {
        fprintf(out, "p%-4u", a);
        for (uint32_t b = 0; b < pods; b++) {
            uint64_t n = 0, l = 0;
            for (size_t c = 0; c < R * R; c++)
                if (r->racks[c].src_pod == a && r->racks[c].dst_pod == b) {
                    n += r->racks[c].probes;
                    l += r->racks[c].lost;
                }
            rate_cell(out, n ? (double)l / (double)n : NAN);
        }
        fputc('\n', out);
    }
}

/* Pingmesh's SLA per level: over all windows, the worst window's drop rate and p99, and the
 * windows that breach a given SLA. */
static void print_sla(const qr_pingmesh_result *r, FILE *out)
{
    if (!r->n_sla)
        return;
    char w[32];
    qr_format_time(r->opts.window_ns, w, sizeof w);
    fprintf(out, "\nSLA per level, windows of %s:\n%-7s %8s %10s %12s %12s %12s %9s\n", w, "level",
            "windows", "probes", "drop rate", "worst drop", "worst p99", "breaches");
    for (size_t i = 0; i < r->n_sla;) {
        size_t j = i;
        uint64_t probes = 0, lost = 0, breaches = 0;
        double worst = 0;
        int64_t p99 = -1;
        for (; j < r->n_sla && !strcmp(r->sla[j].level, r->sla[i].level); j++) {
            probes += r->sla[j].probes;
            lost += r->sla[j].lost;
            breaches += r->sla[j].breach;
            worst = r->sla[j].drop_rate > worst ? r->sla[j].drop_rate : worst;
            p99 = r->sla[j].p99_ns > p99 ? r->sla[j].p99_ns : p99;
        }
        char p[32] = "-";
        if (p99 >= 0)
            snprintf(p, sizeof p, "%.1f us", (double)p99 / 1e3);
        fprintf(out, "%-7s %8zu %10llu %11.3f%% %11.3f%% %12s %9llu\n", r->sla[i].level, j - i,
                (unsigned long long)probes, 100.0 * (double)lost / (double)probes, 100 * worst, p,
                (unsigned long long)breaches);
        i = j;
    }
    if (!r->opts.sla_drop && !r->opts.sla_p99_ns)
        fprintf(out, "(no SLA given: --sla-drop P, --sla-p99 T count the windows above it)\n");
}

/* Pingmesh's black-hole rule: the ToRs and podsets the symptom touched, flagged first. */
static void print_bholes(const qr_pingmesh_result *r, FILE *out)
{
    fprintf(out,
            "\nblack holes (Pingmesh's ToR and podset rule): %u pair%s lost >= %.0f%% of their "
            "probes (the symptom)\n",
            r->bh_symptom_pairs, r->bh_symptom_pairs == 1 ? "" : "s", 100 * r->opts.bh_pair);
    if (!r->n_bholes)
        return;
    fprintf(out, "%4s  %-6s %-10s %8s %12s %7s %6s", "flag", "kind", "place", "members",
            "symptomatic", "score", "pairs");
    if (r->has_truth)
        fprintf(out, "  %s", "truth");
    fputc('\n', out);
    for (size_t i = 0; i < r->n_bholes && (i < 10 || r->bholes[i].flagged); i++) {
        const qr_row_pm_bhole *b = &r->bholes[i];
        char fl[8] = "";
        if (b->flagged)
            snprintf(fl, sizeof fl, "%u", b->flagged);
        fprintf(out, "%4s  %-6s %-10s %8u %12u %6.0f%% %6u", fl, b->kind, b->name, b->members,
                b->symptomatic, 100 * b->score, b->pairs);
        if (r->has_truth)
            fprintf(out, "  %s", b->faulty ? "FAULTY" : "");
        fputc('\n', out);
    }
    fprintf(out,
            "rule: a ToR whose servers have the symptom in >= %.0f%%, a podset whose ToRs do in "
            ">= %.0f%%; the one touching the most symptom pairs is flagged, its pairs explained, "
            "repeat%s\n",
            100 * r->opts.bh_tor, 100 * r->opts.bh_pod,
            r->bh_tied ? "; stopped at a tie: two places touch as many pairs, the probes cannot "
                         "tell which (unknown)"
                       : "");
}

/* Pingmesh's drop rate from connect times, beside the direct count. */
static void print_connects(const qr_row_pm_summary *s, int truth, FILE *out)
{
    char w[32], rto[32];
    qr_format_time(s->connect_wait_ns, w, sizeof w);
    qr_format_time(s->syn_rto_ns, rto, sizeof rto);
    if (isnan(s->connect_drop_rate)) {
        fprintf(out,
                "connects not timed: the agents waited %s, less than a SYN timeout (%s), so no "
                "drop rate from connect times (the testbed's [pingmesh] connect_wait)\n",
                w, rto);
        return;
    }
    fprintf(out,
            "connects %llu waited for up to %s: %llu took a SYN timeout of %s or more, %llu never "
            "completed -> Pingmesh's drop rate %.3f%% (%llu SYN timeouts, %.3f%% of handshake "
            "attempts)",
            (unsigned long long)s->connect_scored, w, (unsigned long long)s->connect_slow, rto,
            (unsigned long long)s->connect_failed, 100 * s->connect_drop_rate,
            (unsigned long long)s->syn_timeouts,
            100 * (isnan(s->syn_drop_rate) ? 0 : s->syn_drop_rate));
    if (truth)
        fprintf(out,
                "; truth: %llu right, %llu first handshakes lost but not slow, %llu slow "
                "without a loss",
                (unsigned long long)s->connect_right, (unsigned long long)s->connect_missed,
                (unsigned long long)s->connect_false);
    fputc('\n', out);
}

void cli_print_pingmesh(const qr_pingmesh_result *r, FILE *out)
{
    const qr_row_pm_summary *s = &r->summary;
    fprintf(out,
            "probes   %llu sent by %u pairs every %.1f us (%u B, timeout %.1f us); %llu scored, "
            "%llu left out (sent within the timeout of the end)\n",
            (unsigned long long)s->sent, s->pairs, s->interval_ns / 1e3, s->size,
            s->timeout_ns / 1e3, (unsigned long long)s->scored, (unsigned long long)s->unresolved);
    fprintf(out, "lost     %llu (%.3f%%), %llu of them answered late", (unsigned long long)s->lost,
            100 * (isnan(s->drop_rate) ? 0 : s->drop_rate), (unsigned long long)s->late);
    fprintf(out, "; truth: %llu to faults, %llu to full buffers, %llu in NIC queues\n",
            (unsigned long long)s->fault_lost, (unsigned long long)s->congestion_lost,
            (unsigned long long)s->host_lost);
    print_connects(s, r->has_truth, out);
    fprintf(out,
            "load     %.3f MB of probes and answers, %.4f%% of all bytes sent; the busiest host "
            "sends %.2f Mbit/s of them (%.4f%% of its link)\n\n",
            s->probe_bytes / 1e6, 100 * (isnan(s->probe_share) ? 0 : s->probe_share),
            s->host_probe_bps_max / 1e6, 100 * s->link_share_max);
    print_matrix(r, out);
    fprintf(out, "\nplaces by how much their drop rate stands out (flagged first)\n");
    fprintf(out, "%4s  %-7s %-14s %9s %7s %8s %8s %9s %8s %10s %10s %-10s", "flag", "kind", "place",
            "probes", "lost", "rate", "rest", "llr", "suspects", "rtt p99", "rest p99", "latency");
    if (r->has_truth)
        fprintf(out, "  %s", "truth");
    fputc('\n', out);
    for (size_t i = 0; i < r->n_places && (i < 10 || r->places[i].flagged); i++) {
        const qr_row_pm_place *p = &r->places[i];
        char fl[8] = "";
        if (p->flagged)
            snprintf(fl, sizeof fl, "%u", p->flagged);
        fprintf(out, "%4s  %-7s %-14s %9llu %7llu", fl, p->kind, p->name,
                (unsigned long long)p->probes, (unsigned long long)p->lost);
        rate_cell(out, p->rate);
        fputc(' ', out);
        rate_cell(out, p->rest_rate);
        fprintf(out, " %9.1f %8u", p->llr, p->suspects);
        char a[24] = "-", b[24] = "-";
        if (p->rtt_p99_ns >= 0)
            snprintf(a, sizeof a, "%.2f ms", (double)p->rtt_p99_ns / 1e6);
        if (p->rest_rtt_p99_ns >= 0)
            snprintf(b, sizeof b, "%.2f ms", (double)p->rest_rtt_p99_ns / 1e6);
        fprintf(out, " %10s %10s %-10s", a, b, p->latency);
        if (r->has_truth)
            fprintf(out, "  %s", p->faulty ? "FAULTY" : "");
        fputc('\n', out);
    }
    fprintf(out,
            "\nrule: flag the place whose drop rate stands out most (>= %.3g x the rest, "
            "significant at %.3g over all places), set its probes aside, repeat; latency: "
            "congestion where its round-trip p99 is >= %.3g x the rest's (a queue delays what it "
            "does not drop), silent where not\n",
            r->opts.ratio, r->opts.alpha, r->opts.ratio);
    fprintf(out, "flagged %u place%s", s->flagged, s->flagged == 1 ? "" : "s");
    if (s->flagged)
        fprintf(out, " (%.1f suspect cables each)", s->mean_suspects);
    if (r->has_truth) {
        fprintf(out, "; %u with a faulty suspect; %u of %u faulty cables covered", s->right,
                s->covered, s->faulty);
        fprintf(out, "\nprecision %s", "");
        if (isnan(s->precision))
            fprintf(out, "-");
        else
            fprintf(out, "%.1f%%", 100 * s->precision);
        fprintf(out, "  recall %.1f%%", 100 * s->recall);
        if (s->detect_after)
            fprintf(out, "  detected for good after %llu probes (%.3f ms)",
                    (unsigned long long)s->detect_after, s->detect_after_ns / 1e6);
        else
            fprintf(out, "  not detected for good");
    } else
        fprintf(out, "; no faults planted, nothing to score");
    fputc('\n', out);
    print_bholes(r, out);
    print_sla(r, out);
}
