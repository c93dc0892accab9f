"""How diagdisk's performance diagnosis reads real iostat, sar and diskstats text: the expert's
findings it gives, and the problems it names on devices the expert cleared.

    python benchmarks/perf_corpus.py            # tune and check scores, tune's misses by case
    python benchmarks/perf_corpus.py --json     # the scores as JSON (what the ratchet test reads)

The corpus is tests/performance/cases (tune: the founding cases and the new ones a hash puts
there) and tests/performance/check (held out: rules are never written against it). Each case's
expected.json names the findings an expert reads in the text, each a (verdict, device) pair with
the rule (DD6xx) it is a kind of. A reading no rule covers yet carries a `note`: it stays in the
totals, so until a rule gives it, it counts as missed.

- found: an expected finding diagdisk gives (same verdict on the same device).
- false alarm: a problem finding (any verdict but `not saturated`) on a device the expert
  cleared, i.e. one with no expected problem finding (devices listed in meta.unjudged excepted).
- wrong kind: a problem finding on a device the expert flagged, with a verdict the expert did not
  give it.
- unread: a case whose input diagdisk refused or failed on (all its findings missed).

For check, only counts are printed: which check case fails is not read while rules are written.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUNE_DIR = ROOT / "tests" / "performance" / "cases"
CHECK_DIR = ROOT / "tests" / "performance" / "check"
INFO_VERDICTS = {"not saturated"}


def split_by_name(name: str) -> str:
    """The part a new case belongs to, fixed by its name alone: 40% check."""
    return "check" if int(hashlib.sha1(name.encode()).hexdigest()[:8], 16) / 2**32 < 0.4 else "tune"


def cases(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if (p / "expected.json").exists())


def expected_of(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text())


def is_founding(case: Path) -> bool:
    """The sixteen cases the rules were first written against: no meta, exact checks elsewhere."""
    return "meta" not in expected_of(case)


def run(case: Path) -> dict:
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import evaluate_rules, load_rules
    from diagdisk.diagnosis.perf import evaluate_performance_rules
    from diagdisk.report.build import build_report

    global _RULES
    if _RULES is None:
        _RULES = load_rules()
    analysis = analyze([str(case / "input")])
    findings, verdict = evaluate_rules(_RULES, analysis)
    performance = evaluate_performance_rules(_RULES, analysis.performance, findings, analysis.topology)
    return build_report(analysis, findings, verdict, performance)


_RULES = None


@dataclass
class CaseResult:
    name: str
    expected: list[dict]
    found: list[dict]
    missed: list[dict]
    false_alarms: list[tuple[str, str]]       # (verdict, device) on cleared devices
    wrong_kind: list[tuple[str, str]]         # (verdict, device) on flagged devices
    unread: str | None = None


def judge(case: Path) -> CaseResult:
    expected = expected_of(case)
    want = expected["findings"]
    unjudged = set((expected.get("meta") or {}).get("unjudged", []))
    try:
        report = run(case)
        got = [(f["verdict"], f["device"]) for f in (report.get("performance") or {}).get("findings", [])]
        unread = None if report.get("performance") is not None else "no performance section"
    except Exception as error:  # a refused or crashing input scores as nothing found, and says why
        got, unread = [], f"{type(error).__name__}: {error}"
    got_set = set(got)
    found = [f for f in want if (f["verdict"], f["device"]) in got_set]
    missed = [f for f in want if (f["verdict"], f["device"]) not in got_set]
    flagged = {f["device"] for f in want if f["verdict"] not in INFO_VERDICTS}
    want_set = {(f["verdict"], f["device"]) for f in want}
    false_alarms, wrong_kind = [], []
    for verdict, device in sorted(got_set):
        if verdict in INFO_VERDICTS or (verdict, device) in want_set or device in unjudged:
            continue
        (wrong_kind if device in flagged else false_alarms).append((verdict, device))
    return CaseResult(case.name, want, found, missed, false_alarms, wrong_kind, unread)


def kind_of(finding: dict) -> str:
    return finding.get("rule") or finding["verdict"]


@dataclass
class Score:
    part: str
    cases: int = 0
    found: int = 0
    total: int = 0
    false_alarms: int = 0
    wrong_kind: int = 0
    unread: int = 0
    exact: int = 0
    gaps_found: int = 0
    gaps_total: int = 0
    by_kind: dict = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0]))
    results: list = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.found / self.total if self.total else 1.0

    def as_dict(self) -> dict:
        return {"part": self.part, "cases": self.cases, "found": self.found, "total": self.total,
                "recall": round(self.recall, 4), "false_alarms": self.false_alarms,
                "wrong_kind": self.wrong_kind, "unread": self.unread, "exact": self.exact,
                "gaps_found": self.gaps_found, "gaps_total": self.gaps_total,
                "by_kind": {k: {"found": v[0], "total": v[1]} for k, v in sorted(self.by_kind.items())}}


def score(part: str, folder_cases: list[Path]) -> Score:
    result = Score(part)
    for case in folder_cases:
        outcome = judge(case)
        result.results.append(outcome)
        result.cases += 1
        result.found += len(outcome.found)
        result.total += len(outcome.expected)
        result.false_alarms += len(outcome.false_alarms)
        result.wrong_kind += len(outcome.wrong_kind)
        result.unread += outcome.unread is not None
        result.exact += not outcome.missed and not outcome.false_alarms and not outcome.wrong_kind
        for finding in outcome.expected:
            result.by_kind[kind_of(finding)][1] += 1
            if "note" in finding:
                result.gaps_total += 1
        for finding in outcome.found:
            result.by_kind[kind_of(finding)][0] += 1
            if "note" in finding:
                result.gaps_found += 1
    return result


def both() -> tuple[Score, Score]:
    return score("tune", cases(TUNE_DIR)), score("check", cases(CHECK_DIR))


def print_score(result: Score, name_cases: bool) -> None:
    print(f"{result.part}: {result.cases} cases, expert findings found {result.found}/{result.total} "
          f"({result.recall:.0%}); false alarms {result.false_alarms}; wrong kind {result.wrong_kind}; "
          f"cases exactly right {result.exact}/{result.cases}; unread {result.unread}; "
          f"readings no rule covers yet (notes) found {result.gaps_found}/{result.gaps_total}")
    for kind, (found, total) in sorted(result.by_kind.items()):
        print(f"  {kind:<20} {found:>3}/{total:<3}")
    if not name_cases:   # held out: which case fails is not read while rules are written
        return
    for outcome in result.results:
        if outcome.missed or outcome.false_alarms or outcome.wrong_kind or outcome.unread:
            parts = []
            if outcome.unread:
                parts.append(f"unread ({outcome.unread})")
            if outcome.missed:
                parts.append("missed " + ", ".join(f"{f['verdict']} {f['device']}" for f in outcome.missed))
            if outcome.false_alarms:
                parts.append("false alarms " + ", ".join(f"{v} {d}" for v, d in outcome.false_alarms))
            if outcome.wrong_kind:
                parts.append("wrong kind " + ", ".join(f"{v} {d}" for v, d in outcome.wrong_kind))
            print(f"    {outcome.name}: " + "; ".join(parts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--quiet", action="store_true", help="tune's misses not listed by case")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    tune, check = both()
    if args.json:
        print(json.dumps({"tune": tune.as_dict(), "check": check.as_dict(),
                          "tune_minus_check_points": round(100 * (tune.recall - check.recall), 1)}, indent=1))
        return 0
    print_score(tune, name_cases=not args.quiet)
    print_score(check, name_cases=False)
    print(f"tune minus check: {100 * (tune.recall - check.recall):.1f} points of recall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
