/* The kernel record (krecord.h), written from generated event streams and read back: the same
 * connections, every sent segment's IP size in order (a GSO packet split into the NIC's segments,
 * runs coded however they fall), the sampler's records equal to qr_sample_series over the same
 * send times (two implementations that must agree), calls, resends, holes, CE marks and zero
 * windows counted as fed, events after a close kept with their connection, a reused port a new
 * connection; over many seeds; what a writer leaves out (ignored ports, flagless probes) as if
 * never told. And the errors: a flipped byte, a cut file, a file that is no
 * record, an abandoned writer leaving the old record in place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/krecord.h"

static char dir[64], path[128], err[QR_ERRBUF_SIZE];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-krec-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h.qrk", dir);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(krecord, .init = setup, .fini = teardown);

/* splitmix64: the cases' randomness, by seed */
typedef struct qr_random {
    uint64_t s;
} qr_random;

static uint64_t qr_random_below(qr_random *r, uint64_t n)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

#define T0 1700000000000000000LL
#define MAXSEG 4096

/* What a generated connection sent and saw, to compare the record with. */
struct gen {
    qr_krec_ends ends;
    uint32_t sizes[MAXSEG], seqs[MAXSEG], spans[MAXSEG];
    int64_t times[MAXSEG];
    size_t n;
    uint64_t calls[2], call_bytes[2], resends[3], holes, ce, zero;
};

static qr_krec_ends ends_of(uint32_t i, uint16_t lport)
{
    qr_krec_ends e = {.family = 4, .lport = lport, .rport = 5001};
    e.laddr[0] = 10, e.laddr[3] = 1;
    e.raddr[0] = 10, e.raddr[2] = (uint8_t)(i >> 8), e.raddr[3] = (uint8_t)(2 + i);
    return e;
}

static qr_krec_header header(void)
{
    qr_krec_header h = {"h0", 4026531840u, T0, QR_SAMPLING_RATE, 3, {1000, 5000, 10000}};
    return h;
}

static void push(struct gen *g, uint32_t size, uint32_t seq, uint32_t span, int64_t t)
{
    g->sizes[g->n] = size, g->seqs[g->n] = seq, g->spans[g->n] = span, g->times[g->n++] = t;
}

/* Connection g's traffic at times from *t on: a SYN, data in GSO packets and single segments, a
 * resend out of sequence, arrivals with a hole, a CE mark and a zero window, calls. */
static void feed(qr_krec_writer *w, struct gen *g, qr_random *r, int64_t *t)
{
    const uint16_t hdr = 52;
    uint32_t seq = 1000;
    cr_assert_eq(qr_krec_sent(w, &g->ends, seq - 1, 60, 60, 0, 0x02, *t, err), QR_OK, "%s", err);
    push(g, 60, seq - 1, 1, *t);
    uint32_t rx = 7000;
    for (int k = 0; k < 40 && g->n < MAXSEG - 64; k++) {
        *t += 1 + (int64_t)qr_random_below(r, 20000);
        uint32_t mss = 1448, pay;
        uint32_t kind = (uint32_t)qr_random_below(r, 10);
        if (kind < 4) { /* a GSO packet of several segments */
            uint32_t segs = 2 + (uint32_t)qr_random_below(r, 30);
            pay = segs * mss - (uint32_t)qr_random_below(r, mss);
            cr_assert_eq(qr_krec_sent(w, &g->ends, seq, hdr + pay, hdr, mss, 0x10, *t, err), QR_OK,
                         "%s", err);
            for (uint32_t off = 0; off < pay; off += mss) {
                uint32_t p = pay - off < mss ? pay - off : mss;
                push(g, hdr + p, seq + off, p, *t);
            }
            seq += pay;
        } else if (kind < 8) { /* one segment, often full-sized (runs) */
            pay = kind < 6 ? mss : 1 + (uint32_t)qr_random_below(r, mss);
            cr_assert_eq(qr_krec_sent(w, &g->ends, seq, hdr + pay, hdr, 0, 0x18, *t, err), QR_OK);
            push(g, hdr + pay, seq, pay, *t);
            seq += pay;
        } else { /* a resend of an earlier segment, and why */
            qr_krec_resend why = (qr_krec_resend)qr_random_below(r, 3);
            cr_assert_eq(qr_krec_resent(w, &g->ends, seq - mss, why, *t, err), QR_OK, "%s", err);
            g->resends[why]++;
            cr_assert_eq(qr_krec_sent(w, &g->ends, seq - mss, hdr + mss, hdr, 0, 0x10, *t, err),
                         QR_OK);
            push(g, hdr + mss, seq - mss, mss, *t);
        }
        /* what arrived from the peer: in order, or after a hole */
        uint32_t gap = k && qr_random_below(r, 8) == 0 ? 1448 : 0; /* a hole after the first */
        int ce = qr_random_below(r, 12) == 0;
        uint32_t win = qr_random_below(r, 15) == 0 ? 0 : 65535;
        cr_assert_eq(qr_krec_arrived(w, &g->ends, rx + gap, hdr + 100, hdr, 0x10, ce, win, *t, err),
                     QR_OK);
        g->holes += gap != 0;
        g->ce += ce;
        g->zero += win == 0;
        rx += gap + 100;
        int recv = (int)qr_random_below(r, 2);
        uint32_t bytes = 1 + (uint32_t)qr_random_below(r, 100000);
        cr_assert_eq(qr_krec_call(w, &g->ends, recv, bytes, *t, err), QR_OK);
        g->calls[recv]++;
        g->call_bytes[recv] += bytes;
    }
    /* the last data and the FIN in one GSO packet: the FIN on its last segment */
    *t += 1000;
    cr_assert_eq(qr_krec_sent(w, &g->ends, seq, hdr + 2000, hdr, 1448, 0x11, *t, err), QR_OK);
    push(g, hdr + 1448, seq, 1448, *t);
    push(g, hdr + 552, seq + 1448, 553, *t);
}

/* Connection c's segment sizes, its runs expanded (at most max). */
static size_t sizes_of(const qr_krec *k, uint32_t c, uint32_t *sizes, size_t max)
{
    size_t nr, n = 0;
    const qr_krec_run *r = qr_krec_runs(k, c, &nr);
    for (size_t i = 0; i < nr; i++)
        for (uint64_t j = 0; j < r[i].count; j++) {
            cr_assert_lt(n, max);
            sizes[n++] = r[i].size;
        }
    return n;
}

static void check_conn(const qr_krec *k, const qr_krec_conn *c, const struct gen *g)
{
    cr_assert(!memcmp(&c->ends, &g->ends, sizeof g->ends), "connection %u: its ends", c->id);
    static uint32_t sizes[MAXSEG];
    size_t n = sizes_of(k, c->id, sizes, MAXSEG);
    cr_assert_eq(n, g->n, "connection %u: %zu segments, fed %zu", c->id, n, g->n);
    cr_assert_eq(c->packets, g->n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(sizes[i], g->sizes[i], "connection %u, segment %zu", c->id, i);
    /* every segment's sequence range, from the runs alone */
    size_t nr;
    const qr_krec_run *runs = qr_krec_runs(k, c->id, &nr);
    qr_krec_walk wk;
    qr_krec_walk_start(&wk, runs, nr);
    qr_krec_segment sg;
    for (size_t i = 0; i < n; i++) {
        cr_assert(qr_krec_walk_next(&wk, &sg), "connection %u: the walk ends at %zu", c->id, i);
        cr_assert(sg.size == g->sizes[i] && sg.seq == g->seqs[i] && sg.span == g->spans[i],
                  "connection %u segment %zu: seq %u span %u, fed seq %u span %u", c->id, i, sg.seq,
                  sg.span, g->seqs[i], g->spans[i]);
    }
    cr_assert(!qr_krec_walk_next(&wk, &sg));
    cr_assert(c->calls[0] == g->calls[0] && c->calls[1] == g->calls[1] &&
              c->call_bytes[0] == g->call_bytes[0] && c->call_bytes[1] == g->call_bytes[1]);
    cr_assert(c->resends[0] == g->resends[0] && c->resends[1] == g->resends[1] &&
              c->resends[2] == g->resends[2]);
    cr_assert(c->holes == g->holes && c->ce == g->ce && c->zero_windows == g->zero);
    /* the samples: what the sampler makes of the same send times, whole */
    const qr_krec_header *h = qr_krec_header_of(k);
    for (size_t i = 0; i < h->n_th; i++) {
        qr_sampler *s;
        qr_sampler_cfg cfg = {h->method, h->th_ns[i]};
        cr_assert_eq(qr_sampler_create(&s, &cfg), QR_OK);
        qr_sample_record want[MAXSEG];
        size_t nw, ng;
        cr_assert_eq(qr_sample_series(s, g->times, g->n, want, &nw, NULL, NULL, err), QR_OK);
        qr_sampler_destroy(s);
        const qr_sample_record *got = qr_krec_samples(k, c->id, i, &ng);
        cr_assert_eq(ng, nw, "connection %u, threshold %zu: %zu records, the series %zu", c->id, i,
                     ng, nw);
        for (size_t j = 0; j < nw; j++)
            cr_assert(got[j].index == want[j].index && got[j].time_ns == want[j].time_ns &&
                          got[j].gap_num == want[j].gap_num && got[j].gap_den == want[j].gap_den,
                      "connection %u, threshold %zu, record %zu", c->id, i, j);
    }
}

Test(krecord, what_is_fed_reads_back_over_many_seeds)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        qr_random rs0 = {seed}, *r = &rs0;
        size_t nc = 1 + (size_t)qr_random_below(r, 5);
        struct gen *g = calloc(nc, sizeof *g);
        qr_krec_header h = header();
        qr_krec_writer *w;
        cr_assert_eq(qr_krec_writer_open(&w, path, &h, err), QR_OK, "%s", err);
        int64_t t = T0 + 1000;
        for (size_t i = 0; i < nc; i++) {
            g[i].ends = ends_of((uint32_t)i, (uint16_t)(40000 + i));
            feed(w, &g[i], r, &t);
            if (qr_random_below(r, 2)) { /* closed, then an application's late read */
                cr_assert_eq(qr_krec_state(w, &g[i].ends, ++t, 4, 7, err), QR_OK);
                cr_assert_eq(qr_krec_call(w, &g[i].ends, 1, 100, ++t, err), QR_OK);
                g[i].calls[1]++, g[i].call_bytes[1] += 100;
            }
        }
        qr_krec_stats ws;
        cr_assert_eq(qr_krec_writer_close(w, 1234, 5, &ws, err), QR_OK, "%s", err);
        qr_krec *k;
        cr_assert_eq(qr_krec_open(&k, path, err), QR_OK, "seed %llu: %s", (unsigned long long)seed,
                     err);
        qr_krec_stats rs;
        qr_krec_stats_get(k, &rs);
        cr_assert(rs.events == 1234 && rs.lost_events == 5, "the kernel's counts kept");
        cr_assert(rs.packets == ws.packets && rs.nic_packets == ws.nic_packets &&
                  rs.payload_bytes == ws.payload_bytes && rs.connections == nc);
        const qr_krec_conn *c;
        cr_assert_eq(qr_krec_conns(k, &c), nc);
        for (size_t i = 0; i < nc; i++)
            check_conn(k, &c[i], &g[i]);
        qr_krec_close(k);
        free(g);
    }
}

/* The receiver's holes and duplicates against a byte map of what arrived (the oracle): packets
 * of a stream arrive lost, reordered, resent and duplicated at random; every arrival's bytes
 * below the highest arrived that had arrived before are a duplicate at its sequence number,
 * every jump beyond it a hole; the calls read back with their times and, for each read, when
 * the bytes in order first reached its last byte (when its data arrived). */
Test(krecord, holes_duplicates_and_reads_agree_with_a_byte_map_over_many_seeds)
{
    enum { SEGS = 120, MSS = 100, SPACE = SEGS * MSS };
    static uint8_t got[SPACE];
    int many_holes = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        qr_random rs0 = {seed}, *r = &rs0;
        qr_krec_header h = header();
        qr_krec_writer *w;
        cr_assert_eq(qr_krec_writer_open(&w, path, &h, err), QR_OK, "%s", err);
        qr_krec_ends e = ends_of(0, 40000);
        const uint32_t base = 4000000000u; /* the sequence space wraps on the way */
        int64_t t = T0 + 10;
        uint32_t rx_next = 0, n_dup = 0, n_hole = 0, max_runs = 0;
        uint64_t dup_bytes = 0, hole_bytes = 0;
        uint32_t dup_at[4 * SEGS], dup_n[4 * SEGS];
        int64_t call_t[SEGS], ready_t[SEGS], grew = -1; /* when the bytes in order last grew */
        uint32_t prefix = 0, n_growth = 0, growth_at[3 * SEGS];
        int64_t growth_t[3 * SEGS];
        uint64_t read = 0;
        memset(got, 0, sizeof got);
        /* a SYN first (the stream's start), then segments in a shuffled, lossy, repeating order */
        cr_assert_eq(qr_krec_arrived(w, &e, base - 1, 52, 52, 0x02, 0, 65535, t, err), QR_OK);
        for (uint32_t i = 0; i < 3 * SEGS; i++) {
            uint32_t sg =
                i < SEGS && qr_random_below(r, 4) ? i : (uint32_t)qr_random_below(r, SEGS);
            uint32_t off = sg * MSS, len = MSS;
            if (qr_random_below(r, 6) == 0) /* a resend of two segments in one */
                len = off + 2 * MSS <= SPACE ? 2 * MSS : MSS;
            t += 1 + (int64_t)qr_random_below(r, 5000);
            cr_assert_eq(qr_krec_arrived(w, &e, base + off, 52 + len, 52, 0x10, 0, 65535, t, err),
                         QR_OK, "%s", err);
            if (off > rx_next) {
                n_hole++, hole_bytes += off - rx_next;
            } else {
                uint32_t below = off + len < rx_next ? len : rx_next - off, d = 0;
                for (uint32_t b = off; b < off + below; b++)
                    d += got[b];
                if (d) {
                    dup_at[n_dup] = base + off, dup_n[n_dup++] = d;
                    dup_bytes += d;
                }
            }
            for (uint32_t b = off; b < off + len; b++)
                got[b] = 1;
            if (off + len > rx_next)
                rx_next = off + len;
            uint32_t runs = 0; /* the holes the receiver must track now */
            for (uint32_t b = 0; b < rx_next; b++)
                runs += !got[b] && (b == 0 || got[b - 1]);
            max_runs = runs > max_runs ? runs : max_runs;
            uint32_t was = prefix;
            while (prefix < SPACE && got[prefix])
                prefix++;
            if (prefix > was) {
                grew = t;
                growth_at[n_growth] = prefix, growth_t[n_growth++] = t;
            }
            if (i < SEGS) {
                /* a read's last byte arrived when the bytes in order first reached it (where
                 * they have not: the last growth, at the latest) */
                read += i + 1;
                call_t[i] = t;
                ready_t[i] = grew;
                for (uint32_t g = 0; g < n_growth; g++)
                    if (growth_at[g] >= read) {
                        ready_t[i] = growth_t[g];
                        break;
                    }
                cr_assert_eq(qr_krec_call(w, &e, 1, i + 1, t, err), QR_OK);
            }
        }
        qr_krec_stats ws;
        cr_assert_eq(qr_krec_writer_close(w, 1, 0, &ws, err), QR_OK, "%s", err);
        qr_krec *k;
        cr_assert_eq(qr_krec_open(&k, path, err), QR_OK, "%s", err);
        size_t na, nc, j = 0, kept = 0;
        const qr_krec_event *a = qr_krec_arrivals(k, 0, &na);
        int exact = max_runs <= 16; /* else holes beyond the 16 tracked: fewer told, none made */
        many_holes += !exact;
        for (size_t i = 0; i < na; i++)
            if (a[i].kind == QR_KREC_DUPLICATE) {
                while (!exact && j < n_dup && dup_at[j] != a[i].seq)
                    j++;
                cr_assert(j < n_dup && a[i].seq == dup_at[j] &&
                              (exact ? a[i].bytes == dup_n[j] : a[i].bytes <= dup_n[j]),
                          "seed %llu: duplicate %zu at %u of %u B; the map's at %u of %u B",
                          (unsigned long long)seed, kept, a[i].seq, a[i].bytes,
                          j < n_dup ? dup_at[j] : 0, j < n_dup ? dup_n[j] : 0);
                j++, kept++;
            }
        if (!exact) {
            cr_assert(ws.duplicates <= n_dup && ws.duplicate_bytes <= dup_bytes &&
                      ws.holes == n_hole && ws.hole_bytes == hole_bytes);
            qr_krec_close(k);
            continue;
        }
        cr_assert_eq(kept, n_dup);
        cr_assert(ws.duplicates == n_dup && ws.duplicate_bytes == dup_bytes && ws.holes == n_hole &&
                      ws.hole_bytes == hole_bytes,
                  "seed %llu: written %llu duplicates (%llu B), %llu holes; the map says %u (%llu "
                  "B), %u",
                  (unsigned long long)seed, (unsigned long long)ws.duplicates,
                  (unsigned long long)ws.duplicate_bytes, (unsigned long long)ws.holes, n_dup,
                  (unsigned long long)dup_bytes, n_hole);
        const qr_krec_event *c = qr_krec_calls(k, 0, &nc);
        cr_assert_eq(nc, SEGS);
        for (size_t i = 0; i < nc; i++)
            cr_assert(c[i].kind == 1 && c[i].bytes == i + 1 && c[i].t_ns == call_t[i] &&
                          c[i].ready_ns == ready_t[i],
                      "seed %llu: call %zu read back (its data ready at %lld, the map's %lld)",
                      (unsigned long long)seed, i, (long long)c[i].ready_ns, (long long)ready_t[i]);
        qr_krec_close(k);
    }
    cr_assert(many_holes > 0 && many_holes < 40, "%d of 40 streams beyond 16 holes: both kinds",
              many_holes);
}

Test(krecord, a_reused_port_is_a_new_connection_and_a_listener_none)
{
    qr_krec_header h = header();
    qr_krec_writer *w;
    cr_assert_eq(qr_krec_writer_open(&w, path, &h, err), QR_OK, "%s", err);
    qr_krec_ends e = ends_of(0, 40000), listener = e;
    listener.rport = 0;
    cr_assert_eq(qr_krec_state(w, &listener, T0 + 1, 7, 10, err), QR_OK);
    for (int i = 0; i < 2; i++) {
        int64_t t = T0 + 100 + 1000 * i;
        cr_assert_eq(qr_krec_sent(w, &e, 5, 60, 60, 0, 0x02, t, err), QR_OK, "%s", err);
        cr_assert_eq(qr_krec_state(w, &e, t + 1, 2, 1, err), QR_OK);
        cr_assert_eq(qr_krec_state(w, &e, t + 2, 1, 7, err), QR_OK);
        cr_assert_eq(qr_krec_sent(w, &e, 6, 52, 52, 0, 0x10, t + 3, err), QR_OK); /* TIME_WAIT */
    }
    cr_assert_eq(qr_krec_writer_close(w, 8, 0, NULL, err), QR_OK, "%s", err);
    qr_krec *k;
    cr_assert_eq(qr_krec_open(&k, path, err), QR_OK, "%s", err);
    const qr_krec_conn *c;
    cr_assert_eq(qr_krec_conns(k, &c), 2, "two connections, no listener");
    for (int i = 0; i < 2; i++)
        cr_assert(!c[i].mid && c[i].close_ns == T0 + 100 + 1000 * i + 2 && c[i].packets == 2,
                  "connection %d: seen from its SYN, closed, its last ACK after the close kept", i);
    qr_krec_close(k);
}

static void write_small(const char *p)
{
    qr_krec_header h = header();
    qr_krec_writer *w;
    cr_assert_eq(qr_krec_writer_open(&w, p, &h, err), QR_OK, "%s", err);
    qr_krec_ends e = ends_of(0, 40000);
    for (int i = 0; i < 50; i++)
        cr_assert_eq(
            qr_krec_sent(w, &e, 1000u + 1448u * (uint32_t)i, 1500, 52, 0, 0x10, T0 + 1000 * i, err),
            QR_OK);
    cr_assert_eq(qr_krec_writer_close(w, 50, 0, NULL, err), QR_OK, "%s", err);
}

/* Whether k holds what write_small wrote. */
static int same_as_small(const qr_krec *k)
{
    qr_krec_stats st;
    qr_krec_stats_get(k, &st);
    uint32_t sizes[64];
    size_t nr;
    const qr_krec_run *r = qr_krec_runs(k, 0, &nr);
    size_t n = st.packets == 50 && nr && r[0].count <= 50 ? sizes_of(k, 0, sizes, 64) : 0;
    int ok = st.connections == 1 && st.packets == 50 && st.events == 50 && n == 50 &&
             !strcmp(qr_krec_host(k), "h0");
    for (size_t i = 0; ok && i < n; i++)
        ok = sizes[i] == 1500;
    return ok;
}

static size_t file_size(const char *p)
{
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fclose(f);
    return n;
}

Test(krecord, damage_is_refused_naming_the_file)
{
    write_small(path);
    size_t n = file_size(path);
    char bad[160], cmd[512];
    qr_krec *k;
    /* every byte flipped in turn: refused, or (a bit no reader reads) the same record */
    for (size_t at = 0; at < n; at++) {
        snprintf(bad, sizeof bad, "%s/flip.qrk", dir);
        snprintf(cmd, sizeof cmd, "cp %s %s", path, bad);
        cr_assert_eq(system(cmd), 0);
        FILE *f = fopen(bad, "r+b");
        fseek(f, (long)at, SEEK_SET);
        int b = fgetc(f);
        fseek(f, (long)at, SEEK_SET);
        fputc(b ^ 0x40, f);
        fclose(f);
        int rc = qr_krec_open(&k, bad, err);
        if (rc == QR_OK) { /* a bit deflate does not read (padding): the same record */
            cr_assert(same_as_small(k), "byte %zu flipped: read as another record", at);
            qr_krec_close(k);
            continue;
        }
        cr_assert_eq(rc, QR_EFORMAT, "byte %zu flipped: %d", at, rc);
        cr_assert(strstr(err, "flip.qrk"), "%s", err);
    }
    /* cut anywhere */
    for (size_t len = 0; len < n; len += 7) {
        snprintf(cmd, sizeof cmd, "head -c %zu %s > %s/cut.qrk", len, path, dir);
        cr_assert_eq(system(cmd), 0);
        snprintf(bad, sizeof bad, "%s/cut.qrk", dir);
        cr_assert_eq(qr_krec_open(&k, bad, err), QR_EFORMAT, "cut at %zu", len);
    }
    snprintf(bad, sizeof bad, "%s/none.qrk", dir);
    cr_assert_eq(qr_krec_open(&k, bad, err), QR_ENOENT);
}

Test(krecord, an_abandoned_record_leaves_the_old_one)
{
    write_small(path);
    size_t n = file_size(path);
    qr_krec_header h = header();
    qr_krec_writer *w;
    cr_assert_eq(qr_krec_writer_open(&w, path, &h, err), QR_OK, "%s", err);
    qr_krec_ends e = ends_of(1, 40001);
    cr_assert_eq(qr_krec_sent(w, &e, 1, 1500, 52, 0, 0x10, T0 + 5, err), QR_OK);
    /* an event before the start is refused, naming the file */
    cr_assert_eq(qr_krec_sent(w, &e, 1, 1500, 52, 0, 0x10, T0 - 5, err), QR_EVALUE);
    cr_assert(strstr(err, "h.qrk") && strstr(err, "before the record's start"), "%s", err);
    qr_krec_writer_abort(w);
    cr_assert_eq(file_size(path), n, "the old record is untouched");
    qr_krec *k;
    cr_assert_eq(qr_krec_open(&k, path, err), QR_OK, "%s", err);
    qr_krec_stats st;
    qr_krec_stats_get(k, &st);
    cr_assert_eq(st.packets, 50);
    qr_krec_close(k);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c partial", dir);
    cr_assert_neq(system(cmd), 0, "no partial file left");
}

/* Packets sent that no event told: a connection's IPv4 identifications, sequential as Linux
 * counts them (a GSO packet takes one per segment), with events omitted and neighbours handed
 * over in swapped order (two CPUs), the last one told (a gap shows only where a later packet is
 * told); the writer's count of the unseen equals the omitted, and
 * the end block's lost events hold them. A connection whose identifications jump around (not
 * counted per connection) stops being checked: nothing counted. */
Test(krecord, packets_no_event_told_are_counted_from_ip_identification_gaps)
{
    uint64_t total = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        qr_random rs0 = {seed}, *r = &rs0;
        qr_krec_header h = header();
        qr_krec_writer *w;
        cr_assert_eq(qr_krec_writer_open(&w, path, &h, err), QR_OK, "%s", err);
        qr_krec_ends e = ends_of(0, 40000), odd = ends_of(1, 40001);
        int64_t t = T0 + 10;
        uint32_t seq = 1000, id = (uint32_t)qr_random_below(r, 65536);
        cr_assert_eq(qr_krec_sent_ipid(w, &e, seq++, 52, 52, 0, 0x02, 7, t, err), QR_OK);
        uint64_t omitted = 0;
        enum { N = 300 };
        uint32_t ids[N], segs[N];
        int keep[N];
        for (int i = 0; i < N; i++) {
            segs[i] = qr_random_below(r, 8) == 0 ? 2 : 1;
            ids[i] = id & 0xffffu;
            id += segs[i];
            keep[i] = i == 0 || i == N - 1 || qr_random_below(r, 12) != 0; /* a gap shows after */
            omitted += keep[i] ? 0 : segs[i];
        }
        for (int i = 0; i < N; i++) {
            int j = i;
            /* now and then the next one first */
            if (i + 1 < N && keep[i] && keep[i + 1] && qr_random_below(r, 10) == 0) {
                j = i + 1;
                uint32_t p = segs[j] * 100;
                cr_assert_eq(qr_krec_sent_ipid(w, &e, seq, 52 + p, 52, segs[j] > 1 ? 100 : 0, 0x10,
                                               (int32_t)ids[j], ++t, err),
                             QR_OK, "%s", err);
                keep[j] = 0;
            }
            if (keep[i]) {
                uint32_t p = segs[i] * 100;
                cr_assert_eq(qr_krec_sent_ipid(w, &e, seq, 52 + p, 52, segs[i] > 1 ? 100 : 0, 0x10,
                                               (int32_t)ids[i], ++t, err),
                             QR_OK, "%s", err);
            }
            if (j != i) {
                keep[j] = 1; /* told, out of order */
                i++;
            }
            seq += 100 * segs[i];
        }
        /* identifications that are no counter: never counted */
        cr_assert_eq(qr_krec_sent_ipid(w, &odd, 1, 52, 52, 0, 0x02, 0, t, err), QR_OK);
        for (int i = 0; i < 50; i++)
            cr_assert_eq(qr_krec_sent_ipid(w, &odd, 2, 52, 52, 0, 0x10,
                                           (int32_t)qr_random_below(r, 65536), ++t, err),
                         QR_OK);
        cr_assert_eq(qr_krec_writer_unseen(w), omitted, "seed %lu: %lu unseen, omitted %lu",
                     (unsigned long)seed, (unsigned long)qr_krec_writer_unseen(w),
                     (unsigned long)omitted);
        qr_krec_stats st;
        qr_krec_writer_recorder_lost(w, 2); /* of the 3 lost: 2 the recorder's, 1 another host's */
        cr_assert_eq(qr_krec_writer_close(w, 100, 3, &st, err), QR_OK, "%s", err);
        cr_assert_eq(st.unseen, omitted);
        qr_krec *k;
        cr_assert_eq(qr_krec_open(&k, path, err), QR_OK, "%s", err);
        qr_krec_stats_get(k, &st);
        cr_assert_eq(st.lost_events, 3 + omitted);
        cr_assert_eq(qr_krec_format(k), 5);
        cr_assert(st.unseen == omitted && st.recorder_lost == 2,
                  "the losses told apart in the record: %lu unseen, %lu the recorder's",
                  (unsigned long)st.unseen, (unsigned long)st.recorder_lost);
        qr_krec_close(k);
        total += omitted;
    }
    cr_assert_gt(total, 100);
}

static unsigned char *slurp_file(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f, "%s", p);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)size + 1);
    cr_assert_eq(fread(b, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return b;
}

/* One generated event, fed to two writers (left_out: only the writer that ignores port 8765 is
 * fed it, and leaves it out). */
struct ev {
    int kind; /* 0 state, 1 call, 2 sent, 3 arrived, 4 resent */
    qr_krec_ends e;
    uint32_t seq, len, a, b;
    uint8_t flags;
    int32_t ipid;
    int64_t t;
    int left_out, flagless;
};

static void feed_ev(qr_krec_writer *w, const struct ev *x)
{
    int rc = QR_OK;
    switch (x->kind) {
    case 0: rc = qr_krec_state(w, &x->e, x->t, (int)x->a, (int)x->b, err); break;
    case 1: rc = qr_krec_call(w, &x->e, (int)x->a, x->len, x->t, err); break;
    case 2:
        rc = qr_krec_sent_ipid(w, &x->e, x->seq, x->len, 52, 0, x->flags, x->ipid, x->t, err);
        break;
    case 3:
        rc = qr_krec_arrived(w, &x->e, x->seq, x->len, 52, x->flags, 0, 65535, x->t, err);
        break;
    default: rc = qr_krec_resent(w, &x->e, x->seq, QR_KREC_FAST, x->t, err);
    }
    cr_assert_eq(rc, QR_OK, "%s", err);
}

/* Leaving out is the same as never being told (the oracle: a second writer fed only the rest):
 * connections on an ignored port, at either end, and TCP packets with no flag (a raw socket's
 * probes on a connection's own addresses and ports, with IP identifications of their own) give
 * a record byte for byte the record of the stream without them, and the counts say how many. */
Test(krecord, what_is_left_out_is_as_if_never_told_over_many_seeds)
{
    static struct ev evs[4000];
    char other[160];
    snprintf(other, sizeof other, "%s/other.qrk", dir);
    for (uint64_t seed = 1; seed <= 30; seed++) {
        qr_random rs0 = {seed}, *r = &rs0;
        size_t n = 0;
        uint64_t want_ignored = 0, want_flagless = 0;
        int64_t t = T0 + 100;
        uint16_t ports[4] = {40000, 8765, 40002, 40003};
        uint32_t seq[4] = {1000, 1000, 1000, 1000}, id[4] = {5, 9, 77, 300};
        for (int c = 0; c < 4; c++) { /* each opens; 8765 is the peer's port of connection 1 */
            qr_krec_ends e = ends_of((uint32_t)c, ports[c]);
            if (c == 1 && qr_random_below(r, 2))
                e.lport = 40001, e.rport = 8765;
            evs[n++] = (struct ev){0, e, 0, 0, 7, 2, 0, 0, ++t, 0, 0};
        }
        for (int c = 0; c < 4; c++)
            evs[c].left_out = evs[c].e.lport == 8765 || evs[c].e.rport == 8765;
        for (int k = 0; k < 600; k++) {
            int c = (int)qr_random_below(r, 4);
            struct ev x = {0};
            x.e = evs[c].e;
            x.t = (t += 1 + (int64_t)qr_random_below(r, 5000));
            x.left_out = evs[c].left_out;
            uint32_t kind = (uint32_t)qr_random_below(r, 10);
            if (kind < 4) { /* data sent */
                x.kind = 2, x.seq = seq[c], x.len = 52 + 1 + (uint32_t)qr_random_below(r, 1448);
                x.flags = 0x18, x.ipid = (int32_t)(id[c]++ & 0xffff);
                seq[c] += x.len - 52;
            } else if (kind < 6) { /* a probe: no flag, an identification of its own */
                x.kind = qr_random_below(r, 3) ? 2 : 3, x.seq = seq[c], x.len = 52, x.flags = 0;
                x.ipid = (int32_t)qr_random_below(r, 65536);
                x.flagless = !x.left_out;
            } else if (kind < 8) {
                x.kind = 3, x.seq = 7000 + (uint32_t)k * 10, x.len = 62, x.flags = 0x10;
            } else if (kind < 9) {
                x.kind = 1, x.a = (uint32_t)qr_random_below(r, 2);
                x.len = 1 + (uint32_t)qr_random_below(r, 5000);
            } else {
                x.kind = 4, x.seq = seq[c] > 2000 ? seq[c] - 500 : 1000;
            }
            want_ignored += x.left_out;
            want_flagless += x.flagless;
            evs[n++] = x;
        }
        want_ignored += evs[0].left_out + evs[1].left_out + evs[2].left_out + evs[3].left_out;
        qr_krec_header h = header();
        qr_krec_writer *w, *v;
        cr_assert_eq(qr_krec_writer_open(&w, path, &h, err), QR_OK, "%s", err);
        cr_assert_eq(qr_krec_writer_open(&v, other, &h, err), QR_OK, "%s", err);
        uint16_t ig = 8765;
        cr_assert_eq(qr_krec_writer_ignore_ports(w, &ig, 1, err), QR_OK);
        for (size_t i = 0; i < n; i++) {
            feed_ev(w, &evs[i]);
            if (!evs[i].left_out && !evs[i].flagless)
                feed_ev(v, &evs[i]);
        }
        qr_krec_stats sw, sv;
        cr_assert_eq(qr_krec_writer_close(w, 10, 0, &sw, err), QR_OK, "%s", err);
        cr_assert_eq(qr_krec_writer_close(v, 10, 0, &sv, err), QR_OK, "%s", err);
        cr_assert_eq(sw.ignored_events, want_ignored, "seed %lu", (unsigned long)seed);
        cr_assert_eq(sw.flagless, want_flagless, "seed %lu", (unsigned long)seed);
        cr_assert_eq(sw.unseen, 0, "a probe's identification is not a gap");
        size_t na, nb;
        unsigned char *a = slurp_file(path, &na), *b = slurp_file(other, &nb);
        cr_assert(na == nb && !memcmp(a, b, na), "seed %lu: the records differ (%zu and %zu bytes)",
                  (unsigned long)seed, na, nb);
        free(a);
        free(b);
    }
}
