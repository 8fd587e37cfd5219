#include "qreplay/random.h"

#include <errno.h>
#include <stdio.h>
#include <sys/random.h>

#include "qreplay/error.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t qr_seed_derive(uint64_t master, const char *name, uint64_t index)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a of the stream name */
    for (const char *p = name ? name : ""; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 0x100000001b3ULL;
    }
    uint64_t s = splitmix64(splitmix64(master) ^ h);
    s = splitmix64(s ^ index);
    return s ? s : 1;
}

int qr_new_id(char out[QR_ID_SIZE])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return QR_EIO;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return QR_OK;
}
