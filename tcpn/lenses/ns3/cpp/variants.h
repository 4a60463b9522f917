// tcpn's TCP variants that ns-3.44 does not have, as congestion-control and recovery
// classes, and the socket of connections without SACK (docs/validation.md says what each
// differs in from tcpn's net model).
#pragma once
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string>

namespace tcpn {
using namespace ns3;

// Tahoe (4.3BSD-Tahoe, RFC 5681 without fast recovery): on the third duplicate ACK the
// socket retransmits the missing segment; ssthresh = max(FlightSize / 2, 2 MSS) comes from
// TcpNewReno::GetSsThresh, and this recovery sets cwnd to one segment; further duplicate
// ACKs do not inflate it and every new ACK grows it by one segment (slow start). ns-3's
// socket alone would then retransmit the next hole on each partial ACK of the loss window
// (restarting the timer only at the first) and send nothing the receiver holds; with
// Rfc5681Socket's TahoeGoBackN (the ns3 lens's Tahoe) the socket leaves that recovery at
// once for ns-2's go-back-N (below), and this class only sets the window of that fast
// retransmit. Without TahoeGoBackN the ACK that ends the recovery keeps the slow start's
// window: ns-3's socket sets cwnd to ssthresh just before ExitRecovery
// (TcpSocketBase::ProcessAck, the full ACK; NewReno's deflation), which would turn Tahoe
// into Reno without inflation; ExitRecovery puts back the window this recovery grew
// (m_window), which the exit ACK's IncreaseWindow then grows, as ns-2's Tahoe
// (TcpAgent::dupack_action sets cwnd_ 1, every new ACK opens it).
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
    TahoeRecovery(const TahoeRecovery& other)
        : TcpClassicRecovery(other), m_window(other.m_window) {}
    std::string GetName() const override { return "TahoeRecovery"; }
    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t, uint32_t) override {
        m_window = tcb->m_segmentSize;
        tcb->m_cWnd = m_window;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t, bool isDupAck) override {
        if (!isDupAck) m_window += tcb->m_segmentSize;
        tcb->m_cWnd = m_window;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void ExitRecovery(Ptr<TcpSocketState> tcb) override {
        tcb->m_cWnd = m_window;  // not the ssthresh the socket just set
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    Ptr<TcpRecoveryOps> Fork() override { return CopyObject<TahoeRecovery>(this); }

  private:
    uint32_t m_window{0};  // the slow start's window since the recovery began, bytes
};

// ---------------------------------------------------------------------------------------
// ForgetSack's record of every block the receiver SACKed above SND.UNA (m_held of
// TcpnSocket, whose class comment says what it is for), and the bytes it holds in a range.
// TCP's sequence numbers are 32 bits and wrap every 4 GiB (RFC 9293 3.4: they compare
// modulo 2^32, as ns-3's SequenceNumber32 does), so a map keyed by the raw numbers
// misorders the blocks of a connection past the wrap: a block [2^32 - 1000, 500) ends
// before it starts, and a block above the wrap sorts below SND.UNA and is dropped. Here
// each number is placed on a 64-bit line by its distance from SND.UNA, taken modulo 2^32 as
// a signed 32-bit offset: exact for every number within 2 GiB either side of SND.UNA,
// which holds all a connection can have outstanding or SACKed (its window is at most 2^30
// bytes, RFC 7323 2.3). The line starts at 2^32 + the first ACK's number, so no place is
// negative and a place's low 32 bits are its sequence number.
class HeldBlocks {
  public:
    // An ACK whose cumulative point is `ack`: what lies below it is dropped (an older ACK
    // changes nothing)
    void Advance(uint32_t ack) {
        if (!m_started) {
            m_una = (uint64_t{1} << 32) + ack;
            m_started = true;
            return;
        }
        uint64_t point = Place(ack);
        if (point <= m_una) return;
        m_una = point;
        while (!m_blocks.empty() && m_blocks.begin()->first < m_una) {
            auto first = m_blocks.begin();
            uint64_t end = first->second;
            m_blocks.erase(first);
            if (end > m_una) m_blocks[m_una] = end;
        }
    }
    // A SACK block [start, end), merged with those it meets; what lies below SND.UNA is
    // not held (call Advance with the ACK's cumulative point first)
    void Add(uint32_t startSeq, uint32_t endSeq) {
        if (!m_started) return;
        uint64_t start = std::max(Place(startSeq), m_una), end = Place(endSeq);
        if (end <= start) return;
        auto it = m_blocks.upper_bound(start);
        if (it != m_blocks.begin() && std::prev(it)->second >= start) {
            --it;
            start = it->first;
        }
        while (it != m_blocks.end() && it->first <= end) {
            end = std::max(end, it->second);
            it = m_blocks.erase(it);
        }
        m_blocks[start] = end;
    }
    // The bytes of [low, high) held
    uint32_t Bytes(uint32_t lowSeq, uint32_t highSeq) const {
        if (!m_started) return 0;
        uint64_t low = Place(lowSeq), high = Place(highSeq), bytes = 0;
        for (const auto& [start, end] : m_blocks) {
            if (start >= high) break;
            uint64_t from = std::max(start, low), to = std::min(end, high);
            if (to > from) bytes += to - from;
        }
        return static_cast<uint32_t>(bytes);
    }
    // The number of disjoint blocks held
    size_t Blocks() const { return m_blocks.size(); }
    // Every block forgotten (SND.UNA stays)
    void Clear() { m_blocks.clear(); }
    // The parts of [start, end) that `from` holds, added (both advanced to the same ACKs)
    void AddHeld(const HeldBlocks& from, uint32_t startSeq, uint32_t endSeq) {
        if (!from.m_started) return;
        uint64_t start = from.Place(startSeq), end = from.Place(endSeq);
        for (const auto& [low, high] : from.m_blocks) {
            if (low >= end) break;
            uint64_t a = std::max(low, start), b = std::min(high, end);
            if (b > a) Add(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
        }
    }

  private:
    // `seq` on the line: SND.UNA's place plus the signed 32-bit distance from SND.UNA
    uint64_t Place(uint32_t seq) const {
        auto offset = static_cast<int32_t>(seq - static_cast<uint32_t>(m_una));
        return m_una + static_cast<int64_t>(offset);
    }
    bool m_started{false};
    uint64_t m_una{0};  // SND.UNA's place (after the latest ACK)
    std::map<uint64_t, uint64_t> m_blocks;  // start -> end, disjoint, not touching
};

// ---------------------------------------------------------------------------------------
// ns-3's socket, the sender socket of every connection of the ns3 lens (or its subclass
// Rfc5681Socket). Without options it behaves as ns-3's own, and records every expiry of
// the retransmission timer (`timeouts`: its time and the backed-off RTO): the socket's
// CongState trace only shows the first of several expiries in a row, since a repeated
// timeout leaves the state CA_LOSS unchanged. Its options are rules of tcpn's scenarios
// that ns-3.44 lacks:
// * KeepBackoff (the default of the ns3 lens; tcp.ns3_rto_reset: true turns it off): the
//   RTO doubled by a timeout holds until an ACK gives a valid RTT sample (RFC 6298, the note
//   after rule 5.7: a new measurement may "collapse" the RTO; Karn's algorithm; ns-2's
//   TcpAgent::newack ends the backoff only when the timed segment is acknowledged; the net
//   model). ns-3.44's NewAck recomputes the RTO from SRTT and RTTVAR at every new ACK, so
//   the ACK of a retransmission, which gives no sample, ends the backoff anyway. With
//   timestamps every ACK of new data is a valid measurement (RFC 7323; the net model), so
//   the backoff ends at the first one as in ns-3 (whose estimator takes no sample there).
// * ForgetHandshakeRtt (tcp.handshake: false, a connection that starts established): the
//   lens runs ns-3's handshake before the flow's start time (lens.py), and the SYN-ACK gives
//   ns-3's estimator a sample a connection without handshake never takes. Before the first
//   data segment leaves, the estimator forgets it (RttEstimator::Reset) and the RTO is the
//   initial one again, as for the net model's connection opened at its start (no sample,
//   RTO = tcp.initial_rto_s). DelayFirstAck, on the receiver's listening socket (its
//   accepted sockets are forks): ns-3 acknowledges the first data segment at once (the
//   delayed-ACK counter starts full when the handshake completes); a receiver without
//   handshake starts it empty, as the net model's does.
// * EcnSlowStart (params.reaction: slow_start, study S2: on an ECN echo the sender "starts
//   slow start without retransmitting"): an ACK of new data carrying ECE, outside fast
//   recovery and past the window of the previous reaction (its SND.UNA at or above
//   SND.NXT of that reaction), sets ssthresh to half the flight before the ACK (SND.MAX -
//   SND.UNA, at least 2 segments, rounded down to whole segments with WholeSegments) and
//   cwnd to one segment; that ACK does not grow the window, nothing is retransmitted, and
//   the next new segment carries CWR (RFC 3168's bookkeeping, as EnterCwr keeps it). Other
//   echoes are ignored (the net model's ecn_reduce, tcpn/models/components/sender.py).
//   ns-3.44's own reaction (EnterCwr) halves through the recovery and holds the
//   connection in CA_CWR, where duplicate ACKs never start a fast retransmit; this socket
//   never enters CA_CWR: it hides the ECE flag from TcpSocketBase::ReceivedAck and reacts
//   in ProcessAck, before ns-3 processes the ACK.
// * EcnNs2Reaction (tcp.ecn_cwr: ns2, the default, for the loss-based ECN senders): ns-2's
//   reaction to an echo (TcpAgent::ecn: at most once per window, recover_ = maxseq_; the
//   window halved at once, slowdown(CLOSE_CWND_HALF | CLOSE_SSTHRESH_HALF)) with the net
//   model's figures (ecn_reduce): the same echoes as EcnSlowStart react, ssthresh is the
//   same half of the flight before the ACK and cwnd = ssthresh at once. The reacting ACK
//   does not grow the window; every new ACK after it does, by the ordinary rule
//   (congestion avoidance: cwnd = ssthresh), since the connection never enters CA_CWR.
//   ns-3.44's EnterCwr halves the flight after the ACK (BytesInFlight(), its segments
//   gone), brings the window down by PRR over the round and grows nothing until an ACK
//   passes SND.MAX of the reaction (Linux's rule, tcp.ecn_cwr: ns3). With EcnSlowStart
//   too, cwnd is one segment (S2's rule). The ACK that ends CA_LOSS would grow the window
//   by the segments above the recovery point whatever ProcessAck is told: both options
//   set the reaction's window back after it.
// * GrowOnRecoveryExit (true, ns-3's and ns-2's rule; tcp.recovery_exit_growth: false turns
//   it off): the ACK that ends fast recovery deflates cwnd to ssthresh and ns-3 then grows
//   it (IncreaseWindow) as on any ACK of new data; off, cwnd stays at ssthresh (RFC 5681
//   3.2 step 6's words).
// * ForgetSack (tcp.sack_after_timeout: forget, the default of the ns3 lens with SACK;
//   false is ns-3's own rule, "keep"): a timeout forgets the SACK scoreboard, as RFC 2018
//   8 says a sender SHOULD ("turn off all SACKed bits", the receiver may renege) and ns-2's
//   Sack1TcpAgent::timeout does (ClearScoreBoard; its duplicate ACKs update no scoreboard
//   while timeout_ holds): TcpTxBuffer::SetSentListLost(true) before ns-3's ReTxTimeout,
//   which itself keeps the SACKed bits with SACK (SetSentListLost(false), RFC 6675 5.1's
//   note on the errata). Until the ACKs reach the recovery point of the timeout (CA_LOSS),
//   the SACK blocks below it are hidden from ns-3, so the sender goes back N from the head
//   over every segment sent before the timeout, the receiver's included, as ns-2 and the
//   net model do. What the receiver held is not delivered again: an ACK in CA_LOSS
//   (and the one that ends it) credits the window with the bytes it passes less those
//   any ACK had SACKed (m_held, the union of the blocks received, kept across the
//   timeout, as the net model's CUBIC counts them with the scoreboard the sender
//   forgot). That credit replaces ns-3's own count in CA_LOSS (its rate sampler's
//   delivered bytes), which leaves out what ns-3 saw SACKed before the timeout unless the
//   go-back-N has sent it again (a transmission resets the segment's delivery), and
//   counts what came in hidden blocks: on cubic_2flows ns-3's window grew a segment a
//   round faster than the net model's on either count corrected by m_held alone.
// * SackedRetransmitsOut (on with SACK unless tcp.pipe_counts_sacked_retransmits is true;
//   off is ns-3's own rule): a segment sent again that the receiver then
//   SACKs leaves the pipe, as RFC 6675's SetPipe counts it (nothing for a SACKed octet).
//   ns-3.44's BytesInFlight (m_sentSize - m_sackedOut - m_lostOut + m_retrans) keeps it:
//   TcpTxBuffer::Update clears a SACKed segment's lost flag but not its retransmitted one,
//   which only the cumulative ACK (RemoveFromCounts) and a timeout (SetSentListLost)
//   clear (ns-3-dev fixed it after ns-3.48, commit 380573ef1, issue 1190). Each such
//   segment held back one segment of fast recovery until the ACKs passed it (one CUBIC
//   flow of cubic_2flows, 0.970-0.976 s: six SACKed retransmissions, six ACKs without a
//   send). The socket records what it sends again (m_resent, since the last timeout) and
//   which of it the ACKs ns-3 reads SACK (m_resentSacked), and takes those bytes out of
//   BytesInFlight.
// With SACK, a fast retransmit takes ssthresh from FlightSize, as RFC 6675 (5, step 4.2:
// "ssthresh = cwnd = (FlightSize / 2)") and RFC 5681 (3.2 step 2: FlightSize = the data
// outstanding, "additional data sent in limited transmit MUST NOT be included") say, and
// as the net model does, in whole segments with WholeSegments. ns-3.44's
// TcpSocketBase::EnterRecovery quotes step (4.2) but passes BytesInFlight(), the RFC 6675
// pipe (FlightSize less the three SACKed segments and the head it has just marked lost),
// to GetSsThresh: with the two limited-transmit segments, half a segment to a segment
// below (study S4's lossy hop with a SACK flow against Reno: 29,500 bytes against 30,000 at
// the first recovery, and ns-3's flow then kept a window one segment smaller through the
// recovery). Likewise at a timeout: RFC 5681 (3.1, eq. 4) halves FlightSize, ns-3 its pipe
// (after a recovery whose holes are SACKed or marked lost, a few segments: 11,000 bytes
// against 32,000 at 7.73 s of the same run). And the ACK that ends CA_LOSS (it reaches the
// recovery point of the timeout) grows the window as any ACK of new data in slow start
// (RFC 5681 3.1; ns-2's opencwnd), where ns-3 credits only what lies above the point (the
// same run, 7.90 s: the net model's window 21 segments, ns-3's 20). The credit is what the
// ACK newly delivers, as the net model counts it: the bytes it passes less those the
// scoreboard held SACKed below it (kept across the timeout, as ns-3 keeps them). Crediting
// every byte it passed let one cumulative ACK over a SACKed run open TcpCubic's slow start
// (it adds every segment acknowledged) by 327 segments at once on cubic_2flows (seed 1,
// 2.71 s): the burst overflowed the buffer again, 22 % of the flow's packets lost. Without
// SACK, Rfc5681Socket applies the same rules (its rules 2, 3 and 4).
class TcpnSocket : public TcpSocketBase {
  public:
    static TypeId GetTypeId() {
        static TypeId tid =
            TypeId("tcpn::TcpnSocket")
                .SetParent<TcpSocketBase>()
                .SetGroupName("Tcpn")
                .AddConstructor<TcpnSocket>()
                .AddAttribute("SynFallbackRto",
                              "The RTO data starts with after the SYN's timer expired and no "
                              "RTT sample came (RFC 6298 5.7); 0: ns-3's (the SYN's backed-off "
                              "timeout)",
                              TimeValue(Time(0)),
                              MakeTimeAccessor(&TcpnSocket::m_synFallbackRto),
                              MakeTimeChecker())
                .AddAttribute("KeepBackoff",
                              "A backed-off RTO holds until a valid RTT sample (RFC 6298)",
                              BooleanValue(false), MakeBooleanAccessor(&TcpnSocket::m_keepBackoff),
                              MakeBooleanChecker())
                .AddAttribute("ForgetHandshakeRtt",
                              "Reset the RTT estimator and the RTO before the first data segment",
                              BooleanValue(false),
                              MakeBooleanAccessor(&TcpnSocket::m_forgetHandshakeRtt),
                              MakeBooleanChecker())
                .AddAttribute("DelayFirstAck",
                              "The delayed-ACK counter starts empty after the handshake",
                              BooleanValue(false),
                              MakeBooleanAccessor(&TcpnSocket::m_delayFirstAck),
                              MakeBooleanChecker())
                .AddAttribute("EcnSlowStart",
                              "An ECN echo sets cwnd to one segment (study S2), not CA_CWR",
                              BooleanValue(false), MakeBooleanAccessor(&TcpnSocket::m_ecnSlowStart),
                              MakeBooleanChecker())
                .AddAttribute("EcnNs2Reaction",
                              "An ECN echo sets ssthresh and cwnd to half the flight before "
                              "the ACK, once per window (ns-2's TcpAgent::ecn), not CA_CWR",
                              BooleanValue(false), MakeBooleanAccessor(&TcpnSocket::m_ecnNs2),
                              MakeBooleanChecker())
                .AddAttribute("WholeSegments",
                              "A reaction's ssthresh is whole segments (half the flight, "
                              "rounded down: ns-2's and the net model's default)",
                              BooleanValue(true), MakeBooleanAccessor(&TcpnSocket::m_wholeSegments),
                              MakeBooleanChecker())
                .AddAttribute("GrowOnRecoveryExit",
                              "The ACK that ends fast recovery grows the deflated window "
                              "(ns-3's and ns-2's rule); false: cwnd = ssthresh",
                              BooleanValue(true),
                              MakeBooleanAccessor(&TcpnSocket::m_growOnRecoveryExit),
                              MakeBooleanChecker())
                .AddAttribute("ForgetSack",
                              "A timeout forgets the SACK scoreboard and goes back N until "
                              "the recovery point (RFC 2018 8, ns-2); false: ns-3's (keeps it)",
                              BooleanValue(false), MakeBooleanAccessor(&TcpnSocket::m_forgetSack),
                              MakeBooleanChecker())
                .AddAttribute("SackedRetransmitsOut",
                              "A retransmitted segment the receiver SACKs leaves the pipe (RFC "
                              "6675 SetPipe); false: ns-3's BytesInFlight counts it until the "
                              "cumulative ACK",
                              BooleanValue(false),
                              MakeBooleanAccessor(&TcpnSocket::m_sackedRetransmitsOut),
                              MakeBooleanChecker())
                .AddAttribute("LossWindow",
                              "The window a timeout restarts from (segments; ns-3: 1, ns-2's "
                              "Vegas: 2)",
                              UintegerValue(1), MakeUintegerAccessor(&TcpnSocket::m_lossWindow),
                              MakeUintegerChecker<uint32_t>(1));
        return tid;
    }
    TcpnSocket() = default;
    TcpnSocket(const TcpnSocket& other)
        : TcpSocketBase(other), m_keepBackoff(other.m_keepBackoff),
          m_forgetHandshakeRtt(other.m_forgetHandshakeRtt),
          m_delayFirstAck(other.m_delayFirstAck), m_ecnSlowStart(other.m_ecnSlowStart),
          m_ecnNs2(other.m_ecnNs2), m_wholeSegments(other.m_wholeSegments),
          m_growOnRecoveryExit(other.m_growOnRecoveryExit),
          m_synFallbackRto(other.m_synFallbackRto), m_lossWindow(other.m_lossWindow),
          m_forgetSack(other.m_forgetSack),
          m_sackedRetransmitsOut(other.m_sackedRetransmitsOut) {}
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }

    uint64_t ecn_reactions{0};  // echoes reacted to (EcnSlowStart, EcnNs2Reaction)
    Series reactions;           // each reaction: its time and the ssthresh it set (bytes)
    Series timeouts;            // each expiry of the retransmission timer: the new RTO (s)

  protected:
    // Whether a loss's ssthresh is rounded down to whole segments (WholeSegments)
    bool WholeSegments() const { return m_wholeSegments; }
    Ptr<TcpSocketBase> Fork() override { return CopyObject<TcpnSocket>(this); }
    void ReTxTimeout() override {
        uint32_t retries = m_dataRetrCount;  // ns-3 counts it down on a data expiry only
        // ssthresh from FlightSize (the class comment): ns-3 takes the first BytesInFlight()
        m_flightSizeNext = m_sackEnabled || RfcRulesWithoutSack();
        if (Forgets() && m_txBuffer->Size() > 0) {
            m_txBuffer->SetSentListLost(true);  // ForgetSack: every segment sent is lost
        }
        if (CountsOutSackedRetransmits()) {  // SetSentListLost clears every retransmitted flag
            m_resent.Clear();
            m_resentSacked.Clear();
        }
        TcpSocketBase::ReTxTimeout();
        m_flightSizeNext = false;
        if (m_dataRetrCount + 1 == retries) {
            timeouts.Add(m_rto.Get().GetSeconds());
            m_backedOff = true;
            if (m_lossWindow > 1 && m_tcb->m_congState == TcpSocketState::CA_LOSS) {
                // ns-3 restarts from one segment and has sent it; the rest goes now
                m_tcb->m_cWnd = m_lossWindow * m_tcb->m_segmentSize;
                m_tcb->m_cWndInfl = m_tcb->m_cWnd;
                SendPendingData(m_connected);
            }
            // TCP-L without a reaction puts its window back at this instant (TcpL::Restore,
            // scheduled before this): the segments marked lost go at once within it, as
            // ns-2's TCP-Linux sends them after a timeout (send_much), not one round trip
            // later at the next ACK
            if (m_congestionControl->GetName() == "TcpL") {
                Simulator::ScheduleNow(&TcpnSocket::SendWithinWindow, this);
            }
        }
    }
    void SendWithinWindow() { SendPendingData(m_connected); }
    void EstimateRtt(const TcpHeader& header) override {
        uint32_t samples = m_rtt->GetNSamples();
        TcpSocketBase::EstimateRtt(header);
        if (m_rtt->GetNSamples() > samples) m_backedOff = false;  // RFC 6298 2.2-2.4 apply
    }
    void NewAck(const SequenceNumber32& ack, bool resetRTO) override {
        Time backedOff = m_rto;
        TcpSocketBase::NewAck(ack, resetRTO);
        // with timestamps every ACK of new data is a valid measurement (RFC 7323), though
        // ns-3 takes none after a timeout (it clears its send history): its RTO stands
        if (m_keepBackoff && m_backedOff && !m_timestampEnabled && resetRTO &&
            m_rto.Get() != backedOff) {
            m_rto = backedOff;  // NewAck took it from SRTT and RTTVAR: restart with it
            if (m_retxEvent.IsPending()) {
                m_retxEvent.Cancel();
                m_retxEvent = Simulator::Schedule(m_rto, &TcpnSocket::ReTxTimeout, this);
            }
        }
    }
    uint32_t SendDataPacket(SequenceNumber32 seq, uint32_t maxSize, bool withAck) override {
        if (m_forgetHandshakeRtt && !m_dataSent) {
            m_rtt->Reset();
            m_rto = m_rtt->GetEstimate();
            m_tcb->m_srtt = Time(0);
            m_tcb->m_lastRtt = Time(0);
            m_tcb->m_minRtt = Time::Max();
        } else if (m_synResent && !m_dataSent && m_rtt->GetNSamples() == 0 &&
                   m_synFallbackRto.IsStrictlyPositive()) {
            // RFC 6298 (5.7): after the SYN's timer expired, with no valid RTT sample, data
            // starts with an RTO of 3 s (ns-3 keeps the SYN's backed-off timeout, 6 s after
            // one retry); the lens passes the net model's SYN_FALLBACK_RTO_S
            m_rto = Max(m_rtt->GetEstimate(), m_synFallbackRto);
        }
        m_dataSent = true;
        bool resend = seq < m_tcb->m_highTxMark;
        uint32_t sent = TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
        if (resend && sent > 0 && CountsOutSackedRetransmits()) {
            m_resent.Add(seq.GetValue(), (seq + sent).GetValue());
        }
        return sent;
    }
    // Karn's rule for the SYN (RFC 6298 3): ns-3 finds the history entry a retransmission
    // repeats by `entry.seq <= seq < entry.seq + count`, which a SYN's entry (count 0)
    // never matches, so the SYN-ACK of a resent SYN timed the first one (a 3.1 s "round
    // trip" in S1's Exp 3, where the first SYN was lost behind the reverse queue)
    void UpdateRttHistory(const SequenceNumber32& seq, uint32_t sz, bool isRetransmission) override {
        TcpSocketBase::UpdateRttHistory(seq, sz, isRetransmission);
        if (!isRetransmission || sz != 0 || m_state != SYN_SENT) return;
        m_synResent = true;
        for (RttHistory& entry : m_history) {
            if (entry.seq == seq && entry.count == 0) entry.retx = true;
        }
    }
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& header) override {
        if (m_delayFirstAck && !m_established && m_state == ESTABLISHED) {
            m_delAckCount = 0;  // ProcessSynRcvd set it full just before
        }
        m_established = m_state == ESTABLISHED;
        SequenceNumber32 una = m_txBuffer->HeadSequence();
        bool rfc = m_sackEnabled || RfcRulesWithoutSack();
        bool loss = m_tcb->m_congState == TcpSocketState::CA_LOSS;
        // ForgetSack: the blocks below the recovery point stay hidden in CA_LOSS
        TcpHeader seen = Forgets() && loss ? SackAtOrAbove(header, m_recover) : header;
        if (Forgets() && loss && header.GetAckNumber() > una) {
            // what this ACK newly delivers: the bytes it passes less those held (ns-3's
            // rate sampler counts again what the go-back-N has resent)
            uint32_t passed = header.GetAckNumber() - una;
            m_lossCredit = passed - std::min(passed, Held(m_held, una, header.GetAckNumber()));
            m_creditNext = true;
        }
        if (rfc && loss && header.GetAckNumber() > una && header.GetAckNumber() >= m_recover) {
            // the ACK that ends CA_LOSS is credited with what it newly delivers (the class
            // comment): without SACK every byte it passes, with SACK less the bytes the
            // scoreboard already held below it (ForgetSack: that any ACK had SACKed)
            m_recover = una + (Forgets() ? Held(m_held, una, header.GetAckNumber())
                               : m_sackEnabled ? SackedBelow(header) : 0);
            m_creditNext = false;
        }
        if (Forgets()) Hold(m_held, header);
        if (CountsOutSackedRetransmits()) NoteSackedRetransmits(seen);
        // a fast retransmit this ACK starts takes ssthresh from FlightSize (BytesInFlight)
        m_entryFlightNext = rfc && m_tcb->m_congState != TcpSocketState::CA_RECOVERY;
        ReceivedAckWithEcn(packet, seen, una);
        m_entryFlightNext = false;
        m_creditNext = false;
        if (header.GetAckNumber() > una) {
            // an ACK of new data that is also a duplicate (CA_DISORDER) sends beyond the
            // window by limited transmit (RFC 5681 3.2 step 2: not part of FlightSize)
            SequenceNumber32 high = m_tcb->m_highTxMark;
            if (m_tcb->m_congState == TcpSocketState::CA_DISORDER) {
                high = std::min(high, m_txBuffer->HeadSequence() + m_tcb->m_cWnd.Get());
            }
            m_highAfterNewAck = high;
        }
    }
    // The bytes the scoreboard holds SACKed below the ACK of `header`: all it holds SACKed
    // less what the ACK's own SACK blocks still report above its cumulative point (a
    // block the receiver reports holds what the scoreboard held there, or more: the
    // figure is at most the bytes SACKed below the ACK, never more than the ACK passes)
    uint32_t SackedBelow(const TcpHeader& header) const {
        SequenceNumber32 ack = header.GetAckNumber();
        uint32_t above = 0;
        if (Ptr<const TcpOption> option = header.GetOption(TcpOption::SACK)) {
            Ptr<const TcpOptionSack> sack = DynamicCast<const TcpOptionSack>(option);
            for (const auto& block : sack->GetSackList()) {
                if (block.second > ack) {
                    above += block.second - std::max(block.first, ack);
                }
            }
        }
        uint32_t sacked = m_txBuffer->GetSacked();
        uint32_t passed = ack - m_txBuffer->HeadSequence();
        return std::min(sacked > above ? sacked - above : 0, passed);
    }
    // ForgetSack on a connection with SACK
    bool Forgets() const { return m_forgetSack && m_sackEnabled; }
    // SackedRetransmitsOut on a connection with SACK
    bool CountsOutSackedRetransmits() const { return m_sackedRetransmitsOut && m_sackEnabled; }
    // SackedRetransmitsOut: what the SACK blocks ns-3 reads in `header` cover of the
    // segments sent again
    void NoteSackedRetransmits(const TcpHeader& header) {
        uint32_t ack = header.GetAckNumber().GetValue();
        m_resent.Advance(ack);
        m_resentSacked.Advance(ack);
        if (Ptr<const TcpOption> option = header.GetOption(TcpOption::SACK)) {
            for (const auto& block : DynamicCast<const TcpOptionSack>(option)->GetSackList()) {
                m_resentSacked.AddHeld(m_resent, block.first.GetValue(), block.second.GetValue());
            }
        }
    }
    // `header` with its SACK blocks cut to what lies at or above `floor` (ForgetSack)
    static TcpHeader SackAtOrAbove(const TcpHeader& header, SequenceNumber32 floor) {
        Ptr<const TcpOption> option = header.GetOption(TcpOption::SACK);
        if (!option) return header;
        TcpHeader cut;
        cut.SetSourcePort(header.GetSourcePort());
        cut.SetDestinationPort(header.GetDestinationPort());
        cut.SetSequenceNumber(header.GetSequenceNumber());
        cut.SetAckNumber(header.GetAckNumber());
        cut.SetFlags(header.GetFlags());
        cut.SetWindowSize(header.GetWindowSize());
        cut.SetUrgentPointer(header.GetUrgentPointer());
        for (const auto& other : header.GetOptionList()) {
            if (other->GetKind() != TcpOption::SACK) cut.AppendOption(other);
        }
        Ptr<TcpOptionSack> above = CreateObject<TcpOptionSack>();
        for (const auto& block : DynamicCast<const TcpOptionSack>(option)->GetSackList()) {
            if (block.second > floor) {
                above->AddSackBlock({std::max(block.first, floor), block.second});
            }
        }
        if (above->GetNumSackBlocks() > 0) cut.AppendOption(above);
        return cut;
    }
    // ForgetSack: the ACK's SACK blocks added to `held`, which drops what the ACK passes
    static void Hold(HeldBlocks& held, const TcpHeader& header) {
        held.Advance(header.GetAckNumber().GetValue());
        if (Ptr<const TcpOption> option = header.GetOption(TcpOption::SACK)) {
            for (const auto& block : DynamicCast<const TcpOptionSack>(option)->GetSackList()) {
                held.Add(block.first.GetValue(), block.second.GetValue());
            }
        }
    }
    // ForgetSack: the bytes of [low, high) in `held`
    static uint32_t Held(const HeldBlocks& held, SequenceNumber32 low, SequenceNumber32 high) {
        return held.Bytes(low.GetValue(), high.GetValue());
    }
    // Without SACK, whether the rules of the class comment on ssthresh and the end of
    // CA_LOSS are RFC 5681's (Rfc5681Socket) or ns-3's own (tcp.ns3_reno_sack); with SACK
    // they are always RFC 5681's and RFC 6675's
    virtual bool RfcRulesWithoutSack() const { return false; }
    // A flight whose half is the ssthresh wanted: with WholeSegments, twice its half
    // rounded down to whole segments (ns-3 halves bytes: an odd flight of 5 segments
    // would give 2.5 where ns-2 and the net model give 2).
    uint32_t Halvable(uint32_t flight) const {
        uint32_t segment = m_tcb->m_segmentSize;
        return WholeSegments() ? flight / segment / 2 * 2 * segment : flight;
    }
    // EnterRecovery halves the first BytesInFlight() it asks for (with SACK; without, that
    // + 1 segment): here FlightSize less what was sent since the latest ACK of new data
    // (on duplicate ACKs: limited transmit) or beyond its window (one that was also a
    // duplicate), made halvable
    uint32_t BytesInFlight() const override {
        if (m_flightSizeNext) {  // ReTxTimeout: ssthresh = max(2 MSS, this / 2)
            m_flightSizeNext = false;
            return Halvable(UnAckDataCount());
        }
        if (m_entryFlightNext && m_tcb->m_congState == TcpSocketState::CA_RECOVERY) {
            m_entryFlightNext = false;
            uint32_t segment = m_tcb->m_segmentSize;
            uint32_t flight = UnAckDataCount();
            int32_t sent = m_tcb->m_highTxMark.Get() - m_highAfterNewAck;
            uint32_t limited = std::min(static_cast<uint32_t>(std::max(sent, 0)), flight);
            uint32_t half = Halvable(flight - limited);
            if (m_sackEnabled) return half;
            return half > segment ? half - segment : 0;
        }
        uint32_t pipe = TcpSocketBase::BytesInFlight();
        if (!CountsOutSackedRetransmits()) return pipe;
        // SackedRetransmitsOut: the SACKed segments sent again are not in flight
        uint32_t sacked = m_resentSacked.Bytes(m_txBuffer->HeadSequence().GetValue(),
                                               m_tcb->m_highTxMark.Get().GetValue());
        pipe -= std::min(pipe, sacked);
        m_tcb->m_bytesInFlight = pipe;
        return pipe;
    }
    // A recovery entered without a fast retransmit (Rfc5681Socket, ns-2's fine timer, rule
    // F5): the BytesInFlight() calls that follow are the pipe's
    void KeepPipe() const { m_entryFlightNext = false; }
    void ReceivedAckWithEcn(Ptr<Packet> packet, const TcpHeader& header, SequenceNumber32 una) {
        if (!(m_ecnSlowStart || m_ecnNs2) || !(header.GetFlags() & TcpHeader::ECE) ||
            m_tcb->m_ecnState == TcpSocketState::ECN_DISABLED || header.GetAckNumber() <= una) {
            TcpSocketBase::ReceivedAck(packet, header);
            return;
        }
        bool ignored = m_tcb->m_congState == TcpSocketState::CA_RECOVERY ||
                       (m_reacted && una < m_cwrHigh);
        m_echo = ignored ? Echo::IGNORED : Echo::REACT;
        m_ecnStateBefore = m_tcb->m_ecnState;
        TcpHeader plain = header;
        plain.SetFlags(header.GetFlags() & ~TcpHeader::ECE);
        TcpSocketBase::ReceivedAck(packet, plain);
        m_echo = Echo::NONE;
    }
    void ProcessAck(const SequenceNumber32& ackNumber, bool scoreboardUpdated,
                    uint32_t currentDelivered, const SequenceNumber32& oldHeadSequence,
                    bool receivedData) override {
        if (m_echo == Echo::REACT) {
            m_ecnEchoSeq = ackNumber;
            m_tcb->m_ecnState = TcpSocketState::ECN_ECE_RCVD;
            const uint32_t seg = m_tcb->m_segmentSize;
            uint32_t flight = static_cast<uint32_t>(m_tcb->m_highTxMark.Get() - oldHeadSequence);
            uint32_t half = m_wholeSegments ? flight / seg / 2 * seg : flight / 2;
            m_tcb->m_ssThresh = std::max(2 * seg, half);
            m_reactionWindow = m_ecnSlowStart ? seg : m_tcb->m_ssThresh.Get();
            m_tcb->m_cWnd = m_reactionWindow;
            m_tcb->m_cWndInfl = m_reactionWindow;
            m_cwrHigh = m_tcb->m_nextTxSequence;
            m_reacted = true;
            ++ecn_reactions;
            reactions.Add(static_cast<double>(m_tcb->m_ssThresh.Get()));
            currentDelivered = 0;  // the reacting ACK does not grow the window
        } else if (m_echo == Echo::IGNORED) {
            m_tcb->m_ecnState = m_ecnStateBefore;  // ReceivedAck saw no ECE: undo its ECN_IDLE
        }
        bool recovering = m_tcb->m_congState == TcpSocketState::CA_RECOVERY;
        if (m_creditNext && m_tcb->m_congState == TcpSocketState::CA_LOSS) {
            // ForgetSack: what the receiver held is not delivered again (the class comment)
            currentDelivered = m_lossCredit;
        }
        bool reacted = m_echo == Echo::REACT;
        TcpSocketBase::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered,
                                  oldHeadSequence, receivedData);
        if (reacted && m_tcb->m_congState != TcpSocketState::CA_RECOVERY) {
            // the ACK that ends CA_LOSS grew the window by the segments above the recovery
            // point whatever currentDelivered said: the reacting ACK grows nothing
            m_tcb->m_cWnd = m_reactionWindow;
            m_tcb->m_cWndInfl = m_reactionWindow;
        }
        if (!m_growOnRecoveryExit && recovering &&
            m_tcb->m_congState == TcpSocketState::CA_OPEN) {
            m_tcb->m_cWnd = m_tcb->m_ssThresh.Get();  // undo the exit ACK's IncreaseWindow
            m_tcb->m_cWndInfl = m_tcb->m_cWnd;
        }
    }

  private:
    enum class Echo { NONE, REACT, IGNORED };
    bool m_keepBackoff{false}, m_backedOff{false};
    bool m_forgetHandshakeRtt{false}, m_delayFirstAck{false}, m_ecnSlowStart{false};
    bool m_ecnNs2{false};  // EcnNs2Reaction
    uint32_t m_reactionWindow{0};  // the cwnd an echo's reaction set (bytes)
    bool m_wholeSegments{true}, m_dataSent{false}, m_reacted{false}, m_established{false};
    bool m_synResent{false};  // a SYN was sent again (its timer expired)
    bool m_growOnRecoveryExit{true};
    Time m_synFallbackRto;  // SynFallbackRto (zero: none)
    uint32_t m_lossWindow{1};  // LossWindow (segments)
    bool m_forgetSack{false};  // ForgetSack
    HeldBlocks m_held;  // ForgetSack: every block SACKed, above SND.UNA
    bool m_sackedRetransmitsOut{false};  // SackedRetransmitsOut
    // SackedRetransmitsOut: what was sent again since the last timeout, above SND.UNA, and
    // what of it the ACKs SACKed
    HeldBlocks m_resent, m_resentSacked;
    uint32_t m_lossCredit{0};  // ForgetSack: what the ACK in hand delivers in CA_LOSS
    bool m_creditNext{false};  // ForgetSack: ProcessAck takes m_lossCredit
    mutable bool m_flightSizeNext{false};   // the next BytesInFlight() is ReTxTimeout's
    mutable bool m_entryFlightNext{false};  // the next BytesInFlight() is EnterRecovery's
    // SND.MAX after the latest ACK of new data, at most SND.UNA + cwnd after one that was
    // also a duplicate: what was sent beyond it before a fast retransmit went out by
    // limited transmit
    SequenceNumber32 m_highAfterNewAck{0};
    Echo m_echo{Echo::NONE};
    TcpSocketState::EcnState_t m_ecnStateBefore{TcpSocketState::ECN_DISABLED};
    SequenceNumber32 m_cwrHigh{0};
};

// ---------------------------------------------------------------------------------------
// The sender's socket of a connection without SACK. ns-3.44 emulates a SACK scoreboard from
// duplicate ACKs ("Reno SACK", TcpTxBuffer::AddRenoSack): each duplicate ACK in disorder
// (limited transmit) or in fast recovery marks the lowest segment above snd.una not yet
// marked as SACKed. Five rules of ns-3's socket depart from RFC 5681 and RFC 6582 (and
// from ns-2's NewReno agent, the studies' simulator):
//  1. A cumulative ACK that finds a guessed SACK at its new snd.una moves the guess up and
//     marks snd.una lost (TcpTxBuffer::DiscardUpTo -> MarkHeadAsLost); NextSeg then
//     retransmits it at once, in the open state too. After a timeout the go-back-N
//     retransmissions of segments the receiver holds draw duplicate ACKs, so each new ACK
//     retransmits one more segment the receiver has, whose duplicate ACK does the same,
//     and three of them start a fast retransmit: a chain of needless retransmissions and
//     window cuts. RFC 5681 and RFC 6582 never retransmit on a new ACK outside fast recovery.
//  2. At a timeout ssthresh is half of that estimate (BytesInFlight: sent - guessed SACKs -
//     lost + retransmitted), which after a recovery with many duplicate ACKs is a few
//     segments; RFC 5681 (eq. 4) halves FlightSize, the data outstanding.
//  3. The ACK that ends CA_LOSS (it reaches the recovery point set at the timeout) grows
//     the window only by the segments above that point ((ack - m_recover) / MSS): what it
//     acknowledges below the point is never credited, so an ACK that reaches the point
//     exactly does not grow the window at all. RFC 5681 (3.1: cwnd grows on each ACK of new
//     data in slow start) and ns-2 (opencwnd on every new ACK) credit it.
//  4. At a fast retransmit ssthresh is half of BytesInFlight() + 1 segment (EnterRecovery):
//     the guesses of the three duplicate ACKs and the lost head are out of the pipe, so it
//     is the outstanding data less two segments, limited transmit's included. RFC 5681 (3.2
//     step 2, eq. 4) halves FlightSize without what limited transmit sent, ns-2 its window:
//     half a segment more (study S5 (a) settled in a cycle of three losses per recovery in
//     ns-3 and two in the net lens, 425 drops against 352).
//  5. After a timeout (CA_LOSS) duplicate ACKs are ignored (TcpSocketBase::DupAck returns
//     at once): no limited transmit. RFC 5681 (3.2 step 1) and RFC 3042 send one segment of
//     new data on each of the first two duplicate ACKs whatever the state, and so does
//     ns-2 (TcpAgent::send_one under singledup_, its default since 2001, from Reno's recv
//     after a timeout too). Once the go-back-N of a timeout has passed the highest segment
//     sent, the duplicate ACKs drawn by retransmissions the receiver already held release
//     new segments in ns-2 and the net lens; in ns-3 the link idles until the next new ACK
//     (study S5 (a) with Reno: the net lens then settles in a different loss cycle, -8 %).
// Rfc5681Socket keeps the rest of ns-3's socket and changes these five: the guesses end with
// their duplicate-ACK episode (ResetRenoSack before every cumulative ACK except a partial
// ACK of fast recovery, where the guesses still count the segments that have left the
// network, as RFC 6582's inflated window does, and snd.una is retransmitted anyway, RFC
// 6582 3.2 step 5), a timeout takes ssthresh from FlightSize = SND.MAX - SND.UNA, the ACK
// that ends CA_LOSS is credited whole (the recovery point moves down to snd.una before ns-3
// processes it, which also clears it), and a fast retransmit takes ssthresh from FlightSize
// less the segments sent since the latest ACK of new data (on duplicate ACKs: limited
// transmit; an earlier version took the data beyond cwnd, at most two segments, which is
// wrong when a Reno exit has just deflated cwnd below the flight: nothing went out on the
// duplicate ACKs, and ssthresh came a segment short of the net model's, study S4, 57.99 s
// into condition 1 with a 100-packet buffer), and in CA_LOSS the first two duplicate ACKs
// since the last new ACK or the timeout each let one segment of new data go beyond cwnd
// (LossLimitedTransmit, with the socket's LimitedTransmit; the net lens's rule: outstanding
// data within min(cwnd + duplicate ACKs, receive window), only once every segment below
// the highest sent has gone out again).
// The ns3 lens gives it to every connection without SACK unless the scenario asks for
// ns-3's own rules (tcp.ns3_reno_sack); it keeps TcpnSocket's options.
//
// With TahoeGoBackN (Tahoe, with TahoeRecovery), the fast retransmit is ns-2's Tahoe
// (TcpAgent::dupack_action, tahoe_action: slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_ONE),
// then reset_rtx_timer(0, 0): the timer restarted without backoff, t_seqno_ =
// highest_ack_ + 1, no segment timed): after ns-3 has retransmitted the head (cwnd one
// segment, ssthresh as above), the socket leaves CA_RECOVERY for CA_LOSS with every
// segment sent marked lost, as its own timeout does, so each ACK of the slow start that
// follows sends the next segments from the first unacknowledged one (go-back-N, segments
// the receiver holds included); the timer restarts with the current RTO, the RTT history
// is cleared (Karn: no sample until new data), and the duplicate ACKs that follow send
// nothing (ns-2's dupacks_ is past the threshold). ns-2's bug_fix_ allows no new fast
// retransmit until an ACK passes recover_ (highest_ack_ > recover_, recover_ = maxseq_ at
// the fast retransmit and at a timeout): the recovery point is set one byte past SND.MAX
// there, so the ACK of SND.MAX itself still leaves the socket in CA_LOSS (duplicate ACKs
// ignored, slow start). ns-3's own rule (one hole repaired per partial ACK, RFC 6582's
// NewReno with Tahoe's window) is not Tahoe's: 4.3BSD-Tahoe, RFC 5681 without fast
// recovery and ns-2 all resend from SND.UNA after a fast retransmit.
//
// With RenoRecovery (Reno, RFC 5681 3.2 step 6, and ns-2's Reno agent: "the first new ACK
// ends fast recovery"), a partial ACK ends fast recovery as a full one does: cwnd =
// ssthresh, no retransmission; the next hole needs three more duplicate ACKs (a new fast
// retransmit, which halves again: RenoRecovery takes no recovery point, as the net model's
// Reno sender) or the timer. ns-3.44 has no such rule: its socket stays in recovery until
// the ACK covers the recovery point (NewReno, RFC 6582). Implemented by moving the
// recovery point down to the ACK before ns-3 processes it, which also clears it (a later
// fast retransmit may start at once).
//
// With SampledVegas's Ns2FineTimer (Vegas with loss_cut ns2, on RenoRecovery), the socket
// follows ns-2's fine-grained retransmission (tcp-vegas.cc, VegasTcpAgent::recv: a segment
// older than Vegas's own timeout goes again on the first or second duplicate ACK, on a
// duplicate ACK of the recovery, or on one of the two ACKs of new data after it; rules
// F1-F6 of the net model's Vegas). SampledVegas keeps the timer and the record of
// transmissions; this socket resends, since ns-3's DupAck starts a fast retransmit only at
// the threshold (ProcessAck and the functions after SampledVegas).
class SampledVegas;

class Rfc5681Socket : public TcpnSocket {
  public:
    static TypeId GetTypeId() {
        static TypeId tid =
            TypeId("tcpn::Rfc5681Socket")
                .SetParent<TcpnSocket>()
                .SetGroupName("Tcpn")
                .AddConstructor<Rfc5681Socket>()
                .AddAttribute("RenoRecovery", "The first new ACK ends fast recovery (Reno)",
                              BooleanValue(false),
                              MakeBooleanAccessor(&Rfc5681Socket::m_renoRecovery),
                              MakeBooleanChecker())
                .AddAttribute("TahoeGoBackN",
                              "A fast retransmit goes back N in slow start (ns-2's Tahoe)",
                              BooleanValue(false),
                              MakeBooleanAccessor(&Rfc5681Socket::m_tahoeGoBackN),
                              MakeBooleanChecker())
                .AddAttribute("LossLimitedTransmit",
                              "Limited transmit on duplicate ACKs after a timeout (RFC 5681 "
                              "3.2 step 1, ns-2's send_one); false: ns-3's CA_LOSS ignores them",
                              BooleanValue(true),
                              MakeBooleanAccessor(&Rfc5681Socket::m_lossLimitedTransmit),
                              MakeBooleanChecker());
        return tid;
    }
    Rfc5681Socket() = default;
    Rfc5681Socket(const Rfc5681Socket& other)
        : TcpnSocket(other), m_renoRecovery(other.m_renoRecovery),
          m_tahoeGoBackN(other.m_tahoeGoBackN),
          m_lossLimitedTransmit(other.m_lossLimitedTransmit) {}
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }

  protected:
    Ptr<TcpSocketBase> Fork() override { return CopyObject<Rfc5681Socket>(this); }
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& header) override {
        SequenceNumber32 ack = header.GetAckNumber();
        if (m_renoRecovery && m_tcb->m_congState == TcpSocketState::CA_RECOVERY &&
            ack > m_txBuffer->HeadSequence() && ack < m_recover) {
            m_recover = ack;
        }
        SequenceNumber32 head = m_txBuffer->HeadSequence();
        if (ack > head) {
            m_lossDupAcks = 0;
        } else if (ack == head && head < m_tcb->m_highTxMark && packet->GetSize() == 0 &&
                   !(header.GetFlags() & (TcpHeader::SYN | TcpHeader::FIN)) &&
                   m_tcb->m_congState == TcpSocketState::CA_LOSS) {
            ++m_lossDupAcks;  // RFC 5681's duplicate ACK, which ns-3 ignores in CA_LOSS
        }
        bool partial = m_tcb->m_congState == TcpSocketState::CA_RECOVERY && ack < m_recover;
        if (!m_sackEnabled && ack > m_txBuffer->HeadSequence() && !partial) {
            m_txBuffer->ResetRenoSack();
        }
        bool duplicate = ack == m_txBuffer->HeadSequence() && packet->GetSize() == 0 &&
                         m_tcb->m_highTxMark > ack;
        SequenceNumber32 high = m_tcb->m_highTxMark;
        bool recovering = m_tcb->m_congState == TcpSocketState::CA_RECOVERY;
        TcpnSocket::ReceivedAck(packet, header);
        if (m_tahoeGoBackN && !recovering &&
            m_tcb->m_congState == TcpSocketState::CA_RECOVERY) {
            GoBackN();
            return;
        }
        if (m_tcb->m_congState != TcpSocketState::CA_LOSS) m_tahoeLoss = false;
        if (duplicate && m_tcb->m_highTxMark == high) LimitedTransmit();
    }
    // TahoeGoBackN: the fast retransmit just sent the head in CA_RECOVERY; go on as ns-2's
    // Tahoe (the class comment)
    void GoBackN() {
        const uint32_t segment = m_tcb->m_segmentSize;
        SequenceNumber32 head = m_txBuffer->HeadSequence();
        m_congestionControl->CongestionStateSet(m_tcb, TcpSocketState::CA_LOSS);
        m_tcb->m_congState = TcpSocketState::CA_LOSS;
        m_txBuffer->SetSentListLost(true);  // every segment sent goes again, the guesses end
        m_txBuffer->CopyFromSequence(segment, head);  // but the head has just gone again
        m_tcb->m_nextTxSequence = head + segment;
        m_recover = m_tcb->m_highTxMark.Get() + 1;  // bug_fix_: an ACK must pass SND.MAX
        m_recoverActive = true;
        m_dupAckCount = 0;
        m_lossDupAcks = m_retxThresh;  // no limited transmit before the next new ACK
        m_tahoeLoss = true;
        m_history.clear();
        m_retxEvent.Cancel();
        m_retxEvent = Simulator::Schedule(m_rto, &Rfc5681Socket::ReTxTimeout, this);
    }
    // TcpSocketBase::ReTxTimeout takes ssthresh from the first BytesInFlight() it asks for
    void ReTxTimeout() override {
        m_lossDupAcks = 0;
        if (TimeoutForgetsWorry()) m_worried = 0;  // Ns2FineTimer, F6
        if (m_tahoeLoss) {
            // ns-3 keeps ssthresh at a timeout of a head retransmitted in CA_LOSS (its own
            // timeout's); a Tahoe fast retransmit's is halved again, as in CA_RECOVERY
            m_txBuffer->DeleteRetransmittedFlagFromHead();
            m_tahoeLoss = false;
        }
        TcpnSocket::ReTxTimeout();
        if (m_tahoeGoBackN && m_tcb->m_congState == TcpSocketState::CA_LOSS) {
            m_recover = m_tcb->m_highTxMark.Get() + 1;  // bug_fix_, as at a fast retransmit
        }
    }
    // Rule 5: in CA_LOSS, after the k-th (k < DupThresh) duplicate ACK and once nothing
    // below the highest segment sent waits for its retransmission, the outstanding data
    // may reach min(cwnd + k segments, receive window)
    uint32_t AvailableWindow() const override {
        if (!m_lossLimitedTransmit || !m_limitedTx || m_sackEnabled ||
            m_tcb->m_congState != TcpSocketState::CA_LOSS || m_lossDupAcks == 0 ||
            m_lossDupAcks >= m_retxThresh || m_tcb->m_nextTxSequence < m_tcb->m_highTxMark) {
            return TcpSocketBase::AvailableWindow();
        }
        uint32_t window =
            std::min(m_rWnd.Get(), m_tcb->m_cWnd.Get() + m_lossDupAcks * m_tcb->m_segmentSize);
        uint32_t flight = UnAckDataCount();
        return flight > window ? 0 : window - flight;
    }
    bool RfcRulesWithoutSack() const override { return true; }
    // RFC 3042 on the first two duplicate ACKs: one new segment if the data outstanding
    // stays within cwnd + that many segments (the net model's rule, ns-2's send_one with
    // singledup_). ns-3 sends on a duplicate ACK only what its pipe estimate allows, which
    // counts a guessed SACK per duplicate ACK: with the head segment alone outstanding
    // (after a timeout's go-back-N, whose duplicates draw the duplicate ACKs) nothing can
    // be guessed and nothing left (study S4 condition 3, 23.99 s: the net lens sent two
    // segments, ns-3 none).
    void LimitedTransmit() {
        const uint32_t segment = m_tcb->m_segmentSize;
        if (!m_limitedTx || m_tcb->m_congState != TcpSocketState::CA_DISORDER ||
            m_dupAckCount == 0 || m_dupAckCount >= m_retxThresh ||
            m_tcb->m_nextTxSequence != m_tcb->m_highTxMark ||
            m_txBuffer->SizeFromSequence(m_tcb->m_nextTxSequence) < segment ||
            UnAckDataCount() + segment > m_tcb->m_cWnd.Get() + m_dupAckCount * segment ||
            UnAckDataCount() + segment > m_rWnd.Get()) {
            return;
        }
        uint32_t sent = SendDataPacket(m_tcb->m_nextTxSequence, segment, true);
        m_tcb->m_nextTxSequence += sent;
    }
    // Ns2FineTimer (defined after SampledVegas): every ACK goes through ns-3's ProcessAck,
    // then the fine timer's rules
    void ProcessAck(const SequenceNumber32& ackNumber, bool scoreboardUpdated,
                    uint32_t currentDelivered, const SequenceNumber32& oldHeadSequence,
                    bool receivedData) override;
    void FineNewAck(SampledVegas& vegas, SequenceNumber32 ack);
    bool TimeoutForgetsWorry() const;
    void FineResent(SampledVegas& vegas, bool resentBefore);
    void GuessOut(uint32_t segments);
    void ResendHead();

  private:
    bool m_renoRecovery{false};
    bool m_tahoeGoBackN{false};
    bool m_tahoeLoss{false};  // CA_LOSS entered by a Tahoe fast retransmit, no timeout since
    bool m_lossLimitedTransmit{true};
    uint32_t m_lossDupAcks{0};  // duplicate ACKs since the last new ACK or the timeout
    uint32_t m_worried{0};      // Ns2FineTimer: ns-2's v_worried_, ACKs of new data to check
};

// ---------------------------------------------------------------------------------------
// NewReno's window arithmetic with the fraction of congestion avoidance kept: each ACK adds
// MSS * MSS / cwnd to a window held in double-precision bytes, and the socket's integer
// window is that window rounded down. ns-3.44's TcpNewReno adds static_cast<uint32_t>(MSS *
// MSS / cwnd) bytes, dropping up to a byte at every ACK (a window growing from 4 to 15
// segments of 1000 bytes lags by about 50 bytes); ns-2's TcpAgent::opencwnd (cwnd_ +=
// 1 / cwnd_ on a double window, wnd_option_ 1) and the net model (tcpn/models/components/
// sender.py, grow) add the exact amount. The window follows any other change of the
// socket's window (slow start, a loss, the end of a recovery) before it grows.
// The window of the congestion-avoidance rule above, in double-precision bytes, written to
// the socket rounded down; shared by NewReno and WestwoodPlus.
class FractionalWindow {
  public:
    void Grow(Ptr<TcpSocketState> tcb) {
        uint32_t cwnd = tcb->m_cWnd.Get();
        if (cwnd != m_written) m_window_bytes = cwnd;  // changed elsewhere: start from it
        const double segment = tcb->m_segmentSize;
        m_window_bytes += std::max(1.0, segment * segment / m_window_bytes);
        m_written = static_cast<uint32_t>(m_window_bytes);
        tcb->m_cWnd = m_written;
    }

  private:
    double m_window_bytes{0.0};
    uint32_t m_written{0};
};

class NewReno : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::NewReno")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<NewReno>();
        return tid;
    }
    NewReno() = default;
    NewReno(const NewReno& other) = default;
    std::string GetName() const override { return "NewReno"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NewReno>(this); }

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
        if (segmentsAcked > 0) m_window.Grow(tcb);
    }

  private:
    FractionalWindow m_window;
};

// ns-3's Westwood+ (a TcpNewReno: its bandwidth estimate and ssthresh untouched) with the
// same congestion avoidance as NewReno above. ns-3.44's TcpWestwoodPlus inherits
// TcpNewReno's integer step, so in study S4's lossy hop against Reno (replication 0) its
// window fell a byte behind the net model's every few ACKs (30,066 against 30,067 bytes
// at 1.82 s) and one segment behind by 4.7 s, where the drops parted.
class WestwoodPlus : public TcpWestwoodPlus {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::WestwoodPlus")
                                .SetParent<TcpWestwoodPlus>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<WestwoodPlus>();
        return tid;
    }
    WestwoodPlus() = default;
    WestwoodPlus(const WestwoodPlus& other) = default;
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<WestwoodPlus>(this); }

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
        if (segmentsAcked > 0) m_window.Grow(tcb);
    }

  private:
    FractionalWindow m_window;
};

// ---------------------------------------------------------------------------------------
// The Vegas family of tcpn's net model (tcpn/models/components/congestion/vegas.py). The sender times
// its own segments, as Brakmo and Peterson's Vegas: an ACK of new data outside fast
// recovery (IncreaseWindow) gives a sample when the newest segment it covers (the one
// ending at the ACK number) was sent once (Karn's rule; the socket's Tx trace records
// first transmissions, AttachVariant); BaseRTT is the smallest sample. A round ends at the
// first ACK covering a segment sent after the previous round ended (the first ACK ends
// one) once it holds MinRoundSamples samples; its decision compares Diff = W * (1 -
// BaseRTT / RTT), RTT the latest sample, with gamma in slow start (leave it with W =
// min(W, W * BaseRTT / RTT + gamma), ssthresh = max(2, min(ssthresh, W - 1))) or with a
// low/high target in congestion avoidance (+1 / -1 segment per RTT, a decrease also lowers
// ssthresh). Slow start grows +1 segment per ACK in every other round only. Leaving fast
// recovery or a timeout restarts the round; a timeout also forgets the send times. Losses
// are NewReno's (ns-3's socket and TcpClassicRecovery). Subclasses say what a sample is
// and what the congestion-avoidance target is. With Ns2FineTimer it also keeps ns-2's
// fine-grained retransmission timer (tcp-vegas.cc: v_sa_, v_sd_, v_timeout_, and the
// v_sendtime_ and v_transmits_ of each segment), which Rfc5681Socket reads to resend.
class SampledVegas : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid =
            TypeId("tcpn::SampledVegas")
                .SetParent<TcpNewReno>()
                .SetGroupName("Tcpn")
                .AddAttribute("Alpha", "Lower bound of Diff in congestion avoidance (segments)",
                              DoubleValue(2), MakeDoubleAccessor(&SampledVegas::m_alpha),
                              MakeDoubleChecker<double>(0))
                .AddAttribute("Beta", "Upper bound of Diff in congestion avoidance (segments)",
                              DoubleValue(4), MakeDoubleAccessor(&SampledVegas::m_beta),
                              MakeDoubleChecker<double>(0))
                .AddAttribute("Gamma", "Diff above which slow start ends (segments)",
                              DoubleValue(1), MakeDoubleAccessor(&SampledVegas::m_gamma),
                              MakeDoubleChecker<double>(0))
                .AddAttribute("MinRoundSamples", "Samples a round needs to take a decision",
                              UintegerValue(1),
                              MakeUintegerAccessor(&SampledVegas::m_minRoundSamples),
                              MakeUintegerChecker<uint32_t>(1))
                .AddAttribute("Ns2LossCut",
                              "At a fast retransmit, ns-2's Vegas window: a cut by a quarter "
                              "(half for a segment resent, 2 below 4), once per window",
                              BooleanValue(false),
                              MakeBooleanAccessor(&SampledVegas::m_ns2LossCut),
                              MakeBooleanChecker())
                .AddAttribute("Ns2FineTimer",
                              "ns-2's fine-grained retransmission (with Ns2LossCut, on "
                              "Rfc5681Socket's RenoRecovery)",
                              BooleanValue(false),
                              MakeBooleanAccessor(&SampledVegas::m_fineTimer),
                              MakeBooleanChecker())
                .AddAttribute("Ns2FixLevel",
                              "ns-2's ns_vegas_fix_level_ (with Ns2FineTimer): from 1 a "
                              "timeout forgets the worry, from 3 a recovery of exactly three "
                              "duplicate ACKs ends deflated",
                              UintegerValue(3),
                              MakeUintegerAccessor(&SampledVegas::m_fixLevel),
                              MakeUintegerChecker<uint32_t>(0, 3));
        return tid;
    }
    SampledVegas() = default;
    SampledVegas(const SampledVegas& other) = default;

    double base_rtt_s{0.0};  // BaseRTT after the latest sample
    double rtt_s{0.0};       // the RTT of the latest sample (what a decision uses)
    uint64_t samples_total{0}, decisions{0};
    Series diff, low, high;  // each decision: Diff and the band it was compared with
    // Ns2FineTimer: ns-2's estimator (v_sa_ / 8, v_sd_ / 4, v_timeout_), seconds
    double fine_srtt_s{-1.0};  // below zero: no sample yet
    double fine_rttvar_s{0.0};
    double fine_rto_s{1000.0};  // ns-2's initial v_timeout_: nothing expires before a sample

    // The socket's Tx trace: the send time of each segment's first transmission, by the
    // sequence number that ends it; a retransmission makes the segment unusable. With
    // Ns2FineTimer also each segment's latest transmission, by the sequence number that
    // starts it, and whether it has been sent more than once (ns-2's output(): v_sendtime_,
    // ++v_transmits_); after a timeout (the record cleared) the go-back-N resends count
    // as sent more than once.
    void OnTx(Ptr<const Packet> segment, const TcpHeader& header, Ptr<const TcpSocketBase>) {
        if (segment->GetSize() == 0) return;
        SequenceNumber32 seq = header.GetSequenceNumber();
        SequenceNumber32 end = seq + segment->GetSize();
        if (m_fineTimer) {
            m_fineTx[seq.GetValue()] = {end.GetValue(), Simulator::Now().GetNanoSeconds(),
                                        m_anySent && seq < m_highSent};
        }
        if (m_anySent && seq < m_highSent) {
            m_sent.erase(end.GetValue());
        } else {
            m_sent[end.GetValue()] = Simulator::Now().GetNanoSeconds();
        }
        if (!m_anySent || end > m_highSent) m_highSent = end;
        m_anySent = true;
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t) override {
        if (m_skip) {  // the ACK that ends fast recovery: cwnd = ssthresh, no sample
            m_skip = false;
            return;
        }
        if (!m_started) {  // the first ACK may decide (the net model's round_end = 0)
            m_started = true;
            m_roundEnd = SequenceNumber32(tcb->m_lastAckedSeq.GetValue() - 1);
        }
        uint32_t ack = tcb->m_lastAckedSeq.GetValue();
        auto it = m_sent.find(ack);
        if (it != m_sent.end() && Sample(tcb, it->second)) {
            ++samples_total;
            ++m_samples;
        }
        m_sent.erase(m_sent.begin(), m_sent.upper_bound(ack));
        const double seg = tcb->m_segmentSize;
        double cwnd = tcb->m_cWnd.Get() / seg;
        double ssthresh = tcb->m_ssThresh.Get() / seg;
        bool lowered = false;
        if (tcb->m_lastAckedSeq > m_roundEnd && m_samples >= m_minRoundSamples && rtt_s > 0) {
            bool slow = Decide(cwnd, ssthresh, lowered);
            ++decisions;
            m_samples = 0;
            m_roundEnd = tcb->m_nextTxSequence;
            m_grow = slow && !m_grow;
        }
        if (cwnd < ssthresh && m_grow) cwnd += 1.0;
        tcb->m_cWnd = static_cast<uint32_t>(std::lround(cwnd * seg));
        if (lowered) tcb->m_ssThresh = static_cast<uint32_t>(std::lround(ssthresh * seg));
    }
    // Ns2LossCut: tcpn.models.components.congestion.vegas.ns2_vegas_window. EnterRecovery
    // sets CA_RECOVERY just before asking (the fast retransmit, before the segment goes
    // again: m_sent still says whether it left once); any other call is a timeout's, which
    // halves as Reno and counts the segments in flight as sent before a cut.
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        bool fast_retransmit = m_enteringRecovery;
        m_enteringRecovery = false;
        if (!m_ns2LossCut) return TcpNewReno::GetSsThresh(tcb, bytesInFlight);
        SequenceNumber32 cutSeq = m_cutSeq;
        m_cutSeq = tcb->m_highTxMark;  // the window changes here (t_cwnd_changed_)
        if (!fast_retransmit) return TcpNewReno::GetSsThresh(tcb, bytesInFlight);
        const uint32_t seg = tcb->m_segmentSize;
        uint32_t una = tcb->m_lastAckedSeq.GetValue();
        bool first = m_sent.count(una + seg) > 0;
        int w = static_cast<int>(tcb->m_cWnd.Get() / static_cast<double>(seg));
        double win = w;  // win = window(), kept for a segment sent before the last change
        if (!(first && SequenceNumber32(una) < cutSeq)) {
            win = w <= 3 ? 2.0 : static_cast<double>(first ? w - (w >> 2) : w >> 1);
        }
        return static_cast<uint32_t>(std::lround(win * seg));
    }
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t state) override {
        m_enteringRecovery = state == TcpSocketState::CA_RECOVERY;
        bool leaving_recovery = state == TcpSocketState::CA_OPEN &&
                                tcb->m_congState == TcpSocketState::CA_RECOVERY;
        if (state == TcpSocketState::CA_LOSS || leaving_recovery) {
            m_samples = 0;
            m_roundEnd = tcb->m_highTxMark;
            m_started = true;
        }
        if (state == TcpSocketState::CA_LOSS) {
            m_sent.clear();
            m_fineTx.clear();  // Ns2FineTimer, F6
        }
        if (leaving_recovery) m_skip = true;
    }

    // Ns2FineTimer (Rfc5681Socket calls these)
    bool FineTimer() const { return m_fineTimer; }
    uint32_t FixLevel() const { return m_fixLevel; }
    // F1, on every ACK of new data `ack`: when the segment that ends at it was sent once, a
    // sample s = now - its send time (VegasTcpAgent::recv: "update fine-grained timeout
    // value, v_timeout_"; the first sample sets v_sa_ = 8 s, v_sd_ = s, as ns-2's first
    // ACK), then err = s - srtt, srtt += err / 8, rttvar += (|err| - rttvar) / 4, fine_rto
    // = (srtt + 2 rttvar) * 17 / 16 (v_timeout_ = ((v_sa_ / 4) + v_sd_) / 2, += 1 / 16).
    // The segments acknowledged leave the record.
    void FineAck(SequenceNumber32 ack) {
        auto after = m_fineTx.lower_bound(ack.GetValue());
        if (after != m_fineTx.begin()) {
            const FineTx& newest = std::prev(after)->second;
            if (newest.end == ack.GetValue() && !newest.resent) {
                double s = static_cast<double>(Simulator::Now().GetNanoSeconds() -
                                               newest.sent_ns) * 1e-9;
                if (fine_srtt_s < 0) {
                    fine_srtt_s = s;
                    fine_rttvar_s = s / 4.0;
                }
                double err = s - fine_srtt_s;
                fine_srtt_s += err / 8.0;
                fine_rttvar_s += (std::fabs(err) - fine_rttvar_s) / 4.0;
                fine_rto_s = (fine_srtt_s + 2.0 * fine_rttvar_s) * 17.0 / 16.0;
            }
        }
        m_fineTx.erase(m_fineTx.begin(), after);
    }
    // expired(seq) (vegas_expire): the segment that starts at `seq` has a transmission on
    // record, at least fine_rto old
    bool Expired(SequenceNumber32 seq) const {
        auto it = m_fineTx.find(seq.GetValue());
        return it != m_fineTx.end() &&
               static_cast<double>(Simulator::Now().GetNanoSeconds() - it->second.sent_ns) *
                       1e-9 >= fine_rto_s;
    }
    // Whether the segment that starts at `seq` has been sent more than once
    bool Resent(SequenceNumber32 seq) const {
        auto it = m_fineTx.find(seq.GetValue());
        return it != m_fineTx.end() && it->second.resent;
    }
    // F2-F4, at each resend: v_timeout_ *= 2 for a segment already sent more than once,
    // else v_timeout_ += v_timeout_ / 8
    void FineBackoff(bool resentBefore) { fine_rto_s *= resentBefore ? 2.0 : 9.0 / 8.0; }
    // F4: the window changes at this resend (t_cwnd_changed_), with no cut
    void FineWindowChanged(SequenceNumber32 high) { m_cutSeq = high; }

  protected:
    double m_alpha{2}, m_beta{4}, m_gamma{1};
    uint32_t m_minRoundSamples{1};
    // Take the sample of this ACK, whose newest segment left at `sent_ns` (sender clock),
    // into base_rtt_s and rtt_s; false when it gives none.
    virtual bool Sample(Ptr<TcpSocketState> tcb, int64_t sent_ns) = 0;
    // The congestion-avoidance band [low, high] of Diff at window `cwnd` (segments).
    virtual void Target(double cwnd, double* low, double* high) {
        *low = m_alpha;
        *high = m_beta;
    }

  private:
    uint64_t m_samples{0};
    SequenceNumber32 m_roundEnd{0}, m_highSent{0};
    bool m_started{false}, m_grow{false}, m_skip{false}, m_anySent{false};
    bool m_ns2LossCut{false}, m_enteringRecovery{false};
    SequenceNumber32 m_cutSeq{0};  // Ns2LossCut: segments from here on left after the window
                                   // last changed at a loss
    std::map<uint32_t, int64_t> m_sent;  // end sequence number -> first transmission (ns)
    bool m_fineTimer{false};             // Ns2FineTimer
    uint32_t m_fixLevel{3};              // Ns2FixLevel
    struct FineTx {
        uint32_t end;     // the sequence number that ends the segment
        int64_t sent_ns;  // its latest transmission
        bool resent;      // sent more than once
    };
    std::map<uint32_t, FineTx> m_fineTx;  // Ns2FineTimer: start sequence number -> record

    // tcpn.models.components.congestion.vegas.vegas_decision: true while still in slow start.
    bool Decide(double& cwnd, double& ssthresh, bool& lowered) {
        double diff = cwnd * (1.0 - base_rtt_s / rtt_s);
        this->diff.Add(diff);
        if (cwnd < ssthresh) {
            this->low.Add(m_gamma);
            this->high.Add(m_gamma);
            if (diff > m_gamma) {
                cwnd = std::min(cwnd, cwnd * base_rtt_s / rtt_s + m_gamma);
                ssthresh = std::max(2.0, std::min(ssthresh, cwnd - 1.0));
                lowered = true;
                return false;
            }
            return true;
        }
        double low, high;
        Target(cwnd, &low, &high);
        this->low.Add(low);
        this->high.Add(high);
        if (diff < low) {
            cwnd += 1.0;
        } else if (diff > high) {
            cwnd = std::max(2.0, cwnd - 1.0);
            ssthresh = std::max(2.0, std::min(ssthresh, cwnd - 1.0));
            lowered = true;
        }
        return false;
    }
};

// ---------------------------------------------------------------------------------------
// Rfc5681Socket under SampledVegas's Ns2FineTimer: ns-2's fine-grained retransmission
// (tcp-vegas.cc, VegasTcpAgent::recv, the rules F1-F6 of the net model's Vegas). k is ns-2's
// dupacks_ after the ACK: ns-3's m_dupAckCount, which this socket counts on in recovery
// (ns-3 stops at the fast retransmit). ns-2's cwnd_ in recovery is ns-3's m_cWndInfl; ns-3
// sends within m_cWnd (= ssthresh, the deflation target) a pipe with one guessed SACK per
// duplicate ACK (Reno SACK), the same rule as outstanding < cwnd_ when the guesses are as
// many as the inflation: GuessOut sets them where ns-2 sets cwnd_ = win + k.
inline void Rfc5681Socket::ProcessAck(const SequenceNumber32& ackNumber, bool scoreboardUpdated,
                                      uint32_t currentDelivered,
                                      const SequenceNumber32& oldHeadSequence,
                                      bool receivedData) {
    Ptr<SampledVegas> vegas = DynamicCast<SampledVegas>(m_congestionControl);
    if (!vegas || !vegas->FineTimer()) {
        TcpnSocket::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence,
                               receivedData);
        return;
    }
    const SequenceNumber32 una = oldHeadSequence;
    bool duplicate = ackNumber == una && una < m_tcb->m_highTxMark && !receivedData;
    TcpSocketState::TcpCongState_t before = m_tcb->m_congState;
    bool resentBefore = vegas->Resent(una);  // before a fast retransmit of this ACK
    uint32_t inflated = m_tcb->m_cWndInfl;   // ns-2's cwnd_ before this ACK
    if (duplicate && before == TcpSocketState::CA_RECOVERY) ++m_dupAckCount;
    // ns-2 deflates cwnd_ at the ACK that ends a recovery only after more than three
    // duplicate ACKs, or exactly three with ns_vegas_fix_level_ >= 3, and only down
    // (cwnd_ > v_newcwnd_, the deflation target ssthresh here)
    bool deflates = (m_dupAckCount > m_retxThresh ||
                     (vegas->FixLevel() >= 3 && m_dupAckCount == m_retxThresh)) &&
                    inflated > m_tcb->m_ssThresh.Get();
    TcpnSocket::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence,
                           receivedData);
    if (ackNumber > una) {
        if (!deflates && before == TcpSocketState::CA_RECOVERY &&
            m_tcb->m_congState == TcpSocketState::CA_OPEN) {
            m_tcb->m_cWnd = inflated;  // ns-2's cwnd_ kept inflated
            m_tcb->m_cWndInfl = inflated;
            SendPendingData(m_connected);
        }
        FineNewAck(*vegas, ackNumber);
        return;
    }
    if (!duplicate) return;
    if (before != TcpSocketState::CA_RECOVERY &&
        m_tcb->m_congState == TcpSocketState::CA_RECOVERY) {
        FineResent(*vegas, resentBefore);  // F3: ns-3's own fast retransmit and window
        return;
    }
    if (!vegas->Expired(una)) return;
    const uint32_t segment = m_tcb->m_segmentSize;
    if (before == TcpSocketState::CA_RECOVERY) {
        // F4: the retransmission itself was lost and is older than fine_rto: resend it;
        // win = window(), the inflated window (t_cwnd_changed_ is not below its send time:
        // no cut), becomes the deflation target (vegas_inflate_cwnd: v_newcwnd_ = win, and
        // t_cwnd_changed_ = now); cwnd_ = win + k
        uint32_t win = std::min(inflated, m_rWnd.Get()) / segment;
        m_tcb->m_ssThresh = win * segment;
        m_tcb->m_cWnd = win * segment;
        m_tcb->m_cWndInfl = (win + m_dupAckCount) * segment;
        vegas->FineWindowChanged(m_tcb->m_highTxMark);
        GuessOut(m_dupAckCount);
        ResendHead();
        FineResent(*vegas, resentBefore);
    } else if (m_tcb->m_congState == TcpSocketState::CA_DISORDER &&
               m_dupAckCount < m_retxThresh &&
               (m_highRxAckMark >= m_recover || !m_recoverActive)) {
        // F2: the first or second duplicate ACK of an expired head, a fast retransmit
        // allowed (bug_fix_): as at the third (EnterRecovery; SampledVegas's ns-2 window
        // win), with cwnd_ = win + k (vegas_inflate_cwnd), then dupacks_ = NUMDUPACKS
        GuessOut(m_dupAckCount - 1);  // EnterRecovery guesses the k-th
        EnterRecovery(currentDelivered);
        m_dupAckCount = m_retxThresh;
        FineResent(*vegas, resentBefore);
    }
}

// F6: a timeout forgets the worry with ns_vegas_fix_level_ >= 1 (VegasTcpAgent::timeout)
inline bool Rfc5681Socket::TimeoutForgetsWorry() const {
    Ptr<SampledVegas> vegas = DynamicCast<SampledVegas>(m_congestionControl);
    return !vegas || vegas->FixLevel() >= 1;
}

// F1 on every ACK of new data, then F5 while worried: the first or second ACK of new data
// after a resend ("check the 1st or 2nd acks after dup ack received"): worried -= 1; if the
// next unacknowledged segment is expired it goes again, with no window change and no
// backoff ("no need to change cwnd since we already did"), and dupacks_ = NUMDUPACKS: a
// recovery whose next new ACK deflates cwnd to its value now (ssthresh) and whose
// duplicate ACKs inflate it by one each; else worried = 0. SampledVegas is not told of
// this recovery (CongestionStateSet would take the next ssthresh for a fast
// retransmit's); leaving it is an ordinary exit.
inline void Rfc5681Socket::FineNewAck(SampledVegas& vegas, SequenceNumber32 ack) {
    vegas.FineAck(ack);
    if (m_worried == 0) return;
    --m_worried;
    if (ack >= m_tcb->m_highTxMark || !vegas.Expired(ack)) {
        m_worried = 0;
        return;
    }
    m_tcb->m_ssThresh = m_tcb->m_cWnd.Get();
    m_tcb->m_cWndInfl = m_tcb->m_cWnd.Get();
    ResendHead();
    m_tcb->m_congState = TcpSocketState::CA_RECOVERY;
    m_recover = m_tcb->m_highTxMark.Get();
    m_recoverActive = true;
    m_dupAckCount = m_retxThresh;
    KeepPipe();
}

// F2, F3, F4 (ns-2's branch "if (expired >= 0 || dupacks_ == NUMDUPACKS)"): the fine_rto
// backoff, worried = min(2, one more than the segments from SND.UNA to SND.NXT)
// (v_worried_ = MIN(2, t_seqno_ - last_ack_): ns-2 numbers the ACK by the last segment
// received, one below SND.UNA's), and the coarse timer restarted with the current RTO, no
// backoff (reset_rtx_timer(1, 0))
inline void Rfc5681Socket::FineResent(SampledVegas& vegas, bool resentBefore) {
    const uint32_t segment = m_tcb->m_segmentSize;
    vegas.FineBackoff(resentBefore);
    uint32_t unsent = m_tcb->m_nextTxSequence.Get() - m_txBuffer->HeadSequence();
    m_worried = std::min(2u, (unsent + segment - 1) / segment + 1);
    m_retxEvent.Cancel();
    m_retxEvent = Simulator::Schedule(m_rto, &Rfc5681Socket::ReTxTimeout, this);
}

// The pipe counts `segments` duplicate ACKs out of the network (Reno SACK guesses above
// SND.UNA)
inline void Rfc5681Socket::GuessOut(uint32_t segments) {
    m_txBuffer->ResetRenoSack();
    for (uint32_t i = 0; i < segments; ++i) m_txBuffer->AddRenoSack();
}

// Resend SND.UNA (ns-2's output(seqno)), counted once in the pipe (lost, then resent)
inline void Rfc5681Socket::ResendHead() {
    m_txBuffer->MarkHeadAsLost();
    SendDataPacket(m_txBuffer->HeadSequence(), m_tcb->m_segmentSize, true);
}

// Vegas as Brakmo and Peterson defined it and the net model (and ns-2's Vegas agent)
// computes it: every sample is the sender's own timing of a segment, BaseRTT the smallest,
// the decision of a round uses the latest sample. ns-3.44's TcpVegas decides on the
// minimum, over a round, of the smoothed RTT (TcpSocketBase passes SRTT to PktsAcked), a
// signal that lags the queue by several round trips; it is kept as params.law: ns3.
class Vegas : public SampledVegas {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::Vegas")
                                .SetParent<SampledVegas>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<Vegas>();
        return tid;
    }
    Vegas() = default;
    Vegas(const Vegas& other) = default;
    std::string GetName() const override { return "Vegas"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<Vegas>(this); }

  protected:
    bool Sample(Ptr<TcpSocketState>, int64_t sent_ns) override {
        double sample = static_cast<double>(Simulator::Now().GetNanoSeconds() - sent_ns) * 1e-9;
        base_rtt_s = samples_total == 0 ? sample : std::min(base_rtt_s, sample);
        rtt_s = sample;
        return true;
    }
};

// Modified Vegas (study S1, fix 2): each ACK is <ts, tr, ta> with ts the sender's clock
// when the sampled segment left, tr the receiver's own clock (its TSval in the RFC 7323
// option, ms ticks, whatever offset or drift the receiver's clock has: see
// TcpSink::SetClock) and ta the arrival time. Tf0 = min(tr - ts), Tb0 = min(ta - tr),
// BaseRTT = Tf0 + Tb0, RTT = tr - ts + Tb0. Differences are taken in integer nanoseconds,
// so a constant offset of whole milliseconds cancels exactly. Needs the timestamp option.
class ModifiedVegas : public SampledVegas {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::ModifiedVegas")
                                .SetParent<SampledVegas>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<ModifiedVegas>();
        return tid;
    }
    ModifiedVegas() = default;
    ModifiedVegas(const ModifiedVegas& other) = default;
    std::string GetName() const override { return "ModifiedVegas"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<ModifiedVegas>(this); }

    int64_t tf0_ns{0}, tb0_ns{0};  // the two running minima (receiver clock minus sender's)

  protected:
    bool Sample(Ptr<TcpSocketState> tcb, int64_t sent_ns) override {
        int64_t tr = static_cast<int64_t>(tcb->m_rcvTimestampValue) * 1000000;
        int64_t ta = Simulator::Now().GetNanoSeconds();
        int64_t fwd = tr - sent_ns, bwd = ta - tr;
        tf0_ns = samples_total == 0 ? fwd : std::min(tf0_ns, fwd);
        tb0_ns = samples_total == 0 ? bwd : std::min(tb0_ns, bwd);
        base_rtt_s = static_cast<double>(tf0_ns + tb0_ns) * 1e-9;
        rtt_s = static_cast<double>(fwd + tb0_ns) * 1e-9;
        return true;
    }
};

// Reno-friendly (adaptive) Vegas (study S4): aveRTT = (1 - w) aveRTT + w RTT on every
// sample, and congestion avoidance compares Diff with N = W - W * BaseRTT / aveRTT instead
// of alpha / beta.
class AdaptiveVegas : public SampledVegas {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::AdaptiveVegas")
                                .SetParent<SampledVegas>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<AdaptiveVegas>()
                                .AddAttribute("Weight", "EWMA gain w of aveRTT", DoubleValue(0.125),
                                              MakeDoubleAccessor(&AdaptiveVegas::m_weight),
                                              MakeDoubleChecker<double>(0, 1));
        return tid;
    }
    AdaptiveVegas() = default;
    AdaptiveVegas(const AdaptiveVegas& other) = default;
    std::string GetName() const override { return "AdaptiveVegas"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<AdaptiveVegas>(this); }

    double ave_rtt_s{0.0};

  protected:
    bool Sample(Ptr<TcpSocketState>, int64_t sent_ns) override {
        double sample = static_cast<double>(Simulator::Now().GetNanoSeconds() - sent_ns) * 1e-9;
        bool first = samples_total == 0;
        base_rtt_s = first ? sample : std::min(base_rtt_s, sample);
        ave_rtt_s = first ? sample : (1.0 - m_weight) * ave_rtt_s + m_weight * sample;
        rtt_s = sample;
        return true;
    }
    // aveRTT on the samples' clock of whole nanoseconds: a mean within half a nanosecond
    // of the latest sample is that sample, and N is computed as Diff is, so that Diff == N
    // to the last bit (the net model's adaptive_target)
    void Target(double cwnd, double* low, double* high) override {
        double ave = std::nearbyint(ave_rtt_s * 1e9) * 1e-9;  // halves to even, as round()
        *low = *high = cwnd * (1.0 - base_rtt_s / ave);
    }

  private:
    double m_weight{0.125};
};

// ---------------------------------------------------------------------------------------
// TCP-L (study S3). The receiver's last-hop report (time taken, frames sent, frames
// failed) rides on each ACK as a packet tag (a side channel in place of the study's TCP
// option: it adds no bytes, as in the net model, but is delayed, queued and lost with the
// ACK that carries it). TcpSink takes the reports (see apps.h).
class ReportTag : public Tag {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::ReportTag")
                                .SetParent<Tag>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<ReportTag>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 24; }
    void Serialize(TagBuffer buffer) const override {
        buffer.WriteDouble(time_s);
        buffer.WriteU64(sent);
        buffer.WriteU64(failed);
    }
    void Deserialize(TagBuffer buffer) override {
        time_s = buffer.ReadDouble();
        sent = buffer.ReadU64();
        failed = buffer.ReadU64();
    }
    void Print(std::ostream& os) const override {
        os << "report t=" << time_s << " sent=" << sent << " failed=" << failed;
    }
    double time_s{-1.0};
    uint64_t sent{0}, failed{0};
};

// The TCP-L sender: NewReno whose reaction to three duplicate ACKs or a timeout happens
// only with probability P_congestion (tcpn.models.components.congestion.tcp_l.tcp_l_reacts):
// Loss_tcp = (retransmitted + 1) / (sent + 1) segments, counting the retransmission the
// loss is about to cause; Loss_link = failed / sent frames of the latest report (0 before
// any); P = clamp((Loss_tcp - Loss_link) / Loss_tcp, 0, 1); react when P > U[0, 1).
// Without a reaction, fast retransmit enters recovery with ssthresh = max(cwnd, 2 MSS)
// (recovery ends at the same window) and a timeout keeps cwnd and ssthresh: ns-3's socket
// sets cwnd to one segment and retransmits the head, then an event at the same instant
// puts the window back, and TcpnSocket sends the segments its timeout marked lost within
// it (every outstanding one, from SND.UNA: ns-2's TCP-Linux, whose timeout marks them all
// lost and resends them before new data; the study's pseudo-code leaves only the window's
// reduction to the draw). Counters come from the socket's Tx and Rx traces (AttachVariant).
class TcpL : public NewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("tcpn::TcpL")
                                .SetParent<NewReno>()
                                .SetGroupName("Tcpn")
                                .AddConstructor<TcpL>()
                                .AddAttribute("Stream", "Random stream of the U[0, 1) draws",
                                              IntegerValue(-1),
                                              MakeIntegerAccessor(&TcpL::SetStream),
                                              MakeIntegerChecker<int64_t>());
        return tid;
    }
    TcpL() = default;
    TcpL(const TcpL& other)
        : NewReno(other), sent(other.sent), retx(other.retx), link_sent(other.link_sent),
          link_failed(other.link_failed), report_time_s(other.report_time_s) {
        m_uniform->SetStream(other.m_uniform->GetStream());
    }
    std::string GetName() const override { return "TcpL"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpL>(this); }

    uint64_t sent{0}, retx{0};                   // data segments sent, of which resent
    uint64_t link_sent{0}, link_failed{0};       // the latest report adopted
    double report_time_s{-1.0};
    uint64_t reactions{0}, kept{0}, reports{0};  // decisions taken, reports adopted
    Series p_congestion, reacted;                // each decision: P and 1 (react) or 0

    void SetStream(int64_t stream) { m_uniform->SetStream(stream); }

    void OnTx(Ptr<const Packet> segment, const TcpHeader& header, Ptr<const TcpSocketBase>) {
        if (segment->GetSize() == 0) return;
        SequenceNumber32 seq = header.GetSequenceNumber();
        SequenceNumber32 end = seq + segment->GetSize();
        if (sent > 0 && seq < m_high) ++retx;
        if (sent == 0 || end > m_high) m_high = end;
        ++sent;
    }
    void OnRx(Ptr<const Packet> segment, const TcpHeader&, Ptr<const TcpSocketBase>) {
        ReportTag tag;
        if (segment->PeekPacketTag(tag) && tag.time_s > report_time_s) {
            report_time_s = tag.time_s;
            link_sent = tag.sent;
            link_failed = tag.failed;
            ++reports;
        }
    }
    double PCongestion() const {
        double loss_tcp = static_cast<double>(retx + 1) / static_cast<double>(sent + 1);
        double loss_link = link_sent > 0 ? static_cast<double>(link_failed) / link_sent : 0.0;
        if (loss_tcp <= 0) return 1.0;
        return std::min(1.0, std::max(0.0, (loss_tcp - loss_link) / loss_tcp));
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        bool recovery = m_enteringRecovery;
        m_enteringRecovery = false;
        m_react = Decide();
        m_decided = !recovery;  // a timeout's decision is applied at CA_EVENT_LOSS
        if (m_react) return TcpNewReno::GetSsThresh(tcb, bytesInFlight);
        if (recovery) return std::max(tcb->m_cWnd.Get(), 2 * tcb->m_segmentSize);
        return tcb->m_ssThresh.Get();
    }
    void CongestionStateSet(Ptr<TcpSocketState>,
                            const TcpSocketState::TcpCongState_t state) override {
        if (state == TcpSocketState::CA_RECOVERY) m_enteringRecovery = true;
    }
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override {
        if (event != TcpSocketState::CA_EVENT_LOSS) return;
        // a repeated timeout of a retransmitted head skips GetSsThresh: decide here
        bool react = m_decided ? m_react : Decide();
        m_decided = false;
        if (!react) Simulator::ScheduleNow(&TcpL::Restore, tcb, tcb->m_cWnd.Get());
    }

  private:
    Ptr<UniformRandomVariable> m_uniform = CreateObject<UniformRandomVariable>();
    SequenceNumber32 m_high{0};
    bool m_enteringRecovery{false}, m_decided{false}, m_react{true};

    bool Decide() {
        double p = PCongestion();
        bool react = p > m_uniform->GetValue();
        ++(react ? reactions : kept);
        p_congestion.Add(p);
        reacted.Add(react ? 1.0 : 0.0);
        return react;
    }
    static void Restore(Ptr<TcpSocketState> tcb, uint32_t cwnd) {
        tcb->m_cWnd = cwnd;
        tcb->m_cWndInfl = cwnd;
    }
};

// The reactions to an ECN echo of a TcpnSocket (EcnSlowStart, EcnNs2Reaction: time,
// ssthresh set); empty for ns-3's socket and ns-3's own reaction.
inline Series EcnReactions(Ptr<TcpSocketBase> socket) {
    Ptr<TcpnSocket> own = DynamicCast<TcpnSocket>(socket);
    return own ? own->reactions : Series();
}
// The retransmission timer's expiries of a TcpnSocket (time, RTO after it).
inline Series Timeouts(Ptr<TcpSocketBase> socket) {
    Ptr<TcpnSocket> own = DynamicCast<TcpnSocket>(socket);
    return own ? own->timeouts : Series();
}
inline bool IsTcpnSocket(Ptr<TcpSocketBase> socket) { return DynamicCast<TcpnSocket>(socket) != nullptr; }

// Connect what a variant needs from its socket's traces (TCP-L: Tx and Rx; the Vegas
// family: Tx).
inline bool AttachVariant(Ptr<TcpSocketBase> socket, Ptr<TcpCongestionOps> congestion) {
    if (Ptr<TcpL> l = DynamicCast<TcpL>(congestion)) {
        return socket->TraceConnectWithoutContext("Tx", MakeCallback(&TcpL::OnTx, PeekPointer(l))) &&
               socket->TraceConnectWithoutContext("Rx", MakeCallback(&TcpL::OnRx, PeekPointer(l)));
    }
    if (Ptr<SampledVegas> v = DynamicCast<SampledVegas>(congestion)) {
        return socket->TraceConnectWithoutContext(
            "Tx", MakeCallback(&SampledVegas::OnTx, PeekPointer(v)));
    }
    return true;
}

}  // namespace tcpn
