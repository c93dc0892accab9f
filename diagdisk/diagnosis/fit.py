"""Fit the inference's weights (rules/model/inference.yml) on the tune part of a labelled corpus.

A corpus is a folder of cases laid out as tests/corpus: `<case>/input/` and `<case>/expected.json`
(`suspects`, most likely first, `accept` for equally defensible readings, `meta.split`). Only
cases whose split is `tune` (or that have no `meta`) are read; the `check` part is left alone, so
that it stays an honest measure of cases the numbers never saw.

The objective is the log probability the model gives to the expert's reading (the right part, or
no fault for a negative case), summed over cases, minus a penalty for moving each weight away from
its expert starting value (a Gaussian prior of the same width for every weight): with a hundred
cases, the data refines what the hardware says rather than replacing it. The search is coordinate
descent with shrinking steps: the objective is smooth but cheap to evaluate, and this keeps the
fit free of a numerical library's version.
"""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass
from pathlib import Path

from .inference import (FAULT_CLASSES, ORIGIN_CLASSES, SEVERITIES, Weights, build_problem, weigh)

# The founding cases (the seed documents' own excerpts and the first real cases, no `meta`) are the
# project's reference readings: each counts as this many gathered cases in the objective.
FOUNDING_WEIGHT = 5.0
# how far (in log-odds) the data may move a weight before the prior's penalty equals one case's loss
PRIOR_WIDTH = 1.0
# weights that must keep their sign and range to mean what they say: a prior is a log probability
# below even odds, a quiet unit never speaks for a shared part, a late unit keeps at most all its weight
_BOUNDS = {"repeat": (0.0, 2.0), "finding_scale": (0.1, 3.0), "asynchronous": (0.0, 1.0), "after_resume": (0.0, 1.0), "synchronous": (0.0, 1.5),
           "second_fault": (-8.0, -0.5)}
_BOUNDS_BY_PREFIX = {"prior.": (-6.0, 0.0), "quiet.": (0.0, 3.0), "origin.": (-4.0, 4.0), "severity.": (-3.0, 3.0)}
# Only these weights are fitted (a hundred-odd cases cannot tell 89 numbers apart): the priors, what
# each class's own origin, a timeout and a consequence say of it, how repeats, findings and
# severities count, quiet neighbours, onsets out of step and a second fault. The cross terms (a
# disk's fault heard as the adapter's) keep the values the hardware gives them.
def _fitted(name: str) -> bool:
    if name.startswith("origin."):
        fru, origin = name.split(".")[1:]
        own = {"disk": "device", "cable": "link", "controller": "adapter", "bus": "bus", "enclosure": "enclosure",
               "path": "path", "power": "power"}[fru]
        return origin in (own, "ambiguous", "none") or (fru == "path" and origin in ("backend", "device"))
    return True


@dataclass
class Case:
    name: str
    expected: dict
    problem: object
    context: object
    matches: list      # per hypothesis: whether naming it first is the expert's reading
    negative: bool


def split_of(expected: dict) -> str:
    return (expected.get("meta") or {}).get("split", "tune")


def same_part(suspect: dict, expected: dict) -> bool:
    """The expert's part, by any name the text gives it (as the corpus is scored)."""
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


def load_cases(corpus: Path, split: str = "tune", names: list[str] | None = None) -> list[Case]:
    """The labelled cases of one split in a corpus folder (or a folder of samples with expected.json)."""
    from .analysis import analyze
    from .engine import _suspect_of, build_context, evaluate_rule, load_rules, log_span_seconds
    rules = load_rules()
    cases = []
    for folder in sorted(p for p in corpus.iterdir() if (p / "expected.json").exists()):
        expected = json.loads((folder / "expected.json").read_text())
        if split_of(expected) != split or (names is not None and folder.name not in names):
            continue
        root = folder / "input" if (folder / "input").is_dir() else folder
        analysis = analyze([str(root)], jobs=1)
        context = build_context(analysis)
        findings = [f for rule in rules for f in evaluate_rule(rule, context)]
        problem = build_problem(context, findings, log_span_s=log_span_seconds(analysis))
        wanted = [expected["suspects"][0], *expected.get("accept", [])]
        negative = expected["suspects"][0]["fru"] == "none"
        matches = [any(e["fru"] != "none" and same_part(_suspect_of(h, problem, context), e) for e in wanted)
                   for h in problem.hypotheses]
        cases.append(Case(folder.name, expected, problem, context, matches, negative))
    return cases


def case_probability(case: Case, weights: Weights) -> tuple[float, bool]:
    """The probability the model gives the expert's reading, and whether it is the model's first."""
    explanations = weigh(case.problem, weights)
    index = {id(h): i for i, h in enumerate(case.problem.hypotheses)}

    def right(e) -> bool:
        if not e.parts:
            return case.negative
        first = max(e.parts, key=lambda h: h.posterior)
        return case.matches[index[id(first)]]
    probability = sum(e.posterior for e in explanations if right(e))
    return probability, right(explanations[0])


def objective(cases: list[Case], weights: Weights, start: list[float]) -> float:
    total = 0.0
    for case in cases:
        probability, _ = case_probability(case, weights)
        share = FOUNDING_WEIGHT if "meta" not in case.expected else 1.0
        total += share * math.log(max(probability, 1e-6))
    penalty = sum((a - b) ** 2 for a, b in zip(weights.as_vector(), start)) / (2 * PRIOR_WIDTH ** 2)
    return total - penalty


def _names() -> list[str]:
    names = [f"prior.{c}" for c in FAULT_CLASSES]
    names += [f"origin.{c}.{o}" for c in FAULT_CLASSES for o in ORIGIN_CLASSES]
    names += ["repeat", "finding_scale"]
    names += [f"severity.{s}" for s in SEVERITIES]
    names += [f"quiet.{c}" for c in FAULT_CLASSES]
    names += ["asynchronous", "second_fault", "after_resume", "synchronous"]
    return names


def fit(cases: list[Case], start: Weights, rounds: int = 4, log=print) -> Weights:
    names = _names()
    origin_vector = start.as_vector()
    vector = list(origin_vector)
    best = objective(cases, Weights.from_vector(vector), origin_vector)
    log(f"start: objective {best:.2f}")
    step = 1.0
    for round_number in range(rounds):
        improved = 0
        for i, name in enumerate(names):
            if not _fitted(name):
                continue
            low, high = _BOUNDS.get(name) or next(
                (b for prefix, b in _BOUNDS_BY_PREFIX.items() if name.startswith(prefix)), (-8.0, 8.0))
            this_step = step * (0.25 if name in ("repeat", "asynchronous", "finding_scale", "after_resume",
                                                 "synchronous") else 1.0)
            for direction in (1, -1):
                trial = list(vector)
                trial[i] = min(max(trial[i] + direction * this_step, low), high)
                if trial[i] == vector[i]:
                    continue
                value = objective(cases, Weights.from_vector(trial), origin_vector)
                if value > best + 1e-6:
                    vector, best = trial, value
                    improved += 1
                    break
        log(f"round {round_number + 1}: step {step:.3f}, objective {best:.2f}, {improved} weights moved")
        step /= 2
    return Weights.from_vector(vector)


def calibrate(cases: list[Case], start: Weights, folds: int = 5, rounds: int = 3, log=print) -> tuple[float, dict]:
    """The temperature that makes the probabilities honest on cases the weights were not fitted on:
    each fold's cases are weighed with weights fitted on the other folds, and the temperature that
    minimises the log loss of those held-out readings is kept (with the held-out score it gives)."""
    import dataclasses
    import hashlib
    held_out = []
    for fold in range(folds):
        train = [c for c in cases if int(hashlib.sha1(c.name.encode()).hexdigest()[:8], 16) % folds != fold]
        test = [c for c in cases if int(hashlib.sha1(c.name.encode()).hexdigest()[:8], 16) % folds == fold]
        fitted = fit(train, start, rounds=rounds, log=lambda line: None)
        held_out += [(case, fitted) for case in test]
        log(f"fold {fold + 1}/{folds}: fitted on {len(train)}, held out {len(test)}")

    def loss(temperature: float) -> float:
        total = 0.0
        for case, fitted in held_out:
            probability, _ = case_probability(case, dataclasses.replace(fitted, temperature=temperature))
            total -= math.log(max(probability, 1e-6))
        return total / len(held_out)
    temperatures = [0.5 + 0.1 * i for i in range(36)]
    best = min(temperatures, key=loss)
    right = sum(case_probability(case, dataclasses.replace(fitted, temperature=best))[1] for case, fitted in held_out)
    return best, {"held_out_right": right, "held_out_cases": len(held_out), "held_out_log_loss": round(loss(best), 4),
                  "held_out_log_loss_uncalibrated": round(loss(1.0), 4)}


def score(cases: list[Case], weights: Weights) -> dict:
    right = sum(1 for case in cases if case_probability(case, weights)[1])
    return {"cases": len(cases), "right": right}


def write_weights(path: Path, weights: Weights, cases: list[Case], before: dict, after: dict,
                  held_out: dict | None = None) -> None:
    import yaml
    data = {
        "provenance": {
            "source": "fitted by `diagdisk rules fit` on the tune part of a labelled corpus, from the expert "
                      "starting values in diagdisk/diagnosis/inference.py's docs (docs/inference.md)",
            "fitted": datetime.date.today().isoformat(),
            "tune_cases": len(cases),
            "tune_right_before": before["right"], "tune_right_after": after["right"],
            "prior_width": PRIOR_WIDTH,
            **({"cross_validated": held_out} if held_out else {}),
        },
        "weights": {
            "prior": {c: round(weights.prior[c], 3) for c in FAULT_CLASSES},
            "origin": {c: {o: round(weights.origin[c][o], 3) for o in ORIGIN_CLASSES} for c in FAULT_CLASSES},
            "repeat": round(weights.repeat, 3), "finding_scale": round(weights.finding_scale, 3),
            "severity": {s: round(weights.severity[s], 3) for s in SEVERITIES},
            "quiet": {c: round(weights.quiet[c], 3) for c in FAULT_CLASSES},
            "asynchronous": round(weights.asynchronous, 3), "second_fault": round(weights.second_fault, 3),
            "after_resume": round(weights.after_resume, 3),
            "temperature": round(weights.temperature, 3),
            "synchronous": round(weights.synchronous, 3),
        },
    }
    header = ("# The numbers of the verdict's inference (diagdisk/diagnosis/inference.py, docs/inference.md),\n"
              "# on a log-odds scale against 'no part failed'. Written by `diagdisk rules fit`; the expert\n"
              "# starting values are in rules/model/inference-start.yml.\n")
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, width=120))
