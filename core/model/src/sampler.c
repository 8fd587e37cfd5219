/* Rate-based and gap-based send-time sampling (docs/model.md). */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/sampler.h"

/* A fraction num / den, den > 0. */
typedef struct {
    int64_t num, den;
} frac;

struct qr_sampler {
    qr_sampler_cfg cfg;
    uint64_t n; /* packets pushed */
    int finished;
    int have_s; /* a sampled packet s is open */
    uint64_t s_index;
    int64_t s_time;
    int have_lo, have_hi; /* rate: the feasible gaps [lo, hi]; absent ends are infinite */
    frac lo, hi;
    int64_t last_time; /* previous packet's time */
    uint64_t last_index;
};

int qr_sampler_create(qr_sampler **out, const qr_sampler_cfg *cfg)
{
    if (!out || !cfg || cfg->th_ns < 0 || cfg->th_ns > QR_TIME_MAX ||
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
    *s = (qr_sampler){.cfg = cfg};
}

void qr_sampler_copy(qr_sampler *dst, const qr_sampler *src)
{
    *dst = *src;
}

uint64_t qr_sampler_packets(const qr_sampler *s)
{
    return s->n;
}

/* a/b <=> c/d (b, d > 0), exactly. */
static int frac_cmp(frac a, frac b)
{
    __int128 x = (__int128)a.num * b.den, y = (__int128)b.num * a.den;
    return x < y ? -1 : x > y;
}

static __int128 gcd128(__int128 a, __int128 b)
{
    if (a < 0)
        a = -a;
    while (b) {
        __int128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The gap of a record: the exact midpoint of [lo, hi] if it fits in 64 bits, else lo. */
static frac midpoint(frac lo, frac hi)
{
    __int128 num = (__int128)lo.num * hi.den + (__int128)hi.num * lo.den;
    __int128 den = (__int128)2 * lo.den * hi.den;
    __int128 g = gcd128(num, den);
    if (g > 1) {
        num /= g;
        den /= g;
    }
    if (num >= INT64_MIN && num <= INT64_MAX && den <= INT64_MAX)
        return (frac){(int64_t)num, (int64_t)den};
    return lo;
}

/* The record of the open segment [s, last]. */
static void open_record(const qr_sampler *s, qr_sample_record *rec)
{
    frac g = {0, 1};
    if (s->cfg.method == QR_SAMPLING_RATE) {
        if (s->have_lo && s->have_hi)
            g = midpoint(s->lo, s->hi); /* else a segment of one packet */
    } else {
        uint64_t count = s->last_index - s->s_index;
        if (count)
            g = (frac){s->last_time - s->s_time, (int64_t)count};
    }
    rec->index = s->s_index;
    rec->time_ns = s->s_time;
    rec->gap_num = g.num;
    rec->gap_den = g.den;
}

static void start_segment(qr_sampler *s, uint64_t index, int64_t time_ns)
{
    s->have_s = 1;
    s->s_index = index;
    s->s_time = time_ns;
    s->have_lo = s->have_hi = 0;
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
    if (time_ns < 0 || time_ns > QR_TIME_MAX)
        return qri_err(errbuf, QR_EVALUE,
                       "packet %" PRIu64 " sent at %" PRId64 " ns, outside 0 .. 2^62 ns", index,
                       time_ns);
    if (s->n > 0 && time_ns < s->last_time)
        return qri_err(errbuf, QR_EORDER,
                       "packet %" PRIu64 " sent at %" PRId64 " ns, before packet %" PRIu64
                       " at %" PRId64 " ns",
                       index, time_ns, index - 1, s->last_time);
    if (!s->have_s) {
        start_segment(s, index, time_ns);
    } else if (s->cfg.method == QR_SAMPLING_RATE) {
        /* gaps g with |s.time + n g - time| <= th: [(dt - th) / n, (dt + th) / n] */
        int64_t n = (int64_t)(index - s->s_index);
        int64_t dt = time_ns - s->s_time; /* in [0, 2^62]: the times are */
        frac p_lo = {dt - s->cfg.th_ns, n}, p_hi = {dt + s->cfg.th_ns, n};
        frac lo = s->have_lo && frac_cmp(s->lo, p_lo) > 0 ? s->lo : p_lo;
        frac hi = s->have_hi && frac_cmp(s->hi, p_hi) < 0 ? s->hi : p_hi;
        if (frac_cmp(lo, hi) <= 0) {
            s->lo = lo;
            s->hi = hi;
            s->have_lo = s->have_hi = 1;
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

int qr_sampler_peek(const qr_sampler *s, qr_sample_record *rec)
{
    if (!s || !s->have_s || s->finished)
        return 0;
    open_record(s, rec);
    return 1;
}

int qr_sampler_open_until(const qr_sampler *s, int64_t *until)
{
    if (!s || !s->have_s || s->finished)
        return 0;
    if (s->cfg.method == QR_SAMPLING_GAP) {
        /* the next packet joins when its gap is at most th */
        __int128 u = (__int128)s->last_time + s->cfg.th_ns;
        *until = u > INT64_MAX ? INT64_MAX : (int64_t)u;
        return 1;
    }
    if (!(s->have_lo && s->have_hi))
        return 0;
    /* packet n at time t joins while (t - s_time - th) / (n - s_index) <= hi, i.e. t <= s_time +
     * th + (n - s_index) hi; t is an integer, so the floor of the product bounds it exactly */
    __int128 n = (__int128)(s->n - s->s_index);
    __int128 prod = n * s->hi.num;
    __int128 fl = prod >= 0 ? prod / s->hi.den : -((-prod + s->hi.den - 1) / s->hi.den);
    __int128 u = (__int128)s->s_time + s->cfg.th_ns + fl;
    *until = u > INT64_MAX ? INT64_MAX : u < INT64_MIN ? INT64_MIN : (int64_t)u;
    return 1;
}

/* round(num / den), half away from zero (as llround), den > 0. */
static __int128 round_div(__int128 num, __int128 den)
{
    if (num >= 0)
        return (2 * num + den) / (2 * den);
    return -((-2 * num + den) / (2 * den));
}

static int infer_from(const qr_sample_record *r, uint64_t index, int64_t *time_ns)
{
    if (r->gap_den <= 0)
        return QR_EINVAL;
    __int128 k = (__int128)(index - r->index);
    __int128 mag = r->gap_num < 0 ? -(__int128)r->gap_num : (__int128)r->gap_num;
    if (mag && k > ((__int128)1 << 125) / mag)
        return QR_EVALUE; /* no record of ours spans that far */
    __int128 t = (__int128)r->time_ns + round_div(k * r->gap_num, r->gap_den);
    if (t < INT64_MIN || t > INT64_MAX)
        return QR_EVALUE;
    *time_ns = (int64_t)t;
    return QR_OK;
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
    return infer_from(&recs[lo], index, time_ns);
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
    return infer_from(&recs[*pos], index, time_ns);
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

int qr_sampling_bound_check(qr_sampling_method method, int64_t th_ns, int64_t max_error_ns,
                            char *errbuf)
{
    if (method != QR_SAMPLING_RATE || max_error_ns <= th_ns)
        return QR_OK;
    return qri_err(errbuf, QR_ESTATE,
                   "sampling at th = %" PRId64 " ns inferred a time %" PRId64
                   " ns off: the bound is broken (a defect of qreplay; please report it)",
                   th_ns, max_error_ns);
}
