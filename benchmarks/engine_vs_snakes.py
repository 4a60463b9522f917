"""Firings per second of tcpn and of SNAKES on identical untimed nets; tcpn's timed overhead.

Each net is built once as a tcpn net by the functions below; SNAKES gets
``to_snakes(net)`` of that same object, and the script checks that both engines enable
the same bindings in the initial marking before timing anything. The nets:

* ``counter``: one place, ``x -> x + 1`` guarded by ``x < LIMIT`` (one binding at a time);
* ``tuple ring``: three places of ``(id, hops)`` tuples, six tokens circulating
  ``a -> b -> c -> a``, hops counted on the way, a guard on ``a -> b``;
* ``contention``: 20 transitions, ten workers that acquire and release three shared
  locks (up to 13 bindings enabled at once, conflicts on the lock place).

tcpn runs ``Simulator.run(max_firings=N)`` (compilation excluded: it happens once per
net), checking the colour of every token it produces. SNAKES runs what a simulator built
on it must do per step: ``t.modes()`` for every transition, a uniform choice among all the
modes, ``t.fire(mode)``, with its places typed ``tAll`` (no type checks, its fastest
setting; the colour-set checks ``to_snakes`` installs cost it about 10%). Each figure is the
median of ``--repeats`` runs, timed in CPU time of this process (``time.process_time``)
so that other work on the machine disturbs the figures less. The timed table runs the
same nets with every place timed and delays on the transitions (constant and
exponential), tcpn only, against the untimed figure measured in the same run.

    .venv/bin/python benchmarks/engine_vs_snakes.py            # about a minute
    .venv/bin/python benchmarks/engine_vs_snakes.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

import snakes.nets as sn
import snakes.typing as st
from rich.console import Console
from rich.table import Table

from tcpn.petrinets import (
    INT,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Transition,
)
from tcpn.petrinets.snakes_interop import snakes_binding, to_snakes

FLOOR, AIM = 30.0, 100.0
BIG = 10**12  # guard limits no run reaches


# -- the nets, built once for both engines -----------------------------------------------
def counter_net(timed: bool) -> PetriNet:
    """``x -> x + 1`` while ``x < LIMIT``."""
    net = PetriNet("counter")
    net.declare(LIMIT=BIG)
    net.add_place(Place("count", INT.timed() if timed else INT, initial=[0]))
    net.add_transition(Transition("increment", guard="x < LIMIT", delay=1.0 if timed else None))
    net.add_input("count", "increment", "x")
    net.add_output("count", "increment", "x + 1")
    return net


def tuple_ring_net(timed: bool) -> PetriNet:
    """Six ``(id, hops)`` tokens going round three places."""
    pair = ProductSet(INT, INT)
    colour = pair.timed() if timed else pair
    net = PetriNet("tuple_ring")
    net.declare(LIMIT=BIG)
    net.add_place(Place("a", colour, initial=[(i, 0) for i in range(6)]))
    net.add_place(Place("b", colour))
    net.add_place(Place("c", colour))
    delay = Exponential(1.0) if timed else None
    net.add_transition(Transition("ab", guard="k < LIMIT", delay=delay))
    net.add_input("a", "ab", "(i, k)")
    net.add_output("b", "ab", "(i, k + 1)")
    net.add_transition(Transition("bc", delay=delay))
    net.add_input("b", "bc", "(i, k)")
    net.add_output("c", "bc", "(i, k)")
    net.add_transition(Transition("ca", delay=0.5 if timed else None))
    net.add_input("c", "ca", "(i, k)")
    net.add_output("a", "ca", "(i, k)")
    return net


def contention_net(timed: bool) -> PetriNet:
    """Ten workers, three shared locks: 20 transitions in conflict on ``lock``."""
    net = PetriNet("contention")
    net.declare(ROUNDS=BIG)
    unit, number = (UNIT.timed(), INT.timed()) if timed else (UNIT, INT)
    net.add_place(Place("lock", unit, initial=[()] * 3))
    for w in range(10):
        net.add_place(Place(f"idle{w}", number, initial=[0]))
        net.add_place(Place(f"busy{w}", number))
        net.add_transition(Transition(f"acquire{w}", guard="n < ROUNDS",
                                      delay=0.5 if timed else None))
        net.add_input(f"idle{w}", f"acquire{w}", "n")
        net.add_input("lock", f"acquire{w}", "()")
        net.add_output(f"busy{w}", f"acquire{w}", "n")
        net.add_transition(Transition(f"release{w}",
                                      delay=Exponential(1.0 + w / 10) if timed else None))
        net.add_input(f"busy{w}", f"release{w}", "n")
        net.add_output(f"idle{w}", f"release{w}", "n + 1")
        net.add_output("lock", f"release{w}", "()")
    return net


NETS: dict[str, Callable[[bool], PetriNet]] = {
    "counter": counter_net,
    "tuple ring": tuple_ring_net,
    "contention": contention_net,
}


# -- the engines ---------------------------------------------------------------------------
def tcpn_rate(net: PetriNet, firings: int, seed: int) -> float:
    """Firings per second of ``Simulator.run`` (the net compiled beforehand)."""
    sim = Simulator(net, seed=seed)
    started = time.process_time()
    result = sim.run(max_firings=firings)
    elapsed = time.process_time() - started
    if result.firings != firings:
        raise RuntimeError(f"{net.name}: tcpn stopped after {result.firings} firings")
    return firings / elapsed


def snakes_rate(snet: sn.PetriNet, firings: int, seed: int) -> float:
    """Firings per second of a SNAKES loop: every transition's modes, a uniform pick, fire."""
    initial = snet.get_marking()
    transitions = snet.transition()
    rng = random.Random(seed)
    started = time.process_time()
    for _ in range(firings):
        modes = [(t, m) for t in transitions for m in t.modes()]
        if not modes:
            raise RuntimeError(f"{snet.name}: SNAKES reached a dead marking")
        t, mode = modes[rng.randrange(len(modes))]
        t.fire(mode)
    elapsed = time.process_time() - started
    snet.set_marking(initial)
    return firings / elapsed


def check_same_bindings(net: PetriNet, snet: sn.PetriNet) -> int:
    """Both engines enable the same bindings initially; returns how many."""
    tcpn = {(t, tuple(sorted(b.items()))) for t, b in Simulator(net).enabled()}
    snakes = {(t.name, tuple(sorted(snakes_binding(m).items())))
              for t in snet.transition() for m in t.modes()}
    if tcpn != snakes:
        raise RuntimeError(f"{net.name}: the engines disagree on the initial bindings")
    return len(tcpn)



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--tcpn-firings", type=int, default=200_000)
    parser.add_argument("--snakes-firings", type=int, default=3_000)
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.tcpn_firings, args.snakes_firings = 3, 20_000, 300
    console = Console()
    speed = Table(title=f"Untimed firings per second (median of {args.repeats} runs)")
    for column in ("net", "enabled at start", "tcpn", "SNAKES", "tcpn / SNAKES",
                   f"floor {FLOOR:.0f}x"):
        speed.add_column(column, justify="left" if column == "net" else "right")
    timed = Table(title="Timed overhead (tcpn): same nets, timed places and delays")
    for column in ("net", "untimed", "timed", "timed / untimed"):
        timed.add_column(column, justify="left" if column == "net" else "right")
    worst = float("inf")
    for name, build in NETS.items():
        net, timed_net = build(False), build(True)
        snet = to_snakes(net)
        bindings = check_same_bindings(net, snet)
        for place in snet.place():  # SNAKES' fastest setting: no type checks (tcpn checks)
            place.checker(st.tAll)
        runs: list[tuple[float, float, float]] = []
        for seed in range(args.repeats):  # interleaved, so load changes hit all three
            runs.append((tcpn_rate(net, args.tcpn_firings, seed),
                         snakes_rate(snet, args.snakes_firings, seed),
                         tcpn_rate(timed_net, args.tcpn_firings, seed)))
        ours, theirs, with_time = (statistics.median(column) for column in zip(*runs, strict=True))
        ratio = ours / theirs
        worst = min(worst, ratio)
        verdict = "[green]ok[/]" if ratio >= FLOOR else "[red]below[/]"
        speed.add_row(name, str(bindings), f"{ours:,.0f}", f"{theirs:,.0f}",
                      f"{ratio:,.1f}x", verdict)
        timed.add_row(name, f"{ours:,.0f}", f"{with_time:,.0f}", f"{with_time / ours:.2f}")
    console.print(speed)
    console.print(timed)
    console.print(f"worst tcpn/SNAKES ratio: {worst:,.1f}x (floor {FLOOR:.0f}x, aim {AIM:.0f}x)")
    return 0 if worst >= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
