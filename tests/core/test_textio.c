/* Text input (textio.h): lines up to 1 MiB with their numbers, the last line with or without its
 * newline, CRLF, and a NUL byte or a longer line refused with the file and line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/textio.h"

static void write_file(char *path, const char *data, size_t n)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, data, n), (ssize_t)n);
    close(fd);
}

Test(textio, lines_numbers_and_line_ends)
{
    char path[] = "/tmp/qr-textio-XXXXXX";
    const char data[] = "a,b\r\n\nthird line\nlast";
    write_file(path, data, sizeof data - 1);
    qr_lines *l;
    char err[QR_ERRBUF_SIZE], *line;
    size_t len;
    long no;
    cr_assert_eq(qr_lines_open(&l, path, err), QR_OK, "%s", err);
    static const char *const want[] = {"a,b", "", "third line", "last"};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(qr_lines_next(l, &line, &len, &no, err), QR_OK, "%s", err);
        cr_assert_str_eq(line, want[i]);
        cr_assert_eq(len, strlen(want[i]));
        cr_assert_eq(no, i + 1);
    }
    cr_assert_eq(qr_lines_next(l, &line, &len, &no, err), QR_END);
    qr_lines_close(l);
    unlink(path);
}

Test(textio, a_long_line_then_a_nul_byte)
{
    char path[] = "/tmp/qr-textio-XXXXXX";
    size_t n = 3 * 65536;
    char *data = malloc(n + 8);
    memset(data, 'x', n);
    memcpy(data + n, "\nA\0B\n", 5);
    write_file(path, data, n + 5);
    qr_lines *l;
    char err[QR_ERRBUF_SIZE], *line;
    size_t len;
    long no;
    cr_assert_eq(qr_lines_open(&l, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_lines_next(l, &line, &len, &no, err), QR_OK, "%s", err);
    cr_assert_eq(len, n, "a line longer than any buffer is read whole");
    int rc = qr_lines_next(l, &line, &len, &no, err);
    cr_assert_eq(rc, QR_ESYNTAX, "a NUL byte is an error");
    cr_assert(strstr(err, path) && strstr(err, ":2"), "names the file and line: %s", err);
    qr_lines_close(l);
    unlink(path);
    free(data);
    /* a line over QR_LINE_MAX */
    char big[] = "/tmp/qr-textio-XXXXXX";
    char *huge = malloc(QR_LINE_MAX + 2);
    memset(huge, 'y', QR_LINE_MAX + 1);
    huge[QR_LINE_MAX + 1] = '\n';
    write_file(big, huge, QR_LINE_MAX + 2);
    cr_assert_eq(qr_lines_open(&l, big, err), QR_OK, "%s", err);
    cr_assert_eq(qr_lines_next(l, &line, &len, &no, err), QR_ESYNTAX);
    cr_assert(strstr(err, ":1"), "%s", err);
    qr_lines_close(l);
    unlink(big);
    free(huge);
    cr_assert_eq(qr_lines_open(&l, "/nonexistent/x.csv", err), QR_ENOENT);
    cr_assert(strstr(err, "/nonexistent/x.csv"), "%s", err);
}
