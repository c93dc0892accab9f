"""The HTML incident report: structure (parsed), escaping, self-containment, tolerance, size bound."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from diagdisk.errors import InputError
from diagdisk.report import charts, html
from diagdisk.report.html import render_html

from html_dom import parse
from huge_report import make_huge_report

FIXTURE = Path(__file__).parent / "fixtures" / "report_medium_error.json"

# The page for a million-error log must stay this small (it is mailed and attached to tickets).
HUGE_PAGE_BOUND_BYTES = 768 * 1024

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def report() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(report):
    return parse(render_html(report))


def table_rows(section):
    return [[cell.words() for cell in row.find_all("td")] for row in section.find("tbody").find_all("tr")]


def test_sections_come_in_order_of_importance(page):
    ids = [element.attrs["id"] for element in page.find("main").children
           if not isinstance(element, str) and element.tag == "section"]
    assert ids == ["verdict", "suspects", "timeline", "devices", "md-arrays", "inventory", "sources"]


def test_verdict_names_what_to_replace(page, report):
    verdict = page.by_id("verdict")
    assert "status-failure" in verdict.classes()
    assert page.by_id("verdict-title").words() == "Hardware failure"
    assert page.by_id("verdict-summary").words() == report["verdict"]["summary"]
    replace = verdict.find(class_="replace")
    assert replace.find(class_="action-label").words() == "Replace disk"
    assert replace.find(class_="action-target").words() == "sdb"
    fields = {item.find("dt").words(): item.find("dd").words() for item in replace.find("dl").find_all("div")}
    assert fields["H:C:T:L"] == "0:0:1:0"
    assert fields["Serial"] == "3HZ0JRT200009518"
    assert fields["Model"] == "SEAGATE ST373307LC"
    assert fields["md arrays affected"] == "md0, md1"
    assert fields["Confidence"].startswith("92%")
    assert "Unrecovered read errors reported by the drive" in replace.find(class_="reason").words()


def test_suspects_table_lists_every_suspect_in_rank_order(page):
    rows = table_rows(page.by_id("suspects"))
    assert [row[3] for row in rows] == ["sdb", "host0"]
    assert rows[0][1] == "disk" and rows[1][1] == "cable"
    assert rows[0][6] == "md0, md1"


def test_findings_show_explanation_action_and_evidence_with_file_and_line(page):
    findings = page.by_id("suspects").find_all("article", class_="finding")
    assert [finding.find(class_="rule").words() for finding in findings] == ["DD101", "DD501", "DD310"]
    first_line = findings[0].find("ol", class_="log").find("li")
    assert first_line.find(class_="where").words() == "var/log/messages:40117"
    assert "FAILED Result: hostbyte=DID_OK" in first_line.find("code").words()


def test_timeline_is_an_inline_svg_with_one_lane_per_device(page):
    figure = page.by_id("timeline").find("figure")
    svg = figure.find("svg")
    assert svg.attrs["role"] == "img"
    lane_labels = [text.words() for text in svg.find_all("text")]
    for lane in ("sdb", "host0", "sda", "md0", "md1"):
        assert lane in lane_labels
    assert {"reset", "md state change"} <= set(lane_labels)


def test_suspect_device_card_comes_first_with_decoded_evidence(page):
    cards = page.by_id("devices").find_all("article", class_="card")
    sdb = cards[0]
    assert sdb.find("h3").words() == "sdb"
    assert "suspect" in sdb.classes()
    assert "SMART failed" in [tag.words() for tag in sdb.find_all(class_="tag")]
    decoded = table_rows(sdb.find("table", class_="decoded"))
    medium = next(row for row in decoded if row[2] == "11/00")
    assert medium[1] == "MEDIUM ERROR" and medium[4] == "6"
    assert "102498376" in sdb.find(class_="lba").words()
    assert "grown_defects:1842" in sdb.find(class_="smart").words()
    places = [line.find(class_="where").words() for line in sdb.find("ol", class_="log").find_all("li")]
    assert "sos_commands/kernel/dmesg:1802" in places
    assert len(places) == len(set(places)), "an evidence line shared by two findings is shown once"
    # The second suspect (the bus, named host0) has its own card; sda has one for its UNIT ATTENTION.
    assert [card.find("h3").words() for card in cards[1:]] == ["host0", "sda"]
    assert "suspect #2" in cards[1].find("header").words()
    assert "bus reset" in cards[1].find("table", class_="decoded").words()   # kinds by their label


def test_asc_ascq_meaning_comes_from_the_decoder_when_it_is_there(report, monkeypatch):
    describe = pytest.importorskip("diagdisk.decode.asc_ascq").describe
    page = parse(render_html(report))
    rows = table_rows(page.by_id("devices").find("table", class_="decoded"))
    assert next(row for row in rows if row[2] == "11/00")[3] == describe(0x11, 0x00)

    monkeypatch.setattr(html, "_describe_function", lambda: None)
    rows = table_rows(parse(render_html(report)).by_id("devices").find("table", class_="decoded"))
    assert next(row for row in rows if row[2] == "11/00")[3] == "\u2014"


def test_md_arrays_inventory_and_sources(page, report):
    arrays = table_rows(page.by_id("md-arrays"))
    assert arrays[0] == ["md0", "raid1", "degraded", "1 / 2", "sda1, sdb1", "sdb1"]
    inventory = table_rows(page.by_id("inventory"))
    assert [row[0] for row in inventory] == [device["hctl"] for device in report["devices"]]
    assert inventory[1][:7] == ["0:0:1:0", "sdb", "disk", "SEAGATE", "ST373307LC", "0007", "3HZ0JRT200009518"]
    sources = page.by_id("sources")
    assert [row[0] for row in table_rows(sources)] == [source["path"] for source in report["sources"]]
    assert sources.find(class_="totals").words().startswith("7 files, 171,096 lines, 84 events, 2 unparsed")
    assert [item.words() for item in sources.find("ul", class_="missing").find_all("li")] == report["missing_sources"]


def test_footer_names_tool_version_and_input(page):
    footer = page.find("footer").words()
    assert "diagdisk 0.1.0" in footer
    assert "sosreport-db1-2026-11-20-abcdef" in footer


def _hostile_report(report: dict) -> dict:
    hostile = copy.deepcopy(report)
    hostile["findings"][0]["evidence"][0]["text"] = "sd 0:0:1:0: [sdb] " + HOSTILE
    hostile["findings"][0]["title"] = HOSTILE
    hostile["verdict"]["summary"] = HOSTILE
    hostile["host"]["hostname"] = HOSTILE
    hostile["input"] = HOSTILE
    hostile["sources"][0]["path"] = HOSTILE
    hostile["sources"][0]["warnings"] = [HOSTILE]
    hostile["devices"][1]["model"] = HOSTILE
    hostile["devices"][1]["name"] = 'sdb" onmouseover="alert(1)'
    hostile["md_arrays"][0]["state"] = '"><script>alert(2)</script>'
    hostile["missing_sources"] = [HOSTILE]
    hostile["timeline"][0]["device"] = HOSTILE
    return hostile


def test_every_log_string_is_escaped(report):
    page_text = render_html(_hostile_report(report))
    page = parse(page_text)
    assert page.find_all("script") == []
    assert page.find_all("img") == []
    for element in page.iter():
        assert not any(name.startswith("on") for name in element.attrs), f"event handler on <{element.tag}>"
    assert HOSTILE in page.by_id("verdict-summary").words()
    assert any(HOSTILE in code.words() for code in page.find_all("code"))
    assert HOSTILE in [label.words() for label in page.by_id("timeline").find_all("text")]


def test_nothing_is_fetched_from_anywhere(page):
    for element in page.iter():
        for name in ("src", "href", "srcset", "action", "data", "poster", "background"):
            value = element.attrs.get(name)
            assert value is None or value.startswith("#"), f"<{element.tag} {name}={value!r}>"
    assert page.find_all("link") == [] and page.find_all("script") == [] and page.find_all("iframe") == []
    styles = " ".join(style.text() for style in page.find_all("style"))
    assert not re.search(r"url\(\s*['\"]?(?!#)", styles) and "@import" not in styles
    for element in page.iter():
        assert not re.search(r"url\(\s*['\"]?(?!#)", element.attrs.get("style") or "")
    policy = page.find("meta", **{"http-equiv": "Content-Security-Policy"}).attrs["content"]
    assert "default-src 'none'" in policy


def test_page_prints_on_a4(page):
    styles = " ".join(style.text() for style in page.find_all("style"))
    assert "@media print" in styles and "size: A4" in styles and "break-inside: avoid" in styles


@pytest.mark.parametrize("minimal", [
    {},
    {"schema": "diagdisk.report/1"},
    {"schema": "diagdisk.report/1", "findings": [], "timeline": [], "devices": [], "verdict": {"status": "healthy",
     "summary": "No hardware fault found in 2 sources.", "suspects": []}},
    {"verdict": None, "findings": None, "host": None, "sources": None, "devices": [{}], "md_arrays": [{}],
     "event_summary": [{}], "sectors": None, "timeline": [{}], "time_span": None},
])
def test_missing_or_empty_optional_keys_still_render(minimal):
    page = parse(render_html(minimal))
    assert page.by_id("verdict-title").words()
    assert page.by_id("verdict-summary").words()
    assert page.by_id("sources") and page.by_id("inventory")


def test_healthy_report_says_so_and_names_no_part(report):
    healthy = copy.deepcopy(report)
    healthy.update(findings=[], verdict={"status": "healthy", "summary": "No hardware fault found.", "suspects": []})
    page = parse(render_html(healthy))
    assert page.by_id("verdict-title").words() == "No hardware fault found"
    assert page.by_id("verdict").find_all(class_="replace") == []
    assert "No suspect part" in page.by_id("suspects").words()


def test_uptime_only_timeline_is_skipped_with_a_note(report):
    uptime_only = copy.deepcopy(report)
    for bucket in uptime_only["timeline"]:
        bucket["start"] = bucket["end"] = None
    section = parse(render_html(uptime_only)).by_id("timeline")
    assert section.find_all("svg") == []
    assert "uptime-relative" in section.find(class_="empty").words()


@pytest.mark.parametrize("bad, message", [
    ([1, 2], "expected a report object"),
    ({"schema": "diagdisk.report/9"}, "unsupported report schema"),
])
def test_bad_input_is_an_input_error(bad, message):
    with pytest.raises(InputError, match=message):
        render_html(bad)


def test_million_error_report_stays_small():
    # how fast it renders is a benchmark's business, not a test's (no test depends on the clock)
    huge = make_huge_report(errors=1_000_000)
    page_text = render_html(huge)
    size = len(page_text.encode("utf-8"))
    assert size <= HUGE_PAGE_BOUND_BYTES, f"page is {size:,} bytes"

    page = parse(page_text)
    first_finding = page.by_id("suspects").find("article", class_="finding")
    assert len(first_finding.find("ol", class_="log").find_all("li")) == html.MAX_EVIDENCE_PER_FINDING
    assert "999,992 more evidence lines not shown" in first_finding.find(class_="more").words()
    assert "\u2026 [999,400 more characters]" in first_finding.words()
    sdb = page.by_id("devices").find("article", class_="card")
    assert "1,000,000" in sdb.find(class_="lba").words()
    assert len(sdb.find(class_="lba").find_all("code")) == html.MAX_SECTORS_PER_DEVICE
    assert len(table_rows(page.by_id("inventory"))) == html.MAX_INVENTORY_ROWS
    assert "112 more devices not shown" in page.by_id("inventory").words()
    assert len(page.by_id("devices").find_all("article", class_="card")) == html.MAX_DEVICE_CARDS
    lanes = {text.words() for text in page.by_id("timeline").find("svg").find_all("text")}
    assert "sdb" in lanes and "host0" in lanes and "95 other devices" in lanes


def test_timeline_chart_rebins_and_folds_lanes():
    timeline = [{"start": f"2026-11-20T{hour:02d}:{minute:02d}:00+00:00", "end": None, "device": f"sd{device}",
                 "kind": "sense", "count": 1} for hour in range(24) for minute in range(60) for device in "abcdefghij"]
    chart = charts.timeline_chart(timeline, ["sdj"], max_lanes=4, max_bins=30)
    svg = parse(chart.svg)
    labels = [text.words() for text in svg.find_all("text")]
    assert "sdj" in labels and "7 other devices" in labels and "sdd" not in labels
    patches = [group for group in svg.find_all("g") if group.attrs.get("id", "").startswith("dd-timeline-patch_")]
    # One shaded cell per lane and column at most, plus the figure, axes and legend backgrounds.
    assert 4 * 30 <= len(patches) <= 4 * 30 + 6
    assert "folded" in chart.note


def test_chart_svg_is_cleaned_of_outside_references():
    drawn = charts.timeline_chart([{"start": "2026-11-20T10:00:00Z", "end": "2026-11-20T10:01:00Z",
                                    "device": "sdb", "kind": "bus_reset", "count": 2}])
    assert "<!DOCTYPE" not in drawn.svg and "<metadata" not in drawn.svg and "<style" not in drawn.svg
    assert "http" not in re.sub(r'xmlns(:\w+)?="[^"]*"', "", drawn.svg)
    ids = set(re.findall(r'\bid="([^"]+)"', drawn.svg))
    assert ids and all(element_id.startswith("dd-timeline-") for element_id in ids)
    for target in re.findall(r'href="#([^"]+)"', drawn.svg) + re.findall(r"url\(#([^)]+)\)", drawn.svg):
        assert target in ids

    outside = '<svg xmlns="http://www.w3.org/2000/svg"><image href="http://example.com/x.png"/></svg>'
    with pytest.raises(ValueError, match="outside the document"):
        charts.clean_svg(outside, "p-", "label")


def test_event_kinds_map_to_chart_marks():
    assert [charts.event_category(kind) for kind in ("bus_reset", "host_reset", "md_degraded", "sense", None)] == [
        "reset", "reset", "md", "error", "error"]


def test_times_are_shown_in_utc_or_with_their_offset():
    assert html.format_time("2026-11-20T07:58:31+00:00") == "2026-11-20 07:58:31 UTC"
    assert html.format_time("2026-11-20T07:58:31+05:30") == "2026-11-20 07:58:31 +05:30"
    assert html.format_time("[12.345]") == "[12.345]"
    assert html.format_time(None) == "\u2014"


def test_importing_the_html_report_does_not_import_matplotlib():
    code = "import sys, diagdisk.report.html; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[3])
    assert result.stdout.strip() == "False"
