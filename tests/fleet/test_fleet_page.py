"""fleet.html: structure (parsed), the patterns across hosts first, order of the hosts needing
action, rates, the timeline only when dates span weeks, escaping, and a real browser rendering it
with a quiet console."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from diagdisk.fleet.page import MAX_ACTION_ROWS, render_fleet_page
from diagdisk.fleet.run import FleetSummary

from html_dom import parse
from test_cohorts import _fleet as cohort_fleet

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _row(host, verdict="healthy", severity=None, confidence=None, fru=None, model=None, firmware=None, driver=None,
         date="2024-03-01T10:00:00", outcome="analysed", reason=None):
    return {"host": host, "input": f"/cases/{host}.tar.xz", "outcome": outcome, "failure_reason": reason,
            "verdict": verdict, "severity": severity, "confidence": confidence, "top_fru": fru, "top_model": model,
            "top_firmware": firmware, "top_driver": driver, "top_hctl": "0:0:1:0" if fru == "disk" else None,
            "top_device": "sdb" if fru == "disk" else None, "report_date": date,
            "report_file": f"reports/{host}_{date[:10]}_0123456789ab.json" if outcome == "analysed" else None}


def _fleet(days=1):
    start = datetime(2024, 3, 1)
    rows = [
        _row("db1", "failure", "critical", 0.9, "disk", "ST4000NM", "SN04", "mpt3sas", date=start.isoformat()),
        _row("db2", "failure", "critical", 0.98, "disk", "ST4000NM", "SN06", "mpt3sas",
             date=(start + timedelta(days=days)).isoformat()),
        _row("web1", "suspect", "medium", 0.99, "cable", "WD40EFRX", "82.00A82", "ahci"),
        _row("web2", "degraded", "high", 0.5, "controller", None, None, "megaraid_sas"),
        _row("app1"), _row("app2"),
        _row("bad1", outcome="failed", reason="not a tar archive (no gzip, xz, bzip2 or tar signature)"),
    ]
    holdings = [{"models": {"ST4000NM": 4}, "firmware": {"ST4000NM SN04": 2, "ST4000NM SN06": 2}, "drivers": ["mpt3sas"]},
                {"models": {"ST4000NM": 4}, "firmware": {"ST4000NM SN06": 4}, "drivers": ["mpt3sas"]},
                {"models": {"WD40EFRX": 2}, "firmware": {"WD40EFRX 82.00A82": 2}, "drivers": ["ahci"]},
                {"models": {}, "firmware": {}, "drivers": ["megaraid_sas"]}, {}, {}, {}]
    summary = FleetSummary(total=7, analysed=6, failed=1)
    return rows, holdings, summary


@pytest.fixture(scope="module")
def page():
    return parse(render_fleet_page(*_fleet()))


def _cohorts(inventory=None):
    from diagdisk.fleet.cohorts import compute_cohorts
    return compute_cohorts(cohort_fleet(), inventory)


def _with_cohorts(days=1, inventory=None):
    rows, holdings, summary = _fleet(days)
    cohorts = _cohorts(inventory)
    rows[0]["fleet_pattern"] = cohorts.row_patterns["/in/bad000-0.tar.gz"]
    cohorts.row_pattern_ids[rows[0]["input"]] = cohorts.row_pattern_ids["/in/bad000-0.tar.gz"]
    return render_fleet_page(rows, holdings, summary, cohorts)


def test_patterns_across_hosts_come_first():
    dom = parse(_with_cohorts())
    sections = dom.find("main").find_all("section")
    assert [s.attrs["id"] for s in sections][:2] == ["patterns", "action"]
    flagged = _cells(sections[0].by_id("flagged-cohorts"))
    assert flagged == [["drive firmware", "Samsung SSD 970 EVO 500GB BAD1", "12 of 40", "30% (18%\u201345%)", "4.5%",
                        flagged[0][5], "io error (nvme), nvme reset controller down (nvme) on 12 of 40 hosts"]]
    assert float(flagged[0][5]) < 0.05
    patterns = sections[0].by_id("pattern-list").find_all("li")
    assert [li.attrs["id"] for li in patterns] == ["pattern-1"]
    assert patterns[0].words().startswith("io error (nvme), nvme reset controller down (nvme) on 12 of 40 nvme hosts")
    # the host's row names its pattern and links to the section
    action = dom.by_id("action")
    links = [a for a in action.find_all("a") if a.attrs["href"] == "#pattern-1"]
    assert len(links) == 1
    assert links[0].words().startswith("replace sdb, or update the drive firmware: the same fault on 11 other hosts "
                                       "with drive firmware Samsung SSD 970 EVO 500GB BAD1")


def test_without_a_flagged_cohort_the_section_says_so():
    from diagdisk.fleet.cohorts import compute_cohorts
    rows, holdings, summary = _fleet()
    quiet = compute_cohorts(cohort_fleet(planted_failing=1))
    section = parse(render_fleet_page(rows, holdings, summary, quiet)).by_id("patterns")
    assert "No cohort fails above the fleet's rate beyond chance" in section.words()
    assert f"({len(quiet.cohorts)} cohorts tested;" in section.words()
    assert section.find_all(id="pattern-list") == []


def _cells(section):
    return [[cell.words() for cell in row.find_all("td")] for row in section.find("tbody").find_all("tr")]


def test_hosts_needing_action_come_by_severity_then_confidence(page):
    rows = _cells(page.by_id("action"))
    assert [row[0] for row in rows] == ["db2", "db1", "web2", "web1"]
    assert rows[0][1:5] == ["failure", "critical", "disk", "0:0:1:0 sdb"]
    assert rows[0][7] == "0.98"
    link = page.by_id("action").find("a")
    assert link.attrs["href"] == "reports/db2_2024-03-02_0123456789ab.json"


def test_charts_count_failures_and_rates_by_model_firmware_driver_and_part(page):
    def bars(chart_id):
        figure = page.by_id(f"chart-{chart_id}")
        texts = [t.words() for t in figure.find("svg").find_all("text")]
        return list(zip(texts[0::2], texts[1::2]))
    assert bars("model") == [("ST4000NM", "2, 25.0% of 8")]
    assert bars("firmware") == [("ST4000NM SN04", "1, 50.0% of 2"), ("ST4000NM SN06", "1, 16.7% of 6")]
    assert bars("driver") == [("mpt3sas", "2, 100.0% of 2"), ("ahci", "1, 100.0% of 1"),
                              ("megaraid_sas", "1, 100.0% of 1")]
    assert bars("fru")[0] == ("disk", "2, 33.3% of 6")


def test_failed_inputs_are_listed_with_their_reason(page):
    assert _cells(page.by_id("failed")) == [["/cases/bad1.tar.xz", "not a tar archive (no gzip, xz, bzip2 or tar signature)"]]


def test_timeline_only_when_report_dates_span_weeks():
    assert parse(render_fleet_page(*_fleet(days=3))).find_all(id="timeline") == []
    weeks = parse(render_fleet_page(*_fleet(days=40))).by_id("timeline")
    bars = weeks.find("svg").find_all("rect")
    assert len(bars) == 2 * 7  # inputs and failures for each week, 2024-02-26 to the week of 2024-04-10
    titles = [bar.find("title").words() for bar in bars]
    assert "week of 2024-02-26: 5 inputs" in titles and "week of 2024-02-26: 3 needing action" in titles


def test_cohort_values_from_an_inventory_are_escaped():
    inventory = {f"bad{i:03d}": {"rack": HOSTILE} for i in range(40)}
    inventory.update({f"good{i:03d}": {"rack": f"r{i % 10}"} for i in range(400)})
    html = _with_cohorts(inventory=inventory)
    assert "<script>" not in html and "<img" not in html
    section = parse(html).by_id("patterns")
    assert HOSTILE in section.by_id("flagged-cohorts").text()


def test_every_string_from_an_input_is_escaped_and_nothing_is_fetched():
    rows, holdings, summary = _fleet()
    rows[0]["host"] = HOSTILE
    rows[0]["top_model"] = HOSTILE
    rows[-1]["failure_reason"] = HOSTILE
    html = render_fleet_page(rows, holdings, summary)
    assert "<script>" not in html and "<img" not in html
    dom = parse(html)
    assert HOSTILE in dom.by_id("action").words() or HOSTILE.replace("  ", " ") in dom.by_id("action").text()
    policy = dom.find("meta", **{"http-equiv": "Content-Security-Policy"}).attrs["content"]
    assert "default-src 'none'" in policy
    assert not [e for e in dom.iter() if e.tag in ("script", "link", "iframe", "object")]


def test_a_huge_fleet_page_stays_bounded():
    rows, holdings, summary = _fleet()
    many = [dict(rows[0], host=f"db{i}", input=f"/cases/db{i}") for i in range(5000)]
    html = render_fleet_page(many, holdings * 700, summary)
    dom = parse(html)
    assert len(dom.by_id("action").find("tbody").find_all("tr")) == MAX_ACTION_ROWS
    assert "4500 more in fleet.parquet" in dom.by_id("action").words()
    assert len(html) < 400_000


def test_a_real_browser_renders_the_fleet_page_with_a_quiet_console(tmp_path):
    from test_html_browser import console_messages, run_chromium
    path = tmp_path / "fleet.html"
    path.write_text(_with_cohorts(days=40), encoding="utf-8")
    result = run_chromium(path, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_messages(result.stderr) == []
    dom = parse(result.stdout)
    assert dom.find("main").find("section").attrs["id"] == "patterns"
    assert "Samsung SSD 970 EVO 500GB BAD1" in dom.by_id("flagged-cohorts").words()
    assert dom.by_id("pattern-1")
    assert [row[0] for row in _cells(dom.by_id("action"))] == ["db2", "db1", "web2", "web1"]
    assert dom.by_id("timeline").find("svg")
    shot = tmp_path / "fleet.png"
    result = run_chromium(path, f"--screenshot={shot}")
    assert result.returncode == 0 and console_messages(result.stderr) == []
    image_module = pytest.importorskip("PIL.Image", reason="Pillow (a matplotlib dependency) decodes the PNG")
    with image_module.open(shot) as image:
        colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert (0x1B, 0x2A, 0x3A) in colours, "the masthead was not drawn"
    assert (0xB3, 0x26, 0x1E) in colours, "the failure bars and badges were not drawn"
