/* qreplay: the HDF5 result writer. A result file is written under a temporary name in the same
 * folder ("NAME.partial-PID") and renamed to its final name by qr_h5_commit: an interrupted or
 * failed run never leaves a half-written file under the final name.
 *
 * Tables are compound datasets with named fields, appended in rows, chunked and compressed
 * (shuffle + deflate), each field's unit in the dataset attribute "unit:<field>". */
#ifndef QREPLAY_H5_H
#define QREPLAY_H5_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_h5 qr_h5;
typedef struct qr_h5_table qr_h5_table;

typedef enum {
    QR_H5_U8,
    QR_H5_U16,
    QR_H5_U32,
    QR_H5_U64,
    QR_H5_I32,
    QR_H5_I64,
    QR_H5_F64,
    QR_H5_STR, /* fixed-size, NUL-terminated char array of `size` bytes */
} qr_h5_type;

/* One field of a table's row struct. */
typedef struct qr_h5_field {
    const char *name;
    qr_h5_type type;
    size_t offset;    /* offsetof(row struct, member) */
    size_t size;      /* for QR_H5_STR: the array's size; ignored otherwise */
    const char *unit; /* "ns", "bytes", "MTU", "1" ...; NULL for none */
} qr_h5_field;

/* Start a result file that will be named `path`. Returns 0 or QR_EHDF5 / QR_EIO with the reason
 * in errbuf. Caller owns *out: qr_h5_commit (keep) or qr_h5_abort (discard) releases it. */
int qr_h5_create(qr_h5 **out, const char *path, char *errbuf);

/* Create a group and any missing parents ("/replay/tagged_th_5us"). Returns 0 or QR_EHDF5. */
int qr_h5_group(qr_h5 *f, const char *path, char *errbuf);

/* Attributes on a group or dataset (created if missing, replaced if present). */
int qr_h5_attr_str(qr_h5 *f, const char *obj, const char *name, const char *value, char *errbuf);
int qr_h5_attr_i64(qr_h5 *f, const char *obj, const char *name, int64_t value, char *errbuf);
int qr_h5_attr_u64(qr_h5 *f, const char *obj, const char *name, uint64_t value, char *errbuf);
int qr_h5_attr_f64(qr_h5 *f, const char *obj, const char *name, double value, char *errbuf);

/* Create an empty table at `path` (parent groups are created) whose rows are structs of
 * row_size bytes described by fields. chunk_rows 0 picks a default. Caller owns *out
 * (qr_h5_table_close, before commit). */
int qr_h5_table_create(qr_h5_table **out, qr_h5 *f, const char *path, const qr_h5_field *fields,
                       size_t n_fields, size_t row_size, size_t chunk_rows, char *errbuf);

/* Deflate t's chunks with run-length matches only (zlib's Z_RLE, the same format; HDF5 reads
 * them as any): about a third of the compression's time, a few per cent larger on per-arrival
 * tables, up to a sixth larger on tables of varied bytes. For the large per-arrival tables whose
 * writing bounds a command (results.h5's qdiff). Call before the first append. */
void qr_h5_table_rle(qr_h5_table *t);

/* Append n rows (an array of row structs). Rows are buffered; returns 0 or QR_EHDF5. */
int qr_h5_table_append(qr_h5_table *t, const void *rows, size_t n, char *errbuf);

/* Rows appended so far. */
uint64_t qr_h5_table_rows(const qr_h5_table *t);

/* Flush and close the table; frees t (NULL is allowed). Returns 0 or QR_EHDF5. */
int qr_h5_table_close(qr_h5_table *t, char *errbuf);

/* Close the file and rename it to its final name. Frees f. Returns 0, or QR_EHDF5 / QR_EIO (then
 * the temporary file is removed and nothing has the final name), or QR_ESTATE if a table is still
 * open (then the file is aborted as by qr_h5_abort). */
int qr_h5_commit(qr_h5 *f, char *errbuf);

/* Close the file and remove it; nothing is left under either name. Frees f and every table still
 * open on it (their handles become invalid); NULL is allowed. */
void qr_h5_abort(qr_h5 *f);

/* The temporary name the file is written under until commit (borrowed from f). */
const char *qr_h5_partial_path(const qr_h5 *f);

/* Reading results back (for replays of a recording, metrics reruns and tests). */
typedef struct qr_h5_reader qr_h5_reader;

/* Open an HDF5 file read-only. Returns 0, QR_ENOENT (no such file) or QR_EFORMAT (not HDF5) with
 * "FILE: reason" in errbuf. Caller owns *out (qr_h5_close). */
int qr_h5_open(qr_h5_reader **out, const char *path, char *errbuf);
/* Close; NULL is allowed. */
void qr_h5_close(qr_h5_reader *r);
/* A string attribute of object obj; caller owns *value (qr_h5_str_free). Returns 0 or QR_ENOTFOUND
 * ("FILE: OBJ: no attribute NAME"). */
int qr_h5_read_attr_str(qr_h5_reader *r, const char *obj, const char *name, char **value,
                        char *errbuf);
/* A numeric attribute, converted to double. Returns 0 or QR_ENOTFOUND. */
int qr_h5_read_attr_f64(qr_h5_reader *r, const char *obj, const char *name, double *value,
                        char *errbuf);
/* Read a whole table into an allocated array of row structs (caller owns it: qr_h5_rows_free)
 * described by fields (matched by name; fields the file lacks are an error). Returns 0,
 * QR_ENOTFOUND (no such table), QR_EFORMAT (a field missing or of another kind) or QR_ENOMEM. */
int qr_h5_read_table(qr_h5_reader *r, const char *path, const qr_h5_field *fields, size_t n_fields,
                     size_t row_size, void **rows, size_t *n_rows, char *errbuf);

/* Release rows read by qr_h5_read_table (or schema.h's qr_h5_read_rows, and the row arrays other
 * core functions hand out); NULL is allowed. */
void qr_h5_rows_free(void *rows);

/* Release a string read by qr_h5_read_attr_str; NULL is allowed. */
void qr_h5_str_free(char *value);

#ifdef __cplusplus
}
#endif
#endif
