"""A TCP variant is one file: the registry, the tutorial's example and the entry point group.

The example of docs/variants.md (``docs/examples/aimd.py``, AIMD with additive increase 2)
is imported as a user would, named in a scenario file, simulated by the net lens, exported
to CPN Tools and read back, and refused by the lenses it declares nothing for. The entry
point path is exercised for real: a distribution (a package and its ``dist-info`` with an
``entry_points.txt``) written into a temporary directory put on ``sys.path`` of a fresh
``tcpn`` process, which then runs, exports and checks a scenario naming its variant.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tcpn.errors import InputError
from tcpn.lenses.evaluation import evaluate
from tcpn.lenses.fluid import fluid_problems
from tcpn.lenses.ns3.lens import scenario_plan
from tcpn.models import register_variant
from tcpn.models.registered_variants import BUILTIN_MODULES, variant_names, variant_spec
from tcpn.models.scenario import ScenarioError, VariantParams, load_scenario, parse_scenario
from tcpn.models.topology import scenario_net
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.roundtrip import compare_runs

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "examples" / "aimd.py"
DRIVER = "import sys; from tcpn.cli import main; sys.argv = ['tcpn', *sys.argv[1:]]; main()"

#: One flow in congestion avoidance from the start (ssthresh 2) on an uncongested path
#: (100 Mbit/s, 42 ms RTT: ~70 RTTs in 3 s never fill it), every segment ACKed.
SCENARIO = """\
links:
  - {a: S, b: R, rate_bps: 1.0e+8, delay_s: 0.001}
  - {a: R, b: D, rate_bps: 1.0e+8, delay_s: 0.02}
tcp: {initial_ssthresh_segments: 2, delack_count: 1}
flows:
  - {id: f, src: S, dst: D, variant: VARIANT}
horizon_s: 3.0
"""


@pytest.fixture(scope="module")
def aimd() -> ModuleType:
    """The tutorial's file, imported once as a user's own module (it registers ``aimd``)."""
    if "tcpn_tutorial_aimd" in sys.modules:
        return sys.modules["tcpn_tutorial_aimd"]
    spec = importlib.util.spec_from_file_location("tcpn_tutorial_aimd", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _scenario(tmp_path: Path, variant: str) -> Path:
    path = tmp_path / f"{variant.split(',')[0]}.yaml"
    path.write_text(SCENARIO.replace("VARIANT", variant))
    return path


def test_the_example_is_one_short_file_shown_whole_in_the_tutorial():
    text = EXAMPLE.read_text()
    assert len(text.splitlines()) < 80
    assert f"```python\n{text.rstrip()}\n```" in (REPO / "docs" / "variants.md").read_text()


def test_the_schema_names_no_variant():
    """No special case left: the scenario schema knows variants only through the registry,
    and the shipped ones register through the same call as a user's."""
    from tcpn.models import scenario as schema

    assert schema.Flow.model_fields["variant"].annotation is str
    assert schema.ConcreteFlow.model_fields["variant"].annotation is str
    assert [n for n in dir(schema) if n.endswith("Params")] == ["VariantParams"]
    origins = {variant_spec(n).origin for n in variant_names()}
    assert origins >= set(BUILTIN_MODULES)


def test_the_example_runs_by_name_in_the_net_lens(aimd, tmp_path):
    mean = {}
    for variant in ("newreno", "aimd, params: {increase: 1}", "aimd, params: {increase: 2}"):
        scenario = load_scenario(_scenario(tmp_path, variant))
        result = evaluate(scenario, lens="net")
        flow = result.summary["flows"]["f"]
        assert flow["drops"] == 0 and flow["goodput_bps"] > 0
        mean[variant.split("{")[-1]] = flow["cwnd_mean_bytes"] / 1448
    # increase 1 is NewReno: the example changes nothing else of the base sender
    assert mean["increase: 1}"] == mean["newreno"]
    # from 2 segments, the mean window grows by about a/2 per RTT: twice NewReno's with a=2
    ratio = (mean["increase: 2}"] - 2) / (mean["newreno"] - 2)
    assert 1.6 < ratio < 2.1, ratio
    assert aimd.aimd_grow(10.0, 5.0, 1, 2.0) == pytest.approx(10.2)


def test_the_example_is_refused_by_the_lenses_it_does_not_declare(aimd, tmp_path):
    scenario = load_scenario(_scenario(tmp_path, "aimd"))
    problems = " ".join(fluid_problems(scenario, scenario.concrete_flows()))
    assert "flow f: variant aimd has no fluid model" in problems
    assert "its closed form is tcpn.solvers.closed_forms.loss_throughput.aimd_pps" in problems
    with pytest.raises(InputError, match=r"variant aimd has no ns-3 congestion control "
                                         r"\(its registration gives no ns3=.*ns-3 has no AIMD"):
        scenario_plan(scenario)


def test_the_example_exports_to_cpn_tools_and_fires_the_same_sequence(aimd, tmp_path):
    net = scenario_net(_scenario(tmp_path, "aimd, params: {increase: 2}"))
    imported = read_cpn(to_cpn(net, layout="grid"))
    assert imported.complete, imported.report.text(limit=5)
    comparison = compare_runs(net, imported.net, seed=1, max_firings=3_000)
    assert comparison.divergence is None, str(comparison)


def test_an_unknown_variant_names_the_field_the_registered_ones_and_the_closest(aimd):
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(SCENARIO.replace("VARIANT", "cubik"), "x.yaml")
    message = str(caught.value)
    assert "x.yaml:6: flows[0].variant: unknown variant 'cubik' (did you mean 'cubic'?)" \
        in message
    assert "registered: adaptive_vegas, aimd, bbr, cubic" in message


def test_bad_params_name_the_variant_field(aimd):
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.params\.increase: Input should be "
                                            r"greater than 0"):
        parse_scenario(SCENARIO.replace("VARIANT", "aimd, params: {increase: -1}"), "x.yaml")


def test_registration_mistakes_are_named(aimd):
    with pytest.raises(InputError, match="'aimd' is already registered by tcpn_tutorial_aimd"):
        register_variant("aimd", aimd.AimdParams, aimd.aimd_sender_net)
    with pytest.raises(InputError, match="params must be a subclass"):
        register_variant("x_dict", dict, aimd.aimd_sender_net)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="recovery 'vegas' is not one of tahoe"):
        register_variant("x_rec", VariantParams, aimd.aimd_sender_net, recovery="vegas")
    with pytest.raises(InputError, match=r"keyed by lens .* not fluids"):
        register_variant("x_lens", VariantParams, aimd.aimd_sender_net,
                         unsupported={"fluids": "typo"})
    with pytest.raises(InputError, match="not an identifier"):
        register_variant("a b", VariantParams, aimd.aimd_sender_net)
    assert not {"x_dict", "x_rec", "x_lens"} & set(variant_names())


# --------------------------------------------------------------------------- entry points


def _distribution(root: Path, package: str, entry: str, source: str) -> None:
    """An installed distribution in ``root``: the package and its dist-info."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text(source)
    info = root / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[tcpn.variants]\n{entry}\n")


def _tcpn(argv: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]),
           "COLUMNS": "200", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600, stdin=subprocess.DEVNULL)


def test_an_installed_package_adds_its_variant_through_the_entry_point(tmp_path):
    site = tmp_path / "site"
    _distribution(site, "aimd_plugin", "aimd = aimd_plugin", EXAMPLE.read_text())
    scenario = tmp_path / "aimd.yaml"
    scenario.write_text(SCENARIO.replace("VARIANT", "aimd, params: {increase: 2}")
                        .replace("horizon_s: 3.0", "horizon_s: 1.0"))
    run = _tcpn(["run", str(scenario), "-o", str(tmp_path / "out")], site, tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "result.json").is_file() or any((tmp_path / "out").iterdir())
    export = _tcpn(["export", str(scenario), "-o", str(tmp_path / "aimd.cpn")], site, tmp_path)
    assert export.returncode == 0, export.stderr
    assert "aimd_grow" in (tmp_path / "aimd.cpn").read_text()
    short = tmp_path / "short.yaml"  # the property library on its state space
    short.write_text("links: [{a: S, b: D, rate_bps: 1.0e+6, delay_s: 0.01}]\n"
                     "tcp: {handshake: false}\nhorizon_s: 5.0\nflows: [{id: f, src: S, "
                     "dst: D, variant: aimd, params: {increase: 2}}]\n")
    check = _tcpn(["check", str(short), "--property", "delivered_once_in_order",
                   "--segments", "3", "--losses", "1"], site, tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "delivered_once_in_order: TRUE" in check.stdout
    # without the distribution on the path the name is unknown, and said so (exit 3)
    shutil.rmtree(site)
    site.mkdir()
    missing = _tcpn(["run", str(scenario)], site, tmp_path)
    assert missing.returncode == 3, missing.stderr
    assert "flows[0].variant: unknown variant 'aimd'" in " ".join(missing.stderr.split())


def test_a_plugin_that_fails_to_load_is_named_with_its_error(tmp_path):
    site = tmp_path / "site"
    _distribution(site, "broken_plugin", "broken = broken_plugin:register",
                  "def register():\n    raise RuntimeError('no sender today')\n")
    scenario = _scenario(tmp_path, "reno")
    done = _tcpn(["run", str(scenario)], site, tmp_path)
    said = " ".join(done.stderr.split())
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert ("variant plugin 'broken' (broken_plugin:register, distribution broken_plugin) "
            "failed to load: RuntimeError: no sender today") in said
