/* qreplay: record, sample and replay data-center traffic, and measure replay fidelity. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "qreplay/version.h"
#include "testbed_net.h"

static const qr_cli_command commands[] = {
    {"run", "the whole study on a scenario: runtime, replays, metrics, figures", qr_cmd_run},
    {"sample", "sample send times of a trace (pcap or CSV) and infer them back", qr_cmd_sample},
    {"scenario", "validate a scenario file and print it fully resolved", qr_cmd_scenario},
    {"workload", "generate a scenario's flow schedule and clock offsets", qr_cmd_workload},
    {"synth", "write a synthetic send trace with bursts and rate changes", qr_cmd_synth},
    {"runtime", "run a scenario's closed-loop ns-3 simulation and record it", qr_cmd_runtime},
    {"import", "turn per-host tcpdump/Wireshark captures into a recording", qr_cmd_import},
    {"clocks", "estimate the hosts' clock offsets from a recording (and their error)",
     qr_cmd_clocks},
    {"export", "write a recording out as the captures its hosts would have taken", qr_cmd_export},
    {"replay", "replay a recording open loop (one mode, one sampling threshold)", qr_cmd_replay},
    {"metrics", "compare a run folder's replays with its runtime: results.h5", qr_cmd_metrics},
    {"blackholes", "shared-buffer blackhole episodes in a runtime's or a replay's arrivals",
     qr_cmd_blackholes},
    {"diagnose", "why each slow flow was slow: time breakdown and root cause with evidence",
     qr_cmd_diagnose},
    {"blame", "007: the links behind detected losses, by votes; scored against planted faults",
     qr_cmd_blame},
    {"paths", "WAP5: causal paths through a multi-tier application, from its messages alone",
     qr_cmd_paths},
    {"tiers", "a multi-tier service over ns-3's TCP: its messages and their truth, for paths",
     qr_cmd_tiers},
    {"trace", "Everflow: per-hop traces of matched packets, drop debugger, latency profiler",
     qr_cmd_trace},
    {"pingmesh", "Pingmesh probe matrices of a run and the places their losses point at",
     qr_cmd_pingmesh},
    {"whatif", "what-if grid of switch configurations replayed from a recording (--validate)",
     qr_cmd_whatif},
    {"butterfly", "closed-loop replays with timing jitter against the runtime", qr_cmd_butterfly},
    {"isolate", "replay each TCP connection alone through a packet corrector", qr_cmd_isolate},
    {"light", "DETER's light record of a recording (replay it: replay --from light)", qr_cmd_light},
    {"record", "DETER's record of a real Linux host's TCP, from the kernel (eBPF)", qr_cmd_record},
    {"testbed", "run a scenario on real Linux TCP in namespaces and score the replay",
     qr_cmd_testbed},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: qreplay COMMAND [OPTIONS] [ARGS]\n\n"
                 "Replay recorded data-center traffic through a simulated network and measure "
                 "how faithfully\nthe switch queues come back.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n'qreplay COMMAND --help' describes a command. --version prints the version.\n\n"
            "Every command: -o/--out names its output (a folder DIR, or a file where its help\n"
            "says FILE), --quiet prints only errors,\n"
            "--set section.key=value overrides a scenario key (repeatable); summaries go to\n"
            "stdout, progress and errors to stderr.\n\n"
            "Exit status: 0 on success, 1 on an error (one line on stderr naming the file,\n"
            "line, packet or key), 2 on a usage error, 130 when interrupted (SIGINT) and 143\n"
            "when terminated (SIGTERM). A command builds its whole output beside the old one and\n"
            "swaps it in only when complete: whatever stops it, the old output is untouched.\n");
}

int main(int argc, char **argv)
{
    cli_filter_stdout(); /* summaries name a command's output folder, never its stage */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("qreplay %s\n", qr_version());
        return 0;
    }
    if (strcmp(argv[1], "testbed-agent") == 0) /* run by qreplay testbed in a host namespace */
        return qr_cmd_testbed_agent(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            /* SIGINT and SIGTERM are a flag from the start (never death in the middle of a write),
             * and the watchdog bounds how long any command takes to stop */
            cli_catch_signals();
            cli_start_watchdog(commands[i].name, cli_undo_made);
            int rc = commands[i].run(argc - 1, argv + 1);
            /* the output folder is swapped in whole, or left as it was */
            rc = cli_output_finish(commands[i].name, rc);
            /* from here a signal has its default effect (its output is complete: dying is
             * honest), so none can arrive unseen between this check and the exit: the default,
             * not what it was at start (a script's background job starts ignoring SIGINT) */
            cli_default_signals();
            if (rc == 0 && cli_signal) {
                fprintf(stderr, "qreplay %s: interrupted after its output was complete\n",
                        commands[i].name);
                rc = cli_interrupted_status();
            }
            if (rc != 0)
                cli_undo_made(); /* a failed command leaves no folder it made empty */
            return rc;
        }
    fprintf(stderr, "qreplay: unknown command '%s' (try 'qreplay --help')\n", argv[1]);
    return 2;
}
