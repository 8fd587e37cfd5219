/* What-if analysis: a run's result tables in whatif.h5, written and read back (whatif.h). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/metrics.h"
#include "qreplay/queuelog.h"
#include "qreplay/switchport.h"
#include "qreplay/topology.h"
#include "qreplay/whatif.h"

#define F(T, m) offsetof(T, m), sizeof(((T *)0)->m)
#define ROWF(name, type, member, unit)                                                             \
    {                                                                                              \
        name, type, offsetof(qr_whatif_row, member), 0, unit                                       \
    }
#define LAYERF(prefix, type, member, unit)                                                         \
    ROWF("edge_" prefix, type, member[0], unit), ROWF("agg_" prefix, type, member[1], unit),       \
        ROWF("core_" prefix, type, member[2], unit)
#define LAYER4F(prefix, type, member, unit)                                                        \
    LAYERF(prefix, type, member, unit), ROWF("all_" prefix, type, member[3], unit)

static const qr_h5_field row_fields[] = {
    ROWF("point", QR_H5_U32, point, NULL),
    ROWF("kind", QR_H5_U8, kind, NULL),
    ROWF("arrivals", QR_H5_U64, arrivals, "packets"),
    ROWF("admitted", QR_H5_U64, admitted, "packets"),
    ROWF("drops", QR_H5_U64, drops, "packets"),
    ROWF("drop_bytes", QR_H5_U64, drop_bytes, "bytes"),
    ROWF("tagged_drops", QR_H5_U64, tagged_drops, "packets"),
    ROWF("ecn_marks", QR_H5_U64, ecn_marks, "packets"),
    LAYERF("drops", QR_H5_U64, layer_drops, "packets"),
    LAYERF("ecn_marks", QR_H5_U64, layer_ecn_marks, "packets"),
    ROWF("flows", QR_H5_U64, flows, "flows"),
    ROWF("flows_lossy", QR_H5_U64, flows_lossy, "flows"),
    ROWF("lossy_share", QR_H5_F64, lossy_share, "1"),
    ROWF("new_drops", QR_H5_U64, new_drops, "packets"),
    ROWF("flows_new_drop", QR_H5_U64, flows_new_drop, "flows"),
    ROWF("sent_after_new_drop", QR_H5_U64, sent_after_new_drop, "packets"),
    LAYER4F("q_p50", QR_H5_U64, q_p50_bytes, "bytes"),
    LAYER4F("q_p99", QR_H5_U64, q_p99_bytes, "bytes"),
    LAYER4F("q_max", QR_H5_U64, q_max_bytes, "bytes"),
    LAYER4F("sw_p50", QR_H5_U64, sw_p50_bytes, "bytes"),
    LAYER4F("sw_p99", QR_H5_U64, sw_p99_bytes, "bytes"),
    LAYER4F("sw_max", QR_H5_U64, sw_max_bytes, "bytes"),
    LAYER4F("above50", QR_H5_F64, above50, "1"),
    LAYER4F("above90", QR_H5_F64, above90, "1"),
    ROWF("delivered", QR_H5_U64, delivered, "packets"),
    ROWF("delay_p50", QR_H5_I64, delay_p50_ns, "ns"),
    ROWF("delay_p99", QR_H5_I64, delay_p99_ns, "ns"),
    ROWF("delay_max", QR_H5_I64, delay_max_ns, "ns"),
    ROWF("flow_delay_p50", QR_H5_I64, flow_delay_p50_ns, "ns"),
    ROWF("flow_delay_p99", QR_H5_I64, flow_delay_p99_ns, "ns"),
    LAYER4F("hop_delay_p99", QR_H5_I64, hop_delay_p99_ns, "ns"),
    ROWF("blackholes", QR_H5_U64, blackholes, "episodes"),
    ROWF("blackhole_drops", QR_H5_U64, blackhole_drops, "packets"),
    ROWF("span", QR_H5_I64, span_ns, "ns"),
    ROWF("model_mismatches", QR_H5_U64, model_mismatches, "arrivals"),
};

#define QF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_queue_row, member), 0, unit                                 \
    }
static const qr_h5_field queue_fields[] = {
    QF("point", QR_H5_U32, point, NULL),
    QF("kind", QR_H5_U8, kind, NULL),
    QF("switch", QR_H5_U32, sw, NULL),
    QF("port", QR_H5_U32, port, NULL),
    QF("layer", QR_H5_U8, layer, NULL),
    QF("arrivals", QR_H5_U64, arrivals, "packets"),
    QF("drops", QR_H5_U64, drops, "packets"),
    QF("ecn_marks", QR_H5_U64, ecn_marks, "packets"),
    QF("q_p99", QR_H5_U64, q_p99_bytes, "bytes"),
    QF("q_max", QR_H5_U64, q_max_bytes, "bytes"),
    QF("above50", QR_H5_F64, above50, "1"),
    QF("above90", QR_H5_F64, above90, "1"),
};

#define PF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_quantile_row, member), 0, unit                              \
    }
static const qr_h5_field quantile_fields[] = {
    PF("point", QR_H5_U32, point, NULL),
    PF("kind", QR_H5_U8, kind, NULL),
    PF("layer", QR_H5_U8, layer, NULL),
    PF("p", QR_H5_F64, p, "1"),
    PF("queue_bytes", QR_H5_U64, queue_bytes, "bytes"),
    PF("switch_bytes", QR_H5_U64, switch_bytes, "bytes"),
    PF("delay", QR_H5_I64, delay_ns, "ns"),
};

#define BF(name, type, member, unit)                                                               \
    {                                                                                              \
        name, type, offsetof(qr_whatif_blackhole_row, member), 0, unit                             \
    }
#define BCF(i)                                                                                     \
    BF("culprit" #i "_port", QR_H5_U32, ep.culprits[i].port, NULL),                                \
        BF("culprit" #i "_growth", QR_H5_U64, ep.culprits[i].growth_bytes, "bytes")
static const qr_h5_field blackhole_fields[] = {
    BF("point", QR_H5_U32, point, NULL),
    BF("kind", QR_H5_U8, kind, NULL),
    BF("switch", QR_H5_U32, ep.sw, NULL),
    BF("port", QR_H5_U32, ep.port, NULL),
    BF("start", QR_H5_I64, ep.start_ns, "ns"),
    BF("end", QR_H5_I64, ep.end_ns, "ns"),
    BF("drops", QR_H5_U64, ep.drops, "packets"),
    BF("drop_bytes", QR_H5_U64, ep.drop_bytes, "bytes"),
    BF("peak_time", QR_H5_I64, ep.peak_ns, "ns"),
    BF("peak_bytes", QR_H5_U64, ep.peak_bytes, "bytes"),
    BF("queue_bytes", QR_H5_U64, ep.queue_bytes, "bytes"),
    BF("peak_threshold", QR_H5_I64, ep.peak_threshold, "bytes"),
    BF("threshold", QR_H5_I64, ep.threshold, "bytes"),
    BF("peak_total_bytes", QR_H5_U64, ep.peak_total_bytes, "bytes"),
    BF("total_bytes", QR_H5_U64, ep.total_bytes, "bytes"),
    BF("culprits", QR_H5_U32, ep.n_culprits, NULL),
    BCF(0),
    BCF(1),
    BCF(2),
    BCF(3),
};

#define NF(a) (sizeof a / sizeof a[0])

struct table_io {
    const char *name;
    const qr_h5_field *fields;
    size_t n_fields, row_size;
};

static const struct table_io tables[4] = {
    {"summary", row_fields, NF(row_fields), sizeof(qr_whatif_row)},
    {"queues", queue_fields, NF(queue_fields), sizeof(qr_whatif_queue_row)},
    {"quantiles", quantile_fields, NF(quantile_fields), sizeof(qr_whatif_quantile_row)},
    {"blackholes", blackhole_fields, NF(blackhole_fields), sizeof(qr_whatif_blackhole_row)},
};

const qr_h5_field *qr_whatif_table_fields(int table, const char **name, size_t *n)
{
    if (table < 0 || table > 3)
        return NULL;
    *name = tables[table].name;
    *n = tables[table].n_fields;
    return tables[table].fields;
}

static int write_table(qr_h5 *f, int t, const void *rows, size_t n, char *errbuf)
{
    char path[64];
    snprintf(path, sizeof path, "/%s", tables[t].name);
    qr_h5_table *tab;
    int rc = qr_h5_table_create(&tab, f, path, tables[t].fields, tables[t].n_fields,
                                tables[t].row_size, 0, errbuf);
    if (rc)
        return rc;
    rc = n ? qr_h5_table_append(tab, rows, n, errbuf) : QR_OK;
    int rc2 = qr_h5_table_close(tab, rc ? NULL : errbuf);
    return rc ? rc : rc2;
}

int qr_whatif_results_write(qr_h5 *f, const qr_whatif_result *rs, size_t n, char *errbuf)
{
    /* one table each, every result's rows in order */
    size_t counts[4] = {n, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        counts[1] += rs[i].n_queues;
        counts[2] += rs[i].n_quantiles;
        counts[3] += rs[i].n_blackholes;
    }
    int rc = QR_OK;
    for (int t = 0; !rc && t < 4; t++) {
        char *buf = malloc(counts[t] ? counts[t] * tables[t].row_size : 1);
        if (!buf)
            return QR_ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const void *src = t == 0   ? (const void *)&rs[i].row
                              : t == 1 ? (const void *)rs[i].queues
                              : t == 2 ? (const void *)rs[i].quantiles
                                       : (const void *)rs[i].blackholes;
            size_t m = t == 0   ? 1
                       : t == 1 ? rs[i].n_queues
                       : t == 2 ? rs[i].n_quantiles
                                : rs[i].n_blackholes;
            if (m)
                memcpy(buf + k * tables[t].row_size, src, m * tables[t].row_size);
            k += m;
        }
        rc = write_table(f, t, buf, k, errbuf);
        free(buf);
    }
    return rc;
}

void qr_whatif_results_free(qr_whatif_result *rs, size_t n)
{
    for (size_t i = 0; rs && i < n; i++)
        qr_whatif_result_free(&rs[i]);
    free(rs);
}

/* Copy the rows of `all` (n of row_size bytes) whose point and kind (at the given offsets) are
 * those of run r into a new array. */
static void *rows_of(const char *all, size_t n, size_t row_size, size_t off_point, size_t off_kind,
                     const qr_whatif_row *r, size_t *count)
{
    *count = 0;
    char *out = malloc(n ? n * row_size : 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t p;
        uint8_t k;
        memcpy(&p, all + i * row_size + off_point, sizeof p);
        memcpy(&k, all + i * row_size + off_kind, sizeof k);
        if (p == r->point && k == r->kind)
            memcpy(out + (*count)++ * row_size, all + i * row_size, row_size);
    }
    return out;
}

int qr_whatif_read(const char *path, qr_whatif_result **out, size_t *n_out, char *errbuf)
{
    *out = NULL;
    *n_out = 0;
    qr_h5_reader *r;
    int rc = qr_h5_open(&r, path, errbuf);
    if (rc)
        return rc;
    void *rows[4] = {0};
    size_t n[4] = {0};
    for (int t = 0; !rc && t < 4; t++) {
        char tpath[64];
        snprintf(tpath, sizeof tpath, "/%s", tables[t].name);
        rc = qr_h5_read_table(r, tpath, tables[t].fields, tables[t].n_fields, tables[t].row_size,
                              &rows[t], &n[t], errbuf);
    }
    qr_h5_close(r);
    qr_whatif_result *rs = rc ? NULL : calloc(n[0] ? n[0] : 1, sizeof *rs);
    if (!rc && !rs)
        rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < n[0]; i++) {
        rs[i].row = ((qr_whatif_row *)rows[0])[i];
        rs[i].queues = rows_of(rows[1], n[1], sizeof(qr_whatif_queue_row),
                               offsetof(qr_whatif_queue_row, point),
                               offsetof(qr_whatif_queue_row, kind), &rs[i].row, &rs[i].n_queues);
        rs[i].quantiles = rows_of(
            rows[2], n[2], sizeof(qr_whatif_quantile_row), offsetof(qr_whatif_quantile_row, point),
            offsetof(qr_whatif_quantile_row, kind), &rs[i].row, &rs[i].n_quantiles);
        rs[i].blackholes =
            rows_of(rows[3], n[3], sizeof(qr_whatif_blackhole_row),
                    offsetof(qr_whatif_blackhole_row, point),
                    offsetof(qr_whatif_blackhole_row, kind), &rs[i].row, &rs[i].n_blackholes);
        if (!rs[i].queues || !rs[i].quantiles || !rs[i].blackholes)
            rc = QR_ENOMEM;
    }
    for (int t = 0; t < 4; t++)
        qr_h5_rows_free(rows[t]);
    if (rc) {
        qr_whatif_results_free(rs, n[0]);
        return rc;
    }
    *out = rs;
    *n_out = n[0];
    return QR_OK;
}

/* ---- prediction errors ---- */
