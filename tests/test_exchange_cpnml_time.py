"""CPN Tools' time structure and the Basis's Date, Time and TextIO in imported models.

CPN Tools opens its time structure (``CPN'Time``, also named ``ModelTime``: its simulator's
``time.sml`` and ``tms.sml``) at the top level of a timed model, so ``toReal (time ())``
is the model time as a real. Values are worked out by hand; where SML/NJ is installed the
Basis functions run in ``sml`` and must give the same values. ``Date.fromTimeLocal``
is read in UTC (CPN Tools uses the machine's zone) and noted; what ``TextIO`` writes is
dropped (no file a model names is opened), a file read is named as outside the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, var
from test_exchange_cpnml_cells import declarations_net, needs_sml, sml_values

from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.exchange.cpn_import import read_cpn

TIMED_INT = '<color id="C2"><id>TINT</id><int/><timed/></color>'


def _clock_net(stamp: str) -> str:
    """t fires at times 0 and 4 (q's token comes back 4 later, twice): r gets ``n``
    delayed by ``stamp``, an expression of the clock."""
    declarations = colset("C1", "INT", "<int/>") + TIMED_INT + var("V1", "INT", "n") + ml(
        "F1", "fun now () = toReal (time ());")
    return cpn_file(declarations, [("P1", "q", "TINT", "1`0"), ("P2", "r", "TINT", "")],
                    [("T1", "t", "n &lt; 2", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", "n+1@+4"),
                     ("A3", "TtoP", "T1", "P2", f"n@+{stamp}")])


def test_to_real_of_the_clock_is_the_model_time_as_a_real():
    """Delays round (now / 2 + 1): 1 at time 0, 3 at time 4, so stamps 1 and 7; the same
    through ModelTime.toReal and a declared function of the clock."""
    for stamp in ("round (toReal (time ()) / 2.0 + 1.0)",
                  "round (ModelTime.toReal (time ()) / 2.0 + 1.0)",
                  "round (now () / 2.0 + 1.0)"):
        imported = read_cpn(_clock_net(stamp))
        assert imported.complete, imported.report.text()
        simulator = Simulator(imported.net, seed=0)
        simulator.run(until=100.0)
        assert sorted((t.value, t.time) for t in simulator.tokens("r")) == [
            (0, 1.0), (1, 7.0)], stamp


def test_a_selector_on_a_written_tuple_picks_its_part():
    """``#2 (0, n)`` is ``n`` (SML's selectors apply to any tuple value); ``#3`` of a pair
    is named as outside the subset (SML refuses it as a type error)."""
    declarations = colset("C1", "INT", "<int/>") + var("V1", "INT", "n")
    for arc, complete in (("#2 (0, n + 1)", True), ("#3 (0, n)", False)):
        text = cpn_file(declarations, [("P1", "q", "INT", "1`0")], [("T1", "t", "n &lt; 3", "")],
                        [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", arc)])
        imported = read_cpn(text)
        assert imported.complete is complete, imported.report.text()
        if complete:
            simulator = Simulator(imported.net, seed=0)
            simulator.run(until=10.0)
            assert [t.value for t in simulator.tokens("q")] == [3]
        else:
            assert "selector #3 on a tuple of 2 values" in imported.report.text()


#: (declaration, the int it gives when it names one, worked out by hand from the Basis:
#: 1732780800 s after the epoch is Thursday 2024-11-28 08:00:00 UTC, day 332 of its year
#: from 0; Date.date carries 90 s past 23:59 on 31 January into 1 February)
CALENDAR: list[tuple[str, str | None, int | None]] = [
    ("val d1 = Date.fromTimeUniv (Time.fromReal 1732780800.0);", None, None),
    ("val c1 = Date.hour d1 * 100 + Date.minute d1 + Date.second d1;", "c1", 800),
    ("val c2 = Date.year d1 * 1000 + Date.yearDay d1;", "c2", 2024332),
    ('val c3 = if Date.fmt "%Y-%m-%d %H:%M:%S %a %b %j %%" d1'
     ' = "2024-11-28 08:00:00 Thu Nov 333 %" then 1 else 0;', "c3", 1),
    ("val c4 = if Date.month d1 = Date.Nov andalso Date.weekDay d1 = Date.Thu"
     " then 1 else 0;", "c4", 1),
    ("val d2 = Date.date {year = 2000, month = Date.Jan, day = 31, hour = 23, minute = 59,"
     " second = 90, offset = NONE};", None, None),
    ('val c5 = if Date.toString d2 = "Tue Feb  1 00:00:30 2000" then 1 else 0;', "c5", 1),
    ("val c6 = case Date.compare (d1, d2) of GREATER => 3 | EQUAL => 2 | LESS => 1;",
     "c6", 3),
    ("val c7 = case Int.compare (1, 2) of LESS => 1 | _ => 0;", "c7", 1),
    ('val c8 = case String.compare ("ab", "b") of LESS => 1 | _ => 0;', "c8", 1),
    ("val c9 = round (Time.toReal (Date.toTime (Date.fromTimeUniv (Time.fromReal 86400.0))));",
     "c9", 86400),
    ('val out = TextIO.openOut "events.csv";', None, None),
    ('val e1 = (TextIO.output (out, "a;b\\n"); TextIO.closeOut out; 5);', "e1", 5),
]
CALENDAR_VALUES = {name: value for _, name, value in CALENDAR if name is not None}


def test_dates_times_orders_and_text_output_give_the_values_worked_out_by_hand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """What the model writes is dropped: no file appears where it runs."""
    monkeypatch.chdir(tmp_path)
    imported = read_cpn(declarations_net([text for text, _, _ in CALENDAR]))
    assert imported.complete, imported.report.text()
    assert {name: imported.net.declarations[name] for name in CALENDAR_VALUES} == \
        CALENDAR_VALUES
    assert any("dropped" in note.reason for note in imported.report.notes)
    assert not list(tmp_path.iterdir())


@needs_sml
def test_sml_nj_gives_the_same_calendar_values(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)  # SML/NJ writes the file the declarations open
    assert sml_values([text for text, _, _ in CALENDAR], list(CALENDAR_VALUES),
                      tmp_path / "calendar.sml") == CALENDAR_VALUES


def test_a_local_date_is_read_in_utc_and_noted_and_a_file_read_is_named():
    imported = read_cpn(declarations_net([
        "val h = Date.hour (Date.fromTimeLocal (Time.fromReal 7200.0));",
        'fun firstLine f = TextIO.inputLine (TextIO.openIn f);',
        "val _ = UNIT.output (TextIO.stdOut, ());"]))  # a colour set's output: dropped
    assert imported.net.declarations["h"] == 2
    text = imported.report.text()
    assert "Date.fromTimeLocal" in text and "read in UTC" in text
    assert "TextIO.openIn reads a file" in text and "UNIT.output" not in text


def test_a_function_giving_a_timed_multiset_is_inlined_on_the_output_arc_calling_it():
    """``fun later (x, t) = if x >= 1 then 1`x@t else empty`` (``@``, CPN Tools' time stamp
    constructor, in a declaration): t fires for n = 0, 1, 2 at time 0 and r gets 1 and 2
    stamped 5, as the same inscription written on the arc gives."""
    declarations = colset("C1", "INT", "<int/>") + TIMED_INT + var("V1", "INT", "n") + ml(
        "F1", "fun later (x, t) = if x >= 1 then 1`x@t else empty;")
    for arc in ("later (n, time () + 5)", "if n >= 1 then 1`n@(time () + 5) else empty"):
        imported, stamped = _stamped_on_r(declarations, arc)
        assert stamped == [(1, 5.0), (2, 5.0)], arc
        assert "later' (F1 line 2): a timed multiset (v@t)" in imported.report.text()


@pytest.mark.parametrize(("arc", "complete", "reason"), [
    ("n@+0", True, ""),  # no time earlier: the token as it is
    ("n@+2", False, "take the tokens that many time units before their time stamps"),
    ("n@+n", False, "take the tokens that many time units before their time stamps"),
])
def test_a_time_delay_on_an_input_arc_is_read_when_0_and_else_left_out_saying_why(
        arc, complete, reason):
    """CPN Tools' ``exp@+d`` on an input arc of a timed place lets the transition take the
    tokens d time units early; tcpn's engines take none early, so d = 0 is read (t moves
    q's token, stamped 4, at time 4) and any other d leaves t out, saying why."""
    declarations = colset("C1", "INT", "<int/>") + TIMED_INT + var("V1", "INT", "n")
    text = cpn_file(declarations, [("P1", "q", "TINT", "1`7@4"), ("P2", "r", "TINT", "")],
                    [("T1", "t", "", "")],
                    [("A1", "PtoT", "T1", "P1", arc), ("A2", "TtoP", "T1", "P2", "n")])
    imported = read_cpn(text)
    assert imported.complete is complete, imported.report.text()
    if complete:
        simulator = Simulator(imported.net, seed=0)
        simulator.run(until=100.0)
        assert [(t.value, t.time) for t in simulator.tokens("r")] == [(7, 4.0)]
    else:
        (item,) = imported.report.unsupported
        assert reason in item.reason


def test_a_time_delay_on_an_input_arc_of_an_untimed_place_is_left_out_saying_why():
    declarations = colset("C1", "INT", "<int/>") + var("V1", "INT", "n")
    text = cpn_file(declarations, [("P1", "q", "INT", "1`7"), ("P2", "r", "INT", "")],
                    [("T1", "t", "", "")],
                    [("A1", "PtoT", "T1", "P1", "n@+0"), ("A2", "TtoP", "T1", "P2", "n")])
    (item,) = read_cpn(text).report.unsupported
    assert "an input arc of an untimed place" in item.reason


def test_a_function_delaying_its_multisets_with_at_plus_is_inlined_on_the_output_arc():
    """``fun later x = if x >= 2 then 1`x@+5 else if x = 1 then 2`x@+3 else empty``:
    each branch's tokens stamped now + its delay (CPN Tools' ``ms @+ d``), as the delay
    written on the arc gives: at time 0 t fires for n = 0, 1, 2, r gets 1 and 1 at 3
    and 2 at 5."""
    declarations = colset("C1", "INT", "<int/>") + TIMED_INT + var("V1", "INT", "n") + ml(
        "F1", "fun later x = if x >= 2 then 1`x@+5 else if x = 1 then 2`x@+3 else empty;")
    for arc in ("later n", "(if n >= 2 then 1`n else if n = 1 then 2`n else empty) @+ "
                           "(if n >= 2 then 5 else 3)"):
        assert _stamped_on_r(declarations, arc)[1] == [(1, 3.0), (1, 3.0), (2, 5.0)], arc


def _stamped_on_r(declarations: str, arc: str) -> tuple[Any, list[tuple[int, float]]]:
    """The import, and the (value, time stamp) of the tokens on place r after t fired for
    n = 0, 1, 2 (q counts n up to 3), t's arc to r inscribed ``arc``: the file must import
    whole."""
    text = cpn_file(declarations, [("P1", "q", "INT", "1`0"), ("P2", "r", "TINT", "")],
                    [("T1", "t", "n &lt; 3", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", "n+1"),
                     ("A3", "TtoP", "T1", "P2", arc)])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=100.0)
    return imported, sorted((t.value, t.time) for t in simulator.tokens("r"))
