/* A stable sort whose comparison takes a context (internal.h: qri_sort). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void merge(char *a, char *tmp, size_t lo, size_t mid, size_t hi, size_t size,
                  int (*cmp)(const void *, const void *, void *), void *ctx)
{
    size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) {
        /* take from the right only when strictly smaller: equal elements keep their order */
        if (cmp(a + j * size, a + i * size, ctx) < 0)
            memcpy(tmp + k++ * size, a + j++ * size, size);
        else
            memcpy(tmp + k++ * size, a + i++ * size, size);
    }
    while (i < mid)
        memcpy(tmp + k++ * size, a + i++ * size, size);
    while (j < hi)
        memcpy(tmp + k++ * size, a + j++ * size, size);
    memcpy(a + lo * size, tmp + lo * size, (hi - lo) * size);
}

void qri_sort_buf(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
                  void *ctx, void *scratch)
{
    char *a = base, *tmp = scratch;
    /* bottom-up: runs of 1, 2, 4, ... merged pairwise */
    for (size_t width = 1; width < n; width *= 2)
        for (size_t lo = 0; lo + width < n; lo += 2 * width) {
            size_t mid = lo + width, hi = lo + 2 * width < n ? lo + 2 * width : n;
            merge(a, tmp, lo, mid, hi, size, cmp, ctx);
        }
}

int qri_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
             void *ctx)
{
    if (n < 2 || size == 0)
        return QR_OK;
    void *tmp = malloc(n * size);
    if (!tmp)
        return QR_ENOMEM;
    qri_sort_buf(base, n, size, cmp, ctx, tmp);
    free(tmp);
    return QR_OK;
}
