"""Every rule's own examples, rule metadata, and malformed rule files."""

import pytest

from diagdisk.rule_examples import run_rule_examples
from diagdisk.rules import RuleError, load_rule_file, load_rules

RULES = load_rules()


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_examples(rule):
    assert rule.examples.get("match") and rule.examples.get("no_match"), "a rule needs both kinds of example"
    assert run_rule_examples(rule) == []


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_metadata(rule):
    assert rule.path.name.startswith(rule.id + "_")
    assert len(rule.description.split()) >= 10
    assert rule.recommendation.strip()


def test_unknown_field_names_file_line_and_suggestion(tmp_path):
    bad = tmp_path / "DD999_bad.yml"
    bad.write_text("id: DD999\ntitle: t\ndescription: d\nseverity: high\nfru: disk\nconfidence: 0.5\n"
                   "recommendation: r\nselect:\n  kind: sense\n  sense_kye: 3\n")
    with pytest.raises(RuleError) as info:
        load_rule_file(bad)
    message = str(info.value)
    assert f"{bad}:10" in message and "sense_kye" in message and "sense_key" in message


def test_bad_severity_is_rejected(tmp_path):
    bad = tmp_path / "DD998_bad.yml"
    bad.write_text("id: DD998\ntitle: t\ndescription: d\nseverity: urgent\nfru: disk\nconfidence: 0.5\n"
                   "recommendation: r\nselect:\n  kind: sense\n")
    with pytest.raises(RuleError, match="severity"):
        load_rule_file(bad)
