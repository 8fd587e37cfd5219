/* qreplay: 007's votes tallied per epoch (blame_ctx.h): the voters of each epoch, by their first
 * loss, and what the flag rule flags on them alone, as 007's analysis agent reports each epoch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/scenario.h"
#include "qreplay/traceroute.h"

#include "blame_ctx.h"
#include "internal.h"

/* The first loss of direction d under method m (the voters' order). */
static int64_t first_of(const ctx *c, uint32_t d, int m)
{
    return m ? c->dirs[d].first_unexplained : c->dirs[d].first_loss;
}

/* One epoch's rows: the rule on voting[0..n) of method m. */
static int epoch_rows(ctx *c, qr_blame *out, int m, int64_t epoch, const uint32_t *voting, size_t n,
                      size_t *cap, size_t *link_cap, size_t *flag_cap)
{
    if (qri_grow((void **)&out->epochs, cap, out->n_epochs, sizeof *out->epochs, 16) ||
        qri_grow((void **)&c->epoch_flagged, flag_cap, out->n_epochs * c->n_cables,
                 c->n_cables ? c->n_cables : 1, 16 * (c->n_cables ? c->n_cables : 1)))
        return QR_ENOMEM;
    qri_rule_out r = qri_blame_rule_of(c, voting, n);
    qr_row_blame_epoch *row = &out->epochs[out->n_epochs];
    memset(row, 0, sizeof *row);
    snprintf(row->method, sizeof row->method, "%s", qr_blame_method_name(m));
    row->epoch = epoch;
    row->start_ns = epoch * out->epoch_ns;
    row->voters = (uint32_t)n;
    row->votes = r.total;
    row->flagged = r.flagged;
    row->noise = r.noise;
    row->precision = row->recall = NAN; /* the scorer's, with a truth */
    memcpy(c->epoch_flagged + out->n_epochs * c->n_cables, c->flagged, c->n_cables);
    out->n_epochs++;
    for (uint32_t i = 0; i < c->n_cables; i++) {
        if (c->votes[i] <= 0)
            continue;
        if (qri_grow((void **)&out->epoch_links, link_cap, out->n_epoch_links,
                     sizeof *out->epoch_links, 64))
            return QR_ENOMEM;
        qr_row_blame_epoch_link *l = &out->epoch_links[out->n_epoch_links++];
        memset(l, 0, sizeof *l);
        snprintf(l->method, sizeof l->method, "%s", row->method);
        l->epoch = epoch;
        snprintf(l->name, sizeof l->name, "%s", out->links[i].name);
        l->votes = c->votes[i];
        l->rank = c->rank[i];
        l->flagged = c->flagged[i];
        l->noise = c->noise[i];
    }
    return QR_OK;
}

int qri_blame_epochs(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out)
{
    int64_t e = out->opts.epoch_ns;
    if (e < 0)
        e = qr_scenario_config(qr_recording_scenario(rec))->traceroute.epoch_ns;
    out->epoch_ns = e > 0 ? e : 0;
    if (!out->epoch_ns)
        return QR_OK;
    size_t cap = 0, link_cap = 0, flag_cap = 0;
    for (int m = 0; (size_t)m < out->n_summary; m++) {
        /* the voters are in the order of their first loss: each epoch's are consecutive */
        const uint32_t *v = c->voting[m];
        for (size_t i = 0; i < c->n_voting[m];) {
            int64_t ep = qr_traceroute_epoch(out->epoch_ns, first_of(c, v[i], m));
            size_t j = i;
            while (j < c->n_voting[m] &&
                   qr_traceroute_epoch(out->epoch_ns, first_of(c, v[j], m)) == ep)
                j++;
            if (epoch_rows(c, out, m, ep, v + i, j - i, &cap, &link_cap, &flag_cap))
                return QR_ENOMEM;
            i = j;
        }
    }
    return QR_OK;
}
