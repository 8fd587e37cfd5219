/* qreplay: 007's flag rule, Algorithm 1 (blame_ctx.h): votes, ranks, flags and noise from a set of
 * voting directions, with the voters' own or ECMP's adjustment. */
#include <string.h>

#include "blame_ctx.h"
#include "internal.h"

const char *qr_blame_method_name(int method)
{
    return method == QR_BLAME_REPLAY ? "replay" : "007";
}

/* Cables by votes, most first (ties by cable index). */
static int cmp_rank(const void *a, const void *b, void *votes_)
{
    const double *votes = votes_;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (votes[x] != votes[y])
        return votes[x] > votes[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Algorithm 1's adjustment for voter d through the flagged cable `best`: its own votes, or (the
 * paper's, with ECMP) the votes its hosts' flows through `best` would give each cable, spread
 * evenly over their shortest paths that cross it. */
static void take_votes(ctx *c, const dir_info *d, uint32_t best, double *left)
{
    uint32_t through = 0;
    for (uint32_t p = 0; c->adjust_ecmp && p < d->ecmp_n; p++) {
        const ecmp_path *e = &c->ecmp[d->ecmp_first + p];
        for (uint32_t h = 0; h < e->n; h++)
            through += e->cables[h] == best;
    }
    if (!through) { /* no shortest path of its hosts crosses it (or no ECMP): its own votes */
        for (uint32_t h = 0; h < d->hops; h++)
            left[d->cables[h]] -= 1.0 / d->len;
        return;
    }
    for (uint32_t p = 0; p < d->ecmp_n; p++) {
        const ecmp_path *e = &c->ecmp[d->ecmp_first + p];
        int crosses = 0;
        for (uint32_t h = 0; h < e->n; h++)
            crosses |= e->cables[h] == best;
        for (uint32_t h = 0; crosses && h < e->n; h++)
            left[e->cables[h]] -= 1.0 / d->len / through;
    }
}

qri_rule_out qri_blame_rule_of(qr_blame_ctx *c, const uint32_t *voting, size_t n)
{
    qri_rule_out r = {0};
    uint32_t nc = c->n_cables;
    memset(c->votes, 0, nc * sizeof *c->votes);
    memset(c->voters, 0, nc * sizeof *c->voters);
    memset(c->flagged, 0, nc);
    memset(c->noise, 0, nc);
    memset(c->removed, 0, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        const dir_info *d = &c->dirs[voting[i]];
        for (uint32_t h = 0; h < d->hops; h++) {
            c->votes[d->cables[h]] += 1.0 / d->len;
            c->voters[d->cables[h]]++;
        }
        r.total += d->len ? (double)d->hops / d->len : 0.0;
    }
    for (uint32_t i = 0; i < nc; i++)
        c->order[i] = i;
    qri_sort_buf(c->order, nc, sizeof *c->order, cmp_rank, c->votes, c->sort_tmp);
    for (uint32_t i = 0; i < nc; i++)
        c->rank[c->order[i]] = c->votes[c->order[i]] > 0 ? i + 1 : 0;
    /* Algorithm 1: flag the top link while it holds threshold of all votes; remove its voters */
    double *left = c->left;
    memcpy(left, c->votes, nc * sizeof *left);
    for (;;) {
        uint32_t best = NONE;
        for (uint32_t i = 0; i < nc; i++)
            if (!c->flagged[i] && left[i] > 0 && (best == NONE || left[i] > left[best]))
                best = i;
        if (best == NONE || left[best] < c->threshold * r.total - 1e-12)
            break;
        c->flagged[best] = 1;
        r.flagged++;
        uint64_t evidence = 0;
        for (size_t i = 0; i < n; i++) {
            const dir_info *d = &c->dirs[voting[i]];
            int crosses = 0;
            for (uint32_t h = 0; h < d->hops; h++)
                crosses |= d->cables[h] == best;
            if (!crosses || c->removed[i])
                continue;
            c->removed[i] = 1;
            evidence += d->losses;
            take_votes(c, d, best, left);
        }
        /* flagged on one lost packet or none: noise */
        c->noise[best] = evidence <= 1;
        r.noise += c->noise[best];
    }
    return r;
}
