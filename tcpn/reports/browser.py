"""The headless browser a report is printed with: find Chromium, print HTML to PDF.

Debian's ``chromium`` (the Makefile installs it) prints the report's HTML page to PDF
exactly as a reader's browser shows it. Without a browser, :func:`print_pdf` raises
:class:`BrowserMissing` naming what to install; the HTML report is written all the same.

>>> find_chromium() is None or find_chromium().endswith(("chromium", "chrome",
...                                                      "chromium-browser"))
True
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tcpn.errors import TcpnError

__all__ = ["BrowserMissing", "find_chromium", "print_pdf"]

INSTALL_HINT = "sudo apt-get install chromium"
_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PRINT_TIMEOUT_S = 180.0


class BrowserMissing(TcpnError):
    """No headless Chromium is installed, so a report can't be printed to PDF."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$TCPN_CHROMIUM`` if set, else the first of chromium,
    chromium-browser, google-chrome on the ``PATH``; None when there is none."""
    chosen = os.environ.get("TCPN_CHROMIUM")
    if chosen:
        return shutil.which(chosen)
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def print_pdf(html_path: Path, pdf_path: Path) -> Path:
    """Print the page ``html_path`` to ``pdf_path`` with headless Chromium (A4, no
    header or footer lines)."""
    browser = find_chromium()
    if browser is None:
        raise BrowserMissing(f"no Chromium on the PATH to print {html_path} to PDF; "
                             f"install it with: {INSTALL_HINT}")
    with tempfile.TemporaryDirectory(prefix="tcpn-chromium-") as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu",
                   "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}",
                   "--no-pdf-header-footer", f"--print-to-pdf={pdf_path}",
                   Path(html_path).resolve().as_uri()]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=PRINT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise TcpnError(f"Chromium did not print {html_path} within "
                            f"{PRINT_TIMEOUT_S:g} s") from exc
    if done.returncode != 0 or not Path(pdf_path).exists():
        tail = (done.stderr or "").strip().splitlines()[-3:]
        raise TcpnError(f"Chromium could not print {html_path} to PDF (exit "
                        f"{done.returncode}): {' / '.join(tail)}")
    return Path(pdf_path)
