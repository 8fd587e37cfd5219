/* The light record's block framing (light_block.c) as the fuzz targets of its two flavours write
 * it: a 16-byte header (part, threshold, raw length, stored length, CRC-32) and the raw bytes
 * deflated, so that the fuzzer reaches the parts' decoders past the checksums. */
#ifndef QR_FUZZ_BLOCKS_H
#define QR_FUZZ_BLOCKS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static void
framed(FILE* f, unsigned part, unsigned th, const uint8_t* raw, size_t n)
{
    static unsigned char c[1 << 17];
    uLongf cl = sizeof c;
    if (compress2(c, &cl, raw, n, 1) != Z_OK)
        abort();
    unsigned char h[16] = {(uint8_t)part, (uint8_t)th};
    uint32_t v[3] = {(uint32_t)n, (uint32_t)cl, (uint32_t)crc32(0, raw, (uInt)n)};
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 4; b++)
            h[4 + 4 * i + b] = (uint8_t)(v[i] >> (8 * b));
    fwrite(h, 1, 16, f);
    fwrite(c, 1, cl, f);
}

/* The rest of the input from byte at as blocks: per block a part (0xff the end, else modulo
 * parts), a threshold (modulo th_mod, or as given when 0), a length (2 bytes, little endian) and
 * the raw bytes (cut at the input's end). */
static void
framed_all(FILE* f, const uint8_t* data, size_t size, size_t at, unsigned parts, unsigned th_mod)
{
    while (at + 4 <= size)
    {
        unsigned part = data[at] == 0xff ? 0xff : data[at] % parts;
        unsigned th = th_mod ? data[at + 1] % th_mod : data[at + 1];
        size_t n = (size_t)data[at + 2] | (size_t)data[at + 3] << 8;
        at += 4;
        if (n > size - at)
            n = size - at;
        framed(f, part, th, data + at, n);
        at += n;
    }
}

#endif
