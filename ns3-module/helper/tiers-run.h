/* qreplay ns-3 module: a multi-tier service (tiers.h) run over ns-3's TCP, WAP5's setting in the
 * simulator. Glue only: the core's machine (qr_tiers_*) decides every message, its parent and its
 * time; this wires it to sockets. Each connection the machine opens is an ns-3 TCP connection
 * from the caller to the callee's service port (QR_SINK_PORT + 1), opened when its first call is
 * made and kept open (a persistent connection of the caller's pool); a message is its bytes on
 * that connection, and it has arrived when the receiver has read its last byte. A planted slow
 * link delays a message's bytes between the send call and the sender's TCP (the path out of the
 * host is slow); a slow node is the machine's own.
 *
 * What the applications saw is kept as WAP5's LibSockCap would log it: per message, the send
 * call's time on the sender's clock and the time the receiver read its last byte on its own clock
 * (the scenario's [clock] offsets); the truth beside it (ids, parents, true times). */
#ifndef QREPLAY_NS3_TIERS_RUN_H
#define QREPLAY_NS3_TIERS_RUN_H

#include "fat-tree-helper.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/socket.h"

#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/linkfault.h"
#include "qreplay/messages.h"
#include "qreplay/scenario.h"
#include "qreplay/tiers.h"
#include "qreplay/tiers_truth.h"
}

namespace ns3
{

class TiersRun
{
  public:
    static constexpr uint16_t kServicePort = QR_SINK_PORT + 1;

    struct Progress
    {
        Time now;
        uint64_t requests, answered, messages;
    };

    /* The network of cfg (topology, links, buffers, TCP, [clock], [faults] link faults), spec's
     * service with clients sending until duration_ns, random choices from seed. Throws
     * std::runtime_error naming what is wrong (a host the network does not have). */
    TiersRun(const qr_config* cfg, const qr_tiers_spec* spec, uint64_t seed, int64_t duration_ns);
    ~TiersRun();
    TiersRun(const TiersRun&) = delete;
    TiersRun& operator=(const TiersRun&) = delete;

    /* Run until every request is answered, or stop_ns, or cancel. Returns false if cancelled. */
    bool Run(Time stop,
             const volatile std::sig_atomic_t* cancel,
             std::function<void(const Progress&)> progress);

    /* Every message in order of id, as the applications logged it, and its truth. */
    const std::vector<qr_msg>& Messages() const { return m_obs; }

    const std::vector<qr_tiers_truth_row>& Truth() const { return m_truth; }

    const std::vector<int64_t>& ClockOffsets() const { return m_offsets; }

    void Counts(uint64_t* requests, uint64_t* answered) const;

    Time End() const { return m_end; }

    /* Capture every host of the service as tcpdump on its NIC would: dir/hN.pcap (PPP frames,
     * microseconds), each on its host's own clock (the true time plus its [clock] offset, plus
     * the largest offset so that no time is negative). Call before Run; ClosePcaps after. Throws
     * std::runtime_error if a file cannot be made. */
    void EnablePcaps(const std::string& dir);
    void ClosePcaps();

    /* Host h's address, as its captures show it. */
    std::string HostAddress(uint32_t h) const;

  private:
    struct Side
    {
        Ptr<Socket> sock;
        uint64_t pending{0}; // bytes handed to this side, not yet accepted by its socket
    };

    struct Conn
    {
        uint32_t client, server;
        Side side[2]; // 0: the caller's, 1: the callee's
        std::vector<std::pair<uint64_t, uint64_t>>
            expect[2]; // per receiving side: (id, bytes left)
        size_t head[2]{0, 0};
        uint64_t sent[2]{0, 0}; // requests and replies so far (their index on the connection)
    };

    void Step();
    void Reschedule();
    void Flush();
    void Hand(uint64_t id);
    Conn& Open(const qr_tier_msg& m);
    void Push(uint32_t conn, int side);
    void Accept(Ptr<Socket> s, const Address& from);
    void Receive(Ptr<Socket> s);
    void Space(Ptr<Socket> s, uint32_t available);
    void Tick();

    const qr_config* m_cfg;
    qr_tiers_spec m_spec;
    std::unique_ptr<FatTreeHelper> m_net;
    qr_tiers* m_machine{nullptr};
    qr_link_faults* m_linkFaults{nullptr};
    std::vector<int64_t> m_offsets;
    std::vector<Ptr<Socket>> m_listen;
    std::map<uint32_t, Conn> m_conns;
    std::map<Socket*, std::pair<uint32_t, int>> m_sockSide;     // socket -> (connection, side)
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> m_byPort; // caller's (address, port)
    std::vector<qr_msg> m_obs;
    std::vector<qr_tiers_truth_row> m_truth;
    std::vector<qr_tier_msg> m_msgs; // by id
    EventId m_next;
    int64_t m_nextAt{INT64_MAX};
    const volatile std::sig_atomic_t* m_cancel{nullptr};
    std::function<void(const Progress&)> m_progress;
    bool m_cancelled{false};
    Time m_end;
    std::vector<Ptr<PcapFileWrapper>> m_pcaps;
};

} // namespace ns3

#endif
