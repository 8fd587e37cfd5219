/* Outputs as transactions (txn.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/common.h"
#include "qreplay/fs.h"
#include "qreplay/txn.h"

#define LOCK_NAME ".qreplay-lock"

static const char *kind_of(mode_t m)
{
    return S_ISLNK(m)    ? "a symbolic link"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISDIR(m)  ? "a folder"
                         : "a file";
}

int qr_output_check(const char *path, int kind, char *errbuf)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? QR_OK : qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
    if (kind == QR_OUT_DIR ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))
        return QR_OK;
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return qri_err(errbuf, QR_EIO, "%s is %s, not %s: refusing to replace it", path,
                       kind_of(st.st_mode), kind == QR_OUT_DIR ? "a folder" : "a file");
    return qri_err(errbuf, QR_EIO,
                   "%s is %s: qreplay writes only regular files and folders%s, and never replaces "
                   "anything else",
                   path, kind_of(st.st_mode),
                   S_ISLNK(st.st_mode) ? " (never through a link: give the link's target)" : "");
}

int qr_is_leftover_name(const char *name)
{
    static const char *const tags[] = {".partial-", ".old-"};
    for (size_t t = 0; t < 2; t++) {
        const char *at = name;
        while ((at = strstr(at, tags[t]))) {
            const char *d = at + strlen(tags[t]);
            const char *e = d;
            while (isdigit((unsigned char)*e))
                e++;
            if (e > d && (*e == '\0' || *e == '.') && at > name)
                return 1;
            at = d;
        }
    }
    return 0;
}

/* ---- fsync ---------------------------------------------------------------------------------- */

static int fsync_path(const char *path, int dir)
{
    int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    /* a folder on a filesystem that cannot sync folders (EINVAL) is as synced as it gets */
    if (rc != 0 && dir && errno == EINVAL)
        rc = 0;
    close(fd);
    return rc;
}

static int fsync_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    if (S_ISLNK(st.st_mode))
        return 0;
    if (!S_ISDIR(st.st_mode))
        return fsync_path(path, 0);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    char sub[3 * QR_PATH_MAX];
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub) {
            errno = ENAMETOOLONG;
            rc = -1;
            break;
        }
        rc = fsync_tree(sub);
    }
    closedir(d);
    return rc ? rc : fsync_path(path, 1);
}

/* The folder holding path ("." for a bare name). */
static void parent_of(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, size, ".");
    else if (slash == out)
        out[1] = '\0';
    else
        *slash = '\0';
}

int qr_commit_path(const char *staged, const char *path, char *errbuf)
{
    struct stat st_new, st_old;
    if (lstat(staged, &st_new) != 0)
        return qri_err(errbuf, QR_EIO, "%s: %s", staged, strerror(errno));
    int is_dir = S_ISDIR(st_new.st_mode);
    int rc = qr_output_check(path, is_dir ? QR_OUT_DIR : QR_OUT_FILE, errbuf);
    if (rc)
        return rc;
    if (fsync_tree(staged) != 0)
        return qri_err(errbuf, QR_EIO, "%s: cannot write it to disk: %s", path, strerror(errno));
    int had = lstat(path, &st_old) == 0;
    if (is_dir && had) {
        if (renameat2(AT_FDCWD, staged, AT_FDCWD, path, RENAME_EXCHANGE) != 0)
            return qri_err(errbuf, QR_EIO, "%s: cannot put the new one in its place: %s", path,
                           strerror(errno));
    } else if (is_dir) {
        /* a new folder: never over one another command made meanwhile */
        if (renameat2(AT_FDCWD, staged, AT_FDCWD, path, RENAME_NOREPLACE) != 0)
            return errno == EEXIST
                       ? qri_err(errbuf, QR_ESTATE,
                                 "%s was made by another command while this one ran: nothing "
                                 "written",
                                 path)
                       : qri_err(errbuf, QR_EIO, "%s: cannot put the new one in its place: %s",
                                 path, strerror(errno));
    } else if (rename(staged, path) != 0) {
        return qri_err(errbuf, QR_EIO, "%s: cannot put the new one in its place: %s", path,
                       strerror(errno));
    }
    char parent[3 * QR_PATH_MAX];
    parent_of(path, parent, sizeof parent);
    fsync_path(parent, 1);
    if (is_dir && had)
        qri_remove_tree(staged); /* the old folder, now under the stage's name */
    return QR_OK;
}

/* ---- the lock ------------------------------------------------------------------------------- */

int qr_folder_lock(const char *dir, int *fd_out, char *errbuf)
{
    char path[3 * QR_PATH_MAX], pid[32] = "";
    *fd_out = -1;
    if (snprintf(path, sizeof path, "%s/" LOCK_NAME, dir) >= (int)sizeof path)
        return qri_err(errbuf, QR_EIO, "%s: path too long", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        struct stat st;
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return qri_err(errbuf, QR_EIO,
                           "%s is %s, not qreplay's lock file: refusing to use it (remove it)",
                           path, kind_of(st.st_mode));
        return qri_err(errbuf, QR_EIO, "%s: cannot open the folder's lock: %s", path,
                       strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return qri_err(errbuf, QR_EIO,
                       "%s is not a regular file, not qreplay's lock file: refusing to use it "
                       "(remove it)",
                       path);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        for (char *c = pid; *c; c++)
            if (!isdigit((unsigned char)*c))
                pid[0] = '\0';
        close(fd);
        return qri_err(errbuf, QR_ESTATE,
                       "%s is in use by another qreplay command%s%s%s: wait for it to finish", dir,
                       pid[0] ? " (process " : "", pid, pid[0] ? ")" : "");
    }
    /* the note of the holder, only in a file that is nothing but a lock: never in a file linked
     * from elsewhere (a stage's link is the only other name a lock file has, while it is held) */
    if (st.st_nlink == 1 && st.st_size <= 32) {
        snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, strlen(pid), 0) < 0) {
            /* the lock holds; only its note of who holds it is missing */
        }
    }
    *fd_out = fd;
    return QR_OK;
}

/* ---- stages --------------------------------------------------------------------------------- */

struct qr_stage {
    char dir[3 * QR_PATH_MAX];   /* the output folder */
    char stage[3 * QR_PATH_MAX]; /* DIR.partial-PID */
    char first_leftover[3 * QR_PATH_MAX];
    size_t leftovers;
};

/* Copy folder `from` into the new folder `to` with hard links. */
static int link_tree(qr_stage *s, const char *from, const char *to, dev_t dev, char *errbuf)
{
    DIR *d = opendir(from);
    if (!d)
        return qri_err(errbuf, QR_EIO, "%s: %s", from, strerror(errno));
    struct dirent *e;
    int rc = QR_OK;
    char a[3 * QR_PATH_MAX], b[3 * QR_PATH_MAX];
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(a, sizeof a, "%s/%s", from, e->d_name) >= (int)sizeof a ||
            snprintf(b, sizeof b, "%s/%s", to, e->d_name) >= (int)sizeof b) {
            rc = qri_err(errbuf, QR_EIO, "%s/%s: path too long", from, e->d_name);
            break;
        }
        struct stat st;
        if (lstat(a, &st) != 0) {
            if (errno == ENOENT)
                continue; /* gone meanwhile */
            rc = qri_err(errbuf, QR_EIO, "%s: %s", a, strerror(errno));
            break;
        }
        if (qr_is_leftover_name(e->d_name)) {
            if (!s->leftovers++)
                snprintf(s->first_leftover, sizeof s->first_leftover, "%s", a);
            continue;
        }
        if (st.st_dev != dev) {
            rc = qri_err(errbuf, QR_EIO,
                         "%s is on another filesystem (mounted inside %s): qreplay replaces the "
                         "folder whole and cannot carry it over; move it out first",
                         a, s->dir);
        } else if (S_ISDIR(st.st_mode)) {
            if (mkdir(b, st.st_mode & 07777) != 0)
                rc = qri_err(errbuf, QR_EIO, "%s: %s", b, strerror(errno));
            else
                rc = link_tree(s, a, b, dev, errbuf);
        } else if (S_ISREG(st.st_mode)) {
            if (link(a, b) != 0)
                rc = qri_err(errbuf, QR_EIO, "%s: cannot carry it over: %s", a, strerror(errno));
        } else if (S_ISLNK(st.st_mode)) {
            char target[3 * QR_PATH_MAX];
            ssize_t n = readlink(a, target, sizeof target - 1);
            if (n < 0 || (target[n] = '\0', symlink(target, b) != 0))
                rc = qri_err(errbuf, QR_EIO, "%s: cannot carry the link over: %s", a,
                             strerror(errno));
        } else {
            rc = qri_err(errbuf, QR_EIO,
                         "%s is %s: qreplay replaces the folder whole and cannot carry it over; "
                         "move it out first",
                         a, kind_of(st.st_mode));
        }
    }
    closedir(d);
    return rc;
}

/* Remove "BASE.partial-N" and "BASE.old-N" beside dir (of processes that are gone). */
static size_t remove_siblings(const char *dir)
{
    size_t removed = 0;
    char parent[3 * QR_PATH_MAX], base[3 * QR_PATH_MAX], p[3 * QR_PATH_MAX];
    parent_of(dir, parent, sizeof parent);
    snprintf(base, sizeof base, "%s", dir);
    size_t n = strlen(base);
    while (n > 1 && base[n - 1] == '/')
        base[--n] = '\0';
    const char *b = strrchr(base, '/');
    b = b ? b + 1 : base;
    size_t nb = strlen(b);
    DIR *d = opendir(parent);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *tail = e->d_name + nb;
        if (strncmp(e->d_name, b, nb) != 0)
            continue;
        const char *digits = !strncmp(tail, ".partial-", 9) ? tail + 9
                             : !strncmp(tail, ".old-", 5)   ? tail + 5
                                                            : NULL;
        if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits))
            continue;
        /* only a dead command's: a live one's stage of a folder not made yet has no lock */
        long pid = strtol(digits, NULL, 10);
        if (pid > 0 && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", parent, e->d_name) < (int)sizeof p) {
            qri_remove_tree(p);
            removed++;
        }
    }
    closedir(d);
    return removed;
}

size_t qr_leftovers_remove(const char *path)
{
    return remove_siblings(path);
}

int qr_stage_begin(qr_stage **out, const char *dir, char *errbuf)
{
    *out = NULL;
    int rc = qr_output_check(dir, QR_OUT_DIR, errbuf);
    if (rc)
        return rc;
    qr_stage *s = calloc(1, sizeof *s);
    if (!s)
        return QR_ENOMEM;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n >= sizeof s->dir - 32) {
        free(s);
        return qri_err(errbuf, QR_EIO, "'%s': not a usable folder name", dir);
    }
    memcpy(s->dir, dir, n);
    s->dir[n] = '\0';
    if (!strcmp(s->dir, ".") || !strcmp(s->dir, "..") || !strcmp(s->dir, "/") ||
        (n >= 2 && (!strcmp(s->dir + n - 2, "/.") || (n >= 3 && !strcmp(s->dir + n - 3, "/.."))))) {
        /* a folder named by "." or "..": its real name, so that it has a sibling */
        char real[PATH_MAX];
        if (!realpath(s->dir, real) || !strcmp(real, "/")) {
            free(s);
            return qri_err(errbuf, QR_EIO, "%s: cannot replace this folder", dir);
        }
        snprintf(s->dir, sizeof s->dir, "%s", real);
    }
    snprintf(s->stage, sizeof s->stage, "%s.partial-%ld", s->dir, (long)getpid());
    remove_siblings(s->dir);
    struct stat st, pst;
    char parent[3 * QR_PATH_MAX];
    parent_of(s->dir, parent, sizeof parent);
    int had = stat(s->dir, &st) == 0;
    if (had && stat(parent, &pst) == 0 && pst.st_dev != st.st_dev) {
        rc = qri_err(errbuf, QR_EIO,
                     "%s is a mount point: qreplay replaces a run folder whole, so it must be a "
                     "folder inside the filesystem (use %s/run, say)",
                     s->dir, s->dir);
        free(s);
        return rc;
    }
    if (mkdir(s->stage, had ? (st.st_mode & 07777) : 0777) != 0) {
        rc = qri_err(errbuf, QR_EIO, "%s: cannot make the folder the new output is built in: %s",
                     s->stage, strerror(errno));
        free(s);
        return rc;
    }
    qr_partial_add(s->stage);
    if (had && (rc = link_tree(s, s->dir, s->stage, st.st_dev, errbuf)) != QR_OK) {
        qr_stage_abort(s);
        return rc;
    }
    *out = s;
    return QR_OK;
}

const char *qr_stage_path(const qr_stage *s)
{
    return s->stage;
}

size_t qr_stage_leftovers(const qr_stage *s, const char **first)
{
    if (first)
        *first = s->first_leftover;
    return s->leftovers;
}

/* Whether the working folder is dir or inside it. */
static int cwd_inside(const char *dir)
{
    char cwd[PATH_MAX], real[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || !realpath(dir, real))
        return 0;
    size_t n = strlen(real);
    return !strncmp(cwd, real, n) && (cwd[n] == '\0' || cwd[n] == '/');
}

int qr_stage_commit(qr_stage *s, char *errbuf)
{
    char cwd[PATH_MAX], real[PATH_MAX];
    int moved = cwd_inside(s->dir) && getcwd(cwd, sizeof cwd) && realpath(s->dir, real);
    int rc = qr_commit_path(s->stage, s->dir, errbuf);
    if (rc) {
        qr_stage_abort(s);
        return rc;
    }
    qr_partial_done(s->stage);
    if (moved && chdir(cwd) != 0) {
        /* the working folder was removed with the old output: the new one's root instead */
        if (chdir(real) != 0) {
        }
    }
    free(s);
    return QR_OK;
}

void qr_stage_abort(qr_stage *s)
{
    if (!s)
        return;
    qri_remove_tree(s->stage);
    qr_partial_done(s->stage);
    free(s);
}

int qr_write_text_file(const char *path, void (*write)(FILE *, const void *), const void *ctx,
                       char *errbuf)
{
    char tmp[QR_PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.partial-%ld", path, (long)getpid());
    qr_leftovers_remove(path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(errno));
    qr_partial_add(tmp);
    write(f, ctx);
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad) {
        int e = errno;
        unlink(tmp);
        qr_partial_done(tmp);
        return qri_err(errbuf, QR_EIO, "%s: %s", path, strerror(e ? e : EIO));
    }
    int rc = qr_commit_path(tmp, path, errbuf);
    if (rc) {
        unlink(tmp);
        qr_partial_done(tmp);
        return rc;
    }
    qr_partial_done(tmp);
    return QR_OK;
}
