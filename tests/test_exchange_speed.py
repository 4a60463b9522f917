"""What makes CPN Tools export and import fast keeps their output: the translation memo,
linear fresh names, the parse cache. Expectations by hand, and against the uncached path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tcpn.petrinets import INT, PetriNet, Place, Transition
from tcpn.petrinets.exchange.cpn_export import _Exporter, to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.cpnml import INT_T, REAL_T, FunctionInfo, PythonToML


def _translator(memo: dict | None, calls: dict, returns: object = None) -> PythonToML:
    return PythonToML(constants={"K": INT_T}, constant_names={"K": "K"},
                      functions={"f": FunctionInfo("f", None, returns)},
                      call_types=calls, memo=memo)


@pytest.mark.parametrize("text", ["f(x, K) + 1", "f(f(x, 2.5), K)", "x * K"])
def test_memo_gives_the_uncached_translation_and_teaches_the_same_types(text):
    plain_calls: dict = {}
    plain = _translator(None, plain_calls).typed(text, "arc", {"x": INT_T}, INT_T)
    memo: dict = {}
    first_calls: dict = {}
    first = _translator(memo, first_calls).typed(text, "arc", {"x": INT_T}, INT_T)
    # a new translator that knows the same: a look-up, which teaches its call types too
    again_calls: dict = {}
    again = _translator(memo, again_calls).typed(text, "arc", {"x": INT_T}, INT_T)
    assert first == again == plain
    assert first_calls == again_calls == plain_calls
    if "f(" in text:
        assert plain_calls["f"][0] in (INT_T, None)  # f(x, ...) with x an int
        assert "f:returns" in plain_calls  # an int expected where f's result goes


def test_memo_keeps_apart_translators_that_know_different_types():
    memo: dict = {}
    unknown = _translator(memo, {}).typed("f(x, K)", "arc", {"x": INT_T})
    real = _translator(memo, {}, returns=REAL_T).typed("f(x, K)", "arc", {"x": INT_T})
    assert unknown[2] is None and real[2] == REAL_T


def test_memo_teaches_only_positions_still_unknown():
    memo: dict = {}
    _translator(memo, {}).typed("f(x, K)", "arc", {"x": INT_T})
    calls = {"f": [REAL_T, None]}  # known from another call site: kept
    _translator(memo, calls).typed("f(x, K)", "arc", {"x": INT_T})
    assert calls["f"] == [REAL_T, INT_T]


def test_fresh_names_skip_taken_ones_in_order():
    net = PetriNet("n")
    net.add_place(Place("p", INT, [1]))
    exporter = _Exporter(net, False, {}, "grid")
    exporter.taken.add("v_3")
    names = [exporter._fresh("v") for _ in range(4)]
    assert names == ["v", "v_2", "v_4", "v_5"]
    exporter.taken.add("w")
    assert exporter._fresh("w") == "w_2"


def _flows(n: int) -> PetriNet:
    """``n`` copies of one module: the same inscriptions repeated, as in a many-flow net."""
    net = PetriNet("flows")
    for i in range(n):
        net.add_place(Place(f"f{i}.a", INT, [i]))
        net.add_place(Place(f"f{i}.b", INT))
        net.add_transition(Transition(f"f{i}.t", guard="x < LIMIT", params={"LIMIT": 5 + i}))
        net.add_input(f"f{i}.a", f"f{i}.t", "x")
        net.add_output(f"f{i}.b", f"f{i}.t", "x + LIMIT")
    return net


def test_repeated_modules_export_each_with_its_own_constant_and_read_back():
    text = to_cpn(_flows(3), layout="grid")
    assert to_cpn(_flows(3), layout="grid") == text  # no state kept between exports
    for i in range(3):
        # the transitions are in no module: the clashing LIMITs get fresh names in order
        limit = "LIMIT" if i == 0 else f"LIMIT_{i + 1}"
        assert f"val {limit} = {5 + i};" in text
        assert f"[x &lt; {limit}]" in text
    imported = read_cpn(text)
    assert imported.complete
    guards = sorted(t.guard for t in imported.net.transitions.values())
    assert guards == ["x < LIMIT", "x < LIMIT_2", "x < LIMIT_3"]
    outputs = sorted(a.inscription for a in imported.net.arcs if a.kind.value == "output")
    assert outputs == ["x + LIMIT", "x + LIMIT_2", "x + LIMIT_3"]


_CALLERS = """
from tcpn.petrinets import INT, PetriNet, Place, Transition
from tcpn.petrinets.exchange.cpn_export import to_cpn

def alpha(v): return v + 1
def beta(v): return v + 2
def gamma(v): return v + 3
def delta(v): return v + 4
def top(v): return alpha(v) + beta(v) + gamma(v) + delta(v)

net = PetriNet("calls")
net.declare(top=top)
net.add_place(Place("p", INT, initial=[1]))
net.add_place(Place("q", INT))
net.add_transition(Transition("t"))
net.add_input("p", "t", "x")
net.add_output("q", "t", "top(x)")
print(to_cpn(net, layout="grid"))
"""


def test_same_net_same_file_whatever_the_hash_seed(tmp_path):
    """Functions that call several others are declared in one order, not in the order of a
    set of names (which follows the process's string hash seed)."""
    script = tmp_path / "calls.py"  # a file: the exporter reads the functions' source
    script.write_text(_CALLERS)
    texts = set()
    for seed in ("1", "2", "3", "4"):
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        texts.add(out)
        # callees before their caller, so that CPN ML knows them when it reads top
        assert out.index("fun alpha") < out.index("fun top")
        assert out.index("fun delta") < out.index("fun top")
    assert len(texts) == 1
