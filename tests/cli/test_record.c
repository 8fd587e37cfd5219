/* qreplay record on this machine's kernel (root only; skipped with the reason otherwise): a host
 * namespace talks TCP to another over a veth pair while one recorder records both (a record each)
 * and tcpdump watches each; tcpdump's captures are the oracle. The packets a host's record says
 * were handed to the NIC are its capture's frames from the host, their payload bytes the capture's;
 * the socket calls' bytes are what the applications sent and read; SIGINT ends it with a complete
 * record and status 0; no event is lost at this rate. Replayed from the two records, every segment
 * the captures hold is a packet of the recording. The errors: a namespace that does not exist,
 * bad options, each leaving an earlier record as it was. Namespaces and processes are removed on
 * every path, and every step is bounded by `timeout`. */
#include <criterion/criterion.h>
#include <inttypes.h>

#include "harness.h"

TestSuite(record, .init = qr_test_setup, .fini = qr_test_teardown);

/* A number after `label` in text (the first one), or -1. */
static long long number_after(const char *text, const char *label)
{
    const char *p = strstr(text, label);
    long long v = -1;
    if (p && sscanf(p + strlen(label), " %lld", &v) != 1)
        v = -1;
    return v;
}

static void need_root(void)
{
    if (geteuid() != 0)
        cr_skip_test("needs root: qreplay record loads BPF programs and the test creates network "
                     "namespaces (CI runs as root)");
    if (system("command -v tcpdump >/dev/null && command -v tshark >/dev/null && "
               "command -v python3 >/dev/null") != 0)
        cr_skip_test("tcpdump, tshark or python3 is not installed (./waf deps installs them)");
    if (qreplay("record --duration 1ms -o %s/probe.qrk -q", dir) != 0 &&
        strstr(err, "built without the kernel recorder"))
        cr_skip_test("%s", err);
}

/* The script: two namespaces, a server that reads each connection whole then answers 1000 bytes,
 * a client making 3 connections of 20 sends (3000 + 500 j bytes), the recorder and tcpdump on the
 * client's namespace, SIGINT to the recorder at the end. Its exit status is the recorder's. */
static int run_script(const char *ns)
{
    char path[160], cmd[400];
    snprintf(path, sizeof path, "%s/run.sh", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "set -u\n"
            "A=%sa B=%sb D=%s Q=%s\n"
            "SRV= TD= TDB= REC=\n"
            "cleanup() { kill $SRV $TD $TDB $REC 2>/dev/null; ip netns del $A 2>/dev/null; "
            "ip netns del $B 2>/dev/null; }\n"
            "trap cleanup EXIT\n"
            "ip netns add $A && ip netns add $B || exit 90\n"
            "ip link add ${A}0 netns $A type veth peer name ${B}0 netns $B || exit 90\n"
            "ip -n $A addr add 10.77.0.1/24 dev ${A}0; ip -n $B addr add 10.77.0.2/24 dev ${B}0\n"
            "ip -n $A link set ${A}0 up; ip -n $B link set ${B}0 up\n"
            "timeout 60 ip netns exec $B python3 -c '\n"
            "import socket\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind((\"10.77.0.2\", 5001)); s.listen(8)\n"
            "for i in range(3):\n"
            "    c, _ = s.accept()\n"
            "    while c.recv(65536): pass\n"
            "    c.sendall(b\"x\" * 1000); c.close()\n"
            "' & SRV=$!\n"
            "timeout 60 ip netns exec $A tcpdump -i ${A}0 -s 128 -U -w $D/a.pcap 2>$D/td.err & "
            "TD=$!\n"
            "timeout 60 ip netns exec $B tcpdump -i ${B}0 -s 128 -U -w $D/b.pcap 2>$D/tdb.err & "
            "TDB=$!\n"
            "timeout 60 $Q record --netns $A,$B -o $D/rec > $D/rec.out 2> $D/rec.err & REC=$!\n"
            /* both watching before the traffic: the recorder says so, tcpdump too */
            "for i in $(seq 100); do grep -q 'Ctrl-C stops' $D/rec.err && grep -q listening "
            "$D/td.err && grep -q listening $D/tdb.err && break; sleep 0.1; done\n"
            "timeout 60 ip netns exec $A python3 -c '\n"
            "import socket, time\n"
            "time.sleep(0.2)\n"
            "for i in range(3):\n"
            "    c = socket.create_connection((\"10.77.0.2\", 5001))\n"
            "    for j in range(20): c.sendall(b\"y\" * (3000 + 500 * j))\n"
            "    c.shutdown(socket.SHUT_WR)\n"
            "    while c.recv(65536): pass\n"
            "    c.close()\n"
            "' || exit 91\n"
            "wait $SRV\n"
            "sleep 0.3\n"
            "kill -INT $REC; wait $REC; RC=$?\n"
            /* libpcap's buffer timeout (1 s): tcpdump's last block in its file before it stops */
            "sleep 1.2\n"
            "kill -INT $TD $TDB; wait $TD $TDB\n"
            "exit $RC\n",
            ns, ns, dir, QR_PROGRAM);
    fclose(f);
    snprintf(cmd, sizeof cmd, "timeout 120 bash %s > %s/script.out 2>&1", path, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* tshark's count, TCP payload sum and segments on the wire of the frames from address `from` in
 * capture `name` (a GSO frame of L payload bytes is ceil(L / 1448) segments: the MSS of a
 * 1500-byte MTU with TCP timestamps). */
static void capture_counts(const char *name, const char *from, long long *frames,
                           long long *payload, long long *segs)
{
    char cmd[400], p[160], text[256];
    snprintf(p, sizeof p, "%s/tshark.out", dir);
    snprintf(cmd, sizeof cmd,
             "tshark -r %s/%s -Y 'ip.src==%s && tcp' -T fields -e tcp.len 2>/dev/null "
             "| awk '{n++; s+=$1; g += $1 > 1448 ? int(($1 + 1447) / 1448) : 1} "
             "END {print n+0, s+0, g+0}' > %s",
             dir, name, from, p);
    cr_assert_eq(system(cmd), 0);
    slurp(p, text, sizeof text);
    cr_assert_eq(sscanf(text, "%lld %lld %lld", frames, payload, segs), 3, "%s", text);
}

Test(record, each_hosts_record_agrees_with_tcpdump_on_that_host, .timeout = 180)
{
    need_root();
    char ns[32], text[4096];
    snprintf(ns, sizeof ns, "qrrec%d", (int)getpid() % 100000);
    int rc = run_script(ns);
    snprintf(text, sizeof text, "%s/script.out", dir);
    slurp(text, out, sizeof out);
    snprintf(text, sizeof text, "%s/rec.err", dir);
    slurp(text, err, sizeof err);
    cr_assert_eq(rc, 0, "the recorder's status after SIGINT: %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(err, "stopped by signal 2; the record is complete"), "%s", err);
    cr_assert_neq(system("ip netns list | grep -q qrrec"), 0, "the namespaces are gone");
    /* each host's record against its own capture: the client's, then the server's */
    const char *rec[2] = {"a", "b"}, *from[2] = {"10.77.0.1", "10.77.0.2"};
    const long long sent[2] = {3 * (20 * 3000 + 500 * 190), 3 * 1000};
    for (int h = 0; h < 2; h++) {
        cr_assert_eq(qreplay("record --show %s/rec/%s%s.qrk", dir, ns, rec[h]), 0, "%s", err);
        char pcap[16];
        snprintf(pcap, sizeof pcap, "%s.pcap", rec[h]);
        long long frames, payload, segs, nic = -1, pay = -1;
        capture_counts(pcap, from[h], &frames, &payload, &segs);
        cr_assert_gt(frames, 5, "the capture holds the traffic");
        const char *p = strstr(out, "packets sent");
        cr_assert(p && sscanf(p, "packets sent %*d (%*d B, %lld of payload; %lld", &pay, &nic) == 2,
                  "%s", out);
        cr_assert_eq(nic, frames,
                     "host %s: packets handed to the NIC: record %lld, tcpdump %lld\n%s", rec[h],
                     nic, frames, out);
        cr_assert_eq(pay, payload, "host %s: payload: record %lld, tcpdump %lld", rec[h], pay,
                     payload);
        cr_assert_eq(pay, sent[h], "host %s: every byte its application sent", rec[h]);
        cr_assert_eq(number_after(out, "connections"), 3, "%s", out);
        cr_assert(strstr(out, " 0 lost\n"), "%s", out);
        cr_assert_gt(number_after(out, "samples at 1us"), 2, "a record per connection at least");
    }
    /* the client's calls: 60 sends and the three answers; the server's: the mirror image */
    cr_assert_eq(qreplay("record --show %s/rec/%sa.qrk", dir, ns), 0, "%s", err);
    cr_assert(strstr(out, "60 sends (465000 B), 3 receives (3000 B)"), "%s", out);
    cr_assert(strstr(out, "3 closed while recorded"), "%s", out);
    cr_assert_eq(qreplay("record --show %s/rec/%sb.qrk", dir, ns), 0, "%s", err);
    cr_assert(strstr(out, "3 sends (3000 B)") && strstr(out, "receives (465000 B)"), "%s", out);
    cr_assert_neq(system("ls /tmp/qr-cli-*/ 2>/dev/null | grep -q 'rec.partial'"), 0);

    /* the two records replayed on a star of two hosts: every connection at both ends, every
     * segment the captures hold from either host (tshark, the oracle) */
    long long fa, fb, x, y;
    capture_counts("a.pcap", from[0], &x, &y, &fa);
    capture_counts("b.pcap", from[1], &x, &y, &fb);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "mkdir %s/run && mv %s/rec %s/run/record && printf '[topology]\\nkind = star\\n"
             "hosts = 2\\n' > %s/two.ini",
             dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(qreplay("replay %s/run --from record", dir), 1);
    cr_assert(strstr(err, "--scenario"), "%s", err);
    cr_assert_eq(qreplay("replay %s/run --from record --clock reconcile", dir), 2);
    cr_assert_eq(qreplay("replay %s/run --from record --scenario %s/two.ini --th 3us", dir, dir),
                 1);
    cr_assert(strstr(err, "1000 ns, 5000 ns, 10000 ns"), "%s", err);
    cr_assert_eq(qreplay("replay %s/run --from record --scenario %s/two.ini --th 1us", dir, dir), 0,
                 "%s", err);
    const char *r = strstr(out, "records ");
    long long flows = -1, both = -1, packets = -1;
    cr_assert(r && sscanf(r, "records %*d hosts: %lld flows (%lld seen at both ends), %lld packets",
                          &flows, &both, &packets) == 3,
              "%s", out);
    cr_assert(flows == 3 && both == 3, "%s", out);
    cr_assert_eq(packets, fa + fb, "records %lld packets, the captures %lld + %lld", packets, fa,
                 fb);
    cr_assert(exists("%s/run/replay/tagged_th_1_record/replay.h5", dir), "%s", out);
}

Test(record, bad_requests_are_refused_and_leave_the_old_record, .timeout = 60)
{
    need_root();
    cr_assert_eq(qreplay("record --duration 50ms -o %s/old.qrk -q", dir), 0, "%s", err);
    size_t n0, n1;
    char p[160];
    snprintf(p, sizeof p, "%s/old.qrk", dir);
    unsigned char *before = slurp_bin(p, &n0);
    cr_assert_eq(qreplay("record --netns qr-no-such-ns -o %s/old.qrk -q", dir), 1);
    cr_assert(strstr(err, "qr-no-such-ns") && strstr(err, "no such network namespace"), "%s", err);
    cr_assert_eq(qreplay("record --th 5us,1us -o %s/old.qrk", dir), 2);
    cr_assert(strstr(err, "--th"), "%s", err);
    cr_assert_eq(qreplay("record --duration -3s -o %s/old.qrk", dir), 2);
    cr_assert_eq(qreplay("record --ignore-port 0 -o %s/old.qrk", dir), 2);
    cr_assert(strstr(err, "--ignore-port: '0'"), "%s", err);
    cr_assert_eq(qreplay("record --ignore-port 80,http -o %s/old.qrk", dir), 2);
    cr_assert(strstr(err, "'http'"), "%s", err);
    /* not root: said, and nothing written */
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups %s record "
             "--duration 1s -o /tmp/qr-never.qrk > %s/nobody.out 2>&1",
             QR_PROGRAM, dir);
    int st = system(cmd);
    char text[2048];
    snprintf(p, sizeof p, "%s/nobody.out", dir);
    slurp(p, text, sizeof text);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "as nobody: status %d\n%s", st, text);
    cr_assert(strstr(text, "cannot run here: it runs as root"), "%s", text);
    cr_assert_not(exists("/tmp/qr-never.qrk"));
    snprintf(p, sizeof p, "%s/old.qrk", dir);
    cr_assert_eq(qreplay("record --show %s/none.qrk", dir), 1);
    cr_assert(strstr(err, "none.qrk"), "%s", err);
    unsigned char *after = slurp_bin(p, &n1);
    cr_assert(n0 == n1 && !memcmp(before, after, n0), "the old record is untouched");
    free(before);
    free(after);
}

/* One row of record --rate-test's CSV (the columns qr_krec_rate_write names). */
struct rate_row {
    double target, traffic_s;
    int recorded, whole, is_short;
    long long writes, msg, read_bytes, sends, send_bytes, nic, events, ring_lost, unseen;
};

static int rate_rows(const char *path, struct rate_row *r, int max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[1024];
    int n = 0;
    cr_assert(fgets(line, sizeof line, f) && !strncmp(line, "# qreplay ", 10), "%s", line);
    cr_assert(strstr(line, "record --rate-test") && strstr(line, "kernel "), "%s", line);
    cr_assert(fgets(line, sizeof line, f) && !strncmp(line, "target_pps,recorded,", 20));
    while (n < max && fgets(line, sizeof line, f)) {
        struct rate_row *x = &r[n++];
        cr_assert_eq(sscanf(line,
                            "%lf,%d,%lf,%lld,%lld,%lld,%lld,%lld,%lld,%*f,%lld,%*f,%lld,%lld,%d,%d",
                            &x->target, &x->recorded, &x->traffic_s, &x->writes, &x->msg,
                            &x->read_bytes, &x->sends, &x->send_bytes, &x->nic, &x->events,
                            &x->ring_lost, &x->unseen, &x->whole, &x->is_short),
                     14, "%s", line);
    }
    fclose(f);
    return n;
}

/* The rate test on this machine's kernel, kept small: the idle step and two rates. What the
 * sender wrote the receiver read, byte for byte; a step's records hold every write the sender
 * made (the oracle: its own count) wherever nothing was lost, and "whole" says exactly that. A
 * SIGINT stops it with status 130, the earlier CSV untouched, no namespace or scratch left. */
Test(record, rate_test_records_every_write_and_stops_cleanly, .timeout = 180)
{
    need_root();
    char csv[160];
    snprintf(csv, sizeof csv, "%s/rate.csv", dir);
    cr_assert_eq(qreplay("record --rate-test --rates 2k,10k --step 0.5s -o %s", csv), 0, "%s", err);
    cr_assert(strstr(out, "highest packet rate kept whole"), "%s", out);
    struct rate_row r[8];
    int n = rate_rows(csv, r, 8);
    cr_assert(n == 3 || (n == 4 && !r[3].recorded), "the idle step and two rates: %d rows", n);
    cr_assert(r[0].target == 0 && r[0].writes == 0 && r[0].nic == 0, "the idle step sends nothing");
    for (int i = 1; i < 3; i++) {
        cr_assert_eq(r[i].msg, 100);
        cr_assert_eq(r[i].read_bytes, r[i].writes * 100, "step %d: read what was written", i);
        cr_assert_leq(r[i].writes, (long long)(r[i].target * 0.5 + 0.5), "no more than its aim");
        cr_assert_leq(r[i].sends, r[i].writes, "no send call the sender did not make");
        int whole = !r[i].ring_lost && !r[i].unseen && r[i].sends == r[i].writes &&
                    r[i].send_bytes == r[i].writes * 100 && r[i].read_bytes == r[i].writes * 100;
        cr_assert_eq(r[i].whole, whole, "step %d: 'whole' is what the counts say", i);
        if (!r[i].ring_lost && !r[i].unseen)
            cr_assert_eq(r[i].sends, r[i].writes,
                         "step %d: nothing lost, so every write is recorded (%lld of %lld)", i,
                         r[i].sends, r[i].writes);
        cr_assert_eq(r[i].ring_lost, 0, "step %d: the recorder keeps %g writes/s", i, r[i].target);
        cr_assert_geq(r[i].events, r[i].sends + r[i].nic, "a call and a packet are events each");
    }
    cr_assert_neq(system("ip netns list | grep -q 'qrtb.*-rate'"), 0, "the namespaces are gone");

    /* interrupted: nothing written over the old CSV, nothing left behind */
    size_t n0, n1;
    unsigned char *before = slurp_bin(csv, &n0);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd %s && (%s record --rate-test --rates 2k,3k,4k --step 2s -o %s -q & P=$!; "
             "sleep 1.5; kill -INT $P; wait $P; echo $? > %s/rate.status)",
             dir, QR_PROGRAM, csv, dir);
    cr_assert_eq(system(cmd), 0);
    char text[64], path[200];
    snprintf(path, sizeof path, "%s/rate.status", dir);
    slurp(path, text, sizeof text);
    cr_assert_eq(atoi(text), 130, "interrupted: status %s", text);
    unsigned char *after = slurp_bin(csv, &n1);
    cr_assert(n0 == n1 && !memcmp(before, after, n0), "the old CSV is untouched");
    free(before);
    free(after);
    cr_assert_neq(system("ip netns list | grep -q 'qrtb.*-rate'"), 0, "the namespaces are gone");
    cr_assert_neq(system("ls -d /tmp/qreplay-rate-* 2>/dev/null | grep -q ."), 0,
                  "the scratch folder is gone");
    /* the rate test's own usage errors */
    cr_assert_eq(qreplay("record --rate-test --rates 5k,2k -o %s", csv), 2);
    cr_assert(strstr(err, "increasing"), "%s", err);
    cr_assert_eq(qreplay("record --rate-test --rates fast -o %s", csv), 2);
    cr_assert(strstr(err, "'fast'"), "%s", err);
    cr_assert_eq(qreplay("record --rates 2k -o %s", csv), 2);
    cr_assert(strstr(err, "--rate-test"), "%s", err);
}
