"""Peak memory of ``tcpn run`` against the horizon: the trace must not stay in memory.

Runs ``tcpn run SCENARIO`` (net lens, default: the reference dumbbell, two NewReno flows
on a 10 Mbit/s bottleneck) with its ``horizon_s`` set to each of ``--horizons`` (seconds of
model time), every run in a fresh process, and prints that process's peak resident set
size (``ru_maxrss`` from ``os.wait4``) and CPU time (user + system; medians of
``--repeats`` runs, the trees alternated), the size of the trace it wrote, and the peak's
growth per second of model time between the shortest and the longest horizon. A first,
unreported run per tree builds the native engine (its compilation would otherwise weigh
on the first horizon's peak). The trace
streams to its Parquet files as the run goes and the metrics are accumulated chunk by
chunk, so the peaks should be close to each other whatever the horizon.
``--against REV`` runs the same horizons with the ``tcpn`` of a git revision (a temporary
worktree) too, alternated with this tree's runs.

    .venv/bin/python benchmarks/run_memory.py
    .venv/bin/python benchmarks/run_memory.py --horizons 2 60 600 --against main
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20


def peak_rss_mib(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Run ``command``; its peak RSS in MiB (Linux reports ``ru_maxrss`` in KiB) and its
    CPU seconds (user + system)."""
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n"
                         f"{errors.decode(errors='replace')}")
    return usage.ru_maxrss * 1024 / MIB, usage.ru_utime + usage.ru_stime


def scenario_with_horizon(source: Path, horizon_s: float, folder: Path) -> Path:
    """A copy of the scenario ``source`` whose horizon is ``horizon_s``."""
    document = yaml.safe_load(source.read_text())
    document["horizon_s"] = horizon_s
    path = folder / f"{source.stem}-{horizon_s:g}s.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def trace_mib(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.glob("*.parquet")) / MIB


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A temporary git worktree of ``revision`` (removed afterwards)."""
    folder = Path(tempfile.mkdtemp(prefix="tcpn-rev-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder),
                    revision], check=True, capture_output=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                        str(folder)], check=False, capture_output=True)


def measure(tree: Path, scenario: Path, out: Path) -> tuple[float, float]:
    # in ``tree``: ``python -c`` puts the working directory first on sys.path
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-c", "import sys; from tcpn.cli import main; sys.exit(main())",
               "run", str(scenario), "--lens", "net", "--output", str(out)]
    return peak_rss_mib(command, env, tree)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=ROOT / "scenarios/dumbbell_newreno.yaml")
    parser.add_argument("--horizons", type=float, nargs="+", default=[2.0, 20.0, 60.0])
    parser.add_argument("--against", help="a git revision to measure too (e.g. main)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs per horizon and tree (medians printed)")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        trees = {"this tree": ROOT}
        if args.against:
            trees[args.against] = stack.enter_context(worktree(args.against))
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        peaks: dict[str, list[float]] = {name: [] for name in trees}
        warm_up = scenario_with_horizon(args.scenario, args.horizons[0], folder)
        for k, tree in enumerate(trees.values()):  # builds the native engine into its cache
            measure(tree, warm_up, folder / f"warm-up-{k}")
        print(f"{'horizon s':>10}" + "".join(f"{name + ' MiB':>18}{'CPU s':>8}"
                                             for name in trees) + f"{'trace MiB':>12}")
        for horizon in args.horizons:
            scenario = scenario_with_horizon(args.scenario, horizon, folder)
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
            for repeat in range(args.repeats):  # the trees alternate: a load change hits both
                for k, (name, tree) in enumerate(trees.items()):
                    out = folder / f"out-{horizon:g}-{k}-{repeat}"
                    runs[name].append(measure(tree, scenario, out))
            size = trace_mib(out)
            cells = ""
            for name in trees:
                peaks[name].append(statistics.median(peak for peak, _ in runs[name]))
                cells += f"{peaks[name][-1]:>18.1f}"
                cells += f"{statistics.median(cpu for _, cpu in runs[name]):>8.2f}"
            print(f"{horizon:>10g}{cells}{size:>12.1f}", flush=True)
        span = args.horizons[-1] - args.horizons[0]
        if span > 0:
            for name in trees:
                growth = peaks[name][-1] - peaks[name][0]
                print(f"{name}: peak RSS {growth:+.1f} MiB from {args.horizons[0]:g} s to "
                      f"{args.horizons[-1]:g} s, {growth / span:+.3f} MiB per second of "
                      "model time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
