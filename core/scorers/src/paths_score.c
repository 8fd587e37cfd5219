/* Causal paths against the truth (paths_score.h). */
#include <math.h>
#include <string.h>

#include "qreplay/paths_score.h"
#include "qreplay/tiers_truth.h"

static int named(const qr_paths *p, int link, uint32_t a, uint32_t b)
{
    size_t n;
    const qr_paths_suspect *s = qr_paths_suspects(p, &n);
    for (size_t i = 0; i < n; i++)
        if (s[i].link == link && ((s[i].a == a && s[i].b == b) || (s[i].a == b && s[i].b == a)))
            return 1;
    return 0;
}

static int planted(const qr_tier_fault *f, size_t nf, const qr_paths_suspect *s)
{
    for (size_t i = 0; i < nf; i++) {
        if (!s->link && f[i].kind == QR_TIER_SLOW_NODE && f[i].a == s->a)
            return 1;
        if (s->link && f[i].kind == QR_TIER_SLOW_LINK &&
            ((f[i].a == s->a && f[i].b == s->b) || (f[i].a == s->b && f[i].b == s->a)))
            return 1;
    }
    return 0;
}

static void score_patterns(const qr_paths *found, const qr_paths *truth, double rare_share,
                           qr_paths_score *out)
{
    size_t nt, nf;
    const qr_paths_pattern *tp = qr_paths_patterns(truth, &nt), *fp = qr_paths_patterns(found, &nf);
    uint64_t requests = 0;
    for (size_t i = 0; i < nt; i++)
        requests += tp[i].count;
    double err = 0, weight = 0;
    for (size_t i = 0; i < nt; i++) {
        if (!tp[i].count)
            continue;
        out->true_patterns++;
        int rare = (double)tp[i].count <= rare_share * (double)requests;
        out->rare_patterns += rare;
        const qr_paths_pattern *f = qr_paths_find(found, tp[i].shape);
        if (!f || !f->count)
            continue;
        out->found_patterns++;
        out->rare_found += rare;
        for (uint32_t h = 0; h < tp[i].n_hops; h++) {
            const qr_paths_hop *t = &tp[i].hops[h], *x = &f->hops[h];
            if (!t->node_n || !x->node_n || t->node_mean_ns <= 0)
                continue;
            err += fabs(x->node_mean_ns - t->node_mean_ns) / t->node_mean_ns * (double)t->node_n;
            weight += (double)t->node_n;
        }
    }
    for (size_t i = 0; i < nf; i++) {
        const qr_paths_pattern *t = qr_paths_find(truth, fp[i].shape);
        out->false_patterns += fp[i].count && (!t || !t->count);
    }
    out->node_delay_error = weight > 0 ? err / weight : 0;
}

void qr_paths_score_run(const qr_paths *found, const qr_paths *truth, const uint64_t *true_parent,
                        const qr_msg *m, const int64_t *true_net_ns, size_t n,
                        const qr_tier_fault *faults, size_t n_faults, double rare_share,
                        qr_paths_score *out)
{
    memset(out, 0, sizeof *out);
    const uint64_t *par = qr_paths_parents(found, NULL);
    for (size_t i = 0; i < n; i++) {
        if (true_parent[i] == QR_TRUTH_NO_PARENT) {
            out->unscored++;
            continue;
        }
        out->messages++;
        out->right += par[i] == true_parent[i];
    }
    out->share = out->messages ? (double)out->right / (double)out->messages : 0;
    score_patterns(found, truth, rare_share, out);
    double err = 0;
    uint64_t k = 0;
    for (size_t i = 0; true_net_ns && i < n; i++) {
        if (m[i].send_ns == QR_MSG_UNTRACED || m[i].recv_ns == QR_MSG_UNTRACED ||
            true_net_ns[i] == QR_TRUTH_NO_TIME)
            continue;
        int64_t est = m[i].recv_ns - m[i].send_ns -
                      (qr_paths_offset(found, m[i].dst) - qr_paths_offset(found, m[i].src));
        err += fabs((double)(est - true_net_ns[i]));
        k++;
    }
    out->net_delay_error_ns = k ? err / (double)k : 0;
    out->slow_node_named = out->slow_link_named = -1;
    for (size_t i = 0; i < n_faults; i++) {
        int link = faults[i].kind == QR_TIER_SLOW_LINK,
            *slot = link ? &out->slow_link_named : &out->slow_node_named;
        int ok = named(found, link, faults[i].a, faults[i].b);
        *slot = *slot == -1 ? ok : *slot && ok;
    }
    size_t ns;
    const qr_paths_suspect *s = qr_paths_suspects(found, &ns);
    for (size_t i = 0; i < ns; i++)
        out->wrongly_named += !planted(faults, n_faults, &s[i]);
}

size_t qr_paths_score_fields(const qr_paths_score *s, const char **names, double *values,
                             size_t max)
{
    const struct {
        const char *name;
        double v;
    } f[] = {{"messages", (double)s->messages},
             {"right", (double)s->right},
             {"share", s->share},
             {"true_patterns", (double)s->true_patterns},
             {"found_patterns", (double)s->found_patterns},
             {"rare_patterns", (double)s->rare_patterns},
             {"rare_found", (double)s->rare_found},
             {"false_patterns", (double)s->false_patterns},
             {"node_delay_error", s->node_delay_error},
             {"net_delay_error_ns", s->net_delay_error_ns},
             {"slow_node_named", s->slow_node_named},
             {"slow_link_named", s->slow_link_named},
             {"wrongly_named", (double)s->wrongly_named},
             {"unscored", (double)s->unscored}};
    size_t n = sizeof f / sizeof f[0];
    for (size_t i = 0; i < n && i < max; i++) {
        names[i] = f[i].name;
        values[i] = f[i].v;
    }
    return n;
}
