"""Score the whole real-log corpus (tests/corpus, copied from shared/corpus with each SOURCE.md).

Every case must give its expected top suspect (or an `accept`ed alternative), blame none of its
`not_suspects`, negative cases must give no suspect, every expected fact must be in the report, and
no candidate line may stay unparsed. The score is printed; it must be perfect.
"""

from pathlib import Path

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.report.build import build_report
from diagdisk.diagnosis.engine import evaluate_rules, load_rules

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CASES = sorted(p for p in CORPUS.iterdir() if (p / "expected.json").exists())


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


def judge(case: Path) -> list[str]:
    import json
    expected = json.loads((case / "expected.json").read_text())
    report = run_case(case)
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


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case):
    assert judge(case) == []


def test_corpus_score_is_perfect(capsys):
    results = {case.name: judge(case) for case in CASES}
    passed = sum(1 for problems in results.values() if not problems)
    with capsys.disabled():
        print(f"\ncorpus score: {passed}/{len(CASES)}")
        for name, problems in results.items():
            if problems:
                print(f"  {name}: {'; '.join(problems)}")
    assert passed == len(CASES)
