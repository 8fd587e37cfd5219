/* qreplay ns-3 module: a host's Pingmesh agent (the core's pingmesh.h decides everything). It
 * answers every probe that reaches QR_PROBE_PORT with an answer of the same size, and sends the
 * probes of its pairs at the times the core gives, each from the source port the core gives,
 * reporting sends, answers and echoes to the core's log. */
#ifndef QREPLAY_NS3_PINGMESH_APP_H
#define QREPLAY_NS3_PINGMESH_APP_H

extern "C"
{
#include "qreplay/pingmesh.h"
}

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/socket.h"

#include <map>
#include <vector>

namespace ns3
{

class PingmeshApp : public Application
{
  public:
    static TypeId GetTypeId();
    PingmeshApp();
    ~PingmeshApp() override;

    /* The agents' log (borrowed), this host's number and every host's address by number. */
    void Setup(qr_pingmesh* pm, uint32_t host, std::vector<Ipv4Address> addrs);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Schedule(size_t pair, uint64_t j);
    void SendProbe(size_t pair, uint64_t j);
    void Answer(Ptr<Socket> s);
    void Answered(Ptr<Socket> s);

    qr_pingmesh* m_pm{nullptr};
    uint32_t m_host{0};
    std::vector<Ipv4Address> m_addrs;
    Ptr<Socket> m_responder;
    std::map<uint16_t, Ptr<Socket>> m_sockets; // by source port, made once and reused
    std::map<size_t, EventId> m_next;          // each of this host's pairs' next probe
};

} // namespace ns3

#endif
