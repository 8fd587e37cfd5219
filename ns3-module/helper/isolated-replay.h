/* qreplay ns-3 module: isolated per-connection replay, the remedy for the butterfly effect.
 *
 * One TCP connection of a recorded runtime is replayed alone, with live TCP, on two hosts joined
 * by one switch whose ports are packet correctors (CorrectorQueueDisc). The corrector applies what
 * the runtime recorded for the connection, per packet (by direction and number): whether it was
 * lost, and when it reached the other host. So each end sees exactly the inputs it saw in the
 * runtime, and sends exactly what it sent, whatever the rest of the network did and whatever its
 * own processing jitter. What must be recorded per packet: a lost flag and the arrival time at the
 * receiver (one 8-byte time per packet, or a few bytes as deltas), against the full pcap's 16-byte
 * record header plus 52 to 92 bytes of headers per packet; the hosts' clocks must be synchronized
 * (or their offset known) for arrival times and send times to be compared.
 *
 * A replay is compared with the runtime packet by packet, for both directions, by the core's
 * qr_compare_sequences: TCP flags, sequence and acknowledgment numbers, window and IP length (TCP
 * options are not compared: the timestamp option carries the sender's clock in ms). */
#ifndef QREPLAY_NS3_ISOLATED_REPLAY_H
#define QREPLAY_NS3_ISOLATED_REPLAY_H

#include "model/corrector-queue-disc.h"

#include <cstdint>
#include <vector>

extern "C"
{
#include "qreplay/compare.h"
#include "qreplay/light.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/tcptrace.h"
}

namespace ns3
{

class IsolatedReplay
{
  public:
    using Result = qr_row_isolated;

    /* scenario: the recording's (links, TCP, processing delay). rec must have /received.
     * offsets: each host's clock offset to take out of its times (qr_isolated_conn_of; nullptr:
     * none), borrowed. */
    IsolatedReplay(const qr_scenario* scenario, const qr_recording* rec, const int64_t* offsets);

    /* Replay flow f with processing-delay jitter sigma (random stream `stream`). Throws
     * std::runtime_error. With trace, also trace the connection's TCP execution (the sender
     * socket's trace sources, the receiver's interface) into a new *trace (caller frees it with
     * qr_tcp_trace_destroy), finished against the recording; receiver ACKs held delack_ns or more
     * count as delayed. */
    Result Run(uint32_t flow,
               int64_t sigma_ns,
               uint32_t stream,
               qr_tcp_trace** trace = nullptr,
               int64_t delack_ns = 0);

    /* From a light record (light.h): its scenario, each connection's fates. Run also needs
     * regenerated: the record's packets regenerated (qr_recording_from_light), against which a
     * replay with jitter is compared. */
    explicit IsolatedReplay(const qr_light* light, const qr_recording* regenerated = nullptr);

    /* Run delivers every packet the recording received at once, in order (QR_ARRIVE_AT_ONCE),
     * not at its receive time: whether the connection regenerates without its receive times. */
    void SetArriveAtOnce(bool atOnce) { m_atOnce = atOnce; }

    /* With SetArriveAtOnce: the gates that hold packets of the replayed connection
     * (qr_light_gate: local directions; qr_isolated_next_gate finds them). */
    void SetGates(const std::vector<qr_light_gate>& gates) { m_gates = gates; }

    /* What the last Run sent, per local direction, in send order. */
    const std::vector<qr_tcp_sent>& LastSent(uint32_t d) const { return m_lastSent[d]; }

    /* What regenerating a connection met at its correctors: packets sent after their recorded
     * arrival (and the worst by how much), packets the record does not have, packets the record
     * says arrived marked CE that were not ECN-capable. */
    struct Regenerated
    {
        uint64_t late;
        int64_t max_late_ns;
        uint64_t unknown, unmarkable;
    };

    /* Replay flow's connection alone from the light record (no jitter), its packets into out[0]
     * (data) and out[1] (ACKs) in send order, pk.time_ns when the replay sent them. */
    Regenerated Regenerate(uint32_t flow, std::vector<qr_packet> out[2]);

  private:
    void Simulate(const qr_flow& fl,
                  int64_t lastNs,
                  int64_t sigma_ns,
                  uint32_t stream,
                  const CorrectorQueueDisc::Fate& fate,
                  void* ctx, // the .cc's per-replay state

                  uint64_t corr[4]);

    const qr_scenario* m_scenario;
    const qr_recording* m_rec{nullptr};
    const int64_t* m_offsets{nullptr};
    const qr_light* m_light{nullptr};
    bool m_atOnce{false};
    std::vector<qr_light_gate> m_gates;
    std::vector<qr_tcp_sent> m_lastSent[2];
};

} // namespace ns3

#endif
