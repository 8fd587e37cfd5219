/* Hop traces against the planted faults (hoptrace_score.h). */
#include "qreplay/hoptrace_score.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/linkfault.h"
#include "qreplay/loopfault.h"
#include "qreplay/topology.h"
#include "qreplay/truth.h"

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct names of the silent drops' links, sorted, joined by commas into out. */
static int silent_names(const qr_hoptrace *t, char *out, size_t size)
{
    const char **names = malloc((t->n_drops ? t->n_drops : 1) * sizeof *names);
    size_t n = 0, len = 0;
    if (!names)
        return QR_ENOMEM;
    for (size_t i = 0; i < t->n_drops; i++)
        if (t->drops[i].silent)
            names[n++] = t->drops[i].link_name;
    qsort(names, n, sizeof *names, cmp_name);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(names[i], names[i - 1]) == 0)
            continue;
        size_t l = strlen(names[i]);
        if (len + l + 2 > size) /* no room for more: the list is cut there */
            break;
        len += (size_t)snprintf(out + len, size - len, "%s%s", len ? "," : "", names[i]);
    }
    free(names);
    return QR_OK;
}

/* The loop debugger's cycles against the planted loops ([faults] loop, the scenario's truth): a
 * cycle is a planted loop's when it goes from a rule's switch to the neighbour the rule sends the
 * packets to. Returns 0 or the rules' error (a scenario the runtime ran has none). */
static int score_loops(qr_hoptrace *t, const qr_scenario *s, const qr_topology *topo, char *errbuf)
{
    qr_loop_rule rules[QR_LOOP_RULES_MAX];
    size_t n;
    int rc = qr_loop_rules_parse(qr_scenario_config(s)->faults.loop, topo, rules, QR_LOOP_RULES_MAX,
                                 &n, errbuf);
    for (size_t i = 0; !rc && i < t->n_loops; i++) {
        qr_row_hop_loop *l = &t->loops[i];
        l->planted = 0;
        for (size_t j = 0; j < n && !l->planted; j++) {
            char hop[32];
            snprintf(hop, sizeof hop, "s%u>s%u", rules[j].sw, rules[j].next);
            /* as a whole step of the cycle: not s18>s160 for s8>s16 */
            for (const char *at = strstr(l->cycle, hop); at && !l->planted;
                 at = strstr(at + 1, hop)) {
                char end = at[strlen(hop)];
                l->planted = (at == l->cycle || at[-1] == '>') && (end == '>' || end == 0);
            }
        }
    }
    return rc;
}

/* The link round trips against the planted cables: those whose drops the truth holds (faulty,
 * both ways by now) and the scenario's delay and rate faults. A flagged port is right if its
 * cable is one of them. */
static int score_bounce(const qr_hoptrace *t, const qr_scenario *s, const qr_topology *topo,
                        const uint8_t *faulty, uint32_t links, qr_hoptrace_truth *x, char *errbuf)
{
    if (!t->has_bounce)
        return QR_OK;
    const qr_config *c = qr_scenario_config(s);
    qr_link_fault_texts texts = {
        {NULL, NULL, c->faults.link[QR_LINK_DELAY], c->faults.link[QR_LINK_RATE]}};
    qr_link_faults *lf = NULL;
    int rc = qr_link_faults_create(&lf, &texts, topo, c->run.seed, errbuf);
    uint8_t *bad = rc ? NULL : calloc(links ? links : 1, 1);
    if (!rc && !bad)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (uint32_t l = 0; !rc && l < links; l++)
        bad[l] = faulty[l] != 0;
    for (size_t i = 0; !rc && lf && i < qr_link_faults_count(lf); i++) {
        uint32_t l;
        if (qr_link_faults_get(lf, i, &l) && l < links)
            bad[l] = bad[qr_topology_link_reverse(topo, l)] = 1;
    }
    for (size_t i = 0; !rc && i < t->bounce.n_rows; i++) {
        const qr_row_bounce *r = &t->bounce.rows[i];
        int flagged = r->slow || r->lossy, on = r->link < links && bad[r->link];
        x->bounce_flagged += flagged;
        x->bounce_right += flagged && on;
        x->bounce_faulty_probed += on && r->sent;
        x->bounce_faulty_found += on && flagged;
    }
    x->has_truth |= !rc && (lf != NULL);
    free(bad);
    qr_link_faults_destroy(lf);
    return rc;
}

int qr_hoptrace_score(qr_hoptrace *t, const qr_scenario *s, const char *truth_path, char *errbuf)
{
    qr_truth tr = {0};
    qr_hoptrace_truth x = {0};
    qr_topology *topo = NULL;
    uint8_t *faulty = NULL;
    uint32_t links = 0;
    int rc;
    if (qr_topology_of_config(&topo, qr_scenario_config(s)) ||
        !(faulty = calloc((links = qr_topology_links(topo)) ? links : 1, 1))) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    QRI_TRY(score_loops(t, s, topo, errbuf));
    QRI_TRY(qr_truth_read(truth_path, &tr, errbuf));
    int64_t planted = qr_truth_drop_faults(&tr, links, faulty, truth_path, errbuf);
    if (planted < 0) {
        rc = QR_EFORMAT;
        goto fail;
    }
    x.has_truth = planted > 0;
    for (uint32_t l = 0; l < links; l++)
        faulty[l] = faulty[l] != 0;
    /* the guided probes against the planted directions, before the cables' other directions */
    for (size_t i = 0; t->has_guided && i < t->guided.n_ports; i++) {
        const qr_row_guided_port *g = &t->guided.ports[i];
        if (g->link < links && faulty[g->link]) {
            x.guided_faulty_probed++;
            x.guided_faulty_found += g->silent;
        }
    }
    for (uint32_t l = 0; l < links; l++) /* both directions of a faulty cable */
        if (faulty[l] == 1)
            faulty[qr_topology_link_reverse(topo, l)] |= 2;
    size_t glen = 0;
    for (size_t i = 0; t->has_guided && i < t->guided.n_ports; i++) {
        const qr_row_guided_port *g = &t->guided.ports[i];
        if (!g->silent)
            continue;
        x.guided_silent++;
        /* right on the link out of the port; for losses inside the switch (its ingress or its
         * egress: the mirror cannot tell), right if a faulty cable ends at the switch */
        int right = g->port != QR_GUIDED_INSIDE && g->link < links && faulty[g->link] &&
                    g->lost > g->inside;
        for (uint32_t p = 0; !right && (g->inside || g->port == QR_GUIDED_INSIDE) &&
                             p < qr_topology_ports(topo, g->sw);
             p++) {
            uint32_t l = qr_topology_port_link(topo, g->sw, p);
            right = l < links && faulty[l];
        }
        x.guided_silent_right += right;
        size_t l = strlen(g->link_name);
        if (glen + l + 2 <= sizeof x.guided_links)
            glen += (size_t)snprintf(x.guided_links + glen, sizeof x.guided_links - glen, "%s%s",
                                     glen ? "," : "", g->link_name);
    }
    QRI_TRY(score_bounce(t, s, topo, faulty, links, &x, errbuf));
    /* the fault drops by packet, from the truth (the trace never names them) */
    uint64_t *fault_ids = malloc((tr.n_drops ? tr.n_drops : 1) * sizeof *fault_ids);
    size_t n_fault = 0;
    if (!fault_ids) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < tr.n_drops; i++)
        if (tr.drops[i].reason == QR_DROP_FAULT)
            fault_ids[n_fault++] = tr.drops[i].packet;
    qsort(fault_ids, n_fault, sizeof *fault_ids, qri_cmp_u64);
    uint64_t on_cable = 0, silent_off = 0;
    x.detect_after_ns = -1;
    for (size_t i = 0; i < t->n_drops; i++) {
        const qr_row_hop_drop *d = &t->drops[i];
        int fault = bsearch(&d->packet, fault_ids, n_fault, sizeof *fault_ids, qri_cmp_u64) != NULL;
        x.fault_missed += fault && !d->silent;
        if (!d->silent)
            continue;
        x.silent++;
        x.silent_right += fault;
        int on = d->link < links && faulty[d->link];
        silent_off += !on;
        if (on && ++on_cable == 2) {
            x.detect_after_drops = i + 1;
            x.detect_after_ns = d->time_ns;
        }
    }
    free(fault_ids);
    x.right = x.silent > 0 && silent_off == 0;
    if (silent_names(t, x.silent_links, sizeof x.silent_links)) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    t->truth = x;
fail:
    qr_truth_free(&tr);
    qr_topology_destroy(topo);
    free(faulty);
    return rc;
}
