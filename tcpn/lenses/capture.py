"""The capture lens: a user's packet capture read as a run of the scenario, so that the
other lenses can be judged against a testbed (``tcpn validate scenario.yaml --trace
sender.pcap``).

It simulates nothing. ``sender`` captures (pcap or pcapng, taken at the senders' hosts:
data out, ACKs in) give each flow's ``send``/``retransmit``/``ack`` events and its RTT
samples (:func:`tcpn.models.pcap.rtt_samples`); ``receiver`` captures (at the
receivers' hosts) give ``recv``/``deliver``. The scenario's flows are matched to the
connections opened in the sender captures in order of opening (the earliest SYN to the
flow that starts first; the ``ports`` option names each flow's destination port instead,
when other connections share the capture); a receiver capture's connection is the one with
the same addresses and ports. Time zero is set so that the first matched SYN falls at its
flow's start time; events after the scenario's horizon are left out.

Without receiver captures, deliveries are inferred from the cumulative ACKs arriving at
the sender (each byte counted when its ACK arrives, a one-way delay late: goodput over
the window is unchanged but for the bytes in flight at its edges); throughput (bytes
received, duplicates included) and per-segment delay then cannot be measured and are
absent. A capture at the end hosts does not see what the path did: drops, marks, timeouts,
the congestion window and the queues are absent (``unobserved``), never 0.

>>> CaptureLens().unobserved()["drops"]
'a capture at the end hosts does not see the path drop packets'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from tcpn.errors import InputError, InputFileError
from tcpn.models import pcap
from tcpn.models.scenario import ConcreteFlow, Scenario

__all__ = ["CaptureLens"]

_PATH = "a capture at the end hosts does not see the path {}"
_ALWAYS = {"drops": _PATH.format("drop packets"), "loss_ratio": _PATH.format("drop packets"),
           "marks": _PATH.format("mark packets"), "mark_ratio": _PATH.format("mark packets"),
           "timeouts": "a capture does not show the sender's timer expiring",
           "cwnd_mean_bytes": "a capture does not show the congestion window",
           "queues": _PATH.format("queue packets")}
_WITHOUT_RECEIVER = {
    "throughput_bps": "no capture at the receivers (--trace-receiver): bytes received, "
                      "duplicates included, are not seen",
    "segment_delay_mean_s": "no capture at the receivers (--trace-receiver): a segment's "
                            "delivery time is not seen"}


class CaptureLens:
    """A packet capture as a lens (see the module docstring)."""

    name: ClassVar[str] = "capture"

    def __init__(self, sender: str | Path | Sequence[str | Path] = (),
                 receiver: str | Path | Sequence[str | Path] = (),
                 ports: Sequence[int] = ()):
        self.senders = _paths(sender)
        self.receivers = _paths(receiver)
        self.ports = tuple(int(p) for p in ports)
        self._read: dict[Path, pd.DataFrame] = {}

    def unobserved(self) -> dict[str, str]:
        """The metrics (and ``queues``) a capture cannot give, with why."""
        return {**_ALWAYS, **({} if self.receivers else _WITHOUT_RECEIVER)}

    def _capture(self, path: Path) -> pd.DataFrame:
        if path not in self._read:
            try:
                self._read[path] = pcap.read_pcap(path)
            except InputError as exc:  # the user's file at fault, not the scenario
                raise InputFileError(str(exc)) from None
        return self._read[path]

    def _matched(self, scenario: Scenario, flows: Sequence[ConcreteFlow]
                 ) -> list[tuple[ConcreteFlow, pcap.Connection, pd.DataFrame, float]]:
        """Each flow with its connection, the sender capture holding it and its SYN time."""
        if not self.senders:
            raise InputError("the capture lens needs a capture taken at the senders: "
                             "tcpn validate SCENARIO --trace sender.pcap")
        opened = []
        for path in self.senders:
            packets = self._capture(path)
            for conn in pcap.connections(packets):
                syn = conn.forward(packets)
                opened.append((float(syn["time_s"].iloc[0]), str(path), conn, packets))
        opened.sort(key=lambda item: (item[0], item[1]))
        ordered = sorted(flows, key=lambda f: (f.start_s, f.id))
        if self.ports:
            if len(self.ports) != len(ordered):
                raise InputError(f"--trace-ports names {len(self.ports)} port(s) for "
                                 f"{len(ordered)} flows (one per flow, in order of start)")
            chosen = []
            for flow, port in zip(ordered, self.ports, strict=True):
                found = [item for item in opened if item[2].dport == port]
                if not found:
                    raise InputError(f"flow {flow.id}: no connection to port {port} opens in "
                                     f"{', '.join(map(str, self.senders))}")
                chosen.append(found[0])
        else:
            if len(opened) < len(ordered):
                raise InputError(
                    f"{', '.join(map(str, self.senders))}: {len(opened)} connection(s) open "
                    f"(a SYN seen), the scenario has {len(ordered)} flows")
            chosen = opened[:len(ordered)]
        return [(flow, conn, packets, syn_s) for flow, (syn_s, _, conn, packets)
                in zip(ordered, chosen, strict=True)]

    def check(self, scenario: Scenario) -> None:
        """Read the captures and match the scenario's flows to their connections."""
        self._matched(scenario, scenario.concrete_flows(scenario.seed))

    def run(self, run: Any, trace: Any, progress: Any) -> dict[str, Any]:
        """Write the captured flows' events into ``trace``; return what was read."""
        scenario: Scenario = run.scenario
        matched = self._matched(scenario, run.flows)
        first_flow, _, _, first_syn = matched[0]
        shift_s = first_syn - first_flow.start_s
        receivers = [self._capture(path) for path in self.receivers]
        sources = []
        for flow, conn, packets, syn_s in matched:
            receiver = next((r for r in receivers if len(conn.forward(r))), None)
            events = pcap.flow_events(conn, packets, receiver)
            if receiver is None:
                acked = events[(events["event"] == "ack") & (events["bytes"] > 0)]
                delivered = acked.assign(event="deliver", seq=acked["seq"] - acked["bytes"])
                events = pd.concat([events, delivered], ignore_index=True).sort_values(
                    "time_s", kind="stable")
            events = events.assign(time_s=events["time_s"] - shift_s)
            events = events[(events["time_s"] >= 0) & (events["time_s"] <= scenario.horizon_s)]
            trace.extend("flow_events", time_s=events["time_s"].to_numpy(), flow=flow.id,
                         event=events["event"].tolist(), seq=events["seq"].to_numpy(),
                         bytes=events["bytes"].to_numpy(dtype=float))
            if scenario.trace.rtt:
                samples = pcap.rtt_samples(packets, conn)
                times = samples["time_s"].to_numpy() - shift_s
                keep = (times >= 0) & (times <= scenario.horizon_s)
                if keep.any():
                    trace.extend("flow_series", time_s=times[keep], flow=flow.id, var="rtt_s",
                                 value=samples["rtt_s"].to_numpy()[keep])
            sources.append({"flow": flow.id, "connection": f"{conn.src}:{conn.sport} -> "
                            f"{conn.dst}:{conn.dport}", "syn_s": syn_s,
                            "receiver capture": receiver is not None})
        progress(scenario.horizon_s)
        return {"captures": {"sender": [str(p) for p in self.senders],
                             "receiver": [str(p) for p in self.receivers]},
                "time_shift_s": shift_s, "flows": sources,
                "deliveries": "from the receiver captures" if self.receivers else
                "inferred from the cumulative ACKs at the sender",
                "unobserved": self.unobserved()}


def _paths(value: str | Path | Sequence[str | Path]) -> tuple[Path, ...]:
    items = [value] if isinstance(value, str | Path) else list(value)
    out = []
    for item in items:
        path = Path(item)
        if not path.is_file():
            raise InputFileError(f"{path}: no such capture file" if not path.exists() else
                                 f"{path}: not a capture file (not a regular file)")
        out.append(path)
    return tuple(out)
