"""The verdict as an inference over the storage path.

Every explanation the evidence allows is a hypothesis: no part failed (the errors are background
noise or benign operation), one part failed (a disk, the link or cable of one port, an enclosure or
expander, a controller, the PCIe link above it, a SAN path or virtual backend, the power), or two
parts failed together. Each is scored by how well it explains every error the logs hold, in the
spirit of Sherlock's inference graph (Bahl et al., SIGCOMM 2007):

    score(H) = log prior(H)
             + sum over the rule findings that name H's part       (a pattern the rules detect)
             + sum over the error-event groups on H's path         (who spoke, by origin class)
             - the units behind a shared part that stayed quiet    (a dead controller silences all)
             , with events of units whose trouble began long before or after the others'
               counting less toward a shared part (a shared fault strikes its units together)

and the scores become posteriors with a softmax (the no-fault hypothesis is the zero of the
scale). Every weight lives in rules/model/inference.yml: its starting values are what the hardware
does (a medium error is the drive's own word, a CRC error the link's, a timeout anyone's), refined
by `diagdisk rules fit` on the tune part of a labelled corpus; the file says which and when.

An event group is one unit's events of one kind and origin: a storm of ten thousand identical
timeouts is one group whose weight grows with the log of its count, so that a storm does not drown
the other evidence. Events a benign rule explains (an empty port, a unit attention, a user's
unplug) take no part in any hypothesis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import yaml

from ..errors import DiagdiskError
from ..resources import rules_dir

FAULT_CLASSES = ("disk", "cable", "controller", "bus", "enclosure", "path", "power")
ORIGIN_CLASSES = ("device", "link", "adapter", "bus", "enclosure", "power", "path", "backend", "ambiguous", "none")
SEVERITIES = ("info", "low", "medium", "high", "critical")
# A shared part's fault reaches every busy unit behind it within one SCSI command timeout (sd's
# default is 30 s) plus the error handler's round: units whose trouble starts further apart than
# this did not fail from one cause at one time.
SYNCHRONOUS_ONSET_S = 60.0
# pairs of concurrent faults are looked for among this many best single explanations
PAIR_CANDIDATES = 6
# rule group_by -> event column of the part (engine.GROUPINGS without importing the engine)
_GROUP_COLUMN = {"unit": "unit", "port": "path_port", "enclosure": "path_enclosure", "adapter": "path_adapter",
                 "pci": "path_pci", "bus": "path_bus", "channel": "channel_key", "path": "mpath_map", "md": "md",
                 "host": None, "none": None}


@dataclass(frozen=True)
class Weights:
    """The numbers of the model (rules/model/inference.yml)."""

    prior: dict                 # fault class -> log odds of that part failing against no fault at all
    origin: dict                # fault class -> origin class -> log likelihood ratio of one event group
    repeat: float               # how much a group's weight grows with the log of its count
    finding_scale: float        # a rule finding's log odds (from its confidence) is scaled by this
    severity: dict              # severity -> log odds added by a finding of that severity
    quiet: dict                 # fault class -> cost of each quiet unit behind the part (log scale)
    asynchronous: float         # share of its weight a unit keeps when its onset is out of step
    second_fault: float         # log prior of a second, concurrent fault
    provenance: dict = field(default_factory=dict)

    def as_vector(self) -> list[float]:
        values = [self.prior[c] for c in FAULT_CLASSES]
        values += [self.origin[c][o] for c in FAULT_CLASSES for o in ORIGIN_CLASSES]
        values += [self.repeat, self.finding_scale]
        values += [self.severity[s] for s in SEVERITIES]
        values += [self.quiet[c] for c in FAULT_CLASSES]
        values += [self.asynchronous, self.second_fault]
        return values

    @classmethod
    def from_vector(cls, values, provenance=None) -> "Weights":
        values = list(values)
        take = lambda n: [values.pop(0) for _ in range(n)]  # noqa: E731
        prior = dict(zip(FAULT_CLASSES, take(len(FAULT_CLASSES))))
        origin = {c: dict(zip(ORIGIN_CLASSES, take(len(ORIGIN_CLASSES)))) for c in FAULT_CLASSES}
        repeat, finding_scale = take(2)
        severity = dict(zip(SEVERITIES, take(len(SEVERITIES))))
        quiet = dict(zip(FAULT_CLASSES, take(len(FAULT_CLASSES))))
        asynchronous, second_fault = take(2)
        return cls(prior, origin, repeat, finding_scale, severity, quiet, asynchronous, second_fault,
                   provenance or {})


def weights_file():
    return rules_dir() / "model" / "inference.yml"


@cache
def load_weights() -> Weights:
    return read_weights(weights_file())


def read_weights(path) -> Weights:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        weights = data["weights"]
        return Weights(prior={c: float(weights["prior"][c]) for c in FAULT_CLASSES},
                       origin={c: {o: float(weights["origin"][c][o]) for o in ORIGIN_CLASSES} for c in FAULT_CLASSES},
                       repeat=float(weights["repeat"]), finding_scale=float(weights["finding_scale"]),
                       severity={s: float(weights["severity"][s]) for s in SEVERITIES},
                       quiet={c: float(weights["quiet"][c]) for c in FAULT_CLASSES},
                       asynchronous=float(weights["asynchronous"]), second_fault=float(weights["second_fault"]),
                       provenance=data.get("provenance") or {})
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        raise DiagdiskError(f"cannot read the inference weights {path}: {exc}") from None


# ------------------------------------------------------------------ the problem: what can be weighed

@dataclass
class Group:
    """One unit's error events of one kind and origin."""

    key: tuple
    unit: str | None
    origin: str
    count: int
    onset: tuple | None        # (clock, t) of the first event
    records: list


@dataclass(eq=False)
class Hypothesis:
    fru: str
    column: str | None          # the event column naming the part (None: the whole machine)
    key: str | None             # its value
    findings: list = field(default_factory=list)
    groups: set = field(default_factory=set)          # indexes into Problem.groups
    quiet_units: int = 0
    out_of_step: set = field(default_factory=set)     # groups of units whose onset is out of step
    # filled by scoring
    score: float = 0.0
    posterior: float = 0.0

    @property
    def ident(self) -> tuple:
        return (self.fru, self.column, self.key)


@dataclass
class Problem:
    groups: list
    hypotheses: list
    benign: list                # findings that explain events as no fault


def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def build_problem(context, findings: list[dict]) -> Problem:
    """The hypotheses the evidence allows and the event groups each would explain."""
    benign_ids: set[int] = set()
    benign = [f for f in findings if f["fru"] == "none"]
    for finding in benign:
        benign_ids |= finding.get("_explained") or set()
    rows = context.events
    records = context.records
    error_rows = [row for row in rows if row.get("error_class") and id(records[row["_index"]]) not in benign_ids]
    # the groups
    groups: list[Group] = []
    group_of: dict[tuple, int] = {}
    group_of_record: dict[int, int] = {}
    for row in error_rows:
        who = row.get("unit") or row.get("path_adapter") or row.get("pci") or row.get("adapter") or "(no device named)"
        key = (who, row.get("kind"), row.get("origin"))
        index = group_of.get(key)
        if index is None:
            index = group_of[key] = len(groups)
            groups.append(Group(key=key, unit=row.get("unit"), origin=row.get("origin") or "ambiguous", count=0,
                                onset=None, records=[]))
        group = groups[index]
        record = records[row["_index"]]
        group.count += int(row.get("repeat") or 1)
        group.records.append(record)
        if not _is_missing(row.get("t")):
            stamp = (row.get("clock") or "", float(row["t"]))
            if group.onset is None or (stamp[0] == group.onset[0] and stamp[1] < group.onset[1]):
                group.onset = stamp
        group_of_record[id(record)] = index
    hypotheses: dict[tuple, Hypothesis] = {}

    def hypothesis(fru, column, key) -> Hypothesis:
        ident = (fru, column, key)
        if ident not in hypotheses:
            hypotheses[ident] = Hypothesis(fru, column, key)
        return hypotheses[ident]

    for finding in findings:
        if finding["fru"] == "none":
            continue
        column = _GROUP_COLUMN.get(finding.get("_group_by") or "unit")
        h = hypothesis(finding["fru"], column, finding.get("_group_key") if column else None)
        h.findings.append(finding)
        h.groups |= {group_of_record[i] for i in finding.get("_explained") or () if i in group_of_record}
    for index, group in enumerate(groups):
        row_of = group.records[0]
        virtual, raid_volume = bool(row_of.get("_path") and row_of["_path"].virtual), bool(
            row_of.get("_path") and row_of["_path"].raid_volume)
        transport = row_of["_path"].transport if row_of.get("_path") else None
        if group.unit:
            # a virtual disk or a SAN LUN has no disk of its own to replace in this machine
            own = "path" if virtual or transport in ("fc", "iscsi") else "disk"
            hypothesis(own, "unit", group.unit).groups.add(index)
        path = row_of.get("_path")
        for fru, attribute in (("cable", "port"), ("enclosure", "enclosure"), ("controller", "adapter"),
                               ("bus", "bus")):
            value = getattr(path, attribute, None) if path is not None else None
            if not value or (virtual and fru in ("cable", "enclosure", "bus")):
                continue
            # the guest's controller of a virtual disk is the hypervisor's storage stack, and the
            # port of a SAN LUN is its session or remote port: both are the path, not a part here
            if virtual or (transport in ("fc", "iscsi") and fru == "cable"):
                fru = "path"
            hypothesis(fru, f"path_{attribute}", value).groups.add(index)
        if path is not None and path.pci and not path.bus and not virtual:
            hypothesis("bus", "path_pci", path.pci).groups.add(index)
        hypothesis("power", None, None).groups.add(index)
    # a rule's finding about a part covers every error group on that part, not only the events it selected
    by_column: dict[str, dict] = {}
    for row in error_rows:
        index = group_of_record[id(records[row["_index"]])]
        for column in {"unit", "path_port", "path_enclosure", "path_adapter", "path_pci", "path_bus",
                       "channel_key", "mpath_map", "md"}:
            value = row.get(column)
            if not _is_missing(value) and value != "":
                by_column.setdefault(column, {}).setdefault(value, set()).add(index)
    for h in hypotheses.values():
        if h.column:
            h.groups |= by_column.get(h.column, {}).get(h.key, set())
    _quiet_and_out_of_step(hypotheses.values(), rows, groups)
    # one physical part seen twice (a rule's unit-level cable finding and the port the path names)
    merged: dict[tuple, Hypothesis] = {}
    for h in sorted(hypotheses.values(), key=lambda h: (not h.findings, str(h.ident))):
        same = (h.fru, frozenset(h.groups))
        if same in merged and h.groups:
            merged[same].findings += h.findings
            continue
        merged[same] = h
    kept = [h for h in merged.values() if h.groups or h.findings]
    return Problem(groups=groups, hypotheses=kept, benign=benign)


def _quiet_and_out_of_step(hypotheses, rows: list[dict], groups: list[Group]) -> None:
    """Units behind a shared part that report no trouble, and units whose trouble began out of step
    with the others' (a fault of one part strikes the units behind it together)."""
    units_at: dict[tuple, set] = {}
    for row in rows:
        unit = row.get("unit")
        if not unit:
            continue
        for column in ("path_port", "path_enclosure", "path_adapter", "path_pci", "path_bus", "channel_key",
                       "mpath_map"):
            value = row.get(column)
            if not _is_missing(value) and value != "":
                units_at.setdefault((column, value), set()).add(unit)
        units_at.setdefault((None, None), set()).add(unit)
    for h in hypotheses:
        if h.column == "unit":
            continue
        failing = {groups[i].unit for i in h.groups} - {None}
        h.quiet_units = len(units_at.get((h.column, h.key), set()) - failing)
        onsets: dict[str, tuple] = {}
        for i in h.groups:
            group = groups[i]
            if group.unit and group.onset and group.origin != "none":
                current = onsets.get(group.unit)
                if current is None or (current[0] == group.onset[0] and group.onset[1] < current[1]):
                    onsets[group.unit] = group.onset
        if len(onsets) < 2:
            continue
        by_clock: dict[str, list] = {}
        for unit, (clock, t) in onsets.items():
            by_clock.setdefault(clock, []).append((t, unit))
        for stamps in by_clock.values():
            stamps.sort()
            if len(stamps) < 2:
                continue
            # the moment most units' trouble began together: the densest window's start
            best_start, best = stamps[0][0], 0
            for start, _ in stamps:
                inside = sum(1 for t, _ in stamps if start <= t <= start + SYNCHRONOUS_ONSET_S)
                if inside > best:
                    best_start, best = start, inside
            late = {unit for t, unit in stamps if not best_start <= t <= best_start + SYNCHRONOUS_ONSET_S}
            h.out_of_step |= {i for i in h.groups if groups[i].unit in late}


# ------------------------------------------------------------------ scoring

def _logit(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return math.log(p / (1 - p))


def group_weight(weights: Weights, fru: str, group: Group, out_of_step: bool) -> float:
    value = weights.origin[fru].get(group.origin, weights.origin[fru]["ambiguous"])
    value *= 1 + weights.repeat * math.log(max(group.count, 1))
    if out_of_step:
        value *= weights.asynchronous
    return value


def finding_weight(weights: Weights, finding: dict) -> float:
    return weights.finding_scale * _logit(float(finding.get("_rule_confidence", finding["confidence"]))) \
        + weights.severity.get(finding["severity"], 0.0)


def contributions(weights: Weights, problem: Problem, h: Hypothesis) -> dict[int, float]:
    return {i: group_weight(weights, h.fru, problem.groups[i], i in h.out_of_step) for i in h.groups}


def single_score(weights: Weights, problem: Problem, h: Hypothesis, contribution: dict[int, float]) -> float:
    return (weights.prior[h.fru] + sum(finding_weight(weights, f) for f in _distinct(h.findings))
            + sum(contribution.values()) - weights.quiet[h.fru] * math.log1p(h.quiet_units))


def _distinct(findings: list[dict]) -> list[dict]:
    seen, kept = set(), []
    for f in findings:
        if id(f) not in seen:
            seen.add(id(f))
            kept.append(f)
    return kept


@dataclass
class Explanation:
    parts: tuple                # one or two Hypothesis
    score: float
    posterior: float = 0.0


def weigh(problem: Problem, weights: Weights) -> list[Explanation]:
    """Every explanation with its posterior, most likely first; the empty one is no fault."""
    singles = []
    contribution_of = {}
    for h in problem.hypotheses:
        contribution_of[id(h)] = contributions(weights, problem, h)
        h.score = single_score(weights, problem, h, contribution_of[id(h)])
        singles.append(Explanation((h,), h.score))
    explanations = [Explanation((), 0.0), *singles]
    best = sorted(singles, key=lambda e: -e.score)[:PAIR_CANDIDATES]
    for a_index, first in enumerate(best):
        for second in best[a_index + 1:]:
            a, b = first.parts[0], second.parts[0]
            ca, cb = contribution_of[id(a)], contribution_of[id(b)]
            joint = {i: max(ca.get(i, -math.inf), cb.get(i, -math.inf)) for i in set(ca) | set(cb)}
            score = (weights.prior[a.fru] + weights.prior[b.fru] + weights.second_fault
                     + sum(finding_weight(weights, f) for f in _distinct(a.findings + b.findings))
                     + sum(joint.values())
                     - weights.quiet[a.fru] * math.log1p(a.quiet_units) - weights.quiet[b.fru] * math.log1p(b.quiet_units))
            explanations.append(Explanation((a, b), score))
    top = max(e.score for e in explanations)
    total = sum(math.exp(e.score - top) for e in explanations)
    for e in explanations:
        e.posterior = math.exp(e.score - top) / total
    for h in problem.hypotheses:
        h.posterior = sum(e.posterior for e in explanations if h in e.parts)
    explanations.sort(key=lambda e: -e.posterior)
    return explanations


# ------------------------------------------------------------------ saying why, and why not

def name_of(h: Hypothesis) -> str:
    if h.fru == "power":
        return "power"
    return f"{h.fru} {h.key}" if h.key else h.fru


def describe_explanation(problem: Problem, explanation: Explanation) -> dict:
    """One explanation as the report shows it: its parts, its probability, the event groups it
    accounts for, and the evidence that weighs most for it (file:line)."""
    if not explanation.parts:
        return {"parts": [], "name": "no fault", "probability": round(explanation.posterior, 4),
                "explains": 0, "of": len(problem.groups), "evidence": []}
    covered = set().union(*(h.groups for h in explanation.parts))
    weights = load_weights()
    scored = []
    for h in explanation.parts:
        for i in h.groups:
            group = problem.groups[i]
            scored.append((group_weight(weights, h.fru, group, i in h.out_of_step), group))
    scored.sort(key=lambda pair: -pair[0])
    evidence = []
    for value, group in scored[:5]:
        record = group.records[0]
        evidence.append({"source": record.get("source"), "line": record.get("line"), "weight": round(value, 2),
                         "what": f"{group.key[0]}: {group.key[1]} x{group.count} ({group.origin})"})
    return {"parts": [{"fru": h.fru, "key": h.key} for h in explanation.parts],
            "name": " + ".join(name_of(h) for h in explanation.parts),
            "probability": round(explanation.posterior, 4), "explains": len(covered), "of": len(problem.groups),
            "evidence": evidence, "why_not": None}


def why_not(problem: Problem, best: Explanation, other: Explanation) -> str:
    """Why a runner-up loses to the winner, in the terms an engineer uses."""
    best_groups = set().union(*(h.groups for h in best.parts)) if best.parts else set()
    other_groups = set().union(*(h.groups for h in other.parts)) if other.parts else set()
    reasons = []
    if not other.parts:
        return "the errors are too many and too specific for background noise"
    if not best.parts:
        return "its evidence is weaker than what the same logs show on healthy machines"
    missing = best_groups - other_groups
    if set(best.parts) < set(other.parts):
        extra = other_groups - best_groups
        return ("a second fault at the same time explains nothing more" if not extra else
                f"a second, concurrent fault is rarer than one, and it adds only {len(extra)} error group"
                f"{'s' if len(extra) != 1 else ''}")
    if missing:
        reasons.append(f"it leaves {len(missing)} of the {len(best_groups)} error groups the winner explains")
    for h in other.parts:
        if h in best.parts:
            continue
        if h.quiet_units and h.column != "unit":
            reasons.append(f"{h.quiet_units} unit{'s' if h.quiet_units != 1 else ''} behind it stayed quiet")
        if h.out_of_step:
            reasons.append("its units' trouble did not begin together")
    if not reasons:
        reasons.append("what its messages say fits it less well")
    return "; ".join(dict.fromkeys(reasons))
