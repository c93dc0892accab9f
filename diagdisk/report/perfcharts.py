"""The HTML report's performance section: per-device small multiples on one time axis (utilisation,
await over the service-time band so host queueing shows as the gap, queue length, IOPS and MB/s),
a strip chart per peer group that makes a slow member the outlier, request sizes against
max_sectors_kb, read-ahead and stripe, and the settings table with the cells a finding cites.

Built from the report's `performance` section (docs/report.md) only; every list is capped so the
page keeps a bounded size. matplotlib is imported inside the drawing functions.
"""

from __future__ import annotations

import io
import math
from datetime import datetime

from .charts import CHART_FONTS, GRID_COLOR, TEXT_COLOR, clean_svg

MAX_MULTIPLES = 8
MAX_GROUPS = 6
MAX_SIZE_ROWS = 12
MAX_SETTINGS_ROWS = 60
SETTINGS = ("scheduler", "read_ahead_kb", "max_sectors_kb", "max_hw_sectors_kb", "nr_requests", "rotational")
# which rule cites which setting: a finding of the rule flags that cell
_FLAGGED_BY = {"DD608": ("read_ahead_kb",), "DD609": ("max_sectors_kb", "max_hw_sectors_kb"),
               "DD610": ("scheduler",), "DD611": ("scheduler",)}
AWAIT_COLOR = "#b2182b"
SERVICE_COLOR = "#92c5de"
LINE_COLOR = "#2166ac"
MB_COLOR = "#7f7f7f"


def performance_view(section) -> dict | None:
    if not isinstance(section, dict):
        return None
    findings = [f for f in section.get("findings") or [] if isinstance(f, dict)]
    devices = [d for d in section.get("devices") or [] if isinstance(d, dict)]
    series = section.get("series") if isinstance(section.get("series"), dict) else {}
    from .performance import finding_line
    lines = []
    for finding in findings:
        try:
            lines.append({"verdict": str(finding.get("verdict", "")), "text": finding_line(finding),
                          "recommendation": str(finding.get("recommendation", "")),
                          "severity": str(finding.get("severity", ""))})
        except (KeyError, TypeError, ValueError):
            continue
    order = _device_order(findings, devices, series)
    return {
        "findings": lines,
        "sources": [s for s in section.get("sources") or [] if isinstance(s, dict)],
        "multiples": _safe(lambda: small_multiples(series, order[:MAX_MULTIPLES], findings)),
        "more_devices": max(len(order) - MAX_MULTIPLES, 0),
        "strips": _safe(lambda: peer_strips(section.get("groups") or [], series, findings)),
        "sizes": _safe(lambda: request_sizes(devices, series, order[:MAX_SIZE_ROWS])),
        "settings": _settings_rows(devices, findings),
        "pressure": section.get("pressure"),
        "unread": _unread_notes(section),
    }


def _unread_notes(section: dict) -> list[str]:
    from .performance import unread_lines
    try:
        return [line.strip() for line in unread_lines(section)]
    except (KeyError, TypeError, AttributeError):
        return []


def _safe(draw):
    try:
        return draw()
    except (ValueError, TypeError, KeyError, OverflowError, ImportError):
        return None   # a chart that cannot be drawn (odd data, no matplotlib) is left out, never the page


def _device_order(findings: list[dict], devices: list[dict], series: dict) -> list[str]:
    named = [f.get("device") for f in findings if f.get("verdict") != "not saturated"]
    busy = sorted(series, key=lambda name: -max([v for v in series[name].get("util") or [] if v is not None] or [0]))
    return [name for name in dict.fromkeys(named + busy) if name in series]


def _x_axis(data: dict):
    if data.get("time"):
        return [datetime.fromisoformat(t) for t in data["time"]], True
    return list(data.get("sample") or range(len(data.get("util") or []))), False


def _values(data: dict, key: str) -> list[float]:
    return [math.nan if v is None else float(v) for v in data.get(key) or []]


def _style():
    return {"svg.fonttype": "none", "svg.hashsalt": "diagdisk-performance", "font.family": "sans-serif",
            "font.sans-serif": CHART_FONTS, "font.size": 8, "axes.edgecolor": GRID_COLOR,
            "axes.labelcolor": TEXT_COLOR, "xtick.color": TEXT_COLOR, "ytick.color": TEXT_COLOR}


def _render(figure, prefix: str, label: str) -> str:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    output = io.StringIO()
    FigureCanvasSVG(figure).print_svg(output, metadata={"Date": None})
    return clean_svg(output.getvalue(), id_prefix=prefix, label=label)


def small_multiples(series: dict, names: list[str], findings: list[dict]) -> str | None:
    if not names:
        return None
    import matplotlib
    from matplotlib import dates
    from matplotlib.figure import Figure

    verdicts = {}
    for finding in findings:
        verdicts.setdefault(finding.get("device"), []).append(str(finding.get("verdict", "")))
    with matplotlib.rc_context(_style()):
        figure = Figure(figsize=(10.5, 1.45 * len(names) + 0.6), layout="constrained")
        grid = figure.subplots(len(names), 4, squeeze=False, sharex=True)
        for row, name in enumerate(names):
            data = series[name]
            x, calendar = _x_axis(data)
            util, await_, svctm = _values(data, "util"), _values(data, "await"), _values(data, "svctm")
            aqu, iops, mb = _values(data, "aqu"), _values(data, "iops"), _values(data, "mb_s")
            panels = grid[row]
            panels[0].plot(x, util, color=LINE_COLOR, linewidth=1)
            panels[0].set_ylim(0, 105)
            panels[0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
            if name in verdicts:
                panels[0].text(0.02, 0.06, ", ".join(sorted(set(verdicts[name]))), transform=panels[0].transAxes,
                               fontsize=7, color=AWAIT_COLOR, clip_on=True, in_layout=False)
            panels[1].fill_between(x, 0, svctm, color=SERVICE_COLOR, step="mid",
                                   linewidth=0, label="service time")
            panels[1].plot(x, await_, color=AWAIT_COLOR, linewidth=1, label="await")
            panels[2].plot(x, aqu, color=LINE_COLOR, linewidth=1)
            panels[3].plot(x, iops, color=LINE_COLOR, linewidth=1)
            twin = panels[3].twinx()
            twin.plot(x, mb, color=MB_COLOR, linewidth=1, linestyle="--")
            twin.tick_params(labelsize=7, colors=MB_COLOR)
            for axes in (*panels, twin):
                axes.grid(color=GRID_COLOR, linewidth=0.5)
                for side in ("top",):
                    axes.spines[side].set_visible(False)
            if len(x) == 1:
                for axes in panels:
                    for line in axes.get_lines():
                        line.set_marker("o")
            if calendar and row == len(names) - 1:
                locator = dates.AutoDateLocator(minticks=2, maxticks=4)
                for axes in panels:
                    axes.xaxis.set_major_locator(locator)
                    axes.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))
        for column, title in enumerate(("utilisation %", "await / service time, ms", "queue length",
                                        "IOPS, MB/s (dashed)")):
            grid[0][column].set_title(title, fontsize=8, loc="left")
        return _render(figure, "dd-perf-multiples-", "Per-device utilisation, latency, queue and throughput")


def peer_strips(groups: list, series: dict, findings: list[dict]) -> str | None:
    groups = [g for g in groups if isinstance(g, dict) and len([m for m in g.get("members") or [] if m in series]) >= 2]
    if not groups:
        return None
    import matplotlib
    from matplotlib.figure import Figure

    slow = {f.get("device") for f in findings if f.get("verdict") == "slow member"}
    groups = groups[:MAX_GROUPS]
    with matplotlib.rc_context(_style()):
        rows = sum(len(g["members"]) for g in groups)
        figure = Figure(figsize=(10.5, 0.32 * rows + 0.5 * len(groups) + 0.6), layout="constrained")
        axes_list = figure.subplots(len(groups), 1, squeeze=False)[:, 0]
        for axes, group in zip(axes_list, groups):
            members = [m for m in group["members"] if m in series]
            for position, member in enumerate(members):
                values = [v for v in _values(series[member], "await") if not math.isnan(v) and v > 0]
                if not values:
                    continue
                jitter = [position + 0.25 * (((i * 7919) % 13) / 13 - 0.5) for i in range(len(values))]
                axes.scatter(values, jitter, s=9, alpha=0.7, color=AWAIT_COLOR if member in slow else LINE_COLOR,
                             linewidths=0)
            axes.set_yticks(range(len(members)), members)
            axes.set_xscale("log")
            axes.set_title(f"{group.get('id')} ({group.get('kind')}): await per sample, ms", fontsize=8, loc="left")
            axes.grid(axis="x", color=GRID_COLOR, linewidth=0.5)
        return _render(figure, "dd-perf-strips-", "Await of each member of each peer group")


def request_sizes(devices: list[dict], series: dict, names: list[str]) -> str | None:
    by_name = {d.get("name"): d for d in devices}
    rows = []
    for name in names:
        sizes = sorted(v for v in _values(series.get(name) or {}, "areq_kb") if not math.isnan(v) and v > 0)
        if not sizes:
            continue
        device = by_name.get(name) or {}
        settings = device.get("settings") if isinstance(device.get("settings"), dict) else {}
        rows.append((name, sizes[len(sizes) // 2], sizes[min(len(sizes) - 1, math.ceil(0.95 * len(sizes)) - 1)],
                     settings.get("max_sectors_kb"), settings.get("read_ahead_kb"), device.get("stripe_kb")))
    if not rows:
        return None
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    with matplotlib.rc_context(_style()):
        figure = Figure(figsize=(10.5, 0.34 * len(rows) + 0.9), layout="constrained")
        axes = figure.add_subplot()
        for position, (name, median, p95, max_sectors, read_ahead, stripe) in enumerate(rows):
            axes.plot([median, p95], [position, position], color=LINE_COLOR, linewidth=3, solid_capstyle="round")
            for value, marker, color in ((max_sectors, "|", AWAIT_COLOR), (read_ahead, "^", MB_COLOR),
                                         (stripe, "s", "#5b3f9e")):
                if isinstance(value, (int, float)) and value > 0:
                    axes.scatter([value], [position], marker=marker, s=60, color=color, zorder=3)
        axes.set_yticks(range(len(rows)), [row[0] for row in rows])
        axes.set_xscale("log", base=2)
        axes.set_xlabel("kB")
        axes.grid(axis="x", color=GRID_COLOR, linewidth=0.5)
        figure.legend(handles=[Line2D([], [], color=LINE_COLOR, linewidth=3, label="request size, median to 95th pct"),
                               Line2D([], [], linestyle="none", marker="|", color=AWAIT_COLOR, markersize=9,
                                      label="max_sectors_kb"),
                               Line2D([], [], linestyle="none", marker="^", color=MB_COLOR, label="read-ahead"),
                               Line2D([], [], linestyle="none", marker="s", color="#5b3f9e", label="stripe width")],
                      loc="outside upper left", ncols=4, frameon=False)
        return _render(figure, "dd-perf-sizes-", "Request sizes against max_sectors_kb, read-ahead and stripe")


def _settings_rows(devices: list[dict], findings: list[dict]) -> dict:
    flagged: dict[str, set[str]] = {}
    for finding in findings:
        for setting in _FLAGGED_BY.get(str(finding.get("rule")), ()):
            flagged.setdefault(str(finding.get("device")), set()).add(setting)
    rows = []
    for device in devices:
        settings = device.get("settings") if isinstance(device.get("settings"), dict) else {}
        if not settings and device.get("name") not in flagged:
            continue
        rows.append({"name": device.get("name"), "class": device.get("class_label") or device.get("class"),
                     "cells": [(key, settings.get(key), key in flagged.get(device.get("name"), set()))
                               for key in SETTINGS]})
    return {"columns": SETTINGS, "rows": rows[:MAX_SETTINGS_ROWS], "hidden": max(len(rows) - MAX_SETTINGS_ROWS, 0)}
