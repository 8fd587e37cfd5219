/* The text readers: flow lists (src,dst,bytes,start) and flow-size CDFs, with the web-search
 * generation over a short duration: every input is read or refused with a message, and a CDF that
 * loads generates a schedule that ends. */
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/workload.h"

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    char err[QR_ERRBUF_SIZE] = "";
    const char* path = fuzz_file(data + 1, size - 1, ".txt");
    if (data[0] & 1)
    {
        qr_flow* f = NULL;
        size_t n = 0;
        int rc = qr_flows_load(path, 16, &f, &n, err);
        FUZZ_CHECK(rc == QR_OK || err[0], "flow list refused without a message");
        for (size_t i = 0; rc == QR_OK && i < n; i++)
            FUZZ_CHECK(f[i].src < 16 && f[i].dst < 16 && f[i].src != f[i].dst && f[i].bytes > 0 &&
                           f[i].start_ns >= 0 && (i == 0 || f[i].start_ns >= f[i - 1].start_ns),
                       "flow %zu is not a valid flow",
                       i);
        qr_flows_free(f);
    }
    else
    {
        qr_cdf* c = NULL;
        int rc = qr_cdf_load(&c, path, err);
        FUZZ_CHECK(rc == QR_OK || err[0], "CDF refused without a message");
        if (rc == QR_OK)
        {
            FUZZ_CHECK(qr_cdf_mean(c) >= 1.0, "mean %g", qr_cdf_mean(c));
            qr_workload_cfg w = {.seed = data[0],
                                 .n_hosts = 16,
                                 .link_rate_bps = 10000000000ULL,
                                 .load = 0.3,
                                 .duration_ns = 20000,
                                 .sizes = c};
            qr_flow* f = NULL;
            size_t n = 0;
            rc = qr_workload_generate(&w, &f, &n, err);
            FUZZ_CHECK(rc == QR_OK || err[0], "generation refused without a message");
            for (size_t i = 0; rc == QR_OK && i < n; i++)
                FUZZ_CHECK(f[i].bytes >= 1, "a flow of 0 bytes");
            qr_flows_free(f);
            qr_cdf_destroy(c);
        }
    }
    unlink(path);
    return 0;
}
