"""The index page of a multi-host HTML report: one row per host, its verdict and a link to its page.

Self-contained like the incident report (inline CSS, no script, a policy that forbids fetching
anything); every string is escaped by jinja2's autoescaping.
"""

from __future__ import annotations

import jinja2

from .. import __version__

_STATUS_ORDER = {"failure": 0, "degraded": 1, "suspect": 2}

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>diagdisk: {{ rows|length }} hosts</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b2a3a; background: #f6f7f9; }
header { background: #1b2a3a; color: #fff; padding: 14px 24px; }
header h1 { font-size: 18px; margin: 0; }
main { padding: 16px 24px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #dde1e6; vertical-align: top; }
th { background: #eef1f4; font-weight: 600; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-weight: 600; font-size: 12px; }
.status-failure { background: #b3261e; } .status-degraded { background: #c25e00; }
.status-suspect { background: #8a6d00; } .status-healthy { background: #2e7d32; }
.status-other { background: #5f6b7a; }
footer { color: #5f6b7a; padding: 8px 24px 24px; font-size: 12px; }
</style>
</head>
<body>
<header><h1>diagdisk: {{ rows|length }} hosts, {{ needing }} with a part to check or replace</h1></header>
<main>
<table id="hosts">
<thead><tr><th>Host</th><th>Verdict</th><th>Summary</th><th>Inputs</th><th>Report</th></tr></thead>
<tbody>
{% for row in rows %}
<tr>
<td class="host">{{ row.label }}</td>
<td><span class="status {{ row.css }}">{{ row.status }}</span>{% if not row.complete %} <span class="incomplete">incomplete</span>{% endif %}</td>
<td class="summary">{{ row.summary }}</td>
<td class="inputs">{{ row.input }}</td>
<td><a href="{{ row.href }}">{{ row.href }}</a></td>
</tr>
{% endfor %}
</tbody>
</table>
</main>
<footer>diagdisk {{ version }}</footer>
</body>
</html>
"""


def render_index(reports: list[dict], labels: list[str], pages: list[str]) -> str:
    """Hosts needing action first (failure, degraded, suspect), then by label."""
    rows = []
    for report, label, page in zip(reports, labels, pages):
        verdict = report.get("verdict") or {}
        status = str(verdict.get("status", ""))
        rows.append({"label": label, "status": status, "summary": verdict.get("summary", ""),
                     "css": f"status-{status}" if status in ("failure", "degraded", "suspect", "healthy") else "status-other",
                     "input": report.get("input", ""), "href": page, "complete": report.get("complete", True)})
    rows.sort(key=lambda row: (_STATUS_ORDER.get(row["status"], 3), row["label"]))
    environment = jinja2.Environment(autoescape=True)
    needing = sum(1 for row in rows if row["status"] in _STATUS_ORDER)
    return environment.from_string(_TEMPLATE).render(rows=rows, needing=needing, version=__version__)
