/* qreplay replay reading the recording as a stream (the native engine's default) against reading
 * it whole: on a k=4 recording, at thresholds 0, 2, 5 and 10 us with the rate method and 5 us with
 * the gap method, in both modes, the arrival logs are equal byte for byte, replay.h5's drops,
 * hosts and sampling counts are equal, and the sampling records are the same set (a stream writes
 * them in the order the samplers emit them). A capture whose times go back across flow directions
 * (every direction's order kept, so a whole read takes it) stops the stream: by default the replay
 * is read whole instead, with a note, and equals --read whole; with --read stream it is an error
 * naming the capture. Options that cannot stream are usage errors. */
#include "harness.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/lossdet.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/schema.h"

TestSuite(stream, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 600);

static int cmp_rec(const void *a, const void *b)
{
    const qr_row_sample_record *x = a, *y = b;
    if (x->dir != y->dir)
        return x->dir < y->dir ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void same_replay(const char *a, const char *b, const char *what)
{
    same_arrival_logs(a, b, what);
    char pa[512], pb[512], e[QR_ERRBUF_SIZE];
    snprintf(pa, sizeof pa, "%s/run/replay/%s/replay.h5", dir, a);
    snprintf(pb, sizeof pb, "%s/run/replay/%s/replay.h5", dir, b);
    qr_h5_reader *ra, *rb;
    cr_assert_eq(qr_h5_open(&ra, pa, e), QR_OK, "%s", e);
    cr_assert_eq(qr_h5_open(&rb, pb, e), QR_OK, "%s", e);
    static const char *attrs[] = {"packets", "records", "max_error_ns"};
    for (int i = 0; i < 3; i++) {
        double x = -1, y = -2;
        cr_assert_eq(qr_h5_read_attr_f64(ra, "/sampling", attrs[i], &x, e), QR_OK, "%s", e);
        cr_assert_eq(qr_h5_read_attr_f64(rb, "/sampling", attrs[i], &y, e), QR_OK, "%s", e);
        cr_assert_eq(x, y, "%s: /sampling %s %.0f and %.0f", what, attrs[i], x, y);
    }
    const struct {
        const char *table;
        const qr_h5_schema *s;
        size_t size;
    } tables[] = {{"/drops", &qr_schema_drop, sizeof(qr_row_drop)},
                  {"/hosts", &qr_schema_replay_host, sizeof(qr_row_replay_host)},
                  {"/sampling/records", &qr_schema_sample_record, sizeof(qr_row_sample_record)}};
    for (int t = 0; t < 3; t++) {
        void *x, *y;
        size_t nx, ny;
        cr_assert_eq(qr_h5_read_rows(ra, tables[t].table, tables[t].s, &x, &nx, e), QR_OK, "%s", e);
        cr_assert_eq(qr_h5_read_rows(rb, tables[t].table, tables[t].s, &y, &ny, e), QR_OK, "%s", e);
        cr_assert_eq(nx, ny, "%s: %s has %zu and %zu rows", what, tables[t].table, nx, ny);
        if (t == 2) { /* the same records, in another order */
            cr_assert_gt(nx, 0u);
            qsort(x, nx, tables[t].size, cmp_rec);
            qsort(y, ny, tables[t].size, cmp_rec);
        }
        cr_assert_eq(memcmp(x, y, nx * tables[t].size), 0, "%s: %s differs", what, tables[t].table);
        qr_h5_rows_free(x);
        qr_h5_rows_free(y);
    }
    qr_h5_close(ra);
    qr_h5_close(rb);
}

static void runtime(void)
{
    int rc = qreplay("runtime scenarios/fattree-k4-websearch.ini --set traffic.duration=2ms -o "
                     "%s/run/recording --quiet",
                     dir);
    cr_assert_eq(rc, 0, "runtime: %s", err);
}

static void both(const char *mode, const char *th, const char *extra, const char *what)
{
    int rc = qreplay("replay %s/run --mode %s --th %s --name s %s -q", dir, mode, th, extra);
    cr_assert_eq(rc, 0, "%s (stream): %s", what, err);
    rc = qreplay("replay %s/run --mode %s --th %s --name w --read whole %s -q", dir, mode, th,
                 extra);
    cr_assert_eq(rc, 0, "%s (whole): %s", what, err);
    same_replay("s", "w", what);
}

Test(stream, equals_a_whole_read_at_every_threshold_and_method)
{
    runtime();
    static const char *ths[] = {"0", "2us", "5us", "10us"};
    char what[128];
    for (int m = 0; m < 2; m++)
        for (size_t t = 0; t < sizeof ths / sizeof *ths; t++) {
            snprintf(what, sizeof what, "%s th %s rate", m ? "tagged" : "plain", ths[t]);
            both(m ? "tagged" : "plain", ths[t], "", what);
        }
    both("tagged", "5us", "--set sampling.method=gap", "tagged th 5us gap");
    both("plain", "2us", "--set sampling.method=gap", "plain th 2us gap");
}

/* Rewrite a pcap (nanosecond, raw IPv4) with its records grouped by flow direction, each
 * direction's records in their order: a capture whose times go back between directions. Returns
 * the number of records that moved. */
static size_t group_by_direction(const char *path)
{
    size_t n;
    unsigned char *b = slurp_bin(path, &n);
    cr_assert_geq(n, 24u);
    size_t cap = 1024, count = 0, *off = malloc(cap * sizeof *off);
    uint64_t *key = malloc(cap * sizeof *key);
    for (size_t at = 24; at + 16 <= n;) {
        uint32_t caplen;
        memcpy(&caplen, b + at + 8, 4);
        cr_assert_leq(at + 16 + caplen, n);
        const unsigned char *ip = b + at + 16;
        size_t ihl = (size_t)(ip[0] & 15) * 4;
        if (count == cap) {
            cap *= 2;
            off = realloc(off, cap * sizeof *off);
            key = realloc(key, cap * sizeof *key);
        }
        /* direction: destination address and both ports; then the record's place */
        uint64_t d = ((uint64_t)ip[19] << 32) | ((uint64_t)ip[ihl] << 24) |
                     ((uint64_t)ip[ihl + 1] << 16) | ((uint64_t)ip[ihl + 2] << 8) | ip[ihl + 3];
        key[count] = d;
        off[count++] = at;
        at += 16 + caplen;
    }
    /* a stable sort of the records by direction (insertion: the captures are small) */
    size_t *order = malloc(count * sizeof *order), moved = 0;
    for (size_t i = 0; i < count; i++) {
        size_t j = i;
        while (j > 0 && key[order[j - 1]] > key[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(b, 1, 24, f);
    for (size_t i = 0; i < count; i++) {
        uint32_t caplen;
        memcpy(&caplen, b + off[order[i]] + 8, 4);
        fwrite(b + off[order[i]], 1, 16 + caplen, f);
        moved += order[i] != i;
    }
    cr_assert_eq(fclose(f), 0);
    free(order);
    free(off);
    free(key);
    free(b);
    return moved;
}

/* recording.h5 written again over the pcaps as they are now (its /pcaps: their sizes and
 * digests), everything else as it was: a recording whose capture goes back in time as written. */
static void rewrite_recording(const char *rec_dir)
{
    char h5[512], err[QR_ERRBUF_SIZE];
    snprintf(h5, sizeof h5, "%s/recording.h5", rec_dir);
    qr_scenario *sc = NULL;
    cr_assert_eq(qr_scenario_from_h5(&sc, h5, NULL, rec_dir, err), QR_OK, "%s", err);
    qr_h5_reader *in;
    cr_assert_eq(qr_h5_open(&in, h5, err), QR_OK, "%s", err);
    void *flows, *hosts, *det, *recv;
    size_t nf, nh, nd, nr;
    cr_assert_eq(qr_h5_read_rows(in, "/flows", &qr_schema_flow, &flows, &nf, err), QR_OK);
    cr_assert_eq(qr_h5_read_rows(in, "/hosts", &qr_schema_host, &hosts, &nh, err), QR_OK);
    cr_assert_eq(qr_h5_read_rows(in, "/drops_detected", &qr_schema_detected, &det, &nd, err),
                 QR_OK);
    cr_assert_eq(qr_h5_read_rows(in, "/received", &qr_schema_received, &recv, &nr, err), QR_OK);
    char *id = NULL, *name = NULL;
    double end = 0;
    cr_assert_eq(qr_h5_read_attr_str(in, "/", "recording_id", &id, err), QR_OK);
    cr_assert_eq(qr_h5_read_attr_str(in, "/", "scenario_name", &name, err), QR_OK);
    cr_assert_eq(qr_h5_read_attr_f64(in, "/", "sim_end_ns", &end, err), QR_OK);
    qr_h5_close(in);
    qr_recording_info info = {
        id, name, QR_END_COMPLETED, (int64_t)end, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0};
    cr_assert_eq(qr_recording_write(h5, sc, &info, flows, nf, hosts, nh, det, nd, recv, nr, err),
                 QR_OK, "%s", err);
    qr_h5_str_free(id);
    qr_h5_str_free(name);
    qr_h5_rows_free(flows);
    qr_h5_rows_free(hosts);
    qr_h5_rows_free(det);
    qr_h5_rows_free(recv);
    qr_scenario_destroy(sc);
}

Test(stream, a_capture_going_back_in_time_is_read_whole)
{
    runtime();
    /* the busiest host's capture: the most bytes */
    char path[512], best[512] = "";
    long most = -1;
    for (int h = 0; h < 16; h++) {
        snprintf(path, sizeof path, "%s/run/recording/pcap/h%04d.pcap", dir, h);
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > most) {
            most = st.st_size;
            snprintf(best, sizeof best, "%s", path);
        }
    }
    cr_assert_gt(group_by_direction(best), 10u, "the busiest host sends one direction only");
    /* a pcap changed under its recording is another run's, refused */
    int rc = qreplay("replay %s/run --th 5us --name s", dir);
    cr_assert_eq(rc, 1);
    cr_assert(strstr(err, best) && strstr(err, "SHA-256 differs"), "%s", err);
    char rec[512];
    snprintf(rec, sizeof rec, "%s/run/recording", dir);
    rewrite_recording(rec);
    rc = qreplay("replay %s/run --th 5us --name s", dir);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "go back across flow directions") && strstr(err, "reading the "
                                                                           "recording whole"),
              "no note on stderr: %s", err);
    cr_assert(strstr(err, best), "the note does not name %s: %s", best, err);
    rc = qreplay("replay %s/run --th 5us --name w --read whole -q", dir);
    cr_assert_eq(rc, 0, "%s", err);
    same_replay("s", "w", "a capture out of time order");
    rc = qreplay("replay %s/run --th 5us --name x --read stream -q", dir);
    cr_assert_eq(rc, 1, "an explicit stream of a capture out of order: %d", rc);
    cr_assert(strstr(err, ".pcap") && strstr(err, "read it whole"), "%s", err);
    cr_assert(!exists("%s/run/replay/x/replay.h5", dir), "a failed replay left replay.h5");
    cr_assert(!exists("%s/run/replay/x/arrivals.qra", dir), "a failed replay left its log");
}

Test(stream, options_that_cannot_stream_are_usage_errors)
{
    cr_assert_eq(qreplay("replay %s/run --read sideways", dir), 2);
    cr_assert(strstr(err, "--read: 'sideways' is neither stream nor whole"), "%s", err);
    cr_assert_eq(qreplay("replay %s/run --read stream --engine ns3", dir), 2);
    cr_assert(strstr(err, "only the native engine with recorded clocks streams"), "%s", err);
    cr_assert_eq(qreplay("replay %s/run --read stream --clock reconcile", dir), 2);
    cr_assert(strstr(err, "only the native engine with recorded clocks streams"), "%s", err);
}
