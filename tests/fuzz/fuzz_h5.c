/* Whole result files, damaged, under every reader of them. A valid run folder of a star of two
 * hosts is written once (recording.h5, truth.h5 and its arrival log, one replay with replay.h5 and
 * its log); an input replaces one of its HDF5 files and the readers of that file run:
 *
 *   byte 0 % 4: the file: recording.h5 (qr_recording_open, then sampling), truth.h5
 *               (qr_truth_read), replay.h5 (qr_results_write: the metrics of the folder, which
 *               read recording, truth and replay), any of them for its scenario and recording id
 *               (qr_scenario_from_h5, qr_h5_recording_id);
 *   byte 1 bit 0: 0 = the bytes as given (qreplay's checksum must refuse every damaged file before
 *               libhdf5 reads it), 1 = the checksum recomputed over the damaged bytes, so that
 *               libhdf5 and our readers parse the damage itself. Mode 1 runs only with
 *               QR_FUZZ_H5_RECHECKSUM=1 in the environment: libhdf5 1.10.8 itself overflows its
 *               buffers on such files (H5O_msg_decode from H5A__dense_exists, found in the first
 *               hour), which is why the checksum refuses them first; CI runs mode 0;
 *   the rest: the file's bytes (seeds: the valid files, written into the seed folder at start).
 *
 * Properties: no crash, no leak; a file is read, or refused with a message that names it; in the
 * first mode a file whose bytes differ from a valid file's is never read as valid. */
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/pcap_file.h"
#include "qreplay/plan.h"
#include "qreplay/queuelog.h"
#include "qreplay/random.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/scenario.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/truth.h"

static char dir[128];
static const char* const slots[] = {"recording/recording.h5",
                                    "recording/truth/truth.h5",
                                    "replay/tagged_th_5/replay.h5",
                                    "recording/recording.h5"};
static unsigned char* valid[3];
static size_t valid_size[3];

static void
path_of(int slot, char* p, size_t size)
{
    snprintf(p, size, "%s/%s", dir, slots[slot]);
}

static unsigned char*
slurp_file(const char* p, size_t* n)
{
    FILE* f = fopen(p, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    unsigned char* b = malloc((size_t)len);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len)
        abort();
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void
write_file(const char* p, const void* data, size_t n)
{
    FILE* f = fopen(p, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n))
        abort();
    fclose(f);
}

static void
write_log(const char* p, const char* id)
{
    char err[QR_ERRBUF_SIZE];
    qr_arrival_writer* w;
    if (qr_arrival_writer_open(&w, p, err))
        abort();
    qr_arrival_writer_set_recording(w, id);
    for (int i = 0; i < 4; i++)
    {
        qr_flow_bytes fb = {0, 1500u * (unsigned)i};
        qr_arrival a = {.packet = qr_packet_id(0, (uint64_t)i),
                        .time_ns = 1000 + 1200 * i,
                        .sw = 0,
                        .port = 1,
                        .bytes = 1500,
                        .decision = i == 3 ? QR_DROP_THRESHOLD : QR_ADMIT,
                        .n_flows = i ? 1 : 0,
                        .queue_bytes = 1500u * (unsigned)i,
                        .flows = &fb};
        if (qr_arrival_write(w, &a, err))
            abort();
    }
    if (qr_arrival_writer_close(w, err))
        abort();
}

/* The valid run folder, and its three files kept in memory. */
static void
setup(void)
{
    char err[QR_ERRBUF_SIZE], p[256];
    snprintf(dir, sizeof dir, "/tmp/qr-fuzz-h5-%ld", (long)getpid());
    snprintf(p, sizeof p, "%s/recording/truth", dir);
    if (qr_make_dirs(p, err))
        abort();
    snprintf(p, sizeof p, "%s/recording/pcap", dir);
    if (qr_make_dirs(p, err))
        abort();
    snprintf(p, sizeof p, "%s/replay/tagged_th_5", dir);
    if (qr_make_dirs(p, err))
        abort();
    qr_scenario* s;
    if (qr_scenario_create(&s) || qr_scenario_set(s, "topology.kind=star", err))
        abort();
    static const char id[] = "0123456789abcdef0123456789abcdef";
    qr_row_flow f[] = {{0, 0, 1, 10000, 5001, 6000, 0, 90, 90, 0, 1, 1}};
    qr_row_host h[] = {{0, 0, 0, 0, 0, "pcap/h0000.pcap"},
                       {1, 0, 0, 0, 0, "pcap/h0001.pcap"},
                       {2, 0, 0, 0, 0, "pcap/h0002.pcap"}};
    for (int i = 0; i < 3; i++)
    {
        snprintf(p, sizeof p, "%s/recording/pcap/h%04d.pcap", dir, i);
        qr_pcap_writer* w;
        if (qr_pcap_writer_open(&w, p, err) || qr_pcap_writer_close(w, err))
            abort();
    }
    qr_recording_info info =
        {id, "fuzz", QR_END_COMPLETED, 100, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0};
    qr_row_received rx[] = {{1, 5, 1000}};
    path_of(0, p, sizeof p);
    if (qr_recording_write(p, s, &info, f, 1, h, 3, NULL, 0, rx, 0, err))
        abort();
    qr_truth_info ti = {.recording_id = id,
                        .end = QR_END_COMPLETED,
                        .sim_end_ns = 100000,
                        .events = 10,
                        .wall_s = 0.1};
    qr_row_drop drops[] = {
        {qr_packet_id(0, 3), 0, 4600, 0, 1, 1500, QR_DROP_THRESHOLD, 0, 3000, 0}};
    path_of(1, p, sizeof p);
    if (qr_truth_write(p, s, &ti, drops, 1, NULL, 0, err))
        abort();
    snprintf(p, sizeof p, "%s/recording/truth/arrivals.qra", dir);
    write_log(p, id);
    qr_replay_info ri = {id,
                         "tagged_th_5",
                         QR_MODE_TAGGED,
                         5000,
                         7500,
                         10,
                         0.1,
                         1000,
                         0,
                         0,
                         2,
                         {4, 2, 0},
                         NULL,
                         NULL,
                         0,
                         NULL,
                         NULL};
    path_of(2, p, sizeof p);
    if (qr_replay_write(p, s, &ri, drops, 1, NULL, 0, NULL, 0, NULL, err))
        abort();
    snprintf(p, sizeof p, "%s/replay/tagged_th_5/arrivals.qra", dir);
    write_log(p, id);
    qr_scenario_destroy(s);
    for (int i = 0; i < 3; i++)
    {
        path_of(i, p, sizeof p);
        valid[i] = slurp_file(p, &valid_size[i]);
    }
}

/* libFuzzer calls this once: the valid files become seeds in any folder named ".../seeds/h5". */
int
LLVMFuzzerInitialize(int* argc, char*** argv)
{
    setup();
    for (int a = 1; a < *argc; a++)
    {
        const char* d = (*argv)[a];
        size_t n = strlen(d);
        if (d[0] == '-' || n < 9 || strcmp(d + n - 9, "/seeds/h5") != 0)
            continue;
        for (int slot = 0; slot < 4; slot++)
            for (int fix = 0; fix < 2; fix++)
            {
                char p[600];
                snprintf(p, sizeof p, "%s/valid-%d-%d", d, slot, fix);
                FILE* f = fopen(p, "wb");
                if (!f)
                    continue;
                unsigned char head[2] = {(unsigned char)slot, (unsigned char)fix};
                fwrite(head, 1, 2, f);
                fwrite(valid[slot % 3], 1, valid_size[slot % 3], f);
                fclose(f);
            }
    }
    return 0;
}

/* Put qreplay's checksum line over the damaged bytes (the layout of h5.c's user block). */
static void
fix_checksum(unsigned char* b, size_t n)
{
    if (n < 512)
        return;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(b + 512, n - 512, md, &len, EVP_sha256(), NULL) != 1)
        abort();
    char line[512];
    int k = snprintf(line, sizeof line, "QREPLAY-H5 1 sha256=");
    for (unsigned i = 0; i < 32; i++)
        k += snprintf(line + k, sizeof line - (size_t)k, "%02x", md[i]);
    snprintf(line + k, sizeof line - (size_t)k, " size=%zu\n", n);
    memset(b, 0, 512);
    memcpy(b, line, strlen(line));
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    static int recheck = -1;
    if (recheck < 0)
    {
        const char* e = getenv("QR_FUZZ_H5_RECHECKSUM");
        recheck = e && e[0] == '1';
    }
    int slot = data[0] % 4, fix = recheck && (data[1] & 1);
    size_t n = size - 2;
    unsigned char* b = malloc(n ? n : 1);
    if (!b)
        abort();
    memcpy(b, data + 2, n);
    if (fix)
        fix_checksum(b, n);
    char p[256], err[QR_ERRBUF_SIZE] = "";
    path_of(slot, p, sizeof p);
    write_file(p, b, n);
    int same = n == valid_size[slot % 3] && !memcmp(b, valid[slot % 3], n);
    /* a changed file whose block is the right sum of its bytes was summed again on purpose (the
     * fuzzer learns the digest from the comparison): it is read like mode 1 */
    int resummed = 0;
    if (!same && n >= 512)
    {
        unsigned char* again = malloc(n);
        if (!again)
            abort();
        memcpy(again, b, n);
        fix_checksum(again, n);
        resummed = !memcmp(again, b, 512);
        free(again);
    }
    int rc = 0;
    switch (slot)
    {
    case 0: {
        qr_recording* r;
        rc = qr_recording_open(&r, dir, NULL, err);
        if (rc == QR_OK)
        {
            qr_sampling_stats st;
            qr_plan* plan = NULL;
            FUZZ_CHECK(
                qr_plan_sample(&plan, r, NULL, QR_SAMPLING_RATE, 5000, &st, NULL, NULL, err) ==
                    QR_OK,
                "sampling: %s",
                err);
            qr_plan_free(plan);
            qr_recording_close(r);
        }
        break;
    }
    case 1: {
        qr_truth t;
        rc = qr_truth_read(p, &t, err);
        if (rc == QR_OK)
            qr_truth_free(&t);
        break;
    }
    case 2: {
        qr_variant_summary* rows = NULL;
        size_t nr = 0;
        rc = qr_results_write(dir, NULL, NULL, &rows, &nr, err);
        if (rc == QR_OK)
            qr_variant_summaries_free(rows);
        char rp[300];
        snprintf(rp, sizeof rp, "%s/results.h5", dir);
        unlink(rp);
        break;
    }
    default: {
        qr_scenario* s = NULL;
        rc = qr_scenario_from_h5(&s, p, NULL, NULL, err);
        qr_scenario_destroy(s);
        char id[QR_ID_SIZE];
        char err2[QR_ERRBUF_SIZE] = "";
        int rc2 = qr_h5_recording_id(p, id, err2);
        FUZZ_CHECK(rc2 == QR_OK || (err2[0] && strstr(err2, p)),
                   "id refused without naming: %s",
                   err2);
        break;
    }
    }
    FUZZ_CHECK(rc == QR_OK || (err[0] && strstr(err, dir)), "refused without naming it: %s", err);
    if (!fix && !same && !resummed)
        FUZZ_CHECK(rc != QR_OK, "a changed file was read: %s", slots[slot]);
    /* put the valid file back for the next input */
    write_file(p, valid[slot % 3], valid_size[slot % 3]);
    free(b);
    return 0;
}
