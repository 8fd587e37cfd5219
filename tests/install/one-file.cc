// A one-file ns-3 program built against an installed qreplay (pkg-config qreplay-ns3): a star of
// three hosts on one shared-buffer switch, two BulkSend flows into host 0.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include "helper/fat-tree-helper.h"

#include <iostream>

using namespace ns3;

int
main()
{
    FatTreeHelper star(DataRate("10Gbps"), MicroSeconds(1));
    star.BuildStar(3);
    star.InstallSharedBuffers(30000, 1.0);
    uint64_t drops = 0;
    for (uint32_t p = 0; p < 3; p++)
        star.GetQueueDisc(0, p)->TraceConnectWithoutContext(
            "DropBeforeEnqueue",
            MakeBoundCallback(
                +[](uint64_t* n, Ptr<const QueueDiscItem>, const char*) { (*n)++; },
                &drops));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer s = sink.Install(star.GetHosts().Get(0));
    for (uint32_t h = 1; h < 3; h++)
    {
        BulkSendHelper b("ns3::TcpSocketFactory", InetSocketAddress(star.GetHostAddress(0), 9));
        b.SetAttribute("MaxBytes", UintegerValue(200000));
        b.Install(star.GetHosts().Get(h));
    }
    Simulator::Stop(Seconds(5));
    Simulator::Run();
    std::cout << "received " << DynamicCast<PacketSink>(s.Get(0))->GetTotalRx() << " drops "
              << drops << std::endl;
    Simulator::Destroy();
    return 0;
}
