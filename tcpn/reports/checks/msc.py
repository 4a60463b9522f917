"""Message-sequence charts of a verification run: segments, ACKs, losses, timer expiries.

:func:`msc_events` reads a path of a :class:`~tcpn.models.verification.check.PropertyNet` (the
checker's :class:`~tcpn.petrinets.checking.verdicts.Evidence`, whose steps carry each firing's
binding, marking and clock) and returns one :class:`MscEvent` per thing a reader follows,
on four lanes: ``sender``, ``queue`` (the forward path's queues), ``link`` (the lossy last
link, both directions) and ``receiver``. :func:`msc_text` draws them for a terminal (one
line each, the sender's ``cwnd``/``ssthresh`` beside), :func:`msc_svg` as an SVG document
(each arrow a ``line`` with ``class`` ``segment``/``ack``/``loss`` and ``data-label``),
:func:`msc_side_by_side` several charts in one SVG document (a counterexample beside its
replays).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcpn.models.components.packets import ACK_SEQ, SYN_ACK_SEQ, SYN_SEQ
from tcpn.models.verification import LOSS_SUFFIX
from tcpn.models.verification.check import PropertyNet
from tcpn.petrinets.checking.verdicts import Evidence
from tcpn.petrinets.statespace.paths import Step

__all__ = ["LANES", "MscEvent", "msc_events", "msc_side_by_side", "msc_svg", "msc_text"]

LANES = ("sender", "queue", "link", "receiver")
#: What a timer's expiry is called on the chart.
TIMERS = {"snd.timeout": ("sender", "RTO expires"),
          "snd.syn_timeout": ("sender", "SYN timer expires"),
          "snd.give_up": ("sender", "gives up"),
          "rcv.delack_timeout": ("receiver", "delayed-ACK timer")}
ARRIVALS = ("enqueue", "direct", "drop", "mark", "meter")
#: The sender's reactions to an ACK that the chart names beside it.
REACTIONS = {"fast_retransmit": "fast retransmit", "partial_ack": "partial ACK",
             "later_partial_ack": "partial ACK", "recovery_exit": "recovery ends",
             "ecn_reduce": "ECN reduction"}


@dataclass(frozen=True)
class MscEvent:
    """One arrow (``source`` -> ``target``) or mark (``source == target``) at ``time_s``.

    ``kind``: ``segment``, ``ack``, ``loss`` (the packet ends on its lane) or ``timer``;
    ``cwnd``/``ssthresh`` are the sender's after the firing (``None`` before it opens).
    """

    time_s: float
    kind: str
    source: str
    target: str
    label: str
    cwnd: float | None = None
    ssthresh: float | None = None


def _label(packet: Any, backward: bool) -> str:
    if packet.seq == SYN_SEQ:
        return "SYN"
    if packet.seq == SYN_ACK_SEQ:
        return "SYN-ACK"
    if packet.seq == ACK_SEQ:
        return f"ack {packet.ack}" if backward else "ACK (handshake)"
    return f"seg {packet.seq}" + (" retx" if packet.retx else "")


def _index(prepared: PropertyNet) -> int:
    """The connection number of the flow the chart follows (``flow{i}``)."""
    return int(prepared.flow.prefix.removeprefix("flow"))


def _interfaces(prepared: PropertyNet) -> tuple[str, str, str]:
    """The module prefixes of the first interface (at the sender), the last link's (into the
    receiver) and the first on the way back (out of the receiver)."""
    flow = prepared.verification.flows[_index(prepared)]

    def prefix(a: str, b: str) -> str:
        role = prepared.verification.roles.get(f"{a}->{b}.link")
        return role.places["idle"].rsplit(".", 1)[0] if role is not None else ""

    directions = [key.removesuffix(".link").split("->") for key, role in
                  prepared.verification.roles.items() if role.kind == "link"]
    first = next((prefix(a, b) for a, b in directions if a == flow.src), "")
    last = next((prefix(a, b) for a, b in directions if b == flow.dst), "")
    back = next((prefix(a, b) for a, b in directions if a == flow.dst), "")
    return first, last, back


def msc_events(prepared: PropertyNet, evidence: Evidence) -> list[MscEvent]:
    """The events of the path ``evidence`` (its stem, then its cycle once)."""
    prefix = prepared.flow.prefix
    first, last, back = _interfaces(prepared)
    receiver_node = list(prepared.verification.scenario.graph().nodes).index(
        prepared.verification.flows[_index(prepared)].dst)
    # what each queue transition means (enqueue, drop, mark, meter), whatever its name
    # (enqueue0/enqueue1 in a small-first queue, police in a policer)
    kinds = {t: k for role in prepared.verification.roles.values() if role.kind == "queue"
             for t, k in role.events.items()}
    events: list[MscEvent] = []
    steps: Sequence[Step] = [*evidence.stem, *evidence.cycle]
    for step in steps:
        name, binding = step.transition, step.binding
        clock = step.clock or 0.0
        tcb = (step.marking.get(f"{prefix}.snd.tcb") or [None])[0]
        tcb = getattr(tcb, "value", tcb)
        window = (tcb.cwnd, tcb.ssthresh) if tcb is not None else (None, None)

        def add(kind: str, source: str, target: str, label: str,
                clock: float = clock, window: tuple[Any, Any] = window) -> None:
            events.append(MscEvent(clock, kind, source, target, label, *window))

        interface, _, local = name.rpartition(".")
        packet = binding.get("p")
        for local_name, (lane, text) in TIMERS.items():
            if name == f"{prefix}.{local_name}":
                add("timer", lane, lane, text)
        if name.startswith(f"{prefix}.snd.") and "a" in binding:
            local = name.removeprefix(f"{prefix}.snd.")
            reaction = f": {REACTIONS[local]}" if local in REACTIONS else ""
            add("ack", "link", "sender", _label(binding["a"], True) + reaction)
            continue
        if packet is None:
            continue
        backward = packet.dst != receiver_node
        label = _label(packet, backward)
        if name.startswith(f"{prefix}.rcv."):
            add("segment", "link", "receiver",
                label + (" (duplicate)" if local == "duplicate" else ""))
            continue
        if local.endswith(LOSS_SUFFIX):
            if local == "direct" + LOSS_SUFFIX and not backward and interface in (first, last):
                # a cut-through packet is lost as it arrives: show it arriving
                add("segment", *(("sender", "queue") if interface == first
                                 else ("queue", "link")), label)
            add("loss", "link", "link", f"{label} lost ({interface.replace('.', '->')})")
            continue
        kind = kinds.get(name, "direct" if local == "direct" else "")
        if kind == "drop":
            add("loss", "receiver" if interface == back else "queue",
                "receiver" if interface == back else "queue", f"{label} dropped")
        if kind not in ARRIVALS:
            continue
        if interface == first and not backward:
            add("segment", "sender", "queue", label)
        elif interface == last and not backward:
            add("segment", "queue", "link", label)
        elif interface == back:
            add("ack", "receiver", "link", label)
    return events


def msc_text(events: Sequence[MscEvent], lane_width: int = 12,
             max_events: int | None = None) -> str:
    """The chart for a terminal: lanes as columns, one event a line.

    With ``max_events``, a longer chart keeps what a reader looks for: its first and last
    ``max_events // 4`` events and each loss and timer expiry with the two events either
    side; a line says how many events each gap leaves out (the whole chart: ``--msc``).

    >>> print(msc_text([MscEvent(0.0, "segment", "sender", "queue", "seg 0", 1, 64),
    ...                 MscEvent(0.1, "loss", "link", "link", "seg 0 lost", 1, 64)]))
      time s  sender      queue       link        receiver
       0.000  |---------->|           |           |           seg 0  (cwnd 1, ssthresh 64)
       0.100  |           |           X           |           seg 0 lost
    """
    header = "".join(lane.ljust(lane_width) for lane in LANES)
    lines = [f"  time s  {header}".rstrip()]
    kept = _kept(events, max_events)
    for index, event in enumerate(events):
        if index not in kept:
            if index - 1 in kept or index == 0:
                gap = next((k for k in range(index, len(events)) if k in kept),
                           len(events)) - index
                lines.append(f"     ...  {gap:,} event{'s' if gap > 1 else ''} left out "
                             "(the whole chart: --msc FILE)")
            continue
        grid = [" "] * (lane_width * (len(LANES) - 1) + 1)
        for k in range(len(LANES)):
            grid[k * lane_width] = "|"
        a, b = LANES.index(event.source) * lane_width, LANES.index(event.target) * lane_width
        if a == b:
            grid[a] = {"loss": "X", "timer": "*"}.get(event.kind, "o")
        else:
            low, high = min(a, b), max(a, b)
            for k in range(low + 1, high):
                grid[k] = "-"
            grid[b - 1 if b > a else b + 1] = ">" if b > a else "<"
        window = ""
        if event.cwnd is not None and "sender" in (event.source, event.target):
            window = f"  (cwnd {event.cwnd:g}, ssthresh {event.ssthresh:g})"
        pad = " " * (lane_width - 1)
        lines.append(f"{event.time_s:8.3f}  {''.join(grid)}{pad}{event.label}{window}")
    return "\n".join(lines)


def _kept(events: Sequence[MscEvent], max_events: int | None) -> set[int]:
    """The indices of ``events`` :func:`msc_text` draws (all when within ``max_events``)."""
    count = len(events)
    if max_events is None or count <= max_events:
        return set(range(count))
    edge = max(max_events // 4, 1)
    kept = set(range(edge)) | set(range(count - edge, count))
    for index, event in enumerate(events):
        if event.kind in ("loss", "timer"):
            kept.update(range(max(index - 2, 0), min(index + 3, count)))
    return kept


def _add(parent: ET.Element, tag: str, attributes: dict[str, str],
         text: str | None = None) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    element.text = text
    return element


def msc_svg(events: Sequence[MscEvent], title: str = "") -> str:
    """The chart as an SVG document: a vertical line per lane, an arrow per packet hop,
    a cross per loss, a star per timer expiry, ``cwnd``/``ssthresh`` on the right."""
    lane_x = {lane: 90 + 150 * k for k, lane in enumerate(LANES)}
    row, top = 24, 70
    width, height = 90 + 150 * (len(LANES) - 1) + 260, top + row * (len(events) + 1)
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": str(width),
                             "height": str(height), "viewBox": f"0 0 {width} {height}",
                             "font-family": "sans-serif", "font-size": "11"})
    marker = _add(_add(svg, "defs", {}), "marker", {
        "id": "head", "markerWidth": "8", "markerHeight": "8", "refX": "8", "refY": "4",
        "orient": "auto"})
    _add(marker, "path", {"d": "M0,0 L8,4 L0,8 z", "fill": "context-stroke"})
    _add(svg, "title", {}, title or "message-sequence chart")
    _add(svg, "text", {"x": "10", "y": "20", "font-size": "13"}, title)
    for lane, x in lane_x.items():
        _add(svg, "text", {"x": str(x), "y": "50", "text-anchor": "middle", "class": "lane"},
             lane)
        _add(svg, "line", {"x1": str(x), "y1": "56", "x2": str(x), "y2": str(height - 10),
                           "stroke": "#999", "class": "lane"})
    colours = {"segment": "#1f4e9c", "ack": "#2a7a2a", "loss": "#c0392b", "timer": "#b07000"}
    for k, event in enumerate(events):
        y = top + row * k
        x1, x2 = lane_x[event.source], lane_x[event.target]
        colour = colours[event.kind]
        _add(svg, "text", {"x": "10", "y": str(y + 4), "fill": "#555"},
             f"{event.time_s:.3f} s")
        attributes = {"class": event.kind, "data-label": event.label,
                      "data-source": event.source, "data-target": event.target,
                      "data-time": f"{event.time_s:g}"}
        if x1 != x2:
            _add(svg, "line", {"x1": str(x1), "y1": str(y), "x2": str(x2), "y2": str(y),
                               "stroke": colour, "marker-end": "url(#head)", **attributes})
            _add(svg, "text", {"x": str((x1 + x2) / 2), "y": str(y - 3), "fill": colour,
                               "text-anchor": "middle"}, event.label)
        else:
            symbol = "\u2715" if event.kind == "loss" else "\u2605"
            _add(svg, "text", {"x": str(x1), "y": str(y + 4), "fill": colour,
                               "text-anchor": "middle", **attributes}, symbol)
            _add(svg, "text", {"x": str(x1 + 10), "y": str(y + 4), "fill": colour},
                 event.label)
        if event.cwnd is not None and "sender" in (event.source, event.target):
            _add(svg, "text", {"x": str(lane_x["receiver"] + 110), "y": str(y + 4),
                               "fill": "#333", "class": "window"},
                 f"cwnd {event.cwnd:g}  ssthresh {event.ssthresh:g}")
    return ET.tostring(svg, encoding="unicode") + "\n"


SVG_NS = "http://www.w3.org/2000/svg"


def msc_side_by_side(charts: Sequence[tuple[str, Sequence[MscEvent]]], title: str = "") -> str:
    """Several charts (``(title, events)`` each) side by side in one SVG document: each
    :func:`msc_svg` chart is a nested ``svg`` element (``class="chart"``, ``data-title``)
    placed right of the previous one, under ``title``.

    >>> import xml.etree.ElementTree as ET
    >>> two = msc_side_by_side([("model", [MscEvent(0.0, "segment", "sender", "queue", "seg 0")]),
    ...                         ("net", [])], "seg 0")
    >>> [c.get("data-title") for c in ET.fromstring(two) if c.get("class") == "chart"]
    ['model', 'net']
    """
    ET.register_namespace("", SVG_NS)
    top = 30
    parts = [ET.fromstring(msc_svg(events, name)) for name, events in charts]
    width = sum(int(part.get("width", "0")) for part in parts)
    height = top + max((int(part.get("height", "0")) for part in parts), default=0)
    root = ET.Element(f"{{{SVG_NS}}}svg", {"width": str(width), "height": str(height),
                                           "viewBox": f"0 0 {width} {height}",
                                           "font-family": "sans-serif", "font-size": "11"})
    ET.SubElement(root, f"{{{SVG_NS}}}title").text = title or "message-sequence charts"
    heading = ET.SubElement(root, f"{{{SVG_NS}}}text", {"x": "10", "y": "20",
                                                        "font-size": "14"})
    heading.text = title
    x = 0
    for k, ((name, _events), part) in enumerate(zip(charts, parts, strict=True)):
        for element in part.iter():  # one arrow head per chart: ids are document-wide
            if element.get("id") == "head":
                element.set("id", f"head-{k}")
            if element.get("marker-end") == "url(#head)":
                element.set("marker-end", f"url(#head-{k})")
        part.set("x", str(x))
        part.set("y", str(top))
        part.set("class", "chart")
        part.set("data-title", name)
        root.append(part)
        x += int(part.get("width", "0"))
    return ET.tostring(root, encoding="unicode") + "\n"
