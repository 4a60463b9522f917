"""Initial markings drawn at random (``discrete(0, 99)``, ``CS.ran()``): CPN Tools draws
them once, at initialisation; tcpn draws them when a run starts, from its seed, the same
tokens on every engine, and refuses a state space until one draw is fixed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, var

from tcpn.errors import InputError
from tcpn.petrinets.engine.initial_draws import fix_initial_draws
from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.space import explore

DECLARATIONS = (colset("D1", "INT", "<int/>") + colset("D2", "UNIT", "<unit/>")
                + colset("D3", "E", "<enum><id>lo</id><id>mid</id><id>hi</id></enum>")
                + var("D4", "INT", "p") + var("D5", "E", "e"))


def net_file(tmp_path: Path, marking: str = "discrete(0, 99)") -> Path:
    """Take the one token of place Drawn (its initial marking ``marking``) to Taken."""
    path = tmp_path / "net.cpn"
    path.write_text(cpn_file(
        DECLARATIONS,
        [("P1", "Drawn", "INT", marking), ("P2", "Taken", "INT", ""),
         ("P3", "Level", "E", "E.ran()"), ("P4", "Go", "UNIT", "discrete(2, 2)")],
        [("T1", "Take", "", ""), ("T2", "Read", "", "")],
        [("A1", "PtoT", "T1", "P1", "p"), ("A2", "TtoP", "T1", "P2", "p"),
         ("A3", "PtoT", "T2", "P3", "e"), ("A4", "PtoT", "T2", "P4", "")]),
        encoding="iso-8859-1")
    return path


def taken(net, seed: int) -> int:
    """The value a run from ``seed`` takes to Taken."""
    sim = Simulator(net, seed=seed, engine="python")
    sim.run(max_firings=10)
    (token,) = sim.tokens("Taken")
    return int(token.value)


def test_a_random_initial_marking_is_drawn_from_the_seed_of_each_run(tmp_path):
    imported = read_cpn(net_file(tmp_path))
    assert imported.complete, imported.report.text()
    assert "drawn at random" in imported.report.text()
    net = imported.net
    draws = [taken(net, seed) for seed in range(12)]
    assert draws == [taken(net, seed) for seed in range(12)]  # the seed fixes the draw
    assert len(set(draws)) > 6 and all(0 <= d <= 99 for d in draws)
    assert [int(fix_initial_draws(net, seed).places["Drawn"].initial_tokens[0].value)
            for seed in range(12)] == draws
    fixed = fix_initial_draws(net, 5)
    assert len(fixed.places["Go"].initial_tokens) == 2  # a bare N on a UNIT place: N`()
    assert fixed.places["Level"].initial_tokens[0].value in ("lo", "mid", "hi")
    assert net.places["Drawn"].initial_draw is not None  # the net itself is unchanged


def test_the_draw_leaves_the_runs_own_stream_as_it_was(tmp_path):
    """The run's other draws (the choice among bindings) come from the seed's own stream
    whatever the initial draw: only the initial tokens differ between the two nets."""
    drawn = read_cpn(net_file(tmp_path, "discrete(0, 99)")).net
    fixed = fix_initial_draws(drawn, 3)
    a, b = Simulator(drawn, seed=3), Simulator(fixed, seed=3)
    assert [a.step().transition for _ in range(2)] == [b.step().transition for _ in range(2)]
    assert a.tokens("Taken") == b.tokens("Taken")


def test_every_engine_draws_the_same_initial_tokens(tmp_path):
    net = read_cpn(net_file(tmp_path)).net
    python = Simulator(net, seed=7, engine="python")
    native = Simulator(net, seed=7, engine="native")
    for sim in (python, native):
        sim.run(max_firings=10)
    assert python.tokens("Taken") == native.tokens("Taken")
    assert python.firings == native.firings == 2


def test_a_state_space_over_a_drawn_marking_is_refused_naming_the_place(tmp_path):
    net = read_cpn(net_file(tmp_path)).net
    with pytest.raises(InputError, match=r"place\(s\) Drawn \(discrete\(0, 99\)\), Level "
                                         r"\(E.ran\(\)\), Go .*fix_initial_draws"):
        explore(net, clock="absolute")
    space = explore(fix_initial_draws(net, 1), clock="absolute")
    assert space.complete and len(space) == 4  # Take and Read, in either order


def test_the_inventory_shows_the_drawn_marking(tmp_path):
    from tcpn.petrinets.inventory import inventory

    places = inventory(read_cpn(net_file(tmp_path)).net)["places"].set_index("place")
    assert places.loc["Drawn", "initial tokens"] == "drawn: discrete(0, 99)"


def test_the_export_writes_the_drawn_marking_back_as_read(tmp_path):
    net = read_cpn(net_file(tmp_path)).net
    again = read_cpn(to_cpn(net))
    assert again.complete, again.report.text()
    assert again.net.places["Drawn"].initial_draw.text == "discrete(0, 99)"


def test_a_draw_that_gives_what_the_place_cannot_hold_names_the_place(tmp_path):
    net = read_cpn(net_file(tmp_path, "uniform(0.0, 1.0)")).net
    with pytest.raises(InputError, match=r"place Drawn: initial token 0\.48.* INT"):
        fix_initial_draws(net, 0)
    with pytest.raises(InputError, match="place Drawn: initial token"):
        Simulator(net, seed=0)


def test_tcpn_check_fixes_one_draw_with_draw_seed_and_says_so(tmp_path):
    from cli_process import run_tcpn as tcpn

    path = net_file(tmp_path)
    refused = tcpn("check", str(path), "--report")
    assert refused.returncode == 3
    assert "place(s) Drawn (discrete(0, 99))" in refused.stderr
    assert "--draw-seed" in refused.stderr
    fixed = tcpn("check", str(path), "--report", "--draw-seed", "4")
    assert fixed.returncode == 0, fixed.stderr
    assert "fixed to one draw from seed 4: Drawn = [" in fixed.stderr
    assert "State space report" in fixed.stdout
