#include "pipeline.h"

#include "qreplay-replay.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/results.h"
}

namespace ns3
{

std::string
VariantOf(const ReplaySettings& settings)
{
    char buf[128];
    if (!settings.name.empty())
        return settings.name;
    std::string n = qr_variant_name(settings.mode, settings.th_ns, buf, sizeof buf);
    return settings.reconcile ? n + "_reconciled" : n;
}

bool
RunReplayVariant(const std::string& runDir,
                 const qr_scenario* scenario,
                 qr_recording* rec,
                 const ReplaySettings& set)
{
    const qr_config* c = qr_scenario_config(scenario);
    std::string name = VariantOf(set);
    std::string dir = runDir + "/replay/" + name;
    char err[QR_ERRBUF_SIZE];
    struct stat dirStat;
    bool existed = stat(dir.c_str(), &dirStat) == 0;
    if (qr_make_dirs(dir.c_str(), err))
        throw std::runtime_error(err);

    // a replay that does not complete leaves no folder it made (its files remove themselves)
    struct Cleanup
    {
        std::string dir;
        bool keep;

        ~Cleanup()
        {
            if (!keep)
                rmdir(dir.c_str());
        }
    } cleanup{dir, existed};

    unlink((dir + "/replay.h5").c_str()); // its presence marks a complete replay

    // reconciled clocks: the estimated offsets out of the send times, for this replay only
    struct Restore
    {
        qr_recording* rec;

        ~Restore()
        {
            if (rec)
                qr_recording_set_clock_correction(rec, nullptr);
        }
    } restore{nullptr};

    std::vector<qr_row_replay_clock> clocks;
    if (set.reconcile)
    {
        uint32_t n = qr_recording_hosts(rec);
        std::vector<qr_clock_estimate> est(n);
        std::vector<int64_t> corr(n);
        if (qr_recording_estimate_clocks(rec, 0, est.data(), nullptr, err))
            throw std::runtime_error(err);
        for (uint32_t h = 0; h < n; h++)
        {
            corr[h] = qr_clock_correction(&est[h]);
            clocks.push_back(qr_row_replay_clock{h,
                                                 corr[h],
                                                 est[h].residual_ns,
                                                 est[h].reference,
                                                 est[h].pairs,
                                                 est[h].offset_ns,
                                                 est[h].bound_ns});
        }
        if (qr_recording_set_clock_correction(rec, corr.data()))
            throw std::runtime_error("out of memory");
        restore.rec = rec;
    }
    qr_sampling_stats st{};
    qr_row_sample_record* recs = nullptr;
    size_t nRecs = 0;
    if (qr_recording_sample(rec, c->sampling.method, set.th_ns, &st, &recs, &nRecs, err))
        throw std::runtime_error(std::string("sampling: ") + err);
    std::unique_ptr<qr_row_sample_record, void (*)(void*)> keep(recs, qr_h5_rows_free);
    QreplayReplay::Options opt;
    opt.mode = set.mode;
    opt.marginBytes = c->replay.margin_bytes;
    opt.arrivalsPath = dir + "/arrivals.qra";
    opt.cancel = set.cancel;
    if (set.progress)
        opt.progress = [&set, &name](double simMs, double wallS, uint64_t events) {
            char buf[160];
            snprintf(buf,
                     sizeof buf,
                     "replay %s: sim %.3f ms | %.0fk events/s",
                     name.c_str(),
                     simMs,
                     wallS > 0 ? events / wallS / 1e3 : 0.0);
            set.progress(buf);
        };
    QreplayReplay rp(scenario, rec, opt);
    rp.Build();
    rp.Run();
    if (rp.Cancelled())
        return false;
    rp.Commit();

    std::vector<qr_row_replay_host> hosts;
    for (uint32_t h = 0; h < qr_recording_hosts(rec); h++)
        hosts.push_back(qr_row_replay_host{h, rp.GetSentPackets()[h], rp.GetSentBytes()[h]});
    qr_replay_info info{name.c_str(),
                        set.mode,
                        set.th_ns,
                        c->replay.margin_bytes,
                        rp.GetEvents(),
                        rp.GetWallSeconds(),
                        rp.GetEnd().GetNanoSeconds(),
                        rp.GetMaxLateness(),
                        rp.GetOtherDrops(),
                        rp.GetDelivered(),
                        st,
                        set.reconcile ? "reconciled" : "recorded",
                        clocks.data(),
                        clocks.size()};
    if (qr_replay_write((dir + "/replay.h5").c_str(),
                        scenario,
                        &info,
                        rp.GetDrops().data(),
                        rp.GetDrops().size(),
                        hosts.data(),
                        hosts.size(),
                        recs,
                        nRecs,
                        err))
        throw std::runtime_error(err);
    cleanup.keep = true;
    return true;
}

} // namespace ns3
