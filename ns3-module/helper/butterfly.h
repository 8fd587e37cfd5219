/* qreplay ns-3 module: the butterfly effect, measured. A closed-loop replay reruns the runtime's
 * flows with the same start times and live TCP; only each host's per-packet processing delay is
 * drawn anew: normal with the runtime's mean and standard deviation sigma (truncated at 0), one
 * random stream per replay. Each replay is compared with the runtime by the core (compare.h):
 *   - short flow reproduced: qr_fct_reproduced for the schedule's qr_short_flow;
 *   - run reproduced: the same set of dropped packets (qr_drop_sets_equal);
 *   - queue difference at the bottleneck (the runtime's busiest queue, qr_queue_counter): a
 *     qr_divergence over every packet arriving there in both runs. */
#ifndef QREPLAY_NS3_BUTTERFLY_H
#define QREPLAY_NS3_BUTTERFLY_H

#include "qreplay-runtime.h"

#include <csignal>
#include <memory>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/compare.h"
#include "qreplay/schema.h"
}

namespace ns3
{

class Butterfly
{
  public:
    using ReplayResult = qr_row_butterfly_replay;
    using SeriesPoint = qr_row_butterfly_series;

    /* scenario: the runtime's (proc_jitter is the runtime's own, normally 0). */
    explicit Butterfly(const qr_scenario* scenario);
    ~Butterfly();

    /* Run the runtime once (recorded into dir if not empty). Throws std::runtime_error;
     * returns false if interrupted. */
    bool RunRuntime(const std::string& dir, const volatile std::sig_atomic_t* cancel);

    int64_t RuntimeShortFct() const { return m_shortFct; }

    uint32_t ShortFlow() const { return m_short; }

    uint64_t RuntimeDrops() const { return m_drops.size(); }

    /* The bottleneck queue. */
    uint32_t BottleneckSwitch() const { return m_bsw; }

    uint32_t BottleneckPort() const { return m_bport; }

    int64_t RuntimeEnd() const { return m_end; }

    /* One closed-loop replay at sigma with random stream `replay` (>= 1); with series, the queue
     * difference at every matched arrival is returned too. Returns false if cancelled. */
    bool Replay(int64_t sigma_ns,
                uint32_t replay,
                ReplayResult& out,
                std::vector<SeriesPoint>* series,
                const volatile std::sig_atomic_t* cancel);

  private:
    qr_scenario* Clone(int64_t sigma_ns) const;

    const qr_scenario* m_scenario;
    std::string m_text; // the scenario, printed
    std::unique_ptr<qr_arrival_index, void (*)(qr_arrival_index*)> m_arrivals;
    std::vector<qr_drop_key> m_drops; // sorted
    uint32_t m_short{0};
    uint32_t m_bsw{0}, m_bport{0};
    int64_t m_end{0};
    int64_t m_shortFct{-1};
};

} // namespace ns3

#endif
