"""States per second and bytes per state of tcpn's explorer and of SNAKES' StateGraph.

Each net is built once as a tcpn net; SNAKES gets ``to_snakes(net)`` of that same object
(places typed ``tAll``: no type checks, its fastest setting), and the script checks that
both find the same number of states before it reports anything. The nets:

* ``chain``: one place, ``x -> x + 1`` while ``x < 9999``: 10,000 states in a line;
* ``grid``: two such counters up to 100: the 100 x 100 interleaving grid, 10,201 states;
* ``philosophers``: 29 dining philosophers taking both forks at once (87 places, 58
  transitions): 1,149,851 states (the Lucas number L(29)), tcpn only.

Speed: the wall time of the whole call, ``explore(net)`` (compilation included) against
``StateGraph(net).build()``, as the median of ``--repeats`` runs, tcpn and SNAKES
interleaved so that a change of machine load hits both. Memory: a separate run of each
under ``tracemalloc``: *kept* is what the finished state space holds (allocated and not
freed when the call returns, the result alive), *peak* the most the call held at once,
each divided by the number of states. The large net's memory is tcpn's own accounting
(``bytes_per_state``, ``peak_bytes_per_state``) and the growth of the process's peak RSS.

    .venv/bin/python benchmarks/statespace_vs_snakes.py            # about two minutes
    .venv/bin/python benchmarks/statespace_vs_snakes.py --quick    # seconds (smaller nets)
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import snakes.nets as sn
import snakes.typing as st
from rich.console import Console
from rich.table import Table

from tcpn.petrinets import INT, PetriNet, Place, Transition
from tcpn.petrinets.examples import dining_philosophers, interleaving_grid
from tcpn.petrinets.exchange.snakes import to_snakes
from tcpn.petrinets.statespace.space import explore

SPEED_FLOOR, MEMORY_FLOOR = 20.0, 10.0


# -- the nets, built once for both tools ----------------------------------------------------
def chain_net(states: int) -> PetriNet:
    """``x -> x + 1`` while ``x < states - 1``: ``states`` states in a line."""
    net = PetriNet("chain")
    net.declare(LAST=states - 1)
    net.add_place(Place("count", INT, initial=[0]))
    net.add_transition(Transition("increment", guard="x < LAST"))
    net.add_input("count", "increment", "x")
    net.add_output("count", "increment", "x + 1")
    return net


def lucas(n: int) -> int:
    a, b = 2, 1
    for _ in range(n):
        a, b = b, a + b
    return a


# -- the tools ------------------------------------------------------------------------------
def snakes_graph(snet: sn.PetriNet) -> sn.StateGraph:
    graph = sn.StateGraph(snet)
    graph.build()
    return graph


def timed(build: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of ``build()`` and what it returned."""
    gc.collect()
    started = time.perf_counter()
    result = build()
    return time.perf_counter() - started, result


def traced_bytes(build: Callable[[], Any]) -> tuple[int, int, Any]:
    """(kept, peak) bytes of ``build()`` under tracemalloc, and what it returned."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = build()
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return kept - before, peak - before, result


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per speed figure (median)")
    parser.add_argument("--quick", action="store_true", help="smaller nets, for a smoke test")
    args = parser.parse_args(argv)
    chain_states, grid_k, diners = (2_000, 40, 20) if args.quick else (10_000, 100, 29)
    console = Console(width=120)
    speed = Table(title=f"States per second (median of {args.repeats} runs, whole call)")
    for column in ("net", "states", "tcpn", "SNAKES", "tcpn / SNAKES", f"floor {SPEED_FLOOR:.0f}x"):
        speed.add_column(column, justify="left" if column == "net" else "right")
    memory = Table(title="Bytes per state (tracemalloc)")
    for column in ("net", "tcpn kept", "tcpn peak", "SNAKES kept", "SNAKES peak",
                   "SNAKES / tcpn (peak)", f"floor {MEMORY_FLOOR:.0f}x"):
        memory.add_column(column, justify="left" if column == "net" else "right")
    worst_speed = worst_memory = float("inf")
    for net in (chain_net(chain_states), interleaving_grid(grid_k)):
        snet = to_snakes(net)
        for place in snet.place():
            place.checker(st.tAll)
        ours_s, theirs_s = [], []
        for _ in range(args.repeats):
            seconds, space = timed(lambda net=net: explore(net))
            ours_s.append(len(space) / seconds)
            seconds, graph = timed(lambda snet=snet: snakes_graph(snet))
            theirs_s.append(len(graph) / seconds)
            if len(graph) != len(space) or not space.complete:
                raise RuntimeError(f"{net.name}: tcpn found {len(space)} states, "
                                   f"SNAKES {len(graph)}")
        n = len(space)
        del space, graph
        ours, theirs = statistics.median(ours_s), statistics.median(theirs_s)
        worst_speed = min(worst_speed, ours / theirs)
        speed.add_row(net.name, f"{n:,}", f"{ours:,.0f}", f"{theirs:,.0f}",
                      f"{ours / theirs:,.1f}x",
                      "[green]ok[/]" if ours / theirs >= SPEED_FLOOR else "[red]below[/]")
        our_kept, our_peak, space = traced_bytes(lambda net=net: explore(net))
        del space
        their_kept, their_peak, graph = traced_bytes(lambda snet=snet: snakes_graph(snet))
        del graph
        ratio = their_peak / our_peak
        worst_memory = min(worst_memory, ratio, their_kept / our_kept)
        memory.add_row(net.name, f"{our_kept / n:,.0f}", f"{our_peak / n:,.0f}",
                       f"{their_kept / n:,.0f}", f"{their_peak / n:,.0f}", f"{ratio:,.1f}x",
                       "[green]ok[/]" if ratio >= MEMORY_FLOOR else "[red]below[/]")
    console.print(speed)
    console.print(memory)

    big = dining_philosophers(diners)
    rss_before = peak_rss_bytes()
    seconds, space = timed(lambda: explore(big))
    rss_growth = max(0, peak_rss_bytes() - rss_before)
    if len(space) != lucas(diners):
        raise RuntimeError(f"philosophers: {len(space)} states, expected L({diners}) = "
                           f"{lucas(diners)}")
    large = Table(title=f"A larger net, tcpn only: {diners} dining philosophers")
    for column in ("states", "edges", "seconds", "states/s", "bytes/state kept",
                   "bytes/state peak", "peak RSS growth / state"):
        large.add_column(column, justify="right")
    large.add_row(f"{len(space):,}", f"{space.n_edges:,}", f"{seconds:,.1f}",
                  f"{len(space) / seconds:,.0f}", f"{space.bytes_per_state:,.0f}",
                  f"{space.peak_bytes_per_state:,.0f}", f"{rss_growth / len(space):,.0f}")
    console.print(large)
    console.print(f"worst speed ratio {worst_speed:,.1f}x (floor {SPEED_FLOOR:.0f}x); "
                  f"worst memory ratio {worst_memory:,.1f}x (floor {MEMORY_FLOOR:.0f}x)")
    return 0 if worst_speed >= SPEED_FLOOR and worst_memory >= MEMORY_FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
