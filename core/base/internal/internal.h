/* Private helpers of every layer of libqreplay (prefix qri_), all defined in base. Not installed.
 */
#ifndef QREPLAY_INTERNAL_H
#define QREPLAY_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "qreplay/error.h"

/* Run x (an int-returning call) into the caller's `int rc`; on an error, goto fail. The one idiom
 * of the result-file writers: create, write, then commit, or abort at fail. */
#define QRI_TRY(x)                                                                                 \
    do {                                                                                           \
        if ((rc = (x)) != QR_OK)                                                                   \
            goto fail;                                                                             \
    } while (0)

/* Format a detail message into errbuf (if not NULL) and return code. */
int qri_err(char *errbuf, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix the message already in errbuf with "prefix: " (if errbuf is not NULL). */
void qri_err_prefix(char *errbuf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy a string into a fixed buffer, always NUL-terminated; returns 0 or QR_EVALUE if cut. */
int qri_strlcpy(char *dst, const char *src, size_t size);

/* SHA-256 (sha256.c, OpenSSL). The digest and size of a file: 0, QR_ENOENT or QR_EIO. */
int qri_sha256_file(const char *path, char out[65], uint64_t *size);
/* The digest of an open file's bytes from offset `from` to its end (read with pread; the file
 * position does not move) and how many there were: 0, QR_EIO or QR_ENOMEM. */
int qri_sha256_fd(int fd, uint64_t from, char out[65], uint64_t *size);
/* The digest of n bytes in memory: 0 or QR_ENOMEM. */
int qri_sha256_buf(const void *data, size_t n, char out[65]);

/* The time `bytes` take on a link of rate_bps, ns, rounded down (0 if the rate is 0); exact for
 * any size (units.c). */
int64_t qri_wire_ns(uint64_t bytes, uint64_t rate_bps);

/* Make room for one more element in a growable array of `size`-byte elements: if *n == *cap,
 * double *cap (first: `first`) and reallocate *array. Returns 0 or QR_ENOMEM (nothing changes).
 * units.c. */
int qri_grow(void **array, size_t *cap, size_t n, size_t size, size_t first);

/* Make room for `need` elements in all (growing as qri_grow does, as often as needed). Returns 0 or
 * QR_ENOMEM. units.c. */
int qri_reserve(void **array, size_t *cap, size_t need, size_t size, size_t first);

/* Sort n elements of `size` bytes with cmp(a, b, ctx), stably (merge sort; the order of equal
 * elements is kept). The comparison gets its context as an argument, so no sort needs a global.
 * Returns 0 or QR_ENOMEM (base is unchanged). sort.c. */
int qri_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
             void *ctx);
/* The same with the caller's scratch of n * size bytes: no allocation, cannot fail. */
void qri_sort_buf(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
                  void *ctx, void *scratch);

/* Comparisons for qsort of int64_t, uint32_t and uint64_t, increasing (stats.c). */
int qri_cmp_i64(const void *a, const void *b);
int qri_cmp_u32(const void *a, const void *b);
int qri_cmp_u64(const void *a, const void *b);

/* The index of the largest of counts[0..n) (the first on ties); UINT32_MAX if all are 0 (stats.c).
 */
uint32_t qri_argmax_u32(const uint32_t *counts, uint32_t n);

/* Strip leading and trailing white space (isspace) in place; returns the first kept character
 * (textio.c). */
char *qri_trim(char *s);

/* Remove a folder and everything in it (no symlinks followed); errors are ignored. fs.c. */
void qri_remove_tree(const char *dir);

/* LEB128 varints and zigzag signed values, as the arrival logs and the light record store them:
 * qri_varint_put writes v at p (at most 10 bytes) and returns the byte after it; qri_varint_get
 * reads one from *p (before e), advancing *p, and returns 0, or -1 cut short or beyond 64 bits. */
static inline uint64_t qri_zigzag(int64_t d)
{
    return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static inline int64_t qri_unzigzag(uint64_t z)
{
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

static inline uint8_t *qri_varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline int qri_varint_get(const uint8_t **pp, const uint8_t *e, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (p < e && !(*p & 0x80)) { /* most values: one byte */
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; p < e && shift < 64; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (shift == 63 && b > 1)
                return -1;
            *pp = p;
            *v = x;
            return 0;
        }
    }
    return -1;
}

#endif
