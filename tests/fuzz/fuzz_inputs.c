/* The small text inputs of the second wave, against a recording of a star of three hosts with two
 * flows. Byte 0 % 6 picks the reader, the rest is its text:
 *
 *   0  a host map (qr_host_map_read, 3 hosts; then qr_host_map_check_captures against the captures
 *      "a.pcap" and "b.pcap"): errors name the map and its line; what is read has hosts below 3,
 *      no address twice, no host twice;
 *   1  a match expression (qr_match_parse against the recording, then qr_match_eval on packets of
 *      both flows, and qr_match_hop on an arrival): errors have a message;
 *   2  whatif --vary arguments, one per line, at most 4 (qr_whatif_grid_parse with the recording's
 *      scenario): errors name --vary; a grid has points, its baseline among them, every point's
 *      scenario resolves and its values are canonical text;
 *   3  a testbed agent's report line (qr_agent_report_parse, with 1 + byte 1 flows): what is read
 *      names a flow of the run, END not before START;
 *   4  a mirror of guided probes (guided.csv of qr_guided_run, on a k=4 fat tree, no counters):
 *      errors name the file and line; what is read is conserved (every probe delivered or lost,
 *      every loss on a link or inside a switch, no place losing more than crossed it, nothing
 *      silent without counters);
 *   5  a mirror of link round-trip probes (bounce.csv of qr_bounce_run, k=4 fat tree): errors
 *      name the file; what is read is conserved (every round of every port back, lost in one
 *      place or without a fate), a flag only where its rule holds.
 */
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/guided.h"
#include "qreplay/hoptrace.h"
#include "qreplay/import.h"
#include "qreplay/pcap_file.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
#include "qreplay/testbed.h"
#include "qreplay/whatif.h"

static char dir[128], rec_h5[200];
static qr_recording* rec;

static void
setup(void)
{
    char err[QR_ERRBUF_SIZE], p[256];
    snprintf(dir, sizeof dir, "/tmp/qr-fuzz-inputs-%ld", (long)getpid());
    snprintf(p, sizeof p, "%s/pcap", dir);
    if (qr_make_dirs(p, err))
        abort();
    qr_scenario* s;
    if (qr_scenario_create(&s) || qr_scenario_set(s, "topology.kind=star", err))
        abort();
    qr_row_flow f[] = {{0, 0, 1, 10000, 5001, 3000, 0, 90, 90, 0, 1, 1},
                       {1, 2, 1, 10000, 5001, 1500, 10, 90, 90, 0, 1, 1}};
    qr_row_host h[] = {{0, 0, 0, 2, 3000, "pcap/h0000.pcap"},
                       {1, 0, 0, 0, 0, "pcap/h0001.pcap"},
                       {2, 0, 0, 1, 1500, "pcap/h0002.pcap"}};
    for (int i = 0; i < 3; i++)
    {
        snprintf(p, sizeof p, "%s/pcap/h%04d.pcap", dir, i);
        qr_pcap_writer* w;
        if (qr_pcap_writer_open(&w, p, err))
            abort();
        for (int k = 0; k < (int)h[i].packets; k++)
        {
            qr_packet pk = {.time_ns = 1000 + 1300 * k,
                            .src_ip = 0x0a000002 + 4u * (uint32_t)i, /* 10.0.0.(4i+2) */
                            .dst_ip = 0x0a000006,
                            .src_port = 10000,
                            .dst_port = 5001,
                            .proto = 6,
                            .ip_len = 1500,
                            .ip_id = (uint16_t)k,
                            .seq = 1 + 1460u * (uint32_t)k,
                            .tcp_flags = QR_TCP_ACK};
            if (qr_pcap_write(w, &pk, err))
                abort();
        }
        if (qr_pcap_writer_close(w, err))
            abort();
    }
    qr_recording_info info = {"0123456789abcdef0123456789abcdef",
                              "fuzz",
                              QR_END_COMPLETED,
                              100000,
                              0,
                              NULL,
                              0,
                              NULL,
                              0,
                              NULL,
                              0,
                              NULL,
                              0};
    snprintf(rec_h5, sizeof rec_h5, "%s/recording.h5", dir);
    if (qr_recording_write(rec_h5, s, &info, f, 2, h, 3, NULL, 0, NULL, 0, err))
        abort();
    qr_scenario_destroy(s);
    if (qr_recording_open(&rec, dir, NULL, err))
    {
        fprintf(stderr, "setup: %s\n", err);
        abort();
    }
}

static void
host_map(const uint8_t* data, size_t size)
{
    const char* path = fuzz_file(data, size, ".csv");
    char err[QR_ERRBUF_SIZE] = "";
    qr_host_map_entry* m = NULL;
    size_t n = 0;
    int rc = qr_host_map_read(path, 3, &m, &n, err);
    FUZZ_CHECK(rc == QR_OK || (strstr(err, path) && strchr(err, ':')), "map refused: %s", err);
    if (rc)
        return;
    for (size_t i = 0; i < n; i++)
    {
        FUZZ_CHECK(m[i].host < 3, "host %u of 3", m[i].host);
        for (size_t j = 0; j < i; j++)
        {
            FUZZ_CHECK(memcmp(m[i].addr, m[j].addr, 16) != 0,
                       "an address twice (lines %ld, %ld)",
                       m[j].line,
                       m[i].line);
            FUZZ_CHECK(m[i].host != m[j].host, "host %u twice", m[i].host);
        }
    }
    const char* caps[] = {"/x/a.pcap", "b.pcap"};
    err[0] = '\0';
    rc = qr_host_map_check_captures(m, n, path, caps, 2, err);
    FUZZ_CHECK(rc == QR_OK || strstr(err, path), "captures refused: %s", err);
    qr_host_map_free(m);
}

static void
match(const uint8_t* data, size_t size)
{
    char expr[512];
    size_t n = size < sizeof expr - 1 ? size : sizeof expr - 1;
    memcpy(expr, data, n);
    expr[n] = '\0';
    char err[QR_ERRBUF_SIZE] = "";
    qr_match* m = NULL;
    int rc = qr_match_parse(&m, expr, rec, err);
    FUZZ_CHECK(rc == QR_OK || err[0], "refused without a message: '%s'", expr);
    if (rc)
        return;
    size_t np = 0;
    const qr_rec_packet* pk = qr_recording_packets(rec, 0, &np);
    for (uint32_t d = 0; d < 4; d++)
    {
        qr_match_packet p = {qr_packet_id(d, 1),
                             d,
                             d & 1 ? 1 : 0,
                             d & 1 ? 0 : 1,
                             np ? &pk[0].pk : NULL,
                             (uint8_t)(d == 2),
                             (uint8_t)(d == 3),
                             d == 1 ? INT64_MIN : 5000,
                             0};
        qr_flow_bytes fb = {d, 3000};
        qr_arrival a = {.packet = p.packet,
                        .time_ns = 5000,
                        .sw = 0,
                        .port = 1,
                        .bytes = 1500,
                        .decision = d == 3 ? QR_DROP_THRESHOLD : QR_ADMIT,
                        .n_flows = 1,
                        .queue_bytes = 3000,
                        .flows = &fb};
        p.hops = qr_match_hop(m, &a, 1200);
        int r = qr_match_eval(m, &p);
        FUZZ_CHECK(r == 0 || r == 1, "eval %d", r);
    }
    qr_match_free(m);
}

static void
whatif(const uint8_t* data, size_t size)
{
    char text[1024];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    const char* vary[4];
    size_t nv = 0;
    for (char *line = text, *next; line && nv < 4; line = next)
    {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        vary[nv++] = line;
    }
    char err[QR_ERRBUF_SIZE] = "";
    qr_whatif_grid* g = NULL;
    int rc = qr_whatif_grid_parse(&g, vary, nv, rec_h5, dir, err);
    FUZZ_CHECK(rc == QR_OK || err[0], "refused without a message");
    if (rc)
        return;
    size_t points = qr_whatif_grid_points(g), keys = qr_whatif_grid_keys(g);
    FUZZ_CHECK(points >= 1 && qr_whatif_grid_baseline(g) < points,
               "%zu points, baseline %zu",
               points,
               qr_whatif_grid_baseline(g));
    for (size_t i = 0; i < points && i < 8; i++)
    {
        qr_scenario* s = NULL;
        FUZZ_CHECK(qr_whatif_grid_scenario(g, i, &s, err) == QR_OK, "point %zu: %s", i, err);
        qr_scenario_destroy(s);
        for (size_t k = 0; k < keys; k++)
            FUZZ_CHECK(qr_whatif_grid_value(g, i, k)[0], "point %zu key %zu: no value", i, k);
    }
    qr_whatif_grid_destroy(g);
}

static void
agent(const uint8_t* data, size_t size)
{
    if (size < 1)
        return;
    uint32_t flows = 1u + data[0];
    char line[256];
    size_t n = size - 1 < sizeof line - 1 ? size - 1 : sizeof line - 1;
    memcpy(line, data + 1, n);
    line[n] = '\0';
    qr_agent_report r;
    if (qr_agent_report_parse(line, flows, &r) != QR_OK)
        return;
    FUZZ_CHECK(r.flow < flows, "flow %u of %u", r.flow, flows);
    /* sent and recv carry a start and an end; a ping carries its send time and a round trip
     * (-1: none); probes and answers carry one time */
    FUZZ_CHECK((r.kind != QR_AGENT_SENT && r.kind != QR_AGENT_RECV) || r.b_ns >= r.a_ns,
               "end before start");
    FUZZ_CHECK(r.kind != QR_AGENT_PING || r.b_ns >= -1, "a round trip below -1");
    FUZZ_CHECK(r.kind != QR_AGENT_FAIL || r.why[0], "a failure without a reason");
}

/* The k=4 fat tree the mirrors are of, with data written as DIR/mirror/name; p gets the mirror's
 * folder. */
static const qr_topology*
mirror_file(const char* name, const uint8_t* data, size_t size, char* p, size_t psize)
{
    static qr_topology* tree;
    char err[QR_ERRBUF_SIZE] = "";
    if (!tree && qr_topology_fattree(&tree, 4))
        abort();
    snprintf(p, psize, "%s/mirror", dir);
    if (qr_make_dirs(p, err))
        abort();
    snprintf(p, psize, "%s/mirror/%s", dir, name);
    FILE* f = fopen(p, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    snprintf(p, psize, "%s/mirror", dir);
    return tree;
}

static void
guided(const uint8_t* data, size_t size)
{
    char err[QR_ERRBUF_SIZE] = "", p[256];
    const qr_topology* tree = mirror_file("guided.csv", data, size, p, sizeof p);
    qr_guided g;
    int rc = qr_guided_run(p, tree, &g, err);
    FUZZ_CHECK(rc == QR_OK || strstr(err, "guided.csv"),
               "refused without naming the file: %s",
               err);
    if (rc)
        return;
    FUZZ_CHECK(g.delivered + g.lost == g.probes,
               "%lu + %lu != %lu",
               (unsigned long)g.delivered,
               (unsigned long)g.lost,
               (unsigned long)g.probes);
    FUZZ_CHECK(g.lost_link + g.lost_inside == g.lost, "losses placed twice or not at all");
    FUZZ_CHECK(!g.counters_known, "counters without counters.csv");
    uint64_t lost = 0;
    for (size_t i = 0; i < g.n_ports; i++)
    {
        FUZZ_CHECK(g.ports[i].lost <= g.ports[i].probes, "a place lost more than crossed it");
        FUZZ_CHECK(g.ports[i].inside <= g.ports[i].lost, "inside losses beyond the losses");
        FUZZ_CHECK(!g.ports[i].silent, "silent without counters");
        lost += g.ports[i].lost;
    }
    FUZZ_CHECK(lost == g.lost,
               "the places lost %lu, the probes %lu",
               (unsigned long)lost,
               (unsigned long)g.lost);
    qr_guided_free(&g);
}

static void
bounce(const uint8_t* data, size_t size)
{
    char err[QR_ERRBUF_SIZE] = "", p[256];
    const qr_topology* tree = mirror_file("bounce.csv", data, size, p, sizeof p);
    qr_bounce b;
    int rc = qr_bounce_run(p, tree, 2.0, &b, err);
    FUZZ_CHECK(rc == QR_OK || strstr(err, "bounce.csv"),
               "refused without naming the file: %s",
               err);
    if (rc)
        return;
    uint64_t sent = 0, back = 0;
    FUZZ_CHECK(b.n_rows == 0 || b.n_rows == 64, "%zu ports, not every one of the plan", b.n_rows);
    for (size_t i = 0; i < b.n_rows; i++)
    {
        const qr_row_bounce* r = &b.rows[i];
        FUZZ_CHECK(r->sent == r->returned + r->lost_in + r->lost_out + r->lost_peer + r->lost_back +
                                  r->unseen,
                   "%s: rounds not conserved",
                   r->link_name);
        FUZZ_CHECK(r->lossy == (r->lost_in + r->lost_out + r->lost_peer + r->lost_back > 0),
                   "%s: lossy without a loss, or the reverse",
                   r->link_name);
        FUZZ_CHECK(!r->slow ||
                       (r->returned && r->rtt_p50_ns - b.median_rtt_ns >= QR_BOUNCE_MIN_EXCESS_NS),
                   "%s: slow without the excess",
                   r->link_name);
        FUZZ_CHECK(!r->returned ||
                       (r->rtt_min_ns <= r->rtt_p50_ns && r->rtt_p50_ns <= r->rtt_max_ns),
                   "%s: round trips out of order",
                   r->link_name);
        sent += r->sent;
        back += r->returned;
    }
    FUZZ_CHECK(sent == b.probes && back == b.returned, "totals differ from the rows");
    qr_bounce_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (!rec)
        setup();
    if (size < 1)
        return 0;
    switch (data[0] % 6)
    {
    case 0:
        host_map(data + 1, size - 1);
        break;
    case 1:
        match(data + 1, size - 1);
        break;
    case 2:
        whatif(data + 1, size - 1);
        break;
    case 3:
        agent(data + 1, size - 1);
        break;
    case 4:
        guided(data + 1, size - 1);
        break;
    default:
        bounce(data + 1, size - 1);
        break;
    }
    return 0;
}
