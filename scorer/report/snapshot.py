"""A PNG of a self-contained HTML page, drawn by headless Chromium (``compare --png``).

Plotly's own image export needs the ``kaleido`` package, which in turn drives a
Chrome; probegate drives the system's Chromium directly instead (Debian's
``chromium``, the browser the report tests already use), with its command-line
screenshot: no extra Python package, no network (a throwaway profile, background
networking off; the page must be self-contained).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from probegate.errors import UsageError

#: Executables tried in order.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Chromium's flags: headless, no sandbox (root in containers), nothing fetched in the background.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--force-device-scale-factor=1",
)
#: Virtual time the page gets to run its scripts before the screenshot (ms).
SCRIPT_BUDGET_MS = 10_000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def browser_binary() -> str | None:
    """The first Chromium-like executable on ``PATH`` (:data:`BROWSERS`), or ``None``."""
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def html_to_png(html: str, png: Path, width: int, height: int, timeout: float = 120.0, binary: str | None = None) -> Path:
    """Draw ``html`` (a self-contained page) in a ``width`` x ``height`` window and save
    the screenshot as ``png``.

    Returns:
        ``png``.

    Raises:
        UsageError: no Chromium is installed (one line that says how to get one), or it
            failed or timed out without writing a PNG.
    """
    exe = binary or browser_binary()
    if exe is None:
        raise UsageError("--png needs Chromium to draw the chart (apt-get install -y chromium); --html needs nothing")
    png = png.absolute()
    with tempfile.TemporaryDirectory(prefix="probegate-png-") as tmp:
        page = Path(tmp) / "chart.html"
        page.write_text(html, encoding="utf-8")
        shot = Path(tmp) / "chart.png"
        cmd = [exe, *FLAGS, f"--user-data-dir={Path(tmp) / 'profile'}", f"--window-size={width},{height}",
               f"--virtual-time-budget={SCRIPT_BUDGET_MS}", f"--screenshot={shot}", page.as_uri()]
        try:
            proc = subprocess.run(cmd, check=False, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise UsageError(f"{exe} did not draw the chart within {timeout:g} s") from None
        if not shot.is_file() or shot.read_bytes()[:8] != PNG_MAGIC:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise UsageError(f"{exe} wrote no PNG (exit {proc.returncode}): {tail[0]}")
        png.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(shot, png)
    return png
