/* The native replay engine against the ns-3 replay (the reference): on recordings of the k=4
 * default, the single-switch, the butterfly and the static-buffer scenarios, every mode and
 * threshold, the two arrival logs are equal byte for byte (packet, queue, time, decision, queue
 * and switch bytes, threshold, bytes per flow, in the same order), and replay.h5's drops, hosts,
 * end time, lateness, deliveries and other losses are equal; so are they under seeded random
 * what-if settings. Every packet sent is delivered or dropped. */
#include "harness.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"

TestSuite(engine, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 1200);

static void runtime(const char *scenario, const char *sets)
{
    int rc = qreplay("runtime %s -o %s/run/recording %s --quiet", scenario, dir, sets);
    cr_assert_eq(rc, 0, "runtime %s: %s", scenario, err);
}

static double attr(qr_h5_reader *r, const char *name)
{
    double v = -1;
    char e[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", name, &v, e), QR_OK, "%s", e);
    return v;
}

static void same_attr(qr_h5_reader *a, qr_h5_reader *b, const char *name, const char *what)
{
    double x = attr(a, name), y = attr(b, name);
    cr_assert_eq(x, y, "%s: %s is %.0f with ns-3, %.0f native", what, name, x, y);
}

/* splitmix64: the test's own seeded stream */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
    return next_rand(s) % n;
}

static void same_rows(qr_h5_reader *a, qr_h5_reader *b, const char *table, const qr_h5_schema *s,
                      size_t row_size, const char *what, size_t *count)
{
    void *ra, *rb;
    size_t na, nb;
    char e[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_read_rows(a, table, s, &ra, &na, e), QR_OK, "%s", e);
    cr_assert_eq(qr_h5_read_rows(b, table, s, &rb, &nb, e), QR_OK, "%s", e);
    cr_assert_eq(na, nb, "%s: %s has %zu rows with ns-3, %zu native", what, table, na, nb);
    for (size_t i = 0; i < na; i++)
        cr_assert_eq(memcmp((char *)ra + i * row_size, (char *)rb + i * row_size, row_size), 0,
                     "%s: %s row %zu differs", what, table, i);
    qr_h5_rows_free(ra);
    qr_h5_rows_free(rb);
    if (count)
        *count = na;
}

/* Replay the recording in dir/run with both engines (extra: more options) and compare. */
static void compare(const char *mode, const char *th, const char *extra)
{
    char what[256];
    snprintf(what, sizeof what, "%s th %s %s", mode, th, extra);
    int rc = qreplay("replay %s/run --engine ns3 --mode %s --th %s --name ref %s -q", dir, mode, th,
                     extra);
    cr_assert_eq(rc, 0, "%s (ns3): %s", what, err);
    rc = qreplay("replay %s/run --mode %s --th %s --name nat %s -q", dir, mode, th, extra);
    cr_assert_eq(rc, 0, "%s (native): %s", what, err);
    char pa[512], pb[512];
    size_t na, nb;
    snprintf(pa, sizeof pa, "%s/run/replay/ref/arrivals.qra", dir);
    snprintf(pb, sizeof pb, "%s/run/replay/nat/arrivals.qra", dir);
    unsigned char *a = slurp_bin(pa, &na), *b = slurp_bin(pb, &nb);
    cr_assert_gt(na, 8u + 56u * 10, "%s: the ns-3 replay logged almost nothing", what);
    /* byte for byte, but for the trailer's last 32 bytes: the run that wrote each, its
     * replay's own id (which its replay.h5 names) */
    cr_assert_eq(memcmp(a, "QRARRV4\n", 8), 0, "%s: not a log of the fourth format", what);
    size_t diff = 0, body = na > 32 ? na - 32 : 0;
    while (diff < body && diff < nb && a[diff] == b[diff])
        diff++;
    cr_assert(na == nb && diff == body,
              "%s: arrival logs differ at byte %zu (ns-3 %zu bytes, native %zu bytes)", what, diff,
              na, nb);
    cr_assert_neq(memcmp(a + body, b + body, 32), 0, "%s: two replays, one id", what);
    free(a);
    free(b);

    qr_h5_reader *ra, *rb;
    char e[QR_ERRBUF_SIZE];
    snprintf(pa, sizeof pa, "%s/run/replay/ref/replay.h5", dir);
    snprintf(pb, sizeof pb, "%s/run/replay/nat/replay.h5", dir);
    cr_assert_eq(qr_h5_open(&ra, pa, e), QR_OK, "%s", e);
    cr_assert_eq(qr_h5_open(&rb, pb, e), QR_OK, "%s", e);
    size_t drops = 0;
    same_rows(ra, rb, "/drops", &qr_schema_drop, sizeof(qr_row_drop), what, &drops);
    same_rows(ra, rb, "/hosts", &qr_schema_replay_host, sizeof(qr_row_replay_host), what, NULL);
    same_attr(ra, rb, "sim_end_ns", what);
    same_attr(ra, rb, "max_lateness_ns", what);
    same_attr(ra, rb, "delivered", what);
    same_attr(ra, rb, "other_drops", what);
    char *eng = NULL;
    cr_assert_eq(qr_h5_read_attr_str(rb, "/", "engine", &eng, e), QR_OK, "%s", e);
    cr_assert_str_eq(eng, "native");
    free(eng);

    /* conservation: every packet a host sent reached a host or was dropped */
    void *hv;
    size_t nh;
    cr_assert_eq(qr_h5_read_rows(rb, "/hosts", &qr_schema_replay_host, &hv, &nh, e), QR_OK, "%s",
                 e);
    uint64_t sent = 0;
    for (size_t i = 0; i < nh; i++)
        sent += ((qr_row_replay_host *)hv)[i].packets;
    qr_h5_rows_free(hv);
    cr_assert_gt(sent, 0u);
    cr_assert_eq((double)sent, attr(rb, "delivered") + (double)drops + attr(rb, "other_drops"),
                 "%s: %llu sent, %.0f delivered, %zu dropped", what, (unsigned long long)sent,
                 attr(rb, "delivered"), drops);
    qr_h5_close(ra);
    qr_h5_close(rb);
}

/* Under AddressSanitizer (./waf test's second pass) the ns-3 replay runs about 10x slower, and
 * every variant takes the same code paths as plain/0 and tagged/5us: those two check the memory
 * there, and the release pass checks all eight for equality. */
#ifdef __SANITIZE_ADDRESS__
#define QR_SANITIZED 1
#else
#define QR_SANITIZED 0
#endif

static void every_variant(void)
{
    static const char *ths[] = {"0", "2us", "5us", "10us"};
    for (int m = 0; m < 2; m++)
        for (size_t t = 0; t < sizeof ths / sizeof *ths; t++)
            if (!QR_SANITIZED || (m == 0 && t == 0) || (m == 1 && t == 2))
                compare(m ? "tagged" : "plain", ths[t], "");
}

Test(engine, single_switch_every_variant)
{
    runtime("scenarios/single-switch.ini", "");
    every_variant();
}

Test(engine, k4_default_every_variant)
{
    runtime("scenarios/fattree-k4-websearch.ini", "");
    every_variant();
}

Test(engine, butterfly_every_variant)
{
    runtime("scenarios/butterfly.ini", "");
    every_variant();
}

Test(engine, static_buffer_every_variant)
{
    runtime("scenarios/testbed-single-switch.ini", "");
    every_variant();
}

/* Seeded random what-if settings (buffer, alpha, policy, margin, link rate and delay) on a k=4
 * recording: the engines still agree arrival by arrival. */
Test(engine, random_whatif_settings)
{
    runtime("scenarios/fattree-k4-websearch.ini", "--set traffic.duration=2ms");
    uint64_t rng = 20261123;
    for (int i = 0; i < (QR_SANITIZED ? 2 : 6); i++) {
        char extra[512];
        uint64_t size = 20000 + below(&rng, 4000000);
        double alpha = 0.125 * (1 + (double)below(&rng, 32));
        uint64_t margin = below(&rng, 20000);
        uint64_t rate = 1 + below(&rng, 40); /* Gbps */
        uint64_t delay = below(&rng, 5000);  /* ns */
        int stat = below(&rng, 3) == 0;
        snprintf(extra, sizeof extra,
                 "--set buffer.size=%lluB --set buffer.alpha=%g --set replay.margin=%lluB "
                 "--set links.rate=%lluGbps --set links.delay=%lluns%s",
                 (unsigned long long)size, alpha, (unsigned long long)margin,
                 (unsigned long long)rate, (unsigned long long)delay,
                 stat ? " --set buffer.policy=static" : "");
        compare(below(&rng, 2) ? "tagged" : "plain", i % 2 ? "5us" : "0", extra);
    }
}

Test(engine, unknown_engine_is_a_usage_error)
{
    runtime("scenarios/single-switch.ini", "--set traffic.duration=1ms");
    cr_assert_eq(qreplay("replay %s/run --engine fast", dir), 2);
    cr_assert(strstr(err, "--engine: unknown engine 'fast' (native or ns3)"), "%s", err);
    cr_assert(!exists("%s/run/replay", dir), "a refused replay made a folder");
    cr_assert_eq(qreplay("run scenarios/single-switch.ini -o %s/r2 --engine ns-3", dir), 2);
    cr_assert(strstr(err, "unknown engine 'ns-3'"), "%s", err);
    cr_assert(!exists("%s/r2", dir), "a refused run made a folder");
}
