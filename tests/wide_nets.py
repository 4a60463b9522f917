"""A wide P/T net written as a contest model, for the tests of nets with many places and
small state spaces."""

from __future__ import annotations

from pathlib import Path


def write_cycles_model(folder: Path, cycles: int, marked: int) -> Path:
    """``folder/model.pnml``: ``cycles`` two-place cycles a_i -> f_i -> b_i -> g_i -> a_i
    (2 x ``cycles`` places and transitions), the first ``marked`` with a token in a_i:
    2^marked states, each cycle independent of the others."""
    nodes = []
    for i in range(cycles):
        marking = "<initialMarking><text>1</text></initialMarking>" if i < marked else ""
        nodes.append(
            f'<place id="a{i}">{marking}</place><place id="b{i}"/><transition id="f{i}"/>'
            f'<transition id="g{i}"/><arc id="af{i}" source="a{i}" target="f{i}"/>'
            f'<arc id="fb{i}" source="f{i}" target="b{i}"/>'
            f'<arc id="bg{i}" source="b{i}" target="g{i}"/>'
            f'<arc id="ga{i}" source="g{i}" target="a{i}"/>')
    path = folder / "model.pnml"
    path.write_text(
        '<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="wide" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="g">'
        + "\n".join(nodes) + "</page></net></pnml>")
    return path
