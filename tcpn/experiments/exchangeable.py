"""Flows a scenario treats alike: which of its connections could trade names.

Two connections are *exchangeable* when swapping them leaves the scenario the same: the
same variant, parameters, TCP configuration, amount to send, start and stop rules, and
routes that differ only in links each uses alone, those links configured alike hop by
hop (rate, delay, layer-2 header, 802.11 hop, and the direction's queue and errors). Links
two connections share are crossed in the same place of both routes. Any other traffic then
meets the two only on the shared links, so it cannot tell them apart either.

Exchangeable connections that race (two CUBIC flows at 100 Mbit/s, one holding two thirds
of the link for a minute) give per-flow means that say more about which one the start
draws favoured than about the model: the validation then also compares the flows ranked
by goodput in each run (:func:`tcpn.experiments.compare.compare`), which do not depend on
the names.

>>> from tcpn.models.scenario import dumbbell
>>> staggered = dumbbell(pairs=3, variant="reno", horizon_s=5.0)  # starts 0.1 s apart
>>> exchangeable_flows(staggered)
[]
>>> together = staggered.model_copy(update={"flows": [
...     flow.model_copy(update={"start_s": 0.0}) for flow in staggered.flows]})
>>> exchangeable_flows(together)
[('f0', 'f1', 'f2')]
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence

from tcpn.models.scenario import ConcreteFlow, Flow, Scenario

__all__ = ["exchangeable_flows"]


def exchangeable_flows(scenario: Scenario) -> list[tuple[str, ...]]:
    """The groups of two or more exchangeable connections, in flow order (ids as
    :meth:`Scenario.concrete_flows` names them). Connections of one group entry that start
    one after another (``count`` > 1 with a ``gap_s`` other than 0) are not exchangeable:
    their order is part of the scenario."""
    flows = scenario.concrete_flows()
    # concrete_flows lists each entry of ``scenario.flows`` in turn, its connections together
    entries = dict(zip(dict.fromkeys(f.group for f in flows), scenario.flows, strict=True))
    specs = {f.id: _spec(entries[f.group], f) for f in flows}
    users: Counter[frozenset[str]] = Counter()
    for flow in flows:
        for hop in {*_hops(flow.data_route), *_hops(flow.ack_route)}:
            users[hop] += 1
    groups: list[list[ConcreteFlow]] = []
    for flow in flows:
        for group in groups:
            if specs[group[0].id] == specs[flow.id] and _alike(scenario, group[0], flow,
                                                                 users):
                group.append(flow)
                break
        else:
            groups.append([flow])
    return [tuple(f.id for f in group) for group in groups if len(group) > 1]


def _hops(route: Sequence[str]) -> list[frozenset[str]]:
    return [frozenset(pair) for pair in itertools.pairwise(route)]


def _spec(group: Flow, flow: ConcreteFlow) -> str:
    """What connection ``flow`` of entry ``group`` is, without its name, ends, or drawn
    times."""
    gap = group.gap_s
    ordered = group.count > 1 and not (isinstance(gap, (int, float)) and gap == 0)
    dump = group.model_dump(mode="json", exclude={"id", "src", "dst", "count", "gap_s"})
    return json.dumps({"group": dump, "tcp": flow.tcp.model_dump(mode="json"),
                       "index": flow.index if ordered else None}, sort_keys=True)


def _hop_config(scenario: Scenario, a: str, b: str) -> str:
    link = scenario.link_between(a, b)
    direction = link.ab if (link.a, link.b) == (a, b) else link.ba
    return json.dumps({"rate_bps": link.rate_bps, "delay_s": link.delay_s,
                       "l2_header_bytes": link.l2_header_bytes,
                       "wireless": link.wireless.model_dump(mode="json")
                       if link.wireless is not None else None,
                       "direction": direction.model_dump(mode="json")}, sort_keys=True)


def _routes_alike(scenario: Scenario, first: Sequence[str], second: Sequence[str],
                  users: Counter[frozenset[str]]) -> bool:
    if len(first) != len(second):
        return False
    for (a, b), (c, d) in zip(itertools.pairwise(first),
                              itertools.pairwise(second), strict=True):
        if frozenset((a, b)) == frozenset((c, d)):
            if (a, b) != (c, d):
                return False  # the same link crossed the other way
            continue
        private = users[frozenset((a, b))] == 1 and users[frozenset((c, d))] == 1
        if not private or _hop_config(scenario, a, b) != _hop_config(scenario, c, d):
            return False
    return True


def _alike(scenario: Scenario, first: ConcreteFlow, second: ConcreteFlow,
           users: Counter[frozenset[str]]) -> bool:
    return (_routes_alike(scenario, first.data_route, second.data_route, users)
            and _routes_alike(scenario, first.ack_route, second.ack_route, users))
