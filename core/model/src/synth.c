#include <math.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "qreplay/error.h"
#include "qreplay/random.h"
#include "qreplay/synth.h"

qr_synth_cfg qr_synth_default(uint64_t seed)
{
    return (qr_synth_cfg){
        .seed = seed, .burst_mean = 64, .idle_mean_ns = 50000, .jitter_ns = 20, .start_ns = 0};
}

static const double gaps_ns[] = {12000, 4800, 2400, 1200};

int qr_synth_flow(const qr_synth_cfg *cfg, uint64_t flow, size_t n, int64_t *times)
{
    if (!cfg || (!times && n) || !(cfg->burst_mean >= 1) || cfg->idle_mean_ns < 0 ||
        cfg->jitter_ns < 0 || cfg->jitter_ns >= 600)
        return QR_EINVAL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return QR_ENOMEM;
    gsl_rng_set(r, (unsigned long)qr_seed_derive(cfg->seed, "synth", flow));
    double t = (double)cfg->start_ns;
    size_t i = 0;
    while (i < n) {
        unsigned burst = gsl_ran_geometric(r, 1.0 / cfg->burst_mean);
        double gap = gaps_ns[gsl_rng_uniform_int(r, 4)];
        size_t change_at = gsl_rng_uniform(r) < 1.0 / 3.0 ? gsl_rng_uniform_int(r, burst) : burst;
        for (unsigned j = 0; j < burst && i < n; j++, i++) {
            if (j == change_at)
                gap = gaps_ns[gsl_rng_uniform_int(r, 4)];
            if (j > 0) {
                double jit = cfg->jitter_ns
                                 ? (gsl_rng_uniform(r) * 2.0 - 1.0) * (double)cfg->jitter_ns
                                 : 0.0;
                t += gap + jit;
            }
            times[i] = (int64_t)llround(t);
            if (i > 0 && times[i] < times[i - 1])
                times[i] = times[i - 1];
        }
        if (cfg->idle_mean_ns > 0)
            t += gsl_ran_exponential(r, (double)cfg->idle_mean_ns);
        t += gaps_ns[3];
    }
    gsl_rng_free(r);
    return QR_OK;
}
