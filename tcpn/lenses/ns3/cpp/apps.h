// tcpn's TCP applications for ns-3: a source that configures its own socket (congestion
// control, recovery, every TCP option) so that flows leaving one node may differ, and a
// sink that accepts connections and counts the bytes it reads.
//
// TcpSource sends `max_bytes` (0: without end) in writes of `send_size`; with
// `app_rate_bps` > 0 the application produces data at that rate and the socket takes it
// as its buffer allows. At the stop time it closes the socket: data already in the send
// buffer is still delivered, as after a real application's close().
#pragma once
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace tcpn {
using namespace ns3;

// A socket of `socket_type` (a TcpSocketBase subclass; empty: ns-3's own) on `node`, set
// up as TcpL4Protocol's CreateSocket sets up its own, with the node's RTT estimator,
// congestion control and recovery types (a source then sets its own).
inline Ptr<TcpSocketBase> CreateTcpSocket(Ptr<Node> node, const std::string& socket_type) {
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    if (socket_type.empty()) return DynamicCast<TcpSocketBase>(tcp->CreateSocket());
    ObjectFactory factory, rtt, congestion, recovery;
    factory.SetTypeId(socket_type);
    TypeIdValue rttType, congestionType, recoveryType;
    tcp->GetAttribute("RttEstimatorType", rttType);
    tcp->GetAttribute("SocketType", congestionType);
    tcp->GetAttribute("RecoveryType", recoveryType);
    rtt.SetTypeId(rttType.Get());
    congestion.SetTypeId(congestionType.Get());
    recovery.SetTypeId(recoveryType.Get());
    Ptr<TcpSocketBase> socket = factory.Create<TcpSocketBase>();
    socket->SetNode(node);
    socket->SetTcp(tcp);
    socket->SetRtt(rtt.Create<RttEstimator>());
    socket->SetCongestionControlAlgorithm(congestion.Create<TcpCongestionOps>());
    socket->SetRecoveryAlgorithm(recovery.Create<TcpRecoveryOps>());
    return socket;
}

class TcpSource : public Application {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::TcpSource")
                                .SetParent<Application>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<TcpSource>();
        return tid;
    }
    Address remote;
    uint64_t max_bytes{0};
    uint32_t send_size{536};
    double app_rate_bps{0.0};
    ObjectFactory congestion, recovery;
    std::vector<std::pair<std::string, std::string>> socket_attributes;
    FlowRecorder recorder;
    uint64_t sent{0};  // bytes the socket accepted
    double connected_s{-1.0};  // when the handshake completed (-1: never)
    Ptr<TcpCongestionOps> congestion_ops;  // the socket's, once started
    Ptr<TcpSocketBase> tcp_socket;         // the socket, once started (kept after close)

    // cppyy cannot assign data members through Ptr<>: every setting goes through a method
    void SetRemote(const Address& address) { remote = address; }
    void SetTransfer(uint64_t bytes, uint32_t write_size, double rate_bps) {
        max_bytes = bytes;
        send_size = write_size;
        app_rate_bps = rate_bps;
    }
    void SetCongestion(const std::string& type_id) { congestion.SetTypeId(type_id); }
    void SetCongestionAttribute(const std::string& name, const std::string& value) {
        congestion.Set(name, StringValue(value));
    }
    void SetRecovery(const std::string& type_id) { recovery.SetTypeId(type_id); }
    void SetSocketType(const std::string& type_id) { socket_type = type_id; }
    // The application writes from `at_s` (absolute), not from the connection's opening
    // (a connection the scenario starts established: the handshake runs before at_s).
    void SetFirstWrite(double at_s) { m_firstWrite = Seconds(at_s); }
    void SetSocketAttribute(const std::string& name, const std::string& value) {
        socket_attributes.emplace_back(name, value);
    }

  private:
    Ptr<Socket> m_socket;
    EventId m_tick;
    bool m_connected{false};
    uint64_t m_produced{0};
    Time m_firstWrite{Seconds(-1.0)};

    std::string socket_type;  // empty: TcpL4Protocol's TcpSocketBase

    bool Bounded() const { return max_bytes > 0; }
    void StartApplication() override {
        Ptr<TcpSocketBase> socket = CreateTcpSocket(GetNode(), socket_type);
        for (const auto& kv : socket_attributes) socket->SetAttribute(kv.first, StringValue(kv.second));
        congestion_ops = congestion.Create<TcpCongestionOps>();
        socket->SetCongestionControlAlgorithm(congestion_ops);
        socket->SetRecoveryAlgorithm(recovery.Create<TcpRecoveryOps>());
        NS_ABORT_MSG_UNLESS(recorder.Connect(socket) && AttachVariant(socket, congestion_ops),
                            "tcpn: a socket trace source is missing");
        m_socket = socket;
        tcp_socket = socket;
        m_socket->Bind();
        m_socket->Connect(remote);
        m_socket->ShutdownRecv();
        m_socket->SetConnectCallback(MakeCallback(&TcpSource::Connected, this),
                                     MakeCallback(&TcpSource::Failed, this));
        m_socket->SetSendCallback(MakeCallback(&TcpSource::Space, this));
    }
    void StopApplication() override {
        Simulator::Cancel(m_tick);
        if (m_socket) m_socket->Close();
        m_socket = nullptr;
    }
    void Connected(Ptr<Socket>) {
        connected_s = Simulator::Now().GetSeconds();
        if (m_firstWrite > Simulator::Now()) {
            m_tick = Simulator::Schedule(m_firstWrite - Simulator::Now(), &TcpSource::Begin, this);
        } else {
            Begin();
        }
    }
    void Begin() {
        m_connected = true;
        if (app_rate_bps > 0) {
            Produce();
        } else {
            m_produced = Bounded() ? max_bytes : UINT64_MAX;
            Flush();
        }
    }
    void Failed(Ptr<Socket>) {}
    void Space(Ptr<Socket>, uint32_t) {
        if (m_connected) Flush();
    }
    void Produce() {
        uint64_t chunk = send_size;
        if (Bounded()) chunk = std::min<uint64_t>(chunk, max_bytes - m_produced);
        m_produced += chunk;
        Flush();
        if (!Bounded() || m_produced < max_bytes) {
            m_tick = Simulator::Schedule(Seconds(chunk * 8.0 / app_rate_bps), &TcpSource::Produce,
                                         this);
        }
    }
    void Flush() {
        while (m_socket && sent < m_produced) {
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(send_size, m_produced - sent));
            if (m_socket->GetTxAvailable() < n) return;
            int accepted = m_socket->Send(Create<Packet>(n));
            if (accepted <= 0) return;
            sent += accepted;
        }
        if (m_socket && Bounded() && sent >= max_bytes) {
            m_socket->Close();
            m_socket = nullptr;
        }
    }
};

// The receiving end. Two optional duties, both done on every segment the accepted socket
// sends (its Tx trace, inherited from the listening socket, so the SYN-ACK too):
// * SetClock: the timestamp clock reads (1 + skew) t + offset, so TSval (ms ticks) is
//   rewritten in the header before it is serialised (what Modified Vegas reads as tr);
// * EnableReports (TCP-L): every interval the last hop's LinkErrorModel counters (frames
//   arrived, frames lost; none without an error model) become the current report, which
//   each segment then carries as a ReportTag.
class TcpSink : public Application {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::TcpSink")
                                .SetParent<Application>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<TcpSink>();
        return tid;
    }
    Address local;
    std::vector<std::pair<std::string, std::string>> socket_attributes;
    uint64_t received{0};
    uint64_t reports_taken{0};

    void SetLocal(const Address& address) { local = address; }
    // The listening socket's TypeId (its accepted sockets are forks of it; empty: ns-3's)
    void SetSocketType(const std::string& type_id) { m_socketType = type_id; }
    // The listening socket's congestion control (its accepted sockets fork it; empty: the
    // node's): where ns-3 keeps a receiver-side echo such as TcpDctcp's CE state machine.
    void SetCongestion(const std::string& type_id) { m_congestion.SetTypeId(type_id); m_ownCongestion = true; }
    void SetCongestionAttribute(const std::string& name, const std::string& value) {
        m_congestion.Set(name, StringValue(value));
    }
    void SetClock(double rate, double offset_s) {
        m_clock = true;
        m_clockRate = rate;
        m_offsetNs = std::llround(offset_s * 1e9);
    }
    void EnableReports(double interval_s) { m_reportInterval = interval_s; }
    void SetReportLink(Ptr<LinkErrorModel> link) { m_reportLink = link; }
    // TSval at simulation time `now` on this receiver's clock (RFC 7323 ms ticks).
    uint32_t TsValue(Time now) const {
        int64_t ns = now.GetNanoSeconds();
        int64_t ms = m_clockRate == 1.0
                         ? (ns + m_offsetNs) / 1000000
                         : static_cast<int64_t>(std::floor((m_clockRate * ns + m_offsetNs) / 1e6));
        return static_cast<uint32_t>(ms & 0xFFFFFFFF);
    }
    void SetSocketAttribute(const std::string& name, const std::string& value) {
        socket_attributes.emplace_back(name, value);
    }

  private:
    Ptr<Socket> m_listener;
    std::string m_socketType;
    ObjectFactory m_congestion;
    bool m_ownCongestion{false};
    std::vector<Ptr<Socket>> m_accepted;
    bool m_clock{false};
    double m_clockRate{1.0};
    int64_t m_offsetNs{0};
    double m_reportInterval{0.0};
    Ptr<LinkErrorModel> m_reportLink;
    ReportTag m_report;
    EventId m_reportEvent;

    void StartApplication() override {
        Ptr<TcpSocketBase> listener = CreateTcpSocket(GetNode(), m_socketType);
        for (const auto& kv : socket_attributes) listener->SetAttribute(kv.first, StringValue(kv.second));
        if (m_ownCongestion) listener->SetCongestionControlAlgorithm(m_congestion.Create<TcpCongestionOps>());
        m_listener = listener;
        if (m_clock || m_reportInterval > 0) {
            NS_ABORT_MSG_UNLESS(m_listener->TraceConnectWithoutContext(
                                    "Tx", MakeCallback(&TcpSink::Sending, this)),
                                "tcpn: the socket has no Tx trace");
        }
        if (m_reportInterval > 0) {
            m_reportEvent = Simulator::Schedule(Seconds(m_reportInterval), &TcpSink::TakeReport, this);
        }
        m_listener->Bind(local);
        m_listener->Listen();
        m_listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                      MakeCallback(&TcpSink::Accept, this));
    }
    void StopApplication() override {
        Simulator::Cancel(m_reportEvent);
        for (auto& s : m_accepted) s->Close();
        if (m_listener) m_listener->Close();
    }
    void Accept(Ptr<Socket> socket, const Address&) {
        socket->SetRecvCallback(MakeCallback(&TcpSink::Read, this));
        m_accepted.push_back(socket);
    }
    void Sending(Ptr<const Packet> segment, const TcpHeader& header, Ptr<const TcpSocketBase>) {
        if (m_clock) {
            Ptr<const TcpOptionTS> ts = DynamicCast<const TcpOptionTS>(header.GetOption(TcpOption::TS));
            // the header is serialised after this trace: its TSval is the receiver clock's
            if (ts) ConstCast<TcpOptionTS>(ts)->SetTimestamp(TsValue(Simulator::Now()));
        }
        if (m_report.time_s >= 0) segment->AddPacketTag(m_report);
    }
    void TakeReport() {
        m_report.time_s = Simulator::Now().GetSeconds();
        m_report.sent = m_reportLink ? m_reportLink->arrivals : 0;
        m_report.failed = m_reportLink ? m_reportLink->losses.Size() : 0;
        ++reports_taken;
        m_reportEvent = Simulator::Schedule(Seconds(m_reportInterval), &TcpSink::TakeReport, this);
    }
    void Read(Ptr<Socket> socket) {
        while (Ptr<Packet> p = socket->Recv()) {
            if (p->GetSize() == 0) break;
            received += p->GetSize();
        }
    }
};

}  // namespace tcpn
