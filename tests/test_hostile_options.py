"""A negative ``--seed``: NumPy's seed sequences take none, and the command ended with an
internal error (exit 70) after loading its input; now the option's range refuses it, a
usage error naming ``--seed``, before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_tcpn

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
