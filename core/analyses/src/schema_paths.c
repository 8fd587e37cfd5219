/* The tables of paths.h5 (qreplay paths) (schema_paths.h). */
#include <stddef.h>

#include "qreplay/schema_paths.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

static const qr_h5_field msg_fields[] = {
    {"msg", QR_H5_U64, F(qr_row_paths_msg, msg), 0, "index in the trace"},
    {"src", QR_H5_U32, F(qr_row_paths_msg, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_paths_msg, dst), 0, "host"},
    {"conn", QR_H5_U32, F(qr_row_paths_msg, conn), 0, "connection"},
    {"send_ns", QR_H5_I64, F(qr_row_paths_msg, send_ns), 0, "sender's clock; INT64_MIN unknown"},
    {"recv_ns", QR_H5_I64, F(qr_row_paths_msg, recv_ns), 0, "receiver's clock; INT64_MIN unknown"},
    {"bytes", QR_H5_U64, F(qr_row_paths_msg, bytes), 0, NULL},
    {"parent", QR_H5_I64, F(qr_row_paths_msg, parent), 0, "most likely parent; -1 spontaneous"},
    {"p", QR_H5_F64, F(qr_row_paths_msg, p), 0, "its probability"},
    {"true_parent", QR_H5_I64, F(qr_row_paths_msg, true_parent), 0,
     "truth (scorer): -1 a root, -2 no truth"}};
const qr_h5_schema qr_schema_paths_msg = SCHEMA("paths_msg", qr_row_paths_msg, msg_fields);

static const qr_h5_field pattern_fields[] = {
    {"rank", QR_H5_U32, F(qr_row_paths_pattern, rank), 0, "by expected count, from 1"},
    {"shape", QR_H5_STR, F(qr_row_paths_pattern, shape), QR_PATHS_SHAPE_MAX,
     "src>dst(children), canonical"},
    {"hops", QR_H5_U32, F(qr_row_paths_pattern, hops), 0, "messages"},
    {"count", QR_H5_U64, F(qr_row_paths_pattern, count), 0, "roots whose best instance it is"},
    {"expected", QR_H5_F64, F(qr_row_paths_pattern, expected), 0, "sum of instance scores"},
    {"true_count", QR_H5_I64, F(qr_row_paths_pattern, true_count), 0,
     "truth (scorer): requests of this shape; -1 no truth"}};
const qr_h5_schema qr_schema_paths_pattern =
    SCHEMA("paths_pattern", qr_row_paths_pattern, pattern_fields);

static const qr_h5_field hop_fields[] = {
    {"rank", QR_H5_U32, F(qr_row_paths_hop, rank), 0, "its pattern"},
    {"pos", QR_H5_U32, F(qr_row_paths_hop, pos), 0, "canonical position, from 0 (the root)"},
    {"src", QR_H5_U32, F(qr_row_paths_hop, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_paths_hop, dst), 0, "host"},
    {"parent", QR_H5_I32, F(qr_row_paths_hop, parent), 0, "position; -1 the root"},
    {"node_n", QR_H5_U64, F(qr_row_paths_hop, node_n), 0, "node delays measured"},
    {"node_mean_ns", QR_H5_F64, F(qr_row_paths_hop, node_mean_ns), 0,
     "at src, from the parent's arrival to this send"},
    {"net_n", QR_H5_U64, F(qr_row_paths_hop, net_n), 0, "network delays measured"},
    {"net_mean_ns", QR_H5_F64, F(qr_row_paths_hop, net_mean_ns), 0,
     "receive minus send, offsets taken out"}};
const qr_h5_schema qr_schema_paths_hop = SCHEMA("paths_hop", qr_row_paths_hop, hop_fields);

static const qr_h5_field delay_fields[] = {
    {"rank", QR_H5_U32, F(qr_row_paths_delay, rank), 0, "its pattern"},
    {"pos", QR_H5_U32, F(qr_row_paths_delay, pos), 0, "its hop"},
    {"network", QR_H5_U8, F(qr_row_paths_delay, network), 0, "0 node delay, 1 network delay"},
    {"ns", QR_H5_I64, F(qr_row_paths_delay, ns), 0, NULL}};
const qr_h5_schema qr_schema_paths_delay = SCHEMA("paths_delay", qr_row_paths_delay, delay_fields);

static const qr_h5_field suspect_fields[] = {
    {"kind", QR_H5_STR, F(qr_row_paths_suspect, kind), 8, "host or link"},
    {"a", QR_H5_U32, F(qr_row_paths_suspect, a), 0, "host"},
    {"b", QR_H5_U32, F(qr_row_paths_suspect, b), 0, "host (a link's other end; a for a host)"},
    {"delay_ns", QR_H5_F64, F(qr_row_paths_suspect, delay_ns), 0,
     "host: mean node delay in its role; link: median network delay"},
    {"baseline_ns", QR_H5_F64, F(qr_row_paths_suspect, baseline_ns), 0,
     "the median of its peers, or of every link"},
    {"n", QR_H5_U64, F(qr_row_paths_suspect, n), 0, "delays"}};
const qr_h5_schema qr_schema_paths_suspect =
    SCHEMA("paths_suspect", qr_row_paths_suspect, suspect_fields);

static const qr_h5_field offset_fields[] = {
    {"host", QR_H5_U32, F(qr_row_paths_offset, host), 0, NULL},
    {"offset_ns", QR_H5_I64, F(qr_row_paths_offset, offset_ns), 0,
     "its clock minus host 0's (or its component's first host's)"}};
const qr_h5_schema qr_schema_paths_offset =
    SCHEMA("paths_offset", qr_row_paths_offset, offset_fields);

const qr_h5_schema *const qr_schemas_paths[] = {&qr_schema_paths_msg,
                                                &qr_schema_paths_pattern,
                                                &qr_schema_paths_hop,
                                                &qr_schema_paths_delay,
                                                &qr_schema_paths_suspect,
                                                &qr_schema_paths_offset,
                                                NULL};
