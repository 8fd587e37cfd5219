/* Run folders with an identity: a recording's id is in everything made from it, and
 * what was made from another recording is refused, never read as this one's. A runtime's folder
 * replayed, then its recording replaced by an import of another run's captures (with that run's
 * truth carried over): metrics and
 * every analysis that would read the old replay refuse, naming it and what to do; a replay of the
 * new recording is accepted again. The same scenario run twice by the same code is the same
 * recording (the same id), so its replays stay valid. */
#include "harness.h"

#include <fcntl.h>
#include <sys/file.h>

TestSuite(identity, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 300);

#define SMALL "scenarios/single-switch.ini --set traffic.duration=2ms --set traffic.stop=4ms"

static void recording_id(const char *rec_dir, char *id, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "h5dump -a /recording_id %s/recording.h5 | grep -o '\"[0-9a-f]*\"'",
             rec_dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(id, (int)size, p), "no recording_id in %s", rec_dir);
    pclose(p);
}

Test(identity, results_of_a_replaced_recording_are_removed_or_refused)
{
    cr_assert_eq(qreplay("runtime " SMALL " -o %s/a/recording --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("replay %s/a --th 0 --mode tagged --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("metrics %s/a --quiet", dir), 0, "%s", err);
    cr_assert(exists("%s/a/figures/qdiff_cdf.png", dir));
    /* what the user put there */
    char p[256];
    snprintf(p, sizeof p, "%s/a/notes.txt", dir);
    FILE *f = fopen(p, "w");
    fputs("mine\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/a/figures/mine.png", dir);
    f = fopen(p, "w");
    fputs("mine\n", f);
    fclose(f);
    /* another run's captures, imported over a's recording */
    cr_assert_eq(qreplay("runtime " SMALL " --set run.seed=7 -o %s/b/recording --quiet", dir), 0,
                 "%s", err);
    cr_assert_eq(qreplay("export %s/b -o %s/caps --quiet", dir, dir), 0, "%s", err);
    cr_assert_eq(qreplay("import " SMALL " %s/caps/h*.pcap --map %s/caps/hosts.csv --truth %s/b "
                         "-o %s/a",
                         dir, dir, dir, dir),
                 0, "%s", err);
    /* the old recording's replay, results and figures are gone, said so; the user's files stay */
    cr_assert(strstr(err, "removed 2 results made from the recording this one replaced"), "%s",
              err);
    cr_assert(!exists("%s/a/replay/tagged_th_0", dir) && !exists("%s/a/results.h5", dir) &&
              !exists("%s/a/figures/qdiff_cdf.png", dir));
    cr_assert(exists("%s/a/notes.txt", dir) && exists("%s/a/figures/mine.png", dir));
    /* another recording's replay put back by hand is refused, named, with what to do */
    cr_assert_eq(qreplay("replay %s/b --th 0 --mode tagged --quiet", dir), 0, "%s", err);
    snprintf(p, sizeof p, "mkdir -p %s/a/replay && cp -r %s/b/replay/tagged_th_0 %s/a/replay/", dir,
             dir, dir);
    cr_assert_eq(system(p), 0);
    cr_assert_eq(qreplay("metrics %s/a --no-figures --quiet", dir), 1);
    cr_assert(strstr(err, "replay/tagged_th_0") && strstr(err, "another recording") &&
                  strstr(err, "qreplay replay"),
              "%s", err);
    cr_assert_eq(qreplay("diagnose %s/a --no-figures --quiet", dir), 1);
    cr_assert(strstr(err, "arrivals.qra") && strstr(err, "another recording"), "%s", err);
    cr_assert_eq(qreplay("blame %s/a --no-figures --quiet", dir), 1);
    cr_assert(strstr(err, "another recording"), "%s", err);
    cr_assert(!exists("%s/a/diagnosis.h5", dir) && !exists("%s/a/blame.h5", dir));
    /* replayed again, the folder is whole again */
    cr_assert_eq(qreplay("replay %s/a --th 0 --mode tagged --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("diagnose %s/a --no-figures --quiet", dir), 0, "%s", err);
    /* a runtime of the same scenario over it again: its own results are kept */
    cr_assert_eq(qreplay("runtime " SMALL " --set run.seed=7 -o %s/b/recording", dir), 0, "%s",
                 err);
    cr_assert(exists("%s/b/replay/tagged_th_0/replay.h5", dir) && !strstr(err, "removed"), "%s",
              err);
}

Test(identity, the_same_scenario_and_code_is_the_same_recording)
{
    char a[128], b[128], c[128];
    cr_assert_eq(qreplay("runtime " SMALL " -o %s/x/recording --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("runtime " SMALL " -o %s/y/recording --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("runtime " SMALL " --set run.seed=9 -o %s/z/recording --quiet", dir), 0,
                 "%s", err);
    char p[512];
    snprintf(p, sizeof p, "%s/x/recording", dir);
    recording_id(p, a, sizeof a);
    snprintf(p, sizeof p, "%s/y/recording", dir);
    recording_id(p, b, sizeof b);
    snprintf(p, sizeof p, "%s/z/recording", dir);
    recording_id(p, c, sizeof c);
    cr_assert_str_eq(a, b, "one scenario, one code: one recording");
    cr_assert_str_neq(a, c, "another seed is another recording");
    /* a replay of x is valid for y: they are the same recording */
    cr_assert_eq(qreplay("replay %s/x --th 0 --mode tagged --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("diagnose %s/y --arrivals %s/x/replay/tagged_th_0/arrivals.qra "
                         "--no-figures --quiet",
                         dir, dir),
                 0, "%s", err);
    cr_assert_eq(qreplay("diagnose %s/z --arrivals %s/x/replay/tagged_th_0/arrivals.qra "
                         "--no-figures --quiet",
                         dir, dir),
                 1);
    cr_assert(strstr(err, "another recording"), "%s", err);
}

/* export writes only where it wrote before: into an empty folder or over its own earlier export
 * (marked), never over another recording's send traces or a user's folder of captures. */
Test(identity, export_never_replaces_what_it_did_not_write)
{
    cr_assert_eq(qreplay("runtime " SMALL " -o %s/a/recording --quiet", dir), 0, "%s", err);
    cr_assert_eq(qreplay("runtime " SMALL " --set run.seed=3 -o %s/b/recording --quiet", dir), 0,
                 "%s", err);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r %s/b/recording/pcap %s/b-pcap-before", dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("export %s/a -o %s/b/recording/pcap --quiet", dir, dir), 1);
    cr_assert(strstr(err, "not an earlier export"), "%s", err);
    snprintf(cmd, sizeof cmd, "diff -r %s/b/recording/pcap %s/b-pcap-before", dir, dir);
    cr_assert_eq(system(cmd), 0, "b's traces are untouched");
    cr_assert_eq(qreplay("replay %s/b --th 0 --mode tagged --quiet", dir), 0, "%s", err);
    /* a user's folder of hNNNN.pcap files without the mark */
    snprintf(cmd, sizeof cmd, "mkdir %s/mine && cp %s/a/recording/pcap/h0000.pcap %s/mine/", dir,
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("export %s/a -o %s/mine --quiet", dir, dir), 1);
    cr_assert(exists("%s/mine/h0000.pcap", dir));
    /* its own earlier export is replaced */
    cr_assert_eq(qreplay("export %s/a -o %s/caps --quiet", dir, dir), 0, "%s", err);
    cr_assert_eq(qreplay("export %s/a -o %s/caps --precision ns --quiet", dir, dir), 0, "%s", err);
    cr_assert(exists("%s/caps/.qreplay-export", dir) && exists("%s/caps/hosts.csv", dir));
}

/* A replay's name is a folder's: never cut (two long names would share one folder). */
Test(identity, a_name_too_long_is_refused_not_cut)
{
    cr_assert_eq(qreplay("runtime " SMALL " -o %s/a/recording --quiet", dir), 0, "%s", err);
    char name[260];
    memset(name, 'n', 250);
    name[250] = '\0';
    cr_assert_eq(qreplay("replay %s/a --th 0 --name %s --quiet", dir, name), 2);
    cr_assert(strstr(err, "--name") && strstr(err, "250 characters"), "%s", err);
    cr_assert(!exists("%s/a/replay", dir), "nothing made");
    name[200] = '\0';
    cr_assert_eq(qreplay("replay %s/a --th 0 --name %s --quiet", dir, name), 0, "%s", err);
}

/* Two commands writing into one run folder: the second fails at once, naming the folder and the
 * process that holds it, and writes nothing (two whatif runs into one folder both "succeeded",
 * the last silently winning). */
Test(identity, a_folder_in_use_is_refused_at_once)
{
    cr_assert_eq(qreplay("runtime " SMALL " -o %s/a/recording --quiet", dir), 0, "%s", err);
    char lock[256];
    snprintf(lock, sizeof lock, "%s/a/.qreplay-lock", dir);
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    cr_assert_eq(pwrite(fd, "4242\n", 5, 0), 5);
    cr_assert_eq(qreplay("whatif %s/a --vary buffer.alpha=1,2 --no-figures --quiet", dir), 1);
    cr_assert(strstr(err, "in use by another qreplay command (process 4242)"), "%s", err);
    cr_assert(!exists("%s/a/whatif", dir));
    cr_assert_eq(qreplay("replay %s/a --th 0 --quiet", dir), 1);
    cr_assert(!exists("%s/a/replay", dir));
    close(fd); /* released: the folder is free again */
    cr_assert_eq(qreplay("replay %s/a --th 0 --quiet", dir), 0, "%s", err);
}
