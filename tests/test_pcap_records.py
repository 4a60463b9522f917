"""pcap records that must not change the figures silently (issue 13).

Corrupt IP or TCP header lengths are refused naming the packet and its byte offset;
IPv6, UDP, ARP and fragments are skipped and counted; raw IP (link type 101) and
VLAN-tagged Ethernet are read. Captures are built here with dpkt and struct.
"""

from __future__ import annotations

import io
import struct

import dpkt
import pytest

from tcpn.validation.pcap import PcapError, goodput_bps, read_pcap

A, B = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
ISN = 1000
LINKTYPE_RAW = 101  # tcpdump.org's number for raw IP (dpkt's DLT_RAW is the BSD 12)


def _segment(seq: int, flags: int = dpkt.tcp.TH_ACK, payload: int = 0) -> bytes:
    tcp = dpkt.tcp.TCP(sport=5000, dport=80, seq=seq, ack=8, flags=flags, data=b"x" * payload)
    ip = dpkt.ip.IP(src=A, dst=B, p=dpkt.ip.IP_PROTO_TCP, data=tcp)
    ip.len = len(bytes(ip))
    return bytes(ip)


def _flow() -> list[bytes]:
    """A SYN and ten 1000-byte segments in order: what a receiver captures."""
    return [_segment(ISN, dpkt.tcp.TH_SYN)] + [_segment(ISN + 1 + 1000 * k, payload=1000)
                                               for k in range(10)]


def _capture(frames: list[bytes], linktype: int = dpkt.pcap.DLT_PPP) -> bytes:
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, snaplen=65535, linktype=linktype)
    for k, frame in enumerate(frames):
        writer.writepkt(frame, ts=0.1 * k)
    return out.getvalue()


def _ppp(ip: bytes) -> bytes:
    return b"\x00\x21" + ip


def _ethernet(ip: bytes, ethertype: int = 0x0800, vlans: tuple[int, ...] = ()) -> bytes:
    tags = b"".join(struct.pack("!HH", 0x8100, vid) for vid in vlans)
    return b"\x02" * 6 + b"\x04" * 6 + tags + struct.pack("!H", ethertype) + ip


def _goodput(table) -> float:
    (value,) = goodput_bps(table, 0.0, 10.0).values()
    return value


def test_a_clean_capture_has_its_goodput():
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in _flow()])))
    assert _goodput(table) == 10 * 1000 * 8 / 10
    assert table.attrs["skipped"] == {}


def _set_data_offset(ip: bytes, words: int) -> bytes:
    return ip[:32] + bytes([words << 4]) + ip[33:]


@pytest.mark.parametrize(("index", "what", "corrupt"), [
    (5, "IP header length 4 bytes", lambda ip: bytes([0x41]) + ip[1:]),
    (5, "IP header checksum", lambda ip: bytes([0x4F]) + ip[1:]),  # IHL 15: TCP misplaced
    (5, "TCP data offset 4 bytes", lambda ip: _set_data_offset(ip, 1)),
    (0, "TCP data offset 60 bytes", lambda ip: _set_data_offset(ip, 15)),  # past the SYN
    (5, "IP total length 9000", lambda ip: ip[:2] + struct.pack("!H", 9000) + ip[4:]),
    (5, "IP header checksum", lambda ip: ip[:12] + bytes([11]) + ip[13:]),  # source address
])
def test_a_corrupt_header_is_refused_naming_packet_and_offset(index, what, corrupt):
    frames = [_ppp(p) for p in _flow()]
    frames[index] = _ppp(corrupt(_flow()[index]))
    data = _capture(frames)
    offset = 24 + sum(16 + len(f) for f in frames[:index])
    with pytest.raises(PcapError, match=rf"packet {index} at byte offset {offset}: {what}"):
        read_pcap(io.BytesIO(data))


def test_a_zero_ip_checksum_means_not_computed():
    # ns-3 writes 0 unless checksums are enabled: such captures must read
    frames = [p[:10] + b"\0\0" + p[12:] for p in _flow()]
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])))
    assert _goodput(table) == 10 * 1000 * 8 / 10


def test_ipv6_udp_and_arp_records_are_skipped_and_counted():
    udp = dpkt.ip.IP(src=A, dst=B, p=dpkt.ip.IP_PROTO_UDP,
                     data=dpkt.udp.UDP(sport=53, dport=53, data=b"y" * 1000))
    udp.len = len(bytes(udp))
    ipv6 = bytes([0x60]) + bytes(39) + b"z" * 100
    frames = [_ethernet(p) for p in _flow()]
    frames[3:3] = [_ethernet(bytes(udp)), _ethernet(ipv6, 0x86DD), _ethernet(b"\0" * 28, 0x0806)]
    table = read_pcap(io.BytesIO(_capture(frames, dpkt.pcap.DLT_EN10MB)))
    assert table.attrs["skipped"] == {"not IPv4": 2, "not TCP": 1}
    assert _goodput(table) == 10 * 1000 * 8 / 10


def test_ipv6_in_a_raw_ip_capture_is_skipped_and_counted():
    frames = [*_flow(), bytes([0x60]) + bytes(39)]
    table = read_pcap(io.BytesIO(_capture(frames, LINKTYPE_RAW)))
    assert len(table) == 11 and table.attrs["skipped"] == {"not IPv4": 1}


def test_ip_fragments_are_skipped_and_counted():
    frames = _flow()
    fragment = bytearray(frames[4])
    fragment[6:8] = struct.pack("!H", 0x2000)  # more fragments: the TCP header is split
    frames[4] = bytes(fragment)
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])))
    assert table.attrs["skipped"] == {"IP fragment": 1}
    assert 3 not in set(table["packet"]) or 4 not in set(table["packet"])


@pytest.mark.parametrize("linktype", [LINKTYPE_RAW, dpkt.pcap.DLT_RAW, 228])
def test_raw_ip_link_types_are_read(linktype):
    table = read_pcap(io.BytesIO(_capture(_flow(), linktype)))
    assert len(table) == 11 and _goodput(table) == 10 * 1000 * 8 / 10


@pytest.mark.parametrize("vlans", [(10,), (10, 20)])
def test_vlan_tagged_ethernet_is_read(vlans):
    frames = [_ethernet(p, vlans=vlans) for p in _flow()]
    table = read_pcap(io.BytesIO(_capture(frames, dpkt.pcap.DLT_EN10MB)))
    assert len(table) == 11 and _goodput(table) == 10 * 1000 * 8 / 10


def test_a_record_too_short_for_its_link_header_is_counted():
    frames = [_ppp(p) for p in _flow()] + [b"\x00"]
    table = read_pcap(io.BytesIO(_capture(frames)))
    assert table.attrs["skipped"] == {"shorter than a link and IPv4 header": 1}
