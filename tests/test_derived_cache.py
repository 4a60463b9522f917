"""What tcpn derives from its own functions' source, kept in the code cache between
processes (``tcpn.petrinets.engine.codecache.derived_cached``): the simulator loop's
Cython source, the compiled twins' sources, a function's source for the net fingerprint.

An entry must give what the derivation gives; it must be used when present (the
derivation does not run again), recomputed when damaged, and missed when anything it
was derived from changes (the function's file, the deriving code's files); a wrapped
function (whose ``inspect.getsource`` is another function's) is never cached. The
membership tests ``compile_net`` evaluates are compiled once per process and give what
``eval`` of their text gives.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from functools import wraps
from pathlib import Path
from types import FunctionType
from typing import Any

import pytest

from tcpn.models.components import packets, sender
from tcpn.petrinets.colours import INT, IntSet, RealSet
from tcpn.petrinets.engine import codecache, compiler, native
from tcpn.petrinets.engine import result as result_module
from tcpn.petrinets.engine.cython_code import twins


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path))
    twins._analysis.cache_clear()
    yield tmp_path / "code"
    twins._analysis.cache_clear()


def refuse(*_args: Any, **_kwargs: Any) -> None:
    raise AssertionError("derived again although the cache holds it")


def test_an_entry_is_derived_once_read_back_and_rederived_when_damaged(cache: Path) -> None:
    calls = []

    def derive() -> tuple[str, tuple[str, ...]]:
        calls.append(1)
        return "text", ("a", "b")

    assert codecache.derived_cached("probe", ("x",), derive) == ("text", ("a", "b"))
    assert codecache.derived_cached("probe", ("x",), refuse) == ("text", ("a", "b"))
    assert codecache.derived_cached("probe", ("y",), derive) == ("text", ("a", "b"))
    assert codecache.derived_cached("other", ("x",), derive) == ("text", ("a", "b"))
    assert len(calls) == 3  # other parts, another kind: other entries
    for entry in cache.glob("derived-*.marshal"):
        entry.write_bytes(entry.read_bytes()[:-3] + b"zzz")
    assert codecache.derived_cached("probe", ("x",), derive) == ("text", ("a", "b"))
    assert len(calls) == 4
    assert codecache.derived_cached("probe", ("x",), refuse) == ("text", ("a", "b"))


def test_twins_from_the_cache_equal_their_derivation(cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    functions = twins.gather([packets.covers, *vars(sender).values()])
    assert len(functions) > 5
    derived = {f: twins._derived(f) for f in functions}
    assert {f: twins._analysis(f) for f in functions} == derived
    twins._analysis.cache_clear()  # a fresh process: read from the cache, not parsed
    monkeypatch.setattr(twins, "_tree", refuse)
    assert {f: twins._analysis(f) for f in functions} == derived
    assert twins.twins_source(functions, "#\n") == twins.twins_source(functions, "#\n")


def test_the_loop_from_the_cache_equals_its_derivation(cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tcpn.petrinets.engine.simulator import Simulator

    source, used = native._derived_loop(Simulator.loop)
    assert native._loop_source() == (
        source, {n: v for n, v in Simulator.loop.__globals__.items() if n in used})
    monkeypatch.setattr(native, "_derived_loop", refuse)
    assert native._loop_source()[0] == source  # read back: not derived again


def test_the_fingerprint_source_from_the_cache_is_getsource(cache: Path) -> None:
    import inspect

    result_module._SOURCES.clear()
    assert result_module._source(packets.covers) == inspect.getsource(packets.covers)
    result_module._SOURCES.clear()
    assert result_module._source(packets.covers) == inspect.getsource(packets.covers)
    assert list(cache.glob("derived-*.marshal"))


def _module_from(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_a_changed_file_misses(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "probe_twin.py"
    path.write_text("def probe(x):\n    return x + 1\n")
    try:
        first = _module_from(path, "tcpn.probe_twin")
        assert twins._analysis(first.probe) == ("def probe(x):\n    return x + 1", ("x",))
        key = codecache.function_key(first.probe)
        path.write_text("def probe(x):\n    return x + 22\n")
        second = _module_from(path, "tcpn.probe_twin")
        assert codecache.function_key(second.probe) != key
        assert twins._analysis(second.probe) == ("def probe(x):\n    return x + 22", ("x",))
    finally:
        sys.modules.pop("tcpn.probe_twin", None)


def test_a_wrapped_function_is_not_cached() -> None:
    @wraps(packets.covers)
    def wrapper(*args: Any) -> Any:
        return packets.covers(*args)

    assert isinstance(wrapper, FunctionType)
    assert codecache.function_key(wrapper) is None
    assert codecache.function_key(packets.covers) is not None
    assert codecache.function_key(len) is None


def test_the_deriving_code_is_in_the_keys() -> None:
    for module in (twins, native):
        assert module.__file__ is not None
    assert codecache.file_digest(twins.__file__ or "") in twins._DERIVING
    assert codecache.file_digest(native.__file__ or "") in native._LOOP_DERIVING


@pytest.mark.parametrize("colour,value,passes", [
    (INT, 3, True), (INT, 3.0, False), (INT, True, False), (IntSet(low=0, high=4), 5, False),
    (IntSet(low=0, high=4), 4, True), (RealSet(), 2, True), (RealSet(), "x", False),
])
def test_membership_tests_compiled_once_give_evals(colour: Any, value: Any,
                                                   passes: bool) -> None:
    namespace: dict[str, Any] = {}
    text = compiler._colour_test(colour, "_x", namespace)
    try:
        expected = bool(eval(text, {**namespace, "_x": value}))
    except Exception:
        expected = False
    assert compiler._passes(colour, value) is expected is passes
    assert compiler._compiled_test(text) is compiler._compiled_test(text)


@pytest.mark.parametrize("text", [
    "3", "-3", "+2.5", "'s'", "(1, 'a', (2.0, True))", "(1, [2])", "[1, 2]", "{1}", "{1: 2}",
    "set()", "1 + 2j", "-(1)", "not True", "f(1)", "a.b", "a[0]", "1 < 2", "x", "(x, 1)",
    "1 if a else 2", "1 + 2", "~1", "(-1, +2)",
])
def test_constants_are_literal_evals_immutable_values(text: str) -> None:
    import ast
    from types import SimpleNamespace

    tree = ast.parse(text, mode="eval").body
    try:
        value = ast.literal_eval(tree)
        expected = value if compiler._immutable(value) else compiler._UNKNOWN
    except (ValueError, TypeError, SyntaxError):
        expected = compiler._UNKNOWN
    if isinstance(tree, ast.Name):
        expected = compiler._UNKNOWN  # not in the (empty) scope
    stub: Any = SimpleNamespace(scope={})
    found = compiler.TransitionCompiler._constant(stub, tree, frozenset())
    assert found == expected and type(found) is type(expected)
