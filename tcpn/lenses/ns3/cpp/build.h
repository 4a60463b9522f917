// Small helpers the Python builder calls where cppyy cannot reach (template factories,
// casts) and the registration of tcpn's TypeIds.
#pragma once
#include <string>

namespace tcpn {
using namespace ns3;

// Replace whatever root queue disc the device has (Ipv4AddressHelper::Assign installs
// FqCoDel) by a new one of `type_id`; set its attributes before the simulation starts.
inline Ptr<QueueDisc> InstallRootQueueDisc(Ptr<NetDevice> device, const std::string& type_id) {
    ObjectFactory factory;
    factory.SetTypeId(type_id);
    Ptr<QueueDisc> qdisc = factory.Create<QueueDisc>();
    Ptr<TrafficControlLayer> tc = device->GetNode()->GetObject<TrafficControlLayer>();
    if (tc->GetRootQueueDiscOnDevice(device)) tc->DeleteRootQueueDiscOnDevice(device);
    tc->SetRootQueueDiscOnDevice(device, qdisc);
    return qdisc;
}

// Let a TailQueueDisc count the packet waiting in its device's transmit queue.
inline void AttachDeviceQueue(Ptr<QueueDisc> qdisc, Ptr<NetDevice> device) {
    Ptr<TailQueueDisc> tail = DynamicCast<TailQueueDisc>(qdisc);
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(device);
    if (tail && p2p) tail->SetDeviceQueue(p2p->GetQueue(), 2);
}

// Fix the random stream of a queue disc that draws random numbers (RED); returns how many
// streams it took.
inline int64_t AssignQueueStreams(Ptr<QueueDisc> qdisc, int64_t stream) {
    Ptr<RedQueueDisc> red = DynamicCast<RedQueueDisc>(qdisc);
    return red ? red->AssignStreams(stream) : 0;
}

inline void SetReceiveErrorModel(Ptr<NetDevice> device, Ptr<LinkErrorModel> model) {
    device->SetAttribute("ReceiveErrorModel", PointerValue(model));
}

// tcpn's own congestion controls behind a source's socket (null otherwise), to read
// their state after the run.
inline Ptr<TcpL> AsTcpL(Ptr<TcpCongestionOps> congestion) { return DynamicCast<TcpL>(congestion); }
inline Ptr<SampledVegas> AsSampledVegas(Ptr<TcpCongestionOps> congestion) {
    return DynamicCast<SampledVegas>(congestion);
}
inline Ptr<ModifiedVegas> AsModifiedVegas(Ptr<TcpCongestionOps> congestion) {
    return DynamicCast<ModifiedVegas>(congestion);
}
inline Ptr<AdaptiveVegas> AsAdaptiveVegas(Ptr<TcpCongestionOps> congestion) {
    return DynamicCast<AdaptiveVegas>(congestion);
}

inline void AddApplication(Ptr<Node> node, Ptr<Application> app, double start_s, double stop_s) {
    node->AddApplication(app);
    app->SetStartTime(Seconds(start_s));
    app->SetStopTime(Seconds(stop_s));
}

inline void RegisterTypes() {
    TailQueueDisc::GetTypeId();
    LinkErrorModel::GetTypeId();
    TcpSource::GetTypeId();
    TcpSink::GetTypeId();
    TahoeRecovery::GetTypeId();
    NewReno::GetTypeId();
    WestwoodPlus::GetTypeId();
    ModifiedVegas::GetTypeId();
    AdaptiveVegas::GetTypeId();
    Vegas::GetTypeId();
    Rfc5681Socket::GetTypeId();
    TcpL::GetTypeId();
    ReportTag::GetTypeId();
}

}  // namespace tcpn
