"""The timeline shows what happened: a failing disk's medium errors are errors (red in the HTML
chart), never 'no fault', while what only benign-noise rules account for stays grey."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagdisk.report import charts
from diagdisk.report.html import render_html

from end_to_end.test_corpus import run_case

REPO = Path(__file__).resolve().parents[2]
SDC = "2:0:2:0"


@pytest.fixture(scope="module")
def demo() -> dict:
    return run_case(REPO / "samples" / "demo-sosreport")


def test_the_failing_disks_medium_errors_are_not_benign(demo):
    assert demo["verdict"]["status"] == "failure"
    sense = [entry for entry in demo["timeline"] if entry["device"] == SDC and entry["kind"] == "sense"]
    assert sum(entry["count"] for entry in sense) == 3   # the three medium errors of the verdict
    assert not any(entry["benign"] for entry in sense)
    # every error the event summary counts on sdc is drawn as one
    errors = {entry["kind"] for entry in demo["timeline"] if entry["device"] == SDC and not entry["benign"]}
    assert {"sense", "io_error", "md_failure"} <= errors


def test_news_that_things_work_is_still_benign(demo):
    # md's redirect of a read to the other mirror reports no trouble of its own
    redirects = [entry for entry in demo["timeline"] if entry["kind"] == "md_redirect"]
    assert redirects and all(entry["benign"] for entry in redirects)


def test_the_html_timeline_draws_the_medium_errors_red(demo):
    page = render_html(demo)
    start = page.index('aria-label="Timeline of events per device"')
    svg = page[start:page.index("</svg>", start)]
    assert "errors (darker = more" in svg
    # the sdc lane alone: error shades, no grey 'no fault' cell
    sense = [entry for entry in demo["timeline"] if entry["device"] == SDC and entry["kind"] == "sense"]
    alone = charts.timeline_chart(sense).svg
    colours = alone.lower()
    assert charts.BENIGN_COLOR.lower() not in colours and "no fault" not in alone
    assert charts.ERROR_COLOR_HIGH.lower() in colours or charts.ERROR_COLOR_LOW.lower() in colours
