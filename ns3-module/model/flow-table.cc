#include "flow-table.h"

#include <stdexcept>

namespace ns3
{

static uint64_t
Key(uint32_t addr, uint16_t port)
{
    return static_cast<uint64_t>(addr) << 16 | port;
}

FlowTable::FlowTable(const std::vector<qr_flow>& flows, const std::vector<uint32_t>& hostAddr)
    : m_flows(flows),
      m_hostAddr(hostAddr)
{
    std::vector<uint32_t> used(hostAddr.size(), 0);
    m_ports.resize(flows.size());
    m_bySender.reserve(flows.size());
    for (size_t f = 0; f < flows.size(); f++)
    {
        const qr_flow& fl = flows[f];
        if (fl.src >= hostAddr.size() || fl.dst >= hostAddr.size() || fl.src == fl.dst)
            throw std::invalid_argument("flow " + std::to_string(f) + ": hosts " +
                                        std::to_string(fl.src) + " -> " +
                                        std::to_string(fl.dst) + " not in the topology");
        uint32_t n = used[fl.src]++;
        if (n > 65535u - kFirstSenderPort)
            throw std::invalid_argument("host " + std::to_string(fl.src) + " starts more than " +
                                        std::to_string(65536 - kFirstSenderPort) +
                                        " flows: sender ports would repeat");
        m_ports[f] = static_cast<uint16_t>(kFirstSenderPort + n);
        m_bySender.emplace(Key(hostAddr[fl.src], m_ports[f]), static_cast<uint32_t>(f));
    }
}

bool
FlowTable::FlowOfSender(uint32_t addr, uint16_t port, uint32_t& flow) const
{
    auto it = m_bySender.find(Key(addr, port));
    if (it == m_bySender.end())
        return false;
    flow = it->second;
    return true;
}

bool
FlowTable::Resolve(const qr_five_tuple& ft, uint32_t& dir) const
{
    if (ft.proto != 6)
        return false;
    uint32_t f;
    if (ft.dst_port == kSinkPort && FlowOfSender(ft.src_ip, ft.src_port, f) &&
        m_hostAddr[m_flows[f].dst] == ft.dst_ip)
    {
        dir = 2 * f;
        return true;
    }
    if (ft.src_port == kSinkPort && FlowOfSender(ft.dst_ip, ft.dst_port, f) &&
        m_hostAddr[m_flows[f].dst] == ft.src_ip)
    {
        dir = 2 * f + 1;
        return true;
    }
    return false;
}

uint32_t
FlowTable::DirSrc(uint32_t dir) const
{
    const qr_flow& f = m_flows[dir / 2];
    return dir % 2 ? f.dst : f.src;
}

uint32_t
FlowTable::DirDst(uint32_t dir) const
{
    const qr_flow& f = m_flows[dir / 2];
    return dir % 2 ? f.src : f.dst;
}

} // namespace ns3
