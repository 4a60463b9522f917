"""Guard partitions enumerated together: one function for transitions that differ only in
their guards, for the native engine's loop.

A TCP sender's ACK transitions (``new_ack``, ``recovery_exit``, ``partial_ack``, ...)
read the same places with the same inscriptions and split the arriving ACKs by their
guards; each is enumerated after every change of those places, so the same binder loops
run once per transition (7.7 enumerations per firing at 100 Mbit/s, most finding
nothing). :func:`find_groups` finds such partitions and :func:`group_source` generates one
``_enumerate_due(M, now, _inord)`` that runs the shared binder loops once, tests each
member's guard where the member's own ``enumerate_due`` tests it, and returns, per
member, the list and the cut flag that member's ``enumerate_due`` would have given: the
same bindings in the same order, each with its own ``_rstar`` and its own stop in the
loops over timestamp-ordered places (a member whose own loop would have stopped there is
closed for the rest of that loop; the loop stops when every member is closed). The loop
(``Simulator.loop`` compiled, see :mod:`~tcpn.petrinets.engine.native`) calls the group
once per refresh for the first member it re-enumerates and takes the others' results
from it; the Python engine keeps the per-transition functions, the reference the tests
compare the groups with (``tests/test_groups.py``) and the native engine's firings with
(``tests/test_native.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from tcpn.petrinets.engine.compiler import CodeLines, CompiledNet, TransitionCompiler
from tcpn.petrinets.inscriptions import Inscription
from tcpn.petrinets.net import Arc, ArcKind

__all__ = ["GroupEnumerate", "find_groups", "group_function", "group_source"]

#: ``group(M, now, _inord)``: per member, its bindings and whether its loop stopped early
GroupEnumerate = Callable[[Any, float, list[bool]], tuple[tuple[list[Any], bool], ...]]


def _compiler(compiled: CompiledNet, t: int) -> TransitionCompiler:
    """The transition compiler of transition ``t`` (its analysis of the arcs), as
    :func:`~tcpn.petrinets.engine.compiler.compile_net` set it up."""
    net = compiled.net
    name = compiled.transitions[t].name
    compiler = TransitionCompiler(net, name, t, compiled.place_index, compiled.timed,
                                  [a for a in net.arcs if a.transition == name])
    compiler.keyed = frozenset(compiled.keyed_places)
    return compiler


def _guard(compiler: TransitionCompiler) -> Inscription | None:
    guard = compiler.t.guard
    return Inscription.parse(guard, f"guard of {compiler.where}") if guard else None


def find_groups(compiled: CompiledNet) -> tuple[tuple[int, ...], ...]:
    """The partitions of ``compiled``'s transitions worth enumerating together: two or
    more transitions with the same input, read and inhibitor arcs (in arc order), the
    same binding variables, gate and required places, no free variables, and guards
    that read their declarations from the same objects, each guard naming a variable.

    An input and a read arc enumerate alike, but they are kept apart: taken together, a
    queue's enqueue and drop (its counters taken, read) made two-member groups that
    measured slower than their two calls (benchmarks/README.md, issue 32)."""
    by_key: dict[Any, list[int]] = {}
    for t in compiled.transitions:
        compiler = _compiler(compiled, t.index)
        guard = _guard(compiler)
        if compiler.free or (guard is not None and not guard.free_variables(compiler.declared)) \
                or t.reads_clock:  # enumerated on its own at every clock advance
            continue
        arcs = tuple((a.kind.value, a.place, a.inscription, a.count) for a in compiler.arcs
                     if a.kind in (ArcKind.INPUT, ArcKind.READ, ArcKind.INHIBITOR))
        key = (arcs, t.variables, t.gate_places, compiled.gate_of[t.index],
               t.required_places, t.reads_places)
        by_key.setdefault(key, []).append(t.index)
    groups = []
    for members in by_key.values():
        if len(members) < 2:
            continue
        scope = compiled.net.scope_of(compiled.transitions[members[0]].name)
        same = [m for m in members if _same_names(compiled, m, scope)]
        if len(same) >= 2:
            groups.append(tuple(same))
    return tuple(groups)


def _same_names(compiled: CompiledNet, t: int, scope: dict[str, Any]) -> bool:
    """Whether transition ``t``'s guard reads its declarations from ``scope``'s objects
    (the group's code runs in its first member's namespace)."""
    name = compiled.transitions[t].name
    guard = compiled.net.transitions[name].guard
    if not guard:
        return True
    own = compiled.net.scope_of(name)
    return all((n in own) == (n in scope) and (n not in own or own[n] is scope[n])
               for n in Inscription.parse(guard, name).names)


def group_source(compiled: CompiledNet, members: tuple[int, ...]
                 ) -> tuple[str, dict[str, Any]]:
    """The group's ``_enumerate_due`` source and the namespace it runs in (its first
    member's: the declarations and the compiler's helpers)."""
    compilers = [_compiler(compiled, t) for t in members]
    leader = compilers[0]
    guards = [(c.where, _guard(c)) for c in compilers]
    return _source(leader, guards), dict(leader.globals)


def group_function(compiled: CompiledNet, members: tuple[int, ...]) -> GroupEnumerate:
    """The group's ``_enumerate_due`` as Python (what the native engine compiles)."""
    source, namespace = group_source(compiled, members)
    exec(compile(source, f"<tcpn group {members}>", "exec"), namespace)
    function: GroupEnumerate = namespace["_enumerate_due"]
    return function


def _source(c: TransitionCompiler, guards: list[tuple[str, Inscription | None]]) -> str:
    """The generated code: ``TransitionCompiler._compile_enumerate(due=True)``'s, with
    each member's guard, ``_rstar``, stop and output list of its own.

    ``alive[k]`` names the variable that says whether member ``k`` still takes the
    bindings being built (``None``: it does), as the member's own code would still be
    in its loops there: a failed guard ``continue``s it, a stop ``break``s it.
    """
    skip = c.gated_places()
    n = len(guards)
    code = CodeLines()
    code.line("def _enumerate_due(M, now, _inord):")
    code.depth += 1
    for k in range(n):
        code.line(f"_out{k} = []")
    input_like = c.input_arcs_in_binding_order(skip)
    early = any(c.timed[c.place_index[a.place]] for a in input_like)
    if early:
        for k in range(n):
            code.line(f"_rstar{k} = _inf")
            code.line(f"_cut{k} = False")
    for p in sorted({c.place_index[a.place] for a in c.arcs
                     if a.kind in (ArcKind.INPUT, ArcKind.READ, ArcKind.INHIBITOR)} - skip):
        code.line(f"_p{p} = M[{p}]")
    if not (input_like and c.is_binder(input_like[0], set())):
        code.line("for _once in _ONE_PASS:")
        code.depth += 1
    alive: list[str | None] = [None] * n
    pending = [guard for _, guard in guards]
    bound: list[str] = []
    needs: dict[int, list[tuple[str, str, Arc]]] = {}
    binders: dict[str, str | None] = {}
    for n_arc, arc in enumerate(input_like):
        ins = Inscription.parse(arc.inscription or "", arc.where)
        p = c.place_index[arc.place]
        value_var = f"_v{n_arc}"
        if c.is_binder(arc, set(bound)):
            fifo = early and c.timed[p]
            if fifo:
                code.line(f"_fifo{n_arc} = _inord[{p}]")
                for k in range(n):  # open in this loop: as alive when it starts
                    code.line(f"_o{n_arc}_{k} = {alive[k] or 'True'}")
                    alive[k] = f"_o{n_arc}_{k}"
            key = (c.key_source(ins.tree.elts[0], set(bound))
                   if p in c.keyed and isinstance(ins.tree, ast.Tuple) else None)
            times = f"_tv{n_arc}" if c.timed[p] and key is None else None
            if key is not None:
                code.line(f"for {value_var} in _p{p}.by_key.get({key}, ()):")
            elif times is not None:
                code.line(f"for {value_var}, {times} in _p{p}.items():")
            else:
                code.line(f"for {value_var} in _p{p}:")
            code.depth += 1
            if fifo:
                code.line(f"if _fifo{n_arc}:")
                code.line(f"    _et = {times or f'_p{p}[{value_var}]'}[0]")
                code.line("    if _et > now:")
                for k in range(n):
                    code.line(f"        if _o{n_arc}_{k} and _et > _rstar{k}: "
                              f"_o{n_arc}_{k} = False; _cut{k} = True")
                code.line(f"        if not ({' or '.join(f'_o{n_arc}_{k}' for k in range(n))}):"
                          " break")
            binders[value_var] = times
            new_vars = ins.pattern_variables - set(bound) - c.declared
            c.emit_match(code, ins.tree, value_var, set(bound),
                          c.net.places[arc.place].colour)
            bound.extend(sorted(new_vars, key=lambda v: ins.text.find(v)))
        else:
            c.emit_eval(code, value_var, ins.text, arc.where, bound)
        count = arc.count if isinstance(arc.count, int) else f"({arc.count})"
        needs.setdefault(p, []).append((value_var, str(count), arc))
        tested = False
        for k, guard in enumerate(pending):
            if guard is None or guard.free_variables(c.declared) - set(bound):
                continue
            pending[k] = None
            tested = True
            if alive[k] is not None:  # evaluated only where the member's code is
                code.line(f"_g{k} = {alive[k]}")
                code.line(f"if _g{k}:")
                code.depth += 1
            code.line("try:")
            code.line(f"    _g{k} = {guard.text}")
            code.line("except Exception as _e:")
            code.line(f"    raise _FiringError({'guard of ' + guards[k][0]!r}, "
                      f"{c.binding_dict_source(bound)}, _e) from _e")
            if alive[k] is not None:
                code.depth -= 1
            alive[k] = f"_g{k}"
        if tested and all(a is not None for a in alive):
            code.line(f"if not ({' or '.join(a for a in alive if a)}): continue")
    code.line("_ready = -_inf")
    for p, items in needs.items():
        c.emit_availability(code, p, items, binders)
    for arc in c.arcs:
        if arc.kind is ArcKind.INHIBITOR and c.place_index[arc.place] not in skip:
            c.emit_inhibitor(code, arc, bound)
    code.line("_b = (" + "".join(f"{v}, " for v in bound) + ")")
    for k in range(n):
        if alive[k] is not None:
            code.line(f"if {alive[k]}:")
            code.depth += 1
        if early:
            code.line(f"if now < _ready < _rstar{k}: _rstar{k} = _ready")
        code.line(f"_out{k}.append((_ready, _b))")
        if alive[k] is not None:
            code.depth -= 1
    code.depth = 1
    cuts = [f"_cut{k}" if early else "False" for k in range(n)]
    code.line("return (" + "".join(f"(_out{k}, {cuts[k]}), " for k in range(n)) + ")")
    return code.text()
