"""The net lens's speed-ups leave its firing sequences as they were.

The SACK scoreboard helpers (``sack_pipe``, ``sack_hole``, ``merge_sack``) compute per gap
between SACKed runs what RFC 6675 defines per segment. Here the reference dumbbell runs
twice with the same seed, once with the helpers as shipped and once with the RFC's
segment-by-segment definitions written out below, and the two runs must fire the same
transitions with the same bindings at the same times. The 100 Mbit/s variant's slow-start
overshoot fills the scoreboard with dozens of runs over windows of hundreds of segments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcpn.lenses import make_run
from tcpn.models.components import packets, sender
from tcpn.models.scenario import Scenario, load_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import Simulator
from tcpn.petrinets.engine.monitors import FiringRecord

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell_newreno.yaml"


def _sacked_above(t: Any, s: int) -> int:
    return sum(max(0, end - max(start, s + 1)) for start, end in t.sacked)


def set_pipe_by_segment(t: Any, dupthresh: int) -> int:
    """RFC 6675 SetPipe as the RFC states it: every segment of ``[una, high)`` in turn."""
    pipe = 0
    for s in range(t.una, t.high):
        if packets.covers(t.sacked, s):
            continue
        if _sacked_above(t, s) < dupthresh:
            pipe += 1
        if s < t.highrxt:
            pipe += 1
    return pipe


def next_seg_by_segment(t: Any, dupthresh: int) -> int:
    """RFC 6675 NextSeg rule 1, segment by segment."""
    for s in range(max(t.una, t.highrxt), t.high):
        if not packets.covers(t.sacked, s) and _sacked_above(t, s) >= dupthresh:
            return s
    return -1


def merge_by_segment(sacked: Any, blocks: Any, una: int) -> Any:
    """The scoreboard after an ACK, one ``add_segment`` per SACKed segment."""
    runs = tuple((max(s, una), e) for s, e in sacked if e > una)
    for start, end in blocks:
        for seq in range(max(start, una), end):
            runs = packets.add_segment(runs, seq)
    return runs


def dumbbell(rate_bps: float, horizon_s: float) -> Scenario:
    base = load_scenario(SCENARIO)
    links = [link.model_copy(update={"rate_bps": rate_bps}) if (link.a, link.b) ==
             ("R1", "R2") else link for link in base.links]
    return base.model_copy(update={"horizon_s": horizon_s, "links": links})


def firings(scenario: Scenario) -> list[tuple[float, str, tuple[Any, ...]]]:
    run = make_run(scenario)
    log = FiringRecord()
    Simulator(compose(scenario, run.flows).net, seed=run.lens_seed,
              monitors=[log]).run(until=scenario.horizon_s)
    return log.firings


@pytest.mark.parametrize(("rate_bps", "horizon_s"), [(100e6, 1.2), (10e6, 4.0)])
def test_scoreboard_by_gap_fires_as_by_segment(monkeypatch: pytest.MonkeyPatch,
                                               rate_bps: float, horizon_s: float) -> None:
    scenario = dumbbell(rate_bps, horizon_s)
    fast = firings(scenario)
    calls = {"pipe": 0}

    def counted_pipe(t: Any, dupthresh: int) -> int:
        calls["pipe"] += 1
        return set_pipe_by_segment(t, dupthresh)

    monkeypatch.setattr(sender, "sack_pipe", counted_pipe)
    monkeypatch.setattr(sender, "sack_hole", next_seg_by_segment)
    monkeypatch.setitem(packets.FUNCTIONS, "merge_sack", merge_by_segment)
    reference = firings(scenario)
    assert calls["pipe"] > 100  # the scenario went through SACK recovery
    assert len(fast) == len(reference)
    assert fast == reference


def sack_blocks_by_definition(runs: Any, latest: int, limit: int = 3) -> Any:
    """RFC 2018's order: the block holding ``latest`` first, then the others highest first."""
    holding = [r for r in runs if r[0] <= latest < r[1]]
    others = sorted((r for r in runs if r not in holding), key=lambda r: r[0], reverse=True)
    return tuple((holding + others)[:limit])


def test_receiver_and_scoreboard_helpers_equal_their_definitions() -> None:
    # merge_sack and sack_blocks (whose empty-input fast paths serve most ACKs) against
    # the definitions above, empty scoreboards and blocks included
    import random

    rng = random.Random(7)

    def random_runs(n_max: int) -> Any:
        runs: Any = ()
        for seq in rng.sample(range(60), rng.randint(0, n_max)):
            runs = packets.add_segment(runs, seq)
        return runs

    for _ in range(3000):
        sacked, blocks, una = random_runs(12), random_runs(6), rng.randrange(30)
        assert packets.merge_sack(sacked, blocks, una) == merge_by_segment(sacked, blocks, una)
        latest, limit = rng.randrange(62), rng.randint(1, 4)
        assert (packets.sack_blocks(sacked, latest, limit)
                == sack_blocks_by_definition(sacked, latest, limit))
    assert packets.merge_sack((), (), 5) == () and packets.sack_blocks((), 3) == ()
