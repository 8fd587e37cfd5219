/* qreplay's terminal, shared by the program and the runtimes it drives (the namespace testbed):
 * "qreplay COMMAND: message" errors, progress lines on stderr, and SIGINT/SIGTERM turned into a
 * flag that long steps check. */
#ifndef QREPLAY_REPORT_H
#define QREPLAY_REPORT_H

#include <signal.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses of every command. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_INTERRUPTED 130

/* Print "qreplay COMMAND: message" on stderr and return 1 (for `return cli_fail(...)`). */
int cli_fail(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* While a command builds its output folder `to` in a stage `from` (txn.h), every message of
 * cli_fail, cli_usage_error and the progress names `to` instead; cli_shown(path) rewrites a path
 * for the command's own summaries (a static buffer, one of 8 in turn). NULL ends it. */
void cli_alias_set(const char *from, const char *to);
const char *cli_shown(const char *path);
/* stdout through the same rewriting (main calls it first): a printf of any command names the
 * output folder. cli_write_shown writes text (a child's lines) to `to` rewritten. */
void cli_filter_stdout(void);
void cli_write_shown(FILE *to, const char *text);

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

/* SIGINT and SIGTERM: while cli_catch_signals is in force they set cli_signal (to the signal's
 * number) instead of killing the program; long steps check it, stop, remove what they started
 * writing and return cli_interrupted_status(): 130 for SIGINT, 143 for SIGTERM. */
extern volatile sig_atomic_t cli_signal;

/* An analysis's progress callback (void (*)(void *, const char *)) on a cli_progress. */
void cli_progress_line(void *progress, const char *line);

/* A core job's progress callback (qr_progress_fn) on a cli_progress: shows status, returns
 * non-zero (stop) once a signal came. */
int cli_progress_status(void *progress, const char *status);
void cli_catch_signals(void);

/* How long a command may take to stop by itself after SIGINT or SIGTERM before the watchdog stops
 * it (s). */
#define CLI_STOP_GRACE_S 0.6
/* Start the watchdog (main does, for every command): CLI_STOP_GRACE_S after a signal that the
 * command has not acted on, it removes every partial file (qr_partial_discard_all), calls undo (the
 * folders the command made), says "qreplay COMMAND: interrupted; nothing written" and exits 130 or
 * 143. */
void cli_start_watchdog(const char *command, void (*undo)(void));
/* A command with its own longer cleanup (the testbed's namespaces) turns the watchdog off. */
void cli_watchdog_off(void);
void cli_restore_signals(void);
/* SIGINT and SIGTERM to their default effect (death), whatever they were at start: a signal after
 * a command's output is complete ends the process, never goes unseen (a background job of a
 * script starts with SIGINT ignored, and a restored "ignore" would swallow it). */
void cli_default_signals(void);
int cli_interrupted_status(void);

#ifdef __cplusplus
}
#endif
#endif
