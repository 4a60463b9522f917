"""Drawing: real SVG from Graphviz's dot, checked by parsing its XML."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tcpn.petrinets import INT, STRING, PetriNet, Place, Simulator, Transition
from tcpn.petrinets.drawing.dot import GraphvizMissing, to_dot, to_svg
from tcpn.petrinets.examples import single_server_queue

SVG = "{http://www.w3.org/2000/svg}"


def groups(svg: str, kind: str) -> dict[str, ET.Element]:
    """The SVG groups of one class ('node', 'edge', 'cluster'), by id."""
    root = ET.fromstring(svg)
    return {g.get("id", ""): g for g in root.iter(f"{SVG}g") if g.get("class") == kind}


def texts(group: ET.Element) -> list[str]:
    return [t.text or "" for t in group.iter(f"{SVG}text")]


def count(group: ET.Element, tag: str) -> int:
    return sum(1 for _ in group.iter(f"{SVG}{tag}"))


def every_arc_kind() -> PetriNet:
    net = PetriNet("kinds")
    net.declare(LIMIT=3)
    net.add_place(Place("n", INT.timed(), initial=[0]))
    net.add_place(Place("flag", STRING, initial=["on"]))
    net.add_place(Place("stop", INT))
    net.add_place(Place("junk", INT, initial=[1, 2]))
    net.add_transition(Transition("step", guard="x < LIMIT & 7", delay=1.5, priority=100))
    net.add_input("n", "step", "x")                         # arc 0
    net.add_read("flag", "step", "'on'")                    # arc 1
    net.add_inhibitor("stop", "step")                       # arc 2
    net.add_reset("junk", "step")                           # arc 3
    net.add_output("n", "step", "x + 1", delay=0.5)         # arc 4
    net.add_output("stop", "step", "x", count=2, when="x > 1")  # arc 5
    return net


def test_every_element_is_drawn_once():
    net = every_arc_kind()
    svg = to_svg(net)
    nodes, edges = groups(svg, "node"), groups(svg, "edge")
    assert set(nodes) == {f"place/{p}" for p in net.places} | {
        f"transition/{t}" for t in net.transitions}
    assert set(edges) == {f"arc/{i}" for i in range(len(net.arcs))}
    assert groups(svg, "cluster") == {}


def test_arc_kinds_have_distinct_arrowheads():
    edges = groups(to_svg(every_arc_kind()), "edge")
    plain, read, inhibitor, reset = (edges[f"arc/{i}"] for i in range(4))
    assert count(plain, "polygon") == 1 and count(plain, "ellipse") == 0
    assert count(read, "polygon") == 2                       # arrowheads at both ends
    assert count(inhibitor, "ellipse") == 1                  # the odot circle
    assert count(reset, "polygon") == 2                      # normalnormal: two heads
    path = next(reset.iter(f"{SVG}path"))
    assert path.get("stroke-dasharray")                      # dashed
    assert texts(reset) == ["reset"]
    assert texts(inhibitor) == ["empty"]
    assert texts(edges["arc/4"]) == ["x + 1 @+0.5"]
    assert texts(edges["arc/5"]) == ["if x > 1: 2`x"]


def test_places_and_transitions_show_their_annotations():
    nodes = groups(to_svg(every_arc_kind()), "node")
    timed, untimed = nodes["place/n"], nodes["place/flag"]
    assert count(timed, "ellipse") == 2 and count(untimed, "ellipse") == 1
    assert texts(timed) == ["n", "TINT · timed", "1`0@0"]
    assert texts(untimed) == ["flag", "STRING", "1`'on'"]
    # the guard's '<' and '&' are escaped for dot and read back intact
    assert texts(nodes["transition/step"]) == [
        "step", "[x < LIMIT & 7]", "@+ 1.5", "priority 100"]


def test_long_inscriptions_wrap_and_long_markings_are_cut():
    net = PetriNet("big")
    net.add_place(Place("p", INT, initial=[*range(20), 0]))
    net.add_place(Place("q", INT))
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "x")
    long = " + ".join(f"value_{i}" for i in range(40))      # about 400 characters
    net.declare(**{f"value_{i}": i for i in range(40)})
    net.add_output("q", "t", long)
    svg = to_svg(net, wrap=30, max_lines=4, max_tokens=5)
    lines = texts(groups(svg, "edge")["arc/1"])
    assert len(lines) == 4 and all(len(line) <= 30 for line in lines)
    assert lines[-1].endswith("…")
    marking = " ".join(texts(groups(svg, "node")["place/p"])[2:])
    assert marking.startswith("2`0 ++ 1`1") and marking.endswith("… +15 more")  # 21 tokens, 6 shown


def test_module_instances_are_clusters():
    stage = PetriNet("stage")
    stage.declare(CAP=1)
    stage.add_place(Place("inp", INT, port="in"))
    stage.add_place(Place("buf", INT))
    stage.add_transition(Transition("take", guard="v <= CAP"))
    stage.add_input("inp", "take", "v")
    stage.add_output("buf", "take", "v")
    net = PetriNet("pipe")
    net.add_place(Place("src", INT, initial=[1]))
    net.add_module(stage, "a", ports={"inp": "src"}, params={"CAP": 5})
    net.add_module(stage, "b", ports={"inp": "src"})
    svg = to_svg(net)
    clusters = groups(svg, "cluster")
    assert sorted(texts(c)[0] for c in clusters.values()) == ["a: stage (CAP=5)", "b: stage"]
    boxes = {texts(c)[0][0]: bbox(c) for c in clusters.values()}
    nodes = groups(svg, "node")
    for element in ("place/a.buf", "transition/a.take", "place/b.buf", "transition/b.take"):
        instance = element.split("/")[1][0]
        x, y = (float(v) for v in (next(nodes[element].iter(f"{SVG}text")).get(k)
                                   for k in ("x", "y")))
        for name, (x0, y0, x1, y1) in boxes.items():
            assert (x0 <= x <= x1 and y0 <= y <= y1) == (name == instance), element
    assert to_dot(net).source.count("subgraph cluster_") == 2


def bbox(group: ET.Element) -> tuple[float, float, float, float]:
    """The bounding box of a cluster's outline (a path of x,y pairs)."""
    outline = next(group.iter(f"{SVG}path")).get("d", "")
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", outline)]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def test_large_net_renders_every_node():
    net = single_server_queue(10, 1.0, 0.5)
    for i in range(60):
        net.add_place(Place(f"extra{i}", INT, initial=[i]))
        net.add_transition(Transition(f"move{i}", guard=f"x > {i}"))
        net.add_input(f"extra{i}", f"move{i}", "x")
        net.add_output("queue", f"move{i}", "x")
    svg = to_svg(net)
    assert len(groups(svg, "node")) == len(net.places) + len(net.transitions) == 127  # 4+60, 3+60
    assert len(groups(svg, "edge")) == len(net.arcs)


def test_a_run_s_marking_can_be_drawn():
    net = single_server_queue(3, 1.0, 0.5)
    sim = Simulator(net, seed=2)
    sim.run()  # all three customers served: source holds 3, the server is idle again
    nodes = groups(to_svg(net, marking=sim.marking_dict()), "node")
    source = texts(nodes["place/source"])[2]
    assert source.startswith("1`3@") and texts(nodes["place/queue"]) == ["queue", "TINT · timed"]


def test_jupyter_repr_is_svg():
    svg = single_server_queue(3, 1.0, 0.5)._repr_svg_()
    assert ET.fromstring(svg).tag == f"{SVG}svg"


def test_missing_dot_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GraphvizMissing, match="install it with: sudo apt-get install graphviz"):
        to_svg(every_arc_kind())
