"""Progress lines for long runs on a terminal: model time, firings per second and an ETA.

The lens API calls a progress hook with the model time reached (and, for the net lens,
the transition firings so far); :func:`model_time_progress` turns that into a Rich
progress line, :func:`count_progress` does the same for runs completed. Both draw only
when ``console`` is an interactive terminal: piped or redirected output stays clean.

>>> from rich.console import Console
>>> import io
>>> quiet = Console(file=io.StringIO())  # not a terminal: nothing is drawn
>>> with model_time_progress(quiet, "net: dumbbell", horizon_s=10.0) as tick:
...     tick(2.5, firings=1000)
>>> quiet.file.getvalue()
''
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["count_progress", "model_time_progress"]


def _progress(console: Console, *columns: TextColumn) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(bar_width=20),
                    TaskProgressColumn(), *columns, TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=console,
                    transient=True, disable=not console.is_interactive)


@contextlib.contextmanager
def model_time_progress(console: Console, description: str, horizon_s: float,
                        ) -> Iterator[Callable[..., None]]:
    """A progress hook ``tick(now_s, firings=None)`` drawing model time out of
    ``horizon_s``, firings per wall-clock second (when given) and the time left."""
    with _progress(console, TextColumn("{task.fields[model]}"),
                   TextColumn("{task.fields[rate]}")) as bar:
        task = bar.add_task(description, total=horizon_s, model="", rate="")
        start = time.perf_counter()

        def tick(now_s: float, firings: int | None = None) -> None:
            wall_s = time.perf_counter() - start
            rate = (f"{firings / wall_s:,.0f} firings/s" if firings is not None and wall_s > 0
                    else "")
            bar.update(task, completed=now_s, model=f"{now_s:.4g}/{horizon_s:g} s model time",
                       rate=rate)

        yield tick


@contextlib.contextmanager
def count_progress(console: Console, description: str, total: int, unit: str = "runs",
                   ) -> Iterator[Callable[[float], None]]:
    """A progress hook ``done(n)`` drawing ``n`` of ``total`` ``unit`` and the time left."""
    with _progress(console, TextColumn("{task.fields[count]}")) as bar:
        task = bar.add_task(description, total=total, count=f"0/{total} {unit}")

        def done(count: float) -> None:
            bar.update(task, completed=count, count=f"{count:g}/{total} {unit}")

        yield done
