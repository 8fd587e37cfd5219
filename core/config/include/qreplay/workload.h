/* qreplay: workload generation. Flow sizes from an empirical CDF (e.g. the web-search distribution
 * in data/websearch.cdf), Poisson flow arrivals at a target load, uniform random source/destination
 * pairs, and incast events. GSL random numbers, seeded from the scenario; no global state. */
#ifndef QREPLAY_WORKLOAD_H
#define QREPLAY_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/flowtable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An empirical CDF of flow sizes: points (bytes, cumulative probability), linearly interpolated. */
typedef struct qr_cdf qr_cdf;

/* Read a CDF file: one "bytes probability" pair per line ('#' starts a comment). Sizes lie in
 * [0, 1e15] bytes and probabilities in [0, 1], neither decreases, the last probability is 1 and
 * the sizes average at least one byte (a CDF of zero-byte flows would start flows without end).
 * Returns 0, QR_ENOENT, QR_ESYNTAX or QR_EVALUE with "FILE:LINE: reason" in errbuf.
 * Caller owns *out (qr_cdf_destroy). */
int qr_cdf_load(qr_cdf **out, const char *path, char *errbuf);

/* Release; NULL is allowed. */
void qr_cdf_destroy(qr_cdf *c);

/* The distribution's mean in bytes (exact for the piecewise-linear CDF). */
double qr_cdf_mean(const qr_cdf *c);

/* The size at cumulative probability u in [0, 1] (inverse CDF), rounded to whole bytes, >= 1. */
uint64_t qr_cdf_quantile(const qr_cdf *c, double u);

/* The most flows a schedule may hold (a flow list's lines, a generated background and its
 * incasts): 20 million, some 0.8 GB of schedule; the k=16 cases hold about 10^5. */
#define QR_FLOWS_MAX 20000000

typedef struct qr_workload_cfg {
    uint64_t seed; /* master seed; streams "workload.background" and "workload.incast" */
    uint32_t n_hosts;
    uint64_t link_rate_bps;     /* host link rate */
    double load;                /* background offered load per host link, fraction in [0, 1] */
    int64_t duration_ns;        /* flows start in [0, duration) */
    const qr_cdf *sizes;        /* background flow sizes (borrowed); may be NULL if load = 0 */
    double incast_rate_per_s;   /* incast events per second, network-wide */
    uint32_t incast_fanin;      /* servers per incast */
    uint64_t incast_size_bytes; /* bytes each server sends to the client */
} qr_workload_cfg;

/* Generate the schedule: background flows arrive as a Poisson process whose rate makes the offered
 * load (flow bytes, payload only) on every host's uplink `load` of its rate on average:
 * lambda = load * rate * n_hosts / (8 * mean size). Each incast event (a Poisson process of the
 * given rate) picks a client and incast_fanin distinct other hosts uniformly; each of them sends
 * incast_size_bytes to the client at the event's time. Flows are sorted by start time.
 * Caller owns *flows (qr_flows_free). Returns 0, QR_EINVAL (detail in errbuf)
 * or QR_ENOMEM. The same configuration gives the same schedule. */
int qr_workload_generate(const qr_workload_cfg *cfg, qr_flow **flows, size_t *n_flows,
                         char *errbuf);

/* Read an explicit flow list: a CSV with the header "src,dst,bytes,start" and one flow per line:
 * host indices src != dst below n_hosts, a size with its unit (20MB, 30KB, 1448B) and a start
 * time with its unit (30ms, 0). '#' starts a comment. Flows are returned sorted by start time,
 * ids in that order. Returns 0, QR_ENOENT, QR_ESYNTAX, QR_EVALUE, QR_EUNIT with "FILE:LINE: reason"
 * in errbuf. Caller owns *flows (qr_flows_free). */
int qr_flows_load(const char *path, uint32_t n_hosts, qr_flow **flows, size_t *n_flows,
                  char *errbuf);

/* The flow schedule of a scenario: its explicit flow list (pattern = flows) or the generated
 * web-search background plus incast (pattern = websearch, sizes from traffic.size_cdf). Errors name
 * the scenario key ("[traffic] flows: FILE:LINE: reason"); pattern = apps has no flow schedule
 * (QR_EVALUE: the testbed runs applications). Caller owns *flows (qr_flows_free). */
struct qr_config;
int qr_workload_from_config(const struct qr_config *c, qr_flow **flows, size_t *n_flows,
                            char *errbuf);

/* Release a schedule of qr_workload_generate, qr_flows_load or qr_workload_from_config; NULL is
 * allowed. */
void qr_flows_free(qr_flow *flows);

/* The load flows[0..n) offer: their background bytes (incast flows left out) over what the hosts'
 * links carry in c's [traffic] duration (0 when the duration is 0). */
double qr_workload_offered_load(const struct qr_config *c, const qr_flow *flows, size_t n,
                                uint32_t hosts);

#ifdef __cplusplus
}
#endif
#endif
