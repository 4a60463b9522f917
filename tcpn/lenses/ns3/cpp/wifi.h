#pragma once
// The 802.11 last hop of study S3 in ns-3 (tcpn/lenses/ns3/wireless.py builds it).
// Compiled after queues.h, recorders.h and apps.h, only when a plan has a wireless link.
#include <cmath>

namespace tcpn {
using namespace ns3;

// Frame errors of the scenario on a Wifi PHY (its PostReceptionErrorModel, which ns-3.44
// hands the MSDU: LLC/SNAP + payload, no MAC header). Only frames that carry IPv4 are
// drawn; MAC ACKs (no MSDU) and ARP always pass. The byte model
// loses a frame with PER = 1 - (1 - BER)^(IP bytes + extra_bytes), extra_bytes being the
// scenario's l2_header_bytes plus the TCP option bytes ns-3's segments lack, so the PER
// is the net model's, not that of ns-3's shorter 802.11 frame. Counts every data frame
// that reaches the PHY (arrivals: one per transmission attempt) and records the lost ones
// as flow events, as LinkErrorModel does on point-to-point links.
class WifiLinkErrorModel : public LinkErrorModel {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::WifiLinkErrorModel")
                                .SetParent<LinkErrorModel>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<WifiLinkErrorModel>();
        return tid;
    }
    uint32_t extra_bytes{0};

    // set members through methods: cppyy's Ptr<> proxy keeps an assigned attribute on the
    // Python side and never writes the C++ member
    void SetExtraBytes(uint32_t bytes) { extra_bytes = bytes; }
    void Seed(int64_t stream) { m_draw->SetStream(stream); }

  private:
    Ptr<UniformRandomVariable> m_draw = CreateObject<UniformRandomVariable>();

    bool DoCorrupt(Ptr<Packet> frame) override {
        Ptr<Packet> p = frame->Copy();  // the MSDU (LLC/SNAP + IPv4), MAC header removed
        LlcSnapHeader llc;
        if (p->GetSize() < llc.GetSerializedSize() + 20) return false;
        p->RemoveHeader(llc);
        if (llc.GetType() != 0x0800) return false;
        Ipv4Header ip;
        p->RemoveHeader(ip);
        uint32_t ip_bytes = ip.GetPayloadSize() + ip.GetSerializedSize();
        ++arrivals;
        double per = per_byte ? 1.0 - std::pow(1.0 - rate, ip_bytes + extra_bytes) : rate;
        bool lose = per > 0 && m_draw->GetValue() < per;
        if (lose && record_attempts) losses.Add(2, p, ip_bytes);
        return lose;
    }

  public:
    // With MAC retries a failed attempt is not a lost packet: the net counts a packet lost
    // when all its attempts failed, so record_attempts is false and the sender's MAC
    // reports the frames it gives up on (DroppedMpdu, retry limit reached) here instead.
    bool record_attempts{true};
    void RecordAttempts(bool on) { record_attempts = on; }
    void OnDropped(WifiMacDropReason reason, Ptr<const WifiMpdu> mpdu) {
        if (reason != WIFI_MAC_DROP_REACHED_RETRY_LIMIT || !mpdu->GetHeader().IsData()) return;
        Ptr<Packet> p = mpdu->GetPacket()->Copy();
        LlcSnapHeader llc;
        if (p->GetSize() < llc.GetSerializedSize() + 20) return;
        p->RemoveHeader(llc);
        if (llc.GetType() != 0x0800) return;
        Ipv4Header ip;
        p->RemoveHeader(ip);
        losses.Add(2, p, ip.GetPayloadSize() + ip.GetSerializedSize());
    }

    // Without MAC ACKs a frame the receiver's PHY cannot receive because it is itself
    // transmitting (TXING, RECEPTION_ABORTED_BY_TX: the two stations' backoffs ended in the
    // same slot, a collision) never reaches DoCorrupt; it is lost on the link all the same,
    // as the net counts it (a frame that did not get through, whatever the cause: the
    // study's link error rate is the sender's frames lost over frames sent, §3.1). So it
    // counts as an arrival and a loss here, and TCP-L's report sees it.
    void OnRxDrop(Ptr<const Packet> frame, WifiPhyRxfailureReason reason) {
        if (!record_attempts || (reason != TXING && reason != RECEPTION_ABORTED_BY_TX)) return;
        Ptr<Packet> p = frame->Copy();  // MAC header + MSDU + FCS
        WifiMacHeader header;
        p->RemoveHeader(header);
        LlcSnapHeader llc;
        if (!header.IsData() || p->GetSize() < llc.GetSerializedSize() + 20) return;
        p->RemoveHeader(llc);
        if (llc.GetType() != 0x0800) return;
        Ipv4Header ip;
        p->RemoveHeader(ip);
        ++arrivals;
        ++collided;
        losses.Add(2, p, ip.GetPayloadSize() + ip.GetSerializedSize());
    }
    uint64_t collided{0};
};

// Count on ``model`` the IPv4 data frames ``receiver``'s PHY dropped because it was
// transmitting (WifiLinkErrorModel::OnRxDrop; ACK-less links).
inline bool ConnectCollisions(Ptr<NetDevice> receiver, Ptr<WifiLinkErrorModel> model) {
    return DynamicCast<WifiNetDevice>(receiver)->GetPhy()->TraceConnectWithoutContext(
        "PhyRxDrop", MakeCallback(&WifiLinkErrorModel::OnRxDrop, PeekPointer(model)));
}

inline bool ConnectFinalDrops(Ptr<NetDevice> sender, Ptr<WifiLinkErrorModel> model) {
    return DynamicCast<WifiNetDevice>(sender)->GetMac()->TraceConnectWithoutContext(
        "DroppedMpdu", MakeCallback(&WifiLinkErrorModel::OnDropped, PeekPointer(model)));
}

// Unicast data without MAC acknowledgment ("ACK-less 802.11"): every QoS data frame is
// sent with the No Ack policy, so the receiver sends no MAC ACK and the sender neither
// waits for one nor retries. Other frames keep the default acknowledgment.
class NoAckManager : public WifiDefaultAckManager {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::NoAckManager")
                                .SetParent<WifiDefaultAckManager>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<NoAckManager>();
        return tid;
    }
    std::unique_ptr<WifiAcknowledgment> TryAddMpdu(Ptr<const WifiMpdu> mpdu,
                                                   const WifiTxParameters& params) override {
        const WifiMacHeader& header = mpdu->GetHeader();
        if (header.IsQosData()) {
            auto none = std::make_unique<WifiNoAck>();
            none->SetQosAckPolicy(header.GetAddr1(), header.GetQosTid(), WifiMacHeader::NO_ACK);
            return none;
        }
        return WifiDefaultAckManager::TryAddMpdu(mpdu, params);
    }
};

inline void UseNoAck(Ptr<NetDevice> device) {
    Ptr<WifiMac> mac = DynamicCast<WifiNetDevice>(device)->GetMac();
    Ptr<NoAckManager> manager = CreateObject<NoAckManager>();
    manager->SetWifiMac(mac);
    mac->GetFrameExchangeManager()->SetAckManager(manager);
}

// The MAC ACK at the basic rate, as ns-2's Mac802_11::sendACK sends it (txtime(ACKlen,
// basicRate_), 1 Mbit/s by default) and as 802.11-2016 §10.6.6.5 reads with the basic rate
// set {basic}: the highest basic rate not above the rate of the frame answered. ns-3.44's
// AdhocWifiMac, on its first frame to or from a peer (IsBrandNew), calls
// WifiRemoteStationManager::AddAllSupportedModes, which adds every mandatory mode of the
// PHY to the BSS basic rate set; ns-3's DsssPhy marks all four 802.11b rates mandatory, so
// GetControlAnswerMode (GetAckTxVector) answers an 11 Mbit/s frame at 11 Mbit/s. Here the
// peer is registered first as that branch would (every PHY mode supported, disassociated,
// so no longer brand new) but the basic rate set holds ``basic`` only: the ACK's TxVector,
// the sender's ACK timeout and the NAV then all use it.
inline void UseBasicRate(Ptr<NetDevice> device, Ptr<NetDevice> peer, const std::string& basic) {
    Ptr<WifiNetDevice> wifi = DynamicCast<WifiNetDevice>(device);
    Ptr<WifiRemoteStationManager> manager = wifi->GetRemoteStationManager();
    Mac48Address to = Mac48Address::ConvertFrom(peer->GetAddress());
    for (const auto& mode : wifi->GetPhy()->GetModeList()) manager->AddSupportedMode(to, mode);
    manager->RecordDisassociated(to);
    manager->AddBasicMode(WifiMode(basic));
}

// The best-effort access category of a QoS MAC waits DIFS (AIFSN 2), as the DCF of a
// MAC without QoS does, instead of EDCA's AIFS[AC_BE] (AIFSN 3): the ACK-less link runs
// on a QoS MAC only for its No Ack policy.
inline void UseDifs(Ptr<NetDevice> device) {
    DynamicCast<WifiNetDevice>(device)->GetMac()->GetQosTxop(AC_BE)->SetAifsn(2);
}

// The sender's MAC view of one link direction: data transmission attempts at the PHY and
// the station manager's failed (no MAC ACK) and finally failed (retries exhausted) frames.
struct MacCounters {
    uint64_t tx_data{0}, failed{0}, final_failed{0};
    void OnPhyTx(WifiConstPsduMap psdus, WifiTxVector, double) {
        for (auto& [id, psdu] : psdus) {
            for (auto& mpdu : *PeekPointer(psdu)) {
                if (mpdu->GetHeader().IsData()) ++tx_data;
            }
        }
    }
    void OnFailed(Mac48Address) { ++failed; }
    void OnFinalFailed(Mac48Address) { ++final_failed; }
};

inline bool ConnectMacCounters(Ptr<NetDevice> device, MacCounters* c) {
    Ptr<WifiNetDevice> wifi = DynamicCast<WifiNetDevice>(device);
    Ptr<WifiRemoteStationManager> manager = wifi->GetRemoteStationManager();
    return wifi->GetPhy()->TraceConnectWithoutContext(
               "PhyTxPsduBegin", MakeCallback(&MacCounters::OnPhyTx, c)) &&
           manager->TraceConnectWithoutContext("MacTxDataFailed",
                                               MakeCallback(&MacCounters::OnFailed, c)) &&
           manager->TraceConnectWithoutContext("MacTxFinalDataFailed",
                                               MakeCallback(&MacCounters::OnFinalFailed, c));
}

// The station's radio as the net lens's energy model sees it (station_energy): every PSDU
// its PHY starts to send (PhyTxPsduBegin: each MAC attempt and each MAC ACK) and every PSDU
// whose payload it starts to receive (PhyRxBegin: before the PostReceptionErrorModel decides,
// so corrupted frames count, as in the net), and the seconds its PHY spends sending and
// receiving (the state helper's State trace). A frame carrying IPv4 counts IP bytes + extra_bytes (the
// scenario's l2_header_bytes and the TCP option bytes ns-3's segments lack, as the error
// model draws them); a MAC ACK its 14 bytes; anything else (ARP) its PSDU bytes. Receiving
// time includes the PLCP preamble and header (CCA_BUSY), as transmitting time does (TX).
struct StationRadio {
    uint32_t extra_bytes{0};
    uint64_t tx_frames{0}, tx_bytes{0}, tx_acks{0}, tx_psdu_bytes{0};
    uint64_t rx_frames{0}, rx_bytes{0}, rx_acks{0}, rx_psdu_bytes{0};
    double tx_s{0}, rx_s{0};
    double ack_bps{0};  // the data rate of the last MAC ACK the station sent

    // (is a MAC ACK, bytes as the net counts them) of one MPDU: header and MSDU
    std::pair<bool, uint64_t> Frame(const WifiMacHeader& header, Ptr<const Packet> msdu,
                                    uint32_t psdu_bytes) const {
        if (header.IsAck()) return {true, psdu_bytes};
        if (header.IsData() && msdu && msdu->GetSize() >= 28) {
            Ptr<Packet> p = msdu->Copy();
            LlcSnapHeader llc;
            p->RemoveHeader(llc);
            if (llc.GetType() == 0x0800) {
                Ipv4Header ip;
                p->PeekHeader(ip);
                return {false, ip.GetPayloadSize() + ip.GetSerializedSize() + extra_bytes};
            }
        }
        return {false, psdu_bytes};
    }
    void OnTx(WifiConstPsduMap psdus, WifiTxVector vector, double) {
        for (auto& [id, psdu] : psdus) {
            for (auto& mpdu : *PeekPointer(psdu)) {
                auto [ack, bytes] = Frame(mpdu->GetHeader(), mpdu->GetPacket(), mpdu->GetSize());
                if (ack) ack_bps = static_cast<double>(vector.GetMode().GetDataRate(vector));
                (ack ? tx_acks : tx_frames) += 1;
                tx_bytes += ack ? 0 : bytes;
                tx_psdu_bytes += mpdu->GetSize();
            }
        }
    }
    void OnRx(Ptr<const Packet> psdu, RxPowerWattPerChannelBand) {
        Ptr<Packet> p = psdu->Copy();
        WifiMacHeader header;
        p->RemoveHeader(header);  // the MSDU follows (the FCS trailer is not read)
        auto [ack, bytes] = Frame(header, p, psdu->GetSize());
        (ack ? rx_acks : rx_frames) += 1;
        rx_bytes += ack ? 0 : bytes;
        rx_psdu_bytes += psdu->GetSize();
    }
    void OnState(Time, Time duration, WifiPhyState state) {
        if (state == WifiPhyState::TX) tx_s += duration.GetSeconds();
        // a received frame's PLCP preamble and header are CCA_BUSY, its payload RX; with
        // two stations 1 m apart nothing else makes the medium busy
        if (state == WifiPhyState::RX || state == WifiPhyState::CCA_BUSY)
            rx_s += duration.GetSeconds();
    }
};

inline bool ConnectStationRadio(Ptr<NetDevice> device, StationRadio* r) {
    Ptr<WifiPhy> phy = DynamicCast<WifiNetDevice>(device)->GetPhy();
    return phy->TraceConnectWithoutContext("PhyTxPsduBegin",
                                           MakeCallback(&StationRadio::OnTx, r)) &&
           phy->TraceConnectWithoutContext("PhyRxBegin", MakeCallback(&StationRadio::OnRx, r)) &&
           phy->GetState()->TraceConnectWithoutContext("State",
                                                       MakeCallback(&StationRadio::OnState, r));
}

// A queue disc recorder on a Wifi device: the queue disc's traces, and departures from
// the MAC's best-effort queue (packets there hold LLC/SNAP + IPv4). Only IPv4 is
// recorded: unlike a point-to-point link, a Wifi link also carries ARP.
struct WifiQueueTap {
    QueueRecorder* r;
    static bool Ip(Ptr<const QueueDiscItem> item) { return item->GetProtocol() == 0x0800; }
    void OnEnqueue(Ptr<const QueueDiscItem> item) { if (Ip(item)) r->OnEnqueue(item); }
    void OnDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char* why) {
        if (Ip(item)) r->OnDropBeforeEnqueue(item, why);
    }
    void OnDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* why) {
        if (Ip(item)) r->OnDropAfterDequeue(item, why);
    }
    void OnMark(Ptr<const QueueDiscItem> item, const char* why) {
        if (Ip(item)) r->OnMark(item, why);
    }
    void OnDequeue(Ptr<const WifiMpdu> mpdu) {
        if (!mpdu->GetHeader().IsData()) return;
        Ptr<Packet> p = mpdu->GetPacket()->Copy();
        LlcSnapHeader llc;
        Ipv4Header ip;
        p->RemoveHeader(llc);
        if (llc.GetType() != 0x0800) return;
        p->RemoveHeader(ip);
        uint32_t size = ip.GetPayloadSize() + ip.GetSerializedSize();
        r->events.n_packets -= 1;
        r->events.n_bytes -= size;
        r->events.Add(1, p, size);
    }
};

inline bool ConnectWifiQueue(Ptr<QueueDisc> qdisc, Ptr<NetDevice> device, QueueRecorder* r,
                             WifiQueueTap* tap) {
    tap->r = r;
    Ptr<WifiMac> mac = DynamicCast<WifiNetDevice>(device)->GetMac();
    return qdisc->TraceConnectWithoutContext("Enqueue",
                                             MakeCallback(&WifiQueueTap::OnEnqueue, tap)) &&
           qdisc->TraceConnectWithoutContext(
               "DropBeforeEnqueue", MakeCallback(&WifiQueueTap::OnDropBeforeEnqueue, tap)) &&
           qdisc->TraceConnectWithoutContext(
               "DropAfterDequeue", MakeCallback(&WifiQueueTap::OnDropAfterDequeue, tap)) &&
           qdisc->TraceConnectWithoutContext("Mark", MakeCallback(&WifiQueueTap::OnMark, tap)) &&
           mac->GetTxopQueue(mac->GetQosSupported() ? AC_BE : AC_BE_NQOS)->TraceConnectWithoutContext(
               "Dequeue", MakeCallback(&WifiQueueTap::OnDequeue, tap));
}

inline void SetPostReceptionErrorModel(Ptr<NetDevice> device, Ptr<ErrorModel> model) {
    DynamicCast<WifiNetDevice>(device)->GetPhy()->SetPostReceptionErrorModel(model);
}

}  // namespace tcpn

namespace tcpn {
// A raw-IP pcap of one IPv4 interface (sent packets when IP hands them down, received
// ones when IP takes them); the file is closed when the simulation is destroyed.
struct Ipv4Capture {
    Ptr<PcapFileWrapper> file;
    uint32_t interface{0};
    void OnPacket(Ptr<const Packet> packet, Ptr<Ipv4>, uint32_t i) {
        if (i == interface) file->Write(Simulator::Now(), packet);
    }
    void Close() { file = nullptr; }
};

inline bool CaptureIpv4(Ptr<NetDevice> device, const std::string& path, uint32_t snap,
                        Ipv4Capture* c) {
    Ptr<Ipv4L3Protocol> ip = device->GetNode()->GetObject<Ipv4L3Protocol>();
    c->interface = ip->GetInterfaceForDevice(device);
    c->file = PcapHelper().CreateFile(path, std::ios::out,
                                      static_cast<PcapHelper::DataLinkType>(228), snap);  // IPv4
    Simulator::ScheduleDestroy(&Ipv4Capture::Close, c);
    return ip->TraceConnectWithoutContext("Tx", MakeCallback(&Ipv4Capture::OnPacket, c)) &&
           ip->TraceConnectWithoutContext("Rx", MakeCallback(&Ipv4Capture::OnPacket, c));
}
}  // namespace tcpn
