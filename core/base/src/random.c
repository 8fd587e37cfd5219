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
