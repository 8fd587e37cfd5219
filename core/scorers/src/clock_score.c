/* The clock estimates graded against the truth (clock_score.h). */
#include <math.h>

#include "internal.h"
#include "qreplay/clock_score.h"
#include "qreplay/h5.h"
#include "qreplay/scenario_h5.h"

void qr_clock_score(const qr_clock_estimate *est, uint32_t n, uint64_t pairs,
                    const int64_t *true_off, qr_row_clock_estimate *rows, qr_clock_summary *s)
{
    *s = (qr_clock_summary){0};
    s->hosts = n;
    s->pairs = pairs;
    s->truth_known = true_off != NULL;
    double sum_abs = 0, sum_sq = 0, sum_res = 0;
    for (uint32_t h = 0; h < n; h++) {
        const qr_clock_estimate *e = &est[h];
        int64_t true_rel = true_off ? true_off[h] - true_off[e->reference] : 0;
        rows[h] = (qr_row_clock_estimate){h,
                                          e->reference,
                                          e->pairs,
                                          e->offset_ns,
                                          e->residual_ns,
                                          true_rel,
                                          true_off && e->pairs ? e->offset_ns - true_rel : 0,
                                          e->path_ns,
                                          e->bound_ns,
                                          qr_clock_correction(e)};
        s->applied += rows[h].correction_ns != 0;
        if (true_off && h != e->reference) {
            /* what a reconciled replay leaves of the offset: the correction's error, or the raw
             * offset where no correction is taken out */
            s->left_sum += fabs((double)rows[h].correction_ns - (double)true_rel);
            s->raw_sum += fabs((double)true_rel);
            s->left_n++;
        }
        s->unreached += e->pairs == 0;
        if (!e->pairs || h == e->reference)
            continue;
        s->estimated++;
        sum_res += (double)e->residual_ns * (double)e->residual_ns;
        double ab = fabs((double)rows[h].error_ns);
        sum_abs += ab;
        sum_sq += ab * ab;
        if (ab > s->max_abs) {
            s->max_abs = ab;
            s->worst = h;
        }
    }
    if (s->estimated) {
        s->mean_abs = sum_abs / s->estimated;
        s->rms = sqrt(sum_sq / s->estimated);
        s->residual_rms = sqrt(sum_res / s->estimated);
    }
}

int qr_clock_score_write(const char *path, const char *rec_dir, const char *recording_id,
                         const qr_row_clock_estimate *rows, size_t n, const qr_clock_summary *s,
                         char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, NULL, "qreplay clocks", recording_id, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "recording", rec_dir, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "truth_known", (uint64_t)s->truth_known, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "hosts", s->hosts, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "estimated", s->estimated, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "pairs", s->pairs, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "error_mean_abs_ns", s->mean_abs, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "error_rms_ns", s->rms, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "error_max_abs_ns", s->max_abs, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "residual_rms_ns", s->residual_rms, errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "corrected", s->applied, errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "raw_mean_abs_ns", s->left_n ? s->raw_sum / s->left_n : 0.0,
                           errbuf));
    QRI_TRY(qr_h5_attr_f64(f, "/", "left_mean_abs_ns", s->left_n ? s->left_sum / s->left_n : 0.0,
                           errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/clocks", &qr_schema_clock_estimate, rows, n, errbuf));
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}
