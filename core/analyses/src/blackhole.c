/* Shared-buffer blackhole episodes in an arrival log (blackhole.h). */
#include "qreplay/blackhole.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/units.h"

typedef struct bh_queue {
    int seen;
    uint64_t len; /* length at its last arrival, the packet included if admitted */
    /* its peak within the window, and the switch then */
    int64_t peak_ns;
    uint64_t peak_bytes;
    int64_t peak_threshold;
    uint64_t peak_total;
    uint64_t *peak_snap; /* every port's length at the peak */
    size_t snap_n, snap_cap;
    /* the open episode */
    int open;
    qr_blackhole ep;
    uint64_t *growth; /* per port, the largest growth seen at the episode's drops */
    size_t growth_n, growth_cap;
} bh_queue;

typedef struct bh_switch {
    bh_queue *q;
    size_t n, cap;
} bh_switch;

struct qr_blackhole_detector {
    qr_blackhole_opts o;
    bh_switch *sw;
    size_t n_sw, cap_sw;
    int64_t last_ns;
    int finished;
    uint64_t arrivals, drops, bh_drops;
    qr_blackhole *eps;
    size_t n_eps, cap_eps;
};

void qr_blackhole_opts_default(qr_blackhole_opts *o)
{
    o->window_ns = 500000;
    o->gap_ns = 100000;
    o->min_fall_bytes = QR_MTU_BYTES;
    o->min_shrink_bytes = 15000;
}

int qr_blackhole_detector_create(qr_blackhole_detector **out, const qr_blackhole_opts *o,
                                 char *errbuf)
{
    qr_blackhole_opts def;
    if (!o) {
        qr_blackhole_opts_default(&def);
        o = &def;
    }
    if (o->window_ns < 0)
        return qri_err(errbuf, QR_EINVAL, "blackhole window %" PRId64 " ns: must be >= 0",
                       o->window_ns);
    if (o->gap_ns < 0)
        return qri_err(errbuf, QR_EINVAL, "blackhole gap %" PRId64 " ns: must be >= 0", o->gap_ns);
    qr_blackhole_detector *d = calloc(1, sizeof *d);
    if (!d)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    d->o = *o;
    d->last_ns = INT64_MIN;
    *out = d;
    return QR_OK;
}

void qr_blackhole_detector_destroy(qr_blackhole_detector *d)
{
    if (!d)
        return;
    for (size_t s = 0; s < d->n_sw; s++) {
        for (size_t p = 0; p < d->sw[s].n; p++) {
            free(d->sw[s].q[p].peak_snap);
            free(d->sw[s].q[p].growth);
        }
        free(d->sw[s].q);
    }
    free(d->sw);
    free(d->eps);
    free(d);
}

/* The queue (sw, port), created (zeroed) on first use; NULL when out of memory. */
static bh_queue *queue_of(qr_blackhole_detector *d, uint32_t sw, uint32_t port)
{
    if (sw >= d->n_sw) {
        if (qri_reserve((void **)&d->sw, &d->cap_sw, (size_t)sw + 1, sizeof *d->sw, 16))
            return NULL;
        memset(d->sw + d->n_sw, 0, ((size_t)sw + 1 - d->n_sw) * sizeof *d->sw);
        d->n_sw = (size_t)sw + 1;
    }
    bh_switch *s = &d->sw[sw];
    if (port >= s->n) {
        if (qri_reserve((void **)&s->q, &s->cap, (size_t)port + 1, sizeof *s->q, 8))
            return NULL;
        memset(s->q + s->n, 0, ((size_t)port + 1 - s->n) * sizeof *s->q);
        s->n = (size_t)port + 1;
    }
    return &s->q[port];
}

static int emit(qr_blackhole_detector *d, bh_queue *q)
{
    qr_blackhole *e = &q->ep;
    /* the culprits: the ports that grew most, ties by port number */
    e->n_culprits = 0;
    size_t n = q->growth_n;
    for (uint32_t k = 0; k < QR_BLACKHOLE_CULPRITS; k++) {
        size_t best = n;
        for (size_t p = 0; p < n; p++) {
            if (p == e->port || q->growth[p] == 0)
                continue;
            int taken = 0;
            for (uint32_t j = 0; j < e->n_culprits; j++)
                taken |= e->culprits[j].port == p;
            if (!taken && (best == n || q->growth[p] > q->growth[best]))
                best = p;
        }
        if (best == n)
            break;
        e->culprits[e->n_culprits].port = (uint32_t)best;
        e->culprits[e->n_culprits].growth_bytes = q->growth[best];
        e->n_culprits++;
    }
    if (qri_grow((void **)&d->eps, &d->cap_eps, d->n_eps + 1, sizeof *d->eps, 16))
        return QR_ENOMEM;
    d->eps[d->n_eps++] = *e;
    q->open = 0;
    return QR_OK;
}

/* Remember every port's length now as q's peak snapshot. */
static int snapshot(const bh_switch *s, bh_queue *q)
{
    if (qri_reserve((void **)&q->peak_snap, &q->snap_cap, s->n, sizeof *q->peak_snap, 8))
        return QR_ENOMEM;
    for (size_t p = 0; p < s->n; p++)
        q->peak_snap[p] = s->q[p].len;
    q->snap_n = s->n;
    return QR_OK;
}

int qr_blackhole_observe(qr_blackhole_detector *d, const qr_arrival *a, char *errbuf)
{
    if (d->finished)
        return qri_err(errbuf, QR_ESTATE, "blackhole detector: arrival after finish");
    if (a->time_ns < d->last_ns)
        return qri_err(errbuf, QR_EINVAL,
                       "arrival of packet %" PRIu64 " at %" PRId64 " ns is earlier than the one "
                       "before it (%" PRId64 " ns): arrivals must be in time order",
                       a->packet, a->time_ns, d->last_ns);
    d->last_ns = a->time_ns;
    d->arrivals++;
    bh_queue *q = queue_of(d, a->sw, a->port);
    if (!q)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    bh_switch *s = &d->sw[a->sw];
    int dropped = a->decision != QR_ADMIT;
    /* an episode whose last drop is more than a gap ago is over */
    if (q->open && a->time_ns - q->ep.end_ns > d->o.gap_ns && emit(d, q))
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    d->drops += dropped;

    /* the queue's peak within the window (its length before this packet) */
    /* (not forgotten during an episode: the episode is measured from the peak it fell from) */
    if (!q->seen || (!q->open && a->time_ns - q->peak_ns > d->o.window_ns) ||
        a->queue_bytes >= q->peak_bytes) {
        q->seen = 1;
        q->peak_ns = a->time_ns;
        q->peak_bytes = a->queue_bytes;
        q->peak_threshold = a->threshold;
        q->peak_total = a->total_bytes;
        q->len = a->queue_bytes; /* the snapshot holds this queue's length before the packet */
        if (snapshot(s, q))
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }

    int threshold_drop = a->decision == QR_DROP_THRESHOLD || a->decision == QR_DROP_TAGGED;
    if (threshold_drop && q->peak_bytes >= a->queue_bytes + d->o.min_fall_bytes &&
        a->threshold < q->peak_threshold &&
        (uint64_t)(q->peak_threshold - a->threshold) >= d->o.min_shrink_bytes &&
        a->total_bytes > q->peak_total) {
        d->bh_drops++;
        if (!q->open) {
            q->open = 1;
            memset(&q->ep, 0, sizeof q->ep);
            q->ep.sw = a->sw;
            q->ep.port = a->port;
            q->ep.start_ns = a->time_ns;
            q->ep.peak_ns = q->peak_ns;
            q->ep.peak_bytes = q->peak_bytes;
            q->ep.queue_bytes = a->queue_bytes;
            q->ep.peak_threshold = q->peak_threshold;
            q->ep.threshold = a->threshold;
            q->ep.peak_total_bytes = q->peak_total;
            q->ep.total_bytes = a->total_bytes;
            q->growth_n = 0;
        }
        q->ep.end_ns = a->time_ns;
        q->ep.drops++;
        q->ep.drop_bytes += a->bytes;
        /* growth of the other ports since the peak this episode started from (a port first
         * seen after the peak held nothing then) */
        if (s->n > q->growth_n) {
            if (qri_reserve((void **)&q->growth, &q->growth_cap, s->n, sizeof *q->growth, 8))
                return qri_err(errbuf, QR_ENOMEM, "out of memory");
            memset(q->growth + q->growth_n, 0, (s->n - q->growth_n) * sizeof *q->growth);
            q->growth_n = s->n;
        }
        for (size_t p = 0; p < s->n; p++) {
            uint64_t now = s->q[p].len, then = p < q->snap_n ? q->peak_snap[p] : 0;
            if (now > then && now - then > q->growth[p])
                q->growth[p] = now - then;
        }
    }
    q->len = a->queue_bytes + (dropped ? 0 : a->bytes);
    return QR_OK;
}

static int by_start(const void *x, const void *y)
{
    const qr_blackhole *a = x, *b = y;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    if (a->sw != b->sw)
        return a->sw < b->sw ? -1 : 1;
    return a->port < b->port ? -1 : a->port > b->port;
}

int qr_blackhole_finish(qr_blackhole_detector *d, const qr_blackhole **episodes, size_t *n)
{
    if (!d->finished) {
        for (size_t s = 0; s < d->n_sw; s++)
            for (size_t p = 0; p < d->sw[s].n; p++)
                if (d->sw[s].q[p].open && emit(d, &d->sw[s].q[p]))
                    return QR_ENOMEM;
        if (d->n_eps > 1)
            qsort(d->eps, d->n_eps, sizeof *d->eps, by_start);
        d->finished = 1;
    }
    *episodes = d->eps;
    *n = d->n_eps;
    return QR_OK;
}

void qr_blackhole_counts(const qr_blackhole_detector *d, uint64_t *arrivals, uint64_t *drops,
                         uint64_t *blackhole_drops)
{
    if (arrivals)
        *arrivals = d->arrivals;
    if (drops)
        *drops = d->drops;
    if (blackhole_drops)
        *blackhole_drops = d->bh_drops;
}

int qr_blackhole_scan(const char *arrival_log, const qr_blackhole_opts *o, qr_blackhole **episodes,
                      size_t *n, char *errbuf)
{
    *episodes = NULL;
    *n = 0;
    qr_blackhole_detector *d;
    int rc = qr_blackhole_detector_create(&d, o, errbuf);
    if (rc)
        return rc;
    qr_arrival_reader *r;
    rc = qr_arrival_reader_open(&r, arrival_log, errbuf);
    if (rc) {
        qr_blackhole_detector_destroy(d);
        return rc;
    }
    qr_arrival a;
    uint64_t record = 0;
    char why[QR_ERRBUF_SIZE];
    while ((rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        record++;
        if ((rc = qr_blackhole_observe(d, &a, why)) != 0) {
            qri_err(errbuf, rc, "%s: record %" PRIu64 ": %s", arrival_log, record, why);
            break;
        }
    }
    if (rc == QR_END)
        rc = QR_OK;
    qr_arrival_reader_close(r);
    const qr_blackhole *eps = NULL;
    if (rc == 0 && (rc = qr_blackhole_finish(d, &eps, n)) == 0 && *n > 0) {
        *episodes = malloc(*n * sizeof **episodes);
        if (!*episodes)
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        else
            memcpy(*episodes, eps, *n * sizeof **episodes);
    }
    if (rc)
        *n = 0;
    qr_blackhole_detector_destroy(d);
    return rc;
}
