"""Score the real-log corpus (tests/corpus: each case its input, verdict and SOURCE.md).

The corpus is split in two. The `tune` part is what rules and grammars are written against: every
case must give its expected top suspect (or an `accept`ed alternative), blame none of its
`not_suspects`, negative cases must give no suspect, every expected fact must be in the report, and
no candidate line may stay unparsed. The `check` part (`meta.split: check` in expected.json) is
scored only, never read while writing rules: at least 95% of its positive cases must name the
right part, none of its negatives may be blamed, and its facts must be present. Both scores and the
confusion between FRU classes are printed.
"""

import collections
import json
from pathlib import Path

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.report.build import build_report
from diagdisk.diagnosis.engine import evaluate_rules, load_rules

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CASES = sorted(p for p in CORPUS.iterdir() if (p / "expected.json").exists())
CHECK_TARGET = 0.95


def _expected(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text())


def split_of(case: Path) -> str:
    return (_expected(case).get("meta") or {}).get("split", "tune")


TUNE = [c for c in CASES if split_of(c) == "tune"]
CHECK = [c for c in CASES if split_of(c) == "check"]


def run_case(case: Path) -> dict:
    # corpus cases keep their sosreport tree under input/; samples are the tree themselves
    root = case / "input" if (case / "input").is_dir() else case
    analysis = analyze([str(root)])
    findings, verdict = evaluate_rules(load_rules(), analysis)
    return build_report(analysis, findings, verdict)


def _same_part(suspect: dict, expected: dict) -> bool:
    """Same FRU class, and the part named by any name the text gives it (a shared part's suspect
    lists its names and those of the units behind it in `aliases`: host2, 0000:03:00.0, ata3)."""
    if suspect["fru"] != expected["fru"]:
        return False
    if expected.get("any_identity"):
        return True
    names = {suspect.get("hctl"), suspect.get("device"), *suspect.get("aliases", [])} - {None}
    if expected.get("hctl") and expected["hctl"] in names:
        return True
    if expected.get("device") and expected["device"] in names:
        return True
    return not expected.get("hctl") and not expected.get("device")


def judge(case: Path, report: dict | None = None) -> list[str]:
    expected = _expected(case)
    report = report or run_case(case)
    problems = []
    suspects = report["verdict"]["suspects"]
    top = expected["suspects"][0]
    if top["fru"] == "none":
        if suspects:
            problems.append(f"negative case blamed {suspects[0]}")
    elif not suspects:
        problems.append("no suspect")
    elif not any(_same_part(suspects[0], e) for e in [top, *expected.get("accept", [])]):
        problems.append(f"top suspect {suspects[0]} != {top}")
    for name in expected.get("not_suspects", []):
        if any(name in (s.get("device"), s.get("hctl")) for s in suspects):
            problems.append(f"blamed not-suspect {name}")
    facts = expected.get("facts", {})
    summary = report["event_summary"]
    for key in facts.get("sense_keys", []):
        if not any(e["sense_key"] == key for e in summary):
            problems.append(f"sense key {key} missing")
    for code in facts.get("asc_ascq", []):
        if not any(e["asc_ascq"] == code.upper() for e in summary):
            problems.append(f"ASC/ASCQ {code} missing")
    all_sectors = {s for values in report["sectors"].values() for s in values}
    for sector in facts.get("sectors", []):
        if sector not in all_sectors and not any(
                sector in ((d.get("smart") or {}).get("failing_lbas") or []) for d in report["devices"]):
            problems.append(f"sector {sector} missing")
    if facts.get("resets") and not any(e["kind"] in ("reset", "abort", "timeout", "nvme_reset", "ata_link")
                                       for e in summary):
        problems.append("resets missing")
    for name in facts.get("smart_failing", []):
        if not any(d.get("name") == name and (d.get("smart") or {}).get("health") == "failed"
                   for d in report["devices"]):
            problems.append(f"SMART failing {name} missing")
    unparsed = sum(s["unparsed_candidates"] for s in report["sources"])
    if unparsed:
        problems.append(f"{unparsed} unparsed candidate lines")
    return problems


@pytest.mark.parametrize("case", TUNE, ids=[c.name for c in TUNE])
def test_corpus_case(case):
    assert judge(case) == []


def _score(cases: list[Path]) -> tuple[dict, collections.Counter]:
    results, confusion = {}, collections.Counter()
    for case in cases:
        report = run_case(case)
        results[case.name] = judge(case, report)
        wanted = _expected(case)["suspects"][0]["fru"]
        got = report["verdict"]["suspects"][0]["fru"] if report["verdict"]["suspects"] else "none"
        confusion[(wanted, got)] += 1
    return results, confusion


def _print_score(name: str, results: dict, confusion: collections.Counter) -> None:
    passed = sum(1 for problems in results.values() if not problems)
    print(f"\ncorpus {name} score: {passed}/{len(results)}")
    classes = sorted({c for pair in confusion for c in pair})
    if len(classes) > 1:
        print("  expected \\ named  " + " ".join(f"{c[:6]:>6}" for c in classes))
        for wanted in classes:
            print(f"  {wanted:18} " + " ".join(f"{confusion[(wanted, got)] or '.':>6}" for got in classes))
    for case, problems in results.items():
        if problems:
            print(f"  {case}: {'; '.join(problems)}")


def test_corpus_tune_score_is_perfect(capsys):
    results, confusion = _score(TUNE)
    with capsys.disabled():
        _print_score("tune", results, confusion)
    assert all(not problems for problems in results.values())


def test_corpus_check_score(capsys):
    """The held-out part: scored, never tuned on."""
    if not CHECK:
        pytest.skip("no check cases")
    results, confusion = _score(CHECK)
    with capsys.disabled():
        _print_score("check", results, confusion)
    positives = [c for c in CHECK if _expected(c)["suspects"][0]["fru"] != "none"]
    negatives = [c for c in CHECK if c not in positives]
    right = sum(1 for c in positives if not any(p.startswith("top suspect") or p == "no suspect"
                                               for p in results[c.name]))
    false_alarms = [c.name for c in negatives if any(p.startswith("negative case blamed") for p in results[c.name])]
    missing_facts = [c.name for c in CHECK if any(p.endswith("missing") for p in results[c.name])]
    assert right >= CHECK_TARGET * len(positives), f"{right}/{len(positives)} positive check cases right"
    assert false_alarms == []
    assert missing_facts == []
