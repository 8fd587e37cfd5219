/* Blame's links by votes and the scores, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/blame.h"
#include "qreplay/units.h"
#include "tables.h"

/* A link's place in the listing: by rank, unranked (0) last, then by index. */
struct voted {
    uint32_t rank;
    uint32_t link;
};

static int cmp_votes(const void *a, const void *b)
{
    const struct voted *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank == 0 ? 1 : y->rank == 0 ? -1 : (x->rank < y->rank ? -1 : 1);
    return x->link < y->link ? -1 : x->link > y->link;
}

static void pct(FILE *out, double v)
{
    if (isnan(v))
        fprintf(out, "%8s", "-");
    else
        fprintf(out, "%7.1f%%", 100 * v);
}

/* A method's line up to its culprits: voters, flagged, faulty and (with a truth) the scores. */
static void print_scores(FILE *out, int has_truth, const char *method, uint32_t voters,
                         uint32_t flagged, uint32_t faulty, double precision, double recall,
                         double culprits)
{
    fprintf(out, "%-7s %8u %8u %8u ", method, voters, flagged, faulty);
    if (!has_truth) {
        fprintf(out, "%9s %9s %9s", "-", "-", "-");
        return;
    }
    pct(out, precision);
    fputs("  ", out);
    pct(out, recall);
    fputs("  ", out);
    pct(out, culprits);
}

/* Blamed links by value: the exact programs' most first, the greedy ones' in the order taken. */
static int cmp_value_desc(const void *a, const void *b)
{
    double x = (*(const qr_row_blame_blamed *const *)a)->value;
    double y = (*(const qr_row_blame_blamed *const *)b)->value;
    return x > y ? -1 : x < y;
}

static int cmp_value_asc(const void *a, const void *b)
{
    return -cmp_value_desc(a, b);
}

/* The links comparator `method` blamed, at most six, then how many more. */
static void print_blamed(const qr_blame *b, const char *method, int greedy, FILE *out)
{
    const qr_row_blame_blamed **list = malloc((b->n_blamed ? b->n_blamed : 1) * sizeof *list);
    size_t n = 0;
    if (!list)
        return;
    for (size_t i = 0; i < b->n_blamed; i++)
        if (!strcmp(b->blamed[i].method, method))
            list[n++] = &b->blamed[i];
    qsort(list, n, sizeof *list, greedy ? cmp_value_asc : cmp_value_desc);
    for (size_t i = 0; i < n && i < 6; i++) {
        fprintf(out, " %s", list[i]->name);
        if (!strcmp(method, "integer"))
            fprintf(out, " (%.0f)", list[i]->value);
    }
    if (n > 6)
        fprintf(out, " and %zu more", n - 6);
    if (!n)
        fputs(" none", out);
    free(list);
}

/* The flagged links that are noise, if any. */
static void print_noise(const qr_blame *b, FILE *out)
{
    if (!b->n_summary || !(b->summary[0].noise || (b->n_summary > 1 && b->summary[1].noise)))
        return;
    fprintf(out, "flag n: flagged on the evidence of one lost packet or none (noise): %u by 007",
            b->summary[0].noise);
    if (b->n_summary > 1)
        fprintf(out, ", %u by the replay's votes", b->summary[1].noise);
    fputc('\n', out);
}

/* The tally per epoch: one line per epoch of 007's votes, its flagged links. */
static void print_epochs(const qr_blame *b, FILE *out)
{
    if (!b->epoch_ns)
        return;
    char t[32];
    qr_format_time(b->epoch_ns, t, sizeof t);
    fprintf(out, "\nper epoch of %s (007's votes; voters by their first loss):\n", t);
    fprintf(out, "%8s %8s %8s %8s  %s\n", "epoch", "voters", "flagged", "noise", "flagged links");
    size_t shown = 0;
    for (size_t i = 0; i < b->n_epochs; i++) {
        const qr_row_blame_epoch *e = &b->epochs[i];
        if (strcmp(e->method, "007"))
            continue;
        if (shown++ == 20) {
            fprintf(out, "%8s (the rest in /epochs)\n", "...");
            break;
        }
        fprintf(out, "%8lld %8u %8u %8u ", (long long)e->epoch, e->voters, e->flagged, e->noise);
        for (size_t k = 0; k < b->n_epoch_links; k++) {
            const qr_row_blame_epoch_link *l = &b->epoch_links[k];
            if (l->epoch == e->epoch && l->flagged && !strcmp(l->method, "007"))
                fprintf(out, " %s%s", l->name, l->noise ? "(n)" : "");
        }
        fputc('\n', out);
    }
}

/* Theorem 1: the most ICMP answers a switch sent in an epoch against 007's bound. */
static void print_icmp(const qr_blame *b, FILE *out)
{
    const qr_blame_icmp *x = &b->icmp;
    if (!x->known)
        return;
    fprintf(out,
            "ICMP answers per switch and epoch, against 007's bound (C_t = %u traces per host "
            "and epoch,\nfrom each host whose paths cross the switch): the most %llu (s%u, epoch "
            "%lld; its bound %llu);\n%s; %llu refused by the switches' limits\n",
            x->per_host, (unsigned long long)x->max_sent, x->max_switch, (long long)x->max_epoch,
            (unsigned long long)x->max_bound,
            x->over ? "THE BOUND WAS EXCEEDED" : "the bound held for every switch and epoch",
            (unsigned long long)x->refused);
}

/* 007's comparators: one line each with the scores, then its blamed links. */
static void print_comparators(const qr_blame *b, FILE *out)
{
    for (size_t m = 0; m < b->n_comparators; m++) {
        const qr_row_blame_comparator *c = &b->comparators[m];
        print_scores(out, b->has_truth, c->method, c->connections, c->flagged, c->faulty,
                     c->precision, c->recall, c->culprit_accuracy);
        fprintf(out, "   %s", c->optimal ? "optimal" : c->status);
        if (c->unexplainable)
            fprintf(out, ", %u without a known link", c->unexplainable);
        fputs(":", out);
        print_blamed(b, c->method, !strcmp(c->method, "maxcov") || !strcmp(c->method, "tomo"), out);
        fputc('\n', out);
    }
}

void cli_print_blame(const qr_blame *b, size_t top, FILE *out)
{
    struct voted *order = malloc((b->n_links ? b->n_links : 1) * sizeof *order);
    if (!order)
        return;
    for (uint32_t i = 0; i < b->n_links; i++)
        order[i] = (struct voted){b->links[i].rank, i};
    qsort(order, b->n_links, sizeof *order, cmp_votes);
    fprintf(out, "links by 007 votes (%u directions with detected losses, %llu losses",
            b->summary[0].connections, (unsigned long long)b->losses);
    if (b->has_replay)
        fprintf(out, "; %llu the replay could not place", (unsigned long long)b->unexplained);
    fprintf(out, ")\n");
    const qr_row_blame_summary *s0 = &b->summary[0];
    if (b->n_summary)
        fprintf(out,
                "paths: %u traced whole, %u in part (hops that did not answer: their links get "
                "no vote), %u unknown (no vote)\n",
                s0->traced, s0->partial, s0->untraced);
    if (b->n_summary && s0->untraced && s0->untraced == s0->connections)
        fprintf(out,
                "no direction that lost packets has a known path: in the runtime set [traceroute] "
                "per_connection = 1;\nfor captures, give the paths with qreplay import --paths "
                "FILE\n");
    fprintf(out, "%4s  %-14s %-9s %8s %6s %4s", "rank", "link", "layer", "votes", "voters", "flag");
    if (b->has_replay)
        fprintf(out, " %8s %4s %6s", "replay", "flag", "r.drop");
    if (b->has_truth)
        fprintf(out, "  %-6s %8s %8s", "truth", "fault", "congest");
    fputc('\n', out);
    for (size_t k = 0; k < b->n_links && k < top; k++) {
        const qr_row_blame_link *l = &b->links[order[k].link];
        if (!l->rank)
            break;
        fprintf(out, "%4u  %-14s %-9s %8.2f %6u %4s", l->rank, l->name, l->layer, l->votes,
                l->voters,
                l->noise     ? "n"
                : l->flagged ? "*"
                             : "");
        if (b->has_replay)
            fprintf(out, " %8.2f %4s %6llu", l->replay_votes,
                    l->replay_noise     ? "n"
                    : l->replay_flagged ? "*"
                                        : "",
                    (unsigned long long)l->replay_drops);
        if (b->has_truth)
            fprintf(out, "  %-6s %8llu %8llu", l->faulty ? "FAULTY" : "",
                    (unsigned long long)l->fault_drops, (unsigned long long)l->congestion_drops);
        fputc('\n', out);
    }
    free(order);
    fprintf(out, "\n%-7s %8s %8s %8s %9s %9s %9s %8s %7s\n", "method", "voters", "flagged",
            "faulty", "precision", "recall", "culprits", "detect@", "rank1@");
    for (size_t m = 0; m < b->n_summary; m++) {
        const qr_row_blame_summary *s = &b->summary[m];
        print_scores(out, b->has_truth, s->method, s->connections, s->flagged, s->faulty,
                     s->precision, s->recall, s->culprit_accuracy);
        if (b->has_truth)
            fprintf(out, " %8u %7u\n", s->detect_after, s->rank1_after);
        else
            fprintf(out, " %8s %7s\n", "-", "-");
    }
    print_comparators(b, out);
    print_epochs(b, out);
    print_icmp(b, out);
    print_noise(b, out);
    if (b->has_truth && b->summary[0].faulty == 0) {
        /* nothing was planted: say what was flagged and what congestion the truth saw there */
        uint64_t cong = 0, replay = 0;
        uint32_t flagged = 0;
        for (size_t i = 0; i < b->n_links; i++)
            if (b->links[i].flagged) {
                flagged++;
                cong += b->links[i].congestion_drops;
                replay += b->links[i].replay_drops;
            }
        fprintf(out,
                "no gray or blackhole fault was planted in this run: precision and recall do not "
                "apply.\n007 flagged %u link%s; the truth counts %llu congestion drops on %s",
                flagged, flagged == 1 ? "" : "s", (unsigned long long)cong,
                flagged == 1 ? "it" : "them");
        if (b->has_replay)
            fprintf(out, " (the replay placed %llu there)", (unsigned long long)replay);
        fprintf(out, ".\n");
        return;
    }
    if (b->has_truth)
        fprintf(out,
                "precision/recall: of the flagged links, against the links with a planted gray or "
                "blackhole fault;\nculprits: connections whose culprit is the link that really "
                "dropped most of their packets\n(of %u with a drop in truth); detect@/rank1@: "
                "voting connections after which every faulty\nlink stays flagged / a faulty link "
                "stays first (0: never)\n",
                b->summary[0].scored);
}
