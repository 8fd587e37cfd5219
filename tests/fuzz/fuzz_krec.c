/* The kernel record's reader (krecord.h). The input builds a record: byte 0 says how (bit 0: the
 * input is the file itself, magic, headers and CRCs included; else the harness writes the magic
 * and a header block with 1 to 3 thresholds, then frames the rest as blocks, deflated and CRC'd as
 * the writer does, so the fuzzer reaches the parts' decoders): per block a part, a threshold, a
 * length (2 bytes, little endian) and the raw bytes. Every record is read or refused with a
 * message naming the file; a record read keeps its promises: every connection's runs sum to its
 * packets and the record's, every sample names one of its connection's segments in increasing
 * order, and every segment's time can be inferred from them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_blocks.h"
#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/krecord.h"

static const char*
build(const uint8_t* data, size_t size)
{
    if (data[0] & 1)
        return fuzz_file(data + 1, size - 1, ".qrk");
    const char* path = fuzz_file(NULL, 0, ".qrk");
    FILE* f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite("QRLIGHTK", 1, 8, f);
    unsigned n_th = 1 + (data[0] >> 1) % 3;
    char text[256];
    snprintf(text,
             sizeof text,
             "format=qreplay kernel record 4\nhost=h0\nnetns=1\nstart_ns=1000\nmethod=%s\n"
             "th_ns=%s\n",
             data[0] & 8 ? "gap" : "rate",
             n_th == 1   ? "5000"
             : n_th == 2 ? "0,5000"
                         : "1000,5000,10000");
    framed(f, 0, 0, (const uint8_t*)text, strlen(text));
    framed_all(f, data, size, 1, 7, 4);
    fclose(f);
    return path;
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    const char* path = build(data, size);
    char err[QR_ERRBUF_SIZE] = "";
    qr_krec* k;
    if (qr_krec_open(&k, path, err) != QR_OK)
    {
        FUZZ_CHECK(strstr(err, path), "refused without naming the file: %s", err);
        return 0;
    }
    qr_krec_stats st;
    qr_krec_stats_get(k, &st);
    const qr_krec_header* h = qr_krec_header_of(k);
    const qr_krec_conn* c;
    size_t nc = qr_krec_conns(k, &c);
    FUZZ_CHECK(nc == st.connections,
               "%zu connections, the stats say %llu",
               nc,
               (unsigned long long)st.connections);
    uint64_t total = 0;
    for (size_t i = 0; i < nc; i++)
    {
        FUZZ_CHECK(c[i].id == i, "connection %zu named %u", i, c[i].id);
        size_t nr;
        const qr_krec_run* r = qr_krec_runs(k, (uint32_t)i, &nr);
        uint64_t packets = 0;
        for (size_t j = 0; j < nr; j++)
        {
            FUZZ_CHECK(r[j].count > 0 && r[j].size >= 40, "an empty or short run");
            packets += r[j].count;
        }
        FUZZ_CHECK(packets == c[i].packets,
                   "connection %zu: runs of %llu packets, it says %llu",
                   i,
                   (unsigned long long)packets,
                   (unsigned long long)c[i].packets);
        total += packets;
        for (size_t t = 0; t < h->n_th; t++)
        {
            size_t ns;
            const qr_sample_record* s = qr_krec_samples(k, (uint32_t)i, t, &ns);
            for (size_t j = 0; j < ns; j++)
            {
                FUZZ_CHECK(s[j].index < packets && (!j || s[j].index > s[j - 1].index),
                           "a sample of no segment, or out of order");
                FUZZ_CHECK(s[j].gap_den > 0, "a sample without a rate");
            }
            /* every segment from the first sampled one on has an inferred time */
            for (uint64_t p = ns ? s[0].index : 0; ns && p < packets && p < s[0].index + 4096; p++)
            {
                int64_t when;
                (void)qr_sample_infer(s, ns, p, &when);
            }
        }
    }
    FUZZ_CHECK(total == st.packets,
               "%llu packets, the stats say %llu",
               (unsigned long long)total,
               (unsigned long long)st.packets);
    qr_krec_close(k);
    return 0;
}
