"""A real browser opens the report: headless Chromium (Debian's chromium package) renders it, and the
test checks the screenshot is a page (not blank), the verdict is in the DOM, and the console is quiet.

Chromium is driven from the command line (--screenshot, --dump-dom, console to stderr); no browser
automation library is needed. The test is skipped only when chromium is absent and
DIAGDISK_REQUIRE_BROWSER is unset; CI sets it, so a missing browser fails there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from diagdisk.report.html import render_html

from html_dom import parse

FIXTURE = Path(__file__).parent / "fixtures" / "report_medium_error.json"
WINDOW = (1280, 2000)
FAILURE_RED = (0xB3, 0x26, 0x1E)
MASTHEAD_NAVY = (0x1B, 0x2A, 0x3A)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("DIAGDISK_REQUIRE_BROWSER"):
        pytest.fail("DIAGDISK_REQUIRE_BROWSER is set but chromium is not installed (apt-get install chromium)")
    pytest.skip("chromium is not installed (set DIAGDISK_REQUIRE_BROWSER=1 to make this a failure)")


def run_chromium(page: Path, *mode: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="diagdisk-chromium-") as profile:
        command = [
            _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--hide-scrollbars", f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--enable-logging=stderr", "--v=0", *mode, page.resolve().as_uri(),
        ]
        return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def console_messages(stderr: str) -> list[str]:
    """Console output of the page. The report runs no script, so anything here is an error: a script
    error, or a request the Content-Security-Policy blocked."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="module")
def report() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page_file(report, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    return path


def test_console_check_does_catch_a_broken_page(tmp_path):
    """The console scan is only worth something if it sees errors: a page whose image and script the
    policy blocks must be caught. (A data: image, so not even a blocked request names a host.)"""
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">"
        "<p>broken</p><img src=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\"><script>throw new Error('boom')</script>",
        encoding="utf-8")
    result = run_chromium(broken, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_messages(result.stderr), "the console scan saw nothing on a page with errors"


def test_browser_renders_the_report_with_a_quiet_console(page_file, report):
    result = run_chromium(page_file, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_messages(result.stderr) == []
    dom = parse(result.stdout)
    assert dom.by_id("verdict-summary").words() == report["verdict"]["summary"]
    assert dom.by_id("verdict-title").words() == "Hardware failure"
    assert dom.by_id("timeline").find("svg")


def test_screenshot_shows_a_report_not_a_blank_page(page_file, tmp_path):
    image_module = pytest.importorskip("PIL.Image", reason="Pillow (a matplotlib dependency) decodes the PNG")
    shot = tmp_path / "report.png"
    result = run_chromium(page_file, f"--screenshot={shot}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_messages(result.stderr) == []
    with image_module.open(shot) as image:
        pixels = image.convert("RGB")
    assert pixels.size == WINDOW
    colours = pixels.getcolors(maxcolors=1 << 20)
    assert len(colours) > 200, "a rendered report has text, a chart and coloured marks"
    most_common_share = max(count for count, _ in colours) / (WINDOW[0] * WINDOW[1])
    assert most_common_share < 0.9, "the screenshot is mostly one colour"
    present = {colour for _, colour in colours}
    assert MASTHEAD_NAVY in present, "the masthead was not drawn"
    assert FAILURE_RED in present, "the failure verdict badge was not drawn"
