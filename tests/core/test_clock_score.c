/* The clock estimates graded (clock_score.h): by hand on three hosts, and without a truth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "qreplay/clock_score.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"

Test(clock_score, by_hand_against_the_truth_and_without_it)
{
    /* host 0 the reference; host 1 estimated 100 (true 90); host 2 never reached */
    qr_clock_estimate est[3] = {
        {0, 0, 0, 2, 0, 0, 0}, {100, 4, 0, 2, 100, 12, 1}, {0, 0, 2, 0, 0, 0, 0}};
    int64_t truth[3] = {50, 140, 7}; /* relative to host 0: 0, 90, -43 */
    qr_row_clock_estimate rows[3];
    qr_clock_summary s;
    qr_clock_score(est, 3, 1, truth, rows, &s);
    cr_assert(s.truth_known && s.hosts == 3 && s.pairs == 1);
    cr_assert_eq(rows[1].true_ns, 90);
    cr_assert_eq(rows[1].error_ns, 10);
    cr_assert_eq(rows[2].error_ns, 0, "not estimated: no error");
    cr_assert_eq(s.estimated, 1);
    cr_assert_eq(s.unreached, 1);
    cr_assert_float_eq(s.mean_abs, 10.0, 1e-12);
    cr_assert_float_eq(s.rms, 10.0, 1e-12);
    cr_assert_eq(s.worst, 1);
    cr_assert_float_eq(s.residual_rms, 4.0, 1e-12);
    /* host 1's correction (certain) leaves |100 - 90| of its 90 ns offset */
    cr_assert_eq(rows[1].correction_ns, 100);
    cr_assert_eq(s.applied, 1);
    cr_assert(s.left_n == 1 && s.left_sum == 10.0 && s.raw_sum == 90.0);
    /* without the truth the same estimates, nothing graded */
    qr_clock_summary u;
    qr_clock_score(est, 3, 1, NULL, rows, &u);
    cr_assert(!u.truth_known && u.estimated == 1 && u.mean_abs == 0 && u.left_n == 0);
    cr_assert(rows[1].true_ns == 0 && rows[1].error_ns == 0 && rows[1].estimate_ns == 100);
    /* the file */
    char path[64], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "/tmp/qr-clocks-%d.h5", (int)getpid());
    cr_assert_eq(qr_clock_score_write(path, "rec", "", rows, 3, &s, err), QR_OK, "%s", err);
    qr_h5_reader *r;
    double known, rms;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", "truth_known", &known, err), QR_OK);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/", "error_rms_ns", &rms, err), QR_OK);
    qr_h5_close(r);
    cr_assert(known == 1 && rms == 10.0);
    unlink(path);
}
