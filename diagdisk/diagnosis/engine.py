"""Declarative rules (rules/*.yml) evaluated over the event table and the device table.

A rule selects events (or devices) with a small condition language in the spirit of Sigma: a map
is AND, a list value is OR, `field|modifier` changes the test (contains, re, gte, lte, not,
exists). `filter` lists selections of benign look-alikes to drop. Matching events are grouped
(per unit, per SCSI host, per SCSI bus (host and channel), per multipath map, per md array, or all
together), and a group becomes a finding when it reaches the
`threshold` (count, distinct units, inside a time window, `including` at least one event of a
given selection). Rules never contain Python.

Suspects are ranked by score = severity weight x confidence x (1 + log10(evidence count)); findings
about one suspect from several rules combine their confidence as 1 - prod(1 - c). Two cascade
rules keep consequences from outranking causes: a host-level bus finding whose targets include a
disk that reported its own media or hardware failure is halved (the error handler's aborts and
resets of that disk hit its neighbours), and a bus finding on a host with a controller finding
folds into the controller (the controller is the more specific explanation).
"""

from __future__ import annotations

import functools
import math
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import DiagdiskError
from ..logs.events import EVENT_FIELDS, NON_EVENT_KINDS
from ..resources import rules_dir

SEVERITY_WEIGHT = {"info": 0.1, "low": 0.3, "medium": 0.5, "high": 0.8, "critical": 1.0}
FRUS = ("disk", "controller", "cable", "bus", "enclosure", "path", "power", "none")
# group_by -> the event table column whose value names the group (the part the events share)
GROUPINGS = {"unit": "unit", "host": "host_key", "channel": "channel_key", "path": "mpath_map", "md": "md",
             "none": None}
MODIFIERS = ("contains", "re", "gte", "lte", "gt", "lt", "not", "exists")
MAX_EVIDENCE = 20
_REQUIRED = ("id", "title", "description", "severity", "fru", "confidence", "select", "recommendation")
_ALLOWED = set(_REQUIRED) | {"name", "scope", "filter", "group_by", "threshold", "quiet_neighbours",
                             "yields_to_host", "references", "examples", "status"}
DEVICE_FIELDS = {"unit", "hctl", "name", "type", "model", "vendor", "smart_health"}


class RuleError(DiagdiskError):
    """A malformed rule file: names the file, line and field."""


@dataclass
class Rule:
    id: str
    title: str
    description: str
    severity: str
    fru: str
    confidence: float
    select: dict
    recommendation: str
    path: Path
    name: str = ""
    scope: str = "events"
    filter: list = field(default_factory=list)
    group_by: str = "unit"
    threshold: dict = field(default_factory=dict)
    quiet_neighbours: bool = False
    yields_to_host: bool = False
    references: list = field(default_factory=list)
    examples: dict = field(default_factory=dict)
    status: str = "stable"


class _LineLoader(yaml.SafeLoader):
    """Remembers the line of every mapping key so errors can point at it."""


def _construct_mapping(loader, node, deep=False):
    mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
    mapping["__lines__"] = {key_node.value: key_node.start_mark.line + 1
                            for key_node, _ in node.value if isinstance(key_node, yaml.ScalarNode)}
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _strip_lines(value):
    if isinstance(value, dict):
        return {k: _strip_lines(v) for k, v in value.items() if k != "__lines__"}
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _fail(path: Path, line: int | None, field_name: str, reason: str, help_text: str | None = None):
    where = f"{path}:{line}" if line else str(path)
    message = f"invalid rule file {where}: field '{field_name}': {reason}"
    if help_text:
        message += f" ({help_text})"
    raise RuleError(message)


def _check_selection(path: Path, selection, lines: dict, where: str, fields: set[str]) -> None:
    if not isinstance(selection, dict):
        _fail(path, lines.get(where), where, "must be a map of field: value")
    for key in selection:
        if key == "__lines__":
            continue
        name, _, modifier = key.partition("|")
        if name not in fields:
            import difflib
            close = difflib.get_close_matches(name, [f for f in EVENT_FIELDS] + sorted(DEVICE_FIELDS), n=1)
            _fail(path, selection.get("__lines__", {}).get(key), f"{where}.{key}",
                  f"unknown field '{name}'", f"did you mean {close[0]!r}?" if close else None)
        if modifier and modifier not in MODIFIERS:
            _fail(path, selection.get("__lines__", {}).get(key), f"{where}.{key}",
                  f"unknown modifier '{modifier}'", f"one of {', '.join(MODIFIERS)}")


# libyaml's loader is several times faster than the pure-Python one that records key lines
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_rule_file(path: Path) -> Rule:
    try:
        text = path.read_text()
    except OSError as exc:
        raise RuleError(f"cannot read rule file {path}: {exc.strerror}") from None
    try:
        return _rule_from(path, _parse_yaml(path, text, _FAST_LOADER))
    except RuleError:
        # read it again, slowly, to name the line of the field at fault
        return _rule_from(path, _parse_yaml(path, text, _LineLoader))


def _parse_yaml(path: Path, text: str, loader):
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        _fail(path, mark.line + 1 if mark else None, "(yaml)", str(getattr(exc, "problem", exc)))


def _rule_from(path: Path, raw) -> Rule:
    if not isinstance(raw, dict):
        _fail(path, 1, "(document)", "a rule file holds one map")
    lines = raw.get("__lines__", {})
    for key in _REQUIRED:
        if key not in raw:
            _fail(path, None, key, "missing")
    for key in raw:
        if key != "__lines__" and key not in _ALLOWED:
            _fail(path, lines.get(key), key, "unknown key")
    if raw["severity"] not in SEVERITY_WEIGHT:
        _fail(path, lines.get("severity"), "severity", f"must be one of {', '.join(SEVERITY_WEIGHT)}")
    if raw["fru"] not in FRUS:
        _fail(path, lines.get("fru"), "fru", f"must be one of {', '.join(FRUS)}")
    if not isinstance(raw["confidence"], (int, float)) or not 0 < raw["confidence"] <= 1:
        _fail(path, lines.get("confidence"), "confidence", "must be a number in (0, 1]")
    if not re.fullmatch(r"DD\d{3}", str(raw["id"])):
        _fail(path, lines.get("id"), "id", "must look like DD101")
    scope = raw.get("scope", "events")
    if scope not in ("events", "devices"):
        _fail(path, lines.get("scope"), "scope", "must be events or devices")
    fields = set(EVENT_FIELDS) | {"unit"} if scope == "events" else _DeviceFields(DEVICE_FIELDS)
    _check_selection(path, raw["select"], lines, "select", fields)
    for index, selection in enumerate(raw.get("filter") or []):
        _check_selection(path, selection, lines, f"filter[{index}]", fields)
    if raw.get("group_by", "unit") not in GROUPINGS:
        _fail(path, lines.get("group_by"), "group_by", f"must be one of {', '.join(GROUPINGS)}")
    threshold = raw.get("threshold") or {}
    if not isinstance(threshold, dict):
        _fail(path, lines.get("threshold"), "threshold", "must be a map (count, distinct_units, window, including)")
    threshold_lines = threshold.get("__lines__", {})
    for key, value in threshold.items():
        if key == "__lines__":
            continue
        where = threshold_lines.get(key) or lines.get("threshold")
        if key not in ("count", "distinct_units", "window", "including"):
            _fail(path, where, f"threshold.{key}", "unknown key (count, distinct_units, window, including)")
        if key in ("count", "distinct_units") and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            _fail(path, where, f"threshold.{key}", f"must be a whole number of at least 1, not {value!r}")
        if key == "window" and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
            _fail(path, where, "threshold.window", f"must be a number of seconds above 0, not {value!r}")
    if "including" in threshold:
        _check_selection(path, threshold["including"], lines, "threshold.including", fields)
    clean = _strip_lines(raw)
    return Rule(path=path, id=str(clean["id"]), title=clean["title"], description=clean["description"],
                severity=clean["severity"], fru=clean["fru"], confidence=float(clean["confidence"]),
                select=clean["select"], recommendation=clean["recommendation"], name=clean.get("name", ""),
                scope=scope, filter=clean.get("filter") or [], group_by=clean.get("group_by", "unit"),
                threshold=clean.get("threshold") or {}, quiet_neighbours=bool(clean.get("quiet_neighbours")),
                yields_to_host=bool(clean.get("yields_to_host")), references=clean.get("references") or [],
                examples=clean.get("examples") or {}, status=clean.get("status", "stable"))


class _DeviceFields(set):
    """Device rules may name any smart_<flag> column (one per SMART flag the parser emits)."""

    def __contains__(self, item):
        return super().__contains__(item) or str(item).startswith("smart_")


def load_rules(extra_dirs: list[str] | None = None, only: list[Path] | None = None) -> list[Rule]:
    paths = only or sorted(rules_dir().rglob("*.yml"))
    for extra in extra_dirs or []:
        paths += sorted(Path(extra).rglob("*.yml"))
    rules = [load_rule_file(p) for p in paths]
    seen: dict[str, Path] = {}
    for rule in rules:
        if rule.id in seen:
            raise RuleError(f"rule id {rule.id} is used by both {seen[rule.id]} and {rule.path}")
        seen[rule.id] = rule.path
    return rules


# ---------------------------------------------------------------- evaluation
#
# Rules run over plain rows (one dict per event record, one per device): a log folds into records,
# so even a storm gives a few thousand rows, and a table library would cost more to import than
# the rules take to run on a small input.

_COMPARISONS = {"gte": operator.ge, "lte": operator.le, "gt": operator.gt, "lt": operator.lt}


def _cell(row: dict, name: str):
    value = row.get(name)
    return None if isinstance(value, float) and math.isnan(value) else value


def _as_text(value) -> str:
    return str(value)


def _as_number(value) -> float | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


@functools.lru_cache(maxsize=512)
def _pattern(alternatives: tuple) -> re.Pattern:
    return re.compile("|".join(f"(?:{v})" for v in alternatives))


def _matches(row: dict, selection: dict) -> bool:
    """Whether one row meets every condition of a selection (a map is AND, a list value is OR)."""
    for key, expected in selection.items():
        name, _, modifier = key.partition("|")
        value = _cell(row, name)
        values = expected if isinstance(expected, list) else [expected]
        if modifier == "exists":
            ok = (value is not None) if expected else (value is None)
        elif modifier == "contains":
            ok = value is not None and any(str(v) in _as_text(value) for v in values)
        elif modifier == "re":
            ok = value is not None and _pattern(tuple(str(v) for v in values)).search(_as_text(value)) is not None
        elif modifier in _COMPARISONS:
            number = _as_number(value)
            ok = number is not None and _COMPARISONS[modifier](number, values[0])
        elif modifier == "not":
            ok = value is None or value not in values
        else:
            ok = value is not None and value in values
        if not ok:
            return False
    return True


def _selected(row: dict, rule: Rule) -> bool:
    """Whether the rule selects a row that none of its filters (benign look-alikes) matches."""
    return _matches(row, rule.select) and not any(_matches(row, selection) for selection in rule.filter)


def _densest_window(records: list[dict], window: float | None) -> int:
    """Most distinct units with events inside any window of `window` seconds (on one clock).

    Each record brings its `_runs` [(second, count)]; a record without times (a log with no
    clock) makes the window unknowable, and then every unit of the group counts.
    """
    units = {r.get("unit") for r in records} - {None, ""}
    if window is None or any(not r.get("_runs") for r in records):
        return len(units)
    by_clock: dict[str, list[tuple[float, str | None]]] = {}
    for record in records:
        points = by_clock.setdefault(record.get("clock") or "none", [])
        points.extend((t, record.get("unit") or None) for t, _ in record["_runs"])
    best = 0
    for points in by_clock.values():
        points.sort(key=lambda p: p[0])
        inside: dict[str, int] = {}
        start = 0
        for t, unit in points:
            if unit:
                inside[unit] = inside.get(unit, 0) + 1
            while t - points[start][0] > window:
                gone = points[start][1]
                if gone:
                    inside[gone] -= 1
                    if not inside[gone]:
                        del inside[gone]
                start += 1
            best = max(best, len(inside))
    return best


@dataclass
class RuleContext:
    events: list[dict]      # one row per event record: its fields, `unit` and the group keys
    devices: list[dict]     # one row per device: identity, SMART health and smart_<flag> values
    records: list[dict]
    topology: object


def build_context(analysis) -> RuleContext:
    topology = analysis.topology
    path_of = {}
    for mp in topology.multipath:
        for path in mp.paths:
            path_of[path["hctl"]] = mp.name
            path_of[path["device"]] = mp.name
    records = [e for e in analysis.events if e["kind"] not in NON_EVENT_KINDS]
    for event in records:
        mp = path_of.get(event.get("hctl")) or path_of.get(event.get("device"))
        if mp:
            event["mpath_map"] = mp
    columns = sorted(set(EVENT_FIELDS) | {"unit"})
    rows = []
    for index, event in enumerate(records):
        row = {k: event.get(k) for k in columns}
        row["_index"] = index
        host, channel = _cell(row, "host"), _cell(row, "channel")
        row["host_key"] = None if host is None else f"host{int(host)}"
        # a SCSI bus: one channel of one host (old parallel SCSI adapters have two or more)
        row["channel_key"] = None if host is None or channel is None else f"host{int(host)} channel {int(channel)}"
        rows.append(row)
    device_rows = []
    for device in topology.devices.values():
        row = {"unit": device.hctl or device.key, "hctl": device.hctl, "name": device.name, "type": device.type,
               "model": device.model, "vendor": device.vendor,
               "smart_health": (device.smart or {}).get("health")}
        for flag in (device.smart or {}).get("flags", []):
            key, _, value = flag.partition(":")
            try:
                row[f"smart_{key}"] = int(value, 0) if value else 1
            except ValueError:
                row[f"smart_{key}"] = 1
        device_rows.append(row)
    return RuleContext(events=rows, devices=device_rows, records=records, topology=topology)


def _device_info(topology, unit: str | None) -> dict:
    if unit is None:
        return {"hctl": None, "device": None, "model": None, "serial": None}
    device = topology.find(unit)
    if device is None:
        return {"hctl": unit if re.fullmatch(r"\d+:\d+:\d+:\d+", unit) else None,
                "device": None if re.fullmatch(r"\d+:\d+:\d+:\d+", unit) else unit, "model": None, "serial": None}
    model = " ".join(x for x in (device.vendor, device.model) if x) or None
    return {"hctl": device.hctl, "device": device.name or (None if device.hctl else device.key),
            "model": model, "serial": device.serial, "md_arrays": list(device.md_member_of)}


def evaluate_rule(rule: Rule, context: RuleContext) -> list[dict]:
    if rule.scope == "devices":
        return _evaluate_device_rule(rule, context)
    rows = context.events
    selected = [row for row in rows if _selected(row, rule)]
    if not selected:
        return []
    for row in selected:
        # what some rule takes for a sign of a fault; the rest is shown as benign (report timeline)
        context.records[row["_index"]]["_flagged"] = True
    key = GROUPINGS[rule.group_by]
    groups: dict = {}
    if key is None:
        groups[None] = selected
    elif key in ("unit", "mpath_map", "md"):
        for row in selected:
            value = _cell(row, key)
            if value is not None:
                groups.setdefault(value, []).append(row)
    else:
        # events that name no host (a controller known only by its PCI address) form one group
        for row in selected:
            value = _cell(row, key)
            groups.setdefault("" if value is None else value, []).append(row)
    findings = []
    count_needed = int(rule.threshold.get("count", 1))
    units_needed = int(rule.threshold.get("distinct_units", 0))
    window = rule.threshold.get("window")
    including = rule.threshold.get("including")
    for group_key in sorted(groups, key=lambda k: (k is not None, k if k is not None else "")):
        group = groups[group_key]
        repeats = sum(1 if _cell(row, "repeat") is None else int(row["repeat"]) for row in group)
        if repeats < count_needed:
            continue
        records = [context.records[row["_index"]] for row in group]
        if units_needed and _densest_window(records, window) < units_needed:
            continue
        if including is not None and not any(_matches(row, including) for row in group):
            continue
        if rule.quiet_neighbours and rule.group_by == "unit" and _neighbours_noisy(group_key, selected):
            continue
        findings.append(_finding(rule, context, group_key, records, repeats))
    return findings


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _neighbours_noisy(unit, selected: list[dict]) -> bool:
    """Whether the rule also selects events of other units on the SCSI hosts of this one."""
    hosts = {row["host_key"] for row in selected if row.get("unit") == unit and row["host_key"] is not None}
    return bool(hosts) and any(row["host_key"] in hosts and row.get("unit") is not None and row.get("unit") != unit
                               for row in selected)


def _finding(rule: Rule, context: RuleContext, group_key, records: list[dict], count: int) -> dict:
    if rule.group_by == "unit":
        suspect = _device_info(context.topology, group_key)
    else:
        label = (group_key or None) if rule.group_by != "none" else None
        suspect = {"hctl": None, "device": label or _shared_component(records), "model": None, "serial": None}
    firsts = [r.get("_first") or r.get("time") for r in records]
    lasts = [r.get("_last") or r.get("time") for r in records]
    samples = sorted((r["source"], line, text) for r in records
                     for line, text in (r.get("_samples") or [(r["line"], r["raw"])]))
    units = sorted({r.get("unit") for r in records if r.get("unit")})
    return {
        "rule": rule.id, "title": rule.title, "severity": rule.severity, "fru": rule.fru,
        "suspect": {k: suspect.get(k) for k in ("hctl", "device", "model", "serial")},
        "md_arrays": suspect.get("md_arrays", []),
        "confidence": rule.confidence, "count": count,
        "first": min(filter(None, firsts), default=None), "last": max(filter(None, lasts), default=None),
        "evidence": [{"source": source, "line": line, "text": text}
                     for source, line, text in samples[:MAX_EVIDENCE]],
        "explanation": rule.description.strip(),
        "recommendation": rule.recommendation.strip(),
        "units": units,
        "_yields_to_host": rule.yields_to_host,
        "_group_by": rule.group_by,
    }


def _shared_component(records: list[dict]) -> str | None:
    """A name for the part a host-less group shares: the one PCI function its messages name (a USB
    or RAID controller known only by address), or the USB ports of the devices that failed."""
    pcis = {r["pci"] for r in records if r.get("pci")}
    if len(pcis) == 1:
        drivers = {r["driver"] for r in records if r.get("pci") and r.get("driver")}
        pci = pcis.pop()
        return f"{drivers.pop()} {pci}" if len(drivers) == 1 else pci
    ports = sorted({r["usb_port"] for r in records if r.get("usb_port")})
    if ports:
        return "USB " + ", ".join(ports[:6]) + (" ..." if len(ports) > 6 else "")
    return None


def _evaluate_device_rule(rule: Rule, context: RuleContext) -> list[dict]:
    findings = []
    for row in context.devices:
        if not _selected(row, rule):
            continue
        device = context.topology.find(row["unit"])
        smart = (device.smart or {}) if device else {}
        flags = smart.get("flags", [])
        source = smart.get("source") or "smartctl"
        # the smartctl lines behind the flags the rule asks about (all of them for a health rule)
        asked = {key.partition("|")[0].removeprefix("smart_") for key in rule.select if key.startswith("smart_")}
        lines = [item for item in smart.get("evidence") or []
                 if "health" in asked or asked & set(item.get("flags") or [])]
        records = [{"source": source, "line": item["line"], "unit": row["unit"], "raw": item["text"]} for item in lines]
        records = records or [{"source": source, "line": 0, "unit": row["unit"],
                               "raw": f"SMART health {row.get('smart_health')}; " + ", ".join(flags)}]
        finding = _finding(rule, context, row["unit"], records, 1)
        findings.append(finding)
    return findings


# ---------------------------------------------------------------- verdict

_VERBS = {"disk": "Replace disk", "cable": "Check or replace the cable/port of", "controller": "Check the controller",
          "bus": "Check the bus/transport behind", "enclosure": "Check the enclosure or USB bridge of",
          "path": "Check the storage path to", "power": "Check the power feeding", "none": "Review"}


def _suspect_key(finding: dict) -> tuple:
    s = finding["suspect"]
    return (finding["fru"], s.get("hctl") or s.get("device"))


def evaluate_rules(rules: list[Rule], analysis) -> tuple[list[dict], dict]:
    context = build_context(analysis)
    findings = [f for rule in rules for f in evaluate_rule(rule, context)]
    host_level = [f for f in findings if f["_group_by"] in ("host", "channel", "path")
                  and f["fru"] in ("controller", "bus", "path")]
    covered = {u for f in host_level for u in f["units"]}
    # Consequences are not causes: a per-device finding from timeouts/offlines on a device that a
    # host-level finding already covers supports that finding instead of naming its own suspect.
    for finding in findings:
        finding["consequence"] = bool(finding["_yields_to_host"] and set(finding["units"]) & covered)
    self_reported = {u for f in findings if f["fru"] == "disk" and f["severity"] == "critical" for u in f["units"]}
    controller_hosts = {f["suspect"]["device"] for f in host_level if f["fru"] == "controller"}
    for finding in host_level:
        if finding["fru"] == "bus" and finding["suspect"]["device"] in controller_hosts:
            finding["consequence"] = True
        elif finding["fru"] == "bus" and set(finding["units"]) & self_reported:
            finding["confidence"] *= 0.5
    suspects: dict[tuple, dict] = {}
    for finding in findings:
        if finding["consequence"] or finding["fru"] == "none":
            continue
        key = _suspect_key(finding)
        entry = suspects.setdefault(key, {"fru": finding["fru"], **finding["suspect"], "confidence": 0.0,
                                          "rules": [], "md_arrays": finding.get("md_arrays", []),
                                          "_score": 0.0, "_first": finding["first"] or "~", "_count": 0})
        entry["confidence"] = 1 - (1 - entry["confidence"]) * (1 - finding["confidence"])
        entry["rules"].append(finding["rule"])
        entry["_count"] += finding["count"]
        entry["_score"] += SEVERITY_WEIGHT[finding["severity"]] * finding["confidence"] * (1 + math.log10(max(finding["count"], 1)))
        if finding["first"] and finding["first"] < entry["_first"]:
            entry["_first"] = finding["first"]
    ranked = sorted(suspects.values(), key=lambda s: (-round(s["_score"], 6), s["_first"]))
    for entry in ranked:
        entry["confidence"] = round(min(entry["confidence"], 0.99), 2)
        entry["score"] = round(entry.pop("_score"), 3)
        entry.pop("_first")
        entry.pop("_count")
    findings.sort(key=lambda f: (f["consequence"], -SEVERITY_WEIGHT[f["severity"]] * f["confidence"], f["rule"]))
    for finding in findings:
        finding.pop("_yields_to_host")
        finding.pop("_group_by")
        finding.pop("units")
        finding["confidence"] = round(finding["confidence"], 2)
    return findings, _verdict(ranked, findings, analysis)


def _title_in_sentence(title: str) -> str:
    """A rule title inside a sentence: its first word in lower case, unless it is an acronym
    (SMART, NVMe, ATA, USB keep their letters)."""
    first, _, rest = title.partition(" ")
    if sum(c.isupper() for c in first) > 1:
        return title
    return f"{first.lower()} {rest}".strip()


# Verdict statuses, most severe first: when several apply, the first of them is the verdict's.
# failure and suspect name a part (a finding's confidence decides which); degraded is an md array
# running without redundancy; unexplained is error events no rule explains; inconclusive is too
# little evidence for any verdict (coverage.py); healthy only when none of these applies.
VERDICT_STATUSES = ("failure", "degraded", "suspect", "unexplained", "inconclusive", "healthy")


def most_severe(statuses) -> str:
    """The status that comes first in VERDICT_STATUSES (healthy when there is none)."""
    found = set(statuses)
    return next((status for status in VERDICT_STATUSES if status in found), "healthy")


def _verdict(ranked: list[dict], findings: list[dict], analysis) -> dict:
    from .coverage import assess_coverage
    coverage = assess_coverage(analysis)
    degraded = [a for a in analysis.topology.md_arrays.values() if a.state in ("degraded", "failed")]
    statuses = []
    reasons: list[str] = []
    if ranked:
        top = ranked[0]
        top_findings = [f for f in findings if not f["consequence"]
                        and _suspect_key(f) == (top["fru"], top.get("hctl") or top.get("device"))]
        severities = {f["severity"] for f in top_findings}
        statuses.append("failure" if severities & {"critical", "high"} and top["confidence"] >= 0.7 else "suspect")
        name = top.get("hctl") or top.get("device") or "the shared component"
        who = ", ".join(x for x in (top.get("device") if top.get("device") != name else None, top.get("model"),
                                    top.get("serial") and f"serial {top['serial']}") if x)
        label = f"{name} ({who})" if who else name
        reasons = [f"{_title_in_sentence(f['title'])} (x{f['count']})" for f in top_findings[:3]]
        arrays = f"; md arrays: {', '.join(top['md_arrays'])}" if top.get("md_arrays") else ""
        headline = f"{_VERBS[top['fru']]} {label}, confidence {top['confidence']:.2f}"
        summary = f"{_VERBS[top['fru']]} {label}: {'; '.join(reasons)}{arrays}; confidence {top['confidence']:.2f}"
        if top.get("md_arrays"):
            reasons.append(f"member of md arrays {', '.join(top['md_arrays'])}")
    if degraded:
        statuses.append("degraded")
        names = ", ".join(a.name for a in degraded)
        if not ranked:
            headline = f"md arrays degraded: {names}; no failing part identified"
            summary = headline
        else:
            reasons.append(f"md arrays degraded: {names}")
    if not coverage.supports_verdict:
        statuses.append("inconclusive")
        if not ranked and not degraded:
            headline = summary = f"No verdict: {coverage.reason}"
            reasons += [f"{gap['what']}: {gap['why']}" for gap in coverage.not_read[:3]]
        else:
            reasons.append(f"coverage: {coverage.reason}")
    status = most_severe(statuses)
    if status == "healthy":
        headline = summary = f"No storage fault found in {_coverage_phrase(coverage)}."
    return {"status": status, "summary": summary, "headline": headline, "reasons": reasons, "suspects": ranked}


def _coverage_phrase(coverage) -> str:
    lines = f"{coverage.kernel_lines:,} kernel log line{'s' if coverage.kernel_lines != 1 else ''}"
    if coverage.first and coverage.last:
        return f"{lines} ({coverage.first[:19].replace('T', ' ')} .. {coverage.last[:19].replace('T', ' ')})"
    if coverage.uptime_span:
        from .coverage import uptime_phrase
        return f"{lines} ({uptime_phrase(coverage.uptime_span)})"
    return lines
