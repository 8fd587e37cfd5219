/* The blocks of the light record's file (docs/FORMATS.md), shared by its simulated and kernel
 * flavours: a header (part, threshold, raw and stored lengths, CRC-32 of the raw bytes), then the
 * raw bytes deflated on their own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"
#include "light_internal.h"

static void le32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

void qri_lbuf_put(struct qri_lbuf *w, const void *p, size_t n)
{
    if (!n) /* an empty list: p may be NULL */
        return;
    if (w->oom || qri_reserve((void **)&w->b, &w->cap, w->n + n, 1, 4096)) {
        w->oom = 1;
        return;
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

void qri_lbuf_uv(struct qri_lbuf *w, uint64_t v)
{
    uint8_t t[10];
    qri_lbuf_put(w, t, (size_t)(qri_varint_put(t, v) - t));
}

int qri_light_block_write(FILE *f, const char *path, unsigned part, unsigned th, const uint8_t *raw,
                          size_t n, int level, size_t *stored, char *err)
{
    if (n > MAX_BLOCK)
        return qri_err(err, QR_EVALUE, "%s: a block of part %u exceeds %u bytes", path, part,
                       MAX_BLOCK);
    uLongf clen = compressBound((uLong)n);
    uint8_t *c = malloc(clen + BLOCK_HDR);
    if (!c)
        return qri_err(err, QR_ENOMEM, "%s: out of memory", path);
    if (n && compress2(c + BLOCK_HDR, &clen, raw, (uLong)n, level) != Z_OK) {
        free(c);
        return qri_err(err, QR_ENOMEM, "%s: deflate failed", path);
    }
    if (!n)
        clen = 0;
    c[0] = (uint8_t)part;
    c[1] = (uint8_t)th;
    c[2] = c[3] = 0;
    le32(c + 4, (uint32_t)n);
    le32(c + 8, (uint32_t)clen);
    le32(c + 12, (uint32_t)crc32(0L, raw, (uInt)n));
    size_t total = BLOCK_HDR + clen;
    int ok = fwrite(c, 1, total, f) == total;
    free(c);
    if (!ok)
        return qri_err(err, QR_EIO, "%s: cannot write: %s", path, strerror(errno));
    *stored = total;
    return QR_OK;
}

int qri_light_block_read(FILE *f, const char *path, struct qri_block *b, char *err)
{
    uint8_t hdr[BLOCK_HDR];
    size_t got = fread(hdr, 1, BLOCK_HDR, f);
    b->no++;
    if (got != BLOCK_HDR)
        return qri_err(err, QR_EFORMAT,
                       "%s: cut at byte %" PRIu64 " (block %" PRIu64 "): no end block", path,
                       b->offset + got, b->no);
    uint32_t rlen = rd32(hdr + 4), clen = rd32(hdr + 8), crc = rd32(hdr + 12);
    if (rlen > MAX_BLOCK || clen > MAX_BLOCK || hdr[2] || hdr[3])
        return qri_err(err, QR_EFORMAT,
                       "%s: block %" PRIu64 " (byte %" PRIu64 "): a bad block header (part %u, "
                       "threshold %u, %u bytes)",
                       path, b->no, b->offset, hdr[0], hdr[1], rlen);
    free(b->cbuf);
    free(b->raw);
    b->cbuf = malloc(clen + 1);
    b->raw = malloc(rlen + 1);
    if (!b->cbuf || !b->raw)
        return qri_err(err, QR_ENOMEM, "out of memory");
    uLongf have = rlen;
    if (fread(b->cbuf, 1, clen, f) != clen ||
        (rlen && (uncompress(b->raw, &have, b->cbuf, clen) != Z_OK || have != rlen)) ||
        (uint32_t)crc32(0L, b->raw, rlen) != crc)
        return qri_err(err, QR_EFORMAT,
                       "%s: block %" PRIu64 " (part %u, byte %" PRIu64
                       "): cut short, not deflated data, or its CRC does not match",
                       path, b->no, hdr[0], b->offset);
    b->raw[rlen] = 0; /* a header is read as text */
    b->offset += BLOCK_HDR + clen;
    b->part = hdr[0];
    b->th = hdr[1];
    b->rlen = rlen;
    b->clen = clen;
    return QR_OK;
}

void qri_light_block_free(struct qri_block *b)
{
    free(b->cbuf);
    free(b->raw);
    b->cbuf = b->raw = NULL;
}
