"""Figures of a campaign: a metric against one axis with CI bands per lens, a heatmap over two.

Both read :class:`~tcpn.experiments.sweep.results.CampaignResults` (what the store holds) and
return a Matplotlib :class:`~matplotlib.figure.Figure` (no display needed)::

    tcpn sweep scenarios/sweeps/s4_wireless_alone.yaml --figure s4.png \\
        --x "links[3].ab.errors.rate"
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tcpn.errors import InputError
from tcpn.experiments.sweep.results import CampaignResults

__all__ = ["check_figure_path", "heatmap", "metric_against_axis"]


def check_figure_path(path: str) -> None:
    """Refuse, before any run, a figure file whose suffix names no format Matplotlib
    writes (``f.txt``): the figure is drawn only after every run of the campaign.

    >>> check_figure_path("f.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: --figure f.txt: '.txt' is not a figure format; use .png, .pdf, ...
    """
    formats = Figure().canvas.get_supported_filetypes()
    suffix = path.rpartition(".")[2].lower() if "." in path.rpartition("/")[2] else ""
    if suffix not in formats:
        preferred = [".png", ".pdf", ".svg"]
        others = sorted(f".{f}" for f in formats if f".{f}" not in preferred)
        found = f"{'.' + suffix!r} is not a figure format" if suffix else "no suffix"
        raise InputError(f"--figure {path}: {found}; use {', '.join(preferred + others)}")


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
               for v in values)


def _axis(results: CampaignResults, axis: str | None) -> str:
    parameters = results.sweep.parameters
    if not parameters:
        raise InputError(f"sweep {results.sweep.name}: it has no axis to plot against")
    if axis is None:
        return parameters[0]
    if axis not in parameters:
        raise InputError(f"sweep {results.sweep.name}: no axis {axis!r}; axes: "
                         f"{', '.join(parameters)}")
    return axis


def metric_against_axis(results: CampaignResults, metric: str, axis: str | None = None,
                        scope: str = "aggregate", name: str = "all") -> Figure:
    """``metric`` (mean and its 95 % CI band) against ``axis``: one line per lens and per
    combination of the other axes' values. A numeric axis spanning more than two decades
    is drawn on a log scale; other values are categories in sweep order."""
    axis = _axis(results, axis)
    rows = results.metric(metric, scope, name)
    if rows.empty:
        raise InputError(f"sweep {results.sweep.name}: no stored value of {scope} {name} "
                         f"{metric}")
    others = [p for p in results.sweep.parameters if p != axis]
    order = list(dict.fromkeys(v for cell in results.sweep.cells()
                               for v in [cell.params[axis]]))
    order = [v if not isinstance(v, dict | list) else str(v) for v in order]
    numeric = _numeric(order)
    figure = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = figure.add_subplot()
    for key, group in rows.groupby(["lens", *others], sort=False):
        labels = key if isinstance(key, tuple) else (key,)
        label = ", ".join([str(labels[0]), *(f"{p}={v}" for p, v in zip(others, labels[1:],
                                                                           strict=True))])
        xs = group[axis].tolist()
        position = np.array(xs, dtype=float) if numeric else np.array(
            [order.index(v if not isinstance(v, dict | list) else str(v)) for v in xs])
        sort = np.argsort(position)
        mean = group["mean"].to_numpy(dtype=float)[sort]
        line = ax.plot(position[sort], mean, marker="o", label=label)[0]
        low, high = group["low"].to_numpy(dtype=float)[sort], group["high"].to_numpy(
            dtype=float)[sort]
        band = np.isfinite(low) & np.isfinite(high)
        if band.any():
            ax.fill_between(position[sort][band], low[band], high[band], alpha=0.2,
                            color=line.get_color(), linewidth=0)
    if numeric and min(order) > 0 and max(order) / min(order) > 100:
        ax.set_xscale("log")
    if not numeric:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
    ax.set_xlabel(axis)
    ax.set_ylabel(f"{metric} ({scope} {name})")
    ax.set_title(f"{results.sweep.name}: mean and 95 % CI")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return figure


def heatmap(results: CampaignResults, metric: str, x: str, y: str, lens: str | None = None,
            scope: str = "aggregate", name: str = "all") -> Figure:
    """The mean of ``metric`` over axes ``x`` and ``y`` for one lens (default: the first),
    each cell annotated with its value; the other axes must have one value."""
    x, y = _axis(results, x), _axis(results, y)
    if x == y:
        raise InputError(f"heatmap: x and y are the same axis {x}")
    lens = lens or results.sweep.lenses[0].label
    rows = results.metric(metric, scope, name)
    rows = rows[rows["lens"] == lens]
    varying = [p for p in results.sweep.parameters if p not in (x, y)
               and len({str(cell.params[p]) for cell in results.sweep.cells()}) > 1]
    if varying:
        raise InputError(f"heatmap over {x} and {y}: the other axes vary too "
                         f"({', '.join(varying)}); plot a sweep of two axes")
    xs = list(dict.fromkeys(str(cell.params[x]) for cell in results.sweep.cells()))
    ys = list(dict.fromkeys(str(cell.params[y]) for cell in results.sweep.cells()))
    grid = np.full((len(ys), len(xs)), np.nan)
    for row in rows.to_dict(orient="records"):
        grid[ys.index(str(row[y])), xs.index(str(row[x]))] = row["mean"]
    figure = Figure(figsize=(max(4.8, 2.0 + 1.1 * len(xs)), max(3.2, 1.4 + 0.6 * len(ys))),
                    layout="constrained")
    ax = figure.add_subplot()
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    figure.colorbar(image, ax=ax, label=f"{metric} ({scope} {name})")
    ax.set_xticks(range(len(xs)), xs)
    ax.set_yticks(range(len(ys)), ys)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    finite = grid[np.isfinite(grid)]
    middle = float(finite.mean()) if finite.size else 0.0
    for (i, j), value in np.ndenumerate(grid):
        ax.text(j, i, "failed" if value != value else f"{value:.3g}", ha="center",
                va="center", fontsize="small", color="white" if value < middle else "black")
    ax.set_title(f"{results.sweep.name} ({lens} lens)")
    return figure
