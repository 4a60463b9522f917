"""Answers without the state space: a siphon empty at the start stays empty.

The siphon is checked against complete explorations of random P/T nets (every place it
names empty in every reachable marking, every transition it calls dead never fires, and
the set is the largest such siphon: each place left out is filled by a transition that
needs nothing from the set). Then a net of 20,000 places whose space is beyond a small
budget (``ulimit -v``): the exploration ends in CANNOT_COMPUTE naming the budget, and
StableMarking, QuasiLiveness, Liveness, OneSafe and UpperBounds are still answered, from
the net's structure, as counted by hand.
"""

from __future__ import annotations

import csv
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from wide_nets import write_cycles_model

from tcpn.petrinets.checking.contest.examinations import load_model
from tcpn.petrinets.checking.contest.siphons import empty_siphon
from tcpn.petrinets.statespace.ptspace import PTNet, explore_pt


def random_net(seed: int, places: int = 7, transitions: int = 6) -> PTNet:
    """A random P/T net with sparse input, output, read, inhibitor and reset arcs."""
    rng = np.random.default_rng(seed)

    def arcs(density: float, most: int = 2) -> np.ndarray:
        return (rng.random((transitions, places)) < density) * rng.integers(
            1, most + 1, (transitions, places))

    return PTNet(tuple(f"p{i}" for i in range(places)),
                 tuple(f"t{i}" for i in range(transitions)), pre=arcs(0.25), post=arcs(0.25),
                 test=arcs(0.05, 1), inhibit=arcs(0.05, 3), reset=arcs(0.03, 1) > 0,
                 initial=(rng.random(places) < 0.4) * rng.integers(1, 3, places))


@pytest.mark.parametrize("seed", range(60))
def test_the_empty_siphon_holds_on_every_reachable_marking(seed):
    net = random_net(seed)
    space = explore_pt(net, max_states=2_000)
    if not space.complete:
        pytest.skip("unbounded random net")
    found = empty_siphon(net)
    markings = np.asarray(space.markings.todense() if hasattr(space.markings, "todense")
                          else space.markings)
    assert not markings[:, found.places].any()
    fired = np.zeros(len(net.transitions), dtype=bool)
    fired[np.asarray(space.labels, dtype=np.int64)] = True
    assert not (fired & found.dead).any()
    # the largest: every place outside it, initially empty, is filled by a transition
    # that needs no token from the set
    needs = np.asarray(net.pre.maximum(net.test).todense()) > 0
    fills = np.asarray(net.post.todense()) > 0
    free = ~needs[:, found.places].any(axis=1)
    for p in np.flatnonzero((np.asarray(net.initial) == 0) & ~found.places):
        assert (fills[:, p] & free).any(), (seed, p)


def test_read_and_inhibitor_arcs_in_the_siphon():
    """q is empty: t reads q and fills q (dead, q stays empty); u is inhibited by r,
    which it fills: an inhibitor needs no token, so r leaves the siphon."""
    net = PTNet(("q", "r", "s"), ("t", "u"), pre=[[0, 0, 0], [0, 0, 1]],
                post=[[1, 0, 0], [0, 1, 0]], test=[[1, 0, 0], [0, 0, 0]],
                inhibit=[[0, 0, 0], [0, 1, 0]], reset=[[0, 0, 0], [0, 0, 0]],
                initial=np.array([0, 0, 1]))
    found = empty_siphon(net)
    assert found.places.tolist() == [True, False, False]
    assert found.dead.tolist() == [True, False]


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mcc"
#: shared P/T instances with a non-empty siphon empty at the start (and dead transitions
#: in two); under ``-m slow`` every P/T instance of at most 60,000 states
WITH_SIPHONS = ["LamportFastMutEx-PT-2", "Railroad-PT-005", "DBSingleClientW-PT-d0m04",
                "RingSingleMessageInMbox-PT-d0m005"]


def small_pt_instances() -> list[str]:
    if not SHARED.is_dir():
        return []
    with open(SHARED / "index.csv", newline="") as handle:
        return [row["instance"] for row in csv.DictReader(handle)
                if row["type"] == "PT" and int(row["states"]) <= 60_000]


def check_instance(instance: str, folder: Path) -> np.ndarray:
    """The instance's empty siphon (a place mask), checked against its complete space."""
    import tarfile

    with tarfile.open(SHARED / "instances" / f"{instance}.tgz") as archive:
        archive.extractall(folder, members=[archive.getmember(f"{instance}/model.pnml")],
                           filter="data")
    net = load_model(folder / instance / "model.pnml").net
    found = empty_siphon(net)
    space = explore_pt(net, max_states=200_000)
    assert space.complete
    columns = space.markings[:, np.flatnonzero(found.places)]
    assert not (columns.count_nonzero() if hasattr(columns, "count_nonzero")
                else np.asarray(columns).any())
    fired = np.zeros(len(net.transitions), dtype=bool)
    fired[np.asarray(space.labels, dtype=np.int64)] = True
    assert not (fired & found.dead).any()
    return found.places


@pytest.mark.parametrize("instance", WITH_SIPHONS if SHARED.is_dir() else [])
def test_the_siphons_of_contest_instances_stay_empty(instance, tmp_path):
    assert check_instance(instance, tmp_path).any()


@pytest.mark.slow
@pytest.mark.parametrize("instance", small_pt_instances())
def test_the_siphon_of_every_small_contest_instance_stays_empty(instance, tmp_path):
    check_instance(instance, tmp_path)


CYCLES, MARKED = 10_000, 18


@pytest.fixture(scope="module")
def wide_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10,000 two-place cycles a_i -> f_i -> b_i -> g_i -> a_i (20,000 places and
    transitions), the first 18 marked: 2^18 states, more than the budget below holds."""
    folder = tmp_path_factory.mktemp("wide_budget")
    write_cycles_model(folder, CYCLES, MARKED)
    bounds = ("<place-bound><place>b5</place></place-bound>",
              f"<place-bound><place>b{CYCLES - 1}</place><place>a{CYCLES - 2}</place>"
              "</place-bound>")
    (folder / "UpperBounds.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/">' + "".join(
            f"<property><id>wide-UpperBounds-{n:02d}</id><description>-</description>"
            f"<formula>{bound}</formula></property>" for n, bound in enumerate(bounds))
        + "</property-set>")
    return folder / "model.pnml"


#: the address space the worker may use beyond what it holds once tcpn is imported:
#: its budget is half of that (DEFAULT_SHARE), far below the 2^18 states' markings
HEADROOM_BYTES = 300 << 20


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds mappings on Linux")
def test_a_wide_net_beyond_a_small_budget_answers_what_its_structure_proves(wide_model):
    probe = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import psutil, tcpn.petrinets.checking.contest.examinations
        print(psutil.Process().memory_info().vms)""")],
        capture_output=True, text=True, check=True, timeout=120)
    limit = int(probe.stdout) + HEADROOM_BYTES
    script = textwrap.dedent(f"""
        import resource
        from tcpn.petrinets.checking.contest.examinations import check_examinations
        check_examinations({str(wide_model)!r}, ["StateSpace", "ReachabilityDeadlock",
            "QuasiLiveness", "Liveness", "OneSafe", "StableMarking", "UpperBounds"],
            time_limit_s=300, on_line=print,
            on_reason=lambda ident, reason: print("REASON", ident, reason))
        print("PEAK", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    technique = "TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING"
    for line in (f"FORMULA QuasiLiveness FALSE {technique} TOPOLOGICAL",
                 f"FORMULA Liveness FALSE {technique} TOPOLOGICAL",
                 f"FORMULA StableMarking TRUE {technique} TOPOLOGICAL",
                 f"FORMULA OneSafe TRUE {technique} STATE_EQUATION",
                 f"FORMULA wide-UpperBounds-00 1 {technique} STATE_EQUATION",
                 f"FORMULA wide-UpperBounds-01 0 {technique} TOPOLOGICAL",
                 "STATE_SPACE STATES CANNOT_COMPUTE",
                 "FORMULA ReachabilityDeadlock CANNOT_COMPUTE"):
        assert line in lines, (line, lines)
    reasons = [line for line in lines if line.startswith("REASON")]
    assert reasons and all("memory budget reached" in r and "RLIMIT_AS (ulimit -v)" in r
                           for r in reasons), reasons
    peak = int(next(line for line in lines if line.startswith("PEAK")).split()[1])
    assert peak < limit


def siphon_verdicts(instance: str, folder: Path) -> list[tuple[str, str, str]]:
    """``(formula id, what the siphon settles, the oracle's answer)`` for each formula of
    the instance the siphon settles and the oracle knows."""
    import tarfile

    from tcpn.petrinets.checking.contest.answers import read_answers
    from tcpn.petrinets.checking.contest.examinations import FORMULA_EXAMINATIONS, _renamed
    from tcpn.petrinets.checking.contest.properties import read_properties
    from tcpn.petrinets.checking.contest.siphons import decided_by_siphon

    with tarfile.open(SHARED / "instances" / f"{instance}.tgz") as archive:
        archive.extractall(folder, filter="data")
    folder = folder / instance
    model = load_model(folder / "model.pnml")
    empty = empty_siphon(model.net)
    found = []
    for examination in FORMULA_EXAMINATIONS:
        if examination == "UpperBounds":
            continue
        known = read_answers(folder, examination)
        source = folder / f"{examination}.xml"
        for prop in read_properties(source):
            formula = _renamed(prop, model, source).formula
            assert formula is not None
            settled = decided_by_siphon(formula, model.net, empty)
            if settled is not None and prop.id in known:
                found.append((prop.id, "TRUE" if settled else "FALSE", known[prop.id]))
    return found


@pytest.mark.parametrize("instance", ["RingSingleMessageInMbox-PT-d0m005"]
                         if SHARED.is_dir() else [])
def test_formulas_the_siphon_settles_agree_with_the_oracle(instance, tmp_path):
    """Token counts of its places are 0 and its dead transitions never fireable: the
    formulas these settle (25 of this instance's 96) give the contest's answers."""
    verdicts = siphon_verdicts(instance, tmp_path)
    assert len(verdicts) == 25
    assert [(i, got) for i, got, known in verdicts] == [(i, known) for i, _, known in verdicts]


@pytest.mark.slow
@pytest.mark.parametrize("instance", [*WITH_SIPHONS, "LamportFastMutEx-PT-3",
                                      "RingSingleMessageInMbox-PT-d0m010",
                                      "DBSingleClientW-PT-d0m05", "DBSingleClientW-PT-d1m04"]
                         if SHARED.is_dir() else [])
def test_formulas_the_siphon_settles_agree_with_the_oracle_everywhere(instance, tmp_path):
    verdicts = siphon_verdicts(instance, tmp_path)
    assert [(i, got) for i, got, known in verdicts] == [(i, known) for i, _, known in verdicts]
