/* qreplay: 007's comparators as set cover: exact programs with GLPK, greedy MAX COVERAGE and Tomo
 * (cover.h). */
#include "qreplay/cover.h"

#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"

#include "internal.h"

const char *qr_cover_method_name(int method)
{
    static const char *const names[QR_COVER_METHODS] = {"binary", "integer", "maxcov", "tomo"};
    return method >= 0 && method < QR_COVER_METHODS ? names[method] : NULL;
}

void qr_cover_opts_default(qr_cover_opts *o)
{
    memset(o, 0, sizeof *o);
    o->hit_ratio = 0.5;
    o->time_limit_s = 60;
}

void qr_cover_result_free(qr_cover_result *r)
{
    if (!r)
        return;
    free(r->value);
    free(r->blamed);
    memset(r, 0, sizeof *r);
}

/* The problem checked, with each connection's links without repeats: rows[start[f]..start[f+1]).
 * Connections with no link are left out (*unexplainable). */
typedef struct rows {
    size_t n;        /* connections kept */
    size_t *start;   /* n + 1 */
    uint32_t *links; /* their links */
    uint32_t *count; /* their retransmissions */
} rows;

static void rows_free(rows *r)
{
    free(r->start);
    free(r->links);
    free(r->count);
}

static int make_rows(const qr_cover *p, rows *out, size_t *unexplainable, char *errbuf)
{
    memset(out, 0, sizeof *out);
    size_t total = p->n_flows ? p->start[p->n_flows] : 0;
    out->start = malloc((p->n_flows + 1) * sizeof *out->start);
    out->links = malloc((total ? total : 1) * sizeof *out->links);
    out->count = malloc((p->n_flows ? p->n_flows : 1) * sizeof *out->count);
    if (!out->start || !out->links || !out->count)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    size_t k = 0;
    *unexplainable = 0;
    out->start[0] = 0;
    for (size_t f = 0; f < p->n_flows; f++) {
        if (p->start[f + 1] < p->start[f] || p->start[f + 1] > total)
            return qri_err(errbuf, QR_EINVAL, "cover: connection %zu: its links are out of order",
                           f);
        uint32_t c = p->count ? p->count[f] : 1;
        if (c == 0)
            return qri_err(errbuf, QR_EINVAL, "cover: connection %zu failed 0 times", f);
        size_t first = k;
        for (size_t i = p->start[f]; i < p->start[f + 1]; i++) {
            uint32_t l = p->links[i];
            if (l >= p->n_links)
                return qri_err(errbuf, QR_EINVAL, "cover: connection %zu: link %u of %u", f, l,
                               p->n_links);
            int seen = 0;
            for (size_t j = first; j < k; j++)
                seen |= out->links[j] == l;
            if (!seen)
                out->links[k++] = l;
        }
        if (k == first) {
            (*unexplainable)++;
            continue;
        }
        out->count[out->n] = c;
        out->start[++out->n] = k;
    }
    return QR_OK;
}

/* The exact programs: binary (y_l in {0,1}, A y >= 1) or integer (x_l in 0..max r, A x >= r). */
static int solve_exact(const rows *rw, uint32_t n_links, int integer, const qr_cover_opts *o,
                       qr_cover_result *r, char *errbuf)
{
    /* columns: the links some connection crosses */
    uint32_t *col = calloc(n_links ? n_links : 1, sizeof *col), n_cols = 0;
    uint32_t *link_of = malloc((n_links ? n_links : 1) * sizeof *link_of);
    double *upper = calloc(n_links ? n_links : 1, sizeof *upper);
    size_t ne = rw->n ? rw->start[rw->n] : 0;
    int *ia = malloc((ne + 1) * sizeof *ia), *ja = malloc((ne + 1) * sizeof *ja);
    double *ar = malloc((ne + 1) * sizeof *ar);
    int rc = QR_OK;
    if (!col || !link_of || !upper || !ia || !ja || !ar) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t f = 0; f < rw->n; f++)
        for (size_t i = rw->start[f]; i < rw->start[f + 1]; i++) {
            uint32_t l = rw->links[i];
            if (!col[l]) {
                col[l] = ++n_cols;
                link_of[n_cols - 1] = l;
            }
            if (rw->count[f] > upper[l])
                upper[l] = rw->count[f];
        }
    if (rw->n == 0) {
        snprintf(r->status, sizeof r->status, "optimal (nothing to explain)");
        r->optimal = 1;
        goto done;
    }
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, (int)rw->n);
    glp_add_cols(lp, (int)n_cols);
    for (size_t f = 0; f < rw->n; f++)
        glp_set_row_bnds(lp, (int)f + 1, GLP_LO, integer ? (double)rw->count[f] : 1.0, 0.0);
    for (uint32_t j = 1; j <= n_cols; j++) {
        glp_set_obj_coef(lp, (int)j, 1.0);
        if (integer) {
            glp_set_col_kind(lp, (int)j, GLP_IV);
            glp_set_col_bnds(lp, (int)j, GLP_DB, 0.0, upper[link_of[j - 1]]);
        } else {
            glp_set_col_kind(lp, (int)j, GLP_BV);
        }
    }
    size_t k = 0;
    for (size_t f = 0; f < rw->n; f++)
        for (size_t i = rw->start[f]; i < rw->start[f + 1]; i++) {
            k++;
            ia[k] = (int)f + 1;
            ja[k] = (int)col[rw->links[i]];
            ar[k] = 1.0;
        }
    glp_load_matrix(lp, (int)ne, ia, ja, ar);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    if (o->time_limit_s > 0)
        parm.tm_lim = o->time_limit_s * 1000 > 2e9 ? 2000000000 : (int)(o->time_limit_s * 1000);
    int ret = glp_intopt(lp, &parm);
    int st = glp_mip_status(lp);
    if (st != GLP_OPT && st != GLP_FEAS) {
        rc = qri_err(errbuf, QR_EFORMAT,
                     "cover: GLPK found no solution of the %s program (glp_intopt %d, status %d)",
                     integer ? "integer" : "binary", ret, st);
    } else {
        r->optimal = st == GLP_OPT;
        snprintf(r->status, sizeof r->status, "%s",
                 r->optimal          ? "optimal"
                 : ret == GLP_ETMLIM ? "time limit: the best solution found, not proven"
                                     : "stopped: the best solution found, not proven");
        for (uint32_t j = 1; j <= n_cols; j++) {
            double v = round(glp_mip_col_val(lp, (int)j));
            r->value[link_of[j - 1]] = v;
        }
    }
    glp_delete_prob(lp);
done:
    free(col);
    free(link_of);
    free(upper);
    free(ia);
    free(ja);
    free(ar);
    return rc;
}

/* The greedy cover: take the candidate link crossed by most connections not yet explained (the
 * lowest index on ties) until no candidate explains another. candidate NULL: every link. */
static int greedy(const rows *rw, uint32_t n_links, const uint8_t *candidate, qr_cover_result *r,
                  char *errbuf)
{
    uint8_t *done = calloc(rw->n ? rw->n : 1, 1);
    uint32_t *gain = malloc((n_links ? n_links : 1) * sizeof *gain);
    if (!done || !gain) {
        free(done);
        free(gain);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (uint32_t step = 1;; step++) {
        memset(gain, 0, n_links * sizeof *gain);
        for (size_t f = 0; f < rw->n; f++)
            for (size_t i = rw->start[f]; !done[f] && i < rw->start[f + 1]; i++)
                gain[rw->links[i]]++;
        uint32_t best = UINT32_MAX;
        for (uint32_t l = 0; l < n_links; l++)
            if (gain[l] && (!candidate || candidate[l]) &&
                (best == UINT32_MAX || gain[l] > gain[best]))
                best = l;
        if (best == UINT32_MAX)
            break;
        r->value[best] = step;
        for (size_t f = 0; f < rw->n; f++)
            for (size_t i = rw->start[f]; !done[f] && i < rw->start[f + 1]; i++)
                done[f] = rw->links[i] == best;
    }
    snprintf(r->status, sizeof r->status, "greedy");
    free(done);
    free(gain);
    return QR_OK;
}

/* Tomo's candidates: links whose hit ratio, failed connections through them against all, reaches
 * the threshold. */
static int tomo(const rows *rw, const qr_cover *p, const qr_cover_opts *o, qr_cover_result *r,
                char *errbuf)
{
    uint32_t n = p->n_links;
    double *failed = calloc(n ? n : 1, sizeof *failed);
    uint8_t *cand = calloc(n ? n : 1, 1);
    if (!failed || !cand) {
        free(failed);
        free(cand);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (size_t f = 0; f < rw->n; f++)
        for (size_t i = rw->start[f]; i < rw->start[f + 1]; i++)
            failed[rw->links[i]] += 1;
    double top = 0;
    for (uint32_t l = 0; l < n; l++) {
        double all = failed[l] + (p->good ? p->good[l] : 0);
        cand[l] = failed[l] > 0 && failed[l] >= o->hit_ratio * all - 1e-12;
        if (failed[l] > 0 && failed[l] / all > top)
            top = failed[l] / all;
    }
    int rc = greedy(rw, n, cand, r, errbuf);
    if (!rc)
        snprintf(r->status, sizeof r->status,
                 "greedy over links with hit ratio >= %.3g (the highest: %.3g)", o->hit_ratio, top);
    free(failed);
    free(cand);
    return rc;
}

int qr_cover_solve(const qr_cover *p, int method, const qr_cover_opts *o, qr_cover_result *r,
                   char *errbuf)
{
    memset(r, 0, sizeof *r);
    r->method = method;
    qr_cover_opts def;
    if (!o) {
        qr_cover_opts_default(&def);
        o = &def;
    }
    if (!qr_cover_method_name(method))
        return qri_err(errbuf, QR_EINVAL, "cover: no method %d", method);
    if (!(o->hit_ratio > 0 && o->hit_ratio <= 1))
        return qri_err(errbuf, QR_EINVAL, "cover: Tomo's hit ratio must lie in (0, 1]");
    size_t n = p->n_links ? p->n_links : 1;
    r->value = calloc(n, sizeof *r->value);
    r->blamed = calloc(n, 1);
    if (!r->value || !r->blamed)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    rows rw;
    int rc = make_rows(p, &rw, &r->unexplainable, errbuf);
    if (!rc) {
        if (method == QR_COVER_BINARY || method == QR_COVER_INTEGER)
            rc = solve_exact(&rw, p->n_links, method == QR_COVER_INTEGER, o, r, errbuf);
        else if (method == QR_COVER_MAXCOV)
            rc = greedy(&rw, p->n_links, NULL, r, errbuf);
        else
            rc = tomo(&rw, p, o, r, errbuf);
    }
    for (uint32_t l = 0; !rc && l < p->n_links; l++) {
        r->blamed[l] = r->value[l] > 0;
        r->n_blamed += r->blamed[l];
        r->objective += method == QR_COVER_INTEGER ? r->value[l] : r->blamed[l];
    }
    for (size_t f = 0; !rc && f < rw.n; f++) {
        int hit = 0;
        for (size_t i = rw.start[f]; i < rw.start[f + 1]; i++)
            hit |= r->blamed[rw.links[i]];
        r->explained += (size_t)hit;
    }
    rows_free(&rw);
    return rc;
}
