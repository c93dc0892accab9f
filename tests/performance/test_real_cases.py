"""Real sar and iostat outputs from public sources (tests/performance/cases, each with its SOURCE.md)
and an expert's reading of each: diagdisk must give exactly the findings the reading names (a
finding on a healthy case is a false alarm, and fails) and read the facts the text shows."""

import json
from pathlib import Path

import jsonschema
import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from diagdisk.diagnosis.perf import evaluate_performance_rules
from diagdisk.report.build import build_report

CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(p for p in CASES_DIR.iterdir() if (p / "expected.json").exists())
RULES = load_rules()
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())


def run(case: Path) -> dict:
    analysis = analyze([str(case / "input")])
    findings, verdict = evaluate_rules(RULES, analysis)
    performance = evaluate_performance_rules(RULES, analysis.performance, findings, analysis.topology)
    return build_report(analysis, findings, verdict, performance)


def test_at_least_fifteen_real_cases_with_their_sources():
    assert len(CASES) >= 15
    for case in CASES:
        expected = json.loads((case / "expected.json").read_text())
        assert expected["source"].startswith("http") and expected["reading"]
        assert (case / "SOURCE.md").read_text().count("http") >= 1


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_real_case(case):
    expected = json.loads((case / "expected.json").read_text())
    report = run(case)
    section = report.get("performance")
    assert section is not None, "the input holds performance data: the report must have its section"
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    got = sorted((f["verdict"], f["device"]) for f in section["findings"])
    want = sorted((f["verdict"], f["device"]) for f in expected["findings"])
    assert got == want
    for item in expected["findings"]:
        if "single_sample" in item:
            finding = next(f for f in section["findings"]
                           if (f["verdict"], f["device"]) == (item["verdict"], item["device"]))
            assert finding["window"]["single_sample"] == item["single_sample"]
            assert finding["evidence"] and finding["evidence"][0]["line"] > 0
    facts = expected["facts"]
    devices = {d["name"]: d for d in section["devices"]}
    source = next(s for s in section["sources"] if s["status"].startswith("read"))
    if "era" in facts:
        assert facts["era"] in source["sysstat_era"]
    for key in ("date_order", "clock"):
        if key in facts:
            assert source["locale"].get(key) == facts[key]
    if "day" in facts:
        assert source["day"] == facts["day"]
    for name, cls in facts.get("class", {}).items():
        assert devices[name]["class"] == cls
    for members in facts.get("groups", []):
        assert any(sorted(g["members"]) == members for g in section["groups"])
    for name, size in facts.get("areq_kb", {}).items():
        assert section["series"][name]["areq_kb"][0] == pytest.approx(size, abs=0.05)
    for name, count in facts.get("samples", {}).items():
        assert devices[name]["samples"] == count
    if "devices" in facts:
        assert len(section["series"]) == facts["devices"]
    if facts.get("since_boot_only"):
        assert any("averages since boot" in w for w in source["warnings"])
