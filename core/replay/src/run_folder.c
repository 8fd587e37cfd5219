/* A run folder's replay variants: their names, and which are complete (results.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"

char *qr_variant_name(qr_drop_mode mode, int64_t th_ns, char *buf, size_t size)
{
    snprintf(buf, size, "%s_th_%g", mode == QR_MODE_TAGGED ? "tagged" : "plain",
             (double)th_ns / 1e3);
    return buf;
}

static void variant_key(const char *n, size_t *mode_len, double *th)
{
    const char *at = strstr(n, "_th_");
    *mode_len = at ? (size_t)(at - n) : strlen(n);
    *th = at ? atof(at + 4) : 1e300;
}

static int cmp_variant(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    size_t lx, ly;
    double tx, ty;
    variant_key(x, &lx, &tx);
    variant_key(y, &ly, &ty);
    size_t l = lx < ly ? lx : ly;
    int c = memcmp(x, y, l);
    if (c)
        return c;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return strcmp(x, y);
}

void qr_variants_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

int qr_variants_list(const char *run_dir, char ***names, size_t *n)
{
    char path[3 * QR_PATH_MAX];
    *names = NULL;
    *n = 0;
    snprintf(path, sizeof path, "%s/replay", run_dir);
    DIR *d = opendir(path);
    if (!d)
        return QR_OK;
    char **v = NULL;
    size_t k = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/replay/%s/replay.h5", run_dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        if (k == cap) {
            cap = cap ? 2 * cap : 16;
            char **w = realloc(v, cap * sizeof *w);
            if (!w)
                goto nomem;
            v = w;
        }
        if (!(v[k] = strdup(e->d_name)))
            goto nomem;
        k++;
    }
    closedir(d);
    if (k)
        qsort(v, k, sizeof *v, cmp_variant);
    *names = v;
    *n = k;
    return QR_OK;
nomem:
    closedir(d);
    qr_variants_free(v, k);
    return QR_ENOMEM;
}

/* Whether path is a result file qreplay wrote of another recording than id (its id read; a file
 * that is not ours or cannot be read is not "another's": it is left alone). */
static int of_another(const char *path, const char *id)
{
    char got[QR_ID_SIZE];
    struct stat st;
    if (stat(path, &st) != 0 || qr_h5_recording_id(path, got, NULL) != QR_OK)
        return 0;
    return strcmp(got, id) != 0;
}

/* Remove run_dir/figures/PREFIX*.png|pdf. */
static void forget_figures(const char *run_dir, const char *prefix)
{
    char p[3 * QR_PATH_MAX];
    snprintf(p, sizeof p, "%s/figures", run_dir);
    DIR *d = opendir(p);
    if (!d)
        return;
    struct dirent *e;
    size_t n = strlen(prefix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, n) != 0 || l < 4 ||
            (strcmp(e->d_name + l - 4, ".png") != 0 && strcmp(e->d_name + l - 4, ".pdf") != 0))
            continue;
        snprintf(p, sizeof p, "%s/figures/%s", run_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    snprintf(p, sizeof p, "%s/figures", run_dir);
    rmdir(p); /* only if now empty */
}

int qr_run_folder_forget(const char *run_dir, const char *recording_id, size_t *removed,
                         char *errbuf)
{
    static const struct {
        const char *file;
        const char *figures[5]; /* the prefixes of the figures drawn from it */
    } results[] = {
        {"results.h5", {"busiest_queue", "runtime_vs_replay", "drop_error", "qdiff_cdf", NULL}},
        {"diagnosis.h5", {"diagnosis_", NULL}},
        {"blame.h5", {"blame_", NULL}},
        {"trace.h5", {"trace_", NULL}},
        {"isolated.h5", {"tcp_trace", "isolated", NULL}},
        {"clocks.h5", {NULL}},
    };
    char p[3 * QR_PATH_MAX];
    size_t n = 0;
    if (removed)
        *removed = 0;
    if (!recording_id || !recording_id[0])
        return QR_OK;
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", run_dir, results[i].file);
        if (!of_another(p, recording_id))
            continue;
        if (unlink(p) != 0)
            return qri_err(errbuf, QR_EIO,
                           "%s: cannot remove (a result of the replaced recording): %s", p,
                           strerror(errno));
        n++;
        for (int k = 0; results[i].figures[k]; k++)
            forget_figures(run_dir, results[i].figures[k]);
    }
    char **names = NULL;
    size_t nv = 0;
    if (qr_variants_list(run_dir, &names, &nv) != QR_OK)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t i = 0; i < nv; i++) {
        snprintf(p, sizeof p, "%s/replay/%s/replay.h5", run_dir, names[i]);
        if (!of_another(p, recording_id))
            continue;
        snprintf(p, sizeof p, "%s/replay/%s", run_dir, names[i]);
        qri_remove_tree(p);
        n++;
    }
    qr_variants_free(names, nv);
    snprintf(p, sizeof p, "%s/replay", run_dir);
    rmdir(p); /* only if now empty */
    snprintf(p, sizeof p, "%s/whatif/whatif.h5", run_dir);
    if (of_another(p, recording_id)) {
        snprintf(p, sizeof p, "%s/whatif", run_dir);
        qri_remove_tree(p);
        n++;
    }
    if (removed)
        *removed = n;
    return QR_OK;
}

int qr_run_log_check(const char *log, const char *recording_id, const char *fix, char *errbuf)
{
    char dir[3 * QR_PATH_MAX], h5[3 * QR_PATH_MAX + 16], source[QR_ID_SIZE] = "";
    snprintf(dir, sizeof dir, "%s", log);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    snprintf(h5, sizeof h5, "%s/replay.h5", dir);
    struct stat st;
    int replay = stat(h5, &st) == 0;
    int rc = replay ? qr_h5_text_attr(h5, "arrivals_id", source, sizeof source, errbuf) : QR_OK;
    if (rc)
        return rc;
    if (!replay && !strcmp(base, "truth"))
        snprintf(source, sizeof source, "%s", QR_ARRIVALS_TRUTH);
    if (!replay && !strcmp(base, "mirror"))
        snprintf(source, sizeof source, "%s", QR_ARRIVALS_MIRROR);
    return qr_arrival_log_check_source(log, recording_id, source, replay ? h5 : NULL, fix, errbuf);
}
