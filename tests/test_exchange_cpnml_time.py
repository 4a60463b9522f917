"""CPN Tools' time structure and the Basis's Date, Time and TextIO in imported models.

CPN Tools opens its time structure (``CPN'Time``, also named ``ModelTime``: its simulator's
``time.sml`` and ``tms.sml``) at the top level of a timed model, so ``toReal (time ())``
is the model time as a real. Values are worked out by hand; where SML/NJ is installed the
Basis functions run in ``sml`` and must give the same values.
"""

from __future__ import annotations

from test_exchange_cpn_field import colset, cpn_file, ml, var

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
