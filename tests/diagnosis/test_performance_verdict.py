"""With performance data only, the verdict answers the performance question (the first line of the
text report, --brief, the HTML banner and the top-level JSON findings), and the coverage says that
no kernel log was given; with a kernel log too, the verdict weighs both and a hardware failure
stays first."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "report.schema.json").read_text()))
FIXTURES = REPO / "tests" / "performance" / "fixtures"


def run(*args):
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code in (ExitCode.OK, ExitCode.FINDINGS), result.output
    return result.stdout


def slow_member_files(folder: Path) -> list[Path]:
    """The slow-member rule's own matching example: iostat -x of four md members, sdc slow."""
    rule = yaml.safe_load((REPO / "rules/performance/DD605_slow_member.yml").read_text())
    files = rule["examples"]["match"][0]["files"]
    (folder / "iostat.txt").write_text(files["sos_commands/diagdisk/iostat_-x_-t_-y_1_3"])
    (folder / "mdstat").write_text(files["proc/mdstat"])
    return [folder / "iostat.txt", folder / "mdstat"]


@pytest.fixture(scope="module")
def slow_member(tmp_path_factory) -> list[Path]:
    return slow_member_files(tmp_path_factory.mktemp("slow-member"))


def test_performance_data_alone_answers_the_performance_question(slow_member):
    text = run("analyze", *slow_member)
    first = text.splitlines()[0]
    assert first.startswith("SLOW MEMBER: sdc ")
    assert "no kernel log was given" in first and "INCONCLUSIVE" not in first
    assert "coverage: no kernel log was given" in text
    assert run("analyze", *slow_member, "--brief") == first + "\n"


def test_json_findings_and_verdict_hold_the_performance_findings(slow_member):
    report = json.loads(run("analyze", *slow_member, "--format", "json"))["reports"][0]
    SCHEMA.validate(report)
    verdict = report["verdict"]
    assert verdict["label"] == "SLOW MEMBER" and verdict["status"] == "suspect"
    assert verdict["performance"]["status"] == "slow member"
    assert verdict["suspects"][0]["device"] == "sdc" and verdict["suspects"][0]["rules"] == ["DD605"]
    rules = {f["rule"]: f for f in report["findings"]}
    assert "DD605" in rules and rules["DD605"]["severity"] == "high"
    assert rules["DD605"]["performance"]["device"] == "sdc"
    assert {f["rule"] for f in report["performance"]["findings"]} == set(rules)
    assert report["coverage"]["kernel_log"]["given"] is False


def test_no_problem_in_the_samples_is_said_with_what_was_read():
    fixture = FIXTURES / "sar-12.5.4-C.txt"
    first = run("analyze", fixture, "--brief").strip()
    assert first.startswith("NOT SATURATED: no device saturated or slow in 4 samples of 1 device")
    assert first.endswith("no kernel log was given")
    report = json.loads(run("analyze", fixture, "--format", "json"))["reports"][0]
    SCHEMA.validate(report)
    assert report["verdict"]["status"] == "inconclusive"   # no hardware verdict without a kernel log
    assert [f["rule"] for f in report["findings"]] == ["DD612"]


def test_a_hardware_failure_stays_first_and_the_performance_findings_are_listed(slow_member):
    report = json.loads(run("analyze", REPO / "samples/demo-sosreport", slow_member[0], "--format", "json"))["reports"][0]
    SCHEMA.validate(report)
    verdict = report["verdict"]
    assert verdict["status"] == "failure" and "label" not in verdict
    assert verdict["headline"].startswith("Replace disk 2:0:2:0")
    assert any(reason.startswith("performance: SLOW MEMBER: sdc") for reason in verdict["reasons"])
    assert {"DD101", "DD605"} <= {f["rule"] for f in report["findings"]}


def test_a_healthy_kernel_log_and_a_slow_member_weigh_both(slow_member):
    first = run("analyze", REPO / "samples/benign-noise-healthy", slow_member[0], "--brief").strip()
    assert first.startswith("SLOW MEMBER: sdc ")
    assert first.endswith("no storage fault found in 32 kernel log lines (2024-02-26 06:12:40 .. 2024-03-04 10:09:44)")


def test_a_healthy_kernel_log_and_no_performance_problem_stay_healthy():
    first = run("analyze", REPO / "samples/benign-noise-healthy", FIXTURES / "sar-12.5.4-C.txt", "--brief")
    assert first.startswith("HEALTHY: No storage fault found in 32 kernel log lines")
    assert "no device saturated or slow in 4 samples of 1 device" in first
