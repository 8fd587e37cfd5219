/* Message traces (messages.h): the text form written and read back; and messages from per-host
 * captures against the messages that made them: the core's multi-tier services simulated, each
 * message cut into segments, every host's sends and arrivals written as its capture (with pure
 * ACKs between), and the reconciliation must give back every message, its ends, connection,
 * size and both times exactly; a host without a capture leaves its times unknown, nothing else. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/import.h"
#include "qreplay/krecord.h"
#include "qreplay/messages.h"
#include "qreplay/pcap_file.h"
#include "qreplay/tiers.h"
#include "qreplay/tiers_truth.h"

#define SPEC                                                                                       \
    "tier front hosts=3 service=50us workers=16 calls=app\n"                                       \
    "tier app hosts=4,5 service=200us workers=8 calls=cache+audit@0.05,store@0.3\n"                \
    "tier cache hosts=6 service=40us\n"                                                            \
    "tier store hosts=7 service=500us reply=8000B\n"                                               \
    "tier audit hosts=8 service=100us\n"                                                           \
    "clients hosts=0,1,2 rate=2000/s\n"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr_msgs_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(messages, .init = setup, .fini = teardown);

typedef struct {
    qr_packet *p;
    size_t n, cap;
} host_pkts;

static void put(host_pkts *h, qr_packet p)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 1024;
        h->p = realloc(h->p, h->cap * sizeof *h->p);
    }
    h->p[h->n++] = p;
}

static int by_time(const void *a, const void *b)
{
    const qr_packet *x = a, *y = b;
    return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* Field by field (the struct has padding). */
static int cmp_msg(const void *a, const void *b)
{
    const qr_msg *x = a, *y = b;
    int64_t d[6] = {(int64_t)x->src - y->src,
                    (int64_t)x->dst - y->dst,
                    (int64_t)x->conn - y->conn,
                    x->send_ns < y->send_ns ? -1 : x->send_ns > y->send_ns,
                    x->recv_ns < y->recv_ns ? -1 : x->recv_ns > y->recv_ns,
                    x->bytes < y->bytes ? -1 : x->bytes > y->bytes};
    for (int i = 0; i < 6; i++)
        if (d[i])
            return d[i] < 0 ? -1 : 1;
    return 0;
}

/* Captures start at 1 s: clock offsets may make a host's times negative otherwise. */
#define EPOCH 1000000000

/* The messages found (m, nm: freed here) are the simulated ones t (n), with the times of hosts
 * skip[h] unknown: the same multiset of ends, sizes and times (connections are numbered in order
 * of reading, so not compared). */
static void expect_same(qr_msg *m, size_t nm, const qr_tiers_trace_msg *t, size_t n,
                        const int *skip, uint64_t seed)
{
    cr_assert_eq(nm, n, "seed %llu: %zu messages found, %zu sent", (unsigned long long)seed, nm, n);
    qr_msg *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) {
        want[i] = (qr_msg){t[i].m.from,
                           t[i].m.to,
                           0,
                           skip[t[i].m.from] ? QR_MSG_UNTRACED : EPOCH + t[i].send_ns,
                           skip[t[i].m.to] ? QR_MSG_UNTRACED : EPOCH + t[i].recv_ns,
                           t[i].m.bytes};
        m[i].conn = 0;
    }
    qsort(want, n, sizeof *want, cmp_msg);
    qsort(m, n, sizeof *m, cmp_msg);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(cmp_msg(&m[i], &want[i]), 0,
                     "seed %llu: message %zu: %u>%u %lld %lld %llu, want %u>%u %lld %lld %llu",
                     (unsigned long long)seed, i, m[i].src, m[i].dst, (long long)m[i].send_ns,
                     (long long)m[i].recv_ns, (unsigned long long)m[i].bytes, want[i].src,
                     want[i].dst, (long long)want[i].send_ns, (long long)want[i].recv_ns,
                     (unsigned long long)want[i].bytes);
    free(want);
    free(m);
}

/* A TCP packet from host a's port to host b's with len bytes of payload (no options). */
static qr_packet tcp_packet(uint32_t a, uint16_t aport, uint32_t b, uint16_t bport, uint32_t len,
                            uint8_t flags)
{
    qr_packet p = {0};
    p.src_ip = 0x0a000001 + a;
    p.dst_ip = 0x0a000001 + b;
    p.src_port = aport;
    p.dst_port = bport;
    p.proto = 6;
    p.ttl = 64;
    p.ip_len = (uint16_t)(40 + len);
    p.tcp_flags = flags;
    p.window = 1000;
    return p;
}

/* Each host's capture of the simulated messages (segments of at most 1448 bytes 100 ns apart,
 * the last one arriving at the message's receive time, a pure ACK back after it); hosts with
 * skip[h] get none. The host map to dir/map.csv. */
static void write_captures(const qr_tiers_trace_msg *t, size_t n, uint32_t hosts, const int *skip,
                           char paths[][96], size_t *n_paths)
{
    host_pkts *hp = calloc(hosts, sizeof *hp);
    uint32_t *seq = calloc(2 * 65536, sizeof *seq);
    for (size_t i = 0; i < n; i++) {
        const qr_tier_msg *m = &t[i].m;
        /* the caller's end is port 10000 + conn, the callee's 80 */
        uint16_t from_port = m->reply ? 80 : (uint16_t)(10000 + m->conn),
                 to_port = m->reply ? (uint16_t)(10000 + m->conn) : 80;
        uint32_t *sq = &seq[2 * m->conn + m->reply];
        size_t segs = (m->bytes + 1447) / 1448;
        for (size_t k = 0; k < segs; k++) {
            uint32_t len = k + 1 < segs ? 1448 : (uint32_t)(m->bytes - 1448 * (segs - 1));
            qr_packet p = tcp_packet(m->from, from_port, m->to, to_port, len, 0x18);
            p.seq = 1000 + *sq;
            *sq += len;
            p.time_ns = EPOCH + t[i].send_ns + 100 * (int64_t)k;
            put(&hp[m->from], p);
            p.time_ns = EPOCH + t[i].recv_ns - 100 * (int64_t)(segs - 1 - k);
            put(&hp[m->to], p);
        }
        qr_packet ack = tcp_packet(m->to, to_port, m->from, from_port, 0, 0x10);
        ack.time_ns = EPOCH + t[i].recv_ns + 50;
        put(&hp[m->to], ack);
    }
    char map[128], err[QR_ERRBUF_SIZE];
    snprintf(map, sizeof map, "%s/map.csv", dir);
    FILE *f = fopen(map, "w");
    *n_paths = 0;
    for (uint32_t h = 0; h < hosts; h++) {
        snprintf(paths[*n_paths], 96, "%s/h%u.pcap", dir, h);
        fprintf(f, "10.0.0.%u,%u,%s\n", h + 1, h, skip[h] ? "" : paths[*n_paths]);
        if (skip[h]) {
            free(hp[h].p);
            continue;
        }
        qsort(hp[h].p, hp[h].n, sizeof *hp[h].p, by_time);
        qr_pcap_writer *w;
        cr_assert_eq(qr_pcap_writer_open(&w, paths[*n_paths], err), QR_OK, "%s", err);
        for (size_t i = 0; i < hp[h].n; i++)
            cr_assert_eq(qr_pcap_write(w, &hp[h].p[i], err), QR_OK, "%s", err);
        cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK);
        (*n_paths)++;
        free(hp[h].p);
    }
    fclose(f);
    free(hp);
    free(seq);
}

static void round_trip(uint64_t seed, const int *skip, int records);

Test(messages, captures_give_back_every_message)
{
    int skip[16] = {0};
    for (uint64_t seed = 1; seed <= 4; seed++)
        round_trip(seed, skip, 0);
}

Test(messages, a_host_without_capture_leaves_its_times_unknown)
{
    int skip[16] = {0};
    skip[7] = 1; /* the store */
    round_trip(5, skip, 0);
    skip[7] = 0;
    skip[0] = skip[1] = skip[2] = 1; /* the clients, as WAP5 leaves them */
    round_trip(6, skip, 0);
}

Test(messages, text_round_trip_and_errors)
{
    qr_msg m[3] = {{0, 3, 7, 100, 250, 200},
                   {3, 0, 7, QR_MSG_UNTRACED, 900, 1000},
                   {1, 3, 2, -5, QR_MSG_UNTRACED, 1}};
    char path[128], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    cr_assert_eq(qr_msgs_write(path, m, 3, "made\nby a test", err), QR_OK, "%s", err);
    qr_msg *r;
    size_t n;
    uint32_t hosts;
    cr_assert_eq(qr_msgs_read(path, &r, &n, &hosts, err), QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(hosts, 4);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(cmp_msg(&r[i], &m[i]), 0, "message %d", i);
    free(r);
    const struct {
        const char *text, *says;
    } bad[] = {
        {"src,dst\n", ":1: not a message trace"},
        {"# qreplay messages 1\nsrc,dst\n", ":2: the header must be"},
        {"# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n1,2,3\n", ":3: 3 fields"},
        {"# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n1,70000,3,1,2,3\n",
         ":3: dst '70000'"},
        {"# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n1,2,3,x,2,3\n",
         ":3: send_ns 'x'"},
        {"# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n1,2,3,1,9e99,3\n",
         ":3: recv_ns"},
        {"# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n1,2,3,1,2,-3\n", ":3: bytes"},
        {"", "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        err[0] = 0;
        cr_expect_neq(qr_msgs_read(path, &r, &n, &hosts, err), QR_OK, "%s", bad[i].text);
        cr_expect(strstr(err, bad[i].says) != NULL, "'%s': '%s'", bad[i].text, err);
    }
}

/* tshark's decoding of one capture cut the same way: per connection and direction, a new message
 * where new payload follows the other direction's new payload. Sizes of the messages of each
 * direction, in order, as "lower>upper:B,B;upper>lower:B,..." per connection, joined by '|'. */
static void tshark_runs(const char *path, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' -r '%s' -o tcp.relative_sequence_numbers:FALSE -Y 'tcp.len > 0' -T fields -E "
             "separator=, -E occurrence=f -e tcp.stream -e ip.src -e ip.dst -e tcp.srcport -e "
             "tcp.dstport -e tcp.seq -e tcp.len 2>/dev/null",
             QR_TSHARK, path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    struct {
        long long high[2], start[2];
        int any[2], spoke[2];
        char sizes[2][2048];
        int lower_is_first;
    } st[16];
    memset(st, 0, sizeof st);
    int streams = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int s;
        char src[64], dst[64];
        unsigned sp, dp;
        long long seq, len;
        cr_assert_eq(
            sscanf(line, "%d,%63[^,],%63[^,],%u,%u,%lld,%lld", &s, src, dst, &sp, &dp, &seq, &len),
            7, "%s", line);
        cr_assert_lt(s, 16);
        streams = s + 1 > streams ? s + 1 : streams;
        /* direction 0: from the lower address (then port), as the reader numbers them */
        unsigned a[4], b[4];
        sscanf(src, "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
        sscanf(dst, "%u.%u.%u.%u", &b[0], &b[1], &b[2], &b[3]);
        unsigned long long ka = ((unsigned long long)a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]),
                           kb = ((unsigned long long)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]);
        int d = ka < kb || (ka == kb && sp < dp) ? 0 : 1;
        long long *high = st[s].high;
        if (!st[s].any[d])
            high[d] = seq;
        long long off = seq, end = seq + len; /* no wrap in these short captures */
        if (st[s].any[d] && end <= high[d])
            continue;
        long long from = st[s].any[d] && off < high[d] ? high[d] : off;
        if (!st[s].any[d] || st[s].spoke[d]) {
            if (st[s].any[d]) /* the message before ends here */
                snprintf(st[s].sizes[d] + strlen(st[s].sizes[d]),
                         sizeof st[s].sizes[d] - strlen(st[s].sizes[d]), "%lld,",
                         from - st[s].start[d]);
            st[s].start[d] = from;
        }
        st[s].any[d] = 1;
        st[s].spoke[d] = 0;
        st[s].spoke[1 - d] = 1;
        high[d] = end;
    }
    pclose(f);
    out[0] = 0;
    for (int s = 0; s < streams; s++)
        for (int d = 0; d < 2; d++)
            if (st[s].any[d])
                snprintf(out + strlen(out), size - strlen(out), "%s%d:%s%lld", s || d ? "|" : "", d,
                         st[s].sizes[d], st[s].high[d] - st[s].start[d]);
}

/* The same from the reader: messages are in order of connection, each direction's in order. */
static void our_runs(const char *path, int server, char *out, size_t size)
{
    char map_path[128], err[QR_ERRBUF_SIZE];
    snprintf(map_path, sizeof map_path, "%s/corpus-map.csv", dir);
    FILE *f = fopen(map_path, "w");
    fprintf(f, "10.78.1.1,0,%s\n10.78.2.1,1,%s\n", server ? "" : path, server ? path : "");
    fclose(f);
    qr_host_map_entry *map;
    size_t n_map, n;
    cr_assert_eq(qr_host_map_read(map_path, 2, &map, &n_map, err), QR_OK, "%s", err);
    qr_msg *m;
    uint32_t hosts;
    qr_msgs_capture_report rep;
    cr_assert_eq(qr_msgs_from_captures(&path, 1, map, n_map, NULL, &m, &n, &hosts, &rep, err),
                 QR_OK, "%s", err);
    out[0] = 0;
    for (uint32_t c = 0; c < rep.connections; c++)
        for (int d = 0; d < 2; d++) {
            int first = 1;
            for (size_t i = 0; i < n; i++)
                if (m[i].conn == c && (int)m[i].src == d) {
                    snprintf(out + strlen(out), size - strlen(out), "%s%s%llu",
                             first ? (c || d ? "|" : "") : ",", first ? (d ? "1:" : "0:") : "",
                             (unsigned long long)m[i].bytes);
                    first = 0;
                }
        }
    free(m);
    qr_host_map_free(map);
}

/* The real captures of tests/data/captures: what the reader cuts is what tshark's decoding of
 * the same frames gives, capture by capture (client and server, with losses and resends). */
Test(messages, real_captures_cut_as_tshark_reads_them)
{
    if (!QR_TSHARK[0]) {
        cr_log_info("no tshark: skipped");
        return;
    }
    const char *names[] = {"rpc-think", "http-keepalive", "http-lossy",
                           "http-tail", "http-rto",       "bulk-both"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (int side = 0; side < 2; side++) {
            char path[512], want[8192], got[8192];
            snprintf(path, sizeof path, "%s/tests/data/captures/%s-%s.pcap", QR_SOURCE_DIR,
                     names[i], side ? "server" : "client");
            tshark_runs(path, want, sizeof want);
            our_runs(path, side, got, sizeof got);
            cr_expect_str_eq(got, want, "%s", path);
            cr_log_info("%s: %.120s", names[i], got);
        }
}

typedef struct {
    int64_t t;
    int state; /* 1: the connection opens (caller: SYN_SENT, callee: a listener's SYN_RECV) */
    int receive;
    uint32_t bytes;
    qr_krec_ends e;
} kev;

static int by_kev_time(const void *a, const void *b)
{
    const kev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return y->state - x->state; /* a connection opens before its first call */
}

static qr_krec_ends ends_of(uint32_t local, uint16_t lport, uint32_t remote, uint16_t rport)
{
    qr_krec_ends e = {0};
    e.family = 4;
    uint8_t l[4] = {10, 0, 0, (uint8_t)(local + 1)}, r[4] = {10, 0, 0, (uint8_t)(remote + 1)};
    memcpy(e.laddr, l, 4);
    memcpy(e.raddr, r, 4);
    e.lport = lport;
    e.rport = rport;
    return e;
}

/* Each host's kernel record of the simulated service: its connections opening at their first
 * message, a send call per message sent, a receive call per message read (hosts with skip[h]:
 * none). Paths into paths[]. */
static void write_records(const qr_tiers_trace_msg *t, size_t n, uint32_t hosts, const int *skip,
                          char paths[][96], size_t *n_paths)
{
    kev **ev = calloc(hosts, sizeof *ev);
    size_t *nev = calloc(hosts, sizeof *nev);
    uint8_t *opened = calloc(65536, 1);
    for (uint32_t h = 0; h < hosts; h++)
        ev[h] = malloc((4 * n + 4) * sizeof **ev);
    for (size_t i = 0; i < n; i++) {
        const qr_tier_msg *m = &t[i].m;
        uint32_t caller = m->reply ? m->to : m->from, callee = m->reply ? m->from : m->to;
        uint16_t cport = (uint16_t)(10000 + m->conn);
        qr_krec_ends ce = ends_of(caller, cport, callee, 80),
                     se = ends_of(callee, 80, caller, cport);
        if (!opened[m->conn]) {
            opened[m->conn] = 1;
            ev[caller][nev[caller]++] = (kev){EPOCH + t[i].send_ns - 1000, 1, 0, 0, ce};
            ev[callee][nev[callee]++] = (kev){EPOCH + t[i].recv_ns - 2000, 1, 0, 0, se};
        }
        const qr_krec_ends *from = m->reply ? &se : &ce, *to = m->reply ? &ce : &se;
        ev[m->from][nev[m->from]++] = (kev){EPOCH + t[i].send_ns, 0, 0, (uint32_t)m->bytes, *from};
        ev[m->to][nev[m->to]++] = (kev){EPOCH + t[i].recv_ns, 0, 1, (uint32_t)m->bytes, *to};
    }
    char err[QR_ERRBUF_SIZE];
    *n_paths = 0;
    for (uint32_t h = 0; h < hosts; h++) {
        if (!skip[h]) {
            qsort(ev[h], nev[h], sizeof *ev[h], by_kev_time);
            snprintf(paths[*n_paths], 96, "%s/h%u.qrk", dir, h);
            char name[16];
            snprintf(name, sizeof name, "h%u", h);
            qr_krec_header hd = {name, h + 1, EPOCH - 10000000, QR_SAMPLING_RATE, 1, {5000}};
            qr_krec_writer *w;
            cr_assert_eq(qr_krec_writer_open(&w, paths[*n_paths], &hd, err), QR_OK, "%s", err);
            for (size_t i = 0; i < nev[h]; i++) {
                const kev *x = &ev[h][i];
                int caller_end = x->e.lport != 80;
                int rc = x->state ? qr_krec_state(w, &x->e, x->t, caller_end ? 7 : 10,
                                                  caller_end ? 2 : 3, err)
                                  : qr_krec_call(w, &x->e, x->receive, x->bytes, x->t, err);
                cr_assert_eq(rc, QR_OK, "%s", err);
            }
            cr_assert_eq(qr_krec_writer_close(w, nev[h], 0, NULL, err), QR_OK, "%s", err);
            (*n_paths)++;
        }
        free(ev[h]);
    }
    free(ev);
    free(nev);
    free(opened);
}

/* The records of the simulated services give back every message exactly: ends, size, the send
 * call's time and the time of the receive call that read it; a host without a record leaves its
 * times unknown. */
Test(messages, kernel_records_give_back_every_message)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        int skip[16] = {0};
        if (seed == 3)
            skip[0] = skip[1] = skip[2] = 1;
        round_trip(seed, skip, 1);
    }
}

/* The simulated service of seed (clocks off by up to 1 ms) written out as every host's capture
 * (records: kernel record), hosts skip[h] left out, read back into messages and compared. */
/* The service's truth named by connection ends (the caller's port first_port + conn, the
 * callee's 80, the caller's end written first) matched to the messages cut from the hosts' own
 * views: every message is matched, and every true parent is a message into the child's sender
 * that it had whole before the child left, on that one host's clock. */
static void truth_by_ends(const qr_tiers_trace_msg *t, size_t n, const qr_msg *m, size_t nm,
                          const qr_msg_ends *ends, int first_port)
{
    char path[128], err[QR_ERRBUF_SIZE];
    snprintf(path, sizeof path, "%s/truth.csv", dir);
    qr_tiers_truth_row *rows = calloc(n, sizeof *rows);
    uint64_t requests = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = n - 1 - k; /* rows in any order */
        const qr_tier_msg *x = &t[i].m;
        uint32_t caller = x->reply ? x->to : x->from, callee = x->reply ? x->from : x->to;
        snprintf(rows[k].conn, sizeof rows[k].conn, "10.0.0.%u:%d-10.0.0.%u:80", caller + 1,
                 first_port + (int)x->conn, callee + 1);
        rows[k].index = 0;
        for (size_t j = 0; j < i; j++)
            rows[k].index += t[j].m.conn == x->conn && t[j].m.from == x->from;
        rows[k].id = x->id;
        rows[k].parent = x->parent;
        rows[k].src = x->from;
        rows[k].dst = x->to;
        rows[k].true_send_ns = t[i].true_send_ns;
        rows[k].true_recv_ns = t[i].true_recv_ns;
        requests += x->parent == QR_TIER_NO_PARENT;
    }
    cr_assert_eq(qr_tiers_truth_write(path, SPEC, rows, n, "a test", err), QR_OK, "%s", err);
    free(rows);
    qr_tiers_truth *tr;
    cr_assert_eq(qr_tiers_truth_read(path, &tr, err), QR_OK, "%s", err);
    uint32_t n_ends = 0;
    for (size_t i = 0; i < nm; i++)
        n_ends = m[i].conn + 1 > n_ends ? m[i].conn + 1 : n_ends;
    uint64_t *par = malloc(nm * sizeof *par);
    int64_t *net = malloc(nm * sizeof *net);
    qr_tiers_truth_match_report r;
    cr_assert_eq(qr_tiers_truth_match(tr, m, nm, ends, n_ends, par, net, &r, err), QR_OK, "%s",
                 err);
    cr_assert_eq(r.matched, nm, "%" PRIu64 " of %zu matched", r.matched, nm);
    cr_assert_eq(r.unobserved + r.parent_unseen + r.wrong_hosts, 0);
    uint64_t roots = 0;
    for (size_t i = 0; i < nm; i++) {
        cr_assert_neq(par[i], QR_TRUTH_NO_PARENT);
        cr_assert_neq(net[i], QR_TRUTH_NO_TIME);
        if (par[i] == UINT64_MAX) {
            roots++;
            continue;
        }
        cr_assert_eq(m[par[i]].dst, m[i].src, "message %zu", i);
        if (m[par[i]].recv_ns != QR_MSG_UNTRACED && m[i].send_ns != QR_MSG_UNTRACED)
            cr_assert_leq(m[par[i]].recv_ns, m[i].send_ns, "message %zu", i);
    }
    cr_assert_eq(roots, requests);
    qr_tiers_truth_destroy(tr);
    free(par);
    free(net);
}

static void round_trip(uint64_t seed, const int *skip, int records)
{
    qr_tiers_spec s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_tiers_parse(SPEC, &s, err), QR_OK, "%s", err);
    qr_tiers_net net;
    qr_tiers_net_default(&net);
    net.duration_ns = records ? 50000000 : 100000000;
    net.clock_ns = 1000000; /* each capture or record on its host's clock */
    qr_tiers_trace_msg *t;
    int64_t *off;
    size_t n;
    cr_assert_eq(qr_tiers_simulate(&s, &net, seed, &t, &n, &off, err), QR_OK, "%s", err);
    uint32_t hosts = qr_tiers_hosts(&s);
    char paths[16][96], map_path[128];
    size_t np;
    if (records) {
        write_records(t, n, hosts, skip, paths, &np);
        snprintf(map_path, sizeof map_path, "%s/rmap.csv", dir);
        FILE *f = fopen(map_path, "w");
        for (uint32_t h = 0; h < hosts; h++)
            fprintf(f, "10.0.0.%u,%u\n", h + 1, h);
        fclose(f);
    } else {
        write_captures(t, n, hosts, skip, paths, &np);
        snprintf(map_path, sizeof map_path, "%s/map.csv", dir);
    }
    qr_host_map_entry *map;
    size_t n_map;
    cr_assert_eq(qr_host_map_read(map_path, hosts, &map, &n_map, err), QR_OK, "%s", err);
    const char *pp[16];
    for (size_t i = 0; i < np; i++)
        pp[i] = paths[i];
    qr_msg *m;
    size_t nm;
    uint32_t nh;
    qr_msg_ends *ends = NULL;
    qr_msgs_capture_opts o = {0, &ends};
    if (records) {
        qr_msgs_record_report rep;
        cr_assert_eq(qr_msgs_from_records(pp, np, map, n_map, &o, &m, &nm, &nh, &rep, err), QR_OK,
                     "%s", err);
        cr_assert_eq(rep.mid_connections + rep.unmapped_calls, 0);
    } else {
        qr_msgs_capture_report rep;
        cr_assert_eq(qr_msgs_from_captures(pp, np, map, n_map, &o, &m, &nm, &nh, &rep, err), QR_OK,
                     "%s", err);
        cr_assert_eq(rep.unmapped_packets + rep.foreign_packets, 0);
    }
    cr_assert_eq(nh, hosts);
    truth_by_ends(t, n, m, nm, ends, 10000);
    free(ends);
    expect_same(m, nm, t, n, skip, seed);
    free(t);
    free(off);
    qr_host_map_free(map);
}

/* The testbed hosts' own logs gathered into the truth: each send joined to its read, in order of
 * id; what was never read, and reads never sent, counted; a bad line named. */
Test(messages, host_logs_gather_into_the_truth)
{
    char a[128], b[128], err[QR_ERRBUF_SIZE];
    snprintf(a, sizeof a, "%s/h0.log", dir);
    snprintf(b, sizeof b, "%s/h3.log", dir);
    FILE *f = fopen(a, "w");
    fputs("S,10.0.0.2:40000-10.0.3.2:9000,0,7,-,0,3,1000\nR,9,5000\n"
          "S,10.0.0.2:40000-10.0.3.2:9000,1,11,-,0,3,6000\n",
          f);
    fclose(f);
    f = fopen(b, "w");
    fputs("R,7,1200\nS,10.0.3.2:9000-10.0.0.2:40000,0,9,7,3,0,4000\nR,99,7000\n", f);
    fclose(f);
    const char *logs[2] = {a, b};
    qr_tiers_truth_row *rows;
    size_t n;
    qr_tiers_gather_report rep;
    cr_assert_eq(qr_tiers_truth_gather(logs, 2, &rows, &n, &rep, err), QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(rows[0].id, 7);
    cr_assert_eq(rows[0].parent, QR_TIER_NO_PARENT);
    cr_assert_eq(rows[0].true_recv_ns, 1200);
    cr_assert_eq(rows[1].id, 9);
    cr_assert_eq(rows[1].parent, 7);
    cr_assert_eq(rows[1].true_send_ns, 4000);
    cr_assert_eq(rows[1].true_recv_ns, 5000);
    cr_assert_str_eq(rows[1].conn, rows[0].conn, "one connection, either end first");
    cr_assert_eq(rows[2].true_recv_ns, QR_TRUTH_NO_TIME);
    cr_assert_eq(rep.sent, 3);
    cr_assert_eq(rep.received, 2);
    cr_assert_eq(rep.never_read, 1);
    cr_assert_eq(rep.unknown_read, 1);
    free(rows);
    f = fopen(b, "a");
    fputs("S,10.0.3.2:9000-10.0.0.2:40000,1,9,7,3,0,8000\n", f);
    fclose(f);
    cr_assert_neq(qr_tiers_truth_gather(logs, 2, &rows, &n, &rep, err), QR_OK);
    cr_assert(strstr(err, "id 9 sent twice"), "%s", err);
    f = fopen(b, "w");
    fputs("S,10.0.3.2:9000-10.0.0.2:40000,0,5,5,3,0,4000\n", f);
    fclose(f);
    cr_assert_neq(qr_tiers_truth_gather(logs, 2, &rows, &n, &rep, err), QR_OK);
    cr_assert(strstr(err, "message 5 is its own parent"), "%s", err);
    f = fopen(b, "w");
    fputs("R,7,1200\nX,1,2\n", f);
    fclose(f);
    cr_assert_neq(qr_tiers_truth_gather(logs, 2, &rows, &n, &rep, err), QR_OK);
    cr_assert(strstr(err, "h3.log:2: neither"), "%s", err);
}
