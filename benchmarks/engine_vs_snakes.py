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
exponential), tcpn only, against the untimed figure measured in the same run and against
SNAKES' untimed rate (SNAKES has no time).

    .venv/bin/python benchmarks/engine_vs_snakes.py            # about a minute
    .venv/bin/python benchmarks/engine_vs_snakes.py --quick    # a few seconds
    .venv/bin/python benchmarks/engine_vs_snakes.py --engines python,native

``--engines`` lists tcpn's engines to time (``python``, the reference, and ``native``: the
C engine of ``tcpn.petrinets.engine.cnet`` for these nets, all three in its typed subset, else the
Cython-built code of ``tcpn.petrinets.engine.native``; the line under the table says which ran;
its build, cached, happens before timing); each gets its own columns, the engines
alternating within each repeat. Engines other than ``python`` fire ``--native-firings``
(the C engine is fast enough that 200,000 firings take a few milliseconds).
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
from tcpn.petrinets.exchange.snakes import snakes_binding, to_snakes

FLOOR = 100.0  # issue 19: the engine at 100x SNAKES on every net
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
def tcpn_rate(net: PetriNet, firings: int, seed: int, engine: str = "python") -> float:
    """Firings per second of ``Simulator.run`` (the net compiled, and built, beforehand)."""
    sim = Simulator(net, seed=seed, engine=engine)
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
    parser.add_argument("--native-firings", type=int, default=2_000_000,
                        help="firings per run of the engines other than python")
    parser.add_argument("--snakes-firings", type=int, default=3_000)
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    parser.add_argument("--engines", default="python,native",
                        help="tcpn engines to time, comma-separated (python, native, auto)")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.tcpn_firings, args.snakes_firings = 3, 20_000, 300
        args.native_firings = 200_000
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    console = Console()
    speed = Table(title=f"Untimed firings per second (median of {args.repeats} runs)")
    columns = ["net", "enabled at start"]
    for engine in engines:
        columns += [f"tcpn {engine}", f"{engine} / SNAKES"]
    columns += ["SNAKES", f"floor {FLOOR:.0f}x"]
    for column in columns:
        speed.add_column(column, justify="left" if column == "net" else "right")
    timed = Table(title="Timed overhead (tcpn): same nets, timed places and delays")
    for column in ("net", *(f"{kind} {e}" for e in engines for kind in ("untimed", "timed")),
                   *(f"timed / untimed {e}" for e in engines),
                   *(f"timed {e} / SNAKES (untimed)" for e in engines)):
        timed.add_column(column, justify="left" if column == "net" else "right")
    worst = float("inf")
    for name, build in NETS.items():
        net, timed_net = build(False), build(True)
        snet = to_snakes(net)
        bindings = check_same_bindings(net, snet)
        for place in snet.place():  # SNAKES' fastest setting: no type checks (tcpn checks)
            place.checker(st.tAll)
        backends = set()
        for engine in engines:  # build (or load) the native modules before timing
            for built in (net, timed_net):
                backends.add((engine, Simulator(built, engine=engine).native.backend))
        runs: list[tuple[float, ...]] = []
        for seed in range(args.repeats):  # interleaved, so load changes hit all of them
            row: list[float] = [snakes_rate(snet, args.snakes_firings, seed)]
            for engine in engines:
                firings = args.tcpn_firings if engine == "python" else args.native_firings
                row += [tcpn_rate(net, firings, seed, engine),
                        tcpn_rate(timed_net, firings, seed, engine)]
            runs.append(tuple(row))
        medians = [statistics.median(column) for column in zip(*runs, strict=True)]
        theirs, ours = medians[0], medians[1::2]
        with_time = medians[2::2]
        best = max(ours) / theirs
        worst = min(worst, best)
        verdict = "[green]ok[/]" if best >= FLOOR else "[red]below[/]"
        cells = [name, str(bindings)]
        for rate in ours:
            cells += [f"{rate:,.0f}", f"{rate / theirs:,.1f}x"]
        speed.add_row(*cells, f"{theirs:,.0f}", verdict)
        runs_by = ", ".join(f"{e}: {b}" for e, b in sorted(backends) if e != "python")
        if runs_by:
            speed.caption = ((speed.caption + "; ") if speed.caption else "") + \
                f"{name}: {runs_by}"
        timed.add_row(name, *(f"{x:,.0f}" for pair in zip(ours, with_time, strict=True)
                              for x in pair),
                      *(f"{t / u:.2f}" for u, t in zip(ours, with_time, strict=True)),
                      *(f"{t / theirs:,.1f}x" for t in with_time))
    console.print(speed)
    console.print(timed)
    console.print(f"worst tcpn/SNAKES ratio (fastest engine per net): {worst:,.1f}x "
                  f"(floor {FLOOR:.0f}x)")
    return 0 if worst >= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
