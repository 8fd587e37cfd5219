/* qreplay paths on the shipped multi-tier services (scenarios/tiers): the planted slow host and
 * link named and scored; a simulated trace written out and read back gives the same analysis;
 * nesting and convolution run; bad traces and options are clear errors that leave an old output
 * untouched. */
#include "harness.h"

TestSuite(paths_cli, .init = qr_test_setup, .fini = qr_test_teardown, .timeout = 300);

/* The lines of the last output from the one starting with `from` (the summary and patterns). */
static void section(char *buf, size_t size, const char *from)
{
    const char *s = strstr(out, from);
    snprintf(buf, size, "%s", s ? s : "");
    char *score = strstr(buf, "\nscore:");
    if (score)
        score[1] = 0;
}

Test(paths_cli, names_the_planted_faults_and_reads_its_own_trace_back)
{
    cr_assert_eq(qreplay("paths --tiers scenarios/tiers/three-tier-faults.tiers -o %s/p "
                         "--write-messages %s/m.csv --top 40",
                         dir, dir),
                 0, "%s", err);
    cr_assert(strstr(out, "slow link 4-6:"), "%s", out);
    cr_assert(strstr(out, "slow host 5:"), "%s", out);
    cr_assert(strstr(out, "slow host named, slow link named; 0 named wrongly"), "%s", out);
    char first[1 << 15], second[1 << 15], path[128];
    section(first, sizeof first, "slow");
    snprintf(path, sizeof path, "%s/p/paths.h5", dir);
    cr_assert_eq(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/p/figures/paths_timelines.png", dir);
    cr_assert_eq(access(path, F_OK), 0);
    /* the trace as a file: the same messages, the same patterns (without the truth's column) */
    cr_assert_eq(qreplay("paths --messages %s/m.csv --outside 0,1,2 -o %s/q --top 40 --no-figures",
                         dir, dir),
                 0, "%s", err);
    section(second, sizeof second, "slow");
    cr_assert(!strstr(out, "score:"), "a trace has no truth: %s", out);
    /* compare the pattern rows' shapes and delays: drop the counts' true column */
    char *a = strstr(first, "\n1 "), *b = strstr(second, "\n1 ");
    cr_assert(a && b);
    char *ra = strtok(a, "\n");
    size_t rows = 0;
    char copy[1 << 15];
    snprintf(copy, sizeof copy, "%s", b);
    char *save = NULL, *rb = strtok_r(copy, "\n", &save);
    for (; ra && rb; ra = strtok(NULL, "\n"), rb = strtok_r(NULL, "\n", &save), rows++) {
        const char *sa = strchr(ra, '>') ? strrchr(ra, ' ') : ra,
                   *sb = strchr(rb, '>') ? strrchr(rb, ' ') : rb;
        cr_assert_str_eq(sa, sb, "row %zu differs:\n%s\n%s", rows, ra, rb);
    }
    cr_assert_gt(rows, 10);
}

Test(paths_cli, nesting_and_load)
{
    cr_assert_eq(qreplay("paths --tiers scenarios/tiers/three-tier.tiers --method nest "
                         "--rate 3000 --duration 200ms"),
                 0, "%s", err);
    cr_assert(strstr(out, "nest: "), "%s", out);
    cr_assert(strstr(out, "slow: no host or link stands out"), "%s", out);
    double share;
    const char *s = strstr(out, "true parent (");
    cr_assert(s && sscanf(s, "true parent (%lf%%)", &share) == 1, "%s", out);
    cr_assert_gt(share, 50.0);
    cr_assert_eq(qreplay("paths --tiers scenarios/tiers/three-tier.tiers --method conv "
                         "--rate 3000 --duration 200ms"),
                 0, "%s", err);
    cr_assert(strstr(out, "conv: "), "%s", out);
}

Test(paths_cli, bad_input_is_an_error_and_the_old_output_stays)
{
    char path[128], buf[64];
    snprintf(path, sizeof path, "%s/old", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/old/paths.h5", dir);
    FILE *f = fopen(path, "w");
    fputs("old results", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    f = fopen(path, "w");
    fputs("# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n0,1,0,10,20,100\n"
          "1,1,0,30,40,100\n",
          f);
    fclose(f);
    cr_assert_eq(qreplay("paths --messages %s/bad.csv -o %s/old", dir, dir), 1);
    cr_assert(strstr(err, "bad.csv:4: a message from host 1 to itself"), "%s", err);
    snprintf(path, sizeof path, "%s/old/paths.h5", dir);
    slurp(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "old results");
    snprintf(path, sizeof path, "%s/foreign.csv", dir);
    f = fopen(path, "w");
    fputs("src,dst\n", f);
    fclose(f);
    cr_assert_eq(qreplay("paths --messages %s/foreign.csv", dir), 1);
    cr_assert(strstr(err, "foreign.csv:1: not a message trace"), "%s", err);
    cr_assert_eq(qreplay("paths --messages %s/none.csv", dir), 1);
    cr_assert(strstr(err, "none.csv"), "%s", err);
    cr_assert_eq(qreplay("paths"), 2);
    cr_assert_eq(qreplay("paths --tiers x --messages y"), 2);
    cr_assert_eq(qreplay("paths --tiers scenarios/tiers/three-tier.tiers --method guess"), 2);
    cr_assert_eq(qreplay("paths --tiers scenarios/tiers/three-tier.tiers --k 99"), 2);
    cr_assert_eq(qreplay("paths --tiers scenarios/tiers/three-tier.tiers -o scenarios/tiers"), 1);
    cr_assert(strstr(err, "three-tier.tiers"), "%s", err);
    snprintf(path, sizeof path, "%s/t.tiers", dir);
    f = fopen(path, "w");
    fputs("tier a hosts=1 calls=b\nclients hosts=0 rate=10/s\n", f);
    fclose(f);
    cr_assert_eq(qreplay("paths --tiers %s/t.tiers", dir), 1);
    cr_assert(strstr(err, "t.tiers: tier a: calls an unknown tier 'b'"), "%s", err);
}

/* Real captures of both ends of an RPC session (five rounds): ten messages, five requests whose
 * path is the call and its reply. */
Test(paths_cli, real_captures_of_both_ends)
{
    char map[128];
    snprintf(map, sizeof map, "%s/map.csv", dir);
    FILE *f = fopen(map, "w");
    fputs("10.78.1.1,0,rpc-think-client.pcap\n10.78.2.1,1,rpc-think-server.pcap\n", f);
    fclose(f);
    cr_assert_eq(qreplay("paths --capture tests/data/captures/rpc-think-client.pcap --capture "
                         "tests/data/captures/rpc-think-server.pcap --map %s --outside 0 "
                         "--write-messages %s/m.csv",
                         map, dir),
                 0, "%s", err);
    cr_assert(strstr(out, "1 connections, 10 messages (0 sends and 0 receives without a capture"),
              "%s", out);
    cr_assert(strstr(out, "  c>1(1>c)\n"), "%s", out);
    unsigned count;
    const char *row = strstr(out, "\n1 ");
    cr_assert(row && sscanf(row, "\n1 %u", &count) == 1 && count == 5, "%s", out);
    /* a map naming a capture that was not given */
    cr_assert_eq(qreplay("paths --capture tests/data/captures/rpc-think-server.pcap --map %s", map),
                 1);
    cr_assert(strstr(err, "map.csv:1: capture rpc-think-client.pcap was not given"), "%s", err);
    cr_assert_eq(qreplay("paths --capture tests/data/captures/rpc-think-server.pcap"), 2);
    /* the captures as arguments, as a shell's glob gives them: the same messages */
    char first[256];
    cr_assert_eq(qreplay("paths --map %s --outside 0 tests/data/captures/rpc-think-client.pcap "
                         "tests/data/captures/rpc-think-server.pcap",
                         map),
                 0, "%s", err);
    snprintf(first, sizeof first, "%s", strstr(out, "1 connections"));
    cr_assert(strstr(first, "1 connections, 10 messages"), "%s", out);
}

#include "qreplay/error.h"
#include "qreplay/krecord.h"

/* Kernel records of two hosts (a client calling a server three times on one connection): three
 * requests, three replies, three paths of a call and its reply. */
Test(paths_cli, kernel_records)
{
    char err2[QR_ERRBUF_SIZE], path[2][128], map[128];
    const int64_t t0 = 1700000000000000000LL;
    for (int h = 0; h < 2; h++) {
        snprintf(path[h], sizeof path[h], "%s/h%d.qrk", dir, h);
        qr_krec_header hd = {h ? "server" : "client", 1, t0, QR_SAMPLING_RATE, 1, {5000}};
        qr_krec_writer *w;
        cr_assert_eq(qr_krec_writer_open(&w, path[h], &hd, err2), QR_OK, "%s", err2);
        qr_krec_ends e = {0};
        e.family = 4;
        uint8_t me[4] = {10, 9, 0, (uint8_t)(h + 1)}, peer[4] = {10, 9, 0, (uint8_t)(2 - h)};
        memcpy(e.laddr, me, 4);
        memcpy(e.raddr, peer, 4);
        e.lport = h ? 80 : 40000;
        e.rport = h ? 40000 : 80;
        cr_assert_eq(qr_krec_state(w, &e, t0 + 1000, h ? 10 : 7, h ? 3 : 2, err2), QR_OK, "%s",
                     err2);
        for (int k = 0; k < 3; k++) {
            int64_t t = t0 + 1000000 * (k + 1);
            /* the client sends 200 B, the server reads them 20 us later and answers 100 us
             * after that with 3000 B, read by the client 30 us later */
            int64_t at[4] = {t, t + 20000, t + 120000, t + 150000};
            for (int s = 0; s < 4; s++) {
                int mine = (s == 0 && !h) || (s == 1 && h) || (s == 2 && h) || (s == 3 && !h);
                if (mine)
                    cr_assert_eq(
                        qr_krec_call(w, &e, s == 1 || s == 3, s < 2 ? 200 : 3000, at[s], err2),
                        QR_OK, "%s", err2);
            }
        }
        cr_assert_eq(qr_krec_writer_close(w, 7, 0, NULL, err2), QR_OK, "%s", err2);
    }
    snprintf(map, sizeof map, "%s/kmap.csv", dir);
    FILE *f = fopen(map, "w");
    fputs("10.9.0.1,0\n10.9.0.2,1\n", f);
    fclose(f);
    cr_assert_eq(
        qreplay("paths --record %s --record %s --map %s --outside 0", path[0], path[1], map), 0,
        "%s", err);
    cr_assert(strstr(out, "records: 2 of them, 12 socket calls;"), "%s", out);
    cr_assert(strstr(out, "1 connections, 6 messages (0 sends and 0 receives without a record"),
              "%s", out);
    unsigned count;
    const char *row = strstr(out, "\n1 ");
    cr_assert(row && sscanf(row, "\n1 %u", &count) == 1 && count == 3, "%s", out);
    cr_assert(strstr(out, "c>1(1>c)\n"), "%s", out);
    /* the server's node delay: 100 us between reading the request and sending the reply */
    cr_assert(strstr(out, "1>0 100/"), "%s", out);
    cr_assert_eq(qreplay("paths --record %s", path[0]), 2);
}
