"""pcapng captures and Linux cooked links read as pcap ones are (issue 34's capture formats).

Files are built two ways: with dpkt's pcapng writer (an implementation that is not
tcpn's), and block by block after the pcapng specification where a case needs what that
writer does not write (a timestamp resolution, big-endian sections, several interfaces).
"""

from __future__ import annotations

import contextlib
import io
import struct

import dpkt
import pytest
from test_pcap import SENDER, _capture, _ppp  # the tests directory is on pytest's path

from tcpn.models.pcap import PcapError, read_pcap

SHB, IDB, EPB, SPB = 0x0A0D0D0A, 1, 6, 3


def _block(kind: int, body: bytes, order: str = "<") -> bytes:
    body += b"\x00" * (-len(body) % 4)
    length = len(body) + 12
    return struct.pack(order + "II", kind, length) + body + struct.pack(order + "I", length)


def _section(order: str = "<") -> bytes:
    return _block(SHB, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1), order)


def _interface(linktype: int, order: str = "<", resolution: int | None = None,
               offset_s: int | None = None) -> bytes:
    options = b""
    if resolution is not None:
        options += struct.pack(order + "HH", 9, 1) + bytes([resolution]) + b"\x00" * 3
    if offset_s is not None:
        options += struct.pack(order + "HHq", 14, 8, offset_s)
    if options:
        options += struct.pack(order + "HH", 0, 0)
    return _block(IDB, struct.pack(order + "HHI", linktype, 0, 65535) + options, order)


def _packet(interface: int, stamp: int, frame: bytes, order: str = "<") -> bytes:
    return _block(EPB, struct.pack(order + "IIIII", interface, stamp >> 32,
                                   stamp & 0xFFFFFFFF, len(frame), len(frame)) + frame, order)


def _same_rows(a: object, b: object) -> bool:
    columns = ["time_s", "src", "dst", "sport", "dport", "seq", "ack", "flags", "ip_bytes",
               "payload_bytes", "ecn"]
    return a[columns].reset_index(drop=True).equals(b[columns].reset_index(drop=True))  # type: ignore[index]


def test_a_pcapng_file_from_dpkt_reads_as_its_pcap_twin() -> None:
    out = io.BytesIO()
    writer = dpkt.pcapng.Writer(out, linktype=dpkt.pcap.DLT_PPP)
    for t, ip in SENDER:
        writer.writepkt(_ppp(ip), ts=t)
    got = read_pcap(io.BytesIO(out.getvalue()))
    twin = read_pcap(io.BytesIO(_capture([(t, _ppp(ip)) for t, ip in SENDER])))
    assert len(got) == len(SENDER) and _same_rows(got, twin)


@pytest.mark.parametrize("order", ["<", ">"])
def test_resolution_offset_byte_order_and_a_foreign_interface(order: str) -> None:
    t, ip = SENDER[3]
    data = (_section(order) + _interface(147, order)       # a user link type: skipped
            + _interface(101, order, resolution=9, offset_s=1000)   # raw IP, nanoseconds
            + _packet(0, 5, b"\x01\x02\x03", order)
            + _packet(1, round(t * 1e9), ip, order)
            + _section(order) + _interface(101, order, resolution=0x80 | 10)  # 2^-10 s
            + _packet(0, 3 * 1024, ip, order))
    got = read_pcap(io.BytesIO(data))
    assert list(got["time_s"]) == pytest.approx([1000 + t, 3.0])
    assert list(got["packet"]) == [1, 2] and list(got["seq"]) == [int(got["seq"][0])] * 2
    assert got.attrs["skipped"] == {
        "link type 147 (not PPP, Ethernet, raw IPv4 or Linux cooked: 9, 1, 12, 101, 228, "
        "113 or 276)": 1}


def test_linux_cooked_captures_sll_and_sll2() -> None:
    t, ip = SENDER[3]
    sll = struct.pack(">HHH8sH", 0, 1, 6, b"\x00" * 8, 0x0800) + ip
    sll2 = struct.pack(">HHIHBB8s", 0x0800, 0, 2, 1, 0, 6, b"\x00" * 8) + ip
    arp = struct.pack(">HHH8sH", 0, 1, 6, b"\x00" * 8, 0x0806) + b"\x00" * 28
    arp2 = struct.pack(">HHIHBB8s", 0x0806, 0, 2, 1, 0, 6, b"\x00" * 8) + b"\x00" * 28
    for linktype, frame, other in ((113, sll, arp), (276, sll2, arp2)):
        got = read_pcap(io.BytesIO(_capture([(t, frame), (t, other)], linktype=linktype)))
        twin = read_pcap(io.BytesIO(_capture([(t, _ppp(ip))])))
        assert _same_rows(got.iloc[:1], twin) and len(got) == 1
        assert got.attrs["skipped"] == {"not IPv4": 1}


@pytest.mark.parametrize(("damage", "message"), [
    (lambda d: d[:-6], "block truncated"),
    (lambda d: d[:-4] + struct.pack("<I", 999), "trailing length does not repeat"),
    (lambda d: d + _block(SPB, struct.pack("<I", 40) + b"\x00" * 40),
     "a simple packet block carries no timestamp"),
    (lambda d: d + _packet(5, 0, b"\x45" + b"\x00" * 39), "interface 5 was not described"),
    (lambda d: d + _block(EPB, b""), "cannot hold its 20-byte header"),
    (lambda d: d[:8] + b"\xde\xad\xbe\xef" + d[12:], "no valid byte-order magic"),
])
def test_damaged_pcapng_names_the_block_and_its_offset(damage: object, message: str) -> None:
    t, ip = SENDER[3]
    good = _section() + _interface(101) + _packet(0, round(t * 1e6), ip)
    with pytest.raises(PcapError, match="byte offset") as caught:
        read_pcap(io.BytesIO(damage(good)))  # type: ignore[operator]
    assert message in str(caught.value)


def test_damaged_bytes_anywhere_give_a_pcap_error_or_a_table_never_a_crash() -> None:
    """Every single-byte change and every cut of a small pcapng file is read or refused
    with a PcapError naming where: no other exception, whatever the byte."""
    t, ip = SENDER[3]
    good = (_section() + _interface(101, resolution=9) + _packet(0, round(t * 1e9), ip)
            + _interface(1) + _packet(1, 5, b"\x00" * 14 + ip))
    for at in range(len(good)):
        for value in (0x00, 0xFF, good[at] ^ 0x5A):
            damaged = good[:at] + bytes([value]) + good[at + 1:]
            try:
                read_pcap(io.BytesIO(damaged))
            except PcapError as exc:
                assert "byte offset" in str(exc)
    for cut in range(len(good)):
        with contextlib.suppress(PcapError):
            read_pcap(io.BytesIO(good[:cut]))
