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

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import DiagdiskError
from ..logs.events import EVENT_FIELDS, NON_EVENT_KINDS
from ..resources import rules_dir
from .selection import matches as _matches

SEVERITY_WEIGHT = {"info": 0.1, "low": 0.3, "medium": 0.5, "high": 0.8, "critical": 1.0}
FRUS = ("disk", "controller", "cable", "bus", "enclosure", "path", "power", "none")
# group_by -> the event table column whose value names the group (the part the events share)
GROUPINGS = {"unit": "unit", "port": "path_port", "enclosure": "path_enclosure", "adapter": "path_adapter",
             "pci": "path_pci", "bus": "path_bus", "channel": "channel_key", "path": "mpath_map", "md": "md",
             "host": None, "none": None}
# what the storage path model adds to every event (diagdisk/topology/paths.py, diagnosis/origins.py)
PATH_FIELDS: dict[str, str] = {
    "origin": "component that originated the event: device, link, adapter, bus, enclosure, power, path, "
              "backend, ambiguous, none (rules/model/origins.yml)",
    "origin_why": "why the origin table chose that origin",
    "error_class": "true when the event reports trouble (a healthy verdict needs it explained)",
    "transport": "sata, pata, sas, spi, nvme, usb, fc, iscsi, firewire, hyperv, virtio, pvscsi, xen, ibmvscsi",
    "virtual": "true for a disk a hypervisor or cloud presents (no disk to replace in this machine)",
    "raid_volume": "true for a hardware RAID logical drive (its member disks sit behind the controller)",
    "path_port": "the port or link of the unit: ata3, usb 2-1, rport-2:0-3, session1",
    "path_enclosure": "the enclosure, expander or USB bridge the unit sits in",
    "path_adapter": "the controller the unit hangs off: host2, pci 0000:00:1f.2, usb bus 2, nvme0",
    "path_pci": "the PCI function of that controller",
    "path_bus": "the PCIe root port above that controller",
}
MODIFIERS = ("contains", "re", "gte", "lte", "gt", "lt", "not", "exists")
THRESHOLD_KEYS = ("count", "max_count", "distinct_units", "distinct_adapters", "window", "including", "sustained")
MAX_EVIDENCE = 20
_REQUIRED = ("id", "title", "description", "severity", "fru", "confidence", "select", "recommendation")
_ALLOWED = set(_REQUIRED) | {"name", "scope", "filter", "group_by", "threshold", "quiet_neighbours",
                             "yields_to_host", "common_cause", "explains", "alone", "references", "examples",
                             "status", "any_of", "verdict", "figures"}
# Performance rules (diagdisk.diagnosis.perf) judge per-device samples or per-device summaries.
PERF_SCOPES = ("intervals", "perf_devices")
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
    common_cause: bool = False      # the group shares a part: settle it by who failed first
    explains: list = field(default_factory=list)   # selections of other events the finding explains
    alone: bool = False             # only when the group's units report no other trouble
    references: list = field(default_factory=list)
    examples: dict = field(default_factory=dict)
    status: str = "stable"
    any_of: list = field(default_factory=list)     # selections of which at least one must hold too
    verdict: str | None = None                     # performance rules: saturated, not saturated, ...
    figures: list = field(default_factory=list)    # performance rules: the figures a finding cites


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
            close = difflib.get_close_matches(name, sorted(fields), n=1)
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
    if scope not in ("events", "devices", *PERF_SCOPES):
        _fail(path, lines.get("scope"), "scope", f"must be one of events, devices, {', '.join(PERF_SCOPES)}")
    if scope in PERF_SCOPES:
        from .perf_fields import PERF_FIELDS
        fields = PERF_FIELDS[scope]
        if not raw.get("verdict"):
            _fail(path, None, "verdict", "missing (a performance rule says what it found: saturated, ...)")
        for index, name in enumerate(raw.get("figures") or []):
            if name not in fields:
                _fail(path, lines.get("figures"), f"figures[{index}]", f"unknown field '{name}'")
    else:
        fields = set(EVENT_FIELDS) | {"unit"} | set(PATH_FIELDS) if scope == "events" else _DeviceFields(DEVICE_FIELDS)
    _check_selection(path, raw["select"], lines, "select", fields)
    for index, selection in enumerate(raw.get("filter") or []):
        _check_selection(path, selection, lines, f"filter[{index}]", fields)
    for index, selection in enumerate(raw.get("any_of") or []):
        _check_selection(path, selection, lines, f"any_of[{index}]", fields)
    if raw.get("group_by", "unit") not in GROUPINGS:
        _fail(path, lines.get("group_by"), "group_by", f"must be one of {', '.join(GROUPINGS)}")
    threshold = raw.get("threshold") or {}
    if not isinstance(threshold, dict):
        _fail(path, lines.get("threshold"), "threshold", f"must be a map ({', '.join(THRESHOLD_KEYS)})")
    threshold_lines = threshold.get("__lines__", {})
    for key, value in threshold.items():
        if key == "__lines__":
            continue
        where = threshold_lines.get(key) or lines.get("threshold")
        if key not in THRESHOLD_KEYS:
            _fail(path, where, f"threshold.{key}", f"unknown key ({', '.join(THRESHOLD_KEYS)})")
        if key in ("count", "distinct_units", "distinct_adapters", "max_count", "sustained") \
                and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            _fail(path, where, f"threshold.{key}", f"must be a whole number of at least 1, not {value!r}")
        if key == "window" and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
            _fail(path, where, "threshold.window", f"must be a number of seconds above 0, not {value!r}")
    if "including" in threshold:
        _check_selection(path, threshold["including"], lines, "threshold.including", fields)
    for index, selection in enumerate(raw.get("explains") or []):
        _check_selection(path, selection, lines, f"explains[{index}]", fields)
    clean = _strip_lines(raw)
    return Rule(path=path, id=str(clean["id"]), title=clean["title"], description=clean["description"],
                severity=clean["severity"], fru=clean["fru"], confidence=float(clean["confidence"]),
                select=clean["select"], recommendation=clean["recommendation"], name=clean.get("name", ""),
                scope=scope, filter=clean.get("filter") or [], group_by=clean.get("group_by", "unit"),
                threshold=clean.get("threshold") or {}, quiet_neighbours=bool(clean.get("quiet_neighbours")),
                yields_to_host=bool(clean.get("yields_to_host")), common_cause=bool(clean.get("common_cause")),
                explains=clean.get("explains") or [], alone=bool(clean.get("alone")),
                references=clean.get("references") or [],
                examples=clean.get("examples") or {}, status=clean.get("status", "stable"),
                any_of=clean.get("any_of") or [], verdict=clean.get("verdict"), figures=clean.get("figures") or [])


class _DeviceFields(set):
    """Device rules may name any smart_<flag> column (one per SMART flag the parser emits)."""

    def __contains__(self, item):
        return super().__contains__(item) or str(item).startswith("smart_")


def load_rules(extra_dirs: list[str] | None = None, only: list[Path] | None = None) -> list[Rule]:
    # rules/model/ holds the path model's tables (origins.yml), not rules
    paths = only or sorted(p for p in rules_dir().rglob("*.yml") if "model" not in p.relative_to(rules_dir()).parts[:1])
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

def _selected(row: dict, rule: Rule) -> bool:
    """Whether the rule selects a row (and, with any_of, at least one of those selections holds),
    and none of its filters (benign look-alikes) matches it."""
    return (_matches(row, rule.select) and (not rule.any_of or any(_matches(row, s) for s in rule.any_of))
            and not any(_matches(row, selection) for selection in rule.filter))


def _selection_mask(frame, rule: Rule):
    """The same over a pandas frame, for the performance rules' per-interval tables."""
    from .selection import mask
    selected = mask(frame, rule.select)
    if rule.any_of:
        either = mask(frame, rule.any_of[0])
        for selection in rule.any_of[1:]:
            either |= mask(frame, selection)
        selected &= either
    for selection in rule.filter:
        selected &= ~mask(frame, selection)
    return selected


def _densest_window(records: list[dict], window: float | None) -> int:
    """Most distinct units with events inside any window of `window` seconds (on one clock).

    Each record brings its `_runs` [(second, count)]; a record without times (a log with no
    clock) makes the window unknowable, and then every unit of the group counts. A storm's
    records hold a point for every second it went on: the windows are looked at as arrays.
    """
    import numpy

    units = {r.get("unit") for r in records} - {None, ""}
    if window is None or any(not r.get("_runs") for r in records):
        return len(units)
    by_clock: dict[str, dict[str | None, list]] = {}
    for record in records:
        times = numpy.array(record["_runs"], dtype=float)[:, 0]
        by_clock.setdefault(record.get("clock") or "none", {}).setdefault(record.get("unit") or None, []).append(times)
    best = 0
    for by_unit in by_clock.values():
        # every point is the end of a window [end - window, end]: a unit is inside when its
        # latest point at or before the end is no more than `window` before it
        ends = numpy.unique(numpy.concatenate([times for parts in by_unit.values() for times in parts]))
        inside = numpy.zeros(len(ends), dtype=numpy.int64)
        for unit, parts in by_unit.items():
            if unit is None:
                continue
            times = numpy.unique(numpy.concatenate(parts))
            latest = numpy.searchsorted(times, ends, side="right") - 1
            found = latest >= 0
            inside += found & (ends - times[numpy.maximum(latest, 0)] <= window)
        best = max(best, int(inside.max()) if len(inside) else 0)
    return best


@dataclass
class RuleContext:
    events: list[dict]      # one row per event record: its fields, unit, path and origin, `_index`
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
        host, channel = row["host"], row["channel"]
        # a SCSI bus: one channel of one host (old parallel SCSI adapters have two or more)
        row["channel_key"] = None if _missing(host) or _missing(channel) else f"host{int(host)} channel {int(channel)}"
        rows.append(row)
    _add_path_columns(rows, records, topology)
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


def _add_path_columns(rows: list[dict], records: list[dict], topology) -> None:
    """Each event's path (port, enclosure, adapter, PCI function, root port, transport) and the
    component that originated it, refined by that path (a virtual disk, a SAN link)."""
    from .origins import attribute, is_error_class, refine
    for row, record in zip(rows, records):
        path = topology.paths.path(record, topology.find(record.get("unit")))
        record["_path"] = path
        row.update(path_port=path.port, path_enclosure=path.enclosure, path_adapter=path.adapter,
                   path_pci=path.pci, path_bus=path.bus, transport=path.transport, virtual=path.virtual,
                   raid_volume=path.raid_volume)
        origin, why = attribute(row)
        row["origin"] = record["origin"] = refine(origin, path.transport, path.virtual)
        row["origin_why"] = why
        row["error_class"] = record["error_class"] = is_error_class(row)


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
    if rule.scope in PERF_SCOPES:
        return []   # judged by diagdisk.diagnosis.perf, over the performance series
    if rule.scope == "devices":
        return _evaluate_device_rule(rule, context)
    rows = context.events
    selected = [row for row in rows if _selected(row, rule)]
    if not selected:
        return []
    chosen = {row["_index"] for row in selected}
    key = GROUPINGS[rule.group_by]
    groups: dict = {}
    for row in selected:
        # events whose path does not show the part are not counted toward it
        group_key = None if key is None else row.get(key)
        if key is not None and _missing(group_key):
            continue
        groups.setdefault(group_key, []).append(row)
    findings = []
    count_needed = int(rule.threshold.get("count", 1))
    count_allowed = rule.threshold.get("max_count")
    units_needed = int(rule.threshold.get("distinct_units", 0))
    adapters_needed = int(rule.threshold.get("distinct_adapters", 0))
    window = rule.threshold.get("window")
    including = rule.threshold.get("including")
    for group_key, group in sorted(groups.items(), key=lambda kv: str(kv[0])):
        repeats = sum(int(row.get("repeat") or 1) for row in group)
        if repeats < count_needed or (count_allowed is not None and repeats > int(count_allowed)):
            continue
        records = [context.records[row["_index"]] for row in group]
        if units_needed and _densest_window(records, window) < units_needed:
            continue
        if adapters_needed and len({row["path_adapter"] for row in group} - {None}) < adapters_needed:
            continue
        if including is not None and not any(_matches(row, including) for row in group):
            continue
        if rule.quiet_neighbours and rule.group_by == "unit" and _neighbours_noisy(group_key, rows, chosen):
            continue
        if rule.alone and _units_report_more(group, rows, chosen):
            continue
        finding = _finding(rule, context, group_key, records, repeats)
        if rule.common_cause:
            _settle_common_cause(finding, group, rows)
        finding["_explained"] = _explained(rule, context, group, records)
        findings.append(finding)
    return findings


def _explained(rule: Rule, context: RuleContext, group: list[dict], records: list[dict]) -> set[int]:
    """The events a finding accounts for: its own, and those its `explains` selections name on the
    same units or part (a reset's victims, the block-layer errors of the disk it blames, the error
    handler's aborts and resets that name only the SCSI host the units hang off)."""
    explained = {id(r) for r in records}
    if not rule.explains:
        return explained
    units = {row["unit"] for row in group} - {None}
    shared = GROUPINGS.get(rule.group_by)
    parts = {row.get(shared) for row in group} - {None} if shared and rule.group_by != "unit" else set()
    hosts = {row["host"] for row in group if not _missing(row.get("host"))}
    for row in context.events:
        in_scope = (shared is None or row["unit"] in units or row.get(shared) in parts
                    or (row.get("host") in hosts and (row["unit"] is None or _HOST_UNIT.fullmatch(str(row["unit"])))))
        if in_scope and any(_matches(row, selection) for selection in rule.explains):
            explained.add(id(context.records[row["_index"]]))
    return explained


_HOST_UNIT = re.compile(r"host\d+")


def _settle_common_cause(finding: dict, group: list[dict], rows: list[dict]) -> None:
    """Several units behind one part failed together: the finding lists them, and those that also
    report errors of their own. Who failed first, and when, is the weighing's to judge (units out
    of step with the others count less toward the shared part: diagnosis/inference.py)."""
    units = sorted({row["unit"] for row in group} - {None})
    if not units:
        return
    unit_set = set(units)
    own = {row["unit"] for row in rows if row["unit"] in unit_set and row["origin"] == "device" and row["error_class"]}
    finding["units_failing"] = units
    finding["units_with_own_errors"] = sorted(own)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _units_report_more(group: list[dict], rows: list[dict], chosen: set[int]) -> bool:
    """Whether the group's units report trouble beyond what the rule selected (unit attentions and
    other events that point at no component do not count)."""
    units = {row["unit"] for row in group} - {None}
    return any(row["unit"] in units and row["error_class"] and row["_index"] not in chosen and row["origin"] != "none"
               for row in rows)


def _neighbours_noisy(unit, rows: list[dict], chosen: set[int]) -> bool:
    adapters = {row["path_adapter"] for row in rows if row["_index"] in chosen and row["unit"] == unit} - {None}
    if not adapters:
        return False
    return any(row["_index"] in chosen and row["path_adapter"] in adapters and row["unit"] not in (unit, None)
               for row in rows)


def _finding(rule: Rule, context: RuleContext, group_key, records: list[dict], count: int) -> dict:
    paths = context.topology.paths
    if rule.group_by == "unit":
        suspect = _device_info(context.topology, group_key)
        unit_paths = [r["_path"] for r in records if r.get("_path") is not None]
        component = unit_paths[0].as_dict() if unit_paths else None
    else:
        label = _part_label(rule.group_by, group_key) or _shared_component(records)
        suspect = {"hctl": None, "device": label, "model": None, "serial": None}
        component = {"part": rule.group_by, "key": group_key,
                     "label": paths.describe_adapter(group_key, _hosts(records)) if rule.group_by == "adapter"
                     else label}
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
        "component": component,
        "aliases": sorted(_aliases(records, suspect)),
        "consequence": False,
        "units": units,
        "_adapters": {r["_path"].adapter for r in records if r.get("_path") is not None and r["_path"].adapter},
        "_yields_to_host": rule.yields_to_host,
        "_group_by": rule.group_by,
        "_group_key": group_key,
        "_records": records,
        "_rule_confidence": rule.confidence,
    }


def _part_label(group_by: str, key) -> str | None:
    """How the report names a shared part: host2, 0000:03:00.0, ata3, usb 2-1, the map or array."""
    if key is None or key == "":
        return None
    key = str(key)
    return key[4:] if key.startswith("pci ") else key


def _hosts(records: list[dict]) -> set[int]:
    return {int(r["host"]) for r in records if r.get("host") is not None and r["host"] == r["host"]}


def _aliases(records: list[dict], suspect: dict) -> set[str]:
    """Every name the text gives the suspected part or the units behind it."""
    names = {suspect.get("hctl"), suspect.get("device")}
    for record in records:
        path = record.get("_path")
        names.update(record.get(k) for k in ("unit", "hctl", "device", "ata_port", "nvme_ctrl", "adapter", "pci",
                                              "mpath_map", "md"))
        if record.get("host") is not None and record["host"] == record["host"]:
            names.add(f"host{int(record['host'])}")
        if record.get("usb_port"):
            names.add(f"usb {record['usb_port']}")
        # an iSCSI session and connection, as iscsiadm and the kernel name them
        if record.get("iscsi_conn"):
            names.add(f"connection{record['iscsi_conn']}")
        if record.get("iscsi_session") is not None and record["iscsi_session"] == record["iscsi_session"]:
            names.add(f"session{int(record['iscsi_session'])}")
        if record.get("rport"):
            names.add(str(record["rport"]))
        if path is not None:
            names.update((path.port, path.enclosure, path.adapter, path.pci, path.bus))
    return {str(n) for n in names if n}


def _shared_component(records: list[dict]) -> str | None:
    """A name for the part a host-less group shares: the one PCI function its messages name (a USB
    or RAID controller known only by address), or the USB ports of the devices that failed."""
    # the one SCSI host every failing unit hangs off (a bus event that names no unit aside)
    with_units = [r for r in records if r.get("unit")]
    hosts = _hosts(with_units)
    if len(hosts) == 1 and all(r.get("host") is not None for r in with_units):
        return f"host{hosts.pop()}"
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
        findings.append(_finding(rule, context, row["unit"], records, 1))
    return findings


# ---------------------------------------------------------------- verdict

_VERBS = {"disk": "Replace disk", "cable": "Check or replace the cable/port of", "controller": "Check the controller",
          "bus": "Check the bus/transport behind", "enclosure": "Check the enclosure or USB bridge of",
          "path": "Check the storage path to", "power": "Check the power feeding", "none": "Review"}


def evaluate_rules(rules: list[Rule], analysis) -> tuple[list[dict], dict]:
    """The rules' findings (the evidence) and the verdict the weighing of explanations draws from
    them (diagnosis/inference.py): the likeliest explanation names the part, its probability is the
    confidence, and findings about other parts whose events it covers are its consequences."""
    from .inference import build_problem, load_weights, weigh
    context = build_context(analysis)
    findings = [f for rule in rules for f in evaluate_rule(rule, context)]
    problem = build_problem(context, findings, log_span_s=log_span_seconds(analysis))
    explanations = weigh(problem, load_weights())
    best = explanations[0]
    covered = {i for h in best.parts for i in h.groups}
    for h in problem.hypotheses:
        if h in best.parts:
            continue
        for finding in h.findings:
            # a finding about another part whose events the explanation accounts for follows from it
            if best.parts and h.groups and h.groups <= covered:
                finding["consequence"] = True
    explained: set[int] = set()
    by_faults: set[int] = set()
    for finding in findings:
        ids = finding["_ids"] = finding.pop("_explained", set())
        explained |= ids
        if finding["fru"] != "none":
            by_faults |= ids
    # benign noise is not worth a line where a fault already accounts for the same events
    findings = [f for f in findings if f["fru"] != "none" or not f["_ids"] <= by_faults]
    for record in context.records:
        # trouble only benign-noise rules account for (an empty tray's NOT READY): the report's
        # timeline draws it as no fault
        record["_noise"] = id(record) in explained and id(record) not in by_faults
    explained |= {id(r) for i in covered for r in problem.groups[i].records}
    unexplained = [r for r in context.records if r.get("error_class") and id(r) not in explained]
    weighed_as_noise = []
    if not best.parts and best.posterior >= 0.5:
        # no part explains these errors better than the rate at which healthy machines log them;
        # a line no grammar could read specifically stays unexplained: it was not understood
        weighed_as_noise = [r for r in unexplained if r["kind"] != "unclassified"]
        unexplained = [r for r in unexplained if r["kind"] == "unclassified"]
    ranked = [_suspect_of(h, problem, context) for h in sorted(best.parts, key=lambda h: -h.posterior)]
    findings.sort(key=lambda f: (f["consequence"], -SEVERITY_WEIGHT[f["severity"]] * f["confidence"], f["rule"]))
    for finding in findings:
        for private in ("_yields_to_host", "_group_by", "_group_key", "_rule_confidence", "units", "_adapters",
                        "_ids", "_records"):
            finding.pop(private, None)
        finding["confidence"] = round(finding["confidence"], 2)
    verdict = _verdict(ranked, findings, analysis, unexplained)
    verdict["inference"] = _inference_summary(problem, explanations, context)
    if weighed_as_noise:
        runner = next((e for e in explanations if e.parts), None)
        odds = (f"; likeliest part {verdict['inference']['explanations'][explanations.index(runner)]['name']} "
                f"{runner.posterior:.2f}") if runner is not None and explanations.index(runner) < 5 else ""
        verdict["reasons"].append(
            f"{len(weighed_as_noise)} error event{'s' if len(weighed_as_noise) != 1 else ''} weighed: no part explains "
            f"them better than background noise (no fault {best.posterior:.2f}{odds})")
    return findings, verdict


def log_span_seconds(analysis) -> float:
    """How long the kernel log read runs, in seconds (0 when its times are not known)."""
    from datetime import datetime

    from .coverage import assess_coverage
    coverage = assess_coverage(analysis)
    if coverage.first and coverage.last:
        try:
            return max((datetime.fromisoformat(coverage.last) - datetime.fromisoformat(coverage.first)).total_seconds(), 0.0)
        except (TypeError, ValueError):
            return 0.0
    if coverage.uptime_span:
        return max(coverage.uptime_span[1] - coverage.uptime_span[0], 0.0)
    return 0.0


def _suspect_of(h, problem, context) -> dict:
    """A hypothesis's part as a suspect: named by its rules' findings, or by its path."""
    findings = sorted(h.findings, key=lambda f: (-SEVERITY_WEIGHT[f["severity"]] * f["confidence"], f["rule"]))
    if findings:
        head = findings[0]
        suspect = dict(head["suspect"])
        component = head.get("component")
        # a part is also known by the units whose errors it explains (the path to sdb)
        records = [r for i in sorted(h.groups) for r in problem.groups[i].records if r.get("unit")]
        aliases = sorted({a for f in findings for a in f["aliases"]} | (_aliases(records, suspect) if records else set()))
        arrays = head.get("md_arrays", [])
        if not suspect.get("device") and not suspect.get("hctl") and h.fru != "power":
            names = sorted({_device_info(context.topology, r["unit"]).get("device") or r["unit"] for r in records})
            if 0 < len(names) <= 3:
                suspect["device"] = ", ".join(names)
    else:
        records = [r for i in sorted(h.groups) for r in problem.groups[i].records]
        if h.column == "unit":
            suspect = _device_info(context.topology, h.key)
            paths = [r["_path"] for r in records if r.get("_path") is not None]
            component = paths[0].as_dict() if paths else None
        else:
            label = _part_label("x", h.key) if h.key else None
            suspect = {"hctl": None, "device": label, "model": None, "serial": None}
            component = {"part": h.column, "key": h.key, "label": label} if h.key else None
        aliases = sorted(_aliases(records, suspect)) if records else []
        arrays = suspect.get("md_arrays", [])
    groups = sorted((problem.groups[i] for i in h.groups), key=lambda g: -g.count)[:3]
    what = "; ".join(f"{g.key[0]}: {str(g.key[1]).replace('_', ' ')} x{g.count}" for g in groups)
    return {"fru": h.fru, **{k: suspect.get(k) for k in ("hctl", "device", "model", "serial")},
            "what": what or None,
            "confidence": round(min(h.posterior, 0.99), 2), "rules": [f["rule"] for f in findings],
            "md_arrays": arrays or [], "component": component, "aliases": aliases, "score": round(h.score, 3)}


def _inference_summary(problem, explanations, context) -> dict:
    """The weighing of every explanation the evidence allows (diagnosis/inference.py): the likeliest
    with their probabilities, the evidence that weighs most for each, and why each runner-up loses."""
    from .inference import describe_explanation, why_not
    shown = []
    for index, e in enumerate(explanations[:5]):
        entry = describe_explanation(problem, e)
        for part, h in zip(entry["parts"], e.parts):
            suspect = _suspect_of(h, problem, context)
            part["name"] = "power supply" if h.fru == "power" else suspect.get("device") or suspect.get("hctl")
            part["hctl"] = suspect.get("hctl")
            part["device"] = suspect.get("device")
        entry["name"] = " + ".join(p["name"] if p.get("name") and p["name"].startswith(p["fru"]) else
                                   "the power supply" if p["fru"] == "power" else
                                   f"{p['fru']} {p['name']}" if p.get("name") else p["fru"]
                                   for p in entry["parts"]) or "no fault"
        if index:
            entry["why_not"] = why_not(problem, explanations[0], e)
        shown.append(entry)
    return {"explanations": shown, "hypotheses": len(problem.hypotheses), "event_groups": len(problem.groups)}


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


def _verdict(ranked: list[dict], findings: list[dict], analysis, unexplained: list[dict]) -> dict:
    from .coverage import assess_coverage
    coverage = assess_coverage(analysis)
    degraded = [a for a in analysis.topology.md_arrays.values() if a.state in ("degraded", "failed")]
    if ranked:
        # with a part named, consequences elsewhere (an md array degrading, a filesystem giving up)
        # follow from it; what is left unexplained is trouble some component reported
        unexplained = [r for r in unexplained if r.get("origin") != "none" and not _anonymous_recovery(r)]
    loose = _unexplained_units(unexplained, analysis.topology)
    statuses: list[str] = []
    reasons: list[str] = []
    headline = summary = ""
    suspects = ranked
    if ranked:
        top = ranked[0]
        top_findings = [f for f in findings if not f["consequence"] and f["rule"] in top.get("rules", [])
                        and f["fru"] == top["fru"]]
        severities = {f["severity"] for f in top_findings}
        # FAILURE when the weighing gives the part 7 chances in 10 and a rule saw a high-severity pattern
        statuses.append("failure" if severities & {"critical", "high"} and top["confidence"] >= 0.7 else "suspect")
        label = _suspect_label(top)
        reasons = [f"{_title_in_sentence(f['title'])} (x{f['count']})" for f in top_findings[:3]]
        if not reasons:
            reasons = [f"{top.get('what') or 'its errors'}"]
        arrays = f"; md arrays: {', '.join(top['md_arrays'])}" if top.get("md_arrays") else ""
        verb = _VERBS[top["fru"]]
        if top["fru"] == "disk" and (top.get("component") or {}).get("raid_volume"):
            # a hardware RAID logical drive: the disk that failed is one of its members, which only
            # the controller sees (its event log or CLI names the slot)
            verb = "Replace the failing member disk (the RAID controller's event log names its slot) of logical drive"
        headline = f"{verb} {label}, confidence {top['confidence']:.2f}"
        summary = f"{verb} {label}: {'; '.join(reasons)}{arrays}; confidence {top['confidence']:.2f}"
        if top.get("md_arrays"):
            reasons.append(f"member of md arrays {', '.join(top['md_arrays'])}")
        for other in ranked[1:2]:
            # the likeliest explanation holds two concurrent faults: name the second part too
            reasons.append(f"and a second fault: {other['fru']} {_suspect_label(other)}, confidence {other['confidence']:.2f}")
    elif loose:
        statuses.append("unexplained")
        headline, summary, suspects = _unexplained_verdict(loose)
        reasons = [f"{u['device']}: {', '.join(f'{k} x{n}' for k, n in u['kinds'].items())}" for u in loose[:3]]
    if degraded:
        statuses.append("degraded")
        names = ", ".join(a.name for a in degraded)
        if not ranked and not loose:
            headline = summary = f"md arrays degraded: {names}; no failing part identified"
        else:
            reasons.append(f"md arrays degraded: {names}")
    if not coverage.supports_verdict:
        statuses.append("inconclusive")
        if not ranked and not degraded and not loose:
            headline = summary = f"No verdict: {coverage.reason}"
            reasons += [f"{gap['what']}: {gap['why']}" for gap in coverage.not_read[:3]]
        else:
            reasons.append(f"coverage: {coverage.reason}")
    status = most_severe(statuses)
    if status == "healthy":
        headline = summary = f"No storage fault found in {_coverage_phrase(coverage)}."
    return {"status": status, "summary": summary, "headline": headline, "reasons": reasons, "suspects": suspects,
            "unexplained": loose}


def _suspect_label(top: dict) -> str:
    """The part as an engineer names it: its identity, then its component, model and serial."""
    # a part the text does not name: power for the whole machine is its supply
    unnamed = "the storage devices (PSU, power adapter, board supply rail)" if top.get("fru") == "power" else "the shared component"
    name = top.get("hctl") or top.get("device") or unnamed
    who = ", ".join(x for x in (top.get("device") if top.get("device") != name else None, top.get("model"),
                                top.get("serial") and f"serial {top['serial']}") if x)
    component = top.get("component") or {}
    described = component.get("label") if component.get("part") else None
    if described and described != name and not described.startswith(name):
        who = ", ".join(x for x in (described, who) if x)
    if not described and top.get("fru") in ("bus", "controller") and component.get("pci") \
            and component["pci"] not in (name, who):
        # one unit's own link or controller: the PCI function is what the slot and lspci show
        where = f"PCI {component['pci']}" + (f" below {component['bus']}" if component.get("bus") else "")
        who = ", ".join(x for x in (who, where) if x)
    shown = described if described and described.startswith(name) else name
    return f"{shown} ({who})" if who else shown


def _coverage_phrase(coverage) -> str:
    lines = f"{coverage.kernel_lines:,} kernel log line{'s' if coverage.kernel_lines != 1 else ''}"
    if coverage.first and coverage.last:
        return f"{lines} ({coverage.first[:19].replace('T', ' ')} .. {coverage.last[:19].replace('T', ' ')})"
    if coverage.uptime_span:
        from .coverage import uptime_phrase
        return f"{lines} ({uptime_phrase(coverage.uptime_span)})"
    return lines


def _anonymous_recovery(record: dict) -> bool:
    """An error handler's abort or reset line that names no device and no host: it is the handling
    of whatever failed, which the findings name."""
    return record["kind"] in ("abort", "reset", "timeout") and not record.get("unit") and record.get("host") is None


# the most a suspect may be trusted when no rule explains its errors
UNEXPLAINED_CONFIDENCE = 0.4


def _unexplained_units(records: list[dict], topology) -> list[dict]:
    """Units with trouble no rule explains: what the events say and what the path allows to blame."""
    from .origins import FRU_OF_ORIGIN
    by_unit: dict[str, dict] = {}
    for record in records:
        unit = record.get("unit") or record.get("pci") or record.get("adapter") or "(no device named)"
        entry = by_unit.setdefault(unit, {"unit": unit, "kinds": {}, "origins": {}, "count": 0,
                                          "evidence": [], "_path": record.get("_path")})
        entry["count"] += int(record.get("repeat") or 1)
        entry["kinds"][record["kind"]] = entry["kinds"].get(record["kind"], 0) + int(record.get("repeat") or 1)
        origin = record.get("origin") or "ambiguous"
        entry["origins"][origin] = entry["origins"].get(origin, 0) + 1
        if len(entry["evidence"]) < 5:
            entry["evidence"].append({"source": record["source"], "line": record["line"], "text": record["raw"]})
    result = []
    for unit, entry in sorted(by_unit.items(), key=lambda kv: -kv[1]["count"]):
        path = entry.pop("_path")
        specific = [o for o in entry["origins"] if o in FRU_OF_ORIGIN]
        origin = max(specific, key=lambda o: entry["origins"][o]) if specific else None
        fru = FRU_OF_ORIGIN[origin] if origin else ("path" if path is not None and path.virtual else "disk")
        confidence = 0.35 if origin else 0.2
        info = _device_info(topology, unit if unit != "(no device named)" else None)
        result.append({"fru": fru, "hctl": info["hctl"], "device": info["device"] or unit, "model": info["model"],
                       "serial": info["serial"], "confidence": min(confidence, UNEXPLAINED_CONFIDENCE),
                       "kinds": entry["kinds"], "origins": entry["origins"], "count": entry["count"],
                       "evidence": entry["evidence"]})
    return result


def _unexplained_verdict(loose: list[dict]) -> tuple[str, str, list[dict]]:
    named = ", ".join(f"{u['device']} ({', '.join(f'{k} x{n}' for k, n in u['kinds'].items())})" for u in loose[:4])
    more = f" and {len(loose) - 4} more" if len(loose) > 4 else ""
    headline = f"Errors no rule explains on {', '.join(u['device'] for u in loose[:4])}{more}"
    summary = (f"Errors no rule explains on {named}{more}: the events are read, their cause is not known; "
               f"check the evidence below (the suspects are guesses, confidence at most {UNEXPLAINED_CONFIDENCE:.1f}).")
    suspects = [{k: u[k] for k in ("fru", "hctl", "device", "model", "serial", "confidence")}
                | {"rules": [], "md_arrays": [], "score": 0.0, "unexplained": True} for u in loose]
    return headline, summary, suspects
