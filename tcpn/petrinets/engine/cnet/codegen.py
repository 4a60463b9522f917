"""Generate the C of one net: its tables, and per transition enumeration, firing and gate.

The generated functions follow the Python code :mod:`~tcpn.petrinets.engine.compiler` generates
for the same transition, step for step where the order shows (binder loops in the same
arc order over the place's values in the order they appeared, the guard as soon as its
variables are bound, output arcs in arc order, delays drawn in the same order), so that
the bindings come out in the same order and the draws from the generator are the same.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcpn.petrinets.colours import BoolSet, IntSet, ProductSet, UnitSet
from tcpn.petrinets.distributions import Exponential, Uniform
from tcpn.petrinets.engine.cnet.translate import Scalar, Translator, Unsupported, layout
from tcpn.petrinets.engine.compiler import CompiledNet, TransitionCompiler
from tcpn.petrinets.inscriptions import Inscription
from tcpn.petrinets.net import Arc, ArcKind

__all__ = ["NetPlan", "plan_net"]

_RUNTIME = Path(__file__).with_name("runtime.c")
_MAX_WIDTH = 64  # slots of one token (engine.pyx loads tokens through an array this long)


@dataclass
class NetPlan:
    """The C source of a net and what the Python side needs to read its state."""

    source: str
    slots: list[list[Scalar]]            # place -> the scalar colour set of each slot
    product: list[bool]                  # place -> its values are tuples
    variables: list[list[Scalar]]        # transition -> each variable's colour set
    #: error sites: (element as the Python engine names it, place of a colour check or -1)
    sites: list[tuple[str, int]] = field(default_factory=list)


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)


def _delay_code(delay: Any, where: str) -> str | None:
    """C for a transition or arc delay, or ``None`` without one."""
    if delay is None:
        return None
    if type(delay) is Exponential:
        return f"draw_exponential(s, {delay.mean_value!r})"
    if type(delay) is Uniform and float(delay.low) >= 0:
        return f"draw_uniform(s, {float(delay.low)!r}, {float(delay.high)!r})"
    if isinstance(delay, int | float) and not isinstance(delay, bool):
        value = float(delay)
        if 0.0 <= value < math.inf:
            return repr(value)
    raise Unsupported(f"{where}: the delay {delay!r} is outside the C engine's subset "
                      "(a constant, Exponential or Uniform)")


class _TransitionPlan:
    """The C functions of one transition."""

    def __init__(self, compiled: CompiledNet, t: int, plan: NetPlan):
        self.compiled = compiled
        self.net = compiled.net
        self.transition = compiled.transitions[t]
        self.t = t
        self.name = self.transition.name
        self.where = f"transition {self.name}"
        self.plan = plan
        spec = self.net.transitions[self.name]
        self.arcs = [a for a in self.net.arcs if a.transition == self.name]
        self.helper = TransitionCompiler(self.net, self.name, t, compiled.place_index,
                                          compiled.timed, self.arcs)
        self.scope = self.net.scope_of(self.name)
        if spec.action is not None:
            raise Unsupported(f"{self.where}: its code action runs Python")
        if self.transition.reads_clock:
            raise Unsupported(f"{self.where}: its guard reads the clock ({spec.guard!r}), "
                              "which the Cython-built engine tests again as the clock "
                              "advances, not the C one")
        if self.helper.free:
            raise Unsupported(f"{self.where}: free variable(s) "
                              f"{', '.join(sorted(self.helper.free))}")
        for arc in self.arcs:
            if arc.kind not in (ArcKind.INPUT, ArcKind.READ, ArcKind.OUTPUT):
                raise Unsupported(f"{arc.where}: {arc.kind.value} arcs are outside the C "
                                  "engine's subset")
            if not isinstance(arc.count, int) or arc.count < 1:
                raise Unsupported(f"{arc.where}: the count {arc.count!r} is not a constant >= 1")
            if arc.when is not None:
                raise Unsupported(f"{arc.where}: conditional output ({arc.when!r})")
            if arc.multiset:
                raise Unsupported(f"{arc.where}: a multiset computed from the binding "
                                  f"({arc.inscription!r})")
        self.variables = list(self.transition.variables)
        self.types: dict[str, Scalar] = {}
        self.delay = _delay_code(spec.delay, f"delay of {self.where}")
        self.guard = spec.guard

    # -- helpers --------------------------------------------------------------------------
    def _p(self, arc: Arc) -> int:
        return self.compiled.place_index[arc.place]

    def _site(self, where: str, place: int = -1) -> int:
        self.plan.sites.append((where, place))
        return len(self.plan.sites) - 1

    def _translator(self, bound: set[str]) -> Translator:
        variables = {}
        for name in bound:
            colour = self.types[name]
            kind: Any = colour
            if isinstance(colour, IntSet):
                kind = "int"
            elif isinstance(colour, BoolSet):
                kind = "bool"
            elif isinstance(colour, UnitSet):
                kind = "unit"
            variables[name] = (f"b[{self.variables.index(name)}]", kind)
        return Translator(variables, self.scope)

    def _fail(self, site: int, bound: int) -> str:
        return (f"{{ s->err_where = {site}; s->err_nb = {bound}; "
                f"memcpy(s->err_b, b, sizeof(int64_t) * {len(self.variables) or 1}); return; }}")

    # -- enumeration ----------------------------------------------------------------------
    def enumerate(self) -> str:
        skip = set(self.transition.gate_places)
        order = self.helper.input_arcs_in_binding_order(skip)
        declared = set(self.scope)
        code = _Lines()
        code(f"Bindings *out = &s->bindings[{self.t}];")
        code("out->n = 0;")
        code(f"int64_t b[{len(self.variables) or 1}] = {{0}};")
        code("(void)b;")
        guard = Inscription.parse(self.guard, f"guard of {self.where}") if self.guard else None
        guard_names = guard.free_variables(declared) if guard is not None else frozenset()
        bound: set[str] = set()
        closing = 0
        one_pass = not (order and self.helper.is_binder(order[0], set())) or (
            guard is not None and not guard_names)
        if one_pass:
            code("do {")
            code.depth += 1
        guard_done = guard is None
        if guard is not None and not guard_names:
            self._emit_guard(code, bound)
            guard_done = True
        needs: dict[int, list[tuple[str, int, bool]]] = {}
        for n, arc in enumerate(order):
            p = self._p(arc)
            slots = self.plan.slots[p]
            width = len(slots)
            if self.helper.is_binder(arc, bound):
                code(f"for (int64_t i{n} = 0; i{n} < s->places[{p}].n; i{n}++) {{")
                code.depth += 1
                closing += 1
                code(f"if (pl_have(&s->places[{p}], i{n}) == 0) continue;")
                code(f"const int64_t *v{n} = s->places[{p}].vals + i{n} * {width};")
                tree = ast.parse(arc.inscription or "", mode="eval").body
                self._emit_match(code, tree, f"v{n}", p, bound, declared, arc)
                needs.setdefault(p, []).append((f"v{n}", int(arc.count), True))
            else:
                parts = self._translator(bound).value(arc.inscription or "", slots, arc.where)
                code(f"int64_t v{n}[{width}] = {{{', '.join(x.code for x in parts)}}};")
                code(f"if (s->err) {self._fail(self._site(arc.where), len(bound))}")
                needs.setdefault(p, []).append((f"v{n}", int(arc.count), False))
            if not guard_done and not guard_names - bound:
                self._emit_guard(code, bound)
                guard_done = True
        code("double ready = -INFINITY;")
        for p, items in needs.items():
            self._emit_availability(code, p, items)
        code(f"bl_push(out, ready, b, {len(self.variables)});")
        for _ in range(closing):
            code.depth -= 1
            code("}")
        if one_pass:
            code.depth -= 1
            code("} while (0);")
        return (f"static void tc_enum_{self.t}(NetState *s) {{\n"
                + "\n".join(code.lines) + "\n}\n")

    def _emit_guard(self, code: _Lines, bound: set[str]) -> None:
        where = f"guard of {self.where}"
        guard = self._translator(bound).expression(self.guard or "", where)
        code(f"{{ int64_t g_ = (int64_t)({guard.code});")
        code(f"  if (s->err) {self._fail(self._site(where), len(bound))}")
        code("  if (!g_) continue; }")

    def _emit_match(self, code: _Lines, tree: ast.AST, row: str, p: int, bound: set[str],
                    declared: set[str], arc: Arc) -> None:
        slots = self.plan.slots[p]
        if isinstance(tree, ast.Tuple):
            if not self.plan.product[p] or len(tree.elts) != len(slots):
                raise Unsupported(f"{arc.where}: the pattern {arc.inscription!r} does not "
                                  "match the place's colour set component by component")
            elements: list[ast.AST] = list(tree.elts)
        elif self.plan.product[p]:
            raise Unsupported(f"{arc.where}: the pattern {arc.inscription!r} binds a whole "
                              "tuple (the C engine binds its components)")
        else:
            elements = [tree]
        new_names: list[str] = []
        for i, (element, colour) in enumerate(zip(elements, slots, strict=True)):
            if isinstance(element, ast.Name) and element.id not in bound \
                    and element.id not in declared:
                self.types[element.id] = colour
                code(f"b[{self.variables.index(element.id)}] = {row}[{i}];")
                bound.add(element.id)
                new_names.append(element.id)
                continue
            if not isinstance(element, ast.Name | ast.Constant):
                raise Unsupported(f"{arc.where}: the pattern {arc.inscription!r} is outside "
                                  "the C engine's subset")
            typed = self._translator(bound).value(ast.unparse(element), [colour], arc.where)[0]
            code(f"if ({row}[{i}] != {typed.code}) continue;")

    def _emit_availability(self, code: _Lines, p: int, items: list[tuple[str, int, bool]]) -> None:
        timed = self.compiled.timed[p]
        place = f"s->places[{p}]"
        if len(items) == 1 and items[0][2] and items[0][1] == 1:
            if timed:
                index = items[0][0].replace("v", "i", 1)
                first = f"{place}.times[{index}].t[0]"
                code(f"if ({first} > ready) ready = {first};")
            return
        width = len(self.plan.slots[p])
        for j, (ref, count, _binder) in enumerate(items):
            need = [str(count)]
            for k, (other, other_count, _) in enumerate(items):
                if k != j:
                    need.append(f"(memcmp({ref}, {other}, {width * 8}) == 0 ? {other_count} : 0)")
            code(f"{{ int64_t need_ = {' + '.join(need)};")
            code(f"  int64_t e_ = pl_find(&{place}, {ref});")
            code(f"  if (e_ < 0 || pl_have(&{place}, e_) < need_) continue;")
            if timed:
                code(f"  if ({place}.times[e_].t[need_ - 1] > ready) "
                     f"ready = {place}.times[e_].t[need_ - 1];")
            code("}")

    # -- firing ---------------------------------------------------------------------------
    def fire(self) -> str:
        code = _Lines()
        everything = set(self.variables)
        nv = len(self.variables)
        translator = self._translator(everything)
        inputs = [a for a in self.arcs if a.kind is ArcKind.INPUT]
        for arc in inputs:
            p = self._p(arc)
            parts = translator.value(arc.inscription or "", self.plan.slots[p], arc.where)
            code(f"{{ int64_t v[{len(parts)}] = {{{', '.join(x.code for x in parts)}}};")
            code(f"  if (s->err) {self._fail(self._site(arc.where), nv)}")
            take = "pl_take_time" if self.compiled.timed[p] else "pl_take"
            code(f"  {take}(&s->places[{p}], v, {arc.count}); }}")
        if self.delay is not None:
            code(f"double d = {self.delay};")
        for arc in self.arcs:
            if arc.kind is not ArcKind.OUTPUT:
                continue
            p = self._p(arc)
            slots = self.plan.slots[p]
            parts = translator.value(arc.inscription or "", slots, arc.where)
            code(f"{{ int64_t v[{len(parts)}] = {{{', '.join(x.code for x in parts)}}};")
            code(f"  if (s->err) {self._fail(self._site(arc.where), nv)}")
            tests = []
            for i, colour in enumerate(slots):
                if isinstance(colour, IntSet) and colour.low is not None:
                    tests.append(f"v[{i}] < INT64_C({colour.low})")
                if isinstance(colour, IntSet) and colour.high is not None:
                    tests.append(f"v[{i}] > INT64_C({colour.high})")
            if tests:
                site = self._site(arc.where, p)
                code(f"  if ({' || '.join(tests)}) {{ s->err = ERR_COLOUR; "
                     f"memcpy(s->err_tok, v, sizeof(v)); {self._fail(site, nv)} }}")
            if self.compiled.timed[p]:
                stamp = "now" + (" + d" if self.delay is not None else "")
                arc_delay = _delay_code(arc.delay, f"delay of {arc.where}")
                if arc_delay is not None:
                    code(f"  double ad = {arc_delay};")
                    stamp += " + ad"
                code(f"  double ts = {stamp};")
                code(f"  for (int k = 0; k < {arc.count}; k++) "
                     f"pl_add_time(&s->places[{p}], v, ts); }}")
            else:
                code(f"  pl_add(&s->places[{p}], v, {arc.count}); }}")
        return (f"static void tc_fire_{self.t}(NetState *s, const int64_t *b, double now) {{\n"
                "    (void)now;\n" + "\n".join(code.lines) + "\n}\n")

    def gate(self, g: int) -> str:
        """C of the gate this transition shares (its arcs on the gate places)."""
        code = _Lines()
        code("double ready = -INFINITY;")
        translator = Translator({}, self.scope)
        needs: dict[tuple[int, tuple[str, ...]], int] = {}
        for arc in self.arcs:
            p = self._p(arc)
            if p not in self.transition.gate_places or arc.kind is ArcKind.OUTPUT:
                continue
            parts = translator.value(arc.inscription or "", self.plan.slots[p], arc.where)
            key = (p, tuple(x.code for x in parts))
            needs[key] = needs.get(key, 0) + int(arc.count)
        for (p, values), count in needs.items():
            place = f"s->places[{p}]"
            code(f"{{ int64_t v[{len(values)}] = {{{', '.join(values)}}};")
            code(f"  int64_t e_ = pl_find(&{place}, v);")
            code(f"  if (e_ < 0 || pl_have(&{place}, e_) < {count}) return 0;")
            if self.compiled.timed[p]:
                code(f"  if ({place}.times[e_].t[{count - 1}] > ready) "
                     f"ready = {place}.times[e_].t[{count - 1}];")
            code("}")
        code("*out = ready;")
        code("return 1;")
        return (f"static int tc_gate_{g}(NetState *s, double *out) {{\n"
                + "\n".join(code.lines) + "\n}\n")


def c_table(name: str, values: list[int]) -> str:
    """``values`` as a C ``static const int`` array named ``name`` (``{0}`` when empty)."""
    return f"static const int {name}[] = {{{', '.join(map(str, values or [0]))}}};"


def c_flat_table(name: str, groups: list[tuple[int, ...]] | tuple[tuple[int, ...], ...]) -> str:
    """``groups`` of ints as two C arrays: ``NAME_LIST`` (all items) and ``NAME_START``
    (where each group starts in it, and the end)."""
    starts, items = [0], list[int]()
    for group in groups:
        items.extend(group)
        starts.append(len(items))
    return c_table(f"{name}_START", starts) + "\n" + c_table(f"{name}_LIST", items)


def plan_net(compiled: CompiledNet) -> NetPlan:
    """The C engine's source for ``compiled``; :class:`Unsupported` names what keeps it out."""
    net = compiled.net
    slots, product = [], []
    for name in compiled.place_names:
        colour = net.places[name].colour
        slots.append(layout(colour, f"place {name}"))
        if len(slots[-1]) > _MAX_WIDTH:
            raise Unsupported(f"place {name}: more than {_MAX_WIDTH} components")
        product.append(isinstance(colour, ProductSet))
    plan = NetPlan("", slots, product, [])
    transitions = [_TransitionPlan(compiled, t, plan) for t in range(len(compiled.transitions))]
    functions = []
    for tp in transitions:
        functions.append(tp.enumerate())
        functions.append(tp.fire())
        plan.variables.append([tp.types[v] for v in tp.variables])
    for g, (_fn, _places, members) in enumerate(compiled.gates):
        functions.append(transitions[members[0]].gate(g))
    n_t, n_g = len(transitions), len(compiled.gates)
    priorities = [t.priority for t in compiled.transitions]
    header = [
        f"#define NET_PLACES {len(slots)}",
        f"#define NET_TRANSITIONS {n_t}",
        f"#define NET_GATES {n_g}",
        f"#define NET_VARS {max([len(v) for v in plan.variables] + [1])}",
        f"#define NET_WIDTH {max([len(s) for s in slots] + [1])}",
        f"#define NET_SIMPLE {int(not any(compiled.timed) and len(set(priorities)) <= 1)}",
        c_table("PLACE_WIDTH", [len(s) for s in slots]),
        c_table("PLACE_TIMED", [int(x) for x in compiled.timed]),
        c_table("NVARS", [len(v) for v in plan.variables]),
        c_table("PRIORITY", priorities),
        c_table("GATE_OF", list(compiled.gate_of)),
        c_flat_table("REQ", [t.required_places for t in compiled.transitions]),
        c_flat_table("BODY_AFF", compiled.body_affected),
        c_flat_table("GATE_AFF", compiled.gate_affected),
        c_flat_table("MEMBERS", [members for _fn, _places, members in compiled.gates]),
    ]
    dispatch = [
        "static void tc_enumerate(NetState *s, int t) {\n    switch (t) {\n"
        + "".join(f"    case {t}: tc_enum_{t}(s); break;\n" for t in range(n_t)) + "    }\n}\n",
        "static void tc_fire(NetState *s, int t, const int64_t *b, double now) {\n"
        "    switch (t) {\n"
        + "".join(f"    case {t}: tc_fire_{t}(s, b, now); break;\n" for t in range(n_t))
        + "    }\n}\n",
        "static int tc_gate(NetState *s, int g, double *ready) {\n    switch (g) {\n"
        + "".join(f"    case {g}: return tc_gate_{g}(s, ready);\n" for g in range(n_g))
        + "    }\n    return 0;\n}\n",
    ]
    plan.source = "\n".join([*header, _RUNTIME.read_text(), *functions, *dispatch])
    return plan
