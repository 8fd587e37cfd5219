/* qreplay trace (Everflow) on the planted gray cable (scenarios/faults/gray-k4.ini): the fault's
 * drops are exactly truth.h5's, all on the planted cable and nowhere else; tracing every packet is
 * conserved against the arrival log (every record is one hop of one packet, each delivered packet
 * crosses as many switches as its path has, hop times increase, the queueing delay is the queue's
 * bytes at the link rate, the profile's shares sum to one); seeded random expressions built with
 * and/or/not match exactly the set algebra of their parts; in an exact tagged replay the tagged
 * packets are exactly the ones receivers detected lost; bad expressions and logs are clear
 * errors that write nothing. */
#include <inttypes.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/hoptrace.h"
#include "qreplay/queuelog.h"
#include "qreplay/schema.h"
#include "qreplay/schema_hoptrace.h"
#include "qreplay/topology.h"

#include "harness.h"

TestSuite(trace_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

static void planted_run(void)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini -o %s/g --quiet", dir), 0, "%s",
                 err);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted packet ids trace.h5 /packets holds (traced with --limit 0). */
static uint64_t *ids_of(const char *path, size_t *n)
{
    qr_row_hop_packet *p = rows_of(path, "/packets", &qr_schema_hop_packet, n);
    uint64_t *ids = malloc((*n ? *n : 1) * sizeof *ids);
    for (size_t i = 0; i < *n; i++)
        ids[i] = p[i].packet;
    qsort(ids, *n, sizeof *ids, cmp_u64);
    qr_h5_rows_free(p);
    return ids;
}

Test(trace_cli, the_planted_faults_drops_and_only_them)
{
    planted_run();
    /* the trace never reads the planted fault: its silent drops (the port counted none) are,
     * in this run, exactly the fault's */
    cr_assert_eq(qreplay("trace %s/g --match 'drop silent' --limit 0", dir), 0, "%s", err);
    cr_assert(strstr(out, "s8>s16 silent"), "inferred from the trace and the counters: %s", out);
    cr_assert(exists("%s/g/figures/trace_profile.png", dir));
    cr_assert(exists("%s/g/figures/trace_hops.png", dir));
    char p[512], truth[512];
    snprintf(p, sizeof p, "%s/g/trace.h5", dir);
    snprintf(truth, sizeof truth, "%s/g/truth/truth.h5", dir);
    size_t nd, nt, ns, nh, np;
    qr_row_hop_drop *d = rows_of(p, "/drops", &qr_schema_hop_drop, &nd);
    qr_row_drop *t = rows_of(truth, "/drops", &qr_schema_drop, &nt);
    qr_row_hop_summary *s = rows_of(p, "/summary", &qr_schema_hop_summary, &ns);
    qr_row_hop *h = rows_of(p, "/hops", &qr_schema_hop, &nh);
    qr_row_hop_packet *pk = rows_of(p, "/packets", &qr_schema_hop_packet, &np);
    /* exactly truth's fault drops, in time order */
    size_t k = 0;
    for (size_t i = 0; i < nt; i++) {
        if (t[i].reason != QR_DROP_FAULT)
            continue;
        cr_assert_lt(k, nd);
        cr_assert_eq(d[k].packet, t[i].packet);
        cr_assert_eq(d[k].time_ns, t[i].time_ns);
        cr_assert_eq(d[k].sw, t[i].sw);
        cr_assert_eq(d[k].port, t[i].port);
        cr_assert(d[k].silent, "no switch counted a fault's drop in this run");
        k++;
    }
    cr_assert_eq(k, nd, "%zu fault drops in truth, %zu traced", k, nd);
    cr_assert_gt(nd, 10);
    cr_assert_eq(s[0].silent, nd);
    cr_assert_eq(s[0].drops_counted, 0);
    for (size_t i = 0; i < nd; i++)
        cr_assert_eq(d[i].reason, QR_TRACE_SILENT, "the fault is never named");
    cr_assert_eq(s[0].matched, nd);
    cr_assert_eq(s[0].dropped, nd);
    cr_assert_eq(np, nd, "one drop per matched packet");
    for (size_t i = 0; i < nd; i++)
        cr_assert(!strcmp(d[i].link_name, "s8>s16") || !strcmp(d[i].link_name, "s16>s8"), "%s",
                  d[i].link_name);
    /* each packet's hops: 1..n, admitted until its trace stops, silent, at the last */
    size_t at = 0;
    for (size_t i = 0; i < np; i++) {
        cr_assert_eq(pk[i].fate, QR_TRACE_SILENT);
        for (uint32_t j = 1; j <= pk[i].hops; j++, at++) {
            cr_assert_lt(at, nh);
            cr_assert_eq(h[at].packet, pk[i].packet);
            cr_assert_eq(h[at].hop, j);
            cr_assert_eq(h[at].decision, j == pk[i].hops ? QR_TRACE_SILENT : QR_ADMIT);
        }
    }
    cr_assert_eq(at, nh);
    qr_h5_rows_free(d);
    qr_h5_rows_free(t);
    qr_h5_rows_free(s);
    qr_h5_rows_free(h);
    qr_h5_rows_free(pk);
}

/* Switches on a k=4 FatTree path: 1 within a rack, 3 within a pod, 5 across pods. */
static uint32_t switches_between(uint32_t a, uint32_t b)
{
    return a / 2 == b / 2 ? 1 : a / 4 == b / 4 ? 3 : 5;
}

Test(trace_cli, every_packet_is_conserved_against_the_log)
{
    planted_run();
    cr_assert_eq(qreplay("trace %s/g --limit 0 -o %s/all.h5 --no-figures --quiet", dir, dir), 0,
                 "%s", err);
    char p[512], log[512], e[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/all.h5", dir);
    snprintf(log, sizeof log, "%s/g/truth/arrivals.qra", dir);
    size_t ns, nh, np, nf, nd;
    qr_row_hop_summary *s = rows_of(p, "/summary", &qr_schema_hop_summary, &ns);
    qr_row_hop *h = rows_of(p, "/hops", &qr_schema_hop, &nh);
    qr_row_hop_packet *pk = rows_of(p, "/packets", &qr_schema_hop_packet, &np);
    qr_row_hop_profile *f = rows_of(p, "/profile", &qr_schema_hop_profile, &nf);
    qr_row_hop_drop *d = rows_of(p, "/drops", &qr_schema_hop_drop, &nd);
    qr_arrival_reader *r;
    cr_assert_eq(qr_arrival_reader_open(&r, log, e), QR_OK, "%s", e);
    qr_arrival a;
    uint64_t records = 0, admitted = 0, up_admitted[20][4] = {{0}};
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    while (qr_arrival_read(r, &a, e) == QR_OK) {
        records++;
        admitted += a.decision == QR_ADMIT;
        qr_node_kind k;
        uint32_t peer, pp;
        cr_assert_eq(qr_topology_link(t, a.sw, a.port, &k, &peer, &pp), QR_OK);
        if (a.decision == QR_ADMIT && k > qr_topology_switch_kind(t, a.sw))
            up_admitted[a.sw][a.port]++;
    }
    qr_arrival_reader_close(r);
    /* the ECMP profile: every up port's admitted packets, each group's shares summing to one */
    size_t ne;
    qr_row_hop_ecmp *ec = rows_of(p, "/ecmp", &qr_schema_hop_ecmp, &ne);
    cr_assert_eq(ne, 32, "the 2 up ports of each of the 8 edge and 8 aggregation switches: %zu",
                 ne);
    for (size_t i = 0; i < ne; i++) {
        cr_assert_eq(ec[i].packets, up_admitted[ec[i].sw][ec[i].port], "%s", ec[i].link_name);
        cr_assert_leq(ec[i].flows, ec[i].packets);
        double sum = 0;
        for (size_t j = 0; j < ne; j++)
            if (ec[j].sw == ec[i].sw)
                sum += ec[j].share;
        cr_assert_float_eq(sum, 1.0, 1e-9, "s%u", ec[i].sw);
    }
    qr_h5_rows_free(ec);
    qr_topology_destroy(t);
    cr_assert_eq(s[0].arrivals, records);
    cr_assert_eq(s[0].unknown_arrivals, 0);
    cr_assert_eq(nh, records, "every record is one hop of one packet");
    cr_assert_eq(s[0].matched, s[0].packets, "'all' matches every recorded packet");
    cr_assert_eq(s[0].delivered + s[0].dropped + s[0].unseen, s[0].matched);
    cr_assert_eq(np, s[0].matched - s[0].unseen);
    cr_assert_eq(nd, s[0].dropped, "no packet is dropped twice");
    size_t at = 0;
    uint64_t hop_sum = 0;
    for (size_t i = 0; i < np; i++) {
        hop_sum += pk[i].hops;
        if (i)
            cr_assert_geq(pk[i].first_ns, pk[i - 1].first_ns, "by first-hop time");
        if (!pk[i].fate)
            cr_assert_eq(pk[i].hops, switches_between(pk[i].src, pk[i].dst),
                         "packet %" PRIu64 " h%u>h%u", pk[i].packet, pk[i].src, pk[i].dst);
        int64_t q = 0;
        for (uint32_t j = 1; j <= pk[i].hops; j++, at++) {
            cr_assert_eq(h[at].packet, pk[i].packet);
            cr_assert_eq(h[at].hop, j);
            if (j > 1)
                cr_assert_gt(h[at].time_ns, h[at - 1].time_ns);
            /* the queue's bytes at 10 Gbit/s, rounded down */
            cr_assert_eq(h[at].queue_ns, (int64_t)(h[at].queue_bytes * 8 / 10));
            if (h[at].decision == QR_ADMIT)
                q += h[at].queue_ns;
        }
        cr_assert_eq(pk[i].queue_ns, q);
    }
    cr_assert_eq(hop_sum, records);
    uint64_t profiled = 0;
    double share = 0;
    for (size_t i = 0; i < nf; i++) {
        profiled += f[i].packets;
        share += f[i].share;
        cr_assert_leq(f[i].p50_ns, f[i].p99_ns);
        cr_assert_leq(f[i].p99_ns, f[i].max_ns);
    }
    cr_assert_eq(profiled, admitted, "the profile holds every admitted hop");
    cr_assert_float_eq(share, 1.0, 1e-9);
    qr_h5_rows_free(s);
    qr_h5_rows_free(h);
    qr_h5_rows_free(pk);
    qr_h5_rows_free(f);
    qr_h5_rows_free(d);
}

static int cmp_packet(const void *x, const void *y)
{
    uint64_t a = ((const qr_row_hop_packet *)x)->packet, b = ((const qr_row_hop_packet *)y)->packet;
    return a < b ? -1 : a > b;
}

/* The fate of packet id in /packets rows pk sorted by packet (cmp_packet): 0 delivered or in
 * flight, a decision if its trace stopped, -1 if no copy of it came. */
static int fate_of(const qr_row_hop_packet *pk, size_t n, uint64_t id)
{
    qr_row_hop_packet key = {.packet = id};
    const qr_row_hop_packet *r = bsearch(&key, pk, n, sizeof *pk, cmp_packet);
    return r ? r->fate : -1;
}

/* Everflow's analyzer sees what the switches mirror and their sessions do not lose. A session
 * that never fills changes nothing; a busy one loses copies, every copy it kept is one hop of a
 * trace, a trace ends at its last kept copy (so a delivered trace can miss a hop, a packet looks
 * delivered only if it was, and a dropped one still stops somewhere, or no copy of it came);
 * Everflow's rule mirrors exactly the SYN, FIN and RST packets' hops. */
/* Everflow's IP-ID sampling (1 in 8): also the packets whose IP ID ends in three 0 bits, at every
 * switch they crossed (the same ones everywhere: whole traces, no gaps); a the tap's packets. */
static void everflow_sampling(const char *pb, const qr_row_hop_packet *a, size_t na)
{
    size_t ns, nb;
    cr_assert_eq(qreplay("trace %s/g --limit 0 --mirror everflow --mirror-sample 3 -o %s "
                         "--no-figures --quiet",
                         dir, pb),
                 0, "%s", err);
    qr_row_hop_summary *sb = rows_of(pb, "/summary", &qr_schema_hop_summary, &ns);
    qr_row_hop_packet *b = rows_of(pb, "/packets", &qr_schema_hop_packet, &nb);
    uint64_t sampled = 0, want = 0, got = 0;
    for (size_t i = 0; i < na; i++)
        if ((a[i].flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST)) || (a[i].ip_id & 7) == 0) {
            want += a[i].hops;
            sampled += !(a[i].flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST));
        }
    for (size_t i = 0; i < nb; i++) {
        cr_assert((b[i].flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST)) || (b[i].ip_id & 7) == 0);
        got += b[i].hops;
    }
    cr_assert_gt(sampled, na / 16, "about 1 in 8 packets sampled: %" PRIu64 " of %zu", sampled, na);
    cr_assert_lt(sampled, na / 4);
    cr_assert_eq(sb[0].mirror_copies, want);
    cr_assert_eq(got, want);
    cr_assert_eq(sb[0].gaps, 0, "every switch samples the same packets");
    cr_assert_eq(qreplay("trace %s/g --mirror-sample 3 -o %s --no-figures --quiet", dir, pb), 2);
    cr_assert(strstr(err, "--mirror everflow"), "%s", err);
    cr_assert_eq(qreplay("trace %s/g --mirror everflow --mirror-sample 17 -o %s --quiet", dir, pb),
                 2);
    qr_h5_rows_free(sb);
    qr_h5_rows_free(b);
}

Test(trace_cli, a_busy_mirror_loses_copies_and_its_traces_stop_early)
{
    planted_run();
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/a.h5", dir);
    snprintf(pb, sizeof pb, "%s/b.h5", dir);
    cr_assert_eq(qreplay("trace %s/g --limit 0 -o %s --no-figures --quiet", dir, pa), 0, "%s", err);
    size_t ns, na, nb;
    qr_row_hop_summary *sa = rows_of(pa, "/summary", &qr_schema_hop_summary, &ns);
    qr_row_hop_packet *a = rows_of(pa, "/packets", &qr_schema_hop_packet, &na);
    qsort(a, na, sizeof *a, cmp_packet);
    cr_assert_eq(sa[0].mirror_copies, sa[0].arrivals, "a lossless tap mirrors every arrival");
    cr_assert_eq(sa[0].mirror_lost + sa[0].gaps + sa[0].in_flight, 0);

    /* a session far faster than the copies: the same traces */
    cr_assert_eq(
        qreplay("trace %s/g --limit 0 --mirror-rate 100Tbps -o %s --no-figures --quiet", dir, pb),
        0, "%s", err);
    qr_row_hop_summary *sb = rows_of(pb, "/summary", &qr_schema_hop_summary, &ns);
    cr_assert_eq(sb[0].mirror_lost, 0);
    cr_assert_eq(sb[0].delivered, sa[0].delivered);
    cr_assert_eq(sb[0].dropped, sa[0].dropped);
    cr_assert_eq(sb[0].silent, sa[0].silent);
    qr_h5_rows_free(sb);

    /* 1 Gbit/s sessions with a 4 KB FIFO at switches of 10 Gbit/s ports: copies are lost */
    cr_assert_eq(qreplay("trace %s/g --limit 0 --mirror-rate 1Gbps --mirror-buffer 4KB -o %s "
                         "--no-figures",
                         dir, pb),
                 0, "%s", err);
    cr_assert(strstr(out, "copies lost"), "%s", out);
    sb = rows_of(pb, "/summary", &qr_schema_hop_summary, &ns);
    qr_row_hop_packet *b = rows_of(pb, "/packets", &qr_schema_hop_packet, &nb);
    qsort(b, nb, sizeof *b, cmp_packet);
    cr_assert_gt(sb[0].mirror_lost, 0, "busy switches lose copies");
    cr_assert_lt(sb[0].mirror_lost, sb[0].mirror_copies);
    cr_assert_eq(sb[0].mirror_copies, sa[0].arrivals);
    cr_assert_eq(sb[0].delivered + sb[0].dropped + sb[0].in_flight + sb[0].unseen, sb[0].matched);
    uint64_t hops = 0, gaps = 0, gap_copies = 0;
    for (size_t i = 0; i < nb; i++) {
        hops += b[i].hops;
        uint32_t want = switches_between(b[i].src, b[i].dst);
        cr_assert_leq(b[i].hops, want);
        int fa = fate_of(a, na, b[i].packet);
        cr_assert_geq(fa, 0, "a copy of packet %" PRIu64 " came though the tap saw none",
                      b[i].packet);
        if (b[i].in_flight) {
            cr_assert_eq(b[i].fate, 0);
        } else if (!b[i].fate) {
            gaps += b[i].hops < want;
            gap_copies += want - b[i].hops;
            cr_assert_eq(fa, 0, "packet %" PRIu64 " looks delivered but was dropped", b[i].packet);
        }
    }
    cr_assert_eq(hops, sb[0].mirror_copies - sb[0].mirror_lost, "every kept copy is one hop");
    cr_assert_eq(gaps, sb[0].gaps);
    /* the copies inferred lost are the delivered traces' missing hops, and no more than the
     * copies the sessions lost */
    cr_assert_eq(gap_copies, sb[0].gap_copies);
    cr_assert_leq(sb[0].gap_copies, sb[0].mirror_lost);
    cr_assert_gt(sb[0].dropped, sa[0].dropped, "lost copies end delivered packets' traces early");
    /* every packet the tap saw dropped still stops somewhere, or no copy of it came */
    for (size_t i = 0; i < na; i++) {
        const qr_row_hop_packet *x = bsearch(&a[i], b, nb, sizeof *b, cmp_packet);
        if (a[i].fate && x)
            cr_assert(x->fate || x->in_flight, "packet %" PRIu64, a[i].packet);
    }
    qr_h5_rows_free(sb);
    qr_h5_rows_free(b);

    /* Everflow's rule: exactly the SYN, FIN and RST packets' hops */
    cr_assert_eq(
        qreplay("trace %s/g --limit 0 --mirror everflow -o %s --no-figures --quiet", dir, pb), 0,
        "%s", err);
    sb = rows_of(pb, "/summary", &qr_schema_hop_summary, &ns);
    b = rows_of(pb, "/packets", &qr_schema_hop_packet, &nb);
    uint64_t want = 0, got = 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST))
            want += a[i].hops;
    for (size_t i = 0; i < nb; i++) {
        cr_assert(b[i].flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST));
        got += b[i].hops;
    }
    cr_assert_gt(want, 0);
    cr_assert_eq(sb[0].mirror_copies, want);
    cr_assert_eq(got, want);
    qr_h5_rows_free(sb);
    qr_h5_rows_free(b);
    everflow_sampling(pb, a, na);
    qr_h5_rows_free(sa);
    qr_h5_rows_free(a);
}

/* splitmix64: a seeded stream for the random expressions */
typedef struct rng {
    uint64_t x;
} rng;

static void rng_seed(rng *g, uint64_t seed)
{
    g->x = seed;
}

static uint64_t rng_below(rng *g, uint64_t n)
{
    uint64_t z = (g->x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

/* Random expressions over atoms; the expected set is computed from the atoms' own sets. */
static const char *atoms[] = {"syn",       "fin",        "payload",  "retransmit",
                              "detected",  "dropped",    "flow 3-9", "src h1",
                              "dst h6",    "via s12",    "via s8:2", "queued 20us",
                              "after 2ms", "sport 5001", "h6>h1",    "drop threshold"};
#define N_ATOMS (sizeof atoms / sizeof atoms[0])

typedef struct set {
    uint8_t *in; /* per packet of the 'all' list */
} set;

static size_t n_all;
static uint64_t *all_ids;

static set set_of(const char *path)
{
    size_t n;
    uint64_t *ids = ids_of(path, &n);
    set s = {calloc(n_all, 1)};
    for (size_t i = 0; i < n; i++) {
        uint64_t *x = bsearch(&ids[i], all_ids, n_all, sizeof *all_ids, cmp_u64);
        cr_assert_not_null(x);
        s.in[x - all_ids] = 1;
    }
    free(ids);
    return s;
}

static set atom_sets[N_ATOMS];

/* Build a random expression of depth d into buf; its set into res. */
static void gen(rng *g, int d, char *buf, size_t size, uint8_t *res)
{
    uint64_t pick = rng_below(g, d ? 4 : 1);
    if (pick == 0) {
        uint64_t a = rng_below(g, N_ATOMS);
        snprintf(buf, size, "%s", atoms[a]);
        memcpy(res, atom_sets[a].in, n_all);
        return;
    }
    char *x = malloc(4096), *y = malloc(4096);
    uint8_t *rx = malloc(n_all), *ry = malloc(n_all);
    gen(g, d - 1, x, 4096, rx);
    if (pick == 3) {
        snprintf(buf, size, "%s(%s)", rng_below(g, 2) ? "not " : "!", x);
        for (size_t i = 0; i < n_all; i++)
            res[i] = !rx[i];
    } else {
        gen(g, d - 1, y, 4096, ry);
        const char *op =
            pick == 1 ? (rng_below(g, 2) ? "and" : "&&") : (rng_below(g, 2) ? "or" : "||");
        snprintf(buf, size, "(%s) %s (%s)", x, op, y);
        for (size_t i = 0; i < n_all; i++)
            res[i] = pick == 1 ? (rx[i] && ry[i]) : (rx[i] || ry[i]);
    }
    free(x);
    free(y);
    free(rx);
    free(ry);
}

Test(trace_cli, expressions_match_the_set_algebra_of_their_parts)
{
    planted_run();
    char p[512];
    cr_assert_eq(qreplay("trace %s/g --limit 0 -o %s/all.h5 --no-figures --quiet", dir, dir), 0);
    snprintf(p, sizeof p, "%s/all.h5", dir);
    all_ids = ids_of(p, &n_all);
    for (size_t a = 0; a < N_ATOMS; a++) {
        cr_assert_eq(qreplay("trace %s/g --match '%s' --limit 0 -o %s/a.h5 --no-figures --quiet",
                             dir, atoms[a], dir),
                     0, "%s: %s", atoms[a], err);
        snprintf(p, sizeof p, "%s/a.h5", dir);
        atom_sets[a] = set_of(p);
        size_t in = 0;
        for (size_t i = 0; i < n_all; i++)
            in += atom_sets[a].in[i];
        cr_assert_gt(in, 0, "'%s' matches something", atoms[a]);
        if (strcmp(atoms[a], "payload"))
            cr_assert_lt(in, n_all, "'%s' does not match everything", atoms[a]);
    }
    /* precedence without parentheses: and binds tighter than or */
    {
        uint8_t *want = malloc(n_all);
        for (size_t i = 0; i < n_all; i++)
            want[i] = atom_sets[0].in[i] || (atom_sets[5].in[i] && atom_sets[7].in[i]);
        cr_assert_eq(qreplay("trace %s/g --match 'syn or dropped and src h1' --limit 0 -o %s/a.h5 "
                             "--no-figures --quiet",
                             dir, dir),
                     0, "%s", err);
        set got = set_of(p);
        cr_assert_eq(memcmp(got.in, want, n_all), 0);
        free(got.in);
        free(want);
    }
    rng g;
    rng_seed(&g, 20261124);
    uint8_t *want = malloc(n_all);
    char expr[4096];
    for (int trial = 0; trial < 12; trial++) {
        gen(&g, 3, expr, sizeof expr, want);
        cr_assert_eq(qreplay("trace %s/g --match '%s' --limit 0 -o %s/a.h5 --no-figures --quiet",
                             dir, expr, dir),
                     0, "%s: %s", expr, err);
        set got = set_of(p);
        for (size_t i = 0; i < n_all; i++)
            cr_assert_eq(got.in[i], want[i], "%s: packet %" PRIu64, expr, all_ids[i]);
        free(got.in);
    }
    free(want);
    for (size_t a = 0; a < N_ATOMS; a++)
        free(atom_sets[a].in);
    free(all_ids);
}

Test(trace_cli, a_replays_tagged_packets_are_the_detected_losses)
{
    planted_run();
    /* the recording alone (no truth): trace runs an exact tagged replay */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir %s/r && cp -r %s/g/pcap %s/g/recording.h5 %s/r/", dir, dir,
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("trace %s/r --match tagged --limit 0 -o %s/t.h5 --no-figures", dir, dir),
                 0, "%s", err);
    cr_assert(strstr(out, "exact tagged replay"), "%s", out);
    cr_assert_eq(
        qreplay("trace %s/r --match detected --limit 0 -o %s/d.h5 --no-figures --quiet", dir, dir),
        0, "%s", err);
    char p[512];
    size_t nt, nd, ns;
    snprintf(p, sizeof p, "%s/t.h5", dir);
    uint64_t *t = ids_of(p, &nt);
    qr_row_hop_summary *s = rows_of(p, "/summary", &qr_schema_hop_summary, &ns);
    cr_assert_eq(s[0].silent + s[0].drops_counted, 0, "a replay applies no fault");
    cr_assert_eq(s[0].drops_tagged + s[0].drops_threshold + s[0].drops_buffer_full, s[0].dropped);
    snprintf(p, sizeof p, "%s/d.h5", dir);
    uint64_t *d = ids_of(p, &nd);
    cr_assert_gt(nt, 0);
    cr_assert_eq(nt, nd);
    cr_assert_eq(memcmp(t, d, nt * sizeof *t), 0, "tagged packets are the detected ones");
    free(t);
    free(d);
    qr_h5_rows_free(s);
    no_partials(dir);
}

/* Everflow's latency profiler finds a link slowed by a planted delay (50 us on s8-s16, both ways)
 * from the copies' times alone: those two links are slow and no other; no link is faster than its
 * own delay (1 us), and the slow ones not faster than the delay added. */
Test(trace_cli, the_latency_profiler_finds_a_delayed_link)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set faults.gray= --set "
                         "'faults.delay=s8-s16 50us' --set traffic.duration=2ms -o %s/d --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("trace %s/d --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "2 slow"), "%s", out);
    cr_assert(strstr(out, "loop debugger: no matched packet came back"), "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/d/trace.h5", dir);
    size_t nl;
    qr_row_hop_link *l = rows_of(p, "/links", &qr_schema_hop_link, &nl);
    cr_assert_gt(nl, 32, "most of the 64 switch-to-switch links carried a packet");
    for (size_t i = 0; i < nl; i++) {
        int planted = !strcmp(l[i].name, "s8>s16") || !strcmp(l[i].name, "s16>s8");
        cr_assert_eq(l[i].slow, planted, "%s: least %lld ns", l[i].name, (long long)l[i].min_ns);
        cr_assert_geq(l[i].min_ns, planted ? 51000 : 1000, "%s", l[i].name);
        cr_assert(l[i].min_ns <= l[i].p50_ns && l[i].p50_ns <= l[i].p99_ns);
        if (i)
            cr_assert_leq(l[i].min_ns, l[i - 1].min_ns, "slowest first");
    }
    qr_h5_rows_free(l);
    cr_assert_eq(qreplay("trace %s/d --link-ratio 0.5 -o %s/x.h5 --no-figures", dir, dir), 2);
    cr_assert(strstr(err, "--link-ratio"), "%s", err);
}

/* A link slowed to 2 Gbps (its port's rate, [faults] rate, both ways on s8-s16) serves packets that
 * left back to back at that rate, measured at the far switch from the copies' times alone: those
 * two links, and no other, serve at least --link-ratio (2) times below the ports' 10 Gbps; every
 * other link measured serves within 5% of 10 Gbps less its framing, the slowed ones of 2 Gbps. */
Test(trace_cli, the_latency_profiler_finds_a_slowed_link_by_its_rate)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set faults.gray= --set "
                         "'faults.rate=s8-s16 2Gbps' --set traffic.duration=2ms -o %s/r --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("trace %s/r --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "2 links at least 2 x below the ports' 10000.00 Mb/s"), "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/r/trace.h5", dir);
    size_t nl, measured = 0;
    qr_row_hop_link *l = rows_of(p, "/links", &qr_schema_hop_link, &nl);
    for (size_t i = 0; i < nl; i++) {
        int planted = !strcmp(l[i].name, "s8>s16") || !strcmp(l[i].name, "s16>s8");
        cr_assert_eq(l[i].slow_rate, planted, "%s: %.0f bit/s over %llu pairs", l[i].name,
                     l[i].rate_bps, (unsigned long long)l[i].rate_pairs);
        if (l[i].rate_pairs < QR_HOP_RATE_PAIRS)
            continue;
        measured++;
        double want = planted ? 2e9 : 1e10;
        cr_assert(l[i].rate_bps > 0.95 * want && l[i].rate_bps <= want * 1.0001,
                  "%s: %.0f bit/s, the port's %.0f", l[i].name, l[i].rate_bps, want);
    }
    cr_assert_gt(measured, 8, "links with packets back to back");
    qr_h5_rows_free(l);
}

/* Everflow's link round trips in the simulator ([everflow] guided): once the traffic is over,
 * every switch bounces 20 probes off each neighbour (S1 -> S2 -> S1). The cable s8-s16 is 50 us
 * longer each way and s9-s18 drops 5% both ways: the two ports of s8-s16 are slow by exactly the
 * planted delay (their round trip is 100 us above everyone else's), only s9-s18's ports lose
 * probes, every round is back or lost in one place, and the scorer finds every flag right. A
 * star has no switch to bounce off: refused. */
Test(trace_cli, link_round_trips_find_a_delayed_and_a_lossy_cable)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set 'faults.gray=s9-s18 5%%' "
                         "--set 'faults.delay=s8-s16 50us' --set everflow.guided=20 --set "
                         "traffic.duration=2ms --set traffic.stop=2s -o %s/b --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("trace %s/b --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "link round trips (S1 -> S2 -> S1): 1280 probes out of 64 switch ports"),
              "%s", out);
    char p[512];
    snprintf(p, sizeof p, "%s/b/trace.h5", dir);
    size_t nb;
    int64_t base = (int64_t)attr_of(p, "/bounce", "median_rtt_ns");
    qr_row_bounce *b = rows_of(p, "/bounce", &qr_schema_bounce, &nb);
    cr_assert_eq(nb, 64);
    int lossy = 0;
    for (size_t i = 0; i < nb; i++) {
        const char *n = b[i].link_name;
        int delayed = !strcmp(n, "s8>s16") || !strcmp(n, "s16>s8");
        int gray = !strcmp(n, "s9>s18") || !strcmp(n, "s18>s9");
        cr_assert_eq(b[i].sent, 20, "%s", n);
        cr_assert_eq(b[i].sent,
                     b[i].returned + b[i].lost_in + b[i].lost_out + b[i].lost_peer +
                         b[i].lost_back + b[i].unseen,
                     "%s", n);
        cr_assert_eq(b[i].unseen + b[i].lost_in + b[i].lost_peer, 0, "%s: the links lose them", n);
        cr_assert_eq(b[i].slow, delayed, "%s: %lld ns", n, (long long)b[i].rtt_p50_ns);
        cr_assert(!b[i].lossy || gray, "%s lost probes", n);
        lossy += b[i].lossy;
        if (delayed) /* the planted 50 us each way, to within a packet's time */
            cr_assert(b[i].rtt_p50_ns - base > 99900 && b[i].rtt_p50_ns - base < 100100 &&
                          b[i].out_p50_ns > 50000 && b[i].back_p50_ns > 50000,
                      "%s: %lld ns against %lld", n, (long long)b[i].rtt_p50_ns, (long long)base);
        else
            cr_assert_leq(b[i].rtt_max_ns, 2 * base, "%s", n);
    }
    qr_h5_rows_free(b);
    cr_assert_gt(lossy, 0, "5%% each way over 40 crossings per port");
    cr_assert_eq(attr_of(p, "/score", "bounce_right"), attr_of(p, "/score", "bounce_flagged"));
    cr_assert_eq(attr_of(p, "/score", "bounce_faulty_found"), 2 + lossy);
    cr_assert_eq(
        qreplay("runtime scenarios/butterfly.ini --set everflow.guided=5 -o %s/s --quiet", dir), 1);
    cr_assert(strstr(err, "[everflow] guided") && strstr(err, "fat tree"), "%s", err);
}

/* Everflow's debug bit ([everflow] debug_every = 5): the hosts mark the data packets of flows 0,
 * 5, 10, ... with DSCP 16, so `--match debug` selects exactly those directions' packets (the same
 * set as `dscp 16` and as naming the directions), and without the key nothing carries it. The
 * light record regenerates the marked packets exactly (the same rule, from its scenario). */
Test(trace_cli, the_debug_bit_marks_exactly_the_chosen_flows)
{
    cr_assert_eq(qreplay("run scenarios/fattree-k4-websearch.ini --set everflow.debug_every=5 -o "
                         "%s/dbg --no-figures --quiet",
                         dir),
                 0, "%s", err);
    char expr[8192] = "", p[512];
    size_t len = 0;
    for (uint32_t f = 0; f < 119; f += 5)
        len += (size_t)snprintf(expr + len, sizeof expr - len, "%sdir %u", f ? " or " : "", 2 * f);
    const char *m[3] = {"debug", "dscp 16", expr};
    uint64_t *ids[3];
    size_t n[3];
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(qreplay("trace %s/dbg --match '%s' --limit 0 -o %s/m%d.h5 --no-figures", dir,
                             m[i], dir, i),
                     0, "%s", err);
        snprintf(p, sizeof p, "%s/m%d.h5", dir, i);
        ids[i] = ids_of(p, &n[i]);
    }
    cr_assert_gt(n[0], 1000, "the marked flows' packets");
    for (int i = 1; i < 3; i++) {
        cr_assert_eq(n[i], n[0], "%s: %zu packets, debug %zu", m[i], n[i], n[0]);
        cr_assert_eq(memcmp(ids[i], ids[0], n[0] * sizeof *ids[0]), 0, "%s", m[i]);
    }
    for (int i = 0; i < 3; i++)
        free(ids[i]);
    cr_assert_eq(qreplay("light %s/dbg --th 5us", dir), 0, "%s", err);
    cr_assert_eq(qreplay("replay %s/dbg --from light --check --th 5us", dir), 0, "%s", err);
    cr_assert(strstr(out, "every one equal to the recorded one"), "%s", out);
    cr_assert_eq(qreplay("runtime scenarios/fattree-k4-websearch.ini -o %s/plain --quiet", dir), 0,
                 "%s", err);
    cr_assert_eq(
        qreplay("trace %s/plain --match debug --limit 0 -o %s/p.h5 --no-figures", dir, dir), 0,
        "%s", err);
    cr_assert(strstr(out, "matched            0 packets"), "%s", out);
}

/* Everflow's loop debugger: aggregation switch s8 sends the packets to h0 up to core switch s16
 * ([faults] loop), whose one way down into pod 0 is s8 again: they go round until their TTL runs
 * out. From the mirrored copies alone the debugger finds the one cycle, s8>s16>s8; every packet
 * caught in it is one the runtime lost outside its queues (the TTL), and its trace stops there;
 * the scorer marks the cycle planted. Without the rule nothing loops. */
Test(trace_cli, the_loop_debugger_finds_a_planted_routing_loop)
{
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set faults.gray= --set "
                         "'faults.loop=s8>s16 h0' --set traffic.duration=2ms --set "
                         "traffic.stop=10ms -o %s/l --quiet",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("trace %s/l --no-figures", dir), 0, "%s", err);
    cr_assert(strstr(out, "s8>s16>s8") && strstr(out, "PLANTED"), "%s", out);
    char p[512], e[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/l/trace.h5", dir);
    size_t nl, ns, nd;
    qr_row_hop_loop *l = rows_of(p, "/loops", &qr_schema_hop_loop, &nl);
    qr_row_hop_summary *s = rows_of(p, "/summary", &qr_schema_hop_summary, &ns);
    qr_row_hop_drop *d = rows_of(p, "/drops", &qr_schema_hop_drop, &nd);
    cr_assert_eq(nl, 1);
    cr_assert_str_eq(l[0].cycle, "s8>s16>s8");
    cr_assert_eq(l[0].switches, 2);
    cr_assert_eq(l[0].planted, 1);
    cr_assert_gt(l[0].packets, 0);
    cr_assert_eq(s->looping, l[0].packets);
    /* every packet caught was lost outside the queues: the truth's other drops */
    snprintf(p, sizeof p, "%s/l/truth/truth.h5", dir);
    qr_h5_reader *r;
    double other = -1;
    cr_assert_eq(qr_h5_open(&r, p, e), QR_OK, "%s", e);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", "other_drops", &other, e), QR_OK, "%s", e);
    qr_h5_close(r);
    cr_assert_eq((uint64_t)other, l[0].packets, "%.0f packets lost outside the queues", other);
    uint64_t stopped = 0;
    for (size_t i = 0; i < nd; i++)
        stopped += d[i].hop > 5;
    cr_assert_eq(stopped, l[0].packets, "their traces stop in the loop");
    qr_h5_rows_free(l);
    qr_h5_rows_free(s);
    qr_h5_rows_free(d);
    /* a bad rule is an error naming it */
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set 'faults.loop=s8>s0 h99' -o "
                         "%s/bad --quiet",
                         dir),
                 1);
    cr_assert(strstr(err, "[faults] loop: rule 1 ('s8>s0 h99'): no host h99"), "%s", err);
    cr_assert_eq(qreplay("runtime scenarios/faults/gray-k4.ini --set 'faults.loop=s8>s4 h0' -o "
                         "%s/bad --quiet",
                         dir),
                 1);
    cr_assert(strstr(err, "s8 and s4 are not linked"), "%s", err);
}

Test(trace_cli, bad_input_is_a_clear_error)
{
    planted_run();
    const char *bad[][2] = {
        {"flow x", "'x' is not a flow number"},
        {"flow 99999", "the recording has flows 0-"},
        {"flow 9-3", "the range ends before it starts"},
        {"via s99", "no switch s99"},
        {"via s8:9", "no port 9 at s8"},
        {"via h3>s1", "a host's uplink has no switch queue"},
        {"via s0>s1", "not linked"},
        {"drop foo", "'foo' is not a drop reason"},
        {"drop fault", "a planted fault is what a trace cannot see"},
        {"(syn", "expected ')'"},
        {"syn)", "a ')' without its '('"},
        {"syn and", "at the end: expected a test"},
        {"syn ack", "expected 'and' or 'or' before it"},
        {"src h999", "no host h999"},
        {"src 10.9.9.9", "no host of the recording has address 10.9.9.9"},
        {"h1>", "expected the destination of A>B"},
        {"h1:70000>h2", "'70000' is not a port"},
        {"queued soon", "not a time"},
        {"syn & fin", "write '&&' or 'and'"},
        {"", "an empty expression"},
        {"bogus", "'bogus' is not a test"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(qreplay("trace %s/g --match '%s' -o %s/x.h5", dir, bad[i][0], dir), 2, "'%s'",
                     bad[i][0]);
        cr_assert(strstr(err, "qreplay trace: --match:"), "%s", err);
        cr_assert(strstr(err, bad[i][1]), "'%s': %s", bad[i][0], err);
        cr_assert(!exists("%s/x.h5", dir), "nothing written for '%s'", bad[i][0]);
    }
    cr_assert_eq(qreplay("trace %s/g --limit x", dir), 2);
    cr_assert(strstr(err, "--limit"), "%s", err);
    cr_assert_eq(qreplay("trace %s/none", dir), 1);
    cr_assert(strstr(err, "qreplay trace:"), "%s", err);
    cr_assert_eq(qreplay("trace %s/g --replay ../x", dir), 2);
    /* a log cut (inside a record: its trailer is gone), and a file that is no log: named,
     * nothing written */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "head -c 100000 %s/g/truth/arrivals.qra > %s/cut.qra && echo hello > %s/junk.qra", dir,
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("trace %s/g --arrivals %s/cut.qra -o %s/x.h5", dir, dir, dir), 1);
    cr_assert(strstr(err, "cut.qra"), "%s", err);
    cr_assert(strstr(err, "was cut"), "%s", err);
    cr_assert(!exists("%s/x.h5", dir));
    cr_assert_eq(qreplay("trace %s/g --arrivals %s/junk.qra -o %s/x.h5", dir, dir, dir), 1);
    cr_assert(strstr(err, "junk.qra"), "%s", err);
    cr_assert(!exists("%s/x.h5", dir));
    no_partials(dir);
}
