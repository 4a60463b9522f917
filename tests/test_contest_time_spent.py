"""A search a budget stopped, with the time spent: nothing more is read off it.

On a complete space what the states read off (``EF p`` seen, a bound) is the answer and is
given even with no time left; on a stopped search those readings answer little and, on
millions of coloured states, cost seconds each, so that a worker reading off every
formula of its examinations ran past its limit and was killed. With the time spent, every
line of a stopped search is CANNOT_COMPUTE naming the time budget; with time left the
same readings answer. The net is an unbounded counter written by hand in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

from tcpn.petrinets.checking.contest.examinations import check_examinations, explore_model

SEEN = ("<exists-path><finally><integer-le><integer-constant>3</integer-constant>"
        "<tokens-count><place>count</place></tokens-count></integer-le></finally>"
        "</exists-path>")


def write_counter(folder: Path) -> Path:
    """An unbounded counter (``grow``: run -> run + count) and ReachabilityCardinality.xml
    asking ``EF count >= 3``, which the first states found prove."""
    (folder / "model.pnml").write_text(
        '<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="counter" type="http://www.pnml.org/version-2009/grammar/ptnet"><page '
        'id="g"><place id="run"><initialMarking><text>1</text></initialMarking></place>'
        '<place id="count"/><transition id="grow"/><arc id="a1" source="run" '
        'target="grow"/><arc id="a2" source="grow" target="run"/><arc id="a3" '
        'source="grow" target="count"/></page></net></pnml>')
    (folder / "ReachabilityCardinality.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/"><property><id>'
        f'counter-RC-00</id><description>-</description><formula>{SEEN}</formula>'
        '</property></property-set>')
    return folder / "model.pnml"


def test_a_stopped_search_with_the_time_spent_reads_nothing_off(tmp_path: Path):
    path = write_counter(tmp_path)
    explored = explore_model(path, max_states=20)
    assert not explored[1].complete
    reasons: dict[str, str] = {}
    spent = check_examinations(path, ["ReachabilityCardinality", "OneSafe"], 20,
                               time_limit_s=0.0, explored=explored,
                               on_reason=reasons.__setitem__)
    assert spent == {"ReachabilityCardinality": ["FORMULA counter-RC-00 CANNOT_COMPUTE"],
                     "OneSafe": ["FORMULA OneSafe CANNOT_COMPUTE"]}
    assert all(why.startswith("time budget reached") for why in reasons.values()), reasons
    roomy = check_examinations(path, ["ReachabilityCardinality", "OneSafe"], 20,
                               time_limit_s=60.0, explored=explored)
    assert roomy["ReachabilityCardinality"][0].startswith("FORMULA counter-RC-00 TRUE")
    assert roomy["OneSafe"][0].startswith("FORMULA OneSafe FALSE")
