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
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import dpkt
import numpy as np
import pandas as pd

from tcpn.errors import InputError

__all__ = ["Connection", "PcapError", "connections", "data_segments", "flow_events",
           "goodput_bps", "read_pcap"]

_FILE_HEADER = 24
_RECORD_HEADER = 16
_TCP_MIN = 20
_FIN, _SYN, _ACK = 0x01, 0x02, 0x10

# link type -> (bytes before the IP header, (offset, expected value) of the IPv4 tag)
_LINKS: dict[int, tuple[int, tuple[int, bytes] | None]] = {
    dpkt.pcap.DLT_PPP: (2, (0, b"\x00\x21")),      # ns-3 point-to-point: protocol only
    dpkt.pcap.DLT_EN10MB: (14, (12, b"\x08\x00")),
    dpkt.pcap.DLT_RAW: (0, None),
    228: (0, None),                                 # LINKTYPE_IPV4
}

COLUMNS = ("packet", "offset", "time_s", "src", "dst", "sport", "dport", "seq", "ack",
           "flags", "ip_bytes", "payload_bytes", "ecn")
"""Columns of :func:`read_pcap`'s table (``packet`` 0-based record number, ``offset``
byte offset of its record header, ``ecn`` the IP ECN codepoint: 0 not ECT, 3 CE)."""


class PcapError(InputError):
    """A capture file is not a readable pcap of IPv4 packets; the message says where."""


def _fail(name: str, what: str) -> PcapError:
    return PcapError(f"{name}: {what}")


def _frame(data: bytes, name: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Parse the file header with dpkt and frame the records; return the link type and
    the records' offsets, captured lengths and timestamps."""
    if len(data) < _FILE_HEADER:
        raise _fail(name, f"byte offset 0: {len(data)} bytes cannot hold a pcap file header "
                          f"({_FILE_HEADER} bytes)")
    header = dpkt.pcap.FileHdr(data[:_FILE_HEADER])
    magic = header.magic  # read big-endian: it tells the byte order, as in dpkt's Reader
    if magic not in dpkt.pcap.MAGIC_TO_PKT_HDR:
        raise _fail(name, f"byte offset 0: not a pcap file (magic 0x{magic:08x})")
    if magic in (dpkt.pcap.PMUDPCT_MAGIC, dpkt.pcap.PMUDPCT_MAGIC_NANO):
        header = dpkt.pcap.LEFileHdr(data[:_FILE_HEADER])
    order = "<" if dpkt.pcap.MAGIC_TO_PKT_HDR[magic] is dpkt.pcap.LEPktHdr else ">"
    nano = magic in (dpkt.pcap.TCPDUMP_MAGIC_NANO, dpkt.pcap.PMUDPCT_MAGIC_NANO)
    unpack = struct.Struct(order + "IIII").unpack_from
    offsets: list[int] = []
    caplens: list[int] = []
    seconds: list[int] = []
    fractions: list[int] = []
    offset, end = _FILE_HEADER, len(data)
    while offset < end:
        number = len(offsets)
        if end - offset < _RECORD_HEADER:
            raise _fail(name, f"packet {number} at byte offset {offset}: record header cut "
                              f"off ({end - offset} of {_RECORD_HEADER} bytes)")
        sec, frac, caplen, _wire = unpack(data, offset)
        if caplen > end - offset - _RECORD_HEADER:
            raise _fail(name, f"packet {number} at byte offset {offset}: record truncated "
                              f"({end - offset - _RECORD_HEADER} of {caplen} bytes present)")
        offsets.append(offset)
        caplens.append(caplen)
        seconds.append(sec)
        fractions.append(frac)
        offset += _RECORD_HEADER + caplen
    times = np.asarray(seconds, dtype=np.float64) + np.asarray(fractions, dtype=np.float64) / (
        1e9 if nano else 1e6)
    return (header.linktype, np.asarray(offsets, dtype=np.int64),
            np.asarray(caplens, dtype=np.int64), times)


def _field(raw: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    value = np.zeros(len(at), dtype=np.uint64)
    for k in range(width):
        value = (value << np.uint64(8)) | raw[at + k].astype(np.uint64)
    return value


def read_pcap(source: str | Path | BinaryIO) -> pd.DataFrame:
    """One row per TCP/IPv4 segment of a pcap file (see :data:`COLUMNS`); other packets
    are skipped. Raises :class:`PcapError` naming the packet and byte offset at fault.

    Works on truncated captures (a snap length of 96 keeps every header): sizes come from
    the IP header, not from the captured bytes.
    """
    if isinstance(source, str | Path):
        name = str(source)
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise PcapError(f"cannot read capture {name}: {exc.strerror}") from None
    else:
        name = getattr(source, "name", "<pcap>")
        data = source.read()
    linktype, offsets, caplens, times = _frame(data, name)
    if linktype not in _LINKS:
        raise _fail(name, f"byte offset 20: link type {linktype} is not supported "
                          f"(PPP, Ethernet or raw IPv4)")
    link_bytes, tag = _LINKS[linktype]
    raw = np.frombuffer(data, dtype=np.uint8)
    start = offsets + _RECORD_HEADER
    keep = caplens >= link_bytes + 20
    if tag is not None:
        at, value = tag
        keep &= _field(raw, np.where(keep, start + at, 0), 2) == int.from_bytes(value, "big")
    ip = start + link_bytes
    safe_ip = np.where(keep, ip, 0)
    keep &= (raw[safe_ip] >> 4) == 4
    keep &= raw[safe_ip + 9] == 6  # TCP
    ihl = (raw[safe_ip] & 0x0F).astype(np.int64) * 4
    need = link_bytes + ihl + _TCP_MIN
    short = keep & (caplens < need)
    if short.any():
        k = int(np.flatnonzero(short)[0])
        raise _fail(name, f"packet {k} at byte offset {int(offsets[k])}: {int(caplens[k])} "
                          f"bytes captured, the IP and TCP headers need {int(need[k])} (snap "
                          "length too small)")
    rows = np.flatnonzero(keep)
    ip, ihl = ip[rows], ihl[rows]
    tcp = ip + ihl
    total = _field(raw, ip + 2, 2).astype(np.int64)
    data_offset = (raw[tcp + 12] >> 4).astype(np.int64) * 4

    def dotted(at: np.ndarray) -> list[str]:
        return [".".join(map(str, raw[a:a + 4])) for a in at]

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
    bad = table["payload_bytes"] < 0
    if bad.any():
        k = int(table.index[bad][0])
        raise _fail(name, f"packet {int(table.at[k, 'packet'])} at byte offset "
                          f"{int(table.at[k, 'offset'])}: IP total length "
                          f"{int(table.at[k, 'ip_bytes'])} is shorter than its headers")
    return table


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

