"""pcap records that must not change the figures silently (issues 13 and 27).

Corrupt IP or TCP header lengths are refused naming the packet and its byte offset;
IPv6, UDP, ARP and fragments are skipped and counted; raw IP (link type 101) and
VLAN-tagged Ethernet are read. Captures are built here with dpkt and struct.
"""

from __future__ import annotations

import io
import struct

import dpkt
import pytest

from tcpn.models.pcap import PcapError, goodput_bps, read_pcap

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


def test_a_record_capturing_more_than_the_wire_carried_is_refused_as_corrupt():
    """Its original length below its captured length once read as "the -4 bytes the
    frame carried"."""
    data = bytearray(_capture([_ppp(p) for p in _flow()]))
    offset = 24 + sum(16 + len(_ppp(p)) for p in _flow()[:3])
    struct.pack_into("<I", data, offset + 12, 10)  # the record's original length
    with pytest.raises(PcapError, match=rf"packet 3 at byte offset {offset}: 1042 bytes "
                                        r"captured of a frame of 10 bytes on the wire"):
        read_pcap(io.BytesIO(bytes(data)))


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


# -- issue 27: TCP checksums, IP options, timestamps ---------------------------------------


def _with_tcp_checksums(ip: bytes) -> bytes:
    """The packet with its TCP checksum computed by dpkt (over the IPv4 pseudo-header)."""
    packet = dpkt.ip.IP(ip)
    packet.data.sum = 0
    packet.sum = 0
    return bytes(packet)  # dpkt fills in both checksums when they are 0


def _checksummed_flow() -> list[bytes]:
    frames = [_with_tcp_checksums(p) for p in _flow()]
    assert all(dpkt.ip.IP(f).data.sum != 0 for f in frames)
    return frames


def test_correct_tcp_checksums_are_read():
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in _checksummed_flow()])))
    assert len(table) == 11 and table.attrs["skipped"] == {}
    assert _goodput(table) == 10 * 1000 * 8 / 10


@pytest.mark.parametrize("corrupt", [
    lambda ip: ip[:-1] + bytes([ip[-1] ^ 0x01]),             # one payload bit
    lambda ip: ip[:40] + bytes([ip[40] ^ 0x80]) + ip[41:],   # the first payload byte
    lambda ip: ip[:24] + bytes([ip[24] ^ 0x10]) + ip[25:],   # a sequence number bit
    lambda ip: ip[:22] + bytes([ip[22] ^ 0x40]) + ip[23:],   # the destination port
    lambda ip: ip[:12] + bytes([ip[12] ^ 0x02]) + ip[13:],   # the source address (pseudo-header)
])
def test_a_segment_whose_tcp_checksum_is_wrong_is_skipped_and_counted(corrupt):
    frames = _checksummed_flow()
    frames[5] = corrupt(frames[5])
    if frames[5][12] != _checksummed_flow()[5][12]:  # keep the IP header checksum right
        frames[5] = _with_ihl(frames[5], 5, checksum=True)
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])))
    assert table.attrs["skipped"] == {"TCP checksum does not match the segment": 1}
    assert 5 not in set(table["packet"]) and len(table) == 10
    # the segment is missing from the figures: the flow stops before it
    assert _goodput(table) == 4 * 1000 * 8 / 10
    kept = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])),
                     bad_tcp_checksums="keep")
    assert len(kept) == 11 and kept.attrs["skipped"] == {}


def _checksum_left_to_the_card(ip: bytes, off_by: int = 0) -> bytes:
    """The packet as a capture on its sender holds it when the network card computes the
    TCP checksum: the field holds the IPv4 pseudo-header's folded sum (Linux's
    ``CHECKSUM_PARTIAL``), ``off_by`` added to it."""
    packet = dpkt.ip.IP(ip)
    pseudo = sum(struct.unpack("!4H", packet.src + packet.dst)) + 6 + len(bytes(packet.data))
    while pseudo > 0xFFFF:
        pseudo = (pseudo & 0xFFFF) + (pseudo >> 16)
    packet.data.sum = pseudo + off_by
    packet.sum = 0
    return bytes(packet)


def test_a_checksum_left_to_the_senders_card_is_kept_and_counted():
    """A capture on a Linux sender (tcpdump's "cksum incorrect" on every segment sent):
    the segments are sound and read; one whose field is one off is still skipped."""
    frames = [_checksum_left_to_the_card(p) for p in _flow()]
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])))
    assert len(table) == 11 and table.attrs["skipped"] == {}
    assert table.attrs["checksum_offloaded"] == 11
    assert _goodput(table) == 10 * 1000 * 8 / 10
    frames[5] = _checksum_left_to_the_card(_flow()[5], off_by=1)
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])))
    assert table.attrs["skipped"] == {"TCP checksum does not match the segment": 1}
    assert table.attrs["checksum_offloaded"] == 10


def test_an_odd_length_segment_is_checksummed_with_its_padding():
    frames = [_with_tcp_checksums(_segment(ISN, dpkt.tcp.TH_SYN)),
              _with_tcp_checksums(_segment(ISN + 1, payload=999))]
    assert read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames]))).attrs["skipped"] == {}
    frames[1] = frames[1][:-1] + bytes([frames[1][-1] ^ 0x04])
    table = read_pcap(io.BytesIO(_capture([_ppp(p) for p in frames])))
    assert table.attrs["skipped"] == {"TCP checksum does not match the segment": 1}


def test_a_zero_tcp_checksum_means_not_computed_and_a_cut_segment_is_not_verified():
    # ns-3 writes 0 unless checksums are enabled; a short snap length keeps headers only
    plain = read_pcap(io.BytesIO(_capture([_ppp(p) for p in _flow()])))
    assert plain.attrs["skipped"] == {}
    out = io.BytesIO()
    dpkt.pcap.Writer(out, snaplen=96, linktype=dpkt.pcap.DLT_PPP)  # the file header
    frames = _checksummed_flow()
    frames[5] = frames[5][:-1] + b"\x00"
    for k, frame in enumerate(frames):
        framed = _ppp(frame)
        header = struct.pack("<IIII", k, 0, min(len(framed), 96), len(framed))
        out.write(header + framed[:96])
    table = read_pcap(io.BytesIO(out.getvalue()))
    assert table.attrs["skipped"] == {} and len(table) == 11


def _with_ihl(ip: bytes, words: int, checksum: bool) -> bytes:
    """The header length field set to ``words`` (the header itself unchanged), with the IP
    checksum recomputed or left 0 as ns-3 writes it."""
    packet = bytearray(ip)
    packet[0] = 0x40 | words
    packet[10:12] = b"\0\0"
    if checksum:
        total = sum(struct.unpack(f"!{words * 2}H", bytes(packet[:words * 4])))
        while total > 0xFFFF:
            total = (total & 0xFFFF) + (total >> 16)
        packet[10:12] = struct.pack("!H", ~total & 0xFFFF)
    return bytes(packet)


@pytest.mark.parametrize("checksum", [False, True])
@pytest.mark.parametrize("words", [6, 8, 15])
def test_a_header_length_beyond_the_real_header_is_refused(words, checksum):
    # a capture from ns-3 (zero TCP checksums): only the IP options can tell
    frames = [_ppp(p) for p in _flow()]
    frames[5] = _ppp(_with_ihl(_flow()[5], words, checksum))
    offset = 24 + sum(16 + len(f) for f in frames[:5])
    with pytest.raises(PcapError, match=rf"packet 5 at byte offset {offset}: IP header "
                       rf"length {words * 4} bytes: .*not valid IPv4 options"):
        read_pcap(io.BytesIO(_capture(frames)))


def test_real_ipv4_options_are_read():
    # router alert (type 148, 4 bytes) then end of list and padding: 28-byte header
    frames = [_ppp(p) for p in _flow()]
    ip = _flow()[5]
    options = bytes([148, 4, 0, 0]) + bytes([0, 0, 0, 0])
    longer = bytearray(ip[:20] + options + ip[20:])
    longer[2:4] = struct.pack("!H", len(longer))
    frames[5] = _ppp(_with_ihl(bytes(longer), 7, checksum=True))
    table = read_pcap(io.BytesIO(_capture(frames)))
    assert len(table) == 11 and _goodput(table) == 10 * 1000 * 8 / 10


@pytest.mark.parametrize(("magic", "fraction"), [
    (dpkt.pcap.TCPDUMP_MAGIC, 1_000_000), (dpkt.pcap.TCPDUMP_MAGIC, 0xFFFFFFFF),
    (dpkt.pcap.TCPDUMP_MAGIC_NANO, 1_000_000_000),
])
def test_a_sub_second_field_out_of_range_is_refused_naming_the_record(magic, fraction):
    out = io.BytesIO()
    out.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, dpkt.pcap.DLT_PPP))
    frames = [_ppp(p) for p in _flow()]
    offset = 24
    for k, frame in enumerate(frames):
        if k == 3:
            at = offset
        out.write(struct.pack("<IIII", k, fraction if k == 3 else 0, len(frame), len(frame))
                  + frame)
        offset += 16 + len(frame)
    with pytest.raises(PcapError, match=rf"packet 3 at byte offset {at}: .*sub-second"):
        read_pcap(io.BytesIO(out.getvalue()))


def test_the_largest_sub_second_fields_are_read():
    for magic, largest, scale in ((dpkt.pcap.TCPDUMP_MAGIC, 999_999, 1e6),
                                  (dpkt.pcap.TCPDUMP_MAGIC_NANO, 999_999_999, 1e9)):
        out = io.BytesIO()
        out.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, dpkt.pcap.DLT_PPP))
        for k, frame in enumerate(_ppp(p) for p in _flow()):
            out.write(struct.pack("<IIII", k, largest, len(frame), len(frame)) + frame)
        table = read_pcap(io.BytesIO(out.getvalue()))
        assert table["time_s"].iloc[0] == pytest.approx(largest / scale)


def test_the_command_line_skips_or_keeps_segments_with_wrong_checksums(tmp_path):
    import os
    import subprocess
    import sys

    frames = _checksummed_flow()
    frames[5] = frames[5][:-1] + bytes([frames[5][-1] ^ 0x01])  # one payload bit
    capture = tmp_path / "offloaded.pcap"
    capture.write_bytes(_capture([_ppp(p) for p in frames]))

    def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()",
                               "pcap", str(capture), *args], capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}, check=False)

    skipped, kept = tcpn(), tcpn("--bad-checksums", "keep")
    assert skipped.returncode == kept.returncode == 0, skipped.stderr + kept.stderr
    assert "10 TCP/IPv4 segments" in skipped.stdout
    assert "skipped 1 record(s): TCP checksum does not match the segment" in skipped.stdout
    assert "11 TCP/IPv4 segments" in kept.stdout and "skipped" not in kept.stdout
    wrong = tcpn("--bad-checksums", "ignore")
    assert wrong.returncode == 2 and "ignore" in wrong.stderr
