/* Folders and files (fs.h). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/common.h"
#include "qreplay/fs.h"

int qr_make_dirs_noted(const char *dir, char *created, size_t size, char *errbuf)
{
    char cur[3 * QR_PATH_MAX];
    size_t n = strlen(dir);
    if (created && size)
        created[0] = '\0';
    if (n == 0 || n >= sizeof cur)
        return qri_err(errbuf, QR_EIO, "'%s': not a usable folder name", dir);
    for (size_t i = 1; i <= n; i++) {
        if (i == n || dir[i] == '/') {
            memcpy(cur, dir, i);
            cur[i] = '\0';
            if (mkdir(cur, 0777) == 0) {
                if (created && size && !created[0])
                    snprintf(created, size, "%s", cur);
            } else if (errno != EEXIST) {
                int e = errno;
                if (created && created[0])
                    qr_unmake_dirs(cur, created);
                return qri_err(errbuf, QR_EIO, "%s: cannot create folder: %s", cur, strerror(e));
            }
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return qri_err(errbuf, QR_EIO, "%s: not a folder", dir);
    return QR_OK;
}

int qr_make_dirs(const char *dir, char *errbuf)
{
    return qr_make_dirs_noted(dir, NULL, 0, errbuf);
}

void qr_unmake_dirs(const char *dir, const char *created)
{
    if (!created || !created[0])
        return;
    char cur[3 * QR_PATH_MAX];
    size_t top = strlen(created);
    if (strlen(dir) >= sizeof cur || strncmp(dir, created, top) != 0)
        return;
    snprintf(cur, sizeof cur, "%s", dir);
    for (;;) {
        /* trailing slashes are not folders of their own */
        size_t n = strlen(cur);
        while (n > 1 && cur[n - 1] == '/')
            cur[--n] = '\0';
        if (n < top || (rmdir(cur) != 0 && errno != ENOENT) || n == top)
            return;
        char *slash = strrchr(cur, '/');
        if (!slash || slash == cur)
            return;
        *slash = '\0';
    }
}

int qr_check_output(const char *output, const char *const *inputs, size_t n, char *errbuf)
{
    struct stat o;
    if (stat(output, &o) != 0)
        return QR_OK;
    for (size_t i = 0; i < n; i++) {
        struct stat in;
        if (inputs[i] && inputs[i][0] && stat(inputs[i], &in) == 0 && in.st_dev == o.st_dev &&
            in.st_ino == o.st_ino)
            return !strcmp(output, inputs[i])
                       ? qri_err(errbuf, QR_ESAMEFILE,
                                 "%s is given both as an input and as the output: refusing to "
                                 "write over an input",
                                 output)
                       : qri_err(errbuf, QR_ESAMEFILE,
                                 "%s is the input %s (the same file by another path or link): "
                                 "refusing to write over an input",
                                 output, inputs[i]);
    }
    return QR_OK;
}

int qr_check_outside(const char *dir, const char *const *inputs, size_t n, char *errbuf)
{
    char d[4096], in[4096];
    if (!realpath(dir, d))
        return QR_OK;
    size_t nd = strlen(d);
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && inputs[i][0] && realpath(inputs[i], in) && strncmp(in, d, nd) == 0 &&
            (in[nd] == '/' || (in[nd] == '\0' && nd > 1)))
            return qri_err(errbuf, QR_ESAMEFILE,
                           "%s is inside %s, which is replaced: move it out first", inputs[i], dir);
    return QR_OK;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

void qri_remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The partial paths of this process (qr_partial_add): a small list, under a lock. */
static pthread_mutex_t partial_lock = PTHREAD_MUTEX_INITIALIZER;
static char **partials;
static size_t n_partials, cap_partials;

void qr_partial_add(const char *path)
{
    char *copy = path ? strdup(path) : NULL;
    if (!copy)
        return;
    pthread_mutex_lock(&partial_lock);
    if (n_partials == cap_partials) {
        size_t cap = cap_partials ? 2 * cap_partials : 16;
        char **v = realloc(partials, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&partial_lock);
            free(copy);
            return;
        }
        partials = v;
        cap_partials = cap;
    }
    partials[n_partials++] = copy;
    pthread_mutex_unlock(&partial_lock);
}

void qr_partial_done(const char *path)
{
    if (!path)
        return;
    pthread_mutex_lock(&partial_lock);
    for (size_t i = n_partials; i-- > 0;)
        if (!strcmp(partials[i], path)) {
            free(partials[i]);
            partials[i] = partials[--n_partials];
            break;
        }
    pthread_mutex_unlock(&partial_lock);
}

void qr_partial_discard_all(void)
{
    pthread_mutex_lock(&partial_lock);
    for (size_t i = 0; i < n_partials; i++) {
        struct stat st;
        if (lstat(partials[i], &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            /* out of the writers' way first: a thread still writing creates nothing more under
             * the old name while the tree goes */
            char gone[3 * QR_PATH_MAX + 16];
            snprintf(gone, sizeof gone, "%s.gone", partials[i]);
            const char *victim = rename(partials[i], gone) == 0 ? gone : partials[i];
            for (int k = 0; k < 3; k++)
                qri_remove_tree(victim);
        } else {
            unlink(partials[i]);
        }
    }
    pthread_mutex_unlock(&partial_lock);
}
