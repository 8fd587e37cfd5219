#define _GNU_SOURCE /* realpath, strverscmp */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/krec_recording.h"
#include "qreplay/queuelog.h"
#include "qreplay/random.h"
#include "qreplay/recording.h"
#include "qreplay/replay.h"
#include "qreplay/results.h"
#include "qreplay/scenario.h"
#include "qreplay/textio.h"
#include "qreplay/truth.h"
#include "qreplay/txn.h"

int cli_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void cli_recording_dir(const char *dir, char *out, size_t size)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/recording/recording.h5", dir);
    if (cli_exists(probe))
        snprintf(out, size, "%s/recording", dir);
    else
        snprintf(out, size, "%s", dir);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* X relative to the program: PREFIX/share/qreplay/X, BUILD/share/qreplay/X, or BUILD/../X. */
static const char *find_dir(const char *x, char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    const char *forms[] = {"%s/../share/qreplay/%s", "%s/share/qreplay/%s", "%s/../%s"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, forms[i], exe, x);
        if (is_dir(cand) && realpath(cand, buf) && strlen(buf) < size)
            return buf;
    }
    return NULL;
}

const char *cli_data_dir(void)
{
    static char buf[PATH_MAX];
    return find_dir("data", buf, sizeof buf);
}

const char *cli_analysis_dir(void)
{
    static char buf[PATH_MAX];
    return find_dir("analysis", buf, sizeof buf);
}

const char *cli_testbed_dir(void)
{
    static char buf[PATH_MAX];
    return find_dir("testbed", buf, sizeof buf);
}

int cli_figures(const char *command, const char *script, const char *h5, const char *figdir,
                int quiet)
{
    const char *dir = cli_analysis_dir();
    if (!dir)
        return cli_fail(command,
                        "cannot find the analysis folder next to the program; %s is "
                        "complete (draw later with analysis/%s)",
                        h5, script);
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, script);
    /* its output through this process: the lines name the output folder, not its stage */
    int po[2], pe[2];
    if (pipe(po) != 0)
        return cli_fail(command, "cannot start %s: %s", py, strerror(errno));
    if (pipe(pe) != 0) {
        close(po[0]);
        close(po[1]);
        return cli_fail(command, "cannot start %s: %s", py, strerror(errno));
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return cli_fail(command, "cannot start %s", py);
    }
    if (pid == 0) {
        /* Ctrl-C reaches the whole process group: the drawing stops when this process says so
         * (SIGTERM below), not with a Python traceback of its own */
        signal(SIGINT, SIG_IGN);
        dup2(po[1], STDOUT_FILENO);
        dup2(pe[1], STDERR_FILENO);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        if (quiet)
            execlp(py, py, path, h5, "-o", figdir, "--quiet", (char *)NULL);
        else
            execlp(py, py, path, h5, "-o", figdir, (char *)NULL);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    struct {
        int fd;
        FILE *to;
        char buf[8192];
        size_t n;
    } ch[2] = {{po[0], stdout, "", 0}, {pe[0], stderr, "", 0}};
    int st = 0, open_fds = 2, done = 0, stopped = 0;
    while (open_fds > 0 || !done) {
        struct pollfd pf[2];
        int np = 0;
        for (int i = 0; i < 2; i++)
            if (ch[i].fd >= 0)
                pf[np++] = (struct pollfd){.fd = ch[i].fd, .events = POLLIN};
        if (np)
            poll(pf, (nfds_t)np, 20);
        for (int i = 0; i < 2; i++) {
            if (ch[i].fd < 0)
                continue;
            int ready = 0;
            for (int k = 0; k < np; k++)
                ready |= pf[k].fd == ch[i].fd && pf[k].revents;
            if (!ready)
                continue;
            ssize_t r = read(ch[i].fd, ch[i].buf + ch[i].n, sizeof ch[i].buf - 1 - ch[i].n);
            if (r <= 0) {
                if (ch[i].n) {
                    ch[i].buf[ch[i].n] = '\0';
                    cli_write_shown(ch[i].to, ch[i].buf);
                    ch[i].n = 0;
                }
                close(ch[i].fd);
                ch[i].fd = -1;
                open_fds--;
                continue;
            }
            ch[i].n += (size_t)r;
            ch[i].buf[ch[i].n] = '\0';
            char *nl;
            while ((nl = strchr(ch[i].buf, '\n')) || ch[i].n == sizeof ch[i].buf - 1) {
                size_t len = nl ? (size_t)(nl - ch[i].buf) + 1 : ch[i].n;
                char line[sizeof ch[i].buf];
                memcpy(line, ch[i].buf, len);
                line[len] = '\0';
                cli_write_shown(ch[i].to, line);
                memmove(ch[i].buf, ch[i].buf + len, ch[i].n - len + 1);
                ch[i].n -= len;
            }
        }
        if (!done) {
            pid_t w = waitpid(pid, &st, WNOHANG);
            if (w == pid || (w < 0 && errno != EINTR))
                done = 1;
        }
        if (!done && cli_signal && !stopped) {
            /* stopped: the drawing ends before this command does, never writing after it */
            kill(pid, SIGTERM);
            stopped = 1;
        }
        if (!np && !done) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    fflush(stdout);
    if (stopped) {
        /* the results were complete before the drawing began: say which, and what is missing */
        fprintf(stderr,
                "qreplay %s: interrupted while drawing the figures; %s is complete, the figures "
                "in %s are not (draw them with analysis/%s)\n",
                command, cli_shown(h5), cli_shown(figdir), script);
        return cli_interrupted_status();
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return cli_fail(command,
                        "drawing the figures failed (%s %s %s -o %s); nothing written "
                        "(--no-figures writes the results without them)",
                        py, path, cli_shown(h5), cli_shown(figdir));
    return 0;
}

void cli_paths_add(cli_paths *p, const char *fmt, ...)
{
    char buf[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        char **v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return;
        p->v = v;
        p->cap = cap;
    }
    if ((p->v[p->n] = strdup(buf)))
        p->n++;
}

void cli_paths_add_dir(cli_paths *p, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            cli_paths_add(p, "%s/%s", dir, e->d_name);
    closedir(d);
}

void cli_paths_add_recording(cli_paths *p, const char *dir)
{
    cli_paths_add(p, "%s/recording.h5", dir);
    char sub[PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s/truth", dir);
    cli_paths_add_dir(p, sub);
    snprintf(sub, sizeof sub, "%s/pcap", dir);
    cli_paths_add_dir(p, sub);
}

void cli_paths_add_scenario(cli_paths *p, const char *file, const qr_scenario *s)
{
    if (file)
        cli_paths_add(p, "%s", file);
    const qr_config *c = qr_scenario_config(s);
    if (c->traffic.flows[0])
        cli_paths_add(p, "%s", c->traffic.flows);
    if (c->traffic.size_cdf[0])
        cli_paths_add(p, "%s", c->traffic.size_cdf);
}

void cli_paths_free(cli_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof *p);
}

int cli_check_outputs(const char *command, cli_paths *outputs, cli_paths *inputs)
{
    char err[QR_ERRBUF_SIZE];
    int bad = 0;
    for (size_t i = 0; i < outputs->n && !bad; i++) {
        struct stat st;
        int kind = stat(outputs->v[i], &st) == 0 && S_ISDIR(st.st_mode) ? QR_OUT_DIR : QR_OUT_FILE;
        if (qr_output_check(outputs->v[i], kind, err) ||
            qr_check_output(outputs->v[i], (const char *const *)inputs->v, inputs->n, err))
            bad = cli_fail(command, "%s", err);
    }
    cli_paths_free(outputs);
    cli_paths_free(inputs);
    return bad;
}

/* The folders this process made (cli_make_dir) and the lock files it created, taken back by
 * cli_undo_made when the command fails: a failed command leaves no empty folder. */
static struct {
    char dir[PATH_MAX], created[PATH_MAX];
} made[8];
static int n_made;
static char made_locks[8][PATH_MAX + 32];
static int n_made_locks;

int cli_make_dir(const char *command, const char *dir)
{
    char err[QR_ERRBUF_SIZE], created[PATH_MAX];
    if (qr_make_dirs_noted(dir, created, sizeof created, err))
        return cli_fail(command, "%s", err);
    if (created[0] && n_made < (int)(sizeof made / sizeof made[0]) && strlen(dir) < PATH_MAX) {
        snprintf(made[n_made].dir, PATH_MAX, "%s", dir);
        snprintf(made[n_made].created, PATH_MAX, "%s", created);
        n_made++;
    }
    return 0;
}

void cli_undo_made(void)
{
    for (int i = 0; i < n_made_locks; i++) {
        /* only a lock in a folder this process made: another folder's lock file stays */
        for (int k = 0; k < n_made; k++)
            if (!strncmp(made_locks[i], made[k].created, strlen(made[k].created)))
                unlink(made_locks[i]);
    }
    for (int i = n_made - 1; i >= 0; i--)
        qr_unmake_dirs(made[i].dir, made[i].created);
    n_made = n_made_locks = 0;
}

int cli_lock_folder(const char *command, const char *dir)
{
    char err[QR_ERRBUF_SIZE], path[PATH_MAX + 32];
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(path, sizeof path, "%s/.qreplay-lock", dir);
    int existed = access(path, F_OK) == 0, fd;
    if (qr_folder_lock(dir, &fd, err))
        return cli_fail(command, "%s", err);
    if (!existed && n_made_locks < (int)(sizeof made_locks / sizeof made_locks[0]))
        snprintf(made_locks[n_made_locks++], sizeof made_locks[0], "%s", path);
    return 0; /* fd stays open: the lock is the process's until it ends */
}

int cli_txn_begin(const char *command, const char *dir, int quiet, cli_txn *t)
{
    char err[QR_ERRBUF_SIZE];
    memset(t, 0, sizeof *t);
    if (strlen(dir) >= sizeof t->dir)
        return cli_fail(command, "%s: path too long", dir);
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    if (qr_output_check(dir, QR_OUT_DIR, err))
        return cli_fail(command, "%s", err);
    /* a folder that exists is locked; a new one is not made before its commit (whatever stops
     * this command, it is not there): its stage is locked instead, and the commit never
     * replaces a folder another command made meanwhile */
    int exists = cli_exists(dir);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    while (slash && slash > parent && slash[1] == '\0') { /* trailing slashes */
        *slash = '\0';
        slash = strrchr(parent, '/');
    }
    if (!exists && slash && slash > parent) {
        *slash = '\0';
        if (cli_make_dir(command, parent))
            return 1;
    }
    if (exists && cli_lock_folder(command, dir))
        return 1;
    if (qr_stage_begin(&t->stage, dir, err))
        return cli_fail(command, "%s", err);
    snprintf(t->work, sizeof t->work, "%s", qr_stage_path(t->stage));
    int fd;
    if (!exists && qr_folder_lock(t->work, &fd, err)) {
        qr_stage_abort(t->stage);
        t->stage = NULL;
        return cli_fail(command, "%s", err);
    }
    const char *first;
    size_t n = qr_stage_leftovers(t->stage, &first);
    if (n && !quiet)
        fprintf(stderr, "qreplay %s: %zu file%s left by an interrupted command removed (%s%s)\n",
                command, n, n == 1 ? "" : "s", first, n > 1 ? ", ..." : "");
    cli_alias_set(t->work, t->dir);
    return 0;
}

/* The run folder of recording folder rec_dir into run (size bytes): its parent when rec_dir is a
 * run folder's "recording" (returns 1), else rec_dir itself, trailing slashes off (returns 0). */
static int run_of_recording(const char *rec_dir, char *run, size_t size)
{
    snprintf(run, size, "%s", rec_dir);
    size_t n = strlen(run);
    while (n > 1 && run[n - 1] == '/')
        run[--n] = '\0';
    char *slash = strrchr(run, '/');
    if (strcmp(slash ? slash + 1 : run, "recording") != 0)
        return 0;
    if (!slash)
        snprintf(run, size, ".");
    else if (slash == run)
        run[1] = '\0';
    else
        *slash = '\0';
    return 1;
}

int cli_txn_begin_recording(const char *command, const char *rec_dir, int quiet, cli_txn *t,
                            char *work, size_t size)
{
    memset(t, 0, sizeof *t);
    char run[PATH_MAX];
    if (run_of_recording(rec_dir, run, sizeof run)) {
        /* a run folder's recording: the run folder is the transaction, so that what was made
         * from the old recording goes in the same swap */
        if (cli_txn_begin(command, run, quiet, t))
            return 1;
        snprintf(work, size, "%s/recording", t->work);
        return 0;
    }
    static const char *const marks[] = {"recording", "replay", "results.h5"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", run, marks[i]);
        if (cli_exists(p))
            return cli_fail(command,
                            "%s is a run folder (it holds %s): a recording goes into its "
                            "recording folder (-o %s/recording); nothing written",
                            rec_dir, marks[i], run);
    }
    if (cli_txn_begin(command, run, quiet, t))
        return 1;
    snprintf(work, size, "%s", t->work);
    return 0;
}

int cli_txn_commit(const char *command, cli_txn *t)
{
    char err[QR_ERRBUF_SIZE];
    if (!t->stage)
        return 0;
    int rc = qr_stage_commit(t->stage, err);
    t->stage = NULL;
    cli_alias_set(NULL, NULL);
    return rc ? cli_fail(command, "%s", err) : 0;
}

void cli_txn_abort(cli_txn *t)
{
    if (t->stage)
        qr_stage_abort(t->stage);
    t->stage = NULL;
    cli_alias_set(NULL, NULL);
}

/* The command's one output folder (cli_output_folder), finished by main. */
static cli_txn output;
static char output_work[sizeof output.work + 16];

const char *cli_output_folder(const char *command, const char *dir, int quiet)
{
    if (output.stage)
        return strcmp(output.dir, dir) ? (cli_fail(command, "two output folders"), NULL)
                                       : output.work;
    return cli_txn_begin(command, dir, quiet, &output) ? NULL : output.work;
}

const char *cli_output_recording(const char *command, const char *rec_dir, int quiet)
{
    return cli_txn_begin_recording(command, rec_dir, quiet, &output, output_work,
                                   sizeof output_work)
               ? NULL
               : output_work;
}

const char *cli_analysis_folder(const char *command, const char *dir, const char *outp, int quiet)
{
    return outp ? dir : cli_output_folder(command, dir, quiet);
}

int cli_output_finish(const char *command, int rc)
{
    if (!output.stage)
        return rc;
    if (rc != 0) {
        cli_txn_abort(&output);
        return rc;
    }
    return cli_txn_commit(command, &output);
}

int cli_check_outside(const char *command, const char *dir, const cli_paths *inputs)
{
    char err[QR_ERRBUF_SIZE];
    if (qr_check_outside(dir, (const char *const *)inputs->v, inputs->n, err))
        return cli_fail(command, "%s", err);
    return 0;
}

int cli_pick_tagged_replay(const char *dir, char *out, size_t size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/replay", dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    double best = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        double th;
        char tail;
        if (sscanf(e->d_name, "tagged_th_%lf%c", &th, &tail) != 1)
            continue;
        snprintf(path, sizeof path, "%s/replay/%s/arrivals.qra", dir, e->d_name);
        if (!cli_exists(path))
            continue;
        if (best < 0 || th < best) {
            best = th;
            snprintf(out, size, "%s", e->d_name);
        }
    }
    closedir(d);
    return best >= 0;
}

static void exact_replay_progress(void *ctx, int64_t sim_ns, double wall_s, uint64_t events)
{
    (void)wall_s;
    cli_progress_update(ctx, "exact tagged replay at %.1f ms simulated, %llu events",
                        (double)sim_ns / 1e6, (unsigned long long)events);
}

int cli_exact_tagged_replay(const char *command, const qr_recording *rec, const char *out,
                            cli_progress *prog, char *arrivals, size_t size)
{
    char err[QR_ERRBUF_SIZE];
    snprintf(arrivals, size, "%s.partial-%d.qra", out, (int)getpid());
    qr_partial_add(arrivals);
    qr_sampling_stats st;
    const qr_scenario *s = qr_recording_scenario(rec);
    qr_replay_opts ro = {QR_MODE_TAGGED, qr_scenario_config(s)->replay.margin_bytes,
                         arrivals,       exact_replay_progress,
                         prog,           NULL};
    qr_replay_out rout = {0};
    cli_catch_signals();
    ro.cancel = &cli_signal;
    qr_plan *plan = NULL;
    qr_plan_cursor *cur = NULL;
    int rc = qr_plan_sample(&plan, rec, NULL, QR_SAMPLING_RATE, 0, &st, NULL, NULL, err);
    if (!rc && (rc = qr_plan_cursor_create(&cur, rec, plan)) != QR_OK)
        snprintf(err, sizeof err, "out of memory");
    if (!rc)
        rc = qr_replay_native(NULL, s, rec, qr_plan_cursor_source(cur), &ro, &rout, err);
    qr_plan_cursor_free(cur);
    qr_plan_free(plan);
    int cancelled = rout.cancelled;
    qr_replay_out_free(&rout);
    cli_restore_signals();
    if (rc || cancelled) {
        unlink(arrivals);
        arrivals[0] = '\0';
        return cancelled ? cli_interrupted_status()
                         : cli_fail(command, "the exact tagged replay: %s", err);
    }
    return 0;
}

int cli_replay_arrivals(const char *command, const char *dir, const char *replay,
                        const char *arrivals, int no_replay, char *arr, size_t size)
{
    arr[0] = '\0';
    if ((replay != NULL) + (arrivals != NULL) + no_replay > 1)
        return cli_usage_error(command, "--replay, --arrivals and --no-replay exclude each other");
    if (arrivals) {
        snprintf(arr, size, "%s", arrivals);
    } else if (replay) {
        if (strchr(replay, '/') || !strcmp(replay, "..") || !strcmp(replay, "."))
            return cli_usage_error(command, "--replay: '%s' is not a replay's name", replay);
        snprintf(arr, size, "%s/replay/%s/arrivals.qra", dir, replay);
    } else if (!no_replay) {
        char name[256];
        if (cli_pick_tagged_replay(dir, name, sizeof name))
            snprintf(arr, size, "%s/replay/%s/arrivals.qra", dir, name);
    }
    if (arr[0] && !cli_exists(arr))
        return cli_fail(command, "%s: no arrival log there", arr);
    return 0;
}

int cli_check_light(const char *command, const char *rec_dir, const char *light_path,
                    const char *light_id)
{
    char err[QR_ERRBUF_SIZE], h5[PATH_MAX + 32], id[QR_ID_SIZE];
    snprintf(h5, sizeof h5, "%s/recording.h5", rec_dir);
    if (!cli_exists(h5))
        return 0; /* a light record alone: nothing to compare */
    if (qr_h5_recording_id(h5, id, err))
        return cli_fail(command, "%s", err);
    if (id[0] && strcmp(id, light_id))
        return cli_fail(command,
                        "%s is the light record of another recording (%s) than %s (%s): make it "
                        "again from this one (qreplay light %s)",
                        light_path, light_id[0] ? light_id : "none named", h5, id, rec_dir);
    return 0;
}

int cli_analysis_open(const char *command, const char *rec_dir, const char *extra, const char *out,
                      int want_replay, cli_progress *prog, cli_analysis_in *in)
{
    char err[QR_ERRBUF_SIZE];
    in->rec = NULL;
    in->tmp[0] = '\0';
    cli_paths ins = {0}, outs = {0};
    cli_paths_add_recording(&ins, rec_dir);
    if (in->arrivals[0])
        cli_paths_add(&ins, "%s", in->arrivals);
    if (extra && extra[0])
        cli_paths_add(&ins, "%s", extra);
    cli_paths_add(&outs, "%s", out);
    if (cli_check_outputs(command, &outs, &ins))
        return 1;
    if (qr_recording_open(&in->rec, rec_dir, NULL, err))
        return cli_fail(command, "%s", err);
    /* the arrivals must be of this recording: a replay made before the recording was replaced
     * is refused, never read against the new one; and of the run its folder says */
    if (in->arrivals[0] &&
        qr_run_log_check(in->arrivals, qr_recording_id(in->rec),
                         "replay the recording again (qreplay replay), or name another log", err))
        return cli_fail(command, "%s", err);
    return want_replay ? cli_analysis_replay(command, out, prog, in) : 0;
}

int cli_analysis_replay(const char *command, const char *out, cli_progress *prog,
                        cli_analysis_in *in)
{
    if (in->arrivals[0])
        return 0;
    /* no replay yet: an exact tagged replay (every send time as recorded) for this run only */
    int rc = cli_exact_tagged_replay(command, in->rec, out, prog, in->tmp, sizeof in->tmp);
    if (!rc)
        snprintf(in->arrivals, sizeof in->arrivals, "%s", in->tmp);
    return rc;
}

void cli_analysis_replay_done(cli_analysis_in *in)
{
    if (in->tmp[0])
        unlink(in->tmp);
}

const char *cli_analysis_arrivals_text(const cli_analysis_in *in)
{
    return in->tmp[0] ? "an exact tagged replay run now (not kept)"
                      : (in->arrivals[0] ? cli_shown(in->arrivals) : "none (--no-replay)");
}

void cli_analysis_close(cli_analysis_in *in)
{
    qr_recording_close(in->rec);
    in->rec = NULL;
}

int cli_forget_old_results(const char *command, const char *rec_dir, int quiet)
{
    char run_dir[PATH_MAX], h5[PATH_MAX + 32], id[QR_ID_SIZE], err[QR_ERRBUF_SIZE];
    run_of_recording(rec_dir, run_dir, sizeof run_dir);
    snprintf(h5, sizeof h5, "%s/recording.h5", rec_dir);
    size_t gone = 0;
    if (qr_h5_recording_id(h5, id, err) || qr_run_folder_forget(run_dir, id, &gone, err))
        return cli_fail(command, "%s", err);
    if (gone && !quiet)
        fprintf(stderr,
                "qreplay %s: removed %zu result%s made from the recording this one replaced "
                "(in %s)\n",
                command, gone, gone == 1 ? "" : "s", cli_shown(run_dir));
    return 0;
}

int cli_clock_offsets(const char *command, const char *rec_dir, const qr_recording *rec,
                      int64_t **out)
{
    *out = NULL;
    if (qr_recording_imported(rec))
        return 0; /* its times are on its reference host's clock already */
    uint32_t n = qr_recording_hosts(rec);
    char err[QR_ERRBUF_SIZE];
    if (!(*out = calloc(n ? n : 1, sizeof **out)))
        return cli_fail(command, "out of memory");
    if (qr_truth_clock_offsets(rec_dir, n, *out, err)) {
        free(*out);
        *out = NULL;
        return cli_fail(command, "%s", err);
    }
    return 0;
}

static int version_cmp(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

int cli_open_records(const char *dir, const char *sub, int unchecked, const struct qr_scenario *s,
                     struct qr_recording **like, struct qr_krec_set **ks, cli_paths *paths,
                     char *err)
{
    char rdir[4200], rec_dir[4200];
    cli_paths p = {0};
    *like = NULL;
    *ks = NULL;
    snprintf(rdir, sizeof rdir, "%s/%s", dir, sub);
    DIR *d = opendir(rdir);
    if (!d)
        return snprintf(err, QR_ERRBUF_SIZE,
                        "%s: %s (qreplay record writes one record per host there)", rdir,
                        strerror(errno)),
               QR_ENOENT;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 4 && !strcmp(e->d_name + n - 4, ".qrk"))
            cli_paths_add(&p, "%s/%s", rdir, e->d_name);
    }
    closedir(d);
    if (!p.n)
        return snprintf(err, QR_ERRBUF_SIZE, "%s: no kernel record (*.qrk)", rdir), QR_ENOENT;
    qsort(p.v, p.n, sizeof *p.v, version_cmp);
    qr_krec_set_opts o = {NULL, 0, 0, 0};
    snprintf(rec_dir, sizeof rec_dir, "%s/recording", dir);
    int rc = 0;
    if (cli_exists(rec_dir)) {
        rc = qr_recording_open(like, rec_dir, NULL, err);
        if (!rc)
            o = (qr_krec_set_opts){*like, 0, qr_recording_network_known(*like), unchecked};
    }
    if (!rc)
        rc = qr_krec_set_open(ks, s, (const char *const *)p.v, p.n, &o, err);
    if (rc) {
        qr_recording_close(*like);
        *like = NULL;
    }
    if (paths && !rc)
        *paths = p;
    else
        cli_paths_free(&p);
    return rc;
}

/* A whole text file of at most 1 MiB, lines joined by '\n' (caller frees). NULL after printing
 * the error. */
char *cli_slurp(const char *command, const char *path)
{
    char err[QR_ERRBUF_SIZE];
    qr_lines *l;
    if (qr_lines_open(&l, path, err)) {
        cli_fail(command, "%s", err);
        return NULL;
    }
    char *all = calloc(1, 1), *line;
    size_t n = 0, len;
    long ln;
    int rc = all ? QR_OK : QR_ENOMEM;
    while (!rc && !(rc = qr_lines_next(l, &line, &len, &ln, err))) {
        char *grown = n + len + 2 > (1u << 20) ? NULL : realloc(all, n + len + 2);
        if (!grown) {
            snprintf(err, sizeof err, "%s: longer than 1 MiB", path);
            rc = QR_EVALUE;
            break;
        }
        all = grown;
        memcpy(all + n, line, len);
        n += len;
        all[n++] = '\n';
        all[n] = 0;
    }
    qr_lines_close(l);
    if (rc != QR_END) {
        free(all);
        cli_fail(command, "%s", rc == QR_ENOMEM ? "out of memory" : err);
        return NULL;
    }
    return all;
}
