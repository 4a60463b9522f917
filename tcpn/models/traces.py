"""The trace schema every lens emits, its incremental Parquet writer, and the common result.

Every lens (net, fluid, ns-3) records what happened in the same five columnar tables, and
:mod:`tcpn.models.metrics` computes every metric from them, whichever lens wrote them.

``flows`` (one row per connection): ``flow`` id, ``group``, ``src``, ``dst``, ``variant``,
``start_s``, ``stop_s``, ``bytes`` (``<NA>``: bulk), ``segment_size_bytes``,
``packet_bytes`` (IP size of a full data segment), ``ecn``.

``queues`` (one row per link direction): ``queue`` id ``"A->B"``, ``kind``, ``limit``,
``unit``, ``rate_bps``, ``delay_s``, ``traced`` (whether its events are recorded).

``flow_events`` (one row per event, any order; sorted by time when loaded):

============  ===================================================================
column        meaning
============  ===================================================================
time_s        model time of the event (float64)
flow          connection id (dictionary-encoded string)
event         one of :data:`FLOW_EVENTS` (below)
seq           byte offset of the first payload byte (0 = first data byte); for
              ``ack`` the cumulative ACK number (next byte expected); -1 when the
              lens has no sequence numbers (fluid)
bytes         payload bytes concerned (float64; a fluid lens may aggregate)
count         packets the row stands for (1.0 for packet lenses; a fluid lens may
              emit one row per step for many, or fractional, packets)
where         queue or link direction ``"A->B"`` of a ``drop``/``mark``, else ""
============  ===================================================================

Flow events: ``send`` (a new data segment leaves the sender), ``retransmit`` (a segment
sent again), ``recv`` (a data segment reaches the receiver, duplicates included),
``deliver`` (the receiver releases in-order bytes to the application: ``seq`` = first byte,
``bytes`` = how many), ``ack`` (an ACK reaches the sender; ``bytes`` = newly acknowledged,
0 for a duplicate), ``drop`` (a data segment of the flow is lost: queue overflow, AQM,
policer or link error), ``mark`` (a data segment is CE-marked), ``timeout`` (the RTO fired),
``ack_drop`` (an ACK of the flow is lost; ``seq`` = its ACK number), ``connect_fail``
(the sender gave up opening the connection after its last SYN; ``seq`` -1). ``deliver`` rows are
in order and contiguous: their running sum of ``bytes`` is the flow's delivered data.

``flow_series`` (state variables): ``time_s``, ``flow``, ``var``, ``value``. Standard
``var`` names: ``cwnd_bytes`` and ``ssthresh_bytes`` (a row at each change, and one at the
start), ``rtt_s`` (one row per RTT sample the sender takes). A lens may add its own
(e.g. the fluid lens's ``rate_bps``); metrics ignore unknown names.

``queue_events``: ``time_s``, ``queue``, ``event`` (one of :data:`QUEUE_EVENTS`), ``flow``
("" when unknown), ``bytes``, ``count`` and the queue length *after* the event,
``length_packets`` and ``length_bytes``. ``enqueue``/``dequeue`` change the length,
``drop`` (arrival or AQM drop) and ``mark`` (a CE mark; the ``enqueue`` row follows) do not,
``sample`` only reports the length (fluid lenses, periodic sampling). Lengths are a step
function between rows: the time-weighted statistics rely on it.

The result of one run is a :class:`ScenarioResult`; ``save`` writes a directory
(``result.json`` + one Parquet file per table) under a temporary name and renames it when
complete, so a directory that has a ``result.json`` is always a whole result.

>>> from tcpn.models.scenario import dumbbell
>>> s = dumbbell(pairs=1, horizon_s=1.0)
>>> w = TraceWriter(s, s.concrete_flows(1))
>>> w.flow_event(0.0, "f0", "send", seq=0, bytes=536)
>>> w.flow_event(0.03, "f0", "deliver", seq=0, bytes=536)
>>> w.queue_event(0.001, "R1->R2", "enqueue", length_packets=1, length_bytes=578)
>>> trace = w.close()
>>> trace.flow_events[["time_s", "event", "bytes"]].values.tolist()
[[0.0, 'send', 536.0], [0.03, 'deliver', 536.0]]
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tcpn import __version__
from tcpn.errors import InputError, TcpnError
from tcpn.models.scenario import ConcreteFlow, Scenario, TraceSelection, parse_scenario
from tcpn.outputs import atomic_directory, json_ready
from tcpn.source import source_id

__all__ = [
    "AGGREGATE_METRICS", "FLOW_EVENTS", "FLOW_VARS", "QUEUE_EVENTS", "TABLES",
    "ScenarioResult", "Trace", "TraceError", "TraceWriter", "atomic_directory", "encoded",
    "provenance", "untraced_by",
]

FLOW_EVENTS = ("send", "retransmit", "recv", "deliver", "ack", "drop", "mark", "timeout",
               "ack_drop", "connect_fail")
"""The ``event`` values of ``flow_events``."""
QUEUE_EVENTS = ("enqueue", "dequeue", "drop", "mark", "sample")
"""The ``event`` values of ``queue_events``."""
FLOW_VARS = ("cwnd_bytes", "ssthresh_bytes", "rtt_s")
"""The standard ``var`` names of ``flow_series`` (lenses may add others)."""
AGGREGATE_METRICS = ("goodput_bps", "throughput_bps", "jain_index", "loss_ratio",
                     "retransmission_ratio", "mark_ratio")
"""The metrics of a summary's ``aggregate`` (:func:`tcpn.models.metrics.summarize`;
what ``tcpn sweep --metric`` can show)."""

_DICT = pa.dictionary(pa.int32(), pa.string())
SCHEMAS: dict[str, pa.Schema] = {
    "flow_events": pa.schema([("time_s", pa.float64()), ("flow", _DICT), ("event", _DICT),
                              ("seq", pa.int64()), ("bytes", pa.float64()),
                              ("count", pa.float64()), ("where", _DICT)]),
    "flow_series": pa.schema([("time_s", pa.float64()), ("flow", _DICT), ("var", _DICT),
                              ("value", pa.float64())]),
    "queue_events": pa.schema([("time_s", pa.float64()), ("queue", _DICT), ("event", _DICT),
                               ("flow", _DICT), ("bytes", pa.float64()), ("count", pa.float64()),
                               ("length_packets", pa.float64()),
                               ("length_bytes", pa.float64())]),
}
"""Arrow schema of each event table (strings are dictionary-encoded)."""
TABLES = ("flows", "queues", *SCHEMAS)
"""The five tables of a trace, each a Parquet file ``NAME.parquet`` in a result."""

_DEFAULTS: dict[str, dict[str, Any]] = {
    "flow_events": {"seq": -1, "bytes": 0.0, "count": 1.0, "where": ""},
    "flow_series": {},
    "queue_events": {"flow": "", "bytes": 0.0, "count": 1.0},
}
_EVENT_VALUES = {"flow_events": ("event", FLOW_EVENTS), "queue_events": ("event", QUEUE_EVENTS)}


class TraceError(TcpnError):
    """A lens wrote something the trace schema does not allow (a bug in that lens)."""


# --------------------------------------------------------------------------- Trace


class Trace:
    """The five tables of one run (see the module docstring) and its time frame.

    ``warmup_s`` and ``bin_s`` come from the scenario's ``measure`` section: metrics use
    the window ``[warmup_s, horizon_s]`` unless told otherwise. ``untraced`` names what
    the scenario's ``trace`` selection left out, with why (:func:`untraced_by`): the
    metrics computed from it are absent, never 0. A trace made by :meth:`load` reads each
    table from its Parquet file when first used, so a run that streamed its trace to disk
    never holds it in memory unless asked for it.
    """

    def __init__(self, flows: pd.DataFrame, queues: pd.DataFrame,
                 flow_events: pd.DataFrame, flow_series: pd.DataFrame,
                 queue_events: pd.DataFrame, horizon_s: float, warmup_s: float = 0.0,
                 bin_s: float = 1.0, untraced: Mapping[str, str] | None = None):
        self.horizon_s, self.warmup_s, self.bin_s = horizon_s, warmup_s, bin_s
        self.untraced = dict(untraced or {})
        self.directory: Path | None = None
        self._tables: dict[str, pd.DataFrame] = {"flows": flows, "queues": queues}
        for name, frame in (("flow_events", flow_events), ("flow_series", flow_series),
                            ("queue_events", queue_events)):
            self._tables[name] = _by_time(frame)

    def _table(self, name: str) -> pd.DataFrame:
        frame = self._tables.get(name)
        if frame is None:
            assert self.directory is not None
            path = self.directory / f"{name}.parquet"
            try:
                frame = pd.read_parquet(path)
            except (OSError, pa.ArrowException) as exc:
                raise InputError(f"{path}: cannot read the {name} table of the trace: "
                                 f"{exc}") from None
            self._tables[name] = frame = _by_time(frame) if name in SCHEMAS else frame
        return frame

    @property
    def flows(self) -> pd.DataFrame:
        """The ``flows`` table."""
        return self._table("flows")

    @property
    def queues(self) -> pd.DataFrame:
        """The ``queues`` table."""
        return self._table("queues")

    @property
    def flow_events(self) -> pd.DataFrame:
        """The ``flow_events`` table, sorted by time."""
        return self._table("flow_events")

    @property
    def flow_series(self) -> pd.DataFrame:
        """The ``flow_series`` table, sorted by time."""
        return self._table("flow_series")

    @property
    def queue_events(self) -> pd.DataFrame:
        """The ``queue_events`` table, sorted by time."""
        return self._table("queue_events")

    def in_memory(self) -> Trace:
        """This trace with every table read (it no longer needs its directory)."""
        for name in TABLES:
            self._table(name)
        self.directory = None
        return self

    def moved(self, directory: Path) -> None:
        """The files of a trace read from disk are now in ``directory`` (renamed)."""
        if self.directory is not None:
            self.directory = directory

    @property
    def flow_ids(self) -> list[str]:
        """Connection ids in scenario order."""
        return [str(f) for f in self.flows["flow"]]

    @property
    def queue_ids(self) -> list[str]:
        """Queue ids in scenario order."""
        return [str(q) for q in self.queues["queue"]]

    def events(self, flow: str | None = None, event: str | Iterable[str] | None = None,
               ) -> pd.DataFrame:
        """Rows of ``flow_events`` for one flow and/or event kind(s)."""
        return _select(self.flow_events, "flow", flow, event)

    def series(self, var: str, flow: str | None = None) -> pd.DataFrame:
        """Rows of ``flow_series`` for ``var`` (and one flow)."""
        frame = self.flow_series
        mask = frame["var"] == var
        if flow is not None:
            mask &= frame["flow"] == flow
        return frame[mask]

    def queue(self, queue: str | None = None, event: str | Iterable[str] | None = None,
              ) -> pd.DataFrame:
        """Rows of ``queue_events`` for one queue and/or event kind(s)."""
        return _select(self.queue_events, "queue", queue, event)

    def segment_size_bytes(self, flow: str) -> int:
        """The flow's segment (payload) size."""
        return int(self.flows.set_index("flow").loc[flow, "segment_size_bytes"])

    def save(self, directory: Path) -> None:
        """Write the five tables as Parquet files into an existing ``directory`` (a trace
        read from disk and not loaded: its files are copied, never held in memory)."""
        for name in TABLES:
            if name not in self._tables and self.directory is not None:
                shutil.copyfile(self.directory / f"{name}.parquet",
                                directory / f"{name}.parquet")
            elif name in SCHEMAS:
                table = pa.Table.from_pandas(self._table(name), schema=SCHEMAS[name],
                                             preserve_index=False)
                pq.write_table(table, directory / f"{name}.parquet")
            else:
                self._table(name).to_parquet(directory / f"{name}.parquet", index=False)

    @classmethod
    def load(cls, directory: Path, horizon_s: float, warmup_s: float = 0.0,
             bin_s: float = 1.0, untraced: Mapping[str, str] | None = None) -> Trace:
        """The trace whose tables :meth:`save` or :class:`TraceWriter` wrote into
        ``directory`` (each read when first used)."""
        trace = cls.__new__(cls)
        trace.horizon_s, trace.warmup_s, trace.bin_s = horizon_s, warmup_s, bin_s
        trace.untraced = dict(untraced or {})
        trace.directory = Path(directory)
        trace._tables = {}
        return trace


def _by_time(frame: pd.DataFrame) -> pd.DataFrame:
    if frame["time_s"].is_monotonic_increasing:
        return frame
    return frame.sort_values("time_s", kind="stable", ignore_index=True)


def untraced_by(selection: TraceSelection) -> dict[str, str]:
    """What a scenario's ``trace`` selection leaves out of every lens's trace, with why.

    >>> from tcpn.models.scenario import TraceSelection
    >>> untraced_by(TraceSelection(flow_events=False, rtt=False))
    {'flow_events': 'trace.flow_events is off', 'rtt': 'trace.rtt is off'}
    """
    return {name: f"trace.{name} is off" for name in ("flow_events", "cwnd", "rtt")
            if not getattr(selection, name)}


def _select(frame: pd.DataFrame, key: str, value: str | None,
            event: str | Iterable[str] | None) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    if value is not None:
        mask &= (frame[key] == value).to_numpy()
    if event is not None:
        kinds = [event] if isinstance(event, str) else list(event)
        mask &= frame["event"].isin(kinds).to_numpy()
    return frame[mask]


def flows_table(flows: Sequence[ConcreteFlow]) -> pd.DataFrame:
    """The ``flows`` table of a run from its concrete flows."""
    return pd.DataFrame({
        "flow": [f.id for f in flows], "group": [f.group for f in flows],
        "src": [f.src for f in flows], "dst": [f.dst for f in flows],
        "variant": [f.variant for f in flows],
        "start_s": np.array([f.start_s for f in flows], dtype=float),
        "stop_s": np.array([f.stop_s for f in flows], dtype=float),
        "bytes": pd.array([f.bytes for f in flows], dtype="Int64"),
        "segment_size_bytes": np.array([f.tcp.segment_size_bytes for f in flows], dtype=int),
        "packet_bytes": np.array([f.tcp.data_packet_bytes for f in flows], dtype=int),
        "ecn": np.array([f.ecn for f in flows], dtype=bool),
    })


def queues_table(scenario: Scenario) -> pd.DataFrame:
    """The ``queues`` table of a scenario."""
    traced = set(scenario.traced_queues())
    rows = []
    for link in scenario.links:
        for a, b, direction in link.directions():
            q = direction.queue
            rows.append({"queue": f"{a}->{b}", "kind": q.kind, "limit": q.limit,
                         "unit": q.unit, "rate_bps": link.rate_bps, "delay_s": link.delay_s,
                         "traced": f"{a}->{b}" in traced})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- writer


class TraceWriter:
    """Collects a run's events column by column; with a ``directory``, flushes them to
    Parquet every ``chunk_rows`` rows so long runs keep memory flat.

    Row-at-a-time calls (``flow_event``, ``flow_value``, ``queue_event``) suit lenses that
    produce events one by one; :meth:`extend` takes whole arrays (e.g. from ns-3's C++
    recorders). Flow, queue and event names are checked at each flush: a wrong one is a
    :class:`TraceError` naming it. Each chunk (an Arrow table) also goes to the functions
    given to :meth:`observe`, in the order written (how the metrics follow a run without
    the trace in memory). :meth:`close` returns the :class:`Trace`: with a ``directory``,
    one that reads its tables from there when first used.

    With the scenario's ``trace.flow_events`` off, flow events are not kept, whichever
    lens writes them: every lens's trace then lacks the same thing (``Trace.untraced``).
    """

    def __init__(self, scenario: Scenario, flows: Sequence[ConcreteFlow],
                 directory: Path | None = None, chunk_rows: int = 1 << 16):
        self.scenario = scenario
        self.flows = flows_table(flows)
        self.queues = queues_table(scenario)
        self.directory = directory
        self.chunk_rows = chunk_rows
        self.untraced = untraced_by(scenario.trace)
        self._keeps_flow_events = "flow_events" not in self.untraced
        self._known = {"flow": set(self.flows["flow"]) | {""},
                       "queue": set(self.queues["queue"]),
                       "where": set(self.queues["queue"]) | {""}}
        # one list per column: measured cheaper than a tuple per row transposed at flush
        self._columns: dict[str, dict[str, list[Any]]] = {
            name: {col: [] for col in schema.names} for name, schema in SCHEMAS.items()}
        self._chunks: dict[str, list[pa.Table]] = {name: [] for name in SCHEMAS}
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._observers: list[Callable[[str, pa.Table], None]] = []
        self._closed = False
        self._fe, self._fs, self._qe = (
            tuple(self._columns[name][col] for col in schema.names)
            for name, schema in SCHEMAS.items())

    def observe(self, observer: Callable[[str, pa.Table], None]) -> None:
        """Call ``observer(table, chunk)`` with every chunk written from now on."""
        self._observers.append(observer)

    def flow_event(self, time_s: float, flow: str, event: str, seq: int = -1,
                   bytes: float = 0.0, count: float = 1.0, where: str = "") -> None:
        """Record one ``flow_events`` row."""
        if not self._keeps_flow_events:
            return
        t, f, e, s, b, c, w = self._fe
        t.append(time_s)
        f.append(flow)
        e.append(event)
        s.append(seq)
        b.append(bytes)
        c.append(count)
        w.append(where)
        if len(t) >= self.chunk_rows:
            self._flush("flow_events")

    def flow_value(self, time_s: float, flow: str, var: str, value: float) -> None:
        """Record one ``flow_series`` row (``var`` e.g. ``"cwnd_bytes"``)."""
        t, f, v, x = self._fs
        t.append(time_s)
        f.append(flow)
        v.append(var)
        x.append(value)
        if len(t) >= self.chunk_rows:
            self._flush("flow_series")

    def queue_event(self, time_s: float, queue: str, event: str, length_packets: float,
                    length_bytes: float, flow: str = "", bytes: float = 0.0,
                    count: float = 1.0) -> None:
        """Record one ``queue_events`` row (lengths are those after the event)."""
        t, q, e, f, b, c, lp, lb = self._qe
        t.append(time_s)
        q.append(queue)
        e.append(event)
        f.append(flow)
        b.append(bytes)
        c.append(count)
        lp.append(length_packets)
        lb.append(length_bytes)
        if len(t) >= self.chunk_rows:
            self._flush("queue_events")

    def extend(self, table: str, **columns: Any) -> None:
        """Append many rows at once: arrays of equal length, or scalars repeated.

        NumPy and Arrow arrays are taken as they are (a dictionary-encoded string column,
        see :func:`encoded`, is not decoded); other sequences are read as lists. An
        integer column given floats must hold whole numbers below 2**53 (exact in both).

        >>> from tcpn.models.scenario import dumbbell
        >>> s = dumbbell(pairs=1, horizon_s=1.0)
        >>> w = TraceWriter(s, s.concrete_flows(1))
        >>> w.extend("flow_series", time_s=[0.0, 0.5], flow="f0", var="cwnd_bytes",
        ...          value=[5360.0, 10720.0])
        >>> w.close().series("cwnd_bytes")["value"].tolist()
        [5360.0, 10720.0]
        """
        if table not in SCHEMAS:
            raise TraceError(f"no trace table {table!r}; tables: {', '.join(SCHEMAS)}")
        if table == "flow_events" and not self._keeps_flow_events:
            return
        self._flush(table)
        schema = SCHEMAS[table]
        unknown = set(columns) - set(schema.names)
        if unknown:
            raise TraceError(f"{table}: no column {sorted(unknown)[0]!r}; columns: "
                             f"{', '.join(schema.names)}")
        n = max((len(v) for v in columns.values() if _is_array(v)), default=1)
        data: dict[str, Any] = {}
        for col in schema.names:
            if col in columns:
                value = columns[col]
            elif col in _DEFAULTS[table]:
                value = _DEFAULTS[table][col]
            else:
                raise TraceError(f"{table}: column {col!r} is required")
            data[col] = (value if isinstance(value, np.ndarray | pa.Array) else list(value)
                         ) if _is_array(value) else [value] * n
            if len(data[col]) != n:
                raise TraceError(f"{table}: column {col!r} has {len(data[col])} values, "
                                 f"expected {n}")
        self._store(table, data)

    def _flush(self, table: str) -> None:
        columns = self._columns[table]
        if not columns["time_s"]:
            return
        data = {col: list(values) for col, values in columns.items()}
        for values in columns.values():
            values.clear()
        self._store(table, data)

    def _store(self, table: str, data: Mapping[str, Sequence[Any]]) -> None:
        self._check(table, data)
        schema = SCHEMAS[table]
        arrays = []
        for col in schema.names:
            kind = schema.field(col).type
            given = data[col]
            if kind == _DICT:
                arrays.append(given if isinstance(given, pa.DictionaryArray) and given.type == kind
                              else pa.array(given, type=pa.string()).dictionary_encode())
            else:  # through NumPy: pa.array(list, type=float64) is ~40x slower
                arrays.append(pa.array(_numbers(table, col, given, kind.to_pandas_dtype())))
        if not np.isfinite(arrays[0].to_numpy()).all():
            raise TraceError(f"{table}: non-finite time_s")
        chunk = pa.Table.from_arrays(arrays, schema=schema)
        for observer in self._observers:
            observer(table, chunk)
        if self.directory is None:
            self._chunks[table].append(chunk)
            return
        writer = self._writers.get(table)
        if writer is None:
            writer = pq.ParquetWriter(self.directory / f"{table}.parquet", schema)
            self._writers[table] = writer
        writer.write_table(chunk)

    def _check(self, table: str, data: Mapping[str, Sequence[Any]]) -> None:
        if table in _EVENT_VALUES:
            col, allowed = _EVENT_VALUES[table]
            bad = _names(data[col]) - set(allowed)
            if bad:
                raise TraceError(f"{table}: unknown event {sorted(map(str, bad))[0]!r}; "
                                 f"events: {', '.join(allowed)}")
        for col in ("flow", "queue", "where"):
            if col in data:
                bad = _names(data[col]) - self._known[col]
                if bad:
                    raise TraceError(f"{table}: unknown {col} {sorted(map(str, bad))[0]!r}")

    def close(self) -> Trace:
        """Flush everything and return the :class:`Trace` (with a ``directory``, one that
        reads its files when first used: :meth:`Trace.load`)."""
        if self._closed:
            raise TraceError("the trace writer is already closed")
        for table in SCHEMAS:
            self._flush(table)
        self._closed = True
        measure = self.scenario.measure
        if self.directory is not None:
            for table, schema in SCHEMAS.items():
                if table in self._writers:
                    self._writers[table].close()
                else:
                    pq.write_table(schema.empty_table(), self.directory / f"{table}.parquet")
            self.flows.to_parquet(self.directory / "flows.parquet", index=False)
            self.queues.to_parquet(self.directory / "queues.parquet", index=False)
            return Trace.load(self.directory, self.scenario.horizon_s, measure.warmup_s,
                              measure.bin_s, self.untraced)
        frames = {table: (pa.concat_tables(chunks) if chunks else SCHEMAS[table].empty_table())
                  .to_pandas() for table, chunks in self._chunks.items()}
        return Trace(flows=self.flows, queues=self.queues, horizon_s=self.scenario.horizon_s,
                     warmup_s=measure.warmup_s, bin_s=measure.bin_s, untraced=self.untraced,
                     **frames)

    def abort(self) -> None:
        """Close the Parquet files of a failed run (the caller discards the directory)."""
        for writer in self._writers.values():
            writer.close()
        self._closed = True


def _is_array(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray | pd.Series | pa.Array)


def _names(values: Any) -> set[Any]:
    """The distinct values of a string column (of a dictionary column: its dictionary)."""
    if isinstance(values, pa.DictionaryArray):
        return set(values.dictionary.to_pylist())
    return set(values.to_pylist() if isinstance(values, pa.Array) else values)


def _numbers(table: str, col: str, values: Any, dtype: Any) -> np.ndarray:
    """Column ``col``'s values as a NumPy array of ``dtype``; floats given for an integer
    column must be whole and below 2**53 (NumPy's cast would truncate silently)."""
    if isinstance(values, pa.Array):
        values = values.to_numpy(zero_copy_only=False)
    try:
        array = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TraceError(f"{table}: column {col!r}: {exc}") from None
    if (isinstance(values, np.ndarray) and values.dtype.kind == "f"
            and array.dtype.kind in "iu"
            and not (np.array_equal(array, values) and (np.abs(values) < 2.0**53).all())):
        raise TraceError(f"{table}: column {col!r}: values that are not whole numbers "
                         "below 2**53 for an integer column")
    return array


def encoded(names: Sequence[str], codes: np.ndarray) -> pa.DictionaryArray:
    """The string column whose row ``k`` is ``names[codes[k]]``, dictionary-encoded exactly
    as ``pa.array(strings).dictionary_encode()`` encodes it (the dictionary in the order of
    first appearance, int32 indices), without building a string per row.

    >>> encoded(["a", "b", "a", "c"], np.array([3, 2, 0, 1, 3])).to_pylist()
    ['c', 'a', 'a', 'b', 'c']
    >>> encoded(["a", "b", "a", "c"], np.array([3, 2, 0, 1, 3])).dictionary.to_pylist()
    ['c', 'a', 'b']
    """
    distinct: dict[str, int] = {}
    string_of = np.array([distinct.setdefault(name, len(distinct)) for name in names],
                         dtype=np.intp)
    strings = list(distinct)
    ids = string_of[codes]
    present, first = np.unique(ids, return_index=True)
    order = present[np.argsort(first)]
    index = np.empty(len(strings), dtype=np.int32)
    index[order] = np.arange(len(order), dtype=np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(index[ids], type=pa.int32()),
                                          pa.array([strings[i] for i in order], type=pa.string()))


# --------------------------------------------------------------------------- result


@dataclass
class ScenarioResult:
    """What one lens produced for one run of one scenario.

    ``seed`` records the run's :class:`numpy.random.SeedSequence` (``entropy`` and
    ``spawn_key``) and its ``replication`` index; ``summary`` holds the metrics computed by
    :func:`tcpn.models.metrics.summarize` (``flows``, ``queues``, ``aggregate``);
    ``provenance`` holds tcpn/Python versions and what the lens adds (ns-3 version,
    solver settings...).
    """

    scenario: Scenario
    lens: str
    seed: dict[str, Any]
    wall_time_s: float
    trace: Trace
    summary: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def scenario_name(self) -> str:
        """The scenario's name."""
        return self.scenario.name

    @property
    def scenario_hash(self) -> str:
        """The scenario's content hash (:meth:`Scenario.content_hash`)."""
        return self.scenario.content_hash()

    def flow_summary(self) -> pd.DataFrame:
        """Per-flow summary metrics, one row per flow."""
        return pd.DataFrame.from_dict(self.summary.get("flows", {}), orient="index")

    def queue_summary(self) -> pd.DataFrame:
        """Per-queue summary metrics, one row per traced queue."""
        return pd.DataFrame.from_dict(self.summary.get("queues", {}), orient="index")

    def _repr_html_(self) -> str:
        import html

        head = html.escape(f"{self.scenario_name} ({self.lens} lens, replication "
                           f"{self.seed.get('replication', 0)}): {self.trace.horizon_s:g} s "
                           f"model time in {self.wall_time_s:.2f} s")
        flows = self.flow_summary().to_html(float_format=lambda v: f"{v:.4g}")
        return f"<p><strong>{head}</strong></p>{flows}"

    def to_json(self) -> dict[str, Any]:
        """Everything but the event tables, as JSON-ready data."""
        return json_ready({
            "format": "tcpn-result/1",
            "scenario_name": self.scenario_name, "scenario_hash": self.scenario_hash,
            "lens": self.lens, "seed": self.seed, "wall_time_s": self.wall_time_s,
            "summary": self.summary, "provenance": self.provenance,
            "measure": {"horizon_s": self.trace.horizon_s, "warmup_s": self.trace.warmup_s,
                        "bin_s": self.trace.bin_s},
            "scenario": self.scenario.to_yaml(),
        })

    def save(self, directory: str | Path, overwrite: bool = False) -> Path:
        """Write ``result.json`` and the tables into ``directory`` atomically.

        The files go to a temporary sibling first, which is renamed when complete; an
        existing tcpn output in ``directory`` is replaced only with ``overwrite``
        (:func:`tcpn.outputs.atomic_directory`).
        """
        directory = Path(directory)
        with atomic_directory(directory, overwrite) as tmp:
            self.trace.save(tmp)
            self.write_json(tmp)
        return directory

    def write_json(self, directory: Path) -> None:
        """Write ``result.json`` (the tables are already in ``directory``)."""
        (directory / "result.json").write_text(json.dumps(self.to_json(), indent=1,
                                                          allow_nan=False))

    @classmethod
    def load(cls, directory: str | Path) -> ScenarioResult:
        """Read a result that :meth:`save` wrote."""
        directory = Path(directory)
        try:
            meta = json.loads((directory / "result.json").read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"{directory} holds no complete tcpn result: {exc}") from None
        if meta.get("format") != "tcpn-result/1":
            raise InputError(f"{directory}/result.json: unknown format {meta.get('format')!r}")
        scenario = parse_scenario(meta["scenario"], str(directory / "result.json"))
        measure = meta["measure"]
        trace = Trace.load(directory, measure["horizon_s"], measure["warmup_s"],
                           measure["bin_s"], untraced_by(scenario.trace))
        return cls(scenario=scenario, lens=meta["lens"], seed=meta["seed"],
                   wall_time_s=meta["wall_time_s"], trace=trace, summary=meta["summary"],
                   provenance=meta["provenance"])


def provenance(**extra: Any) -> dict[str, Any]:
    """tcpn's version and source digest, Python's version, plus ``extra`` (what a lens
    wants to record)."""
    return {"tcpn_version": __version__, "tcpn_source": source_id(),
            "python": platform.python_version(), **extra}
