"""The Model Checking Contest's answer files, keyed like the answers tcpn prints.

An instance folder holds one answer file per examination, ``<instance>-<XX>.out`` (``XX``
in :data:`SUFFIX`), with lines ``FORMULA <id> TRUE|FALSE|<n>|? TECHNIQUES ...`` and, for
the state space, ``STATE_SPACE STATES|TRANSITIONS|... <n>``; ``?`` is an unknown answer.

The answer files name a formula ``<instance>-<Examination>-NN`` where the property file
names it ``<instance>-<Examination>-<year>-NN``, and ``NN`` is the formula's **rank among
the property file's ids in sorted order**, not the number in its id. The two agree when
all of a file's formulas come from one year; they differ when a file mixes years (the
contest's 2025 CTL files carry twelve formulas ``-2025-00`` ... ``-2025-11`` followed by
four ``-2023-12`` ... ``-2023-15``, and their answers list the 2023 formulas first).
:func:`read_answers` applies that rule, so every answer is compared with the formula it
answers; an answer line naming an id verbatim is taken as it is.

>>> answer_key("FORMULA M-CTLCardinality-2025-03 TRUE TECHNIQUES EXPLICIT")
('M-CTLCardinality-2025-03', 'TRUE')
>>> _by_rank(["M-CTLF-2025-00", "M-CTLF-2023-01"])
{'M-CTLF-00': 'M-CTLF-2023-01', 'M-CTLF-01': 'M-CTLF-2025-00'}
"""

from __future__ import annotations

import re
from pathlib import Path

from tcpn.errors import InputError
from tcpn.petrinets.checking.contest.properties import read_properties

__all__ = ["SUFFIX", "answer_key", "read_answers"]

#: The examinations' answer-file suffixes.
SUFFIX = {"StateSpace": "SS", "ReachabilityDeadlock": "RD", "QuasiLiveness": "QL",
          "Liveness": "L", "OneSafe": "OS", "StableMarking": "SM", "UpperBounds": "UB",
          "ReachabilityCardinality": "RC", "ReachabilityFireability": "RF",
          "CTLCardinality": "CTLC", "CTLFireability": "CTLF", "LTLCardinality": "LTLC",
          "LTLFireability": "LTLF"}

_YEAR = re.compile(r"-(\d{4})-(\d+)$")
_NUMBER = re.compile(r"-(\d+)$")


def answer_key(line: str) -> tuple[str, str] | None:
    """``(key, answer)`` of one answer line (``STATE_SPACE <what>`` for the state space),
    ``None`` for a line that answers nothing."""
    words = line.split()
    if len(words) >= 3 and words[0] == "FORMULA":
        return words[1], words[2]
    if len(words) >= 3 and words[0] == "STATE_SPACE":
        return f"STATE_SPACE {words[1]}", words[2]
    return None


def _by_rank(ids: list[str]) -> dict[str, str]:
    """The answer files' ``...-NN`` for each property id: its rank in sorted order."""
    return {_YEAR.sub(f"-{rank:02d}", ident): ident
            for rank, ident in enumerate(sorted(ids)) if _YEAR.search(ident)}


def read_answers(folder: str | Path, examination: str, *, keep_unknown: bool = False
                 ) -> dict[str, str]:
    """The known answers of one examination of the instance in ``folder``, keyed by the
    property file's formula ids (the global properties by their names, the state space by
    ``STATE_SPACE <what>``); unknown answers (``?``) are left out unless ``keep_unknown``.

    Raises :class:`~tcpn.errors.InputError` naming the file when the answer file is
    missing or names a formula its property file does not have.
    """
    folder = Path(folder)
    if examination not in SUFFIX:
        raise InputError(f"unknown examination {examination!r}; one of {sorted(SUFFIX)}")
    path = folder / f"{folder.name}-{SUFFIX[examination]}.out"
    if not path.is_file():
        raise InputError(f"{path}: no answer file for {examination}")
    properties = folder / f"{examination}.xml"
    ids = [p.id for p in read_properties(properties)] if properties.is_file() else []
    rename = _by_rank(ids)
    known: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        pair = answer_key(line)
        if pair is None or (pair[1] == "?" and not keep_unknown):
            continue
        key, answer = pair
        if ids and key not in ids:
            if key not in rename or not _NUMBER.search(key):
                raise InputError(f"{path}:{number}: {key} is not a formula of {properties}")
            key = rename[key]
        known[key] = answer
    return known
