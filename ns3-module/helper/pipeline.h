/* qreplay ns-3 module: one replay variant of a run folder, driven through ns-3.
 *
 *   DIR/recording/             qreplay runtime's output (recording + ground truth)
 *   DIR/replay/<variant>/      one replay: arrivals.qra (every queue arrival) and replay.h5
 *
 * The results of every variant against the runtime (DIR/results.h5) are the core's
 * (qr_results_write, results.h). Throws std::runtime_error with a message naming the file. */
#ifndef QREPLAY_PIPELINE_H
#define QREPLAY_PIPELINE_H

#include <csignal>
#include <functional>
#include <string>

extern "C"
{
#include "qreplay/buffer.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
}

namespace ns3
{

struct ReplaySettings
{
    qr_drop_mode mode{QR_MODE_TAGGED};
    int64_t th_ns{5000};
    std::string name;      // "" = qr_variant_name(mode, th) (+ "_reconciled")
    bool reconcile{false}; // take clock offsets estimated from the recording out of send times
    const volatile std::sig_atomic_t* cancel{nullptr};
    std::function<void(const std::string&)> progress; // a one-line status
};

/* The variant's name: settings.name, or qr_variant_name. */
std::string VariantOf(const ReplaySettings& settings);

/* Sample `rec` at the settings' threshold and replay it on `scenario`'s network into
 * DIR/replay/<variant>/. With settings.reconcile, the hosts' clock offsets estimated from the
 * recording (qr_recording_estimate_clocks, host 0 the reference) are taken out of the send times
 * first (and put back after). Returns false if cancelled (nothing is left then). */
bool RunReplayVariant(const std::string& runDir,
                      const qr_scenario* scenario,
                      qr_recording* rec,
                      const ReplaySettings& settings);

} // namespace ns3

#endif
