/* qreplay: the tables of paths.h5 (qreplay paths), as schema.h describes tables: a row struct and
 * its schema each. docs/FORMATS.md describes them for users. */
#ifndef QREPLAY_SCHEMA_PATHS_H
#define QREPLAY_SCHEMA_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* paths.h5: one message, the parent the method found and, from a scorer, the true one. */
typedef struct qr_row_paths_msg {
    uint64_t msg;
    uint32_t src, dst, conn;
    int64_t send_ns, recv_ns; /* on the sender's and the receiver's clocks; INT64_MIN: unknown */
    uint64_t bytes;
    int64_t parent;      /* the most likely parent; -1: spontaneous */
    double p;            /* its probability */
    int64_t true_parent; /* -1: a root; -2: no truth */
} qr_row_paths_msg;
extern const qr_h5_schema qr_schema_paths_msg;

/* paths.h5: one path pattern. */
#define QR_PATHS_SHAPE_MAX 256
typedef struct qr_row_paths_pattern {
    uint32_t rank;                  /* by expected count, from 1 */
    char shape[QR_PATHS_SHAPE_MAX]; /* cut with "..." when longer */
    uint32_t hops;
    uint64_t count;
    double expected;
    int64_t true_count; /* requests whose true tree has this shape; -1: no truth */
} qr_row_paths_pattern;
extern const qr_h5_schema qr_schema_paths_pattern;

/* paths.h5: one hop of a pattern with its delays. */
typedef struct qr_row_paths_hop {
    uint32_t rank, pos, src, dst;
    int32_t parent;
    uint64_t node_n;
    double node_mean_ns;
    uint64_t net_n;
    double net_mean_ns;
} qr_row_paths_hop;
extern const qr_h5_schema qr_schema_paths_hop;

/* paths.h5: one delay measured, for histograms. */
typedef struct qr_row_paths_delay {
    uint32_t rank, pos;
    uint8_t network; /* 0: the node delay before the hop; 1: the hop's network delay */
    int64_t ns;
} qr_row_paths_delay;
extern const qr_h5_schema qr_schema_paths_delay;

/* paths.h5: a host or link named slow. */
typedef struct qr_row_paths_suspect {
    char kind[8]; /* host or link */
    uint32_t a, b;
    double delay_ns, baseline_ns;
    uint64_t n;
} qr_row_paths_suspect;
extern const qr_h5_schema qr_schema_paths_suspect;

/* paths.h5: one host's clock offset as estimated. */
typedef struct qr_row_paths_offset {
    uint32_t host;
    int64_t offset_ns;
} qr_row_paths_offset;
extern const qr_h5_schema qr_schema_paths_offset;

/* Every table of paths.h5, NULL-terminated. */
extern const qr_h5_schema *const qr_schemas_paths[];

#ifdef __cplusplus
}
#endif
#endif
