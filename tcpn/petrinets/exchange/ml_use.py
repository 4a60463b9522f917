"""The SML files a CPN Tools model loads with ``use``: found next to the model, read as text.

``use "file.sml"`` in a model's declarations makes CPN Tools' simulator compile that file
as if its declarations were written in the model. A model is untrusted data, so the file
it names is read only when it lies in the model's own directory (or below it) once every
symbolic link is resolved, is a regular file, and is within ``limits().ml_file_bytes``;
an absolute path or a ``..`` leading elsewhere is refused, never opened. What the file
holds is only ever text: the importer reads it with the same CPN ML translator and
restricted evaluator as the declarations written in the model.

:func:`split_declarations` cuts a file into its top-level declarations, each with the
place where it begins, so that one the importer leaves out is named by its line in the
file and the others still come in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lark import Token as LarkToken
from lark.exceptions import LarkError

from tcpn.limits import UnreadableInput, read_input
from tcpn.petrinets.exchange.cpnml import ml_tokens

__all__ = ["MAX_USE_DEPTH", "UseFileError", "UseFileMissing", "split_declarations",
           "use_file_text"]

#: ``use`` inside a used file inside ...: deeper than this is refused (a file that uses
#: itself is refused at once).
MAX_USE_DEPTH = 8

#: ``C:/...``, ``C:\\...`` and ``\\\\server\\...``: absolute on Windows, where CPN Tools runs.
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|[\\/]{2})")
#: Words that begin an SML top-level declaration (CPN Tools' own ``globref`` too).
_DECLARATION_WORDS = frozenset({
    "val", "fun", "datatype", "type", "exception", "local", "structure", "signature",
    "functor", "open", "use", "infix", "infixr", "nonfix", "abstype", "globref",
})
#: Words and brackets that open a nesting closed by ``end`` or the matching bracket.
_OPENERS = frozenset({"let", "local", "struct", "sig", "abstype", "(", "[", "{"})
_CLOSERS = frozenset({"end", ")", "]", "}"})


class UseFileError(Exception):
    """A ``use`` whose file tcpn does not read: ``reason`` says why (outside the model's
    directory, not a regular file, too big, not text)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class UseFileMissing(UseFileError):
    """A ``use`` of a file that is not next to the model (it was not shipped with it)."""


@dataclass(frozen=True)
class Declaration:
    """One top-level declaration of a used file: its text and where it begins (1-based
    line, 0-based column)."""

    text: str
    line: int
    column: int


def use_file_text(model: Path | None, written: str, bound: int | None = None
                  ) -> tuple[Path, str]:
    """The file ``use`` names, resolved against the directory of ``model`` (the ``.cpn``
    file; None when the model was read from memory), and its text.

    Raises :class:`UseFileMissing` when it is not there and :class:`UseFileError` when it
    may not be read (a path leading outside the model's directory, a FIFO, a file over
    ``bound`` bytes: by default ``limits().ml_file_bytes``, what the model's other used
    files left of it when the importer gives it).

    >>> use_file_text(Path("/tmp/net.cpn"), "/etc/passwd")
    Traceback (most recent call last):
    ...
    tcpn.petrinets.exchange.ml_use.UseFileError: /etc/passwd is outside the model's \
directory /tmp (tcpn reads only the files next to the model)
    """
    if model is None:
        raise UseFileMissing("the model was read from memory: there is no directory to "
                             "find the file in")
    base = model.resolve().parent
    if _WINDOWS_ABSOLUTE.match(written):
        raise UseFileError(f"{written} is an absolute Windows path, outside the model's "
                           f"directory {base} (tcpn reads only the files next to the model)")
    try:
        # CPN Tools runs on Windows: a relative path may separate directories with '\'
        target = (base / written.replace("\\", "/")).resolve()  # absolute: replaces base
        if not target.is_relative_to(base):
            raise UseFileError(f"{written} is outside the model's directory {base} (tcpn "
                               "reads only the files next to the model)")
        if not target.exists():
            raise UseFileMissing(f"{written} is not in the model's directory {base}")
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL, a name too long, a loop
        raise UseFileError(f"{written!r} is not a path tcpn can follow ({exc})") from None
    try:
        data = read_input(target, "ml_file_bytes", "SML file", bound)
    except UnreadableInput as exc:
        raise UseFileError(exc.problem) from None
    try:
        return target, data.decode("utf-8")
    except UnicodeDecodeError:
        return target, data.decode("iso-8859-1")  # what CPN Tools writes its files in


def split_declarations(text: str) -> list[Declaration]:
    """The top-level declarations of an SML file, in order: a declaration word (``val``,
    ``fun``, ``structure``, ``use``...) or a ``;`` outside every ``let``/``local``/
    ``struct``/bracket begins the next one. Text the lexer can't read ends the split: the
    rest is one last piece (the importer then reports its syntax error where it is).

    >>> text = 'val a = 1; (* one *)\\nfun f x =\\n  let val b = a in x + b end\\nuse "a.sml";'
    >>> [d.text for d in split_declarations(text)]
    ['val a = 1;', 'fun f x =\\n  let val b = a in x + b end', 'use "a.sml";']
    >>> [(d.line, d.column) for d in split_declarations('val a = 1;\\n  val b = 2')]
    [(1, 0), (2, 2)]
    """
    spans: list[list[int]] = []  # [start, end] of each declaration's tokens
    depth = 0
    fresh = True  # the next token begins a declaration
    try:
        for token in ml_tokens(text):
            word = str(token)
            if depth == 0 and (fresh or word in _DECLARATION_WORDS) and word != ";":
                spans.append([_start(token), _end(token)])
                fresh = False
            elif spans:
                spans[-1][1] = _end(token)
            if word in _OPENERS:
                depth += 1
            elif word in _CLOSERS:
                depth = max(0, depth - 1)
            elif word == ";" and depth == 0:
                fresh = True
    except LarkError as exc:
        position = getattr(exc, "pos_in_stream", None)
        if position is not None:
            if fresh or not spans:
                spans.append([position, len(text)])
            else:
                spans[-1][1] = len(text)
    pieces = []
    for begin, end in spans:
        piece = text[begin:end]
        if piece.strip(" \t\n;"):
            line = text.count("\n", 0, begin) + 1
            pieces.append(Declaration(piece, line, begin - (text.rfind("\n", 0, begin) + 1)))
    return pieces


def _start(token: LarkToken) -> int:
    return token.start_pos if token.start_pos is not None else 0


def _end(token: LarkToken) -> int:
    return token.end_pos if token.end_pos is not None else _start(token) + len(token)
