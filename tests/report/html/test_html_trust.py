"""The HTML report tells what its verdict stands on: coverage beside the verdict, inconclusive as a
status of its own, event kinds by label with a legend, benign events grey in the timeline, and log
text that can neither break the page nor a terminal the page is printed on. Checked parsed, and in
headless Chromium like the incident report (test_html_browser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagdisk.report import charts
from diagdisk.report.html import render_html

from end_to_end.test_corpus import run_case
from html_dom import parse
from test_html_browser import console_messages, run_chromium

REPO = Path(__file__).resolve().parents[3]
INCONCLUSIVE_PURPLE = (0x6A, 0x4C, 0x93)


@pytest.fixture(scope="module")
def healthy() -> dict:
    return run_case(REPO / "samples" / "benign-noise-healthy")


@pytest.fixture(scope="module")
def inconclusive(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("no-kernel-log")
    (folder / "dpkg.log").write_text("2024-03-02 18:07:17 startup archives unpack\n"
                                     "2024-03-02 18:07:18 install nginx:amd64 <none> 1.22.1-9\n")
    return run_case(folder)


def test_coverage_stands_beside_the_verdict(healthy):
    page = parse(render_html(healthy))
    verdict = page.by_id("verdict")
    coverage = verdict.find(id="coverage")
    assert "32 kernel log lines from 2024-02-26" in coverage.words()
    assert "SMART data for sda" in coverage.words()
    assert "proc/mdstat: not in the input" in page.by_id("not-read").words()
    assert "coverage-short" not in coverage.classes()


def test_an_inconclusive_verdict_says_so_and_why(inconclusive):
    page = parse(render_html(inconclusive))
    assert "status-inconclusive" in page.by_id("verdict").classes()
    assert page.by_id("verdict-title").words() == "No verdict: too little evidence"
    assert "no kernel log line was read" in page.by_id("coverage-reason").words()
    assert "coverage-short" in page.by_id("coverage").classes()
    assert "No kernel log line was read." in page.by_id("coverage-kernel").words()


def test_event_kinds_have_labels_and_a_legend(healthy):
    page = parse(render_html(healthy))
    legend = {item.find("dt").words(): item.find("dd").words() for item in page.by_id("legend").find_all("div")}
    assert "SCSI sense data" in legend and "sense data" in legend["SCSI sense data"]
    cards = page.by_id("devices").words()
    assert "SCSI sense data" in cards and " io_error " not in f" {cards} "


def _colours(svg_element) -> str:
    return " ".join(element.attrs.get("style", "") + " " + (element.attrs.get("fill") or "")
                    for element in svg_element.iter())


def test_benign_events_are_grey_not_red(healthy):
    svg = parse(render_html(healthy)).by_id("timeline").find("svg")
    assert charts.BENIGN_COLOR in _colours(svg)
    assert "1:0:0:0" in [text.words() for text in svg.find_all("text")]   # the empty DVD tray's lane
    # the tray's NOT READY and the probe read's I/O error alone: nothing red at all
    tray = [entry for entry in healthy["timeline"] if entry["device"] == "1:0:0:0"]
    assert tray and all(entry["benign"] for entry in tray)
    alone = parse(f"<div>{charts.timeline_chart(tray).svg}</div>").find("svg")
    assert charts.BENIGN_COLOR in _colours(alone)
    assert charts.ERROR_COLOR_HIGH.lower() not in _colours(alone).lower()
    assert charts.ERROR_COLOR_LOW.lower() not in _colours(alone).lower()


def test_rsyslog_line_breaks_are_line_breaks_in_the_evidence(healthy):
    report = dict(healthy)
    report["findings"] = [{
        "rule": "DD107", "title": "md RAID failed a member", "severity": "high", "fru": "disk",
        "suspect": {"hctl": None, "device": "sdc", "model": None, "serial": None}, "confidence": 0.6, "count": 1,
        "first": None, "last": None, "explanation": "", "recommendation": "", "consequence": False,
        "evidence": [{"source": "var/log/messages", "line": 13, "text":
                      "md/raid1:md0: Disk failure on sdc1, disabling device.#012md/raid1:md0: Operation continuing"}]}]
    code = parse(render_html(report)).by_id("suspects").find("ol", class_="log").find("code")
    assert "#012" not in code.words()
    assert [child.tag for child in code.children if not isinstance(child, str)] == ["br"]


def test_control_characters_never_reach_the_page(healthy):
    report = dict(healthy)
    hostile = "sd 2:0:0:0: \x1b]0;owned\x07\x1b[2J\x9b31m\u202egnp.exe [sdb]"
    report["host"] = {**healthy["host"], "hostname": "db1\x1b[31m"}
    report["warnings"] = [hostile]
    report["sources"] = [{**healthy["sources"][0], "unparsed_samples": [{"line": 1, "text": hostile}],
                          "path": "var/log/\x1b[2Jmessages"}]
    page = render_html(report)
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in page
    assert "\\x1b]0;owned\\x07" in page and "\\u202egnp.exe" in page


# -- in a real browser --------------------------------------------------------------------------------


def test_chromium_shows_the_inconclusive_verdict_with_its_coverage(inconclusive, tmp_path):
    image_module = pytest.importorskip("PIL.Image", reason="Pillow (a matplotlib dependency) decodes the PNG")
    page_file = tmp_path / "inconclusive.html"
    page_file.write_text(render_html(inconclusive), encoding="utf-8")
    result = run_chromium(page_file, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_messages(result.stderr) == []
    dom = parse(result.stdout)
    assert dom.by_id("verdict-title").words() == "No verdict: too little evidence"
    assert "no kernel log line was read" in dom.by_id("coverage-reason").words()
    shot = tmp_path / "inconclusive.png"
    assert run_chromium(page_file, f"--screenshot={shot}").returncode == 0
    with image_module.open(shot) as image:
        colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert INCONCLUSIVE_PURPLE in colours, "the inconclusive badge was not drawn"


def test_chromium_draws_benign_events_grey(healthy, tmp_path):
    image_module = pytest.importorskip("PIL.Image", reason="Pillow (a matplotlib dependency) decodes the PNG")
    page_file = tmp_path / "healthy.html"
    page_file.write_text(render_html(healthy), encoding="utf-8")
    shot = tmp_path / "healthy.png"
    result = run_chromium(page_file, f"--screenshot={shot}")
    assert result.returncode == 0 and console_messages(result.stderr) == []
    grey = tuple(int(charts.BENIGN_COLOR[i:i + 2], 16) for i in (1, 3, 5))
    with image_module.open(shot) as image:
        colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert grey in colours, "no grey benign cell in the timeline"
