/* Shared by the program's end-to-end suites: a scratch folder per test, running `qreplay` with
 * its output captured, and checks for leftovers. */
#ifndef QR_TEST_HARNESS_H
#define QR_TEST_HARNESS_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];
static char out[1 << 16], err[1 << 16];

__attribute__((unused)) static void qr_test_setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-cli-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

__attribute__((unused)) static void qr_test_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

__attribute__((unused)) static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* A whole file as bytes (caller frees); *n gets its size. */
__attribute__((unused)) static unsigned char *slurp_bin(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: missing", path);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

/* Run `qreplay ARGS` (a shell fragment) in the source folder; returns the exit status. */
/* DIR/run/replay/A and B wrote the same arrival log, byte for byte (and more than a few arrivals).
 */
__attribute__((unused)) static void same_arrival_logs(const char *a, const char *b,
                                                      const char *what)
{
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/run/replay/%s/arrivals.qra", dir, a);
    snprintf(pb, sizeof pb, "%s/run/replay/%s/arrivals.qra", dir, b);
    size_t na, nb;
    unsigned char *x = slurp_bin(pa, &na), *y = slurp_bin(pb, &nb);
    cr_assert_gt(na, 8u + 56u * 10, "%s: the replay logged almost nothing", what);
    /* byte for byte but the trailer's last 32 bytes: the run that wrote each (a replay's own id,
     * docs/FORMATS.md), which differs between two replays by design */
    size_t diff = 0, body = na - 32;
    while (diff < body && diff < nb && x[diff] == y[diff])
        diff++;
    cr_assert(na == nb && diff == body, "%s: arrival logs differ at byte %zu (%zu and %zu bytes)",
              what, diff, na, nb);
    free(x);
    free(y);
}

__attribute__((unused)) static int qreplay(const char *fmt, ...)
{
    char args[2048], cmd[4096], o[128], e[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(o, sizeof o, "%s/.stdout", dir);
    snprintf(e, sizeof e, "%s/.stderr", dir);
    snprintf(cmd, sizeof cmd, "cd %s && %s %s >%s 2>%s </dev/null", QR_SOURCE_DIR, QR_PROGRAM, args,
             o, e);
    int st = system(cmd);
    slurp(o, out, sizeof out);
    slurp(e, err, sizeof err);
    unlink(o);
    unlink(e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

__attribute__((unused)) static int exists(const char *fmt, ...)
{
    char p[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p, sizeof p, fmt, ap);
    va_end(ap);
    struct stat st;
    return stat(p, &st) == 0;
}

/* Nothing in dir but the given names (no partial files). */
__attribute__((unused)) static void only_files(const char *a, const char *b)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        cr_assert((a && !strcmp(e->d_name, a)) || (b && !strcmp(e->d_name, b)),
                  "unexpected file %s left in %s", e->d_name, dir);
    }
    closedir(d);
}

/* A folder holds no file whose name contains ".partial-". */
__attribute__((unused)) static void no_partials(const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "find %s -name '*.partial-*' | grep -q .", path);
    cr_assert_neq(system(cmd), 0, "partial files left under %s", path);
}

/* A whole HDF5 table of a schema (schema.h), read or fail the test. Needs qreplay/schema.h and
 * qreplay/h5.h included before this header. */
#ifdef QREPLAY_SCHEMA_H
__attribute__((unused)) static void *rows_of(const char *path, const char *table,
                                             const qr_h5_schema *schema, size_t *n)
{
    char e[QR_ERRBUF_SIZE];
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, path, e), QR_OK, "%s", e);
    void *rows = NULL;
    cr_assert_eq(qr_h5_read_rows(r, table, schema, &rows, n, e), QR_OK, "%s: %s", table, e);
    qr_h5_close(r);
    return rows;
}

/* A numeric attribute of obj in the HDF5 file at path (0 if it has none). */
__attribute__((unused)) static double attr_of(const char *path, const char *obj, const char *name)
{
    char e[QR_ERRBUF_SIZE];
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, path, e), QR_OK, "%s", e);
    double v = 0;
    qr_h5_read_attr_f64(r, obj, name, &v, NULL);
    qr_h5_close(r);
    return v;
}
#endif

#endif
