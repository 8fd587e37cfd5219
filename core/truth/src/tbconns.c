/* The imported connections of a testbed's recording, to name the direction of a switch's captured
 * packet (truth_internal.h). */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/common.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/schema.h"
#include "truth_internal.h"

struct qri_conn {
    uint8_t a0[16], a1[16]; /* initiator, responder */
    uint16_t p0, p1;
    uint32_t flow;
};

static int cmp_conn(const void *x, const void *y)
{
    const struct qri_conn *a = x, *b = y;
    int c = memcmp(a->a0, b->a0, 16);
    if (!c)
        c = memcmp(a->a1, b->a1, 16);
    if (!c)
        c = (int)a->p0 - (int)b->p0;
    if (!c)
        c = (int)a->p1 - (int)b->p1;
    return c;
}

uint32_t qri_tb_dir_of(const qri_tb_conns *cs, const qr_capture_packet *p)
{
    struct qri_conn k;
    memcpy(k.a0, p->src, 16);
    memcpy(k.a1, p->dst, 16);
    k.p0 = p->src_port;
    k.p1 = p->dst_port;
    const struct qri_conn *f = bsearch(&k, cs->c, cs->n, sizeof k, cmp_conn);
    if (f)
        return qr_dir_data(f->flow);
    memcpy(k.a0, p->dst, 16);
    memcpy(k.a1, p->src, 16);
    k.p0 = p->dst_port;
    k.p1 = p->src_port;
    f = bsearch(&k, cs->c, cs->n, sizeof k, cmp_conn);
    return f ? qr_dir_ack(f->flow) : UINT32_MAX;
}

int qri_tb_conns_load(const char *rec_dir, const qr_flow_table *ft, qri_tb_conns *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    char path[4200];
    snprintf(path, sizeof path, "%s/recording.h5", rec_dir);
    qr_h5_reader *h = NULL;
    qr_row_import_conn *rows = NULL;
    size_t n = 0;
    double base = 0;
    int rc = qr_h5_open(&h, path, errbuf);
    if (!rc && qr_h5_read_rows(h, "/import/connections", &qr_schema_import_conn, (void **)&rows, &n,
                               errbuf))
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not an imported recording (no /import)", path);
    if (!rc)
        rc = qr_h5_read_attr_f64(h, "/import", "time_base_ns", &base, errbuf);
    qr_h5_close(h);
    out->base = (int64_t)base;
    if (!rc && !(out->c = calloc(n ? n : 1, sizeof *out->c)))
        rc = QR_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        struct qri_conn *c = &out->c[i];
        if (qr_addr_parse(rows[i].addr0, c->a0) || qr_addr_parse(rows[i].addr1, c->a1) ||
            rows[i].flow >= qr_flow_table_flows(ft))
            rc = qri_err(errbuf, QR_EFORMAT, "%s: /import/connections row %zu is malformed", path,
                         i);
        c->p0 = rows[i].port0;
        c->p1 = rows[i].port1;
        c->flow = rows[i].flow;
    }
    qr_h5_rows_free(rows);
    if (!rc) {
        out->n = n;
        qsort(out->c, n, sizeof *out->c, cmp_conn);
    }
    return rc;
}

void qri_tb_conns_ports(const qri_tb_conns *cs, uint32_t flow, uint16_t *p0, uint16_t *p1)
{
    *p0 = *p1 = 0;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->c[i].flow == flow) {
            *p0 = cs->c[i].p0;
            *p1 = cs->c[i].p1;
            return;
        }
}

void qri_tb_conns_free(qri_tb_conns *cs)
{
    free(cs->c);
    memset(cs, 0, sizeof *cs);
}
