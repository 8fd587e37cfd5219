/* Pcap reader and sampling: any file is read or refused with a message (a cut last record ends
 * the file); every flow direction's send times, sampled at a threshold from the input, infer back
 * within that threshold (or the flow is refused for going back in time). */
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/pcap_file.h"
#include "qreplay/sampler.h"

enum
{
    MAX_PACKETS = 4096
};

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    int64_t th = (int64_t)data[0] * 100; /* 0 .. 25.5 us */
    const char* path = fuzz_file(data + 1, size - 1, ".pcap");
    char err[QR_ERRBUF_SIZE] = "";
    qr_pcap_reader* r;
    if (qr_pcap_reader_open(&r, path, err) != QR_OK)
    {
        FUZZ_CHECK(err[0], "open refused without a message");
        return 0;
    }
    static int64_t times[MAX_PACKETS];
    static uint64_t keys[MAX_PACKETS];
    size_t n = 0;
    qr_packet p;
    int rc;
    while (n < MAX_PACKETS && (rc = qr_pcap_read(r, &p, err)) == QR_OK)
    {
        FUZZ_CHECK(p.time_ns >= 0 && p.time_ns <= QR_TIME_MAX, "time %lld", (long long)p.time_ns);
        times[n] = p.time_ns;
        keys[n++] = (uint64_t)p.src_ip << 32 ^ p.dst_ip ^ (uint64_t)p.src_port << 16 ^ p.dst_port;
    }
    FUZZ_CHECK(n == MAX_PACKETS || rc == QR_END || err[0], "read refused without a message");
    qr_pcap_reader_close(r);
    /* per flow direction: sampling within th */
    qr_sampler* s;
    qr_sampler_cfg cfg = {QR_SAMPLING_RATE, th};
    if (qr_sampler_create(&s, &cfg))
        abort();
    static int64_t flow[MAX_PACKETS], inferred[MAX_PACKETS];
    static qr_sample_record recs[MAX_PACKETS];
    static unsigned char done[MAX_PACKETS];
    memset(done, 0, n);
    for (size_t i = 0; i < n; i++)
    {
        if (done[i])
            continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (keys[j] == keys[i])
            {
                flow[m++] = times[j];
                done[j] = 1;
            }
        size_t nr;
        int64_t worst;
        if (qr_sample_series(s, flow, m, recs, &nr, inferred, &worst, err) == QR_OK)
        {
            FUZZ_CHECK(worst <= th,
                       "inferred %lld ns off at th %lld",
                       (long long)worst,
                       (long long)th);
            FUZZ_CHECK(nr <= m, "%zu records for %zu packets", nr, m);
        }
    }
    qr_sampler_destroy(s);
    unlink(path);
    return 0;
}
