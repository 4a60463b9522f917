"""Issue 29: where losses and timeouts behind a standing queue decide, the net and ns3 lenses
follow the same rules (docs/validation.md, "What the misses come from").

Study S5 (a) over 20 s (``scenarios/reference/s5a_tbf_nosack.yaml`` shortened): one NewReno
flow without SACK through a token bucket whose 3-packet queue stands full. Both lenses are
deterministic here (one flow, no random loss), so one run each decides.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tcpn.errors import InputError
from tcpn.experiments.compare import compare
from tcpn.lenses import evaluate, get_lens
from tcpn.lenses.ns3 import scenario_plan
from tcpn.lenses.ns3.lens import OWN_SOCKET, RFC_SOCKET
from tcpn.lenses.ns3.loader import installed
from tcpn.models.scenario import validate_scenario

REFERENCE = Path(__file__).resolve().parent.parent / "scenarios" / "reference"


def s5a(horizon_s: float = 20.0, **tcp: object):
    """The case-1 reference over ``horizon_s`` (measured from 5 s), with ``tcp`` changes."""
    mapping = yaml.safe_load((REFERENCE / "s5a_tbf_nosack.yaml").read_text())
    mapping["horizon_s"], mapping["measure"]["warmup_s"] = horizon_s, 5.0
    mapping["tcp"].update(tcp)
    return validate_scenario(mapping)


def counts(result) -> dict[str, int]:
    """Timeouts, drops and retransmissions of flow f1 in the measurement window."""
    events = result.trace.flow_events
    window = events[(events.flow == "f1") & (events.time_s >= 5.0)]
    return {name: int((window.event == name).sum())
            for name in ("timeout", "drop", "retransmit")}


def test_no_timeout_cycle_with_either_halving():
    # The net lens once sent two segments on each of the first two duplicate ACKs after a
    # partial ACK (limited transmit inside fast recovery): with RFC 5681's exact half that
    # made five losses per episode, more than NewReno repairs before the RTO, and a timeout
    # every three seconds. Without it, exact and whole-segment halving both repair every
    # loss by fast recovery, one retransmission per loss.
    for whole in (False, True):
        found = counts(evaluate(s5a(ssthresh_whole_segments=whole), lens="net"))
        assert found["timeout"] == 0 and found["retransmit"] == found["drop"] > 0


def test_plan_gives_connections_without_sack_the_rfc_socket():
    assert scenario_plan(s5a()).flows[0].socket == RFC_SOCKET
    # ns-3's own scoreboard rules (RFC 6675 with SACK) on tcpn's socket, which records
    # every timer expiry and otherwise is ns-3's
    assert scenario_plan(s5a(ns3_reno_sack=True)).flows[0].socket == OWN_SOCKET
    assert scenario_plan(s5a(sack=True)).flows[0].socket == OWN_SOCKET


def test_vegas_law_maps_to_tcpn_vegas_or_ns3s():
    mapping = yaml.safe_load((REFERENCE / "s1_exp3_vegas_nosack.yaml").read_text())
    plan = scenario_plan(validate_scenario(mapping))
    assert {f.congestion for f in plan.flows} == {"tcpn::Vegas"}
    for flow in mapping["flows"]:
        flow["params"]["law"] = "ns3"
    plan = scenario_plan(validate_scenario(mapping))
    assert {f.congestion for f in plan.flows} == {"ns3::TcpVegas"}
    with pytest.raises(InputError, match=r"params\.law ns3"):
        get_lens("net")().check(validate_scenario(mapping))


def test_net_lens_refuses_ns3s_own_rules():
    with pytest.raises(InputError, match=r"tcp\.ns3_reno_sack"):
        get_lens("net")().check(s5a(ns3_reno_sack=True))
    mapping = yaml.safe_load((REFERENCE / "s4_c1_adaptive_newreno.yaml").read_text())
    mapping["flows"][0]["params"]["law"] = "ns3"
    with pytest.raises(InputError, match="law"):
        validate_scenario(mapping)  # a law of variant vegas only


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_rfc_socket_retransmits_only_what_was_lost():
    # ns-3's own rules (its scoreboard and its RTO reset at every new ACK): a duplicate
    # ACK drawn by a go-back-N retransmission the receiver
    # held becomes a guessed SACK, the next new ACK marks snd.una lost and resends it, and
    # so on: several resends per loss and timeouts. tcpn::Rfc5681Socket: one per loss.
    stock = counts(evaluate(s5a(ns3_reno_sack=True, ns3_rto_reset=True), lens="ns3"))
    rfc = counts(evaluate(s5a(), lens="ns3"))
    assert stock["timeout"] >= 5 and stock["retransmit"] > 2 * stock["drop"]
    assert rfc["timeout"] == 0 and abs(rfc["retransmit"] - rfc["drop"]) <= 0.05 * rfc["drop"]


#: What each issue-29 reference must pass in ``tcpn validate`` (net against ns-3, 10
#: replications): (scope, flow, metric). The rows left out are the misses docs/validation.md
#: reports (case 3: the adaptive flow's goodput, 8 % apart before the fast-retransmit
#: rules of case 1 were aligned, -0.3 % since; kept out until more seeds confirm it).
ISSUE29_ROWS = {
    "s5a_tbf_nosack": [("flow", "f1", m) for m in ("goodput_bps", "timeouts", "drops")],
    "s1_exp3_vegas_nosack": [("flow", "a0", "goodput_bps"), ("flow", "a1", "goodput_bps"),
                             ("aggregate", "all", "goodput_bps"),
                             ("queue", "R2->R1", "mean_packets"),
                             *(("flow", f"z.{k}", m) for k in range(8)
                               for m in ("drops", "timeouts"))],
    "s4_c1_adaptive_newreno": [("flow", "f2", m) for m in ("goodput_bps", "timeouts", "drops")],
}


@pytest.mark.slow
@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
@pytest.mark.parametrize("name", sorted(ISSUE29_ROWS))
def test_issue29_reference_meets_its_targets(name: str):
    found = compare(REFERENCE / f"{name}.yaml", ["net", "ns3"], replications=10)
    verdicts = {(r.scope, r.name, r.metric): r.net_verdict for r in found.table.itertuples()}
    assert {row: verdicts[row] for row in ISSUE29_ROWS[name]} == dict.fromkeys(
        ISSUE29_ROWS[name], "pass")
