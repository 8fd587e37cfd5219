/* qreplay workload: the flow schedule and the host clock offsets of a scenario. */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
#include "qreplay/workload.h"

static void help(void)
{
    printf("usage: qreplay workload SCENARIO [--set section.key=value ...] -o DIR [--quiet]\n\n"
           "Generate the scenario's flow schedule (web-search background flows with Poisson\n"
           "arrivals at the target load plus incast events, or the explicit flow list) and the\n"
           "hosts' clock offsets, and write them to DIR/workload.h5:\n"
           "  /flows  (id, src, dst, bytes, start_ns, incast)\n"
           "  /clock  (host, offset_ns)\n"
           "with the resolved scenario as attributes of /. Prints what was generated, including\n"
           "the offered load actually achieved next to the target.\n\n"
           "options:\n"
           "  --set S.K=V   override a scenario key (repeatable)\n"
           "  -o DIR        output folder (default: the scenario's [output] dir)\n"
           "  --quiet       print nothing but errors\n"
           "  --help        this text\n");
}

/* Load, override and validate a scenario; prints the error. Used by every scenario-driven command. */
int cli_load_scenario(const char *command, const char *path, const char **sets, int n_sets,
                      qr_scenario **out)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    if (qr_scenario_create(&s))
        return cli_fail(command, "out of memory");
    int rc = qr_scenario_load(s, path, err);
    for (int i = 0; !rc && i < n_sets; i++)
        rc = qr_scenario_set(s, sets[i], err);
    if (!rc)
        rc = qr_scenario_validate(s, err);
    if (rc) {
        qr_scenario_destroy(s);
        return cli_fail(command, "%s", err);
    }
    *out = s;
    return 0;
}

int cli_make_dir(const char *command, const char *dir)
{
    char buf[QR_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0) {
                struct stat st;
                if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
                    return cli_fail(command, "%s: cannot create folder", buf);
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

struct clock_row {
    uint32_t host;
    int64_t offset_ns;
};

int qr_cmd_workload(int argc, char **argv)
{
    static const struct option opts[] = {{"set", required_argument, NULL, 's'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *sets[64], *outdir = NULL;
    int n_sets = 0, quiet = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (n_sets == 64)
                return cli_usage_error("workload", "too many --set options");
            sets[n_sets++] = optarg;
            break;
        case 'o': outdir = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': help(); return 0;
        case ':': return cli_usage_error("workload", "%s needs a value", argv[optind - 1]);
        default: return cli_usage_error("workload", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("workload", "expected one SCENARIO file");
    qr_scenario *s;
    if (cli_load_scenario("workload", argv[optind], sets, n_sets, &s))
        return 1;
    const qr_config *cfg = qr_scenario_config(s);
    if (!outdir)
        outdir = cfg->output.dir;
    uint32_t hosts = qr_config_hosts(cfg);
    char err[QR_ERRBUF_SIZE];
    qr_flow *flows = NULL;
    size_t n_flows = 0;
    int64_t *offsets = calloc(hosts, sizeof *offsets);
    qr_h5 *h5 = NULL;
    qr_h5_table *tf = NULL, *tc = NULL;
    int rc = 0;
    char path[QR_PATH_MAX + 32];
    if (!offsets) {
        rc = cli_fail("workload", "out of memory");
        goto out;
    }
    if (qr_workload_from_config(cfg, &flows, &n_flows, err)) {
        rc = cli_fail("workload", "%s", err);
        goto out;
    }
    qr_clock_offsets(cfg->run.seed, cfg->clock.max_offset_ns, hosts, offsets);

    if (cli_make_dir("workload", outdir)) {
        rc = 1;
        goto out;
    }
    snprintf(path, sizeof path, "%s/workload.h5", outdir);
    static const qr_h5_field flow_fields[] = {
        {"id", QR_H5_U64, offsetof(qr_flow, id), 0, NULL},
        {"src", QR_H5_U32, offsetof(qr_flow, src), 0, "host"},
        {"dst", QR_H5_U32, offsetof(qr_flow, dst), 0, "host"},
        {"bytes", QR_H5_U64, offsetof(qr_flow, bytes), 0, "bytes"},
        {"start_ns", QR_H5_I64, offsetof(qr_flow, start_ns), 0, "ns"},
        {"incast", QR_H5_U32, offsetof(qr_flow, incast), 0, "event (0: background)"}};
    static const qr_h5_field clock_fields[] = {
        {"host", QR_H5_U32, offsetof(struct clock_row, host), 0, "host"},
        {"offset_ns", QR_H5_I64, offsetof(struct clock_row, offset_ns), 0, "ns"}};
    uint64_t bg_bytes = 0, bg_flows = 0, incasts = 0;
    for (size_t i = 0; i < n_flows; i++) {
        if (flows[i].incast == 0) {
            bg_bytes += flows[i].bytes;
            bg_flows++;
        } else if (flows[i].incast > incasts) {
            incasts = flows[i].incast;
        }
    }
    double offered = cfg->traffic.duration_ns > 0
                         ? (double)bg_bytes * 8.0 /
                               ((double)cfg->traffic.duration_ns * 1e-9 *
                                (double)cfg->links.rate_bps * hosts)
                         : 0.0;
    rc = qr_h5_create(&h5, path, err);
    if (!rc)
        rc = qr_scenario_write_h5(s, h5, "/", err);
    if (!rc)
        rc = qr_h5_table_create(&tf, h5, "/flows", flow_fields, 6, sizeof(qr_flow), 0, err);
    if (!rc)
        rc = qr_h5_table_append(tf, flows, n_flows, err);
    if (!rc)
        rc = qr_h5_table_close(tf, err);
    tf = NULL;
    if (!rc)
        rc = qr_h5_attr_f64(h5, "/flows", "offered_load", offered, err);
    if (!rc)
        rc = qr_h5_table_create(&tc, h5, "/clock", clock_fields, 2, sizeof(struct clock_row), 0,
                                err);
    for (uint32_t h = 0; !rc && h < hosts; h++) {
        struct clock_row row = {h, offsets[h]};
        rc = qr_h5_table_append(tc, &row, 1, err);
    }
    if (!rc)
        rc = qr_h5_table_close(tc, err);
    tc = NULL;
    if (!rc) {
        rc = qr_h5_commit(h5, err);
        h5 = NULL;
    }
    if (rc) {
        rc = cli_fail("workload", "%s", err);
        goto out;
    }
    if (!quiet) {
        int64_t omin = offsets[0], omax = offsets[0];
        for (uint32_t h = 0; h < hosts; h++) {
            omin = offsets[h] < omin ? offsets[h] : omin;
            omax = offsets[h] > omax ? offsets[h] : omax;
        }
        char dur[32];
        qr_format_time(cfg->traffic.duration_ns, dur, sizeof dur);
        printf("hosts              %" PRIu32 "\n", hosts);
        printf("flows              %zu (%" PRIu64 " background, %zu in %" PRIu64 " incasts)\n",
               n_flows, bg_flows, n_flows - bg_flows, incasts);
        if (cfg->traffic.pattern == QR_PATTERN_WEBSEARCH)
            printf("offered load       %.2f%% of host links over %s (target %.2f%%)\n",
                   100 * offered, dur, 100 * cfg->traffic.load);
        printf("clock offsets      %" PRId64 " .. %" PRId64 " ns\n", omin, omax);
        printf("output             %s\n", path);
    }
out:
    qr_h5_abort(h5); /* also releases tables left open by an error */
    free(offsets);
    free(flows);
    qr_scenario_destroy(s);
    return rc;
}
