// tcpn's ns-3 recorders: trace sinks that store (time, value) rows in C++ vectors, so that
// no Python code runs per simulated event. Python reads the vectors once, after the run,
// through numpy views of data() (see tcpn/lenses/ns3/builder.py).
#pragma once
#include <cstdint>
#include <vector>

namespace tcpn {
using namespace ns3;

// Columns of one time series: t (seconds) and v.
struct Series {
    std::vector<double> t, v;
    void Add(double value) {
        t.push_back(Simulator::Now().GetSeconds());
        v.push_back(value);
    }
    size_t Size() const { return t.size(); }
};

// Flow identification: every flow has its own receiver port (port_base + flow index), so
// data segments carry it as destination port and ACKs as source port.
struct FlowPorts {
    uint16_t base{0};
    uint16_t count{0};
    // flow index and direction (+1 data direction, -1 ACK direction) of a TCP header
    int32_t Flow(const TcpHeader& h, int32_t* direction) const {
        uint16_t d = h.GetDestinationPort(), s = h.GetSourcePort();
        if (d >= base && d < base + count) { *direction = 1; return d - base; }
        if (s >= base && s < base + count) { *direction = -1; return s - base; }
        *direction = 0;
        return -1;
    }
};

// Packet-level events of one queue or one lossy link direction. Columns:
//   t, event (0 enqueue, 1 dequeue, 2 drop, 3 mark), flow (-1 unknown), direction (+1 data,
//   -1 ACK), seq (raw TCP sequence number of data, raw ACK number of ACKs), payload bytes,
//   IP bytes, and the queue length after the event in packets and IP bytes.
struct PacketEvents {
    FlowPorts ports;
    std::vector<double> t, payload, ip_bytes, len_packets, len_bytes;
    std::vector<int32_t> event, flow, direction;
    std::vector<int64_t> seq;
    double n_packets{0}, n_bytes{0};

    void Add(int32_t kind, Ptr<const Packet> tcpSegment, uint32_t ipBytes) {
        TcpHeader h;
        int32_t dir = 0, f = -1;
        int64_t number = -1;
        uint32_t pay = 0;
        if (tcpSegment->PeekHeader(h) != 0) {
            f = ports.Flow(h, &dir);
            pay = tcpSegment->GetSize() - h.GetSerializedSize();
            number = dir < 0 ? h.GetAckNumber().GetValue() : h.GetSequenceNumber().GetValue();
        }
        t.push_back(Simulator::Now().GetSeconds());
        event.push_back(kind);
        flow.push_back(f);
        direction.push_back(dir);
        seq.push_back(number);
        payload.push_back(pay);
        ip_bytes.push_back(ipBytes);
        len_packets.push_back(n_packets);
        len_bytes.push_back(n_bytes);
    }
    size_t Size() const { return t.size(); }
};

// A queue "A->B" is the root queue disc on A's device plus the device's one-packet
// transmit queue: enqueue when the queue disc accepts a packet, dequeue when the device
// starts transmitting it.
struct QueueRecorder {
    PacketEvents events;
    uint32_t l2_bytes{2};  // point-to-point header the device adds

    void SetPorts(uint16_t base, uint16_t count) {
        events.ports.base = base;
        events.ports.count = count;
    }
    void OnEnqueue(Ptr<const QueueDiscItem> item) {
        events.n_packets += 1;
        events.n_bytes += item->GetSize();
        events.Add(0, item->GetPacket(), item->GetSize());
    }
    void OnDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char*) {
        events.Add(2, item->GetPacket(), item->GetSize());
    }
    void OnDropAfterDequeue(Ptr<const QueueDiscItem> item, const char*) {
        events.n_packets -= 1;
        events.n_bytes -= item->GetSize();
        events.Add(2, item->GetPacket(), item->GetSize());
    }
    void OnMark(Ptr<const QueueDiscItem> item, const char*) {
        events.Add(3, item->GetPacket(), item->GetSize());
    }
    void OnDeviceDequeue(Ptr<const Packet> frame) {
        Ptr<Packet> p = frame->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        p->RemoveHeader(ppp);
        p->RemoveHeader(ip);
        uint32_t size = frame->GetSize() - l2_bytes;
        events.n_packets -= 1;
        events.n_bytes -= size;
        events.Add(1, p, size);
    }
};

inline bool ConnectQueue(Ptr<QueueDisc> qdisc, Ptr<NetDevice> device, QueueRecorder* r) {
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(device);
    bool ok = p2p != nullptr;
    ok = ok && qdisc->TraceConnectWithoutContext(
                   "Enqueue", MakeCallback(&QueueRecorder::OnEnqueue, r));
    ok = ok && qdisc->TraceConnectWithoutContext(
                   "DropBeforeEnqueue", MakeCallback(&QueueRecorder::OnDropBeforeEnqueue, r));
    ok = ok && qdisc->TraceConnectWithoutContext(
                   "DropAfterDequeue", MakeCallback(&QueueRecorder::OnDropAfterDequeue, r));
    ok = ok && qdisc->TraceConnectWithoutContext("Mark", MakeCallback(&QueueRecorder::OnMark, r));
    ok = ok && p2p->GetQueue()->TraceConnectWithoutContext(
                   "Dequeue", MakeCallback(&QueueRecorder::OnDeviceDequeue, r));
    return ok;
}

// ns-3's RttMeanDeviation that hands every sample to `on_sample`. The socket's "LastRTT"
// trace is a TracedValue, which calls back only when a sample differs from the one
// before: behind a standing queue, where samples repeat, it kept about one in five (207
// of 1,071 in S1's Tahoe experiment, 10 s) and their mean was 12-15 % below the samples'.
class SampledRtt : public RttMeanDeviation {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::SampledRtt")
                                .SetParent<RttMeanDeviation>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<SampledRtt>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    SampledRtt() = default;
    SampledRtt(const SampledRtt& other) = default;
    Ptr<RttEstimator> Copy() const override { return CopyObject<SampledRtt>(this); }
    void Measurement(Time sample) override {
        RttMeanDeviation::Measurement(sample);
        if (!on_sample.IsNull()) on_sample(sample);
    }
    Callback<void, Time> on_sample;
};

// Per-flow sender state: cwnd and ssthresh at each change, every RTT sample (the socket's
// estimator replaced by a SampledRtt of the same attributes), congestion state changes
// (entering CA_LOSS = a retransmission timeout), and a connection that gave up opening
// (SYN_SENT -> CLOSED: its last SYN unanswered after SynRetries SYNs).
struct FlowRecorder {
    Series cwnd, ssthresh, rtt, cong_state, connect_fail;
    void OnCwnd(uint32_t, uint32_t now) { cwnd.Add(now); }
    void OnSsthresh(uint32_t, uint32_t now) { ssthresh.Add(now); }
    void OnRtt(Time sample) { rtt.Add(sample.GetSeconds()); }
    void OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
        cong_state.Add(static_cast<double>(now));
    }
    void OnState(TcpSocket::TcpStates_t before, TcpSocket::TcpStates_t now) {
        if (before == TcpSocket::SYN_SENT && now == TcpSocket::CLOSED) connect_fail.Add(1.0);
    }
    bool Connect(Ptr<Socket> socket) {
        Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(socket);
        if (tcp == nullptr) return false;
        Ptr<SampledRtt> sampled = CreateObject<SampledRtt>();  // before the connection opens
        sampled->on_sample = MakeCallback(&FlowRecorder::OnRtt, this);
        tcp->SetRtt(sampled);
        bool ok = socket->TraceConnectWithoutContext(
            "CongestionWindow", MakeCallback(&FlowRecorder::OnCwnd, this));
        ok = ok && socket->TraceConnectWithoutContext(
                       "SlowStartThreshold", MakeCallback(&FlowRecorder::OnSsthresh, this));
        ok = ok && socket->TraceConnectWithoutContext(
                       "CongState", MakeCallback(&FlowRecorder::OnCongState, this));
        ok = ok && socket->TraceConnectWithoutContext("State",
                                                      MakeCallback(&FlowRecorder::OnState, this));
        return ok;
    }
};

}  // namespace tcpn
