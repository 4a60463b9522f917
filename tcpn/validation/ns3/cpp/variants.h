// tcpn's TCP variants that ns-3.44 does not have, as congestion-control and recovery
// classes (docs/validation.md says what each differs in from tcpn's net model).
#pragma once

namespace tcpn {
using namespace ns3;

// Tahoe (4.3BSD-Tahoe, RFC 5681 without fast recovery): on the third duplicate ACK the
// socket retransmits the missing segment; ssthresh = max(FlightSize / 2, 2 MSS) comes from
// TcpNewReno::GetSsThresh, and this recovery sets cwnd to one segment; further duplicate
// ACKs do not inflate it and every new ACK grows it by one segment (slow start). ns-3's
// socket still retransmits the next hole on each partial ACK of the loss window.
class TahoeRecovery : public TcpClassicRecovery {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::TahoeRecovery")
                                .SetParent<TcpClassicRecovery>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<TahoeRecovery>();
        return tid;
    }
    TahoeRecovery() = default;
    TahoeRecovery(const TahoeRecovery& other) : TcpClassicRecovery(other) {}
    std::string GetName() const override { return "TahoeRecovery"; }
    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t, uint32_t) override {
        tcb->m_cWnd = tcb->m_segmentSize;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t, bool isDupAck) override {
        if (!isDupAck) tcb->m_cWnd = tcb->m_cWnd + tcb->m_segmentSize;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void ExitRecovery(Ptr<TcpSocketState> tcb) override { tcb->m_cWndInfl = tcb->m_cWnd; }
    Ptr<TcpRecoveryOps> Fork() override { return CopyObject<TahoeRecovery>(this); }
};

}  // namespace tcpn
