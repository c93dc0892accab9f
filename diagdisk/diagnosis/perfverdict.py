"""The verdict once the performance findings are weighed with it.

The failure rules answer "which part do I replace?" from the kernel log; the performance rules
answer "which device is saturated, slow or misconfigured?" from sar, iostat or diskstats. A report
whose input is performance data alone used to say `INCONCLUSIVE: no kernel log line was read` on
its first line, with a slow member that says "plan its replacement" further down. Here the
verdict is finalised with both:

* a part named from the kernel log or SMART (failure, degraded, suspect, unexplained) stays the
  verdict, first; the performance findings are added to its reasons;
* with no part named and too little kernel log for any verdict (inconclusive: none given, or
  none in the window), the performance question is answered on the first line: the most severe
  performance finding (`SLOW MEMBER: sdb ...`), or that no device is saturated or slow in the
  samples read (`NOT SATURATED: ...`), followed by what the kernel log allows (that none was given);
* with no fault found in the kernel log (healthy), a performance problem comes first, followed by
  the kernel log's "no storage fault found in N lines"; with no performance problem either, the
  healthy headline stays and says that no device is saturated or slow.

`status` keeps its meaning (docs/report.md): a performance finding that names a part to replace
(a slow member or slow device: fru disk) makes it `suspect`; other performance findings (a
saturated or misconfigured device) are no hardware fault and leave it as it was. What the first
line shows in front of the headline, when it is not the status, is `label` (the performance
verdict in capitals). Every performance finding is also put into the report's top-level findings
(`performance_finding_entries`), in the shape of the failure findings, marked `performance`.
"""

from __future__ import annotations

# the severities that make a performance finding a problem worth the first line ('not saturated'
# is info: the device is busy but serves in parallel)
_PROBLEM_SEVERITIES = ("critical", "high", "medium", "low")
_SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
MAX_REASONS = 3
# what the first line says of a report with performance data and no performance problem
NO_PROBLEM_LABEL = "NOT SATURATED"


def weigh_performance(verdict: dict, findings: list[dict], data, coverage) -> dict:
    """The verdict with the performance findings weighed in (a new dict; `verdict` is left as it
    was). `data` is the analysis' PerformanceData (None or without samples: nothing changes),
    `coverage` the analysis' Coverage."""
    if data is None or not getattr(data, "has_data", False):
        return verdict
    verdict = {**verdict, "reasons": list(verdict.get("reasons") or []),
               "suspects": list(verdict.get("suspects") or [])}
    problems = sorted((f for f in findings if f.get("severity") in _PROBLEM_SEVERITIES),
                      key=lambda f: _SEVERITY_RANK[f["severity"]])   # stable: the rules' order within a severity
    busy = sorted({f["device"] for f in findings if f.get("verdict") == "not saturated"})
    status = verdict.get("status")
    answer = _problem_phrase(problems) if problems else _no_problem_phrase(data, busy)
    verdict["performance"] = {"status": problems[0]["verdict"] if problems else "not saturated",
                              "headline": answer, "rules": sorted({f["rule"] for f in findings})}
    if status not in ("healthy", "inconclusive") or _names_a_part(verdict):
        verdict["reasons"] += [f"performance: {_label(f)}: {_finding_phrase(f)}" for f in problems[:MAX_REASONS]]
        if len(problems) > MAX_REASONS:
            verdict["reasons"].append(f"performance: {len(problems) - MAX_REASONS} more findings")
        return verdict
    if status == "healthy" and not problems:
        # the kernel log's answer stays first; the performance question's is added to it
        verdict["headline"] = f"{str(verdict.get('headline') or '').rstrip('.')}; {answer}."
        verdict["summary"] = f"{str(verdict.get('summary') or '').rstrip('.')}; {answer}."
        return verdict
    top = problems[0] if problems else None
    verdict["label"] = _label(top) if top else NO_PROBLEM_LABEL
    kernel = _kernel_phrase(verdict, coverage)
    verdict["headline"] = f"{answer}; {kernel}"
    verdict["summary"] = f"{answer}; {kernel}" + (f". {top['recommendation'].strip()}" if top and top.get("recommendation") else "")
    # an inconclusive verdict's own reasons are the coverage's gaps, listed under coverage too:
    # the first (the kernel log's) is enough here
    kept = verdict["reasons"] if status == "healthy" else verdict["reasons"][:1]
    verdict["reasons"] = [f"{_label(f)}: {_finding_phrase(f)}" for f in problems[:MAX_REASONS]] + kept
    if top and top.get("fru") not in (None, "none"):
        verdict["status"] = "suspect"
        verdict["suspects"] = [_suspect(f) for f in problems if f.get("fru") not in (None, "none")][:3]
    return verdict


def performance_finding_entries(findings: list[dict]) -> list[dict]:
    """The performance findings in the shape of the report's top-level findings (docs/report.md):
    count is the samples that matched, first and last the longest run's, `performance` says which
    performance verdict and device."""
    entries = []
    for finding in findings:
        window = finding.get("window") or {}
        entries.append({
            "rule": finding["rule"], "title": finding["title"], "severity": finding["severity"],
            "fru": finding["fru"], "suspect": finding["suspect"], "md_arrays": [],
            "confidence": finding["confidence"],
            "count": max(int(window.get("matching_samples") or window.get("samples") or 1), 1),
            "first": window.get("first"), "last": window.get("last"),
            "evidence": [{"source": e["source"], "line": e["line"], "text": e["text"]}
                         for e in finding.get("evidence") or []],
            "explanation": finding.get("explanation") or "", "recommendation": finding.get("recommendation") or "",
            "consequence": False,
            "performance": {"verdict": finding["verdict"], "device": finding["device"], "class": finding.get("class")},
        })
    return entries


def _names_a_part(verdict: dict) -> bool:
    return bool(verdict.get("suspects"))


def _label(finding: dict) -> str:
    return str(finding["verdict"]).upper()


def _finding_phrase(finding: dict) -> str:
    window = finding.get("window") or {}
    if window.get("single_sample"):
        span = "a single sample"
    elif finding.get("scope") == "perf_devices":
        span = f"over {window.get('samples', 0)} samples"
    else:
        samples = window.get("samples", 0)
        span = f"{samples} consecutive sample{'s' if samples != 1 else ''}"
    return f"{finding['device']} ({finding.get('class') or 'unknown'}): {finding['title']}, {span} ({finding['rule']})"


def _problem_phrase(problems: list[dict]) -> str:
    top = problems[0]
    more = len(problems) - 1
    others = f"; {more} more performance finding{'s' if more != 1 else ''}" if more else ""
    return _finding_phrase(top) + others


def _no_problem_phrase(data, busy: list[str]) -> str:
    counts = [len(series.samples) for series in data.series.values() if series.samples]
    samples, devices = max(counts, default=0), len(counts)
    phrase = (f"no device saturated or slow in {samples} sample{'s' if samples != 1 else ''} "
              f"of {devices} device{'s' if devices != 1 else ''}")
    if busy:
        phrase += f" ({', '.join(busy[:4])} busy but serving requests in parallel)"
    return phrase


def _kernel_phrase(verdict: dict, coverage) -> str:
    """What the kernel log said, after the performance answer."""
    if verdict.get("status") == "healthy":
        headline = str(verdict.get("headline") or "").rstrip(".")
        return headline[:1].lower() + headline[1:]
    if coverage is not None and not getattr(coverage, "kernel_log_given", True) and not coverage.kernel_log_gaps:
        return "no kernel log was given"
    reason = getattr(coverage, "reason", None) or "too little kernel log for a hardware verdict"
    return f"no hardware verdict: {reason}"


def _suspect(finding: dict) -> dict:
    suspect = finding.get("suspect") or {}
    return {"fru": finding["fru"], "hctl": suspect.get("hctl"), "device": suspect.get("device") or finding["device"],
            "model": suspect.get("model"), "serial": suspect.get("serial"),
            "confidence": round(float(finding.get("confidence") or 0.0), 2), "rules": [finding["rule"]],
            "md_arrays": [], "score": 0.0, "performance": True}
