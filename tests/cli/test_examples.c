/* The ns-3 examples build and run: fat-tree-shared-buffer's incast drops only at the receiver's
 * edge port, its per-queue counts add up, TCP recovers every byte, and a buffer large enough for
 * the burst drops nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(const char *args, char *out, size_t size)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", QR_EXAMPLE, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    return pclose(p);
}

Test(examples, fat_tree_shared_buffer_incast)
{
    static char out[1 << 16];
    cr_assert_eq(run("", out, sizeof out), 0, "%s", out);
    unsigned long long sum = 0, total = 0, got = 0, want = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned sw, port;
        unsigned long long n;
        if (sscanf(line, "queue switch %u port %u: %llu drops", &sw, &port, &n) == 3) {
            cr_assert(sw == 0 && port == 0, "an incast to host 0 drops at its edge port: %s", line);
            sum += n;
        }
        sscanf(line, "total drops %llu", &total);
        sscanf(line, "received %llu of %llu bytes", &got, &want);
    }
    cr_assert_gt(total, 0, "12 senders into a 200 KB buffer must overflow it");
    cr_assert_eq(sum, total);
    cr_assert_eq(got, want, "TCP delivers every byte in the end");
    cr_assert_eq(want, 12ULL * 300000);
}

Test(examples, a_buffer_for_the_whole_burst_drops_nothing)
{
    static char out[1 << 16];
    cr_assert_eq(run("--bufferSize=100000000", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "total drops 0"), "%s", out);
    cr_assert(strstr(out, "received 3600000 of 3600000 bytes"), "%s", out);
    cr_assert_neq(run("--senders=99", out, sizeof out), 0, "more senders than hosts is refused");
}
