/* qreplay ns-3 module: the study's pipeline over a run folder.
 *
 *   DIR/recording/             qreplay runtime's output (recording + ground truth)
 *   DIR/replay/<variant>/      one replay: arrivals.qra (every queue arrival) and replay.h5
 *                              (drops, packets sent per host, the sampling of the send times)
 *   DIR/results.h5             the fidelity of every replay against the runtime (DESIGN.md 5)
 *
 * A variant is a replay mode at a sampling threshold, named "<mode>_th_<th in us>" (tagged_th_5),
 * or any name given. Every function throws std::runtime_error with a message naming the file. */
#ifndef QREPLAY_PIPELINE_H
#define QREPLAY_PIPELINE_H

#include "recording.h"

#include <csignal>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "qreplay/buffer.h"
#include "qreplay/metrics.h"
#include "qreplay/scenario.h"
}

namespace ns3
{

/* "tagged_th_5", "plain_th_0", "tagged_th_2.5". */
std::string VariantName(qr_drop_mode mode, int64_t th_ns);

struct ReplaySettings
{
    qr_drop_mode mode{QR_MODE_TAGGED};
    int64_t th_ns{5000};
    std::string name; // "" = VariantName(mode, th)
    bool quiet{false};
    const volatile std::sig_atomic_t* cancel{nullptr};
    std::function<void(const std::string&)> progress; // a one-line status
};

/* Replay `rec` on `scenario`'s network into DIR/replay/<variant>/. Returns false if cancelled
 * (nothing is left then). */
bool RunReplayVariant(const std::string& runDir, const qr_scenario* scenario, Recording& rec,
                      const ReplaySettings& settings);

/* One row of the summary table. */
struct VariantSummary
{
    std::string name;
    std::string mode;
    int64_t th_ns{0};
    qr_summary qdiff{}, qdiffSym{}; // in MTU
    uint64_t matched{0}, runtimeOnly{0}, replayOnly{0};
    qr_drop_counts drops{};
    uint64_t replayPackets{0}, recordedPackets{0};
};

/* Compare every replay under DIR/replay/ with the runtime and write DIR/results.h5 (temporary
 * name until complete). Returns the rows, variants in name order. */
std::vector<VariantSummary> WriteResults(const std::string& runDir,
                                         std::function<void(const std::string&)> progress);

/* The summary table (rows: variants; qdiff mean/p99 in MTU, drops, drop error parts). */
void PrintSummary(FILE* out, const std::vector<VariantSummary>& rows);

} // namespace ns3

#endif
