/* Text files line by line (textio.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "qreplay/textio.h"

struct qr_lines {
    FILE *fp;
    char *path;
    char *buf;
    size_t cap;
    long lineno;
};

int qr_lines_open(qr_lines **out, const char *path, char *errbuf)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return qri_err(errbuf, QR_ENOENT, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return qri_err(errbuf, QR_EVALUE, "%s: a folder, not a file", path);
    }
    qr_lines *l = calloc(1, sizeof *l);
    if (!l || !(l->path = strdup(path))) {
        free(l);
        fclose(fp);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    l->fp = fp;
    *out = l;
    return QR_OK;
}

int qr_lines_next(qr_lines *l, char **line, size_t *len, long *lineno, char *errbuf)
{
    size_t n = 0;
    int ch, got = 0;
    while ((ch = getc(l->fp)) != EOF) {
        got = 1;
        if (ch == '\n')
            break;
        if (n + 2 > l->cap) {
            if (l->cap >= QR_LINE_MAX)
                return qri_err(errbuf, QR_ESYNTAX, "%s:%ld: a line longer than 1 MiB", l->path,
                               l->lineno + 1);
            size_t cap = l->cap ? 2 * l->cap : 256;
            char *b = realloc(l->buf, cap);
            if (!b)
                return qri_err(errbuf, QR_ENOMEM, "out of memory");
            l->buf = b;
            l->cap = cap;
        }
        if (ch == '\0')
            return qri_err(errbuf, QR_ESYNTAX, "%s:%ld: a NUL byte (binary data, not text)",
                           l->path, l->lineno + 1);
        l->buf[n++] = (char)ch;
    }
    if (ferror(l->fp))
        return qri_err(errbuf, QR_EIO, "%s: read error: %s", l->path, strerror(errno));
    if (!got)
        return QR_END;
    if (n && l->buf[n - 1] == '\r')
        n--;
    if (!l->buf) {
        l->buf = malloc(1);
        if (!l->buf)
            return qri_err(errbuf, QR_ENOMEM, "out of memory");
        l->cap = 1;
    }
    l->buf[n] = '\0';
    *line = l->buf;
    if (len)
        *len = n;
    *lineno = ++l->lineno;
    return QR_OK;
}

void qr_lines_close(qr_lines *l)
{
    if (!l)
        return;
    fclose(l->fp);
    free(l->buf);
    free(l->path);
    free(l);
}

char *qri_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

int qr_list_blank(const char *text)
{
    for (const char *c = text; c && *c; c++)
        if (!isspace((unsigned char)*c))
            return 0;
    return 1;
}

int qr_list_each(const char *text, char sep, const char *noun, qr_list_item_fn item, void *ctx,
                 char *errbuf)
{
    char buf[4096], why[QR_ERRBUF_SIZE];
    if (qri_strlcpy(buf, text ? text : "", sizeof buf))
        return qri_err(errbuf, QR_EVALUE, "too long");
    if (qr_list_blank(buf))
        return QR_OK;
    size_t k = 0;
    for (char *rest = buf, *tok; (tok = qr_list_next(&rest, sep));) {
        k++;
        why[0] = '\0';
        if (!*tok)
            snprintf(why, sizeof why, "an empty %s", noun);
        else if (!item(ctx, k, tok, why))
            continue;
        return qri_err(errbuf, QR_EVALUE, "%s %zu ('%s'): %s", noun, k, tok, why);
    }
    return QR_OK;
}

char *qr_list_next(char **cursor, char sep)
{
    char *item = *cursor;
    if (!item)
        return NULL;
    char *end = strchr(item, sep);
    if (end)
        *end = '\0';
    *cursor = end ? end + 1 : NULL;
    while (isspace((unsigned char)*item))
        item++;
    size_t len = strlen(item);
    while (len && isspace((unsigned char)item[len - 1]))
        item[--len] = '\0';
    return item;
}
