// tcpn's queue disc and link error model for ns-3.
//
// TailQueueDisc is one drop-tail discipline that also does what tcpn's scenario queues need
// and ns-3 lacks: CE marking above a threshold K (marking, never dropping, below the
// limit), small-packets-first with a shared or split buffer, and a token-bucket policer in
// front of the queue. Its limit and threshold count the packet waiting in the device's
// one-packet transmit queue too (SetDeviceQueue), so that "the queue holds n packets"
// means the same as in tcpn's net model (packets waiting, not the one being serialised).
//
// LinkErrorModel drops packets at the receiving end of a link direction with probability
// `rate` (per packet) or 1 - (1 - rate)^size (per byte, size = the IP packet plus the
// scenario's link-layer header, SetModelL2; 2, the PPP header, as ns-3's RateErrorModel), or
// the listed arrival numbers (counted from 0, as ReceiveListErrorModel); unlike ns-3's
// models it records every loss with its flow. The handshake of a connection that the
// scenario starts established (SkipHandshake) is neither lost nor counted.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace tcpn {
using namespace ns3;

class TailQueueDisc : public QueueDisc {
  public:
    static TypeId GetTypeId() {
        static TypeId tid =
            TypeId("tcpn::TailQueueDisc")
                .SetParent<QueueDisc>()
                .SetGroupName("Tcpn")
                .AddConstructor<TailQueueDisc>()
                .AddAttribute("Limit", "capacity in Unit (packets or IP bytes)",
                              UintegerValue(100), MakeUintegerAccessor(&TailQueueDisc::m_limit),
                              MakeUintegerChecker<uint32_t>(1))
                .AddAttribute("Bytes", "whether Limit and MarkThreshold count IP bytes",
                              BooleanValue(false), MakeBooleanAccessor(&TailQueueDisc::m_bytes),
                              MakeBooleanChecker())
                .AddAttribute("MarkThreshold", "CE-mark arrivals when more than this is held"
                              " (negative: never)", DoubleValue(-1.0),
                              MakeDoubleAccessor(&TailQueueDisc::m_markThreshold),
                              MakeDoubleChecker<double>())
                .AddAttribute("SmallBytes", "packets of at most this many IP bytes go first"
                              " (0: one class)", UintegerValue(0),
                              MakeUintegerAccessor(&TailQueueDisc::m_smallBytes),
                              MakeUintegerChecker<uint32_t>())
                .AddAttribute("SplitBuffer", "each class has its own Limit (else shared)",
                              BooleanValue(false),
                              MakeBooleanAccessor(&TailQueueDisc::m_split), MakeBooleanChecker())
                .AddAttribute("PolicerRate", "token rate of a policer in front (0: none)",
                              DataRateValue(DataRate(0)),
                              MakeDataRateAccessor(&TailQueueDisc::m_policerRate),
                              MakeDataRateChecker())
                .AddAttribute("PolicerDepth", "bucket depth of the policer in IP bytes",
                              UintegerValue(0), MakeUintegerAccessor(&TailQueueDisc::m_depth),
                              MakeUintegerChecker<uint32_t>());
        return tid;
    }
    TailQueueDisc() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}
    // the device queue under this queue disc, whose waiting packet counts as held
    void SetDeviceQueue(Ptr<Queue<Packet>> queue, uint32_t l2_bytes) {
        m_deviceQueue = queue;
        m_l2Bytes = l2_bytes;
    }

  private:
    uint32_t m_limit{100};
    bool m_bytes{false};
    double m_markThreshold{-1.0};
    uint32_t m_smallBytes{0};
    bool m_split{false};
    DataRate m_policerRate{0};
    uint32_t m_depth{0};
    double m_tokens{0};
    Time m_lastFill{0};
    Ptr<Queue<Packet>> m_deviceQueue;
    uint32_t m_l2Bytes{2};
    double m_held[2]{0, 0};  // per class, in Unit

    double Amount(Ptr<const QueueDiscItem> item) const {
        return m_bytes ? static_cast<double>(item->GetSize()) : 1.0;
    }
    // what waits in the device's transmit queue (IP bytes: without the PPP headers)
    double DeviceHeld() const {
        if (!m_deviceQueue) return 0.0;
        double n = m_deviceQueue->GetNPackets();
        return m_bytes ? m_deviceQueue->GetNBytes() - m_l2Bytes * n : n;
    }
    bool Conforms(Ptr<const QueueDiscItem> item) {
        if (m_policerRate.GetBitRate() == 0) return true;
        Time now = Simulator::Now();
        m_tokens = std::min<double>(
            m_depth, m_tokens + (now - m_lastFill).GetSeconds() * m_policerRate.GetBitRate() / 8.0);
        m_lastFill = now;
        if (m_tokens < item->GetSize()) return false;
        m_tokens -= item->GetSize();
        return true;
    }

    bool DoEnqueue(Ptr<QueueDiscItem> item) override {
        size_t band = (m_smallBytes > 0 && item->GetSize() <= m_smallBytes) ? 0 : 1;
        double amount = Amount(item);
        double device = DeviceHeld();
        double held = m_split ? m_held[band] : m_held[0] + m_held[1] + device;
        if (!Conforms(item)) {
            DropBeforeEnqueue(item, "Policer: out of tokens");
            return false;
        }
        if (held + amount > m_limit) {
            DropBeforeEnqueue(item, "Queue limit exceeded");
            return false;
        }
        if (m_markThreshold >= 0 && m_held[0] + m_held[1] + device > m_markThreshold) {
            Mark(item, "Threshold exceeded");  // false for a non-ECT packet: kept unmarked
        }
        if (!GetInternalQueue(band)->Enqueue(item)) return false;
        m_held[band] += amount;
        return true;
    }
    Ptr<QueueDiscItem> DoDequeue() override {
        for (size_t band = 0; band < 2; ++band) {
            Ptr<QueueDiscItem> item = GetInternalQueue(band)->Dequeue();
            if (item) {
                m_held[band] -= Amount(item);
                return item;
            }
        }
        return nullptr;
    }
    bool CheckConfig() override {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
        if (GetNInternalQueues() == 0) {
            for (int band = 0; band < 2; ++band) {
                AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                    "MaxSize", QueueSizeValue(QueueSize("4294967295p"))));
            }
        }
        return GetNInternalQueues() == 2;
    }
    void InitializeParams() override {
        m_tokens = m_depth;
        m_lastFill = Simulator::Now();
    }
};

class LinkErrorModel : public ErrorModel {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::LinkErrorModel")
                                .SetParent<ErrorModel>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<LinkErrorModel>();
        return tid;
    }
    double rate{0.0};
    bool per_byte{false};
    uint32_t l2_bytes{2};     // the PPP header on the wire
    uint32_t model_l2{2};     // the scenario's link-layer header (the byte model's frame)
    std::vector<uint64_t> drop_list;  // sorted 0-based arrival numbers (scripted losses)
    uint64_t arrivals{0};
    PacketEvents losses;

    void Configure(double loss_rate, bool bytes, uint16_t port_base, uint16_t port_count) {
        rate = loss_rate;
        per_byte = bytes;
        losses.ports.base = port_base;
        losses.ports.count = port_count;
    }
    void SetModelL2(uint32_t bytes) { model_l2 = bytes; }
    // The handshake of flow `index` (tcp.handshake: false) passes untouched: never lost,
    // never counted as an arrival (the net model's connection has no such packets).
    void SkipHandshake(int32_t index) { m_skipped.push_back(index); }
    void AddDrop(uint64_t arrival) {
        drop_list.insert(std::upper_bound(drop_list.begin(), drop_list.end(), arrival), arrival);
    }
    int64_t AssignStreams(int64_t stream) {
        m_uniform->SetStream(stream);
        return 1;
    }

  private:
    Ptr<UniformRandomVariable> m_uniform = CreateObject<UniformRandomVariable>();

    std::vector<int32_t> m_skipped;
    std::map<int32_t, uint32_t> m_synSeq;  // flow -> its SYN's sequence number

    // A SYN or SYN-ACK of a skipped flow, or the ACK that ends its handshake (no payload,
    // the sequence number after the SYN's).
    bool Handshake(Ptr<const Packet> frame) {
        Ptr<Packet> p = frame->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        p->RemoveHeader(ppp);
        p->RemoveHeader(ip);
        if (ip.GetProtocol() != 6 || p->RemoveHeader(tcp) == 0) return false;
        int32_t dir = 0;
        int32_t flow = losses.ports.Flow(tcp, &dir);
        if (std::find(m_skipped.begin(), m_skipped.end(), flow) == m_skipped.end()) return false;
        uint8_t flags = tcp.GetFlags();
        if (flags & TcpHeader::SYN) {
            if (dir > 0) m_synSeq[flow] = tcp.GetSequenceNumber().GetValue();
            return true;
        }
        auto syn = m_synSeq.find(flow);
        return dir > 0 && p->GetSize() == 0 && flags == TcpHeader::ACK && syn != m_synSeq.end() &&
               tcp.GetSequenceNumber().GetValue() == syn->second + 1;
    }

    bool DoCorrupt(Ptr<Packet> frame) override {
        if (!m_skipped.empty() && Handshake(frame)) return false;
        uint64_t index = arrivals++;
        uint32_t size = frame->GetSize() - l2_bytes;
        bool lose;
        if (!drop_list.empty()) {
            lose = std::binary_search(drop_list.begin(), drop_list.end(), index);
        } else {
            double per = per_byte ? 1.0 - std::pow(1.0 - rate, size + model_l2) : rate;
            lose = per > 0 && m_uniform->GetValue() < per;
        }
        if (lose) {
            Ptr<Packet> p = frame->Copy();
            PppHeader ppp;
            Ipv4Header ip;
            p->RemoveHeader(ppp);
            p->RemoveHeader(ip);
            losses.Add(2, p, size);
        }
        return lose;
    }
    void DoReset() override {}
};

}  // namespace tcpn
