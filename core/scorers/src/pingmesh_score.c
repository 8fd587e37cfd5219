/* The Pingmesh analysis scored against the ground truth (pingmesh_score.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/pingmesh_score.h"
#include "qreplay/truth.h"

static uint32_t cable(const qr_topology *t, uint32_t link)
{
    uint32_t r = qr_topology_link_reverse(t, link);
    return r < link ? r : link;
}

/* How many of place's suspects are faulty; the faulty cables newly covered are marked in cov and
 * counted into *covered (cov may be NULL). */
static uint32_t bad_suspects(const qr_pingmesh_result *r, uint32_t place, const uint8_t *faulty,
                             uint8_t *cov, uint32_t *covered)
{
    const uint32_t *cables;
    size_t n = qr_pingmesh_suspects(r, place, &cables);
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!faulty[cables[i]])
            continue;
        bad++;
        if (cov && !cov[cables[i]]) {
            cov[cables[i]] = 1;
            (*covered)++;
        }
    }
    return bad;
}

/* Right flags (a faulty suspect) and the faulty cables they cover, of places[0..n). */
static void score_flags(const qr_pingmesh_result *r, const uint32_t *places, size_t n,
                        const uint8_t *faulty, uint8_t *cov, size_t links, uint32_t *right,
                        uint32_t *covered)
{
    *right = *covered = 0;
    memset(cov, 0, links);
    for (size_t i = 0; i < n; i++)
        *right += bad_suspects(r, places[i], faulty, cov, covered) > 0;
}

/* A connect resolved within the wait, graded: slow (a SYN timeout or never completed) against the
 * truth's first SYN or SYN-ACK dropped (lost_in: where the first attempt died). */
static void connect_truth(const qr_row_probe *p, int64_t end_ns, qr_row_pm_summary *s)
{
    if (isnan(s->connect_drop_rate) || p->sent_ns + s->connect_wait_ns > end_ns)
        return;
    int failed;
    uint32_t k = qr_pingmesh_syn_timeouts(p->rtt_ns, s->connect_wait_ns, s->syn_rto_ns, &failed);
    int slow = failed || k > 0, dropped = p->lost_in != 0;
    s->connect_right += (uint64_t)(slow && dropped);
    s->connect_missed += (uint64_t)(!slow && dropped);
    s->connect_false += (uint64_t)(slow && !dropped);
}

/* Where the truth says each scored lost probe died, per pair and in all. */
static int attribute_losses(qr_pingmesh_result *r, const qr_truth *tr, const char *path,
                            qr_row_pm_pair *pairs, qr_row_pm_summary *s, char *errbuf)
{
    const qr_topology *t = qr_pingmesh_topology(r);
    int64_t timeout = s->timeout_ns;
    for (size_t i = 0; i < tr->n_probes; i++) {
        const qr_row_probe *p = &tr->probes[i];
        if (p->pair >= r->n_pairs)
            return qri_err(errbuf, QR_EFORMAT,
                           "%s: /probes row %zu: pair %u is not one of the %zu pairs of the "
                           "scenario's plan",
                           path, i + 1, p->pair, r->n_pairs);
        if (p->lost_in > 2 ||
            (p->lost_in && p->drop_sw != QR_PROBE_AT_HOST &&
             (p->drop_sw >= qr_topology_switches(t) ||
              (p->drop_port != UINT32_MAX && p->drop_port >= qr_topology_ports(t, p->drop_sw)))))
            return qri_err(errbuf, QR_EFORMAT,
                           "%s: /probes row %zu: lost at switch %u port %u, which the topology "
                           "does not have",
                           path, i + 1, p->drop_sw, p->drop_port);
        connect_truth(p, tr->sim_end_ns, s);
        if (p->sent_ns + timeout > tr->sim_end_ns)
            continue; /* not scored: no answer could have come back */
        int lost = !(p->rtt_ns >= 0 && p->rtt_ns <= timeout);
        if (!lost || !p->lost_in)
            continue;
        qr_row_pm_pair *pp = &pairs[p->pair];
        if (p->drop_sw == QR_PROBE_AT_HOST) {
            s->host_lost++;
            pp->congestion_lost++;
        } else if (p->drop_reason == QR_DROP_FAULT) {
            s->fault_lost++;
            pp->fault_lost++;
        } else {
            s->congestion_lost++;
            pp->congestion_lost++;
        }
    }
    return QR_OK;
}

/* A black-hole row's truth: a ToR is right when one of its edge switch's links is faulty, a
 * podset when one of its aggregation switches' links is. */
static uint8_t bhole_faulty(const qr_pingmesh_result *r, const qr_row_pm_bhole *b,
                            const uint8_t *faulty)
{
    const qr_topology *t = qr_pingmesh_topology(r);
    uint32_t k = qr_topology_ports(t, 0), first, n;
    if (!strcmp(b->kind, "tor"))
        first = b->index, n = 1;
    else if (qr_topology_switches(t) > 1)
        first = k * k / 2 + b->index * (k / 2), n = k / 2;
    else
        return 0;
    for (uint32_t sw = first; sw < first + n && sw < qr_topology_switches(t); sw++)
        for (uint32_t port = 0; port < qr_topology_ports(t, sw); port++)
            if (faulty[cable(t, qr_topology_port_link(t, sw, port))])
                return 1;
    return 0;
}

int qr_pingmesh_score(qr_pingmesh_result *r, const char *truth_path, char *errbuf)
{
    const qr_topology *t = qr_pingmesh_topology(r);
    if (!t)
        return qri_err(errbuf, QR_EINVAL, "pingmesh: nothing to score (no qr_pingmesh_run result)");
    qr_truth tr;
    int rc = qr_truth_read(truth_path, &tr, errbuf);
    if (rc)
        return rc;
    uint32_t links = qr_topology_links(t), n_faulty = 0;
    size_t np = r->n_places + 1, nplaces = 0;
    for (size_t i = 0; i < r->n_places; i++) {
        uint32_t pl = qr_pingmesh_place_of(r, &r->places[i]);
        if (pl != UINT32_MAX && pl + 1 > nplaces)
            nplaces = pl + 1;
    }
    uint8_t *faulty = calloc(links, 1), *cov = calloc(links, 1);
    qr_row_pm_pair *pairs = malloc((r->n_pairs ? r->n_pairs : 1) * sizeof *pairs);
    size_t room = nplaces > np ? nplaces : np;
    uint32_t *flags = malloc(room * sizeof *flags);
    qr_row_pm_summary s = r->summary;
    if (!faulty || !cov || !pairs || !flags) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto done;
    }
    /* the planted faults' directed links (in cov for now), then their cables */
    if (qr_truth_drop_faults(&tr, links, cov, truth_path, errbuf) < 0) {
        rc = QR_EFORMAT;
        goto done;
    }
    for (uint32_t l = 0; l < links; l++)
        if (cov[l]) {
            uint32_t cb = cable(t, l);
            n_faulty += !faulty[cb];
            faulty[cb] = 1;
        }
    memset(cov, 0, links);
    memcpy(pairs, r->pairs, r->n_pairs * sizeof *pairs);
    for (size_t q = 0; q < r->n_pairs; q++)
        pairs[q].fault_lost = pairs[q].congestion_lost = 0;
    s.host_lost = s.fault_lost = s.congestion_lost = 0;
    s.connect_right = s.connect_missed = s.connect_false = 0;
    if ((rc = attribute_losses(r, &tr, truth_path, pairs, &s, errbuf)))
        goto done;
    /* from here on nothing fails: r changes */
    memcpy(r->pairs, pairs, r->n_pairs * sizeof *pairs);
    size_t nf = 0;
    for (size_t i = 0; i < r->n_places; i++) {
        qr_row_pm_place *p = &r->places[i];
        uint32_t pl = qr_pingmesh_place_of(r, p);
        p->faulty = pl != UINT32_MAX && bad_suspects(r, pl, faulty, NULL, NULL) > 0;
        if (p->flagged)
            flags[p->flagged - 1] = pl, nf = p->flagged > nf ? p->flagged : nf;
    }
    for (size_t i = 0; i < r->n_bholes; i++)
        r->bholes[i].faulty = bhole_faulty(r, &r->bholes[i], faulty);
    s.faulty = n_faulty;
    score_flags(r, flags, nf, faulty, cov, links, &s.right, &s.covered);
    s.precision = nf ? (double)s.right / (double)nf : NAN;
    s.recall = n_faulty ? (double)s.covered / (double)n_faulty : NAN;
    for (size_t j = 0; j < r->n_curve; j++) {
        qr_row_pm_curve *cv = &r->curve[j];
        uint32_t covered;
        size_t n = qr_pingmesh_curve_flags(r, j, flags, room);
        score_flags(r, flags, n, faulty, cov, links, &cv->right, &covered);
        cv->detected = n_faulty > 0 && covered == n_faulty;
    }
    s.detect_after = 0;
    s.detect_after_ns = -1;
    for (size_t j = r->n_curve; j > 0 && r->curve[j - 1].detected; j--) {
        s.detect_after = r->curve[j - 1].probes;
        s.detect_after_ns = r->curve[j - 1].time_ns;
    }
    r->summary = s;
    r->has_truth = n_faulty > 0;
done:
    free(faulty);
    free(cov);
    free(pairs);
    free(flags);
    qr_truth_free(&tr);
    return rc;
}

int qr_pingmesh_evaluate(const char *log_path, const char *truth_path, const qr_pingmesh_opts *o,
                         qr_pingmesh_result *out, char *errbuf)
{
    qr_probe_log log;
    memset(out, 0, sizeof *out);
    int rc = qr_probe_log_read(log_path, &log, errbuf);
    if (!rc)
        rc = qr_pingmesh_run(&log, o, out, errbuf);
    if (!rc && truth_path)
        rc = qr_pingmesh_score(out, truth_path, errbuf);
    qr_probe_log_free(&log);
    return rc;
}
