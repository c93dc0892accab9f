"""Charts for the HTML report, drawn by matplotlib as inline SVG.

matplotlib is imported inside the drawing function so that the command line starts fast when no
HTML is asked for. The SVG is cleaned before it is inlined: no XML prolog or DOCTYPE (they name a
remote DTD), no RDF metadata, no global <style> (inside HTML it would apply to the whole page),
ids prefixed so they cannot collide with the page's, and every reference checked to stay inside
the document.
"""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

# The page's own font stack, so the chart reads like the text around it. Layout is measured with
# whichever of these matplotlib finds (DejaVu Sans, the widest), so text never overflows in a
# browser that picks a narrower one.
CHART_FONTS = ["Helvetica Neue", "Helvetica", "Arial", "Liberation Sans", "DejaVu Sans"]

ERROR_COLOR_LOW = "#f4c7b8"
ERROR_COLOR_HIGH = "#a50f15"
BENIGN_COLOR = "#c3c8cf"
RESET_COLOR = "#e08a00"
MD_COLOR = "#5b3f9e"
GRID_COLOR = "#d9dde3"
TEXT_COLOR = "#2b3440"

MAX_LANES = 12
MAX_BINS = 120


@dataclass(frozen=True)
class Chart:
    """An inline SVG chart, or the reason it was not drawn; `note` also says how data was folded."""

    svg: str | None
    note: str | None


@dataclass(frozen=True)
class _Bucket:
    start: datetime
    end: datetime
    lane: str
    category: str
    count: int


def event_category(kind: str | None, benign: bool = False) -> str:
    """Group event kinds into what the timeline marks distinctly: resets, md state, errors, and
    events no rule took for a sign of a fault (benign: an empty DVD tray, a link coming up)."""
    if benign:
        return "benign"
    kind = (kind or "").lower()
    if "reset" in kind:
        return "reset"
    if kind.startswith("md") or kind.startswith("raid"):
        return "md"
    return "error"


def parse_time(value: object) -> datetime | None:
    """An ISO 8601 time as a naive UTC datetime; None when absent or not a wall-clock time."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def _as_count(value: object) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and math.isfinite(value):
        return max(int(value), 0)
    return 1


def _buckets(timeline: list) -> tuple[list[_Bucket], int]:
    """Usable buckets, and how many had no wall-clock start (uptime-only logs)."""
    usable: list[_Bucket] = []
    without_time = 0
    for entry in timeline:
        if not isinstance(entry, dict):
            continue
        start = parse_time(entry.get("start"))
        if start is None:
            without_time += 1
            continue
        end = parse_time(entry.get("end"))
        if end is None or end < start:
            end = start
        device = entry.get("device")
        lane = str(device) if device not in (None, "") else "(no device)"
        usable.append(_Bucket(start, end, lane, event_category(entry.get("kind"), entry.get("benign") is True),
                              _as_count(entry.get("count"))))
    return usable, without_time


def _choose_lanes(buckets: list[_Bucket], preferred: list[str], max_lanes: int) -> tuple[list[str], str | None]:
    """Lanes in reading order: suspects first, then the busiest; the rest fold into one lane."""
    errors: dict[str, int] = defaultdict(int)
    markers: dict[str, int] = defaultdict(int)
    benign: dict[str, int] = defaultdict(int)
    for bucket in buckets:
        if bucket.category == "error":
            errors[bucket.lane] += bucket.count
        elif bucket.category == "benign":
            benign[bucket.lane] += bucket.count
        else:
            markers[bucket.lane] += bucket.count
    # Resets and md state changes are rare and decisive, so their lanes (hosts, arrays) come before
    # the lanes that only repeat errors; lanes with nothing but benign events come last.
    lanes = errors.keys() | markers.keys() | benign.keys()
    ordered = [lane for lane in dict.fromkeys(preferred) if lane in lanes]
    ordered += sorted((lane for lane in lanes if lane not in ordered),
                      key=lambda lane: (errors[lane] + markers[lane] == 0, markers[lane] == 0, -errors[lane],
                                        -markers[lane], -benign[lane], lane))
    if len(ordered) <= max_lanes:
        return ordered, None
    kept = ordered[: max_lanes - 1]
    folded_lane = f"{len(ordered) - len(kept)} other devices"
    return kept + [folded_lane], folded_lane


def timeline_chart(
    timeline: list | None,
    preferred_lanes: list[str] | tuple[str, ...] = (),
    max_lanes: int = MAX_LANES,
    max_bins: int = MAX_BINS,
) -> Chart:
    """Events per device over time: one lane per device, error density as shaded cells, resets and
    md state changes as their own markers. Buckets are re-binned to at most `max_bins` columns and
    `max_lanes` rows, so the drawing stays the same size whatever the input holds."""
    buckets, without_time = _buckets(timeline or [])
    if not buckets:
        if without_time:
            return Chart(None, "No chart: the events carry only uptime-relative times (no wall-clock "
                               "date could be inferred), so they cannot be placed on a calendar axis.")
        return Chart(None, "No chart: the report has no timeline data.")

    lanes, folded_lane = _choose_lanes(buckets, list(preferred_lanes), max_lanes)
    lane_index = {lane: row for row, lane in enumerate(lanes)}
    first = min(bucket.start for bucket in buckets)
    last = max(bucket.end for bucket in buckets)
    if last - first < timedelta(minutes=10):
        # A burst inside a few seconds still gets an axis a person can read.
        middle = first + (last - first) / 2
        first, last = middle - timedelta(minutes=5), middle + timedelta(minutes=5)
    bin_width = (last - first) / max_bins

    cells: dict[tuple[int, int, str], int] = defaultdict(int)
    for bucket in buckets:
        row = lane_index.get(bucket.lane, lane_index.get(folded_lane, -1))
        if row < 0:
            continue
        column = min(int((bucket.start - first) / bin_width), max_bins - 1)
        cells[(row, column, bucket.category)] += bucket.count

    notes = []
    if without_time:
        notes.append(f"{without_time} timeline buckets without a wall-clock time are not drawn.")
    if folded_lane:
        notes.append(f"The quietest devices are folded into the lane \u201c{folded_lane}\u201d.")
    svg = _draw(lanes, cells, first, bin_width, max_bins)
    return Chart(svg, " ".join(notes) or None)


def _draw(lanes: list[str], cells: dict, first: datetime, bin_width: timedelta, max_bins: int) -> str:
    import matplotlib
    from matplotlib import colors, dates
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    style = {
        "svg.fonttype": "none",
        "svg.hashsalt": "diagdisk-timeline",
        "font.family": "sans-serif",
        "font.sans-serif": CHART_FONTS,
        "font.size": 9,
        "axes.edgecolor": GRID_COLOR,
        "axes.labelcolor": TEXT_COLOR,
        "xtick.color": TEXT_COLOR,
        "ytick.color": TEXT_COLOR,
    }
    with matplotlib.rc_context(style):
        height = 1.25 + 0.38 * len(lanes)
        figure = Figure(figsize=(10.5, height), layout="constrained")
        axes = figure.add_subplot()
        x_first = dates.date2num(first)
        x_width = bin_width / timedelta(days=1)

        error_cells = [(row, column, count) for (row, column, category), count in cells.items()
                       if category == "error" and count > 0]
        peak = max((count for _, _, count in error_cells), default=1)
        shade = colors.LinearSegmentedColormap.from_list("errors", [ERROR_COLOR_LOW, ERROR_COLOR_HIGH])
        norm = colors.LogNorm(vmin=1, vmax=max(peak, 2))
        for row, column, count in error_cells:
            axes.add_patch(matplotlib.patches.Rectangle(
                (x_first + column * x_width, row - 0.32), x_width, 0.64,
                facecolor=shade(norm(count)), edgecolor=shade(norm(count)), linewidth=0.4))

        benign_cells = [(row, column) for (row, column, category), count in cells.items()
                        if category == "benign" and count > 0 and not cells.get((row, column, "error"))]
        for row, column in benign_cells:
            axes.add_patch(matplotlib.patches.Rectangle(
                (x_first + column * x_width, row - 0.2), x_width, 0.4,
                facecolor=BENIGN_COLOR, edgecolor=BENIGN_COLOR, linewidth=0.4))

        for category, marker, color in (("reset", "v", RESET_COLOR), ("md", "D", MD_COLOR)):
            points = [(x_first + (column + 0.5) * x_width, row, count)
                      for (row, column, kind), count in cells.items() if kind == category and count > 0]
            if points:
                axes.scatter([p[0] for p in points], [p[1] for p in points], marker=marker, s=52,
                             color=color, edgecolors="white", linewidths=0.6, zorder=3)

        axes.set_xlim(x_first, x_first + max_bins * x_width)
        axes.set_ylim(len(lanes) - 0.5, -0.6)
        axes.set_yticks(range(len(lanes)), lanes)
        axes.tick_params(axis="y", length=0)
        for row in range(len(lanes)):
            axes.axhline(row + 0.5, color=GRID_COLOR, linewidth=0.6)
        axes.grid(axis="x", color=GRID_COLOR, linewidth=0.6)
        axes.set_axisbelow(True)
        locator = dates.AutoDateLocator(minticks=4, maxticks=9)
        axes.xaxis.set_major_locator(locator)
        axes.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))
        axes.set_xlabel("time (UTC)")
        for side in ("top", "right"):
            axes.spines[side].set_visible(False)

        drawn = {category for (_, _, category), count in cells.items() if count > 0}
        legend = [handle for category, handle in (
            ("error", Patch(facecolor=ERROR_COLOR_HIGH, label=f"errors (darker = more, peak {peak:,} per column)")),
            ("reset", Line2D([], [], linestyle="none", marker="v", color=RESET_COLOR, label="reset")),
            ("md", Line2D([], [], linestyle="none", marker="D", color=MD_COLOR, label="md state change")),
            ("benign", Patch(facecolor=BENIGN_COLOR, label="no fault (no rule took these for one)")),
        ) if category in drawn]
        figure.legend(handles=legend, loc="outside upper left", ncols=max(len(legend), 1), frameon=False)
        output = io.StringIO()
        FigureCanvasSVG(figure).print_svg(output, metadata={"Date": None})
    return clean_svg(output.getvalue(), id_prefix="dd-timeline-", label="Timeline of events per device")


_URL_REFERENCE = re.compile(r"url\(\s*#([^)\s]+)\s*\)")
_FOREIGN_URL = re.compile(r"url\(\s*['\"]?(?!#)")


def clean_svg(svg_text: str, id_prefix: str, label: str) -> str:
    """SVG markup fit to inline in the report: local references only, no page-wide side effects."""
    ET.register_namespace("", SVG_NS)
    root = ET.fromstring(svg_text)
    for parent in root.iter():
        for child in list(parent):
            if child.tag in (f"{{{SVG_NS}}}metadata", f"{{{SVG_NS}}}style", f"{{{SVG_NS}}}script"):
                parent.remove(child)

    for element in root.iter():
        if "id" in element.attrib:
            element.set("id", id_prefix + element.get("id"))
        # Plain href (SVG 2) replaces xlink:href, so the inline SVG needs no xlink namespace.
        targets = [element.attrib.pop(name) for name in (f"{{{XLINK_NS}}}href", "href") if name in element.attrib]
        for target in targets:
            if not target.startswith("#"):
                raise ValueError(f"chart SVG refers outside the document: {target!r}")
            element.set("href", "#" + id_prefix + target[1:])
        for name, value in list(element.attrib.items()):
            if "url(" in value:
                if _FOREIGN_URL.search(value):
                    raise ValueError(f"chart SVG refers outside the document: {value!r}")
                element.set(name, _URL_REFERENCE.sub(lambda m: f"url(#{id_prefix}{m.group(1)})", value))

    for size in ("width", "height"):
        root.attrib.pop(size, None)
    root.set("role", "img")
    root.set("aria-label", label)
    root.set("preserveAspectRatio", "xMinYMin meet")
    root.set("style", "stroke-linejoin:round;stroke-linecap:butt")
    title = ET.Element(f"{{{SVG_NS}}}title")
    title.text = label
    root.insert(0, title)
    return ET.tostring(root, encoding="unicode")
