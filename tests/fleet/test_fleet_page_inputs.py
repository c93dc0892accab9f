"""fleet.html says what a run did: it links the HTML pages --html wrote, names every input it did
not analyse (failed, before --since, or a file beside the inputs that is no input), and names a
controller driver by its module (mpt3sas), not by the first word of its SCSI host template."""

from __future__ import annotations

from pathlib import Path

from diagdisk.diagnosis.analysis import analyze
from diagdisk.fleet.job import controller_driver, holdings
from diagdisk.fleet.page import render_fleet_page
from diagdisk.fleet.run import FleetSummary

from html_dom import parse
from test_fleet_page import _fleet, _row

DEMO = Path(__file__).resolve().parents[2] / "samples" / "demo-sosreport"


def test_the_action_table_links_the_html_page_when_the_run_wrote_one():
    rows, held, summary = _fleet()
    json_links = [a.attrs["href"] for a in parse(render_fleet_page(rows, held, summary)).by_id("action").find_all("a")]
    html_links = [a.attrs["href"] for a in parse(render_fleet_page(rows, held, summary, html_reports=True))
                  .by_id("action").find_all("a")]
    assert json_links and all(link.endswith(".json") for link in json_links)
    assert html_links == [link[:-len(".json")] + ".html" for link in json_links]


def test_every_input_not_analysed_is_listed():
    rows, held, _ = _fleet()
    rows.append(_row("old1", outcome="excluded", reason="report date 2023-01-02 is before --since"))
    summary = FleetSummary(total=8, analysed=6, failed=1, excluded=1,
                           notes=["/cases/README.md: not read: beside sosreports only logs are read"])
    table = parse(render_fleet_page(rows, held, summary)).by_id("failed")
    cells = [[cell.words() for cell in row.find_all("td")] for row in table.find("tbody").find_all("tr")]
    assert [row[0] for row in cells] == ["/cases/bad1.tar.xz", "/cases/old1.tar.xz", "/cases/README.md"]
    assert cells[1][1] == "report date 2023-01-02 is before --since"
    assert cells[2][1].startswith("not read: beside sosreports")
    assert "Every input was analysed" not in table.words()
    only_notes = parse(render_fleet_page([r for r in rows if r["outcome"] == "analysed"], held, summary)).by_id("failed")
    assert "Every input was analysed" not in only_notes.words() and "README.md" in only_notes.words()


def test_the_controller_driver_is_the_module_not_the_host_template_name():
    analysis = analyze([str(DEMO)])
    # the demo's host 2 says "scsi host2: Fusion MPT SAS Host"; its adapter lines are mpt3sas_cm0's
    assert any(e.get("driver") == "Fusion" for e in analysis.events)
    assert controller_driver(analysis, {"hctl": "2:0:2:0", "device": "sdc"}) == "mpt3sas"
    assert "Fusion" not in holdings({"devices": []}, analysis)["drivers"]
    assert "mpt3sas" in holdings({"devices": []}, analysis)["drivers"]
