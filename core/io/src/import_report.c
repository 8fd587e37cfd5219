/* qreplay import: the report's names and its release (import.h). */
#include <stdlib.h>

#include "import_internal.h"

const char *qr_import_evidence_name(int e)
{
    static const char *const n[] = {"both", "retrans", "ipid", "none"};
    return e >= 0 && e < QR_EVIDENCE_COUNT ? n[e] : "?";
}

const char *qr_ipid_kind_name(int k)
{
    static const char *const n[] = {
        "unknown", "per connection", "one counter per host", "random", "zero", "constant", "mixed"};
    return k >= 0 && k < QR_IPID_KINDS ? n[k] : "?";
}

qr_ipid_kind qr_ipid_classify(const qr_ipid_stats *s)
{
    if (s->steps < 3)
        return QR_IPID_UNKNOWN;
    if (s->same == s->steps)
        return s->nonzero ? QR_IPID_CONSTANT : QR_IPID_ZERO;
    uint64_t rise = s->one + s->up;
    if (10 * rise >= 9 * s->steps) {
        if (s->directions >= 2 && s->host_steps >= 3)
            return 10 * s->host_up >= 9 * s->host_steps ? QR_IPID_PER_HOST : QR_IPID_PER_CONN;
        return 10 * s->one >= 9 * s->steps ? QR_IPID_PER_CONN : QR_IPID_PER_HOST;
    }
    return 2 * rise < s->steps ? QR_IPID_RANDOM : QR_IPID_MIXED;
}

const char *qr_import_left_name(int r)
{
    static const char *const n[] = {"same host at both ends", "not to or from the capture's host",
                                    "second capture of a host"};
    return r >= 0 && r < QR_IMPORT_LEFT_COUNT ? n[r] : "?";
}

void qr_import_report_free(qr_import_report *r)
{
    if (!r)
        return;
    free(r->captures);
    free(r->hosts);
    free(r);
}
