/* qreplay: Pingmesh's black-hole rule, ToR and podset (pingmesh_analyze.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/pingmesh_analyze.h"
#include "qreplay/topology.h"

#include "internal.h"

#define BH_MIN_LOST 3  /* a symptom pair lost at least this many probes */
#define BH_MIN_PAIRS 2 /* a place is flagged on at least this many symptom pairs */

typedef struct bh {
    const qr_row_pm_pair *pairs;
    size_t n_pairs;
    uint32_t racks, pods;
    uint8_t *left;        /* symptom pairs not yet explained */
    uint32_t *rack_of;    /* host -> edge switch */
    uint8_t *probed;      /* host appears in a probed pair */
    uint8_t *mark;        /* scratch: by host or by rack */
    qr_row_pm_bhole *row; /* racks then pods */
    qr_row_pm_bhole *cur; /* this round's numbers */
    uint8_t *seen;        /* row tested once */
} bh;

/* A candidate's row: kind, name "FMT index", and its counts. */
static void fill(qr_row_pm_bhole *cand, const char *kind, const char *fmt, uint32_t index,
                 uint32_t members, uint32_t sym, uint32_t cnt)
{
    memset(cand, 0, sizeof *cand);
    snprintf(cand->kind, sizeof cand->kind, "%s", kind);
    snprintf(cand->name, sizeof cand->name, fmt, index);
    cand->index = index;
    cand->members = members;
    cand->symptomatic = sym;
    cand->score = members ? (double)sym / members : NAN;
    cand->pairs = cnt;
}

/* A ToR's (rack r's) numbers now: into *cand. */
static void tor(bh *b, uint32_t r, qr_row_pm_bhole *cand, uint32_t hosts)
{
    memset(b->mark, 0, hosts);
    uint32_t members = 0, sym = 0, cnt = 0;
    for (size_t q = 0; q < b->n_pairs; q++) {
        const qr_row_pm_pair *p = &b->pairs[q];
        if (!b->left[q] || (p->src_rack != r && p->dst_rack != r))
            continue;
        cnt++;
        if (p->src_rack == r)
            b->mark[p->src] = 1;
        if (p->dst_rack == r)
            b->mark[p->dst] = 1;
    }
    for (uint32_t h = 0; h < hosts; h++)
        if (b->rack_of[h] == r && b->probed[h]) {
            members++;
            sym += b->mark[h];
        }
    fill(cand, "tor", "rack s%u", r, members, sym, cnt);
}

/* A podset's (pod p's) numbers now: its pairs are those between racks with an end in p. */
static void podset(bh *b, const qr_topology *t, uint32_t p, qr_row_pm_bhole *cand)
{
    memset(b->mark, 0, b->racks);
    uint32_t members = 0, sym = 0, cnt = 0;
    for (size_t q = 0; q < b->n_pairs; q++) {
        const qr_row_pm_pair *x = &b->pairs[q];
        if (!b->left[q] || x->src_rack == x->dst_rack || (x->src_pod != p && x->dst_pod != p))
            continue;
        cnt++;
        if (x->src_pod == p)
            b->mark[x->src_rack] = 1;
        if (x->dst_pod == p)
            b->mark[x->dst_rack] = 1;
    }
    for (uint32_t r = 0; r < b->racks; r++)
        if (qr_pingmesh_pod_of_rack(t, r) == p) {
            members++;
            sym += b->mark[r];
        }
    fill(cand, "podset", "pod %u", p, members, sym, cnt);
}

/* Does candidate c (row i) explain pair q? */
static int explains(const bh *b, const qr_row_pm_bhole *c, size_t q)
{
    const qr_row_pm_pair *p = &b->pairs[q];
    if (!strcmp(c->kind, "tor"))
        return p->src_rack == c->index || p->dst_rack == c->index;
    return p->src_rack != p->dst_rack && (p->src_pod == c->index || p->dst_pod == c->index);
}

static int cmp_bhole(const void *a, const void *b)
{
    const qr_row_pm_bhole *x = a, *y = b;
    if ((x->flagged == 0) != (y->flagged == 0))
        return x->flagged ? -1 : 1;
    if (x->flagged)
        return x->flagged < y->flagged ? -1 : 1;
    if (x->pairs != y->pairs)
        return x->pairs > y->pairs ? -1 : 1;
    int k = strcmp(x->kind, y->kind);
    return k ? -k : (x->index > y->index) - (x->index < y->index);
}

/* One round: every candidate's numbers into b->cur (and into its row the first time it touches a
 * symptom pair); the eligible one touching the most unexplained symptom pairs, a ToR before its
 * own podset; *tied set when another ToR (or podset) touches as many. Returns its row, or
 * (size_t)-1. */
static size_t best_candidate(bh *b, const qr_topology *t, const qr_pingmesh_opts *o, uint32_t hosts,
                             int *tied)
{
    size_t n_rows = (size_t)b->racks + (b->pods > 1 ? b->pods : 0), best = (size_t)-1;
    *tied = 0;
    for (size_t i = 0; i < n_rows; i++) {
        qr_row_pm_bhole *c = &b->cur[i];
        int is_tor = i < b->racks;
        if (b->row[i].flagged)
            continue;
        if (is_tor)
            tor(b, (uint32_t)i, c, hosts);
        else
            podset(b, t, (uint32_t)(i - b->racks), c);
        if (!b->seen[i] && c->pairs) {
            b->row[i] = *c;
            b->seen[i] = 1;
        }
        double need = is_tor ? o->bh_tor : o->bh_pod;
        if (c->pairs < BH_MIN_PAIRS || !(c->score >= need) || (!is_tor && c->members < 2))
            continue;
        if (best != (size_t)-1 && c->pairs == b->cur[best].pairs && (best < b->racks) == is_tor)
            *tied = 1;
        else if (best == (size_t)-1 || c->pairs > b->cur[best].pairs) {
            best = i;
            *tied = 0;
        }
    }
    return best;
}

int qr_pingmesh_blackholes(const qr_row_pm_pair *pairs, size_t n_pairs, const qr_topology *t,
                           const qr_pingmesh_opts *o, qr_row_pm_bhole **rows, size_t *n,
                           uint32_t *symptom_pairs, int *tied, char *errbuf)
{
    *rows = NULL;
    *n = 0;
    *symptom_pairs = 0;
    *tied = 0;
    uint32_t hosts = qr_topology_hosts(t);
    bh b;
    memset(&b, 0, sizeof b);
    b.pairs = pairs;
    b.n_pairs = n_pairs;
    b.racks = qr_pingmesh_racks(t);
    b.pods = qr_pingmesh_pods(t);
    size_t n_rows = (size_t)b.racks + (b.pods > 1 ? b.pods : 0);
    size_t scratch = hosts > b.racks ? hosts : b.racks;
    b.left = calloc(n_pairs ? n_pairs : 1, 1);
    b.rack_of = calloc(hosts ? hosts : 1, sizeof *b.rack_of);
    b.probed = calloc(hosts ? hosts : 1, 1);
    b.mark = calloc(scratch ? scratch : 1, 1);
    b.row = calloc(n_rows ? n_rows : 1, sizeof *b.row);
    b.seen = calloc(n_rows ? n_rows : 1, 1);
    b.cur = calloc(n_rows ? n_rows : 1, sizeof *b.cur);
    int rc = QR_OK;
    if (!b.left || !b.rack_of || !b.probed || !b.mark || !b.row || !b.seen || !b.cur) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    for (uint32_t h = 0; h < hosts; h++) {
        uint32_t sw, port;
        qr_topology_host_attach(t, h, &sw, &port);
        b.rack_of[h] = sw;
    }
    for (size_t q = 0; q < n_pairs; q++) {
        const qr_row_pm_pair *p = &pairs[q];
        if (!p->probes || p->src >= hosts || p->dst >= hosts)
            continue;
        b.probed[p->src] = b.probed[p->dst] = 1;
        b.left[q] = p->lost >= BH_MIN_LOST && (double)p->lost >= o->bh_pair * (double)p->probes;
        *symptom_pairs += b.left[q];
    }
    for (uint32_t order = 1;; order++) {
        size_t i = best_candidate(&b, t, o, hosts, tied);
        if (*tied || i == (size_t)-1)
            break;
        b.row[i] = b.cur[i];
        b.row[i].flagged = order;
        for (size_t q = 0; q < n_pairs; q++)
            if (b.left[q] && explains(&b, &b.row[i], q))
                b.left[q] = 0;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (b.seen[i])
            b.row[kept++] = b.row[i];
    qsort(b.row, kept, sizeof *b.row, cmp_bhole);
    *rows = b.row;
    *n = kept;
    b.row = NULL;
done:
    free(b.left);
    free(b.rack_of);
    free(b.probed);
    free(b.mark);
    free(b.row);
    free(b.seen);
    free(b.cur);
    return rc;
}
