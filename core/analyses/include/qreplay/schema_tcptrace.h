/* qreplay: the tables of isolated.h5 /tcp_trace (qreplay isolate --trace), as schema.h describes
 * tables: a row struct and its schema each. docs/FORMATS.md describes them for users. */
#ifndef QREPLAY_SCHEMA_TCPTRACE_H
#define QREPLAY_SCHEMA_TCPTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One segment of a traced connection (/tcp_trace/<flow>/segments; tcptrace.h). */
typedef struct qr_row_tt_segment {
    int64_t time_ns;
    char end[9], dir[3];
    uint8_t flags;
    uint64_t seq, ack;
    uint32_t len, window;
    char retx[16];
    uint8_t lost;
    char ack_kind[10];
    uint32_t dupacks;
    int64_t held_ns;
    uint64_t packet;
} qr_row_tt_segment;
extern const qr_h5_schema qr_schema_tt_segment;

/* One change of a traced TCP variable (/tcp_trace/<flow>/vars). */
typedef struct qr_row_tt_var {
    int64_t time_ns;
    char var[12];
    int64_t value;
} qr_row_tt_var;
extern const qr_h5_schema qr_schema_tt_var;

/* Every table of the file, NULL-terminated. */
extern const qr_h5_schema *const qr_schemas_tcptrace[];

#ifdef __cplusplus
}
#endif
#endif
