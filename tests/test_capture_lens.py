"""The capture lens: a packet capture read as a run, and ``tcpn validate --trace``.

The captures are real pcap files ns-3 wrote (the ns3 lens's ``keep_pcap``) for a short
run of the reference scenario ``newreno_2flows``: read by the capture lens they must give
the ns3 lens's own numbers (the same packets), and the net lens is judged against them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tcpn.errors import InputError
from tcpn.lenses import evaluate
from tcpn.lenses.ns3.loader import installed
from tcpn.models.scenario import load_scenario

pytestmark = [pytest.mark.ns3,
              pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")]

REFERENCE = Path(__file__).resolve().parent.parent / "scenarios" / "reference" \
    / "newreno_2flows.yaml"
SEED = 3


def _short(directory: Path) -> Path:
    """newreno_2flows over 6 s (metrics over [1, 6] s), as a file."""
    spec = load_scenario(REFERENCE).model_dump(mode="json")
    spec.update(horizon_s=6.0, measure={**spec["measure"], "warmup_s": 1.0})
    path = directory / "short.yaml"
    path.write_text(json.dumps(spec))
    return path


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("capture")
    scenario = _short(root)
    ns3 = evaluate(scenario, "ns3", seed=SEED, keep_pcap=root / "pcaps")
    pcaps = root / "pcaps"
    return {"scenario": scenario, "ns3": ns3,
            "senders": [pcaps / "S0-R1.pcap", pcaps / "S1-R1.pcap"],
            "receivers": [pcaps / "D0-R2.pcap", pcaps / "D1-R2.pcap"]}


def test_the_capture_of_a_run_gives_that_run_s_numbers(captured: dict[str, Any]) -> None:
    ns3 = captured["ns3"].summary["flows"]
    both = evaluate(captured["scenario"], "capture", seed=SEED, sender=captured["senders"],
                    receiver=captured["receivers"])
    for flow, metrics in both.summary["flows"].items():
        for metric in ("goodput_bps", "throughput_bps", "segments_sent", "retransmissions",
                       "retransmission_ratio", "completion_s"):
            assert metrics[metric] == ns3[flow][metric] or (
                metrics[metric] is None and ns3[flow][metric] is None), (flow, metric)
        assert metrics["drops"] is None and metrics["timeouts"] is None  # unseen, not 0
        # RTT samples time the newest segment an ACK covers: at least the path's two-way
        # propagation and serialisation (2 x (1 + 20 + 1) ms), never more than ns-3's max
        rtt = both.trace.series(flow=flow, var="rtt_s")["value"]
        assert len(rtt) > 10 and rtt.min() >= 0.044
    assert both.summary["absent"]["drops"].startswith("a capture at the end hosts")
    assert both.summary["queues"] == {}


def test_without_a_receiver_capture_deliveries_are_the_acks(captured: dict[str, Any]) -> None:
    sender = evaluate(captured["scenario"], "capture", seed=SEED, sender=captured["senders"])
    ns3 = captured["ns3"]
    start, end = ns3.summary["window"]["start_s"], ns3.summary["window"]["end_s"]
    for flow, metrics in sender.summary["flows"].items():
        acks = ns3.trace.events(flow=flow, event="ack")
        inside = acks[(acks["time_s"] >= start) & (acks["time_s"] <= end)]
        assert metrics["goodput_bps"] == pytest.approx(
            inside["bytes"].sum() * 8 / (end - start), rel=1e-9)
        assert metrics["throughput_bps"] is None and "--trace-receiver" in \
            sender.summary["absent"]["throughput_bps"]


def test_flows_match_connections_by_order_or_by_port(captured: dict[str, Any]) -> None:
    one = captured["senders"][:1]
    with pytest.raises(InputError, match=r"1 connection.* open .*the scenario has 2 flows"):
        evaluate(captured["scenario"], "capture", seed=SEED, sender=one)
    with pytest.raises(InputError, match="no connection to port 9 opens"):
        evaluate(captured["scenario"], "capture", seed=SEED, sender=captured["senders"],
                 ports=[9, 10])
    with pytest.raises(InputError, match="no such capture file"):
        evaluate(captured["scenario"], "capture", seed=SEED, sender=["nowhere.pcap"])


def _tcpn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "tcpn"), *args],
                          capture_output=True, text=True, timeout=900,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


def test_validate_judges_the_net_lens_against_a_capture(captured: dict[str, Any],
                                                        tmp_path: Path) -> None:
    out = tmp_path / "against-capture"
    args = ["validate", str(captured["scenario"]), "--lenses", "net", "--replications",
            "2", "--seed", str(SEED), "-o", str(out)]
    for path in captured["senders"]:
        args += ["--trace", str(path)]
    for path in captured["receivers"]:
        args += ["--trace-receiver", str(path)]
    done = _tcpn(*args)
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed, said in the table
    table = pd.read_csv(out / "comparison.csv")
    meta = json.loads((out / "comparison.json").read_text())
    assert meta["reference"] == "capture" and meta["runs"] == {"capture": 1, "net": 2}
    rows = table.set_index(["scope", "name", "metric"])
    assert rows.loc[("flow", "f0", "drops"), "net_verdict"] == "unseen"
    goodput = rows.loc[("aggregate", "all", "goodput_bps")]
    assert goodput["capture_mean"] == pytest.approx(
        captured["ns3"].summary["aggregate"]["goodput_bps"])
    assert goodput["net_verdict"] in ("pass", "FAIL") and goodput["net_error"] == \
        goodput["net_error"]
    bad = _tcpn("validate", str(captured["scenario"]), "--lenses", "net", "--trace",
                str(captured["senders"][0]), "--trace-ports", "a,b", "-o", str(tmp_path / "x"))
    assert bad.returncode == 3 and "--trace-ports 'a,b'" in bad.stderr
    alone = _tcpn("validate", str(captured["scenario"]), "--lenses", "net,capture",
                  "-o", str(tmp_path / "y"))
    assert alone.returncode == 3 and "--trace FILE" in alone.stderr


def test_fit_ranks_the_buffer_the_capture_was_made_with_first(captured: dict[str, Any]) -> None:
    """The capture was made with the scenario's 100-packet bottleneck buffer; a 4-packet
    one (a tenth of the path's bandwidth-delay product) changes losses and goodput, so
    the fit must rank 100 first."""
    from tcpn.experiments.fit import fit_capture, parse_fit

    spec = load_scenario(captured["scenario"])
    fitted = fit_capture(spec, [parse_fit("links[0].ab.queue.limit=4,100")], ["net"],
                         {"sender": captured["senders"], "receiver": captured["receivers"]},
                         replications=1, seed=SEED)
    assert list(fitted["links[0].ab.queue.limit"]) == [100, 4]
    assert fitted["judged"].min() > 0 and (fitted["lens"] == "net").all()
    with pytest.raises(InputError, match="give FIELD=VALUE"):
        parse_fit("links[0].ab.queue.limit")
    with pytest.raises(InputError, match=r"--fit links\[0\].ab.queue.limit=-3: "):
        fit_capture(spec, [parse_fit("links[0].ab.queue.limit=-3")], ["net"],
                    {"sender": captured["senders"]}, replications=1, seed=SEED)
