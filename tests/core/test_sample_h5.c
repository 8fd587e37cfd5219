/* The file of qreplay sample (sample_h5.h): every packet's inferred time within th of its own,
 * the counts adding up, and a flow going back in time refused with its name. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/sample_h5.h"
#include "qreplay/schema.h"

Test(sample_h5, flows_sampled_inferred_and_counted)
{
    char path[64], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "/tmp/qr-sample-%d.h5", (int)getpid());
    qr_sampler_cfg cfg = {QR_SAMPLING_RATE, 5000};
    qr_sample_file *f;
    cr_assert_eq(qr_sample_file_create(&f, path, "made", &cfg, err), QR_OK, "%s", err);
    int64_t a[500], b[3] = {0, 10, 5};
    for (int i = 0; i < 500; i++)
        a[i] = 1000 * i + (i % 7) * 100; /* rising, unevenly */
    int64_t worst;
    cr_assert_eq(qr_sample_file_flow(f, "a", a, 500, &worst, err), QR_OK, "%s", err);
    cr_assert_leq(worst, 5000);
    cr_assert_eq(qr_sample_file_flow(f, "b", b, 3, NULL, err), QR_EORDER);
    cr_assert(strstr(err, "flow b"), "%s", err);
    qr_sample_file_stats st;
    cr_assert_eq(qr_sample_file_commit(f, &st, err), QR_OK, "%s", err);
    cr_assert(st.flows == 1 && st.packets == 500 && st.records > 0 && st.records < 500);
    qr_h5_reader *r;
    qr_row_named_inferred *inf;
    size_t n;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_eq(
        qr_h5_read_rows(r, "/sampling/inferred", &qr_schema_named_inferred, (void **)&inf, &n, err),
        QR_OK, "%s", err);
    qr_h5_close(r);
    cr_assert_eq(n, 500);
    for (size_t i = 0; i < n; i++)
        cr_assert(inf[i].true_ns == a[i] && llabs(inf[i].inferred_ns - a[i]) <= 5000, "%zu", i);
    qr_h5_rows_free(inf);
    unlink(path);
}
