"""The HTML report reads as prose and log text should: evidence lines wrap between words (a long
token may still break, a word like DRIVER_SENSE does not), each evidence line is shown under the
first finding that cites it only, and what the verdict stands on is written in sentences."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagdisk.report.html import render_html

from end_to_end.test_corpus import run_case
from html_dom import parse

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def shared_evidence() -> dict:
    # a controller-wide reset: three rules (DD306, DD310, DD330) cite the same syslog lines
    return run_case(REPO / "samples" / "controller-wide-resets-mpt2sas-host0")


def test_evidence_lines_wrap_between_words_not_inside_them():
    css = (REPO / "diagdisk" / "report" / "templates" / "report.css").read_text()
    rule = re.search(r"ol\.log code \{([^}]*)\}", css).group(1)
    assert "break-all" not in rule and "overflow-wrap: anywhere" in rule and "pre-wrap" in rule


def test_an_evidence_line_is_shown_under_one_finding_only(shared_evidence):
    cited = {}
    for finding in shared_evidence["findings"]:
        for line in finding["evidence"]:
            cited.setdefault((line["source"], line["line"]), set()).add(finding["rule"])
    assert any(len(rules) > 1 for rules in cited.values())   # the report cites some lines more than once
    page = parse(render_html(shared_evidence))
    shown = [item.words() for article in page.find_all("article") if "finding" in article.attrs.get("class", "")
             for item in article.find_all("li")]
    assert shown and len(shown) == len(set(shown))
    notes = [p.words() for p in page.find_all("p") if "evidence-above" in p.attrs.get("class", "")]
    assert notes and all(re.fullmatch(r"\d+ more evidence lines? shown under DD\d{3} above\.", n) for n in notes)


def test_what_the_verdict_stands_on_is_written_in_sentences(shared_evidence):
    words = parse(render_html(shared_evidence)).by_id("coverage-kernel").words()
    assert re.search(r"\)\. (SMART data for|No SMART data)", words), words
