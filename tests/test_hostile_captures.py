"""A capture given to ``tcpn validate --trace`` that cannot be read is bad input.

The capture lens's check reads the captures, and ``compare`` took every error of a lens's
check for a refusal of the scenario: a corrupt pcap, a directory or a missing file was
printed as "capture: refused: ..." and the command compared the other lenses alone and
exited 0, as if no capture had been given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcpn.errors import InputFileError
from tcpn.experiments.compare import compare

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell_newreno.yaml"


@pytest.mark.parametrize(("make", "said"), [
    (lambda p: p.write_bytes(b"\xde\xad\xbe\xef" + bytes(20)), "not a pcap or pcapng file"),
    (lambda p: p.mkdir(), "not a capture file"),
    (lambda p: None, "no such capture file"),
])
def test_an_unreadable_capture_ends_the_comparison_before_any_run(make, said, tmp_path):
    capture = tmp_path / "sender.pcap"
    make(capture)
    with pytest.raises(InputFileError, match=f"sender.pcap: .*{said}"):
        compare(SCENARIO, ["net", "capture"], replications=1,
                options={"capture": {"sender": [str(capture)]}})
