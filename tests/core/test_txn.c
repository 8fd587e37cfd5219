/* Outputs as transactions (txn.h): what may be replaced, a stage that leaves the old folder
 * untouched until its commit, the lock, and the oracle: a writer killed at random moments over many
 * runs leaves the folder exactly old or exactly new, and the next writer works. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/txn.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void rm_rf(const char *path)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    cr_assert_eq(system(cmd), 0);
}

/* A folder's state as text: every path under it (sorted), its kind, and a file's content. */
static void snap_into(const char *root, const char *rel, char **buf, size_t *len, size_t *cap)
{
    char p[4200];
    snprintf(p, sizeof p, "%s%s%s", root, rel[0] ? "/" : "", rel);
    struct dirent **ents;
    int n = scandir(p, &ents, NULL, alphasort);
    if (n < 0)
        return;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        if (strcmp(nm, ".") && strcmp(nm, "..")) {
            char r[4200], q[4200], content[256] = "";
            snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", nm);
            snprintf(q, sizeof q, "%s/%s", root, r);
            struct stat st;
            lstat(q, &st);
            if (S_ISREG(st.st_mode) && strcmp(nm, ".qreplay-lock")) { /* its note: the holder */
                FILE *f = fopen(q, "r");
                size_t k = f ? fread(content, 1, sizeof content - 1, f) : 0;
                content[k] = '\0';
                if (f)
                    fclose(f);
            }
            size_t need = strlen(r) + strlen(content) + 16;
            if (*len + need >= *cap) {
                *cap = 2 * (*cap + need);
                *buf = realloc(*buf, *cap);
            }
            *len += (size_t)sprintf(*buf + *len, "%s %c [%s]\n", r,
                                    S_ISDIR(st.st_mode)   ? 'd'
                                    : S_ISLNK(st.st_mode) ? 'l'
                                                          : 'f',
                                    content);
            if (S_ISDIR(st.st_mode))
                snap_into(root, r, buf, len, cap);
        }
        free(ents[i]);
    }
    free(ents);
}

static char *snap(const char *root)
{
    size_t len = 0, cap = 256;
    char *buf = malloc(cap);
    buf[0] = '\0';
    snap_into(root, "", &buf, &len, &cap);
    return buf;
}

Test(txn, output_check_refuses_what_is_not_a_file_or_folder)
{
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_output_check("/dev/null", QR_OUT_FILE, err), QR_EIO);
    cr_assert(strstr(err, "/dev/null is a character device"), "%s", err);
    char d[] = "/tmp/qr-txn-XXXXXX", p[256];
    cr_assert(mkdtemp(d));
    snprintf(p, sizeof p, "%s/fifo", d);
    cr_assert_eq(mkfifo(p, 0600), 0);
    cr_assert_eq(qr_output_check(p, QR_OUT_FILE, err), QR_EIO);
    cr_assert(strstr(err, "a FIFO"), "%s", err);
    snprintf(p, sizeof p, "%s/link", d);
    cr_assert_eq(symlink("/etc/passwd", p), 0);
    cr_assert_eq(qr_output_check(p, QR_OUT_FILE, err), QR_EIO);
    cr_assert(strstr(err, "symbolic link"), "%s", err);
    snprintf(p, sizeof p, "%s/file", d);
    put(p, "x");
    cr_assert_eq(qr_output_check(p, QR_OUT_FILE, err), QR_OK);
    cr_assert_eq(qr_output_check(p, QR_OUT_DIR, err), QR_EIO);
    cr_assert_eq(qr_output_check(d, QR_OUT_DIR, err), QR_OK);
    snprintf(p, sizeof p, "%s/absent", d);
    cr_assert_eq(qr_output_check(p, QR_OUT_FILE, err), QR_OK);
    /* a commit onto a device is refused and leaves both in place */
    snprintf(p, sizeof p, "%s/file", d);
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", d);
    cr_assert_eq(qr_commit_path(p, fifo, err), QR_EIO);
    struct stat st;
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode));
    cr_assert_eq(access(p, F_OK), 0);
    rm_rf(d);
}

Test(txn, leftover_names)
{
    cr_assert(qr_is_leftover_name("recording.partial-123"));
    cr_assert(qr_is_leftover_name("results.h5.partial-9"));
    cr_assert(qr_is_leftover_name("x.partial-77.qra"));
    cr_assert(qr_is_leftover_name(".fig.png.partial-5"));
    cr_assert(qr_is_leftover_name("recording.old-4"));
    cr_assert(!qr_is_leftover_name("recording.partial-"));
    cr_assert(!qr_is_leftover_name("recording.partial-x1"));
    cr_assert(!qr_is_leftover_name(".partial-12"));
    cr_assert(!qr_is_leftover_name("notes.txt"));
    cr_assert(!qr_is_leftover_name("a.partial-12b"));
}

Test(txn, a_stage_leaves_the_folder_untouched_until_its_commit)
{
    char d[] = "/tmp/qr-txn-XXXXXX", run[256], p[300], err[QR_ERRBUF_SIZE];
    cr_assert(mkdtemp(d));
    snprintf(run, sizeof run, "%s/run", d);
    snprintf(p, sizeof p, "%s/sub", run);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    snprintf(p, sizeof p, "%s/keep.txt", run);
    put(p, "keep");
    snprintf(p, sizeof p, "%s/sub/old.h5", run);
    put(p, "old");
    snprintf(p, sizeof p, "%s/sub/x.h5.partial-42", run);
    put(p, "leftover");
    snprintf(p, sizeof p, "%s/ln", run);
    cr_assert_eq(symlink("keep.txt", p), 0);
    snprintf(p, sizeof p, "%s/run.partial-999999", d);
    cr_assert_eq(mkdir(p, 0700), 0); /* a killed command's stage */
    int lock;
    cr_assert_eq(qr_folder_lock(run, &lock, err), QR_OK, "%s", err);
    struct stat lock_before;
    snprintf(p, sizeof p, "%s/.qreplay-lock", run);
    cr_assert_eq(stat(p, &lock_before), 0);
    char *before = snap(run);

    qr_stage *s;
    cr_assert_eq(qr_stage_begin(&s, run, err), QR_OK, "%s", err);
    const char *first;
    cr_assert_eq(qr_stage_leftovers(s, &first), 1);
    cr_assert(strstr(first, "x.h5.partial-42"), "%s", first);
    snprintf(p, sizeof p, "%s/run.partial-999999", d);
    cr_assert_neq(access(p, F_OK), 0, "a dead command's stage beside the folder is removed");
    /* change the stage: replace a shared file (new inode), add one, remove one */
    snprintf(p, sizeof p, "%s/sub/old.h5", qr_stage_path(s));
    cr_assert_eq(unlink(p), 0);
    put(p, "new");
    snprintf(p, sizeof p, "%s/added", qr_stage_path(s));
    put(p, "added");
    snprintf(p, sizeof p, "%s/keep.txt", run);
    char *mid = snap(run);
    cr_assert_str_eq(mid, before, "the folder changed before the commit");
    cr_assert_eq(qr_stage_commit(s, err), QR_OK, "%s", err);
    char *after = snap(run);
    cr_assert(strstr(after, "sub/old.h5 f [new]"), "%s", after);
    cr_assert(strstr(after, "added f [added]"), "%s", after);
    cr_assert(strstr(after, "keep.txt f [keep]"), "%s", after);
    cr_assert(strstr(after, "ln l"), "%s", after);
    cr_assert(!strstr(after, "partial"), "%s", after);
    struct stat lock_after;
    snprintf(p, sizeof p, "%s/.qreplay-lock", run);
    cr_assert_eq(stat(p, &lock_after), 0);
    cr_assert_eq(lock_after.st_ino, lock_before.st_ino, "the lock is carried over by its link");
    cr_assert_eq(lock_after.st_nlink, 1, "the old folder is gone");
    /* a second lock on the (new) folder is refused while the first is held */
    int second;
    cr_assert_eq(qr_folder_lock(run, &second, err), QR_ESTATE);
    cr_assert(strstr(err, "in use by another qreplay command"), "%s", err);
    close(lock);
    cr_assert_eq(qr_folder_lock(run, &second, err), QR_OK, "%s", err);
    close(second);
    free(before);
    free(mid);
    free(after);
    rm_rf(d);
}

Test(txn, the_lock_is_never_followed_through_a_link)
{
    char d[] = "/tmp/qr-txn-XXXXXX", p[300], victim[300], err[QR_ERRBUF_SIZE];
    cr_assert(mkdtemp(d));
    snprintf(victim, sizeof victim, "%s/victim", d);
    put(victim, "precious");
    snprintf(p, sizeof p, "%s/run", d);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/run/.qreplay-lock", d);
    cr_assert_eq(symlink(victim, p), 0);
    snprintf(p, sizeof p, "%s/run", d);
    int fd;
    cr_assert_eq(qr_folder_lock(p, &fd, err), QR_EIO);
    cr_assert(strstr(err, "symbolic link"), "%s", err);
    /* a hard link to another file is used as a lock but never written */
    snprintf(p, sizeof p, "%s/run/.qreplay-lock", d);
    unlink(p);
    cr_assert_eq(link(victim, p), 0);
    snprintf(p, sizeof p, "%s/run", d);
    cr_assert_eq(qr_folder_lock(p, &fd, err), QR_OK, "%s", err);
    close(fd);
    char *s = snap(d);
    cr_assert(strstr(s, "victim f [precious]"), "%s", s);
    free(s);
    rm_rf(d);
}

/* The child: stage `run`, rewrite every file and add a folder of files, commit. */
static void writer(const char *run, int round)
{
    char err[QR_ERRBUF_SIZE], p[600];
    int lock;
    if (qr_folder_lock(run, &lock, err))
        _exit(3);
    qr_stage *s;
    if (qr_stage_begin(&s, run, err))
        _exit(4);
    for (int i = 0; i < 40; i++) {
        char tmp[600];
        snprintf(p, sizeof p, "%s/f%02d", qr_stage_path(s), i);
        snprintf(tmp, sizeof tmp, "%s.partial-%d", p, (int)getpid());
        FILE *f = fopen(tmp, "w");
        if (!f)
            _exit(5);
        fprintf(f, "round %d file %d", round, i);
        fclose(f);
        if (rename(tmp, p))
            _exit(6);
    }
    snprintf(p, sizeof p, "%s/sub%d", qr_stage_path(s), round);
    mkdir(p, 0777);
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/sub%d/g%d", qr_stage_path(s), round, i);
        FILE *f = fopen(p, "w");
        fprintf(f, "g");
        fclose(f);
    }
    if (qr_stage_commit(s, err))
        _exit(7);
    _exit(0);
}

Test(txn, killed_at_random_moments_the_folder_is_old_or_new, .timeout = 120)
{
    char d[] = "/tmp/qr-txn-XXXXXX", run[256], err[QR_ERRBUF_SIZE];
    cr_assert(mkdtemp(d));
    snprintf(run, sizeof run, "%s/run", d);
    cr_assert_eq(mkdir(run, 0777), 0);
    srand(12345);
    int olds = 0, news = 0, round = 0;
    /* the time an uninterrupted write takes, to spread the kills over it */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0)
        writer(run, round);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a plain write fails: %d", st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long span_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
    for (int k = 0; k < 100; k++) {
        char *old = snap(run);
        /* what the write makes of this state, done to a copy */
        char copy[300], cmd[700];
        snprintf(copy, sizeof copy, "%s/copy", d);
        rm_rf(copy);
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", run, copy);
        cr_assert_eq(system(cmd), 0);
        round++;
        pid = fork();
        if (pid == 0)
            writer(copy, round);
        waitpid(pid, &st, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        char *new = snap(copy);
        pid = fork();
        if (pid == 0)
            writer(run, round);
        usleep((useconds_t)(rand() % (2 * span_us + 1)));
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        char *now = snap(run);
        int is_old = !strcmp(now, old), is_new = !strcmp(now, new);
        cr_assert(is_old || is_new, "kill %d: neither old nor new:\n%s\nold:\n%s\nnew:\n%s", k, now,
                  old, new);
        olds += is_old;
        news += is_new && !is_old;
        if (is_old)
            round--; /* the next round repeats this one's content */
        free(old);
        free(new);
        free(now);
    }
    cr_log_info("100 kills: %d left the old folder, %d the new", olds, news);
    cr_assert_gt(olds, 0, "no kill fell before a commit: the kills do not cover the write");
    cr_assert_gt(news, 0, "no kill fell after a commit");
    /* the next writer works and leaves nothing of the killed ones */
    pid = fork();
    if (pid == 0)
        writer(run, ++round);
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *s = snap(d);
    cr_assert(!strstr(s, "partial"), "%s", s);
    free(s);
    (void)err;
    rm_rf(d);
}
