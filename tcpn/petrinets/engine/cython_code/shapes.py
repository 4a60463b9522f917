"""A transition's generated code as the source of a Cython module: its *shape*.

:mod:`~tcpn.petrinets.engine.compiler` generates Python source per transition; the native
engine (:mod:`~tcpn.petrinets.engine.native`) builds one C extension per shape, the code
with the transition's own constants (place indices, error messages) taken out, shared by
the transitions and nets that have it. The rewrites here keep the code's meaning (the
Python engine stays the reference: ``tests/test_native.py`` compares the two firing by
firing) and let Cython call C where Python would dispatch: place indices as C integers,
exact lists and dicts, times as doubles, a record's fields and a tuple's items read in C,
a token count moved with one hash of its value.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import re
import textwrap
from collections.abc import Set as AbstractSet
from functools import lru_cache
from pathlib import Path
from typing import Any

from tcpn.petrinets.engine.caches import NATIVE
from tcpn.petrinets.engine.codecache import cache_root, write_atomically
from tcpn.petrinets.engine.compiler import CompiledTransition

__all__ = ["HEADER", "SHAPE_HELPERS", "shape_module", "stored_shape_of", "transition_shape"]

#: the directives of every module Cython builds from the engine's Python code
HEADER = "# cython: language_level=3, binding=True, annotation_typing=False\n"
#: the functions the compiler generates per transition
_FUNCTIONS = ("_enumerate", "_enumerate_due", "_fire", "_fire_tracked", "_gate")


class _Canonical(ast.NodeTransformer):
    """Takes a transition's own constants out of its code, so equal shapes share it.

    Place indices (``_p17`` locals, ``M[17]``, ``_inord[17]``, ``_last[17]``) become
    ``_q<k>`` and ``_P<k>`` (``k``: order of first use) and the places named in error
    messages ``_W<j>``; ``values`` maps the new global names to the transition's values.
    """

    _INDEXED = frozenset({"M", "_inord", "_last"})

    def __init__(self) -> None:
        self.places: dict[int, int] = {}
        self.values: dict[str, Any] = {}

    def _place(self, index: int) -> int:
        k = self.places.setdefault(index, len(self.places))
        self.values[f"_P{k}"] = index
        return k

    def visit_Name(self, node: ast.Name) -> ast.AST:
        match = re.fullmatch(r"_p(\d+)", node.id)
        if match:
            node.id = f"_q{self._place(int(match.group(1)))}"
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if (isinstance(node.value, ast.Name) and node.value.id in self._INDEXED
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int):
            node.slice = ast.Name(f"_P{self._place(node.slice.value)}", ast.Load())
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if (isinstance(node.func, ast.Name) and node.func.id == "_FiringError" and node.args
                and isinstance(node.args[0], ast.Constant)):
            name = f"_W{sum(n.startswith('_W') for n in self.values)}"
            self.values[name] = node.args[0].value
            node.args[0] = ast.Name(name, ast.Load())
        return node


#: this module's code: a cached shape (:func:`stored_shape_of`) is valid for it only
_MODULE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()

#: the generated functions the simulator calls (``enumerate`` and ``fire`` serve the
#: state-space explorer and stay in Python)
_SIMULATOR_FUNCTIONS = ("_enumerate_due", "_fire_tracked", "_gate")


def transition_shape(transition: CompiledTransition, keyed: AbstractSet[int] = frozenset()
                      ) -> tuple[str, dict[str, Any]]:
    """The transition's code as a factory body, and the values the factory reads.

    The body, once named ``def make(_ns):``, returns the transition's simulator
    functions; their globals become the factory's locals (closure variables for them),
    read from ``_ns``, so each built net gets its own objects while transitions of the
    same shape share the factory. ``keyed``: the net's places kept as
    :class:`~tcpn.petrinets.engine.compiler.KeyedTokens` (``CompiledNet.keyed_places``).
    """
    namespace = transition.enumerate.__globals__
    keyed_here = frozenset(keyed) & {*transition.reads_places, *transition.writes_places}
    body, used, constants = stored_shape_of(transition.source, frozenset(namespace),
                                             keyed_here, transition.records)
    return body, {n: constants[n] if n in constants else namespace[n] for n in used}


@lru_cache(maxsize=4096)
def stored_shape_of(source: str, names: frozenset[str], keyed: frozenset[int] = frozenset(),
                     records: tuple[tuple[str, tuple[str, ...]], ...] = ()
                     ) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """:func:`_shape_of`, kept in the cache directory beside the built modules.

    Parsing and rewriting a transition's code costs more than loading its built module
    (0.4 s of CPU for the reference dumbbell's 84 transitions, measured), and a fresh
    process finds the same sources again. The key covers the source, the globals' names
    and this module's own code; the entry is a JSON file written whole (renamed into
    place), and one that cannot be read is computed again.
    """
    digest = hashlib.sha256(_MODULE_DIGEST.encode())
    for text in (source, *sorted(names), *map(str, sorted(keyed)), repr(records)):
        digest.update(text.encode() + b"\0")
    root = cache_root()
    if root is None:
        return _shape_of(source, names, keyed, records)
    path = root / "native" / "shapes" / f"{digest.hexdigest()[:32]}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        stored = json.loads(path.read_text())
        NATIVE.used(path)
        return stored["body"], tuple(stored["used"]), stored["constants"]
    body, used, constants = _shape_of(source, names, keyed, records)
    with contextlib.suppress(OSError, TypeError):
        stored_text = json.dumps({"body": body, "used": used, "constants": constants})
        write_atomically(path, stored_text.encode())
        NATIVE.wrote(path)
    return body, used, constants


def _shape_of(source: str, names: frozenset[str], keyed: frozenset[int] = frozenset(),
              records: tuple[tuple[str, tuple[str, ...]], ...] = ()
              ) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """:func:`_transition_shape` for a source, its globals' names, the keyed places among
    its own and its record variables (nets are rebuilt per run: the same sources come
    back)."""
    tree = ast.parse(source)
    tree.body = [f for f in tree.body
                 if isinstance(f, ast.FunctionDef) and f.name in _SIMULATOR_FUNCTIONS]
    canonical = _Canonical()
    tree = canonical.visit(tree)
    fields = {name: {f: i for i, f in enumerate(names_)} for name, names_ in records}
    tree = _FieldReads(fields).visit(tree)  # inscriptions cannot assign (no ``:=``)
    tree = _ItemReads().visit(tree)
    used = tuple(sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
                        & ((names | canonical.values.keys()) - {"__builtins__", *_FUNCTIONS})))
    functions = [f for f in tree.body if isinstance(f, ast.FunctionDef)]
    # place indices as C integers, the marking and its order lists as exact lists, and
    # the places as exact dicts but the keyed ones (a dict subclass): Cython then calls
    # the list's and dict's C functions directly
    head = [f"    cdef Py_ssize_t {name} = _ns[{name!r}]" if name.startswith("_P")
            else f"    {name} = _ns[{name!r}]" for name in used]
    plain = {f"_q{k}" for p, k in canonical.places.items() if p not in keyed}
    functions = [_CountMoves(plain).visit(f) for f in functions]
    body = []
    for function in functions:
        definition, rest = ast.unparse(function).split("\n", 1)
        definition = re.sub(r"\b(M|_inord|_last)\b", r"list \1", definition)
        # a binder over an untimed place's values as a loop over ``.keys()``: Cython
        # walks an exact dict's table then (``PyDict_Next``) where ``for v in d`` makes an
        # iterator object; the order is the same
        rest = re.sub(r"\bfor (_v\d+) in (_q\d+):", r"for \1 in \2.keys():", rest)
        assigned = {n.id for n in ast.walk(function)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        dicts = sorted(assigned & plain)
        if dicts:
            rest = f"    cdef dict {', '.join(dicts)}\n{rest}"
        if function.name == "_enumerate_due":
            # the clock and the readiness times as C doubles: the timed binder loops
            # compare them per token (see _ENUMERATE_DOUBLES)
            definition = definition.replace(", now,", ", double now,")
            stored = sorted(assigned & _ENUMERATE_DOUBLES)
            if stored:
                rest = f"    cdef double {', '.join(stored)}\n{rest}"
            flags = sorted(n for n in assigned if _GROUP_FLAG.fullmatch(n))
            if flags:
                rest = f"    cdef bint {', '.join(flags)}\n{rest}"
        body.append(textwrap.indent("\n".join([definition, rest]), "    "))
    tail = "    return {" + ", ".join(f"{f.name!r}: {f.name}" for f in functions) + "}"
    return "\n".join([*head, *body, tail]), used, canonical.values


class _FieldReads(ast.NodeTransformer):
    """Rewrites ``v.f``, ``v`` a record variable and ``f`` its ``i``-th field, to
    ``_tcpn_field(v, i, "f")`` (see :data:`SHAPE_HELPERS`), outside the lambdas and
    comprehensions that bind a name of the record variables."""

    def __init__(self, records: dict[str, dict[str, int]]):
        self.records = records

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            index = self.records.get(node.value.id, {}).get(node.attr)
            if index is not None:
                call = ast.Call(ast.Name("_tcpn_field", ast.Load()),
                                [node.value, ast.Constant(index), ast.Constant(node.attr)], [])
                return ast.copy_location(call, node)
        return node

    def _scope(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Lambda):
            arguments = node.args
            bound = {a.arg for a in (*arguments.posonlyargs, *arguments.args,
                                     *arguments.kwonlyargs, arguments.vararg,
                                     arguments.kwarg) if a is not None}
        else:
            bound = {n.id for g in node.generators  # type: ignore[attr-defined]
                     for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        return node if bound & self.records.keys() else self.generic_visit(node)

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = _scope
    visit_GeneratorExp = _scope


class _CountMoves(ast.NodeTransformer):
    """Rewrites the compiler's code that moves ``n`` tokens of a value out of or into an
    untimed place held as an exact dict (``places``) to ``_tcpn_take(q, v, n)`` and
    ``_tcpn_put(q, v, n)`` (see :data:`SHAPE_HELPERS`): the same counts, errors and
    insertion order, with the value hashed once where the dict's look-up, then its
    update or deletion, hashed it twice (a state record hashes every field).

    The code rewritten, as :meth:`CompiledTransition` writes it (``n`` a constant)::

        _c = q[v] - n                        q[v] = q.get(v, 0) + n
        if _c: q[v] = _c
        else: del q[v]
    """

    def __init__(self, places: set[str]):
        self.places = places

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and \
                    isinstance(statements[0], ast.stmt):
                setattr(node, name, self._moves(statements))
        return node

    def _moves(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        k = 0
        while k < len(statements):
            statement = statements[k]
            taken = self._take(statement, statements[k + 1] if k + 1 < len(statements)
                               else None)
            if taken is not None:
                out.append(ast.copy_location(taken, statement))
                k += 2
                continue
            put = self._put(statement)
            out.append(statement if put is None else ast.copy_location(put, statement))
            k += 1
        return out

    @staticmethod
    def _call(helper: str, place: str, value: ast.expr, count: ast.Constant) -> ast.stmt:
        return ast.Expr(ast.Call(ast.Name(helper, ast.Load()),
                                 [ast.Name(place, ast.Load()), value, count], []))

    def _entry(self, node: ast.AST) -> tuple[str, str] | None:
        """``(q, v)`` when ``node`` is ``q[v]``, ``q`` one of the places, ``v`` a name."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                node.value.id in self.places and isinstance(node.slice, ast.Name):
            return node.value.id, node.slice.id
        return None

    def _take(self, first: ast.stmt, second: ast.stmt | None) -> ast.stmt | None:
        if not (isinstance(first, ast.Assign) and len(first.targets) == 1
                and isinstance(first.targets[0], ast.Name) and first.targets[0].id == "_c"
                and isinstance(first.value, ast.BinOp) and isinstance(first.value.op, ast.Sub)
                and _count(first.value.right) and isinstance(second, ast.If)):
            return None
        entry = self._entry(first.value.left)
        if entry is None:
            return None
        place, value = entry
        expected = (f"if _c:\n    {place}[{value}] = _c\nelse:\n    del {place}[{value}]")
        if ast.unparse(second) != expected:
            return None
        assert isinstance(first.value.right, ast.Constant)
        return self._call("_tcpn_take", place, ast.Name(value, ast.Load()), first.value.right)

    def _put(self, statement: ast.stmt) -> ast.stmt | None:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            return None
        entry = self._entry(statement.targets[0])
        added = statement.value
        if entry is None or not (isinstance(added, ast.BinOp) and isinstance(added.op, ast.Add)
                                 and _count(added.right)):
            return None
        place, value = entry
        if ast.unparse(added.left) != f"{place}.get({value}, 0)":
            return None
        assert isinstance(added.right, ast.Constant)
        return self._call("_tcpn_put", place, ast.Name(value, ast.Load()), added.right)


def _count(node: ast.expr) -> bool:
    """Whether ``node`` is a token count the helpers take: a positive integer constant."""
    return isinstance(node, ast.Constant) and type(node.value) is int and 0 < node.value < 2**31


class _ItemReads(ast.NodeTransformer):
    """Rewrites a read ``v[i]``, ``v`` a name and ``i`` an integer constant, to
    ``_tcpn_item(v, i)`` (see :data:`SHAPE_HELPERS`): the same value or error."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        index = node.slice
        if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and isinstance(index, ast.Constant) and type(index.value) is int
                and abs(index.value) < 2**31):
            call = ast.Call(ast.Name("_tcpn_item", ast.Load()), [node.value, index], [])
            return ast.copy_location(call, node)
        return node


#: the shapes' helpers for reading a record's field or a tuple's item. A record is a named
#: tuple (its place's colour set says so, and tokens are tested when they are put there),
#: so the field is its item, read in C; anything else is read as an attribute, as Python
#: would (measured: 10 -> 3 ns a read, about -3 % of a 100 Mbit/s run). ``v[i]`` reads a
#: tuple's item in C when ``v``'s type keeps tuple's ``__getitem__`` (a tuple, a record);
#: Cython's own item read takes only exact tuples and lists in C, and a named tuple's
#: otherwise goes through a call of ``tuple.__getitem__`` as a Python method (about 700
#: machine instructions a read, counted: the token checks after a sender's state update
#: read 8 to 11 of them per firing). A field read needs no such test: a named tuple's
#: field is its tuple item whatever its ``__getitem__``
SHAPE_HELPERS = '''
from cpython.object cimport PyTypeObject
cdef extern from "Python.h":
    bint PyTuple_Check(object value)
    bint PyTuple_CheckExact(object value)
    PyTypeObject* Py_TYPE(object value)

# the tuple subclasses seen to keep tuple's __getitem__ (records), compared by address; the
# list holds them alive so that an address stays theirs
cdef PyTypeObject* _tcpn_kinds[8]
cdef int _tcpn_kind_count = 0
cdef list _tcpn_kind_refs = []

cdef bint _tcpn_learn(object value):
    global _tcpn_kind_count
    kind = type(value)
    if kind.__getitem__ is not tuple.__getitem__:
        return False
    if _tcpn_kind_count < 8:
        _tcpn_kind_refs.append(kind)
        _tcpn_kinds[_tcpn_kind_count] = <PyTypeObject*>kind
        _tcpn_kind_count += 1
    return True

cdef inline bint _tcpn_plain(object value):
    cdef PyTypeObject* kind
    cdef int k
    if PyTuple_CheckExact(value):
        return True
    if not PyTuple_Check(value):
        return False
    kind = Py_TYPE(value)
    for k in range(_tcpn_kind_count):
        if _tcpn_kinds[k] == kind:
            return True
    return _tcpn_learn(value)

cdef inline object _tcpn_field(object record, Py_ssize_t index, str name):
    if PyTuple_Check(record):
        return (<tuple>record)[index]
    return getattr(record, name)

cdef inline object _tcpn_item(object value, Py_ssize_t index):
    if _tcpn_plain(value):
        return (<tuple>value)[index]
    return value[index]

cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030D0000
    #define TCPN_GET(d, k, h) _PyDict_GetItem_KnownHash(d, k, h)
    #define TCPN_SET(d, k, v, h) _PyDict_SetItem_KnownHash(d, k, v, h)
    #define TCPN_DEL(d, k, h) _PyDict_DelItem_KnownHash(d, k, h)
    #else
    #define TCPN_GET(d, k, h) PyDict_GetItemWithError(d, k)
    #define TCPN_SET(d, k, v, h) PyDict_SetItem(d, k, v)
    #define TCPN_DEL(d, k, h) PyDict_DelItem(d, k)
    #endif
    /* place[value] -= count, the entry deleted at 0; place[value] missing: KeyError */
    static int tcpn_take(PyObject *place, PyObject *value, PyObject *count) {
        Py_hash_t hash = PyObject_Hash(value);
        PyObject *held, *left, *key;
        int nonzero, status;
        if (hash == -1) return -1;
        held = TCPN_GET(place, value, hash);
        if (held == NULL) {
            if (PyErr_Occurred()) return -1;
            key = PyTuple_Pack(1, value);
            if (key != NULL) { PyErr_SetObject(PyExc_KeyError, key); Py_DECREF(key); }
            return -1;
        }
        Py_INCREF(held);
        left = PyNumber_Subtract(held, count);
        Py_DECREF(held);
        if (left == NULL) return -1;
        nonzero = PyObject_IsTrue(left);
        if (nonzero < 0) status = -1;
        else if (nonzero) status = TCPN_SET(place, value, left, hash);
        else status = TCPN_DEL(place, value, hash);
        Py_DECREF(left);
        return status;
    }
    /* place[value] = place.get(value, 0) + count */
    static int tcpn_put(PyObject *place, PyObject *value, PyObject *count) {
        Py_hash_t hash = PyObject_Hash(value);
        PyObject *held, *total;
        int status;
        if (hash == -1) return -1;
        held = TCPN_GET(place, value, hash);
        if (held == NULL) {
            if (PyErr_Occurred()) return -1;
            Py_INCREF(count);  /* 0 + count: the counts are ints */
            total = count;
        } else {
            Py_INCREF(held);
            total = PyNumber_Add(held, count);
            Py_DECREF(held);
        }
        if (total == NULL) return -1;
        status = TCPN_SET(place, value, total, hash);
        Py_DECREF(total);
        return status;
    }
    """
    int _tcpn_take "tcpn_take"(dict place, object value, object count) except -1
    int _tcpn_put "tcpn_put"(dict place, object value, object count) except -1

'''


#: the locals of the generated ``enumerate_due`` that only ever hold times (floats: the
#: clock, timestamps, ``-inf`` and ``inf``), typed ``double`` with its ``now``; a C
#: comparison of doubles is what Python's comparison of floats computes
_ENUMERATE_DOUBLES = frozenset({"_rstar", "_ready", "_r", "_et",
                                *(f"_rstar{k}" for k in range(64))})  # a group's
#: a group's flags (:mod:`.groups`): whether a member is still open in a loop over a
#: timestamp-ordered place, whether its loop stopped early; C truth values, as the
#: members' own code tests them
_GROUP_FLAG = re.compile(r"_o\d+_\d+|_cut\d+")


def shape_module(body: str) -> str:
    """The module source of one transition shape: a factory ``make(_ns)``."""
    return f"{HEADER}{SHAPE_HELPERS}def make(_ns):\n{body}\n"
