"""Every rule's own examples, rule metadata, and malformed rule files."""

import pytest

from diagdisk.diagnosis.examples import run_rule_examples
from diagdisk.diagnosis.engine import RuleError, load_rule_file, load_rules

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


_HEAD = "id: DD997\ntitle: t\ndescription: d\nseverity: high\nfru: disk\nconfidence: 0.5\nrecommendation: r\n" \
        "select:\n  kind: sense\n"


@pytest.mark.parametrize("threshold, reason", [
    ("  count: many\n", "threshold.count': must be a whole number"),
    ("  count: 0\n", "threshold.count': must be a whole number"),
    ("  distinct_units: 1.5\n", "threshold.distinct_units': must be a whole number"),
    ("  window: -5\n", "threshold.window': must be a number of seconds"),
    ("  window: soon\n", "threshold.window': must be a number of seconds"),
])
def test_threshold_values_are_checked_where_they_are_written(tmp_path, threshold, reason):
    bad = tmp_path / "DD997_bad.yml"
    bad.write_text(_HEAD + "threshold:\n" + threshold)
    with pytest.raises(RuleError) as info:
        load_rule_file(bad)
    assert reason in str(info.value) and f"{bad}:11" in str(info.value)  # the line of the value


# -- the command line: rules list / check / test, and a user's own rule folder -----------------

MEDIUM = ("Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
          "Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] tag#3 Add. Sense: Unrecovered read error\n")
USER_RULE = """id: DD901
title: Any sense report on sdb
description: A user's own rule, here to show that a folder of rules joins the built-in ones.
severity: low
fru: disk
confidence: 0.3
select:
  kind: sense
  device: sdb
recommendation: Look at sdb.
examples:
  match:
    - log: |
        [1.0] sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]
      suspect: {device: sdb}
  no_match:
    - log: |
        [1.0] sd 2:0:2:0: [sdc] tag#3 Sense Key : Medium Error [current]
"""


def _cli(*args):
    from click.testing import CliRunner
    from diagdisk.cli.main import main
    return CliRunner().invoke(main, list(args))


def test_rules_list_shows_every_built_in_rule_and_a_users_own(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/DD901_sdb.yml").write_text(USER_RULE)
    listed = _cli("rules", "list", "--rules", str(tmp_path / "mine"))
    assert listed.exit_code == 0
    ids = [line.split()[0] for line in listed.output.splitlines()[1:]]   # under the header
    assert ids == [r.id for r in RULES] + ["DD901"]


def test_rules_test_runs_a_files_examples_and_fails_on_a_wrong_one(tmp_path):
    good = tmp_path / "DD901_sdb.yml"
    good.write_text(USER_RULE)
    assert _cli("rules", "test", str(good)).output == "DD901: ok\n"
    wrong = tmp_path / "DD902_sdb.yml"
    wrong.write_text(USER_RULE.replace("DD901", "DD902").replace("suspect: {device: sdb}", "suspect: {device: sdz}"))
    result = _cli("rules", "test", str(wrong))
    assert result.exit_code == 1 and "DD902: FAILED" in result.output and "sdz" in result.output


def test_rules_test_fails_a_rule_without_examples(tmp_path):
    bare = tmp_path / "DD903_bare.yml"
    bare.write_text(USER_RULE.replace("DD901", "DD903").split("examples:")[0])
    result = _cli("rules", "test", str(bare))
    assert result.exit_code == 1 and "no match examples" in result.output


def test_rules_check_names_the_file_of_a_malformed_rule(tmp_path):
    bad = tmp_path / "DD904_bad.yml"
    bad.write_text(USER_RULE.replace("DD901", "DD904").replace("confidence: 0.3", "confidence: 3"))
    result = _cli("rules", "check", str(bad))
    assert result.exit_code == 2 and str(bad) in result.output and "confidence" in result.output


def test_analyze_with_a_users_rule_folder_finds_what_it_selects(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/DD901_sdb.yml").write_text(USER_RULE)
    log = tmp_path / "messages"
    log.write_text(MEDIUM)
    result = _cli("analyze", str(log), "--format", "json", "--rules", str(tmp_path / "mine"))
    import json
    (report,) = json.loads(result.output)["reports"]
    rules = {f["rule"] for f in report["findings"]}
    assert {"DD901", "DD101"} <= rules


_GROUPED = """id: DD9{n}
title: Errors grouped by {by}
description: A test rule that groups every error by {by}, to show which part a group names.
severity: high
fru: bus
confidence: 0.5
select:
  kind: [scsi_result]
group_by: {by}
threshold:
  distinct_units: 2
recommendation: Look at the part the group names.
"""
_TWO_BUSES = ("Mar  2 18:07:17 db1 kernel: sd 0:0:1:0: [sdb] FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK\n"
              "Mar  2 18:07:18 db1 kernel: sd 0:0:2:0: [sdc] FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK\n"
              "Mar  2 18:07:19 db1 kernel: sd 0:1:1:0: [sdd] FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK\n")


@pytest.mark.parametrize("by, suspects", [("adapter", ["host0"]), ("channel", ["host0 channel 0"]),
                                         ("host", ["host0"]), ("none", ["host0"])])
def test_grouping_names_the_part_the_events_share(tmp_path, by, suspects):
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import evaluate_rule, build_context
    path = tmp_path / f"DD98{len(by)}_grouped.yml"
    path.write_text(_GROUPED.format(n=f"8{len(by)}", by=by))
    rule = load_rule_file(path)
    log = tmp_path / "messages"
    log.write_text(_TWO_BUSES)
    findings = evaluate_rule(rule, build_context(analyze([str(log)], jobs=1)))
    assert [f["suspect"]["device"] for f in findings] == suspects


def test_md_grouping_gathers_the_members_of_one_array(tmp_path):
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import evaluate_rule, build_context
    path = tmp_path / "DD990_md.yml"
    path.write_text(_GROUPED.format(n=90, by="md").replace("kind: [scsi_result]", "kind: [md_failure]")
                    .replace("distinct_units: 2", "count: 2"))
    log = tmp_path / "messages"
    log.write_text("Mar  2 18:07:17 db1 kernel: md/raid1:md0: Disk failure on sdb1, disabling device.\n"
                   "Mar  2 18:07:18 db1 kernel: md/raid1:md0: Disk failure on sdc1, disabling device.\n"
                   "Mar  2 18:07:19 db1 kernel: md/raid1:md1: Disk failure on sdd1, disabling device.\n")
    findings = evaluate_rule(load_rule_file(path), build_context(analyze([str(log)], jobs=1)))
    assert [f["suspect"]["device"] for f in findings] == ["md0"]


def test_rules_check_refuses_an_id_a_built_in_rule_has_as_analyze_does(tmp_path):
    clash = tmp_path / "DD101_mine.yml"
    clash.write_text(USER_RULE.replace("DD901", "DD101"))
    result = _cli("rules", "check", str(clash))
    assert result.exit_code == 2 and f"{clash}: rule id DD101 is the built-in rule" in result.output
    (tmp_path / "mine").mkdir()
    clash.rename(tmp_path / "mine" / clash.name)
    analyzed = _cli("analyze", str(tmp_path / "mine" / clash.name), "--rules", str(tmp_path / "mine"))
    assert analyzed.exit_code == 2   # what check now says before analyze does
    built_in = next(r for r in RULES if r.id == "DD101")
    assert _cli("rules", "check", str(built_in.path)).output == "1 rules ok\n"   # a built-in file is itself


def test_rules_check_and_test_take_a_folder(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/DD901_sdb.yml").write_text(USER_RULE)
    (tmp_path / "mine/more").mkdir()
    (tmp_path / "mine/more/DD905_sdb.yml").write_text(USER_RULE.replace("DD901", "DD905"))
    checked = _cli("rules", "check", str(tmp_path / "mine"))
    assert checked.exit_code == 0 and checked.output == "2 rules ok\n"
    assert _cli("rules", "test", str(tmp_path / "mine")).output == "DD901: ok\nDD905: ok\n"
    (tmp_path / "empty").mkdir()
    empty = _cli("rules", "check", str(tmp_path / "empty"))
    assert empty.exit_code == 2 and "no rule file" in empty.output
    assert _cli("rules", "check", str(RULES[0].path.parents[1])).output == f"{len(RULES)} rules ok\n"


def test_rules_list_has_a_header():
    lines = _cli("rules", "list").output.splitlines()
    assert lines[0].split() == ["id", "severity", "fru", "title"]
    assert [line.split()[0] for line in lines[1:]] == [r.id for r in RULES]
