/* qreplay butterfly end to end: replays at sigma = 0 reproduce the runtime exactly, every one; a
 * small sweep writes its table, HDF5 and figures; bad sigma lists and replay counts are usage
 * errors; isolated per-connection replays reproduce every connection. The reference sweep (100
 * replays per sigma) is a documented command, not a test. */
#include "harness.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/schema.h"

TestSuite(butterfly, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 900);

struct rrow {
    int64_t sigma_ns;
    uint8_t short_reproduced, run_reproduced;
    int64_t first_divergence_ns;
    uint64_t max_diff_bytes, matched;
};

Test(butterfly, sigma_zero_reproduces_every_time)
{
    cr_assert_eq(
        qreplay("butterfly scenarios/butterfly.ini --sigma 0,1us --replays 2 -o %s/b", dir), 0,
        "%s", err);
    cr_assert(strstr(out, "short flow"), "%s", out);
    qr_h5_reader *r;
    char e[QR_ERRBUF_SIZE], p[256];
    snprintf(p, sizeof p, "%s/b/butterfly.h5", dir);
    cr_assert_eq(qr_h5_open(&r, p, e), QR_OK, "%s", e);
    static const qr_h5_field f[] = {
        {"sigma_ns", QR_H5_I64, offsetof(struct rrow, sigma_ns), 0, NULL},
        {"short_reproduced", QR_H5_U8, offsetof(struct rrow, short_reproduced), 0, NULL},
        {"run_reproduced", QR_H5_U8, offsetof(struct rrow, run_reproduced), 0, NULL},
        {"first_divergence_ns", QR_H5_I64, offsetof(struct rrow, first_divergence_ns), 0, NULL},
        {"max_diff_bytes", QR_H5_U64, offsetof(struct rrow, max_diff_bytes), 0, NULL},
        {"matched", QR_H5_U64, offsetof(struct rrow, matched), 0, NULL}};
    struct rrow *rows;
    size_t n;
    cr_assert_eq(qr_h5_read_table(r, "/replays", f, 6, sizeof *rows, (void **)&rows, &n, e), QR_OK,
                 "%s", e);
    cr_assert_eq(n, 4);
    for (size_t i = 0; i < n; i++) {
        cr_assert_gt(rows[i].matched, 10000, "replay %zu matched few arrivals", i);
        if (rows[i].sigma_ns == 0)
            cr_assert(rows[i].short_reproduced && rows[i].run_reproduced &&
                          rows[i].first_divergence_ns == -1 && rows[i].max_diff_bytes == 0,
                      "a sigma = 0 replay differs from the runtime");
    }
    qr_h5_rows_free(rows);
    double fct;
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", "runtime_short_fct_ns", &fct, e), QR_OK, "%s", e);
    cr_assert_gt(fct, 0);
    qr_h5_close(r);
    cr_assert(exists("%s/b/figures/reproduction.png", dir) &&
              exists("%s/b/figures/queue_difference.pdf", dir));
    cr_assert(exists("%s/b/runtime/recording.h5", dir));
}

Test(butterfly, bad_sigma_lists_and_replay_counts)
{
    const char *bad_sigma[] = {
        "\"\"",     "5",
        "-1ns",     "1ns,1ns",
        "1ns,,2ns", "0,1ns,2ns,3ns,4ns,5ns,6ns,7ns,8ns,9ns,10ns,11ns,12ns,13ns,14ns,15ns,16ns"};
    const char *why[] = {"empty", "no unit", "negative", "twice", "empty item", "at most 16"};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(qreplay("butterfly scenarios/butterfly.ini --sigma %s --replays 2 -o %s/x",
                             bad_sigma[i], dir),
                     2, "--sigma %s", bad_sigma[i]);
        cr_assert(strstr(err, "--sigma") && strstr(err, why[i]), "--sigma %s: %s", bad_sigma[i],
                  err);
    }
    const char *bad_n[] = {"0", "abc", "1.5", "-3", "100001"};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(qreplay("butterfly scenarios/butterfly.ini --sigma 0 --replays %s -o %s/x",
                             bad_n[i], dir),
                     2);
        cr_assert(strstr(err, "--replays") && strstr(err, bad_n[i]), "%s", err);
    }
    cr_assert_eq(qreplay("butterfly scenarios/butterfly.ini --replays 2 -o %s/x", dir), 2);
    cr_assert(strstr(err, "--sigma is required"), "%s", err);
    cr_assert_eq(qreplay("butterfly scenarios/butterfly.ini --sigma 0 -o %s/x", dir), 2);
    cr_assert(strstr(err, "--replays is required"), "%s", err);
    cr_assert_not(exists("%s/x", dir), "a usage error writes nothing");
}

struct irow {
    uint8_t identical;
    uint64_t recorded, replayed;
};

Test(butterfly, isolated_replay_reproduces_every_connection)
{
    /* every connection of the butterfly case, alone behind the packet corrector, sends exactly
     * the runtime's packet sequence, without jitter and with 1 us of it */
    cr_assert_eq(qreplay("runtime --quiet scenarios/butterfly.ini -o %s/r/recording", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("isolate %s/r --sigma 0,1us", dir), 0, "%s", err);
    cr_assert(strstr(out, "identical"), "%s", out);
    qr_h5_reader *r;
    char e[QR_ERRBUF_SIZE], p[256];
    snprintf(p, sizeof p, "%s/r/isolated.h5", dir);
    cr_assert_eq(qr_h5_open(&r, p, e), QR_OK, "%s", e);
    static const qr_h5_field f[] = {
        {"identical", QR_H5_U8, offsetof(struct irow, identical), 0, NULL},
        {"recorded", QR_H5_U64, offsetof(struct irow, recorded), 0, NULL},
        {"replayed", QR_H5_U64, offsetof(struct irow, replayed), 0, NULL}};
    struct irow *rows;
    size_t n;
    cr_assert_eq(qr_h5_read_table(r, "/connections", f, 3, sizeof *rows, (void **)&rows, &n, e),
                 QR_OK, "%s", e);
    cr_assert_eq(n, 10, "5 connections x 2 sigmas");
    for (size_t i = 0; i < n; i++) {
        cr_assert(rows[i].identical, "connection row %zu differs from the runtime", i);
        cr_assert_eq(rows[i].recorded, rows[i].replayed);
        cr_assert_gt(rows[i].recorded, 10);
    }
    qr_h5_rows_free(rows);
    qr_h5_close(r);
    cr_assert_eq(qreplay("isolate %s/r --flows 7", dir), 2);
    cr_assert(strstr(err, "--flows") && strstr(err, "'7'"), "%s", err);
    cr_assert_eq(qreplay("isolate %s/r --sigma 1", dir), 2);
    cr_assert_eq(qreplay("isolate %s/nothing", dir), 1);
    cr_assert(strstr(err, "recording.h5"), "%s", err);
}
