"""--max-events: reaching the cap stops reading that log, the report says it is incomplete and the
run exits 3, as --max-file-size does (it once ended in an internal error, exit 70)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "samples" / "demo-sosreport"
# a sense report over four lines (the stitcher folds the later lines into the first), each on a
# disk of its own so that each is a distinct event
MEDIUM_ERROR = (
    "Mar 14 02:17:{s:02d} db1 kernel: sd 2:0:{s}:0: [sd{d}] tag#1 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE\n"
    "Mar 14 02:17:{s:02d} db1 kernel: sd 2:0:{s}:0: [sd{d}] tag#1 Sense Key : Medium Error [current]\n"
    "Mar 14 02:17:{s:02d} db1 kernel: sd 2:0:{s}:0: [sd{d}] tag#1 Add. Sense: Unrecovered read error\n"
    "Mar 14 02:17:{s:02d} db1 kernel: blk_update_request: critical medium error, dev sd{d}, sector 2048 op 0x0:(READ)\n")


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture
def many_errors(tmp_path) -> Path:
    log = tmp_path / "messages"
    log.write_text("".join(MEDIUM_ERROR.format(s=i, d="bcdefghijklmnopqrstuvwxyz"[i]) for i in range(20)))
    return log


def test_reaching_the_cap_is_a_partial_report_exit_3(many_errors):
    result = run("analyze", many_errors, "--max-events", "3", "--format", "json")
    assert result.exit_code == ExitCode.PARTIAL, result.output
    assert "internal error" not in result.stderr
    report = json.loads(result.stdout)["reports"][0]
    assert report["complete"] is False
    (warning,) = [w for source in report["sources"] for w in source["warnings"]]
    assert "over 3 distinct events held for this source" in warning and "--max-events" in warning
    assert "stopped reading after line" in warning


def test_a_capped_sample_still_gets_a_verdict():
    result = run("analyze", DEMO, "--max-events", "2", "--format", "json")
    assert result.exit_code == ExitCode.PARTIAL, result.output
    report = json.loads(result.stdout)["reports"][0]
    assert report["complete"] is False and report["verdict"]["status"]


def test_events_stops_at_the_cap_and_exits_3(many_errors):
    result = run("events", many_errors, "--max-events", "5")
    assert result.exit_code == ExitCode.PARTIAL, result.output
    assert "internal error" not in result.stderr
    assert "--max-events" in result.stderr
    assert 0 < len(result.stdout.splitlines()) <= 6


def test_a_cap_not_reached_changes_nothing(many_errors):
    capped = run("analyze", many_errors, "--max-events", "1000", "--format", "json")
    assert capped.exit_code == ExitCode.OK, capped.output
    assert json.loads(capped.stdout)["reports"][0]["complete"] is True
