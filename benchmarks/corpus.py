"""Score the verdict on the real-log corpus, per split and per class, and the weighing's calibration.

    python benchmarks/corpus.py                 # tests/corpus: tune and check
    python benchmarks/corpus.py --split tune    # only the part rules are written against

For each split it prints, for the verdict (its status and first suspect) and for the weighing of
explanations (verdict.inference) side by side:
- positives whose first-named part is the expert's (or an accepted alternative);
- negatives that name no part (an UNEXPLAINED verdict counts as naming one, as a customer reads it);
- the confusion between part classes;
- calibration: of the weighing's first explanations with probability in each band, how many are right.
Check cases are printed as counts only: they are never read while rules are written.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from diagdisk.diagnosis.analysis import analyze  # noqa: E402
from diagdisk.diagnosis.engine import evaluate_rules, load_rules  # noqa: E402
from diagdisk.diagnosis.fit import same_part, split_of  # noqa: E402

BANDS = (0.0, 0.5, 0.8, 0.9, 1.01)


def judge_case(folder: Path, rules) -> dict:
    expected = json.loads((folder / "expected.json").read_text())
    root = folder / "input" if (folder / "input").is_dir() else folder
    _, verdict = evaluate_rules(rules, analyze([str(root)], jobs=1))
    wanted = [expected["suspects"][0], *expected.get("accept", [])]
    negative = expected["suspects"][0]["fru"] == "none"
    named = verdict["suspects"][:1]
    if named:
        verdict_right = (any(e["fru"] != "none" and same_part(named[0], e) for e in wanted)
                         if not negative else any(e["fru"] != "none" and same_part(named[0], e)
                                                  for e in expected.get("accept", [])))
    else:
        verdict_right = negative or any(e["fru"] == "none" for e in expected.get("accept", []))
    weighing = (verdict.get("inference") or {}).get("explanations") or []
    first = weighing[0] if weighing else {"parts": [], "probability": 0.0}
    if first["parts"]:
        # the part as the weighing names it, with every alias the rules' suspect list gives it
        part = first["parts"][0]
        aliases = next((s.get("aliases", []) for s in verdict["suspects"]
                        if s["fru"] == part["fru"] and part.get("name") in (s.get("device"), s.get("hctl"))), [])
        suspect = {"fru": part["fru"], "hctl": part.get("hctl"), "device": part.get("device") or part.get("key"),
                   "aliases": [*aliases, str(part.get("key"))]}
        weighing_right = any(e["fru"] != "none" and same_part(suspect, e) for e in
                             (wanted if not negative else expected.get("accept", [])))
        weighing_class = part["fru"]
    else:
        weighing_right = negative or any(e["fru"] == "none" for e in expected.get("accept", []))
        weighing_class = "none"
    return {"expected": expected["suspects"][0]["fru"], "negative": negative,
            "verdict_right": verdict_right, "verdict_class": named[0]["fru"] if named else "none",
            "weighing_right": weighing_right, "weighing_class": weighing_class,
            "probability": first.get("probability", 0.0), "status": verdict["status"]}


def report(name: str, results: dict[str, dict], show_cases: bool) -> None:
    print(f"\n== {name}: {len(results)} cases")
    for layer in ("verdict", "weighing"):
        positives = [r for r in results.values() if not r["negative"]]
        negatives = [r for r in results.values() if r["negative"]]
        right_p = sum(r[f"{layer}_right"] for r in positives)
        right_n = sum(r[f"{layer}_right"] for r in negatives)
        print(f"  {layer:9} positives right {right_p}/{len(positives)} ({right_p / max(len(positives), 1):.0%}), "
              f"negatives naming no part {right_n}/{len(negatives)} ({right_n / max(len(negatives), 1):.0%}), "
              f"all {right_p + right_n}/{len(results)}")
        confusion = collections.Counter((r["expected"], r[f"{layer}_class"]) for r in results.values())
        classes = sorted({c for pair in confusion for c in pair})
        print("    expected \\ named " + " ".join(f"{c[:6]:>6}" for c in classes))
        for wanted in classes:
            print(f"    {wanted:16} " + " ".join(f"{confusion[(wanted, got)] or '.':>6}" for got in classes))
    print("  weighing calibration (first explanation's probability: right / cases):")
    for low, high in zip(BANDS, BANDS[1:]):
        inside = [r for r in results.values() if low <= r["probability"] < high]
        if inside:
            right = sum(r["weighing_right"] for r in inside)
            print(f"    [{low:.1f}, {min(high, 1.0):.1f}{']' if high > 1 else ')'}: {right}/{len(inside)} "
                  f"({right / len(inside):.0%})")
    if show_cases:
        for case, r in results.items():
            if not (r["verdict_right"] and r["weighing_right"]):
                print(f"    {case}: verdict {r['verdict_class']} ({'ok' if r['verdict_right'] else 'wrong'}), "
                      f"weighing {r['weighing_class']} {r['probability']:.2f} ({'ok' if r['weighing_right'] else 'wrong'})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default=str(ROOT / "tests" / "corpus"))
    parser.add_argument("--split", choices=("tune", "check", "both"), default="both")
    args = parser.parse_args(argv)
    rules = load_rules()
    folders = sorted(p for p in Path(args.corpus).iterdir() if (p / "expected.json").exists())
    for split in (("tune", "check") if args.split == "both" else (args.split,)):
        results = {f.name: judge_case(f, rules) for f in folders
                   if split_of(json.loads((f / "expected.json").read_text())) == split}
        report(split, results, show_cases=split == "tune")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
