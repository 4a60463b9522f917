"""Which values of a scenario's unstated parameters fit a capture best (``tcpn validate
scenario.yaml --trace sender.pcap --fit tcp.initial_cwnd_segments=2,4,10``).

A testbed's initial window, minimum RTO, delayed ACKs or buffer are often not written down.
:func:`fit_capture` reads the capture once (the capture lens: :mod:`tcpn.lenses.capture`),
then, for every combination of the values given, runs the judged lenses and compares
them with it row by row, as ``tcpn validate`` does (targets of
:data:`tcpn.experiments.compare.TOLERANCES`; rows the capture cannot see are not judged).
Each combination is scored by its misses (rows outside their target), then by the mean
absolute relative error of the judged rows; the table lists every combination, best
first, so that a flat optimum shows as a tie rather than a single winner.

>>> parse_fit("tcp.min_rto_s=0.2,1")
('tcp.min_rto_s', [0.2, 1])
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import yaml

from tcpn.errors import InputError
from tcpn.experiments.compare import comparison_table
from tcpn.lenses.replications import replicate
from tcpn.models.fields import parse_path, set_field
from tcpn.models.scenario import Scenario, validate_scenario

__all__ = ["MAX_FIT_POINTS", "fit_capture", "parse_fit"]

#: the most combinations one fit runs (each is ``replications`` runs of every lens)
MAX_FIT_POINTS = 64


def parse_fit(text: str) -> tuple[str, list[Any]]:
    """``"PATH=V1,V2,..."`` as (path, values), each value read as a YAML scalar."""
    path, sep, values = text.partition("=")
    path = path.strip()
    if not sep or not values.strip():
        raise InputError(f"--fit {text!r}: give FIELD=VALUE,VALUE,..., e.g. "
                         "tcp.initial_cwnd_segments=2,4,10")
    try:
        parse_path(path)
    except ValueError as exc:
        raise InputError(f"--fit {text!r}: {exc}") from None
    try:
        parsed = [yaml.safe_load(v.strip()) for v in values.split(",") if v.strip()]
    except yaml.YAMLError:
        raise InputError(f"--fit {text!r}: a value is not a number, word or true/false"
                         ) from None
    return path, parsed


def fit_capture(scenario: Scenario, fits: Sequence[tuple[str, Sequence[Any]]],
                lenses: Sequence[str], capture: Mapping[str, Any], replications: int = 3,
                seed: int | None = None, workers: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """One row per (combination, lens): the values, ``misses`` (rows outside their
    target), ``judged`` (rows with a target the capture can see), ``mean_abs_error`` and
    the aggregate goodput's ``goodput_error``; best first per lens."""
    if not fits:
        raise InputError("--fit names at least one FIELD=VALUES")
    points = list(itertools.product(*(values for _, values in fits)))
    if len(points) > MAX_FIT_POINTS:
        raise InputError(f"--fit: {len(points)} combinations, more than {MAX_FIT_POINTS}: "
                         "fewer values, or one field at a time")
    judged = [lens for lens in lenses if lens != "capture"]
    if not judged:
        raise InputError("--fit judges a lens against the capture: --lenses net (or ns3)")
    reference = replicate(scenario, "capture", seed=seed, replications=1,
                          options=dict(capture), keep_traces=False)
    reference_table, reference_values = reference.table(), reference.values()
    base = scenario.model_dump(mode="json")
    rows = []
    total = len(points) * len(judged)
    for index, point in enumerate(points):
        data = copy.deepcopy(base)
        for (path, _), value in zip(fits, point, strict=True):
            set_field(data, parse_path(path), value)
        try:
            spec = validate_scenario(data)
        except InputError as exc:
            values = ", ".join(f"{path}={value}" for (path, _), value
                               in zip(fits, point, strict=True))
            raise InputError(f"--fit {values}: {exc}") from None
        for offset, lens in enumerate(judged):
            result = replicate(spec, lens=lens, seed=seed, replications=replications,
                               workers=workers, keep_traces=False)
            table = comparison_table({"capture": reference_table, lens: result.table()},
                                     "capture", {"capture": reference_values,
                                                 lens: result.values()})
            seen = table[table[f"{lens}_verdict"].isin(["pass", "FAIL"])]
            goodput = table[(table["scope"] == "aggregate") & (table["metric"] == "goodput_bps")]
            rows.append({**{path: value for (path, _), value in zip(fits, point, strict=True)},
                         "lens": lens, "misses": int((seen[f"{lens}_verdict"] == "FAIL").sum()),
                         "judged": len(seen),
                         "mean_abs_error": float(seen[f"{lens}_error"].abs().mean())
                         if len(seen) else math.nan,
                         "goodput_error": float(goodput[f"{lens}_error"].iloc[0])
                         if len(goodput) else math.nan})
            if progress is not None:
                progress(index * len(judged) + offset + 1, total)
    frame = pd.DataFrame(rows)
    return frame.sort_values(["lens", "misses", "mean_abs_error"], kind="stable"
                             ).reset_index(drop=True)
