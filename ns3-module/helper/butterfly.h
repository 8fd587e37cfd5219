/* qreplay ns-3 module: the butterfly effect, measured. A closed-loop replay reruns the runtime's
 * flows with the same start times and live TCP; only each host's per-packet processing delay is
 * drawn anew: normal with the runtime's mean and standard deviation sigma (truncated at 0), one
 * random stream per replay. Each replay is compared with the runtime:
 *   - short flow reproduced: its completion time within 1% of the runtime's (the short flow is
 *     the flow with the fewest bytes, the latest one on ties);
 *   - run reproduced: the same set of dropped packets (packet id, switch, port);
 *   - queue difference: for every packet arriving at the bottleneck (the queue with the most
 *     arrivals in the runtime) in both runs, |queue bytes in the replay - queue bytes in the
 *     runtime| at that arrival, over time: when it first differs, and the share of later arrivals
 *     at which it is 0 again. */
#ifndef QREPLAY_BUTTERFLY_H
#define QREPLAY_BUTTERFLY_H

#include "qreplay-runtime.h"

#include <csignal>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

class Butterfly
{
  public:
    struct ReplayResult
    {
        int64_t sigma_ns;
        uint32_t replay;
        int64_t short_fct_ns; // -1 if the short flow did not complete
        uint8_t short_reproduced, run_reproduced;
        uint64_t drops;
        uint64_t matched;              // arrivals present in both runs
        int64_t first_divergence_ns;   // -1 if the queue never differed
        double zero_after_divergence;  // share of matched arrivals after it with difference 0
        uint64_t max_diff_bytes;
        double wall_s;
    };

    struct SeriesPoint
    {
        int64_t time_ns;
        uint64_t diff_bytes;
    };

    /* scenario: the runtime's (proc_jitter is the runtime's own, normally 0). */
    explicit Butterfly(const qr_scenario* scenario);
    ~Butterfly();

    /* Run the runtime once (recorded into dir if not empty). Throws std::runtime_error. */
    void RunRuntime(const std::string& dir, const volatile std::sig_atomic_t* cancel);
    int64_t RuntimeShortFct() const { return m_shortFct; }
    uint32_t ShortFlow() const { return m_short; }
    uint64_t RuntimeDrops() const { return m_drops.size(); }
    uint64_t RuntimeArrivals() const { return m_arrivals.size(); }
    /* The bottleneck queue: switch << 16 | port. */
    uint32_t Bottleneck() const { return m_bottleneck; }
    int64_t RuntimeEnd() const { return m_end; }

    /* One closed-loop replay at sigma with random stream `replay` (>= 1); with series, the queue
     * difference at every matched arrival is returned too. Returns false if cancelled. */
    bool Replay(int64_t sigma_ns, uint32_t replay, ReplayResult& out, std::vector<SeriesPoint>* series,
                const volatile std::sig_atomic_t* cancel);

  private:
    struct Key
    {
        uint64_t packet;
        uint32_t queue; // sw << 16 | port
        bool operator==(const Key& o) const { return packet == o.packet && queue == o.queue; }
    };
    struct KeyHash
    {
        size_t operator()(const Key& k) const
        {
            return std::hash<uint64_t>()(k.packet * 0x9e3779b97f4a7c15ULL ^ k.queue);
        }
    };

    qr_scenario* Clone(int64_t sigma_ns) const;

    const qr_scenario* m_scenario;
    std::string m_text; // the scenario, printed
    std::unordered_map<Key, uint64_t, KeyHash> m_arrivals; // runtime queue bytes at each arrival
    std::vector<Key> m_drops;                               // sorted
    uint32_t m_short{0};
    uint32_t m_bottleneck{0};
    int64_t m_end{0};
    int64_t m_shortFct{-1};
};

/* Parse "0,1ns,10ns" into ns values (each >= 0, at most 16, no repeats). Returns an empty string
 * or the error. */
std::string ParseSigmas(const char* text, std::vector<int64_t>& out);

} // namespace ns3

#endif
