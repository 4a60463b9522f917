"""The compiled twins of the functions nets call (tcpn.petrinets.engine.cython_code.twins).

Which functions are compiled (their source alone must define them, every name of the
module must mean one object), and that a twin computes what its Python function
computes: the TCP components' SACK scoreboard on random scoreboards. The nets' firing
sequences with the twins are ``tests/test_native.py``'s.
"""

from __future__ import annotations

import random
from types import FunctionType
from typing import Any

import pytest

from tcpn.models.components import packets, receiver, sender
from tcpn.petrinets.engine import native
from tcpn.petrinets.engine.cython_code import twins
from tcpn.petrinets.engine.native import why_unavailable

HEADER = "# cython: language_level=3, binding=True, annotation_typing=False\n"


def test_callees_are_gathered_and_decorators_are_not() -> None:
    names = [f.__name__ for f in twins.gather([sender.sack_pipe])]
    assert names == ["sack_pipe", "_not_lost_from", "sacked_count"]


def test_closures_lambdas_and_foreign_functions_stay_python() -> None:
    def local(x: int) -> int:
        return x

    assert twins.gather([local, lambda x: x, random.shuffle, 3]) == []


def test_a_name_meaning_two_objects_keeps_the_later_function_python() -> None:
    clash = FunctionType(packets.covers.__code__, {**packets.covers.__globals__,
                                                   "_run_at": sender.grow})
    clash.__module__ = packets.covers.__module__
    gathered = twins.gather([packets.covers, clash])
    assert packets.covers in gathered and clash not in gathered


def random_runs(rng: random.Random) -> tuple[tuple[int, int], ...]:
    """Sorted, disjoint, non-adjacent runs below 200."""
    edges = sorted(rng.sample(range(200), 2 * rng.randint(0, 6)))
    return tuple(zip(edges[::2], edges[1::2], strict=True))


def test_the_sack_helpers_twins_compute_what_python_computes() -> None:
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(f"the native engine cannot be built here: {reason}")
    functions = twins.gather([sender.sack_pipe, sender.sack_hole, packets.merge_sack,
                              packets.sack_blocks, packets.add_segment, packets.covers,
                              receiver._after_data])
    source, reads = twins.twins_source(functions, HEADER)
    module = native.build_compiled_python(source, "twins")
    assert not isinstance(module, str), module
    twin = twins.twins_of(module, functions, reads)
    assert all(twin[id(f)] is not f for f in functions)
    rng = random.Random(7)
    checked = 0
    for _ in range(2_000):
        runs = random_runs(rng)
        seq, una = rng.randrange(200), rng.randrange(200)
        cases: list[tuple[Any, tuple[Any, ...]]] = [
            (packets.covers, (runs, seq)),
            (packets.add_segment, (runs, seq)),
            (packets.sack_blocks, (runs, seq)),
            (packets.merge_sack, (runs, random_runs(rng), una)),
        ]
        for function, arguments in cases:
            assert twin[id(function)](*arguments) == function(*arguments), (function, arguments)
            checked += 1
    assert checked == 8_000
