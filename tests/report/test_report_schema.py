"""The JSON report of every sample and corpus case validates against docs/report.schema.json, and
the schema is strict enough to reject reports that break the contract."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from end_to_end.test_corpus import CASES as CORPUS_CASES, run_case

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
REPORTS_SCHEMA = json.loads((ROOT / "docs" / "reports.schema.json").read_text())
SAMPLE_CASES = sorted(p for p in (ROOT / "samples").iterdir() if (p / "expected.json").exists())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
# what --format json prints: the reports, each validated by the report schema it refers to by $id
REPORTS_VALIDATOR = jsonschema.Draft202012Validator(
    REPORTS_SCHEMA, registry=Registry().with_resource(SCHEMA["$id"], Resource.from_contents(SCHEMA)))


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator.check_schema(REPORTS_SCHEMA)


@pytest.mark.parametrize("case", SAMPLE_CASES + CORPUS_CASES, ids=[c.name for c in SAMPLE_CASES + CORPUS_CASES])
def test_report_validates(case):
    errors = sorted(VALIDATOR.iter_errors(run_case(case)), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("inputs", [["demo-sosreport"], ["demo-sosreport", "nvme-media-errors-nvme1"]],
                         ids=["one host", "two hosts"])
def test_cli_json_output_has_one_shape_and_validates(inputs):
    out = subprocess.run([sys.executable, "-m", "diagdisk", "analyze", *(str(ROOT / "samples" / name) for name in inputs),
                          "--format", "json", "-j", "1"], capture_output=True, text=True, cwd=ROOT).stdout
    document = json.loads(out)
    REPORTS_VALIDATOR.validate(document)
    assert document["schema"] == "diagdisk.reports/1" and len(document["reports"]) == len(inputs)
    broken = copy.deepcopy(document)
    broken["reports"][0].pop("verdict")
    assert not REPORTS_VALIDATOR.is_valid(broken)     # each report is held to the report schema
    assert not REPORTS_VALIDATOR.is_valid(document["reports"][0])   # a bare report is not this shape


@pytest.mark.parametrize("breakage", [
    lambda r: r.pop("verdict"),
    lambda r: r.__setitem__("schema", "diagdisk.report/2"),
    lambda r: r["event_summary"].append({**r["event_summary"][0], "asc_ascq": "0x11/0"}),
    lambda r: r["event_summary"].append({**r["event_summary"][0], "sense_key": 3}),
    lambda r: r["verdict"].__setitem__("status", "broken"),
    lambda r: r["findings"][0].__setitem__("confidence", 1.5),
    lambda r: r["findings"][0]["suspect"].__setitem__("hctl", "sdb"),
    lambda r: r["devices"][0].__setitem__("smart", {"health": "fine"}),
    lambda r: r["md_arrays"].append({"name": "md9", "level": None, "state": "sad", "failed_members": [],
                                     "active": None, "expected": None}),
], ids=["no-verdict", "other-version", "asc-format", "sense-key-number", "status", "confidence",
        "hctl-format", "smart-health", "md-state"])
def test_schema_rejects_contract_breaks(breakage):
    report = copy.deepcopy(run_case(ROOT / "samples" / "demo-sosreport"))
    VALIDATOR.validate(report)
    breakage(report)
    assert not VALIDATOR.is_valid(report)
