/* qreplay ns-3 module: the ns-3 replay as one of the core's replay engines (qreplay/replay.h).
 *
 *   DIR/recording/             qreplay runtime's output (recording + ground truth)
 *   DIR/replay/<variant>/      one replay: arrivals.qra (every queue arrival) and replay.h5
 *
 * A variant (sampling, clocks, the files) is the core's qr_replay_variant; this engine or the
 * core's own (qr_replay_native) runs the replay itself. */
#ifndef QREPLAY_NS3_PIPELINE_H
#define QREPLAY_NS3_PIPELINE_H

extern "C"
{
#include "qreplay/replay.h"
}

namespace ns3
{

/* The ns-3 replay (QreplayReplay) with the core's engine signature: ctx unused; errors (an
 * exception of the simulation) come back as QR_EIO with the message in errbuf. */
int Ns3ReplayEngine(void* ctx,
                    const qr_scenario* s,
                    const qr_recording* rec,
                    qr_source* src,
                    const qr_replay_opts* opts,
                    qr_replay_out* out,
                    char* errbuf);

/* The engine called `name` ("native" or "ns3"), or nullptr. */
qr_replay_engine ReplayEngineByName(const char* name);

} // namespace ns3

#endif
