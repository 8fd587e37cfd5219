/* qreplay tiers: the multi-tier services of scenarios/tiers over ns-3's TCP. What the
 * applications logged agrees with the truth (every request answered, every message read whole,
 * each parent had arrived whole at its child's sender before the child left, the logged times
 * the true ones moved by each host's constant clock offset); runs are deterministic; qreplay
 * paths reaches WAP5's accuracy on the trace and names the planted faults; bad input is a clear
 * error that leaves an old output untouched. */
#include "harness.h"

#include <inttypes.h>

#include "qreplay/error.h"
#include "qreplay/messages.h"
#include "qreplay/tiers_truth.h"

TestSuite(tiers_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 300);

/* The trace and the truth of run folder d agree, whatever the clocks: see above. */
static void trace_agrees_with_truth(const char *d, int64_t max_offset)
{
    char path[160], err_[QR_ERRBUF_SIZE];
    qr_msg *m;
    size_t n;
    uint32_t hosts;
    snprintf(path, sizeof path, "%s/messages.csv", d);
    cr_assert_eq(qr_msgs_read(path, &m, &n, &hosts, err_), QR_OK, "%s", err_);
    qr_tiers_truth *t;
    snprintf(path, sizeof path, "%s/truth/tiers.csv", d);
    cr_assert_eq(qr_tiers_truth_read(path, &t, err_), QR_OK, "%s", err_);
    uint64_t *par = malloc(n * sizeof *par);
    int64_t *net = malloc(n * sizeof *net), off[64];
    int have[64] = {0};
    qr_tiers_truth_match_report r;
    cr_assert_eq(qr_tiers_truth_match(t, m, n, NULL, 0, par, net, &r, err_), QR_OK, "%s", err_);
    cr_assert_eq(r.matched, n);
    cr_assert_eq(r.unobserved + r.parent_unseen, 0);
    size_t nr;
    const qr_tiers_truth_row *rows = qr_tiers_truth_rows(t, &nr);
    cr_assert_eq(nr, n);
    /* the rows by id are the messages in order (the machine numbers them as it sends) */
    const qr_tiers_truth_row **by_id = calloc(n, sizeof *by_id);
    for (size_t i = 0; i < nr; i++) {
        cr_assert_lt(rows[i].id, n);
        by_id[rows[i].id] = &rows[i];
    }
    uint64_t requests = 0;
    for (size_t i = 0; i < n; i++) {
        const qr_tiers_truth_row *w = by_id[i];
        cr_assert_neq(m[i].recv_ns, QR_MSG_UNTRACED, "message %zu never read whole", i);
        cr_assert_gt(net[i], 0, "message %zu took no time", i);
        /* each host's clock: a constant offset, at most max_offset either way */
        int64_t so = m[i].send_ns - w->true_send_ns, ro = m[i].recv_ns - w->true_recv_ns;
        for (int k = 0; k < 2; k++) {
            uint32_t h = k ? m[i].dst : m[i].src;
            int64_t o = k ? ro : so;
            cr_assert_lt(h, 64);
            if (!have[h]) {
                have[h] = 1;
                off[h] = o;
                cr_assert_leq(o < 0 ? -o : o, max_offset, "host %u off by %" PRId64, h, o);
            }
            cr_assert_eq(o, off[h], "host %u: message %zu off by %" PRId64 ", not %" PRId64, h, i,
                         o, off[h]);
        }
        if (par[i] == UINT64_MAX) {
            requests++;
            continue;
        }
        cr_assert_eq(m[par[i]].dst, m[i].src);
        cr_assert_leq(by_id[par[i]]->true_recv_ns, w->true_send_ns, "message %zu", i);
    }
    cr_assert_gt(requests, 100);
    free(by_id);
    free(par);
    free(net);
    free(m);
    qr_tiers_truth_destroy(t);
}

Test(tiers_cli, the_trace_agrees_with_the_truth_and_runs_repeat)
{
    cr_assert_eq(
        qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/a --set clock.max_offset=2ms", dir),
        0, "%s", err);
    cr_assert(strstr(out, "answered by"), "%s", out);
    uint64_t req = 0, ans = 0;
    cr_assert_eq(
        sscanf(strstr(out, "tiers: "), "tiers: %" SCNu64 " requests, %" SCNu64, &req, &ans), 2,
        "%s", out);
    cr_assert_eq(req, ans, "%s", out);
    char d[96];
    snprintf(d, sizeof d, "%s/a", dir);
    trace_agrees_with_truth(d, 2000000);
    /* the same seed: the same bytes */
    cr_assert_eq(
        qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/b --set clock.max_offset=2ms", dir),
        0, "%s", err);
    char pa[128], pb[128];
    size_t na, nb;
    snprintf(pa, sizeof pa, "%s/a/messages.csv", dir);
    snprintf(pb, sizeof pb, "%s/b/messages.csv", dir);
    unsigned char *x = slurp_bin(pa, &na), *y = slurp_bin(pb, &nb);
    cr_assert(na == nb && !memcmp(x, y, na), "two runs of one seed differ");
    free(x);
    free(y);
    /* a fat tree, another seed and load: the same agreement */
    cr_assert_eq(qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/c --network "
                         "scenarios/fattree-k4-sweep-ci.ini --seed 7 --rate 1000 --duration 300ms",
                         dir),
                 0, "%s", err);
    snprintf(d, sizeof d, "%s/c", dir);
    trace_agrees_with_truth(d, INT64_MAX);
}

/* WAP5's accuracy at the base load, three seeds; the faults named by every method that names. */
Test(tiers_cli, paths_finds_true_parents_and_the_planted_faults)
{
    for (int seed = 1; seed <= 3; seed++) {
        cr_assert_eq(qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/s%d --seed %d -q", dir,
                             seed, seed),
                     0, "%s", err);
        cr_assert_eq(qreplay("paths --messages %s/s%d/messages.csv --truth %s/s%d/truth/tiers.csv "
                             "--outside 0,1,2",
                             dir, seed, dir, seed),
                     0, "%s", err);
        double share = 0;
        const char *s = strstr(out, "messages linked to their true parent (");
        cr_assert(s, "%s", out);
        cr_assert_eq(sscanf(s, "messages linked to their true parent (%lf%%)", &share), 1);
        cr_assert_geq(share, 95.0, "seed %d: %s", seed, out);
        cr_assert(strstr(out, "0 named wrongly"), "%s", out);
    }
    cr_assert_eq(qreplay("tiers scenarios/tiers/three-tier-faults.tiers -o %s/f -q", dir), 0, "%s",
                 err);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(
            qreplay(
                "paths --messages %s/f/messages.csv --truth %s/f/truth/tiers.csv --outside 0,1,2 "
                "--method %s -o %s/f/%s --no-figures",
                dir, dir, k ? "nest" : "link", dir, k ? "nest" : "link"),
            0, "%s", err);
        cr_assert(strstr(out, "slow host named, slow link named; 0 named wrongly"), "%s", out);
    }
}

/* The line of out that starts with prefix, copied into buf ("" if none). */
static void line_of(const char *prefix, char *buf, size_t len)
{
    const char *s = strstr(out, prefix);
    size_t n = s ? strcspn(s, "\n") : 0;
    snprintf(buf, len, "%.*s", (int)n, s ? s : "");
}

/* Only the scorer reads the truth: with --truth the analysis (its roots, its instances, what it
 * names slow) is what it is without, with and without --outside, for each method. */
Test(tiers_cli, the_truth_is_read_only_by_the_scorer)
{
    cr_assert_eq(qreplay("tiers scenarios/tiers/three-tier-faults.tiers -o %s/f -q --duration "
                         "300ms",
                         dir),
                 0, "%s", err);
    static const char *const methods[] = {"link", "nest", "conv"};
    for (int k = 0; k < 6; k++) {
        const char *oflag = k % 2 ? " --outside 0,1,2" : "";
        char with[2][512], without[2][512];
        cr_assert_eq(
            qreplay("paths --messages %s/f/messages.csv --method %s%s", dir, methods[k / 2], oflag),
            0, "%s", err);
        line_of(methods[k / 2], without[0], sizeof without[0]);
        line_of("slow", without[1], sizeof without[1]);
        cr_assert_eq(qreplay("paths --messages %s/f/messages.csv --truth %s/f/truth/tiers.csv "
                             "--method %s%s",
                             dir, dir, methods[k / 2], oflag),
                     0, "%s", err);
        cr_assert(strstr(out, "score: "), "%s", out);
        line_of(methods[k / 2], with[0], sizeof with[0]);
        line_of("slow", with[1], sizeof with[1]);
        for (int j = 0; j < 2; j++) {
            cr_assert_neq(without[j][0], 0, "%s", out);
            cr_assert_str_eq(with[j], without[j], "%s%s", methods[k / 2], oflag);
        }
        /* without --outside the user is told every host counts as the application */
        cr_assert_eq(!!strstr(err, "no --outside"), !*oflag, "%s", err);
    }
}

/* tshark's count of the TCP frames in a capture (-1: no tshark). */
static long tshark_tcp_frames(const char *path)
{
    if (!QR_TSHARK[0])
        return -1;
    char cmd[600], line[64];
    snprintf(cmd, sizeof cmd, "'%s' -r '%s' -Y tcp -T fields -e frame.number 2>/dev/null | wc -l",
             QR_TSHARK, path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    long n = fgets(line, sizeof line, f) ? atol(line) : -1;
    pclose(f);
    return n;
}

/* --pcap: every host's NIC captured as tcpdump would (PPP frames, on the host's clock). The
 * import reads every TCP frame tshark reads, each sent or received by its capture's host; the
 * messages cut from the captures are as many as the applications logged. */
Test(tiers_cli, the_hosts_captures_hold_every_frame_and_message)
{
    cr_assert_eq(
        qreplay("tiers scenarios/tiers/three-tier.tiers --pcap -o %s/c -q --duration 300ms "
                "--set clock.max_offset=50us",
                dir),
        0, "%s", err);
    cr_assert_eq(
        qreplay("import scenarios/tiers/rpc-star.ini %s/c/pcap/h0.pcap %s/c/pcap/h1.pcap "
                "%s/c/pcap/h2.pcap %s/c/pcap/h3.pcap %s/c/pcap/h4.pcap %s/c/pcap/h5.pcap "
                "%s/c/pcap/h6.pcap %s/c/pcap/h7.pcap %s/c/pcap/h8.pcap --map %s/c/hosts.csv "
                "--network scenario -o %s/c/imp",
                dir, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir),
        0, "%s", err);
    for (int h = 0; h < 9; h++) {
        char path[256], want[128];
        snprintf(path, sizeof path, "%s/c/pcap/h%d.pcap", dir, h);
        long n = tshark_tcp_frames(path);
        if (n < 0)
            cr_skip_test("tshark is not installed");
        cr_assert_gt(n, 0, "host %d", h);
        const char *at = strstr(out, path);
        cr_assert(at, "%s", out);
        snprintf(want, sizeof want, "frames           %ld: %ld TCP, ", n, n);
        cr_assert(strstr(at, want) && strstr(at, want) < at + 400, "host %d: %s\n%s", h, want, at);
    }
    cr_assert(strstr(out, "hosts              9 captured"), "%s", out);
    qr_msg *m;
    size_t nm;
    uint32_t hosts;
    char path[256], err_[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/c/messages.csv", dir);
    cr_assert_eq(qr_msgs_read(path, &m, &nm, &hosts, err_), QR_OK, "%s", err_);
    free(m);
    cr_assert_eq(qreplay("paths --map %s/c/hosts.csv %s/c/pcap/h0.pcap %s/c/pcap/h1.pcap "
                         "%s/c/pcap/h2.pcap %s/c/pcap/h3.pcap %s/c/pcap/h4.pcap %s/c/pcap/h5.pcap "
                         "%s/c/pcap/h6.pcap %s/c/pcap/h7.pcap %s/c/pcap/h8.pcap --outside 0,1,2",
                         dir, dir, dir, dir, dir, dir, dir, dir, dir, dir),
                 0, "%s", err);
    char want[64];
    snprintf(want, sizeof want, "link: %zu messages,", nm);
    cr_assert(strstr(out, want), "%s\n%s", want, out);
}

Test(tiers_cli, bad_input_is_refused_and_the_old_output_kept)
{
    cr_assert_eq(qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/o -q --duration 50ms", dir),
                 0, "%s", err);
    char path[128], before[1 << 16], after[1 << 16];
    snprintf(path, sizeof path, "%s/o/messages.csv", dir);
    slurp(path, before, sizeof before);
    /* a host the network lacks, a bad spec, a bad option */
    cr_assert_neq(qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/o --network "
                          "scenarios/single-switch.ini --set topology.hosts=4",
                          dir),
                  0);
    cr_assert(strstr(err, "the network has hosts 0 to 3"), "%s", err);
    snprintf(path, sizeof path, "%s/bad.tiers", dir);
    FILE *f = fopen(path, "w");
    fputs("tier a hosts=1 calls=nowhere\nclients hosts=0 rate=10/s\n", f);
    fclose(f);
    cr_assert_neq(qreplay("tiers %s -o %s/o", path, dir), 0);
    cr_assert(strstr(err, "bad.tiers: ") && strstr(err, "nowhere"), "%s", err);
    cr_assert_neq(qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/o --rate -3", dir), 0);
    cr_assert(strstr(err, "--rate"), "%s", err);
    cr_assert_neq(qreplay("tiers scenarios/tiers/three-tier.tiers", dir), 0);
    cr_assert(strstr(err, "-o DIR is required"), "%s", err);
    snprintf(path, sizeof path, "%s/o/messages.csv", dir);
    slurp(path, after, sizeof after);
    cr_assert_str_eq(before, after, "the old trace was touched");
    /* a truth that is not one, and one of another run: refused, or counted as unmatched */
    cr_assert_neq(qreplay("paths --messages %s/o/messages.csv --truth %s/o/messages.csv", dir, dir),
                  0);
    cr_assert(strstr(err, "not a service's truth"), "%s", err);
    cr_assert_eq(qreplay("tiers scenarios/tiers/three-tier.tiers -o %s/p -q --duration 50ms "
                         "--seed 9",
                         dir),
                 0, "%s", err);
    cr_assert_eq(
        qreplay("paths --messages %s/o/messages.csv --truth %s/p/truth/tiers.csv --outside 0,1,2",
                dir, dir),
        0, "%s", err);
    cr_assert(strstr(out, "not matched: ") && !strstr(out, "not matched: 0 "), "%s", out);
}
