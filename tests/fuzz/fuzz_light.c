/* The light record's reader (light.h). The input builds a record: byte 0 says how (bit 0: the
 * input is the file itself, magic, headers and CRCs included; else the harness frames the rest as
 * blocks of a record of a star of 4 hosts, deflated and CRC'd as the writer does (bit 7: of
 * version 2, whose received block says per direction whether it keeps its times), so the fuzzer
 * reaches the parts' decoders), then per block: part, threshold, length (2 bytes, little endian)
 * and the raw bytes. Every record is read or refused with a message naming the file; a record
 * read gives every packet's fate, builds the recording a replay reads and samples it at each of
 * its thresholds (and refuses one it lacks, with a message), inferring every packet's time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_blocks.h"
#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/light.h"
#include "qreplay/scenario.h"

static char scen[8192];

static void
header(FILE* f, unsigned flows, unsigned n_th, unsigned version)
{
    if (!scen[0])
    {
        qr_scenario* s;
        char e[QR_ERRBUF_SIZE];
        if (qr_scenario_create(&s) || qr_scenario_set(s, "topology.kind=star", e) ||
            qr_scenario_set(s, "topology.hosts=4", e))
            abort();
        FILE* m = fmemopen(scen, sizeof scen - 1, "w");
        if (!m || qr_scenario_print(s, m))
            abort();
        fclose(m);
        qr_scenario_destroy(s);
    }
    static char text[16384];
    snprintf(text,
             sizeof text,
             "kind=qreplay light record\nversion=%u\nrecording_id=fuzz\nhosts=4\nflows=%u\n"
             "method=rate\nthresholds=%s\noffsets=0,0,0,0\nscenario=\n%s",
             version,
             flows,
             n_th == 1   ? "5000"
             : n_th == 2 ? "0,5000"
                         : "2000,5000,10000",
             scen);
    size_t n = strlen(text);
    uLongf cl = compressBound(n);
    static unsigned char c[32768];
    compress2(c, &cl, (const Bytef*)text, n, 9);
    unsigned char h[16] = {0};
    uint32_t v[3] = {(uint32_t)n, (uint32_t)cl, (uint32_t)crc32(0, (const Bytef*)text, n)};
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 4; b++)
            h[4 + 4 * i + b] = (uint8_t)(v[i] >> (8 * b));
    fwrite(h, 1, 16, f);
    fwrite(c, 1, cl, f);
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 3)
        return 0;
    const char* path;
    if (data[0] & 1)
        path = fuzz_file(data + 1, size - 1, ".qrl");
    else
    {
        path = fuzz_file(NULL, 0, ".qrl");
        FILE* f = fopen(path, "wb");
        if (!f)
            abort();
        fwrite("QRLIGHT1", 1, 8, f);
        header(f, data[1] % 9, 1 + (data[0] >> 1) % 3, data[0] & 0x80 ? 2 : 1);
        framed_all(f, data, size, 2, 8, 0);
        fclose(f);
    }
    char err[QR_ERRBUF_SIZE] = "";
    qr_light* l;
    if (qr_light_open(&l, path, err) != QR_OK)
    {
        FUZZ_CHECK(strstr(err, path), "refused without naming the file: %s", err);
        return 0;
    }
    const qr_flow_table* ft = qr_light_flows(l);
    size_t dirs = qr_flow_table_directions(ft);
    qr_light_stats st;
    qr_light_stats_get(l, &st);
    uint64_t total = 0;
    const qr_packet** pk = calloc(dirs + 1, sizeof *pk);
    size_t* n = calloc(dirs + 1, sizeof *n);
    if (!pk || !n)
        abort();
    for (uint32_t d = 0; d < dirs; d++)
    {
        uint32_t sent = qr_light_sent(l, d);
        total += sent;
        for (uint32_t s = 0; s <= sent; s++)
        {
            int lost = -1, ce = -1;
            int64_t t = 0;
            int known = qr_light_fate(l, d, s, &lost, &t, &ce);
            FUZZ_CHECK(!known || s < sent, "fate of %u/%u of %u sent", d, s, sent);
            FUZZ_CHECK(known || s == sent || qr_light_unregenerable(l),
                       "an unknown fate in a record said regenerable");
            FUZZ_CHECK(!known || !(lost && ce), "a lost packet marked CE");
        }
        n[d] = sent;
        pk[d] = calloc(sent + 1, sizeof(qr_packet));
        if (!pk[d])
            abort();
    }
    FUZZ_CHECK(total == st.packets,
               "%llu packets, the stats say %llu",
               (unsigned long long)total,
               (unsigned long long)st.packets);
    for (size_t f = 0; f < qr_flow_table_flows(ft); f++)
        (void)qr_light_last_ns(l, (uint32_t)f);
    qr_recording* r;
    if (qr_recording_from_light(&r, l, pk, n, NULL, NULL, err) != QR_OK)
        FUZZ_CHECK(err[0], "refused without a message");
    else
    {
        for (size_t i = 0; i <= st.n_th; i++)
        {
            int64_t th = i < st.n_th ? st.th_ns[i] : 7777;
            qr_sampling_stats ss;
            err[0] = 0;
            qr_plan* plan = NULL;
            int rc = qr_light_plan(&plan, l, r, QR_SAMPLING_RATE, th, &ss, NULL, NULL, err);
            qr_plan_free(plan);
            FUZZ_CHECK(rc == QR_OK || err[0], "sampling refused without a message");
            FUZZ_CHECK(i < st.n_th || rc != QR_OK, "sampled at a threshold it lacks");
            if (rc == QR_OK)
                FUZZ_CHECK(ss.packets == total,
                           "sampled %llu of %llu packets",
                           (unsigned long long)ss.packets,
                           (unsigned long long)total);
        }
        qr_recording_close(r);
    }
    for (uint32_t d = 0; d < dirs; d++)
        free((void*)pk[d]);
    free(pk);
    free(n);
    qr_light_close(l);
    return 0;
}
