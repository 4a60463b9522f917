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
from tcpn.models.components.packets import SYN_ACK_SEQ, Pkt, advance
from tcpn.models.components.sender import ACK_TRANSITIONS, NEW_DATA_ACKS, PARTIAL_ACKS, sack_hole
from tcpn.models.components.variants import recovery_variant, wireless_report
from tcpn.models.topology import ComposedNet, compose, unsupported
from tcpn.petrinets import Monitor, Simulator

if TYPE_CHECKING:
    from tcpn.models.lenses import Progress, Run
    from tcpn.models.scenario import Scenario
    from tcpn.models.traces import TraceWriter
    from tcpn.petrinets.compiler import CompiledTransition

__all__ = ["NetLens", "TraceMonitor", "census"]

_RECEIVE = ("hold", "ack_now", "out_of_order", "duplicate")
#: Rows buffered per table before they go to the writer in one ``extend``.
_CHUNK_ROWS = 1 << 15

#: what runs after a firing: ``handler(sim, binding)``
Handler = Callable[["Simulator", tuple[Any, ...]], None]


class _Table:
    """Rows of one trace table, column by column, handed to the writer in chunks."""

    def __init__(self, writer: TraceWriter, table: str, columns: tuple[str, ...],
                 constants: dict[str, Any]):
        self.writer, self.table, self.constants = writer, table, constants
        self.names = columns
        self.columns: tuple[list[Any], ...] = tuple([] for _ in columns)
        self.appends = tuple(column.append for column in self.columns)

    def flush(self) -> None:
        if self.columns[0]:
            self.writer.extend(self.table, **dict(zip(self.names, self.columns, strict=True)),
                               **self.constants)
            for column in self.columns:
                column.clear()


class TraceMonitor(Monitor):
    """Turns firings of the composed net into rows of the common trace schema.

    Handlers are chosen once per transition (by its name and the interface's
    :attr:`~tcpn.models.topology.ComposedNet.events`) and read the binding tuple by
    position; rows are buffered per table and written with ``TraceWriter.extend``.
    ``cwnd``, ``rtt`` and ``flow_events`` follow the scenario's ``trace`` selection.
    """

    def __init__(self, composed: ComposedNet, writer: TraceWriter, traced_queues: list[str],
                 *, cwnd: bool = True, rtt: bool = True, flow_events: bool = True):
        super().__init__("trace")
        self.composed = composed
        self.writer = writer
        self.traced = set(traced_queues)
        self.record = {"cwnd": cwnd, "rtt": rtt, "flow_events": flow_events}
        self.handlers: dict[str, Callable[[CompiledTransition], Handler]] = {}
        self.counts = {"sent": 0, "received": 0, "dropped": 0}
        self.flow_rows = _Table(writer, "flow_events",
                                ("time_s", "flow", "event", "seq", "bytes", "where"),
                                {"count": 1.0})
        self.series_rows = _Table(writer, "flow_series", ("time_s", "flow", "var", "value"), {})
        self.queue_rows = _Table(writer, "queue_events",
                                 ("time_s", "queue", "event", "flow", "bytes", "length_packets",
                                  "length_bytes"), {"count": 1.0})
        self._dispatch: list[Handler | None] = []

    def start(self, sim: Simulator) -> None:
        self.sim = sim
        for i, flow in enumerate(self.composed.flows):
            self._flow_handlers(i, flow.id, flow.tcp.segment_size_bytes)
        for queue_id, prefix in self.composed.interfaces.items():
            self._queue_handlers(queue_id, prefix)
        self._dispatch = [None] * len(sim.compiled.transitions)
        for t in sim.compiled.transitions:
            factory = self.handlers.get(t.name)
            if factory is not None:
                self._dispatch[t.index] = factory(t)
        self.transitions = tuple(t.name for t in sim.compiled.transitions
                                 if self._dispatch[t.index] is not None)
        super().start(sim)

    def observer(self, transition: CompiledTransition) -> Handler | None:
        """The transition's handler itself: the simulator calls it after each firing
        (the tables flush themselves when full)."""
        return self._dispatch[transition.index]

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        handler = self._dispatch[transition.index]
        assert handler is not None
        handler(sim, binding)

    def finish(self, sim: Simulator) -> None:
        for table in (self.flow_rows, self.series_rows, self.queue_rows):
            table.flush()

    def result(self) -> dict[str, int]:
        return dict(self.counts)

    # -- rows -----------------------------------------------------------------------------
    def _flow_event(self) -> Callable[..., None]:
        """``event(now, flow, kind, seq, bytes, where="")``: one flow_events row (or none
        when the scenario does not trace flow events)."""
        t, f, e, s, b, w = self.flow_rows.appends
        if not self.record["flow_events"]:
            return lambda *args, **kwargs: None
        rows, flush = self.flow_rows.columns[0], self.flow_rows.flush

        def event(now: float, flow: str, kind: str, seq: int, nbytes: float,
                  where: str = "") -> None:
            t(now)
            f(flow)
            e(kind)
            s(seq)
            b(nbytes)
            w(where)
            if len(rows) >= _CHUNK_ROWS:
                flush()
        return event

    # -- flows ----------------------------------------------------------------------------
    def _flow_handlers(self, i: int, name: str, mss: int) -> None:
        counts, marking = self.counts, self.sim.marking
        flow = self.composed.flows[i]
        prefix = f"flow{i}"
        event = self._flow_event()
        st, sf, sv, sx = self.series_rows.appends
        series, flush_series = self.series_rows.columns[0], self.series_rows.flush
        tcb_place = self.sim.compiled.place_index[f"{prefix}.snd.tcb"]
        rtt_samples = self.record["rtt"]
        timestamps = flow.tcp.timestamps
        dupthresh = flow.tcp.dupack_threshold
        last = [-1.0, -1.0]
        record_window = self.record["cwnd"]

        def window(now: float) -> None:
            """cwnd and ssthresh rows when they changed (after any RTT row)."""
            if len(series) >= _CHUNK_ROWS:
                flush_series()
            if not record_window:
                return
            (tcb,) = marking[tcb_place]
            cwnd, ssthresh = tcb.cwnd * mss, tcb.ssthresh * mss
            if cwnd != last[0]:
                st(now)
                sf(name)
                sv("cwnd_bytes")
                sx(cwnd)
                last[0] = cwnd
            if ssthresh != last[1]:
                st(now)
                sf(name)
                sv("ssthresh_bytes")
                sx(ssthresh)
                last[1] = ssthresh

        def sent(now: float, seq: int, retransmission: bool) -> None:
            counts["sent"] += 1
            event(now, name, "retransmit" if retransmission else "send", seq * mss, mss)

        def at(transition: CompiledTransition, *names: str) -> tuple[int, ...]:
            return tuple(transition.variables.index(n) for n in names)

        def on_open(transition: CompiledTransition) -> Handler:
            if "a" not in transition.variables:
                return lambda sim, b: window(sim.now)
            (ka,) = at(transition, "a")

            def handshake(sim: Simulator, b: tuple[Any, ...]) -> None:
                now = sim.now
                a = b[ka]  # the SYN-ACK: the first RTT sample (Karn's rule)
                if rtt_samples and (timestamps or not a.retx):
                    st(now)
                    sf(name)
                    sv("rtt_s")
                    sx(now - a.echo)
                window(now)
            return handshake

        def on_send(transition: CompiledTransition) -> Handler:
            (k,) = at(transition, "t")

            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                now, t = sim.now, b[k]
                sent(now, t.nxt, t.nxt < t.high)
                window(now)
            return handle

        def on_ack(kind: str) -> Callable[[CompiledTransition], Handler]:
            new_data = kind in NEW_DATA_ACKS
            retransmits = kind == "fast_retransmit" or (kind in PARTIAL_ACKS and recovery_variant(
                flow.variant, flow.tcp.sack, flow.params).endswith("newreno"))

            def factory(transition: CompiledTransition) -> Handler:
                ka, kt = at(transition, "a", "t")

                def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                    now, a, t = sim.now, b[ka], b[kt]
                    if a.seq == SYN_ACK_SEQ:  # a late SYN-ACK: no ACK of data
                        return
                    event(now, name, "ack", a.ack * mss, max(0, a.ack - t.una) * mss)
                    if new_data and rtt_samples and (timestamps or not a.retx):
                        st(now)
                        sf(name)
                        sv("rtt_s")
                        sx(now - a.echo)
                    if retransmits:
                        sent(now, t.una if kind == "fast_retransmit" else a.ack, True)
                    window(now)
                return handle
            return factory

        def on_sack_retransmit(transition: CompiledTransition) -> Handler:
            (k,) = at(transition, "t")
            return lambda sim, b: sent(sim.now, sack_hole(b[k], dupthresh), True)

        def on_timeout(transition: CompiledTransition) -> Handler:
            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                event(sim.now, name, "timeout", -1, 0.0)
                window(sim.now)
            return handle

        def on_receive(kind: str) -> Callable[[CompiledTransition], Handler]:
            in_order = kind in ("hold", "ack_now")

            def factory(transition: CompiledTransition) -> Handler:
                kp, kr = at(transition, "p", "r")

                def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                    now, p, r = sim.now, b[kp], b[kr]
                    counts["received"] += 1
                    event(now, name, "recv", p.seq * mss, mss)
                    if in_order:
                        nxt = advance(p.seq + 1, r.ooo)
                        event(now, name, "deliver", r.nxt * mss, (nxt - r.nxt) * mss)
                return handle
            return factory

        h = self.handlers
        h[f"{prefix}.snd.open"] = on_open
        h[f"{prefix}.snd.send"] = on_send
        h[f"{prefix}.snd.timeout"] = on_timeout
        h[f"{prefix}.snd.give_up"] = lambda _t: lambda sim, _b: event(sim.now, name,
                                                                     "connect_fail", -1, 0.0)
        h[f"{prefix}.snd.sack_retransmit"] = on_sack_retransmit
        for kind in ACK_TRANSITIONS:
            h[f"{prefix}.snd.{kind}"] = on_ack(kind)
        for kind in _RECEIVE:
            h[f"{prefix}.rcv.{kind}"] = on_receive(kind)

    # -- queues ---------------------------------------------------------------------------
    def _queue_handlers(self, queue_id: str, prefix: str) -> None:
        counts, flows, marking = self.counts, self.composed.flows, self.sim.marking
        traced = queue_id in self.traced
        frames = self.sim.compiled.place_index.get(f"{prefix}.frames")
        event = self._flow_event()
        qt, qq, qe, qf, qb, qn, ql = self.queue_rows.appends
        ids = [f.id for f in flows]
        mss = [f.tcp.segment_size_bytes for f in flows]
        length = [0, 0]  # packets, bytes queued (after each event)
        rows, flush = self.queue_rows.columns[0], self.queue_rows.flush

        def row(now: float, kind: str, p: Any) -> None:
            if traced:
                if len(rows) >= _CHUNK_ROWS:
                    flush()
                qt(now)
                qq(queue_id)
                qe(kind)
                qf(ids[p.flow])
                qb(p.size)
                qn(length[0])
                ql(length[1])

        def lost(now: float, p: Any) -> None:
            if p.seq >= 0:
                counts["dropped"] += 1
                event(now, ids[p.flow], "drop", p.seq * mss[p.flow], mss[p.flow], queue_id)
            else:
                event(now, ids[p.flow], "ack_drop", p.ack * mss[p.flow], 0.0, queue_id)

        def enqueue(now: float, p: Any) -> None:
            length[0] += 1
            length[1] += p.size
            row(now, "enqueue", p)

        def dequeue(now: float, p: Any) -> None:
            length[0] -= 1
            length[1] -= p.size
            row(now, "dequeue", p)

        def factory(kind: str) -> Callable[[CompiledTransition], Handler]:
            def build(transition: CompiledTransition) -> Handler:
                kp = transition.variables.index("p")
                if kind == "enqueue":
                    return lambda sim, b: enqueue(sim.now, b[kp])
                if kind == "mark":
                    def mark(sim: Simulator, b: tuple[Any, ...]) -> None:
                        now, p = sim.now, b[kp]
                        if p.seq >= 0:
                            event(now, ids[p.flow], "mark", p.seq * mss[p.flow], mss[p.flow],
                                  queue_id)
                        row(now, "mark", p)
                        enqueue(now, p)
                    return mark
                if kind == "drop":
                    def drop(sim: Simulator, b: tuple[Any, ...]) -> None:
                        lost(sim.now, b[kp])
                        row(sim.now, "drop", b[kp])
                    return drop
                direct = kind == "direct"
                kf = transition.variables.index("failed") if frames is not None else -1

                def transmit(sim: Simulator, b: tuple[Any, ...]) -> None:
                    now, p = sim.now, b[kp]
                    if direct:
                        enqueue(now, p)
                    dequeue(now, p)
                    if frames is not None:
                        ((_sent, failed),) = marking[frames]
                        if failed > b[kf]:
                            lost(now, p)
                return transmit
            return build

        for tname, kind in self.composed.events.get(queue_id, {}).items():
            if kind != "meter":
                self.handlers[f"{prefix}.{tname}"] = factory(kind)


def _packet(value: Any) -> Any:
    """The packet in a token value: the value itself, or the packet inside a tuple
    (``(position, packet)`` on buffers, ``(packet, verdict)`` on RED's and the policer's
    decided places)."""
    if type(value) is Pkt:
        return value
    if isinstance(value, tuple):
        return next((v for v in value if type(v) is Pkt), None)
    return None


def census(sim: Simulator, composed: ComposedNet) -> dict[str, int]:
    """Data segments in flight: on wires, waiting at interfaces, queued or decided."""
    in_flight = 0
    for index, place in enumerate(sim.marking):
        timed = sim.compiled.timed[index]
        for value, tokens in place.items():
            packet = _packet(value)
            if packet is not None and packet.seq >= 0:
                in_flight += len(tokens) if timed else tokens
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
        selection = scenario.trace
        monitor = TraceMonitor(composed, trace, scenario.traced_queues(), cwnd=selection.cwnd,
                               rtt=selection.rtt, flow_events=selection.flow_events)
        sim = Simulator(composed.net, seed=run.lens_seed, monitors=[monitor])
        compiled_s = time.perf_counter() - built
        result = sim.run(until=scenario.horizon_s, max_firings=self.max_firings,
                         progress=lambda s: progress(s.now, firings=s.firings))
        progress(sim.now, firings=sim.firings)
        counts = monitor.result()
        counts.update(census(sim, composed))
        wall = result.metadata["wall_time_s"]
        return {
            "engine": "tcpn.petrinets.Simulator",
            "simulator_engine": sim.native.engine, "python_fallbacks": sim.native.fallbacks,
            "net": {"places": len(composed.net.places),
                    "transitions": len(composed.net.transitions),
                    "arcs": len(composed.net.arcs), "hash": result.metadata["net_hash"]},
            "build_s": compiled_s, "simulate_s": wall, "firings": result.firings,
            "firings_per_s": result.firings / wall if wall > 0 else None,
            "stop_reason": result.stop_reason, "census": counts,
            "wireless": wireless_report(sim, composed, scenario),
        }
