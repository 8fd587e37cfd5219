/* qreplay: the tables of pingmesh.h5 (qreplay pingmesh), as schema.h describes tables: a row struct
 * and its schema each. docs/FORMATS.md describes them for users. */
#ifndef QREPLAY_SCHEMA_PINGMESH_H
#define QREPLAY_SCHEMA_PINGMESH_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pingmesh.h5 (qreplay pingmesh, pingmesh.h): one probe pair. */
typedef struct qr_row_pm_pair {
    uint32_t pair, src, dst, src_rack, dst_rack, src_pod, dst_pod;
    uint64_t probes, lost;
    double drop_rate;
    int64_t p50_ns, p99_ns; /* round-trip times of the answered probes; -1 none */
    uint64_t fault_lost, congestion_lost;
} qr_row_pm_pair;
extern const qr_h5_schema qr_schema_pm_pair;

/* pingmesh.h5: one cell of the rack matrix. */
typedef struct qr_row_pm_rack {
    uint32_t src_rack, dst_rack, src_pod, dst_pod, pairs;
    uint64_t probes, lost;
    double drop_rate;
    int64_t p50_ns, p99_ns;
} qr_row_pm_rack;
extern const qr_h5_schema qr_schema_pm_rack;

/* pingmesh.h5: one candidate place of the detection rule. */
typedef struct qr_row_pm_place {
    char kind[8]; /* spine, pod, rack, server, racks */
    char name[24];
    uint32_t index;
    uint64_t probes, lost;
    double rate, rest_rate, llr;
    uint32_t flagged; /* order flagged, from 1; 0 not flagged */
    uint32_t suspects;
    uint8_t faulty; /* truth: a suspect cable is faulty */
    /* the round trips of its answered probes and of the others' (99th percentile; -1 none), and
     * what they say of its losses: "congestion" where its p99 is at least `ratio` times the
     * rest's (a queue that drops also delays), "silent" where it is not (a silent drop delays
     * nothing), "" without answers */
    int64_t rtt_p99_ns, rest_rtt_p99_ns;
    char latency[12];
} qr_row_pm_place;
extern const qr_h5_schema qr_schema_pm_place;

/* pingmesh.h5: the rule rerun on the first N probes sent. */
typedef struct qr_row_pm_curve {
    uint64_t probes;
    int64_t time_ns; /* when the N-th probe's outcome was known (its send time + timeout) */
    uint32_t flagged, right;
    uint8_t detected; /* every faulty cable is a suspect of a flagged place */
} qr_row_pm_curve;
extern const qr_h5_schema qr_schema_pm_curve;

/* pingmesh.h5: the run's probing and the rule's score. */
typedef struct qr_row_pm_summary {
    int64_t interval_ns, timeout_ns;
    uint32_t size, pairs;
    uint64_t sent, scored, unresolved, answered, lost, late, fault_lost, congestion_lost, host_lost;
    double drop_rate;
    uint32_t flagged, right, faulty, covered;
    double precision, recall, mean_suspects;
    uint64_t detect_after;
    int64_t detect_after_ns;
    uint64_t probe_bytes, traffic_bytes;
    double probe_share, host_probe_bps_max, link_share_max;
    /* Pingmesh's drop rate from connect times ([pingmesh] connect_wait, the testbed's TCP
     * connects): connects resolved within the wait, those that took at least one SYN timeout or
     * never completed, the SYN timeouts they show; NaN rates: not measured */
    int64_t connect_wait_ns, syn_rto_ns;
    uint64_t connect_scored, connect_slow, connect_failed, syn_timeouts;
    double connect_drop_rate, syn_drop_rate;
    uint64_t connect_right, connect_missed, connect_false; /* truth: first SYN or SYN-ACK lost */
} qr_row_pm_summary;
extern const qr_h5_schema qr_schema_pm_summary;

/* pingmesh.h5: Pingmesh's SLA, per level (the servers' distance: the same rack, the same pod,
 * across the spine) and per time window: probes, drop rate, round-trip percentiles. */
typedef struct qr_row_pm_sla {
    char level[8];  /* rack, pod, spine (or "N sw": N switches apart) */
    int64_t window; /* floor(sent / window) */
    int64_t start_ns;
    uint64_t probes, lost;
    double drop_rate;
    int64_t p50_ns, p99_ns, p999_ns; /* answered probes' round trips; -1: none answered */
    uint8_t breach;                  /* 1: above a given SLA (drop rate or p99) */
} qr_row_pm_sla;
extern const qr_h5_schema qr_schema_pm_sla;

/* pingmesh.h5: Pingmesh's black-hole rule (pingmesh_analyze.h), one row per ToR and podset that
 * any black-hole symptom touches. */
typedef struct qr_row_pm_bhole {
    char kind[8]; /* tor, podset */
    char name[24];
    uint32_t index;       /* edge switch (tor) or pod (podset) */
    uint32_t members;     /* tor: its servers; podset: its ToRs */
    uint32_t symptomatic; /* of them with the symptom, when it was tested */
    double score;         /* symptomatic / members */
    uint32_t pairs;       /* symptom pairs it touched then (flagged: it explains them) */
    uint32_t flagged;     /* order flagged, from 1; 0 not */
    uint8_t faulty;       /* truth: one of its links is faulty */
} qr_row_pm_bhole;
extern const qr_h5_schema qr_schema_pm_bhole;

/* Every table of the file, NULL-terminated. */
extern const qr_h5_schema *const qr_schemas_pingmesh[];

#ifdef __cplusplus
}
#endif
#endif
