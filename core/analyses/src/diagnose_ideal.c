/* A transfer's ideal time alone on the scenario's empty network (diagnose_internal.h), for the
 * diagnosis from captures and from kernel records alike. */
#include "diagnose_internal.h"
#include "qreplay/metrics.h"
#include "qreplay/units.h"

int64_t qri_diag_transfer_ideal(const qri_diag_ctx *x, uint32_t src, uint32_t dst, uint64_t bytes,
                                uint32_t mss, uint32_t hdr)
{
    const qr_config *c = x->c;
    if (!mss)
        mss = 1;
    uint64_t npk = bytes ? (bytes + mss - 1) / mss : 0;
    uint64_t last_payload = bytes - (npk ? (npk - 1) * mss : 0);
    return (int64_t)(npk ? npk - 1 : 0) *
               qri_wire_ns(mss + hdr + QR_LINK_OVERHEAD_BYTES, c->links.rate_bps) +
           qr_unloaded_latency_ns(x->topo, src, dst, (uint32_t)(hdr + last_payload),
                                  c->links.rate_bps, c->links.delay_ns);
}
