/* qreplay ns-3 module: the flows of a run, as the core's qr_flow_table (flowtable.h: sender ports,
 * directions 2f and 2f + 1, lookup by 5-tuple) owned by a C++ object for the applications and
 * queue discs that share it. */
#ifndef QREPLAY_NS3_FLOW_TABLE_H
#define QREPLAY_NS3_FLOW_TABLE_H

#include <cstdint>
#include <stdexcept>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
}

namespace ns3
{

class FlowTable
{
  public:
    static constexpr uint16_t kSinkPort = QR_SINK_PORT;

    /* The flows of a topology's hosts. Throws std::invalid_argument with the core's message. */
    FlowTable(const std::vector<qr_flow>& flows, const qr_topology* topo)
    {
        char err[QR_ERRBUF_SIZE];
        if (qr_flow_table_for_topology(&m_t, flows.data(), flows.size(), topo, err))
            throw std::invalid_argument(err);
    }

    ~FlowTable() { qr_flow_table_destroy(m_t); }

    FlowTable(const FlowTable&) = delete;
    FlowTable& operator=(const FlowTable&) = delete;

    const qr_flow_table* Get() const { return m_t; }

    size_t Flows() const { return qr_flow_table_flows(m_t); }

    size_t Directions() const { return qr_flow_table_directions(m_t); }

    const qr_flow& Flow(uint32_t f) const { return *qr_flow_table_flow(m_t, f); }

    uint16_t SenderPort(uint32_t f) const { return qr_flow_table_sender_port(m_t, f); }

    uint32_t HostAddr(uint32_t h) const { return qr_flow_table_host_addr(m_t, h); }

    bool Resolve(const qr_five_tuple& ft, uint32_t& dir) const
    {
        return qr_flow_table_resolve(m_t, &ft, &dir) == QR_OK;
    }

    bool FlowOfSender(uint32_t addr, uint16_t port, uint32_t& flow) const
    {
        return qr_flow_table_flow_of_sender(m_t, addr, port, &flow) == QR_OK;
    }

    uint32_t DirSrc(uint32_t dir) const { return qr_flow_table_dir_src(m_t, dir); }

    uint32_t DirDst(uint32_t dir) const { return qr_flow_table_dir_dst(m_t, dir); }

  private:
    qr_flow_table* m_t{nullptr};
};

} // namespace ns3

#endif
