/* The study's main job end to end (qreplay run, replay, metrics, and the figures): the exactness
 * oracle, tagged replays never dropping untagged packets, summaries that agree with the per-arrival
 * rows, replays that emit exactly the recorded packets, determinism, and bad inputs. */
#include <math.h>

#include "harness.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/metrics.h"
#include "qreplay/queuelog.h"
#include "qreplay/schema.h"

TestSuite(pipeline, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 900);

static double num(qr_h5_reader *r, const char *obj, const char *name)
{
    double v = NAN;
    char e[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_h5_read_attr_f64(r, obj, name, &v, e), QR_OK, "%s", e);
    return v;
}

static qr_h5_reader *open_h5(const char *fmt, const char *sub)
{
    char p[512], e[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, fmt, dir, sub);
    qr_h5_reader *r;
    cr_assert_eq(qr_h5_open(&r, p, e), QR_OK, "%s", e);
    return r;
}

/* One arrival reduced to its identity and a hash of everything it recorded. */
struct akey {
    int64_t time_ns;
    uint32_t sw, port;
    uint64_t packet, hash;
};

static int cmp_akey(const void *a, const void *b)
{
    const struct akey *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->sw != y->sw)
        return x->sw < y->sw ? -1 : 1;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    return x->packet < y->packet ? -1 : x->packet > y->packet;
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ULL;
    return h;
}

/* Every arrival of a log, sorted by (time, switch, port, packet): two logs with the same arrivals
 * give the same array, whatever order switches were visited in within a nanosecond. */
static struct akey *arrivals(const char *path, size_t *n)
{
    qr_arrival_reader *r;
    char e[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_arrival_reader_open(&r, path, e), QR_OK, "%s", e);
    size_t cap = 1 << 16;
    struct akey *v = malloc(cap * sizeof *v);
    qr_arrival a;
    *n = 0;
    int rc;
    while ((rc = qr_arrival_read(r, &a, e)) == QR_OK) {
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        uint64_t h = 14695981039346656037ULL;
        h = fnv(h, a.bytes);
        h = fnv(h, a.decision);
        h = fnv(h, a.tagged);
        h = fnv(h, a.queue_bytes);
        h = fnv(h, a.total_bytes);
        h = fnv(h, (uint64_t)a.threshold);
        for (uint16_t i = 0; i < a.n_flows; i++)
            h = fnv(fnv(h, a.flows[i].flow), a.flows[i].bytes);
        v[(*n)++] = (struct akey){a.time_ns, a.sw, a.port, a.packet, h};
    }
    cr_assert_eq(rc, QR_END, "%s", e);
    qr_arrival_reader_close(r);
    qsort(v, *n, sizeof *v, cmp_akey);
    return v;
}

Test(pipeline, exactness_oracle_on_k4)
{
    /* exact send times, no clock offset, the runtime's own admission rule: the replay must be the
     * runtime, arrival for arrival */
    cr_assert_eq(
        qreplay(
            "run scenarios/fattree-k4-websearch.ini --set sampling.th=0 --set clock.max_offset=0 "
            "--set replay.modes=plain --no-figures -o %s/o",
            dir),
        0, "%s", err);
    qr_h5_reader *r = open_h5("%s/o/%s", "results.h5");
    const char *g = "/replay/plain_th_0";
    double drops = num(r, g, "runtime_drops");
    cr_assert_gt(drops, 0, "the scenario must drop packets for the oracle to mean anything");
    cr_assert_eq(num(r, g, "replay_drops"), drops);
    cr_assert_eq(
        num(r, g, "false_accepts") + num(r, g, "false_drops") + num(r, g, "wrong_locations"), 0);
    cr_assert_eq(num(r, g, "qdiff_max_mtu"), 0);
    cr_assert_eq(num(r, g, "qdiff_sym_max_mtu"), 0);
    cr_assert_eq(num(r, g, "qdiff_zero_fraction"), 1);
    cr_assert_eq(num(r, g, "runtime_only_arrivals") + num(r, g, "replay_only_arrivals"), 0);
    cr_assert_gt(num(r, g, "matched_arrivals"), 100000);
    cr_assert_eq(num(r, g, "max_lateness_ns"), 0,
                 "every packet left its host at its recorded time");
    qr_h5_close(r);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/o/recording/truth/arrivals.qra", dir);
    snprintf(b, sizeof b, "%s/o/replay/plain_th_0/arrivals.qra", dir);
    size_t na, nb;
    struct akey *x = arrivals(a, &na), *y = arrivals(b, &nb);
    cr_assert_eq(na, nb);
    /* the compact log: at most 16 bytes per arrival on a real run (about 10 here) */
    struct stat st;
    cr_assert_eq(stat(a, &st), 0);
    cr_assert_leq((double)st.st_size / (double)na, 16.0, "%s: %.2f bytes per arrival", a,
                  (double)st.st_size / (double)na);
    for (size_t i = 0; i < na; i++)
        cr_assert(memcmp(&x[i], &y[i], sizeof x[i]) == 0,
                  "arrival %zu differs: packet %lu at switch %u port %u, %ld ns", i,
                  (unsigned long)x[i].packet, x[i].sw, x[i].port, (long)x[i].time_ns);
    free(x);
    free(y);
}

struct qrow {
    uint64_t qdiff_bytes, qdiff_sym_bytes;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The summary attributes of a variant agree with a recomputation from its rows: count, mean, max
 * and zeros exactly; p99 within the streaming histogram's documented bound. */
static void check_summary(qr_h5_reader *r, const char *v)
{
    char g[128], t[160], e[QR_ERRBUF_SIZE];
    snprintf(g, sizeof g, "/replay/%s", v);
    snprintf(t, sizeof t, "%s/qdiff", g);
    static const qr_h5_field f[] = {
        {"qdiff_bytes", QR_H5_U64, offsetof(struct qrow, qdiff_bytes), 0, NULL},
        {"qdiff_sym_bytes", QR_H5_U64, offsetof(struct qrow, qdiff_sym_bytes), 0, NULL}};
    struct qrow *rows;
    size_t n;
    cr_assert_eq(qr_h5_read_table(r, t, f, 2, sizeof *rows, (void **)&rows, &n, e), QR_OK, "%s", e);
    cr_assert_eq((double)n, num(r, g, "matched_arrivals"));
    for (int sym = 0; sym < 2; sym++) {
        uint64_t *x = malloc(n * sizeof *x), zeros = 0;
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            x[i] = sym ? rows[i].qdiff_sym_bytes : rows[i].qdiff_bytes;
            sum += (double)x[i];
            zeros += x[i] == 0;
            if (!sym)
                cr_assert_leq(rows[i].qdiff_bytes, rows[i].qdiff_sym_bytes,
                              "qdiff <= symmetric qdiff");
        }
        qsort(x, n, sizeof *x, cmp_u64);
        double mean = sum / (double)n / 1500.0, max = (double)x[n - 1] / 1500.0;
        size_t rank = (size_t)ceil(0.99 * (double)n);
        double p99 = (double)x[rank - 1] / 1500.0;
        const char *pre = sym ? "qdiff_sym_" : "qdiff_";
        char name[64];
        snprintf(name, sizeof name, "%smean_mtu", pre);
        cr_assert_float_eq(num(r, g, name), mean, 1e-9 * (1 + mean), "%s %s", v, name);
        snprintf(name, sizeof name, "%smax_mtu", pre);
        cr_assert_float_eq(num(r, g, name), max, 1e-9, "%s %s", v, name);
        snprintf(name, sizeof name, "%sp99_mtu", pre);
        double bound = x[rank - 1] < 256 ? 1e-9 : p99 * QR_HIST_REL_ERROR + 1e-9;
        cr_assert(fabs(num(r, g, name) - p99) <= bound, "%s %s: %g written, %g recomputed", v, name,
                  num(r, g, name), p99);
        if (!sym)
            cr_assert_float_eq(num(r, g, "qdiff_zero_fraction"), (double)zeros / (double)n, 1e-12);
        free(x);
    }
    qr_h5_rows_free(rows);
}

struct hrow {
    uint64_t packets, bytes;
};

struct drow {
    uint8_t tagged, reason;
};

Test(pipeline, tagged_summaries_and_replayed_packets)
{
    cr_assert_eq(
        qreplay("run scenarios/fattree-k4-websearch.ini --set sampling.th=5us --no-figures -o %s/o",
                dir),
        0, "%s", err);
    cr_assert(strstr(out, "tagged_th_5") && strstr(out, "plain_th_5"), "%s", out);
    qr_h5_reader *r = open_h5("%s/o/%s", "results.h5");
    char e[QR_ERRBUF_SIZE];
    /* tagged mode never drops an untagged packet */
    cr_assert_eq(num(r, "/replay/tagged_th_5", "false_drops"), 0);
    static const qr_h5_field df[] = {{"tagged", QR_H5_U8, offsetof(struct drow, tagged), 0, NULL},
                                     {"reason", QR_H5_U8, offsetof(struct drow, reason), 0, NULL}};
    struct drow *d;
    size_t nd;
    cr_assert_eq(
        qr_h5_read_table(r, "/replay/tagged_th_5/drops", df, 2, sizeof *d, (void **)&d, &nd, e),
        QR_OK, "%s", e);
    cr_assert_gt(nd, 0);
    for (size_t i = 0; i < nd; i++)
        cr_assert(d[i].tagged == 1 && d[i].reason == 3, "drop %zu: tagged %u reason %u", i,
                  d[i].tagged, d[i].reason);
    qr_h5_rows_free(d);
    /* plain replays drop by the runtime's rule, never by tag */
    cr_assert_eq(
        qr_h5_read_table(r, "/replay/plain_th_5/drops", df, 2, sizeof *d, (void **)&d, &nd, e),
        QR_OK, "%s", e);
    for (size_t i = 0; i < nd; i++)
        cr_assert(d[i].tagged == 0 && (d[i].reason == 1 || d[i].reason == 2));
    qr_h5_rows_free(d);
    check_summary(r, "tagged_th_5");
    check_summary(r, "plain_th_5");
    cr_assert_gt(num(r, "/sampling/th_5", "compression_ratio"), 1);
    cr_assert_leq(num(r, "/sampling/th_5", "max_error_ns"), 5000);
    qr_h5_close(r);
    /* the recording is a k=4 FatTree: replaying it on k=8 is refused */
    cr_assert_eq(qreplay("replay %s/o --set topology.k=8", dir), 1);
    cr_assert(strstr(err, "does not match") && strstr(err, "[topology] k = 8, recorded 4"), "%s",
              err);
    /* every replay put exactly the recorded packets on the wires: per host, count and bytes */
    static const qr_h5_field hf[] = {
        {"packets", QR_H5_U64, offsetof(struct hrow, packets), 0, NULL},
        {"bytes", QR_H5_U64, offsetof(struct hrow, bytes), 0, NULL}};
    qr_h5_reader *rec = open_h5("%s/o/%s", "recording/recording.h5");
    struct hrow *want, *got;
    size_t nw, ng;
    cr_assert_eq(qr_h5_read_table(rec, "/hosts", hf, 2, sizeof *want, (void **)&want, &nw, e),
                 QR_OK, "%s", e);
    qr_h5_close(rec);
    for (int m = 0; m < 2; m++) {
        qr_h5_reader *rp = open_h5("%s/o/replay/%s/replay.h5", m ? "tagged_th_5" : "plain_th_5");
        cr_assert_eq(qr_h5_read_table(rp, "/hosts", hf, 2, sizeof *got, (void **)&got, &ng, e),
                     QR_OK, "%s", e);
        cr_assert_eq(ng, nw);
        for (size_t h = 0; h < nw; h++)
            cr_assert(got[h].packets == want[h].packets && got[h].bytes == want[h].bytes,
                      "host %zu: replay sent %lu packets / %lu B, recorded %lu / %lu", h,
                      (unsigned long)got[h].packets, (unsigned long)got[h].bytes,
                      (unsigned long)want[h].packets, (unsigned long)want[h].bytes);
        qr_h5_rows_free(got);
        qr_h5_close(rp);
    }
    qr_h5_rows_free(want);
}

Test(pipeline, same_seed_same_numbers_and_figures)
{
    cr_assert_eq(qreplay("run scenarios/single-switch.ini --set sampling.th=2us,5us -o %s/a", dir),
                 0, "%s", err);
    char first[sizeof out];
    memcpy(first, out, sizeof out);
    char *t1 = strstr(first, "variant");
    cr_assert(t1, "%s", first);
    cr_assert_eq(qreplay("run --quiet scenarios/single-switch.ini --set sampling.th=2us,5us "
                         "--no-figures -o %s/b",
                         dir),
                 0, "%s", err);
    cr_assert_str_eq(out, "");
    cr_assert_eq(qreplay("metrics %s/b --no-figures", dir), 0, "%s", err);
    char *t2 = strstr(out, "variant");
    cr_assert(t2, "%s", out);
    /* the summary tables agree to the last digit (up to the lines that follow them) */
    char *end1 = strstr(t1, "figure"), *end2 = strstr(t2, "output");
    cr_assert(end1 && end2);
    cr_assert_eq(end1 - t1, end2 - t2);
    cr_assert(strncmp(t1, t2, (size_t)(end1 - t1)) == 0, "tables differ:\n%s\n%s", t1, t2);
    /* figures: PNG and PDF, valid headers */
    const char *names[] = {"qdiff_cdf", "drop_error", "busiest_queue", "runtime_vs_replay"};
    for (int i = 0; i < 4; i++) {
        char p[512], head[8] = {0};
        snprintf(p, sizeof p, "%s/a/figures/%s.png", dir, names[i]);
        FILE *f = fopen(p, "rb");
        cr_assert(f, "%s missing", p);
        cr_assert_eq(fread(head, 1, 8, f), 8);
        fclose(f);
        cr_assert(memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", p);
        snprintf(p, sizeof p, "%s/a/figures/%s.pdf", dir, names[i]);
        f = fopen(p, "rb");
        cr_assert(f, "%s missing", p);
        cr_assert_eq(fread(head, 1, 5, f), 5);
        fclose(f);
        cr_assert(memcmp(head, "%PDF-", 5) == 0, "%s is not a PDF", p);
    }
    /* the analysis script on a file that is not a result */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/analysis/plot_results.py %s/a/recording/recording.h5 -o %s/x "
             ">/dev/null 2>%s/x.err",
             QR_SOURCE_DIR, dir, dir, dir);
    cr_assert_neq(system(cmd), 0);
}

Test(pipeline, bad_inputs_are_clear_errors_that_leave_no_results)
{
    cr_assert_eq(qreplay("runtime --quiet scenarios/single-switch.ini -o %s/r/recording", dir), 0,
                 "%s", err);
    /* no replay yet */
    cr_assert_eq(qreplay("metrics %s/r", dir), 1);
    cr_assert(strstr(err, "no complete replay"), "%s", err);
    /* each command accepts only its own options */
    cr_assert_eq(qreplay("metrics %s/r --th 5us", dir), 2);
    cr_assert(strstr(err, "unknown option '--th'") && strstr(err, "qreplay metrics --help"), "%s",
              err);
    cr_assert_eq(qreplay("metrics %s/r --set buffer.size=1MB", dir), 2);
    cr_assert_eq(qreplay("replay %s/r --no-figures", dir), 2);
    cr_assert_eq(qreplay("run scenarios/single-switch.ini --mode plain -o %s/z", dir), 2);
    cr_assert_eq(qreplay("replay %s/r --th", dir), 2);
    cr_assert(strstr(err, "--th needs a value"), "%s", err);
    cr_assert_eq(qreplay("metrics %s/r --quiet=yes", dir), 2);
    cr_assert(strstr(err, "takes no value"), "%s", err);
    cr_assert_eq(qreplay("replay %s/r --mode=fancy", dir), 2, "--opt=value is --opt value");
    cr_assert(strstr(err, "fancy"), "%s", err);
    cr_assert_not(exists("%s/z", dir), "a usage error writes nothing");
    /* unknown mode, bad threshold */
    cr_assert_eq(qreplay("replay %s/r --mode fancy", dir), 2);
    cr_assert(strstr(err, "fancy") && strstr(err, "plain or tagged"), "%s", err);
    cr_assert_eq(qreplay("replay %s/r --th 5", dir), 1);
    cr_assert(strstr(err, "--th"), "%s", err);
    cr_assert_eq(qreplay("run scenarios/single-switch.ini --set replay.modes=fancy -o %s/z", dir),
                 1);
    cr_assert(strstr(err, "modes") && strstr(err, "fancy"), "%s", err);
    /* a scenario of another network */
    cr_assert_eq(qreplay("replay %s/r --scenario scenarios/fattree-k4-websearch.ini", dir), 1);
    cr_assert(strstr(err, "does not match") && strstr(err, "kind"), "%s", err);
    cr_assert_eq(qreplay("replay %s/r --set topology.hosts=4", dir), 1);
    cr_assert(strstr(err, "does not match") && strstr(err, "hosts"), "%s", err);
    /* a truncated pcap, then a missing one */
    char p[512];
    snprintf(p, sizeof p, "%s/r/recording/pcap/h0001.pcap", dir);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(truncate(p, st.st_size / 2 + 3), 0);
    cr_assert_eq(qreplay("replay %s/r --mode tagged", dir), 1);
    cr_assert(strstr(err, "h0001.pcap") && (strstr(err, "truncated") || strstr(err, "cut")), "%s",
              err);
    cr_assert_eq(unlink(p), 0);
    cr_assert_eq(qreplay("replay %s/r --mode tagged", dir), 1);
    cr_assert(strstr(err, "h0001.pcap"), "%s", err);
    cr_assert_eq(qreplay("metrics %s/r", dir), 1);
    cr_assert_not(exists("%s/r/results.h5", dir));
    cr_assert_not(exists("%s/r/replay/tagged_th_2/replay.h5", dir),
                  "a failed replay leaves no result");
    /* what-if replays of a recorded runtime: a smaller buffer, and the default variant */
    cr_assert_eq(qreplay("runtime --quiet scenarios/single-switch.ini -o %s/w/recording", dir), 0,
                 "%s", err);
    cr_assert_eq(
        qreplay("replay %s/w --set buffer.size=200KB --mode plain --th 0 --name small_buffer", dir),
        0, "%s", err);
    cr_assert(strstr(out, "small_buffer"), "%s", out);
    cr_assert_eq(qreplay("replay --quiet %s/w", dir), 0, "%s", err);
    cr_assert_eq(qreplay("metrics --no-figures %s/w", dir), 0, "%s", err);
    cr_assert(strstr(out, "small_buffer") && strstr(out, "tagged_th_2"), "%s", out);
    cr_assert(exists("%s/w/results.h5", dir));
    /* a folder that is no recording */
    cr_assert_eq(qreplay("replay %s/nothing", dir), 1);
    cr_assert(strstr(err, "no recording"), "%s", err);
    no_partials(dir);
}

/* Send SIGNAL to the command started in the background as soon as a file matching PATTERN exists
 * (it is then writing its output), and return its exit status. */
static int interrupt_when(const char *cmd_fmt, const char *pattern, const char *signal_name)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && %s %s >/dev/null 2>%s/int.err & pid=$!; "
             "for i in $(seq 6000); do ls %s >/dev/null 2>&1 && break; sleep 0.01; done; "
             "kill -%s $pid; wait $pid",
             QR_SOURCE_DIR, QR_PROGRAM, cmd_fmt, dir, pattern, signal_name);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* No command writes over its inputs; an interrupted command exits
 * 130 (SIGINT) or 143 (SIGTERM), leaves nothing partial and keeps what was complete. */
Test(pipeline, interrupts_and_inputs_are_respected)
{
    char args[1024], pat[512], p[512];
    cr_assert_eq(
        qreplay("runtime --quiet scenarios/fattree-k4-websearch.ini -o %s/r/recording", dir), 0,
        "%s", err);
    cr_assert_eq(qreplay("replay --quiet %s/r --th 5us --name done", dir), 0, "%s", err);
    /* a replay interrupted: no folder, no files; what was complete is kept */
    snprintf(args, sizeof args, "replay %s/r --th 0 --name cut", dir);
    snprintf(pat, sizeof pat, "%s/r.partial-*/replay/cut/arrivals.qra.partial-*", dir);
    cr_assert_eq(interrupt_when(args, pat, "TERM"), 143);
    cr_assert_not(exists("%s/r/replay/cut", dir), "an interrupted replay leaves no folder");
    no_partials(dir);
    cr_assert(exists("%s/r/replay/done/replay.h5", dir), "complete replays are kept");
    /* A corrupt or missing arrival log is a clear error (and leaks nothing:
     * the ASan pass runs this) */
    snprintf(p, sizeof p, "%s/r/replay/done/arrivals.qra", dir);
    cr_assert_eq(truncate(p, 100), 0);
    cr_assert_eq(qreplay("metrics --no-figures %s/r", dir), 1);
    cr_assert(strstr(err, "done/arrivals.qra"), "%s", err);
    cr_assert_eq(unlink(p), 0);
    cr_assert_eq(qreplay("metrics --no-figures %s/r", dir), 1);
    cr_assert(strstr(err, "done/arrivals.qra"), "%s", err);
    cr_assert_not(exists("%s/r/results.h5", dir));
    no_partials(dir);
    /* sample interrupted while writing */
    cr_assert_eq(qreplay("synth --quiet --packets 2000000 --flows 50 %s/big.pcap", dir), 0);
    snprintf(args, sizeof args, "sample --quiet %s/big.pcap %s/s.h5", dir, dir);
    snprintf(pat, sizeof pat, "%s/s.h5.partial-*", dir);
    cr_assert_eq(interrupt_when(args, pat, "INT"), 130);
    cr_assert_not(exists("%s/s.h5", dir));
    no_partials(dir);
    /* inputs are never written over: the same path, a symbolic link, a hard link */
    struct stat before, after;
    snprintf(p, sizeof p, "%s/r/recording/pcap/h0001.pcap", dir);
    cr_assert_eq(stat(p, &before), 0);
    cr_assert_eq(qreplay("sample %s %s", p, p), 1);
    cr_assert(strstr(err, "refusing to write over an input"), "%s", err);
    char ln[512];
    snprintf(ln, sizeof ln, "%s/sym.h5", dir);
    cr_assert_eq(symlink(p, ln), 0);
    cr_assert_eq(qreplay("sample %s %s", p, ln), 1);
    snprintf(ln, sizeof ln, "%s/hard.h5", dir);
    cr_assert_eq(link(p, ln), 0);
    cr_assert_eq(qreplay("sample %s %s", p, ln), 1);
    cr_assert_eq(qreplay("isolate %s/r -o %s/r/recording/recording.h5", dir, dir), 1);
    cr_assert(strstr(err, "refusing to write over an input"), "%s", err);
    cr_assert_eq(stat(p, &after), 0);
    cr_assert(before.st_size == after.st_size && before.st_mtime == after.st_mtime,
              "the capture was not touched");
    /* an output folder whose recording.h5 is the scenario file itself */
    snprintf(p, sizeof p, "%s/s2", dir);
    cr_assert_eq(mkdir(p, 0777), 0);
    snprintf(ln, sizeof ln, "%s/s2/recording.h5", dir);
    snprintf(p, sizeof p, "%s/scenarios/single-switch.ini", QR_SOURCE_DIR);
    cr_assert_eq(symlink(p, ln), 0);
    cr_assert_eq(qreplay("runtime scenarios/single-switch.ini -o %s/s2", dir), 1);
    cr_assert(strstr(err, "s2/recording.h5 is a symbolic link"),
              "an output is never written "
              "through a link: %s",
              err);
    cr_assert_eq(qreplay("scenario scenarios/single-switch.ini --get topology.kind"), 0,
                 "the scenario file is intact");
    /* a replay's name cannot leave DIR/replay */
    cr_assert_eq(qreplay("replay %s/r --name ../recording", dir), 2);
    cr_assert(strstr(err, "--name"), "%s", err);
}

/* A run folder is a transaction. The hostile cases, each checked for what it must not
 * do to what was there: runtime -o a run folder, an output that is a device or a FIFO, a lock
 * file that is a link, two writers into one folder, a replay of keys it cannot apply. */
Test(pipeline, a_run_folder_is_a_transaction)
{
    const char *tiny = "scenarios/single-switch.ini --set traffic.duration=2ms";
    cr_assert_eq(qreplay("run %s --no-figures -o %s/r --quiet", tiny, dir), 0, "%s", err);
    char cmd[1024], before[600], after[600], p0[600];
    snprintf(before, sizeof before, "%s/before", dir);
    snprintf(after, sizeof after, "%s/after", dir);
    snprintf(cmd, sizeof cmd,
             "cd %s/r && find . -type f ! -name .qreplay-lock | sort | xargs sha256sum > %s", dir,
             before);
    cr_assert_eq(system(cmd), 0);
    /* runtime -o RUNFOLDER (forgetting /recording): refused, the run's replays kept */
    cr_assert_eq(qreplay("runtime %s --set run.seed=9 -o %s/r", tiny, dir), 1);
    cr_assert(strstr(err, "is a run folder") && strstr(err, "/r/recording"), "%s", err);
    cr_assert_eq(qreplay("pingmesh %s --set run.seed=9 -o %s/r --no-figures", tiny, dir), 1);
    cr_assert(strstr(err, "is a run folder"), "%s", err);
    /* a replay of keys it cannot apply: refused, nothing recorded */
    cr_assert_eq(qreplay("replay %s/r --set traffic.load=90%% --name load", dir), 1);
    cr_assert(strstr(err, "traffic.load") && strstr(err, "cannot apply"), "%s", err);
    cr_assert_eq(qreplay("replay %s/r --set tcp.min_rto=1ms --name rto", dir), 1);
    cr_assert_not(exists("%s/r/replay/load", dir));
    /* outputs that are devices or FIFOs: refused, the device untouched */
    struct stat st;
    cr_assert_eq(qreplay("sample %s/r/recording/pcap/h0000.pcap /dev/null", dir), 1);
    cr_assert(strstr(err, "/dev/null is a character device"), "%s", err);
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/null is no longer a device");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo.h5", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(qreplay("diagnose %s/r -o %s --no-figures", dir, fifo), 1);
    cr_assert(strstr(err, "a FIFO"), "%s", err);
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode));
    /* the lock file as a link to a victim: refused, the victim untouched */
    char victim[600], lock[600];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    fputs("precious\n", f);
    fclose(f);
    snprintf(lock, sizeof lock, "%s/r/.qreplay-lock", dir);
    cr_assert_eq(unlink(lock), 0);
    cr_assert_eq(symlink(victim, lock), 0);
    cr_assert_eq(qreplay("metrics %s/r --no-figures", dir), 1);
    cr_assert(strstr(err, "symbolic link") && strstr(err, "lock"), "%s", err);
    char text[64] = "";
    f = fopen(victim, "r");
    cr_assert_not_null(fgets(text, sizeof text, f));
    fclose(f);
    cr_assert_str_eq(text, "precious\n", "the lock wrote through the link");
    cr_assert_eq(unlink(lock), 0);
    /* nothing above changed the run folder */
    snprintf(cmd, sizeof cmd,
             "cd %s/r && find . -type f ! -name .qreplay-lock | sort | xargs sha256sum > %s && cmp "
             "-s %s %s",
             dir, after, before, after);
    cr_assert_eq(system(cmd), 0, "a refused command changed the run folder");
    /* the recorded run's log put in a replay's folder, one replay's log in another's, another
     * recording's light record: each refused by its readers, naming it */
    cr_assert_eq(qreplay("light %s/r --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("run %s --set run.seed=5 --no-figures -o %s/other --quiet", tiny, dir), 0,
                 "%s", err);
    cr_assert_eq(qreplay("light %s/other --quiet", dir), 0, "%s", err);
    static const struct {
        const char *from, *to, *command, *options, *says;
    } mixes[] = {
        {"r/recording/truth/arrivals.qra", "replay/tagged_th_5/arrivals.qra", "metrics", "",
         "recorded run's arrivals"},
        {"r/replay/plain_th_5/arrivals.qra", "replay/tagged_th_5/arrivals.qra", "diagnose",
         "--replay tagged_th_5 --no-figures", "another replay"},
        {"other/recording/light.qrl", "recording/light.qrl", "replay", "--from light",
         "another recording"},
        {"other/recording/pcap/h0001.pcap", "recording/pcap/h0001.pcap", "replay", "--th 0",
         "h0001.pcap"},
        {"other/recording/truth/truth.h5", "recording/truth/truth.h5", "metrics", "",
         "another recording"},
    };
    for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++) {
        snprintf(cmd, sizeof cmd, "cp -a %s/r %s/mix && cp %s/%s %s/mix/%s", dir, dir, dir,
                 mixes[i].from, dir, mixes[i].to);
        cr_assert_eq(system(cmd), 0);
        cr_assert_eq(qreplay("%s %s/mix %s --quiet", mixes[i].command, dir, mixes[i].options), 1,
                     "%s: the mix was read", mixes[i].from);
        cr_assert(strstr(err, mixes[i].says), "%s: %s", mixes[i].from, err);
        snprintf(cmd, sizeof cmd, "rm -rf %s/mix", dir);
        cr_assert_eq(system(cmd), 0);
    }
    /* two runtimes into one folder: the second is refused while the first holds it */
    snprintf(p0, sizeof p0, "%s/two", dir);
    cr_assert_eq(mkdir(p0, 0777), 0);
    snprintf(cmd, sizeof cmd,
             "cd %s && (%s runtime scenarios/fattree-k4-websearch.ini -o %s/two/recording "
             "--quiet & a=$!; for i in $(seq 500); do ls -d %s/two.partial-* >/dev/null 2>&1 "
             "&& break; sleep 0.01; done; %s runtime %s -o %s/two/recording --quiet 2>%s/two.err; "
             "echo $? > %s/two.rc; wait $a)",
             QR_SOURCE_DIR, QR_PROGRAM, dir, dir, QR_PROGRAM, tiny, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "the first runtime failed");
    char p[600], rc2[16] = "", e2[2048] = "";
    snprintf(p, sizeof p, "%s/two.rc", dir);
    f = fopen(p, "r");
    cr_assert_not_null(fgets(rc2, sizeof rc2, f));
    fclose(f);
    snprintf(p, sizeof p, "%s/two.err", dir);
    f = fopen(p, "r");
    size_t n = fread(e2, 1, sizeof e2 - 1, f);
    e2[n] = '\0';
    fclose(f);
    cr_assert_eq(atoi(rc2), 1, "two runtimes into one folder both ran: %s", e2);
    cr_assert(strstr(e2, "in use by another qreplay command"), "%s", e2);
    cr_assert(exists("%s/two/recording/recording.h5", dir), "the first runtime's output is lost");
}
