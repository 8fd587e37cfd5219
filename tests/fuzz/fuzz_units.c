/* Values with units: times, sizes, rates, percentages, time and index lists. Whatever parses
 * formats back to text that parses to the same value. */
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/units.h"

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    char text[256];
    if (size >= sizeof text)
        size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[QR_ERRBUF_SIZE], buf[64];
    int64_t t, t2;
    if (qr_parse_time_ns(text, &t, err) == QR_OK && t >= 0)
    {
        FUZZ_CHECK(qr_parse_time_ns(qr_format_time(t, buf, sizeof buf), &t2, err) == QR_OK &&
                       t2 == t,
                   "time %lld printed as %s",
                   (long long)t,
                   buf);
    }
    uint64_t b, b2;
    if (qr_parse_bytes(text, &b, err) == QR_OK)
        FUZZ_CHECK(qr_parse_bytes(qr_format_bytes(b, buf, sizeof buf), &b2, err) == QR_OK &&
                       b2 == b,
                   "size %llu printed as %s",
                   (unsigned long long)b,
                   buf);
    if (qr_parse_rate_bps(text, &b, err) == QR_OK)
        FUZZ_CHECK(qr_parse_rate_bps(qr_format_rate(b, buf, sizeof buf), &b2, err) == QR_OK &&
                       b2 == b,
                   "rate %llu printed as %s",
                   (unsigned long long)b,
                   buf);
    double d;
    if (qr_parse_percent(text, &d, err) == QR_OK)
        FUZZ_CHECK(d >= 0 && d <= 1, "a percentage of %g", d);
    int64_t list[16];
    size_t n;
    if (qr_parse_time_list(text, list, 16, &n, err) == QR_OK)
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(list[i] >= 0, "a negative time in a list");
    uint64_t* ix;
    if (qr_parse_index_list(text, 1000, "--flows", &ix, &n, err) == QR_OK)
    {
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(ix[i] <= 1000, "index %llu", (unsigned long long)ix[i]);
        qr_index_list_free(ix);
    }
    return 0;
}
