#include "butterfly.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

extern "C" {
#include "qreplay/error.h"
#include "qreplay/units.h"
}

namespace ns3
{

std::string
ParseSigmas(const char* text, std::vector<int64_t>& out)
{
    out.clear();
    std::string s = text ? text : "";
    if (s.empty())
        return "--sigma: empty list (e.g. 0,1ns,10ns,100ns,1us)";
    size_t pos = 0;
    while (pos <= s.size())
    {
        size_t comma = s.find(',', pos);
        std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        int64_t v;
        char err[QR_ERRBUF_SIZE];
        if (item.empty())
            return "--sigma: empty item in '" + s + "'";
        if (item[0] == '-')
            return "--sigma: '" + item + "' is negative";
        if (qr_parse_time_ns(item.c_str(), &v, err))
            return std::string("--sigma: ") + err;
        if (v < 0)
            return "--sigma: '" + item + "' is negative";
        if (std::find(out.begin(), out.end(), v) != out.end())
            return "--sigma: '" + item + "' given twice";
        out.push_back(v);
        if (out.size() > 16)
            return "--sigma: at most 16 values";
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return "";
}

Butterfly::Butterfly(const qr_scenario* scenario)
    : m_scenario(scenario)
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

void
Butterfly::RunRuntime(const std::string& dir, const volatile std::sig_atomic_t* cancel)
{
    QreplayRuntime::Options opt;
    opt.outDir = dir;
    opt.cancel = cancel;
    opt.scenarioName = "butterfly";
    m_arrivals.clear();
    std::unordered_map<uint32_t, uint64_t> perQueue;
    opt.arrivalHook = [this, &perQueue](const qr_arrival& a) {
        m_arrivals[Key{a.packet, a.sw << 16 | a.port}] = a.queue_bytes;
        perQueue[a.sw << 16 | a.port]++;
    };
    QreplayRuntime rt(m_scenario, opt);
    rt.Build();
    rt.Run();
    if (rt.GetEndReason() == "cancelled")
        throw std::runtime_error("interrupted");
    rt.Commit();
    m_end = rt.GetEnd().GetNanoSeconds();
    uint64_t most = 0;
    for (const auto& [q, n] : perQueue)
        if (n > most || (n == most && q < m_bottleneck))
        {
            most = n;
            m_bottleneck = q;
        }
    const FlowTable& ft = rt.GetFlows();
    if (ft.Flows() == 0)
        throw std::runtime_error("the scenario has no flows");
    m_short = 0;
    for (uint32_t f = 1; f < ft.Flows(); f++)
        if (ft.Flow(f).bytes <= ft.Flow(m_short).bytes)
            m_short = f;
    m_shortFct = rt.GetFlowRecords()[m_short].end_ns < 0
                     ? -1
                     : rt.GetFlowRecords()[m_short].end_ns - ft.Flow(m_short).start_ns;
    m_drops.clear();
    for (const auto& d : rt.GetDrops())
        m_drops.push_back(Key{d.packet, d.sw << 16 | d.port});
    std::sort(m_drops.begin(), m_drops.end(), [](const Key& a, const Key& b) {
        return a.packet != b.packet ? a.packet < b.packet : a.queue < b.queue;
    });
}

bool
Butterfly::Replay(int64_t sigma_ns, uint32_t replay, ReplayResult& out, std::vector<SeriesPoint>* series,
                  const volatile std::sig_atomic_t* cancel)
{
    qr_scenario* s = Clone(sigma_ns);
    out = ReplayResult{sigma_ns, replay, -1, 0, 0, 0, 0, -1, 1.0, 0, 0};
    uint64_t after = 0, zeroAfter = 0;
    try
    {
        QreplayRuntime::Options opt;
        opt.cancel = cancel;
        opt.jitterStream = replay;
        opt.arrivalHook = [&](const qr_arrival& a) {
            if ((a.sw << 16 | a.port) != m_bottleneck)
                return;
            auto it = m_arrivals.find(Key{a.packet, a.sw << 16 | a.port});
            if (it == m_arrivals.end())
                return;
            out.matched++;
            uint64_t d = it->second > a.queue_bytes ? it->second - a.queue_bytes : a.queue_bytes - it->second;
            if (d && out.first_divergence_ns < 0)
                out.first_divergence_ns = a.time_ns;
            if (out.first_divergence_ns >= 0)
            {
                after++;
                zeroAfter += d == 0;
            }
            out.max_diff_bytes = std::max(out.max_diff_bytes, d);
            if (series)
                series->push_back(SeriesPoint{a.time_ns, d});
        };
        QreplayRuntime rt(s, opt);
        rt.Build();
        rt.Run();
        if (rt.GetEndReason() == "cancelled")
        {
            qr_scenario_destroy(s);
            return false;
        }
        const auto& rec = rt.GetFlowRecords()[m_short];
        out.short_fct_ns = rec.end_ns < 0 ? -1 : rec.end_ns - rt.GetFlows().Flow(m_short).start_ns;
        out.short_reproduced =
            m_shortFct >= 0 && out.short_fct_ns >= 0 &&
            std::llabs(out.short_fct_ns - m_shortFct) <= m_shortFct / 100;
        std::vector<Key> drops;
        for (const auto& d : rt.GetDrops())
            drops.push_back(Key{d.packet, d.sw << 16 | d.port});
        std::sort(drops.begin(), drops.end(), [](const Key& a, const Key& b) {
            return a.packet != b.packet ? a.packet < b.packet : a.queue < b.queue;
        });
        out.drops = drops.size();
        out.run_reproduced = drops == m_drops;
        out.zero_after_divergence = after ? double(zeroAfter) / after : 1.0;
        out.wall_s = rt.GetWallSeconds();
    }
    catch (...)
    {
        qr_scenario_destroy(s);
        throw;
    }
    qr_scenario_destroy(s);
    return true;
}

} // namespace ns3
