/* The qreplay program: shared helpers of the subcommands. Programs print and exit; the library
 * never does. */
#ifndef QREPLAY_CLI_H
#define QREPLAY_CLI_H

#include "report.h"
#include <signal.h>
#include <stddef.h>
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
int qr_cmd_import(int argc, char **argv);
int qr_cmd_clocks(int argc, char **argv);
int qr_cmd_export(int argc, char **argv);
int qr_cmd_record(int argc, char **argv);
int qr_cmd_blackholes(int argc, char **argv);
int qr_cmd_diagnose(int argc, char **argv);
int qr_cmd_paths(int argc, char **argv);
int qr_cmd_blame(int argc, char **argv);
int qr_cmd_trace(int argc, char **argv);
int qr_cmd_pingmesh(int argc, char **argv); /* C++, in program/ns3 */
int qr_cmd_scenario(int argc, char **argv);
int qr_cmd_synth(int argc, char **argv);
int qr_cmd_workload(int argc, char **argv);
int qr_cmd_runtime(int argc, char **argv); /* C++, in program/ns3 */
int qr_cmd_tiers(int argc, char **argv);   /* C++, in program/ns3 */
int qr_cmd_replay(int argc, char **argv);
int qr_cmd_metrics(int argc, char **argv);
int qr_cmd_run(int argc, char **argv);
int qr_cmd_butterfly(int argc, char **argv);
int qr_cmd_isolate(int argc, char **argv);
int qr_cmd_light(int argc, char **argv);
int qr_cmd_whatif(int argc, char **argv);
int qr_cmd_testbed(int argc, char **argv); /* C++, in program/ns3 */

struct qr_scenario;
struct qr_config;
/* Load a scenario file, apply --set overrides and validate; on error prints it and returns 1. */
int cli_load_scenario(const char *command, const char *path, const char **sets, int n_sets,
                      struct qr_scenario **out);
/* A whole text file of at most 1 MiB, lines joined by '\n' (caller frees). NULL after printing
 * the error. */
char *cli_slurp(const char *command, const char *path);
/* Whether a path exists (a file or a folder). */
int cli_exists(const char *path);
/* The recording folder of a run folder: DIR/recording when it holds recording.h5, else DIR itself
 * (a recording folder named directly). Writes it to out (size bytes). */
void cli_recording_dir(const char *dir, char *out, size_t size);

/* mkdir -p; prints and returns 1 on failure. */
int cli_make_dir(const char *command, const char *dir);
/* Take back what this process made for a command that failed: the lock files it created in
 * folders it made, then those folders, each only if empty (main calls it on a non-zero exit). */
void cli_undo_made(void);

/* After a command wrote a new recording into rec_dir: remove the results its run folder (rec_dir's
 * parent when rec_dir is ".../recording", else rec_dir) holds of another recording
 * (qr_run_folder_forget), saying how many unless quiet. Returns 0 or 1 after the error. */
int cli_forget_old_results(const char *command, const char *rec_dir, int quiet);

/* The project's data/ and analysis/ folders, found relative to the running program: an installed
 * qreplay (PREFIX/bin) finds PREFIX/share/qreplay/X, a build tree finds BUILD/share/qreplay/X (made
 * by the build) or the source tree's X beside BUILD. NULL if none exists. */
const char *cli_data_dir(void);
const char *cli_analysis_dir(void);
/* The testbed's shared files (apps.py), found like the analysis folder; NULL if not found. */
const char *cli_testbed_dir(void);

/* Draw figures with analysis/SCRIPT (Debian's python3): SCRIPT H5 -o FIGDIR [--quiet]. Returns 0,
 * or 1 after printing what failed. */
int cli_figures(const char *command, const char *script, const char *h5, const char *figdir,
                int quiet);

/* A list of file paths (what a command reads, what it writes). */
typedef struct cli_paths {
    char **v;
    size_t n, cap;
} cli_paths;
void cli_paths_add(cli_paths *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every regular file directly in folder dir (none if it does not exist). */
void cli_paths_add_dir(cli_paths *p, const char *dir);
/* The input files of a recording folder: recording.h5 and the files in truth/ and pcap/. */
void cli_paths_add_recording(cli_paths *p, const char *dir);
/* A scenario's files: the file itself and the inputs it names (traffic.flows, size_cdf). */
struct qr_scenario;
void cli_paths_add_scenario(cli_paths *p, const char *file, const struct qr_scenario *s);
void cli_paths_free(cli_paths *p);

/* Refuse to write any of outputs over one of inputs (the same file through any path or link):
 * prints the error and returns 1, else 0. Releases both lists. */
int cli_check_outputs(const char *command, cli_paths *outputs, cli_paths *inputs);

/* Take the run folder dir for this process: an advisory lock (flock) on dir/.qreplay-lock, held
 * until the process ends, so two commands writing into one folder fail fast instead of racing
 * (the last one silently winning). A folder that does not exist yet is not locked. Prints the
 * error and returns 1 when another qreplay holds it, else 0. */
int cli_lock_folder(const char *command, const char *dir);

/* A command's output folder as one transaction (txn.h): cli_txn_begin makes dir if absent, takes
 * its lock, removes what killed commands left beside it, and opens a stage (a hard-link copy of
 * dir) in t->work, where the command writes everything; messages name dir, not the stage.
 * cli_txn_commit swaps the stage in at once; cli_txn_abort (or any exit without a commit) leaves
 * dir as it was. Each prints its error and returns 1, or returns 0. */
typedef struct cli_txn {
    char dir[4096];
    char work[4096 + 32];
    struct qr_stage *stage;
} cli_txn;
int cli_txn_begin(const char *command, const char *dir, int quiet, cli_txn *t);
/* The same for a command that writes a recording into rec_dir: when rec_dir is a run folder's
 * "recording", the run folder is the transaction (work: its stage's recording folder), else
 * rec_dir itself, which must not be a run folder (holding recording/, replay/ or results.h5: a
 * recording written there would take a run's results for its own). work gets where to write. */
int cli_txn_begin_recording(const char *command, const char *rec_dir, int quiet, cli_txn *t,
                            char *work, size_t size);
int cli_txn_commit(const char *command, cli_txn *t);
void cli_txn_abort(cli_txn *t);

/* The command's output folder as the one transaction main finishes: cli_output_folder begins it
 * (cli_txn_begin) and gives the folder to write in (NULL after printing the error); a second call
 * with the same dir gives the same. cli_output_recording is cli_txn_begin_recording's. main calls
 * cli_output_finish with the command's status: 0 commits (its error gives 1), else aborts. */
const char *cli_output_folder(const char *command, const char *dir, int quiet);
const char *cli_output_recording(const char *command, const char *rec_dir, int quiet);
int cli_output_finish(const char *command, int rc);
/* An analysis's run folder: with -o FILE (outp) the folder as given, only read; without, its
 * output folder (cli_output_folder), where DIR/NAME.h5 and the figures go. NULL after an error. */
const char *cli_analysis_folder(const char *command, const char *dir, const char *outp, int quiet);

/* Refuse to replace folder dir whole when one of inputs lies inside it: prints the error and
 * returns 1, else 0. Does not release inputs. */
int cli_check_outside(const char *command, const char *dir, const cli_paths *inputs);

/* DIR/SUB's kernel records (SUB: record, or the testbed's record-refused; *.qrk in name order,
 * h2 before h10: host i the i-th) as one set on s's network; where DIR/recording exists (the
 * testbed's captures of the same run) the set is named as that recording, opened into *like
 * (else NULL), and checked against it unless unchecked. The records' paths into *paths (may be
 * NULL). Returns 0, or an error with its message in err. */
struct qr_krec_set;
struct qr_recording;
int cli_open_records(const char *dir, const char *sub, int unchecked, const struct qr_scenario *s,
                     struct qr_recording **like, struct qr_krec_set **ks, cli_paths *paths,
                     char *err);

/* The tagged replay of run folder DIR with the smallest sampling threshold that has an arrival
 * log (its name under DIR/replay into out). Returns 1 if there is one, else 0. */
int cli_pick_tagged_replay(const char *dir, char *out, size_t size);

/* The arrival log an analysis of run folder DIR takes (options --replay NAME, --arrivals FILE,
 * --no-replay; at most one): FILE, DIR/replay/NAME/arrivals.qra, the one cli_pick_tagged_replay
 * finds, or "" (none: --no-replay, or no replay yet). Returns 0, or the exit status after printing
 * the error (2: options that exclude each other, a NAME with '/'; 1: no log at that path). */
int cli_replay_arrivals(const char *command, const char *dir, const char *replay,
                        const char *arrivals, int no_replay, char *arr, size_t size);

/* An exact tagged replay of rec (every send time as recorded, native engine) for one analysis:
 * its arrival log goes to "OUT.partial-PID.qra" (path into arrivals; the caller unlinks it when
 * done), with progress on prog. Returns 0, or the exit status after printing the error
 * (interrupted: 130); the log is gone then. */
struct qr_recording;
/* The hosts' clock offsets an isolated replay of rec (in rec_dir) takes out of its times: for a
 * simulated run the simulator's true ones, read from its truth (qr_truth_clock_offsets) here, in
 * the program, where the truth's use can be seen; for an import none (*out NULL: its times are on
 * one clock already). Returns 0 (caller frees *out), or the exit status after printing the
 * error. */
int cli_clock_offsets(const char *command, const char *rec_dir, const struct qr_recording *rec,
                      int64_t **out);
int cli_exact_tagged_replay(const char *command, const struct qr_recording *rec, const char *out,
                            cli_progress *prog, char *arrivals, size_t size);

/* The inputs of an analysis of a recording that may read an arrival log (diagnose, blame, trace).
 */

/* Whether light record light_path (its recording id light_id) belongs to the recording in
 * rec_dir (when rec_dir holds one): prints the error naming both and returns 1; else 0. */
int cli_check_light(const char *command, const char *rec_dir, const char *light_path,
                    const char *light_id);

typedef struct cli_analysis_in {
    struct qr_recording *rec;
    char arrivals[4400]; /* the log it reads, "" for none */
    char tmp[4400];      /* the exact tagged replay's log run for this analysis, "" for none */
} cli_analysis_in;

/* Refuse an output over an input (the recording in rec_dir, in->arrivals, and extra when not
 * NULL or ""), open the recording into in->rec, then, when in->arrivals is "" and want_replay,
 * run an exact tagged replay for this analysis only (cli_exact_tagged_replay) and read its log.
 * Returns 0, or the exit status after printing the error. */
int cli_analysis_open(const char *command, const char *rec_dir, const char *extra, const char *out,
                      int want_replay, cli_progress *prog, cli_analysis_in *in);
/* The replay step of cli_analysis_open alone (for a command that checks more before it runs one):
 * when in->arrivals is "", an exact tagged replay whose log it then reads. Returns 0 or the exit
 * status after printing the error. */
int cli_analysis_replay(const char *command, const char *out, cli_progress *prog,
                        cli_analysis_in *in);
/* Remove the exact tagged replay's log, if one was run (in->tmp stays set: the replay ran). */
void cli_analysis_replay_done(cli_analysis_in *in);
/* What the analysis read, for its report: the log's path, "an exact tagged replay run now (not
 * kept)", or "none (--no-replay)". */
const char *cli_analysis_arrivals_text(const cli_analysis_in *in);
/* Close the recording. */
void cli_analysis_close(cli_analysis_in *in);

#ifdef __cplusplus
}
#endif
#endif
