#include "pipeline.h"

#include "qreplay-replay.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

extern "C"
{
#include "qreplay/error.h"
}

namespace ns3
{

int
Ns3ReplayEngine(void*,
                const qr_scenario* s,
                const qr_recording* rec,
                qr_source* src,
                const qr_replay_opts* o,
                qr_replay_out* out,
                char* err)
{
    try
    {
        QreplayReplay::Options opt;
        opt.mode = o->mode;
        opt.marginBytes = o->margin_bytes;
        opt.arrivalsPath = o->arrivals_path ? o->arrivals_path : "";
        opt.cancel = o->cancel;
        if (o->progress)
            opt.progress = [o](int64_t simNs, double wallS, uint64_t events) {
                o->progress(o->progress_ctx, simNs, wallS, events);
            };
        QreplayReplay rp(s, rec, src, opt);
        rp.Build();
        rp.Run();
        out->cancelled = rp.Cancelled();
        rp.Finish();
        uint32_t n = qr_recording_hosts(rec);
        out->n_hosts = n;
        out->sent = static_cast<uint64_t*>(calloc(n ? n : 1, sizeof(uint64_t)));
        out->sent_bytes = static_cast<uint64_t*>(calloc(n ? n : 1, sizeof(uint64_t)));
        size_t nd = rp.GetDrops().size();
        out->drops = static_cast<qr_row_drop*>(malloc((nd ? nd : 1) * sizeof(qr_row_drop)));
        if (!out->sent || !out->sent_bytes || !out->drops)
            throw std::bad_alloc();
        for (uint32_t h = 0; h < n; h++)
        {
            out->sent[h] = rp.GetSentPackets()[h];
            out->sent_bytes[h] = rp.GetSentBytes()[h];
        }
        if (nd)
            memcpy(out->drops, rp.GetDrops().data(), nd * sizeof(qr_row_drop));
        out->n_drops = nd;
        out->events = rp.GetEvents();
        out->wall_s = rp.GetWallSeconds();
        out->end_ns = rp.GetEnd().GetNanoSeconds();
        out->max_late_ns = rp.GetMaxLateness();
        out->other_drops = rp.GetOtherDrops();
        out->delivered = rp.GetDelivered();
        out->packet_hops = rp.GetArrivals();
        return QR_OK;
    }
    catch (const std::bad_alloc&)
    {
        snprintf(err, QR_ERRBUF_SIZE, "replay (ns-3): out of memory");
        return QR_ENOMEM;
    }
    catch (const std::exception& e)
    {
        snprintf(err, QR_ERRBUF_SIZE, "%s", e.what());
        return QR_EIO;
    }
}

qr_replay_engine
ReplayEngineByName(const char* name)
{
    if (!strcmp(name, "native"))
        return qr_replay_native;
    if (!strcmp(name, "ns3"))
        return Ns3ReplayEngine;
    return nullptr;
}

} // namespace ns3
