/* The recording reader: a valid recording.h5 of a star of three hosts whose host 0 pcap is the
 * input. Every input is read or refused with a message naming the file; what is read samples
 * within the threshold. */
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/pcap_file.h"
#include "qreplay/pcap_stream.h"
#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"

static char dir[128];

static void
setup(void)
{
    char err[QR_ERRBUF_SIZE], p[256];
    snprintf(dir, sizeof dir, "/tmp/qr-fuzz-rec-%ld", (long)getpid());
    snprintf(p, sizeof p, "%s/pcap", dir);
    if (qr_make_dirs(p, err))
        abort();
    qr_scenario* s;
    if (qr_scenario_create(&s) || qr_scenario_set(s, "topology.kind=star", err))
        abort();
    qr_row_flow f[] = {{0, 0, 1, 10000, 5001, 6000, 0, 90, 90, 0, 1, 1}};
    qr_row_host h[] = {{0, 0, 0, 0, 0, "pcap/h0000.pcap"},
                       {1, 0, 0, 0, 0, "pcap/h0001.pcap"},
                       {2, 0, 0, 0, 0, "pcap/h0002.pcap"}};
    qr_recording_info info = {"0123456789abcdef0123456789abcdef",
                              "fuzz",
                              QR_END_COMPLETED,
                              100,
                              0,
                              NULL,
                              0,
                              NULL,
                              0,
                              NULL,
                              0,
                              NULL,
                              0};
    for (int i = 1; i < 3; i++)
    {
        snprintf(p, sizeof p, "%s/pcap/h%04d.pcap", dir, i);
        qr_pcap_writer* w;
        if (qr_pcap_writer_open(&w, p, err) || qr_pcap_writer_close(w, err))
            abort();
    }
    /* /hosts says host 0 sent 0 packets: an input with packets is refused by its count, one
     * without is read; both paths run the reader over the whole pcap */
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    if (qr_recording_write(p, s, &info, f, 1, h, 3, NULL, 0, NULL, 0, err))
        abort();
    qr_scenario_destroy(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (!dir[0])
        setup();
    char p[256], err[QR_ERRBUF_SIZE] = "";
    snprintf(p, sizeof p, "%s/pcap/h0000.pcap", dir);
    FILE* f = fopen(p, "wb");
    if (!f)
        abort();
    if (size)
        fwrite(data, 1, size, f);
    fclose(f);
    qr_recording* r = NULL;
    qr_plan* plan = NULL;
    qr_plan_cursor* cur = NULL;
    int rc = qr_recording_open(&r, dir, NULL, err);
    FUZZ_CHECK(rc == QR_OK || (err[0] && strstr(err, dir)), "refused without naming it: %s", err);
    if (rc == QR_OK)
    {
        qr_sampling_stats st;
        FUZZ_CHECK(qr_plan_sample(&plan, r, NULL, QR_SAMPLING_RATE, 5000, &st, NULL, NULL, err) ==
                       QR_OK,
                   "sampling: %s",
                   err);
        FUZZ_CHECK(qr_plan_cursor_create(&cur, r, plan) == QR_OK, "out of memory");
    }
    /* the same capture streamed (pcap_stream.h): every host drained through its source; the
     * stream accepts what the whole reader accepts, refuses naming the file, and where both
     * accept gives every host's packets in the same order at the same times as the plan */
    qr_pcap_stream* sr = NULL;
    char serr[QR_ERRBUF_SIZE] = "";
    int src = qr_pcap_stream_open(&sr, dir, NULL, QR_SAMPLING_RATE, 5000, serr);
    for (uint32_t h = 0; src == QR_OK && h < 3; h++)
    {
        qr_source* s = qr_pcap_stream_source(sr);
        qr_source* w = cur ? qr_plan_cursor_source(cur) : NULL;
        qr_injection a, b;
        while ((src = s->next(s, h, &a, serr)) == QR_OK && a.p)
        {
            if (w)
            {
                FUZZ_CHECK(w->next(w, h, &b, err) == QR_OK && b.p,
                           "host %u: the plan ends first",
                           h);
                FUZZ_CHECK(a.p->dir == b.p->dir && a.p->seq == b.p->seq && a.time_ns == b.time_ns,
                           "host %u: streamed %u/%u at %lld, planned %u/%u at %lld",
                           h,
                           a.p->dir,
                           a.p->seq,
                           (long long)a.time_ns,
                           b.p->dir,
                           b.p->seq,
                           (long long)b.time_ns);
                w->take(w, h);
            }
            s->take(s, h);
        }
        if (src == QR_OK && w)
            FUZZ_CHECK(w->next(w, h, &b, err) == QR_OK && !b.p,
                       "host %u: the stream ends first",
                       h);
    }
    if (src == QR_OK)
    {
        qr_sampling_stats st;
        FILE* recs;
        src = qr_pcap_stream_end(sr, &st, &recs, serr);
        FUZZ_CHECK(src == QR_OK, "stream end: %s", serr);
    }
    qr_plan_cursor_free(cur);
    qr_plan_free(plan);
    qr_recording_close(r);
    FUZZ_CHECK((src == QR_OK) == (rc == QR_OK),
               "whole %d, streamed %d: %s | %s",
               rc,
               src,
               err,
               serr);
    FUZZ_CHECK(src == QR_OK || (serr[0] && strstr(serr, dir)),
               "stream refused without naming it: %s",
               serr);
    qr_pcap_stream_close(sr);
    return 0;
}
