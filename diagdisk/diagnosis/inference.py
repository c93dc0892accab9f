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
import re
from dataclasses import dataclass, field
from functools import cache

import yaml

from ..errors import DiagdiskError
from ..resources import rules_dir
from .engine import GROUPINGS

FAULT_CLASSES = ("disk", "cable", "controller", "bus", "enclosure", "path", "power")
ORIGIN_CLASSES = ("device", "link", "adapter", "bus", "enclosure", "power", "path", "backend", "ambiguous", "none")
SEVERITIES = ("info", "low", "medium", "high", "critical")
# A shared part's fault reaches every busy unit behind it within one SCSI command timeout (sd's
# default is 30 s) plus the error handler's round: units whose trouble starts further apart than
# this did not fail from one cause at one time.
SYNCHRONOUS_ONSET_S = 60.0
# A disk spins up within 30 s of power (the ATA and SCSI standards' limit) and a link retrains in
# less: trouble that begins within this long of a resume is the wake-up's, before it is a part's.
AFTER_RESUME_S = 60.0
# DMI product or hypervisor names of machines whose disks a hypervisor or cloud presents
_VIRTUAL_MACHINE = re.compile(r"VMware|VirtualBox|QEMU|KVM|Bochs|Xen|Hyper-V|Microsoft Corporation Virtual|"
                              r"Virtual Machine|Amazon EC2|Google Compute Engine|OpenStack|Parallels|BHYVE|"
                              r"Nutanix AHV|oVirt|RHEV|Standard PC \(", re.I)
# pairs of concurrent faults are looked for among this many best single explanations
PAIR_CANDIDATES = 6

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
    after_resume: float = 0.3   # share of its weight an event group keeps when it began as the machine woke
    temperature: float = 1.0    # scores are divided by it before they become probabilities (calibration)
    synchronous: float = 0.5    # share of the coincidence's log odds (units failing together) a shared part gains
    provenance: dict = field(default_factory=dict)

    def as_vector(self) -> list[float]:
        values = [self.prior[c] for c in FAULT_CLASSES]
        values += [self.origin[c][o] for c in FAULT_CLASSES for o in ORIGIN_CLASSES]
        values += [self.repeat, self.finding_scale]
        values += [self.severity[s] for s in SEVERITIES]
        values += [self.quiet[c] for c in FAULT_CLASSES]
        values += [self.asynchronous, self.second_fault, self.after_resume, self.synchronous]
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
        asynchronous, second_fault, after_resume, synchronous = take(4)
        return cls(prior, origin, repeat, finding_scale, severity, quiet, asynchronous, second_fault,
                   after_resume, 1.0, synchronous, provenance or {})


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
                       after_resume=float(weights.get("after_resume", 0.3)),
                       temperature=float(weights.get("temperature", 1.0)),
                       synchronous=float(weights.get("synchronous", 0.5)),
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
    after_resume: bool = False   # began while the machine went to sleep or woke up


@dataclass(eq=False)
class Hypothesis:
    fru: str
    column: str | None          # the event column naming the part (None: the whole machine)
    key: str | None             # its value
    findings: list = field(default_factory=list)
    groups: set = field(default_factory=set)          # indexes into Problem.groups
    quiet_units: int = 0
    out_of_step: set = field(default_factory=set)     # groups whose onset is out of step with the others'
    synchronous_units: int = 0                        # units whose trouble began within one window
    coincidence: float = 0.0                          # log odds against those onsets being independent
    together: set = field(default_factory=set)        # groups that began with other units' in one window
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
    virtual_machine: str | None = None   # what says the machine is a guest (a DMI or hypervisor line)


def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def build_problem(context, findings: list[dict], log_span_s: float = 0.0) -> Problem:
    """The hypotheses the evidence allows and the event groups each would explain."""
    benign_ids: set[int] = set()
    benign = [f for f in findings if f["fru"] == "none"]
    for finding in benign:
        benign_ids |= finding.get("_explained") or set()
    rows = context.events
    records = context.records
    error_rows = [row for row in rows if row.get("error_class") and id(records[row["_index"]]) not in benign_ids]
    # one order whatever order the records came in (workers and segments fold them in their own):
    # the groups, their first record and every sum over them do not depend on it
    error_rows.sort(key=lambda row: (str(row.get("source")), int(row.get("line") or 0), str(row.get("kind")),
                                     str(row.get("unit")), str(row.get("detail"))))
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
    guest = virtual_machine(records)
    _mark_after_resume(groups, records)
    _add_device_findings(groups, findings)
    scan_names = _scan_order_names(context.topology, groups)
    for group in groups:
        if group.unit in scan_names:
            group.unit = scan_names[group.unit]
    canonical = lambda value: scan_names.get(value, value)  # noqa: E731
    hypotheses: dict[tuple, Hypothesis] = {}

    def hypothesis(fru, column, key) -> Hypothesis:
        ident = (fru, column, key)
        if ident not in hypotheses:
            hypotheses[ident] = Hypothesis(fru, column, key)
        return hypotheses[ident]

    for finding in findings:
        if finding["fru"] == "none":
            continue
        column = GROUPINGS.get(finding.get("_group_by") or "unit")
        key = finding.get("_group_key") if column else None
        fru = finding["fru"]
        if fru in ("disk", "cable", "enclosure", "controller", "bus") and _presented(finding, guest):
            fru = "path"   # a guest's or a SAN's disk: the part is the hypervisor's or the array's
        h = hypothesis(fru, column, canonical(key) if column == "unit" else key)
        h.findings.append(finding)
        h.groups |= {group_of_record[i] for i in finding.get("_explained") or () if i in group_of_record}
    for index, group in enumerate(groups):
        row_of = group.records[0]
        transport = row_of["_path"].transport if row_of.get("_path") else None
        # in a guest every disk but a USB device passed through is one the hypervisor presents
        virtual = bool(row_of.get("_path") and row_of["_path"].virtual) or (guest is not None and transport != "usb")
        if group.unit and not _ARRAY_UNIT.fullmatch(group.unit):
            # a virtual disk or a SAN LUN has no disk of its own to replace in this machine (and an
            # md or dm array is no part at all: its members are)
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
                by_column.setdefault(column, {}).setdefault(canonical(value) if column == "unit" else value,
                                                            set()).add(index)
    for index, group in enumerate(groups):
        if group.unit:
            by_column.setdefault("unit", {}).setdefault(group.unit, set()).add(index)
    for h in hypotheses.values():
        if h.column:
            h.groups |= by_column.get(h.column, {}).get(h.key, set())
    _quiet_and_out_of_step(hypotheses.values(), rows, groups, log_span_s)
    # one physical part seen twice (a rule's unit-level cable finding and the port the path names)
    merged: dict[tuple, Hypothesis] = {}
    for h in sorted(hypotheses.values(), key=lambda h: (not h.findings, str(h.ident))):
        same = (h.fru, frozenset(h.groups))
        if same in merged and h.groups:
            merged[same].findings += h.findings
            continue
        merged[same] = h
    kept = [h for h in merged.values() if h.groups or h.findings]
    return Problem(groups=groups, hypotheses=kept, benign=benign, virtual_machine=guest)


# what a device-table rule's finding says in the terms of who spoke: SMART's own health and media
# counters are the drive's word; its interface CRC count is what the link did to its frames
_ORIGIN_OF_DEVICE_FINDING = {"disk": "device", "cable": "link"}


def _add_device_findings(groups: list[Group], findings: list[dict]) -> None:
    """A rule over the device table (SMART attributes) selects no event: its finding stands as one
    group of the origin its class implies, on its unit, so that it is weighed like a logged error."""
    for finding in findings:
        origin = _ORIGIN_OF_DEVICE_FINDING.get(finding["fru"])
        if finding.get("_explained") or origin is None or finding.get("_group_by") != "unit":
            continue
        unit = finding.get("_group_key")
        if not unit:
            continue
        evidence = finding.get("evidence") or [{}]
        groups.append(Group(key=(unit, f"smart ({finding['rule']})", origin), unit=unit, origin=origin, count=1,
                            onset=None, records=[{"source": evidence[0].get("source"), "line": evidence[0].get("line"),
                                                  "raw": evidence[0].get("text"), "kind": "smart", "_path": None}]))


_SD_NAME = re.compile(r"sd([a-z]+)")
_ARRAY_UNIT = re.compile(r"md\d+|md/\S+|md_d\d+|dm-\d+")


def _scan_order_names(topology, groups: list[Group]) -> dict[str, str]:
    """sdX -> H:C:T:L where the text never ties them but the kernel's own order does: sd names its
    disks in the order the SCSI scan finds them (host, channel, target, lun), so when no disk of
    /proc/scsi/scsi has a name, the n-th disk there is the n-th sd name (an old dmesg names a disk
    by its target id in one line and by sdX in the next)."""
    disks = [d for d in topology.devices.values() if d.hctl and (d.type or "").lower() in ("disk", "direct-access")]
    if not disks or any(d.name for d in disks):
        return {}
    ordered = sorted(disks, key=lambda d: tuple(int(x) for x in d.hctl.split(":")))
    mapping = {}
    for group in groups:
        match = _SD_NAME.fullmatch(group.unit or "")
        if not match or topology.find(group.unit) is not None and topology.find(group.unit).hctl:
            continue
        index = 0
        for letter in match.group(1):
            index = index * 26 + (ord(letter) - ord("a") + 1)
        if index - 1 < len(ordered):
            mapping[group.unit] = ordered[index - 1].hctl
    return mapping


def _presented(finding: dict, guest: str | None) -> bool:
    """Whether a finding's units are disks a hypervisor, a cloud or a SAN array presents."""
    paths = [r.get("_path") for r in finding.get("_records") or () if r.get("_path") is not None]
    if not paths:
        return False
    return all(p.virtual or p.transport in ("fc", "iscsi") or (guest is not None and p.transport != "usb")
               for p in paths)


def virtual_machine(records: list[dict]) -> str | None:
    """The line that says the machine is a guest of a hypervisor or a cloud, if any."""
    for record in records:
        if record.get("kind") == "machine" and record.get("detail") in ("hypervisor", "paravirt", "dmi"):
            text = str(record.get("text") or "")
            if "bare hardware" not in text and _VIRTUAL_MACHINE.search(text):
                return text
    return None


def _mark_after_resume(groups: list[Group], records: list[dict]) -> None:
    """Groups whose trouble began between a suspend and the minute after the resume that ended it."""
    spans: dict[str, list] = {}
    asleep: dict[str, float] = {}
    for record in sorted((r for r in records if r.get("kind") == "machine" and not _is_missing(r.get("t"))),
                         key=lambda r: r["t"]):
        clock = record.get("clock") or ""
        if record.get("detail") == "suspend":
            asleep[clock] = float(record["t"])
        elif record.get("detail") == "resume":
            start = asleep.pop(clock, float(record["t"]) - 5.0)
            spans.setdefault(clock, []).append((start, float(record["t"]) + AFTER_RESUME_S))
    if not spans:
        return
    for group in groups:
        if group.onset and any(start <= group.onset[1] <= end for start, end in spans.get(group.onset[0], ())):
            group.after_resume = True


def _quiet_and_out_of_step(hypotheses, rows: list[dict], groups: list[Group], log_span_s: float = 0.0) -> None:
    """Units behind a shared part that report no trouble, and units whose trouble began out of step
    with the others' (a fault of one part strikes the units behind it together)."""
    # how long each clock's log runs: the odds of a coincidence grow with it
    bounds: dict[str, list] = {}
    for row in rows:
        if not _is_missing(row.get("t")):
            low_high = bounds.setdefault(row.get("clock") or "", [float(row["t"]), float(row["t"])])
            low_high[0], low_high[1] = min(low_high[0], float(row["t"])), max(low_high[1], float(row["t"]))
    spans = {clock: high - low for clock, (low, high) in bounds.items()}
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
        # each group's onset, on its clock; the densest window of distinct units is when the part
        # failed, and groups that began outside it are out of step (an old medium error, a late retry)
        stamps_by_clock: dict[str, list] = {}
        for i in h.groups:
            group = groups[i]
            if group.unit and group.onset and group.origin != "none":
                stamps_by_clock.setdefault(group.onset[0], []).append((group.onset[1], group.unit, i))
        for stamps in stamps_by_clock.values():
            if len({unit for _, unit, _ in stamps}) < 2:
                continue
            best_start, best = _densest_window(stamps)
            # k independent faults beginning within one window of a log that spans T seconds is a
            # coincidence of odds about (window / T) ** (k - 1): that is what a shared part explains
            clock = groups[stamps[0][2]].onset[0]
            span = max(spans.get(clock, 0.0), log_span_s)
            odds = (best - 1) * math.log(max(span, SYNCHRONOUS_ONSET_S) / SYNCHRONOUS_ONSET_S + 1.0)
            h.synchronous_units = max(h.synchronous_units, best)
            h.coincidence = max(h.coincidence, odds)
            in_step = {i for t, _, i in stamps if best_start <= t <= best_start + SYNCHRONOUS_ONSET_S}
            h.out_of_step |= {i for _, _, i in stamps} - in_step
            if best >= 2:
                h.together |= in_step


def _densest_window(stamps: list) -> tuple[float, int]:
    """(start, distinct units) of the window of SYNCHRONOUS_ONSET_S holding the most distinct units,
    over (time, unit, group) stamps: one pass with two ends, so a storm of thousands of units costs
    a sort, not a square."""
    stamps.sort()
    inside: dict = {}
    best_start, best, low = stamps[0][0], 0, 0
    for t, unit, _ in stamps:
        inside[unit] = inside.get(unit, 0) + 1
        while stamps[low][0] < t - SYNCHRONOUS_ONSET_S:
            gone = stamps[low][1]
            inside[gone] -= 1
            if not inside[gone]:
                del inside[gone]
            low += 1
        if len(inside) > best:
            best_start, best = stamps[low][0], len(inside)
    return best_start, best


# ------------------------------------------------------------------ scoring

def _logit(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return math.log(p / (1 - p))


def group_weight(weights: Weights, fru: str, group: Group, out_of_step: bool, together: bool = False) -> float:
    value = weights.origin[fru].get(group.origin, weights.origin[fru]["ambiguous"])
    if together:
        # what several units say in the same minute says little about which of them spoke first:
        # to a part they share, it counts at least as a timeout would
        value = max(value, weights.origin[fru]["ambiguous"])
    value *= 1 + weights.repeat * math.log(max(group.count, 1))
    if out_of_step:
        value *= weights.asynchronous
    if group.after_resume and value > 0:
        value *= weights.after_resume
    return value


def finding_weight(weights: Weights, finding: dict) -> float:
    return weights.finding_scale * _logit(float(finding.get("_rule_confidence", finding["confidence"]))) \
        + weights.severity.get(finding["severity"], 0.0)


def contributions(weights: Weights, problem: Problem, h: Hypothesis) -> dict[int, float]:
    return {i: group_weight(weights, h.fru, problem.groups[i], i in h.out_of_step, i in h.together) for i in h.groups}


def part_terms(weights: Weights, h: Hypothesis) -> float:
    """What a part's own shape says: its prior, the units behind it that stayed quiet, and those
    whose trouble began together (independent faults rarely start within the same minute)."""
    return (weights.prior[h.fru] - weights.quiet[h.fru] * math.log1p(h.quiet_units)
            + weights.synchronous * h.coincidence)


def single_score(weights: Weights, problem: Problem, h: Hypothesis, contribution: dict[int, float]) -> float:
    return part_terms(weights, h) + sum(finding_weight(weights, f) for f in _distinct(h.findings)) \
        + sum(contribution.values())


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
            score = (part_terms(weights, a) + part_terms(weights, b) + weights.second_fault
                     + sum(finding_weight(weights, f) for f in _distinct(a.findings + b.findings))
                     + sum(joint.values()))
            explanations.append(Explanation((a, b), score))
    top = max(e.score for e in explanations)
    scale = 1.0 / max(weights.temperature, 1e-3)
    total = sum(math.exp((e.score - top) * scale) for e in explanations)
    for e in explanations:
        e.posterior = math.exp((e.score - top) * scale) / total
    for h in problem.hypotheses:
        h.posterior = sum(e.posterior for e in explanations if h in e.parts)
    explanations.sort(key=lambda e: (-round(e.posterior, 12), tuple(str(h.ident) for h in e.parts)))
    return explanations


# ------------------------------------------------------------------ saying why, and why not

# who the kernel says spoke, as the evidence list says it
_WHO_SPOKE = {"device": "the device's own report", "link": "the link", "adapter": "the adapter", "bus": "the bus",
              "enclosure": "the enclosure", "power": "the power", "path": "the SAN path", "backend": "the backend",
              "ambiguous": "no one named", "none": "a consequence"}


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
            scored.append((group_weight(weights, h.fru, group, i in h.out_of_step, i in h.together), group))
    # ties broken by what the group is, never by the order records were folded in
    scored.sort(key=lambda pair: (-round(pair[0], 9), tuple(str(part) for part in pair[1].key)))
    evidence = []
    for value, group in scored[:5]:
        record = min(group.records, key=lambda r: (str(r.get("source")), int(r.get("line") or 0)))
        evidence.append({"source": record.get("source"), "line": record.get("line"), "weight": round(value, 2),
                         "what": f"{group.key[0]}: {str(group.key[1]).replace('_', ' ')} x{group.count} "
                                 f"({_WHO_SPOKE.get(group.origin, group.origin)})"})
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
    if set(other.parts) < set(best.parts):
        left = [h for h in best.parts if h not in other.parts]
        return ("it leaves out " + " and ".join(name_of(h) for h in left)
                + ", whose own errors the others explain poorly")
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
