/* What-if analysis: the grid of configurations, the measurement of one run, its result tables and
 * the prediction errors (whatif.h). The job that runs the grid is whatif_run.c. */
#define _POSIX_C_SOURCE 200809L
#include "qreplay/whatif.h"
#include "qreplay/switchport.h"

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
#include "qreplay/topology.h"

const char *const qr_whatif_keys[] = {"buffer.size",      "buffer.alpha",         "buffer.policy",
                                      "buffer.port_size", "buffer.ecn_threshold", "links.rate",
                                      "links.delay",      "replay.margin",        NULL};

const char *const qr_whatif_layer_names[QR_WHATIF_LAYERS + 1] = {"edge", "agg", "core", "all"};

/* ---- the grid ---- */

struct qr_whatif_grid {
    char *rec_h5, *base_dir;
    size_t n_keys;
    char keys[QR_WHATIF_MAX_KEYS][48];
    size_t n_points, baseline;
    char (*values)[QR_WHATIF_MAX_KEYS][QR_WHATIF_VALUE_SIZE]; /* per point */
};

static int scenario_with(const qr_whatif_grid *g, const char *const *assign, size_t n,
                         qr_scenario **out, char *errbuf)
{
    qr_scenario *s = NULL;
    int rc = qr_scenario_from_h5(&s, g->rec_h5, NULL, g->base_dir, errbuf);
    for (size_t i = 0; !rc && i < n; i++)
        rc = qr_scenario_set(s, assign[i], errbuf);
    if (rc) {
        qr_scenario_destroy(s);
        return rc;
    }
    *out = s;
    return QR_OK;
}

static int split_key(const char *key, char *section, char *name)
{
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || (size_t)(dot - key) >= 32 || strlen(dot + 1) >= 32)
        return QR_EKEY;
    memcpy(section, key, (size_t)(dot - key));
    section[dot - key] = 0;
    strcpy(name, dot + 1);
    return QR_OK;
}

static int is_whatif_key(const char *key)
{
    for (size_t i = 0; qr_whatif_keys[i]; i++)
        if (!strcmp(key, qr_whatif_keys[i]))
            return 1;
    return 0;
}

/* One key's values as given (trimmed), each checked by applying it; two values that resolve to
 * the same configuration (1MB and 1000KB) are an error. base: the recording's configuration;
 * *has_base: whether one of them resolves to it. */
static int parse_values(qr_whatif_grid *g, const char *key, char *list,
                        char (*vals)[QR_WHATIF_VALUE_SIZE], size_t *n_vals, const qr_config *base,
                        int *has_base, size_t *base_index, char *errbuf)
{
    *n_vals = 0;
    *has_base = 0;
    if (!*qri_trim(list))
        return qri_err(errbuf, QR_EVALUE, "--vary %s: no values (give V1,V2,...)", key);
    size_t len = strlen(list);
    if (list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return qri_err(errbuf, QR_EVALUE, "--vary %s=%s: an empty value in the list", key, list);
    qr_config *seen = malloc(QR_WHATIF_MAX_POINTS * sizeof *seen);
    if (!seen)
        return QR_ENOMEM;
    char *save = NULL;
    int rc = QR_OK;
    for (char *v = strtok_r(list, ",", &save); !rc && v; v = strtok_r(NULL, ",", &save)) {
        v = qri_trim(v);
        char assign[256];
        if (!*v) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: an empty value in the list", key);
            break;
        }
        if (*n_vals == QR_WHATIF_MAX_POINTS) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: more than %d values", key,
                         QR_WHATIF_MAX_POINTS);
            break;
        }
        if (strlen(v) >= QR_WHATIF_VALUE_SIZE ||
            (size_t)snprintf(assign, sizeof assign, "%s=%s", key, v) >= sizeof assign) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: value '%.20s...' too long", key, v);
            break;
        }
        qr_scenario *s;
        const char *a = assign;
        char detail[QR_ERRBUF_SIZE];
        rc = scenario_with(g, &a, 1, &s, detail);
        if (rc) {
            rc = qri_err(errbuf, rc, "--vary %s: value '%s': %s", key, v, detail);
            break;
        }
        /* the resolved configurations are plain data, zeroed when made: equal values compare
         * equal byte for byte */
        seen[*n_vals] = *qr_scenario_config(s);
        qr_scenario_destroy(s);
        for (size_t j = 0; !rc && j < *n_vals; j++)
            if (!memcmp(&seen[j], &seen[*n_vals], sizeof *seen))
                rc = qri_err(errbuf, QR_EVALUE,
                             "--vary %s: value '%s' is listed twice (the same as '%s')", key, v,
                             vals[j]);
        if (rc)
            break;
        if (!memcmp(&seen[*n_vals], base, sizeof *base)) {
            *has_base = 1;
            *base_index = *n_vals;
        }
        strcpy(vals[(*n_vals)++], v);
    }
    free(seen);
    return rc;
}

int qr_whatif_grid_parse(qr_whatif_grid **out, const char *const *vary, size_t n_vary,
                         const char *rec_h5, const char *base_dir, char *errbuf)
{
    if (n_vary == 0)
        return qri_err(errbuf, QR_EVALUE, "no --vary given (e.g. --vary buffer.size=1MB,2MB,4MB)");
    if (n_vary > QR_WHATIF_MAX_KEYS)
        return qri_err(errbuf, QR_EVALUE, "at most %d --vary keys", QR_WHATIF_MAX_KEYS);
    qr_whatif_grid *g = calloc(1, sizeof *g);
    if (!g)
        return QR_ENOMEM;
    g->rec_h5 = strdup(rec_h5);
    g->base_dir = strdup(base_dir ? base_dir : ".");
    char(*vals)[QR_WHATIF_MAX_POINTS][QR_WHATIF_VALUE_SIZE] = calloc(n_vary, sizeof *vals);
    size_t n_vals[QR_WHATIF_MAX_KEYS] = {0}, base_idx[QR_WHATIF_MAX_KEYS] = {0};
    int has_base[QR_WHATIF_MAX_KEYS] = {0};
    char base_vals[QR_WHATIF_MAX_KEYS][QR_WHATIF_VALUE_SIZE];
    int rc = g->rec_h5 && g->base_dir && vals ? QR_OK : QR_ENOMEM;
    qr_scenario *base = NULL;
    if (!rc)
        rc = scenario_with(g, NULL, 0, &base, errbuf);
    for (size_t i = 0; !rc && i < n_vary; i++) {
        const char *eq = strchr(vary[i], '=');
        char key[48];
        size_t klen = eq ? (size_t)(eq - vary[i]) : strlen(vary[i]);
        if (klen >= sizeof key) {
            rc = qri_err(errbuf, QR_EKEY, "--vary %.40s...: not a what-if key", vary[i]);
            break;
        }
        memcpy(key, vary[i], klen);
        key[klen] = 0;
        if (!is_whatif_key(key)) {
            char list[256] = "";
            for (size_t j = 0; qr_whatif_keys[j]; j++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                         qr_whatif_keys[j]);
            rc = qri_err(errbuf, QR_EKEY, "--vary %s: not a what-if key (one of: %s)", key, list);
            break;
        }
        if (!eq) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: no values (give %s=V1,V2,...)", key, key);
            break;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(g->keys[j], key))
                rc = qri_err(errbuf, QR_EVALUE, "--vary %s: given twice", key);
        if (rc)
            break;
        strcpy(g->keys[i], key);
        g->n_keys = i + 1;
        char *list = strdup(eq + 1);
        if (!list) {
            rc = QR_ENOMEM;
            break;
        }
        rc = parse_values(g, key, list, vals[i], &n_vals[i], qr_scenario_config(base), &has_base[i],
                          &base_idx[i], errbuf);
        free(list);
        if (!rc) {
            char section[32], name[32];
            const char *v;
            split_key(key, section, name);
            rc = qr_scenario_get(base, section, name, &v);
            if (!rc)
                qri_strlcpy(base_vals[i], v, QR_WHATIF_VALUE_SIZE);
        }
    }
    size_t product = 1;
    for (size_t i = 0; !rc && i < n_vary; i++) {
        product *= n_vals[i];
        if (product > QR_WHATIF_MAX_POINTS)
            rc = qri_err(errbuf, QR_EVALUE, "--vary: the grid has more than %d points",
                         QR_WHATIF_MAX_POINTS);
    }
    /* Is the baseline in the product? */
    int base_in = 1;
    for (size_t i = 0; !rc && i < n_vary; i++)
        base_in &= has_base[i];
    if (!rc) {
        g->n_points = product + !base_in;
        g->values = calloc(g->n_points, sizeof *g->values);
        if (!g->values)
            rc = QR_ENOMEM;
    }
    if (!rc) {
        size_t p = 0;
        if (!base_in) {
            for (size_t i = 0; i < n_vary; i++)
                strcpy(g->values[0][i], base_vals[i]);
            g->baseline = 0;
            p = 1;
        }
        for (size_t idx = 0; idx < product; idx++, p++) {
            size_t rem = idx;
            int is_base = 1;
            for (size_t i = n_vary; i-- > 0;) {
                strcpy(g->values[p][i], vals[i][rem % n_vals[i]]);
                is_base &= has_base[i] && rem % n_vals[i] == base_idx[i];
                rem /= n_vals[i];
            }
            if (is_base && base_in)
                g->baseline = p;
        }
        /* every point must be a valid scenario */
        for (size_t p2 = 0; !rc && p2 < g->n_points; p2++) {
            qr_scenario *s;
            char detail[QR_ERRBUF_SIZE];
            rc = qr_whatif_grid_scenario(g, p2, &s, detail);
            if (!rc) {
                rc = qr_scenario_validate(s, detail);
                qr_scenario_destroy(s);
            }
            if (rc) {
                char what[512] = "";
                for (size_t i = 0; i < n_vary; i++)
                    snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s=%s",
                             i ? " " : "", g->keys[i], g->values[p2][i]);
                rc = qri_err(errbuf, rc, "--vary: the point %s is not a valid scenario: %s", what,
                             detail);
            }
        }
    }
    qr_scenario_destroy(base);
    free(vals);
    if (rc) {
        qr_whatif_grid_destroy(g);
        return rc;
    }
    *out = g;
    return QR_OK;
}

void qr_whatif_grid_destroy(qr_whatif_grid *g)
{
    if (!g)
        return;
    free(g->rec_h5);
    free(g->base_dir);
    free(g->values);
    free(g);
}

size_t qr_whatif_grid_keys(const qr_whatif_grid *g)
{
    return g->n_keys;
}

const char *qr_whatif_grid_key(const qr_whatif_grid *g, size_t k)
{
    return k < g->n_keys ? g->keys[k] : NULL;
}

size_t qr_whatif_grid_points(const qr_whatif_grid *g)
{
    return g->n_points;
}

size_t qr_whatif_grid_baseline(const qr_whatif_grid *g)
{
    return g->baseline;
}

const char *qr_whatif_grid_value(const qr_whatif_grid *g, size_t point, size_t k)
{
    return point < g->n_points && k < g->n_keys ? g->values[point][k] : NULL;
}

int qr_whatif_grid_scenario(const qr_whatif_grid *g, size_t point, qr_scenario **out, char *errbuf)
{
    if (point >= g->n_points)
        return qri_err(errbuf, QR_EINVAL, "no grid point %zu", point);
    char assign[QR_WHATIF_MAX_KEYS][96];
    const char *a[QR_WHATIF_MAX_KEYS];
    for (size_t i = 0; i < g->n_keys; i++) {
        snprintf(assign[i], sizeof assign[i], "%s=%s", g->keys[i], g->values[point][i]);
        a[i] = assign[i];
    }
    return scenario_with(g, a, g->n_keys, out, errbuf);
}

/* ---- measuring one run ---- */

struct pend {
    int64_t end_ns;
    uint32_t bytes;
};

struct wq {
    int used;
    uint8_t layer, to_host;
    uint32_t sw, port;
    int64_t free_ns, last_ns, thr;
    uint64_t qbytes;
    struct pend *ring;
    size_t head, n, cap;
    int64_t t50, t90;
    uint64_t arrivals, drops, marks, qmax;
    qr_hist *h;
};

struct flowacc {
    uint8_t seen, lossy;
    int64_t first_new_drop; /* -1: none */
    long double delay_sum;
    uint64_t delivered;
};

struct measure {
    const qr_config *c;
    qr_topology *topo;
    uint32_t n_sw, max_ports;
    struct wq *qs;
    struct flowacc *flows;
    size_t n_flows, cap_flows;
    qri_map inflight; /* packet -> hop delays so far */
    qr_hist *hq[QR_WHATIF_LAYERS + 1], *hsw[QR_WHATIF_LAYERS + 1], *hhop[QR_WHATIF_LAYERS + 1];
    qr_hist *hdelay, *hflow;
    int64_t first_ns, last_ns, last_end_ns; /* first and last arrival, last departure */
    uint64_t mismatches;
};

static int layer_of(qr_node_kind k)
{
    return k == QR_NODE_AGG ? 1 : k == QR_NODE_CORE ? 2 : 0;
}

static void integrate(struct wq *q, int64_t to)
{
    if (to <= q->last_ns)
        return;
    int64_t dt = to - q->last_ns;
    if (q->thr > 0 && q->qbytes > 0) {
        if ((double)q->qbytes >= 0.5 * (double)q->thr)
            q->t50 += dt;
        if ((double)q->qbytes >= 0.9 * (double)q->thr)
            q->t90 += dt;
    }
    q->last_ns = to;
}

/* Departures up to and including t. */
static void advance(struct wq *q, int64_t t)
{
    while (q->n && q->ring[q->head].end_ns <= t) {
        struct pend *p = &q->ring[q->head];
        integrate(q, p->end_ns);
        q->qbytes -= p->bytes;
        q->head = (q->head + 1) % q->cap;
        q->n--;
    }
    integrate(q, t);
}

static int push(struct wq *q, int64_t end, uint32_t bytes)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        struct pend *r = malloc(cap * sizeof *r);
        if (!r)
            return QR_ENOMEM;
        for (size_t i = 0; i < q->n; i++)
            r[i] = q->ring[(q->head + i) % q->cap];
        free(q->ring);
        q->ring = r;
        q->head = 0;
        q->cap = cap;
    }
    q->ring[(q->head + q->n) % q->cap] = (struct pend){end, bytes};
    q->n++;
    q->qbytes += bytes;
    return QR_OK;
}

static struct flowacc *flow_of(struct measure *m, uint64_t packet)
{
    size_t f = qr_dir_flow(qr_packet_id_dir(packet));
    if (f >= m->n_flows) {
        size_t cap = m->cap_flows ? m->cap_flows : 1024;
        while (cap <= f)
            cap *= 2;
        if (cap != m->cap_flows) {
            struct flowacc *n = realloc(m->flows, cap * sizeof *n);
            if (!n)
                return NULL;
            m->flows = n;
            m->cap_flows = cap;
        }
        for (size_t i = m->n_flows; i <= f; i++)
            m->flows[i] = (struct flowacc){0, 0, -1, 0, 0};
        m->n_flows = f + 1;
    }
    return &m->flows[f];
}

static void measure_free(struct measure *m)
{
    if (m->qs)
        for (size_t i = 0; i < (size_t)m->n_sw * m->max_ports; i++) {
            free(m->qs[i].ring);
            qr_hist_destroy(m->qs[i].h);
        }
    free(m->qs);
    free(m->flows);
    qri_map_free(&m->inflight);
    for (int l = 0; l <= QR_WHATIF_LAYERS; l++) {
        qr_hist_destroy(m->hq[l]);
        qr_hist_destroy(m->hsw[l]);
        qr_hist_destroy(m->hhop[l]);
    }
    qr_hist_destroy(m->hdelay);
    qr_hist_destroy(m->hflow);
    qr_topology_destroy(m->topo);
}

static int hist_add2(qr_hist *a, qr_hist *b, uint64_t v)
{
    return qr_hist_add(a, v) || qr_hist_add(b, v) ? QR_ENOMEM : QR_OK;
}

static int on_arrival(struct measure *m, const qr_arrival *a, qr_whatif_row *row,
                      const qr_recording *rec)
{
    struct wq *q = &m->qs[(size_t)a->sw * m->max_ports + a->port];
    if (!q->used) {
        q->used = 1;
        if (qr_hist_create(&q->h))
            return QR_ENOMEM;
        q->last_ns = a->time_ns;
    }
    advance(q, a->time_ns);
    q->thr = a->threshold;
    if (q->qbytes != a->queue_bytes)
        m->mismatches++;
    int L = q->layer;
    row->arrivals++;
    q->arrivals++;
    if (a->queue_bytes > q->qmax)
        q->qmax = a->queue_bytes;
    if (qr_hist_add(q->h, a->queue_bytes) || hist_add2(m->hq[L], m->hq[3], a->queue_bytes) ||
        hist_add2(m->hsw[L], m->hsw[3], a->total_bytes))
        return QR_ENOMEM;
    struct flowacc *fa = flow_of(m, a->packet);
    if (!fa)
        return QR_ENOMEM;
    fa->seen = 1;
    if (a->decision != QR_ADMIT) {
        row->drops++;
        row->drop_bytes += a->bytes;
        row->layer_drops[L]++;
        row->tagged_drops += a->decision == QR_DROP_TAGGED;
        q->drops++;
        fa->lossy = 1;
        qri_map_remove(&m->inflight, a->packet, 0);
        if (rec && !qr_recording_detected(rec, a->packet)) {
            row->new_drops++;
            if (fa->first_new_drop < 0 || a->time_ns < fa->first_new_drop)
                fa->first_new_drop = a->time_ns;
        }
        return QR_OK;
    }
    row->admitted++;
    if (qr_ecn_mark(a->queue_bytes, a->bytes, m->c->buffer.ecn_threshold_bytes)) {
        row->ecn_marks++;
        row->layer_ecn_marks[L]++;
        q->marks++;
    }
    int64_t start = a->time_ns > q->free_ns ? a->time_ns : q->free_ns;
    int64_t hop = start - a->time_ns;
    int64_t end =
        start + qr_link_tx_ns((uint64_t)a->bytes + QR_LINK_OVERHEAD_BYTES, m->c->links.rate_bps);
    q->free_ns = end;
    if (end > m->last_end_ns)
        m->last_end_ns = end;
    if (push(q, end, a->bytes) || hist_add2(m->hhop[L], m->hhop[3], (uint64_t)hop))
        return QR_ENOMEM;
    /* the packet's queueing delay over its earlier hops, + 1 (0: none yet) */
    void **slot = qri_map_slot(&m->inflight, a->packet, 0);
    uintptr_t sofar = slot ? (uintptr_t)*slot : 0;
    if (q->to_host) {
        if (slot)
            qri_map_remove(&m->inflight, a->packet, 0);
        int64_t total = (int64_t)(sofar ? sofar - 1 : 0) + hop;
        row->delivered++;
        fa->delay_sum += total;
        fa->delivered++;
        if (qr_hist_add(m->hdelay, (uint64_t)total))
            return QR_ENOMEM;
    } else if (slot) {
        *slot = (void *)(sofar + (uintptr_t)hop);
    } else if (qri_map_put(&m->inflight, a->packet, 0, (void *)(uintptr_t)(hop + 1))) {
        return QR_ENOMEM;
    }
    return QR_OK;
}

static uint64_t hist_max(const qr_hist *h)
{
    qr_summary s;
    qr_hist_summary(h, 1.0, &s);
    return (uint64_t)s.max;
}

static int finish(struct measure *m, const qr_recording *rec, uint32_t point, qr_whatif_kind kind,
                  qr_whatif_result *out)
{
    qr_whatif_row *row = &out->row;
    int64_t last = m->last_end_ns > m->last_ns ? m->last_end_ns : m->last_ns;
    int64_t span = last > m->first_ns ? last - m->first_ns : 0;
    row->span_ns = span;
    int64_t t50[QR_WHATIF_LAYERS + 1] = {0}, t90[QR_WHATIF_LAYERS + 1] = {0};
    uint64_t ports[QR_WHATIF_LAYERS + 1] = {0};
    size_t nq = 0;
    for (size_t i = 0; i < (size_t)m->n_sw * m->max_ports; i++) {
        struct wq *q = &m->qs[i];
        if (q->port == UINT32_MAX)
            continue;
        ports[q->layer]++;
        ports[3]++;
        nq += q->used;
        if (!q->used)
            continue;
        advance(q, INT64_MAX - 1);
        t50[q->layer] += q->t50;
        t90[q->layer] += q->t90;
        t50[3] += q->t50;
        t90[3] += q->t90;
    }
    for (int l = 0; l <= QR_WHATIF_LAYERS; l++) {
        double denom = (double)ports[l] * (double)span;
        row->above50[l] = denom > 0 ? (double)t50[l] / denom : 0;
        row->above90[l] = denom > 0 ? (double)t90[l] / denom : 0;
        row->q_p50[l] = (uint64_t)llround(qr_hist_quantile(m->hq[l], 0.5));
        row->q_p99[l] = (uint64_t)llround(qr_hist_quantile(m->hq[l], 0.99));
        row->q_max[l] = hist_max(m->hq[l]);
        row->sw_p50[l] = (uint64_t)llround(qr_hist_quantile(m->hsw[l], 0.5));
        row->sw_p99[l] = (uint64_t)llround(qr_hist_quantile(m->hsw[l], 0.99));
        row->sw_max[l] = hist_max(m->hsw[l]);
        row->hop_delay_p99[l] = llround(qr_hist_quantile(m->hhop[l], 0.99));
    }
    row->delay_p50 = llround(qr_hist_quantile(m->hdelay, 0.5));
    row->delay_p99 = llround(qr_hist_quantile(m->hdelay, 0.99));
    row->delay_max = (int64_t)hist_max(m->hdelay);
    for (size_t f = 0; f < m->n_flows; f++) {
        struct flowacc *fa = &m->flows[f];
        row->flows += fa->seen;
        row->flows_lossy += fa->lossy;
        row->flows_new_drop += fa->first_new_drop >= 0;
        if (fa->delivered &&
            qr_hist_add(m->hflow, (uint64_t)llroundl(fa->delay_sum / fa->delivered)))
            return QR_ENOMEM;
    }
    row->lossy_share = row->flows ? (double)row->flows_lossy / (double)row->flows : 0;
    row->flow_delay_p50 = llround(qr_hist_quantile(m->hflow, 0.5));
    row->flow_delay_p99 = llround(qr_hist_quantile(m->hflow, 0.99));
    if (rec && row->flows_new_drop)
        for (uint32_t h = 0; h < qr_recording_hosts(rec); h++) {
            size_t n;
            const qr_rec_packet *pk = qr_recording_packets(rec, h, &n);
            for (size_t i = 0; i < n; i++) {
                size_t f = qr_dir_flow(pk[i].dir);
                if (f < m->n_flows && m->flows[f].first_new_drop >= 0 &&
                    pk[i].time_ns > m->flows[f].first_new_drop)
                    row->sent_after_new_drop++;
            }
        }
    out->queues = calloc(nq ? nq : 1, sizeof *out->queues);
    out->quantiles = calloc(QR_WHATIF_QUANTILES * (QR_WHATIF_LAYERS + 1), sizeof *out->quantiles);
    if (!out->queues || !out->quantiles)
        return QR_ENOMEM;
    for (size_t i = 0; i < (size_t)m->n_sw * m->max_ports; i++) {
        struct wq *q = &m->qs[i];
        if (!q->used)
            continue;
        qr_whatif_queue_row *r = &out->queues[out->n_queues++];
        r->point = point;
        r->kind = (uint8_t)kind;
        r->sw = q->sw;
        r->port = q->port;
        r->layer = q->layer;
        r->arrivals = q->arrivals;
        r->drops = q->drops;
        r->ecn_marks = q->marks;
        r->q_p99 = (uint64_t)llround(qr_hist_quantile(q->h, 0.99));
        r->q_max = q->qmax;
        r->above50 = span > 0 ? (double)q->t50 / (double)span : 0;
        r->above90 = span > 0 ? (double)q->t90 / (double)span : 0;
    }
    for (int l = 0; l <= QR_WHATIF_LAYERS; l++)
        for (int i = 0; i < QR_WHATIF_QUANTILES; i++) {
            qr_whatif_quantile_row *r = &out->quantiles[out->n_quantiles++];
            double p = (double)i / (QR_WHATIF_QUANTILES - 1);
            r->point = point;
            r->kind = (uint8_t)kind;
            r->layer = (uint8_t)l;
            r->p = p;
            r->queue_bytes = (uint64_t)llround(qr_hist_quantile(m->hq[l], p));
            r->switch_bytes = (uint64_t)llround(qr_hist_quantile(m->hsw[l], p));
            r->delay_ns = llround(qr_hist_quantile(m->hdelay, p));
        }
    return QR_OK;
}

int qr_whatif_measure(const char *arrivals, const qr_scenario *s, const qr_recording *rec,
                      uint32_t point, qr_whatif_kind kind, qr_whatif_result *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    out->row.point = point;
    out->row.kind = (uint8_t)kind;
    struct measure m;
    memset(&m, 0, sizeof m);
    m.c = qr_scenario_config(s);
    int rc = qr_topology_of_config(&m.topo, m.c);
    if (rc)
        return qri_err(errbuf, rc, "%s: the scenario's topology is not valid", arrivals);
    m.n_sw = qr_topology_switches(m.topo);
    for (uint32_t sw = 0; sw < m.n_sw; sw++)
        if (qr_topology_ports(m.topo, sw) > m.max_ports)
            m.max_ports = qr_topology_ports(m.topo, sw);
    m.qs = calloc((size_t)m.n_sw * m.max_ports, sizeof *m.qs);
    rc = m.qs && !qri_map_init(&m.inflight) && !qr_hist_create(&m.hdelay) &&
                 !qr_hist_create(&m.hflow)
             ? QR_OK
             : QR_ENOMEM;
    for (int l = 0; !rc && l <= QR_WHATIF_LAYERS; l++)
        if (qr_hist_create(&m.hq[l]) || qr_hist_create(&m.hsw[l]) || qr_hist_create(&m.hhop[l]))
            rc = QR_ENOMEM;
    for (uint32_t sw = 0; !rc && sw < m.n_sw; sw++)
        for (uint32_t p = 0; p < m.max_ports; p++) {
            struct wq *q = &m.qs[(size_t)sw * m.max_ports + p];
            q->sw = sw;
            q->port = p < qr_topology_ports(m.topo, sw) ? p : UINT32_MAX;
            q->layer = (uint8_t)layer_of(qr_topology_switch_kind(m.topo, sw));
            qr_node_kind pk;
            uint32_t peer, pp;
            q->to_host = q->port != UINT32_MAX &&
                         !qr_topology_link(m.topo, sw, p, &pk, &peer, &pp) && pk == QR_NODE_HOST;
        }
    qr_blackhole_detector *bh = NULL;
    qr_arrival_reader *r = NULL;
    if (!rc)
        rc = qr_blackhole_detector_create(&bh, NULL, errbuf);
    if (!rc)
        rc = qr_arrival_reader_open(&r, arrivals, errbuf);
    qr_arrival a;
    uint64_t n = 0;
    int64_t prev = INT64_MIN;
    while (!rc && (rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        n++;
        if (a.sw >= m.n_sw || a.port >= qr_topology_ports(m.topo, a.sw)) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: arrival %" PRIu64 ": switch %u port %u is not in the scenario's "
                         "network",
                         arrivals, n, a.sw, a.port);
            break;
        }
        if (a.time_ns < prev) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: arrival %" PRIu64 ": time %" PRId64 " ns is before the previous "
                         "arrival's",
                         arrivals, n, a.time_ns);
            break;
        }
        if (n == 1)
            m.first_ns = a.time_ns;
        prev = m.last_ns = a.time_ns;
        rc = on_arrival(&m, &a, &out->row, rec);
        if (!rc)
            rc = qr_blackhole_observe(bh, &a, errbuf);
    }
    if (rc == QR_END)
        rc = QR_OK;
    qr_arrival_reader_close(r);
    if (!rc)
        rc = finish(&m, rec, point, kind, out);
    const qr_blackhole *eps = NULL;
    size_t n_eps = 0;
    if (!rc)
        rc = qr_blackhole_finish(bh, &eps, &n_eps);
    if (!rc && n_eps) {
        out->blackholes = calloc(n_eps, sizeof *out->blackholes);
        if (!out->blackholes)
            rc = QR_ENOMEM;
        for (size_t i = 0; !rc && i < n_eps; i++) {
            out->blackholes[i].point = point;
            out->blackholes[i].kind = (uint8_t)kind;
            out->blackholes[i].ep = eps[i];
            out->row.blackhole_drops += eps[i].drops;
        }
        out->n_blackholes = rc ? 0 : n_eps;
        out->row.blackholes = out->n_blackholes;
    }
    out->row.model_mismatches = m.mismatches;
    qr_blackhole_detector_destroy(bh);
    measure_free(&m);
    if (rc) {
        if (rc == QR_ENOMEM)
            qri_err(errbuf, rc, "%s: out of memory", arrivals);
        qr_whatif_result_free(out);
    }
    return rc;
}

void qr_whatif_result_free(qr_whatif_result *r)
{
    if (!r)
        return;
    free(r->queues);
    free(r->quantiles);
    free(r->blackholes);
    memset(r, 0, sizeof *r);
}

/* ---- result tables ---- */

#define F(T, m) offsetof(T, m), sizeof(((T *)0)->m)
#define ROWF(name, type, member, unit)                                                             \
    {                                                                                              \
        name, type, offsetof(qr_whatif_row, member), 0, unit                                       \
    }
#define LAYERF(prefix, type, member, unit)                                                         \
    ROWF("edge_" prefix, type, member[0], unit), ROWF("agg_" prefix, type, member[1], unit),       \
        ROWF("core_" prefix, type, member[2], unit)
#define LAYER4F(prefix, type, member, unit)                                                        \
    LAYERF(prefix, type, member, unit), ROWF("all_" prefix, type, member[3], unit)

static const qr_h5_field row_fields[] = {
    ROWF("point", QR_H5_U32, point, NULL),
    ROWF("kind", QR_H5_U8, kind, NULL),
    ROWF("arrivals", QR_H5_U64, arrivals, "packets"),
    ROWF("admitted", QR_H5_U64, admitted, "packets"),
    ROWF("drops", QR_H5_U64, drops, "packets"),
    ROWF("drop_bytes", QR_H5_U64, drop_bytes, "bytes"),
    ROWF("tagged_drops", QR_H5_U64, tagged_drops, "packets"),
    ROWF("ecn_marks", QR_H5_U64, ecn_marks, "packets"),
    LAYERF("drops", QR_H5_U64, layer_drops, "packets"),
    LAYERF("ecn_marks", QR_H5_U64, layer_ecn_marks, "packets"),
    ROWF("flows", QR_H5_U64, flows, "flows"),
    ROWF("flows_lossy", QR_H5_U64, flows_lossy, "flows"),
    ROWF("lossy_share", QR_H5_F64, lossy_share, "1"),
    ROWF("new_drops", QR_H5_U64, new_drops, "packets"),
    ROWF("flows_new_drop", QR_H5_U64, flows_new_drop, "flows"),
    ROWF("sent_after_new_drop", QR_H5_U64, sent_after_new_drop, "packets"),
    LAYER4F("q_p50", QR_H5_U64, q_p50, "bytes"),
    LAYER4F("q_p99", QR_H5_U64, q_p99, "bytes"),
    LAYER4F("q_max", QR_H5_U64, q_max, "bytes"),
    LAYER4F("sw_p50", QR_H5_U64, sw_p50, "bytes"),
    LAYER4F("sw_p99", QR_H5_U64, sw_p99, "bytes"),
    LAYER4F("sw_max", QR_H5_U64, sw_max, "bytes"),
    LAYER4F("above50", QR_H5_F64, above50, "1"),
    LAYER4F("above90", QR_H5_F64, above90, "1"),
    ROWF("delivered", QR_H5_U64, delivered, "packets"),
    ROWF("delay_p50", QR_H5_I64, delay_p50, "ns"),
    ROWF("delay_p99", QR_H5_I64, delay_p99, "ns"),
    ROWF("delay_max", QR_H5_I64, delay_max, "ns"),
    ROWF("flow_delay_p50", QR_H5_I64, flow_delay_p50, "ns"),
    ROWF("flow_delay_p99", QR_H5_I64, flow_delay_p99, "ns"),
    LAYER4F("hop_delay_p99", QR_H5_I64, hop_delay_p99, "ns"),
    ROWF("blackholes", QR_H5_U64, blackholes, "episodes"),
    ROWF("blackhole_drops", QR_H5_U64, blackhole_drops, "packets"),
    ROWF("span", QR_H5_I64, span_ns, "ns"),
    ROWF("model_mismatches", QR_H5_U64, model_mismatches, "arrivals"),
};

#define QF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_queue_row, member), 0, unit                                 \
    }
static const qr_h5_field queue_fields[] = {
    QF("point", QR_H5_U32, point, NULL),      QF("kind", QR_H5_U8, kind, NULL),
    QF("switch", QR_H5_U32, sw, NULL),        QF("port", QR_H5_U32, port, NULL),
    QF("layer", QR_H5_U8, layer, NULL),       QF("arrivals", QR_H5_U64, arrivals, "packets"),
    QF("drops", QR_H5_U64, drops, "packets"), QF("ecn_marks", QR_H5_U64, ecn_marks, "packets"),
    QF("q_p99", QR_H5_U64, q_p99, "bytes"),   QF("q_max", QR_H5_U64, q_max, "bytes"),
    QF("above50", QR_H5_F64, above50, "1"),   QF("above90", QR_H5_F64, above90, "1"),
};

#define PF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_quantile_row, member), 0, unit                              \
    }
static const qr_h5_field quantile_fields[] = {
    PF("point", QR_H5_U32, point, NULL),
    PF("kind", QR_H5_U8, kind, NULL),
    PF("layer", QR_H5_U8, layer, NULL),
    PF("p", QR_H5_F64, p, "1"),
    PF("queue_bytes", QR_H5_U64, queue_bytes, "bytes"),
    PF("switch_bytes", QR_H5_U64, switch_bytes, "bytes"),
    PF("delay", QR_H5_I64, delay_ns, "ns"),
};

#define BF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_blackhole_row, member), 0, unit                             \
    }
#define BCF(i)                                                                                     \
    BF("culprit" #i "_port", QR_H5_U32, ep.culprits[i].port, NULL),                                \
        BF("culprit" #i "_growth", QR_H5_U64, ep.culprits[i].growth_bytes, "bytes")
static const qr_h5_field blackhole_fields[] = {
    BF("point", QR_H5_U32, point, NULL),
    BF("kind", QR_H5_U8, kind, NULL),
    BF("switch", QR_H5_U32, ep.sw, NULL),
    BF("port", QR_H5_U32, ep.port, NULL),
    BF("start", QR_H5_I64, ep.start_ns, "ns"),
    BF("end", QR_H5_I64, ep.end_ns, "ns"),
    BF("drops", QR_H5_U64, ep.drops, "packets"),
    BF("drop_bytes", QR_H5_U64, ep.drop_bytes, "bytes"),
    BF("peak_time", QR_H5_I64, ep.peak_ns, "ns"),
    BF("peak_bytes", QR_H5_U64, ep.peak_bytes, "bytes"),
    BF("queue_bytes", QR_H5_U64, ep.queue_bytes, "bytes"),
    BF("peak_threshold", QR_H5_I64, ep.peak_threshold, "bytes"),
    BF("threshold", QR_H5_I64, ep.threshold, "bytes"),
    BF("peak_total_bytes", QR_H5_U64, ep.peak_total_bytes, "bytes"),
    BF("total_bytes", QR_H5_U64, ep.total_bytes, "bytes"),
    BF("culprits", QR_H5_U32, ep.n_culprits, NULL),
    BCF(0),
    BCF(1),
    BCF(2),
    BCF(3),
};

#define NF(a) (sizeof a / sizeof a[0])

struct table_io {
    const char *name;
    const qr_h5_field *fields;
    size_t n_fields, row_size;
};

static const struct table_io tables[4] = {
    {"summary", row_fields, NF(row_fields), sizeof(qr_whatif_row)},
    {"queues", queue_fields, NF(queue_fields), sizeof(qr_whatif_queue_row)},
    {"quantiles", quantile_fields, NF(quantile_fields), sizeof(qr_whatif_quantile_row)},
    {"blackholes", blackhole_fields, NF(blackhole_fields), sizeof(qr_whatif_blackhole_row)},
};

const qr_h5_field *qr_whatif_table_fields(int table, const char **name, size_t *n)
{
    if (table < 0 || table > 3)
        return NULL;
    *name = tables[table].name;
    *n = tables[table].n_fields;
    return tables[table].fields;
}

static int write_table(qr_h5 *f, int t, const void *rows, size_t n, char *errbuf)
{
    char path[64];
    snprintf(path, sizeof path, "/%s", tables[t].name);
    qr_h5_table *tab;
    int rc = qr_h5_table_create(&tab, f, path, tables[t].fields, tables[t].n_fields,
                                tables[t].row_size, 0, errbuf);
    if (rc)
        return rc;
    rc = n ? qr_h5_table_append(tab, rows, n, errbuf) : QR_OK;
    int rc2 = qr_h5_table_close(tab, errbuf);
    return rc ? rc : rc2;
}

int qr_whatif_results_write(qr_h5 *f, const qr_whatif_result *rs, size_t n, char *errbuf)
{
    /* one table each, every result's rows in order */
    size_t counts[4] = {n, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        counts[1] += rs[i].n_queues;
        counts[2] += rs[i].n_quantiles;
        counts[3] += rs[i].n_blackholes;
    }
    int rc = QR_OK;
    for (int t = 0; !rc && t < 4; t++) {
        char *buf = malloc(counts[t] ? counts[t] * tables[t].row_size : 1);
        if (!buf)
            return QR_ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const void *src = t == 0   ? (const void *)&rs[i].row
                              : t == 1 ? (const void *)rs[i].queues
                              : t == 2 ? (const void *)rs[i].quantiles
                                       : (const void *)rs[i].blackholes;
            size_t m = t == 0   ? 1
                       : t == 1 ? rs[i].n_queues
                       : t == 2 ? rs[i].n_quantiles
                                : rs[i].n_blackholes;
            if (m)
                memcpy(buf + k * tables[t].row_size, src, m * tables[t].row_size);
            k += m;
        }
        rc = write_table(f, t, buf, k, errbuf);
        free(buf);
    }
    return rc;
}

void qr_whatif_results_free(qr_whatif_result *rs, size_t n)
{
    for (size_t i = 0; rs && i < n; i++)
        qr_whatif_result_free(&rs[i]);
    free(rs);
}

/* Copy the rows of `all` (n of row_size bytes) whose point and kind (at the given offsets) are
 * those of run r into a new array. */
static void *rows_of(const char *all, size_t n, size_t row_size, size_t off_point, size_t off_kind,
                     const qr_whatif_row *r, size_t *count)
{
    *count = 0;
    char *out = malloc(n ? n * row_size : 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t p;
        uint8_t k;
        memcpy(&p, all + i * row_size + off_point, sizeof p);
        memcpy(&k, all + i * row_size + off_kind, sizeof k);
        if (p == r->point && k == r->kind)
            memcpy(out + (*count)++ * row_size, all + i * row_size, row_size);
    }
    return out;
}

int qr_whatif_read(const char *path, qr_whatif_result **out, size_t *n_out, char *errbuf)
{
    *out = NULL;
    *n_out = 0;
    qr_h5_reader *r;
    int rc = qr_h5_open(&r, path, errbuf);
    if (rc)
        return rc;
    void *rows[4] = {0};
    size_t n[4] = {0};
    for (int t = 0; !rc && t < 4; t++) {
        char tpath[64];
        snprintf(tpath, sizeof tpath, "/%s", tables[t].name);
        rc = qr_h5_read_table(r, tpath, tables[t].fields, tables[t].n_fields, tables[t].row_size,
                              &rows[t], &n[t], errbuf);
    }
    qr_h5_close(r);
    qr_whatif_result *rs = rc ? NULL : calloc(n[0] ? n[0] : 1, sizeof *rs);
    if (!rc && !rs)
        rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < n[0]; i++) {
        rs[i].row = ((qr_whatif_row *)rows[0])[i];
        rs[i].queues = rows_of(rows[1], n[1], sizeof(qr_whatif_queue_row),
                               offsetof(qr_whatif_queue_row, point),
                               offsetof(qr_whatif_queue_row, kind), &rs[i].row, &rs[i].n_queues);
        rs[i].quantiles = rows_of(
            rows[2], n[2], sizeof(qr_whatif_quantile_row), offsetof(qr_whatif_quantile_row, point),
            offsetof(qr_whatif_quantile_row, kind), &rs[i].row, &rs[i].n_quantiles);
        rs[i].blackholes =
            rows_of(rows[3], n[3], sizeof(qr_whatif_blackhole_row),
                    offsetof(qr_whatif_blackhole_row, point),
                    offsetof(qr_whatif_blackhole_row, kind), &rs[i].row, &rs[i].n_blackholes);
        if (!rs[i].queues || !rs[i].quantiles || !rs[i].blackholes)
            rc = QR_ENOMEM;
    }
    for (int t = 0; t < 4; t++)
        qr_h5_rows_free(rows[t]);
    if (rc) {
        qr_whatif_results_free(rs, n[0]);
        return rc;
    }
    *out = rs;
    *n_out = n[0];
    return QR_OK;
}

/* ---- prediction errors ---- */

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
            e->q_p99_rel[l] = qr_whatif_rel((double)p->q_p99[l], (double)t->q_p99[l]);
        e->delay_p50_rel = qr_whatif_rel((double)p->delay_p50, (double)t->delay_p50);
        e->delay_p99_rel = qr_whatif_rel((double)p->delay_p99, (double)t->delay_p99);
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
        pp[i] = (double)p->delay_p99;
        tp[i] = (double)t->delay_p99;
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

static void fmt_bytes(char *buf, size_t size, double b)
{
    if (b >= 1e6)
        snprintf(buf, size, "%.2fMB", b / 1e6);
    else if (b >= 1e3)
        snprintf(buf, size, "%.1fKB", b / 1e3);
    else
        snprintf(buf, size, "%.0fB", b);
}

void qr_whatif_print(FILE *out, const qr_whatif_grid *g, const qr_whatif_outcome *o)
{
    /* an ECN column when some point marks */
    int with_ecn = 0;
    for (size_t p = 0; p < o->n; p++) {
        qr_scenario *s;
        char err[QR_ERRBUF_SIZE];
        if (!qr_whatif_grid_scenario(g, p, &s, err)) {
            with_ecn |= qr_scenario_config(s)->buffer.ecn_threshold_bytes > 0;
            qr_scenario_destroy(s);
        }
    }
    size_t nk = qr_whatif_grid_keys(g);
    int w[QR_WHATIF_MAX_KEYS];
    for (size_t k = 0; k < nk; k++) {
        w[k] = (int)strlen(qr_whatif_grid_key(g, k));
        for (size_t p = 0; p < o->n; p++) {
            int l = (int)strlen(qr_whatif_grid_value(g, p, k));
            if (l > w[k])
                w[k] = l;
        }
    }
    fprintf(out, "%-5s", "point");
    for (size_t k = 0; k < nk; k++)
        fprintf(out, " %-*s", w[k], qr_whatif_grid_key(g, k));
    fprintf(out, " %8s", "drops");
    if (o->truth)
        fprintf(out, " %8s", "true");
    fprintf(out, " %7s %7s %7s %6s %9s %7s %9s %9s", "edge", "agg", "core", "lossy", "q_p99",
            "q>90%", "delay_p50", "delay_p99");
    if (o->truth)
        fprintf(out, " %9s", "true_p99");
    if (with_ecn)
        fprintf(out, " %8s", "ecn");
    fprintf(out, " %5s %9s %10s\n", "bhole", "new_drops", "sent_after");
    for (size_t p = 0; p < o->n; p++) {
        const qr_whatif_row *r = &o->pred[p].row;
        fprintf(out, "%-5zu", p);
        for (size_t k = 0; k < nk; k++)
            fprintf(out, " %-*s", w[k], qr_whatif_grid_value(g, p, k));
        fprintf(out, " %8" PRIu64, r->drops);
        if (o->truth)
            fprintf(out, " %8" PRIu64, o->truth[p].row.drops);
        char q[32];
        fmt_bytes(q, sizeof q, (double)r->q_p99[QR_WHATIF_LAYERS]);
        fprintf(out, " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %5.1f%% %9s %6.2f%% %7.1fus %7.1fus",
                r->layer_drops[0], r->layer_drops[1], r->layer_drops[2], 100 * r->lossy_share, q,
                100 * r->above90[QR_WHATIF_LAYERS], r->delay_p50 / 1e3, r->delay_p99 / 1e3);
        if (o->truth)
            fprintf(out, " %7.1fus", o->truth[p].row.delay_p99 / 1e3);
        if (with_ecn)
            fprintf(out, " %8" PRIu64, r->ecn_marks);
        fprintf(out, " %5" PRIu64 " %9" PRIu64 " %10" PRIu64 "%s\n", r->blackholes, r->new_drops,
                r->sent_after_new_drop, p == qr_whatif_grid_baseline(g) ? "  (recorded)" : "");
    }
    if (o->has_recorded)
        fprintf(out,
                "recorded runtime: %" PRIu64 " drops, delay p50 %.1f us, p99 %.1f us, %" PRIu64
                " blackhole episodes\n",
                o->recorded.row.drops, o->recorded.row.delay_p50 / 1e3,
                o->recorded.row.delay_p99 / 1e3, o->recorded.row.blackholes);
    fprintf(out, "note: %s\n", QR_WHATIF_CAVEAT);
    if (o->errors) {
        const qr_whatif_agreement *a = &o->agree;
        fprintf(out,
                "validated: ranking by drops %s (Kendall tau %.2f; fewest drops: predicted point "
                "%u, true point %u)\n",
                a->best_drops_same ? "keeps its best point" : "picks another best point",
                a->tau_drops, a->best_drops_pred, a->best_drops_true);
        fprintf(out,
                "           ranking by p99 delay %s (Kendall tau %.2f; lowest: predicted point "
                "%u, true point %u)\n",
                a->best_delay_same ? "keeps its best point" : "picks another best point",
                a->tau_delay_p99, a->best_delay_pred, a->best_delay_true);
    }
}
