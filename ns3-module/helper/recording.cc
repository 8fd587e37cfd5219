#include "recording.h"

#include <algorithm>
#include <unordered_map>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern "C" {
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/topology.h"
}

namespace ns3
{

namespace
{

struct FlowRow
{
    uint32_t id, src, dst;
    uint16_t src_port;
    uint64_t bytes;
    int64_t start_ns;
    uint32_t incast;
};

struct HostRow
{
    uint32_t host;
    uint64_t packets;
    int64_t offset;
    char pcap[32];
};

struct ReceivedRow
{
    uint32_t dir, seq;
    int64_t time_ns;
};

struct DetectedRow
{
    uint64_t packet;
};

template <typename T>
std::vector<T>
ReadTable(qr_h5_reader* r, const char* name, const qr_h5_field* fields, size_t n)
{
    char err[QR_ERRBUF_SIZE];
    void* rows = nullptr;
    size_t count = 0;
    if (qr_h5_read_table(r, name, fields, n, sizeof(T), &rows, &count, err))
        throw std::runtime_error(err);
    std::vector<T> v(static_cast<T*>(rows), static_cast<T*>(rows) + count);
    free(rows);
    return v;
}

std::string
Get(const qr_scenario* s, const char* section, const char* key)
{
    const char* v = "";
    qr_scenario_get(s, section, key, &v);
    return v;
}

} // namespace

Recording::Recording(const std::string& dir, const qr_scenario* scenario)
    : m_dir(dir)
{
    char err[QR_ERRBUF_SIZE];
    std::string h5 = dir + "/recording.h5";
    qr_h5_reader* r = nullptr;
    if (qr_h5_open(&r, h5.c_str(), err))
        throw std::runtime_error(std::string(err) + " (not a complete recording: run qreplay runtime)");
    try
    {
        char* text = nullptr;
        if (qr_h5_read_attr_str(r, "/", "scenario", &text, err))
            throw std::runtime_error(err);
        int rc = qr_scenario_create(&m_recorded);
        if (!rc)
            rc = qr_scenario_load_string(m_recorded, text, h5.c_str(), dir.c_str(), err);
        free(text);
        if (rc)
            throw std::runtime_error(h5 + ": its scenario does not load: " + err);
        if (scenario)
        {
            for (const char* key : {"kind", "k", "hosts"})
            {
                std::string a = Get(m_recorded, "topology", key), b = Get(scenario, "topology", key);
                bool relevant = !strcmp(key, "kind") ||
                                (!strcmp(key, "k") && Get(scenario, "topology", "kind") == "fattree") ||
                                (!strcmp(key, "hosts") && Get(scenario, "topology", "kind") == "star");
                if (relevant && a != b)
                    throw std::runtime_error("the scenario does not match the recording in " + dir +
                                             ": [topology] " + key + " = " + b + ", recorded " + a);
            }
        }
        const qr_config* c = qr_scenario_config(scenario ? scenario : m_recorded);
        qr_topology* topo = nullptr;
        if (c->topology.kind == QR_TOPO_FATTREE ? qr_topology_fattree(&topo, c->topology.k)
                                                : qr_topology_star(&topo, c->topology.hosts))
            throw std::runtime_error("bad topology");
        uint32_t hosts = qr_topology_hosts(topo);
        std::vector<uint32_t> addrs(hosts);
        for (uint32_t h = 0; h < hosts; h++)
            addrs[h] = qr_topology_host_addr(topo, h);
        qr_topology_destroy(topo);

        static const qr_h5_field flowFields[] = {
            {"id", QR_H5_U32, offsetof(FlowRow, id), 0, nullptr},
            {"src", QR_H5_U32, offsetof(FlowRow, src), 0, nullptr},
            {"dst", QR_H5_U32, offsetof(FlowRow, dst), 0, nullptr},
            {"src_port", QR_H5_U16, offsetof(FlowRow, src_port), 0, nullptr},
            {"bytes", QR_H5_U64, offsetof(FlowRow, bytes), 0, nullptr},
            {"start_ns", QR_H5_I64, offsetof(FlowRow, start_ns), 0, nullptr},
            {"incast", QR_H5_U32, offsetof(FlowRow, incast), 0, nullptr}};
        static const qr_h5_field hostFields[] = {
            {"host", QR_H5_U32, offsetof(HostRow, host), 0, nullptr},
            {"packets", QR_H5_U64, offsetof(HostRow, packets), 0, nullptr},
            {"clock_offset_ns", QR_H5_I64, offsetof(HostRow, offset), 0, nullptr},
            {"pcap", QR_H5_STR, offsetof(HostRow, pcap), 32, nullptr}};
        static const qr_h5_field recvFields[] = {
            {"dir", QR_H5_U32, offsetof(ReceivedRow, dir), 0, nullptr},
            {"seq", QR_H5_U32, offsetof(ReceivedRow, seq), 0, nullptr},
            {"time_ns", QR_H5_I64, offsetof(ReceivedRow, time_ns), 0, nullptr}};
        static const qr_h5_field detFields[] = {
            {"packet", QR_H5_U64, offsetof(DetectedRow, packet), 0, nullptr}};
        auto flows = ReadTable<FlowRow>(r, "/flows", flowFields, 7);
        auto hostRows = ReadTable<HostRow>(r, "/hosts", hostFields, 4);
        auto det = ReadTable<DetectedRow>(r, "/drops_detected", detFields, 1);
        void* rrows = nullptr;
        size_t nr = 0;
        if (qr_h5_read_table(r, "/received", recvFields, 3, sizeof(ReceivedRow), &rrows, &nr, err) == QR_OK)
        {
            const ReceivedRow* rr = static_cast<const ReceivedRow*>(rrows);
            m_received.reserve(nr);
            for (size_t i = 0; i < nr; i++)
                m_received[static_cast<uint64_t>(rr[i].dir) << 32 | rr[i].seq] = rr[i].time_ns;
            free(rrows);
        }
        for (const HostRow& h : hostRows)
            m_offsets.push_back(h.offset);
        qr_h5_close(r);
        r = nullptr;
        if (hostRows.size() != hosts)
            throw std::runtime_error("the scenario does not match the recording in " + dir + ": " +
                                     std::to_string(hosts) + " hosts, recorded " +
                                     std::to_string(hostRows.size()));
        std::vector<qr_flow> fl;
        for (const FlowRow& f : flows)
            fl.push_back(qr_flow{f.id, f.src, f.dst, f.bytes, f.start_ns, f.incast});
        try
        {
            m_table = std::make_unique<FlowTable>(fl, addrs);
        }
        catch (const std::invalid_argument& e)
        {
            throw std::runtime_error(h5 + ": /flows: " + e.what());
        }
        for (size_t f = 0; f < flows.size(); f++)
            if (m_table->SenderPort(static_cast<uint32_t>(f)) != flows[f].src_port)
                throw std::runtime_error(h5 + ": /flows: flow " + std::to_string(f) +
                                         " has port " + std::to_string(flows[f].src_port) +
                                         ", not the runtime's numbering");
        for (const DetectedRow& d : det)
            m_detected.insert(d.packet);

        // every host's pcap: all packets, IP IDs consecutive per direction
        m_hosts.resize(hosts);
        m_order.resize(hosts);
        std::vector<uint32_t> next(m_table->Directions(), 0);
        for (uint32_t h = 0; h < hosts; h++)
        {
            std::string path = dir + "/" + hostRows[h].pcap;
            qr_trace_reader* tr;
            if (qr_trace_reader_open(&tr, path.c_str(), err))
                throw std::runtime_error(err);
            qr_packet pk;
            int rc2;
            while ((rc2 = qr_trace_read(tr, &pk, err)) == QR_OK)
            {
                uint32_t d;
                qr_five_tuple ft{pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
                uint64_t n = qr_trace_reader_count(tr);
                if (!m_table->Resolve(ft, d) || m_table->DirSrc(d) != h)
                {
                    qr_trace_reader_close(tr);
                    throw std::runtime_error(path + ": packet " + std::to_string(n) +
                                             ": belongs to no flow of host " + std::to_string(h));
                }
                if (pk.ip_id != static_cast<uint16_t>(next[d]))
                {
                    qr_trace_reader_close(tr);
                    throw std::runtime_error(path + ": packet " + std::to_string(n) + ": IP ID " +
                                             std::to_string(pk.ip_id) + ", expected " +
                                             std::to_string(static_cast<uint16_t>(next[d])) +
                                             " (IDs must be consecutive per flow direction)");
                }
                uint32_t seq = next[d]++;
                uint64_t id = static_cast<uint64_t>(d) << 32 | seq;
                m_hosts[h].push_back(Packet{pk, d, seq, pk.time_ns,
                                            static_cast<uint8_t>(m_detected.count(id) ? 1 : 0)});
            }
            qr_trace_reader_close(tr);
            if (rc2 != QR_END)
                throw std::runtime_error(err);
            if (m_hosts[h].size() != hostRows[h].packets)
                throw std::runtime_error(path + ": " + std::to_string(m_hosts[h].size()) +
                                         " packets, the recording says " +
                                         std::to_string(hostRows[h].packets) + " (truncated?)");
            m_order[h].resize(m_hosts[h].size());
            for (uint32_t i = 0; i < m_order[h].size(); i++)
                m_order[h][i] = i;
        }
    }
    catch (...)
    {
        qr_h5_close(r); // a constructor that throws runs no destructor
        qr_scenario_destroy(m_recorded);
        m_recorded = nullptr;
        throw;
    }
}

Recording::~Recording()
{
    qr_scenario_destroy(m_recorded);
}

Recording::SamplingStats
Recording::Sample(qr_sampling_method method, int64_t th_ns, bool keepRecords)
{
    SamplingStats st;
    qr_sampler_cfg cfg{method, th_ns};
    qr_sampler* s = nullptr;
    if (qr_sampler_create(&s, &cfg))
        throw std::runtime_error("sampling: bad threshold");
    std::vector<qr_sample_record> recs;
    for (uint32_t h = 0; h < m_hosts.size(); h++)
    {
        // the host's directions, each in send order
        std::vector<std::vector<uint32_t>> byDir;
        std::vector<uint32_t> dirs;
        std::unordered_map<uint32_t, uint32_t> slot;
        for (uint32_t i = 0; i < m_hosts[h].size(); i++)
        {
            auto it = slot.find(m_hosts[h][i].dir);
            if (it == slot.end())
            {
                it = slot.emplace(m_hosts[h][i].dir, static_cast<uint32_t>(byDir.size())).first;
                byDir.emplace_back();
                dirs.push_back(m_hosts[h][i].dir);
            }
            byDir[it->second].push_back(i);
        }
        for (size_t k = 0; k < byDir.size(); k++)
        {
            qr_sampler_reset(s);
            recs.clear();
            qr_sample_record rec;
            int emitted;
            char err[QR_ERRBUF_SIZE];
            for (uint32_t i : byDir[k])
            {
                if (qr_sampler_push(s, m_hosts[h][i].pk.time_ns, &rec, &emitted, err))
                    throw std::runtime_error(std::string("sampling: ") + err);
                if (emitted)
                    recs.push_back(rec);
            }
            qr_sampler_finish(s, &rec, &emitted);
            if (emitted)
                recs.push_back(rec);
            size_t pos = 0;
            for (size_t j = 0; j < byDir[k].size(); j++)
            {
                Packet& p = m_hosts[h][byDir[k][j]];
                int64_t t;
                qr_sample_infer_next(recs.data(), recs.size(), &pos, j, &t);
                p.time_ns = t;
                st.maxErrorNs = std::max<int64_t>(st.maxErrorNs, std::llabs(t - p.pk.time_ns));
            }
            st.packets += byDir[k].size();
            st.records += recs.size();
            if (keepRecords)
            {
                st.records_.insert(st.records_.end(), recs.begin(), recs.end());
                st.recordDir.insert(st.recordDir.end(), recs.size(), dirs[k]);
            }
        }
        std::vector<uint32_t>& order = m_order[h];
        for (uint32_t i = 0; i < order.size(); i++)
            order[i] = i; // ties keep the recorded order
        const std::vector<Packet>& pk = m_hosts[h];
        std::stable_sort(order.begin(), order.end(),
                         [&pk](uint32_t a, uint32_t b) { return pk[a].time_ns < pk[b].time_ns; });
    }
    qr_sampler_destroy(s);
    return st;
}

} // namespace ns3
