/* Causal paths: paths.h5 (paths.h, schema_paths.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "paths_internal.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"
#include "qreplay/schema_paths.h"
#include "qreplay/version.h"

static int write_attrs(qr_h5 *f, const qr_paths *p, const qr_paths_write_info *in, char *errbuf)
{
    int rc;
    const qr_paths_stats *st = &p->st;
    const struct {
        const char *name;
        uint64_t v;
    } counts[] = {{"messages", st->messages},
                  {"roots", st->roots},
                  {"instances", st->instances},
                  {"untraced_send", st->untraced_send},
                  {"untraced_recv", st->untraced_recv},
                  {"spontaneous", st->spontaneous},
                  {"trees_cut", st->trees_cut},
                  {"budget_spent", st->budget_spent},
                  {"clock_pairs", st->clock_pairs},
                  {"k", p->o.k},
                  {"max_candidates", p->o.max_candidates}};
    QRI_TRY(qr_h5_attr_str(f, "/", "kind", "qreplay paths", errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "code_version", qr_version(), errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "method", in->method, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "source", in->source, errbuf));
    QRI_TRY(qr_h5_attr_i64(f, "/", "cutoff_ns", p->o.cutoff_ns, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "y", p->o.y, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "p_lo", p->o.p_lo, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "p_hi", p->o.p_hi, errbuf));
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        QRI_TRY(qr_h5_attr_u64(f, "/", counts[i].name, counts[i].v, errbuf));
    if (in->analysis_s >= 0)
        QRI_TRY(qr_h5_attr_f64(f, "/", "analysis_s", in->analysis_s, errbuf));
    for (size_t i = 0; i < in->n_scores; i++) {
        char name[96];
        snprintf(name, sizeof name, "score.%s", in->score_names[i]);
        QRI_TRY(qr_h5_attr_f64(f, "/", name, in->score_values[i], errbuf));
    }
    return QR_OK;
fail:
    return rc;
}

static int write_messages(qr_h5 *f, const qr_paths *p, const qr_paths_write_info *in, char *errbuf)
{
    qr_row_paths_msg *rows = malloc((p->n ? p->n : 1) * sizeof *rows);
    if (!rows)
        return qri_err(errbuf, QR_ENOMEM, "paths.h5: out of memory");
    for (size_t i = 0; i < p->n; i++) {
        const qr_msg *m = &p->m[i];
        uint64_t t = in->true_parent ? in->true_parent[i] : QR_PATHS_ROOT;
        rows[i] = (qr_row_paths_msg){
            i,          m->src,
            m->dst,     m->conn,
            m->send_ns, m->recv_ns,
            m->bytes,   p->parent[i] == QR_PATHS_ROOT ? -1 : (int64_t)p->parent[i],
            p->prob[i], !in->true_parent ? -2 : t == QR_PATHS_ROOT ? -1 : (int64_t)t};
    }
    int rc = qr_h5_write_rows(f, "/messages", &qr_schema_paths_msg, rows, p->n, errbuf);
    free(rows);
    return rc;
}

static int write_patterns(qr_h5 *f, const qr_paths *p, const qr_paths_write_info *in, char *errbuf)
{
    size_t hops = 0, delays = 0;
    for (size_t i = 0; i < p->n_pats; i++)
        for (uint32_t h = 0; h < p->out[i].n_hops; h++) {
            hops++;
            delays += p->out[i].hops[h].node_n + p->out[i].hops[h].net_n;
        }
    qr_row_paths_pattern *pr = calloc(p->n_pats ? p->n_pats : 1, sizeof *pr);
    qr_row_paths_hop *hr = calloc(hops ? hops : 1, sizeof *hr);
    qr_row_paths_delay *dr = calloc(delays ? delays : 1, sizeof *dr);
    int rc = pr && hr && dr ? QR_OK : qri_err(errbuf, QR_ENOMEM, "paths.h5: out of memory");
    size_t nh = 0, nd = 0;
    for (size_t i = 0; !rc && i < p->n_pats; i++) {
        const qr_paths_pattern *pt = &p->out[i];
        const qr_paths_pattern *tp = in->truth ? qr_paths_find(in->truth, pt->shape) : NULL;
        uint32_t rank = (uint32_t)i + 1;
        pr[i] = (qr_row_paths_pattern){rank,         "",
                                       pt->n_hops,   pt->count,
                                       pt->expected, !in->truth ? -1 : tp ? (int64_t)tp->count : 0};
        size_t len = strlen(pt->shape);
        if (len < QR_PATHS_SHAPE_MAX)
            memcpy(pr[i].shape, pt->shape, len + 1);
        else
            snprintf(pr[i].shape, QR_PATHS_SHAPE_MAX, "%.*s...", QR_PATHS_SHAPE_MAX - 4, pt->shape);
        for (uint32_t h = 0; h < pt->n_hops; h++) {
            const qr_paths_hop *x = &pt->hops[h];
            hr[nh++] = (qr_row_paths_hop){rank,          h,         x->src,          x->dst,
                                          x->parent,     x->node_n, x->node_mean_ns, x->net_n,
                                          x->net_mean_ns};
            for (uint64_t k = 0; k < x->node_n; k++)
                dr[nd++] = (qr_row_paths_delay){rank, h, 0, x->node_ns[k]};
            for (uint64_t k = 0; k < x->net_n; k++)
                dr[nd++] = (qr_row_paths_delay){rank, h, 1, x->net_ns[k]};
        }
    }
    if (!rc)
        rc = qr_h5_write_rows(f, "/patterns", &qr_schema_paths_pattern, pr, p->n_pats, errbuf);
    if (!rc)
        rc = qr_h5_write_rows(f, "/hops", &qr_schema_paths_hop, hr, nh, errbuf);
    if (!rc)
        rc = qr_h5_write_rows(f, "/delays", &qr_schema_paths_delay, dr, nd, errbuf);
    free(pr);
    free(hr);
    free(dr);
    return rc;
}

static int write_rest(qr_h5 *f, const qr_paths *p, char *errbuf)
{
    qr_row_paths_suspect *sr = calloc(p->n_suspects + 1, sizeof *sr);
    qr_row_paths_offset *orow = calloc(p->n_hosts + 1, sizeof *orow);
    int rc = sr && orow ? QR_OK : qri_err(errbuf, QR_ENOMEM, "paths.h5: out of memory");
    for (size_t i = 0; !rc && i < p->n_suspects; i++) {
        const qr_paths_suspect *s = &p->suspects[i];
        sr[i] = (qr_row_paths_suspect){"", s->a, s->b, s->delay_ns, s->baseline_ns, s->n};
        snprintf(sr[i].kind, sizeof sr[i].kind, "%s", s->link ? "link" : "host");
    }
    for (uint32_t h = 0; !rc && h < p->n_hosts; h++)
        orow[h] = (qr_row_paths_offset){h, p->offset[h]};
    if (!rc)
        rc = qr_h5_write_rows(f, "/suspects", &qr_schema_paths_suspect, sr, p->n_suspects, errbuf);
    if (!rc)
        rc = qr_h5_write_rows(f, "/offsets", &qr_schema_paths_offset, orow, p->n_hosts, errbuf);
    free(sr);
    free(orow);
    return rc;
}

int qr_paths_write(const char *path, const qr_paths *p, const qr_paths_write_info *info,
                   char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create(&f, path, errbuf));
    QRI_TRY(write_attrs(f, p, info, errbuf));
    QRI_TRY(write_messages(f, p, info, errbuf));
    QRI_TRY(write_patterns(f, p, info, errbuf));
    QRI_TRY(write_rest(f, p, errbuf));
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}
