/* HDF5 writer: compound tables round trip, units and attributes, h5dump, and no partial file
 * ever under the final name. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"

#include "h5_tuning.h" /* core/io/src: the tuning knobs as arguments */

struct row {
    char name[16];
    uint64_t id;
    int64_t t_ns;
    double x;
    uint16_t port;
};

static const qr_h5_field fields[] = {{"name", QR_H5_STR, offsetof(struct row, name), 16, NULL},
                                     {"id", QR_H5_U64, offsetof(struct row, id), 0, NULL},
                                     {"t_ns", QR_H5_I64, offsetof(struct row, t_ns), 0, "ns"},
                                     {"x", QR_H5_F64, offsetof(struct row, x), 0, "MTU"},
                                     {"port", QR_H5_U16, offsetof(struct row, port), 0, "port"}};

static char path[256];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/qr-test-%d.h5", getpid());
    unlink(path);
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(h5, .init = setup, .fini = teardown);

/* struct row as an HDF5 memory type, for reading back with the library itself; *st: its string
 * member's type (the caller closes both). */
static hid_t row_type(hid_t *st)
{
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(struct row));
    *st = H5Tcopy(H5T_C_S1);
    H5Tset_size(*st, 16);
    H5Tinsert(mt, "name", offsetof(struct row, name), *st);
    H5Tinsert(mt, "id", offsetof(struct row, id), H5T_NATIVE_UINT64);
    H5Tinsert(mt, "t_ns", offsetof(struct row, t_ns), H5T_NATIVE_INT64);
    H5Tinsert(mt, "x", offsetof(struct row, x), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "port", offsetof(struct row, port), H5T_NATIVE_UINT16);
    return mt;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

Test(h5, table_round_trip_with_units_and_attributes)
{
    qr_h5 *f;
    qr_h5_table *t;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_create(&t, f, "/replay/tagged_th_5us/rows", fields, 5,
                                    sizeof(struct row), 100, err),
                 QR_OK, "%s", err);
    const size_t n = 12345; /* several chunks and a partial one */
    struct row *rows = calloc(n, sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        snprintf(rows[i].name, sizeof rows[i].name, "flow%zu", i % 97);
        rows[i].id = i;
        rows[i].t_ns = -5 + 1000 * (int64_t)i;
        rows[i].x = i / 3.0;
        rows[i].port = (uint16_t)(i % 5);
    }
    cr_assert_eq(qr_h5_table_append(t, rows, 1000, err), QR_OK);
    cr_assert_eq(qr_h5_table_append(t, rows + 1000, n - 1000, err), QR_OK);
    cr_assert_eq(qr_h5_table_rows(t), n);
    cr_assert_eq(qr_h5_table_close(t, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_attr_str(f, "/", "scenario", "[run]\nseed = 1\n", err), QR_OK);
    cr_assert_eq(qr_h5_attr_u64(f, "/", "seed", 42, err), QR_OK);
    cr_assert_eq(qr_h5_attr_f64(f, "/replay", "mean", 0.5, err), QR_OK);
    cr_assert_eq(qr_h5_attr_i64(f, "/replay", "th_ns", 5000, err), QR_OK);
    cr_assert_eq(qr_h5_attr_i64(f, "/replay", "th_ns", 2000, err), QR_OK); /* replaced */
    cr_assert_eq(qr_h5_attr_str(f, "/nosuch", "a", "b", err), QR_EHDF5);
    cr_assert_not(exists(path), "final name exists before commit");
    cr_assert(exists(qr_h5_partial_path(f)));
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);
    cr_assert(exists(path));

    /* read back with the HDF5 library itself */
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(file, 0);
    hid_t ds = H5Dopen2(file, "/replay/tagged_th_5us/rows", H5P_DEFAULT);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[1];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    cr_assert_eq(dims[0], n);
    hid_t st, mt = row_type(&st);
    struct row *back = calloc(n, sizeof *back);
    cr_assert_geq(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(back[i].name, rows[i].name);
        cr_assert_eq(back[i].id, rows[i].id);
        cr_assert_eq(back[i].t_ns, rows[i].t_ns);
        cr_assert_eq(back[i].x, rows[i].x);
        cr_assert_eq(back[i].port, rows[i].port);
    }
    /* chunked and compressed */
    hid_t dcpl = H5Dget_create_plist(ds);
    cr_assert_eq(H5Pget_layout(dcpl), H5D_CHUNKED);
    cr_assert_geq(H5Pget_nfilters(dcpl), 2);
    H5Pclose(dcpl);
    /* the unit of t_ns */
    hid_t a = H5Aopen(ds, "unit:t_ns", H5P_DEFAULT);
    cr_assert_geq(a, 0);
    hid_t at = H5Aget_type(a);
    /* fixed-length text: no variable-length string, whose heap reference a damaged file
     * crashes libhdf5 with */
    cr_assert_eq(H5Tis_variable_str(at), 0);
    char unit[8] = "";
    cr_assert_leq(H5Tget_size(at), sizeof unit);
    H5Aread(a, at, unit);
    cr_assert_str_eq(unit, "ns");
    H5Tclose(at);
    H5Aclose(a);
    hid_t g = H5Gopen2(file, "/replay", H5P_DEFAULT);
    a = H5Aopen(g, "th_ns", H5P_DEFAULT);
    int64_t th = 0;
    H5Aread(a, H5T_NATIVE_INT64, &th);
    cr_assert_eq(th, 2000);
    H5Aclose(a);
    H5Gclose(g);
    H5Tclose(st);
    H5Tclose(mt);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(file);
    free(rows);
    qr_h5_rows_free(back);
}

Test(h5, h5dump_reads_the_result)
{
    if (!QR_H5DUMP[0])
        cr_skip_test("h5dump is not installed");
    qr_h5 *f;
    qr_h5_table *t;
    cr_assert_eq(qr_h5_create(&f, path, NULL), QR_OK);
    cr_assert_eq(qr_h5_table_create(&t, f, "/flows", fields, 5, sizeof(struct row), 0, NULL),
                 QR_OK);
    struct row r = {.name = "abc", .id = 7, .t_ns = 123456789, .x = 2.5, .port = 3};
    qr_h5_table_append(t, &r, 1, NULL);
    qr_h5_table_close(t, NULL);
    cr_assert_eq(qr_h5_commit(f, NULL), QR_OK);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -d /flows %s", QR_H5DUMP, path);
    FILE *p = popen(cmd, "r");
    char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, p);
    buf[len] = '\0';
    cr_assert_eq(pclose(p), 0, "h5dump failed:\n%s", buf);
    cr_assert(strstr(buf, "123456789") && strstr(buf, "\"abc\"") && strstr(buf, "\"t_ns\""), "%s",
              buf);
}

Test(h5, abort_leaves_nothing)
{
    qr_h5 *f;
    qr_h5_table *t;
    cr_assert_eq(qr_h5_create(&f, path, NULL), QR_OK);
    cr_assert_eq(qr_h5_table_create(&t, f, "/x", fields, 5, sizeof(struct row), 0, NULL), QR_OK);
    qr_h5_table_close(t, NULL);
    char partial[512];
    snprintf(partial, sizeof partial, "%s", qr_h5_partial_path(f));
    qr_h5_abort(f);
    cr_assert_not(exists(path));
    cr_assert_not(exists(partial));
}

Test(h5, commit_with_open_table_is_refused_and_leaves_nothing)
{
    qr_h5 *f;
    qr_h5_table *t;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_create(&f, path, NULL), QR_OK);
    cr_assert_eq(qr_h5_table_create(&t, f, "/x", fields, 5, sizeof(struct row), 0, NULL), QR_OK);
    char partial[512];
    snprintf(partial, sizeof partial, "%s", qr_h5_partial_path(f));
    cr_assert_eq(qr_h5_commit(f, err), QR_ESTATE);
    cr_assert_not(exists(path));
    cr_assert_not(exists(partial));
    (void)t; /* released with the file */
}

Test(h5, an_interrupted_writer_never_has_the_final_name)
{
    /* a child process writes and is killed before commit */
    pid_t pid = fork();
    if (pid == 0) {
        qr_h5 *f;
        qr_h5_table *t;
        qr_h5_create(&f, path, NULL);
        qr_h5_table_create(&t, f, "/x", fields, 5, sizeof(struct row), 0, NULL);
        struct row r = {0};
        for (int i = 0; i < 1000; i++)
            qr_h5_table_append(t, &r, 1, NULL);
        _exit(3); /* dies without commit */
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert_eq(WEXITSTATUS(status), 3);
    cr_assert_not(exists(path), "a killed writer left %s", path);
    char partial[512];
    snprintf(partial, sizeof partial, "%s.partial-%d", path, pid);
    unlink(partial);
}

Test(h5, bad_paths)
{
    qr_h5 *f;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_create(&f, "/nonexistent/dir/r.h5", err), QR_EIO);
    cr_assert(strstr(err, "/nonexistent/dir/r.h5"), "%s", err);
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK);
    cr_assert_eq(qr_h5_group(f, "relative", err), QR_EINVAL);
    cr_assert_eq(qr_h5_group(f, "/a/b/c", err), QR_OK);
    cr_assert_eq(qr_h5_group(f, "/a/b", err), QR_OK); /* exists: fine */
    qr_h5_abort(f);
}

Test(h5, reader_reads_back_tables_and_attributes)
{
    qr_h5 *f;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK, "%s", err);
    struct row rows[1000];
    for (int i = 0; i < 1000; i++)
        rows[i] =
            (struct row){.id = (uint64_t)i * 7, .t_ns = -i, .x = i / 4.0, .port = (uint16_t)i};
    snprintf(rows[3].name, sizeof rows[3].name, "three");
    qr_h5_table *t;
    cr_assert_eq(qr_h5_table_create(&t, f, "/g/t", fields, (sizeof fields / sizeof fields[0]),
                                    sizeof(struct row), 64, err),
                 QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_append(t, rows, 1000, err), QR_OK);
    cr_assert_eq(qr_h5_table_close(t, err), QR_OK);
    cr_assert_eq(qr_h5_attr_str(f, "/", "scenario", "[run]\nseed = 1\n", err), QR_OK);
    cr_assert_eq(qr_h5_attr_u64(f, "/g", "n", 42, err), QR_OK);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);

    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    char *text = NULL;
    cr_assert_eq(qr_h5_read_attr_str(r, "/", "scenario", &text, err), QR_OK, "%s", err);
    cr_assert_str_eq(text, "[run]\nseed = 1\n");
    qr_h5_str_free(text);
    double n;
    cr_assert_eq(qr_h5_read_attr_f64(r, "/g", "n", &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 42.0);
    cr_assert_eq(qr_h5_read_attr_str(r, "/", "nope", &text, err), QR_ENOTFOUND);
    cr_assert(strstr(err, "nope"), "%s", err);
    struct row *back;
    size_t nb;
    cr_assert_eq(qr_h5_read_table(r, "/g/t", fields, (sizeof fields / sizeof fields[0]),
                                  sizeof(struct row), (void **)&back, &nb, err),
                 QR_OK, "%s", err);
    cr_assert_eq(nb, 1000);
    for (int i = 0; i < 1000; i++)
        cr_assert(back[i].id == rows[i].id && back[i].t_ns == rows[i].t_ns &&
                      back[i].x == rows[i].x && back[i].port == rows[i].port,
                  "row %d", i);
    cr_assert_str_eq(back[3].name, "three");
    qr_h5_rows_free(back);
    cr_assert_eq(qr_h5_read_table(r, "/g/none", fields, (sizeof fields / sizeof fields[0]),
                                  sizeof(struct row), (void **)&back, &nb, err),
                 QR_ENOTFOUND);
    qr_h5_field other = {"missing", QR_H5_U64, 0, 0, NULL};
    cr_assert_eq(qr_h5_read_table(r, "/g/t", &other, 1, sizeof(uint64_t), (void **)&back, &nb, err),
                 QR_EFORMAT);
    cr_assert(strstr(err, "missing"), "%s", err);
    qr_h5_close(r);
    /* a missing file and a file that is not HDF5 */
    cr_assert_eq(qr_h5_open(&r, "/nonexistent/x.h5", err), QR_ENOENT);
    FILE *fp = fopen(path, "w");
    fputs("not hdf5", fp);
    fclose(fp);
    cr_assert_eq(qr_h5_open(&r, path, err), QR_EFORMAT);
    cr_assert(strstr(err, path) && strstr(err, "not a result file of this qreplay"), "%s", err);
}

/* Write a small committed file at path with one table and one text attribute. */
static void write_small(void)
{
    qr_h5 *f;
    qr_h5_table *t;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_create(&t, f, "/g/t", fields, 5, sizeof(struct row), 0, err), QR_OK);
    struct row rows[50] = {{"x", 1, 2, 3.0, 4}};
    cr_assert_eq(qr_h5_table_append(t, rows, 50, err), QR_OK);
    cr_assert_eq(qr_h5_table_close(t, err), QR_OK);
    cr_assert_eq(qr_h5_attr_str(f, "/", "scenario", "[run]\nseed = 1\n", err), QR_OK);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

Test(h5, a_file_changed_after_it_was_written_is_refused_before_hdf5_reads_it)
{
    char err[QR_ERRBUF_SIZE] = "";
    write_small();
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    qr_h5_close(r);
    long size = file_size(path);
    cr_assert_gt(size, 512);
    /* the checksum line in the user block names the file's size */
    FILE *fp = fopen(path, "rb");
    char head[100] = "";
    cr_assert(fread(head, 1, sizeof head - 1, fp) > 0);
    fclose(fp);
    char want[40];
    snprintf(want, sizeof want, " size=%ld\n", size);
    cr_assert(!strncmp(head, "QREPLAY-H5 1 sha256=", 20) && strstr(head, want), "%s", head);
    /* every single flipped byte past the header, at 64 places, is refused as damaged */
    unsigned char *orig = malloc((size_t)size);
    fp = fopen(path, "rb");
    cr_assert_eq(fread(orig, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    for (int k = 0; k < 64; k++) {
        long at = 512 + (long)((size - 512) * (int64_t)k / 64);
        fp = fopen(path, "wb");
        orig[at] ^= 0x5a;
        fwrite(orig, 1, (size_t)size, fp);
        orig[at] ^= 0x5a;
        fclose(fp);
        cr_assert_eq(qr_h5_open(&r, path, err), QR_EFORMAT, "byte %ld", at);
        cr_assert(strstr(err, "damaged") && strstr(err, path), "%s", err);
    }
    /* the header block itself: its line and its zeros */
    for (long at = 21; at < 512; at += 97) {
        fp = fopen(path, "wb");
        orig[at] ^= 0x01;
        fwrite(orig, 1, (size_t)size, fp);
        orig[at] ^= 0x01;
        fclose(fp);
        cr_assert_eq(qr_h5_open(&r, path, err), QR_EFORMAT, "byte %ld", at);
        cr_assert(strstr(err, "damaged") && strstr(err, path), "%s", err);
    }
    /* cut short, and grown */
    fp = fopen(path, "wb");
    fwrite(orig, 1, (size_t)size, fp);
    fclose(fp);
    cr_assert_eq(truncate(path, size - 1), 0);
    cr_assert_eq(qr_h5_open(&r, path, err), QR_EFORMAT);
    cr_assert(strstr(err, "cut short"), "%s", err);
    cr_assert_eq(truncate(path, size + 4096), 0);
    cr_assert_eq(qr_h5_open(&r, path, err), QR_EFORMAT);
    /* a file of another program: HDF5 without the checksum line (zeroed user block) */
    memset(orig, 0, 512);
    fp = fopen(path, "wb");
    fwrite(orig, 1, (size_t)size, fp);
    fclose(fp);
    cr_assert_eq(qr_h5_open(&r, path, err), QR_EFORMAT);
    cr_assert(strstr(err, "no qreplay checksum"), "%s", err);
    free(orig);
}

/* image_max: files up to this size are read into memory (0: every file from disk) */
static void two_readers_at_once(size_t image_max)
{
    qri_h5_tuning tu = QRI_H5_TUNING_DEFAULT;
    tu.image_max = image_max;
    /* two readers open at once: files of their own, never taken for one another */
    char err[QR_ERRBUF_SIZE] = "", other[300];
    write_small();
    snprintf(other, sizeof other, "%s.b", path);
    qr_h5 *f;
    cr_assert_eq(qr_h5_create(&f, other, err), QR_OK);
    cr_assert_eq(qr_h5_attr_str(f, "/", "who", "b", err), QR_OK);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK);
    qr_h5_reader *a, *b;
    cr_assert_eq(qri_h5_open_tuned(&a, path, tu, err), QR_OK, "%s", err);
    cr_assert_eq(qri_h5_open_tuned(&b, other, tu, err), QR_OK, "%s", err);
    char *v = NULL;
    cr_assert_eq(qr_h5_read_attr_str(b, "/", "who", &v, err), QR_OK, "%s", err);
    cr_assert_str_eq(v, "b");
    qr_h5_str_free(v);
    cr_assert_eq(qr_h5_read_attr_str(a, "/", "scenario", &v, err), QR_OK, "%s", err);
    cr_assert_str_eq(v, "[run]\nseed = 1\n");
    qr_h5_str_free(v);
    cr_assert_eq(qr_h5_read_attr_str(a, "/", "who", &v, err), QR_ENOTFOUND);
    qr_h5_close(a);
    qr_h5_close(b);
    /* damaged is damaged either way: one byte near the end flipped (the end holds HDF5's
     * object times, so any fixed byte written there could already be the one in the file) */
    FILE *fp = fopen(other, "r+b");
    fseek(fp, -3, SEEK_END);
    int c = fgetc(fp);
    cr_assert_neq(c, EOF);
    fseek(fp, -3, SEEK_END);
    fputc(c ^ 0x01, fp);
    fclose(fp);
    cr_assert_eq(qri_h5_open_tuned(&b, other, tu, err), QR_EFORMAT);
    cr_assert(strstr(err, "damaged"), "%s", err);
    unlink(other);
}

Test(h5, two_files_open_at_once_from_memory)
{
    two_readers_at_once(QRI_H5_TUNING_DEFAULT.image_max);
}

Test(h5, two_files_open_at_once_from_disk)
{
    two_readers_at_once(0); /* every file is verified, then read by HDF5 from disk */
}

/* Two tables filled at once in batches of every size (one row, a chunk less one, many chunks at
 * once: the compressing worker's ring wraps while the other table's runs), then one table of
 * exactly whole chunks: HDF5 reads back every row as written, and the chunks carry HDF5's own
 * shuffle and deflate filters. */
static void chunks_read_back(int workers);

Test(h5, chunks_filtered_by_the_workers_read_back_through_hdf5)
{
    chunks_read_back(1);
}

/* The same with three workers, which finish chunks out of order: still written in order. */
Test(h5, chunks_filtered_by_three_workers_read_back_through_hdf5)
{
    chunks_read_back(3);
}

static void chunks_read_back(int workers)
{
    qr_h5 *f;
    char err[QR_ERRBUF_SIZE];
    qri_h5_tuning tu = QRI_H5_TUNING_DEFAULT;
    tu.workers = workers;
    cr_assert_eq(qri_h5_create_tuned(&f, path, tu, err), QR_OK, "%s", err);
    enum { N = 20000, CHUNK = 37 };
    struct row *rows = calloc(N, sizeof *rows);
    for (int i = 0; i < N; i++) {
        snprintf(rows[i].name, sizeof rows[i].name, "r%d", i * 7919 % 10007);
        rows[i].id = (uint64_t)i * 0x9e3779b97f4a7c15ull;
        rows[i].t_ns = -(int64_t)i * 3;
        rows[i].x = i * 0.25;
        rows[i].port = (uint16_t)(i * 31);
    }
    qr_h5_table *a, *b, *c;
    cr_assert_eq(qr_h5_table_create(&a, f, "/a", fields, 5, sizeof(struct row), CHUNK, err), QR_OK);
    cr_assert_eq(qr_h5_table_create(&b, f, "/b", fields, 5, sizeof(struct row), 0, err), QR_OK);
    size_t at = 0, bt = 0;
    size_t sizes[] = {1, CHUNK - 1, 9 * CHUNK + 5, 2, CHUNK, 1000, 3};
    for (int k = 0; at < N || bt < N; k++) {
        size_t na = sizes[k % 7], nb = sizes[(k + 3) % 7] * 3;
        na = na > N - at ? N - at : na;
        nb = nb > N - bt ? N - bt : nb;
        cr_assert_eq(qr_h5_table_append(a, rows + at, na, err), QR_OK, "%s", err);
        cr_assert_eq(qr_h5_table_append(b, rows + bt, nb, err), QR_OK, "%s", err);
        at += na;
        bt += nb;
    }
    cr_assert_eq(qr_h5_table_close(a, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_close(b, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_create(&c, f, "/c", fields, 5, sizeof(struct row), 100, err), QR_OK);
    cr_assert_eq(qr_h5_table_append(c, rows, 1000, err), QR_OK);
    cr_assert_eq(qr_h5_table_close(c, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t st, mt = row_type(&st);
    const char *names[] = {"/a", "/b", "/c"};
    size_t want[] = {N, N, 1000};
    struct row *back = calloc(N, sizeof *back);
    for (int d = 0; d < 3; d++) {
        hid_t ds = H5Dopen2(file, names[d], H5P_DEFAULT);
        hid_t sp = H5Dget_space(ds);
        hsize_t dims[1];
        H5Sget_simple_extent_dims(sp, dims, NULL);
        cr_assert_eq(dims[0], want[d], "%s", names[d]);
        memset(back, 0xff, N * sizeof *back);
        cr_assert_geq(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
        for (size_t i = 0; i < want[d]; i++)
            cr_assert(!strcmp(back[i].name, rows[i].name) && back[i].id == rows[i].id &&
                          back[i].t_ns == rows[i].t_ns && back[i].x == rows[i].x &&
                          back[i].port == rows[i].port,
                      "%s row %zu", names[d], i);
        hid_t dcpl = H5Dget_create_plist(ds);
        unsigned flags, cd[8];
        size_t ncd = 8;
        cr_assert_eq(H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_SHUFFLE);
        ncd = 8;
        cr_assert_eq(H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_DEFLATE);
        H5Pclose(dcpl);
        H5Sclose(sp);
        H5Dclose(ds);
    }
    H5Tclose(st);
    H5Tclose(mt);
    H5Fclose(file);
    free(back);
    free(rows);
}

/* Rows without padding (the per-arrival qdiff table's case) go to the chunk filter as they are,
 * without the packing copy: they read back the same. */
struct flat {
    uint64_t a;
    int64_t b;
    uint32_t c, d;
};

Test(h5, rows_without_padding_read_back)
{
    static const qr_h5_field ff[] = {{"a", QR_H5_U64, offsetof(struct flat, a), 0, NULL},
                                     {"b", QR_H5_I64, offsetof(struct flat, b), 0, NULL},
                                     {"c", QR_H5_U32, offsetof(struct flat, c), 0, NULL},
                                     {"d", QR_H5_U32, offsetof(struct flat, d), 0, NULL}};
    enum { N = 10000 };
    static struct flat rows[N];
    for (int i = 0; i < N; i++)
        rows[i] = (struct flat){(uint64_t)i * 0x9e3779b97f4a7c15ull, -(int64_t)i, (uint32_t)i,
                                (uint32_t)(i % 7)};
    qr_h5 *f;
    qr_h5_table *t;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_create(&t, f, "/flat", ff, 4, sizeof(struct flat), 100, err), QR_OK);
    cr_assert_eq(qr_h5_table_append(t, rows, N, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_table_close(t, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    struct flat *back;
    size_t n;
    cr_assert_eq(qr_h5_read_table(r, "/flat", ff, 4, sizeof *back, (void **)&back, &n, err), QR_OK,
                 "%s", err);
    cr_assert_eq(n, N);
    cr_assert_eq(memcmp(back, rows, sizeof rows), 0);
    qr_h5_rows_free(back);
    qr_h5_close(r);
}
