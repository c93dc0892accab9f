"""Run a rule's own examples: each `match` must produce a finding naming its suspect, each
`no_match` none. Examples are log snippets (written as sos_commands/kernel/dmesg) or `files`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .engine import Rule, evaluate_rules


def _materialize(example: dict, root: Path) -> None:
    files = example.get("files") or {"sos_commands/kernel/dmesg": example.get("log", "")}
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)


def run_rule_examples(rule: Rule) -> list[str]:
    """Problems found (empty when every example behaves)."""
    from .analysis import analyze
    problems = [f"{rule.id}: no {key} examples (every rule carries both match and no_match examples)"
                for key in ("match", "no_match") if not rule.examples.get(key)]
    for expect_match, key in ((True, "match"), (False, "no_match")):
        for index, example in enumerate(rule.examples.get(key) or []):
            with tempfile.TemporaryDirectory(prefix="diagdisk-rule-") as tmp:
                root = Path(tmp) / "sosreport"
                _materialize(example, root)
                findings, _ = evaluate_rules([rule], analyze([str(root)]))
            # a finding the rule itself marks as a consequence (a unit spoke first) names no suspect
            mine = [f for f in findings if f["rule"] == rule.id and not f.get("consequence")]
            if expect_match and not mine:
                problems.append(f"{rule.id} {key}[{index}]: no finding")
            elif expect_match:
                wanted = example.get("suspect") or {}
                if not any(all(f["suspect"].get(k) == v for k, v in wanted.items()) for f in mine):
                    problems.append(f"{rule.id} {key}[{index}]: suspect {mine[0]['suspect']} != {wanted}")
            elif mine:
                problems.append(f"{rule.id} {key}[{index}]: unexpected finding {mine[0]['suspect']}")
    return problems
