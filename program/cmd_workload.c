/* qreplay workload: the flow schedule and the host clock offsets of a scenario. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/clock.h"
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/results.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
#include "qreplay/workload.h"
#include "qreplay/workload_h5.h"

static const cli_opt opts[] = {
    CLI_OPT_SET,
    CLI_OPT_OUT("output folder (default: the scenario's [output] dir)"),
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "workload",
    "SCENARIO",
    "Generate the scenario's flow schedule (web-search background flows with Poisson\n"
    "arrivals at the target load plus incast events, or the explicit flow list) and the\n"
    "hosts' clock offsets, and write them to DIR/workload.h5:\n"
    "  /flows  (id, src, dst, bytes, start_ns, incast)\n"
    "  /clock  (host, offset_ns)\n"
    "with the resolved scenario as attributes of /. Prints what was generated, including\n"
    "the offered load actually achieved next to the target.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one SCENARIO file",
    NULL};

/* Load, override and validate a scenario; prints the error. Used by every scenario-driven command.
 */
int cli_load_scenario(const char *command, const char *path, const char **sets, int n_sets,
                      qr_scenario **out)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    if (qr_scenario_create_in(&s, cli_data_dir()))
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

int qr_cmd_workload(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    int n_sets;
    const char **sets = cli_list(&a, "set", &n_sets);
    const char *outdir = cli_value(&a, "out");
    int quiet = cli_count(&a, "quiet") > 0;
    qr_scenario *s;
    char scenario_file[QR_PATH_MAX];
    snprintf(scenario_file, sizeof scenario_file, "%s", a.pos[0]);
    rc = cli_load_scenario("workload", a.pos[0], sets, n_sets, &s);
    cli_args_free(&a);
    if (rc)
        return 1;
    const qr_config *cfg = qr_scenario_config(s);
    if (!outdir)
        outdir = cfg->output.dir;
    uint32_t hosts = qr_config_hosts(cfg);
    char err[QR_ERRBUF_SIZE];
    qr_flow *flows = NULL;
    size_t n_flows = 0;
    int64_t *offsets = calloc(hosts, sizeof *offsets);
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

    /* DIR/workload.h5: the folder is the transaction (main commits) */
    const char *work = cli_output_folder("workload", outdir, quiet);
    if (!work) {
        rc = 1;
        goto out;
    }
    snprintf(path, sizeof path, "%s/workload.h5", work);
    {
        cli_paths ins = {0}, outs = {0};
        cli_paths_add_scenario(&ins, scenario_file, s);
        cli_paths_add(&outs, "%s", path);
        int bad = cli_check_outputs("workload", &outs, &ins);
        if (bad) {
            rc = 1;
            goto out;
        }
    }
    uint64_t bg_flows = 0, incasts = 0;
    for (size_t i = 0; i < n_flows; i++) {
        if (flows[i].incast == 0)
            bg_flows++;
        else if (flows[i].incast > incasts)
            incasts = flows[i].incast;
    }
    double offered = qr_workload_offered_load(cfg, flows, n_flows, hosts);
    if ((rc = qr_workload_write(path, s, flows, n_flows, offsets, hosts, err)) != QR_OK) {
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
        printf("output             %s\n", cli_shown(path));
    }
out:
    free(offsets);
    qr_flows_free(flows);
    qr_scenario_destroy(s);
    return rc;
}
