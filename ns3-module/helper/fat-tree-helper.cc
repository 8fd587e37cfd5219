#include "fat-tree-helper.h"

#include "../model/fabric-switch.h"

#include "ns3/channel.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4.h"
#include "ns3/object-factory.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-size.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ns3
{

void
FatTreeHelper::FreshSimulation()
{
    Simulator::Destroy();
    const char* env = getenv("NS_GLOBAL_VALUE");
    if (env && strstr(env, "SchedulerType"))
        return;
    ObjectFactory f;
    f.SetTypeId("ns3::CalendarScheduler");
    Simulator::SetScheduler(f);
}

std::unique_ptr<FatTreeHelper>
FatTreeHelper::FromConfig(const qr_config* c)
{
    auto net = std::make_unique<FatTreeHelper>(DataRate(c->links.rate_bps),
                                               NanoSeconds(c->links.delay_ns),
                                               static_cast<uint32_t>(c->host.nic_queue));
    if (c->topology.kind == QR_TOPO_FATTREE)
        net->BuildFatTree(c->topology.k);
    else
        net->BuildStar(c->topology.hosts);
    net->InstallSharedBuffers(
        c->buffer.size_bytes,
        c->buffer.alpha,
        {{"EcnThreshold", Create<UintegerValue>(c->buffer.ecn_threshold_bytes)},
         {"Policy", Create<EnumValue>(static_cast<qr_buffer_policy>(c->buffer.policy))},
         {"PortSize", Create<UintegerValue>(c->buffer.port_size_bytes)}});
    return net;
}

qr_link_faults*
FatTreeHelper::InstallFaults(const qr_config* c, qr_faults* drops)
{
    char err[QR_ERRBUF_SIZE];
    qr_link_faults* lf = nullptr;
    qr_link_fault_texts lft{
        {c->faults.link[0], c->faults.link[1], c->faults.link[2], c->faults.link[3]}};
    if (qr_link_faults_create(&lf, &lft, GetTopology(), c->run.seed, err))
        throw std::runtime_error(err);
    for (uint32_t sw = 0; sw < qr_topology_switches(GetTopology()); sw++)
        GetSharedBuffer(sw)->SetFaults(drops, lf);
    ApplyLinkFaults(lf);
    return lf;
}

FatTreeHelper::FatTreeHelper(DataRate rate, Time delay, uint32_t hostQueuePackets)
    : m_rate(rate),
      m_delay(delay),
      m_hostQueuePackets(hostQueuePackets)
{
}

FatTreeHelper::~FatTreeHelper()
{
    qr_topology_destroy(m_topo);
}

void
FatTreeHelper::BuildFatTree(int k)
{
    if (m_topo || qr_topology_fattree(&m_topo, k) != 0)
        throw std::invalid_argument("FatTree: k must be even, 2..64, and built once");
    Build();
}

void
FatTreeHelper::BuildStar(int hosts)
{
    if (m_topo || qr_topology_star(&m_topo, hosts) != 0)
        throw std::invalid_argument("star: 2..63 hosts, built once");
    Build();
}

static Ipv4Address
Addr(uint32_t a)
{
    return Ipv4Address(a);
}

void
FatTreeHelper::Build()
{
    uint32_t nHosts = qr_topology_hosts(m_topo), nSw = qr_topology_switches(m_topo);
    m_hosts.Create(nHosts);
    m_switches.Create(nSw);
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper staticRouting;
    stack.SetRoutingHelper(staticRouting);
    stack.Install(m_hosts); // switches forward below IP (FabricSwitch): no stack of their own

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(m_rate));
    p2p.SetChannelAttribute("Delay", TimeValue(m_delay));
    m_switchDevices.assign(nSw, {});
    m_hostDevices.assign(nHosts, nullptr);
    std::vector<uint32_t> addr(qr_topology_links(m_topo)); // the core's address plan
    qr_topology_addresses(m_topo, addr.data());
    for (uint32_t sw = 0; sw < nSw; sw++)
    {
        uint32_t ports = qr_topology_ports(m_topo, sw);
        m_switchDevices[sw].resize(ports);
    }
    for (uint32_t sw = 0; sw < nSw; sw++)
    {
        for (uint32_t port = 0; port < qr_topology_ports(m_topo, sw); port++)
        {
            qr_node_kind kind;
            uint32_t peer, peerPort;
            qr_topology_link(m_topo, sw, port, &kind, &peer, &peerPort);
            if (kind != QR_NODE_HOST && peer < sw)
                continue; // made from the other end
            Ptr<Node> a = m_switches.Get(sw);
            Ptr<Node> b = kind == QR_NODE_HOST ? m_hosts.Get(peer) : m_switches.Get(peer);
            NetDeviceContainer d = p2p.Install(a, b);
            uint32_t addrA = addr[qr_topology_port_link(m_topo, sw, port)];
            // switch-side device queues hold one packet: the backlog lives in the queue disc
            d.Get(0)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(QueueSize("1p"));
            m_switchDevices[sw][port] = d.Get(0);
            if (kind == QR_NODE_HOST)
            {
                Ptr<Ipv4> ib = b->GetObject<Ipv4>();
                uint32_t ifB = ib->AddInterface(d.Get(1));
                ib->AddAddress(ifB,
                               Ipv4InterfaceAddress(Addr(addr[qr_topology_uplink(m_topo, peer)]),
                                                    Ipv4Mask("255.255.255.252")));
                ib->SetUp(ifB);
                d.Get(1)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(
                    QueueSize(QueueSizeUnit::PACKETS, m_hostQueuePackets));
                m_hostDevices[peer] = d.Get(1);
                staticRouting.GetStaticRouting(ib)->SetDefaultRoute(Addr(addrA), ifB);
            }
            else
            {
                d.Get(1)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(
                    QueueSize("1p"));
                m_switchDevices[peer][peerPort] = d.Get(1);
            }
        }
    }
    for (uint32_t sw = 0; sw < nSw; sw++)
    {
        std::vector<uint32_t> portAddr(qr_topology_ports(m_topo, sw)); // the plan's, per port
        for (uint32_t port = 0; port < portAddr.size(); port++)
            portAddr[port] = addr[qr_topology_port_link(m_topo, sw, port)];
        Ptr<FabricSwitch> f = CreateObject<FabricSwitch>();
        f->Setup(m_switches.Get(sw), m_topo, sw, m_switchDevices[sw], portAddr);
        m_fabric.push_back(f);
    }
}

const qr_topology*
FatTreeHelper::GetTopology() const
{
    return m_topo;
}

NodeContainer
FatTreeHelper::GetHosts() const
{
    return m_hosts;
}

NodeContainer
FatTreeHelper::GetSwitches() const
{
    return m_switches;
}

Ptr<FabricSwitch>
FatTreeHelper::GetSwitch(uint32_t sw) const
{
    return m_fabric.at(sw);
}

Ptr<NetDevice>
FatTreeHelper::GetSwitchDevice(uint32_t sw, uint32_t port) const
{
    return m_switchDevices.at(sw).at(port);
}

void
FatTreeHelper::ApplyLinkFaults(const qr_link_faults* faults)
{
    for (size_t i = 0; i < qr_link_faults_count(faults); i++)
    {
        uint32_t link;
        const qr_link_fault* r = qr_link_faults_get(faults, i, &link);
        qr_node from;
        qr_node to;
        uint32_t port;
        qr_topology_link_ends(m_topo, link, &from, &to, &port);
        Ptr<NetDevice> dev = from.kind == QR_NODE_HOST ? GetHostDevice(from.index)
                                                       : GetSwitchDevice(from.index, port);
        if (r->kind == QR_LINK_RATE)
            dev->SetAttribute("DataRate", DataRateValue(DataRate(r->rate_bps)));
        else if (r->kind == QR_LINK_DELAY)
            dev->GetChannel()->SetAttribute("Delay", TimeValue(m_delay + NanoSeconds(r->delay_ns)));
    }
}

Ptr<NetDevice>
FatTreeHelper::GetHostDevice(uint32_t host) const
{
    return m_hostDevices.at(host);
}

Ipv4Address
FatTreeHelper::GetHostAddress(uint32_t host) const
{
    return Addr(qr_topology_host_addr(m_topo, host));
}

} // namespace ns3

namespace ns3
{

void
FatTreeHelper::InstallSharedBuffers(
    uint64_t sizeBytes,
    double alpha,
    const std::vector<std::pair<std::string, Ptr<AttributeValue>>>& extra)
{
    if (!m_topo || !m_buffers.empty())
        throw std::logic_error("InstallSharedBuffers: build the topology first, and only once");
    uint32_t nSw = qr_topology_switches(m_topo);
    m_queueDiscs.assign(nSw, {});
    for (uint32_t sw = 0; sw < nSw; sw++)
    {
        uint32_t ports = qr_topology_ports(m_topo, sw);
        Ptr<SharedBuffer> buffer =
            CreateObjectWithAttributes<SharedBuffer>("Size",
                                                     UintegerValue(sizeBytes),
                                                     "Alpha",
                                                     DoubleValue(alpha),
                                                     "Ports",
                                                     UintegerValue(ports),
                                                     "SwitchId",
                                                     UintegerValue(sw));
        for (const auto& [name, value] : extra)
            buffer->SetAttribute(name, *value);
        m_buffers.push_back(buffer);
        Ptr<TrafficControlLayer> tc = m_switches.Get(sw)->GetObject<TrafficControlLayer>();
        for (uint32_t port = 0; port < ports; port++)
        {
            // the port's backlog may wait in the device: admission and release are the shared
            // buffer's (at enqueue and at the end of transmission), wherever the packet waits,
            // and a device queue that never fills never stops the queue disc (no wake event)
            m_switchDevices[sw][port]->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(
                QueueSize(QueueSizeUnit::PACKETS, std::numeric_limits<uint32_t>::max()));
            Ptr<SharedBufferQueueDisc> q = CreateObject<SharedBufferQueueDisc>();
            q->Attach(buffer, port, m_switchDevices[sw][port]);
            tc->SetRootQueueDiscOnDevice(m_switchDevices[sw][port], q);
            m_queueDiscs[sw].push_back(q);
        }
    }
}

Ptr<SharedBuffer>
FatTreeHelper::GetSharedBuffer(uint32_t sw) const
{
    return m_buffers.at(sw);
}

Ptr<SharedBufferQueueDisc>
FatTreeHelper::GetQueueDisc(uint32_t sw, uint32_t port) const
{
    return m_queueDiscs.at(sw).at(port);
}

} // namespace ns3

namespace ns3
{

void
FatTreeHelper::InstallHostQueueDiscs(const FlowTable* flows,
                                     Time delay,
                                     Time jitter,
                                     uint64_t seed,
                                     uint64_t stream)
{
    if (!m_topo || !m_hostQueueDiscs.empty())
        throw std::logic_error("InstallHostQueueDiscs: build the topology first, and only once");
    for (uint32_t h = 0; h < m_hostDevices.size(); h++)
    {
        Ptr<NetDevice> dev = m_hostDevices[h];
        dev->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(QueueSize("1p"));
        Ptr<HostQueueDisc> q =
            CreateObjectWithAttributes<HostQueueDisc>("Limit",
                                                      UintegerValue(m_hostQueuePackets),
                                                      "ProcessingDelay",
                                                      TimeValue(delay),
                                                      "ProcessingJitter",
                                                      TimeValue(jitter),
                                                      "Seed",
                                                      UintegerValue(seed),
                                                      "HostId",
                                                      UintegerValue(h),
                                                      "Stream",
                                                      UintegerValue(stream));
        q->SetFlows(flows);
        m_hosts.Get(h)->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(dev, q);
        m_hostQueueDiscs.push_back(q);
    }
}

Ptr<HostQueueDisc>
FatTreeHelper::GetHostQueueDisc(uint32_t host) const
{
    return m_hostQueueDiscs.at(host);
}

} // namespace ns3
