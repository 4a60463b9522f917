"""The net lens: compose the scenario's Petri net, simulate it, write the common trace.

:class:`NetLens` implements the lens protocol of :mod:`tcpn.lenses.base`: ``check``
refuses what the component library cannot express yet, ``run`` builds the net with
:func:`~tcpn.models.topology.compose`, runs it with the simulator seeded from the run's
lens stream and streams events into the :class:`~tcpn.models.traces.TraceWriter` from a
monitor as firings happen (sequence numbers in bytes: segment ``k`` starts at byte
``k * MSS``). Its provenance includes the net's size, the firings, the firing rate and
a packet census (data segments sent = received + dropped + in flight).

>>> from tcpn.lenses import evaluate
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

import numpy as np

from tcpn.errors import InputError
from tcpn.lenses.compiled_trace import trace_monitor_class
from tcpn.models.components.packets import SYN_ACK_SEQ, Pkt, advance
from tcpn.models.components.sender import (
    ACK_TRANSITIONS,
    FINE_RETRANSMITS,
    NEW_DATA_ACKS,
    PARTIAL_ACKS,
    RETRANSMITTED,
    karn_sample,
    sack_hole,
)
from tcpn.models.components.variants import recovery_variant, wireless_report
from tcpn.models.topology import ComposedNet, compose, unsupported
from tcpn.models.traces import encoded
from tcpn.petrinets import Monitor, Simulator

if TYPE_CHECKING:
    from tcpn.lenses.base import Progress, Run
    from tcpn.models.scenario import Scenario
    from tcpn.models.traces import TraceWriter
    from tcpn.petrinets.engine.compiler import CompiledTransition

__all__ = ["NetLens", "TraceMonitor", "census"]

_RECEIVE = ("hold", "ack_now", "out_of_order", "duplicate")
#: Rows per chunk handed to the writer (one ``extend`` per chunk and table).
_CHUNK_ROWS = 1 << 15
#: Rows buffered as Python numbers before they become a NumPy block: a few thousand
#: keep the buffer's objects in the processor's cache (measured: a whole chunk of
#: number objects, ~6 MB per table, cost 3 % of a 100 Mbit/s run)
_BLOCK_ROWS = 1 << 12

#: what runs after a firing: ``handler(sim, binding)``
Handler = Callable[["Simulator", tuple[Any, ...]], None]
#: adds one row to a table: ``add((time_s, code, *numbers))``
AddRow = Callable[[tuple[Any, ...]], None]


def _ignore(_row: tuple[Any, ...]) -> None:
    """Stands for a table's ``add`` when the scenario does not trace that table."""


def float_rows(values: list[float], width: int) -> np.ndarray:
    """``values`` (numbers, row after row, ``width`` to a row) as a float64 array of rows.

    np.array of the list: measured ~30 % faster than np.fromiter on these mixed int and
    float values. The compiled monitor (:mod:`tcpn.lenses.compiled_trace`) runs a typed
    loop instead, with the same numbers.
    """
    return np.array(values, dtype=np.float64).reshape(-1, width)


class _Rows:
    """Rows of one trace table, buffered as numbers and handed to the writer in chunks.

    A handler adds a row with one call, ``add((time_s, code, *numbers))`` (or two rows
    with one call of their values in a row): ``code`` (from :meth:`code`) stands for the
    row's string columns, ``numbers`` are the table's numeric columns in order. The
    buffer is one flat list of numbers, turned into a NumPy block every
    :data:`_BLOCK_ROWS` rows (a list of row tuples measured slower to transpose); a
    handler calls :meth:`flush` once ``len(values) >= limit``, which makes the block and
    writes every full chunk of ``chunk_rows`` rows (all rows with ``final``), so the
    chunks are the same whenever it is called. Why: one call per row, against one list
    append per column and a string per row before.
    """

    def __init__(self, writer: TraceWriter, table: str, strings: tuple[str, ...],
                 numbers: tuple[str, ...], constants: dict[str, Any], chunk_rows: int):
        self.writer, self.table, self.constants = writer, table, constants
        self.strings, self.numbers, self.chunk_rows = strings, numbers, chunk_rows
        self.width = 2 + len(numbers)
        self.limit = min(chunk_rows, _BLOCK_ROWS) * self.width
        self.values: list[float] = []
        self.add = self.values.extend
        self.keys: list[tuple[str, ...]] = []
        self._codes: dict[tuple[str, ...], int] = {}
        #: the rows already turned into NumPy, not yet written
        self._blocks: list[np.ndarray] = []
        self._pending = 0

    def code(self, *strings: str) -> int:
        """The code of rows whose string columns are ``strings`` (in column order)."""
        code = self._codes.get(strings)
        if code is None:
            code = self._codes[strings] = len(self.keys)
            self.keys.append(strings)
        return code

    def flush(self, final: bool = False) -> None:
        """Turn the buffer into a block; write every full chunk (and, ``final``, the rest)."""
        values, width, size = self.values, self.width, self.chunk_rows
        if values:
            rows, partial = divmod(len(values), width)
            assert partial == 0, f"{self.table}: a row of another width than {width}"
            self._blocks.append(float_rows(values, width))
            self._pending += rows
            values.clear()
        whole = self._pending if final else self._pending - self._pending % size
        if whole == 0:
            return
        table = self._blocks[0] if len(self._blocks) == 1 else np.concatenate(self._blocks)
        self._blocks = [table[whole:]] if whole < len(table) else []
        self._pending -= whole
        codes = table[:whole, 1].astype(np.intp)
        for start in range(0, whole, size):
            chunk = table[start:min(start + size, whole)]
            columns: dict[str, Any] = {"time_s": np.ascontiguousarray(chunk[:, 0])}
            for j, name in enumerate(self.strings):
                columns[name] = encoded([key[j] for key in self.keys],
                                        codes[start:start + size])
            for j, name in enumerate(self.numbers):
                columns[name] = np.ascontiguousarray(chunk[:, 2 + j])
            self.writer.extend(self.table, **columns, **self.constants)


class TraceMonitor(Monitor):
    """Turns firings of the composed net into rows of the common trace schema.

    Handlers are chosen once per transition (by its name and the interface's
    :attr:`~tcpn.models.topology.ComposedNet.events`), read the binding tuple by position
    and add each row with one call (:class:`_Rows`); the tables go to the writer in
    chunks of ``_CHUNK_ROWS`` rows. ``cwnd``, ``rtt`` and ``flow_events`` follow the
    scenario's ``trace`` selection.
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
        self._dispatch: list[Handler | None] = []

    def start(self, sim: Simulator) -> None:
        self.sim = sim
        writer = self.writer
        self.flow_rows = _Rows(writer, "flow_events", ("flow", "event", "where"),
                               ("seq", "bytes"), {"count": 1.0}, _CHUNK_ROWS)
        self.series_rows = _Rows(writer, "flow_series", ("flow", "var"), ("value",), {},
                                 _CHUNK_ROWS)
        self.queue_rows = _Rows(writer, "queue_events", ("queue", "event", "flow"),
                                ("bytes", "length_packets", "length_bytes"), {"count": 1.0},
                                _CHUNK_ROWS)
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
            table.flush(final=True)

    def result(self) -> dict[str, int]:
        return dict(self.counts)

    def _flow_table(self) -> tuple[AddRow, list[float], int, Callable[[], None]]:
        """``add`` of the flow_events table (a no-op when flow events are not traced), its
        buffer, the buffer's length that calls for a flush, and its flush."""
        rows = self.flow_rows
        return ((rows.add if self.record["flow_events"] else _ignore), rows.values, rows.limit,
                rows.flush)

    # -- flows ----------------------------------------------------------------------------
    def _flow_handlers(self, i: int, name: str, mss: int) -> None:
        counts, marking = self.counts, self.sim.marking
        flow = self.composed.flows[i]
        prefix = f"flow{i}"
        add, rows, limit, flush = self._flow_table()
        code = self.flow_rows.code
        send, retransmit, ack, recv, deliver = (code(name, kind, "") for kind in (
            "send", "retransmit", "ack", "recv", "deliver"))
        timeout, connect_fail = code(name, "timeout", ""), code(name, "connect_fail", "")
        series_rows = self.series_rows
        sample = series_rows.add if self.record["rtt"] else _ignore
        value, series, flush_series = series_rows.add, series_rows.values, series_rows.flush
        series_limit = series_rows.limit
        rtt_s, cwnd_bytes, ssthresh_bytes = (series_rows.code(name, var)
                                          for var in ("rtt_s", "cwnd_bytes", "ssthresh_bytes"))
        tcb_place = self.sim.compiled.place_index[f"{prefix}.snd.tcb"]
        timestamps = flow.tcp.timestamps
        dupthresh = flow.tcp.dupack_threshold
        last = [-1.0, -1.0]
        record_window = self.record["cwnd"]

        def window(now: float) -> None:
            """cwnd and ssthresh rows when they changed (after any RTT row); the flow
            tables' flushes."""
            if len(rows) >= limit:
                flush()
            if record_window:
                (tcb,) = marking[tcb_place]
                cwnd, ssthresh = tcb.cwnd * mss, tcb.ssthresh * mss
                if cwnd != last[0]:
                    value((now, cwnd_bytes, cwnd))
                    last[0] = cwnd
                if ssthresh != last[1]:
                    value((now, ssthresh_bytes, ssthresh))
                    last[1] = ssthresh
            if len(series) >= series_limit:
                flush_series()

        def at(transition: CompiledTransition, *names: str) -> tuple[int, ...]:
            return tuple(transition.variables.index(n) for n in names)

        def on_open(transition: CompiledTransition) -> Handler:
            if "a" not in transition.variables:
                return lambda sim, b: window(sim.now)
            (ka,) = at(transition, "a")

            def handshake(sim: Simulator, b: tuple[Any, ...]) -> None:
                now = sim.now
                a = b[ka]  # the SYN-ACK: the first RTT sample (Karn's rule)
                if timestamps or not a.retx:
                    sample((now, rtt_s, now - a.echo))
                window(now)
            return handshake

        def on_send(transition: CompiledTransition) -> Handler:
            (k,) = at(transition, "t")

            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                now, t = sim.now, b[k]
                counts["sent"] += 1
                add((now, retransmit if t.nxt < t.high else send, t.nxt * mss, mss))
                window(now)
            return handle

        def on_ack(kind: str) -> Callable[[CompiledTransition], Handler]:
            new_data = kind in NEW_DATA_ACKS
            resent = RETRANSMITTED.get(kind)
            retransmits = resent is not None and (kind not in PARTIAL_ACKS or recovery_variant(
                flow.variant, flow.tcp.sack, flow.params).endswith("newreno"))
            fast = resent == "t.una"  # the head, else the segment the ACK asks for

            def factory(transition: CompiledTransition) -> Handler:
                ka, kt = at(transition, "a", "t")

                def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                    now, a, t = sim.now, b[ka], b[kt]
                    if a.seq == SYN_ACK_SEQ:  # a late SYN-ACK: no ACK of data
                        return
                    add((now, ack, a.ack * mss, max(0, a.ack - t.una) * mss))
                    if new_data and karn_sample(t, a, timestamps):  # the model's samples
                        sample((now, rtt_s, now - a.echo))
                    if retransmits:
                        counts["sent"] += 1
                        add((now, retransmit, (t.una if fast else a.ack) * mss, mss))
                    window(now)
                return handle
            return factory

        def on_sack_retransmit(transition: CompiledTransition) -> Handler:
            (k,) = at(transition, "t")

            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                counts["sent"] += 1
                add((sim.now, retransmit, sack_hole(b[k], dupthresh) * mss, mss))
                if len(rows) >= limit:
                    flush()
            return handle

        def on_head_resent(transition: CompiledTransition) -> Handler:
            (k,) = at(transition, "t")

            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                counts["sent"] += 1
                add((sim.now, retransmit, b[k].una * mss, mss))
                window(sim.now)
            return handle

        def on_timeout(transition: CompiledTransition) -> Handler:
            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                add((sim.now, timeout, -1, 0.0))
                window(sim.now)
            return handle

        def on_give_up(transition: CompiledTransition) -> Handler:
            def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                add((sim.now, connect_fail, -1, 0.0))
                if len(rows) >= limit:
                    flush()
            return handle

        def on_receive(kind: str) -> Callable[[CompiledTransition], Handler]:
            in_order = kind in ("hold", "ack_now")

            def factory(transition: CompiledTransition) -> Handler:
                kp, kr = at(transition, "p", "r")

                def handle(sim: Simulator, b: tuple[Any, ...]) -> None:
                    now, p = sim.now, b[kp]
                    counts["received"] += 1
                    if in_order:  # received and delivered: two rows, one call
                        r = b[kr]
                        add((now, recv, p.seq * mss, mss, now, deliver, r.nxt * mss,
                             (advance(p.seq + 1, r.ooo) - r.nxt) * mss))
                    else:
                        add((now, recv, p.seq * mss, mss))
                    if len(rows) >= limit:
                        flush()
                return handle
            return factory

        h = self.handlers
        h[f"{prefix}.snd.open"] = on_open
        h[f"{prefix}.snd.send"] = on_send
        h[f"{prefix}.snd.timeout"] = on_timeout
        h[f"{prefix}.snd.give_up"] = on_give_up
        h[f"{prefix}.snd.sack_retransmit"] = on_sack_retransmit
        for kind in FINE_RETRANSMITS:
            h[f"{prefix}.snd.{kind}"] = on_head_resent
        for kind in ACK_TRANSITIONS:
            h[f"{prefix}.snd.{kind}"] = on_ack(kind)
        for kind in _RECEIVE:
            h[f"{prefix}.rcv.{kind}"] = on_receive(kind)

    # -- queues ---------------------------------------------------------------------------
    def _queue_handlers(self, queue_id: str, prefix: str) -> None:
        counts, flows, marking = self.counts, self.composed.flows, self.sim.marking
        frames = self.sim.compiled.place_index.get(f"{prefix}.frames")
        add_event, events, events_limit, flush_events = self._flow_table()
        event_code = self.flow_rows.code
        queue_rows = self.queue_rows
        add = queue_rows.add if queue_id in self.traced else _ignore
        rows, limit, flush = queue_rows.values, queue_rows.limit, queue_rows.flush
        ids = [f.id for f in flows]
        mss = [f.tcp.segment_size_bytes for f in flows]
        # row codes per flow index
        enqueued, dequeued, dropped, marked = ([queue_rows.code(queue_id, kind, f) for f in ids]
                                               for kind in ("enqueue", "dequeue", "drop", "mark"))
        lost_data, lost_ack, mark_data = ([event_code(f, kind, queue_id) for f in ids]
                                          for kind in ("drop", "ack_drop", "mark"))
        length = [0, 0]  # packets, bytes queued (after each event)

        def lost(now: float, p: Any) -> None:
            f = p.flow
            if p.seq >= 0:
                counts["dropped"] += 1
                add_event((now, lost_data[f], p.seq * mss[f], mss[f]))
            else:
                add_event((now, lost_ack[f], p.ack * mss[f], 0.0))
            if len(events) >= events_limit:
                flush_events()

        def factory(kind: str) -> Callable[[CompiledTransition], Handler]:
            def build(transition: CompiledTransition) -> Handler:
                kp = transition.variables.index("p")
                if kind == "enqueue":
                    def enqueue(sim: Simulator, b: tuple[Any, ...]) -> None:
                        p = b[kp]
                        size = p.size
                        length[0] += 1
                        length[1] += size
                        add((sim.now, enqueued[p.flow], size, length[0], length[1]))
                        if len(rows) >= limit:
                            flush()
                    return enqueue
                if kind == "mark":
                    def mark(sim: Simulator, b: tuple[Any, ...]) -> None:
                        now, p = sim.now, b[kp]
                        f, size = p.flow, p.size
                        if p.seq >= 0:
                            add_event((now, mark_data[f], p.seq * mss[f], mss[f]))
                            if len(events) >= events_limit:
                                flush_events()
                        add((now, marked[f], size, length[0], length[1]))
                        length[0] += 1
                        length[1] += size
                        add((now, enqueued[f], size, length[0], length[1]))
                        if len(rows) >= limit:
                            flush()
                    return mark
                if kind == "drop":
                    def drop(sim: Simulator, b: tuple[Any, ...]) -> None:
                        now, p = sim.now, b[kp]
                        lost(now, p)
                        add((now, dropped[p.flow], p.size, length[0], length[1]))
                        if len(rows) >= limit:
                            flush()
                    return drop
                # the packet is lost where the frames counter's failures grow: at
                # transmit (all attempts drawn at once), or at a radio's finish
                counted = frames if "failed" in transition.variables else None
                kf = transition.variables.index("failed") if counted is not None else -1
                if kind == "finish":
                    def finish(sim: Simulator, b: tuple[Any, ...]) -> None:
                        if counted is not None:
                            ((_sent, failed),) = marking[counted]
                            if failed > b[kf]:
                                lost(sim.now, b[kp])
                    return finish
                direct = kind == "direct"

                def transmit(sim: Simulator, b: tuple[Any, ...]) -> None:
                    now, p = sim.now, b[kp]
                    f, size = p.flow, p.size
                    if direct:  # enqueued and dequeued at once: two rows, one call
                        n, nbytes = length
                        add((now, enqueued[f], size, n + 1, nbytes + size,
                             now, dequeued[f], size, n, nbytes))
                    else:
                        length[0] -= 1
                        length[1] -= size
                        add((now, dequeued[f], size, length[0], length[1]))
                    if len(rows) >= limit:
                        flush()
                    if counted is not None:
                        ((_sent, failed),) = marking[counted]
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
        # the compiled monitor on the native engine (tcpn.lenses.compiled_trace)
        monitor = trace_monitor_class(TraceMonitor)(
            composed, trace, scenario.traced_queues(), cwnd=selection.cwnd,
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
