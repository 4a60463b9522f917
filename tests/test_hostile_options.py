"""A negative ``--seed``: NumPy's seed sequences take none, and the command ended with an
internal error (exit 70) after loading its input; now the option's range refuses it, a
usage error naming ``--seed``, before any work; the library refuses it naming the seed."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.lenses import evaluate
from tcpn.models.scenario import dumbbell
from tcpn.petrinets.engine.simulator import simulate
from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell_newreno.yaml"


@pytest.mark.parametrize("command", [
    ["simulate", "NET", "--until", "3"],
    ["check", "NET", "--probability", "F<=5 true"],
    ["run", str(SCENARIO)],
])
def test_a_negative_seed_is_a_usage_error_naming_the_option(command, tmp_path):
    net = tmp_path / "model.cpn"
    net.write_text(to_cpn(counter(3), layout="grid"), encoding="utf-8")
    argv = [str(net) if a == "NET" else a for a in command]
    done = run_tcpn(*argv, "--seed", "-1", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--seed" in done.stderr and "internal error" not in done.stderr


@pytest.mark.parametrize("seed", [-1, True])
def test_the_library_refuses_a_seed_numpy_cannot_take_naming_it(seed):
    """From Python the same seed reached NumPy and failed with its bare ValueError."""
    with pytest.raises(InputError, match=rf"seed must be a non-negative integer, got {seed}"):
        simulate(counter(3), seed=seed, until=1.0)
    with pytest.raises(InputError, match=rf"seed must be a non-negative integer, got {seed}"):
        evaluate(dumbbell(pairs=1, variant="reno", horizon_s=1.0), "fluid", seed=seed)
