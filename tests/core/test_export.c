/* Exporting a recording as the hosts' own captures (qr_recording_export) on a hand-made run
 * (hand_run.h): each host's file holds what it sent at its send times and what it received at its
 * receive times, on its own clock, in time order; a host without traffic gets no file; the map
 * names every capture; a dropped packet is in its sender's capture only. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hand_run.h"
#include "qreplay/capture.h"
#include "qreplay/pcap_file.h"

static struct hand_run h;
static char out[96];

static void setup(void)
{
    hand_run_make(&h);
    snprintf(out, sizeof out, "%s/caps", h.dir);
    cr_assert_eq(mkdir(out, 0755), 0);
}

static void teardown(void)
{
    hand_run_free(&h);
}

TestSuite(export, .init = setup, .fini = teardown);

/* The frames of one exported capture: their times and IP IDs. */
static size_t frames(const char *name, int64_t *t, uint16_t *id, size_t max)
{
    char path[160], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/%s", out, name);
    qr_capture *c;
    cr_assert_eq(qr_capture_open(&c, path, err), QR_OK, "%s", err);
    qr_capture_packet p;
    size_t n = 0;
    int rc;
    while ((rc = qr_capture_next(c, &p, err)) == QR_OK) {
        cr_assert_lt(n, max);
        t[n] = p.time_ns;
        id[n++] = p.ip_id;
    }
    cr_assert_eq(rc, QR_END, "%s", err);
    qr_capture_close(c);
    return n;
}

Test(export, each_host_sees_its_own_traffic_on_its_own_clock)
{
    char err[QR_ERRBUF_SIZE];
    qr_pcap_format fmt = {QR_PCAP_LINK_ETHERNET, 0};
    qr_export_stats st;
    cr_assert_eq(qr_recording_export(h.rec, out, &fmt, &st, err), QR_OK, "%s", err);
    cr_assert_eq(st.captures, 2, "host 2 sent and received nothing");
    cr_assert_eq(st.sent, 3);
    cr_assert_eq(st.received, 2, "the dropped packet reached no one");
    int64_t t[8];
    uint16_t id[8];
    cr_assert_eq(frames("h0000.pcap", t, id, 8), 3);
    for (int i = 0; i < 3; i++)
        cr_assert(t[i] == 1000 * i + hand_offsets[0] && id[i] == i, "frame %d", i);
    cr_assert_eq(frames("h0001.pcap", t, id, 8), 2);
    cr_assert(t[0] == 20000 + hand_offsets[1] && id[0] == 0);
    cr_assert(t[1] == 22000 + hand_offsets[1] && id[1] == 2);
    char p[160];
    snprintf(p, sizeof p, "%s/h0002.pcap", out);
    cr_assert_neq(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/hosts.csv", out);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    char line[256];
    int lines = 0, h0 = 0, h1 = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        h0 += strstr(line, ",0,h0000.pcap") != NULL;
        h1 += strstr(line, ",1,h0001.pcap") != NULL;
    }
    fclose(f);
    cr_assert(lines == 3 && h0 == 1 && h1 == 1, "a header and one line per capture");
}

Test(export, microsecond_captures_truncate_as_tcpdump_does)
{
    char err[QR_ERRBUF_SIZE];
    qr_pcap_format fmt = {QR_PCAP_LINK_IPV4, 1};
    qr_export_stats st;
    cr_assert_eq(qr_recording_export(h.rec, out, &fmt, &st, err), QR_OK, "%s", err);
    int64_t t[8];
    uint16_t id[8];
    cr_assert_eq(frames("h0001.pcap", t, id, 8), 2);
    cr_assert_eq(t[0], 20000, "20250 ns is 20 us in a microsecond capture");
}

Test(export, a_missing_folder_is_an_error_naming_it)
{
    char err[QR_ERRBUF_SIZE] = "";
    qr_pcap_format fmt = {QR_PCAP_LINK_IPV4, 0};
    qr_export_stats st;
    int rc = qr_recording_export(h.rec, "/nonexistent/caps", &fmt, &st, err);
    cr_assert_eq(rc, QR_EIO, "%d: %s", rc, err);
    cr_assert(strstr(err, "/nonexistent/caps"), "%s", err);
}
