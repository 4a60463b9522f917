"""The compiled-code cache of the compiler's generated sources (``tcpn.petrinets.engine.codecache``)
and the memoised sources of the net fingerprint (``tcpn.petrinets.engine.result``).

A cached entry must give the code ``compile()`` gives; a changed source (another net,
another compiler) or a changed cache module must miss; a damaged entry must be compiled
again and rewritten; an unusable cache directory must not stop compilation; and a net
compiled from the cache must fire what it fires compiled afresh.
"""

from __future__ import annotations

import collections
import hashlib
import marshal
from pathlib import Path
from typing import Any

import pytest

from tcpn.petrinets import (
    INT,
    PetriNet,
    Place,
    Simulator,
    Transition,
    compile_net,
)
from tcpn.petrinets.engine import caches, codecache, compiler
from tcpn.petrinets.engine import result as result_module
from tcpn.petrinets.engine.monitors import FiringRecord

SOURCE = "def _f(x):\n    return x * 3 + 1\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path))
    # and no net compiled earlier in this process: each test sees its own compilations
    monkeypatch.setattr(compiler, "_COMPILED", collections.OrderedDict())
    return tmp_path / "code"


def run(code: Any) -> int:
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    value: int = namespace["_f"](4)
    return value


def forbid_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """Makes ``compile()`` inside the cache module fail: only a cache hit succeeds."""
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("compiled although the cache holds the code")

    monkeypatch.setattr(codecache, "compile", refuse, raising=False)


def test_an_entry_is_written_once_and_read_back(cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    first = codecache.compile_cached(SOURCE, "<test>")
    assert first == compile(SOURCE, "<test>", "exec") and run(first) == 13
    (entry,) = cache.iterdir()
    assert entry.suffix == ".marshal"
    forbid_compile(monkeypatch)
    again = codecache.compile_cached(SOURCE, "<test>")
    assert again == first and again.co_filename == "<test>" and run(again) == 13
    assert list(cache.iterdir()) == [entry]  # nothing left behind (no .part files)


def test_another_source_file_name_or_cache_version_misses(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codecache.compile_cached(SOURCE, "<test>")
    changed = SOURCE.replace("3", "5")
    assert run(codecache.compile_cached(changed, "<test>")) == 21
    assert codecache.compile_cached(SOURCE, "<other>").co_filename == "<other>"
    assert len(list(cache.iterdir())) == 3
    monkeypatch.setattr(codecache, "_VERSION", b"another tcpn or Python")
    assert run(codecache.compile_cached(SOURCE, "<test>")) == 13
    assert len(list(cache.iterdir())) == 4


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "not code", "bit rot"])
def test_a_damaged_entry_is_compiled_again_and_rewritten(
        cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    codecache.compile_cached(SOURCE, "<test>")
    (entry,) = cache.iterdir()
    good = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(good[: len(good) // 2])
    elif damage == "flipped":
        entry.write_bytes(good[:-3] + bytes([good[-3] ^ 0xFF]) + good[-2:])
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "not code":  # a well-formed entry whose payload is not a code object
        payload = marshal.dumps(("not", "code"))
        entry.write_bytes(hashlib.sha256(payload).digest() + payload)
    else:  # a payload that still loads, as other code: only the checksum tells
        rotten = marshal.dumps(compile(SOURCE.replace("3", "5"), "<test>", "exec"))
        entry.write_bytes(good[:32] + rotten)
    assert run(codecache.compile_cached(SOURCE, "<test>")) == 13
    assert entry.read_bytes() == good
    forbid_compile(monkeypatch)
    assert run(codecache.compile_cached(SOURCE, "<test>")) == 13


def test_an_unusable_cache_directory_still_compiles(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("TCPN_CACHE_DIR", str(blocker))
    assert run(codecache.compile_cached(SOURCE, "<test>")) == 13
    monkeypatch.delenv("TCPN_CACHE_DIR")
    monkeypatch.setattr(caches, "_user_cache", lambda: None)  # no platformdirs
    assert codecache.cache_root() is None
    assert run(codecache.compile_cached(SOURCE, "<test>")) == 13


def ring(modulus: int) -> PetriNet:
    net = PetriNet("ring")
    net.add_place(Place("a", INT, initial=list(range(5))))
    net.add_place(Place("b", INT))
    net.add_transition(Transition("move", guard=f"x % {modulus} != 1"))
    net.add_input("a", "move", "x")
    net.add_output("b", "move", "x + 1")
    net.add_transition(Transition("back"))
    net.add_input("b", "back", "y")
    net.add_output("a", "back", "y - 1")
    return net


def firings(net: PetriNet) -> list[tuple[Any, ...]]:
    record = FiringRecord()
    Simulator(net, seed=3, monitors=[record], engine="python").run(max_firings=200)
    return record.firings


def test_a_net_from_the_cache_fires_what_it_fires_compiled_afresh(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = firings(ring(3))
    assert len(list(cache.iterdir())) == 2  # one entry per transition
    forbid_compile(monkeypatch)
    assert firings(ring(3)) == fresh
    with pytest.raises(AssertionError, match="compiled although"):
        compile_net(ring(4))  # another guard, another source of ``move``: a miss


def test_the_fingerprint_memo_follows_the_function_code() -> None:
    """The net fingerprint reads code actions' sources once per function, and not a
    stale one when a function's code is replaced."""
    def action(x: int) -> int:
        return x + 1

    def other(x: int) -> int:
        return x + 2

    net = ring(3)
    net.declarations["helper"] = action
    before = result_module.net_fingerprint(net)
    assert result_module.net_fingerprint(net) == before
    result_module._SOURCES.clear()
    assert result_module.net_fingerprint(net) == before
    action.__code__ = other.__code__
    changed = result_module.net_fingerprint(net)
    assert changed != before
    result_module._SOURCES.clear()
    assert result_module.net_fingerprint(net) == changed


def counter(step: Any) -> PetriNet:
    """A place counting up by ``step(n)``: a code action, so the net names a function."""
    net = PetriNet("counter")
    net.add_place(Place("n", INT, initial=[0]))
    net.add_transition(Transition("tick", action=step, outputs=("m",)))
    net.add_input("n", "tick", "n")
    net.add_output("n", "tick", "m")
    return net


def stepping_by(k: int) -> Any:
    def step(n: int) -> dict[str, int]:
        return {"m": n + k}
    return step


def test_a_net_built_again_is_compiled_once(cache: Path) -> None:
    """The next replication of a scenario builds an equal net: it gets the compiled net
    of the first, which fires the same."""
    first, again = compile_net(counter(stepping_by(2))), compile_net(counter(stepping_by(2)))
    assert again is first
    assert firings(counter(stepping_by(2))) == firings(counter(stepping_by(2)))


def test_closures_over_other_values_are_other_nets(cache: Path) -> None:
    """Two closures of one source over different values (a variant's law specialised to
    its parameters) make different nets: different fingerprints, compiled apart, fired
    apart. The fingerprint read only the source, so both had one."""
    two, three = counter(stepping_by(2)), counter(stepping_by(3))
    assert result_module.net_fingerprint(two) != result_module.net_fingerprint(three)
    assert compile_net(two) is not compile_net(three)
    assert firings(two) != firings(three)


def test_functions_without_source_differ_by_their_code(cache: Path) -> None:
    """A function built from text (a CPN ML declaration's translation) has no source to
    read: its code tells two of them apart, as their names do not."""
    made = []
    for body in ("n + 1", "n + 5"):
        namespace: dict[str, Any] = {}
        exec(f"def step(n):\n    return {{'m': {body}}}\n", namespace)
        made.append(counter(namespace["step"]))
    assert result_module.net_fingerprint(made[0]) != result_module.net_fingerprint(made[1])
    assert firings(made[0]) != firings(made[1])
