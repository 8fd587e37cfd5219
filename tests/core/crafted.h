/* Crafted captures for the tests of what reads imports: TCP packets as a host's capture holds
 * them (raw IPv4, written with qreplay's own trace writer), a 3-host star to import them into,
 * host map entries, the import itself, and the folder they write in (make_tmp and rm_tmp: a
 * suite's init and fini). */
#ifndef QR_TEST_CRAFTED_H
#define QR_TEST_CRAFTED_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/import.h"
#include "qreplay/pcap_file.h"
#include "qreplay/scenario.h"

/* The suite's scratch folder, one per test process. */
static char tmpdir[128];

static void make_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/qr-crafted-%d", (int)getpid());
    mkdir(tmpdir, 0755);
}

static void rm_tmp(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

/* The 3-host star of 10 Gbps links. */
static qr_scenario *star(void)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s,
                                         "[topology]\nkind = star\nhosts = 3\n[links]\nrate = "
                                         "10Gbps\ndelay = 1us\n",
                                         "test", ".", err),
                 QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
    return s;
}

static qr_host_map_entry entry(const char *addr, uint32_t host, const char *capture)
{
    qr_host_map_entry e;
    memset(&e, 0, sizeof e);
    cr_assert_eq(qr_addr_parse(addr, e.addr), QR_OK);
    e.host = host;
    e.line = host + 1;
    snprintf(e.capture, sizeof e.capture, "%s", capture);
    return e;
}

static qr_import_report *import(const char *const *caps, size_t n, const qr_host_map_entry *map,
                                size_t n_map, qr_import_clock clock, const char *dir)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s = star();
    qr_import_cfg cfg = {caps, n, map, n_map, clock, NULL, NULL, 0, NULL, NULL, 0};
    qr_import_report *r = NULL;
    int rc = qr_import_run(&cfg, s, dir, &r, err);
    qr_scenario_destroy(s);
    cr_assert_eq(rc, QR_OK, "%s", err);
    return r;
}

static qr_packet tcp(int64_t t, const char *src, const char *dst, uint16_t sp, uint16_t dp,
                     uint32_t seq, uint32_t ack, uint8_t flags, uint16_t payload, uint16_t id)
{
    qr_packet p;
    memset(&p, 0, sizeof p);
    uint8_t a[16], b[16];
    qr_addr_parse(src, a);
    qr_addr_parse(dst, b);
    p.time_ns = t;
    p.src_ip = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
    p.dst_ip = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
    p.src_port = sp;
    p.dst_port = dp;
    p.proto = 6;
    p.ttl = 64;
    p.ip_id = id;
    p.ip_len = (uint16_t)(40 + payload);
    p.seq = seq;
    p.ack = ack;
    p.tcp_flags = flags;
    p.window = 1000;
    return p;
}

static void write_capture(const char *path, const qr_packet *p, size_t n)
{
    char err[QR_ERRBUF_SIZE];
    qr_pcap_writer *w;
    cr_assert_eq(qr_pcap_writer_open(&w, path, err), QR_OK, "%s", err);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(qr_pcap_write(w, &p[i], err), QR_OK, "%s", err);
    cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK);
}

#define A "192.0.2.1"
#define B "192.0.2.2"
#define MS 1000000
#define ACKF QR_TCP_ACK

#endif
