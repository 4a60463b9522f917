"""A model file from elsewhere is data: reading, checking or importing it never runs its code.

Each payload below would create the file ``MARK`` (or reach the interpreter) if tcpn ran
it; the tests read them through the Python API and the real command line and assert the
file is refused, naming the element, and that nothing was written. ``docs/security.md`` is
the threat model.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpn.limits import using_limits
from tcpn.petrinets import INT, PetriNet, Place, Transition, simulate
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.pnml import read_pnml, to_pnml
from tcpn.petrinets.net_functions import registered
from tcpn.petrinets.restricted import (
    FORBIDDEN_ATTRIBUTES,
    SAFE_BUILTINS,
    SAFE_METHODS,
    EvaluationBudgetError,
    UntrustedCodeError,
    check_expression,
    evaluation_budget,
    restricted_namespace,
)

#: Python that would write MARK or reach the interpreter, each in a guard of ``arrive``.
PAYLOADS = [
    "__import__('os').system('touch MARK') == 0",
    "open('MARK', 'w') is None",
    "len(().__class__.__base__.__subclasses__()) > 0",
    "(g for g in ()).gi_frame.f_globals['__builtins__']['open']('MARK', 'w') is None",
    "'{0.__class__}'.format(n) != ''",
    "getattr(n, 'real') >= 0",
    "type(n) is int",
    "eval(\"open('MARK', 'w')\") is None",
    "exec('x = 1') is None",
    "len(globals()) > 0",
    "len(vars()) > 0",
    "compile('1', 'f', 'eval') is None",
    "(lambda: __builtins__)() is None",
    "len([c for c in ().__class__.__mro__]) > 0",
    "n.__class__ is int",
    "n < 100 if n else __import__('os')",
    "f'{n.__class__}' != ''",
    "n.real.__class__ is int",
    "(lambda x=open: x)() is None",
    "dict(__builtins__=1) is None",
]


def arrivals() -> PetriNet:
    """The README's net (a fixed gap): ``arrive`` has a guard, an input and two outputs."""
    net = PetriNet("arrivals")
    net.add_place(Place("clock", INT.timed(), initial=[0]))
    net.add_place(Place("arrived", INT))
    net.add_transition(Transition("arrive", guard="n < 100"))
    net.add_input("clock", "arrive", "n")
    net.add_output("clock", "arrive", "n + 1", delay=2)
    net.add_output("arrived", "arrive", "n")
    return net


def with_guard(guard: str) -> str:
    text = to_pnml(arrivals())
    assert text.count("<guard>n &lt; 100</guard>") == 1
    return text.replace("<guard>n &lt; 100</guard>", f"<guard>{escape(guard)}</guard>")


def tcpn(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()", *args],
                          capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "COLUMNS": "60"},
                          check=False, timeout=300)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pnml_guard_that_reaches_outside_the_subset_is_refused(payload, tmp_path,
                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UntrustedCodeError, match="transition arrive, guard"):
        read_pnml(with_guard(payload))
    assert not (tmp_path / "MARK").exists()


@pytest.mark.parametrize("where", ["inscription", "count", "when"])
def test_an_arc_expression_is_held_to_the_subset_too(where, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = to_pnml(arrivals())
    payload = quoteattr("__import__('os').system('touch MARK')")
    original = 'kind="output" count="1" inscription="n + 1"'
    assert original in text
    hostile = {"inscription": f'kind="output" count="1" inscription={payload}',
               "count": f'kind="output" count={payload} inscription="n + 1"',
               "when": f'kind="output" count="1" inscription="n + 1" when={payload}'}[where]
    with pytest.raises(UntrustedCodeError, match="arrive->clock"):
        read_pnml(text.replace(original, hostile))
    assert not (tmp_path / "MARK").exists()


def test_the_command_line_refuses_the_file_with_exit_3_and_runs_nothing(tmp_path):
    model = tmp_path / "hostile.pnml"
    model.write_text(with_guard("__import__('os').system('touch MARK') == 0"))
    for args in (["check", str(model), "--ctl", "AG true"], ["check", str(model), "--report"],
                 ["import", str(model)], ["export", str(model), "-f", "cpn"]):
        done = tcpn(*args, cwd=tmp_path)
        assert done.returncode == 3, (args, done.stderr)
        assert "transition arrive, guard" in done.stderr and "__import__" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "MARK").exists()


def test_trust_runs_a_file_you_wrote_as_python(tmp_path):
    text = with_guard("n.bit_count() < 7")  # a method outside the vetted list
    with pytest.raises(UntrustedCodeError, match="'bit_count'"):
        read_pnml(text)
    trusted = read_pnml(text, trusted=True)
    first_refused = next(n for n in range(1000) if n.bit_count() >= 7)
    assert simulate(trusted.net, seed=1).firing_counts["arrive"] == first_refused
    model = tmp_path / "mine.pnml"
    model.write_text(text)
    done = tcpn("check", str(model), "--trust", "--ctl", "AG true", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# -- function references: an explicit registry ------------------------------------------------
def test_an_action_reference_to_a_function_tcpn_imported_is_not_restored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = to_pnml(arrivals()).replace(
        "<guard>n &lt; 100</guard>",
        '<guard>n &lt; 100</guard><action ref="tcpn.cli:os.system" outputs="x" />')
    imported = read_pnml(text)
    assert imported.net.transitions["arrive"].action is None
    assert "tcpn.cli:os.system" in imported.report.text()
    simulate(imported.net, seed=1, max_firings=10)
    assert not (tmp_path / "MARK").exists()


@pytest.mark.parametrize("reference", [
    "tcpn.cli:os.system", "tcpn.cli:subprocess.run", "os:system", "builtins:eval",
    "tcpn.petrinets.exchange.pnml:importlib.import_module", "tcpn.cli:main",
    "tcpn..cli:x", "tcpn.nosuch:x", "",
])
def test_only_registered_component_functions_resolve(reference):
    assert registered(reference) is None


def test_tcp_component_functions_resolve_from_their_reference():
    from tcpn.models.components.packets import merge_sack

    assert registered("tcpn.models.components.packets:merge_sack") is merge_sack


# -- a colon never means Python -----------------------------------------------------------------
def test_a_colon_in_a_net_argument_never_imports_a_module(tmp_path):
    done = tcpn("check", "this:x.pnml", "--ctl", "AG true", cwd=tmp_path)
    assert done.returncode == 3 and "no such file" in done.stderr
    assert "Beautiful is better than ugly" not in done.stdout + done.stderr  # `import this`
    named = tmp_path / "this:x.pnml"  # a file name with a colon is a file
    named.write_text(to_pnml(arrivals()))
    done = tcpn("check", str(named), "--ctl", "AG true", "--max-states", "10", cwd=tmp_path)
    assert "Beautiful" not in done.stdout and done.returncode in (0, 1), done.stderr
    done = tcpn("check", "this:net", "--ctl", "AG true", cwd=tmp_path)
    assert done.returncode == 3 and "--python" in done.stderr
    assert "Beautiful" not in done.stdout


# -- CPN Tools files: translated CPN ML ---------------------------------------------------------
def cpn_with(shared_dir: Path, *declarations: str) -> str:
    """A real CPN Tools file with ``declarations`` added to its global block."""
    text = (shared_dir / "data" / "cpn" / "QueueSystem_inttime.cpn").read_text("iso-8859-1")
    anchor = '<ml id="ID6545">'
    assert anchor in text
    added = "".join(f'<ml id="IDX{i}">{escape(d)}</ml>\n' for i, d in enumerate(declarations))
    return text.replace(anchor, added + anchor, 1)


@pytest.mark.parametrize("ml", [
    "val d = #__doc__ 1",
    "val c = List.map #__class__ [1, 2]",
    "val g = List.map (fn x => #__class__ x) [1]",
    "fun f x = #__init__ x",
    "fun h 0 = 1 | h n = #__doc__ n",  # clauses: matched outside the expression translator
    "val f = #format \"{0.__class__}\"",
    "val h = #gi_frame 1",
])
def test_ml_selectors_never_reach_python_internals(ml, shared_dir):
    with pytest.raises(UntrustedCodeError, match=r"line \d+, element IDX0"):
        read_cpn(cpn_with(shared_dir, ml))


def test_an_ml_value_that_loops_forever_ends_the_import_with_the_limit_named(shared_dir):
    text = cpn_with(shared_dir, "fun spin x = spin x", "val v = spin 1")
    started = time.monotonic()
    # its turns and steps unbounded, so that only the time budget can stop it
    with using_limits(import_evaluation_ms=300, while_iterations=10**12,
                      evaluation_steps=10**12), \
            pytest.raises(EvaluationBudgetError, match="import_evaluation_ms"):
        read_cpn(text)
    assert time.monotonic() - started < 60  # it returns: no hang (not a timing claim)


def test_an_ml_handler_catches_neither_the_evaluation_budget_nor_a_bound_nor_a_deep_recursion(
        shared_dir):
    text = cpn_with(shared_dir, "val v = (while true do ()) handle _ => 0")
    started = time.monotonic()
    # the loop's turns and steps unbounded, so that only the time budget can stop it (10^6
    # steps, the default bound, take 0.3-0.6 s: on a loaded machine either could come first)
    with using_limits(import_evaluation_ms=300, while_iterations=10**12,
                      evaluation_steps=10**12), \
            pytest.raises(EvaluationBudgetError, match="import_evaluation_ms"):
        read_cpn(text)
    # nor the bound on a while loop's turns: the declaration is left out naming it
    with using_limits(while_iterations=1000):
        imported = read_cpn(text)
    assert "v" not in imported.net.declarations
    assert any("while_iterations" in item.reason for item in imported.report.unsupported)
    # a handler that recurses again on every error: the call-depth limit is not caught,
    # the declaration is left out
    # (a budget far above the depth's reach, so that a loaded machine cannot spend it first)
    text = cpn_with(shared_dir, "fun spin x = (spin x) handle _ => spin x", "val v = spin 1")
    with using_limits(import_evaluation_ms=10_000):
        imported = read_cpn(text)
    assert "v" not in imported.net.declarations
    assert any("call_depth" in item.reason for item in imported.report.unsupported)
    assert time.monotonic() - started < 60  # it returns: no hang (not a timing claim)


def test_a_value_that_fills_the_memory_ends_the_import_with_the_limit_named(shared_dir):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("the address-space cap applies in the main thread only")
    doublings = " ".join(f"val a{i + 1} = a{i} ^ a{i}" for i in range(28))  # 4 GiB at the end
    text = cpn_with(shared_dir, f'val big = let val a0 = "0123456789abcdef" {doublings} '
                                "in size a28 end")
    named = r"declaration big: .*more than 104,857,600 bytes.*import_evaluation_bytes"
    with using_limits(import_evaluation_bytes=100 << 20), \
            pytest.raises(EvaluationBudgetError, match=named):
        read_cpn(text)


def _skeleton_with(shared_dir: Path, functions: str) -> str:
    """The shared skeleton net (transition Serve's output arc delays by ``delay n``) with
    ``functions`` declared in place of its ``delay``."""
    text = (shared_dir / "data" / "cpn" / "skeleton_minimal_timed.cpn").read_text()
    old = "fun delay (x:INT) = x mod 3 + 1;"
    assert text.count(old) == 2  # the declaration and its layout
    return text.replace(old, escape(functions))


@pytest.mark.parametrize(("functions", "limits", "named"), [
    ("fun delay (x:INT) = delay x;", "while_iterations=1000", r"function delay calls itself "
     r"without end: 1,001 turns is over the limit while_iterations"),
    ("fun fib (n:INT) = if n < 2 then n else fib (n - 1) + fib (n - 2); "
     "fun delay (x:INT) = fib 60 mod 3 + 1;", "evaluation_steps=10000",
     r"function fib: 10,001 steps is over the limit evaluation_steps"),
    ('fun grow (s, n) = if n = 0 then s else grow (s ^ s, n - 1); '
     'fun delay (x:INT) = size (grow ("ab", 60)) mod 3 + 1;', "list_length=5000",
     r"function grow: a value of 8,192 characters is over the limit list_length"),
])
def test_a_function_without_end_stops_the_run_naming_limit_function_and_arc(
        functions, limits, named, shared_dir, tmp_path):
    model = tmp_path / "model.cpn"
    model.write_text(_skeleton_with(shared_dir, functions))
    done = tcpn("--limit", limits, "simulate", str(model), "--max-firings", "10", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert re.search(named, done.stderr) and "Serve" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_shared_cpn_files_still_import_whole(shared_dir):
    for path in sorted((shared_dir / "data" / "cpn").glob("*.cpn")):
        read_cpn(path)  # no UntrustedCodeError on real models


def test_the_command_line_names_the_limit_of_a_looping_value(shared_dir, tmp_path):
    model = tmp_path / "spin.cpn"
    model.write_text(cpn_with(shared_dir, "fun spin x = spin x", "val v = spin 1"),
                     encoding="iso-8859-1")
    done = tcpn("--limit", "import_evaluation_ms=300", "import", str(model), cwd=tmp_path)
    assert done.returncode == 3 and "import_evaluation_ms" in done.stderr, done.stderr


def test_evaluation_budget_works_outside_the_main_thread_too():
    import threading

    caught: list[BaseException] = []

    def spin() -> None:
        try:
            with evaluation_budget("val v", milliseconds=100):
                eval(compile("[0 for _ in iter(int, 1)]", "<spin>", "eval"), {})
        except EvaluationBudgetError as exc:
            caught.append(exc)

    thread = threading.Thread(target=spin)
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and caught


# -- the restricted evaluator, fuzzed ---------------------------------------------------------
DECLARED = frozenset({"n", "q", "LIMIT", "rec"})
FIELDS = frozenset({"seq", "cwnd"})
NAMES = sorted(DECLARED | {"len", "open", "getattr", "type", "__import__", "__builtins__",
                           "_x", "eval", "exec", "globals", "vars", "print", "object", "sum",
                           "tuple", "str", "dict", "breakpoint", "compile", "input", "x"})
ATTRIBUTES = sorted(FIELDS | {"__class__", "__globals__", "__init__", "__subclasses__",
                              "__base__", "__mro__", "gi_frame", "f_globals", "format",
                              "format_map", "count", "index", "_replace", "mro", "system",
                              "__dict__", "__code__", "co_consts", "real", "join", "throw"})
AUDITED = ("import", "open", "os.system", "subprocess.Popen", "os.exec", "os.posix_spawn",
           "os.spawn", "ctypes.dlopen", "sys._getframe", "object.__getattr__", "os.remove",
           "os.rename", "os.mkdir", "socket.connect", "sys.settrace", "builtins.input")
_events: list[str] = []
_recording = [False]


#: What tcpn itself reads inside an evaluation: the process's size, to cap its memory there
_OWN_READS = {"/proc/self/statm"}


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _recording[0] and event.startswith(AUDITED) and not (
            event == "open" and args and args[0] in _OWN_READS):
        _events.append(event)


sys.addaudithook(_audit)


def _expressions() -> st.SearchStrategy[ast.expr]:
    leaves = st.one_of(
        st.sampled_from(NAMES).map(lambda n: ast.Name(n, ast.Load())),
        st.integers(0, 5).map(ast.Constant),
        st.sampled_from(["", "ab", "{0.__class__}", "os"]).map(ast.Constant),
    )

    def extend(inner: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
        return st.one_of(
            st.builds(lambda v, a: ast.Attribute(v, a, ast.Load()), inner,
                      st.sampled_from(ATTRIBUTES)),
            st.builds(lambda f, args: ast.Call(f, args, []), inner,
                      st.lists(inner, max_size=2)),
            st.builds(lambda v, i: ast.Subscript(v, i, ast.Load()), inner, inner),
            st.builds(lambda a, b: ast.BinOp(a, ast.Add(), b), inner, inner),
            st.builds(lambda a, b: ast.Tuple([a, b], ast.Load()), inner, inner),
            st.builds(lambda p, body: ast.Lambda(ast.arguments(
                posonlyargs=[], args=[ast.arg(p)], vararg=None, kwonlyargs=[],
                kw_defaults=[], kwarg=None, defaults=[]), body),
                st.sampled_from(["_r", "x", "__builtins__"]), inner),
            st.builds(lambda elt, target, it: ast.GeneratorExp(elt, [ast.comprehension(
                ast.Name(target, ast.Store()), it, [], 0)]),
                inner, st.sampled_from(["_e", "x", "__class__"]), inner),
        )

    return st.recursive(leaves, extend, max_leaves=8)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions())
def test_an_accepted_expression_reaches_no_name_outside_the_allow_list(tree):
    tree = ast.fix_missing_locations(ast.Expression(tree))
    try:
        check_expression(tree.body, "fuzz", declared=DECLARED, fields=FIELDS)
    except UntrustedCodeError:
        return
    bound = {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
    bound |= {n.target.id for n in ast.walk(tree) if isinstance(n, ast.comprehension)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr in (FIELDS | SAFE_METHODS) - FORBIDDEN_ATTRIBUTES
            assert not node.attr.startswith("_") or node.attr == "_replace"
        if isinstance(node, ast.Name):
            assert not node.id.startswith("__")
            assert node.id in bound or node.id in DECLARED or node.id in SAFE_BUILTINS or \
                (not node.id.startswith("_") and node.id not in dir(__builtins__))
    code = compile(tree, "<fuzz>", "eval")
    scope = restricted_namespace({"n": 3, "q": (1, 2), "LIMIT": 5, "rec": (1, 2.0)})
    _recording[0] = True
    try:
        with evaluation_budget("fuzz", milliseconds=500):
            eval(code, scope)
    except EvaluationBudgetError:
        pass
    except Exception:
        pass
    finally:
        _recording[0] = False
    assert not _events, _events
