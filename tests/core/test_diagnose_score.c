/* The diagnosis's scorer (diagnose_score.h) on the hand-made run (hand_run.h): one exchange of
 * three data packets, the second dropped at the switch's queue. The switch's log is rewritten to
 * say something else, and the verdict must follow it. */
#include <criterion/criterion.h>
#include <string.h>

#include "hand_run.h"
#include "qreplay/diagnose_score.h"
#include "qreplay/queuelog.h"

HAND_RUN_SUITE(diagnose_score);

static const char *log_of(const char *name)
{
    static char path[160];
    snprintf(path, sizeof path, "%s/%s", h.dir, name);
    return path;
}

/* The truth's arrival log rewritten to `name`: each arrival through edit (which may change it),
 * then `extra` more, if any. */
static void rewrite(const char *name, void (*edit)(qr_arrival *), const qr_arrival *extra)
{
    char out[160];
    snprintf(out, sizeof out, "%s", log_of(name));
    qr_arrival_reader *r;
    qr_arrival_writer *w;
    cr_assert_eq(qr_arrival_reader_open(&r, log_of("truth/arrivals.qra"), err), QR_OK, "%s", err);
    cr_assert_eq(qr_arrival_writer_open(&w, out, err), QR_OK, "%s", err);
    cr_assert_eq(qr_arrival_writer_set_recording(w, qr_recording_id(h.rec)), QR_OK);
    qr_arrival a;
    int rc;
    while ((rc = qr_arrival_read(r, &a, err)) == QR_OK) {
        if (edit)
            edit(&a);
        cr_assert_eq(qr_arrival_write(w, &a, err), QR_OK, "%s", err);
    }
    cr_assert_eq(rc, QR_END, "%s", err);
    if (extra)
        cr_assert_eq(qr_arrival_write(w, extra, err), QR_OK, "%s", err);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK, "%s", err);
    qr_arrival_reader_close(r);
}

static void score(const char *log, qr_diagnosis *d, qr_diag_score *s, int expect)
{
    cr_assert_eq(qr_diagnose(h.rec, NULL, d, err), QR_OK, "%s", err);
    int rc = qr_diagnose_score(d, h.rec, log, NULL, s, err);
    cr_assert_eq(rc, expect, "%d: %s", rc, err);
}

static void totals_add_up(const qr_diag_score *s)
{
    cr_assert_eq(s->right + s->wrong + s->unknown, s->n_rows);
    uint64_t dropped = 0, lost = 0;
    for (size_t i = 0; i < s->n_rows; i++) {
        dropped += s->rows[i].dropped;
        lost += s->rows[i].lost;
    }
    cr_assert_eq(dropped, s->dropped);
    cr_assert_eq(lost, s->lost);
}

Test(diagnose_score, the_switch_drop_meets_the_diagnosed_loss)
{
    qr_diagnosis d;
    qr_diag_score s;
    score(log_of("truth/arrivals.qra"), &d, &s, QR_OK);
    cr_assert_eq(s.arrivals, 3, "every arrival of the log read");
    cr_assert_eq(s.n_rows, 1);
    const qr_diag_score_row *r = &s.rows[0];
    cr_assert_eq(r->dropped, 1, "the threshold drop of packet 1");
    cr_assert_eq(r->dropped_control + r->dropped_acks, 0);
    cr_assert_eq(r->max_queue_bytes, 6000, "the most its data packets found queued");
    cr_assert_eq(r->lost, 1);
    cr_assert_eq(r->verdict, QR_VERDICT_RIGHT, "%s", r->why);
    cr_assert_eq(s.connections, 1);
    cr_assert_eq(s.connections_right, 1);
    totals_add_up(&s);
    qr_diag_score_free(&s);
    qr_diagnosis_free(&d);
}

static void admit_all(qr_arrival *a)
{
    a->decision = QR_ADMIT;
}

Test(diagnose_score, a_loss_the_switch_did_not_drop_is_wrong)
{
    rewrite("admitted.qra", admit_all, NULL);
    qr_diagnosis d;
    qr_diag_score s;
    score(log_of("admitted.qra"), &d, &s, QR_OK);
    cr_assert_eq(s.n_rows, 1);
    cr_assert_eq(s.rows[0].dropped, 0);
    cr_assert_eq(s.rows[0].lost, 1, "the diagnosis reads the hosts only: unchanged");
    cr_assert_eq(s.rows[0].verdict, QR_VERDICT_WRONG);
    cr_assert_neq(s.rows[0].why[0], 0, "a wrong verdict says what disagrees");
    cr_assert_eq(s.connections_right, 0);
    totals_add_up(&s);
    qr_diag_score_free(&s);
    qr_diagnosis_free(&d);
}

Test(diagnose_score, an_arrival_of_no_recorded_packet_is_refused)
{
    qr_arrival ghost = {.packet = qr_packet_id(0, 99), .time_ns = 9000, .port = 0, .bytes = 1500};
    ghost.port = h.port_to_h1;
    rewrite("ghost.qra", NULL, &ghost);
    qr_diagnosis d;
    qr_diag_score s;
    score(log_of("ghost.qra"), &d, &s, QR_EFORMAT);
    cr_assert(strstr(err, "ghost.qra"), "%s", err);
    qr_diag_score_free(&s);
    qr_diagnosis_free(&d);
}

Test(diagnose_score, a_missing_log_is_an_error)
{
    qr_diagnosis d;
    qr_diag_score s;
    score(log_of("none.qra"), &d, &s, QR_ENOENT);
    cr_assert(strstr(err, "none.qra"), "%s", err);
    qr_diag_score_free(&s);
    qr_diagnosis_free(&d);
}
