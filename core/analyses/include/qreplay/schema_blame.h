/* qreplay: the tables of blame.h5 (qreplay blame), as schema.h describes tables: a row struct and
 * its schema each. docs/FORMATS.md describes them for users. */
#ifndef QREPLAY_SCHEMA_BLAME_H
#define QREPLAY_SCHEMA_BLAME_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* blame.h5 (qreplay blame, blame.h): one cable, its votes under both methods and the truth. */
#define QR_LINK_NAME_MAX 48
typedef struct qr_row_blame_link {
    uint32_t link; /* the cable's lower directed link id (topology.h); UINT32_MAX: a name from a
                      path file that is no cable of the scenario's topology */
    char name[QR_LINK_NAME_MAX];
    char layer[12]; /* host-edge, edge-agg, agg-core; "traced" for a path file's other names */
    uint32_t a, b;  /* its ends: a host or switch number (a is the lower end), b a switch */
    double votes;
    uint32_t voters, rank;
    uint8_t flagged, noise;
    double replay_votes;
    uint32_t replay_voters, replay_rank;
    uint8_t replay_flagged, replay_noise;
    uint64_t replay_drops;
    uint8_t faulty;
    uint64_t fault_drops, congestion_drops;
} qr_row_blame_link;
extern const qr_h5_schema qr_schema_blame_link;

/* blame.h5: one flow direction that voted. */
typedef struct qr_row_blame_conn {
    uint32_t dir, flow, src, dst;
    int64_t first_loss_ns;
    uint32_t losses, unexplained, hops;
    uint32_t known; /* links of its traced path known (0: its path is unknown) */
    char culprit[QR_LINK_NAME_MAX], replay_culprit[QR_LINK_NAME_MAX];
    char true_link[QR_LINK_NAME_MAX];
    char true_cause[12];
    int32_t correct, replay_correct; /* 1 right, 0 wrong, -1 no truth */
} qr_row_blame_conn;
extern const qr_h5_schema qr_schema_blame_conn;

/* blame.h5: the flag rule on the first N voting connections. */
typedef struct qr_row_blame_curve {
    char method[8];
    uint32_t connections, fault_rank, flagged, true_flagged;
    double precision, recall;
} qr_row_blame_curve;
extern const qr_h5_schema qr_schema_blame_curve;

/* blame.h5: one method's result. */
typedef struct qr_row_blame_summary {
    char method[8];
    uint32_t connections;
    double votes;
    uint32_t flagged, true_flagged, faulty;
    double precision, recall, culprit_accuracy;
    uint32_t scored, detect_after, rank1_after;
    uint32_t traced, partial, untraced; /* voting directions: whole path, part, none known */
    uint32_t noise; /* flagged links whose directions, when flagged, lost one packet or none */
} qr_row_blame_summary;
extern const qr_h5_schema qr_schema_blame_summary;

/* blame.h5: one of 007's comparators (cover.h) on the same failed directions. */
typedef struct qr_row_blame_comparator {
    char method[8]; /* binary, integer, maxcov, tomo */
    char status[96];
    uint8_t optimal;
    double objective;
    uint32_t connections, unexplainable, explained, flagged;
    uint32_t true_flagged, faulty, scored;
    double precision, recall, culprit_accuracy;
} qr_row_blame_comparator;
extern const qr_h5_schema qr_schema_blame_comparator;

/* blame.h5: a link a comparator blamed, with its value. */
typedef struct qr_row_blame_blamed {
    char method[8];
    char name[QR_LINK_NAME_MAX];
    double value;
} qr_row_blame_blamed;
extern const qr_h5_schema qr_schema_blame_blamed;

/* blame.h5: one epoch's tally under one method: its voters (by their first loss) and what the rule
 * flagged on them alone. */
typedef struct qr_row_blame_epoch {
    char method[8];
    int64_t epoch;    /* floor(first loss / epoch) */
    int64_t start_ns; /* when it starts */
    uint32_t voters;
    double votes;
    uint32_t flagged, noise, true_flagged, faulty;
    double precision, recall;
} qr_row_blame_epoch;
extern const qr_h5_schema qr_schema_blame_epoch;

/* blame.h5: a cable with votes in one epoch. */
typedef struct qr_row_blame_epoch_link {
    char method[8];
    int64_t epoch;
    char name[QR_LINK_NAME_MAX];
    double votes;
    uint32_t rank;
    uint8_t flagged, noise;
} qr_row_blame_epoch_link;
extern const qr_h5_schema qr_schema_blame_epoch_link;

/* Every table of the file, NULL-terminated. */
extern const qr_h5_schema *const qr_schemas_blame[];

#ifdef __cplusplus
}
#endif
#endif
