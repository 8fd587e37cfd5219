/* 007's comparators (cover.h) against brute force: on random small instances the exact programs'
 * optimum equals the one found by enumerating every choice of links, every solution explains every
 * connection it can, and the greedy covers are covers no smaller than the optimum. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/cover.h"
#include "qreplay/error.h"
#include "splitmix.h"

#define MAX_LINKS 9
#define MAX_FLOWS 14

typedef struct inst {
    uint32_t n_links;
    size_t n_flows;
    size_t start[MAX_FLOWS + 1];
    uint32_t links[MAX_FLOWS * 4];
    uint32_t count[MAX_FLOWS];
    qr_cover p;
} inst;

/* A random instance: paths of 1-4 links (some repeated within a path), counts 1-3. */
static void make(inst *x, uint64_t *rng)
{
    memset(x, 0, sizeof *x);
    x->n_links = 2 + (uint32_t)splitmix_below(rng, MAX_LINKS - 1);
    x->n_flows = 1 + (size_t)splitmix_below(rng, MAX_FLOWS);
    size_t k = 0;
    for (size_t f = 0; f < x->n_flows; f++) {
        size_t len = 1 + (size_t)splitmix_below(rng, 4);
        for (size_t i = 0; i < len; i++)
            x->links[k++] = (uint32_t)splitmix_below(rng, x->n_links);
        x->start[f + 1] = k;
        x->count[f] = 1 + (uint32_t)splitmix_below(rng, 3);
    }
    x->p = (qr_cover){x->n_links, x->n_flows, x->start, x->links, x->count, NULL};
}

static int crosses(const inst *x, size_t f, uint32_t l)
{
    for (size_t i = x->start[f]; i < x->start[f + 1]; i++)
        if (x->links[i] == l)
            return 1;
    return 0;
}

/* The fewest links that every connection crosses one of, by enumeration. */
static uint32_t brute_binary(const inst *x)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t set = 0; set < (1u << x->n_links); set++) {
        int ok = 1;
        for (size_t f = 0; ok && f < x->n_flows; f++) {
            int hit = 0;
            for (uint32_t l = 0; l < x->n_links; l++)
                hit |= (set >> l & 1) && crosses(x, f, l);
            ok = hit;
        }
        if (ok && (uint32_t)__builtin_popcount(set) < best)
            best = (uint32_t)__builtin_popcount(set);
    }
    return best;
}

/* The fewest drops explaining every connection's count (each link 0..3), by enumeration. */
static uint32_t brute_integer(const inst *x, uint32_t *v, uint32_t l, uint32_t sum, uint32_t best)
{
    if (sum >= best)
        return best;
    if (l == x->n_links) {
        for (size_t f = 0; f < x->n_flows; f++) {
            uint32_t got = 0;
            for (uint32_t m = 0; m < x->n_links; m++)
                got += crosses(x, f, m) ? v[m] : 0;
            if (got < x->count[f])
                return best;
        }
        return sum;
    }
    for (v[l] = 0; v[l] <= 3; v[l]++)
        best = brute_integer(x, v, l + 1, sum + v[l], best);
    v[l] = 0;
    return best;
}

static void check_explains_all(const inst *x, const qr_cover_result *r, int integer)
{
    cr_assert_eq(r->unexplainable, 0);
    cr_assert_eq(r->explained, x->n_flows);
    for (size_t f = 0; f < x->n_flows; f++) {
        double got = 0;
        for (uint32_t l = 0; l < x->n_links; l++)
            got += crosses(x, f, l) ? (integer ? r->value[l] : r->blamed[l]) : 0;
        cr_assert_geq(got, integer ? x->count[f] : 1, "connection %zu", f);
    }
}

Test(cover, the_exact_programs_find_the_optimum_enumeration_finds)
{
    uint64_t rng = 7;
    char err[QR_ERRBUF_SIZE];
    for (int trial = 0; trial < 300; trial++) {
        inst x;
        make(&x, &rng);
        qr_cover_result r;
        cr_assert_eq(qr_cover_solve(&x.p, QR_COVER_BINARY, NULL, &r, err), QR_OK, "%s", err);
        cr_assert(r.optimal, "%s", r.status);
        cr_assert_eq((uint32_t)r.objective, brute_binary(&x), "trial %d", trial);
        cr_assert_eq(r.n_blamed, (uint32_t)r.objective);
        check_explains_all(&x, &r, 0);
        qr_cover_result_free(&r);
        cr_assert_eq(qr_cover_solve(&x.p, QR_COVER_INTEGER, NULL, &r, err), QR_OK, "%s", err);
        cr_assert(r.optimal, "%s", r.status);
        uint32_t v[MAX_LINKS] = {0};
        cr_assert_eq((uint32_t)r.objective, brute_integer(&x, v, 0, 0, UINT32_MAX), "trial %d",
                     trial);
        check_explains_all(&x, &r, 1);
        qr_cover_result_free(&r);
    }
}

Test(cover, greedy_covers_are_covers_and_never_beat_the_optimum)
{
    uint64_t rng = 11;
    char err[QR_ERRBUF_SIZE];
    for (int trial = 0; trial < 300; trial++) {
        inst x;
        make(&x, &rng);
        qr_cover_result r, t;
        cr_assert_eq(qr_cover_solve(&x.p, QR_COVER_MAXCOV, NULL, &r, err), QR_OK, "%s", err);
        check_explains_all(&x, &r, 0);
        cr_assert_geq((uint32_t)r.objective, brute_binary(&x));
        /* the first link taken is one crossed by the most connections */
        uint32_t first = UINT32_MAX, most = 0;
        for (uint32_t l = 0; l < x.n_links; l++) {
            uint32_t n = 0;
            for (size_t f = 0; f < x.n_flows; f++)
                n += (uint32_t)crosses(&x, f, l);
            most = n > most ? n : most;
            if (r.value[l] == 1)
                first = n;
        }
        cr_assert_eq(first, most);
        /* with no good connection known every link has hit ratio 1: Tomo is MAX COVERAGE */
        cr_assert_eq(qr_cover_solve(&x.p, QR_COVER_TOMO, NULL, &t, err), QR_OK, "%s", err);
        cr_assert_eq(memcmp(t.value, r.value, x.n_links * sizeof *t.value), 0);
        qr_cover_result_free(&r);
        qr_cover_result_free(&t);
    }
}

Test(cover, tomo_leaves_out_links_good_connections_cross)
{
    /* three failed connections share link 0 with link 1 or 2; good connections cross link 0 a
     * hundred times: MAX COVERAGE blames link 0, Tomo links 1 and 2 */
    size_t start[] = {0, 2, 4, 6};
    uint32_t links[] = {0, 1, 0, 1, 0, 2};
    double good[] = {100, 0, 0};
    qr_cover p = {3, 3, start, links, NULL, good};
    char err[QR_ERRBUF_SIZE];
    qr_cover_result r;
    cr_assert_eq(qr_cover_solve(&p, QR_COVER_MAXCOV, NULL, &r, err), QR_OK);
    cr_assert_eq(r.n_blamed, 1);
    cr_assert(r.blamed[0]);
    qr_cover_result_free(&r);
    cr_assert_eq(qr_cover_solve(&p, QR_COVER_TOMO, NULL, &r, err), QR_OK);
    cr_assert_eq(r.n_blamed, 2);
    cr_assert(!r.blamed[0] && r.blamed[1] && r.blamed[2]);
    cr_assert_eq(r.explained, 3);
    qr_cover_result_free(&r);
}

Test(cover, connections_without_a_known_link_are_counted_not_explained)
{
    size_t start[] = {0, 0, 1};
    uint32_t links[] = {1};
    qr_cover p = {2, 2, start, links, NULL, NULL};
    char err[QR_ERRBUF_SIZE];
    for (int m = 0; m < QR_COVER_METHODS; m++) {
        qr_cover_result r;
        cr_assert_eq(qr_cover_solve(&p, m, NULL, &r, err), QR_OK, "%s", err);
        cr_assert_eq(r.unexplainable, 1, "%s", qr_cover_method_name(m));
        cr_assert_eq(r.explained, 1);
        cr_assert(r.blamed[1] && !r.blamed[0]);
        qr_cover_result_free(&r);
    }
}

Test(cover, bad_problems_are_refused)
{
    char err[QR_ERRBUF_SIZE];
    qr_cover_result r;
    size_t start[] = {0, 1};
    uint32_t out_of_range[] = {5}, zero[] = {0};
    qr_cover p = {2, 1, start, out_of_range, NULL, NULL};
    cr_assert_eq(qr_cover_solve(&p, QR_COVER_BINARY, NULL, &r, err), QR_EINVAL);
    cr_assert(strstr(err, "link 5 of 2"), "%s", err);
    qr_cover_result_free(&r);
    uint32_t one[] = {0};
    qr_cover q = {2, 1, start, one, zero, NULL};
    cr_assert_eq(qr_cover_solve(&q, QR_COVER_INTEGER, NULL, &r, err), QR_EINVAL);
    cr_assert(strstr(err, "0 times"), "%s", err);
    qr_cover_result_free(&r);
    cr_assert_eq(qr_cover_solve(&q, 9, NULL, &r, err), QR_EINVAL);
    qr_cover_result_free(&r);
}
