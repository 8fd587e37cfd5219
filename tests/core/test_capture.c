/* Operators' captures: real kernel captures (tests/data/captures, made by make_captures.sh) read
 * in every format and link type, checked packet by packet against tshark's own dissection, and
 * every skip reason on crafted frames. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "qreplay/capture.h"
#include "qreplay/error.h"
#include "qreplay/pcap_file.h"

#define CAP(name) QR_SOURCE_DIR "/tests/data/captures/" name

typedef struct {
    qr_capture_packet *p;
    size_t n;
    qr_capture_stats st;
    char warning[1200];
    char link[64];
} capture_t;

static capture_t read_all(const char *path)
{
    capture_t c = {0};
    char err[QR_ERRBUF_SIZE];
    qr_capture *r;
    cr_assert_eq(qr_capture_open(&r, path, err), QR_OK, "%s", err);
    size_t cap = 64;
    c.p = malloc(cap * sizeof *c.p);
    int rc;
    while ((rc = qr_capture_next(r, &c.p[c.n], err)) == QR_OK)
        if (++c.n == cap)
            c.p = realloc(c.p, (cap *= 2) * sizeof *c.p);
    cr_assert_eq(rc, QR_END, "%s: %s", path, err);
    qr_capture_stats_get(r, &c.st);
    snprintf(c.warning, sizeof c.warning, "%s", qr_capture_warning(r));
    snprintf(c.link, sizeof c.link, "%s", qr_capture_link(r));
    qr_capture_close(r);
    uint64_t sum = c.st.kept;
    for (int i = 0; i < QR_SKIP_COUNT; i++)
        sum += c.st.skipped[i];
    cr_assert_eq(sum, c.st.frames, "%s: every frame is kept or skipped for one reason", path);
    cr_assert_eq(c.st.kept, c.n);
    return c;
}

/* tshark's view of every TCP frame: frame number, ports, seq, ack (raw), flags, TCP payload
 * length, IP length (IPv4 total or IPv6 40 + payload) and the outer VLAN id. */
static void check_against_tshark(const char *path, const capture_t *c)
{
    char cmd[2048];
    snprintf(
        cmd, sizeof cmd,
        "'%s' -r '%s' -o tcp.relative_sequence_numbers:FALSE -Y tcp -T fields -E "
        "separator=, -E occurrence=f -e frame.number -e tcp.srcport -e tcp.dstport -e "
        "tcp.seq -e tcp.ack -e tcp.flags -e tcp.len -e ip.len -e ipv6.plen -e ieee8021ad.id -e "
        "vlan.id "
        "2>/dev/null",
        QR_TSHARK, path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[512];
    size_t i = 0;
    while (fgets(line, sizeof line, f)) {
        /* eleven comma-separated fields, the last four possibly empty */
        char *field[11];
        char *cur = line;
        for (int k = 0; k < 11; k++) {
            field[k] = cur;
            cur += strcspn(cur, ",\n");
            if (*cur)
                *cur++ = '\0';
        }
        unsigned long long frame = strtoull(field[0], NULL, 10);
        unsigned long long sport = strtoull(field[1], NULL, 10);
        unsigned long long dport = strtoull(field[2], NULL, 10);
        unsigned long long seq = strtoull(field[3], NULL, 10);
        unsigned long long ack = strtoull(field[4], NULL, 10);
        unsigned long long flags = strtoull(field[5], NULL, 16);
        unsigned long long len = strtoull(field[6], NULL, 10);
        const char *iplen = field[7], *plen = field[8];
        /* the outer tag: 802.1ad if there is one, else 802.1Q */
        const char *vlan = field[9][0] ? field[9] : field[10];
        cr_assert_lt(i, c->n, "%s: tshark has more TCP frames than qreplay (frame %llu)", path,
                     frame);
        const qr_capture_packet *p = &c->p[i++];
        cr_assert_eq(p->frame, frame, "%s: frame numbers", path);
        cr_assert_eq(p->src_port, sport);
        cr_assert_eq(p->dst_port, dport);
        cr_assert_eq(p->seq, seq, "%s: frame %llu seq", path, frame);
        cr_assert_eq(p->ack, ack, "%s: frame %llu ack", path, frame);
        cr_assert_eq(p->tcp_flags, flags & 0xff);
        cr_assert_eq(p->payload, len, "%s: frame %llu payload", path, frame);
        if (p->family == 4)
            cr_assert_eq(p->ip_len, strtoul(iplen, NULL, 10), "%s: frame %llu", path, frame);
        else
            cr_assert_eq(p->ip_len, 40 + strtoul(plen, NULL, 10), "%s: frame %llu", path, frame);
        if (vlan[0])
            cr_assert_eq(p->vlan, strtoul(vlan, NULL, 10), "%s: frame %llu vlan", path, frame);
    }
    cr_assert_eq(pclose(f), 0);
    cr_assert_eq(i, c->n, "%s: qreplay kept %zu TCP frames, tshark shows %zu", path, c->n, i);
}

Test(capture, real_kernel_captures_agree_with_tshark, .timeout = 120)
{
    static const char *files[] = {CAP("eth-ipv4-sender-ns.pcap"),
                                  CAP("eth-ipv4-receiver-ns.pcap"),
                                  CAP("eth-ipv4-sender-us.pcap"),
                                  CAP("eth-ipv4-sender-us-be.pcap"),
                                  CAP("eth-ipv4-sender.pcapng"),
                                  CAP("eth-ipv6-sender-ns.pcap"),
                                  CAP("eth-vlan.pcap"),
                                  CAP("eth-qinq.pcap"),
                                  CAP("any-sll.pcap"),
                                  CAP("any-sll2.pcap")};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        capture_t c = read_all(files[k]);
        cr_assert_gt(c.n, 5, "%s: a real transfer has packets", files[k]);
        check_against_tshark(files[k], &c);
        free(c.p);
    }
}

Test(capture, formats_and_byte_orders_give_the_same_packets)
{
    capture_t ns = read_all(CAP("eth-ipv4-sender-ns.pcap"));
    capture_t ng = read_all(CAP("eth-ipv4-sender.pcapng"));
    capture_t us = read_all(CAP("eth-ipv4-sender-us.pcap"));
    capture_t be = read_all(CAP("eth-ipv4-sender-us-be.pcap"));
    cr_assert_str_eq(ns.link, "EN10MB");
    cr_assert_eq(ng.n, ns.n);
    cr_assert_eq(us.n, ns.n);
    cr_assert_eq(be.n, ns.n);
    for (size_t i = 0; i < ns.n; i++) {
        cr_assert_eq(ng.p[i].time_ns, ns.p[i].time_ns, "pcapng keeps nanoseconds");
        cr_assert_eq(us.p[i].time_ns, ns.p[i].time_ns / 1000 * 1000, "microsecond pcap");
        cr_assert_eq(be.p[i].time_ns, us.p[i].time_ns, "big-endian pcap");
        cr_assert_eq(memcmp(&ng.p[i].src, &ns.p[i].src, 16), 0);
        cr_assert_eq(us.p[i].seq, ns.p[i].seq);
        cr_assert_eq(be.p[i].ip_id, ns.p[i].ip_id);
    }
    cr_assert_gt(ns.p[ns.n - 1].time_ns, (int64_t)1500000000 * 1000000000,
                 "Unix-epoch nanoseconds");
    free(ns.p), free(ng.p), free(us.p), free(be.p);
}

Test(capture, tso_super_segments_and_addresses_are_read_as_captured)
{
    capture_t c = read_all(CAP("eth-ipv4-sender-ns.pcap"));
    uint32_t biggest = 0;
    char a[QR_ADDR_TEXT_MAX], b[QR_ADDR_TEXT_MAX];
    for (size_t i = 0; i < c.n; i++) {
        cr_assert_eq(c.p[i].family, 4);
        if (c.p[i].ip_len > biggest)
            biggest = c.p[i].ip_len;
    }
    cr_assert_gt(biggest, 1500, "the sender's tcpdump sees GSO super-segments above the MTU");
    cr_assert_str_eq(qr_addr_text(c.p[0].src, a, sizeof a), "10.77.0.1");
    cr_assert_str_eq(qr_addr_text(c.p[0].dst, b, sizeof b), "10.77.0.2");
    cr_assert_eq(c.p[0].tcp_flags & (QR_TCP_SYN | QR_TCP_ACK), QR_TCP_SYN, "the SYN first");
    cr_assert_gt(c.st.skipped[QR_SKIP_NOT_TCP] + c.st.skipped[QR_SKIP_NOT_IP], 0,
                 "the capture holds neighbour discovery or ARP frames, counted as skipped");
    free(c.p);
    capture_t v6 = read_all(CAP("eth-ipv6-sender-ns.pcap"));
    cr_assert_eq(v6.p[0].family, 6);
    cr_assert_str_eq(qr_addr_text(v6.p[0].src, a, sizeof a), "fd77::1");
    free(v6.p);
}

Test(capture, vlan_and_qinq_tags)
{
    capture_t v = read_all(CAP("eth-vlan.pcap")), q = read_all(CAP("eth-qinq.pcap"));
    cr_assert_eq(v.n, q.n);
    for (size_t i = 0; i < v.n; i++) {
        cr_assert_eq(v.p[i].vlan, 100);
        cr_assert_eq(q.p[i].vlan, 200, "the outer (802.1ad) tag");
        cr_assert_eq(v.p[i].seq, q.p[i].seq);
        cr_assert_eq(v.p[i].payload, q.p[i].payload);
    }
    free(v.p), free(q.p);
}

Test(capture, cooked_captures_of_any_interface)
{
    capture_t s1 = read_all(CAP("any-sll.pcap")), s2 = read_all(CAP("any-sll2.pcap"));
    cr_assert_str_eq(s1.link, "LINUX_SLL");
    cr_assert_str_eq(s2.link, "LINUX_SLL2");
    free(s1.p), free(s2.p);
}

Test(capture, a_cut_last_record_keeps_the_whole_packets_and_says_where)
{
    capture_t whole = read_all(CAP("eth-ipv4-sender-ns.pcap"));
    capture_t cut = read_all(CAP("eth-ipv4-cut-ns.pcap"));
    cr_assert_eq(cut.st.frames, whole.st.frames - 1);
    cr_assert_not_null(strstr(cut.warning, "eth-ipv4-cut-ns.pcap: the last record, at byte"), "%s",
                       cut.warning);
    cr_assert_str_eq(whole.warning, "");
    free(whole.p), free(cut.p);
}

Test(capture, bad_files_are_clear_errors)
{
    char err[QR_ERRBUF_SIZE];
    qr_capture *c;
    cr_assert_eq(qr_capture_open(&c, "/nonexistent/x.pcap", err), QR_ENOENT);
    cr_assert_not_null(strstr(err, "/nonexistent/x.pcap"));
    cr_assert_eq(qr_capture_open(&c, QR_SOURCE_DIR "/README.md", err), QR_EFORMAT);
    cr_assert_not_null(strstr(err, "not a readable pcap or pcapng file"), "%s", err);
    cr_assert_eq(qr_capture_open(&c, QR_SOURCE_DIR "/tests", err), QR_EFORMAT);
    char path[] = "/tmp/qr-capture-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(qr_capture_open(&c, path, err), QR_ETRUNC, "%s", err);
    /* a link type qreplay does not read (802.11) names the ones it does */
    FILE *f = fopen(path, "wb");
    uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 105};
    fwrite(hdr, sizeof hdr, 1, f);
    fclose(f);
    cr_assert_eq(qr_capture_open(&c, path, err), QR_EFORMAT);
    cr_assert_not_null(strstr(err, "LINUX_SLL2"), "%s", err);
    unlink(path);
}

/* A frame: Ethernet + IPv4 + TCP, with knobs for the faults. */
static size_t frame4(uint8_t *b, unsigned ethertype, unsigned proto, unsigned frag, unsigned ihl,
                     unsigned doff, unsigned ip_len)
{
    memset(b, 0, 128);
    b[12] = (uint8_t)(ethertype >> 8), b[13] = (uint8_t)ethertype;
    uint8_t *ip = b + 14;
    ip[0] = (uint8_t)(0x40 | ihl);
    ip[2] = (uint8_t)(ip_len >> 8), ip[3] = (uint8_t)ip_len;
    ip[6] = (uint8_t)(frag >> 8), ip[7] = (uint8_t)frag;
    ip[9] = (uint8_t)proto;
    ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
    uint8_t *t = ip + ihl * 4;
    t[0] = 0x13, t[1] = 0x89, t[3] = 80;
    t[12] = (uint8_t)(doff << 4);
    t[13] = 0x10;
    return 14 + ihl * 4 + 20;
}

Test(capture, every_skip_reason_on_crafted_frames)
{
    uint8_t b[128];
    qr_capture_packet p;
    qr_skip why;
    size_t n = frame4(b, 0x0800, 6, 0, 5, 5, 1040);
    cr_assert_eq(qr_capture_decode(1 /* EN10MB */, b, n, 14 + 1040, &p, &why), QR_OK);
    cr_assert_eq(p.payload, 1000);
    cr_assert_eq(p.src_port, 5001);
    n = frame4(b, 0x0806, 6, 0, 5, 5, 40); /* ARP */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_NOT_IP);
    n = frame4(b, 0x0800, 17, 0, 5, 5, 40); /* UDP */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_NOT_TCP);
    n = frame4(b, 0x0800, 6, 0x2000, 5, 5, 40); /* first fragment, more to come */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_FRAGMENT);
    n = frame4(b, 0x0800, 6, 0x0010, 5, 5, 40); /* a later fragment */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_FRAGMENT);
    n = frame4(b, 0x0800, 6, 0, 5, 5, 1040); /* cut by the snap length in the TCP header */
    cr_assert_eq(qr_capture_decode(1, b, 14 + 30, 14 + 1040, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_SNAPLEN);
    cr_assert_eq(qr_capture_decode(1, b, 10, 14 + 1040, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_SNAPLEN, "cut inside the Ethernet header");
    cr_assert_eq(qr_capture_decode(1, b, 10, 10, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_LINK, "a runt frame");
    n = frame4(b, 0x0800, 6, 0, 4, 5, 40); /* IHL 4 */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_IP);
    n = frame4(b, 0x0800, 6, 0, 5, 5, 2000); /* IP length beyond the frame */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_IP);
    n = frame4(b, 0x0800, 6, 0, 5, 3, 40); /* TCP data offset 3 */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_TCP);
    /* loopback: the family in host order (NULL) or network order (LOOP) */
    uint8_t lo[64];
    n = frame4(b, 0x0800, 6, 0, 5, 5, 40);
    memcpy(lo + 4, b + 14, 40);
    lo[0] = 2, lo[1] = lo[2] = lo[3] = 0;
    cr_assert_eq(qr_capture_decode(0 /* NULL */, lo, 44, 44, &p, &why), QR_OK);
    lo[0] = 0, lo[3] = 2;
    cr_assert_eq(qr_capture_decode(0, lo, 44, 44, &p, &why), QR_OK);
    cr_assert_eq(qr_capture_decode(108 /* LOOP */, lo, 44, 44, &p, &why), QR_OK);
    lo[3] = 7;
    cr_assert_eq(qr_capture_decode(108, lo, 44, 44, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_NOT_IP);
    cr_assert_eq(qr_capture_decode(105 /* 802.11 */, lo, 44, 44, &p, &why), QR_EINVAL);
}

struct skips {
    uint64_t n[QR_SKIP_COUNT];
    uint64_t icmp, last_frame;
    int64_t last_t;
};

static void on_skip(void *ctx, const qr_capture_packet *p, qr_skip why)
{
    struct skips *s = ctx;
    s->n[why]++;
    cr_assert_gt(p->frame, s->last_frame, "frames in order");
    s->last_frame = p->frame;
    s->last_t = p->time_ns;
    cr_assert(p->has_mac, "an Ethernet frame's addresses");
    cr_assert_eq(p->mac_src[5], (uint8_t)p->frame, "frame %" PRIu64 "'s own source MAC", p->frame);
    if (why == QR_SKIP_NOT_TCP) {
        s->icmp++;
        cr_assert_eq(p->family, 4);
        cr_assert_eq(p->src[12], 10);
        cr_assert_eq(p->src[15], 1);
        cr_assert_eq(p->dst[15], 2);
        cr_assert_eq(p->ip_len, 56);
        cr_assert_eq(p->ttl, 64);
    }
}

/* The frames the reader passes over reach the skip callback, one call per frame counted in the
 * stats, with what of them was decoded; the TCP frames still come back as packets. */
Test(capture, skipped_frames_reach_the_callback)
{
    char path[] = "/tmp/qr-skip-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    pcap_t *pd = pcap_open_dead(1 /* EN10MB */, 65535);
    pcap_dumper_t *d = pcap_dump_open(pd, path);
    cr_assert_not_null(d);
    /* per frame: TCP, ICMP (proto 1), ARP, UDP, a later TCP fragment */
    const unsigned kind[][3] = {{0x0800, 6, 0}, {0x0800, 1, 0},  {0x0806, 6, 0},
                                {0x0800, 1, 0}, {0x0800, 17, 0}, {0x0800, 6, 0},
                                {0x0800, 1, 0}, {0x0800, 6, 16}, {0x0800, 6, 0}};
    for (size_t i = 0; i < sizeof kind / sizeof *kind; i++) {
        uint8_t b[128];
        int other = kind[i][0] == 0x0800 && kind[i][1] != 6;
        size_t n = frame4(b, kind[i][0], kind[i][1], kind[i][2], 5, 5, other ? 56 : 40);
        if (other)
            n = 14 + 56;
        b[14 + 8] = 64;
        b[11] = (uint8_t)(i + 1); /* the source MAC names the frame */
        struct pcap_pkthdr h = {
            .ts = {1000 + (long)i, 0}, .caplen = (bpf_u_int32)n, .len = (bpf_u_int32)n};
        pcap_dump((u_char *)d, &h, b);
    }
    pcap_dump_close(d);
    pcap_close(pd);
    char err[QR_ERRBUF_SIZE];
    qr_capture *c;
    cr_assert_eq(qr_capture_open(&c, path, err), QR_OK, "%s", err);
    struct skips s = {0};
    qr_capture_on_skip(c, on_skip, &s);
    qr_capture_packet p;
    int tcp = 0, rc;
    while ((rc = qr_capture_next(c, &p, err)) == QR_OK)
        tcp++;
    cr_assert_eq(rc, QR_END, "%s", err);
    qr_capture_stats st;
    qr_capture_stats_get(c, &st);
    cr_assert_eq(tcp, 3);
    cr_assert_eq(st.frames, 9);
    for (int w = 0; w < QR_SKIP_COUNT; w++)
        cr_assert_eq(s.n[w], st.skipped[w], "reason %d: %" PRIu64 " calls, %" PRIu64 " counted", w,
                     s.n[w], st.skipped[w]);
    cr_assert_eq(s.icmp, 4, "three ICMP packets and a UDP one");
    cr_assert_eq(s.n[QR_SKIP_NOT_IP], 1);
    cr_assert_eq(s.n[QR_SKIP_FRAGMENT], 1);
    cr_assert_eq(s.last_t, 1007 * 1000000000ll, "the last skipped frame's time");
    qr_capture_close(c);
    unlink(path);
}

Test(capture, ipv6_extension_headers_and_fragments)
{
    uint8_t b[128] = {0};
    b[0] = 0x60;
    b[5] = 8 + 20; /* payload: hop-by-hop (8) + TCP (20) */
    b[6] = 0;      /* hop-by-hop */
    b[7] = 64;
    b[8] = 0xfd, b[23] = 1, b[24] = 0xfd, b[39] = 2;
    b[40] = 6; /* next: TCP */
    b[41] = 0; /* 8 bytes */
    uint8_t *t = b + 48;
    t[1] = 80, t[3] = 81, t[12] = 0x50, t[13] = 0x02;
    qr_capture_packet p;
    qr_skip why;
    cr_assert_eq(qr_capture_decode(229 /* IPV6 */, b, 68, 68, &p, &why), QR_OK);
    cr_assert_eq(p.family, 6);
    cr_assert_eq(p.dst_port, 81);
    cr_assert_eq(p.ip_len, 68);
    cr_assert_eq(p.payload, 0);
    b[6] = 44; /* a fragment header instead, offset 0 but more fragments */
    b[43] = 1;
    cr_assert_eq(qr_capture_decode(229, b, 68, 68, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_FRAGMENT);
    b[6] = 17; /* UDP */
    cr_assert_eq(qr_capture_decode(229, b, 68, 68, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_NOT_TCP);
    b[6] = 6; /* TCP right away, payload 28: 8 bytes of payload after a 20-byte header */
    t = b + 40;
    memset(t, 0, 28);
    t[12] = 0x50;
    cr_assert_eq(qr_capture_decode(229, b, 68, 68, &p, &why), QR_OK);
    cr_assert_eq(p.payload, 8);
    cr_assert_eq(qr_capture_decode(229, b, 50, 68, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_SNAPLEN);
}

/* Property: random frames of every link type never crash the decoder, and a frame it keeps has a
 * TCP header within its IP length. */
/* PPP (ns-3's point-to-point devices; RFC 1661): with or without the address and control
 * field, the protocol in two bytes or compressed to one; IPv4 and IPv6 read, LCP left out. */
Test(capture, ppp_frames_in_every_framing)
{
    uint8_t b[128], f[160];
    qr_capture_packet p;
    qr_skip why;
    size_t n = frame4(b, 0x0800, 6, 0, 5, 5, 1040), ip = n - 14;
    static const uint8_t heads[][4] = {{0x00, 0x21}, {0xff, 0x03, 0x00, 0x21}, {0x21}};
    static const size_t lens[] = {2, 4, 1};
    for (int dlt = 9; dlt <= 50; dlt += 41)
        for (int k = 0; k < 3; k++) {
            memcpy(f, heads[k], lens[k]);
            memcpy(f + lens[k], b + 14, ip);
            size_t fl = lens[k] + ip; /* headers only, as a snap length keeps them */
            uint32_t wire = (uint32_t)lens[k] + 1040;
            cr_assert_eq(qr_capture_decode(dlt, f, fl, wire, &p, &why), QR_OK, "%d %d", dlt, k);
            cr_assert_eq(p.payload, 1000);
            cr_assert_eq(p.src_port, 5001);
            cr_assert_eq(qr_capture_decode(dlt, f, lens[k] + 10, wire, &p, &why), 1);
            cr_assert_eq(why, QR_SKIP_SNAPLEN);
        }
    f[0] = 0xc0, f[1] = 0x21; /* LCP */
    cr_assert_eq(qr_capture_decode(9, f, 40, 40, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_NOT_IP);
    cr_assert_eq(qr_capture_decode(9, f, 1, 1, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_LINK);
}

Test(capture, property_random_frames_decode_or_skip)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    static const int dlts[] = {0, 1, 9, 12, 50, 108, 113, 228, 229, 276};
    uint8_t b[256];
    size_t kept = 0;
    for (int i = 0; i < 200000; i++) {
        size_t n = gsl_rng_uniform_int(r, sizeof b);
        for (size_t k = 0; k < n; k++)
            b[k] = (uint8_t)gsl_rng_uniform_int(r, 256);
        if (n > 14 && gsl_rng_uniform(r) < 0.5) { /* plausible headers half of the time */
            b[12] = 0x08, b[13] = 0;
            b[14] = 0x45;
            b[23] = 6;
        }
        qr_capture_packet p;
        qr_skip why = QR_SKIP_COUNT;
        int dlt = dlts[gsl_rng_uniform_int(r, sizeof dlts / sizeof dlts[0])];
        int rc = qr_capture_decode(dlt, b, n, (uint32_t)n, &p, &why);
        cr_assert(rc == QR_OK || rc == 1);
        if (rc == 1)
            cr_assert_lt(why, QR_SKIP_COUNT);
        else {
            kept++;
            cr_assert_geq(p.tcp_hdr_len, 20);
            cr_assert_leq(p.payload + p.tcp_hdr_len, p.ip_len);
        }
    }
    cr_log_info("kept %zu random frames", kept);
    gsl_rng_free(r);
}

/* The sender's super-segments split as a NIC sends them: MTU-sized, contiguous, back to back. */
Test(capture, tso_super_segments_split_at_the_mtu)
{
    capture_t c = read_all(CAP("eth-ipv4-sender-ns.pcap"));
    qr_capture_packet seg[64];
    size_t split = 0;
    for (size_t i = 0; i < c.n; i++) {
        const qr_capture_packet *p = &c.p[i];
        size_t n = qr_capture_segment(p, 1500, 10000000000ull, 38, seg, 64);
        cr_assert_geq(n, 1);
        cr_assert_leq(n, 64);
        uint32_t sum = 0;
        for (size_t k = 0; k < n; k++) {
            cr_assert_leq(seg[k].ip_len, 1500);
            cr_assert_eq(seg[k].seq, p->seq + sum, "contiguous sequence numbers");
            cr_assert_eq(seg[k].ip_id, (uint16_t)(p->ip_id + k), "consecutive IP IDs");
            if (k) /* back to back at 10 Gbps: 1538 wire bytes of a full segment = 1230.4 ns */
                cr_assert_eq(
                    seg[k].time_ns - seg[k - 1].time_ns,
                    (int64_t)((seg[k - 1].ip_len + 38) * 8 * 1000000000ull * k / 10000000000ull -
                              (seg[k - 1].ip_len + 38) * 8 * 1000000000ull * (k - 1) /
                                  10000000000ull),
                    "segment %zu of frame %llu", k, (unsigned long long)p->frame);
            cr_assert_eq(seg[k].tcp_flags & QR_TCP_PSH && k + 1 < n, 0, "PSH on the last only");
            sum += seg[k].payload;
        }
        cr_assert_eq(sum, p->payload, "the payload is conserved");
        split += n > 1;
    }
    cr_assert_gt(split, 0, "the sender's capture has super-segments to split");
    free(c.p);
    qr_capture_packet small = {.ip_len = 40, .payload = 0};
    cr_assert_eq(qr_capture_segment(&small, 1500, 1, 0, seg, 64), 1);
    qr_capture_packet big = {.ip_len = 3000, .payload = 2948};
    cr_assert_eq(qr_capture_segment(&big, 52, 1, 0, seg, 64), 0, "no room for payload");
    cr_assert_eq(qr_capture_segment(&big, 1500, 0, 0, seg, 64), 0, "no rate");
    cr_assert_eq(qr_capture_segment(&big, 1500, 1, 0, NULL, 0), 3, "counts without writing");
}

/* A netfilter log record (what `tcpdump -i nflog:G` writes of an nftables `log group G` rule): the
 * header, a packet-header TLV, and the packet, with its Ethernet header inside the payload (a
 * netdev egress hook) or given apart in a hardware-header TLV (an IPv4 payload). */
static size_t nflog_record(uint8_t *out, const uint8_t *frame, size_t frame_len, int hw_apart)
{
    size_t n = 0;
    out[n++] = 5; /* NFPROTO_NETDEV */
    out[n++] = 0;
    out[n++] = 0, out[n++] = 7; /* group 7 */
    uint8_t tlv1[8] = {8, 0, 1, 0, 0x08, 0x00, 1, 0};
    memcpy(out + n, tlv1, 8);
    n += 8;
    const uint8_t *pay = hw_apart ? frame + 14 : frame;
    size_t pay_len = hw_apart ? frame_len - 14 : frame_len;
    if (hw_apart) {
        out[n++] = 4 + 14, out[n++] = 0, out[n++] = 11, out[n++] = 0;
        memcpy(out + n, frame, 14);
        n += 16; /* padded */
    }
    out[n++] = (uint8_t)(4 + pay_len), out[n++] = (uint8_t)((4 + pay_len) >> 8);
    out[n++] = 9, out[n++] = 0;
    memcpy(out + n, pay, pay_len);
    n += (pay_len + 3) & ~(size_t)3;
    return n;
}

Test(capture, netfilter_log_records_give_the_packet_and_its_mac_addresses)
{
    uint8_t b[128], rec[256];
    qr_capture_packet p;
    qr_skip why;
    size_t n = frame4(b, 0x0800, 6, 0, 5, 5, 40);
    const uint8_t dst[6] = {2, 1, 0, 0, 9, 3}, src[6] = {2, 1, 0, 0, 8, 2};
    memcpy(b, dst, 6);
    memcpy(b + 6, src, 6);
    for (int apart = 0; apart < 2; apart++) {
        size_t r = nflog_record(rec, b, n, apart);
        cr_assert_eq(qr_capture_decode(239 /* NFLOG */, rec, r, (uint32_t)r, &p, &why), QR_OK,
                     "apart %d", apart);
        cr_assert_eq(p.src_port, 5001);
        cr_assert_eq(p.dst_port, 80);
        cr_assert_eq(p.ip_len, 40);
        cr_assert(p.has_mac);
        cr_assert_arr_eq(p.mac_src, src, 6);
        cr_assert_arr_eq(p.mac_dst, dst, 6);
    }
    /* an Ethernet frame carries its addresses too; a raw IP packet has none */
    cr_assert_eq(qr_capture_decode(1, b, n, (uint32_t)n, &p, &why), QR_OK);
    cr_assert(p.has_mac);
    cr_assert_arr_eq(p.mac_src, src, 6);
    cr_assert_eq(qr_capture_decode(228 /* IPV4 */, b + 14, n - 14, (uint32_t)n - 14, &p, &why),
                 QR_OK);
    cr_assert_not(p.has_mac);
    /* a record without a packet, and a TLV that claims less than its own header */
    size_t r = nflog_record(rec, b, n, 0);
    cr_assert_eq(qr_capture_decode(239, rec, 12, 12, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_LINK);
    rec[12] = 2, rec[13] = 0;
    cr_assert_eq(qr_capture_decode(239, rec, r, (uint32_t)r, &p, &why), 1);
    cr_assert_eq(why, QR_SKIP_BAD_LINK);
    cr_assert(qr_capture_link_supported(239));
}

/* Reads path whole, duplicates removed over window dedup (0: none): the packets kept, its
 * statistics into st. */
static size_t read_dedup(const char *path, unsigned dedup, qr_capture_stats *st)
{
    char err[QR_ERRBUF_SIZE];
    qr_capture *c;
    cr_assert_eq(qr_capture_open(&c, path, err), QR_OK, "%s", err);
    qr_capture_dedup(c, dedup);
    qr_capture_packet p;
    size_t kept = 0;
    int rc;
    while ((rc = qr_capture_next(c, &p, err)) == QR_OK)
        kept++;
    cr_assert_eq(rc, QR_END, "%s", err);
    qr_capture_stats_get(c, st);
    qr_capture_close(c);
    return kept;
}

/* Duplicated frames, as a port mirror gives them: over seeded random streams where some frames
 * are captured again 0 to 4 frames later, qr_capture_dedup(5) removes exactly the copies and
 * keeps every original (a resend has its own IP ID: kept); without it every frame is read. */
Test(capture, dedup_removes_exactly_the_copies)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qr-dedup-%d.pcap", (int)getpid());
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (unsigned long seed = 1; seed <= 20; seed++) {
        gsl_rng_set(r, seed);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 101 /* raw IP */};
        fwrite(hdr, sizeof hdr, 1, f);
        uint16_t pending[64];
        size_t n_pending = 0, originals = 0, copies = 0, frames = 0;
        for (uint16_t id = 1; id <= 200; id++) {
            uint16_t ids[2] = {id, 0};
            size_t k = 1;
            /* a copy of a recent frame (at most 4 frames back), or a resend: same sequence,
             * new IP ID */
            if (n_pending && gsl_rng_uniform(r) < 0.3)
                ids[k++] =
                    pending[n_pending - 1 - gsl_rng_uniform_int(r, n_pending < 4 ? n_pending : 4)];
            for (size_t j = 0; j < k; j++) {
                uint8_t ip[40] = {0x45, 0, 0, 40};
                ip[4] = (uint8_t)(ids[j] >> 8), ip[5] = (uint8_t)ids[j];
                ip[9] = 6;
                ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
                ip[20 + 12] = 0x50, ip[20 + 13] = 0x10;
                ip[24 + 3] = (uint8_t)(ids[j] % 7); /* sequence numbers repeat: resends */
                uint32_t rec[4] = {1700000000, (uint32_t)frames, 40, 40};
                fwrite(rec, sizeof rec, 1, f);
                fwrite(ip, sizeof ip, 1, f);
                frames++;
                if (j)
                    copies++;
                else
                    originals++;
            }
            if (n_pending == 64)
                memmove(pending, pending + 1, --n_pending * sizeof *pending);
            pending[n_pending++] = id;
        }
        fclose(f);
        for (int dedup = 0; dedup < 2; dedup++) {
            qr_capture_stats st;
            size_t kept = read_dedup(path, dedup ? 5 : 0, &st);
            cr_assert_eq(kept, dedup ? originals : frames, "seed %lu", seed);
            cr_assert_eq(st.skipped[QR_SKIP_DUPLICATE], dedup ? copies : 0, "seed %lu", seed);
            cr_assert_eq(st.frames, frames);
        }
    }
    gsl_rng_free(r);
    unlink(path);
}

/* One raw-IP frame of a TCP packet between 10.0.0.1:1000 (from_a) and 10.0.0.2:2000, IPv4 with
 * ip_id or IPv6, at t_us microseconds: its headers vary only by seq and the direction. */
static void dedup_frame(FILE *f, int v6, int from_a, uint16_t ip_id, uint32_t seq, uint64_t t_us)
{
    uint8_t b[60] = {0};
    size_t ip = v6 ? 40 : 20, n = ip + 20;
    uint8_t a[2] = {1, 2};
    if (!from_a)
        a[0] = 2, a[1] = 1;
    if (v6) {
        b[0] = 0x60, b[5] = 20, b[6] = 6, b[7] = 64;
        b[8] = 0xfd, b[23] = a[0], b[24] = 0xfd, b[39] = a[1];
    } else {
        b[0] = 0x45, b[3] = (uint8_t)n, b[4] = (uint8_t)(ip_id >> 8), b[5] = (uint8_t)ip_id;
        b[6] = 0x40, b[8] = 64, b[9] = 6, b[12] = 10, b[15] = a[0], b[16] = 10, b[19] = a[1];
    }
    uint8_t *t = b + ip;
    uint16_t sp = from_a ? 1000 : 2000, dp = from_a ? 2000 : 1000;
    t[0] = (uint8_t)(sp >> 8), t[1] = (uint8_t)sp, t[2] = (uint8_t)(dp >> 8), t[3] = (uint8_t)dp;
    t[4] = (uint8_t)(seq >> 24), t[5] = (uint8_t)(seq >> 16), t[6] = (uint8_t)(seq >> 8);
    t[7] = (uint8_t)seq;
    t[12] = 0x50, t[13] = 0x10, t[14] = 0xff;
    uint32_t rec[4] = {(uint32_t)(1700000000 + t_us / 1000000), (uint32_t)(t_us % 1000000),
                       (uint32_t)n, (uint32_t)n};
    fwrite(rec, sizeof rec, 1, f);
    fwrite(b, n, 1, f);
}

/* The same bytes sent twice by a stack are not a capture's copy. Over seeded random
 * conversations whose packets carry nothing that tells two sendings apart (IPv4 with IP ID 0,
 * or IPv6) and repeat their headers often, with the three ways equal headers arise:
 *   - a capture's copy, 0-100 us after the frame, before the other end's next packet: removed;
 *   - a timer's resend, 1 ms or more later: kept;
 *   - an answer sent again, as soon as 0 us later, but after the other end sent something (a
 *     SYN again gets its SYN-ACK again; an out-of-order segment its duplicate ACK): kept;
 * qr_capture_dedup(5) removes exactly the copies. With IPv4 IDs that rise, only copies repeat. */
Test(capture, dedup_keeps_the_same_bytes_sent_again)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qr-dedup2-%d.pcap", (int)getpid());
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (unsigned long seed = 1; seed <= 60; seed++) {
        gsl_rng_set(r, seed);
        int kind = (int)(seed % 3); /* 0: IPv4 ID 0, 1: IPv6, 2: IPv4 IDs that rise */
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 101 /* raw IP */};
        fwrite(hdr, sizeof hdr, 1, f);
        struct {
            int from_a;
            uint32_t seq;
            uint16_t id;
            uint64_t t;
        } sent[8]; /* the last packets sent (originals), newest last */
        size_t n_sent = 0, originals = 0, copies = 0;
        uint64_t t = 0;
        uint16_t id = 1;
        int last_from = -1;
        for (int i = 0; i < 300; i++) {
            double u = gsl_rng_uniform(r);
            int from_a = (int)gsl_rng_uniform_int(r, 2);
            uint32_t seq = (uint32_t)gsl_rng_uniform_int(r, 3);
            if (u < 0.25 && n_sent) { /* the capture's copy of one of its last frames of the
                                       * direction that spoke last, none of the other since */
                size_t k = gsl_rng_uniform_int(r, n_sent < 4 ? n_sent : 4);
                size_t at = n_sent - 1 - k;
                uint64_t gap = gsl_rng_uniform_int(r, 100);
                int ok = t + gap - sent[at].t < QR_CAPTURE_DEDUP_SAME_NS / 1000;
                for (size_t j = at; j < n_sent; j++)
                    ok &= sent[j].from_a == sent[n_sent - 1].from_a;
                if (ok) {
                    t += gap;
                    dedup_frame(f, kind == 1, sent[at].from_a, kind == 2 ? sent[at].id : 0,
                                sent[at].seq, t);
                    copies++;
                    continue;
                }
            }
            if (u < 0.5 && n_sent) { /* the same headers as a recent packet, sent again */
                size_t k = gsl_rng_uniform_int(r, n_sent < 4 ? n_sent : 4);
                from_a = sent[n_sent - 1 - k].from_a;
                seq = sent[n_sent - 1 - k].seq;
                if (last_from == from_a) /* a timer's resend */
                    t += 1000 + gsl_rng_uniform_int(r, 3000);
            }
            /* an answer may come at once; a packet of the direction that just spoke, only after
             * a millisecond (unless it differs from the recent ones) */
            if (last_from == from_a)
                t += 1000;
            dedup_frame(f, kind == 1, from_a, kind == 2 ? id : 0, seq, t);
            originals++;
            last_from = from_a;
            if (n_sent == 8)
                memmove(sent, sent + 1, --n_sent * sizeof *sent);
            sent[n_sent].from_a = from_a, sent[n_sent].seq = seq;
            sent[n_sent].id = id++, sent[n_sent].t = t;
            n_sent++;
        }
        fclose(f);
        qr_capture_stats st;
        size_t kept = read_dedup(path, 5, &st);
        cr_assert_eq(kept, originals, "seed %lu (kind %d): kept %zu of %zu sent, %zu copies", seed,
                     kind, kept, originals, copies);
        cr_assert_eq(st.skipped[QR_SKIP_DUPLICATE], copies, "seed %lu", seed);
        cr_assert(copies > 5 && originals > 100, "seed %lu: %zu copies, %zu sent", seed, copies,
                  originals);
    }
    gsl_rng_free(r);
    unlink(path);
}
