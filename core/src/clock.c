#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/random.h"

int qr_clock_offsets(uint64_t seed, int64_t max_offset_ns, size_t n_hosts, int64_t *out)
{
    if (max_offset_ns < 0 || (!out && n_hosts))
        return QR_EINVAL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return QR_ENOMEM;
    for (size_t h = 0; h < n_hosts; h++) {
        /* one stream per host, so a host's offset does not depend on how many hosts there are */
        gsl_rng_set(r, (unsigned long)qr_seed_derive(seed, "clock", h));
        if ((uint64_t)max_offset_ns < gsl_rng_max(r))
            out[h] = (int64_t)gsl_rng_uniform_int(r, (unsigned long)max_offset_ns + 1);
        else
            out[h] = (int64_t)floor(gsl_rng_uniform(r) * ((double)max_offset_ns + 1.0));
    }
    gsl_rng_free(r);
    return QR_OK;
}

struct qr_proc_delay {
    gsl_rng *rng;
    int64_t mean_ns, sd_ns;
};

int qr_proc_delay_create(qr_proc_delay **out, uint64_t seed, uint64_t host, uint64_t replay,
                         int64_t mean_ns, int64_t sd_ns)
{
    if (!out || mean_ns < 0 || sd_ns < 0)
        return QR_EINVAL;
    qr_proc_delay *d = calloc(1, sizeof *d);
    if (!d)
        return QR_ENOMEM;
    d->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!d->rng) {
        free(d);
        return QR_ENOMEM;
    }
    gsl_rng_set(d->rng, (unsigned long)qr_seed_derive(seed ^ (replay * 0x9e3779b97f4a7c15ULL),
                                                      "host.proc_delay", host));
    d->mean_ns = mean_ns;
    d->sd_ns = sd_ns;
    *out = d;
    return QR_OK;
}

void qr_proc_delay_destroy(qr_proc_delay *d)
{
    if (!d)
        return;
    gsl_rng_free(d->rng);
    free(d);
}

int64_t qr_proc_delay_next(qr_proc_delay *d)
{
    if (d->sd_ns == 0)
        return d->mean_ns;
    double x = (double)d->mean_ns + gsl_ran_gaussian(d->rng, (double)d->sd_ns);
    return x <= 0 ? 0 : (int64_t)llround(x);
}
