/* qreplay import: operators' captures (tcpdump, Wireshark) into a recording. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/import.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"
#include "qreplay/truth.h"

static const cli_opt opts[] = {
    {"map", 0, CLI_VALUE, "FILE",
     "host map: CSV lines address,host[,capture] (default: each capture's host is the\n"
     "                         address in most of its TCP packets; other addresses get hosts in "
     "order)"},
    {"clock", 0, CLI_VALUE, "MODE",
     "auto (default: reconcile when two hosts were captured at both ends), reconcile, none"},
    {"network", 0, CLI_VALUE, "WHERE",
     "unknown (default: the captures come from some network; analyses measure the\n"
     "                         path from the packets) or scenario (they were taken in the\n"
     "                         scenario's network: its paths, rates and queues are theirs)"},
    {"paths", 0, CLI_VALUE, "FILE",
     "the paths the connections took, for qreplay blame (e.g. from your own\n"
     "                         traceroutes): lines 'SRC SPORT DST DPORT LINK LINK ...', '*' for a\n"
     "                         link not known; links are named as you like"},
    {"truth", 0, CLI_VALUE, "RUNDIR",
     "the captures were exported from this simulated run (qreplay export): carry its\n"
     "                         ground truth over, so qreplay metrics scores replays of the import"},
    CLI_OPT_SET,
    CLI_OPT_OUT("output folder: the recording goes to DIR/recording (default: [output] dir)"),
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "import",
    "SCENARIO CAPTURE...",
    "Turn per-host packet captures (tcpdump or Wireshark: pcap or pcapng; Ethernet with VLAN\n"
    "tags, raw IP, Linux cooked SLL/SLL2, loopback, PPP; TCP over IPv4 and IPv6) into a recording\n"
    "in DIR/recording that qreplay replay, metrics and isolate read like the runtime's.\n\n"
    "SCENARIO gives the network to replay in ([topology], [links], [buffer]); every address\n"
    "in the captures becomes one of its hosts. Each TCP connection becomes a flow. A packet a\n"
    "host sent above the MTU (TSO/GSO) is split as its NIC sends it, at the link rate; IP IDs\n"
    "are renumbered per direction as the runtime numbers them. Drops are known from both\n"
    "captures of a connection (a segment that left one and never reached the other), else\n"
    "from retransmissions (only the sender captured) or IP ID gaps (only the receiver). A host\n"
    "without a capture is reconstructed from what its peers received. Host clocks are\n"
    "reconciled from the one-way delays measured both ways (--clock).\n\n"
    "Nothing is skipped silently: the summary counts every frame left out, by reason, and\n"
    "recording.h5's /import group holds the same counts, each capture's size and SHA-256.\n",
    opts,
    sizeof opts / sizeof opts[0],
    2,
    -1,
    "expected a SCENARIO and at least one CAPTURE",
    "examples:\n"
    "  qreplay import scenarios/star-3.ini a.pcap b.pcap c.pcapng -o runs/mine\n"
    "  qreplay import scenarios/fattree-k4-websearch.ini --map hosts.csv caps/*.pcap -o runs/k4\n"
    "  qreplay replay runs/mine --th 5us --mode tagged\n"};

static void print_summary(const qr_import_report *r, const char *dir)
{
    printf("== import -> %s\n", dir);
    for (size_t c = 0; c < r->n_captures; c++) {
        const qr_import_capture_report *x = &r->captures[c];
        printf("capture            %s (%s, host %u = %s)\n", x->path, x->link, x->host, x->owner);
        /* a router's or mirror's capture: the other hosts its connections' timing puts it at */
        uint32_t in_view = 0;
        for (uint32_t h = 0; h < r->n_hosts; h++)
            if (r->hosts[h].capture == (int32_t)c && r->hosts[h].vantage == QR_VANTAGE_TIMING) {
                if (in_view++ == 0)
                    printf("  also in view     a router's or mirror's capture: by their "
                           "connections' timing, host");
                if (in_view <= 8)
                    printf(" %u (%s)", h, r->hosts[h].addr);
            }
        if (in_view > 8)
            printf(" and %u more", in_view - 8);
        if (in_view)
            printf("\n");
        printf("  frames           %" PRIu64 ": %" PRIu64 " TCP, %" PRIu64 " sent and %" PRIu64
               " received by its host%s\n",
               x->stats.frames, x->stats.kept, x->sent, x->received, in_view ? "s" : "");
        for (int k = 0; k < QR_SKIP_COUNT; k++)
            if (x->stats.skipped[k])
                printf("  left out         %" PRIu64 " %s\n", x->stats.skipped[k], qr_skip_name(k));
        for (int k = 0; k < QR_IMPORT_LEFT_COUNT; k++)
            if (x->left[k])
                printf("  left out         %" PRIu64 " TCP: %s\n", x->left[k],
                       qr_import_left_name(k));
        if (x->clamped)
            printf("  timestamps back  %" PRIu64 " sent packets (sent after the previous one)\n",
                   x->clamped);
        if (x->warning[0])
            printf("  warning          %s\n", x->warning);
    }
    uint32_t captured = 0, rebuilt = 0;
    uint64_t rebuilt_packets = 0;
    for (uint32_t h = 0; h < r->n_hosts; h++) {
        captured += r->hosts[h].captured;
        rebuilt += r->hosts[h].reconstructed;
        rebuilt_packets += r->hosts[h].reconstructed_packets;
    }
    printf("hosts              %u captured, %u reconstructed from their peers (%" PRIu64
           " packets), of %u\n",
           captured, rebuilt, rebuilt_packets, r->n_hosts);
    for (uint32_t h = 0; h < r->n_hosts; h++)
        if (r->hosts[h].reconstructed)
            printf("  reconstructed    host %u (%s): %" PRIu64 " packets\n", h, r->hosts[h].addr,
                   r->hosts[h].reconstructed_packets);
    /* how each sender numbers its IPv4 IDs: what they can say about order and loss */
    uint32_t kinds[QR_IPID_KINDS] = {0}, senders = 0;
    for (uint32_t h = 0; h < r->n_hosts; h++)
        if (r->hosts[h].addr[0] && r->hosts[h].ipid_kind < QR_IPID_KINDS) {
            kinds[r->hosts[h].ipid_kind]++;
            senders++;
        }
    if (senders) {
        printf("ip ids            ");
        for (int k = 1, first = 1; k <= QR_IPID_KINDS; k++) {
            int kk = k % QR_IPID_KINDS; /* unknown last */
            if (kinds[kk])
                printf("%s %u %s", first ? "" : ",", kinds[kk], qr_ipid_kind_name(kk)), first = 0;
        }
        printf(" (hosts)\n");
        for (uint32_t h = 0, shown = 0; h < r->n_hosts && senders <= 8; h++) {
            const qr_import_host_report *x = &r->hosts[h];
            if (!x->addr[0] || !x->ipid.steps || shown++ == 8)
                continue; /* no step: nothing to tell (the aggregate says "unknown") */
            printf("  ip ids           host %u (%s): %s, %" PRIu64 " of %" PRIu64 " steps rising\n",
                   h, x->addr, qr_ipid_kind_name(x->ipid_kind), x->ipid.one + x->ipid.up,
                   x->ipid.steps);
        }
    }
    printf("connections        %zu\n", r->connections);
    if (r->paths)
        printf("paths              %" PRIu64 " lines, %" PRIu64
               " naming no captured connection (left out)\n",
               r->paths, r->paths_unmatched);
    printf("packets            %" PRIu64 " (%" PRIu64 " captured packets above the MTU split)\n",
           r->packets, r->tso_split);
    for (int e = 0; e < QR_EVIDENCE_COUNT; e++)
        if (r->directions[e])
            printf("drops (%-7s)    %" PRIu64 " in %" PRIu64 " directions\n",
                   qr_import_evidence_name(e), r->drops[e], r->directions[e]);
    printf("receive times      %" PRIu64 " packets", r->received);
    if (r->unmatched_received)
        printf(", %" PRIu64 " received segments matched no sent one", r->unmatched_received);
    printf("\n");
    if (r->unknown_tail)
        printf("fate unknown       %" PRIu64 " sent outside the receiver's capture\n",
               r->unknown_tail);
    if (r->overtaken)
        printf("reordered          %" PRIu64 " segments arrived after one sent later (not drops)\n",
               r->overtaken);
    if (r->hole_reordered || r->hole_not_captured || r->hole_unknown)
        printf("sequence holes     receiver only: %" PRIu64
               " filled by a resend (drops above), %" PRIu64
               " by a late original (reordered), %" PRIu64
               " acknowledged but not captured, %" PRIu64 " of unknown fate\n",
               r->drops[QR_EVIDENCE_IPID] + r->drops[QR_EVIDENCE_NONE], r->hole_reordered,
               r->hole_not_captured, r->hole_unknown);
    if (r->clock_pairs) {
        printf("clock              %zu pairs of hosts; offsets %s\n", r->clock_pairs,
               r->clock_applied ? "applied" : "estimated, not applied (--clock none)");
        for (uint32_t h = 0; h < r->n_hosts; h++) {
            const qr_clock_estimate *e = &r->hosts[h].clock;
            if (e->pairs)
                printf("  host %-4u        %+" PRId64 " ns against host %u (residual %" PRId64
                       " ns, %u pairs)\n",
                       h, e->offset_ns, e->reference, e->residual_ns, e->pairs);
        }
    } else {
        printf("clock              no pair of hosts captured at both ends: each capture's own "
               "clock\n");
    }
    printf("output             %s/recording/recording.h5 (+ pcap/)\n", dir);
}

/* --clock: auto (or none given), reconcile or none. Returns 0, or -1 for another word. */
static int import_clock(const char *clock, qr_import_clock *out)
{
    if (!clock || !strcmp(clock, "auto"))
        *out = QR_IMPORT_CLOCK_AUTO;
    else if (!strcmp(clock, "reconcile"))
        *out = QR_IMPORT_CLOCK_RECONCILE;
    else if (!strcmp(clock, "none"))
        *out = QR_IMPORT_CLOCK_NONE;
    else
        return -1;
    return 0;
}

/* What the import reads (the scenario, the captures, the map, --truth's recording truth_rec)
 * outside the recording folder rec it replaces whole, every output writable, and the path file
 * readable before any capture is read. Returns 0, or 1 after saying what is wrong. */
static int import_check_inputs(const cli_args *a, const qr_scenario *s, const char *map,
                               const char *truth_rec, const char *rec, const char *paths)
{
    cli_paths ins = {0}, outs = {0};
    cli_paths_add_scenario(&ins, a->pos[0], s);
    for (int i = 1; i < a->n_pos; i++)
        cli_paths_add(&ins, "%s", a->pos[i]);
    if (map)
        cli_paths_add(&ins, "%s", map);
    if (truth_rec)
        cli_paths_add_recording(&ins, truth_rec);
    cli_paths_add_recording(&outs, rec);
    /* the recording folder is replaced whole: nothing given may live in it */
    if (cli_check_outside("import", rec, &ins)) {
        cli_paths_free(&ins);
        cli_paths_free(&outs);
        return 1;
    }
    if (cli_check_outputs("import", &outs, &ins))
        return 1;
    if (paths) { /* a bad path file is said before the captures are read */
        char err[QR_ERRBUF_SIZE];
        qr_import_path *pl = NULL;
        size_t np = 0;
        if (qr_import_paths_read(paths, &pl, &np, err))
            return cli_fail("import", "--paths: %s", err);
        free(pl);
    }
    return 0;
}

/* --truth: the simulated run's truth carried onto the import's directions. Returns 0, or the
 * exit status after the error. */
static int import_carry_truth(const char *truth_rec, const char *rec_work, const char *rec,
                              int quiet)
{
    char err[QR_ERRBUF_SIZE];
    qr_truth_carry_stats ts;
    if (qr_truth_carry(truth_rec, rec_work, &ts, err))
        return cli_fail("import", "--truth: %s; nothing written", err);
    if (!quiet)
        printf("truth              %s/truth from %s: %" PRIu64 " arrivals, %" PRIu64
               " drops, %" PRIu64 " flow directions (left out: %" PRIu64 " arrivals, %" PRIu64
               " drops of directions not imported)\n",
               rec, truth_rec, ts.arrivals, ts.drops, ts.dirs_mapped, ts.arrivals_left,
               ts.drops_left);
    return 0;
}

int qr_cmd_import(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    int n_sets;
    const char **sets = cli_list(&a, "set", &n_sets);
    const char *outdir = cli_value(&a, "out"), *map = cli_value(&a, "map");
    const char *clock = cli_value(&a, "clock"), *truth = cli_value(&a, "truth");
    const char *network = cli_value(&a, "network");
    const char *paths = cli_value(&a, "paths");
    int quiet = cli_count(&a, "quiet") > 0;
    qr_import_cfg cfg = {0};
    if (network && strcmp(network, "unknown") && strcmp(network, "scenario")) {
        rc = cli_usage_error("import", "--network: '%s' is not unknown or scenario", network);
        cli_args_free(&a);
        return rc;
    }
    /* an export of a simulated run crossed the scenario's network */
    cfg.network_known = (network && !strcmp(network, "scenario")) || truth;
    cfg.paths = paths;
    if (import_clock(clock, &cfg.clock)) {
        rc = cli_usage_error("import", "--clock: '%s' is not auto, reconcile or none", clock);
        cli_args_free(&a);
        return rc;
    }
    qr_scenario *s = NULL;
    if (cli_load_scenario("import", a.pos[0], sets, n_sets, &s)) {
        cli_args_free(&a);
        return 1;
    }
    const qr_config *conf = qr_scenario_config(s);
    char err[QR_ERRBUF_SIZE];
    char dir[QR_PATH_MAX], rec[QR_PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", outdir ? outdir : conf->output.dir);
    snprintf(rec, sizeof rec, "%s/recording", dir);
    char truth_rec[QR_PATH_MAX + 16] = "";
    if (truth) {
        char probe[QR_PATH_MAX + 64];
        cli_recording_dir(truth, truth_rec, sizeof truth_rec);
        snprintf(probe, sizeof probe, "%s/truth/arrivals.qra", truth_rec);
        if (access(probe, R_OK)) {
            rc = cli_fail("import",
                          "--truth %s: no ground truth with arrivals (%s): a qreplay runtime run "
                          "folder is needed",
                          truth, probe);
            cli_args_free(&a);
            qr_scenario_destroy(s);
            return rc;
        }
    }
    qr_host_map_entry *entries = NULL;
    size_t n_entries = 0;
    qr_import_report *rep = NULL;
    if (map &&
        (qr_host_map_read(map, qr_config_hosts(conf), &entries, &n_entries, err) ||
         qr_host_map_check_captures(entries, n_entries, map, (const char *const *)(a.pos + 1),
                                    (size_t)a.n_pos - 1, err))) {
        rc = cli_fail("import", "%s", err);
        goto out;
    }
    if (import_check_inputs(&a, s, map, truth ? truth_rec : NULL, rec, paths)) {
        rc = 1;
        goto out;
    }
    /* the run folder is the transaction: the new recording and the removal of what was made
     * from the old one are swapped in at once (main commits) */
    const char *work = cli_output_folder("import", dir, quiet);
    if (!work) {
        rc = 1;
        goto out;
    }
    char rec_work[QR_PATH_MAX + 64];
    snprintf(rec_work, sizeof rec_work, "%s/recording", work);
    cfg.captures = (const char *const *)(a.pos + 1);
    cfg.n_captures = (size_t)(a.n_pos - 1);
    cfg.map = entries;
    cfg.n_map = n_entries;
    cli_progress p;
    cli_progress_init(&p, quiet);
    cfg.progress = cli_progress_status;
    cfg.progress_ctx = &p;
    cli_catch_signals();
    rc = qr_import_run(&cfg, s, rec_work, &rep, err);
    cli_progress_done(&p);
    cli_restore_signals();
    if (rc == QR_ECANCELED || cli_signal) {
        fprintf(stderr, "qreplay import: interrupted; nothing written\n");
        rc = cli_interrupted_status();
        goto out;
    }
    if (rc) {
        rc = cli_fail("import", "%s", err);
        goto out;
    }
    for (size_t c = 0; c < rep->n_captures; c++)
        if (rep->captures[c].warning[0])
            fprintf(stderr, "qreplay import: warning: %s\n", rep->captures[c].warning);
    if (!quiet)
        print_summary(rep, dir);
    rc = cli_forget_old_results("import", rec_work, quiet);
    if (rc)
        goto out;
    if (truth)
        rc = import_carry_truth(truth_rec, rec_work, rec, quiet);
out:
    qr_import_report_free(rep);
    qr_host_map_free(entries);
    qr_scenario_destroy(s);
    cli_args_free(&a);
    return rc;
}
