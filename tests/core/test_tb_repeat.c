/* The butterfly on real kernels, its comparison (tb_repeat.h): generated connections captured at
 * both ends and imported, then compared with a repeat of them. Oracles: a repeat that differs
 * only in the kernels' random initial sequence numbers (and its times) is exact, connection by
 * connection, every packet the same; one flipped PSH flag makes exactly its connection inexact,
 * the same before it and its data segments still the same; one ACK left out makes its
 * connection inexact with the data the same; over many seeds. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crafted.h"
#include "qreplay/recording.h"
#include "qreplay/tb_repeat.h"

TestSuite(tb_repeat, .init = make_tmp, .fini = rm_tmp);

#define MAXP 4096

struct caps {
    qr_packet a[MAXP], b[MAXP]; /* A's capture (sent and received), B's */
    size_t na, nb;
};

/* Change to the generated traffic: none, a PSH flipped on data segment `at` of connection c, or
 * the ACK `at` of connection c left out. */
enum change { NONE, FLIP_PSH, NO_ACK };

static uint64_t rnd(uint64_t *s, uint64_t n)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

static void put(struct caps *k, qr_packet p, int from_b)
{
    cr_assert_lt(k->na, MAXP);
    cr_assert_lt(k->nb, MAXP);
    k->a[k->na++] = p;
    k->b[k->nb++] = p;
    (void)from_b;
}

/* nc connections from A (ports 40000 + c) to B's port 80 on seed's sizes, with initial sequence
 * numbers from isn_seed; ch applied to connection c at index at. Data segments per connection
 * into segs[c], ACKs into acks[c]. */
static void gen(struct caps *k, uint64_t seed, uint64_t isn_seed, int nc, enum change ch, int cc,
                int at, int *segs, int *acks)
{
    k->na = k->nb = 0;
    uint64_t s = seed, is = isn_seed;
    int64_t t = 1000 * MS;
    for (int c = 0; c < nc; c++) {
        uint32_t x = (uint32_t)rnd(&is, 1ull << 32), y = (uint32_t)rnd(&is, 1ull << 32);
        uint16_t pa = (uint16_t)(40000 + c), ida = 1, idb = 1;
        put(k, tcp(t += 10000, A, B, pa, 80, x, 0, QR_TCP_SYN, 0, ida++), 0);
        put(k, tcp(t += 10000, B, A, 80, pa, y, x + 1, QR_TCP_SYN | ACKF, 0, idb++), 1);
        put(k, tcp(t += 10000, A, B, pa, 80, x + 1, y + 1, ACKF, 0, ida++), 0);
        uint32_t sent = 1;
        int n = 3 + (int)rnd(&s, 40), na = 0;
        segs[c] = n;
        for (int i = 0; i < n; i++) {
            uint16_t len = (uint16_t)(1 + rnd(&s, 1448));
            uint8_t fl = ACKF | (rnd(&s, 3) == 0 ? QR_TCP_PSH : 0);
            if (ch == FLIP_PSH && c == cc && i == at)
                fl ^= QR_TCP_PSH;
            put(k, tcp(t += 10000, A, B, pa, 80, x + sent, y + 1, fl, len, ida++), 0);
            sent += len;
            if (i % 2 == 1 || i == n - 1) {
                if (!(ch == NO_ACK && c == cc && na == at))
                    put(k, tcp(t += 10000, B, A, 80, pa, y + 1, x + sent, ACKF, 0, idb++), 1);
                na++;
            }
        }
        acks[c] = na;
        put(k, tcp(t += 10000, A, B, pa, 80, x + sent, y + 1, ACKF | QR_TCP_FIN, 0, ida++), 0);
        put(k, tcp(t += 10000, B, A, 80, pa, y + 1, x + sent + 1, ACKF | QR_TCP_FIN, 0, idb++), 1);
        put(k, tcp(t += 10000, A, B, pa, 80, x + sent + 1, y + 2, ACKF, 0, ida++), 0);
    }
}

static qr_recording *import_caps(struct caps *k, const char *name)
{
    char pa[256], pb[256], dir[256], err[QR_ERRBUF_SIZE];
    snprintf(pa, sizeof pa, "%s/%s-a.pcap", tmpdir, name);
    snprintf(pb, sizeof pb, "%s/%s-b.pcap", tmpdir, name);
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    write_capture(pa, k->a, k->na);
    write_capture(pb, k->b, k->nb);
    char ca[64], cb[64];
    snprintf(ca, sizeof ca, "%s-a.pcap", name);
    snprintf(cb, sizeof cb, "%s-b.pcap", name);
    qr_host_map_entry map[2] = {entry(A, 0, ca), entry(B, 1, cb)};
    const char *caps[2] = {pa, pb};
    qr_import_report_free(import(caps, 2, map, 2, QR_IMPORT_CLOCK_NONE, dir));
    qr_recording *r;
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    return r;
}

Test(tb_repeat, a_repeat_is_judged_by_its_packets_not_its_initial_numbers)
{
    static struct caps k;
    char err[QR_ERRBUF_SIZE];
    for (uint64_t seed = 1; seed <= 12; seed++) {
        int nc = 1 + (int)(seed % 4), segs[8], acks[8];
        gen(&k, seed, seed * 7, nc, NONE, 0, 0, segs, acks);
        qr_recording *run = import_caps(&k, "run");
        /* the same traffic on other initial sequence numbers */
        gen(&k, seed, seed * 7 + 1000, nc, NONE, 0, 0, segs, acks);
        qr_recording *same = import_caps(&k, "same");
        qr_tb_repeat_conn conns[8];
        qr_tb_repeat_summary sum;
        cr_assert_eq(qr_tb_repeat_compare(run, same, conns, &sum, err), QR_OK, "%s", err);
        cr_assert(sum.connections == (size_t)nc && sum.found == (size_t)nc &&
                      sum.exact == (size_t)nc && sum.data_same == (size_t)nc,
                  "seed %lu: %zu connections, %zu found, %zu exact", (unsigned long)seed,
                  sum.connections, sum.found, sum.exact);
        cr_assert_eq(sum.same_prefix, sum.packets);
        /* a PSH flipped on one data segment: that connection alone, the same before it */
        uint64_t s = seed * 31;
        int c = (int)rnd(&s, (uint64_t)nc), at = (int)rnd(&s, (uint64_t)segs[c]);
        gen(&k, seed, seed * 7 + 2000, nc, FLIP_PSH, c, at, segs, acks);
        qr_recording *psh = import_caps(&k, "psh");
        cr_assert_eq(qr_tb_repeat_compare(run, psh, conns, &sum, err), QR_OK, "%s", err);
        cr_assert_eq(sum.exact, (size_t)nc - 1, "seed %lu", (unsigned long)seed);
        cr_assert_eq(sum.data_same, (size_t)nc, "flags aside, the data is the same");
        for (int i = 0; i < nc; i++) {
            cr_assert_eq(conns[i].exact, i != c);
            if (i == c) /* the data direction: SYN, ACK, then the segments before it; all ACKs */
                cr_assert_eq(conns[i].same_prefix, (uint64_t)(2 + at) + (uint64_t)(acks[i] + 2),
                             "seed %lu: %lu the same", (unsigned long)seed,
                             (unsigned long)conns[i].same_prefix);
        }
        /* one ACK left out */
        int a = (int)rnd(&s, (uint64_t)acks[c]);
        gen(&k, seed, seed * 7 + 3000, nc, NO_ACK, c, a, segs, acks);
        qr_recording *noack = import_caps(&k, "noack");
        cr_assert_eq(qr_tb_repeat_compare(run, noack, conns, &sum, err), QR_OK, "%s", err);
        cr_assert(sum.exact == (size_t)nc - 1 && !conns[c].exact && conns[c].data_same);
        cr_assert_eq(conns[c].repeated + 1, conns[c].packets);
        qr_recording_close(run);
        qr_recording_close(same);
        qr_recording_close(psh);
        qr_recording_close(noack);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s/run %s/same %s/psh %s/noack", tmpdir, tmpdir, tmpdir,
                 tmpdir);
        cr_assert_eq(system(cmd), 0);
    }
}

/* A repeat's jitter: every start moved by [0, jitter), the same draw for the same seed, repeat
 * and flow, another repeat another draw, none with no jitter. */
Test(tb_repeat, jitter_moves_each_start_within_its_bound_and_repeatably)
{
    enum { N = 200 };
    static qr_flow a[N], b[N], c[N];
    for (int i = 0; i < N; i++)
        a[i].start_ns = b[i].start_ns = c[i].start_ns = 1000 * i;
    qr_tb_repeat_jitter(a, N, 7, 1, 10000);
    qr_tb_repeat_jitter(b, N, 7, 1, 10000);
    qr_tb_repeat_jitter(c, N, 7, 2, 10000);
    int differ = 0;
    for (int i = 0; i < N; i++) {
        int64_t d = a[i].start_ns - 1000 * i;
        cr_assert(d >= 0 && d < 10000, "flow %d moved by %ld", i, (long)d);
        cr_assert_eq(a[i].start_ns, b[i].start_ns);
        differ += a[i].start_ns != c[i].start_ns;
    }
    cr_assert_gt(differ, N / 2, "another repeat, other draws");
    qr_tb_repeat_jitter(c, N, 7, 3, 0);
    qr_tb_repeat_jitter(b, N, 7, 1, 0);
    for (int i = 0; i < N; i++)
        cr_assert_eq(b[i].start_ns, a[i].start_ns, "no jitter: no move");
}
