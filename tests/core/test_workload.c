/* Workload: web-search CDF, Poisson arrivals at a target load, incast, determinism. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"
#include "qreplay/workload.h"
#include "qreplay/workload_h5.h"

static const char *websearch = QR_SOURCE_DIR "/data/websearch.cdf";

Test(workload, websearch_cdf_loads_with_its_mean)
{
    qr_cdf *c;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_cdf_load(&c, websearch, err), QR_OK, "%s", err);
    /* hand computation from the published points: 1,711,250 bytes */
    cr_assert_float_eq(qr_cdf_mean(c), 1711250.0, 1e-6);
    cr_assert_eq(qr_cdf_quantile(c, 0.15), 10000);
    cr_assert_eq(qr_cdf_quantile(c, 0.175), 15000);
    cr_assert_eq(qr_cdf_quantile(c, 1.0), 30000000);
    cr_assert_eq(qr_cdf_quantile(c, 0.0), 1); /* at least one byte */
    qr_cdf_destroy(c);
}

Test(workload, sampled_mean_within_2_percent_over_a_million_draws)
{
    qr_cdf *c;
    cr_assert_eq(qr_cdf_load(&c, websearch, NULL), QR_OK);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    long double sum = 0;
    const int n = 1000000;
    for (int i = 0; i < n; i++)
        sum += qr_cdf_quantile(c, gsl_rng_uniform(r));
    double mean = (double)(sum / n);
    cr_log_info("web-search: sampled mean %.0f B, CDF mean %.0f B (%.3f%%)", mean, qr_cdf_mean(c),
                100 * (mean / qr_cdf_mean(c) - 1));
    cr_assert_leq(fabs(mean / qr_cdf_mean(c) - 1), 0.02);
    gsl_rng_free(r);
    qr_cdf_destroy(c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(workload, bad_cdf_files)
{
    const char *path = "/tmp/qr-test-bad.cdf";
    qr_cdf *c;
    char err[QR_ERRBUF_SIZE];
    write_file(path, "0 0\n100 0.5\n50 1\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE);
    cr_assert(strstr(err, ":3: sizes must not decrease"), "%s", err);
    write_file(path, "0 0\n100 0.5\n200 0.9\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE);
    cr_assert(strstr(err, ":3: the last probability must be 1"), "%s", err);
    write_file(path, "# header\n0 0\nten 1\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_ESYNTAX);
    cr_assert(strstr(err, ":3:"), "%s", err);
    write_file(path, "0 0\n100 1.5\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE);
    write_file(path, "");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE);
    cr_assert_eq(qr_cdf_load(&c, "/nonexistent.cdf", err), QR_ENOENT);
    unlink(path);
}

static qr_workload_cfg cfg_for(const qr_cdf *c, uint64_t seed)
{
    return (qr_workload_cfg){.seed = seed,
                             .n_hosts = 16,
                             .link_rate_bps = 10000000000ULL,
                             .load = 0.3,
                             .duration_ns = 2000000000LL,
                             .sizes = c,
                             .incast_rate_per_s = 500,
                             .incast_fanin = 8,
                             .incast_size_bytes = 250000};
}

Test(workload, offered_load_within_2_percent_and_pairs_valid, .timeout = 120)
{
    qr_cdf *c;
    cr_assert_eq(qr_cdf_load(&c, websearch, NULL), QR_OK);
    const double loads[] = {0.1, 0.3, 0.8};
    for (int k = 0; k < 3; k++) {
        qr_workload_cfg w = cfg_for(c, 100 + k);
        w.n_hosts = 128;
        w.load = loads[k];
        w.duration_ns = 20000000000LL; /* 20 s: ~ 1.5 M flows at 80% */
        w.incast_rate_per_s = 0;
        qr_flow *f;
        size_t n;
        char err[QR_ERRBUF_SIZE];
        cr_assert_eq(qr_workload_generate(&w, &f, &n, err), QR_OK, "%s", err);
        long double bytes = 0;
        uint64_t *per_src = calloc(w.n_hosts, sizeof *per_src);
        for (size_t i = 0; i < n; i++) {
            cr_assert_neq(f[i].src, f[i].dst);
            cr_assert_lt(f[i].src, w.n_hosts);
            cr_assert_lt(f[i].dst, w.n_hosts);
            cr_assert_eq(f[i].id, i);
            if (i)
                cr_assert_geq(f[i].start_ns, f[i - 1].start_ns, "sorted by start");
            cr_assert_lt(f[i].start_ns, w.duration_ns);
            bytes += f[i].bytes;
            per_src[f[i].src]++;
        }
        double offered = (double)(bytes * 8 /
                                  ((long double)w.duration_ns * 1e-9 *
                                   (long double)w.link_rate_bps * w.n_hosts));
        cr_log_info("target load %.0f%%: %zu flows, offered %.3f%%", 100 * loads[k], n,
                    100 * offered);
        cr_assert_leq(fabs(offered / loads[k] - 1), 0.02, "offered %g vs target %g", offered,
                      loads[k]);
        /* sources are uniform: every host within 10% of the mean count */
        for (uint32_t h = 0; h < w.n_hosts; h++)
            cr_assert_leq(fabs((double)per_src[h] / ((double)n / w.n_hosts) - 1), 0.1);
        free(per_src);
        qr_flows_free(f);
    }
    qr_cdf_destroy(c);
}

Test(workload, incast_events)
{
    qr_workload_cfg w = cfg_for(NULL, 9);
    w.load = 0;
    w.duration_ns = 1000000000LL;
    qr_flow *f;
    size_t n;
    cr_assert_eq(qr_workload_generate(&w, &f, &n, NULL), QR_OK);
    cr_assert_eq(n % 8, 0);
    size_t events = n / 8;
    cr_log_info("incast: %zu events in 1 s at 500/s", events);
    cr_assert(events > 400 && events < 600, "%zu events", events);
    for (size_t e = 0; e < events; e++) {
        /* the 8 flows of one event: one client, distinct servers, same start and size */
        uint32_t id = 0, client = 0;
        uint32_t seen[16] = {0};
        int count = 0;
        for (size_t i = 0; i < n; i++) {
            if (f[i].incast != e + 1)
                continue;
            if (count == 0) {
                id = f[i].incast;
                client = f[i].dst;
            }
            cr_assert_eq(f[i].dst, client);
            cr_assert_neq(f[i].src, client);
            cr_assert_eq(seen[f[i].src], 0, "server twice in one incast");
            seen[f[i].src] = 1;
            cr_assert_eq(f[i].bytes, 250000);
            count++;
        }
        cr_assert_eq(count, 8, "event %u has %d flows", id, count);
    }
    qr_flows_free(f);
}

Test(workload, same_seed_same_schedule_other_seed_other_schedule)
{
    qr_cdf *c;
    cr_assert_eq(qr_cdf_load(&c, websearch, NULL), QR_OK);
    qr_workload_cfg w = cfg_for(c, 77);
    qr_flow *a, *b, *x;
    size_t na, nb, nx;
    cr_assert_eq(qr_workload_generate(&w, &a, &na, NULL), QR_OK);
    cr_assert_eq(qr_workload_generate(&w, &b, &nb, NULL), QR_OK);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(a, b, na * sizeof *a), 0, "same seed, same schedule");
    w.seed = 78;
    cr_assert_eq(qr_workload_generate(&w, &x, &nx, NULL), QR_OK);
    cr_assert(nx != na || memcmp(a, x, na * sizeof *a) != 0, "another seed, another schedule");
    qr_flows_free(a);
    qr_flows_free(b);
    qr_flows_free(x);
    qr_cdf_destroy(c);
}

Test(workload, bad_configurations)
{
    qr_workload_cfg w = cfg_for(NULL, 1);
    qr_flow *f;
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_workload_generate(&w, &f, &n, err), QR_EINVAL); /* load without sizes */
    w.load = 0;
    w.incast_fanin = 16; /* 16 hosts: at most 15 servers */
    cr_assert_eq(qr_workload_generate(&w, &f, &n, err), QR_EINVAL);
    cr_assert(strstr(err, "fan-in"), "%s", err);
    w.n_hosts = 1;
    cr_assert_eq(qr_workload_generate(&w, &f, &n, err), QR_EINVAL);
}

Test(workload, explicit_flow_lists)
{
    const char *path = "/tmp/qr-test-flows.csv";
    qr_flow *f;
    size_t n;
    char err[QR_ERRBUF_SIZE];
    write_file(path, "src,dst,bytes,start\n0,2,20MB,0\n1,2,20MB,0\n0,2,30KB,30ms # short\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(f[2].bytes, 30000);
    cr_assert_eq(f[2].start_ns, 30000000);
    cr_assert_eq(f[2].id, 2);
    qr_flows_free(f);
    write_file(path, "src,dst,bytes,start\n0,0,1MB,0\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_EVALUE);
    cr_assert(strstr(err, ":2: src and dst"), "%s", err);
    write_file(path, "src,dst,bytes,start\n0,5,1MB,0\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_EVALUE);
    write_file(path, "src,dst,bytes,start\n0,1,1000,0\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_EUNIT);
    cr_assert(strstr(err, ":2:"), "%s", err);
    write_file(path, "a,b,c,d\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_ESYNTAX);
    write_file(path, "src,dst,bytes,start\n0,1\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_ESYNTAX);
    unlink(path);
}

/* The text readers. */
Test(workload, cdfs_that_would_not_end_or_overflow_are_refused)
{
    const char *path = "/tmp/qr-cdf-bad.txt";
    qr_cdf *c;
    char err[QR_ERRBUF_SIZE];
    write_file(path, "0 0\n0 0.5\n0 1\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE, "all-zero sizes used to loop forever");
    cr_assert(strstr(err, "average") && strstr(err, "one byte"), "%s", err);
    write_file(path, "0 0\n1 1\n"); /* mean 0.5 byte */
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE);
    write_file(path, "1 0\n1e16 1\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_EVALUE);
    cr_assert(strstr(err, ":2:") && strstr(err, "1e15"), "%s", err);
    /* a comment longer than any line buffer is a comment, all of it */
    FILE *f = fopen(path, "w");
    fputs("# ", f);
    for (int i = 0; i < 5000; i++)
        fputs("1 1 ", f);
    fputs("\n100 0\n200 1\n", f);
    fclose(f);
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_OK, "%s", err);
    cr_assert_float_eq(qr_cdf_mean(c), 150.0, 1e-9);
    qr_cdf_destroy(c);
    /* a NUL byte is an error naming its line */
    f = fopen(path, "w");
    fwrite("100 0\n200\0 1\n", 1, 13, f);
    fclose(f);
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_ESYNTAX);
    cr_assert(strstr(err, ":2:") && strstr(err, "NUL"), "%s", err);
    unlink(path);
    /* a background of more flows than a schedule holds is refused, not generated */
    write_file(path, "1 0\n2 1\n");
    cr_assert_eq(qr_cdf_load(&c, path, err), QR_OK, "%s", err);
    qr_workload_cfg w = cfg_for(c, 1);
    w.load = 1.0;
    w.duration_ns = 1000000000;
    qr_flow *fl;
    size_t n;
    cr_assert_eq(qr_workload_generate(&w, &fl, &n, err), QR_EVALUE);
    cr_assert(strstr(err, "lower the load"), "%s", err);
    /* and incasts of more flows: 10^9/s of 10 servers for 10 ms is 10^8 flows */
    w.load = 0;
    w.duration_ns = 10000000;
    w.incast_rate_per_s = 1e9;
    w.incast_fanin = 10;
    w.incast_size_bytes = 1000;
    w.n_hosts = 16;
    cr_assert_eq(qr_workload_generate(&w, &fl, &n, err), QR_EVALUE);
    cr_assert(strstr(err, "incast_rate") && strstr(err, "1e+08 flows"), "%s", err);
    /* a tenth of the bound is generated */
    w.incast_rate_per_s = (double)QR_FLOWS_MAX; /* a tenth: QR_FLOWS_MAX / 10 flows in 10 ms */
    cr_assert_eq(qr_workload_generate(&w, &fl, &n, err), QR_OK, "%s", err);
    cr_assert(n > QR_FLOWS_MAX / 20 && n < QR_FLOWS_MAX / 5, "%zu flows", n);
    qr_flows_free(fl);
    qr_cdf_destroy(c);
    unlink(path);
}

Test(workload, flow_lists_keep_their_columns)
{
    const char *path = "/tmp/qr-flows-bad.csv";
    qr_flow *f;
    size_t n;
    char err[QR_ERRBUF_SIZE];
    write_file(path, "src,dst,bytes,start\n0,,10KB,0\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_ESYNTAX,
                 "an empty field shifted the rest");
    cr_assert(strstr(err, ":2:") && strstr(err, "field 2 (dst) is empty"), "%s", err);
    write_file(path, "src,dst,bytes,start\n0,1,10KB,0,5\n");
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_ESYNTAX);
    cr_assert(strstr(err, "5 fields"), "%s", err);
    FILE *fp = fopen(path, "w");
    fputs("src,dst,bytes,start\n# ", fp);
    for (int i = 0; i < 300; i++)
        fputs("0,1,1KB,0 ", fp);
    fputs("\n1,2,3KB,1ms\n", fp);
    fclose(fp);
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 1, "the tail of a long comment is no flow");
    cr_assert(f[0].src == 1 && f[0].bytes == 3000 && f[0].start_ns == 1000000);
    qr_flows_free(f);
    fp = fopen(path, "w");
    fwrite("src,dst,bytes,start\n0,1,1KB\0,0\n", 1, 31, fp);
    fclose(fp);
    cr_assert_eq(qr_flows_load(path, 3, &f, &n, err), QR_ESYNTAX);
    cr_assert(strstr(err, ":2:") && strstr(err, "NUL"), "%s", err);
    unlink(path);
}

/* The offered load counts background bytes only, over the host links' capacity in the duration;
 * the file written with it holds every flow and clock offset. */
Test(workload, offered_load_counts_background_bytes_and_the_file_holds_it)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "topology.hosts=4", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "links.rate=1Gbps", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "traffic.duration=1ms", err), QR_OK, "%s", err);
    const qr_config *c = qr_scenario_config(s);
    /* 4 hosts x 1 Gbps x 1 ms = 500000 bytes of capacity */
    qr_flow f[3] = {{0, 0, 1, 100000, 0, 0}, {1, 1, 2, 150000, 10, 0}, {2, 2, 3, 999999, 20, 1}};
    cr_assert_float_eq(qr_workload_offered_load(c, f, 3, 4), 0.5, 1e-12, "the incast flow is out");
    cr_assert_float_eq(qr_workload_offered_load(c, f, 3, 0), 0.0, 1e-12);
    char path[64];
    snprintf(path, sizeof path, "/tmp/qr-workload-%d.h5", (int)getpid());
    int64_t off[4] = {1, 2, 3, 4};
    cr_assert_eq(qr_workload_write(path, s, f, 3, off, 4, err), QR_OK, "%s", err);
    qr_h5_reader *r;
    qr_row_workload_flow *rows;
    qr_row_clock *clk;
    size_t n, m;
    double offered;
    cr_assert_eq(qr_h5_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_h5_read_rows(r, "/flows", &qr_schema_workload_flow, (void **)&rows, &n, err),
                 QR_OK);
    cr_assert_eq(qr_h5_read_rows(r, "/clock", &qr_schema_clock, (void **)&clk, &m, err), QR_OK);
    cr_assert_eq(qr_h5_read_attr_f64(r, "/flows", "offered_load", &offered, err), QR_OK);
    qr_h5_close(r);
    cr_assert(n == 3 && rows[2].bytes == 999999 && rows[2].incast == 1);
    cr_assert(m == 4 && clk[3].offset_ns == 4);
    cr_assert_float_eq(offered, 0.5, 1e-12);
    qr_h5_rows_free(rows);
    qr_h5_rows_free(clk);
    unlink(path);
    qr_scenario_destroy(s);
}
