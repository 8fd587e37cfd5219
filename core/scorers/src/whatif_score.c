/* The what-if graded: predictions against their truths, relative errors and rank agreement
 * (whatif_score.h). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/metrics.h"
#include "qreplay/queuelog.h"
#include "qreplay/switchport.h"
#include "qreplay/topology.h"
#include "qreplay/whatif.h"
#include "qreplay/whatif_score.h"

double qr_whatif_rel(double pred, double truth)
{
    if (truth == 0)
        return pred == 0 ? 0 : 1;
    return (pred - truth) / truth;
}

double qr_kendall_tau(const double *a, const double *b, size_t n)
{
    if (n < 2)
        return 0;
    double conc = 0, disc = 0, ta = 0, tb = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double da = a[i] - a[j], db = b[i] - b[j];
            if (da == 0 && db == 0)
                continue;
            if (da == 0)
                ta++;
            else if (db == 0)
                tb++;
            else if ((da > 0) == (db > 0))
                conc++;
            else
                disc++;
        }
    double denom = sqrt((conc + disc + ta) * (conc + disc + tb));
    return denom > 0 ? (conc - disc) / denom : 1;
}

static const qr_whatif_quantile_row *delay_quantiles(const qr_whatif_result *r)
{
    for (size_t i = 0; i + QR_WHATIF_QUANTILES <= r->n_quantiles; i++)
        if (r->quantiles[i].layer == QR_WHATIF_LAYERS && r->quantiles[i].p == 0)
            return &r->quantiles[i];
    return NULL;
}

/* The CDF at x on a quantile grid: the largest p whose quantile is at most x (0 if none). */
static double cdf_at(const qr_whatif_quantile_row *q, int64_t x)
{
    double f = 0;
    for (int j = 0; j < QR_WHATIF_QUANTILES && q[j].delay_ns <= x; j++)
        f = q[j].p;
    return f;
}

static size_t argmin(const double *v, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] < v[best])
            best = i;
    return best;
}

int qr_whatif_errors(const qr_whatif_result *pred, const qr_whatif_result *truth, size_t n,
                     qr_whatif_error_row *rows, qr_whatif_agreement *agree)
{
    double *v = calloc(4 * (n ? n : 1), sizeof *v);
    if (!v)
        return QR_ENOMEM;
    double *pd = v, *td = v + n, *pp = v + 2 * n, *tp = v + 3 * n;
    for (size_t i = 0; i < n; i++) {
        const qr_whatif_row *p = &pred[i].row, *t = &truth[i].row;
        qr_whatif_error_row *e = &rows[i];
        memset(e, 0, sizeof *e);
        e->point = p->point;
        e->drops_pred = (int64_t)p->drops;
        e->drops_true = (int64_t)t->drops;
        e->drops_rel = qr_whatif_rel((double)p->drops, (double)t->drops);
        for (int l = 0; l < QR_WHATIF_LAYERS; l++)
            e->layer_drops_rel[l] =
                qr_whatif_rel((double)p->layer_drops[l], (double)t->layer_drops[l]);
        for (int l = 0; l <= QR_WHATIF_LAYERS; l++)
            e->q_p99_rel[l] = qr_whatif_rel((double)p->q_p99_bytes[l], (double)t->q_p99_bytes[l]);
        e->delay_p50_rel = qr_whatif_rel((double)p->delay_p50_ns, (double)t->delay_p50_ns);
        e->delay_p99_rel = qr_whatif_rel((double)p->delay_p99_ns, (double)t->delay_p99_ns);
        const qr_whatif_quantile_row *qp = delay_quantiles(&pred[i]),
                                     *qt = delay_quantiles(&truth[i]);
        if (qp && qt) {
            /* W1 = the integral over p of |Q_pred(p) - Q_true(p)|, by the trapezoid rule on the
             * quantile grid; KS: the largest CDF gap, from the quantiles of each at the other's */
            long double w = 0;
            for (int k = 1; k < QR_WHATIF_QUANTILES; k++) {
                double d0 = fabs((double)(qp[k - 1].delay_ns - qt[k - 1].delay_ns));
                double d1 = fabs((double)(qp[k].delay_ns - qt[k].delay_ns));
                w += (d0 + d1) / 2 / (QR_WHATIF_QUANTILES - 1);
            }
            e->delay_w1_ns = llroundl(w);
            double ks = 0;
            for (int k = 0; k < 2 * QR_WHATIF_QUANTILES; k++) {
                int64_t x =
                    k < QR_WHATIF_QUANTILES ? qp[k].delay_ns : qt[k - QR_WHATIF_QUANTILES].delay_ns;
                double gap = fabs(cdf_at(qp, x) - cdf_at(qt, x));
                if (gap > ks)
                    ks = gap;
            }
            e->delay_ks = ks;
        }
        pd[i] = (double)p->drops;
        td[i] = (double)t->drops;
        pp[i] = (double)p->delay_p99_ns;
        tp[i] = (double)t->delay_p99_ns;
    }
    memset(agree, 0, sizeof *agree);
    if (n) {
        agree->tau_drops = qr_kendall_tau(pd, td, n);
        agree->tau_delay_p99 = qr_kendall_tau(pp, tp, n);
        size_t a = argmin(pd, n), b = argmin(td, n), c = argmin(pp, n), d = argmin(tp, n);
        agree->best_drops_pred = pred[a].row.point;
        agree->best_drops_true = truth[b].row.point;
        agree->best_delay_pred = pred[c].row.point;
        agree->best_delay_true = truth[d].row.point;
        /* the same, or tied in truth with the truly best */
        agree->best_drops_same = td[a] == td[b];
        agree->best_delay_same = tp[c] == tp[d];
    }
    free(v);
    return QR_OK;
}

/* ---- the printed table ---- */
