/* qreplay diagnose on imported captures: crafted connections whose truth is known by construction,
 * captured at one end or the other, imported and diagnosed. What the client's capture alone shows
 * must give the same exchanges as the server's: both directions, idle time as the application's,
 * a loss only where there is evidence of one, a fast retransmission told from a timeout. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crafted.h"
#include "qreplay/diagnose.h"
#include "qreplay/recording.h"

TestSuite(diagnose, .init = make_tmp, .fini = rm_tmp);

#define US 1000
#define OWD (100 * US) /* one way, each direction: RTT 200 us */
#define MAXW 128

/* One connection on the wire: the client A (port 40000) and the server B (port 80). Each packet
 * is in its sender's capture at its send time and, unless lost, in its receiver's one OWD
 * later. */
typedef struct {
    qr_packet a[MAXW], b[MAXW];
    size_t na, nb;
    uint16_t id[2];
} wire;

static void send_(wire *w, int64_t t, int from_b, uint32_t seq, uint32_t ack, uint8_t flags,
                  uint16_t payload, int lost)
{
    qr_packet p = from_b ? tcp(t, B, A, 80, 40000, seq, ack, flags, payload, w->id[1]++)
                         : tcp(t, A, B, 40000, 80, seq, ack, flags, payload, w->id[0]++);
    qr_packet *own = from_b ? w->b : w->a, *peer = from_b ? w->a : w->b;
    size_t *n_own = from_b ? &w->nb : &w->na, *n_peer = from_b ? &w->na : &w->nb;
    cr_assert_lt(*n_own, MAXW);
    own[(*n_own)++] = p;
    if (!lost) {
        p.time_ns += OWD;
        peer[(*n_peer)++] = p;
    }
}

static int by_time(const void *x, const void *y)
{
    const qr_packet *p = x, *q = y;
    return p->time_ns < q->time_ns ? -1 : p->time_ns > q->time_ns;
}

/* Import the client's capture (at_server 0) or the server's (1) and diagnose every flow. */
static void diagnose_capture(wire *w, int at_server, qr_diagnosis *dg)
{
    char path[256], dir[256], err[QR_ERRBUF_SIZE];
    qsort(w->a, w->na, sizeof w->a[0], by_time);
    qsort(w->b, w->nb, sizeof w->b[0], by_time);
    snprintf(path, sizeof path, "%s/%s.pcap", tmpdir, at_server ? "b" : "a");
    write_capture(path, at_server ? w->b : w->a, at_server ? w->nb : w->na);
    qr_host_map_entry map[2] = {entry(A, 0, at_server ? "" : "a.pcap"),
                                entry(B, 1, at_server ? "b.pcap" : "")};
    const char *caps[1] = {path};
    snprintf(dir, sizeof dir, "%s/rec-%s", tmpdir, at_server ? "b" : "a");
    qr_import_report *r = import(caps, 1, map, 2, QR_IMPORT_CLOCK_AUTO, dir);
    qr_import_report_free(r);
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    cr_assert(qr_recording_imported(rec));
    cr_assert_not(qr_recording_network_known(rec));
    qr_diag_opts o;
    qr_diag_opts_default(&o);
    o.all = 1;
    cr_assert_eq(qr_diagnose(rec, &o, dg, err), QR_OK, "%s", err);
    qr_recording_close(rec);
}

/* A keep-alive HTTP connection: two requests of 100 bytes, answered with 3000 and 2000 bytes in
 * segments of 1000, 200 ms of think time between them, then both FINs. */
static void keepalive(wire *w)
{
    memset(w, 0, sizeof *w);
    int64_t t = 1 * MS;
    send_(w, t, 0, 100, 0, QR_TCP_SYN, 0, 0);
    send_(w, t + OWD, 1, 900, 101, QR_TCP_SYN | ACKF, 0, 0);
    send_(w, t + 2 * OWD, 0, 101, 901, ACKF, 0, 0);
    uint32_t cs = 101, ss = 901;
    t += 2 * OWD + 500 * US;
    for (int r = 0; r < 2; r++) {
        send_(w, t, 0, cs, ss, ACKF | QR_TCP_PSH, 100, 0);
        cs += 100;
        int64_t ts = t + OWD + 50 * US;
        int segs = r ? 2 : 3;
        for (int k = 0; k < segs; k++, ts += 10 * US) {
            send_(w, ts, 1, ss, cs, ACKF, 1000, 0);
            ss += 1000;
        }
        /* the client acknowledges the last segment as it arrives */
        send_(w, ts - 10 * US + OWD + 1 * US, 0, cs, ss, ACKF, 0, 0);
        t = ts + 2 * OWD + 200 * MS;
    }
    send_(w, t, 0, cs, ss, ACKF | QR_TCP_FIN, 0, 0);
    send_(w, t + OWD, 1, ss, cs + 1, ACKF | QR_TCP_FIN, 0, 0);
    send_(w, t + 2 * OWD, 0, cs + 1, ss + 1, ACKF, 0, 0);
}

static void check_keepalive(const qr_diagnosis *dg, int at_server)
{
    cr_assert(dg->imported);
    cr_assert_eq(dg->n_flows, 1);
    const qr_diag_flow *f = &dg->flows[0];
    cr_assert_eq(f->exchanges, 4, "%u exchanges", f->exchanges);
    cr_assert_eq(f->bytes, 200);
    cr_assert_eq(f->bytes_back, 5000, "the responses are the server's");
    cr_assert_eq(f->end, QR_TC_END_CLOSED);
    cr_assert(f->completed);
    cr_assert_eq(f->retransmissions + f->lost_data + f->not_seen + f->reordered + f->rtos, 0,
                 "nothing was lost or resent: %u %u %u %u %u", f->retransmissions, f->lost_data,
                 f->not_seen, f->reordered, f->rtos);
    cr_assert_eq(f->min_rtt_ns, 2 * OWD, "%lld", (long long)f->min_rtt_ns);
    cr_assert(f->ideal_measured);
    cr_assert_eq(f->part_ns[QR_PART_HANDSHAKE], 2 * OWD);
    cr_assert_eq(f->part_ns[QR_PART_RTO] + f->part_ns[QR_PART_RECOVERY] + f->part_ns[QR_PART_TLP] +
                     f->part_ns[QR_PART_LOSS],
                 0);
    cr_assert_geq(f->part_ns[QR_PART_APP], 200 * MS, "the think time is the application's");
    cr_assert_neq(f->cause, QR_CAUSE_HANDSHAKE);
    uint64_t want[4] = {100, 3000, 100, 2000};
    for (int i = 0; i < 4; i++) {
        const qr_diag_exchange *e = &dg->exchanges[f->first_exchange + (uint32_t)i];
        cr_assert_eq(e->dir, (uint32_t)(i % 2));
        cr_assert_eq(e->bytes, want[i]);
        cr_assert_eq(e->status, QR_TC_COMPLETE);
        cr_assert_eq(e->src, e->dir ? 1u : 0u);
        unsigned v = (e->dir == 1) == at_server ? QR_TC_AT_SENDER : QR_TC_AT_RECEIVER;
        cr_assert_eq(e->vantage, v, "exchange %d seen from its %s", i,
                     v == QR_TC_AT_SENDER ? "sender" : "receiver");
        cr_assert_neq(e->cause, QR_CAUSE_RTO);
        if (e->vantage == QR_TC_AT_SENDER)
            cr_assert_gt(e->slowdown, 0.99, "exchange %d: %g", i, e->slowdown);
    }
    cr_assert_geq(dg->exchanges[f->first_exchange + 2].idle_before_ns, 199 * MS);
}

Test(diagnose, keepalive_at_the_client)
{
    wire w;
    keepalive(&w);
    qr_diagnosis dg;
    diagnose_capture(&w, 0, &dg);
    check_keepalive(&dg, 0);
    qr_diagnosis_free(&dg);
}

Test(diagnose, keepalive_at_the_server)
{
    wire w;
    keepalive(&w);
    qr_diagnosis dg;
    diagnose_capture(&w, 1, &dg);
    check_keepalive(&dg, 1);
    qr_diagnosis_free(&dg);
}

/* Idle for 9 s after the handshake, then a 5000-byte download: the wait is the application's, not
 * the handshake's, and the download is diagnosed as the server's exchange. */
Test(diagnose, idle_after_the_handshake_is_the_applications)
{
    wire w;
    memset(&w, 0, sizeof w);
    int64_t t = 1 * MS;
    send_(&w, t, 0, 100, 0, QR_TCP_SYN, 0, 0);
    send_(&w, t + OWD, 1, 900, 101, QR_TCP_SYN | ACKF, 0, 0);
    send_(&w, t + 2 * OWD, 0, 101, 901, ACKF, 0, 0);
    t += 9000LL * MS;
    send_(&w, t, 0, 101, 901, ACKF, 50, 0);
    uint32_t ss = 901;
    for (int k = 0; k < 5; k++) {
        send_(&w, t + OWD + 20 * US + k * 10 * US, 1, ss, 151, ACKF, 1000, 0);
        ss += 1000;
    }
    send_(&w, t + 2 * OWD + 61 * US, 0, 151, ss, ACKF, 0, 0);
    qr_diagnosis dg;
    diagnose_capture(&w, 0, &dg);
    const qr_diag_flow *f = &dg.flows[0];
    cr_assert_eq(f->part_ns[QR_PART_HANDSHAKE], 2 * OWD);
    cr_assert_geq(f->part_ns[QR_PART_APP], 8999LL * MS);
    cr_assert_eq(f->end, QR_TC_END_OPEN, "no FIN: open at capture end");
    cr_assert_eq(f->exchanges, 2);
    cr_assert_eq(dg.exchanges[1].bytes, 5000);
    cr_assert_lt(f->slowdown, 3, "slowdown %g", f->slowdown);
    cr_assert_neq(f->cause, QR_CAUSE_HANDSHAKE);
    qr_diagnosis_free(&dg);
}

/* A download of 8 segments whose third is lost: the client sends duplicate ACKs, the server
 * resends at the third. The server's capture shows a fast retransmission; the client's only a
 * hole that a resend filled (the trigger unknown). Neither is an RTO, and nothing else is lost. */
static void lossy(wire *w)
{
    memset(w, 0, sizeof *w);
    int64_t t = 1 * MS;
    send_(w, t, 0, 100, 0, QR_TCP_SYN, 0, 0);
    send_(w, t + OWD, 1, 900, 101, QR_TCP_SYN | ACKF, 0, 0);
    send_(w, t + 2 * OWD, 0, 101, 901, ACKF, 0, 0);
    t += 2 * OWD + 100 * US;
    send_(w, t, 0, 101, 901, ACKF, 50, 0);
    int64_t ts = t + OWD + 10 * US;
    uint32_t ss = 901;
    int64_t dup3 = 0;
    for (int k = 0; k < 8; k++, ts += 10 * US) {
        send_(w, ts, 1, ss + 1000u * (uint32_t)k, 151, ACKF, 1000, k == 2);
        /* the client's ACK: cumulative up to the hole */
        uint32_t cum = k < 2 ? ss + 1000u * (uint32_t)(k + 1) : ss + 2000;
        if (k != 2)
            send_(w, ts + OWD + 1 * US, 0, 151, cum, ACKF, 0, 0);
        if (k == 5)
            dup3 = ts + OWD + 1 * US + OWD; /* the third duplicate reaches the server */
    }
    /* the resend, at once; then the client acknowledges everything */
    send_(w, dup3 + 5 * US, 1, ss + 2000, 151, ACKF, 1000, 0);
    send_(w, dup3 + 5 * US + OWD + 1 * US, 0, 151, ss + 8000, ACKF, 0, 0);
}

Test(diagnose, a_fast_retransmission_at_the_server_a_filled_hole_at_the_client)
{
    wire w;
    qr_diagnosis dg;
    lossy(&w);
    diagnose_capture(&w, 1, &dg);
    const qr_diag_flow *f = &dg.flows[0];
    cr_assert_eq(f->retransmissions, 1);
    cr_assert_eq(f->fast_retransmits, 1);
    cr_assert_eq(f->rtos + f->tlps + f->unknown_retx, 0);
    cr_assert_eq(f->lost_data, 1);
    cr_assert_eq(f->not_seen, 0);
    cr_assert_eq(f->max_dupacks, 5);
    const qr_diag_exchange *e = &dg.exchanges[f->first_exchange + 1];
    cr_assert_eq(e->vantage, QR_TC_AT_SENDER);
    cr_assert_eq(e->trig[QR_TC_FAST], 1);
    cr_assert_gt(e->part_ns[QR_TC_PART_RECOVERY], 0);
    cr_assert_eq(e->cause, QR_CAUSE_FAST_RETRANSMIT,
                 "%s: %lld ns, ideal %lld, transfer %lld, queueing %lld, recovery %lld, rate %llu",
                 qr_diag_cause_name(e->cause), (long long)qr_diag_exchange_duration(&dg, e),
                 (long long)e->ideal_ns, (long long)e->part_ns[QR_TC_PART_TRANSFER],
                 (long long)e->part_ns[QR_TC_PART_QUEUEING],
                 (long long)e->part_ns[QR_TC_PART_RECOVERY], (unsigned long long)f->path_rate_bps);
    size_t lost_ev = 0, fast_ev = 0;
    for (size_t i = 0; i < dg.n_events; i++) {
        lost_ev += dg.events[i].kind == QR_EV_LOST;
        fast_ev += dg.events[i].kind == QR_EV_FAST;
    }
    cr_assert_eq(lost_ev, 1);
    cr_assert_eq(fast_ev, 1);
    qr_diagnosis_free(&dg);

    lossy(&w);
    diagnose_capture(&w, 0, &dg);
    f = &dg.flows[0];
    cr_assert_eq(f->retransmissions, 1);
    cr_assert_eq(f->unknown_retx, 1, "the client cannot see what sent it");
    cr_assert_eq(f->rtos + f->fast_retransmits + f->tlps, 0);
    cr_assert_eq(f->lost_data, 1, "the hole it filled");
    cr_assert_eq(f->not_seen, 0);
    e = &dg.exchanges[f->first_exchange + 1];
    cr_assert_eq(e->vantage, QR_TC_AT_RECEIVER);
    cr_assert_gt(e->part_ns[QR_TC_PART_LOSS], 0);
    cr_assert_eq(e->cause, QR_CAUSE_LOSS, "%s", qr_diag_cause_name(e->cause));
    qr_diagnosis_free(&dg);
}

/* ---- real applications (tests/data/captures/make_app_captures.sh): a keep-alive HTTP session
 * of Python's HTTP/1.1 server and http.client, captured at both ends, once without loss and once
 * with two of the server's packets dropped by a router. Every expected number is read from the
 * captures by tshark, an independent dissector. */

#define APPCAP(name) QR_SOURCE_DIR "/tests/data/captures/" name
#define CLIENT_IP "10.78.1.1"
#define SERVER_IP "10.78.2.1"

/* The number of lines tshark prints for a display filter on a capture. */
static long tshark_count(const char *path, const char *filter)
{
    char cmd[1024], line[512];
    snprintf(cmd, sizeof cmd, "'%s' -r '%s' -Y '%s' -T fields -e frame.number 2>/dev/null",
             QR_TSHARK, path, filter);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    long n = 0;
    while (fgets(line, sizeof line, f))
        n++;
    cr_assert_eq(pclose(f), 0, "%s", cmd);
    return n;
}

/* The stream bytes one side sent, by tshark: the highest relative sequence number its data
 * reached. */
static uint64_t tshark_bytes(const char *path, const char *from)
{
    char cmd[1024], line[512];
    snprintf(cmd, sizeof cmd,
             "'%s' -r '%s' -o tcp.relative_sequence_numbers:TRUE -Y 'ip.src==%s and tcp.len > 0' "
             "-T fields -e tcp.seq -e tcp.len 2>/dev/null",
             QR_TSHARK, path, from);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    uint64_t hi = 0;
    while (fgets(line, sizeof line, f)) {
        char *end;
        unsigned long long seq = strtoull(line, &end, 10), len = strtoull(end, NULL, 10);
        if (seq + len > hi)
            hi = seq + len;
    }
    cr_assert_eq(pclose(f), 0, "%s", cmd);
    return hi ? hi - 1 : 0; /* relative sequence 1 is the first byte */
}

/* Import the captures named (client, server or both) and diagnose. */
static void diagnose_app(const char *name, int client, int server, qr_diagnosis *dg)
{
    char cpath[512], spath[512], dir[256], err[QR_ERRBUF_SIZE], cfile[128], sfile[128];
    snprintf(cfile, sizeof cfile, "%s-client.pcap", name);
    snprintf(sfile, sizeof sfile, "%s-server.pcap", name);
    snprintf(cpath, sizeof cpath, "%s/%s", QR_SOURCE_DIR "/tests/data/captures", cfile);
    snprintf(spath, sizeof spath, "%s/%s", QR_SOURCE_DIR "/tests/data/captures", sfile);
    qr_host_map_entry map[2] = {entry(CLIENT_IP, 0, client ? cfile : ""),
                                entry(SERVER_IP, 1, server ? sfile : "")};
    const char *caps[2];
    size_t n = 0;
    if (client)
        caps[n++] = cpath;
    if (server)
        caps[n++] = spath;
    snprintf(dir, sizeof dir, "%s/%s-%d%d", tmpdir, name, client, server);
    qr_import_report_free(import(caps, n, map, 2, QR_IMPORT_CLOCK_AUTO, dir));
    qr_recording *rec;
    cr_assert_eq(qr_recording_open(&rec, dir, NULL, err), QR_OK, "%s", err);
    qr_diag_opts o;
    qr_diag_opts_default(&o);
    o.all = 1;
    cr_assert_eq(qr_diagnose(rec, &o, dg, err), QR_OK, "%s", err);
    qr_recording_close(rec);
}

/* A real-application capture's two files (512 bytes each). */
static void app_paths(const char *name, char *cpath, char *spath)
{
    snprintf(cpath, 512, "%s/%s-client.pcap", QR_SOURCE_DIR "/tests/data/captures", name);
    snprintf(spath, 512, "%s/%s-server.pcap", QR_SOURCE_DIR "/tests/data/captures", name);
}

/* Run a check of a capture from the client's end, the server's, and both (tshark reads the
 * truth: skipped without it). */
typedef void (*app_check)(const char *name, int client, int server);
static void from_each_end(app_check check, const char *name)
{
    if (!QR_TSHARK[0])
        cr_skip_test("tshark is not installed");
    check(name, 1, 0);
    check(name, 0, 1);
    check(name, 1, 1);
}

/* Diagnose a capture from the given ends (its one connection into *dg, its paths into cpath and
 * spath) and check what holds for every connection of the corpus: both sides' stream bytes as
 * tshark reads them, and a closed end. Returns the connection. */
static const qr_diag_flow *diagnose_checked(const char *name, int client, int server,
                                            qr_diagnosis *dg, char *cpath, char *spath)
{
    app_paths(name, cpath, spath);
    const char *any = client ? cpath : spath;
    diagnose_app(name, client, server, dg);
    cr_assert_eq(dg->n_flows, 1, "one connection");
    const qr_diag_flow *f = &dg->flows[0];
    cr_assert_eq(f->bytes, tshark_bytes(any, CLIENT_IP), "%s %d%d", name, client, server);
    cr_assert_eq(f->bytes_back, tshark_bytes(any, SERVER_IP), "%s %d%d: %llu", name, client, server,
                 (unsigned long long)f->bytes_back);
    cr_assert_eq(f->end, QR_TC_END_CLOSED);
    return f;
}

static void check_app(const char *name, int client, int server)
{
    char cpath[512], spath[512];
    qr_diagnosis dg;
    const qr_diag_flow *f = diagnose_checked(name, client, server, &dg, cpath, spath);
    const char *any = client ? cpath : spath;
    cr_assert(f->completed);
    /* every request is an exchange of the client's, answered by the server's exchanges */
    long requests = tshark_count(any, "http.request");
    uint32_t to_server = 0;
    uint64_t back = 0;
    for (uint32_t i = 0; i < f->exchanges; i++) {
        const qr_diag_exchange *e = &dg.exchanges[f->first_exchange + i];
        cr_assert_eq(e->status, QR_TC_COMPLETE);
        to_server += e->dir == 0;
        back += e->dir ? e->bytes : 0;
    }
    cr_assert_eq(to_server, (uint32_t)requests, "%u client exchanges, %ld requests", to_server,
                 requests);
    cr_assert_eq(back, f->bytes_back, "the server's exchanges hold every byte it sent");
    /* losses: the server's retransmissions (its capture, tshark's analysis); the segments the
     * client's capture never saw before them */
    long retx = tshark_count(spath, "ip.src==" SERVER_IP " and (tcp.analysis.retransmission or "
                                    "tcp.analysis.fast_retransmission)");
    long fast = tshark_count(spath, "ip.src==" SERVER_IP " and tcp.analysis.fast_retransmission");
    long holes = tshark_count(cpath, "ip.src==" SERVER_IP " and tcp.analysis.lost_segment");
    cr_assert_eq(f->retransmissions, (uint32_t)retx, "%u retransmissions, tshark %ld",
                 f->retransmissions, retx);
    cr_assert_eq(f->lost_data, (uint32_t)holes, "%u lost, tshark %ld holes", f->lost_data, holes);
    cr_assert_eq(f->rtos + f->tlps + f->not_seen + f->reordered + f->spurious, 0);
    if (server)
        cr_assert_eq(f->fast_retransmits, (uint32_t)fast, "the server saw what sent them");
    else
        cr_assert_eq(f->unknown_retx, (uint32_t)retx, "the client cannot see what sent them");
    qr_diagnosis_free(&dg);
}

Test(diagnose, real_http_keepalive_from_each_end)
{
    from_each_end(check_app, "http-keepalive");
}

Test(diagnose, real_http_with_two_losses_from_each_end)
{
    from_each_end(check_app, "http-lossy");
}

/* Application idle of a side, by tshark: a side sends new data more than gap_ns after the other
 * side acknowledged everything it had sent (nothing in flight, nothing sent: each such wait
 * starts a new exchange). */
static uint32_t tshark_gaps(const char *path, const char *from, int64_t gap_ns)
{
    char cmd[1024], line[512], src[64];
    snprintf(cmd, sizeof cmd,
             "'%s' -r '%s' -o tcp.relative_sequence_numbers:TRUE -Y tcp -T fields "
             "-e frame.time_epoch -e ip.src -e tcp.seq -e tcp.len -e tcp.ack 2>/dev/null",
             QR_TSHARK, path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    uint32_t gaps = 0;
    unsigned long long hi = 0;
    long double acked = -1; /* when everything `from` sent was acknowledged; -1: not yet */
    while (fgets(line, sizeof line, f)) {
        char *end;
        long double t = strtold(line, &end);
        unsigned long long seq, len, ack;
        if (sscanf(end, " %63s %llu %llu %llu", src, &seq, &len, &ack) != 4)
            continue;
        if (strcmp(src, from) == 0) {
            if (len > 0 && seq + len > hi) {
                if (acked >= 0 && (t - acked) * 1e9L > (long double)gap_ns)
                    gaps++;
                hi = seq + len;
                acked = -1;
            }
        } else if (hi && ack >= hi && acked < 0) {
            acked = t;
        }
    }
    cr_assert_eq(pclose(f), 0, "%s", cmd);
    return gaps;
}

/* A connection without loss whose exchanges tshark can count from the gaps in each side's data:
 * the bytes each way, one exchange per burst of each side, every one complete. */
static void check_bursts(const char *name, int client, int server)
{
    char cpath[512], spath[512];
    qr_diagnosis dg;
    const qr_diag_flow *f = diagnose_checked(name, client, server, &dg, cpath, spath);
    const char *any = client ? cpath : spath;
    cr_assert(f->completed, "%s %d%d", name, client, server);
    uint32_t ex[2] = {0, 0};
    uint64_t bytes[2] = {0, 0};
    for (uint32_t i = 0; i < f->exchanges; i++) {
        const qr_diag_exchange *e = &dg.exchanges[f->first_exchange + i];
        cr_assert_eq(e->status, QR_TC_COMPLETE, "%s exchange %u", name, i);
        ex[e->dir]++;
        bytes[e->dir] += e->bytes;
    }
    cr_assert_eq(bytes[0], f->bytes);
    cr_assert_eq(bytes[1], f->bytes_back);
    const char *ip[2] = {CLIENT_IP, SERVER_IP};
    for (int d = 0; d < 2; d++) {
        uint32_t want = 1 + tshark_gaps(d ? spath : cpath, ip[d], 1000000);
        cr_assert_eq(ex[d], want, "%s %d%d: %u exchanges from %s, tshark's gaps say %u", name,
                     client, server, ex[d], ip[d], want);
    }
    long retx =
        tshark_count(any, "tcp.analysis.retransmission or tcp.analysis.fast_retransmission");
    cr_assert_eq(retx, 0);
    cr_assert_eq(f->retransmissions + f->lost_data + f->not_seen + f->spurious, 0);
    qr_diagnosis_free(&dg);
}

Test(diagnose, real_request_response_with_think_time)
{
    from_each_end(check_bursts, "rpc-think");
}

Test(diagnose, real_two_way_bulk)
{
    from_each_end(check_bursts, "bulk-both");
}

/* A lost tail: every resend of the server's, by tshark; the first resend of a sequence number
 * after silence is Linux's tail-loss probe, any later one its RTO; the client, which never got
 * the lost copies, sees no resend at all. */
static void check_tail(const char *name, int client, int server)
{
    char cpath[512], spath[512], cmd[1024], line[256];
    app_paths(name, cpath, spath);
    snprintf(cmd, sizeof cmd,
             "'%s' -r '%s' -Y 'ip.src==" SERVER_IP " and tcp.analysis.retransmission' -T fields "
             "-e tcp.seq_raw 2>/dev/null",
             QR_TSHARK, spath);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    unsigned long seqs[16];
    uint32_t n = 0, probes = 0, timers = 0;
    while (fgets(line, sizeof line, p) && n < 16) {
        unsigned long s = strtoul(line, NULL, 10);
        int again = 0;
        for (uint32_t i = 0; i < n; i++)
            again |= seqs[i] == s;
        seqs[n++] = s;
        probes += !again;
        timers += again;
    }
    cr_assert_eq(pclose(p), 0);
    cr_assert_gt(n, 0, "%s: the router dropped the tail", name);
    qr_diagnosis dg;
    diagnose_app(name, client, server, &dg);
    const qr_diag_flow *f = &dg.flows[0];
    if (!server) {
        /* the client never got the lost copies: it sees one late tail and no resend */
        cr_assert_eq(f->retransmissions + f->lost_data, 0, "%s: no evidence at the client", name);
        cr_assert(f->completed);
        qr_diagnosis_free(&dg);
        return;
    }
    cr_assert_eq(f->retransmissions, n, "%s %d%d", name, client, server);
    if (server) {
        cr_assert_eq(f->tlps, probes, "%s: %u probes, tshark %u", name, f->tlps, probes);
        cr_assert_eq(f->rtos, timers, "%s: %u RTOs, tshark %u", name, f->rtos, timers);
        cr_assert_eq(f->fast_retransmits + f->unknown_retx, 0);
    } else {
        cr_assert_eq(f->unknown_retx, n, "the client cannot see what sent them");
    }
    cr_assert(f->completed);
    cr_assert_eq(f->end, QR_TC_END_CLOSED);
    qr_diagnosis_free(&dg);
}

Test(diagnose, real_tail_loss_probe_and_rto)
{
    from_each_end(check_tail, "http-tail");
    from_each_end(check_tail, "http-rto");
}

/* A connection never established: 4 SYNs over 15 s (Linux's 1, 2, 4... s back-off), unanswered,
 * or refused by a RST. The cause is the handshake, its time the SYNs', from either end. */
Test(diagnose, a_connection_never_established_is_the_handshakes)
{
    for (int refused = 0; refused < 2; refused++)
        for (int at_server = 0; at_server < 2; at_server++) {
            wire w;
            memset(&w, 0, sizeof w);
            int64_t t = 1 * MS, back = 1000LL * MS;
            for (int k = 0; k < 4; k++, t += back, back *= 2)
                send_(&w, t, 0, 100, 0, QR_TCP_SYN, 0, 0);
            t -= back / 2;
            if (refused)
                send_(&w, t + OWD, 1, 0, 101, QR_TCP_RST | ACKF, 0, 0);
            qr_diagnosis dg;
            diagnose_capture(&w, at_server, &dg);
            cr_assert_eq(dg.n_flows, 1);
            const qr_diag_flow *f = &dg.flows[0];
            cr_assert_eq(f->cause, QR_CAUSE_HANDSHAKE, "refused %d at_server %d: %s", refused,
                         at_server, qr_diag_cause_name(f->cause));
            cr_assert_eq(f->syn_sent, 4);
            cr_assert_eq(f->exchanges, 0);
            cr_assert_eq(f->completed, 0);
            /* the first SYN to the last SYN, or at the client to the RST's arrival */
            int64_t span = 7000LL * MS + (refused && !at_server ? 2 * OWD : 0);
            cr_assert_eq(f->part_ns[QR_PART_HANDSHAKE], span, "%lld",
                         (long long)f->part_ns[QR_PART_HANDSHAKE]);
            qr_diagnosis_free(&dg);
        }
}

/* One SYN the capture ends on, unanswered and not refused: nothing shows the handshake failed
 * (the answer may have come after the capture): unknown, not handshake. */
Test(diagnose, one_unanswered_syn_at_the_end_is_unknown)
{
    for (int at_server = 0; at_server < 2; at_server++) {
        wire w;
        memset(&w, 0, sizeof w);
        send_(&w, 1 * MS, 0, 100, 0, QR_TCP_SYN, 0, 0);
        qr_diagnosis dg;
        diagnose_capture(&w, at_server, &dg);
        cr_assert_eq(dg.n_flows, 1);
        cr_assert_eq(dg.flows[0].cause, QR_CAUSE_UNKNOWN, "at_server %d: %s", at_server,
                     qr_diag_cause_name(dg.flows[0].cause));
        cr_assert_eq(dg.flows[0].syn_sent, 1);
        qr_diagnosis_free(&dg);
    }
}
