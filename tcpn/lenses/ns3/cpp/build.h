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

// Keep every waiting packet of a RedQueueDisc in the queue disc, as in ns-2, where RED is
// the link's queue and the link takes a packet from it only when it has finished the one
// before (ns-2 REDQueue::deque, called when the link is free). Left alone, ns-3 hands the
// next packet to the device's one-packet transmit queue as soon as a transmission starts,
// and RedQueueDisc::DoEnqueue averages GetInternalQueue(0)'s length: one packet fewer than
// wait (a step at K marks from K + 1 waiting), and its idle period starts when the last
// packet starts, not when it ends.
//
// LineLimits, the device queue's QueueLimits (ns-3's byte-queue-limits hook), says
// "nothing available" from the moment a packet enters the device until its transmission
// ends, so the queue disc is asked for the next packet only then. The release is scheduled
// when the transmission starts (PhyTxBegin), for the instant PointToPointNetDevice's
// TransmitComplete is scheduled and just before it: the next packet then waits in the
// device queue for no time, TransmitComplete starts it as before, and an arrival at that
// same instant (scheduled later) still finds it gone, as it would have.
class LineLimits : public QueueLimits {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::LineLimits")
                                .SetParent<QueueLimits>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<LineLimits>();
        return tid;
    }
    void Reset() override { m_busy = false; }
    void Completed(uint32_t) override {}  // leaving the device queue is not the end
    int32_t Available() const override { return m_busy ? -1 : 0; }
    void Queued(uint32_t) override { m_busy = true; }
    void Gate(Ptr<PointToPointNetDevice> device) {
        m_txq = device->GetObject<NetDeviceQueueInterface>()->GetTxQueue(0);
        DataRateValue rate;
        TimeValue gap;
        device->GetAttribute("DataRate", rate);
        device->GetAttribute("InterframeGap", gap);
        m_rate = rate.Get();
        m_gap = gap.Get();
        m_txq->SetQueueLimits(this);
        device->TraceConnectWithoutContext("PhyTxBegin",
                                           MakeCallback(&LineLimits::TransmissionStarts, this));
    }

  private:
    bool m_busy{false};
    Ptr<NetDeviceQueue> m_txq;
    DataRate m_rate;
    Time m_gap;

    // the same time PointToPointNetDevice::TransmitStart gives TransmitComplete
    void TransmissionStarts(Ptr<const Packet> frame) {
        Simulator::Schedule(m_rate.CalculateBytesTxTime(frame->GetSize()) + m_gap,
                            &LineLimits::Release, this);
    }
    void Release() {
        m_busy = false;
        m_txq->NotifyTransmittedBytes(1);  // wakes the queue disc (any non-zero count)
    }
};

// Gate a point-to-point device under a RedQueueDisc with LineLimits; returns whether it did.
inline bool HoldRedQueueInQueueDisc(Ptr<QueueDisc> qdisc, Ptr<NetDevice> device) {
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(device);
    if (!DynamicCast<RedQueueDisc>(qdisc) || !p2p ||
        !device->GetObject<NetDeviceQueueInterface>())
        return false;
    CreateObject<LineLimits>()->Gate(p2p);
    return true;
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
    LineLimits::GetTypeId();
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
