/* A full disk under every command that writes (root only: each run gets a tmpfs; skipped with the
 * reason otherwise). The disk is filled to a few KB of free space before the command starts, at
 * two levels: nothing free (the first write fails) and a little (a write in the middle fails).
 * A command that fails says why in one line ("No space left on device", never HDF5's or Python's
 * internals), exits 1 and leaves nothing behind: no partial file, no folder it made, no input
 * touched. Figures are part of the output: when only they fail, nothing is written either. */
#include <sys/statvfs.h>

#include "harness.h"

static char src[128], mnt[128];

static void setup(void)
{
    qr_test_setup();
    if (geteuid() != 0)
        return;
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(mnt, sizeof mnt, "%s/m", dir);
    cr_assert_eq(mkdir(mnt, 0777), 0);
    cr_assert_eq(qreplay("runtime scenarios/single-switch.ini --set traffic.duration=2ms "
                         "--set traffic.stop=4ms -o %s/recording --quiet",
                         src),
                 0, "%s", err);
    cr_assert_eq(qreplay("replay %s --th 0 --mode tagged --quiet", src), 0, "%s", err);
    FILE *f = fopen("/tmp/qr-full-disk-hosts.csv", "w"); /* outside the full disk */
    fputs("address,host,capture\n10.77.0.1,0,pair-a.pcap\n10.77.0.2,2,pair-b.pcap\n", f);
    fclose(f);
}

static void teardown(void)
{
    if (mnt[0]) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "umount %s 2>/dev/null", mnt);
        if (system(cmd)) {
            /* not mounted */
        }
    }
    unlink("/tmp/qr-full-disk-hosts.csv");
    qr_test_teardown();
}

TestSuite(full_disk, .init = setup, .fini = teardown, .timeout = 900);

static int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Mount a fresh tmpfs, copy the run folder in, fill all but free_kb, run `qreplay args` (M in
 * args is the mount point), check what it did. Returns the exit status. */
static int on_full_disk(const char *args, int free_kb)
{
    cr_assert_eq(sh("mount -t tmpfs -o size=32m qreplay-full %s", mnt), 0);
    cr_assert_eq(sh("cp -a %s %s/r && rm -rf %s/r/results.h5 %s/r/figures", src, mnt, mnt, mnt), 0);
    cr_assert_eq(sh("cd %s && find . | sort >%s/before", mnt, dir), 0);
    struct statvfs v;
    cr_assert_eq(statvfs(mnt, &v), 0);
    long long avail = (long long)v.f_bavail * (long long)v.f_frsize - free_kb * 1024LL;
    cr_assert_eq(sh("fallocate -l %lld %s/filler", avail, mnt), 0);
    char expanded[2048] = "";
    for (const char *p = args; *p; p++) {
        size_t n = strlen(expanded);
        if (*p == 'M' && (p[1] == '/' || p[1] == ' ' || !p[1]))
            snprintf(expanded + n, sizeof expanded - n, "%s", mnt);
        else if (n + 1 < sizeof expanded)
            expanded[n] = *p, expanded[n + 1] = '\0';
    }
    int rc = qreplay("%s", expanded);
    cr_assert_eq(sh("cd %s && find . | grep -v '^./filler$' | sort >%s/after", mnt, dir), 0);
    /* nothing the command did not write is gone */
    cr_assert_eq(sh("test -z \"$(comm -23 %s/before %s/after)\"", dir, dir), 0,
                 "%s (free %d KB) removed: %s", args, free_kb, err);
    /* no partial file, ever */
    cr_assert_neq(sh("grep -q partial %s/after", dir), 0, "%s (free %d KB) left a partial file",
                  args, free_kb);
    cr_assert(rc == 0 || rc == 1, "%s (free %d KB): exit %d: %s", args, free_kb, rc, err);
    if (rc == 1) {
        cr_assert(strstr(err, "No space left on device"), "%s (free %d KB): %s", args, free_kb,
                  err);
        cr_assert(!strstr(err, "HDF5") && !strstr(err, "Traceback") && !strstr(err, "DIAG"),
                  "%s (free %d KB): internals in the message: %s", args, free_kb, err);
        int lines = 0;
        for (const char *p = err; *p; p++)
            lines += *p == '\n';
        /* the figures are part of the output: when they fail, two lines (the figure script's
         * and the command's), and nothing written either */
        cr_assert_leq(lines, strstr(err, "drawing the figures failed") ? 2 : 1,
                      "%s (free %d KB): %s", args, free_kb, err);
        cr_assert_eq(sh("test -z \"$(comm -13 %s/before %s/after)\"", dir, dir), 0,
                     "%s (free %d KB) failed and left new files or folders", args, free_kb);
    }
    cr_assert_eq(sh("umount %s", mnt), 0);
    return rc;
}

static void every_level(const char *args)
{
    /* nothing free: the command must fail; a little free: it fails in the middle or finishes */
    cr_assert_eq(on_full_disk(args, 0), 1, "%s with a full disk: exit 0", args);
    on_full_disk(args, 48);
}

#define NEEDS_ROOT()                                                                               \
    do {                                                                                           \
        if (geteuid() != 0)                                                                        \
            cr_skip_test("needs root: each run mounts a small tmpfs (CI runs as root)");           \
    } while (0)

Test(full_disk, simulations_and_imports)
{
    NEEDS_ROOT();
    every_level("runtime scenarios/single-switch.ini --set traffic.duration=2ms -o M/new/recording "
                "--quiet");
    every_level("run scenarios/single-switch.ini --set traffic.duration=1ms -o M/run --quiet");
    every_level("pingmesh scenarios/single-switch.ini --set traffic.duration=2ms -o M/pm --quiet");
    every_level("butterfly scenarios/butterfly.ini --sigma 0,1us --replays 2 -o M/bf --quiet");
    every_level("import scenarios/single-switch.ini tests/data/captures/pair-a.pcap "
                "tests/data/captures/pair-b.pcap --map /tmp/qr-full-disk-hosts.csv -o M/imp "
                "--quiet");
    every_level("workload scenarios/single-switch.ini -o M/w --quiet");
    every_level("synth --quiet --packets 20000 M/s.pcap");
}

Test(full_disk, commands_on_a_run_folder)
{
    NEEDS_ROOT();
    every_level("replay M/r --th 5us --mode plain --quiet");
    every_level("metrics M/r --quiet");
    every_level("clocks M/r --quiet -o M/r/clocks.h5");
    every_level("diagnose M/r --quiet");
    every_level("blame M/r --quiet");
    every_level("trace M/r --quiet");
    every_level("whatif M/r --vary buffer.alpha=0.5,1 --quiet");
    every_level("isolate M/r --quiet");
    every_level("export M/r -o M/exp --quiet");
    every_level("sample M/r/recording/pcap/h0000.pcap M/s.h5 --quiet");
}
