"""The base of every scenario model: strict fields, physical ranges, errors that name a field.

:mod:`~tcpn.models.scenario` builds the schema on :class:`Strict`; a TCP variant's
parameters (``flows[].params``) subclass :class:`VariantParams` and are registered with
the variant (:func:`tcpn.models.register_variant`), so this module sits below both.

>>> class Demo(VariantParams):
...     delay_s: float = 0.1
>>> Demo(variant="demo", delay_s=0.2).delay_s
0.2
>>> Demo(variant="demo", delay_s=True)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Demo
...
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar, cast, get_args

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["FieldProblem", "Strict", "VariantParams"]


class FieldProblem(ValueError):
    """A cross-field check failed; ``path`` locates the culprit inside the scenario."""

    def __init__(self, path: Sequence[str | int], message: str):
        super().__init__(message)
        self.path = tuple(path)


#: Physical range of a number whose field name ends with a unit (``delay_s``, ``rate_bps``):
#: (unit suffix, lowest, highest, unit shown). A field's own bounds may be narrower.
_UNIT_RANGES = (
    ("_s", 0.0, 1e6, "s"),            # up to 11.6 days of model time
    ("_bps", 1.0, 1e13, "bit/s"),     # 1 bit/s to 10 Tbit/s
    ("_bytes", 0, 1 << 40, "bytes"),  # 1 TiB
    ("_j", 0.0, 1e3, "J"),
    ("_w", 0.0, 1e4, "W"),
)
#: Characters no text of a scenario may hold (C0 controls and DEL, but tab and newline).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
#: Bound on the magnitude of every other number (integers stay exact in a float64).
_MAGNITUDE = 1 << 53


@functools.cache
def _takes(annotation: Hashable, kinds: tuple[type, ...]) -> bool:
    """Whether ``annotation`` (through unions and ``Annotated``) admits one of ``kinds``."""
    return annotation in kinds or any(_takes(arg, kinds) for arg in get_args(annotation)
                                      if isinstance(arg, Hashable))


class Strict(BaseModel):
    """Base of every schema model: unknown keys are errors, assignment is validated, and
    every number is finite, not a boolean and within the physical range of its unit
    (:data:`_UNIT_RANGES`, by the field name's suffix) or else of :data:`_MAGNITUDE`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)
    #: Text fields whose own validator refuses control characters with its own message.
    _checks_its_text: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for name, value in data.items():
                field = cls.model_fields.get(name) if isinstance(name, str) else None
                if isinstance(value, bool) and field is not None and _takes(
                        cast(Hashable, field.annotation), (int, float)) and not _takes(
                        cast(Hashable, field.annotation), (bool,)):
                    raise FieldProblem((name,), f"a number is expected, got the boolean "
                                                 f"{str(value).lower()}")
        return data

    @model_validator(mode="before")
    @classmethod
    def _no_control_characters(cls, data: Any) -> Any:
        """A NUL (or another control character but tab and newline) in a name, an id or
        any other text: YAML's escapes (``"f\\0"``) let one through, and a name ends up
        in file and directory names, where NUL cannot go."""
        if isinstance(data, Mapping):
            for name, value in data.items():
                if name in cls._checks_its_text:
                    continue
                texts = value if isinstance(value, list) else [value]
                for text in texts:
                    if isinstance(text, str) and _CONTROL.search(text):
                        code = ord(_CONTROL.search(text).group())  # type: ignore[union-attr]
                        raise FieldProblem((name,), f"{text!r} holds the control character "
                                                     f"U+{code:04X}; remove it")
        return data

    @model_validator(mode="after")
    def _numbers_in_range(self) -> Any:
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            low, high, unit = next(((lo, hi, u) for suffix, lo, hi, u in _UNIT_RANGES
                                    if name.endswith(suffix)), (-_MAGNITUDE, _MAGNITUDE, ""))
            if not low <= value <= high:
                shown = f"{value:g}" if isinstance(value, float) or abs(value) < 10**300 \
                    else f"an integer of {len(str(abs(value))):,} digits"  # no float holds it
                raise FieldProblem((name,), f"{shown}{' ' + unit if unit else ''} is "
                                    f"outside the physical range [{low:g}, {high:g}]")
        return self


class VariantParams(Strict):
    """Base of every variant's ``flows[].params`` model: ``variant`` is the flow's variant
    (filled from ``flows[].variant``: the YAML does not repeat it). A variant's own model
    adds its fields and registers with it (:func:`tcpn.models.register_variant`)."""

    variant: str
