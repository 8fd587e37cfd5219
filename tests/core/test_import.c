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
        {"10.0.0.1,1\n::ffff:10.0.0.1,2\n", ":2: address ::ffff:10.0.0.1 was already given on line 1",
         QR_EDUP},
        {"# nothing\n", "no address in the host map", QR_ESYNTAX},
        {"10.0.0.1,1\n10.0.0.2,2\0x\n", ":2: ", QR_ESYNTAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = write_tmp(cases[i].text);
        if (i == 8) { /* a NUL byte inside a line */
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

Test(import, capture_owner_is_the_address_sending_most)
{
    char err[QR_ERRBUF_SIZE], t[QR_ADDR_TEXT_MAX];
    uint8_t a[16];
    uint64_t sent;
    qr_capture_stats st;
    cr_assert_eq(qr_capture_owner(QR_SOURCE_DIR "/tests/data/captures/eth-ipv4-sender-ns.pcap", a,
                                  &sent, &st, err),
                 QR_OK, "%s", err);
    cr_assert_str_eq(qr_addr_text(a, t, sizeof t), "10.77.0.1");
    cr_assert_gt(sent, 0);
    cr_assert_leq(sent, st.kept);
    cr_assert_eq(qr_capture_owner(QR_SOURCE_DIR "/tests/data/captures/eth-ipv6-sender-ns.pcap", a,
                                  &sent, NULL, err),
                 QR_OK, "%s", err);
    cr_assert_str_eq(qr_addr_text(a, t, sizeof t), "fd77::1");
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
    const char *good[] = {"10.0.0.1", "255.255.255.255", "fd00::1", "::1", "2001:db8::8:800:200c:417a"};
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
