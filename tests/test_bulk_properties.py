"""Long-run properties of a bulk sender: bounded window observers, verdicts, lassos, replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, parse_scenario
from tcpn.models.verification import LossBudget, verification_net
from tcpn.models.verification.check import property_net, verify, verify_all

#: a coarse RTT grain keeps these spaces at a few thousand states (docs/statespace.md)
GRAIN_S = 0.1


def bulk(variant: str = "newreno", window: int = 2) -> Scenario:
    return parse_scenario(f"""
name: bulk
links:
  - {{a: S, b: R, rate_bps: 10.0e+6, delay_s: 0.005, queue: {{kind: drop_tail, limit: 8}}}}
  - {{a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.010}}
tcp: {{segment_size_bytes: 1000, rcv_buf_bytes: {window * 1000}, handshake: false}}
flows:
  - {{src: S, dst: D, variant: {variant}}}
horizon_s: 30.0
""")


@pytest.mark.parametrize("variant", ["newreno", "reno", "tahoe", "sack"])
def test_one_loss_per_window_keeps_delivering(variant: str) -> None:
    result = verify(bulk(variant), "keeps_delivering", segments=None, losses=1,
                    clock="relative", per_flight=True, rtt_grain_s=GRAIN_S)
    assert result.answer == "true", result.reason
    assert 100 < result.states < 100_000


def test_the_per_window_budget_refills_and_the_per_run_one_does_not() -> None:
    def refills(per_flight: bool) -> bool:
        space = property_net(bulk(), segments=None, losses=1, clock="relative",
                             per_flight=per_flight, rtt_grain_s=GRAIN_S).verification.explore()
        budget = [space.marking(s)["losses"][0].value for s in range(len(space))]
        return any(budget[t] > budget[s] for s in range(len(space))
                   for t in space.successors(s))
    assert not refills(per_flight=False)
    assert refills(per_flight=True)


def test_cwnd_returns_to_the_full_window_only_when_losses_do_not_recur() -> None:
    # hand check: rwnd 4, one loss per window forever: each loss halves cwnd (or resets it
    # to 1), and congestion avoidance needs more than a window to regain 4 segments before
    # the next window's loss; with one loss per run cwnd regains 4 and stays there
    per_window = verify(bulk(window=4), "cwnd_returns_after_loss", segments=None, losses=1,
                        clock="relative", per_flight=True, cwnd_target_segments=4,
                        rtt_grain_s=GRAIN_S)
    assert per_window.answer == "false"
    evidence = per_window.verdict.evidence  # type: ignore[union-attr]
    assert evidence is not None and evidence.cycle  # a lasso: the losses recur forever
    assert sum(1 for s in evidence.cycle if s.transition.endswith("_lost")) >= 1
    assert per_window.lost["S->R"] == tuple(sorted(per_window.lost["S->R"]))
    once = verify(bulk(window=4), "cwnd_returns_after_loss", segments=None, losses=1,
                  clock="relative", cwnd_target_segments=4, rtt_grain_s=GRAIN_S)
    assert once.answer == "true"


def test_a_bulk_counterexample_replays_in_the_simulator() -> None:
    pn = property_net(bulk(window=4), segments=None, losses=1, clock="relative",
                      per_flight=True, cwnd_target_segments=4, rtt_grain_s=GRAIN_S)
    [r] = verify_all(None, "cwnd_returns_after_loss", segments=None,  # type: ignore[arg-type]
                     prepared=pn, losses=1)
    evidence = r.verdict.evidence  # type: ignore[union-attr]
    steps = [*evidence.stem, *evidence.cycle, *evidence.cycle]
    firings = pn.replay([(s.transition, s.binding) for s in steps])
    assert [f.transition for f in firings] == [s.transition for s in steps]
    # absolute in the simulator: the second turn of the cycle sends later segments
    seqs = [f.binding["p"].seq for f in firings if "p" in f.binding and f.binding["p"].seq >= 0]
    assert max(seqs) > 4
    # a path the simulator cannot take is refused at its first wrong step
    wrong = [(s.transition, dict(s.binding)) for s in steps[:12]]
    last = wrong[-1][1]
    if "p" in last:
        last["p"] = last["p"]._replace(seq=last["p"].seq + 3)
    else:
        last["t"] = None
    with pytest.raises(InputError, match="bulk replay step 11"):
        pn.replay(wrong)


def test_bulk_properties_refuse_what_they_cannot_bound() -> None:
    with pytest.raises(InputError, match=r"observers .*grow without bound"):
        verify(bulk(), "delivered_once_in_order", segments=None, clock="relative")
    with pytest.raises(InputError, match="keeps_delivering: observer progress belongs to a "
                                         "bulk sender"):
        verify(bulk(), "keeps_delivering", segments=3)
    with pytest.raises(InputError, match="observer since_loss needs a cwnd target"):
        verify(bulk(), "cwnd_returns_after_loss", segments=None, clock="relative")
    with pytest.raises(InputError, match="from 1 to its receive window"):
        verify(bulk(), "cwnd_returns_after_loss", segments=None, clock="relative",
               cwnd_target_segments=3)
    with pytest.raises(InputError, match="per_flight or unbounded is for a bulk sender"):
        verification_net(bulk(), segments=3, losses=LossBudget(1, per_flight=True))
    with pytest.raises(InputError, match="different scopes"):
        LossBudget(1, per_flight=True, unbounded=True)


def test_all_on_a_bulk_space_runs_only_the_bulk_properties() -> None:
    results = verify_all(bulk(), "all", segments=None, losses=1, clock="relative",
                         per_flight=True, rtt_grain_s=GRAIN_S)
    answers = {r.property.name: r.answer for r in results}
    assert answers["keeps_delivering"] == "true"
    assert answers["cwnd_returns_after_loss"] == "n/a"  # no target given
    assert answers["delivered_once_in_order"] == "n/a"


def test_tcpn_check_bulk(tmp_path: Path) -> None:
    scenario = tmp_path / "bulk.yaml"
    scenario.write_text(bulk().model_dump_json())
    done = run_tcpn("check", scenario, "--property", "keeps_delivering", "--bulk", "--losses",
                    "1", "--per-window", "--rtt-grain", str(GRAIN_S))
    assert done.returncode == 0, done.stderr
    assert "a bulk sender, at most 1 data segments and 0 other packets lost per window" \
        in done.stdout
    assert "keeps_delivering: TRUE  (1,070 states" in done.stdout
    refused = run_tcpn("check", scenario, "--property", "keeps_delivering", "--per-window")
    assert refused.returncode == 3 and "go with --bulk" in refused.stderr


def test_keeps_delivering_is_not_vacuous() -> None:
    # the same space has fair paths that deliver forever, and none that stop delivering
    # after some point; and the parity does flip (both values are reachable)
    from tcpn.models.bulk_properties import keeps_delivering
    from tcpn.models.properties import retransmission_fairness
    from tcpn.petrinets.checking.check import check
    from tcpn.petrinets.checking.formulas import A, E, F, G
    pn = property_net(bulk(), segments=None, losses=1, clock="relative", per_flight=True,
                      rtt_grain_s=GRAIN_S)
    space = pn.verification.explore()
    formula = keeps_delivering(pn.flow)
    assert isinstance(formula, A)
    fair = retransmission_fairness(pn.flow)
    assert check(space, E(formula.path), fairness=fair).answer == "true"
    stuck = pn.flow.holds("parity 0", lambda m: pn.flow.value(m, "progress") == 0)
    verdict = check(space, A(F(G(stuck))), fairness=fair)
    assert verdict.answer == "false" and verdict.evidence is not None
    assert {space.marking(s)["flow0.progress"][0].value for s in range(len(space))} == {0, 1}
