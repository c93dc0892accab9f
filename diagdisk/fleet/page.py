"""fleet.html: one self-contained page for the whole fleet.

First the patterns across hosts (diagdisk.fleet.cohorts): the cohorts (drive and controller
firmware, driver and kernel, enclosure, inventory columns) failing above the fleet's rate beyond
chance, the error signatures several hosts of one cohort share, and cohorts whose new failures
rise. Then the hosts needing action now (most severe and most certain first, each with the
pattern its errors belong to); failure counts and rates by drive
model, firmware revision, controller driver and FRU class, as bar charts; a weekly timeline when
the report dates span weeks; the inputs that could not be analysed and why. Like the incident
report it carries its CSS and charts (inline SVG) inline, runs no script, and forbids fetching
anything; every string is escaped (jinja2 autoescaping). Every list is capped, so the page stays
small for any fleet; the tables hold everything.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta

import jinja2

from .. import __version__

NEEDS_ACTION = ("failure", "degraded", "suspect")
SEVERITY_RANK = {"critical": 4, "high": 3, "medium": 2, "low": 1, "info": 0}
MAX_ACTION_ROWS = 500
MAX_FAILED_ROWS = 500
MAX_COHORT_ROWS = 100
MAX_PATTERN_ROWS = 100
MAX_BARS = 15
TIMELINE_MIN_DAYS = 14
CHART_WIDTH = 760
BAR_HEIGHT = 18
LABEL_WIDTH = 260

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>diagdisk fleet: {{ counts.total }} inputs</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b2a3a; background: #f6f7f9; }
header { background: #1b2a3a; color: #fff; padding: 14px 24px; }
header h1 { font-size: 19px; margin: 0 0 4px; }
header p { margin: 0; color: #c9d3de; }
main { padding: 8px 24px 24px; max-width: 1200px; }
section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; margin: 16px 0; padding: 12px 16px; }
h2 { font-size: 16px; margin: 4px 0 10px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e6e9ed; vertical-align: top; font-size: 13px; }
th { background: #eef1f4; }
.status { display: inline-block; padding: 0 8px; border-radius: 10px; color: #fff; font-weight: 600; font-size: 12px; }
.status-failure { background: #b3261e; } .status-degraded { background: #c25e00; } .status-suspect { background: #8a6d00; }
.counts span { margin-right: 18px; }
.more, .empty { color: #5f6b7a; font-style: italic; }
svg text { font: 12px system-ui, sans-serif; fill: #1b2a3a; }
.bar { fill: #b3261e; } .bar-inputs { fill: #9fb3c8; }
.charts { display: grid; grid-template-columns: 1fr; gap: 8px; }
.flag { color: #b3261e; font-weight: 600; }
#patterns li { margin: 2px 0; }
@media print { body { background: #fff; } section { break-inside: avoid; } }
</style>
</head>
<body>
<header>
<h1>diagdisk fleet: {{ counts.total }} inputs, {{ action|length + action_more }} needing action</h1>
<p class="counts"><span>analysed {{ counts.analysed }}</span><span>already analysed (skipped) {{ counts.skipped }}</span><span>failed {{ counts.failed }}</span>{% if counts.excluded %}<span>before --since {{ counts.excluded }}</span>{% endif %}{% if span %}<span>report dates {{ span }}</span>{% endif %}</p>
</header>
<main>
<section id="patterns">
<h2>Patterns across hosts</h2>
{% if flagged %}
<table id="flagged-cohorts">
<thead><tr><th>Cohort</th><th>Value</th><th>Failing hosts</th><th>Rate (95% interval)</th><th>Fleet rate</th><th>q-value</th><th>Shared signatures</th></tr></thead>
<tbody>
{% for cohort in flagged %}
<tr><td>{{ cohort.label }}</td><td class="flag">{{ cohort.value }}</td><td>{{ cohort.failing_hosts }} of {{ cohort.hosts }}</td>
<td>{{ cohort.rate_text }}</td><td>{{ cohort.base_text }}</td><td>{{ cohort.q_text }}</td><td>{{ cohort.signatures or "" }}</td></tr>
{% endfor %}
</tbody>
</table>
{% if flagged_more %}<p class="more">{{ flagged_more }} more in cohorts.parquet</p>{% endif %}
{% else %}<p class="empty">No cohort fails above the fleet's rate beyond chance ({{ tested }} cohorts tested; cohorts.parquet has them all).</p>{% endif %}
{% if patterns %}
<h3>Shared error signatures</h3>
<ul id="pattern-list">
{% for pattern in patterns %}<li id="pattern-{{ loop.index }}">{{ pattern.text }}</li>{% endfor %}
</ul>
{% if patterns_more %}<p class="more">{{ patterns_more }} more in cohorts.parquet (signatures)</p>{% endif %}
{% endif %}
{% if rising %}
<h3>Rising</h3>
<ul id="rising-list">
{% for cohort in rising %}<li>{{ cohort.label }} {{ cohort.value }}: new failing hosts per week {{ cohort.weekly }}</li>{% endfor %}
</ul>
{% endif %}
</section>
<section id="action">
<h2>Hosts needing action now</h2>
{% if action %}
<table>
<thead><tr><th>Host</th><th>Verdict</th><th>Severity</th><th>Part</th><th>Where</th><th>Model</th><th>Serial</th><th>Confidence</th><th>Report date</th><th>Report</th><th>Across hosts</th></tr></thead>
<tbody>
{% for row in action %}
<tr><td>{{ row.host }}</td><td><span class="status status-{{ row.verdict }}">{{ row.verdict }}</span></td><td>{{ row.severity or "" }}</td>
<td>{{ row.top_fru or "" }}</td><td>{{ row.where }}</td><td>{{ row.top_model or "" }}</td><td>{{ row.top_serial or "" }}</td>
<td>{{ row.confidence_text }}</td><td>{{ row.date }}</td><td>{% if row.report_file %}<a href="{{ row.report_link }}">{{ row.report_name }}</a>{% endif %}</td>
<td>{% if row.fleet_pattern %}<a href="#{{ row.pattern_anchor }}">{{ row.pattern_text }}</a>{% endif %}</td></tr>
{% endfor %}
</tbody>
</table>
{% if action_more %}<p class="more">{{ action_more }} more in fleet.parquet</p>{% endif %}
{% else %}<p class="empty">No host needs action.</p>{% endif %}
</section>
<section id="rates">
<h2>Failures by model, firmware, controller driver and part</h2>
<div class="charts">
{% for chart in charts %}
<figure id="chart-{{ chart.id }}">
<figcaption><strong>{{ chart.title }}</strong> <span class="more">{{ chart.note }}</span></figcaption>
{% if chart.bars %}
<svg xmlns="http://www.w3.org/2000/svg" width="{{ width }}" height="{{ chart.height }}" role="img" aria-label="{{ chart.title }}">
{% for bar in chart.bars %}
<text x="0" y="{{ bar.y + 13 }}">{{ bar.label }}</text>
<rect class="bar" x="{{ label_width }}" y="{{ bar.y + 2 }}" width="{{ bar.width }}" height="{{ bar_height - 4 }}"><title>{{ bar.label }}: {{ bar.text }}</title></rect>
<text x="{{ label_width + bar.width + 6 }}" y="{{ bar.y + 13 }}">{{ bar.text }}</text>
{% endfor %}
</svg>
{% else %}<p class="empty">No failures to chart.</p>{% endif %}
</figure>
{% endfor %}
</div>
</section>
{% if timeline %}
<section id="timeline">
<h2>Inputs and failures per week</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{ width }}" height="{{ timeline.height }}" role="img" aria-label="inputs and failures per week">
{% for week in timeline.weeks %}
<rect class="bar-inputs" x="{{ week.x }}" y="{{ week.inputs_y }}" width="{{ timeline.bar_width }}" height="{{ week.inputs_h }}"><title>week of {{ week.label }}: {{ week.inputs }} inputs</title></rect>
<rect class="bar" x="{{ week.x }}" y="{{ week.failures_y }}" width="{{ timeline.bar_width }}" height="{{ week.failures_h }}"><title>week of {{ week.label }}: {{ week.failures }} needing action</title></rect>
{% endfor %}
<text x="0" y="{{ timeline.height - 2 }}">{{ timeline.first }}</text>
<text x="{{ width - 80 }}" y="{{ timeline.height - 2 }}">{{ timeline.last }}</text>
</svg>
<p class="more">grey: inputs, red: needing action; {{ timeline.weeks|length }} weeks</p>
</section>
{% endif %}
<section id="failed">
<h2>Inputs that were not analysed</h2>
{% if failed or not_read %}
<table><thead><tr><th>Input</th><th>Why</th></tr></thead><tbody>
{% for row in failed %}<tr><td>{{ row.input }}</td><td>{{ row.failure_reason }}</td></tr>{% endfor %}
{% for row in not_read %}<tr><td>{{ row.input }}</td><td>{{ row.why }}</td></tr>{% endfor %}
</tbody></table>
{% if failed_more %}<p class="more">{{ failed_more }} more in fleet.parquet</p>{% endif %}
{% else %}<p class="empty">Every input was analysed.</p>{% endif %}
</section>
</main>
<footer style="color:#5f6b7a;padding:0 24px 24px;font-size:12px">diagdisk {{ version }}: fleet.parquet, fleet.csv and suspects.parquet beside this page hold every row (docs/fleet.md)</footer>
</body>
</html>
"""


def _date(value) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value)[:19])
    except ValueError:
        return None


def render_fleet_page(rows: list[dict], holdings: list[dict], summary, cohorts=None, html_reports: bool = False) -> str:
    """``cohorts``: a diagdisk.fleet.cohorts.CohortResult (None: no cohorts section content);
    `html_reports`: the run wrote each report's HTML page beside its JSON (--html), which the hosts
    needing action link to."""
    analysed = [row for row in rows if row.get("outcome") == "analysed"]
    needing = [row for row in analysed if row.get("verdict") in NEEDS_ACTION]
    needing.sort(key=lambda r: (-SEVERITY_RANK.get(r.get("severity") or "", -1), -(r.get("confidence") or 0),
                                str(r.get("host")), str(r.get("input"))))
    anchors = cohorts.row_pattern_ids if cohorts is not None else {}
    action = [_action_row(row, anchors, html_reports) for row in needing[:MAX_ACTION_ROWS]]
    failed = sorted((row if row.get("failure_reason") or row.get("outcome") == "failed"
                     else dict(row, failure_reason="report date before --since")
                     for row in rows if row.get("outcome") in ("failed", "excluded")),
                    key=lambda r: str(r.get("input")))
    # files found beside the inputs and left unread (a README beside sosreports): named, with why
    not_read = [_not_read(note) for note in (getattr(summary, "notes", None) or [])[:MAX_FAILED_ROWS]]
    dates = sorted(d for d in (_date(row.get("report_date")) for row in analysed) if d)
    counts = {"total": summary.total, "analysed": summary.analysed, "skipped": summary.skipped,
              "failed": summary.failed, "excluded": summary.excluded}
    flagged, patterns, rising, tested = _cohort_parts(cohorts)
    environment = jinja2.Environment(autoescape=True)
    return environment.from_string(_TEMPLATE).render(
        flagged=flagged[:MAX_COHORT_ROWS], flagged_more=max(len(flagged) - MAX_COHORT_ROWS, 0), tested=tested,
        patterns=patterns[:MAX_PATTERN_ROWS], patterns_more=max(len(patterns) - MAX_PATTERN_ROWS, 0),
        rising=rising[:MAX_COHORT_ROWS],
        counts=counts, action=action, action_more=max(len(needing) - MAX_ACTION_ROWS, 0),
        failed=failed[:MAX_FAILED_ROWS], failed_more=max(len(failed) - MAX_FAILED_ROWS, 0), not_read=not_read,
        charts=_charts(analysed, needing, holdings), timeline=_timeline(analysed, dates),
        span=f"{dates[0].date()} .. {dates[-1].date()}" if dates else "", version=__version__,
        width=CHART_WIDTH, label_width=LABEL_WIDTH, bar_height=BAR_HEIGHT)


def _cohort_parts(cohorts) -> tuple[list[dict], list[dict], list[dict], int]:
    if cohorts is None:
        return [], [], [], 0
    from .cohorts import kind_label
    flagged = []
    for cohort in cohorts.flagged():
        flagged.append(dict(cohort, label=kind_label(cohort["kind"]),
                            rate_text=f"{cohort['rate']:.0%} ({cohort['rate_low']:.0%}\u2013{cohort['rate_high']:.0%})",
                            base_text=f"{cohort['base_rate']:.1%}", q_text=f"{cohort['q_value']:.2g}"))
    rising = [dict(cohort, label=kind_label(cohort["kind"])) for cohort in cohorts.rising()]
    return flagged, list(cohorts.patterns), rising, len(cohorts.cohorts)


def across_hosts_line(row: dict) -> str:
    """The host's own verdict, then what the fleet adds: "replace nvme1, or update the drive firmware: ..."."""
    if not row.get("fleet_pattern"):
        return ""
    part = row.get("top_device") or row.get("top_fru") or "the part"
    verb = "replace" if row.get("top_fru") == "disk" else "check"
    return f"{verb} {part}, {row['fleet_pattern']}"


def _not_read(note: str) -> dict:
    """A discovery note ("PATH: not read: why") as a row of the table of inputs not analysed."""
    path, found, why = note.partition(": not read: ")
    return {"input": path, "why": "not read: " + why} if found else {"input": "", "why": note}


def _action_row(row: dict, anchors: dict[str, str], html_reports: bool = False) -> dict:
    report_file = row.get("report_file") or ""
    if html_reports and report_file.endswith(".json"):
        report_file = report_file[:-len(".json")] + ".html"   # the page a person reads, written beside it
    pattern_text = across_hosts_line(row)
    # its pattern, when the list shows it; else the section
    anchor = anchors.get(row.get("input"), "patterns")
    if anchor.startswith("pattern-") and int(anchor.split("-")[1]) > MAX_PATTERN_ROWS:
        anchor = "patterns"
    return dict(row, pattern_text=pattern_text, pattern_anchor=anchor, where=" ".join(x for x in (row.get("top_hctl"), row.get("top_device")) if x),
                confidence_text=f"{row['confidence']:.2f}" if row.get("confidence") is not None else "",
                date=str(row.get("report_date") or "")[:10], report_link=report_file,
                report_name=report_file.rsplit("/", 1)[-1])


def _charts(analysed: list[dict], needing: list[dict], holdings: list[dict]) -> list[dict]:
    models, firmware, drivers = Counter(), Counter(), Counter()
    for holds in holdings:
        models.update(holds.get("models") or {})
        firmware.update(holds.get("firmware") or {})
        drivers.update(set(holds.get("drivers") or []))
    disks = [row for row in needing if row.get("top_fru") == "disk"]
    by_model = Counter(row["top_model"] for row in disks if row.get("top_model"))
    by_firmware = Counter(f"{row['top_model']} {row.get('top_firmware') or '?'}" for row in disks if row.get("top_model"))
    by_driver = Counter(row["top_driver"] for row in needing if row.get("top_driver"))
    by_fru = Counter(row["top_fru"] for row in needing if row.get("top_fru"))
    return [
        _chart("model", "Failing disks by model", by_model, models, "devices of that model in the fleet"),
        _chart("firmware", "Failing disks by model and firmware revision", by_firmware, firmware,
               "devices with that firmware"),
        _chart("driver", "Hosts needing action by controller driver", by_driver, drivers,
               "inputs whose kernel used that driver"),
        _chart("fru", "Hosts needing action by part (FRU class)", by_fru, Counter({fru: len(analysed) for fru in by_fru}),
               "analysed inputs"),
    ]


def _chart(chart_id: str, title: str, failures: Counter, population: Counter, denominator: str) -> dict:
    top = sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_BARS]
    largest = max((count for _, count in top), default=1)
    bars = []
    for position, (label, count) in enumerate(top):
        total = population.get(label) or 0
        rate = f", {count / total:.1%} of {total}" if total >= count and total else ""
        bars.append({"label": label if len(label) <= 38 else label[:37] + "\u2026", "y": position * BAR_HEIGHT,
                     "width": max(2, int((CHART_WIDTH - LABEL_WIDTH - 140) * count / largest)), "text": f"{count}{rate}"})
    more = len(failures) - len(top)
    note = f"(count, and rate among {denominator})" + (f"; {more} more in the tables" if more > 0 else "")
    return {"id": chart_id, "title": title, "bars": bars, "height": max(len(bars), 1) * BAR_HEIGHT + 4, "note": note}


def _timeline(analysed: list[dict], dates: list[datetime]) -> dict | None:
    if not dates or dates[-1] - dates[0] < timedelta(days=TIMELINE_MIN_DAYS):
        return None
    first_week = dates[0].date() - timedelta(days=dates[0].weekday())
    inputs, failures = defaultdict(int), defaultdict(int)
    for row in analysed:
        when = _date(row.get("report_date"))
        if when is None:
            continue
        week = (when.date() - first_week).days // 7
        inputs[week] += 1
        failures[week] += row.get("verdict") in NEEDS_ACTION
    count = max(inputs) + 1
    height = 140
    bar_width = max(2, CHART_WIDTH // count - 2)
    tallest = max(inputs.values())
    weeks = []
    for week in range(count):
        inputs_h = int((height - 20) * inputs[week] / tallest)
        failures_h = int((height - 20) * failures[week] / tallest)
        weeks.append({"x": week * (bar_width + 2), "label": str(first_week + timedelta(weeks=week)),
                      "inputs": inputs[week], "failures": failures[week],
                      "inputs_y": height - 16 - inputs_h, "inputs_h": inputs_h,
                      "failures_y": height - 16 - failures_h, "failures_h": failures_h})
    return {"weeks": weeks, "bar_width": bar_width, "height": height, "first": str(first_week),
            "last": str(dates[-1].date())}
