/* qreplay import, the second pass: recordings from real kernel captures (tests/data/captures) and
 * from small crafted ones, checked for what each kind of evidence must give. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qreplay/capture.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/import.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"

#define CAP(name) QR_SOURCE_DIR "/tests/data/captures/" name

#include "crafted.h"

TestSuite(import_run, .init = make_tmp, .fini = rm_tmp);

/* ---- pcap surgery on nanosecond little-endian pcaps (what tcpdump wrote here) ---- */

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16),
    p[3] = (unsigned char)(v >> 24);
}

/* Copy src to dst with every timestamp moved by delta_ns and frame `skip` (from 1; 0: none) left
 * out. */
static void rewrite(const char *src, const char *dst, int64_t delta_ns, uint64_t skip)
{
    size_t n;
    unsigned char *b = slurp(src, &n);
    cr_assert_eq(le32(b), 0xa1b23c4du, "a nanosecond little-endian pcap");
    FILE *f = fopen(dst, "wb");
    fwrite(b, 1, 24, f);
    uint64_t frame = 0;
    for (size_t at = 24; at + 16 <= n;) {
        uint32_t caplen = le32(b + at + 8);
        frame++;
        int64_t t = (int64_t)le32(b + at) * 1000000000 + le32(b + at + 4) + delta_ns;
        put32(b + at, (uint32_t)(t / 1000000000));
        put32(b + at + 4, (uint32_t)(t % 1000000000));
        if (frame != skip)
            fwrite(b + at, 1, 16 + caplen, f);
        at += 16 + caplen;
    }
    fclose(f);
    free(b);
}

/* Segments the NIC makes of every packet `from` sent in a capture. */
static uint64_t segments_sent(const char *path, const char *from)
{
    char err[QR_ERRBUF_SIZE];
    uint8_t a[16];
    qr_addr_parse(from, a);
    qr_capture *c;
    cr_assert_eq(qr_capture_open(&c, path, err), QR_OK, "%s", err);
    qr_capture_packet p;
    uint64_t n = 0;
    while (qr_capture_next(c, &p, err) == QR_OK)
        if (!memcmp(p.src, a, 16))
            n += qr_capture_segment(&p, QR_MTU_BYTES, 10000000000ull, 2, NULL, 0);
    qr_capture_close(c);
    return n;
}

static qr_recording *open_rec(const char *dir)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording *r;
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    return r;
}

/* Both ends of two real connections: every segment sent is matched at the receiver, the
 * recording reads back with the runtime's conventions, nothing is lost or left out. */
Test(import_run, both_ends_of_real_connections)
{
    const char *caps[2] = {CAP("pair-a.pcap"), CAP("pair-b.pcap")};
    qr_host_map_entry map[2] = {entry("10.77.0.1", 0, "pair-a.pcap"),
                                entry("10.77.0.2", 1, "pair-b.pcap")};
    char dir[256];
    snprintf(dir, sizeof dir, "%s/rec", tmpdir);
    qr_import_report *rep = import(caps, 2, map, 2, QR_IMPORT_CLOCK_AUTO, dir);
    cr_assert_eq(rep->connections, 2);
    cr_assert_eq(rep->directions[QR_EVIDENCE_BOTH], 4);
    cr_assert_eq(rep->drops[QR_EVIDENCE_BOTH], 0, "nothing was lost on the veth pair");
    cr_assert_eq(rep->unmatched_received, 0);
    cr_assert_eq(rep->received, rep->packets, "every segment sent reached the other capture");
    cr_assert_eq(rep->clock_pairs, 1);
    cr_assert(rep->clock_applied);
    uint64_t a_sent = segments_sent(caps[0], "10.77.0.1");
    uint64_t b_sent = segments_sent(caps[1], "10.77.0.2");
    cr_assert_eq(rep->hosts[0].packets, a_sent, "A's packets as its NIC sent them");
    cr_assert_eq(rep->hosts[1].packets, b_sent);
    cr_assert_eq(rep->hosts[2].packets, 0);
    cr_assert_gt(rep->tso_split, 0, "the sender's capture has TSO super-segments");
    for (size_t c = 0; c < 2; c++) {
        const qr_import_capture_report *x = &rep->captures[c];
        uint64_t skipped = 0;
        for (int k = 0; k < QR_SKIP_COUNT; k++)
            skipped += x->stats.skipped[k];
        cr_assert_eq(x->stats.kept + skipped, x->stats.frames, "every frame accounted for");
        cr_assert_eq(x->sent + x->received, x->stats.kept);
        cr_assert_eq(strlen(x->sha256), 64);
    }
    qr_recording *r = open_rec(dir);
    cr_assert_eq(qr_recording_hosts(r), 3);
    const qr_flow_table *ft = qr_recording_flows(r);
    cr_assert_eq(qr_flow_table_flows(ft), 2);
    cr_assert_eq(qr_flow_table_flow(ft, 0)->bytes, 50000);
    cr_assert_eq(qr_flow_table_flow(ft, 1)->bytes, 20000);
    cr_assert(qr_recording_has_received(r));
    size_t n;
    const qr_rec_packet *pk = qr_recording_packets(r, 0, &n);
    cr_assert_eq(n, a_sent);
    uint64_t payload = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_leq(pk[i].pk.ip_len, QR_MTU_BYTES, "no segment above the MTU");
        if (pk[i].dir == 0)
            payload += pk[i].pk.ip_len - 40u - pk[i].pk.tcp_opt_len;
        int64_t t;
        cr_assert_eq(qr_recording_received(r, qr_packet_id(pk[i].dir, pk[i].seq), &t), QR_OK);
        cr_assert(!pk[i].drop_tag);
    }
    cr_assert_eq(payload, 50000, "flow 0's data, in 1448-byte segments with timestamps");
    qr_recording_close(r);
    qr_import_report_free(rep);
}

/* Moving one capture's clock moves the estimate by exactly as much, and reconciliation takes it
 * out again: the recording is the same to the nanosecond. */
Test(import_run, reconciliation_removes_a_clock_offset)
{
    char b_late[256], d1[256], d2[256], d3[256];
    snprintf(b_late, sizeof b_late, "%s/pair-b.pcap", tmpdir);
    const int64_t delta = 3000000;
    rewrite(CAP("pair-b.pcap"), b_late, delta, 0);
    qr_host_map_entry map[2] = {entry("10.77.0.1", 0, "pair-a.pcap"),
                                entry("10.77.0.2", 1, "pair-b.pcap")};
    const char *orig[2] = {CAP("pair-a.pcap"), CAP("pair-b.pcap")};
    const char *late[2] = {CAP("pair-a.pcap"), b_late};
    snprintf(d1, sizeof d1, "%s/orig", tmpdir);
    snprintf(d2, sizeof d2, "%s/late", tmpdir);
    snprintf(d3, sizeof d3, "%s/late-none", tmpdir);
    qr_import_report *r1 = import(orig, 2, map, 2, QR_IMPORT_CLOCK_RECONCILE, d1);
    qr_import_report *r2 = import(late, 2, map, 2, QR_IMPORT_CLOCK_RECONCILE, d2);
    qr_import_report *r3 = import(late, 2, map, 2, QR_IMPORT_CLOCK_NONE, d3);
    /* each estimate is rounded to whole ns: the difference of two may be off by one */
    int64_t moved = r2->hosts[1].clock.offset_ns - r1->hosts[1].clock.offset_ns;
    cr_assert(moved >= delta - 1 && moved <= delta + 1, "estimate moved by %" PRId64 " ns", moved);
    cr_assert(!r3->clock_applied, "--clock none estimates but does not apply");
    qr_recording *a = open_rec(d1), *b = open_rec(d2), *c = open_rec(d3);
    for (uint32_t h = 0; h < 2; h++) {
        size_t na, nb;
        const qr_rec_packet *pa = qr_recording_packets(a, h, &na);
        const qr_rec_packet *pb = qr_recording_packets(b, h, &nb);
        cr_assert_eq(na, nb);
        for (size_t i = 0; i < na; i++) {
            int64_t d = pa[i].pk.time_ns - pb[i].pk.time_ns;
            cr_assert(d >= -1 && d <= 1, "host %u packet %zu: %lld ns apart", h, i, (long long)d);
        }
    }
    /* unreconciled, host 1's times are its own clock's: exactly 3 ms later, host 0's unchanged */
    char d4[256];
    snprintf(d4, sizeof d4, "%s/orig-none", tmpdir);
    qr_import_report *r4 = import(orig, 2, map, 2, QR_IMPORT_CLOCK_NONE, d4);
    qr_recording *o = open_rec(d4);
    for (uint32_t h = 0; h < 2; h++) {
        size_t n0, n1;
        const qr_rec_packet *po = qr_recording_packets(o, h, &n0);
        const qr_rec_packet *pn = qr_recording_packets(c, h, &n1);
        cr_assert_eq(n0, n1);
        for (size_t i = 0; i < n0; i++)
            cr_assert_eq(pn[i].pk.time_ns - po[i].pk.time_ns, h ? delta : 0, "host %u", h);
    }
    qr_import_report_free(r4);
    qr_recording_close(o);
    qr_recording_close(a);
    qr_recording_close(b);
    qr_recording_close(c);
    qr_import_report_free(r1);
    qr_import_report_free(r2);
    qr_import_report_free(r3);
}

/* The frame number of the first packet `from` sent with more than `min_payload` bytes, and how
 * many segments it makes. */
static uint64_t find_frame(const char *path, const char *from, uint32_t min_payload, size_t *segs)
{
    char err[QR_ERRBUF_SIZE];
    uint8_t a[16];
    qr_addr_parse(from, a);
    qr_capture *c;
    cr_assert_eq(qr_capture_open(&c, path, err), QR_OK, "%s", err);
    qr_capture_packet p;
    uint64_t frame = 0;
    while (!frame && qr_capture_next(c, &p, err) == QR_OK)
        if (!memcmp(p.src, a, 16) && p.payload > min_payload) {
            frame = p.frame;
            *segs = qr_capture_segment(&p, QR_MTU_BYTES, 10000000000ull, 2, NULL, 0);
        }
    qr_capture_close(c);
    cr_assert_gt(frame, 0);
    return frame;
}

/* A GRO-merged packet cut out of the receiver's capture: exactly its segments are drops, named
 * as the sender's consecutive packets and tagged in the recording; a super-segment cut out of
 * the sender's capture: its segments are received but match nothing sent. */
Test(import_run, planted_drops_are_found_segment_for_segment)
{
    char cut_b[256], cut_a[256], d1[256], d2[256];
    size_t segs;
    uint64_t frame = find_frame(CAP("pair-b.pcap"), "10.77.0.1", 2 * 1448, &segs);
    cr_assert_gt(segs, 2, "a GRO-merged packet");
    snprintf(cut_b, sizeof cut_b, "%s/pair-b.pcap", tmpdir);
    rewrite(CAP("pair-b.pcap"), cut_b, 0, frame);
    qr_host_map_entry map[2] = {entry("10.77.0.1", 0, "pair-a.pcap"),
                                entry("10.77.0.2", 1, "pair-b.pcap")};
    const char *caps[2] = {CAP("pair-a.pcap"), cut_b};
    snprintf(d1, sizeof d1, "%s/cut-b", tmpdir);
    qr_import_report *r = import(caps, 2, map, 2, QR_IMPORT_CLOCK_AUTO, d1);
    cr_assert_eq(r->drops[QR_EVIDENCE_BOTH], segs, "%llu drops for %zu segments",
                 (unsigned long long)r->drops[QR_EVIDENCE_BOTH], segs);
    cr_assert_eq(r->unmatched_received, 0);
    cr_assert_eq(r->received + segs, r->packets);
    qr_recording *rec = open_rec(d1);
    size_t n, tagged = 0;
    const qr_rec_packet *pk = qr_recording_packets(rec, 0, &n);
    int64_t first = -1;
    for (size_t i = 0; i < n; i++)
        if (pk[i].drop_tag) {
            cr_assert_eq(pk[i].pk.tcp_flags & QR_TCP_SYN, 0);
            if (first < 0)
                first = (int64_t)pk[i].seq;
            cr_assert_eq(pk[i].seq, (uint32_t)first + tagged, "consecutive packets");
            int64_t t;
            cr_assert_eq(qr_recording_received(rec, qr_packet_id(pk[i].dir, pk[i].seq), &t),
                         QR_ENOTFOUND);
            tagged++;
        }
    cr_assert_eq(tagged, segs);
    qr_recording_close(rec);
    qr_import_report_free(r);

    size_t segs_a;
    uint64_t fa = find_frame(CAP("pair-a.pcap"), "10.77.0.1", 2 * 1448, &segs_a);
    snprintf(cut_a, sizeof cut_a, "%s/pair-a.pcap", tmpdir);
    rewrite(CAP("pair-a.pcap"), cut_a, 0, fa);
    const char *caps2[2] = {cut_a, CAP("pair-b.pcap")};
    snprintf(d2, sizeof d2, "%s/cut-a", tmpdir);
    r = import(caps2, 2, map, 2, QR_IMPORT_CLOCK_AUTO, d2);
    cr_assert_eq(r->unmatched_received, segs_a);
    cr_assert_eq(r->drops[QR_EVIDENCE_BOTH], 0, "what was not seen sent is not a drop");
    qr_import_report_free(r);
}

/* Only the sender captured: the original of a retransmitted segment is the drop; the receiver is
 * reconstructed from what the sender received (its SYN-ACK's IP ID 0 starts no sequence). */
Test(import_run, sender_only_retransmission_is_the_evidence)
{
    char path[256], dir[256];
    snprintf(path, sizeof path, "%s/a.pcap", tmpdir);
    qr_packet p[] = {
        tcp(1 * MS, A, B, 40000, 80, 100, 0, QR_TCP_SYN, 0, 10),
        tcp(2 * MS, B, A, 80, 40000, 900, 101, QR_TCP_SYN | ACKF, 0, 0),
        tcp(3 * MS, A, B, 40000, 80, 101, 901, ACKF, 0, 11),
        tcp(4 * MS, A, B, 40000, 80, 101, 901, ACKF, 1000, 12),
        tcp(5 * MS, A, B, 40000, 80, 1101, 901, ACKF, 1000, 13),
        tcp(6 * MS, B, A, 80, 40000, 901, 1101, ACKF, 0, 500),
        tcp(7 * MS, B, A, 80, 40000, 901, 1101, ACKF, 0, 501),
        tcp(30 * MS, A, B, 40000, 80, 1101, 901, ACKF, 1000, 14), /* retransmission */
        tcp(31 * MS, B, A, 80, 40000, 901, 2101, ACKF, 0, 502),
    };
    write_capture(path, p, sizeof p / sizeof p[0]);
    qr_host_map_entry map[1] = {entry(A, 0, "a.pcap")};
    const char *caps[1] = {path};
    snprintf(dir, sizeof dir, "%s/rec", tmpdir);
    qr_import_report *r = import(caps, 1, map, 1, QR_IMPORT_CLOCK_AUTO, dir);
    cr_assert_eq(r->directions[QR_EVIDENCE_RETRANS], 1);
    cr_assert_eq(r->directions[QR_EVIDENCE_IPID], 1);
    cr_assert_eq(r->drops[QR_EVIDENCE_RETRANS], 1);
    cr_assert_eq(r->drops[QR_EVIDENCE_IPID], 0, "the SYN-ACK's ID 0 is no gap");
    cr_assert(r->hosts[1].reconstructed);
    cr_assert_eq(r->hosts[1].reconstructed_packets, 4);
    cr_assert_eq(r->clock_pairs, 0);
    qr_recording *rec = open_rec(dir);
    size_t n;
    const qr_rec_packet *pk = qr_recording_packets(rec, 0, &n);
    cr_assert_eq(n, 5, "SYN, ACK, two segments, the retransmission");
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(pk[i].drop_tag, i == 3, "packet %zu: the first transmission of 1101", i);
    /* B's packets: sent the unloaded latency (2 links, 1 us + 42 B at 10 Gbps each) before A
     * received them */
    const qr_rec_packet *pb = qr_recording_packets(rec, 1, &n);
    cr_assert_eq(n, 4);
    int64_t lat = 2 * (1000 + (40 + 2) * 8 / 10); /* 40 B IP packet + 2 B PPP */
    int64_t t;
    cr_assert_eq(qr_recording_received(rec, qr_packet_id(pb[1].dir, pb[1].seq), &t), QR_OK);
    cr_assert_eq(t - pb[1].pk.time_ns, lat, "%lld", (long long)(t - pb[1].pk.time_ns));
    qr_recording_close(rec);
    qr_import_report_free(r);
}

/* Only the receiver captured (B): what closes a hole in A's sequence numbers decides. Each case
 * is the handshake (A's ACK with IP ID 19), segments of 1000 bytes at 101, 1101 and 3101 (IDs 20,
 * 21, 23: the hole [2101, 3101)), then what follows. Conservation: the recording's data bytes are
 * the captured ones plus exactly the bytes of the drops, and no packet is made up without a hole a
 * resend fills. */
Test(import_run, receiver_only_holes_need_evidence)
{
    char path[256], dir[256];
    snprintf(path, sizeof path, "%s/b.pcap", tmpdir);
    snprintf(dir, sizeof dir, "%s/rec", tmpdir);
    struct {
        const char *what;
        uint16_t id_hole, id_fill; /* IDs of the segment opening the hole and of its filler */
        int fill, ack_after;       /* a filler captured; B acknowledges up to 4101 after */
        uint64_t drops, reordered, not_captured, unknown;
    } cases[] = {
        {"a resend (newer ID) fills it", 23, 24, 1, 1, 1, 0, 0, 0},
        {"the late original (older ID) fills it", 23, 22, 1, 1, 0, 1, 0, 0},
        {"acknowledged, no filler captured", 23, 0, 0, 1, 0, 0, 1, 0},
        {"open at the capture's end", 23, 0, 0, 0, 0, 0, 0, 1},
        {"one counter for many connections: IDs jump by 30, no hole", 0, 0, 0, 0, 0, 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int no_hole = c == 4;
        qr_packet p[9];
        size_t n = 0;
        p[n++] = tcp(1 * MS, A, B, 40000, 80, 100, 0, QR_TCP_SYN, 0, 7);
        p[n++] = tcp(2 * MS, B, A, 80, 40000, 900, 101, QR_TCP_SYN | ACKF, 0, 0);
        p[n++] = tcp(2 * MS + 10000, A, B, 40000, 80, 101, 901, ACKF, 0, 19);
        p[n++] = tcp(3 * MS, A, B, 40000, 80, 101, 901, ACKF, 1000, 20);
        p[n++] = tcp(4 * MS, A, B, 40000, 80, 1101, 901, ACKF, 1000, no_hole ? 50 : 21);
        p[n++] = tcp(6 * MS, A, B, 40000, 80, no_hole ? 2101 : 3101, 901, ACKF, 1000,
                     no_hole ? 80 : cases[c].id_hole);
        if (cases[c].fill)
            p[n++] = tcp(8 * MS, A, B, 40000, 80, 2101, 901, ACKF, 1000, cases[c].id_fill);
        p[n++] = tcp(9 * MS, B, A, 80, 40000, 901, cases[c].ack_after || no_hole ? 4101 : 2101,
                     ACKF, 0, 300);
        write_capture(path, p, n);
        qr_host_map_entry map[1] = {entry(B, 1, "b.pcap")};
        const char *caps[1] = {path};
        qr_import_report *r = import(caps, 1, map, 1, QR_IMPORT_CLOCK_AUTO, dir);
        cr_assert_eq(r->drops[QR_EVIDENCE_IPID], cases[c].drops, "%s", cases[c].what);
        cr_assert_eq(r->hole_reordered, cases[c].reordered, "%s", cases[c].what);
        cr_assert_eq(r->hole_not_captured, cases[c].not_captured, "%s", cases[c].what);
        cr_assert_eq(r->hole_unknown, cases[c].unknown, "%s", cases[c].what);
        size_t captured = n - 2; /* A's packets: all but the SYN-ACK and B's last ACK */
        cr_assert_eq(r->hosts[0].reconstructed_packets, captured + cases[c].drops, "%s",
                     cases[c].what);
        qr_recording *rec = open_rec(dir);
        size_t np;
        const qr_rec_packet *pk = qr_recording_packets(rec, 0, &np);
        cr_assert_eq(np, captured + cases[c].drops, "%s", cases[c].what);
        uint64_t bytes = 0, tagged = 0, tagged_bytes = 0, late = 0;
        for (size_t i = 0; i < np; i++) {
            uint32_t pay = pk[i].pk.ip_len - 40u;
            bytes += pay;
            if (qr_recording_late(rec, qr_packet_id(pk[i].dir, pk[i].seq))) {
                late++;
                cr_assert_eq(pk[i].pk.seq, 2101, "the late original is marked: %s", cases[c].what);
            }
            if (pk[i].drop_tag) {
                tagged++;
                tagged_bytes += pay;
                cr_assert_eq(pk[i].pk.seq, 2101, "the lost packet carries the hole: %s",
                             cases[c].what);
            }
            if (i)
                cr_assert_geq(pk[i].pk.time_ns, pk[i - 1].pk.time_ns, "in order");
        }
        uint64_t captured_bytes = 1000u * (captured - 2); /* all but the SYN and the ACK */
        cr_assert_eq(tagged, cases[c].drops);
        cr_assert_eq(late, cases[c].reordered, "%s", cases[c].what);
        cr_assert_eq(bytes, captured_bytes + tagged_bytes, "%s", cases[c].what);
        cr_assert_eq(tagged_bytes, 1000u * cases[c].drops);
        qr_recording_close(rec);
        qr_import_report_free(r);
    }
}

/* Both ends captured, one segment overtaken on the way (it arrives 100 us after the next one):
 * reordered, not a drop, and its receive time kept. The same segment never arriving is a drop. */
Test(import_run, an_overtaken_segment_is_reordered_not_lost)
{
    char pa[256], pb[256], dir[256];
    snprintf(pa, sizeof pa, "%s/a.pcap", tmpdir);
    snprintf(pb, sizeof pb, "%s/b.pcap", tmpdir);
    for (int lose = 0; lose < 2; lose++) {
        int64_t late = 8 * MS + 100000; /* after segment 1101+1000's arrival at 8 ms */
        qr_packet a[] = {
            tcp(1 * MS, A, B, 40000, 80, 100, 0, QR_TCP_SYN, 0, 10),
            tcp(3 * MS, B, A, 80, 40000, 900, 101, QR_TCP_SYN | ACKF, 0, 0),
            tcp(4 * MS, A, B, 40000, 80, 101, 901, ACKF, 0, 11),
            tcp(5 * MS, A, B, 40000, 80, 101, 901, ACKF, 1000, 12),
            tcp(5 * MS + 10000, A, B, 40000, 80, 1101, 901, ACKF, 1000, 13),
            tcp(5 * MS + 20000, A, B, 40000, 80, 2101, 901, ACKF, 1000, 14),
            tcp(5 * MS + 30000, A, B, 40000, 80, 3101, 901, ACKF, 1000, 15),
            tcp(12 * MS, B, A, 80, 40000, 901, 4101, ACKF, 0, 301),
        };
        qr_packet b[] = {
            tcp(2 * MS, A, B, 40000, 80, 100, 0, QR_TCP_SYN, 0, 10),
            tcp(2 * MS + 1000, B, A, 80, 40000, 900, 101, QR_TCP_SYN | ACKF, 0, 0),
            tcp(6 * MS, A, B, 40000, 80, 101, 901, ACKF, 0, 11),
            tcp(7 * MS, A, B, 40000, 80, 101, 901, ACKF, 1000, 12),
            tcp(8 * MS, A, B, 40000, 80, 2101, 901, ACKF, 1000, 14),
            tcp(late, A, B, 40000, 80, 1101, 901, ACKF, 1000, 13),
            tcp(9 * MS, A, B, 40000, 80, 3101, 901, ACKF, 1000, 15),
            tcp(11 * MS, B, A, 80, 40000, 901, 4101, ACKF, 0, 301),
        };
        size_t nb = sizeof b / sizeof b[0];
        if (lose) {
            memmove(&b[5], &b[6], (nb - 6) * sizeof b[0]);
            nb--;
        }
        write_capture(pa, a, sizeof a / sizeof a[0]);
        write_capture(pb, b, nb);
        qr_host_map_entry map[2] = {entry(A, 0, "a.pcap"), entry(B, 1, "b.pcap")};
        const char *caps[2] = {pa, pb};
        snprintf(dir, sizeof dir, "%s/rec%d", tmpdir, lose);
        qr_import_report *r = import(caps, 2, map, 2, QR_IMPORT_CLOCK_NONE, dir);
        cr_assert_eq(r->drops[QR_EVIDENCE_BOTH], (uint64_t)lose);
        cr_assert_eq(r->overtaken, (uint64_t)!lose);
        cr_assert_eq(r->unmatched_received, 0);
        qr_recording *rec = open_rec(dir);
        size_t n;
        const qr_rec_packet *pk = qr_recording_packets(rec, 0, &n);
        cr_assert_eq(n, 6, "SYN, ACK, four segments");
        int64_t t;
        int got = qr_recording_received(rec, qr_packet_id(pk[3].dir, pk[3].seq), &t);
        cr_assert_eq(pk[3].pk.seq, 1101);
        if (lose) {
            cr_assert_eq(got, QR_ENOTFOUND);
            cr_assert_eq(pk[3].drop_tag, 1);
        } else {
            cr_assert_eq(got, QR_OK);
            cr_assert_eq(t, late - r->time_base_ns, "its own arrival time");
            cr_assert_eq(pk[3].drop_tag, 0);
        }
        qr_recording_close(rec);
        qr_import_report_free(r);
    }
}

/* Pure ACKs after the sender's last data all carry one sequence number; two that swap places on
 * the way are overtaken, not a loss "resent" by the other (a pure ACK is never resent). A lost one
 * is still lost. And the real two-way bulk (tests/data/captures/bulk-both-*.pcap, whose client's
 * last ACKs reach the server in another order): nothing dropped, every segment matched. */
Test(import_run, pure_acks_that_swap_places_are_not_drops)
{
    char pa[256], pb[256], dir[256];
    snprintf(pa, sizeof pa, "%s/a.pcap", tmpdir);
    snprintf(pb, sizeof pb, "%s/b.pcap", tmpdir);
    for (int lose = 0; lose < 2; lose++) {
        qr_packet a[] = {
            tcp(1 * MS, A, B, 40000, 80, 100, 0, QR_TCP_SYN, 0, 10),
            tcp(3 * MS, B, A, 80, 40000, 900, 101, QR_TCP_SYN | ACKF, 0, 0),
            tcp(4 * MS, A, B, 40000, 80, 101, 901, ACKF, 0, 11),
            tcp(5 * MS, B, A, 80, 40000, 901, 101, ACKF, 1000, 1),
            tcp(5 * MS + 10000, B, A, 80, 40000, 1901, 101, ACKF, 1000, 2),
            tcp(5 * MS + 20000, B, A, 80, 40000, 2901, 101, ACKF, 1000, 3),
            tcp(7 * MS, A, B, 40000, 80, 101, 1901, ACKF, 0, 12),
            tcp(7 * MS + 1000, A, B, 40000, 80, 101, 2901, ACKF, 0, 13),
            tcp(7 * MS + 2000, A, B, 40000, 80, 101, 3901, ACKF, 0, 14),
            tcp(21 * MS, B, A, 80, 40000, 3901, 101, ACKF, 0, 4),
        };
        /* B's view: A's three ACKs arrive 14, 12, 13 (or 14, 13: 12 lost) */
        qr_packet b[] = {
            tcp(2 * MS, A, B, 40000, 80, 100, 0, QR_TCP_SYN, 0, 10),
            tcp(2 * MS + 1000, B, A, 80, 40000, 900, 101, QR_TCP_SYN | ACKF, 0, 0),
            tcp(4 * MS + 500, B, A, 80, 40000, 901, 101, ACKF, 1000, 1),
            tcp(4 * MS + 600, B, A, 80, 40000, 1901, 101, ACKF, 1000, 2),
            tcp(4 * MS + 700, B, A, 80, 40000, 2901, 101, ACKF, 1000, 3),
            tcp(5 * MS, A, B, 40000, 80, 101, 901, ACKF, 0, 11),
            tcp(8 * MS, A, B, 40000, 80, 101, 3901, ACKF, 0, 14),
            tcp(8 * MS + 1000, A, B, 40000, 80, 101, 1901, ACKF, 0, 12),
            tcp(8 * MS + 2000, A, B, 40000, 80, 101, 2901, ACKF, 0, 13),
            tcp(20 * MS, B, A, 80, 40000, 3901, 101, ACKF, 0, 4), /* its capture goes on */
        };
        size_t nb = sizeof b / sizeof b[0];
        if (lose) {
            memmove(&b[7], &b[8], 2 * sizeof b[0]);
            nb--;
        }
        write_capture(pa, a, sizeof a / sizeof a[0]);
        write_capture(pb, b, nb);
        qr_host_map_entry map[2] = {entry(A, 0, "a.pcap"), entry(B, 1, "b.pcap")};
        const char *caps[2] = {pa, pb};
        snprintf(dir, sizeof dir, "%s/acks%d", tmpdir, lose);
        qr_import_report *r = import(caps, 2, map, 2, QR_IMPORT_CLOCK_NONE, dir);
        cr_assert_eq(r->drops[QR_EVIDENCE_BOTH], (uint64_t)lose, "%d", lose);
        cr_assert_eq(r->overtaken, 2u - (uint64_t)lose, "lose %d: overtaken %lu", lose,
                     (unsigned long)r->overtaken);
        cr_assert_eq(r->unmatched_received, 0);
        qr_import_report_free(r);
    }
    const char *caps[2] = {CAP("bulk-both-client.pcap"), CAP("bulk-both-server.pcap")};
    qr_host_map_entry map[2] = {entry("10.78.1.1", 0, "bulk-both-client.pcap"),
                                entry("10.78.2.1", 1, "bulk-both-server.pcap")};
    snprintf(dir, sizeof dir, "%s/bulk", tmpdir);
    qr_import_report *r = import(caps, 2, map, 2, QR_IMPORT_CLOCK_NONE, dir);
    cr_assert_eq(r->drops[QR_EVIDENCE_BOTH], 0, "nothing was dropped on the way");
    cr_assert_eq(r->unmatched_received, 0);
    cr_assert_gt(r->overtaken, 0, "the client's last ACKs swapped places");
    qr_import_report_free(r);
}

static int exists_like(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        found |= !strncmp(e->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return found;
}

/* Failures name what is wrong and leave nothing behind, an earlier recording included. */
Test(import_run, failures_leave_nothing_and_keep_the_earlier_recording)
{
    char err[QR_ERRBUF_SIZE], dir[256], marker[300], path[256];
    snprintf(dir, sizeof dir, "%s/rec", tmpdir);
    mkdir(dir, 0755);
    snprintf(marker, sizeof marker, "%s/truth", dir);
    mkdir(marker, 0755);
    snprintf(marker, sizeof marker, "%s/truth/truth.h5", dir); /* an earlier recording's */
    fclose(fopen(marker, "w"));
    qr_scenario *s = star();
    const char *missing[1] = {"/nonexistent/x.pcap"};
    qr_import_cfg cfg = {missing, 1, NULL, 0, QR_IMPORT_CLOCK_AUTO, NULL, NULL, 0, NULL, NULL, 0};
    cr_assert_eq(qr_import_run(&cfg, s, dir, NULL, err), QR_ENOENT);
    cr_assert_not_null(strstr(err, "/nonexistent/x.pcap"), "%s", err);
    /* one capture: nothing to reconcile */
    const char *one[1] = {CAP("pair-a.pcap")};
    qr_host_map_entry map[1] = {entry("10.77.0.1", 0, "pair-a.pcap")};
    qr_import_cfg cfg2 = {one, 1, map, 1, QR_IMPORT_CLOCK_RECONCILE, NULL, NULL, 0, NULL, NULL, 0};
    cr_assert_eq(qr_import_run(&cfg2, s, dir, NULL, err), QR_EVALUE);
    cr_assert_not_null(strstr(err, "--clock reconcile"), "%s", err);
    /* a capture of UDP only */
    snprintf(path, sizeof path, "%s/udp.pcap", tmpdir);
    qr_packet u = tcp(MS, A, B, 53, 53, 0, 0, 0, 0, 1);
    u.proto = 17;
    write_capture(path, &u, 1);
    const char *udp[1] = {path};
    qr_import_cfg cfg3 = {udp, 1, NULL, 0, QR_IMPORT_CLOCK_AUTO, NULL, NULL, 0, NULL, NULL, 0};
    cr_assert_eq(qr_import_run(&cfg3, s, dir, NULL, err), QR_ENOTFOUND);
    cr_assert_not_null(strstr(err, "no TCP packet in 1 frames: 1 not TCP"), "%s", err);
    cr_assert_eq(access(marker, F_OK), 0, "the earlier recording is kept");
    cr_assert(!exists_like(tmpdir, "rec.partial"), "no partial folder");
    cr_assert(!exists_like(tmpdir, "rec.old"));
    /* a success replaces it */
    cfg2.clock = QR_IMPORT_CLOCK_AUTO;
    cr_assert_eq(qr_import_run(&cfg2, s, dir, NULL, err), QR_OK, "%s", err);
    cr_assert_neq(access(marker, F_OK), 0);
    cr_assert(!exists_like(tmpdir, "rec.old"));
    qr_scenario_destroy(s);
}

/* How a sender numbers its IP IDs, over generated captures of A (at A, the sender): 1 to 3
 * connections interleaved, 12 to 40 data packets, numbered per connection (each its own counter
 * from a random start), by one counter for the host (other traffic in between: steps of 1 to 60),
 * at random, or 0. Over 40 seeds per kind the import names the kind the generator used. One
 * connection numbered by a host counter with nothing in between cannot be told from a per
 * connection counter: the generator leaves that case out, as no reader could tell it. */
Test(import_run, property_ip_id_kinds_are_told_apart)
{
    char path[256], dir[256];
    snprintf(path, sizeof path, "%s/a.pcap", tmpdir);
    snprintf(dir, sizeof dir, "%s/rec", tmpdir);
    const qr_ipid_kind kinds[] = {QR_IPID_PER_CONN, QR_IPID_PER_HOST, QR_IPID_RANDOM, QR_IPID_ZERO};
    uint64_t r = 0x9e3779b97f4a7c15ull;
#define RND() (r = r * 6364136223846793005ull + 1442695040888963407ull, (uint32_t)(r >> 33))
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int seed = 0; seed < 40; seed++) {
            int nc = 1 + (int)(RND() % 3), npk = 12 + (int)(RND() % 29);
            qr_packet p[3 * 3 + 40 + 40];
            size_t n = 0;
            uint32_t seq[3];
            uint16_t conn_id[3], host_id = (uint16_t)RND();
            int64_t t = MS;
            for (int c = 0; c < nc; c++) {
                seq[c] = RND();
                conn_id[c] = (uint16_t)RND();
                uint16_t sp = (uint16_t)(40000 + c);
                p[n++] = tcp(t, A, B, sp, 80, seq[c]++, 0, QR_TCP_SYN, 0, 0);
                p[n++] = tcp(t + 100000, B, A, 80, sp, 5000, seq[c], QR_TCP_SYN | ACKF, 0, 0);
                p[n++] = tcp(t + 200000, A, B, sp, 80, seq[c], 5001, ACKF, 0, 0);
                t += MS;
            }
            /* the handshakes' last ACKs took IDs as well */
            for (int c = 0; c < nc; c++)
                p[3 * c + 2].ip_id = kinds[k] == QR_IPID_PER_CONN   ? conn_id[c]++
                                     : kinds[k] == QR_IPID_PER_HOST ? host_id++
                                     : kinds[k] == QR_IPID_RANDOM   ? (uint16_t)RND()
                                                                    : 0;
            for (int i = 0; i < npk; i++) {
                int c = (int)(RND() % (uint32_t)nc);
                uint16_t id = 0;
                if (kinds[k] == QR_IPID_PER_CONN)
                    id = conn_id[c]++;
                else if (kinds[k] == QR_IPID_PER_HOST)
                    id = host_id, host_id = (uint16_t)(host_id + 1 + RND() % 60);
                else if (kinds[k] == QR_IPID_RANDOM)
                    id = (uint16_t)RND();
                p[n++] = tcp(t, A, B, (uint16_t)(40000 + c), 80, seq[c], 5001, ACKF, 500, id);
                seq[c] += 500;
                t += 200000;
            }
            write_capture(path, p, n);
            qr_host_map_entry map[1] = {entry(A, 0, "a.pcap")};
            const char *caps[1] = {path};
            qr_import_report *rep = import(caps, 1, map, 1, QR_IMPORT_CLOCK_AUTO, dir);
            cr_assert_eq(rep->hosts[0].ipid_kind, kinds[k],
                         "seed %d, %d connection(s), %d packets: %s taken for %s", seed, nc, npk,
                         qr_ipid_kind_name(kinds[k]), qr_ipid_kind_name(rep->hosts[0].ipid_kind));
            qr_import_report_free(rep);
        }
#undef RND
}

/* ---- a router's or mirror's capture: several hosts' connections in one file ---- */

struct mirror {
    qr_packet p[400];
    size_t n;
    uint16_t id[16]; /* each address's IP ID counter, by its last byte */
};

/* A connection from x to y as a capture taken near one of them saw it: the near end answers
 * after turn_ns, the far end a round trip (rtt_ns) later; a handshake or not (a capture that
 * starts mid-connection), then `rounds` exchanges of 100 bytes each way. */
static void mirror_conn(struct mirror *m, int64_t t, const char *x, const char *y, uint16_t port,
                        int x_near, int handshake, int rounds, int64_t rtt_ns, int64_t turn_ns)
{
    int64_t gx = x_near ? turn_ns : rtt_ns, gy = x_near ? rtt_ns : turn_ns;
    uint16_t *idx = &m->id[x[strlen(x) - 1] - '0'], *idy = &m->id[y[strlen(y) - 1] - '0'];
    uint32_t sx = 1000, sy = 5000;
    if (handshake) {
        m->p[m->n++] = tcp(t, x, y, port, 80, sx - 1, 0, QR_TCP_SYN, 0, (*idx)++);
        m->p[m->n++] = tcp(t += gy, y, x, 80, port, sy - 1, sx, QR_TCP_SYN | ACKF, 0, (*idy)++);
        m->p[m->n++] = tcp(t += gx, x, y, port, 80, sx, sy, ACKF, 0, (*idx)++);
    }
    for (int r = 0; r < rounds; r++) {
        m->p[m->n++] = tcp(t += 20 * MS, x, y, port, 80, sx, sy, ACKF, 100, (*idx)++);
        sx += 100;
        m->p[m->n++] = tcp(t += gy, y, x, 80, port, sy, sx, ACKF, 0, (*idy)++);
        m->p[m->n++] = tcp(t += 20 * MS, y, x, 80, port, sy, sx, ACKF, 100, (*idy)++);
        sy += 100;
        m->p[m->n++] = tcp(t += gx, x, y, port, 80, sx, sy, ACKF, 0, (*idx)++);
    }
}

static int cmp_time(const void *a, const void *b)
{
    const qr_packet *x = a, *y = b;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* Property: a capture of several hosts' connections (at a router or a mirror port) gives each
 * host whose connections' timing puts the capture next to it, found by the handshake or, without
 * one, by each end's quickest turnaround; wherever the capture was taken (near the local hosts or
 * near their remote peers), no other. A connection whose timing cannot tell stays out, counted.
 * Two hosts in view talking to each other: each packet sent by one and received by the other, at
 * one clock, nothing lost. And every packet is accounted for. */
Test(import_run, property_a_mirror_capture_gives_the_hosts_its_timing_puts_it_at)
{
    char path[256], dir[256], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/mirror.pcap", tmpdir);
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_load_string(s,
                                         "[topology]\nkind = star\nhosts = 8\n[links]\nrate = "
                                         "10Gbps\ndelay = 1us\n",
                                         "test", ".", err),
                 QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
    const int64_t rtts[3] = {200000, 10 * MS, 80 * MS};
    for (int remote = 0; remote < 2; remote++)
        for (int k = 0; k < 3; k++) {
            int64_t rtt = rtts[k], turn = rtt / 50;
            struct mirror *m = calloc(1, sizeof *m);
            cr_assert_not_null(m);
            /* the owner (most packets), with its server */
            mirror_conn(m, 0, "10.0.1.1", "10.9.0.1", 40001, !remote, 1, 12, rtt, turn);
            /* a handshake tells; turnarounds tell; neither tells (within a factor of 4) */
            mirror_conn(m, 3 * MS, "10.0.1.2", "10.9.0.2", 40002, !remote, 1, 2, rtt, turn);
            mirror_conn(m, 5 * MS, "10.0.1.3", "10.9.0.3", 40003, !remote, 0, 3, rtt, turn);
            mirror_conn(m, 7 * MS, "10.0.1.4", "10.9.0.4", 40004, !remote, 0, 3, rtt, rtt / 2);
            size_t undecided = 4 * 3;
            /* two local hosts talking (both near the capture) */
            size_t first_local = m->n;
            if (!remote)
                mirror_conn(m, 9 * MS, "10.0.1.2", "10.0.1.3", 40005, 1, 1, 2, turn, turn);
            size_t locals = m->n - first_local;
            qsort(m->p, m->n, sizeof m->p[0], cmp_time);
            write_capture(path, m->p, m->n);
            snprintf(dir, sizeof dir, "%s/mirror-%d-%d", tmpdir, remote, k);
            const char *caps[1] = {path};
            qr_import_cfg cfg = {caps, 1,    NULL, 0, QR_IMPORT_CLOCK_NONE, NULL, NULL,
                                 0,    NULL, NULL, 0};
            qr_import_report *r = NULL;
            cr_assert_eq(qr_import_run(&cfg, s, dir, &r, err), QR_OK, "%s", err);
            const qr_import_capture_report *c = &r->captures[0];
            cr_assert_str_eq(c->owner, remote ? "10.9.0.1" : "10.0.1.1",
                             "the owner: in the most packets (the server's with remote)");
            const char *want[2][2] = {{"10.0.1.2", "10.0.1.3"}, {"10.9.0.2", "10.9.0.3"}};
            uint32_t in_view = 0;
            for (uint32_t h = 0; h < r->n_hosts; h++) {
                const qr_import_host_report *x = &r->hosts[h];
                int timing = !strcmp(x->addr, want[remote][0]) || !strcmp(x->addr, want[remote][1]);
                int owner = !strcmp(x->addr, c->owner);
                cr_assert_eq(x->captured, timing || owner, "remote %d rtt %" PRId64 ": %s", remote,
                             rtt, x->addr);
                cr_assert_eq(x->capture, timing || owner ? 0 : -1, "%s", x->addr);
                cr_assert_eq(x->vantage,
                             owner    ? QR_VANTAGE_PACKETS
                             : timing ? QR_VANTAGE_TIMING
                                      : QR_VANTAGE_NONE,
                             "%s", x->addr);
                in_view += timing;
            }
            cr_assert_eq(in_view, 2);
            cr_assert_eq(c->left[QR_IMPORT_LEFT_NOT_OWNER], undecided,
                         "the connection whose timing cannot tell: out, counted");
            cr_assert_eq(c->left[QR_IMPORT_LEFT_DUPLICATE], 0);
            uint64_t left = 0;
            for (int i = 0; i < QR_IMPORT_LEFT_COUNT; i++)
                left += c->left[i];
            cr_assert_eq(c->sent + c->received, c->stats.kept - left + locals,
                         "each packet once, two hosts in view talking: sent and received");
            cr_assert_eq(r->drops[QR_EVIDENCE_BOTH] + r->drops[QR_EVIDENCE_RETRANS] +
                             r->drops[QR_EVIDENCE_IPID] + r->drops[QR_EVIDENCE_NONE],
                         0, "nothing was lost");
            cr_assert_eq(r->directions[QR_EVIDENCE_BOTH], remote ? 0 : 2,
                         "the local pair's two directions");
            cr_assert_eq(r->unmatched_received, 0);
            qr_import_report_free(r);
            if (!remote) {
                /* 10.0.1.2's own capture as well, given after the mirror's: its packets come from
                 * there, the mirror's copies of them are counted as a second capture's */
                char own[256];
                snprintf(own, sizeof own, "%s/own.pcap", tmpdir);
                qr_packet *o = malloc(m->n * sizeof *o);
                cr_assert_not_null(o);
                size_t no = 0, a_remote = 0;
                uint8_t a2[16];
                qr_addr_parse("10.0.1.2", a2);
                uint32_t a = (uint32_t)a2[12] << 24 | (uint32_t)a2[13] << 16 |
                             (uint32_t)a2[14] << 8 | a2[15];
                for (size_t i = 0; i < m->n; i++)
                    if (m->p[i].src_ip == a || m->p[i].dst_ip == a) {
                        o[no++] = m->p[i];
                        a_remote += (m->p[i].src_ip >> 24) == 10 && (m->p[i].dst_ip >> 24) == 10 &&
                                    ((m->p[i].src_ip ^ m->p[i].dst_ip) >> 16) != 0;
                    }
                write_capture(own, o, no);
                free(o);
                const char *two[2] = {path, own};
                qr_import_cfg cfg2 = {two, 2,    NULL, 0, QR_IMPORT_CLOCK_NONE, NULL, NULL,
                                      0,   NULL, NULL, 0};
                snprintf(dir, sizeof dir, "%s/mirror-own-%d", tmpdir, k);
                cr_assert_eq(qr_import_run(&cfg2, s, dir, &r, err), QR_OK, "%s", err);
                for (uint32_t h = 0; h < r->n_hosts; h++)
                    if (!strcmp(r->hosts[h].addr, "10.0.1.2")) {
                        cr_assert_eq(r->hosts[h].capture, 1,
                                     "its own capture, though given second");
                        cr_assert_eq(r->hosts[h].vantage, QR_VANTAGE_PACKETS);
                    }
                c = &r->captures[0];
                cr_assert_eq(c->left[QR_IMPORT_LEFT_DUPLICATE], a_remote,
                             "the mirror's copies of its connection with its remote peer");
                left = 0;
                for (int i = 0; i < QR_IMPORT_LEFT_COUNT; i++)
                    left += c->left[i];
                cr_assert_eq(c->sent + c->received, c->stats.kept - left,
                             "the local pair's packets: each end from its own capture");
                cr_assert_eq(r->directions[QR_EVIDENCE_BOTH], 2);
                cr_assert_eq(r->drops[QR_EVIDENCE_BOTH], 0);
                cr_assert_eq(r->unmatched_received, 0);
                qr_import_report_free(r);
            }
            free(m);
        }
    qr_scenario_destroy(s);
}
