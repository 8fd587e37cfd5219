#include "pipeline.h"

#include "h5-io.h"
#include "qreplay-replay.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <map>
#include <tuple>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/queuelog.h"
#include "qreplay/units.h"
}

namespace ns3
{

std::string
VariantName(qr_drop_mode mode, int64_t th_ns)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s_th_%g", mode == QR_MODE_TAGGED ? "tagged" : "plain", th_ns / 1e3);
    return buf;
}

namespace
{

#define F(T, m) offsetof(T, m)

struct DropRow
{
    uint64_t packet;
    uint32_t dir;
    int64_t time_ns;
    uint32_t sw, port, bytes;
    uint8_t reason, tagged;
};
const qr_h5_field kDropFields[] = {
    {"packet", QR_H5_U64, F(DropRow, packet), 0, "dir << 32 | seq"},
    {"dir", QR_H5_U32, F(DropRow, dir), 0, NULL},
    {"time_ns", QR_H5_I64, F(DropRow, time_ns), 0, "ns"},
    {"switch", QR_H5_U32, F(DropRow, sw), 0, NULL},
    {"port", QR_H5_U32, F(DropRow, port), 0, NULL},
    {"bytes", QR_H5_U32, F(DropRow, bytes), 0, "bytes"},
    {"reason", QR_H5_U8, F(DropRow, reason), 0, "qr_decision: 1 threshold, 2 buffer-full, 3 tagged"},
    {"tagged", QR_H5_U8, F(DropRow, tagged), 0, "1: carried a drop tag"}};
const size_t kNDrop = sizeof kDropFields / sizeof kDropFields[0];
// the runtime's truth.h5 /drops has no 'tagged' field
const size_t kNTruthDrop = kNDrop - 1;

struct HostRow
{
    uint32_t host;
    uint64_t packets, bytes;
};
const qr_h5_field kHostFields[] = {{"host", QR_H5_U32, F(HostRow, host), 0, NULL},
                                   {"packets", QR_H5_U64, F(HostRow, packets), 0, "packets"},
                                   {"bytes", QR_H5_U64, F(HostRow, bytes), 0, "bytes"}};

struct RecordRow
{
    uint32_t dir;
    uint64_t index;
    int64_t time_ns;
    double gap_ns;
};
const qr_h5_field kRecordFields[] = {
    {"dir", QR_H5_U32, F(RecordRow, dir), 0, NULL},
    {"index", QR_H5_U64, F(RecordRow, index), 0, "packet number in the direction"},
    {"time_ns", QR_H5_I64, F(RecordRow, time_ns), 0, "ns (recorded clock)"},
    {"gap_ns", QR_H5_F64, F(RecordRow, gap_ns), 0, "ns"}};

struct FlowRow
{
    uint32_t id, src, dst;
    uint16_t src_port, dst_port;
    uint64_t bytes;
    int64_t start_ns, end_ns, fct_ns;
    uint32_t incast;
    uint8_t completed;
};
const qr_h5_field kFlowFields[] = {
    {"id", QR_H5_U32, F(FlowRow, id), 0, NULL},
    {"src", QR_H5_U32, F(FlowRow, src), 0, "host"},
    {"dst", QR_H5_U32, F(FlowRow, dst), 0, "host"},
    {"src_port", QR_H5_U16, F(FlowRow, src_port), 0, NULL},
    {"dst_port", QR_H5_U16, F(FlowRow, dst_port), 0, NULL},
    {"bytes", QR_H5_U64, F(FlowRow, bytes), 0, "bytes"},
    {"start_ns", QR_H5_I64, F(FlowRow, start_ns), 0, "ns"},
    {"end_ns", QR_H5_I64, F(FlowRow, end_ns), 0, "ns (-1: not completed)"},
    {"fct_ns", QR_H5_I64, F(FlowRow, fct_ns), 0, "ns (-1: not completed)"},
    {"incast", QR_H5_U32, F(FlowRow, incast), 0, "event (0: background)"},
    {"completed", QR_H5_U8, F(FlowRow, completed), 0, NULL}};

struct QdiffRow
{
    uint64_t packet;
    uint32_t sw, port;
    int64_t time_run_ns, time_rep_ns;
    uint64_t qdiff_bytes, qdiff_sym_bytes;
};
const qr_h5_field kQdiffFields[] = {
    {"packet", QR_H5_U64, F(QdiffRow, packet), 0, "dir << 32 | seq"},
    {"switch", QR_H5_U32, F(QdiffRow, sw), 0, NULL},
    {"port", QR_H5_U32, F(QdiffRow, port), 0, NULL},
    {"time_run_ns", QR_H5_I64, F(QdiffRow, time_run_ns), 0, "ns"},
    {"time_rep_ns", QR_H5_I64, F(QdiffRow, time_rep_ns), 0, "ns"},
    {"qdiff_bytes", QR_H5_U64, F(QdiffRow, qdiff_bytes), 0, "bytes (1 MTU = 1500)"},
    {"qdiff_sym_bytes", QR_H5_U64, F(QdiffRow, qdiff_sym_bytes), 0, "bytes (1 MTU = 1500)"}};

struct QueueRow
{
    uint32_t sw, port;
    uint64_t count;
    double mean, p50, p99, max, sym_mean, sym_p99;
};
const qr_h5_field kQueueFields[] = {
    {"switch", QR_H5_U32, F(QueueRow, sw), 0, NULL},
    {"port", QR_H5_U32, F(QueueRow, port), 0, NULL},
    {"count", QR_H5_U64, F(QueueRow, count), 0, "arrivals in both runs"},
    {"mean", QR_H5_F64, F(QueueRow, mean), 0, "MTU"},
    {"p50", QR_H5_F64, F(QueueRow, p50), 0, "MTU"},
    {"p99", QR_H5_F64, F(QueueRow, p99), 0, "MTU"},
    {"max", QR_H5_F64, F(QueueRow, max), 0, "MTU"},
    {"sym_mean", QR_H5_F64, F(QueueRow, sym_mean), 0, "MTU"},
    {"sym_p99", QR_H5_F64, F(QueueRow, sym_p99), 0, "MTU"}};

struct SeriesRow
{
    int64_t time_ns;
    uint64_t queue_bytes;
};
const qr_h5_field kSeriesFields[] = {{"time_ns", QR_H5_I64, F(SeriesRow, time_ns), 0, "ns"},
                                     {"queue_bytes", QR_H5_U64, F(SeriesRow, queue_bytes), 0,
                                      "bytes queued when a packet arrived"}};
#undef F

/* An arrival log read sequentially. */
class Log
{
  public:
    explicit Log(const std::string& path) : m_path(path)
    {
        if (qr_arrival_reader_open(&m_r, path.c_str(), m_err))
            throw std::runtime_error(m_err);
        Next();
    }
    ~Log() { qr_arrival_reader_close(m_r); }
    bool Done() const { return m_done; }
    const qr_arrival& Cur() const { return m_a; }
    void Next()
    {
        int rc = qr_arrival_read(m_r, &m_a, m_err);
        if (rc == QR_END)
            m_done = true;
        else if (rc)
            throw std::runtime_error(m_err);
    }

  private:
    std::string m_path;
    qr_arrival_reader* m_r{nullptr};
    qr_arrival m_a{};
    bool m_done{false};
    char m_err[QR_ERRBUF_SIZE];
};

std::vector<std::string>
Variants(const std::string& runDir)
{
    std::vector<std::string> v;
    DIR* d = opendir((runDir + "/replay").c_str());
    if (!d)
        return v;
    while (struct dirent* e = readdir(d))
    {
        std::string n = e->d_name;
        struct stat st;
        if (n[0] != '.' && stat((runDir + "/replay/" + n + "/replay.h5").c_str(), &st) == 0)
            v.push_back(n);
    }
    closedir(d);
    // by mode, then threshold in numeric order (plain_th_2 before plain_th_10), then by name
    auto key = [](const std::string& n) {
        size_t at = n.find("_th_");
        double th = at == std::string::npos ? 1e300 : atof(n.c_str() + at + 4);
        return std::make_tuple(n.substr(0, at), th, n);
    };
    std::sort(v.begin(), v.end(), [&key](const std::string& a, const std::string& b) { return key(a) < key(b); });
    return v;
}

} // namespace

bool
RunReplayVariant(const std::string& runDir, const qr_scenario* scenario, Recording& rec,
                 const ReplaySettings& set)
{
    const qr_config* c = qr_scenario_config(scenario);
    std::string name = set.name.empty() ? VariantName(set.mode, set.th_ns) : set.name;
    std::string dir = runDir + "/replay/" + name;
    MakeDirs(dir);
    unlink((dir + "/replay.h5").c_str()); // its presence marks a complete replay
    Recording::SamplingStats st = rec.Sample(c->sampling.method, set.th_ns, true);
    QreplayReplay::Options opt;
    opt.mode = set.mode;
    opt.marginBytes = c->replay.margin_bytes;
    opt.arrivalsPath = dir + "/arrivals.qra";
    opt.cancel = set.cancel;
    if (set.progress)
        opt.progress = [&set, &name](double simMs, double wallS, uint64_t events) {
            char buf[160];
            snprintf(buf, sizeof buf, "replay %s: sim %.3f ms | %.0fk events/s", name.c_str(), simMs,
                     wallS > 0 ? events / wallS / 1e3 : 0.0);
            set.progress(buf);
        };
    QreplayReplay rp(scenario, rec, opt);
    rp.Build();
    rp.Run();
    if (rp.Cancelled())
        return false;
    rp.Commit();

    H5Out o(dir + "/replay.h5");
    o.Scenario(scenario);
    o.AttrS("/", "kind", "qreplay replay");
    o.AttrS("/", "variant", name);
    o.AttrS("/", "mode", set.mode == QR_MODE_TAGGED ? "tagged" : "plain");
    o.AttrI("/", "th_ns", set.th_ns);
    o.Attr("/", "margin_bytes", c->replay.margin_bytes);
    o.Attr("/", "events", rp.GetEvents());
    o.AttrF("/", "wall_s", rp.GetWallSeconds());
    o.AttrI("/", "sim_end_ns", rp.GetEnd().GetNanoSeconds());
    o.AttrI("/", "max_lateness_ns", rp.GetMaxLateness());
    o.Attr("/", "other_drops", rp.GetOtherDrops());
    o.Attr("/", "delivered", rp.GetDelivered());
    std::vector<DropRow> drops;
    for (const auto& d : rp.GetDrops())
        drops.push_back(DropRow{d.packet, d.dir, d.time_ns, d.sw, d.port, d.bytes, d.reason, d.tagged});
    o.Rows("/drops", kDropFields, kNDrop, drops);
    std::vector<HostRow> hosts;
    for (uint32_t h = 0; h < rec.Hosts(); h++)
        hosts.push_back(HostRow{h, rp.GetSentPackets()[h], rp.GetSentBytes()[h]});
    o.Rows("/hosts", kHostFields, 3, hosts);
    o.Group("/sampling");
    o.Attr("/sampling", "packets", st.packets);
    o.Attr("/sampling", "records", st.records);
    o.AttrF("/sampling", "compression_ratio", st.records ? double(st.packets) / st.records : 0.0);
    o.AttrI("/sampling", "max_error_ns", st.maxErrorNs);
    std::vector<RecordRow> recs;
    for (size_t i = 0; i < st.records_.size(); i++)
        recs.push_back(RecordRow{st.recordDir[i], st.records_[i].index, st.records_[i].time_ns,
                                 st.records_[i].gap_ns});
    o.Rows("/sampling/records", kRecordFields, 4, recs);
    o.Commit();
    return true;
}

std::vector<VariantSummary>
WriteResults(const std::string& runDir, std::function<void(const std::string&)> progress)
{
    std::string recDir = runDir + "/recording";
    H5In recording(recDir + "/recording.h5");
    H5In truth(recDir + "/truth/truth.h5");
    std::string scenarioText = recording.Str("/", "scenario");
    auto flows = recording.Rows<FlowRow>("/flows", kFlowFields, sizeof kFlowFields / sizeof kFlowFields[0]);
    auto runDrops = truth.Rows<DropRow>("/drops", kDropFields, kNTruthDrop);
    auto variants = Variants(runDir);
    if (variants.empty())
        throw std::runtime_error(runDir + "/replay: no complete replay (run qreplay replay)");
    std::string runLog = recDir + "/truth/arrivals.qra";

    // the busiest queue of the runtime (most arrivals), for the queue-over-time figure
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> perQueue;
    {
        Log l(runLog);
        for (; !l.Done(); l.Next())
            perQueue[{l.Cur().sw, l.Cur().port}]++;
    }
    std::pair<uint32_t, uint32_t> busiest{0, 0};
    uint64_t most = 0;
    for (const auto& [q, n] : perQueue)
        if (n > most)
        {
            most = n;
            busiest = q;
        }

    // ground truth: the runtime's packets per host
    uint64_t recordedPackets = 0;
    {
        struct HostPk
        {
            uint64_t packets;
        };
        static const qr_h5_field f[] = {{"packets", QR_H5_U64, 0, 0, NULL}};
        for (const HostPk& h : recording.Rows<HostPk>("/hosts", f, 1))
            recordedPackets += h.packets;
    }

    std::string path = runDir + "/results.h5";
    H5Out o(path);
    qr_scenario* s = nullptr;
    char err[QR_ERRBUF_SIZE];
    if (qr_scenario_create(&s) || qr_scenario_load_string(s, scenarioText.c_str(), "recording", recDir.c_str(), err))
    {
        qr_scenario_destroy(s);
        throw std::runtime_error(recDir + "/recording.h5: scenario: " + err);
    }
    try
    {
        o.Scenario(s);
    }
    catch (...)
    {
        qr_scenario_destroy(s);
        throw;
    }
    qr_scenario_destroy(s);
    o.AttrS("/", "kind", "qreplay results");
    o.AttrS("/", "scenario_name", recording.Str("/", "scenario_name"));
    o.Rows("/flows", kFlowFields, sizeof kFlowFields / sizeof kFlowFields[0], flows);
    o.Group("/runtime");
    o.Rows("/runtime/drops", kDropFields, kNTruthDrop, runDrops);
    o.Attr("/runtime", "drops", runDrops.size());
    o.Attr("/runtime", "packets", recordedPackets);
    o.Attr("/runtime", "busiest_switch", busiest.first);
    o.Attr("/runtime", "busiest_port", busiest.second);
    {
        std::vector<SeriesRow> series;
        Log l(runLog);
        for (; !l.Done(); l.Next())
            if (l.Cur().sw == busiest.first && l.Cur().port == busiest.second)
                series.push_back(SeriesRow{l.Cur().time_ns, l.Cur().queue_bytes});
        o.Rows("/runtime/busiest_queue", kSeriesFields, 2, series);
    }

    std::vector<VariantSummary> out;
    std::map<int64_t, bool> samplingWritten;
    for (const std::string& v : variants)
    {
        if (progress)
            progress("metrics: " + v);
        std::string vdir = runDir + "/replay/" + v;
        H5In rep(vdir + "/replay.h5");
        VariantSummary row;
        row.name = v;
        row.mode = rep.Str("/", "mode");
        row.th_ns = static_cast<int64_t>(rep.Num("/", "th_ns"));
        auto repDrops = rep.Rows<DropRow>("/drops", kDropFields, kNDrop);
        auto hosts = rep.Rows<HostRow>("/hosts", kHostFields, 3);
        for (const HostRow& h : hosts)
            row.replayPackets += h.packets;
        row.recordedPackets = recordedPackets;

        std::string g = "/replay/" + v;
        o.Group(g);
        // sampling of this threshold, once
        if (!samplingWritten[row.th_ns])
        {
            samplingWritten[row.th_ns] = true;
            char sg[64];
            snprintf(sg, sizeof sg, "/sampling/th_%g", row.th_ns / 1e3);
            auto recs = rep.Rows<RecordRow>("/sampling/records", kRecordFields, 4);
            o.Rows(std::string(sg) + "/records", kRecordFields, 4, recs);
            o.AttrI(sg, "th_ns", row.th_ns);
            o.Attr(sg, "packets", static_cast<uint64_t>(rep.Num("/sampling", "packets")));
            o.Attr(sg, "records", static_cast<uint64_t>(rep.Num("/sampling", "records")));
            o.AttrF(sg, "compression_ratio", rep.Num("/sampling", "compression_ratio"));
            o.AttrI(sg, "max_error_ns", static_cast<int64_t>(rep.Num("/sampling", "max_error_ns")));
        }
        o.Rows(g + "/drops", kDropFields, kNDrop, repDrops);

        // drop error
        qr_droperr* de = nullptr;
        qr_droperr_create(&de);
        for (const DropRow& d : runDrops)
            qr_droperr_add(de, QR_RUN_RUNTIME, d.packet, qr_location{d.sw, d.port});
        for (const DropRow& d : repDrops)
            qr_droperr_add(de, QR_RUN_REPLAY, d.packet, qr_location{d.sw, d.port});
        qr_droperr_result(de, &row.drops);
        qr_droperr_destroy(de);

        // qdiff: both arrival logs in time order, matched by (packet, queue)
        qr_qdiff_stream* qs = nullptr;
        qr_qdiff_stream_create(&qs);
        qr_h5_table* qt = o.Table(g + "/qdiff", kQdiffFields, sizeof kQdiffFields / sizeof kQdiffFields[0],
                                  sizeof(QdiffRow));
        std::vector<SeriesRow> series;
        {
            Log a(runLog), b(vdir + "/arrivals.qra");
            std::vector<QdiffRow> buf;
            while (!a.Done() || !b.Done())
            {
                bool fromRun = b.Done() || (!a.Done() && a.Cur().time_ns <= b.Cur().time_ns);
                Log& l = fromRun ? a : b;
                const qr_arrival& x = l.Cur();
                if (!fromRun && x.sw == busiest.first && x.port == busiest.second)
                    series.push_back(SeriesRow{x.time_ns, x.queue_bytes});
                qr_snapshot snap{x.packet, qr_location{x.sw, x.port}, x.time_ns, x.flows, x.n_flows};
                qr_qdiff_row r;
                int matched = 0;
                int rc = qr_qdiff_stream_add(qs, fromRun ? QR_RUN_RUNTIME : QR_RUN_REPLAY, &snap, &r, &matched);
                if (rc)
                {
                    qr_qdiff_stream_destroy(qs);
                    throw std::runtime_error(vdir + ": qdiff: " + qr_strerror(rc));
                }
                if (matched)
                {
                    buf.push_back(QdiffRow{r.packet, r.queue.sw, r.queue.port, r.time_run_ns,
                                           r.time_rep_ns, r.qdiff_bytes, r.qdiff_sym_bytes});
                    if (buf.size() == 4096)
                    {
                        o.Append(qt, buf.data(), buf.size());
                        buf.clear();
                    }
                }
                l.Next();
            }
            o.Append(qt, buf.data(), buf.size());
        }
        o.Close(qt);
        o.Rows(g + "/busiest_queue", kSeriesFields, 2, series);
        qr_qdiff_stream_summary(qs, &row.qdiff, &row.qdiffSym);
        qr_qdiff_stream_pending(qs, &row.runtimeOnly, &row.replayOnly);
        row.matched = row.qdiff.count;
        std::vector<QueueRow> queues;
        for (size_t i = 0; i < qr_qdiff_stream_queues(qs); i++)
        {
            qr_location q;
            qr_summary a, b;
            qr_qdiff_stream_queue(qs, i, &q, &a, &b);
            queues.push_back(QueueRow{q.sw, q.port, a.count, a.mean, a.p50, a.p99, a.max, b.mean, b.p99});
        }
        std::sort(queues.begin(), queues.end(), [](const QueueRow& x, const QueueRow& y) {
            return x.sw != y.sw ? x.sw < y.sw : x.port < y.port;
        });
        o.Rows(g + "/queues", kQueueFields, sizeof kQueueFields / sizeof kQueueFields[0], queues);
        qr_qdiff_stream_destroy(qs);

        o.AttrS(g, "mode", row.mode);
        o.AttrI(g, "th_ns", row.th_ns);
        o.Attr(g, "margin_bytes", static_cast<uint64_t>(rep.Num("/", "margin_bytes")));
        o.AttrI(g, "max_lateness_ns", static_cast<int64_t>(rep.Num("/", "max_lateness_ns")));
        o.Attr(g, "replay_packets", row.replayPackets);
        o.Attr(g, "matched_arrivals", row.matched);
        o.Attr(g, "runtime_only_arrivals", row.runtimeOnly);
        o.Attr(g, "replay_only_arrivals", row.replayOnly);
        o.AttrF(g, "qdiff_mean_mtu", row.qdiff.mean);
        o.AttrF(g, "qdiff_p50_mtu", row.qdiff.p50);
        o.AttrF(g, "qdiff_p99_mtu", row.qdiff.p99);
        o.AttrF(g, "qdiff_max_mtu", row.qdiff.max);
        o.AttrF(g, "qdiff_zero_fraction", row.qdiff.count ? double(row.qdiff.zeros) / row.qdiff.count : 0.0);
        o.AttrF(g, "qdiff_sym_mean_mtu", row.qdiffSym.mean);
        o.AttrF(g, "qdiff_sym_p50_mtu", row.qdiffSym.p50);
        o.AttrF(g, "qdiff_sym_p99_mtu", row.qdiffSym.p99);
        o.AttrF(g, "qdiff_sym_max_mtu", row.qdiffSym.max);
        o.Attr(g, "runtime_drops", row.drops.runtime_drops);
        o.Attr(g, "replay_drops", row.drops.replay_drops);
        o.Attr(g, "dropped_in_either", row.drops.either);
        o.Attr(g, "false_accepts", row.drops.false_accepts);
        o.Attr(g, "false_drops", row.drops.false_drops);
        o.Attr(g, "wrong_locations", row.drops.wrong_locations);
        o.AttrF(g, "drop_error", row.drops.error);
        out.push_back(row);
    }
    o.Commit();
    return out;
}

void
PrintSummary(FILE* f, const std::vector<VariantSummary>& rows)
{
    fprintf(f, "%-16s %9s %9s %8s %8s %8s %8s %8s %9s\n", "variant", "qdiff", "qdiff", "drops", "drops",
            "false", "false", "wrong", "drop");
    fprintf(f, "%-16s %9s %9s %8s %8s %8s %8s %8s %9s\n", "", "mean MTU", "p99 MTU", "runtime", "replay",
            "accepts", "drops", "location", "error");
    for (const VariantSummary& r : rows)
        fprintf(f, "%-16s %9.3f %9.3f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8.2f%%\n",
                r.name.c_str(), r.qdiff.mean, r.qdiff.p99, r.drops.runtime_drops, r.drops.replay_drops,
                r.drops.false_accepts, r.drops.false_drops, r.drops.wrong_locations, 100 * r.drops.error);
}

} // namespace ns3
