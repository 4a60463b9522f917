"""Reads TCP/IPv4 pcap captures into tables and turns them into tcpn's flow events.

:func:`read_pcap` gives one row per TCP segment (time, addresses, ports, sequence and ACK
numbers, flags, IP and payload sizes, ECN codepoint, and where it sits in the file).
dpkt parses the file header (byte order, resolution, link type); records are framed here
so that a damaged file is reported by packet number and byte offset (dpkt's reader yields
a cut-off last record silently), and header fields are decoded for all packets at once
with numpy (ns-3 captures run to millions of packets).

On top of the table: :func:`connections` (each direction that opened with a SYN, with its
initial sequence number), :func:`data_segments` (relative sequence numbers, 32-bit
wrap-around removed, retransmissions flagged), and :func:`flow_events`, the common trace
schema's ``send``/``retransmit``/``ack`` rows (from a capture at the sender) and
``recv``/``deliver`` rows (from a capture at the receiver); :func:`goodput_bps` sums what
the receiver delivered in order.

>>> import dpkt, io
>>> buf = io.BytesIO()
>>> writer = dpkt.pcap.Writer(buf, linktype=dpkt.pcap.DLT_RAW)
>>> syn = dpkt.ip.IP(src=bytes([10, 0, 0, 1]), dst=bytes([10, 0, 0, 2]), p=6,
...                  data=dpkt.tcp.TCP(sport=5, dport=80, seq=100, flags=dpkt.tcp.TH_SYN))
>>> writer.writepkt(bytes(syn), ts=0.5)
>>> packets = read_pcap(io.BytesIO(buf.getvalue()))
>>> packets[["time_s", "src", "dport", "seq", "payload_bytes"]].values.tolist()
[[0.5, '10.0.0.1', 80, 100, 0]]
"""

from __future__ import annotations

import heapq
import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import dpkt
import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.limits import UnreadableInput, check_limit, limits, read_at_most, read_input

__all__ = ["Connection", "PcapError", "connections", "data_segments", "flow_events",
           "goodput_bps", "read_pcap", "rtt_samples"]

_FILE_HEADER = 24
_RECORD_HEADER = 16
_TCP_MIN = 20
_FIN, _SYN, _ACK = 0x01, 0x02, 0x10

# link type -> (bytes before the IP header, (offset, value) of the type field saying IPv4)
_LINKS: dict[int, tuple[int, tuple[int, int] | None]] = {
    dpkt.pcap.DLT_PPP: (2, (0, 0x0021)),           # ns-3 point-to-point: protocol only
    dpkt.pcap.DLT_EN10MB: (14, (12, 0x0800)),
    dpkt.pcap.DLT_RAW: (0, None),                   # BSD's DLT_RAW (12)
    101: (0, None),                                 # LINKTYPE_RAW, what libpcap writes
    228: (0, None),                                 # LINKTYPE_IPV4
    113: (16, (14, 0x0800)),                        # LINKTYPE_LINUX_SLL ("any" device)
    276: (20, (0, 0x0800)),                         # LINKTYPE_LINUX_SLL2
}
_LINK_NAMES = "PPP, Ethernet, raw IPv4 or Linux cooked: 9, 1, 12, 101, 228, 113 or 276"
_VLAN_TAGS = (0x8100, 0x88A8, 0x9100)  # 802.1Q, 802.1ad (QinQ) and its old tag: 4 bytes each
_IPV4_MIN = 20

COLUMNS = ("packet", "offset", "time_s", "src", "dst", "sport", "dport", "seq", "ack",
           "flags", "ip_bytes", "payload_bytes", "ecn")
"""Columns of :func:`read_pcap`'s table (``packet`` 0-based record number, ``offset``
byte offset of its record header, ``ecn`` the IP ECN codepoint: 0 not ECT, 3 CE)."""


class PcapError(InputError):
    """A capture file is not a readable pcap of IPv4 packets, or one of its TCP/IPv4
    records is corrupt; the message names the packet and its byte offset."""


def _fail(name: str, what: str) -> PcapError:
    return PcapError(f"{name}: {what}")


@dataclass(frozen=True)
class _Frames:
    """Where a capture's records are: the link type, byte offset of the record (or
    pcapng block), start of the captured bytes, captured and wire lengths and timestamp
    of each."""

    linktypes: np.ndarray
    offsets: np.ndarray
    starts: np.ndarray
    caplens: np.ndarray
    wirelens: np.ndarray
    times: np.ndarray


def _frame(data: bytes, name: str) -> _Frames:
    """Frame the records of a pcap or pcapng file (told apart by the first four bytes)."""
    if len(data) >= 4 and data[:4] == _PCAPNG_SHB:
        return _frame_pcapng(data, name)
    return _frame_pcap(data, name)


def _frame_pcap(data: bytes, name: str) -> _Frames:
    """Parse a pcap file header with dpkt and frame the records."""
    if len(data) < _FILE_HEADER:
        raise _fail(name, f"byte offset 0: {len(data)} bytes cannot hold a pcap file header "
                          f"({_FILE_HEADER} bytes)")
    header = dpkt.pcap.FileHdr(data[:_FILE_HEADER])
    magic = header.magic  # read big-endian: it tells the byte order, as in dpkt's Reader
    if magic not in dpkt.pcap.MAGIC_TO_PKT_HDR:
        raise _fail(name, f"byte offset 0: not a pcap or pcapng file (magic 0x{magic:08x})")
    if magic in (dpkt.pcap.PMUDPCT_MAGIC, dpkt.pcap.PMUDPCT_MAGIC_NANO):
        header = dpkt.pcap.LEFileHdr(data[:_FILE_HEADER])
    if header.linktype not in _LINKS:
        raise _fail(name, f"byte offset 20: link type {header.linktype} is not supported "
                          f"({_LINK_NAMES})")
    order = "<" if dpkt.pcap.MAGIC_TO_PKT_HDR[magic] is dpkt.pcap.LEPktHdr else ">"
    nano = magic in (dpkt.pcap.TCPDUMP_MAGIC_NANO, dpkt.pcap.PMUDPCT_MAGIC_NANO)
    unpack = struct.Struct(order + "IIII").unpack_from
    offsets: list[int] = []
    caplens: list[int] = []
    wirelens: list[int] = []
    seconds: list[int] = []
    fractions: list[int] = []
    offset, end = _FILE_HEADER, len(data)
    while offset < end:
        number = len(offsets)
        if end - offset < _RECORD_HEADER:
            raise _fail(name, f"packet {number} at byte offset {offset}: record header cut "
                              f"off ({end - offset} of {_RECORD_HEADER} bytes)")
        sec, frac, caplen, wirelen = unpack(data, offset)
        if caplen > end - offset - _RECORD_HEADER:
            raise _fail(name, f"packet {number} at byte offset {offset}: record truncated "
                              f"({end - offset - _RECORD_HEADER} of {caplen} bytes present)")
        offsets.append(offset)
        caplens.append(caplen)
        wirelens.append(wirelen)
        seconds.append(sec)
        fractions.append(frac)
        offset += _RECORD_HEADER + caplen
    per_second = 10**9 if nano else 10**6
    fraction = np.asarray(fractions, dtype=np.int64)
    beyond = np.flatnonzero(fraction >= per_second)
    if beyond.size:
        k = int(beyond[0])
        unit = "nanoseconds" if nano else "microseconds"
        raise _fail(name, f"packet {k} at byte offset {offsets[k]}: timestamp sub-second "
                          f"field {fraction[k]} is not below {per_second:,} {unit} (a corrupt "
                          "record header)" + (f" ({beyond.size - 1} more record(s) like it)"
                                              if beyond.size > 1 else ""))
    times = np.asarray(seconds, dtype=np.float64) + fraction / float(per_second)
    at = np.asarray(offsets, dtype=np.int64)
    return _Frames(np.full(len(at), header.linktype, dtype=np.int64), at,
                   at + _RECORD_HEADER, np.asarray(caplens, dtype=np.int64),
                   np.asarray(wirelens, dtype=np.int64), times)


_PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"
_PCAPNG_BYTE_ORDER = 0x1A2B3C4D
_IDB, _OPB, _SPB, _EPB = 1, 2, 3, 6  # interface description, obsolete, simple, enhanced


@dataclass
class _Interface:
    """A pcapng interface: its link type, snap length and timestamp resolution/offset."""

    linktype: int
    snaplen: int
    units_per_second: float = 1e6
    offset_s: int = 0


def _frame_pcapng(data: bytes, name: str) -> _Frames:
    """Frame the packets of a pcapng file (the IETF draft "PCAP Next Generation Dump File
    Format", blocks 1, 2, 3 and 6; each section has its byte order and interfaces).

    Enhanced and obsolete packet blocks carry a timestamp in their interface's resolution
    (``if_tsresol``, default microseconds) plus its ``if_tsoffset``; a simple packet block
    carries none and is refused (it would put a packet at no time). Other blocks (name
    resolution, statistics, decryption secrets, custom) are skipped.
    """
    rows: list[tuple[int, int, int, int, int, float]] = []
    interfaces: list[_Interface] = []
    order = "<"
    offset, end = 0, len(data)
    while offset < end:
        if end - offset < 12:
            raise _fail(name, f"block at byte offset {offset}: cut off ({end - offset} bytes, "
                              "a pcapng block has at least 12)")
        if data[offset:offset + 4] == _PCAPNG_SHB:
            if end - offset < 28:
                raise _fail(name, f"block at byte offset {offset}: section header cut off")
            magic_le = struct.unpack_from("<I", data, offset + 8)[0]
            if magic_le == _PCAPNG_BYTE_ORDER:
                order = "<"
            elif struct.unpack_from(">I", data, offset + 8)[0] == _PCAPNG_BYTE_ORDER:
                order = ">"
            else:
                raise _fail(name, f"block at byte offset {offset}: section header with no "
                                  f"valid byte-order magic (0x{magic_le:08x})")
            interfaces = []
        kind, length = struct.unpack_from(order + "II", data, offset)
        if length < 12 or length % 4:
            raise _fail(name, f"block at byte offset {offset}: block length {length} is not "
                              "a multiple of 4 of at least 12 bytes")
        if length > end - offset:
            raise _fail(name, f"block at byte offset {offset}: block truncated "
                              f"({end - offset} of {length} bytes present)")
        if struct.unpack_from(order + "I", data, offset + length - 4)[0] != length:
            raise _fail(name, f"block at byte offset {offset}: its trailing length does not "
                              f"repeat its length {length} (a corrupt block)")
        body = offset + 8
        if kind == _IDB:
            interfaces.append(_interface(data, order, body, offset + length - 4, offset, name))
        elif kind in (_EPB, _OPB):
            if length < 12 + 20:
                raise _fail(name, f"packet {len(rows)} at byte offset {offset}: a packet "
                                  f"block of {length} bytes cannot hold its 20-byte header")
            if kind == _EPB:
                interface, high, low, caplen, wirelen = struct.unpack_from(
                    order + "IIIII", data, body)
                start = body + 20
            else:
                interface, _drops, high, low, caplen, wirelen = struct.unpack_from(
                    order + "HHIIII", data, body)
                start = body + 20
            if interface >= len(interfaces):
                raise _fail(name, f"packet {len(rows)} at byte offset {offset}: interface "
                                  f"{interface} was not described before it "
                                  f"({len(interfaces)} interface(s) in this section)")
            if caplen > offset + length - 4 - start:
                raise _fail(name, f"packet {len(rows)} at byte offset {offset}: captured "
                                  f"length {caplen} runs past its block ({length} bytes)")
            link = interfaces[interface]
            stamp = (high << 32) | low
            rows.append((link.linktype, offset, start, caplen, wirelen,
                         link.offset_s + stamp / link.units_per_second))
        elif kind == _SPB:
            raise _fail(name, f"packet {len(rows)} at byte offset {offset}: a simple packet "
                              "block carries no timestamp; capture with timestamps (an "
                              "enhanced packet block)")
        offset += length
    table = np.asarray([r[:5] for r in rows], dtype=np.int64).reshape(-1, 5)
    return _Frames(table[:, 0], table[:, 1], table[:, 2], table[:, 3], table[:, 4],
                   np.asarray([r[5] for r in rows], dtype=np.float64))


def _interface(data: bytes, order: str, body: int, end: int, block: int,
               name: str) -> _Interface:
    """An interface description block: link type, snap length, and the ``if_tsresol``
    (code 9) and ``if_tsoffset`` (code 14) options."""
    if end - body < 8:
        raise _fail(name, f"block at byte offset {block}: interface description cut off")
    linktype, _reserved, snaplen = struct.unpack_from(order + "HHI", data, body)
    found = _Interface(linktype, snaplen)
    at = body + 8
    while at + 4 <= end:
        code, size = struct.unpack_from(order + "HH", data, at)
        if code == 0:
            break
        value = at + 4
        if value + size > end:
            raise _fail(name, f"block at byte offset {block}: option {code} runs past the "
                              "interface description")
        if code == 9 and size >= 1:
            resolution = data[value]
            exponent = resolution & 0x7F
            if exponent > (63 if resolution & 0x80 else 19):
                raise _fail(name, f"block at byte offset {block}: timestamp resolution "
                                  f"0x{resolution:02x} is beyond any clock")
            found.units_per_second = float(2**exponent if resolution & 0x80 else 10**exponent)
        elif code == 14 and size >= 8:
            found.offset_s = struct.unpack_from(order + "q", data, value)[0]
        at = value + size + (-size % 4)
    return found


def _field(raw: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    value = np.zeros(len(at), dtype=np.uint64)
    for k in range(width):
        value = (value << np.uint64(8)) | raw[at + k].astype(np.uint64)
    return value


def read_pcap(source: str | Path | BinaryIO, bad_tcp_checksums: str = "skip") -> pd.DataFrame:
    """One row per TCP/IPv4 segment of a pcap or pcapng file (see :data:`COLUMNS`).

    Links: PPP (ns-3's point-to-point), Ethernet (with up to two VLAN tags), raw IP (link
    types 12, 101 and 228) and Linux cooked captures (113 and 276, what ``tcpdump -i any``
    writes). A pcapng file may hold several sections and interfaces: each packet's link type
    and timestamp resolution are its interface's, and packets of an interface of another
    link type are skipped and counted. Other records (IPv6, ARP, UDP, ICMP, IP fragments,
    records too short for a header) are skipped and counted in ``table.attrs["skipped"]``
    (reason -> records). A TCP/IPv4 record whose header lengths, IPv4 options or IPv4 header
    checksum (when one was computed: ns-3 writes 0 unless told otherwise) are wrong, or
    whose timestamp has a sub-second field of a second or more, is refused with a
    :class:`PcapError` naming the packet number and byte offset: it would change the
    figures. The TCP checksum (over the IPv4 pseudo-header) of every segment captured whole
    is verified when one was computed (non-zero); a segment whose checksum is wrong is
    skipped and counted (``bad_tcp_checksums="keep"`` keeps it). A segment whose checksum
    field holds the pseudo-header's sum alone was captured before its sender's network card
    computed the checksum (Linux's offload, on every segment a sender's own capture holds):
    it is sound, kept and counted in ``table.attrs["checksum_offloaded"]``. The file is
    read within ``tcpn.limits.limits().capture_bytes``.

    Works on truncated captures (a snap length of 96 keeps every header): sizes come from
    the IP header, not from the captured bytes.
    """
    if bad_tcp_checksums not in ("skip", "keep"):
        raise InputError(f"bad_tcp_checksums must be 'skip' or 'keep', not "
                         f"{bad_tcp_checksums!r}")
    if isinstance(source, str | Path):
        name = str(source)
        try:
            data = read_input(source, "capture_bytes", "capture")
        except UnreadableInput as exc:
            raise PcapError(str(exc)) from None
    else:
        name = getattr(source, "name", "<pcap>")
        data = read_at_most(source, limits().capture_bytes + 1)
        check_limit("capture_bytes", len(data), f"capture {name}")
    frames = _frame(data, name)
    offsets, caplens, times = frames.offsets, frames.caplens, frames.times
    raw = np.frombuffer(data, dtype=np.uint8)
    records = _Records(raw, frames)
    rows = np.flatnonzero(records.tcp)
    _check_headers(raw, records, rows, frames, name)
    skipped = dict(records.skipped)
    offloaded = 0
    if bad_tcp_checksums == "skip":
        bad = ~_tcp_checksum_ok(data, raw, records.ip[rows], records.ihl[rows],
                                caplens[rows] - (records.ip[rows] - frames.starts[rows]))
        suspects = rows[bad]  # only a wrong checksum can be one left to the card
        left = np.flatnonzero(bad)[_left_to_the_card(raw, records.ip[suspects],
                                                     records.ihl[suspects])]
        offloaded = len(left)
        bad[left] = False
        if bad.any():
            skipped[_BAD_TCP_CHECKSUM] = int(bad.sum())
            rows = rows[~bad]
    ip, ihl = records.ip[rows], records.ihl[rows]
    tcp = ip + ihl
    total = _field(raw, ip + 2, 2).astype(np.int64)
    data_offset = (raw[tcp + 12] >> 4).astype(np.int64) * 4

    def dotted(at: np.ndarray) -> np.ndarray:
        # a capture holds a few addresses and many segments: each address written once
        addresses, which = np.unique(_field(raw, at, 4), return_inverse=True)
        names = [".".join(str((int(a) >> shift) & 255) for shift in (24, 16, 8, 0))
                 for a in addresses]
        return np.array(names, dtype=object)[which.reshape(-1)]

    table = pd.DataFrame({
        "packet": rows, "offset": offsets[rows], "time_s": times[rows],
        "src": dotted(ip + 12), "dst": dotted(ip + 16),
        "sport": _field(raw, tcp, 2).astype(np.int64),
        "dport": _field(raw, tcp + 2, 2).astype(np.int64),
        "seq": _field(raw, tcp + 4, 4).astype(np.int64),
        "ack": _field(raw, tcp + 8, 4).astype(np.int64),
        "flags": raw[tcp + 13].astype(np.int64),
        "ip_bytes": total, "payload_bytes": total - ihl - data_offset,
        "ecn": (raw[ip + 1] & 0x03).astype(np.int64),
    }, columns=list(COLUMNS))
    table.attrs["skipped"] = skipped
    table.attrs["checksum_offloaded"] = offloaded
    return table


class _Records:
    """Where each record's IPv4 header starts and which records are TCP/IPv4; the others
    are counted by reason in ``skipped`` (a pcapng interface of a link type tcpn does not
    read included)."""

    def __init__(self, raw: np.ndarray, frames: _Frames):
        start, caplens, types = frames.starts, frames.caplens, frames.linktypes
        known = np.isin(types, list(_LINKS))
        link = np.zeros(len(start), dtype=np.int64)
        tag_at = np.full(len(start), -1, dtype=np.int64)
        tag_value = np.zeros(len(start), dtype=np.int64)
        for linktype, (link_bytes, tag) in _LINKS.items():
            these = types == linktype
            link[these] = link_bytes
            if tag is not None:
                tag_at[these], tag_value[these] = tag
        alive = known & (caplens >= link + _IPV4_MIN)
        short = known & ~alive
        tagged_link = alive & (tag_at >= 0)
        kind = np.where(tagged_link, _field(raw, np.where(tagged_link, start + tag_at, 0), 2),
                        0)
        ethernet = types == dpkt.pcap.DLT_EN10MB
        for _ in range(2):  # 802.1Q, or 802.1ad then 802.1Q
            tagged = alive & ethernet & np.isin(kind, _VLAN_TAGS)
            link = np.where(tagged, link + 4, link)
            fits = caplens >= link + _IPV4_MIN
            short |= tagged & ~fits
            alive &= fits
            kind = np.where(tagged & alive, _field(
                raw, np.where(tagged & alive, start + link - 2, 0), 2), kind)
        ipv4 = alive & ((tag_at < 0) | (kind == tag_value))
        self.ip = start + link
        safe = np.where(ipv4, self.ip, 0)
        ipv4 &= (raw[safe] >> 4) == 4
        fragment = ipv4 & ((_field(raw, safe + 6, 2) & 0x3FFF) != 0)  # MF or an offset
        self.tcp = ipv4 & ~fragment & (raw[safe + 9] == 6)
        self.ihl = (raw[safe] & 0x0F).astype(np.int64) * 4
        self.link = link
        counts = {"shorter than a link and IPv4 header": int(short.sum()),
                  "not IPv4": int((alive & ~ipv4).sum()), "IP fragment": int(fragment.sum()),
                  "not TCP": int((ipv4 & ~fragment & ~self.tcp).sum())}
        for linktype in np.unique(types[~known]):
            counts[f"link type {int(linktype)} (not {_LINK_NAMES})"] = int(
                (types == linktype).sum())
        self.skipped = {reason: n for reason, n in counts.items() if n}


def _check_headers(raw: np.ndarray, records: _Records, rows: np.ndarray, frames: _Frames,
                   name: str) -> None:
    """Refuse the first TCP/IPv4 record whose header lengths or IPv4 checksum are wrong."""
    offsets, caplens, wirelens = frames.offsets, frames.caplens, frames.wirelens
    ip, ihl = records.ip[rows], records.ihl[rows]
    link = records.link[rows]
    total = _field(raw, ip + 2, 2).astype(np.int64)
    problems: list[tuple[np.ndarray, Any]] = [
        # a record cannot capture more than was on the wire: its lengths are corrupt
        (caplens[rows] > wirelens[rows], lambda k: f"{caplens[rows][k]} bytes captured of a "
                                                   f"frame of {wirelens[rows][k]} bytes on "
                                                   "the wire (a corrupt record)"),
        (ihl < _IPV4_MIN, lambda k: f"IP header length {ihl[k]} bytes is below the "
                                    f"{_IPV4_MIN}-byte minimum"),
        (total > wirelens[rows] - link, lambda k: f"IP total length {total[k]} is more than "
                                                  f"the {wirelens[rows][k] - link[k]} bytes "
                                                  "the frame carried"),
        (total < ihl + _TCP_MIN, lambda k: f"IP total length {total[k]} cannot hold the "
                                           f"{ihl[k]}-byte IP header and a TCP header"),
    ]
    for bad, say in problems:
        _refuse_first(bad, say, rows, offsets, name)
    need = link + ihl + _TCP_MIN
    short = caplens[rows] < need
    if short.any():
        k = int(np.flatnonzero(short)[0])
        raise _fail(name, f"packet {rows[k]} at byte offset {int(offsets[rows[k]])}: "
                          f"{int(caplens[rows[k]])} bytes captured, the IP and TCP headers "
                          f"need {int(need[k])} (snap length too small)")
    _refuse_first(~_checksum_ok(raw, ip, ihl), lambda k: "IP header checksum does not match "
                  "the header (a corrupt header)", rows, offsets, name)
    _refuse_first(~_options_ok(raw, ip, ihl), lambda k: f"IP header length {ihl[k]} bytes: "
                  f"bytes {_IPV4_MIN}-{ihl[k] - 1} are not valid IPv4 options (a header length "
                  "larger than the real header?)", rows, offsets, name)
    data_offset = (raw[ip + ihl + 12] >> 4).astype(np.int64) * 4
    _refuse_first(data_offset < _TCP_MIN, lambda k: f"TCP data offset {data_offset[k]} bytes "
                  f"is below the {_TCP_MIN}-byte minimum", rows, offsets, name)
    _refuse_first(ihl + data_offset > total, lambda k: f"TCP data offset {data_offset[k]} "
                  f"bytes runs past the IP total length {total[k]}", rows, offsets, name)


def _refuse_first(bad: np.ndarray, say: Any, rows: np.ndarray, offsets: np.ndarray,
                  name: str) -> None:
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        more = int(bad.sum()) - 1
        raise _fail(name, f"packet {rows[k]} at byte offset {int(offsets[rows[k]])}: {say(k)}"
                    + (f" ({more} more record(s) like it)" if more else ""))


def _checksum_ok(raw: np.ndarray, ip: np.ndarray, ihl: np.ndarray) -> np.ndarray:
    """IPv4 header checksums that add up, or were not computed (0, as ns-3 writes them)."""
    total = np.zeros(len(ip), dtype=np.int64)
    for word in range(30):  # up to 60 header bytes
        inside = 2 * word < ihl
        total += np.where(inside, _field(raw, np.where(inside, ip + 2 * word, 0), 2), 0
                          ).astype(np.int64)
    stored = _field(raw, ip + 10, 2)
    return (stored == 0) | (total % 0xFFFF == 0)


def _options_ok(raw: np.ndarray, ip: np.ndarray, ihl: np.ndarray) -> np.ndarray:
    """Whether the bytes between the fixed IPv4 header and ``ihl`` are a list of options
    (RFC 791: end-of-list then zero padding, no-operation, or type, length >= 2, value),
    which they are not when the header length field claims more than the real header."""
    ok = np.ones(len(ip), dtype=bool)
    for k in np.flatnonzero(ihl > _IPV4_MIN):  # rare: ns-3 and most stacks send none
        options = raw[ip[k] + _IPV4_MIN:ip[k] + ihl[k]].tobytes()
        at = 0
        while at < len(options):
            kind = options[at]
            if kind == 0:  # end of list: the rest is padding
                ok[k] = not any(options[at + 1:])
                break
            if kind == 1:
                at += 1
                continue
            if at + 1 >= len(options) or not 2 <= options[at + 1] <= len(options) - at:
                ok[k] = False
                break
            at += options[at + 1]
    return ok


_BAD_TCP_CHECKSUM = "TCP checksum does not match the segment"
#: Words summed per step when verifying TCP checksums (bounds the temporary arrays: 32 MB).
_CHECKSUM_CHUNK_WORDS = 1 << 22


def _tcp_checksum_ok(data: bytes, raw: np.ndarray, ip: np.ndarray, ihl: np.ndarray,
                     captured: np.ndarray) -> np.ndarray:
    """TCP checksums (RFC 793: the one's complement sum over the IPv4 pseudo-header and the
    segment) that add up, were not computed (0, as ns-3 writes them) or cannot be verified
    (the segment was not captured whole)."""
    total = _field(raw, ip + 2, 2).astype(np.int64)
    length = total - ihl
    start = ip + ihl
    checked = (_field(raw, start + 16, 2) != 0) & (captured >= total)
    sums = np.zeros(len(ip), dtype=np.int64)
    at = np.flatnonzero(checked)
    sums[at] = _word_sums(data, raw, start[at], length[at])
    sums += _pseudo_header_sum(raw, ip, length)
    return ~checked | (sums % 0xFFFF == 0)


def _pseudo_header_sum(raw: np.ndarray, ip: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The IPv4 pseudo-header's words summed, not folded: both addresses, protocol 6 (TCP)
    and the segment ``length``."""
    addresses = sum(_field(raw, ip + offset, 2).astype(np.int64) for offset in (12, 14, 16, 18))
    return addresses + 6 + length


def _left_to_the_card(raw: np.ndarray, ip: np.ndarray, ihl: np.ndarray) -> np.ndarray:
    """Segments whose TCP checksum field holds the IPv4 pseudo-header's folded sum alone:
    captured on the host that sent them before its network card (or the kernel, past a
    veth) computed the checksum. Linux writes that value when it offloads the checksum
    (``CHECKSUM_PARTIAL``: ``__tcp_v4_send_check`` sets ``th->check`` to the complement of
    ``tcp_v4_check(len, saddr, daddr, 0)``), which is why ``tcpdump`` on a sender reports
    every segment it sent as "cksum incorrect". A segment corrupted on the wire matches it
    with probability 2^-16."""
    folded = _pseudo_header_sum(raw, ip, _field(raw, ip + 2, 2).astype(np.int64) - ihl)
    for _ in range(2):  # at most 4 x 0xFFFF + 2 x 0xFFFF: two folds reach 16 bits
        folded = (folded & 0xFFFF) + (folded >> 16)
    return _field(raw, ip + ihl + 16, 2).astype(np.int64) == folded


def _word_sums(data: bytes, raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
               ) -> np.ndarray:
    """Per byte range (disjoint, in file order): the sum of its big-endian 16-bit words, a
    last odd byte padded with zero (the Internet checksum's sum, not yet folded)."""
    out = np.zeros(len(starts), dtype=np.int64)
    for parity in (0, 1):
        chosen = np.flatnonzero(starts % 2 == parity)
        if not chosen.size:
            continue
        words = np.frombuffer(data, dtype=">u2", count=(len(data) - parity) // 2,
                              offset=parity)
        first = (starts[chosen] - parity) // 2
        end = first + lengths[chosen] // 2
        i = 0
        while i < len(chosen):
            j = i + max(1, int(np.searchsorted(end[i:], first[i] + _CHECKSUM_CHUNK_WORDS,
                                               side="right")))
            low = int(first[i])
            chunk = np.append(words[low:int(end[j - 1])].astype(np.int64), 0)
            bounds = np.column_stack((first[i:j] - low, end[i:j] - low)).ravel()
            out[chosen[i:j]] = np.add.reduceat(chunk, bounds)[::2]
            i = j
    odd = np.flatnonzero(lengths % 2 == 1)
    out[odd] += raw[starts[odd] + lengths[odd] - 1].astype(np.int64) << 8
    return out


@dataclass(frozen=True)
class Connection:
    """One direction of a TCP connection: data flows ``src:sport -> dst:dport``; ``isn``
    is the sequence number of its SYN (data starts at ``isn + 1``)."""

    src: str
    sport: int
    dst: str
    dport: int
    isn: int

    def forward(self, packets: pd.DataFrame) -> pd.DataFrame:
        """Rows of ``packets`` going src -> dst."""
        return packets[(packets["src"] == self.src) & (packets["sport"] == self.sport)
                       & (packets["dst"] == self.dst) & (packets["dport"] == self.dport)]

    def backward(self, packets: pd.DataFrame) -> pd.DataFrame:
        """Rows of ``packets`` going dst -> src (the ACKs)."""
        return packets[(packets["src"] == self.dst) & (packets["sport"] == self.dport)
                       & (packets["dst"] == self.src) & (packets["dport"] == self.sport)]


def connections(packets: pd.DataFrame) -> list[Connection]:
    """Every direction opened by a SYN without ACK (an active open), in order of the SYN.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"src": ["a"], "sport": [1], "dst": ["b"], "dport": [2],
    ...                       "seq": [7], "flags": [0x02]})
    >>> connections(table)
    [Connection(src='a', sport=1, dst='b', dport=2, isn=7)]
    """
    syns = packets[(packets["flags"] & (_SYN | _ACK)) == _SYN]
    syns = syns.drop_duplicates(["src", "sport", "dst", "dport"], keep="first")
    return [Connection(str(r.src), int(r.sport), str(r.dst), int(r.dport), int(r.seq))
            for r in syns.itertuples()]


def _relative(values: np.ndarray, base: int) -> np.ndarray:
    """Sequence numbers relative to ``base`` with 32-bit wrap-around removed (successive
    values are assumed less than 2 GiB apart)."""
    rel = (values.astype(np.int64) - base) % (1 << 32)
    if len(rel) < 2:
        return rel
    steps = np.diff(rel)
    steps = np.where(steps < -(1 << 31), steps + (1 << 32),
                     np.where(steps > (1 << 31), steps - (1 << 32), steps))
    return np.concatenate(([rel[0]], rel[0] + np.cumsum(steps)))


def data_segments(packets: pd.DataFrame, connection: Connection) -> pd.DataFrame:
    """Data-carrying segments of ``connection`` in capture order: ``time_s``, ``seq``
    (byte offset, 0 = first data byte), ``bytes``, ``ecn`` and ``retransmission`` (it
    starts below the highest byte already seen: it resends data).

    >>> import pandas as pd
    >>> c = Connection("a", 1, "b", 2, isn=99)
    >>> t = pd.DataFrame({"src": "a", "sport": 1, "dst": "b", "dport": 2, "flags": 0x10,
    ...                   "ecn": 0, "time_s": [0.1, 0.2, 0.3], "seq": [100, 110, 100],
    ...                   "payload_bytes": [10, 10, 10]})
    >>> data_segments(t, c)[["seq", "retransmission"]].values.tolist()
    [[0, False], [10, False], [0, True]]
    """
    rows = connection.forward(packets)
    rows = rows[rows["payload_bytes"] > 0]
    seq = _relative(rows["seq"].to_numpy(), connection.isn + 1)
    size = rows["payload_bytes"].to_numpy(dtype=np.int64)
    ends = seq + size
    highest = np.concatenate(([0], np.maximum.accumulate(ends)[:-1])) if len(ends) else ends
    return pd.DataFrame({"time_s": rows["time_s"].to_numpy(), "seq": seq, "bytes": size,
                         "ecn": rows["ecn"].to_numpy(), "retransmission": seq < highest})


def _deliveries(segments: pd.DataFrame) -> pd.DataFrame:
    """In-order delivery: each arrival that extends the contiguous prefix releases it."""
    times, starts, sizes = [], [], []
    expected = 0
    pending: list[tuple[int, int]] = []
    for t, seq, size in zip(segments["time_s"].to_numpy(), segments["seq"].to_numpy(),
                            segments["bytes"].to_numpy(), strict=True):
        heapq.heappush(pending, (int(seq), int(seq + size)))
        before = expected
        while pending and pending[0][0] <= expected:
            expected = max(expected, heapq.heappop(pending)[1])
        if expected > before:
            times.append(t)
            starts.append(before)
            sizes.append(expected - before)
    return pd.DataFrame({"time_s": np.asarray(times, dtype=float),
                         "seq": np.asarray(starts, dtype=np.int64),
                         "bytes": np.asarray(sizes, dtype=float)})


def flow_events(connection: Connection, sender: pd.DataFrame | None = None,
                receiver: pd.DataFrame | None = None) -> pd.DataFrame:
    """The connection's rows of the common ``flow_events`` schema (without ``flow``):
    ``send``/``retransmit`` and ``ack`` from a capture at the sender's device,
    ``recv``/``deliver`` from a capture at the receiver's device. Columns ``time_s``,
    ``event``, ``seq`` (byte offset; for ``ack`` the next byte expected), ``bytes``
    (payload; for ``ack`` newly acknowledged bytes, 0 for a duplicate), sorted by time."""
    parts = []
    if sender is not None:
        sent = data_segments(sender, connection)
        parts.append(pd.DataFrame({
            "time_s": sent["time_s"], "seq": sent["seq"], "bytes": sent["bytes"].astype(float),
            "event": np.where(sent["retransmission"], "retransmit", "send")}))
        acks = connection.backward(sender)
        acks = acks[(acks["flags"] & (_ACK | _SYN)) == _ACK]
        numbers = _relative(acks["ack"].to_numpy(), connection.isn + 1)
        # the FIN takes one sequence number: acknowledging it is not data
        numbers = np.minimum(numbers, int((sent["seq"] + sent["bytes"]).max())
                             if len(sent) else 0)
        highest = np.maximum.accumulate(np.concatenate(([0], numbers)))
        parts.append(pd.DataFrame({"time_s": acks["time_s"].to_numpy(), "seq": numbers,
                                   "bytes": np.diff(highest).astype(float), "event": "ack"}))
    if receiver is not None:
        arrived = data_segments(receiver, connection)
        parts.append(pd.DataFrame({"time_s": arrived["time_s"], "seq": arrived["seq"],
                                   "bytes": arrived["bytes"].astype(float), "event": "recv"}))
        parts.append(_deliveries(arrived).assign(event="deliver"))
    if not parts:
        raise InputError("flow_events needs a capture at the sender, the receiver or both")
    events = pd.concat(parts, ignore_index=True)
    order = {"send": 0, "retransmit": 0, "recv": 1, "deliver": 2, "ack": 3}
    events["rank"] = events["event"].map(order)
    events = events.sort_values(["time_s", "rank"], kind="stable").drop(columns="rank")
    return events[["time_s", "event", "seq", "bytes"]].reset_index(drop=True)


def rtt_samples(sender: pd.DataFrame, connection: Connection) -> pd.DataFrame:
    """Round-trip samples from a capture at the sender: each ACK that advances the
    cumulative acknowledgement to ``a`` times the segment ending at ``a`` (the newest it
    covers, as a sender's estimator times it), when that segment was sent once (Karn's
    rule: once a segment is resent, an ACK cannot tell which copy it answers). Columns
    ``time_s``
(the ACK's arrival) and ``rtt_s``.

    >>> import pandas as pd
    >>> c = Connection("a", 1, "b", 2, isn=99)
    >>> t = pd.DataFrame({"src": ["a", "a", "b", "a", "b"], "sport": [1, 1, 2, 1, 2],
    ...                   "dst": ["b", "b", "a", "b", "a"], "dport": [2, 2, 1, 2, 1],
    ...                   "flags": 0x10, "ecn": 0, "time_s": [0.0, 0.1, 0.3, 0.4, 0.9],
    ...                   "seq": [100, 110, 0, 100, 0], "ack": [0, 0, 110, 0, 120],
    ...                   "payload_bytes": [10, 10, 0, 10, 0]})
    >>> rtt_samples(t, c).values.tolist()  # 0-10 acked (0.3) before it is resent (0.4)
    [[0.3, 0.3], [0.9, 0.8]]
    """
    sent = data_segments(sender, connection)
    first: dict[int, float] = {}
    resent: dict[int, float] = {}  # end -> when it was first sent again
    for t, seq, size in zip(sent["time_s"].to_numpy(), sent["seq"].to_numpy(),
                            sent["bytes"].to_numpy(), strict=True):
        end = int(seq + size)
        if end in first:
            resent.setdefault(end, float(t))
        else:
            first[end] = float(t)
    acks = connection.backward(sender)
    acks = acks[(acks["flags"] & (_ACK | _SYN)) == _ACK]
    numbers = _relative(acks["ack"].to_numpy(), connection.isn + 1)
    times, samples = [], []
    highest = 0
    for t, number in zip(acks["time_s"].to_numpy(), numbers, strict=True):
        if number <= highest:
            continue
        highest = int(number)
        if highest in first and first[highest] <= t < resent.get(highest, math.inf):
            times.append(float(t))
            samples.append(float(t) - first[highest])
    return pd.DataFrame({"time_s": np.asarray(times, dtype=float),
                         "rtt_s": np.asarray(samples, dtype=float)})


def goodput_bps(receiver: pd.DataFrame, start_s: float, end_s: float,
                conns: Iterable[Connection] | None = None) -> dict[Connection, float]:
    """Per connection: bytes delivered in order in ``[start_s, end_s]`` * 8 / the window,
    from a capture at the receiver (connections default to those opened in it)."""
    if end_s <= start_s:
        raise InputError(f"goodput window [{start_s:g}, {end_s:g}] is empty")
    out = {}
    for conn in (connections(receiver) if conns is None else conns):
        delivered = _deliveries(data_segments(receiver, conn))
        inside = delivered[(delivered["time_s"] >= start_s) & (delivered["time_s"] <= end_s)]
        out[conn] = float(inside["bytes"].sum()) * 8.0 / (end_s - start_s)
    return out

