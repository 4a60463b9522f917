"""A bulk sender's verification net: finite with the offset reductions, refused without."""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, parse_scenario
from tcpn.models.verification import LossBudget, verification_net
from tcpn.models.verification.bulk import cwnd_cap
from tcpn.petrinets.statespace.offsets import OffsetField, OffsetGroup


def bulk(variant: str = "newreno", window: int = 2, handshake: bool = False) -> Scenario:
    return parse_scenario(f"""
name: bulk
links:
  - {{a: S, b: R, rate_bps: 10.0e+6, delay_s: 0.005, queue: {{kind: drop_tail, limit: 8}}}}
  - {{a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.010}}
tcp: {{segment_size_bytes: 1000, rcv_buf_bytes: {window * 1000},
      handshake: {str(handshake).lower()}}}
flows:
  - {{src: S, dst: D, variant: {variant}}}
horizon_s: 30.0
""")


@pytest.mark.parametrize(("variant", "window", "losses"), [
    ("newreno", 1, 0), ("newreno", 2, 1), ("reno", 2, 0), ("tahoe", 2, 0)])
def test_a_bulk_sender_has_a_finite_space_in_relative_numbers(variant: str, window: int,
                                                               losses: int) -> None:
    v = verification_net(bulk(variant, window), segments=None, clock="relative",
                         losses=LossBudget(data_losses=losses))
    space = v.explore(max_states=100_000, shift_checks=None)  # every state checked
    assert space.complete
    senders = [space.marking(s)["flow0.snd.tcb"] for s in range(len(space))]
    opened = [tokens[0].value for tokens in senders if tokens]
    # the sender sends on forever (it never runs out of data) ...
    assert any(t.nxt > t.una for t in opened)
    # ... but its numbers stay small: relative to the smallest live one, within the window
    assert max(t.high for t in opened) <= window + 1
    assert max(t.cwnd for t in opened) <= window
    assert any("bulk sender" in a for a in v.abstractions)


def test_the_space_grows_with_the_window_and_the_losses() -> None:
    sizes = [len(verification_net(bulk("newreno", w), segments=None, clock="relative",
                                  losses=LossBudget(data_losses=k)).explore())
             for w, k in ((1, 0), (4, 0), (4, 1))]
    assert sizes[0] < sizes[1] < sizes[2]


def test_the_cwnd_cap_changes_nothing_on_a_finite_transfer() -> None:
    scenario = bulk("newreno", 2)
    v = verification_net(scenario, segments=4, clock="relative",
                         losses=LossBudget(data_losses=1))
    plain = v.explore()
    from tcpn.petrinets import explore
    cap = OffsetGroup("cwnd cap", {"flow0.snd.tcb": OffsetField(normal=cwnd_cap(2))})
    reduced = explore(v.net, clock="relative", offsets=[cap])
    assert plain.complete and reduced.complete
    assert len(reduced) <= len(plain)

    def ends(space: object) -> set[tuple[int, int]]:
        out = set()
        for s in space.dead_markings():  # type: ignore[attr-defined]
            m = space.marking(s)  # type: ignore[attr-defined]
            out.add((m["flow0.rcv.rcv"][0].value.nxt, m["losses"][0].value[0]))
        return out
    assert ends(reduced) == ends(plain)


def test_bulk_needs_relative_time() -> None:
    with pytest.raises(InputError, match="never closes in absolute time"):
        verification_net(bulk(), segments=None, clock="absolute")


def test_bulk_refuses_what_its_reductions_cannot_keep() -> None:
    with pytest.raises(InputError, match=r"tcp\.handshake"):
        verification_net(bulk(handshake=True), segments=None, clock="relative")
    with pytest.raises(InputError, match=r"flows\[0\].variant: vegas"):
        verification_net(bulk("vegas"), segments=None, clock="relative")
    with pytest.raises(InputError, match="receive window is 100 segments"):
        verification_net(bulk(window=100), segments=None, clock="relative")


def test_a_finite_transfer_with_the_offsets_is_refused_by_the_check() -> None:
    # a finite transfer tests nxt < TOTAL: not offset invariant, and the check says where
    from tcpn.petrinets import explore
    v_bulk = verification_net(bulk(), segments=None, clock="relative")
    finite = verification_net(bulk(), segments=3, clock="relative")
    with pytest.raises(InputError, match=r"offset groups .*transition flow0.snd.send"):
        explore(finite.net, clock="relative", offsets=v_bulk.offsets)


def test_the_property_library_refuses_a_finite_property_on_a_bulk_space() -> None:
    from tcpn.models.verification.check import verify_all
    with pytest.raises(InputError, match="grow without bound on a bulk sender"):
        verify_all(bulk(), "ssthresh_at_least_2", segments=None, clock="relative")
