"""The Model Checking Contest's symmetric nets, read coloured: their state spaces as index.csv.

Every COL instance of ``../shared/data/mcc`` has a known number of reachable states and
edges (those of its P/T twin, ``equiv_pt``). tcpn reads the symmetric net without
unfolding it and ``explore()`` must find exactly those numbers. A fixed sample of small
instances runs by default (the constructs between them: cyclic enumerations with
successor and predecessor, order on enumerations, finite int ranges, products, ``all``
inside tuples, several terms per arc, subtraction, free variables); all 24 under
``-m slow``.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tcpn.limits import LimitReached
from tcpn.petrinets import explore
from tcpn.petrinets.checking.contest.examinations import check_examinations
from tcpn.petrinets.exchange.cpn_import import CpnFormatError
from tcpn.petrinets.exchange.pnml import read_pnml, to_pnml

SAMPLE = ["DatabaseWithMutex-COL-02", "LamportFastMutEx-COL-2", "Philosophers-COL-000005",
          "TokenRing-COL-005", "Sudoku-COL-AN02", "Sudoku-COL-BN01",
          "BridgeAndVehicles-COL-V04P05N02", "QuasiCertifProtocol-COL-02",
          "SharedMemory-COL-000005", "SafeBus-COL-03"]


@pytest.fixture(scope="module")
def mcc(shared_dir: Path) -> Path:
    return shared_dir / "data" / "mcc"


@pytest.fixture(scope="module")
def index(mcc: Path) -> dict[str, dict[str, str]]:
    with open(mcc / "index.csv", newline="") as handle:
        return {row["instance"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory, mcc: Path):
    """``model(instance)``: the path of its model.pnml, extracted once to a temporary dir."""
    into = tmp_path_factory.mktemp("mcc")

    def model(instance: str) -> Path:
        target = into / instance / "model.pnml"
        if not target.exists():
            with tarfile.open(mcc / "instances" / f"{instance}.tgz") as archive:
                archive.extractall(into, members=[archive.getmember(
                    f"{instance}/model.pnml")], filter="data")
        return target

    return model


def all_col(shared: Path) -> list[str]:
    with open(shared / "data" / "mcc" / "index.csv", newline="") as handle:
        return [row["instance"] for row in csv.DictReader(handle) if row["type"] == "COL"]


SHARED = Path(__file__).resolve().parents[1].parent / "shared"
EVERY_COL = all_col(SHARED) if (SHARED / "data" / "mcc").is_dir() else []


def check_state_space(instance: str, models, index) -> None:
    net = read_pnml(models(instance)).net
    space = explore(net, max_states=2_000_000)
    row = index[instance]
    assert space.complete
    assert (len(space), space.n_edges) == (int(row["states"]), int(row["edges"])), instance


@pytest.mark.parametrize("instance", SAMPLE)
def test_a_sample_of_col_instances_gives_the_index_state_space(instance, models, index):
    check_state_space(instance, models, index)


@pytest.mark.slow
@pytest.mark.parametrize("instance", EVERY_COL)
def test_every_col_instance_gives_the_index_state_space(instance, models, index):
    check_state_space(instance, models, index)


def test_names_are_pnml_ids_and_labels_are_kept(models):
    path = models("DatabaseWithMutex-COL-02")
    imported = read_pnml(path)
    text = path.read_text()
    for name in imported.net.places:
        assert f'<place id="{name}">' in text
    for name in imported.net.transitions:
        assert f'<transition id="{name}">' in text
    assert imported.labels["all_active"] == "all_active"
    # one coloured transition, not one per colour: the net is not unfolded
    assert len(imported.net.transitions) == text.count("<transition ")


def test_coloured_twin_and_p_t_twin_agree_on_dead_markings(models):
    coloured = explore(read_pnml(models("Philosophers-COL-000005")).net)
    twin = explore(read_pnml(models("Philosophers-PT-000005")).net)
    assert len(coloured) == len(twin) == 243
    assert len(coloured.dead_markings()) == len(twin.dead_markings()) == 2


def test_an_unsupported_term_names_its_arc_and_line(models, tmp_path):
    text = models("Philosophers-COL-000005").read_text()
    bad = tmp_path / "bad.pnml"
    bad.write_text(text.replace("<predecessor>", "<stringconcatenation>", 1).replace(
        "</predecessor>", "</stringconcatenation>", 1))
    with pytest.raises(CpnFormatError, match=r"bad\.pnml, line \d+, element \w+: "
                       r"<stringconcatenation>: term <stringconcatenation> is outside"):
        read_pnml(bad)
    done = subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()",
                           "import", str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert "stringconcatenation" in done.stderr and "Traceback" not in done.stderr


def test_an_unsupported_sort_names_its_declaration(models, tmp_path):
    text = models("Sudoku-COL-AN01").read_text()
    bad = tmp_path / "bad.pnml"
    bad.write_text(text.replace('<finiteintrange start="1" end="1"/>', "<string/>", 1))
    with pytest.raises(CpnFormatError, match=r"line \d+, element N: <string>: sort <string> "
                       "is not a finite sort"):
        read_pnml(bad)


PARTITIONED = """<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
 <net id="part" type="http://www.pnml.org/version-2009/grammar/symmetricnet">
  <declaration><structure><declarations>
   <namedsort id="C" name="C"><cyclicenumeration>
     <feconstant id="a" name="a"/><feconstant id="b" name="b"/><feconstant id="c" name="c"/>
   </cyclicenumeration></namedsort>
   <partition id="P" name="Level"><usersort declaration="C"/>
     <partitionelement id="lo" name="lo"><useroperator declaration="a"/>
       <useroperator declaration="b"/></partitionelement>
     <partitionelement id="hi" name="hi"><useroperator declaration="c"/></partitionelement>
   </partition>
   <namedsort id="D" name="Dot"><dot/></namedsort>
   <variabledecl id="vx" name="x"><usersort declaration="C"/></variabledecl>
   <variabledecl id="vy" name="y"><usersort declaration="C"/></variabledecl>
  </declarations></structure></declaration>
  <page id="pg">
   <place id="p"><type><structure><usersort declaration="C"/></structure></type>
     <hlinitialMarking><structure><all><usersort declaration="C"/></all></structure>
     </hlinitialMarking></place>
   <place id="q"><type><structure><usersort declaration="C"/></structure></type></place>
   <place id="budget"><type><structure><usersort declaration="D"/></structure></type>
     <hlinitialMarking><structure><numberof><subterm><numberconstant value="3"><positive/>
     </numberconstant></subterm><subterm><dotconstant/></subterm></numberof></structure>
     </hlinitialMarking></place>
   <transition id="t"><condition><structure><imply>
     <subterm><equality><subterm><partitionelementof refpartition="P">
       <subterm><variable refvariable="vx"/></subterm></partitionelementof></subterm>
       <subterm><useroperator declaration="hi"/></subterm></equality></subterm>
     <subterm><booleanconstant value="false"/></subterm></imply></structure></condition>
   </transition>
   <transition id="u"/>
   <arc id="a0" source="budget" target="t"><hlinscription><structure><dotconstant/>
     </structure></hlinscription></arc>
   <arc id="a1" source="p" target="t"><hlinscription><structure>
     <variable refvariable="vx"/></structure></hlinscription></arc>
   <arc id="a2" source="t" target="q"><hlinscription><structure><subtract>
     <subterm><add><subterm><all><usersort declaration="C"/></all></subterm>
       <subterm><variable refvariable="vy"/></subterm></add></subterm>
     <subterm><numberof><subterm><numberconstant value="2"><positive/></numberconstant>
       </subterm><subterm><successor><subterm><variable refvariable="vx"/></subterm>
       </successor></subterm></numberof></subterm>
   </subtract></structure></hlinscription></arc>
   <arc id="a3" source="q" target="u"><hlinscription><structure><numberof>
     <subterm><numberconstant value="2"><positive/></numberconstant></subterm>
     <subterm><variable refvariable="vx"/></subterm></numberof></structure></hlinscription></arc>
   <arc id="a4" source="u" target="p"><hlinscription><structure>
     <predecessor><subterm><variable refvariable="vx"/></subterm></predecessor>
     </structure></hlinscription></arc>
  </page>
 </net>
</pnml>"""


def test_partitions_imply_subtraction_and_free_variables_against_hand_semantics():
    """t: x from p when x is not 'hi', a dot from a budget of 3; puts (all + y) - 2'succ(x)
    on q, y free. u: two equal tokens x from q, pred(x) back to p. Explored by hand below."""
    net = read_pnml(PARTITIONED).net
    assert net.transitions["t"].free_variables == {"y": net.places["p"].colour}
    colours = ["a", "b", "c"]

    def succ(c, step=1):
        return colours[(colours.index(c) + step) % 3]

    def successors(state):
        p, q, budget = dict(state[0]), dict(state[1]), state[2]
        for x in p:  # t: one firing per (x, y)
            if x == "c" or not budget:
                continue
            for y in colours:
                out = {c: 1 for c in colours}
                out[y] += 1
                out[succ(x)] = max(0, out[succ(x)] - 2)
                p2, q2 = dict(p), dict(q)
                p2[x] -= 1
                for c, n in out.items():
                    q2[c] = q2.get(c, 0) + n
                yield freeze(p2), freeze(q2), budget - 1
        for x in q:  # u
            if q[x] >= 2:
                p2, q2 = dict(p), dict(q)
                q2[x] -= 2
                p2[succ(x, -1)] = p2.get(succ(x, -1), 0) + 1
                yield freeze(p2), freeze(q2), budget

    def freeze(place):
        return frozenset((c, n) for c, n in place.items() if n)

    start = (freeze({c: 1 for c in colours}), freeze({}), 3)
    seen, frontier, edges = {start}, [start], 0
    while frontier and len(seen) < 5000:
        state = frontier.pop()
        for after in successors(state):
            edges += 1
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    space = explore(net, max_states=5000)
    assert not frontier and len(seen) > 50  # a complete, non-trivial state space
    assert (len(space), space.n_edges, space.complete) == (len(seen), edges, True)


def every_instance(shared: Path) -> list[str]:
    with open(shared / "data" / "mcc" / "index.csv", newline="") as handle:
        return [row["instance"] for row in csv.DictReader(handle)]


@pytest.mark.slow
@pytest.mark.parametrize("instance", every_instance(SHARED) if EVERY_COL else [])
def test_every_instance_reads_with_its_ids_as_names(instance, models):
    """P/T instances too: what the contest's formulas name must be a place or transition."""
    imported = read_pnml(models(instance), max_bytes=10**9)
    ids = set(imported.ids.values())
    assert ids == {n for n in (*imported.net.places, *imported.net.transitions)}


def test_all_over_a_huge_product_is_refused_not_expanded(tmp_path):
    huge = PARTITIONED.replace(
        '<namedsort id="D" name="Dot"><dot/></namedsort>',
        '<namedsort id="D" name="Dot"><dot/></namedsort><namedsort id="R" name="R">'
        '<finiteintrange start="1" end="100000"/></namedsort><namedsort id="RR" name="RR">'
        '<productsort><usersort declaration="R"/><usersort declaration="R"/></productsort>'
        '</namedsort>').replace(
        '<place id="q"><type><structure><usersort declaration="C"/></structure></type></place>',
        '<place id="q"><type><structure><usersort declaration="C"/></structure></type></place>'
        '<place id="big"><type><structure><usersort declaration="RR"/></structure></type>'
        '<hlinitialMarking><structure><all><usersort declaration="RR"/></all></structure>'
        '</hlinitialMarking></place>')
    with pytest.raises(LimitReached, match=r"element big: <all>: sort RR has 10000000000 "
                       "members, over the 100000"):
        read_pnml(huge)
    # within the grammar, beyond a limit: the model checker answers CANNOT_COMPUTE naming it
    (tmp_path / "model.pnml").write_text(huge)
    reasons: list[str] = []
    answers = check_examinations(tmp_path / "model.pnml", ["StateSpace", "OneSafe"],
                                 on_reason=lambda ident, reason: reasons.append(reason))
    assert answers == {"StateSpace": [f"STATE_SPACE {what} CANNOT_COMPUTE" for what in (
        "STATES", "TRANSITIONS", "MAX_TOKEN_IN_PLACE", "MAX_TOKEN_PER_MARKING")],
        "OneSafe": ["FORMULA OneSafe CANNOT_COMPUTE"]}
    assert reasons and all("a limit of tcpn reached while reading the model" in r and
                           "sort RR has 10000000000 members" in r for r in reasons)


@pytest.mark.parametrize(("instance", "standard"), [
    ("Philosophers-COL-000005", True), ("SafeBus-COL-03", True),
    ("LamportFastMutEx-COL-2", True), ("TokenRing-COL-005", False),
    ("DatabaseWithMutex-COL-02", False), ("BridgeAndVehicles-COL-V04P05N02", False)])
def test_a_col_net_written_again_keeps_its_state_space(instance, standard, models, index):
    """Successor, predecessor and order tables come back as standard terms (and their
    enumerations as cyclic ones); fresh variables, computed counts and guards with them
    in tcpn's form; the state space is the same either way."""
    text = to_pnml(read_pnml(models(instance)).net)
    assert ("<exact" not in text) == standard
    again = read_pnml(text)
    assert again.complete
    space = explore(again.net)
    row = index[instance]
    assert (len(space), space.n_edges) == (int(row["states"]), int(row["edges"]))



# -- the symmetric-net grammar beyond the shared instances (ISO/IEC 15909-2) --------------
def small_net(marking: str, output: str, declarations: str = "", sort: str = "C") -> str:
    """A symmetric net: place p (sort ``sort``, initial ``marking``); t takes x from p and
    puts ``output`` on q; cyclic sort C = {a, b, c}. The variable x is declared before the
    sorts (the standard does not order declarations); ``declarations`` come last."""
    return f"""<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
 <net id="n" type="http://www.pnml.org/version-2009/grammar/symmetricnet">
  <declaration><structure><declarations>
   <variabledecl id="vx" name="x"><usersort declaration="{sort}"/></variabledecl>
   <namedsort id="C" name="C"><cyclicenumeration>
     <feconstant id="a" name="a"/><feconstant id="b" name="b"/><feconstant id="c" name="c"/>
   </cyclicenumeration></namedsort>
   {declarations}
  </declarations></structure></declaration>
  <page id="pg">
   <place id="p"><type><structure><usersort declaration="{sort}"/></structure></type>
     <hlinitialMarking><structure>{marking}</structure></hlinitialMarking></place>
   <place id="q"><type><structure><usersort declaration="C"/></structure></type></place>
   <transition id="t"/>
   <arc id="a1" source="p" target="t"><hlinscription><structure>
     <variable refvariable="vx"/></structure></hlinscription></arc>
   <arc id="a2" source="t" target="q"><hlinscription><structure>{output}</structure>
     </hlinscription></arc>
  </page>
 </net>
</pnml>"""


def op(tag: str, *terms: str, **attributes: str) -> str:
    """``<tag attributes><subterm>term</subterm>...</tag>``."""
    attrs = "".join(f' {k}="{v}"' for k, v in attributes.items())
    return f"<{tag}{attrs}>" + "".join(f"<subterm>{t}</subterm>" for t in terms) + f"</{tag}>"


def const(name: str) -> str:
    return f'<useroperator declaration="{name}"/>'


def n_of(count: int, term: str) -> str:
    return op("numberof", f'<numberconstant value="{count}"><positive/></numberconstant>', term)


X = '<variable refvariable="vx"/>'
ALL_C = '<all><usersort declaration="C"/></all>'


def behaviour(xml: str) -> tuple[object, ...]:
    """What a net does: its initial marking, its state space's size, its dead markings."""
    net = read_pnml(xml).net
    space = explore(net, max_states=10_000)
    initial = {name: sorted(repr(t.value) for t in place.initial)
               for name, place in net.places.items()}
    dead = sorted(repr(sorted((name, sorted(repr(t.value) for t in tokens))
                              for name, tokens in space.marking(state).items()))
                  for state in space.dead_markings())
    return initial, len(space), space.n_edges, dead, space.complete


def test_subtract_takes_any_number_of_subterms_from_the_left():
    """a - b - c (the contest writes n-ary subtractions) is a - (b + c)."""
    three = behaviour(small_net(n_of(2, ALL_C), op("subtract", n_of(3, ALL_C), const("a"),
                                                   const("b"))))
    nested = behaviour(small_net(n_of(2, ALL_C), op("subtract", n_of(3, ALL_C),
                                                    op("add", const("a"), const("b")))))
    other = behaviour(small_net(n_of(2, ALL_C), op("subtract", n_of(3, ALL_C), const("a"))))
    assert three == nested != other
    with pytest.raises(CpnFormatError, match="element a2: <subtract>: takes two or more "
                       "subterms, not 1"):
        read_pnml(small_net(ALL_C, op("subtract", ALL_C)))


def test_a_product_of_one_sort_is_that_sort():
    """A one-component product and its one-component tuples (``(1,)`` in the contest's
    markings) mean the component: the net behaves as the one written without them."""
    one = ('<namedsort id="P1" name="P1"><productsort><usersort declaration="C"/>'
           '</productsort></namedsort>')
    wrapped = behaviour(small_net(op("add", op("tuple", const("a")), op("tuple", ALL_C)),
                                  op("tuple", X), one, sort="P1"))
    plain = behaviour(small_net(op("add", const("a"), ALL_C), X))
    assert wrapped == plain


def test_the_empty_multiset_and_nested_tuples():
    pairs = ('<namedsort id="CC" name="CC"><productsort><usersort declaration="C"/>'
             '<usersort declaration="C"/></productsort></namedsort>'
             '<namedsort id="N" name="N"><productsort><usersort declaration="CC"/>'
             '<usersort declaration="C"/></productsort></namedsort>')
    nested = op("tuple", op("tuple", const("a"), const("b")), const("c"))
    net = read_pnml(small_net(op("add", nested, '<empty><usersort declaration="N"/></empty>'),
                              '<empty><usersort declaration="C"/></empty>', pairs,
                              sort="N")).net
    assert [t.value for t in net.places["p"].initial] == [(("a", "b"), "c")]
    space = explore(net)
    assert (len(space), space.n_edges) == (2, 1)


NEXT2 = ('<namedoperator id="f" name="next2"><parameter><variabledecl id="pz" name="z">'
         '<usersort declaration="C"/></variabledecl></parameter><def>'
         + op("successor", op("successor", '<variable refvariable="pz"/>')) +
         '</def></namedoperator>')


def test_named_operators_expand_with_their_arguments():
    """``namedoperator`` (a declared term with parameters) used by ``useroperator`` with
    arguments behaves as its definition written in place."""
    used = behaviour(small_net(ALL_C, op("useroperator", X, declaration="f"), NEXT2))
    inline = behaviour(small_net(ALL_C, op("predecessor", X)))
    assert used == inline
    with pytest.raises(CpnFormatError, match="named operator next2 takes 1 argument"):
        read_pnml(small_net(ALL_C, const("f"), NEXT2))


def test_declarations_may_come_in_any_order_and_in_several_blocks():
    """x's sort L is declared after x, and L names M, declared in a second block."""
    late = small_net(ALL_C, X, sort="L", declarations=(
        '<namedsort id="L" name="L"><usersort declaration="M"/></namedsort>')).replace(
        "</declarations></structure></declaration>",
        '</declarations><declarations><namedsort id="M" name="M"><usersort '
        'declaration="C"/></namedsort></declarations></structure></declaration>')
    assert behaviour(late)[1:] == behaviour(small_net(ALL_C, X))[1:]


# -- every operator at every arity, every sort (issue 31) ---------------------------------
R3 = '<namedsort id="R" name="R"><finiteintrange start="1" end="3"/></namedsort>'
BOOLS = '<namedsort id="B" name="B"><bool/></namedsort>'
ENUM = ('<namedsort id="E" name="E"><finiteenumeration><feconstant id="e1" name="e1"/>'
        '<feconstant id="e2" name="e2"/><feconstant id="e3" name="e3"/></finiteenumeration>'
        '</namedsort>')
LOHI = ('<partition id="PC" name="PC"><usersort declaration="C"/>'
        '<partitionelement id="lo" name="lo">' + const("a") + const("b") +
        '</partitionelement><partitionelement id="hi" name="hi">' + const("c") +
        '</partitionelement></partition>')


def int_const(value: int) -> str:
    return (f'<finiteintrangeconstant value="{value}"><finiteintrange start="1" end="3"/>'
            '</finiteintrangeconstant>')


def number(value: int, sort: str = "positive") -> str:
    return f'<numberconstant value="{value}"><{sort}/></numberconstant>'


INT_PARTS = ('<partition id="PR" name="PR"><usersort declaration="R"/>'
             '<partitionelement id="r1" name="r1">' + int_const(1) + '</partitionelement>'
             '<partitionelement id="r23" name="r23">' + int_const(2) + int_const(3) +
             '</partitionelement></partition>')


def guarded(guard: str, marking: str = ALL_C, declarations: str = "", sort: str = "C",
            output: str = X) -> str:
    """:func:`small_net` with transition t guarded by ``guard``."""
    net = small_net(marking, output, declarations, sort)
    return net.replace('<transition id="t"/>', '<transition id="t"><condition><structure>'
                       f'{guard}</structure></condition></transition>')


def fired(xml: str) -> list[str]:
    """The values of x with which t fires in the initial marking (q's sort C or not)."""
    net = read_pnml(xml).net
    space = explore(net, max_states=10_000)
    return sorted({repr(edge.binding["x"]) for edge in space.edges(0)})


def final_q(xml: str) -> list[tuple[str, int]]:
    """What q holds in the one dead marking of ``xml``'s net."""
    space = explore(read_pnml(xml).net, max_states=10_000)
    dead = list(space.dead_markings())
    assert len(dead) == 1 and space.complete
    counts: dict[str, int] = {}
    for token in space.marking(dead[0])["q"]:
        counts[repr(token.value)] = counts.get(repr(token.value), 0) + 1
    return sorted(counts.items())


def test_a_difference_inside_a_sum_is_truncated_where_it_is():
    """``a + (x - a)``: a multiset difference stops at zero where it is written, so x = a
    puts one a, x = b puts a and b (flattened to ``a + x - a`` it would put x alone)."""
    output = op("add", const("a"), op("subtract", X, const("a")))
    two = op("add", const("a"), const("b"))
    assert final_q(small_net(two, output)) == [("'a'", 2), ("'b'", 1)]
    # a - (b - a) is a - b: a; all - (b - a) is all - b
    assert final_q(small_net(const("a"), op("subtract", op("add", const("a"), const("c")),
                                            op("subtract", const("b"), const("a"))))) == \
        [("'a'", 1), ("'c'", 1)]
    # closed, in an initial marking: a + (b - a) is a + b
    marking = op("add", const("a"), op("subtract", const("b"), const("a")))
    assert behaviour(small_net(marking, X))[0]["p"] == ["'a'", "'b'"]
    # a difference scaled inside a difference: 3'all - 2'(all - x)
    output = op("subtract", n_of(3, ALL_C), n_of(2, op("subtract", ALL_C, X)))
    assert final_q(small_net(const("b"), output)) == [("'a'", 1), ("'b'", 3), ("'c'", 1)]


def test_boolean_operators_take_any_number_of_subterms():
    not_a = op("inequality", X, const("a"))
    not_b = op("inequality", X, const("b"))
    nested_and = op("and", op("and", not_a, not_b), '<booleanconstant value="true"/>')
    assert fired(guarded(op("and", not_a, not_b, '<booleanconstant value="true"/>'))) == \
        fired(guarded(nested_and)) == ["'c'"]
    is_a, is_b = op("equality", X, const("a")), op("equality", X, const("b"))
    assert fired(guarded(op("or", is_a, is_b, '<booleanconstant value="false"/>'))) == \
        ["'a'", "'b'"]
    assert fired(guarded(op("imply", is_a, '<booleanconstant value="false"/>'))) == \
        ["'b'", "'c'"]
    assert fired(guarded(op("not", is_a))) == ["'b'", "'c'"]


@pytest.mark.parametrize(("comparison", "expected"), [
    ("lessthan", ["'e1'"]), ("lessthanorequal", ["'e1'", "'e2'"]), ("greaterthan", ["'e3'"]),
    ("greaterthanorequal", ["'e2'", "'e3'"]), ("equality", ["'e2'"]),
    ("inequality", ["'e1'", "'e3'"])])
def test_comparisons_follow_the_declared_order_of_an_enumeration(comparison, expected):
    """e3 < e1 as strings would say otherwise: the order is the declaration's (and the
    cyclic C's: a < b < c)."""
    xml = guarded(op(comparison, X, const("e2")), '<all><usersort declaration="E"/></all>',
                  ENUM, sort="E", output=const("a"))
    assert fired(xml) == expected
    cyclic = guarded(op(comparison, X, const("b")))
    assert fired(cyclic) == [e.replace("e1", "a").replace("e2", "b").replace("e3", "c")
                             for e in expected]


@pytest.mark.parametrize(("comparison", "expected"), [
    ("lessthan", ["1"]), ("lessthanorequal", ["1", "2"]), ("greaterthan", ["3"]),
    ("greaterthanorequal", ["2", "3"]), ("inequality", ["1", "3"])])
def test_comparisons_on_a_finite_int_range(comparison, expected):
    xml = guarded(op(comparison, X, int_const(2)), '<all><usersort declaration="R"/></all>',
                  R3, sort="R", output=const("a"))
    assert fired(xml) == expected


def test_all_on_every_sort():
    """``all`` of dot, bool, an int range, an enumeration, a partition and a product."""
    def initial(declarations: str, sort: str) -> list[str]:
        xml = small_net(f'<all><usersort declaration="{sort}"/></all>', const("a"),
                        declarations, sort=sort)
        return behaviour(xml)[0]["p"]

    assert initial('<namedsort id="D" name="D"><dot/></namedsort>', "D") == ["()"]
    assert initial(BOOLS, "B") == ["False", "True"]
    assert initial(R3, "R") == ["1", "2", "3"]
    assert initial(ENUM, "E") == ["'e1'", "'e2'", "'e3'"]
    assert initial(LOHI, "PC") == ["'hi'", "'lo'"]
    product = ('<namedsort id="BR" name="BR"><productsort><usersort declaration="B"/>'
               '<usersort declaration="R"/></productsort></namedsort>')
    assert initial(BOOLS + R3 + product, "BR") == [
        f"({b}, {i})" for b in ("False", "True") for i in (1, 2, 3)]


def test_partitions_of_enumerations_and_int_ranges():
    """``partitionelementof`` against an element, ``ltp``/``gtp`` in the elements' order;
    partition elements may list int-range constants."""
    of_x = op("partitionelementof", X, refpartition="PC")
    assert fired(guarded(op("equality", of_x, const("lo")), declarations=LOHI)) == \
        ["'a'", "'b'"]
    assert fired(guarded(op("gtp", of_x, const("lo")), declarations=LOHI)) == ["'c'"]
    assert fired(guarded(op("ltp", of_x, const("hi")), declarations=LOHI)) == ["'a'", "'b'"]
    in_r23 = op("equality", op("partitionelementof", X, refpartition="PR"), const("r23"))
    assert fired(guarded(in_r23, '<all><usersort declaration="R"/></all>', R3 + INT_PARTS,
                         sort="R", output=const("a"))) == ["2", "3"]
    with pytest.raises(CpnFormatError, match="partition PR leaves out 3"):
        read_pnml(small_net(const("a"), X, R3 + INT_PARTS.replace(int_const(3), "")))


def test_multiples_numberof_and_scalarproduct():
    doubled = behaviour(small_net(n_of(2, ALL_C), X))
    assert behaviour(small_net(op("scalarproduct", number(2), ALL_C), X)) == doubled
    assert behaviour(small_net(op("numberof", number(2, "natural"), ALL_C), X)) == doubled
    none = op("add", op("numberof", number(0, "natural"), ALL_C), const("a"))
    assert behaviour(small_net(none, X))[0]["p"] == ["'a'"]


def test_cardinality_cardinalityof_and_contains_in_guards():
    """|x + a| is 2; a + a + b holds x twice only for x = a; a + b contains x for a, b."""
    x_and_a = op("add", X, const("a"))
    assert fired(guarded(op("equality", op("cardinality", x_and_a), number(2)))) == \
        ["'a'", "'b'", "'c'"]
    assert fired(guarded(op("lessthan", op("cardinality", x_and_a), number(2)))) == []
    aab = op("add", n_of(2, const("a")), const("b"))
    assert fired(guarded(op("equality", op("cardinalityof", aab, X), number(2)))) == ["'a'"]
    assert fired(guarded(op("equality", op("cardinalityof", X, aab), number(1)))) == ["'b'"]
    assert fired(guarded(op("contains", op("add", const("a"), const("b")), X))) == \
        ["'a'", "'b'"]
    assert fired(guarded(op("contains", X, n_of(2, const("a"))))) == []


@pytest.mark.parametrize("label", ["hlinitialMarking", "condition"])
def test_a_label_with_text_and_no_structure_is_refused_not_read_as_empty(label):
    """An initial marking or a guard written only as text would otherwise read as no
    token or no guard: another net, without a word."""
    if label == "hlinitialMarking":
        xml = small_net(ALL_C, X).replace(
            f"<hlinitialMarking><structure>{ALL_C}</structure></hlinitialMarking>",
            "<hlinitialMarking><text>1'a ++ 1'b</text></hlinitialMarking>")
    else:
        xml = small_net(ALL_C, X).replace(
            '<transition id="t"/>',
            '<transition id="t"><condition><text>x = a</text></condition></transition>')
    with pytest.raises(CpnFormatError, match=f"element [tp]: <{label}>: no <structure>"):
        read_pnml(xml)


def test_a_nested_difference_on_an_input_arc_binds_as_its_cases():
    """Taking ``a + (x - a)``: x = a takes one a, x != a takes a and x. The same states,
    edges and dead markings as the two cases written as two guarded transitions."""
    taken = op("add", const("a"), op("subtract", X, const("a")))
    start = op("add", n_of(2, const("a")), n_of(2, const("b")), const("c"))
    nested = small_net(start, const("a")).replace(
        '<hlinscription><structure>\n     <variable refvariable="vx"/></structure>',
        f"<hlinscription><structure>{taken}</structure>")
    assert nested.count("<subtract>") == 1
    cases = nested.replace(taken, const("a")).replace(
        '<transition id="t"/>',
        f'<transition id="t"><condition><structure>{op("equality", X, const("a"))}'
        '</structure></condition></transition><transition id="u"><condition><structure>'
        f'{op("inequality", X, const("a"))}</structure></condition></transition>').replace(
        "</page>", '<arc id="a3" source="p" target="u"><hlinscription><structure>'
        f'{op("add", const("a"), X)}</structure></hlinscription></arc><arc id="a4" '
        f'source="u" target="q"><hlinscription><structure>{const("a")}</structure>'
        "</hlinscription></arc></page>")
    assert behaviour(nested)[1:] == behaviour(cases)[1:]
    assert behaviour(nested)[1] == 9


# -- the rest of the grammar: arities, named multisets, integers, ill-formed terms ----------
@pytest.mark.parametrize(("guard", "expected"), [
    (op("and"), ["'a'", "'b'", "'c'"]), (op("or"), []),
    (op("and", op("equality", X, const("b"))), ["'b'"]),
    (op("or", op("equality", X, const("c"))), ["'c'"])])
def test_and_and_or_of_no_or_one_subterm(guard, expected):
    """The booleans' ``and``/``or`` take any number of subterms: none is their unit (true,
    false), one is that subterm."""
    assert fired(guarded(guard)) == expected


def test_a_named_operator_may_stand_for_a_multiset():
    """f(z) = z + a on t's output arc: firing t with x = a, b, c in turn leaves q with
    4'a + b + c (counted by hand), as the sum written in place does."""
    plus_a = ('<namedoperator id="f" name="plus_a"><parameter><variabledecl id="pz" name="z">'
              '<usersort declaration="C"/></variabledecl></parameter><def>'
              + op("add", '<variable refvariable="pz"/>', const("a")) + '</def></namedoperator>')
    used = small_net(ALL_C, op("useroperator", X, declaration="f"), plus_a)
    assert final_q(used) == [("'a'", 4), ("'b'", 1), ("'c'", 1)]
    assert behaviour(used) == behaviour(small_net(ALL_C, op("add", X, const("a"))))


def test_integer_operators_compute_multiplicities():
    """numberof's count may be any closed number term of the standard's integers."""
    doubled = behaviour(small_net(n_of(2, ALL_C), X))
    for count in (op("addition", number(1), number(1)), op("mult", number(2), number(1)),
                  op("subtraction", number(5), number(3)), op("div", number(5), number(2)),
                  op("mod", number(8), number(3))):
        assert behaviour(small_net(op("numberof", count, ALL_C), X)) == doubled, count
    assert fired(guarded(op("lt", op("cardinality", op("add", X, X)), number(3)))) == \
        ["'a'", "'b'", "'c'"]
    assert fired(guarded(op("geq", number(1), number(2)))) == []
    with pytest.raises(CpnFormatError, match=r"element a2: <div>: <div> by zero"):
        read_pnml(small_net(ALL_C, op("numberof", op("div", number(1), number(0)), X)))


def test_a_one_component_tuple_of_an_int_range_marks_the_range():
    """The issue's shape: a place of a one-sort product over 1..2, marked with one-
    component tuples of range constants: the tokens are the integers."""
    z = ('<namedsort id="Z" name="Z"><finiteintrange start="1" end="2"/></namedsort>'
         '<namedsort id="PZ" name="PZ"><productsort><usersort declaration="Z"/>'
         '</productsort></namedsort>')
    one = ('<finiteintrangeconstant value="1"><finiteintrange start="1" end="2"/>'
           '</finiteintrangeconstant>')
    xml = small_net(op("add", op("tuple", one), op("tuple", one)), const("a"), z, sort="PZ")
    net = read_pnml(xml).net
    assert [t.value for t in net.places["p"].initial] == [1, 1]
    assert (len(explore(net)), explore(net).n_edges) == (3, 2)


@pytest.mark.parametrize(("declarations", "output", "message"), [
    ('<namedsort id="L" name="L"><usersort declaration="M"/></namedsort>'
     '<namedsort id="M" name="M"><usersort declaration="L"/></namedsort>', X,
     r"line \d+, element L: sort L is defined through itself \(L -> M -> L\): a user sort "
     "may not be recursive"),
    (R3, op("numberof", number(1), '<finiteintrangeconstant value="7"><finiteintrange '
            'start="1" end="3"/></finiteintrangeconstant>'),
     r"line \d+, element a2: <finiteintrangeconstant>: constant 7 is outside its range 1..3"),
    ("", op("tuple"), r"line \d+, element a2: <tuple>: a tuple needs one subterm per "
     "component"),
    ("", const("nowhere"), r"element a2: <useroperator>: unknown operator 'nowhere'"),
    ("", op("successor", op("tuple", X, X)), r"<successor> of a term whose sort is not a "
     "cyclic enumeration"),
])
def test_a_term_outside_the_grammar_names_line_element_and_rule(declarations, output,
                                                                  message, tmp_path):
    with pytest.raises(CpnFormatError, match=message):
        read_pnml(small_net(ALL_C, output, declarations))
    bad = tmp_path / "bad.pnml"
    bad.write_text(small_net(ALL_C, output, declarations))
    done = subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()",
                           "import", str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "bad.pnml" in done.stderr


def test_a_col_reading_past_the_memory_budget_ends_in_cannot_compute_naming_it(tmp_path):
    """``all`` over a product of 300 x 300 members on an arc makes a small file a large
    net: the reading checks the budget before each place, arc and sort listing, so a
    budget already spent ends it with every answer CANNOT_COMPUTE naming the budget."""
    from tcpn.petrinets.statespace.memory import resident_bytes

    wide = ('<namedsort id="R" name="R"><finiteintrange start="1" end="300"/></namedsort>'
            '<namedsort id="RR" name="RR"><productsort><usersort declaration="R"/>'
            '<usersort declaration="R"/></productsort></namedsort>')
    (tmp_path / "model.pnml").write_text(small_net(
        '<all><usersort declaration="RR"/></all>', const("a"), wide, sort="RR"))
    assert len(read_pnml(tmp_path / "model.pnml").net.places["p"].initial) == 90_000
    reasons: list[str] = []
    answers = check_examinations(tmp_path / "model.pnml", ["ReachabilityDeadlock"],
                                 max_memory_bytes=resident_bytes() // 2,
                                 on_reason=lambda ident, reason: reasons.append(reason))
    assert answers == {"ReachabilityDeadlock": ["FORMULA ReachabilityDeadlock CANNOT_COMPUTE"]}
    assert len(reasons) == 1 and reasons[0].startswith("memory budget reached: resident "
                                                       "memory above") and \
        reasons[0].endswith("while reading the model")


def test_lessthan_orders_partition_elements_as_listed():
    """``lessthan`` (as well as ``ltp``) between partition elements: lo before hi."""
    of_x = op("partitionelementof", X, refpartition="PC")
    assert fired(guarded(op("lessthan", of_x, const("hi")), declarations=LOHI)) == \
        ["'a'", "'b'"]
    assert fired(guarded(op("greaterthanorequal", of_x, const("hi")), declarations=LOHI)) \
        == ["'c'"]


def test_products_of_three_sorts_and_all_inside_nested_tuples():
    """``all`` of C x B x R is 3 x 2 x 3 = 18 values; ``((a, all C), c)`` is three."""
    three = (BOOLS + R3 + '<namedsort id="T" name="T"><productsort><usersort declaration="C"/>'
             '<usersort declaration="B"/><usersort declaration="R"/></productsort></namedsort>')
    initial = behaviour(small_net('<all><usersort declaration="T"/></all>', const("a"), three,
                                  sort="T"))[0]["p"]
    assert len(initial) == 18 and "('b', True, 3)" in initial
    nested = ('<namedsort id="CC" name="CC"><productsort><usersort declaration="C"/>'
              '<usersort declaration="C"/></productsort></namedsort><namedsort id="N" '
              'name="N"><productsort><usersort declaration="CC"/><usersort declaration="C"/>'
              '</productsort></namedsort>')
    marking = op("tuple", op("tuple", const("a"), ALL_C), const("c"))
    assert behaviour(small_net(marking, const("a"), nested, sort="N"))[0]["p"] == [
        f"(('a', '{c}'), 'c')" for c in "abc"]


CR = ('<namedsort id="CR" name="CR"><productsort><usersort declaration="C"/>'
      '<usersort declaration="R"/></productsort></namedsort>')


def test_a_tuple_of_multisets_is_their_product():
    """A tuple whose components are sums, multiples or ``all`` (``<a, 1 + 2>``, as the
    contest's VehicularWifi writes its markings) stands for every choice of one term per
    component, multiplicities multiplied: the net behaves as the one written as the sum
    of plain tuples."""
    def pair(c: str, r: int) -> str:
        return op("tuple", const(c), int_const(r))
    product = op("add", op("tuple", const("a"), op("add", int_const(1), int_const(2))),
                 op("tuple", n_of(2, const("b")), op("add", int_const(3), n_of(3, int_const(1)))),
                 op("tuple", const("c"), '<empty><usersort declaration="R"/></empty>'))
    spelled = op("add", pair("a", 1), pair("a", 2), n_of(2, pair("b", 3)),
                 n_of(6, pair("b", 1)))
    written = behaviour(small_net(product, const("a"), R3 + CR, sort="CR"))
    assert written == behaviour(small_net(spelled, const("a"), R3 + CR, sort="CR"))
    assert sorted(written[0]["p"]) == sorted(
        ["('a', 1)", "('a', 2)"] + ["('b', 3)"] * 2 + ["('b', 1)"] * 6)
    with pytest.raises(CpnFormatError, match="<subtract> inside a tuple's component"):
        read_pnml(small_net(op("tuple", const("a"), op("subtract", int_const(1), int_const(1))),
                            const("a"), R3 + CR, sort="CR"))


def test_a_partition_element_in_a_multiset_stands_for_its_members():
    """A partition element written where a multiset of the partitioned sort is expected
    (``<a, r23>`` in a marking of C x R) stands for the sum of its members."""
    marking = op("add", op("tuple", const("a"), const("r23")), op("tuple", const("b"),
                                                                  const("r1")))
    spelled = op("add", op("tuple", const("a"), int_const(2)),
                 op("tuple", const("a"), int_const(3)), op("tuple", const("b"), int_const(1)))
    declarations = R3 + INT_PARTS + CR
    assert behaviour(small_net(marking, const("a"), declarations, sort="CR")) == \
        behaviour(small_net(spelled, const("a"), declarations, sort="CR"))


# -- contest models of the 2026 input set (issue 31) ---------------------------------------
def test_a_subterm_wrapped_twice_is_the_term():
    """The contest's FileSystem-COL (MCC 2026) writes ``numberof``'s token as
    ``<subterm><subterm>x</subterm></subterm>``: a subterm whose only child is a subterm
    carries no meaning, so the net reads as if written with one wrapper, at any depth."""
    twice = ('<numberof><subterm><numberconstant value="2"><positive/></numberconstant>'
             f'</subterm><subterm><subterm>{X}</subterm></subterm></numberof>')
    thrice = twice.replace(f"<subterm>{X}</subterm>", f"<subterm><subterm>{X}</subterm>"
                           "</subterm>")
    once = n_of(2, X)
    assert behaviour(small_net(ALL_C, twice)) == behaviour(small_net(ALL_C, once))
    assert behaviour(small_net(ALL_C, thrice)) == behaviour(small_net(ALL_C, once))
    with pytest.raises(CpnFormatError, match="<subterm> must hold exactly one term"):
        read_pnml(small_net(ALL_C, f"<add><subterm>{X}{X}</subterm></add>"))
