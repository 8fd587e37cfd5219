#include "butterfly.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/recording.h"
#include "qreplay/runstats.h"
}

namespace ns3
{

static qr_arrival_index*
NewIndex()
{
    qr_arrival_index* x = nullptr;
    if (qr_arrival_index_create(&x))
        throw std::bad_alloc();
    return x;
}

Butterfly::Butterfly(const qr_scenario* scenario)
    : m_scenario(scenario),
      m_arrivals(NewIndex(), qr_arrival_index_destroy)
{
    char* buf = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    if (!f || qr_scenario_print(scenario, f))
        throw std::runtime_error("cannot print the scenario");
    fclose(f);
    m_text.assign(buf, len);
    free(buf);
}

Butterfly::~Butterfly() = default;

qr_scenario*
Butterfly::Clone(int64_t sigma_ns) const
{
    qr_scenario* s = nullptr;
    char err[QR_ERRBUF_SIZE], set[64];
    snprintf(set, sizeof set, "host.proc_jitter=%ldns", static_cast<long>(sigma_ns));
    int rc = qr_scenario_create(&s);
    if (!rc)
        rc = qr_scenario_load_string(s, m_text.c_str(), "scenario", ".", err);
    if (!rc)
        rc = qr_scenario_set(s, set, err);
    if (!rc)
        rc = qr_scenario_validate(s, err);
    if (rc)
    {
        qr_scenario_destroy(s);
        throw std::runtime_error(err);
    }
    return s;
}

/* The drops of a run, as sorted keys. */
static std::vector<qr_drop_key>
DropKeys(const std::vector<QreplayRuntime::Drop>& drops)
{
    std::vector<qr_drop_key> keys;
    for (const auto& d : drops)
        keys.push_back(qr_drop_key{d.packet, qr_queue_key(d.sw, d.port)});
    qr_drop_keys_sort(keys.data(), keys.size());
    return keys;
}

bool
Butterfly::RunRuntime(const std::string& dir, const volatile std::sig_atomic_t* cancel)
{
    QreplayRuntime::Options opt;
    opt.outDir = dir;
    opt.cancel = cancel;
    opt.scenarioName = "butterfly";
    m_arrivals.reset(NewIndex());
    qr_queue_counter* counter = nullptr;
    if (qr_queue_counter_create(&counter))
        throw std::bad_alloc();
    std::unique_ptr<qr_queue_counter, void (*)(qr_queue_counter*)> keep(counter,
                                                                        qr_queue_counter_destroy);
    opt.arrivalHook = [this, counter](const qr_arrival& a) {
        if (qr_arrival_index_put(m_arrivals.get(),
                                 a.packet,
                                 qr_queue_key(a.sw, a.port),
                                 a.queue_bytes) ||
            qr_queue_counter_add(counter, a.sw, a.port))
            throw std::bad_alloc();
    };
    QreplayRuntime rt(m_scenario, opt);
    rt.Build();
    rt.Run();
    if (rt.GetEndReason() == QR_END_CANCELLED)
        return false;
    rt.Commit();
    m_end = rt.GetEnd().GetNanoSeconds();
    qr_queue_counter_busiest(counter, &m_bsw, &m_bport, nullptr);
    const FlowTable& ft = rt.GetFlows();
    if (ft.Flows() == 0)
        throw std::runtime_error("the scenario has no flows");
    m_short = qr_short_flow(&ft.Flow(0), ft.Flows());
    int64_t end = rt.GetFlowRecords()[m_short].end_ns;
    m_shortFct = qr_fct_ns(ft.Flow(m_short).start_ns, end);
    m_drops = DropKeys(rt.GetDrops());
    return true;
}

bool
Butterfly::Replay(int64_t sigma_ns,
                  uint32_t replay,
                  ReplayResult& out,
                  std::vector<SeriesPoint>* series,
                  const volatile std::sig_atomic_t* cancel)
{
    std::unique_ptr<qr_scenario, void (*)(qr_scenario*)> s(Clone(sigma_ns), qr_scenario_destroy);
    out = ReplayResult{sigma_ns, replay, -1, 0, 0, 0, 0, -1, 1.0, 0, 0};
    qr_divergence div;
    qr_divergence_init(&div);
    QreplayRuntime::Options opt;
    opt.cancel = cancel;
    opt.jitterStream = replay;
    opt.arrivalHook = [&](const qr_arrival& a) {
        uint64_t run;
        if (a.sw != m_bsw || a.port != m_bport ||
            qr_arrival_index_get(m_arrivals.get(), a.packet, qr_queue_key(a.sw, a.port), &run))
            return;
        uint64_t d = qr_divergence_add(&div, a.time_ns, run, a.queue_bytes);
        if (series)
            series->push_back(SeriesPoint{a.time_ns, d});
    };
    QreplayRuntime rt(s.get(), opt);
    rt.Build();
    rt.Run();
    if (rt.GetEndReason() == QR_END_CANCELLED)
        return false;
    int64_t end = rt.GetFlowRecords()[m_short].end_ns;
    out.short_fct_ns = qr_fct_ns(rt.GetFlows().Flow(m_short).start_ns, end);
    out.short_reproduced = static_cast<uint8_t>(qr_fct_reproduced(m_shortFct, out.short_fct_ns));
    std::vector<qr_drop_key> drops = DropKeys(rt.GetDrops());
    out.drops = drops.size();
    out.run_reproduced = static_cast<uint8_t>(
        qr_drop_sets_equal(drops.data(), drops.size(), m_drops.data(), m_drops.size()));
    out.matched = div.matched;
    out.first_divergence_ns = div.first_ns;
    out.zero_after_divergence = qr_divergence_zero_after(&div);
    out.max_diff_bytes = div.max_diff_bytes;
    out.wall_s = rt.GetWallSeconds();
    return true;
}

} // namespace ns3
