/* The qreplay program: shared helpers of the subcommands. Programs print and exit; the library
 * never does. */
#ifndef QREPLAY_CLI_H
#define QREPLAY_CLI_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A subcommand: run(argc, argv) with argv[0] = the subcommand's name; returns the exit status. */
typedef struct qr_cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} qr_cli_command;

int qr_cmd_sample(int argc, char **argv);
int qr_cmd_scenario(int argc, char **argv);
int qr_cmd_synth(int argc, char **argv);
int qr_cmd_workload(int argc, char **argv);
int qr_cmd_runtime(int argc, char **argv); /* C++, in ns3-module/program */
int qr_cmd_replay(int argc, char **argv);
int qr_cmd_metrics(int argc, char **argv);
int qr_cmd_run(int argc, char **argv);
int qr_cmd_butterfly(int argc, char **argv);
int qr_cmd_isolate(int argc, char **argv);

struct qr_scenario;
struct qr_config;
/* Load a scenario file, apply --set overrides and validate; on error prints it and returns 1. */
int cli_load_scenario(const char *command, const char *path, const char **sets, int n_sets,
                      struct qr_scenario **out);
/* mkdir -p; prints and returns 1 on failure. */
int cli_make_dir(const char *command, const char *dir);

/* The project's data/ and analysis/ folders, found relative to the running program: an installed
 * qreplay (PREFIX/bin) finds PREFIX/share/qreplay/X, a build tree finds BUILD/share/qreplay/X (made
 * by the build) or the source tree's X beside BUILD. NULL if none exists. */
const char *cli_data_dir(void);
const char *cli_analysis_dir(void);

/* Draw figures with analysis/SCRIPT (Debian's python3): SCRIPT H5 -o FIGDIR [--quiet]. Returns 0,
 * or 1 after printing what failed. */
int cli_figures(const char *command, const char *script, const char *h5, const char *figdir,
                int quiet);

/* Exit statuses of every command. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_INTERRUPTED 130

/* Print "qreplay COMMAND: message" on stderr and return 1 (for `return cli_fail(...)`). */
int cli_fail(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Usage error: message plus "try 'qreplay COMMAND --help'"; returns 2. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Progress on stderr: on a terminal one updating line, otherwise a line at most every 2 s.
 * Silent when quiet. cli_progress_done ends the line. */
typedef struct cli_progress {
    int quiet;
    int tty;
    double start;
    double last;
    int printed;
} cli_progress;

void cli_progress_init(cli_progress *p, int quiet);
void cli_progress_update(cli_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cli_progress_done(cli_progress *p);
double cli_now(void);

#ifdef __cplusplus
}
#endif
#endif
