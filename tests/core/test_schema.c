/* The one schema: every table is documented in docs/FORMATS.md field by field, fields fit their
 * row structs, and a table written with a schema reads back equal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/schema.h"
#include "qreplay/schema_blame.h"
#include "qreplay/schema_diagnose.h"
#include "qreplay/schema_hoptrace.h"
#include "qreplay/schema_paths.h"
#include "qreplay/schema_pingmesh.h"
#include "qreplay/schema_tcptrace.h"

/* Every table of every file kind: the run's files and each analysis's. */
static const qr_h5_schema *const *const kinds[] = {
    qr_schemas_run,      qr_schemas_blame,    qr_schemas_diagnose, qr_schemas_hoptrace,
    qr_schemas_pingmesh, qr_schemas_tcptrace, qr_schemas_paths};

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

Test(schema, every_table_and_field_is_documented)
{
    char *doc = slurp(QR_SOURCE_DIR "/docs/FORMATS.md");
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (const qr_h5_schema *const *s = kinds[k]; *s; s++) {
            char line[128];
            /* each table has a section "### <kind> rows" listing "| `field` |" for every field */
            snprintf(line, sizeof line, "<a id=\"%s\"></a>", (*s)->name);
            char *sec = strstr(doc, line);
            cr_assert_not_null(sec, "docs/FORMATS.md has no section for the %s table", (*s)->name);
            char *end = strstr(sec + 1, "<a id=");
            for (size_t i = 0; i < (*s)->n_fields; i++) {
                const qr_h5_field *f = &(*s)->fields[i];
                snprintf(line, sizeof line, "| `%s` |", f->name);
                char *at = strstr(sec, line);
                cr_assert(at && (!end || at < end),
                          "docs/FORMATS.md: %s table: no row for field %s", (*s)->name, f->name);
                cr_assert_leq(f->offset + (f->type == QR_H5_STR ? f->size : 1), (*s)->row_size);
            }
        }
    free(doc);
}

Test(schema, rows_round_trip)
{
    char path[64], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "/tmp/qr-schema-%d.h5", (int)getpid());
    qr_h5 *f;
    qr_row_drop d[3] = {{1, 0, 5, 2, 3, 1500, 1, 0, 3000, 2000},
                        {(uint64_t)7 << 32 | 9, 7, 6, 4, 1, 52, 3, 1, 0, -5},
                        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_write_rows(f, "/a/drops", &qr_schema_drop, d, 3, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_write_rows(f, "/empty", &qr_schema_flow, NULL, 0, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK);
    qr_row_drop *back;
    size_t n;
    cr_assert_eq(qr_h5_read_rows(r, "/a/drops", &qr_schema_drop, (void **)&back, &n, err), QR_OK);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < 3; i++)
        cr_assert(back[i].packet == d[i].packet && back[i].threshold == d[i].threshold &&
                      back[i].tagged == d[i].tagged && back[i].sw == d[i].sw,
                  "row %zu", i);
    qr_h5_rows_free(back);
    qr_row_flow *fl;
    cr_assert_eq(qr_h5_read_rows(r, "/empty", &qr_schema_flow, (void **)&fl, &n, err), QR_OK);
    cr_assert_eq(n, 0);
    qr_h5_rows_free(fl);
    /* a table read with a schema that asks for a field it lacks */
    cr_assert_eq(qr_h5_read_rows(r, "/a/drops", &qr_schema_flow, (void **)&fl, &n, err),
                 QR_EFORMAT);
    qr_h5_close(r);
    unlink(path);
}
