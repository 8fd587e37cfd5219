/* What-if analysis (whatif.h): the grid (--vary parsing against a recording's scenario: the cross
 * product, the baseline, clear errors), the measurement of an arrival log (a hand example on a
 * star, and properties on seeded random streams built by an independent FIFO simulation: the
 * model's queue lengths equal the logged ones, delays equal the simulation's, counts add up),
 * Kendall's tau and the prediction errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/replay.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/whatif.h"
#include "qreplay/whatif_score.h"

static char tmp[64];

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/qr-whatif-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(whatif, .init = setup, .fini = teardown);

/* A recording.h5 holding only a scenario (what the grid reads), from INI text. */
static void scenario_h5(const char *path, const char *ini)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s, ini, "test.ini", tmp, err), QR_OK, "%s", err);
    qr_h5 *f;
    cr_assert_eq(qr_h5_create(&f, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_write_h5(s, f, "/", err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK, "%s", err);
    qr_scenario_destroy(s);
}

#define STAR(hosts) "[topology]\nkind = star\nhosts = " #hosts "\n[buffer]\nsize = 2MB\nalpha = 1\n"
static const char *kStar = STAR(3);

static int parse(qr_whatif_grid **g, const char *const *vary, size_t n, char *err)
{
    char path[128];
    snprintf(path, sizeof path, "%s/recording.h5", tmp);
    if (access(path, F_OK))
        scenario_h5(path, kStar);
    return qr_whatif_grid_parse(g, vary, n, path, tmp, err);
}

Test(whatif, grid_is_the_cross_product_with_the_baseline)
{
    char err[QR_ERRBUF_SIZE];
    qr_whatif_grid *g;
    const char *v1[] = {"buffer.size=1MB,4MB", "buffer.alpha=0.5,1,2"};
    cr_assert_eq(parse(&g, v1, 2, err), QR_OK, "%s", err);
    /* 2 x 3 points, the baseline (2MB, 1) not among them: added in front */
    cr_assert_eq(qr_whatif_grid_points(g), 7);
    cr_assert_eq(qr_whatif_grid_keys(g), 2);
    cr_assert_str_eq(qr_whatif_grid_key(g, 0), "buffer.size");
    cr_assert_eq(qr_whatif_grid_baseline(g), 0);
    cr_assert_str_eq(qr_whatif_grid_value(g, 0, 0), "2MB");
    cr_assert_str_eq(qr_whatif_grid_value(g, 0, 1), "1");
    /* the last key varies fastest */
    cr_assert_str_eq(qr_whatif_grid_value(g, 1, 0), "1MB");
    cr_assert_str_eq(qr_whatif_grid_value(g, 1, 1), "0.5");
    cr_assert_str_eq(qr_whatif_grid_value(g, 2, 1), "1");
    cr_assert_str_eq(qr_whatif_grid_value(g, 4, 0), "4MB");
    cr_assert_str_eq(qr_whatif_grid_value(g, 6, 1), "2");
    /* a point's scenario carries its values, and the rest of the recording's */
    qr_scenario *s;
    cr_assert_eq(qr_whatif_grid_scenario(g, 6, &s, err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_config(s)->buffer.size_bytes, 4000000);
    cr_assert_float_eq(qr_scenario_config(s)->buffer.alpha, 2.0, 1e-12);
    cr_assert_eq(qr_scenario_config(s)->topology.hosts, 3);
    qr_scenario_destroy(s);
    qr_whatif_grid_destroy(g);

    /* the baseline in the product keeps its place */
    const char *v2[] = {"buffer.size=1MB,2000KB,4MB"};
    cr_assert_eq(parse(&g, v2, 1, err), QR_OK, "%s", err);
    cr_assert_eq(qr_whatif_grid_points(g), 3);
    cr_assert_eq(qr_whatif_grid_baseline(g), 1);
    qr_whatif_grid_destroy(g);
}

Test(whatif, bad_vary_values_are_errors_naming_the_key)
{
    char err[QR_ERRBUF_SIZE];
    qr_whatif_grid *g = NULL;
    struct {
        const char *vary, *says;
        int rc;
    } cases[] = {
        {"traffic.load=10%,20%", "traffic.load: not a what-if key (one of: buffer.size", QR_EKEY},
        {"buffersize=1MB", "buffersize: not a what-if key", QR_EKEY},
        {"buffer.size=4", "--vary buffer.size: value '4'", QR_EUNIT},
        {"buffer.size=", "--vary buffer.size: no values", QR_EVALUE},
        {"buffer.size", "--vary buffer.size: no values", QR_EVALUE},
        {"buffer.size=1MB,,2MB", "an empty value", QR_EVALUE},
        {"buffer.size=1MB,", "an empty value", QR_EVALUE},
        {"buffer.size=1MB,1000KB", "value '1000KB' is listed twice (the same as '1MB')", QR_EVALUE},
        {"buffer.alpha=0", "--vary buffer.alpha: value '0'", QR_EVALUE},
        {"buffer.policy=fair", "--vary buffer.policy: value 'fair'", QR_EVALUE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *v[] = {cases[i].vary};
        err[0] = 0;
        int rc = parse(&g, v, 1, err);
        cr_assert_neq(rc, QR_OK, "%s was accepted", cases[i].vary);
        cr_assert_eq(rc, cases[i].rc, "%s: rc %d: %s", cases[i].vary, rc, err);
        cr_assert(strstr(err, cases[i].says), "%s: %s", cases[i].vary, err);
    }
    const char *twice[] = {"buffer.size=1MB", "buffer.size=4MB"};
    cr_assert_eq(parse(&g, twice, 2, err), QR_EVALUE);
    cr_assert(strstr(err, "given twice"), "%s", err);
    cr_assert_eq(parse(&g, NULL, 0, err), QR_EVALUE);
    cr_assert(strstr(err, "no --vary"), "%s", err);
}

/* ---- measuring ---- */

static void write_log(const char *path, const qr_arrival *a, size_t n)
{
    char err[QR_ERRBUF_SIZE];
    qr_arrival_writer *w;
    cr_assert_eq(qr_arrival_writer_open(&w, path, err), QR_OK, "%s", err);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(qr_arrival_write(w, &a[i], err), QR_OK, "%s", err);
    cr_assert_eq(qr_arrival_writer_close(w, err), QR_OK, "%s", err);
}

static qr_scenario *star(const char *base, const char *extra)
{
    char err[QR_ERRBUF_SIZE], ini[512];
    snprintf(ini, sizeof ini, "%s%s", base, extra);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s, ini, "test.ini", tmp, err), QR_OK, "%s", err);
    return s;
}

static qr_arrival arr(uint64_t packet, int64_t t, uint32_t port, uint64_t q, int64_t thr,
                      qr_decision d)
{
    qr_arrival a;
    memset(&a, 0, sizeof a);
    a.packet = packet;
    a.time_ns = t;
    a.sw = 0;
    a.port = port;
    a.bytes = 1500;
    a.decision = (uint8_t)d;
    a.queue_bytes = q;
    a.total_bytes = q;
    a.threshold = thr;
    return a;
}

Test(whatif, hand_example_on_a_star)
{
    /* A and B reach port 0 at t = 1000 together, C one T + 100 ns later (A gone, B in service);
     * D (another flow) is refused at port 1 at 5000. T: a 1500-byte packet's time on 10 Gbps. */
    int64_t T = qr_link_tx_ns(1500 + 2, 10000000000ull);
    uint64_t A = qr_packet_id(0, 0), B = qr_packet_id(2, 0), C = qr_packet_id(0, 1),
             D = qr_packet_id(4, 0);
    qr_arrival log[] = {
        arr(A, 1000, 0, 0, 2000, QR_ADMIT),
        arr(B, 1000, 0, 1500, 2000, QR_ADMIT),
        arr(C, 1100 + T, 0, 1500, 2000, QR_ADMIT),
        arr(D, 5000, 1, 0, 2000, QR_DROP_THRESHOLD),
    };
    char path[128], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/a.qra", tmp);
    write_log(path, log, 4);
    qr_scenario *s = star(kStar, "ecn_threshold = 2000B\n");
    qr_whatif_result r;
    cr_assert_eq(qr_whatif_measure(path, s, NULL, NULL, 3, QR_WHATIF_PREDICTION, &r, err), QR_OK,
                 "%s", err);
    const qr_whatif_row *w = &r.row;
    cr_assert_eq(w->point, 3);
    cr_assert_eq(w->arrivals, 4);
    cr_assert_eq(w->admitted, 3);
    cr_assert_eq(w->drops, 1);
    cr_assert_eq(w->drop_bytes, 1500);
    cr_assert_eq(w->layer_drops[0], 1);
    cr_assert_eq(w->flows, 3);
    cr_assert_eq(w->flows_lossy, 1);
    cr_assert_float_eq(w->lossy_share, 1.0 / 3, 1e-12);
    cr_assert_eq(w->model_mismatches, 0);
    /* ECN: B and C join 1500 bytes, 3000 > 2000 */
    cr_assert_eq(w->ecn_marks, 2);
    /* every port of a star leads to a host: three delivered, delays 0, T, T - 100 */
    cr_assert_eq(w->delivered, 3);
    cr_assert_eq(w->delay_max_ns, T);
    cr_assert_float_eq((double)w->delay_p50_ns, (double)(T - 100), (T - 100) / 200.0);
    cr_assert_eq(w->q_max_bytes[0], 1500);
    /* port 0 holds 3000 B on [1000, 1000+T) and [1100+T, 1000+2T), 1500 B between and on
     * [1000+2T, 1000+3T): above 90% of 2000 for 2T - 100, above 50% for 3T; the span runs from
     * 1000 to D at 5000, the star's 3 ports share it */
    int64_t span = 4000;
    cr_assert_eq(w->span_ns, span);
    cr_assert_float_eq(w->above90[0], (double)(2 * T - 100) / (3.0 * span), 1e-12);
    cr_assert_float_eq(w->above50[0], (double)(3 * T) / (3.0 * span), 1e-12);
    cr_assert_float_eq(w->above50[3], w->above50[0], 1e-12);
    cr_assert_eq(r.n_queues, 2);
    cr_assert_eq(r.queues[0].port, 0);
    cr_assert_float_eq(r.queues[0].above90, (double)(2 * T - 100) / span, 1e-12);
    cr_assert_eq(r.queues[1].drops, 1);
    cr_assert_eq(r.n_quantiles, QR_WHATIF_QUANTILES * (QR_WHATIF_LAYERS + 1));
    /* a wrong logged length is counted, not hidden */
    log[2].queue_bytes = 3000;
    write_log(path, log, 4);
    qr_whatif_result r2;
    cr_assert_eq(qr_whatif_measure(path, s, NULL, NULL, 3, QR_WHATIF_PREDICTION, &r2, err), QR_OK);
    cr_assert_eq(r2.row.model_mismatches, 1);
    qr_whatif_result_free(&r2);

    /* a result survives its file */
    char h5[128];
    snprintf(h5, sizeof h5, "%s/r.h5", tmp);
    qr_h5 *f;
    cr_assert_eq(qr_h5_create(&f, h5, err), QR_OK);
    cr_assert_eq(qr_whatif_results_write(f, &r, 1, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_commit(f, err), QR_OK);
    qr_whatif_result *rs;
    size_t n_back;
    cr_assert_eq(qr_whatif_read(h5, &rs, &n_back, err), QR_OK, "%s", err);
    cr_assert_eq(n_back, 1);
    qr_whatif_result back = rs[0];
    cr_assert_eq(memcmp(&back.row, &r.row, sizeof r.row), 0);
    cr_assert_eq(back.n_queues, r.n_queues);
    cr_assert_eq(back.n_quantiles, r.n_quantiles);
    cr_assert_eq(memcmp(back.quantiles, r.quantiles, r.n_quantiles * sizeof *r.quantiles), 0);
    qr_whatif_results_free(rs, n_back);
    qr_whatif_result_free(&r);
    qr_scenario_destroy(s);
}

Test(whatif, bad_logs_are_errors_naming_the_arrival)
{
    char path[128], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/b.qra", tmp);
    qr_scenario *s = star(kStar, "");
    qr_arrival log[] = {arr(1, 1000, 0, 0, 2000, QR_ADMIT), arr(2, 900, 1, 0, 2000, QR_ADMIT)};
    write_log(path, log, 2);
    qr_whatif_result r;
    cr_assert_eq(qr_whatif_measure(path, s, NULL, NULL, 0, QR_WHATIF_TRUTH, &r, err), QR_EFORMAT);
    cr_assert(strstr(err, "b.qra: arrival 2: time 900 ns is before"), "%s", err);
    log[1].time_ns = 2000;
    log[1].port = 7; /* the star has 3 ports */
    write_log(path, log, 2);
    cr_assert_eq(qr_whatif_measure(path, s, NULL, NULL, 0, QR_WHATIF_TRUTH, &r, err), QR_EFORMAT);
    cr_assert(strstr(err, "arrival 2: switch 0 port 7 is not in the scenario's network"), "%s",
              err);
    snprintf(path, sizeof path, "%s/none.qra", tmp);
    cr_assert_eq(qr_whatif_measure(path, s, NULL, NULL, 0, QR_WHATIF_TRUTH, &r, err), QR_ENOENT);
    qr_scenario_destroy(s);
}

/* A star switch of 8 ports fed random packets; each port a FIFO simulated here on its own. */
Test(whatif, properties_on_random_fifo_streams)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (unsigned seed = 1; seed <= 20; seed++) {
        gsl_rng_set(rng, seed);
        enum { PORTS = 8, N = 3000 };
        static qr_arrival log[N];
        int64_t free_at[PORTS] = {0}, ends[PORTS][N];
        uint32_t sizes[PORTS][N];
        size_t head[PORTS] = {0}, tail[PORTS] = {0};
        int64_t t = 0, max_delay = 0;
        uint64_t drops = 0, admitted = 0;
        uint64_t rate = 10000000000ull;
        for (int i = 0; i < N; i++) {
            t += (int64_t)gsl_rng_uniform_int(rng, 400);
            uint32_t p = (uint32_t)gsl_rng_uniform_int(rng, PORTS);
            uint32_t bytes = 64 + (uint32_t)gsl_rng_uniform_int(rng, 1437);
            uint64_t q = 0;
            while (head[p] < tail[p] && ends[p][head[p]] <= t)
                head[p]++;
            for (size_t k = head[p]; k < tail[p]; k++)
                q += sizes[p][k];
            qr_arrival a = arr(qr_packet_id((uint32_t)gsl_rng_uniform_int(rng, 40), (uint64_t)i), t,
                               p, q, 30000, QR_ADMIT);
            a.bytes = bytes;
            if (q + bytes > 30000) {
                a.decision = QR_DROP_THRESHOLD;
                drops++;
            } else {
                int64_t start = t > free_at[p] ? t : free_at[p];
                if (start - t > max_delay)
                    max_delay = start - t;
                free_at[p] = start + qr_link_tx_ns(bytes + 2, rate);
                ends[p][tail[p]] = free_at[p];
                sizes[p][tail[p]++] = bytes;
                admitted++;
            }
            log[i] = a;
        }
        char path[128], err[QR_ERRBUF_SIZE];
        snprintf(path, sizeof path, "%s/p.qra", tmp);
        write_log(path, log, N);
        qr_scenario *s = star(STAR(8), "");
        qr_whatif_result r;
        cr_assert_eq(qr_whatif_measure(path, s, NULL, NULL, 0, QR_WHATIF_PREDICTION, &r, err),
                     QR_OK, "%s", err);
        const qr_whatif_row *w = &r.row;
        cr_assert_eq(w->model_mismatches, 0, "seed %u", seed);
        cr_assert_eq(w->arrivals, N);
        cr_assert_eq(w->drops, drops);
        cr_assert_eq(w->admitted, admitted);
        cr_assert_eq(w->delivered, admitted, "every port of a star leads to a host");
        cr_assert_eq(w->delay_max_ns, max_delay, "seed %u", seed);
        uint64_t qa = 0, qd = 0;
        for (size_t i = 0; i < r.n_queues; i++) {
            qa += r.queues[i].arrivals;
            qd += r.queues[i].drops;
            cr_assert_leq(r.queues[i].above90, r.queues[i].above50);
            cr_assert_leq(r.queues[i].above50, 1.0);
        }
        cr_assert_eq(qa, N);
        cr_assert_eq(qd, drops);
        cr_assert_leq(w->q_p50_bytes[3], w->q_p99_bytes[3]);
        cr_assert_leq(w->q_p99_bytes[3], w->q_max_bytes[3]);
        cr_assert_leq(w->q_max_bytes[3], 30000);
        cr_assert_leq(w->delay_p50_ns, w->delay_p99_ns);
        cr_assert_leq(w->delay_p99_ns, w->delay_max_ns);
        cr_assert_leq(w->above90[3], w->above50[3]);
        cr_assert(w->lossy_share >= 0 && w->lossy_share <= 1);
        /* quantiles rise with p */
        for (size_t i = 1; i < r.n_quantiles; i++)
            if (r.quantiles[i].layer == r.quantiles[i - 1].layer) {
                cr_assert_geq(r.quantiles[i].queue_bytes, r.quantiles[i - 1].queue_bytes);
                cr_assert_geq(r.quantiles[i].delay_ns, r.quantiles[i - 1].delay_ns);
            }
        qr_whatif_result_free(&r);
        qr_scenario_destroy(s);
    }
    gsl_rng_free(rng);
}

Test(whatif, kendall_tau_and_prediction_errors)
{
    double a[] = {1, 2, 3, 4}, same[] = {10, 20, 30, 40}, rev[] = {4, 3, 2, 1},
           swap[] = {1, 3, 2, 4};
    cr_assert_float_eq(qr_kendall_tau(a, same, 4), 1.0, 1e-12);
    cr_assert_float_eq(qr_kendall_tau(a, rev, 4), -1.0, 1e-12);
    /* one discordant pair of six */
    cr_assert_float_eq(qr_kendall_tau(a, swap, 4), 4.0 / 6.0, 1e-12);
    cr_assert_float_eq(qr_kendall_tau(a, a, 1), 0.0, 1e-12);
    cr_assert_float_eq(qr_whatif_rel(10, 5), 1.0, 1e-12);
    cr_assert_float_eq(qr_whatif_rel(3, 0), 1.0, 1e-12);
    cr_assert_float_eq(qr_whatif_rel(0, 0), 0.0, 1e-12);
    cr_assert_float_eq(qr_whatif_rel(4, 8), -0.5, 1e-12);

    /* three points: predicted drops 30, 10, 0 against true 20, 10, 5 (same order); delays: the
     * truth is 100 ns later everywhere */
    qr_whatif_result pred[3], truth[3];
    memset(pred, 0, sizeof pred);
    memset(truth, 0, sizeof truth);
    uint64_t pd[] = {30, 10, 0}, td[] = {20, 10, 5};
    static qr_whatif_quantile_row qp[3][QR_WHATIF_QUANTILES], qt[3][QR_WHATIF_QUANTILES];
    for (int i = 0; i < 3; i++) {
        pred[i].row.point = truth[i].row.point = (uint32_t)i;
        pred[i].row.drops = pd[i];
        truth[i].row.drops = td[i];
        pred[i].row.delay_p99_ns = 1000 * (i + 1);
        truth[i].row.delay_p99_ns = 1000 * (i + 1) + 100;
        for (int k = 0; k < QR_WHATIF_QUANTILES; k++) {
            double p = (double)k / (QR_WHATIF_QUANTILES - 1);
            qp[i][k] = (qr_whatif_quantile_row){(uint32_t)i, 0, QR_WHATIF_LAYERS,   p,
                                                0,           0, (int64_t)(1000 * p)};
            qt[i][k] = qp[i][k];
            qt[i][k].delay_ns += 100;
        }
        pred[i].quantiles = qp[i];
        truth[i].quantiles = qt[i];
        pred[i].n_quantiles = truth[i].n_quantiles = QR_WHATIF_QUANTILES;
    }
    qr_whatif_error_row e[3];
    qr_whatif_agreement ag;
    cr_assert_eq(qr_whatif_errors(pred, truth, 3, e, &ag), QR_OK);
    cr_assert_float_eq(e[0].drops_rel, 0.5, 1e-12);
    cr_assert_float_eq(e[1].drops_rel, 0.0, 1e-12);
    cr_assert_float_eq(e[2].drops_rel, -1.0, 1e-12);
    cr_assert_eq(e[0].delay_w1_ns, 100, "a shift of 100 ns is W1 = 100 ns");
    cr_assert_float_eq(ag.tau_drops, 1.0, 1e-12);
    cr_assert_float_eq(ag.tau_delay_p99, 1.0, 1e-12);
    cr_assert_eq(ag.best_drops_pred, 2);
    cr_assert_eq(ag.best_drops_true, 2);
    cr_assert(ag.best_drops_same);
    cr_assert(ag.best_delay_same);
    /* the truth's order reversed: the best changes, tau is -1 */
    truth[0].row.drops = 0;
    truth[2].row.drops = 20;
    cr_assert_eq(qr_whatif_errors(pred, truth, 3, e, &ag), QR_OK);
    cr_assert_float_eq(ag.tau_drops, -1.0, 1e-12);
    cr_assert(!ag.best_drops_same);
    cr_assert_eq(ag.best_drops_true, 0);
}

/* docs/FORMATS.md's whatif.h5 section names every field of every table. */
Test(whatif, formats_md_documents_every_field)
{
    FILE *f = fopen(QR_SOURCE_DIR "/docs/FORMATS.md", "r");
    cr_assert_not_null(f);
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = 0;
    fclose(f);
    char *sec = strstr(doc, "## `whatif/whatif.h5`");
    cr_assert_not_null(sec, "no whatif.h5 section");
    char *end = strstr(sec + 3, "\n## ");
    if (end)
        *end = 0;
    for (int t = 0; t < 4; t++) {
        const char *name;
        size_t nf;
        const qr_h5_field *fs = qr_whatif_table_fields(t, &name, &nf);
        cr_assert_not_null(fs);
        char head[64];
        snprintf(head, sizeof head, "`/%s`", name);
        cr_assert(strstr(sec, head), "no %s table", head);
        for (size_t i = 0; i < nf; i++) {
            char quoted[80];
            snprintf(quoted, sizeof quoted, "`%s`", fs[i].name);
            cr_assert(strstr(sec, quoted), "%s: field %s undocumented", name, fs[i].name);
        }
    }
    const char *name;
    size_t nf;
    cr_assert_null(qr_whatif_table_fields(4, &name, &nf));
}
