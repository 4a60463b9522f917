"""The symmetry reduction of identical flows against the unreduced answer.

Every comparison counts the orbits of the *unreduced* space by its own canonical form
(the smallest ``repr`` of a state's images, computed here, not by the explorer's content
numbers), so a canonical form that is not a function of the orbit, or a renaming that is
not an automorphism, makes these tests fail (``test_a_wrong_canonical_form_is_caught``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.models.properties import PROPERTIES, register_property
from tcpn.models.scenario import parse_scenario
from tcpn.models.verification.check import property_net, verify, verify_all
from tcpn.models.verification.flow_symmetry import asymmetric_atom, flow_symmetry, lift_evidence
from tcpn.petrinets.checking.formulas import AG, Predicate
from tcpn.petrinets.checking.verdicts import Evidence
from tcpn.petrinets.statespace.paths import Step
from tcpn.petrinets.statespace.space import StateSpace
from tcpn.petrinets.statespace.symmetry import IDENTITY, Renaming, Symmetry, SymmetryIndex

TWO = Path(__file__).parents[1] / "scenarios/verification/two_flows.yaml"

THREE = """
name: three_flows
links:
  - {a: A, b: R, rate_bps: 10.0e+6, delay_s: 0.002}
  - {a: B, b: R, rate_bps: 10.0e+6, delay_s: 0.002}
  - {a: C, b: R, rate_bps: 10.0e+6, delay_s: %s}
  - {a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.010, queue: {kind: drop_tail, limit: 4}}
tcp: {segment_size_bytes: 1000, handshake: false}
flows:
  - {id: f0, src: A, dst: D, variant: newreno, start_s: 0.0, bytes: %d}
  - {id: f1, src: B, dst: D, variant: newreno, start_s: 0.0, bytes: %d}
  - {id: f2, src: C, dst: D, variant: %s, start_s: 0.0, bytes: %d}
horizon_s: 30.0
"""


DUMBBELL = """
name: dumbbell2
links:
  - {a: S0, b: R1, rate_bps: 10.0e+6, delay_s: 0.002}
  - {a: S1, b: R1, rate_bps: 10.0e+6, delay_s: 0.002}
  - {a: R1, b: R2, rate_bps: 1.0e+6, delay_s: 0.010, queue: {kind: drop_tail, limit: 4}}
  - {a: R2, b: D0, rate_bps: 10.0e+6, delay_s: 0.001}
  - {a: R2, b: D1, rate_bps: 10.0e+6, delay_s: 0.001}
tcp: {segment_size_bytes: 1000, handshake: true}
flows:
  - {id: f0, src: S0, dst: D0, variant: sack, start_s: 0.0, bytes: 1000}
  - {id: f1, src: S1, dst: D1, variant: sack, start_s: 0.0, bytes: 1000}
horizon_s: 30.0
"""


def three(segments: int, delay_c: str = "0.002", variant_c: str = "newreno") -> Any:
    size = 1000 * segments
    return parse_scenario(THREE % (delay_c, size, size, variant_c, size))


def _form(marking: dict[str, Any], clock: float) -> str:
    return repr((clock, sorted((place, sorted(repr(t) for t in tokens))
                               for place, tokens in marking.items())))


def orbit(space: StateSpace, state: int, symmetry: Symmetry) -> str:
    """The orbit of ``state`` by a canonical form of this test's own."""
    marking, clock = space.marking(state), space.clock(state)
    return min(_form(e.marking(marking), clock) for e in symmetry.elements)


def orbits(space: StateSpace, symmetry: Symmetry, states: Any = None) -> set[str]:
    return {orbit(space, s, symmetry)
            for s in (range(space.n_states) if states is None else states)}


CASES = [  # scenario, segments, data losses, ack losses, clock
    (TWO, 2, 1, 0, "absolute"),
    (TWO, 2, 1, 1, "relative"),
    (TWO, 3, 1, 0, "absolute"),
    ("three", 1, 1, 0, "absolute"),
    # the larger cases (1-2 CPU minutes each) run with -m slow
    pytest.param("three", 2, 1, 0, "relative", marks=pytest.mark.slow),
    pytest.param("dumbbell", 1, 1, 1, "relative",  # distinct receivers, handshake, SACK
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("scenario", "segments", "losses", "acks", "clock"), CASES)
def test_reduced_space_is_the_orbits_of_the_unreduced(scenario: Any, segments: int,
                                                      losses: int, acks: int,
                                                      clock: str) -> None:
    source = three(segments) if scenario == "three" else \
        parse_scenario(DUMBBELL) if scenario == "dumbbell" else scenario
    prepared = property_net(source, segments=segments, losses=losses, ack_losses=acks,
                            clock=clock)
    symmetry = flow_symmetry(prepared.verification)
    assert len(symmetry) == (6 if scenario == "three" else 2)
    full = prepared.verification.explore()
    # every state checked to be mapped onto its images' successors (an automorphism)
    reduced = prepared.verification.explore(symmetry=symmetry, shift_checks=None)
    assert full.complete and reduced.complete
    assert orbits(full, symmetry) == orbits(reduced, symmetry)
    assert reduced.n_states == len(orbits(full, symmetry)) < full.n_states
    # dead markings: the same up to exchanging flows
    assert orbits(full, symmetry, full.dead_markings()) == \
        orbits(reduced, symmetry, reduced.dead_markings())


@pytest.mark.parametrize(("scenario", "segments", "flow"), [(TWO, 2, None),
                                                             ("three", 1, None),
                                                             pytest.param("three", 1, "f1",
                                                                          marks=pytest.mark.slow)])
def test_every_property_answers_as_unreduced(scenario: Any, segments: int,
                                             flow: str | None) -> None:
    source = three(segments) if scenario == "three" else scenario
    names = (["delivered_once_in_order", "no_deadlock_but_completion", "completes",
              "flight_within_windows", "queue_within_limit", "ssthresh_at_least_2"]
             if flow else ["all_flows_complete"])
    for name in names:
        plain = verify(source, name, segments=segments, losses=1, ack_losses=1, flow=flow)
        reduced = verify(source, name, segments=segments, losses=1, ack_losses=1, flow=flow,
                         symmetry=True)
        assert (name, reduced.answer) == (name, plain.answer)
        assert reduced.states < plain.states and reduced.symmetry


@pytest.fixture
def nothing_lost_twice() -> Any:
    """A symmetric property that fails: no segment is lost and no flow completes before
    the other has sent all its segments (reads every flow alike)."""
    @register_property("test_sym_no_loss", "nothing is lost", places=("app",), cross=True)
    def _no_loss(flow: Any) -> Any:
        every = flow.flows

        def fine(marking: Any, _clock: float) -> bool:
            return sum(each.lost(marking) for each in every) == 0
        return AG(Predicate("nothing lost", fine))
    yield "test_sym_no_loss"
    del PROPERTIES["test_sym_no_loss"]


def test_counterexample_is_lifted_and_replays(nothing_lost_twice: str) -> None:
    plain = verify(three(2), nothing_lost_twice, segments=2, losses=1)
    reduced = verify(three(2), nothing_lost_twice, segments=2, losses=1, symmetry=True)
    assert plain.answer == reduced.answer == "false"
    assert reduced.verdict is not None and reduced.verdict.evidence is not None
    assert sum(len(v) for v in reduced.lost.values()) == 1  # a real path: one loss


def test_every_quotient_path_lifts_to_a_real_path() -> None:
    """Shortest paths to every state of the reduced space, lifted: each is a firing
    sequence of the net (replayed in the simulator) whose end is in the state's orbit."""
    prepared = property_net(three(1), segments=1, losses=1)
    symmetry = flow_symmetry(prepared.verification)
    reduced = prepared.verification.explore(symmetry=symmetry)
    full = prepared.verification.explore()
    real_states = {_form(full.marking(s), full.clock(s)) for s in range(full.n_states)}
    swapped = 0
    for state in range(0, reduced.n_states, 3):
        steps = [Step(t, b, {}) for t, b in reduced.path_to(state)]
        lifted = lift_evidence(reduced, Evidence(stem=steps))
        path = [(s.transition, s.binding) for s in lifted.stem]
        prepared.replay(path)
        end = lifted.stem[-1].marking if lifted.stem else full.marking(0)
        clock = lifted.stem[-1].clock if lifted.stem else 0.0
        assert _form(end, reduced.clock(state)) in real_states
        assert min(_form(e.marking(end), reduced.clock(state)) for e in symmetry.elements) \
            == orbit(reduced, state, symmetry)
        swapped += [s.transition for s in lifted.stem] != [t for t, _b in
                                                          reduced.path_to(state)]
        del clock
    assert swapped > 0  # some paths needed a renaming: the lifting was exercised


def test_a_wrong_canonical_form_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A canonical form that is not a function of the orbit (here: always the first
    exchange's image) gives a space that is not the orbits of the unreduced one."""
    prepared = property_net(TWO, segments=2, losses=1)
    symmetry = flow_symmetry(prepared.verification)
    full = prepared.verification.explore()
    monkeypatch.setattr(SymmetryIndex, "canonical",
                        lambda self, store, key: self.image_key(store, key, 1))
    wrong = prepared.verification.explore(symmetry=symmetry)
    assert wrong.n_states != len(orbits(full, symmetry)) or \
        orbits(wrong, symmetry, wrong.dead_markings()) != \
        orbits(full, symmetry, full.dead_markings())


def test_a_renaming_that_is_no_automorphism_is_refused() -> None:
    """Exchanging the flows' places but not the packets' flow numbers is no symmetry."""
    prepared = property_net(TWO, segments=2, losses=1)
    right = flow_symmetry(prepared.verification).elements[1]
    wrong = Renaming("places only", right.places, right.transitions)
    with pytest.raises(InputError, match="not an automorphism"):
        prepared.verification.explore(symmetry=Symmetry((IDENTITY, wrong)),
                                      shift_checks=None)


def test_refusals_name_what_is_at_fault() -> None:
    with pytest.raises(InputError, match="no two flows are identical"):
        verify(three(1, variant_c="tahoe").model_copy(
            update={"flows": three(1, variant_c="tahoe").flows[1:]}),
            "all_flows_complete", segments=1, symmetry=True)
    # C's link is slower: only f0 and f1 are exchanged; with f0 named, nothing is left
    slow = property_net(three(1, delay_c="0.003"), segments=1).verification
    assert "{f0, f1}" in flow_symmetry(slow).description and len(flow_symmetry(slow)) == 2
    with pytest.raises(InputError, match="exchanging f1 and f2 maps link B->R onto C->R, "
                                         "whose rate, delay"):
        flow_symmetry(slow, fixed=(0,))
    with pytest.raises(InputError, match="speaks of flow f0"):
        verify(TWO, "completes", segments=2, flow="f0", symmetry=True)
    with pytest.raises(InputError, match="tells exchanged flows apart"):
        verify(TWO, "no_flow_starves", segments=2, symmetry=True)
    results = verify_all(TWO, "all", segments=2, flow="f0", symmetry=False)
    assert results  # the unreduced check still runs every property


def test_identical_classes_ignore_a_different_flow() -> None:
    """f2 runs Tahoe: only f0 and f1 are exchanged (2 elements), and a property of f2
    keeps the reduction."""
    prepared = property_net(three(1, variant_c="tahoe"), segments=1, losses=1)
    symmetry = flow_symmetry(prepared.verification)
    assert len(symmetry) == 2 and "{f0, f1}" in symmetry.description
    plain = verify(three(1, variant_c="tahoe"), "completes", segments=1, losses=1, flow="f2")
    reduced = verify(three(1, variant_c="tahoe"), "completes", segments=1, losses=1,
                     flow="f2", symmetry=True)
    assert reduced.answer == plain.answer and reduced.states < plain.states


def test_cli_symmetry_answers_and_refuses() -> None:
    done = run_tcpn("check", TWO, "--property", "all_flows_complete", "--segments", "2",
                    "--losses", "1", "--symmetry")
    assert done.returncode == 0, done.stderr
    assert "[states are orbits: exchanges of identical flows {f0, f1}]" in done.stdout
    refused = run_tcpn("check", TWO, "--property", "completes", "--flow", "f0",
                       "--segments", "2", "--symmetry")
    assert refused.returncode == 3
    assert "speaks of flow f0" in refused.stderr and "Traceback" not in refused.stderr


def test_a_per_flow_formula_keeps_only_its_stabiliser() -> None:
    """The atoms check tells a formula about f0 apart under the exchanges that move f0,
    and accepts it under those of f1 and f2 alone."""
    prepared = property_net(three(1), segments=1, losses=1, flow="f0")
    formula = PROPERTIES["delivered_once_in_order"].formula(prepared.flow)
    every = flow_symmetry(prepared.verification)
    found = asymmetric_atom(prepared.verification.explore(symmetry=every), formula, every)
    assert found is not None and "f0" in found
    kept = flow_symmetry(prepared.verification, fixed=(0,))
    assert len(kept) == 2 and "{f1, f2}" in kept.description
    assert asymmetric_atom(prepared.verification.explore(symmetry=kept), formula, kept) is None
