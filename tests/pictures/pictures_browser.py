"""Open a page in headless Chromium and read back what a test script found there.

The page gets two scripts of the test's own: one at the top of ``<head>`` that records
``window.onerror`` and ``console.error``, and ``harness`` at the end of ``<body>``, which runs
after the page's script and stores its findings with ``report(obj)``. Both are allowed by
adding their hashes to the page's Content-Security-Policy (which otherwise lets only the
page's own script run). Chromium's ``--dump-dom`` then prints the DOM, where the report
sits as JSON in ``<pre id="tdflow-test">``; Chromium's console log (stderr) is returned too,
so a test can check that no error was logged (a CSP refusal is logged there).
"""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tdflow.pictures.page import script_hash

_HEAD = """window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message)); });
(function () { var orig = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " ")); orig.apply(console, arguments); }; })();
"""
_REPORT = """function report(obj) {
  obj.errors = window.__errors;
  var pre = document.createElement("pre"); pre.id = "tdflow-test";
  pre.textContent = JSON.stringify(obj); document.body.appendChild(pre);
}
"""


def chromium() -> str:
    """The Chromium binary, or skip the test saying it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("chromium not installed (Debian: apt-get install chromium); browser test skipped")


def with_harness(page: str, harness: str) -> str:
    """``page`` with the recording script first and ``harness`` last, both allowed by CSP."""
    tail = _REPORT + harness
    page = page.replace("script-src ", f"script-src {script_hash(_HEAD)} {script_hash(tail)} ",
                        1)
    page = page.replace("<head>", f"<head><script>{_HEAD}</script>", 1)
    head, _, rest = page.rpartition("</body>")
    return f"{head}<script>{tail}</script></body>{rest}"


def run_page(page: str, harness: str, tmp_path: Path, name: str = "page.html",
             screenshot: Path | None = None) -> tuple[dict, str]:
    """Load ``page`` (written to ``tmp_path/name``) with ``harness``; returns ``(report,
    console log)``. With ``screenshot``, a second run saves a PNG of the plain page there."""
    exe = chromium()
    path = tmp_path / name
    path.write_text(with_harness(page, harness), encoding="utf-8")
    flags = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--hide-scrollbars", "--window-size=1280,800",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    done = subprocess.run([*flags, "--virtual-time-budget=3000", "--dump-dom", path.as_uri()],
                          capture_output=True, text=True, timeout=60)
    m = re.search(r'<pre id="tdflow-test">(.*?)</pre>', done.stdout, re.S)
    assert m, f"the harness did not report; chromium said:\n{done.stderr[-3000:]}"
    report = json.loads(html_lib.unescape(m.group(1)))
    if screenshot is not None:
        plain = tmp_path / ("plain-" + name)
        plain.write_text(page, encoding="utf-8")
        subprocess.run([*flags, f"--screenshot={screenshot}", plain.as_uri()],
                       capture_output=True, timeout=60)
    return report, done.stderr


def console_errors(log: str) -> list[str]:
    """Console lines of Chromium's log that are errors (uncaught exceptions, CSP refusals)."""
    return [line for line in log.splitlines() if "CONSOLE" in line
            and ("Uncaught" in line or "Refused" in line or "Error" in line)]


def png_ink(path: Path) -> float:
    """The share of non-zero bytes in a PNG's filtered pixel data: near 0 for a blank or
    single-colour page (every PNG filter turns flat colour into zeros), a few percent and up
    once text and shapes are drawn. Needs no image library."""
    import struct
    import zlib

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    return 1.0 - raw.count(0) / len(raw)
