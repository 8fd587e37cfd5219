/* Host maps and capture owners (qreplay import). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/import.h"

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/qr-map-%d.csv", (int)getpid());
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, strlen(text), f);
    fclose(f);
    return path;
}

Test(import, host_map_reads_both_families_with_captures)
{
    char err[QR_ERRBUF_SIZE];
    qr_host_map_entry *m;
    size_t n;
    const char *path = write_tmp("address,host,capture\n# racks 0 and 1\n10.0.0.2, 0, h0.pcap\n"
                                 "\nfd00::1,3\n 10.0.1.2 ,15,\n");
    cr_assert_eq(qr_host_map_read(path, 16, &m, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    char t[QR_ADDR_TEXT_MAX];
    cr_assert_str_eq(qr_addr_text(m[0].addr, t, sizeof t), "10.0.0.2");
    cr_assert_eq(m[0].host, 0);
    cr_assert_str_eq(m[0].capture, "h0.pcap");
    cr_assert_eq(m[0].line, 3);
    cr_assert_str_eq(qr_addr_text(m[1].addr, t, sizeof t), "fd00::1");
    cr_assert_eq(m[1].host, 3);
    cr_assert_str_eq(m[1].capture, "");
    cr_assert_eq(m[2].host, 15);
    qr_host_map_free(m);
    unlink(path);
}

Test(import, host_map_errors_name_the_line_and_field)
{
    char err[QR_ERRBUF_SIZE];
    qr_host_map_entry *m;
    size_t n;
    struct {
        const char *text, *want;
        int rc;
    } cases[] = {
        {"10.0.0.1,1\n10.0.0.300,2\n", ":2: address '10.0.0.300' is not an IPv4", QR_EVALUE},
        {"10.0.0.1,16\n", ":1: host '16' is not a host of the topology (0 .. 15)", QR_EVALUE},
        {"10.0.0.1,-1\n", ":1: host '-1'", QR_EVALUE},
        {"10.0.0.1,x\n", ":1: host 'x'", QR_EVALUE},
        {"10.0.0.1\n", ":1: expected address,host[,capture], found 1 field", QR_ESYNTAX},
        {"10.0.0.1,1,a,b\n", "found 4 fields", QR_ESYNTAX},
        {"10.0.0.1,1\n::ffff:10.0.0.1,2\n",
         ":2: address ::ffff:10.0.0.1 was already given on line 1", QR_EDUP},
        {"10.0.0.1,1\n10.0.0.2,1\n", ":2: host 1 was already given on line 1", QR_EDUP},
        {"# nothing\n", "no address in the host map", QR_ESYNTAX},
        {"10.0.0.1,1\n10.0.0.2,2\0x\n", ":2: ", QR_ESYNTAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = write_tmp(cases[i].text);
        if (i == 9) { /* a NUL byte inside a line */
            FILE *f = fopen(path, "wb");
            fwrite("10.0.0.1,1\n10.0.0.2,2\0x\n", 1, 24, f);
            fclose(f);
        }
        cr_assert_eq(qr_host_map_read(path, 16, &m, &n, err), cases[i].rc, "case %zu: %s", i, err);
        cr_assert_not_null(strstr(err, cases[i].want), "case %zu: '%s' lacks '%s'", i, err,
                           cases[i].want);
        cr_assert_not_null(strstr(err, path), "case %zu names the file: %s", i, err);
        unlink(path);
    }
    cr_assert_eq(qr_host_map_read("/nonexistent.csv", 16, &m, &n, err), QR_ENOENT);
}

/* A capture the map names must be one of those given (by file name). */
Test(import, host_map_captures_must_be_given)
{
    char err[QR_ERRBUF_SIZE];
    qr_host_map_entry *m;
    size_t n;
    const char *path = write_tmp("10.0.0.1,0,a.pcap\n10.0.0.2,1\n10.0.0.3,2,c.pcap\n");
    cr_assert_eq(qr_host_map_read(path, 16, &m, &n, err), QR_OK, "%s", err);
    const char *given[] = {"caps/a.pcap", "/x/y/c.pcap", "b.pcap"};
    cr_assert_eq(qr_host_map_check_captures(m, n, path, given, 3, err), QR_OK, "%s", err);
    cr_assert_eq(qr_host_map_check_captures(m, n, path, given, 2, err), QR_OK,
                 "c.pcap is the second: %s", err);
    const char *some[] = {"caps/a.pcap"};
    cr_assert_eq(qr_host_map_check_captures(m, n, path, some, 1, err), QR_EVALUE);
    cr_assert(strstr(err, ":3: capture c.pcap was not given") && strstr(err, path), "%s", err);
    qr_host_map_free(m);
    unlink(path);
}

Test(import, capture_owner_takes_part_in_most_packets_or_is_ambiguous)
{
    char err[QR_ERRBUF_SIZE];
    uint8_t a[16];
    uint64_t sent;
    qr_capture_stats st;
    /* a capture of one connection: both addresses are in every packet */
    cr_assert_eq(qr_capture_owner(QR_SOURCE_DIR "/tests/data/captures/eth-ipv4-sender-ns.pcap", a,
                                  &sent, &st, err),
                 QR_EVALUE);
    /* a veth pair's round trip is no longer than the hosts' turnaround: the handshake's timing
     * does not tell either */
    cr_assert_not_null(strstr(err, "cannot tell whose capture it is: 10.77.0.1 and 10.77.0.2 both "
                                   "take part in all 24 of its TCP packets and no handshake's "
                                   "timing tells"),
                       "%s", err);
    cr_assert_not_null(strstr(err, "(address,host,eth-ipv4-sender-ns.pcap)"), "%s", err);
}

/* A handshake captured at one end: SYN-ACK a round trip (rtt_us) after the SYN, the ACK after
 * turn_us at the client; at the server the reverse. */
static void handshake_pcap(const char *path, int at_client, uint32_t rtt_us, uint32_t turn_us)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 101 /* raw IP */};
    fwrite(hdr, sizeof hdr, 1, f);
    uint32_t gap[3] = {0, at_client ? rtt_us : turn_us, at_client ? turn_us : rtt_us};
    uint8_t flags[3] = {0x02, 0x12, 0x10};
    uint32_t t = 0;
    for (int i = 0; i < 3; i++) {
        uint8_t ip[40] = {0x45, 0, 0, 40};
        ip[9] = 6;
        uint8_t c[4] = {10, 0, 0, 5}, s[4] = {10, 0, 0, 9};
        int from_client = i != 1;
        memcpy(ip + 12, from_client ? c : s, 4);
        memcpy(ip + 16, from_client ? s : c, 4);
        ip[20] = from_client ? 0xc0 : 0x13, ip[21] = from_client ? 0x01 : 0x89; /* 49153, 5001 */
        ip[22] = from_client ? 0x13 : 0xc0, ip[23] = from_client ? 0x89 : 0x01;
        uint32_t seq = i == 1 ? 5000u : 100u + (i == 2), ack = i == 1 ? 101u : i == 2 ? 5001u : 0;
        for (int b = 0; b < 4; b++) {
            ip[24 + b] = (uint8_t)(seq >> (24 - 8 * b));
            ip[28 + b] = (uint8_t)(ack >> (24 - 8 * b));
        }
        ip[32] = 0x50, ip[33] = flags[i];
        t += gap[i];
        uint32_t rec[4] = {1700000000, t, 40, 40};
        fwrite(rec, sizeof rec, 1, f);
        fwrite(ip, sizeof ip, 1, f);
    }
    fclose(f);
}

/* Property: over round trips from 100 us to 100 ms and turnarounds 4 to 1000 times shorter, the
 * handshake puts a capture of one peer at the end it was taken at; within a factor of 4 it does
 * not tell. */
Test(import, capture_owner_from_the_handshake_timing)
{
    char path[64], err[QR_ERRBUF_SIZE], t[QR_ADDR_TEXT_MAX];
    snprintf(path, sizeof path, "/tmp/qr-hs-%d.pcap", (int)getpid());
    uint8_t a[16];
    const uint32_t rtts[] = {100, 1000, 30000, 100000};
    const uint32_t ratios[] = {5, 10, 1000};
    for (size_t r = 0; r < 4; r++)
        for (size_t q = 0; q < 3; q++)
            for (int at_client = 0; at_client < 2; at_client++) {
                handshake_pcap(path, at_client, rtts[r], rtts[r] / ratios[q]);
                cr_assert_eq(qr_capture_owner(path, a, NULL, NULL, err), QR_OK, "%s", err);
                cr_assert_str_eq(qr_addr_text(a, t, sizeof t), at_client ? "10.0.0.5" : "10.0.0.9",
                                 "rtt %u us, turnaround %u us", rtts[r], rtts[r] / ratios[q]);
            }
    for (int at_client = 0; at_client < 2; at_client++) {
        handshake_pcap(path, at_client, 1000, 300);
        cr_assert_eq(qr_capture_owner(path, a, NULL, NULL, err), QR_EVALUE);
        cr_assert_not_null(strstr(err, "no handshake's timing tells"), "%s", err);
    }
    unlink(path);
}

/* A raw-IP pcap at path; raw_ack writes a 40-byte IPv4 TCP ACK into it. */
static FILE *raw_pcap(const char *path)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 101 /* raw IP */};
    fwrite(hdr, sizeof hdr, 1, f);
    return f;
}

static void raw_ack(FILE *f, uint32_t us, const uint8_t src[4], const uint8_t dst[4],
                    uint16_t sport, uint16_t dport, uint16_t ip_id)
{
    uint8_t ip[40] = {0x45, 0, 0, 40};
    ip[9] = 6;
    ip[4] = (uint8_t)(ip_id >> 8), ip[5] = (uint8_t)ip_id; /* its own: not a copy of another */
    memcpy(ip + 12, src, 4);
    memcpy(ip + 16, dst, 4);
    ip[20] = (uint8_t)(sport >> 8), ip[21] = (uint8_t)sport;
    ip[22] = (uint8_t)(dport >> 8), ip[23] = (uint8_t)dport;
    ip[20 + 12] = 0x50, ip[20 + 13] = 0x10;
    uint32_t rec[4] = {1700000000, us, 40, 40};
    fwrite(rec, sizeof rec, 1, f);
    fwrite(ip, sizeof ip, 1, f);
}

/* A host talking to two peers: its address is in every packet, each peer's in some. */
Test(import, capture_owner_of_a_host_with_two_peers)
{
    char path[64], err[QR_ERRBUF_SIZE], t[QR_ADDR_TEXT_MAX];
    snprintf(path, sizeof path, "/tmp/qr-owner-%d.pcap", (int)getpid());
    FILE *f = raw_pcap(path);
    /* peer 10.0.0.9 uploads a lot to the host 10.0.0.5; the host talks to 10.0.0.7 a little */
    for (int i = 0; i < 30; i++) {
        int up = i < 20, from_host = !up && i % 2;
        uint8_t host[4] = {10, 0, 0, 5}, peer[4] = {10, 0, 0, (uint8_t)(up ? 9 : 7)};
        raw_ack(f, (uint32_t)i, from_host ? host : peer, from_host ? peer : host, 0, 0,
                (uint16_t)i);
    }
    fclose(f);
    uint8_t a[16];
    uint64_t sent;
    cr_assert_eq(qr_capture_owner(path, a, &sent, NULL, err), QR_OK, "%s", err);
    cr_assert_str_eq(qr_addr_text(a, t, sizeof t), "10.0.0.5",
                     "the host, although 10.0.0.9 sent more");
    cr_assert_eq(sent, 5);
    unlink(path);
}

/* An any-interface capture of a host that talks to two peers and, much more, to itself over
 * loopback (a local proxy): packets from an address to itself say nothing of whose capture it
 * is (ndpi-tls_heur__vmess-tcp: 127.0.0.1 was taken for the host). */
Test(import, capture_owner_is_not_loopback_talking_to_itself)
{
    char path[64], err[QR_ERRBUF_SIZE], t[QR_ADDR_TEXT_MAX];
    snprintf(path, sizeof path, "/tmp/qr-owner-lo-%d.pcap", (int)getpid());
    FILE *f = raw_pcap(path);
    for (int i = 0; i < 70; i++) {
        uint8_t host[4] = {10, 0, 0, 5}, peer[4] = {10, 0, 0, (uint8_t)(i < 20 ? 9 : 7)};
        uint8_t lo[4] = {127, 0, 0, 1};
        int local = i >= 30, from_host = i % 2;
        if (local)
            raw_ack(f, (uint32_t)i, lo, lo, i % 2 ? 12345 : 1080, i % 2 ? 1080 : 12345,
                    (uint16_t)i);
        else
            raw_ack(f, (uint32_t)i, from_host ? host : peer, from_host ? peer : host, 40000, 443,
                    (uint16_t)i);
    }
    fclose(f);
    uint8_t a[16];
    cr_assert_eq(qr_capture_owner(path, a, NULL, NULL, err), QR_OK, "%s", err);
    cr_assert_str_eq(qr_addr_text(a, t, sizeof t), "10.0.0.5",
                     "the host, although 127.0.0.1 is in more packets");
    unlink(path);
}

Test(import, a_capture_without_tcp_is_a_clear_error)
{
    char err[QR_ERRBUF_SIZE];
    uint8_t a[16];
    /* a pcap with one ARP frame */
    char path[64];
    snprintf(path, sizeof path, "/tmp/qr-arp-%d.pcap", (int)getpid());
    FILE *f = fopen(path, "wb");
    uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
    fwrite(hdr, sizeof hdr, 1, f);
    uint32_t rec[4] = {1700000000, 0, 42, 42};
    uint8_t frame[42] = {0};
    frame[12] = 0x08, frame[13] = 0x06;
    fwrite(rec, sizeof rec, 1, f);
    fwrite(frame, sizeof frame, 1, f);
    fclose(f);
    cr_assert_eq(qr_capture_owner(path, a, NULL, NULL, err), QR_ENOTFOUND);
    cr_assert_not_null(strstr(err, "no TCP packet in 1 frames: 1 not IP"), "%s", err);
    unlink(path);
}

Test(import, addresses_parse_and_print_back)
{
    const char *good[] = {"10.0.0.1", "255.255.255.255", "fd00::1", "::1",
                          "2001:db8::8:800:200c:417a"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint8_t a[16];
        char t[QR_ADDR_TEXT_MAX];
        cr_assert_eq(qr_addr_parse(good[i], a), QR_OK, "%s", good[i]);
        cr_assert_str_eq(qr_addr_text(a, t, sizeof t), good[i]);
    }
    uint8_t a[16];
    cr_assert_eq(qr_addr_parse("10.0.0", a), QR_EVALUE);
    cr_assert_eq(qr_addr_parse("", a), QR_EVALUE);
    cr_assert_eq(qr_addr_parse("fd00:::1", a), QR_EVALUE);
}

#define CAP(name) QR_SOURCE_DIR "/tests/data/captures/" name

/* Both ends of two real connections (50 kB and 20 kB from A to B): two hosts, two connections,
 * their initiator and their bytes exactly, whichever capture comes first. */
Test(import, scan_finds_connections_hosts_and_bytes)
{
    char err[QR_ERRBUF_SIZE], t[QR_ADDR_TEXT_MAX];
    const char *caps[2][2] = {{CAP("pair-a.pcap"), CAP("pair-b.pcap")},
                              {CAP("pair-b.pcap"), CAP("pair-a.pcap")}};
    for (int order = 0; order < 2; order++) {
        /* one peer each: whose capture is whose only a host map can say */
        qr_host_map_entry map[2] = {{.host = 0, .line = 1}, {.host = 1, .line = 2}};
        qr_addr_parse("10.77.0.1", map[0].addr);
        qr_addr_parse("10.77.0.2", map[1].addr);
        snprintf(map[0].capture, sizeof map[0].capture, "pair-a.pcap");
        snprintf(map[1].capture, sizeof map[1].capture, "pair-b.pcap");
        qr_import_scan *s;
        cr_assert_eq(qr_import_scan_run(caps[order], 2, NULL, 0, 16, &s, err), QR_EVALUE);
        cr_assert_not_null(strstr(err, "cannot tell whose capture"), "%s", err);
        cr_assert_eq(qr_import_scan_run(caps[order], 2, map, 2, 16, &s, err), QR_OK, "%s", err);
        cr_assert_str_eq(qr_addr_text(s->owner[0], t, sizeof t), order ? "10.77.0.2" : "10.77.0.1");
        cr_assert_eq(s->owner_host[0], order ? 1 : 0, "the map's hosts");
        cr_assert_eq(s->owner_host[1], order ? 0 : 1);
        cr_assert_eq(s->n_addrs, 2);
        cr_assert_eq(s->n_conns, 2);
        uint64_t sizes[2];
        for (size_t i = 0; i < 2; i++) {
            const qr_import_conn *c = &s->conns[i];
            cr_assert(c->syn, "the SYN was captured");
            cr_assert_str_eq(qr_addr_text(c->addr[0], t, sizeof t), "10.77.0.1", "the initiator");
            cr_assert_eq(c->port[1], 5001);
            cr_assert(c->fin[0] && c->fin[1]);
            cr_assert_eq(c->bytes[1], 0, "the server sends nothing back");
            cr_assert_gt(c->packets[1], 0, "but ACKs");
            sizes[i] = c->bytes[0];
        }
        cr_assert_eq(sizes[0], 50000, "connections by first appearance");
        cr_assert_eq(sizes[1], 20000);
        uint64_t frames = 0;
        for (int k = 0; k < QR_SKIP_COUNT; k++)
            frames += s->stats[0].skipped[k];
        cr_assert_eq(frames + s->stats[0].kept, s->stats[0].frames);
        qr_import_scan_free(s);
    }
}

Test(import, scan_with_a_map_and_too_small_a_topology)
{
    char err[QR_ERRBUF_SIZE];
    const char *caps[2] = {CAP("pair-a.pcap"), CAP("pair-b.pcap")};
    qr_host_map_entry map[2] = {{.host = 7, .line = 1}, {.line = 2}};
    qr_addr_parse("10.77.0.2", map[0].addr);
    snprintf(map[0].capture, sizeof map[0].capture, "pair-b.pcap");
    /* pair-a.pcap named by its path, its address not given a host: the smallest free one */
    qr_addr_parse("10.77.0.1", map[1].addr);
    snprintf(map[1].capture, sizeof map[1].capture, "%s", caps[0]);
    map[1].host = UINT32_MAX;
    qr_import_scan *s;
    cr_assert_eq(qr_import_scan_run(caps, 2, map, 2, 16, &s, err), QR_EVALUE,
                 "a map line with a host outside the topology");
    map[1].host = 3;
    cr_assert_eq(qr_import_scan_run(caps, 2, map, 2, 16, &s, err), QR_OK, "%s", err);
    cr_assert_eq(s->owner_host[1], 7, "the map names pair-b.pcap's host");
    cr_assert_eq(s->owner_host[0], 3, "and pair-a.pcap's, by its path");
    uint8_t b[16];
    qr_addr_parse("10.77.0.2", b);
    cr_assert_eq(qr_import_scan_host(s, b), 7);
    qr_import_scan_free(s);
    qr_host_map_entry owners[2] = {{.host = 0, .line = 1}, {.host = 0, .line = 2}};
    snprintf(owners[0].capture, sizeof owners[0].capture, "pair-a.pcap");
    qr_addr_parse("10.77.0.1", owners[0].addr);
    cr_assert_eq(qr_import_scan_run(caps, 2, owners, 1, 1, &s, err), QR_EVALUE);
    cr_assert_not_null(strstr(err, "cannot tell whose capture it is"), "pair-b.pcap: %s", err);
    /* both captures named, to host 0 of a 1-host topology: 10.77.0.2 does not fit */
    snprintf(owners[1].capture, sizeof owners[1].capture, "pair-b.pcap");
    qr_addr_parse("10.77.0.1", owners[1].addr);
    cr_assert_eq(qr_import_scan_run(caps, 2, owners, 2, 1, &s, err), QR_EVALUE);
    cr_assert_not_null(strstr(err, "the captures hold 2 addresses but the topology has 1 hosts: "
                                   "10.77.0.2 is the first that does not fit"),
                       "%s", err);
    const char *none[1] = {"/nonexistent.pcap"};
    cr_assert_eq(qr_import_scan_run(none, 1, NULL, 0, 16, &s, err), QR_ENOENT);
    cr_assert_not_null(strstr(err, "/nonexistent.pcap"));
}

/* A host map that contradicts the capture's own handshake is said in a warning, not overruled;
 * one that agrees says nothing. */
Test(import, a_map_against_the_handshake_is_warned_about)
{
    char path[64], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "/tmp/qr-hsmap-%d.pcap", (int)getpid());
    handshake_pcap(path, 1, 30000, 50); /* taken at the client 10.0.0.5 */
    const char *caps[1] = {path};
    for (int wrong = 0; wrong < 2; wrong++) {
        qr_host_map_entry map[1] = {{.host = 0, .line = 3}};
        qr_addr_parse(wrong ? "10.0.0.9" : "10.0.0.5", map[0].addr);
        snprintf(map[0].capture, sizeof map[0].capture, "%s", path + 5);
        qr_import_scan *s;
        cr_assert_eq(qr_import_scan_run(caps, 1, map, 1, 4, &s, err), QR_OK, "%s", err);
        if (wrong)
            cr_assert_not_null(strstr(s->warning[0], "the host map (line 3) gives it to 10.0.0.9, "
                                                     "but 10.0.0.5 takes part"),
                               "%s", s->warning[0]);
        else
            cr_assert_str_empty(s->warning[0]);
        cr_assert_eq(s->owner_host[0], 0, "the map stands");
        qr_import_scan_free(s);
    }
    unlink(path);
}
