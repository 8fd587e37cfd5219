/* qreplay ns-3 module: the recorded closed-loop runtime.
 *
 * Builds the scenario's network (FatTree or star, shared-buffer switches, host NIC queues that
 * number packets per flow direction), runs its TCP flows (the core's schedule), and records:
 *
 *   DIR/pcap/hNNNN.pcap     what each host sent: IPv4 + TCP headers, time = first bit on the wire
 *                           as the host's (offset) clock saw it, nanoseconds
 *   DIR/recording.h5        what hosts know: /flows (ports, start, completion), /hosts (pcap name,
 *                           packets, bytes), /drops_detected (gaps in the IP IDs a receiver saw,
 *                           plus the tail a sender's count shows), /received (when each packet
 *                           reached its destination host: what isolated per-connection replay
 * needs) DIR/truth/truth.h5      ground truth, for scoring only: /drops (switch, port, time,
 * reason), /directions (packets and bytes sent, delivered, dropped), /clock DIR/truth/arrivals.qra
 * every switch-queue arrival with the queue's bytes per flow (queuelog.h)
 *
 * Every file is written under a temporary name and renamed by Commit(); recording.h5, renamed last,
 * marks a complete recording (it is removed when a new run into DIR starts). The run lasts until
 * every flow has completed and closed and the network is empty, or until [traffic] stop. */
#ifndef QREPLAY_NS3_RUNTIME_H
#define QREPLAY_NS3_RUNTIME_H

#include "fat-tree-helper.h"
#include "model/flow-apps.h"
#include "model/flow-table.h"

#include "ns3/ipv4-l3-protocol.h"
#include "ns3/nstime.h"

#include <csignal>
#include <functional>
#include <memory>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/clock.h"
#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/pingmesh.h"
#include "qreplay/queuelog.h"
#include "qreplay/recorder.h"
#include "qreplay/recording.h"
#include "qreplay/results.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"
#include "qreplay/traceroute.h"
}

namespace ns3
{

class QreplayRuntime
{
  public:
    struct Progress
    {
        Time now, stop;
        double wallSeconds;
        uint64_t events;
        uint64_t flowsDone, flows;
        uint64_t packets; // sent by hosts so far
    };

    struct Options
    {
        std::string outDir; // where the recording goes ("" records nothing to disk)
        std::string scenarioName{"scenario"}; // shown in figures (the scenario file's name)
        bool arrivals{true};                  // write DIR/truth/arrivals.qra
        std::vector<qr_flow>* flows{nullptr}; // instead of the scenario's schedule (tests)
        std::function<void(const Progress&)> progress; // called about every progressSeconds
        double progressSeconds{0.5};
        const volatile std::sig_atomic_t* cancel{nullptr}; // nonzero: stop as soon as possible
        uint64_t jitterStream{0}; // processing-delay random stream (distinct closed-loop replays)
        std::function<void(const qr_arrival&)> arrivalHook; // every switch-queue arrival
    };

    /* Per flow direction: what its sender put on the wire, what arrived, what switches dropped
     * (the recorder's books, recorder.h). */
    using DirStats = qr_row_direction;

    /* Drops, detected drops and arrivals are the core's rows (schema.h). */
    using Drop = qr_row_drop;
    using Detected = qr_row_detected;
    using Received = qr_row_received;

    using FlowRecord = qr_recorder_flow; // last byte received (-1 if never), closed, failed

    /* The scenario (borrowed, validated). Throws std::runtime_error with a message naming the
     * file or key on bad input. */
    QreplayRuntime(const qr_scenario* scenario, Options options);
    ~QreplayRuntime(); // removes uncommitted output and destroys the simulation
    QreplayRuntime(const QreplayRuntime&) = delete;
    QreplayRuntime& operator=(const QreplayRuntime&) = delete;

    /* Build the network and the applications, open the recording. Throws std::runtime_error. */
    void Build();
    /* Simulate. Throws std::runtime_error if recording failed. */
    void Run();
    /* Write the HDF5 files and give every file its final name. Throws std::runtime_error. */
    void Commit();

    const FlowTable& GetFlows() const { return *m_table; }

    const FatTreeHelper& GetNetwork() const { return *m_net; }

    std::vector<DirStats> GetDirStats() const;

    std::vector<Drop> GetDrops() const;

    std::vector<Detected> GetDetected() const;

    std::vector<FlowRecord> GetFlowRecords() const;

    std::vector<Received> GetReceived() const;

    const std::vector<int64_t>& GetClockOffsets() const { return m_offsets; }

    uint64_t GetEvents() const { return m_events; }

    double GetWallSeconds() const { return m_wall; }

    Time GetEnd() const { return m_end; }

    /* QR_END_COMPLETED (all flows done, network empty), QR_END_STOP ([traffic] stop reached),
     * QR_END_CANCELLED. */
    qr_end_reason GetEndReason() const { return m_endReason; }

    uint64_t GetFlowsCompleted() const;

    /* Packets that left a switch other than by the shared-buffer rule (no route, device drop),
     * dropped in a host's NIC queue, not belonging to any flow: all 0 in a sound run. */
    uint64_t GetOtherDrops() const;

    uint64_t GetHostQueueDrops() const;

    /* The planted faults of [faults] (NULL: none), with what they did so far. */
    const qr_faults* GetFaults() const { return m_faults; }

    /* The link faults of [faults] gray, blackhole, delay, rate (NULL: none). */
    const qr_link_faults* GetLinkFaults() const { return m_linkFaults; }

    /* The planted routing loops, and the packets each switch sent the wrong way. */
    const std::vector<qr_loop_rule>& GetLoops() const { return m_loops; }

    uint64_t GetLooped(uint32_t sw) const { return m_net->GetSwitch(sw)->GetLooped(); }

    uint64_t GetUnknownPackets() const;

    /* The Pingmesh agents' log ([pingmesh] interval; NULL: no probing), and the probe packets
     * (requests and answers) hosts sent. */
    const qr_pingmesh* GetPingmesh() const { return m_pingmesh; }

    uint64_t GetProbePackets() const { return m_probePackets; }

    const qr_tracer* GetTracer() const { return m_tracer; }

    uint64_t GetTracePackets() const { return m_tracePackets; }

    uint64_t GetInFlight() const;

    /* Set ns-3's TCP defaults from the scenario's [tcp] keys (variant, MSS 1448 with timestamps,
     * windows, timers, ECN); sockets created afterwards use them. */
    static void ConfigureTcp(const qr_config* c);

    /* The longest time a packet can spend between leaving a host and arriving (or being dropped):
     * the core's qr_max_transit_ns for this network. */
    Time GetMaxTransit() const;

    /* Per direction, packets sent before the stop time minus GetMaxTransit() (empty if the run
     * completed before): in a run ended by [traffic] stop, only these can be known lost. */
    std::vector<uint64_t> GetSentAtCutoff() const;

    /* The pcap of host h, relative to the output folder. */
    static std::string PcapName(uint32_t host);

  private:
    void BuildNetwork(const std::vector<qr_flow>& flows);
    void InstallApps();
    void InstallAgents();
    void InstallRecorder();
    static void HostTx(QreplayRuntime* rt, uint32_t host, Ptr<const Packet> p);
    static void HostRx(QreplayRuntime* rt, uint32_t host, Ptr<const Packet> p);
    void SendTrace(uint32_t host, qr_five_tuple ft, uint32_t seq, uint32_t trace, uint32_t n);
    bool TraceAnswer(uint32_t host, Ptr<const Packet> p);
    void OnArrival(const qr_arrival& a);
    void OnHostQueueDrop(Ptr<const QueueDiscItem> item, const char* reason);
    void OnDeviceDrop(Ptr<const Packet> p);
    void OnComplete(uint32_t flow, Time t);
    void OnClosed(uint32_t flow);
    void OnError(uint32_t flow);
    void MaybeFinish();
    void Tick();
    void SnapshotSent();
    void BounceRound(uint32_t round);
    void BounceDone();
    void Fail(const std::string& what);

    const qr_scenario* m_scenario;
    const qr_config* m_cfg;
    Options m_opt;
    std::unique_ptr<FlowTable> m_table;
    std::unique_ptr<FatTreeHelper> m_net;
    std::vector<int64_t> m_offsets;
    qr_recorder* m_rec{nullptr};           // the books and the files (recorder.h)
    qr_faults* m_faults{nullptr};          // [faults] drop rules; NULL: none
    qr_link_faults* m_linkFaults{nullptr}; // [faults] link faults; NULL: none
    std::vector<qr_loop_rule> m_loops;     // [faults] loop, resolved
    qr_pingmesh* m_pingmesh{nullptr};      // [pingmesh] agents; NULL: no probing
    uint64_t m_probePackets{0};
    qr_tracer* m_tracer{nullptr};         // [traceroute] agents; NULL: no path discovery
    std::vector<qr_icmp_limiter*> m_icmp; // per switch, when tracing
    qr_bounce_pin* m_pins{nullptr};       // [everflow] guided: the link round trips' ports
    size_t m_nPins{0};
    std::vector<qr_fabric_mirror_copy> m_bounceCopies; // their mirrored copies
    bool m_bouncing{false};                            // the rounds were started
    uint64_t m_tracePackets{0};                        // probes and answers the hosts sent or got
    uint64_t m_traceFaultDrops{0};  // of them, dropped by a planted fault (truth)
    uint64_t m_traceBufferDrops{0}; // dropped by a switch's buffer (truth)
    bool m_committed{false};
    std::string m_error;
    uint64_t m_events{0};
    uint32_t m_tick{0};
    double m_wallStart{0}, m_wall{0}, m_lastProgress{0};
    Time m_end;
    qr_end_reason m_endReason{QR_END_STOP};
    bool m_built{false}, m_stopping{false};
};

} // namespace ns3

#endif
