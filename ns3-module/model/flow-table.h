/* qreplay ns-3 module: the flows of a run and their directions. Flow f (the core's schedule order)
 * goes from host src, port SenderPort(f), to host dst, port kSinkPort; its data direction is 2f
 * and its ACK direction 2f+1. Direction numbers name packets across runs (packet id = direction
 * << 32 | sequence number within the direction), so a flow table built from the same schedule
 * gives the same numbers in runtime and replay. Lookup by 5-tuple is O(1). */
#ifndef QREPLAY_FLOW_TABLE_H
#define QREPLAY_FLOW_TABLE_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "qreplay/topology.h"
#include "qreplay/workload.h"
}

namespace ns3
{

class FlowTable
{
  public:
    static constexpr uint16_t kSinkPort = 5001;
    static constexpr uint16_t kFirstSenderPort = 10000;

    /* Number the flows' sender ports per source host (10000, 10001, ...). Throws
     * std::invalid_argument if a host would need more ports than exist or a host is out of
     * range. hostAddr(h) gives host h's address. */
    FlowTable(const std::vector<qr_flow>& flows, const std::vector<uint32_t>& hostAddr);

    size_t Flows() const { return m_flows.size(); }
    size_t Directions() const { return 2 * m_flows.size(); }
    const qr_flow& Flow(uint32_t f) const { return m_flows[f]; }
    uint16_t SenderPort(uint32_t f) const { return m_ports[f]; }
    uint32_t HostAddr(uint32_t h) const { return m_hostAddr[h]; }

    /* The direction of a packet with this 5-tuple; false if it belongs to no flow. */
    bool Resolve(const qr_five_tuple& ft, uint32_t& dir) const;
    /* The flow whose sender is (addr, port); false if none. */
    bool FlowOfSender(uint32_t addr, uint16_t port, uint32_t& flow) const;
    /* The direction's source and destination hosts. */
    uint32_t DirSrc(uint32_t dir) const;
    uint32_t DirDst(uint32_t dir) const;

  private:
    std::vector<qr_flow> m_flows;
    std::vector<uint16_t> m_ports;
    std::vector<uint32_t> m_hostAddr;
    std::unordered_map<uint64_t, uint32_t> m_bySender; // addr << 16 | port -> flow
};

} // namespace ns3

#endif
