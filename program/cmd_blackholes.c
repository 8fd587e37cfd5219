/* qreplay blackholes: shared-buffer blackhole episodes in a runtime's or a replay's arrival log
 * (blackhole.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/blackhole.h"
#include "qreplay/error.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/units.h"

static const cli_opt opts[] = {
    {"replay", 0, CLI_VALUE, "NAME",
     "a replay's arrivals (DIR/replay/NAME, e.g. tagged_th_5) instead of the runtime's"},
    {"window", 0, CLI_VALUE, "T", "how long a queue's peak is remembered (500us)"},
    {"gap", 0, CLI_VALUE, "T", "drops further apart start a new episode (100us)"},
    {"min-fall", 0, CLI_VALUE, "BYTES", "how far below its peak the queue must be (1500B)"},
    {"min-shrink", 0, CLI_VALUE, "BYTES", "how far its threshold must have fallen (15000B)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "blackholes",
    "DIR|ARRIVALS.qra",
    "Find the shared-buffer blackholes of a run: episodes where a switch queue drops packets\n"
    "while its own length is falling, because other queues of the switch grew, the switch's\n"
    "occupancy rose and the dynamic threshold fell below the queue. Reads what the run's switches\n"
    "mirrored (DIR/recording/mirror/copies.qra, or DIR/mirror/ for a recording folder: each\n"
    "copy with the switch's decision, queue, occupancy and threshold), a replay's arrival log\n"
    "(--replay NAME) or the arrival log given. Prints one row per episode: the queue, its time\n"
    "span, its drops, its length and threshold at its peak and at the first drop, and the queues\n"
    "whose growth shrank the threshold (culprits, largest growth first).\n\n"
    "A blackhole drop: dropped above the threshold while the queue is at least --min-fall below\n"
    "its peak of the last --window, with the threshold at least --min-shrink lower and the\n"
    "switch fuller than at that peak. Drops less than --gap apart are one episode.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one run folder or arrival log",
    "examples:\n"
    "  qreplay run scenarios/blackhole.ini -o /tmp/bh && qreplay blackholes /tmp/bh\n"
    "  qreplay blackholes /tmp/bh --replay tagged_th_5\n"};

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

int qr_cmd_blackholes(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *dir = a.pos[0], *replay = cli_value(&a, "replay");
    int quiet = cli_count(&a, "quiet") > 0;
    char err[QR_ERRBUF_SIZE], path[4200];
    qr_blackhole_opts o;
    qr_blackhole_opts_default(&o);
    /* the detector's four settings: two times, two byte counts */
    const struct {
        const char *name;
        int64_t *time;
        uint64_t *bytes;
    } set[] = {{"window", &o.window_ns, NULL},
               {"gap", &o.gap_ns, NULL},
               {"min-fall", NULL, &o.min_fall_bytes},
               {"min-shrink", NULL, &o.min_shrink_bytes}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
        const char *v = cli_value(&a, set[i].name);
        if (v && (set[i].time ? qr_parse_time_ns(v, set[i].time, err)
                              : qr_parse_bytes(v, set[i].bytes, err))) {
            rc = cli_usage_error("blackholes", "--%s: %s", set[i].name, err);
            goto out;
        }
    }
    if (o.window_ns < 0 || o.gap_ns < 0) {
        rc = cli_usage_error("blackholes", "--window and --gap must not be negative");
        goto out;
    }
    if (ends_with(dir, ".qra")) {
        if (replay) {
            rc = cli_usage_error("blackholes", "--replay needs a run folder, not an arrival log");
            goto out;
        }
        snprintf(path, sizeof path, "%s", dir);
    } else if (replay) {
        if (strchr(replay, '/') || !strcmp(replay, "..") || !strcmp(replay, ".")) {
            rc = cli_usage_error("blackholes", "--replay: '%s' is not a replay's name", replay);
            goto out;
        }
        snprintf(path, sizeof path, "%s/replay/%s/arrivals.qra", dir, replay);
    } else {
        char rec[4096];
        cli_recording_dir(dir, rec, sizeof rec);
        snprintf(path, sizeof path, "%s/" QR_MIRROR_COPIES, rec);
    }
    if (!cli_exists(path)) {
        rc = cli_fail("blackholes", "%s: no arrival log there%s", path,
                      replay ? " (qreplay replay DIR writes one per replay; see DIR/replay/)"
                             : " (a run folder or recording of qreplay run or runtime, made "
                               "with arrivals? an import has no switches: --replay)");
        goto out;
    }
    if (!ends_with(dir, ".qra")) {
        /* a run folder's log: of its recording, and of the run its folder names */
        char rec[4096], h5[4200], id[QR_ID_SIZE];
        cli_recording_dir(dir, rec, sizeof rec);
        snprintf(h5, sizeof h5, "%s/recording.h5", rec);
        if (qr_h5_recording_id(h5, id, err)) {
            rc = cli_fail("blackholes", "%s", err);
            goto out;
        }
        if (qr_run_log_check(path, id,
                             replay ? "replay the recording again (qreplay replay)"
                                    : "run the recording again (qreplay runtime)",
                             err)) {
            rc = cli_fail("blackholes", "%s", err);
            goto out;
        }
    }
    qr_blackhole *e = NULL;
    size_t n = 0;
    if (qr_blackhole_scan(path, &o, &e, &n, err)) {
        rc = cli_fail("blackholes", "%s", err);
        goto out;
    }
    rc = 0;
    if (!quiet) {
        printf("arrivals           %s\n", path);
        printf("episodes           %zu\n", n);
        if (n)
            printf("\n%-6s %-5s %12s %12s %6s %10s %10s %10s %10s  %s\n", "switch", "port",
                   "start ms", "end ms", "drops", "peak B", "queue B", "thr peak", "thr drop",
                   "culprits (port +bytes)");
        for (size_t i = 0; i < n; i++) {
            printf("%-6" PRIu32 " %-5" PRIu32 " %12.6f %12.6f %6" PRIu64 " %10" PRIu64 " %10" PRIu64
                   " %10" PRId64 " %10" PRId64 " ",
                   e[i].sw, e[i].port, e[i].start_ns / 1e6, e[i].end_ns / 1e6, e[i].drops,
                   e[i].peak_bytes, e[i].queue_bytes, e[i].peak_threshold, e[i].threshold);
            for (uint32_t k = 0; k < e[i].n_culprits; k++)
                printf(" %" PRIu32 " +%" PRIu64, e[i].culprits[k].port,
                       e[i].culprits[k].growth_bytes);
            printf("\n");
        }
    }
    free(e);
out:
    cli_args_free(&a);
    return rc;
}
