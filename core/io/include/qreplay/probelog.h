/* qreplay: the Pingmesh agents' log of a run, as the agents would upload it: every probe's pair,
 * hosts, source port, send time and round-trip time (or none), and whether the probed host
 * answered. It is an observation file of its own, recording/probes.h5, written by the runtime and
 * the fat-tree testbed beside the captures; where each lost probe died is the truth's alone
 * (truth.h5 /probes), read only by the scorer. */
#ifndef QREPLAY_PROBELOG_H
#define QREPLAY_PROBELOG_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/common.h"
#include "qreplay/pingmesh.h"
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
/* The agents' columns: probes.h5 /probes (and a reading schema of truth.h5 /probes). */
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

/* Write a run's probe log to path (probes.h5, whole or not at all): the scenario, the recording's
 * id, the run's end as its hosts know it, the bytes the hosts sent for their flows (the sum of
 * dirs' sent_bytes) and the agents' columns of probes[0..n). Returns 0 or the writer's error
 * naming the file. */
int qr_probe_log_write(const char *path, const qr_scenario *s, const char *recording_id,
                       int64_t end_ns, const qr_row_direction *dirs, size_t n_dirs,
                       const qr_row_probe *probes, size_t n, char *errbuf);

/* Read the probe log at path (probes.h5): the scenario, the run's end, the bytes the hosts sent,
 * the agents' probes. Caller owns *out (qr_probe_log_free, also after an error). Returns 0;
 * QR_EFORMAT ("not a probe log"); or the reader's error, naming the file. */
int qr_probe_log_read(const char *path, qr_probe_log *out, char *errbuf);
/* Release what *log holds (NULL allowed); *log is zeroed. */
void qr_probe_log_free(qr_probe_log *log);

#ifdef __cplusplus
}
#endif
#endif
