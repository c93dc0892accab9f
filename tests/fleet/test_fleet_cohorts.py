"""Cohorts through a real fleet run (serially, no cluster): one failing NVMe model copied to a
dozen hosts among forty healthy ones is flagged in cohorts.parquet, its rows carry the pattern,
fleet.html opens with it, the terminal names it first, a resumed run recomputes the same cohorts
from the state, and an inventory's columns are cohorts too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLES, require_fleet_extra

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

FAILING_MODEL = "Samsung SSD 970 EVO 500GB 2B2QEXE7"


@pytest.fixture(scope="module", autouse=True)
def fleet_extra():
    require_fleet_extra()


@pytest.fixture(scope="module")
def sample_fleet(tmp_path_factory) -> Path:
    """12 hosts with the failing NVMe drive of one sample, 40 healthy hosts of another, each copy
    renamed (its hostname file) so that each is a host of its own."""
    root = tmp_path_factory.mktemp("sample-fleet")
    for index in range(12):
        folder = root / f"gpu{index:02d}"
        shutil.copytree(SAMPLES / "nvme-media-errors-nvme1", folder)
        (folder / "hostname").write_text(f"gpu{index:02d}\n")
    for index in range(40):
        folder = root / f"web{index:02d}"
        shutil.copytree(SAMPLES / "benign-noise-healthy", folder)
        (folder / "hostname").write_text(f"web{index:02d}\n")
    return root


def run(paths, out, **options):
    from diagdisk.fleet.run import FleetOptions, Progress, run_fleet
    return run_fleet([str(p) for p in paths], out, FleetOptions(**options), progress=Progress(0, enabled=False))


@pytest.fixture(scope="module")
def analysed(sample_fleet, tmp_path_factory):
    out = tmp_path_factory.mktemp("sample-fleet-out")
    summary = run([sample_fleet], out, html=True)
    return out, summary


def test_the_failing_model_is_flagged_in_cohorts_parquet(analysed):
    import pandas as pd
    out, summary = analysed
    assert (summary.analysed, summary.failed) == (52, 0)
    cohorts = pd.read_parquet(out / "cohorts.parquet")
    drive = cohorts[(cohorts.kind == "drive") & (cohorts.value == FAILING_MODEL)].iloc[0]
    assert (drive.hosts, drive.failing_hosts) == (12, 12)
    assert drive.flagged and drive.base_rate == pytest.approx(12 / 52)
    healthy = cohorts[(cohorts.kind == "drive") & (cohorts.value != FAILING_MODEL)]
    assert len(healthy) and not healthy.flagged.any()
    assert cohorts.iloc[0].flagged  # flagged first
    assert summary.flagged[0].startswith(f"drive firmware {FAILING_MODEL}: 12 of 12 hosts failing")


def test_each_failing_hosts_row_carries_the_pattern(analysed):
    import pandas as pd
    out, _ = analysed
    fleet = pd.read_parquet(out / "fleet.parquet")
    with_pattern = fleet[fleet.fleet_pattern.notna()]
    assert sorted(with_pattern.host) == [f"gpu{i:02d}" for i in range(12)]
    assert all(text.startswith(f"or update the drive firmware: the same fault on 11 other hosts with drive firmware "
                               f"{FAILING_MODEL} (") for text in with_pattern.fleet_pattern)
    assert "fleet_pattern" in pd.read_csv(out / "fleet.csv").columns


def test_each_failing_hosts_page_links_its_pattern_and_the_json_stays_analyze_s(analysed):
    import json

    import pandas as pd
    out, _ = analysed
    fleet = pd.read_parquet(out / "fleet.parquet")
    failing = fleet[fleet.host == "gpu03"].iloc[0]
    healthy = fleet[fleet.host == "web07"].iloc[0]
    page = (out / failing.report_file).with_suffix(".html").read_text(encoding="utf-8")
    assert 'id="across-hosts"' in page and 'href="../fleet.html#pattern-' in page
    assert "or update the drive firmware" in page
    assert 'id="across-hosts"' not in (out / healthy.report_file).with_suffix(".html").read_text(encoding="utf-8")
    assert "fleet_pattern" not in json.loads((out / failing.report_file).read_text(encoding="utf-8"))


def test_fleet_html_opens_with_the_patterns_across_hosts(analysed):
    from html_dom import parse
    out, _ = analysed
    page = parse((out / "fleet.html").read_text(encoding="utf-8"))
    sections = page.find("main").find_all("section")
    assert sections[0].attrs["id"] == "patterns"
    flagged = sections[0].by_id("flagged-cohorts")
    assert FAILING_MODEL in flagged.words()
    assert "12 of 12" in flagged.words()
    assert (f"on 12 of 12 hosts with drive firmware {FAILING_MODEL}; none of 40 other hosts"
            in sections[0].by_id("pattern-list").words())
    action = page.by_id("action")
    assert "replace nvme1, or update the drive firmware: the same fault on 11 other hosts" in action.words()
    # each failing host's row links to the pattern itself
    assert sum(a.attrs.get("href") == "#pattern-1" for a in action.find_all("a")) == 12


def test_a_resumed_run_recomputes_the_cohorts_from_the_state(analysed, sample_fleet):
    import pandas as pd
    import pandas.testing
    out, _ = analysed
    before = pd.read_parquet(out / "cohorts.parquet")
    fleet_before = pd.read_parquet(out / "fleet.parquet")
    again = run([sample_fleet], out)
    assert (again.analysed, again.skipped) == (0, 52)
    pandas.testing.assert_frame_equal(pd.read_parquet(out / "cohorts.parquet"), before)
    pandas.testing.assert_frame_equal(pd.read_parquet(out / "fleet.parquet"), fleet_before)
    assert again.flagged == analysed[1].flagged


def test_the_command_names_flagged_cohorts_first_and_reads_an_inventory(sample_fleet, tmp_path, monkeypatch):
    import pandas as pd

    from diagdisk.fleet import run as run_module
    # the command's cluster replaced by this process: the same run, without starting Dask
    monkeypatch.setattr(run_module, "DaskExecutor", lambda **_: run_module.SerialExecutor())
    inventory = tmp_path / "hosts.csv"
    lines = ["host,rack,site"] + [f"gpu{i:02d},r7,fra" for i in range(12)] + \
            [f"web{i:02d},r{i % 5},{'fra' if i % 2 else 'ams'}" for i in range(40)]
    inventory.write_text("\n".join(lines) + "\n")
    out = tmp_path / "cli"
    result = CliRunner().invoke(main, ["fleet", str(sample_fleet), "-o", str(out), "--inventory", str(inventory)])
    assert result.exit_code == ExitCode.OK, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("diagdisk: flagged cohort: ")
    assert any(FAILING_MODEL in line for line in lines if line.startswith("diagdisk: flagged cohort: "))
    assert lines[-1].startswith("diagdisk: 52 inputs: 52 analysed")
    cohorts = pd.read_parquet(out / "cohorts.parquet")
    rack = cohorts[(cohorts.kind == "rack") & (cohorts.value == "r7")].iloc[0]
    assert (rack.hosts, rack.failing_hosts, rack.flagged) == (12, 12, True)
    assert set(cohorts.kind) >= {"drive", "driver", "controller", "rack", "site"}


def test_a_bad_inventory_is_one_line_and_exit_2(sample_fleet, tmp_path):
    inventory = tmp_path / "hosts.csv"
    inventory.write_text("name,rack\nweb1,r1\n")
    result = CliRunner().invoke(main, ["fleet", str(sample_fleet), "-o", str(tmp_path / "out"),
                                       "--inventory", str(inventory)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "the inventory needs a `host` column" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
