/* qreplay ns-3 module: the open-loop replay of a recording.
 *
 * The same network as the runtime (FatTree or star, shared-buffer switches deciding with the
 * core's replay rule: plain or tagged), but no TCP: every host injects its recorded packets, data
 * and ACKs alike, so that each one's first bit leaves the NIC at its injection time (or as soon as
 * the NIC is free, if sampling error made packets overlap). Packets keep their runtime headers
 * (5-tuple, IP ID, length, TCP header) and carry their id and drop tag; hosts swallow whatever
 * reaches them, so nothing the runtime did not send appears on a wire (no RST, no ICMP, no ACK).
 * Every switch-queue arrival goes to an arrival log, every drop is kept, as in the runtime. */
#ifndef QREPLAY_NS3_REPLAY_H
#define QREPLAY_NS3_REPLAY_H

#include "fat-tree-helper.h"

#include "ns3/ipv4-l3-protocol.h"
#include "ns3/nstime.h"

#include <csignal>
#include <functional>
#include <memory>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/buffer.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/source.h"
#include "qreplay/units.h"
}

namespace ns3
{

class QreplayReplay
{
  public:
    struct Options
    {
        qr_drop_mode mode{QR_MODE_TAGGED};
        uint64_t marginBytes{5 * QR_MTU_BYTES};
        std::string arrivalsPath; // "" writes no arrival log
        std::function<void(int64_t simNs, double wallS, uint64_t events)> progress;
        const volatile std::sig_atomic_t* cancel{nullptr};
    };

    using Drop = qr_row_drop;

    /* scenario: the network and buffers to replay on (its topology must be the recording's). */
    QreplayReplay(const qr_scenario* scenario,
                  const qr_recording* rec,
                  qr_source* src,
                  Options options);
    ~QreplayReplay(); // closes the arrival log and destroys the simulation
    QreplayReplay(const QreplayReplay&) = delete;
    QreplayReplay& operator=(const QreplayReplay&) = delete;

    void Build();
    /* Inject everything and run until the network is empty. Throws std::runtime_error. */
    void Run();
    /* Flush and close the arrival log. Throws std::runtime_error. */
    void Finish();

    bool Cancelled() const { return m_cancelled; }

    const std::vector<Drop>& GetDrops() const { return m_drops; }

    /* Per host: packets and bytes (IP length) that left its NIC, and their first-bit times'
     * lateness against the injection time (max, ns). */
    const std::vector<uint64_t>& GetSentPackets() const { return m_sent; }

    const std::vector<uint64_t>& GetSentBytes() const { return m_sentBytes; }

    int64_t GetMaxLateness() const { return m_maxLate; }

    uint64_t GetDelivered() const { return m_delivered; }

    uint64_t GetEvents() const { return m_events; }

    double GetWallSeconds() const { return m_wall; }

    Time GetEnd() const { return m_end; }

    uint64_t GetOtherDrops() const { return m_otherDrops; }

    uint64_t GetArrivals() const { return m_nArrivals; }

    const FatTreeHelper& GetNetwork() const { return *m_net; }

  private:
    void SendNext(uint32_t host);
    static void HostTx(QreplayReplay* r, uint32_t host, Ptr<const Packet> p);
    static void HostRx(QreplayReplay* r, uint32_t host, Ptr<const Packet> p);
    void OnArrival(const qr_arrival& a);
    void OnOtherDrop(Ptr<const Packet> p);

    const qr_scenario* m_scenario;
    const qr_config* m_cfg;
    const qr_recording* m_rec;
    qr_source* m_src; // the packets, host by host in injection order
    Options m_opt;
    std::unique_ptr<FatTreeHelper> m_net;
    std::vector<int64_t> m_expected;         // per host: injection time of the packet being sent
    std::vector<std::vector<int64_t>> m_due; // per host: injection times queued at the NIC, FIFO
    std::vector<size_t> m_dueHead;
    std::vector<uint64_t> m_sent, m_sentBytes;
    std::vector<Drop> m_drops;
    qr_arrival_writer* m_arrivals{nullptr};
    bool m_cancelled{false};
    uint64_t m_delivered{0}, m_events{0}, m_otherDrops{0}, m_tick{0}, m_nArrivals{0};
    int64_t m_maxLate{0};
    double m_wall{0}, m_wallStart{0}, m_lastProgress{0};
    Time m_end;
};

} // namespace ns3

#endif
