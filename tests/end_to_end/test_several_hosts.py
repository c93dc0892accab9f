"""One verdict per host: several hosts in one call give one report each, as if each was analysed alone."""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
DEMO = SAMPLES / "demo-sosreport"
NVME = SAMPLES / "nvme-media-errors-nvme1"
MDRAID = SAMPLES / "md-raid1-degraded-sdb"


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def alone(path) -> dict:
    result = run("analyze", path, "--format", "json", "-j", "1")
    assert result.exit_code == 0, result.stderr
    (report,) = reports_of(result)
    return report


def reports_of(result) -> list[dict]:
    """The reports `--format json` printed: one shape for one host or many."""
    document = json.loads(result.stdout)
    assert document["schema"] == "diagdisk.reports/1"
    return document["reports"]


def comparable(report: dict) -> dict:
    """What must not depend on the other hosts named in the same call."""
    report = dict(report)
    report.pop("generated")
    report.pop("input")
    return report


def make_archive(folder: Path, archive: Path, top: str) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=top)
    return archive


def test_two_sosreports_give_two_reports_each_as_if_alone():
    result = run("analyze", DEMO, NVME, "--format", "json", "-j", "1")
    assert result.exit_code == 0, result.stderr
    reports = reports_of(result)
    assert [r["host"]["hostname"] for r in reports] == ["pgdb02", "ws-build7"]
    assert [r["input"] for r in reports] == [str(DEMO), str(NVME)]
    assert comparable(reports[0]) == comparable(alone(DEMO))
    assert comparable(reports[1]) == comparable(alone(NVME))
    # nvme1 is ws-build7's disk, never pgdb02's
    assert "nvme1" not in reports[0]["verdict"]["summary"]
    assert "nvme1" in reports[1]["verdict"]["summary"]


def test_text_gives_one_block_per_host_each_opened_by_its_verdict():
    result = run("analyze", DEMO, NVME, "-j", "1")
    assert result.exit_code == 0, result.stderr
    blocks = result.stdout.split("=== ")[1:]
    assert len(blocks) == 2
    assert blocks[0].startswith("pgdb02: FAILURE: Replace disk 2:0:2:0 (sdc")
    assert blocks[1].startswith("ws-build7: FAILURE: Replace disk nvme1")
    assert "host ws-build7" in blocks[1] and "host ws-build7" not in blocks[0]


def test_a_folder_of_thirteen_sosreports_gives_thirteen_reports_and_reads_no_readme():
    result = run("analyze", SAMPLES, "--format", "json", "-j", "1")
    assert result.exit_code == 0, result.stderr
    reports = reports_of(result)
    samples = sorted(path for path in SAMPLES.iterdir() if path.is_dir())
    assert sorted(r["input"] for r in reports) == [str(path) for path in samples]
    for report in reports:
        assert not any(source["path"].endswith("README.md") for source in report["sources"])
        assert comparable(report) == comparable(alone(report["input"]))
    assert "README.md: not read" in result.stderr


def test_archives_in_a_case_folder_give_one_file_per_host_with_o_dir(tmp_path):
    case = tmp_path / "case"
    case.mkdir()
    make_archive(DEMO, case / "sosreport-pgdb02-03791234-2024-03-20-abcde.tar.xz", "sosreport-pgdb02")
    make_archive(NVME, case / "from-customer.tar.gz", "sosreport-unnamed")
    out = tmp_path / "reports"
    result = run("analyze", case, "--format", "json", "-o", f"{out}/", "-j", "1")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["pgdb02.json", "ws-build7.json"]
    demo = json.loads((out / "pgdb02.json").read_text())
    assert comparable(demo)["verdict"] == alone(DEMO)["verdict"]
    assert demo["host"] == alone(DEMO)["host"]


def test_html_gives_one_page_per_host_and_an_index(tmp_path):
    out = tmp_path / "pages"
    out.mkdir()
    result = run("analyze", DEMO, NVME, SAMPLES / "benign-noise-healthy", "--format", "html", "-o", out, "-j", "1")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["app-web4.html", "index.html", "pgdb02.html", "ws-build7.html"]
    index = (out / "index.html").read_text()
    # hosts needing action first, each linking its page
    assert index.index('href="pgdb02.html"') < index.index('href="app-web4.html"')
    assert index.index('href="ws-build7.html"') < index.index('href="app-web4.html"')
    assert "Content-Security-Policy" in index and "<script" not in index
    assert "pgdb02" in (out / "pgdb02.html").read_text()


@pytest.mark.parametrize("extra", [["-o", "report.json", "--format", "json"], ["-o", "report.html", "--format", "html"],
                                   ["--format", "html"], ["-o", "report.txt"]])
def test_one_report_file_for_several_hosts_is_refused_naming_them(tmp_path, extra, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("analyze", DEMO, NVME, *extra)
    assert result.exit_code == ExitCode.BAD_INPUT
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "2 hosts (pgdb02, ws-build7)" in lines[0]
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_one_host_with_o_file_still_writes_one_report(tmp_path):
    target = tmp_path / "r.json"
    result = run("analyze", DEMO, "--format", "json", "-o", target, "-j", "1")
    assert result.exit_code == 0, result.stderr
    (report,) = json.loads(target.read_text())["reports"]
    assert report["host"]["hostname"] == "pgdb02"


def test_a_sosreport_and_a_pasted_log_of_its_host_still_merge(tmp_path):
    pasted = tmp_path / "pasted.log"
    pasted.write_text("2024-03-19T05:00:00.000000+00:00 pgdb02 kernel: sd 2:0:2:0: [sdc] tag#7 Sense Key : "
                      "Medium Error [current] [descriptor]\n")
    result = run("analyze", DEMO, pasted, "--format", "json", "-j", "1")
    assert result.exit_code == 0, result.stderr
    (report,) = reports_of(result)    # one host: one report
    assert report["input"] == f"{DEMO}, {pasted}"
    assert report["time_span"]["last"].startswith("2024-03-19T05:00:00")


def _yearless_sosreport(folder: Path, host: str, date: str) -> Path:
    (folder / "proc").mkdir(parents=True)
    (folder / "var/log").mkdir(parents=True)
    (folder / "hostname").write_text(f"{host}\n")
    (folder / "date").write_text(f"{date}\n")
    (folder / "var/log/messages").write_text(
        f"Mar  2 18:07:17 {host} kernel: sd 0:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
        f"Mar  2 18:07:17 {host} kernel: sd 0:0:1:0: [sdb] tag#3 Add. Sense: Unrecovered read error\n")
    return folder


def test_year_less_logs_are_dated_with_their_own_hosts_year(tmp_path):
    old = _yearless_sosreport(tmp_path / "old", "oldhost", "Tue Mar  5 10:00:00 UTC 2019")
    new = _yearless_sosreport(tmp_path / "new", "newhost", "Wed Mar  6 10:00:00 UTC 2024")
    result = run("analyze", new, old, "--format", "json", "-j", "1")
    assert result.exit_code == 0, result.stderr
    years = {r["host"]["hostname"]: r["time_span"]["first"][:4] for r in reports_of(result)}
    assert years == {"newhost": "2024", "oldhost": "2019"}


def test_events_of_several_hosts_say_whose_they_are():
    result = run("events", DEMO, NVME, "--format", "csv", "-j", "1")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    hosts = {row["host"] for row in rows}
    assert hosts == {"pgdb02", "ws-build7"}
    assert all(row["host"] == "ws-build7" for row in rows if "nvme1" in (row.get("device") or ""))


def test_fail_on_counts_every_hosts_findings():
    result = run("analyze", SAMPLES / "benign-noise-healthy", NVME, "--fail-on", "high", "-j", "1")
    assert result.exit_code == ExitCode.FINDINGS


def test_host_labels_from_folder_names_reach_the_terminal_escaped(tmp_path):
    """A host with no name of its own is named by its folder, which anyone could have named."""
    hostile = tmp_path / "case\x1b]0;owned\x07\x1b[2J"
    hostile.mkdir()
    (hostile / "proc").mkdir()
    (hostile / "var/log").mkdir(parents=True)
    (hostile / "var/log/messages").write_text("Mar  2 18:07:17 localhost kernel: sd 0:0:0:0: [sda] Attached SCSI disk\n")
    result = run("analyze", hostile, NVME, "-j", "1")
    assert result.exit_code == 0, result.stderr
    headline = next(line for line in result.stdout.splitlines() if line.startswith("=== case"))
    assert "\x1b" not in headline and "\x07" not in headline
    assert headline.startswith("=== case\\x1b]0;owned\\x07\\x1b[2J: HEALTHY")


def test_brief_over_several_hosts_is_one_verdict_line_a_host():
    result = run("analyze", DEMO, NVME, "--brief", "-j", "1")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == 3
    assert lines[0].startswith("=== pgdb02: FAILURE: ") and lines[1].startswith("=== ws-build7: FAILURE: ")
