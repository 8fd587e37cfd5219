/* What the tests of kernel records' generators share: a scratch folder for the records, a
 * seeded random stream, a connection's ends between test hosts (10.0.0.h+1). */
#ifndef QR_TEST_KREC_GEN_H
#define QR_TEST_KREC_GEN_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "qreplay/krecord.h"

#define KG_T0 1700000000000000000LL
#define KG_HDR 52

/* A fresh folder from template (mkdtemp's, e.g. "/tmp/qr-x-XXXXXX") into dir, and n record
 * paths in it (paths[i]: dir/hI.qrk, 128 bytes each). */
static inline void kg_scratch(char *dir, size_t size, const char *template, char (*paths)[128],
                              int n)
{
    snprintf(dir, size, "%s", template);
    cr_assert_not_null(mkdtemp(dir));
    for (int i = 0; i < n; i++)
        snprintf(paths[i], 128, "%s/h%d.qrk", dir, i);
}

static inline void kg_scratch_remove(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The next number in [0, n) of the stream *s (splitmix64). */
static inline uint64_t kg_rnd(uint64_t *s, uint64_t n)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

/* Host l's end (port lp) of a connection to host r (port rp), IPv4. */
static inline qr_krec_ends kg_ends(uint32_t l, uint16_t lp, uint32_t r, uint16_t rp)
{
    qr_krec_ends e = {.family = 4, .lport = lp, .rport = rp};
    e.laddr[0] = 10, e.laddr[3] = (uint8_t)(l + 1);
    e.raddr[0] = 10, e.raddr[3] = (uint8_t)(r + 1);
    return e;
}

#endif
