"""``use "file.sml"`` in a CPN Tools model: the file read next to the model as the model's
own declarations, or, when it is absent or may not be read, the names it would have had
to provide and the elements that needed them, reported under the one ``use``."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, var

from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.space import explore

#: A counter from 0 up to ``limit`` stepping with ``next``, both declared by lib.sml.
DECLARATIONS = colset("D1", "INT", "<int/>") + var("D2", "INT", "i")
PLACES = [("P1", "Count", "INT", "0")]
TRANSITIONS = [("T1", "Step", "[i &lt; limit]", "")]
ARCS = [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P1", "next i")]
LIBRARY = "(* the step *)\nval limit = 3;\nfun next x =\n  x + 1;\n"


def model(tmp_path: Path, use: str, before: str = "") -> Path:
    """A counter net whose declarations end with ``before`` and ``use``, written in
    ``tmp_path``."""
    path = tmp_path / "net.cpn"
    path.write_text(cpn_file(DECLARATIONS + before + ml("D3", use), PLACES, TRANSITIONS,
                             ARCS), encoding="iso-8859-1")
    return path


def test_a_used_file_next_to_the_model_is_read_as_its_declarations(tmp_path):
    (tmp_path / "lib.sml").write_text(LIBRARY)
    imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    assert imported.complete, imported.report.text()
    assert imported.net.declarations["limit"] == 3
    space = explore(imported.net, clock="absolute")
    assert (len(space), len(space.dead_markings())) == (4, 1)  # 0, 1, 2, 3: dead at 3


def test_a_used_file_in_a_subdirectory_named_by_a_string_expression_is_read(tmp_path):
    (tmp_path / "sml").mkdir()
    (tmp_path / "sml" / "lib.sml").write_text(LIBRARY)
    imported = read_cpn(model(tmp_path, 'use (dir ^ "lib.sml");',
                                ml("D4", 'val dir = "sml/";')))
    assert imported.complete, imported.report.text()


def test_a_used_file_using_another_reads_both_and_one_using_itself_is_refused(tmp_path):
    (tmp_path / "lib.sml").write_text('val limit = 3;\nuse "step.sml";\n')
    (tmp_path / "step.sml").write_text('fun next x = x + 1;\nuse "step.sml";\n')
    imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    assert imported.net.transitions, imported.report.text()
    (item,) = imported.report.unsupported
    assert item.name == 'use "step.sml"' and "already being read" in item.reason
    assert (item.file, item.line) == ("step.sml", 2)


def test_a_declaration_of_a_used_file_left_out_is_named_by_its_line_in_that_file(tmp_path):
    (tmp_path / "lib.sml").write_text(LIBRARY + "structure S = struct val z = 1 end;\n")
    imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    (item,) = imported.report.unsupported
    assert (item.kind, item.file, item.line, item.column) == ("declaration", "lib.sml", 5, 1)
    assert "'structure'" in item.reason and "lib.sml line 5, column 1" in str(item)
    assert imported.net.transitions  # the rest of the file came in


def test_an_absent_file_names_what_it_would_have_provided_and_takes_along_its_users(
        tmp_path):
    imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    roots = [i for i in imported.report.unsupported if i.cause is None]
    assert [r.name for r in roots] == ['use "lib.sml"']
    (use,) = roots
    assert "not in the model's directory" in use.reason
    assert "limit (used by 1 element(s): 'Step')" in use.reason
    assert all(i.root is use for i in imported.report.unsupported)
    assert "took along 1 element(s): 1 transition(s)" in imported.report.text()


def test_a_relative_path_written_with_backslashes_is_read(tmp_path):
    (tmp_path / "sml").mkdir()
    (tmp_path / "sml" / "lib.sml").write_text(LIBRARY)
    imported = read_cpn(model(tmp_path, 'use "sml\\\\lib.sml";'))  # "sml\\lib.sml" in SML
    assert imported.complete, imported.report.text()


@pytest.mark.parametrize("written", ["../outside/lib.sml", "{outside}/lib.sml", "link.sml",
                                     "C:/Users/me/lib.sml", "C:\\\\lib.sml"])
def test_a_used_file_outside_the_models_directory_is_never_read(tmp_path, written):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.sml").write_text(LIBRARY)
    home = tmp_path / "model"
    home.mkdir()
    (home / "link.sml").symlink_to(outside / "lib.sml")
    imported = read_cpn(model(home, f'use "{written.format(outside=outside)}";'))
    use = imported.report.unsupported[0]
    assert "outside the model's directory" in use.reason, imported.report.text()
    assert "limit" not in imported.net.declarations
    assert not imported.net.transitions


@pytest.mark.parametrize("written", ["a\\000b.sml", "x" * 5000 + ".sml", "loop.sml"])
def test_a_path_that_cannot_be_followed_is_refused_naming_it(tmp_path, written):
    (tmp_path / "loop.sml").symlink_to(tmp_path / "loop.sml")
    imported = read_cpn(model(tmp_path, f'use "{written}";'))
    use = imported.report.unsupported[0]
    assert use.name.startswith("use") and "tcpn does not read" in use.reason, use


def test_a_model_read_from_memory_reads_no_file(tmp_path):
    text = model(tmp_path, 'use "lib.sml";').read_bytes()
    (tmp_path / "lib.sml").write_text(LIBRARY)
    imported = read_cpn(text)
    assert "read from memory" in imported.report.unsupported[0].reason
    assert not imported.net.transitions


def test_a_used_file_over_the_size_limit_is_refused_naming_the_limit(tmp_path):
    from tcpn.limits import using_limits

    (tmp_path / "lib.sml").write_text(LIBRARY + "(*" + "x" * 200 + "*)")
    with using_limits(ml_file_bytes=100):
        imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    assert "ml_file_bytes" in imported.report.unsupported[0].reason


def test_several_absent_files_list_the_missing_names_once(tmp_path):
    imported = read_cpn(model(tmp_path, 'use "step.sml";', ml("D4", 'use "lib.sml";')))
    first, second = (i for i in imported.report.unsupported if i.name.startswith("use"))
    assert (first.name, second.name) == ('use "lib.sml"', 'use "step.sml"')
    assert '"lib.sml" and "step.sml" would have had to provide: limit' in first.reason
    assert "limit" not in second.reason and 'listed under use "lib.sml"' in second.reason


def test_the_bytes_of_all_used_files_together_are_bounded(tmp_path):
    """A file loaded again and again counts each time: the model's used files together
    stay within ``ml_file_bytes``, however they nest."""
    from tcpn.limits import using_limits

    (tmp_path / "lib.sml").write_text('val limit = 3;\nuse "step.sml";\nuse "step.sml";\n')
    (tmp_path / "step.sml").write_text("fun next x = x + 1;\n")
    size = len((tmp_path / "lib.sml").read_bytes()) + len((tmp_path / "step.sml").read_bytes())
    with using_limits(ml_file_bytes=size + 5):
        imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    (item,) = imported.report.unsupported
    assert (item.name, item.file, item.line) == ('use "step.sml"', "lib.sml", 3)
    assert "ml_file_bytes" in item.reason
    assert imported.net.transitions  # read once: next and limit are declared


def test_the_export_of_a_model_with_a_used_file_holds_its_declarations(tmp_path):
    """The export is self-contained: what the file declared is written in the model, the
    ``use`` gone, and reads back (from memory, where no file can be found) the same."""
    from tcpn.petrinets.exchange.cpn_export import to_cpn

    (tmp_path / "lib.sml").write_text(LIBRARY)
    imported = read_cpn(model(tmp_path, 'use "lib.sml";'))
    text = to_cpn(imported.net)
    assert "use " not in text and "fun next" in text
    again = read_cpn(text.encode("iso-8859-1"))
    assert again.complete, again.report.text()
    assert len(explore(again.net, clock="absolute")) == 4
