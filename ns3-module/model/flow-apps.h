/* qreplay ns-3 module: the TCP applications of the runtime. FlowSenderApp (one per host) starts
 * each of the host's flows at its start time: a TCP connection from the flow's sender port to the
 * destination's sink port that sends exactly the flow's bytes and then closes. FlowSinkApp (one per
 * host) accepts connections on the sink port, counts each flow's bytes, reports its completion
 * (the time its last byte arrived) and closes its side when the sender closes. */
#ifndef QREPLAY_NS3_FLOW_APPS_H
#define QREPLAY_NS3_FLOW_APPS_H

#include "flow-table.h"

extern "C"
{
#include "qreplay/reader.h"
}

#include "ns3/application.h"
#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/socket.h"

#include <map>
#include <vector>

namespace ns3
{

class FlowSenderApp : public Application
{
  public:
    static TypeId GetTypeId();
    FlowSenderApp();
    ~FlowSenderApp() override;

    /* The flows of this host (indices into `table`, borrowed). onClosed(flow) is called when a
     * flow's connection has closed normally, onError(flow) when it failed. */
    void Setup(const FlowTable* table,
               std::vector<uint32_t> flows,
               Callback<void, uint32_t> onClosed,
               Callback<void, uint32_t> onError);

    /* onSocket(flow, socket) when a flow's socket is created, before it connects (to connect
     * trace sources to it). */
    void SetSocketCallback(Callback<void, uint32_t, Ptr<Socket>> onSocket);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void StartFlow(uint32_t i);
    void Connected(Ptr<Socket> s);
    void ConnectFailed(Ptr<Socket> s);
    void SendMore(Ptr<Socket> s, uint32_t available);
    void Closed(Ptr<Socket> s);
    void Failed(Ptr<Socket> s);

    struct Conn
    {
        uint32_t flow;
        uint64_t left; // bytes not yet handed to the socket
        bool closing;
    };

    const FlowTable* m_table{nullptr};
    std::vector<uint32_t> m_flows;
    std::map<Socket*, Conn> m_conns;
    std::vector<EventId> m_starts;
    Callback<void, uint32_t> m_onClosed;
    Callback<void, uint32_t> m_onError;
    Callback<void, uint32_t, Ptr<Socket>> m_onSocket;
};

class FlowSinkApp : public Application
{
  public:
    static TypeId GetTypeId();
    FlowSinkApp();
    ~FlowSinkApp() override;

    /* onComplete(flow, time) when a flow's last byte has arrived. */
    void Setup(const FlowTable* table, Callback<void, uint32_t, Time> onComplete);

    /* Per flow of the table, the application's read rate in bits/s (0 or missing: it reads
     * every byte as it arrives); paced by the core's qr_reader ([traffic] read_rate). */
    void SetReadRates(std::vector<uint64_t> bpsPerFlow);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Accept(Ptr<Socket> s, const Address& from);
    void Read(Ptr<Socket> s);
    void PeerClosed(Ptr<Socket> s);

    struct Conn
    {
        uint32_t flow;
        uint64_t received;
        bool done;
        bool paced;
        bool closeWhenRead; // the peer closed while unread bytes remained
        qr_reader reader;
        EventId next; // the paced application's next read
    };

    void Consume(Ptr<Socket> s, Conn& c, Ptr<Packet> p);

    const FlowTable* m_table{nullptr};
    std::vector<uint64_t> m_readBps;
    Ptr<Socket> m_listen;
    std::map<Socket*, Conn> m_conns;
    std::vector<Ptr<Socket>> m_accepted;
    Callback<void, uint32_t, Time> m_onComplete;
};

} // namespace ns3

#endif
