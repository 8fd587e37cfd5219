/* The arrival-log reader: any file is read to its end or refused with a message naming the
 * record; flows of a record are sorted and fit their count. */
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/queuelog.h"

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const char* path = fuzz_file(data, size, ".qra");
    char err[QR_ERRBUF_SIZE] = "";
    qr_arrival_reader* r;
    if (qr_arrival_reader_open(&r, path, err) != QR_OK)
    {
        FUZZ_CHECK(err[0], "open refused without a message");
        unlink(path);
        return 0;
    }
    qr_arrival a;
    int rc;
    while ((rc = qr_arrival_read(r, &a, err)) == QR_OK)
    {
        uint64_t sum = 0;
        for (uint16_t i = 0; i < a.n_flows; i++)
            sum += a.flows[i].bytes;
        (void)sum;
    }
    FUZZ_CHECK(rc == QR_END || err[0], "read refused without a message");
    qr_arrival_reader_close(r);
    unlink(path);
    return 0;
}
