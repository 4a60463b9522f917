"""The Model Checking Contest's symmetric nets, read coloured: their state spaces as index.csv.

Every COL instance of ``../shared/data/mcc`` has a known number of reachable states and
edges (those of its P/T twin, ``equiv_pt``). tcpn reads the symmetric net without
unfolding it and ``explore()`` must find exactly those numbers. A fixed sample of small
instances runs by default (the constructs between them: cyclic enumerations with
successor and predecessor, order on enumerations, finite int ranges, products, ``all``
inside tuples, several terms per arc, subtraction, free variables); all 24 under
``-m slow``.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tcpn.petrinets import explore
from tcpn.petrinets.exchange.cpn_import import CpnFormatError
from tcpn.petrinets.exchange.pnml import read_pnml

SAMPLE = ["DatabaseWithMutex-COL-02", "LamportFastMutEx-COL-2", "Philosophers-COL-000005",
          "TokenRing-COL-005", "Sudoku-COL-AN02", "Sudoku-COL-BN01",
          "BridgeAndVehicles-COL-V04P05N02", "QuasiCertifProtocol-COL-02",
          "SharedMemory-COL-000005", "SafeBus-COL-03"]


@pytest.fixture(scope="module")
def mcc(shared_dir: Path) -> Path:
    return shared_dir / "data" / "mcc"


@pytest.fixture(scope="module")
def index(mcc: Path) -> dict[str, dict[str, str]]:
    with open(mcc / "index.csv", newline="") as handle:
        return {row["instance"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory, mcc: Path):
    """``model(instance)``: the path of its model.pnml, extracted once to a temporary dir."""
    into = tmp_path_factory.mktemp("mcc")

    def model(instance: str) -> Path:
        target = into / instance / "model.pnml"
        if not target.exists():
            with tarfile.open(mcc / "instances" / f"{instance}.tgz") as archive:
                archive.extractall(into, members=[archive.getmember(
                    f"{instance}/model.pnml")], filter="data")
        return target

    return model


def all_col(shared: Path) -> list[str]:
    with open(shared / "data" / "mcc" / "index.csv", newline="") as handle:
        return [row["instance"] for row in csv.DictReader(handle) if row["type"] == "COL"]


SHARED = Path(__file__).resolve().parents[1].parent / "shared"
EVERY_COL = all_col(SHARED) if (SHARED / "data" / "mcc").is_dir() else []


def check_state_space(instance: str, models, index) -> None:
    net = read_pnml(models(instance)).net
    space = explore(net, max_states=2_000_000)
    row = index[instance]
    assert space.complete
    assert (len(space), space.n_edges) == (int(row["states"]), int(row["edges"])), instance


@pytest.mark.parametrize("instance", SAMPLE)
def test_a_sample_of_col_instances_gives_the_index_state_space(instance, models, index):
    check_state_space(instance, models, index)


@pytest.mark.slow
@pytest.mark.parametrize("instance", EVERY_COL)
def test_every_col_instance_gives_the_index_state_space(instance, models, index):
    check_state_space(instance, models, index)


def test_names_are_pnml_ids_and_labels_are_kept(models):
    path = models("DatabaseWithMutex-COL-02")
    imported = read_pnml(path)
    text = path.read_text()
    for name in imported.net.places:
        assert f'<place id="{name}">' in text
    for name in imported.net.transitions:
        assert f'<transition id="{name}">' in text
    assert imported.labels["all_active"] == "all_active"
    # one coloured transition, not one per colour: the net is not unfolded
    assert len(imported.net.transitions) == text.count("<transition ")


def test_coloured_twin_and_p_t_twin_agree_on_dead_markings(models):
    coloured = explore(read_pnml(models("Philosophers-COL-000005")).net)
    twin = explore(read_pnml(models("Philosophers-PT-000005")).net)
    assert len(coloured) == len(twin) == 243
    assert len(coloured.dead_markings()) == len(twin.dead_markings()) == 2


def test_an_unsupported_term_names_its_arc_and_line(models, tmp_path):
    text = models("Philosophers-COL-000005").read_text()
    bad = tmp_path / "bad.pnml"
    bad.write_text(text.replace("<predecessor>", "<stringconcatenation>", 1).replace(
        "</predecessor>", "</stringconcatenation>", 1))
    with pytest.raises(CpnFormatError, match=r"bad\.pnml, line \d+, element \w+: "
                       r"<stringconcatenation>: term <stringconcatenation> is outside"):
        read_pnml(bad)
    done = subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()",
                           "import", str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert "stringconcatenation" in done.stderr and "Traceback" not in done.stderr


def test_an_unsupported_sort_names_its_declaration(models, tmp_path):
    text = models("Sudoku-COL-AN01").read_text()
    bad = tmp_path / "bad.pnml"
    bad.write_text(text.replace('<finiteintrange start="1" end="1"/>', "<string/>", 1))
    with pytest.raises(CpnFormatError, match=r"line \d+, element N: <string>: sort <string> "
                       "is not a finite sort"):
        read_pnml(bad)
