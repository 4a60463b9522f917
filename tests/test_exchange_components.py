"""tcpn's own component nets and scenario nets go to CPN Tools, come back and mean the same.

Each component (link with each error model, every queue, receiver, every sender) and a
whole composed scenario is exported; the file is checked with cpncheck (an independent
CPN ML parser and evaluator: every declaration and inscription must parse, and the
declared functions must compute what the Python helpers compute) and read back with
``read_cpn``. The imported dumbbell fires the same sequence as the original for a seed,
and the state space of a small transfer is the same either way. The twins of
:mod:`tcpn.models.components.ml_forms` are checked against the helpers they stand for.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cpncheck.colourset import Declarations
from cpncheck.cpnml import parse_expression
from cpncheck.net import CPNNet
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpn.errors import InputError
from tcpn.models.components import ml_forms, packets
from tcpn.models.components.congestion.ns2_vegas import (
    fine_expired,
    fine_inflated,
    fine_retransmitted,
    fine_sent,
    fine_timed,
    last_sent,
    ns2_exit_window,
    ns2_vegas_cuts,
    ns2_vegas_window,
    worried_resend,
)
from tcpn.models.components.congestion.tcp_l import TCP_L, reporter_net, tcp_l_adopt
from tcpn.models.components.congestion.vegas import (
    VegasLaw,
    add_hull_point,
    hull_floor,
    mst_slope,
    vegas_decision,
    vegas_sender_net,
)
from tcpn.models.components.congestion.vegas_record import (
    drop_acked,
    forget_segment,
    sent_time,
    vegas_sent,
    vegas_start,
)
from tcpn.models.components.link import (
    ByteErrors,
    ListErrors,
    PacketErrors,
    Transmitter,
    interface_net,
)
from tcpn.models.components.packets import PACKET, add_segment
from tcpn.models.components.queues import (
    DropTailQueue,
    RedQueue,
    SmallFirstQueue,
    ThresholdEcnQueue,
    TokenBucketQueue,
    red_decision,
)
from tcpn.models.components.receiver import ReceiverConfig, receiver_net
from tcpn.models.components.sender import (
    LOSS_BASED,
    TCB,
    SenderConfig,
    grow,
    resent_flight,
    sender_net,
)
from tcpn.models.components.variants import variant_sender_net
from tcpn.models.components.wireless import (
    Radio,
    attempts,
    backoff_slots,
    wireless_interface_net,
)
from tcpn.models.scenario import dumbbell, parse_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import INT, ListSet, PetriNet, Place, Transition, simulate
from tcpn.petrinets.engine.monitors import Monitor
from tcpn.petrinets.exchange.cpn_export import to_cpn, write_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.cpnml import split_delay
from tcpn.petrinets.statespace.space import explore

Tcb = TCB.record_type
LIST_OF_INTS = ListSet(INT, name="Ints")


def link(queue, errors=None) -> PetriNet:
    return interface_net(queue, Transmitter(8e6, 0.01, errors=errors),
                         routes=["p.seq >= 0", "p.seq < 0"])


COMPONENTS = {
    "link": lambda: link(DropTailQueue(limit=10)),
    "link_packet_errors": lambda: link(DropTailQueue(limit=10), PacketErrors(0.01)),
    "link_byte_errors": lambda: link(DropTailQueue(limit=10), ByteErrors(1e-5)),
    "link_list_errors": lambda: link(DropTailQueue(limit=10), ListErrors((3, 7))),
    "drop_tail_bytes": lambda: link(DropTailQueue(limit=10_000, unit="bytes")),
    "threshold_ecn": lambda: link(ThresholdEcnQueue(limit=10, k=3)),
    "red_ecn": lambda: link(RedQueue(limit=50, ecn=True)),
    "red_bytes": lambda: link(RedQueue(limit=50_000, unit="bytes")),
    "sgpq": lambda: link(SmallFirstQueue(limit=10)),
    "token_bucket_policer": lambda: link(TokenBucketQueue(mode="policer")),
    "token_bucket_shaper": lambda: link(TokenBucketQueue(mode="shaper")),
    "receiver": lambda: receiver_net(ReceiverConfig(flow=0, src=0)),
    "receiver_sack_ecn_skew": lambda: receiver_net(ReceiverConfig(
        flow=0, src=0, sack=True, ecn=True, clock_skew=1e-4)),
    "receiver_exact_ecn_echo": lambda: receiver_net(ReceiverConfig(
        flow=0, src=0, ecn=True, exact_ecn_echo=True, handshake=True)),
    "red_step_marking": lambda: link(RedQueue(limit=50, min_th=20, max_th=20, q_weight=1.0,
                                              gentle=False, ecn=True, hard_drop=False)),
    **{f"sender_{v}": (lambda v=v: sender_net(SenderConfig(flow=0, dst=1, variant=v)))
       for v in LOSS_BASED},
    "sender_sack_keep": lambda: sender_net(SenderConfig(flow=0, dst=1, variant="sack",
                                                        sack_keep=True, limited_transmit=True)),
    "sender_cubic_on_sack_keep": lambda: variant_sender_net(
        "cubic", None, SenderConfig(flow=0, dst=1, variant="sack", sack_keep=True)),
    "sender_ecn_cwr_ns3": lambda: sender_net(SenderConfig(flow=0, dst=1, variant="newreno",
                                                          ecn=True, ecn_cwr="ns3")),
    "sender_paced_application": lambda: sender_net(SenderConfig(
        flow=0, dst=1, app_rate_bps=1e6, stop_s=5.0, total_segments=100)),
    "sender_westwood_plus": lambda: variant_sender_net(
        "westwood_plus", None, SenderConfig(flow=0, dst=1)),
    "sender_tcp_l": lambda: variant_sender_net("tcp_l", None, SenderConfig(flow=0, dst=1)),
    "sender_cubic": lambda: variant_sender_net("cubic", None, SenderConfig(flow=0, dst=1)),
    **{f"sender_dctcp_on_{base}": (lambda base=base: variant_sender_net(
        "dctcp", None, SenderConfig(flow=0, dst=1, variant=base, ecn=True)))
       for base in ("newreno", "sack")},
    **{f"sender_{v}": (lambda v=v: variant_sender_net(v, None, SenderConfig(flow=0, dst=1)))
       for v in ("vegas", "modified_vegas", "adaptive_vegas")},
    **{f"sender_{v}_on_{base}": (lambda v=v, base=base: variant_sender_net(
        v, None, SenderConfig(flow=0, dst=1, variant=base)))
       for v, base in (("vegas", "sack"), ("vegas", "reno"), ("westwood_plus", "sack"),
                       ("tcp_l", "sack"), ("cubic", "sack"))},
    **{f"sender_vegas_ns2_cut_on_{base}": (lambda base=base: vegas_sender_net(
        SenderConfig(flow=0, dst=1, variant=base), VegasLaw(loss_cut="ns2")))
       for base in ("newreno", "reno")},
    "sender_vegas_ns2_fine_timer": lambda: vegas_sender_net(
        SenderConfig(flow=0, dst=1, variant="reno"),
        VegasLaw(loss_cut="ns2", fine_timer=True, fix_level=0)),
    "sender_modified_vegas_skew": lambda: vegas_sender_net(
        SenderConfig(flow=0, dst=1), VegasLaw(kind="modified_vegas", skew_estimation=True)),
    "tcp_l_reporter": lambda: reporter_net(0.1, clock_rate=1.0001, clock_offset_s=0.5),
    "wireless_last_hop": lambda: wireless_interface_net(
        DropTailQueue(limit=10), Transmitter(11e6, 0.001, errors=ByteErrors(1e-5)), Radio(),
        ["p.seq >= 0", "p.seq < 0"]),
    "wireless_ackless": lambda: wireless_interface_net(
        SmallFirstQueue(limit=10), Transmitter(11e6, 0.001, errors=PacketErrors(0.1)),
        Radio(link_retransmissions=False), ["True"]),
    "wireless_no_medium_access": lambda: wireless_interface_net(
        DropTailQueue(limit=10), Transmitter(11e6, 0.001, errors=ByteErrors(1e-5)),
        Radio(medium_access=False), ["True"]),
}

#: cpncheck keeps records as tuples indexed by field position, so a field name at two
#: positions in two record colour sets (Pkt and Rcv both have echo, ece) is ambiguous to
#: it; CPN Tools types each #field by its record. The only problem cpncheck may report.
AMBIGUOUS_FIELD = re.compile(r"field '\w+' is at a different position in two record colour "
                             r"sets; #\w+ is ambiguous")


def inscriptions(path: Path) -> list[tuple[str, str]]:
    """(where, CPN ML text) of every inscription of the file, as cpncheck reads them."""
    found = []
    for page in CPNNet(str(path)).pages.values():
        for place in page["places"].values():
            if place["initmark"] and place["initmark"].strip():
                found.append((f"initial marking of {place['name']}", place["initmark"]))
        for trans in page["transitions"].values():
            where = f"transition {trans['name']}"
            guard = (trans["guard"] or "").strip()
            if guard:
                found.append((f"guard of {where}", guard))
            time = (trans["time"] or "").strip()
            if time:
                found.append((f"delay of {where}", re.sub(r"^@\+\+?", "", time)))
            code = (trans["code"] or "").strip()
            if code:
                action = re.search(r"action\s*(.*?)\s*;?\s*$", code, re.S)
                assert action, f"{where}: code segment without action: {code!r}"
                found.append((f"code of {where}", action.group(1)))
        for arc in page["arcs"]:
            # cpncheck splits only integer delays: split where CPN Tools does (tcpn's
            # split_delay follows check_output), then parse both parts with cpncheck
            value, operator, delay = split_delay(arc["expr"])
            found.append((f"arc {arc['expr'][:40]}", value))
            if operator:
                found.append((f"delay of arc {arc['expr'][:40]}", delay))
    return found


def check_with_cpncheck(path: Path) -> Declarations:
    """Every declaration and inscription of the file parses for cpncheck."""
    declarations = Declarations(str(path))
    assert [p for p in declarations.problems if not AMBIGUOUS_FIELD.fullmatch(p)] == []
    for where, text in inscriptions(path):
        try:
            parse_expression(text, declarations.symbols)
        except Exception as exc:  # any parse failure is the test's failure
            pytest.fail(f"{path.name}: {where}: cpncheck can't parse {text!r}: {exc}")
    return declarations


def check_structure(text: str) -> None:
    """Ids unique, every reference resolves (what CPN Tools' loader needs)."""
    root = ET.fromstring(text.split("\n", 2)[2])
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids))
    refs = [e.get("idref") for e in root.iter() if e.get("idref")]
    refs += [e.get(k) for e in root.iter("instance") for k in ("page", "trans") if e.get(k)]
    refs += [e.get("subpage") for e in root.iter("subst")]
    assert set(refs) <= set(ids)


# -- every component exports, and the file is valid -------------------------------------------
@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_component_exports_to_a_file_cpncheck_and_read_cpn_accept(name, tmp_path):
    net = COMPONENTS[name]()
    path = write_cpn(net, tmp_path / f"{name}.cpn", layout="grid")
    text = path.read_text("iso-8859-1")
    check_structure(text)
    check_with_cpncheck(path)
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert set(imported.net.transitions) == set(net.transitions)
    assert set(imported.net.places) == set(net.places)


def test_helpers_a_sender_calls_become_declarations_with_typed_parameters(tmp_path):
    text = to_cpn(sender_net(SenderConfig(flow=0, dst=1, variant="sack")), layout="grid")
    # rto_after is no declaration of the net: the action of new_ack calls it in its module
    assert "fun rto_after (r:Rtt, sample:REAL, min_rto:REAL, max_rto:REAL, g:REAL) = " \
        in text
    # loops become recursion (ml_forms): RFC 6675 SetPipe over the scoreboard
    assert "fun sack_pipe (t:Tcb, dupthresh:INT) = pipe_from(t, #una(t), dupthresh);" in text
    # an SML reserved word as a parameter is renamed
    assert "fun add_range (runs:Runs, start:INT, end_:INT) = " in text


def test_declared_functions_compute_in_cpncheck_what_the_helpers_compute(tmp_path):
    path = write_cpn(COMPONENTS["receiver_sack_ecn_skew"](), tmp_path / "r.cpn", layout="grid")
    ml = check_with_cpncheck(path).globals
    runs: tuple[tuple[int, int], ...] = ()
    for seq in (5, 9, 3, 6, 4, 12, 10, 11, 3):
        assert tuple(ml["add_segment"]((runs, seq))) == add_segment(runs, seq)
        runs = add_segment(runs, seq)
    for seq in range(2, 14):
        assert ml["covers"]((runs, seq)) == packets.covers(runs, seq)
        assert ml["advance"]((seq, runs)) == packets.advance(seq, runs)
        assert tuple(ml["runs_above"]((runs, seq))) == packets.runs_above(runs, seq)
        assert tuple(ml["sack_blocks"]((runs, seq))) == packets.sack_blocks(runs, seq)
    path = write_cpn(COMPONENTS["red_ecn"](), tmp_path / "red.cpn", layout="grid")
    ml = check_with_cpncheck(path).globals
    cases = ((0.0, 0, 0, 0, -1.0, 0.5), (8.0, 3, 1, 10, -1.0, 0.0), (10.0, 149, 1, 10, -1.0, 0.3),
             (20.0, 5, 1, 40, -1.0, 0.9), (9.0, 2, 1, 12, 0.05, 0.01), (35.0, 2, 1, 50, -1.0, 0.5))
    for avg, count, old, queued, idle, u in cases:
        args = (avg, count, old, queued, idle, u, 5.0, 15.0, 0.02, 0.002, True, True, 250.0,
                True, True, True)
        got = ml["red_decision"](args)
        assert got[:3] == pytest.approx(red_decision(*args)[:3])
        assert str(got[3]) == red_decision(*args)[3]
    path = write_cpn(COMPONENTS["sender_newreno"](), tmp_path / "s.cpn", layout="grid")
    ml = check_with_cpncheck(path).globals
    for cwnd, ssthresh, acked in ((2.0, 8.0, 1), (8.0, 8.0, 1), (7.0, 8.0, 2), (3.5, 2.0, 4)):
        assert ml["grow"]((cwnd, ssthresh, acked)) == grow(cwnd, ssthresh, acked)
    # a timeout that keeps the scoreboard: the segments sent again and not SACKed
    path = write_cpn(COMPONENTS["sender_sack_keep"](), tmp_path / "k.cpn", layout="grid")
    ml = check_with_cpncheck(path).globals
    runs = ((12, 14), (16, 17), (20, 25))
    for una, nxt in ((10, 10), (10, 13), (10, 16), (12, 21), (14, 30), (20, 25)):
        t = Tcb(4.0, 8.0, una, nxt, 30, 0, 30, False, 0, False,
                tuple(r for r in runs if r[1] > una), una, False, 0)
        assert ml["resent_flight"](t) == resent_flight(t)


def _tally(xs):
    total = 0
    for x in xs:
        total += x
    return total


def _scaled(x, k=2):
    return x * k


@pytest.mark.parametrize(("helper", "construct"), [
    (_tally, r"declaration _tally: statement For \(line \d+\)"),
    (_scaled, r"declaration _scaled: only plain positional parameters"),
])
def test_what_cpn_ml_cannot_say_is_refused_naming_the_declaration_and_construct(helper,
                                                                                 construct):
    # a helper with a loop (and no CPN ML form) or with default parameters
    net = PetriNet("refused")
    net.add_place(Place("p", LIST_OF_INTS, initial=[(1, 2)]))
    net.declare(helper=helper)
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "xs")
    net.add_output("p", "t", "(helper(xs),)" if helper is _tally else "xs")
    if helper is _scaled:
        net.add_transition(Transition("u"))
        net.add_read("p", "u", "xs")
        net.transitions["u"] = dataclasses.replace(net.transitions["u"],
                                                   guard="helper(len(xs)) > 0")
    with pytest.raises(InputError, match=construct):
        to_cpn(net, layout="grid")


def test_vegas_helpers_compute_in_cpncheck_what_python_computes(tmp_path):
    path = write_cpn(COMPONENTS["sender_modified_vegas_skew"](), tmp_path / "v.cpn",
                     layout="grid")
    ml = check_with_cpncheck(path).globals
    for args in ((10.0, 5.0, 0.1, 0.105, 1.0, 3.0, 1.0), (10.0, 9.5, 0.1, 0.15, 1.0, 3.0, 1.0),
                 (10.0, 64.0, 0.1, 0.125, 1.0, 3.0, 1.0), (20.0, 100.0, 0.1, 0.1, 1.0, 3.0, 1.0),
                 (20.0, 10.0, 0.1, 0.2, 10.0, 10.0, 1.0)):
        assert tuple(ml["vegas_decision"](args)) == vegas_decision(*args)
    hull: tuple[tuple[float, float], ...] = ()
    ml_hull: tuple[tuple[float, float], ...] = ()
    for k, (x, y) in enumerate(((0.5, 2.0), (1.0, 1.5), (1.5, 1.75), (2.0, 1.0), (2.5, 3.0),
                                (3.0, 1.25))):
        hull = add_hull_point(hull, x, y)
        ml_hull = tuple(tuple(p) for p in ml["add_hull_point"]((ml_hull, x, y)))
        assert ml_hull == hull, k
        assert ml["hull_floor"]((hull, 0.125)) == hull_floor(hull, 0.125)
        for mean in (0.0, 1.2, 2.2, 4.0):
            assert ml["mst_slope"]((hull, mean)) == mst_slope(hull, mean)


def test_ns2_vegas_cut_computes_in_cpncheck_what_python_computes(tmp_path):
    path = write_cpn(COMPONENTS["sender_vegas_ns2_cut_on_newreno"](), tmp_path / "v.cpn",
                     layout="grid")
    ml = check_with_cpncheck(path).globals
    fields = {name: 0 for name, _ in TCB.fields}
    record = vegas_sent(vegas_sent(vegas_start(), 7, 0.5, True), 9, 0.75, True)
    for cwnd, una in ((2.9, 7), (3.5, 7), (4.0, 7), (9.9, 7), (9.9, 8), (17.0, 9), (63.5, 5)):
        t = Tcb(**{**fields, "cwnd": cwnd, "ssthresh": 5.0, "una": una, "nxt": 12})
        for v in (record, record._replace(cut_seq=una + 1), record._replace(cut_seq=una)):
            # declared records are tuples in field order in cpncheck, as NamedTuples are
            assert ml["ns2_vegas_window"]((v, t)) == ns2_vegas_window(v, t), (cwnd, una, v)
            assert ml["ns2_vegas_cuts"]((v, t)) == ns2_vegas_cuts(v, t), (cwnd, una, v)


def test_ns2_vegas_fine_timer_computes_in_cpncheck_what_python_computes(tmp_path):
    path = write_cpn(COMPONENTS["sender_vegas_ns2_fine_timer"](), tmp_path / "v.cpn",
                     layout="grid")
    ml = check_with_cpncheck(path).globals
    fields = {name: 0 for name, _ in TCB.fields}
    record = fine_sent(fine_sent(fine_sent(vegas_start(), 7, 0.5, True), 9, 0.75, True),
                       7, 1.25, False)
    records = (record, record._replace(fine_srtt=0.08, fine_rttvar=0.02, fine_rto=0.1,
                                       worried=2))
    for v in records:
        for seq, now in ((7, 1.3), (7, 1.36), (9, 0.8), (9, 0.9), (10, 1.0), (8, 2.0)):
            assert ml["fine_timed"]((v, seq + 1, now)) == fine_timed(v, seq + 1, now)
            assert ml["fine_expired"]((v, seq, now)) == fine_expired(v, seq, now)
            assert ml["worried_resend"]((v, seq, now, 10)) == worried_resend(v, seq, now, 10)
        for cwnd, una in ((19.0, 7), (9.5, 9), (3.0, 8)):
            t = Tcb(**{**fields, "cwnd": cwnd, "una": una, "nxt": 12})
            assert ml["fine_retransmitted"]((v, v, t)) == fine_retransmitted(v, v, t)
            assert ml["fine_inflated"]((t, 16)) == fine_inflated(t, 16)
    for cwnd, ssthresh, dupacks in ((27.0, 24.0, 3), (28.0, 24.0, 4), (20.0, 24.0, 5)):
        t = Tcb(**{**fields, "cwnd": cwnd, "ssthresh": ssthresh, "dupacks": dupacks})
        deflated = t._replace(cwnd=ssthresh, dupacks=0)
        assert ml["ns2_exit_window"]((t, deflated, 4)) == ns2_exit_window(t, deflated, 4)


# -- the CPN ML forms equal the helpers ------------------------------------------------------
segments = st.lists(st.integers(0, 40), max_size=25)


def runs_of(seqs: list[int]) -> tuple[tuple[int, int], ...]:
    runs: tuple[tuple[int, int], ...] = ()
    for seq in seqs:
        runs = add_segment(runs, seq)
    return runs


@settings(max_examples=150, deadline=None)
@given(segments, st.integers(0, 45), segments, st.integers(0, 45))
def test_ml_forms_equal_the_helpers(seqs, seq, other, una):
    runs, blocks = runs_of(seqs), runs_of(other)
    assert ml_forms.add_segment_ml(runs, seq) == add_segment(runs, seq)
    assert ml_forms.covers_ml(runs, seq) == packets.covers(runs, seq)
    assert ml_forms.advance_ml(seq, runs) == packets.advance(seq, runs)
    assert ml_forms.runs_above_ml(runs, seq) == packets.runs_above(runs, seq)
    assert ml_forms.sack_blocks_ml(runs, seq) == packets.sack_blocks(runs, seq)
    assert ml_forms.merge_sack_ml(runs, blocks[:4], una) == packets.merge_sack(
        runs, blocks[:4], una)
    from tcpn.models.components.sender import sack_hole, sack_pipe, sacked_count
    high = max([una, seq, *(e for _, e in runs)]) + 2
    fields = {name: 0 for name, _ in TCB.fields}
    fields.update(cwnd=10.0, ssthresh=5.0, una=una, nxt=high, high=high, inrec=True,
                  sacked=tuple(r for r in runs if r[0] > una), highrxt=min(seq, high))
    t = Tcb(**fields)
    assert ml_forms.sack_pipe_ml(t, 3) == sack_pipe(t, 3)
    assert ml_forms.sack_hole_ml(t, 3) == sack_hole(t, 3)
    assert ml_forms.sacked_count_ml(runs, min(seq, una), max(seq, una)) == sacked_count(
        runs, min(seq, una), max(seq, una))


@settings(max_examples=150, deadline=None)
@given(st.floats(0, 1), st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 9), st.integers(0, 50), st.integers(0, 50)),
                max_size=6), st.integers(-1, 10), st.integers(0, 10))
def test_ml_forms_of_wireless_and_tcp_l_equal_the_helpers(per, u, reports, held, ack_ts):
    assert ml_forms.attempts_ml(per, len(u), u) == attempts(per, len(u), u)
    reports = tuple(sorted((float(t), s, f) for t, s, f in reports))
    state = TCP_L.record_type(10, 1, 5, 0, float(held))
    assert ml_forms.tcp_l_adopt_ml(state, reports, float(ack_ts)) == tcp_l_adopt(
        state, reports, float(ack_ts))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0, 1, exclude_max=True), min_size=2, max_size=16),
       st.integers(0, 10), st.sampled_from([(31, 1023), (15, 1023), (7, 7)]))
def test_ml_forms_of_the_80211_medium_access_equal_the_helpers(u, retry, cw):
    assert ml_forms.backoff_slots_ml(u[0], retry, *cw) == backoff_slots(u[0], retry, *cw)


def outcome(function, *args):
    """What ``function(*args)`` returns, or the type of what it raises."""
    try:
        return function(*args)
    except ArithmeticError as exc:
        return type(exc)


points = st.lists(st.tuples(st.integers(0, 30), st.integers(-20, 20)), min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(points, st.integers(-2, 32), st.integers(-4, 4))
def test_ml_forms_of_vegas_equal_the_helpers(xy, probe, slope):
    hull: tuple[tuple[float, float], ...] = ()
    sent: tuple[tuple[int, float], ...] = ()
    for x, y in xy:  # the hulls and send records the sender builds, sample by sample
        new = add_hull_point(hull, x / 4, y / 8)
        assert ml_forms.add_hull_point_ml(hull, x / 4, y / 8) == new
        hull = new
        sent = (*sent, (x, y / 8)) if not sent or x > sent[-1][0] else sent
    assert ml_forms.hull_floor_ml(hull, slope / 16) == hull_floor(hull, slope / 16)
    # a vertical last edge (two samples sent at the same time) divides by zero both ways
    assert outcome(ml_forms.mst_slope_ml, hull, probe / 4) == outcome(mst_slope, hull,
                                                                      probe / 4)
    v = vegas_start()._replace(sent=sent)
    assert ml_forms.sent_time_ml(v, probe) == sent_time(v, probe)
    assert ml_forms.forget_segment_ml(sent, probe) == forget_segment(sent, probe)
    assert ml_forms.drop_acked_ml(sent, probe) == drop_acked(sent, probe)
    v = v._replace(resent=tuple((s, t + 1.0) for s, t in sent[::2]), sent=sent[1::2])
    assert ml_forms.last_sent_ml(v, probe) == last_sent(v, probe)


# -- round trip: the imported net behaves like the original ----------------------------------
class Firings(Monitor):
    """(time, transition) of every firing."""

    def __init__(self) -> None:
        super().__init__("firings")
        self.rows: list[tuple[float, str]] = []

    def observe(self, sim, transition, binding) -> None:
        self.rows.append((round(sim.now, 9), transition.name))

    def result(self) -> list[tuple[float, str]]:
        return self.rows


def test_dumbbell_round_trip_fires_the_same_sequence_for_a_seed():
    scenario = dumbbell(pairs=1, horizon_s=1.0)
    composed = compose(scenario, scenario.concrete_flows(1))
    imported = read_cpn(to_cpn(composed.net, layout="grid"))
    assert imported.complete, imported.report.text()
    original, again = Firings(), Firings()
    simulate(composed.net, seed=3, until=0.2, monitors=[original])
    simulate(imported.net, seed=3, until=0.2, monitors=[again])
    assert len(original.rows) > 500  # the first window of the flow, and its ACKs
    assert again.rows == original.rows


def test_vegas_family_round_trip_fires_the_same_sequence_for_a_seed():
    # Modified Vegas estimating a skewed receiver clock (from 0.3 s of samples, so that the
    # hulls and the drift estimate are in play), Vegas and adaptive Vegas share a link
    scenario = parse_scenario("""
name: vegas_round_trip
links:
- {a: S, b: R, rate_bps: 2.0e6, delay_s: 0.01, queue: {kind: drop_tail, limit: 20}}
- {a: R, b: D, rate_bps: 1.0e7, delay_s: 0.001}
tcp: {timestamps: true, sack: false}
flows:
- id: m
  src: S
  dst: D
  variant: modified_vegas
  params: {skew_estimation: true, skew_min_span_s: 0.3}
  receiver_clock_offset_s: 7.25
  receiver_clock_skew: 0.001
- {id: v, src: S, dst: D, variant: vegas, start_s: 0.2, params: {alpha: 1, beta: 3, gamma: 1}}
- {id: a, src: S, dst: D, variant: adaptive_vegas, start_s: 0.3, params: {weight: 0.25}}
horizon_s: 2.0
""")
    composed = compose(scenario, scenario.concrete_flows(1))
    imported = read_cpn(to_cpn(composed.net, layout="grid"))
    assert imported.complete, imported.report.text()
    original, again = Firings(), Firings()
    first = simulate(composed.net, seed=5, until=1.0, monitors=[original])
    second = simulate(imported.net, seed=5, until=1.0, monitors=[again])
    assert len(original.rows) > 2000
    assert again.rows == original.rows
    (state,) = (token.value for token in first.marking["flow0.snd.vegas"])
    assert state.skew != 0.0 and len(state.bhull) >= 2  # the estimate was in play
    for flow in range(3):  # the Vegas records end the same (places keep their names)
        place = f"flow{flow}.snd.vegas"
        assert second.marking[place] == first.marking[place]


# -- the state space of one small transfer ---------------------------------------------------
def transfer(segments: int, lost: tuple[int, ...] = ()) -> PetriNet:
    """One NewReno sender (fixed transfer, initial window 10), a 1 Mbit/s 10 ms link each
    way with a drop-tail queue, and a receiver that ACKs every segment; ``lost``: the data
    packets the forward link loses (0 = the first to cross)."""
    net = PetriNet("transfer")
    for name in ("data_in", "acks_in", "to_rcv", "to_snd"):
        net.add_place(Place(name, PACKET))
    snd = sender_net(SenderConfig(flow=0, dst=1, total_segments=segments, initial_cwnd=10.0))
    first = 1 if "connect" in snd.transitions else 0  # a SYN crosses first
    errors = ListErrors(tuple(k + first for k in lost)) if lost else None
    net.add_module(snd, "snd", {"out": "data_in", "acks": "to_snd"})
    net.add_module(interface_net(DropTailQueue(limit=10), Transmitter(1e6, 0.01, errors=errors),
                                 ["True"], "fwd"), "fwd", {"arrivals": "data_in", "out0": "to_rcv"})
    net.add_module(interface_net(DropTailQueue(limit=10), Transmitter(1e6, 0.01), ["True"],
                                 "rev"), "rev", {"arrivals": "acks_in", "out0": "to_snd"})
    net.add_module(receiver_net(ReceiverConfig(flow=0, src=0, delack_count=1)), "rcv",
                   {"data": "to_rcv", "out": "acks_in"})
    return net


def fired(space) -> list[str]:
    return sorted(e.transition for s in range(len(space)) for e in space.edges(s))


@pytest.mark.parametrize(("segments", "lost", "path", "firings"), [
    # open, 3 sends; forward: the first cuts through the idle line, the two others queue
    # and leave (2 + 2); the receiver ACKs each (3), the ACKs cut through (3), 3 new ACKs
    (3, (), "new_ack", 1 + 3 + (1 + 2 + 2) + 3 + 3 + 3),
    # segment 1 lost: one duplicate ACK (< 3), so the RTO expires and segment 1 is sent
    # again with cwnd 1, cutting through; its ACK covers segment 2 (buffered)
    (3, (1,), "timeout", 1 + 4 + (2 + 2 + 2) + 3 + 3 + (1 + 1 + 1 + 1)),
    # segment 0 of 5 lost: 4 duplicate ACKs, fast retransmit on the third, recovery
    # inflation on the fourth, the full ACK ends the recovery
    # (the retransmission is fast_retransmit's own output: 5 sends)
    (5, (0,), "fast_retransmit", 1 + 5 + (2 + 4 + 4) + 5 + 5 + (2 + 1 + 1 + 1)),
])
def test_transfer_state_space_always_completes(segments, lost, path, firings):
    space = explore(transfer(segments, lost), clock="absolute")
    assert space.complete
    dead = space.dead_markings()
    # deterministic delays and priorities leave one enabled binding per state: one chain
    assert (len(space), space.n_edges, len(dead)) == (firings + 1, firings, 1)
    final = space.marking(dead[0])
    (tcb,), (rcv,) = final["snd.tcb"], final["rcv.rcv"]
    assert tcb.value.una == tcb.value.nxt == segments and rcv.value.nxt == segments
    assert not final["snd.timer"] and not final["to_snd"] and not final["to_rcv"]
    names = fired(space)
    assert f"snd.{path}" in names
    assert ("snd.timeout" in names) == (path == "timeout")
    # the file, read back, has the same state space
    again = explore(read_cpn(to_cpn(transfer(segments, lost), layout="grid")).net,
                    clock="absolute")
    assert (len(again), again.n_edges, len(again.dead_markings())) == (
        len(space), space.n_edges, 1)
    assert fired(again) == names
