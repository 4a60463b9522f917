"""An output the command line is told to write over its own input, or over another output.

``tcpn import model.cpn -o model.cpn --overwrite`` wrote the import, without the elements it
left out, over the user's model; ``tcpn simulate NET -o runs.csv --events runs.csv`` wrote
the event log, then refused the table (a half result left behind), and with
``--overwrite`` replaced one with the other. Both are refused before any work, exit 3,
naming the options and the path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.outputs import OutputError, check_output_files
from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.reports.store import load_results


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.cpn"
    path.write_text(to_cpn(counter(3), layout="grid"), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [["import"], ["export", "-f", "cpn"]])
@pytest.mark.parametrize("link", [False, True])
def test_an_output_over_the_input_net_is_refused_and_the_model_kept(command, link, model,
                                                                    tmp_path):
    target = model
    if link:  # a symbolic link to the model is the model
        target = tmp_path / "link.cpn"
        target.symlink_to(model)
    before = model.read_bytes()
    done = run_tcpn(command[0], model, *command[1:], "-o", target, "--overwrite")
    assert done.returncode == 3, done.stderr
    assert f"--output {target} is " in done.stderr and "which it would replace" in done.stderr
    assert "Traceback" not in done.stderr
    assert model.read_bytes() == before


def test_two_outputs_on_one_file_are_refused_before_the_run(model, tmp_path):
    table = tmp_path / "runs.csv"
    done = run_tcpn("simulate", model, "--until", "3", "-o", table, "--events", table)
    assert done.returncode == 3, done.stderr
    assert f"--events {table} is also --output's file" in done.stderr
    assert not table.exists()


def test_distinct_outputs_and_inputs_pass(tmp_path):
    given = check_output_files({"--csv": tmp_path / "a.csv", "--figure": None,
                                "--markdown": tmp_path / "a.md"},
                               inputs={"SWEEP": tmp_path / "sweep.yaml"})
    assert set(given) == {"--csv", "--markdown"}


def test_a_sweep_table_over_its_sweep_file_is_refused(tmp_path):
    sweep = tmp_path / "sweep.csv"
    sweep.write_text("kept")
    with pytest.raises(OutputError, match=r"--csv .* is SWEEP, which it would replace"):
        check_output_files({"--csv": sweep}, overwrite=True, inputs={"SWEEP": sweep})
    assert sweep.read_text() == "kept"


def test_a_results_manifest_nested_past_the_stack_names_the_manifest(tmp_path):
    """``report --from`` on a manifest of 200,000 nested lists said only "the input:
    nested too deep", naming no file."""
    (tmp_path / "manifest.json").write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(InputError, match=r"manifest\.json: nested too deep to read"):
        load_results(tmp_path)
