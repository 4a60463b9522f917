"""CPN ML's functions as values, curried functions, folds and datatypes, as SML defines them.

Declarations are written by hand and their values worked out by hand from the Definition of
Standard ML and the Basis Library (``foldl f b [x1, x2]`` is ``f (x2, f (x1, b))``, ``foldr``
from the right; ``o`` composes, infix 3; a function declared with several argument groups
is curried and may be applied to fewer; constructors of a ``datatype`` and of ``option``
make values and match them in patterns; ``valOf NONE`` raises ``Option``); where SML/NJ is
installed, the same declarations run in ``sml`` and must give the same values. What a
model could use to exhaust the machine through these forms stops at a named limit.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_exchange_cpnml_cells import declarations_net

from tcpn.limits import using_limits
from tcpn.petrinets.exchange.cpn_import import read_cpn

needs_sml = pytest.mark.skipif(
    shutil.which("sml") is None,
    reason="SML/NJ's sml is not installed (Debian: apt-get install smlnj; make test does it)")

#: (declaration, the int it gives when it names one, worked out by hand)
DECLARATIONS: list[tuple[str, str | None, int | None]] = [
    ("fun add x y = x + y;", None, None),
    ("val a1 = add 1 2;", "a1", 3),
    ("val inc = add 1;", None, None),
    ("val a2 = inc 5;", "a2", 6),
    ("val a3 = (fn x => fn y => x * y) 3 4;", "a3", 12),
    ("val a4 = ((fn x => x + 1) o (fn x => x * 2)) 5;", "a4", 11),  # 5 * 2 + 1
    ("val a5 = foldl (fn (x, acc) => acc * 10 + x) 0 [1, 2, 3];", "a5", 123),
    ("val a6 = List.foldr (fn (x, acc) => acc * 10 + x) 0 [1, 2, 3];", "a6", 321),
    ("val a7 = List.nth (List.foldl (fn (x, acc) => x :: acc) [] [1, 2, 3], 0);", "a7", 3),
    ("val a8 = length (List.filter (fn x => x mod 2 = 0) (List.tabulate (10, fn i => i)));",
     "a8", 5),
    ("val a9 = foldl (fn (x, s) => x + s) 0 (List.map (add 10) [1, 2]);", "a9", 23),
    ("val b1 = if List.exists (fn x => x > 2) [1, 3] andalso List.all (fn x => x > 0) [1, 3]"
     " then 1 else 0;", "b1", 1),
    ("val b2 = hd (rev [1, 2, 3]) + hd (tl [4, 5]) + List.length [7, 7];", "b2", 10),
    ("fun twice f x = f (f x);", None, None),
    ("val b3 = twice (add 3) 1;", "b3", 7),
    ("fun pair (a, b) c = a * b + c;", None, None),
    ("val b4 = pair (2, 3) 4;", "b4", 10),
    ("fun sum [] acc = acc | sum (h :: t) acc = sum t (acc + h);", None, None),
    ("val b5 = sum [1, 2, 3] 10;", "b5", 16),
    ("fun mul (a, b) = a * b;", None, None),
    ("val b6 = foldl mul 1 [2, 3, 4];", "b6", 24),  # a function of a pair, passed as a value
    ("val b7 = (inc o mul) (3, 4);", "b7", 13),
    ("datatype shape = Circle of int | Rect of int * int | Dot;", None, None),
    ("fun area (Circle r) = 3 * r * r | area (Rect (w, h)) = w * h | area Dot = 0;",
     None, None),
    ("val c1 = area (Circle 2) + area (Rect (3, 4)) + area Dot;", "c1", 24),
    ("val c2 = foldl (fn (s, acc) => acc + area s) 0 [Circle 1, Dot, Rect (2, 5)];", "c2", 13),
    ("val c3 = case SOME 4 of NONE => 0 | SOME v => v * 2;", "c3", 8),
    ("val c4 = getOpt (NONE, 7) + valOf (SOME 1) + Option.getOpt (SOME 2, 5);", "c4", 10),
    ("val c5 = if isSome (SOME 1) andalso not (Option.isSome NONE) then 1 else 0;", "c5", 1),
    ("val c6 = valOf NONE handle Option => 9;", "c6", 9),
    ("fun find p [] = NONE | find p (h :: t) = if p h then SOME h else find p t;", None, None),
    ("val c7 = getOpt (find (fn x => x > 2) [1, 5, 3], 0);", "c7", 5),
    ("val c8 = length (List.map SOME [1, 2]);", "c8", 2),
    ("val c9 = if Rect (1, 2) = Rect (1, 2) andalso Dot <> Circle 1 then 1 else 0;", "c9", 1),
]
EXPECTED = {name: value for _, name, value in DECLARATIONS if name is not None}


def test_functions_folds_and_datatypes_give_the_values_worked_out_by_hand():
    imported = read_cpn(declarations_net([text for text, _, _ in DECLARATIONS]))
    assert imported.complete, imported.report.text()
    declarations = imported.net.declarations
    assert {name: declarations[name] for name in EXPECTED} == EXPECTED
    # constructors' values: a constant, or the constructor's name with what it carries
    assert declarations["area"](("Rect", (2, 3))) == 6 and declarations["area"]("Dot") == 0
    assert declarations["add"](2)(5) == 7  # curried: a function of the second argument


@needs_sml
def test_sml_nj_gives_the_same_values(tmp_path: Path):
    program = tmp_path / "functions.sml"
    prints = " ^ ".join(f'"{name}=" ^ Int.toString {name} ^ " "' for name in EXPECTED)
    program.write_text("\n".join(text for text, _, _ in DECLARATIONS)
                       + f'\nval _ = print ("OUT " ^ {prints} ^ "\\n");\n', encoding="utf-8")
    run = subprocess.run(["sml", str(program)], capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL, check=False)
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith("OUT ")), None)
    assert line is not None, run.stdout + run.stderr
    sml = {k: int(v.replace("~", "-")) for k, v in re.findall(r"(\w+)=(~?\d+)", line)}
    assert sml == EXPECTED
