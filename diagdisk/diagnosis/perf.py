"""Performance rules (rules/performance/*.yml, `scope: intervals` or `scope: perf_devices`) judged
over the performance stage's series, with the same selection language as the failure rules.

Python only derives figures a rule can name; every threshold is in the rule. Per interval:
the normalised sample, the device's class and its normal latency, await over service time, the
rise of await from the previous sample, the device against its peers at the same time (md members,
LV and dm legs, multipath paths, disks of one model) and a stacked device against its members, the
request size against max_sectors_kb and read-ahead. Per device: settings and 95th percentiles.

A finding needs `threshold.sustained` consecutive matching samples (default 2) of one device in one
segment (a restart or a gap in the clock cuts it); a device with fewer samples than that in all
(one iostat report, diskstats since boot) gives a finding marked "single sample".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..performance.devices import CLASSES, DEPTH, FLOOR, LITTLE_TOLERANCE, UTIL_POSSIBLE_MAX
from ..decode import devnames
from ..performance.read import PerformanceData
from .perf_fields import _DERIVED, _DEVICE_FIELDS, PERF_FIELDS, SERIES_FIELDS  # noqa: F401 - PERF_FIELDS for callers

MAX_EVIDENCE = 20
_FIGURE_NAMES = {"util": ("util", "%"), "aqu": ("aqu", ""), "rareq_kb": ("read size", " kB"), "wareq_kb": ("write size", " kB"), "await": ("await", " ms"), "svctm": ("svctm", " ms"),
                 "iops": ("IOPS", ""), "areq_kb": ("req", " kB"), "mb_s": ("MB/s", ""), "r_await": ("r_await", " ms"),
                 "w_await": ("w_await", " ms")}


def interval_frame(data: PerformanceData) -> pd.DataFrame:
    frames = []
    for name, series in data.series.items():
        if not series.samples:
            continue
        device = data.devices.get(name)
        block = pd.DataFrame(series.samples, columns=SERIES_FIELDS)
        block["device"] = name
        block["_line"] = list(series.lines)
        block["_segment"] = list(series.segments)
        block["_source"] = series.source.split(", ")[0]
        block["_seq"] = range(len(block))
        block["svctm_apparent"] = series.apparent_svctm
        cls = device.cls if device else "unknown"
        block["class"] = cls
        block["parallel"] = CLASSES[cls][1]
        block["baseline_ms"] = CLASSES[cls][2]
        settings = device.settings if device else {}
        for key in ("max_sectors_kb", "max_hw_sectors_kb", "read_ahead_kb", "scheduler"):
            block[key] = settings.get(key)
        block["md_level"] = device.md_level if device else None
        block["stripe_kb"] = device.stripe_kb if device else None
        block["members"] = len(device.members) if device else 0
        block["samples"] = len(block)
        block["_merged"] = series.merged
        frames.append(block)
    if not frames:
        return pd.DataFrame(columns=SERIES_FIELDS + _DERIVED)
    frame = pd.concat(frames, ignore_index=True)
    # a busy share past the whole interval is accounting that cannot be true: unknown, as is the
    # service time sysstat made from it, and the request times the same driver accounted (the
    # performance stage names it in its source's warnings)
    frame["util_impossible"] = frame["util"] > UTIL_POSSIBLE_MAX
    frame.loc[frame["util_impossible"], ["util", "svctm", "await", "r_await", "w_await", "aqu"]] = np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["await_x_baseline"] = frame["await"] / frame["baseline_ms"]
        frame["await_x_svctm"] = np.where(frame["svctm"] > 0, frame["await"] / frame["svctm"], np.nan)
        frame["queue_wait_ms"] = frame["await"] - frame["svctm"]
        previous = frame.groupby(["device", "_segment"])["await"].shift(1)
        frame["await_rise"] = np.where(previous > 0, frame["await"] / previous, np.nan)
        frame["r_share"] = np.where(frame["iops"] > 0, frame["r_s"] / frame["iops"], np.nan)
        frame["w_share"] = np.where(frame["iops"] > 0, frame["w_s"] / frame["iops"], np.nan)
        frame["rareq_kb"] = np.where(frame["r_s"] > 0, frame["rkb_s"] / frame["r_s"], np.nan)
        frame["wareq_kb"] = np.where(frame["w_s"] > 0, frame["wkb_s"] / frame["w_s"], np.nan)
        frame["areq_x_max_sectors"] = frame["areq_kb"] / pd.to_numeric(frame["max_sectors_kb"], errors="coerce")
        # While a device is busy at least one request is in flight, so the average queue can never
        # be below the busy fraction: when it is (by half), %util is inflated (blk-mq accounting)
        frame["util_inflated"] = (frame["util"] >= 50) & (frame["aqu"] < 0.5 * frame["util"] / 100)
        _little(frame)
    _peers(frame, data)
    _stacked(frame, data)
    return frame


def _little(frame: pd.DataFrame) -> None:
    """The queue a rule can trust, and how much of it waits rather than is served."""
    frame["aqu_little"] = frame["iops"] * frame["await"] / 1000
    frame["little_ratio"] = np.where(frame["aqu_little"] > 0, frame["aqu"] / frame["aqu_little"], np.nan)
    ratio = frame["little_ratio"]
    apart = (ratio > LITTLE_TOLERANCE) | (ratio < 1 / LITTLE_TOLERANCE)
    # at under one request in flight the two are both near zero and their ratio means nothing
    frame["little_consistent"] = ~(apart & (frame[["aqu", "aqu_little"]].max(axis=1) >= 1))
    # the smaller of the two when they disagree; Little's figure when aqu-sz was not printed
    queue = np.where(frame["little_consistent"], frame["aqu"], np.fmin(frame["aqu"], frame["aqu_little"]))
    frame["queue"] = np.where(np.isnan(frame["aqu"]), frame["aqu_little"], queue)
    frame["depth"] = frame["class"].map(DEPTH).astype(float)
    frame["queue_x_depth"] = frame["queue"] / frame["depth"]
    floor_iops = frame["class"].map({k: v[0] for k, v in FLOOR.items()}).astype(float)
    floor_mb = frame["class"].map({k: v[1] for k, v in FLOOR.items()}).astype(float)
    # a parallel device serving less than the least of its class does when loaded (NaN: no floor)
    frame["below_class_floor"] = (frame["iops"] < floor_iops) & (frame["mb_s"] < floor_mb)
    # requests waiting rather than served: a head serves one at a time (in service = %util / 100);
    # a parallel device serves up to its depth
    in_service = np.where(frame["parallel"], frame["depth"], frame["util"] / 100)
    frame["waiting"] = frame["queue"] - in_service


def _peers(frame: pd.DataFrame, data: PerformanceData) -> None:
    for column in ("group_kind", "peers"):
        frame[column] = None
    for column in ("peers_await_median", "peers_svctm_median", "peers_iops_median", "peers_util_max",
                   "peers_await_max", "peer_await_ratio", "peer_svctm_ratio", "peer_iops_ratio",
                   "slowest_peer_x_mine"):
        frame[column] = np.nan
    for group_id, group in data.groups.items():
        members = [m for m in group["members"] if m in data.series]
        if len(members) < 2:
            continue
        rows = frame[frame["device"].isin(members)]
        stats = {key: rows.pivot_table(index="t", columns="device", values=key, aggfunc="mean")
                 for key in ("await", "svctm", "iops", "util")}
        for member in members:
            mine = frame.index[frame["device"] == member]
            if member not in stats["await"].columns:
                continue
            others = [m for m in stats["await"].columns if m != member]
            if not others:
                continue
            times = frame.loc[mine, "t"]
            # a member in two groups (md members that are also one model) keeps the first group
            fresh = frame.loc[mine, "group_kind"].isna()
            target = mine[fresh.to_numpy()]
            if not len(target):
                continue
            times = times[fresh.to_numpy()]
            for key, column, how in (("await", "peers_await_median", "median"), ("svctm", "peers_svctm_median", "median"),
                                     ("iops", "peers_iops_median", "median"), ("util", "peers_util_max", "max"),
                                     ("await", "peers_await_max", "max")):
                table = stats[key][[c for c in others if c in stats[key].columns]]
                values = table.median(axis=1) if how == "median" else table.max(axis=1)
                frame.loc[target, column] = times.map(values).to_numpy()
            frame.loc[target, "group_kind"] = group["kind"]
            frame.loc[target, "peers"] = ", ".join(others)
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["peer_await_ratio"] = frame["await"] / frame["peers_await_median"].where(frame["peers_await_median"] > 0)
        frame["peer_svctm_ratio"] = frame["svctm"] / frame["peers_svctm_median"].where(frame["peers_svctm_median"] > 0)
        frame["peer_iops_ratio"] = frame["iops"] / frame["peers_iops_median"].where(frame["peers_iops_median"] > 0)
        frame["slowest_peer_x_mine"] = frame["peers_await_max"] / frame["await"].where(frame["await"] > 0)
    # how far the most outlying of a device's peers stands from the rest at the same time: a group
    # with a slow member waits on it, and its healthy members show the consequence
    frame["peers_outlier_ratio"] = np.nan
    for group in data.groups.values():
        members = [m for m in group["members"] if m in data.series]
        if len(members) < 2:
            continue
        rows = frame[frame["device"].isin(members) & frame["peers"].notna()]
        table = rows.pivot_table(index="t", columns="device", values="peer_await_ratio", aggfunc="mean")
        for member in members:
            others = [m for m in table.columns if m != member]
            mine = frame.index[(frame["device"] == member) & frame["peers_outlier_ratio"].isna()]
            if others and len(mine):
                frame.loc[mine, "peers_outlier_ratio"] = frame.loc[mine, "t"].map(table[others].max(axis=1)).to_numpy()


def stack_members(data: PerformanceData) -> dict[str, tuple[list[str], bool]]:
    """Each stacked device's members that have samples, and whether they were inferred. The input's
    tables (mdstat, dmsetup, lvs, multipath) name them; without a table an md or dm device stands
    over some of the input's whole disks, so all of them together bound what its members do (an idle
    set of disks holds idle members)."""
    disks = [name for name, device in data.devices.items()
             if name in data.series and device.cls not in ("md", "dm", "other") and not devnames.is_partition(name)]
    arrays = [name for name, device in data.devices.items() if name in data.series and device.cls == "md"]
    stacks = {}
    for name, device in data.devices.items():
        if name not in data.series:
            continue
        members = [m for m in device.members if m in data.series]
        if members:
            stacks[name] = (members, False)
        elif device.cls == "md" and disks:
            stacks[name] = (disks, True)
        elif device.cls == "dm" and disks + arrays:
            # LVM and dm-crypt sit on md arrays as often as on disks
            stacks[name] = (disks + arrays, True)
    return stacks


def _stacked(frame: pd.DataFrame, data: PerformanceData) -> None:
    """A stacked device against the devices under it, and each of those against the layer above:
    the finding goes on the layer where requests wait."""
    for column in ("members_await_max", "members_util_max", "members_queue_sum", "parent_await_x_mine"):
        frame[column] = np.nan
    frame["members_inferred"] = False
    above: dict[str, list[str]] = {}
    for name, (members, inferred) in stack_members(data).items():
        rows = frame[frame["device"].isin(members)]
        mine = frame.index[frame["device"] == name]
        times = frame.loc[mine, "t"]
        for key, column, how in (("await", "members_await_max", "max"), ("util", "members_util_max", "max"),
                                 ("queue", "members_queue_sum", "sum")):
            table = rows.pivot_table(index="t", columns="device", values=key, aggfunc="mean")
            values = table.max(axis=1) if how == "max" else table.sum(axis=1, min_count=1)
            frame.loc[mine, column] = times.map(values).to_numpy()
        frame.loc[mine, "members_inferred"] = inferred
        for member in members:
            above.setdefault(member, []).append(name)
    # each member against the slowest layer above it at the same time
    for member, parents in above.items():
        mine = frame.index[frame["device"] == member]
        rows = frame[frame["device"].isin(parents)]
        table = rows.pivot_table(index="t", columns="device", values="await", aggfunc="mean")
        parent_await = frame.loc[mine, "t"].map(table.max(axis=1)).to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            mine_await = frame.loc[mine, "await"].to_numpy(dtype=float)
            frame.loc[mine, "parent_await_x_mine"] = np.where(mine_await > 0, parent_await / mine_await,
                                                              np.where(parent_await > 0, np.inf, np.nan))
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["await_x_members"] = frame["await"] / frame["members_await_max"].where(frame["members_await_max"] > 0)
        # requests the stacking layer holds: in flight at it, minus all in flight below it (a mirror
        # sends a write to each member, so the sum counts it twice: this errs towards the members)
        frame["held_in_layer"] = frame["queue"] - frame["members_queue_sum"]


def _p(values: pd.Series, q: float) -> float | None:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return float(np.percentile(values, q)) if len(values) else None


def device_frame(data: PerformanceData, frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, device in data.devices.items():
        mine = frame[frame["device"] == name] if len(frame) else frame
        settings = device.settings
        row = {"device": name, "class": device.cls, "parallel": device.parallel, "baseline_ms": device.baseline_ms,
               "rotational": settings.get("rotational"), "scheduler": settings.get("scheduler"),
               "read_ahead_kb": settings.get("read_ahead_kb"), "max_sectors_kb": settings.get("max_sectors_kb"),
               "max_hw_sectors_kb": settings.get("max_hw_sectors_kb"), "nr_requests": settings.get("nr_requests"),
               "optimal_io_size": settings.get("optimal_io_size"), "md_level": device.md_level,
               "stripe_kb": device.stripe_kb, "members": len(device.members), "samples": len(mine),
               "model": " ".join(x for x in (device.vendor, device.model) if x) or None,
               "max_sectors_below_hw": (settings["max_sectors_kb"] < settings["max_hw_sectors_kb"]
                                        if settings.get("max_sectors_kb") and settings.get("max_hw_sectors_kb") else None)}
        if len(mine):
            util = pd.to_numeric(mine["util"], errors="coerce")
            busy = mine[util >= 50]
            row.update({
                "util_p95": _p(mine["util"], 95), "await_p95": _p(mine["await"], 95), "aqu_p95": _p(mine["aqu"], 95),
                "iops_p95": _p(mine["iops"], 95), "mb_s_p95": _p(mine["mb_s"], 95),
                "areq_kb_p95": _p(mine["areq_kb"], 95), "areq_kb_median": _p(mine["areq_kb"], 50),
                "read_mb_s_p95": _p(mine["rkb_s"] / 1024, 95),
                "busy_share": float((util >= 50).mean()) if util.notna().any() else None,
                "r_share": _share(mine["r_s"], mine["iops"]), "w_share": _share(mine["w_s"], mine["iops"]),
            })
            if row["r_share"] is None:
                # sar -d counts transfers, not reads and writes: the kB read and written tell the mix
                kb = mine["rkb_s"] + mine["wkb_s"]
                row["r_share"], row["w_share"] = _share(mine["rkb_s"], kb), _share(mine["wkb_s"], kb)
            write_sizes = mine["wkb_s"] / mine["w_s"].where(mine["w_s"] > 0)
            row["write_areq_kb_median"] = _p(write_sizes, 50)
            read_ahead = settings.get("read_ahead_kb")
            if read_ahead and row["areq_kb_median"] is not None:
                row["areq_over_read_ahead"] = row["areq_kb_median"] / read_ahead
            limit = settings.get("max_sectors_kb")
            if limit and len(busy):
                row["at_max_sectors_share"] = float((busy["areq_kb"] >= 0.9 * limit).mean())
            if row["r_share"] is not None and row["w_share"] is not None:
                row["mixed_io"] = bool(min(row["r_share"], row["w_share"]) >= 0.2)
        rows.append(row)
    return pd.DataFrame(rows, columns=_DEVICE_FIELDS)


def _share(part: pd.Series, whole: pd.Series) -> float | None:
    if pd.to_numeric(part, errors="coerce").isna().all():
        return None
    total = pd.to_numeric(whole, errors="coerce").sum()
    if not total or math.isnan(total):
        return None
    return float(pd.to_numeric(part, errors="coerce").sum() / total)


# ---------------------------------------------------------------- findings

def evaluate_performance_rules(rules: list, data: PerformanceData | None, failure_findings: list | None = None,
                               topology=None) -> list[dict]:
    from .engine import PERF_SCOPES, _selection_mask
    rules = [r for r in rules if r.scope in PERF_SCOPES]
    if data is None or not rules:
        return []
    frame = interval_frame(data)
    devices = device_frame(data, frame)
    findings = []
    for rule in rules:
        if rule.scope == "intervals":
            findings += _interval_findings(rule, frame, data, _selection_mask)
        else:
            findings += _device_findings(rule, devices, frame, data, _selection_mask)
    _relate(findings, failure_findings or [], topology)
    order = {"saturated": 0, "host-side queueing": 1, "slow member": 2, "small requests": 3, "misconfigured": 4,
             "not saturated": 9}
    findings.sort(key=lambda f: (order.get(f["verdict"], 5), f["device"], f["rule"]))
    return findings


def _runs(mask: np.ndarray, segments: np.ndarray, times: np.ndarray, intervals: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) positions of runs of consecutive matching samples in one segment without a gap."""
    runs = []
    start = None
    for i in range(len(mask)):
        joined = start is not None and segments[i] == segments[i - 1] and not _gap(times, intervals, i)
        if mask[i] and (start is None or not joined):
            if start is not None:
                runs.append((start, i))
            start = i
        elif not mask[i] and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(mask)))
    return runs


def _gap(times: np.ndarray, intervals: np.ndarray, i: int) -> bool:
    step = times[i] - times[i - 1]
    expected = intervals[i] if intervals[i] == intervals[i] and intervals[i] > 0 else None
    if step != step or expected is None:
        return False
    return step > 2.5 * expected


def _interval_findings(rule, frame: pd.DataFrame, data: PerformanceData, selection_mask) -> list[dict]:
    if frame.empty:
        return []
    needed = int(rule.threshold.get("sustained", 2))
    mask = selection_mask(frame, rule)
    findings = []
    for device, rows in frame.groupby("device", sort=True):
        chosen = mask.loc[rows.index].to_numpy()
        if not chosen.any():
            continue
        runs = _runs(chosen, rows["_segment"].to_numpy(), rows["t"].to_numpy(dtype=float),
                     rows["interval"].to_numpy(dtype=float))
        long_runs = [r for r in runs if r[1] - r[0] >= needed]
        single = False
        if not long_runs:
            # a record no longer than a sustained run cannot show one unless every sample matches
            # (one pasted report, or one after a since-boot average that no banner marked): judged,
            # at lower confidence; in a longer record a lone spike is not sustained
            if len(rows) > needed:
                continue
            long_runs, single = runs, True
        findings.append(_finding(rule, device, rows, long_runs, single, data))
    return findings


def short_record_confidence(confidence: float, matching: int, needed: int) -> float:
    """A rule's confidence is stated for `needed` consecutive matching samples; fewer carry part of
    that evidence: halfway between none and all of it per sample seen (a choice, not fitted: the
    tune cases are too few for a reliability table)."""
    return round(confidence * (1 + min(matching, needed) / needed) / 2, 2)


def _finding(rule, device: str, rows: pd.DataFrame, runs: list[tuple[int, int]], single: bool,
             data: PerformanceData) -> dict:
    matched = pd.concat([rows.iloc[a:b] for a, b in runs])
    longest = max(runs, key=lambda r: r[1] - r[0])
    window_rows = rows.iloc[longest[0]:longest[1]]
    figures = {}
    for name in rule.figures or ["util", "aqu", "await", "svctm"]:
        values = pd.to_numeric(matched[name], errors="coerce").dropna() if name in matched else pd.Series(dtype=float)
        if len(values):
            figures[name] = {"min": _round(values.min()), "median": _round(values.median()), "max": _round(values.max())}
        elif name in matched and matched[name].notna().any():
            figures[name] = {"value": str(matched[name].dropna().iloc[0])}
    perf_device = data.devices.get(device)
    evidence = []
    for _, row in pd.concat([window_rows.head(MAX_EVIDENCE // 2), window_rows.tail(MAX_EVIDENCE // 2)]).drop_duplicates(
            subset=["_seq"]).iterrows():
        evidence.append({"source": row["_source"], "line": int(row["_line"]), "time": _iso(row["t"]),
                         "text": _sample_text(row, rule.figures)})
    apparent = bool(rows["svctm_apparent"].iloc[0])
    needed = int(rule.threshold.get("sustained", 2))
    confidence = short_record_confidence(rule.confidence, len(matched), needed) if single else rule.confidence
    return {
        "rule": rule.id, "title": rule.title, "verdict": rule.verdict, "scope": rule.scope, "severity": rule.severity,
        "fru": rule.fru, "confidence": confidence, "device": device,
        "class": perf_device.label if perf_device else CLASSES["unknown"][0],
        "suspect": {"hctl": perf_device.hctl if perf_device else None, "device": device,
                    "model": " ".join(x for x in (perf_device.vendor, perf_device.model) if x) or None
                    if perf_device else None, "serial": None},
        "window": {"first": _iso(window_rows["t"].iloc[0]), "last": _iso(window_rows["t"].iloc[-1]),
                   "samples": int(len(window_rows)), "matching_samples": int(len(matched)),
                   "device_samples": int(len(rows)), "windows": len(runs), "single_sample": single,
                   "sample_seconds": _round(float(pd.to_numeric(rows["interval"], errors="coerce").median()))
                   if rows["interval"].notna().any() else None,
                   "merged_samples": int(rows["_merged"].iloc[0])},
        "figures": figures,
        "svctm_apparent": apparent and "svctm" in (rule.figures or []),
        "thresholds": _thresholds(rule),
        "evidence": evidence,
        "explanation": rule.description.strip(),
        "recommendation": rule.recommendation.strip(),
        "related_findings": [],
    }


def _device_findings(rule, devices: pd.DataFrame, frame: pd.DataFrame, data: PerformanceData, selection_mask) -> list:
    if devices.empty:
        return []
    findings = []
    for _, row in devices[selection_mask(devices, rule)].iterrows():
        device = row["device"]
        rows = frame[frame["device"] == device] if len(frame) else frame
        perf_device = data.devices[device]
        figures = {}
        for name in rule.figures or []:
            value = row.get(name)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                figures[name] = {"value": _round(value) if isinstance(value, (int, float)) else str(value)}
        evidence = []
        for setting, origin in sorted(perf_device.settings_origin.items()):
            if setting in (rule.figures or []):
                source, _, line = origin.rpartition(":")
                evidence.append({"source": source, "line": int(line) if line.isdigit() else 0, "time": None,
                                 "text": f"{setting} = {perf_device.settings.get(setting)}"})
        if len(rows):
            busiest = rows.sort_values("util", ascending=False).head(3)
            for _, sample in busiest.iterrows():
                evidence.append({"source": sample["_source"], "line": int(sample["_line"]), "time": _iso(sample["t"]),
                                 "text": _sample_text(sample, ["util", "iops", "areq_kb", "mb_s", "await"])})
        findings.append({
            "rule": rule.id, "title": rule.title, "verdict": rule.verdict, "scope": rule.scope,
            "severity": rule.severity, "fru": rule.fru, "confidence": rule.confidence, "device": device,
            "class": perf_device.label,
            "suspect": {"hctl": perf_device.hctl, "device": device,
                        "model": " ".join(x for x in (perf_device.vendor, perf_device.model) if x) or None,
                        "serial": None},
            "window": {"first": _iso(rows["t"].iloc[0]) if len(rows) else None,
                       "last": _iso(rows["t"].iloc[-1]) if len(rows) else None, "samples": int(len(rows)),
                       "matching_samples": int(len(rows)), "device_samples": int(len(rows)), "windows": 1,
                       "single_sample": len(rows) == 1, "sample_seconds": None, "merged_samples": 1},
            "figures": figures, "svctm_apparent": False, "thresholds": _thresholds(rule), "evidence": evidence,
            "explanation": rule.description.strip(), "recommendation": rule.recommendation.strip(),
            "related_findings": [],
        })
    return findings


def _relate(findings: list[dict], failure_findings: list[dict], topology) -> None:
    """A slow or saturated disk that the failure rules also name: each finding points at the other."""
    for finding in findings:
        device = finding["device"]
        hctl = finding["suspect"].get("hctl")
        for failure in failure_findings:
            suspect = failure.get("suspect") or {}
            if device in (suspect.get("device"),) or (hctl and hctl == suspect.get("hctl")):
                finding["related_findings"].append(failure["rule"])


def _thresholds(rule) -> str:
    def text(selection: dict) -> str:
        parts = []
        for key, value in selection.items():
            name, _, modifier = key.partition("|")
            op = {"gte": ">=", "lte": "<=", "gt": ">", "lt": "<", "not": "not in", "": "=", "contains": "contains",
                  "re": "~", "exists": "exists"}.get(modifier, modifier)
            parts.append(f"{name} {op} {value}")
        return ", ".join(parts)
    result = text(rule.select)
    if rule.any_of:
        result += "; and any of: " + " | ".join(text(s) for s in rule.any_of)
    if rule.scope == "intervals":
        result += f"; for >= {int(rule.threshold.get('sustained', 2))} consecutive samples"
    return result


def _sample_text(row, figures) -> str:
    parts = []
    for name in (figures or ["util", "aqu", "await", "svctm"]):
        label = _FIGURE_NAMES.get(name)
        value = row.get(name) if hasattr(row, "get") else None
        if label is None or value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        parts.append(f"{label[0]} {_fmt(value)}{label[1]}")
    if "iops" not in (figures or []) and row.get("iops") == row.get("iops") and row.get("iops") is not None:
        parts.append(f"IOPS {_fmt(row['iops'])}")
    return f"{row['device']}: " + ", ".join(parts)


def _fmt(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2f}".rstrip("0").rstrip(".") if value else "0"


def _round(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return None
    return round(value, 3)


def _iso(t) -> str | None:
    try:
        t = float(t)
    except (TypeError, ValueError):
        return None
    if math.isnan(t):
        return None
    if t < 10 * 86400:
        return None   # not a calendar time (iostat without -t: report numbers)
    from datetime import datetime, timezone
    return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat()
