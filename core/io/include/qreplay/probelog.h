/* qreplay: the Pingmesh agents' log of a run, as the agents would upload it: every probe's pair,
 * hosts, source port, send time and round-trip time (or none), and whether the probed host
 * answered. It is stored as /probes of the runtime's truth.h5, beside columns only the simulator
 * knows (where a lost probe died); this reader reads the agents' columns and nothing else, so an
 * analysis given the log cannot see the truth. */
#ifndef QREPLAY_PROBELOG_H
#define QREPLAY_PROBELOG_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/common.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One probe as its agents logged it (the agents' columns of a /probes row). */
typedef struct qr_row_probe_obs {
    uint32_t probe, pair, src, dst;
    uint16_t sport;
    int64_t sent_ns;
    int64_t rtt_ns; /* -1: no answer before the run ended */
    uint8_t echoed; /* the probed host's agent sent an answer */
} qr_row_probe_obs;
/* The agents' columns of truth.h5 /probes (a reading schema: the table is qr_schema_probe). */
extern const qr_h5_schema qr_schema_probe_obs;

/* A run's probe log. */
typedef struct qr_probe_log {
    char path[QR_PATH_MAX];   /* the file it was read from, for messages */
    qr_scenario *scenario;    /* the run's scenario (its pingmesh keys, topology, links) */
    int64_t sim_end_ns;       /* when the run ended: probes sent later than end - timeout have
                                 no answer yet */
    uint64_t traffic_bytes;   /* bytes the hosts sent for their flows (the probes' share) */
    qr_row_probe_obs *probes; /* in send order */
    size_t n_probes;
} qr_probe_log;

/* Read the probe log of a run from its truth.h5 at path: the scenario, the run's end, the agents'
 * columns of /probes, and the bytes the hosts sent (/directions sent_bytes). Caller owns *out
 * (qr_probe_log_free, also after an error). Returns 0; QR_EFORMAT ("not a runtime's truth.h5");
 * QR_ENOTFOUND ("has no /probes: the run did not probe"); or the reader's error, naming the file.
 */
int qr_probe_log_read(const char *path, qr_probe_log *out, char *errbuf);
/* Release what *log holds (NULL allowed); *log is zeroed. */
void qr_probe_log_free(qr_probe_log *log);

#ifdef __cplusplus
}
#endif
#endif
