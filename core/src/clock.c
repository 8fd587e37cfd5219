#include <gsl/gsl_rng.h>
#include <math.h>

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
