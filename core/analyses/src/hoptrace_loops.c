/* qreplay: Everflow's loop debugger (hoptrace_loops.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"

#include "hoptrace_loops.h"
#include "internal.h"
#include "map.h"

#define SEQ 16 /* copies kept per looping packet, past the longest path: enough for its cycle */

typedef struct looper {
    uint64_t packet;
    uint32_t seq[SEQ];
    uint32_t n, copies;
    int64_t first_ns, last_ns;
} looper;

struct qri_loops {
    const qr_topology *t;
    uint32_t longest; /* switches on the longest loop-free path */
    looper *p;
    size_t n, cap;
    size_t last; /* the looper of the previous copy (copies of one packet come close together) */
    qri_map by_packet; /* packet id -> looper index + 1 */
};

int qri_loops_create(qri_loops **out, const qr_topology *t)
{
    qri_loops *l = calloc(1, sizeof *l);
    if (!l)
        return QR_ENOMEM;
    l->t = t;
    l->longest = qr_topology_max_hops(t);
    if (qri_map_init(&l->by_packet)) {
        free(l);
        return QR_ENOMEM;
    }
    *out = l;
    return QR_OK;
}

void qri_loops_destroy(qri_loops *l)
{
    if (!l)
        return;
    free(l->p);
    qri_map_free(&l->by_packet);
    free(l);
}

int qri_loops_copy(qri_loops *l, uint64_t packet, uint32_t hop, uint32_t sw, int64_t t_ns)
{
    if (hop <= l->longest)
        return QR_OK;
    looper *x = NULL;
    if (l->n && l->p[l->last].packet == packet)
        x = &l->p[l->last];
    void *at = x ? NULL : qri_map_get(&l->by_packet, packet, 0);
    if (at) {
        l->last = (size_t)(uintptr_t)at - 1;
        x = &l->p[l->last];
    }
    if (!x) {
        if (qri_grow((void **)&l->p, &l->cap, l->n, sizeof *l->p, 16) ||
            qri_map_put(&l->by_packet, packet, 0, (void *)(uintptr_t)(l->n + 1)))
            return QR_ENOMEM;
        x = &l->p[l->n];
        memset(x, 0, sizeof *x);
        x->packet = packet;
        x->first_ns = t_ns;
        l->last = l->n++;
    }
    if (x->n < SEQ)
        x->seq[x->n++] = sw;
    x->copies++;
    x->last_ns = t_ns;
    return QR_OK;
}

/* The cycle of a looper's switches: the least period p with seq[i] = seq[i + p] over the copies
 * kept, rotated to start at its smallest switch, into cyc (its length; 0: none shows). */
static uint32_t cycle_of(const looper *x, uint32_t *cyc)
{
    for (uint32_t p = 1; 2 * p <= x->n; p++) {
        uint32_t i = 0;
        while (i + p < x->n && x->seq[i] == x->seq[i + p])
            i++;
        if (i + p < x->n)
            continue;
        uint32_t lo = 0;
        for (uint32_t j = 1; j < p; j++)
            if (x->seq[j] < x->seq[lo])
                lo = j;
        for (uint32_t j = 0; j < p; j++)
            cyc[j] = x->seq[(lo + j) % p];
        return p;
    }
    return 0;
}

static int cmp_loop(const void *a, const void *b)
{
    const qr_row_hop_loop *x = a, *y = b;
    if (x->packets != y->packets)
        return x->packets > y->packets ? -1 : 1;
    return strcmp(x->cycle, y->cycle);
}

int qri_loops_rows(qri_loops *l, qr_row_hop_loop **rows, size_t *n, uint64_t *looping)
{
    *n = 0;
    *looping = l->n;
    *rows = calloc(l->n ? l->n : 1, sizeof **rows);
    if (!*rows)
        return QR_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        uint32_t cyc[SEQ], p = cycle_of(&l->p[i], cyc);
        qr_row_hop_loop key;
        memset(&key, 0, sizeof key);
        size_t len = 0;
        for (uint32_t j = 0; j <= p && p; j++) {
            int w = snprintf(key.cycle + len, sizeof key.cycle - len, "%ss%u", j ? ">" : "",
                             cyc[j % p]);
            if (w < 0 || (size_t)w >= sizeof key.cycle - len)
                break;
            len += (size_t)w;
        }
        if (!p)
            snprintf(key.cycle, sizeof key.cycle, "?");
        key.switches = p;
        qr_row_hop_loop *r = NULL;
        for (size_t j = 0; j < *n && !r; j++)
            if (!strcmp((*rows)[j].cycle, key.cycle))
                r = &(*rows)[j];
        if (!r) {
            r = &(*rows)[(*n)++];
            *r = key;
            r->first_ns = l->p[i].first_ns;
            r->example = l->p[i].packet;
        }
        r->packets++;
        r->copies += l->p[i].copies;
        if (l->p[i].first_ns < r->first_ns) {
            r->first_ns = l->p[i].first_ns;
            r->example = l->p[i].packet;
        }
        if (l->p[i].last_ns > r->last_ns)
            r->last_ns = l->p[i].last_ns;
    }
    qsort(*rows, *n, sizeof **rows, cmp_loop);
    return QR_OK;
}
