/* Send traces: pcap round trip, tshark agreement, and every kind of bad file. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>
#include <pcap/pcap.h>

#include "qreplay/error.h"
#include "qreplay/pcap_file.h"

static char path[256];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/qr-test-trace-%d.pcap", getpid());
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(trace, .init = setup, .fini = teardown);

static qr_packet random_packet(gsl_rng *r, int64_t t)
{
    qr_packet p = {.time_ns = t,
                   .src_ip = (uint32_t)gsl_rng_get(r),
                   .dst_ip = (uint32_t)gsl_rng_get(r),
                   .src_port = (uint16_t)gsl_rng_get(r),
                   .dst_port = (uint16_t)gsl_rng_get(r),
                   .proto = 6,
                   .tos = (uint8_t)gsl_rng_uniform_int(r, 256),
                   .ttl = (uint8_t)(1 + gsl_rng_uniform_int(r, 255)),
                   .ip_id = (uint16_t)gsl_rng_get(r),
                   .ip_len = (uint16_t)(40 + gsl_rng_uniform_int(r, 1461)),
                   .seq = (uint32_t)gsl_rng_get(r),
                   .ack = (uint32_t)gsl_rng_get(r),
                   .tcp_flags = (uint8_t)gsl_rng_uniform_int(r, 256),
                   .window = (uint16_t)gsl_rng_get(r)};
    return p;
}

static void assert_same(const qr_packet *a, const qr_packet *b, int i)
{
    cr_assert(a->time_ns == b->time_ns && a->src_ip == b->src_ip && a->dst_ip == b->dst_ip &&
                  a->src_port == b->src_port && a->dst_port == b->dst_port &&
                  a->proto == b->proto && a->tos == b->tos && a->ttl == b->ttl &&
                  a->ip_id == b->ip_id && a->ip_len == b->ip_len && a->seq == b->seq &&
                  a->ack == b->ack && a->tcp_flags == b->tcp_flags && a->window == b->window,
              "packet %d differs", i);
}

static void write_packets(const qr_packet *p, size_t n)
{
    qr_pcap_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pcap_writer_open(&w, path, err), QR_OK, "%s", err);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(qr_pcap_write(w, &p[i], err), QR_OK, "%s", err);
    cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK, "%s", err);
}

Test(trace, round_trip_keeps_every_field)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    enum { N = 5000 };
    static qr_packet in[N];
    int64_t t = 1234567890123LL; /* seconds and nanoseconds both non-trivial */
    for (int i = 0; i < N; i++) {
        t += (int64_t)gsl_rng_uniform_int(r, 3000);
        in[i] = random_packet(r, t);
    }
    write_packets(in, N);
    qr_pcap_reader *rd;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK, "%s", err);
    qr_packet out;
    for (int i = 0; i < N; i++) {
        cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK, "%s", err);
        assert_same(&out, &in[i], i);
    }
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_END);
    cr_assert_eq(qr_pcap_reader_count(rd), N);
    qr_pcap_reader_close(rd);
    gsl_rng_free(r);
}

/* A pcap record's seconds are a signed 32-bit number: the last time it holds reads back exactly,
 * the next is refused when written (found by fuzz_import: it read back as a negative time). */
Test(trace, times_a_pcap_cannot_hold_are_refused)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2);
    qr_packet last = random_packet(r, QR_PCAP_TIME_END - 1);
    write_packets(&last, 1);
    qr_pcap_reader *rd;
    char err[QR_ERRBUF_SIZE];
    qr_packet out;
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK, "%s", err);
    cr_assert_eq(out.time_ns, QR_PCAP_TIME_END - 1);
    qr_pcap_reader_close(rd);
    qr_pcap_writer *w;
    cr_assert_eq(qr_pcap_writer_open(&w, path, err), QR_OK, "%s", err);
    qr_packet next = random_packet(r, QR_PCAP_TIME_END);
    cr_assert_eq(qr_pcap_write(w, &next, err), QR_EVALUE);
    cr_assert_not_null(strstr(err, "beyond what a pcap record holds"), "%s", err);
    qr_pcap_writer_close(w, err);
    gsl_rng_free(r);
}

Test(trace, tshark_reads_the_same_packets)
{
    if (!QR_TSHARK[0])
        cr_skip_test("tshark is not installed");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2);
    enum { N = 300 };
    static qr_packet in[N];
    for (int i = 0; i < N; i++) {
        in[i] = random_packet(r, 1000000000LL + 1000 * i + (i % 7));
        in[i].tcp_flags &= 0x3f;
    }
    write_packets(in, N);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s -r %s -T fields -E separator=, -e frame.time_epoch -e ip.id -e ip.len "
             "-e ip.src -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.flags 2>/dev/null",
             QR_TSHARK, path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        cr_assert_lt(n, N);
        long long sec, nsec;
        unsigned id, len, p1, p2, b1, b2, b3, b4, flags;
        unsigned long seq;
        int k = sscanf(line, "%lld.%lld,0x%x,%u,%u.%u.%u.%u,%u,%u,%lu,0x%x", &sec, &nsec, &id, &len,
                       &b1, &b2, &b3, &b4, &p1, &p2, &seq, &flags);
        cr_assert_eq(k, 12, "unparsed tshark line: %s", line);
        cr_assert_eq(sec * 1000000000LL + nsec, in[n].time_ns, "time of packet %d", n);
        cr_assert_eq(id, in[n].ip_id);
        cr_assert_eq(len, in[n].ip_len);
        cr_assert_eq(b1 << 24 | b2 << 16 | b3 << 8 | b4, in[n].src_ip);
        cr_assert_eq(p1, in[n].src_port);
        cr_assert_eq(p2, in[n].dst_port);
        cr_assert_eq(seq, in[n].seq);
        cr_assert_eq(flags, in[n].tcp_flags);
        n++;
    }
    cr_assert_eq(pclose(f), 0, "tshark failed");
    cr_assert_eq(n, N, "tshark saw %d packets, expected %d", n, N);
    gsl_rng_free(r);
}

static int open_error(char *err)
{
    qr_pcap_reader *rd = NULL;
    int rc = qr_pcap_reader_open(&rd, path, err);
    qr_pcap_reader_close(rd);
    return rc;
}

static void write_bytes(const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

Test(trace, empty_missing_and_foreign_files)
{
    char err[QR_ERRBUF_SIZE];
    write_bytes("", 0);
    cr_assert_eq(open_error(err), QR_ETRUNC);
    cr_assert(strstr(err, path), "%s", err);
    write_bytes("\xd4\xc3\xb2\xa1\x02\x00", 6); /* a cut file header */
    cr_assert_eq(open_error(err), QR_ETRUNC, "%s", err);
    write_bytes("flow,time_ns\nx,1\nthis is not a pcap\n", 36);
    cr_assert_eq(open_error(err), QR_EFORMAT);
    cr_assert(strstr(err, "not a readable pcap"), "%s", err);
    unlink(path);
    cr_assert_eq(open_error(err), QR_ENOENT);
    cr_assert_eq(qr_pcap_reader_open(NULL, path, err), QR_EINVAL);
}

Test(trace, other_link_types_are_refused)
{
    pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    pcap_dump_close(d);
    pcap_close(p);
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(open_error(err), QR_EFORMAT);
    cr_assert(strstr(err, "link type"), "%s", err);
}

Test(trace, truncated_packet_is_reported_with_its_number)
{
    qr_packet in[3];
    for (int i = 0; i < 3; i++)
        in[i] = (qr_packet){.time_ns = 1000 * i, .proto = 6, .ip_len = 1500, .ip_id = (uint16_t)i};
    write_packets(in, 3);
    cr_assert_eq(truncate(path, 24 + 2 * (16 + 40) + 16 + 20), 0); /* cut inside packet 3 */
    qr_pcap_reader *rd;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK, "%s", err);
    qr_packet out;
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK);
    /* A capture cut in its last record keeps its whole packets, and says where */
    cr_assert_str_eq(qr_pcap_reader_warning(rd), "");
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_END);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_END);
    cr_assert(strstr(qr_pcap_reader_warning(rd), "at byte 136") &&
                  strstr(qr_pcap_reader_warning(rd), "2 whole packets"),
              "%s", qr_pcap_reader_warning(rd));
    qr_pcap_reader_close(rd);
    /* cut inside a record header */
    write_packets(in, 3);
    cr_assert_eq(truncate(path, 24 + 16 + 40 + 7), 0);
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_END, "%s", err);
    cr_assert(strstr(qr_pcap_reader_warning(rd), "at byte 80"), "%s", qr_pcap_reader_warning(rd));
    qr_pcap_reader_close(rd);
}

Test(trace, backwards_timestamps_and_short_captures)
{
    /* write a nanosecond pcap directly with libpcap: packet 2 goes back in time */
    pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    uint8_t buf[QR_PCAP_CAPLEN_MAX];
    qr_packet pk = {.proto = 6, .ip_len = 100};
    qr_packet_encode(&pk, buf);
    struct pcap_pkthdr h = {.caplen = 40, .len = 100};
    h.ts.tv_sec = 5;
    pcap_dump((u_char *)d, &h, buf);
    h.ts.tv_sec = 4;
    pcap_dump((u_char *)d, &h, buf);
    pcap_dump_close(d);
    qr_pcap_reader *rd;
    char err[QR_ERRBUF_SIZE];
    qr_packet out;
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK);
    cr_assert_eq(out.time_ns, 5000000000LL);
    /* Order matters within a flow direction only (the sampler checks it there) */
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_OK, "%s", err);
    cr_assert_eq(out.time_ns, 4000000000LL);
    qr_pcap_reader_close(rd);
    /* a capture too short for the headers */
    d = pcap_dump_open(p, path);
    h.caplen = 10;
    pcap_dump((u_char *)d, &h, buf);
    pcap_dump_close(d);
    pcap_close(p);
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK);
    cr_assert_eq(qr_pcap_read(rd, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "packet 1") && strstr(err, "snap length"), "%s", err);
    qr_pcap_reader_close(rd);
}

/* Every kind of packet the reader cannot take is a clear error that says
 * what it is; UDP keeps its ports. */
static int read_one(const uint8_t *pkt, unsigned caplen, unsigned len, long ns, qr_packet *out,
                    char *err)
{
    pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    struct pcap_pkthdr h = {.caplen = caplen, .len = len};
    h.ts.tv_sec = 1;
    h.ts.tv_usec = ns;
    pcap_dump((u_char *)d, &h, pkt);
    pcap_dump_close(d);
    pcap_close(p);
    qr_pcap_reader *rd;
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_OK, "%s", err);
    int rc = qr_pcap_read(rd, out, err);
    qr_pcap_reader_close(rd);
    return rc;
}

Test(trace, each_unreadable_packet_says_what_it_is)
{
    uint8_t b[QR_PCAP_CAPLEN_MAX];
    qr_packet pk = {.proto = 6, .ip_len = 1500, .src_port = 7, .dst_port = 9}, out;
    char err[QR_ERRBUF_SIZE];
    qr_packet_encode(&pk, b);
    cr_assert_eq(read_one(b, 40, 1500, 5, &out, err), QR_OK, "%s", err);
    cr_assert_eq(out.time_ns, 1000000005);
    /* IPv6 */
    b[0] = 0x60;
    cr_assert_eq(read_one(b, 40, 1500, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "IPv6"), "%s", err);
    /* not IP at all */
    b[0] = 0x00;
    cr_assert_eq(read_one(b, 40, 1500, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "not an IP packet"), "%s", err);
    qr_packet_encode(&pk, b);
    /* cut by the snap length inside the TCP header */
    cr_assert_eq(read_one(b, 30, 1500, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "snap length") && strstr(err, "TCP header"), "%s", err);
    /* IP total length below the headers, beyond the packet */
    qr_packet small = pk;
    small.ip_len = 30;
    qr_packet_encode(&small, b);
    cr_assert_eq(read_one(b, 40, 40, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "cannot hold the TCP header"), "%s", err);
    qr_packet_encode(&pk, b);
    cr_assert_eq(read_one(b, 40, 100, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "beyond the packet's 100 bytes"), "%s", err);
    /* a non-first fragment has no TCP header */
    qr_packet_encode(&pk, b);
    b[6] = 0x00;
    b[7] = 0xb9; /* offset 185 * 8 = 1480 */
    cr_assert_eq(read_one(b, 40, 1500, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "non-first IP fragment") && strstr(err, "1480"), "%s", err);
    /* a bad TCP data offset */
    qr_packet_encode(&pk, b);
    b[32] = 0x20;
    cr_assert_eq(read_one(b, 40, 1500, 0, &out, err), QR_EFORMAT);
    cr_assert(strstr(err, "TCP header length"), "%s", err);
    /* nanoseconds beyond a second in a nanosecond pcap */
    qr_packet_encode(&pk, b);
    cr_assert_eq(read_one(b, 40, 1500, 1000000000, &out, err), QR_EVALUE);
    cr_assert(strstr(err, "damaged record header") && strstr(err, "not a fraction of a second"),
              "%s", err);
    /* UDP keeps its ports (two UDP flows are not merged into one) */
    qr_packet udp = {.proto = 17, .ip_len = 200, .src_port = 4000, .dst_port = 53};
    qr_packet_encode(&udp, b);
    cr_assert_eq(read_one(b, 28, 200, 0, &out, err), QR_OK, "%s", err);
    cr_assert(out.proto == 17 && out.src_port == 4000 && out.dst_port == 53);
}

Test(trace, an_ethernet_capture_says_what_to_do)
{
    pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    pcap_dump_close(d);
    pcap_close(p);
    qr_pcap_reader *rd;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pcap_reader_open(&rd, path, err), QR_EFORMAT);
    cr_assert(strstr(err, "EN10MB") && strstr(err, "Ethernet") && strstr(err, "import"), "%s", err);
}

Test(trace, microsecond_pcaps_are_read_in_nanoseconds)
{
    pcap_t *p = pcap_open_dead(DLT_RAW, 65535);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    uint8_t buf[QR_PCAP_CAPLEN_MAX];
    qr_packet pk = {.proto = 6, .ip_len = 40, .src_port = 80};
    qr_packet_encode(&pk, buf);
    struct pcap_pkthdr h = {.caplen = 40, .len = 40};
    h.ts.tv_sec = 2;
    h.ts.tv_usec = 7;
    pcap_dump((u_char *)d, &h, buf);
    pcap_dump_close(d);
    pcap_close(p);
    qr_pcap_reader *rd;
    qr_packet out;
    cr_assert_eq(qr_pcap_reader_open(&rd, path, NULL), QR_OK);
    cr_assert_eq(qr_pcap_read(rd, &out, NULL), QR_OK);
    cr_assert_eq(out.time_ns, 2000007000LL);
    cr_assert_eq(out.src_port, 80);
    qr_pcap_reader_close(rd);
}

Test(trace, writer_refuses_bad_packets)
{
    qr_pcap_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pcap_writer_open(&w, path, err), QR_OK);
    qr_packet p = {.time_ns = 100, .proto = 6, .ip_len = 60};
    cr_assert_eq(qr_pcap_write(w, &p, err), QR_OK);
    p.time_ns = 99;
    cr_assert_eq(qr_pcap_write(w, &p, err), QR_EORDER);
    p.time_ns = 200;
    p.ip_len = 20;
    cr_assert_eq(qr_pcap_write(w, &p, err), QR_EVALUE);
    p.ip_len = 60;
    p.time_ns = -1;
    cr_assert_eq(qr_pcap_write(w, &p, err), QR_EVALUE);
    cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK);
    cr_assert_eq(qr_pcap_writer_open(&w, "/nonexistent/dir/x.pcap", err), QR_EIO);
}

Test(trace, flow_names)
{
    qr_packet p = {
        .src_ip = 0x0a000001, .dst_ip = 0x0a000102, .src_port = 5000, .dst_port = 80, .proto = 6};
    char buf[QR_FLOW_NAME_MAX];
    cr_assert_str_eq(qr_packet_flow_name(&p, buf, sizeof buf), "10.0.0.1:5000>10.0.1.2:80/6");
}

Test(trace, tcp_options_round_trip_and_tshark_sees_the_payload_length)
{
    /* a data segment as ns-3 sends it: 20 B IP, 32 B TCP (NOP NOP timestamp), 1448 B payload */
    qr_pcap_writer *w;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_pcap_writer_open(&w, path, err), QR_OK, "%s", err);
    qr_packet pk = {.time_ns = 1000,
                    .src_ip = 0x0a000002,
                    .dst_ip = 0x0a000102,
                    .src_port = 10000,
                    .dst_port = 5001,
                    .proto = 6,
                    .ip_id = 3,
                    .ip_len = 1500,
                    .seq = 1,
                    .ack = 1,
                    .tcp_flags = QR_TCP_ACK,
                    .window = 100,
                    .tcp_opt_len = 12,
                    .tcp_opts = {1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9}};
    cr_assert_eq(qr_pcap_write(w, &pk, err), QR_OK, "%s", err);
    pk.ip_len = 50;
    cr_assert_eq(qr_pcap_write(w, &pk, err), QR_EVALUE, "50 B cannot hold 52 B of headers");
    cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK);
    qr_pcap_reader *r;
    qr_packet out;
    cr_assert_eq(qr_pcap_reader_open(&r, path, err), QR_OK, "%s", err);
    cr_assert_eq(qr_pcap_read(r, &out, err), QR_OK, "%s", err);
    cr_assert_eq(out.tcp_opt_len, 12);
    cr_assert_arr_eq(out.tcp_opts, pk.tcp_opts, 12);
    cr_assert_eq(out.ip_len, 1500);
    qr_pcap_reader_close(r);
    if (QR_TSHARK[0] == '\0')
        cr_skip_test("tshark not found at configure time");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s -r %s -T fields -e tcp.len -e tcp.options.timestamp.tsval 2>/dev/null", QR_TSHARK,
             path);
    FILE *f = popen(cmd, "r");
    char line[128] = "";
    cr_assert(fgets(line, sizeof line, f));
    pclose(f);
    cr_assert_str_eq(line, "1448\t7\n", "tshark read: %s", line);
}
