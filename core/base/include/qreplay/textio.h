/* qreplay: reading text files line by line, the same way for every text input (flow lists, CDFs,
 * qreplay sample's CSV): a line of any length up to QR_LINE_MAX, without its "\n" or "\r\n"; a
 * NUL byte (binary data) is an error naming the file and line, never the silent end of a line. */
#ifndef QREPLAY_TEXTIO_H
#define QREPLAY_TEXTIO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest line any text input may have (bytes). */
#define QR_LINE_MAX (1 << 20)

typedef struct qr_lines qr_lines;

/* Open a text file. Returns 0 or QR_ENOENT ("FILE: reason"). Caller owns *out
 * (qr_lines_close). */
int qr_lines_open(qr_lines **out, const char *path, char *errbuf);

/* The next line (borrowed until the next call; *len its length) and its number (from 1). Returns
 * 0, QR_END, QR_ESYNTAX ("FILE:LINE: a NUL byte ...", "FILE:LINE: longer than 1 MiB") or QR_EIO. */
int qr_lines_next(qr_lines *l, char **line, size_t *len, long *lineno, char *errbuf);

/* Close; NULL is allowed. */
void qr_lines_close(qr_lines *l);

/* Lists of items separated by `sep` (a scenario's rules and sessions), walked in place: the next
 * item of *cursor, cut at its separator and trimmed of white space at both ends ("" for an empty
 * item, which a reader reports); *cursor moves past it, to NULL after the last item. NULL when
 * *cursor is NULL. A text of white space alone holds no item: qr_list_blank says so. */
char *qr_list_next(char **cursor, char sep);
int qr_list_blank(const char *text);

/* A list's reader, said once: walk the items of text (at most 4095 bytes) separated by sep
 * (qr_list_next), calling item(ctx, k, text of item k, why) for each, k from 1. An empty item, or
 * an item whose call returns non-zero with its reason in why (QR_ERRBUF_SIZE bytes), stops the
 * walk with QR_EVALUE and "NOUN k ('ITEM'): WHY" in errbuf; a blank text has no items. Returns 0
 * or QR_EVALUE. */
typedef int (*qr_list_item_fn)(void *ctx, size_t k, const char *item, char *why);
int qr_list_each(const char *text, char sep, const char *noun, qr_list_item_fn item, void *ctx,
                 char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
