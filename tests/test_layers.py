"""The layout holds: dependencies point one way, between layers and between the rooms of
``tcpn.petrinets``, read from every real import (at module level, inside functions, and the
``"tcpn.x.y"`` strings a module hands to ``importlib``), and circles stay small and inside
one room. ``docs/layout.md`` states the same rules for people."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import networkx as nx
import pytest

import tcpn

ROOT = Path(tcpn.__file__).resolve().parent

#: The rooms, lowest first; each may import only the rooms listed with it (and itself).
GROUND = ("tcpn", "tcpn.errors", "tcpn.interruption", "tcpn.limits", "tcpn.outputs", "tcpn.scratch",
          "tcpn.source", "tcpn.workers")
LANGUAGE = "tcpn.petrinets (language)"
MAY_IMPORT: dict[str, set[str]] = {
    "ground": set(),
    "tcpn.solvers": set(),
    LANGUAGE: set(),
    "tcpn.petrinets.drawing": {LANGUAGE},
    "tcpn.petrinets.engine": {LANGUAGE},
    "tcpn.petrinets.statespace": {LANGUAGE, "tcpn.petrinets.engine"},
    "tcpn.petrinets.exchange": {LANGUAGE, "tcpn.petrinets.engine"},
    "tcpn.petrinets.checking": {LANGUAGE, "tcpn.petrinets.engine",
                                "tcpn.petrinets.statespace", "tcpn.petrinets.exchange"},
    "tcpn.models": {"tcpn.petrinets"},
    "tcpn.lenses": {"tcpn.petrinets", "tcpn.solvers", "tcpn.models"},
    "tcpn.experiments": {"tcpn.petrinets", "tcpn.solvers", "tcpn.models", "tcpn.lenses"},
    "tcpn.reports": {"tcpn.petrinets", "tcpn.solvers", "tcpn.models", "tcpn.lenses",
                     "tcpn.experiments"},
    "tcpn.cli": {"tcpn.petrinets", "tcpn.solvers", "tcpn.models", "tcpn.lenses",
                 "tcpn.experiments", "tcpn.reports"},
}
PETRINET_ROOMS = ("engine", "statespace", "checking", "exchange", "drawing")

#: Imports that climb on purpose, each with its reason.
EXCEPTIONS = {
    # the package's front: it re-exports the names most users need from every room
    ("tcpn.petrinets", "tcpn.petrinets.engine"), ("tcpn.petrinets", "tcpn.petrinets.statespace"),
    ("tcpn.petrinets", "tcpn.petrinets.checking"),
    # a net draws itself in Jupyter (_repr_svg_), importing the drawing when first shown
    ("tcpn.petrinets.net", "tcpn.petrinets.drawing"),
}

#: The largest group of modules that import each other (directly or through others).
MAX_CIRCLE = 4


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path = ROOT) -> dict[str, Path]:
    return {_module_name(p, root): p for p in root.rglob("*.py")}


MODULES = _modules()


def room(module: str) -> str:
    """The room ``module`` lives in."""
    if module in GROUND:
        return "ground"
    if module == "tcpn.__main__":  # ``python -m tcpn``: the command line's other door
        return "tcpn.cli"
    parts = module.split(".")
    if parts[1] == "petrinets":
        if len(parts) > 2 and parts[2] in PETRINET_ROOMS:
            return ".".join(parts[:3])
        return LANGUAGE
    return ".".join(parts[:2])


def _not_names(tree: ast.Module) -> set[int]:
    """The string constants that cannot name a module: docstrings, f-string pieces."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):  # pieces of an f-string name nothing alone
            found.update(id(value) for value in node.values)
    return found


def _target(name: str, modules: dict[str, Path] | None = None) -> str | None:
    """The tcpn module ``name`` (a module, or ``module.attribute``) is found in."""
    modules = MODULES if modules is None else modules
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, modules: dict[str, Path] | None = None) -> set[str]:
    """Every tcpn module ``module`` imports, however: statements anywhere in it, and string
    constants naming a tcpn module (``"tcpn.x.y"`` or ``"tcpn.x.y:name"``)."""
    return set(import_kinds(module, modules))


def import_kinds(module: str, modules: dict[str, Path] | None = None) -> dict[str, str]:
    """:func:`imports` with how each is imported: ``"statement"``, or ``"string"`` when only
    a dotted string names it (for ``importlib``)."""
    modules = MODULES if modules is None else modules
    tree = ast.parse(modules[module].read_text())
    docstrings = _not_names(tree)
    package = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        kind = "statement"
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}".rstrip(".")
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings and node.value.startswith("tcpn.")
              and " " not in node.value):
            names, kind = [node.value.partition(":")[0]], "string"
        for name in names:
            target = _target(name, modules)
            if kind == "string" and target == "tcpn" != name:
                continue  # "tcpn.native": a logger's name, no module
            if (target is not None and target != module and name.startswith("tcpn")
                    and found.get(target) != "statement"):
                found[target] = kind
    return found


GRAPH = nx.DiGraph([(m, t) for m in MODULES for t in imports(m)])
GRAPH.add_nodes_from(MODULES)


def _allowed(source: str, target: str) -> bool:
    a, b = room(source), room(target)
    if a == b or b == "ground":
        return True
    allowed = MAY_IMPORT[a]
    if b in allowed or (b.startswith("tcpn.petrinets") and "tcpn.petrinets" in allowed):
        return True
    return any(source == s and (target == t or target.startswith(t + "."))
               for s, t in EXCEPTIONS)


def test_every_module_has_a_room():
    assert {room(m) for m in MODULES} <= set(MAY_IMPORT)


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_dependencies_point_one_way(layer):
    """No module imports a room it may not (the rooms and their order: MAY_IMPORT)."""
    climbing = sorted(f"{s} -> {t}" for s, t in GRAPH.edges
                      if room(s) == layer and not _allowed(s, t))
    assert climbing == []


def test_circles_are_small_and_inside_one_room():
    kept = nx.DiGraph([(s, t) for s, t in GRAPH.edges
                       if not any(s == a and t.startswith(b) for a, b in EXCEPTIONS)])
    circles = [sorted(c) for c in nx.strongly_connected_components(kept) if len(c) > 1]
    too_large = [c for c in circles if len(c) > MAX_CIRCLE]
    across = [c for c in circles if len({room(m) for m in c}) > 1]
    assert too_large == [] and across == []


def test_a_string_naming_a_module_counts_as_an_import(tmp_path):
    """The test can fail: a dotted string reaching up is caught like an import statement."""
    MODULES["tcpn.models.probe"] = tmp_path / "probe.py"
    (tmp_path / "probe.py").write_text('"""Doc naming tcpn.reports."""\n'
                                       'TARGET = "tcpn.reports.render:render"\n')
    try:
        assert imports("tcpn.models.probe") == {"tcpn.reports.render"}
        assert not _allowed("tcpn.models.probe", "tcpn.reports.render")
    finally:
        del MODULES["tcpn.models.probe"]


def test_no_private_name_is_imported_across_modules():
    """``from a import _b`` reaches into another module's insides: say it or share it."""
    private = defaultdict(list)
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tcpn"):
                private[module] += [f"{node.module}.{a.name}" for a in node.names
                                    if a.name.startswith("_") and not a.name.startswith("__")]
    found = sorted(f"{m}: {n}" for m, names in private.items() for n in names)
    assert found == []


#: Attribute names whose underscore is not about privacy: the named tuple's API, os._exit.
PUBLIC_UNDERSCORE = frozenset({"_replace", "_fields", "_make", "_asdict", "_field_defaults",
                               "_exit"})
#: Modules that read another library's insides, each with its reason.
FOREIGN_INSIDES = {
    "tcpn.petrinets.exchange.snakes": "SNAKES keeps an arc's expression (_expr, _annotation),"
    " an inhibitor's condition (_condition) and a place's type check (_check) in private "
    "attributes with no public reader",
}


def _defines(tree: ast.Module) -> set[str]:
    """The names a module makes: functions, classes, the attributes it gives ``self`` and
    ``cls``, and the strings naming what it generates (a built module's functions)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found


def private_reads(module: str) -> list[str]:
    """``obj._x`` read or written in ``module`` where ``obj`` is not ``self``/``cls`` and the
    module does not make ``_x`` itself: another module's insides (what an object of another
    module keeps private should be asked for, or set, through a public name)."""
    tree = ast.parse(MODULES[module].read_text())
    own = _defines(tree)
    return sorted({f"{module}: {ast.unparse(node)}" for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and node.attr.startswith("_")
                   and not node.attr.startswith("__") and node.attr not in own
                   and node.attr not in PUBLIC_UNDERSCORE
                   and not (isinstance(node.value, ast.Name)
                            and node.value.id in ("self", "cls"))})


def test_no_private_attribute_is_used_across_modules():
    """``sim._draw`` read or ``sim._live`` set in another module reaches into the
    simulator's insides: the engine contract (``tcpn.petrinets.engine.contract``) names
    what an engine may read and write."""
    found = [read for module in MODULES if module not in FOREIGN_INSIDES
             for read in private_reads(module)]
    assert sorted(found) == []


def test_a_private_read_is_caught(tmp_path):
    """The check can fail: a module reading another's private attribute is named."""
    MODULES["tcpn.petrinets.engine.probe"] = tmp_path / "probe.py"
    (tmp_path / "probe.py").write_text("def peek(sim):\n    sim._live = set()\n"
                                       "    return sim._draw, sim._replace\n")
    try:
        assert private_reads("tcpn.petrinets.engine.probe") == [
            "tcpn.petrinets.engine.probe: sim._draw", "tcpn.petrinets.engine.probe: sim._live"]
    finally:
        del MODULES["tcpn.petrinets.engine.probe"]


#: Modules longer than MAX_LINES, each with the reason it stays one module.
LONG_MODULES = {
    "tcpn.petrinets.exchange.cpnml": "one recursive-descent translator of the CPN ML "
    "grammar; its forms (fn, case, let) are already apart in cpnml_forms",
    "tcpn.petrinets.exchange.cpn_import": "CPN Tools' XML read element by element, every "
    "element's error naming its line and id",
    "tcpn.petrinets.exchange.cpn_export": "CPN Tools' XML written element by element, the "
    "mirror of cpn_import",
    "tcpn.models.scenario": "the scenario schema: one pydantic model per field group, "
    "each with its checks and error messages",
    "tcpn.solvers.fluid.bottleneck": "one fluid model's equations and its event handling",
    "tcpn.petrinets.engine.compiler": "one code generator: enabling and firing functions "
    "per transition",
    "tcpn.cli": "one function per command, each only reading options and calling one "
    "function",
}
MAX_LINES = 1_200
MAX_MODULES_PER_FOLDER = 15


def test_a_long_module_has_a_stated_reason():
    long = {m for m, p in MODULES.items() if len(p.read_text().splitlines()) > MAX_LINES}
    assert long <= set(LONG_MODULES), sorted(long - set(LONG_MODULES))


def test_no_folder_is_a_flat_pile():
    folders: dict[Path, int] = defaultdict(int)
    for path in MODULES.values():
        folders[path.parent] += path.name != "__init__.py"
    crowded = {str(f.relative_to(ROOT)): n for f, n in folders.items()
               if n > MAX_MODULES_PER_FOLDER}
    assert crowded == {}


# -- the house's measures (docs/layout.md's before and after) ---------------------------------
#: The rules before the rooms (tests/test_doctests.py's LAYERS up to commit 7f43064^): each
#: top-level package and the prefixes it must not import, read from module-level
#: statements only.
RULES_BEFORE = {
    "tcpn.petrinets": ("tcpn.models", "tcpn.solvers", "tcpn.validation", "tcpn.reports",
                       "tcpn.cli"),
    "tcpn.models": ("tcpn.solvers", "tcpn.validation", "tcpn.reports", "tcpn.cli"),
    "tcpn.solvers": ("tcpn.validation", "tcpn.reports", "tcpn.cli"),
    "tcpn.validation": ("tcpn.solvers.fluid", "tcpn.solvers.closed_forms",
                        "tcpn.solvers.fluid_lens", "tcpn.solvers.optimize", "tcpn.reports",
                        "tcpn.cli"),
}


def _allowed_before(source: str, target: str) -> bool:
    package = ".".join(source.split(".")[:2])
    return not target.startswith(RULES_BEFORE.get(package, ()))


def layout_measures(root: Path = ROOT, before: bool = False) -> dict[str, object]:
    """The figures issue #28 asks for, of the tcpn tree at ``root`` (``before``: judged by
    :data:`RULES_BEFORE`, each top-level package one room): imports that climb a layer,
    imports made only through a dotted string, circles (largest, and those across rooms),
    modules over :data:`MAX_LINES` lines (with their reason, if stated), the largest folder."""
    modules = _modules(root)
    kinds = {m: import_kinds(m, modules) for m in modules}
    allowed = _allowed_before if before else _allowed
    room_of = (lambda m: ".".join(m.split(".")[:2])) if before else room
    edges = [(s, t) for s, found in kinds.items() for t in found]
    climbing = sorted(f"{s} -> {t}" for s, t in edges if not allowed(s, t))
    strings = sorted(f"{s} -> {t}" + ("" if room_of(s) == room_of(t) else " (across rooms)")
                     for s, found in kinds.items() for t, kind in found.items()
                     if kind == "string")
    kept = nx.DiGraph([(s, t) for s, t in edges
                       if before or not any(s == a and t.startswith(b) for a, b in EXCEPTIONS)])
    circles = sorted((sorted(c) for c in nx.strongly_connected_components(kept) if len(c) > 1),
                     key=len, reverse=True)
    lines = {m: len(p.read_text().splitlines()) for m, p in modules.items()}
    folders: dict[str, int] = defaultdict(int)
    for path in modules.values():
        folders[str(path.parent.relative_to(root.parent))] += path.name != "__init__.py"
    return {
        "modules": len(modules),
        "imports climbing a layer": climbing,
        "imports through a dotted string only": strings,
        "largest circle": len(circles[0]) if circles else 0,
        "circles across rooms": [c for c in circles if len({room_of(m) for m in c}) > 1],
        "modules over 1,200 lines": {m: (n, "no reason stated" if before else
                                         LONG_MODULES.get(m, "no reason stated"))
                                     for m, n in sorted(lines.items()) if n > MAX_LINES},
        "largest folders": sorted(folders.items(), key=lambda f: -f[1])[:3],
    }


if __name__ == "__main__":  # python tests/test_layers.py [TREE/tcpn --before]
    import json
    import sys

    tree = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    figures = layout_measures(tree, before="--before" in sys.argv)
    print(json.dumps(figures, indent=1))
