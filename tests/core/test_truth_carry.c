/* A runtime's ground truth carried over to an import of its own exported captures
 * (qr_truth_carry), on the hand-made run (hand_run.h): the run is exported as the hosts' captures
 * and imported back (import.h), then its truth is carried onto the import. Checked: every arrival
 * and drop is carried (none left over, as every direction has its imported connection), each the
 * same packet (its direction renamed to the import's, its number kept), the same queue, decision
 * and bytes, at its true time moved by one shift, which is the import's reference host's true
 * clock offset less the import's time base; carrying twice gives the same bytes; and the errors:
 * a run without truth, a target that is no import, each leaving the import's truth as it was. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hand_run.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/pcap_file.h"
#include "qreplay/queuelog.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"

HAND_RUN_SUITE(truth_carry);

/* The hand run exported to DIR/caps and imported back into DIR/back. */
static void export_and_import(char *back, size_t size)
{
    char caps[128], map_path[160], c0[160], c1[160];
    snprintf(caps, sizeof caps, "%s/caps", h.dir);
    cr_assert_eq(mkdir(caps, 0755), 0);
    qr_pcap_format fmt = {QR_PCAP_LINK_ETHERNET, 0};
    qr_export_stats st;
    cr_assert_eq(qr_recording_export(h.rec, caps, &fmt, &st, err), QR_OK, "%s", err);
    snprintf(map_path, sizeof map_path, "%s/hosts.csv", caps);
    qr_host_map_entry *map = NULL;
    size_t n_map = 0;
    cr_assert_eq(qr_host_map_read(map_path, 3, &map, &n_map, err), QR_OK, "%s", err);
    snprintf(c0, sizeof c0, "%s/h0000.pcap", caps);
    snprintf(c1, sizeof c1, "%s/h0001.pcap", caps);
    const char *captures[] = {c0, c1};
    qr_import_cfg cfg = {.captures = captures,
                         .n_captures = 2,
                         .map = map,
                         .n_map = n_map,
                         .clock = QR_IMPORT_CLOCK_NONE,
                         .network_known = 1};
    snprintf(back, size, "%s/back", h.dir);
    cr_assert_eq(qr_import_run(&cfg, h.scen, back, NULL, err), QR_OK, "%s", err);
    free(map);
}

/* Every record of an arrival log, at most max. */
static size_t read_log(const char *path, qr_arrival *a, size_t max)
{
    qr_arrival_reader *r;
    cr_assert_eq(qr_arrival_reader_open(&r, path, err), QR_OK, "%s", err);
    size_t n = 0;
    int rc;
    qr_arrival x;
    while ((rc = qr_arrival_read(r, &x, err)) == QR_OK) {
        cr_assert_lt(n, max);
        x.flows = NULL; /* the reader's own, gone with it */
        a[n++] = x;
    }
    cr_assert_eq(rc, QR_END, "%s", err);
    qr_arrival_reader_close(r);
    return n;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*n + 1);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

Test(truth_carry, every_arrival_and_drop_is_carried_renamed_and_moved_by_one_shift)
{
    char back[128], run_log[128], log[160], path[160];
    export_and_import(back, sizeof back);
    qr_truth_carry_stats st;
    cr_assert_eq(qr_truth_carry(h.dir, back, &st, err), QR_OK, "%s", err);
    cr_assert_eq(st.dirs_mapped, 2, "the flow's data and ACK directions");
    cr_assert_eq(st.arrivals, 3);
    cr_assert_eq(st.drops, 1);
    cr_assert_eq(st.arrivals_left + st.drops_left, 0);

    /* the shift: the reference host's true offset less the import's time base */
    snprintf(path, sizeof path, "%s/recording.h5", back);
    qr_h5_reader *in;
    cr_assert_eq(qr_h5_open(&in, path, err), QR_OK, "%s", err);
    double base;
    cr_assert_eq(qr_h5_read_attr_f64(in, "/import", "time_base_ns", &base, err), QR_OK, "%s", err);
    qr_row_import_host *ih;
    size_t n_ih;
    cr_assert_eq(
        qr_h5_read_rows(in, "/import/hosts", &qr_schema_import_host, (void **)&ih, &n_ih, err),
        QR_OK, "%s", err);
    cr_assert_gt(n_ih, 0);
    cr_assert_eq(st.shift_ns, hand_offsets[ih[0].clock_reference] - (int64_t)base);
    qr_h5_rows_free(ih);
    qr_h5_close(in);

    /* each arrival: the same packet in the import's numbering, queue, decision and size */
    qr_recording *im;
    cr_assert_eq(qr_recording_open(&im, back, NULL, err), QR_OK, "%s", err);
    const qr_flow_table *fi = qr_recording_flows(im);
    cr_assert_eq(qr_flow_table_flows(fi), 1);
    snprintf(run_log, sizeof run_log, "%s/truth/arrivals.qra", h.dir);
    snprintf(log, sizeof log, "%s/truth/arrivals.qra", back);
    qr_arrival a[8], b[8];
    cr_assert_eq(read_log(run_log, a, 8), 3);
    cr_assert_eq(read_log(log, b, 8), 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(qr_packet_id_dir(b[i].packet), qr_dir_data(0), "record %zu", i);
        cr_assert_eq(qr_packet_id_seq(b[i].packet), qr_packet_id_seq(a[i].packet));
        cr_assert_eq(b[i].time_ns, a[i].time_ns + st.shift_ns, "record %zu", i);
        cr_assert(b[i].sw == a[i].sw && b[i].port == a[i].port && b[i].bytes == a[i].bytes &&
                      b[i].decision == a[i].decision && b[i].queue_bytes == a[i].queue_bytes,
                  "record %zu", i);
    }
    /* the drop's packet is one the import's receiver saw lost */
    cr_assert_eq(b[1].decision, QR_DROP_THRESHOLD);
    qr_recording_close(im);

    /* carried again: the same bytes, in place of the first */
    size_t n1, n2;
    unsigned char *first = slurp(log, &n1);
    cr_assert_eq(qr_truth_carry(h.dir, back, &st, err), QR_OK, "%s", err);
    unsigned char *second = slurp(log, &n2);
    cr_assert(n1 == n2 && !memcmp(first, second, n1), "a second carry writes the same log");
    free(first);
    free(second);
}

Test(truth_carry, errors_leave_the_imports_truth_as_it_was)
{
    char back[128], log[160], cmd[400];
    export_and_import(back, sizeof back);
    cr_assert_eq(qr_truth_carry(h.dir, back, NULL, err), QR_OK, "%s", err);
    snprintf(log, sizeof log, "%s/truth/arrivals.qra", back);
    size_t n0, n;
    unsigned char *before = slurp(log, &n0);

    /* a run whose truth has no arrival log */
    snprintf(cmd, sizeof cmd, "mv %s/truth/arrivals.qra %s/kept.qra", h.dir, h.dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qr_truth_carry(h.dir, back, NULL, err), QR_ENOENT);
    cr_assert(strstr(err, "arrivals.qra") && strstr(err, "no ground truth"), "%s", err);
    snprintf(cmd, sizeof cmd, "mv %s/kept.qra %s/truth/arrivals.qra", h.dir, h.dir);
    cr_assert_eq(system(cmd), 0);

    /* a target that is no import: the run's own recording */
    cr_assert_eq(qr_truth_carry(back, h.dir, NULL, err), QR_EFORMAT);
    cr_assert(strstr(err, "not an imported recording"), "%s", err);

    unsigned char *after = slurp(log, &n);
    cr_assert(n == n0 && !memcmp(before, after, n), "the import's truth is untouched");
    free(before);
    free(after);
}
