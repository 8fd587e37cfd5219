/* qreplay ns-3 module: a recorded runtime read back for replay, with only what hosts know: each
 * host's send pcap, the flows (recording.h5 /flows) and the drops receivers detected
 * (/drops_detected). The scenario comes from recording.h5 (or is given, and must then describe the
 * same network and flows). Every packet is named as in the runtime: its direction from the
 * 5-tuple, its sequence number from its position in the direction (checked against the IP ID).
 *
 * Sampling: the send times of every direction are sampled with the core's sampler at a threshold
 * and inferred back (th = 0: exact), giving each host's packets in the order of their inferred
 * times: what a replay injects. */
#ifndef QREPLAY_RECORDING_H
#define QREPLAY_RECORDING_H

#include "model/flow-table.h"

#include <memory>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

extern "C" {
#include "qreplay/sampler.h"
#include "qreplay/scenario.h"
#include "qreplay/trace.h"
}

namespace ns3
{

class Recording
{
  public:
    struct Packet
    {
        qr_packet pk;      // as recorded (time = recorded send time)
        uint32_t dir;
        uint32_t seq;
        int64_t time_ns;   // the time to inject at (inferred; = recorded for th = 0)
        uint8_t dropTag;   // a receiver saw this packet lost
    };

    struct SamplingStats
    {
        uint64_t packets{0}, records{0};
        int64_t maxErrorNs{0};
        std::vector<qr_sample_record> records_; // all records, direction by direction
        std::vector<uint32_t> recordDir;        // the direction of each record
    };

    /* Read DIR (written by qreplay runtime). scenario: NULL to use the recording's own, or one to
     * check against it (same topology, links, flows). Throws std::runtime_error naming the file
     * and the problem (missing or truncated pcap, IP IDs out of sequence, mismatched scenario). */
    Recording(const std::string& dir, const qr_scenario* scenario);
    ~Recording();
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;

    /* The scenario the recording was made with (owned), and the one to replay with. */
    const qr_scenario* GetRecordedScenario() const { return m_recorded; }
    const FlowTable& GetFlows() const { return *m_table; }
    uint32_t Hosts() const { return static_cast<uint32_t>(m_hosts.size()); }
    /* Host h's packets, in recorded order. */
    const std::vector<Packet>& HostPackets(uint32_t h) const { return m_hosts[h]; }
    const std::set<uint64_t>& DetectedDrops() const { return m_detected; }
    /* When each packet reached its destination host in the runtime (packet id -> ns; empty for a
     * recording without /received), and host h's clock offset. */
    const std::unordered_map<uint64_t, int64_t>& Received() const { return m_received; }
    int64_t ClockOffset(uint32_t h) const { return m_offsets[h]; }

    /* Set every packet's injection time from sampling at th_ns with `method`; re-sort each host's
     * packets by it (ties keep the recorded order). Returns the sampling statistics. */
    SamplingStats Sample(qr_sampling_method method, int64_t th_ns, bool keepRecords);
    /* Host h's packets in injection order (after Sample; recorded order before). */
    const std::vector<uint32_t>& InjectionOrder(uint32_t h) const { return m_order[h]; }

  private:
    std::string m_dir;
    qr_scenario* m_recorded{nullptr};
    std::unique_ptr<FlowTable> m_table;
    std::vector<std::vector<Packet>> m_hosts;
    std::vector<std::vector<uint32_t>> m_order;
    std::set<uint64_t> m_detected;
    std::unordered_map<uint64_t, int64_t> m_received;
    std::vector<int64_t> m_offsets;
};

} // namespace ns3

#endif
