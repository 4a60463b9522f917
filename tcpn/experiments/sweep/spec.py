"""Sweep files: a base scenario, axes over its field paths, lenses and replications, as data.

A sweep is either a file of its own whose ``sweep:`` section names a ``base`` scenario
file, or a scenario file with a ``sweep:`` section (the rest of the file is the base)::

    sweep:
      axes:                                   # a grid: every combination, first axis slowest
        links[0].ab.queue.limit: [3, 10, 50]
        links[0].delay_s: {low: 0.001, high: 0.1, points: 3, scale: log}
      zip:                                    # paths that vary together: one more grid axis
        - flows[0].variant: [vegas, adaptive_vegas]
          flows[0].params: [{alpha: 1}, {alpha: 1, weight: 0.25}]
      sample: {method: sobol, points: 8, seed: 3,   # random, sobol or latin points
               ranges: {tcp.min_rto_s: {low: 0.2, high: 1.0}}}
      lenses: [net, {name: fluid, options: {max_step_s: 0.01}}]
      replications: 3
      seed: 1                                 # default: the base scenario's

An axis path is the scenario's own field path (``flows[1].tcp.sack``); a link-level
``queue`` or ``errors`` sets both directions, as in a scenario file. Paths are checked
against the scenario schema and the base when the file is read: a bad one is an error
naming the file, the line and the axis. A value that makes an invalid scenario is not: that
cell carries its error (:attr:`Cell.error`) and the other cells still run.

>>> sweep = parse_sweep('''
... links: [{a: A, b: B, rate_bps: 1.0e6, delay_s: 0.01, queue: {kind: drop_tail}}]
... flows: [{src: A, dst: B, variant: reno}]
... horizon_s: 1
... sweep:
...   axes:
...     links[0].queue.limit: [2, 0, 50]
... ''', "q.yaml")
>>> [(c.params, c.error is None) for c in sweep.cells()]
[({'links[0].queue.limit': 2}, True), ({'links[0].queue.limit': 0}, False), \
({'links[0].queue.limit': 50}, True)]
>>> print(sweep.cells()[1].error)
q.yaml:7: cell 1 (links[0].queue.limit=0): links[0].ab.queue.limit: Input should be \
greater than 0
q.yaml:7: cell 1 (links[0].queue.limit=0): links[0].ba.queue.limit: Input should be \
greater than 0
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
import types
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import numpy as np
import yaml
from pydantic import BaseModel

from tcpn.lenses.replications import MAX_RUNS
from tcpn.limits import read_input
from tcpn.models.fields import PathPart, parse_path, path_text, set_field
from tcpn.models.scenario import (
    Link,
    LinkDirection,
    Scenario,
    ScenarioError,
    load_scenario,
    read_yaml,
    validate_scenario,
)

__all__ = ["MAX_CELLS", "MAX_RUNS", "Axis", "Cell", "LensSpec", "Sweep", "SweepError", "load_sweep",
           "parse_sweep"]

#: Largest number of cells a sweep may expand to (a guard against a typo's 10**9 grid).
MAX_CELLS = 100_000
_SECTION_KEYS = ("name", "description", "base", "axes", "zip", "sample", "lenses",
                 "replications", "seed")


class SweepError(ScenarioError):
    """A sweep file is invalid; ``problems`` lists ``(file:line: where, message)`` pairs."""


# --------------------------------------------------------------------------- schema walk


def _alternatives(annotation: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in get_args(annotation) for t in _alternatives(arg)]
    return [annotation]


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _fields(kind: type[BaseModel]) -> dict[str, Any]:
    found = {name: info.annotation for name, info in kind.model_fields.items()}
    if kind is Link:  # the link-level shorthand for both directions
        found.update(queue=LinkDirection.model_fields["queue"].annotation,
                     errors=LinkDirection.model_fields["errors"].annotation)
    return found


def _names_a_scenario(base: str) -> bool:
    """Whether a sweep's ``base`` names a scenario file by its suffix (.yaml, .yml)."""
    return base.lower().endswith((".yaml", ".yml"))


def check_path(path: Sequence[PathPart], base: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` if ``path`` names no field of a scenario, or a list entry the
    base does not have."""
    kinds: list[Any] = [Scenario]
    data: Any = base
    for i, part in enumerate(path):
        here = path_text(path[:i]) or "the scenario"
        if isinstance(part, int):
            lists = [k for k in kinds if get_origin(k) is list]
            if not lists:
                raise ValueError(f"{here} is not a list: [{part}] indexes nothing")
            length = len(data) if isinstance(data, list) else 0
            if part >= length:
                raise ValueError(f"{here} has {length} entries (indices 0..{length - 1}): "
                                 f"no [{part}]")
            kinds = [t for k in lists for t in _alternatives(get_args(k)[0])]
            data = data[part]
            continue
        models = [k for k in kinds if _is_model(k)]
        if not models:
            shown = ", ".join(sorted({getattr(k, "__name__", str(k)) for k in kinds}))
            raise ValueError(f"{here} is a value ({shown}), not a section: it has no "
                             f"field {part!r}")
        annotations = [_fields(m).get(part) for m in models]
        if all(a is None for a in annotations):
            names = sorted({n for m in models for n in _fields(m)})
            raise ValueError(f"{here} has no field {part!r}; its fields: {', '.join(names)}")
        kinds = [t for a in annotations if a is not None for t in _alternatives(a)]
        data = data.get(part) if isinstance(data, Mapping) else None


def _targets(path: tuple[PathPart, ...]) -> list[tuple[PathPart, ...]]:
    """The concrete paths ``path`` sets: a link-level ``queue``/``errors`` is both
    directions' (the base's shorthand is expanded before any axis applies)."""
    if len(path) >= 3 and path[0] == "links" and path[2] in ("queue", "errors"):
        return [(*path[:2], side, *path[2:]) for side in ("ab", "ba")]
    return [path]


def _expand_shorthand(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of raw scenario data with each link's ``queue``/``errors`` moved into
    ``ab`` and ``ba`` (what :class:`~tcpn.models.scenario.Link` does when validating)."""
    data = copy.deepcopy(data)
    for link in data.get("links") or []:
        if not isinstance(link, dict):
            continue
        shared = {k: link.pop(k) for k in ("queue", "errors") if k in link}
        for side in ("ab", "ba") if shared else ():
            found = link.get(side)
            direction: dict[str, Any] = found if isinstance(found, dict) else {}
            for key, value in shared.items():
                direction.setdefault(key, copy.deepcopy(value))
            link[side] = direction
    return data


# --------------------------------------------------------------------------- YAML


def _read_yaml(text: str, source: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """Data and the line of every key (``(key, key...)`` -> line), with every check a
    scenario file's YAML gets (:func:`tcpn.models.scenario.read_yaml`: keys given twice,
    alias bombs, nesting, control characters)."""
    try:
        data, node = read_yaml(text, source)
    except ScenarioError as exc:
        raise SweepError(exc.problems) from None
    marks: dict[tuple[Any, ...], int] = {}
    _marks(node, (), marks)
    return data, marks


def _marks(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                out[(*path, key.value)] = key.start_mark.line + 1
                _marks(value, (*path, key.value), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _marks(item, (*path, i), out)


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class LensSpec:
    """A cell's evaluation: a lens (or any registered evaluation) and its options."""

    name: str
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        """``name``, or ``name{options}`` when it has options (a column of the results)."""
        if not self.options:
            return self.name
        return f"{self.name}{json.dumps(dict(self.options), sort_keys=True)}"


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: ``paths`` that take ``points[k]`` together.

    A plain axis has one path; a ``zip`` group and a ``sample`` have several.
    """

    paths: tuple[str, ...]
    points: tuple[tuple[Any, ...], ...]
    line: int | None
    kind: Literal["grid", "zip", "sample"] = "grid"


@dataclass(frozen=True)
class Cell:
    """One point of the sweep: its parameter values and its scenario, or why it has none."""

    index: int
    params: dict[str, Any]
    scenario: Scenario | None
    error: str | None = None


@dataclass
class Sweep:
    """A parsed sweep: the base scenario data, the axes, the lenses and the replications."""

    name: str
    source: str
    base: dict[str, Any]
    axes: list[Axis]
    lenses: list[LensSpec]
    replications: int = 1
    description: str = ""
    _lines: dict[str, int] = field(default_factory=dict, repr=False)
    _cells: list[Cell] | None = field(default=None, repr=False, compare=False)

    @property
    def parameters(self) -> list[str]:
        """Every swept path, in axis order: the parameter columns of the results."""
        return [p for axis in self.axes for p in axis.paths]

    @property
    def is_grid(self) -> bool:
        """True when every axis is a plain axis (the results form a full array)."""
        return all(axis.kind == "grid" for axis in self.axes)

    @property
    def size(self) -> int:
        """Number of cells."""
        return math.prod(len(axis.points) for axis in self.axes)

    def cells(self) -> list[Cell]:
        """Every cell, in grid order (the first axis varies slowest); built once."""
        if self._cells is None:
            self._cells = self._build_cells()
        return self._cells

    def _build_cells(self) -> list[Cell]:
        out = []
        for index, combo in enumerate(itertools.product(*(a.points for a in self.axes))):
            params: dict[str, Any] = {}
            data = copy.deepcopy(self.base)
            for axis, point in zip(self.axes, combo, strict=True):
                for path, value in zip(axis.paths, point, strict=True):
                    params[path] = value
                    parsed = parse_path(path)
                    for target in _targets(parsed):
                        set_field(data, target, value, create=True)
            data["name"] = f"{self.name}[{index}]"
            try:
                scenario = validate_scenario(data)
            except ScenarioError as exc:
                out.append(Cell(index, params, None, self._cell_error(index, params, exc)))
                continue
            out.append(Cell(index, params, scenario))
        return out

    def _cell_error(self, index: int, params: dict[str, Any], exc: ScenarioError) -> str:
        shown = ", ".join(f"{p}={_short(v)}" for p, v in params.items())
        lines = []
        for where, message in exc.problems:
            line = next((self._lines[p] for p in params if _covers(p, where)),
                        min(self._lines.values(), default=None))
            prefix = f"{self.source}:{line}" if line is not None else self.source
            lines.append(f"{prefix}: cell {index} ({shown}): {where}: {message}")
        return "\n".join(lines)


def _covers(axis_path: str, where: str) -> bool:
    try:
        axis, problem = parse_path(axis_path), parse_path(where)
    except ValueError:
        return False
    return any(problem[:len(t)] == t or t[:len(problem)] == problem
               for t in _targets(axis))


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 40 else text[:37] + "..."


# --------------------------------------------------------------------------- parsing


class _Problems:
    def __init__(self, source: str, marks: Mapping[tuple[Any, ...], int]):
        self.source, self.marks = source, marks
        self.found: list[tuple[str, str]] = []

    def add(self, key: tuple[Any, ...], message: str) -> None:
        line = None
        for depth in range(len(key), -1, -1):
            line = self.marks.get(key[:depth])
            if line is not None:
                break
        where = "sweep" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in key[1:])
        self.found.append((f"{self.source}:{line}: {where}" if line else
                           f"{self.source}: {where}", message))


def parse_sweep(text: str, source: str = "<sweep>", directory: Path | None = None) -> Sweep:
    """A :class:`Sweep` from YAML ``text``; errors name ``source``, the line and the axis.

    ``directory`` resolves a relative ``base`` (default: the current directory).
    """
    data, marks = _read_yaml(text, source)
    if not isinstance(data, dict) or not isinstance(data.get("sweep"), dict):
        raise SweepError([(f"{source}:1", "a sweep file has a 'sweep:' mapping (axes, lenses, "
                                          "replications...) beside or naming a base scenario")])
    section = data["sweep"]
    problems = _Problems(source, marks)
    for key in section:
        if key not in _SECTION_KEYS:
            problems.add(("sweep", key), f"unknown key; a sweep section has "
                                         f"{', '.join(_SECTION_KEYS)}")
    base_data = {k: v for k, v in data.items() if k != "sweep"}
    for key in ("name", "description", "base"):
        text = section.get(key, "")
        if not isinstance(text, str) or re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text):
            problems.add(("sweep", key), f"{key} is text without control characters, got {text!r}")
            section[key] = ""
    if "base" in section and not section["base"]:
        raise SweepError(problems.found or [(f"{source}:{marks.get(('sweep',), 1)}",
                                             "sweep.base: empty: name a scenario file")])
    if "base" in section and not _names_a_scenario(section["base"]):
        # the file is data from anyone: it may not have tcpn read (and quote in its errors)
        # a file that is no scenario, such as /etc/shadow
        where = f"{source}:{marks.get(('sweep', 'base'), marks.get(('sweep',), 1))}"
        raise SweepError([(where, f"sweep.base: {section['base']!r} is not a scenario "
                                  "file: name a .yaml or .yml file")])
    name = str(section.get("name") or Path(source).stem)
    if "base" in section:
        if base_data:
            problems.add(("sweep", "base"), f"a sweep with a base file has no scenario fields"
                         f" of its own (found {', '.join(map(str, base_data))})")
        base_path = (directory or Path()) / str(section["base"])
        scenario = load_scenario(base_path)  # its errors name the base file and its lines
        base_source = str(base_path)
        base_data = _read_yaml(read_input(base_path, "scenario_bytes", "scenario").decode(
            "utf-8"), base_source)[0]
        if not isinstance(base_data, dict):
            raise SweepError([(base_source, "a scenario is a mapping of fields")])
    else:
        try:
            scenario = validate_scenario({**base_data, "name": name})
        except ScenarioError as exc:
            raise SweepError([(_line_of(source, marks, where), msg)
                              for where, msg in exc.problems]) from None
    seed = section.get("seed", scenario.seed)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        problems.add(("sweep", "seed"), f"a seed is an integer >= 0, got {seed!r}")
    else:
        base_data["seed"] = seed
    base = _expand_shorthand(base_data)
    axes, lines = _axes(section, base, problems)
    lenses = _lenses(section.get("lenses", ["net"]), problems)
    replications = section.get("replications", 1)
    if not isinstance(replications, int) or isinstance(replications, bool) or replications < 1:
        problems.add(("sweep", "replications"), f"replications is an integer >= 1, got "
                                                f"{replications!r}")
    if problems.found:
        raise SweepError(problems.found)
    sweep = Sweep(name=name, source=source, base=base, axes=axes, lenses=lenses,
                  replications=int(replications), description=str(section.get(
                      "description", "")), _lines=lines)
    runs = sweep.size * len(lenses) * sweep.replications
    if sweep.size > MAX_CELLS or runs > MAX_RUNS:
        raise SweepError([(f"{source}:{marks.get(('sweep',), 1)}", f"the sweep has "
                           f"{sweep.size} cells and {runs} runs, more than {MAX_CELLS} "
                           f"cells or {MAX_RUNS} runs: split it")])
    return sweep


def _line_of(source: str, marks: Mapping[tuple[Any, ...], int], where: str) -> str:
    try:
        path = parse_path(where)
    except ValueError:
        return source
    for depth in range(len(path), 0, -1):
        line = marks.get(tuple(path[:depth]))
        if line is not None:
            return f"{source}:{line}: {where}"
    return f"{source}: {where}"


def load_sweep(path: str | Path) -> Sweep:
    """Read a sweep file (see the module docstring)."""
    path = Path(path)
    data = read_input(path, "scenario_bytes", "sweep file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SweepError([(f"{path}:{line}", f"not UTF-8 text (byte 0x{data[exc.start]:02x} "
                                             f"at offset {exc.start}): save the sweep file "
                                             "as UTF-8")]) from None
    return parse_sweep(text, str(path), path.parent)


def _check(path: str, key: tuple[Any, ...], base: Mapping[str, Any],
           problems: _Problems) -> bool:
    if path in ("name", "description"):
        problems.add(key, f"axis {path}: a scenario's {path} changes no run; cells are "
                          "named <sweep name>[<cell>]")
        return False
    try:
        check_path(parse_path(path), base)
    except ValueError as exc:
        problems.add(key, f"axis {path}: {exc}")
        return False
    return True


def _axes(section: Mapping[str, Any], base: Mapping[str, Any], problems: _Problems,
          ) -> tuple[list[Axis], dict[str, int]]:
    axes: list[Axis] = []
    lines: dict[str, int] = {}
    seen: set[str] = set()

    def claim(path: str, key: tuple[Any, ...]) -> bool:
        lines[path] = problems.marks.get(key, 0)
        if path in seen:
            problems.add(key, f"axis {path} is swept twice")
            return False
        seen.add(path)
        return _check(path, key, base, problems)

    grid = section.get("axes") or {}
    if not isinstance(grid, dict):
        problems.add(("sweep", "axes"), "axes is a mapping of field path -> values")
        grid = {}
    for path, spec in grid.items():
        key = ("sweep", "axes", path)
        if claim(str(path), key):
            values = _values(spec, key, problems, f"axis {path}")
            if values:
                axes.append(Axis((str(path),), tuple((v,) for v in values),
                                 problems.marks.get(key)))
    groups = section.get("zip") or []
    if not isinstance(groups, list):
        problems.add(("sweep", "zip"), "zip is a list of groups (path -> values of equal "
                                       "length)")
        groups = []
    for g, group in enumerate(groups):
        key = ("sweep", "zip", g)
        if not isinstance(group, dict) or not group:
            problems.add(key, "a zip group maps two or more paths to lists of equal length")
            continue
        columns = {str(p): _values(v, (*key, p), problems, f"axis {p}") for p, v in
                   group.items() if claim(str(p), (*key, p))}
        lengths = {p: len(v) for p, v in columns.items()}
        if len(set(lengths.values())) > 1:
            problems.add(key, "zipped axes need equal lengths, got " + ", ".join(
                f"{p}: {n}" for p, n in lengths.items()))
        elif columns and all(columns.values()):
            axes.append(Axis(tuple(columns), tuple(zip(*columns.values(), strict=True)),
                             problems.marks.get(key), "zip"))
    if "sample" in section:
        sample = _sample(section["sample"], problems, claim)
        if sample is not None:
            axes.append(sample)
    return axes, lines


def _values(spec: Any, key: tuple[Any, ...], problems: _Problems, what: str) -> list[Any]:
    if isinstance(spec, list):
        if not spec:
            problems.add(key, f"{what}: an empty list of values")
        return spec
    if isinstance(spec, dict):
        found = _range(spec, key, problems, what, with_points=True)
        if found is None:
            return []
        low, high, points, scale, integer = found
        u = np.linspace(0.0, 1.0, points) if points > 1 else np.zeros(1)
        return _scaled(u, low, high, scale, integer)
    problems.add(key, f"{what}: values are a list [a, b, ...] or a range {{low: , high: , "
                      f"points: , scale: linear|log}}")
    return []


def _range(spec: Mapping[str, Any], key: tuple[Any, ...], problems: _Problems, what: str,
           with_points: bool) -> tuple[float, float, int, str, bool] | None:
    allowed = {"low", "high", "scale", "integer"} | ({"points"} if with_points else set())
    unknown = sorted(set(spec) - allowed)
    if unknown:
        problems.add(key, f"{what}: unknown key {unknown[0]!r} in a range; keys: "
                          f"{', '.join(sorted(allowed))}")
        return None
    low, high = spec.get("low"), spec.get("high")
    scale, integer = spec.get("scale", "linear"), spec.get("integer", False)
    points = spec.get("points", 1)
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool)
                  and math.isfinite(x) for x in (low, high))
    if not numbers:
        problems.add(key, f"{what}: a range needs finite numbers low and high")
    elif not low < high:  # type: ignore[operator]
        problems.add(key, f"{what}: low ({low}) must be below high ({high})")
    elif scale not in ("linear", "log"):
        problems.add(key, f"{what}: scale is linear or log, got {scale!r}")
    elif scale == "log" and low <= 0:  # type: ignore[operator]
        problems.add(key, f"{what}: a log range needs low > 0, got {low}")
    elif with_points and (not isinstance(points, int) or isinstance(points, bool)
                          or not 1 <= points <= MAX_CELLS):
        problems.add(key, f"{what}: points is an integer in 1..{MAX_CELLS}, got {points!r}")
    elif not isinstance(integer, bool):
        problems.add(key, f"{what}: integer is true or false, got {integer!r}")
    else:
        return float(low), float(high), int(points), str(scale), integer  # type: ignore[arg-type]
    return None


def _scaled(u: np.ndarray, low: float, high: float, scale: str, integer: bool) -> list[Any]:
    """Unit-interval points mapped onto [low, high]; floats to 12 significant digits, so
    that a log range gives 0.001, not 0.0010000000000000002."""
    if scale == "log":
        x = np.exp(np.log(low) + u * (np.log(high) - np.log(low)))
    else:
        x = low + u * (high - low)
    if integer:
        return [int(np.rint(v)) for v in x]
    return [float(f"{v:.12g}") for v in x]


def _sample(spec: Any, problems: _Problems, claim: Any) -> Axis | None:
    key = ("sweep", "sample")
    if not isinstance(spec, dict):
        problems.add(key, "sample is a mapping: method, points, seed, ranges")
        return None
    unknown = sorted(set(spec) - {"method", "points", "seed", "ranges"})
    if unknown:
        problems.add((*key, unknown[0]), "unknown key; a sample has method, points, seed, "
                                         "ranges")
    method, points, seed = spec.get("method"), spec.get("points"), spec.get("seed", 0)
    ranges = spec.get("ranges")
    if method not in ("random", "sobol", "latin"):
        problems.add((*key, "method"), f"method is random, sobol or latin, got {method!r}")
        return None
    if not isinstance(points, int) or isinstance(points, bool) or not 1 <= points <= MAX_CELLS:
        problems.add((*key, "points"), f"points is an integer in 1..{MAX_CELLS}, got "
                                       f"{points!r}")
        return None
    if method == "sobol" and points & (points - 1):
        problems.add((*key, "points"), f"Sobol points keep their balance only in powers of "
                                       f"2: use {1 << (points - 1).bit_length()} or "
                                       f"{1 << (points.bit_length() - 1)}, not {points}")
        return None
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        problems.add((*key, "seed"), f"a seed is an integer >= 0, got {seed!r}")
        return None
    if not isinstance(ranges, dict) or not ranges:
        problems.add((*key, "ranges"), "ranges maps each sampled path to {low: , high: , "
                                       "scale: linear|log, integer: false}")
        return None
    found = {}
    for path, r in ranges.items():
        rkey = (*key, "ranges", path)
        if claim(str(path), rkey):
            if not isinstance(r, dict):
                problems.add(rkey, f"axis {path}: a range {{low: , high: }}")
                continue
            parsed = _range(r, rkey, problems, f"axis {path}", with_points=False)
            if parsed is not None:
                found[str(path)] = parsed
    if len(found) < len(ranges):
        return None
    u = _unit_points(method, points, len(found), seed)
    columns = [_scaled(u[:, j], low, high, scale, integer)
               for j, (low, high, _, scale, integer) in enumerate(found.values())]
    return Axis(tuple(found), tuple(zip(*columns, strict=True)), problems.marks.get(key),
                "sample")


def _unit_points(method: str, points: int, dims: int, seed: int) -> np.ndarray:
    """``points`` x ``dims`` points in the unit cube (scipy.stats.qmc for Sobol and Latin)."""
    if method == "random":
        return np.random.default_rng(seed).random((points, dims))
    from scipy.stats import qmc

    engine_type = qmc.Sobol if method == "sobol" else qmc.LatinHypercube
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            engine = engine_type(dims, rng=np.random.default_rng(seed))
        except TypeError:  # SciPy < 1.15 names it seed
            engine = engine_type(dims, seed=np.random.default_rng(seed))
    return np.asarray(engine.random(points))


def _lenses(spec: Any, problems: _Problems) -> list[LensSpec]:
    key = ("sweep", "lenses")
    if not isinstance(spec, list) or not spec:
        problems.add(key, "lenses is a list of lens names (net, fluid, ns3) or "
                          "{name: , options: {...}}")
        return []
    found: list[LensSpec] = []
    for i, entry in enumerate(spec):
        if isinstance(entry, str):
            found.append(LensSpec(entry))
        elif isinstance(entry, dict) and isinstance(entry.get("name"), str) and \
                set(entry) <= {"name", "options"} and isinstance(entry.get("options", {}),
                                                                 dict):
            found.append(LensSpec(entry["name"], tuple(sorted(entry.get("options",
                                                                         {}).items()))))
        else:
            problems.add((*key, i), "a lens is a name or {name: , options: {...}}")
    from tcpn.experiments.sweep.campaign import EVALUATIONS
    from tcpn.lenses import lens_names

    known = [*lens_names(), *EVALUATIONS]
    for i, lens in enumerate(found):
        if lens.name not in known:
            problems.add((*key, i), f"unknown lens {lens.name!r}; lenses: {', '.join(known)}")
    labels = [lens.label for lens in found]
    for i, label in enumerate(labels):
        if label in labels[:i]:
            problems.add((*key, i), f"lens {label} is listed twice")
    return found
