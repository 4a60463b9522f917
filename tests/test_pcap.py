"""The pcap reader on hand-built captures: fields, sequence analysis, delivery, damage."""

from __future__ import annotations

import io
import struct
import sys
from pathlib import Path

import dpkt
import pytest

from tcpn.models.pcap import (
    Connection,
    PcapError,
    connections,
    data_segments,
    flow_events,
    goodput_bps,
    read_pcap,
)

A, B = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])


def _segment(src: bytes, dst: bytes, sport: int, dport: int, seq: int, ack: int,
             flags: int, payload: int = 0, tos: int = 0) -> bytes:
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq % (1 << 32), ack=ack % (1 << 32),
                       flags=flags, data=b"x" * payload)
    ip = dpkt.ip.IP(src=src, dst=dst, p=dpkt.ip.IP_PROTO_TCP, tos=tos, data=tcp)
    ip.len = len(bytes(ip))
    return bytes(ip)


def _ppp(ip: bytes) -> bytes:
    return b"\x00\x21" + ip  # ns-3's point-to-point frame: 2-byte protocol, then IPv4


def _capture(packets: list[tuple[float, bytes]], linktype: int = dpkt.pcap.DLT_PPP,
             snaplen: int = 65535) -> bytes:
    out = io.BytesIO()
    dpkt.pcap.Writer(out, snaplen=snaplen, linktype=linktype)  # the file header
    order = "<" if sys.byteorder == "little" else ">"  # as dpkt's Writer writes it
    for t, frame in packets:
        # a record keeps the frame's length on the wire beside what the snap length kept
        usec = round(t * 1e6)
        out.write(struct.pack(order + "IIII", usec // 10**6, usec % 10**6,
                              len(frame[:snaplen]), len(frame)) + frame[:snaplen])
    return out.getvalue()


ISN = 1000
DATA = dpkt.tcp.TH_ACK
# a sender's view: handshake, five 100-byte segments (the third is lost and resent after
# the ACKs of the fourth and fifth); the receiver sees 1, 2, 4, 5, then the resent 3
SENDER = [
    (0.00, _segment(A, B, 5000, 80, ISN, 0, dpkt.tcp.TH_SYN)),
    (0.10, _segment(B, A, 80, 5000, 7, ISN + 1, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK)),
    (0.10, _segment(A, B, 5000, 80, ISN + 1, 8, DATA)),
    *[(0.10 + 0.01 * k, _segment(A, B, 5000, 80, ISN + 1 + 100 * k, 8, DATA, 100))
      for k in range(5)],
    (0.21, _segment(B, A, 80, 5000, 8, ISN + 101, DATA)),
    (0.22, _segment(B, A, 80, 5000, 8, ISN + 201, DATA)),
    (0.23, _segment(B, A, 80, 5000, 8, ISN + 201, DATA)),
    (0.24, _segment(B, A, 80, 5000, 8, ISN + 201, DATA)),
    (0.25, _segment(A, B, 5000, 80, ISN + 201, 8, DATA, 100)),
    (0.36, _segment(B, A, 80, 5000, 8, ISN + 501, DATA)),
]
RECEIVER = [
    (0.00, _segment(A, B, 5000, 80, ISN, 0, dpkt.tcp.TH_SYN)),
    *[(0.15 + 0.01 * k, _segment(A, B, 5000, 80, ISN + 1 + 100 * k, 8, DATA, 100))
      for k in (0, 1, 3, 4)],
    (0.30, _segment(A, B, 5000, 80, ISN + 201, 8, DATA, 100, tos=3)),
]


def test_fields_of_each_segment():
    table = read_pcap(io.BytesIO(_capture([(t, _ppp(p)) for t, p in SENDER])))
    assert len(table) == len(SENDER)
    first = table.iloc[3]
    assert (first["src"], first["dst"], first["sport"], first["dport"]) == (
        "10.0.0.1", "10.0.0.2", 5000, 80)
    assert (first["seq"], first["payload_bytes"], first["ip_bytes"]) == (ISN + 1, 100, 140)
    assert table["offset"].iloc[0] == 24  # right after the file header
    assert table["offset"].iloc[1] == 24 + 16 + len(_ppp(SENDER[0][1]))


def test_sequence_analysis_finds_the_one_retransmission():
    table = read_pcap(io.BytesIO(_capture([(t, _ppp(p)) for t, p in SENDER])))
    (conn,) = connections(table)
    assert conn == Connection("10.0.0.1", 5000, "10.0.0.2", 80, ISN)
    segments = data_segments(table, conn)
    assert segments["seq"].tolist() == [0, 100, 200, 300, 400, 200]
    assert segments["retransmission"].tolist() == [False] * 5 + [True]


def test_flow_events_by_hand():
    sender = read_pcap(io.BytesIO(_capture([(t, _ppp(p)) for t, p in SENDER])))
    receiver = read_pcap(io.BytesIO(_capture([(t, _ppp(p)) for t, p in RECEIVER])))
    (conn,) = connections(sender)
    events = flow_events(conn, sender, receiver)
    by_kind = {k: g for k, g in events.groupby("event")}
    assert by_kind["send"]["bytes"].sum() == 500
    assert by_kind["retransmit"][["time_s", "seq"]].values.tolist() == [[0.25, 200]]
    # ACKs: 100 and 200 new bytes, two duplicates, then 300 bytes at once
    assert by_kind["ack"]["bytes"].tolist() == [100, 100, 0, 0, 300]
    # receiver: 1 and 2 delivered on arrival, 4 and 5 wait for the resent 3
    assert by_kind["deliver"][["time_s", "seq", "bytes"]].values.tolist() == [
        [0.15, 0, 100], [0.16, 100, 100], [0.30, 200, 300]]
    assert by_kind["recv"]["bytes"].sum() == 500
    rates = goodput_bps(receiver, 0.0, 1.0)
    assert rates == {conn: 500 * 8 / 1.0}


def test_truncated_snap_length_keeps_sizes_and_raw_ip_links():
    frames = [(t, p) for t, p in SENDER]
    table = read_pcap(io.BytesIO(_capture(frames, linktype=dpkt.pcap.DLT_RAW, snaplen=54)))
    assert table["payload_bytes"].tolist()[3:8] == [100] * 5


def test_sequence_numbers_wrap_around():
    isn = (1 << 32) - 150
    packets = [(0.0, _segment(A, B, 1, 2, isn, 0, dpkt.tcp.TH_SYN))] + [
        (0.1 * (k + 1), _segment(A, B, 1, 2, isn + 1 + 100 * k, 0, DATA, 100))
        for k in range(4)]
    table = read_pcap(io.BytesIO(_capture([(t, _ppp(p)) for t, p in packets])))
    segments = data_segments(table, connections(table)[0])
    assert segments["seq"].tolist() == [0, 100, 200, 300]
    assert not segments["retransmission"].any()


def test_damaged_files_name_packet_and_offset(tmp_path: Path):
    good = _capture([(t, _ppp(p)) for t, p in SENDER[:3]])
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(good[:-10])
    second = 24 + 16 + len(_ppp(SENDER[0][1]))
    third = second + 16 + len(_ppp(SENDER[1][1]))
    with pytest.raises(PcapError, match=rf"cut.pcap: packet 2 at byte offset {third}: "
                                        r"record truncated"):
        read_pcap(cut)
    with pytest.raises(PcapError, match="byte offset 0: not a pcap or pcapng file"):
        read_pcap(io.BytesIO(b"\x00" * 40))
    with pytest.raises(PcapError, match="cannot hold a pcap file header"):
        read_pcap(io.BytesIO(b"\xd4\xc3"))
    header_cut = tmp_path / "header.pcap"
    header_cut.write_bytes(good[:second + 7])
    with pytest.raises(PcapError, match=rf"packet 1 at byte offset {second}: record header"):
        read_pcap(header_cut)
    tiny = _capture([(t, _ppp(p)) for t, p in SENDER[:2]], snaplen=30)
    with pytest.raises(PcapError, match=r"packet 0 at byte offset 24: 30 bytes captured, .*"
                                        r"snap length too small"):
        read_pcap(io.BytesIO(tiny))
    with pytest.raises(PcapError, match="cannot read capture"):
        read_pcap(tmp_path / "missing.pcap")
