"""SML Basis ``Date``, ``Time``, ``order`` and ``TextIO`` output for nets read from CPN Tools.

Models generated for process mining stamp their events with calendar dates
(``Date.fmt "%H" (Date.fromTimeLocal (Time.fromReal t))``) and write event logs with
``TextIO``. As Python values: a ``Time.time`` is a float of seconds since the epoch; a
``Date.date`` is the tuple ``("Date.date", year, month, day, hour, minute, second,
offset)`` (``month`` from 0 for January, ``offset`` ``"NONE"`` or ``("SOME", seconds)``
west of UTC, as the Basis keeps it); a month or weekday is its constructor's name
(``"Jan"``, ``"Mon"``), an ``order`` ``"LESS"``, ``"EQUAL"`` or ``"GREATER"``.

``Date.fromTimeLocal`` depends, in CPN Tools, on the time zone of the machine that runs
it: here it is read in UTC, the same on every machine (the import notes it).
``Date.fmt`` formats as C's ``strftime`` in the "C" locale, which SML/NJ calls.

``TextIO`` output never reaches a file: ``TextIO.openOut f`` gives a stream value naming
``f`` and what is written to it is dropped (a model read from a file may not write files;
what the net does never depends on it, as nothing it reads comes back from them).

>>> ml_date_fmt("%Y-%m-%d %H:%M:%S %a", ml_date_from_time_univ(86400.0 * 365 + 3661.5))
'1971-01-01 01:01:01 Fri'
>>> ml_compare((2, 3))
'LESS'
"""

from __future__ import annotations

import datetime
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

from tcpn.petrinets.exchange.ml_exceptions import ml_raise

__all__ = [
    "CALENDAR_CALLS",
    "CALENDAR_FUNCTIONS",
    "CALENDAR_VALUES",
    "MONTHS",
    "ORDER_CONSTRUCTORS",
    "WEEKDAYS",
    "ml_compare",
    "ml_date_compare",
    "ml_date_field",
    "ml_date_fmt",
    "ml_date_from_time_local",
    "ml_date_from_time_univ",
    "ml_date_make",
    "ml_date_string",
    "ml_date_to_time",
    "ml_discard",
    "ml_open_out",
]

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                  "Sunday")
#: SML's order datatype, at the top level of the Basis: constructor -> carries a value.
ORDER_CONSTRUCTORS: Mapping[str, bool] = {"LESS": False, "EQUAL": False, "GREATER": False}
_EPOCH = datetime.datetime(1970, 1, 1)


def ml_compare(pair: tuple[Any, Any]) -> str:
    """``Int.compare``, ``Real.compare``, ``String.compare``, ``Char.compare`` of a pair:
    ``LESS``, ``EQUAL`` or ``GREATER`` (strings by their characters' codes, as SML)."""
    a, b = pair
    return "LESS" if a < b else ("GREATER" if a > b else "EQUAL")


def _date(moment: datetime.datetime, offset: Any) -> tuple[Any, ...]:
    return ("Date.date", moment.year, moment.month - 1, moment.day, moment.hour,
            moment.minute, moment.second, offset)


def _moment(date: tuple[Any, ...]) -> datetime.datetime:
    _, year, month, day, hour, minute, second, _ = date
    return datetime.datetime(year, month + 1, day, hour, minute, second)


def _from_time(seconds: float, offset: Any) -> tuple[Any, ...]:
    try:
        moment = _EPOCH + datetime.timedelta(seconds=math.trunc(seconds))
    except (OverflowError, ValueError):
        ml_raise("Date")
    return _date(moment, offset)


def ml_date_from_time_univ(seconds: float) -> tuple[Any, ...]:
    """``Date.fromTimeUniv t``: the date ``t`` seconds after 1970-01-01 00:00:00 UTC (the
    fraction of a second dropped, towards 0 as SML/NJ), with offset ``SOME 0``."""
    return _from_time(seconds, ("SOME", 0.0))


def ml_date_from_time_local(seconds: float) -> tuple[Any, ...]:
    """``Date.fromTimeLocal t``, read in UTC: as :func:`ml_date_from_time_univ`, with no
    offset (a local date)."""
    return _from_time(seconds, "NONE")


def ml_date_make(fields: Any) -> tuple[Any, ...]:
    """``Date.date {year, month, day, hour, minute, second, offset}``: the canonical date,
    a day, hour, minute or second out of its range carried into the next (the Basis's
    normalisation: ``second = 90`` is a minute and a half)."""
    month = MONTHS.index(fields.month)
    try:
        start = datetime.datetime(fields.year, month + 1, 1)
        moment = start + datetime.timedelta(days=fields.day - 1, hours=fields.hour,
                                            minutes=fields.minute, seconds=fields.second)
    except (OverflowError, ValueError):
        ml_raise("Date")
    return _date(moment, fields.offset)


def ml_date_to_time(date: tuple[Any, ...]) -> float:
    """``Date.toTime d``: the seconds since the epoch (a date without offset read in UTC,
    one with offset ``SOME w`` that many seconds west of it)."""
    offset = date[7]
    west = 0.0 if offset == "NONE" else float(offset[1])
    return (_moment(date) - _EPOCH).total_seconds() + west


def ml_date_field(name: str, date: tuple[Any, ...]) -> Any:
    """``Date.year d``, ``Date.month d`` ... ``Date.weekDay d``, ``Date.yearDay d`` (from
    0), ``Date.offset d``."""
    if name == "month":
        return MONTHS[date[2]]
    if name == "weekDay":
        return WEEKDAYS[_moment(date).weekday()]
    if name == "yearDay":
        return _moment(date).timetuple().tm_yday - 1
    if name == "offset":
        return date[7]
    return date[("year", "month", "day", "hour", "minute", "second").index(name) + 1]


def _specifier(letter: str, moment: datetime.datetime) -> str:
    hour12 = moment.hour % 12 or 12
    table = {
        "a": WEEKDAYS[moment.weekday()], "A": _WEEKDAY_NAMES[moment.weekday()],
        "b": MONTHS[moment.month - 1], "B": _MONTH_NAMES[moment.month - 1],
        "c": f"{WEEKDAYS[moment.weekday()]} {MONTHS[moment.month - 1]} {moment.day:2d} "
             f"{moment:%H:%M:%S} {moment.year}",
        "d": f"{moment.day:02d}", "H": f"{moment.hour:02d}", "I": f"{hour12:02d}",
        "j": f"{moment.timetuple().tm_yday:03d}", "m": f"{moment.month:02d}",
        "M": f"{moment.minute:02d}", "p": "AM" if moment.hour < 12 else "PM",
        "S": f"{moment.second:02d}", "w": str((moment.weekday() + 1) % 7),
        "x": f"{moment.month:02d}/{moment.day:02d}/{moment.year % 100:02d}",
        "X": f"{moment:%H:%M:%S}", "y": f"{moment.year % 100:02d}", "Y": str(moment.year),
        "%": "%",
    }
    if letter not in table:
        raise ValueError(f"Date.fmt: the format %{letter} is not one tcpn writes "
                         "(it writes %a %A %b %B %c %d %H %I %j %m %M %p %S %w %x %X %y %Y %%)")
    return table[letter]


def ml_date_fmt(form: str, date: tuple[Any, ...]) -> str:
    """``Date.fmt f d``: ``f`` with each ``%x`` replaced as C's ``strftime`` does in the
    "C" locale (English names, ``%c`` as ``Mon Jan  1 00:00:00 1970``)."""
    moment = _moment(date)
    parts: list[str] = []
    index = 0
    while index < len(form):
        char = form[index]
        if char == "%" and index + 1 < len(form):
            parts.append(_specifier(form[index + 1], moment))
            index += 2
        else:
            parts.append(char)
            index += 1
    return "".join(parts)


def ml_date_string(date: tuple[Any, ...]) -> str:
    """``Date.toString d``: ``"Wed Mar  8 19:06:45 1995"`` (24 characters, the day padded
    with a space as SML/NJ writes it)."""
    return ml_date_fmt("%c", date)


def ml_date_compare(pair: tuple[tuple[Any, ...], tuple[Any, ...]]) -> str:
    """``Date.compare (d1, d2)``: by year, month, day, hour, minute, second."""
    return ml_compare((pair[0][1:7], pair[1][1:7]))


def ml_open_out(name: str) -> tuple[str, str]:
    """``TextIO.openOut f``, ``TextIO.openAppend f``: a stream naming ``f``; no file is
    opened."""
    return ("TextIO.outstream", name)


def ml_discard(_value: Any) -> tuple[()]:
    """``TextIO.output (s, t)``, ``TextIO.closeOut s``, ``print t`` ...: ``()``, what is
    written dropped."""
    return ()


def _seconds(value: float) -> float:
    return float(value)


def _whole_seconds(value: float) -> int:
    return math.floor(value)


#: The names the translation calls, as declared on an imported net
#: (``ml_date_from_time_local`` is named apart so that the import notes its UTC reading).
CALENDAR_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "ml_compare": ml_compare, "ml_date_from_time_univ": ml_date_from_time_univ,
    "ml_date_from_time_local": ml_date_from_time_local,
    "ml_date_make": ml_date_make, "ml_date_to_time": ml_date_to_time,
    "ml_date_fmt": ml_date_fmt, "ml_date_string": ml_date_string,
    "ml_date_compare": ml_date_compare, "ml_open_out": ml_open_out, "ml_discard": ml_discard,
    "ml_seconds": _seconds, "ml_whole_seconds": _whole_seconds,
    **{f"ml_date_{field}": functools.partial(ml_date_field, field) for field in (
        "year", "month", "day", "hour", "minute", "second", "weekDay", "yearDay", "offset")},
}

#: Basis functions of one argument (a tuple for several) or curried ones, that run as the
#: functions above: ML name -> (Python name, how many curried arguments).
CALENDAR_CALLS: Mapping[str, tuple[str, int]] = {
    "Int.compare": ("ml_compare", 1), "Real.compare": ("ml_compare", 1),
    "String.compare": ("ml_compare", 1), "Char.compare": ("ml_compare", 1),
    "Date.fromTimeUniv": ("ml_date_from_time_univ", 1),
    "Date.fromTimeLocal": ("ml_date_from_time_local", 1),
    "Date.date": ("ml_date_make", 1), "Date.toTime": ("ml_date_to_time", 1),
    "Date.fmt": ("ml_date_fmt", 2), "Date.toString": ("ml_date_string", 1),
    "Date.compare": ("ml_date_compare", 1),
    **{f"Date.{field}": (f"ml_date_{field}", 1) for field in (
        "year", "month", "day", "hour", "minute", "second", "weekDay", "yearDay", "offset")},
    "Time.fromReal": ("ml_seconds", 1), "Time.toReal": ("ml_seconds", 1),
    "Time.fromSeconds": ("ml_seconds", 1), "Time.toSeconds": ("ml_whole_seconds", 1),
    "TextIO.openOut": ("ml_open_out", 1), "TextIO.openAppend": ("ml_open_out", 1),
    **dict.fromkeys(("TextIO.output", "TextIO.output1", "TextIO.closeOut", "TextIO.flushOut",
                     "TextIO.print", "print"), ("ml_discard", 1)),
}

#: Basis values that are not functions: ML name -> Python value.
CALENDAR_VALUES: Mapping[str, Any] = {
    **{f"Date.{m}": m for m in MONTHS}, **{f"Date.{d}": d for d in WEEKDAYS},
    "TextIO.stdOut": ("TextIO.outstream", "stdOut"),
    "TextIO.stdErr": ("TextIO.outstream", "stdErr"), "Time.zeroTime": 0.0,
}
