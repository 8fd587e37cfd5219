/* A run folder's replay variants: their names, and which are complete (results.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
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
