"""The weighing of explanations (diagnosis/inference.py): what each term does, on problems made by
hand and on the bundled samples, and the fit's round trip."""

from pathlib import Path

import pytest

from diagdisk.diagnosis import fit
from diagdisk.diagnosis.inference import (Group, Hypothesis, Problem, build_problem, load_weights, read_weights,
                                          weigh, why_not, weights_file, _quiet_and_out_of_step)

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
# the mechanism is tested with the expert starting values, which the fit does not move
EXPERT = read_weights(weights_file().with_name("inference-start.yml"))


def _problem(groups, parts, rows=()):
    hypotheses = []
    for fru, column, key, members in parts:
        h = Hypothesis(fru, column, key)
        h.groups = set(members)
        hypotheses.append(h)
    _quiet_and_out_of_step(hypotheses, list(rows), groups)
    return Problem(groups=groups, hypotheses=hypotheses, benign=[])


def _timeouts(unit, t, count=3):
    return Group(key=(unit, "timeout", "ambiguous"), unit=unit, origin="ambiguous", count=count,
                 onset=("wall", t), records=[{"source": "messages", "line": 1}])


def _first(problem):
    best = weigh(problem, EXPERT)[0]
    return sorted((h.fru, h.key) for h in best.parts)


def test_units_failing_together_behind_one_adapter_are_the_adapter():
    groups = [_timeouts(f"0:2:{i}:0", 1000.0 + i) for i in range(3)]
    rows = [{"unit": g.unit, "path_adapter": "host0"} for g in groups]
    parts = [("disk", "unit", g.unit, [i]) for i, g in enumerate(groups)]
    parts.append(("controller", "path_adapter", "host0", [0, 1, 2]))
    assert _first(_problem(groups, parts, rows)) == [("controller", "host0")]


def test_the_same_units_failing_days_apart_are_not_one_shared_fault():
    together = [_timeouts(f"0:2:{i}:0", 1000.0 + i) for i in range(3)]
    apart = [_timeouts(f"0:2:{i}:0", 1000.0 + i * 86400 * 5) for i in range(3)]
    scores = []
    for groups in (together, apart):
        rows = [{"unit": g.unit, "path_adapter": "host0"} for g in groups]
        parts = [("controller", "path_adapter", "host0", [0, 1, 2])]
        problem = _problem(groups, parts, rows)
        weigh(problem, EXPERT)
        scores.append(problem.hypotheses[0].score)
    assert scores[1] < scores[0]


def test_quiet_neighbours_speak_against_a_shared_part():
    groups = [Group(key=("0:0:1:0", "sense", "device"), unit="0:0:1:0", origin="device", count=4,
                    onset=("wall", 10.0), records=[{"source": "messages", "line": 3}])]
    rows = [{"unit": f"0:0:{i}:0", "path_adapter": "host0"} for i in range(8)]
    problem = _problem(groups, [("disk", "unit", "0:0:1:0", [0]), ("controller", "path_adapter", "host0", [0])], rows)
    assert problem.hypotheses[1].quiet_units == 7
    assert _first(problem) == [("disk", "0:0:1:0")]


def test_a_runner_up_says_why_it_loses():
    groups = [_timeouts(f"0:2:{i}:0", 1000.0 + i) for i in range(3)]
    rows = [{"unit": g.unit, "path_adapter": "host0"} for g in groups]
    parts = [("disk", "unit", g.unit, [i]) for i, g in enumerate(groups)]
    parts.append(("controller", "path_adapter", "host0", [0, 1, 2]))
    problem = _problem(groups, parts, rows)
    explanations = weigh(problem, EXPERT)
    disk_alone = next(e for e in explanations if len(e.parts) == 1 and e.parts[0].fru == "disk")
    assert "leaves 2 of the 3 error groups" in why_not(problem, explanations[0], disk_alone)


def test_posteriors_sum_to_one():
    groups = [_timeouts("0:0:0:0", 5.0)]
    problem = _problem(groups, [("disk", "unit", "0:0:0:0", [0])])
    explanations = weigh(problem, load_weights())
    assert sum(e.posterior for e in explanations) == pytest.approx(1.0)


def _sample_problem(name):
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import build_context, evaluate_rule, load_rules
    context = build_context(analyze([str(SAMPLES / name)], jobs=1))
    findings = [f for rule in load_rules() for f in evaluate_rule(rule, context)]
    return build_problem(context, findings)


def test_the_demo_s_medium_errors_weigh_for_its_disk():
    explanations = weigh(_sample_problem("demo-sosreport"), load_weights())
    assert [(h.fru, h.key) for h in explanations[0].parts] == [("disk", "2:0:2:0")]
    assert explanations[0].posterior > 2 * explanations[1].posterior


def test_a_controller_reset_storm_weighs_for_the_controller():
    explanations = weigh(_sample_problem("controller-wide-resets-mpt2sas-host0"), load_weights())
    assert [(h.fru, h.key) for h in explanations[0].parts] == [("controller", "host0")]


def test_a_healthy_sample_has_no_fault_first():
    explanations = weigh(_sample_problem("benign-noise-healthy"), load_weights())
    assert explanations[0].parts == ()


def test_the_report_carries_the_weighing(tmp_path):
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import evaluate_rules, load_rules
    _, verdict = evaluate_rules(load_rules(), analyze([str(SAMPLES / "demo-sosreport")], jobs=1))
    shown = verdict["inference"]["explanations"]
    assert shown[0]["name"].startswith("disk sdc") and shown[0]["evidence"]
    assert all(entry["why_not"] for entry in shown[1:])


def test_fit_never_lowers_the_objective_and_writes_weights_that_read_back(tmp_path):
    cases = fit.load_cases(SAMPLES, "tune")
    start = read_weights(weights_file().with_name("inference-start.yml"))
    vector = start.as_vector()
    fitted = fit.fit(cases, start, rounds=1, log=lambda line: None)
    assert fit.objective(cases, fitted, vector) >= fit.objective(cases, start, vector)
    out = tmp_path / "weights.yml"
    fit.write_weights(out, fitted, cases, fit.score(cases, start), fit.score(cases, fitted))
    assert read_weights(out).as_vector() == pytest.approx(fitted.as_vector(), abs=1e-3)


def test_the_committed_weights_say_where_they_come_from():
    provenance = load_weights().provenance
    assert provenance.get("tune_cases", 0) > 100 and "tune" in provenance["source"]


def test_a_disk_that_spoke_first_and_hung_its_neighbours_is_the_disk(tmp_path):
    """The rule sees two units time out together (DD310's pattern); the weighing still names the disk
    whose medium error came first, not the controller they share."""
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import evaluate_rules, load_rules
    log = tmp_path / "dmesg"
    log.write_text("[ 4990.000] sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
                   "[ 4990.001] sd 2:0:1:0: [sdb] tag#3 Add. Sense: Unrecovered read error\n"
                   "[ 5000.100] sd 2:0:1:0: [sdb] tag#4 FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK\n"
                   "[ 5001.100] sd 2:0:2:0: [sdc] tag#5 FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK\n")
    _, verdict = evaluate_rules(load_rules(), analyze([str(log)], jobs=1))
    assert (verdict["suspects"][0]["fru"], verdict["suspects"][0]["device"]) == ("disk", "sdb")
