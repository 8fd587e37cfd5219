/* A reproducible stream of numbers for tests that draw random cases (splitmix64). */
#ifndef QR_TEST_SPLITMIX_H
#define QR_TEST_SPLITMIX_H

#include <stdint.h>

/* The next number in [0, n) of the stream whose state is *s (seed it with any value). */
static inline uint64_t splitmix_below(uint64_t *s, uint64_t n)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

#endif
