/* qreplay ns-3 module: builds a FatTree (any even k) or a star from the core's qr_topology: nodes,
 * point-to-point links with the scenario's rate and delay, addresses (host h: the core's
 * qr_topology_host_addr), host default routes; hosts run ns-3's Internet stack, switches a
 * FabricSwitch that forwards below IP (no stack of their own) into the traffic-control layer of
 * each port. */
#ifndef QREPLAY_NS3_FAT_TREE_HELPER_H
#define QREPLAY_NS3_FAT_TREE_HELPER_H

#include "model/fabric-switch.h"
#include "model/host-queue-disc.h"
#include "model/shared-buffer-queue-disc.h"

#include "ns3/attribute.h"
#include "ns3/data-rate.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

extern "C"
{
#include "qreplay/linkfault.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"
}

namespace ns3
{

class FatTreeHelper
{
  public:
    /* Start a fresh simulation (Simulator::Destroy) on ns-3's calendar-queue scheduler: the same
     * events in the same order as the default map scheduler (ties go by insertion either way),
     * byte-identical outputs, 7% less wall time at k=8. NS_GLOBAL_VALUE's
     * SchedulerType, if set, is left in charge. */
    static void FreshSimulation();

    /* The network of a scenario: its links ([links], the NIC queue of [host]), its topology
     * built, and its switches' shared buffers ([buffer]). */
    static std::unique_ptr<FatTreeHelper> FromConfig(const qr_config* c);

    /* Link settings; the switch-side device queue holds one packet (the queue disc holds the
     * backlog; InstallSharedBuffers lets the backlog wait in the device instead), the host NIC
     * queue hostQueuePackets. */
    FatTreeHelper(DataRate rate, Time delay, uint32_t hostQueuePackets = 1000);
    ~FatTreeHelper();
    FatTreeHelper(const FatTreeHelper&) = delete;
    FatTreeHelper& operator=(const FatTreeHelper&) = delete;

    /* Build a k-ary FatTree or an n-host star. Throws std::invalid_argument on a bad size. */
    void BuildFatTree(int k);
    void BuildStar(int hosts);

    const qr_topology* GetTopology() const;
    NodeContainer GetHosts() const;
    NodeContainer GetSwitches() const;
    /* The device of port `port` of switch `sw`, and of host h's NIC. */
    Ptr<NetDevice> GetSwitchDevice(uint32_t sw, uint32_t port) const;
    Ptr<NetDevice> GetHostDevice(uint32_t host) const;
    /* Switch sw's forwarding: its ICMP limiter, drop trace and counters. */
    Ptr<FabricSwitch> GetSwitch(uint32_t sw) const;
    Ipv4Address GetHostAddress(uint32_t host) const;

    /* Give every switch one SharedBuffer of sizeBytes (dynamic-threshold alpha; further
     * SharedBuffer attributes such as Mode, Margin and EcnThreshold as name/value pairs in extra)
     * and every switch port a SharedBufferQueueDisc on it. Call once, after Build*, before the
     * simulation. */
    void InstallSharedBuffers(
        uint64_t sizeBytes,
        double alpha,
        const std::vector<std::pair<std::string, Ptr<AttributeValue>>>& extra = {});
    Ptr<SharedBuffer> GetSharedBuffer(uint32_t sw) const;

    /* Apply the delay and rate faults of [faults] (linkfault.h; NULL: none): a delay fault sets
     * its cable's delay to the links' delay plus the extra, a rate fault its link's sending
     * device's rate. Drop faults are the queue discs' (SharedBuffer::SetFaults). */
    void ApplyLinkFaults(const qr_link_faults* faults);

    /* The link faults of a scenario's [faults] link keys made (seeded by [run] seed), given with
     * the drop faults `drops` (NULL: none) to every switch's shared buffer, and their delays and
     * rates applied. The caller owns the result (qr_link_faults_destroy); throws
     * std::runtime_error with the core's message on a bad fault. */
    qr_link_faults* InstallFaults(const qr_config* c, qr_faults* drops);

    /* Give every host NIC a HostQueueDisc (FIFO of hostQueuePackets, numbering per flow direction;
     * processing delay of mean delay and standard deviation jitter from random stream (seed, host,
     * stream)); the NIC's own device queue then holds one packet. */
    void InstallHostQueueDiscs(const FlowTable* flows,
                               Time delay = Seconds(0),
                               Time jitter = Seconds(0),
                               uint64_t seed = 1,
                               uint64_t stream = 0);
    Ptr<HostQueueDisc> GetHostQueueDisc(uint32_t host) const;
    Ptr<SharedBufferQueueDisc> GetQueueDisc(uint32_t sw, uint32_t port) const;

  private:
    void Build();

    DataRate m_rate;
    Time m_delay;
    uint32_t m_hostQueuePackets;
    qr_topology* m_topo{nullptr};
    NodeContainer m_hosts;
    NodeContainer m_switches;
    std::vector<std::vector<Ptr<NetDevice>>> m_switchDevices; // [sw][port]
    std::vector<Ptr<NetDevice>> m_hostDevices;
    std::vector<Ptr<FabricSwitch>> m_fabric;
    std::vector<Ptr<SharedBuffer>> m_buffers;
    std::vector<std::vector<Ptr<SharedBufferQueueDisc>>> m_queueDiscs;
    std::vector<Ptr<HostQueueDisc>> m_hostQueueDiscs;
};

} // namespace ns3

#endif
