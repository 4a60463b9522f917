"""Type-check a CPN Tools file (.cpn) with the real SML/NJ compiler, naming what fails.

CPN Tools' simulator is SML/NJ: it compiles a net's declarations and inscriptions as SML
and rejects what doesn't type-check. tcpn's exporter infers the types it writes; this
module checks them with ``sml`` (SML/NJ 110.79 here, ``apt-get install smlnj``). The file
becomes an SML program made of

* a prelude emulating the part of the CPN ML environment that CPN Tools gives every net
  (CPN Tools help, "CPN ML": multisets and timed multisets; ``../shared/design/cpn-format.md``
  section 6, read in the simulator's ``tms.sml``): ``'a ms`` is ``'a list`` (so ``[]`` is
  the empty multiset, as in CPN Tools), ``n`c : 'a ms``, ``++``/``--``, ``empty``,
  ``c@t : 'a * time`` (``@`` is the timestamp, ``^^`` list concatenation, as in CPN ML),
  ``'a tms = ('a * time) ms`` with ``+++``, ``ms @+ d`` (``d : int``) and ``ms @++ d``
  (``d : ModelTime.time``) giving a timed multiset, ``time()`` and ``ModelTime``
  (``real`` when the file sets ``realtimestamp``, else ``IntInf.int``), and the random
  functions ``uniform``, ``exponential``, ``normal``, ``discrete``, ``bernoulli``,
  ``erlang`` with CPN Tools' types;
* every declaration of the ``globbox`` in file order: a colour set becomes an SML type
  (``int with a..b`` is ``int``, ``record`` a record type, ``list`` a list, ``product`` a
  tuple, ``with a | b`` a datatype; ``timed`` colour sets are their untimed type, as CPN
  Tools types tokens), ``var`` is recorded, ``val``/``fun`` are compiled verbatim;
* every inscription as a closed function of the variables it mentions, typed by their
  colour sets: a guard is ``bool list`` or ``bool``; an arc (split at its first top-level
  ``@+``/``@++`` as CPN Tools' ``check_output`` does) is a multiset, a single colour or a
  timed multiset of its place's colour set, its delay an ``int`` (``@+``) or a time
  (``@++``); a transition delay likewise; a priority an ``int``; an initial marking a
  closed colour, multiset or timed multiset; a code segment
  ``fn (inputs) => action : (outputs)``, seeing only its input variables.

Each declaration and inscription is compiled on its own (``use`` of a small file, the
error caught), so one error doesn't hide the next and each is reported with the page and
the place, transition or declaration it belongs to.

What this approximates: values and ranges are not checked (``int with 0..3`` is just
``int``, as CPN Tools' *types* are; ranges are checked when tokens are made), nor are
colour-set structures (``Pkt.all()``, ``Pkt.legal``: not in the prelude, reported as
unbound if used), monitors, channels and the binding rules (free variables, variables
bound by input arcs). The random functions return a fixed value: only their types
matter here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree.ElementTree import Element

from defusedxml.ElementTree import fromstring

from tcpn.errors import InputError, TcpnError
from tcpn.petrinets.exchange.cpnml import split_delay

__all__ = ["SmlError", "SmlNotInstalledError", "SmlReport", "check_many_with_sml",
           "check_with_sml"]


class SmlNotInstalledError(TcpnError):
    """SML/NJ's ``sml`` is not on the PATH."""


@dataclass(frozen=True)
class SmlError:
    """One declaration or inscription SML/NJ rejects.

    ``where`` names it (``page R1_R2, transition enqueue: guard``, ``declaration fun grow``),
    ``text`` is its CPN ML, ``message`` SML/NJ's error for each reading tried.
    """

    where: str
    text: str
    message: str


@dataclass
class SmlReport:
    """What ``sml`` said about a file: the errors, how much was checked, the program."""

    errors: list[SmlError]
    checked: int
    program: str = field(repr=False)

    @property
    def ok(self) -> bool:
        """True when every declaration and inscription type-checks."""
        return not self.errors

    def causes(self) -> list[SmlError]:
        """The errors left when those only due to an earlier failed declaration are dropped.

        An error whose every complaint is ``unbound variable or constructor: f``, with ``f``
        a ``fun``/``val`` that failed before it, follows from that failure.
        """
        failed: set[str] = set()
        kept = []
        for error in self.errors:
            said = [line for line in error.message.splitlines() if "Error:" in line]
            unbound = [re.search(r"unbound variable or constructor: (\S+)$", line)
                       for line in said]
            if not (said and all(u and u.group(1) in failed for u in unbound)):
                kept.append(error)
            declared = re.match(r"declaration (?:fun|val) (\w+)", error.where)
            if declared:
                failed.add(declared.group(1))
        return kept

    def text(self) -> str:
        """The errors, one block each, or a line saying all is well."""
        if self.ok:
            return f"SML/NJ: {self.checked} declarations and inscriptions type-check"
        blocks = [f"{e.where}: {e.text}\n  {e.message}" for e in self.errors]
        return f"SML/NJ: {len(self.errors)} of {self.checked} fail\n" + "\n".join(blocks)


def _prelude(time_type: str, time_zero: str) -> str:
    return f"""
infix 9 @; infix 8 `; infix 7 @+ @++; infix 6 ++ -- +++; infixr 5 ^^;
fun a ^^ b = List.@ (a, b);
type time = {time_type};
structure ModelTime = struct
  type time = time
  val zero : time = {time_zero}
  fun toString (t : time) = ""
  fun fromString (s : string) : time option = NONE
end;
type 'a ms = 'a list;
type 'a tms = ('a * time) list;
val empty = [];
fun (n : int) ` (c : 'a) : 'a ms = List.tabulate (n, fn _ => c);
fun (a : 'a ms) ++ (b : 'a ms) : 'a ms = List.@ (a, b);
fun (a : 'a ms) -- (b : 'a ms) : 'a ms = a;
fun (c : 'a) @ (t : time) : 'a * time = (c, t);
fun (a : 'a tms) +++ (b : 'a tms) : 'a tms = List.@ (a, b);
fun (m : 'a ms) @+ (d : int) : 'a tms = map (fn c => (c, ModelTime.zero)) m;
fun (m : 'a ms) @++ (d : time) : 'a tms = map (fn c => (c, d)) m;
fun time () : time = ModelTime.zero;
fun intTime () : int = 0;
fun uniform (a : real, b : real) : real = a;
fun exponential (r : real) : real = r;
fun normal (m : real, v : real) : real = m;
fun erlang (n : int, r : real) : real = r;
fun discrete (a : int, b : int) : int = a;
fun bernoulli (p : real) : int = 0;
val P_HIGH = 100; val P_NORMAL = 1000; val P_LOW = 10000;
"""


_BASIC = {"unit": "unit", "bool": "bool", "int": "int", "intinf": "IntInf.int",
          "time": "time", "real": "real", "string": "string"}


def _sml_type(color: Element) -> str:
    """The SML type (or datatype body, prefixed ``datatype``) of a ``<color>`` element."""
    name = color.findtext("id", "").strip()
    kind = next(c for c in color if c.tag not in ("id", "declare", "timed", "layout"))
    ids = [c.text.strip() for c in kind.findall("id") if c.text]
    if kind.tag in _BASIC:
        return _BASIC[kind.tag]
    if kind.tag == "enum":
        return "datatype " + " | ".join(ids)
    if kind.tag == "index":
        return f"datatype {ids[0]} of int"
    if kind.tag == "product":
        return " * ".join(ids)
    if kind.tag == "record":
        fields = [[i.text.strip() for i in f.findall("id") if i.text]
                  for f in kind.findall("recordfield")]
        return "{" + ", ".join(f"{f}: {t}" for f, t in fields) + "}"
    if kind.tag == "list":
        return f"{ids[-1]} list"
    if kind.tag in ("alias", "subset"):
        return ids[0]
    if kind.tag == "union":
        parts = []
        for f in kind.findall("unionfield"):
            label = f.findtext("id", "").strip()
            typ = f.findtext("type/id")
            parts.append(f"{label} of {typ.strip()}" if typ else label)
        return "datatype " + " | ".join(parts)
    raise InputError(f"colour set {name}: <{kind.tag}> has no SML form here")


@dataclass
class _Item:
    where: str
    text: str
    readings: list[tuple[str, str]]  # (label, SML source); passes if any reading compiles


_DELAY = re.compile(r"^\s*(@\+\+?)\s*(.*?)\s*$", re.S)
_CODE = re.compile(r"^\s*(?:input\s*\((?P<inp>[^)]*)\)\s*;)?\s*"
                   r"(?:output\s*\((?P<out>[^)]*)\)\s*;)?\s*action\s*(?P<act>.*?)\s*;?\s*$",
                   re.S)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


class _Builder:
    """Turns the parsed file into the items to compile, in order."""

    def __init__(self, root: Element) -> None:
        self.vars: dict[str, str] = {}
        self.items: list[_Item] = []
        self.timed: set[str] = set()
        for element in root.iter():
            if element.tag in ("color", "var", "ml", "globref"):
                self._declaration(element)
        self.declarations = len(self.items)
        for page in root.iter("page"):
            self._page(page)

    def _declaration(self, e: Element) -> None:
        if e.tag == "color":
            name = e.findtext("id", "").strip()
            if e.find("timed") is not None:
                self.timed.add(name)
            body = _sml_type(e)
            sml = (f"datatype {name} = {body[9:]};" if body.startswith("datatype ")
                   else f"type {name} = {body};")
            self.items.append(_Item(f"colour set {name}", _layout(e), [("", sml)]))
        elif e.tag == "var":
            typ = e.findtext("type/id", "").strip()
            for v in e.findall("id"):
                self.vars[(v.text or "").strip()] = typ
        elif e.tag == "globref":
            name = e.findtext("id", "").strip()
            value = e.findtext("ml", "").strip()
            self.items.append(_Item(f"globref {name}", value,
                                    [("", f"val {name} = ref ({value});")]))
        else:
            text = (e.text or "").strip()
            if text:
                head = " ".join(text.split()[:2])
                self.items.append(_Item(f"declaration {head}", text, [("", text)]))

    def _fn(self, text: str, typ: str | None, bound: list[str] | None = None) -> str:
        """``val _ = fn (x : T, ...) => ((text) : typ);`` over the variables it mentions."""
        names = bound if bound is not None else [
            v for v in self.vars if re.search(rf"(?<![\w'#.]){re.escape(v)}(?![\w'])", text)]
        params = ", ".join(f"{v} : {self.vars[v]}" for v in names if v in self.vars)
        body = f"({text})" if typ is None else f"(({text}) : {typ})"
        return f"val _ = fn ({params}) => {body};"

    def _add(self, where: str, text: str, types: list[str | None],
             bound: list[str] | None = None) -> None:
        readings = [(t or "", self._fn(text, t, bound)) for t in types]
        self.items.append(_Item(where, text, readings))

    def _page(self, page: Element) -> None:
        attr = page.find("pageattr")
        pname = page.get("id", "") if attr is None else attr.get("name", "")
        places: dict[str, tuple[str, str]] = {}
        for place in page.findall("place"):
            name = place.findtext("text", "").strip()
            colour = (place.findtext("type/text") or "").strip() or "UNIT"
            places[place.get("id", "")] = (name, colour)
            mark = (place.findtext("initmark/text") or "").strip()
            if mark:
                self._add(f"page {pname}, place {name}: initial marking", mark,
                          self._token_types(colour, mark), bound=[])
        transitions: dict[str, str] = {}
        substituted = set()
        for trans in page.findall("trans"):
            name = trans.findtext("text", "").strip()
            transitions[trans.get("id", "")] = name
            if trans.find("subst") is not None:
                substituted.add(trans.get("id", ""))
            self._transition(pname, name, trans)
        for arc in page.findall("arc"):
            # arcs of a substitution transition join sockets to ports: no inscription
            if _end(arc, "transend") not in substituted:
                self._arc(pname, arc, places, transitions)

    def _token_types(self, colour: str, text: str) -> list[str | None]:
        """A multiset, a single colour or a timed multiset, the likeliest tried first."""
        types: list[str | None] = [f"{colour} ms", colour]
        if not re.search(r"`|\bempty\b|\+\+", text):
            types.reverse()
        return [*types, f"{colour} tms"] if colour in self.timed else types

    def _transition(self, pname: str, name: str, trans: Element) -> None:
        where = f"page {pname}, transition {name}"
        guard = (trans.findtext("cond/text") or "").strip()
        if guard:
            self._add(f"{where}: guard", guard, ["bool list", "bool"])
        delay = (trans.findtext("time/text") or "").strip()
        if delay:
            match = _DELAY.match(delay)
            if match is None:
                self.items.append(_Item(f"{where}: delay", delay, [
                    ("", f"val _ = (* a delay must start with @+ or @++ *) ({delay}) : int;")]))
            else:
                self._add(f"{where}: delay", match.group(2),
                          ["int" if match.group(1) == "@+" else "time"])
        priority = (trans.findtext("priority/text") or "").strip()
        if priority:
            self._add(f"{where}: priority", priority, ["int"], bound=[])
        code = (trans.findtext("code/text") or "").strip()
        if code:
            match = _CODE.match(code)
            if match is None:
                raise InputError(f"{where}: code segment is not input (..); output (..); "
                                 f"action ..;: {code!r}")
            inputs = _names(match.group("inp") or "")
            outputs = _names(match.group("out") or "")
            missing = [v for v in inputs + outputs if v not in self.vars]
            if missing:
                raise InputError(f"{where}: code segment names undeclared variables {missing}")
            out = (" * ".join(self.vars[v] for v in outputs) if outputs else None)
            self._add(f"{where}: code segment", match.group("act"), [out], bound=inputs)

    def _arc(self, pname: str, arc: Element, places: dict[str, tuple[str, str]],
             transitions: dict[str, str]) -> None:
        place, colour = places.get(_end(arc, "placeend"), ("?", "UNIT"))
        trans = transitions.get(_end(arc, "transend"), "?")
        orientation = arc.get("orientation", "")
        ends = f"{trans} -> {place}" if orientation == "TtoP" else f"{place} -> {trans}"
        where = f"page {pname}, arc {ends} ({orientation})"
        text = (arc.findtext("annot/text") or "").strip()
        if not text:
            if colour != "UNIT":
                self.items.append(_Item(where, "", [
                    ("", f"val _ = (* empty inscription, place of {colour} *) () : {colour};")]))
            return
        value, operator, delay = split_delay(text)
        self._add(where, value, self._token_types(colour, value))
        if operator:
            self._add(f"{where}: delay", delay, ["int" if operator == "@+" else "time"])


def _end(arc: Element, tag: str) -> str:
    end = arc.find(tag)
    return "" if end is None else end.get("idref", "")


def _layout(e: Element) -> str:
    return " ".join((e.findtext("layout") or e.findtext("id") or "").split())


def _read(cpn_text_or_path: str | Path) -> Element:
    if isinstance(cpn_text_or_path, Path) or "<" not in cpn_text_or_path:
        text = Path(cpn_text_or_path).read_text("iso-8859-1")
    else:
        text = cpn_text_or_path
    try:
        root = fromstring(text.encode("iso-8859-1", "replace") if "encoding=" in text[:100]
                          else text)
    except Exception as exc:
        raise InputError(f"not a readable CPN file: {exc}") from exc
    if root.find("cpnet") is None:
        raise InputError("not a CPN Tools file: no <cpnet> element")
    return root


_BATCH = 200
_DRIVER = """
fun tcpn_try (i, []) = ()
  | tcpn_try (i, (f, r) :: rest) = (use f; print ("\\n@@OK " ^ i ^ " " ^ r ^ "\\n"))
      handle _ => (print ("\\n@@FAIL " ^ i ^ " " ^ r ^ "\\n"); tcpn_try (i, rest));
fun tcpn_batch (f, items) =
  (use f; app (fn (i, _) => print ("\\n@@OK " ^ i ^ " 0\\n")) items)
  handle _ => (print "\\n@@BATCH\\n"; app tcpn_try items);
"""
_MARK = re.compile(r"^@@(OK|FAIL) (\d+) (\d+)$")


def check_with_sml(cpn_text_or_path: str | Path, *, sml: str = "sml",
                   timeout_s: float = 600.0) -> SmlReport:
    """Type-check every declaration and inscription of a .cpn file with SML/NJ.

    Raises :class:`SmlNotInstalledError` when ``sml`` is missing, ``InputError`` when the
    file isn't a CPN Tools file.

    >>> from tcpn.petrinets import INT, PetriNet, Place, Transition
    >>> from tcpn.petrinets.exchange.cpn_export import to_cpn
    >>> net = PetriNet("n")
    >>> net.add_place(Place("p", INT, initial=[1]))
    >>> net.add_transition(Transition("t", guard="x > 0"))
    >>> net.add_input("p", "t", "x")
    >>> net.add_output("p", "t", "x + 1")
    >>> report = check_with_sml(to_cpn(net, layout="grid"))
    >>> report.ok, report.checked > 10
    (True, True)
    >>> bad = check_with_sml(to_cpn(net, layout="grid").replace("x + 1", "x + 1.0"))
    >>> [e.where for e in bad.errors]
    ['page n, arc t -> p (TtoP)']
    """
    return check_many_with_sml([cpn_text_or_path], sml=sml, timeout_s=timeout_s)[0]


def check_many_with_sml(sources: Sequence[str | Path], *, sml: str = "sml",
                        timeout_s: float = 600.0) -> list[SmlReport]:
    """:func:`check_with_sml` for several files in one ``sml`` process (one report each).

    Each file gets a fresh prelude; its declarations shadow those of the files before it.

    >>> from tcpn.petrinets import INT, PetriNet, Place
    >>> from tcpn.petrinets.exchange.cpn_export import to_cpn
    >>> net = PetriNet("n")
    >>> net.add_place(Place("p", INT, initial=[1]))
    >>> text = to_cpn(net, layout="grid")
    >>> [r.ok for r in check_many_with_sml([text, text.replace("1`1", "1`1.0")])]
    [True, False]
    """
    executable = shutil.which(sml)
    if executable is None:
        raise SmlNotInstalledError(
            f"SML/NJ's '{sml}' is not on the PATH: install it (Debian: apt-get install smlnj)")
    built: list[tuple[str, list[_Item], int]] = []
    for source in sources:
        root = _read(source)
        real = any(o.get("name") == "realtimestamp" and o.findtext("value/boolean") == "true"
                   for o in root.iter("option"))
        builder = _Builder(root)
        built.append((_prelude("real", "0.0") if real
                      else _prelude("IntInf.int", "IntInf.fromInt 0"), builder.items,
                      builder.declarations))
    with tempfile.TemporaryDirectory(prefix="tcpn-sml-") as tmp:
        folder = Path(tmp)
        # A batch (the declarations as top-level declarations, or up to _BATCH inscriptions
        # in one let) is compiled first: SML/NJ compiles one declaration much faster than
        # many. If it fails, its items are compiled one by one, trying their readings in turn.
        driver = [_DRIVER]
        index: list[tuple[int, _Item]] = []
        for k, (prelude, items, declarations) in enumerate(built):
            (folder / f"prelude{k}.sml").write_text(prelude)
            driver.append(f'(use "{folder / f"prelude{k}.sml"}"; print "\\n@@BATCH\\n")'
                          ' handle _ => print "\\n@@PRELUDE FAILS\\n";')
            for start in [0, *range(declarations, len(items), _BATCH)]:
                batch = items[start:declarations if start == 0 else start + _BATCH]
                if not batch:
                    continue
                first = "\n".join(item.readings[0][1] for item in batch)
                path = folder / f"batch{len(index)}.sml"
                path.write_text(first if start == 0 else f"val _ = let\n{first}\nin () end;")
                tries = []
                for item in batch:
                    readings = []
                    for r, (_, text) in enumerate(item.readings):
                        one = folder / f"{len(index)}_{r}.sml"
                        one.write_text(text + "\n")
                        readings.append(f'("{one}", "{r}")')
                    tries.append(f'("{len(index)}", [{", ".join(readings)}])')
                    index.append((k, item))
                driver.append(f'tcpn_batch ("{path}", [{", ".join(tries)}]);')
        done = subprocess.run([executable], input="\n".join(driver) + "\n",
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    output = done.stdout + done.stderr
    if "@@PRELUDE FAILS" in output:
        raise TcpnError(f"the SML prelude does not compile:\n{output[:2000]}")
    passed: set[int] = set()
    messages: dict[int, list[str]] = {}
    chunk: list[str] = []
    for line in output.splitlines():
        if line == "@@BATCH":  # what follows is the batch's items one by one
            chunk = []
            continue
        match = _MARK.match(line)
        if match is None:
            chunk.append(line)
            continue
        i, r = int(match.group(2)), int(match.group(3))
        if match.group(1) == "OK":
            passed.add(i)
        else:
            label = index[i][1].readings[r][0]
            said = "\n".join(_errors(chunk, str(folder)))
            messages.setdefault(i, []).append(f"as {label}: {said}" if label else said)
        chunk = []
    unanswered = [i for i in range(len(index)) if i not in passed and i not in messages]
    if unanswered:
        raise TcpnError(f"sml stopped before checking {index[unanswered[0]][1].where}:\n"
                        f"{output[-2000:]}")
    reports = []
    for k, (prelude, items, _) in enumerate(built):
        errors = [SmlError(item.where, item.text, "\n  ".join(messages[i]))
                  for i, (source, item) in enumerate(index) if source == k and i not in passed]
        program = prelude + "\n".join(text for item in items for _, text in item.readings)
        reports.append(SmlReport(errors, len(items), program))
    return reports


def _errors(chunk: list[str], folder: str) -> list[str]:
    """SML/NJ's error lines (and their detail lines) in one ``use``'s output."""
    kept: list[str] = []
    keep = False
    for line in chunk:
        if line.startswith(folder):
            keep = " Error:" in line
            line = line.split(" ", 1)[1] if keep else line
        elif not line.startswith("  "):
            keep = False
        if keep:
            kept.append(line.strip())
    return kept
