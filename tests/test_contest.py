"""The Model Checking Contest's instances against the contest's oracle answers.

The default run checks every examination of a fixed sample (P/T and coloured instances,
with and without dead markings); ``-m slow`` runs every instance of ``../shared/data/mcc``
(parametrised per instance, so ``--slow-sample`` picks some). Archives are extracted into
pytest's cache directory, never into the project.

The answer files number formulas by their rank among the property file's ids in sorted
order (:mod:`tcpn.petrinets.checking.contest.answers`); every answer is compared, none is
excused.
"""

from __future__ import annotations

import csv
import os
import re
import tarfile
import tempfile
from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.petrinets.checking.contest.answers import answer_key, read_answers
from tcpn.petrinets.checking.contest.examinations import (
    EXAMINATIONS,
    check_examination,
    check_examinations,
)

#: Every examination on each: P/T and coloured twins, a net with dead markings
#: (Philosophers-PT-000005 has 2, QuasiCertifProtocol 47), one with none (LamportFastMutEx).
SAMPLE = ("Philosophers-PT-000005", "Philosophers-COL-000005", "LamportFastMutEx-PT-2",
          "QuasiCertifProtocol-PT-02", "DatabaseWithMutex-COL-02")
SLOW_TIME_LIMIT_S = 300.0


def _data(shared_dir: Path) -> Path:
    return shared_dir / "data" / "mcc"


@pytest.fixture(scope="module")
def mcc_cache(request) -> Path:
    return Path(request.config.cache.mkdir("mcc"))


def extracted(shared_dir: Path, cache: Path, instance: str) -> Path:
    """The instance's folder, extracted once into the cache (atomically)."""
    folder = cache / instance
    if not (folder / "model.pnml").is_file():
        staging = Path(tempfile.mkdtemp(dir=cache))
        with tarfile.open(_data(shared_dir) / "instances" / f"{instance}.tgz") as archive:
            archive.extractall(staging, filter="data")
        os.replace(staging / instance, folder)
        staging.rmdir()
    return folder


def disagreements(folder: Path, answers: dict[str, list[str]],
                  cannot_compute_is_wrong: bool = True) -> list[str]:
    """Answers that differ from the oracle's; a missing answer always counts, a
    CANNOT_COMPUTE (a budget reached, never a guess) unless ``cannot_compute_is_wrong`` is
    false."""
    wrong = []
    for examination, lines in answers.items():
        ours = dict(pair for line in lines if (pair := answer_key(line)) is not None)
        for key, expected in read_answers(folder, examination).items():
            if ours.get(key) == "CANNOT_COMPUTE" and not cannot_compute_is_wrong:
                continue
            if ours.get(key) != expected:
                wrong.append(f"{examination} {key}: tcpn {ours.get(key)}, oracle {expected}")
    return wrong


@pytest.mark.parametrize("instance", SAMPLE)
def test_sample_instance_answers_every_examination_like_the_oracle(shared_dir, mcc_cache,
                                                                  instance):
    folder = extracted(shared_dir, mcc_cache, instance)
    answers = check_examinations(folder / "model.pnml", list(EXAMINATIONS))
    assert all("CANNOT_COMPUTE" not in line for lines in answers.values() for line in lines)
    assert disagreements(folder, answers) == []
    assert sum(len(lines) for lines in answers.values()) == 7 * 16 + 5 + 4


def test_lines_are_the_contest_format(shared_dir, mcc_cache):
    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    lines = check_examination(folder / "model.pnml", "UpperBounds")
    assert len(lines) == 16
    assert all(re.fullmatch(r"FORMULA Philosophers-PT-000005-UpperBounds-\S+ \d+ "
                            r"TECHNIQUES [A-Z_ ]+", line) for line in lines)
    space = check_examination(folder / "model.pnml", "StateSpace")
    assert space[0].startswith("STATE_SPACE STATES 243 TECHNIQUES ")


def test_a_budget_gives_cannot_compute_not_a_guess(shared_dir, mcc_cache):
    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    lines = check_examination(folder / "model.pnml", "StateSpace", max_states=20)
    assert all(line.split()[2] == "CANNOT_COMPUTE" for line in lines)
    # Liveness: a random walk meets the philosophers' deadlock (no transition fires again)
    assert check_examination(folder / "model.pnml", "Liveness", max_states=20) == [
        f"FORMULA Liveness {read_answers(folder, 'Liveness')['Liveness']} TECHNIQUES "
        "EXPLICIT SEQUENTIAL_PROCESSING RANDOM_WALK"]
    # a formula is still answered when the states found prove it (EF p seen, AG p broken,
    # a place bound seen that the state equation allows no more than)
    answered = 0
    for examination in ("ReachabilityFireability", "CTLCardinality", "LTLFireability",
                        "UpperBounds"):
        known = read_answers(folder, examination)
        for line in check_examination(folder / "model.pnml", examination, max_states=20):
            key, answer = line.split()[1:3]
            assert answer in ("CANNOT_COMPUTE", known[key]), line
            answered += answer != "CANNOT_COMPUTE"
    assert 0 < answered < 64


def test_missing_property_file_and_unknown_names_are_input_errors(shared_dir, mcc_cache,
                                                                  tmp_path):
    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    (tmp_path / "model.pnml").write_bytes((folder / "model.pnml").read_bytes())
    with pytest.raises(InputError, match=r"CTLFireability\.xml"):
        check_examination(tmp_path / "model.pnml", "CTLFireability")
    text = (folder / "UpperBounds.xml").read_text()
    first = re.search(r"<place>([^<]+)</place>", text)
    assert first is not None
    (tmp_path / "UpperBounds.xml").write_text(text.replace(first.group(0),
                                                           "<place>nowhere</place>", 1))
    with pytest.raises(InputError, match=r"UpperBounds\.xml: formula .*: unknown place "
                                         "'nowhere'"):
        check_examination(tmp_path / "model.pnml", "UpperBounds")
    (tmp_path / "LTLCardinality.xml").write_text("<property-set><property><id>x</id>"
                                                 "<formula><globally/></formula></property>"
                                                 "</property-set>")
    with pytest.raises(InputError, match=r"line 1.*globally"):
        check_examination(tmp_path / "model.pnml", "LTLCardinality")


def _all_instances() -> list:
    index = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mcc" / \
        "index.csv"
    if not index.is_file():
        return []
    rows = sorted(csv.DictReader(index.open()), key=lambda r: int(r["states"]))
    return [pytest.param(r["instance"], id=r["instance"]) for r in rows]


@pytest.mark.slow
@pytest.mark.parametrize("instance", _all_instances())
def test_every_instance_like_the_oracle(shared_dir, mcc_cache, instance):
    folder = extracted(shared_dir, mcc_cache, instance)
    answers = check_examinations(folder / "model.pnml", list(EXAMINATIONS),
                                 time_limit_s=SLOW_TIME_LIMIT_S)
    assert disagreements(folder, answers, cannot_compute_is_wrong=False) == []


def _pt_instances() -> list:
    return [p for p in _all_instances() if "-PT-" in p.values[0]]


UPPER_BOUNDS_SAMPLE = ("RwMutex-PT-r0010w0500", "StigmergyElection-PT-07a", "FMS-PT-00002",
                       "ERK-PT-000010")


@pytest.mark.parametrize("instance", [
    pytest.param(p.values[0], id=p.values[0],
                 marks=() if p.values[0] in UPPER_BOUNDS_SAMPLE else pytest.mark.slow)
    for p in _pt_instances()])
def test_upper_bounds_from_fifty_states_and_the_state_equation_are_right(
        shared_dir, mcc_cache, instance):
    """Stopped after 50 states, a P/T place bound is answered where the most tokens seen,
    or a random walk, meet the state equation's bound (all 132 P/T instances: 1,378 of
    2,112 bounds by the states seen alone, none wrong); every answer given is the
    oracle's."""
    folder = extracted(shared_dir, mcc_cache, instance)
    known = read_answers(folder, "UpperBounds")
    given = 0
    for line in check_examination(folder / "model.pnml", "UpperBounds", max_states=50):
        key, answer = line.split()[1:3]
        if answer != "CANNOT_COMPUTE":
            given += 1
            assert answer == known[key], line
            assert line.endswith(("STATE_EQUATION", "STATE_EQUATION RANDOM_WALK"))
    assert given > 0 or instance not in UPPER_BOUNDS_SAMPLE


GLOBAL_SAMPLE = ("Philosophers-PT-000005", "NQueens-PT-05", "LamportFastMutEx-PT-2",
                 "AirplaneLD-PT-0010")


@pytest.mark.parametrize("instance", [
    pytest.param(p.values[0], id=p.values[0],
                 marks=() if p.values[0] in GLOBAL_SAMPLE else pytest.mark.slow)
    for p in _pt_instances()])
def test_one_safe_and_stable_marking_from_fifty_states_and_the_structure_are_right(
        shared_dir, mcc_cache, instance):
    """Stopped after 50 states, OneSafe and StableMarking are answered from the states
    found or the structure (all 132 P/T instances: 195 of 264, none wrong; 109 from the
    states alone); every answer given is the oracle's."""
    folder = extracted(shared_dir, mcc_cache, instance)
    answers = check_examinations(folder / "model.pnml", ["OneSafe", "StableMarking"],
                                 max_states=50)
    given = 0
    for examination, (line,) in answers.items():
        answer = line.split()[2]
        assert answer in ("CANNOT_COMPUTE", read_answers(folder, examination)[examination]), \
            line
        given += answer != "CANNOT_COMPUTE"
    assert given == 2 or instance not in GLOBAL_SAMPLE[:2]


#: (product states searched on the fly, product edges before the array product's first
#: search of a part of itself, growth between searches)
SEARCHES = {"arrays": (0, 10**18, 4), "on-the-fly": (10**9, 10**18, 4),
            "arrays-searched-while-growing": (0, 1, 1)}


@pytest.mark.parametrize("search", sorted(SEARCHES))
@pytest.mark.parametrize("instance", ["RwMutex-PT-r0010w0020", "QuasiCertifProtocol-PT-02",
                                      "DatabaseWithMutex-COL-02"])
def test_ltl_answers_like_the_oracle_with_every_search(shared_dir, mcc_cache, monkeypatch,
                                                       instance, search):
    """The LTL product searched in arrays only when whole, after every breadth-first
    layer, or on the fly only: every answer the oracle's (P/T and coloured spaces;
    QuasiCertifProtocol has dead markings)."""
    from tcpn.petrinets.checking import ltl
    from tcpn.petrinets.checking.ltl import product as ltl_product
    on_the_fly_states, first_check_edges, growth = SEARCHES[search]
    monkeypatch.setattr(ltl, "ON_THE_FLY_STATES", on_the_fly_states)
    monkeypatch.setattr(ltl_product, "FIRST_CHECK_EDGES", first_check_edges)
    monkeypatch.setattr(ltl_product, "CHECK_GROWTH", growth)
    folder = extracted(shared_dir, mcc_cache, instance)
    answers = check_examinations(folder / "model.pnml", ["LTLCardinality", "LTLFireability"])
    assert all("CANNOT_COMPUTE" not in line for lines in answers.values() for line in lines)
    assert disagreements(folder, answers) == []


def test_a_memory_budget_stops_exploration_and_ltl_with_unknown(shared_dir, mcc_cache):
    """A budget on the process's resident memory: the exploration of a mid-size instance
    (59,049 states) stops with its reason, and every formula says CANNOT_COMPUTE or the
    oracle's answer (a lasso among the states expanded refutes an LTL formula); on the
    whole space an LTL check over the budget says unknown naming it, never a guess."""
    from tcpn.petrinets.checking.contest.examinations import explore_model, read_properties
    from tcpn.petrinets.checking.ltl import check_ltl
    from tcpn.petrinets.statespace.memory import resident_bytes
    from tcpn.petrinets.statespace.ptspace import explore_pt

    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000010")
    model, space = explore_model(folder / "model.pnml")
    assert space.complete and len(space) == 59049
    small = explore_pt(model.net, max_memory_bytes=resident_bytes() + (1 << 20))
    assert not small.complete and len(small) < len(space)
    assert small.reason.startswith("memory budget reached: resident memory above ")
    answers = check_examinations(folder / "model.pnml", ["LTLFireability"],
                                 explored=(model, small))
    lines = answers["LTLFireability"]
    assert len(lines) == 16 and any(line.endswith("CANNOT_COMPUTE") for line in lines)
    assert disagreements(folder, answers, cannot_compute_is_wrong=False) == []
    known = read_answers(folder, "LTLFireability")
    reasons = []
    for prop in read_properties(folder / "LTLFireability.xml"):
        assert prop.formula is not None
        verdict = check_ltl(prop.formula, space, max_memory_bytes=resident_bytes() // 2)
        assert verdict.answer in ("unknown", known[prop.id].lower()), prop.id
        reasons.append(verdict.reason)
    assert any(r.startswith("memory budget reached: resident memory above ")
               for r in reasons)


def test_a_ctl_fixpoint_past_its_time_limit_says_cannot_compute(shared_dir, mcc_cache):
    """The CTL fixpoints read the clock at every step: with no time left a formula that
    needs one says CANNOT_COMPUTE (the worker is never killed at its limit), the others
    keep the oracle's answers."""
    from tcpn.petrinets.checking.contest.examinations import explore_model

    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000010")
    explored = explore_model(folder / "model.pnml")
    lines = check_examinations(folder / "model.pnml", ["CTLFireability"], time_limit_s=0.0,
                               explored=explored)["CTLFireability"]
    known = read_answers(folder, "CTLFireability")
    answers = dict(pair for line in lines if (pair := answer_key(line)) is not None)
    assert set(answers) == set(known)
    assert all(answers[key] in ("CANNOT_COMPUTE", known[key]) for key in known)
    assert "CANNOT_COMPUTE" in answers.values()


def test_ctl_edge_arrays_beyond_the_memory_available_say_cannot_compute(shared_dir,
                                                                         mcc_cache,
                                                                         monkeypatch):
    """Edge arrays that would not fit in the memory available (here: a petabyte an edge)
    are not built: the formulas that need them say CANNOT_COMPUTE, never a guess."""
    from tcpn.petrinets.checking import ptcheck
    from tcpn.petrinets.checking.contest.examinations import explore_model

    monkeypatch.setattr(ptcheck, "EDGE_ARRAY_BYTES", 10**15)
    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    lines = check_examinations(folder / "model.pnml", ["CTLCardinality"],
                               explored=explore_model(folder / "model.pnml"))
    known = read_answers(folder, "CTLCardinality")
    answers = dict(pair for line in lines["CTLCardinality"]
                   if (pair := answer_key(line)) is not None)
    assert set(answers) == set(known)
    assert all(answers[key] in ("CANNOT_COMPUTE", known[key]) for key in known)
    assert "CANNOT_COMPUTE" in answers.values()


def test_liveness_beyond_the_memory_budget_says_cannot_compute(shared_dir, mcc_cache):
    """Liveness's arrays are not built past the budget: CANNOT_COMPUTE; within it, the
    oracle's answer."""
    from tcpn.petrinets.checking.contest.examinations import explore_model
    from tcpn.petrinets.statespace.memory import resident_bytes

    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    explored = explore_model(folder / "model.pnml")
    tight = check_examinations(folder / "model.pnml", ["Liveness"], explored=explored,
                               max_memory_bytes=resident_bytes() // 2)
    assert tight["Liveness"] == ["FORMULA Liveness CANNOT_COMPUTE"]
    roomy = check_examinations(folder / "model.pnml", ["Liveness"], explored=explored)
    assert disagreements(folder, roomy) == []


@pytest.mark.parametrize("instance", ["Philosophers-PT-000005", "QuasiCertifProtocol-PT-02",
                                      "DatabaseWithMutex-COL-02"])
def test_a_global_property_is_answered_from_part_of_the_space_when_the_part_proves_it(
        shared_dir, mcc_cache, instance):
    """Stopped by a state budget, the states found still prove some global properties (a
    dead expanded state: ReachabilityDeadlock TRUE, Liveness FALSE; every transition seen:
    QuasiLiveness TRUE; two tokens on a place: OneSafe FALSE; no place constant:
    StableMarking FALSE). Every answer given agrees with the oracle, at every budget."""
    folder = extracted(shared_dir, mcc_cache, instance)
    given = 0
    for max_states in (10, 40, 160, 640):
        for examination in ("ReachabilityDeadlock", "Liveness", "QuasiLiveness", "OneSafe",
                            "StableMarking"):
            line, = check_examination(folder / "model.pnml", examination,
                                      max_states=max_states)
            answer = line.split()[2]
            if answer != "CANNOT_COMPUTE":
                given += 1
                assert answer == read_answers(folder, examination)[examination], \
                    (max_states, line)
    assert given > 0


def test_a_tiny_time_limit_gives_right_answers_and_cannot_compute_with_its_reason(
        shared_dir, mcc_cache):
    """Half a second for every examination of a 59,049-state instance, reading included:
    the call ends near its limit by itself (the clock read inside every examination, no
    kill needed), every answer it gives is the oracle's, and every CANNOT_COMPUTE names
    the time budget."""
    import time

    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000010")
    reasons: dict[str, str] = {}
    started = time.perf_counter()
    answers = check_examinations(folder / "model.pnml", list(EXAMINATIONS), time_limit_s=0.5,
                                 on_reason=reasons.__setitem__)
    assert time.perf_counter() - started < 30
    cannot = [line for lines in answers.values() for line in lines if "CANNOT_COMPUTE" in line]
    assert cannot and disagreements(folder, answers, cannot_compute_is_wrong=False) == []
    assert sum(len(lines) for lines in answers.values()) == 7 * 16 + 5 + 4
    assert reasons and all("time budget reached" in why for why in reasons.values()), reasons


@pytest.mark.parametrize("instance", ["Philosophers-PT-000010", "Philosophers-COL-000010"])
def test_global_examinations_on_a_whole_space_read_the_clock(shared_dir, mcc_cache,
                                                               instance):
    """With the space explored and no time left, the global examinations that need a pass
    over it say CANNOT_COMPUTE naming the time budget; with time, the oracle's answers."""
    from tcpn.petrinets.checking.contest.examinations import (
        GLOBAL_EXAMINATIONS,
        explore_model,
    )

    folder = extracted(shared_dir, mcc_cache, instance)
    explored = explore_model(folder / "model.pnml")
    reasons: dict[str, str] = {}
    spent = check_examinations(folder / "model.pnml", list(GLOBAL_EXAMINATIONS),
                               time_limit_s=0.0, explored=explored,
                               on_reason=reasons.__setitem__)
    assert all(line.split()[2] == "CANNOT_COMPUTE" for lines in spent.values()
               for line in lines), spent
    assert set(reasons) == set(GLOBAL_EXAMINATIONS)
    assert all(why.startswith("time budget reached: 0 s") for why in reasons.values())
    roomy = check_examinations(folder / "model.pnml", list(GLOBAL_EXAMINATIONS),
                               time_limit_s=300.0, explored=explored)
    assert disagreements(folder, roomy) == []


def test_liveness_is_not_begun_without_the_time_its_components_need(shared_dir, mcc_cache,
                                                                     monkeypatch):
    """SciPy's components cannot stop midway: with an estimate above the time left,
    Liveness says CANNOT_COMPUTE with the estimate instead of running past the limit."""
    from tcpn.petrinets.checking.contest import examinations

    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    explored = examinations.explore_model(folder / "model.pnml")
    monkeypatch.setattr(examinations, "LIVENESS_S_PER_EDGE", 3600.0)
    reasons: dict[str, str] = {}
    lines = check_examinations(folder / "model.pnml", ["Liveness"], time_limit_s=60.0,
                               explored=explored, on_reason=reasons.__setitem__)
    assert lines["Liveness"] == ["FORMULA Liveness CANNOT_COMPUTE"]
    assert "Liveness's strongly connected components" in reasons["Liveness"]


def test_a_reading_past_its_budget_gives_cannot_compute_for_every_line(shared_dir,
                                                                        mcc_cache,
                                                                        monkeypatch):
    """A model whose reading passes the time limit: every line CANNOT_COMPUTE, each
    naming the budget met while reading (the runner never has to kill the worker)."""
    from tcpn.petrinets.exchange.pnml import ptstream

    folder = extracted(shared_dir, mcc_cache, "Philosophers-PT-000005")
    reasons: dict[str, str] = {}
    monkeypatch.setattr(ptstream, "CHECK_EVERY", 1)
    answers = check_examinations(folder / "model.pnml", list(EXAMINATIONS), time_limit_s=0.0,
                                 on_reason=reasons.__setitem__)
    lines = [line for found in answers.values() for line in found]
    assert len(lines) == 7 * 16 + 5 + 4
    assert all(line.split()[2] == "CANNOT_COMPUTE" for line in lines)
    assert len(reasons) == 7 * 16 + 6
    assert all(why == "time budget reached while reading the model: 0 s"
               for why in reasons.values())
