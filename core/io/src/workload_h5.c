/* workload.h5 (workload_h5.h). */
#include <stdlib.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/schema.h"
#include "qreplay/workload.h"
#include "qreplay/workload_h5.h"

int qr_workload_write(const char *path, const qr_scenario *s, const qr_flow *flows, size_t n,
                      const int64_t *offsets, uint32_t hosts, char *errbuf)
{
    qr_row_workload_flow *rows = malloc((n ? n : 1) * sizeof *rows);
    qr_row_clock *clock = malloc((hosts ? hosts : 1) * sizeof *clock);
    qr_h5 *f = NULL;
    int rc;
    if (!rows || !clock) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        rows[i] = (qr_row_workload_flow){flows[i].id,    flows[i].src,      flows[i].dst,
                                         flows[i].bytes, flows[i].start_ns, flows[i].incast};
    for (uint32_t h = 0; h < hosts; h++)
        clock[h] = (qr_row_clock){h, offsets[h]};
    double offered = qr_workload_offered_load(qr_scenario_config(s), flows, n, hosts);
    QRI_TRY(qr_h5_create(&f, path, errbuf));
    QRI_TRY(qr_scenario_write_h5(s, f, "/", errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/flows", &qr_schema_workload_flow, rows, n, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/flows", "offered_load", offered, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/clock", &qr_schema_clock, clock, hosts, errbuf));
    free(rows);
    free(clock);
    return qr_h5_commit(f, errbuf);
fail:
    free(rows);
    free(clock);
    qr_h5_abort(f);
    return rc;
}
