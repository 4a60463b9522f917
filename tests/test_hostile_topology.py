"""A long chain of links, within every limit of the file, checked in linear time.

Each hop of each route looked its link up by scanning every link: a 550 kB scenario of
10,500 links in a chain kept ``tcpn scenario`` busy for more than 150 s (3,000 links: 27 s).
"""

from __future__ import annotations

import time

from tcpn.models.scenario import parse_scenario

HOPS = 6_000


def _chain(hops: int) -> str:
    """A scenario of one flow over ``hops`` links in a row."""
    links = "".join(f"  - {{a: N{i}, b: N{i + 1}, rate_bps: 1.0e+6, delay_s: 0}}\n"
                    for i in range(hops))
    return (f"name: chain\nlinks:\n{links}flows:\n  - {{id: f0, src: N0, dst: N{hops}, "
            "variant: newreno, start_s: 0.0, bytes: 14480}\nhorizon_s: 100.0\n")


def test_a_chain_of_thousands_of_links_is_checked_within_seconds():
    started = time.monotonic()
    scenario = parse_scenario(_chain(HOPS), "chain.yaml")
    took_s = time.monotonic() - started
    assert len(scenario.route_links(scenario.route("N0", f"N{HOPS}"))) == HOPS
    assert took_s < 30, f"{HOPS} links took {took_s:.0f} s to check"
