/* qreplay import end to end: two captures from one input (the first two bytes give the first's
 * length; hosts 10.77.0.1 and 10.77.0.2 own them, as in the seeds). Whatever the bytes, the
 * import fails cleanly with a message and leaves no folder, or writes a recording that reads back
 * (IP IDs consecutive per direction, packet counts as reported, drops naming recorded packets),
 * and that diagnose reads as connections (tcpconn.h): every complete exchange's parts sum to its
 * time, each direction's exchanges hold at most its bytes, no more losses and unknowns than
 * packets in sequence space (data, SYNs, FINs), slowdowns finite and not negative. */
#include <dirent.h>
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/diagnose.h"
#include "qreplay/error.h"
#include "qreplay/import.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"

static int
exists(const char* path)
{
    return access(path, F_OK) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    size_t la = (size_t)data[0] << 8 | data[1];
    if (la > size - 2)
        la = size - 2;
    char a[128], b[128], rec[128], partial[160], err[QR_ERRBUF_SIZE];
    snprintf(a, sizeof a, "%s", fuzz_file(data + 2, la, "-a.pcap"));
    snprintf(b, sizeof b, "%s", fuzz_file(data + 2 + la, size - 2 - la, "-b.pcap"));
    snprintf(rec, sizeof rec, "/tmp/qr-fuzz-%ld-rec", (long)getpid());
    snprintf(partial, sizeof partial, "%s.partial-%ld", rec, (long)getpid());
    static qr_scenario* s;
    if (!s)
    {
        if (qr_scenario_create(&s) ||
            qr_scenario_load_string(s, "[topology]\nkind = star\nhosts = 8\n", "fuzz", ".", err))
            abort();
    }
    qr_host_map_entry map[2];
    memset(map, 0, sizeof map);
    qr_addr_parse("10.77.0.1", map[0].addr);
    qr_addr_parse("10.77.0.2", map[1].addr);
    map[1].host = 1;
    snprintf(map[0].capture, sizeof map[0].capture, "%s", strrchr(a, '/') + 1);
    snprintf(map[1].capture, sizeof map[1].capture, "%s", strrchr(b, '/') + 1);
    const char* caps[2] = {a, b};
    qr_import_cfg cfg = {caps, 2, map, 2, QR_IMPORT_CLOCK_AUTO, NULL, NULL, 0, NULL, NULL, 0};
    qr_import_report* r = NULL;
    err[0] = '\0';
    int rc = qr_import_run(&cfg, s, rec, &r, err);
    FUZZ_CHECK(!exists(partial), "a partial folder was left");
    if (rc != QR_OK)
    {
        FUZZ_CHECK(err[0] != '\0', "error %d without a message", rc);
        FUZZ_CHECK(!exists(rec), "a failed import left %s", rec);
        return 0;
    }
    qr_recording* g = NULL;
    int orc = qr_recording_open(&g, rec, NULL, err);
    FUZZ_CHECK(orc == QR_OK, "the recording does not read back: %s", err);
    uint64_t total = 0;
    for (uint32_t h = 0; h < qr_recording_hosts(g); h++)
    {
        size_t n;
        qr_recording_packets(g, h, &n);
        FUZZ_CHECK(n == r->hosts[h].packets,
                   "host %u: %zu packets, reported %llu",
                   h,
                   n,
                   (unsigned long long)r->hosts[h].packets);
        total += n;
    }
    FUZZ_CHECK(total == r->packets,
               "packets %llu, reported %llu",
               (unsigned long long)total,
               (unsigned long long)r->packets);
    FUZZ_CHECK(r->received <= r->packets, "more receive times than packets");
    qr_diag_opts o;
    qr_diag_opts_default(&o);
    o.all = 1;
    qr_diagnosis dg;
    int drc = qr_diagnose(g, &o, &dg, err);
    FUZZ_CHECK(drc == QR_OK || drc == QR_ENOMEM, "diagnose failed on an import: %s", err);
    for (size_t i = 0; drc == QR_OK && i < dg.n_exchanges; i++)
    {
        const qr_diag_exchange* e = &dg.exchanges[i];
        int64_t sum = 0;
        for (int k = 0; k < QR_TC_PARTS; k++)
        {
            FUZZ_CHECK(e->part_ns[k] >= 0, "exchange %zu: part %d negative", i, k);
            sum += e->part_ns[k];
        }
        if (e->end_ns >= 0)
            FUZZ_CHECK(sum == e->end_ns - e->start_ns,
                       "exchange %zu: parts %lld, time %lld",
                       i,
                       (long long)sum,
                       (long long)(e->end_ns - e->start_ns));
        FUZZ_CHECK(e->slowdown >= 0 && e->slowdown < 1e300,
                   "exchange %zu: slowdown %g",
                   i,
                   e->slowdown);
        FUZZ_CHECK(e->flow < dg.n_flows, "exchange %zu of flow %u", i, e->flow);
    }
    for (size_t f = 0; drc == QR_OK && f < dg.n_flows; f++)
    {
        const qr_diag_flow* x = &dg.flows[f];
        uint64_t by_dir[2] = {0, 0};
        for (uint32_t k = 0; k < x->exchanges; k++)
        {
            const qr_diag_exchange* e = &dg.exchanges[x->first_exchange + k];
            FUZZ_CHECK(e->flow == f && e->dir < 2, "flow %zu: exchange %u misplaced", f, k);
            by_dir[e->dir] += e->bytes;
        }
        FUZZ_CHECK(by_dir[0] <= x->bytes && by_dir[1] <= x->bytes_back,
                   "flow %zu: exchanges hold %llu/%llu bytes of %llu/%llu",
                   f,
                   (unsigned long long)by_dir[0],
                   (unsigned long long)by_dir[1],
                   (unsigned long long)x->bytes,
                   (unsigned long long)x->bytes_back);
        /* lost and unknown packets are sequence-space ones: data, SYNs, FINs (two at most) */
        uint32_t seq_packets = x->data_packets + x->syn_sent + x->synack_sent + 2;
        FUZZ_CHECK(x->not_seen <= seq_packets && x->lost_data <= seq_packets + x->retransmissions,
                   "flow %zu: %u lost, %u not seen of %u data packets",
                   f,
                   x->lost_data,
                   x->not_seen,
                   x->data_packets);
    }
    qr_diagnosis_free(&dg);
    qr_recording_close(g);
    qr_import_report_free(r);
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rec);
    if (system(cmd))
        abort();
    return 0;
}
