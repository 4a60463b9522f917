"""The net lens: compose the scenario's Petri net, simulate it, write the common trace.

:class:`NetLens` implements the lens protocol of :mod:`tcpn.models.lenses`: ``check``
refuses what the component library cannot express yet, ``run`` builds the net with
:func:`~tcpn.models.topology.compose`, runs it with the simulator seeded from the run's
lens stream and streams events into the :class:`~tcpn.models.traces.TraceWriter` from a
monitor as firings happen (sequence numbers in bytes: segment ``k`` starts at byte
``k * MSS``). Its provenance includes the net's size, the firings, the firing rate and
a packet census (data segments sent = received + dropped + in flight).

>>> from tcpn.models.lenses import evaluate
>>> from tcpn.models.scenario import dumbbell
>>> result = evaluate(dumbbell(pairs=1, horizon_s=0.5), lens="net")
>>> counts = result.provenance["lens"]["census"]
>>> counts["sent"] == counts["received"] + counts["dropped"] + counts["in_flight"]
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from tcpn.errors import InputError
from tcpn.models.components.packets import advance
from tcpn.models.components.sender import PARTIAL_ACKS, sack_hole
from tcpn.models.components.variants import wireless_report
from tcpn.models.topology import ComposedNet, compose, unsupported
from tcpn.petrinets import Monitor, Simulator

if TYPE_CHECKING:
    from tcpn.models.lenses import Progress, Run
    from tcpn.models.scenario import Scenario
    from tcpn.models.traces import TraceWriter
    from tcpn.petrinets.compiler import CompiledTransition

__all__ = ["NetLens", "TraceMonitor", "census"]

_NEW_DATA = ("new_ack", "ecn_reduce", *PARTIAL_ACKS, "recovery_exit")
_ACKS = (*_NEW_DATA, "dup_ack", "fast_retransmit", "recovery_dup_ack", "stale_ack")
_RECEIVE = ("hold", "ack_now", "out_of_order", "duplicate")
_QUEUE = ("enqueue", "mark", "drop", "overflow", "transmit")

Handler = Callable[[float, dict[str, Any]], None]


class TraceMonitor(Monitor):
    """Turns firings of the composed net into rows of the common trace schema."""

    def __init__(self, composed: ComposedNet, writer: TraceWriter, traced_queues: list[str]):
        super().__init__("trace")
        self.composed = composed
        self.writer = writer
        self.traced = set(traced_queues)
        self.handlers: dict[str, Handler] = {}
        self.last_window: dict[int, tuple[float, float]] = {}
        self.counts = {"sent": 0, "received": 0, "dropped": 0}

    def start(self, sim: Simulator) -> None:
        self.sim = sim
        for i, flow in enumerate(self.composed.flows):
            self._flow_handlers(i, flow.id, flow.tcp.segment_size_bytes)
        for queue_id, prefix in self.composed.interfaces.items():
            self._queue_handlers(queue_id, prefix)
        known = {t.name for t in sim.compiled.transitions}
        self.transitions = tuple(name for name in self.handlers if name in known)
        self.last_window = {i: (-1.0, -1.0) for i in range(len(self.composed.flows))}
        super().start(sim)

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        self.handlers[transition.name](sim.now, dict(zip(transition.variables, binding,
                                                         strict=True)))

    def result(self) -> dict[str, int]:
        return dict(self.counts)

    # -- flows ----------------------------------------------------------------------------
    def _window(self, i: int, name: str, mss: int, now: float) -> None:
        place = self.sim.compiled.place_index[f"flow{i}.snd.tcb"]
        (tcb,) = self.sim.marking[place]
        cwnd, ssthresh = tcb.cwnd * mss, tcb.ssthresh * mss
        last_cwnd, last_ssthresh = self.last_window[i]
        if cwnd != last_cwnd:
            self.writer.flow_value(now, name, "cwnd_bytes", cwnd)
        if ssthresh != last_ssthresh:
            self.writer.flow_value(now, name, "ssthresh_bytes", ssthresh)
        self.last_window[i] = (cwnd, ssthresh)

    def _flow_handlers(self, i: int, name: str, mss: int) -> None:
        w, counts = self.writer, self.counts
        prefix = f"flow{i}"
        timestamps = self.composed.flows[i].tcp.timestamps

        def sent(now: float, seq: int, retransmission: bool) -> None:
            counts["sent"] += 1
            w.flow_event(now, name, "retransmit" if retransmission else "send", seq * mss, mss)

        def on_open(now: float, b: dict[str, Any]) -> None:
            self._window(i, name, mss, now)

        def on_send(now: float, b: dict[str, Any]) -> None:
            t = b["t"]
            sent(now, t.nxt, t.nxt < t.high)
            self._window(i, name, mss, now)

        def on_ack(kind: str) -> Handler:
            def handle(now: float, b: dict[str, Any]) -> None:
                a, t = b["a"], b["t"]
                newly = max(0, a.ack - t.una)
                w.flow_event(now, name, "ack", a.ack * mss, newly * mss)
                if kind in _NEW_DATA and (timestamps or not a.retx):
                    w.flow_value(now, name, "rtt_s", now - a.echo)
                if kind == "fast_retransmit":
                    sent(now, t.una, True)
                elif kind in PARTIAL_ACKS and self.composed.flows[i].variant.endswith(
                        "newreno"):
                    sent(now, a.ack, True)
                self._window(i, name, mss, now)
            return handle

        def on_sack_retransmit(now: float, b: dict[str, Any]) -> None:
            t = b["t"]
            sent(now, sack_hole(t, self.composed.flows[i].tcp.dupack_threshold), True)

        def on_timeout(now: float, b: dict[str, Any]) -> None:
            w.flow_event(now, name, "timeout")
            self._window(i, name, mss, now)

        def on_receive(kind: str) -> Handler:
            def handle(now: float, b: dict[str, Any]) -> None:
                p, r = b["p"], b["r"]
                counts["received"] += 1
                w.flow_event(now, name, "recv", p.seq * mss, mss)
                if kind in ("hold", "ack_now"):
                    nxt = advance(p.seq + 1, r.ooo)
                    w.flow_event(now, name, "deliver", r.nxt * mss, (nxt - r.nxt) * mss)
            return handle

        h = self.handlers
        h[f"{prefix}.snd.open"] = on_open
        h[f"{prefix}.snd.send"] = on_send
        h[f"{prefix}.snd.timeout"] = on_timeout
        h[f"{prefix}.snd.sack_retransmit"] = on_sack_retransmit
        for kind in _ACKS:
            h[f"{prefix}.snd.{kind}"] = on_ack(kind)
        for kind in _RECEIVE:
            h[f"{prefix}.rcv.{kind}"] = on_receive(kind)

    # -- queues ---------------------------------------------------------------------------
    def _queue_handlers(self, queue_id: str, prefix: str) -> None:
        w, counts, flows = self.writer, self.counts, self.composed.flows
        traced = queue_id in self.traced
        frames = self.sim.compiled.place_index.get(f"{prefix}.frames")

        def flow_drop(now: float, p: Any) -> None:
            name = flows[p.flow].id
            mss = flows[p.flow].tcp.segment_size_bytes
            if p.seq >= 0:
                counts["dropped"] += 1
                w.flow_event(now, name, "drop", p.seq * mss, mss, where=queue_id)
            else:
                w.flow_event(now, name, "drop", p.ack * mss, 0.0, where=queue_id)

        def on_queue(kind: str) -> Handler:
            def handle(now: float, b: dict[str, Any]) -> None:
                p, n, nbytes = b["p"], b["n"], b["b"]
                name = flows[p.flow].id
                if kind in ("enqueue", "mark"):
                    if kind == "mark" and p.seq >= 0:
                        mss = flows[p.flow].tcp.segment_size_bytes
                        w.flow_event(now, name, "mark", p.seq * mss, mss, where=queue_id)
                    if traced:
                        if kind == "mark":
                            w.queue_event(now, queue_id, "mark", n, nbytes, name, p.size)
                        w.queue_event(now, queue_id, "enqueue", n + 1, nbytes + p.size, name,
                                      p.size)
                elif kind == "transmit":
                    if traced:
                        w.queue_event(now, queue_id, "dequeue", n - 1, nbytes - p.size, name,
                                      p.size)
                    if frames is not None:
                        ((_sent, failed),) = self.sim.marking[frames]
                        if failed > b["failed"]:
                            flow_drop(now, p)
                else:
                    flow_drop(now, p)
                    if traced:
                        w.queue_event(now, queue_id, "drop", n, nbytes, name, p.size)
            return handle

        for kind in _QUEUE:
            self.handlers[f"{prefix}.{kind}"] = on_queue(kind)


def census(sim: Simulator, composed: ComposedNet) -> dict[str, int]:
    """Data segments in flight: on wires, waiting at interfaces, queued or decided."""
    in_flight = 0
    for name, index in sim.compiled.place_index.items():
        for value, tokens in sim.marking[index].items():
            if name.endswith(".buffer"):
                packet = value[1]  # (position, packet)
            elif name.endswith(".decided"):
                packet = value[0]  # (packet, verdict)
            else:
                packet = value
            if getattr(packet, "seq", -1) >= 0:
                in_flight += len(tokens) if sim.compiled.timed[index] else tokens
    return {"in_flight": in_flight}


class NetLens:
    """The timed coloured Petri net lens (see the module docstring)."""

    name: ClassVar[str] = "net"

    def __init__(self, max_firings: int | None = None):
        self.max_firings = max_firings

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`InputError` naming every feature the net lens cannot express."""
        problems = unsupported(scenario, scenario.concrete_flows())
        if problems:
            raise InputError("; ".join(problems))

    def run(self, run: Run, trace: TraceWriter, progress: Progress) -> dict[str, Any]:
        """Simulate ``run`` over the scenario's horizon into ``trace``; return provenance."""
        scenario = run.scenario
        built = time.perf_counter()
        composed = compose(scenario, run.flows)
        monitor = TraceMonitor(composed, trace, scenario.traced_queues())
        sim = Simulator(composed.net, seed=run.lens_seed, monitors=[monitor])
        compiled_s = time.perf_counter() - built
        result = sim.run(until=scenario.horizon_s, max_firings=self.max_firings,
                         progress=lambda s: progress(s.now))
        progress(sim.now)
        counts = monitor.result()
        counts.update(census(sim, composed))
        wall = result.metadata["wall_time_s"]
        return {
            "engine": "tcpn.petrinets.Simulator",
            "net": {"places": len(composed.net.places),
                    "transitions": len(composed.net.transitions),
                    "arcs": len(composed.net.arcs), "hash": result.metadata["net_hash"]},
            "build_s": compiled_s, "simulate_s": wall, "firings": result.firings,
            "firings_per_s": result.firings / wall if wall > 0 else None,
            "stop_reason": result.stop_reason, "census": counts,
            "wireless": wireless_report(sim, composed, scenario),
        }
