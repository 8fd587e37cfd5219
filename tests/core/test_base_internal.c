/* The base layer's private helpers (internal.h, map.h): the 128-bit-key map, the stable sort with
 * a context, trimming, SHA-256 of a file, and the integer comparisons. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "map.h"
#include "qreplay/common.h"

static void count(uint64_t k1, uint64_t k2, void *v, void *ctx)
{
    (void)k2;
    cr_assert_eq((uint64_t)(uintptr_t)v, k1 + 1);
    (*(size_t *)ctx)++;
}

Test(base_internal, map_put_get_slot_remove_foreach)
{
    qri_map m;
    cr_assert_eq(qri_map_init(&m), QR_OK);
    for (uint64_t i = 0; i < 5000; i++)
        cr_assert_eq(qri_map_put(&m, i, i * 7, (void *)(uintptr_t)(i + 1)), QR_OK);
    for (uint64_t i = 0; i < 5000; i++) {
        cr_assert_eq((uint64_t)(uintptr_t)qri_map_get(&m, i, i * 7), i + 1);
        cr_assert_null(qri_map_get(&m, i, i * 7 + 1), "the second key half counts");
    }
    void **slot = qri_map_slot(&m, 3, 21);
    cr_assert_not_null(slot);
    *slot = (void *)(uintptr_t)4;
    cr_assert_eq((uint64_t)(uintptr_t)qri_map_get(&m, 3, 21), 4);
    for (uint64_t i = 0; i < 5000; i += 2)
        cr_assert_eq((uint64_t)(uintptr_t)qri_map_remove(&m, i, i * 7), i + 1);
    cr_assert_null(qri_map_remove(&m, 0, 0), "removed already");
    size_t n = 0;
    qri_map_foreach(&m, count, &n);
    cr_assert_eq(n, 2500);
    qri_map_free(&m);
}

typedef struct {
    int key, order;
} item;

static int by_key(const void *a, const void *b, void *ctx)
{
    int dir = *(const int *)ctx;
    const item *x = a, *y = b;
    return dir * ((x->key > y->key) - (x->key < y->key));
}

Test(base_internal, sort_is_stable_and_takes_its_context)
{
    enum { N = 1000 };
    item v[N];
    for (int i = 0; i < N; i++)
        v[i] = (item){(i * 7919) % 37, i};
    int down = -1;
    cr_assert_eq(qri_sort(v, N, sizeof v[0], by_key, &down), QR_OK);
    for (int i = 1; i < N; i++) {
        cr_assert_geq(v[i - 1].key, v[i].key, "descending by the context");
        if (v[i - 1].key == v[i].key)
            cr_assert_lt(v[i - 1].order, v[i].order, "equal keys keep their order");
    }
    cr_assert_eq(qri_sort(v, 0, sizeof v[0], by_key, &down), QR_OK, "nothing to sort");
}

Test(base_internal, trim_and_comparisons)
{
    char a[] = " \t value with  spaces \r\n", b[] = "   ", c[] = "x";
    cr_assert_str_eq(qri_trim(a), "value with  spaces");
    cr_assert_str_eq(qri_trim(b), "");
    cr_assert_str_eq(qri_trim(c), "x");
    int64_t i[] = {5, -3, INT64_MIN, INT64_MAX, 0};
    qsort(i, 5, sizeof i[0], qri_cmp_i64);
    cr_assert(i[0] == INT64_MIN && i[1] == -3 && i[2] == 0 && i[3] == 5 && i[4] == INT64_MAX);
    uint32_t counts[] = {0, 3, 1, 3};
    cr_assert_eq(qri_argmax_u32(counts, 4), 1, "the first of the largest");
    cr_assert_eq(qri_argmax_u32(counts, 1), UINT32_MAX, "all zero: none");
    cr_assert_eq(qri_argmax_u32(counts, 0), UINT32_MAX);
    uint64_t u[] = {UINT64_MAX, 1, 0};
    qsort(u, 3, sizeof u[0], qri_cmp_u64);
    cr_assert(u[0] == 0 && u[1] == 1 && u[2] == UINT64_MAX, "no overflow in the comparison");
}

Test(base_internal, sha256_of_a_file)
{
    char path[] = "/tmp/qr-sha-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "abc", 3), 3);
    close(fd);
    char hex[65];
    uint64_t size;
    cr_assert_eq(qri_sha256_file(path, hex, &size), QR_OK);
    cr_assert_eq(size, 3);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    unlink(path);
    cr_assert_eq(qri_sha256_file(path, hex, &size), QR_ENOENT);
}

Test(base_internal, the_wall_clock_goes_forward)
{
    double a = qr_wall_now();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    double b = qr_wall_now();
    cr_assert_gt(b, a);
}
