"""CPN Tools files from a fifth field round (cpnfield26): the CPN ML they use, each form
read as CPN Tools and SML/NJ read it, on small nets and declarations written by hand.

Values are worked out by hand from CPN Tools' binding rules and the SML Basis Library;
where SML/NJ is installed the same declarations run in ``sml`` and must give the same
values.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from test_exchange_cpn_field import colset, cpn_file, spaces, var
from test_exchange_cpnml_cells import declarations_net

from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.space import explore


def _marking(space, state: int) -> dict[str, Counter]:
    return {place: Counter(repr(t.value) for t in tokens)
            for place, tokens in space.marking(state).items()}



def _complete_space(path: Path, text: str) -> Any:
    """The state space of CPN Tools file ``text`` written to ``path``, imported whole."""
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    return explore(imported.net, clock="absolute")

def test_a_list_variable_the_guard_binds_takes_its_tokens_on_an_input_arc(tmp_path):
    """``ns`` (``INT list``) stands on the input arc from an ``INT`` place: the multiset of
    its elements ('a ms = 'a list), which the arc cannot bind; the guard ``ns = [n, n]``
    binds it, as CPN Tools' binding does. With P = 1`1++2`2++1`3 only n = 2 finds two
    tokens n: one firing takes both 2s and puts the list on Q, then no n has two tokens
    (2 states, 1 edge, 1 dead marking)."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + colset("D2", "INTS", "<list><id>INT</id></list>")
        + var("D3", "INT", "n") + var("D4", "INTS", "ns"),
        [("P1", "P", "INT", "1`1++2`2++1`3"), ("P2", "C", "INT", "1`1++1`2++1`3"),
         ("P3", "Q", "INTS", "")],
        [("T1", "T", "[ns = [n, n]]", "")],
        [("A1", "PtoT", "T1", "P2", "n"), ("A2", "PtoT", "T1", "P1", "ns"),
         ("A3", "TtoP", "T1", "P3", "ns")])
    space = _complete_space(tmp_path / "guard_list.cpn", text)
    assert (len(space), space.n_edges, len(space.dead_markings())) == (2, 1, 1)
    (dead,) = space.dead_markings()
    after = _marking(space, dead)
    assert after["P"] == Counter({"1": 1, "3": 1})
    assert after["C"] == Counter({"1": 1, "3": 1})
    assert after["Q"] == Counter({"(2, 2)": 1})


#: (declaration, the int it names, worked out by hand): CPN Tools' RealToIntInf p r
#: (r written with p decimals, rounded to nearest, the point taken out) and
#: IntInfToReal p ii (a point put p digits from the right), which its simulator
#: declares and wireless-network models call with no declaration of their own.
REALS_AS_INTINFS: list[tuple[str, str, int]] = [
    ("val r1 = IntInf.toInt (RealToIntInf 3 12.3456);", "r1", 12346),
    ("val r2 = IntInf.toInt (RealToIntInf 0 2.5) * 10 + IntInf.toInt (RealToIntInf 0 3.5);",
     "r2", 24),  # "2" and "4": ties to even, as SML/NJ's Real.fmt writes them
    ("val r3 = IntInf.toInt (RealToIntInf 1 (~0.25));", "r3", -2),
    ("val r4 = round (IntInfToReal 2 (IntInf.fromInt 12345) * 100.0);", "r4", 12345),
    ("val r5 = round (IntInfToReal 0 (IntInf.fromInt 42));", "r5", 42),
    # "~5" with 3 decimals: CPN Tools writes 0.0~5, whose prefix Real.fromString reads
    ("val r6 = round (IntInfToReal 3 (IntInf.fromInt ~5) * 1000.0);", "r6", 0),
    ("val r7 = round (IntInfToReal 2 (IntInf.fromInt ~12345) * 100.0);", "r7", -12345),
    ("fun realToInt r = IntInf.toInt (RealToIntInf 2 r);", "", 0),
    ("val r8 = realToInt 1.5 + realToInt 0.125;", "r8", 162),  # 150 + 12 (0.125: a tie)
]


def test_cpn_tools_reals_as_intinfs_give_the_values_worked_out_by_hand():
    imported = read_cpn(declarations_net([text for text, _, _ in REALS_AS_INTINFS]))
    assert imported.complete, imported.report.text()
    declarations = imported.net.declarations
    expected = {name: value for _, name, value in REALS_AS_INTINFS if name}
    assert {name: declarations[name] for name in expected} == expected


def test_a_comms_cpn_connection_is_left_out_named_with_what_it_takes_along(tmp_path):
    """Comms/CPN (``ConnManagementLayer.receive``, ``stringDecode``) talks to an external
    process over TCP: a declaration calling it is left out naming the library, and the
    transition whose code segment calls that declaration goes with it, counted under it;
    ``tcpn import --strict`` exits 3."""
    text = cpn_file(
        colset("D1", "STRING", "<string/>") + var("D2", "STRING", "s")
        + '<ml id="D3">fun receive () = ConnManagementLayer.receive ("conn", stringDecode);'
        "</ml>",
        [("P1", "P", "STRING", '1`"a"'), ("P2", "Q", "STRING", "")],
        [("T1", "T", "", "input (); output (m); action (receive ());")],
        [("A1", "PtoT", "T1", "P1", "s"), ("A2", "TtoP", "T1", "P2", "s")])
    path = tmp_path / "comms.cpn"
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert not imported.complete
    report = imported.report.text()
    assert re.search(r"left out: declaration 'receive' .*'(ConnManagementLayer\.receive|"
                     r"stringDecode)' is CPN Tools' Comms/CPN library", report), report
    assert "took along 1 element(s)" in report, report
    assert "T" not in imported.net.transitions
    run = subprocess.run([sys.executable, "-m", "tcpn", "import", str(path), "--strict"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 3, run.stdout + run.stderr


def _free_variable_net(guard: str, output: str, declarations: str = "") -> str:
    """S holds 12`(); T takes one () (a fixed token: the simulator's gate) and binds v
    to every member of R = a | b | c (no arc binds it), tested by ``guard``; it puts
    ``output`` on Q."""
    return cpn_file(
        colset("D0", "UNIT", "<unit/>")
        + colset("D1", "R", "<enum><id>a</id><id>b</id><id>c</id></enum>")
        + var("D2", "R", "v") + declarations,
        [("P1", "S", "UNIT", "12`()"), ("P2", "Q", "R", "")],
        [("T1", "T", guard, "")],
        [("A1", "PtoT", "T1", "P1", "()"), ("A2", "TtoP", "T1", "P2", output)])


def test_a_guard_on_free_variables_holds_when_the_only_input_arc_is_a_gate(tmp_path):
    """The guard ``v <> a, v <> c`` leaves v = b only: all 12 firings put b, in the
    simulator as in the state space (the simulator tests the arc from S apart, as a
    gate, and once tested no guard on v at all: a and c were put too)."""
    from tcpn.petrinets import simulate

    path = tmp_path / "free_guard.cpn"
    path.write_text(_free_variable_net("[v &lt;&gt; a, v &lt;&gt; c]", "v"),
                    encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    for seed in (1, 2, 3):
        run = simulate(imported.net, seed=seed)
        assert Counter(t.value for t in run.marking["Q"]) == Counter({"b": 12})
    space = explore(imported.net, clock="absolute")
    assert (len(space), space.n_edges, len(space.dead_markings())) == (13, 12, 1)


def test_a_function_whose_case_rules_are_multisets_puts_their_tokens(tmp_path):
    """``fun f v = case v of b => 2`v | c => empty`` (ML gives the rules one type, a
    multiset): on an output arc its call puts 2 tokens b, where it put one token holding
    the list of them, not of Q's colour set. With the guard ``v = b orelse v = c``
    (no rule for a) each firing puts 2 b or nothing: after n of the 12 firings, j of them
    with v = b, S holds 12 - n and Q 2j b: sum over n = 0..12 of n + 1 = 91 states, each
    with n < 12 (78) having 2 successors (156 edges), the 13 with n = 12 dead."""
    from tcpn.petrinets import simulate

    path = tmp_path / "case_multiset.cpn"
    path.write_text(_free_variable_net(
        "[v = b orelse v = c]", "f(v)",
        '<ml id="D3">fun f v = case v of b =&gt; 2`v | c =&gt; empty;</ml>'),
        encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    run = simulate(imported.net, seed=1)
    put = Counter(t.value for t in run.marking["Q"])
    assert set(put) <= {"b"} and put["b"] % 2 == 0 and run.marking["S"] == []
    space = explore(imported.net, clock="absolute")
    assert (len(space), space.n_edges, len(space.dead_markings())) == (91, 156, 13)


def test_a_guard_on_free_variables_is_tested_before_the_input_arcs_read_them(tmp_path):
    """v is free (every member of R); the guard ``ok v`` (v = b) holds for b only, and
    the input arc's ``g v`` has a rule for b only (Match elsewhere): the guard, whose
    variables are all bound once v is, is tested first, as it is as soon as its
    variables are bound, so only v = b reaches the arc: one firing moves b from P to Q
    (2 states, 1 edge, 1 dead marking), where enumerating v = a raised Match."""
    text = cpn_file(
        colset("D1", "R", "<enum><id>a</id><id>b</id><id>c</id></enum>") + var("D2", "R", "v")
        + '<ml id="D3">fun ok v = (v = b);</ml>'
        + '<ml id="D4">fun g v = case v of b =&gt; v;</ml>',
        [("P1", "P", "R", "1`b"), ("P2", "Q", "R", "")],
        [("T1", "T", "[ok v]", "")],
        [("A1", "PtoT", "T1", "P1", "g v"), ("A2", "TtoP", "T1", "P2", "v")])
    space = _complete_space(tmp_path / "guard_first.cpn", text)
    assert (len(space), space.n_edges, len(space.dead_markings())) == (2, 1, 1)
    (dead,) = space.dead_markings()
    assert _marking(space, dead)["Q"] == Counter({"'b'": 1})


def test_a_curried_recursive_function_walks_a_long_list():
    """``filt p (x::xs)`` recurses in the application of ``filt p`` to the list, not in
    ``filt p``: 600 elements, every third kept, give 200 (SML runs it on any list; the
    rest of a curried function once ran outside the room made for nested calls, and
    Python's own stack ran out near 250)."""
    imported = read_cpn(declarations_net([
        "fun filt p [] = [] | filt p (x::xs) = if p x then x :: filt p xs else filt p xs;",
        "val big = List.tabulate (600, fn i => i);",
        "val n1 = length (filt (fn x => x mod 3 = 0) big);",
        "val n2 = foldl (op +) 0 (filt (fn x => x >= 590) big);"]))
    assert imported.complete, imported.report.text()
    assert imported.net.declarations["n1"] == 200
    assert imported.net.declarations["n2"] == sum(range(590, 600))  # 5945


def test_a_recursive_delay_reading_the_clock_recurses_once_a_unit(tmp_path):
    """``wait m d`` reads the clock, so it is expanded where the delay calls it; it calls
    itself once per unit of m (tail calls, constant stack in SML): ``@+ wait 700 0`` at
    time 0 is 700 + time () = 700, where Python's stack ran out."""
    from tcpn.petrinets import simulate

    text = cpn_file(
        colset("D1", "INT", "<int/>") + colset("D2", "TINT", "<int/><timed/>")
        + var("D3", "INT", "i")
        + '<ml id="D4">fun wait 0 d = d + IntInf.toInt (time ()) '
        "| wait m d = wait (m - 1) (d + 1);</ml>",
        [("P1", "P", "INT", "1`1"), ("P2", "Q", "TINT", "")],
        [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "i @+ wait 700 0")])
    path = tmp_path / "wait.cpn"
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    run = simulate(imported.net, seed=1)
    assert [(t.value, t.time) for t in run.marking["Q"]] == [(1, 700.0)]


def test_a_list_of_variables_of_a_list_colour_set_is_a_multiset_of_them(tmp_path):
    """On places of ``INTS = list INT``, ``[l]`` and ``[l, l]`` with ``l : INTS`` have
    type ``INTS list``, ``INTS ms``: the tokens l, and l twice (a token holding the list
    [l] is not an ``INTS``). P = 1`[1,2] ++ 1`[]; T takes l and puts ``if List.null l
    then empty else [l]`` on Q and ``[l, l]`` on R: 4 states, 4 edges, and at the dead
    marking Q = 1`[1,2], R = 2`[1,2] ++ 2`[]."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + colset("D2", "INTS", "<list><id>INT</id></list>")
        + var("D3", "INTS", "l"),
        [("P1", "P", "INTS", "1`[1,2] ++ 1`[]"), ("P2", "Q", "INTS", ""),
         ("P3", "R", "INTS", "")],
        [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "l"),
         ("A2", "TtoP", "T1", "P2", "if List.null l then empty else [l]"),
         ("A3", "TtoP", "T1", "P3", "[l, l]")])
    path = tmp_path / "list_tokens.cpn"
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    space = explore(imported.net, clock="absolute")
    assert (len(space), space.n_edges, len(space.dead_markings())) == (4, 4, 1)
    (dead,) = space.dead_markings()
    after = _marking(space, dead)
    assert after["Q"] == Counter({"(1, 2)": 1})
    assert after["R"] == Counter({"(1, 2)": 2, "()": 2})
    assert spaces(tmp_path, text) == ((4, 4, 1), (4, 4, 1))  # cpncheck's the same
