"""The 802.11 stations' energy and bytes per joule of a run, as a terminal table.

A lens that models an 802.11 hop (``links[].wireless``) reports, per wireless link, the
station's energy over the horizon and the application bytes delivered to and from it
(``result.provenance["lens"]["wireless"]``, see
:func:`tcpn.models.components.variants.wireless_report`): study S3's bytes per joule.
``tcpn run`` prints it under the flow table.

>>> report = {"R2-M": {"station": "M", "tx_j": 1.0, "rx_j": 2.0, "idle_j": 77.0,
...           "energy_j": 80.0, "delivered_bytes": 1600000, "bytes_per_joule": 20000.0,
...           "frames_to_station": 1200, "frames_from_station": 900}}
>>> [row[-1] for row in energy_rows(report)]
['20000']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

__all__ = ["ENERGY_COLUMNS", "energy_rows", "energy_table"]

#: (report field, column title, format) in table order
ENERGY_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("station", "station", "{}"),
    ("frames_to_station", "frames to", "{:d}"),
    ("frames_from_station", "frames from", "{:d}"),
    ("tx_j", "tx J", "{:.3f}"),
    ("rx_j", "rx J", "{:.3f}"),
    ("idle_j", "idle J", "{:.3f}"),
    ("energy_j", "energy J", "{:.3f}"),
    ("delivered_bytes", "delivered bytes", "{:d}"),
    ("bytes_per_joule", "bytes/J", "{:.0f}"),
)


def _cell(value: Any, form: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if form == "{:d}":
        value = int(value)
    return form.format(value)


def energy_rows(report: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """One row of cells per wireless link: the link, then :data:`ENERGY_COLUMNS`."""
    return [[link, *(_cell(fields.get(key), form) for key, _, form in ENERGY_COLUMNS)]
            for link, fields in report.items()]


def energy_table(report: Mapping[str, Mapping[str, Any]], title: str) -> Table:
    """The Rich table of :func:`energy_rows`."""
    table = Table(title=title)
    table.add_column("link")
    for _, name, _ in ENERGY_COLUMNS:
        table.add_column(name, justify="left" if name == "station" else "right")
    for row in energy_rows(report):
        table.add_row(*row)
    return table
