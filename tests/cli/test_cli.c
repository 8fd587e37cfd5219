/* The qreplay program end to end: exit codes, outputs, and bad input handled without leftovers. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "harness.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"

TestSuite(cli, .init = qr_test_setup, .fini = qr_test_teardown);

Test(cli, help_and_usage_errors)
{
    cr_assert_eq(qreplay("--help"), 0);
    cr_assert(strstr(out, "sample") && strstr(out, "scenario") && strstr(out, "workload"));
    const char *cmds[] = {"sample", "scenario", "workload", "synth",     "runtime",
                          "run",    "replay",   "metrics",  "butterfly", "isolate",
                          "import", "clocks",   "export"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cr_assert_eq(qreplay("%s --help", cmds[i]), 0, "%s --help", cmds[i]);
        cr_assert(strstr(out, "usage: qreplay"), "%s", out);
    }
    cr_assert_eq(qreplay("frobnicate"), 2);
    cr_assert(strstr(err, "unknown command 'frobnicate'"), "%s", err);
    cr_assert_eq(qreplay(""), 2);
    cr_assert_eq(qreplay("sample --bogus a b"), 2);
    cr_assert(strstr(err, "unknown option '--bogus'"), "%s", err);
    cr_assert_eq(qreplay("sample --th 5 a b"), 2);
    cr_assert(strstr(err, "--th") && strstr(err, "no unit"), "%s", err);
    cr_assert_eq(qreplay("sample --method best a b"), 2);
    cr_assert_eq(qreplay("sample onlyone"), 2);
    cr_assert_eq(qreplay("--version"), 0);
    cr_assert(strstr(out, "qreplay 0."), "%s", out);
    /* the exit statuses are documented */
    cr_assert_eq(qreplay("--help"), 0);
    cr_assert(strstr(out, "130") && strstr(out, "143") && strstr(out, "usage error"), "%s", out);
    /* every command's option lines come from its table: --help lists --help and -o where used */
    cr_assert_eq(qreplay("runtime --help"), 0);
    cr_assert(strstr(out, "-o, --out DIR") && strstr(out, "--no-arrivals") &&
                  strstr(out, "-h, --help"),
              "%s", out);
    /* an output that is one file says FILE, not DIR */
    static const char *files[] = {"diagnose", "blame", "trace", "isolate", "clocks"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        cr_assert_eq(qreplay("%s --help", files[i]), 0);
        cr_assert(strstr(out, "-o, --out ") && !strstr(out, "-o, --out DIR"), "%s --help: %s",
                  files[i], out);
    }
}

/* --set has no fixed cap: 100 of them reach the scenario, which refuses a key set twice (not a
 * "too many options" usage error); distinct keys all apply */
Test(cli, many_set_overrides)
{
    char args[8192] = "scenario scenarios/single-switch.ini --get buffer.size";
    for (int i = 1; i <= 100; i++) {
        char one[64];
        snprintf(one, sizeof one, " --set buffer.size=%dKB", i);
        strcat(args, one);
    }
    cr_assert_eq(qreplay("%s", args), 1, "a key set twice is refused: %s", err);
    cr_assert(strstr(err, "buffer.size"), "%s", err);
    char ok[8192] = "scenario scenarios/single-switch.ini --get run.seed";
    const char *keys[] = {"run.seed=7", "links.delay=2us", "buffer.alpha=2", "tcp.init_cwnd=4"};
    for (int i = 0; i < 4; i++) {
        strcat(ok, " --set ");
        strcat(ok, keys[i]);
    }
    cr_assert_eq(qreplay("%s", ok), 0, "%s", err);
    cr_assert_str_eq(out, "7\n");
}

Test(cli, sigterm_exits_143_and_leaves_nothing)
{
    /* the signal once its stage exists: mid-run, whatever the machine's speed */
    cr_assert_eq(qreplay("runtime scenarios/fattree-k4-websearch.ini --set traffic.duration=200ms "
                         "--set traffic.stop=400ms -o %s/term 2>%s/term.err & pid=$!; "
                         "for i in $(seq 6000); do ls -d %s/term.partial-* >/dev/null 2>&1 && "
                         "break; sleep 0.005; done; kill -TERM $pid; wait $pid",
                         dir, dir, dir),
                 143);
    cr_assert_not(exists("%s/term/recording.h5", dir));
    no_partials(dir);
}

Test(cli, scenario_prints_a_loadable_resolved_file)
{
    cr_assert_eq(qreplay("scenario scenarios/fattree-k4-websearch.ini --set buffer.size=1MiB"), 0,
                 "%s", err);
    char p[128];
    snprintf(p, sizeof p, "%s/r.ini", dir);
    FILE *f = fopen(p, "w");
    fputs(out, f);
    fclose(f);
    cr_assert_eq(qreplay("scenario %s/r.ini --get buffer.size", dir), 0, "%s", err);
    cr_assert_str_eq(out, "1MiB\n");
    cr_assert_eq(qreplay("scenario %s/r.ini --get sampling.th", dir), 0);
    cr_assert_str_eq(out, "2us,5us,10us\n");
    cr_assert_eq(qreplay("scenario --keys"), 0);
    cr_assert(strstr(out, "buffer.size") && strstr(out, "replay.margin"), "%s", out);
}

Test(cli, scenario_errors_name_file_line_and_key)
{
    FILE *f;
    char p[128];
    snprintf(p, sizeof p, "%s/bad.ini", dir);
    f = fopen(p, "w");
    fputs("[topology]\nk = 4\n[links]\nrat = 10Gbps\n", f);
    fclose(f);
    cr_assert_eq(qreplay("scenario %s", p), 1);
    cr_assert(strstr(err, "bad.ini:4: [links] rat: unknown key"), "%s", err);
    cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
    cr_assert_eq(qreplay("scenario scenarios/fattree-k4-websearch.ini --set topology.k=5"), 1);
    cr_assert(strstr(err, "[topology] k"), "%s", err);
    cr_assert_eq(qreplay("scenario scenarios/fattree-k4-websearch.ini --set links.rate=fast"), 1);
    cr_assert(strstr(err, "--set links.rate"), "%s", err);
    cr_assert_eq(qreplay("scenario %s/missing.ini", dir), 1);
    cr_assert(strstr(err, "missing.ini"), "%s", err);
}

static long h5_attr_i64(const char *path, const char *obj, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0, "cannot open %s", path);
    hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    int64_t v = -1;
    H5Aread(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
    H5Oclose(o);
    H5Fclose(f);
    return (long)v;
}

Test(cli, sample_pcap_and_csv_respect_the_bound)
{
    cr_assert_eq(qreplay("synth --quiet --packets 50000 --flows 5 --seed 3 %s/t.pcap", dir), 0,
                 "%s", err);
    cr_assert_eq(qreplay("synth --quiet --packets 50000 --flows 5 --seed 3 %s/t.csv", dir), 0, "%s",
                 err);
    const char *ths[] = {"0", "2us", "5us", "10us"};
    const long bound[] = {0, 2000, 5000, 10000};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(qreplay("sample --th %s %s/t.pcap %s/p.h5", ths[i], dir, dir), 0, "%s", err);
        cr_assert(strstr(out, "packets            50000"), "%s", out);
        char p[128];
        snprintf(p, sizeof p, "%s/p.h5", dir);
        long e = h5_attr_i64(p, "/sampling", "max_error_ns");
        cr_assert_leq(e, bound[i], "th %s: max error %ld", ths[i], e);
        cr_assert_eq(h5_attr_i64(p, "/sampling", "th_ns"), bound[i]);
        cr_assert_eq(qreplay("sample --quiet --th %s %s/t.csv %s/c.h5", ths[i], dir, dir), 0, "%s",
                     err);
        snprintf(p, sizeof p, "%s/c.h5", dir);
        cr_assert_leq(h5_attr_i64(p, "/sampling", "max_error_ns"), bound[i]);
        cr_assert_eq(h5_attr_i64(p, "/sampling", "packets"), 50000);
    }
    /* the CSV and the pcap carry the same times: the same number of records */
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/p.h5", dir);
    snprintf(b, sizeof b, "%s/c.h5", dir);
    cr_assert_eq(h5_attr_i64(a, "/sampling", "records"), h5_attr_i64(b, "/sampling", "records"));
}

Test(cli, synth_is_deterministic)
{
    cr_assert_eq(qreplay("synth --quiet --packets 3000 --seed 9 %s/a.pcap", dir), 0);
    cr_assert_eq(qreplay("synth --quiet --packets 3000 --seed 9 %s/b.pcap", dir), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cmp -s %s/a.pcap %s/b.pcap", dir, dir);
    cr_assert_eq(system(cmd), 0, "same seed, different pcaps");
    cr_assert_eq(qreplay("synth --quiet --packets 3000 --seed 10 %s/c.pcap", dir), 0);
    snprintf(cmd, sizeof cmd, "cmp -s %s/a.pcap %s/c.pcap", dir, dir);
    cr_assert_neq(system(cmd), 0);
}

Test(cli, sample_bad_inputs_leave_no_result)
{
    char p[128];
    cr_assert_eq(qreplay("synth --quiet --packets 1000 %s/t.pcap", dir), 0);
    /* truncated pcap */
    snprintf(p, sizeof p, "%s/t.pcap", dir);
    cr_assert_eq(truncate(p, 24 + 500 * 56 + 30), 0);
    /* A capture cut in its last record (tcpdump killed) keeps its whole packets */
    cr_assert_eq(qreplay("sample %s/t.pcap %s/o.h5", dir, dir), 0, "%s", err);
    cr_assert(strstr(err, "warning") && strstr(err, "t.pcap") && strstr(err, "at byte 28024") &&
                  strstr(err, "500 whole packets"),
              "%s", err);
    cr_assert(strstr(out, "packets            500"), "%s", out);
    snprintf(p, sizeof p, "%s/o.h5", dir);
    unlink(p);
    only_files("t.pcap", NULL);
    /* empty file, text file, missing file */
    snprintf(p, sizeof p, "%s/empty.pcap", dir);
    fclose(fopen(p, "w"));
    cr_assert_eq(qreplay("sample %s/empty.pcap %s/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "empty.pcap"), "%s", err);
    unlink(p);
    cr_assert_eq(qreplay("sample %s/nope.pcap %s/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "nope.pcap"), "%s", err);
    snprintf(p, sizeof p, "%s/x.txt", dir);
    FILE *f = fopen(p, "w");
    fputs("hello world, not a trace\n", f);
    fclose(f);
    cr_assert_eq(qreplay("sample %s/x.txt %s/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "x.txt"), "%s", err);
    unlink(p);
    /* CSV going backwards in a flow, a bad header, a bad time */
    snprintf(p, sizeof p, "%s/b.csv", dir);
    f = fopen(p, "w");
    fputs("flow,time_ns\na,100\nb,50\na,200\na,150\n", f);
    fclose(f);
    cr_assert_eq(qreplay("sample %s/b.csv %s/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "b.csv:5") && strstr(err, "back in time"), "%s", err);
    f = fopen(p, "w");
    fputs("flow,time\na,100\n", f);
    fclose(f);
    cr_assert_eq(qreplay("sample %s/b.csv %s/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "b.csv:1"), "%s", err);
    f = fopen(p, "w");
    fputs("flow,time_ns\na,1e5\n", f);
    fclose(f);
    cr_assert_eq(qreplay("sample %s/b.csv %s/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "b.csv:2"), "%s", err);
    unlink(p);
    /* output folder missing */
    cr_assert_eq(qreplay("synth --quiet --packets 100 %s/ok.pcap", dir), 0);
    cr_assert_eq(qreplay("sample %s/ok.pcap %s/no/such/dir/o.h5", dir, dir), 1);
    cr_assert(strstr(err, "no/such/dir"), "%s", err);
    only_files("t.pcap", "ok.pcap");
    cr_assert_not(exists("%s/o.h5", dir));
}

Test(cli, workload_is_deterministic_and_carries_the_scenario)
{
    cr_assert_eq(
        qreplay("workload scenarios/fattree-k4-websearch.ini --set traffic.duration=20ms -o %s/a",
                dir),
        0, "%s", err);
    cr_assert(strstr(out, "hosts              16"), "%s", out);
    cr_assert_eq(qreplay("workload --quiet scenarios/fattree-k4-websearch.ini --set "
                         "traffic.duration=20ms -o %s/b",
                         dir),
                 0, "%s", err);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s -d /flows %s/a/workload.h5 | tail -n +2 > %s/a.txt && "
             "%s -d /flows %s/b/workload.h5 | tail -n +2 > %s/b.txt && cmp -s %s/a.txt %s/b.txt",
             QR_H5DUMP, dir, dir, QR_H5DUMP, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "same seed, different schedules");
    snprintf(
        cmd, sizeof cmd,
        "%s -a /buffer.size -a /seed -a /code_version %s/a/workload.h5 | grep -c DATA > /dev/null",
        QR_H5DUMP, dir);
    cr_assert_eq(system(cmd), 0, "scenario attributes missing");
    cr_assert_eq(
        qreplay(
            "workload scenarios/fattree-k4-websearch.ini --set traffic.size_cdf=nope.cdf -o %s/c",
            dir),
        1);
    cr_assert(strstr(err, "size_cdf") && strstr(err, "nope.cdf"), "%s", err);
    cr_assert_not(exists("%s/c/workload.h5", dir));
}

Test(cli, runtime_records_the_single_switch_case)
{
    cr_assert_eq(qreplay("runtime scenarios/single-switch.ini -o %s/ss", dir), 0, "%s", err);
    cr_assert(strstr(out, "flows              12, 12 completed"), "%s", out);
    cr_assert(strstr(out, "all flows completed"), "%s", out);
    for (int h = 0; h < 3; h++)
        cr_assert(exists("%s/ss/pcap/h%04d.pcap", dir, h));
    cr_assert(exists("%s/ss/recording.h5", dir) && exists("%s/ss/truth/truth.h5", dir) &&
              exists("%s/ss/truth/arrivals.qra", dir));
    no_partials(dir);
    /* the recorded host traces are ordinary input to the sampler */
    cr_assert_eq(qreplay("sample --quiet --th 5us %s/ss/pcap/h0001.pcap %s/s1.h5", dir, dir), 0,
                 "%s", err);
    /* --no-arrivals leaves the log out */
    cr_assert_eq(qreplay("runtime --quiet --no-arrivals scenarios/single-switch.ini -o %s/na", dir),
                 0, "%s", err);
    cr_assert_str_eq(out, "");
    cr_assert_not(exists("%s/na/truth/arrivals.qra", dir));
}

Test(cli, runtime_bad_inputs_are_clear_errors_that_leave_no_recording)
{
    cr_assert_eq(qreplay("runtime"), 2);
    cr_assert(strstr(err, "SCENARIO"), "%s", err);
    cr_assert_eq(qreplay("runtime nope.ini -o %s/a", dir), 1);
    cr_assert(strstr(err, "nope.ini"), "%s", err);
    cr_assert_eq(qreplay("runtime scenarios/single-switch.ini --set tcp.bogus=1 -o %s/a", dir), 1);
    cr_assert(strstr(err, "bogus"), "%s", err);
    cr_assert_eq(
        qreplay("runtime scenarios/single-switch.ini --set tcp.variant=dctcp -o %s/a", dir), 1);
    cr_assert(strstr(err, "ecn_threshold"), "%s", err);
    /* a flow list naming a host the star does not have */
    char path[256];
    snprintf(path, sizeof path, "%s/flows.csv", dir);
    FILE *f = fopen(path, "w");
    fputs("src,dst,bytes,start\n0,1,10KB,0\n0,7,10KB,0\n", f);
    fclose(f);
    cr_assert_eq(
        qreplay("runtime scenarios/single-switch.ini --set traffic.flows=%s -o %s/a", path, dir),
        1);
    cr_assert(strstr(err, "flows.csv:3"), "%s", err);
    /* the output folder's place is taken by a file */
    snprintf(path, sizeof path, "%s/file", dir);
    fclose(fopen(path, "w"));
    cr_assert_eq(qreplay("runtime scenarios/single-switch.ini -o %s/file/out", dir), 1);
    cr_assert(strstr(err, "file/out"), "%s", err);
    cr_assert_not(exists("%s/a/recording.h5", dir));
    no_partials(dir);
}

Test(cli, runtime_interrupted_leaves_nothing)
{
    /* the signal once its stage exists: mid-run, whatever the machine's speed (200 ms of k=4
     * traffic take far longer than its first steps) */
    cr_assert_eq(qreplay("runtime scenarios/fattree-k4-websearch.ini --set traffic.duration=200ms "
                         "--set traffic.stop=400ms -o %s/int 2>%s/int.err & pid=$!; "
                         "for i in $(seq 6000); do ls -d %s/int.partial-* >/dev/null 2>&1 && "
                         "break; sleep 0.005; done; kill -INT $pid; wait $pid",
                         dir, dir, dir),
                 130);
    char path[256], msg[1024];
    snprintf(path, sizeof path, "%s/int.err", dir);
    slurp(path, msg, sizeof msg);
    cr_assert(strstr(msg, "interrupted"), "%s", msg);
    cr_assert_not(exists("%s/int/recording.h5", dir));
    no_partials(dir);
}

/* A full disk while HDF5 is written is one clear line and exit 1: no HDF5
 * diagnostics, no crash at exit, nothing left. Needs root for a small tmpfs. */
Test(cli, a_full_disk_is_a_clear_error)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to mount a small tmpfs");
    char m[256], cmd[512];
    snprintf(m, sizeof m, "%s/full", dir);
    cr_assert_eq(mkdir(m, 0777), 0);
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=200k qreplay-test %s 2>/dev/null", m);
    if (system(cmd) != 0)
        cr_skip_test("cannot mount a tmpfs here");
    cr_assert_eq(qreplay("synth --quiet --packets 200000 %s/big.pcap", dir), 0);
    int rc = qreplay("sample %s/big.pcap %s/o.h5", dir, m);
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", m);
    int empty = system(cmd) == 0;
    snprintf(cmd, sizeof cmd, "umount %s", m);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(rc, 1, "exit %d: %s", rc, err);
    cr_assert(strstr(err, "No space left on device") && !strstr(err, "HDF5"), "%s", err);
    cr_assert(empty, "a failed write leaves nothing on the full disk");
}

/* Real captures of both ends in, a recording replay and isolate read; bad inputs are
 * clear errors that write nothing and never touch an input. */
Test(cli, import_real_captures_then_replay_them)
{
    char p[160];
    snprintf(p, sizeof p, "%s/hosts.csv", dir);
    FILE *f = fopen(p, "w");
    fputs("address,host,capture\n10.77.0.1,0,pair-a.pcap\n10.77.0.2,2,pair-b.pcap\n", f);
    fclose(f);
    const char *caps = "tests/data/captures/pair-a.pcap tests/data/captures/pair-b.pcap";
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s --map %s -o %s/run", caps, p, dir),
                 0, "%s", err);
    cr_assert(strstr(out, "connections        2") && strstr(out, "drops (both   )    0 in 4") &&
                  strstr(out, "hosts              2 captured, 0 reconstructed") &&
                  strstr(out, "clock              1 pairs of hosts; offsets applied"),
              "%s", out);
    cr_assert(exists("%s/run/recording/pcap/h0001.pcap", dir), "every host has its pcap");
    cr_assert_eq(qreplay("replay %s/run --th 5us --mode tagged --quiet", dir), 0, "%s", err);
    cr_assert(exists("%s/run/replay/tagged_th_5/replay.h5", dir));
    /* the captured hosts ran the kernel's TCP: an isolated replay would run ns-3's */
    cr_assert_eq(qreplay("isolate %s/run --quiet", dir), 1);
    cr_assert(strstr(err, "their TCP is the kernel's"), "%s", err);
    cr_assert(!exists("%s/run/isolated.h5", dir), "nothing written");
    cr_assert_eq(qreplay("isolate %s/run --captured-tcp linux --quiet", dir), 2);
    cr_assert_eq(qreplay("isolate %s/run --captured-tcp ns3 --quiet", dir), 0, "%s", err);
    /* usage errors */
    cr_assert_eq(qreplay("import scenarios/single-switch.ini"), 2);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s --clock maybe", caps), 2);
    cr_assert(strstr(err, "--clock: 'maybe'"), "%s", err);
    /* one peer each and no map: which capture is whose cannot be told */
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s -o %s/x", caps, dir), 1);
    cr_assert(strstr(err, "cannot tell whose capture it is") && strstr(err, "pair-a.pcap"), "%s",
              err);
    /* a bad host map line names its file and line */
    f = fopen(p, "w");
    fputs("10.77.0.1,0,pair-a.pcap\n10.77.0.2,9,pair-b.pcap\n", f);
    fclose(f);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s --map %s -o %s/x", caps, p, dir),
                 1);
    cr_assert(strstr(err, "hosts.csv:2: host '9'"), "%s", err);
    cr_assert_not(exists("%s/x", dir));
    /* a capture inside the recording it would replace: refused, untouched */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp %s/run/recording/pcap/h0000.pcap %s/h0000.copy", dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s/run/recording/pcap/h0000.pcap "
                         "-o %s/run",
                         dir, dir),
                 1);
    cr_assert(strstr(err, "is inside") && strstr(err, "move it out first"), "%s", err);
    snprintf(cmd, sizeof cmd, "cmp -s %s/run/recording/pcap/h0000.pcap %s/h0000.copy", dir, dir);
    cr_assert_eq(system(cmd), 0, "the input is unchanged");
    /* captures and a map copied anywhere into the recording folder (not only pcap/): refused,
     * nothing deleted */
    snprintf(cmd, sizeof cmd,
             "cp %s/tests/data/captures/pair-a.pcap %s/tests/data/captures/pair-b.pcap "
             "%s/run/recording/ && printf '10.77.0.1,0,pair-a.pcap\\n10.77.0.2,1,pair-b.pcap\\n' "
             "> %s/run/recording/my-map.csv",
             QR_SOURCE_DIR, QR_SOURCE_DIR, dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s/run/recording/pair-*.pcap --map "
                         "%s/run/recording/my-map.csv -o %s/run",
                         dir, dir, dir),
                 1);
    cr_assert(strstr(err, "is inside"), "%s", err);
    cr_assert(exists("%s/run/recording/my-map.csv", dir) &&
              exists("%s/run/recording/pair-a.pcap", dir));
    /* a file of the user's in the recording folder would go with the recording: refused, kept */
    snprintf(cmd, sizeof cmd, "rm %s/run/recording/pair-*.pcap %s/run/recording/my-map.csv", dir,
             dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(p, sizeof p, "%s/run/recording/pcap/notes.txt", dir);
    f = fopen(p, "w");
    fputs("mine\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/hosts2.csv", dir);
    f = fopen(p, "w");
    fputs("address,host,capture\n10.77.0.1,0,pair-a.pcap\n10.77.0.2,2,pair-b.pcap\n", f);
    fclose(f);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s --map %s -o %s/run", caps, p, dir),
                 1);
    cr_assert(strstr(err, "pcap/notes.txt was not written by qreplay") &&
                  strstr(err, "move it out first"),
              "%s", err);
    cr_assert(exists("%s/run/recording/pcap/notes.txt", dir) &&
              exists("%s/run/recording/recording.h5", dir));
    /* a capture without a usable connection (one UDP datagram): an error that says why, with the
     * counts; no folder */
    snprintf(p, sizeof p, "%s/udp.pcap", dir);
    f = fopen(p, "wb");
    static const unsigned char
        udp[] = {0x4d, 0x3c, 0xb2, 0xa1, 2,  0, 4,   0, 0,  0,  0, 0, 0,  0,
                 0,    0,    0xff, 0xff, 0,  0, 101, 0, 0,  0,  1, 0, 0,  0,
                 0,    0,    0,    0,    28, 0, 0,   0, 28, 0,  0, 0, /* record: 1 s, 28 bytes */
                 0x45, 0,    0,    28,   0,  1, 0,   0, 64, 17, 0, 0, 10, 77,
                 0,    1,    10,   77,   0,  2, /* IPv4, UDP */
                 0x30, 0x39, 0x00, 0x35, 0,  8, 0,   0};
    fwrite(udp, 1, sizeof udp, f);
    fclose(f);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s -o %s/none", p, dir), 1);
    cr_assert(strstr(err, "udp.pcap: no TCP packet in 1 frames: 1 not TCP"), "%s", err);
    cr_assert(!exists("%s/none", dir), "a failed import leaves no folder");
    /* a folder where a file belongs */
    cr_assert_eq(qreplay("import scenarios/single-switch.ini tests/data/captures/pair-a.pcap "
                         "--map %s -o %s/none",
                         dir, dir),
                 1);
    cr_assert(strstr(err, "a folder, not a file"), "%s", err);
}

/* The clock estimator on a simulated recording, where the true offsets are known, and
 * the replay variant that applies it. On the star every pair of hosts sees an unqueued packet
 * each way (the handshake), so the estimates are exact and the reconciled tagged replay at th = 0
 * repeats the runtime's queue packet for packet, where the raw offsets do not. */
Test(cli, clocks_are_estimated_and_a_reconciled_replay_uses_them)
{
    cr_assert_eq(qreplay("runtime -q scenarios/single-switch.ini --set clock.max_offset=5us "
                         "-o %s/ss/recording",
                         dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("clocks %s/ss -o %s/clocks.h5", dir, dir), 0, "%s", err);
    cr_assert(strstr(out, "hosts              3, 2 estimated against a reference") &&
                  strstr(out, "error vs truth     mean |e| 0.0 ns, RMS 0.0 ns"),
              "%s", out);
    char p[256];
    snprintf(p, sizeof p, "%s/clocks.h5", dir);
    cr_assert_eq(h5_attr_i64(p, "/", "truth_known"), 1);
    cr_assert_eq(h5_attr_i64(p, "/", "estimated"), 2);
    /* the true offsets differ: the raw replay is not exact, the reconciled one is */
    cr_assert_eq(qreplay("replay -q %s/ss --th 0 --mode tagged", dir), 0, "%s", err);
    cr_assert_eq(qreplay("replay -q %s/ss --th 0 --mode tagged --clock reconcile", dir), 0, "%s",
                 err);
    snprintf(p, sizeof p, "%s/ss/replay/tagged_th_0_reconciled/replay.h5", dir);
    cr_assert(exists("%s", p));
    cr_assert_eq(qreplay("metrics %s/ss", dir), 0, "%s", err);
    const char *raw = strstr(out, "tagged_th_0 "), *rec = strstr(out, "tagged_th_0_reconciled ");
    cr_assert(raw && rec, "%s", out);
    double qr_raw = -1, qr_rec = -1, p99_rec = -1;
    cr_assert_eq(sscanf(raw, "tagged_th_0 %lf", &qr_raw), 1);
    cr_assert_eq(sscanf(rec, "tagged_th_0_reconciled %lf %lf", &qr_rec, &p99_rec), 2);
    cr_assert_gt(qr_raw, 0.0, "%s", out);
    cr_assert_eq(qr_rec, 0.0, "%s", out);
    cr_assert_eq(p99_rec, 0.0, "%s", out);
    /* usage errors and a folder with nothing to estimate from */
    cr_assert_eq(qreplay("replay %s/ss --clock maybe", dir), 2);
    cr_assert(strstr(err, "--clock") && strstr(err, "maybe"), "%s", err);
    cr_assert_eq(qreplay("clocks %s/ss --reference 7", dir), 1);
    cr_assert(strstr(err, "7"), "%s", err);
    cr_assert_eq(qreplay("clocks %s/nothing", dir), 1);
    cr_assert(strstr(err, "nothing"), "%s", err);
}

/* The round trip: a simulated recording exported as the Ethernet captures its hosts
 * would take (microsecond timestamps, every host's clock off by up to 5 us), turned into pcapng by
 * editcap and imported back, gives the same flows, packets and drops, and send and receive times
 * within 1 us (the timestamps' resolution) plus the clock estimate's error of the true ones. */
Test(cli, an_exported_recording_imports_back_the_same)
{
    if (!QR_EDITCAP[0])
        cr_skip_test("editcap is not installed");
    cr_assert_eq(qreplay("runtime -q scenarios/single-switch.ini -o %s/rt/recording", dir), 0, "%s",
                 err);
    cr_assert_eq(qreplay("export %s/rt -o %s/caps", dir, dir), 0, "%s", err);
    cr_assert(strstr(out, "captures           3 (Ethernet, microsecond timestamps)"), "%s", out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "mkdir %s/ng && for h in 0 1 2; do %s -F pcapng %s/caps/h000$h.pcap "
             "%s/ng/h000$h.pcapng || exit 1; done && sed 's/pcap$/pcapng/' %s/caps/hosts.csv "
             ">%s/ng/hosts.csv",
             dir, QR_EDITCAP, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s/ng/h0000.pcapng "
                         "%s/ng/h0001.pcapng %s/ng/h0002.pcapng --map %s/ng/hosts.csv -o %s/back",
                         dir, dir, dir, dir, dir),
                 0, "%s", err);
    cr_assert(strstr(out, "hosts              3 captured, 0 reconstructed"), "%s", out);

    char p[256], e[QR_ERRBUF_SIZE];
    qr_recording *rt = NULL, *bk = NULL;
    snprintf(p, sizeof p, "%s/rt/recording", dir);
    cr_assert_eq(qr_recording_open(&rt, p, NULL, e), 0, "%s", e);
    snprintf(p, sizeof p, "%s/back/recording", dir);
    cr_assert_eq(qr_recording_open(&bk, p, NULL, e), 0, "%s", e);
    snprintf(p, sizeof p, "%s/back/recording/recording.h5", dir);
    const int64_t base = h5_attr_i64(p, "/import", "time_base_ns");
    qr_h5_reader *h5 = NULL;
    qr_row_import_conn *conn = NULL;
    qr_row_import_host *ih = NULL;
    size_t n_conn = 0, n_ih = 0;
    cr_assert_eq(qr_h5_open(&h5, p, e), 0, "%s", e);
    cr_assert_eq(qr_h5_read_rows(h5, "/import/connections", &qr_schema_import_conn, (void **)&conn,
                                 &n_conn, e),
                 0, "%s", e);
    cr_assert_eq(
        qr_h5_read_rows(h5, "/import/hosts", &qr_schema_import_host, (void **)&ih, &n_ih, e), 0,
        "%s", e);
    qr_h5_close(h5);

    /* the same flows: each imported connection is the runtime's flow with its sender's port */
    const qr_flow_table *ft = qr_recording_flows(rt), *fb = qr_recording_flows(bk);
    size_t nf = qr_flow_table_flows(ft);
    cr_assert_eq(qr_flow_table_flows(fb), nf);
    cr_assert_eq(n_conn, nf);
    uint32_t *flow_of = calloc(nf, sizeof *flow_of);
    for (size_t i = 0; i < n_conn; i++) {
        const qr_flow *b = qr_flow_table_flow(fb, conn[i].flow);
        uint32_t f;
        cr_assert_eq(qr_flow_table_flow_of_sender(ft, qr_flow_table_host_addr(ft, b->src),
                                                  conn[i].port0, &f),
                     0, "connection %zu (port %u)", i, conn[i].port0);
        const qr_flow *a = qr_flow_table_flow(ft, f);
        cr_assert(a->src == b->src && a->dst == b->dst && a->bytes == b->bytes, "flow %u", f);
        flow_of[conn[i].flow] = f;
        /* a host's flows come in the order it opened them: the same sender ports as the run's,
         * so the same ECMP paths */
        cr_assert_eq(qr_flow_table_sender_port(fb, conn[i].flow), conn[i].port0, "flow %u", f);
    }

    /* the clock estimate: within the timestamps' resolution of the true offsets */
    cr_assert_eq(n_ih, 3);
    uint32_t n_hosts = qr_recording_hosts(rt);
    int64_t est_err[3], toff[3]; /* toff: the run's true clock offsets, from its truth */
    char rt_dir[4200];
    snprintf(rt_dir, sizeof rt_dir, "%s/rt/recording", dir);
    cr_assert_eq(qr_truth_clock_offsets(rt_dir, n_hosts, toff, e), 0, "%s", e);
    for (uint32_t h = 0; h < n_hosts; h++) {
        int64_t truth = toff[h] - toff[0];
        est_err[h] = ih[h].clock_applied_ns - truth;
        cr_assert_leq(llabs(est_err[h]), 1000, "host %u: estimate %" PRId64 " ns, true %" PRId64, h,
                      ih[h].clock_applied_ns, truth);
    }

    /* the same packets in each host's order, the same drops, and their times */
    uint64_t drops_rt = 0, drops_bk = 0, received = 0;
    for (uint32_t h = 0; h < n_hosts; h++) {
        size_t na = 0, nb = 0;
        const qr_rec_packet *a = qr_recording_packets(rt, h, &na);
        const qr_rec_packet *b = qr_recording_packets(bk, h, &nb);
        cr_assert_eq(na, nb, "host %u", h);
        const int64_t off_h = toff[h] - toff[0];
        for (size_t i = 0; i < na; i++) {
            uint32_t fb_ = qr_dir_flow(b[i].dir);
            uint32_t dir =
                qr_dir_is_ack(b[i].dir) ? qr_dir_ack(flow_of[fb_]) : qr_dir_data(flow_of[fb_]);
            cr_assert(dir == a[i].dir && b[i].seq == a[i].seq && b[i].pk.seq == a[i].pk.seq &&
                          b[i].pk.ack == a[i].pk.ack && b[i].pk.tcp_flags == a[i].pk.tcp_flags &&
                          b[i].pk.ip_len == a[i].pk.ip_len,
                      "host %u packet %zu", h, i);
            /* onto host 0's clock: the true time plus host 0's offset */
            int64_t want = a[i].pk.time_ns - off_h, got = b[i].pk.time_ns + base;
            cr_assert_leq(llabs(got - want), 1000 + llabs(est_err[h]),
                          "host %u packet %zu: sent %" PRId64 " ns, true %" PRId64, h, i, got,
                          want);
            uint64_t ida = qr_packet_id(a[i].dir, a[i].seq), idb = qr_packet_id(b[i].dir, b[i].seq);
            cr_assert_eq(qr_recording_detected(rt, ida), qr_recording_detected(bk, idb));
            drops_rt += (uint64_t)qr_recording_detected(rt, ida);
            drops_bk += (uint64_t)qr_recording_detected(bk, idb);
            int64_t ra, rb;
            int la = qr_recording_received(rt, ida, &ra), lb = qr_recording_received(bk, idb, &rb);
            cr_assert_eq(la, lb, "host %u packet %zu: received in one and not the other", h, i);
            if (la == 0) {
                uint32_t d = qr_flow_table_dir_dst(ft, a[i].dir);
                int64_t off_d = toff[d] - toff[0];
                cr_assert_leq(llabs(rb + base - (ra - off_d)), 1000 + llabs(est_err[d]),
                              "host %u packet %zu: received at %" PRId64 ", true %" PRId64, h, i,
                              rb + base, ra - off_d);
                received++;
            }
        }
    }
    cr_assert_eq(drops_rt, drops_bk);
    cr_assert_gt(drops_rt, 0, "the case has drops to compare");
    cr_assert_gt(received, 0);
    free(flow_of);
    qr_h5_rows_free(conn);
    qr_h5_rows_free(ih);
    qr_recording_close(rt);
    qr_recording_close(bk);

    /* the runtime's ground truth carried over: the round trip's replay scored against it */
    cr_assert_eq(qreplay("import -q scenarios/single-switch.ini %s/ng/h0000.pcapng "
                         "%s/ng/h0001.pcapng %s/ng/h0002.pcapng --map %s/ng/hosts.csv -o %s/back "
                         "--truth %s/rt",
                         dir, dir, dir, dir, dir, dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("replay -q %s/back --th 0 --mode tagged", dir), 0, "%s", err);
    cr_assert_eq(qreplay("metrics --no-figures %s/back", dir), 0, "%s", err);
    const char *row = strstr(out, "tagged_th_0 ");
    double qmean = -1, qp99 = -1;
    unsigned long run_drops = 0;
    cr_assert(row && sscanf(row, "tagged_th_0 %lf %lf %lu", &qmean, &qp99, &run_drops) == 3, "%s",
              out);
    snprintf(p, sizeof p, "%s/rt/recording/truth/truth.h5", dir);
    cr_assert_eq((long)run_drops, h5_attr_i64(p, "/drops", "rows"),
                 "every runtime drop carried over: %s", out);
    cr_assert(qmean >= 0 && qmean < 0.5, "the round trip replays close to the runtime: %s", out);
    /* --truth from a folder without ground truth: an error before anything is written */
    cr_assert_eq(qreplay("import scenarios/single-switch.ini %s/ng/h0000.pcapng --map "
                         "%s/ng/hosts.csv -o %s/t2 --truth %s/caps",
                         dir, dir, dir, dir),
                 1);
    cr_assert(strstr(err, "--truth") && strstr(err, "no ground truth"), "%s", err);
    cr_assert_not(exists("%s/t2", dir));

    /* bad input: usage errors, a recording with no receive times, a folder in the way */
    cr_assert_eq(qreplay("export %s/rt --precision ms", dir), 2);
    cr_assert(strstr(err, "--precision: 'ms'"), "%s", err);
    cr_assert_eq(qreplay("export %s/nothing -o %s/x", dir, dir), 1);
    cr_assert(strstr(err, "nothing"), "%s", err);
    cr_assert_not(exists("%s/x", dir));
    cr_assert_eq(qreplay("export %s/rt -o %s/ng", dir, dir), 1);
    cr_assert(strstr(err, "is not an earlier export"), "%s", err);
    cr_assert(exists("%s/ng/h0000.pcapng", dir), "the folder in the way is untouched");
    /* an earlier export is replaced, the same bytes again */
    snprintf(cmd, sizeof cmd, "cp %s/caps/h0001.pcap %s/h1.before", dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("export -q %s/rt -o %s/caps", dir, dir), 0, "%s", err);
    snprintf(cmd, sizeof cmd, "cmp -s %s/caps/h0001.pcap %s/h1.before", dir, dir);
    cr_assert_eq(system(cmd), 0, "export is deterministic");
}

/* The static buffer policy (each port its own limit, as a Linux switch of bfifos) in the
 * runtime and the replay: every drop is a port at its limit, and the exact replay (th = 0, no
 * clock offsets) repeats the runtime in both modes. */
Test(cli, static_buffer_policy_runs_and_replays_exactly)
{
    cr_assert_eq(qreplay("run scenarios/single-switch.ini --set buffer.policy=static --set "
                         "buffer.port_size=30KB --set sampling.th=0 --set clock.max_offset=0 "
                         "--no-figures -o %s/st",
                         dir),
                 0, "%s", err);
    for (int m = 0; m < 2; m++) {
        const char *name = m ? "tagged_th_0 " : "plain_th_0 ";
        const char *row = strstr(out, name);
        double qmean = -1, qp99 = -1, derr = -1;
        unsigned long rt = 0, rp = 0, fa = 9, fd = 9, wl = 9;
        cr_assert(row, "%s", out);
        cr_assert_eq(sscanf(row + strlen(name), "%lf %lf %lu %lu %lu %lu %lu %lf", &qmean, &qp99,
                            &rt, &rp, &fa, &fd, &wl, &derr),
                     8, "%s", row);
        cr_assert(qmean == 0 && qp99 == 0 && rt == rp && fa == 0 && fd == 0 && wl == 0 && derr == 0,
                  "%s", out);
        cr_assert_gt(rt, 0, "the limit was reached: %s", out);
    }
    char p[256], e[QR_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/st/recording/truth/truth.h5", dir);
    qr_h5_reader *h5 = NULL;
    qr_row_drop *drops = NULL;
    size_t n = 0;
    cr_assert_eq(qr_h5_open(&h5, p, e), 0, "%s", e);
    cr_assert_eq(qr_h5_read_rows(h5, "/drops", &qr_schema_drop, (void **)&drops, &n, e), 0, "%s",
                 e);
    qr_h5_close(h5);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(drops[i].reason, 1, "drop %zu: a port at its limit", i);
        cr_assert_eq(drops[i].threshold, 30000, "drop %zu: the threshold is the port's limit", i);
        cr_assert_gt(drops[i].queue_bytes + drops[i].bytes, 30000, "drop %zu fits", i);
    }
    qr_h5_rows_free(drops);
    /* a port limit without the static policy is refused, naming the key */
    cr_assert_eq(qreplay("scenario scenarios/single-switch.ini --set buffer.port_size=30KB"), 1);
    cr_assert(strstr(err, "port_size") && strstr(err, "static"), "%s", err);
    cr_assert_eq(qreplay("scenario scenarios/single-switch.ini --set buffer.policy=shared"), 1);
    cr_assert(strstr(err, "buffer.policy") || strstr(err, "policy"), "%s", err);
}
