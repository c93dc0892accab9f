"""The four log examples of the core procedure (shared/seeds/004, transcribed in samples/) give the
verdicts the document reaches: target 1, target 1, target 0, and id 1 / sdb with low confidence."""

from pathlib import Path

import pytest

from test_corpus import judge, run_case

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SEEDS = sorted(SAMPLES.glob("seed004-*"))


def test_all_four_examples_are_present():
    assert len(SEEDS) == 4


@pytest.mark.parametrize("case", SEEDS, ids=[c.name for c in SEEDS])
def test_seed_example_verdict(case):
    assert judge(case) == []


def test_unit_attentions_after_the_bus_reset_do_not_blame_target_0():
    report = run_case(SAMPLES / "seed004-ex2-timeouts-bus-reset-id1")
    blamed = {s.get("hctl") for s in report["verdict"]["suspects"]}
    assert "0:0:0:0" not in blamed
    assert any(e["sense_key"] == "UNIT ATTENTION" and e["asc_ascq"] == "29/02" for e in report["event_summary"])


def test_the_offline_example_is_only_a_suspect():
    report = run_case(SAMPLES / "seed004-ex4-offline-raid1-id1")
    # the disk is named with low confidence; the verdict's status is the array's loss of redundancy,
    # which comes before a suspect (engine.VERDICT_STATUSES)
    assert report["verdict"]["status"] == "degraded"
    assert report["verdict"]["suspects"][0]["confidence"] < 0.7
    assert not any(f["severity"] == "critical" for f in report["findings"])
