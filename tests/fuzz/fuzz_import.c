/* qreplay import end to end: two captures from one input (the first two bytes give the first's
 * length; hosts 10.77.0.1 and 10.77.0.2 own them, as in the seeds). Whatever the bytes, the
 * import fails cleanly with a message and leaves no folder, or writes a recording that reads back
 * (IP IDs consecutive per direction, packet counts as reported, drops naming recorded packets). */
#include <dirent.h>
#include <string.h>

#include "fuzz_common.h"
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
    qr_import_cfg cfg = {caps, 2, map, 2, QR_IMPORT_CLOCK_AUTO, NULL, NULL, 0};
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
    qr_recording_close(g);
    qr_import_report_free(r);
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rec);
    if (system(cmd))
        abort();
    return 0;
}
