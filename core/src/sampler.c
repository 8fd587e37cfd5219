/* Rate-based and gap-based send-time sampling (DESIGN.md section 3). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/sampler.h"

struct qr_sampler {
    qr_sampler_cfg cfg;
    uint64_t n; /* packets pushed */
    int finished;
    int have_s; /* a sampled packet s is open */
    uint64_t s_index;
    int64_t s_time;
    double g_lo, g_hi; /* rate: feasible gaps */
    int64_t last_time; /* previous packet's time */
    uint64_t last_index;
};

int qr_sampler_create(qr_sampler **out, const qr_sampler_cfg *cfg)
{
    if (!out || !cfg || cfg->th_ns < 0 ||
        (cfg->method != QR_SAMPLING_RATE && cfg->method != QR_SAMPLING_GAP))
        return QR_EINVAL;
    qr_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return QR_ENOMEM;
    s->cfg = *cfg;
    qr_sampler_reset(s);
    *out = s;
    return QR_OK;
}

void qr_sampler_destroy(qr_sampler *s)
{
    free(s);
}

void qr_sampler_reset(qr_sampler *s)
{
    qr_sampler_cfg cfg = s->cfg;
    *s = (qr_sampler){.cfg = cfg, .g_lo = -INFINITY, .g_hi = INFINITY};
}

uint64_t qr_sampler_packets(const qr_sampler *s)
{
    return s->n;
}

/* The record of the open segment [s, last]. */
static void open_record(const qr_sampler *s, qr_sample_record *rec)
{
    rec->index = s->s_index;
    rec->time_ns = s->s_time;
    if (s->cfg.method == QR_SAMPLING_RATE) {
        if (isinf(s->g_lo) || isinf(s->g_hi))
            rec->gap_ns = 0.0; /* a segment of one packet */
        else
            rec->gap_ns = 0.5 * (s->g_lo + s->g_hi);
    } else {
        uint64_t count = s->last_index - s->s_index;
        rec->gap_ns = count ? (double)(s->last_time - s->s_time) / (double)count : 0.0;
    }
}

static void start_segment(qr_sampler *s, uint64_t index, int64_t time_ns)
{
    s->have_s = 1;
    s->s_index = index;
    s->s_time = time_ns;
    s->g_lo = -INFINITY;
    s->g_hi = INFINITY;
}

int qr_sampler_push(qr_sampler *s, int64_t time_ns, qr_sample_record *rec, int *emitted,
                    char *errbuf)
{
    if (!s || !rec || !emitted)
        return qri_err(errbuf, QR_EINVAL, "sampler: NULL argument");
    *emitted = 0;
    if (s->finished)
        return qri_err(errbuf, QR_ESTATE, "sampler: push after finish");
    uint64_t index = s->n;
    if (s->n > 0 && time_ns < s->last_time)
        return qri_err(errbuf, QR_EORDER,
                       "packet %" PRIu64 " sent at %" PRId64 " ns, before packet %" PRIu64
                       " at %" PRId64 " ns",
                       index, time_ns, index - 1, s->last_time);
    if (!s->have_s) {
        start_segment(s, index, time_ns);
    } else if (s->cfg.method == QR_SAMPLING_RATE) {
        double n = (double)(index - s->s_index);
        double dt = (double)(time_ns - s->s_time);
        double th = (double)s->cfg.th_ns;
        double p_lo = (dt - th) / n;
        double p_hi = (dt + th) / n;
        double lo = p_lo > s->g_lo ? p_lo : s->g_lo;
        double hi = p_hi < s->g_hi ? p_hi : s->g_hi;
        if (lo <= hi) {
            s->g_lo = lo;
            s->g_hi = hi;
        } else {
            open_record(s, rec);
            *emitted = 1;
            start_segment(s, index, time_ns);
        }
    } else {
        if (time_ns - s->last_time > s->cfg.th_ns) {
            open_record(s, rec);
            *emitted = 1;
            start_segment(s, index, time_ns);
        }
    }
    s->last_time = time_ns;
    s->last_index = index;
    s->n++;
    return QR_OK;
}

int qr_sampler_finish(qr_sampler *s, qr_sample_record *rec, int *emitted)
{
    if (!s || !rec || !emitted)
        return QR_EINVAL;
    *emitted = 0;
    if (s->have_s && !s->finished) {
        open_record(s, rec);
        *emitted = 1;
    }
    s->finished = 1;
    s->have_s = 0;
    return QR_OK;
}

static int64_t infer_from(const qr_sample_record *r, uint64_t index)
{
    double t = (double)r->time_ns + (double)(index - r->index) * r->gap_ns;
    return (int64_t)llround(t);
}

int qr_sample_infer(const qr_sample_record *recs, size_t n, uint64_t index, int64_t *time_ns)
{
    if (!recs || n == 0 || !time_ns)
        return QR_EINVAL;
    if (index < recs[0].index)
        return QR_ENOTFOUND;
    size_t lo = 0, hi = n; /* find the last record with index <= index */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (recs[mid].index <= index)
            lo = mid;
        else
            hi = mid;
    }
    *time_ns = infer_from(&recs[lo], index);
    return QR_OK;
}

int qr_sample_infer_next(const qr_sample_record *recs, size_t n, size_t *pos, uint64_t index,
                         int64_t *time_ns)
{
    if (!recs || n == 0 || !pos || !time_ns || *pos >= n)
        return QR_EINVAL;
    if (index < recs[*pos].index)
        return QR_ENOTFOUND;
    while (*pos + 1 < n && recs[*pos + 1].index <= index)
        (*pos)++;
    *time_ns = infer_from(&recs[*pos], index);
    return QR_OK;
}

int qr_sample_series(qr_sampler *s, const int64_t *times, size_t n, qr_sample_record *recs,
                     size_t *n_recs, int64_t *inferred, int64_t *max_error_ns, char *errbuf)
{
    if (!s || (n && (!times || !recs)) || !n_recs)
        return qri_err(errbuf, QR_EINVAL, "sampler: NULL argument");
    size_t nr = 0;
    int emitted, rc;
    qr_sampler_reset(s);
    for (size_t i = 0; i < n; i++) {
        if ((rc = qr_sampler_push(s, times[i], &recs[nr], &emitted, errbuf)) != QR_OK)
            return rc;
        nr += (size_t)emitted;
    }
    qr_sample_record last;
    qr_sampler_finish(s, &last, &emitted);
    if (emitted)
        recs[nr++] = last;
    *n_recs = nr;
    int64_t worst = 0;
    size_t pos = 0;
    for (size_t i = 0; i < n && (inferred || max_error_ns); i++) {
        int64_t t;
        qr_sample_infer_next(recs, nr, &pos, i, &t);
        if (inferred)
            inferred[i] = t;
        int64_t e = t > times[i] ? t - times[i] : times[i] - t;
        if (e > worst)
            worst = e;
    }
    if (max_error_ns)
        *max_error_ns = worst;
    return QR_OK;
}
