/* Operators' captures (pcap, pcapng, every link type qreplay reads): whatever the bytes, the reader
 * ends or fails cleanly, every frame is kept or skipped for one reason, and a kept packet's TCP
 * header lies within its IP length. */
#include "fuzz_common.h"
#include "qreplay/capture.h"
#include "qreplay/error.h"

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const char* path = fuzz_file(data, size, ".pcap");
    char err[QR_ERRBUF_SIZE];
    qr_capture* c;
    if (qr_capture_open(&c, path, err) != QR_OK)
        return 0;
    qr_capture_packet p;
    int rc;
    uint64_t n = 0;
    while ((rc = qr_capture_next(c, &p, err)) == QR_OK)
    {
        n++;
        FUZZ_CHECK(p.tcp_hdr_len >= 20 && p.payload + p.tcp_hdr_len <= p.ip_len,
                   "frame %llu: TCP header %u + payload %u beyond IP length %u",
                   (unsigned long long)p.frame,
                   p.tcp_hdr_len,
                   p.payload,
                   p.ip_len);
        FUZZ_CHECK(p.family == 4 || p.family == 6, "family %u", p.family);
        FUZZ_CHECK(p.time_ns >= 0, "negative time");
    }
    FUZZ_CHECK(rc == QR_END || rc == QR_EFORMAT || rc == QR_EVALUE, "rc %d: %s", rc, err);
    qr_capture_stats st;
    qr_capture_stats_get(c, &st);
    uint64_t sum = st.kept;
    for (int i = 0; i < QR_SKIP_COUNT; i++)
        sum += st.skipped[i];
    FUZZ_CHECK(sum == st.frames && st.kept == n,
               "frames %llu, kept %llu + skipped = %llu",
               (unsigned long long)st.frames,
               (unsigned long long)st.kept,
               (unsigned long long)sum);
    qr_capture_close(c);
    return 0;
}
