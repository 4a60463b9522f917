"""Budgets that hold: a search stops at a share of what the process may really use (its
cgroup's limit, ``ulimit -v``, the memory available) with ``unknown`` naming the limit,
never a ``MemoryError`` exit or a killed process."""

from __future__ import annotations

import ast
import re
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tcpn.petrinets.colours import UNIT
from tcpn.petrinets.exchange.loading import built_net, save_net
from tcpn.petrinets.net import PetriNet, Place, Transition
from tcpn.petrinets.statespace.memory import DEFAULT_SHARE, MemoryBudget, usable_memory

TCPN = str(Path(sys.executable).parent / "tcpn")
#: What the searches below may take beyond what the process holds once it has imported
#: what ``tcpn check`` imports: small enough for a test, large enough for the interpreter.
HEADROOM_BYTES = 300 << 20


def unbounded_net(folder: Path) -> Path:
    """``folder/model.pnml``: three places whose one token doubles at each firing, so
    the states never end (every marking (a, b, c) of positive counts is reachable)."""
    net = PetriNet("grow")
    for place in ("a", "b", "c"):
        net.add_place(Place(place, UNIT, initial=[()]))
        net.add_transition(Transition(f"double_{place}"))
        net.add_input(place, f"double_{place}", "()")
        net.add_output(place, f"double_{place}", "()", count=2)
    folder.mkdir(exist_ok=True)
    return save_net(built_net(net, "grow"), folder / "model.pnml")


@pytest.fixture(scope="module")
def address_space_limit() -> int:
    """An RLIMIT_AS (``ulimit -v``) of :data:`HEADROOM_BYTES` above the virtual size of
    a process that has imported what ``tcpn check`` imports."""
    probe = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import psutil, tcpn.cli, tcpn.reports.checks.formulas
        import tcpn.petrinets.checking.contest.examinations
        import tcpn.petrinets.exchange.loading, tcpn.petrinets.statespace.space
        print(psutil.Process().memory_info().vms)""")],
        capture_output=True, text=True, check=True, timeout=120)
    return int(probe.stdout) + HEADROOM_BYTES


def limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds mappings on Linux")
def test_check_of_an_unbounded_net_under_ulimit_v_answers_unknown_naming_it(
        tmp_path, address_space_limit):
    """``ulimit -v`` is the limit the default budget comes from: ``tcpn check`` answers
    UNKNOWN naming it (exit 1, as any unknown), never ``MemoryError`` (exit 70) or a
    killed process (before: exit 70 after the address space ran out)."""
    net = unbounded_net(tmp_path)
    done = subprocess.run([TCPN, "check", str(net), "--ctl", "AG !deadlock",
                           "--max-states", "1000000000"], capture_output=True, text=True,
                          timeout=600, preexec_fn=lambda: limited(address_space_limit))
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr and "MemoryError" not in done.stdout
    line = done.stdout.strip()
    assert line.startswith("formula 1: UNKNOWN  AG !deadlock"), line
    assert "memory budget reached (" in line and \
        f"{DEFAULT_SHARE * 100:.0f} % of what RLIMIT_AS (ulimit -v) left)" in line, line


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds mappings on Linux")
def test_a_memory_error_inside_a_search_is_an_unknown_naming_the_limit(
        tmp_path, address_space_limit):
    """A budget larger than the limit (a share of 100: the search never stops at it) lets
    the allocation fail: ``check`` answers unknown naming RLIMIT_AS, and the contest's
    examinations say CANNOT_COMPUTE; the process goes on."""
    net = unbounded_net(tmp_path)
    script = textwrap.dedent(f"""
        from tcpn.petrinets.statespace import memory
        from tcpn.petrinets.checking.check import check
        from tcpn.petrinets.checking.contest.examinations import check_examinations
        from tcpn.petrinets.exchange.loading import load_net
        memory.DEFAULT_SHARE = 100.0
        verdict = check(load_net({str(net)!r}).net, "AG !deadlock", max_states=None)
        print(verdict.answer, verdict.reason, sep="|")
        lines = check_examinations({str(net)!r}, ["ReachabilityDeadlock", "StateSpace"],
                                   max_states=10**9)
        print(lines["ReachabilityDeadlock"], lines["StateSpace"][0], sep="|")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, preexec_fn=lambda: limited(address_space_limit))
    assert done.returncode == 0, done.stderr
    checked, examined = done.stdout.strip().splitlines()
    answer, reason = checked.split("|")
    assert answer == "unknown"
    assert reason.startswith("memory budget reached: an allocation failed (MemoryError) "
                             "under RLIMIT_AS (ulimit -v), which leaves "), reason
    assert examined == ("['FORMULA ReachabilityDeadlock CANNOT_COMPUTE']|"
                        "STATE_SPACE STATES CANNOT_COMPUTE")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds mappings on Linux")
def test_a_budget_asked_above_the_limit_is_held_to_the_limit_and_named(
        tmp_path, address_space_limit):
    """A caller asking for a terabyte (the contest runner sized its workers on the
    machine's memory, not on what was free) under ``ulimit -v``: the P/T search stops at
    the default share of what RLIMIT_AS leaves, not at a ``MemoryError`` or a kill, and
    each CANNOT_COMPUTE is told that budget (``tcpn check --examination`` prints it on
    stderr); an answer the states found prove is still given."""
    net = unbounded_net(tmp_path)
    script = textwrap.dedent(f"""
        from tcpn.petrinets.checking.contest.examinations import check_examinations
        reasons = {{}}
        lines = check_examinations({str(net)!r}, ["StateSpace", "OneSafe",
                                   "ReachabilityDeadlock"], max_states=10**9,
                                   max_memory_bytes=1 << 40,
                                   on_reason=lambda ident, why: reasons.setdefault(ident, why))
        print(lines["StateSpace"][0], lines["OneSafe"][0], lines["ReachabilityDeadlock"][0],
              sep="|")
        print(reasons["StateSpace"], reasons["ReachabilityDeadlock"], sep="|")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, preexec_fn=lambda: limited(address_space_limit))
    assert done.returncode == 0, done.stderr
    examined, reasons = done.stdout.strip().splitlines()
    assert examined == ("STATE_SPACE STATES CANNOT_COMPUTE|FORMULA OneSafe FALSE TECHNIQUES "
                        "EXPLICIT SEQUENTIAL_PROCESSING|FORMULA ReachabilityDeadlock "
                        "CANNOT_COMPUTE")
    for reason in reasons.split("|"):
        assert reason.startswith("the state space is incomplete: memory budget reached: "), \
            reason
        assert f"{DEFAULT_SHARE * 100:.0f} % of what RLIMIT_AS (ulimit -v) left" in reason
    cli = subprocess.run([TCPN, "check", str(net), "--examination", "StateSpace",
                          "--max-states", "1000000000"], capture_output=True, text=True,
                         timeout=600, preexec_fn=lambda: limited(address_space_limit))
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.splitlines()[0] == "STATE_SPACE STATES CANNOT_COMPUTE"
    assert cli.stderr.startswith("StateSpace: CANNOT_COMPUTE: the state space is incomplete: "
                                 "memory budget reached: "), cli.stderr
    assert "RLIMIT_AS (ulimit -v) left" in cli.stderr


def _past_allowance(budget: MemoryBudget) -> int:
    """An allocation that takes ``budget`` past its allowance. Measured against
    MemAvailable on a shared machine, others may free memory after the budget is made (CI
    saw it): the allowance, plus what became available since, plus 5 % for what is freed
    while the check runs."""
    now = usable_memory().by_limit
    freed = max([0] + [now[name] - before for name, before in budget.start.items()
                       if name in now])
    return budget.allowance_bytes + freed + budget.allowance_bytes // 20


def test_a_budget_asked_is_capped_by_what_the_process_may_use():
    """``MemoryBudget.of(n)`` keeps the default allowance beside ``n``: past it, the
    budget is exceeded and names the real limit, whatever ``n``."""
    default = MemoryBudget.default()
    asked = MemoryBudget.of(1 << 60)
    assert asked.max_rss_bytes == 1 << 60 and asked.source == default.source
    assert abs(asked.allowance_bytes - default.allowance_bytes) < 0.05 * default.allowance_bytes
    assert not asked.exceeded()
    assert asked.exceeded(_past_allowance(asked))
    assert MemoryBudget.of(1).exceeded()
    assert MemoryBudget.of(1).reason() == "memory budget reached: resident memory above 1 bytes"


@pytest.mark.parametrize(("layout", "limit_name"), [
    ("v2", "memory.max"), ("v1", "memory.limit_in_bytes")])
def test_usable_memory_reads_the_tightest_cgroup_limit(tmp_path, layout, limit_name):
    """The cgroup of ``/proc/self/cgroup`` and its parents: the level that leaves least
    (limit less usage) is the limit named; a level without a limit ("max", or v1's
    largest number) is skipped."""
    root = tmp_path / "cgroup"
    usage_name = "memory.current" if layout == "v2" else "memory.usage_in_bytes"
    mount = root if layout == "v2" else root / "memory"
    levels = {"": ("max" if layout == "v2" else "9223372036854771712", "5000000000"),
              "jobs": ("900000000", "300000000"),  # leaves 600 MB: the tightest
              "jobs/tcpn": ("2000000000", "100000000")}
    for path, (limit, usage) in levels.items():
        (mount / path).mkdir(parents=True, exist_ok=True)
        (mount / path / limit_name).write_text(limit + "\n")
        (mount / path / usage_name).write_text(usage + "\n")
    if layout == "v2":
        (root / "cgroup.controllers").write_text("memory\n")
    proc = tmp_path / "proc-cgroup"
    proc.write_text("0::/jobs/tcpn\n" if layout == "v2" else
                    "4:memory:/jobs/tcpn\n3:cpu:/\n")
    usable = usable_memory(root, proc)
    expected = f"the cgroup's {limit_name} ({mount / 'jobs' / limit_name})"
    assert usable.by_limit[expected] == 600_000_000
    assert usable.bytes == min(usable.by_limit.values())
    if usable.bytes == 600_000_000:  # unless the machine has less available than that
        assert usable.source == expected


def test_the_default_budget_is_a_share_of_what_is_usable_and_names_it():
    usable = usable_memory()
    budget = MemoryBudget.default()
    assert abs(budget.allowance_bytes - DEFAULT_SHARE * usable.bytes) < 0.05 * usable.bytes
    assert budget.source in usable.by_limit
    assert not budget.exceeded()
    assert budget.exceeded(_past_allowance(budget))
    assert budget.reason() == (f"memory budget reached: {budget.allowance_bytes / 1e6:,.0f} "
                               f"MB, {DEFAULT_SHARE * 100:.0f} % of what {budget.source} left")


SCENARIO = """\
name: {name}
horizon_s: 10
nodes: [S, R, D]
links:
  - {{a: S, b: R, rate_bps: 10e6, delay_s: 0.01}}
  - {{a: R, b: D, rate_bps: 1e6, delay_s: 0.01}}
{tcp}flows:
  - {{src: S, dst: D, variant: {variant}}}
"""


def scenario_file(folder: Path, name: str, variant: str = "newreno", tcp: str = "") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(SCENARIO.format(name=name, variant=variant, tcp=tcp))
    return path


def test_tcp_l_reports_count_in_the_cost_and_a_nanosecond_interval_is_refused(tmp_path):
    """Every report of a TCP-L receiver is an event: one every 1e-9 s over 10 s is 10^10,
    refused before the run (exit 3) naming the field and the estimate; it was accepted and
    the run never ended."""
    from tcpn.models.scenario import load_scenario

    default = load_scenario(scenario_file(tmp_path, "tcpl", "tcp_l"))
    assert default.cost_by_field()[("flows", 0, "params", "report_interval_s")] == 11
    path = scenario_file(tmp_path, "tcpl_fast", "tcp_l, params: {variant: tcp_l, "
                                                 "report_interval_s: 1e-9}")
    done = subprocess.run([TCPN, "scenario", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    assert f"{path}:8: flows[0].params.report_interval_s: too many events: an estimated " \
        "10,000,008,505 packet-hops is over the limit packet_hops = 1000000000" in \
        done.stderr.replace("\n", "")
    assert "10,000,000,001 of them TCP-L reports" in done.stderr.replace("\n", "")


def test_an_initial_window_is_counted_and_bounded_by_tcps_largest_window(tmp_path):
    """The initial window goes out at once: beyond what the links carry its packets are
    events of their own, named after the field; past TCP's largest window (2^30 bytes,
    RFC 7323) no receiver can advertise it and the scenario is refused (10^7 segments with
    1 TiB buffers was accepted, and its run took hours)."""
    from tcpn.errors import InputError
    from tcpn.limits import using_limits
    from tcpn.models.scenario import load_scenario

    buffers = "rcv_buf_bytes: 1099511627776, snd_buf_bytes: 1099511627776"
    huge = scenario_file(tmp_path, "huge", tcp=f"tcp: {{initial_cwnd_segments: 10000000, "
                                              f"{buffers}}}\n")
    with pytest.raises(InputError, match=r"tcp\.initial_cwnd_segments: an initial window of "
                       r"10,000,000 segments of 536 B is more than TCP's largest window"):
        load_scenario(huge)
    large = scenario_file(tmp_path, "large", tcp=f"tcp: {{initial_cwnd_segments: 1000000, "
                                                f"{buffers}}}\n")
    costs = load_scenario(large).cost_by_field()
    assert 990_000 < costs[("tcp", "initial_cwnd_segments")] < 1_000_000
    with using_limits(packet_hops=1_000_000), \
            pytest.raises(InputError, match=r"tcp\.initial_cwnd_segments: too many events: "
                          r"an estimated 1,00\d,\d\d\d packet-hops is over the limit"):
        load_scenario(large)


def nested_untils(depth: int) -> str:
    """``depth`` nested ``U`` alternating sides over three places: its tableau grows
    exponentially (depth 10 took 54 s to translate, 20 never ended)."""
    formula = "tokens(a) >= 1"
    for level in range(1, depth + 1):
        atom = f"tokens({'abc'[level % 3]}) >= 1"
        formula = f"({atom} U {formula})" if level % 2 else f"({formula} U {atom})"
    return formula


def test_an_ltl_translation_past_the_time_limit_answers_unknown_naming_it(tmp_path):
    """The tableau and the automaton's reductions read the clock: ``--time-limit 2`` on
    20 nested ``U`` ends in about 2 s with UNKNOWN naming the time limit (it ran until
    killed: the limit bounded only the exploration)."""
    net = PetriNet("ring")
    for place in "abc":
        net.add_place(Place(place, UNIT, initial=[()] if place == "a" else []))
    for source, target in ("ab", "bc", "ca"):
        net.add_transition(Transition(source + target))
        net.add_input(source, source + target, "()")
        net.add_output(target, source + target, "()")
    path = save_net(built_net(net, "ring"), tmp_path / "ring.pnml")
    done = subprocess.run([TCPN, "check", str(path), "--ltl", nested_untils(20),
                           "--time-limit", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "formula 1: UNKNOWN" in done.stdout
    assert re.search(r"; time budget reached \(\d+(?:\.\d+)? s left for the LTL check\) while "
                     r"building the formula's tableau \([\d,]+ automaton states so far\)\)$",
                     done.stdout.strip()), done.stdout
    seconds = float(done.stdout.rsplit(" states, ", 1)[1].split(" s;")[0])
    assert 1.9 < seconds < 4.0


def fan(branches: int) -> PetriNet:
    """A token in place ``p0`` that one of ``branches`` transitions moves to a place of its
    own: ``branches + 1`` places and states, two levels deep."""
    net = PetriNet("fan")
    net.add_place(Place("p0", UNIT, initial=[()]))
    for i in range(1, branches + 1):
        net.add_place(Place(f"p{i}", UNIT))
        net.add_transition(Transition(f"t{i}"))
        net.add_input("p0", f"t{i}", "()")
        net.add_output(f"p{i}", f"t{i}", "()")
    return net


def traced_peak(work: str, setup: str = "") -> tuple[Any, int]:
    """What the expression ``work`` evaluates to (its ``repr`` read back) and the peak of
    the memory it allocated (tracemalloc), after the statement ``setup``, in a process of
    its own: the heap a large search leaves behind would change the resident memory
    other tests measure."""
    script = textwrap.dedent(f"""
        import sys, tracemalloc
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_budgets import fan
        from tcpn.petrinets.checking.contest.examinations import _global
        from tcpn.petrinets.statespace.ptspace import explore_pt, pt_net
        from tcpn.petrinets.statespace.space import explore
        {setup}
        tracemalloc.start()
        found = {work}
        print(repr(found))
        print(tracemalloc.get_traced_memory()[1])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=600)
    value, peak = done.stdout.strip().splitlines()
    return ast.literal_eval(value), int(peak)


def test_a_pt_net_of_3000_places_and_transitions_is_explored_without_dense_matrices():
    """Five dense 3,000 x 3,000 int64 matrices took 360 MB (a contest model of 10^5
    places and transitions: 400 GB); sparse, the search holds the marking store (9 MB,
    doubled as it grows) and a bounded part of a batch's successor rows (all of one
    batch at once, edges x places int64: 144 MB)."""
    found, peak = traced_peak("(lambda s: (s.complete, len(s), s.n_edges))("
                              "explore_pt(pt_net(fan(3000))))")
    assert found == (True, 3001, 3000)
    assert peak < 100 << 20, peak


def test_the_global_examinations_read_a_coloured_space_a_place_at_a_time():
    """StateSpace, OneSafe and StableMarking on a coloured space: no states x places
    matrix (8 MB here, 64 GB for 2 million states of 4,000 places), the same answers."""
    lines, peak = traced_peak("[line for e in ('StateSpace', 'OneSafe', 'StableMarking') "
                              "for line in _global(e, space)]", "space = explore(fan(1000))")
    assert lines == [f"{what} TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING" for what in (
        "STATE_SPACE STATES 1001", "STATE_SPACE TRANSITIONS 1000",
        "STATE_SPACE MAX_TOKEN_IN_PLACE 1", "STATE_SPACE MAX_TOKEN_PER_MARKING 1",
        "FORMULA OneSafe TRUE", "FORMULA StableMarking FALSE")]
    assert peak < 1001 * 1001 * 8, peak  # the matrix alone; its columns and it: twice


def test_the_pt_search_counts_what_its_result_will_take_in_the_memory_budget(monkeypatch):
    """The P/T search reads the budget with the bytes that making its result allocates
    once it stops (the markings' copy, the edges joined): counted only as the search went,
    a contest model's search stopped at its budget and passed it by 250 MB making them."""
    from tcpn.petrinets.examples import token_ring
    from tcpn.petrinets.statespace.ptspace import explore_pt, pt_net

    asked: list[int] = []

    def exceeded(self: MemoryBudget, more_bytes: int = 0) -> bool:
        asked.append(more_bytes)
        return False

    monkeypatch.setattr(MemoryBudget, "exceeded", exceeded)
    space = explore_pt(pt_net(token_ring(500)))  # 500 states of 500 places
    assert len(space) == 500 and asked
    # the last reading, a few batches before the end, counts the markings found then
    assert max(asked) >= 250 * 500 * space.markings.itemsize
