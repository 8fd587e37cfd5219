/* 007's scorer (blame_score.h) on the hand-made run (hand_run.h): its one drop is a congestion
 * drop at switch 0's port to host 1, and no fault was planted. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hand_run.h"
#include "qreplay/blame_score.h"

HAND_RUN_SUITE(blame_score);

static void run_blame(qr_blame *b)
{
    qr_blame_opts o;
    qr_blame_opts_default(&o);
    cr_assert_eq(qr_blame_run(h.rec, &o, b, err), QR_OK, "%s", err);
}

static const char *truth_of(const char *dir)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/truth/truth.h5", dir);
    return path;
}

Test(blame_score, every_drop_is_charged_once_to_its_cable)
{
    qr_blame b;
    run_blame(&b);
    cr_assert_not(b.has_truth);
    cr_assert_eq(qr_blame_score(&b, h.rec, truth_of(h.dir), err), QR_OK, "%s", err);
    cr_assert(b.has_truth);
    cr_assert_str_eq(b.truth, truth_of(h.dir));
    /* the one drop of the truth, a threshold drop at switch 0's port to host 1: congestion on the
     * cable h1-s0, nothing anywhere else, no cable faulty */
    uint64_t fault = 0, congestion = 0;
    for (size_t i = 0; i < b.n_links; i++) {
        const qr_row_blame_link *l = &b.links[i];
        cr_assert_eq(l->faulty, 0, "%s: no fault was planted", l->name);
        fault += l->fault_drops;
        congestion += l->congestion_drops;
        cr_assert_eq(l->congestion_drops, strcmp(l->name, "h1-s0") == 0, "%s", l->name);
    }
    cr_assert_eq(fault, 0);
    cr_assert_eq(congestion, 1, "conservation: the truth's one drop, charged once");
    /* with no faulty link there is nothing to score the flags against */
    cr_assert_geq(b.n_summary, 1);
    cr_assert(isnan(b.summary[0].precision) && isnan(b.summary[0].recall));
    /* the voting connection: its true link and cause, and a verdict that says whether the
     * culprit is that link */
    cr_assert_eq(b.n_conns, 1);
    const qr_row_blame_conn *c = &b.conns[0];
    cr_assert_str_eq(c->true_link, "h1-s0");
    cr_assert_str_eq(c->true_cause, "congestion");
    cr_assert_eq(c->correct, strcmp(c->culprit, c->true_link) == 0, "%s", c->culprit);
    qr_blame_free(&b);
}

Test(blame_score, scoring_twice_gives_the_same_columns)
{
    qr_blame a, b;
    run_blame(&a);
    run_blame(&b);
    cr_assert_eq(qr_blame_score(&a, h.rec, truth_of(h.dir), err), QR_OK, "%s", err);
    cr_assert_eq(qr_blame_score(&b, h.rec, truth_of(h.dir), err), QR_OK, "%s", err);
    cr_assert_eq(qr_blame_score(&b, h.rec, truth_of(h.dir), err), QR_OK, "%s", err);
    cr_assert_eq(a.n_links, b.n_links);
    cr_assert(memcmp(a.links, b.links, a.n_links * sizeof *a.links) == 0,
              "a second scoring replaces the truth columns, never adds to them");
    cr_assert(memcmp(a.conns, b.conns, a.n_conns * sizeof *a.conns) == 0);
    qr_blame_free(&a);
    qr_blame_free(&b);
}

Test(blame_score, a_missing_truth_is_an_error_that_changes_nothing)
{
    qr_blame b;
    run_blame(&b);
    qr_row_blame_link before = b.links[1];
    int rc = qr_blame_score(&b, h.rec, "/nonexistent/truth.h5", err);
    cr_assert_eq(rc, QR_ENOENT, "%d: %s", rc, err);
    cr_assert(strstr(err, "/nonexistent/truth.h5"), "%s", err);
    cr_assert_not(b.has_truth);
    cr_assert(memcmp(&before, &b.links[1], sizeof before) == 0);
    qr_blame_free(&b);
}
