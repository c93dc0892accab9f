"""Every bundled sample (samples/*, sosreport-shaped trees) against its expected.json: the verdict,
the devices with their identity, the events by kind and identity, and the md array states.
In expected_inventory a null value is not asserted."""

import json
from pathlib import Path

import pytest

from test_corpus import judge, run_case

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CASES = sorted(p for p in SAMPLES.iterdir() if (p / "expected.json").exists())


def _expected(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text())


@pytest.fixture(scope="module")
def reports():
    return {case.name: run_case(case) for case in CASES}


def test_every_sample_has_expectations():
    assert len(CASES) >= 10
    for case in CASES:
        inventory = _expected(case).get("expected_inventory")
        assert inventory is not None and inventory["events"], case.name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sample_verdict(case):
    assert judge(case) == []


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sample_devices(case, reports):
    devices = reports[case.name]["devices"]
    expected = _expected(case)["expected_inventory"]["devices"]
    for want in expected:
        matches = [d for d in devices if (want.get("hctl") and d["hctl"] == want["hctl"])
                   or (not want.get("hctl") and d["name"] == want["name"])]
        assert len(matches) == 1, f"{want} not in {[(d['hctl'], d['name']) for d in devices]}"
        got = matches[0]
        for key, value in want.items():
            if value is not None:
                assert got.get(key) == value, f"{want['hctl'] or want['name']}: {key} {got.get(key)!r} != {value!r}"
    # no SCSI device appears that the sample does not have
    expected_hctls = {w["hctl"] for w in expected if w.get("hctl")}
    assert {d["hctl"] for d in devices if d["hctl"]} == expected_hctls


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sample_events(case, reports):
    summary = reports[case.name]["event_summary"]
    for want in _expected(case)["expected_inventory"]["events"]:
        count = sum(e["count"] for e in summary if e["kind"] == want["kind"]
                    and all(want[k] is None or e[k] == want[k] for k in ("device", "hctl")))
        assert count >= want.get("min_count", 1), f"{want}: {count} in event_summary"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sample_md_arrays(case, reports):
    arrays = reports[case.name]["md_arrays"]
    expected = _expected(case)["expected_inventory"]["md_arrays"]
    assert len(arrays) == len(expected)
    for want in expected:
        matches = [a for a in arrays if want["name"] is None or a["name"] == want["name"]]
        assert matches, f"{want} not in {arrays}"
        got = matches[0]
        assert got["state"] == want["state"]
        assert sorted(got["failed_members"]) == sorted(want["failed_members"])


def test_events_command_lists_every_event_with_whole_numbers_and_decoded_sense(tmp_path):
    import csv
    import io
    import json

    from click.testing import CliRunner
    from diagdisk.cli.main import main
    sample = SAMPLES / "seed004-ex3-medium-error-id0"
    rows = list(csv.DictReader(io.StringIO(CliRunner().invoke(main, ["events", str(sample), "--format", "csv"]).output)))
    sense = [r for r in rows if r["kind"] == "sense"]
    assert sense and sense[0]["sense_key"] == "3" and sense[0]["sense_key_name"] == "MEDIUM ERROR"
    assert sense[0]["asc_ascq"] == "0C/00" and sense[0]["line"] == "1" and sense[0]["host"] == "0"
    lines = CliRunner().invoke(main, ["events", str(sample), "--format", "jsonl"]).output.splitlines()
    first = json.loads(lines[0])
    assert isinstance(first["line"], int) and isinstance(first["sector"], int) and first["source"]
    assert len(lines) == len(rows)
